//! AST → flat scalar DAE.

use crate::budget::{MAX_NODES, MemoryBudget, bytes_text, elements};
use crate::suggest::did_you_mean;
use crate::{BaseType, Dae, Equation, Event, Experiment, Parameter, SourceSpans, Unknown};
use daec_diag::{Diagnostic, Span, codes};
use daec_expr::{CmpOp, ExprId, ExprPool, Func, Func2, Leaf, ParamId};
use daec_syntax::ast::{
    self, BinOp, Causality, Declaration, EquationKind, ExprKind, Modifier, UnOp, Variability,
};
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
    let mut l = Lowerer::new(model, options);
    l.run();
    let has_error = l.diags.iter().any(Diagnostic::is_error);
    let diags = std::mem::take(&mut l.diags);
    if has_error {
        (None, diags)
    } else {
        (Some(l.finish()), diags)
    }
}

/// The value of an attribute modifier ([`Lowerer::attribute`]).
enum Attr {
    /// `unit`, `displayUnit`, `quantity`.
    Text(String),
    /// One value per element (`fixed` as 0/1).
    Values(Vec<f64>),
}

/// The attributes of one parameter element while it is lowered.
#[derive(Clone, Debug, Default)]
struct ParameterAttributes {
    start: Option<f64>,
    fixed: Option<bool>,
    nominal: Option<f64>,
    min: Option<f64>,
    max: Option<f64>,
    unit: Option<String>,
    display_unit: Option<String>,
    quantity: Option<String>,
}

/// The warning for `value` (described by `what`, e.g. "start value 2 of
/// `x`") outside `[min, max]`, pointing at `span`.
fn bounds_warning(
    what: &str,
    value: f64,
    min: Option<f64>,
    max: Option<f64>,
    span: Span,
) -> Option<Diagnostic> {
    let (bound, limit) = match (min, max) {
        (Some(m), _) if value < m => ("min", m),
        (_, Some(m)) if value > m => ("max", m),
        _ => return None,
    };
    Some(
        Diagnostic::warning(codes::BOUNDS, format!("{what} violates {bound} = {limit}"))
            .with_primary(span, "declared here"),
    )
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
    events: Vec<Event>,
    spans: SourceSpans,
    experiment: Experiment,
    in_when: bool,
    /// Current expression nesting depth (bounded by [`MAX_DEPTH`]).
    depth: usize,
    scalar_count: usize,
    too_large_reported: bool,
    /// The `for` loops being expanded: span and number of iterations.
    loops: Vec<(Span, usize)>,
}

/// Deepest expression nesting lowering accepts (the lowering recurses over
/// the AST; the driver runs it on a thread with a large stack).
const MAX_DEPTH: usize = 20_000;

const FUNCS1: &[(&str, Func)] = &[
    ("sin", Func::Sin),
    ("cos", Func::Cos),
    ("tan", Func::Tan),
    ("asin", Func::Asin),
    ("acos", Func::Acos),
    ("atan", Func::Atan),
    ("sinh", Func::Sinh),
    ("cosh", Func::Cosh),
    ("tanh", Func::Tanh),
    ("exp", Func::Exp),
    ("log", Func::Log),
    ("log10", Func::Log10),
    ("sqrt", Func::Sqrt),
    ("abs", Func::Abs),
    ("sign", Func::Sign),
    ("floor", Func::Floor),
    ("ceil", Func::Ceil),
];

const FUNCS2: &[(&str, Func2)] = &[
    ("atan2", Func2::Atan2),
    ("min", Func2::Min),
    ("max", Func2::Max),
];

/// Every function name the language knows (for suggestions).
const ALL_FUNCS: &[&str] = &[
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp", "log", "log10",
    "sqrt", "abs", "sign", "floor", "ceil", "atan2", "min", "max", "der", "sum", "size", "noEvent",
    "smooth", "reinit",
];

const UNKNOWN_ATTRS: &[&str] = &[
    "start",
    "fixed",
    "nominal",
    "min",
    "max",
    "unit",
    "displayUnit",
    "quantity",
    "stateSelect",
];

impl<'a> Lowerer<'a> {
    fn new(model: &'a ast::Model, options: &'a LowerOptions) -> Self {
        Lowerer {
            model,
            options,
            diags: Vec::new(),
            pool: ExprPool::new(),
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
            events: Vec::new(),
            spans: SourceSpans::default(),
            experiment: Experiment::default(),
            in_when: false,
            depth: 0,
            scalar_count: 0,
            too_large_reported: false,
            loops: Vec::new(),
        }
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
            events: self.events,
            experiment: self.experiment,
            spans: self.spans,
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
        self.binding_equations();
        for section in &self.model.sections {
            let mut out = Vec::new();
            let mut spans = Vec::new();
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
                eq_spans.extend(spans);
            }
        }
        if !self.diags.iter().any(Diagnostic::is_error) {
            self.check_counts();
        }
    }

    fn check_overrides(&mut self) {
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

    fn declare_symbols(&mut self) {
        let model = self.model;
        for (i, d) in model.declarations.iter().enumerate() {
            let name = d.name.name.as_str();
            if let Some(&prev) = self.by_name.get(name) {
                let prev_span = model.declarations[self.symbols[prev].decl].name.span;
                self.diags.push(
                    Diagnostic::error(codes::DUPLICATE, format!("`{name}` is declared twice"))
                        .with_primary(d.name.span, "declared again here")
                        .with_secondary(prev_span, "first declared here"),
                );
                continue;
            }
            if name == "time" {
                self.diags.push(
                    Diagnostic::error(
                        codes::DUPLICATE,
                        "`time` is a built-in name and cannot be declared",
                    )
                    .with_primary(d.name.span, "rename this"),
                );
                continue;
            }
            let Some(ty) = self.base_type(d) else {
                continue;
            };
            let kind = match d.variability {
                Variability::Parameter => SymKind::Parameter,
                Variability::Constant => SymKind::Constant,
                Variability::Discrete => {
                    self.diags.push(
                        Diagnostic::error(
                            codes::UNSUPPORTED,
                            "`discrete` variables are not supported by daec",
                        )
                        .with_primary(d.span, "discrete declaration")
                        .with_help(
                            "use a `parameter`, or a continuous `Real` with `when … reinit`",
                        ),
                    );
                    continue;
                }
                Variability::Continuous => {
                    if ty != BaseType::Real {
                        self.diags.push(
                            Diagnostic::error(
                                codes::UNSUPPORTED,
                                format!("{} unknowns are not supported by daec", ty_name(ty)),
                            )
                            .with_primary(d.type_name.span, "only `Real` unknowns are supported")
                            .with_help(format!(
                                "declare it `parameter {}` or make it `Real`",
                                ty_name(ty)
                            )),
                        );
                        continue;
                    }
                    if d.causality == Causality::Input && d.binding.is_none() {
                        self.diags.push(
                            Diagnostic::error(codes::INPUT, format!("input `{name}` has no binding"))
                                .with_primary(d.span, "an input needs a value")
                                .with_note("daec models have no external inputs")
                                .with_help(format!("write the input as a function of time: `input Real {name} = sin(time);`")),
                        );
                        continue;
                    }
                    SymKind::Unknown
                }
            };
            self.by_name.insert(name, self.symbols.len());
            self.symbols.push(Symbol {
                decl: i,
                kind,
                ty,
                dims: Vec::new(),
                first: 0,
                state: EvalState::Todo,
            });
        }
    }

    fn base_type(&mut self, d: &Declaration) -> Option<BaseType> {
        let parts = &d.type_name.parts;
        let t = match parts
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice()
        {
            ["Real"] => BaseType::Real,
            ["Integer"] => BaseType::Integer,
            ["Boolean"] => BaseType::Boolean,
            ["Modelica", ..] | ["SI", ..] | ["SIunits", ..] => BaseType::Real,
            _ => {
                let name = d.type_name.dotted();
                let mut diag = Diagnostic::error(codes::UNSUPPORTED, format!("unknown type `{name}`"))
                    .with_primary(d.type_name.span, "not a type daec knows")
                    .with_note("daec reads `Real`, `Integer`, `Boolean` and the Modelica SI types (`Modelica.Units.SI.*`, read as `Real`)");
                if let Some(s) = did_you_mean(&name, ["Real", "Integer", "Boolean"]) {
                    diag = diag.with_help(format!("did you mean `{s}`?"));
                }
                self.diags.push(diag);
                return None;
            }
        };
        Some(t)
    }

    fn decl(&self, s: usize) -> &'a Declaration {
        &self.model.declarations[self.symbols[s].decl]
    }

    /// Evaluates the dimensions of symbol `s` (Const mode).
    fn evaluate_dims(&mut self, s: usize) -> R<Vec<usize>> {
        let d = self.decl(s);
        let mut dims = Vec::with_capacity(d.dims.len());
        for e in &d.dims {
            let n = self.const_int(e)?;
            if n < 0 {
                return Err(self.error(
                    Diagnostic::error(codes::SHAPE, format!("array size {n} is negative"))
                        .with_primary(e.span, "must be ≥ 0"),
                ));
            }
            dims.push(n as usize);
        }
        Ok(dims)
    }

    /// Reports (once) that expanding the part at `span` makes the model
    /// too large, with the counts so far, the budget or the limits, and
    /// the `for` loops being expanded.
    fn too_large(&mut self, span: Span) -> Reported {
        if self.too_large_reported {
            return Reported;
        }
        self.too_large_reported = true;
        let (scalars, nodes) = (self.scalar_count, self.pool.len());
        let mut d = Diagnostic::error(
            codes::TOO_LARGE,
            format!(
                "the model is too large: expanding it gives {scalars} scalar unknowns, parameters and equations and {nodes} expression nodes"
            ),
        )
        .with_primary(span, "expanding this exceeds the limit");
        for &(sp, n) in self.loops.iter().rev() {
            d = d.with_secondary(sp, format!("in this loop of {n} iterations"));
        }
        d = d.with_note(self.limit_note(scalars, nodes, false));
        self.diags.push(self.with_overrides(d));
        Reported
    }

    /// What `scalars` scalars and `nodes` nodes exceed: the fixed limits,
    /// else the memory budget; `whole` when they are the whole model's
    /// (then the note gives the estimate), not the count so far.
    fn limit_note(&self, scalars: usize, nodes: usize, whole: bool) -> String {
        let fixed = format!(
            "daec expands at most {} scalar unknowns, parameters and equations and {MAX_NODES} expression nodes",
            self.options.max_scalars
        );
        let Some(m) = self.options.memory else {
            return fixed;
        };
        if scalars > self.options.max_scalars || nodes > MAX_NODES {
            return fixed;
        }
        let per = format!(
            "estimated at {} per scalar unknown with its equation",
            bytes_text(m.bytes_per_unknown)
        );
        if whole {
            format!(
                "this needs about {} of memory, more than the {} available ({per})",
                bytes_text(m.estimate(scalars, nodes)),
                bytes_text(m.available)
            )
        } else {
            format!(
                "this needs more than the {} of memory available ({per})",
                bytes_text(m.available)
            )
        }
    }

    /// `d` with a note naming the `-p` overrides, which may be what made
    /// the model large.
    fn with_overrides(&self, d: Diagnostic) -> Diagnostic {
        if self.options.overrides.is_empty() {
            return d;
        }
        let list: Vec<String> = self
            .options
            .overrides
            .iter()
            .map(|(n, v)| format!("-p {n}={v}"))
            .collect();
        d.with_note(format!("with {}", list.join(" ")))
    }

    /// Whether `scalars` scalars and `nodes` expression nodes fit the
    /// limits and the memory budget.
    fn fits(&self, scalars: usize, nodes: usize) -> bool {
        scalars <= self.options.scalar_limit()
            && nodes <= MAX_NODES
            && self
                .options
                .memory
                .is_none_or(|m| m.estimate(scalars, nodes) <= m.available)
    }

    /// Counts `n` more scalars (unknowns, parameters, equations) before
    /// they are created; reports the model as too large at `span` when
    /// they do not fit.
    fn count_scalars(&mut self, n: usize, span: Span) -> R<()> {
        self.scalar_count = self.scalar_count.saturating_add(n);
        if self.fits(self.scalar_count, self.pool.len()) {
            Ok(())
        } else {
            Err(self.too_large(span))
        }
    }

    /// Checks, before an operation at `span` builds up to `n` expression
    /// nodes, that they fit.
    fn reserve_nodes(&mut self, n: usize, span: Span) -> R<()> {
        if self.fits(self.scalar_count, self.pool.len().saturating_add(n)) {
            Ok(())
        } else {
            Err(self.too_large(span))
        }
    }

    /// An empty vector with room for `n` elements, or a diagnostic at
    /// `span` when the memory cannot be had (the estimate let through a
    /// model that does not fit after all).
    fn vec_with_capacity<T>(&mut self, n: usize, span: Span) -> R<Vec<T>> {
        let mut v = Vec::new();
        match v.try_reserve_exact(n) {
            Ok(()) => Ok(v),
            Err(_) => Err(self.no_memory(n, std::mem::size_of::<T>(), span)),
        }
    }

    /// Reports that `n` more elements of `size` bytes for the part at
    /// `span` could not be allocated.
    fn no_memory(&mut self, n: usize, size: usize, span: Span) -> Reported {
        let bytes = (n as u64).saturating_mul(size as u64);
        let d = Diagnostic::error(
            codes::TOO_LARGE,
            format!(
                "the model is too large: there is no memory for {n} more elements ({})",
                bytes_text(bytes)
            ),
        )
        .with_primary(span, "expanding this needs more memory than there is");
        let d = self.with_overrides(d);
        self.error(d)
    }

    /// The parameter and constant symbols in an order in which each comes
    /// after the ones its declaration names (sizes, value, modifiers): the
    /// strongly connected components of that dependency graph, dependencies
    /// first (iterative Tarjan, linear in the size of the declarations).
    /// Evaluated in this order, a parameter finds the ones it needs done,
    /// so [`Self::evaluate_parameter`] recurses only inside a cycle (which
    /// it reports). A name that only a branch not taken would need still
    /// counts here; the on-demand evaluation sorts that out.
    fn parameter_order(&self) -> Vec<usize> {
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
    fn evaluate_parameter(&mut self, s: usize) -> R<()> {
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
        let first = self.parameters.len();
        let constant = self.symbols[s].kind == SymKind::Constant;
        let names: Vec<String> = (0..values.len())
            .map(|i| format!("{name}{}", subscript_text(&unravel(i, &dims))))
            .collect();
        let attributes = self.parameter_attributes(d, &dims, &values, &names);
        for (i, ((&value, flat_name), a)) in values.iter().zip(names).zip(attributes).enumerate() {
            self.parameters.push(Parameter {
                name: flat_name,
                base: name.clone(),
                subscripts: unravel(i, &dims),
                ty,
                constant,
                value,
                symbolic: !constant && ty == BaseType::Real,
                start: a.start,
                fixed: a.fixed,
                nominal: a.nominal,
                min: a.min,
                max: a.max,
                unit: a.unit,
                display_unit: a.display_unit,
                quantity: a.quantity,
                type_name: type_source(&d.type_name),
                description: d.description.clone(),
            });
            self.param_values.push(value);
            self.spans.parameters.push(d.span);
        }
        self.symbols[s].first = first;
        self.symbols[s].dims = dims;
        Ok(())
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

    /// Sizes every unknown declaration, checks that the model fits (all
    /// its scalar unknowns with as many equations) before the first is
    /// created, and creates them.
    fn create_unknowns(&mut self) {
        let mut sized = Vec::new();
        let mut total = 0usize;
        for s in 0..self.symbols.len() {
            if self.symbols[s].kind != SymKind::Unknown {
                continue;
            }
            let Ok(dims) = self.evaluate_dims(s) else {
                continue;
            };
            let n = elements(&dims);
            total = total.saturating_add(n);
            sized.push((s, dims, n));
        }
        let with_equations = self.scalar_count.saturating_add(total.saturating_mul(2));
        if !self.fits(with_equations, self.pool.len()) {
            let mut largest: Option<(usize, usize)> = None;
            for &(s, _, n) in &sized {
                if largest.is_none_or(|(_, m)| n > m) {
                    largest = Some((s, n));
                }
            }
            self.unknowns_too_large(total, with_equations, largest);
            return;
        }
        for (s, dims, n) in sized {
            if self.create_unknown(s, dims, n).is_err() {
                return;
            }
        }
    }

    /// Reports that the `total` scalar unknowns (`scalars` with their
    /// equations and the parameters) do not fit; `largest` is the largest
    /// declaration and its size.
    fn unknowns_too_large(
        &mut self,
        total: usize,
        scalars: usize,
        largest: Option<(usize, usize)>,
    ) {
        self.too_large_reported = true;
        let mut d = Diagnostic::error(
            codes::TOO_LARGE,
            format!("the model is too large: it has {total} scalar unknowns"),
        );
        if let Some((s, n)) = largest {
            let decl = self.decl(s);
            d = d.with_primary(
                decl.span,
                format!("`{}` declared here has {n} elements", decl.name.name),
            );
        }
        d = d.with_note(self.limit_note(scalars, self.pool.len(), true));
        let d = self.with_overrides(d).with_help(
            "make the arrays smaller (a parameter that sizes them can be set with `-p NAME=VALUE`)",
        );
        self.diags.push(d);
    }

    /// Creates the `n` scalar unknowns of symbol `s`, an array of `dims`.
    fn create_unknown(&mut self, s: usize, dims: Vec<usize>, n: usize) -> R<()> {
        let d = self.decl(s);
        self.count_scalars(n, d.span)?;
        if self.unknowns.try_reserve(n).is_err() || self.spans.unknowns.try_reserve(n).is_err() {
            return Err(self.no_memory(n, std::mem::size_of::<Unknown>(), d.span));
        }
        self.symbols[s].first = self.unknowns.len();
        let name = &d.name.name;
        let type_name = type_source(&d.type_name);
        for i in 0..n {
            let subs = unravel(i, &dims);
            let mut flat_name = String::with_capacity(name.len() + 2 + 8 * subs.len());
            flat_name.push_str(name);
            push_subscripts(&mut flat_name, &subs);
            self.unknowns.push(Unknown {
                name: flat_name,
                base: name.clone(),
                subscripts: subs,
                start: None,
                fixed: false,
                nominal: None,
                min: None,
                max: None,
                unit: None,
                display_unit: None,
                quantity: None,
                type_name: type_name.clone(),
                description: d.description.clone(),
            });
            self.spans.unknowns.push(d.span);
        }
        self.symbols[s].dims = dims;
        self.symbols[s].state = EvalState::Done;
        Ok(())
    }

    /// Checks modifier `m` of a declaration of size `dims` as an attribute
    /// of `UNKNOWN_ATTRS` and evaluates its value: the text of `unit`,
    /// `displayUnit` and `quantity`, one number per element for the others
    /// (`fixed` as 0/1). `None` for `stateSelect` (accepted, not used) and
    /// after a diagnostic (a value that is not finite is one, named after
    /// the declaration `decl`).
    fn attribute(&mut self, m: &Modifier, decl: &str, dims: &[usize]) -> Option<Attr> {
        let key = m.name.name.as_str();
        if !UNKNOWN_ATTRS.contains(&key) {
            let mut diag = Diagnostic::error(codes::MODIFIER, format!("unknown attribute `{key}`"))
                .with_primary(m.name.span, "not an attribute of Real")
                .with_note(format!("attributes of Real: {}", UNKNOWN_ATTRS.join(", ")));
            if let Some(sug) = did_you_mean(key, UNKNOWN_ATTRS.iter().copied()) {
                diag = diag.with_help(format!("did you mean `{sug}`?"));
            }
            self.diags.push(diag);
            return None;
        }
        let Some(value) = &m.value else {
            self.diags.push(
                Diagnostic::error(codes::MODIFIER, format!("`{key}` needs a value"))
                    .with_primary(m.span, format!("write `{key} = …`")),
            );
            return None;
        };
        match key {
            "unit" | "displayUnit" | "quantity" => {
                if let ExprKind::String(text) = &value.kind {
                    return Some(Attr::Text(text.clone()));
                }
                self.diags.push(
                    Diagnostic::error(codes::MODIFIER, format!("`{key}` must be a string"))
                        .with_primary(value.span, "expected a string such as \"m\""),
                );
                None
            }
            "stateSelect" => None,
            _ => {
                let v = self.lower_expr(value, Mode::Const).ok()?;
                let want_bool = key == "fixed";
                if want_bool != (v.ty() == BaseType::Boolean) {
                    let want = if want_bool {
                        BaseType::Boolean
                    } else {
                        BaseType::Real
                    };
                    let _ = self.type_error(value.span, want, v.ty());
                    return None;
                }
                let v = self
                    .broadcast_to(v, dims, value.span, &format!("`{key}`"))
                    .ok()?;
                let values: Vec<f64> = v
                    .elems()
                    .iter()
                    .map(|&e| self.const_value(e).unwrap_or(f64::NAN))
                    .collect();
                if let Some(x) = values.iter().find(|x| !x.is_finite()) {
                    let diag = non_finite_attribute(key, decl, *x, value.span);
                    self.diags.push(diag);
                    return None;
                }
                Some(Attr::Values(values))
            }
        }
    }

    fn unknown_attributes(&mut self) {
        for s in 0..self.symbols.len() {
            if self.symbols[s].kind != SymKind::Unknown || self.symbols[s].state != EvalState::Done
            {
                continue;
            }
            let d = self.decl(s);
            let dims = self.symbols[s].dims.clone();
            let first = self.symbols[s].first;
            let n: usize = dims.iter().product();
            for m in &d.modifiers {
                let Some(attr) = self.attribute(m, &d.name.name, &dims) else {
                    continue;
                };
                let key = m.name.name.as_str();
                let group = &mut self.unknowns[first..first + n];
                match attr {
                    Attr::Text(text) => {
                        for u in group {
                            let slot = match key {
                                "unit" => &mut u.unit,
                                "displayUnit" => &mut u.display_unit,
                                _ => &mut u.quantity,
                            };
                            *slot = Some(text.clone());
                        }
                    }
                    Attr::Values(values) => {
                        for (u, x) in group.iter_mut().zip(values) {
                            match key {
                                "start" => u.start = Some(x),
                                "fixed" => u.fixed = x != 0.0,
                                "nominal" => u.nominal = Some(x),
                                "min" => u.min = Some(x),
                                _ => u.max = Some(x),
                            }
                        }
                    }
                }
            }
            for j in first..first + n {
                let u = &self.unknowns[j];
                if let Some(start) = u.start
                    && let Some(w) = bounds_warning(
                        &format!("start value {start} of `{}`", u.name),
                        start,
                        u.min,
                        u.max,
                        d.span,
                    )
                {
                    self.diags.push(w);
                }
            }
        }
    }

    /// The attributes of parameter symbol `s` (declaration `d`, `n`
    /// elements of `dims`), with a warning for each value outside its
    /// `min`/`max`.
    fn parameter_attributes(
        &mut self,
        d: &Declaration,
        dims: &[usize],
        values: &[f64],
        names: &[String],
    ) -> Vec<ParameterAttributes> {
        let n = values.len();
        let mut out = vec![ParameterAttributes::default(); n];
        for m in &d.modifiers {
            let Some(attr) = self.attribute(m, &d.name.name, dims) else {
                continue;
            };
            let key = m.name.name.as_str();
            match attr {
                Attr::Text(text) => {
                    for a in &mut out {
                        let slot = match key {
                            "unit" => &mut a.unit,
                            "displayUnit" => &mut a.display_unit,
                            _ => &mut a.quantity,
                        };
                        *slot = Some(text.clone());
                    }
                }
                Attr::Values(xs) => {
                    for (a, x) in out.iter_mut().zip(xs) {
                        match key {
                            "start" => a.start = Some(x),
                            "fixed" => a.fixed = Some(x != 0.0),
                            "nominal" => a.nominal = Some(x),
                            "min" => a.min = Some(x),
                            _ => a.max = Some(x),
                        }
                    }
                }
            }
        }
        for ((a, &x), name) in out.iter().zip(values).zip(names) {
            if let Some(w) = bounds_warning(
                &format!("the value {x} of `{name}`"),
                x,
                a.min,
                a.max,
                d.span,
            ) {
                self.diags.push(w);
            }
        }
        out
    }

    fn binding_equations(&mut self) {
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
            let mut spans = Vec::new();
            if self
                .push_equation(
                    lhs,
                    rhs,
                    d.span,
                    d.description.clone(),
                    &mut out,
                    &mut spans,
                )
                .is_ok()
            {
                self.equations.extend(out);
                self.spans.equations.extend(spans);
            }
        }
    }

    /// The `experiment` annotation: each setting a finite number, the
    /// tolerance and the output interval positive, the stop time after the
    /// start time (0 when not given). A bad value is a mistake in the
    /// model, reported at it and not used — also when the command line
    /// gives the setting, as the flat model would carry it.
    fn experiment(&mut self) {
        let model = self.model;
        // (value, span of the value) of StartTime, StopTime, Tolerance, Interval.
        let mut got: [Option<(f64, Span)>; 4] = [None; 4];
        for a in &model.annotations {
            if a.name.name != "experiment" {
                continue;
            }
            for m in &a.nested {
                let slot = match m.name.name.as_str() {
                    "StartTime" => 0,
                    "StopTime" => 1,
                    "Tolerance" => 2,
                    "Interval" => 3,
                    _ => continue,
                };
                let Some(value) = &m.value else { continue };
                let Ok(v) = self.lower_expr(value, Mode::Const) else {
                    continue;
                };
                let x = match v {
                    Val::Scalar(t, e) if t != BaseType::Boolean => self.const_value(e),
                    _ => None,
                };
                match x {
                    Some(x) if x.is_finite() => got[slot] = Some((x, value.span)),
                    _ => self.diags.push(
                        Diagnostic::error(
                            codes::MODIFIER,
                            format!("`{}` must be a number", m.name.name),
                        )
                        .with_primary(value.span, "not a finite number"),
                    ),
                }
            }
        }
        for (slot, name) in [(2, "Tolerance"), (3, "Interval")] {
            if let Some((x, span)) = got[slot]
                && x <= 0.0
            {
                self.diags.push(
                    Diagnostic::error(
                        codes::MODIFIER,
                        format!("`{name}` must be positive (it is {x})"),
                    )
                    .with_primary(span, "not positive"),
                );
                got[slot] = None;
            }
        }
        if let Some((stop, span)) = got[1] {
            let start = got[0].map_or(0.0, |(x, _)| x);
            if stop <= start {
                let mut d = Diagnostic::error(
                    codes::MODIFIER,
                    format!("`StopTime` ({stop}) must be after `StartTime` ({start})"),
                )
                .with_primary(span, "not after the start time");
                match got[0] {
                    Some((_, start_span)) => {
                        d = d.with_secondary(start_span, "the start time");
                    }
                    None => d = d.with_note("`StartTime` is 0 when not given"),
                }
                self.diags.push(d);
                got[1] = None;
            }
        }
        let value = |k: usize| got[k].map(|(x, _)| x);
        self.experiment = Experiment {
            start_time: value(0),
            stop_time: value(1),
            tolerance: value(2),
            interval: value(3),
        };
    }

    fn check_counts(&mut self) {
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
                .map(|&j| format!("`{}`", self.unknowns[j].name))
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
                let sp = self.spans.unknowns[j];
                if seen.insert(sp) {
                    d = d.with_secondary(
                        sp,
                        format!("`{}` appears in no equation", self.unknowns[j].base),
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

    fn equation(
        &mut self,
        eq: &'a ast::Equation,
        initial: bool,
        out: &mut Vec<Equation>,
        spans: &mut Vec<Span>,
    ) -> R<()> {
        match &eq.kind {
            EquationKind::Error => Err(Reported),
            EquationKind::Simple { lhs, rhs } => {
                if self.in_when {
                    return Err(self.error(
                        Diagnostic::error(codes::WHEN, "only `reinit(…)` is allowed inside `when`")
                            .with_primary(eq.span, "an equation inside `when`")
                            .with_note("daec's events re-initialise unknowns; they do not switch equations")
                            .with_help("use an if-expression on the condition instead"),
                    ));
                }
                let l = self.lower_expr(lhs, Mode::Equation);
                let r = self.lower_expr(rhs, Mode::Equation);
                let (l, r) = (l?, r?);
                self.push_equation(l, r, eq.span, eq.description.clone(), out, spans)
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
                for (cond, body) in branches {
                    let Ok(c) = self.condition(cond, Mode::Equation, "a `when` condition") else {
                        ok = false;
                        continue;
                    };
                    self.in_when = true;
                    let mut reinits = Vec::new();
                    let mut reinit_spans = Vec::new();
                    for e in body {
                        ok &= self.when_body(e, &mut reinits, &mut reinit_spans).is_ok();
                    }
                    self.in_when = false;
                    self.events.push(Event {
                        condition: c,
                        reinits,
                    });
                    self.spans.events.push(eq.span);
                    self.spans.reinits.push(reinit_spans);
                }
                if ok { Ok(()) } else { Err(Reported) }
            }
            EquationKind::Call { name, args } => {
                if name.name == "reinit" {
                    return Err(self.error(
                        Diagnostic::error(codes::WHEN, "`reinit` is only allowed inside `when`")
                            .with_primary(eq.span, "outside `when`")
                            .with_help("write `when condition then reinit(x, value); end when;`"),
                    ));
                }
                if name.name == "assert" {
                    self.diags.push(
                        Diagnostic::warning(
                            codes::UNSUPPORTED,
                            "`assert` is not checked by daec; it is ignored",
                        )
                        .with_primary(eq.span, "ignored"),
                    );
                    return Ok(());
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

    fn when_body(
        &mut self,
        e: &'a ast::Equation,
        reinits: &mut Vec<(u32, ExprId)>,
        spans: &mut Vec<Span>,
    ) -> R<()> {
        match &e.kind {
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
                reinits.push((unknown, value));
                spans.push(e.span);
                Ok(())
            }
            EquationKind::For { var, range, body } => {
                let values = self.range_values(range)?;
                for v in values {
                    self.loop_vars.push((var.name.as_str(), v));
                    for b in body {
                        let r = self.when_body(b, reinits, spans);
                        if r.is_err() {
                            self.loop_vars.pop();
                            return r;
                        }
                    }
                    self.loop_vars.pop();
                }
                Ok(())
            }
            _ => Err(self.error(
                Diagnostic::error(codes::WHEN, "only `reinit(…)` is allowed inside `when`")
                    .with_primary(e.span, "not a `reinit`")
                    .with_note(
                        "daec's events re-initialise unknowns; they do not switch equations",
                    ),
            )),
        }
    }

    /// Lowers a condition, which must be a Boolean scalar (`what` names it
    /// in the diagnostic).
    fn condition(&mut self, c: &ast::Expr, mode: Mode, what: &str) -> R<ExprId> {
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
        spans: &mut Vec<Span>,
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
            let mut sp = Vec::new();
            for e in body {
                ok &= self.equation(e, initial, &mut o, &mut sp).is_ok();
            }
            counts.push(o.len());
            lowered.push(o);
        }
        let mut o = Vec::new();
        let mut sp = Vec::new();
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
                description: eq.description.clone(),
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
        description: Option<String>,
        out: &mut Vec<Equation>,
        spans: &mut Vec<Span>,
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
                description: description.clone(),
            });
            spans.push(span);
        }
        Ok(())
    }

    fn range_values(&mut self, range: &ast::Expr) -> R<Vec<i64>> {
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

    fn type_error(&mut self, span: Span, want: BaseType, got: BaseType) -> Reported {
        self.error(
            Diagnostic::error(
                codes::TYPE_MISMATCH,
                format!("expected a {} value, found {}", ty_name(want), ty_name(got)),
            )
            .with_primary(span, format!("this is {}", ty_name(got))),
        )
    }

    /// Evaluates `e` to an Integer constant.
    fn const_int(&mut self, e: &ast::Expr) -> R<i64> {
        let v = self.lower_expr(e, Mode::Const)?;
        match v {
            Val::Scalar(BaseType::Integer, id) => match self.const_value(id) {
                Some(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => Ok(x as i64),
                _ => Err(self.error(
                    Diagnostic::error(codes::TYPE_MISMATCH, "expected an Integer constant")
                        .with_primary(e.span, "not an integer value"),
                )),
            },
            Val::Scalar(t, _) => Err(self.error(
                Diagnostic::error(codes::TYPE_MISMATCH, format!("expected an Integer, found {}", ty_name(t)))
                    .with_primary(e.span, format!("this is {}", ty_name(t)))
                    .with_help("sizes, subscripts and ranges must be Integer expressions of Integer parameters"),
            )),
            Val::Array(..) => Err(self.error(
                Diagnostic::error(codes::SHAPE, "expected an Integer, found an array")
                    .with_primary(e.span, "an array"),
            )),
        }
    }

    fn broadcast_to(&mut self, v: Val, dims: &[usize], span: Span, what: &str) -> R<Val> {
        if v.shape() == dims {
            return Ok(v);
        }
        if let Val::Scalar(t, e) = v {
            let n = elements(dims);
            let mut elems = self.vec_with_capacity(n, span)?;
            elems.resize(n, e);
            return Ok(Val::from_parts(t, dims.to_vec(), elems));
        }
        Err(self.error(
            Diagnostic::error(
                codes::SHAPE,
                format!(
                    "{what} is {} but must be {}",
                    shape_text(v.shape()),
                    shape_text(dims)
                ),
            )
            .with_primary(span, "wrong size"),
        ))
    }

    fn lower_expr(&mut self, e: &ast::Expr, mode: Mode) -> R<Val> {
        if self.depth >= MAX_DEPTH {
            if !self.too_large_reported {
                self.too_large_reported = true;
                self.diags.push(
                    Diagnostic::error(
                        codes::TOO_LARGE,
                        format!("this expression is nested more than {MAX_DEPTH} levels deep"),
                    )
                    .with_primary(e.span, "too deeply nested")
                    .with_help("split it into several equations with intermediate unknowns"),
                );
            }
            return Err(Reported);
        }
        self.depth += 1;
        let r = self.lower_expr_inner(e, mode);
        self.depth -= 1;
        r
    }

    fn lower_expr_inner(&mut self, e: &ast::Expr, mode: Mode) -> R<Val> {
        match &e.kind {
            ExprKind::Error => Err(Reported),
            ExprKind::Integer(i) => Ok(Val::Scalar(
                BaseType::Integer,
                self.pool.constant(*i as f64),
            )),
            ExprKind::Real(x) => Ok(Val::Scalar(BaseType::Real, self.pool.constant(*x))),
            ExprKind::Bool(b) => Ok(Val::Scalar(
                BaseType::Boolean,
                self.pool.constant(if *b { 1.0 } else { 0.0 }),
            )),
            ExprKind::String(_) => Err(self.error(
                Diagnostic::error(
                    codes::TYPE_MISMATCH,
                    "a string is not a value in an expression",
                )
                .with_primary(e.span, "strings are only descriptions and units"),
            )),
            ExprKind::Name(parts) => self.name(parts, e.span, mode),
            ExprKind::Index { base, indices } => self.index(base, indices, e.span, mode),
            ExprKind::Call {
                func,
                args,
                named_args,
            } => self.call(func, args, named_args, e.span, mode),
            ExprKind::Unary { op, expr } => {
                let v = self.lower_expr(expr, mode)?;
                match op {
                    UnOp::Plus => {
                        self.require_numeric(&v, expr.span)?;
                        Ok(v)
                    }
                    UnOp::Neg => {
                        self.require_numeric(&v, expr.span)?;
                        self.map(v, e.span, |p, x| p.neg(x))
                    }
                    UnOp::Not => {
                        self.require_bool(&v, expr.span)?;
                        self.map(v, e.span, |p, x| p.not(x))
                    }
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let a = self.lower_expr(lhs, mode);
                let b = self.lower_expr(rhs, mode);
                let (a, b) = (a?, b?);
                self.binary(*op, a, b, lhs.span, rhs.span, e.span)
            }
            ExprKind::If {
                branches,
                else_value,
            } => {
                // Constant conditions select at compile time (only the chosen
                // branch is lowered, so `if N > 1 then x[N - 1] else 0` works).
                let mut pending: Vec<(ExprId, Val, Span)> = Vec::new();
                let mut chosen = None;
                for (c, v) in branches {
                    let cid = self.condition(c, mode, "an `if` condition")?;
                    match self.const_value(cid) {
                        Some(x) if pending.is_empty() && x != 0.0 => {
                            chosen = Some(self.lower_expr(v, mode)?);
                            break;
                        }
                        Some(0.0) => continue,
                        _ => {
                            let val = self.lower_expr(v, mode)?;
                            pending.push((cid, val, v.span));
                        }
                    }
                }
                if let Some(v) = chosen {
                    return Ok(v);
                }
                let mut acc = self.lower_expr(else_value, mode)?;
                let mut acc_span = else_value.span;
                for (cid, val, span) in pending.into_iter().rev() {
                    if val.shape() != acc.shape() {
                        return Err(self.error(
                            Diagnostic::error(
                                codes::SHAPE,
                                "the branches of this if-expression have different sizes",
                            )
                            .with_primary(span, shape_text(val.shape()))
                            .with_secondary(acc_span, shape_text(acc.shape())),
                        ));
                    }
                    let ty = join_ty(val.ty(), acc.ty());
                    let elems = val
                        .elems()
                        .iter()
                        .zip(acc.elems())
                        .map(|(&a, &b)| self.pool.select(cid, a, b))
                        .collect();
                    acc = Val::from_parts(ty, val.shape().to_vec(), elems);
                    acc_span = span;
                }
                Ok(acc)
            }
            ExprKind::Range { .. } => {
                let vals = self.range_values(e)?;
                let elems: Vec<ExprId> =
                    vals.iter().map(|&i| self.pool.constant(i as f64)).collect();
                Ok(Val::Array(BaseType::Integer, vec![elems.len()], elems))
            }
            ExprKind::Array(items) => {
                let mut vals = Vec::with_capacity(items.len());
                for it in items {
                    vals.push((self.lower_expr(it, mode)?, it.span));
                }
                self.stack(vals, e.span)
            }
            ExprKind::Matrix(rows) => {
                let mut row_vals = Vec::with_capacity(rows.len());
                for row in rows {
                    let mut vals = Vec::with_capacity(row.len());
                    for it in row {
                        vals.push((self.lower_expr(it, mode)?, it.span));
                    }
                    // Concatenate scalars of a row into a vector.
                    row_vals.push((self.stack(vals, e.span)?, e.span));
                }
                self.stack(row_vals, e.span)
            }
            ExprKind::Colon | ExprKind::End => Err(self.error(
                Diagnostic::error(
                    codes::UNSUPPORTED,
                    "`:` and `end` are only allowed as subscripts",
                )
                .with_primary(e.span, "here"),
            )),
        }
    }

    /// `{a, b, c}`: stacks equally shaped values along a new first dimension.
    fn stack(&mut self, vals: Vec<(Val, Span)>, span: Span) -> R<Val> {
        if vals.is_empty() {
            return Ok(Val::Array(BaseType::Real, vec![0], Vec::new()));
        }
        let shape = vals[0].0.shape().to_vec();
        let mut ty = vals[0].0.ty();
        let mut elems = Vec::new();
        for (v, sp) in &vals {
            if v.shape() != shape.as_slice() {
                return Err(self.error(
                    Diagnostic::error(
                        codes::SHAPE,
                        "the elements of this array have different sizes",
                    )
                    .with_primary(*sp, shape_text(v.shape()))
                    .with_secondary(span, "in this array"),
                ));
            }
            if (ty == BaseType::Boolean) != (v.ty() == BaseType::Boolean) {
                return Err(self.type_error(*sp, ty, v.ty()));
            }
            ty = join_ty(ty, v.ty());
            elems.extend_from_slice(v.elems());
        }
        let mut full = vec![vals.len()];
        full.extend(shape);
        Ok(Val::Array(ty, full, elems))
    }

    /// `f` of each element (`span`: the expression, where a model too
    /// large is reported).
    fn map(&mut self, v: Val, span: Span, f: impl Fn(&mut ExprPool, ExprId) -> ExprId) -> R<Val> {
        match v {
            Val::Scalar(t, e) => Ok(Val::Scalar(t, f(&mut self.pool, e))),
            Val::Array(t, s, es) => {
                self.reserve_nodes(es.len(), span)?;
                Ok(Val::Array(
                    t,
                    s,
                    es.into_iter().map(|e| f(&mut self.pool, e)).collect(),
                ))
            }
        }
    }

    fn require_numeric(&mut self, v: &Val, span: Span) -> R<()> {
        if v.ty() == BaseType::Boolean {
            return Err(self.error(
                Diagnostic::error(
                    codes::TYPE_MISMATCH,
                    "a Boolean cannot be used in arithmetic",
                )
                .with_primary(span, "this is Boolean")
                .with_help("use `if cond then 1 else 0` to turn a condition into a number"),
            ));
        }
        Ok(())
    }

    fn require_bool(&mut self, v: &Val, span: Span) -> R<()> {
        if v.ty() != BaseType::Boolean {
            return Err(self.error(
                Diagnostic::error(
                    codes::TYPE_MISMATCH,
                    format!("expected a Boolean, found {}", ty_name(v.ty())),
                )
                .with_primary(span, format!("this is {}", ty_name(v.ty())))
                .with_help("compare it: `x > 0`"),
            ));
        }
        Ok(())
    }

    fn binary(&mut self, op: BinOp, a: Val, b: Val, sa: Span, sb: Span, span: Span) -> R<Val> {
        use BinOp::*;
        match op {
            And | Or => {
                self.require_bool(&a, sa)?;
                self.require_bool(&b, sb)?;
                self.zip(a, b, span, BaseType::Boolean, |p, x, y| {
                    if op == And { p.and(x, y) } else { p.or(x, y) }
                })
            }
            Lt | Le | Gt | Ge | Eq | Ne => {
                self.require_numeric(&a, sa)?;
                self.require_numeric(&b, sb)?;
                let c = match op {
                    Lt => CmpOp::Lt,
                    Le => CmpOp::Le,
                    Gt => CmpOp::Gt,
                    Ge => CmpOp::Ge,
                    Eq => CmpOp::Eq,
                    _ => CmpOp::Ne,
                };
                if !a.shape().is_empty() || !b.shape().is_empty() {
                    return Err(self.error(
                        Diagnostic::error(codes::SHAPE, "comparisons need scalar operands")
                            .with_primary(span, "an array comparison"),
                    ));
                }
                self.zip(a, b, span, BaseType::Boolean, |p, x, y| p.cmp(c, x, y))
            }
            _ => {
                self.require_numeric(&a, sa)?;
                self.require_numeric(&b, sb)?;
                let int = a.ty() == BaseType::Integer && b.ty() == BaseType::Integer;
                let ty = match op {
                    Add | Sub | Mul | ElemAdd | ElemSub | ElemMul if int => BaseType::Integer,
                    _ => BaseType::Real,
                };
                match op {
                    Add | ElemAdd | Sub | ElemSub => {
                        let elementwise = matches!(op, ElemAdd | ElemSub);
                        if !same_shape(a.shape(), b.shape()) && !elementwise {
                            return Err(self.shape_error(&a, &b, span, op));
                        }
                        let sub = matches!(op, Sub | ElemSub);
                        self.zip(
                            a,
                            b,
                            span,
                            ty,
                            |p, x, y| if sub { p.sub(x, y) } else { p.add(x, y) },
                        )
                    }
                    Mul => self.multiply(a, b, span, ty),
                    ElemMul => self.zip(a, b, span, ty, |p, x, y| p.mul(x, y)),
                    Div | ElemDiv => {
                        if !b.shape().is_empty() && op == Div {
                            return Err(self.shape_error(&a, &b, span, op));
                        }
                        self.zip(a, b, span, ty, |p, x, y| p.div(x, y))
                    }
                    _ => {
                        // Pow / ElemPow.
                        if op == Pow && (!a.shape().is_empty() || !b.shape().is_empty()) {
                            return Err(self.shape_error(&a, &b, span, op));
                        }
                        self.zip(a, b, span, BaseType::Real, |p, x, y| {
                            match p.as_constant(y) {
                                Some(n) if n.fract() == 0.0 && n.abs() <= 64.0 => {
                                    p.powi(x, n as i32)
                                }
                                _ => p.pow(x, y),
                            }
                        })
                    }
                }
            }
        }
    }

    fn shape_error(&mut self, a: &Val, b: &Val, span: Span, op: BinOp) -> Reported {
        self.error(
            Diagnostic::error(
                codes::SHAPE,
                format!(
                    "`{}` cannot combine {} with {}",
                    op.symbol(),
                    shape_text(a.shape()),
                    shape_text(b.shape())
                ),
            )
            .with_primary(span, "sizes do not fit"),
        )
    }

    /// Element-wise combination with scalar broadcasting.
    fn zip(
        &mut self,
        a: Val,
        b: Val,
        span: Span,
        ty: BaseType,
        f: impl Fn(&mut ExprPool, ExprId, ExprId) -> ExprId,
    ) -> R<Val> {
        if let (Val::Scalar(_, x), Val::Scalar(_, y)) = (&a, &b) {
            return Ok(Val::Scalar(ty, f(&mut self.pool, *x, *y)));
        }
        self.reserve_nodes(a.elems().len().max(b.elems().len()), span)?;
        let (sa, sb) = (a.shape().to_vec(), b.shape().to_vec());
        if sa == sb {
            let elems = a
                .elems()
                .iter()
                .zip(b.elems())
                .map(|(&x, &y)| f(&mut self.pool, x, y))
                .collect();
            return Ok(Val::from_parts(ty, sa, elems));
        }
        if sa.is_empty() {
            let x = a.elems()[0];
            let elems = b.elems().iter().map(|&y| f(&mut self.pool, x, y)).collect();
            return Ok(Val::from_parts(ty, sb, elems));
        }
        if sb.is_empty() {
            let y = b.elems()[0];
            let elems = a.elems().iter().map(|&x| f(&mut self.pool, x, y)).collect();
            return Ok(Val::from_parts(ty, sa, elems));
        }
        Err(self.error(
            Diagnostic::error(
                codes::SHAPE,
                format!(
                    "cannot combine {} with {}",
                    shape_text(&sa),
                    shape_text(&sb)
                ),
            )
            .with_primary(span, "sizes do not fit"),
        ))
    }

    /// `*`: scalar products, matrix–vector and matrix–matrix products, and
    /// scaling by a scalar.
    fn multiply(&mut self, a: Val, b: Val, span: Span, ty: BaseType) -> R<Val> {
        let (sa, sb) = (a.shape().to_vec(), b.shape().to_vec());
        if sa.is_empty() || sb.is_empty() {
            return self.zip(a, b, span, ty, |p, x, y| p.mul(x, y));
        }
        // A product over the shared dimension `sb[0]` for each pair of a
        // row of `a` and a column of `b`.
        let products = (a.elems().len() as u128 * b.elems().len() as u128) / sb[0].max(1) as u128;
        self.reserve_nodes(usize::try_from(products).unwrap_or(usize::MAX), span)?;
        let (ea, eb) = (a.elems().to_vec(), b.elems().to_vec());
        let dot = |p: &mut ExprPool, xs: &[ExprId], ys: Vec<ExprId>| {
            let terms: Vec<ExprId> = xs.iter().zip(ys).map(|(&x, y)| p.mul(x, y)).collect();
            p.sum(&terms)
        };
        match (sa.as_slice(), sb.as_slice()) {
            ([n], [m]) if n == m => Ok(Val::Scalar(ty, dot(&mut self.pool, &ea, eb))),
            ([r, c], [m]) if c == m => {
                let mut out = Vec::with_capacity(*r);
                for i in 0..*r {
                    out.push(dot(&mut self.pool, &ea[i * c..(i + 1) * c], eb.clone()));
                }
                Ok(Val::Array(ty, vec![*r], out))
            }
            ([m], [r, c]) if m == r => {
                let mut out = Vec::with_capacity(*c);
                for j in 0..*c {
                    let col: Vec<ExprId> = (0..*r).map(|i| eb[i * c + j]).collect();
                    out.push(dot(&mut self.pool, &ea, col));
                }
                Ok(Val::Array(ty, vec![*c], out))
            }
            ([r, k], [k2, c]) if k == k2 => {
                let mut out = Vec::with_capacity(r * c);
                for i in 0..*r {
                    for j in 0..*c {
                        let col: Vec<ExprId> = (0..*k).map(|l| eb[l * c + j]).collect();
                        out.push(dot(&mut self.pool, &ea[i * k..(i + 1) * k], col));
                    }
                }
                Ok(Val::Array(ty, vec![*r, *c], out))
            }
            _ => Err(self.shape_error(&a, &b, span, BinOp::Mul)),
        }
    }

    fn name(&mut self, parts: &[ast::Ident], span: Span, mode: Mode) -> R<Val> {
        let first = &parts[0];
        if parts.len() > 1 {
            let dotted: Vec<&str> = parts.iter().map(|p| p.name.as_str()).collect();
            let value = match dotted.as_slice() {
                ["Modelica", "Constants", "pi"] => Some(std::f64::consts::PI),
                ["Modelica", "Constants", "e"] => Some(std::f64::consts::E),
                ["Modelica", "Constants", "g_n"] => Some(9.80665),
                _ => None,
            };
            return match value {
                Some(v) => Ok(Val::Scalar(BaseType::Real, self.pool.constant(v))),
                None => Err(self.error(
                    Diagnostic::error(
                        codes::UNDECLARED,
                        format!("cannot find `{}`", dotted.join(".")),
                    )
                    .with_primary(span, "not declared")
                    .with_note("daec models are flat: components and records are not supported"),
                )),
            };
        }
        let name = first.name.as_str();
        if let Some(&(_, v)) = self.loop_vars.iter().rev().find(|(n, _)| *n == name) {
            return Ok(Val::Scalar(BaseType::Integer, self.pool.constant(v as f64)));
        }
        if name == "time" {
            if mode == Mode::Const {
                return Err(self.error(
                    Diagnostic::error(codes::TYPE_MISMATCH, "`time` is not a constant")
                        .with_primary(span, "varies in time")
                        .with_note("sizes, parameter values and start values must be constant"),
                ));
            }
            return Ok(Val::Scalar(BaseType::Real, self.pool.time()));
        }
        let Some(&s) = self.by_name.get(name) else {
            return Err(self.undeclared(first));
        };
        let kind = self.symbols[s].kind;
        if kind == SymKind::Unknown {
            if mode == Mode::Const {
                return Err(self.error(
                    Diagnostic::error(
                        codes::TYPE_MISMATCH,
                        format!("`{name}` is an unknown, not a constant"),
                    )
                    .with_primary(span, "unknowns vary in time")
                    .with_note("sizes, parameter values and start values must be constant")
                    .with_help(format!(
                        "declare `{name}` as a `parameter` if it is constant"
                    )),
                ));
            }
            if self.symbols[s].state != EvalState::Done {
                return Err(Reported);
            }
            let first_idx = self.symbols[s].first;
            if self.symbols[s].dims.is_empty() {
                return Ok(Val::Scalar(
                    BaseType::Real,
                    self.pool.var(first_idx as u32, 0),
                ));
            }
            let dims = self.symbols[s].dims.clone();
            let n: usize = dims.iter().product();
            let elems: Vec<ExprId> = (0..n)
                .map(|i| self.pool.var((first_idx + i) as u32, 0))
                .collect();
            return Ok(Val::from_parts(BaseType::Real, dims, elems));
        }
        self.evaluate_parameter(s)?;
        let sym = &self.symbols[s];
        let (first_idx, ty, dims) = (sym.first, sym.ty, sym.dims.clone());
        let n: usize = dims.iter().product();
        let symbolic = mode == Mode::Equation && kind == SymKind::Parameter && ty == BaseType::Real;
        if dims.is_empty() {
            let e = if symbolic {
                self.pool.param(ParamId(first_idx as u32))
            } else {
                self.pool.constant(self.param_values[first_idx])
            };
            return Ok(Val::Scalar(ty, e));
        }
        let elems: Vec<ExprId> = (0..n)
            .map(|i| {
                if symbolic {
                    self.pool.param(ParamId((first_idx + i) as u32))
                } else {
                    self.pool.constant(self.param_values[first_idx + i])
                }
            })
            .collect();
        Ok(Val::from_parts(ty, dims, elems))
    }

    fn undeclared(&mut self, id: &ast::Ident) -> Reported {
        let mut candidates: Vec<&str> = self.by_name.keys().copied().collect();
        candidates.extend(self.loop_vars.iter().map(|(n, _)| *n));
        candidates.push("time");
        candidates.sort_unstable();
        let mut d = Diagnostic::error(
            codes::UNDECLARED,
            format!("cannot find `{}` in this model", id.name),
        )
        .with_primary(id.span, "not declared");
        if let Some(s) = did_you_mean(&id.name, candidates) {
            d = d.with_help(format!("did you mean `{s}`?"));
        } else {
            d = d.with_help(format!(
                "declare it, e.g. `Real {};` or `parameter Real {} = …;`",
                id.name, id.name
            ));
        }
        self.error(d)
    }

    /// A declared array referenced by name, without materialising all its
    /// elements (so that `x[k]` in a loop over `k` costs O(1), not O(N)).
    fn lazy_symbol(&mut self, id: &ast::Ident, mode: Mode) -> R<Option<(BaseType, usize, Access)>> {
        let name = id.name.as_str();
        if self.loop_vars.iter().any(|(n, _)| *n == name) || name == "time" {
            return Ok(None);
        }
        let Some(&s) = self.by_name.get(name) else {
            return Ok(None);
        };
        match self.symbols[s].kind {
            SymKind::Unknown => {
                if mode == Mode::Const {
                    return Ok(None);
                }
                if self.symbols[s].state != EvalState::Done {
                    return Err(Reported);
                }
                Ok(Some((
                    BaseType::Real,
                    s,
                    Access::Unknown(self.symbols[s].first),
                )))
            }
            kind => {
                self.evaluate_parameter(s)?;
                let sym = &self.symbols[s];
                let symbolic = mode == Mode::Equation
                    && kind == SymKind::Parameter
                    && sym.ty == BaseType::Real;
                let access = if symbolic {
                    Access::Param(sym.first)
                } else {
                    Access::Value(sym.first)
                };
                Ok(Some((sym.ty, s, access)))
            }
        }
    }

    fn element(&mut self, access: Access, offset: usize) -> ExprId {
        match access {
            Access::Unknown(first) => self.pool.var((first + offset) as u32, 0),
            Access::Param(first) => self.pool.param(ParamId((first + offset) as u32)),
            Access::Value(first) => self.pool.constant(self.param_values[first + offset]),
        }
    }

    /// A subscript that is an integer literal or a loop variable (the
    /// common case `x[k]`, `x[k + 1]` in loops), without building values.
    fn quick_subscript(&self, ix: &ast::Expr) -> Option<i64> {
        let leaf = |e: &ast::Expr| -> Option<i64> {
            match &e.kind {
                ExprKind::Integer(i) => Some(*i),
                ExprKind::Name(p) if p.len() == 1 => self
                    .loop_vars
                    .iter()
                    .rev()
                    .find(|(n, _)| *n == p[0].name)
                    .map(|&(_, v)| v),
                _ => None,
            }
        };
        match &ix.kind {
            ExprKind::Binary {
                op: BinOp::Add,
                lhs,
                rhs,
            } => leaf(lhs)?.checked_add(leaf(rhs)?),
            ExprKind::Binary {
                op: BinOp::Sub,
                lhs,
                rhs,
            } => leaf(lhs)?.checked_sub(leaf(rhs)?),
            _ => leaf(ix),
        }
    }

    fn index(&mut self, base: &ast::Expr, indices: &[ast::Expr], span: Span, mode: Mode) -> R<Val> {
        let lazy = match &base.kind {
            ExprKind::Name(p) if p.len() == 1 => self.lazy_symbol(&p[0], mode)?,
            _ => None,
        };
        // Fast path: all subscripts are in-range integers.
        if let Some((ty, sym, access)) = &lazy
            && self.symbols[*sym].dims.len() == indices.len()
        {
            let dims = &self.symbols[*sym].dims;
            let mut offset = 0usize;
            let mut ok = true;
            for (k, ix) in indices.iter().enumerate() {
                match self.quick_subscript(ix) {
                    Some(i) if i >= 1 && (i as usize) <= dims[k] => {
                        offset = offset * dims[k] + (i as usize - 1);
                    }
                    _ => {
                        ok = false;
                        break;
                    }
                }
            }
            if ok {
                return Ok(Val::Scalar(*ty, self.element(*access, offset)));
            }
        }
        let (ty, shape, value, access) = match lazy {
            Some((ty, sym, access)) => (ty, self.symbols[sym].dims.clone(), None, Some(access)),
            None => {
                let v = self.lower_expr(base, mode)?;
                (v.ty(), v.shape().to_vec(), Some(v), None)
            }
        };
        let base_name = match &base.kind {
            ExprKind::Name(p) => p
                .iter()
                .map(|i| i.name.as_str())
                .collect::<Vec<_>>()
                .join("."),
            _ => "this expression".to_string(),
        };
        if indices.len() != shape.len() {
            return Err(self.error(
                Diagnostic::error(
                    codes::SHAPE,
                    format!(
                        "`{base_name}` has {} dimension{} but {} subscript{} given",
                        shape.len(),
                        if shape.len() == 1 { "" } else { "s" },
                        indices.len(),
                        if indices.len() == 1 { " is" } else { "s are" },
                    ),
                )
                .with_primary(span, format!("`{base_name}` is {}", shape_text(&shape))),
            ));
        }
        // Each subscript selects a list of positions; scalar subscripts drop
        // the dimension.
        let mut selections: Vec<(Vec<usize>, bool)> = Vec::with_capacity(indices.len());
        for (k, ix) in indices.iter().enumerate() {
            let size = shape[k];
            let picks: Vec<i64>;
            let keep_dim;
            match &ix.kind {
                ExprKind::Colon => {
                    picks = (1..=size as i64).collect();
                    keep_dim = true;
                }
                ExprKind::End => {
                    picks = vec![size as i64];
                    keep_dim = false;
                }
                _ => {
                    let iv = self.lower_subscript(ix, size)?;
                    keep_dim = iv.1;
                    picks = iv.0;
                }
            }
            let mut pos = Vec::with_capacity(picks.len());
            for p in picks {
                if p < 1 || p as usize > size {
                    return Err(self.error(
                        Diagnostic::error(
                            codes::INDEX_RANGE,
                            format!("index {p} is out of range for `{base_name}` of size {size}"),
                        )
                        .with_primary(ix.span, format!("valid subscripts are 1 to {size}"))
                        .with_secondary(span, "in this subscript")
                        .with_note("Modelica arrays are indexed from 1"),
                    ));
                }
                pos.push(p as usize - 1);
            }
            selections.push((pos, keep_dim));
        }
        let mut strides = vec![1usize; shape.len()];
        for k in (0..shape.len().saturating_sub(1)).rev() {
            strides[k] = strides[k + 1] * shape[k + 1];
        }
        let mut out_shape = Vec::new();
        for (pos, keep) in &selections {
            if *keep {
                out_shape.push(pos.len());
            }
        }
        let mut out = Vec::new();
        let mut counter = vec![0usize; selections.len()];
        let total: usize = selections.iter().map(|(p, _)| p.len()).product();
        for _ in 0..total {
            let off: usize = counter
                .iter()
                .enumerate()
                .map(|(k, &c)| selections[k].0[c] * strides[k])
                .sum();
            let e = match (&value, access) {
                (Some(v), _) => v.elems()[off],
                (None, Some(a)) => self.element(a, off),
                (None, None) => return Err(Reported),
            };
            out.push(e);
            for k in (0..counter.len()).rev() {
                counter[k] += 1;
                if counter[k] < selections[k].0.len() {
                    break;
                }
                counter[k] = 0;
            }
        }
        Ok(Val::from_parts(ty, out_shape, out))
    }

    /// A subscript: an Integer (scalar) or an Integer range/array (keeps the
    /// dimension). `end` inside it means the size.
    fn lower_subscript(&mut self, ix: &ast::Expr, size: usize) -> R<(Vec<i64>, bool)> {
        self.loop_vars.push(("end", size as i64));
        let v = self.lower_expr(ix, Mode::Const);
        self.loop_vars.pop();
        let v = v?;
        if v.ty() != BaseType::Integer {
            return Err(self.error(
                Diagnostic::error(
                    codes::TYPE_MISMATCH,
                    format!("a subscript must be an Integer, found {}", ty_name(v.ty())),
                )
                .with_primary(ix.span, format!("this is {}", ty_name(v.ty()))),
            ));
        }
        let keep = !v.shape().is_empty();
        let picks = v
            .elems()
            .iter()
            .map(|&e| self.const_value(e).map_or(i64::MIN, |x| x as i64))
            .collect();
        Ok((picks, keep))
    }

    fn call(
        &mut self,
        func: &[ast::Ident],
        args: &[ast::Expr],
        named_args: &[(ast::Ident, ast::Expr)],
        span: Span,
        mode: Mode,
    ) -> R<Val> {
        let fname: std::borrow::Cow<'_, str> = match func {
            [f] => f.name.as_str().into(),
            _ => func
                .iter()
                .map(|i| i.name.as_str())
                .collect::<Vec<_>>()
                .join(".")
                .into(),
        };
        let fspan = func[0].span.to(func[func.len() - 1].span);
        if let Some((n, _)) = named_args.first() {
            return Err(self.error(
                Diagnostic::error(codes::ARITY, format!("`{fname}` takes no named arguments"))
                    .with_primary(n.span, "named argument"),
            ));
        }
        let arity = |this: &mut Self, want: &str| -> Reported {
            this.error(
                Diagnostic::error(
                    codes::ARITY,
                    format!(
                        "`{fname}` takes {want}, but {} {} given",
                        args.len(),
                        if args.len() == 1 { "was" } else { "were" }
                    ),
                )
                .with_primary(span, format!("wrong number of arguments to `{fname}`")),
            )
        };
        if let Some(&(_, f)) = FUNCS1.iter().find(|(n, _)| *n == fname) {
            if args.len() != 1 {
                return Err(arity(self, "1 argument"));
            }
            let v = self.lower_expr(&args[0], mode)?;
            self.require_numeric(&v, args[0].span)?;
            let int_result = matches!(f, Func::Abs | Func::Sign) && v.ty() == BaseType::Integer;
            let ty = if int_result {
                BaseType::Integer
            } else {
                BaseType::Real
            };
            let v = self.map(v, span, |p, x| p.func(f, x))?;
            return Ok(match v {
                Val::Scalar(_, e) => Val::Scalar(ty, e),
                Val::Array(_, s, e) => Val::Array(ty, s, e),
            });
        }
        if let Some(&(_, f)) = FUNCS2.iter().find(|(n, _)| *n == fname) {
            if matches!(f, Func2::Min | Func2::Max) && args.len() == 1 {
                // Reduction over an array.
                let v = self.lower_expr(&args[0], mode)?;
                self.require_numeric(&v, args[0].span)?;
                let es = v.elems().to_vec();
                if es.is_empty() {
                    return Err(self.error(
                        Diagnostic::error(codes::SHAPE, format!("`{fname}` of an empty array"))
                            .with_primary(span, "no elements"),
                    ));
                }
                let mut acc = es[0];
                for &e in &es[1..] {
                    acc = self.pool.func2(f, acc, e);
                }
                return Ok(Val::Scalar(v.ty(), acc));
            }
            if args.len() != 2 {
                return Err(arity(self, "2 arguments"));
            }
            let a = self.lower_expr(&args[0], mode);
            let b = self.lower_expr(&args[1], mode);
            let (a, b) = (a?, b?);
            self.require_numeric(&a, args[0].span)?;
            self.require_numeric(&b, args[1].span)?;
            let ty = if f != Func2::Atan2
                && a.ty() == BaseType::Integer
                && b.ty() == BaseType::Integer
            {
                BaseType::Integer
            } else {
                BaseType::Real
            };
            return self.zip(a, b, span, ty, |p, x, y| p.func2(f, x, y));
        }
        match &*fname {
            "der" => {
                if args.len() != 1 {
                    return Err(arity(self, "1 argument"));
                }
                if mode == Mode::Const {
                    return Err(self.error(
                        Diagnostic::error(codes::TYPE_MISMATCH, "`der(…)` is not a constant")
                            .with_primary(span, "varies in time"),
                    ));
                }
                let v = self.lower_expr(&args[0], mode)?;
                self.require_numeric(&v, args[0].span)?;
                if let Val::Scalar(_, e) = v
                    && matches!(self.pool.as_leaf(e), Some(Leaf::Var { .. }))
                {
                    return Ok(Val::Scalar(BaseType::Real, self.pool.dt(e)));
                }
                for &e in v.elems() {
                    let has_var = !self.pool.max_orders(e).is_empty();
                    let has_time = self
                        .pool
                        .leaves(e)
                        .iter()
                        .any(|&l| self.pool.as_leaf(l) == Some(Leaf::Time));
                    if !has_var && !has_time {
                        let what = match &args[0].kind {
                            ExprKind::Name(p) => {
                                format!("`{}` is a parameter or constant", p[0].name)
                            }
                            _ => "its argument contains no unknown".to_string(),
                        };
                        return Err(self.error(
                            Diagnostic::error(
                                codes::DER_OF_PARAMETER,
                                format!("`der` of a constant expression: {what}"),
                            )
                            .with_primary(args[0].span, "constant in time")
                            .with_note(
                                "the derivative of a parameter is zero; `der` applies to unknowns",
                            )
                            .with_help(
                                "if it should vary in time, declare it as an unknown (`Real`)",
                            ),
                        ));
                    }
                }
                self.map(v, span, |p, x| p.dt(x))
            }
            "sum" => {
                if args.len() != 1 {
                    return Err(arity(self, "1 argument"));
                }
                let v = self.lower_expr(&args[0], mode)?;
                self.require_numeric(&v, args[0].span)?;
                let es = v.elems().to_vec();
                Ok(Val::Scalar(v.ty(), self.pool.sum(&es)))
            }
            "size" => {
                if args.is_empty() || args.len() > 2 {
                    return Err(arity(self, "1 or 2 arguments"));
                }
                let v = self.lower_expr(&args[0], mode)?;
                let shape = v.shape().to_vec();
                if args.len() == 2 {
                    let k = self.const_int(&args[1])?;
                    if k < 1 || k as usize > shape.len() {
                        return Err(self.error(
                            Diagnostic::error(
                                codes::INDEX_RANGE,
                                format!("dimension {k} does not exist"),
                            )
                            .with_primary(
                                args[1].span,
                                format!("the array has {} dimension(s)", shape.len()),
                            ),
                        ));
                    }
                    return Ok(Val::Scalar(
                        BaseType::Integer,
                        self.pool.constant(shape[k as usize - 1] as f64),
                    ));
                }
                let elems: Vec<ExprId> = shape
                    .iter()
                    .map(|&d| self.pool.constant(d as f64))
                    .collect();
                Ok(Val::Array(BaseType::Integer, vec![elems.len()], elems))
            }
            "noEvent" | "smooth" => {
                let want = if fname == "smooth" { 2 } else { 1 };
                if args.len() != want {
                    return Err(arity(
                        self,
                        if want == 1 {
                            "1 argument"
                        } else {
                            "2 arguments"
                        },
                    ));
                }
                self.lower_expr(&args[want - 1], mode)
            }
            "reinit" => Err(self.error(
                Diagnostic::error(codes::WHEN, "`reinit` is an equation, not a value")
                    .with_primary(span, "used in an expression"),
            )),
            _ => {
                let mut d = Diagnostic::error(codes::ARITY, format!("unknown function `{fname}`"))
                    .with_primary(fspan, "not a function daec knows");
                if let Some(s) = did_you_mean(&fname, ALL_FUNCS.iter().copied()) {
                    d = d.with_help(format!("did you mean `{s}`?"));
                } else {
                    d = d.with_note(format!("the functions are: {}", ALL_FUNCS.join(", ")));
                }
                Err(self.error(d))
            }
        }
    }
}

/// The error for a numeric attribute (`start`, `nominal`, `min`, `max`)
/// of `name` whose value `x` is NaN or infinite.
fn non_finite_attribute(key: &str, name: &str, x: f64, span: Span) -> Diagnostic {
    let d = Diagnostic::error(
        codes::MODIFIER,
        format!("the `{key}` value of `{name}` is not a finite number"),
    )
    .with_primary(span, format!("evaluates to {x}"));
    if x.is_nan() {
        d.with_note("an undefined operation such as 0/0 gives NaN")
    } else {
        d.with_note(
            "a value beyond ±1.8e308 (the largest double) or a division by zero gives an infinity",
        )
    }
}

/// Pushes the direct subexpressions of `e` onto `stack`.
fn push_children<'e>(e: &'e ast::Expr, stack: &mut Vec<&'e ast::Expr>) {
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
        ExprKind::Unary { expr, .. } => stack.push(expr),
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
        ExprKind::Array(items) => stack.extend(items),
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

fn join_ty(a: BaseType, b: BaseType) -> BaseType {
    if a == BaseType::Integer && b == BaseType::Integer {
        BaseType::Integer
    } else if a == BaseType::Boolean && b == BaseType::Boolean {
        BaseType::Boolean
    } else {
        BaseType::Real
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
fn unravel(mut i: usize, dims: &[usize]) -> Vec<usize> {
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
    use std::fmt::Write;
    for (k, s) in subs.iter().enumerate() {
        out.push(if k == 0 { '[' } else { ',' });
        let _ = write!(out, "{s}");
    }
    if !subs.is_empty() {
        out.push(']');
    }
}

/// `a == b` for shapes, without a `memcmp` call for the common scalar case.
fn same_shape(a: &[usize], b: &[usize]) -> bool {
    a.len() == b.len() && (a.is_empty() || a == b)
}
