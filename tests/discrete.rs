//! Discrete-time variables and the event operators end to end (MLS 3.6
//! chapter 8): `discrete Real`, `Integer` and `Boolean` variables assigned
//! in `when` clauses, `pre`, `edge`, `change`, vector conditions,
//! `elsewhen` priority, Boolean definitions as zero crossings, the event
//! iteration and its limit, the balance of the discrete variables, and
//! their CSV columns — checked against closed forms.

mod common;

use common::{Csv, daec};
use std::path::{Path, PathBuf};

/// Writes a model (`ext`: `dae` or `mo`) into the temporary directory.
fn model(name: &str, ext: &str, text: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-discrete-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.{ext}"));
    std::fs::write(&path, text).unwrap();
    path
}

/// `daec simulate` on every accepted step and both sides of each event.
fn simulate(path: &Path, extra: &[&str]) -> (i32, Csv, String) {
    let mut args = vec![
        "simulate",
        path.to_str().unwrap(),
        "--grid",
        "steps",
        "--rtol",
        "1e-9",
    ];
    args.extend_from_slice(extra);
    let r = daec(&args);
    let csv = if r.code == 0 {
        Csv::parse(&r.stdout)
    } else {
        Csv {
            header: Vec::new(),
            rows: Vec::new(),
        }
    };
    (r.code, csv, r.stderr)
}

/// The times at which column `name` changes, with the value after.
fn changes(csv: &Csv, name: &str) -> Vec<(f64, f64)> {
    let c = csv.col(name);
    csv.rows
        .windows(2)
        .filter(|w| w[0][c] != w[1][c])
        .map(|w| (w[1][0], w[1][c]))
        .collect()
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1.0)
}

const COUNTER: &str = "model Counter
  Real x(start = 0, fixed = true);
  Integer n(start = 0);
  discrete Real y(start = 1);
  Boolean big;
equation
  der(x) = 1 + n;
  when x > 1 + 2*pre(n) then
    n = pre(n) + 1;
    y = 2*x;
  end when;
  when n >= 2 then
    big = true;
  end when;
  annotation(experiment(StopTime = 3));
end Counter;
";

/// `n` counts the crossings of `x = 1 + 2n` while `ẋ = 1 + n`: x = t up
/// to 1, then slope 2 up to 3 (t = 2), then slope 3 up to 5 (t = 8/3);
/// `y = 2x` at each event; `big` from the event that makes `n = 2`
/// (event iteration: `n >= 2` becomes true in the round after).
#[test]
fn a_counter_is_assigned_at_its_events() {
    let path = model("counter", "dae", COUNTER);
    let (code, csv, err) = simulate(&path, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(csv.header, ["time", "x", "n", "y", "big"]);
    let n = changes(&csv, "n");
    assert_eq!(n.len(), 3, "{n:?}");
    for ((t, v), (te, ve)) in n.iter().zip([(1.0, 1.0), (2.0, 2.0), (8.0 / 3.0, 3.0)]) {
        assert!(close(*t, te, 1e-6), "n changes at {t}, expected {te}");
        assert_eq!(*v, ve);
    }
    let y = changes(&csv, "y");
    let want = [2.0, 6.0, 10.0];
    assert_eq!(y.len(), 3, "{y:?}");
    for ((_, v), w) in y.iter().zip(want) {
        assert!(close(*v, w, 1e-6), "y = {v}, expected {w}");
    }
    let big = changes(&csv, "big");
    assert_eq!(big.len(), 1, "{big:?}");
    assert!(close(big[0].0, 2.0, 1e-6) && big[0].1 == 1.0, "{big:?}");
    // between events the discrete values are held
    let last = csv.rows.last().unwrap();
    assert!(close(last[0], 3.0, 1e-12));
    assert!(close(last[1], 5.0 + 4.0 * (3.0 - 8.0 / 3.0), 1e-6));
}

/// The thermostat: heating `Ṫ = 40 − T` from 15 until T = 22, cooling
/// `Ṫ = 10 − T` until T = 18, and so on; `on` is a Boolean state set by a
/// vector condition, and `change(on)` counts the switches.
#[test]
fn a_thermostat_switches_at_its_thresholds() {
    let text = "model Thermostat
  Real T(start = 15, fixed = true);
  Boolean on(start = true);
  Integer switches(start = 0);
equation
  der(T) = (if on then 40 else 10) - T;
  when {T > 22, T < 18} then
    on = T < 18;
  end when;
  when change(on) then
    switches = pre(switches) + 1;
  end when;
  annotation(experiment(StopTime = 2));
end Thermostat;
";
    let path = model("thermostat", "dae", text);
    let (code, csv, err) = simulate(&path, &[]);
    assert_eq!(code, 0, "{err}");
    let heat = (25.0f64 / 18.0).ln();
    let cool = (12.0f64 / 8.0).ln();
    let reheat = (22.0f64 / 18.0).ln();
    let on = changes(&csv, "on");
    let want = [(heat, 0.0), (heat + cool, 1.0), (heat + cool + reheat, 0.0)];
    assert!(on.len() >= 3, "{on:?}");
    for ((t, v), (te, ve)) in on.iter().zip(want) {
        assert!(close(*t, te, 1e-6), "`on` switches at {t}, expected {te}");
        assert_eq!(*v, ve);
    }
    let switches = changes(&csv, "switches");
    assert_eq!(switches.len(), on.len());
    assert_eq!(switches.last().unwrap().1, on.len() as f64);
}

/// A `.mo` model: a Boolean defined by a relation outside `when`
/// (`Boolean below = x < 0.5`) is a zero crossing, `edge` of it fires
/// once; `x = e^{−t}` reaches 0.5 at ln 2, then relaxes to 1.
#[test]
fn a_boolean_definition_is_a_zero_crossing_in_a_mo_model() {
    let text = "model Sampler
  Real x(start = 1, fixed = true);
  discrete Real u(start = 0);
  Boolean below = x < 0.5;
  Integer k(start = 0);
equation
  der(x) = -x + u;
  when edge(below) then
    k = pre(k) + 1;
    u = 1;
  end when;
  annotation(experiment(StopTime = 2));
end Sampler;
";
    let path = model("Sampler", "mo", text);
    let (code, csv, err) = simulate(&path, &[]);
    assert_eq!(code, 0, "{err}");
    let k = changes(&csv, "k");
    assert_eq!(k.len(), 1, "{k:?}");
    assert!(close(k[0].0, 2f64.ln(), 1e-6), "{k:?}");
    let last = csv.rows.last().unwrap();
    let want = 1.0 - 0.5 * (2f64.ln() - 2.0).exp();
    assert!(close(last[csv.col("x")], want, 1e-5), "{last:?}");
    assert_eq!(last[csv.col("u")], 1.0);
}

/// Of the branches of one `when` statement whose conditions rise at the
/// same instant only the first fires (MLS 3.6 §8.3.5).
#[test]
fn the_first_rising_branch_of_elsewhen_wins() {
    let text = "model Priority
  Real x(start = 0, fixed = true);
  Integer n(start = 0);
  Integer m(start = 0);
equation
  der(x) = 1;
  when x > 1 then
    n = 1;
    m = pre(m) + 1;
  elsewhen x > 0.999999999 + 0.000000001 then
    n = 2;
    m = pre(m) + 10;
  end when;
  annotation(experiment(StopTime = 2));
end Priority;
";
    let path = model("priority", "dae", text);
    let (code, csv, err) = simulate(&path, &[]);
    assert_eq!(code, 0, "{err}");
    let last = csv.rows.last().unwrap();
    assert_eq!(last[csv.col("n")], 1.0);
    assert_eq!(last[csv.col("m")], 1.0);
}

/// Two clauses that set each other off at one instant forever: the event
/// iteration stops after its limit with exit 3, naming the time and the
/// discrete variables that keep changing.
#[test]
fn an_event_iteration_that_does_not_settle_is_an_error() {
    let text = "model Loop
  Real x(start = 0, fixed = true);
  Boolean a(start = false);
  Boolean b(start = false);
equation
  der(x) = 1;
  when change(b) then
    a = not pre(a);
  end when;
  when {x > 1, change(a)} then
    b = not pre(b);
  end when;
  annotation(experiment(StopTime = 2));
end Loop;
";
    let path = model("loop", "dae", text);
    let r = daec(&["simulate", path.to_str().unwrap()]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        r.stderr.contains("the event iteration at t = 1"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("after 100 rounds"), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("the discrete variables keep changing: a = ")
            || r.stderr
                .contains("the discrete variables keep changing: b = "),
        "{}",
        r.stderr
    );
}

/// A discrete variable that no `when` clause assigns is unbalanced
/// (`E0108`); one assigned in two `when` statements is `E0114`.
#[test]
fn discrete_variables_need_one_defining_when_statement() {
    let unassigned = model(
        "unassigned",
        "dae",
        "model U\n  Real x(start = 0, fixed = true);\n  Integer n;\nequation\n  der(x) = n;\nend U;\n",
    );
    let r = daec(&["simulate", unassigned.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("E0108"), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("the discrete variable `n` has no equation"),
        "{}",
        r.stderr
    );
    let twice = model(
        "twice",
        "dae",
        "model T\n  Real x(start = 0, fixed = true);\n  Integer n;\nequation\n  der(x) = 1;\n  when x > 1 then n = 1; end when;\n  when x > 2 then n = 2; end when;\nend T;\n",
    );
    let r = daec(&["simulate", twice.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("E0114"), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("`n` is assigned in two `when` statements"),
        "{}",
        r.stderr
    );
    let branches = model(
        "branches",
        "dae",
        "model B\n  Real x(start = 0, fixed = true);\n  Integer n;\n  Integer m;\nequation\n  der(x) = 1;\n  when x > 1 then n = 1; m = 1; elsewhen x > 2 then n = 2; end when;\nend B;\n",
    );
    let r = daec(&["simulate", branches.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("the branches of a `when` statement assign different variables"),
        "{}",
        r.stderr
    );
}

/// `pre` of an expression is an error at the argument; `edge` of a
/// number is a type error.
#[test]
fn event_operators_take_variables() {
    let bad = model(
        "badpre",
        "dae",
        "model P\n  Real x(start = 0, fixed = true);\n  Integer n;\nequation\n  der(x) = 1;\n  when x > 1 then n = pre(n + 1); end when;\nend P;\n",
    );
    let r = daec(&["simulate", bad.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("the argument of `pre` must be a variable"),
        "{}",
        r.stderr
    );
    let edge = model(
        "badedge",
        "dae",
        "model E\n  Real x(start = 0, fixed = true);\n  Integer n;\nequation\n  der(x) = 1;\n  when edge(x) then n = 1; end when;\nend E;\n",
    );
    let r = daec(&["simulate", edge.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("E0109"), "{}", r.stderr);
}

/// `flatten` prints discrete declarations, assignments, `pre` and
/// `elsewhen`, and reads its own output back to the same text.
#[test]
fn flatten_of_discrete_variables_is_idempotent() {
    let path = model("counter_flat", "dae", COUNTER);
    let once = daec(&["flatten", path.to_str().unwrap()]);
    assert_eq!(once.code, 0, "{}", once.stderr);
    assert!(
        once.stdout.contains("  Integer n(start = 0);"),
        "{}",
        once.stdout
    );
    assert!(
        once.stdout.contains("  discrete Real y(start = 1.0);"),
        "{}",
        once.stdout
    );
    assert!(
        once.stdout.contains("    n = pre(n) + 1;"),
        "{}",
        once.stdout
    );
    let again_path = model("counter_flat2", "dae", &once.stdout);
    let twice = daec(&["flatten", again_path.to_str().unwrap()]);
    assert_eq!(twice.code, 0, "{}", twice.stderr);
    assert_eq!(once.stdout, twice.stdout);
}

/// `--vars` selects discrete columns like any other.
#[test]
fn vars_selects_discrete_columns() {
    let path = model("counter_vars", "dae", COUNTER);
    let text = plot(&path, "n,big");
    assert!(text.contains("big"), "no `big` in the plot");
}

/// The SVG of `daec simulate --plot … --vars VARS` (which succeeds).
fn plot(path: &Path, vars: &str) -> String {
    let stem = path.file_stem().unwrap().to_str().unwrap();
    let svg = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-discrete-{stem}-{}.svg", std::process::id()));
    let r = daec(&[
        "simulate",
        path.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
        "--vars",
        vars,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    std::fs::read_to_string(&svg).unwrap()
}

const SAMPLED: &str = "model Sampled
  parameter Real Ts = 0.1;
  Real x(start = 1, fixed = true);
  discrete Real u(start = 0);
  Integer k(start = 0);
  Integer i0(start = 5);
equation
  der(x) = u;
  when sample(0, Ts) then
    u = -2*x;
    k = pre(k) + 1;
  end when;
  when initial() then
    i0 = 7;
  end when;
  annotation(experiment(StopTime = 0.95));
end Sampled;
";

/// A sampled controller: `sample(0, Ts)` fires at the start and at every
/// multiple of `Ts`, where `u` holds `−2x`; between samples `ẋ = u`, so
/// `x(kTs) = 0.8^k` exactly. `when initial()` fires once, at the start.
#[test]
fn sample_fires_at_its_times_and_initial_at_the_start() {
    let path = model("sampled", "dae", SAMPLED);
    let (code, csv, err) = simulate(&path, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(csv.header, ["time", "x", "u", "k", "i0"]);
    // the first row is after the start's events
    assert_eq!(csv.value(0, "k"), 1.0);
    assert_eq!(csv.value(0, "u"), -2.0);
    assert_eq!(csv.value(0, "i0"), 7.0);
    let k = changes(&csv, "k");
    assert_eq!(k.len(), 9, "{k:?}");
    for (i, (t, v)) in k.iter().enumerate() {
        let step = (i + 1) as f64;
        assert!(close(*t, 0.1 * step, 1e-12), "sample {i} at {t}");
        assert_eq!(*v, step + 1.0);
    }
    let x = csv.col("x");
    for (i, &(t, _)) in k.iter().enumerate() {
        let row = csv.rows.iter().find(|r| r[0] == t).unwrap();
        let want = 0.8f64.powi(i as i32 + 1);
        assert!(
            close(row[x], want, 1e-9),
            "x({t}) = {}, expected {want}",
            row[x]
        );
    }
    assert!(changes(&csv, "i0").is_empty());
}

/// `sample` outside a `when` condition (MLS 3.6 §3.7.5): a Boolean
/// defined by it, `tick = sample(0, 0.1)`, is true at the sample instants
/// and false between them, so `when tick` counts 10 ticks in [0, 0.95]
/// (the first at the start) and the clauses on `tick and x > 0.55` and
/// `sample(0, 0.1) and x > 0.55` count the 4 after x = t passes 0.55;
/// `y`, integrating `if sample(0, 0.25) then 1 else 0`, stays 0, the
/// condition being true at instants only.
#[test]
fn sample_outside_when_is_true_at_its_instants() {
    let text = "model S
  Real x(start = 0, fixed = true);
  Real y(start = 0, fixed = true);
  Boolean tick = sample(0, 0.1);
  Integer n(start = 0);
  Integer m(start = 0);
  Integer m2(start = 0);
equation
  der(x) = 1;
  der(y) = if sample(0, 0.25) then 1 else 0;
  when tick then
    n = pre(n) + 1;
  end when;
  when tick and x > 0.55 then
    m = pre(m) + 1;
  end when;
  when sample(0, 0.1) and x > 0.55 then
    m2 = pre(m2) + 1;
  end when;
  annotation(experiment(StopTime = 0.95));
end S;
";
    let path = model("sample_outside", "mo", text);
    let (code, csv, err) = simulate(&path, &[]);
    assert_eq!(code, 0, "{err}");
    let last = csv.rows.last().unwrap();
    assert_eq!(last[csv.col("n")], 10.0, "{last:?}");
    assert_eq!(last[csv.col("m")], 4.0, "{last:?}");
    // (the sample of a larger condition advances on its own, not only
    // when its clause fires: 4 ticks, not one firing where x crosses)
    assert_eq!(last[csv.col("m2")], 4.0, "{last:?}");
    let n = changes(&csv, "n");
    assert_eq!(n.len(), 9, "{n:?}");
    for (i, (t, _)) in n.iter().enumerate() {
        assert!(close(*t, 0.1 * (i + 1) as f64, 1e-12), "tick {i} at {t}");
    }
    assert!(last[csv.col("y")].abs() < 1e-9, "{last:?}");
    assert!(csv.rows.iter().all(|r| r[csv.col("tick")] == 0.0));
}

/// `sample` where it is still refused (`E0006`, located): in the body of
/// a `when` and in a parameter's value.
#[test]
fn sample_in_a_when_body_or_a_parameter_is_an_error() {
    for (name, body, message) in [
        (
            "sample_body",
            "  Boolean b;\nequation\n  der(x) = 1;\n  when x > 1 then b = sample(0, 1); end when;\n",
            "`sample` inside a `when` clause is supported in its condition only",
        ),
        (
            "sample_param",
            "  parameter Boolean b = sample(0, 1);\nequation\n  der(x) = 1;\n",
            "`sample` is not a constant",
        ),
    ] {
        let text = format!("model S\n  Real x(start = 0, fixed = true);\n{body}end S;\n");
        let path = model(name, "dae", &text);
        let r = daec(&["simulate", path.to_str().unwrap()]);
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert!(r.stderr.contains("E0006"), "{}", r.stderr);
        assert!(r.stderr.contains(message), "{}", r.stderr);
        assert!(r.stderr.contains(&format!("{name}.dae:")), "{}", r.stderr);
    }
}

/// `flatten` writes a `sample` as its next-time variable and reads it
/// back to the same text.
#[test]
fn flatten_of_sample_and_initial_is_idempotent() {
    let path = model("sampled_flat", "dae", SAMPLED);
    let once = daec(&["flatten", path.to_str().unwrap()]);
    assert_eq!(once.code, 0, "{}", once.stderr);
    assert!(
        once.stdout.contains("  when initial() then"),
        "{}",
        once.stdout
    );
    let again_path = model("sampled_flat2", "dae", &once.stdout);
    let twice = daec(&["flatten", again_path.to_str().unwrap()]);
    assert_eq!(twice.code, 0, "{}", twice.stderr);
    assert_eq!(once.stdout, twice.stdout);
    let (code, csv, err) = simulate(&again_path, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(changes(&csv, "k").len(), 9);
}

const TERMINAL: &str = "model Terminal
  Real x(start = 0, fixed = true);
  discrete Real xEnd(start = -1);
  Integer n(start = 0);
equation
  der(x) = 1;
  when terminal() then
    xEnd = x;
    n = pre(n) + 1;
  end when;
  annotation(experiment(StopTime = 2));
end Terminal;
";

/// `when terminal()` fires once, at the end of the run (MLS 3.6 §3.7.5):
/// its assignments show in the last row only (x = t reaches 2 there), and
/// `flatten` prints the condition back, and a `.mo` file takes it. With `terminate` at t = 1.5 the
/// end is there.
#[test]
fn terminal_fires_once_at_the_end() {
    let path = model("terminal", "dae", TERMINAL);
    let (code, csv, err) = simulate(&path, &[]);
    assert_eq!(code, 0, "{err}");
    let last = csv.rows.len() - 1;
    assert!(last > 2, "{} rows", csv.rows.len());
    assert_eq!(csv.value(last, "time"), 2.0);
    assert!(
        close(csv.value(last, "xEnd"), 2.0, 1e-9),
        "{}",
        csv.value(last, "xEnd")
    );
    assert_eq!(csv.value(last, "n"), 1.0);
    for row in 0..last {
        assert_eq!(csv.value(row, "xEnd"), -1.0, "row {row}");
        assert_eq!(csv.value(row, "n"), 0.0, "row {row}");
    }
    let flat = daec(&["flatten", path.to_str().unwrap()]);
    assert_eq!(flat.code, 0, "{}", flat.stderr);
    assert!(
        flat.stdout.contains("  when terminal() then"),
        "{}",
        flat.stdout
    );
    let again = model("terminal_flat", "dae", &flat.stdout);
    let (code, csv2, err) = simulate(&again, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(csv2.value(csv2.rows.len() - 1, "n"), 1.0);
    // the same model as Modelica
    let mo = model("terminal_mo", "mo", TERMINAL);
    let (code, csv3, err) = simulate(&mo, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(csv3.value(csv3.rows.len() - 1, "n"), 1.0);
    assert_eq!(csv3.value(csv3.rows.len() - 2, "n"), 0.0);
    let stopped = TERMINAL.replace(
        "  when terminal() then",
        "  when x > 1.5 then\n    terminate(\"done\");\n  end when;\n  when terminal() then",
    );
    let path = model("terminal_terminate", "dae", &stopped);
    let (code, csv, err) = simulate(&path, &[]);
    assert_eq!(code, 0, "{err}");
    let last = csv.rows.len() - 1;
    assert!(close(csv.value(last, "time"), 1.5, 1e-9));
    assert!(
        close(csv.value(last, "xEnd"), 1.5, 1e-9),
        "{}",
        csv.value(last, "xEnd")
    );
    assert_eq!(csv.value(last, "n"), 1.0);
    assert_eq!(csv.value(last - 1, "n"), 0.0);
}

/// `terminate(message)` in a `when` clause ends the run successfully at
/// its event (x = t reaches 1.5): exit 0, the message and the time on
/// stderr, the CSV ends there with the clause's assignment.
#[test]
fn terminate_ends_the_run_at_its_event() {
    let text = "model Term
  Real x(start = 0, fixed = true);
  Integer n(start = 0);
equation
  der(x) = 1;
  when x > 1.5 then
    n = 1;
    terminate(\"x passed 1.5\");
  end when;
  annotation(experiment(StopTime = 3));
end Term;
";
    let path = model("term", "dae", text);
    let r = daec(&["simulate", path.to_str().unwrap(), "--grid", "steps"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("the model terminated the run at t = 1.5"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains(": x passed 1.5"), "{}", r.stderr);
    let csv = Csv::parse(&r.stdout);
    let last = csv.rows.last().unwrap();
    assert!(close(last[0], 1.5, 1e-9), "{last:?}");
    assert_eq!(last[csv.col("n")], 1.0);
    let outside = model(
        "term_outside",
        "dae",
        "model T\n  Real x(start = 0, fixed = true);\nequation\n  der(x) = 1;\n  terminate(\"no\");\nend T;\n",
    );
    let r = daec(&["simulate", outside.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("`terminate` is only allowed inside `when`"),
        "{}",
        r.stderr
    );
}

/// `assert` is checked after every accepted step: an error is exit 3 with
/// its message, the time and its line; `AssertionLevel.warning` warns
/// once and the run goes on.
#[test]
fn assert_is_checked_during_the_run() {
    let text = "model As
  Real x(start = 0, fixed = true);
equation
  der(x) = 1;
  assert(x < 0.5, \"x is at least 0.5\", AssertionLevel.warning);
  assert(x < 1.2, \"x is too large\");
  annotation(experiment(StopTime = 3));
end As;
";
    let path = model("asserts", "dae", text);
    let r = daec(&["simulate", path.to_str().unwrap(), "--max-step", "0.01"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert_eq!(
        r.stderr
            .matches("warning: assertion failed at t = ")
            .count(),
        1,
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains(": x is at least 0.5"), "{}", r.stderr);
    assert!(
        r.stderr.contains("assertion failed at t = 1.2"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains(": x is too large"), "{}", r.stderr);
    assert!(r.stderr.contains("asserts.dae:6:3"), "{}", r.stderr);
    let t: f64 = r
        .stderr
        .split("warning: assertion failed at t = ")
        .nth(1)
        .and_then(|x| x.split(':').next())
        .and_then(|x| x.parse().ok())
        .unwrap();
    assert!((0.5..0.52).contains(&t), "the warning at {t}");
    // only the warning: the run ends normally
    let warn_only = model("assert_warning", "dae", &text.replace("x < 1.2", "x < 10"));
    let r = daec(&["simulate", warn_only.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("warning: assertion failed"),
        "{}",
        r.stderr
    );
    let flat = daec(&["flatten", path.to_str().unwrap()]);
    assert!(
        flat.stdout
            .contains("  assert(x < 0.5, \"x is at least 0.5\", AssertionLevel.warning);"),
        "{}",
        flat.stdout
    );
}

/// An array of discrete variables: assigned as a whole in a `when`
/// clause, one CSV column per element, flattened as one declaration that
/// reads back to the same text.
#[test]
fn arrays_of_discrete_variables_are_assigned_and_flattened() {
    let text = "model Arr
  Real x(start = 0, fixed = true);
  Integer n[2](start = {1, 2});
equation
  der(x) = n[1] + n[2];
  when x > 1 then
    n = {pre(n[1]) + 1, 5};
  end when;
  annotation(experiment(StopTime = 2));
end Arr;
";
    let path = model("arr", "dae", text);
    let (code, csv, err) = simulate(&path, &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(csv.header, ["time", "x", "n[1]", "n[2]"]);
    // ẋ = 3 until x = 1 (t = 1/3), then 7
    let n1 = changes(&csv, "n[1]");
    assert_eq!(n1.len(), 1, "{n1:?}");
    assert!(close(n1[0].0, 1.0 / 3.0, 1e-7) && n1[0].1 == 2.0, "{n1:?}");
    let last = csv.rows.last().unwrap();
    assert_eq!(last[csv.col("n[2]")], 5.0);
    assert!(
        close(last[1], 1.0 + 7.0 * (2.0 - 1.0 / 3.0), 1e-6),
        "{last:?}"
    );
    let once = daec(&["flatten", path.to_str().unwrap()]);
    assert_eq!(once.code, 0, "{}", once.stderr);
    assert!(
        once.stdout.contains("  Integer n[2](start = {1, 2});"),
        "{}",
        once.stdout
    );
    let again = model("arr2", "dae", &once.stdout);
    let twice = daec(&["flatten", again.to_str().unwrap()]);
    assert_eq!(twice.code, 0, "{}", twice.stderr);
    assert_eq!(once.stdout, twice.stdout);
}

/// Discrete equations outside `when` (MLS 3.6 §8.3.5, §8.6) define their
/// variables for all times: `k = integer(time)` jumps at the integers
/// (time events), `s = if x > 1.5 then 1 else 0` where `x = t` crosses
/// 1.5 (a state event), `on = x > 2.5` likewise. Closed forms at t = 3.5:
/// `z = ∫k = 0 + 1 + 2 + 3·0.5 = 4.5`, `w = ∫s = 2`; `n` counts the rise
/// of `on` once, at 2.5.
#[test]
fn discrete_equations_outside_when_define_their_variables() {
    let text = "model Defined
  Real x(start = 0, fixed = true);
  Real z(start = 0, fixed = true);
  Real w(start = 0, fixed = true);
  Integer k;
  Integer s;
  Boolean on;
  Integer n(start = 0);
equation
  der(x) = 1;
  k = integer(time);
  s = if x > 1.5 then 1 else 0;
  on = x > 2.5;
  der(z) = k;
  der(w) = s;
  when on then
    n = pre(n) + 1;
  end when;
  annotation(experiment(StopTime = 3.5));
end Defined;
";
    for ext in ["mo", "dae"] {
        let path = model("defined", ext, text);
        let (code, csv, err) = simulate(&path, &[]);
        assert_eq!(code, 0, "{ext}: {err}");
        let last = csv.rows.last().unwrap();
        assert!(close(last[0], 3.5, 1e-12), "{last:?}");
        assert!(close(last[csv.col("z")], 4.5, 1e-7), "{ext}: {last:?}");
        assert!(close(last[csv.col("w")], 2.0, 1e-7), "{ext}: {last:?}");
        assert_eq!(last[csv.col("n")], 1.0, "{ext}");
        let n = changes(&csv, "n");
        assert_eq!(n.len(), 1, "{ext}: {n:?}");
        assert!(close(n[0].0, 2.5, 1e-7), "{ext}: {n:?}");
        // z is piecewise linear with slope k: at t = 2.25, 0 + 1 + 2·0.25
        let at = csv.row_at(2.25).map(|r| r[csv.col("z")]);
        if let Some(z) = at {
            assert!(close(z, 1.5, 1e-6), "{ext}: z(2.25) = {z}");
        }
    }
}

/// A discrete variable defined by an equation and also assigned in a
/// `when` clause, or defined twice, is an error at the equation; a
/// defined array is refused with the workaround.
#[test]
fn discrete_definitions_are_checked() {
    let both = model(
        "defined_both",
        "dae",
        "model B\n  Real x(start = 0, fixed = true);\n  Integer k(start = 0);\nequation\n  der(x) = k;\n  k = if x > 1 then 1 else 0;\n  when x > 2 then k = 2; end when;\nend B;\n",
    );
    let r = daec(&["simulate", both.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("E0114"), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("`k` is defined by an equation and assigned in a `when` clause"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("defined_both.dae:6:3"), "{}", r.stderr);
    let bound = model(
        "defined_bound",
        "mo",
        "model D\n  Real x(start = 0, fixed = true);\n  Integer k = 1;\nequation\n  der(x) = k;\n  k = 2;\nend D;\n",
    );
    let r = daec(&["simulate", bound.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("the discrete variable `k` has a binding and an equation"),
        "{}",
        r.stderr
    );
    let array = model(
        "defined_array",
        "dae",
        "model A\n  Real x(start = 0, fixed = true);\n  Integer k[2];\nequation\n  der(x) = k[1];\n  k = {1, 2};\nend A;\n",
    );
    let r = daec(&["simulate", array.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("an array of discrete variables defined outside `when` is not supported"),
        "{}",
        r.stderr
    );
}

/// `if`-equations inside `when` (MLS 3.6 §8.3.5): `k` counts samples of
/// period 0.25 modulo 3 and `resets` its wraps (both branches assign
/// both); an `elseif` with a `reinit` and no `else` resets `x = t` to 0
/// at t = 1 and keeps it otherwise; a constant condition picks its
/// branch (`m = 2`). Branches that assign different variables are
/// `E0114`.
#[test]
fn if_equations_inside_when_select_their_branch() {
    let text = "model WhenIf
  parameter Boolean flag = false;
  Real x(start = 0, fixed = true);
  Integer k(start = 0);
  Integer resets(start = 0);
  Integer m(start = 0);
equation
  der(x) = 1;
  when sample(0, 0.25) then
    if pre(k) >= 2 then
      k = 0;
      resets = pre(resets) + 1;
    else
      k = pre(k) + 1;
      resets = pre(resets);
    end if;
  end when;
  when x > 1 then
    if resets > 5 then
      reinit(x, 0.5);
    elseif resets > 0 then
      reinit(x, 0);
    end if;
  end when;
  when x > 0.5 then
    if flag then
      m = 1;
    else
      m = 2;
    end if;
  end when;
  annotation(experiment(StopTime = 1.9));
end WhenIf;
";
    let path = model("WhenIf", "mo", text);
    let (code, csv, err) = simulate(&path, &[]);
    assert_eq!(code, 0, "{err}");
    let k: Vec<f64> = changes(&csv, "k").iter().map(|c| c.1).collect();
    assert_eq!(k, [2.0, 0.0, 1.0, 2.0, 0.0, 1.0, 2.0], "{k:?}");
    let resets = changes(&csv, "resets");
    assert_eq!(resets.len(), 2, "{resets:?}");
    assert!(close(resets[0].0, 0.5, 1e-12) && close(resets[1].0, 1.25, 1e-12));
    let last = csv.rows.last().unwrap();
    assert!(close(last[csv.col("x")], 0.9, 1e-7), "{last:?}");
    assert_eq!(last[csv.col("m")], 2.0);
    let bad = model(
        "WhenIfBad",
        "mo",
        "model B\n  Real x(start = 0, fixed = true);\n  Integer n(start = 0);\n  Integer j(start = 0);\nequation\n  der(x) = 1;\n  when x > 1 then\n    if x > 2 then\n      n = 1;\n    else\n      j = 1;\n    end if;\n  end when;\nend B;\n",
    );
    let r = daec(&["simulate", bad.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("E0114"), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("the branches of an `if` in `when` assign different variables"),
        "{}",
        r.stderr
    );
}

/// `integer` of an unknown is event-triggering (MLS 3.6 §3.7.2), also in
/// a discrete definition used twice: its jumps are state events, without
/// the warning `W0117`, so ∫ 2·floor(t) dt over [0, 2.5] = 2·(0 + 1 +
/// 0.5·2) = 4 to the tolerance; a function of `time` makes time events.
#[test]
fn integer_of_the_unknowns_makes_events_at_its_jumps() {
    let text = "model F
  Real x(start = 0, fixed = true);
  Real z(start = 0, fixed = true);
  Integer k;
equation
  der(x) = 1;
  k = integer(x);
  der(z) = k + k;
  annotation(experiment(StopTime = 2.5));
end F;
";
    let path = model("IntegerOfState", "mo", text);
    let (code, csv, err) = simulate(&path, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("W0117"), "{err}");
    let last = csv.rows.last().unwrap();
    assert!(close(last[csv.col("z")], 4.0, 1e-8), "{last:?}");
    // k's column jumps at the events, where x = t = 1 and 2
    let k = changes(&csv, "k");
    assert_eq!(k.len(), 2, "{k:?}");
    assert!(
        close(k[0].0, 1.0, 1e-9) && close(k[1].0, 2.0, 1e-9),
        "{k:?}"
    );
    let timed = model(
        "IntegerOfTime",
        "mo",
        &text.replace("integer(x)", "integer(time)"),
    );
    let (code, csv, err) = simulate(&timed, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("W0117"), "{err}");
    let last = csv.rows.last().unwrap();
    assert!(close(last[csv.col("z")], 4.0, 1e-8), "{last:?}");
    // `div` in a `.mo` model (of Real type, as x): integer(div(x, 1)) =
    // floor(x) for x ≥ 0
    let divided = model(
        "DivOfState",
        "mo",
        &text.replace("integer(x)", "integer(div(x, 1))"),
    );
    let (code, csv, err) = simulate(&divided, &[]);
    assert_eq!(code, 0, "{err}");
    let last = csv.rows.last().unwrap();
    assert!(close(last[csv.col("z")], 4.0, 1e-8), "{last:?}");
    assert_eq!(changes(&csv, "k").len(), 2);
}

/// Discrete variables defined outside `when` have result columns, their
/// definitions at each output point (MLS 3.6 §8.3.5, §8.6): `k =
/// integer(time)` is ⌊t⌋, `off = s < 0` with `s = 1 − t` is `t > 1` (it
/// also switches `der(y)`, so y = max(t − 1, 0)), and `m = 2·k`, defined
/// by an equation, is 2⌊t⌋ — in the CSV and under `--vars`.
#[test]
fn discrete_variables_defined_outside_when_have_columns() {
    let text = "model Defined
  Real s(start = 1, fixed = true);
  Real y(start = 0, fixed = true);
  Integer k = integer(time);
  Boolean off = s < 0;
  Integer m;
equation
  der(s) = -1;
  der(y) = if off then 1 else 0;
  m = 2 * k;
  annotation(experiment(StopTime = 3, Interval = 0.25));
end Defined;
";
    let path = model("Defined", "mo", text);
    let r = daec(&["simulate", path.to_str().unwrap(), "--rtol", "1e-9"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let csv = Csv::parse(&r.stdout);
    assert_eq!(csv.header, ["time", "s", "y", "k", "off", "m"]);
    assert!(csv.rows.len() >= 13, "{}", r.stdout);
    for row in &csv.rows {
        let t = row[0];
        assert_eq!(row[csv.col("k")], t.floor(), "{row:?}");
        assert_eq!(row[csv.col("m")], 2.0 * t.floor(), "{row:?}");
        if (t - 1.0).abs() > 1e-6 {
            let off = if t > 1.0 { 1.0 } else { 0.0 };
            assert_eq!(row[csv.col("off")], off, "{row:?}");
        }
        assert!(
            close(row[csv.col("y")], (t - 1.0).max(0.0), 1e-7),
            "{row:?}"
        );
    }
    let last = csv.rows.last().unwrap();
    assert_eq!(last[0], 3.0, "{last:?}");
    assert_eq!(&last[3..], &[3.0, 1.0, 6.0]);
    // `--vars` plots them (a name it does not know is a usage error)
    let text = plot(&path, "off,m");
    assert!(text.contains("off"), "no `off` in the plot");
}
