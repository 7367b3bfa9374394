//! Printers: Modelica/`.dae` syntax, Rust source (with common subexpressions
//! as `let` bindings) and LaTeX.
//!
//! Every printer renders the nodes bottom-up in one forward pass over the
//! DAG (no recursion), keeping for each node its text, its precedence level,
//! and — for negative terms — the text of its negation, so sums print as
//! `a - b` instead of `a + -1 * b`.

use rustc_hash::FxHashMap;

use crate::node::{Callee, CmpOp, ExprId, Func, Func2, Leaf, Node, ParamId};
use crate::pool::ExprPool;

/// Names of unknowns and parameters for the Modelica and LaTeX printers.
pub trait Names {
    /// Name of unknown `j` (without any `der`).
    fn unknown(&self, j: u32) -> String;
    /// Name of parameter `p`.
    fn param(&self, p: ParamId) -> String;
    /// Appends the name of unknown `j` to `out` (by default
    /// [`Names::unknown`]; an implementation that renders names can write
    /// them in place, without a `String` per occurrence).
    fn push_unknown(&self, j: u32, out: &mut String) {
        out.push_str(&self.unknown(j));
    }
}

/// Names used by the Rust emitter; each must be a Rust expression that
/// needs no parentheses (an identifier, a field or an index expression).
/// `let` bindings are named `s0`, `s1`, …, so names must not collide with
/// those.
pub trait RustNames {
    /// The expression for the `order`-th derivative of unknown `unknown`
    /// (e.g. `z[3]` or `zp[3]`).
    fn var(&self, unknown: u32, order: u32) -> String;
    /// The expression for parameter `p` (e.g. `p[2]`).
    fn param(&self, p: ParamId) -> String;
    /// The expression for `time` (default `t`).
    fn time(&self) -> String {
        "t".to_string()
    }
    /// The array that holds the `order`-th derivatives of the unknowns,
    /// indexed by unknown (e.g. `z`), for code that reads an unknown
    /// through an index ([`crate::to_rust_looped`]); `None` (the default)
    /// when there is none.
    fn var_array(&self, order: u32) -> Option<String> {
        let _ = order;
        None
    }
    /// The array that holds the parameters, indexed by [`ParamId`] (e.g.
    /// `p`); `None` (the default) when there is none.
    fn param_array(&self) -> Option<String> {
        None
    }
}

/// A rendered node: text, precedence, and the text of the negated node when
/// the node is a negative term (`-x` → `x`).
#[derive(Clone)]
pub(crate) struct R {
    pub(crate) s: String,
    pub(crate) p: u8,
    pub(crate) neg: Option<(String, u8)>,
    /// Rust only: the node has type `bool`.
    pub(crate) boolean: bool,
    /// Rust only: the text is a float literal (possibly negative), which
    /// needs an `_f64` suffix to be a method receiver.
    pub(crate) literal: bool,
    /// Rust only: the text names a `let` binding (a common subexpression)
    /// or, for a constant, a value read from a table of constants
    /// ([`crate::to_rust_looped`]).
    pub(crate) bound: bool,
    /// Rust only: the node is a term that [`print_order`] puts among the
    /// negative ones although its text has no sign: a constant read from a
    /// table, or a product with such constants, whose literal value is
    /// negative. The straight-line text of the same node has a `neg`, so
    /// the terms of a sum are added in the same order either way.
    pub(crate) negative: bool,
}

impl R {
    pub(crate) fn new(s: String, p: u8) -> R {
        R {
            s,
            p,
            neg: None,
            boolean: false,
            literal: false,
            bound: false,
            negative: false,
        }
    }
}

fn wrap(s: &str, p: u8, min: u8) -> String {
    if p < min {
        format!("({s})")
    } else {
        s.to_string()
    }
}

fn wrap_latex(s: &str, p: u8, min: u8) -> String {
    if p < min {
        format!("\\left({s}\\right)")
    } else {
        s.to_string()
    }
}

// Modelica precedence levels (Modelica 3.6 §3.2 grammar: `if` < `or` <
// `and` < `not` < relation < arithmetic (with unary minus) < term < factor).
pub(crate) const M_IF: u8 = 0;
pub(crate) const M_OR: u8 = 1;
pub(crate) const M_AND: u8 = 2;
pub(crate) const M_NOT: u8 = 3;
pub(crate) const M_REL: u8 = 4;
pub(crate) const M_ADD: u8 = 5;
pub(crate) const M_MUL: u8 = 6;
pub(crate) const M_POW: u8 = 7;
pub(crate) const M_ATOM: u8 = 8;

/// A number in Modelica syntax that re-reads to exactly the same `f64`
/// (shortest round-trip digits; negative numbers parenthesised; ±inf and NaN
/// as `1.0 / 0.0`-style quotients).
pub fn modelica_number(v: f64) -> String {
    if v.is_nan() {
        "(0.0 / 0.0)".to_string()
    } else if v.is_infinite() {
        if v > 0.0 {
            "(1.0 / 0.0)"
        } else {
            "(-1.0 / 0.0)"
        }
        .to_string()
    } else if v.is_sign_negative() && v != 0.0 {
        format!("(-{})", modelica_number(-v))
    } else if v == 0.0 && v.is_sign_negative() {
        "(-0.0)".to_string()
    } else if v.fract() == 0.0 && v < 1e15 {
        // Integral values print as integers (`2 * x`, not `2.0 * x`): an
        // Integer literal denotes the same Real in every expression context.
        format!("{}", v as i64)
    } else {
        format!("{v:?}")
    }
}

/// The order in which a sum's terms are printed: positive terms first,
/// then negative ones, each group's constant last (the value is the same;
/// the canonical id order is kept within each group).
fn print_order(pool: &ExprPool, ts: &[ExprId], r: &FxHashMap<ExprId, R>) -> Vec<ExprId> {
    let negative = |t: &ExprId| r.get(t).is_some_and(|x| x.neg.is_some() || x.negative);
    let konst = |t: &ExprId| pool.as_constant(*t).is_some();
    let mut order: Vec<ExprId> = ts
        .iter()
        .copied()
        .filter(|t| !konst(t) && !negative(t))
        .collect();
    order.extend(ts.iter().copied().filter(|t| konst(t) && !negative(t)));
    order.extend(ts.iter().copied().filter(|t| !konst(t) && negative(t)));
    order.extend(ts.iter().copied().filter(|t| konst(t) && negative(t)));
    order
}

/// Splits a product's factors into coefficient, numerator factors and
/// denominator `(base, positive exponent)` pairs.
pub(crate) fn split_product(
    pool: &ExprPool,
    fs: &[ExprId],
) -> (f64, Vec<ExprId>, Vec<(ExprId, i32)>) {
    let mut coef = 1.0;
    let mut num = Vec::new();
    let mut den = Vec::new();
    for &f in fs {
        match pool.node(f) {
            Node::Const(c) => coef *= c,
            Node::Powi(b, n) if n < 0 && n != i32::MIN => den.push((b, -n)),
            _ => num.push(f),
        }
    }
    (coef, num, den)
}

/// `name(args)` of the call of `f`, with `.output` appended for an output
/// other than the first (there is no Modelica syntax for it: the text is
/// for reading).
pub(crate) fn call_text(pool: &ExprPool, f: Callee, args: &str) -> String {
    let func = pool.function(f.function());
    let mut s = format!("{}({args})", func.name);
    if f.output() > 0
        && let Some(&slot) = func.outputs.get(f.output())
        && let Some(name) = func.slot_names.get(slot as usize)
    {
        s.push('.');
        s.push_str(name);
    }
    s
}

// Rust precedence levels.
pub(crate) const R_IF: u8 = 0;
const R_OR: u8 = 1;
const R_AND: u8 = 2;
const R_REL: u8 = 3;
const R_ADD: u8 = 4;
const R_MUL: u8 = 5;
const R_UNARY: u8 = 6;
pub(crate) const R_POSTFIX: u8 = 7;

fn rust_number(v: f64) -> (String, u8, bool) {
    if v.is_nan() {
        ("f64::NAN".into(), R_POSTFIX, false)
    } else if v == f64::INFINITY {
        ("f64::INFINITY".into(), R_POSTFIX, false)
    } else if v == f64::NEG_INFINITY {
        ("f64::NEG_INFINITY".into(), R_POSTFIX, false)
    } else if v.is_sign_negative() {
        (format!("{v:?}"), R_UNARY, true)
    } else {
        (format!("{v:?}"), R_POSTFIX, true)
    }
}

/// A method receiver: parenthesised unless postfix-level; float literals get
/// an `_f64` suffix so that the method resolves.
fn receiver(x: &R) -> String {
    if x.literal {
        format!("({}_f64)", x.s)
    } else {
        wrap(&x.s, x.p, R_POSTFIX)
    }
}

/// A child in an `f64` context.
pub(crate) fn num_ctx(x: &R, min: u8) -> String {
    if x.boolean {
        format!("f64::from(u8::from({}))", x.s)
    } else {
        wrap(&x.s, x.p, min)
    }
}

fn bool_ctx(pool: &ExprPool, c: ExprId, x: &R, min: u8) -> String {
    if let Some(v) = pool.as_constant(c) {
        return if v != 0.0 { "true" } else { "false" }.to_string();
    }
    if x.boolean {
        wrap(&x.s, x.p, min)
    } else {
        wrap(&format!("{} != 0.0", wrap(&x.s, x.p, R_ADD)), R_REL, min)
    }
}

/// Emits Rust source for `roots`: returns the `let` statements (common
/// subexpressions, each computed once, in dependency order, named `s0`,
/// `s1`, …) and one expression per root. A node becomes a `let` when it is
/// used more than once among the roots' subexpressions.
///
/// Semantics match [`ExprPool::eval`] except that `min`/`max` use Rust's
/// `f64::min`/`f64::max` (which ignore a NaN operand).
pub fn to_rust(
    pool: &ExprPool,
    roots: &[ExprId],
    names: &dyn RustNames,
) -> (Vec<String>, Vec<String>) {
    let order = pool.topo_order(roots);
    let uses = rust_uses(pool, &order);
    let mut r: FxHashMap<ExprId, R> = FxHashMap::default();
    let mut lets = Vec::new();
    for &id in &order {
        let x = rust_node(pool, id, names, &r);
        if is_rust_let(pool, &uses, id) {
            let name = format!("s{}", lets.len());
            lets.push(format!("let {name} = {};", x.s));
            let mut b = R::new(name, R_POSTFIX);
            b.boolean = x.boolean;
            b.bound = true;
            r.insert(id, b);
        } else {
            r.insert(id, x);
        }
    }
    let outs = roots
        .iter()
        .map(|e| r.get(e).map(|x| num_ctx(x, R_IF)).unwrap_or_default())
        .collect();
    (lets, outs)
}

/// How often each node of `order` is used by the others (`sign` counts
/// its operand twice: its Rust text repeats it).
pub(crate) fn rust_uses(pool: &ExprPool, order: &[ExprId]) -> FxHashMap<ExprId, u32> {
    let mut uses: FxHashMap<ExprId, u32> = FxHashMap::default();
    for &id in order {
        let node = pool.node(id);
        for c in node.children() {
            *uses.entry(c).or_insert(0) += 1;
            if matches!(node, Node::Func(Func::Sign, _)) {
                *uses.entry(c).or_insert(0) += 1;
            }
        }
    }
    uses
}

/// Whether the Rust printers bind `id` to a `let`: a node other than a
/// constant or leaf used more than once.
pub(crate) fn is_rust_let(pool: &ExprPool, uses: &FxHashMap<ExprId, u32>, id: ExprId) -> bool {
    uses.get(&id).copied().unwrap_or(0) > 1
        && !matches!(pool.node(id), Node::Const(_) | Node::Leaf(_))
}

pub(crate) fn rust_node(
    pool: &ExprPool,
    id: ExprId,
    names: &dyn RustNames,
    r: &FxHashMap<ExprId, R>,
) -> R {
    let empty = R::new(String::new(), R_POSTFIX);
    let g = |c: &ExprId| r.get(c).unwrap_or(&empty);
    let boolean = |s: String, p: u8| {
        let mut x = R::new(s, p);
        x.boolean = true;
        x
    };
    match pool.node(id) {
        Node::Const(v) => {
            let (s, p, lit) = rust_number(v);
            let mut x = R::new(s, p);
            x.literal = lit;
            if v.is_sign_negative() && v.is_finite() {
                x.neg = Some((format!("{:?}", -v), R_POSTFIX));
            }
            x
        }
        Node::Leaf(Leaf::Time) => R::new(names.time(), R_POSTFIX),
        Node::Leaf(Leaf::Param(p)) => R::new(names.param(p), R_POSTFIX),
        Node::Leaf(Leaf::Var { unknown, order }) => R::new(names.var(unknown, order), R_POSTFIX),
        Node::Add(ts) => {
            let mut s = String::new();
            for (i, t) in print_order(pool, &ts, r).iter().enumerate() {
                let x = g(t);
                if i == 0 {
                    s.push_str(&num_ctx(x, R_ADD));
                } else if let Some((n, np)) = &x.neg {
                    s.push_str(" - ");
                    s.push_str(&wrap(n, *np, R_MUL));
                } else {
                    s.push_str(" + ");
                    s.push_str(&num_ctx(x, R_MUL));
                }
            }
            R::new(s, R_ADD)
        }
        Node::Mul(fs) => {
            let mut coef = 1.0;
            // the constants read from a table (bound): printed first,
            // where the straight-line text prints their product `coef`
            let mut num = Vec::new();
            let mut table_negative = false;
            for f in fs.iter() {
                if let Node::Const(c) = pool.node(*f)
                    && g(f).bound
                {
                    num.push(*f);
                    table_negative ^= c.is_sign_negative();
                }
            }
            let mut den = Vec::new();
            for f in fs.iter() {
                match pool.node(*f) {
                    Node::Const(_) if g(f).bound => {}
                    Node::Const(c) => coef *= c,
                    // a shared reciprocal is computed once (its `let`)
                    // and multiplied, as the tape does (`Recip`, `Mul`);
                    // else the factor divides
                    Node::Powi(b, -1) if !g(f).bound => den.push(b),
                    _ => num.push(*f),
                }
            }
            let mut items: Vec<String> = Vec::new();
            if coef.abs() != 1.0 {
                items.push(rust_number(coef.abs()).0);
            }
            for f in &num {
                items.push(num_ctx(g(f), R_UNARY));
            }
            if items.is_empty() {
                items.push("1.0".into());
            }
            let mut mag = items.join(" * ");
            let mut mp = if items.len() == 1 && coef.abs() == 1.0 {
                g(&num.first().copied().unwrap_or(id)).p.max(R_UNARY)
            } else {
                R_MUL
            };
            if num.is_empty() && coef.abs() == 1.0 {
                mp = R_POSTFIX;
            }
            if !den.is_empty() {
                let d: Vec<String> = den.iter().map(|b| num_ctx(g(b), R_UNARY)).collect();
                let d = if d.len() == 1 {
                    d[0].clone()
                } else {
                    format!("({})", d.join(" * "))
                };
                mag = format!("{} / {d}", wrap(&mag, mp, R_MUL));
                mp = R_MUL;
            }
            let mut x = if coef.is_sign_negative() {
                let mut x = R::new(format!("-{}", wrap(&mag, mp, R_UNARY)), R_UNARY);
                x.neg = Some((mag, mp));
                x
            } else {
                R::new(mag, mp)
            };
            x.negative = table_negative;
            x
        }
        Node::Powi(b, -1) => R::new(format!("1.0 / {}", num_ctx(g(&b), R_UNARY)), R_MUL),
        Node::Powi(b, n) => R::new(format!("{}.powi({n})", receiver(g(&b))), R_POSTFIX),
        Node::Pow(a, b) => R::new(
            format!("{}.powf({})", receiver(g(&a)), num_ctx(g(&b), R_IF)),
            R_POSTFIX,
        ),
        // the identity: the relation as it is
        Node::Func(Func::NoEvent, a) => g(&a).clone(),
        Node::Func(Func::Sign, a) => {
            let x = receiver(g(&a));
            R::new(
                format!("(if {x} > 0.0 {{ 1.0 }} else if {x} < 0.0 {{ -1.0 }} else {{ {x} }})"),
                R_POSTFIX,
            )
        }
        Node::Func(f, a) => {
            let m = match f {
                Func::Log => "ln",
                other => other.name(),
            };
            R::new(format!("{}.{m}()", receiver(g(&a))), R_POSTFIX)
        }
        Node::Func2(f, a, b) => R::new(
            format!("{}.{}({})", receiver(g(&a)), f.name(), num_ctx(g(&b), R_IF)),
            R_POSTFIX,
        ),
        Node::Cmp(op, a, b) => {
            let o = match op {
                CmpOp::Ne => "!=",
                other => other.modelica(),
            };
            boolean(
                format!("{} {o} {}", num_ctx(g(&a), R_ADD), num_ctx(g(&b), R_ADD)),
                R_REL,
            )
        }
        Node::And(a, b) => boolean(
            format!(
                "{} && {}",
                bool_ctx(pool, a, g(&a), R_REL),
                bool_ctx(pool, b, g(&b), R_REL)
            ),
            R_AND,
        ),
        Node::Or(a, b) => boolean(
            format!(
                "{} || {}",
                bool_ctx(pool, a, g(&a), R_AND),
                bool_ctx(pool, b, g(&b), R_AND)
            ),
            R_OR,
        ),
        Node::Not(a) => boolean(format!("!{}", bool_ctx(pool, a, g(&a), R_POSTFIX)), R_UNARY),
        Node::Select(c, a, b) => R::new(
            format!(
                "if {} {{ {} }} else {{ {} }}",
                bool_ctx(pool, c, g(&c), R_OR),
                num_ctx(g(&a), R_IF),
                num_ctx(g(&b), R_IF)
            ),
            R_IF,
        ), // Emitters of Rust refuse models with calls before printing; a
        // name no module defines makes any other use a compile error.
        Node::Call(f, args) => {
            let args: Vec<String> = args.iter().map(|a| num_ctx(g(a), R_IF)).collect();
            R::new(
                format!(
                    "daec_runtime_call_{}_{}({})",
                    f.function().0,
                    f.output(),
                    args.join(", ")
                ),
                R_POSTFIX,
            )
        }
    }
}

// LaTeX precedence levels (same structure as Modelica).
const L_ADD: u8 = M_ADD;
const L_MUL: u8 = M_MUL;
const L_POW: u8 = M_POW;
const L_ATOM: u8 = M_ATOM;

fn latex_number(v: f64) -> String {
    if v.is_nan() {
        return "\\mathrm{NaN}".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "\\infty" } else { "-\\infty" }.into();
    }
    let s = format!("{v:?}");
    let s = s.strip_suffix(".0").unwrap_or(&s).to_string();
    match s.split_once('e') {
        Some((m, e)) => format!("{m} \\cdot 10^{{{e}}}"),
        None => s,
    }
}

fn latex_ident(name: &str) -> String {
    if name.chars().count() <= 1 || name.starts_with('\\') {
        name.to_string()
    } else {
        format!("\\mathit{{{}}}", name.replace('_', "\\_"))
    }
}

/// Prints `e` as LaTeX math (derivatives as dots: `\dot{x}`, `\ddot{x}`,
/// …, `x^{(5)}` from order 5 on).
pub fn to_latex(pool: &ExprPool, e: ExprId, names: &dyn Names) -> String {
    let mut r: FxHashMap<ExprId, R> = FxHashMap::default();
    for id in pool.topo_order(&[e]) {
        let out = latex_node(pool, id, names, &r);
        r.insert(id, out);
    }
    r.remove(&e).map(|x| x.s).unwrap_or_default()
}

fn latex_node(pool: &ExprPool, id: ExprId, names: &dyn Names, r: &FxHashMap<ExprId, R>) -> R {
    let empty = R::new(String::new(), L_ATOM);
    let g = |c: &ExprId| r.get(c).unwrap_or(&empty);
    let arg = |c: &ExprId| format!("\\left({}\\right)", g(c).s);
    match pool.node(id) {
        Node::Const(v) => {
            if v.is_sign_negative() && !v.is_nan() {
                let mut x = R::new(latex_number(v), L_ADD);
                x.neg = Some((latex_number(-v), L_ATOM));
                x
            } else {
                R::new(latex_number(v), L_ATOM)
            }
        }
        Node::Leaf(Leaf::Time) => R::new("t".into(), L_ATOM),
        Node::Leaf(Leaf::Param(p)) => R::new(latex_ident(&names.param(p)), L_ATOM),
        Node::Leaf(Leaf::Var { unknown, order }) => {
            let n = latex_ident(&names.unknown(unknown));
            let s = match order {
                0 => n,
                1 => format!("\\dot{{{n}}}"),
                2 => format!("\\ddot{{{n}}}"),
                3 => format!("\\dddot{{{n}}}"),
                4 => format!("\\ddddot{{{n}}}"),
                k => format!("{n}^{{({k})}}"),
            };
            R::new(s, L_ATOM)
        }
        Node::Add(ts) => {
            let order = print_order(pool, &ts, r);
            let mut s = String::new();
            for (i, t) in order.iter().enumerate() {
                let x = g(t);
                if i == 0 {
                    s.push_str(&wrap_latex(&x.s, x.p, L_ADD));
                } else if let Some((n, np)) = &x.neg {
                    s.push_str(" - ");
                    s.push_str(&wrap_latex(n, *np, L_MUL));
                } else {
                    s.push_str(" + ");
                    s.push_str(&wrap_latex(&x.s, x.p, L_MUL));
                }
            }
            R::new(s, L_ADD)
        }
        Node::Mul(fs) => {
            let (coef, num, den) = split_product(pool, &fs);
            let mut items: Vec<String> = Vec::new();
            if coef.abs() != 1.0 {
                items.push(latex_number(coef.abs()));
            }
            for f in &num {
                let x = g(f);
                items.push(wrap_latex(&x.s, x.p, L_POW));
            }
            let numer = if items.is_empty() {
                "1".to_string()
            } else {
                items.join(" \\cdot ")
            };
            let (mag, mp) = if den.is_empty() {
                let p = if items.len() == 1 && coef.abs() == 1.0 {
                    g(&num[0]).p.max(L_POW)
                } else {
                    L_MUL
                };
                (numer, p)
            } else {
                let d: Vec<String> = den
                    .iter()
                    .map(|(b, n)| {
                        let x = g(b);
                        if *n == 1 {
                            wrap_latex(&x.s, x.p, L_POW)
                        } else {
                            format!("{}^{{{n}}}", wrap_latex(&x.s, x.p, L_ATOM))
                        }
                    })
                    .collect();
                let d = if den.len() == 1 && den[0].1 == 1 {
                    g(&den[0].0).s.clone()
                } else {
                    d.join(" \\cdot ")
                };
                (format!("\\frac{{{numer}}}{{{d}}}"), L_ATOM)
            };
            if coef.is_sign_negative() {
                let mut x = R::new(format!("-{}", wrap_latex(&mag, mp, L_MUL)), L_ADD);
                x.neg = Some((mag, mp));
                x
            } else {
                R::new(mag, mp)
            }
        }
        Node::Powi(b, n) => {
            let x = g(&b);
            if n < 0 && n != i32::MIN {
                let k = -n;
                let d = if k == 1 {
                    x.s.clone()
                } else {
                    format!("{}^{{{k}}}", wrap_latex(&x.s, x.p, L_ATOM))
                };
                R::new(format!("\\frac{{1}}{{{d}}}"), L_ATOM)
            } else {
                R::new(format!("{}^{{{n}}}", wrap_latex(&x.s, x.p, L_ATOM)), L_POW)
            }
        }
        Node::Pow(a, b) => {
            let x = g(&a);
            R::new(
                format!("{}^{{{}}}", wrap_latex(&x.s, x.p, L_ATOM), g(&b).s),
                L_POW,
            )
        }
        Node::Func(f, a) => {
            let s = match f {
                Func::Sqrt => format!("\\sqrt{{{}}}", g(&a).s),
                Func::Abs => format!("\\left|{}\\right|", g(&a).s),
                Func::Floor => format!("\\left\\lfloor {}\\right\\rfloor", g(&a).s),
                Func::Ceil => format!("\\left\\lceil {}\\right\\rceil", g(&a).s),
                Func::Log10 => format!("\\log_{{10}}{}", arg(&a)),
                Func::Sign => format!("\\operatorname{{sign}}{}", arg(&a)),
                Func::NoEvent => format!("\\operatorname{{noEvent}}{}", arg(&a)),
                Func::Log => format!("\\ln{}", arg(&a)),
                Func::Asin => format!("\\arcsin{}", arg(&a)),
                Func::Acos => format!("\\arccos{}", arg(&a)),
                Func::Atan => format!("\\arctan{}", arg(&a)),
                other => format!("\\{}{}", other.name(), arg(&a)),
            };
            R::new(s, L_ATOM)
        }
        Node::Func2(f, a, b) => {
            let name = match f {
                Func2::Atan2 => "\\operatorname{atan2}",
                Func2::Min => "\\min",
                Func2::Max => "\\max",
            };
            R::new(
                format!("{name}\\left({}, {}\\right)", g(&a).s, g(&b).s),
                L_ATOM,
            )
        }
        Node::Cmp(op, a, b) => {
            let o = match op {
                CmpOp::Lt => "<",
                CmpOp::Le => "\\le",
                CmpOp::Gt => ">",
                CmpOp::Ge => "\\ge",
                CmpOp::Eq => "=",
                CmpOp::Ne => "\\ne",
            };
            let (x, y) = (g(&a), g(&b));
            R::new(
                format!(
                    "{} {o} {}",
                    wrap_latex(&x.s, x.p, L_ADD),
                    wrap_latex(&y.s, y.p, L_ADD)
                ),
                M_REL,
            )
        }
        Node::And(a, b) => {
            let (x, y) = (g(&a), g(&b));
            R::new(
                format!(
                    "{} \\land {}",
                    wrap_latex(&x.s, x.p, M_NOT),
                    wrap_latex(&y.s, y.p, M_NOT)
                ),
                M_AND,
            )
        }
        Node::Or(a, b) => {
            let (x, y) = (g(&a), g(&b));
            R::new(
                format!(
                    "{} \\lor {}",
                    wrap_latex(&x.s, x.p, M_AND),
                    wrap_latex(&y.s, y.p, M_AND)
                ),
                M_OR,
            )
        }
        Node::Not(a) => {
            let x = g(&a);
            R::new(format!("\\lnot {}", wrap_latex(&x.s, x.p, M_REL)), M_NOT)
        }
        Node::Select(c, a, b) => R::new(
            format!(
                "\\begin{{cases}} {} & \\text{{if }} {} \\\\ {} & \\text{{otherwise}} \\end{{cases}}",
                g(&a).s,
                g(&c).s,
                g(&b).s
            ),
            L_ATOM,
        ),
        Node::Call(f, args) => {
            let args: Vec<String> = args.iter().map(|a| g(a).s.clone()).collect();
            let name = pool.function(f.function()).name.replace('_', "\\_");
            R::new(
                format!(
                    "\\operatorname{{{name}}}_{{{}}}\\left({}\\right)",
                    f.output() + 1,
                    args.join(", ")
                ),
                L_ATOM,
            )
        }
    }
}
