//! The structural path of the ordered equation selection: a maximum
//! transversal of the rows of `[G; E]` first, then the numerical check of
//! the matched square system block by block.
//!
//! Row-by-row elimination in the written order fills in as the square of a
//! chain's length when the constraints link the unknowns along the chain
//! (the link equations `d_k = x_k − x_{k−1}` of a pendulum chain carry every
//! earlier position into each pivot row): what it eliminates first is fixed
//! by the order of the rows, not chosen to limit fill; so does a partial
//! pivoting LU of the selected rows, which pivots a position's column on a
//! link equation as readily as on the position's own row. The rows kept do
//! not depend on the elimination order, only on their independence, so
//! they are found here structurally: a matching of rows to columns — the
//! constraint rows first, so that a maximal set of them is kept — found
//! with augmenting paths and a look-ahead for free columns (Duff's MC21,
//! Duff, Erisman & Reid, *Direct Methods for Sparse Matrices*, §6.2), then
//! confirmed numerically on the diagonal blocks of the block triangular
//! form the matching induces (§6.3), where elimination never crosses a
//! block.
//!
//! Each row tries its columns in an order that makes the structural choice
//! a numerically sensible one: entries of at least [`ORDERED_PIVOT`] of the
//! row's largest first (threshold pivoting), among them — for a constraint
//! — the columns no differential row holds (algebraic unknowns, so that the
//! differential unknowns stay states, as dummy derivatives would have
//! them), then the larger entry. A matched system with a singular diagonal
//! block or a pivot below [`PIVOT_FLOOR`] (rows and block columns scaled
//! to a largest entry of 1) is not used: the caller falls back to the
//! elimination in the written order, which decides rank and conditioning
//! row by row.

use super::{EquationSelection, ORDERED_PIVOT, RANK_TOL, SparseRows, stacked_rows};
use crate::linalg::{SparsePattern, SparseRealLu};
use std::collections::HashSet;

/// Smallest pivot of the LU of the matched system (rows and columns scaled
/// to a largest entry of 1) accepted as numerically regular; below it the
/// selection falls back to the row-by-row elimination.
const PIVOT_FLOOR: f64 = 1e-8;

/// The augmenting-path searches may visit this many entries per stored
/// entry of `[G; E]` in total before the structural path gives up (and the
/// caller falls back to the elimination in the written order), so that an
/// adversarial pattern cannot make the matching quadratic.
const SEARCH_BUDGET: usize = 64;

/// The selection of [`super::select_equations_ordered`] by a maximum
/// transversal and one sparse LU, with the number of entries of the LU
/// factors (the fill) and the number of entries the augmenting-path
/// searches visited. `None` when the matched system is not a perfect
/// matching, is numerically singular or badly pivoted, or the search
/// exceeded its budget: then the caller eliminates in the written order.
pub(super) fn select_matched(
    n: usize,
    e: SparseRows<'_>,
    g: SparseRows<'_>,
) -> Option<(EquationSelection, usize, usize)> {
    let n_g = g.2;
    let mut rows = stacked_rows(n, e, g);
    for row in rows.iter_mut() {
        normalise(row);
    }
    drop_repeated(&mut rows[..n_g]);
    let mut held_by_e = vec![false; n];
    for row in &rows[n_g..] {
        for &(c, _) in row {
            held_by_e[c] = true;
        }
    }
    for (r, row) in rows.iter_mut().enumerate() {
        let constraint = r < n_g;
        row.sort_by(|a, b| {
            let key =
                |&(c, v): &(usize, f64)| (v.abs() < ORDERED_PIVOT, constraint && held_by_e[c]);
            key(a).cmp(&key(b)).then(b.1.abs().total_cmp(&a.1.abs()))
        });
    }
    let (row_of_col, visited) = maximum_transversal(n, &rows)?;
    let fill = check_regular(n, &rows, &row_of_col)?;
    let mut selected = vec![false; rows.len()];
    for &r in &row_of_col {
        selected[r] = true;
    }
    let sel = EquationSelection {
        constraint_rows: (0..n_g).filter(|&r| selected[r]).collect(),
        diff_rows: (n_g..rows.len())
            .filter(|&r| selected[r])
            .map(|r| r - n_g)
            .collect(),
    };
    Some((sel, fill, visited))
}

/// Sorts a row by column, merges repeated columns, drops the entries at or
/// below [`RANK_TOL`] of the largest and scales the row to a largest entry
/// of 1 (an empty row when it has no finite nonzero entry).
fn normalise(row: &mut Vec<(usize, f64)>) {
    row.sort_unstable_by_key(|e| e.0);
    row.dedup_by(|later, kept| {
        if later.0 == kept.0 {
            kept.1 += later.1;
            true
        } else {
            false
        }
    });
    let scale = row.iter().fold(0.0f64, |a, &(_, v)| a.max(v.abs()));
    if !(scale > 0.0 && scale.is_finite()) || row.iter().any(|e| !e.1.is_finite()) {
        row.clear();
        return;
    }
    row.retain(|e| e.1.abs() > RANK_TOL * scale);
    for e in row.iter_mut() {
        e.1 /= scale;
    }
}

/// Empties every row equal (pattern and scaled values) to an earlier one:
/// the constraints a formulation lists twice (the HiC form repeats the
/// DAE's algebraic equations among its constraints). Structurally two equal
/// rows are independent, numerically they are not.
fn drop_repeated(rows: &mut [Vec<(usize, f64)>]) {
    let mut seen: HashSet<Vec<(usize, u64)>> = HashSet::new();
    for row in rows.iter_mut() {
        if row.is_empty() {
            continue;
        }
        let key: Vec<(usize, u64)> = row.iter().map(|&(c, v)| (c, v.to_bits())).collect();
        if !seen.insert(key) {
            row.clear();
        }
    }
}

/// A perfect matching of `n` of the rows to the `n` columns, rows in their
/// order (each row tries its entries in their order): `row_of_col[c]` is
/// the row matched to column `c`, with the number of entries the searches
/// visited. A row that cannot be matched without
/// unmatching an earlier one is left out, so the constraint rows, which
/// come first, are matched as far as their pattern allows. `None` when
/// fewer than `n` rows match or the search exceeds its budget.
///
/// A row is matched iff it is structurally independent of the rows matched
/// before it (in the transversal matroid of the pattern; the rows matched
/// never change, only their columns), so the matched rows are the first
/// structural basis in the rows' order whichever augmenting paths are
/// found (the greedy algorithm on a matroid, Edmonds 1971).
fn maximum_transversal(n: usize, rows: &[Vec<(usize, f64)>]) -> Option<(Vec<usize>, usize)> {
    let nnz: usize = rows.iter().map(Vec::len).sum();
    let budget = SEARCH_BUDGET.saturating_mul(nnz).saturating_add(n);
    let mut search = Search {
        row_of_col: vec![usize::MAX; n],
        cheap: vec![0; rows.len()],
        visited: vec![0; n],
        stamp: 0,
        dead: vec![false; n],
        seen: Vec::new(),
        budget,
    };
    let mut matched = 0;
    for r in 0..rows.len() {
        if matched == n {
            break;
        }
        if !rows[r].is_empty() && search.augment(rows, r)? {
            matched += 1;
        }
    }
    (matched == n).then(|| (search.row_of_col, budget - search.budget))
}

/// The state of the augmenting-path searches of [`maximum_transversal`].
struct Search {
    /// The row matched to each column (`usize::MAX`: free).
    row_of_col: Vec<usize>,
    /// Per row, how many of its entries the look-ahead has passed (a column
    /// once matched stays matched, so each row's scan is done once).
    cheap: Vec<usize>,
    /// The search that last visited each column.
    visited: Vec<u32>,
    /// The current search.
    stamp: u32,
    /// Columns from which no augmenting path exists: those a failed search
    /// visited. Every row matched to such a column has all its entries
    /// among them, so no later path can leave the set, and the matching
    /// within it never changes (the set stays closed); later searches skip
    /// it, and each column is searched from in vain only once.
    dead: Vec<bool>,
    /// The columns the current search visited.
    seen: Vec<usize>,
    /// Entries the searches may still visit.
    budget: usize,
}

impl Search {
    /// The first free column of `row` in its order, if any.
    fn free_column(&mut self, rows: &[Vec<(usize, f64)>], row: usize) -> Option<usize> {
        while let Some(&(c, _)) = rows[row].get(self.cheap[row]) {
            if self.row_of_col[c] == usize::MAX {
                return Some(c);
            }
            self.cheap[row] += 1;
        }
        None
    }

    /// Looks for an augmenting path from row `r` (depth first, iterative,
    /// each row first looking for a free column of its own) and applies
    /// it. `Some(false)` when there is none, `None` when the budget is spent.
    fn augment(&mut self, rows: &[Vec<(usize, f64)>], r: usize) -> Option<bool> {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.visited.fill(0);
            self.stamp = 1;
        }
        // the rows of the path with the next entry each tries; the columns
        // leading from each row to the next
        let mut stack: Vec<(usize, usize)> = vec![(r, 0)];
        let mut cols: Vec<usize> = Vec::new();
        self.seen.clear();
        if let Some(c) = self.free_column(rows, r) {
            self.row_of_col[c] = r;
            return Some(true);
        }
        while let Some(top) = stack.last_mut() {
            let (row, k) = *top;
            let Some(&(c, _)) = rows[row].get(k) else {
                stack.pop();
                cols.pop();
                continue;
            };
            top.1 += 1;
            self.budget = self.budget.checked_sub(1)?;
            if self.visited[c] == self.stamp || self.dead[c] {
                continue;
            }
            self.visited[c] = self.stamp;
            self.seen.push(c);
            let owner = self.row_of_col[c];
            cols.push(c);
            if owner == usize::MAX {
                // (the look-ahead finds free columns first; kept total)
                self.apply(&stack, &cols);
                return Some(true);
            }
            stack.push((owner, 0));
            if let Some(free) = self.free_column(rows, owner) {
                cols.push(free);
                self.apply(&stack, &cols);
                return Some(true);
            }
        }
        for &c in &self.seen {
            self.dead[c] = true;
        }
        Some(false)
    }

    /// Matches each row of an augmenting path to the column after it.
    fn apply(&mut self, stack: &[(usize, usize)], cols: &[usize]) {
        for (&(row, _), &col) in stack.iter().zip(cols) {
            self.row_of_col[col] = row;
        }
    }
}

/// The fill of the block triangular factorisation of the matched system,
/// or `None` when one of its diagonal blocks is singular or has a pivot at
/// or below [`PIVOT_FLOOR`].
///
/// With the matching on the diagonal, row `row_of_col[c]` depends on the
/// columns it holds besides `c`; the strongly connected components of these
/// dependencies are the irreducible diagonal blocks of a block triangular
/// form (Duff, Erisman & Reid, §6.3; Tarjan's algorithm, as
/// `daec_structure::strongly_connected_components` finds the blocks of
/// the Σ-matrix — repeated here, as `daec-solve` depends on no daec crate),
/// and the system is regular iff every diagonal block is. A block of one
/// row is its matched entry; a larger one is factorised by the sparse LU
/// (COLAMD), its columns scaled to a largest entry of 1. The fill counts
/// the factors' entries of the blocks and the entries outside them — no
/// elimination crosses a block, which keeps the fill of a chain (a
/// sequence of small blocks) linear in its length.
fn check_regular(n: usize, rows: &[Vec<(usize, f64)>], row_of_col: &[usize]) -> Option<usize> {
    let mut adj_ptr = Vec::with_capacity(n + 1);
    adj_ptr.push(0);
    let mut adj: Vec<u32> = Vec::new();
    for (c, &r) in row_of_col.iter().enumerate() {
        adj.extend(rows[r].iter().filter(|e| e.0 != c).map(|e| e.0 as u32));
        adj_ptr.push(adj.len());
    }
    let blocks = strong_components(n, &adj_ptr, &adj);
    let mut fill = 0;
    let mut local = vec![usize::MAX; n];
    for block in &blocks {
        if let [c] = block[..] {
            let row = &rows[row_of_col[c]];
            let pivot = row.iter().find(|e| e.0 == c).map_or(0.0, |e| e.1);
            if pivot.abs() <= PIVOT_FLOOR {
                return None;
            }
            fill += row.len();
            continue;
        }
        for (k, &c) in block.iter().enumerate() {
            local[c] = k;
        }
        let mut entries: Vec<(usize, usize)> = Vec::new();
        let mut values: Vec<f64> = Vec::new();
        for (k, &c) in block.iter().enumerate() {
            for &(c2, v) in &rows[row_of_col[c]] {
                if local[c2] == usize::MAX {
                    fill += 1;
                } else {
                    entries.push((k, local[c2]));
                    values.push(v);
                }
            }
        }
        for &c in block {
            local[c] = usize::MAX;
        }
        fill += block_lu_fill(block.len(), &entries, &values)?;
    }
    Some(fill)
}

/// The number of entries of the LU factors of an `m × m` diagonal block
/// (its columns scaled to a largest entry of 1), or `None` when the LU finds
/// it singular or a pivot at or below [`PIVOT_FLOOR`].
fn block_lu_fill(m: usize, entries: &[(usize, usize)], values: &[f64]) -> Option<usize> {
    let mut col_max = vec![0.0f64; m];
    for (&(_, c), &v) in entries.iter().zip(values) {
        col_max[c] = col_max[c].max(v.abs());
    }
    let (pattern, slot) = SparsePattern::new(m, entries);
    let mut scaled = vec![0.0; pattern.nnz()];
    for ((&(_, c), &v), &s) in entries.iter().zip(values).zip(&slot) {
        scaled[s] += v / col_max[c];
    }
    let mut lu = SparseRealLu::new(&pattern);
    lu.factor_with_pivot_floor(&pattern, &scaled, PIVOT_FLOOR)
        .ok()?;
    Some(lu.factor_nnz())
}

/// The strongly connected components of the graph whose node `v` has the
/// edges `adj[adj_ptr[v]..adj_ptr[v + 1]]`, by Tarjan's algorithm (Tarjan,
/// "Depth-first search and linear graph algorithms", SIAM J. Comput. 1(2),
/// 1972), iterative so that a chain of a million nodes does not overflow
/// the stack.
fn strong_components(n: usize, adj_ptr: &[usize], adj: &[u32]) -> Vec<Vec<usize>> {
    const NEW: usize = usize::MAX;
    let (mut index, mut low) = (vec![NEW; n], vec![0usize; n]);
    let mut on_stack = vec![false; n];
    let (mut stack, mut call, mut comps) = (Vec::new(), Vec::new(), Vec::new());
    let mut next = 0;
    for root in 0..n {
        if index[root] != NEW {
            continue;
        }
        call.push((root, adj_ptr[root]));
        (index[root], low[root], on_stack[root]) = (next, next, true);
        stack.push(root);
        next += 1;
        while let Some(&mut (v, ref mut pos)) = call.last_mut() {
            if *pos < adj_ptr[v + 1] {
                let w = adj[*pos] as usize;
                *pos += 1;
                if index[w] == NEW {
                    (index[w], low[w], on_stack[w]) = (next, next, true);
                    stack.push(w);
                    next += 1;
                    call.push((w, adj_ptr[w]));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            call.pop();
            if let Some(&(p, _)) = call.last() {
                low[p] = low[p].min(low[v]);
            }
            if low[v] == index[v] {
                let mut comp = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    comp.push(w);
                    if w == v {
                        break;
                    }
                }
                comps.push(comp);
            }
        }
    }
    comps
}
