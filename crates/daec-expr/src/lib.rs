//! The symbolic core of daec: hash-consed expression DAG, derivatives, tapes,
//! printing.
//!
//! * [`ExprPool`] — an append-only DAG with 32-bit ids whose smart
//!   constructors canonicalise before interning (the `pool` module lists the
//!   rewrites), so equal expressions get equal ids and children always
//!   precede parents.
//! * Derivatives — [`ExprPool::diff`] (partial, memoised) and
//!   [`ExprPool::dt`] (total time derivative, `z_j^(k)` ↦ `z_j^(k+1)`).
//! * Queries — [`ExprPool::max_orders`] (Σ-matrix entries),
//!   [`ExprPool::linear_in`], [`ExprPool::linear_in_sparse`] (the cost of the
//!   expression, not of the leaf set), [`ExprPool::substitute`],
//!   [`ExprPool::leaves`].
//! * Evaluation — [`ExprPool::eval`] (direct) and [`Tape`] (compiled, no
//!   recursion, no allocation per call).
//! * Printing — [`to_modelica`], [`to_rust`] (in bounded chunks:
//!   [`to_rust_chunked`]; with repeated structure as loops over tables:
//!   [`to_rust_looped`]), [`to_latex`].
//!
//! No algorithm in this crate recurses over the DAG, so arbitrarily deep
//! expressions cannot overflow the stack, and undefined arithmetic (log of a
//! negative number, division by zero) yields NaN or ±inf, never a panic.

mod chunks;
mod deriv;
mod eval;
mod function;
mod intern;
mod modelica;
mod node;
mod pool;
mod print;
mod query;
mod scalar;
mod tape;

pub use chunks::{RustChunks, to_rust_chunked, to_rust_looped};
pub use eval::Env;
pub use function::{CallError, DerivativeAnnotation, Function, MAX_CALL_ITERATIONS, Stmt};
pub use modelica::to_modelica;
pub use node::{
    Callee, Children, CmpOp, ExprId, Func, Func2, FuncId, Leaf, Node, Operands, ParamId,
};
pub use pool::{ExprPool, Partial};
pub use print::{Names, RustNames, modelica_number, to_latex, to_rust};
pub use scalar::{apply_cmp, apply_func, apply_func2, apply_op, powi};
pub use tape::{Tape, TapeError, TapeFrame, TapeLanes};

/// The highest order of derivative function the pool makes for a
/// [`Node::Call`]: a call can be differentiated this many times in all —
/// time derivatives of the derivative array and the partial derivatives
/// of its Jacobians together (an equation of a call differentiated three
/// times, with its Jacobian, needs order 4). Beyond it the derivative is
/// NaN and [`ExprPool::derivative_limit`] names the function.
pub const MAX_DERIVATIVE_ORDER: u32 = 4;
