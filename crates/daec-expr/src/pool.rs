//! The hash-consed expression DAG ([`ExprPool`]) and its canonicalising smart
//! constructors.
//!
//! Length: the canonical forms of every node kind and the interning they
//! share (the first-parent slots, the hash table, their widening) are one
//! unit, as a node is built only through them, with the tests of the
//! interning tables.
//!
//! # Canonical forms
//!
//! Every constructor canonicalises before interning, so that two expressions
//! that differ only by the rewrites below receive the same [`ExprId`]:
//!
//! * sums and products are n-ary and flattened (`(a + b) + c` is one sum);
//! * constants are folded (`2 * 3` → `6`, `sin(0)` → `0`), and a sum keeps at
//!   most one constant term, a product at most one constant coefficient; the
//!   constant comes first, the other operands follow in increasing id order;
//! * `x + 0` → `x`, `x * 1` → `x`, `x ^ 1` → `x`, `x ^ 0` → `1`;
//! * like terms are collected (`2x + 3x` → `5x`, `x - x` → `0`) and like
//!   factors are collected (`x * x` → `x^2`, `x^2 / x` → `x`);
//! * subtraction is `a + (-1)·b`, negation is `(-1)·a` and division is
//!   `a · b^(-1)`, so there is a single representation of each;
//! * `(x^m)^n` → `x^(m·n)` and `(a·b)^n` → `a^n · b^n` for integer powers;
//! * inside a sum, `c·(a + b)` is distributed to `c·a + c·b` (so
//!   `1 - (a + b)` is `1 - a - b`);
//! * reciprocals of constants are merged into one `(c1·c2·…)^(-1)` with a
//!   positive base and cancelled against the coefficient when the quotient
//!   is exact (`3·x/3` → `x`); `c^(-k)` is stored as `(c^k)^(-1)`;
//! * every NaN constant is the canonical `f64::NAN`;
//! * `a > b` is stored as `b < a` and `a >= b` as `b <= a`; the operands of
//!   commutative operations (`==`, `<>`, `and`, `or`, `min`, `max`) are ordered.
//!
//! Every rewrite preserves the value of the expression wherever the input is
//! defined (finite). The documented exceptions, all listed by the issue as
//! wanted, concern points where an operand is infinite, NaN or where a
//! collected factor is zero: `x * 0` → `0` (also when `x` is infinite or NaN),
//! `x - x` → `0` (also when `x` is infinite), and `x / x` → `1` (also at
//! `x = 0`). Division by a constant is folded to a multiplication only when the
//! reciprocal is exact (a power of two, or 0, ±inf and NaN whose
//! reciprocals are exact in IEEE arithmetic), so `x / 3` stays `x * 3^(-1)`
//! and prints back as `x / 3.0`.
//!
//! Leaves and constants are interned through dense side tables. A composite
//! node is looked up first among the few parents recorded for its largest
//! operand (a dense table indexed by id: the operand was usually created just
//! before, so the lookup stays in cache), and only then in an
//! open-addressing hash table; sums and products are looked up on their
//! borrowed operand lists, so a node is allocated only when it is new.
//! A pool made by [`ExprPool::compact`] records one parent per node until
//! the first derivative is taken, two from then on (see
//! [`FirstParents`]).
//! [`ExprPool::with_capacity`] pre-sizes the tables when the size of a model
//! can be estimated.

use std::hash::{Hash, Hasher};

use rustc_hash::{FxHashMap, FxHasher};

use crate::function::Function;
use crate::intern::{InternTable, Probe, id_bits_for, slot_value};
use crate::node::{Callee, CmpOp, ExprId, Func, Func2, FuncId, Leaf, Node, Operands, ParamId};
use crate::scalar::{apply_cmp, apply_func, apply_func2};
use std::sync::Arc;

/// Interning of nodes: bitwise equality (so `0.0` and `-0.0` differ) and
/// the hash of the interning table.
impl Node<'_> {
    fn same(&self, other: &Node<'_>) -> bool {
        match (self, other) {
            (Node::Const(a), Node::Const(b)) => a.to_bits() == b.to_bits(),
            _ => self == other,
        }
    }

    /// The anchor of a composite node, under which it is interned: its
    /// largest operand (of a sum or product the first or the last, as
    /// canonical operand lists are sorted but for a leading constant).
    #[inline]
    fn anchor(&self) -> u32 {
        match self {
            Node::Add(c) | Node::Mul(c) => c.first().max(c.last()).map_or(0, |a| a.0),
            n => n.children().max().map_or(0, |c| c.0),
        }
    }

    /// The hash of a composite node (see [`nary_hash`] for sums and
    /// products; the two agree on equal nodes).
    fn fx_hash(&self) -> u64 {
        let (d, a, b, c): (u64, u64, u64, u64) = match *self {
            Node::Const(v) => (0, v.to_bits(), 0, 0),
            Node::Leaf(l) => {
                let mut h = FxHasher::default();
                l.hash(&mut h);
                (1, h.finish(), 0, 0)
            }
            Node::Add(ref c) => return nary_hash(false, c),
            Node::Call(f, ref c) => return mix(nary_hash(true, c), 13 | u64::from(f.raw()) << 8),
            Node::Mul(ref c) => return nary_hash(true, c),
            Node::Powi(a, n) => (4, id64(a), u64::from(n as u32), 0),
            Node::Pow(a, b) => (5, id64(a), id64(b), 0),
            Node::Func(f, a) => (6 | (f as u64) << 8, id64(a), 0, 0),
            Node::Func2(f, a, b) => (7 | (f as u64) << 8, id64(a), id64(b), 0),
            Node::Cmp(op, a, b) => (8 | (op as u64) << 8, id64(a), id64(b), 0),
            Node::And(a, b) => (9, id64(a), id64(b), 0),
            Node::Or(a, b) => (10, id64(a), id64(b), 0),
            Node::Not(a) => (11, id64(a), 0, 0),
            Node::Select(c, a, b) => (12, id64(c), id64(a), id64(b)),
        };
        finish(mix(mix(mix(mix(0, d), a), b), c))
    }
}

fn id64(e: ExprId) -> u64 {
    u64::from(e.0)
}

/// One FxHash step.
#[inline]
fn mix(h: u64, x: u64) -> u64 {
    (h.rotate_left(5) ^ x).wrapping_mul(0xf135_7aea_2e62_a9c5)
}

/// FxHash alone clusters the low bits for our keys; finish with the
/// splitmix64 mixer so linear probing stays short.
#[inline]
fn finish(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Hash of a sum (`mul = false`) or product with operands `kids`, computed
/// on the borrowed operand list (no node is built for a lookup).
#[inline]
fn nary_hash(mul: bool, kids: &[ExprId]) -> u64 {
    let mut h = mix(0, if mul { 3 } else { 2 } | (kids.len() as u64) << 8);
    let mut pairs = kids.chunks_exact(2);
    for p in &mut pairs {
        h = mix(h, id64(p[0]) | id64(p[1]) << 32);
    }
    if let [last] = pairs.remainder() {
        h = mix(h, id64(*last));
    }
    finish(h)
}

/// A node as the pool stores it, in 16 bytes ([`ExprPool::node`] reads
/// it as a [`Node`]): a sum or product of two operands holds them inline,
/// a longer one (and a call, with any number of arguments) the start and
/// length of its list in the pool's operand array.
#[derive(Clone, Copy, Debug)]
enum Packed {
    Const(f64),
    Leaf(Leaf),
    Add2([ExprId; 2]),
    Mul2([ExprId; 2]),
    AddN(u32, u32),
    MulN(u32, u32),
    Powi(ExprId, i32),
    Pow(ExprId, ExprId),
    Func(Func, ExprId),
    Func2(Func2, ExprId, ExprId),
    Cmp(CmpOp, ExprId, ExprId),
    And(ExprId, ExprId),
    Or(ExprId, ExprId),
    Not(ExprId),
    Select(ExprId, ExprId, ExprId),
    Call(Callee, u32, u32),
}

const _: () = assert!(std::mem::size_of::<Packed>() == 16);

/// The dense first-parents table: per node, 1 + the ids of the first
/// composite nodes whose largest operand (their anchor) it is, 0 where
/// there is none yet; the other parents are in the hash table. Every slot
/// costs 4 bytes for every node of the pool.
#[derive(Clone, Debug)]
enum FirstParents {
    /// One slot per node: the table of a pool made by
    /// [`ExprPool::compact`], while its expressions are built (a lowered
    /// model's nodes rarely share an anchor with more than one other).
    One(Vec<u32>),
    /// Two slots per node: the table of [`ExprPool::new`], and of a
    /// compact pool once a derivative is taken ([`ExprPool::widen_parents`]):
    /// the derivatives add parents to the nodes they differentiate, which
    /// the second slot finds without hashing.
    Two(Vec<[u32; 2]>),
}

impl Default for FirstParents {
    fn default() -> Self {
        FirstParents::Two(Vec::new())
    }
}

impl FirstParents {
    /// The slots of `anchor` (unused ones 0) and how many there are.
    #[inline]
    fn of(&self, anchor: usize) -> ([u32; 2], usize) {
        match self {
            FirstParents::One(v) => ([v[anchor], 0], 1),
            FirstParents::Two(v) => (v[anchor], 2),
        }
    }

    /// Sets slot `k` of `anchor`.
    #[inline]
    fn set(&mut self, anchor: usize, k: usize, value: u32) {
        match self {
            FirstParents::One(v) => v[anchor] = value,
            FirstParents::Two(v) => v[anchor][k] = value,
        }
    }

    /// The empty slots of a new node.
    #[inline]
    fn push(&mut self) {
        match self {
            FirstParents::One(v) => v.push(0),
            FirstParents::Two(v) => v.push([0; 2]),
        }
    }

    fn reserve(&mut self, nodes: usize) {
        match self {
            FirstParents::One(v) => v.reserve(nodes),
            FirstParents::Two(v) => v.reserve(nodes),
        }
    }
}

/// Number of entries of the constant cache (a power of two).
const CONST_CACHE: usize = 256;

/// Unknowns and parameters with smaller indices are interned in dense side
/// tables; larger (unusual) indices fall back to a hash map.
const DENSE_LIMIT: u32 = 1 << 24;

/// A hash-consed, append-only expression DAG.
///
/// Nodes are created only through the canonicalising constructors, so equal
/// expressions (up to the rewrites listed in the `pool` module's docs) get
/// equal ids, and children always precede parents.
#[derive(Clone, Debug, Default)]
pub struct ExprPool {
    nodes: Vec<Packed>,
    /// The operands of the sums, products and calls that do not have
    /// exactly two (calls: any number), one list after the other.
    operands: Vec<ExprId>,
    /// Hash-consing table over the composite nodes that are not among the
    /// first parents of their anchor (see
    /// [`ExprPool::intern_composite`]).
    table: InternTable,
    /// The first parents of each node, by id.
    first_parent: FirstParents,
    /// Leaves and constants are interned in dense side tables (cache
    /// friendly): `var_ids[k / 2][j][k % 2]` is `Var{j,k}` for k < 4
    /// (`u32::MAX` if absent), orders 2 and 3 in a table of their own that
    /// only grows to the unknowns differentiated twice (a flat model has
    /// orders 0 and 1 only); higher orders, `time` and indices ≥
    /// `DENSE_LIMIT` go to `other_leaves`.
    var_ids: [Vec<[u32; 2]>; 2],
    param_ids: Vec<u32>,
    other_leaves: FxHashMap<Leaf, u32>,
    const_ids: FxHashMap<u64, u32>,
    /// Direct-mapped cache of `const_ids`: `(bits, id + 1)`, 0 = empty.
    const_cache: Vec<(u64, u32)>,
    /// Reusable buffers for the n-ary constructors (avoid an allocation per
    /// call).
    scratch_ids: Vec<ExprId>,
    scratch_pows: Vec<(ExprId, i32)>,
    /// Spare id buffers for the constructors (a stack, since they nest).
    spare_ids: Vec<Vec<ExprId>>,
    /// Spare buffers for the like-term collection of [`ExprPool::sum`].
    spare_parts: Vec<Vec<TermParts>>,
    /// Memo of total time derivatives, indexed by node (`NO_MEMO` if absent).
    pub(crate) dt_memo: Vec<u32>,
    /// Memo of partial derivatives, keyed by (expression, wrt).
    pub(crate) diff_memo: FxHashMap<(u32, u32), u32>,
    /// The functions that [`Node::Call`]s evaluate, by [`FuncId`].
    pub(crate) functions: Vec<Arc<Function>>,
    /// The forward-mode derivative of each function, once made.
    pub(crate) derivatives: FxHashMap<u32, u32>,
    /// The first function whose derivative was needed beyond
    /// [`crate::MAX_DERIVATIVE_ORDER`] (see [`ExprPool::derivative_limit`]).
    pub(crate) derivative_limit: Option<FuncId>,
}

/// Decomposition of a sum term as `coef · core`, where the core is a slice
/// of product factors; see [`ExprPool::term_parts`].
#[derive(Clone, Copy, Debug)]
struct TermParts {
    coef: f64,
    term: ExprId,
    /// Index of the first core factor in the term's product, or `u32::MAX`
    /// when the term is not a product (its core is the term itself).
    skip: u32,
}

/// A sum or product being built operand by operand, left to right (`a +
/// b - c`, `-2*x*y`), whose partial results are not interned: only
/// [`ExprPool::finish`] interns the last. Each step
/// ([`ExprPool::partial_add`], `partial_sub`, `partial_mul`, `partial_div`,
/// `partial_neg`) canonicalises the operands of the partial result exactly
/// as the binary constructor (`add`, `sub`, …) reads those of the interned
/// node, so the finished expression is the one the binary constructors
/// give, without the intermediate sums and products of the chain in the
/// pool.
#[derive(Debug)]
pub struct Partial(PartialRepr);

#[derive(Debug)]
enum PartialRepr {
    /// An interned expression.
    Id(ExprId),
    /// The canonical operands of a sum of two or more terms, not interned.
    Sum(Vec<ExprId>),
    /// The canonical operands of a product of two or more factors, not
    /// interned.
    Product(Vec<ExprId>),
}

impl From<ExprId> for Partial {
    fn from(id: ExprId) -> Partial {
        Partial(PartialRepr::Id(id))
    }
}

impl ExprPool {
    /// The bytes of one node's record in the pool (a sum or product of more
    /// than two operands, or a call, adds 4 bytes per operand).
    pub const NODE_BYTES: usize = std::mem::size_of::<Packed>();

    /// An empty pool.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty pool that records one first parent per node (4 bytes per
    /// node less than [`ExprPool::new`]) until the first derivative is
    /// taken ([`ExprPool::dt`], [`ExprPool::diff`],
    /// [`ExprPool::diff_many`]; the total derivative of a leaf does not
    /// count), and two from then on, as [`ExprPool::new`]'s. For a pool
    /// built by lowering a model: its nodes rarely have more than one parent
    /// with the same largest operand, where the derivatives of analysis
    /// add parents to the nodes they differentiate. Its hash table, which
    /// holds the other parents, fills up to a load of ¾ (½ from the
    /// widening on). The nodes, their ids and every expression built are
    /// the same as with [`ExprPool::new`].
    pub fn compact() -> Self {
        ExprPool {
            first_parent: FirstParents::One(Vec::new()),
            ..Self::default()
        }
    }

    /// An empty pool with room for about `nodes` nodes before any
    /// reallocation of its tables (an estimate is enough, e.g. from the
    /// number of equations).
    pub fn with_capacity(nodes: usize) -> Self {
        let mut p = Self::default();
        p.nodes.reserve(nodes);
        p.first_parent.reserve(nodes);
        // The hash table only holds the nodes that are not among the first
        // parents of their anchor (typically well under half of them).
        let slots = nodes.next_power_of_two().max(64);
        p.table = InternTable::with_slots(slots, id_bits_for(nodes));
        p
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// True if the pool holds no node.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The node with id `id`.
    ///
    /// # Panics
    /// Panics if `id` does not come from this pool (ids are only created by
    /// the pool, so this is a programming error, not a user error).
    // (always inlined: the walks call it for every node they visit, and
    // inlined, a caller's match on the node reads the packed record
    // directly)
    #[inline(always)]
    pub fn node(&self, id: ExprId) -> Node<'_> {
        match self.nodes[id.index()] {
            Packed::Const(v) => Node::Const(v),
            Packed::Leaf(l) => Node::Leaf(l),
            Packed::Add2(ref two) => Node::Add(Operands::from(&two[..])),
            Packed::Mul2(ref two) => Node::Mul(Operands::from(&two[..])),
            Packed::AddN(start, len) => Node::Add(self.operand_list(start, len)),
            Packed::MulN(start, len) => Node::Mul(self.operand_list(start, len)),
            Packed::Powi(a, n) => Node::Powi(a, n),
            Packed::Pow(a, b) => Node::Pow(a, b),
            Packed::Func(f, a) => Node::Func(f, a),
            Packed::Func2(f, a, b) => Node::Func2(f, a, b),
            Packed::Cmp(op, a, b) => Node::Cmp(op, a, b),
            Packed::And(a, b) => Node::And(a, b),
            Packed::Or(a, b) => Node::Or(a, b),
            Packed::Not(a) => Node::Not(a),
            Packed::Select(c, a, b) => Node::Select(c, a, b),
            Packed::Call(f, start, len) => Node::Call(f, self.operand_list(start, len)),
        }
    }

    /// Node `id` with its operands (of a sum, product or call) copied into
    /// `buf`: a copy that does not borrow the pool, for code that builds
    /// nodes while it reads this one.
    pub fn node_owned<'b>(&self, id: ExprId, buf: &'b mut Vec<ExprId>) -> Node<'b> {
        let node = self.node(id);
        buf.clear();
        if let Node::Add(ops) | Node::Mul(ops) | Node::Call(_, ops) = node {
            buf.extend_from_slice(&ops);
        }
        node.with_operands(buf)
    }

    /// The operand list of `len` ids at `start` of the operand array.
    #[inline]
    fn operand_list(&self, start: u32, len: u32) -> Operands<'_> {
        Operands::from(&self.operands[start as usize..][..len as usize])
    }

    /// The record of `node` (its operands, unless exactly two, appended
    /// to the operand array).
    ///
    /// # Panics
    /// Panics if the operand array would exceed 2^32 ids (16 GB of ids;
    /// memory runs out long before).
    fn pack(&mut self, node: Node<'_>) -> Packed {
        let mut list = |ops: &[ExprId]| {
            let start = u32::try_from(self.operands.len())
                .ok()
                .filter(|s| {
                    s.checked_add(ops.len() as u32).is_some() && ops.len() < u32::MAX as usize
                })
                .expect("expression pool exceeds 2^32 operands");
            self.operands.extend_from_slice(ops);
            (start, ops.len() as u32)
        };
        match node {
            Node::Const(v) => Packed::Const(v),
            Node::Leaf(l) => Packed::Leaf(l),
            Node::Add(c) => match *c {
                [a, b] => Packed::Add2([a, b]),
                ref ops => {
                    let (start, len) = list(ops);
                    Packed::AddN(start, len)
                }
            },
            Node::Mul(c) => match *c {
                [a, b] => Packed::Mul2([a, b]),
                ref ops => {
                    let (start, len) = list(ops);
                    Packed::MulN(start, len)
                }
            },
            Node::Powi(a, n) => Packed::Powi(a, n),
            Node::Pow(a, b) => Packed::Pow(a, b),
            Node::Func(f, a) => Packed::Func(f, a),
            Node::Func2(f, a, b) => Packed::Func2(f, a, b),
            Node::Cmp(op, a, b) => Packed::Cmp(op, a, b),
            Node::And(a, b) => Packed::And(a, b),
            Node::Or(a, b) => Packed::Or(a, b),
            Node::Not(a) => Packed::Not(a),
            Node::Select(c, a, b) => Packed::Select(c, a, b),
            Node::Call(f, c) => {
                let (start, len) = list(&c);
                Packed::Call(f, start, len)
            }
        }
    }

    /// Whether `other` holds the same nodes under the same ids (constants
    /// compared bit for bit): expressions built in either pool mean the
    /// same in the other.
    pub fn same_nodes(&self, other: &ExprPool) -> bool {
        self.nodes.len() == other.nodes.len()
            && (0..self.nodes.len() as u32)
                .all(|k| self.node(ExprId(k)).same(&other.node(ExprId(k))))
    }

    /// The id of the node at `index`, if the pool has that many nodes.
    pub fn id_at(&self, index: usize) -> Option<ExprId> {
        (index < self.nodes.len()).then_some(ExprId(index as u32))
    }

    /// Interns a node that is already in canonical form.
    fn intern(&mut self, node: Node<'_>) -> ExprId {
        match node {
            Node::Const(v) => {
                let bits = v.to_bits();
                // A small direct-mapped cache in front of the map: a few
                // constants (-1, 0, 1, 2) are looked up very often.
                if self.const_cache.is_empty() {
                    self.const_cache = vec![(0, 0); CONST_CACHE];
                }
                let c = (finish(bits) as usize) & (CONST_CACHE - 1);
                let (cb, cid) = self.const_cache[c];
                if cid != 0 && cb == bits {
                    return ExprId(cid - 1);
                }
                let id = match self.const_ids.get(&bits) {
                    Some(&id) => ExprId(id),
                    None => {
                        let id = self.push(node);
                        self.const_ids.insert(bits, id.0);
                        id
                    }
                };
                self.const_cache[c] = (bits, id.0 + 1);
                id
            }
            Node::Leaf(Leaf::Var { unknown, order }) if order < 4 && unknown < DENSE_LIMIT => {
                let j = unknown as usize;
                let (table, k) = ((order / 2) as usize, (order % 2) as usize);
                if let Some(&id) = self.var_ids[table].get(j).map(|ids| &ids[k])
                    && id != u32::MAX
                {
                    return ExprId(id);
                }
                let id = self.push(node);
                let ids = &mut self.var_ids[table];
                if ids.len() <= j {
                    ids.resize(j + 1, [u32::MAX; 2]);
                }
                ids[j][k] = id.0;
                id
            }
            Node::Leaf(Leaf::Param(ParamId(k))) if k < DENSE_LIMIT => {
                let k = k as usize;
                if let Some(&id) = self.param_ids.get(k)
                    && id != u32::MAX
                {
                    return ExprId(id);
                }
                let id = self.push(node);
                if self.param_ids.len() <= k {
                    self.param_ids.resize(k + 1, u32::MAX);
                }
                self.param_ids[k] = id.0;
                id
            }
            Node::Leaf(l) => {
                if let Some(&id) = self.other_leaves.get(&l) {
                    return ExprId(id);
                }
                let id = self.push(node);
                self.other_leaves.insert(l, id.0);
                id
            }
            Node::Add(c) => self.intern_nary(false, &c),
            Node::Mul(c) => self.intern_nary(true, &c),
            _ => {
                let anchor = node.anchor();
                self.intern_composite(node, anchor)
            }
        }
    }

    /// Finds or inserts a composite node. `anchor` is its largest operand
    /// id: the first two composite nodes anchored at each id are found
    /// through the dense `first_parent` table (one access close to the
    /// operand, usually just created, so in cache), the others through the
    /// hash table.
    #[inline]
    fn intern_composite(&mut self, key: Node<'_>, anchor: u32) -> ExprId {
        let a = anchor as usize;
        let (parents, slots) = self.first_parent.of(a);
        for (k, &fp) in parents[..slots].iter().enumerate() {
            if fp == 0 {
                let id = self.push(key);
                self.first_parent.set(a, k, id.0 + 1);
                return id;
            }
            if key.same(&self.node(ExprId(fp - 1))) {
                return ExprId(fp - 1);
            }
        }
        let h = key.fx_hash();
        match self.table.probe(h, |id| key.same(&self.node(ExprId(id)))) {
            Probe::Found(id) => ExprId(id),
            Probe::Vacant(slot) => self.insert(key, h, slot),
        }
    }

    /// Interns the sum (`mul = false`) or product of `kids`, which must
    /// already be in canonical form.
    fn intern_nary(&mut self, mul: bool, kids: &[ExprId]) -> ExprId {
        let ops = Operands::from(kids);
        let key = if mul { Node::Mul(ops) } else { Node::Add(ops) };
        self.intern_composite(key, key.anchor())
    }

    /// Appends a composite node and enters it in the table at `slot` (from
    /// a probe that found no equal node).
    fn insert(&mut self, node: Node<'_>, h: u64, slot: usize) -> ExprId {
        let id = self.push(node);
        self.table.len += 1;
        // (a load of at most ½, ¾ in a compact pool: linear probing with
        // tags reads about one cache line more per lookup at ¾)
        let quarters = match self.first_parent {
            FirstParents::One(_) => 3,
            FirstParents::Two(_) => 2,
        };
        let full = slot == usize::MAX || self.table.len * 4 > self.table.slots.len() * quarters;
        match slot_value(h, id.0, self.table.id_bits) {
            Some(s) if !full => self.table.slots[slot] = s,
            _ => {
                let slots = if full {
                    (self.table.slots.len() * 2).max(64)
                } else {
                    self.table.slots.len()
                };
                self.rebuild_table(slots);
                let s = slot_value(h, id.0, self.table.id_bits)
                    .expect("id bits are chosen for twice the pool's size");
                self.table.place(h, s);
            }
        }
        id
    }

    /// Rebuilds the interning table with `slots` slots and the id bits for
    /// the pool's size, re-placing its entries by their nodes' hashes.
    fn rebuild_table(&mut self, slots: usize) {
        // The ids in increasing order, so the nodes are read sequentially
        // rather than in the old table's (hash) order; each id is in the
        // table once, so the order of placement changes no lookup. The
        // old table is freed before the new one is allocated.
        let mut ids: Vec<u32> = self.table.ids().collect();
        ids.sort_unstable();
        let len = self.table.len;
        self.table = InternTable::default();
        self.table = InternTable::with_slots(slots, id_bits_for(self.nodes.len()));
        self.table.len = len;
        for id in ids {
            self.place_in_table(id);
        }
    }

    /// Places node `id` in the interning table (which has room for it).
    fn place_in_table(&mut self, id: u32) {
        let h = self.node(ExprId(id)).fx_hash();
        let s = slot_value(h, id, self.table.id_bits)
            .expect("id bits are chosen for twice the pool's size");
        self.table.place(h, s);
    }

    /// Gives a pool of [`ExprPool::compact`] its second first-parent slot
    /// per node (nothing for one that has it): the second parent of each
    /// anchor, the first of its parents in the hash table (they entered it
    /// in the order of their ids), moves to the new slot and the table is
    /// rebuilt with the others, so that the slots and the table hold what
    /// they would hold had the pool had two slots from the start.
    #[inline]
    pub(crate) fn widen_parents(&mut self) {
        if matches!(self.first_parent, FirstParents::One(_)) {
            self.widen_parents_now();
        }
    }

    #[cold]
    fn widen_parents_now(&mut self) {
        let FirstParents::One(one) = &self.first_parent else {
            return;
        };
        let mut two: Vec<[u32; 2]> = one.iter().map(|&p| [p, 0]).collect();
        let mut ids: Vec<u32> = self.table.ids().collect();
        ids.sort_unstable();
        ids.retain(|&id| {
            let a = self.node(ExprId(id)).anchor() as usize;
            if two[a][1] == 0 {
                two[a][1] = id + 1;
                false
            } else {
                true
            }
        });
        self.first_parent = FirstParents::Two(two);
        let slots = (ids.len() * 2).next_power_of_two().max(64);
        self.table = InternTable::with_slots(slots, id_bits_for(self.nodes.len()));
        self.table.len = ids.len();
        for id in ids {
            self.place_in_table(id);
        }
    }

    /// A cleared spare id buffer (see [`ExprPool::give_ids`]).
    pub(crate) fn take_ids(&mut self) -> Vec<ExprId> {
        let mut v = self.spare_ids.pop().unwrap_or_default();
        v.clear();
        v
    }

    /// Returns a buffer from [`ExprPool::take_ids`] for reuse.
    /// (A buffer that never allocated is dropped: the spare buffers stay
    /// as many as were taken, as a [`Partial`] gives back buffers it did
    /// not take.)
    pub(crate) fn give_ids(&mut self, v: Vec<ExprId>) {
        if v.capacity() > 0 {
            self.spare_ids.push(v);
        }
    }

    /// Appends a node.
    ///
    /// # Panics
    /// Panics if the pool would exceed 2^32 − 1 nodes (about 100 GB of
    /// nodes; memory runs out long before).
    fn push(&mut self, node: Node<'_>) -> ExprId {
        let id = u32::try_from(self.nodes.len())
            .ok()
            .filter(|&id| id != u32::MAX)
            .expect("expression pool exceeds 2^32 - 1 nodes");
        let packed = self.pack(node);
        self.nodes.push(packed);
        self.first_parent.push();
        ExprId(id)
    }

    /// The constant `v` (every NaN is stored as the canonical `f64::NAN`).
    pub fn constant(&mut self, v: f64) -> ExprId {
        let v = if v.is_nan() { f64::NAN } else { v };
        self.intern(Node::Const(v))
    }

    /// The independent variable `time`.
    pub fn time(&mut self) -> ExprId {
        self.intern(Node::Leaf(Leaf::Time))
    }

    /// The parameter `p`.
    pub fn param(&mut self, p: ParamId) -> ExprId {
        self.intern(Node::Leaf(Leaf::Param(p)))
    }

    /// The `order`-th derivative of unknown `unknown`.
    pub fn var(&mut self, unknown: u32, order: u32) -> ExprId {
        self.intern(Node::Leaf(Leaf::Var { unknown, order }))
    }

    /// The leaf `l`.
    pub fn leaf(&mut self, l: Leaf) -> ExprId {
        self.intern(Node::Leaf(l))
    }

    /// The value of `e` if it is a constant node.
    pub fn as_constant(&self, e: ExprId) -> Option<f64> {
        match self.node(e) {
            Node::Const(v) => Some(v),
            _ => None,
        }
    }

    /// The leaf of `e` if it is a leaf node.
    pub fn as_leaf(&self, e: ExprId) -> Option<Leaf> {
        match self.node(e) {
            Node::Leaf(l) => Some(l),
            _ => None,
        }
    }

    /// The id of an already interned constant, if any (no insertion).
    pub(crate) fn constant_id(&self, v: f64) -> Option<ExprId> {
        let v = if v.is_nan() { f64::NAN } else { v };
        self.const_ids.get(&v.to_bits()).map(|&id| ExprId(id))
    }

    pub(crate) fn is_zero(&self, e: ExprId) -> bool {
        self.as_constant(e) == Some(0.0)
    }

    /// `a + b`.
    pub fn add(&mut self, a: ExprId, b: ExprId) -> ExprId {
        self.sum(&[a, b])
    }

    /// `a - b`, stored as `a + (-1)·b`.
    pub fn sub(&mut self, a: ExprId, b: ExprId) -> ExprId {
        if matches!(self.node(b), Node::Add(_)) {
            // `(-1)·b` would be distributed over the terms of `b` by the
            // sum: do that directly, without interning `(-1)·b`.
            self.constant(-1.0);
            return self.sum_node(&[], &[a], Some(b));
        }
        let nb = self.neg(b);
        self.sum(&[a, nb])
    }

    /// `a * b`.
    pub fn mul(&mut self, a: ExprId, b: ExprId) -> ExprId {
        self.product(&[a, b])
    }

    /// `a / b`, stored as `a · b^(-1)`.
    pub fn div(&mut self, a: ExprId, b: ExprId) -> ExprId {
        let rb = self.powi(b, -1);
        self.product(&[a, rb])
    }

    /// `-a`, stored as `(-1)·a`.
    pub fn neg(&mut self, a: ExprId) -> ExprId {
        let m1 = self.constant(-1.0);
        match self.negated_product(a) {
            Some(r) => r,
            None => self.product(&[m1, a]),
        }
    }

    /// `c · a` for a numeric coefficient `c`.
    pub fn scale(&mut self, c: f64, a: ExprId) -> ExprId {
        let k = self.constant(c);
        if c == -1.0
            && let Some(r) = self.negated_product(a)
        {
            return r;
        }
        self.product(&[k, a])
    }

    /// `(-1)·a` for a product `a` (`None` for any other node), built from
    /// `a`'s canonical factors without [`ExprPool::product`]'s flattening,
    /// sorting and collection: the node `product(&[-1, a])` gives, since
    /// that collection of `a`'s factors gives `a`'s factors again and the
    /// negation only flips the sign of the coefficient `k` (1 when `a` has
    /// no constant factor). `-k` is exact, it is never 0 (`a` would be 0),
    /// and the test that cancels a constant's reciprocal against the
    /// coefficient (`k / r` exact) holds for `-k` exactly when for `k`. So
    /// the factors are `-k` and the others, or the others alone when
    /// `-k = 1` (the one other itself if it is alone). The caller has
    /// interned the constant `-1`, as `product`'s callers do.
    fn negated_product(&mut self, a: ExprId) -> Option<ExprId> {
        if !matches!(self.node(a), Node::Mul(_)) {
            return None;
        }
        let mut ops = self.take_ids();
        if let Node::Mul(fs) = self.node(a) {
            ops.extend_from_slice(&fs);
        }
        let k = match self.node(ops[0]) {
            Node::Const(k) => {
                ops.remove(0);
                k
            }
            _ => 1.0,
        };
        let r = if -k == 1.0 && ops.len() == 1 {
            ops[0]
        } else {
            if -k != 1.0 {
                let c = self.constant(-k);
                ops.insert(0, c);
            }
            self.intern_nary(true, &ops)
        };
        self.give_ids(ops);
        Some(r)
    }

    /// `a ^ b` with a real exponent; integer constant exponents become
    /// [`ExprPool::powi`].
    pub fn pow(&mut self, a: ExprId, b: ExprId) -> ExprId {
        if let Some(bv) = self.as_constant(b) {
            if bv.fract() == 0.0 && bv.abs() <= f64::from(i32::MAX) {
                return self.powi(a, bv as i32);
            }
            if let Some(av) = self.as_constant(a) {
                return self.constant(av.powf(bv));
            }
        }
        self.intern(Node::Pow(a, b))
    }

    /// `a ^ n` for an integer `n`.
    pub fn powi(&mut self, a: ExprId, n: i32) -> ExprId {
        if n == 0 {
            return self.constant(1.0);
        }
        if n == 1 {
            return a;
        }
        match self.node(a) {
            Node::Const(c) if n > 0 || is_exact_reciprocal(c) => {
                return self.constant(c.powi(n));
            }
            // A negative base moves its sign out: c^n = ±|c|^n.
            Node::Const(c) if c < 0.0 => {
                let pos = self.constant(-c);
                let p = self.powi(pos, n);
                return if n % 2 == 0 { p } else { self.neg(p) };
            }
            // c^(-k) with an inexact reciprocal: fold the positive power and
            // keep one reciprocal, (c^k)^(-1), so it prints as `1 / 9.0`.
            Node::Const(c) if n < -1 => {
                if let Some(k) = n.checked_neg() {
                    let ck = self.constant(c.powi(k));
                    return self.powi(ck, -1);
                }
            }
            Node::Powi(b, m) => {
                if let Some(mn) = m.checked_mul(n) {
                    return self.powi(b, mn);
                }
            }
            Node::Mul(_) => {
                let mut fs_buf = self.spare_ids.pop().unwrap_or_default();
                self.node_owned(a, &mut fs_buf);
                let mut parts = self.take_ids();
                for &f in &fs_buf {
                    let p = self.powi(f, n);
                    parts.push(p);
                }
                let r = self.product(&parts);
                self.give_ids(fs_buf);
                self.give_ids(parts);
                return r;
            }
            _ => {}
        }
        self.intern(Node::Powi(a, n))
    }

    /// `p + b`, with a partial sum not interned (see [`Partial`]).
    pub fn partial_add(&mut self, p: Partial, b: ExprId) -> Partial {
        match p.0 {
            PartialRepr::Sum(ops) => self.partial_sum(ops, &[b], None),
            repr => {
                let a = self.finish(Partial(repr));
                self.partial_sum(Vec::new(), &[a, b], None)
            }
        }
    }

    /// `p - b`, with a partial sum not interned (see [`Partial`]).
    pub fn partial_sub(&mut self, p: Partial, b: ExprId) -> Partial {
        // As `sub`, with the operands of a partial sum in place of `a`.
        let (ops, a) = match p.0 {
            PartialRepr::Sum(ops) => (ops, None),
            repr => (Vec::new(), Some(self.finish(Partial(repr)))),
        };
        let a = a.as_slice();
        if matches!(self.node(b), Node::Add(_)) {
            self.constant(-1.0);
            return self.partial_sum_from(ops, a, &[], Some(b));
        }
        let nb = self.neg(b);
        self.partial_sum_from(ops, a, &[nb], None)
    }

    /// `p · b`, with a partial product not interned (see [`Partial`]).
    pub fn partial_mul(&mut self, p: Partial, b: ExprId) -> Partial {
        match p.0 {
            PartialRepr::Product(ops) => self.partial_product(&[], ops, &[b]),
            repr => {
                let a = self.finish(Partial(repr));
                self.partial_product(&[a, b], Vec::new(), &[])
            }
        }
    }

    /// `p / b`, stored as `p · b^(-1)` (see [`Partial`]).
    pub fn partial_div(&mut self, p: Partial, b: ExprId) -> Partial {
        // A partial sum is interned first, as `div` finds it.
        let p = self.as_product(p);
        let rb = self.powi(b, -1);
        self.partial_mul(p, rb)
    }

    /// `-p`, stored as `(-1)·p` (see [`Partial`]).
    pub fn partial_neg(&mut self, p: Partial) -> Partial {
        // A partial sum is interned first, as `neg` finds it.
        let p = self.as_product(p);
        let m1 = self.constant(-1.0);
        match p.0 {
            PartialRepr::Product(ops) => self.partial_product(&[m1], ops, &[]),
            repr => {
                let a = self.finish(Partial(repr));
                self.partial_product(&[m1, a], Vec::new(), &[])
            }
        }
    }

    /// `p` with a partial sum interned (a partial product stays one).
    fn as_product(&mut self, p: Partial) -> Partial {
        match p.0 {
            PartialRepr::Sum(_) => Partial::from(self.finish(p)),
            _ => p,
        }
    }

    /// The expression `p` stands for, interned.
    pub fn finish(&mut self, p: Partial) -> ExprId {
        let (mul, ops) = match p.0 {
            PartialRepr::Id(id) => return id,
            PartialRepr::Sum(ops) => (false, ops),
            PartialRepr::Product(ops) => (true, ops),
        };
        let r = self.intern_nary(mul, &ops);
        self.give_ids(ops);
        r
    }

    /// The sum of the partial sum's operands `ops` and `terms`, as a
    /// [`Partial`].
    fn partial_sum(&mut self, ops: Vec<ExprId>, terms: &[ExprId], neg: Option<ExprId>) -> Partial {
        self.partial_sum_from(ops, &[], terms, neg)
    }

    /// [`ExprPool::sum_in`] of the operands `ops` of a partial sum, the
    /// terms `first` and `terms` and `neg`, as a [`Partial`] (`ops` is
    /// recycled).
    fn partial_sum_from(
        &mut self,
        ops: Vec<ExprId>,
        first: &[ExprId],
        terms: &[ExprId],
        neg: Option<ExprId>,
    ) -> Partial {
        let mut out = self.take_ids();
        let r = if first.is_empty() {
            self.sum_in(&ops, terms, neg, &mut out)
        } else {
            let mut all = self.take_ids();
            all.extend_from_slice(first);
            all.extend_from_slice(terms);
            let r = self.sum_in(&ops, &all, neg, &mut out);
            self.give_ids(all);
            r
        };
        self.give_ids(ops);
        self.partial_result(r, out, false)
    }

    /// The [`Partial`] of what `sum_in` (`mul` false) or `product_in`
    /// returned, with `out` its operands when it returned `None`.
    fn partial_result(&mut self, r: Option<ExprId>, out: Vec<ExprId>, mul: bool) -> Partial {
        match r {
            Some(id) => {
                self.give_ids(out);
                Partial(PartialRepr::Id(id))
            }
            None if mul => Partial(PartialRepr::Product(out)),
            None => Partial(PartialRepr::Sum(out)),
        }
    }

    /// [`ExprPool::product_in`] of `factors`, the operands `ops` of a
    /// partial product and `after`, as a [`Partial`] (`ops` is recycled).
    fn partial_product(
        &mut self,
        factors: &[ExprId],
        ops: Vec<ExprId>,
        after: &[ExprId],
    ) -> Partial {
        let mut flat = std::mem::take(&mut self.scratch_pows);
        flat.clear();
        let mut out = self.take_ids();
        let r = self.product_in(factors, &ops, after, &mut flat, &mut out);
        self.scratch_pows = flat;
        self.give_ids(ops);
        self.partial_result(r, out, true)
    }

    /// The n-ary sum of `terms` (0 for an empty slice).
    pub fn sum(&mut self, terms: &[ExprId]) -> ExprId {
        self.sum_node(&[], terms, None)
    }

    /// [`ExprPool::sum_in`], interned.
    fn sum_node(&mut self, partial: &[ExprId], terms: &[ExprId], neg: Option<ExprId>) -> ExprId {
        let mut out = self.take_ids();
        let r = match self.sum_in(partial, terms, neg, &mut out) {
            Some(r) => r,
            None => self.intern_nary(false, &out),
        };
        self.give_ids(out);
        r
    }

    /// The sum of the operands `partial` of a sum not interned (a
    /// [`Partial`]; empty for none), then `terms`, plus `-1·neg`
    /// distributed over the terms of the sum `neg` when given (exactly
    /// what the term `(-1)·neg` would give, without building that
    /// product). `None` when the result is a new sum of two or more terms,
    /// whose canonical operands are left in `out` (not interned).
    fn sum_in(
        &mut self,
        partial: &[ExprId],
        terms: &[ExprId],
        neg: Option<ExprId>,
        out: &mut Vec<ExprId>,
    ) -> Option<ExprId> {
        let mut flat = std::mem::take(&mut self.scratch_ids);
        flat.clear();
        // Flatten nested sums and fold constants.
        let mut konst = -0.0_f64; // -0.0 is the identity of IEEE addition
        let mut has_const = false;
        // The operands of a partial sum, as those of an interned one.
        self.sum_operands(partial, &mut flat, &mut konst, &mut has_const);
        self.sum_terms(terms, &mut flat, &mut konst, &mut has_const);
        if let Some(b) = neg {
            self.distribute(-1.0, b, &mut flat, &mut konst, &mut has_const);
        }
        let r = self.sum_finish(&mut flat, konst, has_const, out);
        self.scratch_ids = flat;
        r
    }

    /// The operands `ts` of a sum, into `flat` (its constant into `konst`).
    fn sum_operands(
        &self,
        ts: &[ExprId],
        flat: &mut Vec<ExprId>,
        konst: &mut f64,
        has_const: &mut bool,
    ) {
        for &u in ts {
            if let Node::Const(c) = self.node(u) {
                *konst += c;
                *has_const = true;
            } else {
                flat.push(u);
            }
        }
    }

    /// `c·u` for every term `u` of the sum `add`, into `flat` (constants
    /// into `konst`).
    fn distribute(
        &mut self,
        c: f64,
        add: ExprId,
        flat: &mut Vec<ExprId>,
        konst: &mut f64,
        has_const: &mut bool,
    ) {
        let mut ts_buf = self.take_ids();
        if let Node::Add(ts) = self.node(add) {
            ts_buf.extend_from_slice(&ts);
        }
        for &u in &ts_buf {
            let cu = self.scale(c, u);
            if let Node::Const(v) = self.node(cu) {
                *konst += v;
                *has_const = true;
            } else {
                flat.push(cu);
            }
        }
        self.give_ids(ts_buf);
    }

    /// Flattens the terms of a sum into `flat` and folds its constants.
    fn sum_terms(
        &mut self,
        terms: &[ExprId],
        flat: &mut Vec<ExprId>,
        konst: &mut f64,
        has_const: &mut bool,
    ) {
        for &t in terms {
            match self.node(t) {
                Node::Const(c) => {
                    *konst += c;
                    *has_const = true;
                }
                Node::Add(ts) => self.sum_operands(&ts, flat, konst, has_const),
                // `c·(a + b)` inside a sum is distributed: `c·a + c·b`.
                Node::Mul(fs) if fs.len() == 2 && matches!(self.node(fs[1]), Node::Add(_)) => {
                    if let Node::Const(c) = self.node(fs[0]) {
                        let add = fs[1];
                        self.distribute(c, add, flat, konst, has_const);
                    } else {
                        flat.push(t);
                    }
                }
                _ => flat.push(t),
            }
        }
    }

    /// Collects like terms of the flattened sum: its value, or `None` with
    /// the operands of a new sum in `out` (empty on entry).
    fn sum_finish(
        &mut self,
        flat: &mut [ExprId],
        mut konst: f64,
        mut has_const: bool,
        out: &mut Vec<ExprId>,
    ) -> Option<ExprId> {
        if flat.is_empty() {
            return Some(self.constant(if has_const { konst } else { 0.0 }));
        }
        // Collect like terms: `c1·core + c2·core` → `(c1+c2)·core`.
        if flat.len() == 1 {
            out.push(flat[0]);
        } else {
            let mut parts = self.spare_parts.pop().unwrap_or_default();
            parts.clear();
            parts.extend(flat.iter().map(|&t| self.term_parts(t)));
            parts.sort_by(|a, b| self.core(a).cmp(self.core(b)));
            let mut i = 0;
            while i < parts.len() {
                let mut j = i + 1;
                let mut coef = parts[i].coef;
                while j < parts.len() && self.core(&parts[j]) == self.core(&parts[i]) {
                    coef += parts[j].coef;
                    j += 1;
                }
                if j == i + 1 {
                    out.push(parts[i].term);
                } else if coef != 0.0 {
                    let t = self.rebuild_term(coef, parts[i]);
                    match self.node(t) {
                        Node::Const(c) => {
                            konst += c;
                            has_const = true;
                        }
                        _ => out.push(t),
                    }
                }
                i = j;
            }
            self.spare_parts.push(parts);
        }
        out.sort_unstable();
        if has_const && konst != 0.0 {
            let k = self.constant(konst);
            out.insert(0, k);
        }
        match out.len() {
            0 => Some(self.constant(0.0)),
            1 => Some(out[0]),
            _ => None,
        }
    }

    fn term_parts(&self, t: ExprId) -> TermParts {
        match self.node(t) {
            Node::Mul(fs) => match self.node(fs[0]) {
                Node::Const(c) => TermParts {
                    coef: c,
                    term: t,
                    skip: 1,
                },
                _ => TermParts {
                    coef: 1.0,
                    term: t,
                    skip: 0,
                },
            },
            _ => TermParts {
                coef: 1.0,
                term: t,
                skip: u32::MAX,
            },
        }
    }

    fn core<'a>(&'a self, p: &'a TermParts) -> &'a [ExprId] {
        if p.skip == u32::MAX {
            std::slice::from_ref(&p.term)
        } else {
            match self.node(p.term) {
                Node::Mul(fs) => &fs.as_slice()[p.skip as usize..],
                _ => std::slice::from_ref(&p.term),
            }
        }
    }

    fn rebuild_term(&mut self, coef: f64, p: TermParts) -> ExprId {
        let core: Vec<ExprId> = self.core(&p).to_vec();
        let mut fs = Vec::with_capacity(core.len() + 1);
        fs.push(self.constant(coef));
        fs.extend_from_slice(&core);
        self.product(&fs)
    }

    /// The n-ary product of `factors` (1 for an empty slice).
    pub fn product(&mut self, factors: &[ExprId]) -> ExprId {
        let mut flat = std::mem::take(&mut self.scratch_pows);
        flat.clear();
        let mut out = self.take_ids();
        let r = match self.product_in(factors, &[], &[], &mut flat, &mut out) {
            Some(r) => r,
            None => self.intern_nary(true, &out),
        };
        self.scratch_pows = flat;
        self.give_ids(out);
        r
    }

    /// The product of `factors`, then the operands `partial` of a product
    /// not interned (a [`Partial`]; empty for none), then `after`: its
    /// value, or `None` with the canonical operands of a new product of
    /// two or more factors in `out` (not interned).
    fn product_in(
        &mut self,
        factors: &[ExprId],
        partial: &[ExprId],
        after: &[ExprId],
        flat: &mut Vec<(ExprId, i32)>,
        out: &mut Vec<ExprId>,
    ) -> Option<ExprId> {
        let mut coef = 1.0_f64;
        let push =
            |pool: &Self, flat: &mut Vec<(ExprId, i32)>, coef: &mut f64, f: ExprId| match pool
                .node(f)
            {
                Node::Const(c) => *coef *= c,
                Node::Powi(b, n) => flat.push((b, n)),
                _ => flat.push((f, 1)),
            };
        // A product among the factors is flattened into its operands.
        let push_factor =
            |pool: &Self, flat: &mut Vec<(ExprId, i32)>, coef: &mut f64, f: ExprId| {
                if let Node::Mul(fs) = pool.node(f) {
                    for &g in fs.iter() {
                        push(pool, flat, coef, g);
                    }
                } else {
                    push(pool, flat, coef, f);
                }
            };
        for &f in factors {
            push_factor(self, flat, &mut coef, f);
        }
        // The operands of a partial product, as those of an interned one.
        for &g in partial {
            push(self, flat, &mut coef, g);
        }
        for &f in after {
            push_factor(self, flat, &mut coef, f);
        }
        if coef == 0.0 && !flat.is_empty() {
            // `x * 0 → 0` (required by the issue, even for infinite/NaN x).
            return Some(self.constant(0.0));
        }
        // Collect like factors: `b^m · b^n` → `b^(m+n)`.
        flat.sort_unstable_by_key(|&(b, _)| b);
        let mut distributed = false;
        let mut i = 0;
        while i < flat.len() {
            let (base, mut n) = flat[i];
            let mut j = i + 1;
            let mut merged = false;
            while j < flat.len() && flat[j].0 == base {
                match n.checked_add(flat[j].1) {
                    Some(s) => {
                        n = s;
                        merged = true;
                        j += 1;
                    }
                    None => break,
                }
            }
            let f = if merged {
                self.powi(base, n)
            } else if n != 1 {
                // Unchanged `Powi` factor: rebuild without re-canonicalising.
                self.intern(Node::Powi(base, n))
            } else {
                // (an unchanged factor: `powi(base, 1)` is `base`)
                base
            };
            match self.node(f) {
                Node::Const(c) => coef *= c,
                Node::Mul(gs) => {
                    // A power of a product is distributed; keep it flat.
                    distributed = true;
                    for g in gs.iter() {
                        match self.node(*g) {
                            Node::Const(c) => coef *= c,
                            _ => out.push(*g),
                        }
                    }
                }
                _ => out.push(f),
            }
            i = j;
        }
        // Merge the reciprocals of constants into one `(c1·c2·…)^(-1)` with a
        // positive base (the sign goes to the coefficient), and cancel it
        // against the coefficient when the quotient is exact:
        // `3 · x · 3^(-1)` → `x`, but `x · 3^(-1)` stays.
        let mut recip = 1.0_f64;
        let mut n_recip = 0;
        // (Only negative powers, or powers distributed over a product, can
        // give `c^(-1)` factors.)
        let may_recip = flat.iter().any(|&(_, n)| n < 0) || distributed;
        if may_recip {
            out.retain(|f| {
                if let Node::Powi(b, -1) = self.node(*f)
                    && let Node::Const(bv) = self.node(b)
                {
                    recip *= bv;
                    n_recip += 1;
                    return false;
                }
                true
            });
        }
        if n_recip > 0 {
            if recip.is_sign_negative() {
                recip = -recip;
                coef = -coef;
            }
            let q = coef / recip;
            if q.is_finite() && q.mul_add(recip, -coef) == 0.0 {
                coef = q;
            } else {
                let rc = self.constant(recip);
                let r = self.powi(rc, -1);
                match self.node(r) {
                    Node::Const(c) => coef *= c,
                    _ => out.push(r),
                }
            }
        }
        if out.is_empty() {
            return Some(self.constant(coef));
        }
        if coef == 0.0 {
            return Some(self.constant(0.0));
        }
        out.sort_unstable();
        if coef != 1.0 {
            let k = self.constant(coef);
            out.insert(0, k);
        }
        match out.len() {
            0 => Some(self.constant(1.0)),
            1 => Some(out[0]),
            _ => None,
        }
    }

    /// A unary function application (constant arguments are folded).
    pub fn func(&mut self, f: Func, a: ExprId) -> ExprId {
        if let Some(v) = self.as_constant(a) {
            return self.constant(apply_func(f, v));
        }
        match (f, self.node(a)) {
            // abs(abs(x)) = abs(x), abs(sign(x))… keep simple and exact.
            (Func::Abs, Node::Func(Func::Abs, _)) => return a,
            (Func::Sign, Node::Func(Func::Sign, _)) => return a,
            _ => {}
        }
        self.intern(Node::Func(f, a))
    }

    /// A binary function application (constant arguments are folded;
    /// `min`/`max` operands are ordered, `min(a, a)` → `a`).
    pub fn func2(&mut self, f: Func2, a: ExprId, b: ExprId) -> ExprId {
        if let (Some(x), Some(y)) = (self.as_constant(a), self.as_constant(b)) {
            return self.constant(apply_func2(f, x, y));
        }
        let (a, b) = match f {
            Func2::Min | Func2::Max => {
                if a == b {
                    return a;
                }
                (a.min(b), a.max(b))
            }
            Func2::Atan2 => (a, b),
        };
        self.intern(Node::Func2(f, a, b))
    }

    /// A comparison, 1.0 when true and 0.0 when false.
    pub fn cmp(&mut self, op: CmpOp, a: ExprId, b: ExprId) -> ExprId {
        if let (Some(x), Some(y)) = (self.as_constant(a), self.as_constant(b)) {
            return self.constant(apply_cmp(op, x, y));
        }
        let (op, a, b) = match op {
            CmpOp::Gt => (CmpOp::Lt, b, a),
            CmpOp::Ge => (CmpOp::Le, b, a),
            CmpOp::Eq | CmpOp::Ne => (op, a.min(b), a.max(b)),
            _ => (op, a, b),
        };
        self.intern(Node::Cmp(op, a, b))
    }

    fn is_bool(&self, e: ExprId) -> bool {
        match self.node(e) {
            Node::Const(c) => c == 0.0 || c == 1.0,
            ref n => n.is_boolean(),
        }
    }

    /// Logical and (1.0/0.0).
    pub fn and(&mut self, a: ExprId, b: ExprId) -> ExprId {
        match (self.as_constant(a), self.as_constant(b)) {
            (Some(x), Some(y)) => return self.constant(f64::from(x != 0.0 && y != 0.0)),
            (Some(0.0), None) => return self.constant(0.0),
            (None, Some(0.0)) => return self.constant(0.0),
            (Some(_), None) if self.is_bool(b) => return b,
            (None, Some(_)) if self.is_bool(a) => return a,
            _ => {}
        }
        if a == b && self.is_bool(a) {
            return a;
        }
        self.intern(Node::And(a.min(b), a.max(b)))
    }

    /// Logical or (1.0/0.0).
    pub fn or(&mut self, a: ExprId, b: ExprId) -> ExprId {
        match (self.as_constant(a), self.as_constant(b)) {
            (Some(x), Some(y)) => return self.constant(f64::from(x != 0.0 || y != 0.0)),
            (Some(x), None) if x != 0.0 => return self.constant(1.0),
            (None, Some(y)) if y != 0.0 => return self.constant(1.0),
            (Some(_), None) if self.is_bool(b) => return b,
            (None, Some(_)) if self.is_bool(a) => return a,
            _ => {}
        }
        if a == b && self.is_bool(a) {
            return a;
        }
        self.intern(Node::Or(a.min(b), a.max(b)))
    }

    /// Logical negation (1.0/0.0).
    pub fn not(&mut self, a: ExprId) -> ExprId {
        match self.node(a) {
            Node::Const(x) => self.constant(f64::from(x == 0.0)),
            Node::Not(b) if self.is_bool(b) => b,
            _ => self.intern(Node::Not(a)),
        }
    }

    /// `if cond then then_ else else_` (a constant condition selects a branch;
    /// equal branches collapse).
    pub fn select(&mut self, cond: ExprId, then_: ExprId, else_: ExprId) -> ExprId {
        if let Some(c) = self.as_constant(cond) {
            return if c != 0.0 { then_ } else { else_ };
        }
        if then_ == else_ {
            return then_;
        }
        self.intern(Node::Select(cond, then_, else_))
    }

    /// Rebuilds `node` with new children through the canonicalising
    /// constructors (leaves and constants are re-interned as they are).
    /// `kids` must list the new children in [`Node::children`] order.
    pub(crate) fn rebuild(&mut self, node: &Node<'_>, kids: &[ExprId]) -> ExprId {
        match *node {
            Node::Const(v) => self.constant(v),
            Node::Leaf(l) => self.leaf(l),
            Node::Add(_) => self.sum(kids),
            Node::Mul(_) => self.product(kids),
            Node::Powi(_, n) => self.powi(kids[0], n),
            Node::Pow(..) => self.pow(kids[0], kids[1]),
            Node::Func(f, _) => self.func(f, kids[0]),
            Node::Func2(f, ..) => self.func2(f, kids[0], kids[1]),
            Node::Cmp(op, ..) => self.cmp(op, kids[0], kids[1]),
            Node::And(..) => self.and(kids[0], kids[1]),
            Node::Or(..) => self.or(kids[0], kids[1]),
            Node::Not(_) => self.not(kids[0]),
            Node::Select(..) => self.select(kids[0], kids[1], kids[2]),
            Node::Call(f, _) => self.call(f, kids),
        }
    }

    /// Adds `f` to the functions that calls of this pool can evaluate.
    /// `None` beyond [`Callee::MAX_FUNCTIONS`] functions.
    pub fn add_function(&mut self, f: Function) -> Option<FuncId> {
        let id = u32::try_from(self.functions.len())
            .ok()
            .filter(|&k| k < Callee::MAX_FUNCTIONS)?;
        self.functions.push(Arc::new(f));
        Some(FuncId(id))
    }

    /// The function `id` (of [`ExprPool::add_function`]).
    ///
    /// # Panics
    /// Panics if `id` does not come from this pool.
    pub fn function(&self, id: FuncId) -> &Function {
        &self.functions[id.0 as usize]
    }

    /// The shared handle of function `id`, for evaluators that outlive a
    /// borrow of the pool.
    pub(crate) fn function_arc(&self, id: FuncId) -> Arc<Function> {
        Arc::clone(&self.functions[id.0 as usize])
    }

    /// Every function of the pool, by [`FuncId`] order.
    pub fn functions(&self) -> impl Iterator<Item = (FuncId, &Function)> {
        self.functions
            .iter()
            .enumerate()
            .map(|(k, f)| (FuncId(k as u32), f.as_ref()))
    }

    /// Whether some node of the pool calls a function (a model whose
    /// emitted code or native form would need the interpreter).
    pub fn has_calls(&self) -> bool {
        !self.functions.is_empty() && self.nodes.iter().any(|n| matches!(n, Packed::Call(..)))
    }

    /// The first failed call of a function of the pool, if any (see
    /// [`Function::failure`]).
    pub fn call_failure(&self) -> Option<crate::CallError> {
        self.functions.iter().find_map(|f| f.failure())
    }

    /// The function whose derivative was needed beyond
    /// [`crate::MAX_DERIVATIVE_ORDER`], if any: the derivatives built
    /// after that point hold NaN in its place, so a caller checks this
    /// after differentiating and reports it.
    pub fn derivative_limit(&self) -> Option<FuncId> {
        self.derivative_limit
    }

    /// The call of `callee` on `args` (one per input of the function);
    /// a call whose arguments are all constants is folded to its value
    /// (unless the call fails).
    pub fn call(&mut self, callee: Callee, args: &[ExprId]) -> ExprId {
        let consts: Option<Vec<f64>> = args.iter().map(|&a| self.as_constant(a)).collect();
        if let Some(values) = consts
            && let Ok(out) = self.function(callee.function()).call(&values)
            && let Some(&v) = out.get(callee.output())
        {
            return self.constant(v);
        }
        self.intern(Node::Call(callee, Operands::from(args)))
    }
}

/// True when `1/c` (and hence every `c^-n`) is computed exactly: `c` is a
/// power of two, zero (1/0 = inf), infinite or NaN.
fn is_exact_reciprocal(c: f64) -> bool {
    (c.is_normal() && c.to_bits() & ((1u64 << 52) - 1) == 0) || c == 0.0 || !c.is_finite()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_keeps_its_nodes_when_ids_outgrow_the_slot_bits() {
        // Five parents per leaf `y`: the first two are found through the
        // first-parent table, the other three through the hash table,
        // which holds more than 2^16 nodes at the end (so it was rebuilt
        // with more id bits on the way).
        let mut p = ExprPool::new();
        let x = p.var(0, 0);
        let build = |p: &mut ExprPool, i: u32| {
            let y = p.var(i, 0);
            [
                p.add(x, y),
                p.mul(x, y),
                p.func2(Func2::Min, x, y),
                p.func2(Func2::Max, x, y),
                p.cmp(CmpOp::Lt, x, y),
            ]
        };
        let ids: Vec<[ExprId; 5]> = (1..30_000).map(|i| build(&mut p, i)).collect();
        assert!(p.table.len > 1 << 16);
        assert!(p.table.id_bits > 17);
        let len = p.len();
        for (i, want) in (1..30_000).zip(&ids) {
            assert_eq!(build(&mut p, i), *want);
        }
        assert_eq!(p.len(), len);
    }

    /// The composite nodes of the table, in increasing order.
    fn table_ids(p: &ExprPool) -> Vec<u32> {
        let mut ids: Vec<u32> = p.table.ids().collect();
        ids.sort_unstable();
        ids
    }

    #[test]
    fn a_compact_pool_builds_the_same_nodes_and_widens_to_the_same_tables() {
        // Three to five parents per leaf `y`: with one slot the second
        // and later ones are in the hash table, with two the third and
        // later ones.
        let build = |p: &mut ExprPool, i: u32| {
            let x = p.var(0, 0);
            let y = p.var(i, 0);
            let mut out = vec![p.add(x, y), p.mul(x, y), p.sub(x, y)];
            if i.is_multiple_of(2) {
                out.push(p.func2(Func2::Min, x, y));
                out.push(p.cmp(CmpOp::Lt, x, y));
            }
            out
        };
        let mut wide = ExprPool::new();
        let mut compact = ExprPool::compact();
        for i in 1..2000 {
            assert_eq!(build(&mut compact, i), build(&mut wide, i));
        }
        assert!(matches!(compact.first_parent, FirstParents::One(_)));
        assert!(compact.table.len > wide.table.len);
        assert!(compact.same_nodes(&wide));
        // The total derivative of a leaf keeps one slot; another
        // derivative widens the pool to the tables of `wide`.
        let x = compact.var(0, 0);
        assert_eq!(compact.dt(x), wide.dt(x));
        assert!(matches!(compact.first_parent, FirstParents::One(_)));
        let e = build(&mut compact, 7)[1];
        assert_eq!(compact.dt(e), wide.dt(e));
        let (FirstParents::Two(a), FirstParents::Two(b)) =
            (&compact.first_parent, &wide.first_parent)
        else {
            panic!("both pools have two slots per node");
        };
        assert_eq!(a, b);
        assert_eq!(table_ids(&compact), table_ids(&wide));
        assert_eq!(compact.table.len, wide.table.len);
        // and both go on building the same nodes
        for i in 2000..2100 {
            assert_eq!(build(&mut compact, i), build(&mut wide, i));
            let y = compact.var(i, 0);
            assert_eq!(compact.diff_many(e, &[y, x]), wide.diff_many(e, &[y, x]));
        }
        assert!(compact.same_nodes(&wide));
        assert_eq!(table_ids(&compact), table_ids(&wide));
    }
}
