//! Scalar semantics of every node kind: the functions, powers and
//! comparisons applied to numbers, and the value of a node from its
//! children's (`eval_op`). Constant folding in the pool, direct
//! evaluation and [`crate::Tape`] use these same functions in the same
//! operation order, so they agree bit for bit. Undefined operations give
//! NaN or ±inf (IEEE 754), never a panic.

use crate::node::{CmpOp, ExprId, Func, Func2, Node};

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
        Func::NoEvent => x,
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
    apply_op(node, |k| get(nth_child(node, k)))
}

/// The `k`-th child of `node`, in the order of [`Node::children`].
#[inline]
fn nth_child(node: &Node, k: usize) -> ExprId {
    match node {
        Node::Add(c) | Node::Mul(c) | Node::Call(_, c) => c[k],
        Node::Powi(a, _) | Node::Func(_, a) | Node::Not(a) => *a,
        Node::Pow(a, b)
        | Node::Func2(_, a, b)
        | Node::Cmp(_, a, b)
        | Node::And(a, b)
        | Node::Or(a, b) => [*a, *b][k],
        Node::Select(c, a, b) => [*c, *a, *b][k],
        Node::Const(_) | Node::Leaf(_) => ExprId(0),
    }
}

/// Value of an operation node from the values of its children by
/// position (`get(k)` is the value of its `k`-th child, in the order of
/// [`Node::children`]): the numeric meaning of every node kind, shared by
/// the pool's evaluation and programs that store their nodes' values by
/// position. A leaf and a call (which needs its function) give NaN.
#[inline]
pub fn apply_op(node: &Node, get: impl Fn(usize) -> f64) -> f64 {
    match node {
        Node::Const(v) => *v,
        Node::Leaf(_) => f64::NAN,
        Node::Add(ts) => (0..ts.len()).fold(-0.0, |s, k| s + get(k)),
        Node::Mul(fs) => (0..fs.len()).fold(1.0, |p, k| p * get(k)),
        Node::Powi(_, 2) => {
            let x = get(0);
            x * x
        }
        Node::Powi(_, -1) => 1.0 / get(0),
        Node::Powi(_, n) => powi(get(0), *n),
        Node::Pow(..) => get(0).powf(get(1)),
        Node::Func(f, _) => apply_func(*f, get(0)),
        Node::Func2(f, ..) => apply_func2(*f, get(0), get(1)),
        Node::Cmp(op, ..) => apply_cmp(*op, get(0), get(1)),
        Node::And(..) => f64::from(get(0) != 0.0 && get(1) != 0.0),
        Node::Or(..) => f64::from(get(0) != 0.0 || get(1) != 0.0),
        Node::Not(_) => f64::from(get(0) == 0.0),
        Node::Select(..) => {
            if get(0) != 0.0 {
                get(1)
            } else {
                get(2)
            }
        }
        // A call needs its function: the evaluators handle it themselves.
        Node::Call(..) => f64::NAN,
    }
}
