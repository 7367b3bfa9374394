//! Events: `when` conditions located on the dense output, `reinit`, the
//! checks that keep event handling from looping, and if-expressions on
//! `time` treated as discontinuities. The relations of the unknowns in
//! if-expressions are state events of their own ([`crate::modes`]): they
//! are located with the same [`first_rising_edge`], and their restarts and
//! events count towards the limits below.
//!
//! # Semantics
//!
//! * A `when` condition `c` becomes an *event function* `φ(t, z)`: `a − b`
//!   for `a > b` / `a ≥ b`, `b − a` for `a < b` / `a ≤ b`, and `±1` (the
//!   truth value) for any other Boolean expression. `c` holds where
//!   `φ > 0` (strict comparisons and the `±1` form) or `φ ≥ 0` (`≥`, `≤`).
//! * The clause fires on a *rising edge* of `c`, when `c` changes from
//!   false to true (MLS §8.3.5: the body is activated when the condition
//!   becomes true). At the start the value of `c` is the one the relation
//!   has at the consistent initial point (MLS §8.6: at initialisation
//!   `pre(c)` is `c`, and a `when` is not active then): a clause whose
//!   condition holds at `t0` does not fire there, and one whose condition is
//!   false at `t0` fires as soon as it becomes true — `when sin(time) > 0`
//!   from `t0 = 0` fires right after the start (`sin 0 > 0` is false,
//!   `sin t > 0` true just after), then at 2π, 4π, ….
//! * Edges are found on the dense output of every accepted step
//!   ([`daec_solve::first_rising_edge`]: samples and refinement inside the
//!   step, then root finding), so the events do not depend on the step
//!   size the error control chose; `--max-step` bounds the step for a
//!   condition that changes faster than the solution.
//! * At an event time every clause with an edge there fires; their
//!   `reinit` values are computed at the values before the event, assigned
//!   together, and the state is projected onto the constraints (the
//!   re-initialised values held, `init::reinitialize`). The
//!   conditions are evaluated again with the new values and clauses whose
//!   condition changed from false to true fire in turn (the event
//!   iteration), at most [`MAX_EVENT_ITERATIONS`] times.
//! * A `reinit` of an unknown that cannot be a state — no derivative of it
//!   occurs, or the constraints determine it (MLS §8.3.6 allows `reinit`
//!   of states only) — is a model error ([`reinit_diagnostics`]); one
//!   whose value the constraints put back at run time stops the run.
//!
//! # Limits
//!
//! Every loop of the event handling ends, in an explained error when it
//! does not end by itself:
//!
//! * *events at one instant*: more than [`MAX_EVENT_ITERATIONS`] rounds of
//!   the event iteration at one time;
//! * *accumulating events* (Zeno behaviour, chattering): more than
//!   [`MAX_STALLED_RESTARTS`] restarts in a row, each less than
//!   [`stall_resolution`] after the one before (the time between events
//!   shrinks to nothing, or a `reinit` sets its condition up to fire again
//!   at once);
//! * *a bounce that cannot be resolved*: after a `reinit` that reversed the
//!   direction of the condition's event function while the condition
//!   still holds (a ball's velocity at the floor), the state comes back
//!   deeper into the region where the condition holds without having left
//!   it: the clause can no longer fire and the state would pass the
//!   barrier (the ball falling through the floor);
//! * *the number of events* of a run: `--max-events` (default
//!   [`DEFAULT_MAX_EVENTS`]).
//!
//! `Select` nodes whose condition depends on `time` (and parameters) only,
//! and `floor`/`ceil` of such an argument, are discontinuities known in
//! advance (time events): their switching times are found by sampling and
//! bisection, and the integration steps to them and restarts (RADAU5's
//! error control is only valid on smooth pieces). A switch at `t_end` is
//! stepped to from the left: the driver ends the run at the breakpoint
//! one unit of round-off before it, where no integration step fits.

use crate::error::{FailureCause, SimError, Unsupported};
use daec_diag::{Diagnostic, codes};
use daec_expr::{CmpOp, ExprId, ExprPool, Func, Leaf, Node, Tape, TapeFrame, to_modelica};
use daec_model::{Dae, FlatNames};
use daec_regularize::Analysis;
use daec_solve::readable_number as show;
use daec_solve::{RisingEdge, Step, first_rising_edge, holds};
use daec_structure::{SigmaMatrix, dulmage_mendelsohn};

/// Rounds of the event iteration allowed at one time: a cascade of
/// `reinit`s through when clauses whose conditions each become true by the
/// one before takes one round per clause.
pub const MAX_EVENT_ITERATIONS: usize = 100;

/// Restarts of the integration allowed in a row without progress (each
/// less than [`stall_resolution`] after the one before): events piling up
/// at one time, or state-selection switches back and forth. Simulink stops
/// after 1000 consecutive zero crossings within its time tolerance; a
/// model whose events are this dense has lost its time scale long before.
pub const MAX_STALLED_RESTARTS: usize = 100;

/// Events of a run allowed by default (`--max-events`). An event costs a
/// restart of the integrator and a projection, about as much as a few
/// steps; a run that chatters reaches this many in seconds.
pub const DEFAULT_MAX_EVENTS: usize = 100_000;

/// The time below which a restart counts as no progress after the one
/// before: 1e-10 of the run's length (events this dense, kept up, would
/// number 1e10 per run; in a burst they are events whose time the
/// integration cannot tell apart — the location of an event on the dense
/// output is as accurate as the solution there), and at least 1e-12 of
/// `|t|` (some thousand units of round-off of `t`).
pub fn stall_resolution(t: f64, t0: f64, t_end: f64) -> f64 {
    (1e-12 * t.abs()).max(1e-10 * (t_end - t0).abs())
}

/// The compiled `when` events of a model.
#[derive(Debug, Clone)]
pub struct WhenEvents {
    /// `φ_k(t, z)` for every event, one tape (inputs `z`), and its frame
    /// (evaluated many times per step while an event is located).
    phi: Tape,
    phi_frame: TapeFrame,
    /// `dφ_k/dt` (inputs `z`, then `ż`) and its frame.
    rates: Tape,
    rates_frame: TapeFrame,
    /// Whether condition `k` is a strict comparison (holds where `φ > 0`).
    strict: Vec<bool>,
    /// The `reinit` targets of each event.
    targets: Vec<Vec<usize>>,
    /// All `reinit` values, one tape (inputs `z`), in event order.
    values: Tape,
    params: Vec<f64>,
    scratch: Vec<f64>,
    /// Each condition as written, for messages.
    conditions: Vec<String>,
    /// The unknowns each event involves (its condition's and its `reinit`
    /// targets), for messages.
    involved: Vec<Vec<usize>>,
    /// Flat names of the unknowns.
    names: Vec<String>,
    /// The assignments of discrete variables of each event: `(parameter,
    /// value)`, evaluated in order ([`WhenEvents::assign`]).
    assigns: Vec<Vec<(usize, ExprId)>>,
    /// The first event of each event's `when` statement.
    clause: Vec<usize>,
    /// The discrete variables: `(value parameter, pre parameter)`.
    discrete: Vec<(usize, usize)>,
    /// Whether each condition reads `initial()` or a `sample`: such a
    /// clause fires at the start if its condition holds there.
    at_start: Vec<bool>,
    /// The parameter of `initial()`.
    initial: Option<usize>,
    /// Whether each condition reads `terminal()`: such a clause fires at
    /// the end of a successful run if its condition holds there.
    at_end: Vec<bool>,
    /// The parameter of `terminal()`.
    terminal: Option<usize>,
    /// The `terminate` message of each event.
    terminate: Vec<Option<String>>,
    /// The assertions' conditions (inputs `z`, 1 where they hold) and
    /// their frame; `None` without assertions.
    asserts: Option<(Tape, TapeFrame)>,
    /// Whether each assertion is a warning, and whether it has warned.
    assert_warning: Vec<bool>,
    /// Each assertion's message and `assert(…)`.
    assert_messages: Vec<String>,
    assert_spans: Vec<daec_diag::Span>,
    warned: Vec<bool>,
    /// The warnings of the failed `AssertionLevel.warning` assertions.
    pub(crate) warnings: Vec<String>,
}

/// The values an assignment of a discrete variable reads: the unknowns at
/// the event, the parameters as assigned so far.
struct AtEvent<'a> {
    t: f64,
    z: &'a [f64],
    params: &'a [f64],
}

impl daec_expr::Env for AtEvent<'_> {
    fn var(&self, j: u32, order: u32) -> f64 {
        if order == 0 {
            self.z.get(j as usize).copied().unwrap_or(f64::NAN)
        } else {
            f64::NAN
        }
    }
    fn param(&self, p: daec_expr::ParamId) -> f64 {
        self.params.get(p.0 as usize).copied().unwrap_or(f64::NAN)
    }
    fn time(&self) -> f64 {
        self.t
    }
}

/// The event function of a Boolean condition and whether the condition is
/// strict (holds where `φ > 0`; see the module docs).
pub fn event_function(pool: &mut ExprPool, cond: ExprId) -> (ExprId, bool) {
    // (a relation in `noEvent` is the same relation here)
    let cond = match pool.node(cond) {
        Node::Func(Func::NoEvent, c) => c,
        _ => cond,
    };
    match pool.node(cond) {
        Node::Cmp(CmpOp::Gt, a, b) => (pool.sub(a, b), true),
        Node::Cmp(CmpOp::Ge, a, b) => (pool.sub(a, b), false),
        Node::Cmp(CmpOp::Lt, a, b) => (pool.sub(b, a), true),
        Node::Cmp(CmpOp::Le, a, b) => (pool.sub(b, a), false),
        _ => {
            let one = pool.constant(1.0);
            let minus = pool.constant(-1.0);
            (pool.select(cond, one, minus), true)
        }
    }
}

fn unknown_inputs(pool: &mut ExprPool, n: usize, order: u32) -> Vec<ExprId> {
    (0..n as u32).map(|j| pool.var(j, order)).collect()
}

/// Whether condition `c` reads `initial()` or a `sample`'s next time (a
/// parameter `$sample<k>`): clauses that fire at the start.
fn starts(dae: &Dae, c: ExprId) -> bool {
    dae.pool
        .leaves(c)
        .into_iter()
        .any(|l| match dae.pool.as_leaf(l) {
            Some(Leaf::Param(p)) => {
                Some(p.0) == dae.initial
                    || dae
                        .parameters
                        .get(p.0 as usize)
                        .is_some_and(|q| q.name.starts_with("$sample"))
            }
            _ => false,
        })
}

/// Whether condition `c` reads the parameter `p` (`terminal()`).
fn reads_param(dae: &Dae, c: ExprId, p: Option<u32>) -> bool {
    p.is_some_and(|p| {
        dae.pool
            .leaves(c)
            .into_iter()
            .any(|l| matches!(dae.pool.as_leaf(l), Some(Leaf::Param(q)) if q.0 == p))
    })
}

/// The unknowns (order 0) `e` depends on.
fn unknowns_of(pool: &ExprPool, e: ExprId) -> Vec<usize> {
    let mut out: Vec<usize> = pool
        .leaves(e)
        .into_iter()
        .filter_map(|l| match pool.as_leaf(l) {
            Some(Leaf::Var { unknown, .. }) => Some(unknown as usize),
            _ => None,
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// A condition as Modelica text; a comparison of a constant with what
/// varies is written with the constant on the right (the pool keeps
/// `w > 0` as `0 < w`).
pub(crate) fn condition_text(dae: &Dae, cond: ExprId) -> String {
    let pool = &dae.pool;
    let text = |e: ExprId| to_modelica(pool, e, &FlatNames(dae));
    let varies = |e: ExprId| {
        pool.leaves(e)
            .into_iter()
            .any(|l| matches!(pool.as_leaf(l), Some(Leaf::Var { .. } | Leaf::Time)))
    };
    match pool.node(cond) {
        Node::Cmp(op @ (CmpOp::Lt | CmpOp::Le), a, b) if !varies(a) && varies(b) => {
            let flipped = if op == CmpOp::Lt { ">" } else { ">=" };
            format!("{} {flipped} {}", text(b), text(a))
        }
        _ => text(cond),
    }
}

impl WhenEvents {
    /// Compiles the events of `dae`. Conditions and `reinit` values may
    /// depend on `time`, parameters and unknowns, not on derivatives.
    pub fn new(dae: &mut Dae) -> Result<Self, SimError> {
        let n = dae.unknowns.len();
        let inputs = unknown_inputs(&mut dae.pool, n, 0);
        let mut phis = Vec::new();
        let mut strict = Vec::new();
        let mut targets = Vec::new();
        let mut values = Vec::new();
        let mut conditions = Vec::new();
        let mut involved = Vec::new();
        for ev in dae.events.clone() {
            let (phi, s) = event_function(&mut dae.pool, ev.condition);
            phis.push(phi);
            strict.push(s);
            let t: Vec<usize> = ev.reinits.iter().map(|&(j, _)| j as usize).collect();
            let mut inv = unknowns_of(&dae.pool, ev.condition);
            for &j in &t {
                if !inv.contains(&j) {
                    inv.push(j);
                }
            }
            involved.push(inv);
            targets.push(t);
            values.extend(ev.reinits.iter().map(|&(_, v)| v));
            conditions.push(condition_text(dae, ev.condition));
        }
        let err = |e: daec_expr::TapeError| {
            SimError::unsupported(
                Unsupported::Event,
                format!("a `when` condition or `reinit` value depends on a derivative ({e})"),
            )
        };
        let phi = Tape::compile(&dae.pool, &phis, &inputs).map_err(err)?;
        let rate_roots: Vec<ExprId> = phis.iter().map(|&p| dae.pool.dt(p)).collect();
        let mut rate_inputs = inputs.clone();
        rate_inputs.extend(unknown_inputs(&mut dae.pool, n, 1));
        let rates = Tape::compile(&dae.pool, &rate_roots, &rate_inputs).map_err(err)?;
        let params = dae.parameter_values();
        let conds: Vec<ExprId> = dae.asserts.iter().map(|a| a.condition).collect();
        let asserts = if conds.is_empty() {
            None
        } else {
            let tape = Tape::compile(&dae.pool, &conds, &inputs).map_err(err)?;
            let frame = tape.frame(&params);
            Some((tape, frame))
        };
        Ok(Self {
            asserts,
            assert_warning: dae.asserts.iter().map(|a| a.warning).collect(),
            assert_messages: dae.asserts.iter().map(|a| a.message.clone()).collect(),
            assert_spans: dae.spans.asserts.clone(),
            warned: vec![false; dae.asserts.len()],
            warnings: Vec::new(),
            phi_frame: phi.frame(&params),
            phi,
            rates_frame: rates.frame(&params),
            rates,
            strict,
            targets,
            values: Tape::compile(&dae.pool, &values, &inputs).map_err(err)?,
            params,
            scratch: Vec::new(),
            conditions,
            involved,
            names: dae.unknowns.iter().map(|u| u.name().into_owned()).collect(),
            assigns: dae
                .events
                .iter()
                .map(|e| e.assigns.iter().map(|&(p, v)| (p as usize, v)).collect())
                .collect(),
            clause: dae.events.iter().map(|e| e.clause as usize).collect(),
            at_start: dae
                .events
                .iter()
                .map(|e| starts(dae, e.condition))
                .collect(),
            initial: dae.initial.map(|p| p as usize),
            at_end: dae
                .events
                .iter()
                .map(|e| reads_param(dae, e.condition, dae.terminal))
                .collect(),
            terminal: dae.terminal.map(|p| p as usize),
            terminate: dae.events.iter().map(|e| e.terminate.clone()).collect(),
            discrete: dae
                .discrete
                .iter()
                .map(|d| (d.param as usize, d.pre as usize))
                .collect(),
        })
    }

    /// Takes new parameter values (the discrete variables' after an
    /// event).
    pub fn set_params(&mut self, params: &[f64]) {
        if params == self.params.as_slice() {
            return;
        }
        self.params = params.to_vec();
        if let Some((tape, frame)) = &mut self.asserts {
            *frame = tape.frame(params);
        }
        self.phi_frame = self.phi.frame(params);
        self.rates_frame = self.rates.frame(params);
    }

    /// Checks the assertions at `(t, z)` (MLS 3.6 §8.3.7): a failed one is
    /// an error at its `assert`, or, at `AssertionLevel.warning`, a warning
    /// the first time.
    pub(crate) fn check_asserts(&mut self, t: f64, z: &[f64]) -> Result<(), SimError> {
        let Some((tape, frame)) = &mut self.asserts else {
            return Ok(());
        };
        let n = self.names.len().min(z.len());
        let mut out = vec![0.0; self.assert_warning.len()];
        tape.eval_frame(frame, t, &[&z[..n]], &mut out);
        for (k, &holds) in out.iter().enumerate() {
            if holds != 0.0 {
                continue;
            }
            let message = self.assert_messages[k].as_str();
            if !self.assert_warning[k] {
                let span = self.assert_spans.get(k);
                return Err(crate::places::assertion_failure(message, span, t));
            }
            if !std::mem::replace(&mut self.warned[k], true) {
                self.warnings
                    .push(format!("assertion failed at t = {}: {message}", show(t)));
            }
        }
        Ok(())
    }

    /// Whether the model has discrete variables.
    pub fn has_discrete(&self) -> bool {
        !self.discrete.is_empty()
    }

    /// Starts a round of the event iteration: `pre(v)` takes the value of
    /// every discrete variable `v` (in `dae`'s parameters).
    fn start_round(&self, dae: &mut Dae) {
        for &(p, pre) in &self.discrete {
            let v = dae.parameters[p].value;
            dae.parameters[pre].value = v;
        }
    }

    /// The assignments of event `k` at `(t, z)`, in order, into `dae`'s
    /// parameters (each sees the ones before it, `pre(v)` the values
    /// before the round).
    fn assign(&self, dae: &mut Dae, k: usize, t: f64, z: &[f64]) {
        let Some(list) = self.assigns.get(k) else {
            return;
        };
        if list.is_empty() {
            return;
        }
        let mut params = dae.parameter_values();
        for &(p, v) in list {
            let x = dae.pool.eval(
                v,
                &AtEvent {
                    t,
                    z,
                    params: &params,
                },
            );
            params[p] = x;
            dae.parameters[p].value = x;
        }
    }

    /// The discrete variables whose value differs from their `pre` value.
    fn changed(&self, dae: &Dae) -> Vec<usize> {
        self.discrete
            .iter()
            .filter(|&&(p, pre)| dae.parameters[p].value != dae.parameters[pre].value)
            .map(|&(p, _)| p)
            .collect()
    }

    /// `n = 3 (before 2), b = 1 (before 0)` for the discrete parameters
    /// `ps`.
    fn discrete_values(&self, dae: &Dae, ps: &[usize]) -> String {
        ps.iter()
            .filter_map(|&p| {
                let pre = self.discrete.iter().find(|d| d.0 == p)?.1;
                Some(format!(
                    "{} = {} (before {})",
                    dae.parameters[p].name,
                    show(dae.parameters[p].value),
                    show(dae.parameters[pre].value)
                ))
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Number of events.
    pub fn len(&self) -> usize {
        self.targets.len()
    }

    /// True if the model has no `when` events.
    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// Writes `φ_k(t, z)` for every event into `out`.
    pub fn eval(&mut self, t: f64, z: &[f64], out: &mut [f64]) {
        self.phi.eval_frame(&mut self.phi_frame, t, &[z], out);
    }

    /// Writes `dφ_k/dt` at `(t, z, ż)` for every event into `out`.
    pub fn eval_rates(&mut self, t: f64, z: &[f64], zdot: &[f64], out: &mut [f64]) {
        let n = self.names.len();
        let (z, zdot) = (&z[..n.min(z.len())], &zdot[..n.min(zdot.len())]);
        // (the inputs are the n unknowns, then their n derivatives)
        let mut both = Vec::with_capacity(2 * n);
        both.extend_from_slice(z);
        both.resize(n, f64::NAN);
        both.extend_from_slice(zdot);
        self.rates
            .eval_frame(&mut self.rates_frame, t, &[&both], out);
    }

    /// Whether condition `k` holds at the event-function value `phi`.
    pub fn holds(&self, k: usize, phi: f64) -> bool {
        holds(phi, self.strict.get(k).copied().unwrap_or(true))
    }

    /// The `reinit`s of event `k` evaluated at `(t, z)`: `(unknown, value)`.
    pub fn reinits(&mut self, k: usize, t: f64, z: &[f64]) -> Vec<(usize, f64)> {
        let mut all = vec![0.0; self.values.n_outputs()];
        self.values
            .eval(t, z, &self.params, &mut all, &mut self.scratch);
        let start: usize = self.targets[..k.min(self.targets.len())]
            .iter()
            .map(Vec::len)
            .sum();
        self.targets
            .get(k)
            .map(|ts| {
                ts.iter()
                    .enumerate()
                    .map(|(i, &j)| (j, all[start + i]))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `the when clause \`c\`` for messages.
    fn clause(&self, k: usize) -> String {
        format!(
            "the when clause `{}`",
            self.conditions.get(k).map_or("?", |s| s.as_str())
        )
    }

    /// `x = 1.5, v = -2` for the unknowns event `k` involves, at `z`.
    fn values_of(&self, k: usize, z: &[f64]) -> String {
        self.involved
            .get(k)
            .into_iter()
            .flatten()
            .filter_map(|&j| Some(format!("{} = {}", self.names.get(j)?, show(*z.get(j)?))))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Model errors for `reinit`s of unknowns that cannot be states (code
/// [`codes::REINIT_NOT_STATE`], at the `reinit`): unknowns of which no
/// derivative occurs (their offset `d_j` is 0: the equations determine
/// them from the states), and unknowns that every maximum matching of the
/// constraints `0 = H(t, z)` (hidden ones included) covers — the
/// constraints determine them, whatever the other unknowns are
/// (Dulmage–Mendelsohn: they lie outside the under-determined part), so a
/// `reinit` could not change them. Needs the analysis of `dae` (after the
/// first-order reduction); without a regular analysis or its constraints
/// nothing is reported.
pub fn reinit_diagnostics(dae: &Dae, analysis: &Analysis) -> Vec<Diagnostic> {
    let Some(reg) = analysis.regular() else {
        return Vec::new();
    };
    if dae.events.iter().all(|e| e.reinits.is_empty()) {
        return Vec::new();
    }
    let d = &reg.sigma.offsets.d;
    let n = dae.unknowns.len();
    let constraints = reg.constraints.as_ref().map(|c| &c.constraints[..]);
    let rows: Vec<Vec<usize>> = constraints
        .unwrap_or_default()
        .iter()
        .map(|c| {
            let mut r = unknowns_of(&dae.pool, c.expr);
            r.retain(|&j| j < n);
            r
        })
        .collect();
    let entries = rows
        .iter()
        .enumerate()
        .flat_map(|(i, r)| r.iter().map(move |&j| (i, j, 0u32)));
    let determined: Vec<bool> = match SigmaMatrix::try_from_entries(rows.len(), n, entries) {
        Ok(s) if !rows.is_empty() => {
            let dm = dulmage_mendelsohn(&s);
            let mut det = vec![true; n];
            for &j in &dm.under_cols {
                det[j] = false;
            }
            det
        }
        _ => vec![false; n],
    };
    let mut out = Vec::new();
    for (k, ev) in dae.events.iter().enumerate() {
        for (r, &(j, _)) in ev.reinits.iter().enumerate() {
            let j = j as usize;
            let Some(u) = dae.unknowns.get(j) else {
                continue;
            };
            let span = dae
                .spans
                .reinits
                .get(k)
                .and_then(|s| s.get(r))
                .or(dae.spans.events.get(k))
                .copied();
            let name = &u.name();
            let diag = if d.get(j) == Some(&0) {
                Diagnostic::error(
                    codes::REINIT_NOT_STATE,
                    format!("`reinit` of `{name}`, which is not a state"),
                )
                .with_note(format!(
                    "no derivative of `{name}` occurs in the model: the equations determine it from the states, so a `reinit` cannot change it"
                ))
            } else if determined.get(j) == Some(&true) {
                let by: Vec<String> = rows
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r.contains(&j))
                    .take(3)
                    .filter_map(|(i, _)| constraints?.get(i))
                    .map(|c| {
                        format!(
                            "0 = {} (level {})",
                            to_modelica(&dae.pool, c.expr, &FlatNames(dae)),
                            c.level
                        )
                    })
                    .collect();
                Diagnostic::error(
                    codes::REINIT_NOT_STATE,
                    format!("`reinit` of `{name}`, which the constraints determine"),
                )
                .with_note(format!(
                    "the constraints fix `{name}` whatever the other unknowns are ({}): it has no degree of freedom, so a `reinit` cannot change it",
                    by.join("; ")
                ))
            } else {
                continue;
            };
            let diag = diag.with_help(
                "re-initialise a state: an unknown whose derivative occurs and that the constraints leave free (Modelica allows `reinit` of states only, MLS §8.3.6)",
            );
            out.push(match span {
                Some(s) => diag.with_primary(s, format!("`{name}` cannot be re-initialised")),
                None => diag,
            });
        }
    }
    out
}

/// A `reinit` that reversed the direction of its condition's event
/// function while the condition still holds: the state should leave the
/// region where it holds.
#[derive(Debug, Clone, Copy)]
struct Bounce {
    /// Time of the event.
    t: f64,
    /// `φ` just after the event.
    phi: f64,
    /// Whether the reversal was confirmed on the first step after the
    /// event (`dφ/dt < 0` there).
    confirmed: bool,
}

/// Makes a state with re-initialised values consistent, the values marked
/// held (`init::reinitialize` at the event time).
pub(crate) type Projection<'a> =
    dyn FnMut(&mut Dae, &[f64], &[bool]) -> Result<Vec<f64>, SimError> + 'a;

/// The state of the `when` clauses along a run: which conditions hold,
/// what fired, and the counters that end loops (see the module docs).
#[derive(Debug)]
pub(crate) struct EventTracker {
    /// Whether each condition holds (its value before the next step).
    pre: Vec<bool>,
    /// Whether each condition is strict (see [`holds`]).
    strict: Vec<bool>,
    /// Events of each clause so far, with the times of the first and the
    /// last.
    fired: Vec<(usize, f64, f64)>,
    total: usize,
    max_events: usize,
    bounce: Vec<Option<Bounce>>,
    /// Restarts in a row without progress: the time of the first and of
    /// the last, the count, and the events of each clause among them.
    stall_since: f64,
    last_restart: f64,
    stalls: usize,
    stall_events: Vec<usize>,
    /// The run's interval, for [`stall_resolution`].
    span: (f64, f64),
    phi: Vec<f64>,
    /// `terminate(message)` fired: the time and the message.
    pub(crate) terminated: Option<(f64, String)>,
}

impl EventTracker {
    /// The clauses' state at the consistent initial point `(t0, z0)`.
    pub(crate) fn new(
        events: &mut WhenEvents,
        t0: f64,
        z0: &[f64],
        t_end: f64,
        max_events: usize,
    ) -> Self {
        let m = events.len();
        let mut phi = vec![0.0; m];
        events.eval(t0, z0, &mut phi);
        Self {
            pre: (0..m).map(|k| events.holds(k, phi[k])).collect(),
            strict: events.strict.clone(),
            fired: vec![(0, t0, t0); m],
            total: 0,
            max_events,
            bounce: vec![None; m],
            stall_since: t0,
            last_restart: t0,
            stalls: 0,
            stall_events: vec![0; m],
            span: (t0, t_end),
            phi,
            terminated: None,
        }
    }

    /// The first rising edge on `step` (see [`first_rising_edge`]).
    pub(crate) fn scan(&self, events: &mut WhenEvents, step: &Step<'_>) -> Option<RisingEdge> {
        if events.is_empty() {
            return None;
        }
        first_rising_edge(step, &self.pre, &self.strict, |t, z, out| {
            events.eval(t, z, out)
        })
    }

    /// After an accepted step, integrated up to `t` (its end, or the edge
    /// found on it) where the solution is `z`: the conditions' values at
    /// the end (when no edge stopped the step) and the bounces watched.
    pub(crate) fn after_step(
        &mut self,
        events: &mut WhenEvents,
        step: &Step<'_>,
        t: f64,
        z: &[f64],
        edge: Option<&RisingEdge>,
    ) -> Result<(), SimError> {
        if events.is_empty() {
            return Ok(());
        }
        let m = events.len();
        self.confirm_bounces(events, step);
        events.eval(t, z, &mut self.phi);
        for k in 0..m {
            let now = events.holds(k, self.phi[k]);
            if edge.is_none() {
                self.pre[k] = now;
            }
            let Some(b) = self.bounce[k] else { continue };
            // an edge of the clause: its condition was false in between
            if !now || edge.is_some_and(|e| e.events.contains(&k)) {
                self.bounce[k] = None;
            } else if b.confirmed && self.phi[k] > b.phi && t > b.t {
                let (n, first, _) = self.fired[k];
                let cause = FailureCause::EventAccumulation { events: n };
                return Err(SimError::numerical(
                    b.t,
                    cause,
                    format!(
                        "events accumulate at t = {}: {} fired at t = {} and its reinit turned the state back, but it returned into the region where the condition holds without leaving it, so the clause cannot fire again (a bounce too small to resolve: Zeno behaviour); the clause fired {n} times between t = {} and t = {}; at t = {}: {}",
                        show(b.t),
                        events.clause(k),
                        show(b.t),
                        show(first),
                        show(b.t),
                        show(t),
                        events.values_of(k, z)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// On the first step after an event: a bounce is confirmed where the
    /// event function decreases at the step start (the derivative of the
    /// dense output there), dropped otherwise.
    fn confirm_bounces(&mut self, events: &mut WhenEvents, step: &Step<'_>) {
        if !self
            .bounce
            .iter()
            .flatten()
            .any(|b| !b.confirmed && b.t == step.t_start)
        {
            return;
        }
        let n = step.n();
        let (mut z, mut zdot) = (vec![0.0; n], vec![0.0; n]);
        step.dense(step.t_start, &mut z);
        step.dense_derivative(step.t_start, &mut zdot);
        let mut rate = vec![0.0; events.len()];
        events.eval_rates(step.t_start, &z, &zdot, &mut rate);
        for (b, &r) in self.bounce.iter_mut().zip(&rate) {
            if let Some(x) = b
                && !x.confirmed
            {
                if x.t == step.t_start && r < 0.0 {
                    x.confirmed = true;
                } else {
                    *b = None;
                }
            }
        }
    }

    /// Fires the clauses of `edge` at `t` (the solution there is `z`, the
    /// values before the event), then runs the event iteration; `project`
    /// makes a state with re-initialised values consistent (the values
    /// marked held). A `reinit` value that is not finite is a failure at
    /// that `reinit` (`places::check_reinits`). Returns the number of
    /// events.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn fire(
        &mut self,
        dae: &mut Dae,
        events: &mut WhenEvents,
        edge: &RisingEdge,
        t: f64,
        z: &mut Vec<f64>,
        n_orig: usize,
        project: &mut Projection<'_>,
    ) -> Result<usize, SimError> {
        let m = events.len();
        let mut phi = vec![0.0; m];
        events.eval(t, z, &mut phi);
        let mut pre = self.pre.clone();
        let mut cur: Vec<bool> = (0..m).map(|k| events.holds(k, phi[k])).collect();
        // a located edge fires even if the value at the projected point
        // rounds to the other side
        for &k in &edge.events {
            pre[k] = false;
            cur[k] = true;
        }
        let mut count = 0;
        let mut changed: Vec<usize> = Vec::new();
        for round in 0.. {
            let mut fire: Vec<usize> = (0..m).filter(|&k| cur[k] && !pre[k]).collect();
            // of the branches of one `when` statement the first fires
            // (MLS 3.6 §8.3.5)
            let mut seen = Vec::new();
            fire.retain(|&k| {
                let c = events.clause.get(k).copied().unwrap_or(k);
                let first = !seen.contains(&c);
                seen.push(c);
                first
            });
            pre.clone_from(&cur);
            if fire.is_empty() {
                break;
            }
            if round >= MAX_EVENT_ITERATIONS {
                let which: Vec<String> = fire.iter().map(|&k| events.clause(k)).collect();
                let cause = FailureCause::EventIteration {
                    rounds: MAX_EVENT_ITERATIONS,
                };
                let discrete = if changed.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; the discrete variables keep changing: {}",
                        events.discrete_values(dae, &changed)
                    )
                };
                return Err(SimError::numerical(
                    t,
                    cause,
                    format!(
                        "the event iteration at t = {} does not end: after {MAX_EVENT_ITERATIONS} rounds {} fires again{discrete}; {}",
                        show(t),
                        which.join(", "),
                        events.values_of(fire[0], z)
                    ),
                ));
            }
            let mut held = vec![false; z.len()];
            let mut assigned = Vec::new();
            for &k in &fire {
                let values = events.reinits(k, t, z);
                crate::places::check_reinits(dae, k, t, &values)?;
                assigned.extend(values.into_iter().filter(|&(j, _)| j < n_orig));
            }
            events.start_round(dae);
            for &k in &fire {
                events.assign(dae, k, t, z);
                if let Some(m) = events.terminate.get(k).cloned().flatten() {
                    self.terminated.get_or_insert((t, m));
                }
            }
            changed = events.changed(dae);
            if !changed.is_empty() {
                events.set_params(&dae.parameter_values());
            }
            for (j, v) in assigned {
                z[j] = v;
                held[j] = true;
            }
            if held.iter().any(|&h| h) || !changed.is_empty() {
                *z = project(dae, z, &held).map_err(|mut e| {
                    if let SimError::Numerical(failure) = &mut e {
                        let clauses: Vec<String> = fire.iter().map(|&k| events.clause(k)).collect();
                        failure.message = format!("{}: {}", clauses.join(", "), failure.message);
                    }
                    e
                })?;
            }
            for &k in &fire {
                self.count(k, t);
            }
            count += fire.len();
            if self.total > self.max_events {
                let k = fire[0];
                let cause = FailureCause::TooManyEvents {
                    limit: self.max_events,
                };
                return Err(SimError::numerical(
                    t,
                    cause,
                    format!(
                        "more than {} events (--max-events): {} fired {} times, the last at t = {}; {}; if the model really has this many events, raise --max-events",
                        self.max_events,
                        events.clause(k),
                        self.fired[k].0,
                        show(t),
                        events.values_of(k, z)
                    ),
                ));
            }
            let before = phi.clone();
            events.eval(t, z, &mut phi);
            cur = (0..m).map(|k| events.holds(k, phi[k])).collect();
            for &k in &fire {
                // still holding: watch for a bounce (confirmed on the next
                // step); a reinit that moved the state deeper into the
                // region is not one
                self.bounce[k] = (cur[k] && phi[k] <= before[k].max(0.0)).then_some(Bounce {
                    t,
                    phi: phi[k],
                    confirmed: false,
                });
            }
        }
        self.pre = pre;
        // between events `pre(v)` is `v`
        events.start_round(dae);
        events.set_params(&dae.parameter_values());
        events.check_asserts(t, &z[..n_orig.min(z.len())])?;
        Ok(count)
    }

    /// Fires at the start `(t0, z)` the clauses of `initial()` and of the
    /// `sample`s due then (MLS 3.6 §8.6: `initial()` is true during the
    /// initialisation, and `sample(t0, …)` fires there), with
    /// `initial()` true for that event iteration. Returns the number of
    /// events.
    pub(crate) fn fire_at_start(
        &mut self,
        dae: &mut Dae,
        events: &mut WhenEvents,
        t0: f64,
        z: &mut Vec<f64>,
        n_orig: usize,
        project: &mut Projection<'_>,
    ) -> Result<usize, SimError> {
        let flag = (events.initial, events.at_start.clone());
        self.fire_flagged(dae, events, flag, t0, z, n_orig, project)
    }

    /// Fires at the end `(t_end, z)` of a successful run (at `t_end` or at
    /// a `terminate`) the clauses of
    /// `terminal()` (MLS 3.6 §3.7.5: `terminal()` is true at the end of a
    /// successful analysis), with `terminal()` true for that event
    /// iteration. Returns the number of events.
    pub(crate) fn fire_at_end(
        &mut self,
        dae: &mut Dae,
        events: &mut WhenEvents,
        t_end: f64,
        z: &mut Vec<f64>,
        n_orig: usize,
        project: &mut Projection<'_>,
    ) -> Result<usize, SimError> {
        let flag = (events.terminal, events.at_end.clone());
        self.fire_flagged(dae, events, flag, t_end, z, n_orig, project)
    }

    /// Fires at `t` the clauses marked in `which` whose condition holds
    /// with the Boolean parameter `flag` (`initial()` or `terminal()`)
    /// true, then sets it false again.
    #[allow(clippy::too_many_arguments)]
    fn fire_flagged(
        &mut self,
        dae: &mut Dae,
        events: &mut WhenEvents,
        (flag, which): (Option<usize>, Vec<bool>),
        t0: f64,
        z: &mut Vec<f64>,
        n_orig: usize,
        project: &mut Projection<'_>,
    ) -> Result<usize, SimError> {
        if !which.iter().any(|&a| a) {
            return Ok(0);
        }
        let set_initial = |dae: &mut Dae, events: &mut WhenEvents, v: f64| {
            if let Some(p) = flag {
                dae.parameters[p].value = v;
                events.set_params(&dae.parameter_values());
            }
        };
        set_initial(dae, events, 1.0);
        let mut phi = vec![0.0; events.len()];
        events.eval(t0, z, &mut phi);
        let due: Vec<usize> = (0..events.len())
            .filter(|&k| which[k] && events.holds(k, phi[k]))
            .collect();
        let fired = if due.is_empty() {
            Ok(0)
        } else {
            let edge = RisingEdge { t: t0, events: due };
            self.fire(dae, events, &edge, t0, z, n_orig, project)
        };
        set_initial(dae, events, 0.0);
        events.eval(t0, z, &mut phi);
        for (k, &x) in phi.iter().enumerate() {
            self.pre[k] = events.holds(k, x);
        }
        fired
    }

    /// Counts `k` state events of relations at `t` against `--max-events`
    /// (`what` names the relations for the message).
    pub(crate) fn count_state_events(
        &mut self,
        k: usize,
        t: f64,
        what: impl FnOnce() -> String,
    ) -> Result<(), SimError> {
        self.total += k;
        if self.total > self.max_events {
            let cause = FailureCause::TooManyEvents {
                limit: self.max_events,
            };
            return Err(SimError::numerical(
                t,
                cause,
                format!(
                    "more than {} events (--max-events), the last at t = {} of the relation {}; if the model really has this many events, raise --max-events",
                    self.max_events,
                    show(t),
                    what()
                ),
            ));
        }
        Ok(())
    }

    fn count(&mut self, k: usize, t: f64) {
        let f = &mut self.fired[k];
        if f.0 == 0 {
            f.1 = t;
        }
        f.0 += 1;
        f.2 = t;
        self.total += 1;
        self.stall_events[k] += 1;
    }

    /// A restart of the integration at `t` (after events, a discontinuity
    /// or a state-selection switch): counts restarts without progress and
    /// stops after [`MAX_STALLED_RESTARTS`] in a row (see the module docs).
    pub(crate) fn restart(
        &mut self,
        events: &WhenEvents,
        t: f64,
        z: &[f64],
        why: &str,
    ) -> Result<(), SimError> {
        let (t0, t_end) = self.span;
        let gap = t - std::mem::replace(&mut self.last_restart, t);
        if gap > stall_resolution(t, t0, t_end) {
            self.stall_since = t;
            self.stalls = 0;
            self.stall_events.iter_mut().for_each(|c| *c = 0);
            return Ok(());
        }
        self.stalls += 1;
        if self.stalls <= MAX_STALLED_RESTARTS {
            return Ok(());
        }
        let busiest = (0..self.stall_events.len())
            .filter(|&k| self.stall_events[k] > 0)
            .max_by_key(|&k| self.stall_events[k]);
        let dt = t - self.stall_since;
        let (cause, message) = match busiest {
            Some(k) => (
                FailureCause::EventAccumulation {
                    events: self.stall_events.iter().sum(),
                },
                format!(
                    "events accumulate at t = {}: {} events within {} ({} fired {} times; the time between events shrinks to nothing, or its reinit sets the condition up to fire again at once: Zeno behaviour or chattering); {}",
                    show(t),
                    self.stall_events.iter().sum::<usize>(),
                    show(dt),
                    events.clause(k),
                    self.stall_events[k],
                    events.values_of(k, z)
                ),
            ),
            None => (
                FailureCause::NoProgress {
                    restarts: self.stalls,
                },
                format!(
                    "no progress at t = {}: the integration restarted {} times within {} ({why})",
                    show(t),
                    self.stalls,
                    show(dt)
                ),
            ),
        };
        Err(SimError::numerical(t, cause, message))
    }
}

/// The time-only switching expressions under `roots`: conditions of
/// `Select` nodes, and `floor`/`ceil` applications (time events, MLS 3.6
/// §3.7.2: `floor(time/T)` jumps at the multiples of `T` wherever it
/// occurs), that depend on `time` and nothing but parameters besides.
pub fn time_conditions(pool: &ExprPool, roots: &[ExprId]) -> Vec<ExprId> {
    let mut out = Vec::new();
    for id in pool.topo_order(roots) {
        let switching = match pool.node(id) {
            Node::Select(c, _, _) => c,
            Node::Func(Func::Floor | Func::Ceil, _) => id,
            _ => continue,
        };
        let leaves = pool.leaves(switching);
        let has_time = leaves.iter().any(|&l| pool.as_leaf(l) == Some(Leaf::Time));
        let only_time = leaves
            .iter()
            .all(|&l| matches!(pool.as_leaf(l), Some(Leaf::Time | Leaf::Param(_))));
        if has_time && only_time && !out.contains(&switching) {
            out.push(switching);
        }
    }
    out
}

/// Samples per unit interval of the discontinuity search (at least 2000
/// samples over `[t0, t_end]`).
const SAMPLES: usize = 2000;

/// The switching times in `(t0, t_end)` of the time-only conditions
/// `conds` (see [`time_conditions`]), ascending: the times where the value
/// of one changes. Each is returned as the last time (to about 1e-15
/// relative) at which the value is still the one from the left, so that
/// an integration ending there never evaluates the model on the other side
/// (a switch at `t_end` itself gives the breakpoint one unit of round-off
/// before it, which the driver steps to and no further).
pub fn discontinuities(
    pool: &ExprPool,
    conds: &[ExprId],
    params: &[f64],
    t0: f64,
    t_end: f64,
) -> Vec<f64> {
    let m = conds.len();
    if m == 0 || t_end.partial_cmp(&t0) != Some(std::cmp::Ordering::Greater) {
        return Vec::new();
    }
    let Ok(tape) = Tape::compile(pool, conds, &[]) else {
        return Vec::new();
    };
    let mut scratch = Vec::new();
    let mut eval = |t: f64, out: &mut [f64]| tape.eval(t, &[], params, out, &mut scratch);
    let mut a = vec![0.0; m];
    let mut b = vec![0.0; m];
    let mut mid = vec![0.0; m];
    let mut out = Vec::new();
    eval(t0, &mut a);
    let mut ta = t0;
    for s in 1..=SAMPLES {
        let tb = t0 + (t_end - t0) * s as f64 / SAMPLES as f64;
        eval(tb, &mut b);
        for k in 0..m {
            if a[k] != b[k] {
                // bisection: lo keeps a's value, hi has b's
                let (mut lo, mut hi) = (ta, tb);
                for _ in 0..200 {
                    let c = 0.5 * (lo + hi);
                    if c <= lo || c >= hi {
                        break;
                    }
                    eval(c, &mut mid);
                    if mid[k] == a[k] {
                        lo = c;
                    } else {
                        hi = c;
                    }
                }
                if lo > t0 && lo < t_end {
                    out.push(lo);
                }
            }
        }
        std::mem::swap(&mut a, &mut b);
        ta = tb;
    }
    out.sort_by(f64::total_cmp);
    out.dedup_by(|x, y| (*x - *y).abs() <= 1e-14 * y.abs().max(1.0));
    out
}
