//! `daec analyze`: the Σ-method's numbers for the papers' models, the
//! hidden constraints checked against the papers' formulas, the
//! linear-combination conversion, and the text reports pinned.

mod common;

use common::{daec, expectations, snapshot_name, valid_models};
use daec::diag::SourceMap;
use daec::expr::{Env, ExprId, ParamId};
use daec::model::{Dae, LowerOptions};
use daec::regularize::{Analysis, AnalyzeOptions, analyze};

fn load_with(path: &str, overrides: &[(&str, f64)]) -> Dae {
    let text = std::fs::read_to_string(common::root().join(path)).unwrap();
    let mut map = SourceMap::new();
    let file = map.add(path, text);
    let parsed = daec::syntax::parse(file, map.source(file));
    assert!(
        parsed.diagnostics.is_empty(),
        "{path}: {:?}",
        parsed.diagnostics
    );
    let options = LowerOptions {
        overrides: overrides.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        ..LowerOptions::default()
    };
    let (dae, diags) = daec::model::lower(parsed.model.as_ref().unwrap(), &options);
    assert!(diags.iter().all(|d| !d.is_error()), "{path}: {diags:?}");
    dae.unwrap()
}

fn load(path: &str) -> (Dae, Analysis) {
    let mut dae = load_with(path, &[]);
    let a = analyze(&mut dae, &AnalyzeOptions::default());
    (dae, a)
}

/// A point: unknown values by index, parameters, time.
struct At<'a> {
    z: &'a [f64],
    p: &'a [f64],
    t: f64,
}

impl Env for At<'_> {
    fn var(&self, unknown: u32, order: u32) -> f64 {
        assert_eq!(order, 0, "a constraint must not contain derivatives");
        self.z[unknown as usize]
    }
    fn param(&self, p: ParamId) -> f64 {
        self.p[p.0 as usize]
    }
    fn time(&self) -> f64 {
        self.t
    }
}

/// Asserts that `expr` is a non-zero constant multiple of `reference` on
/// pseudo-random points (what "the constraint equals (11a)" means for
/// residuals, whose scaling and sign are free).
fn assert_proportional(
    dae: &Dae,
    expr: ExprId,
    reference: impl Fn(&[f64], f64) -> f64,
    what: &str,
) {
    let p = dae.parameter_values();
    let n = dae.unknowns.len();
    let mut ratio: Option<f64> = None;
    let mut seed = 12345u64;
    for _ in 0..20 {
        let z: Vec<f64> = (0..n)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((seed >> 11) as f64 / (1u64 << 53) as f64) * 4.0 - 2.0
            })
            .collect();
        let t = z[0] * 0.37 + 0.1;
        let got = dae.pool.eval(expr, &At { z: &z, p: &p, t });
        let want = reference(&z, t);
        if want.abs() < 1e-6 {
            continue;
        }
        let r = got / want;
        match ratio {
            None => {
                assert!(r.abs() > 1e-12, "{what}: zero multiple");
                ratio = Some(r);
            }
            Some(r0) => assert!(
                (r - r0).abs() < 1e-9 * r0.abs(),
                "{what}: ratio {r} vs {r0}"
            ),
        }
    }
    assert!(ratio.is_some(), "{what}: reference vanished everywhere");
}

fn constraints_by_level(dae: &Dae, a: &Analysis) -> Vec<(u32, ExprId)> {
    let _ = dae;
    let reg = a.regular().expect("regular");
    reg.constraints
        .as_ref()
        .expect("constraints")
        .constraints
        .iter()
        .map(|c| (c.level, c.expr))
        .collect()
}

#[test]
fn steinbrecher_pendulum_example_2_7() {
    let (dae, a) = load("models/steinbrecher/pendulum.dae");
    let reg = a.regular().unwrap();
    assert_eq!(reg.sigma.offsets.c, [1, 1, 0, 0, 2]);
    assert_eq!(reg.sigma.offsets.d, [2, 2, 1, 1, 0]);
    assert_eq!(a.index(), Some(3));
    assert_eq!(reg.sigma.dof, 2);
    // The two HVTs of the paper: T1 = {(1,3),(2,2),(3,5),(4,4),(5,1)},
    // T2 = {(1,1),(2,4),(3,3),(4,5),(5,2)} (1-based, unknowns x y v w λ).
    let mut hvts = reg.hvts.hvts.clone();
    hvts.sort();
    assert_eq!(hvts, vec![vec![0, 3, 2, 4, 1], vec![2, 1, 4, 3, 0]]);
    // det 𝔍 = −4 m ℓ² at the consistent point (m = ℓ = 1).
    let det = reg.success.determinant.unwrap();
    assert!((det + 4.0).abs() < 1e-12, "det {det}");
    assert!(reg.success.succeeded());
    // Hidden constraints (10e), (11a), (11b), one per level.
    let h = constraints_by_level(&dae, &a);
    assert_eq!(h.iter().map(|c| c.0).collect::<Vec<_>>(), [0, 1, 2]);
    let (m, l, g) = (1.0, 1.0, 13.750_371_637_329_454);
    assert_proportional(
        &dae,
        h[0].1,
        |z, _| z[0] * z[0] + z[1] * z[1] - l * l,
        "(10e)",
    );
    assert_proportional(
        &dae,
        h[1].1,
        |z, _| 2.0 * z[0] * z[2] + 2.0 * z[1] * z[3],
        "(11a)",
    );
    assert_proportional(
        &dae,
        h[2].1,
        |z, _| {
            let (x, y, v, w, lam) = (z[0], z[1], z[2], z[3], z[4]);
            2.0 * v * v + 2.0 * w * w - 4.0 / m * (x * x + y * y) * lam - 2.0 * g * y
        },
        "(11b)",
    );
    // Pantelides differentiates exactly c times (Pryce 2001, Thm. 5.8).
    assert_eq!(
        reg.pantelides.as_ref().unwrap().differentiations,
        reg.sigma.offsets.c
    );
}

#[test]
fn pendulum_determinant_scales_with_m_and_l() {
    // det 𝔍 = −4 m (x² + y²) = −4 m ℓ² at any consistent point.
    let mut dae = load_with(
        "models/steinbrecher/pendulum.dae",
        &[("m", 2.0), ("l", 3.0)],
    );
    let a = analyze(&mut dae, &AnalyzeOptions::default());
    let reg = a.regular().unwrap();
    let p = reg.success.point.as_ref().unwrap();
    assert!(p.converged, "{p:?}");
    let (x, y) = (p.z[0], p.z[1]);
    assert!((x * x + y * y - 9.0).abs() < 1e-9);
    let det = reg.success.determinant.unwrap();
    assert!((det + 72.0).abs() < 1e-9, "det {det}");
}

#[test]
fn large_models_get_the_sparse_success_check() {
    // 200 links: 1400 unknowns, above the dense check's 800.
    let mut dae = load_with("models/scale/pendulum_chain.dae", &[("N", 200.0)]);
    let a = analyze(&mut dae, &AnalyzeOptions::default());
    let reg = a.regular().unwrap();
    let s = &reg.success;
    assert!(s.skipped.is_none(), "{:?}", s.skipped);
    let p = s.point.as_ref().unwrap();
    assert!(p.converged && p.residual < 1e-8, "{p:?}");
    assert!(s.succeeded() && !s.singular());
    assert_eq!((s.rank, s.order), (Some(1400), Some(1400)));
    assert!(s.determinant.is_none() && s.jacobian.is_none());
    // with the sparse check limited below the model's size: skipped, with
    // the reason
    let opts = AnalyzeOptions {
        sparse_success_check_max_unknowns: 1000,
        ..AnalyzeOptions::default()
    };
    let mut dae = load_with("models/scale/pendulum_chain.dae", &[("N", 200.0)]);
    let a = analyze(&mut dae, &opts);
    let s = &a.regular().unwrap().success;
    assert!(s.point.is_none() && !s.succeeded());
    let why = s.skipped.as_deref().unwrap();
    assert!(
        why.contains("at most 1000 unknowns (this model has 1400)"),
        "{why}"
    );
}

#[test]
fn the_consistent_point_builds_no_derivative_expressions() {
    // The Gauss–Newton Jacobian of the success check's projection comes
    // from reverse-mode sweeps over the constraints, not from symbolic
    // partial derivatives: the expression pool does not grow beyond what
    // the analysis builds without the check (the pendulum chain's initial
    // equations have no derivatives to substitute).
    let pool_len = |opts: &AnalyzeOptions| {
        let mut dae = load_with("models/scale/pendulum_chain.dae", &[("N", 200.0)]);
        let a = analyze(&mut dae, opts);
        let s = &a.regular().unwrap().success;
        (dae.pool.len(), s.point.as_ref().map(|p| p.iterations))
    };
    let (checked, iterations) = pool_len(&AnalyzeOptions::default());
    let (skipped, none) = pool_len(&AnalyzeOptions {
        sparse_success_check_max_unknowns: 1000,
        ..AnalyzeOptions::default()
    });
    assert_eq!(none, None);
    // the start values violate the initial equations: the projection iterates
    assert!(iterations.is_some_and(|i| i >= 1), "{iterations:?}");
    assert_eq!(checked, skipped);
}

#[test]
fn the_block_check_decides_large_blocks_by_sparse_lu() {
    // 200 links (1400 unknowns) with the dense check and the dense blocks
    // limited to 10 unknowns: the chain's large blocks go to the sparse LU
    let opts = AnalyzeOptions {
        success_check_max_unknowns: 10,
        dense_block_max: 10,
        ..AnalyzeOptions::default()
    };
    let mut dae = load_with("models/scale/pendulum_chain.dae", &[("N", 200.0)]);
    let a = analyze(&mut dae, &opts);
    let reg = a.regular().unwrap();
    let s = &reg.success;
    assert!(s.skipped.is_none() && s.succeeded(), "{s:?}");
    let b = s.blocks.as_ref().unwrap();
    assert_eq!(b.blocks, reg.sigma.fine_btf.len());
    assert_eq!(b.largest, reg.sigma.fine_btf.max_block_size());
    assert!(b.sparse_blocks >= 1 && b.largest > 10, "{b:?}");
    assert_eq!((b.rank, s.rank, s.order), (1400, Some(1400), Some(1400)));
    assert!(b.singular_block.is_none());
}

/// A ring of `N` algebraic unknowns whose Σ-Jacobian is numerically
/// singular at every point (the last row is `−(1 + x²)` times the sum of
/// the others) while Σ has a transversal: one irreducible block of `N`.
fn singular_ring(n: usize) -> String {
    format!(
        "model SingularRing\n  parameter Integer N = {n};\n  Real x(start = 1);\n  Real y[N](each start = 0);\nequation\n  der(x) = 0;\n  for k in 1:N - 1 loop\n    y[k] - y[k + 1] = 0;\n  end for;\n  (1 + x^2)*(y[N] - y[1]) = 0;\nend SingularRing;\n"
    )
}

#[test]
fn a_singular_sigma_jacobian_above_the_old_sparse_limit_is_diagnosed() {
    // 25 001 unknowns: above the 20 000 up to which the success check used
    // to be performed
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-ring-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ring.dae");
    std::fs::write(&path, singular_ring(25_000)).unwrap();
    let r = daec(&["analyze", path.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stderr
            .contains("the Σ-Jacobian is singular at the consistent point (rank 25000 of 25001)"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains(
            "the first singular diagonal block of 𝔍 (fine BTF, in solution order) holds 25000 equations: F2, F3,"
        ),
        "{}",
        r.stderr
    );
}

#[test]
fn the_block_check_of_the_spring_chain_above_the_old_sparse_limit() {
    // 12 500 masses: 25 001 unknowns, checked with the defaults
    let r = daec(&["analyze", "models/scale/spring_chain.dae", "-p", "N=12500"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stdout.contains("not performed"), "{}", r.stdout);
    assert!(
        r.stdout.contains(
            "𝔍 nonsingular at the consistent point (rank 25001 of 25001), checked block by block on the fine BTF"
        ),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("the Σ-method succeeds: the model is structurally regular"),
        "{}",
        r.stdout
    );
    assert!(!r.stderr.contains("warning"), "{}", r.stderr);
}

#[test]
fn steinbrecher_spring_chain_example_2_8() {
    let (dae, a) = load("models/steinbrecher/spring_chain.dae");
    let reg = a.regular().unwrap();
    assert_eq!(reg.sigma.offsets.c, [1, 3, 1, 0, 2, 0, 4]);
    assert_eq!(reg.sigma.offsets.d, [2, 4, 2, 1, 3, 1, 0]);
    assert_eq!(a.index(), Some(5));
    assert_eq!(reg.sigma.dof, 2);
    assert_eq!(reg.sigma.n_derivative_array, 18);
    // det 𝔍 = 2cm (c = 1/6, m = 1).
    let det = reg.success.determinant.unwrap();
    assert!((det.abs() - 2.0 / 6.0).abs() < 1e-12, "det {det}");
    // (16g) and the hidden constraints (17a)–(17d), levels 0..4.
    let h = constraints_by_level(&dae, &a);
    assert_eq!(h.iter().map(|c| c.0).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
    let (m, c) = (1.0, 1.0 / 6.0);
    // z = (p1, p2, p3, v1, v2, v3, F)
    assert_proportional(&dae, h[0].1, |z, t| z[1] - t.sin(), "(16g)");
    assert_proportional(&dae, h[1].1, |z, t| z[4] - t.cos(), "(17a)");
    assert_proportional(
        &dae,
        h[2].1,
        |z, t| c / m * (z[0] - z[1]) - c / m * (z[1] - z[2]) + t.sin(),
        "(17b)",
    );
    assert_proportional(
        &dae,
        h[3].1,
        |z, t| c / m * (z[3] - z[4]) - c / m * (z[4] - z[5]) + t.cos(),
        "(17c)",
    );
    assert_proportional(
        &dae,
        h[4].1,
        |z, t| {
            c / (m * m) * (-3.0 * c * (z[0] - z[1]) + 3.0 * c * (z[1] - z[2]) + 2.0 * z[6])
                - t.sin()
        },
        "(17d)",
    );
}

#[test]
fn baese_cv_loop_circuit_level_one_constraint() {
    let (dae, a) = load("models/baese/cv_loop_circuit.dae");
    let h = constraints_by_level(&dae, &a);
    let level1: Vec<_> = h.iter().filter(|c| c.0 == 1).collect();
    assert_eq!(level1.len(), 1, "{h:?}");
    let names: Vec<String> = dae.unknowns.iter().map(|u| u.name().into_owned()).collect();
    let ix = |n: &str| names.iter().position(|x| *x == n).unwrap();
    let (e1, e2, iv) = (ix("e1"), ix("e2"), ix("iV"));
    assert_proportional(
        &dae,
        level1[0].1,
        |z, t| 2.0 * z[e1] + 2.0 * z[iv] + z[e2] + 100.0 * (100.0 * t).cos(),
        "2e1 + 2iV + e2 + 100cos(100t)",
    );
    let reg = a.regular().unwrap();
    assert_eq!(reg.sigma.dof, 1);
    assert!(reg.success.succeeded());
    // Consistent initialisation keeps iV(0) = −50 (catalogue B1).
    let p = reg.success.point.as_ref().unwrap();
    assert!((p.z[iv] + 50.0).abs() < 1e-9, "{:?}", p.z);
}

#[test]
fn ndsolve_index4_linear_system_is_index_4_not_2() {
    let (_, a) = load("models/ndsolve/index4_linear.dae");
    let before = a
        .before_conversion
        .as_ref()
        .expect("the Σ-method must fail first");
    let b = before.regular().unwrap();
    // Σ (and Pantelides) say 2 ...
    assert_eq!(b.sigma.structural_index, 2);
    assert_eq!(
        b.pantelides.as_ref().unwrap().differentiations,
        b.sigma.offsets.c
    );
    assert!(b.success.singular());
    // ... the converted model says 4.
    assert!(!a.conversions.is_empty());
    assert_eq!(a.index(), Some(4));
    assert!(a.regular().unwrap().success.succeeded());
    let r = daec(&[
        "analyze",
        "models/ndsolve/index4_linear.dae",
        "--format",
        "json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["index"], 4);
    assert_eq!(v["structural_index"], 2);
}

#[test]
fn ndsolve_cancellation_is_not_silently_index_1() {
    let (_, a) = load("models/ndsolve/cancellation.dae");
    let b = a.before_conversion.as_ref().unwrap().regular().unwrap();
    assert!(b.success.singular());
    assert_eq!(a.index(), Some(2));
    assert_eq!(a.regular().unwrap().sigma.dof, 0);
}

/// Writes `text` as a model file in a fresh temporary directory and runs
/// `daec analyze` on it with `args`.
fn analyze_text(tag: &str, text: &str, args: &[&str]) -> common::Run {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{tag}.dae"));
    std::fs::write(&path, text).unwrap();
    let mut all = vec!["analyze", path.to_str().unwrap()];
    all.extend_from_slice(args);
    let r = daec(&all);
    let _ = std::fs::remove_dir_all(&dir);
    r
}

#[test]
fn ndsolve_branch_y1_is_index_2_with_y_fixed_at_its_root() {
    // Catalogue N2 on y = 1 (NDSolve tutorial, "Index of a DAE"): the
    // Σ-Jacobian of the model as written is singular there (det =
    // −(y − 1)(2y − 1)); y(y − 1) = 0 holds y at the isolated root 1, and
    // the model reduced on that branch is index 2 with no free initial
    // values: x = sin t, z = cos t.
    let (_, a) = load("models/ndsolve/index_by_initial_values_branch1.dae");
    let before = a.before_fixing.as_ref().unwrap().regular().unwrap();
    assert!(before.success.singular());
    assert_eq!(before.success.rank, Some(2));
    assert_eq!(a.roots.fixed.len(), 1);
    let f = &a.roots.fixed[0];
    assert_eq!((f.equation, f.unknown, f.value), (1, 1, 1.0));
    assert!(a.roots.refused.is_empty());
    assert!(a.conversions.is_empty());
    assert_eq!(a.index(), Some(2));
    let reg = a.regular().unwrap();
    assert_eq!(reg.sigma.offsets.c, [0, 0, 1]);
    assert_eq!(reg.sigma.offsets.d, [1, 0, 0]);
    assert_eq!(reg.sigma.dof, 0, "no free initial values");
    assert!(reg.success.succeeded());
    // No initial value is free: start values off the solution are moved
    // onto x = sin 0 = 0, z = cos 0 = 1; a start of y near 1 selects the
    // root 1 exactly (Newton from the consistent point stopped at
    // 1.0000000000000004, which left 1 − y at −4e-16 and the model at
    // index 1 on a singular Σ-Jacobian).
    let (_, a) = load_with_starts(
        "models/ndsolve/index_by_initial_values_branch1.dae",
        &[
            ("x(start = 0)", "x(start = 0.3)"),
            ("y(start = 1)", "y(start = 0.9)"),
            ("z(start = 1)", "z(start = 2)"),
        ],
    );
    let p = a.regular().unwrap().success.point.clone().unwrap();
    assert!(p.converged);
    assert_eq!(a.index(), Some(2));
    assert_eq!(a.roots.fixed[0].value, 1.0);
    assert!(
        p.z[0].abs() < 1e-12 && (p.z[1] - 1.0).abs() < 1e-12 && (p.z[2] - 1.0).abs() < 1e-12,
        "{:?}",
        p.z
    );
    let r = daec(&[
        "analyze",
        "models/ndsolve/index_by_initial_values_branch1.dae",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("y is fixed at 1 by F2: `y * (y - 1) = 0` on this branch"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("Index: 2"), "{}", r.stdout);
    let j = daec(&[
        "analyze",
        "models/ndsolve/index_by_initial_values_branch1.dae",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&j.stdout).unwrap();
    assert_eq!(v["fixed_roots"]["fixed"][0]["unknown"], "y");
    assert_eq!(v["fixed_roots"]["fixed"][0]["value"], 1.0);
    assert_eq!(v["index"], 2);
    assert_eq!(v["dof"], 0);
    // `simulate` integrates the reduced model and says which branch it is
    // on (the values x = sin t, y = 1, z = cos t are the model's `exact`
    // lines, checked by tests/stated_results.rs).
    let s = daec(&[
        "simulate",
        "models/ndsolve/index_by_initial_values_branch1.dae",
    ]);
    assert_eq!(s.code, 0, "{}", s.stderr);
    assert!(
        s.stderr.contains("note: y is fixed at 1 by F2"),
        "{}",
        s.stderr
    );
}

/// The model at `path` with its text edited by `edits`, analysed.
fn load_with_starts(path: &str, edits: &[(&str, &str)]) -> (Dae, Analysis) {
    let mut text = std::fs::read_to_string(common::root().join(path)).unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "{from}");
        text = text.replace(from, to);
    }
    let mut map = SourceMap::new();
    let file = map.add(path, text);
    let parsed = daec::syntax::parse(file, map.source(file));
    let (dae, _) = daec::model::lower(parsed.model.as_ref().unwrap(), &LowerOptions::default());
    let mut dae = dae.unwrap();
    let a = analyze(&mut dae, &AnalyzeOptions::default());
    (dae, a)
}

/// A model whose branch is chosen by the start value of `y`:
/// `(y − 2)(y + 1) = 0` and `(2 − y)z + x = sin t`.
fn two_branches(y0: &str) -> String {
    format!(
        "model B\n  Real x(start = 0);\n  Real y(start = {y0});\n  Real z(start = 0);\nequation\n  der(x) = z;\n  (y - 2)*(y + 1) = 0;\n  (2 - y)*z + x = sin(time);\nend B;\n"
    )
}

#[test]
fn the_root_an_unknown_is_fixed_at_is_the_one_its_start_value_selects() {
    // y = −1: the Σ-Jacobian is regular (the z coefficient is 3), index 1,
    // nothing fixed.
    let r = analyze_text("branch-m1", &two_branches("-1"), &["--format", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["index"], 1);
    assert!(v.get("fixed_roots").is_none());
    // y = 2: the z coefficient vanishes, y is
    // fixed at 2 and the reduced model is x = sin t, index 2.
    let r = analyze_text("branch-2", &two_branches("2"), &["--format", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["index"], 2);
    assert_eq!(v["dof"], 0);
    assert_eq!(v["fixed_roots"]["fixed"][0]["value"], 2.0);
}

#[test]
fn an_equation_in_one_unknown_that_cannot_fix_it_is_explained() {
    // A double root: y = 1 is a root of (y − 1)² = 0 where the derivative
    // vanishes too, so it is not shown to be isolated.
    let double = "model D\n  Real x(start = 0);\n  Real y(start = 1);\n  Real z(start = 1);\nequation\n  der(x) = z;\n  (y - 1)^2 = 0;\n  (1 - y)*z + y*x = sin(time);\nend D;\n";
    let r = analyze_text("double-root", double, &[]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stderr.contains("error[E0202]"), "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "F2 is an equation in y alone, but y is not fixed at a root: its root 1 is not simple"
        ),
        "{}",
        r.stderr
    );
    // A root that moves with time is no constant.
    let moving = "model M\n  Real x(start = 0);\n  Real y(start = 0);\n  Real z(start = 1);\nequation\n  der(x) = z;\n  y*(y - time) = 0;\n  y*z + (1 - y)*x = sin(time);\nend M;\n";
    let r = analyze_text("moving-root", moving, &[]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stderr.contains("it depends on time"), "{}", r.stderr);
}

#[test]
fn second_order_models_are_analysed_natively() {
    let (dae, a) = load("models/wunderlich/circular_track.dae");
    let reg = a.regular().unwrap();
    assert_eq!(reg.sigma.offsets.c, [0, 0, 2]);
    assert_eq!(reg.sigma.offsets.d, [2, 2, 0]);
    assert_eq!(a.index(), Some(3));
    assert!(reg.success.succeeded());
    // The velocity constraint of a second-order DAE keeps y' (state).
    let h = constraints_by_level(&dae, &a);
    assert_eq!(h.iter().map(|c| c.0).collect::<Vec<_>>(), [0, 1, 2]);
}

#[test]
fn structurally_singular_model_names_the_parts() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-sing-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("sing.dae");
    std::fs::write(
        &path,
        "model S\n  Real x;\n  Real y;\n  Real z;\nequation\n  der(x) = y;\n  x = sin(time);\n  2*x = cos(time) + z - z;\nend S;\n",
    )
    .unwrap();
    let r = daec(&["analyze", path.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stderr
            .contains("error[E0201]: the model is structurally singular"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("over-determined part"), "{}", r.stderr);
    assert!(r.stderr.contains("under-determined part"), "{}", r.stderr);
    assert!(r.stderr.contains("`z`"), "{}", r.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn inconsistent_start_values_are_reported_with_the_residual() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-incons-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("p.dae");
    // Both x and y fixed far off the circle: no consistent point keeps them.
    std::fs::write(
        &path,
        "model P\n  Real x(start = 3, fixed = true);\n  Real y(start = 3, fixed = true);\n  Real v;\n  Real w;\n  Real lambda;\nequation\n  der(x) = v;\n  der(y) = w;\n  der(v) = -x*lambda;\n  der(w) = -y*lambda - 9.81;\n  x^2 + y^2 = 1;\nend P;\n",
    )
    .unwrap();
    let r = daec(&["analyze", path.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("the start values are far from consistent"),
        "{}",
        r.stderr
    );
    assert!(
        r.stdout
            .contains("NO consistent point near the start values: residual"),
        "{}",
        r.stdout
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Parses `[1,2,3]`.
fn list(v: &str) -> Vec<u32> {
    v.trim_matches(|c| c == '[' || c == ']')
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse().unwrap())
        .collect()
}

#[test]
fn every_model_meets_its_expect_line_and_is_pinned() {
    for model in valid_models() {
        let r = daec(&["analyze", &model, "--format", "json"]);
        let exp = expectations(&model);
        // Models documented as failing the Σ-method (`analyze=singular`)
        // must fail with a diagnostic, the others must succeed.
        if exp.iter().any(|(k, v)| k == "analyze" && v == "singular") {
            assert_eq!(
                r.code, 1,
                "{model} should be reported singular:\n{}",
                r.stdout
            );
            assert!(r.stderr.contains("error[E0202]"), "{model}: {}", r.stderr);
            assert_workspace_snapshot!(snapshot_name("analyze", &model), r.stderr);
            continue;
        }
        assert_eq!(r.code, 0, "{model}: exit {}\n{}", r.code, r.stderr);
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        // A model with an unknown fixed at a root (`fixed=y`) is reported
        // reduced; its expect line gives the structure as written.
        let written = &v["fixed_roots"]["as_written"];
        let fixed = exp.iter().any(|(k, _)| k == "fixed");
        assert_eq!(fixed, !written.is_null(), "{model}: fixed roots");
        let s = if fixed { written } else { &v };
        // m_c (steinbrecher2016, Def. 2.3; for models with second
        // derivatives, of their first-order form) counts the constraints
        // the hidden-constraint extraction finds: the second-order
        // pendulums had m_c = n + Σc − Σd = 1 with 3 found
        assert_eq!(
            v["n_constraints"].as_i64(),
            v["hidden_constraints"].as_array().map(|h| h.len() as i64),
            "{model}: m_c against the hidden constraints found"
        );
        let get = |k: &str| exp.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
        if let Some(c) = get("c") {
            let want = list(&c);
            let after = if fixed { &s["c"] } else { &v["offsets"]["c"] };
            if v["conversions"].as_array().unwrap().is_empty() {
                assert_eq!(
                    after
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|x| x.as_u64().unwrap() as u32)
                        .collect::<Vec<_>>(),
                    want,
                    "{model}: c"
                );
            }
        }
        if let Some(d) = get("d")
            && v["conversions"].as_array().unwrap().is_empty()
        {
            let want = list(&d);
            let got: Vec<u32> = (if fixed { &s["d"] } else { &v["offsets"]["d"] })
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap() as u32)
                .collect();
            assert_eq!(got, want, "{model}: d");
        }
        if let Some(i) = get("true_index").or_else(|| get("index")) {
            assert_eq!(
                v["index"].as_u64().unwrap(),
                i.parse::<u64>().unwrap(),
                "{model}: index"
            );
        }
        if let Some(i) = get("index") {
            assert_eq!(
                s["structural_index"].as_u64().unwrap(),
                i.parse::<u64>().unwrap(),
                "{model}: structural index"
            );
        }
        if let Some(dof) = get("dof")
            && v["conversions"].as_array().unwrap().is_empty()
        {
            assert_eq!(
                s["dof"].as_i64().unwrap(),
                dof.parse::<i64>().unwrap(),
                "{model}: dof"
            );
        }
        assert_eq!(v["pantelides"]["equals_c"], true, "{model}: Pantelides ≠ c");
        let text = daec(&["analyze", &model]);
        assert_eq!(text.code, 0);
        assert_workspace_snapshot!(snapshot_name("analyze", &model), text.stdout);
    }
}

#[test]
fn a_name_of_65536_characters_keys_the_sigma_table() {
    // A format width is a u16: a column as wide as the longest name
    // panicked ("Formatting argument out of range") from 65 535
    // characters on. Long names head their columns by number, with a key.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-long-name-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let long = "a".repeat(65_536);
    let model = dir.join("long.dae");
    std::fs::write(
        &model,
        format!(
            "model L\n  Real {long}(start = 1);\n  Real y;\nequation\n  der({long}) = -{long};\n  y = 2*{long};\nend L;\n"
        ),
    )
    .unwrap();
    let r = daec(&["analyze", model.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let table: Vec<&str> = r
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("Signature matrix Σ"))
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(table[1].trim_end(), "         z1    z2  |  c");
    assert_eq!(table[2].trim_end(), "   F1     1*    -  |  0");
    assert_eq!(table[3].trim_end(), "   F2     0     0* |  0");
    assert_eq!(table[4].trim_end(), "    d     1     0");
    assert_eq!(
        table[5],
        "(columns by number: a name is longer than 12 characters)"
    );
    assert_eq!(table[6], format!("  z1 = {long}"));
    assert_eq!(table[7], "  z2 = y");
    // short names head their own columns
    let r = daec(&["analyze", "models/steinbrecher/pendulum.dae"]);
    assert!(
        r.stdout
            .contains("       x        y        v        w   lambda  |  c"),
        "{}",
        r.stdout
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn size_limits_that_apply_are_recorded() {
    // the spring chain with 10 masses: 21 unknowns, above both limits
    let opts = AnalyzeOptions {
        constraints_max_unknowns: 20,
        sparse_success_check_max_unknowns: 15,
        ..AnalyzeOptions::default()
    };
    let mut dae = load_with("models/scale/spring_chain.dae", &[]);
    let a = analyze(&mut dae, &opts);
    let reg = a.regular().unwrap();
    assert!(reg.constraints.is_none() && reg.success.point.is_none());
    let seen: Vec<(&str, usize, usize)> = reg
        .limits
        .iter()
        .map(|l| (l.stage, l.limit, l.size))
        .collect();
    assert_eq!(
        seen,
        vec![("hidden constraints", 20, 21), ("success check", 15, 21)]
    );
    assert!(
        reg.limits[0]
            .what_was_skipped
            .contains("hidden constraints")
    );
    // within the limits: none
    let mut dae = load_with("models/scale/spring_chain.dae", &[]);
    let a = analyze(&mut dae, &AnalyzeOptions::default());
    assert!(a.regular().unwrap().limits.is_empty());
}
