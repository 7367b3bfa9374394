//! The fill-reducing column ordering of the sparse LU (COLAMD), on
//! 32-bit indices where they fit.

use super::{DENSE_COLUMN_FRACTION, SparsePattern};
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::sparse::linalg::colamd;
use faer::sparse::{SymbolicSparseColMat, SymbolicSparseColMatRef};

/// The COLAMD column ordering of `pattern` (Davis, Gilbert, Larimore &
/// Ng, "A column approximate minimum degree ordering algorithm", ACM TOMS
/// 30(3), 2004) with the default parameters but the dense columns'
/// [`DENSE_COLUMN_FRACTION`], forward and inverse; the natural order when
/// the ordering runs out of memory.
pub(super) fn colamd_order(pattern: &SparsePattern) -> (Vec<usize>, Vec<usize>) {
    if let Some(order) = colamd_order_u32(pattern) {
        return order;
    }
    colamd_order_usize(pattern)
}

/// [`colamd_order`] on a copy of the pattern with 32-bit indices, when
/// the order and the scratch of COLAMD (about `2.2·nnz` indices, a few
/// per row and column) fit them: the same ordering — COLAMD computes on
/// the indices alone, whatever their width — in half the scratch, which
/// is the largest allocation while a large system is ordered (it exceeds
/// the copy, `n + 1 + nnz` indices of 4 bytes). `None` when an index
/// does not fit in 32 bits or the scratch cannot be allocated.
pub(super) fn colamd_order_u32(pattern: &SparsePattern) -> Option<(Vec<usize>, Vec<usize>)> {
    let n = pattern.n();
    let nnz = pattern.nnz();
    // COLAMD's workspace holds `2·nnz + nnz/5 + n` indices and its rows
    // and columns count up to `nnz + n`: all must fit in a u32
    let work = nnz.checked_mul(3)?.checked_add(n.checked_mul(2)?)?;
    if u32::try_from(work).is_err() {
        return None;
    }
    let sym = pattern.symbolic.as_ref();
    let narrow = |v: &[usize]| -> Option<Vec<u32>> {
        let mut out = Vec::new();
        out.try_reserve_exact(v.len()).ok()?;
        out.extend(v.iter().map(|&x| x as u32));
        Some(out)
    };
    let col_ptr = narrow(sym.col_ptr())?;
    let row_idx = narrow(sym.row_idx())?;
    let narrow_sym = SymbolicSparseColMat::<u32>::new_checked(n, n, col_ptr, None, row_idx);
    let (fwd, inv) = colamd_with(narrow_sym.as_ref())?;
    drop(narrow_sym);
    let widen = |v: Vec<u32>| v.into_iter().map(|x| x as usize).collect();
    Some((widen(fwd), widen(inv)))
}

/// [`colamd_order`] with the pattern's own (`usize`) indices; the natural
/// order when the ordering runs out of memory.
pub(super) fn colamd_order_usize(pattern: &SparsePattern) -> (Vec<usize>, Vec<usize>) {
    let n = pattern.n();
    colamd_with(pattern.symbolic.as_ref()).unwrap_or_else(|| ((0..n).collect(), (0..n).collect()))
}

/// COLAMD's forward and inverse column order of the square pattern `sym`
/// with the dense columns' [`DENSE_COLUMN_FRACTION`]; `None` when its
/// scratch cannot be allocated or the ordering fails.
fn colamd_with<I: faer::Index>(sym: SymbolicSparseColMatRef<'_, I>) -> Option<(Vec<I>, Vec<I>)> {
    let n = sym.ncols();
    let req = colamd::order_scratch::<I>(n, n, sym.row_idx().len());
    let mut mem = MemBuffer::try_new(req).ok()?;
    let (mut fwd, mut inv) = (vec![I::truncate(0); n], vec![I::truncate(0); n]);
    colamd::order(
        &mut fwd,
        &mut inv,
        sym,
        colamd::Control {
            dense_col: DENSE_COLUMN_FRACTION,
            ..colamd::Control::default()
        },
        MemStack::new(&mut mem),
    )
    .ok()?;
    Some((fwd, inv))
}
