//! The abstract syntax tree of a `.dae` model.
//!
//! Every node carries the [`Span`] of the source text it was parsed from, so
//! that lowering can point diagnostics at it. Parsing recovers from errors:
//! a part that could not be parsed becomes [`ExprKind::Error`] (or is left
//! out of a list), and the diagnostics say why.

use daec_diag::Span;

/// A name with its location.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    /// The name as written (quoted identifiers without their quotes).
    pub name: String,
    /// Where it is written.
    pub span: Span,
}

/// A parsed file: one `model … end Name;`.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// The name after `model`.
    pub name: Ident,
    /// The description string after the name, if any.
    pub description: Option<String>,
    /// The component declarations, in source order.
    pub declarations: Vec<Declaration>,
    /// The `equation` and `initial equation` sections, in source order.
    pub sections: Vec<Section>,
    /// The model-level `annotation(…)` entries (from any position in the
    /// model), if any.
    pub annotations: Vec<Modifier>,
    /// The name after `end`, if present.
    pub end_name: Option<Ident>,
    /// The functions the model calls at run time (`.mo` files: those the
    /// instantiation did not inline); the calls in expressions are
    /// [`FlatFunction::call`]s.
    pub functions: Vec<FlatFunction>,
    /// The whole model.
    pub span: Span,
}

/// A function called at run time, with its algorithm in flat form: the
/// statements use the names of its variables, and constants are
/// replaced by their values.
#[derive(Clone, Debug, PartialEq)]
pub struct FlatFunction {
    /// Its full class name.
    pub name: String,
    /// Its inputs, in order.
    pub inputs: Vec<Ident>,
    /// Its outputs, in order.
    pub outputs: Vec<Ident>,
    /// Its other variables (protected, and the loop variables).
    pub locals: Vec<Ident>,
    /// The statements (the bindings of outputs and locals first).
    pub algorithm: Vec<Statement>,
    /// `annotation(derivative(…) = f_der)`: the index of `f_der` in
    /// [`Model::functions`] and, per input, whether `f_der` takes its
    /// derivative.
    pub derivative: Option<(usize, Vec<bool>)>,
    /// Where the function is declared.
    pub span: Span,
}

impl FlatFunction {
    /// The first name of a flat call of function `index` (of
    /// [`Model::functions`]) selecting output `output`:
    /// `$call.<index>.<output>`, a name no source can write.
    pub fn call(index: usize, output: usize, span: Span) -> Vec<Ident> {
        ["$call".to_owned(), index.to_string(), output.to_string()]
            .into_iter()
            .map(|name| Ident { name, span })
            .collect()
    }

    /// The function index and output of a call's name made by
    /// [`FlatFunction::call`].
    pub fn callee(func: &[Ident]) -> Option<(usize, usize)> {
        match func {
            [a, i, o] if a.name == "$call" => Some((i.name.parse().ok()?, o.name.parse().ok()?)),
            _ => None,
        }
    }
}

/// The variability prefix of a declaration.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Variability {
    /// An unknown (no prefix).
    Continuous,
    /// `parameter`.
    Parameter,
    /// `constant`.
    Constant,
    /// `discrete`.
    Discrete,
}

/// The causality prefix of a declaration.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Causality {
    /// No prefix.
    None,
    /// `input`.
    Input,
    /// `output`.
    Output,
}

/// The type name of a declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeName {
    /// The dotted parts, e.g. `["Modelica", "Units", "SI", "Length"]`.
    pub parts: Vec<String>,
    /// Where it is written.
    pub span: Span,
}

impl TypeName {
    /// The name with dots, e.g. `Modelica.Units.SI.Length`.
    pub fn dotted(&self) -> String {
        self.parts.join(".")
    }
}

/// `parameter Real m(unit = "kg") = 1 "mass";` — one declared name.
///
/// `Real x, y;` is parsed as two declarations sharing type and prefixes.
#[derive(Clone, Debug, PartialEq)]
pub struct Declaration {
    /// `parameter`, `constant`, `discrete` or none.
    pub variability: Variability,
    /// `input`, `output` or none.
    pub causality: Causality,
    /// `Real`, `Integer`, `Boolean`, or a qualified name.
    pub type_name: TypeName,
    /// The declared name.
    pub name: Ident,
    /// Array dimensions: `Real A[2, 3]` gives two expressions (possibly
    /// written after the type: `Real[2] a`).
    pub dims: Vec<Expr>,
    /// The modification `( … )` after the name.
    pub modifiers: Vec<Modifier>,
    /// The binding `= expr`, if any.
    pub binding: Option<Expr>,
    /// The description string, if any.
    pub description: Option<String>,
    /// `annotation(…)` entries on the declaration (kept, not interpreted).
    pub annotations: Vec<Modifier>,
    /// The whole declaration (prefixes to `;`).
    pub span: Span,
}

/// One argument of a modification: `start = 1`, `each fixed = true`,
/// `experiment(StopTime = 10)`, `final x = 2`.
#[derive(Clone, Debug, PartialEq)]
pub struct Modifier {
    /// `each` written before the name.
    pub each: bool,
    /// `final` written before the name.
    pub is_final: bool,
    /// The (possibly dotted) name being modified, e.g. `start`.
    pub name: Ident,
    /// A nested modification `name( … )`.
    pub nested: Vec<Modifier>,
    /// The value after `=`, if any.
    pub value: Option<Expr>,
    /// `redeclare Type name(…)`: the class that replaces the declared one
    /// of the element `name` (MLS 3.6, §7.3; `.mo` files).
    pub redeclare: Option<TypeName>,
    /// The whole argument.
    pub span: Span,
}

/// An equation section.
#[derive(Clone, Debug, PartialEq)]
pub struct Section {
    /// `initial equation` (true) or `equation` (false).
    pub initial: bool,
    /// The equations in it.
    pub equations: Vec<Equation>,
    /// The `equation` keyword(s).
    pub span: Span,
}

/// One equation (possibly structured).
#[derive(Clone, Debug, PartialEq)]
pub struct Equation {
    /// What kind of equation.
    pub kind: EquationKind,
    /// The description string after it, if any.
    pub description: Option<String>,
    /// Its `annotation(…)` entries (MLS 3.6, Appendix A: an equation ends
    /// with a `description`, a description string and an optional
    /// annotation clause), e.g. `__daec(invariant = true)`.
    pub annotations: Vec<Modifier>,
    /// The whole equation, without the `;`.
    pub span: Span,
}

/// The kinds of equations.
#[derive(Clone, Debug, PartialEq)]
pub enum EquationKind {
    /// `lhs = rhs`.
    Simple {
        /// Left-hand side.
        lhs: Expr,
        /// Right-hand side.
        rhs: Expr,
    },
    /// `for i in range loop … end for` (also `for i in a:b, j in c:d loop`
    /// is nested into several `For`s by the parser).
    For {
        /// The loop variable.
        var: Ident,
        /// The range expression (usually [`ExprKind::Range`]).
        range: Expr,
        /// The loop body.
        body: Vec<Equation>,
    },
    /// `if c1 then … elseif c2 then … else … end if`.
    If {
        /// The `(condition, equations)` of `if` and each `elseif`.
        branches: Vec<(Expr, Vec<Equation>)>,
        /// The `else` equations (empty if there is no `else`).
        else_branch: Vec<Equation>,
    },
    /// `when c1 then … elsewhen c2 then … end when`.
    When {
        /// The `(condition, equations)` of `when` and each `elsewhen`.
        branches: Vec<(Expr, Vec<Equation>)>,
    },
    /// A call used as an equation: `reinit(x, 0)`, `assert(…)`, `connect(…)`.
    Call {
        /// The called name.
        name: Ident,
        /// The arguments.
        args: Vec<Expr>,
    },
    /// An equation that could not be parsed (a diagnostic was reported).
    Error,
}

/// An expression with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// What kind of expression.
    pub kind: ExprKind,
    /// Where it is written.
    pub span: Span,
}

/// Binary operators, lowest to highest precedence group noted.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `or`
    Or,
    /// `and`
    And,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `<>`
    Ne,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `^`
    Pow,
    /// `.+` (element-wise; same as `+` on scalars)
    ElemAdd,
    /// `.-`
    ElemSub,
    /// `.*`
    ElemMul,
    /// `./`
    ElemDiv,
    /// `.^`
    ElemPow,
}

impl BinOp {
    /// The operator as written in source.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Or => "or",
            BinOp::And => "and",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "<>",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Pow => "^",
            BinOp::ElemAdd => ".+",
            BinOp::ElemSub => ".-",
            BinOp::ElemMul => ".*",
            BinOp::ElemDiv => "./",
            BinOp::ElemPow => ".^",
        }
    }
}

/// Unary operators.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `-e`
    Neg,
    /// `+e`
    Plus,
    /// `not e`
    Not,
}

/// The kinds of expressions.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// An integer literal such as `3` (Modelica `Integer`). Literals too
    /// large for `i64` are reported and parsed as [`ExprKind::Real`].
    Integer(i64),
    /// A real literal such as `1.0`, `.5`, `1e-7`.
    Real(f64),
    /// `true` / `false`.
    Bool(bool),
    /// A string literal (only meaningful in modifiers such as `unit = "m"`).
    String(String),
    /// A (possibly dotted) name, e.g. `x`, `time`, `Modelica.Constants.pi`.
    Name(Vec<Ident>),
    /// `base[i, j]`.
    Index {
        /// The indexed expression (usually a `Name`).
        base: Box<Expr>,
        /// The subscripts; `:` is [`ExprKind::Colon`].
        indices: Vec<Expr>,
    },
    /// `f(a, b)`; also `der(x)`, `sum(a)`, `reinit(…)`.
    Call {
        /// The function name (possibly dotted).
        func: Vec<Ident>,
        /// The positional arguments.
        args: Vec<Expr>,
        /// Named arguments `name = value` (kept for diagnostics; daec's
        /// functions take none).
        named_args: Vec<(Ident, Expr)>,
    },
    /// `lhs op rhs`.
    Binary {
        /// The operator.
        op: BinOp,
        /// Left operand.
        lhs: Box<Expr>,
        /// Right operand.
        rhs: Box<Expr>,
    },
    /// `op e`.
    Unary {
        /// The operator.
        op: UnOp,
        /// The operand.
        expr: Box<Expr>,
    },
    /// `if c then a elseif c2 then b else e`.
    If {
        /// `(condition, value)` of `if` and each `elseif`.
        branches: Vec<(Expr, Expr)>,
        /// The `else` value.
        else_value: Box<Expr>,
    },
    /// `start:stop` or `start:step:stop`.
    Range {
        /// First value.
        start: Box<Expr>,
        /// Step (`None` means 1).
        step: Option<Box<Expr>>,
        /// Last value (inclusive).
        stop: Box<Expr>,
    },
    /// `{a, b, c}`.
    Array(Vec<Expr>),
    /// `[a, b; c, d]` — rows of a matrix.
    Matrix(Vec<Vec<Expr>>),
    /// `base.name`: a component reference through a subscripted component,
    /// e.g. `R[2].p.v` (`.mo` files; a flat model has no such names).
    Member {
        /// The subscripted part (`R[2]`).
        base: Box<Expr>,
        /// The dotted names after it (`p.v`).
        name: Vec<Ident>,
    },
    /// `(a, b)`: the outputs of a function call with several outputs, on
    /// the left of an equation `(a, b) = f(x)` (MLS 3.6, §8.3.1; `.mo`
    /// files).
    Tuple(Vec<Expr>),
    /// `:` as a subscript.
    Colon,
    /// `end` used as a subscript (`x[end]`).
    End,
    /// Something that could not be parsed (a diagnostic was reported).
    Error,
}

/// A parsed `.mo` file (MLS 3.6, §13.4 `stored-definition`): an optional
/// `within` clause and the classes defined at its top level.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredDefinition {
    /// The package named by `within P;` (`Some(vec![])` for `within;`).
    pub within: Option<Vec<Ident>>,
    /// The top-level class definitions, in source order.
    pub classes: Vec<ClassDef>,
}

/// The restricted class kinds (MLS 3.6, §4.7).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ClassKind {
    /// `model`.
    Model,
    /// `block`.
    Block,
    /// `connector`.
    Connector,
    /// `expandable connector` (rejected by the instantiation).
    ExpandableConnector,
    /// `record`.
    Record,
    /// `package`.
    Package,
    /// `type`.
    Type,
    /// `class`.
    Class,
    /// `function` (rejected by the instantiation).
    Function,
    /// `operator` and the other kinds daec does not read.
    Operator,
}

impl ClassKind {
    /// The keyword as written.
    pub fn keyword(self) -> &'static str {
        match self {
            ClassKind::Model => "model",
            ClassKind::Block => "block",
            ClassKind::Connector => "connector",
            ClassKind::ExpandableConnector => "expandable connector",
            ClassKind::Record => "record",
            ClassKind::Package => "package",
            ClassKind::Type => "type",
            ClassKind::Class => "class",
            ClassKind::Function => "function",
            ClassKind::Operator => "operator",
        }
    }
}

/// A class definition `partial model M "doc" … end M;` or a short one
/// `type Voltage = Real(unit = "V");`.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassDef {
    /// The restricted class kind.
    pub kind: ClassKind,
    /// `partial` was written.
    pub partial: bool,
    /// `encapsulated` was written.
    pub encapsulated: bool,
    /// The class name.
    pub name: Ident,
    /// The description string, if any.
    pub description: Option<String>,
    /// The body.
    pub body: ClassBody,
    /// The whole definition (without its `;`).
    pub span: Span,
}

/// The body of a class definition.
#[derive(Clone, Debug, PartialEq)]
pub enum ClassBody {
    /// `… elements … equation … end Name`.
    Long {
        /// The elements (components, nested classes, `extends`, `import`).
        elements: Vec<Element>,
        /// The equation sections.
        sections: Vec<Section>,
        /// The statements of the `algorithm` sections, in source order
        /// (MLS 3.6, §11.2; a function's body).
        algorithm: Vec<Statement>,
        /// The class-level `annotation(…)` entries.
        annotations: Vec<Modifier>,
        /// The name after `end`.
        end_name: Ident,
    },
    /// `= prefixes Base[dims](modifiers)` (MLS §4.5.1 short class
    /// definition).
    Short {
        /// `input`/`output` written before the base name.
        causality: Causality,
        /// The base class.
        base: TypeName,
        /// Array dimensions after the base name.
        dims: Vec<Expr>,
        /// The modification of the base class.
        modifiers: Vec<Modifier>,
    },
}

/// An element of a long class definition.
#[derive(Clone, Debug, PartialEq)]
pub enum Element {
    /// A component declaration (one declared name; boxed, it is the
    /// largest element).
    Component(Box<Component>),
    /// A nested class definition.
    Class(Box<ClassDef>),
    /// `extends Base(modifiers);`.
    Extends(Extends),
    /// `import …;`.
    Import(Import),
}

/// A component declaration of a class: the flat [`Declaration`] plus what
/// only a hierarchical model has.
#[derive(Clone, Debug, PartialEq)]
pub struct Component {
    /// Type, name, dimensions, modifiers and binding.
    pub decl: Declaration,
    /// The prefixes beyond variability and causality.
    pub prefixes: ComponentPrefixes,
    /// The condition of a conditional component (`… if cond;`).
    pub condition: Option<Expr>,
    /// Declared in a `protected` section.
    pub protected: bool,
}

/// The prefixes of a component declaration that a flat model lacks.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ComponentPrefixes {
    /// `flow`.
    pub flow: bool,
    /// `stream`, with its span (rejected by the instantiation).
    pub stream: Option<Span>,
    /// `inner`.
    pub inner: bool,
    /// `outer`.
    pub outer: bool,
    /// `replaceable`.
    pub replaceable: bool,
    /// `redeclare`.
    pub redeclare: bool,
    /// `final`.
    pub is_final: bool,
}

/// `extends Base(modifiers);`.
#[derive(Clone, Debug, PartialEq)]
pub struct Extends {
    /// The base class name.
    pub base: TypeName,
    /// The modification of the inherited elements.
    pub modifiers: Vec<Modifier>,
    /// The whole clause.
    pub span: Span,
}

/// An `import` clause (MLS 3.6, §13.2.1).
#[derive(Clone, Debug, PartialEq)]
pub struct Import {
    /// What is imported.
    pub kind: ImportKind,
    /// The whole clause.
    pub span: Span,
}

/// The forms of an `import` clause.
#[derive(Clone, Debug, PartialEq)]
pub enum ImportKind {
    /// `import A.B.C;` (`C` names `A.B.C`).
    Qualified(TypeName),
    /// `import D = A.B.C;`.
    Renamed(Ident, TypeName),
    /// `import A.B.*;`.
    Unqualified(TypeName),
    /// `import A.B.{C, D};`.
    Multiple(TypeName, Vec<Ident>),
}

/// A statement of an `algorithm` section (MLS 3.6, §11.2).
#[derive(Clone, Debug, PartialEq)]
pub struct Statement {
    /// What kind of statement.
    pub kind: StatementKind,
    /// The whole statement, without the `;`.
    pub span: Span,
}

/// The kinds of statements.
#[derive(Clone, Debug, PartialEq)]
pub enum StatementKind {
    /// `lhs := rhs` (`lhs` a name, possibly subscripted).
    Assign {
        /// The assigned variable.
        lhs: Expr,
        /// The assigned value.
        rhs: Expr,
    },
    /// `(a, b) := f(x)`: the outputs of a call with several outputs.
    TupleAssign {
        /// The assigned variables, in output order.
        lhs: Vec<Expr>,
        /// The call.
        rhs: Expr,
    },
    /// A call as a statement, e.g. `assert(…)` (an [`ExprKind::Call`]).
    Call(Expr),
    /// `if c1 then … elseif c2 then … else … end if`.
    If {
        /// The `(condition, statements)` of `if` and each `elseif`.
        branches: Vec<(Expr, Vec<Statement>)>,
        /// The `else` statements (empty if there is no `else`).
        else_branch: Vec<Statement>,
    },
    /// `for i in range loop … end for` (several indices are nested).
    For {
        /// The loop variable.
        var: Ident,
        /// The range expression.
        range: Expr,
        /// The loop body.
        body: Vec<Statement>,
    },
    /// `while c loop … end while`.
    While {
        /// The condition.
        condition: Expr,
        /// The loop body.
        body: Vec<Statement>,
    },
    /// `break`.
    Break,
    /// `return`.
    Return,
    /// A statement that could not be parsed (a diagnostic was reported).
    Error,
}
