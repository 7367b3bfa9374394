//! AST → flat scalar DAE.
//!
//! This module holds the entry point [`lower`], its options, and the
//! lowering context `Lowerer` with the value type `Val`; the context's
//! methods live in the submodules, one per part of the model they lower:
//! `parameters`, `declarations`, `experiment`, `equations`, `invariants`
//! (the `__daec(invariant = true)` annotation), `expressions`, `names`,
//! `calls`, and `limits` (the size checks).

mod calls;
mod chains;
mod declarations;
mod discrete;
mod equations;
mod experiment;
mod expressions;
mod functions;
mod invariants;
mod limits;
mod names;
mod parameters;

pub(crate) use parameters::{push_children, push_children_mut};

use std::sync::Arc;

use crate::budget::MemoryBudget;
use crate::{
    Assertion, BaseType, Dae, Defined, Discrete, Equation, Event, Experiment, Parameter,
    SourceSpans, Unknown,
};
use daec_diag::{Diagnostic, Span, SpanRuns};
use daec_expr::{ExprId, ExprPool, ParamId};
use daec_syntax::ast;
use rustc_hash::FxHashMap;

/// Options of [`lower`].
#[derive(Clone, Debug)]
pub struct LowerOptions {
    /// `-p NAME=VALUE` overrides: the parameter's binding is replaced by the
    /// value. Names are scalar parameters (`m`) or elements (`k[2]`).
    pub overrides: Vec<(String, f64)>,
    /// The largest number of scalar unknowns, parameters and equations
    /// lowering will create before reporting the model as too large.
    pub max_scalars: usize,
    /// The memory the model may take (`None`: only the fixed limits); a
    /// model whose estimate exceeds it is reported before it is expanded.
    pub memory: Option<MemoryBudget>,
}

impl Default for LowerOptions {
    fn default() -> Self {
        LowerOptions {
            overrides: Vec::new(),
            max_scalars: 50_000_000,
            memory: None,
        }
    }
}

impl LowerOptions {
    /// The most scalars lowering creates: [`Self::max_scalars`], or fewer
    /// when the memory budget allows fewer.
    fn scalar_limit(&self) -> usize {
        let by_memory = self.memory.map_or(usize::MAX, |m| m.max_scalars());
        self.max_scalars.min(by_memory)
    }
}

/// Lowers a parsed model. Returns the flat DAE when there is no error, and
/// every diagnostic (errors and warnings) found.
pub fn lower(model: &ast::Model, options: &LowerOptions) -> (Option<Dae>, Vec<Diagnostic>) {
    let reduced = crate::aliases::eliminate(model);
    let (model, aliases) = match &reduced {
        Some((m, a)) => (m, a.clone()),
        None => (model, Vec::new()),
    };
    let mut l = Lowerer::new(model, options);
    l.run();
    let has_error = l.diags.iter().any(Diagnostic::is_error);
    let diags = std::mem::take(&mut l.diags);
    if has_error {
        (None, diags)
    } else {
        let mut dae = l.finish();
        dae.aliases = aliases;
        (Some(dae), diags)
    }
}

/// A diagnostic has been pushed; the caller gives up on this part.
#[derive(Debug)]
struct Reported;

type R<T> = Result<T, Reported>;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum SymKind {
    Unknown,
    Parameter,
    Constant,
    /// A discrete-time variable (the `discrete` module).
    Discrete,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum EvalState {
    Todo,
    InProgress,
    Done,
    Failed,
}

struct Symbol {
    decl: usize,
    kind: SymKind,
    ty: BaseType,
    dims: Vec<usize>,
    /// First scalar index in `unknowns` or `parameters`.
    first: usize,
    state: EvalState,
}

/// How to build element `k` of a declared array.
#[derive(Copy, Clone, Debug)]
enum Access {
    /// Unknown `first + k`.
    Unknown(usize),
    /// Symbolic parameter `first + k`.
    Param(usize),
    /// Folded value of parameter `first + k`.
    Value(usize),
}

/// Lowering mode: in `Const` mode everything must evaluate to a constant
/// (array sizes, loop ranges, parameter values, start values).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Mode {
    Const,
    Equation,
}

/// A lowered value: a scalar or an array (row-major) of pool expressions.
#[derive(Clone, Debug)]
enum Val {
    Scalar(BaseType, ExprId),
    Array(BaseType, Vec<usize>, Vec<ExprId>),
}

impl Val {
    fn ty(&self) -> BaseType {
        match self {
            Val::Scalar(t, _) | Val::Array(t, _, _) => *t,
        }
    }
    fn shape(&self) -> &[usize] {
        match self {
            Val::Scalar(..) => &[],
            Val::Array(_, s, _) => s,
        }
    }
    fn elems(&self) -> &[ExprId] {
        match self {
            Val::Scalar(_, e) => std::slice::from_ref(e),
            Val::Array(_, _, e) => e,
        }
    }
    fn from_parts(ty: BaseType, shape: Vec<usize>, elems: Vec<ExprId>) -> Val {
        if shape.is_empty() {
            Val::Scalar(ty, elems[0])
        } else {
            Val::Array(ty, shape, elems)
        }
    }
}

fn shape_text(shape: &[usize]) -> String {
    if shape.is_empty() {
        "a scalar".to_string()
    } else {
        let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
        format!("an array of size [{}]", dims.join(", "))
    }
}

/// "a Real", "an Integer", "a Boolean".
fn article(t: BaseType) -> &'static str {
    match t {
        BaseType::Real => "a Real",
        BaseType::Integer => "an Integer",
        BaseType::Boolean => "a Boolean",
    }
}

fn ty_name(t: BaseType) -> &'static str {
    match t {
        BaseType::Real => "Real",
        BaseType::Integer => "Integer",
        BaseType::Boolean => "Boolean",
    }
}

struct Lowerer<'a> {
    model: &'a ast::Model,
    options: &'a LowerOptions,
    diags: Vec<Diagnostic>,
    pool: ExprPool,
    symbols: Vec<Symbol>,
    by_name: FxHashMap<&'a str, usize>,
    unknowns: Vec<Unknown>,
    parameters: Vec<Parameter>,
    /// Value of each scalar parameter once evaluated.
    param_values: Vec<f64>,
    overrides: FxHashMap<String, f64>,
    loop_vars: Vec<(&'a str, i64)>,
    /// Parameter symbols being evaluated (for cycle reports).
    eval_stack: Vec<usize>,
    equations: Vec<Equation>,
    initial_equations: Vec<Equation>,
    invariants: Vec<Equation>,
    events: Vec<Event>,
    /// The discrete-time variables created so far.
    discrete: Vec<Discrete>,
    /// The discrete variables defined outside `when`, with their
    /// definitions ([`Lowerer::lower_definitions`]).
    defined: Vec<Defined>,
    /// Names of the `Real` variables assigned in a `when` clause (discrete
    /// by MLS 3.6 §3.8.3).
    when_assigned: rustc_hash::FxHashSet<String>,
    /// The candidate definitions of discrete variables by equations
    /// outside `when` (`discrete::definitions`).
    definitions: FxHashMap<&'a str, (&'a ast::Expr, Span)>,
    /// Per discrete parameter, the `when` statement that assigns it (its
    /// first event) and where.
    assigned_by: FxHashMap<u32, (u32, Span)>,
    /// Discrete symbols whose binding is being inlined (cycle guard).
    defining: Vec<usize>,
    /// The parameter of `initial()`, once used.
    initial: Option<u32>,
    /// The parameter of `terminal()`, once used.
    terminal: Option<u32>,
    /// The `assert(…)` equations.
    asserts: Vec<Assertion>,
    /// Whether a `when` condition that is a `sample` call (or a vector) is
    /// being lowered, and the assignments its `sample`s add to the branch.
    in_when_condition: bool,
    sample_assigns: Vec<(u32, ExprId)>,
    /// The other `sample` calls, by span: the value of
    /// each (`time >= $sample<k>`, advanced by an event of its own), so
    /// that a definition inlined at several uses makes one event.
    free_samples: FxHashMap<Span, ExprId>,
    /// While a `when` statement is lowered: the `when`s of the samples in
    /// its conditions that advance on their own, pushed after it.
    deferred_samples: Option<Vec<discrete::FreeSample>>,
    spans: SourceSpans,
    /// The pool's function of each run-time function of the model, by
    /// its index in [`ast::Model::functions`].
    function_ids: FxHashMap<usize, daec_expr::FuncId>,
    /// The name of each function added to the pool.
    function_names: Vec<String>,
    experiment: Experiment,
    in_when: bool,
    /// Depth of `noEvent(…)` calls around the expression being lowered:
    /// relations built inside one are wrapped in `Func::NoEvent` (evaluated
    /// continuously, no state event).
    no_event: u32,
    /// Current expression nesting depth (bounded by [`MAX_DEPTH`]).
    depth: usize,
    scalar_count: usize,
    too_large_reported: bool,
    /// The `for` loops being expanded: span and number of iterations.
    loops: Vec<(Span, usize)>,
    /// The description strings given to the flat DAE so far, so that the
    /// scalar equations of one source equation (a `for` loop's, an array
    /// equation's) share one copy of its description.
    texts: FxHashMap<&'a str, Arc<str>>,
}

/// Deepest expression nesting lowering accepts (the lowering recurses over
/// the AST; the driver runs it on a thread with a large stack).
const MAX_DEPTH: usize = 20_000;

impl<'a> Lowerer<'a> {
    fn new(model: &'a ast::Model, options: &'a LowerOptions) -> Self {
        Lowerer {
            model,
            options,
            diags: Vec::new(),
            pool: ExprPool::compact(),
            symbols: Vec::new(),
            by_name: FxHashMap::default(),
            unknowns: Vec::new(),
            parameters: Vec::new(),
            param_values: Vec::new(),
            overrides: options.overrides.iter().cloned().collect(),
            loop_vars: Vec::new(),
            eval_stack: Vec::new(),
            equations: Vec::new(),
            initial_equations: Vec::new(),
            invariants: Vec::new(),
            events: Vec::new(),
            discrete: Vec::new(),
            defined: Vec::new(),
            when_assigned: discrete::when_assigned(model),
            definitions: discrete::definitions(model),
            assigned_by: FxHashMap::default(),
            defining: Vec::new(),
            initial: None,
            terminal: None,
            asserts: Vec::new(),
            in_when_condition: false,
            sample_assigns: Vec::new(),
            free_samples: FxHashMap::default(),
            deferred_samples: None,
            spans: SourceSpans::default(),
            function_ids: FxHashMap::default(),
            function_names: Vec::new(),
            experiment: Experiment::default(),
            in_when: false,
            no_event: 0,
            depth: 0,
            scalar_count: 0,
            too_large_reported: false,
            loops: Vec::new(),
            texts: FxHashMap::default(),
        }
    }

    /// `text` as a shared string: one allocation per distinct text of the
    /// model, however many scalars carry it.
    fn shared_text(&mut self, text: &'a str) -> Arc<str> {
        self.texts
            .entry(text)
            .or_insert_with(|| Arc::from(text))
            .clone()
    }

    /// The value of a constant expression: folded by the pool, or evaluated
    /// when it has no leaves (e.g. `1/6`, which the pool keeps exact).
    fn const_value(&self, e: ExprId) -> Option<f64> {
        if let Some(v) = self.pool.as_constant(e) {
            return Some(v);
        }
        if self.pool.leaves(e).is_empty() {
            return Some(self.pool.eval(e, &NoLeaves));
        }
        None
    }

    fn error(&mut self, d: Diagnostic) -> Reported {
        self.diags.push(d);
        Reported
    }

    fn finish(self) -> Dae {
        Dae {
            name: self.model.name.name.clone(),
            description: self.model.description.clone(),
            pool: self.pool,
            unknowns: self.unknowns,
            parameters: self.parameters,
            equations: self.equations,
            initial_equations: self.initial_equations,
            invariants: self.invariants,
            events: self.events,
            discrete: self.discrete,
            defined: self.defined,
            initial: self.initial,
            terminal: self.terminal,
            asserts: self.asserts,
            experiment: self.experiment,
            spans: self.spans,
            aliases: Vec::new(),
            functions: self.function_names,
        }
    }

    fn run(&mut self) {
        self.check_overrides();
        self.declare_symbols();
        // Parameters first (in dependency order), then sizes of unknowns,
        // then attributes, then equations.
        for s in self.parameter_order() {
            let _ = self.evaluate_parameter(s);
        }
        self.create_unknowns();
        self.experiment();
        if self.diags.iter().any(Diagnostic::is_error) {
            return;
        }
        self.unknown_attributes();
        // The values computed so far (sizes, parameter values, the
        // attributes of unknowns) left constants in the pool, and no
        // expression refers to them: the equations start from an empty
        // pool, so that models lowered with other `Real` parameter values
        // have the same pool when their equations are the same
        // (`Dae::same_structure`, which a parameter study relies on).
        self.pool = ExprPool::compact();
        self.function_ids.clear();
        self.function_names.clear();
        self.spans.functions.clear();
        self.binding_equations();
        for section in &self.model.sections {
            let mut out = Vec::new();
            let mut spans = SpanRuns::new();
            for eq in &section.equations {
                let _ = self.equation(eq, section.initial, &mut out, &mut spans);
            }
            // (Moved rather than copied when nothing precedes them.)
            let (eqs, eq_spans) = if section.initial {
                (
                    &mut self.initial_equations,
                    &mut self.spans.initial_equations,
                )
            } else {
                (&mut self.equations, &mut self.spans.equations)
            };
            if eqs.is_empty() && eq_spans.is_empty() {
                *eqs = out;
                *eq_spans = spans;
            } else {
                eqs.extend(out);
                eq_spans.append(&spans);
            }
        }
        if !self.diags.iter().any(Diagnostic::is_error) {
            self.check_counts();
            self.check_discrete_assignments();
            self.lower_definitions();
        }
    }
}

/// An environment for expressions without leaves.
struct NoLeaves;

impl daec_expr::Env for NoLeaves {
    fn var(&self, _: u32, _: u32) -> f64 {
        f64::NAN
    }
    fn param(&self, _: ParamId) -> f64 {
        f64::NAN
    }
    fn time(&self) -> f64 {
        f64::NAN
    }
}

/// A declaration's type name as `.dae` source (each part quoted as needed).
fn type_source(t: &ast::TypeName) -> String {
    let parts: Vec<_> = t
        .parts
        .iter()
        .map(|p| daec_syntax::lexer::ident_source(p))
        .collect();
    parts.join(".")
}

/// Row-major flat position → 1-based subscripts.
pub(crate) fn unravel(mut i: usize, dims: &[usize]) -> Vec<usize> {
    let mut subs = vec![0; dims.len()];
    for k in (0..dims.len()).rev() {
        let d = dims[k].max(1);
        subs[k] = i % d + 1;
        i /= d;
    }
    subs
}

/// `[1,2]` for subscripts, "" for scalars.
fn subscript_text(subs: &[usize]) -> String {
    let mut out = String::new();
    push_subscripts(&mut out, subs);
    out
}

/// Appends `[i,j,…]` (nothing for a scalar) to `out`.
pub(crate) fn push_subscripts(out: &mut String, subs: &[usize]) {
    for (k, &s) in subs.iter().enumerate() {
        out.push(if k == 0 { '[' } else { ',' });
        push_decimal(out, s);
    }
    if !subs.is_empty() {
        out.push(']');
    }
}

/// Appends the decimal digits of `n` (the text of `format!("{n}")`,
/// without the formatting machinery: names are rendered per element).
pub(crate) fn push_decimal(out: &mut String, mut n: usize) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[start..] {
        out.push(char::from(d));
    }
}

/// `a == b` for shapes, without a `memcmp` call for the common scalar case.
fn same_shape(a: &[usize], b: &[usize]) -> bool {
    a.len() == b.len() && (a.is_empty() || a == b)
}
