//! Lowering of the `.dae` AST to a flat scalar DAE.
//!
//! [`lower`] turns a parsed [`daec_syntax::ast::Model`] into a [`Dae`]:
//! scalar unknowns with their attributes, scalar parameters with their
//! values, residual equations `lhs − rhs = 0` built in one shared
//! [`ExprPool`], initial equations, events (`when … reinit`) and the
//! `experiment` settings.
//!
//! Semantics (see `ARCHITECTURE.md`):
//! - `Real` parameters stay symbolic ([`ExprPool::param`] leaves) so that
//!   generated code can change them; `Integer` and `Boolean` parameters and
//!   all constants are *structural*: their values are folded into the
//!   equations (they size arrays, bound loops and select branches).
//! - Parameter values are evaluated in dependency order; a cycle is an error
//!   that names the cycle.
//! - Arrays and `for` loops are expanded; whole-array equations expand
//!   element-wise; `der` of an expression is its total time derivative.
//! - The IR keeps no spans: `SourceMap` side tables key spans by index.

mod aliases;
mod budget;
mod description;
mod flat;
mod instantiate;
mod lower;
mod start;
mod suggest;

pub use aliases::Alias;
pub use budget::MemoryBudget;
pub use daec_syntax::lexer::ident_source;
pub use description::Description;
pub use flat::{FlatNames, to_dae_text, write_dae_text};
pub use instantiate::{instantiate, model_classes, root_model_classes};
pub use lower::{LowerOptions, lower};
pub use start::PointEnv;
pub use suggest::did_you_mean;

use std::borrow::Cow;
use std::sync::Arc;

use daec_diag::{Span, SpanRuns};
use daec_expr::{ExprId, ExprPool};

/// The base type of a declared name.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BaseType {
    /// `Real` and every qualified SI type.
    Real,
    /// `Integer`.
    Integer,
    /// `Boolean`.
    Boolean,
}

/// The 1-based subscripts of a scalar inside its array, read as a slice
/// (`Deref<Target = [usize]>`; empty for a scalar declaration).
///
/// A scalar or an element of a vector (the common cases) stores them
/// inline; a matrix element's subscripts take one allocation. 16 bytes
/// either way, where a `Vec<usize>` takes 24 and a heap block per element.
#[derive(Clone, Default)]
pub struct Subscripts(SubscriptsRepr);

#[derive(Clone)]
enum SubscriptsRepr {
    One(usize),
    Many(Box<[usize]>),
}

impl Default for SubscriptsRepr {
    fn default() -> Self {
        SubscriptsRepr::Many(Box::default())
    }
}

impl std::ops::Deref for Subscripts {
    type Target = [usize];
    fn deref(&self) -> &[usize] {
        match &self.0 {
            SubscriptsRepr::One(one) => std::slice::from_ref(one),
            SubscriptsRepr::Many(many) => many,
        }
    }
}

impl Subscripts {
    /// The subscripts of the element at the row-major position `element`
    /// (0-based) of an array of `dims` (none for a scalar).
    pub fn of_element(element: usize, dims: &[usize]) -> Subscripts {
        match *dims {
            [] => Subscripts::default(),
            [_] => Subscripts(SubscriptsRepr::One(element + 1)),
            _ => lower::unravel(element, dims).into(),
        }
    }
}

impl From<Vec<usize>> for Subscripts {
    fn from(subs: Vec<usize>) -> Subscripts {
        match *subs {
            [one] => Subscripts(SubscriptsRepr::One(one)),
            _ => Subscripts(SubscriptsRepr::Many(subs.into_boxed_slice())),
        }
    }
}

impl PartialEq for Subscripts {
    fn eq(&self, other: &Subscripts) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for Subscripts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

/// What the scalar unknowns of one declaration share: its base name, type
/// name, dimensions, description and the `unit`, `displayUnit` and
/// `quantity` attributes. Every element of an array holds the same
/// `Arc<UnknownDecl>`, so a large array stores these once and an element
/// costs only its position in the array and its numeric attributes.
#[derive(Clone, Debug, PartialEq)]
pub struct UnknownDecl {
    /// The declared (array) name, e.g. `p`.
    pub base: Arc<str>,
    /// The declared type name as `.dae` source (e.g. `Real`,
    /// `Modelica.Units.SI.Length`).
    pub type_name: Arc<str>,
    /// The extent of each dimension of the array (empty for a scalar
    /// declaration): an element's subscripts follow from its position
    /// ([`Unknown::subscripts`]).
    pub dims: Box<[usize]>,
    /// The description string.
    pub description: Option<Arc<str>>,
    /// `unit`.
    pub unit: Option<Arc<str>>,
    /// `displayUnit` (metadata).
    pub display_unit: Option<Arc<str>>,
    /// `quantity` (metadata).
    pub quantity: Option<Arc<str>>,
    /// How the elements' flat names are formed: 0 for `base[i]`; `k` when
    /// `base` is `der(…(der(stem))…)` with `k` applications, whose
    /// elements are named `der(…(der(stem[i]))…)` (the new unknowns of a
    /// first-order reduction).
    pub derivative: u32,
}

impl UnknownDecl {
    /// A declaration of base name `base` and type `Real` without
    /// attributes.
    pub fn real(base: &str, description: Option<&str>) -> UnknownDecl {
        UnknownDecl {
            base: base.into(),
            type_name: "Real".into(),
            dims: Box::default(),
            description: description.map(Into::into),
            unit: None,
            display_unit: None,
            quantity: None,
            derivative: 0,
        }
    }

    /// The text before and after the element's `stem[i]` in its flat name
    /// (empty for an ordinary declaration, `der(` and `)` for a
    /// derivative), and the stem.
    fn name_parts(&self) -> (&str, &str, &str) {
        let k = self.derivative as usize;
        let b = &*self.base;
        match (b.get(..4 * k), b.get(4 * k..b.len().saturating_sub(k))) {
            (Some(pre), Some(stem)) if k > 0 => (pre, stem, &b[b.len() - k..]),
            _ => ("", b, ""),
        }
    }
}

/// One scalar unknown of the flat DAE: its declaration's shared data
/// ([`UnknownDecl`]), its position inside the array and its own numeric
/// attributes, in 32 bytes. The subscripts ([`Unknown::subscripts`]) and
/// the flat name ([`Unknown::name`]) are derived from the position and the
/// declaration's dimensions on demand.
#[derive(Clone, PartialEq)]
pub struct Unknown {
    /// The declaration this scalar belongs to.
    decl: Arc<UnknownDecl>,
    /// The value of `start` (initial guess, or initial value when
    /// `fixed`) where `has_start`, else 0; read by [`Unknown::start`].
    start_value: f64,
    /// `nominal`, `min` and `max`, boxed since most unknowns have none of
    /// them (`None` when all three are absent): read them by
    /// [`Unknown::nominal`], [`Unknown::min`], [`Unknown::max`].
    bounds: Option<Box<Bounds>>,
    /// The row-major position (0-based) of the element in its array (0
    /// for a scalar).
    element: u32,
    /// Whether `start` is given (beside `fixed` and the position, in the
    /// padding of the record).
    has_start: bool,
    /// `fixed`.
    pub fixed: bool,
}

const _: () = assert!(std::mem::size_of::<Unknown>() == 32);

impl std::fmt::Debug for Unknown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Unknown")
            .field("decl", &self.decl)
            .field("subscripts", &self.subscripts())
            .field("start", &self.start())
            .field("fixed", &self.fixed)
            .field("bounds", &self.bounds)
            .finish()
    }
}

/// The rarely given numeric attributes of an [`Unknown`].
#[derive(Clone, Debug, Default, PartialEq)]
struct Bounds {
    nominal: Option<f64>,
    min: Option<f64>,
    max: Option<f64>,
}

impl Unknown {
    /// The element of `decl` at the row-major position `element` (0-based;
    /// 0 for a scalar declaration), without numeric attributes.
    pub fn new(decl: Arc<UnknownDecl>, element: u32) -> Unknown {
        Unknown {
            decl,
            start_value: 0.0,
            bounds: None,
            element,
            has_start: false,
            fixed: false,
        }
    }

    /// The row-major position (0-based) of the element in its array (0
    /// for a scalar).
    pub fn element(&self) -> u32 {
        self.element
    }

    /// The 1-based subscripts inside its array (empty for a scalar),
    /// derived from its position and the declaration's dimensions.
    pub fn subscripts(&self) -> Subscripts {
        Subscripts::of_element(self.element as usize, &self.decl.dims)
    }

    /// `start` (initial guess, or initial value when `fixed`).
    pub fn start(&self) -> Option<f64> {
        self.has_start.then_some(self.start_value)
    }

    /// Sets `start`.
    pub fn set_start(&mut self, start: Option<f64>) {
        self.has_start = start.is_some();
        self.start_value = start.unwrap_or(0.0);
    }

    /// `nominal`.
    pub fn nominal(&self) -> Option<f64> {
        self.bounds.as_ref().and_then(|b| b.nominal)
    }

    /// `min`.
    pub fn min(&self) -> Option<f64> {
        self.bounds.as_ref().and_then(|b| b.min)
    }

    /// `max`.
    pub fn max(&self) -> Option<f64> {
        self.bounds.as_ref().and_then(|b| b.max)
    }

    /// Sets `nominal`.
    pub fn set_nominal(&mut self, nominal: Option<f64>) {
        self.set_bounds(|b| b.nominal = nominal);
    }

    /// Sets `min`.
    pub fn set_min(&mut self, min: Option<f64>) {
        self.set_bounds(|b| b.min = min);
    }

    /// Sets `max`.
    pub fn set_max(&mut self, max: Option<f64>) {
        self.set_bounds(|b| b.max = max);
    }

    /// Applies `set` to the bounds, boxed only while one of them is given.
    fn set_bounds(&mut self, set: impl FnOnce(&mut Bounds)) {
        let mut bounds = self.bounds.take().map_or_else(Bounds::default, |b| *b);
        set(&mut bounds);
        if bounds != Bounds::default() {
            self.bounds = Some(Box::new(bounds));
        }
    }

    /// A scalar `Real` unknown named `name`, without attributes.
    pub fn scalar(name: &str, description: Option<&str>) -> Unknown {
        Unknown::new(Arc::new(UnknownDecl::real(name, description)), 0)
    }

    /// The shared data of its declaration.
    pub fn decl(&self) -> &Arc<UnknownDecl> {
        &self.decl
    }

    /// Replaces the shared data of its declaration.
    pub fn set_decl(&mut self, decl: Arc<UnknownDecl>) {
        self.decl = decl;
    }

    /// The flat name, e.g. `x` or `p[3]` or `A[1,2]` (`der(p[3])` for an
    /// unknown of a first-order reduction), rendered from the
    /// declaration's base name and the subscripts.
    pub fn name(&self) -> Cow<'_, str> {
        if self.decl.dims.is_empty() {
            return Cow::Borrowed(&self.decl.base);
        }
        let (pre, stem, post) = self.decl.name_parts();
        let mut out = String::with_capacity(self.decl.base.len() + 2 + 8 * self.decl.dims.len());
        out.push_str(pre);
        out.push_str(stem);
        lower::push_subscripts(&mut out, &self.subscripts());
        out.push_str(post);
        Cow::Owned(out)
    }

    /// Whether the flat name is `name` (without rendering it).
    pub fn name_is(&self, name: &str) -> bool {
        if self.decl.dims.is_empty() {
            return *self.decl.base == *name;
        }
        let (pre, stem, post) = self.decl.name_parts();
        let Some(rest) = name
            .strip_prefix(pre)
            .and_then(|r| r.strip_prefix(stem))
            .and_then(|r| r.strip_suffix(post))
        else {
            return false;
        };
        subscripts_are(rest, &self.subscripts())
    }

    /// The declared (array) name this scalar belongs to, e.g. `p`.
    pub fn base(&self) -> &str {
        &self.decl.base
    }

    /// The declared type name as `.dae` source.
    pub fn type_name(&self) -> &str {
        &self.decl.type_name
    }

    /// The description string.
    pub fn description(&self) -> Option<&str> {
        self.decl.description.as_deref()
    }

    /// `unit`.
    pub fn unit(&self) -> Option<&str> {
        self.decl.unit.as_deref()
    }

    /// `displayUnit` (metadata).
    pub fn display_unit(&self) -> Option<&str> {
        self.decl.display_unit.as_deref()
    }

    /// `quantity` (metadata).
    pub fn quantity(&self) -> Option<&str> {
        self.decl.quantity.as_deref()
    }

    /// The flat name as `.dae` source (`'a b'[2]` for element 2 of the
    /// quoted array `'a b'`), as the printers write it.
    pub fn source_name(&self) -> String {
        let mut out = String::new();
        self.push_source_name(&mut out);
        out
    }

    /// Appends [`Unknown::source_name`] to `out`.
    pub fn push_source_name(&self, out: &mut String) {
        push_source_name(out, &self.decl.base, &self.subscripts());
    }
}

/// One scalar parameter or constant.
#[derive(Clone, Debug, PartialEq)]
pub struct Parameter {
    /// Flat name, e.g. `m` or `k[2]`.
    pub name: String,
    /// The declared (array) name.
    pub base: String,
    /// The 1-based subscripts (empty for scalars).
    pub subscripts: Vec<usize>,
    /// Its type.
    pub ty: BaseType,
    /// `constant` rather than `parameter`.
    pub constant: bool,
    /// The value (Booleans as 0/1).
    pub value: f64,
    /// Whether it stays symbolic in the equations (`Real` parameters) or
    /// was folded (structural: constants, `Integer`, `Boolean`).
    pub symbolic: bool,
    /// `start` (kept as written; the value is the binding).
    pub start: Option<f64>,
    /// `fixed`, when given.
    pub fixed: Option<bool>,
    /// `nominal`.
    pub nominal: Option<f64>,
    /// `min` (a value below it is warned about).
    pub min: Option<f64>,
    /// `max` (a value above it is warned about).
    pub max: Option<f64>,
    /// `unit`.
    pub unit: Option<String>,
    /// `displayUnit` (metadata).
    pub display_unit: Option<String>,
    /// `quantity` (metadata).
    pub quantity: Option<String>,
    /// The declared type name as `.dae` source.
    pub type_name: String,
    /// The description string.
    pub description: Option<String>,
}

/// One scalar equation `lhs = rhs`, i.e. the residual `lhs − rhs = 0`.
#[derive(Clone, Debug, PartialEq)]
pub struct Equation {
    /// Left-hand side.
    pub lhs: ExprId,
    /// Right-hand side.
    pub rhs: ExprId,
    /// `lhs − rhs`.
    pub residual: ExprId,
    /// The description string of the source equation (shared by the
    /// scalar equations it expands to).
    pub description: Option<Description>,
}

/// One branch of `when condition then … end when`: its `reinit`s and its
/// assignments of discrete variables.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// The condition; the event fires when it becomes true.
    pub condition: ExprId,
    /// `(unknown index, new value)` pairs.
    pub reinits: Vec<(u32, ExprId)>,
    /// `(parameter index, new value)`: the equations `v = e` of discrete
    /// variables ([`Discrete`]) in the branch, in source order.
    pub assigns: Vec<(u32, ExprId)>,
    /// The index of the first branch of the same `when` statement (this
    /// event's own index for a `when`, the `when`'s for an `elsewhen`): of
    /// the branches of one statement whose conditions rise at the same
    /// instant only the first fires (MLS 3.6 §8.3.5).
    pub clause: u32,
    /// `terminate(message)` in the branch: the run ends successfully
    /// when it fires (MLS 3.6 §8.3.8).
    pub terminate: Option<String>,
}

/// `assert(condition, message, level)` (MLS 3.6 §8.3.7): checked along
/// the run.
#[derive(Clone, Debug, PartialEq)]
pub struct Assertion {
    /// The condition that must hold.
    pub condition: ExprId,
    /// The message reported when it does not.
    pub message: String,
    /// `AssertionLevel.warning`: a warning, once, instead of an error.
    pub warning: bool,
}

/// A discrete-time variable (MLS 3.6 §3.8.3, §4.5): a `discrete Real`, an
/// `Integer` or `Boolean` variable, or a `Real` assigned in a `when`
/// clause. Its value is piecewise constant, changing at events only, so
/// the DAE holds it as a parameter (symbolic, [`Parameter::symbolic`]) that
/// the structural analysis and the formulations treat as known; `pre(v)`
/// is a second parameter, the value before the current event round.
#[derive(Clone, Debug, PartialEq)]
pub struct Discrete {
    /// The parameter that holds the value (its `value` is the start value).
    pub param: u32,
    /// The parameter that holds `pre(v)`.
    pub pre: u32,
}

/// A discrete variable defined outside `when` (`Boolean off = s < 0;`,
/// MLS 3.6 §8.3.5, §8.6): the DAE has no parameter for it, its uses are
/// its definition, and its result column is the definition evaluated at
/// each output point.
#[derive(Clone, Debug, PartialEq)]
pub struct Defined {
    /// The flat name.
    pub name: String,
    /// The definition, an expression of `time`, the unknowns and the
    /// parameters (`1`/`0` for a `Boolean`).
    pub value: ExprId,
}

/// The `experiment` annotation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Experiment {
    /// `StartTime` (default 0).
    pub start_time: Option<f64>,
    /// `StopTime`.
    pub stop_time: Option<f64>,
    /// `Tolerance`.
    pub tolerance: Option<f64>,
    /// `Interval`.
    pub interval: Option<f64>,
}

/// Source locations of the flat DAE's parts (invariant: the IR keeps no
/// spans; this side table does).
#[derive(Clone, Debug, Default)]
pub struct SourceSpans {
    /// Declaration of each unknown.
    pub unknowns: SpanRuns,
    /// Declaration of each parameter.
    pub parameters: Vec<Span>,
    /// Source equation of each equation.
    pub equations: SpanRuns,
    /// Source equation of each initial equation.
    pub initial_equations: SpanRuns,
    /// Source equation of each invariant.
    pub invariants: SpanRuns,
    /// `when` of each event.
    pub events: Vec<Span>,
    /// Each event's `reinit(…)` equations, in the order of
    /// [`Event::reinits`].
    pub reinits: Vec<Vec<Span>>,
    /// Each event's assignments of discrete variables, in the order of
    /// [`Event::assigns`].
    pub assigns: Vec<Vec<Span>>,
    /// Each assertion's `assert(…)`.
    pub asserts: Vec<Span>,
    /// Declaration of each function of [`Dae::functions`].
    pub functions: Vec<Span>,
}

/// A flat scalar DAE: `residual_i(t, z, ż, …) = 0` for each equation.
#[derive(Clone, Debug)]
pub struct Dae {
    /// The model name.
    pub name: String,
    /// The model's description string.
    pub description: Option<String>,
    /// All expressions.
    pub pool: ExprPool,
    /// Unknowns; `Var { unknown: j, .. }` leaves index this.
    pub unknowns: Vec<Unknown>,
    /// Parameters and constants; `ParamId(p)` leaves index this.
    pub parameters: Vec<Parameter>,
    /// The equations, in source order (loops expanded in place).
    pub equations: Vec<Equation>,
    /// `initial equation`s.
    pub initial_equations: Vec<Equation>,
    /// Declared invariants of the dynamics (equations written with
    /// `annotation(__daec(invariant = true))`): relations the solution
    /// keeps, not defining equations, so they are not counted in the
    /// square system and the structural analysis never sees them.
    pub invariants: Vec<Equation>,
    /// Events.
    pub events: Vec<Event>,
    /// The discrete-time variables, in declaration order (their values
    /// and `pre` values are parameters).
    pub discrete: Vec<Discrete>,
    /// The discrete variables defined outside `when`, in declaration
    /// order: result columns after those of [`Dae::discrete`].
    pub defined: Vec<Defined>,
    /// The assertions, checked after every accepted step and event.
    pub asserts: Vec<Assertion>,
    /// The Boolean parameter that `initial()` reads (MLS 3.6 §3.7.5):
    /// false, but true while the simulation fires the `when` clauses at
    /// the start.
    pub initial: Option<u32>,
    /// The Boolean parameter that `terminal()` reads (MLS 3.6 §3.7.5):
    /// false, but true while the simulation fires the `when` clauses at
    /// the end of a successful run.
    pub terminal: Option<u32>,
    /// Simulation settings.
    pub experiment: Experiment,
    /// Where each part came from.
    pub spans: SourceSpans,
    /// Names of unknowns eliminated by alias equations (`__daec(alias =
    /// true)`, the connection equalities of a `.mo` model), sorted by
    /// name; each equals the unknown it names.
    pub aliases: Vec<Alias>,
    /// The functions called at run time ([`daec_expr::Node::Call`]): the
    /// name of each function the lowering added to the pool (the
    /// derivative functions the pool makes later are named after them,
    /// with a `$der` suffix per order); their declarations are in
    /// [`SourceSpans::functions`].
    pub functions: Vec<String>,
}

/// Whether `text` is `subs` as a flat name writes them (`[2,3]`), without
/// rendering them.
fn subscripts_are(mut text: &str, subs: &[usize]) -> bool {
    for (k, &s) in subs.iter().enumerate() {
        let Some(rest) = text.strip_prefix(if k == 0 { '[' } else { ',' }) else {
            return false;
        };
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let number = &rest[..digits];
        if number.len() > 1 && number.starts_with('0') || number.parse::<usize>() != Ok(s) {
            return false;
        }
        text = &rest[digits..];
    }
    text == "]"
}

/// A flat name as `.dae` source: `base` as an identifier (quoted when it
/// is not a plain one) followed by the `subscripts`; `name` itself (quoted
/// as needed) when there are none.
fn source_name(name: &str, base: &str, subscripts: &[usize]) -> String {
    if subscripts.is_empty() {
        return daec_syntax::lexer::ident_source(name).into_owned();
    }
    let mut out = String::new();
    push_source_name(&mut out, base, subscripts);
    out
}

/// Appends `base` as an identifier (quoted when it is not a plain one)
/// followed by the `subscripts` to `out`.
fn push_source_name(out: &mut String, base: &str, subscripts: &[usize]) {
    out.push_str(&daec_syntax::lexer::ident_source(base));
    lower::push_subscripts(out, subscripts);
}

impl Parameter {
    /// A symbolic parameter without attributes that the simulation sets
    /// (a mode, `initial()`, the next time of a `sample`).
    pub fn hidden(name: &str, ty: BaseType, value: f64) -> Parameter {
        Parameter {
            name: name.to_string(),
            base: name.to_string(),
            subscripts: Vec::new(),
            ty,
            constant: false,
            value,
            symbolic: true,
            start: None,
            fixed: None,
            nominal: None,
            min: None,
            max: None,
            unit: None,
            display_unit: None,
            quantity: None,
            type_name: "Real".to_string(),
            description: None,
        }
    }

    /// The flat name as `.dae` source, as [`Unknown::source_name`].
    pub fn source_name(&self) -> String {
        source_name(&self.name, &self.base, &self.subscripts)
    }
}

impl Dae {
    /// The values of all parameters, indexed by `ParamId`.
    pub fn parameter_values(&self) -> Vec<f64> {
        self.parameters.iter().map(|p| p.value).collect()
    }

    /// The parameters' names and values, indexed by `ParamId` (what the
    /// Rust emitter takes).
    pub fn named_parameters(&self) -> Vec<(String, f64)> {
        self.parameters
            .iter()
            .map(|p| (p.name.clone(), p.value))
            .collect()
    }

    /// The discrete variable whose value or `pre` value parameter `p` is:
    /// the variable and whether `p` is its `pre`.
    pub fn discrete_of(&self, p: u32) -> Option<(&Discrete, bool)> {
        self.discrete.iter().find_map(|d| {
            if d.param == p {
                Some((d, false))
            } else if d.pre == p {
                Some((d, true))
            } else {
                None
            }
        })
    }

    /// The parameters of the discrete variables the results show (those
    /// of the model; not the next times of `sample`, `$sample<k>`).
    pub fn shown_discrete(&self) -> impl Iterator<Item = &Parameter> {
        self.discrete
            .iter()
            .filter_map(|d| self.parameters.get(d.param as usize))
            .filter(|p| !p.name.starts_with('$'))
    }

    /// The flat name of unknown `j` (`?` when there is none).
    pub fn unknown_name(&self, j: usize) -> Cow<'_, str> {
        self.unknowns
            .get(j)
            .map_or(Cow::Borrowed("?"), Unknown::name)
    }

    /// Index of the unknown with this flat name.
    pub fn unknown_index(&self, name: &str) -> Option<usize> {
        self.unknowns.iter().position(|u| u.name_is(name))
    }

    /// Why `other` cannot be this DAE with other values only, told by
    /// its parameters before the expressions are compared: a structural
    /// parameter (`Integer`, `Boolean`, a constant, a `Real` one the
    /// lowering evaluated: any folded into the equations, array sizes and
    /// `if` branches) with another value, or another number of parameters
    /// or unknowns (an array sized by a parameter). `None` does not mean
    /// the same structure: [`Dae::same_structure`] decides that.
    pub fn structural_change(&self, other: &Dae) -> Option<String> {
        for (a, b) in self.parameters.iter().zip(&other.parameters) {
            if a.name != b.name {
                return Some(format!("parameter `{}` is `{}` there", a.name, b.name));
            }
            if (!a.symbolic || !b.symbolic) && a.value != b.value {
                return Some(format!(
                    "the structural parameter `{}` is {} instead of {}",
                    a.name, b.value, a.value
                ));
            }
        }
        if self.parameters.len() != other.parameters.len() {
            return Some(format!(
                "{} parameters instead of {}",
                other.parameters.len(),
                self.parameters.len()
            ));
        }
        (self.unknowns.len() != other.unknowns.len()).then(|| {
            format!(
                "{} unknowns instead of {}",
                other.unknowns.len(),
                self.unknowns.len()
            )
        })
    }

    /// Whether `other` is this DAE with other values only: the same
    /// expressions (node for node, [`ExprPool::same_nodes`]), equations,
    /// initial equations, invariants, events, experiment and aliases; the
    /// same unknowns but for their `start`, `nominal`, `min` and `max`;
    /// the same parameters but for the values of the symbolic ones (`Real`
    /// parameters, which the expressions leave as leaves). A structural
    /// parameter (`Integer`, `Boolean`, a constant: folded into the
    /// expressions) with another value makes the DAEs differ, and so does
    /// anything a value changed at lowering (an array size, an `if`
    /// branch taken, a folded expression).
    pub fn same_structure(&self, other: &Dae) -> bool {
        let unknowns = self.unknowns.len() == other.unknowns.len()
            && self.unknowns.iter().zip(&other.unknowns).all(|(a, b)| {
                let values = |u: &Unknown| Unknown {
                    start_value: 0.0,
                    has_start: false,
                    bounds: None,
                    ..u.clone()
                };
                values(a) == values(b)
            });
        let parameters = self.parameters.len() == other.parameters.len()
            && self.parameters.iter().zip(&other.parameters).all(|(a, b)| {
                let value = |p: &Parameter| Parameter {
                    value: if p.symbolic { 0.0 } else { p.value },
                    ..p.clone()
                };
                a.symbolic == b.symbolic && value(a) == value(b)
            });
        unknowns
            && parameters
            && self.name == other.name
            && self.equations == other.equations
            && self.initial_equations == other.initial_equations
            && self.invariants == other.invariants
            && self.events == other.events
            && self.discrete == other.discrete
            && self.defined == other.defined
            && self.asserts == other.asserts
            && self.initial == other.initial
            && self.terminal == other.terminal
            && self.experiment == other.experiment
            && self.aliases == other.aliases
            && self.pool.same_nodes(&other.pool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The flat name as `.dae` source, formatted the plain way: the base
    /// as an identifier, then each subscript through `format!`.
    fn formatted(base: &str, subs: &[usize]) -> String {
        let mut out = daec_syntax::lexer::ident_source(base).into_owned();
        if !subs.is_empty() {
            let subs: Vec<String> = subs.iter().map(|s| format!("{s}")).collect();
            out.push_str(&format!("[{}]", subs.join(",")));
        }
        out
    }

    #[test]
    fn source_names_are_the_formatted_names() {
        let decl = |base: &str, dims: &[usize], derivative: u32| {
            let mut d = UnknownDecl::real(base, None);
            d.dims = dims.into();
            d.derivative = derivative;
            Arc::new(d)
        };
        // (base, dims, derivative, element, expected source name)
        let cases = [
            ("x", &[][..], 0, 0, "x"),
            ("p", &[12], 0, 11, "p[12]"),
            ("A", &[2, 3], 0, 4, "A[2,2]"),
            ("T", &[2, 10, 3], 0, 59, "T[2,10,3]"),
            ("R1.p.v", &[], 0, 0, "'R1.p.v'"),
            ("body.r", &[3], 0, 2, "'body.r'[3]"),
            ("der(q)", &[100], 1, 99, "'der(q)'[100]"),
            ("end", &[2], 0, 1, "'end'[2]"),
        ];
        for (base, dims, derivative, element, expected) in cases {
            let u = Unknown::new(decl(base, dims, derivative), element);
            assert_eq!(u.source_name(), expected, "{base} {dims:?} {element}");
            assert_eq!(u.source_name(), formatted(base, &u.subscripts()));
            let mut appended = String::from("der(");
            u.push_source_name(&mut appended);
            assert_eq!(appended, format!("der({expected}"));
        }
        // every element of a 3-D array, against the formatted name
        let d = decl("cube", &[3, 4, 5], 0);
        for element in 0..60 {
            let u = Unknown::new(d.clone(), element);
            assert_eq!(u.source_name(), formatted("cube", &u.subscripts()));
        }
    }

    #[test]
    fn decimal_digits_are_the_formatted_ones() {
        for n in [0, 1, 9, 10, 99, 100, 14286, 1 << 40, usize::MAX] {
            let mut out = String::from("[");
            lower::push_decimal(&mut out, n);
            assert_eq!(out, format!("[{n}"));
        }
    }
}
