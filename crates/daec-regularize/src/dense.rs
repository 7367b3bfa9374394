//! Small dense linear algebra for the analysis: LU with complete pivoting
//! (rank, determinant, null vectors) and least-norm solves. Sizes here are
//! those of a success check or a constraint block, not of a simulation.

// Index loops read best in matrix code.
#![allow(clippy::needless_range_loop)]

/// A dense row-major matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix {
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Entries, row-major.
    pub data: Vec<f64>,
}

impl Matrix {
    /// An all-zero matrix.
    pub fn zeros(rows: usize, cols: usize) -> Matrix {
        Matrix {
            rows,
            cols,
            data: vec![0.0; rows * cols],
        }
    }

    /// Entry `(i, j)`.
    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.data[i * self.cols + j]
    }

    /// Sets entry `(i, j)`.
    pub fn set(&mut self, i: usize, j: usize, v: f64) {
        self.data[i * self.cols + j] = v;
    }

    /// The transpose.
    pub fn transpose(&self) -> Matrix {
        let mut t = Matrix::zeros(self.cols, self.rows);
        for i in 0..self.rows {
            for j in 0..self.cols {
                t.set(j, i, self.get(i, j));
            }
        }
        t
    }

    /// The largest absolute entry.
    pub fn max_abs(&self) -> f64 {
        self.data.iter().fold(0.0, |m, x| m.max(x.abs()))
    }
}

/// Row and column scalings `R`, `C` (powers of two, so exact) that bring
/// every row and column of `R A C` to a largest magnitude near 1 (Ruiz's
/// iterative equilibration): a rank decision by relative pivot size is
/// then independent of the units of the equations and unknowns. Returns
/// `(R A C, R, C)` as diagonals; zero rows and columns keep the scale 1.
pub fn equilibrate(a: &Matrix) -> (Matrix, Vec<f64>, Vec<f64>) {
    let (m, n) = (a.rows, a.cols);
    let mut s = a.clone();
    let mut r = vec![1.0; m];
    let mut c = vec![1.0; n];
    // the power of two nearest to 1/sqrt(x): a step of Ruiz's iteration
    let step = |x: f64| -> f64 {
        if x > 0.0 && x.is_finite() {
            (-0.5 * x.log2()).round().exp2()
        } else {
            1.0
        }
    };
    for _ in 0..20 {
        let mut changed = false;
        for i in 0..m {
            let f = step((0..n).fold(0.0f64, |acc, j| acc.max(s.get(i, j).abs())));
            if f != 1.0 {
                changed = true;
                r[i] *= f;
                (0..n).for_each(|j| s.set(i, j, s.get(i, j) * f));
            }
        }
        for j in 0..n {
            let f = step((0..m).fold(0.0f64, |acc, i| acc.max(s.get(i, j).abs())));
            if f != 1.0 {
                changed = true;
                c[j] *= f;
                (0..m).for_each(|i| s.set(i, j, s.get(i, j) * f));
            }
        }
        if !changed {
            break;
        }
    }
    (s, r, c)
}

/// `x · 2^e`, exact unless the result over- or underflows (in steps the
/// exponent range of `f64` allows, so an intermediate never does first).
pub fn scale_by_power_of_two(mut x: f64, mut e: i64) -> f64 {
    while e != 0 && x != 0.0 && x.is_finite() {
        let k = e.clamp(-1000, 1000);
        x *= 2f64.powi(k as i32);
        e -= k;
    }
    x
}

/// LU factorisation with complete pivoting: `P A Q = L U`.
#[derive(Clone, Debug)]
pub struct FullPivLu {
    lu: Matrix,
    row_perm: Vec<usize>,
    col_perm: Vec<usize>,
    /// Numerical rank (pivots above the relative tolerance).
    pub rank: usize,
    sign: f64,
}

/// The largest `|v|` of `row` from column `j0` and where: the first of
/// the largest (NaN entries never are); `(-1, j0)` when there is none.
fn row_largest(row: &[f64], j0: usize) -> (f64, usize) {
    let mut best = (-1.0, j0);
    for (j, &v) in row.iter().enumerate().skip(j0) {
        if v.abs() > best.0 {
            best = (v.abs(), j);
        }
    }
    best
}

/// The largest of the rows' largest entries `row_max` (`(|v|, column)`
/// of each row) from row `i0`, and where: the first in row-major order of
/// the largest entries of the matrix, as a scan of every entry finds it;
/// `(-1, i0, j0)` when there is none.
fn largest(row_max: &[(f64, usize)], i0: usize, j0: usize) -> (f64, usize, usize) {
    let mut best = (-1.0, i0, j0);
    for (i, &(v, j)) in row_max.iter().enumerate().skip(i0) {
        if v > best.0 {
            best = (v, i, j);
        }
    }
    best
}

/// Step `k` of the LU factorisation of the row-major `data` (`n` columns,
/// the pivot at `(k, k)`, brought there by swapping column `k` with
/// column `pj`): the multipliers into column `k` below the pivot, the
/// rows below updated; returns the next pivot, the largest entry of the
/// rows and columns after `k` ([`largest`]).
///
/// `row_max` holds every row's largest entry from column `k` as it was
/// before the swap, and is brought to the columns after `k`: a row the
/// step changes (a nonzero multiplier) is scanned again; so is an
/// unchanged row whose largest entry was in column `k` or `pj` (the swap
/// moved it); any other row's largest entry is where it was, and the
/// first of its row still: the entry the swap put at `pj` came from
/// column `k`, before it, so it was smaller. On a sparse matrix most
/// rows are unchanged, and the search for the complete pivot costs a
/// pass over the rows instead of one over the entries; the pivots, and
/// so every value, are those of a scan of every entry.
fn eliminate(
    data: &mut [f64],
    n: usize,
    (k, pj): (usize, usize),
    row_max: &mut [(f64, usize)],
) -> (f64, usize, usize) {
    let (top, rest) = data.split_at_mut((k + 1) * n);
    let pivot_row = &top[k * n..];
    let p = pivot_row[k];
    for (r, row) in rest.chunks_exact_mut(n).enumerate() {
        let f = row[k] / p;
        row[k] = f;
        let max = &mut row_max[k + 1 + r];
        if f != 0.0 {
            for (v, &u) in row[k + 1..].iter_mut().zip(&pivot_row[k + 1..]) {
                *v -= f * u;
            }
            *max = row_largest(row, k + 1);
        } else if max.1 <= k || max.1 == pj {
            *max = row_largest(row, k + 1);
        }
    }
    largest(row_max, k + 1, k + 1)
}

impl FullPivLu {
    /// Factorises `a`; pivots below `rel_tol · max|a|` count as zero.
    pub fn new(a: &Matrix, rel_tol: f64) -> FullPivLu {
        let (m, n) = (a.rows, a.cols);
        let mut lu = a.clone();
        let mut row_perm: Vec<usize> = (0..m).collect();
        let mut col_perm: Vec<usize> = (0..n).collect();
        let tol = rel_tol * a.max_abs().max(f64::MIN_POSITIVE);
        let mut sign = 1.0;
        let mut rank = 0;
        // (the pivot of each step is found from the rows' largest
        // entries, which the step before keeps up to date)
        let mut row_max: Vec<(f64, usize)> = if n == 0 {
            vec![(-1.0, 0); m]
        } else {
            lu.data.chunks_exact(n).map(|r| row_largest(r, 0)).collect()
        };
        let mut next = largest(&row_max, 0, 0);
        for k in 0..m.min(n) {
            let (best, pi, pj) = next;
            if best.is_nan() || best <= tol {
                break;
            }
            if pi != k {
                for j in 0..n {
                    lu.data.swap(k * n + j, pi * n + j);
                }
                row_perm.swap(k, pi);
                row_max.swap(k, pi);
                sign = -sign;
            }
            if pj != k {
                for i in 0..m {
                    lu.data.swap(i * n + k, i * n + pj);
                }
                col_perm.swap(k, pj);
                sign = -sign;
            }
            next = eliminate(&mut lu.data, n, (k, pj), &mut row_max);
            rank += 1;
        }
        FullPivLu {
            lu,
            row_perm,
            col_perm,
            rank,
            sign,
        }
    }

    /// The determinant (0 when rank-deficient; square matrices only).
    pub fn determinant(&self) -> f64 {
        if self.lu.rows != self.lu.cols || self.rank < self.lu.rows {
            return 0.0;
        }
        (0..self.rank).fold(self.sign, |d, k| d * self.lu.get(k, k))
    }

    /// The absolute pivots, largest first (a cheap conditioning indicator).
    pub fn pivots(&self) -> Vec<f64> {
        (0..self.rank).map(|k| self.lu.get(k, k).abs()).collect()
    }

    /// A unit null vector `x` with `A x ≈ 0` (None when of full column rank).
    pub fn null_vector(&self) -> Option<Vec<f64>> {
        let n = self.lu.cols;
        let r = self.rank;
        if r >= n {
            return None;
        }
        // Solve U[:r,:r] y = -U[:r, r] with the free variable y_r = 1.
        let mut y = vec![0.0; n];
        y[r] = 1.0;
        for k in (0..r).rev() {
            let mut s = -self.lu.get(k, r);
            for j in k + 1..r {
                s -= self.lu.get(k, j) * y[j];
            }
            y[k] = s / self.lu.get(k, k);
        }
        let mut x = vec![0.0; n];
        for (k, &c) in self.col_perm.iter().enumerate() {
            x[c] = y[k];
        }
        let norm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
        Some(x.into_iter().map(|v| v / norm).collect())
    }

    /// Solves `A x = b` for square nonsingular `A`.
    pub fn solve(&self, b: &[f64]) -> Option<Vec<f64>> {
        let n = self.lu.rows;
        if self.lu.cols != n || self.rank < n {
            return None;
        }
        let mut y: Vec<f64> = self.row_perm.iter().map(|&i| b[i]).collect();
        for i in 0..n {
            for k in 0..i {
                y[i] -= self.lu.get(i, k) * y[k];
            }
        }
        for i in (0..n).rev() {
            for k in i + 1..n {
                y[i] -= self.lu.get(i, k) * y[k];
            }
            y[i] /= self.lu.get(i, i);
        }
        let mut x = vec![0.0; n];
        for (k, &c) in self.col_perm.iter().enumerate() {
            x[c] = y[k];
        }
        Some(x)
    }
}

/// The least-norm solution of `B y = b` for a Gauss–Newton projection:
/// the minimum-norm solution by a Householder QR factorisation of
/// `Bᵀ` (without forming `B Bᵀ`, whose condition number is the square
/// of `B`'s), or — when `B` is rank deficient, e.g.
/// with a repeated constraint — the regularised normal equations
/// `(B Bᵀ + ε I) μ = b`, `y = Bᵀ μ` with `ε = 1e-12·max|B Bᵀ|`. `None` if
/// those are singular too.
pub fn least_norm_solve(b_mat: &Matrix, b: &[f64]) -> Option<Vec<f64>> {
    let mut factor = LeastNormFactor::default();
    if !factor.factor(b_mat) {
        return None;
    }
    let mut y = vec![0.0; b_mat.cols];
    factor.solve(b, &mut y).then_some(y)
}

/// How a [`LeastNormFactor`] holds `B`.
#[derive(Clone, Debug, Default)]
enum LeastNormKind {
    /// No factorisation (none made, or `B` singular even regularised).
    #[default]
    None,
    /// The Householder QR factorisation of `Bᵀ`.
    Qr,
    /// `B` and the LU factorisation of `B Bᵀ + ε I`.
    Normal(Matrix, FullPivLu),
}

/// The factorisation of [`least_norm_solve`] kept for any number of
/// solves with the same `m × n` matrix `B` and different right-hand sides
/// (the simplified Gauss–Newton iteration of a projection, Hairer–Wanner
/// II, VII.2, reuses one Jacobian): the same values as
/// [`least_norm_solve`], and no allocation once its arrays have reached
/// the size of `B` (except when `B` is rank deficient and the regularised
/// normal equations replace the QR factorisation).
#[derive(Clone, Debug, Default)]
pub struct LeastNormFactor {
    m: usize,
    n: usize,
    /// `B`'s rows after the reflections: row `j` is column `j` of the
    /// transformed `Bᵀ`, whose first `j + 1` entries are column `j` of `R`.
    qr: Vec<f64>,
    /// The reflection vector of step `k` at `k·n`, `n − k` entries.
    v: Vec<f64>,
    /// The squared norm of each reflection vector.
    vnorm2: Vec<f64>,
    kind: LeastNormKind,
}

impl LeastNormFactor {
    /// Factorises `b_mat` (`m × n`): by QR when it has full row rank,
    /// else by the regularised normal equations of [`least_norm_solve`].
    /// `false` when those are singular too; [`solve`](Self::solve) fails
    /// then.
    pub fn factor(&mut self, b_mat: &Matrix) -> bool {
        if self.factor_qr(b_mat) {
            return true;
        }
        let (m, n) = (b_mat.rows, b_mat.cols);
        let mut a = Matrix::zeros(m, m);
        for i in 0..m {
            for l in 0..m {
                let s: f64 = (0..n).map(|k| b_mat.get(i, k) * b_mat.get(l, k)).sum();
                a.set(i, l, s);
            }
        }
        let eps = 1e-12 * a.max_abs().max(1e-300);
        for i in 0..m {
            a.set(i, i, a.get(i, i) + eps);
        }
        let lu = FullPivLu::new(&a, 1e-16);
        if lu.rank < m {
            return false;
        }
        self.kind = LeastNormKind::Normal(b_mat.clone(), lu);
        true
    }

    /// The Householder QR factorisation of `Bᵀ` (`B` = `b_mat`, m × n).
    /// Column `k` of `Bᵀ` is row `k` of `B`, so the factorisation works on
    /// `B`'s rows in place: contiguous in memory. `false` when `m > n` or
    /// a column of `R` is (numerically) zero: `B` rank deficient.
    fn factor_qr(&mut self, b_mat: &Matrix) -> bool {
        let (m, n) = (b_mat.rows, b_mat.cols);
        (self.m, self.n) = (m, n);
        self.kind = LeastNormKind::None;
        if m > n {
            return false;
        }
        let a = &mut self.qr;
        a.clear();
        a.extend_from_slice(&b_mat.data);
        self.v.clear();
        self.v.resize(m * n, 0.0);
        self.vnorm2.clear();
        let scale = b_mat.max_abs().max(f64::MIN_POSITIVE);
        for k in 0..m {
            let col = &a[k * n + k..(k + 1) * n];
            let norm = col.iter().map(|x| x * x).sum::<f64>().sqrt();
            if norm <= 1e-13 * scale {
                return false;
            }
            let alpha = if col[0] > 0.0 { -norm } else { norm };
            let v = &mut self.v[k * n..k * n + n - k];
            v.copy_from_slice(col);
            v[0] -= alpha;
            let vnorm2: f64 = v.iter().map(|x| x * x).sum();
            if vnorm2 > 0.0 {
                for j in k..m {
                    let cj = &mut a[j * n + k..(j + 1) * n];
                    let dot: f64 = v.iter().zip(cj.iter()).map(|(x, y)| x * y).sum();
                    let f = 2.0 * dot / vnorm2;
                    for (y, x) in cj.iter_mut().zip(v.iter()) {
                        *y -= f * x;
                    }
                }
            }
            self.vnorm2.push(vnorm2);
        }
        self.kind = LeastNormKind::Qr;
        true
    }

    /// The least-norm solution `y` (`n` entries) of `B y = b` (`m`
    /// entries) with the last factorisation. `false` (and `y` unspecified)
    /// when there is none or the lengths do not fit.
    pub fn solve(&self, b: &[f64], y: &mut [f64]) -> bool {
        let (m, n) = (self.m, self.n);
        if b.len() != m || y.len() != n {
            return false;
        }
        match &self.kind {
            LeastNormKind::None => false,
            LeastNormKind::Normal(b_mat, lu) => {
                let Some(mu) = lu.solve(b) else {
                    return false;
                };
                for (k, yk) in y.iter_mut().enumerate() {
                    *yk = (0..m).map(|i| b_mat.get(i, k) * mu[i]).sum();
                }
                true
            }
            LeastNormKind::Qr => {
                // R[k][j] (j ≥ k) is entry k of the transformed column j:
                // qr[j·n + k]. Rᵀ s = b by forward substitution.
                let (a, s) = (&self.qr, y);
                s.fill(0.0);
                for i in 0..m {
                    let ci = &a[i * n..i * n + i + 1];
                    let acc = b[i] - ci[..i].iter().zip(&s[..i]).map(|(r, x)| r * x).sum::<f64>();
                    s[i] = acc / ci[i];
                }
                // y = Q s = H_0 H_1 … H_{m−1} s.
                for k in (0..m).rev() {
                    let vnorm2 = self.vnorm2[k];
                    if vnorm2 == 0.0 {
                        continue;
                    }
                    let v = &self.v[k * n..k * n + n - k];
                    let tail = &mut s[k..];
                    let dot: f64 = v.iter().zip(tail.iter()).map(|(x, y)| x * y).sum();
                    let f = 2.0 * dot / vnorm2;
                    for (y, x) in tail.iter_mut().zip(v) {
                        *y -= f * x;
                    }
                }
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(rows: usize, cols: usize, d: &[f64]) -> Matrix {
        Matrix {
            rows,
            cols,
            data: d.to_vec(),
        }
    }

    #[test]
    fn the_pivots_from_row_maxima_are_those_of_full_scans_on_sparse_matrices() {
        // sparse and dense matrices of small integers (many ties),
        // some with NaN entries, rank-deficient ones and rectangular ones
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for case in 0..400 {
            let (m, n) = (1 + (next() % 12) as usize, 1 + (next() % 12) as usize);
            let (m, n) = if case % 3 == 0 { (m, n) } else { (n, n) };
            let density = next() % 4;
            let mut a = Matrix::zeros(m, n);
            for v in a.data.iter_mut() {
                if next() % 4 < density.max(1) {
                    *v = (next() % 7) as f64 - 3.0;
                }
            }
            if case % 17 == 0 {
                a.data[(next() as usize) % (m * n)] = f64::NAN;
            }
            if case % 5 == 0 && m > 1 {
                // a repeated row
                for j in 0..n {
                    a.set(m - 1, j, a.get(0, j));
                }
            }
            let lu = FullPivLu::new(&a, 1e-10);
            let (data, rows, cols, rank) = reference(&a, 1e-10);
            let bits = |d: &[f64]| d.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&lu.lu.data), bits(&data), "case {case}: {a:?}");
            assert_eq!((&lu.row_perm, &lu.col_perm, lu.rank), (&rows, &cols, rank));
        }
    }

    #[test]
    fn determinant_rank_and_solve() {
        let a = m(3, 3, &[2.0, 1.0, 0.0, 1.0, 3.0, 1.0, 0.0, 1.0, 4.0]);
        let lu = FullPivLu::new(&a, 1e-12);
        assert_eq!(lu.rank, 3);
        assert!((lu.determinant() - 18.0).abs() < 1e-12);
        let x = lu.solve(&[3.0, 5.0, 5.0]).unwrap();
        for (xi, want) in x.iter().zip([1.0, 1.0, 1.0]) {
            assert!((xi - want).abs() < 1e-12);
        }
    }

    /// The minimum-norm solution of the underdetermined system `B y = b`
    /// (`B` is m × n with m ≤ n and full row rank) by a Householder QR
    /// factorisation of `Bᵀ` — without forming `B Bᵀ`, whose condition number is
    /// the square of `B`'s. `None` when `B` is (numerically) rank-deficient.
    fn min_norm_solve(b_mat: &Matrix, b: &[f64]) -> Option<Vec<f64>> {
        let mut factor = LeastNormFactor::default();
        if !factor.factor_qr(b_mat) {
            return None;
        }
        let mut y = vec![0.0; b_mat.cols];
        factor.solve(b, &mut y).then_some(y)
    }

    #[test]
    fn min_norm_solution_of_an_underdetermined_system() {
        // x + y + z = 3 has the minimum-norm solution (1, 1, 1).
        let b = m(1, 3, &[1.0, 1.0, 1.0]);
        let y = min_norm_solve(&b, &[3.0]).unwrap();
        for v in &y {
            assert!((v - 1.0).abs() < 1e-14, "{y:?}");
        }
        // Two rows: the solution satisfies both and is orthogonal to the
        // null space (1, -1, 1)·… checked through the residual and norm.
        let b = m(2, 3, &[1.0, 2.0, 0.0, 0.0, 1.0, 1.0]);
        let y = min_norm_solve(&b, &[1.0, 2.0]).unwrap();
        assert!((y[0] + 2.0 * y[1] - 1.0).abs() < 1e-14);
        assert!((y[1] + y[2] - 2.0).abs() < 1e-14);
        // Null space of b is (2, -1, 1): the minimum-norm y is orthogonal to it.
        assert!((2.0 * y[0] - y[1] + y[2]).abs() < 1e-14, "{y:?}");
        assert!(min_norm_solve(&m(2, 2, &[1.0, 1.0, 1.0, 1.0]), &[1.0, 1.0]).is_none());
    }

    #[test]
    fn a_kept_least_norm_factor_solves_as_the_one_shot_solve() {
        // full row rank (QR), a repeated row (regularised normal
        // equations), a wide one; one factor object reused across sizes
        let cases = [
            m(2, 3, &[1.0, 2.0, 0.0, 0.0, 1.0, 1.0]),
            m(3, 3, &[1.0, 2.0, 0.0, 1.0, 2.0, 0.0, 0.0, 1.0, 1.0]),
            m(1, 4, &[0.5, -1.0, 2.0, 0.25]),
        ];
        let mut factor = LeastNormFactor::default();
        for b in &cases {
            assert!(factor.factor(b));
            for k in 0..3 {
                let rhs: Vec<f64> = (0..b.rows).map(|i| (i + k) as f64 - 1.0).collect();
                let rhs = if b.rows == 3 {
                    // consistent with the repeated row
                    vec![rhs[0], rhs[0], rhs[2]]
                } else {
                    rhs
                };
                let mut y = vec![f64::NAN; b.cols];
                assert!(factor.solve(&rhs, &mut y));
                let once = least_norm_solve(b, &rhs).unwrap();
                let bits = |d: &[f64]| d.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&y), bits(&once), "{b:?}");
                for i in 0..b.rows {
                    let r: f64 = (0..b.cols).map(|j| b.get(i, j) * y[j]).sum();
                    assert!((r - rhs[i]).abs() < 1e-9, "{b:?} row {i}: {r} ≠ {}", rhs[i]);
                }
            }
            // wrong lengths are refused, not a panic
            assert!(!factor.solve(&[1.0; 7], &mut vec![0.0; b.cols]));
        }
        // the minimum norm: orthogonal to the null space (2, −1, 1) of
        // the first case
        assert!(factor.factor(&cases[0]));
        let mut y = vec![0.0; 3];
        assert!(factor.solve(&[1.0, 2.0], &mut y));
        assert!((2.0 * y[0] - y[1] + y[2]).abs() < 1e-14, "{y:?}");
        // no factorisation yet: no solve
        assert!(!LeastNormFactor::default().solve(&[], &mut []));
    }

    /// The factorisation as `FullPivLu::new` computed it with a separate
    /// search for each pivot.
    fn reference(a: &Matrix, rel_tol: f64) -> (Vec<f64>, Vec<usize>, Vec<usize>, usize) {
        let (m, n) = (a.rows, a.cols);
        let mut lu = a.clone();
        let (mut rows, mut cols): (Vec<usize>, Vec<usize>) = ((0..m).collect(), (0..n).collect());
        let tol = rel_tol * a.max_abs().max(f64::MIN_POSITIVE);
        let mut rank = 0;
        for k in 0..m.min(n) {
            let (mut pi, mut pj, mut best) = (k, k, -1.0);
            for i in k..m {
                for j in k..n {
                    if lu.get(i, j).abs() > best {
                        (best, pi, pj) = (lu.get(i, j).abs(), i, j);
                    }
                }
            }
            if best.is_nan() || best <= tol {
                break;
            }
            for j in 0..n {
                lu.data.swap(k * n + j, pi * n + j);
            }
            rows.swap(k, pi);
            for i in 0..m {
                lu.data.swap(i * n + k, i * n + pj);
            }
            cols.swap(k, pj);
            let p = lu.get(k, k);
            for i in k + 1..m {
                let f = lu.get(i, k) / p;
                lu.set(i, k, f);
                if f != 0.0 {
                    for j in k + 1..n {
                        lu.set(i, j, lu.get(i, j) - f * lu.get(k, j));
                    }
                }
            }
            rank += 1;
        }
        (lu.data, rows, cols, rank)
    }

    #[test]
    fn the_fused_pivot_search_factorises_as_a_separate_one() {
        // (pseudo-random entries, ties, zeros, a NaN, rank deficiency,
        // rectangular shapes)
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ((x % 2001) as f64 - 1000.0) / 250.0
        };
        let mut cases: Vec<Matrix> = Vec::new();
        for (r, c) in [(1, 1), (3, 3), (7, 7), (12, 12), (5, 9), (9, 5), (40, 40)] {
            let d: Vec<f64> = (0..r * c).map(|_| next()).collect();
            cases.push(m(r, c, &d));
            let ties: Vec<f64> = (0..r * c).map(|k| [1.0, -1.0, 0.0, 2.0][k % 4]).collect();
            cases.push(m(r, c, &ties));
        }
        cases.push(m(3, 3, &[1.0, 2.0, 3.0, 2.0, 4.0, 6.0, f64::NAN, 1.0, 0.0]));
        cases.push(m(2, 3, &[0.0; 6]));
        cases.push(m(0, 0, &[]));
        for a in &cases {
            let lu = FullPivLu::new(a, 1e-10);
            let (data, rows, cols, rank) = reference(a, 1e-10);
            let bits = |d: &[f64]| d.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&lu.lu.data), bits(&data), "{a:?}");
            assert_eq!((&lu.row_perm, &lu.col_perm, lu.rank), (&rows, &cols, rank));
        }
    }

    #[test]
    fn null_vector_of_singular_matrix() {
        // Rows 1 and 2 equal: the cancellation example's Σ-Jacobian.
        let a = m(2, 2, &[1.0, 1.0, 1.0, 1.0]);
        let lu = FullPivLu::new(&a, 1e-12);
        assert_eq!(lu.rank, 1);
        assert_eq!(lu.determinant(), 0.0);
        let v = FullPivLu::new(&a.transpose(), 1e-12).null_vector().unwrap();
        assert!((v[0] + v[1]).abs() < 1e-12, "{v:?}");
        assert!((v[0].abs() - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-12);
    }
}
