//! Numeric refactorisation of a sparse LU with the pattern and the pivot
//! order of the previous factorisation.
//!
//! The left-looking LU of Gilbert and Peierls (gilbert-peierls1988), as
//! `faer`'s simplicial LU computes it, finds the pattern of column `j` of
//! `L` and `U` by a depth-first search of the graph of `L` from the
//! entries of `A`'s column (its *reach*) and eliminates in the
//! topological order that search gives; partial pivoting then takes the
//! largest candidate. With the same pattern of `A` and the same row pivots
//! the reach and its order are the same at every factorisation: a
//! refactorisation that keeps both does only the arithmetic
//! (davis-natarajan2010: KLU's `klu_refactor`), in the order of the
//! factorisation it follows. It keeps a pivot while it passes the test of
//! threshold pivoting (duff-erisman-reid2017, chapter 5: `|a_kk| ≥
//! u·max_i |a_ik|`, u = [`PIVOT_THRESHOLD`]) and gives up
//! otherwise — the caller then factorises with partial pivoting. The
//! growth of the entries stays bounded by `1 + 1/u` per elimination step
//! (2 with partial pivoting), so the factors are as good a Newton matrix;
//! where partial pivoting would choose the same pivots they are the same
//! bit for bit.

use faer::sparse::{SparseColMatRef, SymbolicSparseColMat};
use faer::traits::ComplexField;

/// The threshold `u` of the pivot test of a refactorisation: a stored
/// pivot is kept while it is at least `u` times the largest candidate of
/// its column in magnitude (UMFPACK's and MA48's default, the value
/// Duff, Erisman and Reid recommend for sparse threshold pivoting).
pub const PIVOT_THRESHOLD: f64 = 0.1;

/// The factors `L` and `U` of a sparse LU in `faer`'s simplicial layout:
/// column `j` of `L` starts with its unit diagonal, column `j` of `U` ends
/// with its diagonal, the row indices of both are positions in the pivot
/// order, and the off-diagonal rows of a column of `U` are in the order in
/// which the factorisation eliminated with them (a topological order of
/// the graph of `L`).
pub(super) struct Factors<T> {
    l: SymbolicSparseColMat<usize>,
    l_val: Vec<T>,
    u: SymbolicSparseColMat<usize>,
    u_val: Vec<T>,
    /// Dense work column (zero between uses).
    x: Vec<T>,
}

impl<T: ComplexField<Real = f64>> Factors<T> {
    /// No factors (order 0).
    pub(super) fn new() -> Self {
        let empty = || SymbolicSparseColMat::new_checked(0, 0, vec![0], None, Vec::new());
        Self {
            l: empty(),
            l_val: Vec::new(),
            u: empty(),
            u_val: Vec::new(),
            x: Vec::new(),
        }
    }

    /// Order of the factors.
    pub(super) fn n(&self) -> usize {
        self.l.ncols()
    }

    /// Takes a copy of the factors `l` and `u` of a factorisation (row
    /// indices unsorted within a column).
    pub(super) fn copy_from(
        &mut self,
        l: SparseColMatRef<'_, usize, T>,
        u: SparseColMatRef<'_, usize, T>,
    ) {
        fn copy(m: SparseColMatRef<'_, usize, impl Clone>) -> SymbolicSparseColMat<usize> {
            let s = m.symbolic();
            let nnz = s.compute_nnz();
            SymbolicSparseColMat::new_unsorted_checked(
                s.nrows(),
                s.ncols(),
                s.col_ptr().to_vec(),
                None,
                s.row_idx()[..nnz].to_vec(),
            )
        }
        self.l = copy(l);
        self.u = copy(u);
        self.l_val.clear();
        self.l_val
            .extend_from_slice(&l.val()[..self.l.row_idx().len()]);
        self.u_val.clear();
        self.u_val
            .extend_from_slice(&u.val()[..self.u.row_idx().len()]);
        let n = self.n();
        self.x.clear();
        self.x.resize(n, T::zero_impl());
    }

    /// The unit lower triangular factor `L`.
    pub(super) fn l(&self) -> SparseColMatRef<'_, usize, T> {
        SparseColMatRef::new(self.l.as_ref(), &self.l_val)
    }

    /// The upper triangular factor `U`.
    pub(super) fn u(&self) -> SparseColMatRef<'_, usize, T> {
        SparseColMatRef::new(self.u.as_ref(), &self.u_val)
    }

    /// Refactorises `a` (the pattern of the factorised matrix, new values)
    /// with the column order `col_perm_fwd` and the rows in the pivot
    /// order `row_perm_inv` (original row → position) of the stored
    /// factors. `false`, the factors then being invalid, if a pivot fails
    /// the threshold test (or is zero or not finite, or a candidate is not
    /// a number): the matrix needs a factorisation with pivoting.
    pub(super) fn refactor(
        &mut self,
        a: SparseColMatRef<'_, usize, T>,
        col_perm_fwd: &[usize],
        row_perm_inv: &[usize],
    ) -> bool {
        let n = self.n();
        debug_assert!(a.nrows() == n && col_perm_fwd.len() == n && row_perm_inv.len() == n);
        let x = &mut self.x;
        let (l_col_ptr, l_row_idx) = (self.l.col_ptr(), self.l.row_idx());
        let (u_col_ptr, u_row_idx) = (self.u.col_ptr(), self.u.row_idx());
        for j in 0..n {
            let pj = col_perm_fwd[j];
            for (r, v) in a.row_idx_of_col(pj).zip(a.val_of_col(pj)) {
                x[row_perm_inv[r]] += v;
            }
            let (u0, u1) = (u_col_ptr[j], u_col_ptr[j + 1] - 1);
            // the elimination, in the order of the factorisation
            for &k in &u_row_idx[u0..u1] {
                let xk = x[k].clone();
                let (l0, l1) = (l_col_ptr[k] + 1, l_col_ptr[k + 1]);
                for (&r, lv) in l_row_idx[l0..l1].iter().zip(&self.l_val[l0..l1]) {
                    x[r] -= lv * &xk;
                }
            }
            let (l0, l1) = (l_col_ptr[j], l_col_ptr[j + 1]);
            // threshold pivoting: the stored pivot against the largest
            // other candidate (a NaN fails the test)
            let pivot = T::abs_impl(&x[j]);
            let largest = l_row_idx[l0 + 1..l1]
                .iter()
                .map(|&r| T::abs_impl(&x[r]))
                .fold(0.0f64, |m, v| {
                    if v.is_nan() || m.is_nan() {
                        f64::NAN
                    } else {
                        m.max(v)
                    }
                });
            let keeps = pivot >= PIVOT_THRESHOLD * largest && pivot > 0.0 && pivot.is_finite();
            if !keeps {
                x.iter_mut().for_each(|v| *v = T::zero_impl());
                return false;
            }
            for (&k, uv) in u_row_idx[u0..u1].iter().zip(&mut self.u_val[u0..u1]) {
                *uv = std::mem::replace(&mut x[k], T::zero_impl());
            }
            let x_piv = std::mem::replace(&mut x[j], T::zero_impl());
            let x_piv_inv = T::recip_impl(&x_piv);
            self.u_val[u1] = x_piv;
            self.l_val[l0] = T::one_impl();
            for (&r, lv) in l_row_idx[l0 + 1..l1]
                .iter()
                .zip(&mut self.l_val[l0 + 1..l1])
            {
                *lv = std::mem::replace(&mut x[r], T::zero_impl()) * &x_piv_inv;
            }
        }
        true
    }
}
