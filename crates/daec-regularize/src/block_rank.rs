//! The numerical regularity of the Σ-Jacobian 𝔍 of a large model, block
//! by block on the fine block triangular form of the analysis.
//!
//! 𝔍 is nonzero only on the tight positions `d_j − c_i = σ_ij`, whose
//! pattern the fine BTF puts in block lower triangular form (Pryce,
//! Nedialkov & Tan, "DAESA", ACM TOMS 41(2), 2015, §5): every block's
//! equations use only the unknowns of the block and of earlier ones. A
//! block triangular matrix is nonsingular exactly when every diagonal
//! block is, so each block is decided on its own, equilibrated (rows and
//! columns scaled by powers of two to a largest entry near 1, Ruiz's
//! iteration):
//!
//! * blocks of at most `AnalyzeOptions::dense_block_max` unknowns by the
//!   dense LU with complete pivoting (rank-revealing: pivots below `1e-10`
//!   count as zero), which gives the block's numerical rank;
//! * larger blocks by `daec-solve`'s sparse LU (COLAMD column ordering,
//!   Gilbert–Peierls LU with partial pivoting), singular when a pivot falls
//!   to `1e-10` or below. Partial pivoting finds a rank deficiency but not
//!   its size: such a block counts as having rank one less than its order.
//!
//! The work is linear in the entries of 𝔍 plus the fill of the sparse
//! blocks' factors, which COLAMD keeps near-linear for the chains and
//! ladders of large models.

use crate::dense::{self, FullPivLu, Matrix};
use daec_structure::Btf;

/// Relative pivot size below which a pivot of an equilibrated block counts
/// as zero (the dense success check's tolerance).
const PIVOT_TOL: f64 = 1e-10;

/// The block check of the Σ-Jacobian 𝔍 of a large model: its regularity
/// decided block by block on the fine BTF (the success check of
/// [`SuccessCheck`](crate::SuccessCheck) above
/// `AnalyzeOptions::success_check_max_unknowns` unknowns).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BlockRank {
    /// Number of diagonal blocks.
    pub blocks: usize,
    /// Order of the largest block.
    pub largest: usize,
    /// Blocks factorised by the sparse LU (the others densely).
    pub sparse_blocks: usize,
    /// The sum of the blocks' numerical ranks (a singular block factorised
    /// by the sparse LU counts as its order minus one): the order of 𝔍
    /// exactly when 𝔍 is numerically nonsingular.
    pub rank: usize,
    /// The equations of the first singular block in solution order, if
    /// any.
    pub singular_block: Option<Vec<usize>>,
}

/// Decides the regularity of the `n × n` matrix with entries
/// `(row, col, value)` (duplicates summed) block by block on `btf` (see
/// the module documentation). An entry above the block diagonal of `btf`
/// (which the tight pattern never has) or a `btf` that does not cover
/// every row makes the whole matrix one block.
pub fn block_rank(
    n: usize,
    entries: &[(usize, usize, f64)],
    btf: &Btf,
    dense_block_max: usize,
) -> BlockRank {
    let whole;
    let (btf, index) = match BlockIndex::new(n, btf, entries) {
        Some(index) => (btf, index),
        None => {
            let all: Vec<usize> = (0..n).collect();
            whole = Btf::from_blocks(n, [(&all[..], &all[..])]);
            (&whole, BlockIndex::whole(n))
        }
    };
    // the entries of every diagonal block, in local coordinates
    let mut start = vec![0usize; btf.len() + 1];
    for &(i, j, _) in entries {
        if index.block_of_row[i] == index.block_of_col[j] {
            start[index.block_of_row[i] + 1] += 1;
        }
    }
    for b in 0..btf.len() {
        start[b + 1] += start[b];
    }
    let mut fill = start.clone();
    let mut local = vec![(0usize, 0usize, 0.0f64); start[btf.len()]];
    for &(i, j, v) in entries {
        let b = index.block_of_row[i];
        if b == index.block_of_col[j] {
            local[fill[b]] = (index.local[i], index.local_col[j], v);
            fill[b] += 1;
        }
    }
    let mut out = BlockRank {
        blocks: btf.len(),
        ..BlockRank::default()
    };
    for (b, block) in btf.blocks().enumerate() {
        let s = block.rows.len();
        let block_entries = &mut local[start[b]..start[b + 1]];
        out.largest = out.largest.max(s);
        let rank = if s > dense_block_max {
            out.sparse_blocks += 1;
            sparse_block_rank(s, block_entries)
        } else {
            dense_block_rank(s, block_entries)
        };
        if rank < s && out.singular_block.is_none() {
            out.singular_block = Some(block.rows.iter().map(|&i| i as usize).collect());
        }
        out.rank += rank;
    }
    out
}

/// Where every row and column sits in a BTF: its block and its position
/// in the block.
struct BlockIndex {
    block_of_row: Vec<usize>,
    block_of_col: Vec<usize>,
    local: Vec<usize>,
    local_col: Vec<usize>,
}

impl BlockIndex {
    /// `None` when `btf` does not cover the `n` rows and columns once each
    /// or an entry lies above its block diagonal.
    fn new(n: usize, btf: &Btf, entries: &[(usize, usize, f64)]) -> Option<BlockIndex> {
        const NONE: usize = usize::MAX;
        let mut index = BlockIndex {
            block_of_row: vec![NONE; n],
            block_of_col: vec![NONE; n],
            local: vec![0; n],
            local_col: vec![0; n],
        };
        for (b, block) in btf.blocks().enumerate() {
            if block.rows.len() != block.cols.len() {
                return None;
            }
            for (k, (&i, &j)) in block.rows.iter().zip(block.cols).enumerate() {
                let (i, j) = (i as usize, j as usize);
                if i >= n
                    || j >= n
                    || index.block_of_row[i] != NONE
                    || index.block_of_col[j] != NONE
                {
                    return None;
                }
                index.block_of_row[i] = b;
                index.block_of_col[j] = b;
                index.local[i] = k;
                index.local_col[j] = k;
            }
        }
        let covered = index.block_of_row.iter().all(|&b| b != NONE)
            && index.block_of_col.iter().all(|&b| b != NONE);
        let triangular = entries
            .iter()
            .all(|&(i, j, _)| i < n && j < n && index.block_of_col[j] <= index.block_of_row[i]);
        (covered && triangular).then_some(index)
    }

    /// The whole matrix as one block.
    fn whole(n: usize) -> BlockIndex {
        BlockIndex {
            block_of_row: vec![0; n],
            block_of_col: vec![0; n],
            local: (0..n).collect(),
            local_col: (0..n).collect(),
        }
    }
}

/// The numerical rank of an `s × s` block by the dense LU with complete
/// pivoting of the block equilibrated.
fn dense_block_rank(s: usize, entries: &[(usize, usize, f64)]) -> usize {
    if entries.iter().any(|e| !e.2.is_finite()) {
        return s.saturating_sub(1);
    }
    if s == 1 {
        // equilibrated, a nonzero 1 × 1 block is 1
        return usize::from(entries.iter().map(|e| e.2).sum::<f64>() != 0.0);
    }
    let mut m = Matrix::zeros(s, s);
    for &(i, j, v) in entries {
        m.set(i, j, m.get(i, j) + v);
    }
    let (scaled, _, _) = dense::equilibrate(&m);
    FullPivLu::new(&scaled, PIVOT_TOL).rank
}

/// The rank of an `s × s` block by the sparse LU of the block
/// equilibrated: `s` when every pivot is above [`PIVOT_TOL`], else `s − 1`
/// (the LU stops at the first small pivot).
fn sparse_block_rank(s: usize, entries: &mut [(usize, usize, f64)]) -> usize {
    if entries.iter().any(|e| !e.2.is_finite()) {
        return s - 1;
    }
    equilibrate_sparse(s, entries);
    let pairs: Vec<(usize, usize)> = entries.iter().map(|&(i, j, _)| (i, j)).collect();
    let (pattern, slot) = daec_solve::SparsePattern::new(s, &pairs);
    let mut values = vec![0.0; pattern.nnz()];
    for (e, &k) in entries.iter().zip(&slot) {
        values[k] += e.2;
    }
    let mut lu = daec_solve::SparseRealLu::new(&pattern);
    match lu.factor_with_pivot_floor(&pattern, &values, PIVOT_TOL) {
        Ok(()) => s,
        Err(_) => s - 1,
    }
}

/// Ruiz's equilibration of a sparse `s × s` matrix in place: rows and
/// columns scaled by powers of two (exact) until their largest entries lie
/// within a factor 2 of 1, as [`dense::equilibrate`] does for dense ones.
fn equilibrate_sparse(s: usize, entries: &mut [(usize, usize, f64)]) {
    // the power of two nearest to 1/sqrt(x)
    let step = |x: f64| -> f64 {
        if x > 0.0 && x.is_finite() {
            (-0.5 * x.log2()).round().exp2()
        } else {
            1.0
        }
    };
    let mut row_max = vec![0.0f64; s];
    let mut col_max = vec![0.0f64; s];
    for _ in 0..20 {
        row_max.fill(0.0);
        col_max.fill(0.0);
        for &(i, j, v) in entries.iter() {
            row_max[i] = row_max[i].max(v.abs());
            col_max[j] = col_max[j].max(v.abs());
        }
        let r: Vec<f64> = row_max.iter().map(|&x| step(x)).collect();
        let c: Vec<f64> = col_max.iter().map(|&x| step(x)).collect();
        if r.iter().chain(&c).all(|&f| f == 1.0) {
            break;
        }
        for e in entries.iter_mut() {
            e.2 *= r[e.0] * c[e.1];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn btf(blocks: &[&[usize]]) -> Btf {
        let n = blocks.iter().map(|b| b.len()).sum();
        Btf::from_blocks(n, blocks.iter().map(|&b| (b, b)))
    }

    /// A 3 × 3 block lower triangular matrix, blocks {0} and {1, 2}.
    fn entries(scale: f64, second_row: f64) -> Vec<(usize, usize, f64)> {
        vec![
            (0, 0, 2.0),
            (1, 0, 5.0),
            (1, 1, 1.0),
            (1, 2, 3.0 * scale),
            (2, 1, 2.0 / scale),
            (2, 2, second_row),
        ]
    }

    #[test]
    fn regular_and_singular_blocks_densely_and_sparsely() {
        let b = btf(&[&[0], &[1, 2]]);
        for dense_max in [0, 10] {
            // det of {1, 2}: 1·7 − 3·2 = 1
            let r = block_rank(3, &entries(1.0, 7.0), &b, dense_max);
            assert_eq!((r.blocks, r.largest, r.rank), (2, 2, 3));
            assert_eq!(r.sparse_blocks, if dense_max == 0 { 2 } else { 0 });
            assert!(r.singular_block.is_none());
            // det of {1, 2}: 1·6 − 3·2 = 0, badly scaled entries
            let r = block_rank(3, &entries(1e8, 6.0), &b, dense_max);
            assert_eq!(r.rank, 2);
            assert_eq!(r.singular_block.as_deref(), Some(&[1, 2][..]));
        }
    }

    #[test]
    fn an_entry_above_the_block_diagonal_makes_one_block() {
        let b = btf(&[&[0], &[1, 2]]);
        let mut e = entries(1.0, 7.0);
        e.push((0, 2, 1.0));
        let r = block_rank(3, &e, &b, 10);
        assert_eq!((r.blocks, r.largest, r.rank), (1, 3, 3));
    }
}
