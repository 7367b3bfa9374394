//! Chains of `+`/`-`, and of `*`/`/`/unary `-`, over scalars: each chain is
//! built through a [`Partial`] of the pool, so its partial results (`a + b`
//! in `a + b - c`, `2*l` and `2*l*d` in `-2*l*d`) are not interned; only
//! the whole chain becomes a node, the one the binary constructors
//! (`ExprPool::add`, `sub`, `mul`, `div`, `neg`) give when applied left to
//! right. Array operands, and operands the operators reject, take the
//! element-wise path of `binary` (and its diagnostics).

use super::{Lowerer, Mode, R, Val};
use crate::BaseType;
use daec_expr::Partial;
use daec_syntax::ast::{self, BinOp, ExprKind, UnOp};

/// The kind of chain an expression is the last link of.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Chain {
    /// `+` and binary `-`.
    Sum,
    /// `*`, `/` and unary `-`.
    Product,
}

/// The chain `e` ends, if any.
fn chain_kind(e: &ast::Expr) -> Option<Chain> {
    match &e.kind {
        ExprKind::Binary { op, .. } => match op {
            BinOp::Add | BinOp::Sub => Some(Chain::Sum),
            BinOp::Mul | BinOp::Div => Some(Chain::Product),
            _ => None,
        },
        ExprKind::Unary { op: UnOp::Neg, .. } => Some(Chain::Product),
        _ => None,
    }
}

/// Whether the chain `e` is written in parentheses: its span (which
/// takes in the parentheses) ends after its last operand.
fn parenthesized(e: &ast::Expr) -> bool {
    match &e.kind {
        ExprKind::Binary { rhs: last, .. } | ExprKind::Unary { expr: last, .. } => {
            e.span.end != last.span.end
        }
        _ => false,
    }
}

/// A lowered link of a chain: a value, or a numeric scalar whose last
/// sum or product is not interned yet.
enum Link {
    Val(Val),
    Partial(BaseType, Partial),
}

impl Lowerer<'_> {
    /// The value of `e` when it is a chain (`None` otherwise): the same
    /// value and diagnostics as the operators applied one by one.
    pub(super) fn chain(&mut self, e: &ast::Expr, mode: Mode) -> Option<R<Val>> {
        let kind = chain_kind(e)?;
        Some(self.link(e, mode, kind).map(|l| self.close(l)))
    }

    /// Interns the partial result of a link.
    fn close(&mut self, l: Link) -> Val {
        match l {
            Link::Val(v) => v,
            Link::Partial(t, p) => Val::Scalar(t, self.pool.finish(p)),
        }
    }

    /// The operand `e` of a link of a chain `kind`: continues the chain
    /// when `e` is a link of the same kind not in parentheses (`open`
    /// false, see [`parenthesized`]; one level deeper, as `lower_expr`), else lowers `e` whole.
    /// A group in parentheses is interned as the binary operators would
    /// intern it, because models repeat such groups: were it built later,
    /// where it is repeated, its id would come after nodes it preceded.
    fn operand(&mut self, e: &ast::Expr, mode: Mode, kind: Chain, open: bool) -> R<Link> {
        if open || chain_kind(e) != Some(kind) {
            return self.lower_expr(e, mode).map(Link::Val);
        }
        self.enter(e)?;
        let r = self.link(e, mode, kind);
        self.depth -= 1;
        r
    }

    /// Lowers the link `e` of a chain `kind` (`chain_kind(e) == Some(kind)`).
    fn link(&mut self, e: &ast::Expr, mode: Mode, kind: Chain) -> R<Link> {
        let numeric = |t: BaseType| t != BaseType::Boolean;
        match &e.kind {
            ExprKind::Binary { op, lhs, rhs } => {
                let a = self.operand(lhs, mode, kind, parenthesized(lhs));
                let b = self.lower_expr(rhs, mode);
                let (a, b) = (a?, b?);
                let (ta, p) = match a {
                    Link::Partial(ta, p) => (ta, p),
                    Link::Val(Val::Scalar(ta, x)) if numeric(ta) => (ta, Partial::from(x)),
                    a => {
                        let a = self.close(a);
                        return self
                            .binary(*op, a, b, lhs.span, rhs.span, e.span)
                            .map(Link::Val);
                    }
                };
                let Val::Scalar(tb, y) = b else {
                    let a = self.close(Link::Partial(ta, p));
                    return self
                        .binary(*op, a, b, lhs.span, rhs.span, e.span)
                        .map(Link::Val);
                };
                if !numeric(tb) {
                    let a = self.close(Link::Partial(ta, p));
                    return self
                        .binary(*op, a, b, lhs.span, rhs.span, e.span)
                        .map(Link::Val);
                }
                let int = ta == BaseType::Integer && tb == BaseType::Integer;
                let ty = if int && *op != BinOp::Div {
                    BaseType::Integer
                } else {
                    BaseType::Real
                };
                let p = match op {
                    BinOp::Add => self.pool.partial_add(p, y),
                    BinOp::Sub => self.pool.partial_sub(p, y),
                    BinOp::Mul => self.pool.partial_mul(p, y),
                    _ => self.pool.partial_div(p, y),
                };
                Ok(Link::Partial(ty, p))
            }
            ExprKind::Unary { expr, .. } => {
                match self.operand(expr, mode, Chain::Product, parenthesized(expr))? {
                    Link::Partial(t, p) => Ok(Link::Partial(t, self.pool.partial_neg(p))),
                    Link::Val(Val::Scalar(t, x)) if numeric(t) => {
                        Ok(Link::Partial(t, self.pool.partial_neg(Partial::from(x))))
                    }
                    Link::Val(v) => {
                        self.require_numeric(&v, expr.span)?;
                        self.map(v, e.span, |p, x| p.neg(x)).map(Link::Val)
                    }
                }
            }
            _ => unreachable!("`link` is only called on chains"),
        }
    }
}
