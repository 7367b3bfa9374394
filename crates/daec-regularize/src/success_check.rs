//! The success check of the Σ-method (steinbrecher2016 Algorithm 2.1
//! step 6): a consistent point is computed from the start values (the
//! least-change projection of [`crate::consistent`]), and the method
//! succeeds when the Σ-Jacobian 𝔍 is nonsingular there. Up to
//! `AnalyzeOptions::success_check_max_unknowns` unknowns the check is dense
//! (determinant, numerical rank and a left null vector of 𝔍, on 𝔍
//! equilibrated); above, 𝔍 is checked block by block on the fine block
//! triangular form of the analysis (dense LU with complete pivoting for
//! small blocks, sparse LU with a pivot test for large ones, see
//! [`crate::block_rank`]), which tells regular from singular and finds the
//! first singular block, at any size.

use daec_expr::{ExprId, ExprPool};
use daec_model::Dae;

use crate::AnalyzeOptions;
use crate::block_rank::{BlockRank, block_rank};
use crate::consistent::{ConsistentPoint, ProjectionOptions, consistent_point};
use crate::dense::{self, FullPivLu, Matrix};
use crate::gradients::{LeafPositions, SharedValues};
use crate::hidden_constraints::ConstraintArray;
use crate::signature::JacobianEntry;

/// The success check (Algorithm 2.1 step 6).
#[derive(Clone, Debug, Default)]
pub struct SuccessCheck {
    /// Why it was not performed, if it was not.
    pub skipped: Option<String>,
    /// The consistent point found from the start values.
    pub point: Option<ConsistentPoint>,
    /// The Σ-Jacobian evaluated there (dense, n × n).
    pub jacobian: Option<Matrix>,
    /// Its determinant.
    pub determinant: Option<f64>,
    /// Its numerical rank (for the block check of a large model, the sum
    /// of the diagonal blocks' ranks: `order` exactly when 𝔍 is
    /// numerically nonsingular, see [`BlockRank::rank`]).
    pub rank: Option<usize>,
    /// A left null vector when singular (`uᵀ𝔍 = 0`).
    pub left_null_vector: Option<Vec<f64>>,
    /// The order `n` of 𝔍 when it was checked (densely or sparsely).
    pub order: Option<usize>,
    /// The block check of a model above
    /// `AnalyzeOptions::success_check_max_unknowns` unknowns (`None` when
    /// the check was dense or not performed).
    pub blocks: Option<BlockRank>,
}

impl SuccessCheck {
    /// Whether the Σ-Jacobian was found nonsingular at a consistent point.
    pub fn succeeded(&self) -> bool {
        self.point.as_ref().is_some_and(|p| p.converged)
            && self.rank.is_some_and(|r| Some(r) == self.order)
    }

    /// Whether the Σ-Jacobian was found singular.
    pub fn singular(&self) -> bool {
        match (self.rank, self.order) {
            (Some(r), Some(n)) => r < n,
            _ => false,
        }
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn success_check(
    dae: &mut Dae,
    jacobian: &[JacobianEntry],
    constraints: Option<&ConstraintArray>,
    orders: &[u32],
    start: &[f64],
    params: &[f64],
    t0: f64,
    btf: &daec_structure::Btf,
    options: &AnalyzeOptions,
) -> SuccessCheck {
    let n = dae.unknowns.len();
    if n > options.sparse_success_check_max_unknowns {
        return SuccessCheck {
            skipped: Some(format!(
                "the numerical success check is done for at most {} unknowns (this model has {n})",
                options.sparse_success_check_max_unknowns
            )),
            ..SuccessCheck::default()
        };
    }
    let Some(ca) = constraints else {
        return SuccessCheck {
            skipped: Some("the hidden constraints were not built".into()),
            ..SuccessCheck::default()
        };
    };
    // The state: z_j^(l) for l < max(p_j, 1).
    let mut state: Vec<(u32, u32)> = (0..n as u32).map(|j| (j, 0)).collect();
    for (j, &p) in orders.iter().enumerate() {
        for l in 1..p {
            state.push((j as u32, l));
        }
    }
    let is_state = |j: u32, l: u32| l < orders.get(j as usize).copied().unwrap_or(1).max(1);
    // The constraints plus the user's initial equations (derivatives in
    // those replaced by their consistent expressions).
    let mut eqs: Vec<ExprId> = ca.constraints.iter().map(|c| c.expr).collect();
    for ie in &dae.initial_equations {
        let e = ca.substitute_derivatives(&mut dae.pool, ie.residual);
        eqs.push(e);
    }
    // (one walk over the equations together: the constraints of
    // neighbouring links share their nodes)
    let unresolved = dae.pool.topo_order(&eqs).into_iter().any(|l| {
        matches!(dae.pool.as_leaf(l), Some(daec_expr::Leaf::Var { unknown, order }) if !is_state(unknown, order))
    });
    if unresolved {
        return SuccessCheck {
            skipped: Some(
                "some derivatives could not be eliminated from the constraints symbolically, so no consistent point was computed"
                    .into(),
            ),
            ..SuccessCheck::default()
        };
    }
    let mut x0: Vec<f64> = start.to_vec();
    x0.resize(state.len(), 0.0);
    let mut fixed: Vec<bool> = dae.unknowns.iter().map(|u| u.fixed).collect();
    fixed.resize(state.len(), false);
    let mut weights: Vec<f64> = dae
        .unknowns
        .iter()
        .map(|u| {
            let nominal = u.nominal().map(f64::abs).filter(|x| *x > 0.0);
            1.0 / nominal.unwrap_or_else(|| u.start().map_or(1.0, |s| s.abs().max(1.0)))
        })
        .collect();
    weights.resize(state.len(), 1.0);
    let point = consistent_point(
        &mut dae.pool,
        &eqs,
        &state,
        &x0,
        &fixed,
        &weights,
        params,
        t0,
        &ProjectionOptions::default(),
    );
    // The point: the state, then the derivatives Ω(t, z) evaluated there.
    let mut keys = state.clone();
    let mut x = point.z.clone();
    // Of those, 𝔍 needs the ones that occur in the residuals: a derivative
    // z_j^(l) of F_i has l ≤ σ_ij ≤ p_j, and Ω holds the orders
    // l ≥ max(p_j, 1), so only z_j^(p_j) (the others of Ω, 3/5 of them in
    // the pendulum chain, are not evaluated).
    let (omega_keys, omega): (Vec<(u32, u32)>, Vec<ExprId>) = ca
        .derivatives
        .iter()
        .filter(|&(&(j, l), _)| orders.get(j as usize) == Some(&l))
        .map(|(&k, &e)| (k, e))
        .unzip();
    x.extend(eval_at(&dae.pool, &omega, &keys, &x, params, t0));
    keys.extend(omega_keys);
    let jacobian_values = jacobian_at(&dae.pool, jacobian, &keys, &x, params, t0);
    if n > options.success_check_max_unknowns {
        // Large models: 𝔍's regularity block by block on the fine BTF (no
        // determinant or null vector: those need the dense factorisation).
        let entries: Vec<(usize, usize, f64)> = jacobian
            .iter()
            .zip(&jacobian_values)
            .map(|(e, &v)| (e.row, e.col, v))
            .collect();
        let blocks = block_rank(n, &entries, btf, options.dense_block_max);
        return SuccessCheck {
            rank: Some(blocks.rank),
            order: Some(n),
            point: Some(point),
            blocks: Some(blocks),
            ..SuccessCheck::default()
        };
    }
    let mut jm = Matrix::zeros(n, n);
    for (e, &v) in jacobian.iter().zip(&jacobian_values) {
        jm.set(e.row, e.col, v);
    }
    // The rank is decided on 𝔍 equilibrated (R 𝔍 C, rows and columns
    // scaled to unit size): relative to 𝔍's largest entry, a regular 𝔍
    // of equations in different units has pivots far below any tolerance
    // (the water tube of the IVP test set: 1.3e6 on the flows' derivatives
    // and 1 on the pressures give a Schur complement of 1e-12 relative).
    let (scaled, r, c) = dense::equilibrate(&jm);
    let lu = FullPivLu::new(&scaled, 1e-10);
    // a left null vector of R 𝔍 C is one of 𝔍 after multiplying by R
    let left_null_vector = if lu.rank < n {
        FullPivLu::new(&scaled.transpose(), 1e-10)
            .null_vector()
            .map(|y| {
                let y: Vec<f64> = y.iter().zip(&r).map(|(a, b)| a * b).collect();
                let norm = y.iter().map(|v| v * v).sum::<f64>().sqrt();
                y.into_iter().map(|v| v / norm).collect()
            })
    } else {
        None
    };
    // det 𝔍 = det(R 𝔍 C) / (det R · det C), the scales powers of two
    let exponent: i64 = r.iter().chain(&c).map(|s| s.log2() as i64).sum();
    SuccessCheck {
        skipped: None,
        determinant: Some(dense::scale_by_power_of_two(lu.determinant(), -exponent)),
        rank: Some(lu.rank),
        point: Some(point),
        jacobian: Some(jm),
        left_null_vector,
        order: Some(n),
        blocks: None,
    }
}

/// The values of the Σ-Jacobian's entries at the point (as [`eval_at`]):
/// the constant entries (in the pendulum chain half of them, in the
/// transmission line all) read off, the others compiled and evaluated.
fn jacobian_at(
    pool: &ExprPool,
    jacobian: &[JacobianEntry],
    keys: &[(u32, u32)],
    x: &[f64],
    params: &[f64],
    t: f64,
) -> Vec<f64> {
    let mut values: Vec<f64> = Vec::with_capacity(jacobian.len());
    let mut varying: Vec<usize> = Vec::new();
    let mut exprs: Vec<ExprId> = Vec::new();
    for (k, e) in jacobian.iter().enumerate() {
        match pool.as_constant(e.expr) {
            Some(c) => values.push(c),
            None => {
                values.push(f64::NAN);
                varying.push(k);
                exprs.push(e.expr);
            }
        }
    }
    for (k, v) in varying
        .into_iter()
        .zip(eval_at(pool, &exprs, keys, x, params, t))
    {
        values[k] = v;
    }
    values
}

/// The values of `exprs` at the point whose leaves `z_j^(l)` for the
/// `keys` `(j, l)` have the values `x` (a derivative leaf of no key counts
/// as 0, an unknown of no key as NaN), compiled together: one pass over
/// their nodes, the values those of `ExprPool::eval` bit for bit.
fn eval_at(
    pool: &ExprPool,
    exprs: &[ExprId],
    keys: &[(u32, u32)],
    x: &[f64],
    params: &[f64],
    t: f64,
) -> Vec<f64> {
    let position = LeafPositions::new(keys);
    let zero = x.len();
    let mut compiled = SharedValues::new(pool, exprs, |j, l| {
        position.get(j, l).or((l >= 1).then_some(zero))
    });
    let mut at = x.to_vec();
    at.push(0.0);
    let mut values = Vec::new();
    compiled.eval(pool, &at, params, t, &mut values);
    values
}

#[cfg(test)]
mod tests {
    use super::*;
    use daec_expr::Func;

    #[test]
    fn constant_entries_are_read_off_and_the_others_evaluated_as_before() {
        let mut pool = ExprPool::new();
        let x = pool.var(0, 0);
        let dy = pool.var(1, 1);
        let two = pool.constant(2.0);
        let three = pool.constant(-3.5);
        let xy = pool.product(&[x, dy]);
        let s = pool.func(Func::Sin, x);
        let sum = pool.sum(&[s, dy]);
        let exprs = [two, xy, three, sum, dy];
        let jacobian: Vec<JacobianEntry> = exprs
            .iter()
            .enumerate()
            .map(|(k, &expr)| JacobianEntry {
                row: k / 2,
                col: k % 2,
                expr,
            })
            .collect();
        let keys = [(0, 0), (1, 1)];
        let x = [0.7, -1.3];
        let all = eval_at(&pool, &exprs, &keys, &x, &[], 0.0);
        let read = jacobian_at(&pool, &jacobian, &keys, &x, &[], 0.0);
        let expected = [2.0, 0.7 * -1.3, -3.5, 0.7f64.sin() + -1.3, -1.3];
        assert_eq!(read.len(), expected.len());
        for (k, ((a, b), e)) in all.iter().zip(&read).zip(&expected).enumerate() {
            assert_eq!(a.to_bits(), b.to_bits(), "entry {k}: {a} vs {b}");
            assert!((b - e).abs() < 1e-15, "entry {k}: {b} vs {e}");
        }
    }
}
