//! LU factorisations (partial pivoting) of the real and the complex
//! iteration matrices of the Radau IIA simplified Newton method
//! (Hairer–Wanner, Solving ODEs II, IV.8).
//!
//! The systems are small for most models (a handful to a hundred
//! unknowns), where an allocation-free row-major LU is faster than a
//! general library call (RADAU5's DECC/DEC are such loops too); only
//! systems beyond [`FAER_THRESHOLD`] go through `faer`'s dense LU, and
//! large ones (more than [`SPARSE_THRESHOLD`] unknowns, unless the dense
//! solver is asked for) through `faer`'s sparse LU on the fixed pattern of
//! the problem ([`sparse`]).

use faer::Mat;
use faer::c64;
use faer::linalg::solvers::{PartialPivLu, Solve};

pub mod sparse;

pub use sparse::{
    MinNormSystem, PARALLEL_LU_MIN, PIVOT_THRESHOLD, SparseNewtonSystem, SparsePattern,
    SparseRealLu, min_norm_solve_sparse, saddle_point_solve_sparse,
};

/// Systems with more unknowns than this are factorised by `faer`; up to
/// it by the row-major loops of this module. Measured with one
/// factorisation and four solves (the work of a step with a reused
/// matrix), the own loops take 0.4–0.8 of `faer`'s time at every order
/// from 25 to 160: `faer` copies the matrix into its column-major storage
/// and allocates its factors and every right-hand side, which at these
/// orders costs more than its blocking saves. The dense path ends at
/// [`SPARSE_THRESHOLD`] by default, so `faer`'s dense LU serves only a
/// large system the dense solver is asked for.
pub const FAER_THRESHOLD: usize = 160;

/// Systems with more unknowns than this use the sparse LU (and the sparse
/// equation selection) unless [`crate::radau5::Options::linear_solver`]
/// says otherwise. Chosen by measurement on chain-like DAEs (pendulum
/// chains, `crates/daec-sim/benches/simulate.rs`): from about this size on
/// the sparse factorisation is faster than the dense one even for the
/// densest iteration matrices of the regularised forms.
pub const SPARSE_THRESHOLD: usize = 100;

/// Error of a factorisation: the matrix is (numerically) singular; the
/// payload is the column (variable) whose pivot vanished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Singular(pub usize);

/// Orders up to this are factorised and solved by code
/// specialised to the order (const generics: the loops are unrolled and the
/// bounds checks vanish), the small systems of chemical kinetics and
/// mechanics (the factorisations up to `FIXED_FACTOR_MAX`, 32). Same
/// operations in the same order as the general loops (kept as the
/// reference the tests compare with), so the results are identical bit
/// for bit.
pub const FIXED_MAX: usize = 24;
const _: () = assert!(
    FIXED_MAX == 24 && FIXED_MAX <= FAER_THRESHOLD,
    "with_fixed_order! and for_each_step! list the orders 1 to 24"
);

/// Calls `$f::<N>(args)` for the order `$n` when `1 ≤ $n ≤ FIXED_MAX`;
/// evaluates to `None` otherwise.
macro_rules! with_fixed_order {
    ($n:expr, $f:ident($($arg:expr),*)) => {
        match $n {
            1 => Some($f::<1>($($arg),*)),
            2 => Some($f::<2>($($arg),*)),
            3 => Some($f::<3>($($arg),*)),
            4 => Some($f::<4>($($arg),*)),
            5 => Some($f::<5>($($arg),*)),
            6 => Some($f::<6>($($arg),*)),
            7 => Some($f::<7>($($arg),*)),
            8 => Some($f::<8>($($arg),*)),
            9 => Some($f::<9>($($arg),*)),
            10 => Some($f::<10>($($arg),*)),
            11 => Some($f::<11>($($arg),*)),
            12 => Some($f::<12>($($arg),*)),
            13 => Some($f::<13>($($arg),*)),
            14 => Some($f::<14>($($arg),*)),
            15 => Some($f::<15>($($arg),*)),
            16 => Some($f::<16>($($arg),*)),
            17 => Some($f::<17>($($arg),*)),
            18 => Some($f::<18>($($arg),*)),
            19 => Some($f::<19>($($arg),*)),
            20 => Some($f::<20>($($arg),*)),
            21 => Some($f::<21>($($arg),*)),
            22 => Some($f::<22>($($arg),*)),
            23 => Some($f::<23>($($arg),*)),
            24 => Some($f::<24>($($arg),*)),
            _ => None,
        }
    };
}

/// Orders above [`FIXED_MAX`] up to this are factorised by the code
/// specialised to the order too (Andrews' squeezer has 27 unknowns: 38 %
/// fewer instructions for its real factorisations than the general
/// loops); their solves run the general loops on the transposed copy of
/// the factors, which the specialised in-place solves do not beat there.
const FIXED_FACTOR_MAX: usize = 32;
const _: () = assert!(
    FIXED_FACTOR_MAX == 32,
    "with_fixed_factor_order! and for_each_step! list the orders 25 to 32"
);

/// [`with_fixed_order!`] up to [`FIXED_FACTOR_MAX`].
macro_rules! with_fixed_factor_order {
    ($n:expr, $f:ident($($arg:expr),*)) => {
        match $n {
            25 => Some($f::<25>($($arg),*)),
            26 => Some($f::<26>($($arg),*)),
            27 => Some($f::<27>($($arg),*)),
            28 => Some($f::<28>($($arg),*)),
            29 => Some($f::<29>($($arg),*)),
            30 => Some($f::<30>($($arg),*)),
            31 => Some($f::<31>($($arg),*)),
            32 => Some($f::<32>($($arg),*)),
            _ => with_fixed_order!($n, $f($($arg),*)),
        }
    };
}

/// Runs `$step(k)?` for `k = 0, 1, …, N − 1` with `k` a literal in each
/// call, so that the elimination steps of the fixed-order factorisations
/// are unrolled (the compiler keeps a loop over `k` rolled, its body being
/// large, and then cannot fold the bounds of the inner loops): 15–35 % less
/// time for a 6 × 6 factorisation, the same operations in the same order.
macro_rules! for_each_step {
    ($n:expr, $step:expr) => {
        for_each_step!(@ $n, $step; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31)
    };
    (@ $n:expr, $step:expr; $($k:literal)*) => {
        $( if $k < $n { ($step)($k)?; } )*
    };
}

/// `a` (row-major, `N·N` entries) as `N` rows of `N`; `None` if the length
/// is not `N·N`.
fn rows_mut<const N: usize>(a: &mut [f64]) -> Option<&mut [[f64; N]; N]> {
    let (rows, rest) = a.as_chunks_mut::<N>();
    if !rest.is_empty() {
        return None;
    }
    rows.try_into().ok()
}

fn rows<const N: usize>(a: &[f64]) -> Option<&[[f64; N]; N]> {
    let (rows, rest) = a.as_chunks::<N>();
    if !rest.is_empty() {
        return None;
    }
    rows.try_into().ok()
}

/// Partial pivoting in column `k` of an order-`n` matrix: the row
/// `p ≥ k` of the largest `magnitude(p)` (the first of equals);
/// `Singular(k)` when that is zero or not finite.
fn pivot_row(k: usize, n: usize, magnitude: impl Fn(usize) -> f64) -> Result<usize, Singular> {
    let mut p = k;
    let mut best = magnitude(k);
    for i in k + 1..n {
        let v = magnitude(i);
        if v > best {
            best = v;
            p = i;
        }
    }
    if best == 0.0 || !best.is_finite() {
        return Err(Singular(k));
    }
    Ok(p)
}

/// `y_i −= a_i·x` for every `i` of `y` and `a`: one column of a
/// substitution, one row of an elimination step. Contiguous slices that
/// do not alias: the compiler vectorises the loop without run-time
/// overlap checks.
#[inline(always)]
fn sub_scaled(y: &mut [f64], a: &[f64], x: f64) {
    for (y, &a) in y.iter_mut().zip(a) {
        *y -= a * x;
    }
}

/// The complex [`sub_scaled`], the parts apart: `y_i −= a_i·x` for
/// `y = yr + i·yi`, `a = ar + i·ai`, `x = xr + i·xi`, as
/// `yr −= xr·ar − xi·ai` and `yi −= xr·ai + xi·ar` (products and sums
/// commute exactly, so the elimination's `f·u` and the substitution's
/// `l·x` both come out as their plain loops wrote them).
#[inline(always)]
fn sub_scaled_complex(yr: &mut [f64], yi: &mut [f64], ar: &[f64], ai: &[f64], x: (f64, f64)) {
    let (xr, xi) = x;
    let y = yr.iter_mut().zip(yi.iter_mut());
    for ((yr, yi), (&ar, &ai)) in y.zip(ar.iter().zip(ai)) {
        *yr -= xr * ar - xi * ai;
        *yi -= xr * ai + xi * ar;
    }
}

/// Length of the transposed copy of the factors of order `n`: `n²` for
/// the general loops, none for the specialised orders and `faer`.
fn transposed_len(n: usize) -> usize {
    if (FIXED_MAX + 1..=FAER_THRESHOLD).contains(&n) {
        n * n
    } else {
        0
    }
}

/// `t` = the transpose of the order-`n` row-major `a` (`n ≥ 1`): the
/// factors column by column, as the substitutions read them.
fn transpose(n: usize, a: &[f64], t: &mut [f64]) {
    for (j, col) in t.chunks_exact_mut(n).enumerate() {
        for (c, row) in col.iter_mut().zip(a.chunks_exact(n)) {
            *c = row[j];
        }
    }
}

/// Solves `A x = b` in place with the factors of `A` column by column
/// (`cols`: column `j` of `L` below the diagonal, column `k` of `U` above
/// it, the diagonal of `U` inverted; order `n ≥ 1`) and the row
/// interchanges `piv`. The substitutions are column-oriented: once `x_j`
/// is known it is subtracted from every later row at once, so the chain
/// of dependent operations is one multiply-subtract per unknown, and the
/// columns are contiguous (vectorised). Every `b_i` receives its updates
/// in the order of the plain substitutions (`j` ascending, then `k`
/// descending): the same result bit for bit.
#[inline(always)]
fn real_solve_cols(n: usize, cols: &[f64], piv: &[usize], b: &mut [f64]) {
    let (cols, piv, b) = (&cols[..n * n], &piv[..n], &mut b[..n]);
    for (k, &p) in piv.iter().enumerate() {
        b.swap(k, p.min(n - 1));
    }
    for (j, col) in cols.chunks_exact(n).enumerate() {
        let (head, tail) = b.split_at_mut(j + 1);
        sub_scaled(tail, &col[j + 1..], head[j]);
    }
    for (k, col) in cols.chunks_exact(n).enumerate().rev() {
        let (head, tail) = b.split_at_mut(k);
        let x = tail[0] * col[k];
        tail[0] = x;
        sub_scaled(head, &col[..k], x);
    }
}

/// [`real_solve_cols`] for the complex factors `cr + i·ci` and
/// `b = br + i·bi`.
#[inline(always)]
fn complex_solve_cols(
    n: usize,
    (cr, ci): (&[f64], &[f64]),
    piv: &[usize],
    br: &mut [f64],
    bi: &mut [f64],
) {
    let (cr, ci, piv) = (&cr[..n * n], &ci[..n * n], &piv[..n]);
    let (br, bi) = (&mut br[..n], &mut bi[..n]);
    for (k, &p) in piv.iter().enumerate() {
        let p = p.min(n - 1);
        br.swap(k, p);
        bi.swap(k, p);
    }
    for (j, (lr, li)) in cr.chunks_exact(n).zip(ci.chunks_exact(n)).enumerate() {
        let (hr, tr) = br.split_at_mut(j + 1);
        let (hi, ti) = bi.split_at_mut(j + 1);
        sub_scaled_complex(tr, ti, &lr[j + 1..], &li[j + 1..], (hr[j], hi[j]));
    }
    let columns = cr.chunks_exact(n).zip(ci.chunks_exact(n)).enumerate();
    for (k, (ur, ui)) in columns.rev() {
        let (hr, tr) = br.split_at_mut(k);
        let (hi, ti) = bi.split_at_mut(k);
        let (sr, si) = (tr[0], ti[0]);
        let (ir, ii) = (ur[k], ui[k]);
        let x = (sr * ir - si * ii, sr * ii + si * ir);
        (tr[0], ti[0]) = x;
        sub_scaled_complex(hr, hi, &ur[..k], &ui[..k], x);
    }
}

/// [`RealLu::factor`] for order `N` (`lu` holds the matrix on entry).
fn real_factor_fixed<const N: usize>(lu: &mut [f64], piv: &mut [usize]) -> Result<(), Singular> {
    let (Some(a), Some(piv)) = (rows_mut::<N>(lu), piv.first_chunk_mut::<N>()) else {
        return Err(Singular(0));
    };
    /// Elimination step `k`.
    #[inline(always)]
    fn step<const N: usize>(
        a: &mut [[f64; N]; N],
        piv: &mut [usize; N],
        k: usize,
    ) -> Result<(), Singular> {
        let p = pivot_row(k, N, |i| a[i][k].abs())?;
        piv[k] = p;
        if p != k {
            a.swap(k, p);
        }
        let inv = 1.0 / a[k][k];
        // (the pivot row copied before its diagonal is overwritten: a
        // wide load of a just-stored word would stall store forwarding)
        let urow = a[k];
        a[k][k] = inv;
        for row in a.iter_mut().skip(k + 1) {
            let f = row[k] * inv;
            row[k] = f;
            if f != 0.0 {
                for j in k + 1..N {
                    row[j] -= f * urow[j];
                }
            }
        }
        Ok(())
    }
    for_each_step!(N, |k| step(a, piv, k));
    Ok(())
}

/// [`RealLu::solve`] for order `N`. The substitutions are column-oriented:
/// once `x_j` is known it is subtracted from every later row at once, so
/// the chain of dependent operations is one multiply-subtract per unknown
/// (the rows' updates are independent and overlap); the row-oriented
/// inner products waited for a sum of up to `N − 1` products per unknown
/// (Akzo Nobel 5 % less time per solve over a run).
fn real_solve_fixed<const N: usize>(lu: &[f64], piv: &[usize], b: &mut [f64]) {
    let (Some(a), Some(piv), Some(b)) = (
        rows::<N>(lu),
        piv.first_chunk::<N>(),
        b.first_chunk_mut::<N>(),
    ) else {
        return;
    };
    for (k, &p) in piv.iter().enumerate() {
        b.swap(k, p.min(N - 1));
    }
    for j in 0..N {
        let x = b[j];
        for i in j + 1..N {
            b[i] -= a[i][j] * x;
        }
    }
    for k in (0..N).rev() {
        let x = b[k] * a[k][k];
        b[k] = x;
        for i in 0..k {
            b[i] -= a[i][k] * x;
        }
    }
}

/// [`ComplexLu::factor`] for order `N` (`re`, `im` hold the matrix on entry).
fn complex_factor_fixed<const N: usize>(
    re: &mut [f64],
    im: &mut [f64],
    piv: &mut [usize],
) -> Result<(), Singular> {
    let (Some(ar), Some(ai), Some(piv)) = (
        rows_mut::<N>(re),
        rows_mut::<N>(im),
        piv.first_chunk_mut::<N>(),
    ) else {
        return Err(Singular(0));
    };
    /// Elimination step `k`.
    #[inline(always)]
    fn step<const N: usize>(
        ar: &mut [[f64; N]; N],
        ai: &mut [[f64; N]; N],
        piv: &mut [usize; N],
        k: usize,
    ) -> Result<(), Singular> {
        let p = pivot_row(k, N, |i| ar[i][k].abs() + ai[i][k].abs())?;
        piv[k] = p;
        if p != k {
            ar.swap(k, p);
            ai.swap(k, p);
        }
        let (pr, pi) = (ar[k][k], ai[k][k]);
        let den = pr * pr + pi * pi;
        let (ir, ii) = (pr / den, -pi / den);
        let (ur, ui) = (ar[k], ai[k]);
        (ar[k][k], ai[k][k]) = (ir, ii);
        for i in k + 1..N {
            let (xr, xi) = (ar[i][k], ai[i][k]);
            let fr = xr * ir - xi * ii;
            let fi = xr * ii + xi * ir;
            ar[i][k] = fr;
            ai[i][k] = fi;
            if fr != 0.0 || fi != 0.0 {
                for j in k + 1..N {
                    ar[i][j] -= fr * ur[j] - fi * ui[j];
                    ai[i][j] -= fr * ui[j] + fi * ur[j];
                }
            }
        }
        Ok(())
    }
    for_each_step!(N, |k| step(ar, ai, piv, k));
    Ok(())
}

/// [`ComplexLu::solve`] for order `N` (column-oriented, as
/// [`real_solve_fixed`]).
fn complex_solve_fixed<const N: usize>(
    re: &[f64],
    im: &[f64],
    piv: &[usize],
    br: &mut [f64],
    bi: &mut [f64],
) {
    let (Some(ar), Some(ai), Some(piv), Some(br), Some(bi)) = (
        rows::<N>(re),
        rows::<N>(im),
        piv.first_chunk::<N>(),
        br.first_chunk_mut::<N>(),
        bi.first_chunk_mut::<N>(),
    ) else {
        return;
    };
    for (k, &p) in piv.iter().enumerate() {
        let p = p.min(N - 1);
        br.swap(k, p);
        bi.swap(k, p);
    }
    for j in 0..N {
        let (xr, xi) = (br[j], bi[j]);
        for i in j + 1..N {
            let (a, b) = (ar[i][j], ai[i][j]);
            br[i] -= a * xr - b * xi;
            bi[i] -= a * xi + b * xr;
        }
    }
    for k in (0..N).rev() {
        let (sr, si) = (br[k], bi[k]);
        let (ir, ii) = (ar[k][k], ai[k][k]);
        let (xr, xi) = (sr * ir - si * ii, sr * ii + si * ir);
        br[k] = xr;
        bi[k] = xi;
        for i in 0..k {
            let (a, b) = (ar[i][k], ai[i][k]);
            br[i] -= a * xr - b * xi;
            bi[i] -= a * xi + b * xr;
        }
    }
}

/// `y_i −= a_i·x` and then `y_i −= b_i·z` for every `i`, in one pass: two
/// elimination steps on one row while it is in registers, each element
/// updated as two calls of [`sub_scaled`] would update it (the same two
/// roundings in the same order).
#[inline(always)]
fn sub_scaled2(y: &mut [f64], (a, x): (&[f64], f64), (b, z): (&[f64], f64)) {
    for ((y, &a), &b) in y.iter_mut().zip(a).zip(b) {
        *y = *y - a * x - b * z;
    }
}

/// The complex [`sub_scaled2`]: [`sub_scaled_complex`] with `a` and `x`,
/// then with `b` and `z`, in one pass.
#[inline(always)]
fn sub_scaled_complex2(
    (yr, yi): (&mut [f64], &mut [f64]),
    (ar, ai, x): (&[f64], &[f64], (f64, f64)),
    (br, bi, z): (&[f64], &[f64], (f64, f64)),
) {
    let ((xr, xi), (zr, zi)) = (x, z);
    let y = yr.iter_mut().zip(yi.iter_mut());
    let ab = ar.iter().zip(ai).zip(br.iter().zip(bi));
    for ((yr, yi), ((&ar, &ai), (&br, &bi))) in y.zip(ab) {
        let (r, i) = (*yr - (xr * ar - xi * ai), *yi - (xr * ai + xi * ar));
        *yr = r - (zr * br - zi * bi);
        *yi = i - (zr * bi + zi * br);
    }
}

/// Swaps rows `k < p` of the row-major `a` of order `n`.
fn swap_rows(n: usize, a: &mut [f64], k: usize, p: usize) {
    let (top, rest) = a.split_at_mut(p * n);
    top[k * n..(k + 1) * n].swap_with_slice(&mut rest[..n]);
}

/// Partial pivoting of elimination step `k` of the general loops on the
/// row-major `a` of order `n`: the pivot row chosen and swapped into row
/// `k`, the pivot replaced by its reciprocal, which is returned.
fn real_pivot(n: usize, a: &mut [f64], piv: &mut [usize], k: usize) -> Result<f64, Singular> {
    let p = pivot_row(k, n, |i| a[i * n + k].abs())?;
    piv[k] = p;
    if p != k {
        swap_rows(n, a, k, p);
    }
    let inv = 1.0 / a[k * n + k];
    a[k * n + k] = inv;
    Ok(inv)
}

/// Elimination step `k` of the general loops on the row-major `a` of
/// order `n`: the rows below `k` against the pivot row, a row whose
/// multiplier is zero left as it is.
fn real_eliminate(n: usize, a: &mut [f64], piv: &mut [usize], k: usize) -> Result<(), Singular> {
    let inv = real_pivot(n, a, piv, k)?;
    let (top, rest) = a.split_at_mut((k + 1) * n);
    let urow = &top[k * n + k + 1..];
    for row in rest.chunks_exact_mut(n) {
        let f = row[k] * inv;
        row[k] = f;
        if f != 0.0 {
            sub_scaled(&mut row[k + 1..], urow, f);
        }
    }
    Ok(())
}

/// Elimination steps `k` and `k + 1` (`k + 2 ≤ n`) of the general loops,
/// right-looking: step `k` first updates column `k + 1` alone (the
/// multipliers of step `k` and the column step `k + 1` pivots on), then
/// each row below `k + 1` receives the updates of both steps in one pass
/// over its columns `k + 2…` ([`sub_scaled2`]). Every element is updated
/// by step `k` and then by step `k + 1` with the pivot row as step
/// `k + 1` of [`real_eliminate`] would see it, zero multipliers skipped
/// per step: the results of two calls of [`real_eliminate`] bit for bit,
/// with one load and store of the row instead of two.
fn real_eliminate_pair(
    n: usize,
    a: &mut [f64],
    piv: &mut [usize],
    k: usize,
) -> Result<(), Singular> {
    let k1 = k + 1;
    let inv = real_pivot(n, a, piv, k)?;
    let (top, rest) = a.split_at_mut(k1 * n);
    let u = top[k * n + k1];
    for row in rest.chunks_exact_mut(n) {
        let f = row[k] * inv;
        row[k] = f;
        if f != 0.0 {
            row[k1] -= f * u;
        }
    }
    let inv1 = real_pivot(n, a, piv, k1)?;
    let (top, rest) = a.split_at_mut((k1 + 1) * n);
    let (uk, uk1) = top[k * n..].split_at_mut(n);
    let uk = &uk[k + 2..];
    // step k on the rest of the pivot row of step k + 1
    let f = uk1[k];
    if f != 0.0 {
        sub_scaled(&mut uk1[k + 2..], uk, f);
    }
    let uk1 = &uk1[k + 2..];
    for row in rest.chunks_exact_mut(n) {
        let f = row[k];
        let g = row[k1] * inv1;
        row[k1] = g;
        let y = &mut row[k + 2..];
        match (f != 0.0, g != 0.0) {
            (true, true) => sub_scaled2(y, (uk, f), (uk1, g)),
            (true, false) => sub_scaled(y, uk, f),
            (false, true) => sub_scaled(y, uk1, g),
            (false, false) => {}
        }
    }
    Ok(())
}

/// The real and imaginary parts of a complex matrix, row-major.
type Parts<'a> = (&'a mut [f64], &'a mut [f64]);

/// [`real_pivot`] for the complex matrix `ar + i·ai` (magnitudes
/// `|re| + |im|`, as RADAU5's DECC); returns the pivot's reciprocal.
fn complex_pivot(
    n: usize,
    (ar, ai): Parts,
    piv: &mut [usize],
    k: usize,
) -> Result<(f64, f64), Singular> {
    let p = pivot_row(k, n, |i| ar[i * n + k].abs() + ai[i * n + k].abs())?;
    piv[k] = p;
    if p != k {
        swap_rows(n, ar, k, p);
        swap_rows(n, ai, k, p);
    }
    let (pr, pi) = (ar[k * n + k], ai[k * n + k]);
    let den = pr * pr + pi * pi;
    let inv = (pr / den, -pi / den);
    (ar[k * n + k], ai[k * n + k]) = inv;
    Ok(inv)
}

/// The multiplier `x·inv` of a complex elimination step.
#[inline(always)]
fn complex_multiplier((xr, xi): (f64, f64), (ir, ii): (f64, f64)) -> (f64, f64) {
    (xr * ir - xi * ii, xr * ii + xi * ir)
}

/// [`real_eliminate`] for the complex matrix `ar + i·ai`.
fn complex_eliminate(
    n: usize,
    (ar, ai): Parts,
    piv: &mut [usize],
    k: usize,
) -> Result<(), Singular> {
    let inv = complex_pivot(n, (&mut *ar, &mut *ai), piv, k)?;
    let (top_r, rest_r) = ar.split_at_mut((k + 1) * n);
    let (top_i, rest_i) = ai.split_at_mut((k + 1) * n);
    let (u_r, u_i) = (&top_r[k * n + k + 1..], &top_i[k * n + k + 1..]);
    for (row_r, row_i) in rest_r.chunks_exact_mut(n).zip(rest_i.chunks_exact_mut(n)) {
        let f = complex_multiplier((row_r[k], row_i[k]), inv);
        (row_r[k], row_i[k]) = f;
        if f.0 != 0.0 || f.1 != 0.0 {
            let (yr, yi) = (&mut row_r[k + 1..], &mut row_i[k + 1..]);
            sub_scaled_complex(yr, yi, u_r, u_i, f);
        }
    }
    Ok(())
}

/// [`real_eliminate_pair`] for the complex matrix `ar + i·ai`: the results
/// of two calls of [`complex_eliminate`] bit for bit.
fn complex_eliminate_pair(
    n: usize,
    (ar, ai): Parts,
    piv: &mut [usize],
    k: usize,
) -> Result<(), Singular> {
    let k1 = k + 1;
    let inv = complex_pivot(n, (&mut *ar, &mut *ai), piv, k)?;
    let (top_r, rest_r) = ar.split_at_mut(k1 * n);
    let (top_i, rest_i) = ai.split_at_mut(k1 * n);
    let (ur, ui) = (top_r[k * n + k1], top_i[k * n + k1]);
    for (row_r, row_i) in rest_r.chunks_exact_mut(n).zip(rest_i.chunks_exact_mut(n)) {
        let (fr, fi) = complex_multiplier((row_r[k], row_i[k]), inv);
        (row_r[k], row_i[k]) = (fr, fi);
        if fr != 0.0 || fi != 0.0 {
            row_r[k1] -= fr * ur - fi * ui;
            row_i[k1] -= fr * ui + fi * ur;
        }
    }
    let inv1 = complex_pivot(n, (&mut *ar, &mut *ai), piv, k1)?;
    let (top_r, rest_r) = ar.split_at_mut((k1 + 1) * n);
    let (top_i, rest_i) = ai.split_at_mut((k1 + 1) * n);
    let (uk_r, uk1_r) = top_r[k * n..].split_at_mut(n);
    let (uk_i, uk1_i) = top_i[k * n..].split_at_mut(n);
    let (uk_r, uk_i) = (&uk_r[k + 2..], &uk_i[k + 2..]);
    // step k on the rest of the pivot row of step k + 1
    let f = (uk1_r[k], uk1_i[k]);
    if f.0 != 0.0 || f.1 != 0.0 {
        let (yr, yi) = (&mut uk1_r[k + 2..], &mut uk1_i[k + 2..]);
        sub_scaled_complex(yr, yi, uk_r, uk_i, f);
    }
    let (uk1_r, uk1_i) = (&uk1_r[k + 2..], &uk1_i[k + 2..]);
    for (row_r, row_i) in rest_r.chunks_exact_mut(n).zip(rest_i.chunks_exact_mut(n)) {
        let f = (row_r[k], row_i[k]);
        let g = complex_multiplier((row_r[k1], row_i[k1]), inv1);
        (row_r[k1], row_i[k1]) = g;
        let (yr, yi) = (&mut row_r[k + 2..], &mut row_i[k + 2..]);
        match (f.0 != 0.0 || f.1 != 0.0, g.0 != 0.0 || g.1 != 0.0) {
            (true, true) => {
                sub_scaled_complex2((yr, yi), (uk_r, uk_i, f), (uk1_r, uk1_i, g));
            }
            (true, false) => sub_scaled_complex(yr, yi, uk_r, uk_i, f),
            (false, true) => sub_scaled_complex(yr, yi, uk1_r, uk1_i, g),
            (false, false) => {}
        }
    }
    Ok(())
}

/// LU factorisation of a real `n × n` matrix. The diagonal of `U` is kept
/// as its reciprocals, so the back substitution multiplies: a chain of
/// dependent divisions is what bounds the solves of small systems. The
/// elimination works on rows (its updates run along contiguous rows and
/// skip a row whose multiplier is zero; specialised to the order up to
/// `FIXED_FACTOR_MAX`, 32). Above `FIXED_MAX` (24) the solves
/// read the factors column by column, from a transposed copy made after
/// each factorisation (`n²` moves against the `n³/3` multiply-adds of the
/// elimination, and every solve's inner loops contiguous); up to it the
/// specialised solves read the rows in place, the copy costing more than
/// it saves there.
#[derive(Debug, Clone)]
pub struct RealLu {
    n: usize,
    lu: Vec<f64>,
    /// The factors in `lu` column by column (its transpose; orders above
    /// `FIXED_MAX`, empty otherwise).
    cols: Vec<f64>,
    piv: Vec<usize>,
    faer: Option<PartialPivLu<f64>>,
}

impl RealLu {
    /// An empty factorisation for matrices of order `n`.
    pub fn new(n: usize) -> Self {
        Self {
            n,
            lu: vec![0.0; n * n],
            cols: vec![0.0; transposed_len(n)],
            piv: vec![0; n],
            faer: None,
        }
    }

    /// Factorises the row-major matrix `a` (`n·n` entries).
    pub fn factor(&mut self, a: &[f64]) -> Result<(), Singular> {
        self.lu.copy_from_slice(a);
        self.factor_in_place()
    }

    /// The storage [`factor_in_place`](Self::factor_in_place) factorises:
    /// a caller that assembles the matrix here (row-major, `n·n` entries)
    /// spares the copy of [`factor`](Self::factor).
    pub fn matrix_mut(&mut self) -> &mut [f64] {
        &mut self.lu
    }

    /// Factorises the matrix written into [`matrix_mut`](Self::matrix_mut)
    /// (the same operations as [`factor`](Self::factor)).
    pub fn factor_in_place(&mut self) -> Result<(), Singular> {
        let n = self.n;
        if n > FAER_THRESHOLD {
            let a = &self.lu;
            let m = Mat::<f64>::from_fn(n, n, |i, j| a[i * n + j]);
            let lu = m.partial_piv_lu();
            let u = lu.U();
            for k in 0..n {
                let d = u[(k, k)];
                if d == 0.0 || !d.is_finite() {
                    return Err(Singular(k));
                }
            }
            self.faer = Some(lu);
            return Ok(());
        }
        match with_fixed_factor_order!(n, real_factor_fixed(&mut self.lu, &mut self.piv)) {
            Some(r) => {
                if r.is_ok() && n > FIXED_MAX {
                    transpose(n, &self.lu, &mut self.cols);
                }
                r
            }
            None => self.factor_general(),
        }
    }

    /// The general loops of [`RealLu::factor`] on `self.lu` in place:
    /// the elimination steps two at a time ([`real_eliminate_pair`]), the
    /// last one alone when `n` is odd.
    fn factor_general(&mut self) -> Result<(), Singular> {
        let n = self.n;
        let mut k = 0;
        while k + 1 < n {
            real_eliminate_pair(n, &mut self.lu, &mut self.piv, k)?;
            k += 2;
        }
        if k < n {
            real_eliminate(n, &mut self.lu, &mut self.piv, k)?;
        }
        if n > 0 {
            // (sized already, unless the tests run these loops at a
            // specialised order)
            self.cols.resize(n * n, 0.0);
            transpose(n, &self.lu, &mut self.cols);
        }
        Ok(())
    }

    /// The smallest magnitude of the diagonal of `U` of the last
    /// successful factorisation: with partial pivoting, the smallest pivot
    /// of the elimination (how near to singular the matrix came in it).
    pub fn min_pivot(&self) -> f64 {
        let n = self.n;
        if let Some(lu) = &self.faer {
            let u = lu.U();
            return (0..n).fold(f64::INFINITY, |m, k| m.min(u[(k, k)].abs()));
        }
        // the diagonal holds the pivots' reciprocals
        let largest_inverse = (0..n).fold(0.0f64, |m, k| m.max(self.lu[k * n + k].abs()));
        1.0 / largest_inverse
    }

    /// Solves `A x = b` in place (`b` becomes `x`).
    pub fn solve(&self, b: &mut [f64]) {
        let n = self.n;
        if let Some(lu) = &self.faer {
            let mut rhs = Mat::<f64>::from_fn(n, 1, |i, _| b[i]);
            lu.solve_in_place(rhs.as_mut());
            for (i, bi) in b.iter_mut().enumerate() {
                *bi = rhs[(i, 0)];
            }
            return;
        }
        if with_fixed_order!(n, real_solve_fixed(&self.lu, &self.piv, b)).is_none() {
            self.solve_general(b);
        }
    }

    /// The general loops of [`RealLu::solve`] (rows were swapped in full,
    /// `L` included, so `P` comes first).
    fn solve_general(&self, b: &mut [f64]) {
        if self.n > 0 {
            real_solve_cols(self.n, &self.cols, &self.piv, b);
        }
    }
}

/// LU factorisation of a complex `n × n` matrix stored as separate real and
/// imaginary parts (the diagonal of `U` as its reciprocals, as in
/// [`RealLu`]).
#[derive(Debug, Clone)]
pub struct ComplexLu {
    n: usize,
    re: Vec<f64>,
    im: Vec<f64>,
    /// The factors in `re` and `im` column by column (their transposes;
    /// orders above `FIXED_MAX`, as in [`RealLu`]).
    cols_re: Vec<f64>,
    cols_im: Vec<f64>,
    piv: Vec<usize>,
    faer: Option<PartialPivLu<c64>>,
}

impl ComplexLu {
    /// An empty factorisation for matrices of order `n`.
    pub fn new(n: usize) -> Self {
        Self {
            n,
            re: vec![0.0; n * n],
            im: vec![0.0; n * n],
            cols_re: vec![0.0; transposed_len(n)],
            cols_im: vec![0.0; transposed_len(n)],
            piv: vec![0; n],
            faer: None,
        }
    }

    /// Factorises the row-major matrix `re + i·im` (a copy into
    /// [`matrix_mut`](Self::matrix_mut) and [`factor_in_place`](Self::factor_in_place)).
    #[cfg(test)]
    pub(crate) fn factor(&mut self, re: &[f64], im: &[f64]) -> Result<(), Singular> {
        self.re.copy_from_slice(re);
        self.im.copy_from_slice(im);
        self.factor_in_place()
    }

    /// The storage [`factor_in_place`](Self::factor_in_place) factorises,
    /// real and imaginary part: a caller that assembles the matrix here
    /// (row-major, `n·n` entries each) spares a copy.
    pub fn matrix_mut(&mut self) -> (&mut [f64], &mut [f64]) {
        (&mut self.re, &mut self.im)
    }

    /// Factorises the matrix written into [`matrix_mut`](Self::matrix_mut)
    /// (the same operations as [`factor`](Self::factor)).
    pub fn factor_in_place(&mut self) -> Result<(), Singular> {
        let n = self.n;
        if n > FAER_THRESHOLD {
            let (re, im) = (&self.re, &self.im);
            let m = Mat::<c64>::from_fn(n, n, |i, j| c64::new(re[i * n + j], im[i * n + j]));
            let lu = m.partial_piv_lu();
            let u = lu.U();
            for k in 0..n {
                let d = u[(k, k)];
                let a = d.re.hypot(d.im);
                if a == 0.0 || !a.is_finite() {
                    return Err(Singular(k));
                }
            }
            self.faer = Some(lu);
            return Ok(());
        }
        let (ar, ai) = (&mut self.re, &mut self.im);
        match with_fixed_factor_order!(n, complex_factor_fixed(ar, ai, &mut self.piv)) {
            Some(r) => {
                if r.is_ok() && n > FIXED_MAX {
                    transpose(n, &self.re, &mut self.cols_re);
                    transpose(n, &self.im, &mut self.cols_im);
                }
                r
            }
            None => self.factor_general(),
        }
    }

    /// The general loops of [`ComplexLu::factor`] on `self.re`, `self.im`
    /// in place: the elimination steps two at a time
    /// ([`complex_eliminate_pair`]), the last one alone when `n` is odd.
    fn factor_general(&mut self) -> Result<(), Singular> {
        let n = self.n;
        let (ar, ai) = (&mut self.re, &mut self.im);
        let mut k = 0;
        while k + 1 < n {
            complex_eliminate_pair(n, (&mut *ar, &mut *ai), &mut self.piv, k)?;
            k += 2;
        }
        if k < n {
            complex_eliminate(n, (&mut *ar, &mut *ai), &mut self.piv, k)?;
        }
        if n > 0 {
            // (sized already, as in `RealLu::factor_general`)
            self.cols_re.resize(n * n, 0.0);
            self.cols_im.resize(n * n, 0.0);
            transpose(n, &self.re, &mut self.cols_re);
            transpose(n, &self.im, &mut self.cols_im);
        }
        Ok(())
    }

    /// Solves `A x = b` in place, `b = br + i·bi`.
    pub fn solve(&self, br: &mut [f64], bi: &mut [f64]) {
        let n = self.n;
        if let Some(lu) = &self.faer {
            let mut rhs = Mat::<c64>::from_fn(n, 1, |i, _| c64::new(br[i], bi[i]));
            lu.solve_in_place(rhs.as_mut());
            for i in 0..n {
                br[i] = rhs[(i, 0)].re;
                bi[i] = rhs[(i, 0)].im;
            }
            return;
        }
        let (ar, ai) = (&self.re, &self.im);
        if with_fixed_order!(n, complex_solve_fixed(ar, ai, &self.piv, br, bi)).is_none() {
            self.solve_general(br, bi);
        }
    }

    /// The general loops of [`ComplexLu::solve`].
    fn solve_general(&self, br: &mut [f64], bi: &mut [f64]) {
        if self.n > 0 {
            let cols = (&self.cols_re[..], &self.cols_im[..]);
            complex_solve_cols(self.n, cols, &self.piv, br, bi);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matvec(a: &[f64], x: &[f64], n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| (0..n).map(|j| a[i * n + j] * x[j]).sum())
            .collect()
    }

    fn test_matrix(n: usize) -> Vec<f64> {
        (0..n * n)
            .map(|k| {
                let (i, j) = (k / n, k % n);
                if i == j {
                    0.1 // small diagonal forces pivoting
                } else {
                    ((i * 7 + j * 3) % 11) as f64 - 5.0
                }
            })
            .collect()
    }

    fn check_real(n: usize) {
        let a = test_matrix(n);
        let x: Vec<f64> = (0..n).map(|i| i as f64 - 2.5).collect();
        let mut b = matvec(&a, &x, n);
        let mut lu = RealLu::new(n);
        lu.factor(&a).unwrap();
        lu.solve(&mut b);
        for i in 0..n {
            assert!(
                (b[i] - x[i]).abs() < 1e-9,
                "n={n} i={i}: {} vs {}",
                b[i],
                x[i]
            );
        }
    }

    #[test]
    fn real_lu_solves_small_and_faer_sized_systems() {
        // every order of the specialised code and faer
        for n in 1..=FIXED_MAX + 4 {
            check_real(n);
        }
        check_real(SPARSE_THRESHOLD);
        check_real(FAER_THRESHOLD);
        check_real(FAER_THRESHOLD + 6);
    }

    #[test]
    fn min_pivot_is_the_smallest_pivot_of_the_elimination() {
        // rows of an upper-triangular matrix with diagonal 2, 3, …, except
        // 0.25 in row n/2, given in reverse order: partial pivoting swaps
        // them back and its pivots are that diagonal (every order of the
        // specialised code, the general loops and faer)
        for n in [2, 5, FIXED_MAX, FIXED_MAX + 3, FAER_THRESHOLD + 2] {
            let diag = |i: usize| if i == n / 2 { 0.25 } else { 2.0 + i as f64 };
            let mut a = vec![0.0; n * n];
            for i in 0..n {
                let r = n - 1 - i;
                a[r * n + i] = diag(i);
                for j in i + 1..n {
                    a[r * n + j] = 0.01;
                }
            }
            let mut lu = RealLu::new(n);
            lu.factor(&a).unwrap();
            assert!((lu.min_pivot() - 0.25).abs() < 1e-15, "order {n}");
        }
    }

    #[test]
    fn orders_up_to_the_faer_threshold_are_factorised_in_place() {
        // Andrews' squeezer (27 unknowns) and the dense path's largest
        // order by default: the own loops, not faer; beyond, faer
        for n in [
            FIXED_MAX + 3,
            SPARSE_THRESHOLD,
            FAER_THRESHOLD,
            FAER_THRESHOLD + 1,
        ] {
            let mut real = RealLu::new(n);
            real.factor(&test_matrix(n)).unwrap();
            let mut complex = ComplexLu::new(n);
            let im = vec![0.5; n * n];
            complex.factor(&test_matrix(n), &im).unwrap();
            let library = n > FAER_THRESHOLD;
            assert_eq!(real.faer.is_some(), library, "real, order {n}");
            assert_eq!(complex.faer.is_some(), library, "complex, order {n}");
        }
    }

    #[test]
    fn specialised_and_general_lu_agree_bit_for_bit() {
        // (the specialised factorisations up to FIXED_FACTOR_MAX against
        // the general loops' pairs of steps, odd and even orders)
        for n in 1..=FIXED_FACTOR_MAX {
            let a = test_matrix(n);
            let im: Vec<f64> = (0..n * n).map(|k| ((k * 5) % 7) as f64 * 0.25).collect();
            let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).sin()).collect();
            let mut lu = RealLu::new(n);
            lu.factor(&a).unwrap();
            let mut x = b.clone();
            lu.solve(&mut x);
            let mut clu = ComplexLu::new(n);
            clu.factor(&a, &im).unwrap();
            let (mut xr, mut xi) = (b.clone(), vec![0.5; n]);
            clu.solve(&mut xr, &mut xi);
            // the general loops on the same data
            let mut g = RealLu::new(n);
            g.lu.copy_from_slice(&a);
            g.factor_general().unwrap();
            let mut y = b.clone();
            g.solve_general(&mut y);
            let mut cg = ComplexLu::new(n);
            cg.re.copy_from_slice(&a);
            cg.im.copy_from_slice(&im);
            cg.factor_general().unwrap();
            let (mut yr, mut yi) = (b.clone(), vec![0.5; n]);
            cg.solve_general(&mut yr, &mut yi);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&x), bits(&y), "real, n = {n}");
            assert_eq!(
                (bits(&xr), bits(&xi)),
                (bits(&yr), bits(&yi)),
                "complex, n = {n}"
            );
        }
    }

    fn check_complex(n: usize) {
        let re = test_matrix(n);
        let im: Vec<f64> = (0..n * n).map(|k| ((k * 5) % 7) as f64 * 0.25).collect();
        let xr: Vec<f64> = (0..n).map(|i| i as f64 + 1.0).collect();
        let xi: Vec<f64> = (0..n).map(|i| 2.0 - i as f64 * 0.5).collect();
        // b = (re + i im)(xr + i xi)
        let mut br: Vec<f64> = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| re[i * n + j] * xr[j] - im[i * n + j] * xi[j])
                    .sum()
            })
            .collect();
        let mut bi: Vec<f64> = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| re[i * n + j] * xi[j] + im[i * n + j] * xr[j])
                    .sum()
            })
            .collect();
        let mut lu = ComplexLu::new(n);
        lu.factor(&re, &im).unwrap();
        lu.solve(&mut br, &mut bi);
        for i in 0..n {
            assert!((br[i] - xr[i]).abs() < 1e-9 && (bi[i] - xi[i]).abs() < 1e-9);
        }
    }

    #[test]
    fn complex_lu_solves_small_and_faer_sized_systems() {
        for n in 1..=FIXED_MAX + 4 {
            check_complex(n);
        }
        check_complex(FAER_THRESHOLD + 3);
    }

    /// Pseudo-random numbers in [−1, 1) (a fixed LCG: the tests repeat).
    fn random(seed: &mut u64) -> f64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (*seed >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }

    /// A random row-major matrix of order `n` with `diag` added to its
    /// diagonal (well conditioned for `diag` of order `n`).
    fn random_matrix(n: usize, diag: f64, seed: &mut u64) -> Vec<f64> {
        let mut a: Vec<f64> = (0..n * n).map(|_| random(seed)).collect();
        for i in 0..n {
            a[i * n + i] += diag;
        }
        a
    }

    /// The elimination by rows of the row-major `a` (partial pivoting, the
    /// diagonal inverted, a row whose multiplier is zero left as it is)
    /// and its substitutions, written as plainly as possible: the
    /// arithmetic every kernel must repeat, whatever its loop order or
    /// storage. `Err(Singular(k))` when the pivot of step `k` is zero or
    /// not finite.
    fn reference_real(n: usize, a: &[f64], b: &[f64]) -> Result<(Vec<usize>, Vec<f64>), Singular> {
        let mut a = a.to_vec();
        let mut piv = vec![0; n];
        for k in 0..n {
            let p = (k..n).fold(k, |p, i| {
                if a[i * n + k].abs() > a[p * n + k].abs() {
                    i
                } else {
                    p
                }
            });
            let best = a[p * n + k].abs();
            if best == 0.0 || !best.is_finite() {
                return Err(Singular(k));
            }
            piv[k] = p;
            for j in 0..n {
                a.swap(k * n + j, p * n + j);
            }
            let inv = 1.0 / a[k * n + k];
            a[k * n + k] = inv;
            for i in k + 1..n {
                let f = a[i * n + k] * inv;
                a[i * n + k] = f;
                if f != 0.0 {
                    for j in k + 1..n {
                        a[i * n + j] -= f * a[k * n + j];
                    }
                }
            }
        }
        let mut x = b.to_vec();
        for (k, &p) in piv.iter().enumerate() {
            x.swap(k, p);
        }
        for j in 0..n {
            for i in j + 1..n {
                x[i] -= a[i * n + j] * x[j];
            }
        }
        for k in (0..n).rev() {
            x[k] *= a[k * n + k];
            for i in 0..k {
                x[i] -= a[i * n + k] * x[k];
            }
        }
        Ok((piv, x))
    }

    /// The pivots and the real and imaginary parts of a complex solution.
    type ComplexSolution = (Vec<usize>, Vec<f64>, Vec<f64>);

    /// [`reference_real`] for the complex matrix `re + i·im`.
    fn reference_complex(
        n: usize,
        (re, im): (&[f64], &[f64]),
        (br, bi): (&[f64], &[f64]),
    ) -> Result<ComplexSolution, Singular> {
        let (mut ar, mut ai) = (re.to_vec(), im.to_vec());
        let mut piv = vec![0; n];
        for k in 0..n {
            let m = |i: usize| ar[i * n + k].abs() + ai[i * n + k].abs();
            let p = (k..n).fold(k, |p, i| if m(i) > m(p) { i } else { p });
            if m(p) == 0.0 || !m(p).is_finite() {
                return Err(Singular(k));
            }
            piv[k] = p;
            for j in 0..n {
                ar.swap(k * n + j, p * n + j);
                ai.swap(k * n + j, p * n + j);
            }
            let (pr, pi) = (ar[k * n + k], ai[k * n + k]);
            let den = pr * pr + pi * pi;
            let (ir, ii) = (pr / den, -pi / den);
            (ar[k * n + k], ai[k * n + k]) = (ir, ii);
            for i in k + 1..n {
                let (xr, xi) = (ar[i * n + k], ai[i * n + k]);
                let (fr, fi) = (xr * ir - xi * ii, xr * ii + xi * ir);
                (ar[i * n + k], ai[i * n + k]) = (fr, fi);
                if fr == 0.0 && fi == 0.0 {
                    continue;
                }
                for j in k + 1..n {
                    let (ur, ui) = (ar[k * n + j], ai[k * n + j]);
                    ar[i * n + j] -= fr * ur - fi * ui;
                    ai[i * n + j] -= fr * ui + fi * ur;
                }
            }
        }
        let (mut xr, mut xi) = (br.to_vec(), bi.to_vec());
        for (k, &p) in piv.iter().enumerate() {
            xr.swap(k, p);
            xi.swap(k, p);
        }
        for j in 0..n {
            for i in j + 1..n {
                let (a, b) = (ar[i * n + j], ai[i * n + j]);
                xr[i] -= a * xr[j] - b * xi[j];
                xi[i] -= a * xi[j] + b * xr[j];
            }
        }
        for k in (0..n).rev() {
            let (sr, si) = (xr[k], xi[k]);
            let (ir, ii) = (ar[k * n + k], ai[k * n + k]);
            (xr[k], xi[k]) = (sr * ir - si * ii, sr * ii + si * ir);
            for i in 0..k {
                let (a, b) = (ar[i * n + k], ai[i * n + k]);
                xr[i] -= a * xr[k] - b * xi[k];
                xi[i] -= a * xi[k] + b * xr[k];
            }
        }
        Ok((piv, xr, xi))
    }

    #[test]
    fn kernels_repeat_the_plain_elimination_bit_for_bit() {
        // random dense matrices (no zero entries, so no multiplier is
        // skipped either way): every order of the specialised kernels and
        // a few of the general loops, the pivots and every bit of the
        // solutions of the real and the complex systems
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let mut seed = 7;
        for n in (1..=FIXED_MAX).chain([FIXED_MAX + 1, 27, 40]) {
            for diag in [0.0, n as f64] {
                let a = random_matrix(n, diag, &mut seed);
                let im = random_matrix(n, 0.5 * diag, &mut seed);
                let b: Vec<f64> = (0..n).map(|_| random(&mut seed)).collect();
                let c: Vec<f64> = (0..n).map(|_| random(&mut seed)).collect();
                let (piv, x_ref) = reference_real(n, &a, &b).unwrap();
                let mut lu = RealLu::new(n);
                lu.factor(&a).unwrap();
                let mut x = b.clone();
                lu.solve(&mut x);
                assert_eq!(lu.piv, piv, "real pivots, n = {n}");
                assert_eq!(bits(&x), bits(&x_ref), "real, n = {n}, diag {diag}");
                let (cpiv, yr_ref, yi_ref) = reference_complex(n, (&a, &im), (&b, &c)).unwrap();
                let mut clu = ComplexLu::new(n);
                clu.factor(&a, &im).unwrap();
                let (mut yr, mut yi) = (b.clone(), c.clone());
                clu.solve(&mut yr, &mut yi);
                assert_eq!(clu.piv, cpiv, "complex pivots, n = {n}");
                assert_eq!(
                    (bits(&yr), bits(&yi)),
                    (bits(&yr_ref), bits(&yi_ref)),
                    "complex, n = {n}, diag {diag}"
                );
            }
        }
    }

    /// A row-major matrix of order `n`: about half of its entries zero, the
    /// others mostly ±0.5, ±1 or ±2 (multipliers that vanish, pivots that
    /// tie in magnitude), a few random.
    fn zeros_and_ties(n: usize, seed: &mut u64) -> Vec<f64> {
        const VALUES: [f64; 6] = [1.0, -1.0, 2.0, -2.0, 0.5, -0.5];
        (0..n * n)
            .map(|_| {
                let (r, v) = (random(seed), random(seed));
                if r < 0.0 {
                    0.0
                } else {
                    VALUES.get((r * 8.0) as usize).copied().unwrap_or(v)
                }
            })
            .collect()
    }

    #[test]
    fn kernels_with_zero_multipliers_and_tied_pivots_repeat_the_reference() {
        // orders 1 to 60 (the specialised kernels, the general loops up to
        // twice Andrews' order), matrices with zero entries and entries of
        // equal magnitude, factorised one after another by the same
        // objects (the solves read the factors of the last one): the
        // pivots, the singular columns and every bit of the solutions of
        // the real and the complex systems as the reference's
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let mut seed = 11;
        let (mut solved, mut singular) = (0, 0);
        for n in 1..=60 {
            let mut lu = RealLu::new(n);
            let mut clu = ComplexLu::new(n);
            for _ in 0..4 {
                let a = zeros_and_ties(n, &mut seed);
                let im = zeros_and_ties(n, &mut seed);
                let b: Vec<f64> = (0..n).map(|_| random(&mut seed)).collect();
                let c: Vec<f64> = (0..n).map(|_| random(&mut seed)).collect();
                match (lu.factor(&a), reference_real(n, &a, &b)) {
                    (Ok(()), Ok((piv, x_ref))) => {
                        let mut x = b.clone();
                        lu.solve(&mut x);
                        assert_eq!(lu.piv, piv, "real pivots, n = {n}");
                        assert_eq!(bits(&x), bits(&x_ref), "real, n = {n}");
                        solved += 1;
                    }
                    (Err(e), Err(e_ref)) => {
                        assert_eq!(e, e_ref, "real, n = {n}");
                        singular += 1;
                    }
                    (r, r_ref) => panic!("real, n = {n}: {r:?} against {:?}", r_ref.err()),
                }
                match (
                    clu.factor(&a, &im),
                    reference_complex(n, (&a, &im), (&b, &c)),
                ) {
                    (Ok(()), Ok((piv, yr_ref, yi_ref))) => {
                        let (mut yr, mut yi) = (b.clone(), c.clone());
                        clu.solve(&mut yr, &mut yi);
                        assert_eq!(clu.piv, piv, "complex pivots, n = {n}");
                        assert_eq!(
                            (bits(&yr), bits(&yi)),
                            (bits(&yr_ref), bits(&yi_ref)),
                            "complex, n = {n}"
                        );
                        solved += 1;
                    }
                    (Err(e), Err(e_ref)) => {
                        assert_eq!(e, e_ref, "complex, n = {n}");
                        singular += 1;
                    }
                    (r, r_ref) => panic!("complex, n = {n}: {r:?} against {:?}", r_ref.err()),
                }
            }
        }
        // both outcomes met, the solved ones by far the most
        assert!(
            solved > 400 && singular > 0,
            "{solved} solved, {singular} singular"
        );
    }

    #[test]
    fn a_zero_column_is_reported_at_every_order() {
        // column k of a random matrix zeroed: the elimination keeps it
        // zero, so the pivot of step k vanishes (real and complex, the
        // specialised and the general loops)
        let mut seed = 3;
        for n in (1..=FIXED_MAX).chain([FIXED_MAX + 2, 33]) {
            for k in [0, n / 2, n - 1] {
                let mut a = random_matrix(n, n as f64, &mut seed);
                let mut im = random_matrix(n, 0.0, &mut seed);
                for i in 0..n {
                    a[i * n + k] = 0.0;
                    im[i * n + k] = 0.0;
                }
                assert_eq!(RealLu::new(n).factor(&a), Err(Singular(k)), "n = {n}");
                let mut clu = ComplexLu::new(n);
                assert_eq!(clu.factor(&a, &im), Err(Singular(k)), "n = {n}");
            }
        }
        // a pivot that is not finite is reported too
        let mut a = random_matrix(6, 6.0, &mut seed);
        a[0] = f64::NAN;
        assert_eq!(RealLu::new(6).factor(&a), Err(Singular(0)));
    }

    #[test]
    fn singular_matrix_reports_the_column() {
        // second column is twice the first
        let a = [2.0, 4.0, 1.0, 1.0, 2.0, 3.0, 4.0, 8.0, 5.0];
        let mut lu = RealLu::new(3);
        assert_eq!(lu.factor(&a), Err(Singular(1)));
    }
}
