//! The projection of output points onto the constraints
//! ([`FormProblem::project_onto_constraints`]): the dense output between
//! step ends, projected with the least Euclidean change by a simplified
//! Gauss–Newton iteration (hairer-wanner-II VII.2, projection onto the
//! manifold with simplified Newton iterations): the constraint Jacobian
//! is evaluated and factorised once per point, at the dense output, and
//! reused for the following corrections; a fresh factorisation is made
//! only where the residual does not contract.
//!
//! The dense output lies within a step's error of the manifold, so the
//! first correction leaves a residual of the order of the curvature times
//! the square of that distance and the next correction with the same
//! factorisation removes it: the point is that of the full Gauss–Newton
//! iteration to round-off. Where the contraction predicts otherwise
//! (a point far from the manifold), the Jacobian is factorised afresh. The work arrays
//! live in the problem; a projection allocates nothing once they have
//! reached the problem's size (sparse systems, above [`SPARSE_THRESHOLD`]
//! unknowns, reuse the analysed least-norm system of [`MinNormCache`]).

use super::{CachedMinNorm, FormProblem, MinNormCache, max_abs};
use daec_regularize::{LeastNormFactor, Matrix};
use daec_solve::{MinNormSystem, QuasiLinearDae, SPARSE_THRESHOLD};
use std::cell::RefMut;

/// The corrections a projection of an output point makes at most.
const MAX_CORRECTIONS: usize = 3;

/// How far (relative to the point's largest entry) the point of the
/// simplified iteration may be predicted to lie from that of the full
/// one. The contraction `ρ = |H(z₁)| / |H(z₀)|` of a correction `Δ₁`
/// estimates the relative change of the Jacobian over it, so the next
/// correction, of size about `ρ·|Δ₁|`, is off by about `ρ²·|Δ₁|` with the
/// kept factorisation: it is kept while that is below `AGREEMENT`, else
/// the Jacobian is evaluated and factorised afresh (a full Gauss–Newton
/// step).
const AGREEMENT: f64 = 1e-14;

/// The work arrays of the projection of output points.
#[derive(Debug, Clone)]
pub(super) struct OutputWork {
    /// `H(t, z)`.
    g: Vec<f64>,
    /// The values of `∂H/∂z` in the order of its pattern.
    jac: Vec<f64>,
    /// `∂H/∂z` dense (`n_g × n`), below the sparse threshold.
    matrix: Matrix,
    /// Its least-norm factorisation.
    factor: LeastNormFactor,
    /// `−H(t, z)` and the correction.
    rhs: Vec<f64>,
    delta: Vec<f64>,
    /// The point before a correction (restored when it does not reduce
    /// the residual).
    old: Vec<f64>,
    /// All constraint rows and all unknowns (the key of the sparse
    /// system in [`MinNormCache`]).
    rows: Vec<usize>,
    cols: Vec<usize>,
}

impl Default for OutputWork {
    fn default() -> Self {
        Self {
            g: Vec::new(),
            jac: Vec::new(),
            matrix: Matrix::zeros(0, 0),
            factor: LeastNormFactor::default(),
            rhs: Vec::new(),
            delta: Vec::new(),
            old: Vec::new(),
            rows: Vec::new(),
            cols: Vec::new(),
        }
    }
}

impl MinNormCache {
    /// The sparse least-norm system of the subsystem of the constraint
    /// rows `rows` and the unknowns `cols`, analysed for the entries at
    /// `at()` (renumbered) when the subsystem is not the one of the last
    /// call. `None` when the entries do not fit the subsystem.
    pub(super) fn analysed(
        &self,
        (rows, cols): (&[usize], &[usize]),
        at: impl FnOnce() -> Vec<(usize, usize)>,
    ) -> Option<RefMut<'_, MinNormSystem>> {
        let mut cache = self.solver.borrow_mut();
        if !matches!(&*cache, Some(c) if c.rows == rows && c.cols == cols) {
            let solver = MinNormSystem::new(rows.len(), cols.len(), &at())?;
            *cache = Some(CachedMinNorm {
                rows: rows.to_vec(),
                cols: cols.to_vec(),
                solver,
            });
            self.analyses.set(self.analyses.get() + 1);
        }
        RefMut::filter_map(cache, |c| c.as_mut().map(|c| &mut c.solver)).ok()
    }
}

impl FormProblem {
    /// Projects the output point `z` onto all constraint rows
    /// `H(t, ·) = 0` with the least Euclidean change (see the module):
    /// at most [`MAX_CORRECTIONS`] corrections `Δ = −G⁺ H`, `G = ∂H/∂z`
    /// factorised at the first point and again only after a correction
    /// whose contraction predicts a point further than [`AGREEMENT`] from
    /// that of the full iteration; a correction that does not reduce the
    /// residual is undone (and retried with a fresh factorisation when the
    /// factorisation was a kept one). Returns the final max-norm residual.
    pub(super) fn project_output(&self, t: f64, z: &mut [f64]) -> f64 {
        let Ok(mut work) = self.output_work.try_borrow_mut() else {
            return self.project(t, z, None, None, None);
        };
        let w = &mut *work;
        let (m, n) = (self.n_g, self.n);
        if z.len() != n {
            return self.project(t, z, None, None, None);
        }
        w.g.resize(m, 0.0);
        self.constraints(t, z, &mut w.g);
        let mut r = max_abs(&w.g);
        let scale = z.iter().fold(1.0f64, |a, v| a.max(v.abs()));
        let converged = |r: f64| r <= 4.0 * f64::EPSILON * scale;
        if m == 0 || n == 0 || converged(r) || !r.is_finite() {
            return r;
        }
        let mut fresh = true;
        for _ in 0..MAX_CORRECTIONS {
            if fresh && !self.factor_output_jacobian(t, z, w) {
                return r;
            }
            w.rhs.clear();
            w.rhs.extend(w.g.iter().map(|v| -v));
            w.delta.resize(n, 0.0);
            if !self.solve_output_correction(w) {
                return r;
            }
            w.old.clear();
            w.old.extend_from_slice(z);
            for (zk, d) in z.iter_mut().zip(&w.delta) {
                *zk += d;
            }
            self.constraints(t, z, &mut w.g);
            let next = max_abs(&w.g);
            if next.partial_cmp(&r) != Some(std::cmp::Ordering::Less) {
                z.copy_from_slice(&w.old);
                if fresh {
                    return r;
                }
                // the kept factorisation no longer serves: a fresh one
                self.constraints(t, z, &mut w.g);
                fresh = true;
                continue;
            }
            let rho = next / r;
            let moved = w.delta.iter().fold(0.0f64, |a, d| a.max(d.abs()));
            fresh = rho * rho * moved > AGREEMENT * scale;
            r = next;
            if converged(r) {
                break;
            }
        }
        r
    }

    /// Evaluates `∂H/∂z` at `(t, z)` into `w` and factorises it for
    /// [`FormProblem::solve_output_correction`]: dense
    /// ([`LeastNormFactor`]) up to [`SPARSE_THRESHOLD`] unknowns, else the
    /// sparse augmented system. `false` when it is singular even
    /// regularised.
    fn factor_output_jacobian(&self, t: f64, z: &[f64], w: &mut OutputWork) -> bool {
        let (m, n) = (self.n_g, self.n);
        w.jac.resize(self.jg.pattern.len(), 0.0);
        self.constraint_jacobian_values(t, z, &mut w.jac);
        if n > SPARSE_THRESHOLD {
            if w.rows.len() != m || w.cols.len() != n {
                w.rows = (0..m).collect();
                w.cols = (0..n).collect();
            }
            let pattern = &self.jg.pattern;
            return self
                .min_norm
                .analysed((&w.rows, &w.cols), || pattern.clone())
                .is_some_and(|mut s| s.factor(&w.jac));
        }
        let g = &mut w.matrix;
        (g.rows, g.cols) = (m, n);
        g.data.clear();
        g.data.resize(m * n, 0.0);
        for (&(i, j), &v) in self.jg.pattern.iter().zip(&w.jac) {
            g.data[i * n + j] += v;
        }
        w.factor.factor(g)
    }

    /// The least-norm correction `w.delta` of `G Δ = w.rhs` with the
    /// factorisation of [`FormProblem::factor_output_jacobian`]. `false`
    /// when there is none.
    fn solve_output_correction(&self, w: &mut OutputWork) -> bool {
        if self.n <= SPARSE_THRESHOLD {
            return w.factor.solve(&w.rhs, &mut w.delta);
        }
        let pattern = &self.jg.pattern;
        let solved = self
            .min_norm
            .analysed((&w.rows, &w.cols), || pattern.clone())
            .and_then(|mut s| s.solve_factored(&w.rhs));
        match solved {
            Some(delta) if delta.len() == w.delta.len() => {
                w.delta.copy_from_slice(&delta);
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use daec_regularize::{AnalyzeOptions, Form, analyze};

    /// The HiC problem of a model of `models/` and its consistent initial
    /// point.
    fn prepared(path: &str) -> (FormProblem, Vec<f64>) {
        let full = format!("{}/../../models/{path}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(full).unwrap();
        let mut map = daec_diag::SourceMap::new();
        let file = map.add(path, text);
        let parsed = daec_syntax::parse(file, map.source(file));
        let (dae, diags) = daec_model::lower(parsed.model.as_ref().unwrap(), &Default::default());
        let mut dae = dae.unwrap_or_else(|| panic!("{diags:?}"));
        let analysis = analyze(&mut dae, &AnalyzeOptions::default());
        let prepared = crate::prepare_form(&mut dae, &analysis, Form::Hic).unwrap();
        (prepared.problem, prepared.init.z0)
    }

    /// `max |H(t, z)|`.
    fn residual(problem: &FormProblem, t: f64, z: &[f64]) -> f64 {
        let mut g = vec![0.0; problem.n_constraints()];
        problem.constraints(t, z, &mut g);
        max_abs(&g)
    }

    /// `max |a_j − b_j|`.
    fn distance(a: &[f64], b: &[f64]) -> f64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max)
    }

    /// `z0` with every unknown moved by `size·(1 + |z_j|)` times a
    /// pseudo-random factor in [−1, 1] (`seed`): the distance of a dense
    /// output point from the constraints.
    fn off(z0: &[f64], size: f64, seed: u64) -> Vec<f64> {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        z0.iter()
            .map(|v| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let u = (x % 2001) as f64 / 1000.0 - 1.0;
                v + size * (1.0 + v.abs()) * u
            })
            .collect()
    }

    /// The output projection lands where the full Gauss–Newton iteration
    /// (a fresh Jacobian and factorisation at every correction,
    /// `FormProblem::project`) does, to round-off, on the constraints.
    #[test]
    fn the_output_projection_lands_where_full_gauss_newton_does() {
        for path in ["steinbrecher/pendulum.dae", "testset/andrews.dae"] {
            let (problem, z0) = prepared(path);
            assert!(problem.n_constraints() > 0, "{path}");
            let scale = z0.iter().fold(1.0f64, |a, v| a.max(v.abs()));
            for (k, size) in [1e-8, 1e-7, 1e-6, 1e-5, 1e-4].into_iter().enumerate() {
                let start = off(&z0, size, k as u64 + 1);
                let before = residual(&problem, 0.0, &start);
                assert!(before > 0.0, "{path}: {before:e}");
                let mut full = start.clone();
                let r_full = problem.project(0.0, &mut full, None, None, None);
                let mut kept = start.clone();
                let r = problem.project_onto_constraints(0.0, &mut kept);
                assert_eq!(r, residual(&problem, 0.0, &kept), "{path} {size:e}");
                assert!(
                    r <= 1e-13 * scale,
                    "{path} {size:e}: {r:e} (from {before:e})"
                );
                assert!(r_full <= 1e-13 * scale, "{path} {size:e}: {r_full:e}");
                let apart = distance(&full, &kept);
                // (relative to the largest entry: the iteration's own
                // convergence test, 4ε of it)
                assert!(apart <= 1e-12 * scale, "{path} {size:e}: {apart:e} apart");
                // and it moved the point (by about the perturbation)
                let moved = distance(&kept, &start);
                assert!(
                    moved > 0.0 && moved < 100.0 * size * scale,
                    "{path}: {moved:e}"
                );
            }
        }
    }

    /// A point far from the constraints: the projection moves it closer
    /// (fresh factorisations where the kept one stops contracting) and
    /// returns the residual where it stops, exactly.
    #[test]
    fn a_point_far_from_the_constraints_converges_or_reports_its_residual() {
        let (problem, z0) = prepared("steinbrecher/pendulum.dae");
        // 1 % off: converges as the full iteration does
        let mut z = off(&z0, 1e-2, 7);
        let mut full = z.clone();
        problem.project(0.0, &mut full, None, None, None);
        let r = problem.project_onto_constraints(0.0, &mut z);
        assert!(r < 1e-12, "{r:e}");
        assert_eq!(r, residual(&problem, 0.0, &z));
        let apart = distance(&full, &z);
        assert!(apart < 1e-12, "{apart:e}");
        // far: three corrections do not reach the constraints; the
        // residual reported is the one at the point returned
        let mut z: Vec<f64> = z0.iter().map(|v| 3.0 * v + 0.7).collect();
        let before = residual(&problem, 0.0, &z);
        let r = problem.project_onto_constraints(0.0, &mut z);
        assert!(z.iter().all(|v| v.is_finite()), "{z:?}");
        assert_eq!(r, residual(&problem, 0.0, &z));
        assert!(r < before, "{r:e} from {before:e}");
    }

    /// A singular constraint Jacobian (the pendulum at the origin: every
    /// row's gradient vanishes or repeats), a point of NaNs and one of
    /// infinities: no panic, a finite point or the input back, and the
    /// residual reported.
    #[test]
    fn a_singular_constraint_jacobian_does_not_panic() {
        let (problem, z0) = prepared("steinbrecher/pendulum.dae");
        let mut z = vec![0.0; z0.len()];
        let r = problem.project_onto_constraints(0.0, &mut z);
        assert_eq!(r, residual(&problem, 0.0, &z));
        assert!(
            r.is_finite() && z.iter().all(|v| v.is_finite()),
            "{r} {z:?}"
        );
        for bad in [f64::NAN, f64::INFINITY] {
            let mut z = z0.clone();
            z[0] = bad;
            let r = problem.project_onto_constraints(0.0, &mut z);
            assert_eq!(r, f64::INFINITY);
            assert_eq!(z[1..], z0[1..]);
        }
    }
}
