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

/// One diagonal block: a set of equations and the unknowns they are solved for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// Equations of the block (sorted).
    pub rows: Vec<usize>,
    /// Unknowns of the block, `cols[k] = T(rows[k])`.
    pub cols: Vec<usize>,
}

/// A block triangular form: blocks in solution order.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Btf {
    /// The irreducible diagonal blocks, in solution order.
    pub blocks: Vec<Block>,
    /// `block_of_row[i]` is the index in `blocks` of the block holding equation `i`.
    pub block_of_row: Vec<usize>,
}

impl Btf {
    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// Whether there are no blocks (empty system).
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// Size of the largest block.
    pub fn max_block_size(&self) -> usize {
        self.blocks.iter().map(|b| b.rows.len()).max().unwrap_or(0)
    }
}

/// Strongly connected components of a graph in compressed adjacency form, by an iterative
/// Tarjan. Components are returned in reverse topological order of the edges (a component
/// comes after every component it has an edge to), i.e. sinks first; each component's nodes
/// are sorted. The edges of node `v` are `adj[adj_ptr[v]..adj_ptr[v + 1]]`.
pub fn strongly_connected_components(n: usize, adj_ptr: &[usize], adj: &[u32]) -> Vec<Vec<usize>> {
    const UNVISITED: u32 = u32::MAX;
    let mut index = vec![UNVISITED; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut scc_stack: Vec<u32> = Vec::new();
    let mut call: Vec<(u32, usize)> = Vec::new(); // (node, next edge position)
    let mut next_index = 0u32;
    let mut comps = Vec::new();
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
                    let mut comp = Vec::new();
                    while let Some(w) = scc_stack.pop() {
                        on_stack[w as usize] = false;
                        comp.push(w as usize);
                        if w as usize == v {
                            break;
                        }
                    }
                    comp.sort_unstable();
                    comps.push(comp);
                }
            }
        }
    }
    comps
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
    // Tarjan lists sinks first: exactly solution order for "depends on" edges.
    let comps = strongly_connected_components(n, &adj_ptr, &adj);
    let mut block_of_row = vec![0usize; n];
    let blocks = comps
        .into_iter()
        .enumerate()
        .map(|(b, rows)| {
            for &i in &rows {
                block_of_row[i] = b;
            }
            let cols = rows
                .iter()
                .map(|&i| t.col_of_row.get(i).copied().unwrap_or(usize::MAX))
                .collect();
            Block { rows, cols }
        })
        .collect();
    Btf {
        blocks,
        block_of_row,
    }
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
        assert_eq!(b.blocks[0].rows, vec![0]);
        assert_eq!(b.blocks[1].rows, vec![1]);
        assert_eq!(b.blocks[2].rows, vec![2]);
        assert_eq!(b.block_of_row, vec![0, 1, 2]);
        assert_eq!(b.max_block_size(), 1);
    }
}
