//! The symbolic side of Pryce's Signature method (steinbrecher2016 §2,
//! Algorithm 2.1): the signature matrix Σ of a flat DAE (step 1), the
//! Σ-Jacobian 𝔍 (step 4, eq. (3)) and the reduced derivative array
//! (step 5, eq. (4)). The combinatorial steps (HVT, offsets, BTF) are in
//! `daec-structure`.

use daec_expr::{ExprId, ExprPool};
use daec_structure::{Offsets, SigmaMatrix};

/// Step 1: `σ_ij` = highest derivative order of unknown `j` in residual `i`.
pub fn sigma_matrix(pool: &ExprPool, residuals: &[ExprId], n_unknowns: usize) -> SigmaMatrix {
    let entries = residuals.iter().enumerate().flat_map(|(i, &r)| {
        pool.max_orders(r)
            .into_iter()
            .filter(move |&(j, _)| (j as usize) < n_unknowns)
            .map(move |(j, k)| (i, j as usize, k))
    });
    SigmaMatrix::from_entries(residuals.len(), n_unknowns, entries)
}

/// One entry of the Σ-Jacobian: `𝔍_ij = ∂F_i/∂z_j^(σ_ij)` at a tight
/// position (`d_j − c_i = σ_ij`), eq. (3).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct JacobianEntry {
    /// Equation.
    pub row: usize,
    /// Unknown.
    pub col: usize,
    /// The symbolic entry.
    pub expr: ExprId,
}

/// Step 4: the symbolic Σ-Jacobian on the tight positions (entries that
/// simplify to 0 are dropped).
pub fn sigma_jacobian(
    pool: &mut ExprPool,
    residuals: &[ExprId],
    sigma: &SigmaMatrix,
    offsets: &Offsets,
) -> Vec<JacobianEntry> {
    let mut out = Vec::new();
    let mut cols: Vec<usize> = Vec::new();
    let mut leaves: Vec<ExprId> = Vec::new();
    for (i, &r) in residuals.iter().enumerate() {
        cols.clear();
        leaves.clear();
        for &(j, s) in sigma.row(i) {
            let j = j as usize;
            if offsets.d[j] as i64 - offsets.c[i] as i64 == s as i64 {
                cols.push(j);
                leaves.push(pool.var(j as u32, s));
            }
        }
        // the row's tight partial derivatives in one walk of F_i
        let derivatives = pool.diff_many(r, &leaves);
        for (&j, e) in cols.iter().zip(derivatives) {
            if pool.as_constant(e) != Some(0.0) {
                out.push(JacobianEntry {
                    row: i,
                    col: j,
                    expr: e,
                });
            }
        }
    }
    out
}

/// Step 5: the reduced derivative array, `rows[i][k] = d^k/dt^k F_i` for
/// `k = 0..=c_i` (eq. (4)).
#[derive(Clone, Debug, PartialEq)]
pub struct DerivativeArray {
    /// `rows[i][k]`.
    pub rows: Vec<Vec<ExprId>>,
}

impl DerivativeArray {
    /// Differentiates each residual `c_i` times.
    pub fn new(pool: &mut ExprPool, residuals: &[ExprId], c: &[u32]) -> DerivativeArray {
        let rows = residuals
            .iter()
            .zip(c)
            .map(|(&r, &ci)| {
                let mut v = Vec::with_capacity(ci as usize + 1);
                v.push(r);
                for _ in 0..ci {
                    let last = *v.last().unwrap_or(&r);
                    let next = pool.dt(last);
                    v.push(next);
                }
                v
            })
            .collect();
        DerivativeArray { rows }
    }

    /// Number of equations, `n + Σc`.
    pub fn len(&self) -> usize {
        self.rows.iter().map(Vec::len).sum()
    }

    /// Whether the array is empty.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}
