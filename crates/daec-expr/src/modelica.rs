//! The Modelica / `.dae` printer ([`to_modelica`]).
//!
//! One forward pass over the expression's nodes in id order (children
//! before parents, no recursion) writes each node's text at the end of one
//! byte buffer, copying its operands' texts from earlier in the buffer;
//! a node keeps the range of its text, its precedence level, the range of
//! its negation's text when it is a negative term (so sums print as
//! `a - b` instead of `a + -1 * b`), and the highest derivative order in
//! it (the first key of the order of a sum's terms). The buffer and the
//! lists are the thread's scratch, reused from call to call: printing an
//! equation allocates its result only (and the names of its parameters).

use std::cell::RefCell;
use std::cmp::Reverse;

use crate::node::{ExprId, Leaf, Node};
use crate::pool::ExprPool;
use crate::print::{
    M_ADD, M_AND, M_ATOM, M_IF, M_MUL, M_NOT, M_OR, M_POW, M_REL, Names, call_text,
    modelica_number, split_product,
};

/// A rendered node: its text `buf[start..end]`, precedence `p`, the range
/// and precedence of its negation's text for a negative term (`-x` → `x`)
/// and the highest derivative order of an unknown in it (0 without one).
#[derive(Clone, Copy, Default)]
struct Text {
    start: usize,
    end: usize,
    p: u8,
    neg: Option<(usize, usize, u8)>,
    top: u32,
}

/// The printer's scratch: the buffer of texts, the nodes in id order with
/// their texts, and the lists a sum or product orders.
#[derive(Default)]
struct Scratch {
    buf: Vec<u8>,
    ids: Vec<ExprId>,
    texts: Vec<Text>,
    order: Vec<usize>,
    den: Vec<(usize, i32)>,
    name: String,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Prints `e` in Modelica / `.dae` expression syntax: `der(x)` for
/// derivative leaves, fully parenthesised where precedence requires it, and
/// numbers that re-read exactly.
///
/// The order of a sum's terms and of a product's factors does not depend
/// on node ids (which depend on the order a pool was built in), so that
/// printing a model, parsing the text and printing again gives the same
/// text (`daec flatten` is idempotent): a sum prints its positive terms,
/// then its constant, then its negative terms, then a negative constant,
/// each group with higher derivatives first, then by text; a product its
/// coefficient, then its factors with lower derivatives first
/// (`x * der(x)`), then by text, then its divisors by text.
pub fn to_modelica(pool: &ExprPool, e: ExprId, names: &dyn Names) -> String {
    SCRATCH.with(|s| match s.try_borrow_mut() {
        Ok(mut s) => print(pool, e, names, &mut s),
        // (a `Names` that prints an expression itself)
        Err(_) => print(pool, e, names, &mut Scratch::default()),
    })
}

fn print(pool: &ExprPool, e: ExprId, names: &dyn Names, s: &mut Scratch) -> String {
    s.buf.clear();
    s.texts.clear();
    s.ids = pool.topo_order(&[e]);
    for k in 0..s.ids.len() {
        let node = pool.node(s.ids[k]);
        let top = match node {
            Node::Leaf(Leaf::Var { order, .. }) => order,
            _ => node.children().map(|c| s.text(c).top).max().unwrap_or(0),
        };
        let mut t = s.node(pool, node, names);
        t.top = top;
        s.texts.push(t);
    }
    // (`e` has the largest id: the others are its operands, below it)
    let t = s.texts.last().copied().unwrap_or_default();
    let out = String::from_utf8_lossy(&s.buf[t.start..t.end]).into_owned();
    // (a large expression's buffers are not kept for the life of the thread)
    if s.buf.capacity() > 1 << 20 || s.ids.capacity() > 1 << 14 {
        *s = Scratch::default();
    }
    out
}

impl Scratch {
    /// The text of operand `c` (printed before its parents).
    fn text(&self, c: ExprId) -> Text {
        self.ids
            .binary_search(&c)
            .ok()
            .and_then(|k| self.texts.get(k))
            .copied()
            .unwrap_or_default()
    }

    /// The text of the `k`-th node in id order.
    fn nth(&self, k: usize) -> Text {
        self.texts.get(k).copied().unwrap_or_default()
    }

    /// The bytes of text `t`.
    fn bytes(&self, t: Text) -> &[u8] {
        &self.buf[t.start..t.end]
    }

    /// The key of the `k`-th node as a term of a sum: negative terms after
    /// the others, constants after the others in each group, then higher
    /// derivatives first, then by text.
    fn term_key(&self, pool: &ExprPool, k: usize) -> (bool, bool, Reverse<u32>, &[u8]) {
        let t = self.nth(k);
        (
            t.neg.is_some(),
            pool.as_constant(self.ids[k]).is_some(),
            Reverse(t.top),
            self.bytes(t),
        )
    }

    /// Appends `t`'s text, parenthesised if its precedence is below `min`.
    fn wrap(&mut self, t: Text, min: u8) {
        if t.p < min {
            self.buf.push(b'(');
            self.buf.extend_from_within(t.start..t.end);
            self.buf.push(b')');
        } else {
            self.buf.extend_from_within(t.start..t.end);
        }
    }

    /// Appends the negation's text of `t` (a negative term).
    fn wrap_neg(&mut self, (start, end, p): (usize, usize, u8), min: u8) {
        self.wrap(
            Text {
                start,
                end,
                p,
                ..Text::default()
            },
            min,
        );
    }

    fn push(&mut self, s: &str) {
        self.buf.extend_from_slice(s.as_bytes());
    }

    /// Appends operand `c` in a Boolean context: a constant as
    /// `true`/`false`, else its text wrapped below `min`.
    fn boolean(&mut self, pool: &ExprPool, c: ExprId, min: u8) {
        match pool.as_constant(c) {
            Some(v) => self.push(if v != 0.0 { "true" } else { "false" }),
            None => self.wrap(self.text(c), min),
        }
    }

    /// Writes the text of `node` at the end of the buffer.
    fn node(&mut self, pool: &ExprPool, node: Node<'_>, names: &dyn Names) -> Text {
        let start = self.buf.len();
        let done = |s: &Scratch, p: u8| Text {
            start,
            end: s.buf.len(),
            p,
            ..Text::default()
        };
        match node {
            Node::Const(v) => {
                self.push(&modelica_number(v));
                let mut t = done(self, M_ATOM);
                if v.is_sign_negative() && v.is_finite() {
                    let n = self.buf.len();
                    self.push(&modelica_number(-v));
                    t.neg = Some((n, self.buf.len(), M_ATOM));
                }
                t
            }
            Node::Leaf(Leaf::Time) => {
                self.push("time");
                done(self, M_ATOM)
            }
            Node::Leaf(Leaf::Param(p)) => {
                self.push(&names.param(p));
                done(self, M_ATOM)
            }
            Node::Leaf(Leaf::Var { unknown, order }) => {
                for _ in 0..order {
                    self.push("der(");
                }
                let mut name = std::mem::take(&mut self.name);
                name.clear();
                names.push_unknown(unknown, &mut name);
                self.push(&name);
                self.name = name;
                for _ in 0..order {
                    self.buf.push(b')');
                }
                done(self, M_ATOM)
            }
            Node::Add(ts) => {
                self.sum(pool, &ts);
                done(self, M_ADD)
            }
            Node::Mul(fs) => self.product(pool, &fs),
            Node::Powi(b, n) => {
                let x = self.text(b);
                if n < 0 && n != i32::MIN {
                    self.push("1 / ");
                    self.power(x, -n);
                    done(self, M_MUL)
                } else {
                    self.wrap(x, M_ATOM);
                    self.buf.push(b'^');
                    self.push(&n.to_string());
                    done(self, M_POW)
                }
            }
            Node::Pow(a, b) => {
                self.wrap(self.text(a), M_ATOM);
                self.buf.push(b'^');
                self.wrap(self.text(b), M_ATOM);
                done(self, M_POW)
            }
            Node::Func(f, a) => {
                self.push(f.name());
                self.buf.push(b'(');
                self.wrap(self.text(a), 0);
                self.buf.push(b')');
                done(self, M_ATOM)
            }
            Node::Func2(f, a, b) => {
                self.push(f.name());
                self.buf.push(b'(');
                self.wrap(self.text(a), 0);
                self.push(", ");
                self.wrap(self.text(b), 0);
                self.buf.push(b')');
                done(self, M_ATOM)
            }
            Node::Cmp(op, a, b) => {
                self.wrap(self.text(a), M_ADD);
                self.buf.push(b' ');
                self.push(op.modelica());
                self.buf.push(b' ');
                self.wrap(self.text(b), M_ADD);
                done(self, M_REL)
            }
            Node::And(a, b) => {
                self.boolean(pool, a, M_NOT);
                self.push(" and ");
                self.boolean(pool, b, M_NOT);
                done(self, M_AND)
            }
            Node::Or(a, b) => {
                self.boolean(pool, a, M_AND);
                self.push(" or ");
                self.boolean(pool, b, M_AND);
                done(self, M_OR)
            }
            Node::Not(a) => {
                self.push("not ");
                self.boolean(pool, a, M_REL);
                done(self, M_NOT)
            }
            Node::Select(c, a, b) => {
                self.push("if ");
                self.boolean(pool, c, M_OR);
                self.push(" then ");
                self.wrap(self.text(a), M_OR);
                self.push(" else ");
                self.wrap(self.text(b), M_OR);
                done(self, M_IF)
            }
            Node::Call(f, args) => {
                let mut list = String::new();
                for (k, &a) in args.iter().enumerate() {
                    if k > 0 {
                        list.push_str(", ");
                    }
                    list.push_str(&String::from_utf8_lossy(self.bytes(self.text(a))));
                }
                self.push(&call_text(pool, f, &list));
                done(self, M_ATOM)
            }
        }
    }

    /// Appends `base^k` of a divisor (`base` alone for `k = 1`).
    fn power(&mut self, base: Text, k: i32) {
        if k == 1 {
            self.wrap(base, M_POW);
        } else {
            self.wrap(base, M_ATOM);
            self.buf.push(b'^');
            self.push(&k.to_string());
        }
    }

    /// Appends the terms `ts` of a sum in their printed order (see
    /// [`to_modelica`]; a stable sort, so equal keys keep the canonical
    /// order of the operands).
    fn sum(&mut self, pool: &ExprPool, ts: &[ExprId]) {
        let mut order = std::mem::take(&mut self.order);
        order.clear();
        order.extend(ts.iter().map(|&t| self.ids.binary_search(&t).unwrap_or(0)));
        order.sort_by(|&a, &b| self.term_key(pool, a).cmp(&self.term_key(pool, b)));
        for (i, &k) in order.iter().enumerate() {
            let x = self.nth(k);
            if i == 0 {
                self.wrap(x, M_ADD);
            } else if let Some(neg) = x.neg {
                self.push(" - ");
                self.wrap_neg(neg, M_MUL);
            } else {
                self.push(" + ");
                self.wrap(x, M_MUL);
            }
        }
        self.order = order;
    }

    /// Appends the product of `fs`: `[-]coef * factors / divisors` (see
    /// [`to_modelica`]), with the negation's text for a negative
    /// coefficient.
    fn product(&mut self, pool: &ExprPool, fs: &[ExprId]) -> Text {
        let start = self.buf.len();
        let (coef, num, den) = split_product(pool, fs);
        let mut order = std::mem::take(&mut self.order);
        order.clear();
        order.extend(num.iter().map(|&f| self.ids.binary_search(&f).unwrap_or(0)));
        order.sort_by(|&a, &b| {
            let (x, y) = (self.nth(a), self.nth(b));
            (x.top, self.bytes(x)).cmp(&(y.top, self.bytes(y)))
        });
        let mut divisors = std::mem::take(&mut self.den);
        divisors.clear();
        divisors.extend(
            den.iter()
                .map(|&(b, n)| (self.ids.binary_search(&b).unwrap_or(0), n)),
        );
        divisors.sort_by(|a, b| self.bytes(self.nth(a.0)).cmp(self.bytes(self.nth(b.0))));
        if coef.is_sign_negative() {
            self.buf.push(b'-');
        }
        let mag = self.buf.len();
        let with_coef = coef.abs() != 1.0;
        let items = usize::from(with_coef) + order.len();
        // (every item is at least of factor level: the magnitude is never
        // parenthesised, before `/` or after `-`)
        let mut p = M_MUL;
        if with_coef {
            self.push(&modelica_number(coef.abs()));
            p = M_ATOM;
        }
        for (i, &k) in order.iter().enumerate() {
            if with_coef || i > 0 {
                self.push(" * ");
            }
            let x = self.nth(k);
            self.wrap(x, M_POW);
            p = x.p.max(M_POW);
        }
        if items == 0 {
            self.buf.push(b'1');
            p = M_ATOM;
        } else if items > 1 {
            p = M_MUL;
        }
        if !divisors.is_empty() {
            self.push(" / ");
            let several = divisors.len() > 1;
            if several {
                self.buf.push(b'(');
            }
            for (i, &(k, n)) in divisors.iter().enumerate() {
                if i > 0 {
                    self.push(" * ");
                }
                let x = self.nth(k);
                self.power(x, n);
            }
            if several {
                self.buf.push(b')');
            }
            p = M_MUL;
        }
        self.order = order;
        self.den = divisors;
        let end = self.buf.len();
        if coef.is_sign_negative() {
            Text {
                start,
                end,
                p: M_ADD,
                neg: Some((mag, end, p)),
                top: 0,
            }
        } else {
            Text {
                start,
                end,
                p,
                neg: None,
                top: 0,
            }
        }
    }
}
