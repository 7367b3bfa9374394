//! Sparse LU factorisations of the real and the complex Radau IIA iteration
//! matrices `γ/h·M − J` and `(α + iβ)/h·M − J` (Hairer–Wanner, Solving
//! ODEs II, IV.8, (8.16)) for large systems.
//!
//! The sparsity pattern of the iteration matrices is fixed for a problem
//! and an equation selection: [`SparsePattern`] is the compressed sparse
//! column (CSC) structure built once from the union of the patterns of `M`
//! and `J`. The symbolic analysis — the fill-reducing column ordering
//! (COLAMD) — is computed once per pattern ([`SparseRealLu::new`],
//! [`SparseComplexLu::new`]); every Jacobian evaluation or step-size change
//! only refactorises numerically (left-looking Gilbert–Peierls LU with
//! partial pivoting, `faer`'s simplicial sparse LU) into storage and
//! workspace that are reused, so factorisations and solves do not allocate
//! once the factors have reached their size. The Newton matrices'
//! factorisations ([`SparseRealLu::reusing_pivots`]) keep the pivots, the
//! pattern of the factors and the elimination order of the last one while
//! every pivot passes the threshold test ([`PIVOT_THRESHOLD`]) and do only
//! the arithmetic (`sparse/refactor.rs`).

mod ordering;
mod refactor;
#[cfg(test)]
mod tests_ordering;

use super::Singular;
use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::perm::permute_rows_in_place;
use faer::sparse::linalg::lu::simplicial::{
    SimplicialLu, factorize_simplicial_numeric_lu, factorize_simplicial_numeric_lu_scratch,
    solve_in_place_scratch,
};
use faer::sparse::linalg::triangular_solve::{
    solve_unit_lower_triangular_in_place, solve_unit_lower_triangular_transpose_in_place,
    solve_upper_triangular_in_place, solve_upper_triangular_transpose_in_place,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMat};
use faer::traits::ComplexField;
use faer::{Conj, MatMut, Par, c64};
use ordering::colamd_order;
use refactor::Factors;
pub use refactor::PIVOT_THRESHOLD;

/// Compressed sparse column structure of a square matrix (sorted, unique
/// row indices per column).
#[derive(Debug, Clone)]
pub struct SparsePattern {
    symbolic: SymbolicSparseColMat<usize>,
}

impl SparsePattern {
    /// The structure of an `n × n` matrix with the given `(row, col)`
    /// entries (duplicates are merged). Returns the pattern and, for every
    /// input entry, its slot in the value array (so that values given in
    /// the order of `entries` can be summed into place).
    ///
    /// # Panics
    /// If an entry lies outside `n × n`.
    pub fn new(n: usize, entries: &[(usize, usize)]) -> (Self, Vec<usize>) {
        for &(r, c) in entries {
            assert!(r < n && c < n, "entry ({r}, {c}) outside {n} × {n}");
        }
        // column-major, then row: the entries bucketed by column (a
        // counting sort, linear in their number), each column's few
        // entries then sorted by row
        let mut col_ptr = vec![0usize; n + 1];
        for &(_, c) in entries {
            col_ptr[c + 1] += 1;
        }
        for c in 0..n {
            col_ptr[c + 1] += col_ptr[c];
        }
        let mut order = vec![0usize; entries.len()];
        let mut next = col_ptr.clone();
        for (k, &(_, c)) in entries.iter().enumerate() {
            order[next[c]] = k;
            next[c] += 1;
        }
        drop(next);
        for c in 0..n {
            order[col_ptr[c]..col_ptr[c + 1]].sort_unstable_by_key(|&k| entries[k].0);
        }
        col_ptr.fill(0);
        let mut row_idx = Vec::with_capacity(entries.len());
        let mut slot = vec![usize::MAX; entries.len()];
        let mut prev: Option<(usize, usize)> = None;
        for &k in &order {
            let (r, c) = entries[k];
            if prev != Some((r, c)) {
                row_idx.push(r);
                col_ptr[c + 1] += 1;
                prev = Some((r, c));
            }
            slot[k] = row_idx.len() - 1;
        }
        for c in 0..n {
            col_ptr[c + 1] += col_ptr[c];
        }
        let symbolic = SymbolicSparseColMat::new_checked(n, n, col_ptr, None, row_idx);
        (Self { symbolic }, slot)
    }

    /// Order of the matrix.
    pub fn n(&self) -> usize {
        self.symbolic.nrows()
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.symbolic.row_idx().len()
    }
}

/// The fraction of the order above which COLAMD counts a column as dense:
/// a column with more than `max(16, DENSE_COLUMN_FRACTION·n)` entries is
/// left out of the minimum-degree ordering and placed last, so that the
/// dense columns are eliminated together, as a dense Schur complement at
/// the end of the factorisation (davis-gilbert-larimore-ng2004: COLAMD's
/// dense columns; `faer`'s default fraction is 0.5). Fekete's Newton matrix
/// (n = 8N = 160 unknowns for N = 20 points, `models/testset/fekete.dae`)
/// has a dense 60 × 60 block — the repulsion of every pair of points
/// couples every position with every other — whose 3N columns have about
/// 3N entries each, between 0.3·n and 0.4·n: with the default they were
/// ordered among the sparse columns and a factorisation took about
/// 120 000 multiply-adds (nnz(L + U) ≈ 9 700 of n² = 25 600); ordered
/// last, 47 000–66 000 (nnz(L + U) ≈ 9 100), and a run integrates in 0.7
/// of the time with the same steps. A dense LU of the whole matrix would
/// take n³/3 ≈ 1.4 million. The fraction is below 3N/(8N), the dense
/// columns' share for any number of points.
const DENSE_COLUMN_FRACTION: f64 = 0.25;

/// Numeric sparse LU with a fixed column ordering, reusable storage and
/// workspace (shared by the real and the complex factorisation).
struct Numeric<T> {
    col_perm_fwd: Vec<usize>,
    col_perm_inv: Vec<usize>,
    row_perm_fwd: Vec<usize>,
    row_perm_inv: Vec<usize>,
    /// `faer`'s factorisation with partial pivoting.
    lu: SimplicialLu<usize, T>,
    /// The factors of the last successful factorisation (a copy of `lu`'s
    /// or refactorised in place), which the solves use.
    factors: Factors<T>,
    /// Whether a factorisation may keep the pivots of the last one
    /// (threshold pivoting, `sparse/refactor.rs`) rather than pivot anew.
    reuse_pivots: bool,
    /// Whether `factors` hold the pattern and pivots of a factorisation of
    /// the pattern, so that the next factorisation may refactorise.
    reusable: bool,
    /// Factorisations with pivoting, refactorisations.
    counts: (usize, usize),
    mem: MemBuffer,
    factored: bool,
}

impl<T> std::fmt::Debug for Numeric<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Numeric")
            .field("n", &self.col_perm_fwd.len())
            .field("factored", &self.factored)
            .finish_non_exhaustive()
    }
}

impl<T: ComplexField<Real = f64>> Numeric<T> {
    fn new(pattern: &SparsePattern, reuse_pivots: bool) -> Self {
        let n = pattern.n();
        // The symbolic analysis: COLAMD ordering of the columns; the
        // simplicial (Gilbert–Peierls) numeric factorisation determines the
        // fill of L and U column by column with partial pivoting.
        // (the ordering of faer's `factorize_symbolic_lu`, without the
        // elimination tree and column counts it computes to choose
        // between the simplicial and the supernodal factorisation)
        let (col_perm_fwd, col_perm_inv) = colamd_order(pattern);
        let req = StackReq::any_of(&[
            factorize_simplicial_numeric_lu_scratch::<usize, T>(n, n),
            solve_in_place_scratch::<usize, T>(n, 1, Par::Seq),
        ]);
        Self {
            col_perm_fwd,
            col_perm_inv,
            row_perm_fwd: vec![0; n],
            row_perm_inv: vec![0; n],
            lu: SimplicialLu::new(),
            factors: Factors::new(),
            reuse_pivots,
            reusable: false,
            counts: (0, 0),
            mem: MemBuffer::new(req),
            factored: false,
        }
    }

    /// Factorises the matrix with `pattern` and `values`; `is_zero` tells
    /// a vanished (or non-finite) pivot. With `reuse_pivots`, refactorises
    /// with the pivots of the last factorisation while they pass the
    /// threshold test ([`Factors::refactor`]); factorises with partial
    /// pivoting otherwise.
    fn factor(
        &mut self,
        pattern: &SparsePattern,
        values: &[T],
        is_zero: impl Fn(&T) -> bool,
    ) -> Result<(), Singular> {
        self.factored = false;
        let a = SparseColMatRef::new(pattern.symbolic.as_ref(), values);
        let refactored = self.reuse_pivots
            && self.reusable
            && self.factors.n() == pattern.n()
            && self
                .factors
                .refactor(a, &self.col_perm_fwd, &self.row_perm_inv);
        if refactored {
            self.counts.1 += 1;
        } else {
            self.reusable = false;
            self.counts.0 += 1;
            let col_perm = faer::perm::PermRef::new_checked(
                &self.col_perm_fwd,
                &self.col_perm_inv,
                pattern.n(),
            );
            let stack = MemStack::new(&mut self.mem);
            if let Err(e) = factorize_simplicial_numeric_lu(
                &mut self.row_perm_fwd,
                &mut self.row_perm_inv,
                &mut self.lu,
                a,
                col_perm,
                stack,
            ) {
                let k = match e {
                    faer::sparse::linalg::LuError::SymbolicSingular { index } => index,
                    faer::sparse::linalg::LuError::Generic(_) => 0,
                };
                return Err(Singular(self.col_perm_fwd.get(k).copied().unwrap_or(0)));
            }
            if self.reuse_pivots {
                self.factors
                    .copy_from(self.lu.l_factor_unsorted(), self.lu.u_factor_unsorted());
                self.reusable = true;
            }
        }
        // The diagonal of U is the last entry of each column.
        let u = self.l_u().1;
        for j in 0..pattern.n() {
            let rows = u.row_idx_of_col_raw(j);
            let ok = rows.last() == Some(&j) && !is_zero(self.u_diagonal(j));
            if !ok {
                return Err(Singular(self.col_perm_fwd[j]));
            }
        }
        self.factored = true;
        Ok(())
    }

    /// The factors `L` and `U` of the last successful factorisation:
    /// the stored copy where pivots may be kept (it is refactorised in
    /// place), `faer`'s own otherwise (no copy: the least-norm and rank
    /// systems of the analysis are the largest factorisations).
    fn l_u(&self) -> (SparseColMatRef<'_, usize, T>, SparseColMatRef<'_, usize, T>) {
        Self::factors_of(self.reuse_pivots, &self.lu, &self.factors)
    }

    /// [`l_u`](Self::l_u) from the fields (borrowed beside the scratch).
    fn factors_of<'a>(
        reuse_pivots: bool,
        lu: &'a SimplicialLu<usize, T>,
        factors: &'a Factors<T>,
    ) -> (SparseColMatRef<'a, usize, T>, SparseColMatRef<'a, usize, T>) {
        if reuse_pivots {
            (factors.l(), factors.u())
        } else {
            (lu.l_factor_unsorted(), lu.u_factor_unsorted())
        }
    }

    /// The diagonal entry of column `j` of `U` (its last).
    fn u_diagonal(&self, j: usize) -> &T {
        let u = self.l_u().1;
        let vals = u.val_of_col(j);
        &vals[vals.len() - 1]
    }

    /// Number of entries of `L` and `U`.
    fn factor_nnz(&self) -> usize {
        let (l, u) = self.l_u();
        l.compute_nnz() + u.compute_nnz()
    }

    fn solve(&mut self, x: &mut [T]) {
        self.solve_with(x, false);
    }

    fn solve_transpose(&mut self, x: &mut [T]) {
        self.solve_with(x, true);
    }

    /// Solves `A x = b` (`Aᵀ x = b` with `transpose`) in place.
    fn solve_with(&mut self, x: &mut [T], transpose: bool) {
        assert!(self.factored, "solve before a successful factorisation");
        let n = x.len();
        let row_perm = faer::perm::PermRef::new_checked(&self.row_perm_fwd, &self.row_perm_inv, n);
        let col_perm = faer::perm::PermRef::new_checked(&self.col_perm_fwd, &self.col_perm_inv, n);
        let mut rhs = MatMut::from_column_major_slice_mut(x, n, 1);
        let stack = MemStack::new(&mut self.mem);
        // (the steps of `faer`'s `SimplicialLu` solves, on the factors of
        // `l_u`)
        let (l, u) = Self::factors_of(self.reuse_pivots, &self.lu, &self.factors);
        if transpose {
            permute_rows_in_place(rhs.as_mut(), col_perm, stack);
            solve_upper_triangular_transpose_in_place(u, Conj::No, rhs.as_mut(), Par::Seq);
            solve_unit_lower_triangular_transpose_in_place(l, Conj::No, rhs.as_mut(), Par::Seq);
            permute_rows_in_place(rhs, row_perm.inverse(), stack);
        } else {
            permute_rows_in_place(rhs.as_mut(), row_perm, stack);
            solve_unit_lower_triangular_in_place(l, Conj::No, rhs.as_mut(), Par::Seq);
            solve_upper_triangular_in_place(u, Conj::No, rhs.as_mut(), Par::Seq);
            permute_rows_in_place(rhs, col_perm.inverse(), stack);
        }
    }
}

/// Sparse LU factorisation of a real matrix with a fixed [`SparsePattern`].
#[derive(Debug)]
pub struct SparseRealLu {
    num: Numeric<f64>,
}

impl SparseRealLu {
    /// The symbolic analysis of `pattern` (computed once; see the module
    /// documentation).
    pub fn new(pattern: &SparsePattern) -> Self {
        Self {
            num: Numeric::new(pattern, false),
        }
    }

    /// Like [`new`](Self::new), but every factorisation after the first
    /// keeps the pivots and the elimination order of the last one while
    /// each pivot is at least [`PIVOT_THRESHOLD`] times the largest
    /// candidate of its column (threshold pivoting, `sparse/refactor.rs`), and
    /// pivots anew otherwise: for a sequence of matrices of one pattern
    /// whose factors serve as an approximation, such as Newton matrices.
    /// [`factor_with_pivot_floor`](Self::factor_with_pivot_floor) is then
    /// no rank test.
    pub fn reusing_pivots(pattern: &SparsePattern) -> Self {
        Self {
            num: Numeric::new(pattern, true),
        }
    }

    /// Factorises the matrix with `pattern` and `values` (one per stored
    /// entry, column-major).
    pub fn factor(&mut self, pattern: &SparsePattern, values: &[f64]) -> Result<(), Singular> {
        self.num
            .factor(pattern, values, |d| *d == 0.0 || !d.is_finite())
    }

    /// Factorises like [`factor`](Self::factor), but reports a pivot of
    /// magnitude at most `floor` as singular too: with the rows of the
    /// matrix scaled to a largest entry of 1, a small pivot of the
    /// partial-pivoting LU marks a numerically nearly singular matrix.
    pub fn factor_with_pivot_floor(
        &mut self,
        pattern: &SparsePattern,
        values: &[f64],
        floor: f64,
    ) -> Result<(), Singular> {
        self.num
            .factor(pattern, values, |d| d.abs() <= floor || !d.is_finite())
    }

    /// How many factorisations were made with partial pivoting and how
    /// many were refactorisations with the pivots of the one before.
    pub fn factorization_counts(&self) -> (usize, usize) {
        self.num.counts
    }

    /// Number of entries of the factors `L` and `U` of the last successful
    /// factorisation (the fill, which bounds the cost of a solve).
    pub fn factor_nnz(&self) -> usize {
        if !self.num.factored {
            return 0;
        }
        self.num.factor_nnz()
    }

    /// `log|det A|` of the last successful factorisation: the sum of
    /// `log|u_jj|` over the diagonal of `U` (`L` has a unit diagonal and
    /// the permutations change only the sign); `−∞` when there is none.
    pub fn log_abs_determinant(&self) -> f64 {
        if !self.num.factored {
            return f64::NEG_INFINITY;
        }
        (0..self.num.col_perm_fwd.len())
            .map(|j| self.num.u_diagonal(j).abs().ln())
            .sum()
    }

    /// Solves `A x = b` in place (`b` becomes `x`).
    ///
    /// # Panics
    /// If the last [`factor`](Self::factor) failed or was never called.
    pub fn solve(&mut self, b: &mut [f64]) {
        self.num.solve(b);
    }

    /// Solves `Aᵀ x = b` in place (`b` becomes `x`).
    ///
    /// # Panics
    /// If the last [`factor`](Self::factor) failed or was never called.
    pub fn solve_transpose(&mut self, b: &mut [f64]) {
        self.num.solve_transpose(b);
    }

    /// An estimate of `‖A⁻¹‖₁` from a few solves with the factors, a lower
    /// bound that is exact or within a small factor in practice: Hager's
    /// method (Hager, "Condition estimates", SIAM J. Sci. Stat. Comput.
    /// 5(2), 1984) as refined by Higham ("FORTRAN codes for estimating the
    /// one-norm of a real or complex matrix", ACM TOMS 14(4), 1988,
    /// Algorithm 4.1, LAPACK's `xLACON`): the gradient ascent of `‖A⁻¹x‖₁`
    /// over the unit ball from `x = (1/n, …, 1/n)`, at most five
    /// iterations, and the alternating vector `bᵢ = (−1)ⁱ(1 + i/(n−1))`
    /// as a safeguard. `∞` when the last factorisation failed.
    pub fn inverse_norm1_estimate(&mut self) -> f64 {
        if !self.num.factored {
            return f64::INFINITY;
        }
        let n = self.num.col_perm_fwd.len();
        if n == 0 {
            return 0.0;
        }
        let norm1 = |v: &[f64]| v.iter().map(|x| x.abs()).sum::<f64>();
        let mut x = vec![1.0 / n as f64; n];
        let mut est = 0.0f64;
        let mut last: Option<usize> = None;
        for _ in 0..5 {
            let mut y = x.clone();
            self.solve(&mut y);
            est = est.max(norm1(&y));
            let mut z: Vec<f64> = y
                .iter()
                .map(|&v| if v < 0.0 { -1.0 } else { 1.0 })
                .collect();
            self.solve_transpose(&mut z);
            let (j, zj) = z.iter().enumerate().fold((0, 0.0f64), |b, (k, v)| {
                if v.abs() > b.1 { (k, v.abs()) } else { b }
            });
            let ztx: f64 = z.iter().zip(&x).map(|(a, b)| a * b).sum();
            if last == Some(j) || zj <= ztx {
                break;
            }
            x.fill(0.0);
            x[j] = 1.0;
            last = Some(j);
        }
        let mut b: Vec<f64> = (0..n)
            .map(|i| {
                let sign = if i % 2 == 0 { 1.0 } else { -1.0 };
                sign * (1.0 + i as f64 / (n.max(2) - 1) as f64)
            })
            .collect();
        self.solve(&mut b);
        est.max(2.0 * norm1(&b) / (3.0 * n as f64))
    }
}

/// Sparse LU factorisation of a complex matrix with a fixed
/// [`SparsePattern`].
#[derive(Debug)]
pub struct SparseComplexLu {
    num: Numeric<c64>,
    rhs: Vec<c64>,
}

impl SparseComplexLu {
    /// The symbolic analysis of `pattern` (computed once); with
    /// `reuse_pivots` every factorisation after the first keeps the pivots
    /// of the last one while they pass the threshold test, as
    /// [`SparseRealLu::reusing_pivots`].
    pub fn new(pattern: &SparsePattern, reuse_pivots: bool) -> Self {
        Self {
            num: Numeric::new(pattern, reuse_pivots),
            rhs: vec![c64::new(0.0, 0.0); pattern.n()],
        }
    }

    /// How many factorisations were made with partial pivoting and how
    /// many were refactorisations with the pivots of the one before.
    #[cfg(test)]
    fn factorization_counts(&self) -> (usize, usize) {
        self.num.counts
    }

    /// Factorises the matrix with `pattern` and `values`.
    pub fn factor(&mut self, pattern: &SparsePattern, values: &[c64]) -> Result<(), Singular> {
        self.num.factor(pattern, values, |d| {
            let a = d.re.hypot(d.im);
            a == 0.0 || !a.is_finite()
        })
    }

    /// Solves `A x = b` in place, `b = br + i·bi`.
    ///
    /// # Panics
    /// If the last [`factor`](Self::factor) failed or was never called.
    pub fn solve(&mut self, br: &mut [f64], bi: &mut [f64]) {
        for ((x, &r), &i) in self.rhs.iter_mut().zip(br.iter()).zip(bi.iter()) {
            *x = c64::new(r, i);
        }
        self.num.solve(&mut self.rhs);
        for ((x, r), i) in self.rhs.iter().zip(br.iter_mut()).zip(bi.iter_mut()) {
            *r = x.re;
            *i = x.im;
        }
    }
}

/// The sparse iteration matrices of the simplified Newton method of Radau
/// IIA for a square (selected) system: rows `0..diff_rows.len()` are the
/// selected differential rows (`M = E`, `J = −∂(Eż − k)/∂z`), the others
/// the selected constraint rows (`M = 0`, `J = ∂g/∂z`). The CSC pattern,
/// the slot of every Jacobian entry and the symbolic analysis are computed
/// once per selection ([`SparseNewtonSystem::new`]); per Jacobian the
/// values are gathered ([`load`](SparseNewtonSystem::load)) and per step
/// size the matrices `γ/h·M − J` and `(α + iβ)/h·M − J` are refactorised
/// numerically ([`factor`](SparseNewtonSystem::factor)).
#[derive(Debug)]
pub struct SparseNewtonSystem {
    pattern: SparsePattern,
    mass_slot: Vec<usize>,
    jd_slot: Vec<usize>,
    jg_slot: Vec<usize>,
    m: Vec<f64>,
    j: Vec<f64>,
    e1: Vec<f64>,
    e2: Vec<c64>,
    lu1: SparseRealLu,
    lu2: SparseComplexLu,
}

/// Slot of an entry that does not belong to a selected row.
const UNUSED: usize = usize::MAX;

/// The order of the sparse Newton system of Radau IIA from which its real
/// and complex iteration matrices are factorised and solved on two
/// threads at once (when [`Options::threads`](crate::Options::threads)
/// allows): below it, starting a thread costs about as much as the
/// smaller of the two factorisations.
pub const PARALLEL_LU_MIN: usize = 8192;

/// Adds the diagonal entry `(i, i)` for every structurally empty row or
/// column `i` of the `n × n` pattern `entries`, so that such a line is
/// reported as a (numerically) singular pivot rather than breaking the
/// symbolic analysis. Only the empty lines: the rows of a selected
/// system are the chosen differential rows followed by the chosen
/// constraint rows, so row `i` and unknown `i` are unrelated, and a
/// structural entry at every `(i, i)` would couple unknowns far apart in
/// the model — on a chain of `N` links every fill-reducing ordering then
/// lets the LU factors fill in as `N^1.6` instead of `N`.
fn pad_empty_lines(n: usize, entries: &mut Vec<(usize, usize)>) {
    let mut row_used = vec![false; n];
    let mut col_used = vec![false; n];
    for &(r, c) in entries.iter() {
        row_used[r] = true;
        col_used[c] = true;
    }
    for i in 0..n {
        if !row_used[i] || !col_used[i] {
            entries.push((i, i));
        }
    }
}

impl SparseNewtonSystem {
    /// The pattern and the symbolic analysis of the system of `n`
    /// unknowns with the selected `diff_rows` (of `n_d`) and
    /// `constraint_rows` (of `n_g`), given the patterns of `E`,
    /// `∂(Eż − k)/∂z` and `∂g/∂z`.
    ///
    /// # Panics
    /// If `diff_rows.len() + constraint_rows.len() != n` or a row or
    /// pattern entry is out of range.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        n: usize,
        diff_rows: &[usize],
        constraint_rows: &[usize],
        n_d: usize,
        n_g: usize,
        mass: &[(usize, usize)],
        jd: &[(usize, usize)],
        jg: &[(usize, usize)],
    ) -> Self {
        assert_eq!(diff_rows.len() + constraint_rows.len(), n);
        let nd = diff_rows.len();
        let mut diff_at = vec![UNUSED; n_d];
        for (k, &r) in diff_rows.iter().enumerate() {
            diff_at[r] = k;
        }
        let mut con_at = vec![UNUSED; n_g];
        for (k, &r) in constraint_rows.iter().enumerate() {
            con_at[r] = nd + k;
        }
        let mut entries = Vec::with_capacity(mass.len() + jd.len() + jg.len());
        let mut source = Vec::with_capacity(entries.capacity());
        for (which, (pat, at)) in [(mass, &diff_at), (jd, &diff_at), (jg, &con_at)]
            .into_iter()
            .enumerate()
        {
            for (e, &(r, c)) in pat.iter().enumerate() {
                if at[r] != UNUSED {
                    entries.push((at[r], c));
                    source.push((which, e));
                }
            }
        }
        pad_empty_lines(n, &mut entries);
        let (pattern, slot) = SparsePattern::new(n, &entries);
        let mut slots = [
            vec![UNUSED; mass.len()],
            vec![UNUSED; jd.len()],
            vec![UNUSED; jg.len()],
        ];
        for (&(which, e), &s) in source.iter().zip(&slot) {
            slots[which][e] = s;
        }
        let [mass_slot, jd_slot, jg_slot] = slots;
        let nnz = pattern.nnz();
        // (the pivots kept while they pass the threshold test: a Newton
        // matrix need only approximate the Jacobian)
        let lu1 = SparseRealLu::reusing_pivots(&pattern);
        let lu2 = SparseComplexLu::new(&pattern, true);
        Self {
            pattern,
            mass_slot,
            jd_slot,
            jg_slot,
            m: vec![0.0; nnz],
            j: vec![0.0; nnz],
            e1: vec![0.0; nnz],
            e2: vec![c64::new(0.0, 0.0); nnz],
            lu1,
            lu2,
        }
    }

    /// Gathers `M` and `J` from the values of `E`, `∂(Eż − k)/∂z` and
    /// `∂g/∂z` (in the order of their patterns; duplicates summed).
    pub fn load(&mut self, mass: &[f64], jd: &[f64], jg: &[f64]) {
        self.m.iter_mut().for_each(|x| *x = 0.0);
        self.j.iter_mut().for_each(|x| *x = 0.0);
        for (&s, &v) in self.mass_slot.iter().zip(mass) {
            if s != UNUSED {
                self.m[s] += v;
            }
        }
        for (&s, &v) in self.jd_slot.iter().zip(jd) {
            if s != UNUSED {
                self.j[s] -= v;
            }
        }
        for (&s, &v) in self.jg_slot.iter().zip(jg) {
            if s != UNUSED {
                self.j[s] += v;
            }
        }
    }

    /// Factorises `fac1·M − J` (real) and `(alpha + i·beta)·M − J`
    /// (complex), on two threads at once when `threads > 1` and the system
    /// has at least [`PARALLEL_LU_MIN`] unknowns (the same factors either
    /// way). A singular real matrix is reported before a singular complex
    /// one.
    pub fn factor(
        &mut self,
        fac1: f64,
        alpha: f64,
        beta: f64,
        threads: usize,
    ) -> Result<(), Singular> {
        for (((e1, e2), &m), &j) in self
            .e1
            .iter_mut()
            .zip(&mut self.e2)
            .zip(&self.m)
            .zip(&self.j)
        {
            *e1 = fac1 * m - j;
            *e2 = c64::new(alpha * m - j, beta * m);
        }
        let parallel = self.parallel(threads);
        let (pattern, lu1, lu2) = (&self.pattern, &mut self.lu1, &mut self.lu2);
        let (e1, e2) = (&self.e1, &self.e2);
        if !parallel {
            lu1.factor(pattern, e1)?;
            return lu2.factor(pattern, e2);
        }
        let (r1, r2) = std::thread::scope(|s| {
            let complex = s.spawn(|| lu2.factor(pattern, e2));
            let r1 = lu1.factor(pattern, e1);
            (r1, complex.join())
        });
        r1?;
        // (a panic of the complex factorisation is re-raised here)
        r2.unwrap_or_else(|p| std::panic::resume_unwind(p))
    }

    /// Whether the two matrices are worth two threads.
    fn parallel(&self, threads: usize) -> bool {
        threads > 1 && self.pattern.n() >= PARALLEL_LU_MIN
    }

    /// Solves with the real matrix in place.
    pub fn solve_real(&mut self, b: &mut [f64]) {
        self.lu1.solve(b);
    }

    /// [`solve_real`](Self::solve_real) of `b` and the solve with the
    /// complex matrix of `br + i·bi` (in place), on two
    /// threads at once when `threads > 1` and the system has at least
    /// [`PARALLEL_LU_MIN`] unknowns (the same values either way).
    pub fn solve_both(&mut self, threads: usize, b: &mut [f64], br: &mut [f64], bi: &mut [f64]) {
        if !self.parallel(threads) {
            self.lu1.solve(b);
            self.lu2.solve(br, bi);
            return;
        }
        let (lu1, lu2) = (&mut self.lu1, &mut self.lu2);
        std::thread::scope(|s| {
            s.spawn(|| lu2.solve(br, bi));
            lu1.solve(b);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tridiagonal-plus-corner test matrix with a small diagonal (forces
    /// pivoting), as `(row, col, value)`.
    fn entries(n: usize) -> Vec<(usize, usize, f64)> {
        let mut e = Vec::new();
        for i in 0..n {
            e.push((i, i, 0.5));
            if i + 1 < n {
                e.push((i, i + 1, 0.3 + i as f64 * 0.001));
                e.push((i + 1, i, -1.0));
            }
        }
        e.push((0, n - 1, 0.2));
        e.push((0, n - 1, 0.05)); // duplicate: summed
        e
    }

    #[test]
    fn a_selected_chain_factorises_with_fill_linear_in_its_length() {
        // n constraint rows of a chain whose unknowns are numbered apart
        // from its rows: row i holds the unknowns σ(i) − 1, σ(i), σ(i) + 1
        // (σ(i) = 777·i mod n, a permutation), a permuted tridiagonal
        // matrix. Its LU fills in linearly; a structural entry at every
        // (i, i) ties row i's unknowns to unknown i, a long-range link.
        let n = 2000;
        let sigma = |i: usize| (777 * i) % n;
        let mut jg = Vec::new();
        let mut values = Vec::new();
        for i in 0..n {
            let c = sigma(i);
            jg.push((i, c));
            values.push(4.0);
            if c > 0 {
                jg.push((i, c - 1));
                values.push(1.0);
            }
            if c + 1 < n {
                jg.push((i, c + 1));
                values.push(-1.0);
            }
        }
        let rows: Vec<usize> = (0..n).collect();
        let mut system = SparseNewtonSystem::new(n, &[], &rows, 0, n, &[], &[], &jg);
        system.load(&[], &[], &values);
        system.factor(1.0, 1.0, 1.0, 1).expect("nonsingular");
        let fill = system.lu1.factor_nnz();
        assert!(fill <= 6 * n, "L and U hold {fill} entries");
        // (no structural entry beside the rows' own)
        assert_eq!(system.pattern.nnz(), jg.len());
        // the solution solves the system (the real matrix is −J = −G)
        let x: Vec<f64> = (0..n).map(|i| (i % 7) as f64 - 3.0).collect();
        let mut b = vec![0.0; n];
        for (&(r, c), &v) in jg.iter().zip(&values) {
            b[r] += v * x[c];
        }
        system.solve_real(&mut b);
        for (got, want) in b.iter().zip(&x) {
            assert!((got + want).abs() < 1e-12, "{got} vs {}", -want);
        }
    }

    #[test]
    fn the_sparse_lu_gives_the_log_determinant() {
        // [[0, 2, 0], [3, 0, 1], [0, 1, 4]]: det = −(2·(3·4 − 0)) = −24,
        // pivoting needed (a zero on the diagonal).
        let e = [
            (0, 1, 2.0),
            (1, 0, 3.0),
            (1, 2, 1.0),
            (2, 1, 1.0),
            (2, 2, 4.0),
        ];
        let pat: Vec<(usize, usize)> = e.iter().map(|&(r, c, _)| (r, c)).collect();
        let (p, slot) = SparsePattern::new(3, &pat);
        let mut vals = vec![0.0; p.nnz()];
        for (k, &(_, _, v)) in e.iter().enumerate() {
            vals[slot[k]] += v;
        }
        let mut lu = SparseRealLu::new(&p);
        assert_eq!(lu.log_abs_determinant(), f64::NEG_INFINITY);
        lu.factor(&p, &vals).unwrap();
        assert!((lu.log_abs_determinant() - 24f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn the_inverse_norm_estimate_is_exact_on_a_diagonal_and_close_on_a_chain() {
        // diag(1, 1e-6, 2): ‖A⁻¹‖₁ = 1e6
        let e = [(0, 0, 1.0), (1, 1, 1e-6), (2, 2, 2.0)];
        let pat: Vec<(usize, usize)> = e.iter().map(|&(r, c, _)| (r, c)).collect();
        let (p, _) = SparsePattern::new(3, &pat);
        let mut lu = SparseRealLu::new(&p);
        lu.factor(&p, &[1.0, 1e-6, 2.0]).unwrap();
        assert!((lu.inverse_norm1_estimate() - 1e6).abs() < 1e-3);
        // the pivoting test matrix: within a factor 3 of the exact norm
        // (columns of the dense inverse), never above it
        let n = 40;
        let e = entries(n);
        let pat: Vec<(usize, usize)> = e.iter().map(|&(r, c, _)| (r, c)).collect();
        let (p, slot) = SparsePattern::new(n, &pat);
        let mut vals = vec![0.0; p.nnz()];
        for (k, &(_, _, v)) in e.iter().enumerate() {
            vals[slot[k]] += v;
        }
        let mut lu = SparseRealLu::new(&p);
        lu.factor(&p, &vals).unwrap();
        let mut exact = 0.0f64;
        for j in 0..n {
            let mut col = vec![0.0; n];
            col[j] = 1.0;
            lu.solve(&mut col);
            exact = exact.max(col.iter().map(|v| v.abs()).sum());
        }
        let est = lu.inverse_norm1_estimate();
        assert!(
            est <= exact * (1.0 + 1e-12) && est >= exact / 3.0,
            "{est} vs {exact}"
        );
        // the transpose solve solves Aᵀ x = b
        let x: Vec<f64> = (0..n).map(|i| (i % 5) as f64 - 2.0).collect();
        let mut b = vec![0.0; n];
        for &(r, c, v) in &e {
            b[c] += v * x[r];
        }
        lu.solve_transpose(&mut b);
        for (got, want) in b.iter().zip(&x) {
            assert!((got - want).abs() < 1e-10, "{got} vs {want}");
        }
    }

    #[test]
    fn real_and_complex_sparse_lu_solve_a_pivoting_system() {
        let n = 40;
        let e = entries(n);
        let pat: Vec<(usize, usize)> = e.iter().map(|&(r, c, _)| (r, c)).collect();
        let (p, slot) = SparsePattern::new(n, &pat);
        assert_eq!(p.nnz(), pat.len() - 1);
        let mut vals = vec![0.0; p.nnz()];
        for (k, &(_, _, v)) in e.iter().enumerate() {
            vals[slot[k]] += v;
        }
        let x: Vec<f64> = (0..n).map(|i| i as f64 - 7.5).collect();
        let mut b = vec![0.0; n];
        for &(r, c, v) in &e {
            b[r] += v * x[c];
        }
        let mut dense = vec![0.0; n * n];
        for &(r, c, v) in &e {
            dense[r * n + c] += v;
        }
        let mut bd = b.clone();
        let mut dlu = crate::linalg::RealLu::new(n);
        dlu.factor(&dense).unwrap();
        dlu.solve(&mut bd);
        let mut lu = SparseRealLu::new(&p);
        lu.factor(&p, &vals).unwrap();
        lu.solve(&mut b);
        for i in 0..n {
            assert!((b[i] - bd[i]).abs() < 1e-11, "{i}: {} vs {}", b[i], bd[i]);
            assert!((b[i] - x[i]).abs() < 1e-9, "{i}: {} vs {}", b[i], x[i]);
        }
        // complex: A + i·0.5·I
        let xi: Vec<f64> = (0..n).map(|i| 1.0 - 0.1 * i as f64).collect();
        let (p, cv, mut br, mut bi) = shifted_system(n, 0.5, &x, &xi);
        let mut clu = SparseComplexLu::new(&p, false);
        clu.factor(&p, &cv).unwrap();
        clu.solve(&mut br, &mut bi);
        for i in 0..n {
            assert!((br[i] - x[i]).abs() < 1e-9 && (bi[i] - xi[i]).abs() < 1e-9);
        }
    }

    /// The values of `entries(n)` in the slots of its pattern, each scaled
    /// by `scale(row, col)`.
    fn slot_values(
        n: usize,
        slot: &[usize],
        nnz: usize,
        scale: impl Fn(usize, usize) -> f64,
    ) -> Vec<f64> {
        let mut vals = vec![0.0; nnz];
        for (k, &(r, c, v)) in entries(n).iter().enumerate() {
            vals[slot[k]] += v * scale(r, c);
        }
        vals
    }

    #[test]
    fn a_refactorisation_is_the_factorisation_with_the_same_pivots() {
        // A first factorisation pivots; new values that keep the pivots
        // refactorise, and the solution is the one of a fresh
        // factorisation bit for bit (the same pivots, the same operations).
        let n = 60;
        let pat: Vec<(usize, usize)> = entries(n).iter().map(|&(r, c, _)| (r, c)).collect();
        let (p, slot) = SparsePattern::new(n, &pat);
        let first = slot_values(n, &slot, p.nnz(), |_, _| 1.0);
        let mut lu = SparseRealLu::reusing_pivots(&p);
        lu.factor(&p, &first).unwrap();
        assert_eq!(lu.factorization_counts(), (1, 0));
        // every entry of a column scaled alike: the pivots stay the largest
        let second = slot_values(n, &slot, p.nnz(), |_, c| 1.0 + 0.01 * c as f64);
        lu.factor(&p, &second).unwrap();
        assert_eq!(lu.factorization_counts(), (1, 1));
        let mut fresh = SparseRealLu::new(&p);
        fresh.factor(&p, &second).unwrap();
        let b: Vec<f64> = (0..n).map(|i| (i % 5) as f64 - 1.5).collect();
        let (mut x, mut y) = (b.clone(), b.clone());
        lu.solve(&mut x);
        fresh.solve(&mut y);
        assert_eq!(x, y);
        let (mut xt, mut yt) = (b.clone(), b);
        lu.solve_transpose(&mut xt);
        fresh.solve_transpose(&mut yt);
        assert_eq!(xt, yt);
        assert_eq!(lu.log_abs_determinant(), fresh.log_abs_determinant());
        assert_eq!(lu.factor_nnz(), fresh.factor_nnz());
    }

    #[test]
    fn a_pivot_that_fails_the_threshold_test_is_factorised_with_pivoting() {
        // entries(n) pivots on the −1 below its diagonal 0.5; a diagonal
        // of 50 makes partial pivoting choose it, and the stored pivot −1
        // is then below PIVOT_THRESHOLD times it: a factorisation with
        // pivoting, whose solution solves the system.
        let n = 30;
        let pat: Vec<(usize, usize)> = entries(n).iter().map(|&(r, c, _)| (r, c)).collect();
        let (p, slot) = SparsePattern::new(n, &pat);
        let mut lu = SparseRealLu::reusing_pivots(&p);
        lu.factor(&p, &slot_values(n, &slot, p.nnz(), |_, _| 1.0))
            .unwrap();
        let big = |r: usize, c: usize| if r == c { 100.0 } else { 1.0 };
        let vals = slot_values(n, &slot, p.nnz(), big);
        lu.factor(&p, &vals).unwrap();
        assert_eq!(lu.factorization_counts(), (2, 0));
        let x: Vec<f64> = (0..n).map(|i| 0.25 * i as f64 - 2.0).collect();
        let mut b = vec![0.0; n];
        for &(r, c, v) in &entries(n) {
            b[r] += v * big(r, c) * x[c];
        }
        lu.solve(&mut b);
        for (got, want) in b.iter().zip(&x) {
            assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        }
    }

    /// The pattern of `entries(n)`, the values of `A + iσI` and the
    /// right-hand side `br + i·bi` of the solution `x + i·xi`.
    fn shifted_system(
        n: usize,
        sigma: f64,
        x: &[f64],
        xi: &[f64],
    ) -> (SparsePattern, Vec<c64>, Vec<f64>, Vec<f64>) {
        let e = entries(n);
        let pat: Vec<(usize, usize)> = e.iter().map(|&(r, c, _)| (r, c)).collect();
        let (p, slot) = SparsePattern::new(n, &pat);
        let mut cv = vec![c64::new(0.0, 0.0); p.nnz()];
        for (k, &(r, c, v)) in e.iter().enumerate() {
            cv[slot[k]].re += v;
            if r == c {
                cv[slot[k]].im = sigma;
            }
        }
        let (mut br, mut bi) = (vec![0.0; n], vec![0.0; n]);
        for &(r, c, v) in &e {
            br[r] += v * x[c];
            bi[r] += v * xi[c];
        }
        for i in 0..n {
            // (σ i)(x + i xi) = −σ xi + σ i x
            br[i] -= sigma * xi[i];
            bi[i] += sigma * x[i];
        }
        (p, cv, br, bi)
    }

    #[test]
    fn a_complex_refactorisation_solves_to_rounding() {
        // The complex matrix A + iσI: pivots chosen at σ = 0.5 and kept
        // at σ = 0.8 (they pass the threshold test); the solution is the
        // exact one to rounding.
        let n = 40;
        let (xr, xi): (Vec<f64>, Vec<f64>) = (0..n)
            .map(|i| (i as f64 - 7.5, 1.0 - 0.1 * i as f64))
            .unzip();
        let (p, first, _, _) = shifted_system(n, 0.5, &xr, &xi);
        let (_, second, mut br, mut bi) = shifted_system(n, 0.8, &xr, &xi);
        let mut clu = SparseComplexLu::new(&p, true);
        clu.factor(&p, &first).unwrap();
        clu.factor(&p, &second).unwrap();
        assert_eq!(clu.factorization_counts(), (1, 1));
        clu.solve(&mut br, &mut bi);
        for i in 0..n {
            let err = (br[i] - xr[i]).abs().max((bi[i] - xi[i]).abs());
            assert!(err < 1e-12, "{i}: error {err}");
        }
    }

    #[test]
    fn a_pattern_is_column_major_with_sorted_rows_and_merged_duplicates() {
        // unsorted entries with a duplicate, (2, 0) twice
        let pat = [
            (2, 0),
            (0, 1),
            (1, 1),
            (0, 0),
            (2, 0),
            (2, 2),
            (0, 2),
            (1, 0),
        ];
        let (p, slot) = SparsePattern::new(3, &pat);
        assert_eq!(p.symbolic.col_ptr(), &[0, 3, 5, 7]);
        assert_eq!(p.symbolic.row_idx(), &[0, 1, 2, 0, 1, 0, 2]);
        assert_eq!(slot, vec![2, 3, 4, 0, 2, 6, 5, 1]);
        assert_eq!(p.nnz(), 7);
    }

    #[test]
    fn the_column_ordering_is_that_of_the_symbolic_lu() {
        // an arrow matrix with a dense first row and column plus a chain:
        // the ordering moves the dense column last
        let n = 40;
        let mut pat: Vec<(usize, usize)> = (0..n).map(|i| (i, i)).collect();
        for i in 1..n {
            pat.extend([(0, i), (i, 0)]);
            if i + 1 < n {
                pat.push((i, i + 1));
            }
        }
        let (p, _) = SparsePattern::new(n, &pat);
        let sym = faer::sparse::linalg::lu::factorize_symbolic_lu(
            p.symbolic.as_ref(),
            Default::default(),
        )
        .expect("symbolic LU");
        let (fwd, inv) = sym.col_perm().arrays();
        assert_eq!(colamd_order(&p), (fwd.to_vec(), inv.to_vec()));
        assert_eq!(colamd_order(&p).0[n - 1], 0);
    }

    #[test]
    fn singular_sparse_matrix_is_reported() {
        // column 1 is structurally empty below a zero value
        let pat = [(0, 0), (1, 0), (0, 1), (1, 1)];
        let (p, _) = SparsePattern::new(2, &pat);
        let mut lu = SparseRealLu::new(&p);
        // second column twice the first
        let vals = [1.0, 2.0, 2.0, 4.0];
        assert!(lu.factor(&p, &vals).is_err());
    }
}

/// The minimum-norm solution `y` of the underdetermined sparse system
/// `B y = b` (`B` is `m × n`, given as `(row, col, value)` entries,
/// duplicates summed) — the Gauss–Newton step of a least-change projection
/// onto constraints (consistent initialisation, dense output) for systems
/// too large for the dense QR. Solved as the augmented system
///
/// ```text
///   [ I   Bᵀ ] [ y ]   [ 0 ]
///   [ B  −εI ] [ μ ] = [ b ]
/// ```
///
/// by the sparse LU: as sparse as `B`, and conditioned like `B` (the
/// normal equations `B Bᵀ μ = b` would square the condition number and
/// spoil the quadratic convergence of the callers' Gauss–Newton
/// iterations). `ε = 0` first; when that is singular (dependent rows, e.g.
/// a repeated constraint) `ε = 1e-12·max|B|²` regularises it. `None` if
/// that fails too or an entry lies outside `m × n`.
pub fn min_norm_solve_sparse(
    m: usize,
    n: usize,
    entries: &[(usize, usize, f64)],
    b: &[f64],
) -> Option<Vec<f64>> {
    let pairs: Vec<(usize, usize)> = entries.iter().map(|&(i, k, _)| (i, k)).collect();
    let values: Vec<f64> = entries.iter().map(|e| e.2).collect();
    MinNormSystem::new(m, n, &pairs)?.solve(&values, b)
}

/// The augmented system of [`min_norm_solve_sparse`] for a fixed pattern of
/// `B`: the structure and the symbolic analysis of the sparse LU (COLAMD
/// ordering, symbolic factorisation) are computed once, and every
/// [`solve`](Self::solve) only factorises numerically — the Gauss–Newton
/// steps of a projection keep the pattern of their Jacobian from step to
/// step.
#[derive(Debug)]
pub struct MinNormSystem {
    m: usize,
    n: usize,
    pattern: SparsePattern,
    /// The slot of every entry of the assembly (the diagonal, `I`, `Bᵀ`,
    /// `B`).
    slot: Vec<usize>,
    lu: SparseRealLu,
    /// Whether the last [`factor`](Self::factor) succeeded.
    factored: bool,
}

impl MinNormSystem {
    /// The system for an `m × n` matrix `B` with entries at `entries`
    /// (`(row, col)`, duplicates allowed); `None` if one lies outside
    /// `m × n`.
    pub fn new(m: usize, n: usize, entries: &[(usize, usize)]) -> Option<Self> {
        if entries.iter().any(|&(i, k)| i >= m || k >= n) {
            return None;
        }
        let identity: Vec<(usize, usize)> = (0..n).map(|k| (k, k)).collect();
        let transpose: Vec<(usize, usize)> = entries.iter().map(|&(i, k)| (k, i)).collect();
        let (pattern, slot) = saddle_pattern(
            n,
            m,
            &[(&identity, 0, 0), (&transpose, 0, n), (entries, n, 0)],
        );
        let lu = SparseRealLu::new(&pattern);
        Some(MinNormSystem {
            m,
            n,
            pattern,
            slot,
            lu,
            factored: false,
        })
    }

    /// The minimum-norm solution `y` of `B y = b`, `values` the entries of
    /// `B` in the order of the pattern given to [`new`](Self::new) (see
    /// [`min_norm_solve_sparse`]). `None` when the system is singular even
    /// when regularised, or `values` or `b` have the wrong length.
    pub fn solve(&mut self, values: &[f64], b: &[f64]) -> Option<Vec<f64>> {
        let size = self.n + self.m;
        self.factored = false;
        if b.len() != self.m || self.slot.len() != size + self.n + 2 * values.len() {
            return None;
        }
        let mut vals = vec![0.0; size];
        vals.extend(std::iter::repeat_n(1.0, self.n));
        vals.extend_from_slice(values);
        vals.extend_from_slice(values);
        let scale = values.iter().fold(0.0f64, |x, v| x.max(v.abs()));
        solve_shifted(
            &mut self.lu,
            &self.pattern,
            &self.slot,
            &vals,
            self.n,
            scale,
            b,
        )
    }
}

impl MinNormSystem {
    /// Factorises the augmented system for the entries `values` of `B`
    /// (in the order of the pattern given to [`new`](Self::new)) for any
    /// number of [`solve_factored`](Self::solve_factored) calls: unshifted,
    /// then with the shift of [`min_norm_solve_sparse`] when that is
    /// singular. `false` when both fail or `values` has the wrong length.
    pub fn factor(&mut self, values: &[f64]) -> bool {
        let size = self.n + self.m;
        self.factored = false;
        if self.slot.len() != size + self.n + 2 * values.len() {
            return false;
        }
        let mut assembled = vec![0.0; self.pattern.nnz()];
        let diagonal = std::iter::repeat_n(0.0, size).chain(std::iter::repeat_n(1.0, self.n));
        let blocks = values.iter().chain(values).copied();
        for (&s, v) in self.slot.iter().zip(diagonal.chain(blocks)) {
            assembled[s] += v;
        }
        let scale = values.iter().fold(0.0f64, |x, v| x.max(v.abs()));
        for shift in [0.0, 1e-12 * scale * scale] {
            let mut shifted = assembled.clone();
            for &d in &self.slot[self.n..size] {
                shifted[d] -= shift;
            }
            if self.lu.factor(&self.pattern, &shifted).is_ok() {
                self.factored = true;
                return true;
            }
        }
        false
    }

    /// The minimum-norm solution `y` of `B y = b` with the last
    /// successful [`factor`](Self::factor) call: one pair of triangular solves.
    /// `None` when there is none, `b` does not have `m` entries or the
    /// solution is not finite.
    pub fn solve_factored(&mut self, b: &[f64]) -> Option<Vec<f64>> {
        if !self.factored || b.len() != self.m {
            return None;
        }
        let mut x = vec![0.0; self.n + self.m];
        x[self.n..].copy_from_slice(b);
        self.lu.solve(&mut x);
        x.truncate(self.n);
        x.iter().all(|v| v.is_finite()).then_some(x)
    }
}

/// The `(row, col)` entries of a block of a saddle-point matrix and the
/// row and column of its first entry.
type PlacedBlock<'a> = (&'a [(usize, usize)], usize, usize);

/// The pattern of the `(n + m) × (n + m)` saddle-point matrix: the whole
/// diagonal (for the shift), then every block's entries at its offset; and
/// for every assembled entry its slot.
fn saddle_pattern(n: usize, m: usize, blocks: &[PlacedBlock<'_>]) -> (SparsePattern, Vec<usize>) {
    let size = n + m;
    let mut pairs: Vec<(usize, usize)> = (0..size).map(|i| (i, i)).collect();
    for &(entries, r0, c0) in blocks {
        pairs.extend(entries.iter().map(|&(i, j)| (r0 + i, c0 + j)));
    }
    SparsePattern::new(size, &pairs)
}

/// Sums the assembled values `vals` into their slots and solves the
/// saddle-point system with the right-hand side `(0, b)`: unshifted
/// first, then with `−1e-12·scale²` on the diagonal of the last `m` rows
/// when that is singular. The first `n` entries of the solution.
fn solve_shifted(
    lu: &mut SparseRealLu,
    pattern: &SparsePattern,
    slot: &[usize],
    vals: &[f64],
    n: usize,
    scale: f64,
    b: &[f64],
) -> Option<Vec<f64>> {
    let size = pattern.n();
    let mut values = vec![0.0; pattern.nnz()];
    for (&s, &v) in slot.iter().zip(vals) {
        values[s] += v;
    }
    for shift in [0.0, 1e-12 * scale * scale] {
        let mut shifted = values.clone();
        for &d in &slot[n..size] {
            shifted[d] -= shift;
        }
        if lu.factor(pattern, &shifted).is_ok() {
            let mut x = vec![0.0; size];
            x[n..].copy_from_slice(b);
            lu.solve(&mut x);
            x.truncate(n);
            if x.iter().all(|v| v.is_finite()) {
                return Some(x);
            }
        }
    }
    None
}

/// The `y` part of the solution of the sparse saddle-point system
///
/// ```text
///   [ A   K  ] [ y ]   [ 0 ]
///   [ B  −εI ] [ μ ] = [ b ]
/// ```
///
/// (`A` is `n × n`, `K` is `n × m`, `B` is `m × n`, each given as
/// `(row, col, value)` entries, duplicates summed): the correction `y`
/// along the directions `−A⁻¹K` that satisfies `B y = b`. With `A = I`,
/// `K = Bᵀ` it is the minimum-norm correction of
/// [`min_norm_solve_sparse`]; with the mass matrix and the multipliers'
/// columns it is the projection of projected Runge–Kutta methods
/// (projected-rk-index3-daes, eq. (2.8)). Solved by the sparse LU,
/// `ε = 0` first, then `ε = 1e-12·max|B|²` when that is singular
/// (dependent rows). `None` if that fails too, an entry lies outside its
/// block or `b` does not have `m` entries.
pub fn saddle_point_solve_sparse(
    n: usize,
    m: usize,
    a: &[(usize, usize, f64)],
    k: &[(usize, usize, f64)],
    b_mat: &[(usize, usize, f64)],
    b: &[f64],
) -> Option<Vec<f64>> {
    let outside = |e: &[(usize, usize, f64)], rows: usize, cols: usize| {
        e.iter().any(|&(i, j, _)| i >= rows || j >= cols)
    };
    if b.len() != m || outside(a, n, n) || outside(k, n, m) || outside(b_mat, m, n) {
        return None;
    }
    let pairs = |e: &[(usize, usize, f64)]| -> Vec<(usize, usize)> {
        e.iter().map(|&(i, j, _)| (i, j)).collect()
    };
    let (pa, pk, pb) = (pairs(a), pairs(k), pairs(b_mat));
    let (pattern, slot) = saddle_pattern(n, m, &[(&pa, 0, 0), (&pk, 0, n), (&pb, n, 0)]);
    let mut vals = vec![0.0; n + m];
    vals.extend(a.iter().chain(k).chain(b_mat).map(|e| e.2));
    let scale = b_mat.iter().fold(0.0f64, |x, e| x.max(e.2.abs()));
    let mut lu = SparseRealLu::new(&pattern);
    solve_shifted(&mut lu, &pattern, &slot, &vals, n, scale, b)
}

#[cfg(test)]
mod min_norm_tests {
    use super::{MinNormSystem, min_norm_solve_sparse, saddle_point_solve_sparse};

    #[test]
    fn a_min_norm_system_solves_again_with_new_values_of_its_pattern() {
        // B (2 × 4) with a duplicate entry, solved for three sets of values
        // with one symbolic analysis: each the one-shot solution, bit for bit
        let pattern = [(0, 0), (0, 1), (1, 1), (1, 2), (1, 2), (1, 3), (0, 3)];
        let mut system = MinNormSystem::new(2, 4, &pattern).expect("inside 2 × 4");
        for s in [1.0, -0.5, 3.0] {
            let values: Vec<f64> = (0..pattern.len()).map(|k| s + k as f64).collect();
            let entries: Vec<(usize, usize, f64)> = pattern
                .iter()
                .zip(&values)
                .map(|(&(i, k), &v)| (i, k, v))
                .collect();
            let b = [1.0, s];
            let y = system.solve(&values, &b).expect("full row rank");
            let once = min_norm_solve_sparse(2, 4, &entries, &b).expect("full row rank");
            assert_eq!(y, once);
            // one factorisation, several right-hand sides: the same solution
            assert!(system.factor(&values));
            assert_eq!(system.solve_factored(&b), Some(y.clone()));
            let twice = system.solve_factored(&[2.0, 2.0 * s]).expect("factored");
            for (t, y) in twice.iter().zip(&y) {
                assert!((t - 2.0 * y).abs() < 1e-12, "{t} vs 2·{y}");
            }
            // B y = b
            let mut by = [0.0; 2];
            for &(i, k, v) in &entries {
                by[i] += v * y[k];
            }
            assert!(
                (by[0] - b[0]).abs() < 1e-12 && (by[1] - b[1]).abs() < 1e-12,
                "{by:?}"
            );
        }
        // wrong lengths and entries outside B
        assert_eq!(system.solve(&[1.0], &[1.0, 1.0]), None);
        // no factorisation after a failed or one-shot one
        assert!(!system.factor(&[1.0]));
        assert_eq!(system.solve_factored(&[1.0, 1.0]), None);
        assert_eq!(system.solve(&[1.0; 7], &[1.0]), None);
        assert!(MinNormSystem::new(2, 4, &[(2, 0)]).is_none());
    }

    #[test]
    fn saddle_point_correction_lies_along_the_direction_and_satisfies_the_constraint() {
        // A = [[2, 1, 0], [1, 4, 0], [0, 0, 1]], K = (1, −1, 2)ᵀ,
        // B = (1, 1, 1), b = 3: y = −A⁻¹K μ with B y = 3.
        let a = [
            (0, 0, 2.0),
            (0, 1, 1.0),
            (1, 0, 1.0),
            (1, 1, 4.0),
            (2, 2, 1.0),
        ];
        let k = [(0, 0, 1.0), (1, 0, -1.0), (2, 0, 2.0)];
        let b = [(0, 0, 1.0), (0, 1, 1.0), (0, 2, 1.0)];
        let y = saddle_point_solve_sparse(3, 1, &a, &k, &b, &[3.0]).expect("regular");
        assert!((y.iter().sum::<f64>() - 3.0).abs() < 1e-12, "{y:?}");
        // A y = −μ K: parallel to K = (1, −1, 2)
        let ay = [2.0 * y[0] + y[1], y[0] + 4.0 * y[1], y[2]];
        let mu = -ay[0];
        for (v, kv) in ay.iter().zip([1.0, -1.0, 2.0]) {
            assert!((v + mu * kv).abs() < 1e-12, "A y = {ay:?}");
        }
        // the Euclidean least change would differ: y is not parallel to Bᵀ
        assert!((y[0] - y[1]).abs() > 0.1, "{y:?}");
        // blocks out of range, a wrong right-hand side
        assert_eq!(
            saddle_point_solve_sparse(3, 1, &a, &k, &[(1, 0, 1.0)], &[3.0]),
            None
        );
        assert_eq!(
            saddle_point_solve_sparse(3, 1, &a, &k, &b, &[3.0, 1.0]),
            None
        );
    }

    #[test]
    fn sparse_min_norm_solution_solves_and_lies_in_the_row_space() {
        // B (3 × 5), full row rank, with a duplicate entry (summed):
        // rows (1, 2, 0, 0, 0), (0, −1, 4, 0, 0), (1.5, 0, 0, 0.5, −2)
        let entries = [
            (0, 0, 1.0),
            (0, 1, 2.0),
            (1, 1, -1.0),
            (1, 2, 3.0),
            (1, 2, 1.0),
            (2, 3, 0.5),
            (2, 4, -2.0),
            (2, 0, 1.5),
        ];
        let b = [1.0, -2.0, 0.25];
        let y = min_norm_solve_sparse(3, 5, &entries, &b).expect("solves");
        let mut by = [0.0; 3];
        for &(i, k, v) in &entries {
            by[i] += v * y[k];
        }
        for i in 0..3 {
            assert!((by[i] - b[i]).abs() < 1e-12, "row {i}: {by:?}");
        }
        // the least-norm solution is orthogonal to the null space of B
        for x in [[-8.0, 4.0, 1.0, 24.0, 0.0], [0.0, 0.0, 0.0, 4.0, 1.0]] {
            let mut bx = [0.0; 3];
            for &(i, k, v) in &entries {
                bx[i] += v * x[k];
            }
            assert!(bx.iter().all(|v| v.abs() < 1e-12), "{bx:?}");
            let dot: f64 = y.iter().zip(&x).map(|(a, b)| a * b).sum();
            assert!(dot.abs() < 1e-12, "{dot}");
        }
        // a repeated row: the shifted normal equations still solve
        let rep = [(0, 0, 1.0), (0, 1, 1.0), (1, 0, 1.0), (1, 1, 1.0)];
        let y = min_norm_solve_sparse(2, 2, &rep, &[2.0, 2.0]).expect("regularised");
        assert!(
            (y[0] - 1.0).abs() < 1e-6 && (y[1] - 1.0).abs() < 1e-6,
            "{y:?}"
        );
        // out of range
        assert_eq!(min_norm_solve_sparse(1, 1, &[(0, 3, 1.0)], &[1.0]), None);
    }
}
