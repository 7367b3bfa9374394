//! The output of an integration step, shared by every integrator of this
//! crate: the accepted [`Step`] handed to the observer with its dense
//! output, the observer's answer [`StepControl`], and the work counters
//! [`Stats`].
//!
//! The dense output is the collocation polynomial of the 3-stage Radau IIA
//! method (Hairer & Wanner, Solving ODEs II, IV.8, (8.23)) in Newton form
//! at the nodes [`DENSE_NODES`]; the other integrators (e.g.
//! [`crate::herk`]) present their interpolants in the same form.

use crate::tableau::{C1, C2};

/// The nodes `s = (t − t_end)/h` of the Newton form of the cubic a
/// [`Step`] holds: the step end and the Radau IIA collocation points
/// `c₂`, `c₁` (Solving ODEs II, IV.8, (8.23)) and the step start.
pub const DENSE_NODES: [f64; 4] = [0.0, C2 - 1.0, C1 - 1.0, -1.0];

/// Work counters of an integration (the quantities RADAU5 reports, and a
/// few of this crate's own). Every integrator of the crate counts in it;
/// a counter an integrator has no use for stays zero.
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
    /// [`Options::max_steps`](crate::Options::max_steps) limits.
    pub newton_failures: usize,
    /// Evaluations of the constraints alone (projection of step end points).
    pub constraint_evals: usize,
    /// Changes of the equation selection of an overdetermined system
    /// (after the first Jacobian evaluation).
    pub selection_changes: usize,
    /// Equation selections computed for an overdetermined system (on the
    /// dense path at the Jacobians where none is kept, see
    /// [`Options::keep_selection_step_ratio`](crate::Options::keep_selection_step_ratio);
    /// on the sparse path once, and again after a singular factorisation
    /// or a Newton failure).
    pub selections: usize,
    /// Accepted steps whose end point the problem projected
    /// ([`QuasiLinearDae::project_step`](crate::QuasiLinearDae::project_step)).
    pub projections: usize,
    /// LU decompositions done by the sparse LU (equal to
    /// [`lu_decompositions`](Self::lu_decompositions) when the sparse path
    /// is taken, see [`Options::linear_solver`](crate::Options::linear_solver)).
    pub sparse_lu_decompositions: usize,
}

impl std::ops::AddAssign for Stats {
    /// Adds every counter of `other` (the work of several integrations,
    /// e.g. across the restarts of a simulation).
    fn add_assign(&mut self, other: Stats) {
        self.steps_accepted += other.steps_accepted;
        self.steps_rejected += other.steps_rejected;
        self.residual_evals += other.residual_evals;
        self.jacobian_evals += other.jacobian_evals;
        self.lu_decompositions += other.lu_decompositions;
        self.newton_iterations += other.newton_iterations;
        self.newton_failures += other.newton_failures;
        self.constraint_evals += other.constraint_evals;
        self.selection_changes += other.selection_changes;
        self.selections += other.selections;
        self.projections += other.projections;
        self.sparse_lu_decompositions += other.sparse_lu_decompositions;
    }
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
    /// The `4n` coefficients of the cubic of [`dense`](Self::dense).
    pub(crate) cont: &'a [f64],
    /// `g(t, z)` when the integrator evaluated the constraints at the end
    /// point itself (spares the observer an evaluation).
    pub(crate) constraints: Option<&'a [f64]>,
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

/// The collocation polynomial of the last step (Solving ODEs II, IV.8,
/// (8.23); `cont` as in [`Step`]) minus its end value, at `s = (t − t_n)/h`
/// for component `i` of `n`, and its derivative with respect to `s`.
#[inline(always)]
pub(crate) fn collocation_increment(cont: &[f64], n: usize, i: usize, s: f64) -> (f64, f64) {
    let (c1m1, c2m1) = (C1 - 1.0, C2 - 1.0);
    let (ak1, ak2, ak3) = (cont[n + i], cont[2 * n + i], cont[3 * n + i]);
    let inner = ak2 + (s - c1m1) * ak3;
    let outer = ak1 + (s - c2m1) * inner;
    (s * outer, outer + s * (inner + (s - c2m1) * ak3))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tableau::A;

    #[test]
    fn the_dense_nodes_are_the_radau_nodes_seen_from_the_step_end() {
        // c_i = Σ_j a_ij: the nodes of the Radau IIA tableau
        let c: Vec<f64> = A.iter().map(|row| row.iter().sum()).collect();
        assert!((DENSE_NODES[1] - (c[1] - 1.0)).abs() < 1e-15);
        assert!((DENSE_NODES[2] - (c[0] - 1.0)).abs() < 1e-15);
        assert_eq!([DENSE_NODES[0], DENSE_NODES[3]], [0.0, -1.0]);
        assert!((c[2] - 1.0).abs() < 1e-15);
    }

    #[test]
    fn the_dense_output_interpolates_the_cubic_of_its_coefficients() {
        // Newton form at the nodes s_k of p(s) = 1 + 2s + 3s² + 4s³ (one
        // component, step [0, 2])
        let p = |s: f64| 1.0 + s * (2.0 + s * (3.0 + 4.0 * s));
        let [s0, s1, s2, s3] = DENSE_NODES;
        let (v0, v1, v2, v3) = (p(s0), p(s1), p(s2), p(s3));
        let d01 = (v1 - v0) / (s1 - s0);
        let d12 = (v2 - v1) / (s2 - s1);
        let d23 = (v3 - v2) / (s3 - s2);
        let d012 = (d12 - d01) / (s2 - s0);
        let d0123 = ((d23 - d12) / (s3 - s1) - d012) / (s3 - s0);
        let cont = [v0, d01, d012, d0123];
        let step = Step::from_parts(0.0, 2.0, &[0.0], &[0.0], &cont);
        let mut out = [0.0];
        for t in [0.0, 0.3, 1.0, 1.7, 2.0] {
            step.dense(t, &mut out);
            let s = (t - 2.0) / 2.0;
            assert!(
                (out[0] - p(s)).abs() < 1e-12,
                "t = {t}: {} vs {}",
                out[0],
                p(s)
            );
            let one = step.dense_component(t, 0).unwrap();
            assert!((one - out[0]).abs() < 1e-14, "t = {t}");
            step.dense_derivative(t, &mut out);
            let dp = 2.0 + s * (6.0 + 12.0 * s);
            assert!((out[0] - dp / 2.0).abs() < 1e-11, "t = {t}");
        }
        assert_eq!(step.dense_component(0.5, 1), None);
    }

    #[test]
    fn stats_add_every_counter() {
        let one = Stats {
            steps_accepted: 1,
            steps_rejected: 2,
            residual_evals: 3,
            jacobian_evals: 4,
            lu_decompositions: 5,
            newton_iterations: 6,
            newton_failures: 7,
            constraint_evals: 8,
            selection_changes: 9,
            selections: 10,
            projections: 11,
            sparse_lu_decompositions: 12,
        };
        let mut sum = one;
        sum += one;
        assert_eq!(sum.steps_accepted, 2);
        assert_eq!(sum.selections, 20);
        assert_eq!(sum.sparse_lu_decompositions, 24);
        let mut zero = Stats::default();
        zero += one;
        assert_eq!(zero, one);
    }
}
