//! max_orders, leaves, substitute, linear_in and linear_in_sparse.

mod common;

use common::{TestEnv, names};
use daec_expr::{CmpOp, ExprPool, Func, Leaf, Node, ParamId, to_modelica};

/// The simple pendulum of steinbrecher2016 Ex. 2.7 (problem S1), unknowns
/// (x, y, v, w, λ) = 0..5, parameters (m, g, ℓ) = 0..3.
fn pendulum(p: &mut ExprPool) -> Vec<daec_expr::ExprId> {
    let (x, y, v, w, lam) = (
        p.var(0, 0),
        p.var(1, 0),
        p.var(2, 0),
        p.var(3, 0),
        p.var(4, 0),
    );
    let (xd, yd, vd, wd) = (p.var(0, 1), p.var(1, 1), p.var(2, 1), p.var(3, 1));
    let (m, g, l) = (
        p.param(ParamId(0)),
        p.param(ParamId(1)),
        p.param(ParamId(2)),
    );
    let two = p.constant(2.0);
    let f1 = p.sub(xd, v);
    let f2 = p.sub(yd, w);
    let mvd = p.mul(m, vd);
    let xl = p.product(&[two, x, lam]);
    let f3 = p.add(mvd, xl);
    let mwd = p.mul(m, wd);
    let yl = p.product(&[two, y, lam]);
    let mg = p.mul(m, g);
    let f4 = p.sum(&[mwd, yl, mg]);
    let (x2, y2, l2) = (p.powi(x, 2), p.powi(y, 2), p.powi(l, 2));
    let s = p.add(x2, y2);
    let f5 = p.sub(s, l2);
    vec![f1, f2, f3, f4, f5]
}

#[test]
fn sigma_matrix_of_the_pendulum() {
    // steinbrecher2016 (12): Σ = [[1,-,0,-,-],[-,1,-,0,-],[0,-,1,-,0],[-,0,-,1,0],[0,0,-,-,-]].
    let mut p = ExprPool::new();
    let f = pendulum(&mut p);
    assert_eq!(p.max_orders(f[0]), vec![(0, 1), (2, 0)]);
    assert_eq!(p.max_orders(f[1]), vec![(1, 1), (3, 0)]);
    assert_eq!(p.max_orders(f[2]), vec![(0, 0), (2, 1), (4, 0)]);
    assert_eq!(p.max_orders(f[3]), vec![(1, 0), (3, 1), (4, 0)]);
    assert_eq!(p.max_orders(f[4]), vec![(0, 0), (1, 0)]);
    // After two differentiations of the constraint: orders 2 in x and y.
    let d2 = p.dt_n(f[4], 2);
    assert_eq!(p.max_orders(d2), vec![(0, 2), (1, 2)]);
    // A constant has no unknown.
    let c = p.constant(3.0);
    assert!(p.max_orders(c).is_empty());
}

#[test]
fn leaves_are_sorted_and_deduplicated() {
    let mut p = ExprPool::new();
    let f = pendulum(&mut p);
    let ls = p.leaves(f[3]);
    let (y, wd, lam) = (p.var(1, 0), p.var(3, 1), p.var(4, 0));
    let (m, g) = (p.param(ParamId(0)), p.param(ParamId(1)));
    let mut expected = vec![y, wd, lam, m, g];
    expected.sort();
    assert_eq!(ls, expected);
    let t = p.time();
    let s = p.func(Func::Sin, t);
    let e = p.mul(s, t);
    assert_eq!(p.leaves(e), vec![t]);
}

#[test]
fn substitute_replaces_leaves_and_recanonicalises() {
    let mut p = ExprPool::new();
    let (x, y) = (p.var(0, 0), p.var(1, 0));
    let x2 = p.powi(x, 2);
    let e = p.add(x2, y);
    // x → y: y² + y; y → −x²: x² − x² = 0.
    let sub1 = p.substitute(e, &|l| (l == x).then_some(y));
    let y2 = p.powi(y, 2);
    assert_eq!(sub1, p.add(y2, y));
    let nx2 = p.neg(x2);
    let sub2 = p.substitute(e, &|l| (l == y).then_some(nx2));
    assert_eq!(p.as_constant(sub2), Some(0.0));
    // Substituting nothing returns the same id.
    assert_eq!(p.substitute(e, &|_| None), e);
}

#[test]
fn replace_nodes_replaces_inner_nodes_but_not_under_an_opaque_one() {
    // if x > 1 then x else −x, and noEvent(x > 1) · y: the relation becomes
    // the parameter m where it stands bare, and stays under noEvent
    let mut p = ExprPool::new();
    let (x, y) = (p.var(0, 0), p.var(1, 0));
    let one = p.constant(1.0);
    let rel = p.cmp(CmpOp::Gt, x, one);
    let nx = p.neg(x);
    let sel = p.select(rel, x, nx);
    let quiet = p.func(Func::NoEvent, rel);
    let scaled = p.mul(quiet, y);
    let m = p.param(ParamId(0));
    let new = p.replace_nodes(
        &[sel, scaled],
        &|_, id| (id == rel).then_some(m),
        &|pool, id| matches!(pool.node(id), Node::Func(Func::NoEvent, _)),
    );
    assert_eq!(new[0], p.select(m, x, nx));
    assert_eq!(new[1], scaled);
    // derivatives of the wrapped relation vanish, its value is the relation's
    let d = p.dt(quiet);
    assert_eq!(p.as_constant(d), Some(0.0));
    assert_eq!(to_modelica(&p, quiet, &names()), "noEvent(1 < x)");
}

#[test]
fn quasi_linear_form_of_the_pendulum() {
    // E(t,z)ż = k(t,z): the pendulum is linear in the derivatives ż.
    let mut p = ExprPool::new();
    let f = pendulum(&mut p);
    let zd: Vec<_> = (0..5).map(|j| p.var(j, 1)).collect();
    let (coefs, rest) = p.linear_in(f[2], &zd).expect("F3 is linear in ż");
    let m = p.param(ParamId(0));
    let zero = p.constant(0.0);
    assert_eq!(coefs, vec![zero, zero, m, zero, zero]);
    let (x, lam) = (p.var(0, 0), p.var(4, 0));
    let two = p.constant(2.0);
    assert_eq!(rest, p.product(&[two, x, lam]));
    // Reassembling gives the original expression.
    let vd = p.var(2, 1);
    let mv = p.mul(coefs[2], vd);
    assert_eq!(p.add(mv, rest), f[2]);
}

#[test]
fn nonlinear_dependencies_are_rejected() {
    let mut p = ExprPool::new();
    let (x, y) = (p.var(0, 0), p.var(1, 0));
    let xy = p.mul(x, y);
    assert!(p.linear_in(xy, &[x, y]).is_none(), "x·y is bilinear");
    assert!(p.linear_in(xy, &[x]).is_some(), "x·y is linear in x alone");
    let x2 = p.powi(x, 2);
    assert!(p.linear_in(x2, &[x]).is_none());
    let fl = p.func(Func::Floor, x);
    assert!(
        p.linear_in(fl, &[x]).is_none(),
        "floor has zero derivative but is not linear"
    );
    let ix = p.powi(x, -1);
    assert!(p.linear_in(ix, &[x]).is_none());
    let zero = p.constant(0.0);
    let c = p.cmp(CmpOp::Gt, x, zero);
    let s = p.select(c, y, zero);
    assert!(p.linear_in(s, &[x]).is_none(), "condition depends on x");
}

#[test]
fn linear_if_expression_with_free_condition() {
    let mut p = ExprPool::new();
    let (x, t) = (p.var(0, 0), p.time());
    let zero = p.constant(0.0);
    let c = p.cmp(CmpOp::Gt, t, zero);
    let three = p.constant(3.0);
    let tx = p.mul(three, x);
    let s = p.select(c, tx, x);
    let (coefs, rest) = p.linear_in(s, &[x]).expect("linear in x");
    assert_eq!(p.as_constant(rest), Some(0.0));
    let e = |tv: f64| TestEnv {
        vars: vec![vec![0.0]],
        params: vec![],
        t: tv,
    };
    assert_eq!(p.eval(coefs[0], &e(1.0)), 3.0);
    assert_eq!(p.eval(coefs[0], &e(-1.0)), 1.0);
}

#[test]
fn scale_of_an_evaluation_tells_cancellation_from_small_units() {
    let mut p = ExprPool::new();
    let (x, y) = (p.var(0, 0), p.var(1, 0));
    let env = TestEnv {
        vars: vec![vec![0.1], vec![0.2]],
        params: vec![],
        t: 0.0,
    };
    // A capacitance-sized value is small but computed at its own scale.
    let c = p.constant(4e-13);
    let cx = p.mul(c, x);
    let (v, scale) = p.eval_with_scale(cx, &env);
    assert!((v - 4e-14).abs() < 1e-27, "{v}");
    assert_eq!(scale, v);
    // x·(1 + 3·y) − 2.5·x cancels at x = 0.1, y = 0.5, at the scale
    // 0.1·2.5 + 2.5·0.1.
    let env = TestEnv {
        vars: vec![vec![0.1], vec![0.5]],
        params: vec![],
        t: 0.0,
    };
    let (one, three, two_half) = (p.constant(1.0), p.constant(3.0), p.constant(2.5));
    let y3 = p.mul(three, y);
    let f = p.add(one, y3);
    let xf = p.mul(x, f);
    let x25 = p.mul(two_half, x);
    let zero_ish = p.sub(xf, x25);
    let (v, scale) = p.eval_with_scale(zero_ish, &env);
    assert!(v.abs() < 1e-15, "{v}");
    assert!((scale - 0.5).abs() < 1e-12, "{scale}");
    // An `if` takes the scale of the branch it takes.
    let zero = p.constant(0.0);
    let cond = p.cmp(CmpOp::Gt, x, zero);
    let big = p.constant(1e6);
    let sel = p.select(cond, cx, big);
    let (v, scale) = p.eval_with_scale(sel, &env);
    assert!((v - 4e-14).abs() < 1e-27 && scale == v, "{v} {scale}");
}

/// The numbering of the first-order derivative leaves by their unknown.
fn first_derivative(l: &Leaf) -> Option<usize> {
    match *l {
        Leaf::Var { unknown, order: 1 } => Some(unknown as usize),
        _ => None,
    }
}

#[test]
fn sparse_coefficients_cover_only_the_leaves_that_occur() {
    let mut p = ExprPool::new();
    let f = pendulum(&mut p);
    let m = p.param(ParamId(0));
    let one = p.constant(1.0);
    // F3 = m·v̇ + 2xλ: one coefficient (unknown 2), rest 2xλ
    let (coefs, rest) = p
        .linear_in_sparse(f[2], &first_derivative)
        .expect("F3 is linear in ż");
    assert_eq!(coefs, vec![(2, m)]);
    let (x, lam) = (p.var(0, 0), p.var(4, 0));
    let two = p.constant(2.0);
    assert_eq!(rest, p.product(&[two, x, lam]));
    // F1 = ẋ − v: coefficient 1 of unknown 0
    let (coefs, _) = p.linear_in_sparse(f[0], &first_derivative).unwrap();
    assert_eq!(coefs, vec![(0, one)]);
    // F5 has no derivative: no coefficients, rest is the row itself
    let (coefs, rest) = p.linear_in_sparse(f[4], &first_derivative).unwrap();
    assert!(coefs.is_empty());
    assert_eq!(rest, f[4]);
    // the dense form agrees on every row
    let zd: Vec<_> = (0..5).map(|j| p.var(j, 1)).collect();
    for &r in &f {
        let (dense, rest_dense) = p.linear_in(r, &zd).unwrap();
        let (sparse, rest_sparse) = p.linear_in_sparse(r, &first_derivative).unwrap();
        assert_eq!(rest_dense, rest_sparse);
        for (j, &c) in dense.iter().enumerate() {
            let s = sparse.iter().find(|e| e.0 == j).map(|e| e.1);
            match s {
                Some(s) => assert_eq!(s, c),
                None => assert_eq!(p.as_constant(c), Some(0.0)),
            }
        }
    }
}

#[test]
fn sparse_coefficients_are_merged_sorted_and_reject_nonlinear_rows() {
    let mut p = ExprPool::new();
    // 3ẏ + t·ẋ + ẏ·5 − x: coefficients of unknowns 0 and 1, sorted, ẏ merged
    let (xd, yd, x, t) = (p.var(0, 1), p.var(1, 1), p.var(0, 0), p.time());
    let three = p.constant(3.0);
    let five = p.constant(5.0);
    let a = p.mul(three, yd);
    let b = p.mul(t, xd);
    let c = p.mul(yd, five);
    let nx = p.neg(x);
    let e = p.sum(&[a, b, c, nx]);
    let (coefs, rest) = p.linear_in_sparse(e, &first_derivative).unwrap();
    assert_eq!(coefs.iter().map(|c| c.0).collect::<Vec<_>>(), vec![0, 1]);
    assert_eq!(coefs[0].1, t);
    assert_eq!(p.as_constant(coefs[1].1), Some(8.0));
    assert_eq!(rest, nx);
    // a product of two derivatives, a derivative under a function or in a
    // condition is not linear
    let xy = p.mul(xd, yd);
    assert!(p.linear_in_sparse(xy, &first_derivative).is_none());
    let s = p.func(Func::Sin, xd);
    assert!(p.linear_in_sparse(s, &first_derivative).is_none());
    let zero = p.constant(0.0);
    let cond = p.cmp(CmpOp::Gt, xd, zero);
    let sel = p.select(cond, x, zero);
    assert!(p.linear_in_sparse(sel, &first_derivative).is_none());
    // x·ẋ is linear in ẋ with the state-dependent coefficient x
    let xxd = p.mul(x, xd);
    let (coefs, _) = p.linear_in_sparse(xxd, &first_derivative).unwrap();
    assert_eq!(coefs, vec![(0, x)]);
}

/// The nodes `roots` depend on, by a plain search with an ordered set (the
/// reference for [`ExprPool::topo_order`]).
fn reachable(p: &ExprPool, roots: &[daec_expr::ExprId]) -> Vec<daec_expr::ExprId> {
    let mut seen = std::collections::BTreeSet::new();
    let mut stack: Vec<daec_expr::ExprId> = roots.to_vec();
    while let Some(id) = stack.pop() {
        if seen.insert(id) {
            stack.extend(p.node(id).children());
        }
    }
    seen.into_iter().collect()
}

#[test]
fn traversals_reuse_one_visited_set_and_leave_it_clear() {
    // The visited set of `topo_order` is kept between calls on a thread:
    // traversals of different pools, of a small part of a large pool (ids
    // sorted) and of most of it (ids read off the set), and of a pool that
    // grew in between must each see exactly the nodes they reach.
    let mut big = ExprPool::new();
    let mut chain = big.var(0, 0);
    let mut links = Vec::new();
    for k in 1..3000u32 {
        let x = big.var(k, 0);
        let s = big.func(Func::Sin, x);
        chain = big.add(chain, s);
        links.push(chain);
    }
    let mut small = ExprPool::new();
    let f = pendulum(&mut small);
    for round in 0..3 {
        assert_eq!(big.topo_order(&[chain]), reachable(&big, &[chain]));
        assert_eq!(small.topo_order(&f), reachable(&small, &f));
        let part = [links[10 + round], links[20]];
        assert_eq!(big.topo_order(&part), reachable(&big, &part));
        assert_eq!(small.topo_order(&f[4..]), reachable(&small, &f[4..]));
        // the pool grows past the set's size; the old nodes stay reachable
        let y = big.var(10_000 + round as u32, 1);
        chain = big.mul(chain, y);
    }
    let leaves = big.leaves(chain);
    assert_eq!(leaves.len(), 3003);
    assert!(leaves.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn linear_in_builds_only_the_coefficients_and_the_rest() {
    // e = a·(x + s) + b·(x + s) with s a long sum free of x, shared by
    // both terms: the coefficient of x is a + b, the rest a·s + b·s; the
    // nodes free of x are taken as they are, so the split adds the few
    // nodes of the coefficient and the rest only.
    let mut p = ExprPool::new();
    let x = p.var(0, 1);
    let (a, b) = (p.param(ParamId(0)), p.param(ParamId(1)));
    let mut s = p.var(1, 0);
    for k in 2..400u32 {
        let y = p.var(k, 0);
        let c = p.func(Func::Cos, y);
        s = p.add(s, c);
    }
    let xs = p.add(x, s);
    let t1 = p.mul(a, xs);
    let t2 = p.mul(b, xs);
    let e = p.add(t1, t2);
    let before = p.len();
    let (coefs, rest) = p.linear_in(e, &[x]).expect("linear");
    assert!(p.len() - before <= 6, "{} nodes built", p.len() - before);
    assert_eq!(coefs[0], p.add(a, b));
    let (as_, bs) = (p.mul(a, s), p.mul(b, s));
    assert_eq!(rest, p.add(as_, bs));
    assert!(
        p.linear_in(s, &[x])
            .is_some_and(|(c, r)| p.as_constant(c[0]) == Some(0.0) && r == s)
    );
}

#[test]
fn max_orders_keep_the_highest_order_whatever_the_ids_of_the_leaves() {
    // the second derivative is created first: its id is the smallest
    let mut p = ExprPool::new();
    let x2 = p.var(0, 2);
    let y = p.var(1, 0);
    let x = p.var(0, 0);
    let x1 = p.var(0, 1);
    let t = p.time();
    let m = p.param(ParamId(0));
    let s = p.func(Func::Sin, x);
    let mx2 = p.mul(m, x2);
    let tx1 = p.mul(t, x1);
    let e = p.sum(&[mx2, s, y, tx1]);
    assert_eq!(p.max_orders(e), vec![(0, 2), (1, 0)]);
    let f = p.add(x1, x);
    assert_eq!(p.max_orders(f), vec![(0, 1)]);
    // parameters and time are not unknowns
    let g = p.mul(m, t);
    assert!(p.max_orders(g).is_empty());
}
