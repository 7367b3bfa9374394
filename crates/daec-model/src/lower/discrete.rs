//! Discrete-time variables (MLS 3.6 §3.8.3, §4.5, chapter 8): `discrete`
//! variables, `Integer` and `Boolean` variables, and `Real` variables
//! assigned in `when` clauses.
//!
//! A discrete variable changes at events only, so the DAE holds it as a
//! symbolic parameter (a [`crate::Discrete`]: the value and `pre(v)`, two
//! parameters) which the structural analysis and the formulations treat as
//! known; the simulation assigns it at events. Its start value is the
//! `start` attribute (default 0, `false`). It is defined either by the
//! equations `v = e` of the `when` clauses that assign it (one `when`
//! statement per variable; every branch of a `when`/`elsewhen` statement
//! assigns the same variables, MLS §8.3.5) or, as `Boolean off = s < 0;`,
//! by a binding or by one equation `off = s < 0;` outside `when` (a
//! *definition*, MLS §8.3.5/§8.6: a discrete equation outside `when` holds
//! at all times, so its variable is the value of its right side, which
//! changes only where a relation in it changes — at events). A definition
//! is inlined where the variable is used: a relation in it is then a state
//! event of the model like any other relation of the unknowns.
//!
//! The event operators: `pre(v)` is the `pre` parameter of a discrete `v`
//! and `v` itself for a continuous unknown (its left limit at an event is
//! its value there); `edge(b)` is `b and not pre(b)`; `change(v)` is
//! `v <> pre(v)` (MLS §3.7.5).

use super::declarations::Attr;
use super::{Lowerer, Mode, R, SymKind, Val};
use crate::budget::elements;
use crate::{Assertion, BaseType, Defined, Discrete, Event, Parameter};
use daec_diag::{Diagnostic, Span, codes};
use daec_expr::{CmpOp, ExprId, Leaf, ParamId};
use daec_syntax::ast::{self, EquationKind, ExprKind};
use rustc_hash::{FxHashMap, FxHashSet};

/// The `when` that advances a `sample` outside `when` conditions
/// (`Lowerer::free_sample`).
pub(super) struct FreeSample {
    /// Its condition, `time >= next`.
    due: ExprId,
    /// `next = if time >= pre(next) then pre(next) + interval else
    /// pre(next)`.
    assign: (u32, ExprId),
    /// The `sample` call.
    span: Span,
}

/// The names of the variables on the left of an equation `v = e` or
/// `v[i] = e` inside a `when` clause of `model` (they are discrete, MLS
/// 3.6 §3.8.3).
pub(super) fn when_assigned(model: &ast::Model) -> FxHashSet<String> {
    let mut out = FxHashSet::default();
    let mut stack: Vec<(&ast::Equation, bool)> = model
        .sections
        .iter()
        .flat_map(|s| s.equations.iter().map(|e| (e, false)))
        .collect();
    while let Some((eq, inside)) = stack.pop() {
        match &eq.kind {
            EquationKind::When { branches } => {
                stack.extend(
                    branches
                        .iter()
                        .flat_map(|(_, b)| b.iter().map(|e| (e, true))),
                );
            }
            EquationKind::For { body, .. } => stack.extend(body.iter().map(|e| (e, inside))),
            EquationKind::If {
                branches,
                else_branch,
            } => {
                stack.extend(
                    branches
                        .iter()
                        .flat_map(|(_, b)| b.iter().map(|e| (e, inside))),
                );
                stack.extend(else_branch.iter().map(|e| (e, inside)));
            }
            EquationKind::Simple { lhs, .. } if inside => {
                let target = match &lhs.kind {
                    ExprKind::Index { base, .. } => base,
                    _ => lhs,
                };
                if let ExprKind::Name(parts) = &target.kind
                    && let [id] = parts.as_slice()
                {
                    out.insert(id.name.clone());
                }
            }
            _ => {}
        }
    }
    out
}

/// The equations `v = e` of the `equation` sections, outside `when`,
/// `for` and `if`, whose left side is a plain name: the candidate
/// definitions of discrete variables, by name (the first of each name),
/// with their right sides and spans. Whether `v` is discrete is decided
/// when the equation is lowered ([`Lowerer::discrete_definition`]).
pub(super) fn definitions(model: &ast::Model) -> FxHashMap<&str, (&ast::Expr, Span)> {
    let mut out = FxHashMap::default();
    for section in model.sections.iter().filter(|s| !s.initial) {
        for eq in &section.equations {
            if let EquationKind::Simple { lhs, rhs } = &eq.kind
                && let ExprKind::Name(parts) = &lhs.kind
                && let [id] = parts.as_slice()
            {
                out.entry(id.name.as_str()).or_insert((rhs, eq.span));
            }
        }
    }
    out
}

impl<'a> Lowerer<'a> {
    /// The expression that defines discrete symbol `s` outside `when`:
    /// its binding, or the right side of its defining equation (not for a
    /// variable a `when` clause assigns: that equation is an error,
    /// [`Self::discrete_definition`]).
    fn definition_of(&self, s: usize) -> Option<&'a ast::Expr> {
        let d = self.decl(s);
        if let Some(b) = &d.binding {
            return Some(b);
        }
        let name = d.name.name.as_str();
        if self.when_assigned.contains(name) {
            return None;
        }
        self.definitions.get(name).map(|&(rhs, _)| rhs)
    }

    /// An equation `v = e` outside `when` with a discrete `v` (MLS 3.6
    /// §8.3.5, §8.6): the definition of `v` when it is its first such
    /// equation at the top level of an `equation` section — lowered where
    /// `v` is used, nothing to add here — otherwise an error naming what
    /// to write instead. `None`: `lhs` is not a discrete variable.
    pub(super) fn discrete_definition(
        &mut self,
        eq: &ast::Equation,
        lhs: &ast::Expr,
        initial: bool,
    ) -> Option<R<()>> {
        let ExprKind::Name(parts) = &lhs.kind else {
            return None;
        };
        let [id] = parts.as_slice() else {
            return None;
        };
        let name = id.name.as_str();
        if initial || self.in_when || self.loop_vars.iter().any(|(v, _)| *v == name) {
            return None;
        }
        let s = *self.by_name.get(name)?;
        if self.symbols[s].kind != SymKind::Discrete {
            return None;
        }
        let d = self.decl(s);
        if let Some(b) = &d.binding {
            return Some(Err(self.error(
                Diagnostic::error(
                    codes::COUNT_MISMATCH,
                    format!("the discrete variable `{name}` has a binding and an equation"),
                )
                .with_primary(eq.span, "a second definition")
                .with_secondary(b.span, "its binding")
                .with_help("keep one of the two"),
            )));
        }
        let first = self.definitions.get(name).map(|&(_, span)| span);
        if self.when_assigned.contains(name) {
            return Some(Err(self.error(
                Diagnostic::error(
                    codes::WHEN,
                    format!("`{name}` is defined by an equation and assigned in a `when` clause"),
                )
                .with_primary(eq.span, "defined here for all times")
                .with_note("a discrete variable has one definition: an equation outside `when` or a `when` statement (MLS 3.6 §8.3.5)")
                .with_help(format!("move `{name} = …` into the `when` clause (an `elsewhen` branch for its own condition)")),
            )));
        }
        if first == Some(eq.span) {
            return Some(Ok(()));
        }
        let mut diag = Diagnostic::error(
            codes::UNSUPPORTED,
            format!("the discrete variable `{name}` is defined by more than one equation, or inside `for` or `if`"),
        )
        .with_primary(eq.span, "not its first top-level equation")
        .with_note("daec inlines a discrete variable's definition outside `when` where the variable is used: it takes one equation `v = e` at the top level of an `equation` section")
        .with_help(format!("write one equation `{name} = …` with an if-expression for the cases"));
        if let Some(span) = first {
            diag = diag.with_secondary(span, "its definition");
        }
        Some(Err(self.error(diag)))
    }

    /// The definitions of the scalar discrete variables defined outside
    /// `when`, lowered once more for their result columns
    /// ([`crate::Dae::defined`]); a definition no equation uses is checked
    /// here.
    pub(super) fn lower_definitions(&mut self) {
        for s in 0..self.symbols.len() {
            if self.symbols[s].kind != SymKind::Discrete
                || !self.symbols[s].dims.is_empty()
                || self.definition_of(s).is_none()
            {
                continue;
            }
            let d = self.decl(s);
            if let Some(Ok(Val::Scalar(_, value))) = self.discrete_name(s, d.span, Mode::Equation) {
                self.defined.push(Defined {
                    name: d.name.name.clone(),
                    value,
                });
            }
        }
    }

    /// Creates the parameters of discrete symbol `s`: its value (the start
    /// value) and its `pre` value, per element. A discrete variable with a
    /// definition (binding or equation) gets none: its uses are its
    /// definition ([`Self::discrete_name`]).
    pub(super) fn create_discrete(&mut self, s: usize) -> R<()> {
        let d = self.decl(s);
        let dims = self.evaluate_dims(s)?;
        if let Some(definition) = self.definition_of(s) {
            if !dims.is_empty() {
                return Err(self.error(
                    Diagnostic::error(
                        codes::UNSUPPORTED,
                        "an array of discrete variables defined outside `when` is not supported",
                    )
                    .with_primary(definition.span, "defined here")
                    .with_secondary(d.span, "declared as an array")
                    .with_help("declare the elements as scalars, each with its binding"),
                ));
            }
            self.symbols[s].dims = dims;
            return Ok(());
        }
        let n = elements(&dims);
        self.count_scalars(2 * n, d.span)?;
        let ty = self.symbols[s].ty;
        let name = d.name.name.clone();
        let mut values = vec![0.0; n];
        for m in &d.modifiers {
            if m.name.name != "start" {
                continue;
            }
            if let Some(Attr::Values(v)) = self.attribute(m, &name, &dims) {
                for (x, y) in values.iter_mut().zip(v) {
                    *x = y;
                }
            }
        }
        let (first, names) = self.push_parameter_elements(d, ty, &dims, &values, false, true);
        for (i, flat_name) in names.iter().enumerate() {
            let pre = self.parameters[first + i].clone();
            self.discrete.push(Discrete {
                param: (first + i) as u32,
                pre: self.parameters.len() as u32,
            });
            self.parameters.push(Parameter {
                name: format!("pre({flat_name})"),
                base: format!("pre({flat_name})"),
                subscripts: Vec::new(),
                description: None,
                ..pre
            });
            self.param_values.push(values[i]);
            self.spans.parameters.push(d.span);
        }
        self.symbols[s].first = first;
        self.symbols[s].dims = dims;
        Ok(())
    }

    /// A use of discrete symbol `s` that is not its parameter: its
    /// definition (inlined, `Boolean off = s < 0;`), or an error in `Const`
    /// mode.
    /// `None`: the parameter.
    pub(super) fn discrete_name(&mut self, s: usize, span: Span, mode: Mode) -> Option<R<Val>> {
        let d = self.decl(s);
        let name = d.name.name.as_str();
        if mode == Mode::Const {
            return Some(Err(self.error(
                Diagnostic::error(
                    codes::TYPE_MISMATCH,
                    format!("`{name}` is a discrete variable, not a constant"),
                )
                .with_primary(span, "changes at events")
                .with_note("sizes, parameter values and start values must be constant"),
            )));
        }
        let binding = self.definition_of(s)?;
        if self.defining.contains(&s) {
            return Some(Err(self.error(
                Diagnostic::error(
                    codes::PARAMETER_CYCLE,
                    format!("the definition of `{name}` depends on itself"),
                )
                .with_primary(span, "used in its own definition")
                .with_help(
                    "use `pre(…)` in a `when` clause for a value that depends on the one before",
                ),
            )));
        }
        self.defining.push(s);
        let v = self.lower_expr(binding, Mode::Equation);
        self.defining.pop();
        let ty = self.symbols[s].ty;
        Some(v.and_then(|v| {
            match v {
                Val::Scalar(t, e) if (t == BaseType::Boolean) == (ty == BaseType::Boolean) => {
                    Ok(Val::Scalar(ty, e))
                }
                Val::Scalar(t, _) => Err(self.type_error(binding.span, ty, t)),
                Val::Array(..) => Err(self.error(
                    Diagnostic::error(
                        codes::SHAPE,
                        format!("the binding of `{name}` is not a scalar"),
                    )
                    .with_primary(binding.span, "an array"),
                )),
            }
        }))
    }

    /// The condition of a `when` or `elsewhen`: a Boolean scalar, or a
    /// Boolean vector whose elements each fire the clause when they become
    /// true (MLS 3.6 §8.3.5).
    pub(super) fn when_conditions(&mut self, c: &ast::Expr) -> R<Vec<ExprId>> {
        // `when edge(b)` is `when b`: the clause fires where `b` rises
        // (also for a `b` that is not a variable, `edge` of which has no
        // `pre` to read)
        if let ExprKind::Call { func, args, .. } = &c.kind
            && let [f] = func.as_slice()
            && f.name == "edge"
            && let [b] = args.as_slice()
        {
            return self.when_conditions(b);
        }
        if !matches!(c.kind, ExprKind::Array(_)) {
            return Ok(vec![self.condition(
                c,
                Mode::Equation,
                "a `when` condition",
            )?]);
        }
        let v = self.lower_expr(c, Mode::Equation)?;
        match v {
            Val::Array(BaseType::Boolean, ref shape, ref elems) if shape.len() == 1 => {
                Ok(elems.clone())
            }
            _ => Err(self.error(
                Diagnostic::error(
                    codes::TYPE_MISMATCH,
                    "a `when` condition must be a Boolean scalar or vector",
                )
                .with_primary(c.span, "not Boolean"),
            )),
        }
    }

    /// The event operators `pre`, `edge` and `change` (`None` for any
    /// other function name).
    pub(super) fn discrete_call(
        &mut self,
        fname: &str,
        args: &[ast::Expr],
        span: Span,
        mode: Mode,
    ) -> Option<R<Val>> {
        match fname {
            "pre" | "edge" | "change" => Some(self.event_operator(fname, args, span, mode)),
            "initial" | "terminal" => Some(self.flag_call(fname, args, span)),
            "sample" => Some(self.sample_call(args, span, mode)),
            _ => None,
        }
    }

    fn event_operator(
        &mut self,
        fname: &str,
        args: &[ast::Expr],
        span: Span,
        mode: Mode,
    ) -> R<Val> {
        if args.len() != 1 {
            return Err(self.error(
                Diagnostic::error(
                    codes::ARITY,
                    format!("`{fname}` takes 1 argument, but {} were given", args.len()),
                )
                .with_primary(span, format!("wrong number of arguments to `{fname}`")),
            ));
        }
        let v = self.lower_expr(&args[0], mode)?;
        if fname == "edge" && v.ty() != BaseType::Boolean {
            return Err(self.type_error(args[0].span, BaseType::Boolean, v.ty()));
        }
        let mut out = Vec::with_capacity(v.elems().len());
        for &e in v.elems() {
            let Some(pre) = self.pre_of(e) else {
                return Err(self.error(
                    Diagnostic::error(
                        codes::TYPE_MISMATCH,
                        format!("the argument of `{fname}` must be a variable"),
                    )
                    .with_primary(args[0].span, "not a variable")
                    .with_note("`pre`, `edge` and `change` take a variable (MLS 3.6 §3.7.5)"),
                ));
            };
            out.push(match fname {
                "pre" => pre,
                "edge" => {
                    let not = self.pool.not(pre);
                    self.pool.and(e, not)
                }
                _ => self.pool.cmp(CmpOp::Ne, e, pre),
            });
        }
        let ty = if fname == "pre" {
            v.ty()
        } else {
            BaseType::Boolean
        };
        Ok(Val::from_parts(ty, v.shape().to_vec(), out))
    }

    /// `initial()` and `terminal()`: the Boolean parameters
    /// [`crate::Dae::initial`] and [`crate::Dae::terminal`].
    fn flag_call(&mut self, fname: &str, args: &[ast::Expr], span: Span) -> R<Val> {
        if !args.is_empty() {
            return Err(self.error(
                Diagnostic::error(codes::ARITY, format!("`{fname}` takes no arguments"))
                    .with_primary(span, format!("write `{fname}()`")),
            ));
        }
        let flag = if fname == "terminal" {
            self.terminal
        } else {
            self.initial
        };
        let p = match flag {
            Some(p) => p,
            None => {
                let name = format!("{fname}()");
                let p = self.hidden_parameter(&name, BaseType::Boolean, 0.0, span);
                if fname == "terminal" {
                    self.terminal = Some(p);
                } else {
                    self.initial = Some(p);
                }
                p
            }
        };
        Ok(Val::Scalar(BaseType::Boolean, self.pool.param(ParamId(p))))
    }

    /// A parameter of the simulation's own (`initial()`, the next time of
    /// a `sample`), declared at `span`.
    fn hidden_parameter(&mut self, name: &str, ty: BaseType, value: f64, span: Span) -> u32 {
        let p = self.parameters.len() as u32;
        self.parameters.push(Parameter::hidden(name, ty, value));
        self.param_values.push(value);
        self.spans.parameters.push(span);
        p
    }

    /// `sample(start, interval)` (MLS 3.6 §3.7.5, §16.5.1: true at the
    /// time events `start + k·interval`, false between them):
    /// `time >= next`, with `next` a discrete variable of its own (named
    /// `$sample<k>`, start value `start`) advanced by `interval` when it
    /// is due. As the condition of a `when` (or an element of a vector
    /// condition) the clause advances it; elsewhere (`Boolean tick =
    /// sample(0, 0.1);`, `when tick and x > 1`, a condition of an `if`) a
    /// `when time >= next` of its own does ([`Self::free_sample`]): the
    /// clause of a larger condition fires only when all of it rises, so
    /// it cannot advance the sample. There the value is `next >
    /// pre(next)`: true during the event iteration at a sample instant,
    /// from the round after that `when` fired (MLS §8.6: the clauses it
    /// makes rise fire in that round), and false between events. Inside
    /// the body of a `when` and in constant expressions it is not
    /// supported.
    fn sample_call(&mut self, args: &[ast::Expr], span: Span, mode: Mode) -> R<Val> {
        if !self.in_when_condition && (self.in_when || mode == Mode::Const) {
            let (message, label) = if self.in_when {
                (
                    "`sample` inside a `when` clause is supported in its condition only",
                    "in the body of a `when`",
                )
            } else {
                ("`sample` is not a constant", "varies in time")
            };
            return Err(self
                .error(Diagnostic::error(codes::UNSUPPORTED, message).with_primary(span, label)));
        }
        if !self.in_when_condition
            && let Some(&due) = self.free_samples.get(&span)
        {
            return Ok(Val::Scalar(BaseType::Boolean, due));
        }
        if args.len() != 2 {
            return Err(self.error(
                Diagnostic::error(
                    codes::ARITY,
                    format!("`sample` takes 2 arguments, but {} were given", args.len()),
                )
                .with_primary(span, "write `sample(start, interval)`"),
            ));
        }
        let mut values = [0.0; 2];
        for (x, a) in values.iter_mut().zip(args) {
            let v = self.lower_expr(a, Mode::Const)?;
            *x = match v {
                Val::Scalar(t, e) if t != BaseType::Boolean => {
                    self.const_value(e).unwrap_or(f64::NAN)
                }
                _ => f64::NAN,
            };
        }
        let [start, interval] = values;
        if !start.is_finite() || !interval.is_finite() || interval <= 0.0 {
            return Err(self.error(
                Diagnostic::error(
                    codes::PARAMETER_VALUE,
                    "`sample(start, interval)` needs a finite start and a positive interval",
                )
                .with_primary(span, format!("start {start}, interval {interval}")),
            ));
        }
        let k = self.discrete.len() + 1;
        let name = format!("$sample{k}");
        let param = self.hidden_parameter(&name, BaseType::Real, start, span);
        let pre = self.hidden_parameter(&format!("pre({name})"), BaseType::Real, start, span);
        self.discrete.push(Discrete { param, pre });
        let time = self.pool.time();
        let next = self.pool.param(ParamId(param));
        let before = self.pool.param(ParamId(pre));
        let step = self.pool.constant(interval);
        let advanced = self.pool.add(before, step);
        let due = self.pool.cmp(CmpOp::Ge, time, before);
        let value = self.pool.select(due, advanced, before);
        let reached = self.pool.cmp(CmpOp::Ge, time, next);
        if self.in_when_condition {
            self.sample_assigns.push((param, value));
            self.assigned_by
                .insert(param, (self.events.len() as u32, span));
            return Ok(Val::Scalar(BaseType::Boolean, reached));
        }
        // true in the rounds of the event iteration after the sample's own
        // `when` advanced `next`, false between events (`pre(next)` is
        // `next` there), so the integration never sees it true
        let now = self.pool.cmp(CmpOp::Gt, next, before);
        self.free_samples.insert(span, now);
        self.free_sample(reached, (param, value), span);
        Ok(Val::Scalar(BaseType::Boolean, now))
    }

    /// The `when` of a `sample` outside `when` conditions: `when due then
    /// next = …; end when;` ([`Self::sample_call`]), at `span`; within a
    /// `when` statement (a sample in its condition), kept until the
    /// statement's own events are pushed ([`Self::push_deferred_samples`]),
    /// whose indices tell its branches.
    fn free_sample(&mut self, due: ExprId, assign: (u32, ExprId), span: Span) {
        let sample = FreeSample { due, assign, span };
        match &mut self.deferred_samples {
            Some(later) => later.push(sample),
            None => self.push_free_sample(sample),
        }
    }

    /// The `when`s of the samples deferred while a `when` statement was
    /// lowered ([`Self::free_sample`]).
    pub(super) fn push_deferred_samples(&mut self) {
        for sample in self.deferred_samples.take().unwrap_or_default() {
            self.push_free_sample(sample);
        }
    }

    fn push_free_sample(&mut self, FreeSample { due, assign, span }: FreeSample) {
        let clause = self.events.len() as u32;
        self.assigned_by.insert(assign.0, (clause, span));
        self.events.push(Event {
            condition: due,
            reinits: Vec::new(),
            assigns: vec![assign],
            clause,
            terminate: None,
        });
        self.spans.events.push(span);
        self.spans.reinits.push(Vec::new());
        self.spans.assigns.push(vec![span]);
    }

    /// `assert(condition, message)` or `assert(condition, message, level)`
    /// with `level` `AssertionLevel.error` (the default) or
    /// `AssertionLevel.warning` (MLS 3.6 §8.3.7); the message is a string
    /// literal.
    pub(super) fn assertion(&mut self, eq: &'a ast::Equation, args: &'a [ast::Expr]) -> R<()> {
        let usage = |this: &mut Self, span: Span| {
            this.error(
                Diagnostic::error(codes::ARITY, "`assert` takes a condition, a message string and an optional level")
                    .with_primary(span, "write `assert(condition, \"message\")` or `assert(condition, \"message\", AssertionLevel.warning)`"),
            )
        };
        let (cond, message, level) = match args {
            [c, m] => (c, m, None),
            [c, m, l] => (c, m, Some(l)),
            _ => return Err(usage(self, eq.span)),
        };
        let ExprKind::String(text) = &message.kind else {
            return Err(usage(self, message.span));
        };
        let warning = match level.map(|l| &l.kind) {
            None => false,
            Some(ExprKind::Name(parts))
                if parts.len() == 2 && parts[0].name == "AssertionLevel" =>
            {
                match parts[1].name.as_str() {
                    "warning" => true,
                    "error" => false,
                    _ => return Err(usage(self, level.map_or(eq.span, |l| l.span))),
                }
            }
            Some(_) => return Err(usage(self, level.map_or(eq.span, |l| l.span))),
        };
        let condition = self.condition(cond, Mode::Equation, "the condition of `assert`")?;
        self.asserts.push(Assertion {
            condition,
            message: text.clone(),
            warning,
        });
        self.spans.asserts.push(eq.span);
        Ok(())
    }

    /// `pre(e)` of a variable: the `pre` parameter of a discrete one, the
    /// unknown itself for a continuous one, a constant itself.
    fn pre_of(&mut self, e: ExprId) -> Option<ExprId> {
        if self.pool.as_constant(e).is_some() {
            return Some(e);
        }
        match self.pool.as_leaf(e)? {
            Leaf::Var { order: 0, .. } => Some(e),
            Leaf::Param(p) => {
                let d = self.discrete.iter().find(|d| d.param == p.0)?;
                Some(self.pool.param(ParamId(d.pre)))
            }
            _ => None,
        }
    }

    /// An equation `v = e` in a `when` clause: `v` a discrete variable (or
    /// an array of them), assigned the value of `e` when the clause fires.
    /// `clause` is the statement's first event.
    pub(super) fn when_assignment(
        &mut self,
        eq: &'a ast::Equation,
        (lhs, rhs): (&'a ast::Expr, &'a ast::Expr),
        clause: u32,
        out: (&mut Vec<(u32, ExprId)>, &mut Vec<Span>),
    ) -> R<()> {
        let target = self.lower_expr(lhs, Mode::Equation)?;
        let value = self.lower_expr(rhs, Mode::Equation)?;
        let value = self.broadcast_to(value, target.shape(), rhs.span, "the assigned value")?;
        if (target.ty() == BaseType::Boolean) != (value.ty() == BaseType::Boolean) {
            return Err(self.type_error(rhs.span, target.ty(), value.ty()));
        }
        for (&t, &v) in target.elems().iter().zip(value.elems()) {
            let param = match self.pool.as_leaf(t) {
                Some(Leaf::Param(p)) if self.discrete.iter().any(|d| d.param == p.0) => p.0,
                _ => {
                    return Err(self.error(
                        Diagnostic::error(
                            codes::WHEN,
                            "the left side of an equation in `when` must be a discrete variable",
                        )
                        .with_primary(lhs.span, "not a discrete variable")
                        .with_help("assign a `discrete`, `Integer` or `Boolean` variable, or re-initialise a state with `reinit(x, value)`"),
                    ));
                }
            };
            if let Some(&(other, first)) = self.assigned_by.get(&param)
                && other != clause
            {
                let name = self.parameters[param as usize].name.clone();
                return Err(self.error(
                    Diagnostic::error(
                        codes::WHEN,
                        format!("`{name}` is assigned in two `when` statements"),
                    )
                    .with_primary(eq.span, "assigned again here")
                    .with_secondary(first, "first assigned here")
                    .with_note("a discrete variable has one defining `when` statement (MLS 3.6 §8.3.5); use `elsewhen` for its other conditions"),
                ));
            }
            self.assigned_by.insert(param, (clause, eq.span));
            out.0.push((param, v));
            out.1.push(eq.span);
        }
        Ok(())
    }

    /// The balance of the discrete variables (MLS 3.6 §8.3.5, §8.4): each
    /// is assigned by one `when` statement, in every branch of it, or has a
    /// binding; reported with `E0108` otherwise.
    pub(super) fn check_discrete_assignments(&mut self) {
        let mut missing = Vec::new();
        for d in &self.discrete {
            if !self.assigned_by.contains_key(&d.param) {
                missing.push(d.param);
            }
        }
        for p in missing {
            let name = self.parameters[p as usize].name.clone();
            let span = self.spans.parameters[p as usize];
            self.diags.push(
                Diagnostic::error(
                    codes::COUNT_MISMATCH,
                    format!("the discrete variable `{name}` has no equation"),
                )
                .with_primary(span, "assigned in no `when` clause")
                .with_help(format!(
                    "assign it in a `when` clause (`when c then {name} = …; end when;`), define it by an equation `{name} = …`, or declare it a `parameter`"
                )),
            );
        }
        // every branch of a statement assigns the same variables
        let mut k = 0;
        while k < self.events.len() {
            let clause = self.events[k].clause;
            let params = &self.parameters;
            let set = |e: &crate::Event| {
                let mut v: Vec<u32> = e
                    .assigns
                    .iter()
                    .map(|a| a.0)
                    .filter(|&p| !params[p as usize].name.starts_with('$'))
                    .collect();
                v.sort_unstable();
                v.dedup();
                v
            };
            let first = set(&self.events[k]);
            let mut j = k + 1;
            while j < self.events.len() && self.events[j].clause == clause {
                if set(&self.events[j]) != first {
                    let span = self.spans.events[j];
                    self.diags.push(
                        Diagnostic::error(
                            codes::WHEN,
                            "the branches of a `when` statement assign different variables",
                        )
                        .with_primary(span, "in this statement")
                        .with_note("every `elsewhen` branch assigns the variables the `when` branch assigns (MLS 3.6 §8.3.5)"),
                    );
                    break;
                }
                j += 1;
            }
            k = j;
        }
    }
}
