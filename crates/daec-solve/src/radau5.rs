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
use crate::linalg::{
    ComplexLu, RealLu, SPARSE_THRESHOLD, SparseNewtonSystem, SparsePattern, SparseRealLu,
};
use crate::problem::QuasiLinearDae;
use crate::selection::{
    EquationSelection, PivotPreference, select_equations_ordered, select_equations_preferring,
    select_equations_sparse,
};
use crate::tableau::{C1, C2, DD, Transform};

/// Maximal simplified-Newton corrections of the end-point projection.
const PROJECTION_MAX_ITER: usize = 4;

/// Tuning parameters of the integrator (defaults as RADAU5).
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Relative tolerance (> 0).
    pub rtol: f64,
    /// Absolute tolerance (> 0), used for every component unless
    /// [`atol_per_variable`](Self::atol_per_variable) is given.
    pub atol: f64,
    /// Optional absolute tolerance per variable.
    pub atol_per_variable: Option<Vec<f64>>,
    /// Initial step size; `0` selects one by the algorithm of Solving ODEs
    /// I, II.4 from `z₀`, `ż₀` and one explicit Euler step
    /// (`min(100·h₀, (0.01/max(‖ż₀‖, ‖z̈₀‖))^{1/4})` in the error test's
    /// norm), with `ż₀` the [`initial_derivative`](Self::initial_derivative)
    /// or, when that is absent, the derivative the DAE determines at `z₀`
    /// (`E·ż = k`, `∂g/∂z·ż = −∂g/∂t`). Where neither is available
    /// (singular rows) `1e-6`, RADAU5's choice.
    pub h0: f64,
    /// Maximal step size; `0` or infinite means `t_end − t0`.
    pub h_max: f64,
    /// Maximal number of step attempts: accepted steps, steps rejected by
    /// the error test after the first accepted one, and Newton failures
    /// (the counts of [`Stats`]; the retries of the first step are bounded
    /// by the shrinking step size).
    pub max_steps: usize,
    /// Maximal Newton iterations per step (RADAU5's `NIT`, default 7).
    pub newton_max_iter: usize,
    /// Jacobian reuse threshold on the contraction `θ` (RADAU5's `THET`,
    /// default 0.001).
    pub jacobian_reuse_theta: f64,
    /// Evaluate the Jacobians of the simplified Newton iteration at the
    /// step's midpoint `t + h/2`, at the value the last step's collocation
    /// polynomial predicts there, instead of at the step start (default
    /// true; RADAU5 takes the start). The iteration converges faster — its
    /// matrix is at most half a step from every stage — to the same
    /// solution. The first step, a step whose prediction gives non-finite
    /// Jacobians, and a step whose Newton iteration failed twice with a
    /// midpoint Jacobian take the start (see [`MIDPOINT_FAILURES`]).
    pub jacobian_at_midpoint: bool,
    /// Safety factor of the step size control (default 0.9).
    pub safety: f64,
    /// Lower bound of `h_new/h` (default 0.2).
    pub fac_min: f64,
    /// Upper bound of `h_new/h` (default 8).
    pub fac_max: f64,
    /// Use Gustafsson's predictive controller (default true).
    pub predictive: bool,
    /// Initial derivative `ż(t0)` used in `∂(Eż − k)/∂z` for the first
    /// Jacobian and, with `h0 = 0`, for the starting step size (see
    /// [`h0`](Self::h0)). If absent and `h0 = 0`, the integrator computes
    /// it from the DAE; otherwise zero (exact for the Jacobian whenever
    /// `E` is constant).
    pub initial_derivative: Option<Vec<f64>>,
    /// Consecutive Newton failures after which the integration stops.
    pub max_newton_failures: usize,
    /// Dense or sparse linear algebra for the iteration matrices (default
    /// [`LinearSolver::Auto`]).
    pub linear_solver: LinearSolver,
}

/// Consecutive Newton failures of one step after which a Jacobian that
/// was evaluated at the predicted midpoint
/// ([`Options::jacobian_at_midpoint`]) is evaluated again at the step
/// start. After a failure the step is retried with a smaller `h` and, as
/// in RADAU5, the same matrix; but a midpoint Jacobian sits at a point
/// extrapolated half the failed step ahead, which after a sharp turn of
/// the solution may be far from it and from every stage of the smaller
/// steps, so that the retries fail again while `h` collapses (Andrews'
/// squeezer near t = 0.02: θ grows as `h` shrinks). From the second
/// failure the start is used, and the work falls monotonically as the
/// tolerance loosens (`tests/simulate_projected.rs`,
/// `andrews_work_falls_as_the_tolerance_loosens`). The first failure keeps
/// the midpoint: most steps then converge with the smaller `h`, and
/// switching at the first failure costs more evaluations.
pub const MIDPOINT_FAILURES: usize = 2;

/// The linear algebra of the simplified Newton iteration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LinearSolver {
    /// Dense up to [`SPARSE_THRESHOLD`] unknowns, sparse above.
    #[default]
    Auto,
    /// Dense LU (own row-major LU for small systems, `faer` above
    /// [`crate::linalg::FAER_THRESHOLD`]) and the dense equation selection
    /// ([`crate::selection::select_equations`]).
    Dense,
    /// Sparse LU on the fixed pattern of the iteration matrices
    /// ([`crate::linalg::sparse`]; the symbolic analysis once per equation
    /// selection, numeric refactorisation per Jacobian or step size) and
    /// the sparse equation selection
    /// ([`crate::selection::select_equations_sparse`]).
    Sparse,
}

impl LinearSolver {
    /// Whether a system of `n` unknowns is solved with the sparse LU.
    pub fn is_sparse_for(self, n: usize) -> bool {
        match self {
            LinearSolver::Auto => n > SPARSE_THRESHOLD,
            LinearSolver::Dense => false,
            LinearSolver::Sparse => true,
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Self {
            rtol: 1e-6,
            atol: 1e-6,
            atol_per_variable: None,
            h0: 0.0,
            h_max: 0.0,
            max_steps: 100_000,
            newton_max_iter: 7,
            jacobian_reuse_theta: 0.001,
            jacobian_at_midpoint: true,
            safety: 0.9,
            fac_min: 0.2,
            fac_max: 8.0,
            predictive: true,
            initial_derivative: None,
            max_newton_failures: 30,
            linear_solver: LinearSolver::Auto,
        }
    }
}

/// Work counters of an integration (the same quantities RADAU5 reports).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Accepted steps.
    pub steps_accepted: usize,
    /// Rejected steps (error test failures after the first accepted step).
    pub steps_rejected: usize,
    /// Evaluations of the residual at one point `(t, z)`.
    pub residual_evals: usize,
    /// Evaluations of the Jacobians (`E`, `∂(Eż−k)/∂z`, `∂g/∂z` together).
    pub jacobian_evals: usize,
    /// LU decompositions (one real and one complex counted as one, as RADAU5).
    pub lu_decompositions: usize,
    /// Simplified Newton iterations (linear solves with both matrices).
    pub newton_iterations: usize,
    /// Step attempts whose Newton iteration failed (diverged or too slow);
    /// the step is retried with a smaller `h`. With
    /// [`steps_accepted`](Self::steps_accepted) and
    /// [`steps_rejected`](Self::steps_rejected) what
    /// [`Options::max_steps`] limits.
    pub newton_failures: usize,
    /// Evaluations of the constraints alone (projection of step end points).
    pub constraint_evals: usize,
    /// Changes of the equation selection of an overdetermined system
    /// (after the first Jacobian evaluation).
    pub selection_changes: usize,
    /// Equation selections computed for an overdetermined system (at
    /// every Jacobian on the dense path; on the sparse path once, and
    /// again after a singular factorisation or a Newton failure).
    pub selections: usize,
    /// Accepted steps whose end point the problem projected
    /// ([`QuasiLinearDae::project_step`]).
    pub projections: usize,
    /// LU decompositions done by the sparse LU (equal to
    /// [`lu_decompositions`](Self::lu_decompositions) when the sparse path
    /// is taken, see [`Options::linear_solver`]).
    pub sparse_lu_decompositions: usize,
}

/// What the observer wants after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepControl {
    /// Go on integrating.
    Continue,
    /// Stop after this step (e.g. an event was found); `integrate` returns
    /// `Ok` with the statistics so far.
    Stop,
}

/// An accepted step, handed to the observer: end point, and the
/// collocation polynomial as dense output on `[t_start, t]`.
#[derive(Debug, Clone, Copy)]
pub struct Step<'a> {
    /// Start of the step.
    pub t_start: f64,
    /// End of the step.
    pub t: f64,
    /// Solution at `t`.
    pub z: &'a [f64],
    /// Derivative approximation at `t` (collocation derivative).
    pub zdot: &'a [f64],
    cont: &'a [f64],
    /// `g(t, z)` when the integrator evaluated the constraints at the end
    /// point itself (spares the observer an evaluation).
    constraints: Option<&'a [f64]>,
}

impl<'a> Step<'a> {
    /// A step from its parts: `cont` holds the `4n` coefficients of the
    /// cubic [`dense`](Self::dense) evaluates (used by other integrators of
    /// this crate, e.g. [`crate::herk`]).
    pub(crate) fn from_parts(
        t_start: f64,
        t: f64,
        z: &'a [f64],
        zdot: &'a [f64],
        cont: &'a [f64],
    ) -> Self {
        Self {
            t_start,
            t,
            z,
            zdot,
            cont,
            constraints: None,
        }
    }
}

impl Step<'_> {
    /// Number of unknowns.
    pub fn n(&self) -> usize {
        self.z.len()
    }

    /// The constraint residuals `g(t, z)` at the end point (all `n_g`
    /// rows), if the integrator evaluated them there (Radau5 does in its
    /// end-point projection, unless the problem then moved the point).
    pub fn constraints(&self) -> Option<&[f64]> {
        self.constraints
    }

    /// Evaluates the collocation polynomial (Solving ODEs II, IV.8, (8.23))
    /// at `t` (meant for `t_start ≤ t ≤ self.t`; extrapolates outside).
    pub fn dense(&self, t: f64, out: &mut [f64]) {
        let n = self.z.len();
        let h = self.t - self.t_start;
        let s = if h != 0.0 { (t - self.t) / h } else { 0.0 };
        for (i, o) in out.iter_mut().enumerate().take(n) {
            *o = self.cont[i] + collocation_increment(self.cont, n, i, s).0;
        }
    }

    /// The time derivative of the polynomial [`dense`](Self::dense)
    /// evaluates, at `t` (at the step start an approximation of `ż` there
    /// of the order of the dense output).
    pub fn dense_derivative(&self, t: f64, out: &mut [f64]) {
        let n = self.z.len();
        let h = self.t - self.t_start;
        if h == 0.0 {
            out.iter_mut().take(n).for_each(|o| *o = 0.0);
            return;
        }
        let s = (t - self.t) / h;
        for (i, o) in out.iter_mut().enumerate().take(n) {
            *o = collocation_increment(self.cont, n, i, s).1 / h;
        }
    }

    /// One component `i` of [`dense`](Self::dense); `None` if `i ≥ n`.
    pub fn dense_component(&self, t: f64, i: usize) -> Option<f64> {
        let n = self.z.len();
        if i >= n {
            return None;
        }
        let h = self.t - self.t_start;
        let s = if h != 0.0 { (t - self.t) / h } else { 0.0 };
        let c = &self.cont;
        Some(
            c[i] + s * (c[n + i] + (s - C2 + 1.0) * (c[2 * n + i] + (s - C1 + 1.0) * c[3 * n + i])),
        )
    }
}

/// Sparse pattern scattered into dense row-major storage.
#[derive(Debug, Clone)]
struct Pattern {
    entries: Vec<(usize, usize)>,
    values: Vec<f64>,
}

impl Pattern {
    fn new(
        entries: Vec<(usize, usize)>,
        rows: usize,
        cols: usize,
        what: &str,
    ) -> Result<Self, SolveError> {
        if let Some(&(r, c)) = entries.iter().find(|&&(r, c)| r >= rows || c >= cols) {
            return Err(SolveError::InvalidProblem(format!(
                "{what} pattern entry ({r}, {c}) outside {rows} × {cols}"
            )));
        }
        let values = vec![0.0; entries.len()];
        Ok(Self { entries, values })
    }

    fn scatter(&self, dense: &mut [f64], cols: usize) {
        self.scatter_values(&self.values, dense, cols);
    }

    /// Scatters `values` (in the order of the pattern) into `dense`.
    fn scatter_values(&self, values: &[f64], dense: &mut [f64], cols: usize) {
        dense.iter_mut().for_each(|x| *x = 0.0);
        for (&(r, c), &v) in self.entries.iter().zip(values) {
            dense[r * cols + c] += v;
        }
    }
}

/// Consecutive slices of one zeroed allocation.
struct Arena<'a>(&'a mut [f64]);

impl<'a> Arena<'a> {
    /// The next `len` values (the storage is sized for every take).
    fn take(&mut self, len: usize) -> &'a mut [f64] {
        let (a, b) = std::mem::take(&mut self.0).split_at_mut(len);
        self.0 = b;
        a
    }
}

/// Radau IIA (order 5) integrator bound to a problem.
pub struct Radau5<'p, P: QuasiLinearDae + ?Sized> {
    problem: &'p P,
    opts: Options,
    n: usize,
    n_d: usize,
    n_g: usize,
    tr: Transform,
    index: Vec<u8>,
    mass: Pattern,
    jd: Pattern,
    jg: Pattern,
    stats: Stats,
    sparse: bool,
}

/// The collocation polynomial of the last step (Solving ODEs II, IV.8,
/// (8.23); `cont` as in [`Step`]) minus its end value, at `s = (t − t_n)/h`
/// for component `i` of `n`, and its derivative with respect to `s`.
#[inline(always)]
fn collocation_increment(cont: &[f64], n: usize, i: usize, s: f64) -> (f64, f64) {
    let (c1m1, c2m1) = (C1 - 1.0, C2 - 1.0);
    let (ak1, ak2, ak3) = (cont[n + i], cont[2 * n + i], cont[3 * n + i]);
    let inner = ak2 + (s - c1m1) * ak3;
    let outer = ak1 + (s - c2m1) * inner;
    (s * outer, outer + s * (inner + (s - c2m1) * ak3))
}

fn all_finite(x: &[f64]) -> bool {
    x.iter().all(|v| v.is_finite())
}

/// What [`starting_step_size`] needs of the initial point.
struct StartingPoint<'a> {
    t: f64,
    /// The consistent initial value `z₀`.
    z: &'a [f64],
    /// Its derivative `ż₀`.
    zdot: &'a [f64],
    /// The error weights `atol_i + rtol·|z₀,i|` (the integrator's, with
    /// RADAU5's transformed tolerances).
    scale: &'a [f64],
    /// The variables' index ([`QuasiLinearDae::variable_index`]).
    index: &'a [u8],
    mass_entries: &'a [(usize, usize)],
    /// `E(t₀, z₀)` in the order of `mass_entries`.
    mass_values: &'a [f64],
}

/// The starting step size of Hairer, Nørsett & Wanner (Solving ODEs I,
/// II.4, "Starting Step Size") for `E(t,z)ż = k(t,z)`, `g(t,z) = 0`, in
/// the weighted RMS norm of the error test:
///
/// 1. `d₀ = ‖z₀‖`, `d₁ = ‖ż₀‖` over the variables of index ≤ 1 (the
///    error test scales the others by `h^{index−1}`, so their size does
///    not bound the first step); `h₀ = 0.01·d₀/d₁` (`1e-6` if either is
///    below `1e-5`);
/// 2. one explicit Euler step `z₁ = z₀ + h₀ż₀`; the differential rows'
///    residual `E(t₁,z₁)ż₀ − k(t₁,z₁) ≈ −h₀·E·z̈`, each row measured in
///    the weight `Σ_j |E_ij| w_j` of the derivatives it combines, gives
///    `d₂ ≈ ‖z̈‖`;
/// 3. `h₁ = (0.01 / max(d₁, d₂))^{1/4}` — the embedded error estimate of
///    Radau IIA (Solving ODEs II, IV.8, (8.19)) is `O(h⁴)`, so this `h₁`
///    makes the first error estimate about `0.01` (`max(1e-6, 1e-3·h₀)`
///    when both derivatives vanish);
/// 4. `h = min(100·h₀, h₁)`.
///
/// RADAU5 leaves the first step to the user (`1e-6` by default), and the
/// growth of at most 8 per step then spends several steps on a start
/// that is smooth: Akzo Nobel took six steps from `1e-6` to `0.03`.
/// One residual evaluation; `scratch` takes `z₁`, `full` its residual.
fn starting_step_size<P: QuasiLinearDae + ?Sized>(
    problem: &P,
    p: &StartingPoint<'_>,
    scratch: &mut [f64],
    full: &mut [f64],
) -> f64 {
    let rms = |sum: f64, count: usize| {
        if count == 0 {
            0.0
        } else {
            (sum / count as f64).sqrt()
        }
    };
    let (mut s0, mut s1, mut count) = (0.0, 0.0, 0usize);
    for (i, w) in p.scale.iter().enumerate() {
        if p.index[i] <= 1 {
            s0 += (p.z[i] / w).powi(2);
            s1 += (p.zdot[i] / w).powi(2);
            count += 1;
        }
    }
    let (d0, d1) = (rms(s0, count), rms(s1, count));
    let h0 = if !(d0 >= 1e-5 && d1 >= 1e-5 && d0.is_finite() && d1.is_finite()) {
        1e-6
    } else {
        0.01 * d0 / d1
    };
    for (i, z1) in scratch.iter_mut().enumerate() {
        *z1 = p.z[i] + h0 * p.zdot[i];
    }
    problem.residual(p.t + h0, scratch, p.zdot, full);
    // the weight of each differential row: Σ_j |E_ij|·w_j
    let n_d = problem.n_diff();
    let mut row_weight = vec![0.0; n_d];
    for (&(r, c), &v) in p.mass_entries.iter().zip(p.mass_values) {
        row_weight[r] += v.abs() * p.scale[c];
    }
    let (mut s2, mut rows) = (0.0, 0usize);
    for (r, &w) in row_weight.iter().enumerate() {
        if w > 0.0 {
            s2 += (full[r] / (h0 * w)).powi(2);
            rows += 1;
        }
    }
    let d2 = rms(s2, rows);
    // (not `f64::max`, which would drop a NaN: a residual that is not
    // finite after the Euler step leaves the start to 1e-6)
    let dmax = if d1 >= d2 { d1 } else { d2 };
    let h1 = if !(dmax.is_finite() && d2.is_finite()) {
        1e-6
    } else if dmax <= 1e-15 {
        (1e-3 * h0).max(1e-6)
    } else {
        (0.01 / dmax).sqrt().sqrt()
    };
    (100.0 * h0).min(h1)
}

/// Solves with the real iteration matrix: the sparse system when there is
/// one, the dense LU otherwise.
fn solve_real(
    sys: &mut Option<(EquationSelection, SparseNewtonSystem)>,
    dense: &RealLu,
    b: &mut [f64],
) {
    match sys.as_mut() {
        Some((_, system)) => system.solve_real(b),
        None => dense.solve(b),
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
        let sparse = options.linear_solver.is_sparse_for(n);
        Ok(Self {
            problem,
            opts: options,
            n,
            n_d,
            n_g,
            tr: Transform::new(),
            index,
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
        })
    }

    /// The derivative `ż(t, z)` that the DAE determines at a consistent
    /// point: the solution of `E(t,z)·ż = k(t,z)`, `∂g/∂z·ż = −∂g/∂t`
    /// (the constraints differentiated once along the solution), the
    /// rows an overdetermined system selects for its Newton matrix solved
    /// by LU (the dense or the sparse selection and LU, as the
    /// integration's). `start_residual` is `[−k(t, z); g(t, z)]` (the
    /// residual with `ż = 0`), `mass_values` `E(t, z)` in the order of
    /// its pattern and, on the dense path, `e_dense` the same row-major; `∂g/∂t` by a forward difference (one evaluation
    /// of the constraints). `None` if the rows are singular there or the
    /// result is not finite.
    fn consistent_derivative(
        &mut self,
        t: f64,
        z: &[f64],
        start_residual: &[f64],
        mass_values: &[f64],
        e_dense: &[f64],
        prefer: Option<&PivotPreference>,
    ) -> Option<Vec<f64>> {
        let (n, n_d, n_g) = (self.n, self.n_d, self.n_g);
        let problem = self.problem;
        let mut g_t = vec![0.0; n_g];
        if n_g > 0 {
            problem.constraint_jacobian_values(t, z, &mut self.jg.values);
            let dt = f64::EPSILON.sqrt() * t.abs().max(1.0);
            problem.constraints(t + dt, z, &mut g_t);
            self.stats.constraint_evals += 1;
            for (gt, &g0) in g_t.iter_mut().zip(&start_residual[n_d..]) {
                *gt = (*gt - g0) / dt;
            }
        }
        let (me, mv) = (&self.mass.entries, mass_values);
        let (ge, gv) = (&self.jg.entries, &self.jg.values);
        let g_dense = if self.sparse {
            Vec::new()
        } else {
            let mut g = vec![0.0; n_g * n];
            self.jg.scatter(&mut g, n);
            g
        };
        let sel = if n_d + n_g <= n {
            EquationSelection::all(n_d, n_g)
        } else if self.sparse {
            select_equations_ordered(n, me, mv, n_d, ge, gv, n_g)
                .or_else(|_| select_equations_sparse(n, me, mv, n_d, ge, gv, n_g))
                .ok()?
        } else {
            select_equations_preferring(n, e_dense, n_d, &g_dense, n_g, prefer).ok()?
        };
        // the right-hand side [k; −∂g/∂t] on the selected rows
        let diff_rhs = sel.diff_rows.iter().map(|&r| -start_residual[r]);
        let constraint_rhs = sel.constraint_rows.iter().map(|&r| -g_t[r]);
        let mut zdot: Vec<f64> = diff_rhs.chain(constraint_rhs).collect();
        let nd = sel.diff_rows.len();
        if self.sparse {
            // the selected rows of [E; ∂g/∂z], renumbered 0..n
            let mut at = vec![usize::MAX; n_d + n_g];
            for (k, &r) in sel.diff_rows.iter().enumerate() {
                at[r] = k;
            }
            for (k, &r) in sel.constraint_rows.iter().enumerate() {
                at[n_d + r] = nd + k;
            }
            let mut entries = Vec::with_capacity(me.len() + ge.len());
            let mut values = Vec::with_capacity(me.len() + ge.len());
            let rows = me.iter().zip(mv).map(|(&(r, c), &v)| (r, c, v));
            let constraint_rows = ge.iter().zip(gv).map(|(&(r, c), &v)| (n_d + r, c, v));
            for (r, c, v) in rows.chain(constraint_rows) {
                if at[r] != usize::MAX {
                    entries.push((at[r], c));
                    values.push(v);
                }
            }
            let (pattern, slots) = SparsePattern::new(n, &entries);
            let mut summed = vec![0.0; pattern.nnz()];
            for (&slot, &v) in slots.iter().zip(&values) {
                summed[slot] += v;
            }
            let mut lu = SparseRealLu::new(&pattern);
            lu.factor(&pattern, &summed).ok()?;
            lu.solve(&mut zdot);
        } else {
            let mut lu = RealLu::new(n);
            let a = lu.matrix_mut();
            let diff = sel.diff_rows.iter().map(|&r| &e_dense[r * n..(r + 1) * n]);
            let constraint = sel
                .constraint_rows
                .iter()
                .map(|&r| &g_dense[r * n..(r + 1) * n]);
            for (row, source) in a.chunks_exact_mut(n).zip(diff.chain(constraint)) {
                row.copy_from_slice(source);
            }
            lu.factor_in_place().ok()?;
            lu.solve(&mut zdot);
        }
        all_finite(&zdot).then_some(zdot)
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
    /// statistics restart from zero on every call.
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
        let (n, n_d, n_g) = (self.n, self.n_d, self.n_g);
        if z0.len() != n {
            return Err(SolveError::InvalidOptions(format!(
                "initial value has {} entries, expected {n}",
                z0.len()
            )));
        }
        if !(t0.is_finite() && t_end.is_finite() && t_end > t0) {
            return Err(SolveError::InvalidOptions(format!(
                "need finite t0 < t_end (got {t0} and {t_end})"
            )));
        }
        if !all_finite(z0) {
            return Err(SolveError::InvalidOptions(
                "initial value is not finite".into(),
            ));
        }
        self.stats = Stats::default();
        let problem = self.problem;
        let opts = self.opts.clone();
        let tr = self.tr.clone();
        let uround = f64::EPSILON;
        let overdetermined = n_d + n_g > n;
        // the dummy-derivative preference of the selection (dense path)
        let prefer = if overdetermined && !self.sparse {
            PivotPreference::new(
                n,
                &problem.constraint_levels(),
                &self.jg.entries,
                n_g,
                &self.mass.entries,
                &self.jd.entries,
                n_d,
            )
        } else {
            None
        };

        // Tolerance transformation of RADAU5 (the order-5 method is run at
        // rtol' = 0.1·rtol^{2/3}, keeping atol/rtol).
        let rtol_t = 0.1 * opts.rtol.powf(2.0 / 3.0);
        let atol_t: Vec<f64> = (0..n)
            .map(|i| {
                let a = opts.atol_per_variable.as_ref().map_or(opts.atol, |v| v[i]);
                rtol_t * a / opts.rtol
            })
            .collect();
        // Constraint residual accepted after the end-point projection.
        let proj_tol = 1e-4 * rtol_t.min(atol_t.iter().copied().fold(f64::INFINITY, f64::min));
        let fnewt = (10.0 * uround / rtol_t).max(0.03f64.min(rtol_t.sqrt()));
        let nit = opts.newton_max_iter;
        let thet = opts.jacobian_reuse_theta;
        let safe = opts.safety;
        let facl = 1.0 / opts.fac_min;
        let facr = 1.0 / opts.fac_max;
        let cfac = safe * (1.0 + 2.0 * nit as f64);
        let hmax = if opts.h_max > 0.0 && opts.h_max.is_finite() {
            opts.h_max
        } else {
            t_end - t0
        };

        // State
        let mut t = t0;
        let mut y = z0.to_vec();
        let mut ydot = opts
            .initial_derivative
            .clone()
            .unwrap_or_else(|| vec![0.0; n]);
        // (an automatic h0 is chosen below, once the start's residual is
        // at hand)
        let mut h = if opts.h0 > 0.0 { opts.h0 } else { 1e-6 };
        let mut last = false;
        let mut hold: f64;
        let mut first = true;
        let mut reject = false;
        let mut caljac = false;
        let mut faccon = 1.0f64;
        let mut theta: f64;
        let mut hacc = 0.0;
        let mut erracc = 0.0;
        let mut nsing = 0usize;
        let mut newton_failures = 0usize;
        // whether the current Jacobians were evaluated at a predicted
        // midpoint (not at the step start)
        let mut jacobian_at_midpoint = false;

        // Buffers: every work array of the integration carved from one
        // allocation (a solve of a small system is short enough for ~40
        // allocations to show).
        let sparse = self.sparse;
        // Dense path: row-major matrices; sparse path: the pattern values
        // and `SparseNewtonSystem` (built at the first Jacobian and rebuilt
        // when the equation selection changes).
        let dn = if sparse { 0 } else { n };
        let m = n_d + n_g;
        let n_mass = self.mass.entries.len();
        // the full E, ∂(Eż−k)/∂z and ∂g/∂z: only an overdetermined dense
        // system selects rows from them (a square one is scattered straight
        // into the reduced matrices)
        let dfull = if overdetermined { dn } else { 0 };
        let mut storage =
            vec![
                0.0;
                5 * m + n_g + n_d * dn + (2 * n_d + n_g) * dfull + 2 * dn * dn + n_mass + 26 * n
            ];
        let mut arena = Arena(&mut storage);
        let full = arena.take(m); // [E ż − k; g] scratch
        // the stage points and their full residuals
        let mut ys = [arena.take(n), arena.take(n), arena.take(n)];
        let mut full3 = [arena.take(m), arena.take(m), arena.take(m)];
        let gg = arena.take(n_g); // constraint scratch
        // [−k(t, y); g(t, y)] (the residual with ż = 0) at the step start
        let y0 = arena.take(m);
        let e_full = arena.take(n_d * dfull);
        let e_cur = arena.take(n_d * dn); // E(t_n, z_n) for the error estimate
        let jd_full = arena.take(n_d * dfull);
        let g_full = arena.take(n_g * dfull);
        let mred = arena.take(dn * dn);
        let jred = arena.take(dn * dn);
        // E(t_n, z_n) as pattern values: E depends on (t, z) only, so the
        // values at the step start serve the error estimate and every
        // Jacobian evaluated there
        let mass_cur = arena.take(n_mass);
        let mut z = [arena.take(n), arena.take(n), arena.take(n)];
        let mut zd = [arena.take(n), arena.take(n), arena.take(n)];
        let mut res = [arena.take(n), arena.take(n), arena.take(n)];
        let mut dw = [arena.take(n), arena.take(n), arena.take(n)];
        let ystage = arena.take(n);
        let zero: &[f64] = arena.take(n);
        let cont = arena.take(4 * n);
        // reciprocals of the error weights (the norms multiply)
        let scal_inv = arena.take(n);
        let base_scal = arena.take(n);
        for i in 0..n {
            base_scal[i] = atol_t[i] + rtol_t * y[i].abs();
        }
        let f1 = arena.take(n);
        let f2 = arena.take(n);
        let errv = arena.take(n);
        let mut lu1 = RealLu::new(dn);
        let mut lu2 = ComplexLu::new(dn);
        let mut sys: Option<(EquationSelection, SparseNewtonSystem)> = None;
        // position of each differential row in the selected system (sparse
        // error estimate), `usize::MAX` if not selected
        let mut diff_at = vec![usize::MAX; n_d];
        // a constant E is evaluated once, here
        let mass_constant = problem.mass_is_constant();
        let mut sel = EquationSelection::all(n_d, n_g);

        // The residual R of the selected square system from the full
        // residual `[E ż − k; g]` (constraint rows negated).
        // (Non-finite values need no check here: they reach the Newton
        // correction, whose norm is then not finite — a failed iteration.)
        let reduce = |full: &[f64], sel: &EquationSelection, out: &mut [f64]| {
            let nd = sel.diff_rows.len();
            let (kd, gg) = full.split_at(n_d);
            for (o, &r) in out.iter_mut().zip(&sel.diff_rows) {
                *o = kd[r];
            }
            for (o, &r) in out[nd..].iter_mut().zip(&sel.constraint_rows) {
                *o = -gg[r];
            }
        };
        // R(t, y, ẏ) into `out`.
        let eval_reduced = |t: f64,
                            yv: &[f64],
                            ydv: &[f64],
                            sel: &EquationSelection,
                            full: &mut [f64],
                            out: &mut [f64]| {
            problem.residual(t, yv, ydv, full);
            reduce(full, sel, out);
        };

        // The residual at the start (full).
        problem.residual(t, &y, zero, y0);
        self.stats.residual_evals += 1;
        problem.mass_values(t, &y, mass_cur);
        if !sparse {
            self.mass.scatter_values(mass_cur, e_cur, n);
        }
        // Without a given ż(t₀), the derivative the DAE determines there:
        // for the starting step and the first Jacobian.
        let mut derived = false;
        if opts.initial_derivative.is_none()
            && opts.h0 == 0.0
            && let Some(zdot0) =
                self.consistent_derivative(t, &y, y0, mass_cur, e_cur, prefer.as_ref())
        {
            ydot.copy_from_slice(&zdot0);
            derived = true;
        }
        if opts.h0 == 0.0 && (derived || opts.initial_derivative.is_some()) {
            let span = t_end - t0;
            let start = StartingPoint {
                t: t0,
                z: &y,
                zdot: &ydot,
                scale: base_scal,
                index: &self.index,
                mass_entries: &self.mass.entries,
                mass_values: mass_cur,
            };
            h = starting_step_size(problem, &start, ystage, full);
            self.stats.residual_evals += 1;
            h = h.max(1e-10 * span);
        }
        h = h.min(hmax);
        if t + h * 1.0001 - t_end >= 0.0 {
            h = t_end - t;
            last = true;
        }
        hold = h;

        let mut need_jac = true;
        let mut need_lu = true;
        // whether the next Jacobian evaluation selects equations anew
        // (sparse overdetermined systems, see there)
        let mut reselect = true;
        loop {
            if need_jac {
                // The Jacobians at the midpoint t + h/2 of the step, at the
                // value and derivative the last step's collocation
                // polynomial predicts there (its extrapolation, as the
                // Newton starting values below). The simplified Newton
                // iteration (Solving ODEs II, IV.8) converges at a rate
                // θ ≈ ‖(γ/h·M − J)⁻¹(J(stage) − J)‖: its matrix may be any
                // approximation of the stages'
                // Jacobians, and the one at the step start is up to a whole
                // step away from the last stage (c₃ = 1), the one at the
                // midpoint at most half a step from every stage. Where the
                // Jacobian turns with the solution — constraint rows
                // ∂g/∂z of a fast rotating mechanism, which carry no 1/h —
                // θ ∝ h·(distance), so the step size Newton tolerates
                // about doubles (Andrews' squeezer at 1e-6: 33 % fewer
                // Newton iterations; Akzo Nobel 17 %). The converged
                // collocation solution does not depend on the choice; the
                // error estimate's filter (γ₀/h·M − J)⁻¹ sees it as it sees
                // a reused Jacobian. At the first step, if the prediction
                // gives a non-finite Jacobian, or from the step's
                // MIDPOINT_FAILURES-th Newton failure on, the start.
                let finite = |m: &Pattern, jd: &Pattern, jg: &Pattern| {
                    all_finite(&m.values) && all_finite(&jd.values) && all_finite(&jg.values)
                };
                self.stats.jacobian_evals += 1;
                let mut done = false;
                if opts.jacobian_at_midpoint && !first && newton_failures < MIDPOINT_FAILURES {
                    let tm = t + 0.5 * h;
                    let s = 0.5 * h / hold;
                    for i in 0..n {
                        let (dy, dy_ds) = collocation_increment(cont, n, i, s);
                        ystage[i] = y[i] + dy;
                        f1[i] = dy_ds / hold;
                    }
                    if mass_constant {
                        self.mass.values.copy_from_slice(mass_cur);
                    } else {
                        problem.mass_values(tm, ystage, &mut self.mass.values);
                    }
                    problem.diff_jacobian_values(tm, ystage, f1, &mut self.jd.values);
                    problem.constraint_jacobian_values(tm, ystage, &mut self.jg.values);
                    done = finite(&self.mass, &self.jd, &self.jg);
                }
                jacobian_at_midpoint = done;
                if !done {
                    self.mass.values.copy_from_slice(mass_cur);
                    problem.diff_jacobian_values(t, &y, &ydot, &mut self.jd.values);
                    problem.constraint_jacobian_values(t, &y, &mut self.jg.values);
                    if !finite(&self.mass, &self.jd, &self.jg) {
                        return Err(SolveError::NewtonDivergence {
                            t,
                            h,
                            failures: newton_failures + 1,
                        });
                    }
                }
                // (a constant E is scattered once)
                let scatter_mass = !(mass_constant && self.stats.jacobian_evals > 1);
                if !sparse && overdetermined {
                    if scatter_mass {
                        self.mass.scatter(e_full, n);
                    }
                    self.jd.scatter(jd_full, n);
                    self.jg.scatter(g_full, n);
                } else if !sparse {
                    // Square: the selection is the identity, so the reduced
                    // M = [E; 0] and J = [−∂(Eż−k)/∂z; ∂g/∂z] (below) are
                    // scattered into directly (the constraint rows of M
                    // stay zero from the allocation).
                    if scatter_mass {
                        self.mass.scatter(&mut mred[..n_d * n], n);
                    }
                    jred.fill(0.0);
                    for (&(r, c), &v) in self.jd.entries.iter().zip(&self.jd.values) {
                        jred[r * n + c] -= v;
                    }
                    for (&(r, c), &v) in self.jg.entries.iter().zip(&self.jg.values) {
                        jred[(n_d + r) * n + c] += v;
                    }
                }
                // The sparse path keeps its selection while steps succeed:
                // selecting is a sparse elimination (a large share of the
                // cost of a Jacobian evaluation of a big HiC/ADA system),
                // and a selection stays valid while the Newton
                // matrix it gives is regular. It is recomputed after a
                // singular factorisation or a Newton failure (an error-test
                // rejection is about the step size, not the selection).
                // The dense path selects at every Jacobian.
                if overdetermined && (!sparse || reselect) {
                    reselect = false;
                    self.stats.selections += 1;
                    let selected = if sparse {
                        // the fill-limited ordered selection; complete
                        // pivoting if it finds the system rank deficient
                        let (me, mv) = (&self.mass.entries, &self.mass.values);
                        let (ge, gv) = (&self.jg.entries, &self.jg.values);
                        select_equations_ordered(n, me, mv, n_d, ge, gv, n_g)
                            .or_else(|_| select_equations_sparse(n, me, mv, n_d, ge, gv, n_g))
                    } else {
                        select_equations_preferring(n, e_full, n_d, g_full, n_g, prefer.as_ref())
                    };
                    match selected {
                        Ok(s) => {
                            if s != sel && self.stats.jacobian_evals > 1 {
                                self.stats.selection_changes += 1;
                            }
                            sel = s;
                        }
                        Err(rank) => return Err(SolveError::RankDeficient { t, rank, n }),
                    }
                }
                if sparse {
                    // Pattern and symbolic analysis once per selection.
                    if sys.as_ref().is_none_or(|(s, _)| *s != sel) {
                        let system = SparseNewtonSystem::new(
                            n,
                            &sel.diff_rows,
                            &sel.constraint_rows,
                            n_d,
                            n_g,
                            &self.mass.entries,
                            &self.jd.entries,
                            &self.jg.entries,
                        );
                        diff_at.iter_mut().for_each(|x| *x = usize::MAX);
                        for (k, &r) in sel.diff_rows.iter().enumerate() {
                            diff_at[r] = k;
                        }
                        sys = Some((sel.clone(), system));
                    }
                    if let Some((_, system)) = sys.as_mut() {
                        system.load(&self.mass.values, &self.jd.values, &self.jg.values);
                    }
                }
                // Reduced M and J (J = −∂(Eż−k)/∂z on differential rows, ∂g/∂z on constraint rows).
                if !sparse && overdetermined {
                    let nd = sel.diff_rows.len();
                    for (k, &r) in sel.diff_rows.iter().enumerate() {
                        for c in 0..n {
                            mred[k * n + c] = e_full[r * n + c];
                            jred[k * n + c] = -jd_full[r * n + c];
                        }
                    }
                    for (k, &r) in sel.constraint_rows.iter().enumerate() {
                        for c in 0..n {
                            mred[(nd + k) * n + c] = 0.0;
                            jred[(nd + k) * n + c] = g_full[r * n + c];
                        }
                    }
                }
                caljac = true;
                need_jac = false;
                need_lu = true;
            }
            if need_lu {
                let fac1 = tr.gamma / h;
                let alphn = tr.alpha / h;
                let betan = tr.beta / h;
                self.stats.lu_decompositions += 1;
                let result = match sys.as_mut() {
                    Some((_, system)) if sparse => {
                        self.stats.sparse_lu_decompositions += 1;
                        system.factor(fac1, alphn, betan)
                    }
                    _ => {
                        // (assembled in the factorisations' own storage)
                        let e1 = &mut lu1.matrix_mut()[..n * n];
                        let (e2r, e2i) = lu2.matrix_mut();
                        let (e2r, e2i) = (&mut e2r[..n * n], &mut e2i[..n * n]);
                        let (mred, jred) = (&mred[..n * n], &jred[..n * n]);
                        for k in 0..n * n {
                            e1[k] = fac1 * mred[k] - jred[k];
                            e2r[k] = alphn * mred[k] - jred[k];
                            e2i[k] = betan * mred[k];
                        }
                        let r1 = lu1.factor_in_place();
                        let r2 = if r1.is_ok() {
                            lu2.factor_in_place()
                        } else {
                            Ok(())
                        };
                        r1.and(r2)
                    }
                };
                if let Err(crate::linalg::Singular(var)) = result {
                    nsing += 1;
                    if nsing >= 5 {
                        return Err(SolveError::SingularMatrix {
                            t,
                            h,
                            variable: var,
                        });
                    }
                    h *= 0.5;
                    reject = true;
                    reselect = true;
                    last = false;
                    // (a new selection needs the Jacobian at hand again)
                    need_jac = !caljac || (sparse && overdetermined);
                    need_lu = true;
                    continue;
                }
                need_lu = false;
            }
            // label 30: a step attempt
            let s = &self.stats;
            if s.steps_accepted + s.steps_rejected + s.newton_failures >= opts.max_steps {
                return Err(SolveError::TooManySteps {
                    t,
                    max_steps: opts.max_steps,
                });
            }
            if 0.1 * h.abs() <= t.abs() * uround || h < f64::MIN_POSITIVE {
                return Err(SolveError::StepSizeTooSmall { t, h });
            }
            // Index-aware scaling (RADAU5's NIND2/NIND3): scal / h^{index−1}.
            for i in 0..n {
                let ix = self.index[i].max(1) as i32;
                scal_inv[i] = if ix > 1 {
                    h.powi(ix - 1) / base_scal[i]
                } else {
                    1.0 / base_scal[i]
                };
            }
            // Starting values for Newton: extrapolated collocation polynomial.
            if first {
                for zi in z.iter_mut() {
                    zi.iter_mut().for_each(|x| *x = 0.0);
                }
            } else {
                let c3q = h / hold;
                let c1q = C1 * c3q;
                let c2q = C2 * c3q;
                for (zs, cq) in z.iter_mut().zip([c1q, c2q, c3q]) {
                    for (i, x) in zs[..n].iter_mut().enumerate() {
                        *x = collocation_increment(cont, n, i, cq).0;
                    }
                }
            }
            // Simplified Newton iteration.
            faccon = faccon.max(uround).powf(0.8);
            theta = thet.abs();
            let mut newt = 0usize;
            let mut dynold = 0.0f64;
            let mut thqold = 0.0f64;
            let nd_sel = sel.diff_rows.len();
            // outcome: 0 converged, 1 failure (halve h), 2 slow (h already reduced)
            let outcome = loop {
                if newt >= nit {
                    break 1;
                }
                // stage derivatives and residuals (the three stages in one
                // call: the problem may evaluate them together)
                let hinv = 1.0 / h;
                {
                    // (slices of length n: no bounds checks in the loops)
                    let (z0, z1, z2, yv) = (&z[0][..n], &z[1][..n], &z[2][..n], &y[..n]);
                    for (s, (zds, yss)) in zd.iter_mut().zip(ys.iter_mut()).enumerate() {
                        let a = tr.a_inv[s];
                        let (zds, yss, zs) = (&mut zds[..n], &mut yss[..n], [z0, z1, z2][s]);
                        for i in 0..n {
                            zds[i] = (a[0] * z0[i] + a[1] * z1[i] + a[2] * z2[i]) * hinv;
                            yss[i] = yv[i] + zs[i];
                        }
                    }
                }
                {
                    let [r0, r1, r2] = &mut full3;
                    problem.residual_stages(
                        [t + C1 * h, t + C2 * h, t + h],
                        [ys[0], ys[1], ys[2]],
                        [zd[0], zd[1], zd[2]],
                        [r0, r1, r2],
                    );
                }
                self.stats.residual_evals += 3;
                // rhs = −(T^{-1} ⊗ I) R. A square system selects every
                // row in order, so R is the full residual with the
                // constraint rows negated: that sign is folded into the
                // rhs (an exact negation, the same values) instead of
                // copying R out of it.
                let ti = tr.t_inv;
                {
                    if overdetermined {
                        for (f, r) in full3.iter().zip(res.iter_mut()) {
                            reduce(f, &sel, r);
                        }
                    }
                    let rr = if overdetermined { &res } else { &full3 };
                    // the rows entering the rhs negated: all rows of R, the
                    // differential rows of the full residual
                    let n_neg = if overdetermined { n } else { n_d };
                    let (r0, r1, r2) = (&rr[0][..n], &rr[1][..n], &rr[2][..n]);
                    let [d0, d1, d2] = &mut dw;
                    let (d0, d1, d2) = (&mut d0[..n], &mut d1[..n], &mut d2[..n]);
                    for i in 0..n {
                        let sg = if i < n_neg { -1.0 } else { 1.0 };
                        let (r0, r1, r2) = (r0[i], r1[i], r2[i]);
                        d0[i] = sg * (ti[0][0] * r0 + ti[0][1] * r1 + ti[0][2] * r2);
                        d1[i] = sg * (ti[1][0] * r0 + ti[1][1] * r1 + ti[1][2] * r2);
                        d2[i] = sg * (ti[2][0] * r0 + ti[2][1] * r1 + ti[2][2] * r2);
                    }
                }
                solve_real(&mut sys, &lu1, dw[0]);
                {
                    let (a, b) = dw.split_at_mut(2);
                    match sys.as_mut() {
                        Some((_, system)) => system.solve_complex(a[1], b[0]),
                        None => lu2.solve(a[1], b[0]),
                    }
                }
                self.stats.newton_iterations += 1;
                newt += 1;
                let mut dyno = 0.0;
                {
                    let (d0, d1, d2, sc) = (&dw[0][..n], &dw[1][..n], &dw[2][..n], &scal_inv[..n]);
                    for i in 0..n {
                        let d = sc[i];
                        dyno += (d0[i] * d).powi(2) + (d1[i] * d).powi(2) + (d2[i] * d).powi(2);
                    }
                }
                dyno = (dyno / (3 * n) as f64).sqrt();
                if !dyno.is_finite() {
                    break 1;
                }
                if newt > 1 && newt < nit {
                    let thq = dyno / dynold;
                    theta = if newt == 2 {
                        thq
                    } else {
                        (thq * thqold).sqrt()
                    };
                    thqold = thq;
                    if theta < 0.99 {
                        faccon = theta / (1.0 - theta);
                        let dyth = faccon * dyno * theta.powi((nit - 1 - newt) as i32) / fnewt;
                        if dyth >= 1.0 {
                            let qnewt = dyth.clamp(1e-4, 20.0);
                            let hhfac =
                                0.8 * qnewt.powf(-1.0 / (4.0 + nit as f64 - 1.0 - newt as f64));
                            h *= hhfac;
                            break 2;
                        }
                    } else {
                        break 1;
                    }
                }
                dynold = dyno.max(uround);
                let tm = tr.t;
                {
                    let (d0, d1, d2) = (&dw[0][..n], &dw[1][..n], &dw[2][..n]);
                    let [z0, z1, z2] = &mut z;
                    let (z0, z1, z2) = (&mut z0[..n], &mut z1[..n], &mut z2[..n]);
                    for i in 0..n {
                        let (w0, w1, w2) = (d0[i], d1[i], d2[i]);
                        z0[i] += tm[0][0] * w0 + tm[0][1] * w1 + tm[0][2] * w2;
                        z1[i] += tm[1][0] * w0 + tm[1][1] * w1 + tm[1][2] * w2;
                        z2[i] += tm[2][0] * w0 + tm[2][1] * w1 + tm[2][2] * w2;
                    }
                }
                if faccon * dyno <= fnewt {
                    break 0;
                }
            };
            if outcome != 0 {
                newton_failures += 1;
                self.stats.newton_failures += 1;
                if newton_failures >= opts.max_newton_failures {
                    return Err(SolveError::NewtonDivergence {
                        t,
                        h,
                        failures: newton_failures,
                    });
                }
                if outcome == 1 {
                    h *= 0.5;
                }
                reject = true;
                reselect = true;
                last = false;
                need_jac =
                    !caljac || (jacobian_at_midpoint && newton_failures >= MIDPOINT_FAILURES);
                need_lu = true;
                continue;
            }
            newton_failures = 0;

            // Error estimate (Solving ODEs II, IV.8, (8.19)–(8.20)).
            let hinv = 1.0 / h;
            for i in 0..n {
                f1[i] = (DD[0] * z[0][i] + DD[1] * z[1][i] + DD[2] * z[2][i]) * hinv;
            }
            // M·F1 with the mass matrix at the current step start (the one
            // in the Newton matrix may be from an older step when the
            // Jacobian is reused, and E may depend on z).
            f2.iter_mut().for_each(|x| *x = 0.0);
            if sparse {
                for (&(r, c), &v) in self.mass.entries.iter().zip(mass_cur.iter()) {
                    let k = diff_at[r];
                    if k != usize::MAX {
                        f2[k] += v * f1[c];
                    }
                }
            } else {
                for (k, &r) in sel.diff_rows.iter().enumerate() {
                    let row = &e_cur[r * n..(r + 1) * n];
                    f2[k] = row.iter().zip(f1.iter()).map(|(a, b)| a * b).sum();
                }
            }
            for (k, &r) in sel.diff_rows.iter().enumerate() {
                errv[k] = f2[k] - y0[r];
            }
            for (k, &r) in sel.constraint_rows.iter().enumerate() {
                errv[nd_sel + k] = f2[nd_sel + k] + y0[n_d + r];
            }
            solve_real(&mut sys, &lu1, errv);
            let norm = |e: &[f64]| -> f64 {
                let s: f64 = e
                    .iter()
                    .zip(scal_inv.iter())
                    .map(|(a, d)| (a * d).powi(2))
                    .sum();
                ((s / n as f64).sqrt()).max(1e-10)
            };
            let mut err = norm(errv);
            if err >= 1.0 && (first || reject) {
                for i in 0..n {
                    ystage[i] = y[i] + errv[i];
                }
                eval_reduced(t, ystage, zero, &sel, full, f1);
                let ok = all_finite(f1);
                self.stats.residual_evals += 1;
                // F = −R(·, ż = 0)
                for i in 0..n {
                    errv[i] = -f1[i] + f2[i];
                }
                solve_real(&mut sys, &lu1, errv);
                err = if ok { norm(errv) } else { f64::INFINITY };
            }
            if !err.is_finite() {
                err = 1e6;
            }
            let fac = safe.min(cfac / (newt as f64 + 2.0 * nit as f64));
            // (x^{1/4} as two square roots: correctly rounded and much
            // cheaper than `powf`)
            let mut quot = facr.max(facl.min(err.sqrt().sqrt() / fac));
            let mut hnew = h / quot;
            if err < 1.0 {
                // accepted
                first = false;
                self.stats.steps_accepted += 1;
                if opts.predictive {
                    if self.stats.steps_accepted > 1 {
                        let facgus = (hacc / h) * (err * err / erracc).sqrt().sqrt() / safe;
                        let facgus = facr.max(facl.min(facgus));
                        quot = quot.max(facgus);
                        hnew = h / quot;
                    }
                    hacc = h;
                    erracc = err.max(1e-2);
                }
                let t_start = t;
                hold = h;
                t = if last { t_end } else { t + h };
                // stage derivative at c3 = 1 approximates ż(t_{n+1})
                // Projection of the end point onto the constraints with the
                // simplified-Newton matrix (diff rows: (γ/h·M − J)Δ = 0,
                // constraint rows: ∂g/∂z·Δ = −g), so that the constraints —
                // hidden ones included for HiC/ADA — hold to round-off at
                // every step as in QUALIDAES (Steinbrecher 2016, section 4)
                // rather than only to the Newton tolerance.
                // whether `gg` holds g(t, y + z[2]) for the final z[2]
                let mut g_at_end = false;
                if n_g > 0 {
                    for _ in 0..PROJECTION_MAX_ITER {
                        for i in 0..n {
                            ystage[i] = y[i] + z[2][i];
                        }
                        problem.constraints(t, ystage, gg);
                        self.stats.constraint_evals += 1;
                        g_at_end = true;
                        let gmax = sel
                            .constraint_rows
                            .iter()
                            .map(|&r| gg[r].abs())
                            .fold(0.0, f64::max);
                        if gmax <= proj_tol {
                            break;
                        }
                        errv[..nd_sel].iter_mut().for_each(|x| *x = 0.0);
                        for (k, &r) in sel.constraint_rows.iter().enumerate() {
                            errv[nd_sel + k] = gg[r];
                        }
                        solve_real(&mut sys, &lu1, errv);
                        if !all_finite(errv) {
                            break;
                        }
                        for i in 0..n {
                            z[2][i] += errv[i];
                        }
                        g_at_end = false;
                    }
                }
                ydot.copy_from_slice(zd[2]);
                // (divided differences of (8.23), by multiplication with
                // the constant reciprocals)
                let (r_c1m1, r_c2m1, r_c1mc2) =
                    (1.0 / (C1 - 1.0), 1.0 / (C2 - 1.0), 1.0 / (C1 - C2));
                let (r_c1, r_c2) = (1.0 / C1, 1.0 / C2);
                for i in 0..n {
                    y[i] += z[2][i];
                    let (z1, z2, z3) = (z[0][i], z[1][i], z[2][i]);
                    cont[i] = y[i];
                    cont[n + i] = (z2 - z3) * r_c2m1;
                    let ak = (z1 - z2) * r_c1mc2;
                    let acont3 = (ak - z1 * r_c1) * r_c2;
                    cont[2 * n + i] = (ak - cont[n + i]) * r_c1m1;
                    cont[3 * n + i] = cont[2 * n + i] - acont3;
                    base_scal[i] = atol_t[i] + rtol_t * y[i].abs();
                }
                // Projected Runge–Kutta (projected-rk-index3-daes, eq.
                // (2.8)): the problem may move the end point onto its
                // position and velocity constraints; the next step starts
                // from the projected point and the dense output ends there.
                if problem.project_step(t, &mut y) {
                    self.stats.projections += 1;
                    cont[..n].copy_from_slice(&y);
                    g_at_end = false;
                }
                caljac = false;
                nsing = 0;
                let control = observer(&Step {
                    t_start,
                    t,
                    z: &y,
                    zdot: &ydot,
                    cont,
                    constraints: g_at_end.then_some(&gg[..]),
                });
                if last || control == StepControl::Stop {
                    return Ok(self.stats);
                }
                if g_at_end {
                    // the projection's last evaluation was at this very point
                    let (d, g) = y0.split_at_mut(n_d);
                    problem.diff_residual(t, &y, zero, d);
                    g.copy_from_slice(gg);
                } else {
                    problem.residual(t, &y, zero, y0);
                }
                if !mass_constant {
                    problem.mass_values(t, &y, mass_cur);
                    if !sparse {
                        self.mass.scatter_values(mass_cur, e_cur, n);
                    }
                }
                self.stats.residual_evals += 1;
                hnew = hnew.min(hmax);
                if reject {
                    hnew = hnew.min(h);
                }
                reject = false;
                if t + hnew - t_end >= 0.0 {
                    h = t_end - t;
                    last = true;
                } else {
                    let qt = hnew / h;
                    if theta <= thet && (1.0..=1.2).contains(&qt) {
                        // keep Jacobian and LU decomposition
                        continue;
                    }
                    h = hnew;
                }
                need_lu = true;
                need_jac = theta > thet;
            } else {
                reject = true;
                last = false;
                if first {
                    h *= 0.1;
                } else {
                    h = hnew;
                }
                if self.stats.steps_accepted >= 1 {
                    self.stats.steps_rejected += 1;
                }
                need_lu = true;
                need_jac = !caljac;
            }
        }
    }
}

/// Output of [`solve`]: the solution on a time grid.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trajectory {
    /// Output times.
    pub t: Vec<f64>,
    /// Solution at each output time (`z[k]` belongs to `t[k]`).
    pub z: Vec<Vec<f64>>,
    /// Work counters.
    pub stats: Stats,
}

/// A failed [`solve`]: the error and the results up to the last good step.
#[derive(Debug, Clone, PartialEq)]
pub struct SolveFailure {
    /// What went wrong.
    pub error: SolveError,
    /// Output points reached before the failure.
    pub partial: Trajectory,
}

/// Integrates `problem` from `(t0, z0)` and returns the solution at the
/// given output `times` (ascending, within `(t0, t_end]`, evaluated with the
/// dense output; `t0` itself is included if listed) — or, if `times` is
/// empty, at every accepted step. The last accepted step ends exactly at
/// `t_end`, so an output time equal to `t_end` gets the step's end value.
pub fn solve<P: QuasiLinearDae + ?Sized>(
    problem: &P,
    t0: f64,
    z0: &[f64],
    t_end: f64,
    times: &[f64],
    options: Options,
) -> Result<Trajectory, Box<SolveFailure>> {
    let fail = |error, partial| Box::new(SolveFailure { error, partial });
    let mut solver = match Radau5::new(problem, options) {
        Ok(s) => s,
        Err(e) => return Err(fail(e, Trajectory::default())),
    };
    if times.windows(2).any(|w| {
        matches!(
            w[0].partial_cmp(&w[1]),
            Some(std::cmp::Ordering::Greater) | None
        )
    }) || times.iter().any(|&x| !(t0..=t_end).contains(&x))
    {
        let e =
            SolveError::InvalidOptions("output times must be ascending within [t0, t_end]".into());
        return Err(fail(e, Trajectory::default()));
    }
    let mut out = Trajectory::default();
    let mut next = 0;
    while next < times.len() && times[next] <= t0 {
        out.t.push(times[next]);
        out.z.push(z0.to_vec());
        next += 1;
    }
    let n = z0.len();
    let result = solver.integrate(t0, z0, t_end, |step| {
        if times.is_empty() {
            out.t.push(step.t);
            out.z.push(step.z.to_vec());
        } else {
            while next < times.len() && times[next] <= step.t {
                let mut v = vec![0.0; n];
                if times[next] == step.t {
                    v.copy_from_slice(step.z);
                } else {
                    step.dense(times[next], &mut v);
                }
                out.t.push(times[next]);
                out.z.push(v);
                next += 1;
            }
        }
        StepControl::Continue
    });
    out.stats = solver.stats();
    match result {
        Ok(_) => Ok(out),
        Err(error) => Err(fail(error, out)),
    }
}
