//! Declared invariants (`annotation(__daec(invariant = true))`, issue #30
//! point 1): kept out of the square system, listed and checked by
//! `analyze`, enforced by `simulate` — as constraint rows of HiC and by
//! NDSolve's projection method (ndsolve-dae-tutorial, "ODEs with
//! Invariants", "Projection"; problem catalogue N5, N15).

mod common;

use common::daec;
use serde_json::Value;

const OSCILLATOR: &str = "models/ndsolve/oscillator_invariant.dae";
const OSCILLATOR_DECLARED: &str = "models/ndsolve/oscillator_invariant_declared.dae";
const PENDULUM: &str = "models/steinbrecher/pendulum.dae";
const PENDULUM_ENERGY: &str = "models/steinbrecher/pendulum_energy.dae";

/// A file of its own in the temporary directory, named after `what`.
fn temp(what: &str) -> std::path::PathBuf {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let k = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-invariants-{}-{k}-{what}", std::process::id()))
}

/// Runs `daec simulate MODEL ARGS… --stats-json FILE`, asserts success
/// and returns the CSV and the statistics.
fn simulate(model: &str, args: &[&str]) -> (String, Value) {
    let stats = temp("stats.json");
    let mut all = vec!["simulate", model];
    all.extend(args);
    all.extend(["--stats-json", stats.to_str().unwrap()]);
    let r = daec(&all);
    assert_eq!(r.code, 0, "{all:?}: {}", r.stderr);
    let s = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let _ = std::fs::remove_file(&stats);
    (r.stdout, s)
}

fn number(s: &Value, key: &str) -> f64 {
    s[key]
        .as_f64()
        .unwrap_or_else(|| panic!("no `{key}` in {s}"))
}

/// The oscillator's invariant `th'^2/2 − cos th + cos 1` at the last row
/// of a CSV with the columns `time, th, der(th)`.
fn oscillator_invariant_at_end(csv: &str) -> f64 {
    let last: Vec<f64> = csv
        .lines()
        .last()
        .unwrap()
        .split(',')
        .map(|x| x.parse().unwrap())
        .collect();
    let (th, om) = (last[1], last[2]);
    om * om / 2.0 - th.cos() + 1f64.cos()
}

#[test]
fn projection_keeps_the_oscillator_invariant_at_round_off_over_1000() {
    let over = ["--t-end", "1000", "--interval", "1000"];
    // without the invariant the default run drifts (issue #30: 1.3e-6)
    let (csv, _) = simulate(OSCILLATOR, &over);
    let drift = oscillator_invariant_at_end(&csv).abs();
    assert!(drift > 1e-7, "drift {drift:e}");
    let mut args = over.to_vec();
    args.extend(["--method", "projection"]);
    let (csv, s) = simulate(OSCILLATOR_DECLARED, &args);
    assert_eq!(number(&s, "invariants"), 1.0);
    assert!(number(&s, "projections") > 1000.0, "{s}");
    let kept = number(&s, "max_invariant_residual");
    assert!(kept < 1e-11, "max invariant residual {kept:e}");
    let end = oscillator_invariant_at_end(&csv).abs();
    assert!(end < 1e-11, "invariant at t = 1000: {end:e}");
}

#[test]
fn invariant_rows_keep_the_oscillator_invariant_over_1000() {
    // The default method with the invariant as a constraint row of HiC.
    // (Pivoted as a level-0 constraint, on der(th), it had no solution
    // once th overshot its turning point: the run spent its step
    // attempts at t = 127.3.)
    let (csv, s) = simulate(
        OSCILLATOR_DECLARED,
        &["--t-end", "1000", "--interval", "1000"],
    );
    let kept = number(&s, "max_invariant_residual");
    assert!(kept < 1e-9, "max invariant residual {kept:e}");
    assert!(oscillator_invariant_at_end(&csv).abs() < 1e-9);
    // the model's own constraints: none (the invariant row is not one)
    assert_eq!(number(&s, "constraints"), 0.0);
    assert_eq!(number(&s, "newton_failures"), 0.0, "{s}");
}

#[test]
fn the_pendulum_keeps_energy_and_constraints_within_1e_9_over_1000() {
    // (every component in the error test, as the step counts compare the
    // invariant rows' cost: with the index scaling a mechanical system
    // gets by default, the plain pendulum takes 38 002 accepted steps and
    // the one with its energy row 47 202 under radau5, 1.24 times)
    let over = [
        "--t-end",
        "1000",
        "--rtol",
        "1e-7",
        "--interval",
        "10",
        "--error-control",
        "all",
    ];
    let (_, plain) = simulate(PENDULUM, &over);
    assert!(plain.get("max_invariant_residual").is_none(), "{plain}");
    for method in ["projection", "radau5"] {
        let mut args = over.to_vec();
        args.extend(["--method", method]);
        let (_, s) = simulate(PENDULUM_ENERGY, &args);
        let energy = number(&s, "max_invariant_residual");
        let constraints = number(&s, "max_constraint_residual");
        assert!(energy < 1e-9, "{method}: energy {energy:e}");
        assert!(constraints < 1e-9, "{method}: constraints {constraints:e}");
        // the same three constraint levels as the model without energy
        assert_eq!(
            s["max_constraint_residual_by_level"]
                .as_array()
                .unwrap()
                .len(),
            3
        );
        let steps = number(&s, "steps_accepted");
        let plain_steps = number(&plain, "steps_accepted");
        assert!(steps < 1.2 * plain_steps, "{method}: {steps} steps");
    }
}

#[test]
fn invariants_are_not_counted_in_the_square_system() {
    let json = |model: &str| -> Value {
        let r = daec(&["analyze", model, "--format", "json"]);
        assert_eq!(r.code, 0, "{model}: {}", r.stderr);
        serde_json::from_str(&r.stdout).unwrap()
    };
    for (plain, declared) in [
        (OSCILLATOR, OSCILLATOR_DECLARED),
        (PENDULUM, PENDULUM_ENERGY),
    ] {
        let (a, b) = (json(plain), json(declared));
        for key in ["index", "dof", "offsets", "equations", "n_constraints"] {
            assert_eq!(a[key], b[key], "{declared}: {key}");
        }
        let inv = &b["invariants"][0];
        assert_eq!(inv["checked"], true, "{inv}");
        assert!(inv["residual"].as_f64().unwrap().abs() < 1e-12, "{inv}");
        assert_eq!(inv["derivative"]["vanishes"], true, "{inv}");
        assert!(a.get("invariants").is_none());
    }
    let text = daec(&["analyze", PENDULUM_ENERGY]);
    assert!(
        text.stdout
            .contains("I1: 0.5 * m * (v^2 + w^2) + g * m * y = 0"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout
            .contains("d/dt along the DAE vanishes at 4 points")
    );
    // flatten keeps the declaration
    let flat = daec(&["flatten", PENDULUM_ENERGY]);
    assert!(
        flat.stdout
            .contains("\"energy\" annotation(__daec(invariant = true));"),
        "{}",
        flat.stdout
    );
}

/// `model` with `from` replaced by `to`, in a temporary file.
fn variant(model: &str, from: &str, to: &str) -> std::path::PathBuf {
    let text = std::fs::read_to_string(common::root().join(model)).unwrap();
    assert!(text.contains(from), "{from}");
    let path = temp("model.dae");
    std::fs::write(&path, text.replace(from, to)).unwrap();
    path
}

#[test]
fn a_wrong_annotation_is_a_located_diagnostic() {
    let cases = [
        (
            "annotation(__daec(invariant = true))",
            "annotation(__daec(conserved = true))",
            "unknown `__daec` setting `conserved`",
        ),
        (
            "annotation(__daec(invariant = true))",
            "annotation(__daec(invariant = 2.5))",
            "`invariant` must be `true` or `false`",
        ),
        (
            "annotation(__daec(invariant = true))",
            "annotation(__daec(invariant))",
            "`invariant` needs a value",
        ),
        (
            "der(th) = 0;",
            "der(th) = 0 annotation(__daec(invariant = true));",
            "an initial equation cannot be declared an invariant",
        ),
    ];
    for (from, to, message) in cases {
        let path = variant(OSCILLATOR_DECLARED, from, to);
        let r = daec(&["flatten", path.to_str().unwrap()]);
        let _ = std::fs::remove_file(&path);
        assert_eq!(r.code, 1, "{to}: {}", r.stderr);
        assert!(r.stderr.contains("error[E0112]"), "{}", r.stderr);
        assert!(r.stderr.contains(message), "{to}: {}", r.stderr);
        assert!(r.stderr.contains("model.dae:"), "{}", r.stderr);
    }
    // an invariant declared false is an equation again: one too many
    let path = variant(OSCILLATOR_DECLARED, "invariant = true", "invariant = false");
    let r = daec(&["flatten", path.to_str().unwrap()]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("too many equations"), "{}", r.stderr);
}

#[test]
fn an_invariant_inconsistent_at_the_start_is_an_explained_error() {
    let path = variant(OSCILLATOR_DECLARED, "= -cos(1) \"the", "= -cos(0.9) \"the");
    let p = path.to_str().unwrap();
    let r = daec(&["simulate", p, "--t-end", "1"]);
    let a = daec(&["analyze", p]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("does not hold at the consistent initial point (t = 0)"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("model.dae:19:3"), "{}", r.stderr);
    // analyze warns and goes on
    assert_eq!(a.code, 0, "{}", a.stderr);
    assert!(a.stderr.contains("warning[W0204]"), "{}", a.stderr);
    assert!(a.stderr.contains("does not hold"), "{}", a.stderr);
}

#[test]
fn analyze_reports_a_relation_whose_derivative_does_not_vanish() {
    // twice the potential energy: 0 at the start, not conserved
    let path = variant(PENDULUM_ENERGY, "m*g*y = 0", "2*m*g*y = 0");
    let r = daec(&["analyze", path.to_str().unwrap()]);
    let _ = std::fs::remove_file(&path);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("warning[W0204]"), "{}", r.stderr);
    assert!(
        r.stderr.contains("does not vanish along the DAE"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.contains("d/dt along the DAE does NOT vanish"));
}

#[test]
fn the_projection_method_is_refused_on_forms_it_cannot_project() {
    let r = daec(&[
        "simulate",
        PENDULUM_ENERGY,
        "--method",
        "projection",
        "--form",
        "ste",
        "--t-end",
        "1",
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("use --form hic"), "{}", r.stderr);
}

#[test]
fn regularize_carries_the_invariants_in_every_emit() {
    let run = |form: &str, emit: &str| -> String {
        let r = daec(&[
            "regularize",
            PENDULUM_ENERGY,
            "--form",
            form,
            "--emit",
            emit,
        ]);
        assert_eq!(r.code, 0, "{form} {emit}: {}", r.stderr);
        r.stdout
    };
    let energy = "0 = 0.5 * m * (v^2 + w^2) + g * m * y";
    // text: rows after the equations, saying what simulate does with them
    let ste = run("ste", "text");
    assert!(
        ste.contains("invariants (declared; not rows of this form: daec simulate measures them, it does not enforce them):"),
        "{ste}"
    );
    assert!(ste.contains("I1 (invariant)"), "{ste}");
    assert!(ste.contains(energy), "{ste}");
    let hic = run("hic", "text");
    assert!(
        hic.contains("invariants (declared; daec simulate adds them as constraint rows):"),
        "{hic}"
    );
    // json: a field
    for (form, how) in [("dd", "measured"), ("ada", "rows")] {
        let v: Value = serde_json::from_str(&run(form, "json")).unwrap();
        assert_eq!(v["invariants"][0]["equation"], energy, "{form}");
        assert_eq!(v["invariants"][0]["description"], "energy", "{form}");
        assert_eq!(v["invariants"][0]["enforcement"], how, "{form}");
    }
    let plain: Value = serde_json::from_str(
        &daec(&["regularize", PENDULUM, "--form", "dd", "--emit", "json"]).stdout,
    )
    .unwrap();
    assert!(plain.get("invariants").is_none());
    // modelica: the annotated equation, which daec reads back as an
    // invariant of the square model
    let flat = run("ste", "modelica");
    assert!(
        flat.contains("\"energy\" annotation(__daec(invariant = true));"),
        "{flat}"
    );
    let file = temp("ste.dae");
    std::fs::write(&file, &flat).unwrap();
    let r = daec(&["analyze", file.to_str().unwrap(), "--format", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["invariants"].as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(v["invariants"][0]["checked"], true, "{v}");
    assert_eq!(v["invariants"][0]["residual"], 0.0, "{v}");
    let _ = std::fs::remove_file(&file);
    // rust: N_INVARIANTS and `invariants(t, z, out)` (compiled and
    // compared with the tapes by tests/emit_rust.rs)
    let rust = run("ggl", "rust");
    assert!(
        rust.contains("pub const N_INVARIANTS: usize = 1;"),
        "{rust}"
    );
    assert!(
        rust.contains("pub fn invariants(&self, t: f64, z: &[f64], out: &mut [f64])"),
        "{rust}"
    );
}

#[test]
fn the_summary_says_whether_the_invariants_are_enforced_or_measured() {
    let over = ["--t-end", "10", "--interval", "10", "--rtol", "1e-7"];
    let with = |extra: &[&str]| {
        let args: Vec<&str> = over.iter().chain(extra).copied().collect();
        simulate(PENDULUM_ENERGY, &args).1
    };
    // HiC (the default) and ADA: rows; the projection method: projection
    for (extra, how) in [
        (&[][..], "rows"),
        (&["--form", "ada"][..], "rows"),
        (&["--method", "projection"][..], "projection"),
    ] {
        let s = with(extra);
        assert_eq!(s["invariant_enforcement"], how, "{extra:?}");
        assert!(
            number(&s, "max_invariant_residual") < 1e-8,
            "{extra:?}: {s}"
        );
    }
    // the square forms carry no rows for them: measured, and it shows
    for form in ["ste", "dd", "ggl", "di1"] {
        let s = with(&["--form", form]);
        assert_eq!(s["invariant_enforcement"], "measured", "{form}");
        assert!(number(&s, "max_invariant_residual") > 1e-9, "{form}: {s}");
    }
    let r = daec(&[
        "simulate",
        PENDULUM_ENERGY,
        "--form",
        "ste",
        "--t-end",
        "1",
        "-o",
        temp("ste.csv").to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("(1 invariant; measured, not enforced:")
            || r.stderr.contains("(1 invariant; measured, not enforced:"),
        "{}{}",
        r.stdout,
        r.stderr
    );
    // the second-order methods integrate the equations as written: the
    // invariant is measured on their steps (it was not reported at all)
    for method in ["radau-2nd", "bdf-2nd"] {
        let (_, s) = simulate(
            OSCILLATOR_DECLARED,
            &["--method", method, "--t-end", "10", "--interval", "10"],
        );
        assert_eq!(s["invariants"], 1, "{method}");
        assert_eq!(s["invariant_enforcement"], "measured", "{method}");
        let r = number(&s, "max_invariant_residual");
        assert!(r > 0.0 && r < 1e-3, "{method}: {r}");
    }
    // no invariants, no field
    let (_, s) = simulate(PENDULUM, &over);
    assert!(s.get("invariant_enforcement").is_none());
}
