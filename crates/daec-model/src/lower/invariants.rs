//! The vendor annotation `__daec(invariant = true)` on an equation: the
//! equation is an invariant of the dynamics (the NDSolve tutorial's "ODEs
//! with Invariants"), kept apart from the defining equations in
//! [`crate::Dae::invariants`].

use super::{Lowerer, Mode, R, Val};
use crate::BaseType;
use daec_diag::{Diagnostic, codes};
use daec_syntax::ast::{self, EquationKind};

/// The vendor annotation of daec (MLS 3.6 §18.1: an annotation whose name
/// starts with `__` is vendor-specific; other tools ignore it).
const VENDOR: &str = "__daec";

/// The keys `__daec(…)` accepts on an equation.
// `alias` marks an equation the alias elimination (`crate::aliases`)
// removes before lowering; one that stays is an ordinary equation.
const KEYS: [&str; 2] = ["invariant", "alias"];

impl<'a> Lowerer<'a> {
    /// Whether `eq` carries `annotation(__daec(invariant = true))`. A key
    /// other than `invariant`, a value that is not a Boolean constant, or
    /// the annotation where an invariant cannot be (an initial equation, a
    /// `when`) is an error at it. Other annotations are ignored.
    pub(super) fn invariant_annotation(&mut self, eq: &'a ast::Equation, initial: bool) -> R<bool> {
        let mut invariant = false;
        let mut ok = true;
        for a in eq.annotations.iter().filter(|a| a.name.name == VENDOR) {
            if a.value.is_some() || a.nested.is_empty() {
                ok = false;
                self.diags.push(
                    Diagnostic::error(
                        codes::MODIFIER,
                        format!("`{VENDOR}` takes its settings in parentheses"),
                    )
                    .with_primary(a.span, "write `__daec(invariant = true)`"),
                );
                continue;
            }
            for m in &a.nested {
                if !KEYS.contains(&m.name.name.as_str()) {
                    ok = false;
                    let d = Diagnostic::error(
                        codes::MODIFIER,
                        format!("unknown `{VENDOR}` setting `{}`", m.name.name),
                    )
                    .with_primary(m.name.span, "not a setting of daec")
                    .with_help(format!(
                        "the settings of `{VENDOR}` on an equation are: {}",
                        KEYS.join(", ")
                    ));
                    self.diags.push(d);
                    continue;
                }
                match self.boolean_setting(m) {
                    Some(v) if m.name.name == "invariant" => invariant = v,
                    Some(_) => {}
                    None => ok = false,
                }
            }
        }
        if !ok {
            return Err(super::Reported);
        }
        if invariant {
            let place = if initial {
                Some("an initial equation")
            } else if matches!(eq.kind, EquationKind::When { .. }) {
                Some("a `when` clause")
            } else {
                None
            };
            if let Some(place) = place {
                return Err(self.error(
                    Diagnostic::error(
                        codes::MODIFIER,
                        format!("{place} cannot be declared an invariant"),
                    )
                    .with_primary(eq.span, "declared `invariant = true`")
                    .with_note(
                        "an invariant is a relation the solution keeps for all times, written in an `equation` section",
                    ),
                ));
            }
        }
        Ok(invariant)
    }

    /// The value of a Boolean setting `name = value` (a constant), or an
    /// error at it.
    fn boolean_setting(&mut self, m: &'a ast::Modifier) -> Option<bool> {
        let Some(value) = &m.value else {
            self.diags.push(
                Diagnostic::error(codes::MODIFIER, format!("`{}` needs a value", m.name.name))
                    .with_primary(m.span, format!("write `{} = true`", m.name.name)),
            );
            return None;
        };
        let v = self.lower_expr(value, Mode::Const).ok()?;
        let x = match v {
            Val::Scalar(BaseType::Boolean, e) => self.const_value(e),
            _ => None,
        };
        if x.is_none() {
            self.diags.push(
                Diagnostic::error(
                    codes::MODIFIER,
                    format!("`{}` must be `true` or `false`", m.name.name),
                )
                .with_primary(value.span, "not a Boolean constant"),
            );
        }
        x.map(|x| x != 0.0)
    }
}
