//! Symbolic differentiation: partial derivatives [`ExprPool::diff`] and the
//! total time derivative [`ExprPool::dt`].
//!
//! Both are forward-mode rules applied bottom-up over the DAG with an explicit
//! stack, and memoised in the pool, so repeated differentiation (index
//! reduction differentiates constraints up to 5+ times, steinbrecher2016 §2–3)
//! reuses every shared subexpression's derivative. The total derivative maps
//! `Var{j,k}` to `Var{j,k+1}` (z_j^(k) ↦ z_j^(k+1)), `time` to 1 and
//! parameters to 0; the chain rule gives `d/dt f = Σ ∂f/∂z_j^(k) · z_j^(k+1)
//! + ∂f/∂t`.

use crate::node::{Callee, CmpOp, ExprId, Func, Func2, FuncId, Leaf, Node};
use crate::pool::ExprPool;

/// Marks an absent entry of the dense total-derivative memo.
pub(crate) const NO_MEMO: u32 = u32::MAX;

#[derive(Clone, Copy)]
enum Wrt {
    /// Partial derivative with respect to this node.
    Partial(ExprId),
    /// Total time derivative.
    Total,
}

/// The work arrays of [`ExprPool::diff_many`], kept per thread between
/// calls (the Σ-Jacobian calls it once per equation).
#[derive(Default)]
struct DiffScratch {
    /// Where the children of each node of the walk start in `kids`.
    kid_start: Vec<u32>,
    /// The positions of each node's children in the walk's order.
    kids: Vec<u32>,
    /// Which of the (up to 64) leaves of a round each node contains.
    has: Vec<u64>,
    /// The derivative of each node, once built.
    done: Vec<Option<ExprId>>,
    /// The walk's stack: `(position, children pushed)`.
    stack: Vec<(usize, bool)>,
}

impl DiffScratch {
    /// Frees the arrays a walk over a large expression grew (the scratch
    /// lives as long as the thread).
    fn release_large(&mut self) {
        if self.kids.capacity() > 1 << 16 {
            *self = DiffScratch::default();
        }
    }
}

thread_local! {
    static DIFF_SCRATCH: std::cell::RefCell<DiffScratch> =
        std::cell::RefCell::new(DiffScratch::default());
}

impl ExprPool {
    /// The total time derivative of `e` (memoised). Derivative orders
    /// saturate at `u32::MAX`.
    pub fn dt(&mut self, e: ExprId) -> ExprId {
        self.derive(e, Wrt::Total)
    }

    /// The partial derivative of `e` with respect to the leaf `wrt` (a
    /// variable, parameter or `time` node), treating every other leaf as
    /// independent (memoised). If `wrt` is not a leaf, occurrences of that
    /// exact node are differentiated as if it were an independent symbol.
    pub fn diff(&mut self, e: ExprId, wrt: ExprId) -> ExprId {
        self.derive(e, Wrt::Partial(wrt))
    }

    /// Drops the memo of partial derivatives (not that of total derivatives),
    /// returning its memory: a memo entry per node of each expression
    /// differentiated and leaf, which a stage that differentiated many
    /// expressions once (the Σ-Jacobian) leaves behind. A later
    /// [`ExprPool::diff`] computes the same ids again (the nodes stay
    /// hash-consed).
    pub fn forget_partial_derivatives(&mut self) {
        self.diff_memo = Default::default();
    }

    /// The number of memoised partial derivatives (see
    /// [`ExprPool::forget_partial_derivatives`]).
    pub fn partial_derivatives_memoised(&self) -> usize {
        self.diff_memo.len()
    }

    /// The `k`-th total time derivative of `e`.
    pub fn dt_n(&mut self, e: ExprId, k: u32) -> ExprId {
        (0..k).fold(e, |acc, _| self.dt(acc))
    }

    fn memo(&self, id: ExprId, wrt: Wrt) -> Option<ExprId> {
        let d = match wrt {
            Wrt::Total => self.dt_memo.get(id.index()).copied(),
            // A node older than the leaf `v` cannot contain it (children
            // precede parents), so its derivative is 0.
            Wrt::Partial(v) if id < v && matches!(self.node(v), Node::Leaf(_)) => {
                if let Some(z) = self.constant_id(0.0) {
                    return Some(z);
                }
                None
            }
            Wrt::Partial(v) => self
                .diff_memo
                .get(&(id.index() as u32, v.index() as u32))
                .copied(),
        };
        match d {
            Some(d) if d != NO_MEMO => self.id_at(d as usize),
            _ => None,
        }
    }

    fn set_memo(&mut self, id: ExprId, wrt: Wrt, d: ExprId) {
        let (i, d) = (id.index() as u32, d.index() as u32);
        match wrt {
            Wrt::Total => {
                let i = i as usize;
                if self.dt_memo.len() <= i {
                    self.dt_memo.resize(i + 1, NO_MEMO);
                }
                self.dt_memo[i] = d;
            }
            Wrt::Partial(v) => {
                self.diff_memo.insert((i, v.index() as u32), d);
            }
        }
    }

    fn derive(&mut self, root: ExprId, wrt: Wrt) -> ExprId {
        if let Some(d) = self.memo(root, wrt) {
            return d;
        }
        // The total derivative of a leaf (`der(x)` of the model) is one
        // interned node: it is built without a memo entry, so lowering a
        // model's `der(…)`s does not grow the memo to the size of the pool.
        if matches!(wrt, Wrt::Total) && matches!(self.node(root), Node::Leaf(_)) {
            return self.derive_node(root, wrt, &|p, c| p.memo(c, wrt).unwrap_or(c));
        }
        self.widen_parents();
        // A partial derivative visits only the nodes that contain `v`: the
        // others have the derivative 0 (their rules build no node for it),
        // recorded where a visited node needs it. The Σ-Jacobian
        // differentiates each equation by each of its tight unknowns, so
        // the walk is short and the memo small.
        let containing = match wrt {
            Wrt::Partial(v) => {
                self.constant(0.0);
                Some(self.containing(root, v))
            }
            Wrt::Total => None,
        };
        let free = |c: ExprId| {
            containing
                .as_ref()
                .is_some_and(|(order, has)| order.binary_search(&c).is_ok_and(|k| !has[k]))
        };
        let mut stack: Vec<(ExprId, bool)> = vec![(root, false)];
        while let Some((id, expanded)) = stack.pop() {
            if self.memo(id, wrt).is_some() {
                continue;
            }
            if !expanded {
                if free(id) {
                    let zero = self.constant(0.0);
                    self.set_memo(id, wrt, zero);
                    continue;
                }
                stack.push((id, true));
                for c in self.node(id).children() {
                    if self.memo(c, wrt).is_none() {
                        stack.push((c, false));
                    }
                }
                continue;
            }
            let d = self.derive_node(id, wrt, &|p, c| p.memo(c, wrt).unwrap_or(c));
            self.set_memo(id, wrt, d);
        }
        self.memo(root, wrt).unwrap_or(root)
    }

    /// The nodes `root` depends on, in increasing id order, and for each
    /// whether it contains the node `v`.
    fn containing(&self, root: ExprId, v: ExprId) -> (Vec<ExprId>, Vec<bool>) {
        let order = self.topo_order(&[root]);
        let mut has: Vec<bool> = Vec::with_capacity(order.len());
        for &id in &order {
            let h = id == v
                || self
                    .node(id)
                    .children()
                    .any(|c| order.binary_search(&c).is_ok_and(|k| has[k]));
            has.push(h);
        }
        (order, has)
    }

    /// The partial derivatives of `e` with respect to each of the leaves
    /// `wrt`, in order: the ids [`ExprPool::diff`] gives, with one walk of
    /// `e` for all of them and no memo entries (a Σ-Jacobian row
    /// differentiates its equation by each of its tight unknowns). Each
    /// derivative visits the nodes of `e` in the order of `diff`'s walk
    /// (post-order, last child first), so the nodes it builds are created
    /// in the same order; a node whose derivative `diff`'s memo would have
    /// held from an earlier call is derived again, which builds no node
    /// (the derivative's nodes exist, hash-consed).
    pub fn diff_many(&mut self, e: ExprId, wrt: &[ExprId]) -> Vec<ExprId> {
        if wrt.is_empty() {
            return Vec::new();
        }
        DIFF_SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
            Ok(mut scratch) => self.diff_many_in(e, wrt, &mut scratch),
            // (not reached: a derivative does not start another)
            Err(_) => self.diff_many_in(e, wrt, &mut DiffScratch::default()),
        })
    }

    /// [`ExprPool::diff_many`] with the work arrays `scratch` (their
    /// contents on entry are not read).
    fn diff_many_in(
        &mut self,
        e: ExprId,
        wrt: &[ExprId],
        scratch: &mut DiffScratch,
    ) -> Vec<ExprId> {
        self.widen_parents();
        let order = self.topo_order(&[e]);
        let zero = self.constant(0.0);
        let DiffScratch {
            kid_start,
            kids,
            has,
            done,
            stack,
        } = scratch;
        // The positions in `order` of each node's children, in operand
        // order (`kids[kid_start[k]..kid_start[k + 1]]`), found once for
        // every derivative: every child of a node of `order` is in `order`.
        let pos = |c: ExprId| order.binary_search(&c).unwrap_or(0) as u32;
        kid_start.clear();
        kids.clear();
        kid_start.push(0);
        for &id in &order {
            kids.extend(self.node(id).children().map(pos));
            kid_start.push(kids.len() as u32);
        }
        let kids_of = |k: usize| &kids[kid_start[k] as usize..kid_start[k + 1] as usize];
        let root = order.len() - 1; // `e` is the largest id it depends on
        // Which nodes contain which of (up to 64 of) the leaves `wrt`, one
        // bit per leaf, in one pass over `order` per 64 leaves.
        has.clear();
        has.resize(order.len(), 0);
        done.clear();
        done.resize(order.len(), None);
        stack.clear();
        let mut out = Vec::with_capacity(wrt.len());
        for chunk in wrt.chunks(64) {
            for (k, &id) in order.iter().enumerate() {
                let own = chunk
                    .iter()
                    .enumerate()
                    .filter(|&(_, &v)| v == id)
                    .fold(0u64, |m, (b, _)| m | (1 << b));
                has[k] = kids_of(k).iter().fold(own, |m, &p| m | has[p as usize]);
            }
            for (b, &v) in chunk.iter().enumerate() {
                let bit = 1u64 << b;
                if has[root] & bit == 0 {
                    out.push(zero);
                    continue;
                }
                done.fill(None);
                stack.push((root, false));
                while let Some((k, expanded)) = stack.pop() {
                    if done[k].is_some() {
                        continue;
                    }
                    if !expanded {
                        stack.push((k, true));
                        for &p in kids_of(k) {
                            let p = p as usize;
                            if has[p] & bit != 0 && done[p].is_none() {
                                stack.push((p, false));
                            }
                        }
                        continue;
                    }
                    let d = {
                        let lookup = |_: &Self, c: ExprId| match kids_of(k)
                            .iter()
                            .map(|&p| p as usize)
                            .find(|&p| order[p] == c)
                        {
                            Some(p) if has[p] & bit != 0 => done[p].unwrap_or(c),
                            _ => zero,
                        };
                        self.derive_node(order[k], Wrt::Partial(v), &lookup)
                    };
                    done[k] = Some(d);
                }
                out.push(done[root].unwrap_or(zero));
            }
        }
        scratch.release_large();
        out
    }

    /// Derivative of one node, given the derivatives `d(pool, child)` of
    /// its children (memoised, or of a walk's own table).
    fn derive_node(&mut self, id: ExprId, wrt: Wrt, d: &dyn Fn(&Self, ExprId) -> ExprId) -> ExprId {
        let mut ops = self.take_ids();
        let node = self.node_owned(id, &mut ops);
        let r = self.derive_node_of(id, node, wrt, d);
        self.give_ids(ops);
        r
    }

    /// [`ExprPool::derive_node`] of `node`, node `id` (a copy that does
    /// not borrow the pool).
    fn derive_node_of(
        &mut self,
        id: ExprId,
        node: Node<'_>,
        wrt: Wrt,
        d: &dyn Fn(&Self, ExprId) -> ExprId,
    ) -> ExprId {
        let zero = self.constant(0.0);
        match node {
            Node::Const(_) => zero,
            Node::Leaf(l) => match wrt {
                Wrt::Partial(v) => {
                    if v == id {
                        self.constant(1.0)
                    } else {
                        zero
                    }
                }
                Wrt::Total => match l {
                    Leaf::Time => self.constant(1.0),
                    Leaf::Param(_) => zero,
                    Leaf::Var { unknown, order } => self.var(unknown, order.saturating_add(1)),
                },
            },
            _ if matches!(wrt, Wrt::Partial(v) if v == id) => self.constant(1.0),
            // (the lists below are the pool's spare buffers: no allocation
            // per node)
            Node::Add(ts) => {
                let mut ds = self.take_ids();
                ds.extend(ts.iter().map(|&t| d(self, t)));
                let r = self.sum(&ds);
                self.give_ids(ds);
                r
            }
            Node::Mul(fs) => {
                // Product rule: Σ_i (Π_{j≠i} f_j) · f_i'.
                let mut terms = self.take_ids();
                let mut factors = self.take_ids();
                for (i, &f) in fs.iter().enumerate() {
                    let df = d(self, f);
                    if self.is_zero(df) {
                        continue;
                    }
                    factors.clear();
                    factors.extend(
                        fs.iter()
                            .enumerate()
                            .filter(|&(j, _)| j != i)
                            .map(|(_, &g)| g),
                    );
                    factors.push(df);
                    terms.push(self.product(&factors));
                }
                let r = self.sum(&terms);
                self.give_ids(factors);
                self.give_ids(terms);
                r
            }
            Node::Powi(a, n) => {
                let da = d(self, a);
                if self.is_zero(da) {
                    return zero;
                }
                // (a^n)' = n · a^(n-1) · a'
                let k = self.constant(f64::from(n));
                let p = match n.checked_sub(1) {
                    Some(m) => self.powi(a, m),
                    None => {
                        let m = self.constant(f64::from(n) - 1.0);
                        self.pow(a, m)
                    }
                };
                self.product(&[k, p, da])
            }
            Node::Pow(a, b) => {
                let (da, db) = (d(self, a), d(self, b));
                let mut terms = Vec::new();
                if !self.is_zero(da) {
                    // b · a^(b-1) · a'
                    let m1 = self.constant(-1.0);
                    let bm1 = self.add(b, m1);
                    let p = self.pow(a, bm1);
                    terms.push(self.product(&[b, p, da]));
                }
                if !self.is_zero(db) {
                    // a^b · log(a) · b'
                    let la = self.func(Func::Log, a);
                    terms.push(self.product(&[id, la, db]));
                }
                self.sum(&terms)
            }
            Node::Func(f, a) => {
                let da = d(self, a);
                if self.is_zero(da) {
                    return zero;
                }
                let fp = self.func_derivative(f, a, id);
                self.mul(fp, da)
            }
            Node::Func2(f, a, b) => {
                let (da, db) = (d(self, a), d(self, b));
                if self.is_zero(da) && self.is_zero(db) {
                    return zero;
                }
                match f {
                    Func2::Atan2 => {
                        // atan2(y, x)' = (x·y' − y·x') / (x² + y²)
                        let (y, x, dy, dx) = (a, b, da, db);
                        let xdy = self.mul(x, dy);
                        let ydx = self.mul(y, dx);
                        let num = self.sub(xdy, ydx);
                        let x2 = self.powi(x, 2);
                        let y2 = self.powi(y, 2);
                        let den = self.add(x2, y2);
                        self.div(num, den)
                    }
                    // Piecewise: the derivative of the selected branch
                    // (ties take the first operand, as evaluation does).
                    Func2::Min => {
                        let c = self.cmp(CmpOp::Le, a, b);
                        self.select(c, da, db)
                    }
                    Func2::Max => {
                        let c = self.cmp(CmpOp::Ge, a, b);
                        self.select(c, da, db)
                    }
                }
            }
            Node::Cmp(..) | Node::And(..) | Node::Or(..) | Node::Not(_) => zero,
            Node::Select(c, a, b) => {
                let (da, db) = (d(self, a), d(self, b));
                self.select(c, da, db)
            }
            Node::Call(callee, args) => {
                let da: Vec<ExprId> = args.iter().map(|&a| d(self, a)).collect();
                if da.iter().all(|&x| self.is_zero(x)) {
                    return zero;
                }
                self.call_derivative(callee, &args, &da)
            }
        }
    }

    /// The directional derivative of the call `callee(args)` along the
    /// derivatives `da` of its arguments: a call of the function's
    /// derivative, `f_der(args, da)` (MLS 3.6 §12.7.1). The `derivative`
    /// annotation gives `f_der` when the inputs it does not differentiate
    /// have zero derivatives here; otherwise it is the forward-mode
    /// derivative of the algorithm ([`crate::Function::forward_derivative`]).
    /// NaN, recorded in [`ExprPool::derivative_limit`], beyond
    /// [`crate::MAX_DERIVATIVE_ORDER`].
    fn call_derivative(&mut self, callee: Callee, args: &[ExprId], da: &[ExprId]) -> ExprId {
        let f = self.function_arc(callee.function());
        let annotated = f.derivative.as_ref().filter(|ann| {
            ann.differentiated.len() == args.len()
                && ann
                    .differentiated
                    .iter()
                    .zip(da)
                    .all(|(&taken, &x)| taken || self.is_zero(x))
        });
        let (der, operands): (FuncId, Vec<ExprId>) = match annotated {
            Some(ann) => {
                let mut ops = args.to_vec();
                ops.extend(
                    da.iter()
                        .zip(&ann.differentiated)
                        .filter(|&(_, &taken)| taken)
                        .map(|(&x, _)| x),
                );
                (ann.function, ops)
            }
            None => {
                let Some(der) = self.forward_derivative_of(callee.function()) else {
                    return self.constant(f64::NAN);
                };
                let mut ops = args.to_vec();
                ops.extend_from_slice(da);
                (der, ops)
            }
        };
        match Callee::new(der, callee.output()) {
            Some(c) => self.call(c, &operands),
            None => self.constant(f64::NAN),
        }
    }

    /// The forward-mode derivative of function `id`, made once; `None`
    /// (recorded) beyond [`crate::MAX_DERIVATIVE_ORDER`].
    fn forward_derivative_of(&mut self, id: FuncId) -> Option<FuncId> {
        if let Some(&d) = self.derivatives.get(&id.0) {
            return Some(FuncId(d));
        }
        let f = self.function_arc(id);
        let made = (f.order < crate::MAX_DERIVATIVE_ORDER)
            .then(|| f.forward_derivative())
            .flatten()
            .and_then(|d| self.add_function(d));
        match made {
            Some(d) => {
                self.derivatives.insert(id.0, d.0);
                Some(d)
            }
            None => {
                self.derivative_limit.get_or_insert(id);
                None
            }
        }
    }

    /// f'(a) for a unary function; `fa` is the node `f(a)` itself.
    fn func_derivative(&mut self, f: Func, a: ExprId, fa: ExprId) -> ExprId {
        match f {
            Func::Sin => self.func(Func::Cos, a),
            Func::Cos => {
                let s = self.func(Func::Sin, a);
                self.neg(s)
            }
            Func::Tan => {
                // 1 + tan²(a)
                let one = self.constant(1.0);
                let t2 = self.powi(fa, 2);
                self.add(one, t2)
            }
            Func::Asin | Func::Acos => {
                // ±(1 − a²)^(−1/2)
                let one = self.constant(1.0);
                let a2 = self.powi(a, 2);
                let r = self.sub(one, a2);
                let s = self.func(Func::Sqrt, r);
                let inv = self.powi(s, -1);
                if f == Func::Asin { inv } else { self.neg(inv) }
            }
            Func::Atan => {
                let one = self.constant(1.0);
                let a2 = self.powi(a, 2);
                let r = self.add(one, a2);
                self.powi(r, -1)
            }
            Func::Sinh => self.func(Func::Cosh, a),
            Func::Cosh => self.func(Func::Sinh, a),
            Func::Tanh => {
                let one = self.constant(1.0);
                let t2 = self.powi(fa, 2);
                self.sub(one, t2)
            }
            Func::Exp => fa,
            Func::Log => self.powi(a, -1),
            Func::Log10 => {
                let inv = self.powi(a, -1);
                self.scale(1.0 / std::f64::consts::LN_10, inv)
            }
            Func::Sqrt => {
                // 1 / (2 sqrt(a)) = 0.5 · sqrt(a)^(−1)
                let inv = self.powi(fa, -1);
                self.scale(0.5, inv)
            }
            Func::Abs => self.func(Func::Sign, a),
            Func::Sign | Func::Floor | Func::Ceil => self.constant(0.0),
            Func::NoEvent => self.constant(1.0),
        }
    }
}
