//! The node types of the expression DAG: ids ([`ExprId`], [`ParamId`]),
//! leaves, the functions and comparisons, and [`Node`] with its children.
//! Every other module of the crate builds on these; this one uses none.

/// Identifier of an expression node in an [`crate::ExprPool`].
///
/// Ids are dense 32-bit indices; the children of a node always have smaller
/// ids than the node itself.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct ExprId(pub(crate) u32);

impl ExprId {
    /// The position of this node in the pool (0-based).
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Identifier of a symbolic parameter; its value is held outside the pool
/// (for instance in the `params` slice given to [`crate::Tape::eval`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct ParamId(pub u32);

/// A symbolic leaf: something whose value comes from the environment.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Leaf {
    /// The independent variable `time`.
    Time,
    /// A parameter.
    Param(ParamId),
    /// `z_unknown^(order)`: the `order`-th time derivative of an unknown
    /// (order 0 is the unknown itself).
    Var {
        /// Index of the unknown.
        unknown: u32,
        /// Derivative order.
        order: u32,
    },
}

/// Unary functions of the model language.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Func {
    /// `sin`
    Sin,
    /// `cos`
    Cos,
    /// `tan`
    Tan,
    /// `asin`
    Asin,
    /// `acos`
    Acos,
    /// `atan`
    Atan,
    /// `sinh`
    Sinh,
    /// `cosh`
    Cosh,
    /// `tanh`
    Tanh,
    /// `exp`
    Exp,
    /// `log` (natural logarithm)
    Log,
    /// `log10`
    Log10,
    /// `sqrt`
    Sqrt,
    /// `abs`
    Abs,
    /// `sign` (−1, 0 or 1; NaN for NaN)
    Sign,
    /// `floor`
    Floor,
    /// `ceil`
    Ceil,
    /// `noEvent`: the identity on the relation it wraps, which marks the
    /// relation as evaluated continuously (MLS 3.6 §3.7.5: no state event
    /// is generated for it). Only relations are wrapped.
    NoEvent,
}

impl Func {
    /// Every unary function, in declaration order.
    pub const ALL: [Func; 18] = [
        Func::Sin,
        Func::Cos,
        Func::Tan,
        Func::Asin,
        Func::Acos,
        Func::Atan,
        Func::Sinh,
        Func::Cosh,
        Func::Tanh,
        Func::Exp,
        Func::Log,
        Func::Log10,
        Func::Sqrt,
        Func::Abs,
        Func::Sign,
        Func::Floor,
        Func::Ceil,
        Func::NoEvent,
    ];

    /// The name of the function in the model language (and in Modelica).
    pub fn name(self) -> &'static str {
        match self {
            Func::Sin => "sin",
            Func::Cos => "cos",
            Func::Tan => "tan",
            Func::Asin => "asin",
            Func::Acos => "acos",
            Func::Atan => "atan",
            Func::Sinh => "sinh",
            Func::Cosh => "cosh",
            Func::Tanh => "tanh",
            Func::Exp => "exp",
            Func::Log => "log",
            Func::Log10 => "log10",
            Func::Sqrt => "sqrt",
            Func::Abs => "abs",
            Func::Sign => "sign",
            Func::Floor => "floor",
            Func::Ceil => "ceil",
            Func::NoEvent => "noEvent",
        }
    }

    /// Looks a function up by its model-language name.
    pub fn from_name(name: &str) -> Option<Func> {
        Func::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// Binary functions of the model language.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Func2 {
    /// `atan2(y, x)`
    Atan2,
    /// `min(a, b)` (NaN if either operand is NaN)
    Min,
    /// `max(a, b)` (NaN if either operand is NaN)
    Max,
}

impl Func2 {
    /// The name of the function in the model language.
    pub fn name(self) -> &'static str {
        match self {
            Func2::Atan2 => "atan2",
            Func2::Min => "min",
            Func2::Max => "max",
        }
    }

    /// Looks a binary function up by its model-language name.
    pub fn from_name(name: &str) -> Option<Func2> {
        [Func2::Atan2, Func2::Min, Func2::Max]
            .into_iter()
            .find(|f| f.name() == name)
    }
}

/// Comparison operators; a comparison evaluates to 1.0 (true) or 0.0 (false).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum CmpOp {
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
}

impl CmpOp {
    /// The operator in Modelica syntax.
    pub fn modelica(self) -> &'static str {
        match self {
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::Eq => "==",
            CmpOp::Ne => "<>",
        }
    }
}

/// The operands of a sum, product or call ([`Node::Add`], [`Node::Mul`],
/// [`Node::Call`]), read as a slice (`Deref<Target = [ExprId]>`), borrowed
/// from the pool.
///
/// The pool stores two operands, the most common case (`a - b`, `c·x`),
/// inline in the node's 16-byte record and longer lists one after the
/// other in one array of ids, so a sum or product costs no allocation of
/// its own.
#[derive(Clone, Copy, PartialEq)]
pub struct Operands<'a>(&'a [ExprId]);

impl<'a> Operands<'a> {
    /// The operands as a slice that lives as long as the borrow of the
    /// pool (the `Deref` slice lives as long as the `Operands`).
    pub fn as_slice(self) -> &'a [ExprId] {
        self.0
    }
}

impl std::ops::Deref for Operands<'_> {
    type Target = [ExprId];
    fn deref(&self) -> &[ExprId] {
        self.0
    }
}

impl<'a> From<&'a [ExprId]> for Operands<'a> {
    fn from(ids: &'a [ExprId]) -> Operands<'a> {
        Operands(ids)
    }
}

impl std::fmt::Debug for Operands<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Identifier of a function in an [`crate::ExprPool`]'s function table
/// ([`crate::ExprPool::add_function`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct FuncId(pub u32);

/// The function and the output a [`Node::Call`] evaluates, in one 32-bit
/// word (24 bits of function index, 8 bits of output index), so that a
/// call node fits the pool's 16-byte record.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Callee(u32);

impl Callee {
    /// The most functions a pool can call.
    pub const MAX_FUNCTIONS: u32 = 1 << 24;
    /// The most outputs of one function a call can select.
    pub const MAX_OUTPUTS: usize = 256;

    /// Output `output` of `function`; `None` beyond [`Callee::MAX_FUNCTIONS`]
    /// or [`Callee::MAX_OUTPUTS`].
    pub fn new(function: FuncId, output: usize) -> Option<Callee> {
        (function.0 < Self::MAX_FUNCTIONS && output < Self::MAX_OUTPUTS)
            .then_some(Callee(function.0 << 8 | output as u32))
    }

    /// The function called.
    pub fn function(self) -> FuncId {
        FuncId(self.0 >> 8)
    }

    /// The index of the output selected (0-based).
    pub fn output(self) -> usize {
        (self.0 & 0xff) as usize
    }

    /// The packed word (for hashing and encodings).
    pub fn raw(self) -> u32 {
        self.0
    }
}

/// One node of the DAG, as [`crate::ExprPool::node`] reads it (the pool
/// stores it packed in 16 bytes). Children are [`ExprId`]s with smaller
/// indices.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Node<'a> {
    /// A numeric constant.
    Const(f64),
    /// A symbolic leaf (`time`, parameter, unknown or derivative of one).
    Leaf(Leaf),
    /// An n-ary sum (at least two terms; a constant term, if any, first; no
    /// term is itself a sum).
    Add(Operands<'a>),
    /// An n-ary product (at least two factors; a constant coefficient, if any,
    /// first and never 0 or 1; no factor is itself a product).
    Mul(Operands<'a>),
    /// An integer power `base^n`, `n ∉ {0, 1}`; `n = -1` is a reciprocal.
    Powi(ExprId, i32),
    /// A real power `base^exponent` (the exponent is not an integer constant).
    Pow(ExprId, ExprId),
    /// A unary function application.
    Func(Func, ExprId),
    /// A binary function application.
    Func2(Func2, ExprId, ExprId),
    /// A comparison (1.0 if true, 0.0 if false); `>` and `>=` are stored with
    /// swapped operands as `<` and `<=`.
    Cmp(CmpOp, ExprId, ExprId),
    /// Logical and (operands are true when non-zero).
    And(ExprId, ExprId),
    /// Logical or.
    Or(ExprId, ExprId),
    /// Logical negation.
    Not(ExprId),
    /// `if cond then a else b` (cond is true when non-zero).
    Select(ExprId, ExprId, ExprId),
    /// One output of a function evaluated at run time by the interpreter
    /// of its algorithm ([`crate::Function`]), with its arguments in input
    /// order (at least one).
    Call(Callee, Operands<'a>),
}

/// Iterator over the children of a [`Node`], from [`Node::children`].
#[derive(Clone, Debug)]
pub struct Children<'a> {
    slice: &'a [ExprId],
    fixed: [ExprId; 3],
    len: u8,
    pos: u8,
}

impl Iterator for Children<'_> {
    type Item = ExprId;
    #[inline]
    fn next(&mut self) -> Option<ExprId> {
        if let Some((first, rest)) = self.slice.split_first() {
            self.slice = rest;
            return Some(*first);
        }
        if self.pos < self.len {
            let c = self.fixed[self.pos as usize];
            self.pos += 1;
            Some(c)
        } else {
            None
        }
    }
}

impl<'a> Node<'a> {
    /// The children of this node, in operand order.
    #[inline]
    pub fn children(self) -> Children<'a> {
        let z = ExprId(0);
        let (slice, fixed, len): (&[ExprId], [ExprId; 3], u8) = match self {
            Node::Const(_) | Node::Leaf(_) => (&[], [z; 3], 0),
            Node::Add(c) | Node::Mul(c) | Node::Call(_, c) => (c.as_slice(), [z; 3], 0),
            Node::Powi(a, _) | Node::Func(_, a) | Node::Not(a) => (&[], [a, z, z], 1),
            Node::Pow(a, b)
            | Node::Func2(_, a, b)
            | Node::Cmp(_, a, b)
            | Node::And(a, b)
            | Node::Or(a, b) => (&[], [a, b, z], 2),
            Node::Select(c, a, b) => (&[], [c, a, b], 3),
        };
        Children {
            slice,
            fixed,
            len,
            pos: 0,
        }
    }

    /// This node with `ops` as the operands of a sum, product or call (the
    /// other kinds are copied as they are): a copy that does not borrow the
    /// pool, for code that builds nodes while it reads this one.
    pub fn with_operands(self, ops: &[ExprId]) -> Node<'_> {
        let ops = Operands(ops);
        match self {
            Node::Const(v) => Node::Const(v),
            Node::Leaf(l) => Node::Leaf(l),
            Node::Add(_) => Node::Add(ops),
            Node::Mul(_) => Node::Mul(ops),
            Node::Powi(a, n) => Node::Powi(a, n),
            Node::Pow(a, b) => Node::Pow(a, b),
            Node::Func(f, a) => Node::Func(f, a),
            Node::Func2(f, a, b) => Node::Func2(f, a, b),
            Node::Cmp(op, a, b) => Node::Cmp(op, a, b),
            Node::And(a, b) => Node::And(a, b),
            Node::Or(a, b) => Node::Or(a, b),
            Node::Not(a) => Node::Not(a),
            Node::Select(c, a, b) => Node::Select(c, a, b),
            Node::Call(f, _) => Node::Call(f, ops),
        }
    }

    /// True for nodes whose value is always 0.0 or 1.0 (comparisons and
    /// logical operations).
    pub fn is_boolean(self) -> bool {
        matches!(
            self,
            Node::Cmp(..) | Node::And(..) | Node::Or(..) | Node::Not(_)
        )
    }
}
