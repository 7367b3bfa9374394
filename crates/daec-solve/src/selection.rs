//! Equation selection for overdetermined quasi-linear DAEs.
//!
//! QUALIDAES (Steinbrecher 2016, section 4, system (39)) integrates
//! `E(t,z) ż = k(t,z)`, `0 = g(t,z)` with `m_d + m_c ≥ n` such that the
//! constraints are solved exactly while the differential part holds in an
//! "approximative sense". We realise this with a rank-revealing *selection*:
//! at a Jacobian evaluation (the sparse path of [`crate::Radau5`] keeps
//! a selection while the steps succeed, the dense one a confirmed one
//! while the step size and the selected rows' pivots stay near theirs),
//! Gaussian elimination with complete pivoting
//! first picks a maximal set of linearly independent constraint rows of
//! `G = ∂g/∂z` (so redundant constraints, like the repeated level-0
//! constraint of the pendulum HiC form (38), are harmless), and then
//! completes the rank with the rows of `E` restricted to the complement
//! eliminated by those pivots — i.e. the differential equations are
//! projected onto a coordinate complement of the constraint manifold's
//! normal space. The selected rows form a square DAE whose Newton matrix
//! `γ/h·M − J` is nonsingular for small `h` whenever the overdetermined DAE
//! is regular (rank `[E; G] = n`).

/// Rows chosen from the differential part and from the constraints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EquationSelection {
    /// Indices (into `0..n_d`) of the differential rows kept, ascending.
    pub diff_rows: Vec<usize>,
    /// Indices (into `0..n_g`) of the constraint rows kept, ascending.
    pub constraint_rows: Vec<usize>,
}

impl EquationSelection {
    /// Every differential and every constraint row (a square system).
    pub fn all(n_d: usize, n_g: usize) -> Self {
        Self {
            diff_rows: (0..n_d).collect(),
            constraint_rows: (0..n_g).collect(),
        }
    }
}

/// The constraint level ([`crate::QuasiLinearDae::constraint_levels`]) of
/// a declared *invariant* of the dynamics (a relation the solution keeps
/// that is no derivative of a model equation, e.g. an energy): its rows
/// are pivoted after all other constraints, on whichever of their free
/// columns is largest — no preferred columns, as a level-`ℓ` row has. An
/// invariant ties unknowns of every derivative class (the energy of a
/// pendulum: positions and velocities), and which of them it can determine
/// changes along the solution (where the velocity vanishes, only the
/// position), so a fixed preference would solve it for an unknown it no
/// longer determines.
pub const INVARIANT_LEVEL: u32 = u32::MAX;

/// Relative pivot threshold below which a row is considered dependent.
const RANK_TOL: f64 = 1e-10;

/// A row is pivoted on its preferred columns ([`PivotPreference`]) only if
/// their largest entry is at least this fraction of the row's largest
/// (numerically nonzero, not round-off); otherwise it goes to the
/// unrestricted pass. The floor only tells a nonzero from round-off: how
/// large a row's preferred entries are relative to its others says
/// nothing about the conditioning of the selected system. On Andrews'
/// squeezer the velocity constraints' entries on the positions, `∂(Gv)/∂q`,
/// exceed those on the velocities, `G`, by the angular velocities, ~10³;
/// on the slider crank of the IVP test set the elastic rod's equations of
/// motion have stiffness entries on the elastic coordinates ~10⁹ times
/// their mass entries on the accelerations, and a floor of 10⁻⁸ solved
/// them for the coordinates: the coordinates then followed the forces
/// algebraically, with round-off amplified by the stiffness into the
/// accelerations, and Newton stalled at every step size below 10⁻⁷.
const PREFER_FLOOR: f64 = 1e-14;

mod dense;
mod matched;

pub(crate) use dense::{
    DenseSelectionScratch, select_preferring_into as select_equations_preferring_into,
};

use crate::linalg::RealLu;

/// Selects `n` rows from the dense row-major `e` (`n_d × n`) and `g`
/// (`n_g × n`): first a maximal independent set of constraint rows, then
/// differential rows completing the rank. Returns `Err(rank)` if
/// `[E; G]` has rank below `n`.
pub fn select_equations(
    n: usize,
    e: &[f64],
    n_d: usize,
    g: &[f64],
    n_g: usize,
) -> Result<EquationSelection, usize> {
    select_equations_preferring(n, e, n_d, g, n_g, None)
}

/// The columns each row should preferably be pivoted on: the selection
/// of *dummy derivatives* (Mattsson & Söderlind 1993) carried over to the
/// overdetermined forms.
///
/// Complete pivoting by magnitude alone picks the columns a constraint is
/// solved for by the size of its entries, which depends on the state: on
/// the pendulum's HiC form (Steinbrecher 2016, (38)) with a large velocity
/// the velocity constraint `−2(p₁v₁ + p₂v₂) = 0` is solved for a
/// *position* (its entries there are the velocities), so both positions
/// are fixed by the constraints, only the two acceleration rows remain,
/// and the positions follow the velocities' direction instead of `ṗ = v`
/// — a square DAE that is singular where the pendulum turns (`v = 0`) and
/// needs far more Newton iterations and steps than the natural one.
///
/// The preference restores the structure of the Σ-method's hidden
/// constraints: a constraint of level `ℓ` (the `ℓ`-th derivative of an
/// equation) is solved for the unknowns that first appear at its level —
/// those in no constraint of a lower level (positions at level 0,
/// velocities at level 1, multipliers at level 2) — and a differential
/// row for an unknown whose derivative it contains (a nonzero of its row
/// of `E`). Among those (or among all of a row's unknowns when none
/// first appears at its level) a constraint prefers the highest
/// *derivative class*: algebraic unknowns before
/// differential ones, and along kinematic chains `ṗ = v`, `v̇ = a` the
/// derivative before what it is the derivative of — so a velocity
/// constraint `G(p)v = c` (both `p` and `v` first appear at level 0) is
/// solved for velocities, the equations of motion for accelerations and
/// multipliers, and the positions stay states, as the dummy derivatives of
/// the index-2 formulation would have them. The constraint levels are
/// pivoted from the lowest up, each before the equations of motion: a
/// level's constraints take the unknowns that first appear there before a
/// higher level's constraints can. (Pivoting from the highest level down,
/// as Mattsson & Söderlind select dummy derivatives, lets the
/// acceleration-level constraints of Andrews' squeezer take unknowns its
/// velocity level needs: the selected system is then ill-conditioned and
/// the Newton iteration fails for rtol ≤ 1e-7.) Rows whose preferred columns are exhausted or dependent
/// fall back to complete pivoting over all free columns, so the selection
/// is valid (rank `n`) whenever `[E; G]` has full rank, exactly as without
/// preference.
///
/// The large sparse path ([`select_equations_ordered`]) takes no
/// preference. Its structural pass matches a constraint to its algebraic
/// columns first (those no differential row holds) and to large entries
/// before small ones, so the differential unknowns stay states; its
/// fallback selects rows by their order, and which rows it keeps does
/// not depend on the pivot columns (a row is kept iff it is independent of
/// those kept before it). With the differential rows in the order of the
/// unknowns (positions before velocities) both keep a kinematic row
/// `ṗᵢ = vᵢ` before the dynamic rows, the choice the preference makes
/// here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PivotPreference {
    /// The constraint rows of each level, by ascending level.
    groups: Vec<Vec<usize>>,
    /// Preferred columns of each constraint row, ascending.
    constraint: Vec<Vec<usize>>,
    /// Preferred columns of each differential row (its pattern in `E`),
    /// ascending.
    diff: Vec<Vec<usize>>,
}

impl PivotPreference {
    /// The preference from the constraint levels (`n_g` entries) and the
    /// sparsity patterns `(row, col)` of `∂g/∂z`, of `E` and of
    /// `∂(Eż − k)/∂z`. `None` when `levels` does not have one entry per
    /// constraint row.
    pub fn new(
        n: usize,
        levels: &[u32],
        g_pattern: &[(usize, usize)],
        n_g: usize,
        e_pattern: &[(usize, usize)],
        jd_pattern: &[(usize, usize)],
        n_d: usize,
    ) -> Option<Self> {
        if levels.len() != n_g {
            return None;
        }
        let rows_of = |pattern: &[(usize, usize)], m: usize| {
            let mut rows: Vec<Vec<usize>> = vec![Vec::new(); m];
            for &(r, c) in pattern {
                if r < m && c < n {
                    rows[r].push(c);
                }
            }
            for row in &mut rows {
                row.sort_unstable();
                row.dedup();
            }
            rows
        };
        let g_rows = rows_of(g_pattern, n_g);
        let diff = rows_of(e_pattern, n_d);
        // the level at which each column first appears in a constraint
        // (of the model: invariants are no level)
        let mut first_level = vec![u32::MAX; n];
        for (row, &l) in g_rows.iter().zip(levels) {
            if l == INVARIANT_LEVEL {
                continue;
            }
            for &c in row {
                first_level[c] = first_level[c].min(l);
            }
        }
        let class = derivative_class(n, &diff, &rows_of(jd_pattern, n_d));
        let constraint = g_rows
            .iter()
            .zip(levels)
            .map(|(row, &l)| {
                if l == INVARIANT_LEVEL {
                    // (all its columns: pivoted by magnitude alone)
                    return row.clone();
                }
                let first: Vec<usize> = row
                    .iter()
                    .copied()
                    .filter(|&c| first_level[c] == l)
                    .collect();
                let base = if first.is_empty() { row } else { &first };
                let top = base.iter().map(|&c| class[c]).max();
                base.iter()
                    .copied()
                    .filter(|&c| Some(class[c]) == top)
                    .collect()
            })
            .collect();
        let mut distinct = levels.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        let groups = distinct
            .iter()
            .map(|&l| (0..n_g).filter(|&r| levels[r] == l).collect())
            .collect();
        Some(Self {
            groups,
            constraint,
            diff,
        })
    }
}

/// The derivative class of every unknown: `u32::MAX` for an unknown
/// without an entry in `E` (algebraic: multipliers, accelerations of a
/// first-order form), else its place in the chains of kinematic rows
/// `ż_c = z_x` (a differential row with one column `c` in `E` and one
/// other column `x` of `E`-type in `∂(Eż − k)/∂z`): `x` is one order
/// above `c` (positions 0, velocities 1, …).
fn derivative_class(n: usize, e_rows: &[Vec<usize>], jd_rows: &[Vec<usize>]) -> Vec<u32> {
    let mut has_e = vec![false; n];
    for row in e_rows {
        for &c in row {
            has_e[c] = true;
        }
    }
    let chains: Vec<(usize, usize)> = e_rows
        .iter()
        .zip(jd_rows)
        .filter_map(|(e, jd)| {
            let others: Vec<usize> = jd.iter().copied().filter(|c| !e.contains(c)).collect();
            match (e.as_slice(), others.as_slice()) {
                (&[c], &[x]) if has_e[x] => Some((c, x)),
                _ => None,
            }
        })
        .collect();
    let mut order = vec![0u32; n];
    // longest chain from a root, at most n links (a cycle stops there)
    for _ in 0..n {
        let mut changed = false;
        for &(c, x) in &chains {
            if order[x] <= order[c] && order[c] < n as u32 {
                order[x] = order[c] + 1;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    (0..n)
        .map(|c| if has_e[c] { order[c] } else { u32::MAX })
        .collect()
}

/// [`select_equations`] pivoting each row on its preferred columns first
/// (see [`PivotPreference`]): per constraint level, in ascending order,
/// complete pivoting over the level's rows restricted to their preferred
/// columns (each row measured against its largest preferred entry), then
/// over all free columns for the level's remaining rows; the same for the
/// differential rows after all constraints. Without a preference, complete
/// pivoting over all constraint rows and then over all differential rows.
pub fn select_equations_preferring(
    n: usize,
    e: &[f64],
    n_d: usize,
    g: &[f64],
    n_g: usize,
    prefer: Option<&PivotPreference>,
) -> Result<EquationSelection, usize> {
    let mut scratch = DenseSelectionScratch::default();
    let mut sel = EquationSelection::all(0, 0);
    dense::select_preferring_into(&mut scratch, n, e, n_d, g, n_g, prefer, &mut sel).map(|()| sel)
}

/// How far the square system of the rows `sel` selects from `[G; E]`
/// (dense, row-major, as [`select_equations_preferring`] takes them) is
/// from singular: the smallest pivot of Gaussian elimination with
/// partial pivoting on those rows, each normalised by its largest entry
/// (the scale-free rows the selection pivots on), constraint rows first.
/// `0` for a singular or non-finite system. It does not depend on the step
/// size (the Newton matrix `γ/h·M − J` does), so it compares a kept
/// selection at a later Jacobian with itself when it was chosen: a
/// selection only has to give a nonsingular, well-conditioned square
/// system (Steinbrecher 2016, section 4, system (39)), not the best one.
/// `lu` is a factorisation of order `n` used as scratch storage.
pub(crate) fn selected_min_pivot(
    n: usize,
    e: &[f64],
    g: &[f64],
    sel: &EquationSelection,
    lu: &mut RealLu,
) -> f64 {
    if sel.diff_rows.len() + sel.constraint_rows.len() != n {
        return 0.0;
    }
    let work = lu.matrix_mut();
    let rows = sel.constraint_rows.iter().map(|&r| &g[r * n..(r + 1) * n]);
    let rows = rows.chain(sel.diff_rows.iter().map(|&r| &e[r * n..(r + 1) * n]));
    for (dst, row) in work.chunks_exact_mut(n.max(1)).zip(rows) {
        let m = row.iter().fold(0.0f64, |a, &x| a.max(x.abs()));
        if !(m > 0.0 && m.is_finite()) {
            return 0.0;
        }
        let inv = 1.0 / m;
        dst.iter_mut().zip(row).for_each(|(d, &x)| *d = x * inv);
    }
    match lu.factor_in_place() {
        Ok(()) => lu.min_pivot(),
        Err(_) => 0.0,
    }
}

/// [`select_equations`] on sparse input: the same complete-pivoting
/// elimination (same pivots, same tie-breaking, same arithmetic on the
/// nonzeros, hence the same selection) on rows stored as sorted sparse
/// vectors, without the dense `(n_d + n_g) × n` work matrix.
///
/// `e_pattern`/`e_values` and `g_pattern`/`g_values` are `(row, col)`
/// patterns with values (duplicates summed), as the Jacobians of
/// [`crate::QuasiLinearDae`]. Each row's largest entry in a free column
/// is kept in a priority queue (per block: constraints, then differential
/// rows) and refreshed only for the rows an elimination step changes, so
/// the cost is that of the elimination's fill plus `O(log)` per update.
///
/// Limit: complete pivoting does not reduce fill. On the HiC form of a
/// mechanical chain (`models/scale/pendulum_chain.dae`; the link equations
/// `d_k = x_k − x_{k−1}` tie positions along the chain) the rows fill up
/// to a large fraction of the dense matrix (50 links: 62 000 of 157 500
/// entries), so for such models the selection, not the LU, dominates the
/// cost of a Jacobian evaluation. Neither a Markowitz column choice with
/// threshold 0.1 nor a fewest-rows tie-break reduces that fill: the row
/// order matters, which [`select_equations_ordered`] keeps — that
/// is the selection [`crate::Radau5`]'s sparse path uses (this one remains
/// its fallback and the reference the tests compare against).
pub fn select_equations_sparse(
    n: usize,
    e_pattern: &[(usize, usize)],
    e_values: &[f64],
    n_d: usize,
    g_pattern: &[(usize, usize)],
    g_values: &[f64],
    n_g: usize,
) -> Result<EquationSelection, usize> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let rows = n_g + n_d;
    // Sparse rows (constraints first, then differential rows), sorted by
    // column with duplicates summed in pattern order (as a dense scatter).
    let mut w = stacked_rows(n, (e_pattern, e_values, n_d), (g_pattern, g_values, n_g));
    let mut col_rows: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (r, row) in w.iter_mut().enumerate() {
        row.sort_by_key(|&(c, _)| c); // stable: keeps the pattern order of duplicates
        let mut merged: Vec<(usize, f64)> = Vec::with_capacity(row.len());
        for &(c, v) in row.iter() {
            match merged.last_mut() {
                Some((lc, lv)) if *lc == c => *lv += v,
                _ => merged.push((c, 0.0 + v)),
            }
        }
        let m = merged.iter().fold(0.0f64, |a, &(_, x)| a.max(x.abs()));
        if m > 0.0 && m.is_finite() {
            merged.iter_mut().for_each(|(_, x)| *x /= m);
        }
        for &(c, _) in &merged {
            col_rows[c].push(r);
        }
        *row = merged;
    }
    let mut col_used = vec![false; n];
    // Largest |entry| of a row in a free column; the first column on ties
    // (the dense row-major scan with a strict `>`).
    let row_best = |row: &[(usize, f64)], col_used: &[bool]| -> Option<(f64, usize)> {
        let mut best = 0.0;
        let mut at = None;
        for &(c, x) in row {
            if !col_used[c] {
                let v = x.abs();
                if v > best {
                    best = v;
                    at = Some(c);
                }
            }
        }
        at.map(|c| (best, c))
    };
    // Heap entries (|value| bits, Reverse(row), Reverse(col), version):
    // the largest value first, then the first row, as the dense scan.
    type Entry = (u64, Reverse<usize>, Reverse<usize>, u32);
    let mut version = vec![0u32; rows];
    let mut heaps: [BinaryHeap<Entry>; 2] = [BinaryHeap::new(), BinaryHeap::new()];
    let block = |r: usize| usize::from(r >= n_g);
    for (r, row) in w.iter().enumerate() {
        if let Some((v, c)) = row_best(row, &col_used) {
            heaps[block(r)].push((v.to_bits(), Reverse(r), Reverse(c), 0));
        }
    }
    let mut row_used = vec![false; rows];
    let mut sel = EquationSelection {
        diff_rows: Vec::new(),
        constraint_rows: Vec::new(),
    };
    let mut rank = 0;
    let mut scratch: Vec<(usize, f64)> = Vec::new();
    for b in 0..2 {
        while rank < n {
            // the current (valid) best entry of the block
            let mut piv = None;
            while let Some((bits, Reverse(r), Reverse(c), ver)) = heaps[b].pop() {
                if !row_used[r] && ver == version[r] && !col_used[c] {
                    piv = Some((f64::from_bits(bits), r, c));
                    break;
                }
            }
            let Some((best, pr, pc)) = piv else { break };
            if best <= RANK_TOL || !best.is_finite() {
                break;
            }
            row_used[pr] = true;
            col_used[pc] = true;
            rank += 1;
            if pr < n_g {
                sel.constraint_rows.push(pr);
            } else {
                sel.diff_rows.push(pr - n_g);
            }
            let prow = std::mem::take(&mut w[pr]);
            let p = prow
                .binary_search_by_key(&pc, |&(c, _)| c)
                .map(|k| prow[k].1)
                .unwrap_or(0.0);
            let candidates = std::mem::take(&mut col_rows[pc]);
            for &r in &candidates {
                if row_used[r] {
                    continue;
                }
                let Ok(k) = w[r].binary_search_by_key(&pc, |&(c, _)| c) else {
                    continue;
                };
                let f = w[r][k].1 / p;
                if f == 0.0 {
                    continue;
                }
                // row_r ← row_r − f·row_p over the union of both patterns
                scratch.clear();
                let (a, bp) = (&w[r], &prow);
                let (mut i, mut j) = (0, 0);
                while i < a.len() || j < bp.len() {
                    let ca = a.get(i).map_or(usize::MAX, |e| e.0);
                    let cb = bp.get(j).map_or(usize::MAX, |e| e.0);
                    if ca < cb {
                        scratch.push(a[i]);
                        i += 1;
                    } else if cb < ca {
                        scratch.push((cb, 0.0 - f * bp[j].1));
                        col_rows[cb].push(r);
                        j += 1;
                    } else {
                        scratch.push((ca, a[i].1 - f * bp[j].1));
                        i += 1;
                        j += 1;
                    }
                }
                if let Ok(k) = scratch.binary_search_by_key(&pc, |&(c, _)| c) {
                    scratch[k].1 = 0.0;
                }
                std::mem::swap(&mut w[r], &mut scratch);
                version[r] += 1;
                if let Some((v, c)) = row_best(&w[r], &col_used) {
                    heaps[block(r)].push((v.to_bits(), Reverse(r), Reverse(c), version[r]));
                }
            }
            col_rows[pc] = candidates;
            w[pr] = prow;
        }
    }
    if rank < n {
        return Err(rank);
    }
    sel.diff_rows.sort_unstable();
    sel.constraint_rows.sort_unstable();
    Ok(sel)
}

/// A sparse matrix given as a `(row, col)` pattern, its values and its
/// number of rows.
type SparseRows<'a> = (&'a [(usize, usize)], &'a [f64], usize);

/// The rows of `G` then those of `E` as lists of `(col, value)` entries in
/// pattern order (entries outside the matrix are ignored).
fn stacked_rows(n: usize, e: SparseRows<'_>, g: SparseRows<'_>) -> Vec<Vec<(usize, f64)>> {
    let (n_d, n_g) = (e.2, g.2);
    let mut w: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n_g + n_d];
    for (&(r, c), &v) in g.0.iter().zip(g.1) {
        if r < n_g && c < n {
            w[r].push((c, v));
        }
    }
    for (&(r, c), &v) in e.0.iter().zip(e.1) {
        if r < n_d && c < n {
            w[n_g + r].push((c, v));
        }
    }
    w
}

/// A reduced row becomes a pivot of the ordered selection on the first
/// pass only if its largest remaining entry is at least this fraction of
/// its original size (rows are normalised): the complement is chosen from
/// well-conditioned rows first.
const ORDERED_GOOD: f64 = 0.1;

/// A pivot row of the ordered selection: its pivot column, the pivot and
/// the row's (reduced, normalised) entries.
type PivotRow = (usize, f64, Vec<(usize, f64)>);

/// A pivot of the ordered selection may be this fraction of the largest
/// remaining entry of its row (threshold pivoting, Duff, Erisman & Reid,
/// *Direct Methods for Sparse Matrices*, §5.4): among those entries the
/// column that fewest of the remaining rows hold is chosen, so the pivot
/// row brings as little fill as possible into the rows after it.
const ORDERED_PIVOT: f64 = 0.1;

/// The pivot column of a reduced row (its entries `x` on `touched`; the
/// largest, `best`, is `(|x|, column)`): among the free columns whose entry
/// is at least [`ORDERED_PIVOT`] of the largest, the one held by the fewest
/// remaining rows (`remaining`, a Markowitz count of the rows to come), the
/// larger entry on ties, then the first.
fn sparsest_pivot(
    touched: &[usize],
    x: &[f64],
    pivot_of_col: &[usize],
    remaining: &[usize],
    best: (f64, usize),
) -> usize {
    let floor = ORDERED_PIVOT * best.0;
    let mut chosen = (remaining[best.1], best.0, best.1);
    for &c in touched {
        let a = x[c].abs();
        if pivot_of_col[c] != usize::MAX || a < floor {
            continue;
        }
        if (remaining[c], -a) < (chosen.0, -chosen.1) {
            chosen = (remaining[c], a, c);
        }
    }
    chosen.2
}

/// The equation selection for large sparse systems with limited fill.
///
/// The rows are first eliminated in their written order (below); when the
/// pivot rows fill in faster than the model (more than a fixed number of
/// entries per entry of `[G; E]` and per unknown), the selection is made
/// structurally instead: a maximum transversal of the rows of `[G; E]`,
/// constraint rows first, each row trying its large entries first and a
/// constraint its algebraic columns first; the matched rows are kept if
/// the sparse LU of their square system (COLAMD column ordering) finds it
/// regular with no pivot below a floor (the `matched` module). Its fill is
/// that of the iteration matrix, linear in a chain's length.
///
/// If that fails too (a pattern with no perfect matching, numerically
/// dependent rows other than repeated ones, a small pivot) the elimination
/// is completed without a limit. The elimination takes rows *in their order* (the constraints, then the differential
/// rows), each reduced against the pivot rows chosen so far (sparse
/// accumulator, pivots applied in the order they were created) and kept
/// as a new pivot row when its largest remaining entry is above the rank
/// tolerance — pivoting, among its entries of at least `ORDERED_PIVOT` of
/// the largest, on the column the fewest rows still to come hold
/// (`sparsest_pivot`, a Markowitz count). Row reduction only brings in
/// the entries of earlier pivot rows, so for chain-like models (whose
/// equations follow the chain) the fill stays within the coupling band,
/// where the complete pivoting of [`select_equations_sparse`] fills in
/// a large fraction of the matrix. Differential rows are taken in two
/// passes: first those whose remaining entry is at least
/// `ORDERED_GOOD` of the row (well-conditioned complements), then the
/// rest down to the rank tolerance. The selection may differ from the
/// complete-pivoting one (both are valid complements); `Err(rank)` when
/// `[E; G]` is rank deficient.
pub fn select_equations_ordered(
    n: usize,
    e_pattern: &[(usize, usize)],
    e_values: &[f64],
    n_d: usize,
    g_pattern: &[(usize, usize)],
    g_values: &[f64],
    n_g: usize,
) -> Result<EquationSelection, usize> {
    select_ordered_fill(n, e_pattern, e_values, n_d, g_pattern, g_values, n_g).0
}

/// [`select_equations_ordered`] and its fill: the entries of the LU
/// factors on the structural path, of the pivot rows on the elimination in
/// the written order.
fn select_ordered_fill(
    n: usize,
    e_pattern: &[(usize, usize)],
    e_values: &[f64],
    n_d: usize,
    g_pattern: &[(usize, usize)],
    g_values: &[f64],
    n_g: usize,
) -> (Result<EquationSelection, usize>, usize) {
    let entries = e_pattern.len().saturating_add(g_pattern.len());
    let limit = FILL_PER_ENTRY
        .saturating_mul(entries)
        .saturating_add(FILL_PER_UNKNOWN.saturating_mul(n));
    let e = (e_pattern, e_values, n_d);
    let g = (g_pattern, g_values, n_g);
    let ordered = |limit| select_ordered(n, e, g, limit).map(|(sel, fill, _)| (sel, fill));
    if let Some(done) = ordered(limit) {
        return done;
    }
    if let Some((sel, fill, _)) = matched::select_matched(n, e, g) {
        return (Ok(sel), fill);
    }
    ordered(usize::MAX).unwrap_or((Err(0), 0))
}

/// How [`select_rows_in_order`] made its selection and what it cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SelectionWork {
    /// `true` when the structural matching, confirmed by the sparse LU,
    /// decided; `false` when the elimination in the written order did.
    pub structural: bool,
    /// Its operations: on the structural path the entries the
    /// augmenting-path searches visited plus the entries of the LU factors
    /// of the matched system; on the elimination the entries of the pivot
    /// rows applied to the rows reduced (row operations, entry by entry).
    pub operations: usize,
}

/// The first `n` linearly independent rows, in their order, of the
/// sparse `m × n` matrix `pattern`/`values` (`(row, col)`, duplicates
/// summed): a row is kept iff it is independent of the rows kept before
/// it, so the rows offered first are preferred — the choice of the dummy
/// derivatives of Mattsson & Söderlind 1993 (§3: a nonsingular square
/// submatrix of the columns of `G_k`, the highest derivatives first),
/// made on the transposed block by `daec-regularize`'s DD form.
///
/// The rows are found structurally first, in time near-linear in the
/// entries for sparse blocks: a greedy maximum transversal taking the rows
/// in their order (the `matched` module; each failed augmenting-path
/// search marks the columns it visited dead, so the rows rejected cost
/// `O(nnz)` together), which keeps a row iff it is *structurally*
/// independent of those kept before (the first basis of the transversal
/// matroid, Edmonds 1971), then the sparse LU (COLAMD) of the diagonal
/// blocks of the matched square system. When that LU confirms the matched
/// rows as numerically regular, they are also the first *numerical* basis:
/// a numerically independent set is structurally independent, and the
/// greedy basis is the one whose `i`-th row comes no later than the `i`-th
/// row of any other basis (Gale's optimality of the greedy algorithm), so
/// no numerical basis comes before it. (The elimination's first pass
/// over differential rows defers a row whose reduced entries are all
/// below `ORDERED_GOOD` of its size, so on a nearly dependent row the two
/// may keep different, equally regular, sets; on the pendulum chain they
/// keep the same.) When the LU cannot confirm it (a
/// pattern with no perfect matching, rows numerically dependent though
/// structurally independent, a pivot below the floor, the search budget
/// spent) the rows are chosen by the elimination in the written order of
/// [`select_equations_ordered`] without a fill limit — its work grows with
/// the reductions that cascade through earlier pivot rows, as the square
/// of a chain's length on a pendulum chain's dummy-derivative block.
/// `Err(rank)` when the matrix has rank below `n`.
pub fn select_rows_in_order(
    n: usize,
    pattern: &[(usize, usize)],
    values: &[f64],
    m: usize,
) -> (Result<Vec<usize>, usize>, SelectionWork) {
    let rows = (pattern, values, m);
    let none: SparseRows<'_> = (&[], &[], 0);
    if let Some((sel, fill, visited)) = matched::select_matched(n, rows, none) {
        let work = SelectionWork {
            structural: true,
            operations: fill.saturating_add(visited),
        };
        return (Ok(sel.diff_rows), work);
    }
    let (sel, ops) = match select_ordered(n, rows, none, usize::MAX) {
        Some((sel, _, ops)) => (sel, ops),
        None => (Err(0), 0),
    };
    let work = SelectionWork {
        structural: false,
        operations: ops,
    };
    (sel.map(|s| s.diff_rows), work)
}

/// The elimination in the written order gives way to the structural path
/// when its pivot rows hold more than this many entries per entry of
/// `[G; E]` plus [`FILL_PER_UNKNOWN`] per unknown: its fill is then growing
/// faster than the model. Below it the elimination is kept, as its two
/// passes over the differential rows (`ORDERED_GOOD` first) choose
/// better-conditioned complements than the matching's magnitude order
/// (on the Fekete problem of the IVP test set, 160 unknowns, the matched
/// complement made the error at rtol 1e-6 twenty times larger).
const FILL_PER_ENTRY: usize = 16;
/// See [`FILL_PER_ENTRY`].
const FILL_PER_UNKNOWN: usize = 50;

/// The elimination in the written order of [`select_equations_ordered`],
/// the number of entries of its pivot rows (the fill) and the number of
/// pivot-row entries applied to the rows it reduced (its row operations,
/// which the fill does not bound: a row reduced against `p` pivot rows
/// costs their length); `None` once the fill exceeds `fill_limit`.
fn select_ordered(
    n: usize,
    e: SparseRows<'_>,
    g: SparseRows<'_>,
    fill_limit: usize,
) -> Option<(Result<EquationSelection, usize>, usize, usize)> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let (n_d, n_g) = (e.2, g.2);
    let rows = n_g + n_d;
    let w = stacked_rows(n, e, g);
    // pivot k: its column, its value and its (reduced, normalised) row
    let mut pivot_of_col: Vec<usize> = vec![usize::MAX; n];
    let mut pivots: Vec<PivotRow> = Vec::new();
    // sparse accumulator; the marks of the queued pivots are cleared after
    // each row through `queued_list`, so a row costs its own fill, not n
    let mut x = vec![0.0f64; n];
    let mut touched: Vec<usize> = Vec::new();
    let mut mark = vec![false; n];
    let mut queued = vec![false; n];
    let mut queued_list: Vec<usize> = Vec::new();
    let mut heap: BinaryHeap<Reverse<usize>> = BinaryHeap::new();
    // how many rows not yet taken hold each column (their pattern)
    let mut remaining = vec![0usize; n];
    for row in &w {
        for &(c, _) in row {
            remaining[c] += 1;
        }
    }
    let mut sel = EquationSelection {
        diff_rows: Vec::new(),
        constraint_rows: Vec::new(),
    };
    let mut taken = vec![false; rows];
    let mut fill = 0usize;
    let mut operations = 0usize;
    let passes: [(std::ops::Range<usize>, f64); 3] = [
        (0..n_g, RANK_TOL),
        (n_g..rows, ORDERED_GOOD),
        (n_g..rows, RANK_TOL),
    ];
    for (range, threshold) in passes {
        for r in range {
            if pivots.len() == n {
                break;
            }
            if taken[r] {
                continue;
            }
            // load the row, normalised by its largest entry
            let scale = w[r].iter().fold(0.0f64, |a, &(_, v)| a.max(v.abs()));
            if !(scale > 0.0 && scale.is_finite()) {
                continue;
            }
            for &(c, v) in &w[r] {
                if !mark[c] {
                    mark[c] = true;
                    touched.push(c);
                }
                x[c] += v / scale;
                let p = pivot_of_col[c];
                if p != usize::MAX && !queued[p] {
                    queued[p] = true;
                    queued_list.push(p);
                    heap.push(Reverse(p));
                }
            }
            // eliminate the pivot columns, oldest pivot first
            while let Some(Reverse(p)) = heap.pop() {
                let (pc, pv, ref prow) = pivots[p];
                let f = x[pc] / pv;
                if f == 0.0 || !f.is_finite() {
                    x[pc] = 0.0;
                    continue;
                }
                operations += prow.len();
                for &(c, v) in prow {
                    if !mark[c] {
                        mark[c] = true;
                        touched.push(c);
                    }
                    x[c] -= f * v;
                    let q = pivot_of_col[c];
                    if q != usize::MAX && q != p && !queued[q] {
                        queued[q] = true;
                        queued_list.push(q);
                        heap.push(Reverse(q));
                    }
                }
                x[pc] = 0.0;
            }
            // the largest remaining entry (first column on ties)
            let mut best = (0.0f64, usize::MAX);
            for &c in &touched {
                if pivot_of_col[c] == usize::MAX && x[c].abs() > best.0 {
                    best = (x[c].abs(), c);
                }
            }
            let accept = best.1 != usize::MAX && best.0 > threshold && best.0.is_finite();
            if accept {
                best.1 = sparsest_pivot(&touched, &x, &pivot_of_col, &remaining, best);
                for &(c, _) in &w[r] {
                    remaining[c] -= 1;
                }
                let mut row: Vec<(usize, f64)> = touched
                    .iter()
                    .filter(|&&c| pivot_of_col[c] == usize::MAX && x[c] != 0.0)
                    .map(|&c| (c, x[c]))
                    .collect();
                row.sort_unstable_by_key(|e| e.0);
                fill += row.len();
                if fill > fill_limit {
                    return None;
                }
                pivot_of_col[best.1] = pivots.len();
                pivots.push((best.1, x[best.1], row));
                taken[r] = true;
                if r < n_g {
                    sel.constraint_rows.push(r);
                } else {
                    sel.diff_rows.push(r - n_g);
                }
            }
            for &c in &touched {
                x[c] = 0.0;
                mark[c] = false;
            }
            touched.clear();
            for &p in &queued_list {
                queued[p] = false;
            }
            queued_list.clear();
        }
    }
    if pivots.len() < n {
        return Some((Err(pivots.len()), fill, operations));
    }
    sel.diff_rows.sort_unstable();
    sel.constraint_rows.sort_unstable();
    Some((Ok(sel), fill, operations))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pendulum_hic_drops_the_repeated_constraint_and_two_velocity_rows() {
        // z = (x, y, v, w, λ) at the horizontal start x = 1, m = l = 1.
        let n = 5;
        let e = [
            1.0, 0.0, 0.0, 0.0, 0.0, //
            0.0, 1.0, 0.0, 0.0, 0.0, //
            0.0, 0.0, 1.0, 0.0, 0.0, //
            0.0, 0.0, 0.0, 1.0, 0.0,
        ];
        let g = [
            2.0, 0.0, 0.0, 0.0, 0.0, // x² + y² − 1
            2.0, 0.0, 0.0, 0.0, 0.0, // repeated
            0.0, 0.0, 2.0, 0.0, 0.0, // 2xv + 2yw (v = w = 0)
            0.0, -13.75, 0.0, 0.0, -2.0, // level 2
        ];
        let s = select_equations(n, &e, 4, &g, 4).unwrap();
        assert_eq!(s.constraint_rows.len(), 3);
        assert!(s.constraint_rows.contains(&2) && s.constraint_rows.contains(&3));
        // x and v are fixed by the constraints, so der(y) and der(w) remain
        assert_eq!(s.diff_rows, vec![1, 3]);
    }

    /// The pendulum's HiC form (Steinbrecher 2016, (38); m = l = 1,
    /// `v̇ = λx`, `ẇ = λy − g`) at `p = (0.6, −0.8)`, `(v, w) = (4, 3)`,
    /// `λ = −30`: `(E, G, pattern of G, pattern of E)` with z = (x, y, v,
    /// w, λ) and constraint levels 0, 0, 1, 2.
    #[allow(clippy::type_complexity)]
    fn swinging_pendulum() -> (Vec<f64>, Vec<f64>, Vec<(usize, usize)>, Vec<(usize, usize)>) {
        let (x, y, v, w, lambda, grav) = (0.6, -0.8, 4.0, 3.0, -30.0, 13.75);
        let mut e = vec![0.0; 4 * 5];
        for i in 0..4 {
            e[i * 5 + i] = 1.0;
        }
        let g_rows = [
            [2.0 * x, 2.0 * y, 0.0, 0.0, 0.0],         // x² + y² − 1
            [2.0 * x, 2.0 * y, 0.0, 0.0, 0.0],         // repeated
            [2.0 * v, 2.0 * w, 2.0 * x, 2.0 * y, 0.0], // 2(xv + yw)
            [
                4.0 * lambda * x,
                4.0 * lambda * y - 2.0 * grav,
                4.0 * v,
                4.0 * w,
                2.0,
            ],
        ];
        let g = g_rows.concat();
        // structural pattern: positions, + velocities, + λ
        let width = [2, 2, 4, 5];
        let g_pattern = (0..4)
            .flat_map(|r| (0..width[r]).map(move |c| (r, c)))
            .collect();
        let e_pattern = (0..4).map(|i| (i, i)).collect();
        (e, g, g_pattern, e_pattern)
    }

    #[test]
    fn magnitude_alone_keeps_only_the_acceleration_rows_of_a_swinging_pendulum() {
        // The defect the preference repairs: the velocity constraint's
        // entries on the positions (2v, 2w) dominate, so it is solved for a
        // position and neither ẋ = v nor ẏ = w survives.
        let (e, g, _, _) = swinging_pendulum();
        let s = select_equations(5, &e, 4, &g, 4).unwrap();
        assert_eq!(s.diff_rows, vec![2, 3]);
    }

    #[test]
    fn preferred_pivots_keep_a_kinematic_and_a_dynamic_row_of_one_coordinate() {
        let (e, g, g_pattern, e_pattern) = swinging_pendulum();
        let jd_pattern = [(0, 2), (1, 3), (2, 0), (2, 4), (3, 1), (3, 4)];
        let prefer =
            PivotPreference::new(5, &[0, 0, 1, 2], &g_pattern, 4, &e_pattern, &jd_pattern, 4)
                .unwrap();
        // level 0 prefers the positions, level 1 the velocities, level 2 λ
        assert_eq!(
            prefer.constraint,
            vec![vec![0, 1], vec![0, 1], vec![2, 3], vec![4]]
        );
        let s = select_equations_preferring(5, &e, 4, &g, 4, Some(&prefer)).unwrap();
        // |y| > |x|: the constraints fix y, w and λ; ẋ = v and v̇ = λx remain
        assert_eq!(s.constraint_rows.len(), 3);
        assert!(s.constraint_rows.contains(&2) && s.constraint_rows.contains(&3));
        assert_eq!(s.diff_rows, vec![0, 2]);
        // the ordered (sparse) path keeps a kinematic row without a
        // preference, by taking the differential rows in their order
        let (gv, ev): (Vec<f64>, Vec<f64>) = (
            g_pattern.iter().map(|&(r, c)| g[r * 5 + c]).collect(),
            e_pattern.iter().map(|&(r, c)| e[r * 5 + c]).collect(),
        );
        let o = select_equations_ordered(5, &e_pattern, &ev, 4, &g_pattern, &gv, 4).unwrap();
        assert!(o.diff_rows[0] < 2 && o.diff_rows[1] >= 2, "{o:?}");
    }

    #[test]
    fn an_invariant_is_pivoted_by_magnitude_near_a_turning_point() {
        // The oscillator th' = ω, ω' = −sin th with its invariant
        // ω²/2 − cos th = −cos 1, near the turning point th = 1, ω = 1e-8:
        // ∂I/∂(th, ω) = (sin th, ω). As a level-0 constraint it prefers ω
        // (the derivative of th) and is solved for it, where it no longer
        // determines ω; as an invariant it is solved for th.
        let (th, om) = (1.0f64, 1e-8);
        let e = [1.0, 0.0, 0.0, 1.0];
        let g = [th.sin(), om];
        let g_pattern = [(0, 0), (0, 1)];
        let e_pattern = [(0, 0), (1, 1)];
        // (the kinematic chain th' = ω makes ω the higher class; the entry
        // of ω' = −sin th on th, which would close the chain into a cycle,
        // is left out of the pattern)
        let jd_pattern = [(0, 1)];
        let prefer = |level: u32| {
            PivotPreference::new(2, &[level], &g_pattern, 1, &e_pattern, &jd_pattern, 2).unwrap()
        };
        assert_eq!(prefer(0).constraint, vec![vec![1]]);
        assert_eq!(prefer(INVARIANT_LEVEL).constraint, vec![vec![0, 1]]);
        let s = select_equations_preferring(2, &e, 2, &g, 1, Some(&prefer(INVARIANT_LEVEL)));
        // the invariant takes th: ω' = −sin th stays, th' = ω goes
        assert_eq!(s.unwrap().diff_rows, vec![1]);
        let s = select_equations_preferring(2, &e, 2, &g, 1, Some(&prefer(0)));
        assert_eq!(s.unwrap().diff_rows, vec![0]);
    }

    #[test]
    fn preference_falls_back_to_magnitude_where_preferred_entries_vanish() {
        // z = (p, q): the level-1 row has no column of its own (both appear
        // at level 0), the level-0 row's preferred entry on q is zero at
        // this state; the selection is still complete.
        let e = [0.0, 1.0, 1.0, 0.0];
        let g = [1.0, 0.0, 1.0, 1.0];
        let pattern = [(0, 0), (0, 1), (1, 0), (1, 1)];
        let prefer = PivotPreference::new(2, &[0, 1], &pattern, 2, &pattern, &pattern, 2).unwrap();
        // (the level-1 row prefers all its columns: none first appears
        // there, and both are of the same class)
        assert_eq!(prefer.constraint, vec![vec![0, 1], vec![0, 1]]);
        let s = select_equations_preferring(2, &e, 2, &g, 2, Some(&prefer)).unwrap();
        assert_eq!(s.diff_rows.len() + s.constraint_rows.len(), 2);
        assert_eq!(s.constraint_rows, vec![0, 1]);
        // levels that do not match the constraint rows give no preference
        assert_eq!(
            PivotPreference::new(2, &[0], &pattern, 2, &pattern, &pattern, 2),
            None
        );
    }

    #[test]
    fn derivative_classes_follow_the_kinematic_chains() {
        // z = (p, v, a, λ, q, w): ṗ = v, v̇ = a (a chain p → v → a, a
        // algebraic), q̇ = w, m ẇ = −λq (not a kinematic row)
        let e_rows = [vec![0], vec![1], vec![4], vec![5]];
        let jd_rows = [vec![1], vec![2], vec![5], vec![3, 4]];
        let class = derivative_class(6, &e_rows, &jd_rows);
        assert_eq!(class, vec![0, 1, u32::MAX, u32::MAX, 0, 1]);
    }

    #[test]
    fn a_stiff_equation_of_motion_is_solved_for_its_acceleration() {
        // z = (q, v, a): q̇ = v, v̇ = a, and the equation of motion
        // a + 10⁹ q = 0 (the HiC form lists it twice). Its preferred entry
        // (on the algebraic a) is 10⁻⁹ of its largest; it must still be
        // chosen, keeping both kinematic rows: solved for q, the
        // coordinate would follow the force algebraically.
        let e = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0];
        let g = [1e9, 0.0, 1.0, 1e9, 0.0, 1.0];
        let g_pattern = [(0, 0), (0, 2), (1, 0), (1, 2)];
        let e_pattern = [(0, 0), (1, 1)];
        let jd_pattern = [(0, 1), (1, 2)];
        let prefer =
            PivotPreference::new(3, &[0, 0], &g_pattern, 2, &e_pattern, &jd_pattern, 2).unwrap();
        assert_eq!(prefer.constraint, vec![vec![2], vec![2]]);
        let s = select_equations_preferring(3, &e, 2, &g, 2, Some(&prefer)).unwrap();
        assert_eq!(s.diff_rows, vec![0, 1]);
        assert_eq!(s.constraint_rows.len(), 1);
    }

    #[test]
    fn a_velocity_constraint_is_solved_for_the_velocity() {
        // z = (p, v, a): ṗ = v, v̇ = a, the velocity constraint
        // 100·p·v − 1 = 0 at p = 1, v = 0.01 (entries 1 on p, 100 on v —
        // here the velocity wins by magnitude too; at v = 1 the position
        // would) and its derivative 100·v² + 100·p·a = 0 (level 1).
        for v in [0.01, 1.0] {
            let e = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0];
            let g = [100.0 * v, 100.0, 0.0, 0.0, 200.0 * v, 100.0];
            let g_pattern = [(0, 0), (0, 1), (1, 0), (1, 1), (1, 2)];
            let e_pattern = [(0, 0), (1, 1)];
            let jd_pattern = [(0, 1), (1, 2)];
            let prefer =
                PivotPreference::new(3, &[0, 1], &g_pattern, 2, &e_pattern, &jd_pattern, 2)
                    .unwrap();
            // level 0: p and v first appear, v is the derivative; level 1:
            // nothing first appears, a is algebraic
            assert_eq!(prefer.constraint, vec![vec![1], vec![2]]);
            let s = select_equations_preferring(3, &e, 2, &g, 2, Some(&prefer)).unwrap();
            // the position stays a state: ṗ = v is kept, v̇ = a dropped
            assert_eq!(s.diff_rows, vec![0], "v = {v}");
            assert_eq!(s.constraint_rows, vec![0, 1], "v = {v}");
        }
    }

    #[test]
    fn the_ordered_pivot_is_the_column_fewest_remaining_rows_hold() {
        // a reduced row with entries 1.0 (col 0, held by 5 later rows),
        // 0.5 (col 1, 1 row), 0.05 (col 2, no row) and col 3 pivoted
        let touched = [0, 1, 2, 3];
        let x = [1.0, -0.5, 0.05, 2.0];
        let pivot_of_col = [usize::MAX, usize::MAX, usize::MAX, 0];
        let remaining = [5, 1, 0, 0];
        // col 2 is below the threshold (0.1 of 1.0), col 3 is taken
        assert_eq!(
            sparsest_pivot(&touched, &x, &pivot_of_col, &remaining, (1.0, 0)),
            1
        );
        // on equal counts the larger entry wins
        let remaining = [1, 1, 0, 0];
        assert_eq!(
            sparsest_pivot(&touched, &x, &pivot_of_col, &remaining, (1.0, 0)),
            0
        );
    }

    #[test]
    fn a_chain_is_selected_with_fill_linear_in_its_length() {
        // columns a_i = i and b_i = k + i; rows i < k: 2·a_i + b_i + a_{i−1}
        // (a_i is the largest entry and the next row holds it), then the k
        // rows a_i. Pivoting on the largest entry (a_i) carries every
        // b_j, j < i, into row i: the pivot rows hold ~k²/2 entries. The
        // sparsest pivot takes b_i, which no later row holds: no fill.
        let k = 40;
        let n = 2 * k;
        let mut pattern = Vec::new();
        let mut values = Vec::new();
        for i in 0..k {
            pattern.extend([(i, i), (i, k + i)]);
            values.extend([2.0, 1.0]);
            if i > 0 {
                pattern.push((i, i - 1));
                values.push(1.0);
            }
        }
        for i in 0..k {
            pattern.push((k + i, i));
            values.push(1.0);
        }
        let (sel, fill, _) =
            select_ordered(n, (&[], &[], 0), (&pattern, &values, n), usize::MAX).expect("no limit");
        let sel = sel.expect("regular");
        assert_eq!(sel.constraint_rows, (0..n).collect::<Vec<_>>());
        assert!(fill <= 2 * n, "pivot rows hold {fill} entries");
    }

    /// `E` and `∂g/∂z` (patterns and values, in that order) of the HiC
    /// form of `models/scale/pendulum_chain.dae` with `links` links at
    /// rest, every link at 0.5 rad from the vertical: unknowns
    /// `x, y, v, w, dx, dy, λ` (`links` each); differential rows
    /// `ẋ = v`, `ẏ = w`, `m v̇ = …`, `m ẇ = …`; constraint rows the link
    /// equations `dx_k = x_k − x_{k−1}` (and of `y`), the rigid links
    /// `dx_k² + dy_k² = 1`, both repeated, and the rigid links' first and
    /// second derivatives (velocities and multipliers).
    #[allow(clippy::type_complexity)]
    fn pendulum_chain_hic(
        links: usize,
    ) -> (Vec<(usize, usize)>, Vec<f64>, Vec<(usize, usize)>, Vec<f64>) {
        let k = links;
        let [x, y, v, w, dx, dy, lam] = [0, 1, 2, 3, 4, 5, 6].map(|b| b * k);
        let (sx, sy) = (0.5f64.sin(), -0.5f64.cos());
        let mut e = (Vec::new(), Vec::new());
        for (r, col) in [x, y, v, w].iter().flat_map(|&b| b..b + k).enumerate() {
            e.0.push((r, col));
            e.1.push(1.0);
        }
        let mut g = (Vec::new(), Vec::new());
        let mut row = 0;
        let mut push = |entries: &[(usize, f64)], row: &mut usize| {
            for &(c, val) in entries {
                g.0.push((*row, c));
                g.1.push(val);
            }
            *row += 1;
        };
        for _repeat in 0..2 {
            for (p, d) in [(x, dx), (y, dy)] {
                for i in 0..k {
                    let mut entries = vec![(d + i, 1.0), (p + i, -1.0)];
                    if i > 0 {
                        entries.push((p + i - 1, 1.0));
                    }
                    push(&entries, &mut row);
                }
            }
            for i in 0..k {
                push(&[(dx + i, 2.0 * sx), (dy + i, 2.0 * sy)], &mut row);
            }
        }
        for i in 0..k {
            let mut entries = vec![(v + i, 2.0 * sx), (w + i, 2.0 * sy)];
            if i > 0 {
                entries.extend([(v + i - 1, -2.0 * sx), (w + i - 1, -2.0 * sy)]);
            }
            push(&entries, &mut row);
        }
        for i in 0..k {
            let mut entries = vec![(lam + i, 8.0), (dx + i, sx), (dy + i, sy)];
            if i > 0 {
                entries.push((lam + i - 1, -4.0));
            }
            if i + 1 < k {
                entries.push((lam + i + 1, -4.0));
            }
            push(&entries, &mut row);
        }
        (e.0, e.1, g.0, g.1)
    }

    #[test]
    fn the_pendulum_chain_is_selected_with_fill_linear_in_its_length() {
        // the link equations pivoted on the positions, in their written
        // order, carry every earlier link into each pivot row: the
        // elimination in the written order fills in as the square of the
        // chain's length ...
        let k = 300;
        let (n, n_d, n_g) = (7 * k, 4 * k, 8 * k);
        let (ep, ev, gp, gv) = pendulum_chain_hic(k);
        let (old, old_fill, _) =
            select_ordered(n, (&ep, &ev, n_d), (&gp, &gv, n_g), usize::MAX).expect("no limit");
        assert!(old_fill > k * k / 2, "written order: {old_fill} entries");
        // the first copy of the link and rigid-link rows and their
        // derivatives, not the repeats
        let kept = |k: usize| (0..3 * k).chain(6 * k..8 * k).collect::<Vec<_>>();
        assert_eq!(old.expect("regular").constraint_rows, kept(k));
        // ... and gives way to the structural selection, whose fill (the
        // blocks' LU factors) is linear
        let k = 2000;
        let (n, n_d, n_g) = (7 * k, 4 * k, 8 * k);
        let (ep, ev, gp, gv) = pendulum_chain_hic(k);
        let (sel, fill) = select_ordered_fill(n, &ep, &ev, n_d, &gp, &gv, n_g);
        let sel = sel.expect("regular");
        assert!(fill <= 20 * n, "LU factors hold {fill} entries");
        assert_eq!(sel.constraint_rows, kept(k));
        // the links hang nearer the vertical: the rigid links are solved
        // for the vertical coordinates, the horizontal positions and
        // velocities stay states (rows ẋ = v and m v̇ = …)
        let states: Vec<usize> = (0..k).chain(2 * k..3 * k).collect();
        assert_eq!(sel.diff_rows, states);
    }

    /// The transposed blocks of the dummy-derivative choice on
    /// `models/scale/pendulum_chain.dae` with `links` links, every link at
    /// 0.5 rad from the vertical, at `level` 1 or 2: a row per unknown with
    /// a derivative, in the order DD offers them (highest derivative first:
    /// `x, y, dx, dy`, then `v, w`), a column per equation differentiated at
    /// least `level` times (`ẋ_k = v_k`, `ẏ_k = w_k` at level 1 only, then
    /// the link equations of `x` and of `y` and the rigid links); the
    /// entries are those of the Σ-Jacobian 𝔍. Returns the pattern, the
    /// values and the number of columns.
    fn pendulum_chain_dd_block(
        links: usize,
        level: usize,
    ) -> (Vec<(usize, usize)>, Vec<f64>, usize) {
        let k = links;
        let derivatives = usize::from(level == 1);
        let [der_x, der_y] = [0, 1].map(|b| b * k);
        let [link_x, link_y, rigid] = [0, 1, 2].map(|b| (b + 2 * derivatives) * k);
        let (sx, sy) = (0.5f64.sin(), -0.5f64.cos());
        let mut pattern = Vec::new();
        let mut values = Vec::new();
        let mut push = |row: usize, col: usize, v: f64| {
            pattern.push((row, col));
            values.push(v);
        };
        for (b, (der, link)) in [(der_x, link_x), (der_y, link_y)].into_iter().enumerate() {
            for i in 0..k {
                // x_i: ẋ_i = v_i, d_i = x_i − x_{i−1}, d_{i+1} = x_{i+1} − x_i
                if derivatives == 1 {
                    push(b * k + i, der + i, 1.0);
                }
                push(b * k + i, link + i, -1.0);
                if i + 1 < k {
                    push(b * k + i, link + i + 1, 1.0);
                }
            }
        }
        for (b, (link, s)) in [(link_x, sx), (link_y, sy)].into_iter().enumerate() {
            for i in 0..k {
                // dx_i: its link equation and the rigid link dx² + dy² = L²
                push((2 + b) * k + i, link + i, 1.0);
                push((2 + b) * k + i, rigid + i, 2.0 * s);
            }
        }
        for (b, der) in [der_x, der_y].into_iter().enumerate() {
            for i in 0..k * derivatives {
                // v_i: in ẋ_i = v_i
                push((4 + b) * k + i, der + i, -1.0);
            }
        }
        (pattern, values, (3 + 2 * derivatives) * k)
    }

    #[test]
    fn dummy_derivatives_of_a_pendulum_chain_take_work_linear_in_its_length() {
        // level 1: the first 5k independent of the 6k rows are all
        // positions and link vectors (their second derivatives become
        // dummies), then k velocities; level 2: the first 3k, positions and
        // horizontal link vectors. The elimination in the written order
        // reduces a link vector's row through the pivot rows of the
        // positions, each reaching one link further along the chain:
        // quadratic work, where the matching and the LU are linear.
        let mut work = Vec::new();
        for level in [1, 2] {
            for k in [100, 400] {
                let m = 6 * k;
                let (pattern, values, n) = pendulum_chain_dd_block(k, level);
                let (kept, structural) = select_rows_in_order(n, &pattern, &values, m);
                let kept = kept.expect("regular");
                assert!(structural.structural);
                let none: SparseRows<'_> = (&[], &[], 0);
                let (old, _, old_ops) =
                    select_ordered(n, (&pattern, &values, m), none, usize::MAX).expect("no limit");
                assert_eq!(old.expect("regular").diff_rows, kept, "k = {k}");
                assert_eq!(kept.len(), n);
                let first = if level == 1 { 4 * k } else { 3 * k };
                assert_eq!(kept[..first], (0..first).collect::<Vec<_>>());
                work.push((level, k, structural.operations, old_ops));
            }
        }
        // (measured: 1598 and 6398 operations at level 1, 598 and 2398 at
        // level 2; the elimination 1095 and 4395, then 10⁴ and 16·10⁴)
        for &(level, k, ops, old_ops) in &work {
            assert!(ops <= 4 * 6 * k, "level {level}, k = {k}: {ops} operations");
            if level == 2 {
                assert!(old_ops >= k * k, "k = {k}: {old_ops} row operations");
            }
        }
    }

    #[test]
    fn a_numerically_singular_match_falls_back_to_the_elimination() {
        // rows x + y, y + z, x + 2y + z (their sum, structurally
        // independent) and x: the matching takes the first three, whose
        // LU is singular, so the elimination in the written order decides
        // and keeps x + y, y + z and x
        let g = [
            (0, 0),
            (0, 1),
            (1, 1),
            (1, 2),
            (2, 0),
            (2, 1),
            (2, 2),
            (3, 0),
        ];
        let gv = [1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 1.0, 1.0];
        assert!(matched::select_matched(3, (&[], &[], 0), (&g, &gv, 4)).is_none());
        let sel = select_equations_ordered(3, &[], &[], 0, &g, &gv, 4).expect("regular");
        assert_eq!(sel.constraint_rows, vec![0, 1, 3]);
        // the first independent rows in their order, the same way
        let (kept, work) = select_rows_in_order(3, &g, &gv, 4);
        assert_eq!(kept, Ok(vec![0, 1, 3]));
        assert!(!work.structural);
        assert!(work.operations > 0);
    }

    #[test]
    fn rank_deficient_system_is_reported() {
        let e = [1.0, 0.0, 0.0];
        let g = [1.0, 0.0, 0.0];
        assert_eq!(select_equations(3, &e, 1, &g, 1), Err(1));
    }
}
