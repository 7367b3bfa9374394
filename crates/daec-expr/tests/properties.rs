//! Property tests on random expressions at random points: canonicalisation
//! preserves values, `diff` agrees with central finite differences, `dt`
//! agrees with the chain rule written out by hand, tape evaluation equals
//! direct evaluation, and printing Modelica then re-reading it (with the
//! test parser of `common`) gives the same id.

mod common;

use common::{Parser, TestEnv, TestNames, VecNames};
use daec_expr::{
    CmpOp, ExprId, ExprPool, Func, Func2, Leaf, ParamId, Tape, apply_cmp, apply_func, apply_func2,
    to_modelica, to_rust,
};
use proptest::prelude::*;

/// A random expression, built both into a pool and evaluated naively.
#[derive(Clone, Debug)]
enum Recipe {
    Var(u32, u32),
    Param(u32),
    Time,
    Const(f64),
    Add(Box<Recipe>, Box<Recipe>),
    Sub(Box<Recipe>, Box<Recipe>),
    Mul(Box<Recipe>, Box<Recipe>),
    Div(Box<Recipe>, Box<Recipe>),
    Neg(Box<Recipe>),
    Powi(Box<Recipe>, i32),
    Pow(Box<Recipe>, Box<Recipe>),
    Func(Func, Box<Recipe>),
    Func2(Func2, Box<Recipe>, Box<Recipe>),
    Select(CmpOp, Box<Recipe>, Box<Recipe>, Box<Recipe>, Box<Recipe>),
}

const SMOOTH: [Func; 13] = [
    Func::Sin,
    Func::Cos,
    Func::Tan,
    Func::Asin,
    Func::Acos,
    Func::Atan,
    Func::Sinh,
    Func::Cosh,
    Func::Tanh,
    Func::Exp,
    Func::Log,
    Func::Log10,
    Func::Sqrt,
];
const KINKED: [Func; 4] = [Func::Abs, Func::Sign, Func::Floor, Func::Ceil];

fn recipe() -> impl Strategy<Value = Recipe> {
    let leaf = prop_oneof![
        4 => (0u32..3, 0u32..2).prop_map(|(j, k)| Recipe::Var(j, k)),
        1 => (0u32..2).prop_map(Recipe::Param),
        1 => Just(Recipe::Time),
        2 => prop_oneof![(-3i32..4).prop_map(f64::from), -2.5f64..2.5].prop_map(Recipe::Const),
    ];
    leaf.prop_recursive(5, 40, 3, |inner| {
        let b = || inner.clone().prop_map(Box::new);
        prop_oneof![
            3 => (b(), b()).prop_map(|(a, c)| Recipe::Add(a, c)),
            2 => (b(), b()).prop_map(|(a, c)| Recipe::Sub(a, c)),
            3 => (b(), b()).prop_map(|(a, c)| Recipe::Mul(a, c)),
            1 => (b(), b()).prop_map(|(a, c)| Recipe::Div(a, c)),
            1 => b().prop_map(Recipe::Neg),
            2 => (b(), -3i32..5).prop_map(|(a, n)| Recipe::Powi(a, n)),
            1 => (b(), b()).prop_map(|(a, c)| Recipe::Pow(a, c)),
            3 => (b(), 0usize..13).prop_map(|(a, f)| Recipe::Func(SMOOTH[f], a)),
            1 => (b(), 0usize..4).prop_map(|(a, f)| Recipe::Func(KINKED[f], a)),
            1 => (b(), b(), 0usize..3).prop_map(|(a, c, f)| {
                Recipe::Func2([Func2::Atan2, Func2::Min, Func2::Max][f], a, c)
            }),
            1 => (b(), b(), b(), b(), 0usize..4).prop_map(|(a, c, t, e, o)| {
                Recipe::Select([CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge][o], a, c, t, e)
            }),
        ]
    })
}

fn build(p: &mut ExprPool, r: &Recipe) -> ExprId {
    match r {
        Recipe::Var(j, k) => p.var(*j, *k),
        Recipe::Param(k) => p.param(ParamId(*k)),
        Recipe::Time => p.time(),
        Recipe::Const(c) => p.constant(*c),
        Recipe::Add(a, b) => {
            let (a, b) = (build(p, a), build(p, b));
            p.add(a, b)
        }
        Recipe::Sub(a, b) => {
            let (a, b) = (build(p, a), build(p, b));
            p.sub(a, b)
        }
        Recipe::Mul(a, b) => {
            let (a, b) = (build(p, a), build(p, b));
            p.mul(a, b)
        }
        Recipe::Div(a, b) => {
            let (a, b) = (build(p, a), build(p, b));
            p.div(a, b)
        }
        Recipe::Neg(a) => {
            let a = build(p, a);
            p.neg(a)
        }
        Recipe::Powi(a, n) => {
            let a = build(p, a);
            p.powi(a, *n)
        }
        Recipe::Pow(a, b) => {
            let (a, b) = (build(p, a), build(p, b));
            p.pow(a, b)
        }
        Recipe::Func(f, a) => {
            let a = build(p, a);
            p.func(*f, a)
        }
        Recipe::Func2(f, a, b) => {
            let (a, b) = (build(p, a), build(p, b));
            p.func2(*f, a, b)
        }
        Recipe::Select(op, a, b, t, e) => {
            let (a, b, t, e) = (build(p, a), build(p, b), build(p, t), build(p, e));
            let c = p.cmp(*op, a, b);
            p.select(c, t, e)
        }
    }
}

/// Builds `r` in `p` and in `q`, differentiates it in `p` leaf by leaf
/// (`diff`) and in `q` in one walk (`diff_many`, the leaves in reverse
/// order with `reverse`): the derivatives are the same ids and the pools
/// grow by the same nodes in the same order.
fn diff_many_matches_diff(
    p: &mut ExprPool,
    q: &mut ExprPool,
    r: &Recipe,
    reverse: bool,
) -> Result<(), TestCaseError> {
    let (e, f) = (build(p, r), build(q, r));
    prop_assert_eq!(e, f);
    let mut leaves = p.leaves(e);
    if reverse {
        leaves.reverse();
    }
    let one: Vec<ExprId> = leaves.iter().map(|&l| p.diff(e, l)).collect();
    let many = q.diff_many(f, &leaves);
    prop_assert_eq!(&one, &many);
    prop_assert_eq!(p.len(), q.len());
    // (node by node, constants by their bits)
    prop_assert_eq!(p.encode(&one), q.encode(&many));
    Ok(())
}

/// Naive evaluation of the recipe: (value, largest intermediate magnitude,
/// smallest distance of any kink/jump argument to its discontinuity; 0
/// when an operand is NaN: IEEE hides some, as pow(1, NaN) = 1, from the
/// value but not from the derivative).
fn naive(r: &Recipe, env: &TestEnv) -> (f64, f64, f64) {
    use daec_expr::Env;
    let leafv = |v: f64| (v, v.abs(), f64::INFINITY);
    let nan = |x: f64, k: f64| if x.is_nan() { 0.0 } else { k };
    let un = |a: (f64, f64, f64), v: f64, kink: f64| (v, a.1.max(v.abs()), nan(a.0, a.2.min(kink)));
    let bin = |a: (f64, f64, f64), b: (f64, f64, f64), v: f64, kink: f64| {
        let k = nan(a.0, nan(b.0, a.2.min(b.2).min(kink)));
        (v, a.1.max(b.1).max(v.abs()), k)
    };
    match r {
        Recipe::Var(j, k) => leafv(env.var(*j, *k)),
        Recipe::Param(k) => leafv(env.param(ParamId(*k))),
        Recipe::Time => leafv(env.time()),
        Recipe::Const(c) => leafv(*c),
        Recipe::Add(a, b) => {
            let (x, y) = (naive(a, env), naive(b, env));
            bin(x, y, x.0 + y.0, f64::INFINITY)
        }
        Recipe::Sub(a, b) => {
            let (x, y) = (naive(a, env), naive(b, env));
            bin(x, y, x.0 - y.0, f64::INFINITY)
        }
        Recipe::Mul(a, b) => {
            let (x, y) = (naive(a, env), naive(b, env));
            bin(x, y, x.0 * y.0, f64::INFINITY)
        }
        Recipe::Div(a, b) => {
            let (x, y) = (naive(a, env), naive(b, env));
            bin(x, y, x.0 / y.0, y.0.abs())
        }
        Recipe::Neg(a) => {
            let x = naive(a, env);
            un(x, -x.0, f64::INFINITY)
        }
        Recipe::Powi(a, n) => {
            let x = naive(a, env);
            let kink = if *n < 0 { x.0.abs() } else { f64::INFINITY };
            un(x, x.0.powi(*n), kink)
        }
        Recipe::Pow(a, b) => {
            let (x, y) = (naive(a, env), naive(b, env));
            // Negative bases are only defined for (locally constant) integer
            // exponents, where the symbolic derivative is NaN: excluded.
            let kink = if x.0 > 0.0 { x.0 } else { 0.0 };
            bin(x, y, x.0.powf(y.0), kink)
        }
        Recipe::Func(f, a) => {
            let x = naive(a, env);
            let v = x.0;
            let kink = match f {
                Func::Abs | Func::Sign | Func::Sqrt | Func::Log | Func::Log10 => v.abs(),
                // a jump is crossed by a probe of the argument's size
                // times its sensitivity, which grows with its magnitude
                // (floor(x^-3) at x = 0.011 steps over ~10 integers per
                // 1e-6 of x): the distance relative to the argument's scale
                Func::Floor | Func::Ceil => (v - v.round()).abs() / x.1.max(1.0),
                Func::Asin | Func::Acos => (1.0 - v.abs()).abs(),
                Func::Tan => (v.cos()).abs(),
                _ => f64::INFINITY,
            };
            un(x, apply_func(*f, v), kink)
        }
        Recipe::Func2(f, a, b) => {
            let (x, y) = (naive(a, env), naive(b, env));
            let kink = match f {
                // atan2(a, b) jumps by 2π across b < 0, a = ±0 (and is
                // singular at the origin): a canonical form may turn
                // `0·x` into `-0`, so the distance to that cut is the kink.
                Func2::Atan2 if y.0 < 0.0 => x.0.abs(),
                Func2::Atan2 => x.0.abs() + y.0.abs(),
                _ => (x.0 - y.0).abs(),
            };
            bin(x, y, apply_func2(*f, x.0, y.0), kink)
        }
        Recipe::Select(op, a, b, t, e) => {
            let (x, y) = (naive(a, env), naive(b, env));
            let (tv, ev) = (naive(t, env), naive(e, env));
            let c = apply_cmp(*op, x.0, y.0);
            let v = if c != 0.0 { tv.0 } else { ev.0 };
            let kink = (x.0 - y.0).abs();
            let m = x.1.max(y.1).max(tv.1).max(ev.1).max(v.abs());
            (v, m, x.2.min(y.2).min(tv.2).min(ev.2).min(kink))
        }
    }
}

fn point() -> impl Strategy<Value = TestEnv> {
    (
        proptest::collection::vec(proptest::collection::vec(-2.0f64..2.0, 3), 3),
        proptest::collection::vec(0.5f64..2.0, 2),
        -1.0f64..1.0,
    )
        .prop_map(|(vars, params, t)| TestEnv { vars, params, t })
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Central difference of `e` in the leaf `leaf` at `env` with step h.
fn central(p: &ExprPool, e: ExprId, leaf: Leaf, env: &TestEnv, h: f64) -> f64 {
    let shifted = |delta: f64| {
        let mut env2 = TestEnv {
            vars: env.vars.clone(),
            params: env.params.clone(),
            t: env.t,
        };
        match leaf {
            Leaf::Var { unknown, order } => env2.vars[unknown as usize][order as usize] += delta,
            Leaf::Param(k) => env2.params[k.0 as usize] += delta,
            Leaf::Time => env2.t += delta,
        }
        p.eval(e, &env2)
    };
    (shifted(h) - shifted(-h)) / (2.0 * h)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn canonicalisation_preserves_value(r in recipe(), env in point()) {
        let mut p = ExprPool::new();
        let e = build(&mut p, &r);
        let (reference, scale, kink) = naive(&r, &env);
        prop_assume!(reference.is_finite() && scale < 1e8 && kink > 1e-6);
        let got = p.eval(e, &env);
        prop_assert!(
            (got - reference).abs() <= 1e-9 * (1.0 + scale),
            "{got} vs {reference} (scale {scale})"
        );
    }

    #[test]
    fn diff_agrees_with_central_differences(r in recipe(), env in point()) {
        let mut p = ExprPool::new();
        let e = build(&mut p, &r);
        let (reference, scale, kink) = naive(&r, &env);
        prop_assume!(reference.is_finite() && scale < 1e6 && kink > 1e-3);
        for leaf in p.leaves(e) {
            let l = p.as_leaf(leaf).expect("a leaf");
            let d = p.diff(e, leaf);
            let dv = p.eval(d, &env);
            let h = 1e-6;
            let (fd1, fd2) = (central(&p, e, l, &env, h), central(&p, e, l, &env, h / 2.0));
            // Only assert where the finite difference itself has converged.
            if fd1.is_finite() && fd2.is_finite() && (fd1 - fd2).abs() <= 1e-5 * (1.0 + fd1.abs()) {
                prop_assert!(
                    (dv - fd2).abs() <= 1e-4 * (1.0 + fd2.abs()),
                    "d/d{l:?}: symbolic {dv} vs finite difference {fd2}"
                );
            }
        }
    }

    #[test]
    fn substitute_rebuilds_what_replace_nodes_rebuilds(
        r in recipe(),
        v in recipe(),
        replaced in proptest::collection::vec((0u32..3, 0u32..2), 1..3),
    ) {
        // the same expression in two pools: one substituted by the walk
        // over the nodes above the replaced leaves, the other by
        // `replace_nodes` over every node; the results are the same ids
        // and the pools grow by the same nodes in the same order
        let (mut p, mut q) = (ExprPool::new(), ExprPool::new());
        let (e, f) = (build(&mut p, &r), build(&mut q, &r));
        let (a, b) = (build(&mut p, &v), build(&mut q, &v));
        prop_assert_eq!((e, a), (f, b));
        let leaves: Vec<ExprId> = replaced.iter().map(|&(j, k)| p.var(j, k)).collect();
        for &(j, k) in &replaced {
            q.var(j, k);
        }
        let by_leaf = |l: ExprId| leaves.contains(&l).then_some(a);
        let walked = p.substitute(e, &by_leaf);
        let all = q.replace_nodes(
            &[f],
            &|pool, id| match pool.as_leaf(id) {
                Some(_) => by_leaf(id),
                None => None,
            },
            &|_, _| false,
        )[0];
        prop_assert_eq!(walked, all);
        prop_assert_eq!(p.len(), q.len());
        prop_assert_eq!(p.encode(&[walked]), q.encode(&[all]));
    }

    #[test]
    fn linear_in_splits_into_free_coefficients_and_rest(r in recipe(), env in point()) {
        // e = Σ coef_k · leaf_k + rest at any point, with the coefficients
        // and the rest free of the leaves; a leaf that does not occur has
        // coefficient 0
        let mut p = ExprPool::new();
        let e = build(&mut p, &r);
        let set = [p.var(0, 1), p.var(2, 0), p.var(1, 1)];
        if let Some((coefs, rest)) = p.linear_in(e, &set) {
            prop_assert_eq!(coefs.len(), set.len());
            let present = p.leaves(e);
            let mut value = p.eval(rest, &env);
            let mut scale = 1.0 + value.abs();
            for (&c, &l) in coefs.iter().zip(&set) {
                let free = p.leaves(c);
                prop_assert!(set.iter().all(|s| !free.contains(s)));
                if !present.contains(&l) {
                    prop_assert_eq!(p.as_constant(c), Some(0.0));
                }
                let term = p.eval(c, &env) * p.eval(l, &env);
                value += term;
                scale += term.abs();
            }
            prop_assert!(p.leaves(rest).iter().all(|l| !set.contains(l)));
            let expected = p.eval(e, &env);
            if expected.is_finite() && value.is_finite() {
                scale += expected.abs();
                prop_assert!((value - expected).abs() <= 1e-9 * scale, "{} vs {}", value, expected);
            }
        }
    }

    #[test]
    fn diff_many_gives_the_ids_and_nodes_of_diff(r in recipe()) {
        // the same expression in two pools: one differentiated leaf by
        // leaf, the other in one walk; the derivatives are the same ids
        // and the pools grow by the same nodes in the same order
        let (mut p, mut q) = (ExprPool::new(), ExprPool::new());
        diff_many_matches_diff(&mut p, &mut q, &r, true)?;
    }

    #[test]
    fn leaves_are_the_leaf_nodes_of_the_topological_order(r in recipe()) {
        // the walk over the leaves (which takes leaves and constants
        // without stacking them) finds every leaf node `e` depends on
        let mut p = ExprPool::new();
        let e = build(&mut p, &r);
        let expected: Vec<ExprId> = p
            .topo_order(&[e])
            .into_iter()
            .filter(|&id| p.as_leaf(id).is_some())
            .collect();
        prop_assert_eq!(p.leaves(e), expected);
    }

    #[test]
    fn diff_many_after_another_walk_gives_the_ids_of_diff(r in recipe(), s in recipe()) {
        // two expressions differentiated one after the other in the same
        // pools: the walk's work arrays, kept between calls, hold the
        // first walk's entries when the second starts; each derivative is
        // the id `diff` gives, and the pools grow alike
        let (mut p, mut q) = (ExprPool::new(), ExprPool::new());
        for recipe in [&r, &s] {
            diff_many_matches_diff(&mut p, &mut q, recipe, false)?;
        }
    }

    #[test]
    fn neg_and_scale_by_minus_one_build_the_node_of_the_product_by_minus_one(
        r in recipe(),
        k in prop::sample::select(vec![-1.0, 1.0, 2.0, -3.0, 0.5]),
    ) {
        // the same expression, times k, in three pools: negated by `neg`,
        // by `scale(-1, ·)` and by the product with the constant -1; the
        // ids and the pools' nodes are the same
        let mut pools = [ExprPool::new(), ExprPool::new(), ExprPool::new()];
        let mut negated = Vec::new();
        for (i, p) in pools.iter_mut().enumerate() {
            let e = build(p, &r);
            let e = p.scale(k, e);
            let m1 = p.constant(-1.0);
            negated.push(match i {
                0 => p.neg(e),
                1 => p.scale(-1.0, e),
                _ => p.product(&[m1, e]),
            });
        }
        prop_assert_eq!(negated[0], negated[2]);
        prop_assert_eq!(negated[1], negated[2]);
        prop_assert!(pools[0].same_nodes(&pools[2]));
        prop_assert!(pools[1].same_nodes(&pools[2]));
    }

    #[test]
    fn dt_equals_the_chain_rule(r in recipe(), env in point()) {
        let mut p = ExprPool::new();
        let e = build(&mut p, &r);
        let (reference, scale, kink) = naive(&r, &env);
        prop_assume!(reference.is_finite() && scale < 1e6 && kink > 1e-6);
        let total = p.dt(e);
        // d/dt e = Σ ∂e/∂z_j^(k) · z_j^(k+1) + ∂e/∂t
        let mut terms = Vec::new();
        for leaf in p.leaves(e) {
            let d = p.diff(e, leaf);
            match p.as_leaf(leaf) {
                Some(Leaf::Var { unknown, order }) => {
                    let next = p.var(unknown, order + 1);
                    terms.push(p.mul(d, next));
                }
                Some(Leaf::Time) => terms.push(d),
                _ => {}
            }
        }
        let chain = p.sum(&terms);
        let (a, b) = (p.eval(total, &env), p.eval(chain, &env));
        prop_assert!(a.to_bits() == b.to_bits() || (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs())),
            "dt {a} vs chain rule {b}");
    }

    #[test]
    fn tape_equals_direct_evaluation(r in recipe(), env in point()) {
        let mut p = ExprPool::new();
        let e = build(&mut p, &r);
        let x0 = p.var(0, 0);
        let d = p.diff(e, x0);
        let inputs: Vec<ExprId> = (0..3).flat_map(|j| (0..3).map(move |k| (j, k)))
            .map(|(j, k)| p.var(j, k))
            .collect();
        let tape = Tape::compile(&p, &[e, d], &inputs).expect("compiles");
        let vals: Vec<f64> = (0..3).flat_map(|j| (0..3).map(move |k| (j, k)))
            .map(|(j, k)| env.vars[j][k])
            .collect();
        let mut out = [0.0; 2];
        let mut scratch = Vec::new();
        tape.eval(env.t, &vals, &env.params, &mut out, &mut scratch);
        // The frame path (parameters and parameter-only instructions
        // evaluated once, inputs given in two pieces) twice in a row.
        let mut frame = tape.frame(&env.params);
        let mut framed = [[0.0; 2]; 2];
        for o in framed.iter_mut() {
            tape.eval_frame(&mut frame, env.t, &[&vals[..4], &vals[4..]], o);
        }
        for (k, root) in [e, d].into_iter().enumerate() {
            let direct = p.eval(root, &env);
            for v in [out[k], framed[0][k], framed[1][k]] {
                prop_assert!(
                    v.to_bits() == direct.to_bits() || (v.is_nan() && direct.is_nan()),
                    "root {k}: tape {v} vs direct {direct}"
                );
            }
        }
        // Three points in one pass (the Radau stages): each lane as the
        // direct evaluation at its own point.
        let envs: Vec<TestEnv> = [(1.0, 0.0), (-0.5, 1.0), (0.75, -2.5)]
            .iter()
            .map(|&(f, dt)| TestEnv {
                vars: env.vars.iter().map(|v| v.iter().map(|x| f * x).collect()).collect(),
                params: env.params.clone(),
                t: env.t + dt,
            })
            .collect();
        let lane_vals: Vec<Vec<f64>> = envs
            .iter()
            .map(|e| (0..3).flat_map(|j| (0..3).map(move |k| (j, k))).map(|(j, k)| e.vars[j][k]).collect())
            .collect();
        let mut lanes = tape.lanes::<3>(&env.params);
        let mut lane_out = [[0.0; 2]; 3];
        {
            let [o0, o1, o2] = &mut lane_out;
            let parts = [
                [&lane_vals[0][..4], &lane_vals[1][..4], &lane_vals[2][..4]],
                [&lane_vals[0][4..], &lane_vals[1][4..], &lane_vals[2][4..]],
            ];
            tape.eval_lanes(&mut lanes, [envs[0].t, envs[1].t, envs[2].t], &parts, [o0, o1, o2]);
        }
        for (l, e_l) in envs.iter().enumerate() {
            for (k, root) in [e, d].into_iter().enumerate() {
                let direct = p.eval(root, e_l);
                let v = lane_out[l][k];
                prop_assert!(
                    v.to_bits() == direct.to_bits() || (v.is_nan() && direct.is_nan()),
                    "lane {l}, root {k}: tape {v} vs direct {direct}"
                );
            }
        }
    }

    #[test]
    fn modelica_printing_rereads_to_the_same_id(r in recipe()) {
        let mut p = ExprPool::new();
        let e = build(&mut p, &r);
        let names = TestNames { unknowns: vec!["x", "y", "z"], params: vec!["a", "b"] };
        let text = to_modelica(&p, e, &names);
        let back = Parser::parse(&mut p, &text, &names);
        prop_assert_eq!(back, Ok(e), "printed: {}", text);
    }

    #[test]
    fn rust_emission_is_well_formed(r in recipe()) {
        let mut p = ExprPool::new();
        let e = build(&mut p, &r);
        let x0 = p.var(0, 0);
        let d = p.diff(e, x0);
        let (lets, roots) = to_rust(&p, &[e, d], &VecNames);
        prop_assert_eq!(roots.len(), 2);
        for s in lets.iter().chain(&roots) {
            let open = s.matches('(').count();
            let close = s.matches(')').count();
            prop_assert_eq!(open, close, "unbalanced: {}", s);
            prop_assert!(!s.is_empty());
        }
        for (k, l) in lets.iter().enumerate() {
            let prefix = format!("let s{k} = ");
            prop_assert!(l.starts_with(&prefix) && l.ends_with(';'), "{}", l);
        }
    }
}

#[test]
fn diff_many_by_more_than_64_leaves_repeated_and_absent_ones_gives_the_ids_of_diff() {
    // Σ_k x_k·y_k + sin(x_0·y_0) over 40 pairs: 80 leaves, more than one
    // word of the walk's leaf bits; the list repeats x_0, names a leaf the
    // expression lacks and the non-leaf node x_1·y_1
    let build = |p: &mut ExprPool| {
        let mut terms = Vec::new();
        for k in 0..40 {
            let (x, y) = (p.var(k, 0), p.var(40 + k, 0));
            terms.push(p.mul(x, y));
        }
        let s = p.func(Func::Sin, terms[0]);
        terms.push(s);
        (p.sum(&terms), terms[1])
    };
    let (mut p, mut q) = (ExprPool::new(), ExprPool::new());
    let ((e, pair), (f, _)) = (build(&mut p), build(&mut q));
    let mut wrt: Vec<ExprId> = (0..80).rev().map(|k| p.var(k, 0)).collect();
    for k in 0..80 {
        q.var(k, 0);
    }
    let absent = p.var(99, 1);
    q.var(99, 1);
    wrt.insert(70, wrt[79]);
    wrt.push(absent);
    wrt.push(pair);
    assert_eq!(wrt.len(), 83);
    let one: Vec<ExprId> = wrt.iter().map(|&l| p.diff(e, l)).collect();
    let many = q.diff_many(f, &wrt);
    assert_eq!(one, many);
    assert_eq!(p.len(), q.len());
    assert_eq!(p.encode(&one), q.encode(&many));
    // ∂/∂x_0 = y_0 + cos(x_0·y_0)·y_0, not zero; the absent leaf's is 0
    // (x_0 is at 70 and 80)
    assert!(p.as_constant(one[80]).is_none());
    assert_eq!(one[80], one[70]);
    assert_ne!(one[80], one[79]);
    assert_eq!(p.as_constant(one[81]), Some(0.0));
    assert_eq!(p.as_constant(one[82]), Some(1.0));
}

#[test]
fn neg_of_products_builds_the_product_by_minus_one() {
    // products with and without a coefficient, a coefficient -1 (whose
    // negation drops it), one whose reciprocal of a constant stays, and a
    // power; each negated by `neg` and by the product with -1 in two
    // pools
    let cases: [fn(&mut ExprPool) -> ExprId; 6] = [
        |p| {
            let (x, y) = (p.var(0, 0), p.var(1, 0));
            p.mul(x, y)
        },
        |p| {
            let (x, y) = (p.var(0, 0), p.var(1, 0));
            let xy = p.mul(x, y);
            p.neg(xy)
        },
        |p| {
            let x = p.var(0, 0);
            p.neg(x)
        },
        |p| {
            let (x, three) = (p.var(0, 0), p.constant(3.0));
            let x3 = p.div(x, three);
            p.scale(2.0, x3)
        },
        |p| {
            let (x, y) = (p.var(0, 0), p.var(1, 1));
            let x2 = p.powi(x, 2);
            let t = p.mul(x2, y);
            p.scale(-2.5, t)
        },
        |p| {
            let (l, d) = (p.var(6, 0), p.var(4, 0));
            let m2 = p.constant(-2.0);
            p.product(&[m2, l, d])
        },
    ];
    for (i, case) in cases.iter().enumerate() {
        let (mut p, mut q) = (ExprPool::new(), ExprPool::new());
        let (e, f) = (case(&mut p), case(&mut q));
        let m1 = q.constant(-1.0);
        let (a, b) = (p.neg(e), q.product(&[m1, f]));
        assert_eq!(a, b, "case {i}");
        assert!(p.same_nodes(&q), "case {i}");
        // and negating twice gives the expression back
        assert_eq!(p.neg(a), e, "case {i}");
    }
}
