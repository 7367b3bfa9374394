//! Calls of Modelica functions (MLS 3.6, chapter 12), inlined by symbolic
//! execution of their `algorithm` section.
//!
//! A call `f(a, b)` of a `function` class is replaced by the expressions
//! of its outputs: the statements are executed over symbolic values, each
//! local variable (input, output, protected) bound to a flat expression.
//! An assignment rebinds a variable; an `if` whose condition is not known
//! executes every branch and merges each variable into an if-expression;
//! a `for` over a range known at instantiation is unrolled; a `while`
//! whose condition becomes known at each iteration is unrolled (at most
//! [`MAX_ITERATIONS`] times, a diagnostic beyond); `return` and `break`
//! are Boolean flags merged like variables, so a statement after a
//! conditional `return` is an if-expression on the flag. The result has
//! no node the rest of daec does not know: the structural analysis, the
//! derivative array and every formulation differentiate it exactly.
//!
//! `Modelica.Math.sin` and its siblings name the built-in functions
//! ([`MATH_BUILTINS`]), with or without a `Modelica` library.

use super::Inst;
use super::runtime::Inlining;
use super::scope::{Loops, Scope};
use daec_diag::{Diagnostic, Span, codes};
use daec_syntax::ast::{
    BinOp, Causality, ClassBody, ClassKind, Element, Expr, ExprKind, Ident, Statement,
    StatementKind, UnOp,
};
use std::collections::HashMap;

/// The most iterations of one `while` loop (and of all loops of one
/// call) the symbolic execution unrolls.
pub(super) const MAX_ITERATIONS: usize = 100_000;

/// The most operations one value of a function's execution may hold.
const MAX_NODES: usize = 200_000;

/// The deepest nesting of operations in one value of a function's
/// execution (an `if` on run-time values in a loop can double a value at
/// each iteration; the later stages recurse over the nesting).
const MAX_NESTING: usize = 2_000;

/// The most nested function calls inlined into one another.
const MAX_CALL_DEPTH: usize = 32;

/// The functions of `Modelica.Math` that are daec's built-ins.
pub(super) const MATH_BUILTINS: &[&str] = &[
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "exp", "log",
    "log10",
];

/// The flag set by `return`.
const RETURN: &str = "return";
/// The flag set by `break`.
const BREAK: &str = "break";

/// A mistake already reported.
pub(super) struct Reported;

/// The value of one variable of a function being executed.
#[derive(Clone, Debug, PartialEq)]
enum Slot {
    /// A scalar (or an input of any shape); `None` before it is assigned.
    Scalar(Option<Expr>),
    /// A local array of known size, element by element.
    Array(Vec<Option<Expr>>),
}

/// One variable.
#[derive(Clone, Debug, PartialEq)]
struct Var {
    slot: Slot,
    causality: Causality,
    /// Where it is declared.
    span: Span,
}

/// The variables of one call (the flags `return` and `break` among them,
/// as Boolean scalars).
type Env = HashMap<String, Var>;

/// Named arguments of a call.
type NamedArgs = Vec<(Ident, Expr)>;

/// The function being executed.
struct Frame {
    /// Its class.
    class: usize,
    /// Its full name, for messages.
    name: String,
    /// Its names for lookups of constants.
    scope: Scope,
    /// Loop iterations left.
    budget: usize,
}

fn lit_bool(b: bool, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Bool(b),
        span,
    }
}

impl Inst<'_> {
    /// The flat expression of a call whose function is `func` (flat
    /// arguments), if `func` names a user function or a `Modelica.Math`
    /// built-in; `None` leaves the call to the lowering (a built-in).
    pub(super) fn function_call(
        &mut self,
        func: &[Ident],
        args: &[Expr],
        named: &[(Ident, Expr)],
        span: Span,
        scope: &Scope,
    ) -> Option<Expr> {
        if let Some(name) = math_builtin(func) {
            return Some(Expr {
                kind: ExprKind::Call {
                    func: vec![Ident {
                        name: name.to_owned(),
                        span: func[0].span.to(func[func.len() - 1].span),
                    }],
                    args: args.to_vec(),
                    named_args: named.to_vec(),
                },
                span,
            });
        }
        let class = self.function_class(func, scope.class)?;
        let error = Expr {
            kind: ExprKind::Error,
            span,
        };
        match self.inline(class, args, named, span) {
            Some(mut outputs) if !outputs.is_empty() => Some(outputs.swap_remove(0)),
            Some(_) => {
                let d = Diagnostic::error(
                    codes::FUNCTION,
                    format!("`{}` has no output", self.tree.full(class)),
                )
                .with_primary(span, "used as a value");
                self.error(d);
                Some(error)
            }
            None => Some(error),
        }
    }

    /// The outputs of the call `call` (renamed in `scope`), for
    /// `(a, b) = f(x)`; `None` after a diagnostic.
    pub(super) fn call_outputs(
        &mut self,
        call: &Expr,
        scope: &Scope,
        loops: &Loops,
    ) -> Option<Vec<Expr>> {
        if let ExprKind::Call {
            func,
            args,
            named_args,
        } = &call.kind
            && let Some(class) = self.function_class(func, scope.class)
        {
            let args: Vec<Expr> = args.iter().map(|a| self.rename(a, scope, loops)).collect();
            let named: Vec<(Ident, Expr)> = named_args
                .iter()
                .map(|(n, a)| (n.clone(), self.rename(a, scope, loops)))
                .collect();
            return self.inline(class, &args, &named, call.span);
        }
        let d = Diagnostic::error(
            codes::FUNCTION,
            "the right side of `(a, b) = …` must be a call of a function",
        )
        .with_primary(call.span, "not a function call");
        self.error(d);
        None
    }

    /// The `function` class `func` names from `class`, if any.
    fn function_class(&self, func: &[Ident], class: usize) -> Option<usize> {
        let path: Vec<String> = func.iter().map(|i| i.name.clone()).collect();
        let id = self.tree.lookup(class, &path)?;
        (self.tree.kind(id) == ClassKind::Function).then_some(id)
    }

    /// The output expressions of `class` called with `args` and `named`
    /// (flat), in declaration order; `None` after a diagnostic.
    fn inline(
        &mut self,
        class: usize,
        args: &[Expr],
        named: &[(Ident, Expr)],
        span: Span,
    ) -> Option<Vec<Expr>> {
        let name = self.tree.full(class);
        if self.calls.contains(&class) {
            let d = Diagnostic::error(
                codes::FUNCTION,
                format!("cannot inline `{name}`: it calls itself"),
            )
            .with_primary(span, "a recursive call")
            .with_note("daec inlines every function call; a recursive function cannot be");
            self.error(d);
            return None;
        }
        if self.calls.len() >= MAX_CALL_DEPTH {
            let d = Diagnostic::error(
                codes::TOO_LARGE,
                format!("function calls nested more than {MAX_CALL_DEPTH} deep"),
            )
            .with_primary(span, "one call too many");
            self.error(d);
            return None;
        }
        let mut frame = Frame {
            class,
            name,
            scope: Scope {
                class,
                prefix: String::new(),
                names: HashMap::new(),
                parent: None,
                inners: HashMap::new(),
            },
            budget: MAX_ITERATIONS,
        };
        let at_call = self.inlining(class) == Inlining::Call;
        let (mark, outer) = (self.diags.len(), self.wants_runtime);
        self.wants_runtime = false;
        self.calls.push(class);
        let mut result = self.execute(&mut frame, args, named, span, at_call);
        if result.is_err() && at_call {
            // `Inline = false` is a hint (MLS 3.6 §18.3): a function the
            // interpreter does not take is inlined.
            self.diags.truncate(mark);
            frame.budget = MAX_ITERATIONS;
            result = self.execute(&mut frame, args, named, span, false);
        }
        if result.is_err() && self.wants_runtime && !at_call {
            // Inlining is impossible: call the function at run time (and
            // report why it is not inlined if that is impossible too).
            let why = self.diags.split_off(mark);
            frame.budget = MAX_ITERATIONS;
            result = self.execute(&mut frame, args, named, span, true);
            if result.is_err() {
                let refusals = self.diags.split_off(mark);
                self.diags.extend(why.into_iter().map(|d| {
                    d.with_note(
                    "so daec would call it at run time, which is impossible too (the other error)",
                )
                }));
                self.diags.extend(refusals);
            }
        }
        self.calls.pop();
        self.wants_runtime = outer;
        result.ok()
    }

    /// Binds the arguments, runs the algorithm and collects the outputs;
    /// with `at_run_time`, the outputs are calls at run time of the
    /// function on the bound inputs.
    fn execute(
        &mut self,
        frame: &mut Frame,
        args: &[Expr],
        named: &[(Ident, Expr)],
        span: Span,
        at_run_time: bool,
    ) -> Result<Vec<Expr>, Reported> {
        let tree = self.tree;
        let Some(def) = tree.nodes[frame.class].def else {
            return Err(Reported);
        };
        let ClassBody::Long {
            elements,
            algorithm,
            sections,
            ..
        } = &def.body
        else {
            return Err(self.fail(frame, span, "a short function definition is not supported"));
        };
        if let Some(s) = sections.first() {
            return Err(self.fail(frame, s.span, "a function with equations is not supported"));
        }
        let mut env = Env::new();
        for flag in [RETURN, BREAK] {
            env.insert(
                flag.to_owned(),
                Var {
                    slot: Slot::Scalar(Some(lit_bool(false, span))),
                    causality: Causality::None,
                    span,
                },
            );
        }
        let components: Vec<_> = elements
            .iter()
            .filter_map(|e| match e {
                Element::Component(c) => Some(c),
                _ => None,
            })
            .collect();
        if let Some(x) = elements.iter().find_map(|e| match e {
            Element::Extends(x) => Some(x.span),
            _ => None,
        }) {
            return Err(self.fail(frame, x, "`extends` in a function is not supported"));
        }
        let inputs: Vec<&str> = components
            .iter()
            .filter(|c| c.decl.causality == Causality::Input)
            .map(|c| c.decl.name.name.as_str())
            .collect();
        if args.len() > inputs.len() {
            let d = Diagnostic::error(
                codes::ARITY,
                format!(
                    "`{}` takes {} argument{}, {} given",
                    frame.name,
                    inputs.len(),
                    if inputs.len() == 1 { "" } else { "s" },
                    args.len()
                ),
            )
            .with_primary(span, "wrong number of arguments");
            self.error(d);
            return Err(Reported);
        }
        for (n, _) in named {
            if !inputs.contains(&n.name.as_str()) {
                let d = Diagnostic::error(
                    codes::ARITY,
                    format!("`{}` has no input `{}`", frame.name, n.name),
                )
                .with_primary(n.span, "no input of this name")
                .with_note(format!("its inputs are: {}", inputs.join(", ")));
                self.error(d);
                return Err(Reported);
            }
        }
        let mut positional = args.iter();
        for c in &components {
            let decl = &c.decl;
            let name = decl.name.name.clone();
            let slot = if decl.causality == Causality::Input {
                let value = match positional.next() {
                    Some(a) => {
                        if let Some((n, _)) = named.iter().find(|(n, _)| n.name == name) {
                            let d = Diagnostic::error(
                                codes::ARITY,
                                format!("input `{name}` of `{}` is given twice", frame.name),
                            )
                            .with_primary(n.span, "also given by position");
                            self.error(d);
                            return Err(Reported);
                        }
                        a.clone()
                    }
                    None => match named.iter().find(|(n, _)| n.name == name) {
                        Some((_, a)) => a.clone(),
                        None => match &decl.binding {
                            Some(b) => self.sym(frame, &env, b)?,
                            None => {
                                let d = Diagnostic::error(
                                    codes::ARITY,
                                    format!(
                                        "the call of `{}` gives no value for input `{name}`",
                                        frame.name
                                    ),
                                )
                                .with_primary(span, "missing argument")
                                .with_secondary(decl.name.span, "declared without a default");
                                self.error(d);
                                return Err(Reported);
                            }
                        },
                    },
                };
                Slot::Scalar(Some(value))
            } else {
                let binding = match &decl.binding {
                    Some(b) => Some(self.sym(frame, &env, b)?),
                    None => None,
                };
                match decl.dims.as_slice() {
                    [] => Slot::Scalar(binding),
                    [d] => {
                        let dim = self.sym(frame, &env, d)?;
                        let Some(n) = self.eval_int(&dim, "the size of a function's array") else {
                            return Err(Reported);
                        };
                        let n = usize::try_from(n).unwrap_or(0).min(super::MAX_EXPANDED);
                        match binding {
                            None => Slot::Array(vec![None; n]),
                            Some(Expr {
                                kind: ExprKind::Array(items),
                                ..
                            }) if items.len() == n => {
                                Slot::Array(items.into_iter().map(Some).collect())
                            }
                            Some(b) => Slot::Array(
                                (1..=n as i64)
                                    .map(|i| Some(index(b.clone(), i, b.span)))
                                    .collect(),
                            ),
                        }
                    }
                    _ => {
                        return Err(self.fail(
                            frame,
                            decl.span,
                            "a function variable with more than one dimension is not supported",
                        ));
                    }
                }
            };
            env.insert(
                name,
                Var {
                    slot,
                    causality: decl.causality,
                    span: decl.name.span,
                },
            );
        }
        if at_run_time {
            let inputs = components
                .iter()
                .filter(|c| c.decl.causality == Causality::Input)
                .filter_map(|c| match &env.get(&c.decl.name.name)?.slot {
                    Slot::Scalar(Some(v)) => Some(v.clone()),
                    _ => None,
                })
                .collect();
            return self.runtime_outputs(frame.class, inputs, span);
        }
        self.block(frame, &mut env, algorithm)?;
        let mut outputs = Vec::new();
        for c in components
            .iter()
            .filter(|c| c.decl.causality == Causality::Output)
        {
            let var = &env[&c.decl.name.name];
            let value = match &var.slot {
                Slot::Scalar(v) => v.clone(),
                Slot::Array(items) => {
                    items
                        .iter()
                        .cloned()
                        .collect::<Option<Vec<Expr>>>()
                        .map(|items| Expr {
                            kind: ExprKind::Array(items),
                            span,
                        })
                }
            };
            let Some(value) = value else {
                let d = Diagnostic::error(
                    codes::FUNCTION,
                    format!(
                        "output `{}` of `{}` is not assigned on every path",
                        c.decl.name.name, frame.name
                    ),
                )
                .with_primary(c.decl.name.span, "not always assigned")
                .with_secondary(span, "in this call");
                self.error(d);
                return Err(Reported);
            };
            outputs.push(Expr { span, ..value });
        }
        Ok(outputs)
    }

    /// Reports that `frame`'s function cannot be inlined because of `what`
    /// at `at`.
    fn fail(&mut self, frame: &Frame, at: Span, what: &str) -> Reported {
        let d = Diagnostic::error(
            codes::FUNCTION,
            format!("cannot inline `{}`: {what}", frame.name),
        )
        .with_primary(at, "here");
        self.error(d);
        Reported
    }

    /// Executes `body`, each statement guarded by the `return` and `break`
    /// flags.
    fn block(
        &mut self,
        frame: &mut Frame,
        env: &mut Env,
        body: &[Statement],
    ) -> Result<(), Reported> {
        for st in body {
            let guard = self.guard(env, st.span);
            match self.eval(&guard, 0) {
                Some(v) if v != 0.0 => return Ok(()),
                Some(_) => self.statement(frame, env, st)?,
                None => {
                    let before = env.clone();
                    self.statement(frame, env, st)?;
                    *env = self.merge(&[(guard, before)], env.clone());
                }
            }
        }
        Ok(())
    }

    /// `return or break`: whether the statements that follow are skipped.
    fn guard(&self, env: &Env, span: Span) -> Expr {
        let flag = |n: &str| match &env[n].slot {
            Slot::Scalar(Some(e)) => e.clone(),
            _ => lit_bool(false, span),
        };
        or(flag(RETURN), flag(BREAK), span)
    }

    /// Sets the flag `name`.
    fn set_flag(env: &mut Env, name: &str, value: Expr) {
        if let Some(v) = env.get_mut(name) {
            v.slot = Slot::Scalar(Some(value));
        }
    }

    fn statement(
        &mut self,
        frame: &mut Frame,
        env: &mut Env,
        st: &Statement,
    ) -> Result<(), Reported> {
        match &st.kind {
            StatementKind::Assign { lhs, rhs } => {
                let value = self.sym(frame, env, rhs)?;
                self.assign(frame, env, lhs, value)
            }
            StatementKind::TupleAssign { lhs, rhs } => {
                let ExprKind::Call {
                    func,
                    args,
                    named_args,
                } = &rhs.kind
                else {
                    return Err(self.fail(frame, rhs.span, "`(a, b) :=` needs a function call"));
                };
                let Some(class) = self.function_class(func, frame.class) else {
                    return Err(self.fail(frame, rhs.span, "`(a, b) :=` needs a function call"));
                };
                let args = args
                    .iter()
                    .map(|a| self.sym(frame, env, a))
                    .collect::<Result<Vec<_>, _>>()?;
                let named = named_args
                    .iter()
                    .map(|(n, a)| Ok((n.clone(), self.sym(frame, env, a)?)))
                    .collect::<Result<Vec<_>, _>>()?;
                let outputs = self
                    .inline(class, &args, &named, rhs.span)
                    .ok_or(Reported)?;
                if outputs.len() < lhs.len() {
                    let d = Diagnostic::error(
                        codes::ARITY,
                        format!(
                            "`{}` has {} outputs, {} assigned",
                            self.tree.full(class),
                            outputs.len(),
                            lhs.len()
                        ),
                    )
                    .with_primary(st.span, "too many targets");
                    self.error(d);
                    return Err(Reported);
                }
                for (l, v) in lhs.iter().zip(outputs) {
                    self.assign(frame, env, l, v)?;
                }
                Ok(())
            }
            StatementKind::Call(call) => Err(self.fail(
                frame,
                call.span,
                "a call statement (such as `assert`) is not supported in a function",
            )),
            StatementKind::If {
                branches,
                else_branch,
            } => self.if_statement(frame, env, branches, else_branch, st.span),
            StatementKind::For { var, range, body } => {
                self.for_statement(frame, env, var, range, body)
            }
            StatementKind::While { condition, body } => {
                self.while_statement(frame, env, condition, body, st.span)
            }
            StatementKind::Break => {
                Self::set_flag(env, BREAK, lit_bool(true, st.span));
                Ok(())
            }
            StatementKind::Return => {
                Self::set_flag(env, RETURN, lit_bool(true, st.span));
                Ok(())
            }
            StatementKind::Error => Err(Reported),
        }
    }

    /// `lhs := value`.
    fn assign(
        &mut self,
        frame: &mut Frame,
        env: &mut Env,
        lhs: &Expr,
        value: Expr,
    ) -> Result<(), Reported> {
        let (name, subscript) = match &lhs.kind {
            ExprKind::Name(parts) if parts.len() == 1 => (&parts[0], None),
            ExprKind::Index { base, indices } if indices.len() == 1 => match &base.kind {
                ExprKind::Name(parts) if parts.len() == 1 => (&parts[0], Some(&indices[0])),
                _ => {
                    return Err(self.fail(
                        frame,
                        lhs.span,
                        "this assignment target is not supported",
                    ));
                }
            },
            _ => return Err(self.fail(frame, lhs.span, "this assignment target is not supported")),
        };
        let Some(var) = env.get(&name.name) else {
            let d = Diagnostic::error(
                codes::UNDECLARED,
                format!("`{}` is not a variable of `{}`", name.name, frame.name),
            )
            .with_primary(name.span, "not declared in the function");
            self.error(d);
            return Err(Reported);
        };
        if var.causality == Causality::Input {
            let d = Diagnostic::error(
                codes::FUNCTION,
                format!("cannot assign to input `{}` of `{}`", name.name, frame.name),
            )
            .with_primary(lhs.span, "an input")
            .with_secondary(var.span, "declared here");
            self.error(d);
            return Err(Reported);
        }
        let k = match subscript {
            None => None,
            Some(i) => {
                let i = self.sym(frame, env, i)?;
                let Some(k) = self.eval_int(&i, "a subscript of an assigned array element") else {
                    return Err(Reported);
                };
                Some(k)
            }
        };
        self.check_size(frame, &value, lhs.span)?;
        let var = env.get_mut(&name.name).ok_or(Reported)?;
        match (&mut var.slot, k) {
            (Slot::Scalar(v), None) => *v = Some(value),
            (Slot::Array(items), None) => match value.kind {
                ExprKind::Array(values) if values.len() == items.len() => {
                    *items = values.into_iter().map(Some).collect();
                }
                _ => {
                    let n = items.len();
                    *items = (1..=n as i64)
                        .map(|i| Some(index(value.clone(), i, value.span)))
                        .collect();
                }
            },
            (Slot::Array(items), Some(k)) if k >= 1 && (k as usize) <= items.len() => {
                items[k as usize - 1] = Some(value);
            }
            (Slot::Array(items), Some(k)) => {
                let n = items.len();
                let d = Diagnostic::error(
                    codes::INDEX_RANGE,
                    format!("index {k} is outside `{}[{n}]`", name.name),
                )
                .with_primary(lhs.span, "out of range");
                self.error(d);
                return Err(Reported);
            }
            (Slot::Scalar(_), Some(_)) => {
                return Err(self.fail(frame, lhs.span, "a subscript of a scalar variable"));
            }
        }
        Ok(())
    }

    fn if_statement(
        &mut self,
        frame: &mut Frame,
        env: &mut Env,
        branches: &[(Expr, Vec<Statement>)],
        else_branch: &[Statement],
        span: Span,
    ) -> Result<(), Reported> {
        let mut taken: Vec<(Expr, Env)> = Vec::new();
        for (c, body) in branches {
            let c = self.sym(frame, env, c)?;
            match self.eval(&c, 0) {
                Some(v) if v != 0.0 => {
                    let mut e = env.clone();
                    self.block(frame, &mut e, body)?;
                    *env = self.merge(&taken, e);
                    return Ok(());
                }
                Some(_) => {}
                None => {
                    let mut e = env.clone();
                    self.block(frame, &mut e, body)?;
                    taken.push((c, e));
                }
            }
        }
        let mut e = env.clone();
        self.block(frame, &mut e, else_branch)?;
        *env = self.merge(&taken, e);
        for var in env.values() {
            let values: Vec<&Expr> = match &var.slot {
                Slot::Scalar(v) => v.iter().collect(),
                Slot::Array(items) => items.iter().flatten().collect(),
            };
            for v in values {
                self.check_size(frame, v, span)?;
            }
        }
        Ok(())
    }

    /// Reports a value beyond [`MAX_NODES`] or [`MAX_NESTING`] (a limit,
    /// so the execution can neither exhaust memory nor the stack).
    fn check_size(&mut self, frame: &Frame, value: &Expr, at: Span) -> Result<(), Reported> {
        let mut level = vec![value];
        let (mut depth, mut nodes) = (0, 0);
        while !level.is_empty() {
            depth += 1;
            nodes += level.len();
            if depth > MAX_NESTING || nodes > MAX_NODES {
                self.wants_runtime = true;
                let d = Diagnostic::error(
                    codes::TOO_LARGE,
                    format!(
                        "cannot inline `{}`: a value grows beyond {MAX_NODES} operations or \
                         {MAX_NESTING} levels of nesting",
                        frame.name
                    ),
                )
                .with_primary(at, "this value")
                .with_note("an `if` on run-time values inside a loop duplicates what follows it");
                self.error(d);
                return Err(Reported);
            }
            let mut next = Vec::new();
            for e in level {
                crate::lower::push_children(e, &mut next);
            }
            level = next;
        }
        Ok(())
    }

    /// Each variable as `if c1 then v1 elseif … else v_else` over the
    /// environments of the branches; a variable assigned in some branches
    /// only becomes unassigned.
    fn merge(&self, branches: &[(Expr, Env)], else_env: Env) -> Env {
        if branches.is_empty() {
            return else_env;
        }
        let mut out = else_env.clone();
        for (name, var) in out.iter_mut() {
            let values: Vec<&Slot> = branches.iter().map(|(_, e)| &e[name].slot).collect();
            if values.iter().all(|s| **s == var.slot) {
                continue;
            }
            let pick = |slots: &[&Slot], else_value: Option<&Expr>, k: Option<usize>| {
                let items: Option<Vec<Expr>> = slots
                    .iter()
                    .map(|s| match (s, k) {
                        (Slot::Scalar(v), None) => v.clone(),
                        (Slot::Array(v), Some(k)) => v[k].clone(),
                        _ => None,
                    })
                    .collect();
                let (items, else_value) = (items?, else_value?.clone());
                if items.iter().all(|i| *i == else_value) {
                    return Some(else_value);
                }
                let span = else_value.span;
                if let ([(c, _)], [ExprKind::Bool(true)], ExprKind::Bool(false)) = (
                    branches,
                    items.iter().map(|i| &i.kind).collect::<Vec<_>>().as_slice(),
                    &else_value.kind,
                ) {
                    // A flag set in one branch: the branch's condition.
                    return Some(c.clone());
                }
                Some(Expr {
                    kind: ExprKind::If {
                        branches: branches.iter().map(|(c, _)| c.clone()).zip(items).collect(),
                        else_value: Box::new(else_value),
                    },
                    span,
                })
            };
            var.slot = match &var.slot {
                Slot::Scalar(v) => Slot::Scalar(pick(&values, v.as_ref(), None)),
                Slot::Array(items) => Slot::Array(
                    items
                        .iter()
                        .enumerate()
                        .map(|(k, v)| pick(&values, v.as_ref(), Some(k)))
                        .collect(),
                ),
            };
        }
        out
    }

    fn for_statement(
        &mut self,
        frame: &mut Frame,
        env: &mut Env,
        var: &Ident,
        range: &Expr,
        body: &[Statement],
    ) -> Result<(), Reported> {
        let range = self.sym(frame, env, range)?;
        let values = self.loop_values(frame, &range)?;
        let shadowed = env.remove(&var.name);
        for v in values {
            self.spend(frame, range.span)?;
            env.insert(
                var.name.clone(),
                Var {
                    slot: Slot::Scalar(Some(v)),
                    causality: Causality::Input,
                    span: var.span,
                },
            );
            self.block(frame, env, body)?;
            if self.loop_done(env, var.span) {
                break;
            }
        }
        env.remove(&var.name);
        if let Some(s) = shadowed {
            env.insert(var.name.clone(), s);
        }
        Self::set_flag(env, BREAK, lit_bool(false, var.span));
        Ok(())
    }

    /// The values of the loop variable of a `for` over `range` (flat): a
    /// range of known Integers, or the elements of an array.
    fn loop_values(&mut self, frame: &Frame, range: &Expr) -> Result<Vec<Expr>, Reported> {
        const WHAT: &str = "a `for` range in a function";
        match &range.kind {
            ExprKind::Range { start, step, stop } => {
                let a = self.eval_int(start, WHAT).ok_or(Reported)?;
                let s = match step {
                    Some(s) => self.eval_int(s, WHAT).ok_or(Reported)?,
                    None => 1,
                };
                let b = self.eval_int(stop, WHAT).ok_or(Reported)?;
                if s == 0 {
                    return Err(self.fail(frame, range.span, "a `for` range with step 0"));
                }
                let n = if (s > 0 && b < a) || (s < 0 && b > a) {
                    0
                } else {
                    (b - a) / s + 1
                };
                if n > frame.budget as i64 {
                    return Err(self.fail(
                        frame,
                        range.span,
                        &format!("its loops run more than {MAX_ITERATIONS} iterations"),
                    ));
                }
                Ok((0..n)
                    .map(|k| Expr {
                        kind: ExprKind::Integer(a + k * s),
                        span: range.span,
                    })
                    .collect())
            }
            ExprKind::Array(items) => Ok(items.clone()),
            _ => Err(self.fail(
                frame,
                range.span,
                "a `for` range must be `a:b`, `a:s:b` or an array of known size",
            )),
        }
    }

    /// Whether a loop ends after this iteration: `return` or `break` set
    /// for certain.
    fn loop_done(&self, env: &Env, span: Span) -> bool {
        self.eval(&self.guard(env, span), 0)
            .is_some_and(|v| v != 0.0)
    }

    /// Counts one loop iteration; a diagnostic when the budget is spent.
    fn spend(&mut self, frame: &mut Frame, at: Span) -> Result<(), Reported> {
        if frame.budget == 0 {
            return Err(self.fail(
                frame,
                at,
                &format!("its loops run more than {MAX_ITERATIONS} iterations"),
            ));
        }
        frame.budget -= 1;
        Ok(())
    }

    fn while_statement(
        &mut self,
        frame: &mut Frame,
        env: &mut Env,
        condition: &Expr,
        body: &[Statement],
        span: Span,
    ) -> Result<(), Reported> {
        loop {
            let c = self.sym(frame, env, condition)?;
            match self.eval(&c, 0) {
                Some(0.0) => break,
                Some(_) => {}
                None => {
                    self.wants_runtime = true;
                    let d = Diagnostic::error(
                        codes::FUNCTION,
                        format!(
                            "cannot inline `{}`: the `while` loop depends on the arguments",
                            frame.name
                        ),
                    )
                    .with_primary(span, "its condition is not known at instantiation")
                    .with_secondary(condition.span, "this condition")
                    .with_note(
                        "daec inlines a call only when its `while` loops end after a number \
                         of iterations known from constants and parameters",
                    )
                    .with_help(
                        "write the result in closed form, or bound the loop by a small \
                         known range: `for i in 1:n loop if … then break; end if; … \
                         end for;` (each iteration on run-time values multiplies the \
                         size of the result)",
                    );
                    self.error(d);
                    return Err(Reported);
                }
            }
            self.spend(frame, span)?;
            self.block(frame, env, body)?;
            if self.loop_done(env, span) {
                break;
            }
        }
        Self::set_flag(env, BREAK, lit_bool(false, span));
        Ok(())
    }

    /// The flat expression of `e` in the function: its variables replaced
    /// by their values, constants by theirs, calls inlined.
    fn sym(&mut self, frame: &mut Frame, env: &Env, e: &Expr) -> Result<Expr, Reported> {
        let span = e.span;
        let kind = match &e.kind {
            ExprKind::Name(parts) => {
                if parts.len() == 1
                    && let Some(var) = env.get(&parts[0].name)
                {
                    return self.var_value(frame, var, &parts[0], span);
                }
                let renamed = self.rename(e, &frame.scope, &Loops::new());
                return match renamed.kind {
                    ExprKind::Error => Err(Reported),
                    _ => Ok(renamed),
                };
            }
            ExprKind::Index { base, indices } => {
                if let Some(element) = self.element_value(frame, env, base, indices)? {
                    return Ok(element);
                }
                let base = self.sym(frame, env, base)?;
                let indices = indices
                    .iter()
                    .map(|i| self.sym(frame, env, i))
                    .collect::<Result<Vec<_>, _>>()?;
                if let (ExprKind::Array(items), [i]) = (&base.kind, indices.as_slice())
                    && let Some(k) = self.eval(i, 0)
                    && k >= 1.0
                    && k <= items.len() as f64
                    && k.fract() == 0.0
                {
                    return Ok(items[k as usize - 1].clone());
                }
                ExprKind::Index {
                    base: Box::new(base),
                    indices,
                }
            }
            ExprKind::Call {
                func,
                args,
                named_args,
            } => {
                if let Some(n) = self.size_of(frame, env, func, args)? {
                    return Ok(n);
                }
                let (args, named_args) = Self::map_args(self, args, named_args, &mut |this, a| {
                    this.sym(frame, env, a)
                })?;
                return self.call_of(func, args, named_args, span, &frame.scope);
            }
            ExprKind::Binary { .. }
            | ExprKind::Unary { .. }
            | ExprKind::If { .. }
            | ExprKind::Range { .. } => {
                Self::map_operands(self, &e.kind, &mut |this, a| this.sym(frame, env, a))?
            }
            ExprKind::Array(items) => ExprKind::Array(
                items
                    .iter()
                    .map(|i| self.sym(frame, env, i))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            ExprKind::Error => return Err(Reported),
            ExprKind::Member { .. } | ExprKind::Tuple(_) | ExprKind::Matrix(_) => {
                return Err(self.fail(
                    frame,
                    span,
                    "this expression is not supported in a function",
                ));
            }
            other => other.clone(),
        };
        Ok(fold(Expr { kind, span }, self))
    }

    /// `args` and `named` mapped by `map`.
    pub(super) fn map_args(
        &mut self,
        args: &[Expr],
        named: &[(Ident, Expr)],
        map: &mut dyn FnMut(&mut Self, &Expr) -> Result<Expr, Reported>,
    ) -> Result<(Vec<Expr>, NamedArgs), Reported> {
        let args = args
            .iter()
            .map(|a| map(self, a))
            .collect::<Result<Vec<_>, _>>()?;
        let named = named
            .iter()
            .map(|(n, a)| Ok((n.clone(), map(self, a)?)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok((args, named))
    }

    /// The call of `func` on `args` and `named_args` (flat): the outputs
    /// of a function (inlined, or called at run time), or the call of a
    /// built-in.
    pub(super) fn call_of(
        &mut self,
        func: &[Ident],
        args: Vec<Expr>,
        named_args: Vec<(Ident, Expr)>,
        span: Span,
        scope: &Scope,
    ) -> Result<Expr, Reported> {
        if let Some(e) = self.enumeration_call(func, &args, named_args.len(), scope) {
            return Ok(e);
        }
        match self.function_call(func, &args, &named_args, span, scope) {
            Some(Expr {
                kind: ExprKind::Error,
                ..
            }) => Err(Reported),
            Some(c) => Ok(c),
            None => Ok(Expr {
                kind: ExprKind::Call {
                    func: func.to_vec(),
                    args,
                    named_args,
                },
                span,
            }),
        }
    }

    /// An operator, if-expression or range with its operands mapped by
    /// `map` (any other expression is returned as it is).
    pub(super) fn map_operands(
        &mut self,
        e: &ExprKind,
        map: &mut dyn FnMut(&mut Self, &Expr) -> Result<Expr, Reported>,
    ) -> Result<ExprKind, Reported> {
        let mut boxed = |this: &mut Self, x: &Expr| map(this, x).map(Box::new);
        Ok(match e {
            ExprKind::Binary { op, lhs, rhs } => ExprKind::Binary {
                op: *op,
                lhs: boxed(self, lhs)?,
                rhs: boxed(self, rhs)?,
            },
            ExprKind::Unary { op, expr } => ExprKind::Unary {
                op: *op,
                expr: boxed(self, expr)?,
            },
            ExprKind::If {
                branches,
                else_value,
            } => ExprKind::If {
                branches: branches
                    .iter()
                    .map(|(c, v)| Ok((*boxed(self, c)?, *boxed(self, v)?)))
                    .collect::<Result<Vec<_>, _>>()?,
                else_value: boxed(self, else_value)?,
            },
            ExprKind::Range { start, step, stop } => ExprKind::Range {
                start: boxed(self, start)?,
                step: match step {
                    Some(s) => Some(boxed(self, s)?),
                    None => None,
                },
                stop: boxed(self, stop)?,
            },
            other => other.clone(),
        })
    }

    /// `size(a)` or `size(a, 1)` of a one-dimensional array: a local
    /// array, an array literal or a flat array variable of the model.
    fn size_of(
        &mut self,
        frame: &mut Frame,
        env: &Env,
        func: &[Ident],
        args: &[Expr],
    ) -> Result<Option<Expr>, Reported> {
        let ([f], Some(a)) = (func, args.first()) else {
            return Ok(None);
        };
        if f.name != "size" || args.len() > 2 {
            return Ok(None);
        }
        if let Some(k) = args.get(1) {
            let k = self.sym(frame, env, k)?;
            if self.eval(&k, 0) != Some(1.0) {
                return Ok(None);
            }
        }
        let n = match &a.kind {
            ExprKind::Name(parts) if parts.len() == 1 && env.contains_key(&parts[0].name) => {
                match &env[&parts[0].name].slot {
                    Slot::Array(items) => Some(items.len() as i64),
                    Slot::Scalar(_) => {
                        let value = self.sym(frame, env, a)?;
                        self.length(&value)
                    }
                }
            }
            _ => {
                let value = self.sym(frame, env, a)?;
                self.length(&value)
            }
        };
        let Some(n) = n else {
            return Ok(None);
        };
        let span = a.span;
        let n = Expr {
            kind: ExprKind::Integer(n),
            span,
        };
        Ok(Some(if args.len() == 2 {
            n
        } else {
            Expr {
                kind: ExprKind::Array(vec![n]),
                span,
            }
        }))
    }

    /// The length of the one-dimensional array `e` (flat), if known: an
    /// array literal, or a variable of the model declared with one
    /// dimension.
    fn length(&self, e: &Expr) -> Option<i64> {
        match &e.kind {
            ExprKind::Array(items) => Some(items.len() as i64),
            ExprKind::Name(parts) if parts.len() == 1 => {
                let decl = self.decls.iter().find(|d| d.name.name == parts[0].name)?;
                match decl.dims.as_slice() {
                    [d] => self.eval(d, 0).map(|v| v as i64),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The value of the variable `var` used at `name`.
    /// `a[k]` of a local array `a` with a subscript `k` known at
    /// instantiation: the element's value, assigned or not of the others
    /// (`p[k] := p[k - 1]*x` in a loop that fills `p`). `None`: not such
    /// an element.
    fn element_value(
        &mut self,
        frame: &mut Frame,
        env: &Env,
        base: &Expr,
        indices: &[Expr],
    ) -> Result<Option<Expr>, Reported> {
        let (ExprKind::Name(parts), [i]) = (&base.kind, indices) else {
            return Ok(None);
        };
        let [id] = parts.as_slice() else {
            return Ok(None);
        };
        let Some(Var {
            slot: Slot::Array(items),
            span: declared,
            ..
        }) = env.get(&id.name)
        else {
            return Ok(None);
        };
        let (items, declared) = (items.clone(), *declared);
        let i = self.sym(frame, env, i)?;
        let Some(k) = self.eval(&i, 0) else {
            return Ok(None);
        };
        if k.fract() != 0.0 || k < 1.0 || k > items.len() as f64 {
            return Ok(None);
        }
        match &items[k as usize - 1] {
            Some(e) => Ok(Some(e.clone())),
            None => {
                let d = Diagnostic::error(
                    codes::FUNCTION,
                    format!(
                        "`{}[{k}]` is used in `{}` before it is assigned",
                        id.name, frame.name
                    ),
                )
                .with_primary(base.span.to(i.span), "not assigned yet")
                .with_secondary(declared, "declared here");
                self.error(d);
                Err(Reported)
            }
        }
    }

    fn var_value(
        &mut self,
        frame: &Frame,
        var: &Var,
        name: &Ident,
        span: Span,
    ) -> Result<Expr, Reported> {
        let value = match &var.slot {
            Slot::Scalar(v) => v.clone(),
            Slot::Array(items) => items
                .iter()
                .cloned()
                .collect::<Option<Vec<_>>>()
                .map(|items| Expr {
                    kind: ExprKind::Array(items),
                    span,
                }),
        };
        value.ok_or_else(|| {
            let d = Diagnostic::error(
                codes::FUNCTION,
                format!(
                    "`{}` is used in `{}` before it is assigned",
                    name.name, frame.name
                ),
            )
            .with_primary(span, "not assigned on every path to here")
            .with_secondary(var.span, "declared here");
            self.error(d);
            Reported
        })
    }
}

/// The built-in a `Modelica.Math.name` call means, if it is one.
fn math_builtin(func: &[Ident]) -> Option<&'static str> {
    match func {
        [m, math, f] if m.name == "Modelica" && math.name == "Math" => {
            MATH_BUILTINS.iter().copied().find(|b| *b == f.name)
        }
        _ => None,
    }
}

/// `base[i]`.
fn index(base: Expr, i: i64, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Index {
            base: Box::new(base),
            indices: vec![Expr {
                kind: ExprKind::Integer(i),
                span,
            }],
        },
        span,
    }
}

/// `a or b`, folded when either is a literal.
fn or(a: Expr, b: Expr, span: Span) -> Expr {
    match (&a.kind, &b.kind) {
        (ExprKind::Bool(false), _) => b,
        (_, ExprKind::Bool(false)) => a,
        (ExprKind::Bool(true), _) | (_, ExprKind::Bool(true)) => lit_bool(true, span),
        _ => Expr {
            kind: ExprKind::Binary {
                op: BinOp::Or,
                lhs: Box::new(a),
                rhs: Box::new(b),
            },
            span,
        },
    }
}

/// `e` as a literal when it has a known value of literals only (so that
/// loop counters and flags stay small), else `e`.
fn fold(e: Expr, inst: &Inst<'_>) -> Expr {
    if !literal_only(&e) {
        return e;
    }
    let Some(v) = inst.eval(&e, 0) else {
        return e;
    };
    let kind = match &e.kind {
        ExprKind::Binary {
            op:
                BinOp::Lt
                | BinOp::Le
                | BinOp::Gt
                | BinOp::Ge
                | BinOp::Eq
                | BinOp::Ne
                | BinOp::And
                | BinOp::Or,
            ..
        }
        | ExprKind::Unary { op: UnOp::Not, .. } => ExprKind::Bool(v != 0.0),
        _ if is_integer(&e) && v.fract() == 0.0 && v.abs() < 1e15 => ExprKind::Integer(v as i64),
        _ if v.is_finite() => ExprKind::Real(v),
        _ => return e,
    };
    Expr { kind, span: e.span }
}

/// Whether `e` holds only literals, operators and if-expressions.
fn literal_only(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Integer(_) | ExprKind::Real(_) | ExprKind::Bool(_) => true,
        ExprKind::Binary { lhs, rhs, .. } => literal_only(lhs) && literal_only(rhs),
        ExprKind::Unary { expr, .. } => literal_only(expr),
        _ => false,
    }
}

/// Whether the literal expression `e` has an Integer value (MLS 3.6,
/// §10.6.7: `/` gives a Real).
fn is_integer(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Integer(_) => true,
        ExprKind::Binary { op, lhs, rhs } => {
            matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul) && is_integer(lhs) && is_integer(rhs)
        }
        ExprKind::Unary { op, expr } => *op != UnOp::Not && is_integer(expr),
        _ => false,
    }
}
