//! Calls of functions at run time (MLS 3.6, chapter 12): a function whose
//! call cannot be inlined — a `while` loop on run-time values, or a value
//! that grows beyond the size budget (an `if` on run-time values in a
//! loop) — or whose class says `annotation(Inline = false)` becomes a
//! [`FlatFunction`] of the flat model, and the call a flat call
//! ([`FlatFunction::call`]) of it. The lowering compiles the function for
//! `daec-expr`'s interpreter; its derivatives come from its `derivative`
//! annotation (§12.7.1), else from the forward-mode differentiation of its
//! algorithm.

use super::Inst;
use super::function::Reported;
use super::scope::{Loops, Scope};
use daec_diag::{Diagnostic, Span, codes};
use daec_syntax::ast::{
    Causality, ClassBody, Element, Expr, ExprKind, FlatFunction, Modifier, Statement, StatementKind,
};
use std::collections::HashMap;

/// What a function's class annotation asks of its calls.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(super) enum Inlining {
    /// Inline (the default, `Inline = true`, `LateInline = true`), or call
    /// at run time when inlining is impossible.
    Inline,
    /// `Inline = false`: call at run time.
    Call,
}

/// The class annotations of `def`'s body.
fn class_annotations(body: &ClassBody) -> &[Modifier] {
    match body {
        ClassBody::Long { annotations, .. } => annotations,
        ClassBody::Short { .. } => &[],
    }
}

impl Inst<'_> {
    /// What the annotation of function `class` asks.
    pub(super) fn inlining(&self, class: usize) -> Inlining {
        let Some(def) = self.tree.nodes[class].def else {
            return Inlining::Inline;
        };
        let off = class_annotations(&def.body).iter().any(|m| {
            m.name.name == "Inline"
                && matches!(
                    m.value.as_ref().map(|v| &v.kind),
                    Some(ExprKind::Bool(false))
                )
        });
        if off {
            Inlining::Call
        } else {
            Inlining::Inline
        }
    }

    /// The calls of the outputs of function `class` on `inputs` (its
    /// inputs' flat values, in order) at run time.
    pub(super) fn runtime_outputs(
        &mut self,
        class: usize,
        inputs: Vec<Expr>,
        span: Span,
    ) -> Result<Vec<Expr>, Reported> {
        let index = self.runtime_function(class, span)?;
        let n = self.functions[index].outputs.len();
        Ok((0..n)
            .map(|k| Expr {
                kind: ExprKind::Call {
                    func: FlatFunction::call(index, k, span),
                    args: inputs.clone(),
                    named_args: Vec::new(),
                },
                span,
            })
            .collect())
    }

    /// Reports that function `name` cannot be called at run time because
    /// of `what` at `at`.
    fn refuse(&mut self, name: &str, at: Span, what: &str) -> Reported {
        let d = Diagnostic::error(
            codes::FUNCTION,
            format!("cannot call `{name}` at run time: {what}"),
        )
        .with_primary(at, "here")
        .with_note(
            "a function that cannot be inlined is evaluated at run time by an interpreter of \
             its algorithm, which takes scalar variables, assignments, `if`, `for`, `while`, \
             `break` and `return`",
        );
        self.error(d);
        Reported
    }

    /// The index of function `class` among the run-time functions, made
    /// the first time.
    fn runtime_function(&mut self, class: usize, span: Span) -> Result<usize, Reported> {
        if let Some(&k) = self.runtime.get(&class) {
            return Ok(k);
        }
        let name = self.tree.full(class);
        let Some(def) = self.tree.nodes[class].def else {
            return Err(Reported);
        };
        let ClassBody::Long {
            elements,
            algorithm,
            ..
        } = &def.body
        else {
            return Err(self.refuse(&name, span, "a short function definition"));
        };
        let scope = Scope {
            class,
            prefix: String::new(),
            names: HashMap::new(),
            parent: None,
            inners: HashMap::new(),
        };
        let mut f = FlatFunction {
            name: name.clone(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            locals: Vec::new(),
            algorithm: Vec::new(),
            derivative: None,
            span: def.name.span,
        };
        let mut bindings = Vec::new();
        for e in elements {
            let Element::Component(c) = e else { continue };
            let decl = &c.decl;
            if !decl.dims.is_empty() {
                return Err(self.refuse(&name, decl.span, "an array variable"));
            }
            match decl.causality {
                Causality::Input => f.inputs.push(decl.name.clone()),
                Causality::Output => f.outputs.push(decl.name.clone()),
                Causality::None => f.locals.push(decl.name.clone()),
            }
            if decl.causality != Causality::Input
                && let Some(b) = &decl.binding
            {
                bindings.push((decl.name.clone(), b.clone(), decl.span));
            }
        }
        if f.inputs.is_empty() {
            return Err(self.refuse(&name, def.name.span, "a function without inputs"));
        }
        if f.outputs.is_empty() {
            return Err(self.refuse(&name, def.name.span, "a function without outputs"));
        }
        let mut body = Vec::with_capacity(bindings.len() + algorithm.len());
        for (n, b, at) in bindings {
            body.push(Statement {
                kind: StatementKind::Assign {
                    lhs: Expr {
                        kind: ExprKind::Name(vec![n.clone()]),
                        span: n.span,
                    },
                    rhs: b,
                },
                span: at,
            });
        }
        body.extend(algorithm.iter().cloned());
        let mut flat = Flat {
            name: &name,
            scope: &scope,
            f: &mut f,
        };
        let statements = self.flat_block(&mut flat, &body)?;
        f.algorithm = statements;
        let index = self.functions.len();
        self.functions.push(f);
        self.runtime.insert(class, index);
        let derivative = self.derivative_annotation(class, index, span)?;
        self.functions[index].derivative = derivative;
        Ok(index)
    }

    /// `annotation(derivative(noDerivative = …, zeroDerivative = …) =
    /// f_der)` of function `class` (run-time function `index`): `f_der`
    /// as a run-time function and the inputs it differentiates. Only the
    /// first-order annotation is used (`order = 1`, the default); a
    /// higher derivative differentiates `f_der`.
    fn derivative_annotation(
        &mut self,
        class: usize,
        index: usize,
        span: Span,
    ) -> Result<Option<(usize, Vec<bool>)>, Reported> {
        let Some(def) = self.tree.nodes[class].def else {
            return Ok(None);
        };
        let Some(m) = class_annotations(&def.body).iter().find(|m| {
            m.name.name == "derivative"
                && m.nested.iter().all(|n| {
                    n.name.name != "order"
                        || matches!(
                            n.value.as_ref().map(|v| &v.kind),
                            Some(ExprKind::Integer(1))
                        )
                })
        }) else {
            return Ok(None);
        };
        let Some(Expr {
            kind: ExprKind::Name(path),
            span: at,
        }) = &m.value
        else {
            return Ok(None);
        };
        let path: Vec<String> = path.iter().map(|i| i.name.clone()).collect();
        let Some(der) = self
            .tree
            .lookup(class, &path)
            .filter(|&c| self.tree.kind(c) == daec_syntax::ast::ClassKind::Function)
        else {
            let d = Diagnostic::error(
                codes::FUNCTION,
                format!(
                    "the `derivative` annotation of `{}` names no function",
                    self.functions[index].name
                ),
            )
            .with_primary(*at, "not a function");
            self.error(d);
            return Err(Reported);
        };
        let der_index = self.runtime_function(der, span)?;
        let inputs = self.functions[index].inputs.clone();
        let mut differentiated = vec![true; inputs.len()];
        for n in &m.nested {
            if n.name.name != "noDerivative" && n.name.name != "zeroDerivative" {
                continue;
            }
            if let Some(Expr {
                kind: ExprKind::Name(p),
                ..
            }) = &n.value
                && let [input] = p.as_slice()
                && let Some(k) = inputs.iter().position(|i| i.name == input.name)
            {
                differentiated[k] = false;
            }
        }
        let want = inputs.len() + differentiated.iter().filter(|&&d| d).count();
        let (have, outs) = (
            self.functions[der_index].inputs.len(),
            self.functions[der_index].outputs.len(),
        );
        if have != want || outs != self.functions[index].outputs.len() {
            let d = Diagnostic::error(
                codes::FUNCTION,
                format!(
                    "`{}`, the derivative of `{}`, takes {have} inputs and {outs} outputs; \
                     {want} inputs and {} outputs expected",
                    self.functions[der_index].name,
                    self.functions[index].name,
                    self.functions[index].outputs.len()
                ),
            )
            .with_primary(*at, "named here")
            .with_note(
                "MLS 3.6 §12.7.1: the inputs of the derivative are the function's inputs, then \
                 the derivatives of those not listed by `noDerivative` or `zeroDerivative`; its \
                 outputs are the derivatives of the outputs",
            );
            self.error(d);
            return Err(Reported);
        }
        Ok(Some((der_index, differentiated)))
    }

    fn flat_block(
        &mut self,
        flat: &mut Flat<'_>,
        body: &[Statement],
    ) -> Result<Vec<Statement>, Reported> {
        body.iter()
            .map(|st| self.flat_statement(flat, st))
            .collect()
    }

    fn flat_statement(
        &mut self,
        flat: &mut Flat<'_>,
        st: &Statement,
    ) -> Result<Statement, Reported> {
        let kind = match &st.kind {
            StatementKind::Assign { lhs, rhs } => {
                let ExprKind::Name(parts) = &lhs.kind else {
                    return Err(self.refuse(flat.name, lhs.span, "this assignment target"));
                };
                let [target] = parts.as_slice() else {
                    return Err(self.refuse(flat.name, lhs.span, "this assignment target"));
                };
                if let Some(input) = flat.f.inputs.iter().find(|i| i.name == target.name) {
                    let d = Diagnostic::error(
                        codes::FUNCTION,
                        format!(
                            "cannot assign to input `{}` of `{}`",
                            target.name, flat.name
                        ),
                    )
                    .with_primary(lhs.span, "an input")
                    .with_secondary(input.span, "declared here");
                    self.error(d);
                    return Err(Reported);
                }
                if !flat.is_variable(&target.name) {
                    let d = Diagnostic::error(
                        codes::UNDECLARED,
                        format!("`{}` is not a variable of `{}`", target.name, flat.name),
                    )
                    .with_primary(target.span, "not declared in the function");
                    self.error(d);
                    return Err(Reported);
                }
                StatementKind::Assign {
                    lhs: lhs.clone(),
                    rhs: self.flat_expr(flat, rhs)?,
                }
            }
            StatementKind::If {
                branches,
                else_branch,
            } => StatementKind::If {
                branches: branches
                    .iter()
                    .map(|(c, b)| Ok((self.flat_expr(flat, c)?, self.flat_block(flat, b)?)))
                    .collect::<Result<Vec<_>, _>>()?,
                else_branch: self.flat_block(flat, else_branch)?,
            },
            StatementKind::For { var, range, body } => {
                let range = self.flat_expr(flat, range)?;
                if !matches!(range.kind, ExprKind::Range { .. }) {
                    return Err(self.refuse(
                        flat.name,
                        range.span,
                        "a `for` range other than `a:b`",
                    ));
                }
                if !flat.is_variable(&var.name) {
                    flat.f.locals.push(var.clone());
                }
                StatementKind::For {
                    var: var.clone(),
                    range,
                    body: self.flat_block(flat, body)?,
                }
            }
            StatementKind::While { condition, body } => StatementKind::While {
                condition: self.flat_expr(flat, condition)?,
                body: self.flat_block(flat, body)?,
            },
            StatementKind::Break => StatementKind::Break,
            StatementKind::Return => StatementKind::Return,
            StatementKind::TupleAssign { .. } => {
                return Err(self.refuse(flat.name, st.span, "`(a, b) := f(x)`"));
            }
            StatementKind::Call(_) => {
                return Err(self.refuse(flat.name, st.span, "a call statement (such as `assert`)"));
            }
            StatementKind::Error => return Err(Reported),
        };
        Ok(Statement {
            kind,
            span: st.span,
        })
    }

    /// `e` of the function's body with its variables kept by name,
    /// constants replaced by their values and calls of other functions
    /// inlined over the variables.
    fn flat_expr(&mut self, flat: &mut Flat<'_>, e: &Expr) -> Result<Expr, Reported> {
        let span = e.span;
        let kind = match &e.kind {
            ExprKind::Name(parts) => {
                if let [one] = parts.as_slice()
                    && flat.is_variable(&one.name)
                {
                    return Ok(e.clone());
                }
                let renamed = self.rename(e, flat.scope, &Loops::new());
                return match renamed.kind {
                    ExprKind::Error => Err(Reported),
                    _ => Ok(renamed),
                };
            }
            ExprKind::Call {
                func,
                args,
                named_args,
            } => {
                let (args, named_args) = Self::map_args(self, args, named_args, &mut |this, a| {
                    this.flat_expr(flat, a)
                })?;
                return self.call_of(func, args, named_args, span, flat.scope);
            }
            ExprKind::Binary { .. }
            | ExprKind::Unary { .. }
            | ExprKind::If { .. }
            | ExprKind::Range { .. } => {
                Self::map_operands(self, &e.kind, &mut |this, a| this.flat_expr(flat, a))?
            }
            ExprKind::Integer(_) | ExprKind::Real(_) | ExprKind::Bool(_) => e.kind.clone(),
            ExprKind::Error => return Err(Reported),
            _ => return Err(self.refuse(flat.name, span, "this expression")),
        };
        Ok(Expr { kind, span })
    }
}

/// The function being flattened.
struct Flat<'a> {
    name: &'a str,
    scope: &'a Scope,
    f: &'a mut FlatFunction,
}

impl Flat<'_> {
    /// Whether `name` is a variable of the function.
    fn is_variable(&self, name: &str) -> bool {
        let f = &*self.f;
        f.inputs
            .iter()
            .chain(&f.outputs)
            .chain(&f.locals)
            .any(|i| i.name == name)
    }
}
