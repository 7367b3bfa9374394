//! The instantiation of one instance: its names, its components (flat
//! declarations for those of a built-in type, sub-instances for the
//! others) and its equations.

use super::balance::{Marks, is_input};
use super::modification::{Home, Mod, Value};
use super::scope::{CompRef, Loops, Scope};
use super::{
    Inst, Instance, MAX_DEPTH, MAX_EXPANDED, Type, bind_home, index_tuples, needs_expansion, pick,
};
use daec_diag::{Diagnostic, codes};
use daec_syntax::ast::{
    self, Causality, ClassKind, Component, Equation, EquationKind, Expr, ExprKind, Ident,
    Variability,
};
use std::collections::HashMap;
use std::rc::Rc;

impl<'a> Inst<'a> {
    /// Builds `inst`: its components, its equations and its connections.
    pub(super) fn instantiate(&mut self, inst: &Instance) {
        let mut chain = vec![inst.class];
        let contents = self.collect(inst.class, &mut chain);
        if let Some(at) = contents.algorithm {
            let d = Diagnostic::error(
                codes::UNSUPPORTED,
                "an `algorithm` section is supported in a `function` only",
            )
            .with_primary(at, "a statement of a model")
            .with_help("write the statements as equations, or move them into a function");
            self.error(d);
        }
        let mut marks = Marks {
            decls: self.decls.len(),
            flows: self.connections.flows.len(),
            equations: 0,
            nodes: 0,
            interfaces: self.interfaces.len(),
        };
        let mut names = HashMap::new();
        let mut inners = HashMap::new();
        for &(c, class) in &contents.components {
            let name = &c.decl.name.name;
            if names.contains_key(name) {
                let d = Diagnostic::error(codes::DUPLICATE, format!("`{name}` is declared twice"))
                    .with_primary(c.decl.name.span, "declared again here");
                self.error(d);
                continue;
            }
            let flat = format!("{}{name}", inst.prefix);
            if c.prefixes.inner {
                inners.insert(name.clone(), flat.clone());
            }
            let (connector, enumeration) = self.kind_of(c, class);
            names.insert(
                name.clone(),
                CompRef {
                    flat,
                    connector,
                    disabled: false,
                    enumeration,
                },
            );
        }
        let mut scope = Scope {
            class: inst.class,
            prefix: inst.prefix.clone(),
            names,
            parent: inst.parent.clone(),
            inners,
        };
        self.resolve_outers(&contents.components, &mut scope);
        self.check_modifiers(inst, &contents.components);
        // Built-in components first: their parameter values size arrays
        // and decide conditions.
        let mut mods = Vec::new();
        for &(c, _) in &contents.components {
            mods.push(self.effective_mod(inst, c, &contents.modification));
        }
        for (k, &(c, class)) in contents.components.iter().enumerate() {
            if !c.prefixes.outer {
                self.declare(inst, c, class, &mods[k], &scope);
            }
        }
        self.conditions(&contents.components, &mut scope);
        let scope = Rc::new(scope);
        for (k, &(c, class)) in contents.components.iter().enumerate() {
            let skip = c.prefixes.outer
                || scope
                    .names
                    .get(&c.decl.name.name)
                    .is_none_or(|n| n.disabled);
            if !skip {
                self.sub_instance(inst, c, class, &mods[k], &scope);
            }
        }
        marks.equations = self.equations.len();
        marks.nodes = self.connections.len();
        for &(eq, initial) in &contents.equations {
            let mut out = Vec::new();
            self.equation(eq, &scope, &mut Vec::new(), &mut out);
            if initial {
                self.initial.extend(out);
            } else {
                self.equations.extend(out);
            }
        }
        self.check_balance(inst, &contents, &mods, &marks);
    }

    /// `outer` components name their `inner` one (MLS 3.6, §5.4).
    fn resolve_outers(&mut self, components: &[(&Component, usize)], scope: &mut Scope) {
        for &(c, _) in components {
            if !c.prefixes.outer {
                continue;
            }
            match scope.inner(&c.decl.name.name) {
                Some(flat) => {
                    if let Some(n) = scope.names.get_mut(&c.decl.name.name) {
                        n.flat = flat;
                    }
                }
                None => {
                    let d = Diagnostic::error(
                        codes::UNDECLARED,
                        format!("no `inner` component `{}`", c.decl.name.name),
                    )
                    .with_primary(c.decl.name.span, "this `outer` component has no `inner`")
                    .with_help(format!(
                        "declare `inner {} {};` in an enclosing model",
                        c.decl.type_name.dotted(),
                        c.decl.name.name
                    ));
                    self.error(d);
                }
            }
        }
    }

    /// Reports modifiers of elements that the class of `inst` does not
    /// have.
    fn check_modifiers(&mut self, inst: &Instance, components: &[(&Component, usize)]) {
        for (name, m) in &inst.modification.subs {
            if components.iter().any(|(c, _)| c.decl.name.name == *name) {
                continue;
            }
            let class = self.tree.full(inst.class);
            let mut d = Diagnostic::error(
                codes::MODIFIER_TARGET,
                format!("`{class}` has no element `{name}`"),
            );
            if let Some(span) = m.span {
                d = d.with_primary(span, "modifies nothing");
            }
            let known: Vec<&str> = components
                .iter()
                .map(|(c, _)| c.decl.name.name.as_str())
                .collect();
            if let Some(s) = crate::suggest::did_you_mean(name, known.iter().copied()) {
                d = d.with_help(format!("did you mean `{s}`?"));
            }
            self.error(d);
        }
    }

    /// The modification of component `c`: the instance's entry for it
    /// over the `extends` clauses' over the declaration's own (MLS 3.6,
    /// §7.2.4).
    fn effective_mod(&mut self, inst: &Instance, c: &Component, ext: &Mod) -> Mod {
        let name = &c.decl.name.name;
        let mut own = Mod::from_ast(&c.decl.modifiers, &Home::Here);
        if let Some(b) = &c.decl.binding {
            own.value = Some(Value {
                expr: b.clone(),
                home: Home::Here,
            });
            own.span = Some(b.span);
        }
        if c.prefixes.is_final {
            own.is_final = true;
            own.span = own.span.or(Some(c.decl.name.span));
        }
        let (m, clashes) = Mod::merge(ext.sub(name).cloned().unwrap_or_default(), own);
        self.report_final(&clashes);
        let (m, clashes) = Mod::merge(inst.modification.sub(name).cloned().unwrap_or_default(), m);
        self.report_final(&clashes);
        m
    }

    /// The value of `m` renamed where it was written.
    fn value_of(&mut self, m: &Mod, scope: &Scope) -> Option<Expr> {
        let v = m.value.as_ref()?;
        Some(match &v.home {
            Home::Here => self.rename(&v.expr, scope, &Vec::new()),
            Home::In(s) => {
                let s = s.clone();
                self.rename(&v.expr, &s, &Vec::new())
            }
        })
    }

    /// The flat declaration of a component of a built-in type.
    fn declare(&mut self, inst: &Instance, c: &Component, class: usize, m: &Mod, scope: &Scope) {
        let Some(resolved) = self.resolve_type(c, class, m.redeclare.as_ref(), true) else {
            return;
        };
        let Type::Builtin(type_name) = &resolved.ty else {
            return;
        };
        if let Some(span) = c.prefixes.stream {
            let d = Diagnostic::error(codes::UNSUPPORTED, "`stream` connectors are not supported")
                .with_primary(span, "not supported")
                .with_help("model the transported quantity with a potential and a flow variable");
            self.error(d);
            return;
        }
        let m = Mod::merge(m.clone(), resolved.modification.clone()).0;
        let flat = format!("{}{}", inst.prefix, c.decl.name.name);
        let variability = match (c.decl.variability, inst.variability) {
            (Variability::Continuous, v) => v,
            (v, _) => v,
        };
        let causality = if inst.top {
            match c.decl.causality {
                Causality::None => resolved.causality,
                other => other,
            }
        } else {
            Causality::None
        };
        let mut dims: Vec<Expr> = c
            .decl
            .dims
            .iter()
            .map(|d| self.rename(d, scope, &Vec::new()))
            .collect();
        dims.extend(
            resolved
                .dims
                .iter()
                .map(|d| self.rename(d, scope, &Vec::new())),
        );
        let mut modifiers = Vec::new();
        for (name, sub) in &m.subs {
            let Some(value) = self.value_of(sub, scope) else {
                continue;
            };
            modifiers.push(ast::Modifier {
                each: sub.each,
                is_final: false,
                name: Ident {
                    name: name.clone(),
                    span: sub.span.unwrap_or(c.decl.name.span),
                },
                nested: Vec::new(),
                value: Some(value),
                redeclare: None,
                span: sub.span.unwrap_or(c.decl.name.span),
            });
        }
        if let Some(v) = &m.value {
            let home = match &v.home {
                Home::Here => scope,
                Home::In(s) => s.as_ref(),
            };
            let found = self.enum_type(&v.expr, home, &Vec::new());
            self.check_binding(resolved.enumeration, found, v.expr.span);
        }
        if let Some(e) = resolved.enumeration {
            self.enum_vars.insert(flat.clone(), e);
            let fixed_value = matches!(variability, Variability::Parameter | Variability::Constant);
            if !fixed_value && !m.subs.iter().any(|(n, _)| n == "start") {
                // MLS 3.6, §4.9.5.1: the start value defaults to the
                // first literal.
                modifiers.push(enumeration_start(c.decl.name.span));
            }
        }
        let binding = self.value_of(&m, scope);
        if variability != Variability::Continuous
            && let Some(b) = &binding
        {
            self.values.insert(flat.clone(), b.clone());
        }
        if c.prefixes.flow {
            self.connections
                .flows
                .push((flat.clone(), c.decl.name.span));
        }
        if is_input(c, resolved.causality) {
            self.inputs.insert(flat.clone());
        }
        if resolved.connector {
            self.connections
                .connectors
                .insert(flat.clone(), vec![(String::new(), c.prefixes.flow)]);
        }
        self.decls.push(ast::Declaration {
            variability,
            causality,
            type_name: ast::TypeName {
                parts: vec![type_name.clone()],
                span: c.decl.type_name.span,
            },
            name: Ident {
                name: flat,
                span: c.decl.name.span,
            },
            dims,
            modifiers,
            binding,
            description: c.decl.description.clone(),
            annotations: Vec::new(),
            span: c.decl.span,
        });
    }

    /// Evaluates the conditions of conditional components (MLS 3.6,
    /// §4.4.5); a component whose condition is false is removed with its
    /// connections.
    fn conditions(&mut self, components: &[(&Component, usize)], scope: &mut Scope) {
        for &(c, _) in components {
            let Some(cond) = &c.condition else { continue };
            let renamed = self.rename(cond, scope, &Vec::new());
            let Some(v) = self.eval(&renamed, 0) else {
                self.structural_error(&renamed, "the condition of a conditional component");
                continue;
            };
            if v == 0.0 {
                let flat = format!("{}{}", scope.prefix, c.decl.name.name);
                self.decls.retain(|d| d.name.name != flat);
                if let Some(n) = scope.names.get_mut(&c.decl.name.name) {
                    n.disabled = true;
                }
            }
        }
    }

    /// Instantiates a component of a class type (each element of a
    /// component array).
    fn sub_instance(
        &mut self,
        inst: &Instance,
        c: &Component,
        class: usize,
        m: &Mod,
        scope: &Rc<Scope>,
    ) {
        let Some(resolved) = self.resolve_type(c, class, m.redeclare.as_ref(), false) else {
            return;
        };
        let Type::Class(id) = resolved.ty else {
            return;
        };
        let kind = self.tree.kind(id);
        if matches!(
            kind,
            ClassKind::Function
                | ClassKind::Operator
                | ClassKind::ExpandableConnector
                | ClassKind::Package
        ) {
            let d = Diagnostic::error(
                codes::UNSUPPORTED,
                format!("a component of a `{}` is not supported", kind.keyword()),
            )
            .with_primary(c.decl.type_name.span, "not supported");
            self.error(d);
            return;
        }
        if self.stack.len() >= MAX_DEPTH {
            let d = Diagnostic::error(
                codes::TOO_LARGE,
                format!("components nested more than {MAX_DEPTH} deep"),
            )
            .with_primary(c.decl.type_name.span, "one level too many");
            self.error(d);
            return;
        }
        if self.stack.iter().any(|(k, ..)| *k == id) {
            let d = Diagnostic::error(
                codes::INSTANCE_CYCLE,
                format!(
                    "`{}` contains itself through component `{}`",
                    self.tree.full(id),
                    c.decl.name.name
                ),
            )
            .with_primary(c.decl.type_name.span, "this component closes the cycle");
            self.error(d);
            return;
        }
        let m = Mod::merge(m.clone(), resolved.modification).0;
        let m = bind_home(&m, scope);
        let mut dims = Vec::new();
        for d in c.decl.dims.iter().chain(&resolved.dims) {
            let renamed = self.rename(d, scope, &Vec::new());
            let Some(n) = self.eval_int(&renamed, "the size of a component array") else {
                return;
            };
            dims.push(n.max(0) as usize);
        }
        if dims
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .is_none_or(|n| n > MAX_EXPANDED)
        {
            let d = Diagnostic::error(
                codes::TOO_LARGE,
                format!("a component array of more than {MAX_EXPANDED} components"),
            )
            .with_primary(c.decl.name.span, "too many components");
            self.error(d);
            return;
        }
        let variability = match c.decl.variability {
            Variability::Continuous => inst.variability,
            v => v,
        };
        if self.instances > MAX_EXPANDED {
            // Reported once.
            return;
        }
        let count: usize = dims.iter().product();
        self.instances += count;
        if self.instances > MAX_EXPANDED {
            let d = Diagnostic::error(
                codes::TOO_LARGE,
                format!("a model of more than {MAX_EXPANDED} component instances"),
            )
            .with_primary(c.decl.name.span, "the limit is passed here");
            self.error(d);
            return;
        }
        for index in index_tuples(&dims) {
            let mut flat = format!("{}{}", inst.prefix, c.decl.name.name);
            if !dims.is_empty() {
                let subs: Vec<String> = index.iter().map(|i| (i + 1).to_string()).collect();
                flat.push_str(&format!("[{}]", subs.join(",")));
            }
            let child = Instance {
                class: id,
                prefix: format!("{flat}."),
                modification: pick(&m, &index),
                parent: Some(scope.clone()),
                variability,
                top: false,
            };
            let first = self.decls.len();
            self.stack
                .push((id, c.decl.name.span, c.decl.name.name.clone()));
            self.instantiate(&child);
            self.stack.pop();
            if resolved.connector {
                let vars = self.decls[first..]
                    .iter()
                    .filter_map(|d| d.name.name.strip_prefix(&child.prefix))
                    .map(|rel| {
                        let flow = self
                            .connections
                            .flows
                            .iter()
                            .any(|(f, _)| *f == format!("{}{rel}", child.prefix));
                        (format!(".{rel}"), flow)
                    })
                    .collect();
                self.connections.connectors.insert(flat, vars);
            }
        }
    }

    /// Renames (and where needed expands) equation `eq` of an instance
    /// into `out`; `connect` equations go to the connection sets.
    pub(super) fn equation(
        &mut self,
        eq: &Equation,
        scope: &Scope,
        loops: &mut Loops,
        out: &mut Vec<Equation>,
    ) {
        let kind = match &eq.kind {
            EquationKind::Simple { lhs, rhs } if matches!(lhs.kind, ExprKind::Tuple(_)) => {
                let ExprKind::Tuple(items) = &lhs.kind else {
                    return;
                };
                let Some(outputs) = self.call_outputs(rhs, scope, loops) else {
                    return;
                };
                if outputs.len() < items.len() {
                    let d = Diagnostic::error(
                        codes::ARITY,
                        format!(
                            "the call has {} outputs, {} equated",
                            outputs.len(),
                            items.len()
                        ),
                    )
                    .with_primary(lhs.span, "too many outputs");
                    self.error(d);
                    return;
                }
                for (item, value) in items.iter().zip(outputs) {
                    out.push(Equation {
                        kind: EquationKind::Simple {
                            lhs: self.rename(item, scope, loops),
                            rhs: value,
                        },
                        description: eq.description.clone(),
                        annotations: eq.annotations.clone(),
                        span: eq.span,
                    });
                }
                return;
            }
            EquationKind::Simple { lhs, rhs } => {
                self.check_equation(lhs, rhs, scope, loops);
                EquationKind::Simple {
                    lhs: self.rename(lhs, scope, loops),
                    rhs: self.rename(rhs, scope, loops),
                }
            }
            EquationKind::Call { name, args } if name.name == "connect" => {
                if let [a, b] = args.as_slice() {
                    self.connect(a, b, scope, loops, eq.span);
                } else {
                    let d = Diagnostic::error(codes::ARITY, "`connect` takes two connectors")
                        .with_primary(eq.span, "expected `connect(a, b)`");
                    self.error(d);
                }
                return;
            }
            EquationKind::Call { name, args } => EquationKind::Call {
                name: name.clone(),
                args: args.iter().map(|a| self.rename(a, scope, loops)).collect(),
            },
            EquationKind::For { var, range, body } => {
                let range = self.rename(range, scope, loops);
                if needs_expansion(body) {
                    let Some(values) = self.eval_range(&range) else {
                        return;
                    };
                    for v in values {
                        loops.push((var.name.clone(), Some(v)));
                        for e in body {
                            self.equation(e, scope, loops, out);
                        }
                        loops.pop();
                    }
                    return;
                }
                loops.push((var.name.clone(), None));
                let inner = self.equations(body, scope, loops);
                loops.pop();
                EquationKind::For {
                    var: var.clone(),
                    range,
                    body: inner,
                }
            }
            EquationKind::If {
                branches,
                else_branch,
            } => {
                if branches.iter().any(|(_, b)| needs_expansion(b)) || needs_expansion(else_branch)
                {
                    for (c, body) in branches {
                        let c = self.rename(c, scope, loops);
                        match self.eval(&c, 0) {
                            Some(v) if v != 0.0 => {
                                for e in body {
                                    self.equation(e, scope, loops, out);
                                }
                                return;
                            }
                            Some(_) => {}
                            None => {
                                self.structural_error(
                                    &c,
                                    "the condition of an `if` around `connect`",
                                );
                                return;
                            }
                        }
                    }
                    for e in else_branch {
                        self.equation(e, scope, loops, out);
                    }
                    return;
                }
                EquationKind::If {
                    branches: self.branches(branches, scope, loops),
                    else_branch: self.equations(else_branch, scope, loops),
                }
            }
            EquationKind::When { branches } => EquationKind::When {
                branches: self.branches(branches, scope, loops),
            },
            EquationKind::Error => return,
        };
        out.push(Equation {
            kind,
            description: eq.description.clone(),
            annotations: eq.annotations.clone(),
            span: eq.span,
        });
    }
}

impl Inst<'_> {
    /// The equations `body` renamed.
    fn equations(&mut self, body: &[Equation], scope: &Scope, loops: &mut Loops) -> Vec<Equation> {
        let mut out = Vec::new();
        for e in body {
            self.equation(e, scope, loops, &mut out);
        }
        out
    }

    /// The `(condition, equations)` branches of an `if` or `when` renamed.
    fn branches(
        &mut self,
        branches: &[(Expr, Vec<Equation>)],
        scope: &Scope,
        loops: &mut Loops,
    ) -> Vec<(Expr, Vec<Equation>)> {
        branches
            .iter()
            .map(|(c, body)| {
                (
                    self.rename(c, scope, loops),
                    self.equations(body, scope, loops),
                )
            })
            .collect()
    }
}

/// The modifier `start = 1` (the first literal) of a variable of an
/// enumeration type.
fn enumeration_start(span: daec_diag::Span) -> ast::Modifier {
    ast::Modifier {
        each: true,
        is_final: false,
        name: Ident {
            name: "start".to_owned(),
            span,
        },
        nested: Vec::new(),
        value: Some(Expr {
            kind: ExprKind::Integer(1),
            span,
        }),
        redeclare: None,
        span,
    }
}

/// `e` is a flat name.
pub(super) fn flat_name(name: String, span: daec_diag::Span) -> Expr {
    Expr {
        kind: ExprKind::Name(vec![Ident { name, span }]),
        span,
    }
}
