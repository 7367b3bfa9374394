//! `daec simulate`'s checks of values and its messages: non-finite start
//! values, parameters and `reinit` values; run-time failures that name
//! the model's equations by their text and source location; `min`/`max`
//! checked along the run (`--bounds`); output equations split off for
//! the formulations that refuse them.

mod common;

use common::{Csv, Run, daec, number_after};
use std::path::{Path, PathBuf};

/// Writes `text` to a fresh model file in the temporary directory.
fn model(name: &str, text: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-checks-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn simulate(path: &Path, args: &[&str]) -> Run {
    let mut all = vec!["simulate", path.to_str().unwrap()];
    all.extend_from_slice(args);
    daec(&all)
}

/// The header and the rows of a CSV.
fn csv(text: &str) -> (Vec<String>, Vec<Vec<f64>>) {
    let c = Csv::parse(text);
    (c.header, c.rows)
}

fn contains(r: &Run, what: &str) {
    assert!(
        r.stderr.contains(what),
        "missing `{what}` in:\n{}",
        r.stderr
    );
}

#[test]
fn non_finite_start_values_are_model_errors_at_the_modifier() {
    let nan = model(
        "start_nan.dae",
        "model S\n  Real x(start = 0/0, fixed = true);\n  Real y;\nequation\n  der(x) = -x;\n  y = 2*x;\nend S;\n",
    );
    let r = simulate(&nan, &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    contains(
        &r,
        "error[E0112]: the `start` value of `x` is not a finite number",
    );
    contains(&r, "start_nan.dae:2:18");
    contains(&r, "^^^ evaluates to NaN");
    // (the misleading "inconsistent … residual" of the projection is gone)
    assert!(!r.stderr.contains("inconsistent"), "{}", r.stderr);
    let huge = model(
        "start_huge.dae",
        "model S\n  Real x(start = 1e400, fixed = true);\nequation\n  der(x) = -x;\nend S;\n",
    );
    let r = simulate(&huge, &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    contains(&r, "the `start` value of `x` is not a finite number");
    contains(&r, "^^^^^ evaluates to inf");
    assert!(!r.stderr.contains("residual 0.000e0"), "{}", r.stderr);
    let bound = model(
        "min_nan.dae",
        "model S\n  parameter Real z = 0;\n  Real x(start = 1, min = z/z);\nequation\n  der(x) = -x;\nend S;\n",
    );
    let r = simulate(&bound, &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    contains(&r, "the `min` value of `x` is not a finite number");
}

#[test]
fn non_finite_parameters_and_experiment_values_are_refused() {
    let m = model(
        "param.dae",
        "model P\n  parameter Real k = 1;\n  Real x(start = 1, fixed = true);\nequation\n  der(x) = -k*x;\nend P;\n",
    );
    for v in ["nan", "inf", "-inf", "NaN"] {
        let r = simulate(&m, &["-p", &format!("k={v}")]);
        assert_eq!(r.code, 2, "{v}: {}", r.stderr);
        contains(
            &r,
            &format!(
                "`{v}` is not a finite number (in `-p k={v}`): parameter values must be finite"
            ),
        );
    }
    let r = simulate(&m, &["-p", "k=2"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // A binding that overflows and a NaN stop time are model errors.
    let m = model(
        "param_inf.dae",
        "model P\n  parameter Real k = 1e200*1e200;\n  Real x(start = 1, fixed = true);\nequation\n  der(x) = -k*x;\n  annotation(experiment(StopTime = 0/0));\nend P;\n",
    );
    let r = simulate(&m, &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    contains(&r, "the value of `k` is not a finite number (inf)");
    contains(&r, "`StopTime` must be a number");
}

#[test]
fn a_reinit_that_gives_nan_is_a_numerical_failure_at_its_line() {
    let m = model(
        "reinit_nan.dae",
        "model R\n  Real x(start = 1, fixed = true);\nequation\n  der(x) = -1;\n  when x < 0.5 then\n    reinit(x, 0/0);\n  end when;\nend R;\n",
    );
    let r = simulate(&m, &["--interval", "0.1"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    contains(
        &r,
        "error: integration failed: the reinit of `x` gave NaN at t = 0.5",
    );
    contains(&r, "reinit_nan.dae:6:5");
    contains(&r, "reinit(x, 0/0);");
    contains(&r, "gives NaN at t = 0.5");
    contains(&r, "note: the results up to t = 0.5 were written");
    assert!(!r.stderr.contains("invalid options"), "{}", r.stderr);
    let (_, rows) = csv(&r.stdout);
    let last = rows.last().unwrap();
    assert!((last[0] - 0.5).abs() < 1e-9 && (last[1] - 0.5).abs() < 1e-6);
}

#[test]
fn a_failed_re_initialisation_names_the_constraint_at_its_line() {
    // After reinit(x, 2) no y satisfies y² = 1 − x².
    let m = model(
        "reinit_inconsistent.dae",
        "model R\n  Real x(start = 0.5, fixed = true);\n  Real y(start = 1);\nequation\n  der(x) = 1;\n  y^2 = 1 - x^2;\n  when x > 0.6 then\n    reinit(x, 2);\n  end when;\nend R;\n",
    );
    let r = simulate(&m, &["--interval", "0.05"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    let t = number_after(&r.stderr, "re-initialisation at t = ");
    assert!((t - 0.1).abs() < 1e-9, "{t}");
    contains(&r, "largest at the equation `y^2 = 1 - x^2`)");
    contains(&r, "reinit_inconsistent.dae:6:3");
    contains(&r, "^^^^^^^^^^^^^ has the largest residual");
}

#[test]
fn an_initial_equation_that_cannot_be_evaluated_is_located() {
    let m = model(
        "init_div.dae",
        "model I\n  parameter Real a = 0;\n  Real x;\ninitial equation\n  x = 1/a;\nequation\n  der(x) = -x;\nend I;\n",
    );
    let r = simulate(&m, &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    contains(
        &r,
        "the initial equation `x = 1 / a` cannot be evaluated at the start values",
    );
    contains(&r, "gives -inf");
    contains(&r, "init_div.dae:5:3");
}

#[test]
fn inconsistent_initial_conditions_name_the_equation_and_its_line() {
    let m = model(
        "inconsistent.dae",
        "model Inconsistent\n  Real x(start = 1, fixed = true);\n  Real y(start = 3, fixed = true);\nequation\n  der(x) = y;\n  x + y = 1;\nend Inconsistent;\n",
    );
    let r = simulate(&m, &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    contains(
        &r,
        "the equation `x + y = 1`, 0 = x + y - 1, keeps a residual of 3.000e0",
    );
    contains(&r, "inconsistent.dae:6:3");
    contains(&r, "^^^^^^^^^ keeps a residual of 3.000e0");
    assert!(!r.stderr.contains("equation 2"), "{}", r.stderr);
    // A hidden constraint: the velocity level of the pendulum's position
    // constraint, with both velocities fixed off it.
    let m = model(
        "inconsistent_velocity.dae",
        "model P\n  Real u1(start = 1, fixed = true);\n  Real u2(start = 0);\n  Real v1(start = 1, fixed = true);\n  Real v2(start = 0, fixed = true);\n  Real lambda;\nequation\n  der(u1) = v1;\n  der(u2) = v2;\n  der(v1) = -2*u1*lambda;\n  der(v2) = -1 - 2*u2*lambda;\n  0 = u1^2 + u2^2 - 1;\nend P;\n",
    );
    let r = simulate(&m, &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    contains(
        &r,
        "the level-1 constraint from the equation `0 = u1^2 + u2^2 - 1`, differentiated once",
    );
    contains(&r, "inconsistent_velocity.dae:12:3");
    contains(
        &r,
        "its level-1 constraint (differentiated once) keeps a residual",
    );
}

#[test]
fn projected_radau_names_the_equation_that_is_not_hessenberg() {
    // The energy equation is kept (its variable is fixed), and is an
    // algebraic equation in velocities.
    let m = model(
        "energy_fixed.dae",
        "model P\n  Real u1(start = 1);\n  Real u2(start = 0, fixed = true);\n  Real v1(start = 0);\n  Real v2(start = 0, fixed = true);\n  Real E(start = 0, fixed = true);\n  Real lambda;\nequation\n  der(u1) = v1;\n  der(u2) = v2;\n  der(v1) = -2*u1*lambda;\n  der(v2) = -1 - 2*u2*lambda;\n  0 = u1^2 + u2^2 - 1;\n  E = 0.5*(v1^2 + v2^2) + u2;\nend P;\n",
    );
    let r = simulate(&m, &["--method", "radau5-projected"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    contains(
        &r,
        "the equation `E = 0.5 * v1^2 + 0.5 * v2^2 + u2` is an algebraic equation in `v1`",
    );
    contains(&r, "energy_fixed.dae:14:3");
}

const BOUNDED: &str = "model B\n  Real x(start = 1, fixed = true, min = 0, max = 2);\n  Real y(max = 0.75);\n  Real z(start = 1, fixed = true, min = 0);\nequation\n  der(x) = -1;\n  y = 1 - x;\n  der(z) = -z;\n  annotation(experiment(StopTime = 3, Interval = 0.01));\nend B;\n";

#[test]
fn min_and_max_are_checked_along_the_run() {
    let m = model("bounds.dae", BOUNDED);
    let stats = m.with_extension("json");
    let r = simulate(&m, &["--stats-json", stats.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // one warning per variable, with the first time and value (a step
    // end or an output point, whichever comes first after the crossing)
    let t_y = number_after(&r.stderr, "warning: `y` went above its max = 0.75 at t = ");
    assert!(t_y > 0.75 && t_y <= 0.76, "{t_y}");
    let t_x = number_after(&r.stderr, "warning: `x` went below its min = 0 at t = ");
    assert!(t_x > 1.0 && t_x <= 1.01, "{t_x}");
    contains(&r, "lowest value -2 at t = 3");
    contains(&r, "bounds.dae:2:3");
    contains(&r, "declared with min = 0");
    assert_eq!(r.stderr.matches("warning: `x`").count(), 1, "{}", r.stderr);
    // z = e^-t > 0 stays inside: no warning
    assert!(!r.stderr.contains("`z`"), "{}", r.stderr);
    contains(&r, "bounds: 2 variables left their min/max");
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let v = s["bound_violations"].as_array().unwrap();
    assert_eq!(v.len(), 2, "{v:?}");
    assert_eq!(v[0]["variable"], "y");
    assert_eq!(v[0]["bound"], "max");
    assert_eq!(v[0]["limit"], 0.75);
    assert_eq!(v[1]["variable"], "x");
    assert_eq!(v[1]["bound"], "min");
    let first = v[1]["first_time"].as_f64().unwrap();
    assert!(first > 1.0 && first <= 1.01, "{first}");
    let value = v[1]["first_value"].as_f64().unwrap();
    assert!((value - (1.0 - first)).abs() < 1e-9, "{value}");
    assert_eq!(v[1]["worst_time"], 3.0);
    assert!((v[1]["worst_value"].as_f64().unwrap() + 2.0).abs() < 1e-9);
    // the output points from 1.01 on, and the step ends among them
    let points = v[1]["points"].as_u64().unwrap();
    assert!((200..=260).contains(&points), "{points}");
    let (header, rows) = csv(&r.stdout);
    assert_eq!(header, ["time", "x", "y", "z"]);
    assert_eq!(rows.last().unwrap()[0], 3.0);
}

#[test]
fn bounds_error_stops_the_run_at_the_first_violation() {
    let m = model("bounds_error.dae", BOUNDED);
    let r = simulate(&m, &["--bounds", "error"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    let (_, tail) = r
        .stderr
        .split_once("error: integration failed: `y` = ")
        .unwrap_or_else(|| panic!("{}", r.stderr));
    let t = number_after(tail, " at t = ");
    assert!(t > 0.75 && t <= 0.76, "{t}");
    contains(
        &r,
        "is above its max = 0.75 (beyond the tolerance atol + rtol·|max| = 1.75e-6); the run stops at the first violation of a bound (--bounds error)",
    );
    contains(&r, "bounds_error.dae:3:3");
    contains(&r, "declared with max = 0.75");
    // partial results: up to the end of the step that crossed the bound
    let (_, rows) = csv(&r.stdout);
    let last = rows.last().unwrap()[0];
    assert!((0.75..3.0).contains(&last), "{last}");
    contains(
        &r,
        &format!("note: the results up to t = {last} were written"),
    );
    let r = simulate(&m, &["--bounds", "never"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    contains(&r, "unknown `--bounds never`: use warn or error");
}

#[test]
fn bounds_are_checked_by_the_second_order_method_too() {
    // x = 1 − t² leaves min = 0 at t = 1.
    let m = model(
        "bounds_second_order.dae",
        "model F\n  Real x(start = 1, fixed = true, min = 0);\nequation\n  der(der(x)) = -2;\n  annotation(experiment(StopTime = 2, Interval = 0.1));\nend F;\n",
    );
    let r = simulate(&m, &["--method", "radau-2nd"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let t = number_after(&r.stderr, "warning: `x` went below its min = 0 at t = ");
    assert!(t > 1.0 && t <= 1.1, "{t}");
    contains(&r, "lowest value -3 at t = 2");
    let r = simulate(&m, &["--method", "radau-2nd", "--bounds", "error"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    contains(&r, "is below its min = 0");
    // (the results up to the end of the step that crossed the bound)
    contains(&r, "note: the results up to t = ");
}

/// The normalized pendulum (projected-rk-index3-daes (4.1)) with its
/// energy as output variables: `E` from the kinetic and potential
/// energies `K` and `U` (outputs of outputs).
const PENDULUM_ENERGY: &str = "model PendulumEnergy\n  Real u1(start = 1);\n  Real u2(start = 0, fixed = true);\n  Real v1(start = 0);\n  Real v2(start = 0, fixed = true);\n  Real lambda(start = 0);\n  Real K \"kinetic energy\";\n  Real U \"potential energy\";\n  Real E(min = -0.5) \"energy\";\nequation\n  der(u1) = v1;\n  der(u2) = v2;\n  der(v1) = -2*u1*lambda;\n  der(v2) = -1 - 2*u2*lambda;\n  0 = u1^2 + u2^2 - 1;\n  K = 0.5*(v1^2 + v2^2);\n  U = u2;\n  2*E = 2*(K + U);\n  annotation(experiment(StopTime = 5, Tolerance = 1e-8, Interval = 0.05));\nend PendulumEnergy;\n";

#[test]
fn output_equations_are_evaluated_after_the_steps_for_projected_radau_and_ggl() {
    let m = model("pendulum_energy.dae", PENDULUM_ENERGY);
    for args in [
        &["--method", "radau5-projected"][..],
        &["--form", "ggl"],
        &[],
    ] {
        let mut all = args.to_vec();
        all.push("--verbose");
        let r = simulate(&m, &all);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        let (header, rows) = csv(&r.stdout);
        assert_eq!(
            header,
            ["time", "u1", "u2", "v1", "v2", "lambda", "K", "U", "E"]
        );
        assert_eq!(rows.len(), 101, "{args:?}");
        // evaluated from the other columns (to round-off), or integrated
        // with them (HiC, to the tolerance)
        let tol = if args.is_empty() { 1e-7 } else { 1e-14 };
        for row in &rows {
            let (u2, v1, v2) = (row[2], row[3], row[4]);
            let k = 0.5 * (v1 * v1 + v2 * v2);
            assert!((row[6] - k).abs() <= tol, "{args:?}: {row:?}");
            assert!((row[7] - u2).abs() <= tol, "{args:?}: {row:?}");
            assert!((row[8] - (k + u2)).abs() <= tol, "{args:?}: {row:?}");
            // energy conservation (E = 0 at the start)
            assert!(row[8].abs() < 1e-5, "{args:?}: {row:?}");
            assert!((row[1] * row[1] + u2 * u2 - 1.0).abs() < 1e-6, "{args:?}");
        }
        if args.is_empty() {
            // the HiC formulation integrates the output equations
            assert!(!r.stderr.contains("output equations"), "{}", r.stderr);
        } else {
            contains(&r, "output equations, evaluated after every step: K, U, E");
        }
    }
}

/// `n` decoupled scalar equations `der(x[k]) = rate·x[k]^power`.
fn many_odes(n: usize, rate: &str, power: u32, stop: &str) -> String {
    format!(
        "model Many\n  parameter Integer N = {n};\n  Real x[N](each start = 1, each fixed = true);\nequation\n  for k in 1:N loop\n    der(x[k]) = {rate}*x[k]^{power};\n  end for;\n  annotation(experiment(StopTime = {stop}));\nend Many;\n"
    )
}

/// `daec simulate` of `text` (written to `name`) with `args` and
/// `--stats-json`: the run and the statistics.
fn simulate_with_stats(name: &str, text: &str, args: &[&str]) -> (Run, serde_json::Value) {
    let m = model(name, text);
    let stats = m.with_extension("json");
    let mut all = args.to_vec();
    all.extend(["--stats-json", stats.to_str().unwrap()]);
    let r = simulate(&m, &all);
    let s = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    (r, s)
}

#[test]
fn dd_re_selects_its_dummies_without_a_size_limit() {
    // The re-selection of the dummy derivatives along the solution pivoted
    // the Σ-Jacobian densely and stopped above 200 unknowns (a warning and
    // a `limits` entry); the sparse choice has no limit.
    let dd = ["--form", "dd"];
    let (r, s) = simulate_with_stats("many_dd.dae", &many_odes(1000, "-1", 1, "0.01"), &dd);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("DD re-selection"), "{}", r.stderr);
    assert!(!r.stderr.contains("size limits applied"), "{}", r.stderr);
    assert_eq!(s["limits"], serde_json::json!([]));
}
