//! The Newton step `J Δ = b` of a square sparse system solved block by
//! block on the block triangular form of `J`'s pattern, for the consistent
//! point ([`crate::consistent`]).
//!
//! A maximum matching puts an entry of every row on the diagonal; the
//! strongly connected components of the rows' dependencies through it are
//! the irreducible diagonal blocks of a block lower triangular form, the
//! same for every perfect matching (Duff, Erisman & Reid, *Direct Methods
//! for Sparse Matrices*, §6.2–6.3; the fine BTF of the analysis is this
//! form of the Σ-Jacobian's pattern, pryce-nedialkov-tan2015 §5). The
//! system is then solved block after block in solution order: a block's
//! right-hand side less the products of its rows with the unknowns of the
//! earlier blocks (forward substitution), then its own LU — a division for
//! a block of one unknown, the dense LU with partial pivoting up to
//! [`DENSE_BLOCK_MAX`] unknowns, `daec-solve`'s sparse LU (COLAMD ordering,
//! computed once) above. No elimination crosses a block, so the factors of
//! a chain's many small blocks take no fill and no ordering, and only one
//! small block's dense factors exist at a time; the constraints of the
//! pendulum chain give singletons but for one tridiagonal block of its
//! multipliers.
//!
//! In exact arithmetic the step is that of the LU of the whole of `J`;
//! the rounding differs (other pivots, other operations).

use daec_solve::{RealLu, SparsePattern, SparseRealLu};
use daec_structure::{SigmaMatrix, Transversal, coarse_btf, maximum_matching};

/// Diagonal blocks of up to this many unknowns are factorised by the dense
/// LU with partial pivoting ([`RealLu`]), larger ones by the sparse LU.
const DENSE_BLOCK_MAX: usize = 32;

/// A square sparse matrix's pattern in block triangular form, with the
/// storage of its values and of its large blocks' sparse LUs.
pub(crate) struct BlockNewton {
    /// The row of every position, block after block.
    row: Vec<u32>,
    /// The column of every position (the row's matched column).
    col: Vec<u32>,
    /// The first position of every block, and the end of the last.
    start: Vec<u32>,
    /// Per position, the range of its row's entries in `cols` and
    /// `values` (one more than there are positions).
    row_ptr: Vec<u32>,
    /// The position of every entry's column.
    cols: Vec<u32>,
    /// The value of every entry (input entries at one place summed).
    values: Vec<f64>,
    /// The entry of `values` of every input entry.
    slot: Vec<u32>,
    /// The blocks of more than [`DENSE_BLOCK_MAX`] unknowns, in block
    /// order.
    large: Vec<LargeBlock>,
    /// The dense LUs of the small blocks, by order (made when first
    /// needed).
    dense: Vec<Option<RealLu>>,
}

/// A diagonal block factorised by the sparse LU.
struct LargeBlock {
    /// Its index among the blocks.
    block: usize,
    pattern: SparsePattern,
    /// Per entry of the block's rows in `BlockNewton::values` whose column
    /// lies in the block, in that order, its slot in `pattern`'s values.
    slot: Vec<usize>,
    lu: SparseRealLu,
    values: Vec<f64>,
}

impl BlockNewton {
    /// The block triangular form of the `n × n` pattern `pairs` (row,
    /// column; repeated pairs are one entry). `None` when the pattern is
    /// structurally singular (no perfect matching) or an entry lies outside
    /// it.
    pub(crate) fn new(n: usize, pairs: &[(usize, usize)]) -> Option<BlockNewton> {
        let narrow = |x: usize| u32::try_from(x).ok();
        narrow(n.max(pairs.len()))?;
        if pairs.iter().any(|&(i, j)| i >= n || j >= n) {
            return None;
        }
        // CSR by row, each row's columns sorted and unique; `slot` the CSR
        // entry of every pair (a counting sort by row)
        let mut ptr = vec![0u32; n + 1];
        for &(i, _) in pairs {
            ptr[i + 1] += 1;
        }
        for i in 0..n {
            ptr[i + 1] += ptr[i];
        }
        let mut order = vec![0u32; pairs.len()];
        {
            let mut next = ptr.clone();
            for (k, &(i, _)) in pairs.iter().enumerate() {
                order[next[i] as usize] = k as u32;
                next[i] += 1;
            }
        }
        let mut csr_cols: Vec<u32> = Vec::with_capacity(pairs.len());
        let mut slot = vec![0u32; pairs.len()];
        let mut csr_ptr = vec![0u32; n + 1];
        for i in 0..n {
            let entries = &mut order[ptr[i] as usize..ptr[i + 1] as usize];
            entries.sort_unstable_by_key(|&k| pairs[k as usize].1);
            let first = csr_cols.len();
            for &k in entries.iter() {
                let j = pairs[k as usize].1 as u32;
                if csr_cols.len() == first || csr_cols[csr_cols.len() - 1] != j {
                    csr_cols.push(j);
                }
                slot[k as usize] = (csr_cols.len() - 1) as u32;
            }
            csr_ptr[i + 1] = csr_cols.len() as u32;
        }
        drop((ptr, order));
        // a perfect matching, then the blocks: the strongly connected
        // components of "row i holds the column matched to row i′", in
        // solution order (the coarse BTF of the pattern)
        let btf = {
            let s = SigmaMatrix::from_entries(
                n,
                n,
                (0..n).flat_map(|i| {
                    csr_cols[csr_ptr[i] as usize..csr_ptr[i + 1] as usize]
                        .iter()
                        .map(move |&j| (i, j as usize, 0))
                }),
            );
            let (col_of_row, _) = maximum_matching(&s);
            let col_of_row = col_of_row.into_iter().collect::<Option<Vec<usize>>>()?;
            let t = Transversal {
                col_of_row,
                value: 0,
                dual_c: None,
            };
            coarse_btf(&s, &t)
        };
        let mut system = BlockNewton {
            row: Vec::with_capacity(n),
            col: Vec::with_capacity(n),
            start: Vec::with_capacity(btf.blocks().len() + 1),
            row_ptr: Vec::with_capacity(n + 1),
            cols: Vec::with_capacity(csr_cols.len()),
            values: vec![0.0; csr_cols.len()],
            slot: Vec::new(),
            large: Vec::new(),
            dense: Vec::new(),
        };
        let mut pos_of_col = vec![0u32; n];
        system.start.push(0);
        for block in btf.blocks() {
            for (&r, &c) in block.rows.iter().zip(block.cols) {
                pos_of_col[c as usize] = system.col.len() as u32;
                system.col.push(c);
                system.row.push(r);
            }
            system.start.push(system.col.len() as u32);
        }
        drop(btf);
        // the CSR by position, and every pair's slot moved along
        let mut moved = vec![0u32; csr_cols.len()];
        system.row_ptr.push(0);
        for &r in &system.row {
            let r = r as usize;
            for e in csr_ptr[r] as usize..csr_ptr[r + 1] as usize {
                moved[e] = system.cols.len() as u32;
                system.cols.push(pos_of_col[csr_cols[e] as usize]);
            }
            system.row_ptr.push(system.cols.len() as u32);
        }
        drop((csr_cols, csr_ptr, pos_of_col));
        for s in &mut slot {
            *s = moved[*s as usize];
        }
        system.slot = slot;
        for b in 0..system.start.len() - 1 {
            if system.block_len(b) > DENSE_BLOCK_MAX {
                let large = system.large_block(b);
                system.large.push(large);
            }
        }
        Some(system)
    }

    /// The number of unknowns of block `b`.
    fn block_len(&self, b: usize) -> usize {
        (self.start[b + 1] - self.start[b]) as usize
    }

    /// The sparse LU's pattern of block `b`.
    fn large_block(&self, b: usize) -> LargeBlock {
        let (lo, hi) = (self.start[b], self.start[b + 1]);
        let mut entries: Vec<(usize, usize)> = Vec::new();
        for q in lo..hi {
            for e in self.row_ptr[q as usize]..self.row_ptr[q as usize + 1] {
                let c = self.cols[e as usize];
                if c >= lo {
                    entries.push(((q - lo) as usize, (c - lo) as usize));
                }
            }
        }
        let (pattern, slot) = SparsePattern::new((hi - lo) as usize, &entries);
        let lu = SparseRealLu::new(&pattern);
        let values = vec![0.0; pattern.nnz()];
        LargeBlock {
            block: b,
            pattern,
            slot,
            lu,
            values,
        }
    }

    /// The number of blocks.
    #[cfg(test)]
    fn blocks(&self) -> usize {
        self.start.len() - 1
    }

    /// The pairs given to [`new`](Self::new), in their order.
    #[cfg(test)]
    fn pairs(&self) -> Vec<(usize, usize)> {
        let mut row_of_entry = vec![0u32; self.cols.len()];
        for q in 0..self.row.len() {
            let range = self.row_ptr[q] as usize..self.row_ptr[q + 1] as usize;
            row_of_entry[range].fill(self.row[q]);
        }
        self.slot
            .iter()
            .map(|&e| {
                let e = e as usize;
                let col = self.col[self.cols[e] as usize];
                (row_of_entry[e] as usize, col as usize)
            })
            .collect()
    }

    /// Solves `J Δ = b` for the values `values` of the pairs given to
    /// [`new`](Self::new) (in their order; repeated pairs summed) and `b`
    /// by row: `Δ` by column. `None` when a diagonal block is singular
    /// (a zero or non-finite pivot) or `values` or `b` do not fit.
    pub(crate) fn solve(&mut self, values: &[f64], b: &[f64]) -> Option<Vec<f64>> {
        if values.len() != self.slot.len() || b.len() != self.row.len() {
            return None;
        }
        self.values.fill(0.0);
        for (&s, &v) in self.slot.iter().zip(values) {
            self.values[s as usize] += v;
        }
        // the unknowns by position
        let mut x = vec![0.0; self.row.len()];
        let mut large = 0;
        for blk in 0..self.start.len() - 1 {
            let (lo, hi) = (self.start[blk] as usize, self.start[blk + 1] as usize);
            // the right-hand side less the solved blocks' contributions
            for q in lo..hi {
                let mut rhs = b[self.row[q] as usize];
                for e in self.row_ptr[q] as usize..self.row_ptr[q + 1] as usize {
                    let c = self.cols[e] as usize;
                    if c < lo {
                        rhs -= self.values[e] * x[c];
                    }
                }
                x[q] = rhs;
            }
            let s = hi - lo;
            if s == 1 {
                let range = self.row_ptr[lo] as usize..self.row_ptr[lo + 1] as usize;
                let pivot: f64 = range
                    .filter(|&e| self.cols[e] as usize == lo)
                    .map(|e| self.values[e])
                    .sum();
                if pivot == 0.0 || !pivot.is_finite() {
                    return None;
                }
                x[lo] /= pivot;
            } else if s <= DENSE_BLOCK_MAX {
                self.solve_dense(lo, hi, &mut x[lo..hi])?;
            } else {
                let block = &mut self.large[large];
                large += 1;
                debug_assert_eq!(block.block, blk);
                block.values.fill(0.0);
                let mut k = 0;
                for q in lo..hi {
                    for e in self.row_ptr[q] as usize..self.row_ptr[q + 1] as usize {
                        if self.cols[e] as usize >= lo {
                            block.values[block.slot[k]] += self.values[e];
                            k += 1;
                        }
                    }
                }
                block.lu.factor(&block.pattern, &block.values).ok()?;
                block.lu.solve(&mut x[lo..hi]);
            }
        }
        let mut delta = vec![0.0; x.len()];
        for (q, &c) in self.col.iter().enumerate() {
            delta[c as usize] = x[q];
        }
        Some(delta)
    }

    /// Solves the small block of the positions `lo..hi` in place of its
    /// right-hand side `x` by the dense LU with partial pivoting.
    fn solve_dense(&mut self, lo: usize, hi: usize, x: &mut [f64]) -> Option<()> {
        let s = hi - lo;
        if self.dense.len() <= s {
            self.dense.resize_with(s + 1, || None);
        }
        let lu = self.dense[s].get_or_insert_with(|| RealLu::new(s));
        let a = lu.matrix_mut();
        a.fill(0.0);
        for q in lo..hi {
            for e in self.row_ptr[q] as usize..self.row_ptr[q + 1] as usize {
                let c = self.cols[e] as usize;
                if c >= lo {
                    a[(q - lo) * s + (c - lo)] += self.values[e];
                }
            }
        }
        lu.factor_in_place().ok()?;
        lu.solve(x);
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `J x` for the entries `(row, col, value)`.
    fn product(n: usize, entries: &[(usize, usize, f64)], x: &[f64]) -> Vec<f64> {
        let mut y = vec![0.0; n];
        for &(i, j, v) in entries {
            y[i] += v * x[j];
        }
        y
    }

    /// A lower block triangular system with its rows and columns shuffled:
    /// singletons, a 3 × 3 cycle and a tridiagonal block of `large`
    /// unknowns, coupled below the diagonal.
    fn shuffled_system(large: usize) -> (usize, Vec<(usize, usize, f64)>) {
        let n = 4 + 3 + large;
        let mut entries = Vec::new();
        // singletons 0..4: x0 alone, x_k = x_{k−1} + …
        entries.push((0, 0, 2.0));
        for k in 1..4 {
            entries.push((k, k, 1.0 + k as f64));
            entries.push((k, k - 1, -1.0));
        }
        // a cycle 4 → 5 → 6 → 4, using x3
        for k in 4..7 {
            entries.push((k, k, 3.0));
            entries.push((k, 4 + (k - 3) % 3, 1.0));
            entries.push((k, 3, 0.5));
        }
        // a tridiagonal block using x6, with a repeated entry
        for k in 7..n {
            entries.push((k, k, 4.0 + 0.01 * k as f64));
            if k > 7 {
                entries.push((k, k - 1, -1.0));
            }
            if k + 1 < n {
                entries.push((k, k + 1, -1.0));
            }
            entries.push((k, 6, 0.25));
        }
        entries.push((n - 1, n - 1, 0.5));
        // rows and columns shuffled
        let p = |i: usize| (i * 7 + 3) % n;
        let q = |j: usize| (j * 5 + 1) % n;
        (
            n,
            entries.iter().map(|&(i, j, v)| (p(i), q(j), v)).collect(),
        )
    }

    fn solve(n: usize, entries: &[(usize, usize, f64)], b: &[f64]) -> (BlockNewton, Vec<f64>) {
        let pairs: Vec<(usize, usize)> = entries.iter().map(|&(i, j, _)| (i, j)).collect();
        let mut system = BlockNewton::new(n, &pairs).expect("structurally regular");
        assert_eq!(system.pairs(), pairs);
        let values: Vec<f64> = entries.iter().map(|e| e.2).collect();
        let x = system.solve(&values, b).expect("regular");
        (system, x)
    }

    #[test]
    fn the_blocks_of_a_shuffled_system_solve_it() {
        for large in [2, 40] {
            let (n, entries) = shuffled_system(large);
            let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.3).sin() + 0.1).collect();
            let (system, x) = solve(n, &entries, &b);
            // four singletons, the cycle and the tridiagonal block
            assert_eq!(system.blocks(), 4 + 1 + 1);
            assert_eq!(system.large.len(), usize::from(large > DENSE_BLOCK_MAX));
            let jx = product(n, &entries, &x);
            for i in 0..n {
                assert!(
                    (jx[i] - b[i]).abs() < 1e-13,
                    "row {i}: {} vs {}",
                    jx[i],
                    b[i]
                );
            }
        }
    }

    #[test]
    fn a_singular_block_or_pattern_gives_no_step() {
        // a singular 2 × 2 block below a singleton
        let entries = [
            (0, 0, 1.0),
            (1, 1, 1.0),
            (1, 2, 2.0),
            (2, 1, 2.0),
            (2, 2, 4.0),
            (2, 0, 1.0),
        ];
        let pairs: Vec<(usize, usize)> = entries.iter().map(|&(i, j, _)| (i, j)).collect();
        let mut system = BlockNewton::new(3, &pairs).expect("structurally regular");
        let values: Vec<f64> = entries.iter().map(|e| e.2).collect();
        assert_eq!(system.solve(&values, &[1.0, 1.0, 1.0]), None);
        // a zero singleton
        let values = [0.0, 1.0, 2.0, 2.0, 5.0, 1.0];
        assert_eq!(system.solve(&values, &[1.0, 1.0, 1.0]), None);
        // values or a right-hand side of another length
        let values = [1.0, 1.0, 2.0, 2.0, 5.0, 1.0];
        assert!(system.solve(&values, &[1.0, 1.0, 1.0]).is_some());
        assert_eq!(system.solve(&values[..5], &[1.0, 1.0, 1.0]), None);
        assert_eq!(system.solve(&values, &[1.0, 1.0]), None);
        // rows 1 and 2 hold column 0 alone: no perfect matching
        assert!(BlockNewton::new(3, &[(0, 0), (0, 1), (0, 2), (1, 0), (2, 0)]).is_none());
        assert!(BlockNewton::new(2, &[(0, 0), (1, 2)]).is_none());
    }
}
