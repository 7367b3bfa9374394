//! The problem interface: a quasi-linear, possibly overdetermined DAE.
//!
//! The integrator solves
//!
//! ```text
//!   E(t, z) ż = k(t, z)     (n_d "differential" rows)
//!         0   = g(t, z)     (n_g constraint rows)
//! ```
//!
//! for `z ∈ R^n` with `n_d + n_g ≥ n`. When `n_d + n_g = n` the DAE is
//! *square* (the usual `M y' = f(y)` setting of RADAU5, Hairer–Wanner,
//! Solving ODEs II, IV.8 and VI.6). When `n_d + n_g > n` it is
//! *overdetermined* as produced by the regularisations HiC and ADA of
//! Steinbrecher (2016), section 3; such systems are integrated as QUALIDAES
//! does (section 4 of the same paper): every constraint holds at every stage
//! and the differential rows are used in a projected sense (see
//! [`crate::selection`]).
//!
//! The trait is deliberately plain — slices in, slices out — because it is
//! implemented by hand-written Rust (tests), by Rust code that `daec`
//! generates, and by an adapter over `daec`'s symbolic tapes. Parameters are
//! data of the implementor.
//!
//! # Sparse Jacobians
//!
//! Every Jacobian is given as a fixed *pattern* (a list of `(row, col)`
//! pairs, queried once when the solver is built) and *values* in the same
//! order (written on every evaluation). Entries that appear more than once in
//! a pattern are summed. Entries not in the pattern are zero.

/// A quasi-linear DAE `E(t,z) ż = k(t,z)`, `g(t,z) = 0`, with analytic
/// sparse Jacobians.
///
/// Contract (checked by the solver where cheap, otherwise the results are
/// meaningless but the solver does not panic):
/// * `n_diff() + n_constraints() >= n_vars()` and `n_vars() > 0`;
/// * [`diff_residual`](Self::diff_residual) is affine in `zdot`: it returns
///   `E(t,z)·zdot − k(t,z)`, so that `k(t,z) = −diff_residual(t, z, 0)`;
/// * the patterns index rows `< n_diff()` (resp. `< n_constraints()`) and
///   columns `< n_vars()`;
/// * the value methods write exactly as many values as the corresponding
///   pattern has entries.
///
/// Non-finite values returned by any method are treated by the integrator
/// as a failed Newton iteration (the step is retried with a smaller step
/// size), so an implementor may return `NaN` outside the model's domain
/// (e.g. `sqrt` of a negative number).
pub trait QuasiLinearDae {
    /// Number of unknowns `n` (the length of `z`).
    fn n_vars(&self) -> usize;

    /// Number of differential rows `n_d` (rows of `E` and `k`).
    fn n_diff(&self) -> usize;

    /// Number of constraint rows `n_g` (rows of `g`).
    fn n_constraints(&self) -> usize;

    /// Writes the differential residual `E(t,z)·zdot − k(t,z)` into `out`
    /// (length `n_d`).
    fn diff_residual(&self, t: f64, z: &[f64], zdot: &[f64], out: &mut [f64]);

    /// Writes the constraint residual `g(t,z)` into `out` (length `n_g`).
    fn constraints(&self, t: f64, z: &[f64], out: &mut [f64]);

    /// Writes both residuals at one point, `[E(t,z)·zdot − k(t,z); g(t,z)]`,
    /// into `out` (length `n_d + n_g`): what the integrator needs at every
    /// stage. The default calls [`diff_residual`](Self::diff_residual) and
    /// [`constraints`](Self::constraints); an implementor may do both in
    /// one pass.
    fn residual(&self, t: f64, z: &[f64], zdot: &[f64], out: &mut [f64]) {
        let (d, g) = out.split_at_mut(self.n_diff().min(out.len()));
        self.diff_residual(t, z, zdot, d);
        self.constraints(t, z, g);
    }

    /// [`residual`](Self::residual) at the three stage points of a Radau
    /// IIA step (`out[s]` at `(t[s], z[s], zdot[s])`): the integrator's
    /// call in every Newton iteration. The default makes three calls; an
    /// implementor may evaluate the points together (the tapes of `daec`
    /// run the three in one pass), with the same values as three calls.
    fn residual_stages(
        &self,
        t: [f64; 3],
        z: [&[f64]; 3],
        zdot: [&[f64]; 3],
        out: [&mut [f64]; 3],
    ) {
        for (s, o) in out.into_iter().enumerate() {
            self.residual(t[s], z[s], zdot[s], o);
        }
    }

    /// Sparsity pattern of `E(t,z)` (`n_d × n`).
    fn mass_pattern(&self) -> Vec<(usize, usize)>;

    /// Values of `E(t,z)` in the order of [`mass_pattern`](Self::mass_pattern).
    fn mass_values(&self, t: f64, z: &[f64], out: &mut [f64]);

    /// Whether `E` is constant (independent of `t` and `z`): the
    /// integrator then evaluates it once. The default says no.
    fn mass_is_constant(&self) -> bool {
        false
    }

    /// Sparsity pattern of `∂(E(t,z)·ż − k(t,z))/∂z` (`n_d × n`).
    fn diff_jacobian_pattern(&self) -> Vec<(usize, usize)>;

    /// Values of `∂(E(t,z)·ż − k(t,z))/∂z` at `(t, z, zdot)`, in the order of
    /// [`diff_jacobian_pattern`](Self::diff_jacobian_pattern). For a
    /// constant `E` the `zdot` argument does not matter.
    fn diff_jacobian_values(&self, t: f64, z: &[f64], zdot: &[f64], out: &mut [f64]);

    /// Sparsity pattern of `∂g/∂z` (`n_g × n`).
    fn constraint_jacobian_pattern(&self) -> Vec<(usize, usize)>;

    /// Values of `∂g/∂z` at `(t, z)` in the order of
    /// [`constraint_jacobian_pattern`](Self::constraint_jacobian_pattern).
    fn constraint_jacobian_values(&self, t: f64, z: &[f64], out: &mut [f64]);

    /// Optional per-variable (differentiation) index used for index-aware
    /// error scaling, as `NIND1/NIND2/NIND3` of RADAU5 (Hairer–Wanner,
    /// Solving ODEs II, VII.4 and the RADAU5 documentation): the error of a
    /// variable of index `i ≥ 2` is measured in a norm scaled by
    /// `h^{i−1}`. Must return `n_vars()` entries; `0` is treated as `1`.
    /// The default (all ones) is right for index-1 and regularised
    /// (HiC/ADA/StE/DD/GGL) formulations.
    fn variable_index(&self) -> Vec<u8> {
        vec![1; self.n_vars()]
    }

    /// Optional level of each constraint row (`n_constraints()` entries):
    /// row `i` is (derived from) the `levels[i]`-th derivative of a model
    /// equation, as the hidden constraints of the Σ-method (Steinbrecher
    /// 2016, section 3.3). An overdetermined system's equation selection
    /// then solves each constraint for the unknowns that first appear at
    /// its level (`PivotPreference` of the equation selection). The default (no
    /// levels) selects by magnitude alone.
    fn constraint_levels(&self) -> Vec<u32> {
        Vec::new()
    }

    /// Optional projection of an accepted step's end point, the corrector
    /// of the *projected Runge–Kutta methods* for index-3 DAEs
    /// (projected-rk-index3-daes, section 2, eqs. (2.7)/(2.8)): the
    /// integrator calls it with `(t_{n+1}, z_{n+1})` after every accepted
    /// step and continues from the projected point. Returns whether `z`
    /// was changed. The default does nothing.
    fn project_step(&self, t: f64, z: &mut [f64]) -> bool {
        let _ = (t, z);
        false
    }
}

/// Whether each unknown of `problem` is differential: whether its column
/// of the mass matrix `E` has an entry (the others are algebraic, left
/// out of the error test by [`crate::ErrorControl::Differential`]).
pub(crate) fn differential_components<P: QuasiLinearDae + ?Sized>(problem: &P) -> Vec<bool> {
    let mut d = vec![false; problem.n_vars()];
    for (_, c) in problem.mass_pattern() {
        if let Some(x) = d.get_mut(c) {
            *x = true;
        }
    }
    d
}

/// `(n, n_d, n_g)` of `problem`, refused when it has no unknowns or fewer
/// equations than unknowns (the integrators' common precondition).
pub(crate) fn checked_dimensions<P: QuasiLinearDae + ?Sized>(
    problem: &P,
) -> Result<(usize, usize, usize), crate::SolveError> {
    let (n, n_d, n_g) = (problem.n_vars(), problem.n_diff(), problem.n_constraints());
    if n == 0 {
        return Err(crate::SolveError::InvalidProblem("no unknowns".into()));
    }
    if n_d + n_g < n {
        return Err(crate::SolveError::InvalidProblem(format!(
            "underdetermined: {} equations for {n} unknowns",
            n_d + n_g
        )));
    }
    Ok((n, n_d, n_g))
}

/// Refuses tolerances that are not positive and finite.
pub(crate) fn check_tolerances(rtol: f64, atol: f64) -> Result<(), crate::SolveError> {
    let bad = |x: f64| !(x.is_finite() && x > 0.0);
    if bad(rtol) || bad(atol) {
        return Err(crate::SolveError::InvalidOptions(format!(
            "tolerances must be positive and finite (rtol = {rtol}, atol = {atol})"
        )));
    }
    Ok(())
}

/// Refuses an initial value `z0` without `n` entries and a time span that
/// is not a finite `t0 < t_end` (the arguments of an `integrate`).
pub(crate) fn check_span(
    n: usize,
    t0: f64,
    z0: &[f64],
    t_end: f64,
) -> Result<(), crate::SolveError> {
    if z0.len() != n {
        return Err(crate::SolveError::InvalidOptions(format!(
            "initial value has {} entries, expected {n}",
            z0.len()
        )));
    }
    if !(t0.is_finite() && t_end.is_finite() && t_end > t0) {
        return Err(crate::SolveError::InvalidOptions(format!(
            "need finite t0 < t_end (got {t0} and {t_end})"
        )));
    }
    Ok(())
}
