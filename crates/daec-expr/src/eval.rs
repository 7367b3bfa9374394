//! Direct (non-recursive) evaluation of the DAG with the scalar semantics
//! of [`crate::scalar`]: the values of the leaves come from an [`Env`].

use crate::node::{ExprId, Leaf, Node, ParamId};
use crate::pool::ExprPool;
use crate::query::IdMap;
use crate::scalar::eval_op;

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
    /// Evaluates `e` directly (one forward pass over the nodes `e` depends
    /// on, no recursion). For repeated evaluation compile a [`crate::Tape`].
    pub fn eval(&self, e: ExprId, env: &dyn Env) -> f64 {
        let order = self.topo_order(&[e]);
        let mut vals: IdMap<f64> = IdMap::for_traversal(order.len(), self.len());
        for &id in &order {
            let v = match self.node(id) {
                Node::Leaf(l) => eval_leaf(*l, env),
                n => eval_op(n, |c| vals.get(c).unwrap_or(f64::NAN)),
            };
            vals.insert(id, v);
        }
        vals.get(e).unwrap_or(f64::NAN)
    }
}
