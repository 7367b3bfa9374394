//! Differentiation identities for every node kind, and pinned higher
//! derivatives of constraints from the papers.

mod common;
#[path = "../../../tests/common/snapshot.rs"]
mod snapshot;

use common::{TestEnv, TestNames, names};
use daec_expr::{CmpOp, ExprId, ExprPool, Func, Func2, ParamId, to_latex, to_modelica};

fn env(x: f64, y: f64) -> TestEnv {
    TestEnv {
        vars: vec![vec![x, 0.7, -0.3], vec![y, -1.1, 0.4]],
        params: vec![2.0, 9.81, 1.5],
        t: 0.25,
    }
}

/// d/dx f(x) at x = x0 for f = `func` applied to x, compared with `expected`.
fn check_unary(f: Func, x0: f64, expected: f64) {
    let mut p = ExprPool::new();
    let x = p.var(0, 0);
    let e = p.func(f, x);
    let d = p.diff(e, x);
    let got = p.eval(d, &env(x0, 0.0));
    assert!(
        (got - expected).abs() <= 1e-12 * (1.0 + expected.abs()),
        "{f:?}'({x0}) = {got}, expected {expected}"
    );
}

#[test]
fn chain_rule_for_every_unary_function() {
    let x = 0.3_f64;
    check_unary(Func::Sin, x, x.cos());
    check_unary(Func::Cos, x, -x.sin());
    check_unary(Func::Tan, x, 1.0 / x.cos().powi(2));
    check_unary(Func::Asin, x, 1.0 / (1.0 - x * x).sqrt());
    check_unary(Func::Acos, x, -1.0 / (1.0 - x * x).sqrt());
    check_unary(Func::Atan, x, 1.0 / (1.0 + x * x));
    check_unary(Func::Sinh, x, x.cosh());
    check_unary(Func::Cosh, x, x.sinh());
    check_unary(Func::Tanh, x, 1.0 - x.tanh().powi(2));
    check_unary(Func::Exp, x, x.exp());
    check_unary(Func::Log, x, 1.0 / x);
    check_unary(Func::Log10, x, 1.0 / (x * std::f64::consts::LN_10));
    check_unary(Func::Sqrt, x, 0.5 / x.sqrt());
    check_unary(Func::Abs, x, 1.0);
    check_unary(Func::Abs, -x, -1.0);
    check_unary(Func::Sign, x, 0.0);
    check_unary(Func::Floor, x, 0.0);
    check_unary(Func::Ceil, x, 0.0);
}

#[test]
fn sum_product_quotient_power_rules() {
    let mut p = ExprPool::new();
    let (x, y) = (p.var(0, 0), p.var(1, 0));
    let at = env(0.8, -1.3);
    let (xv, yv) = (0.8_f64, -1.3_f64);
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * (1.0 + b.abs());
    // sum
    let s = p.add(x, y);
    let ds = p.diff(s, x);
    assert_eq!(p.as_constant(ds), Some(1.0));
    // product: d(x·y)/dx = y
    let m = p.mul(x, y);
    assert_eq!(p.diff(m, x), y);
    // quotient: d(x/y)/dy = −x/y²
    let q = p.div(x, y);
    let dq = p.diff(q, y);
    assert!(close(p.eval(dq, &at), -xv / (yv * yv)));
    // integer power: d(x^5)/dx = 5x^4
    let x5 = p.powi(x, 5);
    let d5 = p.diff(x5, x);
    let four = p.powi(x, 4);
    assert_eq!(d5, p.scale(5.0, four));
    // real power with both base and exponent varying: d(x^y)/dy = x^y·ln x
    let xy = p.pow(x, y);
    let dxy = p.diff(xy, y);
    assert!(close(p.eval(dxy, &at), xv.powf(yv) * xv.ln()));
    let dxx = p.diff(xy, x);
    assert!(close(p.eval(dxx, &at), yv * xv.powf(yv - 1.0)));
    // atan2(y, x)
    let a = p.func2(Func2::Atan2, y, x);
    let (dax, day) = (p.diff(a, x), p.diff(a, y));
    let r2 = xv * xv + yv * yv;
    assert!(close(p.eval(dax, &at), -yv / r2));
    assert!(close(p.eval(day, &at), xv / r2));
}

#[test]
fn piecewise_derivatives_follow_the_selected_branch() {
    let mut p = ExprPool::new();
    let (x, y) = (p.var(0, 0), p.var(1, 0));
    let x2 = p.powi(x, 2);
    let mn = p.func2(Func2::Min, x2, y);
    let mx = p.func2(Func2::Max, x2, y);
    let dmn = p.diff(mn, x);
    let dmx = p.diff(mx, x);
    // x² = 0.25 < y = 1 → min picks x² (derivative 2x = 1), max picks y (0).
    assert_eq!(p.eval(dmn, &env(0.5, 1.0)), 1.0);
    assert_eq!(p.eval(dmx, &env(0.5, 1.0)), 0.0);
    assert_eq!(p.eval(dmn, &env(2.0, 1.0)), 0.0);
    assert_eq!(p.eval(dmx, &env(2.0, 1.0)), 4.0);
    // if x > 0 then x^3 else -x
    let zero = p.constant(0.0);
    let c = p.cmp(CmpOp::Gt, x, zero);
    let x3 = p.powi(x, 3);
    let nx = p.neg(x);
    let s = p.select(c, x3, nx);
    let ds = p.diff(s, x);
    assert_eq!(p.eval(ds, &env(2.0, 0.0)), 12.0);
    assert_eq!(p.eval(ds, &env(-2.0, 0.0)), -1.0);
}

#[test]
fn total_derivative_shifts_orders_and_differentiates_time() {
    let mut p = ExprPool::new();
    let x = p.var(0, 0);
    let t = p.time();
    let m = p.param(ParamId(0));
    assert_eq!(p.dt(x), p.var(0, 1));
    assert_eq!(p.dt(t), p.constant(1.0));
    assert_eq!(p.dt(m), p.constant(0.0));
    // d/dt (m·x·t) = m·x'·t + m·x
    let e = p.product(&[m, x, t]);
    let de = p.dt(e);
    let xd = p.var(0, 1);
    let a = p.product(&[m, xd, t]);
    let b = p.mul(m, x);
    assert_eq!(de, p.add(a, b));
    assert_eq!(p.dt_n(x, 3), p.var(0, 3));
    assert_eq!(p.max_orders(de), vec![(0, 1)]);
}

#[test]
fn memoised_derivatives_return_the_same_id() {
    let mut p = ExprPool::new();
    let x = p.var(0, 0);
    let s = p.func(Func::Sin, x);
    let e = p.mul(s, x);
    let d1 = p.dt(e);
    let n = p.len();
    let d2 = p.dt(e);
    assert_eq!(d1, d2);
    assert_eq!(p.len(), n, "a memoised derivative creates no node");
    let p1 = p.diff(e, x);
    let p2 = p.diff(e, x);
    assert_eq!(p1, p2);
}

fn spring_names() -> TestNames {
    TestNames {
        unknowns: vec!["p1", "p2", "p3", "v1", "v2", "v3", "u"],
        params: vec!["m", "c"],
    }
}

/// Pretty table of the k-th total derivatives, Modelica and LaTeX.
fn derivative_table(p: &mut ExprPool, e: ExprId, k: u32, n: &TestNames) -> String {
    let mut out = String::new();
    let mut d = e;
    for i in 0..=k {
        out.push_str(&format!(
            "d^{i}/dt^{i}:\n  modelica: {}\n  latex:    {}\n",
            to_modelica(p, d, n),
            to_latex(p, d, n)
        ));
        d = p.dt(d);
    }
    out
}

#[test]
fn spring_chain_path_constraint_fourth_derivative() {
    // steinbrecher2016 Ex. 2.8 (problem S2): path constraint 0 = p2 − sin(t).
    let mut p = ExprPool::new();
    let p2 = p.var(1, 0);
    let t = p.time();
    let s = p.func(Func::Sin, t);
    let g = p.sub(p2, s);
    let d4 = p.dt_n(g, 4);
    let expected_sin = p.func(Func::Sin, t);
    let p2_4 = p.var(1, 4);
    assert_eq!(
        d4,
        p.sub(p2_4, expected_sin),
        "d⁴/dt⁴ (p2 − sin t) = p2'''' − sin t"
    );
    let table = derivative_table(&mut p, g, 4, &spring_names());
    assert_workspace_snapshot!("expr__spring_chain_path_constraint_dt4", table);
}

#[test]
fn pendulum_constraint_second_derivative() {
    // steinbrecher2016 Ex. 2.7 (problem S1): 0 = x² + y² − ℓ²; the hidden
    // constraints (11a)/(11b) come from its first and second derivatives.
    let mut p = ExprPool::new();
    let (x, y) = (p.var(0, 0), p.var(1, 0));
    let l = p.param(ParamId(2));
    let (x2, y2, l2) = (p.powi(x, 2), p.powi(y, 2), p.powi(l, 2));
    let s = p.add(x2, y2);
    let g = p.sub(s, l2);
    let d1 = p.dt(g);
    // (11a): 2xẋ + 2yẏ
    let (xd, yd) = (p.var(0, 1), p.var(1, 1));
    let two = p.constant(2.0);
    let a = p.product(&[two, x, xd]);
    let b = p.product(&[two, y, yd]);
    assert_eq!(d1, p.add(a, b));
    let d2 = p.dt(d1);
    let e = env(0.6, -0.8);
    // 2ẋ² + 2xẍ + 2ẏ² + 2yÿ at x=.6, ẋ=.7, ẍ=−.3, y=−.8, ẏ=−1.1, ÿ=.4
    let expected = 2.0 * 0.49 + 2.0 * 0.6 * -0.3 + 2.0 * 1.21 + 2.0 * -0.8 * 0.4;
    assert!((p.eval(d2, &e) - expected).abs() < 1e-12);
    assert_eq!(p.max_orders(d2), vec![(0, 2), (1, 2)]);
    let table = derivative_table(&mut p, g, 2, &names());
    assert_workspace_snapshot!("expr__pendulum_constraint_dt2", table);
}

#[test]
fn forgotten_partial_derivatives_are_recomputed_to_the_same_ids() {
    let mut p = ExprPool::new();
    let (x, y) = (p.var(0, 0), p.var(1, 0));
    let xy = p.mul(x, y);
    let s = p.func(Func::Sin, xy);
    let e = p.add(s, x);
    let (dx, dy) = (p.diff(e, x), p.diff(e, y));
    let dt = p.dt(e);
    assert!(p.partial_derivatives_memoised() >= 4);
    let nodes = p.len();
    p.forget_partial_derivatives();
    assert_eq!(p.partial_derivatives_memoised(), 0);
    assert_eq!((p.diff(e, x), p.diff(e, y)), (dx, dy));
    // the total derivatives' memo is kept, and no node was added
    assert_eq!(p.dt(e), dt);
    assert_eq!(p.len(), nodes);
}

#[test]
fn partial_derivatives_skip_the_nodes_free_of_the_variable() {
    // f = x·s + sin(y)·s and g = s·y + x with s a sum free of x and y:
    // ∂f/∂x = s and ∂g/∂x = 1 come out although the nodes of s (shared by
    // both) are not differentiated, and ∂f/∂y = cos(y)·s; a partial
    // derivative builds only the nodes of its result.
    let mut p = ExprPool::new();
    let (x, y) = (p.var(0, 0), p.var(1, 0));
    let mut s = p.var(2, 0);
    for k in 3..200u32 {
        let z = p.var(k, 0);
        let c = p.func(Func::Cos, z);
        s = p.add(s, c);
    }
    let xs = p.mul(x, s);
    let sy = p.func(Func::Sin, y);
    let sys = p.mul(sy, s);
    let f = p.add(xs, sys);
    let g0 = p.mul(s, y);
    let g = p.add(g0, x);
    let before = p.len();
    assert_eq!(p.diff(f, x), s);
    assert_eq!(p.len(), before + 2, "only the constants 0 and 1 are new");
    let dg = p.diff(g, x);
    assert_eq!(p.as_constant(dg), Some(1.0));
    let dfy = p.diff(f, y);
    let cy = p.func(Func::Cos, y);
    assert_eq!(dfy, p.mul(cy, s));
    let free = p.diff(s, x);
    assert_eq!(p.as_constant(free), Some(0.0));
}

#[test]
fn sums_and_products_of_two_or_more_operands_print_differentiate_and_evaluate() {
    // Two operands are stored inline in the node's record, more in the
    // pool's operand array: both read back as the same operand lists.
    let mut p = ExprPool::new();
    let n = names();
    let (x, y) = (p.var(0, 0), p.var(1, 0));
    let k = p.param(ParamId(0));
    let two_sum = p.add(x, y);
    let ky = p.mul(k, y);
    let three = p.constant(3.0);
    let many_sum = p.sum(&[x, ky, three]);
    let two_prod = p.mul(x, y);
    let many_prod = p.product(&[three, x, y, k]);
    let other_many = p.sum(&[y, two_prod, k]);
    assert_eq!(
        p.node(many_sum).children().collect::<Vec<_>>(),
        [three, x, ky]
    );
    assert_eq!(
        p.node(other_many).children().collect::<Vec<_>>(),
        [y, k, two_prod]
    );
    assert_eq!(
        p.node(many_prod).children().collect::<Vec<_>>(),
        [three, x, y, k]
    );
    assert_eq!(to_modelica(&p, two_sum, &n), "x + y");
    assert_eq!(to_modelica(&p, many_sum, &n), "m * y + x + 3");
    assert_eq!(to_modelica(&p, two_prod, &n), "x * y");
    assert_eq!(to_modelica(&p, many_prod, &n), "3 * m * x * y");
    assert_eq!(to_modelica(&p, other_many, &n), "m + x * y + y");
    // Values at x = 0.5, y = 1.5, m = 2.
    let at = env(0.5, 1.5);
    assert_eq!(p.eval(two_sum, &at), 2.0);
    assert_eq!(p.eval(many_sum, &at), 6.5);
    assert_eq!(p.eval(two_prod, &at), 0.75);
    assert_eq!(p.eval(many_prod, &at), 4.5);
    assert_eq!(p.eval(other_many, &at), 4.25);
    // Partial and time derivatives.
    let d = p.diff(many_prod, x);
    assert_eq!(p.eval(d, &at), 9.0);
    let d = p.diff(many_sum, y);
    assert_eq!(p.eval(d, &at), 2.0);
    let d = p.dt(many_sum);
    // ẋ + m·ẏ with ẋ = 0.7, ẏ = -1.1
    assert!((p.eval(d, &at) - (0.7 - 2.2)).abs() < 1e-15);
    // Interning finds the stored nodes again from fresh operand lists.
    let len = p.len();
    assert_eq!(p.sum(&[ky, three, x]), many_sum);
    assert_eq!(p.product(&[k, y, x, three]), many_prod);
    assert_eq!(p.add(y, x), two_sum);
    assert_eq!(p.len(), len);
}
