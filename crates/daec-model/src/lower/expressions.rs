//! Expressions: the recursion over the AST (bounded by `MAX_DEPTH`),
//! constant evaluation, array construction and broadcasting, and the
//! typing and shapes of the unary and binary operators.

use super::{Lowerer, MAX_DEPTH, Mode, R, Reported, Val, same_shape, shape_text, ty_name};
use crate::BaseType;
use crate::budget::elements;
use daec_diag::{Diagnostic, Span, codes};
use daec_expr::{CmpOp, ExprId, ExprPool, Func};
use daec_syntax::ast::{self, BinOp, ExprKind, UnOp};

impl<'a> Lowerer<'a> {
    pub(super) fn type_error(&mut self, span: Span, want: BaseType, got: BaseType) -> Reported {
        self.error(
            Diagnostic::error(
                codes::TYPE_MISMATCH,
                format!("expected a {} value, found {}", ty_name(want), ty_name(got)),
            )
            .with_primary(span, format!("this is {}", ty_name(got))),
        )
    }

    /// Evaluates `e` to an Integer constant.
    pub(super) fn const_int(&mut self, e: &ast::Expr) -> R<i64> {
        let v = self.lower_expr(e, Mode::Const)?;
        match v {
            Val::Scalar(BaseType::Integer, id) => match self.const_value(id) {
                Some(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => Ok(x as i64),
                _ => Err(self.error(
                    Diagnostic::error(codes::TYPE_MISMATCH, "expected an Integer constant")
                        .with_primary(e.span, "not an integer value"),
                )),
            },
            Val::Scalar(t, _) => Err(self.error(
                Diagnostic::error(codes::TYPE_MISMATCH, format!("expected an Integer, found {}", ty_name(t)))
                    .with_primary(e.span, format!("this is {}", ty_name(t)))
                    .with_help("sizes, subscripts and ranges must be Integer expressions of Integer parameters"),
            )),
            Val::Array(..) => Err(self.error(
                Diagnostic::error(codes::SHAPE, "expected an Integer, found an array")
                    .with_primary(e.span, "an array"),
            )),
        }
    }

    pub(super) fn broadcast_to(
        &mut self,
        v: Val,
        dims: &[usize],
        span: Span,
        what: &str,
    ) -> R<Val> {
        if v.shape() == dims {
            return Ok(v);
        }
        if let Val::Scalar(t, e) = v {
            let n = elements(dims);
            let mut elems = self.vec_with_capacity(n, span)?;
            elems.resize(n, e);
            return Ok(Val::from_parts(t, dims.to_vec(), elems));
        }
        Err(self.error(
            Diagnostic::error(
                codes::SHAPE,
                format!(
                    "{what} is {} but must be {}",
                    shape_text(v.shape()),
                    shape_text(dims)
                ),
            )
            .with_primary(span, "wrong size"),
        ))
    }

    pub(super) fn lower_expr(&mut self, e: &ast::Expr, mode: Mode) -> R<Val> {
        self.enter(e)?;
        let r = self.lower_expr_inner(e, mode);
        self.depth -= 1;
        r
    }

    /// Enters the expression `e` one level deeper (reported as too deep
    /// beyond `MAX_DEPTH`); the caller leaves it with `self.depth -= 1`.
    pub(super) fn enter(&mut self, e: &ast::Expr) -> R<()> {
        if self.depth >= MAX_DEPTH {
            if !self.too_large_reported {
                self.too_large_reported = true;
                self.diags.push(
                    Diagnostic::error(
                        codes::TOO_LARGE,
                        format!("this expression is nested more than {MAX_DEPTH} levels deep"),
                    )
                    .with_primary(e.span, "too deeply nested")
                    .with_help("split it into several equations with intermediate unknowns"),
                );
            }
            return Err(Reported);
        }
        self.depth += 1;
        Ok(())
    }

    fn lower_expr_inner(&mut self, e: &ast::Expr, mode: Mode) -> R<Val> {
        if let Some(v) = self.chain(e, mode) {
            return v;
        }
        match &e.kind {
            ExprKind::Error => Err(Reported),
            ExprKind::Tuple(_) => Err(self.error(
                Diagnostic::error(
                    codes::UNSUPPORTED,
                    "`(a, b)` is allowed only on the left of `(a, b) = f(…)`",
                )
                .with_primary(e.span, "a list of outputs")
                .with_note("functions are defined and called in `.mo` files only"),
            )),
            ExprKind::Member { .. } => Err(self.error(
                Diagnostic::error(codes::UNDECLARED, "a component reference in a flat model")
                    .with_primary(e.span, "not a variable of this model")
                    .with_note("components are instantiated from `.mo` files only"),
            )),
            ExprKind::Integer(i) => Ok(Val::Scalar(
                BaseType::Integer,
                self.pool.constant(*i as f64),
            )),
            ExprKind::Real(x) => Ok(Val::Scalar(BaseType::Real, self.pool.constant(*x))),
            ExprKind::Bool(b) => Ok(Val::Scalar(
                BaseType::Boolean,
                self.pool.constant(if *b { 1.0 } else { 0.0 }),
            )),
            ExprKind::String(_) => Err(self.error(
                Diagnostic::error(
                    codes::TYPE_MISMATCH,
                    "a string is not a value in an expression",
                )
                .with_primary(e.span, "strings are only descriptions and units"),
            )),
            ExprKind::Name(parts) => self.name(parts, e.span, mode),
            ExprKind::Index { base, indices } => self.index(base, indices, e.span, mode),
            ExprKind::Call {
                func,
                args,
                named_args,
            } => self.call(func, args, named_args, e.span, mode),
            ExprKind::Unary { op, expr } => {
                let v = self.lower_expr(expr, mode)?;
                match op {
                    UnOp::Plus => {
                        self.require_numeric(&v, expr.span)?;
                        Ok(v)
                    }
                    UnOp::Neg => {
                        self.require_numeric(&v, expr.span)?;
                        self.map(v, e.span, |p, x| p.neg(x))
                    }
                    UnOp::Not => {
                        self.require_bool(&v, expr.span)?;
                        self.map(v, e.span, |p, x| p.not(x))
                    }
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let a = self.lower_expr(lhs, mode);
                let b = self.lower_expr(rhs, mode);
                let (a, b) = (a?, b?);
                self.binary(*op, a, b, lhs.span, rhs.span, e.span)
            }
            ExprKind::If {
                branches,
                else_value,
            } => {
                // Constant conditions select at compile time (only the chosen
                // branch is lowered, so `if N > 1 then x[N - 1] else 0` works).
                let mut pending: Vec<(ExprId, Val, Span)> = Vec::new();
                let mut chosen = None;
                for (c, v) in branches {
                    let cid = self.condition(c, mode, "an `if` condition")?;
                    match self.const_value(cid) {
                        Some(x) if pending.is_empty() && x != 0.0 => {
                            chosen = Some(self.lower_expr(v, mode)?);
                            break;
                        }
                        Some(0.0) => continue,
                        _ => {
                            let val = self.lower_expr(v, mode)?;
                            pending.push((cid, val, v.span));
                        }
                    }
                }
                if let Some(v) = chosen {
                    return Ok(v);
                }
                let mut acc = self.lower_expr(else_value, mode)?;
                let mut acc_span = else_value.span;
                for (cid, val, span) in pending.into_iter().rev() {
                    if val.shape() != acc.shape() {
                        return Err(self.error(
                            Diagnostic::error(
                                codes::SHAPE,
                                "the branches of this if-expression have different sizes",
                            )
                            .with_primary(span, shape_text(val.shape()))
                            .with_secondary(acc_span, shape_text(acc.shape())),
                        ));
                    }
                    let ty = join_ty(val.ty(), acc.ty());
                    let elems = val
                        .elems()
                        .iter()
                        .zip(acc.elems())
                        .map(|(&a, &b)| self.pool.select(cid, a, b))
                        .collect();
                    acc = Val::from_parts(ty, val.shape().to_vec(), elems);
                    acc_span = span;
                }
                Ok(acc)
            }
            ExprKind::Range { .. } => {
                let vals = self.range_values(e)?;
                let elems: Vec<ExprId> =
                    vals.iter().map(|&i| self.pool.constant(i as f64)).collect();
                Ok(Val::Array(BaseType::Integer, vec![elems.len()], elems))
            }
            ExprKind::Array(items) => {
                let mut vals = Vec::with_capacity(items.len());
                for it in items {
                    vals.push((self.lower_expr(it, mode)?, it.span));
                }
                self.stack(vals, e.span)
            }
            ExprKind::Matrix(rows) => {
                let mut row_vals = Vec::with_capacity(rows.len());
                for row in rows {
                    let mut vals = Vec::with_capacity(row.len());
                    for it in row {
                        vals.push((self.lower_expr(it, mode)?, it.span));
                    }
                    // Concatenate scalars of a row into a vector.
                    row_vals.push((self.stack(vals, e.span)?, e.span));
                }
                self.stack(row_vals, e.span)
            }
            ExprKind::Colon | ExprKind::End => Err(self.error(
                Diagnostic::error(
                    codes::UNSUPPORTED,
                    "`:` and `end` are only allowed as subscripts",
                )
                .with_primary(e.span, "here"),
            )),
        }
    }

    /// `{a, b, c}`: stacks equally shaped values along a new first dimension.
    fn stack(&mut self, vals: Vec<(Val, Span)>, span: Span) -> R<Val> {
        if vals.is_empty() {
            return Ok(Val::Array(BaseType::Real, vec![0], Vec::new()));
        }
        let shape = vals[0].0.shape().to_vec();
        let mut ty = vals[0].0.ty();
        let mut elems = Vec::new();
        for (v, sp) in &vals {
            if v.shape() != shape.as_slice() {
                return Err(self.error(
                    Diagnostic::error(
                        codes::SHAPE,
                        "the elements of this array have different sizes",
                    )
                    .with_primary(*sp, shape_text(v.shape()))
                    .with_secondary(span, "in this array"),
                ));
            }
            if (ty == BaseType::Boolean) != (v.ty() == BaseType::Boolean) {
                return Err(self.type_error(*sp, ty, v.ty()));
            }
            ty = join_ty(ty, v.ty());
            elems.extend_from_slice(v.elems());
        }
        let mut full = vec![vals.len()];
        full.extend(shape);
        Ok(Val::Array(ty, full, elems))
    }

    /// `f` of each element (`span`: the expression, where a model too
    /// large is reported).
    pub(super) fn map(
        &mut self,
        v: Val,
        span: Span,
        f: impl Fn(&mut ExprPool, ExprId) -> ExprId,
    ) -> R<Val> {
        match v {
            Val::Scalar(t, e) => Ok(Val::Scalar(t, f(&mut self.pool, e))),
            Val::Array(t, s, es) => {
                self.reserve_nodes(es.len(), span)?;
                Ok(Val::Array(
                    t,
                    s,
                    es.into_iter().map(|e| f(&mut self.pool, e)).collect(),
                ))
            }
        }
    }

    pub(super) fn require_numeric(&mut self, v: &Val, span: Span) -> R<()> {
        if v.ty() == BaseType::Boolean {
            return Err(self.error(
                Diagnostic::error(
                    codes::TYPE_MISMATCH,
                    "a Boolean cannot be used in arithmetic",
                )
                .with_primary(span, "this is Boolean")
                .with_help("use `if cond then 1 else 0` to turn a condition into a number"),
            ));
        }
        Ok(())
    }

    fn require_bool(&mut self, v: &Val, span: Span) -> R<()> {
        if v.ty() != BaseType::Boolean {
            return Err(self.error(
                Diagnostic::error(
                    codes::TYPE_MISMATCH,
                    format!("expected a Boolean, found {}", ty_name(v.ty())),
                )
                .with_primary(span, format!("this is {}", ty_name(v.ty())))
                .with_help("compare it: `x > 0`"),
            ));
        }
        Ok(())
    }

    pub(super) fn binary(
        &mut self,
        op: BinOp,
        a: Val,
        b: Val,
        sa: Span,
        sb: Span,
        span: Span,
    ) -> R<Val> {
        use BinOp::*;
        match op {
            And | Or => {
                self.require_bool(&a, sa)?;
                self.require_bool(&b, sb)?;
                self.zip(a, b, span, BaseType::Boolean, |p, x, y| {
                    if op == And { p.and(x, y) } else { p.or(x, y) }
                })
            }
            Lt | Le | Gt | Ge | Eq | Ne => {
                // (`==` and `<>` also compare Booleans, as `change(b)` is
                // printed, MLS 3.6 §3.5)
                let booleans = matches!(op, Eq | Ne)
                    && a.ty() == BaseType::Boolean
                    && b.ty() == BaseType::Boolean;
                if !booleans {
                    self.require_numeric(&a, sa)?;
                    self.require_numeric(&b, sb)?;
                }
                let c = match op {
                    Lt => CmpOp::Lt,
                    Le => CmpOp::Le,
                    Gt => CmpOp::Gt,
                    Ge => CmpOp::Ge,
                    Eq => CmpOp::Eq,
                    _ => CmpOp::Ne,
                };
                if !a.shape().is_empty() || !b.shape().is_empty() {
                    return Err(self.error(
                        Diagnostic::error(codes::SHAPE, "comparisons need scalar operands")
                            .with_primary(span, "an array comparison"),
                    ));
                }
                // inside `noEvent(…)` a relation is marked to be evaluated
                // continuously (no state event, MLS 3.6 §3.7.5)
                let quiet = self.no_event > 0 && !matches!(c, CmpOp::Eq | CmpOp::Ne);
                self.zip(a, b, span, BaseType::Boolean, |p, x, y| {
                    let r = p.cmp(c, x, y);
                    if quiet { p.func(Func::NoEvent, r) } else { r }
                })
            }
            _ => {
                self.require_numeric(&a, sa)?;
                self.require_numeric(&b, sb)?;
                let int = a.ty() == BaseType::Integer && b.ty() == BaseType::Integer;
                let ty = match op {
                    Add | Sub | Mul | ElemAdd | ElemSub | ElemMul if int => BaseType::Integer,
                    _ => BaseType::Real,
                };
                match op {
                    Add | ElemAdd | Sub | ElemSub => {
                        let elementwise = matches!(op, ElemAdd | ElemSub);
                        if !same_shape(a.shape(), b.shape()) && !elementwise {
                            return Err(self.shape_error(&a, &b, span, op));
                        }
                        let sub = matches!(op, Sub | ElemSub);
                        self.zip(
                            a,
                            b,
                            span,
                            ty,
                            |p, x, y| if sub { p.sub(x, y) } else { p.add(x, y) },
                        )
                    }
                    Mul => self.multiply(a, b, span, ty),
                    ElemMul => self.zip(a, b, span, ty, |p, x, y| p.mul(x, y)),
                    Div | ElemDiv => {
                        if !b.shape().is_empty() && op == Div {
                            return Err(self.shape_error(&a, &b, span, op));
                        }
                        self.zip(a, b, span, ty, |p, x, y| p.div(x, y))
                    }
                    _ => {
                        // Pow / ElemPow.
                        if op == Pow && (!a.shape().is_empty() || !b.shape().is_empty()) {
                            return Err(self.shape_error(&a, &b, span, op));
                        }
                        self.zip(a, b, span, BaseType::Real, |p, x, y| {
                            match p.as_constant(y) {
                                Some(n) if n.fract() == 0.0 && n.abs() <= 64.0 => {
                                    p.powi(x, n as i32)
                                }
                                _ => p.pow(x, y),
                            }
                        })
                    }
                }
            }
        }
    }

    fn shape_error(&mut self, a: &Val, b: &Val, span: Span, op: BinOp) -> Reported {
        self.error(
            Diagnostic::error(
                codes::SHAPE,
                format!(
                    "`{}` cannot combine {} with {}",
                    op.symbol(),
                    shape_text(a.shape()),
                    shape_text(b.shape())
                ),
            )
            .with_primary(span, "sizes do not fit"),
        )
    }

    /// Element-wise combination with scalar broadcasting.
    pub(super) fn zip(
        &mut self,
        a: Val,
        b: Val,
        span: Span,
        ty: BaseType,
        f: impl Fn(&mut ExprPool, ExprId, ExprId) -> ExprId,
    ) -> R<Val> {
        if let (Val::Scalar(_, x), Val::Scalar(_, y)) = (&a, &b) {
            return Ok(Val::Scalar(ty, f(&mut self.pool, *x, *y)));
        }
        self.reserve_nodes(a.elems().len().max(b.elems().len()), span)?;
        let (sa, sb) = (a.shape().to_vec(), b.shape().to_vec());
        if sa == sb {
            let elems = a
                .elems()
                .iter()
                .zip(b.elems())
                .map(|(&x, &y)| f(&mut self.pool, x, y))
                .collect();
            return Ok(Val::from_parts(ty, sa, elems));
        }
        if sa.is_empty() {
            let x = a.elems()[0];
            let elems = b.elems().iter().map(|&y| f(&mut self.pool, x, y)).collect();
            return Ok(Val::from_parts(ty, sb, elems));
        }
        if sb.is_empty() {
            let y = b.elems()[0];
            let elems = a.elems().iter().map(|&x| f(&mut self.pool, x, y)).collect();
            return Ok(Val::from_parts(ty, sa, elems));
        }
        Err(self.error(
            Diagnostic::error(
                codes::SHAPE,
                format!(
                    "cannot combine {} with {}",
                    shape_text(&sa),
                    shape_text(&sb)
                ),
            )
            .with_primary(span, "sizes do not fit"),
        ))
    }

    /// `*`: scalar products, matrix–vector and matrix–matrix products, and
    /// scaling by a scalar.
    fn multiply(&mut self, a: Val, b: Val, span: Span, ty: BaseType) -> R<Val> {
        let (sa, sb) = (a.shape().to_vec(), b.shape().to_vec());
        if sa.is_empty() || sb.is_empty() {
            return self.zip(a, b, span, ty, |p, x, y| p.mul(x, y));
        }
        // A product over the shared dimension `sb[0]` for each pair of a
        // row of `a` and a column of `b`.
        let products = (a.elems().len() as u128 * b.elems().len() as u128) / sb[0].max(1) as u128;
        self.reserve_nodes(usize::try_from(products).unwrap_or(usize::MAX), span)?;
        let (ea, eb) = (a.elems().to_vec(), b.elems().to_vec());
        let dot = |p: &mut ExprPool, xs: &[ExprId], ys: Vec<ExprId>| {
            let terms: Vec<ExprId> = xs.iter().zip(ys).map(|(&x, y)| p.mul(x, y)).collect();
            p.sum(&terms)
        };
        match (sa.as_slice(), sb.as_slice()) {
            ([n], [m]) if n == m => Ok(Val::Scalar(ty, dot(&mut self.pool, &ea, eb))),
            ([r, c], [m]) if c == m => {
                let mut out = Vec::with_capacity(*r);
                for i in 0..*r {
                    out.push(dot(&mut self.pool, &ea[i * c..(i + 1) * c], eb.clone()));
                }
                Ok(Val::Array(ty, vec![*r], out))
            }
            ([m], [r, c]) if m == r => {
                let mut out = Vec::with_capacity(*c);
                for j in 0..*c {
                    let col: Vec<ExprId> = (0..*r).map(|i| eb[i * c + j]).collect();
                    out.push(dot(&mut self.pool, &ea, col));
                }
                Ok(Val::Array(ty, vec![*c], out))
            }
            ([r, k], [k2, c]) if k == k2 => {
                let mut out = Vec::with_capacity(r * c);
                for i in 0..*r {
                    for j in 0..*c {
                        let col: Vec<ExprId> = (0..*k).map(|l| eb[l * c + j]).collect();
                        out.push(dot(&mut self.pool, &ea[i * k..(i + 1) * k], col));
                    }
                }
                Ok(Val::Array(ty, vec![*r, *c], out))
            }
            _ => Err(self.shape_error(&a, &b, span, BinOp::Mul)),
        }
    }
}

fn join_ty(a: BaseType, b: BaseType) -> BaseType {
    if a == BaseType::Integer && b == BaseType::Integer {
        BaseType::Integer
    } else if a == BaseType::Boolean && b == BaseType::Boolean {
        BaseType::Boolean
    } else {
        BaseType::Real
    }
}
