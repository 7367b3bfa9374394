//! Tape compilation and evaluation, deep expressions and undefined values.

mod common;

use common::TestEnv;
use daec_expr::{CmpOp, ExprId, ExprPool, Func, Func2, ParamId, Tape, TapeError};

#[test]
fn tape_matches_direct_evaluation_on_the_pendulum_jacobian() {
    let mut p = ExprPool::new();
    let (x, y, lam) = (p.var(0, 0), p.var(1, 0), p.var(4, 0));
    let (m, g) = (p.param(ParamId(0)), p.param(ParamId(1)));
    let wd = p.var(3, 1);
    let two = p.constant(2.0);
    let mwd = p.mul(m, wd);
    let yl = p.product(&[two, y, lam]);
    let mg = p.mul(m, g);
    let f4 = p.sum(&[mwd, yl, mg]);
    let inputs: Vec<ExprId> = vec![x, y, lam, wd];
    let mut roots = vec![f4];
    for &v in &inputs {
        roots.push(p.diff(f4, v));
    }
    let tape = Tape::compile(&p, &roots, &inputs).expect("compiles");
    assert_eq!(tape.n_outputs(), 5);
    assert_eq!(tape.n_inputs(), 4);
    let vals = [0.6, -0.8, 3.0, 0.25];
    let params = [2.0, 9.81];
    let mut out = [0.0; 5];
    let mut scratch = Vec::new();
    tape.eval(0.0, &vals, &params, &mut out, &mut scratch);
    // F4 = m ẇ + 2 y λ + m g
    let f4v = 2.0 * 0.25 + 2.0 * -0.8 * 3.0 + 2.0 * 9.81;
    assert!((out[0] - f4v).abs() < 1e-12);
    assert_eq!(&out[1..], &[0.0, 6.0, -1.6, 2.0]);
    let env = TestEnv {
        vars: vec![vec![0.6], vec![-0.8], vec![], vec![0.0, 0.25], vec![3.0]],
        params: params.to_vec(),
        t: 0.0,
    };
    for (k, &r) in roots.iter().enumerate() {
        assert_eq!(out[k].to_bits(), p.eval(r, &env).to_bits(), "root {k}");
    }
    // The scratch buffer is reused, not regrown.
    let cap = scratch.capacity();
    tape.eval(0.0, &vals, &params, &mut out, &mut scratch);
    assert_eq!(scratch.capacity(), cap);
    assert_eq!(scratch.len(), tape.n_slots());
}

#[test]
fn shared_subexpressions_are_compiled_once() {
    let mut p = ExprPool::new();
    let x = p.var(0, 0);
    let s = p.func(Func::Sin, x);
    let a = p.mul(s, x);
    let b = p.add(s, x);
    let tape = Tape::compile(&p, &[a, b, s], &[x]).expect("compiles");
    // sin x, sin x · x, sin x + x (the input x needs no instruction)
    assert_eq!(tape.len(), 3);
    // x, time, and the three instructions
    assert_eq!(tape.n_slots(), 5);
}

#[test]
fn parameter_only_instructions_run_once_per_frame() {
    // r = k2/K · x·y + (4·k1)·x  (k1, k2, K parameters)
    let mut p = ExprPool::new();
    let (x, y) = (p.var(0, 0), p.var(1, 0));
    let (k1, k2, kk) = (
        p.param(ParamId(0)),
        p.param(ParamId(1)),
        p.param(ParamId(2)),
    );
    let inv_k = p.powi(kk, -1);
    let four = p.constant(4.0);
    let rate = p.product(&[k2, inv_k]);
    let xy = p.mul(x, y);
    let a = p.mul(rate, xy);
    let c = p.mul(four, k1);
    let b = p.mul(c, x);
    let r = p.add(a, b);
    let tape = Tape::compile(&p, &[r, rate], &[x, y]).expect("compiles");
    // 1/K and k2·(1/K) depend on parameters only: hoisted out of the
    // per-call instructions (4·k1·x is one product of the canonical form).
    assert_eq!(tape.len() - tape.len_per_call(), 2, "{tape:?}");
    assert_eq!(tape.len_per_call(), 3, "{tape:?}");
    let params = [18.7, 0.58, 34.4];
    let mut frame = tape.frame(&params);
    let env = TestEnv {
        vars: vec![vec![0.444], vec![0.007]],
        params: params.to_vec(),
        t: 0.0,
    };
    let mut out = [0.0; 2];
    for xs in [[0.444, 0.007], [0.3, -2.0]] {
        tape.eval_frame(&mut frame, 0.0, &[&xs], &mut out);
        let env = TestEnv {
            vars: vec![vec![xs[0]], vec![xs[1]]],
            ..env.clone()
        };
        assert_eq!(out[0].to_bits(), p.eval(r, &env).to_bits());
        // a hoisted value as an output
        assert_eq!(out[1], 0.58 / 34.4);
    }
    assert!(!tape.is_constant());
    // parameter-only outputs are constant; an input as an output is not
    let params_only = Tape::compile(&p, &[rate, four, k1], &[x, y]).expect("compiles");
    assert!(params_only.is_constant());
    assert_eq!(params_only.len_per_call(), 0);
    let leaf_out = Tape::compile(&p, &[rate, y], &[x, y]).expect("compiles");
    assert!(!leaf_out.is_constant());
    // missing inputs read as NaN; a frame of another tape is refused
    tape.eval_frame(&mut frame, 0.0, &[&[1.0]], &mut out);
    assert!(out[0].is_nan());
    let other = Tape::compile(&p, &[x], &[x]).expect("compiles");
    let mut out2 = [7.0];
    other.eval_frame(&mut frame, 0.0, &[&[1.0]], &mut out2);
    assert_eq!(out2, [7.0]);
}

#[test]
fn powi_is_the_library_powi_bit_for_bit() {
    // `daec_expr::powi` replaces the `__powidf2` call of `f64::powi` (a
    // runtime exponent) with the same multiplications.
    let xs = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.444,
        -0.007,
        3.7,
        1e-3,
        1e150,
        -2e-160,
        7.5e307,
        f64::MIN_POSITIVE,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ];
    for &x in &xs {
        for n in -12..=12 {
            let n = std::hint::black_box(n);
            let (a, b) = (daec_expr::powi(x, n), x.powi(n));
            assert!(
                a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                "{x}^{n}: {a} vs {b}"
            );
        }
    }
    assert_eq!(daec_expr::powi(2.0, 31).to_bits(), 2f64.powi(31).to_bits());
    assert_eq!(daec_expr::powi(2.0, i32::MIN), 0.0);
}

#[test]
fn lanes_refuse_a_frame_of_another_tape() {
    let mut p = ExprPool::new();
    let (x, y) = (p.var(0, 0), p.var(1, 0));
    let s = p.add(x, y);
    let sq = p.powi(s, 4);
    let tape = Tape::compile(&p, &[sq, x], &[x, y]).expect("compiles");
    let other = Tape::compile(&p, &[x], &[x]).expect("compiles");
    let mut lanes = other.lanes::<2>(&[]);
    let (mut a, mut b) = ([7.0; 2], [7.0; 2]);
    let (p0, p1) = ([1.0, 2.0], [3.0, 4.0]);
    tape.eval_lanes(&mut lanes, [0.0; 2], &[[&p0, &p1]], [&mut a, &mut b]);
    assert_eq!((a, b), ([7.0; 2], [7.0; 2]));
    // its own frame: (x + y)^4 and x per lane; a short input reads NaN
    let mut lanes = tape.lanes::<2>(&[]);
    tape.eval_lanes(&mut lanes, [0.0; 2], &[[&p0, &p1]], [&mut a, &mut b]);
    assert_eq!((a, b), ([81.0, 1.0], [2401.0, 3.0]));
    tape.eval_lanes(&mut lanes, [0.0; 2], &[[&p0, &p1[..1]]], [&mut a, &mut b]);
    assert_eq!(a, [81.0, 1.0]);
    assert!(b[0].is_nan());
    assert_eq!(b[1], 3.0);
}

#[test]
fn compile_errors() {
    let mut p = ExprPool::new();
    let (x, y) = (p.var(0, 0), p.var(1, 0));
    let e = p.add(x, y);
    assert_eq!(
        Tape::compile(&p, &[e], &[x]).unwrap_err(),
        TapeError::MissingInput(y)
    );
    assert_eq!(
        Tape::compile(&p, &[e], &[x, e]).unwrap_err(),
        TapeError::InputNotLeaf(e)
    );
    assert_eq!(
        Tape::compile(&p, &[e], &[x, x]).unwrap_err(),
        TapeError::DuplicateInput(x)
    );
    assert_eq!(
        TapeError::MissingInput(y).to_string(),
        format!(
            "expression node {} is a variable that is not an input",
            y.index()
        )
    );
}

#[test]
fn time_and_parameters_can_be_inputs_or_implicit() {
    let mut p = ExprPool::new();
    let (t, k) = (p.time(), p.param(ParamId(1)));
    let e = p.mul(t, k);
    let implicit = Tape::compile(&p, &[e], &[]).expect("compiles");
    let mut out = [0.0];
    let mut s = Vec::new();
    implicit.eval(3.0, &[], &[100.0, 5.0], &mut out, &mut s);
    assert_eq!(out[0], 15.0);
    let explicit = Tape::compile(&p, &[e], &[t, k]).expect("compiles");
    explicit.eval(3.0, &[2.0, 7.0], &[], &mut out, &mut s);
    assert_eq!(out[0], 14.0);
    // Missing parameter values read as NaN instead of panicking.
    implicit.eval(3.0, &[], &[], &mut out, &mut s);
    assert!(out[0].is_nan());
}

#[test]
fn undefined_math_gives_nan_or_inf() {
    let mut p = ExprPool::new();
    let x = p.var(0, 0);
    let lg = p.func(Func::Log, x);
    let inv = p.powi(x, -1);
    let sq = p.func(Func::Sqrt, x);
    let ac = p.func(Func::Acos, x);
    let half = p.constant(0.5);
    let pw = p.pow(x, half);
    let roots = [lg, inv, sq, ac, pw];
    let tape = Tape::compile(&p, &roots, &[x]).expect("compiles");
    let mut out = [0.0; 5];
    let mut s = Vec::new();
    tape.eval(0.0, &[-2.0], &[], &mut out, &mut s);
    assert!(out[0].is_nan() && out[2].is_nan() && out[3].is_nan() && out[4].is_nan());
    assert_eq!(out[1], -0.5);
    tape.eval(0.0, &[0.0], &[], &mut out, &mut s);
    assert_eq!(out[0], f64::NEG_INFINITY);
    assert_eq!(out[1], f64::INFINITY);
}

#[test]
fn logical_and_piecewise_ops_evaluate() {
    let mut p = ExprPool::new();
    let (x, y) = (p.var(0, 0), p.var(1, 0));
    let lt = p.cmp(CmpOp::Lt, x, y);
    let ne = p.cmp(CmpOp::Ne, x, y);
    let both = p.and(lt, ne);
    let either = p.or(lt, ne);
    let not = p.not(lt);
    let mn = p.func2(Func2::Min, x, y);
    let mx = p.func2(Func2::Max, x, y);
    let at = p.func2(Func2::Atan2, y, x);
    let sg = p.func(Func::Sign, x);
    let sel = p.select(lt, x, y);
    let roots = [both, either, not, mn, mx, at, sg, sel];
    let tape = Tape::compile(&p, &roots, &[x, y]).expect("compiles");
    let mut out = [0.0; 8];
    let mut s = Vec::new();
    tape.eval(0.0, &[-1.0, 2.0], &[], &mut out, &mut s);
    assert_eq!(
        &out,
        &[1.0, 1.0, 0.0, -1.0, 2.0, 2.0_f64.atan2(-1.0), -1.0, -1.0]
    );
    tape.eval(0.0, &[f64::NAN, 2.0], &[], &mut out, &mut s);
    assert!(out[3].is_nan() && out[4].is_nan() && out[6].is_nan());
}

#[test]
fn million_deep_chain_does_not_overflow_the_stack() {
    // e_{k+1} = sin(e_k) + x, 10^6 levels deep.
    const DEPTH: usize = 1_000_000;
    let mut p = ExprPool::new();
    let x = p.var(0, 0);
    let mut e = x;
    for _ in 0..DEPTH {
        let s = p.func(Func::Sin, e);
        e = p.add(s, x);
    }
    let env = TestEnv {
        vars: vec![vec![0.5, 1.0]],
        params: vec![],
        t: 0.0,
    };
    let mut reference = 0.5_f64;
    for _ in 0..DEPTH {
        reference = reference.sin() + 0.5;
    }
    let direct = p.eval(e, &env);
    assert_eq!(direct, reference);
    let tape = Tape::compile(&p, &[e], &[x]).expect("compiles");
    let mut out = [0.0];
    let mut s = Vec::new();
    tape.eval(0.0, &[0.5], &[], &mut out, &mut s);
    assert_eq!(out[0], reference);
    assert_eq!(p.max_orders(e), vec![(0, 0)]);
    assert_eq!(p.leaves(e), vec![x]);
    let d = p.dt(e);
    assert_eq!(p.max_orders(d), vec![(0, 1)]);
    let dx = p.diff(e, x);
    assert!(p.eval(dx, &env).is_finite());
    let y = p.var(1, 0);
    let sub = p.substitute(e, &|l| (l == x).then_some(y));
    assert_eq!(p.leaves(sub), vec![y]);
    assert!(p.linear_in(e, &[x]).is_none());
}
