//! Compiled evaluation: a [`Tape`] is a flat SSA instruction list in DAG
//! order; every shared subexpression is computed once per evaluation, and
//! [`Tape::eval`] neither recurses nor allocates (after the scratch buffer
//! has grown once) — except in a call of a function evaluated at run time
//! ([`crate::Node::Call`]), which runs the function's interpreter.

use std::fmt;

use rustc_hash::FxHashMap;

use std::sync::Arc;

use crate::function::Function;
use crate::node::{Callee, CmpOp, ExprId, Func, Func2, Leaf, Node};
use crate::pool::ExprPool;
use crate::query::IdMap;
use crate::scalar::{apply_cmp, apply_func, apply_func2, powi};

/// Why a tape could not be compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TapeError {
    /// A root depends on an unknown (or derivative) that is not among the
    /// inputs.
    MissingInput(ExprId),
    /// An input is not a leaf node.
    InputNotLeaf(ExprId),
    /// The same leaf is listed twice among the inputs.
    DuplicateInput(ExprId),
}

impl fmt::Display for TapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TapeError::MissingInput(e) => {
                write!(
                    f,
                    "expression node {} is a variable that is not an input",
                    e.index()
                )
            }
            TapeError::InputNotLeaf(e) => write!(f, "input node {} is not a leaf", e.index()),
            TapeError::DuplicateInput(e) => write!(f, "input node {} is listed twice", e.index()),
        }
    }
}

impl std::error::Error for TapeError {}

/// One tape instruction; operands are slot indices. Instruction `k` writes
/// slot `base + k`; the slots below `base` hold the inputs, `time`, the
/// parameters and the constants, filled by block copies at the start of
/// each evaluation.
#[derive(Clone, Copy, Debug)]
enum Op {
    Add(u32, u32),
    Sub(u32, u32),
    /// `a + c·b`
    Axpy(u32, f64, u32),
    /// `c + a`
    AddC(f64, u32),
    /// `init + Σ coefs[k]·v[args[k]]` over `start..start+len`.
    Lin(f64, u32, u32),
    /// `ca·a + cb·b` (a sum without constant term).
    Lin2(f64, u32, f64, u32),
    /// `ca·a + cb·b + cc·c` (a sum without constant term).
    Lin3(f64, u32, f64, u32, f64, u32),
    Mul(u32, u32),
    /// `c · a`
    MulC(f64, u32),
    /// `c · a · b`
    MulC2(f64, u32, u32),
    /// `c · a · b · d`
    MulC3(f64, u32, u32, u32),
    /// `c ·` product of `args[start..start+len]`.
    ProdN(f64, u32, u32),
    Sq(u32),
    Recip(u32),
    Powi(u32, i32),
    Pow(u32, u32),
    Func(Func, u32),
    Func2(Func2, u32, u32),
    Cmp(CmpOp, u32, u32),
    And(u32, u32),
    Or(u32, u32),
    Not(u32),
    Select(u32, u32, u32),
    /// Call site `site` of [`Tape::calls`] on `args[start..start+len]`.
    Call(u32, u32, u32),
}

impl Op {
    /// Instruction kind, for grouping.
    fn kind(&self) -> u8 {
        match self {
            Op::Add(..) => 0,
            Op::Sub(..) => 1,
            Op::Axpy(..) => 2,
            Op::AddC(..) => 3,
            Op::Lin(..) => 4,
            Op::Lin2(..) => 20,
            Op::Lin3(..) => 21,
            Op::Mul(..) => 5,
            Op::MulC(..) => 6,
            Op::MulC2(..) => 7,
            Op::ProdN(..) => 8,
            Op::MulC3(..) => 22,
            Op::Sq(_) => 9,
            Op::Recip(_) => 10,
            Op::Powi(..) => 11,
            Op::Pow(..) => 12,
            Op::Func(f, _) => 32 + *f as u8,
            Op::Func2(f, ..) => 64 + *f as u8,
            Op::Cmp(op, ..) => 96 + *op as u8,
            Op::And(..) => 16,
            Op::Or(..) => 17,
            Op::Not(_) => 18,
            Op::Select(..) => 19,
            Op::Call(..) => 23,
        }
    }

    /// The run kind and the operand fields of this instruction (the
    /// destination is filled in by the caller).
    fn encode(self) -> (Kind, Ins) {
        let ins = |a: u32, b: u32, c: u32, k: f64| Ins {
            dst: 0,
            a,
            b,
            c,
            k,
            k2: 0.0,
            k3: 0.0,
        };
        match self {
            Op::Add(a, b) => (Kind::Add, ins(a, b, 0, 0.0)),
            Op::Sub(a, b) => (Kind::Sub, ins(a, b, 0, 0.0)),
            Op::Axpy(a, c, b) => (Kind::Axpy, ins(a, b, 0, c)),
            Op::AddC(c, a) => (Kind::AddC, ins(a, 0, 0, c)),
            Op::Lin(init, s, l) => (Kind::Lin, ins(s, l, 0, init)),
            Op::Lin2(ca, a, cb, b) => (
                Kind::Lin2,
                Ins {
                    k2: cb,
                    ..ins(a, b, 0, ca)
                },
            ),
            Op::Lin3(ca, a, cb, b, cc, c) => (
                Kind::Lin3,
                Ins {
                    k2: cb,
                    k3: cc,
                    ..ins(a, b, c, ca)
                },
            ),
            Op::Mul(a, b) => (Kind::Mul, ins(a, b, 0, 0.0)),
            Op::MulC(c, a) => (Kind::MulC, ins(a, 0, 0, c)),
            Op::MulC2(c, a, b) => (Kind::MulC2, ins(a, b, 0, c)),
            Op::ProdN(c, s, l) => (Kind::ProdN, ins(s, l, 0, c)),
            Op::MulC3(k, a, b, c) => (Kind::MulC3, ins(a, b, c, k)),
            Op::Sq(a) => (Kind::Sq, ins(a, 0, 0, 0.0)),
            Op::Recip(a) => (Kind::Recip, ins(a, 0, 0, 0.0)),
            Op::Powi(a, n) => (Kind::Powi, ins(a, n as u32, 0, 0.0)),
            Op::Pow(a, b) => (Kind::Pow, ins(a, b, 0, 0.0)),
            Op::Func(f, a) => (Kind::Func(f), ins(a, 0, 0, 0.0)),
            Op::Func2(f, a, b) => (Kind::Func2(f), ins(a, b, 0, 0.0)),
            Op::Cmp(op, a, b) => (Kind::Cmp(op), ins(a, b, 0, 0.0)),
            Op::And(a, b) => (Kind::And, ins(a, b, 0, 0.0)),
            Op::Or(a, b) => (Kind::Or, ins(a, b, 0, 0.0)),
            Op::Not(a) => (Kind::Not, ins(a, 0, 0, 0.0)),
            Op::Select(c, a, b) => (Kind::Select, ins(c, a, b, 0.0)),
            Op::Call(site, s, l) => (Kind::Call, ins(s, l, site, 0.0)),
        }
    }

    /// Applies `f` to every direct slot operand (not to `args` ranges).
    fn map_operands(&mut self, mut f: impl FnMut(u32) -> u32) {
        match self {
            Op::Lin(..) | Op::ProdN(..) | Op::Call(..) => {}
            Op::AddC(_, a)
            | Op::MulC(_, a)
            | Op::Sq(a)
            | Op::Recip(a)
            | Op::Powi(a, _)
            | Op::Func(_, a)
            | Op::Not(a) => *a = f(*a),
            Op::Add(a, b)
            | Op::Sub(a, b)
            | Op::Axpy(a, _, b)
            | Op::Mul(a, b)
            | Op::MulC2(_, a, b)
            | Op::Pow(a, b)
            | Op::Func2(_, a, b)
            | Op::Cmp(_, a, b)
            | Op::And(a, b)
            | Op::Or(a, b)
            | Op::Lin2(_, a, _, b) => {
                *a = f(*a);
                *b = f(*b);
            }
            Op::Select(c, a, b) | Op::Lin3(_, c, _, a, _, b) | Op::MulC3(_, c, a, b) => {
                *c = f(*c);
                *a = f(*a);
                *b = f(*b);
            }
        }
    }

    /// Calls `f` on every slot operand, including `args` ranges.
    fn for_each_operand(&self, args: &[u32], mut f: impl FnMut(u32)) {
        match *self {
            Op::Lin(_, s, l) | Op::ProdN(_, s, l) | Op::Call(_, s, l) => args
                [s as usize..(s + l) as usize]
                .iter()
                .for_each(|&a| f(a)),
            _ => {
                let mut op = *self;
                op.map_operands(|a| {
                    f(a);
                    a
                });
            }
        }
    }
}

/// The operation of a run of instructions (see [`Tape`]).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// `a + b`
    Add,
    /// `a - b`
    Sub,
    /// `a + k·b`
    Axpy,
    /// `k + a`
    AddC,
    /// `k + Σ coefs[i]·v[args[i]]` for `i` in `a..a+b`.
    Lin,
    /// `k·a + k2·b`
    Lin2,
    /// `k·a + k2·b + k3·c`
    Lin3,
    /// `a · b`
    Mul,
    /// `k · a`
    MulC,
    /// `k · a · b`
    MulC2,
    /// `k ·` product of `v[args[i]]` for `i` in `a..a+b`.
    ProdN,
    /// `k · a · b · c`
    MulC3,
    /// `a²`
    Sq,
    /// `1 / a`
    Recip,
    /// `a^(b as i32)`
    Powi,
    /// `a^b`
    Pow,
    Func(Func),
    Func2(Func2),
    Cmp(CmpOp),
    And,
    Or,
    Not,
    /// `if a then b else c`
    Select,
    /// Call site `c` on the slots `args[a..a+b]`.
    Call,
}

/// One encoded instruction: writes slot `dst` from the operand slots `a`,
/// `b`, `c` and the constant `k`, as its run's [`Kind`] says.
#[derive(Clone, Copy, Debug)]
struct Ins {
    dst: u32,
    a: u32,
    b: u32,
    c: u32,
    k: f64,
    k2: f64,
    k3: f64,
}

/// Appends an instruction of `kind` at position `at` to `runs` (extending
/// the last run when it is of the same kind).
fn push_run(runs: &mut Vec<(Kind, u32)>, kind: Kind, at: usize) {
    match runs.last_mut() {
        Some((k, end)) if *k == kind => *end += 1,
        _ => runs.push((kind, at as u32 + 1)),
    }
}

/// Loop-invariant code motion for tapes: the instructions that depend on
/// parameters and constants only (e.g. `k2/K` of a rate law, the `4·k1` of
/// its derivative) are moved out of `ops` and returned, in a valid order;
/// their results get the slots `base..base + m` and the other instructions
/// start at the returned new base (operands, `args` and `outputs`
/// renumbered). Slots `0..=n_inputs` (the inputs and `time`) vary.
fn hoist_invariants(
    ops: &mut Vec<Op>,
    args: &mut [u32],
    outputs: &mut [u32],
    n_inputs: usize,
    base: usize,
) -> (Vec<Op>, usize) {
    let mut invariant = vec![false; ops.len()];
    for i in 0..ops.len() {
        let mut inv = true;
        ops[i].for_each_operand(args, |a| {
            let a = a as usize;
            match a.checked_sub(base) {
                Some(k) => inv &= invariant[k],
                None => inv &= a > n_inputs,
            }
        });
        invariant[i] = inv;
    }
    let m = invariant.iter().filter(|&&x| x).count();
    if m == 0 {
        return (Vec::new(), base);
    }
    let (mut next_pre, mut next) = (base, base + m);
    let new_slot: Vec<u32> = invariant
        .iter()
        .map(|&inv| {
            let s = if inv { &mut next_pre } else { &mut next };
            *s += 1;
            (*s - 1) as u32
        })
        .collect();
    let remap = |a: u32| match (a as usize).checked_sub(base) {
        Some(k) => new_slot[k],
        None => a,
    };
    let (mut pre, mut rest) = (Vec::with_capacity(m), Vec::with_capacity(ops.len() - m));
    for (op, &inv) in ops.iter().zip(&invariant) {
        let mut op = *op;
        op.map_operands(remap);
        if inv { pre.push(op) } else { rest.push(op) }
    }
    for a in args.iter_mut() {
        *a = remap(*a);
    }
    for o in outputs.iter_mut() {
        *o = remap(*o);
    }
    *ops = rest;
    (pre, base + m)
}

/// Reorders the instructions by dependency level and, within a level, by
/// kind: runs of equal instructions make the dispatch branch predictable.
/// Any order that respects the levels is a valid schedule, and each
/// instruction computes exactly the same value.
fn schedule(ops: &mut Vec<Op>, args: &mut [u32], outputs: &mut [u32], base: usize) {
    let mut level = vec![0u32; ops.len()];
    for i in 0..ops.len() {
        let mut l = 0;
        ops[i].for_each_operand(args, |a| {
            if let Some(k) = (a as usize).checked_sub(base) {
                l = l.max(level[k] + 1);
            }
        });
        level[i] = l;
    }
    let mut perm: Vec<usize> = (0..ops.len()).collect();
    perm.sort_by_key(|&i| (level[i], ops[i].kind(), i));
    let mut new_pos = vec![0u32; ops.len()];
    for (p, &i) in perm.iter().enumerate() {
        new_pos[i] = (base + p) as u32;
    }
    let remap = |a: u32| match (a as usize).checked_sub(base) {
        Some(k) => new_pos[k],
        None => a,
    };
    let mut reordered: Vec<Op> = perm.iter().map(|&i| ops[i]).collect();
    for op in reordered.iter_mut() {
        op.map_operands(remap);
    }
    for a in args.iter_mut() {
        *a = remap(*a);
    }
    for o in outputs.iter_mut() {
        *o = remap(*o);
    }
    *ops = reordered;
}

/// What a needed node computes, with node operands (before slot
/// assignment).
enum Plan {
    Leaf,
    Const(f64),
    /// Sum: initial value (the constant term or −0.0) and (coefficient,
    /// term) pairs; `c·x` terms are fused.
    Lin(f64, Vec<(f64, ExprId)>),
    Prod(f64, Vec<ExprId>),
    Powi(ExprId, i32),
    Pow(ExprId, ExprId),
    Func(Func, ExprId),
    Func2(Func2, ExprId, ExprId),
    Cmp(CmpOp, ExprId, ExprId),
    And(ExprId, ExprId),
    Or(ExprId, ExprId),
    Not(ExprId),
    Select(ExprId, ExprId, ExprId),
    Call(Callee, Vec<ExprId>),
}

impl Plan {
    fn of(pool: &ExprPool, id: ExprId) -> Plan {
        match pool.node(id) {
            Node::Const(v) => Plan::Const(v),
            Node::Leaf(_) => Plan::Leaf,
            Node::Add(ts) => {
                let mut init = -0.0;
                let mut terms = Vec::with_capacity(ts.len());
                for &t in ts.iter() {
                    match pool.node(t) {
                        // -0.0 + c = c, as in direct evaluation.
                        Node::Const(c) => init += c,
                        Node::Mul(fs) if fs.len() == 2 => match pool.as_constant(fs[0]) {
                            Some(c) => terms.push((c, fs[1])),
                            None => terms.push((1.0, t)),
                        },
                        _ => terms.push((1.0, t)),
                    }
                }
                Plan::Lin(init, terms)
            }
            Node::Mul(fs) => match pool.as_constant(fs[0]) {
                Some(c) => Plan::Prod(c, fs[1..].to_vec()),
                None => Plan::Prod(1.0, fs.to_vec()),
            },
            Node::Powi(a, n) => Plan::Powi(a, n),
            Node::Pow(a, b) => Plan::Pow(a, b),
            Node::Func(f, a) => Plan::Func(f, a),
            Node::Func2(f, a, b) => Plan::Func2(f, a, b),
            Node::Cmp(op, a, b) => Plan::Cmp(op, a, b),
            Node::And(a, b) => Plan::And(a, b),
            Node::Or(a, b) => Plan::Or(a, b),
            Node::Not(a) => Plan::Not(a),
            Node::Select(c, a, b) => Plan::Select(c, a, b),
            Node::Call(f, args) => Plan::Call(f, args.to_vec()),
        }
    }

    fn operands(&self, mut f: impl FnMut(ExprId)) {
        match self {
            Plan::Leaf | Plan::Const(_) => {}
            Plan::Lin(_, ts) => ts.iter().for_each(|t| f(t.1)),
            Plan::Prod(_, fs) | Plan::Call(_, fs) => fs.iter().copied().for_each(f),
            Plan::Powi(a, _) | Plan::Func(_, a) | Plan::Not(a) => f(*a),
            Plan::Pow(a, b)
            | Plan::Func2(_, a, b)
            | Plan::Cmp(_, a, b)
            | Plan::And(a, b)
            | Plan::Or(a, b) => {
                f(*a);
                f(*b);
            }
            Plan::Select(c, a, b) => {
                f(*c);
                f(*a);
                f(*b);
            }
        }
    }
}

/// The slots of one [`Tape`] with its parameters and constants in place
/// ([`Tape::frame`]), so that a repeated evaluation
/// ([`Tape::eval_frame`]) copies only the inputs.
#[derive(Clone, Debug)]
pub struct TapeFrame {
    slots: Vec<f64>,
}

/// The slots of one [`Tape`] for `L` evaluation points at once
/// ([`Tape::lanes`], [`Tape::eval_lanes`]): slot `k` holds the `L` values
/// of that slot, one per point.
#[derive(Clone, Debug)]
pub struct TapeLanes<const L: usize> {
    slots: Vec<[f64; L]>,
}

/// A scalar slot vector seen as one lane.
fn one_lane(v: &mut [f64]) -> &mut [[f64; 1]] {
    v.as_chunks_mut::<1>().0
}

/// A compiled list of root expressions, evaluated by one forward loop.
///
/// Inputs are the leaves listed at compilation (typically z, ż, … in slot
/// order); parameters are read from a `params` slice indexed by
/// [`crate::ParamId`]; `time` is passed separately. Only the nodes the
/// roots need are compiled; `x − y`, `x + c·y`, `c·x·y` and sums with
/// coefficients are fused into single instructions, with results bit for bit
/// equal to [`ExprPool::eval`].
///
/// Instructions are grouped into runs of one kind (within a dependency
/// level), so [`Tape::eval`] dispatches once per run, not once per
/// instruction; the instruction computing the `r`-th root writes slot
/// `base + r`, so the outputs are copied out as one block.
#[derive(Clone, Debug)]
pub struct Tape {
    /// Instructions on parameters and constants alone, hoisted out of the
    /// per-call loop: run by [`Tape::frame`] once (and by [`Tape::eval`]
    /// on every call, which loads the parameters anew); their results live
    /// in the slots just below `base`.
    pre_ins: Vec<Ins>,
    pre_runs: Vec<(Kind, u32)>,
    ins: Vec<Ins>,
    /// Runs of instructions of one kind: `(kind, end)`, the run covering
    /// `ins[previous end..end]`.
    runs: Vec<(Kind, u32)>,
    args: Vec<u32>,
    coefs: Vec<f64>,
    /// The functions called, with the output each call site selects.
    calls: Vec<(Arc<Function>, u32)>,
    consts: Vec<f64>,
    /// Parameter ids; parameter `k` of this list lives in slot
    /// `n_inputs + 1 + k`.
    params: Vec<u32>,
    /// Outputs not computed into the output block (leaves, constants and
    /// repeated roots): `(root index, slot)`, copied into the output block
    /// after the instructions.
    fixups: Vec<(u32, u32)>,
    n_outputs: usize,
    n_inputs: usize,
    /// First slot of the output block (after inputs, time, parameters and
    /// constants); temporaries follow the output block.
    base: usize,
    n_slots: usize,
}

impl Tape {
    /// Compiles `roots`; `inputs` lists the leaf expressions whose values are
    /// given, in slot order, to [`Tape::eval`]. Every unknown the roots
    /// depend on must be an input; `time` and parameters may be inputs too
    /// (then the input value is used), otherwise they are read from the
    /// `t` and `params` arguments of [`Tape::eval`].
    pub fn compile(
        pool: &ExprPool,
        roots: &[ExprId],
        inputs: &[ExprId],
    ) -> Result<Tape, TapeError> {
        let mut input_slot: FxHashMap<ExprId, u32> = FxHashMap::default();
        for (k, &i) in inputs.iter().enumerate() {
            if !matches!(pool.node(i), Node::Leaf(_)) {
                return Err(TapeError::InputNotLeaf(i));
            }
            if input_slot.insert(i, k as u32).is_some() {
                return Err(TapeError::DuplicateInput(i));
            }
        }
        let order = pool.topo_order(roots);
        // Backward pass: plan every needed node, marking its operands.
        let mut plan_of: IdMap<u32> = IdMap::for_traversal(&order, pool.len());
        let mut plans: Vec<Plan> = Vec::new();
        for &r in roots {
            plan_of.insert(r, u32::MAX);
        }
        for &id in order.iter().rev() {
            if plan_of.get(id).is_none() {
                continue;
            }
            let plan = Plan::of(pool, id);
            plan.operands(|c| {
                if plan_of.get(c).is_none() {
                    plan_of.insert(c, u32::MAX);
                }
            });
            plan_of.insert(id, plans.len() as u32);
            plans.push(plan);
        }
        // Leaves and constants first (slots below `base`), then the ops.
        let mut slot: IdMap<u32> = IdMap::for_traversal(&order, pool.len());
        let mut params: Vec<u32> = Vec::new();
        let mut consts: Vec<f64> = Vec::new();
        let mut param_ids: Vec<(u32, ExprId)> = Vec::new();
        let mut const_ids: Vec<ExprId> = Vec::new();
        for &id in &order {
            let Some(k) = plan_of.get(id) else { continue };
            match plans[k as usize] {
                Plan::Leaf => match (input_slot.get(&id), pool.node(id)) {
                    (Some(&s), _) => slot.insert(id, s),
                    (None, Node::Leaf(Leaf::Time)) => slot.insert(id, inputs.len() as u32),
                    (None, Node::Leaf(Leaf::Param(p))) => param_ids.push((p.0, id)),
                    _ => return Err(TapeError::MissingInput(id)),
                },
                Plan::Const(v) => {
                    consts.push(v);
                    const_ids.push(id);
                }
                _ => {}
            }
        }
        let n_inputs = inputs.len();
        for (k, (p, id)) in param_ids.into_iter().enumerate() {
            params.push(p);
            slot.insert(id, (n_inputs + 1 + k) as u32);
        }
        let c0 = n_inputs + 1 + params.len();
        for (k, id) in const_ids.into_iter().enumerate() {
            slot.insert(id, (c0 + k) as u32);
        }
        let base = c0 + consts.len();
        let mut ops: Vec<Op> = Vec::with_capacity(plans.len());
        let mut args: Vec<u32> = Vec::new();
        let mut coefs: Vec<f64> = Vec::new();
        let mut calls: Vec<(Arc<Function>, u32)> = Vec::new();
        for &id in &order {
            let Some(k) = plan_of.get(id) else { continue };
            let s = |c: ExprId| slot.get(c).unwrap_or(0);
            let op = match &plans[k as usize] {
                Plan::Leaf | Plan::Const(_) => continue,
                Plan::Lin(init, ts) => {
                    let no_init = init.to_bits() == (-0.0_f64).to_bits();
                    match (no_init, ts.as_slice()) {
                        (true, [(a, x), (b, y)]) if *a == 1.0 && *b == 1.0 => Op::Add(s(*x), s(*y)),
                        (true, [(a, x), (b, y)]) if *a == 1.0 && *b == -1.0 => {
                            Op::Sub(s(*x), s(*y))
                        }
                        (true, [(a, x), (c, y)]) if *a == 1.0 => Op::Axpy(s(*x), *c, s(*y)),
                        (true, [(c, x), (b, y)]) if *b == 1.0 => Op::Axpy(s(*y), *c, s(*x)),
                        (false, [(a, x)]) if *a == 1.0 => Op::AddC(*init, s(*x)),
                        // -0.0 + x = x for every x, so the initial -0.0
                        // can be dropped.
                        (true, [(a, x), (b, y)]) => Op::Lin2(*a, s(*x), *b, s(*y)),
                        (true, [(a, x), (b, y), (c, z)]) => {
                            Op::Lin3(*a, s(*x), *b, s(*y), *c, s(*z))
                        }
                        _ => {
                            let start = args.len() as u32;
                            for (c, t) in ts {
                                args.push(s(*t));
                                coefs.push(*c);
                            }
                            Op::Lin(*init, start, ts.len() as u32)
                        }
                    }
                }
                Plan::Prod(c, fs) => match fs.as_slice() {
                    [a] => Op::MulC(*c, s(*a)),
                    [a, b] if *c == 1.0 => Op::Mul(s(*a), s(*b)),
                    [a, b] => Op::MulC2(*c, s(*a), s(*b)),
                    [a, b, d] => Op::MulC3(*c, s(*a), s(*b), s(*d)),
                    _ => {
                        let start = args.len() as u32;
                        for f in fs {
                            args.push(s(*f));
                            coefs.push(1.0);
                        }
                        Op::ProdN(*c, start, fs.len() as u32)
                    }
                },
                Plan::Powi(a, 2) => Op::Sq(s(*a)),
                Plan::Powi(a, -1) => Op::Recip(s(*a)),
                Plan::Powi(a, n) => Op::Powi(s(*a), *n),
                Plan::Pow(a, b) => Op::Pow(s(*a), s(*b)),
                Plan::Func(f, a) => Op::Func(*f, s(*a)),
                Plan::Func2(f, a, b) => Op::Func2(*f, s(*a), s(*b)),
                Plan::Cmp(op, a, b) => Op::Cmp(*op, s(*a), s(*b)),
                Plan::And(a, b) => Op::And(s(*a), s(*b)),
                Plan::Or(a, b) => Op::Or(s(*a), s(*b)),
                Plan::Not(a) => Op::Not(s(*a)),
                Plan::Select(c, a, b) => Op::Select(s(*c), s(*a), s(*b)),
                Plan::Call(f, xs) => {
                    let start = args.len() as u32;
                    for x in xs {
                        args.push(s(*x));
                        coefs.push(0.0);
                    }
                    calls.push((pool.function_arc(f.function()), f.output() as u32));
                    Op::Call(calls.len() as u32 - 1, start, xs.len() as u32)
                }
            };
            slot.insert(id, (base + ops.len()) as u32);
            ops.push(op);
        }
        let mut outputs: Vec<u32> = roots.iter().map(|&r| slot.get(r).unwrap_or(0)).collect();
        let (pre_ops, base) = hoist_invariants(&mut ops, &mut args, &mut outputs, n_inputs, base);
        let first_hoisted = base - pre_ops.len();
        let mut pre_ins: Vec<Ins> = Vec::with_capacity(pre_ops.len());
        let mut pre_runs: Vec<(Kind, u32)> = Vec::new();
        for (k, op) in pre_ops.into_iter().enumerate() {
            let (kind, mut i) = op.encode();
            i.dst = (first_hoisted + k) as u32;
            push_run(&mut pre_runs, kind, pre_ins.len());
            pre_ins.push(i);
        }
        schedule(&mut ops, &mut args, &mut outputs, base);
        // Destinations: the first instruction computing root `r` writes
        // slot `base + r`; the other instructions write temporaries after
        // the output block.
        let n_out = roots.len();
        let mut dst = vec![u32::MAX; ops.len()];
        let mut fixups: Vec<(u32, u32)> = Vec::new();
        for (r, &o) in outputs.iter().enumerate() {
            match (o as usize).checked_sub(base) {
                Some(k) if dst[k] == u32::MAX => dst[k] = (base + r) as u32,
                _ => fixups.push((r as u32, o)),
            }
        }
        let mut next = base + n_out;
        for d in dst.iter_mut().filter(|d| **d == u32::MAX) {
            *d = next as u32;
            next += 1;
        }
        let remap = |a: u32| match (a as usize).checked_sub(base) {
            Some(k) => dst[k],
            None => a,
        };
        for f in fixups.iter_mut() {
            f.1 = remap(f.1);
        }
        for a in args.iter_mut() {
            *a = remap(*a);
        }
        let mut ins: Vec<Ins> = Vec::with_capacity(ops.len());
        let mut runs: Vec<(Kind, u32)> = Vec::new();
        for (op, &d) in ops.iter_mut().zip(&dst) {
            op.map_operands(remap);
            let (kind, mut i) = op.encode();
            i.dst = d;
            push_run(&mut runs, kind, ins.len());
            ins.push(i);
        }
        Ok(Tape {
            pre_ins,
            pre_runs,
            ins,
            runs,
            args,
            coefs,
            calls,
            consts,
            params,
            fixups,
            n_outputs: n_out,
            n_inputs,
            base,
            n_slots: next,
        })
    }

    /// Number of instructions (leaves and constants excluded; hoisted
    /// parameter-only instructions included).
    pub fn len(&self) -> usize {
        self.pre_ins.len() + self.ins.len()
    }

    /// Number of instructions run per [`Tape::eval_frame`] (those on
    /// parameters and constants alone run once, in [`Tape::frame`]).
    pub fn len_per_call(&self) -> usize {
        self.ins.len()
    }

    /// True if the outputs depend on neither the inputs nor `time` (only
    /// on parameters and constants): no per-call instruction and no output
    /// read from an input or the time slot.
    pub fn is_constant(&self) -> bool {
        self.ins.is_empty() && self.fixups.iter().all(|&(_, s)| s as usize > self.n_inputs)
    }

    /// True if the tape has no instruction.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of scratch slots used by [`Tape::eval`].
    pub fn n_slots(&self) -> usize {
        self.n_slots
    }

    /// Number of outputs (roots).
    pub fn n_outputs(&self) -> usize {
        self.n_outputs
    }

    /// Number of input slots.
    pub fn n_inputs(&self) -> usize {
        self.n_inputs
    }

    /// Evaluates every root into `out[..n_outputs]`. Missing inputs or
    /// parameters (slices too short) read as NaN; surplus outputs are left
    /// untouched, missing ones are skipped. `scratch` is grown to
    /// [`Tape::n_slots`] on first use and reused afterwards (no allocation).
    pub fn eval(
        &self,
        t: f64,
        inputs: &[f64],
        params: &[f64],
        out: &mut [f64],
        scratch: &mut Vec<f64>,
    ) {
        let n = self.n_slots;
        if scratch.len() < n {
            scratch.resize(n, 0.0);
        }
        let v = &mut scratch[..n];
        let k = inputs.len().min(self.n_inputs);
        v[..k].copy_from_slice(&inputs[..k]);
        v[k..self.n_inputs].fill(f64::NAN);
        v[self.n_inputs] = t;
        self.load_params(v, params);
        self.run(v, out);
    }

    /// Writes the parameters (`params`, indexed by `ParamId`; missing ones
    /// NaN) and the constants into their slots of `v` and runs the hoisted
    /// parameter-only instructions.
    fn load_params(&self, v: &mut [f64], params: &[f64]) {
        let p0 = self.n_inputs + 1;
        for (slot, &p) in v[p0..p0 + self.params.len()].iter_mut().zip(&self.params) {
            *slot = params.get(p as usize).copied().unwrap_or(f64::NAN);
        }
        let c0 = p0 + self.params.len();
        v[c0..c0 + self.consts.len()].copy_from_slice(&self.consts);
        self.exec(&self.pre_ins, &self.pre_runs, one_lane(v));
    }

    /// The slots of this tape with the parameters (`params`, indexed by
    /// `ParamId`; missing ones read as NaN) and the constants loaded, for
    /// [`Tape::eval_frame`].
    pub fn frame(&self, params: &[f64]) -> TapeFrame {
        let mut slots = vec![f64::NAN; self.n_slots];
        self.load_params(&mut slots, params);
        TapeFrame { slots }
    }

    /// [`Tape::eval`] in a frame made by [`Tape::frame`] of this tape: only
    /// the inputs (the concatenation of `inputs`, missing ones NaN) and
    /// `t` are written before the instructions run, the parameters and
    /// constants are already in place. A frame of another shape leaves
    /// `out` untouched.
    pub fn eval_frame(&self, frame: &mut TapeFrame, t: f64, inputs: &[&[f64]], out: &mut [f64]) {
        if frame.slots.len() != self.n_slots {
            return;
        }
        let v = &mut frame.slots[..];
        let mut k = 0;
        for part in inputs {
            let m = part.len().min(self.n_inputs - k);
            v[k..k + m].copy_from_slice(&part[..m]);
            k += m;
        }
        v[k..self.n_inputs].fill(f64::NAN);
        v[self.n_inputs] = t;
        self.run(v, out);
    }

    /// Runs the instructions on the slots `v` (inputs, time, parameters,
    /// constants and hoisted values filled) and copies the outputs into
    /// `out`.
    fn run(&self, v: &mut [f64], out: &mut [f64]) {
        self.compute(one_lane(v));
        let (base, m) = (self.base, out.len().min(self.n_outputs));
        out[..m].copy_from_slice(&v[base..base + m]);
    }

    /// Runs the per-call instructions on the slots `v` (every lane) and
    /// puts the leaves and repeated roots into the output block, so that
    /// the outputs leave as one block (stores into `out` right after the
    /// copy would stall on it).
    fn compute<const L: usize>(&self, v: &mut [[f64; L]]) {
        self.exec(&self.ins, &self.runs, v);
        let base = self.base;
        for &(r, s) in &self.fixups {
            v[base + r as usize] = v[s as usize];
        }
    }

    /// The slots of this tape for evaluations at `L` points at once
    /// ([`Tape::eval_lanes`]), parameters, constants and hoisted values in
    /// place in every lane.
    pub fn lanes<const L: usize>(&self, params: &[f64]) -> TapeLanes<L> {
        let scalar = self.frame(params);
        TapeLanes {
            slots: scalar.slots.iter().map(|&x| [x; L]).collect(),
        }
    }

    /// [`Tape::eval_frame`] at `L` points at once: lane `l` has the time
    /// `t[l]`, the inputs `inputs[0][l], inputs[1][l], …` (concatenated;
    /// missing ones NaN) and its outputs go to `out[l]`. One pass over the
    /// instructions serves every lane (one dispatch per run of
    /// instructions for all points), and each lane's results are bit for
    /// bit those of [`Tape::eval_frame`] at its point. A frame of another
    /// shape leaves `out` untouched.
    pub fn eval_lanes<const L: usize>(
        &self,
        frame: &mut TapeLanes<L>,
        t: [f64; L],
        inputs: &[[&[f64]; L]],
        out: [&mut [f64]; L],
    ) {
        if frame.slots.len() != self.n_slots {
            return;
        }
        let v = &mut frame.slots[..];
        for l in 0..L {
            let mut k = 0;
            for part in inputs {
                let m = part[l].len().min(self.n_inputs - k);
                for (slot, &x) in v[k..k + m].iter_mut().zip(&part[l][..m]) {
                    slot[l] = x;
                }
                k += m;
            }
            for slot in &mut v[k..self.n_inputs] {
                slot[l] = f64::NAN;
            }
        }
        v[self.n_inputs] = t;
        self.compute(v);
        let base = self.base;
        for (l, o) in out.into_iter().enumerate() {
            let m = o.len().min(self.n_outputs);
            for (x, slot) in o[..m].iter_mut().zip(&v[base..base + m]) {
                *x = slot[l];
            }
        }
    }

    /// Executes the instructions `ins`, grouped by `runs`, on the slots
    /// `v`, each slot holding the values of `L` evaluation points (lanes).
    /// Every lane runs exactly the operations of a scalar evaluation, so a
    /// lane's results are bit for bit those of [`Tape::eval`] at its point;
    /// `L = 1` is the scalar evaluation itself.
    fn exec<const L: usize>(&self, ins: &[Ins], runs: &[(Kind, u32)], v: &mut [[f64; L]]) {
        let (args, coefs) = (&self.args[..], &self.coefs[..]);
        let mut start = 0;
        for &(kind, end) in runs {
            let run = &ins[start..end as usize];
            start = end as usize;
            // Instructions of one, two or three slot operands, lane by lane.
            macro_rules! un {
                (|$x:ident, $i:ident| $e:expr) => {
                    for $i in run {
                        let xa = v[$i.a as usize];
                        v[$i.dst as usize] = std::array::from_fn(|l| {
                            let $x = xa[l];
                            $e
                        });
                    }
                };
            }
            macro_rules! bin {
                (|$x:ident, $y:ident, $i:ident| $e:expr) => {
                    for $i in run {
                        let (xa, xb) = (v[$i.a as usize], v[$i.b as usize]);
                        v[$i.dst as usize] = std::array::from_fn(|l| {
                            let ($x, $y) = (xa[l], xb[l]);
                            $e
                        });
                    }
                };
            }
            macro_rules! ter {
                (|$x:ident, $y:ident, $z:ident, $i:ident| $e:expr) => {
                    for $i in run {
                        let (xa, xb, xc) = (v[$i.a as usize], v[$i.b as usize], v[$i.c as usize]);
                        v[$i.dst as usize] = std::array::from_fn(|l| {
                            let ($x, $y, $z) = (xa[l], xb[l], xc[l]);
                            $e
                        });
                    }
                };
            }
            match kind {
                Kind::Add => bin!(|a, b, _i| a + b),
                Kind::Sub => bin!(|a, b, _i| a - b),
                Kind::Axpy => bin!(|a, b, i| a + i.k * b),
                Kind::AddC => un!(|a, i| i.k + a),
                Kind::Lin => {
                    // `init + Σ c·x`, left to right as the direct evaluation.
                    for i in run {
                        let (s, n) = (i.a as usize, i.b as usize);
                        let mut acc = [i.k; L];
                        for (&j, &c) in args[s..s + n].iter().zip(&coefs[s..s + n]) {
                            let x = v[j as usize];
                            for l in 0..L {
                                acc[l] += c * x[l];
                            }
                        }
                        v[i.dst as usize] = acc;
                    }
                }
                Kind::Lin2 => bin!(|a, b, i| i.k * a + i.k2 * b),
                Kind::Lin3 => ter!(|a, b, c, i| i.k * a + i.k2 * b + i.k3 * c),
                Kind::Mul => bin!(|a, b, _i| a * b),
                Kind::MulC => un!(|a, i| i.k * a),
                Kind::MulC2 => bin!(|a, b, i| i.k * a * b),
                Kind::MulC3 => ter!(|a, b, c, i| i.k * a * b * c),
                Kind::ProdN => {
                    for i in run {
                        let (s, n) = (i.a as usize, i.b as usize);
                        let mut acc = [i.k; L];
                        for &j in &args[s..s + n] {
                            let x = v[j as usize];
                            for l in 0..L {
                                acc[l] *= x[l];
                            }
                        }
                        v[i.dst as usize] = acc;
                    }
                }
                Kind::Sq => un!(|a, _i| a * a),
                Kind::Recip => un!(|a, _i| 1.0 / a),
                Kind::Powi => un!(|a, i| powi(a, i.b as i32)),
                Kind::Pow => bin!(|a, b, _i| a.powf(b)),
                Kind::Func(f) => un!(|a, _i| apply_func(f, a)),
                Kind::Func2(f) => bin!(|a, b, _i| apply_func2(f, a, b)),
                Kind::Cmp(op) => bin!(|a, b, _i| apply_cmp(op, a, b)),
                Kind::And => bin!(|a, b, _i| f64::from(a != 0.0 && b != 0.0)),
                Kind::Or => bin!(|a, b, _i| f64::from(a != 0.0 || b != 0.0)),
                Kind::Not => un!(|a, _i| f64::from(a == 0.0)),
                Kind::Select => ter!(|c, a, b, _i| if c != 0.0 { a } else { b }),
                Kind::Call => {
                    for i in run {
                        let (s, n) = (i.a as usize, i.b as usize);
                        let (f, output) = &self.calls[i.c as usize];
                        let r: [f64; L] = std::array::from_fn(|l| {
                            let x: Vec<f64> =
                                args[s..s + n].iter().map(|&j| v[j as usize][l]).collect();
                            f.call(&x)
                                .ok()
                                .and_then(|out| out.get(*output as usize).copied())
                                .unwrap_or(f64::NAN)
                        });
                        v[i.dst as usize] = r;
                    }
                }
            }
        }
    }
}
