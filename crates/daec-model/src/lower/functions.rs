//! Functions called at run time ([`ast::FlatFunction`], made by the
//! instantiation for the calls it does not inline): each is compiled
//! once into a [`daec_expr::Function`] of the pool — its variables as
//! slots, its statements over expressions of its own pool — with its
//! `derivative` annotation, and a flat call `$call.<k>.<output>(args)`
//! becomes a [`daec_expr::Node::Call`].

use super::calls::{FUNCS1, FUNCS2};
use super::{Lowerer, Mode, R, Reported, Val};
use crate::BaseType;
use daec_diag::{Diagnostic, Span, codes};
use daec_expr::{Callee, CmpOp, DerivativeAnnotation, ExprId, ExprPool, FuncId, Function, Stmt};
use daec_syntax::ast::{self, BinOp, ExprKind, StatementKind, UnOp};

impl Lowerer<'_> {
    /// Output `output` of run-time function `index` called on `args`.
    pub(super) fn runtime_call(
        &mut self,
        index: usize,
        output: usize,
        args: &[ast::Expr],
        span: Span,
        mode: Mode,
    ) -> R<Val> {
        let f = self.runtime_function(index, 0)?;
        let mut xs = Vec::with_capacity(args.len());
        for a in args {
            let v = self.lower_expr(a, mode)?;
            self.require_numeric(&v, a.span)?;
            match v {
                Val::Scalar(_, e) => xs.push(e),
                Val::Array(..) => {
                    return Err(self.error(
                        Diagnostic::error(
                            codes::SHAPE,
                            "a function called at run time takes scalar arguments",
                        )
                        .with_primary(a.span, "an array"),
                    ));
                }
            }
        }
        let Some(callee) = Callee::new(f, output) else {
            return Err(self.error(
                Diagnostic::error(codes::TOO_LARGE, "too many functions or outputs")
                    .with_primary(span, "this call"),
            ));
        };
        Ok(Val::Scalar(BaseType::Real, self.pool.call(callee, &xs)))
    }

    /// The pool's function for run-time function `index`, compiled the
    /// first time (with its derivative function, of order `order + 1`).
    fn runtime_function(&mut self, index: usize, order: u32) -> R<FuncId> {
        if let Some(&f) = self.function_ids.get(&index) {
            return Ok(f);
        }
        let model = self.model;
        let Some(flat) = model.functions.get(index) else {
            return Err(Reported);
        };
        let derivative = match &flat.derivative {
            Some((der, differentiated)) if *der != index && order < 2 => {
                Some(DerivativeAnnotation {
                    function: self.runtime_function(*der, order + 1)?,
                    differentiated: differentiated.clone(),
                })
            }
            _ => None,
        };
        let mut f = compile(flat).map_err(|d| self.error(d))?;
        f.derivative = derivative;
        f.order = order;
        let Some(id) = self.pool.add_function(f) else {
            return Err(self.error(
                Diagnostic::error(codes::TOO_LARGE, "too many functions")
                    .with_primary(flat.span, "one function too many"),
            ));
        };
        self.function_ids.insert(index, id);
        self.function_names.push(flat.name.clone());
        self.spans.functions.push(flat.span);
        Ok(id)
    }
}

/// `flat` as a function of the pool.
fn compile(flat: &ast::FlatFunction) -> Result<Function, Diagnostic> {
    let names: Vec<String> = flat
        .inputs
        .iter()
        .chain(&flat.outputs)
        .chain(&flat.locals)
        .map(|i| i.name.clone())
        .collect();
    let mut c = Compiler {
        flat,
        names: &names,
        pool: ExprPool::new(),
    };
    let body = c.block(&flat.algorithm)?;
    let outputs = (0..flat.outputs.len())
        .map(|k| (flat.inputs.len() + k) as u32)
        .collect();
    let Compiler { pool, .. } = c;
    Function::new(
        flat.name.clone(),
        names.clone(),
        flat.inputs.len(),
        outputs,
        pool,
        body,
    )
    .ok_or_else(|| {
        Diagnostic::error(
            codes::FUNCTION,
            format!("cannot call `{}` at run time", flat.name),
        )
        .with_primary(
            flat.span,
            "its algorithm calls another function at run time",
        )
    })
}

/// The compilation of one function's statements.
struct Compiler<'a> {
    flat: &'a ast::FlatFunction,
    names: &'a [String],
    pool: ExprPool,
}

impl Compiler<'_> {
    fn refuse(&self, at: Span, what: &str) -> Diagnostic {
        Diagnostic::error(
            codes::FUNCTION,
            format!("cannot call `{}` at run time: {what}", self.flat.name),
        )
        .with_primary(at, "here")
    }

    fn slot(&self, name: &str) -> Option<u32> {
        self.names.iter().position(|n| n == name).map(|k| k as u32)
    }

    fn block(&mut self, body: &[ast::Statement]) -> Result<Vec<Stmt>, Diagnostic> {
        body.iter().map(|st| self.statement(st)).collect()
    }

    fn statement(&mut self, st: &ast::Statement) -> Result<Stmt, Diagnostic> {
        Ok(match &st.kind {
            StatementKind::Assign { lhs, rhs } => {
                let slot = match &lhs.kind {
                    ExprKind::Name(p) if p.len() == 1 => self.slot(&p[0].name),
                    _ => None,
                };
                let Some(slot) = slot else {
                    return Err(self.refuse(lhs.span, "this assignment target"));
                };
                Stmt::Assign(slot, self.expr(rhs)?)
            }
            StatementKind::If {
                branches,
                else_branch,
            } => Stmt::If {
                branches: branches
                    .iter()
                    .map(|(c, b)| Ok((self.expr(c)?, self.block(b)?)))
                    .collect::<Result<Vec<_>, Diagnostic>>()?,
                else_branch: self.block(else_branch)?,
            },
            StatementKind::For { var, range, body } => {
                let ExprKind::Range { start, step, stop } = &range.kind else {
                    return Err(self.refuse(range.span, "a `for` range other than `a:b`"));
                };
                let Some(var) = self.slot(&var.name) else {
                    return Err(self.refuse(var.span, "an undeclared loop variable"));
                };
                let step = match step {
                    Some(s) => self.expr(s)?,
                    None => self.pool.constant(1.0),
                };
                Stmt::For {
                    var,
                    start: self.expr(start)?,
                    step,
                    stop: self.expr(stop)?,
                    body: self.block(body)?,
                }
            }
            StatementKind::While { condition, body } => Stmt::While {
                condition: self.expr(condition)?,
                body: self.block(body)?,
            },
            StatementKind::Break => Stmt::Break,
            StatementKind::Return => Stmt::Return,
            _ => return Err(self.refuse(st.span, "this statement")),
        })
    }

    /// An expression of the body (its nesting is bounded by the parser's
    /// limit on the operators of a statement).
    fn expr(&mut self, e: &ast::Expr) -> Result<ExprId, Diagnostic> {
        Ok(match &e.kind {
            ExprKind::Integer(i) => self.pool.constant(*i as f64),
            ExprKind::Real(v) => self.pool.constant(*v),
            ExprKind::Bool(b) => self.pool.constant(f64::from(u8::from(*b))),
            ExprKind::Name(parts) if parts.len() == 1 => match self.slot(&parts[0].name) {
                Some(s) => self.pool.var(s, 0),
                None => return Err(self.refuse(e.span, "a name that is no variable of it")),
            },
            ExprKind::Binary { op, lhs, rhs } => {
                let (a, b) = (self.expr(lhs)?, self.expr(rhs)?);
                let p = &mut self.pool;
                match op {
                    BinOp::Add | BinOp::ElemAdd => p.add(a, b),
                    BinOp::Sub | BinOp::ElemSub => p.sub(a, b),
                    BinOp::Mul | BinOp::ElemMul => p.mul(a, b),
                    BinOp::Div | BinOp::ElemDiv => p.div(a, b),
                    BinOp::Pow | BinOp::ElemPow => p.pow(a, b),
                    BinOp::Lt => p.cmp(CmpOp::Lt, a, b),
                    BinOp::Le => p.cmp(CmpOp::Le, a, b),
                    BinOp::Gt => p.cmp(CmpOp::Gt, a, b),
                    BinOp::Ge => p.cmp(CmpOp::Ge, a, b),
                    BinOp::Eq => p.cmp(CmpOp::Eq, a, b),
                    BinOp::Ne => p.cmp(CmpOp::Ne, a, b),
                    BinOp::And => p.and(a, b),
                    BinOp::Or => p.or(a, b),
                }
            }
            ExprKind::Unary { op, expr } => {
                let a = self.expr(expr)?;
                match op {
                    UnOp::Neg => self.pool.neg(a),
                    UnOp::Plus => a,
                    UnOp::Not => self.pool.not(a),
                }
            }
            ExprKind::If {
                branches,
                else_value,
            } => {
                let mut acc = self.expr(else_value)?;
                for (c, v) in branches.iter().rev() {
                    let (c, v) = (self.expr(c)?, self.expr(v)?);
                    acc = self.pool.select(c, v, acc);
                }
                acc
            }
            ExprKind::Call { func, args, .. } if func.len() == 1 => {
                let name = func[0].name.as_str();
                let xs = args
                    .iter()
                    .map(|a| self.expr(a))
                    .collect::<Result<Vec<_>, _>>()?;
                match (
                    FUNCS1.iter().find(|(n, _)| *n == name),
                    FUNCS2.iter().find(|(n, _)| *n == name),
                    xs.as_slice(),
                ) {
                    (Some(&(_, f)), _, [x]) => self.pool.func(f, *x),
                    (_, Some(&(_, f)), [x, y]) => self.pool.func2(f, *x, *y),
                    _ if matches!(name, "noEvent" | "smooth") && !xs.is_empty() => xs[xs.len() - 1],
                    _ => return Err(self.refuse(e.span, "a call of this function")),
                }
            }
            ExprKind::Call { .. } => {
                return Err(self.refuse(e.span, "a call of another function at run time"));
            }
            _ => return Err(self.refuse(e.span, "this expression")),
        })
    }
}
