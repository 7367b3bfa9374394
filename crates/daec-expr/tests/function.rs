//! Functions evaluated at run time: the interpreter, the forward-mode
//! derivative, calls in the pool (evaluation, tapes, derivatives).

use daec_expr::{
    CallError, Callee, CmpOp, DerivativeAnnotation, ExprPool, Func, Function, MAX_CALL_ITERATIONS,
    MAX_DERIVATIVE_ORDER, Stmt, Tape,
};

/// `y = sqrt(x)` by Newton's iteration to a relative tolerance: a `while`
/// on run-time values.
fn newton_sqrt() -> Function {
    let mut p = ExprPool::new();
    let (x, y, d) = (p.var(0, 0), p.var(1, 0), p.var(2, 0));
    let one = p.constant(1.0);
    let c = p.cmp(CmpOp::Gt, x, one);
    let y0 = p.select(c, x, one);
    let y2 = p.powi(y, 2);
    let num = p.sub(y2, x);
    let two_y = p.scale(2.0, y);
    let step = p.div(num, two_y);
    let y_next = p.sub(y, d);
    let ad = p.func(Func::Abs, d);
    let tol = p.scale(1e-15, y);
    let cond = p.cmp(CmpOp::Gt, ad, tol);
    let body = vec![
        Stmt::Assign(1, y0),
        Stmt::Assign(2, one),
        Stmt::While {
            condition: cond,
            body: vec![Stmt::Assign(2, step), Stmt::Assign(1, y_next)],
        },
    ];
    Function::new(
        "newtonSqrt".into(),
        vec!["x".into(), "y".into(), "d".into()],
        1,
        vec![1],
        p,
        body,
    )
    .expect("a function")
}

#[test]
fn interpreter_runs_a_newton_iteration() {
    let f = newton_sqrt();
    for x in [0.25, 1.0, 2.0, 9.0, 1e6] {
        let y = f.call(&[x]).unwrap()[0];
        assert!((y - x.sqrt()).abs() <= 1e-15 * x.sqrt(), "{x}: {y}");
    }
}

#[test]
fn forward_derivatives_match_closed_forms() {
    let f = newton_sqrt();
    let d1 = f.forward_derivative().unwrap();
    assert_eq!(d1.order, 1);
    assert_eq!(d1.n_inputs, 2);
    let d2 = d1.forward_derivative().unwrap();
    assert_eq!(d2.n_inputs, 4);
    // Not x = 1, where the first guess is the root: one Newton step there
    // has the exact first derivative but not the second (forward mode
    // differentiates the iterations run, griewank2008 §15.1).
    for x in [0.25, 2.0, 9.0, 1e4] {
        let dy = d1.call(&[x, 1.0]).unwrap()[0];
        assert!((dy - 0.5 / x.sqrt()).abs() < 1e-12, "{x}: {dy}");
        // d/dx of d1(x, 1) = -1/4 x^(-3/2)
        let ddy = d2.call(&[x, 1.0, 1.0, 0.0]).unwrap()[0];
        assert!((ddy + 0.25 * x.powf(-1.5)).abs() < 1e-10, "{x}: {ddy}");
    }
}

/// `y = newtonSqrt(x)` in a pool, with `x` the unknown 0.
fn pool_with_call(annotated: bool) -> (ExprPool, daec_expr::ExprId) {
    let mut pool = ExprPool::new();
    let mut f = newton_sqrt();
    if annotated {
        // d/dt sqrt(x) = ẋ / (2 sqrt x), written with the built-in.
        let mut p = ExprPool::new();
        let (x, dx) = (p.var(0, 0), p.var(1, 0));
        let s = p.func(Func::Sqrt, x);
        let q = p.div(dx, s);
        let e = p.scale(0.5, q);
        let der = Function::new(
            "newtonSqrt_der".into(),
            vec!["x".into(), "der_x".into(), "der_y".into()],
            2,
            vec![2],
            p,
            vec![Stmt::Assign(2, e)],
        )
        .unwrap();
        let id = pool.add_function(der).unwrap();
        f.derivative = Some(DerivativeAnnotation {
            function: id,
            differentiated: vec![true],
        });
    }
    let id = pool.add_function(f).unwrap();
    let x = pool.var(0, 0);
    let call = pool.call(Callee::new(id, 0).unwrap(), &[x]);
    (pool, call)
}

struct At(f64, f64);

impl daec_expr::Env for At {
    fn var(&self, _: u32, order: u32) -> f64 {
        if order == 0 { self.0 } else { self.1 }
    }
    fn param(&self, _: daec_expr::ParamId) -> f64 {
        f64::NAN
    }
    fn time(&self) -> f64 {
        0.0
    }
}

#[test]
fn calls_evaluate_differentiate_and_compile() {
    for annotated in [false, true] {
        let (mut pool, call) = pool_with_call(annotated);
        assert!(pool.has_calls());
        // A call on constants folds to its value.
        let c = pool.constant(6.25);
        let id = daec_expr::FuncId(u32::from(annotated));
        let folded = pool.call(Callee::new(id, 0).unwrap(), &[c]);
        assert_eq!(pool.as_constant(folded), Some(2.5));
        assert_eq!(pool.eval(call, &At(9.0, 0.0)), 3.0);
        let dt = pool.dt(call);
        let x = pool.var(0, 0);
        let dx = pool.diff(call, x);
        let ddt = pool.dt(dt);
        // d/dt sqrt(x) = ẋ/(2√x); d²/dt² = ẍ/(2√x) − ẋ²/(4 x^{3/2})
        let (xv, xd) = (9.0_f64, 2.0);
        let env = At(xv, xd);
        let want_dt = xd / (2.0 * xv.sqrt());
        let want_ddt = xd / (2.0 * xv.sqrt()) - xd * xd / (4.0 * xv.powf(1.5));
        assert!((pool.eval(dt, &env) - want_dt).abs() < 1e-14);
        assert!((pool.eval(dx, &env) - 1.0 / 6.0).abs() < 1e-14);
        assert!((pool.eval(ddt, &env) - want_ddt).abs() < 1e-12);
        // The tape of the same roots agrees with the direct evaluation.
        let inputs = [pool.var(0, 0), pool.var(0, 1), pool.var(0, 2)];
        let tape = Tape::compile(&pool, &[call, dt, ddt], &inputs).unwrap();
        let mut out = [0.0; 3];
        tape.eval(0.0, &[xv, xd, xd], &[], &mut out, &mut Vec::new());
        assert_eq!(out[0], 3.0);
        assert_eq!(out[1], pool.eval(dt, &env));
        assert!((out[2] - want_ddt).abs() < 1e-12);
        assert_eq!(pool.derivative_limit(), None);
        assert!(daec_expr::to_modelica(&pool, dt, &Named).contains("newtonSqrt"));
    }
}

struct Named;

impl daec_expr::Names for Named {
    fn unknown(&self, j: u32) -> String {
        format!("x{j}")
    }
    fn param(&self, p: daec_expr::ParamId) -> String {
        format!("p{}", p.0)
    }
}

#[test]
fn derivatives_beyond_the_supported_order_are_reported() {
    let (mut pool, call) = pool_with_call(false);
    let mut e = call;
    for _ in 0..MAX_DERIVATIVE_ORDER {
        e = pool.dt(e);
    }
    assert_eq!(pool.derivative_limit(), None);
    let beyond = pool.dt(e);
    assert!(pool.as_constant(beyond).is_some_and(f64::is_nan));
    assert_eq!(
        pool.derivative_limit().map(|f| pool.function(f).order),
        Some(MAX_DERIVATIVE_ORDER)
    );
}

#[test]
fn a_loop_that_does_not_end_is_an_error() {
    let mut p = ExprPool::new();
    let (x, y) = (p.var(0, 0), p.var(1, 0));
    let zero = p.constant(0.0);
    let cond = p.cmp(CmpOp::Ge, x, zero);
    let y1 = p.add(y, x);
    let f = Function::new(
        "forever".into(),
        vec!["x".into(), "y".into()],
        1,
        vec![1],
        p,
        vec![
            Stmt::Assign(1, zero),
            Stmt::While {
                condition: cond,
                body: vec![Stmt::Assign(1, y1)],
            },
        ],
    )
    .unwrap();
    assert_eq!(f.call(&[-1.0]), Ok(vec![0.0]));
    let err = f.call(&[1.0]).unwrap_err();
    assert!(matches!(err, CallError::IterationLimit { limit, .. } if limit == MAX_CALL_ITERATIONS));
    assert!(err.to_string().contains("`forever`"));
    assert_eq!(f.failure(), Some(err));
}
