//! Scalar semantics of every node kind and direct (non-recursive) evaluation.
//!
//! The functions here define the numeric meaning of the DAG; [`crate::Tape`]
//! uses the same functions and the same operation order, so tape and direct
//! evaluation agree bit for bit.
//! Undefined operations give NaN or ±inf (IEEE 754), never a panic.

use crate::pool::{CmpOp, ExprId, ExprPool, Func, Func2, Leaf, Node, ParamId};
use crate::query::IdMap;

/// Values of the leaves, for [`ExprPool::eval`].
pub trait Env {
    /// Value of the `order`-th derivative of unknown `unknown`.
    fn var(&self, unknown: u32, order: u32) -> f64;
    /// Value of parameter `p`.
    fn param(&self, p: ParamId) -> f64;
    /// Value of `time`.
    fn time(&self) -> f64;
}

/// Applies a unary function. `sign` is −1, 0 or 1 (NaN for NaN), matching
/// Modelica's `sign`.
#[inline]
pub fn apply_func(f: Func, x: f64) -> f64 {
    match f {
        Func::Sin => x.sin(),
        Func::Cos => x.cos(),
        Func::Tan => x.tan(),
        Func::Asin => x.asin(),
        Func::Acos => x.acos(),
        Func::Atan => x.atan(),
        Func::Sinh => x.sinh(),
        Func::Cosh => x.cosh(),
        Func::Tanh => x.tanh(),
        Func::Exp => x.exp(),
        Func::Log => x.ln(),
        Func::Log10 => x.log10(),
        Func::Sqrt => x.sqrt(),
        Func::Abs => x.abs(),
        Func::Sign => {
            if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else if x == 0.0 {
                0.0
            } else {
                f64::NAN
            }
        }
        Func::Floor => x.floor(),
        Func::Ceil => x.ceil(),
    }
}

/// `x^n` by binary powering: the multiplications of `__powidf2` (LLVM's
/// `f64::powi` for an exponent not known at compile time) in the same
/// order, so the value is the same bit for bit, without the library call.
#[inline]
pub fn powi(mut x: f64, n: i32) -> f64 {
    let mut r = 1.0;
    let mut b = n;
    loop {
        if b & 1 != 0 {
            r *= x;
        }
        b /= 2;
        if b == 0 {
            break;
        }
        x *= x;
    }
    if n < 0 { 1.0 / r } else { r }
}

/// Applies a binary function. `min`/`max` propagate NaN.
pub fn apply_func2(f: Func2, a: f64, b: f64) -> f64 {
    match f {
        Func2::Atan2 => a.atan2(b),
        Func2::Min => {
            if a.is_nan() || b.is_nan() {
                f64::NAN
            } else {
                a.min(b)
            }
        }
        Func2::Max => {
            if a.is_nan() || b.is_nan() {
                f64::NAN
            } else {
                a.max(b)
            }
        }
    }
}

/// Applies a comparison: 1.0 if it holds, 0.0 otherwise (IEEE semantics:
/// every comparison with NaN is false except `<>`).
pub fn apply_cmp(op: CmpOp, a: f64, b: f64) -> f64 {
    let r = match op {
        CmpOp::Lt => a < b,
        CmpOp::Le => a <= b,
        CmpOp::Gt => a > b,
        CmpOp::Ge => a >= b,
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
    };
    f64::from(r)
}

/// Value of a non-leaf, non-constant node from the values of its children
/// (`get` maps a child id to its value).
#[inline]
pub(crate) fn eval_op(node: &Node, get: impl Fn(ExprId) -> f64) -> f64 {
    match node {
        Node::Const(v) => *v,
        Node::Leaf(_) => f64::NAN,
        Node::Add(ts) => ts.iter().fold(-0.0, |s, &t| s + get(t)),
        Node::Mul(fs) => fs.iter().fold(1.0, |p, &f| p * get(f)),
        Node::Powi(a, 2) => {
            let x = get(*a);
            x * x
        }
        Node::Powi(a, -1) => 1.0 / get(*a),
        Node::Powi(a, n) => powi(get(*a), *n),
        Node::Pow(a, b) => get(*a).powf(get(*b)),
        Node::Func(f, a) => apply_func(*f, get(*a)),
        Node::Func2(f, a, b) => apply_func2(*f, get(*a), get(*b)),
        Node::Cmp(op, a, b) => apply_cmp(*op, get(*a), get(*b)),
        Node::And(a, b) => f64::from(get(*a) != 0.0 && get(*b) != 0.0),
        Node::Or(a, b) => f64::from(get(*a) != 0.0 || get(*b) != 0.0),
        Node::Not(a) => f64::from(get(*a) == 0.0),
        Node::Select(c, a, b) => {
            if get(*c) != 0.0 {
                get(*a)
            } else {
                get(*b)
            }
        }
    }
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
        let mut vals: IdMap<(f64, f64)> = IdMap::for_traversal(order.len(), self.len());
        for &id in &order {
            let node = self.node(id);
            let value = match node {
                Node::Leaf(l) => eval_leaf(*l, env),
                n => eval_op(n, |c| vals.get(c).map_or(f64::NAN, |p| p.0)),
            };
            let scale_of = |c: ExprId| vals.get(c).map_or(f64::NAN, |p| p.1);
            let scale = match node {
                Node::Add(ts) => ts.iter().map(|&t| scale_of(t)).sum(),
                Node::Mul(fs) => fs.iter().map(|&f| scale_of(f)).product(),
                Node::Powi(a, n) if *n > 0 => powi(scale_of(*a), *n),
                Node::Select(c, a, b) => {
                    let taken = vals.get(*c).is_some_and(|p| p.0 != 0.0);
                    scale_of(if taken { *a } else { *b })
                }
                _ => value.abs(),
            };
            vals.insert(id, (value, scale));
        }
        vals.get(e).unwrap_or((f64::NAN, f64::NAN))
    }
}
