//! Canonical offsets c, d (steinbrecher2016 Algorithm 2.1 step 3; Pryce 2001 §3.3).
//!
//! Offsets are integer vectors with `d_j − c_i ≥ σ_ij` for all i, j, equality on an HVT T,
//! and `c ≥ 0`. The *canonical* offsets are the element-wise smallest such vectors; they do
//! not depend on which HVT is used (Pryce 2001, Thm 3.6).
//!
//! Pryce's fixed-point iteration (`d_j = max_i σ_ij + c_i`, `c_i = d_{T(i)} − σ_{i,T(i)}`,
//! from `c = 0`) computes the smallest c as a longest-path problem on the equations:
//! eliminating d gives `c_{i'} ≥ c_i + σ_{i,T(i')} − σ_{i',T(i')}`. We solve that
//! longest-path problem
//! * by a worklist (queue-based Bellman–Ford) form of Pryce's iteration, which is linear on
//!   DAE-like structures;
//! * by Dijkstra when that exceeds a budget of a few sweeps and a dual solution from the
//!   assignment solver is available (Johnson's re-weighting: with dual c⁰, `c⁰_i − c_i ≥ 0`
//!   and the edge lengths `c⁰_{i'} − c⁰_i − w_{ii'}` are ≥ 0), so `O(nnz log n)` at worst.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::fmt;

use crate::hvt::Transversal;
use crate::sigma::SigmaMatrix;

/// Offset vectors: `c_i` per equation (how often `F_i` is differentiated), `d_j` per
/// unknown (highest derivative of `z_j` in the reduced derivative array).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Offsets {
    /// Equation offsets.
    pub c: Vec<u32>,
    /// Variable offsets.
    pub d: Vec<u32>,
}

impl Offsets {
    /// Whether `d_j − c_i ≥ σ_ij` holds for every finite entry.
    pub fn are_valid_for(&self, s: &SigmaMatrix) -> bool {
        self.c.len() == s.n_rows()
            && self.d.len() == s.n_cols()
            && s.iter()
                .all(|(i, j, o)| i64::from(self.d[j]) - i64::from(self.c[i]) >= i64::from(o))
    }
}

/// `t` is not a highest-value transversal of `s`, so no offsets exist for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OffsetsError {
    /// `t` has the wrong length, repeats a column, or uses a −∞ position.
    NotATransversal,
    /// `t` is a transversal but not of highest value (its value can be improved).
    NotHighestValue,
    /// An offset exceeds `u32::MAX`.
    Overflow,
}

impl fmt::Display for OffsetsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OffsetsError::NotATransversal => "not a finite transversal of the signature matrix",
            OffsetsError::NotHighestValue => "the transversal is not of highest value",
            OffsetsError::Overflow => "offset overflow",
        })
    }
}

impl std::error::Error for OffsetsError {}

/// Worklist (queue-based Bellman–Ford) form of Pryce's fixed-point iteration from c = 0
/// (Pryce 2001 §3.3): longest paths over the edges `i → i'` given by `weight`.
///
/// Returns `Ok(None)` when more than `budget` edge relaxations would be needed, and
/// [`OffsetsError::NotHighestValue`] when an equation is relaxed more than n times (a
/// positive cycle: the transversal is not an HVT).
fn pryce_worklist(
    s: &SigmaMatrix,
    weight: &impl Fn(u32, u32) -> (usize, i64),
    budget: Option<usize>,
) -> Result<Option<Vec<i64>>, OffsetsError> {
    let n = s.n_rows();
    let mut c = vec![0i64; n];
    let mut count = vec![0usize; n];
    let mut in_queue = vec![true; n];
    let mut queue: VecDeque<u32> = (0..n as u32).collect();
    let mut scanned = 0usize;
    while let Some(i) = queue.pop_front() {
        let i = i as usize;
        in_queue[i] = false;
        scanned += s.row(i).len();
        if budget.is_some_and(|b| scanned > b) {
            return Ok(None);
        }
        for &(j, o) in s.row(i) {
            let (i2, w) = weight(j, o);
            if c[i] + w > c[i2] {
                c[i2] = c[i] + w;
                count[i2] += 1;
                if count[i2] > n {
                    return Err(OffsetsError::NotHighestValue);
                }
                if !in_queue[i2] {
                    in_queue[i2] = true;
                    queue.push_back(i2 as u32);
                }
            }
        }
    }
    Ok(Some(c))
}

/// The canonical (smallest) offsets for an HVT `t` of `s`.
///
/// # Panics
/// If `t` is not a highest-value transversal of `s`; see [`try_canonical_offsets`].
pub fn canonical_offsets(s: &SigmaMatrix, t: &Transversal) -> Offsets {
    match try_canonical_offsets(s, t) {
        Ok(o) => o,
        Err(e) => panic!("canonical_offsets: {e}"),
    }
}

/// The canonical (smallest) offsets for an HVT `t` of `s`, or an error if `t` is not an HVT.
pub fn try_canonical_offsets(s: &SigmaMatrix, t: &Transversal) -> Result<Offsets, OffsetsError> {
    offsets_with_sweep_budget(s, t, 4)
}

/// [`try_canonical_offsets`] with Pryce's iteration limited to `sweeps · (nnz + n)` edge
/// relaxations when a verified dual is available (Dijkstra finishes the job otherwise).
fn offsets_with_sweep_budget(
    s: &SigmaMatrix,
    t: &Transversal,
    sweeps: usize,
) -> Result<Offsets, OffsetsError> {
    let n = s.n_rows();
    if !s.is_square() || t.col_of_row.len() != n {
        return Err(OffsetsError::NotATransversal);
    }
    let mut row_of_col = vec![u32::MAX; n];
    let mut sigma_t = vec![0i64; n];
    for (i, &j) in t.col_of_row.iter().enumerate() {
        if j >= n || row_of_col[j] != u32::MAX {
            return Err(OffsetsError::NotATransversal);
        }
        row_of_col[j] = i as u32;
        sigma_t[i] = i64::from(s.get(i, j).ok_or(OffsetsError::NotATransversal)?);
    }
    // Edge i → i' for each entry (i, j) with i' = row_of_col[j]: w = σ_ij − σ_{i',j}.
    let weight = |j: u32, o: u32| -> (usize, i64) {
        let i2 = row_of_col[j as usize] as usize;
        (i2, i64::from(o) - sigma_t[i2])
    };
    let dual_ok = t.dual_c.as_ref().filter(|p| {
        p.len() == n
            && p.iter().all(|&x| x >= 0)
            && (0..n).all(|i| {
                s.row(i).iter().all(|&(j, o)| {
                    let (i2, w) = weight(j, o);
                    p[i2] >= p[i] + w
                })
            })
    });
    // Pryce's iteration first: linear on the chain-like structures of DAE models (each
    // equation is relaxed a few times). With a verified dual it gets a budget of a few
    // sweeps and Dijkstra takes over if that runs out, which bounds the worst case by
    // O(nnz log n); without one it runs to the end (or to the positive-cycle check).
    let budget = dual_ok.map(|_| sweeps.saturating_mul(s.nnz() + n));
    let c: Vec<i64> = match pryce_worklist(s, &weight, budget)? {
        Some(c) => c,
        None => {
            // Only reached with a verified dual `p` (the budget is None otherwise).
            let p = dual_ok.ok_or(OffsetsError::NotHighestValue)?;
            // M_i = p_i − c_i ≥ 0: shortest paths with sources M_i = p_i and lengths
            // p_{i'} − p_i − w ≥ 0.
            let mut m: Vec<i64> = p.clone();
            let mut heap: BinaryHeap<Reverse<(i64, u32)>> =
                (0..n).map(|i| Reverse((m[i], i as u32))).collect();
            while let Some(Reverse((mi, i))) = heap.pop() {
                let i = i as usize;
                if mi != m[i] {
                    continue;
                }
                for &(j, o) in s.row(i) {
                    let (i2, w) = weight(j, o);
                    let nd = mi + p[i2] - p[i] - w;
                    if nd < m[i2] {
                        m[i2] = nd;
                        heap.push(Reverse((nd, i2 as u32)));
                    }
                }
            }
            (0..n).map(|i| p[i] - m[i]).collect()
        }
    };
    let mut c_out = Vec::with_capacity(n);
    let mut d_out = vec![0u32; n];
    for i in 0..n {
        let ci = u32::try_from(c[i]).map_err(|_| OffsetsError::Overflow)?;
        c_out.push(ci);
        let dj = u32::try_from(c[i] + sigma_t[i]).map_err(|_| OffsetsError::Overflow)?;
        d_out[t.col_of_row[i]] = dj;
    }
    let off = Offsets { c: c_out, d: d_out };
    // The dual path already guarantees validity; the worklist path too unless `t` was not
    // optimal, which the cycle check catches. Double-check cheaply.
    if !off.are_valid_for(s) {
        return Err(OffsetsError::NotHighestValue);
    }
    Ok(off)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pendulum() -> SigmaMatrix {
        // steinbrecher2016 (12): unknowns x, y, v, w, λ.
        SigmaMatrix::from_entries(
            5,
            5,
            [
                (0, 0, 1),
                (0, 2, 0),
                (1, 1, 1),
                (1, 3, 0),
                (2, 0, 0),
                (2, 2, 1),
                (2, 4, 0),
                (3, 1, 0),
                (3, 3, 1),
                (3, 4, 0),
                (4, 0, 0),
                (4, 1, 0),
            ],
        )
    }

    #[test]
    fn worklist_and_dual_paths_agree_on_the_pendulum() {
        let s = pendulum();
        let t = crate::highest_value_transversal(&s).unwrap();
        let a = canonical_offsets(&s, &t);
        let plain = Transversal {
            dual_c: None,
            ..t.clone()
        };
        let b = canonical_offsets(&s, &plain);
        assert_eq!(a, b);
        // No iteration budget: Johnson–Dijkstra on the dual gives the same offsets.
        assert_eq!(offsets_with_sweep_budget(&s, &t, 0), Ok(a.clone()));
        assert_eq!(a.c, vec![1, 1, 0, 0, 2]);
        assert_eq!(a.d, vec![2, 2, 1, 1, 0]);
        // A bogus (non-dual) warm start is detected and ignored.
        let bogus = Transversal {
            dual_c: Some(vec![0; 5]),
            ..t
        };
        assert_eq!(canonical_offsets(&s, &bogus), a);
    }

    #[test]
    fn dijkstra_and_worklist_agree_on_the_scaling_chains() {
        for s in [
            crate::generators::pendulum_chain_link_vectors(50),
            crate::generators::pendulum_chain(50),
            crate::generators::spring_chain(50),
        ] {
            let t = crate::highest_value_transversal(&s).unwrap();
            assert!(t.dual_c.is_some());
            let worklist = offsets_with_sweep_budget(&s, &t, usize::MAX).unwrap();
            let dijkstra = offsets_with_sweep_budget(&s, &t, 0).unwrap();
            assert_eq!(worklist, dijkstra);
            assert_eq!(canonical_offsets(&s, &t), worklist);
        }
        // Spot values: link 1 of the link-vector chain (rows der x, link dx, force v).
        let s = crate::generators::pendulum_chain_link_vectors(50);
        let t = crate::highest_value_transversal(&s).unwrap();
        let o = offsets_with_sweep_budget(&s, &t, 0).unwrap();
        assert_eq!((o.c[2], o.c[102], o.c[202], o.c[301]), (1, 2, 0, 2));
        assert_eq!((o.d[1], o.d[101], o.d[201], o.d[301]), (2, 1, 2, 0));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// Johnson–Dijkstra on the solver's dual and Pryce's worklist iteration compute the
        /// same (canonical) offsets on random nonsingular Σ (diagonal plus random entries).
        #[test]
        fn dijkstra_and_worklist_agree_on_random_sigma(
            n in 1usize..8,
            cells in proptest::collection::vec((0u32..100, 0u32..4), 64),
            diag in proptest::collection::vec(0u32..4, 8),
        ) {
            let mut e: Vec<(usize, usize, u32)> = (0..n).map(|i| (i, (i + 1) % n, diag[i])).collect();
            e.extend(
                cells
                    .iter()
                    .enumerate()
                    .filter(|&(k, &(p, _))| k < n * n && p < 35)
                    .map(|(k, &(_, o))| (k / n, k % n, o)),
            );
            let s = SigmaMatrix::from_entries(n, n, e);
            let t = crate::highest_value_transversal(&s).unwrap();
            let worklist = offsets_with_sweep_budget(&s, &t, usize::MAX).unwrap();
            let dijkstra = offsets_with_sweep_budget(&s, &t, 0).unwrap();
            let plain = Transversal { dual_c: None, ..t };
            proptest::prop_assert_eq!(&worklist, &dijkstra);
            proptest::prop_assert_eq!(try_canonical_offsets(&s, &plain), Ok(worklist));
        }
    }

    #[test]
    fn non_hvt_is_rejected() {
        // [[1,0],[0,1]]: the anti-diagonal (value 0) is not an HVT.
        let s = SigmaMatrix::from_entries(2, 2, [(0, 0, 1), (0, 1, 0), (1, 0, 0), (1, 1, 1)]);
        let t = Transversal::from_cols(&s, vec![1, 0]).unwrap();
        assert_eq!(
            try_canonical_offsets(&s, &t),
            Err(OffsetsError::NotHighestValue)
        );
        let bad = Transversal {
            col_of_row: vec![0, 0],
            value: 0,
            dual_c: None,
        };
        assert_eq!(
            try_canonical_offsets(&s, &bad),
            Err(OffsetsError::NotATransversal)
        );
    }
}
