//! Dummy derivatives (Mattsson & Söderlind 1993), the classical
//! alternative to the structural extension that steinbrecher2016 §3.1
//! compares StE with ("the selected variables are not necessarily the
//! same").
//!
//! # Algorithm
//!
//! The equations to differentiate and how often are the Σ-method's offsets
//! `c` (they agree with Pantelides' when both succeed, Pryce 2001). The
//! differentiated system is the reduced derivative array `d^k F_i`,
//! `k = 0..c_i`. Mattsson–Söderlind then pick, level by level, which
//! derivatives become *dummy* (purely algebraic) unknowns:
//!
//! 1. Level 1: the rows `R_1 = {i : c_i ≥ 1}` of the highest-order block
//!    `F_i^(c_i)` and the Jacobian `G_1 = ∂F^(c)/∂z^(d)` — the Σ-Jacobian 𝔍
//!    — restricted to `R_1` and the columns `C_1 = {j : d_j ≥ 1}`.
//!    Choose `|R_1|` columns `S_1` with a nonsingular submatrix `M_1`.
//!    The highest derivatives `z_j^(d_j)`, `j ∈ S_1`, are dummies.
//! 2. Level `k ≥ 2`: the rows that are differentiated at least `k` times,
//!    `R_k = {i : c_i ≥ k}`, in their `(c_i − k + 1)`-th derivative, and
//!    the columns `C_k = S_{k−1}` one derivative lower. Their Jacobian is
//!    `𝔍[R_k, S_{k−1}]` again (`∂F_i^(m)/∂z_j^(l) = ∂F_i^(m−1)/∂z_j^(l−1)`
//!    at tight positions). Choose `|R_k|` columns `S_k ⊆ S_{k−1}` with a
//!    nonsingular submatrix; `z_j^(d_j−k+1)`, `j ∈ S_k`, are dummies.
//! 3. Stop when `R_k` is empty (`k > max c`).
//!
//! The columns are chosen on the numerical values of 𝔍 at the consistent
//! point of the analysis (the start values when no success check was
//! made), as Mattsson & Söderlind's algorithm (§3, the choice of a
//! nonsingular square submatrix `M_k` of `G_k` by QR with column pivoting)
//! leaves open how:
//!
//! - a block of at most [`DENSE_PIVOT_MAX`] rows by Householder-free
//!   Gram–Schmidt QR with column pivoting: at each step the column with
//!   the largest norm orthogonal to the ones already chosen (ties: the
//!   first). It costs `O(|R_k|² |C_k|)`.
//! - a larger block sparsely: the columns of `𝔍[R_k, C_k]` are the rows
//!   of its transpose, and choosing `|R_k|` independent ones is the
//!   choice of the first independent rows in their order
//!   ([`daec_solve::select_rows_in_order`]): a greedy structural matching
//!   — a maximum transversal taking the rows in their order, which keeps
//!   the first structurally independent ones — confirmed by a sparse LU
//!   of each diagonal block of the block triangular form it induces, and
//!   then also the first numerically independent ones; an elimination in
//!   the written order decides where the LU cannot confirm the matching.
//!   Its cost is near-linear in the block's entries for a chain, where
//!   the dense pivoting grows as the cube of its length and the
//!   elimination as its square (a link vector's column reduced through
//!   the pivot rows of every position after it).
//!
//!   The columns are offered highest derivative first (largest `d_j`,
//!   then in the order of the unknowns), and the selection keeps a column
//!   when it is independent of those kept before: a dummy is then made of
//!   `z_j^(d_j)` with the largest `d_j` the block allows, so that the
//!   derivatives that remain are of first order where possible (on a
//!   pendulum chain the second derivatives of the positions and link
//!   vectors become dummies, not the first derivatives of the velocities,
//!   which the rows `ẋ = v` offer with entries of the same size).
//!
//! Both choose a nonsingular block; the two may choose different columns
//! where several choices are regular. The determinants of the chosen
//! blocks ([`dd_log_quality`]) follow the same rule: a dense complete
//! pivoting LU up to [`DENSE_PIVOT_MAX`] rows, the sparse LU above.
//!
//! Unknown `j` chosen on `K_j` levels gets the
//! dummies `z_j^(d_j−K_j+1), …, z_j^(d_j)`, named `dd_x_l`, which replace
//! these derivatives in the whole derivative array — the same mechanism
//! as StE, with `d_j − K_j` in place of `σ_{T*(j) j}`. The count is
//! `Σ_k |R_k| = Σ_i c_i`, so the system is square; its index is ≤ 1 while
//! the chosen submatrices stay nonsingular (like StE, it is only locally
//! valid: the pendulum's choice `ẋ, ẍ` fails where `x = 0`).

use super::{err, regular, replaced_array, replacement};
use crate::Analysis;
use crate::error::{Refusal, RegularizeError};
use crate::formulation::{Form, Formulation};
use crate::hidden_constraints::ReferencePoint;
use daec_model::Dae;
use rustc_hash::FxHashMap;

/// Largest number of rows of a level's block `𝔍[R_k, C_k]` whose columns
/// are chosen, and whose determinant is taken, densely (module docs);
/// larger blocks go the sparse way, which has no size limit.
const DENSE_PIVOT_MAX: usize = 200;

/// The dummy-derivative formulation of `dae`, the dummies chosen by
/// pivoting at the consistent point of the analysis.
pub fn dd(dae: &mut Dae, analysis: &Analysis) -> Result<Formulation, RegularizeError> {
    let levels = dd_levels(dae, analysis)?;
    dd_with_levels(dae, analysis, &levels)
}

/// The dummy derivatives the DD formulation ([`crate::regularize`] with
/// [`Form::Dd`]) is built with: Mattsson–Söderlind pivoting on 𝔍 at the
/// consistent point of `analysis`'s success check (else at the start
/// values) — for each unknown, how many of its highest derivatives are
/// dummies. The part of the construction that depends on values: a DD
/// formulation reused for other values holds for them when this choice
/// is the same there.
pub fn dd_levels(dae: &Dae, analysis: &Analysis) -> Result<Vec<u32>, RegularizeError> {
    let form = Form::Dd;
    // (`regular` refuses a Σ-Jacobian singular at the consistent point)
    let reg = regular(dae, analysis, form)?;
    // 𝔍 at the point, sparse.
    let jac: FxHashMap<(usize, usize), f64> = match &reg.success.jacobian {
        Some(jm) => reg
            .jacobian
            .iter()
            .map(|e| ((e.row, e.col), jm.get(e.row, e.col)))
            .collect(),
        None => {
            // the consistent point of the sparse success check, else the
            // start values
            let n = dae.unknowns.len();
            let start: Vec<f64> = match &reg.success.point {
                Some(p) if p.z.len() >= n => p.z[..n].to_vec(),
                _ => crate::start_values(dae),
            };
            jacobian_at(
                dae,
                analysis,
                &start,
                dae.experiment.start_time.unwrap_or(0.0),
            )
        }
    };
    choose_levels(analysis, &jac).map_err(|cause| err(form, cause))
}

/// 𝔍 at `(t, z)` (derivatives taken as 0 where 𝔍 depends on them), sparse.
fn jacobian_at(
    dae: &Dae,
    analysis: &Analysis,
    z: &[f64],
    t: f64,
) -> FxHashMap<(usize, usize), f64> {
    let mut jac = FxHashMap::default();
    let Some(reg) = analysis.regular() else {
        return jac;
    };
    let params = dae.parameter_values();
    let env = ReferencePoint {
        z,
        params: &params,
        t,
    };
    for e in &reg.jacobian {
        jac.insert((e.row, e.col), dae.pool.eval(e.expr, &env));
    }
    jac
}

/// The Mattsson–Söderlind choice (module docs, steps 1–3) on the values
/// `jac` of 𝔍: for each unknown, how many of its highest derivatives are
/// dummies.
/// Also StE's alternative to the `κ_T`-best HVT (`ste::pivoted_hvt`).
pub(super) fn choose_levels(
    analysis: &Analysis,
    jac: &FxHashMap<(usize, usize), f64>,
) -> Result<Vec<u32>, Refusal> {
    let Some(reg) = analysis.regular() else {
        return Err(super::structurally_singular(analysis));
    };
    let n = analysis.sigma.n_cols();
    let (c, d) = (&reg.sigma.offsets.c, &reg.sigma.offsets.d);
    let max_c = c.iter().copied().max().unwrap_or(0);
    let mut columns: Vec<usize> = (0..n).filter(|&j| d[j] >= 1).collect();
    let mut levels = vec![0u32; n];
    for k in 1..=max_c {
        let rows: Vec<usize> = (0..n).filter(|&i| c[i] >= k).collect();
        let chosen = if rows.len() <= DENSE_PIVOT_MAX {
            pivot_columns(jac, &rows, &columns)
        } else {
            // higher derivatives first (below)
            let mut preferred = columns.clone();
            preferred.sort_by_key(|&j| (std::cmp::Reverse(d[j]), j));
            select_columns(jac, n, &rows, &preferred)
        }
        .ok_or(Refusal::SingularDummyBlock {
            differentiations: k,
        })?;
        for &j in &chosen {
            levels[j] += 1;
        }
        columns = chosen;
        columns.sort_unstable();
    }
    Ok(levels)
}

/// The dummy derivatives Mattsson–Söderlind pivoting chooses at `(t, z)`
/// (the model's unknowns; derivatives in 𝔍 taken as 0): for each unknown,
/// how many of its highest derivatives are dummies. For dynamic
/// re-selection along a solution (the pendulum's choice `ẋ, ẍ` fails
/// where `x = 0`).
pub fn dd_levels_at(
    dae: &Dae,
    analysis: &Analysis,
    z: &[f64],
    t: f64,
) -> Result<Vec<u32>, RegularizeError> {
    let jac = jacobian_at(dae, analysis, z, t);
    choose_levels(analysis, &jac).map_err(|cause| err(Form::Dd, cause))
}

/// `Σ_k log|det 𝔍[R_k, S_k]|` at `(t, z)` for the choice `levels` (the
/// columns `S_k` = unknowns with `levels[j] ≥ k`): how far the blocks the
/// choice must invert are from singular; `−∞` when one is singular or the
/// choice does not fit the blocks.
pub fn dd_log_quality(dae: &Dae, analysis: &Analysis, levels: &[u32], z: &[f64], t: f64) -> f64 {
    log_quality(analysis, &jacobian_at(dae, analysis, z, t), levels)
}

/// [`dd_log_quality`] on the values `jac` of 𝔍 (also the conditioning of
/// an StE variant's dummies, `ste::level_conditioning`).
pub(super) fn log_quality(
    analysis: &Analysis,
    jac: &FxHashMap<(usize, usize), f64>,
    levels: &[u32],
) -> f64 {
    let Some(reg) = analysis.regular() else {
        return f64::NEG_INFINITY;
    };
    let n = analysis.sigma.n_cols();
    let c = &reg.sigma.offsets.c;
    let max_c = c.iter().copied().max().unwrap_or(0);
    let mut total = 0.0;
    for k in 1..=max_c {
        let rows: Vec<usize> = (0..n).filter(|&i| c[i] >= k).collect();
        let cols: Vec<usize> = (0..n)
            .filter(|&j| levels.get(j).copied().unwrap_or(0) >= k)
            .collect();
        if rows.len() != cols.len() {
            return f64::NEG_INFINITY;
        }
        let m = rows.len();
        let log_det = if m <= DENSE_PIVOT_MAX {
            let mut a = crate::dense::Matrix::zeros(m, m);
            for (r, &i) in rows.iter().enumerate() {
                for (q, &j) in cols.iter().enumerate() {
                    a.set(r, q, jac.get(&(i, j)).copied().unwrap_or(0.0));
                }
            }
            let det = crate::dense::FullPivLu::new(&a, 1e-14).determinant();
            det.abs().ln()
        } else {
            let block = block_entries(jac, n, &rows, &cols);
            super::sparse_lu(m, &block, None)
                .map_or(f64::NEG_INFINITY, |lu| lu.log_abs_determinant())
        };
        if !log_det.is_finite() {
            return f64::NEG_INFINITY;
        }
        total += log_det;
    }
    total
}

/// The nonzero entries of `jac[rows, columns]` (`jac`'s indices below
/// `n`) as `(r, q, value)` with `r`, `q` the positions in `rows` and
/// `columns`, sorted; one pass over `jac`, so `O(nnz)` whatever the
/// block's size.
fn block_entries(
    jac: &FxHashMap<(usize, usize), f64>,
    n: usize,
    rows: &[usize],
    columns: &[usize],
) -> Vec<(usize, usize, f64)> {
    let mut row_at = vec![usize::MAX; n];
    let mut col_at = vec![usize::MAX; n];
    for (r, &i) in rows.iter().enumerate() {
        row_at[i] = r;
    }
    for (q, &j) in columns.iter().enumerate() {
        col_at[j] = q;
    }
    let mut block: Vec<(usize, usize, f64)> = jac
        .iter()
        .filter(|&(&(i, j), &v)| {
            i < n && j < n && v != 0.0 && row_at[i] != usize::MAX && col_at[j] != usize::MAX
        })
        .map(|(&(i, j), &v)| (row_at[i], col_at[j], v))
        .collect();
    block.sort_unstable_by_key(|&(r, q, _)| (r, q));
    block
}

/// `rows.len()` of `columns` whose submatrix of `jac` (indices below `n`)
/// is numerically nonsingular, chosen sparsely (module docs): the
/// columns are the rows of the transposed block, of which
/// [`daec_solve::select_rows_in_order`] keeps the first independent ones
/// in the order of `columns`. `None` when the block is rank deficient.
fn select_columns(
    jac: &FxHashMap<(usize, usize), f64>,
    n: usize,
    rows: &[usize],
    columns: &[usize],
) -> Option<Vec<usize>> {
    let block = block_entries(jac, n, rows, columns);
    let pattern: Vec<(usize, usize)> = block.iter().map(|&(r, q, _)| (q, r)).collect();
    let values: Vec<f64> = block.iter().map(|e| e.2).collect();
    let (kept, _) = daec_solve::select_rows_in_order(rows.len(), &pattern, &values, columns.len());
    let kept = kept.ok()?;
    (kept.len() == rows.len()).then(|| kept.iter().map(|&q| columns[q]).collect())
}

/// The DD formulation with the dummy derivatives `levels` (for each
/// unknown, how many of its highest derivatives are dummies).
pub fn dd_with_levels(
    dae: &mut Dae,
    analysis: &Analysis,
    levels: &[u32],
) -> Result<Formulation, RegularizeError> {
    let form = Form::Dd;
    let reg = regular(dae, analysis, form)?;
    let n = dae.unknowns.len();
    if levels.len() != n {
        return Err(err(
            form,
            Refusal::DummyLevelCount {
                levels: levels.len(),
                unknowns: n,
            },
        ));
    }
    let d = reg.sigma.offsets.d.clone();
    let keep: Vec<u32> = (0..n).map(|j| d[j] - levels[j].min(d[j])).collect();
    let (added, map) = replacement(dae, &d, &keep, "dd");
    let equations = replaced_array(dae, reg, &map);
    let mut unknowns = super::original_unknowns(dae);
    unknowns.extend(added);
    Ok(Formulation {
        form,
        unknowns,
        equations,
        hvt: None,
        limits: Vec::new(),
    })
}

/// `rows.len()` of `columns` whose submatrix of `jac` is numerically
/// nonsingular, by Gram–Schmidt QR with column pivoting; `None` when the
/// block is rank deficient.
fn pivot_columns(
    jac: &FxHashMap<(usize, usize), f64>,
    rows: &[usize],
    columns: &[usize],
) -> Option<Vec<usize>> {
    let m = rows.len();
    if m == 0 {
        return Some(Vec::new());
    }
    let mut vecs: Vec<Vec<f64>> = columns
        .iter()
        .map(|&j| {
            rows.iter()
                .map(|&i| jac.get(&(i, j)).copied().unwrap_or(0.0))
                .collect()
        })
        .collect();
    let scale = vecs
        .iter()
        .flat_map(|v| v.iter())
        .fold(0.0f64, |a, &x| a.max(x.abs()));
    if scale <= 0.0 || !scale.is_finite() {
        return None;
    }
    let tol = 1e-10 * scale;
    let mut alive: Vec<bool> = vec![true; columns.len()];
    let mut chosen = Vec::with_capacity(m);
    for _ in 0..m {
        let mut best: Option<(f64, usize)> = None;
        for (k, v) in vecs.iter().enumerate() {
            if !alive[k] {
                continue;
            }
            let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
            if best.is_none_or(|(b, _)| norm > b * (1.0 + 1e-12)) {
                best = Some((norm, k));
            }
        }
        let (norm, k) = best?;
        if norm.is_nan() || norm <= tol {
            return None;
        }
        alive[k] = false;
        chosen.push(columns[k]);
        let q: Vec<f64> = vecs[k].iter().map(|x| x / norm).collect();
        for (o, v) in vecs.iter_mut().enumerate() {
            if alive[o] {
                let dot: f64 = v.iter().zip(&q).map(|(a, b)| a * b).sum();
                for (a, b) in v.iter_mut().zip(&q) {
                    *a -= dot * b;
                }
            }
        }
    }
    Some(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `jac` of a 3 × 4 block in the rows 1, 3, 5 and the columns 0, 2, 4,
    /// 6 of a 7 × 7 matrix: column 2 is twice column 0, so a nonsingular
    /// choice takes one of them with columns 4 and 6.
    fn dependent_columns() -> FxHashMap<(usize, usize), f64> {
        let mut jac = FxHashMap::default();
        for (r, &i) in [1usize, 3, 5].iter().enumerate() {
            let base = 1.0 + r as f64;
            jac.insert((i, 0), base);
            jac.insert((i, 2), 2.0 * base);
        }
        jac.insert((1, 4), 1.0);
        jac.insert((3, 6), -3.0);
        jac.insert((5, 6), 0.5);
        jac.insert((0, 4), 7.0); // outside the rows
        jac
    }

    #[test]
    fn sparse_and_dense_pivoting_choose_nonsingular_blocks() {
        let jac = dependent_columns();
        let rows = [1, 3, 5];
        let columns = [0, 2, 4, 6];
        for chosen in [
            pivot_columns(&jac, &rows, &columns).unwrap(),
            select_columns(&jac, 7, &rows, &columns).unwrap(),
        ] {
            let mut sorted = chosen.clone();
            sorted.sort_unstable();
            assert_eq!(sorted.len(), 3, "{chosen:?}");
            assert!(sorted.contains(&4) && sorted.contains(&6), "{chosen:?}");
            // the block's determinant by the sparse LU agrees with the
            // dense one and is nonzero
            let block = block_entries(&jac, 7, &rows, &sorted);
            let lu = super::super::sparse_lu(3, &block, None).unwrap();
            let mut a = crate::dense::Matrix::zeros(3, 3);
            for &(r, q, v) in &block {
                a.set(r, q, v);
            }
            let det = crate::dense::FullPivLu::new(&a, 1e-14).determinant();
            assert!(det.abs() > 0.1, "{det}");
            assert!((lu.log_abs_determinant() - det.abs().ln()).abs() < 1e-12);
        }
        // no choice of three columns among 0 and 2 alone
        assert!(select_columns(&jac, 7, &rows, &[0, 2]).is_none());
        // a rank-deficient block (columns 0, 2 and 4 span only two
        // dimensions: rows 3 and 5 are proportional in them)
        assert!(select_columns(&jac, 7, &rows, &[0, 2, 4]).is_none());
    }
}
