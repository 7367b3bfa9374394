//! `daec simulate`'s checks of values and its messages: non-finite start
//! values and parameters.

mod common;

use common::{Run, daec};
use std::path::{Path, PathBuf};

/// Writes `text` to a fresh model file in the temporary directory.
fn model(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("daec-checks-tests-{}", std::process::id()));
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
