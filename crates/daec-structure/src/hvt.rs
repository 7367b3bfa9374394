//! Highest-value transversals (HVT) by a sparse linear assignment problem.
//!
//! Pryce 2001 §3 (and steinbrecher2016 §2, after Algorithm 2.1): an HVT is an optimal
//! solution of the assignment problem "maximise Σ σ_{i,T(i)}"; the offsets c, d are the
//! optimal solution of its dual. We solve the LAP with successive shortest augmenting paths
//! (Dijkstra with potentials, as in Jonker & Volgenant 1987, but on the sparse pattern), so
//! the cost is near-linear on the local structures of DAE models. The dual potentials are
//! kept and used to warm-start the canonical-offset computation ([`crate::canonical_offsets`]).
//!
//! The same solver gives StE's choice among the HVTs, the one of maximal κ_T
//! ([`max_weight_tight_transversal`]); the enumeration of all HVTs is in
//! `hvt_enumeration.rs`.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::dm::{StructuralSingularity, dulmage_mendelsohn};
use crate::sigma::SigmaMatrix;

/// A transversal of Σ: one column per row, all positions finite (an HVT when produced by
/// [`highest_value_transversal`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transversal {
    /// `col_of_row[i]` is the unknown assigned to equation `i`.
    pub col_of_row: Vec<usize>,
    /// The value `Σ_i σ_{i, T(i)}`.
    pub value: i64,
    /// Optional dual certificate from the assignment solver: row offsets `c_i` (not
    /// necessarily canonical) with `d_j − c_i ≥ σ_ij`, equality on `T`. Used only to
    /// warm-start [`crate::canonical_offsets`]; verified before use, so `None` or stale
    /// values are harmless. [`crate::analyze`] drops it once the offsets are found.
    pub dual_c: Option<Vec<i64>>,
}

impl Transversal {
    /// A transversal from its columns, with its value computed from `s`.
    /// Returns `None` if a position is out of range or −∞, or if a column repeats.
    pub fn from_cols(s: &SigmaMatrix, col_of_row: Vec<usize>) -> Option<Transversal> {
        if col_of_row.len() != s.n_rows() || s.n_rows() != s.n_cols() {
            return None;
        }
        let mut used = vec![false; s.n_cols()];
        let mut value = 0i64;
        for (i, &j) in col_of_row.iter().enumerate() {
            if j >= s.n_cols() || used[j] {
                return None;
            }
            used[j] = true;
            value += i64::from(s.get(i, j)?);
        }
        Some(Transversal {
            col_of_row,
            value,
            dual_c: None,
        })
    }

    /// The positions `(row, col)` of the transversal.
    pub fn positions(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.col_of_row.iter().copied().enumerate()
    }
}

/// A cost type for the generic sparse assignment solver.
pub(crate) trait Cost: Copy + PartialOrd + std::fmt::Debug {
    const ZERO: Self;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn total_cmp(&self, o: &Self) -> Ordering;
    /// Clamp tiny negative round-off to zero (no-op for integers).
    fn clamp_nonneg(self) -> Self;
}

impl Cost for i64 {
    const ZERO: Self = 0;
    fn add(self, o: Self) -> Self {
        self + o
    }
    fn sub(self, o: Self) -> Self {
        self - o
    }
    fn total_cmp(&self, o: &Self) -> Ordering {
        self.cmp(o)
    }
    fn clamp_nonneg(self) -> Self {
        self
    }
}

impl Cost for f64 {
    const ZERO: Self = 0.0;
    fn add(self, o: Self) -> Self {
        self + o
    }
    fn sub(self, o: Self) -> Self {
        self - o
    }
    fn total_cmp(&self, o: &Self) -> Ordering {
        f64::total_cmp(self, o)
    }
    fn clamp_nonneg(self) -> Self {
        self.max(0.0)
    }
}

/// A heap entry: (distance, push sequence number, column).
///
/// Ties in distance are broken first-in-first-out, so a plateau of equal distances is
/// searched breadth-first from the start row, like the SCAN list of Jonker & Volgenant
/// (1987, §4, procedure `augment`): a free column near the start is found before the search
/// wanders along a long zero-cost alternating path. (Breaking ties by column index instead
/// made every search on `generators::pendulum_chain_link_vectors` walk back over all previous
/// links: quadratic time.)
#[derive(Clone, Copy)]
struct HeapItem<C: Cost>(C, u64, u32);

impl<C: Cost> PartialEq for HeapItem<C> {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl<C: Cost> Eq for HeapItem<C> {}
impl<C: Cost> PartialOrd for HeapItem<C> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<C: Cost> Ord for HeapItem<C> {
    // Reversed: BinaryHeap is a max-heap and we need the smallest distance first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.0.total_cmp(&self.0)
            .then_with(|| o.1.cmp(&self.1))
            .then_with(|| o.2.cmp(&self.2))
    }
}

/// A square sparse min-cost assignment problem in compressed-row form.
pub(crate) struct Lap<'a, C: Cost> {
    pub n: usize,
    pub row_ptr: &'a [usize],
    pub cols: &'a [u32],
    pub costs: &'a [C],
}

/// Solution of a [`Lap`]: the assignment and dual potentials `u`, `v` with
/// `cost_ij − u_i − v_j ≥ 0`, equality on the assignment.
pub(crate) struct LapSolution<C> {
    pub col_of_row: Vec<usize>,
    pub u: Vec<C>,
    #[allow(dead_code)]
    pub v: Vec<C>,
    /// Columns labelled by all the Dijkstra searches together (the solver's work measure).
    #[allow(dead_code)]
    pub work: usize,
}

/// Successive shortest augmenting paths with potentials on a sparse pattern.
/// Returns `None` if no perfect matching exists.
pub(crate) fn solve_lap<C: Cost>(lap: &Lap<'_, C>) -> Option<LapSolution<C>> {
    const FREE: u32 = u32::MAX;
    let n = lap.n;
    let row = |i: usize| lap.row_ptr[i]..lap.row_ptr[i + 1];
    // Column reduction: v_j = min_i cost_ij, u = 0. For costs −σ this is the start of
    // Pryce's fixed-point iteration (c = 0, d_j = max_i σ_ij), the smallest feasible dual;
    // searches from it stay local on chain-like DAE structures (like Pantelides' colouring),
    // whereas a row reduction creates zero-cost plateaus that every later search explores.
    let u = vec![C::ZERO; n];
    let mut v: Vec<Option<C>> = vec![None; n];
    for i in 0..n {
        if row(i).is_empty() {
            return None;
        }
        for k in row(i) {
            let j = lap.cols[k] as usize;
            let c = lap.costs[k];
            if v[j].is_none_or(|m| c.total_cmp(&m) == Ordering::Less) {
                v[j] = Some(c);
            }
        }
    }
    let mut u = u;
    let mut v: Vec<C> = v.into_iter().map(|x| x.unwrap_or(C::ZERO)).collect();
    let mut col_of_row = vec![FREE; n];
    let mut row_of_col = vec![FREE; n];
    // Greedy initial matching on zero reduced-cost positions.
    for i in 0..n {
        for k in row(i) {
            let j = lap.cols[k] as usize;
            if row_of_col[j] == FREE
                && lap.costs[k].sub(u[i]).sub(v[j]).total_cmp(&C::ZERO) != Ordering::Greater
            {
                row_of_col[j] = i as u32;
                col_of_row[i] = j as u32;
                break;
            }
        }
    }
    // Dijkstra state, reset only where touched.
    let mut dist: Vec<Option<C>> = vec![None; n];
    let mut pred = vec![FREE; n];
    let mut done = vec![false; n];
    let mut touched: Vec<u32> = Vec::new();
    let mut finalized: Vec<(u32, u32)> = Vec::new(); // (col, row matched before augmenting)
    let mut heap: BinaryHeap<HeapItem<C>> = BinaryHeap::new();
    let mut work = 0usize;
    for s in 0..n {
        if col_of_row[s] != FREE {
            continue;
        }
        heap.clear();
        finalized.clear();
        let mut seq = 0u64;
        // Dijkstra over alternating paths: row → column by reduced cost, column → its row.
        let mut end: Option<(usize, C)> = None;
        let (mut cur_row, mut cur_d) = (s, C::ZERO);
        'dijkstra: loop {
            for k in lap.row_ptr[cur_row]..lap.row_ptr[cur_row + 1] {
                let j = lap.cols[k] as usize;
                if done[j] {
                    continue;
                }
                let r = lap.costs[k].sub(u[cur_row]).sub(v[j]).clamp_nonneg();
                let nd = cur_d.add(r);
                let better = match dist[j] {
                    None => {
                        touched.push(j as u32);
                        true
                    }
                    Some(old) => nd.total_cmp(&old) == Ordering::Less,
                };
                if better {
                    dist[j] = Some(nd);
                    pred[j] = cur_row as u32;
                    heap.push(HeapItem(nd, seq, j as u32));
                    seq += 1;
                }
                // A free column at the current (minimal) distance is final: stop here
                // instead of exploring the plateau of equal distances.
                if row_of_col[j] == FREE && nd.total_cmp(&cur_d) != Ordering::Greater {
                    done[j] = true;
                    finalized.push((j as u32, FREE));
                    end = Some((j, dist[j].unwrap_or(nd)));
                    break 'dijkstra;
                }
            }
            loop {
                let Some(HeapItem(dj, _, j)) = heap.pop() else {
                    break 'dijkstra;
                };
                let j = j as usize;
                if done[j] || dist[j].is_none_or(|cur| cur.total_cmp(&dj) != Ordering::Equal) {
                    continue;
                }
                done[j] = true;
                let i2 = row_of_col[j];
                finalized.push((j as u32, i2));
                if i2 == FREE {
                    end = Some((j, dj));
                    break 'dijkstra;
                }
                cur_row = i2 as usize;
                cur_d = dj;
                break;
            }
        }
        let (jend, big_d) = end?;
        // Potential update (reduced costs stay ≥ 0, path becomes tight).
        u[s] = u[s].add(big_d);
        for &(j, i2) in &finalized {
            let j = j as usize;
            let Some(dj) = dist[j] else { continue };
            let delta = big_d.sub(dj);
            v[j] = v[j].sub(delta);
            if i2 != FREE {
                u[i2 as usize] = u[i2 as usize].add(delta);
            }
        }
        // Augment along the predecessor chain.
        let mut j = jend;
        loop {
            let i = pred[j] as usize;
            let prev = col_of_row[i];
            col_of_row[i] = j as u32;
            row_of_col[j] = i as u32;
            if i == s {
                break;
            }
            j = prev as usize;
        }
        work += touched.len();
        for &j in &touched {
            dist[j as usize] = None;
            done[j as usize] = false;
            pred[j as usize] = FREE;
        }
        touched.clear();
    }
    Some(LapSolution {
        col_of_row: col_of_row.into_iter().map(|j| j as usize).collect(),
        u,
        v,
        work,
    })
}

/// A highest-value transversal (HVT) of a square Σ: a transversal maximising
/// `Σ_i σ_{i,T(i)}` over the finite positions (steinbrecher2016 Algorithm 2.1, step 2).
///
/// Returns [`StructuralSingularity`] (with the Dulmage–Mendelsohn decomposition) if Σ is
/// not square or has no finite transversal. Sparse: `O(nnz log n)` per augmentation.
pub fn highest_value_transversal(s: &SigmaMatrix) -> Result<Transversal, StructuralSingularity> {
    if !s.is_square() {
        return Err(StructuralSingularity::new(dulmage_mendelsohn(s)));
    }
    let n = s.n_rows();
    let mut row_ptr = Vec::with_capacity(n + 1);
    row_ptr.push(0);
    let mut cols = Vec::with_capacity(s.nnz());
    let mut costs = Vec::with_capacity(s.nnz());
    for i in 0..n {
        for &(j, o) in s.row(i) {
            cols.push(j);
            costs.push(-i64::from(o));
        }
        row_ptr.push(cols.len());
    }
    let lap = Lap {
        n,
        row_ptr: &row_ptr,
        cols: &cols,
        costs: &costs,
    };
    let Some(sol) = solve_lap(&lap) else {
        return Err(StructuralSingularity::new(dulmage_mendelsohn(s)));
    };
    let mut value = 0i64;
    for (i, &j) in sol.col_of_row.iter().enumerate() {
        // The solver only assigns finite positions.
        value += i64::from(s.get(i, j).unwrap_or(0));
    }
    // Dual: −σ_ij − u_i − v_j ≥ 0  ⇒  d_j − c_i ≥ σ_ij with c_i = u_i + K, d_j = −v_j + K.
    let k = sol.u.iter().copied().min().map_or(0, |m| -m);
    let dual_c = sol.u.iter().map(|&ui| ui + k).collect();
    Ok(Transversal {
        col_of_row: sol.col_of_row,
        value,
        dual_c: Some(dual_c),
    })
}

/// The choice of HVT `T*` for structural extension (steinbrecher2016 §3, "StE"): among the
/// transversals of the tight positions, the one maximising `κ_T = Π |𝔍_{i,T(i)}|`,
/// i.e. `Σ log|𝔍_ij|`.
///
/// `weights` are the Σ-Jacobian entries `(row, col, J_ij)` at the tight positions of an
/// `n × n` system (any sign; duplicates keep the last). Entries that are zero or not finite
/// are ignored. Returns `col_of_row`, or `None` if no transversal with `κ_T > 0` exists.
pub fn max_weight_tight_transversal(
    n: usize,
    weights: &[(usize, usize, f64)],
) -> Option<Vec<usize>> {
    let mut triples: Vec<(usize, usize, f64)> = weights
        .iter()
        .filter(|&&(i, j, w)| i < n && j < n && w.is_finite() && w != 0.0)
        .map(|&(i, j, w)| (i, j, -w.abs().ln()))
        .collect();
    triples.sort_by_key(|a| (a.0, a.1));
    // Keep the last of duplicates: reverse dedup keeps the first of each run, so dedup on a
    // reversed run order.
    let mut dedup: Vec<(usize, usize, f64)> = Vec::with_capacity(triples.len());
    for t in triples {
        match dedup.last_mut() {
            Some(last) if last.0 == t.0 && last.1 == t.1 => *last = t,
            _ => dedup.push(t),
        }
    }
    let mut row_ptr = vec![0usize; n + 1];
    for &(i, _, _) in &dedup {
        row_ptr[i + 1] += 1;
    }
    for i in 0..n {
        row_ptr[i + 1] += row_ptr[i];
    }
    let cols: Vec<u32> = dedup.iter().map(|&(_, j, _)| j as u32).collect();
    let costs: Vec<f64> = dedup.iter().map(|&(_, _, c)| c).collect();
    let lap = Lap {
        n,
        row_ptr: &row_ptr,
        cols: &cols,
        costs: &costs,
    };
    solve_lap(&lap).map(|s| s.col_of_row)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_by_two_prefers_diagonal_of_higher_value() {
        // [[2,0],[0,1]] → value 3 on the diagonal; anti-diagonal has value 0.
        let s = SigmaMatrix::from_entries(2, 2, [(0, 0, 2), (0, 1, 0), (1, 0, 0), (1, 1, 1)]);
        let t = highest_value_transversal(&s).unwrap();
        assert_eq!(t.col_of_row, vec![0, 1]);
        assert_eq!(t.value, 3);
    }

    #[test]
    fn singular_pattern_is_an_error() {
        let s = SigmaMatrix::from_entries(2, 2, [(0, 0, 1), (1, 0, 0)]);
        let e = highest_value_transversal(&s).unwrap_err();
        assert_eq!(e.dm.matching_size, 1);
    }

    /// The LAP of `−Σ` in compressed-row form, as [`highest_value_transversal`] builds it.
    fn lap_work(s: &SigmaMatrix) -> (usize, i64) {
        let mut row_ptr = vec![0];
        let (mut cols, mut costs) = (Vec::new(), Vec::new());
        for i in 0..s.n_rows() {
            for &(j, o) in s.row(i) {
                cols.push(j);
                costs.push(-i64::from(o));
            }
            row_ptr.push(cols.len());
        }
        let lap = Lap {
            n: s.n_rows(),
            row_ptr: &row_ptr,
            cols: &cols,
            costs: &costs,
        };
        let sol = solve_lap(&lap).expect("nonsingular");
        let value = sol
            .col_of_row
            .iter()
            .enumerate()
            .map(|(i, &j)| i64::from(s.get(i, j).unwrap_or(0)))
            .sum();
        (sol.work, value)
    }

    #[test]
    fn augmenting_searches_stay_local_on_the_link_vector_chain() {
        // models/scale/pendulum_chain.dae: one augmentation per link constraint. With
        // column-index tie-breaking each search walked back over all previous links
        // (≈ 2·links columns each, 1 008 997 labels in all for 1000 links); breadth-first
        // plateaus keep every search within the neighbouring links.
        let links = 1000;
        let s = crate::generators::pendulum_chain_link_vectors(links);
        let (work, value) = lap_work(&s);
        assert_eq!(value, 2 * links as i64);
        assert!(work <= 15 * links, "{work} columns labelled");
        // The other chain and the spring chain are local too.
        let (work, _) = lap_work(&crate::generators::pendulum_chain(links));
        assert!(work <= 15 * links, "{work} columns labelled");
    }

    #[test]
    fn kappa_choice_maximises_product() {
        // |J| = [[1, 3], [4, 1]]: diagonal product 1, anti-diagonal 12.
        let w = [(0, 0, 1.0), (0, 1, -3.0), (1, 0, 4.0), (1, 1, 1.0)];
        assert_eq!(max_weight_tight_transversal(2, &w), Some(vec![1, 0]));
        // Zero entries cannot be used.
        let w = [(0, 0, 1.0), (0, 1, 0.0), (1, 0, 0.0), (1, 1, 1.0)];
        assert_eq!(max_weight_tight_transversal(2, &w), Some(vec![0, 1]));
        let w = [(0, 0, 1.0), (1, 0, 2.0)];
        assert_eq!(max_weight_tight_transversal(2, &w), None);
    }
}
