//! Direct (non-recursive) evaluation of the DAG with the scalar semantics
//! of [`crate::scalar`]: the values of the leaves come from an [`Env`].

use crate::node::{Callee, ExprId, Leaf, Node, ParamId};
use crate::pool::ExprPool;
use crate::query::IdMap;
use crate::scalar::{eval_op, powi};

/// Values of the leaves, for [`ExprPool::eval`].
pub trait Env {
    /// Value of the `order`-th derivative of unknown `unknown`.
    fn var(&self, unknown: u32, order: u32) -> f64;
    /// Value of parameter `p`.
    fn param(&self, p: ParamId) -> f64;
    /// Value of `time`.
    fn time(&self) -> f64;
}

pub(crate) fn eval_leaf(l: Leaf, env: &dyn Env) -> f64 {
    match l {
        Leaf::Time => env.time(),
        Leaf::Param(p) => env.param(p),
        Leaf::Var { unknown, order } => env.var(unknown, order),
    }
}

impl ExprPool {
    /// The value of output `callee` of its function on `args`: NaN when
    /// the call fails (its loops run beyond the limit).
    pub fn call_value(&self, callee: Callee, args: &[f64]) -> f64 {
        self.function(callee.function())
            .call(args)
            .ok()
            .and_then(|out| out.get(callee.output()).copied())
            .unwrap_or(f64::NAN)
    }

    /// Evaluates `e` directly (one forward pass over the nodes `e` depends
    /// on, no recursion). For repeated evaluation compile a [`crate::Tape`].
    pub fn eval(&self, e: ExprId, env: &dyn Env) -> f64 {
        let order = self.topo_order(&[e]);
        let mut vals: IdMap<f64> = IdMap::for_traversal(&order, self.len());
        for (k, &id) in order.iter().enumerate() {
            let v = match self.node(id) {
                Node::Leaf(l) => eval_leaf(l, env),
                Node::Call(f, args) => {
                    let args: Vec<f64> = args
                        .iter()
                        .map(|&c| vals.get(c).unwrap_or(f64::NAN))
                        .collect();
                    self.call_value(f, &args)
                }
                n => eval_op(&n, |c| vals.get(c).unwrap_or(f64::NAN)),
            };
            vals.insert_at(k, id, v);
        }
        vals.get(e).unwrap_or(f64::NAN)
    }

    /// Evaluates `e` as [`ExprPool::eval`] does and also returns the scale
    /// the value was computed at: the sum of the scales of a sum's terms,
    /// the product of a product's factors' scales, a positive integer
    /// power of its base's scale, the chosen branch's scale for an `if`,
    /// and `|value|` for every other node. `|value| ≪ scale` means the value
    /// is what is left after cancellation in sums, so a value that is zero
    /// up to rounding can be told from one that is small because of the
    /// model's units (a capacitance of 1e-13 F is small, not zero).
    pub fn eval_with_scale(&self, e: ExprId, env: &dyn Env) -> (f64, f64) {
        let order = self.topo_order(&[e]);
        let mut vals: IdMap<(f64, f64)> = IdMap::for_traversal(&order, self.len());
        for (k, &id) in order.iter().enumerate() {
            let node = self.node(id);
            let value = match node {
                Node::Leaf(l) => eval_leaf(l, env),
                Node::Call(f, args) => {
                    let args: Vec<f64> = args
                        .iter()
                        .map(|&c| vals.get(c).map_or(f64::NAN, |p| p.0))
                        .collect();
                    self.call_value(f, &args)
                }
                n => eval_op(&n, |c| vals.get(c).map_or(f64::NAN, |p| p.0)),
            };
            let scale_of = |c: ExprId| vals.get(c).map_or(f64::NAN, |p| p.1);
            let scale = match node {
                Node::Add(ts) => ts.iter().map(|&t| scale_of(t)).sum(),
                Node::Mul(fs) => fs.iter().map(|&f| scale_of(f)).product(),
                Node::Powi(a, n) if n > 0 => powi(scale_of(a), n),
                Node::Select(c, a, b) => {
                    let taken = vals.get(c).is_some_and(|p| p.0 != 0.0);
                    scale_of(if taken { a } else { b })
                }
                _ => value.abs(),
            };
            vals.insert_at(k, id, (value, scale));
        }
        vals.get(e).unwrap_or((f64::NAN, f64::NAN))
    }
}
