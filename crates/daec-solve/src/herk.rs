//! Half-explicit Runge–Kutta methods (HERK) for overdetermined
//! semi-implicit DAEs after S. M. Bäse, "Half-explicit Runge–Kutta methods
//! for overdetermined semi-implicit differential-algebraic equations"
//! (2017), Algorithm 3.3:
//!
//! ```text
//!   X_i^d = x_0^d + h Σ_{j<i} a_ij Ẋ_j^d                       (3.2a)
//!   0     = g(X_i^d ⊕ X_i^a, t_0 + c_i h)   → X_i^a (Newton)    (3.2b)
//!   E(X_i, t_0 + c_i h) Ẋ_i = f(X_i, t_0 + c_i h)  → Ẋ_i        (3.2c)
//!   x_1^d = x_0^d + h Σ_j b_j Ẋ_j^d                             (3.2d)
//!   0     = g(x_1^d ⊕ x_1^a, t_0 + h)       → x_1^a (Newton)    (3.2e)
//! ```
//!
//! on the problem interface [`QuasiLinearDae`] (`E(t,z)ż = k(t,z)`,
//! `g(t,z) = 0`, possibly overdetermined, e.g. the HiC form).
//!
//! * **Selectors** (section 3.2): the *required* algebraic components are
//!   the unknowns whose column of `E` vanishes (Definitions 3.8/3.9,
//!   "regularly reducible" `E`); the algebraic components `φ^a` are the
//!   pivot columns of the LU decomposition of `𝒥_g = ∂g/∂z` with the
//!   pivoting of Procedure 3.11 (required columns first, then complete
//!   pivoting), the differential components `φ^d` are the rest
//!   (Approach 3.7). Redundant constraints (e.g. the repeated level-0
//!   constraint of a HiC form) are dropped by the same elimination: it
//!   stops at the numerical rank `m` of `𝒥_g`, and the pivot rows are the
//!   constraints iterated on. The selectors are recomputed at the start of
//!   every step, so they change along the solution where the pivots change
//!   (section 3.2, the continuation of Example 2.13; the example of
//!   section 4.2.4). As a deviation from the paper the rows of `𝒥_g` are
//!   scaled to unit maximum norm before pivoting, which makes the rank
//!   decision scale-free; within a row the choice is the paper's.
//! * **Newton** (Definition 3.14, Remark 3.15, section 4.1.4): the divided
//!   Newton method `Δx^a = −𝓡^{-1} g`, `Δx^d = 0`, as a *simplified*
//!   Newton method: `𝓡 = 𝒥_g^a` is evaluated and factorised at the start
//!   value of each nonlinear solve (as `simplifiedivnewton`, section 4.1.4)
//!   and kept during its iterations; the selectors are those of the step
//!   start.
//! * **Derivatives** (3.2c): `Ẋ` is needed only on the differential
//!   components; we solve `E Ẋ = k` for all components with a nonzero
//!   column of `E` (Criterion 3.6, items 1–2), selecting a maximal set of
//!   independent rows of `E` by complete pivoting (rows beyond the rank are
//!   consistent for a regularised DAE and are not used). If `E` restricted
//!   to those columns has not full column rank, HERK does not apply (use
//!   Radau IIA); [`Herk::integrate`] reports this as
//!   [`SolveError::InvalidProblem`].
//! * **Step size** (section 4.1.5): *step doubling* (Richardson
//!   extrapolation): one step of size `h` and two of size `h/2`,
//!   `ε = ‖x^h − x^{h/2}‖ / (2^p − 1)` in the weighted RMS norm of the
//!   tolerances, accepted if `ε ≤ 1`; the more accurate two-half-step value
//!   is kept; `h_new = h·β·ε^{−1/(p+1)}` after acceptance and
//!   `h·β·ε^{−1/p}` after rejection, as in the paper. With
//!   [`HerkOptions::fixed_step`] the method runs with constant steps (the
//!   setting of the convergence studies of section 4.2).
//! * **Dense output**: cubic Hermite interpolation of the end values and
//!   derivatives on the components with known derivatives, and the
//!   quadratic through start, midpoint (of the doubled step) and end on the
//!   required algebraic components; presented in the [`Step`] format of
//!   the Radau IIA integrator, so event location and output grids work
//!   unchanged. Dense values do not satisfy the constraints exactly (the
//!   caller may project them).

mod tableaus;

pub use tableaus::{Coefficients, Tableau};

use crate::error::SolveError;
use crate::error_control::ErrorControl;
use crate::linalg::RealLu;
use crate::problem::QuasiLinearDae;
use crate::step::{DENSE_NODES, Stats, Step, StepControl};

/// Options of the half-explicit Runge–Kutta integrator.
#[derive(Debug, Clone, PartialEq)]
pub struct HerkOptions {
    /// The explicit Runge–Kutta method (Bäse 2017, 4.1.2 (a)–(e)).
    pub tableau: Tableau,
    /// Relative tolerance (> 0) of the step size control and the Newton
    /// stopping test.
    pub rtol: f64,
    /// Absolute tolerance (> 0).
    pub atol: f64,
    /// Initial step size; `0` selects one from the initial derivative.
    /// With [`fixed_step`](Self::fixed_step) the (nominal) constant step.
    pub h0: f64,
    /// Maximal step size; `0` or infinite means `t_end − t0`.
    pub h_max: f64,
    /// Constant step size `h0` (shortened uniformly so that an integer
    /// number of steps ends at `t_end`), no error control.
    pub fixed_step: bool,
    /// Maximal number of step attempts: accepted and rejected steps (the
    /// counts of [`Stats`]; a failed Newton iteration counts
    /// as a rejection).
    pub max_steps: usize,
    /// Maximal simplified Newton iterations per nonlinear solve.
    pub newton_max_iter: usize,
    /// Newton stopping test: increment (weighted RMS norm in units of the
    /// tolerances) or estimated remaining error `θ/(1−θ)·‖Δ‖` below this
    /// value in the stages; 1000 times smaller at the step end points.
    pub newton_tol: f64,
    /// Evaluate and factorise `𝓡 = 𝒥_g^a` at the start value of every
    /// nonlinear solve (3.2b)/(3.2e), as Bäse's `simplifiedivnewton`
    /// (section 4.1.4) does (default); otherwise once per step at its
    /// start point (and again only when the iteration stalls).
    pub jacobian_per_solve: bool,
    /// Safety factor `β` of the step size control (Bäse 2017, 4.1.5).
    pub safety: f64,
    /// Lower bound of `h_new/h`.
    pub fac_min: f64,
    /// Upper bound of `h_new/h`.
    pub fac_max: f64,
    /// Consecutive failed step attempts (Newton failures, non-finite
    /// values) after which the integration stops.
    pub max_newton_failures: usize,
    /// Which components the step-doubling estimate weighs:
    /// [`ErrorControl::All`] (default) or [`ErrorControl::Differential`]
    /// (the components without a column in `E` left out, the mean still
    /// over all). [`ErrorControl::Index`] is refused: the half-explicit
    /// method computes the algebraic components from the constraints at
    /// every stage, and its step-doubling estimate of them has the order
    /// of the method — the `h^{k−1}` scaling corrects the embedded
    /// estimate of a collocation method on an index-`k` system only.
    pub error_control: ErrorControl,
}

impl Default for HerkOptions {
    fn default() -> Self {
        Self {
            tableau: Tableau::Hem4,
            rtol: 1e-6,
            atol: 1e-6,
            h0: 0.0,
            h_max: 0.0,
            fixed_step: false,
            max_steps: 1_000_000,
            newton_max_iter: 10,
            newton_tol: 1e-2,
            jacobian_per_solve: true,
            safety: 0.9,
            fac_min: 0.2,
            fac_max: 4.0,
            max_newton_failures: 30,
            error_control: ErrorControl::All,
        }
    }
}

/// The component and equation selectors of one step (Bäse 2017,
/// Approach 3.7 with Procedure 3.11).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selectors {
    /// Algebraic components `φ^a` (pivot columns of `𝒥_g`, in pivot order;
    /// the required ones first).
    pub algebraic: Vec<usize>,
    /// Differential components `φ^d`, ascending.
    pub differential: Vec<usize>,
    /// The independent constraint rows (pivot rows, paired with
    /// [`algebraic`](Self::algebraic)).
    pub constraint_rows: Vec<usize>,
}

impl Selectors {
    /// The algebraic components, ascending.
    pub fn algebraic_sorted(&self) -> Vec<usize> {
        let mut a = self.algebraic.clone();
        a.sort_unstable();
        a
    }
}

/// The Newton tolerance of the step end points (3.2e) relative to the
/// stages' (3.2b): the end points carry the solution, so their constraint
/// residuals are kept far below the tolerance.
const END_POINT_NEWTON_FACTOR: f64 = 1e-3;

/// Relative pivot threshold of the rank decisions.
const RANK_TOL: f64 = 1e-10;

/// Procedure 3.11 (Bäse 2017) on the dense row-major `jg` (`n_g × n`):
/// LU decomposition with the required columns pivoted first (steps 1–5),
/// then complete pivoting on the rest (steps 6–7), stopped at the
/// numerical rank (redundant constraint rows are left out). Returns the
/// selectors, or `Err(j)` if the required column `j` is not determined by
/// the constraints (then Criterion 3.6 fails and HERK does not apply).
pub fn select_components(
    n: usize,
    jg: &[f64],
    n_g: usize,
    required: &[bool],
) -> Result<Selectors, usize> {
    let mut w = jg[..n_g * n].to_vec();
    for r in 0..n_g {
        let row = &mut w[r * n..(r + 1) * n];
        let m = row.iter().fold(0.0f64, |a, &x| a.max(x.abs()));
        if m > 0.0 && m.is_finite() {
            row.iter_mut().for_each(|x| *x /= m);
        }
    }
    let mut row_used = vec![false; n_g];
    let mut col_used = vec![false; n];
    let mut algebraic = Vec::new();
    let mut rows = Vec::new();
    let n_req = required.iter().filter(|&&r| r).count();
    loop {
        let phase1 = algebraic.len() < n_req;
        let mut best = 0.0;
        let mut piv = None;
        for r in (0..n_g).filter(|&r| !row_used[r]) {
            for c in (0..n).filter(|&c| !col_used[c] && (!phase1 || required[c])) {
                let v = w[r * n + c].abs();
                if v > best {
                    best = v;
                    piv = Some((r, c));
                }
            }
        }
        let ok = best > RANK_TOL && best.is_finite();
        let Some((pr, pc)) = piv.filter(|_| ok) else {
            if phase1 {
                // a required component no constraint determines
                let j = (0..n).find(|&c| required[c] && !col_used[c]).unwrap_or(0);
                return Err(j);
            }
            break;
        };
        row_used[pr] = true;
        col_used[pc] = true;
        algebraic.push(pc);
        rows.push(pr);
        let p = w[pr * n + pc];
        for r in 0..n_g {
            if row_used[r] {
                continue;
            }
            let f = w[r * n + pc] / p;
            if f != 0.0 {
                for c in 0..n {
                    w[r * n + c] -= f * w[pr * n + c];
                }
                w[r * n + pc] = 0.0;
            }
        }
        if algebraic.len() == n {
            break;
        }
    }
    let differential = (0..n).filter(|&c| !col_used[c]).collect();
    Ok(Selectors {
        algebraic,
        differential,
        constraint_rows: rows,
    })
}

/// Why a step attempt failed (it is retried with a smaller step).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fail {
    /// The Newton iteration did not converge.
    Newton,
    /// Non-finite values or a singular matrix.
    Numerics,
}

/// The half-explicit Runge–Kutta integrator bound to a problem.
pub struct Herk<'p, P: QuasiLinearDae + ?Sized> {
    problem: &'p P,
    opts: HerkOptions,
    coef: Coefficients,
    n: usize,
    n_d: usize,
    n_g: usize,
    mass_pattern: Vec<(usize, usize)>,
    mass_values: Vec<f64>,
    jg_pattern: Vec<(usize, usize)>,
    jg_values: Vec<f64>,
    jg_dense: Vec<f64>,
    /// Required algebraic components (zero column of `E`).
    required: Vec<bool>,
    /// Components with a nonzero column of `E`.
    free: Vec<usize>,
    /// Cached factorisation of `E[e_rows, free]`, valid for `e_key`.
    e_key: Option<Vec<f64>>,
    e_rows: Vec<usize>,
    e_lu: RealLu,
    sel: Option<Selectors>,
    ja_lu: RealLu,
    stats: Stats,
    kbuf: Vec<f64>,
    gbuf: Vec<f64>,
    zero: Vec<f64>,
}

fn rms_scaled(v: impl Iterator<Item = (f64, f64)>) -> f64 {
    let mut s = 0.0;
    let mut k = 0usize;
    for (x, sc) in v {
        s += (x / sc) * (x / sc);
        k += 1;
    }
    if k == 0 { 0.0 } else { (s / k as f64).sqrt() }
}

impl<'p, P: QuasiLinearDae + ?Sized> Herk<'p, P> {
    /// Binds the integrator to `problem`, validating dimensions, patterns
    /// and options.
    pub fn new(problem: &'p P, options: HerkOptions) -> Result<Self, SolveError> {
        let (n, n_d, n_g) = crate::problem::checked_dimensions(problem)?;
        let o = &options;
        crate::problem::check_tolerances(o.rtol, o.atol)?;
        let bad = |x: f64| !(x.is_finite() && x > 0.0);
        if o.h0 < 0.0 || !o.h0.is_finite() || o.h_max < 0.0 || o.h_max.is_nan() {
            return Err(SolveError::InvalidOptions(
                "h0 and h_max must be ≥ 0".into(),
            ));
        }
        if o.fixed_step && o.h0 <= 0.0 {
            return Err(SolveError::InvalidOptions(
                "fixed_step needs a positive h0".into(),
            ));
        }
        if o.newton_max_iter < 1 || bad(o.newton_tol) || !(o.safety > 0.0 && o.safety < 1.0) {
            return Err(SolveError::InvalidOptions(
                "newton_max_iter must be ≥ 1, newton_tol > 0 and safety in (0, 1)".into(),
            ));
        }
        if !(o.fac_min > 0.0 && o.fac_min < 1.0 && o.fac_max > 1.0 && o.fac_max.is_finite()) {
            return Err(SolveError::InvalidOptions(
                "fac_min must be in (0, 1) and fac_max > 1".into(),
            ));
        }
        let check = |p: &[(usize, usize)], rows: usize, what: &str| match p
            .iter()
            .find(|&&(r, c)| r >= rows || c >= n)
        {
            Some(&(r, c)) => Err(SolveError::InvalidProblem(format!(
                "{what} pattern entry ({r}, {c}) outside {rows} × {n}"
            ))),
            None => Ok(()),
        };
        if o.error_control == ErrorControl::Index {
            return Err(SolveError::InvalidOptions(
                "the index scaling of the error test is for Radau IIA's embedded estimate on index-2/3 components; the half-explicit methods compute the algebraic components from the constraints and estimate their error by step doubling: use all or differential".into(),
            ));
        }
        let mass_pattern = problem.mass_pattern();
        check(&mass_pattern, n_d, "mass")?;
        let jg_pattern = problem.constraint_jacobian_pattern();
        check(&jg_pattern, n_g, "constraint Jacobian")?;
        let coef = options.tableau.coefficients();
        Ok(Self {
            problem,
            opts: options,
            coef,
            n,
            n_d,
            n_g,
            mass_values: vec![0.0; mass_pattern.len()],
            mass_pattern,
            jg_values: vec![0.0; jg_pattern.len()],
            jg_pattern,
            jg_dense: vec![0.0; n_g * n],
            required: vec![false; n],
            free: Vec::new(),
            e_key: None,
            e_rows: Vec::new(),
            e_lu: RealLu::new(0),
            sel: None,
            ja_lu: RealLu::new(0),
            stats: Stats::default(),
            kbuf: vec![0.0; n_d],
            gbuf: vec![0.0; n_g],
            zero: vec![0.0; n],
        })
    }

    /// Statistics of the last (or running) integration. `residual_evals`
    /// counts evaluations of `E ż − k` (one per stage derivative),
    /// `constraint_evals` evaluations of `g` in the Newton iterations.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The selectors of the last step (after [`integrate`](Self::integrate)
    /// or [`selectors_at`](Self::selectors_at)).
    pub fn selectors(&self) -> Option<&Selectors> {
        self.sel.as_ref()
    }

    /// Determines the required algebraic components at `(t, z)` and
    /// checks that HERK applies there: `E` has full column rank on the
    /// other components, and the constraints determine the required ones.
    /// Returns the selectors at `(t, z)`; the error says why HERK does not
    /// apply ([`SolveError::InvalidProblem`]).
    pub fn selectors_at(&mut self, t: f64, z: &[f64]) -> Result<Selectors, SolveError> {
        if z.len() != self.n || !z.iter().all(|v| v.is_finite()) {
            return Err(SolveError::InvalidOptions(format!(
                "the point must have {} finite entries",
                self.n
            )));
        }
        self.find_required(t, z)?;
        let mut zd = vec![0.0; self.n];
        if self.derivative(t, z, &mut zd).is_err() {
            return Err(SolveError::InvalidProblem(format!(
                "half-explicit Runge–Kutta needs E(t,z) to have full column rank on the {} differentiated unknowns (Bäse 2017, Criterion 3.6); it is singular at t = {t}",
                self.free.len(),
                t = crate::readable_number(t)
            )));
        }
        self.refresh_jacobian(t, z, true)
            .map_err(|e| match e {
                Ok(j) => SolveError::InvalidProblem(format!(
                    "half-explicit Runge–Kutta needs the constraints to determine every unknown that appears without derivative (Bäse 2017, Criterion 3.6 and Procedure 3.11); unknown {j} is not determined by ∂g/∂z at t = {t}",
                    t = crate::readable_number(t)
                )),
                Err(()) => SolveError::InvalidProblem(format!(
                    "the constraint Jacobian is not finite or singular at t = {t}",
                    t = crate::readable_number(t)
                )),
            })?;
        Ok(self.sel.clone().unwrap_or(Selectors {
            algebraic: Vec::new(),
            differential: (0..self.n).collect(),
            constraint_rows: Vec::new(),
        }))
    }

    /// Required algebraic components: the zero columns of `E(t, z)`
    /// (Definition 3.9).
    fn find_required(&mut self, t: f64, z: &[f64]) -> Result<(), SolveError> {
        self.problem.mass_values(t, z, &mut self.mass_values);
        if !self.mass_values.iter().all(|v| v.is_finite()) {
            return Err(SolveError::InvalidProblem(format!(
                "E(t,z) is not finite at t = {t}",
                t = crate::readable_number(t)
            )));
        }
        let mut nonzero = vec![false; self.n];
        for (&(_, c), &v) in self.mass_pattern.iter().zip(&self.mass_values) {
            if v != 0.0 {
                nonzero[c] = true;
            }
        }
        self.required = nonzero.iter().map(|&b| !b).collect();
        self.free = (0..self.n).filter(|&j| nonzero[j]).collect();
        if self.free.len() > self.n_d {
            return Err(SolveError::InvalidProblem(format!(
                "half-explicit Runge–Kutta needs E(t,z) to have full column rank on the differentiated unknowns (Bäse 2017, Criterion 3.6), but {} unknowns appear differentiated in only {} differential equations",
                self.free.len(),
                self.n_d
            )));
        }
        self.e_key = None;
        Ok(())
    }

    /// (3.2c): solves `E(t,z) ż = k(t,z)` for the components with a nonzero
    /// column of `E` (the required ones get 0).
    fn derivative(&mut self, t: f64, z: &[f64], zd: &mut [f64]) -> Result<(), Fail> {
        let (n, l) = (self.n, self.free.len());
        self.problem.mass_values(t, z, &mut self.mass_values);
        if self.e_key.as_deref() != Some(&self.mass_values[..]) {
            if !self.mass_values.iter().all(|v| v.is_finite()) {
                return Err(Fail::Numerics);
            }
            // rows of E by complete pivoting on the free columns
            let mut col_of = vec![usize::MAX; n];
            for (k, &j) in self.free.iter().enumerate() {
                col_of[j] = k;
            }
            let nd = self.n_d;
            let mut w = vec![0.0; nd * l];
            for (&(r, c), &v) in self.mass_pattern.iter().zip(&self.mass_values) {
                if col_of[c] != usize::MAX {
                    w[r * l + col_of[c]] += v;
                }
            }
            let dense = w.clone();
            for r in 0..nd {
                let row = &mut w[r * l..(r + 1) * l];
                let m = row.iter().fold(0.0f64, |a, &x| a.max(x.abs()));
                if m > 0.0 {
                    row.iter_mut().for_each(|x| *x /= m);
                }
            }
            let mut row_used = vec![false; nd];
            let mut col_used = vec![false; l];
            let mut rows = Vec::with_capacity(l);
            for _ in 0..l {
                let mut best = 0.0;
                let mut piv = None;
                for r in (0..nd).filter(|&r| !row_used[r]) {
                    for c in (0..l).filter(|&c| !col_used[c]) {
                        let v = w[r * l + c].abs();
                        if v > best {
                            best = v;
                            piv = Some((r, c));
                        }
                    }
                }
                let Some((pr, pc)) = piv.filter(|_| best > RANK_TOL) else {
                    return Err(Fail::Numerics);
                };
                row_used[pr] = true;
                col_used[pc] = true;
                rows.push(pr);
                let p = w[pr * l + pc];
                for r in (0..nd).filter(|&r| !row_used[r]) {
                    let f = w[r * l + pc] / p;
                    if f != 0.0 {
                        for c in 0..l {
                            w[r * l + c] -= f * w[pr * l + c];
                        }
                    }
                }
            }
            rows.sort_unstable();
            let mut sq = Vec::with_capacity(l * l);
            for &r in &rows {
                sq.extend_from_slice(&dense[r * l..(r + 1) * l]);
            }
            let mut lu = RealLu::new(l);
            lu.factor(&sq).map_err(|_| Fail::Numerics)?;
            self.e_lu = lu;
            self.e_rows = rows;
            self.e_key = Some(self.mass_values.clone());
            self.stats.lu_decompositions += 1;
        }
        self.problem.diff_residual(t, z, &self.zero, &mut self.kbuf);
        self.stats.residual_evals += 1;
        let mut rhs: Vec<f64> = self.e_rows.iter().map(|&r| -self.kbuf[r]).collect();
        self.e_lu.solve(&mut rhs);
        zd.iter_mut().for_each(|x| *x = 0.0);
        for (&j, &v) in self.free.iter().zip(&rhs) {
            zd[j] = v;
        }
        if rhs.iter().all(|v| v.is_finite()) {
            Ok(())
        } else {
            Err(Fail::Numerics)
        }
    }

    fn eval_jacobian(&mut self, t: f64, z: &[f64]) -> bool {
        self.problem
            .constraint_jacobian_values(t, z, &mut self.jg_values);
        self.stats.jacobian_evals += 1;
        let n = self.n;
        self.jg_dense.iter_mut().for_each(|x| *x = 0.0);
        for (&(r, c), &v) in self.jg_pattern.iter().zip(&self.jg_values) {
            self.jg_dense[r * n + c] += v;
        }
        self.jg_values.iter().all(|v| v.is_finite())
    }

    /// Factorises `𝓡 = 𝒥_g[rows, φ^a]` of the current selection.
    fn factor_ja(&mut self) -> Result<(), ()> {
        let Some(sel) = &self.sel else { return Ok(()) };
        let (n, m) = (self.n, sel.algebraic.len());
        let mut a = Vec::with_capacity(m * m);
        for &r in &sel.constraint_rows {
            for &c in &sel.algebraic {
                a.push(self.jg_dense[r * n + c]);
            }
        }
        let mut lu = RealLu::new(m);
        lu.factor(&a).map_err(|_| ())?;
        self.ja_lu = lu;
        self.stats.lu_decompositions += 1;
        Ok(())
    }

    /// Evaluates `𝒥_g` at `(t, z)`; with `reselect` recomputes the
    /// selectors (Procedure 3.11), then factorises `𝓡`.
    /// `Err(Ok(j))`: required column `j` undetermined; `Err(Err(()))`:
    /// non-finite or singular.
    fn refresh_jacobian(
        &mut self,
        t: f64,
        z: &[f64],
        reselect: bool,
    ) -> Result<(), Result<usize, ()>> {
        if self.n_g == 0 {
            if reselect {
                if let Some(j) = (0..self.n).find(|&j| self.required[j]) {
                    return Err(Ok(j));
                }
                self.sel = Some(Selectors {
                    algebraic: Vec::new(),
                    differential: (0..self.n).collect(),
                    constraint_rows: Vec::new(),
                });
            }
            return Ok(());
        }
        if !self.eval_jacobian(t, z) {
            return Err(Err(()));
        }
        if reselect {
            let s =
                select_components(self.n, &self.jg_dense, self.n_g, &self.required).map_err(Ok)?;
            if let Some(old) = &self.sel
                && old.algebraic_sorted() != s.algebraic_sorted()
            {
                self.stats.selection_changes += 1;
            }
            self.sel = Some(s);
        }
        self.factor_ja().map_err(Err)
    }

    /// (3.2b)/(3.2e): the divided simplified Newton method (Definition
    /// 3.14) on the selected constraints for the algebraic components of
    /// `x`, with `𝓡` from the step start; one refactorisation at the
    /// current iterate if it does not contract.
    fn solve_constraints(
        &mut self,
        t: f64,
        x: &mut [f64],
        scale: &[f64],
        tol: f64,
    ) -> Result<(), Fail> {
        let Some(sel) = self.sel.clone() else {
            return Ok(());
        };
        if sel.algebraic.is_empty() {
            return Ok(());
        }
        let start = x.to_vec();
        for attempt in 0..2 {
            if attempt == 1 {
                x.copy_from_slice(&start);
            }
            // 𝓡 at the start value, as simplifiedivnewton (section 4.1.4,
            // step 3) does; the selectors stay those of the step start.
            if (attempt == 1 || self.opts.jacobian_per_solve)
                && (!self.eval_jacobian(t, x) || self.factor_ja().is_err())
            {
                return Err(Fail::Newton);
            }
            let mut prev = f64::INFINITY;
            let mut theta = 0.0f64;
            for k in 0..self.opts.newton_max_iter {
                self.problem.constraints(t, x, &mut self.gbuf);
                self.stats.constraint_evals += 1;
                self.stats.newton_iterations += 1;
                let mut d: Vec<f64> = sel.constraint_rows.iter().map(|&r| -self.gbuf[r]).collect();
                if !d.iter().all(|v| v.is_finite()) {
                    return Err(Fail::Numerics);
                }
                self.ja_lu.solve(&mut d);
                let mut xmax = 1.0f64;
                let mut dmax = 0.0f64;
                for (&j, &dj) in sel.algebraic.iter().zip(&d) {
                    x[j] += dj;
                    xmax = xmax.max(x[j].abs());
                    dmax = dmax.max(dj.abs());
                }
                let norm = rms_scaled(sel.algebraic.iter().zip(&d).map(|(&j, &dj)| (dj, scale[j])));
                if !norm.is_finite() {
                    return Err(Fail::Numerics);
                }
                if dmax <= 4.0 * f64::EPSILON * xmax {
                    return Ok(());
                }
                // Stopping test: ‖Δ‖ ≤ tol, or with the contraction
                // estimate θ (Hairer–Wanner, Solving ODEs II, IV.8,
                // (8.10)–(8.11)) the remaining error θ/(1−θ)·‖Δ‖ ≤ tol. The
                // first ratio is not used for θ: the first correction removes
                // the (often linear) error of the start value and overstates
                // the contraction.
                if norm <= tol {
                    return Ok(());
                }
                if prev.is_finite() {
                    let ratio = norm / prev;
                    if ratio >= 1.0 {
                        break;
                    }
                    if k >= 2 {
                        theta = theta.max(ratio);
                        if theta / (1.0 - theta) * norm <= tol {
                            return Ok(());
                        }
                    }
                }
                prev = norm;
            }
        }
        Err(Fail::Newton)
    }

    /// One step of Algorithm 3.3 from `(t, x0)` with `ẋ0` (stage 1) to
    /// `x1`.
    fn rk_step(
        &mut self,
        t: f64,
        x0: &[f64],
        xd0: &[f64],
        h: f64,
        x1: &mut [f64],
        scale: &[f64],
    ) -> Result<(), Fail> {
        let n = self.n;
        let s = self.coef.stages;
        let mut kd = vec![0.0; s * n];
        kd[..n].copy_from_slice(xd0);
        let mut xi = x0.to_vec();
        for i in 1..s {
            // (3.2a) on all components with a derivative (for the
            // algebraic ones this is the Newton start value); the required
            // components start from the linear extrapolation with the
            // derivative estimate of the dense output (0 at the start).
            for &j in &self.free {
                let mut acc = 0.0;
                for jj in 0..i {
                    acc += self.coef.a[i * s + jj] * kd[jj * n + j];
                }
                xi[j] = x0[j] + h * acc;
            }
            for j in (0..n).filter(|&j| self.required[j]) {
                xi[j] = x0[j] + self.coef.c[i] * h * xd0[j];
            }
            let ti = t + self.coef.c[i] * h;
            self.solve_constraints(ti, &mut xi, scale, self.opts.newton_tol)?; // (3.2b)
            let (_, rest) = kd.split_at_mut(i * n);
            self.derivative(ti, &xi, &mut rest[..n])?; // (3.2c)
        }
        // (3.2d)
        x1.copy_from_slice(&xi);
        for j in (0..n).filter(|&j| self.required[j]) {
            x1[j] = x0[j] + h * xd0[j];
        }
        for &j in &self.free {
            let mut acc = 0.0;
            for jj in 0..s {
                acc += self.coef.b[jj] * kd[jj * n + j];
            }
            x1[j] = x0[j] + h * acc;
        }
        // (3.2e), solved more tightly: the end points carry the solution
        self.solve_constraints(
            t + h,
            x1,
            scale,
            END_POINT_NEWTON_FACTOR * self.opts.newton_tol,
        )
    }

    /// Integrates from `(t0, z0)` to `t_end > t0`, calling `observer` after
    /// every accepted step (the last one ends exactly at `t_end`). `z0`
    /// should be consistent; its algebraic components are corrected by one
    /// Newton solve of the constraints first.
    ///
    /// [`SolveError::InvalidProblem`] means that HERK does not apply to the
    /// problem (see [`selectors_at`](Self::selectors_at)); run-time
    /// failures carry the time of the last accepted step, up to which the
    /// observer has seen every step.
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
        let n = self.n;
        crate::problem::check_span(n, t0, z0, t_end)?;
        self.stats = Stats::default();
        self.sel = None;
        self.selectors_at(t0, z0)?;
        self.stats = Stats::default();
        let opts = self.opts.clone();
        let p = self.coef.order as f64;
        let atol = opts.atol;
        let rtol = opts.rtol;
        let scale_of = |x: &[f64], y: &[f64]| -> Vec<f64> {
            x.iter()
                .zip(y)
                .map(|(a, b)| atol + rtol * a.abs().max(b.abs()))
                .collect()
        };
        // the factor of each component in the error estimate
        let mask: Vec<f64> = crate::problem::differential_components(self.problem)
            .into_iter()
            .map(|d| opts.error_control.factor(1.0, 1, d))
            .collect();
        let span = t_end - t0;
        let hmax = if opts.h_max > 0.0 && opts.h_max.is_finite() {
            opts.h_max.min(span)
        } else {
            span
        };
        let mut t = t0;
        let mut x = z0.to_vec();
        let sc0 = scale_of(&x, &x);
        let tol0 = END_POINT_NEWTON_FACTOR * opts.newton_tol;
        if self.solve_constraints(t0, &mut x, &sc0, tol0).is_err() {
            return Err(SolveError::InvalidOptions(format!(
                "the initial value is not consistent: the constraints cannot be solved for the algebraic components at t = {t0}"
            )));
        }
        let mut xd = vec![0.0; n];
        if self.derivative(t0, &x, &mut xd).is_err() {
            return Err(SolveError::InvalidProblem(format!(
                "E(t,z) is singular at the initial point t = {t0}"
            )));
        }
        let mut h = if opts.fixed_step {
            let steps = (span / opts.h0 - 1e-9).ceil().max(1.0);
            span / steps
        } else if opts.h0 > 0.0 {
            opts.h0.min(hmax)
        } else {
            // Solving ODEs I, II.4: h = 0.01·‖x0‖/‖ẋ0‖ in the scaled norm
            let d0 = rms_scaled(x.iter().zip(&sc0).map(|(&a, &b)| (a, b)));
            let d1 = rms_scaled(xd.iter().zip(&sc0).map(|(&a, &b)| (a, b)));
            let h = if d0 < 1e-5 || d1 < 1e-5 {
                1e-6
            } else {
                0.01 * d0 / d1
            };
            h.min(hmax).max(1e-10 * span)
        };
        let mut failures = 0usize;
        let mut rejected_last = false;
        let mut big = vec![0.0; n];
        let mut mid = vec![0.0; n];
        let mut xdm = vec![0.0; n];
        let mut x1 = vec![0.0; n];
        let mut xd1 = vec![0.0; n];
        let mut cont = vec![0.0; 4 * n];
        loop {
            if t >= t_end {
                return Ok(self.stats);
            }
            // (the retries of the first step are bounded by its shrinking h)
            if self.stats.steps_accepted + self.stats.steps_rejected >= opts.max_steps {
                return Err(SolveError::TooManySteps {
                    t,
                    max_steps: opts.max_steps,
                });
            }
            let last = t + h * 1.0001 >= t_end;
            if last {
                h = t_end - t;
            }
            if h <= 10.0 * f64::EPSILON * t.abs().max(1.0) {
                return Err(SolveError::StepSizeTooSmall { t, h });
            }
            // selectors and 𝓡 at the step start (section 3.2)
            let attempt: Result<f64, Fail> = (|| {
                self.refresh_jacobian(t, &x, true)
                    .map_err(|_| Fail::Numerics)?;
                let sc = scale_of(&x, &x);
                if opts.fixed_step {
                    self.rk_step(t, &x, &xd, h, &mut x1, &sc)?;
                    self.derivative(t + h, &x1, &mut xd1)?;
                    mid.copy_from_slice(&x);
                    return Ok(0.0);
                }
                // step doubling (section 4.1.5)
                self.rk_step(t, &x, &xd, h, &mut big, &sc)?;
                self.rk_step(t, &x, &xd, 0.5 * h, &mut mid, &sc)?;
                self.derivative(t + 0.5 * h, &mid, &mut xdm)?;
                for j in (0..n).filter(|&j| self.required[j]) {
                    xdm[j] = xd[j];
                }
                self.rk_step(t + 0.5 * h, &mid, &xdm, 0.5 * h, &mut x1, &sc)?;
                let sc1 = scale_of(&x, &x1);
                let err = rms_scaled(
                    x1.iter()
                        .zip(&big)
                        .zip(&sc1)
                        .zip(&mask)
                        .map(|(((a, b), s), m)| ((a - b) * m, *s)),
                ) / (2f64.powf(p) - 1.0);
                if !err.is_finite() {
                    return Err(Fail::Numerics);
                }
                if err <= 1.0 {
                    self.derivative(t + h, &x1, &mut xd1)?;
                }
                Ok(err)
            })();
            let err = match attempt {
                Ok(e) => e,
                Err(f) => {
                    failures += 1;
                    if opts.fixed_step || failures > opts.max_newton_failures {
                        return Err(match f {
                            Fail::Newton => SolveError::NewtonDivergence { t, h, failures },
                            Fail::Numerics => SolveError::NewtonDivergence { t, h, failures },
                        });
                    }
                    if self.stats.steps_accepted > 0 {
                        self.stats.steps_rejected += 1;
                    }
                    h *= 0.25;
                    rejected_last = true;
                    continue;
                }
            };
            if err > 1.0 {
                if self.stats.steps_accepted > 0 {
                    self.stats.steps_rejected += 1;
                }
                h *= (opts.safety * err.powf(-1.0 / p)).clamp(opts.fac_min, 1.0);
                rejected_last = true;
                continue;
            }
            failures = 0;
            // accepted: dense output and observer
            let t1 = if last { t_end } else { t + h };
            self.dense_coefficients(&x, &xd, &mid, &x1, &mut xd1, h, opts.fixed_step, &mut cont);
            self.stats.steps_accepted += 1;
            let step = Step::from_parts(t, t1, &x1, &xd1, &cont);
            let ctl = observer(&step);
            t = t1;
            x.copy_from_slice(&x1);
            xd.copy_from_slice(&xd1);
            if ctl == StepControl::Stop {
                return Ok(self.stats);
            }
            if !opts.fixed_step {
                let fac_max = if rejected_last { 1.0 } else { opts.fac_max };
                let fac = if err > 0.0 {
                    opts.safety * err.powf(-1.0 / (p + 1.0))
                } else {
                    fac_max
                };
                h = (h * fac.clamp(opts.fac_min, fac_max)).min(hmax);
            }
            rejected_last = false;
        }
    }

    /// Coefficients of the dense output on `[t, t + h]` in the format of
    /// [`Step`]: Newton form of the cubic at [`DENSE_NODES`]
    /// (`t_new + s·h`). Cubic Hermite on components with derivatives;
    /// on the required components the quadratic through start, midpoint
    /// (`mid`, adaptive mode) and end, or the straight line (fixed steps),
    /// whose end derivative is written into `xd1`.
    #[allow(clippy::too_many_arguments)]
    fn dense_coefficients(
        &self,
        x0: &[f64],
        xd0: &[f64],
        mid: &[f64],
        x1: &[f64],
        xd1: &mut [f64],
        h: f64,
        linear: bool,
        cont: &mut [f64],
    ) {
        let n = self.n;
        let nodes = DENSE_NODES;
        for j in 0..n {
            let mut v = [0.0; 4];
            if self.required[j] {
                let (a, m, b) = (x0[j], mid[j], x1[j]);
                for (k, &s) in nodes.iter().enumerate() {
                    let th = 1.0 + s;
                    v[k] = if linear {
                        a + th * (b - a)
                    } else {
                        // Lagrange on θ = 0, 1/2, 1
                        a * 2.0 * (th - 0.5) * (th - 1.0) - m * 4.0 * th * (th - 1.0)
                            + b * 2.0 * th * (th - 0.5)
                    };
                }
                xd1[j] = if linear {
                    (b - a) / h
                } else {
                    (a - 4.0 * m + 3.0 * b) / h
                };
            } else {
                for (k, &s) in nodes.iter().enumerate() {
                    let th = 1.0 + s;
                    let h00 = (1.0 + 2.0 * th) * (1.0 - th) * (1.0 - th);
                    let h10 = th * (1.0 - th) * (1.0 - th);
                    let h01 = th * th * (3.0 - 2.0 * th);
                    let h11 = th * th * (th - 1.0);
                    v[k] = h00 * x0[j] + h10 * h * xd0[j] + h01 * x1[j] + h11 * h * xd1[j];
                }
            }
            let [s0, s1, s2, s3] = nodes;
            let d01 = (v[1] - v[0]) / (s1 - s0);
            let d12 = (v[2] - v[1]) / (s2 - s1);
            let d23 = (v[3] - v[2]) / (s3 - s2);
            let d012 = (d12 - d01) / (s2 - s0);
            let d123 = (d23 - d12) / (s3 - s1);
            let d0123 = (d123 - d012) / (s3 - s0);
            cont[j] = v[0];
            cont[n + j] = d01;
            cont[2 * n + j] = d012;
            cont[3 * n + j] = d0123;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn procedure_3_11_example_3_13() {
        // J_g = [[2, 1, 0], [1, 1/2, 1]], x3 required: x3 and x1 algebraic.
        let jg = [2.0, 1.0, 0.0, 1.0, 0.5, 1.0];
        let s = select_components(3, &jg, 2, &[false, false, true]).unwrap();
        assert_eq!(s.algebraic, vec![2, 0]);
        assert_eq!(s.differential, vec![1]);
    }

    #[test]
    fn procedure_3_11_pendulum_example_2_13() {
        // Bäse Example 2.13 (continued): x0 = (0.5, −√¾, −0.5, −⅓, 5),
        // g = 11.16, m = l = 1: λ, w, y algebraic, x, v differential.
        let (x, y, v, w, l, g) = (0.5f64, -(0.75f64).sqrt(), -0.5, -1.0 / 3.0, 5.0, 11.16);
        let jg = [
            2.0 * x,
            2.0 * y,
            0.0,
            0.0,
            0.0,
            2.0 * v,
            2.0 * w,
            2.0 * x,
            2.0 * y,
            0.0,
            -8.0 * x * l,
            -8.0 * y * l - 2.0 * g,
            4.0 * v,
            4.0 * w,
            -4.0 * (x * x + y * y),
        ];
        let s = select_components(5, &jg, 3, &[false, false, false, false, true]).unwrap();
        assert_eq!(s.algebraic_sorted(), vec![1, 3, 4]);
        assert_eq!(s.differential, vec![0, 2]);
    }

    #[test]
    fn undetermined_required_component_is_reported() {
        let jg = [1.0, 0.0, 0.0];
        assert_eq!(select_components(3, &jg, 1, &[false, false, true]), Err(2));
    }
}
