//! Functions evaluated at run time ([`Function`]): the algorithm of a
//! Modelica function (MLS 3.6, chapter 12) that the instantiation could
//! not, or was asked not to, inline, with its interpreter
//! ([`Function::call`]) and its forward-mode derivative
//! ([`Function::forward_derivative`]).
//!
//! A function's variables are numbered slots: its inputs first
//! (`0..n_inputs`), then its outputs and locals. Its expressions live in a
//! pool of their own, in which slot `s` is the leaf `Var{s, 0}`, so the
//! statements are evaluated by [`Tape`]s and differentiated by the pool's
//! [`ExprPool::diff`].
//!
//! The derivative is forward-mode automatic differentiation by source
//! transformation (griewank2008 §3.1, the tangent evaluation procedure):
//! every slot `v` gets a tangent slot `v̇`, every assignment `v := e`
//! becomes `v̇ := Σ_s ∂e/∂s · ṡ; v := e` (tangent first, since `e` reads
//! the old `v`), and the control flow — `if`, `for`, `while`, `break`,
//! `return` — is the primal's, decided by the primal values. The result
//! is again a [`Function`], of inputs `(x, ẋ)` and outputs `ẏ`: the same
//! shape as a `derivative` annotation's `f_der` (MLS 3.6 §12.7.1), so a
//! call's time derivative and its partial derivatives are calls of it,
//! and a higher derivative differentiates it once more.

use crate::node::{ExprId, Leaf, Node};
use crate::pool::ExprPool;
use crate::tape::Tape;
use std::fmt;
use std::sync::{Arc, Mutex};

/// The most loop iterations (of all `for` and `while` loops together) one
/// call of a function runs before it fails with
/// [`CallError::IterationLimit`].
pub const MAX_CALL_ITERATIONS: u64 = 100_000;

/// One statement of a function's algorithm; expressions are ids in the
/// function's own pool, slots index its variables.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `slot := expr`.
    Assign(u32, ExprId),
    /// `if c1 then … elseif c2 then … else … end if`.
    If {
        /// `(condition, statements)` of `if` and each `elseif`.
        branches: Vec<(ExprId, Vec<Stmt>)>,
        /// The `else` statements.
        else_branch: Vec<Stmt>,
    },
    /// `for var in start:step:stop loop … end for` (the range evaluated
    /// once, on entry).
    For {
        /// The slot of the loop variable.
        var: u32,
        /// First value.
        start: ExprId,
        /// Step (not 0).
        step: ExprId,
        /// Last value (inclusive).
        stop: ExprId,
        /// The loop body.
        body: Vec<Stmt>,
    },
    /// `while condition loop … end while`.
    While {
        /// Evaluated before each iteration.
        condition: ExprId,
        /// The loop body.
        body: Vec<Stmt>,
    },
    /// `break`: leaves the innermost loop.
    Break,
    /// `return`: ends the call.
    Return,
}

/// The `derivative` annotation of a function (MLS 3.6 §12.7.1): the
/// function computing its first derivative, of inputs `(x, ẋ)` where `ẋ`
/// lists the derivatives of the inputs marked here, and of outputs the
/// derivatives of the outputs.
#[derive(Clone, Debug, PartialEq)]
pub struct DerivativeAnnotation {
    /// The derivative function.
    pub function: crate::FuncId,
    /// For each input: whether the derivative function takes its
    /// derivative (false for the inputs listed by `noDerivative` or
    /// `zeroDerivative`).
    pub differentiated: Vec<bool>,
}

/// A function of the model evaluated at run time.
#[derive(Clone, Debug)]
pub struct Function {
    /// The function's name (its Modelica class path).
    pub name: String,
    /// The names of its slots (inputs first), for messages and printing.
    pub slot_names: Vec<String>,
    /// The number of inputs (slots `0..n_inputs`).
    pub n_inputs: usize,
    /// The slots of its outputs, in declaration order.
    pub outputs: Vec<u32>,
    /// The expressions of its statements; slot `s` is `Var{s, 0}`.
    pub pool: ExprPool,
    /// The algorithm.
    pub body: Vec<Stmt>,
    /// Its `derivative` annotation, if any.
    pub derivative: Option<DerivativeAnnotation>,
    /// How many differentiations produced it (0 for a function of the
    /// model, 1 for its derivative, …).
    pub order: u32,
    /// One tape per expression of the body, by expression id.
    tapes: Vec<(ExprId, Tape)>,
    /// The first failed call, kept for the error message of a run that
    /// fails because of it ([`Function::failure`]).
    failure: Arc<Mutex<Option<CallError>>>,
}

/// Why a call of a [`Function`] failed.
#[derive(Clone, Debug, PartialEq)]
pub enum CallError {
    /// The loops of one call ran more than [`MAX_CALL_ITERATIONS`]
    /// iterations (a `while` that does not end, for instance).
    IterationLimit {
        /// The function.
        function: String,
        /// The limit.
        limit: u64,
        /// The arguments of the call.
        args: Vec<f64>,
    },
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::IterationLimit {
                function,
                limit,
                args,
            } => write!(
                f,
                "function `{function}` ran more than {limit} loop iterations in one call \
                 (arguments {args:?}); a `while` loop does not end"
            ),
        }
    }
}

impl std::error::Error for CallError {}

/// How a block of statements ended.
#[derive(Clone, Copy, PartialEq)]
enum Flow {
    Normal,
    Break,
    Return,
}

/// The state of one call.
struct Run<'a> {
    f: &'a Function,
    slots: Vec<f64>,
    scratch: Vec<f64>,
    iterations: u64,
}

impl Function {
    /// A function of `slot_names.len()` slots, the first `n_inputs` its
    /// inputs, computing `body` over the expressions of `pool` (slot `s` is
    /// the leaf `Var{s, 0}`; no `time`, parameter or call in them).
    /// `None` when an expression of the body uses a leaf that is no slot.
    pub fn new(
        name: String,
        slot_names: Vec<String>,
        n_inputs: usize,
        outputs: Vec<u32>,
        mut pool: ExprPool,
        body: Vec<Stmt>,
    ) -> Option<Function> {
        let inputs: Vec<ExprId> = (0..slot_names.len() as u32)
            .map(|s| pool.var(s, 0))
            .collect();
        let mut exprs = Vec::new();
        collect_exprs(&body, &mut exprs);
        exprs.sort_unstable();
        exprs.dedup();
        let mut tapes = Vec::with_capacity(exprs.len());
        for e in exprs {
            let has_call = pool
                .topo_order(&[e])
                .into_iter()
                .any(|id| matches!(pool.node(id), Node::Call(..)));
            if has_call {
                return None;
            }
            tapes.push((e, Tape::compile(&pool, &[e], &inputs).ok()?));
        }
        Some(Function {
            name,
            slot_names,
            n_inputs,
            outputs,
            pool,
            body,
            derivative: None,
            order: 0,
            tapes,
            failure: Arc::default(),
        })
    }

    /// Runs the algorithm on `args` (one per input; missing ones NaN) and
    /// returns every output, in order. Variables read before they are
    /// assigned are NaN.
    pub fn call(&self, args: &[f64]) -> Result<Vec<f64>, CallError> {
        let mut slots = vec![f64::NAN; self.slot_names.len()];
        for (s, a) in slots.iter_mut().zip(args.iter().take(self.n_inputs)) {
            *s = *a;
        }
        let mut run = Run {
            f: self,
            slots,
            scratch: Vec::new(),
            iterations: 0,
        };
        if run.block(&self.body).is_err() {
            let e = CallError::IterationLimit {
                function: self.name.clone(),
                limit: MAX_CALL_ITERATIONS,
                args: args.to_vec(),
            };
            if let Ok(mut first) = self.failure.lock() {
                first.get_or_insert_with(|| e.clone());
            }
            return Err(e);
        }
        Ok(self
            .outputs
            .iter()
            .map(|&o| run.slots[o as usize])
            .collect())
    }

    /// The forward-mode derivative of this function (see the module
    /// documentation): inputs `(x_1 … x_n, ẋ_1 … ẋ_n)`, outputs
    /// `(ẏ_1 … ẏ_m)`, named `name` with a `$der` suffix, of order one
    /// more.
    pub fn forward_derivative(&self) -> Option<Function> {
        let n = self.slot_names.len() as u32;
        let n_in = self.n_inputs as u32;
        // New layout: x (n_in), ẋ (n_in), the other primal slots, then
        // the tangents of the other slots.
        let primal = |s: u32| if s < n_in { s } else { s + n_in };
        let tangent = |s: u32| if s < n_in { n_in + s } else { n + s };
        let mut names = vec![String::new(); 2 * n as usize];
        for (s, name) in self.slot_names.iter().enumerate() {
            names[primal(s as u32) as usize] = name.clone();
            names[tangent(s as u32) as usize] = format!("der_{name}");
        }
        let mut to = ExprPool::new();
        let mut t = Transform {
            from: &self.pool,
            to: &mut to,
            primal: &primal,
            tangent: &tangent,
        };
        let body = t.block(&self.body);
        let outputs = self.outputs.iter().map(|&o| tangent(o)).collect();
        let mut f = Function::new(
            format!("{}$der", self.name),
            names,
            2 * self.n_inputs,
            outputs,
            to,
            body,
        )?;
        f.order = self.order + 1;
        Some(f)
    }

    /// The first call of this function (or of a copy of it) that failed,
    /// if any: a run whose values turned NaN reports it.
    pub fn failure(&self) -> Option<CallError> {
        self.failure.lock().ok().and_then(|f| f.clone())
    }

    /// The value of expression `e` of the body on `slots`.
    fn eval(&self, e: ExprId, slots: &[f64], scratch: &mut Vec<f64>) -> f64 {
        let Ok(k) = self.tapes.binary_search_by_key(&e, |(id, _)| *id) else {
            return f64::NAN;
        };
        let mut out = [f64::NAN];
        self.tapes[k]
            .1
            .eval(f64::NAN, slots, &[], &mut out, scratch);
        out[0]
    }
}

/// Every expression the statements use.
fn collect_exprs(body: &[Stmt], out: &mut Vec<ExprId>) {
    for st in body {
        match st {
            Stmt::Assign(_, e) => out.push(*e),
            Stmt::If {
                branches,
                else_branch,
            } => {
                for (c, b) in branches {
                    out.push(*c);
                    collect_exprs(b, out);
                }
                collect_exprs(else_branch, out);
            }
            Stmt::For {
                start,
                step,
                stop,
                body,
                ..
            } => {
                out.extend([*start, *step, *stop]);
                collect_exprs(body, out);
            }
            Stmt::While { condition, body } => {
                out.push(*condition);
                collect_exprs(body, out);
            }
            Stmt::Break | Stmt::Return => {}
        }
    }
}

impl Run<'_> {
    fn value(&mut self, e: ExprId) -> f64 {
        self.f.eval(e, &self.slots, &mut self.scratch)
    }

    /// Counts one loop iteration; `Err` beyond the limit.
    fn spend(&mut self) -> Result<(), ()> {
        self.iterations += 1;
        if self.iterations > MAX_CALL_ITERATIONS {
            return Err(());
        }
        Ok(())
    }

    fn block(&mut self, body: &[Stmt]) -> Result<Flow, ()> {
        for st in body {
            let flow = self.statement(st)?;
            if flow != Flow::Normal {
                return Ok(flow);
            }
        }
        Ok(Flow::Normal)
    }

    fn statement(&mut self, st: &Stmt) -> Result<Flow, ()> {
        match st {
            Stmt::Assign(s, e) => {
                let v = self.value(*e);
                self.slots[*s as usize] = v;
                Ok(Flow::Normal)
            }
            Stmt::If {
                branches,
                else_branch,
            } => {
                for (c, b) in branches {
                    if self.value(*c) != 0.0 {
                        return self.block(b);
                    }
                }
                self.block(else_branch)
            }
            Stmt::For {
                var,
                start,
                step,
                stop,
                body,
            } => {
                let (a, s, b) = (self.value(*start), self.value(*step), self.value(*stop));
                if !(a.is_finite() && s.is_finite() && b.is_finite()) || s == 0.0 {
                    return Ok(Flow::Normal);
                }
                let mut k = 0.0;
                loop {
                    let v = a + k * s;
                    if (s > 0.0 && v > b) || (s < 0.0 && v < b) {
                        return Ok(Flow::Normal);
                    }
                    self.spend()?;
                    self.slots[*var as usize] = v;
                    match self.block(body)? {
                        Flow::Return => return Ok(Flow::Return),
                        Flow::Break => return Ok(Flow::Normal),
                        Flow::Normal => {}
                    }
                    k += 1.0;
                }
            }
            Stmt::While { condition, body } => {
                while self.value(*condition) != 0.0 {
                    self.spend()?;
                    match self.block(body)? {
                        Flow::Return => return Ok(Flow::Return),
                        Flow::Break => break,
                        Flow::Normal => {}
                    }
                }
                Ok(Flow::Normal)
            }
            Stmt::Break => Ok(Flow::Break),
            Stmt::Return => Ok(Flow::Return),
        }
    }
}

/// The source transformation of [`Function::forward_derivative`].
struct Transform<'a> {
    from: &'a ExprPool,
    to: &'a mut ExprPool,
    primal: &'a dyn Fn(u32) -> u32,
    tangent: &'a dyn Fn(u32) -> u32,
}

impl Transform<'_> {
    /// `e` of the primal pool in the new pool, its slots renumbered.
    fn primal_expr(&mut self, e: ExprId) -> ExprId {
        let order = self.from.topo_order(&[e]);
        let mut new: Vec<(ExprId, ExprId)> = Vec::with_capacity(order.len());
        let mut kids = Vec::new();
        for id in order {
            let node = self.from.node(id);
            let r = match node {
                Node::Leaf(Leaf::Var { unknown, order: 0 }) => {
                    self.to.var((self.primal)(unknown), 0)
                }
                _ => {
                    kids.clear();
                    for c in node.children() {
                        let k = new
                            .binary_search_by_key(&c, |p| p.0)
                            .map_or(c, |i| new[i].1);
                        kids.push(k);
                    }
                    self.to.rebuild(&node, &kids)
                }
            };
            let at = new.partition_point(|p| p.0 < id);
            new.insert(at, (id, r));
        }
        new.binary_search_by_key(&e, |p| p.0)
            .map_or(e, |i| new[i].1)
    }

    /// The tangent of `e` (already in the new pool): `Σ_s ∂e/∂s · ṡ` over
    /// the primal slots `s` that occur in `e`.
    fn tangent_expr(&mut self, e: ExprId) -> ExprId {
        let n_slots_primal: Vec<(u32, ExprId)> = self
            .to
            .leaves(e)
            .into_iter()
            .filter_map(|l| match self.to.node(l) {
                Node::Leaf(Leaf::Var { unknown, order: 0 }) => Some((unknown, l)),
                _ => None,
            })
            .collect();
        let mut terms = Vec::new();
        for (slot, leaf) in n_slots_primal {
            let Some(orig) = self.original(slot) else {
                continue;
            };
            let d = self.to.diff(e, leaf);
            if self.to.is_zero(d) {
                continue;
            }
            let ts = self.to.var((self.tangent)(orig), 0);
            terms.push(self.to.mul(d, ts));
        }
        self.to.sum(&terms)
    }

    /// The original slot whose primal is new slot `s`, if any.
    fn original(&self, s: u32) -> Option<u32> {
        // The primal map is increasing; the slots are few, so a search
        // over them is enough.
        (0..=s).find(|&o| (self.primal)(o) == s)
    }

    fn block(&mut self, body: &[Stmt]) -> Vec<Stmt> {
        let mut out = Vec::with_capacity(body.len() * 2);
        for st in body {
            match st {
                Stmt::Assign(s, e) => {
                    let p = self.primal_expr(*e);
                    let d = self.tangent_expr(p);
                    out.push(Stmt::Assign((self.tangent)(*s), d));
                    out.push(Stmt::Assign((self.primal)(*s), p));
                }
                Stmt::If {
                    branches,
                    else_branch,
                } => {
                    let branches = branches
                        .iter()
                        .map(|(c, b)| (self.primal_expr(*c), self.block(b)))
                        .collect();
                    let else_branch = self.block(else_branch);
                    out.push(Stmt::If {
                        branches,
                        else_branch,
                    });
                }
                Stmt::For {
                    var,
                    start,
                    step,
                    stop,
                    body,
                } => {
                    let zero = self.to.constant(0.0);
                    out.push(Stmt::Assign((self.tangent)(*var), zero));
                    let (start, step, stop) = (
                        self.primal_expr(*start),
                        self.primal_expr(*step),
                        self.primal_expr(*stop),
                    );
                    let body = self.block(body);
                    out.push(Stmt::For {
                        var: (self.primal)(*var),
                        start,
                        step,
                        stop,
                        body,
                    });
                }
                Stmt::While { condition, body } => {
                    let condition = self.primal_expr(*condition);
                    let body = self.block(body);
                    out.push(Stmt::While { condition, body });
                }
                Stmt::Break => out.push(Stmt::Break),
                Stmt::Return => out.push(Stmt::Return),
            }
        }
        out
    }
}
