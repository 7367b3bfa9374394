//! State events of relations and of the event-triggering functions: the
//! relations of the unknowns in the conditions of `if` expressions, and
//! `floor(e)` and `ceil(e)` of the unknowns, held constant between events.
//!
//! # Semantics (MLS 3.6 §3.5, §8.5)
//!
//! A relation `a < b`, `a <= b`, `a > b` or `a >= b` outside `noEvent(…)`
//! generates a state event. Every such relation that occurs in the
//! condition of an `if` expression (directly or under `and`, `or`, `not`)
//! and depends on the unknowns (not on their derivatives) becomes a *mode*:
//!
//! * in the formulation the integrator runs, the relation is replaced by a
//!   parameter whose value is the mode (1 true, 0 false; [`Modes::freeze`]),
//!   so the residuals and their Jacobians are smooth within a step — the
//!   branch is frozen, as MLS §8.5 requires between events;
//! * the modes start as the relations' values at the consistent initial
//!   point (MLS §8.6; the initialisation itself evaluates the relations
//!   with the values it solves for);
//! * the *crossing function* `φ = b − a` (the event function of
//!   [`crate::events::event_function`]: the relation holds where `φ > 0`,
//!   or `φ ≥ 0` for `<=`/`>=`) is monitored on the dense output of every
//!   accepted step, in both directions: the condition watched is "the
//!   relation differs from its mode" ([`Modes::scan`], with
//!   [`daec_solve::first_rising_edge`]);
//! * at a crossing the integration stops at the first time the relation
//!   has changed, the modes take the relations' values there, the
//!   algebraic unknowns are re-initialised consistently with the new modes
//!   (the states are kept, `init::reinitialize`), and the
//!   relations are evaluated again until no mode changes (the event
//!   iteration, at most [`MAX_EVENT_ITERATIONS`] rounds; [`Modes::update`]),
//!   and the integration restarts;
//! * a mode takes the value its relation has just *after* the event (MLS
//!   §8.5: the relation is frozen on the interval that follows): a
//!   relation that holds at the located point by round-off only, because
//!   it touches zero where another crosses, is set by its value on the
//!   prediction along `ż` ([`right_limits`]).
//!
//! # Event-triggering functions (MLS 3.6 §3.7.2)
//!
//! `floor(e)` and `ceil(e)` of an argument `e` of the unknowns (outside
//! `noEvent(…)`; `integer`, `div`, `mod` and `rem` are lowered to them by
//! the front end) are modes of their own, with an integer value: between
//! events `floor(e)` is the value `k` it took at the last event (a
//! parameter in the formulation, as a relation's mode), and the two
//! crossing functions `k − e > 0` and `e − (k + 1) ≥ 0` watch for `e`
//! leaving `[k, k + 1)` (for `ceil`, `(k − 1) − e ≥ 0` and `e − k > 0`
//! for `(k − 1, k]`). At a crossing the mode takes the function's value
//! there, as a relation's mode does, through the same event iteration.
//! The structural analysis sees `floor(e)` as it sees a relation in a
//! condition: a dependence on the unknowns of `e` whose derivative is 0.
//!
//! The restarts count towards the limits of [`crate::events`] (events at
//! one instant, accumulating events, `--max-events`): a relation that
//! chatters — the dynamics on each side drive the state back across it —
//! ends in an explained error, never in a hang.
//!
//! `abs`, `min`, `max` and `sign` are evaluated continuously (they are not
//! relations, MLS §3.7.1), and so are relations and `floor`/`ceil` inside
//! `noEvent(…)` (the front end wraps them in [`daec_expr::Func::NoEvent`],
//! which this module leaves alone), `floor`/`ceil` of an argument with a
//! derivative of the unknowns, and relations and `floor`/`ceil` of `time`
//! and parameters only (time events: [`crate::events::discontinuities`]).

use crate::error::{FailureCause, SimError, Unsupported};
use crate::events::{MAX_EVENT_ITERATIONS, condition_text, event_function};
use daec_expr::{CmpOp, ExprId, ExprPool, Func, Leaf, Node, ParamId, Tape, TapeFrame};
use daec_model::{BaseType, Dae, Parameter};
use daec_regularize::QuasiLinearForm;
use daec_solve::readable_number as show;
use daec_solve::{RisingEdge, Step, edge_tolerance, first_rising_edge, holds, locate_edge};
use std::collections::HashSet;

/// The relations that become modes: the comparisons `<`, `<=`, `>`, `>=`
/// in the conditions of the `Select` nodes under `roots` (through `and`,
/// `or`, `not`) that depend on unknowns and on no derivative, in
/// dependency order. Relations wrapped in `noEvent` are not found (the
/// wrapper is neither a comparison nor a connective).
pub fn state_relations(pool: &ExprPool, roots: &[ExprId]) -> Vec<ExprId> {
    let mut out = Vec::new();
    let mut seen: HashSet<ExprId> = HashSet::new();
    let mut stack = Vec::new();
    for id in pool.topo_order(roots) {
        let Node::Select(c, _, _) = pool.node(id) else {
            continue;
        };
        stack.push(c);
        while let Some(e) = stack.pop() {
            if !seen.insert(e) {
                continue;
            }
            match pool.node(e) {
                Node::And(a, b) | Node::Or(a, b) => {
                    stack.push(b);
                    stack.push(a);
                }
                Node::Not(a) => stack.push(a),
                Node::Cmp(CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge, ..)
                    if of_the_state(pool, e) =>
                {
                    out.push(e);
                }
                _ => {}
            }
        }
    }
    out
}

/// Whether `e` depends on unknowns and on none of their derivatives.
fn of_the_state(pool: &ExprPool, e: ExprId) -> bool {
    let mut unknown = false;
    for l in pool.leaves(e) {
        match pool.as_leaf(l) {
            Some(Leaf::Var { order: 0, .. }) => unknown = true,
            Some(Leaf::Var { .. }) => return false,
            _ => {}
        }
    }
    unknown
}

/// The event-triggering `floor(e)` and `ceil(e)` under `roots` (MLS 3.6
/// §3.7.2) whose argument depends on unknowns and on no derivative, in
/// dependency order; those inside `noEvent(…)`, inside one of the
/// `relations` (frozen as a whole) or inside another such function are
/// not searched.
pub fn state_jumps(pool: &ExprPool, roots: &[ExprId], relations: &[ExprId]) -> Vec<ExprId> {
    let mut out = Vec::new();
    let mut seen: HashSet<ExprId> = relations.iter().copied().collect();
    let mut stack: Vec<ExprId> = roots.to_vec();
    while let Some(e) = stack.pop() {
        if !seen.insert(e) {
            continue;
        }
        match pool.node(e) {
            Node::Func(Func::NoEvent, _) => {}
            Node::Func(Func::Floor | Func::Ceil, a) if of_the_state(pool, a) => out.push(e),
            node => stack.extend(node.children()),
        }
    }
    // (ids are in dependency order: children before parents)
    out.sort_unstable();
    out
}

/// What a mode holds between events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A relation, 1 true and 0 false; its crossing function `φ` holds
    /// where `φ > 0` (`strict`) or `φ ≥ 0`.
    Relation { strict: bool },
    /// `floor(e)`: the integer `k` with `k ≤ e < k + 1`.
    Floor,
    /// `ceil(e)`: the integer `k` with `k − 1 < e ≤ k`.
    Ceil,
}

impl Kind {
    /// The value of the mode where its tape output (a relation's `φ`, the
    /// argument `e` of `floor`/`ceil`) is `raw`.
    fn value(self, raw: f64) -> f64 {
        match self {
            Kind::Relation { strict } => {
                if holds(raw, strict) {
                    1.0
                } else {
                    0.0
                }
            }
            Kind::Floor => raw.floor(),
            Kind::Ceil => raw.ceil(),
        }
    }

    /// The conditions under which the mode with value `v` differs from
    /// its function, as `(φ, strict)` of the tape output `raw` (see
    /// [`holds`]): one for a relation, one per side for `floor`/`ceil`.
    fn differs(self, v: f64, raw: f64) -> [(f64, bool); 2] {
        match self {
            // the relation itself while the mode is false, its negation
            // (−φ, of the other strictness) while it is true
            Kind::Relation { strict } if v == 1.0 => [(-raw, !strict); 2],
            Kind::Relation { strict } => [(raw, strict); 2],
            Kind::Floor => [(v - raw, true), (raw - (v + 1.0), false)],
            Kind::Ceil => [((v - 1.0) - raw, false), (raw - v, true)],
        }
    }

    /// Number of conditions of [`Kind::differs`] that are watched.
    fn sides(self) -> usize {
        match self {
            Kind::Relation { .. } => 1,
            Kind::Floor | Kind::Ceil => 2,
        }
    }
}

/// Makes a state consistent with the current modes (the parameters of the
/// model), keeping the states (`init::reinitialize_switch`).
pub type Reinit<'a> = dyn FnMut(&mut Dae, &[f64]) -> Result<Vec<f64>, SimError> + 'a;

/// The modes of a model's relations and event-triggering functions along
/// a run (see the module docs).
#[derive(Debug, Clone)]
pub struct Modes {
    /// The relations, then the `floor`/`ceil` applications, as nodes of
    /// the model's pool.
    relations: Vec<ExprId>,
    /// The model parameter that holds each mode.
    params: Vec<usize>,
    /// The relations' crossing functions `φ_k(t, z)` and the arguments of
    /// the `floor`/`ceil` modes, one tape (inputs: the model's unknowns),
    /// and its frame.
    phi: Option<(Tape, TapeFrame)>,
    /// What each mode holds.
    kind: Vec<Kind>,
    /// The current value of each mode (a relation's 1 or 0, an integer).
    value: Vec<f64>,
    /// The value [`Modes::flip`] swaps in: a relation's other value, the
    /// value a `floor`/`ceil` mode takes just after the last
    /// [`Modes::leaving`].
    other: Vec<f64>,
    /// Each relation or function as written, for messages.
    texts: Vec<String>,
    /// Relations set to their value just after a restart although they
    /// differ from it at the restart itself ([`right_limits`]):
    /// the first scan after the restart takes them as already changed,
    /// so the difference at the step start is no edge.
    ahead: Vec<bool>,
    /// Number of unknowns of the model.
    n: usize,
    /// The tape's outputs.
    raw: Vec<f64>,
    /// The crossing functions of [`Modes::crossings`].
    out: Vec<f64>,
    /// The conditions [`Modes::scan`] watches: `(mode, side)`, `sides`
    /// per mode (see `Kind::differs`).
    owner: Vec<(usize, usize)>,
    /// [`Modes::scan`]'s per-condition strictness and values before the
    /// step (kept storage).
    strict: Vec<bool>,
    pre: Vec<bool>,
}

impl Modes {
    /// The modes of `dae`'s relations (see [`state_relations`]) and of its
    /// event-triggering functions (see [`state_jumps`]): each gets a
    /// parameter of `dae` (named `$mode<k>`, value 0 until
    /// [`Modes::set_from`]) and its crossing function or argument is
    /// compiled.
    pub fn new(dae: &mut Dae) -> Result<Self, SimError> {
        let roots: Vec<ExprId> = dae.equations.iter().map(|e| e.residual).collect();
        let mut relations = state_relations(&dae.pool, &roots);
        let jumps = state_jumps(&dae.pool, &roots, &relations);
        relations.extend(jumps);
        let n = dae.unknowns.len();
        let mut phis = Vec::new();
        let mut kind = Vec::new();
        let mut params = Vec::new();
        let mut texts = Vec::new();
        for (k, &r) in relations.iter().enumerate() {
            match dae.pool.node(r) {
                Node::Func(f @ (Func::Floor | Func::Ceil), a) => {
                    phis.push(a);
                    kind.push(if f == Func::Floor {
                        Kind::Floor
                    } else {
                        Kind::Ceil
                    });
                }
                _ => {
                    let (phi, strict) = event_function(&mut dae.pool, r);
                    phis.push(phi);
                    kind.push(Kind::Relation { strict });
                }
            }
            texts.push(condition_text(dae, r));
            params.push(dae.parameters.len());
            let name = format!("$mode{}", k + 1);
            dae.parameters.push(mode_parameter(name));
        }
        let phi = if relations.is_empty() {
            None
        } else {
            let inputs: Vec<ExprId> = (0..n as u32).map(|j| dae.pool.var(j, 0)).collect();
            let tape = Tape::compile(&dae.pool, &phis, &inputs).map_err(|e| {
                let message = format!("cannot compile the relations' crossings: {e}");
                SimError::unsupported(Unsupported::Compile(e), message)
            })?;
            let frame = tape.frame(&dae.parameter_values());
            Some((tape, frame))
        };
        let m = relations.len();
        let owner = (kind.iter().enumerate())
            .flat_map(|(k, kind)| (0..kind.sides()).map(move |s| (k, s)))
            .collect();
        Ok(Self {
            owner,
            strict: Vec::new(),
            pre: Vec::new(),
            value: vec![0.0; m],
            other: first_others(&kind),
            ahead: vec![false; m],
            raw: vec![0.0; m],
            out: vec![0.0; m],
            relations,
            params,
            phi,
            kind,
            texts,
            n,
        })
    }

    /// Takes new parameter values (the discrete variables' after an
    /// event) for the crossing functions.
    pub fn set_params(&mut self, params: &[f64]) {
        if let Some((tape, frame)) = &mut self.phi {
            *frame = tape.frame(params);
        }
    }

    /// Puts the modes back as [`Modes::new`] left them for `dae` (a DAE
    /// of the structure they were made for, with other values): every
    /// mode 0 (a relation false), its parameter 0, the crossing
    /// functions at `dae`'s parameter values. A prepared simulation
    /// rebound to other values sets them from there as the preparation
    /// does.
    pub(crate) fn reset(&mut self, dae: &mut Dae) {
        self.value.iter_mut().for_each(|v| *v = 0.0);
        self.other = first_others(&self.kind);
        self.ahead.iter_mut().for_each(|a| *a = false);
        for &p in &self.params {
            if let Some(p) = dae.parameters.get_mut(p) {
                p.value = 0.0;
            }
        }
        self.set_params(&dae.parameter_values());
    }

    /// Whether a mode is an event-triggering function (`floor`, `ceil`,
    /// and what is lowered to them: `integer`, `div`): a value that jumps
    /// where it switches, not a relation choosing between branches.
    pub fn has_jumps(&self) -> bool {
        self.kind
            .iter()
            .any(|k| !matches!(k, Kind::Relation { .. }))
    }

    /// Number of modes.
    pub fn len(&self) -> usize {
        self.relations.len()
    }

    /// True if the model has no relation of the unknowns in an `if`
    /// condition and no event-triggering function of the unknowns.
    pub fn is_empty(&self) -> bool {
        self.relations.is_empty()
    }

    /// Replaces every relation in `form` by the parameter of its mode (a
    /// relation inside `noEvent(…)` is left as it is, even where the same
    /// relation also occurs without it).
    pub fn freeze(&self, pool: &mut ExprPool, form: &mut QuasiLinearForm) {
        if self.is_empty() {
            return;
        }
        let mut roots: Vec<ExprId> = Vec::new();
        for row in &form.diff {
            roots.push(row.residual);
            roots.extend(row.mass.iter().map(|&(_, e)| e));
        }
        roots.extend(form.constraints.iter().map(|c| c.expr));
        let new = self.frozen(pool, &roots);
        let mut it = new.into_iter();
        for row in &mut form.diff {
            row.residual = it.next().unwrap_or(row.residual);
            for entry in &mut row.mass {
                entry.1 = it.next().unwrap_or(entry.1);
            }
        }
        for c in &mut form.constraints {
            c.expr = it.next().unwrap_or(c.expr);
        }
    }

    /// Replaces every relation in the residuals of `dae`'s equations by
    /// the parameter of its mode, as [`Modes::freeze`] does in a
    /// formulation (a Model Exchange FMU solves the model as written).
    pub fn freeze_equations(&self, dae: &mut Dae) {
        if self.is_empty() {
            return;
        }
        let roots: Vec<ExprId> = dae.equations.iter().map(|e| e.residual).collect();
        let new = self.frozen(&mut dae.pool, &roots);
        for (e, r) in dae.equations.iter_mut().zip(new) {
            e.residual = r;
        }
    }

    /// `roots` with every relation replaced by the parameter of its mode
    /// (relations inside `noEvent(…)` kept).
    fn frozen(&self, pool: &mut ExprPool, roots: &[ExprId]) -> Vec<ExprId> {
        let mut leaves: Vec<(ExprId, ExprId)> = self
            .relations
            .iter()
            .zip(&self.params)
            .map(|(&r, &p)| (r, pool.param(ParamId(p as u32))))
            .collect();
        leaves.sort_by_key(|&(r, _)| r);
        let map = |_: &ExprPool, id: ExprId| {
            leaves
                .binary_search_by_key(&id, |&(r, _)| r)
                .ok()
                .map(|i| leaves[i].1)
        };
        let opaque = |p: &ExprPool, id: ExprId| matches!(p.node(id), Node::Func(Func::NoEvent, _));
        pool.replace_nodes(roots, &map, &opaque)
    }

    /// The crossing functions `φ_k(t, z)` of the modes: a relation's
    /// (it holds where `φ_k > 0`, or `≥ 0` for `<=`/`>=`), and for
    /// `floor(e)` with value `k` the distance `min(e − k, k + 1 − e)` to
    /// the nearer end of `[k, k + 1)` (for `ceil`, of `(k − 1, k]`), which
    /// changes sign where the function jumps: the event indicators of a
    /// Model Exchange FMU.
    pub fn crossings(&mut self, t: f64, z: &[f64]) -> &[f64] {
        self.eval(t, z);
        for k in 0..self.len() {
            let (raw, v) = (self.raw[k], self.value[k]);
            self.out[k] = match self.kind[k] {
                Kind::Relation { .. } => raw,
                Kind::Floor => (raw - v).min(v + 1.0 - raw),
                Kind::Ceil => (raw - (v - 1.0)).min(v - raw),
            };
        }
        &self.out
    }

    /// The current value of every mode (a relation's 1 or 0, the integer
    /// of a `floor`/`ceil`).
    pub fn values(&self) -> &[f64] {
        &self.value
    }

    /// Sets the modes to `values` (and the parameters of `dae` that hold
    /// them): a saved state restored.
    pub fn restore(&mut self, dae: &mut Dae, values: &[f64]) {
        for (k, &v) in values.iter().enumerate().take(self.len()) {
            self.set(dae, k, v);
        }
    }

    /// Sets mode `k` to `v` (and the parameter of `dae` that holds it).
    fn set(&mut self, dae: &mut Dae, k: usize, v: f64) {
        self.value[k] = v;
        self.other[k] = match self.kind[k] {
            Kind::Relation { .. } => 1.0 - v,
            _ => v,
        };
        if let Some(p) = dae.parameters.get_mut(self.params[k]) {
            p.value = v;
        }
    }

    /// The tape's outputs at `(t, z)` into `self.raw`.
    fn eval(&mut self, t: f64, z: &[f64]) {
        if let Some((tape, frame)) = &mut self.phi {
            let z = &z[..self.n.min(z.len())];
            tape.eval_frame(frame, t, &[z], &mut self.raw);
        }
    }

    /// The crossing function of relation `k` at `(t, z)` as
    /// [`Modes::scan`] watches it, and its strictness: the relation differs
    /// from its mode where the value satisfies [`holds`]. `None` for a
    /// `floor`/`ceil` mode (two crossing functions) or no mode `k`.
    pub(crate) fn relation_crossing(&mut self, t: f64, z: &[f64], k: usize) -> Option<(f64, bool)> {
        let kind = *self.kind.get(k)?;
        if !matches!(kind, Kind::Relation { .. }) {
            return None;
        }
        self.eval(t, z);
        Some(kind.differs(self.value[k], self.raw[k])[0])
    }

    /// Sets every mode to its relation's or function's value at `(t, z)`
    /// (and the parameters of `dae` that hold them); returns whether one
    /// changed.
    pub fn set_from(&mut self, dae: &mut Dae, t: f64, z: &[f64]) -> bool {
        self.eval(t, z);
        self.ahead.iter_mut().for_each(|a| *a = false);
        let mut changed = false;
        for k in 0..self.len() {
            let now = self.kind[k].value(self.raw[k]);
            changed |= now != self.value[k];
            self.set(dae, k, now);
        }
        changed
    }

    /// The first time on `step` at which a relation or function differs
    /// from its mode (see the module docs), with the modes changed there.
    pub fn scan(&mut self, step: &Step<'_>) -> Option<RisingEdge> {
        let (tape, frame) = self.phi.as_mut()?;
        // the watched conditions: `sides` per mode (see `Kind::differs`)
        let (kind, value, owner) = (&self.kind, &self.value, &self.owner);
        self.strict.clear();
        self.strict.extend(
            owner
                .iter()
                .map(|&(k, s)| kind[k].differs(value[k], 0.0)[s].1),
        );
        self.pre.clear();
        self.pre.extend(owner.iter().map(|&(k, _)| self.ahead[k]));
        self.ahead.fill(false);
        let (n, raw) = (self.n, &mut self.raw);
        let edge = first_rising_edge(step, &self.pre, &self.strict, |t, z, out| {
            tape.eval_frame(frame, t, &[&z[..n.min(z.len())]], raw);
            for (o, &(k, s)) in out.iter_mut().zip(owner) {
                *o = kind[k].differs(value[k], raw[k])[s].0;
            }
        })?;
        let mut events: Vec<usize> = edge.events.iter().map(|&i| owner[i].0).collect();
        events.dedup();
        Some(RisingEdge { t: edge.t, events })
    }

    /// After the integration stopped at `t` with the solution `z` (at a
    /// crossing, an event or a discontinuity): the event iteration of the
    /// relations. Each round sets the modes to the relations' values at
    /// `z`; if one changed (or, in the first round, if `inconsistent`), `z`
    /// is made consistent with the modes by `project` (the states kept,
    /// `init::reinitialize_switch`) and the next round evaluates
    /// the relations there; it ends when no mode changes. Returns the
    /// relations that changed.
    pub fn update(
        &mut self,
        dae: &mut Dae,
        t: f64,
        z: &mut Vec<f64>,
        inconsistent: bool,
        project: &mut Reinit<'_>,
    ) -> Result<Vec<usize>, SimError> {
        let mut flipped = Vec::new();
        if self.is_empty() {
            return Ok(flipped);
        }
        let mut force = inconsistent;
        for round in 0..=MAX_EVENT_ITERATIONS {
            let before = self.value.clone();
            let changed = self.set_from(dae, t, z);
            if !changed && !force {
                return Ok(flipped);
            }
            force = false;
            let changed: Vec<usize> = (0..self.len())
                .filter(|&k| before[k] != self.value[k])
                .collect();
            if round == MAX_EVENT_ITERATIONS {
                let cause = FailureCause::EventIteration {
                    rounds: MAX_EVENT_ITERATIONS,
                };
                return Err(SimError::numerical(
                    t,
                    cause,
                    format!(
                        "the event iteration at t = {} does not end: after {MAX_EVENT_ITERATIONS} rounds the relation {} changes again (each re-initialisation with the new value puts the state back on the other side)",
                        show(t),
                        self.describe(&changed)
                    ),
                ));
            }
            *z = project(dae, z).map_err(|mut e| {
                if let Some(failure) = e.failure_mut()
                    && !changed.is_empty()
                {
                    failure.message = format!(
                        "after the relation {} changed: {}",
                        self.describe(&changed),
                        failure.message
                    );
                }
                e
            })?;
            flipped.extend(changed);
        }
        Ok(flipped)
    }

    /// The relations whose value just after `t` differs from their mode:
    /// evaluated on the first-order prediction `(t + δ, z + δ·ż)` of the
    /// solution under the current modes (`zdot` = `ż(t, z)`), for a step
    /// `δ` far below any integration step. Only a relation within `δ` of
    /// its switching point can change there: one that touches zero at an
    /// event where another relation of the same quantities crosses (the
    /// event is located where both hold, but the dynamics after the event
    /// turn this one back at once).
    pub fn leaving(&mut self, t: f64, z: &[f64], zdot: &[f64], delta: f64) -> Vec<usize> {
        let ahead: Vec<f64> = z.iter().zip(zdot).map(|(x, d)| x + delta * d).collect();
        self.eval(t + delta, &ahead);
        let mut out = Vec::new();
        for k in 0..self.len() {
            let after = self.kind[k].value(self.raw[k]);
            if after != self.value[k] {
                self.other[k] = after;
                out.push(k);
            }
        }
        out
    }

    /// Swaps the modes `which` to their other value (a relation's
    /// negation; for `floor`/`ceil`, the value [`Modes::leaving`] found
    /// just after the current time, and back on a second call), and the
    /// parameters of `dae` that hold them; `ahead` marks them as set to
    /// their value just after the current time (see [`Modes::scan`]).
    pub fn flip(&mut self, dae: &mut Dae, which: &[usize], ahead: bool) {
        for &k in which {
            std::mem::swap(&mut self.value[k], &mut self.other[k]);
            self.ahead[k] = ahead;
            if let Some(p) = dae.parameters.get_mut(self.params[k]) {
                p.value = self.value[k];
            }
        }
    }

    /// Why a restart's relations changed again: the chattering they
    /// suggest, naming the relations `flipped` ([`Modes::describe`]).
    pub fn chatter_reason(&self, flipped: &[usize]) -> String {
        format!(
            "state events of the relation {}; a relation that changes at every restart chatters: the dynamics on either side drive the state back across it, which events cannot follow — write the motion along the switching surface into the model, or wrap the relation in `noEvent` to evaluate it continuously",
            self.describe(flipped)
        )
    }

    /// `` `x > 1` `` (and the others, up to three) for messages.
    pub fn describe(&self, which: &[usize]) -> String {
        let mut names: Vec<String> = which
            .iter()
            .take(3)
            .filter_map(|&k| self.texts.get(k))
            .map(|s| format!("`{s}`"))
            .collect();
        if which.len() > 3 {
            names.push(format!("{} more", which.len() - 3));
        }
        names.join(", ")
    }
}

/// The crossing `edge` that [`Modes::scan`] located on the dense output of
/// `step`, moved to where the relation changes on the solution projected
/// onto the constraints (`FormProblem::project_onto_constraints`, the
/// point the integration stops at and the event iteration evaluates the
/// relations at). The collocation polynomial of a long step misses the
/// constraints by up to its error, so a crossing located on it can come
/// before the one of the projected solution, where no relation changes
/// yet: the run would stop and restart there for nothing, and find the
/// crossing again after a step from the restart's small starting step
/// (the water tube's flows, which the inflow constraints fix: 0.04 s
/// early on a step of 947 s at 1e-4). When none of the edge's relations
/// changes at the projected point but the first does at the step's end,
/// its edge is located between the two (Illinois, [`locate_edge`], to the
/// scan's tolerance [`edge_tolerance`]) on the dense output corrected by
/// the projection's correction at the located time, scaled down linearly
/// to none at the step's end, and kept if the relation changes at the
/// projected point there (else located again from that point, up to
/// [`CORRECTIONS`] times); else the edge is returned as located.
pub(crate) fn crossing_on_constraints(
    modes: &mut Modes,
    problem: &crate::problem::FormProblem,
    step: &Step<'_>,
    edge: RisingEdge,
) -> RisingEdge {
    let Some(&first) = edge.events.first() else {
        return edge;
    };
    let mut z = vec![0.0; step.z.len()];
    let projected = |t: f64, z: &mut [f64]| problem.step_value(step, t, z);
    projected(edge.t, &mut z);
    // the projected solution at the left end of the search (kept: the
    // corrections below start from it, one projection fewer each)
    let mut at_left = z.clone();
    let mut changes = false;
    for &k in &edge.events {
        match modes.relation_crossing(edge.t, &z, k) {
            Some((f, strict)) => changes |= holds(f, strict),
            // (a `floor`/`ceil` mode: as located)
            None => return edge,
        }
    }
    let start = modes.relation_crossing(edge.t, &z, first);
    projected(step.t, &mut z);
    let end = modes.relation_crossing(step.t, &z, first);
    let (Some((fa, strict)), Some((fb, _))) = (start, end) else {
        return edge;
    };
    if changes || !fa.is_finite() || !holds(fb, strict) || edge.t >= step.t {
        return edge;
    }
    // Between the two the projection's correction of the dense output,
    // `Δ(t_a)` at the left end and zero at the step's end (the polynomial
    // interpolates the end point), taken linear: the edge is located on
    // the corrected polynomial, without a projection per value, and
    // confirmed by one; where the relation does not change there yet,
    // that point is the new left end, with its own correction.
    let (mut ta, mut fa, tb) = (edge.t, fa, step.t);
    let mut shift = vec![0.0; z.len()];
    let tol = edge_tolerance(step.t_start, step.t);
    for _ in 0..CORRECTIONS {
        step.dense(ta, &mut shift);
        for (d, &p) in shift.iter_mut().zip(&at_left) {
            *d = p - *d;
        }
        let t = locate_edge((ta, fa), (tb, fb), strict, tol, |t| {
            step.dense(t, &mut z);
            let w = (tb - t) / (tb - ta);
            for (zi, &d) in z.iter_mut().zip(&shift) {
                *zi += w * d;
            }
            modes
                .relation_crossing(t, &z, first)
                .map_or(f64::NAN, |(f, _)| f)
        });
        projected(t, &mut z);
        match modes.relation_crossing(t, &z, first) {
            Some((f, strict)) if holds(f, strict) => {
                return RisingEdge {
                    t,
                    events: edge.events,
                };
            }
            Some((f, _)) if f.is_finite() && t > ta && t < tb => {
                (ta, fa) = (t, f);
                at_left.copy_from_slice(&z);
            }
            _ => break,
        }
    }
    edge
}

/// The corrections of the dense output [`crossing_on_constraints`] tries
/// (a projection each).
const CORRECTIONS: usize = 4;

/// Time of the prediction of [`Modes::leaving`], relative to the length of
/// the run: far below the integrator's steps and far above the round-off
/// of `t`, whose units are where the event location leaves a relation that
/// only touches zero.
pub const RIGHT_LIMIT_STEP: f64 = 1e-10;

/// After the event iteration at `t` (the modes the relations' values at
/// the located point `z`): each mode set to the relation's value just
/// after `t`, where the two differ ([`Modes::leaving`], with the derivative
/// `ż` the DAE determines at `z` under the current modes). Event location
/// stops where the first relation holds; a second relation of the same
/// quantities may hold there by round-off only and turn back at once
/// under the new modes — a mode set from its value at `z` then freezes a
/// branch the solution leaves at once, whose equations have no solution
/// for any step (the charge pump's gate charge on entering inversion).
/// The changed relations are set together and `z` re-initialised with
/// them (`init::reinitialize_switch`); if the relations then
/// disagree with those modes too (the dynamics on both sides point to the
/// surface: a sliding motion), the modes and `z` are restored. Returns the
/// relations changed (marked for the next [`Modes::scan`]) and the
/// derivative `ż` the DAE determines at the final `z` under the final
/// modes, where it was computed (the next segment starts from it instead
/// of solving for it again, [`daec_solve::Options::initial_derivative`]).
/// `span` is the length of the run.
pub(crate) fn right_limits(
    dae: &mut Dae,
    form: &crate::formulation::SimForm,
    problem: &mut crate::problem::FormProblem,
    modes: &mut Modes,
    t: f64,
    z: &mut Vec<f64>,
    span: f64,
) -> (Vec<usize>, Option<Vec<f64>>) {
    if modes.is_empty() {
        return (Vec::new(), None);
    }
    let delta = RIGHT_LIMIT_STEP * span.abs().max(t.abs());
    let mut derivative = |dae: &Dae, z: &[f64]| {
        problem.set_params(&dae.parameter_values());
        daec_solve::Radau5::new(&*problem, daec_solve::Options::default())
            .ok()
            .and_then(|mut r| r.derivative_at(t, z))
    };
    let Some(zdot) = derivative(dae, z) else {
        return (Vec::new(), None);
    };
    let which = modes.leaving(t, z, &zdot, delta);
    if which.is_empty() {
        return (which, Some(zdot));
    }
    modes.flip(dae, &which, true);
    let moved = crate::init::reinitialize_switch(dae, form, t, z);
    let kept = moved.ok().and_then(|znew| {
        let zd = derivative(dae, &znew)?;
        let again = modes.leaving(t, &znew, &zd, delta);
        (!which.iter().any(|k| again.contains(k))).then_some((znew, zd))
    });
    match kept {
        Some((znew, zd)) => {
            *z = znew;
            (which, Some(zd))
        }
        None => {
            modes.flip(dae, &which, false);
            problem.set_params(&dae.parameter_values());
            (Vec::new(), None)
        }
    }
}

/// The parameter that holds a mode (a symbolic `Real` that the run sets
/// to 0 or 1).
/// The values [`Modes::flip`] swaps in before the modes are first set:
/// a relation's 1 (it starts false), a `floor`/`ceil` mode's 0.
fn first_others(kind: &[Kind]) -> Vec<f64> {
    kind.iter()
        .map(|k| match k {
            Kind::Relation { .. } => 1.0,
            _ => 0.0,
        })
        .collect()
}

fn mode_parameter(name: String) -> Parameter {
    Parameter {
        description: Some("the value of a relation between events".into()),
        ..Parameter::hidden(&name, BaseType::Real, 0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dae_of;
    use daec_regularize::{AnalyzeOptions, analyze};

    #[test]
    fn right_limits_return_the_derivative_of_the_new_branch() {
        // y jumps from x to 3x where x crosses 0.5, and ẏ from 1 to 3
        let text = "model S\n  Real x(start = 0, fixed = true);\n  Real y(start = 0);\nequation\n  der(x) = 1;\n  y = if x > 0.5 then 3*x else x;\nend S;\n";
        let mut dae = dae_of(text);
        let analysis = analyze(&mut dae, &AnalyzeOptions::default());
        let prepared = crate::simulate::prepare(&mut dae, &analysis).unwrap();
        let crate::simulate::Prepared {
            form,
            mut problem,
            mut modes,
            init,
            ..
        } = prepared;
        let (ix, iy) = (
            dae.unknown_index("x").unwrap(),
            dae.unknown_index("y").unwrap(),
        );
        // the located point: x = 0.5 on the old branch, where the strict
        // relation does not hold yet
        let mut z = init.z0.clone();
        (z[ix], z[iy]) = (0.5, 0.5);
        modes.set_from(&mut dae, 0.5, &z);
        problem.set_params(&dae.parameter_values());
        let (which, zdot) =
            right_limits(&mut dae, &form, &mut problem, &mut modes, 0.5, &mut z, 1.0);
        assert_eq!(which, [0]);
        assert!((z[iy] - 1.5).abs() < 1e-12, "{z:?}");
        let zdot = zdot.expect("the derivative at the new point");
        assert!((zdot[ix] - 1.0).abs() < 1e-12, "{zdot:?}");
        assert!((zdot[iy] - 3.0).abs() < 1e-9, "{zdot:?}");
        // the one the integrator would solve for at the start of the next
        // segment, bit for bit
        let mut radau = daec_solve::Radau5::new(&problem, daec_solve::Options::default()).unwrap();
        assert_eq!(radau.derivative_at(0.5, &z), Some(zdot));
    }
}
