//! The balance check of component instances (MLS 3.6, §4.8): the local
//! equation size of a non-`partial` model or block equals its local
//! variable size, so that an unbalanced model names the component that
//! is wrong.
//!
//! The check covers leaf components — those whose elements are scalar
//! variables of built-in types and connectors of such variables, and
//! whose equations are scalar equations `a = b` — which is where a
//! library's equations are written. For them (§4.8):
//! - the local variable size is the number of their variables and of the
//!   variables of their connectors that are not parameters or constants;
//! - the local equation size is the number of their equations and of the
//!   bindings of those variables, plus one for each `flow` variable of a
//!   top-level public connector (the connection equations the enclosing
//!   model supplies) and one for each unbound `input` (its value comes
//!   from outside).
//!
//! Components of any other shape (arrays, `for`, `if`, `when`,
//! `connect`, components of model type) are left to the whole-model
//! count of the lowering.

use super::{Contents, Inst, Instance, Type};
use daec_diag::{Diagnostic, codes};
use daec_syntax::ast::{Causality, ClassKind, EquationKind, Variability};

impl Inst<'_> {
    /// Reports component instance `inst` (whose variables are
    /// `self.decls[first_decl..]`, its flow variables
    /// `self.connections.flows[first_flow..]`) when its local equation and
    /// variable sizes differ.
    pub(super) fn check_balance(
        &mut self,
        inst: &Instance,
        contents: &Contents<'_>,
        first_decl: usize,
        first_flow: usize,
    ) {
        let Some(def) = self.tree.nodes[inst.class].def else {
            return;
        };
        // After an error the counts are not those of the model written.
        if self.diags.iter().any(Diagnostic::is_error) {
            return;
        }
        if inst.top || def.partial || !matches!(def.kind, ClassKind::Model | ClassKind::Block) {
            return;
        }
        let mut equations = 0usize;
        for (eq, initial) in &contents.equations {
            match &eq.kind {
                EquationKind::Simple { .. } => equations += usize::from(!initial),
                _ => return,
            }
        }
        let decls = &self.decls[first_decl..];
        let mut unknowns = 0usize;
        for d in decls {
            if !d.dims.is_empty() {
                return;
            }
            if d.variability == Variability::Continuous || d.variability == Variability::Discrete {
                unknowns += 1;
                equations += usize::from(d.binding.is_some());
            }
        }
        // Every variable must lie in this instance or one level below it
        // (a connector); a deeper one is a component of model type.
        if decls.iter().any(|d| {
            d.name
                .name
                .strip_prefix(&inst.prefix)
                .is_none_or(|rel| rel.matches('.').count() > 1)
        }) {
            return;
        }
        let mut inputs = 0usize;
        for (c, class) in &contents.components {
            let resolved = self.resolve_type(c, *class, None, false);
            if resolved
                .as_ref()
                .is_some_and(|r| matches!(r.ty, Type::Class(_)) && !r.connector)
            {
                return;
            }
            if c.protected || c.prefixes.outer {
                continue;
            }
            let flat = format!("{}{}", inst.prefix, c.decl.name.name);
            let Some(bound) = self.decls[first_decl..]
                .iter()
                .find(|d| d.name.name == flat)
                .map(|d| d.binding.is_some())
            else {
                continue;
            };
            let input = c.decl.causality == Causality::Input
                || resolved.is_some_and(|r| r.causality == Causality::Input);
            if input && !bound {
                inputs += 1;
            }
        }
        equations += inputs;
        let connector_prefixes: Vec<String> = contents
            .components
            .iter()
            .filter(|(c, _)| !c.protected)
            .map(|(c, _)| format!("{}{}.", inst.prefix, c.decl.name.name))
            .collect();
        equations += self.connections.flows[first_flow..]
            .iter()
            .filter(|(f, _)| connector_prefixes.iter().any(|p| f.starts_with(p)))
            .count();
        if equations == unknowns {
            return;
        }
        let component = inst.prefix.trim_end_matches('.');
        let class = self.tree.full(inst.class);
        let plural = |n: usize, w: &str| {
            if n == 1 {
                format!("{n} {w}")
            } else {
                format!("{n} {w}s")
            }
        };
        let d = Diagnostic::error(
            codes::UNBALANCED_COMPONENT,
            format!(
                "component `{component}` of type `{class}` has {} for {}",
                plural(equations, "equation"),
                plural(unknowns, "unknown")
            ),
        )
        .with_primary(
            def.name.span,
            if equations > unknowns {
                "this class has too many equations"
            } else {
                "this class has too few equations"
            },
        )
        .with_note(
            "a model or block must have as many equations as unknowns (MLS 3.6, §4.8); \
             the flow variables of its public connectors and its inputs count as equations \
             supplied from outside",
        );
        self.error(d);
    }
}
