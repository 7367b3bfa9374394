//! Parameters and constants: the `-p` overrides, the evaluation order (the
//! strongly connected components of the names their declarations use), the
//! evaluation of each declaration to its values (structural `Integer` and
//! `Boolean` values folded, `Real` parameters kept symbolic) and the report
//! of a dependency cycle.

use super::{
    EvalState, Lowerer, Mode, R, Reported, SymKind, article, subscript_text, ty_name, type_source,
    unravel,
};
use crate::budget::elements;
use crate::suggest::did_you_mean;
use crate::{BaseType, Parameter};
use daec_diag::{Diagnostic, Span, codes};
use daec_syntax::ast::{self, ExprKind, Modifier, Variability};

impl<'a> Lowerer<'a> {
    pub(super) fn check_overrides(&mut self) {
        for (name, _) in &self.options.overrides {
            let base = name.split('[').next().unwrap_or(name);
            let found = self.model.declarations.iter().any(|d| {
                d.name.name == base
                    && matches!(
                        d.variability,
                        Variability::Parameter | Variability::Constant
                    )
            });
            if !found {
                let params = self
                    .model
                    .declarations
                    .iter()
                    .filter(|d| d.variability == Variability::Parameter)
                    .map(|d| d.name.name.as_str());
                let mut d = Diagnostic::error(
                    codes::PARAMETER_VALUE,
                    format!("`-p {name}=…`: the model has no parameter `{base}`"),
                )
                .with_primary(self.model.name.span, "in this model");
                if let Some(s) = did_you_mean(base, params) {
                    d = d.with_help(format!("did you mean `{s}`?"));
                }
                self.diags.push(d);
            }
        }
    }

    // ---------------------------------------------------------------- symbols

    /// The parameter and constant symbols in an order in which each comes
    /// after the ones its declaration names (sizes, value, modifiers): the
    /// strongly connected components of that dependency graph, dependencies
    /// first (iterative Tarjan, linear in the size of the declarations).
    /// Evaluated in this order, a parameter finds the ones it needs done,
    /// so [`Self::evaluate_parameter`] recurses only inside a cycle (which
    /// it reports). A name that only a branch not taken would need still
    /// counts here; the on-demand evaluation sorts that out.
    pub(super) fn parameter_order(&self) -> Vec<usize> {
        let params: Vec<usize> = (0..self.symbols.len())
            .filter(|&s| self.symbols[s].kind != SymKind::Unknown)
            .collect();
        let mut node_of = vec![u32::MAX; self.symbols.len()];
        for (k, &s) in params.iter().enumerate() {
            node_of[s] = k as u32;
        }
        let mut adj_ptr = Vec::with_capacity(params.len() + 1);
        adj_ptr.push(0);
        let mut adj: Vec<u32> = Vec::new();
        let mut stack: Vec<&ast::Expr> = Vec::new();
        let mut deps: Vec<u32> = Vec::new();
        for &s in &params {
            let d = self.decl(s);
            stack.extend(&d.dims);
            stack.extend(&d.binding);
            let mut mods: Vec<&Modifier> = d.modifiers.iter().collect();
            while let Some(m) = mods.pop() {
                stack.extend(&m.value);
                mods.extend(&m.nested);
            }
            while let Some(e) = stack.pop() {
                if let ExprKind::Name(parts) = &e.kind
                    && let [id] = parts.as_slice()
                    && let Some(&t) = self.by_name.get(id.name.as_str())
                    && node_of[t] != u32::MAX
                {
                    deps.push(node_of[t]);
                }
                push_children(e, &mut stack);
            }
            deps.sort_unstable();
            deps.dedup();
            adj.append(&mut deps);
            adj_ptr.push(adj.len());
        }
        daec_structure::strongly_connected_components(params.len(), &adj_ptr, &adj)
            .into_iter()
            .flatten()
            .map(|k| params[k])
            .collect()
    }

    /// Evaluates parameter/constant symbol `s` (dims and value), on demand
    /// and at most once; reports cycles.
    pub(super) fn evaluate_parameter(&mut self, s: usize) -> R<()> {
        match self.symbols[s].state {
            EvalState::Done => return Ok(()),
            EvalState::Failed => return Err(Reported),
            EvalState::InProgress => return Err(self.report_cycle(s)),
            EvalState::Todo => {}
        }
        self.symbols[s].state = EvalState::InProgress;
        self.eval_stack.push(s);
        let result = self.evaluate_parameter_inner(s);
        self.eval_stack.pop();
        self.symbols[s].state = if result.is_ok() {
            EvalState::Done
        } else {
            EvalState::Failed
        };
        result
    }

    fn evaluate_parameter_inner(&mut self, s: usize) -> R<()> {
        if self.symbols[s].kind == SymKind::Discrete {
            return self.create_discrete(s);
        }
        let d = self.decl(s);
        let dims = self.evaluate_dims(s)?;
        let n = elements(&dims);
        self.count_scalars(n, d.span)?;
        let ty = self.symbols[s].ty;
        let name = d.name.name.clone();
        // The value: an override, else the binding.
        let values: Vec<f64> = if let (true, Some(v)) =
            (dims.is_empty(), self.overrides.get(&name).copied())
        {
            self.check_override(&name, v, ty, d.name.span)?;
            vec![v]
        } else {
            let Some(binding) = &d.binding else {
                let kw = if self.symbols[s].kind == SymKind::Constant {
                    "constant"
                } else {
                    "parameter"
                };
                return Err(self.error(
                    Diagnostic::error(codes::PARAMETER_VALUE, format!("{kw} `{name}` has no value"))
                        .with_primary(d.name.span, "declared without `= value`")
                        .with_help(format!("give it a value: `{kw} {} {name} = …;`", d.type_name.dotted()))
                        .with_note("every parameter and constant needs a value (use `-p NAME=VALUE` to change it per run)"),
                ));
            };
            let v = self.lower_expr(binding, Mode::Const)?;
            let v = self.broadcast_to(v, &dims, binding.span, &format!("the value of `{name}`"))?;
            if ty != BaseType::Boolean && v.ty() == BaseType::Boolean {
                return Err(self.type_error(binding.span, ty, v.ty()));
            }
            if ty == BaseType::Boolean && v.ty() != BaseType::Boolean {
                return Err(self.type_error(binding.span, ty, v.ty()));
            }
            let mut out = self.vec_with_capacity(n, binding.span)?;
            for &e in v.elems() {
                let x = self.const_value(e).unwrap_or(f64::NAN);
                if !x.is_finite() {
                    return Err(self.error(
                        Diagnostic::error(
                            codes::PARAMETER_VALUE,
                            format!("the value of `{name}` is not a finite number ({x})"),
                        )
                        .with_primary(binding.span, "evaluates to a non-finite value"),
                    ));
                }
                if ty == BaseType::Integer && x.fract() != 0.0 {
                    return Err(self.error(
                        Diagnostic::error(
                            codes::TYPE_MISMATCH,
                            format!("Integer parameter `{name}` gets the Real value {x}"),
                        )
                        .with_primary(binding.span, "not an integer")
                        .with_help("declare it `parameter Real`, or use an integer value"),
                    ));
                }
                out.push(x);
            }
            // Element overrides `-p k[2]=…`.
            for (i, x) in out.iter_mut().enumerate() {
                let key = format!("{name}{}", subscript_text(&unravel(i, &dims)));
                if let Some(&v) = self.overrides.get(&key) {
                    self.check_override(&key, v, ty, d.name.span)?;
                    *x = v;
                }
            }
            out
        };
        if self.parameters.try_reserve(n).is_err() || self.param_values.try_reserve(n).is_err() {
            return Err(self.no_memory(n, std::mem::size_of::<Parameter>(), d.span));
        }
        let constant = self.symbols[s].kind == SymKind::Constant;
        let symbolic = !constant && ty == BaseType::Real;
        let (first, _) = self.push_parameter_elements(d, ty, &dims, &values, constant, symbolic);
        self.symbols[s].first = first;
        self.symbols[s].dims = dims;
        Ok(())
    }

    /// Pushes one scalar parameter per element of the declaration `d`
    /// (type `ty`, shape `dims`) with its `values` and the attributes its
    /// modifiers give, `constant` and `symbolic` as the caller decides;
    /// returns the index of the first and the elements' flat names.
    pub(super) fn push_parameter_elements(
        &mut self,
        d: &ast::Declaration,
        ty: BaseType,
        dims: &[usize],
        values: &[f64],
        constant: bool,
        symbolic: bool,
    ) -> (usize, Vec<String>) {
        let name = &d.name.name;
        let first = self.parameters.len();
        let names: Vec<String> = (0..values.len())
            .map(|i| format!("{name}{}", subscript_text(&unravel(i, dims))))
            .collect();
        let attributes = self.parameter_attributes(d, dims, values, &names);
        let type_name = type_source(&d.type_name);
        for (i, ((&value, flat_name), a)) in values.iter().zip(&names).zip(attributes).enumerate() {
            self.parameters.push(Parameter {
                name: flat_name.clone(),
                base: name.clone(),
                subscripts: unravel(i, dims),
                ty,
                constant,
                value,
                symbolic,
                start: a.start,
                fixed: a.fixed,
                nominal: a.nominal,
                min: a.min,
                max: a.max,
                unit: a.unit,
                display_unit: a.display_unit,
                quantity: a.quantity,
                type_name: type_name.clone(),
                description: d.description.clone(),
            });
            self.param_values.push(value);
            self.spans.parameters.push(d.span);
        }
        (first, names)
    }

    /// Checks that the override `-p key=v` is a value of type `ty` (an
    /// integer for an Integer, 0 or 1 for a Boolean; finite); reports it at
    /// the declaration `span` otherwise.
    fn check_override(&mut self, key: &str, v: f64, ty: BaseType, span: Span) -> R<()> {
        let ok = v.is_finite()
            && match ty {
                BaseType::Real => true,
                BaseType::Integer => v.fract() == 0.0 && v.abs() < 9.0e15,
                BaseType::Boolean => v == 0.0 || v == 1.0,
            };
        if ok {
            return Ok(());
        }
        let want = match ty {
            BaseType::Real => "a finite number",
            BaseType::Integer => "an integer",
            BaseType::Boolean => "true or false",
        };
        Err(self.error(
            Diagnostic::error(
                codes::PARAMETER_VALUE,
                format!(
                    "`-p {key}={v}`: `{key}` is {} parameter and needs {want}",
                    article(ty)
                ),
            )
            .with_primary(span, format!("declared {} here", ty_name(ty))),
        ))
    }

    fn report_cycle(&mut self, s: usize) -> Reported {
        let start = self.eval_stack.iter().position(|&x| x == s).unwrap_or(0);
        let cycle: Vec<usize> = self.eval_stack[start..].to_vec();
        let names: Vec<String> = cycle
            .iter()
            .map(|&c| self.decl(c).name.name.clone())
            .collect();
        let mut path = names.join("` → `");
        path.push_str(&format!("` → `{}", names[0]));
        let first = self.decl(cycle[0]);
        let mut d = Diagnostic::error(
            codes::PARAMETER_CYCLE,
            format!("parameter values depend on each other in a cycle: `{path}`"),
        )
        .with_primary(
            first.binding.as_ref().map_or(first.span, |b| b.span),
            format!(
                "the value of `{}` needs `{}`",
                names[0],
                names[1 % names.len()]
            ),
        );
        for (k, &c) in cycle.iter().enumerate().skip(1) {
            let decl = self.decl(c);
            d = d.with_secondary(
                decl.binding.as_ref().map_or(decl.span, |b| b.span),
                format!(
                    "the value of `{}` needs `{}`",
                    names[k],
                    names[(k + 1) % names.len()]
                ),
            );
        }
        for &c in &cycle {
            self.symbols[c].state = EvalState::Failed;
        }
        self.error(d.with_help("give one of them a value that does not depend on the others"))
    }
}

/// Pushes the direct subexpressions of `e` onto `stack`, mutably (as
/// [`push_children`]).
pub(crate) fn push_children_mut<'e>(e: &'e mut ast::Expr, stack: &mut Vec<&'e mut ast::Expr>) {
    match &mut e.kind {
        ExprKind::Index { base, indices } => {
            stack.push(base);
            stack.extend(indices.iter_mut());
        }
        ExprKind::Call {
            args, named_args, ..
        } => {
            stack.extend(args.iter_mut());
            stack.extend(named_args.iter_mut().map(|(_, v)| v));
        }
        ExprKind::Binary { lhs, rhs, .. } => {
            stack.push(lhs);
            stack.push(rhs);
        }
        ExprKind::Unary { expr, .. } | ExprKind::Member { base: expr, .. } => stack.push(expr),
        ExprKind::If {
            branches,
            else_value,
        } => {
            for (c, v) in branches {
                stack.push(c);
                stack.push(v);
            }
            stack.push(else_value);
        }
        ExprKind::Range { start, step, stop } => {
            stack.push(start);
            stack.extend(step.as_deref_mut());
            stack.push(stop);
        }
        ExprKind::Array(items) | ExprKind::Tuple(items) => stack.extend(items.iter_mut()),
        ExprKind::Matrix(rows) => stack.extend(rows.iter_mut().flatten()),
        ExprKind::Integer(_)
        | ExprKind::Real(_)
        | ExprKind::Bool(_)
        | ExprKind::String(_)
        | ExprKind::Name(_)
        | ExprKind::Colon
        | ExprKind::End
        | ExprKind::Error => {}
    }
}

/// Pushes the direct subexpressions of `e` onto `stack`.
pub(crate) fn push_children<'e>(e: &'e ast::Expr, stack: &mut Vec<&'e ast::Expr>) {
    match &e.kind {
        ExprKind::Index { base, indices } => {
            stack.push(base);
            stack.extend(indices);
        }
        ExprKind::Call {
            args, named_args, ..
        } => {
            stack.extend(args);
            stack.extend(named_args.iter().map(|(_, v)| v));
        }
        ExprKind::Binary { lhs, rhs, .. } => {
            stack.push(lhs);
            stack.push(rhs);
        }
        ExprKind::Unary { expr, .. } | ExprKind::Member { base: expr, .. } => stack.push(expr),
        ExprKind::If {
            branches,
            else_value,
        } => {
            for (c, v) in branches {
                stack.push(c);
                stack.push(v);
            }
            stack.push(else_value);
        }
        ExprKind::Range { start, step, stop } => {
            stack.push(start);
            stack.extend(step.as_deref());
            stack.push(stop);
        }
        ExprKind::Array(items) | ExprKind::Tuple(items) => stack.extend(items),
        ExprKind::Matrix(rows) => stack.extend(rows.iter().flatten()),
        ExprKind::Integer(_)
        | ExprKind::Real(_)
        | ExprKind::Bool(_)
        | ExprKind::String(_)
        | ExprKind::Name(_)
        | ExprKind::Colon
        | ExprKind::End
        | ExprKind::Error => {}
    }
}
