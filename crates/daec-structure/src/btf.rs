//! Block triangular forms (Pryce, Nedialkov & Tan, "DAESA", ACM TOMS 41(2), 2015, §5).
//!
//! With a transversal T fixed, equation `i` *depends on* equation `i'` when `F_i` contains
//! the unknown `T(i')`. The strongly connected components of this dependency graph are the
//! irreducible diagonal blocks; listed in topological order they give a block lower
//! triangular form in *solution order* (every block only uses unknowns of itself and of
//! earlier blocks).
//! * the **coarse BTF** uses every finite entry of Σ;
//! * the **fine BTF** uses only the tight positions `d_j − c_i = σ_ij` (the sparsity
//!   pattern of the Σ-Jacobian 𝔍), which splits the coarse blocks further: it is the block
//!   structure of the linear systems solved stage by stage.
//!
//! The strongly connected components come from an iterative Tarjan (no recursion, so
//! 10^6-equation models do not overflow the stack).

use crate::hvt::Transversal;
use crate::offsets::Offsets;
use crate::sigma::SigmaMatrix;

/// One diagonal block: a set of equations and the unknowns they are solved for (slices of
/// its [`Btf`]'s storage).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block<'a> {
    /// Equations of the block (sorted).
    pub rows: &'a [u32],
    /// Unknowns of the block, `cols[k] = T(rows[k])` (`u32::MAX` where row `rows[k]` has
    /// no column in the transversal).
    pub cols: &'a [u32],
}

/// A block triangular form: blocks in solution order.
///
/// All its indices live in one `u32` array, `[rows | cols | starts | block_of_row]`:
/// the rows of every block, block after block; their columns in the same order; the start
/// of each block in both (one more than there are blocks); and the block of each equation.
/// A model of a million singleton blocks stores 16 bytes per equation, where a pair of
/// vectors per block took five heap blocks' worth.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Btf {
    /// `[rows | cols | starts | block_of_row]`, see above.
    data: Vec<u32>,
    /// The number of rows of all blocks together (the length of `rows` and `cols`).
    members: usize,
    /// The number of blocks.
    n_blocks: usize,
}

impl Btf {
    /// A BTF of the `blocks` `(rows, cols)` in this order, over `n_rows` equations (the
    /// block of an equation in no block, or beyond `n_rows`, is not recorded: it reads as
    /// block 0). Indices above `u32::MAX` are stored as `u32::MAX`.
    pub fn from_blocks<'b>(
        n_rows: usize,
        blocks: impl IntoIterator<Item = (&'b [usize], &'b [usize])> + Clone,
    ) -> Btf {
        let members: usize = blocks.clone().into_iter().map(|(r, _)| r.len()).sum();
        let n_blocks = blocks.clone().into_iter().count();
        let mut btf = Btf::with_sizes(members, n_blocks, n_rows);
        let narrow = |x: usize| u32::try_from(x).unwrap_or(u32::MAX);
        let mut at = 0;
        for (b, (rows, cols)) in blocks.into_iter().enumerate() {
            btf.data[2 * members + b] = narrow(at);
            for (k, &i) in rows.iter().enumerate() {
                btf.data[at] = narrow(i);
                btf.data[members + at] = cols.get(k).map_or(u32::MAX, |&j| narrow(j));
                if i < n_rows {
                    btf.data[2 * members + n_blocks + 1 + i] = narrow(b);
                }
                at += 1;
            }
        }
        btf.data[2 * members + n_blocks] = narrow(at);
        btf
    }

    /// Storage for `members` block rows in `n_blocks` blocks over `n_rows` equations, all 0.
    fn with_sizes(members: usize, n_blocks: usize, n_rows: usize) -> Btf {
        Btf {
            data: vec![0; 2 * members + n_blocks + 1 + n_rows],
            members,
            n_blocks,
        }
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.n_blocks
    }

    /// Whether there are no blocks (empty system).
    pub fn is_empty(&self) -> bool {
        self.n_blocks == 0
    }

    /// The start of each block in the rows, and the end of the last.
    fn starts(&self) -> &[u32] {
        let m = self.members;
        self.data
            .get(2 * m..2 * m + self.n_blocks + 1)
            .unwrap_or(&[])
    }

    /// Block `b` (in solution order).
    ///
    /// # Panics
    /// If `b >= self.len()`.
    pub fn block(&self, b: usize) -> Block<'_> {
        let starts = self.starts();
        let (lo, hi) = (starts[b] as usize, starts[b + 1] as usize);
        Block {
            rows: &self.data[lo..hi],
            cols: &self.data[self.members + lo..self.members + hi],
        }
    }

    /// The blocks in solution order.
    pub fn blocks(&self) -> impl ExactSizeIterator<Item = Block<'_>> + '_ {
        (0..self.n_blocks).map(|b| self.block(b))
    }

    /// `block_of_row()[i]` is the index of the block holding equation `i`.
    pub fn block_of_row(&self) -> &[u32] {
        self.data
            .get(2 * self.members + self.n_blocks + 1..)
            .unwrap_or(&[])
    }

    /// Size of the largest block.
    pub fn max_block_size(&self) -> usize {
        self.starts()
            .windows(2)
            .map(|w| (w[1] - w[0]) as usize)
            .max()
            .unwrap_or(0)
    }

    /// The bytes of its storage on the heap: one array of `u32`.
    pub fn heap_bytes(&self) -> usize {
        self.data.capacity() * std::mem::size_of::<u32>()
    }
}

/// Strongly connected components of a graph in compressed adjacency form, by an iterative
/// Tarjan. Components are returned in reverse topological order of the edges (a component
/// comes after every component it has an edge to), i.e. sinks first; each component's nodes
/// are sorted. The edges of node `v` are `adj[adj_ptr[v]..adj_ptr[v + 1]]`.
pub fn strongly_connected_components(n: usize, adj_ptr: &[usize], adj: &[u32]) -> Vec<Vec<usize>> {
    let (nodes, starts) = components_flat(n, adj_ptr, adj);
    starts
        .windows(2)
        .map(|w| {
            nodes[w[0] as usize..w[1] as usize]
                .iter()
                .map(|&v| v as usize)
                .collect()
        })
        .collect()
}

/// [`strongly_connected_components`] as one array: the nodes of every component, component
/// after component, and the start of each component in it (and the end of the last).
fn components_flat(n: usize, adj_ptr: &[usize], adj: &[u32]) -> (Vec<u32>, Vec<u32>) {
    const UNVISITED: u32 = u32::MAX;
    let mut index = vec![UNVISITED; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut scc_stack: Vec<u32> = Vec::new();
    let mut call: Vec<(u32, usize)> = Vec::new(); // (node, next edge position)
    let mut next_index = 0u32;
    let mut nodes: Vec<u32> = Vec::with_capacity(n);
    let mut starts: Vec<u32> = vec![0];
    for root in 0..n {
        if index[root] != UNVISITED {
            continue;
        }
        call.push((root as u32, adj_ptr[root]));
        index[root] = next_index;
        low[root] = next_index;
        next_index += 1;
        scc_stack.push(root as u32);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut pos)) = call.last_mut() {
            let v = v as usize;
            if *pos < adj_ptr[v + 1] {
                let w = adj[*pos] as usize;
                *pos += 1;
                if index[w] == UNVISITED {
                    index[w] = next_index;
                    low[w] = next_index;
                    next_index += 1;
                    scc_stack.push(w as u32);
                    on_stack[w] = true;
                    call.push((w as u32, adj_ptr[w]));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                call.pop();
                if let Some(&(parent, _)) = call.last() {
                    let p = parent as usize;
                    low[p] = low[p].min(low[v]);
                }
                if low[v] == index[v] {
                    let first = nodes.len();
                    while let Some(w) = scc_stack.pop() {
                        on_stack[w as usize] = false;
                        nodes.push(w);
                        if w as usize == v {
                            break;
                        }
                    }
                    nodes[first..].sort_unstable();
                    starts.push(nodes.len() as u32);
                }
            }
        }
    }
    (nodes, starts)
}

fn btf_from_dependencies(
    s: &SigmaMatrix,
    t: &Transversal,
    keep: impl Fn(usize, usize, u32) -> bool,
) -> Btf {
    let n = s.n_rows();
    let mut row_of_col = vec![u32::MAX; s.n_cols()];
    for (i, &j) in t.col_of_row.iter().enumerate() {
        if j < row_of_col.len() {
            row_of_col[j] = i as u32;
        }
    }
    let mut adj_ptr = Vec::with_capacity(n + 1);
    adj_ptr.push(0);
    let mut adj = Vec::with_capacity(s.nnz());
    for i in 0..n {
        for &(j, o) in s.row(i) {
            let i2 = row_of_col[j as usize];
            if i2 != u32::MAX && i2 as usize != i && keep(i, j as usize, o) {
                adj.push(i2);
            }
        }
        adj_ptr.push(adj.len());
    }
    drop(row_of_col);
    // Tarjan lists sinks first: exactly solution order for "depends on" edges.
    let (rows, starts) = components_flat(n, &adj_ptr, &adj);
    drop((adj_ptr, adj));
    let n_blocks = starts.len() - 1;
    let mut btf = Btf::with_sizes(rows.len(), n_blocks, n);
    let m = rows.len();
    for (b, w) in starts.windows(2).enumerate() {
        let (lo, hi) = (w[0] as usize, w[1] as usize);
        for (at, &i) in (lo..hi).zip(&rows[lo..hi]) {
            let i = i as usize;
            btf.data[2 * m + n_blocks + 1 + i] = b as u32;
            btf.data[m + at] = t
                .col_of_row
                .get(i)
                .map_or(u32::MAX, |&j| u32::try_from(j).unwrap_or(u32::MAX));
        }
    }
    btf.data[..m].copy_from_slice(&rows);
    btf.data[2 * m..2 * m + n_blocks + 1].copy_from_slice(&starts);
    btf
}

/// The coarse BTF: blocks from the full sparsity of Σ, for the transversal `t`.
pub fn coarse_btf(s: &SigmaMatrix, t: &Transversal) -> Btf {
    btf_from_dependencies(s, t, |_, _, _| true)
}

/// The fine BTF: blocks from the Σ-Jacobian pattern (tight positions `d_j − c_i = σ_ij`).
pub fn fine_btf(s: &SigmaMatrix, offsets: &Offsets, t: &Transversal) -> Btf {
    btf_from_dependencies(s, t, |i, j, o| match (offsets.c.get(i), offsets.d.get(j)) {
        (Some(&c), Some(&d)) => i64::from(d) - i64::from(c) == i64::from(o),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tarjan_on_a_cycle_and_a_tail() {
        // 0 → 1 → 2 → 0, 3 → 0.
        let adj_ptr = [0, 1, 2, 3, 4];
        let adj = [1, 2, 0, 0];
        let comps = strongly_connected_components(4, &adj_ptr, &adj);
        assert_eq!(comps, vec![vec![0, 1, 2], vec![3]]);
    }

    #[test]
    fn lower_triangular_system_has_singleton_blocks_in_order() {
        // F0(z0), F1(z0, z1), F2(z1, z2): solve z0, then z1, then z2.
        let s = SigmaMatrix::from_entries(
            3,
            3,
            [(0, 0, 0), (1, 0, 0), (1, 1, 0), (2, 1, 0), (2, 2, 0)],
        );
        let t = Transversal::from_cols(&s, vec![0, 1, 2]).unwrap();
        let b = coarse_btf(&s, &t);
        assert_eq!(b.len(), 3);
        assert_eq!(b.block(0).rows, [0]);
        assert_eq!(b.block(1).rows, [1]);
        assert_eq!(b.block(2).rows, [2]);
        assert_eq!(b.block(2).cols, [2]);
        assert_eq!(b.block_of_row(), [0, 1, 2]);
        assert_eq!(b.max_block_size(), 1);
    }

    #[test]
    fn a_chain_of_singleton_blocks_is_stored_in_one_array_of_u32() {
        // F0(z0), F_i(z_{i-1}, z_i): a chain of n singleton blocks in solution order.
        let n = 1000;
        let s = SigmaMatrix::from_entries(
            n,
            n,
            (0..n).flat_map(|i| [(i, i, 1), (i, i.saturating_sub(1), 0)]),
        );
        let t = Transversal::from_cols(&s, (0..n).collect()).unwrap();
        let b = coarse_btf(&s, &t);
        assert_eq!(b.len(), n);
        assert_eq!(b.block(n - 1).rows, [(n - 1) as u32]);
        assert_eq!(b.block(n - 1).cols, [(n - 1) as u32]);
        assert_eq!(b.block_of_row()[7], 7);
        // rows, columns and block of each equation, and the block starts: 16 bytes per
        // equation and 4 per block, in one allocation.
        assert_eq!(b.heap_bytes(), 4 * (3 * n + n + 1));
        assert!(std::mem::size_of::<Btf>() <= 40);
    }

    #[test]
    fn blocks_given_as_lists_read_back() {
        let (r0, r1): (&[usize], &[usize]) = (&[2], &[0, 1]);
        let b = Btf::from_blocks(3, [(r0, r0), (r1, &[1, 0][..])]);
        assert_eq!(b.len(), 2);
        assert_eq!(b.block(1).rows, [0, 1]);
        assert_eq!(b.block(1).cols, [1, 0]);
        assert_eq!(b.block_of_row(), [1, 1, 0]);
        assert_eq!(b.max_block_size(), 2);
        assert_eq!(Btf::default().blocks().count(), 0);
    }
}
