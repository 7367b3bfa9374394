//! The pieces of the simulation pipeline on the papers' models.

use daec_diag::SourceMap;
use daec_model::{Dae, LowerOptions};
use daec_regularize::{AnalyzeOptions, analyze};
use daec_regularize::{Form, Refusal, UnknownKind};
use daec_sim::{
    BadOption, FailureCause, FormProblem, InitFailure, NativeError, Results, SimError, SimOptions,
    SimStats, Unsupported, hic_form, output_grid, prepare, reduce_to_first_order, resolve_options,
    simulate, to_csv,
};
use daec_sim::{discontinuities, time_conditions};
use daec_solve::{QuasiLinearDae, SolveError};

fn load_text(name: &str, text: &str) -> Dae {
    let mut map = SourceMap::new();
    let file = map.add(name, text.to_string());
    let parsed = daec_syntax::parse(file, map.source(file));
    let model = parsed.model.expect("parses");
    let (dae, diags) = daec_model::lower(&model, &LowerOptions::default());
    dae.unwrap_or_else(|| panic!("{name}: {diags:?}"))
}

/// `models/scale/pendulum_chain.dae` with `n` links.
fn pendulum_chain(n: usize) -> Dae {
    let full = format!(
        "{}/../../models/scale/pendulum_chain.dae",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(full).unwrap();
    let mut map = SourceMap::new();
    let file = map.add("pendulum_chain.dae", text);
    let parsed = daec_syntax::parse(file, map.source(file));
    let options = LowerOptions {
        overrides: vec![("N".to_string(), n as f64)],
        ..LowerOptions::default()
    };
    let (dae, diags) = daec_model::lower(parsed.model.as_ref().unwrap(), &options);
    dae.unwrap_or_else(|| panic!("{diags:?}"))
}

fn load(path: &str) -> Dae {
    let full = format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"));
    load_text(path, &std::fs::read_to_string(full).unwrap())
}

#[test]
fn hic_form_of_the_pendulum_has_four_differential_rows_and_three_levels() {
    // steinbrecher2016 (38): F1..F4 and the constraints (10e), (11a), (11b).
    let mut dae = load("models/steinbrecher/pendulum.dae");
    let analysis = analyze(&mut dae, &AnalyzeOptions::default());
    let form = hic_form(&mut dae, &analysis).unwrap();
    assert_eq!(form.n, 5);
    assert_eq!(form.diff.len(), 4);
    let levels: Vec<u32> = form.constraints.iter().map(|c| c.level).collect();
    assert_eq!(levels, [0, 1, 2]);
    assert_eq!(form.differential, [true, true, true, true, false]);
    assert_eq!(form.max_level(), Some(2));
    // E = diag(1, 1, m, m) on (x, y, v, w)
    let cols: Vec<Vec<usize>> = form
        .diff
        .iter()
        .map(|r| r.mass.iter().map(|m| m.0).collect())
        .collect();
    assert_eq!(cols, [vec![0], vec![1], vec![2], vec![3]]);

    let problem = {
        let params = dae.parameter_values();
        FormProblem::new(&mut dae.pool, &form, params).unwrap()
    };
    assert_eq!(
        (problem.n_vars(), problem.n_diff(), problem.n_constraints()),
        (5, 4, 3)
    );
    // at z = (1, 0, 0, 0, λ): level 2 is (d/dt)² of x² + y² − l² with the
    // accelerations inserted, 2(v² + w²) − (4/m)λ(x² + y²) − 2 g y = −2
    let z = [1.0, 0.0, 0.0, 0.0, 0.5];
    let mut g = [0.0; 3];
    problem.constraints(0.0, &z, &mut g);
    assert_eq!(g[0], 0.0);
    assert_eq!(g[1], 0.0);
    assert!((g[2] + 2.0).abs() < 1e-12, "{g:?}");
    // the differential residual E ż − k at ż = 0: (−v, −w, 2xλ, 2yλ + m g)
    let mut r = [0.0; 4];
    problem.diff_residual(0.0, &z, &[0.0; 5], &mut r);
    assert_eq!(r[..3], [0.0, 0.0, 1.0]);
    assert!((r[3] - 13.750371637329454).abs() < 1e-12);
    // level-0 constraint Jacobian row (2x, 2y, 0, 0, 0)
    let pattern = problem.constraint_jacobian_pattern();
    let mut vals = vec![0.0; pattern.len()];
    problem.constraint_jacobian_values(0.0, &z, &mut vals);
    let row0: Vec<(usize, f64)> = pattern
        .iter()
        .zip(&vals)
        .filter(|(p, _)| p.0 == 0)
        .map(|(p, v)| (p.1, *v))
        .collect();
    assert_eq!(row0, [(0, 2.0), (1, 0.0)]);
    assert_eq!(problem.constraint_residual_by_level(0.0, &z).len(), 3);
}

#[test]
fn dense_output_projection_restores_the_constraints() {
    let mut dae = load("models/steinbrecher/pendulum.dae");
    let analysis = analyze(&mut dae, &AnalyzeOptions::default());
    let form = hic_form(&mut dae, &analysis).unwrap();
    let problem = {
        let params = dae.parameter_values();
        FormProblem::new(&mut dae.pool, &form, params).unwrap()
    };
    // a dense-output-sized perturbation of a consistent point
    let mut z = [1.0005, 0.001, 0.001, -0.002, -0.0068];
    let r = problem.project_onto_constraints(0.0, &mut z);
    assert!(r < 1e-12, "residual {r:e}");
    assert!((z[0] * z[0] + z[1] * z[1] - 1.0).abs() < 1e-12);
    assert!((z[0] * z[2] + z[1] * z[3]).abs() < 1e-12);
    // a small correction (the least Euclidean change)
    let start = [1.0005, 0.001, 0.001, -0.002, -0.0068];
    let change: f64 = z
        .iter()
        .zip(start)
        .map(|(a, b)| (a - b).powi(2))
        .sum::<f64>()
        .sqrt();
    assert!(change < 0.01, "moved by {change}");
}

#[test]
fn second_order_models_are_reduced_to_first_order() {
    let mut dae = load("models/ndsolve/pendulum.dae");
    let n = dae.unknowns.len();
    let m = dae.equations.len();
    let added = reduce_to_first_order(&mut dae);
    assert_eq!(added.len(), 2);
    let names: Vec<String> = added
        .iter()
        .map(|&j| dae.unknowns[j].name().into_owned())
        .collect();
    assert_eq!(names, ["der(x)", "der(y)"]);
    assert_eq!(dae.unknowns.len(), n + 2);
    assert_eq!(dae.equations.len(), m + 2);
    for e in &dae.equations {
        assert!(dae.pool.max_orders(e.residual).iter().all(|&(_, k)| k <= 1));
    }
    // a first-order model is left alone
    let mut first = load("models/steinbrecher/pendulum.dae");
    assert!(reduce_to_first_order(&mut first).is_empty());
    assert_eq!(first.equations.len(), 5);
}

#[test]
fn derivatives_in_nonlinear_terms_get_their_own_unknowns() {
    let mut dae = load("models/steinbrecher/pendulum_ste1.dae");
    // Without the reduction, the quasi-linear split introduces a velocity
    // unknown for der(y) (equation 9 contains 2*der(y)^2).
    let mut direct = dae.clone();
    let analysis = analyze(&mut direct, &AnalyzeOptions::default());
    let form = hic_form(&mut direct, &analysis).unwrap();
    let velocities: Vec<&str> = form
        .unknowns
        .iter()
        .filter(|u| matches!(u.kind, UnknownKind::Velocity { .. }))
        .map(|u| u.name.as_str())
        .collect();
    assert_eq!(velocities, ["u_y"]);
    let added = reduce_to_first_order(&mut dae);
    assert_eq!(added.len(), 1);
    assert_eq!(dae.unknowns[added[0]].name(), "der(y)");
    let analysis = analyze(&mut dae, &AnalyzeOptions::default());
    assert!(hic_form(&mut dae, &analysis).is_ok());
}

#[test]
fn time_switches_are_found_by_bisection() {
    let mut dae = load_text(
        "switch.dae",
        "model S\n  parameter Real tau = 0.3;\n  Real x(start = 0, fixed = true);\nequation\n  der(x) = if time < tau then 1 else -1;\nend S;\n",
    );
    let roots: Vec<_> = dae.equations.iter().map(|e| e.residual).collect();
    let conds = time_conditions(&dae.pool, &roots);
    assert_eq!(conds.len(), 1);
    let params = dae.parameter_values();
    let d = discontinuities(&dae.pool, &conds, &params, 0.0, 1.0);
    assert_eq!(d.len(), 1);
    assert!(d[0] < 0.3 && 0.3 - d[0] < 1e-15, "{:e}", 0.3 - d[0]);
    assert!(discontinuities(&dae.pool, &conds, &params, 0.5, 1.0).is_empty());
    let analysis = analyze(&mut dae, &AnalyzeOptions::default());
    let opts = SimOptions {
        t_end: Some(1.0),
        rtol: Some(1e-8),
        interval: Some(0.5),
        ..SimOptions::default()
    };
    let sim = simulate(&mut dae, &analysis, &opts).unwrap();
    assert_eq!(sim.results.t, [0.0, 0.5, 1.0]);
    assert!((sim.results.z[2][0] - (-0.4)).abs() < 1e-10);
    assert_eq!(sim.stats.restarts, 1);
    assert!(sim.failure.is_none());
}

#[test]
fn floor_of_time_is_a_time_event() {
    // der(x) = floor(time): x(2.5) = 0 + 1 + 2·0.5 = 2, exactly when the
    // integration steps to the jumps at 1 and 2 (MLS §3.7.2).
    let mut dae = load_text(
        "floor.dae",
        "model F\n  Real x(start = 0, fixed = true);\nequation\n  der(x) = floor(time);\nend F;\n",
    );
    let roots: Vec<_> = dae.equations.iter().map(|e| e.residual).collect();
    let conds = time_conditions(&dae.pool, &roots);
    assert_eq!(conds.len(), 1);
    let params = dae.parameter_values();
    let d = discontinuities(&dae.pool, &conds, &params, 0.0, 2.5);
    assert_eq!(d.len(), 2, "{d:?}");
    assert!(d[0] < 1.0 && 1.0 - d[0] < 1e-15 && d[1] < 2.0 && 2.0 - d[1] < 1e-15);
    let analysis = analyze(&mut dae, &AnalyzeOptions::default());
    let opts = SimOptions {
        t_end: Some(2.5),
        rtol: Some(1e-8),
        interval: Some(0.5),
        ..SimOptions::default()
    };
    let sim = simulate(&mut dae, &analysis, &opts).unwrap();
    assert!(sim.failure.is_none());
    assert_eq!(sim.stats.restarts, 2);
    let last = sim.results.z.last().unwrap()[0];
    assert!((last - 2.0).abs() < 1e-12, "{last}");
}

#[test]
fn the_output_grid_ends_exactly_at_t_end() {
    assert_eq!(
        output_grid(0.0, 1.0, 0.3),
        [0.0, 0.3, 0.6, 0.8999999999999999, 1.0]
    );
    let g = output_grid(0.0, 1.0, 0.1);
    assert_eq!(g.len(), 11);
    assert_eq!(g[10], 1.0);
    assert_eq!(output_grid(2.0, 3.0, 5.0), [2.0, 3.0]);
    assert_eq!(output_grid(0.0, 1.0, f64::NAN), [0.0]);
}

#[test]
fn csv_quotes_names_with_commas_and_keeps_full_precision() {
    let r = Results {
        names: vec!["x".into(), "A[1,2]".into()],
        t: vec![0.0, 0.1],
        z: vec![vec![1.0, -2.5e-7], vec![1.0 / 3.0, 1e20]],
    };
    assert_eq!(
        to_csv(&r),
        "time,x,\"A[1,2]\"\n0,1,-2.5e-7\n0.1,0.3333333333333333,1e20\n"
    );
}

#[test]
fn options_resolve_against_the_experiment_annotation() {
    let dae = load("models/baese/akzo_nobel.dae");
    let ro = resolve_options(&dae, &SimOptions::default()).unwrap();
    assert_eq!(
        (ro.t0, ro.t_end, ro.rtol, ro.atol, ro.interval),
        (0.0, 180.0, 1e-7, 1e-7, 0.5)
    );
    let bad = SimOptions {
        rtol: Some(-1.0),
        ..SimOptions::default()
    };
    assert_eq!(
        resolve_options(&dae, &bad).unwrap_err(),
        SimError::Options {
            cause: BadOption::Tolerances,
            message: "tolerances must be positive and finite (rtol = -1, atol = -1)".into()
        }
    );
    let back = SimOptions {
        t_end: Some(-1.0),
        ..SimOptions::default()
    };
    assert!(matches!(
        resolve_options(&dae, &back).unwrap_err(),
        SimError::Options {
            cause: BadOption::EndTime,
            ..
        }
    ));
}

#[test]
fn initialization_reports_moved_values_and_consistent_derivatives() {
    // Baese Ex. 3.13: (1, 2, 2) -> (1, -2, 0); x1' = x1 = 1.
    let mut dae = load("models/baese/pivoting.dae");
    let analysis = analyze(&mut dae, &AnalyzeOptions::default());
    let p = prepare(&mut dae, &analysis).unwrap();
    assert_eq!(p.init.z0, [1.0, -2.0, 0.0]);
    let moved: Vec<(&str, f64, f64)> = p
        .init
        .moved
        .iter()
        .map(|m| (m.name.as_str(), m.start, m.value))
        .collect();
    assert_eq!(moved, [("x2", 2.0, -2.0), ("x3", 2.0, 0.0)]);
    assert_eq!(p.init.zdot0[0], 1.0);
}

#[test]
fn stats_serialise_to_json() {
    let s = SimStats {
        solver: daec_solve::Stats {
            steps_accepted: 3,
            ..Default::default()
        },
        constraints: 2,
        max_constraint_residual_by_level: vec![1e-12, 2e-12],
        ..SimStats::default()
    };
    let v: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
    assert_eq!(v["steps_accepted"], 3);
    assert_eq!(v["max_constraint_residual_by_level"][1], 2e-12);
    assert!(s.summary().contains("level 1: 2.00e-12"));
}

/// The large-system path end to end: the HiC pendulum chain with 20 links
/// (140 unknowns, above `SPARSE_THRESHOLD` and the sparse consistent
/// initialisation's limit): the consistent point from the sparse
/// minimum-norm Gauss–Newton steps satisfies every constraint level, and
/// Radau IIA with the sparse LU and the ordered equation selection agrees
/// with the dense LU and complete pivoting to the tolerance.
#[test]
fn pendulum_chain_with_20_links_takes_the_sparse_path_and_agrees_with_the_dense_one() {
    use daec_solve::{LinearSolver, Options, Radau5, StepControl};
    let mut dae = pendulum_chain(20);
    let analysis = analyze(&mut dae, &AnalyzeOptions::default());
    let prepared = daec_sim::prepare_form(
        &mut dae,
        &analysis,
        daec_sim::default_form(daec_sim::Method::Radau5),
    )
    .unwrap();
    let problem = &prepared.problem;
    let z0 = &prepared.init.z0;
    assert_eq!(z0.len(), 140);
    let levels = problem.constraint_residual_by_level(0.0, z0);
    assert_eq!(levels.len(), 3);
    assert!(levels.iter().all(|&r| r < 1e-9), "{levels:?}");
    let run = |solver: LinearSolver| {
        let o = Options {
            rtol: 1e-7,
            atol: 1e-7,
            initial_derivative: Some(prepared.init.zdot0.clone()),
            linear_solver: solver,
            ..Options::default()
        };
        let mut r = Radau5::new(problem, o).unwrap();
        let mut last = z0.clone();
        let stats = r
            .integrate(0.0, z0, 0.5, |s| {
                last.copy_from_slice(s.z);
                StepControl::Continue
            })
            .unwrap();
        (last, stats, r.uses_sparse_lu())
    };
    let (zs, ss, sparse) = run(LinearSolver::Auto);
    assert!(sparse, "140 unknowns take the sparse path");
    assert_eq!(ss.selections, 1, "{ss:?}");
    let (zd, sd, _) = run(LinearSolver::Dense);
    // the dense path keeps a selection once two agreed on it
    assert!(sd.selections >= 2, "{sd:?}");
    assert!(sd.selections < sd.jacobian_evals, "{sd:?}");
    let diff = zs
        .iter()
        .zip(&zd)
        .fold(0.0f64, |a, (x, y)| a.max((x - y).abs()));
    eprintln!("sparse: {ss:?}\ndense: {sd:?}\nmax difference {diff:e}");
    // (on this chain the ordered selection picks the same rows as complete
    // pivoting: the runs agree to round-off, with the same work)
    assert!(diff < 1e-9, "sparse and dense differ by {diff:e}");
    assert_eq!(
        (ss.steps_accepted, ss.newton_iterations),
        (sd.steps_accepted, sd.newton_iterations)
    );
    let levels = problem.constraint_residual_by_level(0.5, &zs);
    assert!(levels.iter().all(|&r| r < 1e-8), "{levels:?}");
}

/// Native functions for the tests below: each writes `1000 + k` to its
/// first output (k its index in `NATIVE_SYMBOLS`), whatever the inputs.
/// (Written in Rust, safe: they touch no pointer.)
mod fake_native {
    use daec_sim::native::NativeFn;
    macro_rules! fake {
        ($name:ident, $k:expr) => {
            pub extern "C" fn $name(
                _: f64,
                _: *const f64,
                _: *const f64,
                _: *const f64,
                _: *mut f64,
            ) {
                CALLS.with(|c| c.borrow_mut().push($k));
            }
        };
    }
    thread_local! {
        pub static CALLS: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    fake!(f0, 0);
    fake!(f1, 1);
    fake!(f2, 2);
    fake!(f3, 3);
    fake!(f4, 4);
    fake!(f5, 5);
    pub const ALL: [NativeFn; 6] = [f0, f1, f2, f3, f4, f5];
}

#[test]
fn native_code_is_checked_against_the_problem_and_then_called_for_every_function() {
    use daec_sim::native::{NATIVE_ABI, NATIVE_SYMBOLS, NativeCode};
    use std::sync::Arc;
    let mut dae = load("models/steinbrecher/pendulum.dae");
    let analysis = analyze(&mut dae, &AnalyzeOptions::default());
    let form = hic_form(&mut dae, &analysis).unwrap();
    let params = dae.parameter_values();
    let mut problem = FormProblem::new(&mut dae.pool, &form, params.clone()).unwrap();
    let layout = problem.native_layout();
    // HiC pendulum: 5 unknowns, 4 differential rows, 3 constraints, E =
    // diag(1, 1, m, m)
    assert_eq!(
        (
            layout.abi,
            layout.n,
            layout.n_diff,
            layout.n_constraints,
            layout.n_mass
        ),
        (NATIVE_ABI, 5, 4, 3, 4)
    );
    assert_eq!(layout.n_params, params.len() as u64);
    assert_eq!(
        layout.n_diff_jacobian as usize,
        problem.diff_jacobian_pattern().len()
    );
    assert_eq!(
        layout.outputs(),
        [
            4,
            3,
            7,
            4,
            layout.n_diff_jacobian as usize,
            layout.n_constraint_jacobian as usize
        ]
    );
    // The source declares every function with the sizes of the layout.
    let source = problem.native_source(&dae.pool, "pendulum, HIC");
    assert_eq!(source.layout, layout);
    let text = source.text();
    for name in NATIVE_SYMBOLS {
        assert!(
            text.contains(&format!("pub unsafe extern \"C\" fn {name}(")),
            "{name}"
        );
    }
    assert!(text.contains("const N: usize = 5;"));
    assert!(text.contains("#[no_mangle]\npub extern \"C\" fn daec_native_layout(i: u32) -> u64"));
    // A library of other sizes is refused, and the tapes stay.
    let wrong = NativeCode {
        layout: daec_sim::native::NativeLayout { n: 6, ..layout },
        functions: fake_native::ALL,
        library: Arc::new(()),
    };
    let err = problem.set_native(wrong).unwrap_err();
    assert_eq!(
        err,
        NativeError::Layout {
            library: Box::new(daec_sim::native::NativeLayout { n: 6, ..layout }),
            problem: Box::new(layout)
        }
    );
    assert!(
        err.to_string().contains("does not fit the problem"),
        "{err}"
    );
    assert!(!problem.is_native());
    let z = [1.0, 0.0, 0.0, 0.0, 0.5];
    let mut g = [0.0; 3];
    problem.constraints(0.0, &z, &mut g);
    assert!(g[0].abs() < 1e-15, "the tapes: x² + y² − 1 = 0 at (1, 0)");
    // One that fits is called for each trait function, in place of the
    // tapes.
    problem
        .set_native(NativeCode {
            layout,
            functions: fake_native::ALL,
            library: Arc::new(()),
        })
        .unwrap();
    assert!(problem.is_native());
    let zd = [0.0; 5];
    let mut d = [0.0; 4];
    let mut both = [0.0; 7];
    let mut m = [0.0; 4];
    let mut jd = vec![0.0; layout.n_diff_jacobian as usize];
    let mut jg = vec![0.0; layout.n_constraint_jacobian as usize];
    fake_native::CALLS.with(|c| c.borrow_mut().clear());
    problem.diff_residual(0.0, &z, &zd, &mut d);
    problem.constraints(0.0, &z, &mut g);
    problem.residual(0.0, &z, &zd, &mut both);
    problem.mass_values(0.0, &z, &mut m);
    problem.diff_jacobian_values(0.0, &z, &zd, &mut jd);
    problem.constraint_jacobian_values(0.0, &z, &mut jg);
    let (a, b, c) = (both, both, both);
    let [mut r0, mut r1, mut r2] = [a, b, c];
    problem.residual_stages(
        [0.0; 3],
        [&z, &z, &z],
        [&zd, &zd, &zd],
        [&mut r0, &mut r1, &mut r2],
    );
    assert_eq!(
        fake_native::CALLS.with(|c| c.borrow().clone()),
        [0, 1, 2, 3, 4, 5, 2, 2, 2]
    );
    // An output array shorter than the library writes is never passed to
    // it: the tapes evaluate what fits instead of the native code writing
    // out of bounds. (`g` still holds the tapes' values from above: the
    // fakes write nothing.)
    fake_native::CALLS.with(|c| c.borrow_mut().clear());
    let mut g2 = [f64::NAN; 2];
    problem.constraints(0.0, &z, &mut g2);
    assert!(fake_native::CALLS.with(|c| c.borrow().is_empty()));
    assert_eq!(g2, g[..2]);
    let short_z = [1.0, 0.0];
    problem.constraints(0.0, &short_z, &mut g);
    assert!(fake_native::CALLS.with(|c| c.borrow().is_empty()));
}

#[test]
fn constraint_rows_go_into_the_maxima_per_level() {
    // rows of levels 0, 2, 0, 1; NaN counts as infinite
    let levels = [0, 2, 0, 1];
    let mut rows = SimStats {
        max_constraint_residual_by_level: vec![0.0; 3],
        ..SimStats::default()
    };
    rows.record_constraint_rows(&[1e-9, -3e-8, -2e-9, 5e-10], &levels);
    rows.record_constraint_rows(&[4e-9, 1e-8, 0.0, -7e-10], &levels);
    assert_eq!(rows.max_constraint_residual_by_level, [4e-9, 7e-10, 3e-8]);
    assert_eq!(rows.max_constraint_residual, 3e-8);
    // the same as the per-level norms of each point
    let mut norms = SimStats::default();
    norms.record_constraint_residuals(&[2e-9, 5e-10, 3e-8]);
    norms.record_constraint_residuals(&[4e-9, 7e-10, 1e-8]);
    assert_eq!(
        norms.max_constraint_residual_by_level,
        rows.max_constraint_residual_by_level
    );
    assert_eq!(norms.max_constraint_residual, rows.max_constraint_residual);
    rows.record_constraint_rows(&[f64::NAN, 0.0, 0.0, 0.0], &levels);
    assert_eq!(rows.max_constraint_residual_by_level[0], f64::INFINITY);
    assert_eq!(rows.max_constraint_residual, f64::INFINITY);
}

#[test]
fn the_step_limit_counts_what_the_statistics_show_over_all_segments() {
    // an event every 0.1 splits the run into segments; the limit holds for
    // the run, in the statistics' terms
    let mut dae = load_text(
        "limit.dae",
        "model Limit\n  Real z(start = 0, fixed = true); Real y(start = 1, fixed = true);\nequation\n  der(z) = 0;\n  der(y) = -y;\n  when sin(62.83185307179586*time) > 0 then reinit(z, z + 1); end when;\nend Limit;\n",
    );
    let analysis = analyze(&mut dae, &AnalyzeOptions::default());
    let opts = SimOptions {
        t_end: Some(10.0),
        max_steps: Some(60),
        ..SimOptions::default()
    };
    let sim = simulate(&mut dae, &analysis, &opts).unwrap();
    let s = &sim.stats;
    assert_eq!(
        s.steps_accepted + s.steps_rejected + s.newton_failures,
        60,
        "{s:?}"
    );
    assert!(s.events >= 3, "{s:?}");
    let failure = sim.failure.as_ref().expect("the step limit is a failure");
    let m = failure.to_string();
    assert!(
        m.starts_with(
            "integration failed: the run reached its limit of 60 step attempts (--max-steps) at t = "
        ),
        "{m}"
    );
    // typed: the integrator's error, at the time of the last accepted step
    let Some(&SolveError::TooManySteps { t, max_steps: 60 }) = failure.solve_error() else {
        panic!("{failure:?}");
    };
    assert_eq!(failure.time(), Some(t));
    assert!(t > 0.0 && t < 10.0, "{t}");
    assert!(
        m.contains(&format!("at t = {}", daec_solve::readable_number(t))),
        "{m}"
    );
    assert!(matches!(
        failure.cause(),
        Some(FailureCause::Solver(SolveError::TooManySteps { .. }))
    ));
}

#[test]
fn a_blow_up_fails_with_the_time_and_the_integrators_error() {
    // x' = x², x(0) = 1: x = 1/(1 − t) blows up at t = 1.
    let mut dae = load_text(
        "blowup.dae",
        "model BlowUp\n  Real x(start = 1, fixed = true);\nequation\n  der(x) = x^2;\nend BlowUp;\n",
    );
    let analysis = analyze(&mut dae, &AnalyzeOptions::default());
    let opts = SimOptions {
        t_end: Some(2.0),
        ..SimOptions::default()
    };
    let sim = simulate(&mut dae, &analysis, &opts).unwrap();
    let failure = sim.failure.as_ref().expect("the blow-up is a failure");
    let Some(&SolveError::StepSizeTooSmall { t, h }) = failure.solve_error() else {
        panic!("{failure:?}");
    };
    assert_eq!(failure.time(), Some(t));
    assert!((t - 1.0).abs() < 1e-3 && h < 1e-10, "t = {t}, h = {h}");
    // the partial results end at or before the failure
    let last = *sim.results.t.last().unwrap();
    assert!(last <= t && last > 0.9, "{last}");
    assert!(
        failure
            .to_string()
            .starts_with("integration failed: step size too small at t = "),
        "{failure}"
    );
    assert!(failure.labels().is_empty());
}

#[test]
fn set_up_errors_carry_their_typed_causes() {
    // GGL on an ODE: the formulation's refusal, kept whole.
    let mut dae = load_text(
        "ode.dae",
        "model O\n  Real x(start = 1);\nequation\n  der(x) = -x;\nend O;\n",
    );
    let analysis = analyze(&mut dae, &AnalyzeOptions::default());
    let e = daec_sim::prepare_form(&mut dae, &analysis, Form::Ggl).unwrap_err();
    let SimError::Unsupported {
        cause: Unsupported::Formulation(refusal),
        message,
    } = e.kind()
    else {
        panic!("{e:?}");
    };
    assert_eq!(
        (refusal.form, &refusal.cause),
        (Form::Ggl, &Refusal::NoAlgebraicEquations)
    );
    assert_eq!(*message, refusal.to_string());
    assert_eq!(
        e.to_string(),
        format!("cannot simulate this model: {refusal}")
    );
    // Fixed start values that contradict `y = x`: the inconsistency
    // names the unknowns of the equation left with the residual.
    let mut dae = load_text(
        "inconsistent.dae",
        "model I\n  Real x(start = 1, fixed = true);\n  Real y(start = 5, fixed = true);\nequation\n  der(x) = -x;\n  y = x;\nend I;\n",
    );
    let analysis = analyze(&mut dae, &AnalyzeOptions::default());
    let e = prepare(&mut dae, &analysis).unwrap_err();
    let SimError::Initialization {
        cause: InitFailure::Inconsistent { residual, unknowns },
        ..
    } = e.kind()
    else {
        panic!("{e:?}");
    };
    let mut unknowns = unknowns.clone();
    unknowns.sort();
    assert_eq!(unknowns, ["x", "y"]);
    assert!((residual - 4.0).abs() < 1e-6, "{residual}");
    assert_eq!(e.labels().len(), 1);
    assert_eq!(e.time(), None);
}

/// A second run on the same prepared model starts from the modes of the
/// consistent initial point, not from those the first run ended with
/// (the benchmark and parameter studies integrate one `Prepared` many
/// times).
#[test]
fn a_second_run_on_one_prepared_model_starts_from_the_initial_modes() {
    let mut dae = load_text(
        "switch.dae",
        "model Switch\n  Real x(start = 1, fixed = true);\n  Real v(start = 0, fixed = true);\n  Real a;\nequation\n  der(x) = v;\n  der(v) = a;\n  a = if x > 0 then -1 else 1;\nend Switch;\n",
    );
    let analysis = analyze(&mut dae, &AnalyzeOptions::default());
    let opts = SimOptions {
        t_end: Some(3.0),
        rtol: Some(1e-8),
        atol: Some(1e-8),
        ..SimOptions::default()
    };
    let ro = resolve_options(&dae, &opts).unwrap();
    let mut prepared = prepare(&mut dae, &analysis).unwrap();
    let first = daec_sim::integrate(&mut dae, &mut prepared, &ro).unwrap();
    assert!(first.failure.is_none(), "{:?}", first.failure);
    // one crossing, at √2, with x < 0 at the end: the mode ends switched
    assert_eq!(first.stats.events, 1);
    let x_end = first.results.z.last().unwrap()[0];
    assert!(x_end < 0.0, "x(3) = {x_end}");
    let second = daec_sim::integrate(&mut dae, &mut prepared, &ro).unwrap();
    assert!(second.failure.is_none(), "{:?}", second.failure);
    assert_eq!(second.stats.events, 1);
    assert_eq!(second.results, first.results);
}

/// A run continued in pieces (`Prepared::restart_at` at each piece's
/// `Simulation::end`, as an FMU's `fmi2DoStep` continues) ends where one
/// run ends, also when StE switched variants within the pieces: a piece
/// starts in the variant the previous one left (restarting in the
/// prepared variant, singular near x = 0, lost 1e-5 here). A point of a
/// variant the model has not built is refused.
#[test]
fn a_run_continued_in_pieces_ends_where_one_run_ends() {
    let mut dae = load("models/steinbrecher/pendulum.dae");
    reduce_to_first_order(&mut dae);
    let analysis = analyze(&mut dae, &AnalyzeOptions::default());
    let mut prepared = daec_sim::prepare_form(&mut dae, &analysis, Form::Ste).unwrap();
    let opts = SimOptions {
        t_end: Some(1.0),
        rtol: Some(1e-10),
        ..SimOptions::default()
    };
    let ro = resolve_options(&dae, &opts).unwrap();
    let whole = daec_sim::integrate(&mut dae, &mut prepared, &ro).unwrap();
    assert!(whole.failure.is_none());
    assert!(
        whole.stats.ste_switches >= 2,
        "{}",
        whole.stats.ste_switches
    );
    let h = 0.1;
    let mut variants = Vec::new();
    let mut last = None;
    for k in 0..10 {
        let t = f64::from(k) * h;
        let piece = daec_sim::ResolvedOptions {
            t0: t,
            t_end: t + h,
            interval: h,
            ..ro
        };
        let sim = daec_sim::integrate(&mut dae, &mut prepared, &piece).unwrap();
        assert!(sim.failure.is_none(), "{:?}", sim.failure);
        let end = sim.end.unwrap();
        assert!((end.t - (t + h)).abs() < 1e-12);
        variants.push(end.variant);
        assert!(prepared.restart_at(&end));
        last = Some((end, sim.results.z.last().unwrap().clone()));
    }
    let (end, row) = last.unwrap();
    let want = whole.results.z.last().unwrap();
    for (got, want) in row.iter().zip(want) {
        assert!(
            (got - want).abs() <= 1e-6 * (1.0 + want.abs()),
            "{row:?} against {want:?}"
        );
    }
    assert!(variants.iter().any(|&v| v != 0), "{variants:?}");
    let elsewhere = daec_sim::EndPoint {
        variant: 99,
        ..end.clone()
    };
    assert!(!prepared.restart_at(&elsewhere));
    let shorter = daec_sim::EndPoint {
        z: end.z[1..].to_vec(),
        ..end
    };
    assert!(!prepared.restart_at(&shorter));
}

/// The bodies of the functions of a generated native source: name and
/// statements (the lines between `fn name(…) {` and the closing `}`).
fn native_functions(text: &str) -> Vec<(String, Vec<&str>)> {
    let mut out: Vec<(String, Vec<&str>)> = Vec::new();
    let mut open = false;
    for line in text.lines() {
        if line.starts_with("static ") {
            continue;
        }
        if let Some(at) = line.find("fn ").filter(|_| !line.starts_with(' ')) {
            let name = &line[at + 3..line[at..].find('(').map_or(line.len(), |k| at + k)];
            out.push((name.to_string(), Vec::new()));
            open = true;
        } else if line == "}" {
            open = false;
        } else if open && let Some(f) = out.last_mut() {
            f.1.push(line.trim());
        }
    }
    out
}

/// The tables of a generated native source whose names start with
/// `prefix`: (columns, rows) of each.
fn native_tables(text: &str, prefix: &str) -> Vec<(usize, usize)> {
    text.lines()
        .filter_map(|l| l.strip_prefix("static ")?.strip_prefix(prefix))
        .filter_map(|l| {
            let (_, shape) = l.split_once(": [[")?;
            let (_, dims) = shape.split_once("; ")?;
            let (columns, rest) = dims.split_once("]; ")?;
            let (rows, _) = rest.split_once(']')?;
            Some((columns.parse().ok()?, rows.parse().ok()?))
        })
        .collect()
}

#[test]
fn fekete_native_source_prints_its_particle_pairs_as_loops() {
    // Fekete (20 particles, 160 unknowns, HiC): 3900 + 1620 Jacobian
    // values, whose terms repeat per particle and per ordered pair of
    // particles. Each shape of statement that repeats at least LOOP_ROWS
    // times is one loop body over a table of indices (`to_rust_looped`):
    // the differences of the coordinates (3·20·19 = 1140 rows), the
    // squared distances and their reciprocals (20·19 = 380 rows), … The
    // source, tables included, is below 0.7 MB (the straight-line code's
    // was 1.1 MB), no function is longer than a chunk, and the residual is the
    // differential rows' and the constraints' functions called in turn on
    // copies of the arrays.
    use daec_sim::native::{CHUNK_BYTES, LOOP_ROWS};
    let mut dae = load("models/testset/fekete.dae");
    let analysis = analyze(&mut dae, &AnalyzeOptions::default());
    let form = hic_form(&mut dae, &analysis).unwrap();
    let params = dae.parameter_values();
    let problem = FormProblem::new(&mut dae.pool, &form, params).unwrap();
    let text = problem.native_source(&dae.pool, "Fekete, HIC").text();
    let functions = native_functions(&text);
    let sizes: Vec<(&str, usize, usize)> = functions
        .iter()
        .map(|(name, body)| {
            let bytes = body.iter().map(|s| s.len()).sum();
            (name.as_str(), body.len(), bytes)
        })
        .collect();
    for &(name, _, bytes) in &sizes {
        assert!(bytes <= CHUNK_BYTES, "{name}: {bytes} bytes: {sizes:?}");
    }
    // the constraints' Jacobian (symbol 5): its loops and their rows
    let tables = native_tables(&text, "T5_");
    assert!(tables.len() >= 15, "{tables:?}");
    assert!(
        tables.iter().all(|&(_, rows)| rows >= LOOP_ROWS),
        "{tables:?}"
    );
    for rows in [1140, 380, 60, 20] {
        assert!(tables.iter().any(|t| t.1 == rows), "{rows}: {tables:?}");
    }
    // its statements: the exported function's and its chunk functions'
    // (at most eight loops to a chunk)
    let chunks: Vec<&Vec<&str>> = functions
        .iter()
        .filter(|(name, _)| name.starts_with("daec_constraint_jacobian"))
        .map(|f| &f.1)
        .collect();
    assert!(chunks.len() > tables.len() / 8, "{} chunks", chunks.len());
    for chunk in &chunks {
        let loops = chunk.iter().filter(|s| s.starts_with("for r in ")).count();
        assert!(loops <= 8, "{loops} loops in one chunk");
    }
    let jacobian: Vec<&str> = chunks.into_iter().flatten().copied().collect();
    let loops = jacobian
        .iter()
        .filter(|s| s.starts_with("for r in T5_"))
        .count();
    assert_eq!(loops, tables.len());
    // a squared distance and its reciprocal are one loop body each, the
    // reciprocal computed once and multiplied (as the tape computes it)
    for body in [
        "*sf.get_unchecked_mut(r[0] as usize) = a0.powi(2) + a1.powi(2) + a2.powi(2);",
        "*sf.get_unchecked_mut(r[0] as usize) = 1.0 / a0;",
    ] {
        assert_eq!(jacobian.iter().filter(|s| **s == body).count(), 1, "{body}");
    }
    let residual = functions
        .iter()
        .find(|(name, _)| name == "daec_residual")
        .map(|f| f.1.clone())
        .unwrap();
    assert_eq!(
        residual,
        [
            "unsafe {",
            "let z: [f64; N] = *(z as *const [f64; N]);",
            "let zdot: [f64; N] = *(zdot as *const [f64; N]);",
            "let p: [f64; NP] = *(p as *const [f64; NP]);",
            "daec_diff_residual(t, z.as_ptr(), zdot.as_ptr(), p.as_ptr(), out);",
            "daec_constraints(t, z.as_ptr(), zdot.as_ptr(), p.as_ptr(), out.add(120));",
            "}"
        ]
    );
    assert!(text.len() < 700_000, "{} bytes: {sizes:?}", text.len());
}

/// `simulate --form dd|ste` on a pendulum chain of N = 60 links (420
/// unknowns; DD's level-1 block has 5N = 300 rows, StE's extension 15N =
/// 900 unknowns): the sparse dummy choice, the sparse check of the
/// extension and the re-selection along the solution (formerly only up
/// to 200 unknowns for DD) reach the HiC result, with no limit reported.
#[test]
fn dd_and_ste_of_a_pendulum_chain_reach_the_hic_result() {
    let mut dae = pendulum_chain(60);
    let analysis = analyze(&mut dae, &AnalyzeOptions::default());
    let run = |dae: &mut Dae, form: Form| {
        let opts = SimOptions {
            form: Some(form),
            t_end: Some(0.05),
            interval: Some(0.05),
            rtol: Some(1e-8),
            ..SimOptions::default()
        };
        let sim = simulate(dae, &analysis, &opts).unwrap();
        assert!(sim.failure.is_none(), "{form:?}: {:?}", sim.failure);
        assert!(
            sim.stats.limits.is_empty(),
            "{form:?}: {:?}",
            sim.stats.limits
        );
        sim.results
    };
    let hic = run(&mut dae, Form::Hic);
    let want = hic.z.last().unwrap();
    assert_eq!(hic.t.last().copied(), Some(0.05));
    for form in [Form::Dd, Form::Ste] {
        let got = run(&mut dae, form);
        assert_eq!(got.names, hic.names, "{form:?}");
        let row = got.z.last().unwrap();
        // positions and velocities (the multipliers follow them)
        for k in 0..4 * 60 {
            let (g, w) = (row[k], want[k]);
            assert!(
                (g - w).abs() < 1e-5 * (1.0 + w.abs()),
                "{form:?}: {} = {g} vs {w}",
                hic.names[k]
            );
        }
    }
}

/// The projection of output points onto the constraints of a model above
/// the sparse threshold analyses its least-norm system once and reuses
/// it: every projection lands on the constraints, mainly by the step the
/// one-shot sparse least-norm solve gives.
#[test]
fn repeated_projections_of_a_large_chain_analyse_their_system_once() {
    let mut dae = pendulum_chain(20);
    let analysis = analyze(&mut dae, &AnalyzeOptions::default());
    let prepared = daec_sim::prepare_form(&mut dae, &analysis, Form::Hic).unwrap();
    let problem = &prepared.problem;
    let z0 = &prepared.init.z0;
    assert_eq!(z0.len(), 140);
    let before = problem.projection_analyses();
    for k in 1..=4 {
        // a point off the constraints: every unknown moved
        let off: Vec<f64> = z0
            .iter()
            .enumerate()
            .map(|(j, v)| v + 1e-6 * f64::from(k) * ((j % 7) as f64 - 3.0))
            .collect();
        let mut z = off.clone();
        let r = problem.project_onto_constraints(0.0, &mut z);
        assert!(r < 1e-12, "projection {k}: residual {r:e}");
        // one Gauss–Newton step of the one-shot solve, as the first of
        // the projection's steps
        let n_g = problem.n_constraints();
        let mut g = vec![0.0; n_g];
        problem.constraints(0.0, &off, &mut g);
        let pattern = problem.constraint_jacobian_pattern();
        let mut vals = vec![0.0; pattern.len()];
        problem.constraint_jacobian_values(0.0, &off, &mut vals);
        let entries: Vec<(usize, usize, f64)> = pattern
            .iter()
            .zip(&vals)
            .map(|(&(i, j), &v)| (i, j, v))
            .collect();
        let rhs: Vec<f64> = g.iter().map(|v| -v).collect();
        let delta = daec_solve::min_norm_solve_sparse(n_g, 140, &entries, &rhs).unwrap();
        let step: f64 = z
            .iter()
            .zip(&off)
            .zip(&delta)
            .map(|((a, b), d)| (a - b - d).abs())
            .fold(0.0, f64::max);
        // (the later Gauss–Newton steps are small against the first)
        let moved = delta.iter().fold(0.0f64, |a, d| a.max(d.abs()));
        assert!(moved > 1e-7, "projection {k}: moved {moved:e}");
        assert!(
            step < 0.1 * moved,
            "projection {k}: {step:e} from the first step"
        );
    }
    assert_eq!(problem.projection_analyses() - before, 1);
}

#[test]
fn runs_on_one_prepared_model_repeat_the_runs_of_fresh_ones() {
    // The integrator's storage is kept in `Prepared` from one run to the
    // next: a run at another tolerance, a failed run (too few steps) and
    // the first run again give the results of runs on models prepared
    // anew, to the last bit.
    let path = "models/testset/akzo_nobel.dae";
    let prepared = || {
        let mut dae = load(path);
        let analysis = analyze(&mut dae, &AnalyzeOptions::default());
        let p = prepare(&mut dae, &analysis).unwrap();
        (dae, p)
    };
    let options = |dae: &Dae, tol: f64, max_steps: usize| {
        let o = SimOptions {
            rtol: Some(tol),
            atol: Some(tol),
            max_steps: Some(max_steps),
            ..SimOptions::default()
        };
        resolve_options(dae, &o).unwrap()
    };
    let bits = |sim: &daec_sim::Simulation| {
        let rows = sim.results.z.iter().flatten();
        let values: Vec<u64> = sim
            .results
            .t
            .iter()
            .chain(rows)
            .map(|x| x.to_bits())
            .collect();
        (values, sim.stats.solver, sim.failure.is_some())
    };
    let runs = [(1e-6, 100_000), (1e-4, 100_000), (1e-8, 5), (1e-6, 100_000)];
    let fresh: Vec<_> = runs
        .iter()
        .map(|&(tol, max)| {
            let (mut dae, mut p) = prepared();
            let ro = options(&dae, tol, max);
            bits(&daec_sim::integrate(&mut dae, &mut p, &ro).unwrap())
        })
        .collect();
    assert_eq!(
        fresh.iter().map(|f| f.2).collect::<Vec<_>>(),
        [false, false, true, false]
    );
    assert_ne!(fresh[0].0, fresh[1].0);
    let (mut dae, mut p) = prepared();
    for (&(tol, max), want) in runs.iter().zip(&fresh) {
        let ro = options(&dae, tol, max);
        let sim = daec_sim::integrate(&mut dae, &mut p, &ro).unwrap();
        assert_eq!(&bits(&sim), want, "tol {tol:e}");
    }
}
