//! Queries over the DAG used by the later stages: dependency order, leaves,
//! highest derivative orders (for the Σ-matrix), substitution and linearity.
//!
//! All traversals use an explicit stack: deep expressions cannot overflow the
//! call stack.

use rustc_hash::FxHashMap;
use std::cell::RefCell;

use crate::node::{ExprId, Leaf, Node};
use crate::pool::ExprPool;

thread_local! {
    /// One bit per node of the largest pool traversed on this thread, all
    /// clear between traversals: the visited set of
    /// [`ExprPool::topo_order`]. Reusing it makes a traversal cost a bit
    /// test per node it reaches, with no hashing and no allocation of a
    /// set per call (the hidden constraints traverse every row of the
    /// derivative array several times). A traversal only panics on an id
    /// that is not in its pool (a programming error), which ends the thread
    /// that would read the marks it left.
    static MARKS: RefCell<Marks> = const { RefCell::new(Marks::new()) };
}

/// The scratch of [`ExprPool::topo_order`] and of the walk that finds
/// the nodes depending on a set of leaves ([`ExprPool::substitute`],
/// [`ExprPool::linear_in`]), kept per thread: the visited bits, the bits
/// of the nodes found dependent (a bit test per child, where a hash set
/// of them cost a hash per child; an eighth of a byte per node of the
/// pool), the depth-first stacks and the list of visited nodes (all
/// empty or clear between traversals), so that a traversal of a small
/// expression allocates only its result.
struct Marks {
    bits: Vec<u64>,
    stack: Vec<ExprId>,
    dependent: Vec<u64>,
    /// `(node, start of its children in kids, their number)`; the number
    /// is `u32::MAX` on the first visit (the children not yet pushed).
    walk: Vec<(ExprId, u32, u32)>,
    kids: Vec<ExprId>,
    visited: Vec<ExprId>,
}

impl Marks {
    /// Empty scratch.
    const fn new() -> Self {
        Marks {
            bits: Vec::new(),
            stack: Vec::new(),
            dependent: Vec::new(),
            walk: Vec::new(),
            kids: Vec::new(),
            visited: Vec::new(),
        }
    }

    /// Grows the visited bits to cover a pool of `nodes` nodes.
    fn cover(&mut self, nodes: usize) {
        let words = nodes.div_ceil(64);
        if self.bits.len() < words {
            self.bits.resize(words, 0);
        }
    }

    /// Grows the dependent bits to cover a pool of `nodes` nodes.
    fn cover_dependent(&mut self, nodes: usize) {
        let words = nodes.div_ceil(64);
        if self.dependent.len() < words {
            self.dependent.resize(words, 0);
        }
    }

    /// Clears the bits of the visited nodes and empties their list.
    fn clear_visited(&mut self) {
        for id in self.visited.drain(..) {
            self.bits[id.index() / 64] = 0;
        }
        release_large(&mut self.visited);
    }
}

/// Runs `f` with the thread's scratch (fresh scratch if a traversal is
/// already using it: not reached, a traversal does not start another).
fn with_marks<R>(f: impl FnOnce(&mut Marks) -> R) -> R {
    MARKS.with(|marks| match marks.try_borrow_mut() {
        Ok(mut marks) => f(&mut marks),
        Err(_) => f(&mut Marks::new()),
    })
}

/// Frees the buffer of an empty scratch vector that a walk over a large
/// expression grew (a walk over a row of the derivative array needs a few
/// hundred entries; the scratch is kept for the life of the thread).
fn release_large<T>(v: &mut Vec<T>) {
    if v.capacity() > 1 << 14 {
        *v = Vec::new();
    }
}

/// Whether bit `id` of the bit set `bits` is set.
#[inline]
fn bit(bits: &[u64], id: ExprId) -> bool {
    (bits[id.index() / 64] >> (id.index() % 64)) & 1 == 1
}

/// Sets bit `id` of the bit set `bits`.
#[inline]
fn set_bit(bits: &mut [u64], id: ExprId) {
    bits[id.index() / 64] |= 1u64 << (id.index() % 64);
}

/// A map from node ids to values for one traversal, keyed by the
/// traversal's nodes in increasing id order ([`ExprPool::topo_order`]):
/// dense (a vector over the pool) when the traversal covers a sizeable
/// part of the pool, else a value per position of the order, found by
/// binary search (no hashing).
pub(crate) enum IdMap<'a, T: Copy> {
    Dense(Vec<Option<T>>),
    Sorted(&'a [ExprId], Vec<Option<T>>),
}

impl<'a, T: Copy> IdMap<'a, T> {
    /// A map for the nodes `order` (sorted by id, as
    /// [`ExprPool::topo_order`] gives them) of a pool of `pool_len` nodes.
    /// Only ids in `order` can be stored.
    pub(crate) fn for_traversal(order: &'a [ExprId], pool_len: usize) -> Self {
        if order.len() * 16 >= pool_len {
            IdMap::Dense(vec![None; pool_len])
        } else {
            IdMap::Sorted(order, vec![None; order.len()])
        }
    }

    pub(crate) fn get(&self, id: ExprId) -> Option<T> {
        match self {
            IdMap::Dense(v) => v.get(id.index()).copied().flatten(),
            IdMap::Sorted(keys, v) => keys.binary_search(&id).ok().and_then(|k| v[k]),
        }
    }

    /// Stores `value` for `order[k]`, the `k`-th node of the traversal
    /// (no search: a walk over the order knows the place).
    pub(crate) fn insert_at(&mut self, k: usize, id: ExprId, value: T) {
        match self {
            IdMap::Dense(v) => {
                if let Some(slot) = v.get_mut(id.index()) {
                    *slot = Some(value);
                }
            }
            IdMap::Sorted(keys, v) => {
                if keys.get(k) == Some(&id)
                    && let Some(slot) = v.get_mut(k)
                {
                    *slot = Some(value);
                }
            }
        }
    }

    pub(crate) fn insert(&mut self, id: ExprId, value: T) {
        let slot = match self {
            IdMap::Dense(v) => v.get_mut(id.index()),
            IdMap::Sorted(keys, v) => keys.binary_search(&id).ok().and_then(|k| v.get_mut(k)),
        };
        if let Some(slot) = slot {
            *slot = Some(value);
        }
    }
}

/// Linear decomposition of a node with respect to a set of leaves:
/// `Σ coef_k · leaf_k + rest`, or not linear.
#[derive(Clone)]
enum Lin {
    /// Sparse coefficients (leaf index, coefficient), sorted by index, and the
    /// part free of the leaves.
    Linear(Vec<(usize, ExprId)>, ExprId),
    Nonlinear,
}

/// Linear decomposition of a node with respect to one leaf
/// ([`ExprPool::linear_in_leaf`]): `coef · leaf + rest` (no coefficient
/// for a node free of the leaf), or not linear.
#[derive(Clone, Copy)]
enum LinLeaf {
    Linear(Option<ExprId>, ExprId),
    Nonlinear,
}

impl LinLeaf {
    /// Whether the node is free of the leaf (linear with no coefficient).
    fn is_free(self) -> bool {
        matches!(self, LinLeaf::Linear(None, _))
    }
}

/// [`lin_of`] for [`ExprPool::linear_in_leaf`].
fn lin_leaf_of(dependent: &[ExprId], lin: &[LinLeaf], c: ExprId) -> LinLeaf {
    match dependent.binary_search(&c) {
        Ok(k) => lin.get(k).copied().unwrap_or(LinLeaf::Nonlinear),
        Err(_) => LinLeaf::Linear(None, c),
    }
}

/// The decomposition of node `c` in a walk over `dependent`, the nodes
/// that depend on the set in increasing id order (`lin[k]` that of
/// `dependent[k]`): a node outside it is free of the set, its own rest;
/// `Nonlinear` for a node not yet decomposed.
fn lin_of(dependent: &[ExprId], lin: &[Lin], c: ExprId) -> Lin {
    match dependent.binary_search(&c) {
        Ok(k) => lin.get(k).cloned().unwrap_or(Lin::Nonlinear),
        Err(_) => Lin::Linear(Vec::new(), c),
    }
}

/// [`lin_of`] without a copy: `(coefficients, rest)` of node `c`, `None`
/// where it is not linear.
fn lin_ref<'l>(
    dependent: &[ExprId],
    lin: &'l [Lin],
    c: ExprId,
) -> Option<(&'l [(usize, ExprId)], ExprId)> {
    match dependent.binary_search(&c) {
        Ok(k) => match lin.get(k) {
            Some(Lin::Linear(cs, r)) => Some((cs, *r)),
            _ => None,
        },
        Err(_) => Some((&[], c)),
    }
}

/// Whether node `c` of a walk over `dependent` (as [`lin_of`]) is free of
/// the set (linear with no coefficient).
fn is_free(dependent: &[ExprId], lin: &[Lin], c: ExprId) -> bool {
    match dependent.binary_search(&c) {
        Ok(k) => matches!(lin.get(k), Some(Lin::Linear(cs, _)) if cs.is_empty()),
        Err(_) => true,
    }
}

impl ExprPool {
    /// All nodes that the `roots` depend on (roots included), in increasing
    /// id order — a topological order, children before parents.
    pub fn topo_order(&self, roots: &[ExprId]) -> Vec<ExprId> {
        MARKS.with(|marks| match marks.try_borrow_mut() {
            Ok(mut marks) => {
                let Marks { bits, stack, .. } = &mut *marks;
                self.topo_order_marked(roots, bits, stack)
            }
            // (not reached: a traversal does not start another)
            Err(_) => self.topo_order_marked(roots, &mut Vec::new(), &mut Vec::new()),
        })
    }

    /// [`ExprPool::topo_order`] with the visited set `bits` (clear on entry,
    /// cleared again on return) and the empty stack `stack` (empty again on
    /// return).
    fn topo_order_marked(
        &self,
        roots: &[ExprId],
        bits: &mut Vec<u64>,
        stack: &mut Vec<ExprId>,
    ) -> Vec<ExprId> {
        let words = self.len().div_ceil(64);
        if bits.len() < words {
            bits.resize(words, 0);
        }
        let bits = &mut bits[..words];
        let mark = |bits: &mut [u64], id: ExprId| {
            let (w, m) = (id.index() / 64, 1u64 << (id.index() % 64));
            let fresh = bits[w] & m == 0;
            bits[w] |= m;
            fresh
        };
        let mut out = Vec::new();
        for &r in roots {
            if mark(bits, r) {
                stack.push(r);
            }
            while let Some(id) = stack.pop() {
                out.push(id);
                for c in self.node(id).children() {
                    if mark(bits, c) {
                        stack.push(c);
                    }
                }
            }
        }
        if out.len() * 16 >= words {
            // a sizeable part of the pool: the marked ids in increasing
            // order, read off the bit set (and cleared) instead of sorted
            out.clear();
            for (w, word) in bits.iter_mut().enumerate() {
                let mut m = std::mem::take(word);
                while m != 0 {
                    out.push(ExprId((w * 64) as u32 + m.trailing_zeros()));
                    m &= m - 1;
                }
            }
        } else {
            for id in &out {
                bits[id.index() / 64] &= !(1u64 << (id.index() % 64));
            }
            out.sort_unstable();
        }
        out
    }

    /// The nodes of `e` that depend on a target (a node for which
    /// `target(id, node)` holds, targets included), in increasing id order
    /// (a topological order, children before parents). One depth-first
    /// walk over the DAG of `e` that marks a node dependent after its
    /// children: no sorting of the whole DAG, only of the dependent nodes
    /// (in a substitution or a linear split of one row of the derivative
    /// array, a few of its nodes).
    fn dependents(&self, e: ExprId, target: &dyn Fn(ExprId, &Node) -> bool) -> Vec<ExprId> {
        with_marks(|marks| self.dependents_marked(e, target, marks))
    }

    /// [`ExprPool::dependents`] with the scratch `marks` (clear on entry,
    /// cleared again on return).
    fn dependents_marked(
        &self,
        e: ExprId,
        target: &dyn Fn(ExprId, &Node) -> bool,
        marks: &mut Marks,
    ) -> Vec<ExprId> {
        marks.cover(self.len());
        marks.cover_dependent(self.len());
        let Marks {
            bits,
            dependent,
            walk,
            kids,
            visited,
            ..
        } = marks;
        // `out` lists the nodes whose bit is set in `dependent`
        let mut out = Vec::new();
        walk.push((e, 0, u32::MAX));
        while let Some((id, start, len)) = walk.pop() {
            if len != u32::MAX {
                // after the children: dependent if one of them is (none
                // is while no node has been found dependent)
                let range = start as usize..(start + len) as usize;
                if !out.is_empty()
                    && !bit(dependent, id)
                    && kids[range].iter().any(|&c| bit(dependent, c))
                {
                    set_bit(dependent, id);
                    out.push(id);
                }
                kids.truncate(start as usize);
                continue;
            }
            if bit(bits, id) {
                continue;
            }
            set_bit(bits, id);
            visited.push(id);
            let node = self.node(id);
            if target(id, &node) {
                set_bit(dependent, id);
                out.push(id);
            }
            let start = kids.len();
            kids.extend(node.children());
            walk.push((id, start as u32, (kids.len() - start) as u32));
            for &c in &kids[start..] {
                if bit(bits, c) {
                    continue;
                }
                // (a leaf or constant is visited here, with no entries on
                // the walk: it has no children)
                let child = self.node(c);
                if matches!(child, Node::Leaf(_) | Node::Const(_)) {
                    set_bit(bits, c);
                    visited.push(c);
                    if target(c, &child) {
                        set_bit(dependent, c);
                        out.push(c);
                    }
                } else {
                    walk.push((c, 0, u32::MAX));
                }
            }
        }
        for &id in &out {
            dependent[id.index() / 64] = 0;
        }
        release_large(walk);
        release_large(kids);
        marks.clear_visited();
        out.sort_unstable();
        out
    }

    /// A byte encoding of the expressions `roots`: every node they depend
    /// on in [`ExprPool::topo_order`] (its kind, its constant's bits or
    /// leaf, its children by position in that order), then the roots by
    /// position. Equal encodings mean the same expressions node for node,
    /// so a cryptographic hash of it keys what is generated from them (the
    /// native code of `daec simulate --native`) without generating it.
    pub fn encode(&self, roots: &[ExprId]) -> Vec<u8> {
        let order = self.topo_order(roots);
        let mut out = Vec::with_capacity(order.len() * 12 + roots.len() * 4 + 8);
        let put = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
        // the position of each node in `order` (every child and root is
        // in it), by id
        let mut position = IdMap::for_traversal(&order, self.len());
        for (k, &id) in order.iter().enumerate() {
            position.insert_at(k, id, k as u32);
        }
        let at = |c: ExprId| position.get(c).unwrap_or(u32::MAX);
        put(&mut out, order.len() as u32);
        for &id in &order {
            let node = self.node(id);
            let (tag, payload): (u8, [u32; 2]) = match node {
                Node::Const(v) => {
                    let b = v.to_bits();
                    (0, [b as u32, (b >> 32) as u32])
                }
                Node::Leaf(Leaf::Time) => (1, [0, 0]),
                Node::Leaf(Leaf::Param(p)) => (2, [p.0, 0]),
                Node::Leaf(Leaf::Var { unknown, order }) => (3, [unknown, order]),
                Node::Add(c) => (4, [c.len() as u32, 0]),
                Node::Mul(c) => (5, [c.len() as u32, 0]),
                Node::Powi(_, n) => (6, [n as u32, 0]),
                Node::Pow(..) => (7, [0, 0]),
                Node::Func(f, _) => (8, [f as u32, 0]),
                Node::Func2(f, ..) => (9, [f as u32, 0]),
                Node::Cmp(op, ..) => (10, [op as u32, 0]),
                Node::And(..) => (11, [0, 0]),
                Node::Or(..) => (12, [0, 0]),
                Node::Not(_) => (13, [0, 0]),
                Node::Select(..) => (14, [0, 0]),
                Node::Call(f, c) => (15, [f.raw(), c.len() as u32]),
            };
            out.push(tag);
            put(&mut out, payload[0]);
            put(&mut out, payload[1]);
            for c in node.children() {
                put(&mut out, at(c));
            }
        }
        put(&mut out, roots.len() as u32);
        for &r in roots {
            put(&mut out, at(r));
        }
        out
    }

    /// The leaves (`time`, parameters, unknowns and their derivatives) that
    /// `e` depends on, sorted by id and deduplicated. Constants are not
    /// leaves.
    ///
    /// One depth-first walk that keeps the leaves it reaches and sorts
    /// only those (not every node of `e`, as [`ExprPool::topo_order`]).
    pub fn leaves(&self, e: ExprId) -> Vec<ExprId> {
        with_marks(|marks| self.leaves_marked(e, marks))
    }

    /// [`ExprPool::leaves`] with the scratch `marks` (clear on entry,
    /// cleared again on return).
    fn leaves_marked(&self, e: ExprId, marks: &mut Marks) -> Vec<ExprId> {
        marks.cover(self.len());
        let Marks {
            bits,
            stack,
            visited,
            ..
        } = marks;
        let mut out = Vec::new();
        set_bit(bits, e);
        visited.push(e);
        stack.push(e);
        while let Some(id) = stack.pop() {
            let node = self.node(id);
            if matches!(node, Node::Leaf(_)) {
                out.push(id);
            }
            for c in node.children() {
                if !bit(bits, c) {
                    set_bit(bits, c);
                    visited.push(c);
                    // (a leaf or constant is taken here, not from the stack)
                    match self.node(c) {
                        Node::Leaf(_) => out.push(c),
                        Node::Const(_) => {}
                        _ => stack.push(c),
                    }
                }
            }
        }
        marks.clear_visited();
        out.sort_unstable();
        out
    }

    /// For every unknown that occurs in `e`, the highest derivative order
    /// with which it occurs (σ_ij of the Σ-matrix, steinbrecher2016 §2),
    /// sorted by unknown.
    pub fn max_orders(&self, e: ExprId) -> Vec<(u32, u32)> {
        // (the leaves' walk sorts only the leaves, not every node of `e`)
        let mut best: Vec<(u32, u32)> = self
            .leaves(e)
            .into_iter()
            .filter_map(|id| match self.node(id) {
                Node::Leaf(Leaf::Var { unknown, order }) => Some((unknown, order)),
                _ => None,
            })
            .collect();
        best.sort_unstable();
        // Keep the last (highest order) entry of each unknown.
        let mut out: Vec<(u32, u32)> = Vec::with_capacity(best.len());
        for (j, k) in best {
            match out.last_mut() {
                Some(last) if last.0 == j => last.1 = k,
                _ => out.push((j, k)),
            }
        }
        out
    }

    /// Replaces leaves of `e`: every leaf `l` with `map(l) = Some(r)` becomes
    /// `r`; the result is rebuilt through the canonicalising constructors.
    /// `map` is called only on leaf nodes.
    ///
    /// Only the nodes above a replaced leaf are visited again, in
    /// increasing id order: the same nodes are rebuilt, from the same
    /// operands and in the same order, as [`ExprPool::replace_nodes`]
    /// would rebuild them (a node above no replaced leaf keeps its id),
    /// so the result is the same node.
    pub fn substitute(&mut self, e: ExprId, map: &dyn Fn(ExprId) -> Option<ExprId>) -> ExprId {
        let leaf = |id: ExprId, node: &Node| matches!(node, Node::Leaf(_)) && map(id).is_some();
        let dependent = self.dependents(e, &leaf);
        let mut new: Vec<ExprId> = Vec::with_capacity(dependent.len());
        let mut kids: Vec<ExprId> = Vec::new();
        for &id in &dependent {
            let node = self.node(id);
            let replaced = match node {
                Node::Leaf(_) => map(id),
                _ => None,
            };
            let r = if let Some(r) = replaced {
                r
            } else {
                self.with_new_children(id, &mut kids, |c| {
                    dependent.binary_search(&c).map_or(c, |k| new[k])
                })
            };
            new.push(r);
        }
        dependent.binary_search(&e).map_or(e, |k| new[k])
    }

    /// Replaces nodes of `roots` (any kind, not only leaves): a node with
    /// `map(pool, id) = Some(r)` becomes `r`, and the nodes above it are
    /// rebuilt through the canonicalising constructors; a node for which
    /// `opaque(pool, id)` holds is kept as it is, with everything under it
    /// (a shared node is replaced elsewhere all the same). Returns the new
    /// roots, in order. The nodes are visited in dependency order, so a
    /// DAG of any depth is rewritten without recursion.
    pub fn replace_nodes(
        &mut self,
        roots: &[ExprId],
        map: &dyn Fn(&ExprPool, ExprId) -> Option<ExprId>,
        opaque: &dyn Fn(&ExprPool, ExprId) -> bool,
    ) -> Vec<ExprId> {
        let order = self.topo_order(roots);
        let mut new: IdMap<ExprId> = IdMap::for_traversal(&order, self.len());
        let mut kids: Vec<ExprId> = Vec::new();
        for (k, &id) in order.iter().enumerate() {
            let r = if let Some(r) = map(self, id) {
                r
            } else if opaque(self, id) {
                id
            } else {
                self.with_new_children(id, &mut kids, |c| new.get(c).unwrap_or(c))
            };
            new.insert_at(k, id, r);
        }
        roots.iter().map(|&e| new.get(e).unwrap_or(e)).collect()
    }

    /// Node `id` with each child `c` replaced by `new_of(c)`: rebuilt
    /// through the canonicalising constructors when a child changed, else
    /// `id` itself (`kids` is scratch).
    fn with_new_children(
        &mut self,
        id: ExprId,
        kids: &mut Vec<ExprId>,
        new_of: impl Fn(ExprId) -> ExprId,
    ) -> ExprId {
        let node = self.node(id);
        kids.clear();
        let mut changed = false;
        for c in node.children() {
            let nc = new_of(c);
            changed |= nc != c;
            kids.push(nc);
        }
        if changed {
            let node = node.with_operands(&[]);
            self.rebuild(&node, kids)
        } else {
            id
        }
    }

    /// If `e` is linear in `leaves` — `e = Σ_k coef_k · leaves[k] + rest` with
    /// neither the coefficients nor `rest` depending on any of `leaves` —
    /// returns the coefficients (in the order of `leaves`) and `rest`.
    ///
    /// The test is structural and exact: sums, products with at most one
    /// factor depending on the leaves, and `if` expressions whose condition
    /// is free of the leaves and whose branches are linear are linear;
    /// anything else that depends on a leaf (powers, functions, comparisons,
    /// divisions by it) is not. Used for the quasi-linear form
    /// E(t,z)ż = k(t,z) and to eliminate highest derivatives.
    pub fn linear_in(&mut self, e: ExprId, leaves: &[ExprId]) -> Option<(Vec<ExprId>, ExprId)> {
        let (coefs, rest) = if let [leaf] = leaves {
            // one leaf (the elimination of a derivative): no map
            self.linear_in_by(e, |id, _| (id == *leaf).then_some(0))?
        } else {
            let index: FxHashMap<ExprId, usize> =
                leaves.iter().enumerate().map(|(k, &l)| (l, k)).collect();
            self.linear_in_by(e, |id, _| index.get(&id).copied())?
        };
        let zero = self.constant(0.0);
        let mut dense = vec![zero; leaves.len()];
        for (k, c) in coefs {
            dense[k] = c;
        }
        Some((dense, rest))
    }

    /// [`ExprPool::linear_in`] without a list of the leaves: `index(leaf)`
    /// is `Some(k)` when the leaf is the `k`-th of the set (any injective
    /// numbering, e.g. the unknown of a derivative leaf). Returns the
    /// coefficients of the leaves that occur in `e` only, as `(k, coef)`
    /// sorted by `k`, and `rest`.
    ///
    /// The cost is that of one walk over the DAG of `e`, independent of the
    /// size of the set: the quasi-linear split of `n` equations against all
    /// `n` derivatives costs the size of the equations, not `n²`.
    pub fn linear_in_sparse(
        &mut self,
        e: ExprId,
        index: &dyn Fn(&Leaf) -> Option<usize>,
    ) -> Option<(Vec<(usize, ExprId)>, ExprId)> {
        self.linear_in_by(e, |_, node| match node {
            Node::Leaf(l) => index(l),
            _ => None,
        })
    }

    /// The walk of [`ExprPool::linear_in_sparse`]; `index(id, node)` numbers
    /// the nodes that are leaves of the set.
    fn linear_in_by(
        &mut self,
        e: ExprId,
        index: impl Fn(ExprId, &Node) -> Option<usize>,
    ) -> Option<(Vec<(usize, ExprId)>, ExprId)> {
        // Only the nodes that depend on the set are decomposed, in
        // increasing id order; every other node is free of the set, its
        // own rest (a node above no leaf of the set has no coefficient,
        // one above a leaf of it always has one or is not linear, so the
        // nodes built are those a walk over every node would build).
        let order = self.dependents(e, &|id, node| index(id, node).is_some());
        self.linear_in_over(e, &order, index)
    }

    /// The walk of [`ExprPool::linear_in_by`] over `order`: nodes of `e` in
    /// increasing id order, among them every node that depends on the set
    /// (the others are free of it, whether in `order` or not).
    fn linear_in_over(
        &mut self,
        e: ExprId,
        order: &[ExprId],
        index: impl Fn(ExprId, &Node) -> Option<usize>,
    ) -> Option<(Vec<(usize, ExprId)>, ExprId)> {
        // `lin[k]` is the decomposition of `order[k]`; a child precedes its
        // parent in `order`, found there by binary search (no hashing)
        let mut lin: Vec<Lin> = Vec::with_capacity(order.len());
        let mut ops = Vec::new();
        for &id in order {
            let result = if let Some(k) = index(id, &self.node(id)) {
                let one = self.constant(1.0);
                let zero = self.constant(0.0);
                Lin::Linear(vec![(k, one)], zero)
            } else if self.node(id).children().all(|c| is_free(order, &lin, c)) {
                // constants, leaves outside the set and nodes free of it
                Lin::Linear(Vec::new(), id)
            } else {
                let node = self.node_owned(id, &mut ops);
                self.lin_node(&node, order, &lin)
            };
            lin.push(result);
        }
        let Ok(at) = order.binary_search(&e) else {
            return Some((Vec::new(), e));
        };
        match lin.swap_remove(at) {
            Lin::Linear(coefs, rest) => Some((coefs, rest)),
            Lin::Nonlinear => None,
        }
    }

    /// [`ExprPool::linear_in`] for one leaf: `(coef, rest)` with
    /// `e = coef · leaf + rest`, neither depending on `leaf`, when `e` is
    /// linear in it (the coefficient is the constant 0 where `e` does not
    /// hold `leaf`). The same walk over the nodes of `e` that depend on
    /// the leaf, building the same nodes in the same order, and the same
    /// result, with a decomposition of at most one coefficient per node
    /// instead of a list (no allocation per node): the elimination of the
    /// hidden constraints splits every pivot row by its derivative.
    pub fn linear_in_leaf(&mut self, e: ExprId, leaf: ExprId) -> Option<(ExprId, ExprId)> {
        let order = self.dependents(e, &|id, _| id == leaf);
        // `lin[k]` decomposes `order[k]` (`LinLeaf::Linear(None, r)` is a
        // node free of the leaf, as `Lin::Linear` with no coefficient)
        let mut lin: Vec<LinLeaf> = Vec::with_capacity(order.len());
        let mut ops = self.take_ids();
        for &id in &order {
            let result = if id == leaf {
                let one = self.constant(1.0);
                let zero = self.constant(0.0);
                LinLeaf::Linear(Some(one), zero)
            } else if self
                .node(id)
                .children()
                .all(|c| lin_leaf_of(&order, &lin, c).is_free())
            {
                LinLeaf::Linear(None, id)
            } else {
                self.lin_leaf_node(id, &order, &lin, &mut ops)
            };
            lin.push(result);
        }
        self.give_ids(ops);
        let (coef, rest) = match order.binary_search(&e) {
            Ok(at) => match lin.swap_remove(at) {
                LinLeaf::Linear(coef, rest) => (coef, rest),
                LinLeaf::Nonlinear => return None,
            },
            Err(_) => (None, e),
        };
        let zero = self.constant(0.0);
        Some((coef.unwrap_or(zero), rest))
    }

    /// The decomposition of node `id`, which depends on the leaf, from
    /// those of its children (as [`ExprPool::lin_node`]; `ops` is
    /// scratch).
    fn lin_leaf_node(
        &mut self,
        id: ExprId,
        order: &[ExprId],
        lin: &[LinLeaf],
        ops: &mut Vec<ExprId>,
    ) -> LinLeaf {
        let get = |c: ExprId| lin_leaf_of(order, lin, c);
        match self.node_owned(id, ops) {
            Node::Add(_) => {
                // the rests summed, then the coefficients added in the
                // order of the terms (as `lin_sum` and `merge_coefs`)
                let mut coefs = self.take_ids();
                let mut rests = self.take_ids();
                for &t in ops.iter() {
                    match get(t) {
                        LinLeaf::Linear(c, r) => {
                            coefs.extend(c);
                            rests.push(r);
                        }
                        LinLeaf::Nonlinear => {
                            self.give_ids(coefs);
                            self.give_ids(rests);
                            return LinLeaf::Nonlinear;
                        }
                    }
                }
                let rest = self.sum(&rests);
                self.give_ids(rests);
                let mut coef = coefs.first().copied();
                for &c in coefs.iter().skip(1) {
                    coef = coef.map(|a| self.add(a, c));
                }
                self.give_ids(coefs);
                LinLeaf::Linear(coef, rest)
            }
            Node::Mul(_) => {
                // linear when exactly one factor depends on the leaf (as
                // `lin_product`: the other factors' product is built
                // first)
                let mut dependent = ops.iter().copied().filter(|&f| !get(f).is_free());
                let (Some(d), None) = (dependent.next(), dependent.next()) else {
                    return LinLeaf::Nonlinear;
                };
                let scale = self.product_except(ops, d);
                match get(d) {
                    LinLeaf::Linear(c, r) => {
                        let c = c.map(|c| self.mul(scale, c));
                        let r = self.mul(scale, r);
                        LinLeaf::Linear(c, r)
                    }
                    LinLeaf::Nonlinear => LinLeaf::Nonlinear,
                }
            }
            Node::Select(c, a, b) if get(c).is_free() => match (get(a), get(b)) {
                (LinLeaf::Linear(ca, ra), LinLeaf::Linear(cb, rb)) => {
                    let zero = self.constant(0.0);
                    let coef = match (ca, cb) {
                        (None, None) => None,
                        (x, y) => Some(self.select(c, x.unwrap_or(zero), y.unwrap_or(zero))),
                    };
                    let r = self.select(c, ra, rb);
                    LinLeaf::Linear(coef, r)
                }
                _ => LinLeaf::Nonlinear,
            },
            _ => LinLeaf::Nonlinear,
        }
    }

    /// The decomposition of a node that depends on the set, from those of
    /// its children (`lin`, by position in `order`, the nodes that depend
    /// on the set; the others are free of it).
    fn lin_node(&mut self, node: &Node, order: &[ExprId], lin: &[Lin]) -> Lin {
        let get = |c: ExprId| lin_of(order, lin, c);
        let is_free = |c: ExprId| is_free(order, lin, c);
        match node {
            Node::Add(ts) => self.lin_sum(ts, order, lin),
            Node::Mul(fs) => self.lin_product(fs, order, lin),
            Node::Select(c, a, b) if is_free(*c) => match (get(*a), get(*b)) {
                (Lin::Linear(ca, ra), Lin::Linear(cb, rb)) => {
                    let zero = self.constant(0.0);
                    let mut keys: Vec<usize> = ca.iter().chain(cb.iter()).map(|p| p.0).collect();
                    keys.sort_unstable();
                    keys.dedup();
                    let mut cs = Vec::with_capacity(keys.len());
                    for k in keys {
                        let x = ca.iter().find(|p| p.0 == k).map_or(zero, |p| p.1);
                        let y = cb.iter().find(|p| p.0 == k).map_or(zero, |p| p.1);
                        cs.push((k, self.select(*c, x, y)));
                    }
                    let r = self.select(*c, ra, rb);
                    Lin::Linear(cs, r)
                }
                _ => Lin::Nonlinear,
            },
            _ => Lin::Nonlinear,
        }
    }

    /// The decomposition of the sum of `ts` (as [`ExprPool::lin_node`]),
    /// reading the children's decompositions in place (no copy of their
    /// coefficient lists).
    fn lin_sum(&mut self, ts: &[ExprId], order: &[ExprId], lin: &[Lin]) -> Lin {
        let mut coefs: Vec<(usize, ExprId)> = Vec::new();
        let mut rests = self.take_ids();
        for &t in ts {
            match lin_ref(order, lin, t) {
                Some((cs, r)) => {
                    coefs.extend_from_slice(cs);
                    rests.push(r);
                }
                None => {
                    self.give_ids(rests);
                    return Lin::Nonlinear;
                }
            }
        }
        let rest = self.sum(&rests);
        self.give_ids(rests);
        Lin::Linear(self.merge_coefs(coefs), rest)
    }

    /// The decomposition of the product of `fs` (as
    /// [`ExprPool::lin_node`]): linear when exactly one factor depends on
    /// the set.
    fn lin_product(&mut self, fs: &[ExprId], order: &[ExprId], lin: &[Lin]) -> Lin {
        let mut dependent = fs.iter().copied().filter(|&f| !is_free(order, lin, f));
        let (Some(d), None) = (dependent.next(), dependent.next()) else {
            return Lin::Nonlinear;
        };
        let scale = self.product_except(fs, d);
        match lin_ref(order, lin, d) {
            Some((cs, r)) => {
                let cs = cs.iter().map(|&(k, c)| (k, self.mul(scale, c))).collect();
                let r = self.mul(scale, r);
                Lin::Linear(cs, r)
            }
            None => Lin::Nonlinear,
        }
    }

    /// The product of the factors `fs` other than `d`.
    fn product_except(&mut self, fs: &[ExprId], d: ExprId) -> ExprId {
        let mut others = self.take_ids();
        others.extend(fs.iter().copied().filter(|&f| f != d));
        let scale = self.product(&others);
        self.give_ids(others);
        scale
    }

    fn merge_coefs(&mut self, mut coefs: Vec<(usize, ExprId)>) -> Vec<(usize, ExprId)> {
        if coefs.len() <= 1 {
            // (one coefficient or none: nothing to sort or merge)
            return coefs;
        }
        coefs.sort_by_key(|p| p.0);
        let mut out: Vec<(usize, ExprId)> = Vec::with_capacity(coefs.len());
        for (k, c) in coefs {
            match out.last_mut() {
                Some(last) if last.0 == k => last.1 = self.add(last.1, c),
                _ => out.push((k, c)),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CmpOp, Func};

    /// A random expression of `size` operations over the leaves
    /// `z_0..z_3` and their first derivatives, a parameter and `time`
    /// (a linear congruential generator seeded by `seed`).
    fn random_expr(pool: &mut ExprPool, seed: u64, size: usize) -> ExprId {
        let mut state = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut next = |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        let mut made: Vec<ExprId> = (0..4u32)
            .flat_map(|j| [(j, 0), (j, 1)])
            .map(|(j, k)| pool.var(j, k))
            .collect();
        made.push(pool.param(crate::ParamId(0)));
        made.push(pool.time());
        made.push(pool.constant(2.5));
        for _ in 0..size {
            let a = made[next(made.len() as u64) as usize];
            let b = made[next(made.len() as u64) as usize];
            let e = match next(8) {
                0 | 1 => pool.add(a, b),
                2 => pool.sub(a, b),
                3 | 4 => pool.mul(a, b),
                5 => pool.div(a, b),
                6 => pool.func(Func::Sin, a),
                _ => {
                    let c = pool.cmp(CmpOp::Lt, a, b);
                    pool.select(c, a, b)
                }
            };
            made.push(e);
        }
        *made.last().unwrap_or(&made[0])
    }

    #[test]
    fn the_walk_over_the_dependent_nodes_builds_what_a_walk_over_all_builds() {
        // linear_in over the nodes that depend on the set and over every
        // node of e, in two pools: the same result ids, the pools grown by
        // the same nodes in the same order
        let mut linear = 0;
        for seed in 0..300u64 {
            let (mut p, mut q) = (ExprPool::new(), ExprPool::new());
            let (e, f) = (random_expr(&mut p, seed, 12), random_expr(&mut q, seed, 12));
            assert_eq!(e, f);
            let set = [
                p.var((seed % 4) as u32, 1),
                p.var(((seed + 1) % 4) as u32, 0),
            ];
            let index = |id: ExprId, _: &Node| set.iter().position(|&l| l == id);
            let dependent = p.dependents(e, &|id, node| index(id, node).is_some());
            let all = q.topo_order(&[f]);
            assert!(dependent.iter().all(|id| all.binary_search(id).is_ok()));
            let walked = p.linear_in_over(e, &dependent, index);
            let full = q.linear_in_over(f, &all, index);
            assert_eq!(walked, full, "seed {seed}");
            assert_eq!(p.len(), q.len(), "seed {seed}");
            if let (Some((cp, rp)), Some((cq, rq))) = (&walked, &full) {
                linear += 1;
                let roots_p: Vec<ExprId> = cp.iter().map(|c| c.1).chain([*rp]).collect();
                let roots_q: Vec<ExprId> = cq.iter().map(|c| c.1).chain([*rq]).collect();
                assert_eq!(p.encode(&roots_p), q.encode(&roots_q), "seed {seed}");
            }
        }
        // (both kinds of expression were met)
        assert!(linear > 30 && linear < 270, "{linear} of 300 linear");
    }

    #[test]
    fn the_split_by_one_leaf_builds_what_linear_in_builds() {
        // linear_in_leaf and linear_in with the one leaf, in two pools:
        // the same coefficient and rest, the pools grown by the same nodes
        // in the same order (the whole pools encode alike)
        let (mut linear, mut nonlinear, mut free) = (0, 0, 0);
        for seed in 0..600u64 {
            let (mut p, mut q) = (ExprPool::new(), ExprPool::new());
            let size = 4 + (seed % 13) as usize;
            let (e, f) = (
                random_expr(&mut p, seed, size),
                random_expr(&mut q, seed, size),
            );
            assert_eq!(e, f);
            // one of the expression's leaves (unknowns, derivatives, the
            // parameter or time), one in ten a leaf it may lack
            let leaves = p.leaves(e);
            let leaf = match leaves.get(seed as usize % leaves.len().max(1)) {
                Some(&l) if seed % 10 != 0 => l,
                _ => {
                    let (j, k) = ((seed % 5) as u32, ((seed / 5) % 2) as u32);
                    assert_eq!(p.var(j, k), q.var(j, k));
                    p.var(j, k)
                }
            };
            let split = p.linear_in(e, &[leaf]).map(|(c, r)| (c[0], r));
            let one_leaf = q.linear_in_leaf(f, leaf);
            assert_eq!(split, one_leaf, "seed {seed}");
            assert_eq!(p.len(), q.len(), "seed {seed}");
            let all: Vec<ExprId> = (0..p.len() as u32).map(ExprId).collect();
            assert_eq!(p.encode(&all), q.encode(&all), "seed {seed}");
            match split {
                Some((c, _)) if p.as_constant(c) != Some(0.0) => linear += 1,
                Some(_) => free += 1,
                None => nonlinear += 1,
            }
        }
        // (every kind of expression was met)
        assert!(
            linear > 60 && nonlinear > 20 && free > 60,
            "{linear} linear, {nonlinear} not, {free} free of the leaf"
        );
    }

    #[test]
    fn the_split_by_one_leaf_of_sums_products_and_ifs() {
        // 2·(ẋ + p)·y + (if x < p then ẋ else 3·ẋ) − ẋ·t: coefficient
        // 2·y + (if x < p then 1 else 3) − t, rest 2·p·y
        let mut pool = ExprPool::new();
        let (x, y, xd) = (pool.var(0, 0), pool.var(1, 0), pool.var(0, 1));
        let (p, t) = (pool.param(crate::ParamId(0)), pool.time());
        let (two, three) = (pool.constant(2.0), pool.constant(3.0));
        let s = pool.add(xd, p);
        let a = pool.product(&[two, s, y]);
        let c = pool.cmp(CmpOp::Lt, x, p);
        let txd = pool.mul(three, xd);
        let b = pool.select(c, xd, txd);
        let xt = pool.mul(xd, t);
        let ab = pool.add(a, b);
        let e = pool.sub(ab, xt);
        let expected = pool.linear_in(e, &[xd]).map(|(c, r)| (c[0], r));
        let (coef, rest) = pool.linear_in_leaf(e, xd).expect("linear");
        assert_eq!(Some((coef, rest)), expected);
        /// `x`, `y` (any order), `p`, `t`
        struct At(f64, f64, f64, f64);
        impl crate::Env for At {
            fn var(&self, unknown: u32, _: u32) -> f64 {
                if unknown == 0 { self.0 } else { self.1 }
            }
            fn param(&self, _: crate::ParamId) -> f64 {
                self.2
            }
            fn time(&self) -> f64 {
                self.3
            }
        }
        for (xv, yv, pv, tv) in [(0.5, 1.5, 1.0, 0.25), (2.0, -1.0, 1.0, 3.0)] {
            let at = At(xv, yv, pv, tv);
            let branch = if xv < pv { 1.0 } else { 3.0 };
            let c = pool.eval(coef, &at);
            let r = pool.eval(rest, &at);
            assert!((c - (2.0 * yv + branch - tv)).abs() < 1e-14, "{c}");
            assert!((r - 2.0 * pv * yv).abs() < 1e-14, "{r}");
        }
        // not linear: ẋ² and sin(ẋ); free of the leaf: coefficient 0
        let sq = pool.powi(xd, 2);
        assert_eq!(pool.linear_in_leaf(sq, xd), None);
        let zero = pool.constant(0.0);
        assert_eq!(pool.linear_in_leaf(a, x), Some((zero, a)));
    }

    #[test]
    fn dependents_are_the_targets_and_the_nodes_with_a_dependent_child() {
        // on random expressions, with leaves and constants as targets (the
        // walk visits those without stacking them): a node of the
        // topological order is dependent iff it is a target or has a
        // dependent child
        for seed in 0..300u64 {
            let mut p = ExprPool::new();
            let e = random_expr(&mut p, seed, 12);
            let x = p.var((seed % 4) as u32, (seed % 2) as u32);
            let k = p.constant(2.5);
            let target = |id: ExprId, _: &Node| id == x || id == k;
            let mut expected: Vec<ExprId> = Vec::new();
            for id in p.topo_order(&[e]) {
                let node = p.node(id);
                if target(id, &node) || node.children().any(|c| expected.contains(&c)) {
                    expected.push(id);
                }
            }
            assert_eq!(p.dependents(e, &target), expected, "seed {seed}");
        }
    }

    #[test]
    fn dependents_are_the_nodes_above_the_targets_in_id_order() {
        let mut pool = ExprPool::new();
        let x = pool.var(0, 0);
        let y = pool.var(1, 0);
        let s = pool.func(Func::Sin, y);
        let xs = pool.mul(x, s);
        let e = pool.add(xs, y);
        let above_x = pool.dependents(e, &|id, _| id == x);
        assert_eq!(above_x, vec![x, xs, e]);
        let above_y = pool.dependents(e, &|id, _| id == y);
        let mut expected = vec![y, s, xs, e];
        expected.sort_unstable();
        assert_eq!(above_y, expected);
        assert!(pool.dependents(s, &|id, _| id == x).is_empty());
        // the marks are clear again: a second walk sees the same
        assert_eq!(pool.dependents(e, &|id, _| id == x), vec![x, xs, e]);
        assert_eq!(pool.leaves(e), vec![x, y]);
    }
}
