//! Events: `when` conditions located on the dense output, `reinit`, and
//! if-expressions on `time` treated as discontinuities.
//!
//! * A `when` condition `c` becomes an *event function* `φ(t, z)` that is
//!   `≥ 0` exactly where `c` holds: `a − b` for `a ≥ b` / `a > b`, `b − a`
//!   for `a ≤ b` / `a < b`, and `±1` (the truth value) for any other
//!   Boolean expression. The event fires on a rising edge of `c` (Modelica
//!   `when` semantics), located by root finding on the collocation
//!   polynomial of the step ([`daec_solve::locate_event`]; Hairer, Nørsett
//!   & Wanner, Solving ODEs I, II.6). A fired event is re-armed when its
//!   condition becomes false again.
//! * `Select` nodes whose condition depends on `time` (and parameters)
//!   only are discontinuities known in advance: their switching times are
//!   found by sampling and bisection, and the integration steps to them
//!   and restarts (RADAU5's error control is only valid on smooth pieces).

use crate::error::SimError;
use daec_expr::{CmpOp, ExprId, ExprPool, Leaf, Node, Tape, TapeFrame};
use daec_model::Dae;

/// The compiled `when` events of a model.
#[derive(Debug)]
pub struct WhenEvents {
    /// `φ_k(t, z)` for every event, one tape (inputs `z`), and its frame
    /// (evaluated many times per step while an event is located).
    phi: Tape,
    phi_frame: TapeFrame,
    /// The `reinit` targets of each event.
    targets: Vec<Vec<usize>>,
    /// All `reinit` values, one tape (inputs `z`), in event order.
    values: Tape,
    params: Vec<f64>,
    scratch: Vec<f64>,
}

/// The event function of a Boolean condition (see the module docs).
pub fn event_function(pool: &mut ExprPool, cond: ExprId) -> ExprId {
    match pool.node(cond).clone() {
        Node::Cmp(CmpOp::Ge | CmpOp::Gt, a, b) => pool.sub(a, b),
        Node::Cmp(CmpOp::Le | CmpOp::Lt, a, b) => pool.sub(b, a),
        _ => {
            let one = pool.constant(1.0);
            let minus = pool.constant(-1.0);
            pool.select(cond, one, minus)
        }
    }
}

fn unknown_inputs(pool: &mut ExprPool, n: usize) -> Vec<ExprId> {
    (0..n as u32).map(|j| pool.var(j, 0)).collect()
}

impl WhenEvents {
    /// Compiles the events of `dae`. Conditions and `reinit` values may
    /// depend on `time`, parameters and unknowns, not on derivatives.
    pub fn new(dae: &mut Dae) -> Result<Self, SimError> {
        let n = dae.unknowns.len();
        let inputs = unknown_inputs(&mut dae.pool, n);
        let mut phis = Vec::new();
        let mut targets = Vec::new();
        let mut values = Vec::new();
        for ev in dae.events.clone() {
            phis.push(event_function(&mut dae.pool, ev.condition));
            targets.push(ev.reinits.iter().map(|&(j, _)| j as usize).collect());
            values.extend(ev.reinits.iter().map(|&(_, v)| v));
        }
        let err = |e: daec_expr::TapeError| {
            SimError::Unsupported(format!(
                "a `when` condition or `reinit` value depends on a derivative ({e})"
            ))
        };
        let phi = Tape::compile(&dae.pool, &phis, &inputs).map_err(err)?;
        let params = dae.parameter_values();
        Ok(Self {
            phi_frame: phi.frame(&params),
            phi,
            targets,
            values: Tape::compile(&dae.pool, &values, &inputs).map_err(err)?,
            params,
            scratch: Vec::new(),
        })
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
}

/// Conditions of `Select` nodes under `roots` that depend on `time` and
/// nothing but parameters besides.
pub fn time_conditions(pool: &ExprPool, roots: &[ExprId]) -> Vec<ExprId> {
    let mut out = Vec::new();
    for id in pool.topo_order(roots) {
        if let Node::Select(c, _, _) = pool.node(id) {
            let leaves = pool.leaves(*c);
            let has_time = leaves.iter().any(|&l| pool.as_leaf(l) == Some(Leaf::Time));
            let only_time = leaves
                .iter()
                .all(|&l| matches!(pool.as_leaf(l), Some(Leaf::Time | Leaf::Param(_))));
            if has_time && only_time && !out.contains(c) {
                out.push(*c);
            }
        }
    }
    out
}

/// Samples per unit interval of the discontinuity search (at least 2000
/// samples over `[t0, t_end]`).
const SAMPLES: usize = 2000;

/// The switching times in `(t0, t_end)` of the time-only conditions
/// `conds` (see [`time_conditions`]), ascending. Each is returned as the
/// last time (to about 1e-15 relative) at which the condition still has
/// its value from the left, so that an integration ending there never
/// evaluates the model on the other side.
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
