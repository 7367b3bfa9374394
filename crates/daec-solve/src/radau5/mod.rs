//! The 3-stage Radau IIA integrator (order 5) in the design of RADAU5
//! (Hairer & Wanner, Solving ODEs II, sections IV.8 and VI.6).
//!
//! Per step `t → t + h` the stage increments `Z_i = Y_i − z_n` solve
//!
//! ```text
//!   R_i(Z) = [ E(t_i, Y_i)·Ż_i − k(t_i, Y_i) ]  = 0,   Ż = (A^{-1} ⊗ I) Z / h,
//!            [          −g(t_i, Y_i)         ]
//! ```
//!
//! (the collocation conditions; for constant `E` this is exactly RADAU5's
//! `M (A^{-1}⊗I) Z / h = F(Z)`). The simplified Newton method freezes
//! `M = E` and `J = [∂k/∂z − (∂E/∂z)ż; ∂g/∂z]` at one point per step —
//! by default the step's midpoint `t_n + h/2`, at the value the last
//! step's collocation polynomial predicts there
//! ([`Options::jacobian_at_midpoint`]; RADAU5 and the first step take the
//! step start `(t_n, z_n)`) — and, after the transformation with `T`
//! (IV.8, (8.15)–(8.17)), solves one real and one complex `n × n` system
//! per iteration. Convergence is
//! monitored with the contraction estimate `θ` and stopped with
//! `η·‖ΔW‖ ≤ κ·Tol` (IV.8, (8.10)–(8.14)); the error is estimated with the
//! embedded formula filtered by `(γ0 h M − J)^{-1}` (IV.8, (8.19)–(8.20));
//! the step size follows the predictive controller of Gustafsson (IV.8,
//! (8.25)); the Jacobian is reused while `θ` stays small; the collocation
//! polynomial provides dense output.
//!
//! Overdetermined problems (`n_d + n_g > n`) are reduced to a square
//! system per Jacobian evaluation by [`crate::selection`].

use crate::error::SolveError;
use crate::error_control::ErrorControl;
use crate::problem::QuasiLinearDae;
use crate::selection::{EquationSelection, PivotPreference};
use crate::step::{Stats, Step, StepControl};

mod accept;
mod control;
mod jacobian;
mod kept;
mod newton;
mod options;
mod restart;
mod solve;
mod start;
pub mod tableau;
mod workspace;

pub use kept::Radau5Storage;
use newton::NewtonOutcome;
pub use options::{LinearSolver, MIDPOINT_FAILURES, NewtonScaling, Options};
pub use restart::{RESTART_MIN_GAIN, RESTART_THETA};
pub use solve::{SolveFailure, Trajectory, solve};
use tableau::Transform;
use workspace::{Layout, Pattern, Workspace};

/// Radau IIA (order 5) integrator bound to a problem.
pub struct Radau5<'p, P: QuasiLinearDae + ?Sized> {
    problem: &'p P,
    opts: Options,
    n: usize,
    n_d: usize,
    n_g: usize,
    tr: Transform,
    /// The index of each component in the error test: RADAU5's
    /// `variable_index` with [`ErrorControl::Index`], else all ones.
    index: Vec<u8>,
    /// With [`ErrorControl::Differential`], `1` for the differential
    /// components and `0` for the algebraic ones, the factor of each in
    /// the error test (the Newton test keeps all).
    err_mask: Option<Vec<f64>>,
    /// With [`ErrorControl::Index`] and Newton weights that are not the
    /// error test's ([`Options::newton_scaling`] other than
    /// [`NewtonScaling::Index`]), the factor of each component in the
    /// error test beyond its Newton weight (`h^{k−1}` over the Newton
    /// factor), set at each estimate; else empty.
    err_scale: Vec<f64>,
    mass: Pattern,
    jd: Pattern,
    jg: Pattern,
    stats: Stats,
    sparse: bool,
    /// The storage of the last integration, for the next.
    kept: Radau5Storage,
}

/// The constants of one integration, derived from the options and the
/// time span (RADAU5's names).
struct Settings {
    /// End of the integration.
    t_end: f64,
    /// The unit round-off.
    uround: f64,
    /// The transformed relative tolerance `0.1·rtol^{2/3}` of RADAU5.
    rtol_t: f64,
    /// The absolute tolerances transformed likewise (`atol/rtol` kept).
    atol_t: Vec<f64>,
    /// Constraint residual accepted after the end-point projection.
    proj_tol: f64,
    /// The Newton tolerance `κ·Tol`.
    fnewt: f64,
    /// Maximal Newton iterations.
    nit: usize,
    /// Jacobian reuse threshold on `θ`.
    thet: f64,
    /// Safety factor of the step size control.
    safe: f64,
    /// `1/fac_min`.
    facl: f64,
    /// `1/fac_max`.
    facr: f64,
    /// `safe·(1 + 2·nit)`, the numerator of the Newton-dependent safety
    /// factor.
    cfac: f64,
    /// Maximal step size.
    hmax: f64,
    /// Whether `n_d + n_g > n` (the equations are selected).
    overdetermined: bool,
    /// Whether `E` is constant (evaluated once).
    mass_constant: bool,
    /// The dummy-derivative preference of the selection (dense path).
    prefer: Option<PivotPreference>,
}

/// The state the step loop carries from one attempt to the next.
struct StepState {
    /// Start of the current step.
    t: f64,
    /// Current step size.
    h: f64,
    /// Size of the last accepted step (the collocation polynomial's).
    hold: f64,
    /// Whether the current step ends at `t_end`.
    last: bool,
    /// Whether no step has been accepted yet.
    first: bool,
    /// Whether the last attempt was rejected.
    reject: bool,
    /// Whether the Jacobians are fresh: evaluated at the current step,
    /// not reused from an earlier one.
    caljac: bool,
    /// `η` of the Newton stopping criterion (kept across steps).
    faccon: f64,
    /// Contraction estimate of the last Newton iteration.
    theta: f64,
    /// Step size of the last accepted step (Gustafsson's controller).
    hacc: f64,
    /// Error of the last accepted step (Gustafsson's controller).
    erracc: f64,
    /// Singular iteration matrices in a row.
    nsing: usize,
    /// Newton failures of the current step in a row.
    newton_failures: usize,
    /// Iterations of the last Newton solve.
    newt: usize,
    /// Whether the current Jacobians were evaluated at a predicted
    /// midpoint (not at the step start).
    jacobian_at_midpoint: bool,
    /// Whether the next attempt needs new Jacobians.
    need_jac: bool,
    /// Whether the next attempt needs a new LU decomposition.
    need_lu: bool,
    /// Whether the next Jacobian evaluation selects equations anew
    /// (overdetermined systems, see [`jacobian`]).
    reselect: bool,
    /// The cold start's step size while the first step tries
    /// [`Options::restart_step`] (see [`restart`]); 0 otherwise.
    fallback: f64,
}

impl StepState {
    /// The state before the first step from `t0` with step size `h`.
    fn new(t0: f64, h: f64) -> Self {
        Self {
            t: t0,
            h,
            hold: h,
            last: false,
            first: true,
            reject: false,
            caljac: false,
            faccon: 1.0,
            theta: 0.0,
            hacc: 0.0,
            erracc: 0.0,
            nsing: 0,
            newton_failures: 0,
            newt: 0,
            jacobian_at_midpoint: false,
            need_jac: true,
            need_lu: true,
            reselect: true,
            fallback: 0.0,
        }
    }
}

fn all_finite(x: &[f64]) -> bool {
    // (an exponent field of all ones is an infinity or a NaN; or-ing the
    // test over all values has no early exit and vectorises, where
    // `all(is_finite)` branched on every value: 1–2 % of a solve of the
    // small index-1 test-set problems checked the Jacobians' values)
    const EXPONENT: u64 = 0x7ff0_0000_0000_0000;
    !x.iter()
        .fold(false, |bad, v| bad | (v.to_bits() & EXPONENT == EXPONENT))
}

/// The residual `R` of the selected square system from the full residual
/// `full = [E ż − k; g]` (constraint rows negated; `n_d` differential
/// rows). (Non-finite values need no check here: they reach the Newton
/// correction, whose norm is then not finite — a failed iteration.)
fn reduce(n_d: usize, full: &[f64], sel: &EquationSelection, out: &mut [f64]) {
    let nd = sel.diff_rows.len();
    let (kd, gg) = full.split_at(n_d);
    for (o, &r) in out.iter_mut().zip(&sel.diff_rows) {
        *o = kd[r];
    }
    for (o, &r) in out[nd..].iter_mut().zip(&sel.constraint_rows) {
        *o = -gg[r];
    }
}

impl<'p, P: QuasiLinearDae + ?Sized> Radau5<'p, P> {
    /// Binds the integrator to `problem`, validating its dimensions and
    /// patterns and the options.
    pub fn new(problem: &'p P, options: Options) -> Result<Self, SolveError> {
        let (n, n_d, n_g) = crate::problem::checked_dimensions(problem)?;
        let o = &options;
        crate::problem::check_tolerances(o.rtol, o.atol)?;
        let bad = |x: f64| !(x.is_finite() && x > 0.0);
        if let Some(a) = &o.atol_per_variable
            && (a.len() != n || a.iter().any(|&x| bad(x)))
        {
            return Err(SolveError::InvalidOptions(
                "atol_per_variable must have one positive entry per variable".into(),
            ));
        }
        if o.h0 < 0.0 || !o.h0.is_finite() || o.h_max < 0.0 || o.h_max.is_nan() {
            return Err(SolveError::InvalidOptions(
                "h0 and h_max must be ≥ 0".into(),
            ));
        }
        if o.keep_selection_pivot.is_nan() || o.keep_selection_pivot < 0.0 {
            return Err(SolveError::InvalidOptions(
                "keep_selection_pivot must be ≥ 0".into(),
            ));
        }
        if o.keep_selection_step_ratio.is_nan() || o.keep_selection_step_ratio < 0.0 {
            return Err(SolveError::InvalidOptions(
                "keep_selection_step_ratio must be ≥ 0".into(),
            ));
        }
        if o.newton_max_iter < 2 || !(o.safety > 0.0 && o.safety < 1.0) {
            return Err(SolveError::InvalidOptions(
                "newton_max_iter must be ≥ 2 and safety in (0, 1)".into(),
            ));
        }
        if !(o.fac_min > 0.0 && o.fac_min < 1.0 && o.fac_max > 1.0 && o.fac_max.is_finite()) {
            return Err(SolveError::InvalidOptions(
                "fac_min must be in (0, 1) and fac_max > 1".into(),
            ));
        }
        if let Some(d) = &o.initial_derivative
            && d.len() != n
        {
            return Err(SolveError::InvalidOptions(
                "initial_derivative must have one entry per variable".into(),
            ));
        }
        let index = problem.variable_index();
        if index.len() != n {
            return Err(SolveError::InvalidProblem(format!(
                "variable_index has {} entries, expected {n}",
                index.len()
            )));
        }
        let mode = options.error_control;
        let index = if mode == ErrorControl::Index {
            index
        } else {
            vec![1; n]
        };
        let err_mask = (mode == ErrorControl::Differential).then(|| {
            crate::problem::differential_components(problem)
                .into_iter()
                .map(|d| mode.factor(1.0, 1, d))
                .collect()
        });
        let err_scale =
            if mode == ErrorControl::Index && options.newton_scaling != NewtonScaling::Index {
                vec![1.0; n]
            } else {
                Vec::new()
            };
        let sparse = options.linear_solver.is_sparse_for(n);
        Ok(Self {
            problem,
            opts: options,
            n,
            n_d,
            n_g,
            tr: Transform::shared().clone(),
            index,
            err_mask,
            err_scale,
            mass: Pattern::new(problem.mass_pattern(), n_d, n, "mass")?,
            jd: Pattern::new(
                problem.diff_jacobian_pattern(),
                n_d,
                n,
                "differential Jacobian",
            )?,
            jg: Pattern::new(
                problem.constraint_jacobian_pattern(),
                n_g,
                n,
                "constraint Jacobian",
            )?,
            stats: Stats::default(),
            sparse,
            kept: Radau5Storage::default(),
        })
    }

    /// Statistics of the last (or running) integration.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// Whether the iteration matrices are factorised by the sparse LU
    /// (and overdetermined systems reduced by the sparse selection), as
    /// decided by [`Options::linear_solver`] and the size of the problem.
    pub fn uses_sparse_lu(&self) -> bool {
        self.sparse
    }

    /// Integrates from `(t0, z0)` to `t_end > t0`, calling `observer` after
    /// every accepted step (the last one ends exactly at `t_end`). `z0`
    /// must be consistent (all constraints satisfied).
    ///
    /// On a run-time failure the observer has received every accepted
    /// step, so the results up to the last good step are kept by the
    /// caller; the error carries the time and the cause. Non-finite
    /// residuals during a step make the step be retried with a smaller
    /// step size; non-finite Jacobians at an accepted point end the
    /// integration with [`SolveError::NewtonDivergence`].
    ///
    /// May be called repeatedly (e.g. to restart after an event); the
    /// statistics restart from zero on every call. The work arrays and
    /// the storage of the factorisations are kept from one call to the
    /// next (see [`Radau5Storage`]); a call gives the same results to the
    /// last bit as the first call of a new integrator.
    pub fn integrate<F>(
        &mut self,
        t0: f64,
        z0: &[f64],
        t_end: f64,
        mut observer: F,
    ) -> Result<Stats, SolveError>
    where
        F: FnMut(&Step<'_>) -> StepControl,
    {
        self.check_start(t0, z0, t_end)?;
        self.stats = Stats::default();
        let (n, n_d, n_g) = (self.n, self.n_d, self.n_g);
        let set = self.settings(t0, t_end);
        let layout = Layout {
            n,
            n_d,
            n_g,
            n_mass: self.mass.entries.len(),
            sparse: self.sparse,
            overdetermined: set.overdetermined,
        };
        let dn = if self.sparse { 0 } else { n };
        let (mut storage, mut lin) = self.kept.take(layout.storage_len(), dn, n_d, n_g);
        let ydot = self.opts.initial_derivative.as_deref();
        let mut ws = Workspace::new(&mut storage, &layout, z0, ydot);
        let mut st = self.start(&set, &mut ws, t0);
        loop {
            if st.need_jac && !self.evaluate_jacobians(&set, &mut st, &mut ws, &mut lin)? {
                continue;
            }
            if st.reselect
                && lin.sel_kept
                && !self.reselect_at_jacobians(&set, &mut st, &mut ws, &mut lin)?
            {
                continue;
            }
            if st.need_lu && !self.factorize(&set, &mut st, &ws, &mut lin)? {
                continue;
            }
            self.prepare_attempt(&set, &st, &mut ws)?;
            let outcome = self.newton(&set, &mut st, &mut ws, &mut lin);
            if outcome != NewtonOutcome::Converged {
                if st.fallback > 0.0 {
                    self.fall_back(&mut st);
                } else {
                    self.newton_failed(&mut st, outcome)?;
                }
                continue;
            }
            st.newton_failures = 0;
            let err = self.error_estimate(&st, &mut ws, &mut lin);
            if st.fallback > 0.0 && !self.restart_step_holds(&set, &mut st, &ws, err) {
                continue;
            }
            if err < 1.0 {
                let hnew = self.accepted_step_size(&set, &mut st, err);
                if self.accept(&set, &mut st, &mut ws, &mut lin, hnew, &mut observer)? {
                    // (a failed integration gives its storage up: the
                    // next allocates it anew)
                    self.kept.put(storage, lin);
                    return Ok(self.stats);
                }
            } else {
                self.rejected(&set, &mut st, err);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::all_finite;

    #[test]
    fn all_finite_finds_every_infinity_and_nan_anywhere() {
        let finite = [
            0.0,
            -0.0,
            1.0,
            -2.5e300,
            f64::MAX,
            f64::MIN,
            5e-324,
            f64::MIN_POSITIVE,
        ];
        assert!(all_finite(&finite));
        assert!(all_finite(&[]));
        for bad in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -f64::NAN] {
            for at in 0..=finite.len() {
                let mut v = finite.to_vec();
                v.insert(at, bad);
                assert!(!all_finite(&v), "{bad} at {at}");
            }
        }
    }
}
