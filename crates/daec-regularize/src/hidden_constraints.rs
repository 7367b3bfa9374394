//! The array of (hidden) constraints `0 = H(t, z)` (steinbrecher2016,
//! Definition 2.3, eq. (6)) extracted symbolically from the reduced
//! derivative array.
//!
//! The derivative array is processed in Pryce's stages `s = −max c, …, 0`:
//! stage `s` holds the rows `F_i^(s + c_i)` (for `c_i ≥ −s`) and determines
//! the quantities `z_j^(s + d_j)` (for `d_j ≥ −s`). Of those, the ones of
//! order ≥ 1 are derivatives; they are eliminated from the stage's rows by
//! solving rows that contain exactly one of them, linearly and with a
//! non-zero coefficient (every row of the papers' examples is of this kind:
//! the models are quasi-linear). What is left of the stage's rows after the
//! elimination are its constraints, `m_c = n + Σc − Σd` of them in all. The
//! level of a constraint is the largest number of differentiations of a
//! row combined into it, as in Example 2.7 ("(11a) is called hidden
//! constraint on level 1 since this constraint is obtained after
//! differentiation of (certain) model equations at most once").
//!
//! The solved derivatives `z_j^(l) = Ω(t, z)` (Remark 2.4, eq. (8)) are
//! kept: they give consistent derivatives for the success check and the
//! data of the ADA/StE formulations.

use crate::signature::DerivativeArray;
use daec_expr::{Env, ExprId, ExprPool, Leaf, Node, ParamId};
use daec_structure::Offsets;
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One constraint of `0 = H(t, z)`.
#[derive(Clone, Debug, PartialEq)]
pub struct HiddenConstraint {
    /// Constraint level (0 = stated explicitly, ≥ 1 hidden).
    pub level: u32,
    /// Pryce stage it was extracted at (≤ 0).
    pub stage: i32,
    /// The residual, a function of `t`, `z` and parameters only.
    pub expr: ExprId,
    /// The derivative-array row `(equation, k)` it was derived from.
    pub source: (usize, u32),
}

/// The result of the extraction.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConstraintArray {
    /// The constraints, ordered by level, then by source row.
    pub constraints: Vec<HiddenConstraint>,
    /// Solved derivatives `z_j^(l) = Ω(t, z)` keyed by `(j, l)`.
    pub derivatives: FxHashMap<(u32, u32), ExprId>,
    /// Derivative-array rows `(equation, k)` that could not be reduced
    /// symbolically (they stay in derivative-array form).
    pub unresolved_rows: Vec<(usize, u32)>,
    /// Derivatives `(j, l)` that could not be solved for symbolically.
    pub unresolved_derivatives: Vec<(u32, u32)>,
}

impl ConstraintArray {
    /// Whether every derivative was eliminated.
    pub fn is_complete(&self) -> bool {
        self.unresolved_rows.is_empty() && self.unresolved_derivatives.is_empty()
    }

    /// The largest level (the maximal constraint level ν_c).
    pub fn max_level(&self) -> Option<u32> {
        self.constraints.iter().map(|c| c.level).max()
    }

    /// Replaces every solved derivative leaf of `e` by its expression in
    /// `(t, z)`.
    pub fn substitute_derivatives(&self, pool: &mut ExprPool, e: ExprId) -> ExprId {
        substitute(pool, e, &self.derivatives)
    }
}

fn substitute(pool: &mut ExprPool, e: ExprId, map: &FxHashMap<(u32, u32), ExprId>) -> ExprId {
    if map.is_empty() {
        return e;
    }
    // Look leaves up by id: build the id map lazily from the pool.
    let lookup: FxHashMap<ExprId, ExprId> = pool
        .leaves(e)
        .into_iter()
        .filter_map(|l| match pool.as_leaf(l) {
            Some(Leaf::Var { unknown, order }) if order >= 1 => {
                map.get(&(unknown, order)).map(|&v| (l, v))
            }
            _ => None,
        })
        .collect();
    if lookup.is_empty() {
        return e;
    }
    pool.substitute(e, &|l| lookup.get(&l).copied())
}

/// Values used to decide whether a non-constant pivot is non-zero: the
/// start values, zero derivatives, the parameter values and `t0`.
pub struct ReferencePoint<'a> {
    /// Start value of each unknown.
    pub z: &'a [f64],
    /// Parameter values.
    pub params: &'a [f64],
    /// Time.
    pub t: f64,
}

impl Env for ReferencePoint<'_> {
    fn var(&self, unknown: u32, order: u32) -> f64 {
        if order == 0 {
            self.z.get(unknown as usize).copied().unwrap_or(0.0)
        } else {
            0.0
        }
    }
    fn param(&self, p: ParamId) -> f64 {
        self.params.get(p.0 as usize).copied().unwrap_or(0.0)
    }
    fn time(&self) -> f64 {
        self.t
    }
}

/// A map keyed by leaves of the pool (few keys among many nodes, looked up
/// for every leaf of every row): the place of each key in `values` by
/// the key's id, so a lookup is an index, with no hashing.
struct LeafMap<T> {
    /// `place[id]`: the index in `values` of the key `id`, `u32::MAX`
    /// where `id` is not a key (ids beyond its end are not keys).
    place: Vec<u32>,
    values: Vec<T>,
}

impl<T> Default for LeafMap<T> {
    fn default() -> Self {
        LeafMap {
            place: Vec::new(),
            values: Vec::new(),
        }
    }
}

impl<T> LeafMap<T> {
    /// The place of the key `id` in `values`.
    fn place(&self, id: ExprId) -> Option<usize> {
        match self.place.get(id.index()) {
            Some(&p) if p != u32::MAX => Some(p as usize),
            _ => None,
        }
    }

    fn get(&self, id: ExprId) -> Option<&T> {
        self.place(id).map(|p| &self.values[p])
    }

    /// Sets the value of `id` (a new key goes last).
    fn insert(&mut self, id: ExprId, value: T) {
        match self.place(id) {
            Some(p) => self.values[p] = value,
            None => {
                if self.place.len() <= id.index() {
                    self.place.resize(id.index() + 1, u32::MAX);
                }
                self.place[id.index()] = self.values.len() as u32;
                self.values.push(value);
            }
        }
    }

    fn len(&self) -> usize {
        self.values.len()
    }

    fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// A pivot: `(row, derivative leaf, coefficient, rest)` with
/// `row = coefficient · derivative + rest`.
type Pivot = (usize, ExprId, ExprId, ExprId);

struct Row {
    eq: usize,
    k: u32,
    expr: ExprId,
    level: u32,
    /// Unsolved derivative leaves of the current stage in `expr`.
    pending: Vec<ExprId>,
    /// Stage leaves solved since `expr` was last read, whose values it
    /// still holds as leaves ([`Substitution::Batched`]).
    unsubstituted: Vec<ExprId>,
    active: bool,
}

/// `(coef, rest)` when `expr = coef·delta + rest` with `coef` non-zero
/// (a non-zero constant, or non-zero at the reference point).
fn usable_pivot(
    pool: &mut ExprPool,
    expr: ExprId,
    delta: ExprId,
    reference: &ReferencePoint<'_>,
) -> Option<(ExprId, ExprId)> {
    let (coef, rest) = pool.linear_in_leaf(expr, delta)?;
    let magnitude = pivot_magnitude(pool, coef, reference)?;
    (magnitude > 0.0).then_some((coef, rest))
}

/// The singletons of the elimination of [`hidden_constraints`], the
/// smallest `(tier, differentiation count, magnitude rank, equation,
/// row)` first. A stage's rows are in increasing equation order, so the
/// row orders as the equation does, and an entry is kept as one 16-byte
/// key (tier, count, rank, row, from the highest bits down) rather than a
/// 32-byte tuple: half the memory the heap's sifts go through (a stage of
/// the pendulum chain with 10⁵ unknowns holds about 10⁵ entries).
struct SingletonHeap(BinaryHeap<Reverse<u128>>);

/// Bits of the row in a [`SingletonHeap`] key (a stage of more than 2³⁰
/// rows, at more than 80 bytes a row, is beyond any memory).
const ROW_BITS: u32 = 30;

impl SingletonHeap {
    /// An empty heap with room for `capacity` entries.
    fn with_capacity(capacity: usize) -> Self {
        SingletonHeap(BinaryHeap::with_capacity(capacity))
    }

    /// Adds the entry `(tier, k, rank, row)`.
    fn push(&mut self, tier: u8, k: u32, rank: u64, row: usize) {
        let key = (u128::from(tier) << (ROW_BITS + 96))
            | (u128::from(k) << (ROW_BITS + 64))
            | (u128::from(rank) << ROW_BITS)
            | (row as u128 & ((1 << ROW_BITS) - 1));
        self.0.push(Reverse(key));
    }

    /// Removes the smallest entry: `(tier, k, rank, row)`.
    fn pop(&mut self) -> Option<(u8, u32, u64, usize)> {
        let Reverse(key) = self.0.pop()?;
        Some((
            (key >> (ROW_BITS + 96)) as u8,
            (key >> (ROW_BITS + 64)) as u32,
            (key >> ROW_BITS) as u64,
            (key & ((1 << ROW_BITS) - 1)) as usize,
        ))
    }
}

/// Singleton tier ([`hidden_constraints`]): a row whose one pending
/// derivative has a coefficient of constants and parameters only (or
/// not yet examined).
const CONSTANT: u8 = 0;
/// Singleton tier: a coefficient that depends on the unknowns or `time`. Dividing by
/// it puts the coefficient into the denominators of every row the value
/// is substituted into, so the constraints derived from them are singular
/// where it vanishes, although the DAE is regular there. On a planar
/// pendulum built from components (`models/planar/pendulum.mo`) the rod's
/// frame equations `r0 = R(φ)·r` give, differentiated, singletons in `φ̇`
/// with coefficients `sin φ` and `cos φ`: solving the `y` row for `φ̇`
/// (`cos φ ≠ 0` at the start, `φ = 0`) made the other hidden constraints
/// divide by `cos φ`, and the run lost rank as the rod passed the vertical.
/// The joint chain `φ̇_b = φ̇_rod = ω` of the same stage gives `φ̇` with
/// constant coefficients, so constant pivots go first and the frame rows
/// stay constraints without a denominator.
const STATE_DEPENDENT: u8 = 1;
/// The heap rank of a state-dependent singleton pivot `coef`: the larger
/// its magnitude at the reference, the earlier it is taken. When two rows
/// are singletons in the same derivative, the other stays a constraint
/// and `coef` lands in its denominator. A slider crank's rod frame rows
/// `r0 = R(β)·r` give `β̇` with `−L·sin β` (x row) and `L·cos β` (y row):
/// taking the x row, first by equation order, made the hidden constraints
/// divide by `sin β`, which vanishes at the dead centre the rod passes
/// each half turn (`|β| ≤ asin(R/L)`, so `cos β` never does); the run lost
/// rank there (`models/planar/slider_crank.mo`, t = 0.314).
fn magnitude_rank(pool: &ExprPool, coef: ExprId, reference: &ReferencePoint<'_>) -> u64 {
    let m = pivot_magnitude(pool, coef, reference).unwrap_or(0.0);
    // a non-negative f64's bits grow with its value
    u64::MAX - m.to_bits()
}

/// Whether `coef` holds an unknown or `time` (a coefficient of constants
/// and parameters only is constant along the solution).
fn depends_on_state(pool: &ExprPool, coef: ExprId) -> bool {
    // (a constant or a leaf answers without a walk: most pivots of a
    // large model are one of them)
    match pool.node(coef) {
        Node::Const(_) => false,
        Node::Leaf(l) => !matches!(l, Leaf::Param(_)),
        _ => depends_on_state_walk(pool, coef),
    }
}

/// [`depends_on_state`] by a walk over the leaves of `coef`.
fn depends_on_state_walk(pool: &ExprPool, coef: ExprId) -> bool {
    pool.leaves(coef)
        .into_iter()
        .any(|l| !matches!(pool.as_leaf(l), Some(Leaf::Param(_)) | None))
}

/// Singleton tier: a coefficient that vanishes in some branch of an `if`
/// ([`vanishes_in_some_branch`]).
const DEFERRED: u8 = 2;

/// Relative size below which a coefficient's value at the reference point
/// counts as zero: the share of the scale it was computed at
/// ([`ExprPool::eval_with_scale`]) that is left after cancellation. The
/// test is relative so that coefficients that are small because of the
/// model's units (capacitances of 1e-13 F in the charge pump of the IVP
/// test set) are pivots; a value that is zero up to rounding is not.
const CANCELLATION: f64 = 1e-12;

/// How good a pivot coefficient is: constants rank above state-dependent
/// ones (offset by 1e300), zero or undefined ones are not pivots.
fn pivot_magnitude(pool: &ExprPool, coef: ExprId, reference: &ReferencePoint<'_>) -> Option<f64> {
    match pool.as_constant(coef) {
        Some(c) if c != 0.0 && c.is_finite() => Some(1e300 + c.abs().min(1e300)),
        Some(_) => None,
        None => {
            let (v, scale) = pool.eval_with_scale(coef, reference);
            let tiny = CANCELLATION * scale;
            let nonzero = v.abs() > tiny || !tiny.is_finite();
            (v.is_finite() && v != 0.0 && nonzero).then_some(v.abs())
        }
    }
}

/// Whether `coef` is the constant 0 in some branch of its `if`
/// expressions: a branch that is the constant 0, an `if` with such a
/// branch, a product with such a factor, a sum of such terms, a positive
/// power of such a base. A pivot with this property may be non-zero at the
/// reference point and vanish identically once the state takes the other
/// branch (the charge functions of a MOS transistor are constant in `V_GD`
/// below the threshold voltage), so such pivots are taken after the others
/// (a singleton row's after the other singletons, in Gaussian elimination
/// after the rows whose best coefficient vanishes in no branch).
fn vanishes_in_some_branch(pool: &ExprPool, coef: ExprId) -> bool {
    // (a constant or a leaf answers without a walk)
    match pool.node(coef) {
        Node::Const(c) => c == 0.0,
        Node::Leaf(_) => false,
        _ => vanishes_walk(pool, coef),
    }
}

/// [`vanishes_in_some_branch`] by a walk over the nodes of `coef`.
fn vanishes_walk(pool: &ExprPool, coef: ExprId) -> bool {
    // `vanishes[k]` for `order[k]`; the order is sorted by id, so a
    // child's place is found by binary search (no hashing)
    let order = pool.topo_order(&[coef]);
    let mut vanishes: Vec<bool> = Vec::with_capacity(order.len());
    for &id in &order {
        let get = |c: &ExprId| {
            order
                .binary_search(c)
                .is_ok_and(|k| vanishes.get(k).copied().unwrap_or(false))
        };
        let v = match pool.node(id) {
            Node::Const(c) => c == 0.0,
            Node::Select(_, a, b) => get(&a) || get(&b),
            Node::Mul(fs) => fs.iter().any(get),
            Node::Add(ts) => ts.iter().all(get),
            Node::Powi(a, n) => n > 0 && get(&a),
            _ => false,
        };
        vanishes.push(v);
    }
    vanishes.last().copied().unwrap_or(false)
}

/// The best pivot among rows with several pending derivatives: the row
/// with the fewest, and in it the derivative with the best coefficient.
/// Rows whose best coefficient vanishes in some branch of an `if`
/// ([`vanishes_in_some_branch`]) come after all others; the flag says
/// whether the chosen pivot is of that kind.
fn general_pivot(
    pool: &mut ExprPool,
    rows: &[Row],
    reference: &ReferencePoint<'_>,
) -> Option<(Pivot, bool)> {
    let mut candidates: Vec<usize> = (0..rows.len())
        .filter(|&r| rows[r].active && !rows[r].pending.is_empty())
        .collect();
    candidates.sort_by_key(|&r| (rows[r].pending.len(), rows[r].k, rows[r].eq));
    let mut fallback: Option<(usize, ExprId)> = None;
    let mut chosen: Option<(usize, ExprId)> = None;
    for r in candidates {
        let Some((coefs, _)) = pool.linear_in(rows[r].expr, &rows[r].pending) else {
            continue;
        };
        // The best coefficient, and the best that vanishes in no branch.
        let mut best: Option<(f64, usize)> = None;
        let mut best_any: Option<(f64, usize)> = None;
        for (k, &c) in coefs.iter().enumerate() {
            if let Some(m) = pivot_magnitude(pool, c, reference) {
                if best_any.is_none_or(|(bm, _)| m > bm) {
                    best_any = Some((m, k));
                }
                if best.is_none_or(|(bm, _)| m > bm) && !vanishes_in_some_branch(pool, c) {
                    best = Some((m, k));
                }
            }
        }
        if let Some((_, k)) = best {
            chosen = Some((r, rows[r].pending[k]));
            break;
        }
        if let (None, Some((_, k))) = (fallback, best_any) {
            fallback = Some((r, rows[r].pending[k]));
        }
    }
    let vanishing = chosen.is_none();
    let (r, delta) = chosen.or(fallback)?;
    let (coef, rest) = pool.linear_in_leaf(rows[r].expr, delta)?;
    Some(((r, delta, coef, rest), vanishing))
}

/// Extracts the array of (hidden) constraints from the reduced derivative
/// array.
///
/// `orders[j]` is the order `p_j = max_i σ_ij` of unknown `j` in the DAE:
/// `z_j, …, z_j^(p_j − 1)` are state (they stay in the constraints, as in
/// Wunderlich's second-order DAEs where the velocity constraint keeps `y'`),
/// the derivatives of order `≥ max(p_j, 1)` are eliminated. For a
/// first-order DAE this is exactly Definition 2.3: `H = H(t, z)`.
pub fn hidden_constraints(
    pool: &mut ExprPool,
    array: &DerivativeArray,
    offsets: &Offsets,
    orders: &[u32],
    reference: &ReferencePoint<'_>,
) -> ConstraintArray {
    extract(
        pool,
        array,
        offsets,
        orders,
        reference,
        Substitution::Batched,
    )
}

/// When the value of a solved derivative is substituted into the other
/// rows of its stage that hold it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Substitution {
    /// Each row takes the values of all the derivatives solved since it
    /// was last read in one substitution (one walk over the row), when it
    /// is read next: as a pivot row, before Gaussian elimination, or as a
    /// constraint at the end of the stage. In the pendulum chain's last
    /// stage a link-vector row `ẍ_k − ẍ_{k−1} = d̈x_k` takes both
    /// accelerations in one walk, and the link's constraint both `d̈x_k`
    /// and `d̈y_k`.
    Batched,
    /// Each value into every row that holds its derivative as soon as it
    /// is solved (the tests' reference for [`Substitution::Batched`]).
    #[cfg(test)]
    PerLeaf,
}

/// The state of one stage's elimination: its derivative leaves, the
/// values solved so far and what each solved row brought.
struct Stage {
    /// The stage's derivative unknowns: their keys `(j, l)`, by leaf.
    leaf: LeafMap<(u32, u32)>,
    /// The value of each solved stage leaf, by its place in `leaf`.
    values: Vec<Option<ExprId>>,
    /// The other pending leaves of the row each stage leaf was solved
    /// from (the only stage leaves its value holds), by place in `leaf`.
    brought: Vec<Vec<ExprId>>,
}

impl Stage {
    /// The value of `l` if it is a solved leaf of the stage.
    fn value(&self, l: ExprId) -> Option<ExprId> {
        self.leaf.place(l).and_then(|p| self.values[p])
    }
}

/// Substitutes the values of the stage's solved leaves into `row` (those
/// of its `unsubstituted` list: the row holds no other solved leaf). A value
/// holds no leaf solved before it (its row was read, so substituted, when
/// it was solved), but may hold leaves its row brought that were solved
/// later, and so are in the list too: the substitution is repeated for
/// those until none is left. Each round's leaves were solved after the
/// previous round's, so the rounds end, and the result is the expression
/// the substitutions leaf by leaf, in the order solved, give.
fn flush(pool: &mut ExprPool, row: &mut Row, stage: &Stage) {
    while !row.unsubstituted.is_empty() {
        row.expr = pool.substitute(row.expr, &|l| stage.value(l));
        let mut again: Vec<ExprId> = Vec::new();
        for d in std::mem::take(&mut row.unsubstituted) {
            if let Some(p) = stage.leaf.place(d) {
                again.extend(
                    stage.brought[p]
                        .iter()
                        .copied()
                        .filter(|&b| stage.value(b).is_some()),
                );
            }
        }
        again.sort_unstable();
        again.dedup();
        row.unsubstituted = again;
    }
}

/// [`flush`] on every active row with pending derivatives.
fn flush_pending(pool: &mut ExprPool, rows: &mut [Row], stage: &Stage) {
    for row in rows.iter_mut() {
        if row.active && !row.pending.is_empty() {
            flush(pool, row, stage);
        }
    }
}

/// The rows of stage `s`, with earlier stages' derivatives substituted (in
/// the rows that hold one: in the pendulum chain's last stage, one row in
/// seven), and their pending derivatives; `rows_of[p]` lists the rows
/// holding the stage leaf of place `p`.
fn stage_rows(
    pool: &mut ExprPool,
    array: &DerivativeArray,
    offsets: &Offsets,
    s: i32,
    stage_leaf: &LeafMap<(u32, u32)>,
    by_leaf: &LeafMap<ExprId>,
    rows_of: &mut [Vec<usize>],
) -> Vec<Row> {
    // (sized to the stage's rows: no copies of the rows as it grows)
    let count = offsets.c.iter().filter(|&&ci| s + ci as i32 >= 0).count();
    let mut rows: Vec<Row> = Vec::with_capacity(count);
    for (i, &ci) in offsets.c.iter().enumerate() {
        let k = s + ci as i32;
        if k < 0 {
            continue;
        }
        let row = array.row(i)[k as usize];
        // (a stage with no derivative to eliminate after stages that
        // solved none — the first stage of an index-3 mechanical
        // model, its position constraints — keeps its rows as they
        // are: no walk over their leaves)
        let mut leaves = if stage_leaf.is_empty() && by_leaf.is_empty() {
            Vec::new()
        } else {
            pool.leaves(row)
        };
        let mut expr = row;
        if leaves.iter().any(|&l| by_leaf.get(l).is_some()) {
            expr = pool.substitute(row, &|l| by_leaf.get(l).copied());
            leaves = pool.leaves(expr);
        }
        // (a vector of its own: `leaves` has room for the whole row)
        let pending: Vec<ExprId> = leaves
            .iter()
            .copied()
            .filter(|&l| stage_leaf.get(l).is_some())
            .collect();
        for &l in &pending {
            if let Some(p) = stage_leaf.place(l) {
                rows_of[p].push(rows.len());
            }
        }
        rows.push(Row {
            eq: i,
            k: k as u32,
            expr,
            level: k as u32,
            pending,
            unsubstituted: Vec::new(),
            active: true,
        });
    }
    rows
}

/// [`hidden_constraints`] with the substitutions done as `mode` says.
fn extract(
    pool: &mut ExprPool,
    array: &DerivativeArray,
    offsets: &Offsets,
    orders: &[u32],
    reference: &ReferencePoint<'_>,
    mode: Substitution,
) -> ConstraintArray {
    let mut out = ConstraintArray::default();
    // The solved derivatives keyed by their leaf (for substitution).
    let mut by_leaf: LeafMap<ExprId> = LeafMap::default();
    let max_c = offsets.c.iter().copied().max().unwrap_or(0) as i32;
    for s in -max_c..=0 {
        // The stage's derivative unknowns.
        // (their keys `(j, l)`, by leaf)
        let mut stage_leaf: LeafMap<(u32, u32)> = LeafMap::default();
        for (j, &dj) in offsets.d.iter().enumerate() {
            let l = s + dj as i32;
            if l >= 1 && l >= orders.get(j).copied().unwrap_or(1) as i32 {
                let leaf = pool.var(j as u32, l as u32);
                stage_leaf.insert(leaf, (j as u32, l as u32));
            }
        }
        // the rows holding each stage leaf, by the leaf's place in `stage_leaf`
        let mut rows_of: Vec<Vec<usize>> = vec![Vec::new(); stage_leaf.len()];
        let mut rows = stage_rows(pool, array, offsets, s, &stage_leaf, &by_leaf, &mut rows_of);
        let places = stage_leaf.len();
        let mut stage = Stage {
            leaf: stage_leaf,
            values: vec![None; places],
            brought: vec![Vec::new(); places],
        };
        // The solved derivatives in the order solved.
        let solved_order = eliminate(pool, &mut rows, &mut rows_of, &mut stage, reference, mode);
        flush_stage_end(pool, &mut rows, &stage);
        back_substitute(&stage, &solved_order, pool, &mut out, &mut by_leaf);
        for row in &rows {
            if !row.active {
                continue;
            }
            if row.pending.is_empty() {
                out.constraints.push(HiddenConstraint {
                    level: row.level,
                    stage: s,
                    expr: row.expr,
                    source: (row.eq, row.k),
                });
            } else {
                out.unresolved_rows.push((row.eq, row.k));
            }
        }
        let mut unsolved: Vec<(u32, u32)> = stage
            .leaf
            .values
            .iter()
            .filter(|key| !out.derivatives.contains_key(key))
            .copied()
            .collect();
        unsolved.sort_unstable();
        out.unresolved_derivatives.extend(unsolved);
    }
    out.constraints
        .sort_by_key(|c| (c.level, c.source.0, c.source.1));
    out
}

/// The end of a stage's elimination: every remaining row takes the values
/// solved since it was last read, and leaves that cancelled leave the
/// pending lists.
fn flush_stage_end(pool: &mut ExprPool, rows: &mut [Row], stage: &Stage) {
    for row in rows.iter_mut() {
        if row.active {
            flush(pool, row, stage);
        }
        if row.active && !row.pending.is_empty() {
            let present = pool.leaves(row.expr);
            row.pending.retain(|l| present.binary_search(l).is_ok());
        }
    }
}

/// Back substitution: earlier pivots may refer to later ones. Records the
/// final values in `out.derivatives` and `by_leaf`.
fn back_substitute(
    stage: &Stage,
    solved_order: &[ExprId],
    pool: &mut ExprPool,
    out: &mut ConstraintArray,
    by_leaf: &mut LeafMap<ExprId>,
) {
    // (by place in `stage.leaf`, as `stage.values`)
    let mut final_values: Vec<Option<ExprId>> = vec![None; stage.leaf.len()];
    let final_of = |final_values: &[Option<ExprId>], l: ExprId| {
        stage.leaf.place(l).and_then(|p| final_values[p])
    };
    for &delta in solved_order.iter().rev() {
        let Some(p) = stage.leaf.place(delta) else {
            continue;
        };
        let Some(v) = stage.values[p] else {
            continue;
        };
        // A row's pending list holds every stage leaf of its expression,
        // so the value holds no solved leaf but those of `brought`:
        // without one, the substitution would leave it as it is.
        let v = if stage.brought[p]
            .iter()
            .any(|&l| final_of(&final_values, l).is_some())
        {
            pool.substitute(v, &|l| final_of(&final_values, l))
        } else {
            v
        };
        final_values[p] = Some(v);
        if let Some(&key) = stage.leaf.get(delta) {
            out.derivatives.insert(key, v);
        }
        by_leaf.insert(delta, v);
    }
}

/// The elimination of one stage: singleton elimination, lowest
/// differentiation count first; when no singleton is left, Gaussian
/// elimination on the rest (pivot: a constant or numerically largest
/// coefficient at the reference); in both, coefficients that vanish in
/// some branch of an `if` are taken last. Returns the solved leaves in
/// the order solved.
fn eliminate(
    pool: &mut ExprPool,
    rows: &mut [Row],
    rows_of: &mut [Vec<usize>],
    stage: &mut Stage,
    reference: &ReferencePoint<'_>,
    mode: Substitution,
) -> Vec<ExprId> {
    // Heap entries `(tier, k, rank, eq, row)`: a singleton whose
    // coefficient depends on the state is put back in tier
    // `STATE_DEPENDENT`, behind the singletons with constant
    // coefficients, ranked by its coefficient's magnitude at the
    // reference ([`magnitude_rank`]), and one whose coefficient
    // vanishes in some branch of an `if` in tier `DEFERRED`, behind
    // all other singletons.
    let mut heap = SingletonHeap::with_capacity(rows.len());
    for (idx, r) in rows.iter().enumerate() {
        if r.pending.len() == 1 {
            heap.push(CONSTANT, r.k, 0, idx);
        }
    }
    let mut solved_order: Vec<ExprId> = Vec::new();
    loop {
        let pivot = match heap.pop() {
            Some((tier, k, rank, idx)) => {
                let deferred = tier == DEFERRED;
                if !rows[idx].active || rows[idx].pending.len() != 1 {
                    continue;
                }
                let delta = rows[idx].pending[0];
                if deferred {
                    flush_pending(pool, rows, stage);
                }
                if deferred && let Some((pivot, false)) = general_pivot(pool, rows, reference) {
                    // A row with a pivot that vanishes in no branch
                    // goes first; the deferred singleton waits.
                    heap.push(DEFERRED, k, rank, idx);
                    Some(pivot)
                } else {
                    flush(pool, &mut rows[idx], stage);
                    match usable_pivot(pool, rows[idx].expr, delta, reference) {
                        Some((coef, _)) if !deferred && vanishes_in_some_branch(pool, coef) => {
                            heap.push(DEFERRED, k, 0, idx);
                            continue;
                        }
                        Some((coef, _)) if tier == CONSTANT && depends_on_state(pool, coef) => {
                            let rank = magnitude_rank(pool, coef, reference);
                            heap.push(STATE_DEPENDENT, k, rank, idx);
                            continue;
                        }
                        Some((coef, rest)) => Some((idx, delta, coef, rest)),
                        None => continue,
                    }
                }
            }
            None => {
                // Before Gaussian elimination: leaves that cancelled in
                // substitutions leave the pending lists (checked lazily
                // here rather than after every substitution).
                flush_pending(pool, rows, stage);
                let mut found_singleton = false;
                for (r, row) in rows.iter_mut().enumerate() {
                    if row.active && row.pending.len() > 1 {
                        let present = pool.leaves(row.expr);
                        let before = row.pending.len();
                        row.pending.retain(|l| present.binary_search(l).is_ok());
                        if row.pending.len() < before && row.pending.len() <= 1 {
                            found_singleton |= row.pending.len() == 1;
                            heap.push(CONSTANT, row.k, 0, r);
                        }
                    }
                }
                if found_singleton {
                    continue;
                }
                general_pivot(pool, rows, reference).map(|(pivot, _)| pivot)
            }
        };
        let Some((idx, delta, coef, rest)) = pivot else {
            break;
        };
        // δ = −rest / coef (rest may hold other pending leaves).
        let num = pool.neg(rest);
        let value = pool.div(num, coef);
        let Some(place) = stage.leaf.place(delta) else {
            break;
        };
        stage.values[place] = Some(value);
        rows[idx].active = false;
        let level = rows[idx].level;
        let brought: Vec<ExprId> = rows[idx]
            .pending
            .iter()
            .copied()
            .filter(|&l| l != delta)
            .collect();
        stage.brought[place] = brought.clone();
        for r in std::mem::take(&mut rows_of[place]) {
            if r == idx || !rows[r].active {
                continue;
            }
            rows[r].unsubstituted.push(delta);
            rows[r].level = rows[r].level.max(level);
            rows[r].pending.retain(|&l| l != delta);
            for &b in &brought {
                if !rows[r].pending.contains(&b) {
                    rows[r].pending.push(b);
                    if let Some(p) = stage.leaf.place(b) {
                        rows_of[p].push(r);
                    }
                }
            }
            if mode != Substitution::Batched {
                flush(pool, &mut rows[r], stage);
            }
            if rows[r].pending.len() == 1 {
                heap.push(CONSTANT, rows[r].k, 0, r);
            }
        }
        solved_order.push(delta);
    }
    solved_order
}

#[cfg(test)]
mod tests {
    use super::*;
    use daec_expr::CmpOp;

    /// A pseudo-random point: every leaf (unknowns and derivatives of any
    /// order, parameters, time) a value in [0.5, 1.5) from `seed`.
    struct RandomPoint(u64);

    impl RandomPoint {
        fn value(&self, a: u64, b: u64) -> f64 {
            let mut h =
                self.0 ^ a.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ b.wrapping_mul(0xc2b2_ae3d);
            h ^= h >> 33;
            h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
            h ^= h >> 33;
            0.5 + (h >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    impl Env for RandomPoint {
        fn var(&self, unknown: u32, order: u32) -> f64 {
            self.value(unknown as u64 + 1, order as u64 + 1)
        }
        fn param(&self, p: ParamId) -> f64 {
            self.value(p.0 as u64 + 1, 1000)
        }
        fn time(&self) -> f64 {
            self.value(0, 2000)
        }
    }

    /// `e` as text with the operands of every sum and product sorted: equal
    /// for two expressions that differ only in the order of their terms
    /// and factors.
    fn shape(pool: &ExprPool, e: ExprId) -> String {
        let order = pool.topo_order(&[e]);
        let mut text: FxHashMap<ExprId, String> = FxHashMap::default();
        for id in order {
            let node = pool.node(id);
            let kids = |sorted: bool| {
                let mut v: Vec<&str> = node.children().map(|c| text[&c].as_str()).collect();
                if sorted {
                    v.sort_unstable();
                }
                v.join(" ")
            };
            let s = match node {
                Node::Const(c) => format!("{c:e}"),
                Node::Leaf(l) => format!("{l:?}"),
                Node::Add(_) => format!("(+ {})", kids(true)),
                Node::Mul(_) => format!("(* {})", kids(true)),
                _ => {
                    // the node's kind and data, its children by shape
                    let mut s = format!("{node:?}");
                    for c in node.children() {
                        s = s.replace(&format!("{c:?}"), &text[&c]);
                    }
                    s
                }
            };
            text.insert(id, s);
        }
        text.remove(&e).unwrap_or_default()
    }

    /// Whether `a` and `b` of `pa` and `pb` have the same shape and value
    /// at three random points (to a relative 1e-12: the order of the
    /// operations differs).
    fn same(pa: &ExprPool, a: ExprId, pb: &ExprPool, b: ExprId) -> Result<(), String> {
        if shape(pa, a) != shape(pb, b) {
            return Err(format!("{} vs {}", shape(pa, a), shape(pb, b)));
        }
        for seed in 1..=3 {
            let point = RandomPoint(seed);
            let (x, y) = (pa.eval(a, &point), pb.eval(b, &point));
            let scale = 1.0 + x.abs().max(y.abs());
            if !((x - y).abs() <= 1e-12 * scale || x.to_bits() == y.to_bits()) {
                return Err(format!("{x} vs {y} at seed {seed}"));
            }
        }
        Ok(())
    }

    /// The hidden constraints of `text` (with the parameter `overrides`)
    /// extracted with the substitutions leaf by leaf and batched; asserts
    /// they agree and returns the number of constraints and of solved
    /// derivatives and how many expressions are the same node.
    fn compare_modes(text: &str, overrides: &[(&str, f64)]) -> (usize, usize, usize) {
        try_compare_modes(text, overrides).expect("a model with a regular Σ")
    }

    /// [`compare_modes`]; `None` for a model that does not lower or whose
    /// Σ is singular.
    fn try_compare_modes(text: &str, overrides: &[(&str, f64)]) -> Option<(usize, usize, usize)> {
        let mut map = daec_diag::SourceMap::new();
        let file = map.add("m.dae", text.to_string());
        let parsed = daec_syntax::parse(file, map.source(file));
        let options = daec_model::LowerOptions {
            overrides: overrides.iter().map(|&(k, v)| (k.to_string(), v)).collect(),
            ..daec_model::LowerOptions::default()
        };
        let (dae, _) = daec_model::lower(parsed.model.as_ref()?, &options);
        let mut dae = dae?;
        let residuals: Vec<ExprId> = dae.equations.iter().map(|e| e.residual).collect();
        let sigma = crate::signature::sigma_matrix(&dae.pool, &residuals, dae.unknowns.len());
        let sa = daec_structure::analyze(&sigma).ok()?;
        let orders = sigma.column_orders();
        let da = DerivativeArray::new(&mut dae.pool, &residuals, &sa.offsets.c);
        let start = dae.start_point();
        let params = dae.parameter_values();
        let reference = ReferencePoint {
            z: &start,
            params: &params,
            t: 0.0,
        };
        let mut per_leaf_pool = dae.pool.clone();
        let per_leaf = extract(
            &mut per_leaf_pool,
            &da,
            &sa.offsets,
            &orders,
            &reference,
            Substitution::PerLeaf,
        );
        let mut batched_pool = dae.pool;
        let batched = extract(
            &mut batched_pool,
            &da,
            &sa.offsets,
            &orders,
            &reference,
            Substitution::Batched,
        );
        assert_eq!(per_leaf.unresolved_rows, batched.unresolved_rows);
        assert_eq!(
            per_leaf.unresolved_derivatives,
            batched.unresolved_derivatives
        );
        assert_eq!(per_leaf.constraints.len(), batched.constraints.len());
        let mut identical = 0;
        for (a, b) in per_leaf.constraints.iter().zip(&batched.constraints) {
            assert_eq!((a.level, a.stage, a.source), (b.level, b.stage, b.source));
            if let Err(why) = same(&per_leaf_pool, a.expr, &batched_pool, b.expr) {
                panic!("constraint from {:?}: {why}", a.source);
            }
            identical += usize::from(a.expr == b.expr);
        }
        assert_eq!(per_leaf.derivatives.len(), batched.derivatives.len());
        for (key, &a) in &per_leaf.derivatives {
            let b = batched.derivatives[key];
            if let Err(why) = same(&per_leaf_pool, a, &batched_pool, b) {
                panic!("derivative {key:?}: {why}");
            }
            identical += usize::from(a == b);
        }
        Some((
            batched.constraints.len(),
            batched.derivatives.len(),
            identical,
        ))
    }

    #[test]
    fn batched_substitution_gives_the_per_leaf_expressions_on_a_chain() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../models/scale/pendulum_chain.dae"
        );
        let text = std::fs::read_to_string(path).expect("the pendulum chain");
        let (constraints, derivatives, _) = compare_modes(&text, &[("N", 7.0)]);
        // m_c = n + Σc − Σd = 49 + 56 − 70 (links of 7 unknowns: c = 1, 1,
        // 2, 2, 0, 0, 2 and d = 2, 2, 1, 1, 2, 2, 0)
        assert_eq!(constraints, 35);
        // ẋ, ẏ, ḋx, ḋy, ẍ, ÿ, d̈x, d̈y, v̇, ẇ of every link
        assert_eq!(derivatives, 70);
    }

    /// A closed loop of links whose coefficients differ from link to link:
    /// no row of the last stage is a singleton, so the derivatives are
    /// solved by Gaussian elimination, whose values bring the other
    /// pending derivatives of their rows into the rows they are
    /// substituted into (the repeated rounds of [`flush`]).
    const LOOP: &str = "model Loop
  parameter Integer N = 5;
  parameter Real a[N] = {1.5, 2, 2.5, 3, 3.5};
  Real x[N](each start = 0.3);
  Real u[N](each start = 0.1);
equation
  for k in 1:N - 1 loop
    a[k]*der(x[k]) + k*x[k]*der(x[k + 1]) = u[k];
  end for;
  der(x[N]) - a[N]*der(x[1]) = u[N] + x[N]^2;
  for k in 1:N - 1 loop
    x[k] + a[k]*x[k + 1] = sin(time*k);
  end for;
  sum(x) = cos(time);
end Loop;
";

    #[test]
    fn batched_substitution_gives_the_per_leaf_expressions_on_every_flat_model() {
        // every `.dae` model of `models/` but the scalable families (tested
        // above at a small size)
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models");
        let mut dirs = vec![std::path::PathBuf::from(root)];
        let (mut models, mut constraints) = (0, 0);
        while let Some(dir) = dirs.pop() {
            let mut entries: Vec<_> = std::fs::read_dir(&dir)
                .expect("the models directory")
                .map(|e| e.expect("an entry").path())
                .collect();
            entries.sort();
            for path in entries {
                if path.is_dir() && !path.ends_with("scale") {
                    dirs.push(path);
                } else if path.extension().is_some_and(|x| x == "dae") {
                    let text = std::fs::read_to_string(&path).expect("a model");
                    if let Some((c, _, _)) = try_compare_modes(&text, &[]) {
                        models += 1;
                        constraints += c;
                    }
                }
            }
        }
        assert!(models >= 50, "{models} models compared");
        assert!(constraints >= 500, "{constraints} constraints compared");
    }

    #[test]
    fn batched_substitution_gives_the_per_leaf_expressions_on_a_loop() {
        let (constraints, derivatives, _) = compare_modes(LOOP, &[]);
        // the N position rows and their derivatives are the constraints;
        // the derivatives of x are solved from the loop's rows
        assert_eq!((constraints, derivatives), (10, 5));
    }

    #[test]
    fn constants_and_leaves_answer_as_the_walks_do() {
        let mut pool = ExprPool::new();
        let zero = pool.constant(0.0);
        let three = pool.constant(3.0);
        let m = pool.param(ParamId(0));
        let x = pool.var(0, 0);
        let xd = pool.var(0, 1);
        let t = pool.time();
        let c = pool.cmp(CmpOp::Lt, x, three);
        let branch = pool.select(c, zero, m);
        let scaled = pool.mul(branch, x);
        let sum = pool.add(branch, zero);
        let mm = pool.mul(m, three);
        let cases = [zero, three, m, x, xd, t, branch, scaled, sum, mm];
        let vanishes: Vec<bool> = cases
            .iter()
            .map(|&e| vanishes_in_some_branch(&pool, e))
            .collect();
        let depends: Vec<bool> = cases.iter().map(|&e| depends_on_state(&pool, e)).collect();
        for (k, &e) in cases.iter().enumerate() {
            assert_eq!(vanishes[k], vanishes_walk(&pool, e), "case {k}");
            assert_eq!(depends[k], depends_on_state_walk(&pool, e), "case {k}");
        }
        // (the answers themselves)
        let expected_vanishes = [
            true, false, false, false, false, false, true, true, true, false,
        ];
        let expected_depends = [
            false, false, false, true, true, true, true, true, true, false,
        ];
        assert_eq!(vanishes, expected_vanishes);
        assert_eq!(depends, expected_depends);
    }

    #[test]
    fn the_singleton_heap_pops_in_the_order_of_its_entries_as_tuples() {
        // pseudo-random entries with repeats, ranks over the whole u64
        // (magnitude ranks are u64::MAX less a float's bits) and counts
        // beyond the 16 bits: popped in increasing (tier, k, rank, row)
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut entries: Vec<(u8, u32, u64, usize)> = Vec::new();
        for _ in 0..2000 {
            let tier = (next() % 3) as u8;
            let k = match next() % 3 {
                0 => (next() % 4) as u32,
                1 => u32::MAX - (next() % 4) as u32,
                _ => next() as u32,
            };
            let rank = match next() % 3 {
                0 => 0,
                1 => u64::MAX - (1.5f64 + (next() % 7) as f64).to_bits(),
                _ => next(),
            };
            let row = (next() % 5000) as usize;
            entries.push((tier, k, rank, row));
        }
        entries.extend(entries[..100].to_vec());
        entries.push((DEFERRED, u32::MAX, u64::MAX, (1 << ROW_BITS) - 1));
        entries.push((CONSTANT, 0, 0, 0));
        let mut heap = SingletonHeap::with_capacity(4);
        for &(tier, k, rank, row) in &entries {
            heap.push(tier, k, rank, row);
        }
        let popped: Vec<(u8, u32, u64, usize)> = std::iter::from_fn(|| heap.pop()).collect();
        entries.sort_unstable();
        assert_eq!(popped, entries);
    }
}
