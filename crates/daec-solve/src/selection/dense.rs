//! The dense elimination of [`super::select_equations_preferring`] with
//! its storage kept between selections ([`DenseSelectionScratch`]).
//!
//! Complete pivoting over the work matrix `[G; E]` (rows normalised by
//! their largest entry), pass by pass (see [`super::PivotPreference`]).
//! The elimination works on the free columns only: the work matrix keeps
//! them in its first columns (a pivot's column is swapped behind them),
//! so an update and an unrestricted search touch `n − k` entries of a row
//! after `k` pivots instead of `n`. A row is updated only while a pass to
//! come can still pick it (rows of finished passes are never read again).
//! The arithmetic on the free columns is that of an elimination over
//! whole rows, and ties are broken as a search over the columns in their
//! original order breaks them (the first row of the pass, then the
//! smallest column), so the selection is the same.

use super::{EquationSelection, PREFER_FLOOR, PivotPreference, RANK_TOL};

/// A row of a pass: its index in the work matrix, whether it is searched
/// on its preferred columns only, and the scale its entries are measured
/// against.
type PassRow = (usize, bool, f64);

/// The storage of the dense selection, reused from one selection to the
/// next: the work matrix, the column permutation, the passes and the
/// state of the rows.
#[derive(Debug, Clone, Default)]
pub(crate) struct DenseSelectionScratch {
    /// The work matrix, row-major, `n` entries a row; position `q` of a
    /// row holds the original column `col[q]`.
    w: Vec<f64>,
    /// The original column at each position.
    col: Vec<usize>,
    /// The position of each original column.
    pos: Vec<usize>,
    /// The rows of all passes, one after the other.
    pass_rows: Vec<PassRow>,
    /// The end of each pass in `pass_rows`.
    pass_end: Vec<usize>,
    /// Whether a row is still updated: not pivoted yet and in a pass to
    /// come or the current one.
    live: Vec<bool>,
    /// The rows with `live` set, in no particular order: the rows an
    /// elimination updates (the dead rows are not visited).
    live_rows: Vec<usize>,
    /// The last pass each row is in (`usize::MAX`: none).
    last_pass: Vec<usize>,
    /// The pivot row's free entries.
    pivot_row: Vec<f64>,
    /// The pivots of the last selection, `(row of the work matrix,
    /// original column)`, in the order they were taken.
    pivots: Vec<(usize, usize)>,
}

/// The preferred columns of row `r` of the work matrix (constraint rows
/// `0..n_g`, then the differential rows).
fn preferred(p: &PivotPreference, n_g: usize, r: usize) -> &[usize] {
    if r < n_g {
        &p.constraint[r]
    } else {
        &p.diff[r - n_g]
    }
}

impl DenseSelectionScratch {
    /// Loads `[G; E]` into the work matrix, each row divided by its
    /// largest entry (so that the rank threshold is scale-free), and
    /// resets the column permutation.
    fn load(&mut self, n: usize, e: &[f64], g: &[f64]) {
        self.w.clear();
        self.w.extend_from_slice(g);
        self.w.extend_from_slice(e);
        for row in self.w.chunks_exact_mut(n.max(1)) {
            let m = row.iter().fold(0.0f64, |a, &x| a.max(x.abs()));
            if m > 0.0 && m.is_finite() {
                row.iter_mut().for_each(|x| *x /= m);
            }
        }
        self.col.clear();
        self.col.extend(0..n);
        self.pos.clear();
        self.pos.extend(0..n);
        self.pivot_row.resize(n, 0.0);
        self.pivots.clear();
    }

    /// The passes: per constraint level of `prefer`, in ascending order,
    /// the level's rows restricted to their preferred columns (those
    /// whose preferred entries are not round-off), then all of them on
    /// all columns; the same for the differential rows. Without a
    /// preference, the constraint rows and then the differential rows on
    /// all columns. Sets which rows the passes hold.
    fn plan(&mut self, n: usize, n_d: usize, n_g: usize, prefer: Option<&PivotPreference>) {
        let rows = n_g + n_d;
        self.pass_rows.clear();
        self.pass_end.clear();
        match prefer {
            Some(p) => {
                for group in &p.groups {
                    self.push_group(n, n_g, p, group.iter().copied());
                }
                self.push_group(n, n_g, p, n_g..rows);
            }
            None => {
                self.pass_rows.extend((0..n_g).map(|r| (r, false, 1.0)));
                self.pass_end.push(self.pass_rows.len());
                self.pass_rows.extend((n_g..rows).map(|r| (r, false, 1.0)));
                self.pass_end.push(self.pass_rows.len());
            }
        }
        self.last_pass.clear();
        self.last_pass.resize(rows, usize::MAX);
        let mut start = 0;
        for (k, &end) in self.pass_end.iter().enumerate() {
            for &(r, _, _) in &self.pass_rows[start..end] {
                self.last_pass[r] = k;
            }
            start = end;
        }
        self.live.clear();
        self.live
            .extend(self.last_pass.iter().map(|&k| k != usize::MAX));
        self.live_rows.clear();
        self.live_rows
            .extend((0..rows).filter(|&r| self.last_pass[r] != usize::MAX));
    }

    /// Takes row `r` out of the rows still updated (it was pivoted).
    fn retire(&mut self, r: usize) {
        self.live[r] = false;
        if let Some(k) = self.live_rows.iter().position(|&x| x == r) {
            self.live_rows.swap_remove(k);
        }
    }

    /// Takes the rows whose last pass is `pass` out of the rows still
    /// updated (no pass to come reads them).
    fn end_pass(&mut self, pass: usize) {
        for (live, &last) in self.live.iter_mut().zip(&self.last_pass) {
            if last == pass {
                *live = false;
            }
        }
        let live = &self.live;
        self.live_rows.retain(|&r| live[r]);
    }

    /// The two passes of a group of rows: those whose preferred entries
    /// are not round-off on their preferred columns, then all of them on
    /// all columns.
    fn push_group(
        &mut self,
        n: usize,
        n_g: usize,
        p: &PivotPreference,
        rows: impl Iterator<Item = usize> + Clone,
    ) {
        for r in rows.clone() {
            let s = preferred(p, n_g, r)
                .iter()
                .fold(0.0f64, |a, &c| a.max(self.w[r * n + c].abs()));
            if s >= PREFER_FLOOR && s.is_finite() {
                self.pass_rows.push((r, true, s));
            }
        }
        self.pass_end.push(self.pass_rows.len());
        self.pass_rows.extend(rows.map(|r| (r, false, 1.0)));
        self.pass_end.push(self.pass_rows.len());
    }

    /// The pivot of complete pivoting over the live rows of the pass
    /// `pass_rows[range]` and their free columns (`nfree` positions):
    /// `(row, position, |entry| / scale)`, the first row of the pass
    /// and then the smallest original column among equal magnitudes.
    fn search(
        &self,
        n: usize,
        n_g: usize,
        nfree: usize,
        range: std::ops::Range<usize>,
        prefer: Option<&PivotPreference>,
    ) -> Option<(usize, usize, f64)> {
        let mut best = 0.0;
        let mut piv: Option<(usize, usize)> = None;
        for &(r, restricted, scale) in &self.pass_rows[range] {
            if !self.live[r] {
                continue;
            }
            let row = &self.w[r * n..r * n + nfree];
            match prefer.filter(|_| restricted) {
                Some(p) => {
                    // (the preferred columns in their original order)
                    for &c in preferred(p, n_g, r) {
                        let q = self.pos[c];
                        if q >= nfree {
                            continue;
                        }
                        let v = row[q].abs() / scale;
                        if v > best {
                            best = v;
                            piv = Some((r, q));
                        }
                    }
                }
                None => {
                    // (an unrestricted row's scale is 1: |x| / 1 = |x|
                    // exactly, NaN included)
                    debug_assert!(scale == 1.0);
                    for (q, &x) in row.iter().enumerate() {
                        let v = x.abs();
                        let first = match piv {
                            Some((pr, pq)) => {
                                v > best || (v == best && pr == r && self.col[q] < self.col[pq])
                            }
                            None => v > best,
                        };
                        if first {
                            best = v;
                            piv = Some((r, q));
                        }
                    }
                }
            }
        }
        piv.map(|(r, q)| (r, q, best))
    }

    /// Eliminates the pivot `(pr, pq)` from the live rows' free columns
    /// and moves its column behind the free ones (`nfree` before).
    fn eliminate(&mut self, n: usize, nfree: usize, pr: usize, pq: usize) {
        let p = self.w[pr * n + pq];
        let pivot_row = &mut self.pivot_row[..nfree];
        pivot_row.copy_from_slice(&self.w[pr * n..pr * n + nfree]);
        let last = nfree - 1;
        // (the live rows only, from their list; a zero entry gives the
        // factor 0, which updates nothing: it is tested before dividing)
        for &r in &self.live_rows {
            let row = &mut self.w[r * n..r * n + nfree];
            let x = row[pq];
            if x != 0.0 {
                let f = x / p;
                if f != 0.0 {
                    for (x, &u) in row.iter_mut().zip(pivot_row.iter()) {
                        *x -= f * u;
                    }
                }
            }
            row[pq] = 0.0;
            row.swap(pq, last);
        }
        let (c_piv, c_last) = (self.col[pq], self.col[last]);
        self.col.swap(pq, last);
        self.pos[c_piv] = last;
        self.pos[c_last] = pq;
    }
}

/// [`super::select_equations_preferring`] in the storage of `scratch`
/// and `sel`, kept from one selection to the next (the integrator selects
/// at many Jacobians): the rows of `sel` are replaced (on `Err(rank)` they
/// are those selected before the rank was found short), no allocation
/// once both have held a selection.
#[allow(clippy::too_many_arguments)]
pub(crate) fn select_preferring_into(
    scratch: &mut DenseSelectionScratch,
    n: usize,
    e: &[f64],
    n_d: usize,
    g: &[f64],
    n_g: usize,
    prefer: Option<&PivotPreference>,
    sel: &mut EquationSelection,
) -> Result<(), usize> {
    let prefer = prefer.filter(|p| p.constraint.len() == n_g && p.diff.len() == n_d);
    scratch.load(n, e, g);
    scratch.plan(n, n_d, n_g, prefer);
    sel.diff_rows.clear();
    sel.constraint_rows.clear();
    let mut rank = 0;
    let mut nfree = n;
    let mut start = 0;
    for pass in 0..scratch.pass_end.len() {
        let end = scratch.pass_end[pass];
        while rank < n {
            let Some((pr, pq, best)) = scratch.search(n, n_g, nfree, start..end, prefer) else {
                break;
            };
            if best <= RANK_TOL || !best.is_finite() {
                break;
            }
            scratch.retire(pr);
            scratch.pivots.push((pr, scratch.col[pq]));
            rank += 1;
            if pr < n_g {
                sel.constraint_rows.push(pr);
            } else {
                sel.diff_rows.push(pr - n_g);
            }
            scratch.eliminate(n, nfree, pr, pq);
            nfree -= 1;
        }
        // (the rows no pass to come holds are read no more)
        scratch.end_pass(pass);
        start = end;
    }
    if rank < n {
        return Err(rank);
    }
    sel.diff_rows.sort_unstable();
    sel.constraint_rows.sort_unstable();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{INVARIANT_LEVEL, select_equations_preferring};
    use super::*;

    /// The elimination over whole rows that [`select_preferring_into`]
    /// replaces: every unused row updated on every column, the pivot
    /// searched over all columns in their order.
    fn whole_rows(
        n: usize,
        e: &[f64],
        n_d: usize,
        g: &[f64],
        n_g: usize,
        prefer: Option<&PivotPreference>,
    ) -> (Result<EquationSelection, usize>, Vec<(usize, usize)>) {
        let rows = n_g + n_d;
        let mut pivots = Vec::new();
        let mut w = [g, e].concat();
        for row in w.chunks_exact_mut(n.max(1)) {
            let m = row.iter().fold(0.0f64, |a, &x| a.max(x.abs()));
            if m > 0.0 && m.is_finite() {
                row.iter_mut().for_each(|x| *x /= m);
            }
        }
        // (row, its columns or None for all, scale) of each pass
        type Pass = Vec<(usize, Option<Vec<usize>>, f64)>;
        let mut passes: Vec<Pass> = Vec::new();
        match prefer.filter(|p| p.constraint.len() == n_g && p.diff.len() == n_d) {
            Some(p) => {
                // (per level, then the differential rows, as `plan`)
                let mut groups: Vec<Vec<(usize, &[usize])>> = p
                    .groups
                    .iter()
                    .map(|rows| rows.iter().map(|&r| (r, &p.constraint[r][..])).collect())
                    .collect();
                groups.push((0..n_d).map(|r| (n_g + r, &p.diff[r][..])).collect());
                for group in groups {
                    passes.push(
                        group
                            .iter()
                            .map(|&(r, cols)| {
                                let s = cols.iter().fold(0.0f64, |a, &c| a.max(w[r * n + c].abs()));
                                (r, Some(cols.to_vec()), s)
                            })
                            .filter(|&(_, _, s)| s >= PREFER_FLOOR && s.is_finite())
                            .collect(),
                    );
                    passes.push(group.iter().map(|&(r, _)| (r, None, 1.0)).collect());
                }
            }
            None => {
                passes.push((0..n_g).map(|r| (r, None, 1.0)).collect());
                passes.push((n_g..rows).map(|r| (r, None, 1.0)).collect());
            }
        }
        let mut used = vec![false; rows];
        let mut sel = EquationSelection::all(0, 0);
        let mut rank = 0;
        for pass in &passes {
            while rank < n {
                let (mut best, mut piv) = (0.0, None);
                for (r, cols, scale) in pass {
                    if used[*r] {
                        continue;
                    }
                    let all: Vec<usize> = (0..n).collect();
                    for &c in cols.as_ref().unwrap_or(&all) {
                        let v = w[r * n + c].abs() / scale;
                        if v > best {
                            (best, piv) = (v, Some((*r, c)));
                        }
                    }
                }
                let Some((pr, pc)) = piv else { break };
                if best <= RANK_TOL || !best.is_finite() {
                    break;
                }
                used[pr] = true;
                pivots.push((pr, pc));
                rank += 1;
                if pr < n_g {
                    sel.constraint_rows.push(pr);
                } else {
                    sel.diff_rows.push(pr - n_g);
                }
                let prow = w[pr * n..(pr + 1) * n].to_vec();
                for (row, &u) in w.chunks_exact_mut(n).zip(&used) {
                    if !u {
                        let f = row[pc] / prow[pc];
                        if f != 0.0 {
                            row.iter_mut().zip(&prow).for_each(|(x, &v)| *x -= f * v);
                        }
                        row[pc] = 0.0;
                    }
                }
            }
        }
        if rank < n {
            return (Err(rank), pivots);
        }
        sel.diff_rows.sort_unstable();
        sel.constraint_rows.sort_unstable();
        (Ok(sel), pivots)
    }

    /// A xorshift generator of test values.
    struct Values(u64);

    impl Values {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, k: usize) -> usize {
            (self.next() % k as u64) as usize
        }
        /// Mostly zeros and entries of equal magnitude (ties), some
        /// round-off and some general values.
        fn entry(&mut self) -> f64 {
            const SET: [f64; 10] = [0.0, 0.0, 0.0, 1.0, -1.0, 1.0, -1.0, 0.5, -2.0, 1e-15];
            match self.below(12) {
                10 => (self.below(1000) as f64 - 500.0) / 37.0,
                11 => 1.0 + 1e-16 * self.below(3) as f64,
                k => SET[k],
            }
        }
    }

    #[test]
    fn the_selection_on_free_columns_is_that_of_the_whole_rows() {
        let mut rng = Values(0x9e37_79b9_7f4a_7c15);
        let mut scratch = DenseSelectionScratch::default();
        // (one selection's storage for all cases, as the integrator keeps it)
        let mut kept = EquationSelection::all(3, 2);
        let (mut selected, mut deficient) = (0, 0);
        for case in 0..3000 {
            let n = 1 + rng.below(9);
            let n_d = rng.below(n + 2);
            let n_g = rng.below(n + 3);
            let e: Vec<f64> = (0..n_d * n).map(|_| rng.entry()).collect();
            // dependent rows now and then: a row repeated or scaled
            let mut g: Vec<f64> = (0..n_g * n).map(|_| rng.entry()).collect();
            if n_g > 1 && case % 3 == 0 {
                let (a, b) = (rng.below(n_g), rng.below(n_g));
                let s = [1.0, -2.0, 0.5][rng.below(3)];
                for c in 0..n {
                    g[b * n + c] = s * g[a * n + c];
                }
            }
            let nonzeros = |m: &[f64], extra: &mut Values| {
                let mut p: Vec<(usize, usize)> = m
                    .iter()
                    .enumerate()
                    .filter(|&(_, &x)| x != 0.0 || extra.below(5) == 0)
                    .map(|(k, _)| (k / n, k % n))
                    .collect();
                p.sort_unstable();
                p
            };
            let g_pattern = nonzeros(&g, &mut rng);
            let e_pattern = nonzeros(&e, &mut rng);
            let jd_pattern: Vec<(usize, usize)> = (0..n_d)
                .flat_map(|r| (0..n).map(move |c| (r, c)))
                .filter(|_| rng.below(3) == 0)
                .collect();
            let levels: Vec<u32> = (0..n_g)
                .map(|_| match rng.below(7) {
                    6 => INVARIANT_LEVEL,
                    k => (k % 3) as u32,
                })
                .collect();
            let prefer =
                PivotPreference::new(n, &levels, &g_pattern, n_g, &e_pattern, &jd_pattern, n_d);
            for p in [None, prefer.as_ref()] {
                let (expected, pivots) = whole_rows(n, &e, n_d, &g, n_g, p);
                let mut fresh = EquationSelection::all(0, 0);
                let got = select_preferring_into(&mut scratch, n, &e, n_d, &g, n_g, p, &mut fresh)
                    .map(|()| fresh);
                assert_eq!(
                    got,
                    expected,
                    "case {case}, n = {n}, preference {}",
                    p.is_some()
                );
                assert_eq!(scratch.pivots, pivots, "case {case}: the same pivots");
                let into = select_preferring_into(&mut scratch, n, &e, n_d, &g, n_g, p, &mut kept);
                assert_eq!(
                    into.map(|()| kept.clone()),
                    expected,
                    "case {case}: kept storage"
                );
                assert_eq!(scratch.pivots, pivots, "case {case}: the same pivots again");
                assert_eq!(
                    select_equations_preferring(n, &e, n_d, &g, n_g, p),
                    expected
                );
                match expected {
                    Ok(_) => selected += 1,
                    Err(_) => deficient += 1,
                }
            }
        }
        // both outcomes occur often
        assert!(
            selected > 1000 && deficient > 1000,
            "{selected} {deficient}"
        );
    }
}
