//! The names an instance sees, the renaming of its expressions to flat
//! dotted names, and the evaluation of structural values (array sizes of
//! components, `for` ranges and conditions around `connect`).

use super::Inst;
use daec_diag::{Diagnostic, Span, codes};
use daec_syntax::ast::{BinOp, Expr, ExprKind, Ident, UnOp};
use std::collections::HashMap;
use std::rc::Rc;

/// A component as its instance names it.
#[derive(Clone, Debug)]
pub(super) struct CompRef {
    /// The flat name (`R1`, `C.p`, `world` of an `outer` is its `inner`).
    pub flat: String,
    /// A connector (or a component of connector type).
    pub connector: bool,
    /// Removed by a false condition (MLS 3.6, §4.4.5).
    pub disabled: bool,
    /// The enumeration class of its type, if it is of one.
    pub enumeration: Option<usize>,
}

/// The names of one instance.
#[derive(Debug)]
pub(super) struct Scope {
    /// The class whose declarations these are (for class lookups).
    pub class: usize,
    /// The flat prefix of the instance (`""` at the top, `R1.` below).
    pub prefix: String,
    /// The components, by their name in the class.
    pub names: HashMap<String, CompRef>,
    /// The enclosing instance.
    pub parent: Option<Rc<Scope>>,
    /// The `inner` components, by name.
    pub inners: HashMap<String, String>,
}

/// Loop variables: `Some(value)` when the loop is expanded by the
/// instantiation, `None` when lowering expands it.
pub(super) type Loops = Vec<(String, Option<i64>)>;

/// The most nested values a structural evaluation follows.
const MAX_EVAL_DEPTH: usize = 64;

/// The `Modelica.Constants` lowering knows.
const KNOWN_CONSTANTS: &[&str] = &["pi", "e", "g_n"];

impl Scope {
    /// The flat name of the `inner` component `name` seen from here.
    pub fn inner(&self, name: &str) -> Option<String> {
        let mut s = self.parent.as_deref();
        while let Some(scope) = s {
            if let Some(flat) = scope.inners.get(name) {
                return Some(flat.clone());
            }
            s = scope.parent.as_deref();
        }
        None
    }
}

fn name_expr(name: String, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Name(vec![Ident { name, span }]),
        span,
    }
}

impl Inst<'_> {
    /// `e` with every name of a component of `scope` replaced by its flat
    /// name, expanded loop variables by their values and package
    /// constants by their values. An unknown name is reported.
    pub(super) fn rename(&mut self, e: &Expr, scope: &Scope, loops: &Loops) -> Expr {
        let span = e.span;
        let kind = match &e.kind {
            ExprKind::Name(parts) => return self.rename_name(parts, span, scope, loops),
            ExprKind::Member { .. } => {
                return match self.component_ref(e, scope, loops) {
                    Some((flat, _)) => name_expr(flat, span),
                    None => Expr {
                        kind: ExprKind::Error,
                        span,
                    },
                };
            }
            ExprKind::Index { base, indices } => ExprKind::Index {
                base: Box::new(self.rename(base, scope, loops)),
                indices: indices
                    .iter()
                    .map(|i| self.rename(i, scope, loops))
                    .collect(),
            },
            ExprKind::Call {
                func,
                args,
                named_args,
            } => {
                let args: Vec<Expr> = args.iter().map(|a| self.rename(a, scope, loops)).collect();
                let named_args: Vec<_> = named_args
                    .iter()
                    .map(|(n, a)| (n.clone(), self.rename(a, scope, loops)))
                    .collect();
                if let Some(e) = self.enumeration_call(func, &args, named_args.len(), scope) {
                    return e;
                }
                if let Some(e) = self.function_call(func, &args, &named_args, span, scope) {
                    return e;
                }
                ExprKind::Call {
                    func: func.clone(),
                    args,
                    named_args,
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                self.check_binary(*op, lhs, rhs, scope, loops);
                ExprKind::Binary {
                    op: *op,
                    lhs: Box::new(self.rename(lhs, scope, loops)),
                    rhs: Box::new(self.rename(rhs, scope, loops)),
                }
            }
            ExprKind::Unary { op, expr } => {
                self.check_unary(*op, expr, scope, loops);
                ExprKind::Unary {
                    op: *op,
                    expr: Box::new(self.rename(expr, scope, loops)),
                }
            }
            ExprKind::If {
                branches,
                else_value,
            } => ExprKind::If {
                branches: branches
                    .iter()
                    .map(|(c, v)| (self.rename(c, scope, loops), self.rename(v, scope, loops)))
                    .collect(),
                else_value: Box::new(self.rename(else_value, scope, loops)),
            },
            ExprKind::Range { start, step, stop } => ExprKind::Range {
                start: Box::new(self.rename(start, scope, loops)),
                step: step
                    .as_ref()
                    .map(|s| Box::new(self.rename(s, scope, loops))),
                stop: Box::new(self.rename(stop, scope, loops)),
            },
            ExprKind::Array(items) => {
                ExprKind::Array(items.iter().map(|i| self.rename(i, scope, loops)).collect())
            }
            ExprKind::Matrix(rows) => ExprKind::Matrix(
                rows.iter()
                    .map(|r| r.iter().map(|i| self.rename(i, scope, loops)).collect())
                    .collect(),
            ),
            other => other.clone(),
        };
        Expr { kind, span }
    }

    fn rename_name(&mut self, parts: &[Ident], span: Span, scope: &Scope, loops: &Loops) -> Expr {
        let first = &parts[0].name;
        if parts.len() == 1 {
            if let Some((_, v)) = loops.iter().rev().find(|(n, _)| n == first) {
                return match v {
                    Some(v) => Expr {
                        kind: ExprKind::Integer(*v),
                        span,
                    },
                    None => name_expr(first.clone(), span),
                };
            }
            if first == "time" {
                return name_expr(first.clone(), span);
            }
        }
        if let Some(c) = scope.names.get(first) {
            let mut flat = c.flat.clone();
            for p in &parts[1..] {
                flat.push('.');
                flat.push_str(&p.name);
            }
            return name_expr(flat, span);
        }
        if parts.len() == 3
            && parts[0].name == "Modelica"
            && parts[1].name == "Constants"
            && KNOWN_CONSTANTS.contains(&parts[2].name.as_str())
        {
            return Expr {
                kind: ExprKind::Name(parts.to_vec()),
                span,
            };
        }
        if let Some(value) = self.enumeration_name(parts, span, scope) {
            return value;
        }
        if let Some(value) = self.package_constant(parts, scope) {
            return value;
        }
        let dotted: Vec<&str> = parts.iter().map(|p| p.name.as_str()).collect();
        let class = self.tree.full(scope.class);
        self.error(
            Diagnostic::error(
                codes::UNDECLARED,
                format!("cannot find `{}` in `{class}`", dotted.join(".")),
            )
            .with_primary(span, "not declared")
            .with_note(format!(
                "`{class}` has no component of this name, and no class constant has it"
            )),
        );
        Expr {
            kind: ExprKind::Error,
            span,
        }
    }

    /// The value of a constant of a package, `P.k` (MLS 3.6, §5.3.2: a
    /// composite name may look up a constant of a class), renamed in the
    /// package.
    fn package_constant(&mut self, parts: &[Ident], scope: &Scope) -> Option<Expr> {
        let (last, path) = parts.split_last()?;
        if self.const_depth >= MAX_EVAL_DEPTH {
            return None;
        }
        let (class, value) = if path.is_empty() {
            // A constant of this class, one it imports, or one of an
            // enclosing class (MLS 3.6, §5.3.1, §13.2.1).
            let mut class = Some(scope.class);
            'found: loop {
                let c = class?;
                if let Some(v) = self.constant_of(c, &last.name) {
                    break (c, v);
                }
                for (package, name) in self.tree.imported_elements(c, &last.name) {
                    if let Some(v) = self.constant_of(package, &name) {
                        break 'found (package, v);
                    }
                }
                class = self.tree.nodes[c].parent;
            }
        } else {
            let path: Vec<String> = path.iter().map(|p| p.name.clone()).collect();
            let class = self.tree.lookup(scope.class, &path)?;
            (class, self.constant_of(class, &last.name)?)
        };
        let package = Scope {
            class,
            prefix: String::new(),
            names: HashMap::new(),
            parent: None,
            inners: HashMap::new(),
        };
        self.const_depth += 1;
        let renamed = self.rename(&value, &package, &Vec::new());
        self.const_depth -= 1;
        Some(renamed)
    }

    /// The binding of the constant `name` declared in `class` (or one of
    /// its base classes).
    fn constant_of(&mut self, class: usize, name: &str) -> Option<Expr> {
        let contents = self.collect(class, &mut vec![class]);
        contents.components.into_iter().find_map(|(c, _)| {
            (c.decl.name.name == name
                && c.decl.variability != daec_syntax::ast::Variability::Continuous)
                .then(|| c.decl.binding.clone())
                .flatten()
        })
    }

    /// The flat name of a connector or component reference (`a.b`,
    /// `R[2].p`, `c[i]`), its subscripts evaluated, and whether it is a
    /// connector of `scope` itself (an outside connector, MLS 3.6, §9.1.2).
    pub(super) fn component_ref(
        &mut self,
        e: &Expr,
        scope: &Scope,
        loops: &Loops,
    ) -> Option<(String, bool)> {
        match &e.kind {
            ExprKind::Name(parts) => {
                let c = self.component(&parts[0], scope)?;
                let mut flat = c.flat.clone();
                for p in &parts[1..] {
                    flat.push('.');
                    flat.push_str(&p.name);
                }
                Some((flat, c.connector))
            }
            ExprKind::Index { base, indices } => {
                let (mut flat, outside) = self.component_ref(base, scope, loops)?;
                let mut subs = Vec::new();
                for i in indices {
                    let renamed = self.rename(i, scope, loops);
                    subs.push(self.eval_int(&renamed, "a subscript of a component")?);
                }
                let subs: Vec<String> = subs.iter().map(i64::to_string).collect();
                flat.push_str(&format!("[{}]", subs.join(",")));
                Some((flat, outside))
            }
            ExprKind::Member { base, name } => {
                let (mut flat, outside) = self.component_ref(base, scope, loops)?;
                for p in name {
                    flat.push('.');
                    flat.push_str(&p.name);
                }
                Some((flat, outside))
            }
            _ => {
                self.error(
                    Diagnostic::error(codes::CONNECT, "expected a component reference")
                        .with_primary(e.span, "not a component or connector"),
                );
                None
            }
        }
    }

    fn component(&mut self, first: &Ident, scope: &Scope) -> Option<CompRef> {
        match scope.names.get(&first.name) {
            Some(c) => Some(c.clone()),
            None => {
                let class = self.tree.full(scope.class);
                self.error(
                    Diagnostic::error(
                        codes::UNDECLARED,
                        format!("cannot find `{}` in `{class}`", first.name),
                    )
                    .with_primary(first.span, "no component of this name"),
                );
                None
            }
        }
    }

    /// The integer value of the flat expression `e`, or a diagnostic that
    /// says `what` needs it.
    pub(super) fn eval_int(&mut self, e: &Expr, what: &str) -> Option<i64> {
        match self.eval(e, 0) {
            Some(v) if v.fract() == 0.0 && v.abs() < 1e15 => Some(v as i64),
            Some(v) => {
                self.error(
                    Diagnostic::error(
                        codes::STRUCTURAL_VALUE,
                        format!("{what} must be an integer, not {v}"),
                    )
                    .with_primary(e.span, "not an integer"),
                );
                None
            }
            None => {
                self.structural_error(e, what);
                None
            }
        }
    }

    /// Reports that `e`, which `what` needs, cannot be evaluated.
    pub(super) fn structural_error(&mut self, e: &Expr, what: &str) {
        if !matches!(e.kind, ExprKind::Error) {
            self.error(
                Diagnostic::error(
                    codes::STRUCTURAL_VALUE,
                    format!("{what} must be known before the model is flattened"),
                )
                .with_primary(e.span, "cannot be evaluated here")
                .with_note(
                    "it may use literals, parameters and constants with literal values, \
                     and arithmetic on them",
                ),
            );
        }
    }

    /// The value of the flat expression `e`: literals, parameters and
    /// constants with evaluable bindings, arithmetic, relations and
    /// `if`-expressions (Booleans as 1 and 0).
    pub(super) fn eval(&self, e: &Expr, depth: usize) -> Option<f64> {
        if depth > MAX_EVAL_DEPTH {
            return None;
        }
        let ev = |x: &Expr| self.eval(x, depth + 1);
        match &e.kind {
            ExprKind::Integer(i) => Some(*i as f64),
            ExprKind::Real(x) => Some(*x),
            ExprKind::Bool(b) => Some(f64::from(u8::from(*b))),
            ExprKind::Name(parts) if parts.len() == 1 => {
                let v = self.values.get(&parts[0].name)?;
                self.eval(v, depth + 1)
            }
            ExprKind::Unary { op, expr } => {
                let v = ev(expr)?;
                Some(match op {
                    UnOp::Neg => -v,
                    UnOp::Plus => v,
                    UnOp::Not => f64::from(u8::from(v == 0.0)),
                })
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let (a, b) = (ev(lhs)?, ev(rhs)?);
                let truth = |c: bool| f64::from(u8::from(c));
                Some(match op {
                    BinOp::Add | BinOp::ElemAdd => a + b,
                    BinOp::Sub | BinOp::ElemSub => a - b,
                    BinOp::Mul | BinOp::ElemMul => a * b,
                    BinOp::Div | BinOp::ElemDiv => a / b,
                    BinOp::Pow | BinOp::ElemPow => a.powf(b),
                    BinOp::Lt => truth(a < b),
                    BinOp::Le => truth(a <= b),
                    BinOp::Gt => truth(a > b),
                    BinOp::Ge => truth(a >= b),
                    BinOp::Eq => truth(a == b),
                    BinOp::Ne => truth(a != b),
                    BinOp::And => truth(a != 0.0 && b != 0.0),
                    BinOp::Or => truth(a != 0.0 || b != 0.0),
                })
            }
            ExprKind::If {
                branches,
                else_value,
            } => {
                for (c, v) in branches {
                    if ev(c)? != 0.0 {
                        return ev(v);
                    }
                }
                ev(else_value)
            }
            ExprKind::Call { func, args, .. } if func.len() == 1 && args.len() == 1 => {
                let v = ev(&args[0])?;
                match func[0].name.as_str() {
                    "integer" | "floor" => Some(v.floor()),
                    "abs" => Some(v.abs()),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The values of a range or array expression (flat), for a `for` loop
    /// expanded by the instantiation.
    pub(super) fn eval_range(&mut self, e: &Expr) -> Option<Vec<i64>> {
        match &e.kind {
            ExprKind::Range { start, step, stop } => {
                let a = self.eval_int(start, "a `for` range around `connect`")?;
                let s = match step {
                    Some(s) => self.eval_int(s, "a `for` range around `connect`")?,
                    None => 1,
                };
                let b = self.eval_int(stop, "a `for` range around `connect`")?;
                if s == 0 {
                    self.structural_error(e, "a `for` range with step 0");
                    return None;
                }
                let n = if (s > 0 && b < a) || (s < 0 && b > a) {
                    0
                } else {
                    ((b - a) / s + 1) as usize
                };
                if n > super::MAX_EXPANDED {
                    self.structural_error(e, "a `for` range of at most a million values");
                    return None;
                }
                Some((0..n).map(|k| a + k as i64 * s).collect())
            }
            ExprKind::Array(items) => items
                .iter()
                .map(|i| self.eval_int(i, "a `for` range around `connect`"))
                .collect(),
            _ => {
                let n = self.eval_int(e, "a `for` range around `connect`")?;
                Some(vec![n])
            }
        }
    }
}
