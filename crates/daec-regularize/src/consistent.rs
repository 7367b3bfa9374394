//! Consistent points: the start values projected onto the constraints
//! `0 = H(t0, z)` (and the user's initial equations) with the least
//! weighted change, keeping `fixed` starts. Used by the success check of
//! the Σ-method (steinbrecher2016, Algorithm 2.1 step 6).

// Index loops read best in matrix code.
#![allow(clippy::needless_range_loop)]
use crate::block_newton::BlockNewton;
use crate::dense::{Matrix, least_norm_solve};
use crate::gradients::{EquationGradients, LeafPositions};
use daec_expr::{Env, ExprId, ExprPool, ParamId};
use daec_solve::MinNormSystem;

/// The point `(t, z, ż, …)` as an [`Env`] for evaluation.
pub struct Point<'a> {
    /// Unknowns.
    pub z: &'a [f64],
    /// Values of `z_j^(l)` for `l ≥ 1` (missing ones are 0).
    pub derivative: &'a dyn Fn(u32, u32) -> Option<f64>,
    /// Parameter values.
    pub params: &'a [f64],
    /// Time.
    pub t: f64,
}

impl Env for Point<'_> {
    fn var(&self, unknown: u32, order: u32) -> f64 {
        if order == 0 {
            self.z.get(unknown as usize).copied().unwrap_or(f64::NAN)
        } else {
            (self.derivative)(unknown, order).unwrap_or(0.0)
        }
    }
    fn param(&self, p: ParamId) -> f64 {
        self.params.get(p.0 as usize).copied().unwrap_or(f64::NAN)
    }
    fn time(&self) -> f64 {
        self.t
    }
}

/// The outcome of the projection.
#[derive(Clone, Debug, PartialEq)]
pub struct ConsistentPoint {
    /// The point found (the last iterate when not converged).
    pub z: Vec<f64>,
    /// Max-norm of the equations at the start values.
    pub initial_residual: f64,
    /// Max-norm of the equations at `z`.
    pub residual: f64,
    /// The equation with the largest residual at `z`.
    pub worst_equation: Option<usize>,
    /// Gauss–Newton iterations used.
    pub iterations: usize,
    /// Whether the residual reached the tolerance.
    pub converged: bool,
}

/// Options of [`consistent_point`].
#[derive(Clone, Debug)]
pub struct ProjectionOptions {
    /// Residual tolerance in the max-norm, scaled by `1 + max|x|`.
    pub tol: f64,
    /// Iteration limit.
    pub max_iter: usize,
}

impl Default for ProjectionOptions {
    fn default() -> Self {
        ProjectionOptions {
            tol: 1e-10,
            max_iter: 50,
        }
    }
}

/// Projects `start` onto `0 = equations(t, x)`: Gauss–Newton steps of
/// least weighted norm, `min ‖W(x − start)‖ s.t. H(x) = 0`, with the
/// `fixed` entries held. `x` are the values of the `state` leaves
/// `z_j^(l)` (order 0 for first-order DAEs); the equations must contain no
/// other unknown leaves.
#[allow(clippy::too_many_arguments)]
pub fn consistent_point(
    pool: &mut ExprPool,
    equations: &[ExprId],
    state: &[(u32, u32)],
    start: &[f64],
    fixed: &[bool],
    weights: &[f64],
    params: &[f64],
    t: f64,
    options: &ProjectionOptions,
) -> ConsistentPoint {
    let n = start.len();
    let free: Vec<usize> = (0..n)
        .filter(|&j| !fixed.get(j).copied().unwrap_or(false))
        .collect();
    let position = LeafPositions::new(state);
    let mut col_of: Vec<Option<usize>> = vec![None; n];
    for (k, &j) in free.iter().enumerate() {
        col_of[j] = Some(k);
    }
    // The equations' values and Jacobian entries (row, free column) by
    // reverse-mode differentiation of each equation (no derivative
    // expressions: linear in the size of the equations). Each iterate's
    // equations are evaluated once, keeping their node values; the
    // backward pass for the Jacobian runs only where another step is
    // taken from the iterate (not at the last one).
    let mut compiled = EquationGradients::new(pool, equations, |j, l| position.get(j, l));
    let eqs = 0..equations.len();
    let max_norm = |r: &[f64]| {
        r.iter().fold(0.0f64, |m, x| {
            if x.is_nan() {
                f64::INFINITY
            } else {
                m.max(x.abs())
            }
        })
    };
    let mut z = start.to_vec();
    let m = equations.len();
    let mut jv: Vec<(usize, usize, f64)> = Vec::new();
    let mut r = Vec::new();
    compiled.eval_kept(pool, eqs.clone(), &z, params, t, &mut r);
    let initial_residual = max_norm(&r);
    let w2inv: Vec<f64> = free
        .iter()
        .map(|&j| {
            let w = weights.get(j).copied().unwrap_or(1.0);
            1.0 / (w * w)
        })
        .collect();
    let mut iterations = 0;
    let mut system: Option<StepSystem> = None;
    // The tolerance scales with the size of the values (round-off in
    // constraints of large values is larger).
    let tol_at = |x: &[f64]| options.tol * (1.0 + x.iter().fold(0.0f64, |m, v| m.max(v.abs())));
    while max_norm(&r) > tol_at(&z) && iterations < options.max_iter && m > 0 && !free.is_empty() {
        iterations += 1;
        jv.clear();
        compiled.gradients_kept(pool, &mut |i, p, d| {
            if let Some(k) = col_of[p] {
                jv.push((i, k, d));
            }
        });
        // y = W(e + Δ) of least norm with B y = J e − r, B = J W⁻¹
        // (QR of Bᵀ); Δ = W⁻¹ y − e, e = z − start. Rank-deficient J (a
        // redundant constraint): regularised normal equations instead.
        let e: Vec<f64> = free.iter().map(|&j| z[j] - start[j]).collect();
        let winv: Vec<f64> = w2inv.iter().map(|x| x.sqrt()).collect();
        let delta = if free.len() > SPARSE_MIN_NORM_FROM {
            // Large systems: the sparse LU of J when it is square, else
            // the sparse augmented system (the dense QR is O(m²n)). The
            // pattern of J is the same at every step: its ordering and
            // symbolic factorisation are computed once.
            if system.is_none() {
                let pairs: Vec<(usize, usize)> = jv.iter().map(|&(i, k, _)| (i, k)).collect();
                system = StepSystem::new(m, free.len(), &pairs);
            }
            system
                .as_mut()
                .and_then(|s| s.step(m, free.len(), &jv, &winv, &e, &r))
        } else {
            dense_min_norm_step(m, free.len(), &jv, &winv, &e, &r)
                .map(|y| (0..free.len()).map(|k| winv[k] * y[k] - e[k]).collect())
        };
        let Some(delta) = delta else { break };
        let mut step_norm = 0.0f64;
        for (k, &j) in free.iter().enumerate() {
            step_norm = step_norm.max(delta[k].abs());
            z[j] += delta[k];
        }
        compiled.eval_kept(pool, eqs.clone(), &z, params, t, &mut r);
        if !step_norm.is_finite() {
            break;
        }
    }
    let residual = max_norm(&r);
    let converged = residual <= tol_at(&z);
    let worst_equation = r
        .iter()
        .enumerate()
        .filter(|(_, x)| x.is_nan() || x.abs() > 0.0)
        .max_by(|a, b| {
            a.1.abs()
                .partial_cmp(&b.1.abs())
                .unwrap_or(std::cmp::Ordering::Greater)
        })
        .map(|(i, _)| i);
    ConsistentPoint {
        z,
        initial_residual,
        residual,
        worst_equation,
        iterations,
        converged,
    }
}

/// Unknowns from which [`consistent_point`] solves its Gauss–Newton steps
/// with the sparse augmented system
/// (`daec_solve::MinNormSystem`) instead of the dense QR.
const SPARSE_MIN_NORM_FROM: usize = 100;

/// The sparse linear system of the Gauss–Newton steps of
/// [`consistent_point`], analysed once for the pattern of `J`.
enum StepSystem {
    /// As many equations as free unknowns, `J` nonsingular so far: the
    /// Newton step `Δ = −J⁻¹ r`, solved block by block on the block
    /// triangular form of `J` ([`BlockNewton`]). For a square nonsingular
    /// `J` the least-change step `W⁻¹B⁺(J e − r) − e` (`B = J W⁻¹`) is
    /// exactly this step, whatever the weights and the displacement `e`,
    /// so the iterates are those of the augmented system's; the blocks
    /// have a fraction of the augmented system's order and no saddle point
    /// to pivot through (a model whose initial equations fix all its
    /// degrees of freedom, as the pendulum chain's do, is square).
    Blocks(Box<BlockNewton>),
    /// The augmented system of the least-change step
    /// ([`sparse_min_norm_step`]): more equations or unknowns than the
    /// other, or a square `J` found singular.
    MinNorm(Box<MinNormSystem>),
}

impl StepSystem {
    /// The system for the `m × nf` pattern `pairs` of `J` (`None` when an
    /// entry lies outside it).
    fn new(m: usize, nf: usize, pairs: &[(usize, usize)]) -> Option<Self> {
        if m == nf
            && let Some(blocks) = BlockNewton::new(m, pairs)
        {
            return Some(StepSystem::Blocks(Box::new(blocks)));
        }
        MinNormSystem::new(m, nf, pairs).map(|s| StepSystem::MinNorm(Box::new(s)))
    }

    /// The step `Δ` for the entries `jv` of `J` (in the order of the
    /// pattern given to [`new`](Self::new)), the weights' inverses `winv`,
    /// the displacement `e` and the residual `r`. A square `J` that is
    /// singular, or whose step is not finite, turns the system into the
    /// augmented one for this and every later step.
    fn step(
        &mut self,
        m: usize,
        nf: usize,
        jv: &[(usize, usize, f64)],
        winv: &[f64],
        e: &[f64],
        r: &[f64],
    ) -> Option<Vec<f64>> {
        if let StepSystem::Blocks(blocks) = self {
            let values: Vec<f64> = jv.iter().map(|t| t.2).collect();
            let minus_r: Vec<f64> = r.iter().map(|x| -x).collect();
            if let Some(delta) = blocks.solve(&values, &minus_r)
                && delta.iter().all(|v| v.is_finite())
            {
                return Some(delta);
            }
            let pairs: Vec<(usize, usize)> = jv.iter().map(|&(i, k, _)| (i, k)).collect();
            *self = StepSystem::MinNorm(Box::new(MinNormSystem::new(m, nf, &pairs)?));
        }
        match self {
            StepSystem::MinNorm(system) => sparse_min_norm_step(system, m, jv, winv, e, r),
            StepSystem::Blocks(_) => None,
        }
    }
}

/// The sparse Gauss–Newton step of [`consistent_point`], `Δ = W⁻¹(y − t)`
/// with the tangential part `t = W e − B⁺(J e)` (the weighted
/// displacement `e = x − start` less its component normal to the
/// constraints) and the normal part `y = B⁺(B t − r)`, `B = J W⁻¹`, both by
/// the one factorisation of `system`. In exact arithmetic `B t = 0` and
/// this is the step `W⁻¹B⁺(J e − r) − e` of the dense path; in floating
/// point, solving for the whole displacement leaves a linearised residual
/// of order `ε·‖B‖·‖W e‖` (the backward error of the solve), which stalls
/// the iteration once the displacement is large (a chain of 10⁵ links
/// moves by 10⁵ against a tolerance of 10⁻⁵). The second solve removes
/// the normal component of the first one's error: its right-hand side is
/// of the order of the residual, so its error shrinks with the residual
/// and the Newton convergence of the constraints is kept. `None` when the
/// system is singular even regularised.
fn sparse_min_norm_step(
    system: &mut MinNormSystem,
    m: usize,
    jv: &[(usize, usize, f64)],
    winv: &[f64],
    e: &[f64],
    r: &[f64],
) -> Option<Vec<f64>> {
    let bv: Vec<f64> = jv.iter().map(|&(_, k, v)| v * winv[k]).collect();
    if !system.factor(&bv) {
        return None;
    }
    // t = W e − B⁺(B W e) (zero at the start values: one solve there)
    let mut t: Vec<f64> = e.iter().zip(winv).map(|(e, w)| e / w).collect();
    if e.iter().any(|&x| x != 0.0) {
        let mut je = vec![0.0; m];
        for &(i, k, v) in jv {
            je[i] += v * e[k];
        }
        let s = system.solve_factored(&je)?;
        for (t, s) in t.iter_mut().zip(&s) {
            *t -= s;
        }
    }
    let mut rhs: Vec<f64> = r.iter().map(|x| -x).collect();
    for (&(i, k, _), &b) in jv.iter().zip(&bv) {
        rhs[i] += b * t[k];
    }
    let y = system.solve_factored(&rhs)?;
    Some(
        y.iter()
            .zip(&t)
            .zip(winv)
            .map(|((y, t), w)| w * (y - t))
            .collect(),
    )
}

/// The dense Gauss–Newton step of [`consistent_point`]: `y` of least norm
/// with `B y = J e − r`, `B = J W⁻¹` (`jv` the entries of `J`, `winv` the
/// diagonal of `W⁻¹`), by [`least_norm_solve`].
fn dense_min_norm_step(
    m: usize,
    nf: usize,
    jv: &[(usize, usize, f64)],
    winv: &[f64],
    e: &[f64],
    r: &[f64],
) -> Option<Vec<f64>> {
    let mut jm = Matrix::zeros(m, nf);
    for &(i, k, v) in jv {
        jm.set(i, k, jm.get(i, k) + v);
    }
    let rhs: Vec<f64> = (0..m)
        .map(|i| (0..nf).map(|k| jm.get(i, k) * e[k]).sum::<f64>() - r[i])
        .collect();
    let mut bm = Matrix::zeros(m, nf);
    for i in 0..m {
        for k in 0..nf {
            bm.set(i, k, jm.get(i, k) * winv[k]);
        }
    }
    least_norm_solve(&bm, &rhs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The entries of a tridiagonal `n × n` matrix with `row` repeated in
    /// place of row `n − 1` when `repeat` is given.
    fn tridiagonal(n: usize, repeat: Option<usize>) -> Vec<(usize, usize, f64)> {
        let mut jv = Vec::new();
        for i in 0..n {
            let src = if i == n - 1 { repeat.unwrap_or(i) } else { i };
            for k in src.saturating_sub(1)..(src + 2).min(n) {
                let v = if k == src {
                    4.0 + src as f64 * 0.01
                } else {
                    -1.0
                };
                jv.push((i, k, v));
            }
        }
        jv
    }

    #[test]
    fn a_square_step_is_the_least_change_step_of_the_augmented_system() {
        let n = 150;
        let jv = tridiagonal(n, None);
        let pairs: Vec<(usize, usize)> = jv.iter().map(|&(i, k, _)| (i, k)).collect();
        let winv: Vec<f64> = (0..n).map(|k| 1.0 + (k % 7) as f64 * 0.3).collect();
        let e: Vec<f64> = (0..n).map(|k| (k as f64 * 0.37).sin()).collect();
        let r: Vec<f64> = (0..n).map(|i| (i as f64 * 0.11).cos() - 0.2).collect();
        let mut square = StepSystem::new(n, n, &pairs).expect("a system");
        assert!(matches!(square, StepSystem::Blocks(_)));
        let newton = square.step(n, n, &jv, &winv, &e, &r).expect("a step");
        let mut augmented = StepSystem::MinNorm(Box::new(
            MinNormSystem::new(n, n, &pairs).expect("a system"),
        ));
        let least_change = augmented.step(n, n, &jv, &winv, &e, &r).expect("a step");
        // J Δ = −r
        for i in 0..n {
            let row: f64 = jv
                .iter()
                .filter(|t| t.0 == i)
                .map(|&(_, k, v)| v * newton[k])
                .sum();
            assert!((row + r[i]).abs() < 1e-13, "row {i}: {row} vs {}", -r[i]);
        }
        for (k, (a, b)) in newton.iter().zip(&least_change).enumerate() {
            assert!((a - b).abs() < 1e-12, "unknown {k}: {a} vs {b}");
        }
    }

    #[test]
    fn a_singular_square_system_turns_into_the_augmented_one() {
        // the last row repeats row 10: J is singular, the equations
        // consistent when the right-hand sides agree
        let n = 150;
        let jv = tridiagonal(n, Some(10));
        let pairs: Vec<(usize, usize)> = jv.iter().map(|&(i, k, _)| (i, k)).collect();
        let winv = vec![1.0; n];
        let e = vec![0.0; n];
        let mut r: Vec<f64> = (0..n).map(|i| 0.1 * i as f64).collect();
        r[n - 1] = r[10];
        let mut system = StepSystem::new(n, n, &pairs).expect("a system");
        let delta = system.step(n, n, &jv, &winv, &e, &r).expect("a step");
        assert!(matches!(system, StepSystem::MinNorm(_)));
        for i in 0..n {
            let row: f64 = jv
                .iter()
                .filter(|t| t.0 == i)
                .map(|&(_, k, v)| v * delta[k])
                .sum();
            assert!((row + r[i]).abs() < 1e-9, "row {i}: {row} vs {}", -r[i]);
        }
    }
}
