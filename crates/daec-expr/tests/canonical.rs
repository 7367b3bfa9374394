//! Unit tests of the canonical forms produced by the smart constructors.

use daec_expr::{CmpOp, ExprPool, Func, Func2, Node, ParamId};

#[test]
fn commutative_operands_are_ordered() {
    let mut p = ExprPool::new();
    let (x, y) = (p.var(0, 0), p.var(1, 0));
    assert_eq!(p.add(x, y), p.add(y, x));
    assert_eq!(p.mul(x, y), p.mul(y, x));
    assert_eq!(p.func2(Func2::Min, x, y), p.func2(Func2::Min, y, x));
    assert_eq!(p.func2(Func2::Max, x, y), p.func2(Func2::Max, y, x));
    assert_ne!(p.func2(Func2::Atan2, x, y), p.func2(Func2::Atan2, y, x));
    assert_eq!(p.cmp(CmpOp::Eq, x, y), p.cmp(CmpOp::Eq, y, x));
    assert_eq!(p.cmp(CmpOp::Gt, x, y), p.cmp(CmpOp::Lt, y, x));
    assert_eq!(p.cmp(CmpOp::Ge, x, y), p.cmp(CmpOp::Le, y, x));
    let (a, b) = (p.cmp(CmpOp::Lt, x, y), p.cmp(CmpOp::Lt, y, x));
    assert_eq!(p.and(a, b), p.and(b, a));
    assert_eq!(p.or(a, b), p.or(b, a));
}

#[test]
fn sums_and_products_are_flattened() {
    let mut p = ExprPool::new();
    let (x, y, z) = (p.var(0, 0), p.var(1, 0), p.var(2, 0));
    let xy = p.add(x, y);
    let left = p.add(xy, z);
    let yz = p.add(y, z);
    let right = p.add(x, yz);
    assert_eq!(left, right);
    assert_eq!(left, p.sum(&[z, y, x]));
    match p.node(left) {
        Node::Add(ts) => assert_eq!(ts.len(), 3),
        other => panic!("expected a 3-term sum, got {other:?}"),
    }
    let xy = p.mul(x, y);
    let m = p.mul(xy, z);
    match p.node(m) {
        Node::Mul(fs) => assert_eq!(fs.len(), 3),
        other => panic!("expected a 3-factor product, got {other:?}"),
    }
}

#[test]
fn identities_and_constant_folding() {
    let mut p = ExprPool::new();
    let x = p.var(0, 0);
    let (zero, one) = (p.constant(0.0), p.constant(1.0));
    assert_eq!(p.add(x, zero), x);
    assert_eq!(p.mul(x, one), x);
    assert_eq!(p.mul(x, zero), zero);
    assert_eq!(p.sub(x, x), zero);
    assert_eq!(p.powi(x, 1), x);
    assert_eq!(p.powi(x, 0), one);
    let (two, three) = (p.constant(2.0), p.constant(3.0));
    let s = p.add(two, three);
    assert_eq!(p.as_constant(s), Some(5.0));
    let m = p.mul(two, three);
    assert_eq!(p.as_constant(m), Some(6.0));
    let sin0 = p.func(Func::Sin, zero);
    assert_eq!(p.as_constant(sin0), Some(0.0));
    let pw = p.pow(two, three);
    assert_eq!(p.as_constant(pw), Some(8.0));
    let c = p.cmp(CmpOp::Lt, two, three);
    assert_eq!(p.as_constant(c), Some(1.0));
    // 2 + x + 3 → 5 + x
    let a = p.add(two, x);
    let b = p.add(a, three);
    let five = p.constant(5.0);
    assert_eq!(b, p.add(x, five));
}

#[test]
fn like_terms_and_factors_are_collected() {
    let mut p = ExprPool::new();
    let (x, y) = (p.var(0, 0), p.var(1, 0));
    let two_x = p.scale(2.0, x);
    let three_x = p.scale(3.0, x);
    let five_x = p.scale(5.0, x);
    assert_eq!(p.add(two_x, three_x), five_x);
    assert_eq!(p.add(x, x), two_x);
    let xx = p.mul(x, x);
    assert_eq!(xx, p.powi(x, 2));
    let x3 = p.powi(x, 3);
    let d = p.div(x3, x);
    assert_eq!(d, xx);
    assert_eq!(p.div(x, x), p.constant(1.0));
    // 2xy − yx·2 = 0
    let xy = p.mul(x, y);
    let a = p.scale(2.0, xy);
    let yx = p.mul(y, x);
    let b = p.scale(2.0, yx);
    assert_eq!(p.sub(a, b), p.constant(0.0));
    // (x^2)^3 = x^6 and (x·y)^2 = x^2·y^2
    let x2 = p.powi(x, 2);
    assert_eq!(p.powi(x2, 3), p.powi(x, 6));
    let y2 = p.powi(y, 2);
    assert_eq!(p.powi(xy, 2), p.mul(x2, y2));
    // −(−x) = x
    let nx = p.neg(x);
    assert_eq!(p.neg(nx), x);
}

#[test]
fn division_by_a_constant_is_folded_only_when_exact() {
    let mut p = ExprPool::new();
    let x = p.var(0, 0);
    let (two, three) = (p.constant(2.0), p.constant(3.0));
    let half = p.div(x, two);
    assert_eq!(half, p.scale(0.5, x));
    let third = p.div(x, three);
    match p.node(third) {
        Node::Mul(fs) => {
            assert_eq!(fs.len(), 2);
            assert!(fs.iter().any(|f| matches!(p.node(*f), Node::Powi(_, -1))));
        }
        other => panic!("expected x * 3^-1, got {other:?}"),
    }
    // (x/3)*3 still collects like factors: 3^-1 · 3^1 = 1.
    let back = p.mul(third, three);
    assert_eq!(back, x);
}

#[test]
fn boolean_simplifications() {
    let mut p = ExprPool::new();
    let (x, y) = (p.var(0, 0), p.var(1, 0));
    let c = p.cmp(CmpOp::Lt, x, y);
    let (t, f) = (p.constant(1.0), p.constant(0.0));
    assert_eq!(p.and(c, t), c);
    assert_eq!(p.and(c, f), f);
    assert_eq!(p.or(c, t), t);
    assert_eq!(p.or(c, f), c);
    let nc = p.not(c);
    assert_eq!(p.not(nc), c);
    assert_eq!(p.select(t, x, y), x);
    assert_eq!(p.select(f, x, y), y);
    assert_eq!(p.select(c, x, x), x);
    // `and` with a non-Boolean operand keeps the node (x = 5 → 1, not 5).
    let a = p.and(t, x);
    assert!(matches!(p.node(a), Node::And(..)));
}

#[test]
fn children_precede_parents_and_ids_are_dense() {
    let mut p = ExprPool::new();
    let x = p.var(0, 0);
    let m = p.param(ParamId(0));
    let s = p.func(Func::Sin, x);
    let e = p.mul(m, s);
    let t = p.time();
    let e2 = p.add(e, t);
    for i in 0..p.len() {
        let id = p.id_at(i).expect("dense ids");
        for c in p.node(id).children() {
            assert!(c < id, "child {c:?} of {id:?}");
        }
    }
    assert_eq!(e2.index(), p.len() - 1);
    assert_eq!(p.id_at(p.len()), None);
    assert!(!p.is_empty());
    assert!(ExprPool::new().is_empty());
}

#[test]
fn undefined_constants_fold_to_nan_and_inf_without_panic() {
    let mut p = ExprPool::new();
    let m1 = p.constant(-1.0);
    let l = p.func(Func::Log, m1);
    assert!(p.as_constant(l).is_some_and(f64::is_nan));
    let zero = p.constant(0.0);
    let one = p.constant(1.0);
    let d = p.div(one, zero);
    // 1/0 is kept symbolic (0 has no exact reciprocal) and evaluates to inf.
    let env = daec_expr_env();
    assert_eq!(p.eval(d, &env), f64::INFINITY);
    let nan = p.constant(f64::NAN);
    let x = p.var(0, 0);
    let s = p.add(nan, x);
    assert!(p.eval(s, &env).is_nan());
    assert_eq!(
        p.add(nan, x),
        s,
        "NaN constants are interned by bit pattern"
    );
}

mod common;

fn daec_expr_env() -> common::TestEnv {
    common::TestEnv {
        vars: vec![vec![1.5]],
        params: vec![],
        t: 0.0,
    }
}

#[test]
fn extreme_indices_and_exponents_do_not_panic() {
    let mut p = ExprPool::new();
    let big = p.var(u32::MAX, 0);
    let bigp = p.param(ParamId(u32::MAX));
    assert_eq!(p.var(u32::MAX, 0), big);
    assert_eq!(p.param(ParamId(u32::MAX)), bigp);
    let far = p.var(3, 1000);
    assert_eq!(p.dt(far), p.var(3, 1001));
    let e = p.powi(big, i32::MIN);
    let d = p.diff(e, big);
    let env = common::TestEnv {
        vars: vec![],
        params: vec![],
        t: 0.0,
    };
    // The unknown has no value in this environment: NaN, no panic.
    assert!(p.eval(d, &env).is_nan());
    assert_eq!(p.max_orders(far), vec![(3, 1000)]);
}

#[test]
fn presized_pool_interns_like_a_default_pool() {
    let mut a = ExprPool::new();
    let mut b = ExprPool::with_capacity(1000);
    for p in [&mut a, &mut b] {
        let x = p.var(0, 0);
        let s = p.func(Func::Sin, x);
        let e = p.mul(s, x);
        let e2 = p.mul(x, s);
        assert_eq!(e, e2);
    }
    assert_eq!(a.len(), b.len());
    assert_eq!(a.len(), 3);
}

#[test]
fn nodes_are_16_bytes_with_binary_operands_inline() {
    assert_eq!(ExprPool::NODE_BYTES, 16);
    let mut p = ExprPool::new();
    let (x, y, z) = (p.var(0, 0), p.var(1, 0), p.var(2, 0));
    let two = p.add(x, y);
    let three = p.add(two, z);
    let Node::Add(ops) = p.node(two) else {
        panic!("not a sum: {:?}", p.node(two));
    };
    assert_eq!(*ops, [x, y]);
    let Node::Add(ops) = p.node(three) else {
        panic!("not a sum: {:?}", p.node(three));
    };
    assert_eq!(*ops, [x, y, z]);
    assert_eq!(format!("{:?}", p.node(two)), format!("Add({:?})", [x, y]));
    assert_eq!(
        format!("{:?}", p.node(three)),
        format!("Add({:?})", [x, y, z])
    );
    // An operand list built either way interns to the same node.
    let again = p.sum(&[y, x]);
    assert_eq!(again, two);
    let prod = p.mul(x, y);
    assert_eq!(p.product(&[y, x]), prod);
}

#[test]
fn every_derivative_order_of_an_unknown_is_one_leaf() {
    // orders 0–1 and 2–3 are interned in two dense tables, higher ones in
    // a map: each (unknown, order) is one node, whichever table holds it
    let mut p = ExprPool::new();
    let mut ids = Vec::new();
    for j in [5, 0, 3] {
        for k in [3, 0, 6, 1, 2, 4] {
            ids.push(p.var(j, k));
        }
    }
    assert_eq!(p.len(), 18);
    let mut k = 0;
    for j in [5, 0, 3] {
        for order in [3, 0, 6, 1, 2, 4] {
            assert_eq!(p.var(j, order), ids[k]);
            assert!(matches!(
                p.node(ids[k]),
                Node::Leaf(daec_expr::Leaf::Var { unknown, order: o }) if unknown == j && o == order
            ));
            k += 1;
        }
    }
    assert_eq!(p.len(), 18);
    let x = p.var(5, 1);
    assert_eq!(p.dt(x), p.var(5, 2));
}
