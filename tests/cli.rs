//! The command line: exit codes, parameter overrides, JSON, output files.

mod common;

use common::daec;

const PENDULUM: &str = "models/steinbrecher/pendulum.dae";

#[test]
fn usage_errors_exit_2() {
    let r = daec(&["flatten"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let r = daec(&["frobnicate", PENDULUM]);
    assert_eq!(r.code, 2);
    let r = daec(&["flatten", "models/no/such/file.dae"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("cannot read `models/no/such/file.dae`"),
        "{}",
        r.stderr
    );
    let r = daec(&["flatten", PENDULUM, "-p", "m"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("is not NAME=VALUE"), "{}", r.stderr);
    let r = daec(&["flatten", PENDULUM, "-p", "m=heavy"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("`heavy` is not a number"), "{}", r.stderr);
}

#[test]
fn help_and_version_exit_0() {
    let r = daec(&["--help"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("flatten"));
    let r = daec(&["--version"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.starts_with("daec "));
}

#[test]
fn parameter_override_changes_the_value() {
    let r = daec(&["flatten", PENDULUM, "-p", "g=9.81", "-p", "l=2"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("parameter Real g = 9.81"), "{}", r.stdout);
    assert!(r.stdout.contains("parameter Real l = 2.0"), "{}", r.stdout);
    // Real parameters stay symbolic in the equations.
    assert!(r.stdout.contains("l^2"), "{}", r.stdout);
}

#[test]
fn unknown_override_is_an_error_with_a_suggestion() {
    let r = daec(&["flatten", PENDULUM, "-p", "gg=1"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("the model has no parameter `gg`"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("did you mean `g`?"), "{}", r.stderr);
}

#[test]
fn integer_override_resizes_arrays() {
    let r = daec(&[
        "flatten",
        "models/scale/pendulum_chain.dae",
        "-p",
        "N=3",
        "--format",
        "json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let n_unknowns = v["unknowns"].as_array().unwrap().len();
    let n_equations = v["equations"].as_array().unwrap().len();
    assert_eq!(n_unknowns, 7 * 3);
    assert_eq!(n_equations, 7 * 3);
    assert_eq!(v["parameters"]["N"], 3.0);
}

#[test]
fn json_has_the_documented_shape() {
    let r = daec(&["flatten", PENDULUM, "--format", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["model"], "Pendulum");
    let unknowns = v["unknowns"].as_array().unwrap();
    let names: Vec<&str> = unknowns
        .iter()
        .map(|u| u["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["x", "y", "v", "w", "lambda"]);
    assert_eq!(unknowns[0]["start"], 1.0);
    assert_eq!(unknowns[1]["fixed"], true);
    assert_eq!(v["equations"].as_array().unwrap().len(), 5);
    assert_eq!(v["parameters"]["g"], 13.750_371_637_329_455);
    assert_eq!(v["experiment"]["stop_time"], 2000.0);
    assert_eq!(v["experiment"]["tolerance"], 1e-7);
}

#[test]
fn output_file_is_written_and_not_on_errors() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("flat.dae");
    let out_s = out.to_str().unwrap();
    let r = daec(&["flatten", PENDULUM, "-o", out_s]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.is_empty());
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.starts_with("model Pendulum"));
    std::fs::remove_file(&out).unwrap();

    let bad = dir.join("bad.dae");
    std::fs::write(
        &bad,
        "model B\n  Real x;\nequation\n  der(x) = y;\nend B;\n",
    )
    .unwrap();
    let r = daec(&["flatten", bad.to_str().unwrap(), "-o", out_s]);
    assert_eq!(r.code, 1);
    assert!(
        !out.exists(),
        "an output file was written for a model with errors"
    );

    let r = daec(&["flatten", PENDULUM, "-o", "/nonexistent-dir/x/flat.dae"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("cannot write"), "{}", r.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn several_errors_are_reported_at_once() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-multi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("multi.dae");
    std::fs::write(
        &bad,
        "model M\n  parameter Real k = 2;\n  Real x;\n  Real y;\nequation\n  der(x) = lamda;\n  y = sin(x, 2) + der(k);\nend M;\n",
    )
    .unwrap();
    let r = daec(&["flatten", bad.to_str().unwrap()]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("cannot find `lamda`"), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("`sin` takes 1 argument, but 2 were given"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("`der` of a constant expression"),
        "{}",
        r.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn count_mismatch_names_counts_and_unused_unknowns() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-count-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("count.dae");
    std::fs::write(
        &bad,
        "model C\n  Real x;\n  Real y;\n  Real z[2];\nequation\n  der(x) = -x;\nend C;\n",
    )
    .unwrap();
    let r = daec(&["flatten", bad.to_str().unwrap()]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("the model has 1 equation but 4 unknowns"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("3 unknowns appear in no equation: `y`, `z[1]`, `z[2]`"),
        "{}",
        r.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Writes `text` to a fresh file in the temporary directory.
fn model_file(name: &str, text: &str) -> String {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-cli-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn boolean_overrides_fit_the_parameter_type() {
    let r = daec(&["flatten", "models/scale/pendulum_chain.dae", "-p", "N=true"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("`-p N=true`: `N` is not a Boolean parameter; give it a number"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty());
    let model = model_file(
        "flag.dae",
        "model F\n  parameter Boolean on = false;\n  Real x;\nequation\n  x = if on then 1 else 0;\nend F;\n",
    );
    let r = daec(&["flatten", &model, "-p", "on=1"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("`-p on=1`: `on` is a Boolean parameter; give it `true` or `false`"),
        "{}",
        r.stderr
    );
    let r = daec(&["flatten", &model, "-p", "on=true"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("parameter Boolean on = true;"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_model_too_large_to_expand_is_a_located_error() {
    let r = daec(&[
        "flatten",
        "models/scale/pendulum_chain.dae",
        "-p",
        "N=1000000000",
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stdout.is_empty());
    assert!(
        r.stderr
            .contains("error[E0115]: the model is too large: it has 7000000000 scalar unknowns"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("models/scale/pendulum_chain.dae:26:3"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("with -p N=1000000000"), "{}", r.stderr);
}

#[test]
fn ten_million_links_are_refused_with_the_number_of_unknowns() {
    for command in ["flatten", "analyze"] {
        let r = daec(&[command, "models/scale/pendulum_chain.dae", "-p", "N=1e7"]);
        assert_eq!(r.code, 1, "{command}: {}", r.stderr);
        assert!(r.stdout.is_empty(), "{command}: {}", r.stdout);
        assert!(
            r.stderr
                .contains("error[E0115]: the model is too large: it has 70000000 scalar unknowns"),
            "{command}: {}",
            r.stderr
        );
    }
}

#[test]
fn a_bad_experiment_annotation_is_a_model_error_also_with_a_command_line_value() {
    let model = model_file(
        "experiment.dae",
        "model E\n  Real x(start = 1);\nequation\n  der(x) = -x;\n  annotation(experiment(StopTime = -5, Tolerance = 0));\nend E;\n",
    );
    for extra in [&[][..], &["--t-end", "1", "--rtol", "1e-6"][..]] {
        let mut args = vec!["simulate", model.as_str()];
        args.extend_from_slice(extra);
        let r = daec(&args);
        assert_eq!(r.code, 1, "{extra:?}: {}", r.stderr);
        assert!(
            r.stderr
                .contains("`StopTime` (-5) must be after `StartTime` (0)"),
            "{}",
            r.stderr
        );
        assert!(r.stderr.contains("experiment.dae:5:36"), "{}", r.stderr);
        assert!(
            r.stderr.contains("`Tolerance` must be positive (it is 0)"),
            "{}",
            r.stderr
        );
        assert!(r.stderr.contains("experiment.dae:5:52"), "{}", r.stderr);
        assert!(
            !r.stderr.contains("invalid simulation options"),
            "{}",
            r.stderr
        );
    }
}

#[test]
fn quoted_names_are_printed_as_quoted_identifiers() {
    let model = model_file(
        "quoted.dae",
        "model 'q m'\n  parameter Real 'k\\n1' = 2;\n  Real 'a b'[2](each start = 1);\n  Real 'end';\nequation\n  der('a b') = -'k\\n1' * 'a b';\n  'end' = 'a b'[1];\nend 'q m';\n",
    );
    let r = daec(&["flatten", &model]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("  parameter Real 'k\\n1' = 2.0;\n"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("  'end' = 'a b'[1];\n"), "{}", r.stdout);
    let again = daec(&["flatten", &model_file("quoted_flat.dae", &r.stdout)]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(again.stdout, r.stdout);
    // The formulations print the same names.
    let r = daec(&["regularize", &model, "--form", "dd", "--emit", "modelica"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let emitted = daec(&["flatten", &model_file("quoted_dd.dae", &r.stdout)]);
    assert_eq!(emitted.code, 0, "{}\n{}", r.stdout, emitted.stderr);
    let r = daec(&["regularize", &model, "--form", "hic", "--emit", "text"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("'k\\n1'"), "{}", r.stdout);
    assert!(!r.stdout.contains("k\n1"), "{}", r.stdout);
}

#[test]
fn names_with_line_breaks_keep_the_report_and_the_csv_intact() {
    let model = model_file(
        "quoted_report.dae",
        "model 'r\\nm'\n  Real 'a\\nb'(start = 1);\n  Real 'x,y';\n  Real 'q\"\\r';\nequation\n  der('a\\nb') = -'a\\nb';\n  'x,y' = 2*'a\\nb';\n  'q\"\\r' = 'x,y' + 1;\nend 'r\\nm';\n",
    );
    let r = daec(&["analyze", &model]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.starts_with("model 'r\\nm': 3 equations"),
        "{}",
        r.stdout
    );
    // Every Σ row and the key stay one line each; the names are quoted
    // identifiers as `flatten` prints them.
    assert!(!r.stdout.contains("a\nb"), "{}", r.stdout);
    assert!(r.stdout.contains("'a\\nb'"), "{}", r.stdout);
    assert!(r.stdout.contains("'q\"\\r'"), "{}", r.stdout);
    let table: Vec<&str> = r
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("Signature matrix"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert!(table.len() >= 5, "{}", r.stdout);
    assert!(
        table[0].contains("'a\\nb'") && table[0].contains("'x,y'"),
        "{}",
        r.stdout
    );
    for row in &table[1..4] {
        assert!(
            row.ends_with(" |  0") || row.ends_with(" |  1"),
            "{row:?}\n{}",
            r.stdout
        );
    }
    // The CSV header quotes the raw names as RFC 4180 asks: one record.
    let r = daec(&["simulate", &model, "--t-end", "0.1", "--interval", "0.05"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .starts_with("time,\"a\nb\",\"x,y\",\"q\"\"\r\"\n0,"),
        "{:?}",
        r.stdout
    );
    // (the header's two lines and a row for each of t = 0, 0.05, 0.1)
    assert_eq!(r.stdout.matches('\n').count(), 5, "{:?}", r.stdout);
}
