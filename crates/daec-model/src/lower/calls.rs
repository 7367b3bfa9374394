//! Calls of the built-in functions: the elementary functions, `atan2`,
//! `min`, `max`, `integer`, `div`, `mod`, `rem`, `der`, `sum`, `size`,
//! `noEvent`, `smooth`, `reinit`.
//!
//! The event-triggering functions (MLS 3.6 §3.7.2) are `floor` and `ceil`
//! nodes: `integer(x)` is `floor(x)`, `div(x, y)` is
//! `sign(x/y)·floor(abs(x/y))` (the quotient truncated towards zero),
//! `mod(x, y)` is `x − floor(x/y)·y` and `rem(x, y)` is `x − div(x, y)·y`.
//! Of the unknowns they are state events of the simulation
//! (`daec_sim::Modes`), of `time` and parameters time events; inside
//! `noEvent(…)` each `floor`/`ceil` is wrapped in `Func::NoEvent` and
//! evaluated continuously.

use super::{Lowerer, Mode, R, Reported, Val};
use crate::BaseType;

use crate::suggest::did_you_mean;
use daec_diag::{Diagnostic, Span, codes};
use daec_expr::{ExprId, ExprPool, Func, Func2, Leaf};
use daec_syntax::ast::{self, ExprKind};

pub(super) const FUNCS1: &[(&str, Func)] = &[
    ("sin", Func::Sin),
    ("cos", Func::Cos),
    ("tan", Func::Tan),
    ("asin", Func::Asin),
    ("acos", Func::Acos),
    ("atan", Func::Atan),
    ("sinh", Func::Sinh),
    ("cosh", Func::Cosh),
    ("tanh", Func::Tanh),
    ("exp", Func::Exp),
    ("log", Func::Log),
    ("log10", Func::Log10),
    ("sqrt", Func::Sqrt),
    ("abs", Func::Abs),
    ("sign", Func::Sign),
    ("floor", Func::Floor),
    ("ceil", Func::Ceil),
    // `integer(x)`: the largest Integer not greater than `x` (MLS 3.6
    // §3.7.2), an event-generating `floor` with an Integer value
    ("integer", Func::Floor),
];

pub(super) const FUNCS2: &[(&str, Func2)] = &[
    ("atan2", Func2::Atan2),
    ("min", Func2::Min),
    ("max", Func2::Max),
];

/// Every function name the language knows (for suggestions).
const ALL_FUNCS: &[&str] = &[
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp", "log", "log10",
    "sqrt", "abs", "sign", "floor", "ceil", "integer", "div", "mod", "rem", "atan2", "min", "max",
    "der", "sum", "size", "noEvent", "smooth", "reinit", "pre", "edge", "change",
];

/// `floor` or `ceil` of `x`, wrapped in `noEvent` when `quiet` (inside
/// `noEvent(…)`: evaluated continuously, without events) and `x` depends
/// on the unknowns (a function of `time` is a time event all the same).
fn jump(p: &mut ExprPool, f: Func, x: ExprId, quiet: bool) -> ExprId {
    let r = p.func(f, x);
    if quiet && matches!(f, Func::Floor | Func::Ceil) && !p.max_orders(x).is_empty() {
        p.func(Func::NoEvent, r)
    } else {
        r
    }
}

/// `div(x, y)`, `mod(x, y)` or `rem(x, y)` (MLS 3.6 §3.7.2) through
/// `floor` (see the module docs); `quiet` as for [`jump`].
fn integer_division(p: &mut ExprPool, fname: &str, x: ExprId, y: ExprId, quiet: bool) -> ExprId {
    let q = p.div(x, y);
    let whole = if fname == "mod" {
        jump(p, Func::Floor, q, quiet)
    } else {
        let s = p.func(Func::Sign, q);
        let a = p.func(Func::Abs, q);
        let f = jump(p, Func::Floor, a, quiet);
        p.mul(s, f)
    };
    if fname == "div" {
        return whole;
    }
    let m = p.mul(whole, y);
    p.sub(x, m)
}

impl<'a> Lowerer<'a> {
    /// `floor`, `ceil`, `integer`, `div`, `mod` or `rem` of a derivative
    /// of the unknowns: MLS 3.6 §3.7.2 makes them event-generating, daec
    /// evaluates them continuously (of the unknowns and of `time` they are
    /// events): a warning, once per call site (`W0117`).
    fn warn_jump_without_events(&mut self, fname: &str, v: &[ExprId], span: Span) {
        let reported = |d: &Diagnostic| {
            d.code == codes::NO_EVENT_JUMP && d.labels.first().is_some_and(|l| l.span == span)
        };
        if self.no_event > 0
            || !v
                .iter()
                .any(|&e| self.pool.max_orders(e).iter().any(|&(_, k)| k > 0))
            || self.diags.iter().any(reported)
        {
            return;
        }
        self.diags.push(
            Diagnostic::warning(
                codes::NO_EVENT_JUMP,
                format!("`{fname}` of a derivative jumps without an event"),
            )
            .with_primary(span, "evaluated continuously")
            .with_note("daec makes events of `floor`, `ceil`, `integer`, `div`, `mod` and `rem` of the unknowns and of `time`, not of derivatives; the step-size control steps over these jumps")
            .with_help("to say that no event is wanted, write `noEvent(…)` around the call; to locate the jumps, make the derivative an unknown of its own (`v = der(x)`)"),
        );
    }

    /// The two numeric arguments `args` of a function, and the type of
    /// its result when it keeps `Integer` (`Integer` if both are).
    fn numeric_pair(&mut self, args: &[ast::Expr], mode: Mode) -> R<(Val, Val, BaseType)> {
        let a = self.lower_expr(&args[0], mode);
        let b = self.lower_expr(&args[1], mode);
        let (a, b) = (a?, b?);
        self.require_numeric(&a, args[0].span)?;
        self.require_numeric(&b, args[1].span)?;
        let ty = if a.ty() == BaseType::Integer && b.ty() == BaseType::Integer {
            BaseType::Integer
        } else {
            BaseType::Real
        };
        Ok((a, b, ty))
    }

    pub(super) fn call(
        &mut self,
        func: &[ast::Ident],
        args: &[ast::Expr],
        named_args: &[(ast::Ident, ast::Expr)],
        span: Span,
        mode: Mode,
    ) -> R<Val> {
        if let Some((index, output)) = ast::FlatFunction::callee(func) {
            return self.runtime_call(index, output, args, span, mode);
        }
        let fname: std::borrow::Cow<'_, str> = match func {
            [f] => f.name.as_str().into(),
            _ => func
                .iter()
                .map(|i| i.name.as_str())
                .collect::<Vec<_>>()
                .join(".")
                .into(),
        };
        let fspan = func[0].span.to(func[func.len() - 1].span);
        if let Some((n, _)) = named_args.first() {
            return Err(self.error(
                Diagnostic::error(codes::ARITY, format!("`{fname}` takes no named arguments"))
                    .with_primary(n.span, "named argument"),
            ));
        }
        let arity = |this: &mut Self, want: &str| -> Reported {
            this.error(
                Diagnostic::error(
                    codes::ARITY,
                    format!(
                        "`{fname}` takes {want}, but {} {} given",
                        args.len(),
                        if args.len() == 1 { "was" } else { "were" }
                    ),
                )
                .with_primary(span, format!("wrong number of arguments to `{fname}`")),
            )
        };
        if let Some(v) = self.discrete_call(&fname, args, span, mode) {
            return v;
        }
        if let Some(&(_, f)) = FUNCS1.iter().find(|(n, _)| *n == fname) {
            if args.len() != 1 {
                return Err(arity(self, "1 argument"));
            }
            let v = self.lower_expr(&args[0], mode)?;
            self.require_numeric(&v, args[0].span)?;
            if matches!(f, Func::Floor | Func::Ceil) {
                self.warn_jump_without_events(&fname, v.elems(), span);
            }
            let quiet = self.no_event > 0;
            let int_result = fname == "integer"
                || (matches!(f, Func::Abs | Func::Sign) && v.ty() == BaseType::Integer);
            let ty = if int_result {
                BaseType::Integer
            } else {
                BaseType::Real
            };
            let v = self.map(v, span, |p, x| jump(p, f, x, quiet))?;
            return Ok(match v {
                Val::Scalar(_, e) => Val::Scalar(ty, e),
                Val::Array(_, s, e) => Val::Array(ty, s, e),
            });
        }
        if let Some(&(_, f)) = FUNCS2.iter().find(|(n, _)| *n == fname) {
            if matches!(f, Func2::Min | Func2::Max) && args.len() == 1 {
                // Reduction over an array.
                let v = self.lower_expr(&args[0], mode)?;
                self.require_numeric(&v, args[0].span)?;
                let es = v.elems().to_vec();
                if es.is_empty() {
                    return Err(self.error(
                        Diagnostic::error(codes::SHAPE, format!("`{fname}` of an empty array"))
                            .with_primary(span, "no elements"),
                    ));
                }
                let mut acc = es[0];
                for &e in &es[1..] {
                    acc = self.pool.func2(f, acc, e);
                }
                return Ok(Val::Scalar(v.ty(), acc));
            }
            if args.len() != 2 {
                return Err(arity(self, "2 arguments"));
            }
            let (a, b, ty) = self.numeric_pair(args, mode)?;
            let ty = if f == Func2::Atan2 {
                BaseType::Real
            } else {
                ty
            };
            return self.zip(a, b, span, ty, |p, x, y| p.func2(f, x, y));
        }
        match &*fname {
            "div" | "mod" | "rem" => {
                if args.len() != 2 {
                    return Err(arity(self, "2 arguments"));
                }
                let (a, b, ty) = self.numeric_pair(args, mode)?;
                let mut es = a.elems().to_vec();
                es.extend_from_slice(b.elems());
                self.warn_jump_without_events(&fname, &es, span);
                let quiet = self.no_event > 0;
                let name: &str = &fname;
                self.zip(a, b, span, ty, |p, x, y| {
                    integer_division(p, name, x, y, quiet)
                })
            }
            "der" => {
                if args.len() != 1 {
                    return Err(arity(self, "1 argument"));
                }
                if mode == Mode::Const {
                    return Err(self.error(
                        Diagnostic::error(codes::TYPE_MISMATCH, "`der(…)` is not a constant")
                            .with_primary(span, "varies in time"),
                    ));
                }
                let v = self.lower_expr(&args[0], mode)?;
                self.require_numeric(&v, args[0].span)?;
                if let Val::Scalar(_, e) = v
                    && matches!(self.pool.as_leaf(e), Some(Leaf::Var { .. }))
                {
                    return Ok(Val::Scalar(BaseType::Real, self.pool.dt(e)));
                }
                for &e in v.elems() {
                    let has_var = !self.pool.max_orders(e).is_empty();
                    let has_time = self
                        .pool
                        .leaves(e)
                        .iter()
                        .any(|&l| self.pool.as_leaf(l) == Some(Leaf::Time));
                    if !has_var && !has_time {
                        let what = match &args[0].kind {
                            ExprKind::Name(p) => {
                                format!("`{}` is a parameter or constant", p[0].name)
                            }
                            _ => "its argument contains no unknown".to_string(),
                        };
                        return Err(self.error(
                            Diagnostic::error(
                                codes::DER_OF_PARAMETER,
                                format!("`der` of a constant expression: {what}"),
                            )
                            .with_primary(args[0].span, "constant in time")
                            .with_note(
                                "the derivative of a parameter is zero; `der` applies to unknowns",
                            )
                            .with_help(
                                "if it should vary in time, declare it as an unknown (`Real`)",
                            ),
                        ));
                    }
                }
                self.map(v, span, |p, x| p.dt(x))
            }
            "sum" => {
                if args.len() != 1 {
                    return Err(arity(self, "1 argument"));
                }
                let v = self.lower_expr(&args[0], mode)?;
                self.require_numeric(&v, args[0].span)?;
                let es = v.elems().to_vec();
                Ok(Val::Scalar(v.ty(), self.pool.sum(&es)))
            }
            "size" => {
                if args.is_empty() || args.len() > 2 {
                    return Err(arity(self, "1 or 2 arguments"));
                }
                let v = self.lower_expr(&args[0], mode)?;
                let shape = v.shape().to_vec();
                if args.len() == 2 {
                    let k = self.const_int(&args[1])?;
                    if k < 1 || k as usize > shape.len() {
                        return Err(self.error(
                            Diagnostic::error(
                                codes::INDEX_RANGE,
                                format!("dimension {k} does not exist"),
                            )
                            .with_primary(
                                args[1].span,
                                format!("the array has {} dimension(s)", shape.len()),
                            ),
                        ));
                    }
                    return Ok(Val::Scalar(
                        BaseType::Integer,
                        self.pool.constant(shape[k as usize - 1] as f64),
                    ));
                }
                let elems: Vec<ExprId> = shape
                    .iter()
                    .map(|&d| self.pool.constant(d as f64))
                    .collect();
                Ok(Val::Array(BaseType::Integer, vec![elems.len()], elems))
            }
            "noEvent" | "smooth" => {
                let want = if fname == "smooth" { 2 } else { 1 };
                if args.len() != want {
                    return Err(arity(
                        self,
                        if want == 1 {
                            "1 argument"
                        } else {
                            "2 arguments"
                        },
                    ));
                }
                if fname == "smooth" {
                    return self.lower_expr(&args[1], mode);
                }
                self.no_event += 1;
                let v = self.lower_expr(&args[0], mode);
                self.no_event -= 1;
                v
            }
            "reinit" => Err(self.error(
                Diagnostic::error(codes::WHEN, "`reinit` is an equation, not a value")
                    .with_primary(span, "used in an expression"),
            )),
            _ => {
                let mut d = Diagnostic::error(codes::ARITY, format!("unknown function `{fname}`"))
                    .with_primary(fspan, "not a function daec knows");
                if let Some(s) = did_you_mean(&fname, ALL_FUNCS.iter().copied()) {
                    d = d.with_help(format!("did you mean `{s}`?"));
                } else {
                    d = d.with_note(format!("the functions are: {}", ALL_FUNCS.join(", ")));
                }
                Err(self.error(d))
            }
        }
    }
}
