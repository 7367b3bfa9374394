//! Sums and products built link by link through `Partial`: the same
//! expression as the binary constructors applied left to right (printed,
//! differentiated and evaluated alike), without their partial results in
//! the pool.

mod common;

use common::{TestEnv, TestNames};
use daec_expr::{ExprId, ExprPool, ParamId, Partial, to_modelica};

/// One link of a chain.
#[derive(Clone, Copy, Debug)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Neg,
}

/// Operands the chains combine: leaves, constants (inexact reciprocals,
/// negative zero), sums, products and powers, built the same way in any
/// pool.
fn operands(p: &mut ExprPool) -> Vec<ExprId> {
    let (x, y, z) = (p.var(0, 0), p.var(1, 0), p.var(2, 1));
    let k = p.param(ParamId(0));
    let c3 = p.constant(3.0);
    let half = p.constant(0.5);
    let m0 = p.constant(-0.0);
    let two = p.constant(2.0);
    let tx = p.mul(two, x);
    let xy = p.add(x, y);
    let third = p.div(x, c3);
    let ky = p.mul(k, y);
    let yz = p.sub(y, z);
    let x2 = p.powi(x, 2);
    let rx = p.powi(x, -1);
    let s = p.func(daec_expr::Func::Sin, z);
    vec![x, y, z, k, c3, half, m0, tx, xy, third, ky, yz, x2, rx, s]
}

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

const OPS: [Op; 5] = [Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Neg];

/// The chain `first op₁ b₁ op₂ b₂ …` by the binary constructors.
fn binary(p: &mut ExprPool, first: ExprId, links: &[(Op, ExprId)]) -> ExprId {
    links.iter().fold(first, |a, &(op, b)| match op {
        Op::Add => p.add(a, b),
        Op::Sub => p.sub(a, b),
        Op::Mul => p.mul(a, b),
        Op::Div => p.div(a, b),
        Op::Neg => p.neg(a),
    })
}

/// The same chain through a `Partial`.
fn partial(p: &mut ExprPool, first: ExprId, links: &[(Op, ExprId)]) -> ExprId {
    let acc = links
        .iter()
        .fold(Partial::from(first), |a, &(op, b)| match op {
            Op::Add => p.partial_add(a, b),
            Op::Sub => p.partial_sub(a, b),
            Op::Mul => p.partial_mul(a, b),
            Op::Div => p.partial_div(a, b),
            Op::Neg => p.partial_neg(a),
        });
    p.finish(acc)
}

fn names() -> TestNames {
    TestNames {
        unknowns: vec!["x", "y", "z"],
        params: vec!["k"],
    }
}

#[test]
fn chains_match_the_binary_constructors() {
    let env = TestEnv {
        vars: vec![vec![0.7, 1.1], vec![-1.3, 0.4], vec![2.1, -0.6]],
        params: vec![1.7],
        t: 0.0,
    };
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut fewer = 0;
    for _ in 0..2000 {
        let (mut a, mut b) = (ExprPool::new(), ExprPool::new());
        let (ops_a, ops_b) = (operands(&mut a), operands(&mut b));
        assert!(a.same_nodes(&b));
        let len = 1 + rng.next(6);
        // A chain of sums or of products (with negations), as the lowering
        // builds them, or of any links.
        let pick: &[Op] = match rng.next(3) {
            0 => &OPS[..2],
            1 => &OPS[2..],
            _ => &OPS,
        };
        let first = rng.next(ops_a.len());
        let links: Vec<(Op, usize)> = (0..len)
            .map(|_| (pick[rng.next(pick.len())], rng.next(ops_a.len())))
            .collect();
        let la: Vec<(Op, ExprId)> = links.iter().map(|&(o, i)| (o, ops_a[i])).collect();
        let lb: Vec<(Op, ExprId)> = links.iter().map(|&(o, i)| (o, ops_b[i])).collect();
        let ea = binary(&mut a, ops_a[first], &la);
        let eb = partial(&mut b, ops_b[first], &lb);
        let n = names();
        let (ta, tb) = (to_modelica(&a, ea, &n), to_modelica(&b, eb, &n));
        assert_eq!(ta, tb, "{links:?}");
        assert!(
            b.len() <= a.len(),
            "{links:?}: {} > {} nodes",
            b.len(),
            a.len()
        );
        fewer += usize::from(b.len() < a.len());
        let (va, vb) = (a.eval(ea, &env), b.eval(eb, &env));
        assert!(
            va.to_bits() == vb.to_bits() || va.is_nan() && vb.is_nan(),
            "{ta}: {va} vs {vb}"
        );
        let (x_a, x_b) = (a.var(0, 0), b.var(0, 0));
        let (da, db) = (a.diff(ea, x_a), b.diff(eb, x_b));
        assert_eq!(
            to_modelica(&a, da, &n),
            to_modelica(&b, db, &n),
            "d/dx {ta}"
        );
        let (dta, dtb) = (a.dt(ea), b.dt(eb));
        assert_eq!(
            to_modelica(&a, dta, &n),
            to_modelica(&b, dtb, &n),
            "d/dt {ta}"
        );
    }
    // Most chains of two or more links have an intermediate result the
    // partial chain does not intern.
    assert!(fewer > 1000, "{fewer} of 2000 chains saved a node");
}

#[test]
fn a_sum_chain_interns_only_its_result() {
    let mut p = ExprPool::new();
    let (x, y, z) = (p.var(0, 0), p.var(1, 0), p.var(2, 0));
    let before = p.len();
    let s = p.partial_add(Partial::from(x), y);
    let s = p.partial_sub(s, z);
    assert_eq!(
        p.len(),
        before + 2,
        "only `-1` and `-1·z` are new before the end"
    );
    let s = p.finish(s);
    assert_eq!(p.len(), before + 3);
    assert_eq!(to_modelica(&p, s, &names()), "x + y - z");
    let xy = p.add(x, y);
    assert_eq!(p.len(), before + 4, "`x + y` was never interned");
    let whole = p.sub(xy, z);
    assert_eq!(whole, s);
}

#[test]
fn a_negated_product_chain_interns_only_its_result() {
    let mut p = ExprPool::new();
    let (l, d) = (p.var(0, 0), p.var(1, 0));
    let two = p.constant(2.0);
    let m1 = p.constant(-1.0);
    let before = p.len();
    // `-2*l*d`
    let q = p.partial_mul(Partial::from(two), l);
    let q = p.partial_mul(q, d);
    let q = p.partial_neg(q);
    assert_eq!(
        p.len(),
        before + 1,
        "only the coefficient -2 is new before the end"
    );
    let q = p.finish(q);
    assert_eq!(p.len(), before + 2);
    assert_eq!(to_modelica(&p, q, &names()), "-2 * x * y");
    assert_eq!(p.product(&[m1, two, l, d]), q);
}
