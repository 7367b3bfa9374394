//! Equations: declaration bindings turned into equations, `for` loops
//! expanded, if-equations, `when` clauses with their `reinit`s, and the
//! count of equations against unknowns.

use super::{EvalState, Lowerer, Mode, R, Reported, SymKind, Val, same_shape, shape_text, ty_name};
use crate::{BaseType, Description, Equation, Event};
use daec_diag::{Diagnostic, Span, SpanRuns, codes};
use daec_expr::{ExprId, Leaf, ParamId};
use daec_syntax::ast::{self, EquationKind, ExprKind};

impl<'a> Lowerer<'a> {
    pub(super) fn binding_equations(&mut self) {
        for s in 0..self.symbols.len() {
            if self.symbols[s].kind != SymKind::Unknown || self.symbols[s].state != EvalState::Done
            {
                continue;
            }
            let d = self.decl(s);
            let Some(binding) = &d.binding else { continue };
            let lhs_expr = ast::Expr {
                kind: ExprKind::Name(vec![d.name.clone()]),
                span: d.name.span,
            };
            let Ok(lhs) = self.lower_expr(&lhs_expr, Mode::Equation) else {
                continue;
            };
            let Ok(rhs) = self.lower_expr(binding, Mode::Equation) else {
                continue;
            };
            let mut out = Vec::new();
            let mut spans = SpanRuns::new();
            let description = d.description.as_deref().map(Description::new);
            if self
                .push_equation(lhs, rhs, d.span, description, &mut out, &mut spans)
                .is_ok()
            {
                self.equations.extend(out);
                self.spans.equations.append(&spans);
            }
        }
    }

    pub(super) fn check_counts(&mut self) {
        let (ne, nu) = (self.equations.len(), self.unknowns.len());
        if ne == nu {
            return;
        }
        let mut used = vec![false; nu];
        for eq in &self.equations {
            for (j, _) in self.pool.max_orders(eq.residual) {
                if let Some(u) = used.get_mut(j as usize) {
                    *u = true;
                }
            }
        }
        let unused: Vec<usize> = (0..nu).filter(|&j| !used[j]).collect();
        let s = |n: usize, w: &str| {
            if n == 1 {
                format!("{n} {w}")
            } else {
                format!("{n} {w}s")
            }
        };
        let mut d = Diagnostic::error(
            codes::COUNT_MISMATCH,
            format!(
                "the model has {} but {}",
                s(ne, "equation"),
                s(nu, "unknown")
            ),
        )
        .with_primary(
            self.model.name.span,
            if ne > nu {
                "too many equations"
            } else {
                "too few equations"
            },
        );
        if !unused.is_empty() {
            let names: Vec<String> = unused
                .iter()
                .take(20)
                .map(|&j| format!("`{}`", self.unknowns[j].name()))
                .collect();
            let more = if unused.len() > 20 {
                format!(" and {} more", unused.len() - 20)
            } else {
                String::new()
            };
            let verb = if unused.len() == 1 {
                "appears"
            } else {
                "appear"
            };
            d = d.with_note(format!(
                "{} {verb} in no equation: {}{more}",
                s(unused.len(), "unknown"),
                names.join(", ")
            ));
            let mut seen = std::collections::BTreeSet::new();
            for &j in unused.iter().take(20) {
                let sp = self.spans.unknowns.get(j).copied().unwrap_or_default();
                if seen.insert(sp) {
                    d = d.with_secondary(
                        sp,
                        format!("`{}` appears in no equation", self.unknowns[j].base()),
                    );
                }
            }
        }
        if ne > nu {
            d = d.with_help("remove the redundant equations, or declare the missing unknowns");
        } else {
            d = d.with_help(
                "add the missing equations, or turn unknowns that are known into parameters",
            );
        }
        self.diags.push(d);
    }

    // -------------------------------------------------------------- equations

    /// Lowers `eq` into `out` (with its spans) — or, when it is declared
    /// an invariant (`annotation(__daec(invariant = true))`, the
    /// `invariants` module), all its scalar equations into the invariants.
    pub(super) fn equation(
        &mut self,
        eq: &'a ast::Equation,
        initial: bool,
        out: &mut Vec<Equation>,
        spans: &mut SpanRuns,
    ) -> R<()> {
        if !self.invariant_annotation(eq, initial)? {
            return self.equation_body(eq, initial, out, spans);
        }
        let mut inv = Vec::new();
        let mut inv_spans = SpanRuns::new();
        let r = self.equation_body(eq, initial, &mut inv, &mut inv_spans);
        self.invariants.extend(inv);
        self.spans.invariants.append(&inv_spans);
        r
    }

    fn equation_body(
        &mut self,
        eq: &'a ast::Equation,
        initial: bool,
        out: &mut Vec<Equation>,
        spans: &mut SpanRuns,
    ) -> R<()> {
        match &eq.kind {
            EquationKind::Error => Err(Reported),
            EquationKind::Simple { lhs, rhs } => {
                if let Some(r) = self.discrete_definition(eq, lhs, initial) {
                    return r;
                }
                let l = self.lower_expr(lhs, Mode::Equation);
                let r = self.lower_expr(rhs, Mode::Equation);
                let (l, r) = (l?, r?);
                let description = eq.description.as_deref().map(Description::new);
                self.push_equation(l, r, eq.span, description, out, spans)
            }
            EquationKind::For { var, range, body } => {
                let values = self.range_values(range)?;
                let name = var.name.as_str();
                if self.by_name.contains_key(name) {
                    self.diags.push(
                        Diagnostic::warning(
                            codes::DUPLICATE,
                            format!("loop variable `{name}` hides a declared name"),
                        )
                        .with_primary(var.span, "the loop variable wins inside the loop"),
                    );
                }
                let mut ok = true;
                self.loops.push((eq.span, values.len()));
                for v in values {
                    self.loop_vars.push((name, v));
                    let before = self.diags.len();
                    for e in body {
                        ok &= self.equation(e, initial, out, spans).is_ok();
                    }
                    self.loop_vars.pop();
                    if self.diags.len() > before {
                        // Report a loop body's errors once, not per iteration.
                        break;
                    }
                }
                self.loops.pop();
                if ok { Ok(()) } else { Err(Reported) }
            }
            EquationKind::If {
                branches,
                else_branch,
            } => self.if_equation(eq, branches, else_branch, initial, out, spans),
            EquationKind::When { branches } => {
                if self.in_when {
                    return Err(self.error(
                        Diagnostic::error(codes::WHEN, "`when` cannot be nested")
                            .with_primary(eq.span, "nested `when`"),
                    ));
                }
                if initial {
                    return Err(self.error(
                        Diagnostic::error(
                            codes::WHEN,
                            "`when` is not allowed in `initial equation`",
                        )
                        .with_primary(eq.span, "move it to an `equation` section"),
                    ));
                }
                let mut ok = true;
                let clause = self.events.len() as u32;
                self.deferred_samples = Some(Vec::new());
                for (cond, body) in branches {
                    // (a `sample` in a larger condition, `when tick and
                    // x > 1`, advances on its own: the clause fires only
                    // when the whole condition rises)
                    self.in_when_condition = sample_condition(cond);
                    let conditions = self.when_conditions(cond);
                    self.in_when_condition = false;
                    let samples = std::mem::take(&mut self.sample_assigns);
                    let Ok(conditions) = conditions else {
                        ok = false;
                        continue;
                    };
                    self.in_when = true;
                    let mut body_out = WhenBody::default();
                    for (p, v) in samples {
                        body_out.assigns.push((p, v));
                        body_out.assign_spans.push(cond.span);
                    }
                    for e in body {
                        ok &= self.when_body(e, clause, &mut body_out).is_ok();
                    }
                    self.in_when = false;
                    // (a vector condition: one event per element, the
                    // first that rises fires the body)
                    for c in conditions {
                        self.events.push(Event {
                            condition: c,
                            reinits: body_out.reinits.clone(),
                            assigns: body_out.assigns.clone(),
                            clause,
                            terminate: body_out.terminate.clone(),
                        });
                        self.spans.events.push(eq.span);
                        self.spans.reinits.push(body_out.reinit_spans.clone());
                        self.spans.assigns.push(body_out.assign_spans.clone());
                    }
                }
                self.push_deferred_samples();
                if ok { Ok(()) } else { Err(Reported) }
            }
            EquationKind::Call { name, args } => {
                if name.name == "reinit" || name.name == "terminate" {
                    let what = &name.name;
                    return Err(self.error(
                        Diagnostic::error(
                            codes::WHEN,
                            format!("`{what}` is only allowed inside `when`"),
                        )
                        .with_primary(eq.span, "outside `when`")
                        .with_help("write `when condition then reinit(x, value); end when;`"),
                    ));
                }
                if name.name == "assert" {
                    return self.assertion(eq, args);
                }
                let _ = args;
                Err(self.error(
                    Diagnostic::error(
                        codes::UNSUPPORTED,
                        format!("`{}(…)` equations are not supported by daec", name.name),
                    )
                    .with_primary(eq.span, "not supported")
                    .with_note(
                        "daec reads flat models: write the equations that the connection implies",
                    ),
                ))
            }
        }
    }
}

/// Whether the `when` condition `c` is a `sample(…)` call, or a vector
/// (whose `sample` elements the clause advances: it fires when any element
/// rises).
fn sample_condition(c: &ast::Expr) -> bool {
    match &c.kind {
        ExprKind::Array(_) => true,
        ExprKind::Call { func, .. } => matches!(func.as_slice(), [f] if f.name == "sample"),
        _ => false,
    }
}

/// What the equations of one `when` branch lower to.
#[derive(Default)]
struct WhenBody {
    reinits: Vec<(u32, ExprId)>,
    reinit_spans: Vec<Span>,
    assigns: Vec<(u32, ExprId)>,
    assign_spans: Vec<Span>,
    terminate: Option<String>,
}

impl<'a> Lowerer<'a> {
    fn when_body(&mut self, e: &'a ast::Equation, clause: u32, out: &mut WhenBody) -> R<()> {
        match &e.kind {
            EquationKind::Simple { lhs, rhs } => self.when_assignment(
                e,
                (lhs, rhs),
                clause,
                (&mut out.assigns, &mut out.assign_spans),
            ),
            EquationKind::Call { name, args } if name.name == "terminate" => {
                let message = match args.as_slice() {
                    [a] => match &a.kind {
                        ast::ExprKind::String(text) => Some(text.clone()),
                        _ => None,
                    },
                    _ => None,
                };
                let Some(message) = message else {
                    return Err(self.error(
                        Diagnostic::error(codes::ARITY, "`terminate` takes one string")
                            .with_primary(e.span, "write `terminate(\"why\")`"),
                    ));
                };
                out.terminate = Some(message);
                Ok(())
            }
            EquationKind::Call { name, args } if name.name == "reinit" => {
                if args.len() != 2 {
                    return Err(self.error(
                        Diagnostic::error(
                            codes::ARITY,
                            format!("`reinit` takes 2 arguments, found {}", args.len()),
                        )
                        .with_primary(e.span, "write `reinit(variable, value)`"),
                    ));
                }
                let target = self.lower_expr(&args[0], Mode::Equation)?;
                let unknown = match target {
                    Val::Scalar(_, id) => match self.pool.as_leaf(id) {
                        Some(Leaf::Var { unknown, order: 0 }) => Some(unknown),
                        _ => None,
                    },
                    _ => None,
                };
                let Some(unknown) = unknown else {
                    return Err(self.error(
                        Diagnostic::error(
                            codes::WHEN,
                            "the first argument of `reinit` must be a scalar unknown",
                        )
                        .with_primary(args[0].span, "not an unknown"),
                    ));
                };
                let v = self.lower_expr(&args[1], Mode::Equation)?;
                let Val::Scalar(_, value) = v else {
                    return Err(self.error(
                        Diagnostic::error(codes::SHAPE, "the value of `reinit` must be a scalar")
                            .with_primary(
                                args[1].span,
                                format!("this is {}", shape_text(v.shape())),
                            ),
                    ));
                };
                out.reinits.push((unknown, value));
                out.reinit_spans.push(e.span);
                Ok(())
            }
            EquationKind::For { var, range, body } => {
                let values = self.range_values(range)?;
                for v in values {
                    self.loop_vars.push((var.name.as_str(), v));
                    for b in body {
                        let r = self.when_body(b, clause, out);
                        if r.is_err() {
                            self.loop_vars.pop();
                            return r;
                        }
                    }
                    self.loop_vars.pop();
                }
                Ok(())
            }
            EquationKind::If {
                branches,
                else_branch,
            } => self.when_if(e, branches, else_branch, clause, out),
            _ => Err(self.error(
                Diagnostic::error(
                    codes::WHEN,
                    "only `reinit(…)`, assignments `v = e`, `for` and `if` are allowed inside `when`",
                )
                .with_primary(e.span, "not a `reinit` or an assignment"),
            )),
        }
    }

    /// An if-equation inside `when` (MLS 3.6 §8.3.5: allowed when its
    /// branches hold what a `when` may hold). A branch whose condition is
    /// constant is chosen at compile time; otherwise every branch assigns
    /// the same discrete variables, and each assignment becomes one whose
    /// value is an if-expression over the branches' values. A `reinit`
    /// missing from a branch keeps its unknown there.
    fn when_if(
        &mut self,
        e: &'a ast::Equation,
        branches: &'a [(ast::Expr, Vec<ast::Equation>)],
        else_branch: &'a [ast::Equation],
        clause: u32,
        out: &mut WhenBody,
    ) -> R<()> {
        let mut arms: Vec<(Option<ExprId>, &'a [ast::Equation])> = Vec::new();
        for (c, body) in branches {
            let cond = self.condition(c, Mode::Equation, "an `if` condition")?;
            match self.const_value(cond) {
                Some(x) if x != 0.0 => {
                    arms.push((None, body));
                    break;
                }
                Some(_) => {}
                None => arms.push((Some(cond), body)),
            }
        }
        if arms.last().is_none_or(|a| a.0.is_some()) {
            arms.push((None, else_branch));
        }
        if let [(None, body)] = arms.as_slice() {
            for b in *body {
                self.when_body(b, clause, out)?;
            }
            return Ok(());
        }
        let mut bodies = Vec::with_capacity(arms.len());
        for (_, body) in &arms {
            let mut sub = WhenBody::default();
            for b in *body {
                self.when_body(b, clause, &mut sub)?;
            }
            if sub.terminate.is_some() {
                return Err(self.error(
                    Diagnostic::error(
                        codes::UNSUPPORTED,
                        "`terminate` inside an `if` in `when` is not supported",
                    )
                    .with_primary(e.span, "this `if`")
                    .with_help("give `terminate` a `when` clause of its own with the condition"),
                ));
            }
            bodies.push(sub);
        }
        let targets = |b: &WhenBody| {
            let mut v: Vec<u32> = b.assigns.iter().map(|a| a.0).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        let first = targets(&bodies[0]);
        if bodies.iter().any(|b| targets(b) != first) {
            return Err(self.error(
                Diagnostic::error(
                    codes::WHEN,
                    "the branches of an `if` in `when` assign different variables",
                )
                .with_primary(e.span, "in this `if`")
                .with_note("the equations of a `when` clause define its variables in every case (MLS 3.6 §8.3.5)")
                .with_help("assign every variable in every branch (`v = pre(v)` keeps its value)"),
            ));
        }
        let conds: Vec<Option<ExprId>> = arms.iter().map(|a| a.0).collect();
        for &p in &first {
            // (every branch assigns `p`; the variable's value is the
            // fallback the check above excludes)
            let merged = self.merge_arms(&conds, &bodies, |pool, b| {
                let v = b.assigns.iter().rev().find(|a| a.0 == p).map(|a| a.1);
                v.unwrap_or_else(|| pool.param(ParamId(p)))
            });
            out.assigns.push((p, merged));
            out.assign_spans.push(e.span);
        }
        let mut unknowns: Vec<u32> = bodies
            .iter()
            .flat_map(|b| b.reinits.iter().map(|r| r.0))
            .collect();
        unknowns.sort_unstable();
        unknowns.dedup();
        for u in unknowns {
            let merged = self.merge_arms(&conds, &bodies, |pool, b| {
                let v = b.reinits.iter().rev().find(|r| r.0 == u).map(|r| r.1);
                v.unwrap_or_else(|| pool.var(u, 0))
            });
            out.reinits.push((u, merged));
            out.reinit_spans.push(e.span);
        }
        Ok(())
    }

    /// `if c1 then v1 elseif c2 then v2 … else vn` of the values `value`
    /// gives in each arm (`conds[k]` `None` for the last, the `else`).
    fn merge_arms(
        &mut self,
        conds: &[Option<ExprId>],
        bodies: &[WhenBody],
        value: impl Fn(&mut daec_expr::ExprPool, &WhenBody) -> ExprId,
    ) -> ExprId {
        let last = bodies.len() - 1;
        let mut acc = value(&mut self.pool, &bodies[last]);
        for k in (0..last).rev() {
            let v = value(&mut self.pool, &bodies[k]);
            acc = match conds[k] {
                Some(c) => self.pool.select(c, v, acc),
                None => v,
            };
        }
        acc
    }

    /// Lowers a condition, which must be a Boolean scalar (`what` names it
    /// in the diagnostic).
    pub(super) fn condition(&mut self, c: &ast::Expr, mode: Mode, what: &str) -> R<ExprId> {
        let v = self.lower_expr(c, mode)?;
        match v {
            Val::Scalar(BaseType::Boolean, e) => Ok(e),
            other => Err(self.error(
                Diagnostic::error(
                    codes::TYPE_MISMATCH,
                    format!("{what} must be a Boolean scalar"),
                )
                .with_primary(
                    c.span,
                    format!(
                        "this is {} {}",
                        shape_text(other.shape()),
                        ty_name(other.ty())
                    ),
                ),
            )),
        }
    }

    fn if_equation(
        &mut self,
        eq: &'a ast::Equation,
        branches: &'a [(ast::Expr, Vec<ast::Equation>)],
        else_branch: &'a [ast::Equation],
        initial: bool,
        out: &mut Vec<Equation>,
        spans: &mut SpanRuns,
    ) -> R<()> {
        // Conditions that are constant select a branch at compile time.
        let mut conds = Vec::with_capacity(branches.len());
        for (c, _) in branches {
            let e = self.condition(c, Mode::Equation, "an `if` condition")?;
            conds.push(e);
        }
        // Fold leading constant conditions.
        let mut k = 0;
        while k < conds.len() {
            match self.const_value(conds[k]) {
                Some(x) if x != 0.0 => {
                    let mut ok = true;
                    for e in &branches[k].1 {
                        ok &= self.equation(e, initial, out, spans).is_ok();
                    }
                    return if ok { Ok(()) } else { Err(Reported) };
                }
                Some(_) => k += 1,
                None => break,
            }
        }
        if k == conds.len() {
            let mut ok = true;
            for e in else_branch {
                ok &= self.equation(e, initial, out, spans).is_ok();
            }
            return if ok { Ok(()) } else { Err(Reported) };
        }
        // Non-constant: every branch must give the same number of scalar
        // equations; they are merged into if-expressions row by row.
        let mut lowered: Vec<Vec<Equation>> = Vec::new();
        let mut counts = Vec::new();
        let mut ok = true;
        for (_, body) in &branches[k..] {
            let mut o = Vec::new();
            let mut sp = SpanRuns::new();
            for e in body {
                ok &= self.equation(e, initial, &mut o, &mut sp).is_ok();
            }
            counts.push(o.len());
            lowered.push(o);
        }
        let mut o = Vec::new();
        let mut sp = SpanRuns::new();
        for e in else_branch {
            ok &= self.equation(e, initial, &mut o, &mut sp).is_ok();
        }
        counts.push(o.len());
        lowered.push(o);
        if !ok {
            return Err(Reported);
        }
        if counts.iter().any(|&c| c != counts[0]) {
            let list: Vec<String> = counts.iter().map(|c| c.to_string()).collect();
            let mut d = Diagnostic::error(
                codes::IF_EQUATION,
                format!(
                    "the branches of this if-equation have different numbers of equations ({})",
                    list.join(", ")
                ),
            )
            .with_primary(eq.span, "branches must have equally many equations")
            .with_note("the condition is not a parameter expression, so every branch must keep the model balanced");
            if else_branch.is_empty() {
                d = d.with_help("add an `else` branch with as many equations as the others");
            }
            return Err(self.error(d));
        }
        let conds = &conds[k..];
        let description = eq.description.as_deref().map(Description::new);
        for row in 0..counts[0] {
            let mut lhs = lowered
                .last()
                .map(|b| b[row].lhs)
                .unwrap_or_else(|| self.pool.constant(0.0));
            let mut rhs = lowered
                .last()
                .map(|b| b[row].rhs)
                .unwrap_or_else(|| self.pool.constant(0.0));
            for b in (0..conds.len()).rev() {
                lhs = self.pool.select(conds[b], lowered[b][row].lhs, lhs);
                rhs = self.pool.select(conds[b], lowered[b][row].rhs, rhs);
            }
            let residual = self.pool.sub(lhs, rhs);
            out.push(Equation {
                lhs,
                rhs,
                residual,
                description,
            });
            spans.push(eq.span);
        }
        Ok(())
    }

    fn push_equation(
        &mut self,
        l: Val,
        r: Val,
        span: Span,
        description: Option<Description>,
        out: &mut Vec<Equation>,
        spans: &mut SpanRuns,
    ) -> R<()> {
        if !same_shape(l.shape(), r.shape()) {
            return Err(self.error(
                Diagnostic::error(
                    codes::SHAPE,
                    format!(
                        "the two sides of this equation have different sizes: {} and {}",
                        shape_text(l.shape()),
                        shape_text(r.shape())
                    ),
                )
                .with_primary(span, "sizes differ"),
            ));
        }
        if l.ty() == BaseType::Boolean || r.ty() == BaseType::Boolean {
            return Err(self.error(
                Diagnostic::error(codes::TYPE_MISMATCH, "Boolean equations are not supported")
                    .with_primary(span, "a Boolean equation")
                    .with_note("daec's unknowns are Real"),
            ));
        }
        self.count_scalars(l.elems().len(), span)?;
        for (&a, &b) in l.elems().iter().zip(r.elems()) {
            let residual = self.pool.sub(a, b);
            out.push(Equation {
                lhs: a,
                rhs: b,
                residual,
                description,
            });
            spans.push(span);
        }
        Ok(())
    }

    pub(super) fn range_values(&mut self, range: &ast::Expr) -> R<Vec<i64>> {
        let (start, step, stop) = match &range.kind {
            ExprKind::Range { start, step, stop } => {
                let a = self.const_int(start)?;
                let s = match step {
                    Some(s) => self.const_int(s)?,
                    None => 1,
                };
                let b = self.const_int(stop)?;
                (a, s, b)
            }
            _ => {
                let v = self.lower_expr(range, Mode::Const)?;
                let mut out = Vec::new();
                for &e in v.elems() {
                    let x = self.const_value(e).unwrap_or(f64::NAN);
                    if v.ty() != BaseType::Integer || x.fract() != 0.0 {
                        return Err(self.error(
                            Diagnostic::error(
                                codes::TYPE_MISMATCH,
                                "a `for` range must be Integer",
                            )
                            .with_primary(range.span, "write `1:N` or `{1, 2, 3}`"),
                        ));
                    }
                    out.push(x as i64);
                }
                return Ok(out);
            }
        };
        if step == 0 {
            return Err(self.error(
                Diagnostic::error(codes::SHAPE, "a range step of 0 never ends")
                    .with_primary(range.span, "step is 0"),
            ));
        }
        let count = if (step > 0 && stop < start) || (step < 0 && stop > start) {
            0
        } else {
            (stop.abs_diff(start) / step.unsigned_abs()) as u128 + 1
        };
        let limit = self.options.scalar_limit();
        if count > limit as u128 {
            let d = Diagnostic::error(
                codes::TOO_LARGE,
                format!("this range has {count} values, more than the model can have scalars"),
            )
            .with_primary(range.span, "too many values")
            .with_note(self.limit_note(
                usize::try_from(count).unwrap_or(usize::MAX),
                self.pool.len(),
                false,
            ));
            let d = self.with_overrides(d);
            return Err(self.error(d));
        }
        let mut values = self.vec_with_capacity(count as usize, range.span)?;
        values.extend((0..count as i64).map(|k| start + k * step));
        Ok(values)
    }

    // ------------------------------------------------------------ expressions
}
