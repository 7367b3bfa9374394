//! Values and sparse gradients of a set of equations, for the Gauss–Newton
//! iterations of [`crate::consistent_point`].
//!
//! Every equation is compiled once into a short program over the nodes it
//! depends on (children before parents); an evaluation runs each program
//! forward for the node values and backward for the adjoints — the reverse
//! mode of algorithmic differentiation (Griewank & Walther, *Evaluating
//! Derivatives*, 2nd ed., SIAM 2008, ch. 3) — which gives the equation's
//! value and its partial derivatives with respect to all of its leaves in
//! about twice the work of the value alone. No derivative expression is
//! built: the cost is linear in the size of the equations, where
//! differentiating every equation symbolically by every leaf costs the
//! size times the number of leaves and grows the expression pool.
//!
//! The forward pass applies the scalar semantics of `daec_expr` in the
//! order of [`ExprPool::eval`] (sums from `-0.0`, products from `1.0`,
//! squares and reciprocals of integer powers), so the equations' values
//! are those of the pool bit for bit. The partial derivatives are those of
//! [`ExprPool::diff`] up to rounding.

use daec_expr::{
    Callee, ExprId, ExprPool, Func, Func2, FuncId, Function, Leaf, Node, apply_func, apply_op, powi,
};
use std::collections::HashMap;
use std::ops::Range;

/// Where a node of a program gets its value from: 8 bytes, with the
/// node's number of children where it has any (its children are the next
/// ones of `children` in a forward pass over the program, the previous
/// ones in a backward pass, so no start is stored per node).
#[derive(Clone, Copy, Debug)]
enum Source {
    /// An operation of the pool on the program's earlier nodes: the entry
    /// of the program's `ops` that names the node and its number of
    /// children.
    Op(u32),
    /// A sum of the node's children, of this number (the most frequent
    /// operations are run from the program alone, without reading the
    /// node from the pool, with the arithmetic of
    /// `daec_expr::apply_op`).
    Add(u32),
    /// A product of the node's children, of this number.
    Mul(u32),
    /// An integer power of the node's child.
    Powi(i32),
    /// The constant at this place of the program's `consts`.
    Const(u32),
    /// The state entry at this position.
    State(u32),
    /// A parameter.
    Param(u32),
    /// Time.
    Time,
    /// A leaf outside the state (NaN, as an unknown of no value).
    Missing,
}

/// The value of a sum, product or integer power of the values `val` of
/// the children `ch` (as `daec_expr::apply_op`: sums from `-0.0`,
/// products from `1.0`, squares and reciprocals of integer powers); `None`
/// for the other sources.
#[inline]
fn operation_value(source: Source, ch: &[u32], val: &[f64]) -> Option<f64> {
    let get = |c: &u32| val[*c as usize];
    match source {
        Source::Add(_) => Some(ch.iter().fold(-0.0, |s, c| s + get(c))),
        Source::Mul(_) => Some(ch.iter().fold(1.0, |p, c| p * get(c))),
        Source::Powi(2) => {
            let x = get(&ch[0]);
            Some(x * x)
        }
        Source::Powi(-1) => Some(1.0 / get(&ch[0])),
        Source::Powi(n) => Some(powi(get(&ch[0]), n)),
        _ => None,
    }
}

/// The place of every variable leaf `(unknown, order)` in a list of such
/// keys, in a table indexed by unknown and order: the lookup that
/// [`EquationGradients::new`] makes for every leaf of the equations, with
/// no hashing. A key given twice maps to its last place.
pub(crate) struct LeafPositions {
    /// Per unknown, the start of its orders in `slots` (one bound more
    /// than unknowns).
    start: Vec<usize>,
    /// The place of each `(unknown, order)`; `u32::MAX` where none.
    slots: Vec<u32>,
}

impl LeafPositions {
    /// The places of `keys`.
    pub(crate) fn new(keys: &[(u32, u32)]) -> LeafPositions {
        let n = keys.iter().map(|&(j, _)| j as usize + 1).max().unwrap_or(0);
        // per unknown the number of orders, then their running sum
        let mut start = vec![0usize; n + 1];
        for &(j, l) in keys {
            let slot = &mut start[j as usize + 1];
            *slot = (*slot).max(l as usize + 1);
        }
        for j in 0..n {
            start[j + 1] += start[j];
        }
        let mut slots = vec![u32::MAX; start[n]];
        for (k, &(j, l)) in keys.iter().enumerate() {
            slots[start[j as usize] + l as usize] = k as u32;
        }
        LeafPositions { start, slots }
    }

    /// The place of `(unknown, order)` among the keys.
    pub(crate) fn get(&self, unknown: u32, order: u32) -> Option<usize> {
        let j = unknown as usize;
        let (lo, hi) = (*self.start.get(j)?, *self.start.get(j + 1)?);
        let slot = lo.checked_add(order as usize).filter(|&s| s < hi)?;
        match self.slots[slot] {
            u32::MAX => None,
            k => Some(k as usize),
        }
    }
}

/// Expressions compiled together for their values alone: one program over
/// the union of their nodes, so that a node they share is evaluated once
/// (the Σ-Jacobian's entries and the derivatives `Ω` of neighbouring
/// equations share most of theirs). The values are those of
/// [`EquationGradients::eval_kept`] bit for bit: a node's value depends on
/// its children's alone.
pub(crate) struct SharedValues {
    program: EquationGradients,
    /// The place of every expression in `program`.
    roots: Vec<u32>,
}

impl SharedValues {
    /// Compiles `exprs`; `position` as for [`EquationGradients::new`].
    pub(crate) fn new(
        pool: &ExprPool,
        exprs: &[ExprId],
        position: impl Fn(u32, u32) -> Option<usize>,
    ) -> SharedValues {
        let mut roots = Vec::with_capacity(exprs.len());
        let program =
            EquationGradients::compile(pool, std::iter::once(exprs), position, Some(&mut roots));
        SharedValues { program, roots }
    }

    /// The values of the expressions at the state `x`, in their order.
    pub(crate) fn eval(
        &mut self,
        pool: &ExprPool,
        x: &[f64],
        params: &[f64],
        t: f64,
        values: &mut Vec<f64>,
    ) {
        values.clear();
        if self.roots.is_empty() {
            return;
        }
        let mut last = Vec::new();
        self.program.eval_kept(pool, 0..1, x, params, t, &mut last);
        let kept = &self.program.kept;
        values.extend(self.roots.iter().map(|&k| kept[k as usize]));
    }
}

/// The equations compiled for [`EquationGradients::eval_kept`] and
/// [`EquationGradients::gradients_kept`].
pub(crate) struct EquationGradients {
    /// Per equation, the range of its nodes in `sources` (`m + 1`
    /// bounds).
    eq_start: Vec<usize>,
    /// Per equation, the start of its nodes' children in `children`
    /// (`m + 1` bounds).
    eq_children: Vec<usize>,
    /// The value source of the nodes of every equation, in increasing id
    /// order (children first), the equation's root last.
    sources: Vec<Source>,
    /// The children of every node, node after node, as positions within
    /// its equation's program, in the order of [`Node::children`].
    children: Vec<u32>,
    /// The node and number of children of every [`Source::Op`].
    ops: Vec<(ExprId, u32)>,
    /// The value of every [`Source::Const`].
    consts: Vec<f64>,
    /// Node adjoints of one equation (scratch).
    adjoints: Vec<f64>,
    /// Prefix products of a product's factors (scratch).
    prefix: Vec<f64>,
    /// The forward-mode derivative of every function the equations call
    /// at run time (`None` where the interpreter cannot differentiate it:
    /// its partial derivatives are NaN).
    derivatives: HashMap<FuncId, Option<Function>>,
    /// A call's arguments, then its derivative's inputs (scratch).
    call_args: Vec<f64>,
    /// The node values of the equations `kept_eqs` of the last
    /// [`eval_kept`](Self::eval_kept), equation after equation.
    kept: Vec<f64>,
    kept_eqs: Range<usize>,
}

impl EquationGradients {
    /// Compiles `equations`; `position` maps a variable leaf
    /// `(unknown, order)` to its entry of the state (leaves it maps to
    /// `None` evaluate to NaN).
    pub(crate) fn new(
        pool: &ExprPool,
        equations: &[ExprId],
        position: impl Fn(u32, u32) -> Option<usize>,
    ) -> EquationGradients {
        Self::compile(pool, equations.chunks(1), position, None)
    }

    /// Compiles every group of expressions of `groups` into one program
    /// over the union of the group's nodes (a node the expressions share
    /// once), as [`new`](Self::new) compiles each equation (a group of
    /// one); with `roots`, appends the place of every expression in its
    /// group's program.
    fn compile<'a>(
        pool: &ExprPool,
        groups: impl Iterator<Item = &'a [ExprId]>,
        position: impl Fn(u32, u32) -> Option<usize>,
        mut roots: Option<&mut Vec<u32>>,
    ) -> EquationGradients {
        let mut g = EquationGradients {
            eq_start: vec![0],
            eq_children: vec![0],
            sources: Vec::new(),
            children: Vec::new(),
            ops: Vec::new(),
            consts: Vec::new(),
            adjoints: Vec::new(),
            prefix: Vec::new(),
            derivatives: HashMap::new(),
            call_args: Vec::new(),
            kept: Vec::new(),
            kept_eqs: 0..0,
        };
        // the nodes of one equation: a depth-first search marking them
        // `SEEN` in `stamp` (no hashing, one pass over the equation); once
        // they are sorted, `stamp` holds each one's place among them with
        // the high bit `PLACE` set, written before its parents read it (no
        // search per child), which also unmarks it for the next equation
        // (a node never reached holds 0: the table is allocated zeroed,
        // and only the pages of the nodes reached are touched)
        const PLACE: u32 = 1 << 31;
        const SEEN: u32 = 1;
        let mut stamp = vec![0u32; pool.len()];
        let mut stack: Vec<ExprId> = Vec::new();
        // the nodes of one group, in increasing id order (scratch)
        let mut nodes: Vec<ExprId> = Vec::new();
        for group in groups {
            nodes.clear();
            let mark = SEEN;
            for &e in group {
                if stamp[e.index()] != mark {
                    stamp[e.index()] = mark;
                    stack.push(e);
                }
            }
            while let Some(id) = stack.pop() {
                nodes.push(id);
                for c in pool.node(id).children() {
                    if stamp[c.index()] != mark {
                        stamp[c.index()] = mark;
                        stack.push(c);
                    }
                }
            }
            nodes.sort_unstable();
            for (k, &id) in nodes.iter().enumerate() {
                stamp[id.index()] = PLACE | k as u32;
                let node = pool.node(id);
                let before = g.children.len();
                for c in node.children() {
                    // children have smaller ids, so they precede the node
                    // and their place is already written
                    g.children.push(stamp[c.index()] & !PLACE);
                }
                let n = (g.children.len() - before) as u32;
                let source = match node {
                    Node::Const(v) => {
                        g.consts.push(v);
                        Source::Const(g.consts.len() as u32 - 1)
                    }
                    Node::Leaf(Leaf::Time) => Source::Time,
                    Node::Leaf(Leaf::Param(p)) => Source::Param(p.0),
                    Node::Leaf(Leaf::Var { unknown, order }) => position(unknown, order)
                        .and_then(|p| u32::try_from(p).ok())
                        .map_or(Source::Missing, Source::State),
                    Node::Add(_) => Source::Add(n),
                    Node::Mul(_) => Source::Mul(n),
                    Node::Powi(_, e) => Source::Powi(e),
                    _ => {
                        if let Node::Call(callee, _) = node {
                            g.derivatives.entry(callee.function()).or_insert_with(|| {
                                pool.function(callee.function()).forward_derivative()
                            });
                        }
                        g.ops.push((id, n));
                        Source::Op(g.ops.len() as u32 - 1)
                    }
                };
                g.sources.push(source);
            }
            if let Some(roots) = roots.as_mut() {
                roots.extend(group.iter().map(|e| stamp[e.index()] & !PLACE));
            }
            g.eq_start.push(g.sources.len());
            g.eq_children.push(g.children.len());
        }
        // the program is held through the iterations: no slack of the
        // doubling growth
        g.sources.shrink_to_fit();
        g.children.shrink_to_fit();
        g.eq_start.shrink_to_fit();
        g.eq_children.shrink_to_fit();
        g
    }

    /// Number of equations.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.eq_start.len() - 1
    }

    /// The state positions of the variable leaves of equation `i` that
    /// `position` mapped, in increasing node order (the order of
    /// [`ExprPool::leaves`]).
    #[cfg(test)]
    fn state_leaves(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        (self.eq_start[i]..self.eq_start[i + 1]).filter_map(|k| match self.sources[k] {
            Source::State(p) => Some(p as usize),
            _ => None,
        })
    }

    /// Evaluates every equation at the state `x` into `residuals`; with
    /// `gradients`, also every equation's partial derivatives: `visit(i, p,
    /// ∂F_i/∂x_p)` for every state leaf of [`Self::state_leaves`], in that
    /// order.
    #[cfg(test)]
    fn eval(
        &mut self,
        pool: &ExprPool,
        x: &[f64],
        params: &[f64],
        t: f64,
        residuals: &mut Vec<f64>,
        gradients: Option<&mut dyn FnMut(usize, usize, f64)>,
    ) {
        self.eval_kept(pool, 0..self.len(), x, params, t, residuals);
        if let Some(visit) = gradients {
            self.gradients_kept(pool, visit);
        }
    }

    /// Evaluates the equations `eqs` at the state `x` into `residuals`,
    /// keeping the value of every node, so that
    /// [`gradients_kept`](Self::gradients_kept) gives the partial
    /// derivatives at this point with no second forward pass, and only
    /// when they are needed.
    pub(crate) fn eval_kept(
        &mut self,
        pool: &ExprPool,
        eqs: Range<usize>,
        x: &[f64],
        params: &[f64],
        t: f64,
        residuals: &mut Vec<f64>,
    ) {
        residuals.clear();
        let mut kept = std::mem::take(&mut self.kept);
        kept.clear();
        // one allocation of the exact size, not a doubling growth
        kept.reserve_exact(self.eq_start[eqs.end] - self.eq_start[eqs.start]);
        for i in eqs.clone() {
            self.forward_into(pool, i, x, params, t, &mut kept);
            residuals.push(kept[kept.len() - 1]);
        }
        self.kept = kept;
        self.kept_eqs = eqs;
    }

    /// The partial derivatives of the equations of the last
    /// [`eval_kept`](Self::eval_kept) at its point, from the node values it
    /// kept: `visit(i, p, ∂F_i/∂x_p)` for every state leaf of the
    /// equation, in increasing node order (the order of
    /// [`ExprPool::leaves`]), `i` counted from the first equation of that
    /// call.
    pub(crate) fn gradients_kept(
        &mut self,
        pool: &ExprPool,
        visit: &mut dyn FnMut(usize, usize, f64),
    ) {
        let kept = std::mem::take(&mut self.kept);
        let eqs = self.kept_eqs.clone();
        let base = self.eq_start[eqs.start];
        for i in eqs.clone() {
            let (lo, hi) = (self.eq_start[i], self.eq_start[i + 1]);
            self.backward_from(pool, i, &kept[lo - base..hi - base]);
            for k in lo..hi {
                if let Source::State(p) = self.sources[k] {
                    visit(i - eqs.start, p as usize, self.adjoints[k - lo]);
                }
            }
        }
        self.kept = kept;
    }

    /// The number of children of a node of source `source`.
    #[inline]
    fn arity(&self, source: Source) -> usize {
        match source {
            Source::Add(n) | Source::Mul(n) => n as usize,
            Source::Powi(_) => 1,
            Source::Op(o) => self.ops[o as usize].1 as usize,
            _ => 0,
        }
    }

    /// The values of the nodes of equation `i` appended to `values` (a
    /// child read at its place after the length `values` had).
    fn forward_into(
        &mut self,
        pool: &ExprPool,
        i: usize,
        x: &[f64],
        params: &[f64],
        t: f64,
        values: &mut Vec<f64>,
    ) {
        let base = values.len();
        let mut next = self.eq_children[i];
        for k in self.eq_start[i]..self.eq_start[i + 1] {
            let source = self.sources[k];
            let first = next;
            next += self.arity(source);
            let ch = &self.children[first..next];
            let v = match source {
                Source::Const(c) => self.consts[c as usize],
                Source::State(p) => x.get(p as usize).copied().unwrap_or(f64::NAN),
                Source::Param(p) => params.get(p as usize).copied().unwrap_or(f64::NAN),
                Source::Time => t,
                Source::Missing => f64::NAN,
                Source::Add(_) | Source::Mul(_) | Source::Powi(_) => {
                    operation_value(source, ch, &values[base..]).unwrap_or(f64::NAN)
                }
                Source::Op(o) => {
                    let val = &values[base..];
                    let get = |c: usize| val[ch[c] as usize];
                    match pool.node(self.ops[o as usize].0) {
                        Node::Call(callee, _) => {
                            self.call_args.clear();
                            self.call_args.extend((0..ch.len()).map(get));
                            call_value(pool.function(callee.function()), callee, &self.call_args)
                        }
                        node => apply_op(&node, get),
                    }
                }
            };
            values.push(v);
        }
    }

    /// The adjoints `∂F/∂node` of the nodes of equation `i` from their
    /// values `val` into `adjoints`, by one backward pass.
    fn backward_from(&mut self, pool: &ExprPool, i: usize, val: &[f64]) {
        let (lo, hi) = (self.eq_start[i], self.eq_start[i + 1]);
        self.adjoints.clear();
        self.adjoints.resize(hi - lo, 0.0);
        self.adjoints[hi - lo - 1] = 1.0;
        // the children of the nodes before `k` end at `end`
        let mut end = self.eq_children[i + 1];
        for k in (lo..hi).rev() {
            let adj = self.adjoints[k - lo];
            let source = self.sources[k];
            let last = end;
            end -= self.arity(source);
            let op = match source {
                Source::Op(o) => Some(self.ops[o as usize].0),
                Source::Add(_) | Source::Mul(_) | Source::Powi(_) => None,
                _ => continue,
            };
            if adj == 0.0 {
                continue;
            }
            let ch = &self.children[end..last];
            let Some(op) = op else {
                backward_operation(source, ch, val, adj, &mut self.adjoints, &mut self.prefix);
                continue;
            };
            let v = |c: usize| val[ch[c] as usize];
            let node = pool.node(op);
            let value = val[k - lo];
            let adjoints = &mut self.adjoints;
            let mut add = |c: usize, d: f64| adjoints[ch[c] as usize] += adj * d;
            match node {
                // (sums, products and integer powers are
                // `backward_operation`'s)
                Node::Add(_) | Node::Mul(_) | Node::Powi(..) => {}
                Node::Pow(..) => {
                    let (a, b) = (v(0), v(1));
                    add(0, b * a.powf(b - 1.0));
                    add(1, value * a.ln());
                }
                Node::Func(f, _) => add(0, func_derivative(f, v(0), value)),
                Node::Func2(Func2::Atan2, ..) => {
                    // atan2(y, x)' = (x·y' − y·x') / (x² + y²)
                    let (y, x) = (v(0), v(1));
                    let den = x * x + y * y;
                    add(0, x / den);
                    add(1, -y / den);
                }
                // the derivative of the selected operand (ties take the
                // first, as evaluation does)
                Node::Func2(Func2::Min, ..) => add(if v(0) <= v(1) { 0 } else { 1 }, 1.0),
                Node::Func2(Func2::Max, ..) => add(if v(0) >= v(1) { 0 } else { 1 }, 1.0),
                Node::Select(..) => add(if v(0) != 0.0 { 1 } else { 2 }, 1.0),
                Node::Call(callee, _) => {
                    // ∂y/∂a_c = f_der(a, e_c): the forward-mode derivative
                    // along the c-th unit vector
                    let n = ch.len();
                    let der = self
                        .derivatives
                        .get(&callee.function())
                        .and_then(Option::as_ref);
                    for c in 0..n {
                        let d = match der {
                            Some(f) => {
                                self.call_args.clear();
                                self.call_args.extend((0..n).map(v));
                                self.call_args
                                    .extend((0..n).map(|j| f64::from(u8::from(j == c))));
                                call_value(f, callee, &self.call_args)
                            }
                            None => f64::NAN,
                        };
                        add(c, d);
                    }
                }
                Node::Cmp(..) | Node::And(..) | Node::Or(..) | Node::Not(_) => {}
                Node::Const(_) | Node::Leaf(_) => {}
            }
        }
    }
}

/// The backward step of a sum, product or integer power node (sources
/// [`Source::Add`], [`Source::Mul`], [`Source::Powi`]): adds `adj` times
/// the node's partial derivative by each child (`ch`, values `val`) to
/// the child's entry of `adjoints` (`prefix` is scratch); nothing for the
/// other sources.
fn backward_operation(
    source: Source,
    ch: &[u32],
    val: &[f64],
    adj: f64,
    adjoints: &mut [f64],
    prefix: &mut Vec<f64>,
) {
    let v = |c: usize| val[ch[c] as usize];
    let mut add = |c: usize, d: f64| adjoints[ch[c] as usize] += adj * d;
    match source {
        Source::Add(_) => (0..ch.len()).for_each(|c| add(c, 1.0)),
        Source::Mul(_) => {
            // ∂/∂f_c = Π_{j≠c} f_j from prefix and suffix products
            prefix.clear();
            let mut p = 1.0;
            for c in 0..ch.len() {
                prefix.push(p);
                p *= v(c);
            }
            let mut suffix = 1.0;
            for c in (0..ch.len()).rev() {
                add(c, prefix[c] * suffix);
                suffix *= v(c);
            }
        }
        Source::Powi(n) => {
            // (a^n)' = n · a^(n−1)
            let d = match n.checked_sub(1) {
                Some(m) => powi(v(0), m),
                None => v(0).powf(f64::from(n) - 1.0),
            };
            add(0, f64::from(n) * d);
        }
        _ => {}
    }
}

/// Output `callee.output()` of `f` called on `args` (NaN where the call
/// fails), as `ExprPool::eval` evaluates a call.
fn call_value(f: &Function, callee: Callee, args: &[f64]) -> f64 {
    f.call(args)
        .ok()
        .and_then(|out| out.get(callee.output()).copied())
        .unwrap_or(f64::NAN)
}

/// `f'(a)` of a unary function; `fa = f(a)` (the rules of
/// `ExprPool::diff`).
fn func_derivative(f: Func, a: f64, fa: f64) -> f64 {
    match f {
        Func::Sin => a.cos(),
        Func::Cos => -a.sin(),
        Func::Tan => 1.0 + fa * fa,
        Func::Asin => 1.0 / (1.0 - a * a).sqrt(),
        Func::Acos => -1.0 / (1.0 - a * a).sqrt(),
        Func::Atan => 1.0 / (1.0 + a * a),
        Func::Sinh => a.cosh(),
        Func::Cosh => a.sinh(),
        Func::Tanh => 1.0 - fa * fa,
        Func::Exp => fa,
        Func::Log => 1.0 / a,
        Func::Log10 => (1.0 / std::f64::consts::LN_10) * (1.0 / a),
        Func::Sqrt => 0.5 * (1.0 / fa),
        Func::Abs => apply_func(Func::Sign, a),
        Func::Sign | Func::Floor | Func::Ceil => 0.0,
        Func::NoEvent => 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::{EquationGradients, LeafPositions, SharedValues};
    use daec_expr::{Env, ExprId, ExprPool, Func, ParamId};

    struct At<'a>(&'a [f64]);
    impl Env for At<'_> {
        fn var(&self, unknown: u32, _order: u32) -> f64 {
            self.0[unknown as usize]
        }
        fn param(&self, _: ParamId) -> f64 {
            2.0
        }
        fn time(&self) -> f64 {
            0.5
        }
    }

    #[test]
    fn values_are_the_pools_and_gradients_the_symbolic_derivatives() {
        let mut pool = ExprPool::new();
        let (x, y, z) = (pool.var(0, 0), pool.var(1, 0), pool.var(2, 0));
        let p = pool.param(ParamId(0));
        let t = pool.time();
        // x²·y + sin(x·z) − p·exp(y)/z + t·sqrt(x) + atan2(y, z)·x^p
        let x2 = pool.powi(x, 2);
        let a = pool.mul(x2, y);
        let xz = pool.mul(x, z);
        let b = pool.func(Func::Sin, xz);
        let ey = pool.func(Func::Exp, y);
        let pe = pool.mul(p, ey);
        let c = pool.div(pe, z);
        let sx = pool.func(Func::Sqrt, x);
        let d = pool.mul(t, sx);
        let at = pool.func2(daec_expr::Func2::Atan2, y, z);
        let xp = pool.pow(x, p);
        let e2 = pool.mul(at, xp);
        let s1 = pool.add(a, b);
        let s2 = pool.sub(s1, c);
        let s3 = pool.add(s2, d);
        let f = pool.add(s3, e2);
        let g = pool.mul(xz, y);
        let eqs = [f, g, x];
        let state = [1.3, -0.7, 2.1];
        let mut compiled = EquationGradients::new(&pool, &eqs, |j, _| Some(j as usize));
        let leaves_of: Vec<Vec<usize>> = (0..eqs.len())
            .map(|i| compiled.state_leaves(i).collect())
            .collect();
        assert_eq!(leaves_of, [vec![0, 1, 2], vec![0, 1, 2], vec![0]]);
        let grads = check_against_pool(&mut pool, &mut compiled, &eqs, &state, 2.0, 1e-14);
        // every (equation, leaf) once: f has x, y, z; g has x, y, z; x has x
        assert_eq!(grads, 7);
    }

    /// Evaluates `compiled` (the equations `eqs` over the unknowns
    /// `z_0, z_1, …` of order 0 at `state`, the parameter `param`, time
    /// 0.5) and checks its values against the pool's bit for bit and its
    /// gradients against the symbolic derivatives to `tol`; returns the
    /// number of gradient entries.
    fn check_against_pool(
        pool: &mut ExprPool,
        compiled: &mut EquationGradients,
        eqs: &[ExprId],
        state: &[f64],
        param: f64,
        tol: f64,
    ) -> usize {
        let mut r = Vec::new();
        let mut grads: Vec<(usize, usize, f64)> = Vec::new();
        compiled.eval(
            pool,
            state,
            &[param],
            0.5,
            &mut r,
            Some(&mut |i, p, d| grads.push((i, p, d))),
        );
        let env = At(state);
        for (i, &e) in eqs.iter().enumerate() {
            assert_eq!(r[i].to_bits(), pool.eval(e, &env).to_bits(), "equation {i}");
        }
        for &(i, j, d) in &grads {
            let leaf = pool.var(j as u32, 0);
            let sym = pool.diff(eqs[i], leaf);
            let expected = pool.eval(sym, &env);
            assert!(
                (d - expected).abs() <= tol * (1.0 + expected.abs()),
                "∂F{i}/∂z{j}: {d} vs {expected}"
            );
        }
        grads.len()
    }

    /// Expressions of a chain of links that share their nodes, as the
    /// constraints of neighbouring links do: `(x_k − x_{k−1})² + p·t`,
    /// `sin(x_k − x_{k−1})·ẋ_k`, and `x_9` (an unknown of no key).
    fn shared_chain(pool: &mut ExprPool) -> Vec<ExprId> {
        let p = pool.param(ParamId(0));
        let t = pool.time();
        let pt = pool.mul(p, t);
        let mut exprs = Vec::new();
        for k in 1..5 {
            let (a, b) = (pool.var(k, 0), pool.var(k - 1, 0));
            let d = pool.sub(a, b);
            let d2 = pool.powi(d, 2);
            exprs.push(pool.add(d2, pt));
            let s = pool.func(Func::Sin, d);
            let v = pool.var(k, 1);
            exprs.push(pool.mul(s, v));
        }
        exprs.push(pool.var(9, 0));
        exprs
    }

    #[test]
    fn shared_values_are_the_per_equation_values_bit_for_bit() {
        let mut pool = ExprPool::new();
        let exprs = shared_chain(&mut pool);
        // x_0..x_4 at 0..5, ẋ_k of no key: the slot 5, which holds 0
        let position = |j: u32, l: u32| match l {
            0 => ((j as usize) < 5).then_some(j as usize),
            _ => Some(5),
        };
        let x = [0.3, -1.1, 2.5, 0.7, -0.2, 0.0];
        let mut shared = SharedValues::new(&pool, &exprs, position);
        // a node the expressions share is one node of the program
        let distinct = pool.topo_order(&exprs).len();
        assert_eq!(shared.program.sources.len(), distinct);
        let mut per_equation = EquationGradients::new(&pool, &exprs, position);
        assert!(per_equation.sources.len() > distinct);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        shared.eval(&pool, &x, &[2.0], 0.5, &mut a);
        per_equation.eval_kept(&pool, 0..exprs.len(), &x, &[2.0], 0.5, &mut b);
        assert_eq!(a.len(), exprs.len());
        for (i, (u, v)) in a.iter().zip(&b).enumerate() {
            assert_eq!(u.to_bits(), v.to_bits(), "expression {i}: {u} vs {v}");
        }
        let d = x[2] - x[1];
        assert_eq!(a[2], d * d + 2.0 * 0.5);
        assert_eq!(a[3], 0.0);
        assert!(a[8].is_nan());
        // no expressions: no values
        let mut none = SharedValues::new(&pool, &[], position);
        none.eval(&pool, &x, &[2.0], 0.5, &mut a);
        assert!(a.is_empty());
    }

    #[test]
    fn kept_gradients_are_those_of_a_fresh_evaluation_at_the_last_point() {
        let mut pool = ExprPool::new();
        let exprs = shared_chain(&mut pool);
        let position = |j: u32, l: u32| (j as usize + 5 * l as usize) % 10;
        let position = move |j: u32, l: u32| (j < 5 && l < 2).then(|| position(j, l));
        let x1: Vec<f64> = (0..10).map(|k| 0.1 * k as f64 - 0.3).collect();
        let x2: Vec<f64> = (0..10).map(|k| (k as f64 * 0.7).cos()).collect();
        let gradients = |c: &mut EquationGradients, eqs: std::ops::Range<usize>, x: &[f64]| {
            let mut r = Vec::new();
            c.eval_kept(&pool, eqs, x, &[2.0], 0.5, &mut r);
            let mut g: Vec<(usize, usize, u64)> = Vec::new();
            c.gradients_kept(&pool, &mut |i, p, d| g.push((i, p, d.to_bits())));
            (r, g)
        };
        let mut reused = EquationGradients::new(&pool, &exprs, position);
        let _ = gradients(&mut reused, 0..exprs.len(), &x1);
        let (r, g) = gradients(&mut reused, 2..6, &x2);
        let mut fresh = EquationGradients::new(&pool, &exprs[2..6], position);
        let (rf, gf) = gradients(&mut fresh, 0..4, &x2);
        assert_eq!(r, rf);
        assert_eq!(g, gf);
        // rows counted from the first equation of the range: (x_2 − x_1)²
        // has the leaves x_1, x_2, sin(x_2 − x_1)·ẋ_2 also ẋ_2
        let rows: Vec<(usize, usize)> = g.iter().map(|&(i, p, _)| (i, p)).collect();
        assert_eq!(&rows[..5], &[(0, 1), (0, 2), (1, 1), (1, 2), (1, 7)]);
        let d = x2[2] - x2[1];
        assert_eq!(f64::from_bits(g[4].2), d.sin());
    }

    #[test]
    fn sums_products_and_integer_powers_are_the_pools_bit_for_bit() {
        // the operations run from the program alone: integer powers of
        // every kind (squares, reciprocals, negative and odd ones, through
        // `powi`), products of several factors, sums with constants
        let mut pool = ExprPool::new();
        let (x, y, z) = (pool.var(0, 0), pool.var(1, 0), pool.var(2, 0));
        let mut eqs = Vec::new();
        for n in [-3, -2, -1, 2, 3, 5, 7] {
            let s = pool.add(x, y);
            let p = pool.powi(s, n);
            let q = pool.product(&[p, z, y]);
            let c = pool.constant(0.25 * f64::from(n));
            let r = pool.powi(z, n);
            eqs.push(pool.sum(&[q, c, r, x]));
        }
        let state = [0.7, -1.9, 1.3];
        let mut compiled = EquationGradients::new(&pool, &eqs, |j, _| Some(j as usize));
        let grads = check_against_pool(&mut pool, &mut compiled, &eqs, &state, 2.0, 1e-13);
        assert_eq!(grads, 3 * eqs.len());
    }

    #[test]
    fn a_program_node_is_an_8_byte_source_and_its_children() {
        assert_eq!(std::mem::size_of::<super::Source>(), 8);
        // x·y + sin(x) + 2: the sum's three children and the product's
        // two, the sine's one, no start per node
        let mut pool = ExprPool::new();
        let (x, y) = (pool.var(0, 0), pool.var(1, 0));
        let xy = pool.mul(x, y);
        let s = pool.func(Func::Sin, x);
        let two = pool.constant(2.0);
        let e = pool.sum(&[two, xy, s]);
        let compiled = EquationGradients::new(&pool, &[e], |j, _| Some(j as usize));
        assert_eq!(compiled.sources.len(), 6);
        assert_eq!(compiled.children.len(), 6);
        assert_eq!((compiled.ops.len(), compiled.consts.len()), (1, 1));
    }

    #[test]
    fn leaf_positions_are_the_places_of_the_keys() {
        let keys = [(3, 0), (0, 0), (3, 2), (1, 1), (0, 1)];
        let p = LeafPositions::new(&keys);
        let found: Vec<Option<usize>> = [(3, 0), (0, 0), (3, 2), (1, 1), (0, 1)]
            .iter()
            .map(|&(j, l)| p.get(j, l))
            .collect();
        assert_eq!(found, vec![Some(0), Some(1), Some(2), Some(3), Some(4)]);
        // orders and unknowns without a key
        for (j, l) in [
            (3, 1),
            (3, 3),
            (1, 0),
            (2, 0),
            (4, 0),
            (0, 2),
            (u32::MAX, 0),
        ] {
            assert_eq!(p.get(j, l), None, "({j}, {l})");
        }
        // a repeated key maps to its last place
        assert_eq!(LeafPositions::new(&[(1, 0), (1, 0)]).get(1, 0), Some(1));
        assert_eq!(LeafPositions::new(&[]).get(0, 0), None);
    }
}
