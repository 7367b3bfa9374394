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

/// Step 5: the reduced derivative array, `d^k/dt^k F_i` for
/// `k = 0..=c_i` (eq. (4)): [`row(i)`](Self::row) holds
/// `F_i, Ḟ_i, …, F_i^(c_i)`.
#[derive(Clone, Debug, PartialEq)]
pub struct DerivativeArray {
    /// The rows of every equation, equation after equation (one array,
    /// not a vector per equation: 4 bytes a row where a vector costs its
    /// header and an allocation).
    exprs: Vec<ExprId>,
    /// Where the rows of equation `i` start in `exprs` (one bound more
    /// than equations).
    start: Vec<usize>,
}

impl DerivativeArray {
    /// Differentiates each residual `c_i` times.
    pub fn new(pool: &mut ExprPool, residuals: &[ExprId], c: &[u32]) -> DerivativeArray {
        let total: usize = residuals
            .iter()
            .zip(c)
            .map(|(_, &ci)| ci as usize + 1)
            .sum();
        let mut exprs = Vec::with_capacity(total);
        let mut start = Vec::with_capacity(residuals.len() + 1);
        start.push(0);
        for (&r, &ci) in residuals.iter().zip(c) {
            exprs.push(r);
            let mut last = r;
            for _ in 0..ci {
                last = pool.dt(last);
                exprs.push(last);
            }
            start.push(exprs.len());
        }
        DerivativeArray { exprs, start }
    }

    /// The rows `F_i, Ḟ_i, …, F_i^(c_i)` of equation `i` (empty beyond
    /// the last equation).
    pub fn row(&self, i: usize) -> &[ExprId] {
        match (self.start.get(i), self.start.get(i + 1)) {
            (Some(&lo), Some(&hi)) => &self.exprs[lo..hi],
            _ => &[],
        }
    }

    /// The rows of every equation, in order (see [`row`](Self::row)).
    pub fn rows(&self) -> impl Iterator<Item = &[ExprId]> + '_ {
        self.start.windows(2).map(|w| &self.exprs[w[0]..w[1]])
    }

    /// Number of equations, `n + Σc`.
    pub fn len(&self) -> usize {
        self.exprs.len()
    }

    /// Whether the array is empty.
    pub fn is_empty(&self) -> bool {
        self.exprs.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rows_of_each_equation_are_its_derivatives_in_order() {
        let mut pool = ExprPool::new();
        let x = pool.var(0, 0);
        let y = pool.var(1, 0);
        let xy = pool.mul(x, y);
        let s = pool.func(daec_expr::Func::Sin, y);
        let residuals = [xy, s, x];
        let da = DerivativeArray::new(&mut pool, &residuals, &[2, 0, 1]);
        let xy1 = pool.dt(xy);
        let xy2 = pool.dt(xy1);
        let x1 = pool.dt(x);
        assert_eq!(da.row(0), &[xy, xy1, xy2]);
        assert_eq!(da.row(1), &[s]);
        assert_eq!(da.row(2), &[x, x1]);
        assert!(da.row(3).is_empty());
        let rows: Vec<&[ExprId]> = da.rows().collect();
        assert_eq!(rows, vec![da.row(0), da.row(1), da.row(2)]);
        // n + Σc rows
        assert_eq!(da.len(), 6);
        assert!(!da.is_empty());
        assert!(DerivativeArray::new(&mut pool, &[], &[]).is_empty());
    }
}
