//! Enumeration types (MLS 3.6, §4.9.5): `type Mode = enumeration(off
//! "doc", slow, fast);`.
//!
//! The parser reads `enumeration(…)` as a short class definition whose base
//! is the name `enumeration` and whose modifiers are the literals (the
//! word is a keyword of Modelica, so no class can have that name). The
//! instantiation gives an enumeration value its ordinal (`Mode.off` is 1,
//! `Integer(Mode.fast)` is 3, MLS §4.9.5.2) and declares a variable of an
//! enumeration type as an `Integer` of the flat model, so the lowering,
//! the discrete semantics (`pre`, `when`, comparisons in literal order)
//! and the results (the ordinal in the result column) are those of
//! `Integer`. The type itself is checked here, while the names still tell
//! it: an unknown literal, a comparison or equation between two
//! enumeration types or between an enumeration and a number, arithmetic on
//! an enumeration value and a binding of the wrong type are `E0138`.

use super::scope::{Loops, Scope};
use super::{Inst, MAX_DEPTH};
use daec_diag::{Diagnostic, Span, codes};
use daec_syntax::ast::{BinOp, ClassBody, Expr, ExprKind, Ident, UnOp};

/// The type of an expression as far as enumerations are concerned.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum EnumTy {
    /// A value of the enumeration type defined by this class.
    Enum(usize),
    /// A number or a Boolean: known not to be an enumeration.
    Other,
    /// Not known here (a reference into a component, a function call);
    /// nothing is checked.
    Unknown,
}

impl Inst<'_> {
    /// The enumeration class that `class` is or names through short class
    /// definitions (`type Mode2 = Mode;`), with its literals; `None` for
    /// any other class. A malformed literal list is reported once.
    pub(super) fn enumeration(&mut self, class: usize) -> Option<(usize, Vec<String>)> {
        let mut at = class;
        for _ in 0..MAX_DEPTH {
            let def = self.tree.nodes[at].def?;
            let ClassBody::Short {
                base,
                modifiers,
                dims,
                ..
            } = &def.body
            else {
                return None;
            };
            if base.parts != ["enumeration"] {
                let from = self.tree.nodes[at].parent.unwrap_or(0);
                at = self.tree.lookup(from, &base.parts)?;
                continue;
            }
            let literals: Vec<String> = modifiers.iter().map(|m| m.name.name.clone()).collect();
            if self.checked_enums.insert(at) {
                self.check_literals(at, modifiers, dims, def.name.span);
            }
            return Some((at, literals));
        }
        None
    }

    /// Reports literals that are not plain names, and repeated ones.
    fn check_literals(
        &mut self,
        class: usize,
        modifiers: &[daec_syntax::ast::Modifier],
        dims: &[Expr],
        at: Span,
    ) {
        let name = self.tree.full(class);
        if modifiers.is_empty() || !dims.is_empty() {
            let d = Diagnostic::error(
                codes::ENUMERATION,
                format!("enumeration `{name}` must list its literals"),
            )
            .with_primary(at, "expected `enumeration(a, b, …)`");
            self.diags.push(d);
        }
        for (k, m) in modifiers.iter().enumerate() {
            let malformed = m.value.is_some()
                || !m.nested.is_empty()
                || m.each
                || m.is_final
                || m.redeclare.is_some()
                || m.name.name.contains('.');
            if malformed {
                let d = Diagnostic::error(
                    codes::ENUMERATION,
                    format!("a literal of enumeration `{name}` must be a name"),
                )
                .with_primary(m.span, "not an enumeration literal")
                .with_help("write the literals as names with optional descriptions: `enumeration(off \"doc\", on)`");
                self.diags.push(d);
            } else if modifiers[..k].iter().any(|p| p.name.name == m.name.name) {
                let d = Diagnostic::error(
                    codes::ENUMERATION,
                    format!("enumeration `{name}` lists `{}` twice", m.name.name),
                )
                .with_primary(m.span, "listed again here");
                self.diags.push(d);
            }
        }
    }

    /// The enumeration class that the type name `parts` names from
    /// `scope`, if it names one.
    fn enumeration_named(
        &mut self,
        parts: &[Ident],
        scope: &Scope,
    ) -> Option<(usize, Vec<String>)> {
        let path: Vec<String> = parts.iter().map(|p| p.name.clone()).collect();
        let class = self.tree.lookup(scope.class, &path)?;
        self.enumeration(class)
    }

    /// `Mode.fast` as its ordinal, `Mode` (as a `for` range) as
    /// `1:size(Mode)`; an unknown literal of an enumeration is reported.
    /// `None` when `parts` names no enumeration.
    pub(super) fn enumeration_name(
        &mut self,
        parts: &[Ident],
        span: Span,
        scope: &Scope,
    ) -> Option<Expr> {
        let int = |k: usize| Expr {
            kind: ExprKind::Integer(k as i64),
            span,
        };
        if let Some((_, literals)) = self.enumeration_named(parts, scope) {
            // The type as a range (MLS 3.6, §11.2.2.1: `for e in E loop`).
            return Some(Expr {
                kind: ExprKind::Range {
                    start: Box::new(int(1)),
                    step: None,
                    stop: Box::new(int(literals.len())),
                },
                span,
            });
        }
        let (last, path) = parts.split_last()?;
        if path.is_empty() {
            return None;
        }
        let (class, literals) = self.enumeration_named(path, scope)?;
        if let Some(k) = literals.iter().position(|l| *l == last.name) {
            return Some(int(k + 1));
        }
        let name = self.tree.full(class);
        let mut d = Diagnostic::error(
            codes::ENUMERATION,
            format!("enumeration `{name}` has no literal `{}`", last.name),
        )
        .with_primary(last.span, "not a literal of this enumeration")
        .with_note(format!("its literals are {}", literals.join(", ")));
        if let Some(s) =
            crate::suggest::did_you_mean(&last.name, literals.iter().map(String::as_str))
        {
            d = d.with_help(format!("did you mean `{s}`?"));
        }
        self.error(d);
        Some(Expr {
            kind: ExprKind::Error,
            span,
        })
    }

    /// A call of an enumeration's conversions (MLS 3.6, §4.9.5.2–3):
    /// `Integer(e)` is the ordinal of `e`, `Mode(k)` the value of ordinal
    /// `k` (checked when `k` is known). `args` are renamed; `None` for any
    /// other call.
    pub(super) fn enumeration_call(
        &mut self,
        func: &[Ident],
        args: &[Expr],
        named: usize,
        scope: &Scope,
    ) -> Option<Expr> {
        let [arg] = args else { return None };
        if named > 0 {
            return None;
        }
        if func.len() == 1 && func[0].name == "Integer" {
            return Some(arg.clone());
        }
        let (class, literals) = self.enumeration_named(func, scope)?;
        if let Some(v) = self.eval(arg, 0)
            && (v.fract() != 0.0 || v < 1.0 || v > literals.len() as f64)
        {
            let d = Diagnostic::error(
                codes::ENUMERATION,
                format!("`{}` has no literal of ordinal {v}", self.tree.full(class)),
            )
            .with_primary(arg.span, format!("expected 1 to {}", literals.len()));
            self.error(d);
        }
        Some(arg.clone())
    }

    /// The enumeration type of the (not yet renamed) expression `e` of
    /// `scope`.
    pub(super) fn enum_type(&mut self, e: &Expr, scope: &Scope, loops: &Loops) -> EnumTy {
        match &e.kind {
            ExprKind::Integer(_) | ExprKind::Real(_) | ExprKind::Bool(_) => EnumTy::Other,
            ExprKind::Name(parts) => self.name_type(parts, scope, loops),
            ExprKind::Index { base, .. } => self.enum_type(base, scope, loops),
            ExprKind::If {
                branches,
                else_value,
            } => branches
                .iter()
                .map(|(_, v)| v)
                .chain([else_value.as_ref()])
                .map(|v| self.enum_type(v, scope, loops))
                .find(|t| *t != EnumTy::Unknown)
                .unwrap_or(EnumTy::Unknown),
            ExprKind::Call { func, args, .. } => {
                let name = func.iter().map(|f| f.name.as_str()).collect::<Vec<_>>();
                match (name.as_slice(), args.as_slice()) {
                    (["pre" | "noEvent" | "smooth"], [.., a]) | (["min" | "max"], [a, _]) => {
                        self.enum_type(a, scope, loops)
                    }
                    (["Integer" | "integer" | "abs" | "sign"], _) => EnumTy::Other,
                    _ => match self.enumeration_named(func, scope) {
                        Some((class, _)) => EnumTy::Enum(class),
                        None => EnumTy::Unknown,
                    },
                }
            }
            ExprKind::Binary { .. } | ExprKind::Unary { .. } => EnumTy::Other,
            _ => EnumTy::Unknown,
        }
    }

    fn name_type(&mut self, parts: &[Ident], scope: &Scope, loops: &Loops) -> EnumTy {
        let first = &parts[0].name;
        if parts.len() == 1 && (loops.iter().any(|(n, _)| n == first) || first == "time") {
            return if first == "time" {
                EnumTy::Other
            } else {
                EnumTy::Unknown
            };
        }
        if let Some(c) = scope.names.get(first) {
            if parts.len() == 1 {
                return c.enumeration.map_or(EnumTy::Other, EnumTy::Enum);
            }
            let mut flat = c.flat.clone();
            for p in &parts[1..] {
                flat.push('.');
                flat.push_str(&p.name);
            }
            return self
                .enum_vars
                .get(&flat)
                .map_or(EnumTy::Unknown, |&e| EnumTy::Enum(e));
        }
        let (_, path) = parts.split_last().expect("a name has a part");
        if path.is_empty() {
            return EnumTy::Unknown;
        }
        match self.enumeration_named(path, scope) {
            Some((class, _)) => EnumTy::Enum(class),
            None => EnumTy::Unknown,
        }
    }

    /// Checks the operands of `lhs op rhs` (MLS 3.6, §4.9.5: enumeration
    /// values compare with values of their own type only, in literal
    /// order, and take no arithmetic).
    pub(super) fn check_binary(
        &mut self,
        op: BinOp,
        lhs: &Expr,
        rhs: &Expr,
        scope: &Scope,
        loops: &Loops,
    ) {
        let (a, b) = (
            self.enum_type(lhs, scope, loops),
            self.enum_type(rhs, scope, loops),
        );
        let relation = matches!(
            op,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne
        );
        if relation {
            self.check_same(a, b, lhs.span, rhs.span, op.symbol());
            return;
        }
        for (t, e) in [(a, lhs), (b, rhs)] {
            if let EnumTy::Enum(class) = t {
                self.arithmetic_error(class, e.span, op.symbol());
                return;
            }
        }
    }

    /// Checks the operand of a unary operator.
    pub(super) fn check_unary(&mut self, op: UnOp, e: &Expr, scope: &Scope, loops: &Loops) {
        if let EnumTy::Enum(class) = self.enum_type(e, scope, loops) {
            let symbol = match op {
                UnOp::Neg => "-",
                UnOp::Plus => "+",
                UnOp::Not => "not",
            };
            self.arithmetic_error(class, e.span, symbol);
        }
    }

    fn arithmetic_error(&mut self, class: usize, at: Span, op: &str) {
        let d = Diagnostic::error(
            codes::ENUMERATION,
            format!(
                "`{op}` on a value of enumeration `{}`",
                self.tree.full(class)
            ),
        )
        .with_primary(at, "an enumeration value")
        .with_note("enumeration values take no arithmetic (MLS 3.6, §4.9.5)")
        .with_help("use its ordinal, `Integer(…)`");
        self.error(d);
    }

    /// Checks that an equation `lhs = rhs` equates values of one type.
    pub(super) fn check_equation(&mut self, lhs: &Expr, rhs: &Expr, scope: &Scope, loops: &Loops) {
        let (a, b) = (
            self.enum_type(lhs, scope, loops),
            self.enum_type(rhs, scope, loops),
        );
        self.check_same(a, b, lhs.span, rhs.span, "=");
    }

    /// Checks that a binding (or modifier value) `value`, typed `found`,
    /// fits a declaration of enumeration `expected` (or of a built-in type
    /// when `None`).
    pub(super) fn check_binding(&mut self, expected: Option<usize>, found: EnumTy, value: Span) {
        let name = |s: &Self, c: usize| s.tree.full(c);
        let message = match (expected, found) {
            (Some(e), EnumTy::Enum(f)) if e != f => format!(
                "a value of enumeration `{}` for a variable of enumeration `{}`",
                name(self, f),
                name(self, e)
            ),
            (Some(e), EnumTy::Other) => {
                format!("a number for a variable of enumeration `{}`", name(self, e))
            }
            (None, EnumTy::Enum(f)) => format!(
                "a value of enumeration `{}` for a variable of a built-in type",
                name(self, f)
            ),
            _ => return,
        };
        let help = match expected {
            Some(e) => format!("write a literal `{}.…`", name(self, e)),
            None => "use its ordinal, `Integer(…)`".to_owned(),
        };
        let d = Diagnostic::error(codes::ENUMERATION, message)
            .with_primary(value, "of the wrong type")
            .with_help(help);
        self.error(d);
    }

    fn check_same(&mut self, a: EnumTy, b: EnumTy, lhs: Span, rhs: Span, op: &str) {
        let (class, other, at) = match (a, b) {
            (EnumTy::Enum(x), EnumTy::Enum(y)) if x != y => {
                let d = Diagnostic::error(
                    codes::ENUMERATION,
                    format!(
                        "`{op}` between enumerations `{}` and `{}`",
                        self.tree.full(x),
                        self.tree.full(y)
                    ),
                )
                .with_primary(rhs, format!("of enumeration `{}`", self.tree.full(y)))
                .with_secondary(lhs, format!("of enumeration `{}`", self.tree.full(x)))
                .with_note(
                    "values of different enumeration types do not compare (MLS 3.6, §4.9.5)",
                );
                self.error(d);
                return;
            }
            (EnumTy::Enum(x), EnumTy::Other) => (x, rhs, lhs),
            (EnumTy::Other, EnumTy::Enum(y)) => (y, lhs, rhs),
            _ => return,
        };
        let d = Diagnostic::error(
            codes::ENUMERATION,
            format!(
                "`{op}` between a value of enumeration `{}` and a number",
                self.tree.full(class)
            ),
        )
        .with_primary(other, "a number")
        .with_secondary(at, format!("of enumeration `{}`", self.tree.full(class)))
        .with_help(format!(
            "compare with a literal `{}.…`, or compare `Integer(…)` with the number",
            self.tree.full(class)
        ));
        self.error(d);
    }
}
