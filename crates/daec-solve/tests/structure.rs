//! Integrator paths beyond the paper examples: a state-dependent mass
//! matrix `E(z)` (the `(∂E/∂z)·ż` Jacobian term), a system large enough for
//! the `faer` LU path, and a structurally singular iteration matrix.

use daec_solve::{FAER_THRESHOLD, LinearSolver, Options, QuasiLinearDae, SolveError, solve};

fn opts(tol: f64) -> Options {
    Options {
        rtol: tol,
        atol: tol,
        ..Options::default()
    }
}

/// `(1 + y²)·y' = 1`, `y(0) = 0`: the exact solution satisfies
/// `y + y³/3 = t`.
struct NonlinearMass;

impl QuasiLinearDae for NonlinearMass {
    fn n_vars(&self) -> usize {
        1
    }
    fn n_diff(&self) -> usize {
        1
    }
    fn n_constraints(&self) -> usize {
        0
    }
    fn diff_residual(&self, _t: f64, z: &[f64], zd: &[f64], out: &mut [f64]) {
        out[0] = (1.0 + z[0] * z[0]) * zd[0] - 1.0;
    }
    fn constraints(&self, _t: f64, _z: &[f64], _out: &mut [f64]) {}
    fn mass_pattern(&self) -> Vec<(usize, usize)> {
        vec![(0, 0)]
    }
    fn mass_values(&self, _t: f64, z: &[f64], out: &mut [f64]) {
        out[0] = 1.0 + z[0] * z[0];
    }
    fn diff_jacobian_pattern(&self) -> Vec<(usize, usize)> {
        vec![(0, 0)]
    }
    fn diff_jacobian_values(&self, _t: f64, z: &[f64], zd: &[f64], out: &mut [f64]) {
        out[0] = 2.0 * z[0] * zd[0];
    }
    fn constraint_jacobian_pattern(&self) -> Vec<(usize, usize)> {
        vec![]
    }
    fn constraint_jacobian_values(&self, _t: f64, _z: &[f64], _out: &mut [f64]) {}
}

#[test]
fn state_dependent_mass_matrix_is_integrated_accurately() {
    // every accepted step (no output grid): step-end values, order 5
    let out = solve(&NonlinearMass, 0.0, &[0.0], 5.0, &[], opts(1e-9)).unwrap();
    assert_eq!(*out.t.last().unwrap(), 5.0);
    // (with a stale mass matrix in the error estimate the step size collapses)
    assert!(out.t.len() < 200, "{:?}", out.stats);
    for (t, z) in out.t.iter().zip(&out.z) {
        let y = z[0];
        assert!((y + y * y * y / 3.0 - t).abs() < 1e-8, "t={t}: y={y}");
    }
}

/// `n` decoupled decays `y_i' = −λ_i y_i` plus `n` algebraic copies
/// `0 = x_i − y_i` (2n unknowns, above the faer threshold).
struct Decays {
    n: usize,
}

impl Decays {
    fn rate(i: usize) -> f64 {
        0.1 * (i + 1) as f64
    }
}

impl QuasiLinearDae for Decays {
    fn n_vars(&self) -> usize {
        2 * self.n
    }
    fn n_diff(&self) -> usize {
        self.n
    }
    fn n_constraints(&self) -> usize {
        self.n
    }
    fn diff_residual(&self, _t: f64, z: &[f64], zd: &[f64], out: &mut [f64]) {
        for i in 0..self.n {
            out[i] = zd[i] + Self::rate(i) * z[i];
        }
    }
    fn constraints(&self, _t: f64, z: &[f64], out: &mut [f64]) {
        for i in 0..self.n {
            out[i] = z[self.n + i] - z[i];
        }
    }
    fn mass_pattern(&self) -> Vec<(usize, usize)> {
        (0..self.n).map(|i| (i, i)).collect()
    }
    fn mass_values(&self, _t: f64, _z: &[f64], out: &mut [f64]) {
        out.fill(1.0);
    }
    fn diff_jacobian_pattern(&self) -> Vec<(usize, usize)> {
        (0..self.n).map(|i| (i, i)).collect()
    }
    fn diff_jacobian_values(&self, _t: f64, _z: &[f64], _zd: &[f64], out: &mut [f64]) {
        for (i, o) in out.iter_mut().enumerate() {
            *o = Self::rate(i);
        }
    }
    fn constraint_jacobian_pattern(&self) -> Vec<(usize, usize)> {
        (0..self.n)
            .flat_map(|i| [(i, self.n + i), (i, i)])
            .collect()
    }
    fn constraint_jacobian_values(&self, _t: f64, _z: &[f64], out: &mut [f64]) {
        for pair in out.chunks_mut(2) {
            pair.copy_from_slice(&[1.0, -1.0]);
        }
    }
}

#[test]
fn large_system_goes_through_the_faer_lu_and_matches_exp() {
    let p = Decays { n: 81 };
    assert!(2 * p.n > FAER_THRESHOLD);
    let z0 = vec![1.0; 2 * p.n];
    let dense = Options {
        linear_solver: LinearSolver::Dense,
        ..opts(1e-9)
    };
    let out = solve(&p, 0.0, &z0, 3.0, &[3.0], dense).unwrap();
    for i in 0..p.n {
        let ex = (-Decays::rate(i) * 3.0).exp();
        assert!(
            (out.z[0][i] - ex).abs() < 1e-8,
            "y{i}: {} vs {ex}",
            out.z[0][i]
        );
        assert!((out.z[0][p.n + i] - ex).abs() < 1e-8);
    }
}

/// `y' = −y`, `0 = y − e^{−t}` with a second unknown `u` that appears
/// nowhere: the iteration matrix has a zero column.
struct ZeroColumn;

impl QuasiLinearDae for ZeroColumn {
    fn n_vars(&self) -> usize {
        2
    }
    fn n_diff(&self) -> usize {
        1
    }
    fn n_constraints(&self) -> usize {
        1
    }
    fn diff_residual(&self, _t: f64, z: &[f64], zd: &[f64], out: &mut [f64]) {
        out[0] = zd[0] + z[0];
    }
    fn constraints(&self, t: f64, z: &[f64], out: &mut [f64]) {
        out[0] = z[0] - (-t).exp();
    }
    fn mass_pattern(&self) -> Vec<(usize, usize)> {
        vec![(0, 0)]
    }
    fn mass_values(&self, _t: f64, _z: &[f64], out: &mut [f64]) {
        out[0] = 1.0;
    }
    fn diff_jacobian_pattern(&self) -> Vec<(usize, usize)> {
        vec![(0, 0)]
    }
    fn diff_jacobian_values(&self, _t: f64, _z: &[f64], _zd: &[f64], out: &mut [f64]) {
        out[0] = 1.0;
    }
    fn constraint_jacobian_pattern(&self) -> Vec<(usize, usize)> {
        vec![(0, 0)]
    }
    fn constraint_jacobian_values(&self, _t: f64, _z: &[f64], out: &mut [f64]) {
        out[0] = 1.0;
    }
}

#[test]
fn singular_iteration_matrix_names_the_variable() {
    let f = solve(&ZeroColumn, 0.0, &[1.0, 0.0], 1.0, &[], opts(1e-6)).unwrap_err();
    assert_eq!(
        f.error,
        SolveError::SingularMatrix {
            t: 0.0,
            h: 1e-6 / 16.0,
            variable: 1
        }
    );
    assert!(f.partial.t.is_empty());
}

#[test]
fn bad_patterns_are_rejected() {
    struct BadPattern;
    impl QuasiLinearDae for BadPattern {
        fn n_vars(&self) -> usize {
            1
        }
        fn n_diff(&self) -> usize {
            1
        }
        fn n_constraints(&self) -> usize {
            0
        }
        fn diff_residual(&self, _t: f64, _z: &[f64], _zd: &[f64], _out: &mut [f64]) {}
        fn constraints(&self, _t: f64, _z: &[f64], _out: &mut [f64]) {}
        fn mass_pattern(&self) -> Vec<(usize, usize)> {
            vec![(0, 3)]
        }
        fn mass_values(&self, _t: f64, _z: &[f64], _out: &mut [f64]) {}
        fn diff_jacobian_pattern(&self) -> Vec<(usize, usize)> {
            vec![]
        }
        fn diff_jacobian_values(&self, _t: f64, _z: &[f64], _zd: &[f64], _out: &mut [f64]) {}
        fn constraint_jacobian_pattern(&self) -> Vec<(usize, usize)> {
            vec![]
        }
        fn constraint_jacobian_values(&self, _t: f64, _z: &[f64], _out: &mut [f64]) {}
    }
    let err = daec_solve::Radau5::new(&BadPattern, Options::default())
        .err()
        .unwrap();
    assert_eq!(
        err,
        SolveError::InvalidProblem("mass pattern entry (0, 3) outside 1 × 1".into())
    );
}

/// [`Decays`] declaring its (constant, identity) mass matrix constant, and
/// counting the evaluations of `E`.
struct ConstantMass {
    inner: Decays,
    mass_evals: std::cell::Cell<usize>,
}

impl QuasiLinearDae for ConstantMass {
    fn n_vars(&self) -> usize {
        self.inner.n_vars()
    }
    fn n_diff(&self) -> usize {
        self.inner.n_diff()
    }
    fn n_constraints(&self) -> usize {
        self.inner.n_constraints()
    }
    fn diff_residual(&self, t: f64, z: &[f64], zd: &[f64], out: &mut [f64]) {
        self.inner.diff_residual(t, z, zd, out)
    }
    fn constraints(&self, t: f64, z: &[f64], out: &mut [f64]) {
        self.inner.constraints(t, z, out)
    }
    fn mass_pattern(&self) -> Vec<(usize, usize)> {
        self.inner.mass_pattern()
    }
    fn mass_values(&self, t: f64, z: &[f64], out: &mut [f64]) {
        self.mass_evals.set(self.mass_evals.get() + 1);
        self.inner.mass_values(t, z, out)
    }
    fn mass_is_constant(&self) -> bool {
        true
    }
    fn diff_jacobian_pattern(&self) -> Vec<(usize, usize)> {
        self.inner.diff_jacobian_pattern()
    }
    fn diff_jacobian_values(&self, t: f64, z: &[f64], zd: &[f64], out: &mut [f64]) {
        self.inner.diff_jacobian_values(t, z, zd, out)
    }
    fn constraint_jacobian_pattern(&self) -> Vec<(usize, usize)> {
        self.inner.constraint_jacobian_pattern()
    }
    fn constraint_jacobian_values(&self, t: f64, z: &[f64], out: &mut [f64]) {
        self.inner.constraint_jacobian_values(t, z, out)
    }
}

#[test]
fn a_constant_mass_matrix_is_evaluated_once_with_the_same_results() {
    let z0 = vec![1.0; 6];
    let plain = solve(&Decays { n: 3 }, 0.0, &z0, 3.0, &[1.0, 3.0], opts(1e-8)).unwrap();
    let p = ConstantMass {
        inner: Decays { n: 3 },
        mass_evals: std::cell::Cell::new(0),
    };
    let constant = solve(&p, 0.0, &z0, 3.0, &[1.0, 3.0], opts(1e-8)).unwrap();
    assert_eq!(p.mass_evals.get(), 1);
    assert!(plain.stats.steps_accepted > 3);
    assert_eq!(plain.stats, constant.stats);
    assert_eq!(plain.z, constant.z);
}
