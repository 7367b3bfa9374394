//! Equation selection for overdetermined quasi-linear DAEs.
//!
//! QUALIDAES (Steinbrecher 2016, section 4, system (39)) integrates
//! `E(t,z) ż = k(t,z)`, `0 = g(t,z)` with `m_d + m_c ≥ n` such that the
//! constraints are solved exactly while the differential part holds in an
//! "approximative sense". We realise this with a rank-revealing *selection*:
//! at every Jacobian evaluation (the sparse path of [`crate::Radau5`] keeps
//! a selection while the steps succeed), Gaussian elimination with complete pivoting
//! first picks a maximal set of linearly independent constraint rows of
//! `G = ∂g/∂z` (so redundant constraints, like the repeated level-0
//! constraint of the pendulum HiC form (38), are harmless), and then
//! completes the rank with the rows of `E` restricted to the complement
//! eliminated by those pivots — i.e. the differential equations are
//! projected onto a coordinate complement of the constraint manifold's
//! normal space. The selected rows form a square DAE whose Newton matrix
//! `γ/h·M − J` is nonsingular for small `h` whenever the overdetermined DAE
//! is regular (rank `[E; G] = n`).

/// Rows chosen from the differential part and from the constraints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EquationSelection {
    /// Indices (into `0..n_d`) of the differential rows kept, ascending.
    pub diff_rows: Vec<usize>,
    /// Indices (into `0..n_g`) of the constraint rows kept, ascending.
    pub constraint_rows: Vec<usize>,
}

/// Relative pivot threshold below which a row is considered dependent.
const RANK_TOL: f64 = 1e-10;

/// Selects `n` rows from the dense row-major `e` (`n_d × n`) and `g`
/// (`n_g × n`): first a maximal independent set of constraint rows, then
/// differential rows completing the rank. Returns `Err(rank)` if
/// `[E; G]` has rank below `n`.
pub fn select_equations(
    n: usize,
    e: &[f64],
    n_d: usize,
    g: &[f64],
    n_g: usize,
) -> Result<EquationSelection, usize> {
    // Work matrix: constraint rows first, then differential rows; each row
    // normalised by its infinity norm so that the threshold is scale-free.
    let rows = n_g + n_d;
    let mut w = Vec::with_capacity(rows * n);
    w.extend_from_slice(g);
    w.extend_from_slice(e);
    for r in 0..rows {
        let row = &mut w[r * n..(r + 1) * n];
        let m = row.iter().fold(0.0f64, |a, &x| a.max(x.abs()));
        if m > 0.0 && m.is_finite() {
            row.iter_mut().for_each(|x| *x /= m);
        }
    }
    let mut row_used = vec![false; rows];
    let mut col_used = vec![false; n];
    let mut sel = EquationSelection {
        diff_rows: Vec::new(),
        constraint_rows: Vec::new(),
    };
    let mut rank = 0;
    for (lo, hi) in [(0, n_g), (n_g, rows)] {
        while rank < n {
            // complete pivoting within the current block of rows
            let mut best = 0.0;
            let mut piv = None;
            for r in lo..hi {
                if row_used[r] {
                    continue;
                }
                for c in 0..n {
                    if !col_used[c] {
                        let v = w[r * n + c].abs();
                        if v > best {
                            best = v;
                            piv = Some((r, c));
                        }
                    }
                }
            }
            let Some((pr, pc)) = piv else { break };
            if best <= RANK_TOL || !best.is_finite() {
                break;
            }
            row_used[pr] = true;
            col_used[pc] = true;
            rank += 1;
            if pr < n_g {
                sel.constraint_rows.push(pr);
            } else {
                sel.diff_rows.push(pr - n_g);
            }
            let p = w[pr * n + pc];
            for r in 0..rows {
                if row_used[r] {
                    continue;
                }
                let f = w[r * n + pc] / p;
                if f != 0.0 {
                    for c in 0..n {
                        w[r * n + c] -= f * w[pr * n + c];
                    }
                    w[r * n + pc] = 0.0;
                }
            }
        }
    }
    if rank < n {
        return Err(rank);
    }
    sel.diff_rows.sort_unstable();
    sel.constraint_rows.sort_unstable();
    Ok(sel)
}

/// [`select_equations`] on sparse input: the same complete-pivoting
/// elimination (same pivots, same tie-breaking, same arithmetic on the
/// nonzeros, hence the same selection) on rows stored as sorted sparse
/// vectors, without the dense `(n_d + n_g) × n` work matrix.
///
/// `e_pattern`/`e_values` and `g_pattern`/`g_values` are `(row, col)`
/// patterns with values (duplicates summed), as the Jacobians of
/// [`crate::QuasiLinearDae`]. Each row's largest entry in a free column
/// is kept in a priority queue (per block: constraints, then differential
/// rows) and refreshed only for the rows an elimination step changes, so
/// the cost is that of the elimination's fill plus `O(log)` per update.
///
/// Limit: complete pivoting does not reduce fill. On the HiC form of a
/// mechanical chain (`models/scale/pendulum_chain.dae`; the link equations
/// `d_k = x_k − x_{k−1}` tie positions along the chain) the rows fill up
/// to a large fraction of the dense matrix (50 links: 62 000 of 157 500
/// entries), so for such models the selection, not the LU, dominates the
/// cost of a Jacobian evaluation. Neither a Markowitz column choice with
/// threshold 0.1 nor a fewest-rows tie-break reduced that fill (tried):
/// the row order matters, which [`select_equations_ordered`] keeps — that
/// is the selection [`crate::Radau5`]'s sparse path uses (this one remains
/// its fallback and the reference the tests compare against).
pub fn select_equations_sparse(
    n: usize,
    e_pattern: &[(usize, usize)],
    e_values: &[f64],
    n_d: usize,
    g_pattern: &[(usize, usize)],
    g_values: &[f64],
    n_g: usize,
) -> Result<EquationSelection, usize> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let rows = n_g + n_d;
    // Sparse rows (constraints first, then differential rows), sorted by
    // column with duplicates summed in pattern order (as a dense scatter).
    let mut w = stacked_rows(n, (e_pattern, e_values, n_d), (g_pattern, g_values, n_g));
    let mut col_rows: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (r, row) in w.iter_mut().enumerate() {
        row.sort_by_key(|&(c, _)| c); // stable: keeps the pattern order of duplicates
        let mut merged: Vec<(usize, f64)> = Vec::with_capacity(row.len());
        for &(c, v) in row.iter() {
            match merged.last_mut() {
                Some((lc, lv)) if *lc == c => *lv += v,
                _ => merged.push((c, 0.0 + v)),
            }
        }
        let m = merged.iter().fold(0.0f64, |a, &(_, x)| a.max(x.abs()));
        if m > 0.0 && m.is_finite() {
            merged.iter_mut().for_each(|(_, x)| *x /= m);
        }
        for &(c, _) in &merged {
            col_rows[c].push(r);
        }
        *row = merged;
    }
    let mut col_used = vec![false; n];
    // Largest |entry| of a row in a free column; the first column on ties
    // (the dense row-major scan with a strict `>`).
    let row_best = |row: &[(usize, f64)], col_used: &[bool]| -> Option<(f64, usize)> {
        let mut best = 0.0;
        let mut at = None;
        for &(c, x) in row {
            if !col_used[c] {
                let v = x.abs();
                if v > best {
                    best = v;
                    at = Some(c);
                }
            }
        }
        at.map(|c| (best, c))
    };
    // Heap entries (|value| bits, Reverse(row), Reverse(col), version):
    // the largest value first, then the first row, as the dense scan.
    type Entry = (u64, Reverse<usize>, Reverse<usize>, u32);
    let mut version = vec![0u32; rows];
    let mut heaps: [BinaryHeap<Entry>; 2] = [BinaryHeap::new(), BinaryHeap::new()];
    let block = |r: usize| usize::from(r >= n_g);
    for (r, row) in w.iter().enumerate() {
        if let Some((v, c)) = row_best(row, &col_used) {
            heaps[block(r)].push((v.to_bits(), Reverse(r), Reverse(c), 0));
        }
    }
    let mut row_used = vec![false; rows];
    let mut sel = EquationSelection {
        diff_rows: Vec::new(),
        constraint_rows: Vec::new(),
    };
    let mut rank = 0;
    let mut scratch: Vec<(usize, f64)> = Vec::new();
    for b in 0..2 {
        while rank < n {
            // the current (valid) best entry of the block
            let mut piv = None;
            while let Some((bits, Reverse(r), Reverse(c), ver)) = heaps[b].pop() {
                if !row_used[r] && ver == version[r] && !col_used[c] {
                    piv = Some((f64::from_bits(bits), r, c));
                    break;
                }
            }
            let Some((best, pr, pc)) = piv else { break };
            if best <= RANK_TOL || !best.is_finite() {
                break;
            }
            row_used[pr] = true;
            col_used[pc] = true;
            rank += 1;
            if pr < n_g {
                sel.constraint_rows.push(pr);
            } else {
                sel.diff_rows.push(pr - n_g);
            }
            let prow = std::mem::take(&mut w[pr]);
            let p = prow
                .binary_search_by_key(&pc, |&(c, _)| c)
                .map(|k| prow[k].1)
                .unwrap_or(0.0);
            let candidates = std::mem::take(&mut col_rows[pc]);
            for &r in &candidates {
                if row_used[r] {
                    continue;
                }
                let Ok(k) = w[r].binary_search_by_key(&pc, |&(c, _)| c) else {
                    continue;
                };
                let f = w[r][k].1 / p;
                if f == 0.0 {
                    continue;
                }
                // row_r ← row_r − f·row_p over the union of both patterns
                scratch.clear();
                let (a, bp) = (&w[r], &prow);
                let (mut i, mut j) = (0, 0);
                while i < a.len() || j < bp.len() {
                    let ca = a.get(i).map_or(usize::MAX, |e| e.0);
                    let cb = bp.get(j).map_or(usize::MAX, |e| e.0);
                    if ca < cb {
                        scratch.push(a[i]);
                        i += 1;
                    } else if cb < ca {
                        scratch.push((cb, 0.0 - f * bp[j].1));
                        col_rows[cb].push(r);
                        j += 1;
                    } else {
                        scratch.push((ca, a[i].1 - f * bp[j].1));
                        i += 1;
                        j += 1;
                    }
                }
                if let Ok(k) = scratch.binary_search_by_key(&pc, |&(c, _)| c) {
                    scratch[k].1 = 0.0;
                }
                std::mem::swap(&mut w[r], &mut scratch);
                version[r] += 1;
                if let Some((v, c)) = row_best(&w[r], &col_used) {
                    heaps[block(r)].push((v.to_bits(), Reverse(r), Reverse(c), version[r]));
                }
            }
            col_rows[pc] = candidates;
            w[pr] = prow;
        }
    }
    if rank < n {
        return Err(rank);
    }
    sel.diff_rows.sort_unstable();
    sel.constraint_rows.sort_unstable();
    Ok(sel)
}

/// A sparse matrix given as a `(row, col)` pattern, its values and its
/// number of rows.
type SparseRows<'a> = (&'a [(usize, usize)], &'a [f64], usize);

/// The rows of `G` then those of `E` as lists of `(col, value)` entries in
/// pattern order (entries outside the matrix are ignored).
fn stacked_rows(n: usize, e: SparseRows<'_>, g: SparseRows<'_>) -> Vec<Vec<(usize, f64)>> {
    let (n_d, n_g) = (e.2, g.2);
    let mut w: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n_g + n_d];
    for (&(r, c), &v) in g.0.iter().zip(g.1) {
        if r < n_g && c < n {
            w[r].push((c, v));
        }
    }
    for (&(r, c), &v) in e.0.iter().zip(e.1) {
        if r < n_d && c < n {
            w[n_g + r].push((c, v));
        }
    }
    w
}

/// A reduced row becomes a pivot of the ordered selection on the first
/// pass only if its largest remaining entry is at least this fraction of
/// its original size (rows are normalised): the complement is chosen from
/// well-conditioned rows first.
const ORDERED_GOOD: f64 = 0.1;

/// The equation selection for large sparse systems with limited fill:
/// rows are taken *in their order* (the constraints, then the differential
/// rows), each reduced against the pivot rows chosen so far (sparse
/// accumulator, pivots applied in the order they were created) and kept
/// as a new pivot row — pivoting on its largest remaining entry — when
/// that entry is above the rank tolerance. Row reduction only brings in
/// the entries of earlier pivot rows, so for chain-like models (whose
/// equations follow the chain) the fill stays within the coupling band,
/// where the complete pivoting of [`select_equations_sparse`] fills in
/// a large fraction of the matrix. Differential rows are taken in two
/// passes: first those whose remaining entry is at least
/// [`ORDERED_GOOD`] of the row (well-conditioned complements), then the
/// rest down to the rank tolerance. The selection may differ from the
/// complete-pivoting one (both are valid complements); `Err(rank)` when
/// `[E; G]` is rank deficient.
pub fn select_equations_ordered(
    n: usize,
    e_pattern: &[(usize, usize)],
    e_values: &[f64],
    n_d: usize,
    g_pattern: &[(usize, usize)],
    g_values: &[f64],
    n_g: usize,
) -> Result<EquationSelection, usize> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let rows = n_g + n_d;
    let w = stacked_rows(n, (e_pattern, e_values, n_d), (g_pattern, g_values, n_g));
    // pivot k: its column and its (reduced, normalised) row
    let mut pivot_of_col: Vec<usize> = vec![usize::MAX; n];
    let mut pivots: Vec<(usize, Vec<(usize, f64)>)> = Vec::new();
    // sparse accumulator
    let mut x = vec![0.0f64; n];
    let mut touched: Vec<usize> = Vec::new();
    let mut mark = vec![false; n];
    let mut queued: Vec<bool> = Vec::new();
    let mut sel = EquationSelection {
        diff_rows: Vec::new(),
        constraint_rows: Vec::new(),
    };
    let mut taken = vec![false; rows];
    let passes: [(std::ops::Range<usize>, f64); 3] = [
        (0..n_g, RANK_TOL),
        (n_g..rows, ORDERED_GOOD),
        (n_g..rows, RANK_TOL),
    ];
    for (range, threshold) in passes {
        for r in range {
            if pivots.len() == n {
                break;
            }
            if taken[r] {
                continue;
            }
            // load the row, normalised by its largest entry
            let scale = w[r].iter().fold(0.0f64, |a, &(_, v)| a.max(v.abs()));
            if !(scale > 0.0 && scale.is_finite()) {
                continue;
            }
            queued.clear();
            queued.resize(pivots.len(), false);
            let mut heap: BinaryHeap<Reverse<usize>> = BinaryHeap::new();
            for &(c, v) in &w[r] {
                if !mark[c] {
                    mark[c] = true;
                    touched.push(c);
                }
                x[c] += v / scale;
                let p = pivot_of_col[c];
                if p != usize::MAX && !queued[p] {
                    queued[p] = true;
                    heap.push(Reverse(p));
                }
            }
            // eliminate the pivot columns, oldest pivot first
            while let Some(Reverse(p)) = heap.pop() {
                let (pc, ref prow) = pivots[p];
                let pv = prow.iter().find(|e| e.0 == pc).map_or(0.0, |e| e.1);
                let f = x[pc] / pv;
                if f == 0.0 || !f.is_finite() {
                    x[pc] = 0.0;
                    continue;
                }
                for &(c, v) in prow {
                    if !mark[c] {
                        mark[c] = true;
                        touched.push(c);
                    }
                    x[c] -= f * v;
                    let q = pivot_of_col[c];
                    if q != usize::MAX && q != p && !queued[q] {
                        queued[q] = true;
                        heap.push(Reverse(q));
                    }
                }
                x[pc] = 0.0;
            }
            // the largest remaining entry (first column on ties)
            let mut best = (0.0f64, usize::MAX);
            for &c in &touched {
                if pivot_of_col[c] == usize::MAX && x[c].abs() > best.0 {
                    best = (x[c].abs(), c);
                }
            }
            let accept = best.1 != usize::MAX && best.0 > threshold && best.0.is_finite();
            if accept {
                let mut row: Vec<(usize, f64)> = touched
                    .iter()
                    .filter(|&&c| pivot_of_col[c] == usize::MAX && x[c] != 0.0)
                    .map(|&c| (c, x[c]))
                    .collect();
                row.sort_unstable_by_key(|e| e.0);
                pivot_of_col[best.1] = pivots.len();
                pivots.push((best.1, row));
                taken[r] = true;
                if r < n_g {
                    sel.constraint_rows.push(r);
                } else {
                    sel.diff_rows.push(r - n_g);
                }
            }
            for &c in &touched {
                x[c] = 0.0;
                mark[c] = false;
            }
            touched.clear();
        }
    }
    if pivots.len() < n {
        return Err(pivots.len());
    }
    sel.diff_rows.sort_unstable();
    sel.constraint_rows.sort_unstable();
    Ok(sel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pendulum_hic_drops_the_repeated_constraint_and_two_velocity_rows() {
        // z = (x, y, v, w, λ) at the horizontal start x = 1, m = l = 1.
        let n = 5;
        let e = [
            1.0, 0.0, 0.0, 0.0, 0.0, //
            0.0, 1.0, 0.0, 0.0, 0.0, //
            0.0, 0.0, 1.0, 0.0, 0.0, //
            0.0, 0.0, 0.0, 1.0, 0.0,
        ];
        let g = [
            2.0, 0.0, 0.0, 0.0, 0.0, // x² + y² − 1
            2.0, 0.0, 0.0, 0.0, 0.0, // repeated
            0.0, 0.0, 2.0, 0.0, 0.0, // 2xv + 2yw (v = w = 0)
            0.0, -13.75, 0.0, 0.0, -2.0, // level 2
        ];
        let s = select_equations(n, &e, 4, &g, 4).unwrap();
        assert_eq!(s.constraint_rows.len(), 3);
        assert!(s.constraint_rows.contains(&2) && s.constraint_rows.contains(&3));
        // x and v are fixed by the constraints, so der(y) and der(w) remain
        assert_eq!(s.diff_rows, vec![1, 3]);
    }

    #[test]
    fn rank_deficient_system_is_reported() {
        let e = [1.0, 0.0, 0.0];
        let g = [1.0, 0.0, 0.0];
        assert_eq!(select_equations(3, &e, 1, &g, 1), Err(1));
    }
}
