//! The options of [`Radau5`](super::Radau5).

use crate::error_control::ErrorControl;
use crate::linalg::SPARSE_THRESHOLD;

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
    /// (the counts of [`Stats`](crate::Stats); the retries of the first step are bounded
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
    /// A step size to try first, guarded (default `0`: none): the step an
    /// integration that restarts after an event had reached before it.
    /// When it is at least [`restart_min_gain`](Self::restart_min_gain)
    /// times the starting step of [`h0`](Self::h0)'s rule, the first step
    /// tries it and is kept only if its Newton iteration converges
    /// contracting by at least [`RESTART_THETA`](super::RESTART_THETA) per
    /// iteration, its error estimate passes and its end value stays within
    /// a trust bound of the linear prediction `z₀ + h·ż₀`; otherwise the
    /// first step falls back to the cold start's step size, the failed
    /// attempt counted as a rejected step.
    pub restart_step: f64,
    /// How many times longer than the cold start's step
    /// [`restart_step`](Self::restart_step) must be to be tried (default
    /// [`RESTART_MIN_GAIN`](super::RESTART_MIN_GAIN)).
    pub restart_min_gain: f64,
    /// Consecutive Newton failures after which the integration stops.
    pub max_newton_failures: usize,
    /// Dense or sparse linear algebra for the iteration matrices (default
    /// [`LinearSolver::Auto`]).
    pub linear_solver: LinearSolver,
    /// Which components the error test weighs (default
    /// [`ErrorControl::default`]): all, RADAU5's index scaling by
    /// [`QuasiLinearDae::variable_index`](crate::QuasiLinearDae::variable_index),
    /// or the differential ones only.
    pub error_control: ErrorControl,
    /// With [`ErrorControl::Index`], how the Newton stopping test weighs
    /// the components of index `k > 1` (default [`NewtonScaling::Index`],
    /// RADAU5).
    pub newton_scaling: NewtonScaling,
    /// How long the dense path keeps the equation selection of an
    /// overdetermined system (default 1.5). A selection is kept at a new
    /// Jacobian once the selection before it chose the same rows, while
    /// the step size stays within this factor (above or below) of the
    /// step it was last selected at; it is made anew after a Newton
    /// failure or a singular matrix in any case. Values below 1 select
    /// at every Jacobian, `f64::INFINITY` keeps a confirmed selection
    /// until a failure (or [`Self::keep_selection_pivot`]'s test).
    /// Selecting is an elimination with complete
    /// pivoting over all rows, the largest single cost of a step of a
    /// small mechanical system; the step window keeps it from outliving
    /// the configuration it was chosen for, since the error estimate
    /// follows the selected rows.
    pub keep_selection_step_ratio: f64,
    /// A further condition on a kept dense selection (default 0.7; 0:
    /// none): a positive value re-selects once the smallest pivot of the
    /// selected rows (each row scaled to its largest entry) fell below
    /// this fraction of the one they had when they were chosen: the
    /// mechanism turned towards a configuration where the selected
    /// constraints lose rank, as a pendulum does twice per swing. It
    /// costs one dense LU of the selected rows per Jacobian, less than a
    /// selection.
    pub keep_selection_pivot: f64,
    /// Threads the sparse path may use (default 1): from
    /// [`PARALLEL_LU_MIN`](crate::PARALLEL_LU_MIN) unknowns on, the real
    /// and the complex iteration matrix are factorised and solved on two
    /// threads at once. The results do not depend on it.
    pub threads: usize,
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

/// With [`ErrorControl::Index`], the weights of the Newton stopping test
/// `η·‖ΔW‖ ≤ κ·Tol` (Solving ODEs II, IV.8, (8.10)–(8.14)) of a component
/// of index `k > 1`; the error test scales its error by `h^{k−1}` in
/// every case.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum NewtonScaling {
    /// RADAU5: the error test's weights, `scal/h^{k−1}` (hairer-radau5,
    /// NIND2/NIND3 in RADCOR). Right for a DAE of index 2 or 3 (GGL, the
    /// DAE as written), whose Newton increments of an index-`k` component
    /// carry the factor `h^{−(k−1)}`.
    #[default]
    Index,
    /// Unscaled weights `scal`: every component converged to `κ·Tol`. For
    /// a formulation of index 1 whose components carry the index of the
    /// DAE they come from (daec's regularized formulations) where the
    /// iteration must converge the index-2 unknowns as tightly as the
    /// others: on the charge pump (`--error-control index`) the scaled
    /// test left the current `I` off its hidden constraint, the charges
    /// it integrates into drifted out of the transistor model's domain
    /// and the runs at 1e-5 and 1e-10 failed.
    Unscaled,
    /// The error test's weights where they are looser than the unscaled
    /// ones, `scal/min(1, h^{k−1})`: RADAU5's test at steps below 1, the
    /// unscaled one above. For the regularized formulation of a
    /// constrained mechanical system: the velocities, accelerations and
    /// multipliers, whose error the error test accepts up to
    /// `scal/h^{k−1}`, need not be converged to `κ·scal` (on Andrews'
    /// squeezer at 1e-6 that took 6.2 iterations per step against
    /// RADAU5's 4.3, most of them on the index-3 unknowns, and 90
    /// convergence failures in 148 steps); where the scaling would tighten
    /// the test (`h > 1`, the water tube's steps of minutes) it only adds
    /// iterations (35 % more evaluations at 1e-4…1e-6).
    IndexBelowUnitStep,
}

impl NewtonScaling {
    /// The factor of the Newton weight `1/scal` of a component of index
    /// `k` at step size `h`: `h^{k−1}`, `1` or `min(1, h^{k−1})`.
    pub(super) fn factor(self, h: f64, k: u8) -> f64 {
        let e = k.max(1) as i32 - 1;
        match self {
            NewtonScaling::Index => h.powi(e),
            NewtonScaling::Unscaled => 1.0,
            NewtonScaling::IndexBelowUnitStep => h.powi(e).min(1.0),
        }
    }

    /// The rest of the error test's factor `h^{k−1}` beyond
    /// [`factor`](Self::factor): `1`, `h^{k−1}` or `max(1, h^{k−1})`
    /// (not a quotient, which an underflow of `h^{k−1}` would make 0/0).
    pub(super) fn error_rest(self, h: f64, k: u8) -> f64 {
        let e = k.max(1) as i32 - 1;
        match self {
            NewtonScaling::Index => 1.0,
            NewtonScaling::Unscaled => h.powi(e),
            NewtonScaling::IndexBelowUnitStep => h.powi(e).max(1.0),
        }
    }
}

/// The linear algebra of the simplified Newton iteration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LinearSolver {
    /// Dense up to [`SPARSE_THRESHOLD`] unknowns, sparse above.
    #[default]
    Auto,
    /// Dense LU (own row-major LU, `faer` above
    /// [`crate::linalg::FAER_THRESHOLD`]) and the dense equation selection
    /// ([`crate::selection::select_equations`]).
    Dense,
    /// Sparse LU on the fixed pattern of the iteration matrices
    /// (the `linalg::sparse` module; the symbolic analysis once per equation
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
            restart_step: 0.0,
            restart_min_gain: super::RESTART_MIN_GAIN,
            max_newton_failures: 30,
            linear_solver: LinearSolver::Auto,
            error_control: ErrorControl::default(),
            newton_scaling: NewtonScaling::Index,
            keep_selection_step_ratio: 1.5,
            keep_selection_pivot: 0.7,
            threads: 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::NewtonScaling;

    #[test]
    fn newton_and_error_test_factors_make_radau5s_scaling_together() {
        // The error test weighs an index-k component by h^{k−1} whatever
        // part of it the Newton test takes; IndexBelowUnitStep takes it
        // below h = 1 only.
        for h in [1e-3f64, 0.5, 1.0, 40.0] {
            for k in [0u8, 1, 2, 3] {
                let full = h.powi(k.max(1) as i32 - 1);
                for s in [
                    NewtonScaling::Index,
                    NewtonScaling::Unscaled,
                    NewtonScaling::IndexBelowUnitStep,
                ] {
                    let product = s.factor(h, k) * s.error_rest(h, k);
                    assert!((product - full).abs() <= 1e-15 * full, "{s:?} {h} {k}");
                }
                let below = NewtonScaling::IndexBelowUnitStep.factor(h, k);
                assert_eq!(below, if h < 1.0 { full } else { 1.0 }, "{h} {k}");
                assert_eq!(NewtonScaling::Unscaled.factor(h, k), 1.0);
            }
        }
        // an underflowing h^{k−1} leaves the error test's factor finite
        let rest = NewtonScaling::IndexBelowUnitStep.error_rest(1e-200, 3);
        assert_eq!(rest, 1.0);
    }
}
