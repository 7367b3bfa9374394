//! Enumeration of all highest-value transversals (steinbrecher2016 Ex. 2.7 / 2.8 list two
//! HVTs T1, T2 for the pendulum and the spring chain).
//!
//! With canonical offsets c, d, a transversal is an HVT iff all its positions are tight
//! (`d_j − c_i = σ_ij`): every transversal has value ≤ Σd − Σc, with equality iff tight
//! (Pryce 2001, Lemma 3.3). So the HVTs are the perfect matchings of the tight pattern
//! (the Σ-Jacobian pattern). A matching edge can only join a row and a column of the same
//! fine BTF block (edges between different strongly connected components lie on no
//! alternating cycle), so the matchings are enumerated block by block and combined.

use crate::assignment::Transversal;
use crate::btf::fine_btf;
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

/// Backtracking steps allowed per block before giving up with a lower bound.
const STEP_BUDGET: u64 = 2_000_000;

/// Perfect matchings of one block (rows × allowed cols), up to `cap`; returns
/// (matchings as col-per-row, complete?).
fn block_matchings(adj: &[Vec<usize>], n_cols: usize, cap: usize) -> (Vec<Vec<usize>>, bool) {
    let k = adj.len();
    let mut found = Vec::new();
    let mut used = vec![false; n_cols];
    let mut choice = vec![0usize; k]; // next candidate index per depth
    let mut assigned = vec![usize::MAX; k];
    let mut depth = 0usize;
    let mut steps = 0u64;
    loop {
        if depth == k {
            found.push(assigned.clone());
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
        steps += 1;
        if steps > STEP_BUDGET {
            return (found, false);
        }
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

/// All HVTs of `s` when there are at most `limit`, else their number or a lower bound.
///
/// `offsets` must be the (canonical or any valid) offsets of `s`; the HVTs are the perfect
/// matchings of the positions with `d_j − c_i = σ_ij`.
pub fn all_hvts(s: &SigmaMatrix, offsets: &Offsets, limit: usize) -> HvtEnumeration {
    let n = s.n_rows();
    let none = HvtEnumeration {
        hvts: Vec::new(),
        count: HvtCount::Exact(0),
    };
    if !s.is_square() || offsets.c.len() != n || offsets.d.len() != n {
        return none;
    }
    let tight = |i: usize, j: usize, o: u32| {
        i64::from(offsets.d[j]) - i64::from(offsets.c[i]) == i64::from(o)
    };
    // One tight perfect matching, to define the fine blocks.
    let tight_sigma = SigmaMatrix::from_entries(
        n,
        n,
        s.iter()
            .filter(|&(i, j, o)| tight(i, j, o))
            .map(|(i, j, _)| (i, j, 0)),
    );
    let Ok(t0) = crate::highest_value_transversal(&tight_sigma) else {
        return none;
    };
    let t0 = Transversal { dual_c: None, ..t0 };
    let btf = fine_btf(s, offsets, &t0);
    let cap = limit.saturating_add(1).max(10_000);
    let mut per_block: Vec<(Vec<usize>, Vec<Vec<usize>>)> = Vec::with_capacity(btf.blocks.len());
    let mut total: u128 = 1;
    let mut exact = true;
    let mut col_local = vec![usize::MAX; n];
    for block in &btf.blocks {
        for (k, &j) in block.cols.iter().enumerate() {
            col_local[j] = k;
        }
        let adj: Vec<Vec<usize>> = block
            .rows
            .iter()
            .map(|&i| {
                s.row(i)
                    .iter()
                    .filter(|&&(j, o)| {
                        tight(i, j as usize, o) && col_local[j as usize] != usize::MAX
                    })
                    .map(|&(j, _)| col_local[j as usize])
                    .collect()
            })
            .collect();
        let (ms, complete) = if block.rows.len() == 1 {
            (vec![vec![0]], true)
        } else {
            block_matchings(&adj, block.cols.len(), cap)
        };
        for &j in &block.cols {
            col_local[j] = usize::MAX;
        }
        exact &= complete;
        total = total.saturating_mul(ms.len() as u128);
        let globals = ms
            .into_iter()
            .map(|m| m.into_iter().map(|k| block.cols[k]).collect())
            .collect();
        per_block.push((block.rows.clone(), globals));
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
    let mut base = vec![0usize; n];
    let mut varying = Vec::new();
    for (rows, ms) in &per_block {
        if ms.len() == 1 {
            for (k, &i) in rows.iter().enumerate() {
                base[i] = ms[0][k];
            }
        } else {
            varying.push((rows, ms));
        }
    }
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
