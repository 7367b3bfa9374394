//! Enumeration of all highest-value transversals (steinbrecher2016 Ex. 2.7 / 2.8 list two
//! HVTs T1, T2 for the pendulum and the spring chain).
//!
//! With canonical offsets c, d, a transversal is an HVT iff all its positions are tight
//! (`d_j − c_i = σ_ij`): every transversal has value ≤ Σd − Σc, with equality iff tight
//! (Pryce 2001, Lemma 3.3). So the HVTs are the perfect matchings of the tight pattern
//! (the Σ-Jacobian pattern). A matching edge can only join a row and a column of the same
//! fine BTF block (edges between different strongly connected components lie on no
//! alternating cycle), so the matchings are enumerated block by block and combined.

use crate::analysis::SigmaAnalysis;
use crate::btf::{Btf, fine_btf};
use crate::hvt::Transversal;
use crate::offsets::Offsets;
use crate::sigma::SigmaMatrix;

/// The number of HVTs, exact or a lower bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HvtCount {
    /// Exactly this many HVTs.
    Exact(u128),
    /// At least this many HVTs (the enumeration budget was exhausted).
    AtLeast(u128),
}

/// Result of [`all_hvts`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HvtEnumeration {
    /// All HVTs as `col_of_row` vectors (sorted lexicographically) when there are at most
    /// `limit` of them; empty otherwise (and when Σ is structurally singular).
    pub hvts: Vec<Vec<usize>>,
    /// How many HVTs there are.
    pub count: HvtCount,
}

/// Work allowed per [`all_hvts`] call (backtracking steps plus entries of stored
/// matchings), over all blocks together: `WORK_BUDGET_BASE + WORK_BUDGET_PER_ENTRY · nnz`.
/// Past it the count is reported as a lower bound, so the enumeration stays `O(nnz)` and
/// never dominates the `O(nnz log n)` analysis, however large the model.
const WORK_BUDGET_BASE: u64 = 250_000;
/// See [`WORK_BUDGET_BASE`].
const WORK_BUDGET_PER_ENTRY: u64 = 4;

/// The tight pattern of one block in compressed-row form, in block-local indices
/// (one flat allocation even for a block of 10^6 rows).
struct BlockRows {
    ptr: Vec<usize>,
    cols: Vec<usize>,
}

impl BlockRows {
    fn new() -> Self {
        BlockRows {
            ptr: vec![0],
            cols: Vec::new(),
        }
    }
    fn len(&self) -> usize {
        self.ptr.len() - 1
    }
    fn row(&self, r: usize) -> &[usize] {
        &self.cols[self.ptr[r]..self.ptr[r + 1]]
    }
    fn push_row(&mut self, cols: impl IntoIterator<Item = usize>) {
        self.cols.extend(cols);
        self.ptr.push(self.cols.len());
    }
    #[cfg(test)]
    fn from_rows(rows: &[Vec<usize>]) -> Self {
        let mut b = BlockRows::new();
        for r in rows {
            b.push_row(r.iter().copied());
        }
        b
    }
}

/// Perfect matchings of one block (rows × allowed cols), up to `cap`, spending at most
/// `budget` work units (decremented); returns (matchings as col-per-row, complete?).
///
/// `adj[r][0]` should be the column of a known perfect matching: then the first matching
/// is reached in `k` steps without backtracking, so a block that fits the budget at all
/// yields at least one matching.
fn block_matchings(
    adj: &BlockRows,
    n_cols: usize,
    cap: usize,
    budget: &mut u64,
) -> (Vec<Vec<usize>>, bool) {
    let k = adj.len();
    // Assign rows in breadth-first order of the block's row graph (rows sharing a column
    // are neighbours), so that a conflicting choice is detected a few levels below it and
    // not after a long detour through unrelated rows: dead ends stay shallow.
    let order = breadth_first_rows(adj, n_cols);
    let adj: Vec<&[usize]> = order.iter().map(|&r| adj.row(r)).collect();
    let mut found = Vec::new();
    let mut used = vec![false; n_cols];
    let mut choice = vec![0usize; k]; // next candidate index per depth
    let mut assigned = vec![usize::MAX; k];
    let mut depth = 0usize;
    loop {
        if depth == k {
            let cost = k as u64;
            if *budget < cost {
                return (found, false);
            }
            *budget -= cost;
            let mut m = vec![0usize; k];
            for (p, &r) in order.iter().enumerate() {
                m[r] = assigned[p];
            }
            found.push(m);
            if found.len() >= cap {
                return (found, false);
            }
            if k == 0 {
                return (found, true);
            }
            depth -= 1;
            used[assigned[depth]] = false;
            assigned[depth] = usize::MAX;
            continue;
        }
        if *budget == 0 {
            return (found, false);
        }
        *budget -= 1;
        let mut advanced = false;
        while choice[depth] < adj[depth].len() {
            let c = adj[depth][choice[depth]];
            choice[depth] += 1;
            if !used[c] {
                used[c] = true;
                assigned[depth] = c;
                depth += 1;
                if depth < k {
                    choice[depth] = 0;
                }
                advanced = true;
                break;
            }
        }
        if !advanced {
            if depth == 0 {
                return (found, true);
            }
            choice[depth] = 0;
            depth -= 1;
            used[assigned[depth]] = false;
            assigned[depth] = usize::MAX;
        }
    }
}

/// The rows `0..adj.len()` in breadth-first order from row 0 (then from the next unvisited
/// row), where two rows are adjacent when they share a column.
fn breadth_first_rows(adj: &BlockRows, n_cols: usize) -> Vec<usize> {
    // The transpose, by counting sort.
    let mut col_ptr = vec![0usize; n_cols + 1];
    for &c in &adj.cols {
        col_ptr[c + 1] += 1;
    }
    for c in 0..n_cols {
        col_ptr[c + 1] += col_ptr[c];
    }
    let mut fill = col_ptr.clone();
    let mut col_rows = vec![0usize; adj.cols.len()];
    for r in 0..adj.len() {
        for &c in adj.row(r) {
            col_rows[fill[c]] = r;
            fill[c] += 1;
        }
    }
    let mut seen = vec![false; adj.len()];
    let mut order = Vec::with_capacity(adj.len());
    for root in 0..adj.len() {
        if seen[root] {
            continue;
        }
        seen[root] = true;
        let mut head = order.len();
        order.push(root);
        while head < order.len() {
            let r = order[head];
            head += 1;
            for &c in adj.row(r) {
                for &r2 in &col_rows[col_ptr[c]..col_ptr[c + 1]] {
                    if !seen[r2] {
                        seen[r2] = true;
                        order.push(r2);
                    }
                }
            }
        }
    }
    order
}

/// Number of vertex-disjoint alternating cycles found greedily with respect to the known
/// perfect matching `adj[r][0]` of a block, in `O(block entries)`.
///
/// An alternating cycle r₁ → c₁ → r₂ → … (row `r` to a non-matching column `c`, `c` to its
/// matched row) can be swapped independently of the others, so `m` disjoint cycles give
/// at least `2^m` perfect matchings: a cheap lower bound when the enumeration budget runs out.
fn disjoint_alternating_cycles(adj: &BlockRows, n_cols: usize) -> u32 {
    const NEW: u8 = 0;
    const ON_STACK: u8 = 1;
    const DONE: u8 = 2; // visited (or on a found cycle): never entered again
    let k = adj.len();
    let mut row_of_col = vec![usize::MAX; n_cols];
    for r in 0..k {
        if let Some(&c) = adj.row(r).first() {
            row_of_col[c] = r;
        }
    }
    let mut state = vec![NEW; k];
    let mut stack: Vec<(usize, usize)> = Vec::new(); // (row, next adjacency index)
    let mut cycles = 0u32;
    for root in 0..k {
        if state[root] != NEW {
            continue;
        }
        state[root] = ON_STACK;
        stack.push((root, 1));
        while let Some(top) = stack.last_mut() {
            let (r, idx) = *top;
            let Some(&c) = adj.row(r).get(idx) else {
                state[r] = DONE;
                stack.pop();
                continue;
            };
            top.1 += 1;
            let r2 = row_of_col[c];
            if r2 == usize::MAX {
                continue;
            }
            match state[r2] {
                NEW => {
                    state[r2] = ON_STACK;
                    stack.push((r2, 1));
                }
                ON_STACK => {
                    // The stack from r2 to the top is a cycle: take it out of the graph.
                    cycles += 1;
                    while let Some((q, _)) = stack.pop() {
                        state[q] = DONE;
                        if q == r2 {
                            break;
                        }
                    }
                }
                _ => {}
            }
        }
    }
    cycles
}

/// All HVTs of `s` when there are at most `limit`, else their number or a lower bound.
///
/// `offsets` must be the (canonical or any valid) offsets of `s`; the HVTs are the perfect
/// matchings of the positions with `d_j − c_i = σ_ij`.
///
/// Cost: one HVT and the fine BTF (`O(nnz log n)`) plus an enumeration budget of
/// `250 000 + 4·nnz` steps over all blocks together. When the budget or the per-block cap
/// `max(limit + 1, 10 000)` is hit, the count is [`HvtCount::AtLeast`]: the product over the
/// blocks of the matchings found, or of `2^m` for `m` disjoint alternating cycles if that
/// is larger (saturating at `u128::MAX`); it is always ≥ 1 for a nonsingular Σ.
pub fn all_hvts(s: &SigmaMatrix, offsets: &Offsets, limit: usize) -> HvtEnumeration {
    let n = s.n_rows();
    if !s.is_square() || offsets.c.len() != n || offsets.d.len() != n {
        return NO_HVT;
    }
    // One tight perfect matching, to define the fine blocks. With optimal offsets every HVT
    // is tight (Pryce 2001, Lemma 3.3), and if some HVT is not, the offsets are not optimal
    // and no transversal is tight; so an HVT of Σ itself serves.
    let Ok(t0) = crate::highest_value_transversal(s) else {
        return NO_HVT;
    };
    if !is_tight_transversal(s, offsets, &t0.col_of_row) {
        return NO_HVT;
    }
    let t0 = Transversal { dual_c: None, ..t0 };
    let btf = fine_btf(s, offsets, &t0);
    enumerate(s, offsets, &t0.col_of_row, &btf, limit)
}

/// [`all_hvts`] reusing the HVT and fine BTF of an [`analyze`](crate::analyze) result of
/// `s`, which saves their recomputation (about half the cost of `all_hvts` on large
/// models). An analysis that does not fit `s` (wrong sizes, a non-tight HVT, blocks that
/// are not a partition or split the HVT) is not trusted: the HVT and BTF are recomputed.
pub fn all_hvts_of_analysis(s: &SigmaMatrix, a: &SigmaAnalysis, limit: usize) -> HvtEnumeration {
    let n = s.n_rows();
    let fits = s.is_square()
        && a.offsets.c.len() == n
        && a.offsets.d.len() == n
        && a.hvt.col_of_row.len() == n
        && a.hvt.col_of_row.iter().all(|&j| j < n)
        && is_tight_transversal(s, &a.offsets, &a.hvt.col_of_row)
        && blocks_partition_along(&a.fine_btf, &a.hvt.col_of_row);
    if !fits {
        return all_hvts(s, &a.offsets, limit);
    }
    enumerate(s, &a.offsets, &a.hvt.col_of_row, &a.fine_btf, limit)
}

/// The answer for a singular Σ or non-optimal offsets.
const NO_HVT: HvtEnumeration = HvtEnumeration {
    hvts: Vec::new(),
    count: HvtCount::Exact(0),
};

/// Whether `col_of_row` (columns `< n`) is a transversal of tight positions of `s`.
fn is_tight_transversal(s: &SigmaMatrix, offsets: &Offsets, col_of_row: &[usize]) -> bool {
    let n = s.n_rows();
    let mut used = vec![false; n];
    col_of_row.len() == n
        && col_of_row.iter().enumerate().all(|(i, &j)| {
            j < n
                && !std::mem::replace(&mut used[j], true)
                && s.get(i, j).is_some_and(|o| {
                    i64::from(offsets.d[j]) - i64::from(offsets.c[i]) == i64::from(o)
                })
        })
}

/// Whether the blocks of `btf` partition rows and columns `0..n` into square blocks that
/// contain, with each row, its column in the transversal `col_of_row` (columns `< n`).
fn blocks_partition_along(btf: &Btf, col_of_row: &[usize]) -> bool {
    let n = col_of_row.len();
    let mut block_of_col = vec![usize::MAX; n];
    let mut rows_seen = vec![false; n];
    for (b, block) in btf.blocks().enumerate() {
        if block.rows.len() != block.cols.len() {
            return false;
        }
        for &j in block.cols {
            let j = j as usize;
            if j >= n || block_of_col[j] != usize::MAX {
                return false;
            }
            block_of_col[j] = b;
        }
    }
    for (b, block) in btf.blocks().enumerate() {
        for &i in block.rows {
            let i = i as usize;
            if i >= n
                || std::mem::replace(&mut rows_seen[i], true)
                || block_of_col[col_of_row[i]] != b
            {
                return false;
            }
        }
    }
    rows_seen.iter().all(|&x| x)
}

/// The enumeration proper, given a tight perfect matching `t0` and the fine BTF built on it.
fn enumerate(
    s: &SigmaMatrix,
    offsets: &Offsets,
    t0: &[usize],
    btf: &Btf,
    limit: usize,
) -> HvtEnumeration {
    let n = s.n_rows();
    let tight = |i: usize, j: usize, o: u32| {
        i64::from(offsets.d[j]) - i64::from(offsets.c[i]) == i64::from(o)
    };
    let cap = limit.saturating_add(1).max(10_000);
    let mut budget = WORK_BUDGET_BASE + WORK_BUDGET_PER_ENTRY * s.nnz() as u64;
    let mut per_block: Vec<(Vec<usize>, Vec<Vec<usize>>)> = Vec::with_capacity(btf.len());
    let mut total: u128 = 1;
    let mut exact = true;
    let mut col_local = vec![usize::MAX; n];
    for block in btf.blocks() {
        if block.rows.len() == 1 {
            // A 1×1 block has the single matching of t0.
            continue;
        }
        for (k, &j) in block.cols.iter().enumerate() {
            col_local[j as usize] = k;
        }
        let mut adj = BlockRows::new();
        for &i in block.rows {
            let i = i as usize;
            // The column of the known HVT t0 first (see `block_matchings`).
            let first = col_local[t0[i]];
            adj.push_row(
                std::iter::once(first).chain(
                    s.row(i)
                        .iter()
                        .filter(|&&(j, o)| {
                            tight(i, j as usize, o) && col_local[j as usize] != usize::MAX
                        })
                        .map(|&(j, _)| col_local[j as usize])
                        .filter(|&c| c != first),
                ),
            );
        }
        let (ms, complete) = block_matchings(&adj, block.cols.len(), cap, &mut budget);
        for &j in block.cols {
            col_local[j as usize] = usize::MAX;
        }
        exact &= complete;
        // t0 restricted to the block is one of its matchings, even if the budget ran out
        // before the enumeration reached it; disjoint alternating cycles give 2^m.
        let found = ms.len().max(1) as u128;
        let block_count = if complete {
            found
        } else {
            let m = disjoint_alternating_cycles(&adj, block.cols.len());
            found.max(1u128.checked_shl(m).unwrap_or(u128::MAX))
        };
        total = total.saturating_mul(block_count);
        if !exact {
            // Only the lower bound is needed from here on.
            continue;
        }
        let globals = ms
            .into_iter()
            .map(|m| m.into_iter().map(|k| block.cols[k] as usize).collect())
            .collect();
        let rows = block.rows.iter().map(|&i| i as usize).collect();
        per_block.push((rows, globals));
    }
    if !exact || total == u128::MAX {
        return HvtEnumeration {
            hvts: Vec::new(),
            count: HvtCount::AtLeast(total),
        };
    }
    if total > limit as u128 {
        return HvtEnumeration {
            hvts: Vec::new(),
            count: HvtCount::Exact(total),
        };
    }
    // Cartesian product of the block matchings (only blocks with ≥ 2 choices vary).
    // Blocks with a single matching (all 1×1 blocks among them) keep t0's columns.
    let base = t0.to_vec();
    let varying: Vec<_> = per_block
        .iter()
        .filter(|(_, ms)| ms.len() > 1)
        .map(|(rows, ms)| (rows, ms))
        .collect();
    let mut hvts = Vec::with_capacity(total as usize);
    let mut idx = vec![0usize; varying.len()];
    loop {
        let mut t = base.clone();
        for (v, (rows, ms)) in varying.iter().enumerate() {
            for (k, &i) in rows.iter().enumerate() {
                t[i] = ms[idx[v]][k];
            }
        }
        hvts.push(t);
        // Odometer increment.
        let mut v = 0;
        loop {
            if v == varying.len() {
                hvts.sort();
                return HvtEnumeration {
                    hvts,
                    count: HvtCount::Exact(total),
                };
            }
            idx[v] += 1;
            if idx[v] < varying[v].1.len() {
                break;
            }
            idx[v] = 0;
            v += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generators::pendulum_chain_link_vectors;

    #[test]
    fn disjoint_alternating_cycles_of_small_blocks() {
        // Full 2×2 with matching (0,1): one cycle r0 → c1 → r1 → c0 → r0.
        assert_eq!(
            disjoint_alternating_cycles(&BlockRows::from_rows(&[vec![0, 1], vec![1, 0]]), 2),
            1
        );
        // Two disjoint full 2×2 blocks: two cycles.
        let adj = [vec![0, 1], vec![1, 0], vec![2, 3], vec![3, 2]];
        assert_eq!(
            disjoint_alternating_cycles(&BlockRows::from_rows(&adj), 4),
            2
        );
        // Upper triangular: the matching is unique, no cycle.
        assert_eq!(
            disjoint_alternating_cycles(&BlockRows::from_rows(&[vec![0, 1], vec![1]]), 2),
            0
        );
        // Full 3×3: the cycles share rows, so only one is counted.
        let adj = [vec![0, 1, 2], vec![1, 0, 2], vec![2, 0, 1]];
        assert_eq!(
            disjoint_alternating_cycles(&BlockRows::from_rows(&adj), 3),
            1
        );
    }

    #[test]
    fn breadth_first_rows_follow_shared_columns() {
        // Chain r0–r2 (col 0), r2–r1 (col 1); r3 isolated.
        let adj = [vec![0], vec![1], vec![0, 1], vec![2]];
        assert_eq!(
            breadth_first_rows(&BlockRows::from_rows(&adj), 3),
            vec![0, 2, 1, 3]
        );
    }

    #[test]
    fn link_vector_chain_has_two_to_the_2n_minus_1_hvts() {
        // Each link constraint takes dx or dy, and the rest of the chain follows in
        // 2^(2N−1) ways in all (counted exactly by the enumeration for small N).
        for (links, count) in [(1usize, 2u128), (2, 8), (3, 32), (4, 128), (5, 512)] {
            let s = pendulum_chain_link_vectors(links);
            let a = crate::analyze(&s).unwrap();
            let e = all_hvts(&s, &a.offsets, 1_000);
            assert_eq!(e.count, HvtCount::Exact(count), "{links} links");
            assert_eq!(e.hvts.len() as u128, count);
            for t in &e.hvts {
                let t = Transversal::from_cols(&s, t.clone()).unwrap();
                assert_eq!(t.value, a.hvt.value);
            }
        }
    }

    #[test]
    fn hvt_count_of_a_large_model_is_a_cheap_lower_bound() {
        // 14 000 equations in one fine block: the enumeration budget runs out and the bound
        // comes from disjoint alternating cycles (at least one per link, far above 2^127).
        let s = pendulum_chain_link_vectors(2_000);
        let a = crate::analyze(&s).unwrap();
        assert_eq!(a.fine_btf.len(), 1);
        let e = all_hvts(&s, &a.offsets, 16);
        assert!(e.hvts.is_empty());
        assert_eq!(e.count, HvtCount::AtLeast(u128::MAX));
        // A small limit with few links still enumerates exactly.
        let s = pendulum_chain_link_vectors(2);
        let a = crate::analyze(&s).unwrap();
        assert_eq!(all_hvts(&s, &a.offsets, 4).count, HvtCount::Exact(8));
    }
}

#[cfg(test)]
mod analysis_reuse_tests {
    use super::*;
    use crate::generators::pendulum_chain_link_vectors;

    #[test]
    fn analysis_reuse_matches_and_distrusts_a_foreign_analysis() {
        let s = pendulum_chain_link_vectors(3);
        let a = crate::analyze(&s).unwrap();
        let direct = all_hvts(&s, &a.offsets, 100);
        assert_eq!(direct.count, HvtCount::Exact(32));
        assert_eq!(all_hvts_of_analysis(&s, &a, 100), direct);
        // Blocks that are not a partition: recomputed, same answer, no panic.
        let mut bad = a.clone();
        let blocks: Vec<(Vec<usize>, Vec<usize>)> = a
            .fine_btf
            .blocks()
            .map(|b| {
                let wide = |x: &[u32]| x.iter().map(|&v| v as usize).collect();
                (wide(b.rows), wide(b.cols))
            })
            .chain([(vec![0], vec![99])])
            .collect();
        bad.fine_btf = Btf::from_blocks(s.n_rows(), blocks.iter().map(|(r, c)| (&r[..], &c[..])));
        assert_eq!(all_hvts_of_analysis(&s, &bad, 100), direct);
        // An HVT column out of range or a non-tight "HVT": recomputed too.
        let mut bad = a.clone();
        bad.hvt.col_of_row[0] = 1_000;
        assert_eq!(all_hvts_of_analysis(&s, &bad, 100), direct);
        let mut bad = a.clone();
        bad.hvt.col_of_row.swap(0, 1);
        assert_eq!(all_hvts_of_analysis(&s, &bad, 100), direct);
        // The analysis of another model: sizes differ, so it is the other model's offsets
        // that are wrong for `s`, and there is no HVT.
        let other = crate::analyze(&pendulum_chain_link_vectors(2)).unwrap();
        assert_eq!(
            all_hvts_of_analysis(&s, &other, 100).count,
            HvtCount::Exact(0)
        );
    }
}
