//! `daec simulate` with `when` events end to end: edges located whatever
//! the step size, the start, `--max-step`, reinits the model cannot honour,
//! event loops, Zeno behaviour, `--max-events`, and the output grids.

mod common;

use common::daec;
use std::path::{Path, PathBuf};

/// A fresh path in the temporary directory.
fn temp(name: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-events-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Writes a model into the temporary directory.
fn model(name: &str, text: &str) -> PathBuf {
    let path = temp(&format!("{name}.dae"));
    std::fs::write(&path, text).unwrap();
    path
}

/// The rows of a CSV (header dropped).
fn rows(csv: &str) -> Vec<Vec<f64>> {
    csv.lines()
        .skip(1)
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect()
}

/// A run: exit code, rows, statistics (when written) and stderr.
struct Sim {
    code: i32,
    rows: Vec<Vec<f64>>,
    stats: serde_json::Value,
    stderr: String,
}

fn simulate(model: &Path, args: &[&str]) -> Sim {
    let json = temp(&format!(
        "{}-{}.json",
        model.file_stem().unwrap().to_str().unwrap(),
        args.join("_").replace(['/', '.'], "")
    ));
    let _ = std::fs::remove_file(&json);
    let mut all = vec!["simulate", model.to_str().unwrap()];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--stats-json", json.to_str().unwrap()]);
    let r = daec(&all);
    let stats = std::fs::read_to_string(&json)
        .map(|s| serde_json::from_str(&s).unwrap())
        .unwrap_or(serde_json::Value::Null);
    Sim {
        code: r.code,
        rows: rows(&r.stdout),
        stats,
        stderr: r.stderr,
    }
}

/// The time of "events accumulate at t = …:" in a message.
fn accumulation_time(message: &str) -> f64 {
    message
        .split("events accumulate at t = ")
        .nth(1)
        .and_then(|r| r.split(':').next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("no accumulation time in: {message}"))
}

/// `z` counts the events of `when cond`.
fn counter(name: &str, cond: &str, stop: f64) -> PathBuf {
    model(
        name,
        &format!(
            "model {name}\n  Real z(start = 0, fixed = true);\nequation\n  der(z) = 0;\n  when {cond} then reinit(z, z + 1); end when;\n  annotation(experiment(StartTime = 0, StopTime = {stop}));\nend {name};\n"
        ),
    )
}

#[test]
fn crossings_inside_one_step_are_all_found_whatever_the_tolerance() {
    // z is constant: the error control takes steps as long as it likes,
    // and sin t > 0.001 becomes true near 0, 2π and 4π in [0, 14]
    let m = counter("E", "sin(time) > 0.001", 14.0);
    for rtol in [None, Some("1e-3"), Some("1e-8"), Some("1e-11")] {
        let args: Vec<&str> = rtol.map_or(vec![], |r| vec!["--rtol", r]);
        let s = simulate(&m, &args);
        assert_eq!(s.code, 0, "{rtol:?}: {}", s.stderr);
        assert_eq!(s.stats["events"], 3, "{rtol:?}");
        assert_eq!(s.rows.last().unwrap()[1], 3.0, "{rtol:?}");
    }
}

#[test]
fn a_condition_false_at_the_start_and_true_right_after_fires_at_the_start() {
    // sin 0 > 0 is false and sin t > 0 true just after 0: a rising edge
    // at t = 0 (MLS 8.6: pre(c) = c at the start), then at 2π and 4π
    let m = counter("Sine", "sin(time) > 0", 14.0);
    let s = simulate(&m, &["--grid", "steps"]);
    assert_eq!(s.code, 0, "{}", s.stderr);
    assert_eq!(s.stats["events"], 3);
    // the rows before and after each event share its time
    let at: Vec<f64> = s
        .rows
        .windows(2)
        .filter(|w| w[0][0] == w[1][0])
        .map(|w| {
            assert_eq!(w[1][1], w[0][1] + 1.0);
            w[0][0]
        })
        .collect();
    let pi = std::f64::consts::PI;
    assert_eq!(at.len(), 3, "{at:?}");
    assert!(at[0] < 1e-12, "{at:?}");
    assert!(
        (at[1] - 2.0 * pi).abs() < 1e-9 && (at[2] - 4.0 * pi).abs() < 1e-9,
        "{at:?}"
    );
    // sin t ≥ 0 holds at 0: no event there
    let m = counter("SineGe", "sin(time) >= 0", 14.0);
    let s = simulate(&m, &[]);
    assert_eq!(s.stats["events"], 2);
}

#[test]
fn a_fast_condition_is_found_with_steps_longer_than_its_period() {
    // sin(100 t) > 0.5 becomes true at (π/6 + 2πk)/100, k = 0 … 15, in
    // [0, 1]: 16 events, with steps of up to the whole run or bounded
    let m = counter("Fast", "sin(100*time) > 0.5", 1.0);
    for args in [
        &["--rtol", "1e-3"][..],
        &["--rtol", "1e-10"],
        &["--max-step", "0.5"],
        &["--max-step", "0.001"],
    ] {
        let s = simulate(&m, args);
        assert_eq!(s.code, 0, "{args:?}: {}", s.stderr);
        assert_eq!(s.stats["events"], 16, "{args:?}");
    }
}

#[test]
fn max_step_bounds_the_steps_of_every_method() {
    let long = |rows: &[Vec<f64>]| {
        rows.windows(2)
            .map(|w| w[1][0] - w[0][0])
            .fold(0.0, f64::max)
    };
    let decay = model(
        "Decay",
        "model Decay\n  Real y(start = 1, fixed = true);\nequation\n  der(y) = -y;\nend Decay;\n",
    );
    for (m, method) in [
        (decay.to_str().unwrap(), "radau5"),
        (decay.to_str().unwrap(), "herk"),
        ("models/steinbrecher/pendulum.dae", "radau5-projected"),
        ("models/ndsolve/pendulum.dae", "radau-2nd"),
    ] {
        let run = |extra: &[&str]| {
            let mut args = vec![
                "simulate", m, "--method", method, "--t-end", "1", "--grid", "steps",
            ];
            args.extend_from_slice(extra);
            let r = daec(&args);
            assert_eq!(r.code, 0, "{method}: {}", r.stderr);
            rows(&r.stdout)
        };
        let free = long(&run(&[]));
        let bounded = run(&["--max-step", "0.01"]);
        assert!(free > 0.02, "{method}: the longest step {free}");
        assert!(
            long(&bounded) <= 0.01 * (1.0 + 1e-12),
            "{method}: {}",
            long(&bounded)
        );
        assert_eq!(bounded.last().unwrap()[0], 1.0, "{method}");
    }
    let r = daec(&["simulate", decay.to_str().unwrap(), "--max-step", "0"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("--max-step must be a positive finite number"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_reinit_of_an_unknown_the_constraints_determine_is_a_model_error() {
    // x = sin(time): no freedom for x, whatever the formulation
    let h = model(
        "H",
        "model H\n  Real x(start = 0); Real y(start = 0);\nequation\n  when x > 0 then reinit(x, -0.999*x); end when;\n  der(der(x)) = y;\n  x = sin(time);\nend H;\n",
    );
    for form in ["hic", "di1", "ste"] {
        let s = simulate(&h, &["--form", form, "--t-end", "6.3"]);
        assert_eq!(s.code, 1, "{form}: {}", s.stderr);
        for part in [
            "error[E0203]: `reinit` of `x`, which the constraints determine",
            "H.dae:4:19",
            "0 = x - sin(time) (level 0)",
        ] {
            assert!(s.stderr.contains(part), "{form}: {part}: {}", s.stderr);
        }
    }
    // an algebraic unknown: y = a·x
    let text = std::fs::read_to_string("models/ndsolve/event_reinit.dae")
        .unwrap()
        .replace("reinit(a, 2);", "reinit(y, 3);");
    let s = simulate(&model("Alg", &text), &[]);
    assert_eq!(s.code, 1, "{}", s.stderr);
    assert!(
        s.stderr.contains("`reinit` of `y`, which is not a state")
            && s.stderr.contains("no derivative of `y` occurs"),
        "{}",
        s.stderr
    );
}

#[test]
fn a_reinit_the_constraints_undo_stops_the_run() {
    // (x − sin t)(2 + sin w) = 0 fixes x = sin t, which the structure does
    // not show (w occurs too): the consistent re-initialisation puts x back
    let m = model(
        "Undone",
        "model Undone\n  Real x(start = 0); Real u; Real w(start = 0, fixed = true);\nequation\n  der(w) = 1;\n  der(x) = u;\n  (x - sin(time))*(2 + sin(w)) = 0;\n  when time > 1 then reinit(x, 5); end when;\n  annotation(experiment(StopTime = 2));\nend Undone;\n",
    );
    let s = simulate(&m, &[]);
    assert_eq!(s.code, 3, "{}", s.stderr);
    for part in [
        "the when clause `time > 1`: re-initialisation at t = 1.0",
        ": the constraints do not let the value change: `x` (set to 5, put back to 0.84147",
    ] {
        assert!(s.stderr.contains(part), "{part}: {}", s.stderr);
    }
}

#[test]
fn a_bounce_too_small_to_resolve_stops_at_the_accumulation_point() {
    // The bouncing ball: with restitution e it comes to rest at
    // t1 (1 + 2e/(1 − e)), t1 = √(2/g); past that it would fall through
    // the floor with the condition h < 0 true for good
    let ball = model(
        "Ball",
        "model Ball\n  parameter Real e = 1e-3;\n  Real h(start = 1, fixed = true);\n  Real v(start = 0, fixed = true);\nequation\n  der(h) = v;\n  der(v) = -9.81;\n  when h < 0 then reinit(v, -e*v); end when;\n  annotation(experiment(StartTime = 0, StopTime = 10));\nend Ball;\n",
    );
    let t1 = (2.0f64 / 9.81).sqrt();
    for e in [1e-3, 0.5, 0.8] {
        let p = format!("e={e}");
        let s = simulate(&ball, &["-p", &p]);
        assert_eq!(s.code, 3, "{e}: {}", s.stderr);
        let m = &s.stderr;
        assert!(
            m.contains("events accumulate at t = ")
                && m.contains("the when clause `h < 0`")
                && m.contains("Zeno behaviour")
                && m.contains("h = ")
                && m.contains("v = "),
            "{e}: {m}"
        );
        let at = accumulation_time(m);
        let rest = t1 * (1.0 + 2.0 * e / (1.0 - e));
        assert!((at - rest).abs() < 1e-6 * rest, "{e}: at {at}, rest {rest}");
        assert!(s.rows.iter().all(|r| r[1] > -1e-9), "{e}: fell through");
    }
}

#[test]
fn a_reinit_that_sets_its_condition_up_again_stops_the_run() {
    // at w = 0, reinit(w, −0.999 w) leaves w ≈ 0 and the pendulum's
    // motion makes w > 0 again at once: an event loop at one instant.
    // That needs w, of index 2, controlled to the tolerance at the
    // event: with the pendulum's default, index scaling (error of w
    // times h), the located crossing leaves w far enough from 0 that
    // the reinit turns it back, and the run ends after 10 events.
    let text = std::fs::read_to_string("models/steinbrecher/pendulum.dae")
        .unwrap()
        .replace(
            "equation\n",
            "equation\n  when w > 0 then reinit(w, -0.999*w); end when;\n",
        );
    let m = model("PendulumLoop", &text);
    for form in ["hic", "ste"] {
        let s = simulate(
            &m,
            &["--form", form, "--t-end", "10", "--error-control", "all"],
        );
        assert_eq!(s.code, 3, "{form}: {}", s.stderr);
        let at = accumulation_time(&s.stderr);
        assert!((at - 0.5).abs() < 1e-6, "{form}: {at}");
        assert!(
            s.stderr.contains("the when clause `w > 0` fired 101 times"),
            "{form}: {}",
            s.stderr
        );
    }
}

#[test]
fn the_number_of_events_is_bounded_and_the_bound_reported() {
    let m = counter("Chatter", "sin(1000*time) > 0", 10.0);
    let s = simulate(&m, &["--max-events", "100"]);
    assert_eq!(s.code, 3, "{}", s.stderr);
    assert!(
        s.stderr.contains("more than 100 events (--max-events): the when clause `sin(1000 * time) > 0` fired 101 times"),
        "{}",
        s.stderr
    );
    assert_eq!(s.stats["events"], 100);
    // 1592 edges in [0, 10] (at 2πk/1000, k = 0 … 1591) under the default
    let s = simulate(&m, &[]);
    assert_eq!(s.code, 0, "{}", s.stderr);
    assert_eq!(s.stats["events"], 1592);
}

#[test]
fn steps_output_has_every_step_and_both_sides_of_each_event() {
    let m = counter("Steps", "sin(time) > 0.001", 14.0);
    let s = simulate(&m, &["--grid", "steps"]);
    assert_eq!(s.code, 0, "{}", s.stderr);
    let accepted = s.stats["steps_accepted"].as_u64().unwrap() as usize;
    assert_eq!(s.rows.len(), 1 + accepted + 3);
    let mut repeats = 0;
    for w in s.rows.windows(2) {
        if w[1][0] == w[0][0] {
            repeats += 1;
            assert_eq!(w[1][1], w[0][1] + 1.0, "{w:?}");
        } else {
            assert!(w[1][0] > w[0][0], "{w:?}");
        }
    }
    assert_eq!(repeats, 3);
    assert_eq!(s.rows.last().unwrap()[0], 14.0);
}

#[test]
fn a_logarithmic_grid_keeps_the_transient_of_stiff_kinetics() {
    // Robertson's kinetics over [0, 4e10]: y2 peaks at 3.65e-5 near
    // t = 0.01 and decays; a uniform grid of 500 points starts at 8e7
    let m = model(
        "Robertson",
        "model Robertson\n  Real y1(start = 1, fixed = true); Real y2(start = 0, fixed = true); Real y3(start = 0);\nequation\n  der(y1) = -0.04*y1 + 1e4*y2*y3;\n  der(y2) = 0.04*y1 - 1e4*y2*y3 - 3e7*y2^2;\n  y1 + y2 + y3 = 1;\n  annotation(experiment(StopTime = 4e10, Tolerance = 1e-6));\nend Robertson;\n",
    );
    let s = simulate(&m, &["--atol", "1e-10", "--grid", "log", "--points", "60"]);
    assert_eq!(s.code, 0, "{}", s.stderr);
    assert_eq!(s.rows.len(), 61);
    let t: Vec<f64> = s.rows.iter().map(|r| r[0]).collect();
    assert_eq!((t[0], t[60]), (0.0, 4e10));
    // geometric from the first step's end
    let ratio = (4e10 / t[1]).powf(1.0 / 59.0);
    for k in 1..59 {
        assert!((t[k + 1] / t[k] - ratio).abs() < 1e-9 * ratio, "{k}: {t:?}");
    }
    let peak = s.rows.iter().map(|r| r[2]).fold(0.0, f64::max);
    assert!(peak > 3.5e-5 && peak < 3.7e-5, "{peak}");
    let uniform = simulate(&m, &["--atol", "1e-10"]);
    let peak = uniform.rows.iter().map(|r| r[2]).fold(0.0, f64::max);
    assert!(peak < 1e-6, "{peak}");
    for (args, msg) in [
        (
            &["--grid", "log", "--points", "1"][..],
            "--points must be at least 2",
        ),
        (
            &["--grid", "steps", "--points", "5"],
            "--points applies only to --grid log",
        ),
        (&["--grid", "every"], "unknown output grid `--grid every`"),
    ] {
        let s = simulate(&m, args);
        assert_eq!(s.code, 2, "{args:?}");
        assert!(s.stderr.contains(msg), "{args:?}: {}", s.stderr);
    }
}

/// `der(v) = a`, `a = if x > 0 then -1 else 1`: a restoring force of
/// constant size, written as a relation of the state (a state event, MLS
/// 3.6 §8.5), or inside `noEvent` (`quiet`). From x = 1, v = 0 the
/// crossings of x = 0 are at √2·(1 + 2k).
fn switch(name: &str, quiet: bool) -> PathBuf {
    let cond = if quiet { "noEvent(x > 0)" } else { "x > 0" };
    model(
        name,
        &format!(
            "model {name}\n  Real x(start = 1, fixed = true);\n  Real v(start = 0, fixed = true);\n  Real a;\nequation\n  der(x) = v;\n  der(v) = a;\n  a = if {cond} then -1 else 1;\n  annotation(experiment(StartTime = 0, StopTime = 10));\nend {name};\n"
        ),
    )
}

#[test]
fn a_relation_of_the_state_switches_at_its_crossings() {
    let m = switch("Switch", false);
    let s = simulate(&m, &["--grid", "steps", "--rtol", "1e-8", "--atol", "1e-8"]);
    assert_eq!(s.code, 0, "{}", s.stderr);
    // √2, 3√2, 5√2, 7√2 in [0, 10]
    assert_eq!(s.stats["events"], 4, "{}", s.stats);
    let times: Vec<f64> = s
        .rows
        .windows(2)
        .filter(|w| w[1][0] == w[0][0])
        .map(|w| w[0][0])
        .collect();
    assert_eq!(times.len(), 4, "{times:?}");
    for (k, t) in times.iter().enumerate() {
        let exact = 2f64.sqrt() * (1 + 2 * k) as f64;
        assert!((t - exact).abs() < 1e-8, "event {k}: {t} (exact {exact})");
    }
    // the algebraic `a` takes the other branch at each event; the motion is
    // periodic with period 4√2: at t = 10, x = 1 − (10 − 8√2)²/2 ... on the
    // way back from the far side
    for w in s.rows.windows(2).filter(|w| w[1][0] == w[0][0]) {
        assert_eq!(w[0][3], -w[1][3], "{w:?}");
    }
    let last = s.rows.last().unwrap();
    let tau = 10.0 - 7.0 * 2f64.sqrt();
    let x = 2f64.sqrt() * tau - tau * tau / 2.0;
    assert!(
        (last[1] - x).abs() < 1e-7,
        "x(10) = {} (exact {x})",
        last[1]
    );
}

#[test]
fn a_relation_inside_no_event_is_evaluated_continuously() {
    let m = switch("Quiet", true);
    let s = simulate(&m, &["--rtol", "1e-8", "--atol", "1e-8"]);
    assert_eq!(s.code, 0, "{}", s.stderr);
    assert_eq!(s.stats["events"], 0, "{}", s.stats);
    let last = s.rows.last().unwrap();
    let tau = 10.0 - 7.0 * 2f64.sqrt();
    let x = 2f64.sqrt() * tau - tau * tau / 2.0;
    // the error control steps over the kinks: close, not to the tolerance
    assert!(
        (last[1] - x).abs() < 1e-3,
        "x(10) = {} (exact {x})",
        last[1]
    );
}

#[test]
fn a_chattering_relation_ends_in_an_explained_error() {
    // der(x) = −1 above 1 and +1 below: x reaches 1 at t = 1 and both
    // sides drive it back (a sliding mode)
    let m = model(
        "Chatter",
        "model Chatter\n  Real x(start = 0, fixed = true);\nequation\n  der(x) = if x > 1 then -1 else 1;\n  annotation(experiment(StartTime = 0, StopTime = 3));\nend Chatter;\n",
    );
    let s = simulate(&m, &[]);
    assert_eq!(s.code, 3, "{}", s.stderr);
    assert!(
        s.stderr.contains("no progress at t = ")
            && s.stderr.contains("state events of the relation `x > 1`")
            && s.stderr.contains("chatters"),
        "{}",
        s.stderr
    );
    let at: f64 = s
        .stderr
        .split("no progress at t = ")
        .nth(1)
        .and_then(|r| r.split(':').next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("no time in: {}", s.stderr));
    assert!((at - 1.0).abs() < 1e-9, "{at}");
    assert_eq!(s.stats["events"], 102, "{}", s.stats);
}

#[test]
fn a_relation_that_only_touches_zero_at_an_event_keeps_its_mode() {
    // Until t = 1, v = 0, so `x > 0` and `x - v > 0` cross together at
    // t = 1; with `x > 0` true, v = 2x turns `x - v` negative at once.
    // With `x - v > 0` set true from its value at the located point
    // (+round-off) the equation v − 2x − |v| = 0 has no solution for
    // x > 0: every restart failed and the run stopped as chattering. Its
    // mode is the relation's value just after the event.
    let m = model(
        "Graze",
        "model Graze\n  Real x(start = -1, fixed = true);\n  Real v(start = 0);\nequation\n  der(x) = 1;\n  0 = if x > 0 then (if x - v > 0 then v - 2*x - abs(v) else v - 2*x) else v;\n  annotation(experiment(StopTime = 2, Interval = 0.5));\nend Graze;\n",
    );
    let s = simulate(&m, &[]);
    assert_eq!(s.code, 0, "{}", s.stderr);
    let last = s.rows.last().unwrap();
    assert_eq!(last[0], 2.0);
    assert!((last[2] - 2.0).abs() < 1e-9, "v(2) = {} (exact 2)", last[2]);
    assert!(
        (s.rows[3][2] - 1.0).abs() < 1e-9,
        "v(1.5) = {}",
        s.rows[3][2]
    );
    assert_eq!(s.stats["restarts"], 1, "{}", s.stats);
}

#[test]
fn no_event_takes_one_argument() {
    let m = model(
        "TwoArgs",
        "model TwoArgs\n  Real x(start = 0, fixed = true);\nequation\n  der(x) = if noEvent(x > 1, 2) then -1 else 1;\nend TwoArgs;\n",
    );
    let s = simulate(&m, &[]);
    assert_eq!(s.code, 1, "{}", s.stderr);
    assert!(
        s.stderr.contains("E0103") && s.stderr.contains("`noEvent` takes 1 argument"),
        "{}",
        s.stderr
    );
}

/// `der(y) = smooth(1, if x > 1 then (x - 1)^2 else 0)` with `x = t`:
/// `smooth(p, e)` is `e` (MLS 3.6 §3.7.4.1 allows a tool to skip the
/// events of the relations in `e` up to order `p`, it does not require
/// it), and daec keeps its relations as state events, so the run is the
/// one without `smooth`: one event at t = 1 and y(2) = ∫₁² (t − 1)² dt = 1/3.
#[test]
fn smooth_is_its_expression_and_keeps_its_events() {
    let text = |name: &str, rhs: &str| {
        format!(
            "model {name}\n  Real x(start = 0, fixed = true);\n  Real y(start = 0, fixed = true);\nequation\n  der(x) = 1;\n  der(y) = {rhs};\n  annotation(experiment(StartTime = 0, StopTime = 2));\nend {name};\n"
        )
    };
    let bare = "if x > 1 then (x - 1)^2 else 0";
    let runs: Vec<Sim> = [
        ("Smooth", format!("smooth(1, {bare})")),
        ("NotSmooth", bare.to_string()),
    ]
    .iter()
    .map(|(name, rhs)| {
        let m = model(name, &text(name, rhs));
        simulate(&m, &["--grid", "steps", "--rtol", "1e-9", "--atol", "1e-9"])
    })
    .collect();
    for s in &runs {
        assert_eq!(s.code, 0, "{}", s.stderr);
        assert_eq!(s.stats["events"], 1, "{}", s.stats);
        let at: Vec<f64> = s
            .rows
            .windows(2)
            .filter(|w| w[1][0] == w[0][0])
            .map(|w| w[0][0])
            .collect();
        assert_eq!(at.len(), 1, "{at:?}");
        assert!((at[0] - 1.0).abs() < 1e-8, "event at {}", at[0]);
        let last = s.rows.last().unwrap();
        assert!((last[0] - 2.0).abs() < 1e-12, "{last:?}");
        assert!((last[2] - 1.0 / 3.0).abs() < 1e-7, "y(2) = {}", last[2]);
    }
    let (a, b) = (runs[0].rows.last().unwrap(), runs[1].rows.last().unwrap());
    assert_eq!(a, b, "smooth changes the run");
}

#[test]
fn smooth_takes_two_arguments() {
    let m = model(
        "SmoothOneArg",
        "model SmoothOneArg\n  Real x(start = 0, fixed = true);\nequation\n  der(x) = smooth(if x > 1 then -1 else 1);\nend SmoothOneArg;\n",
    );
    let s = simulate(&m, &[]);
    assert_eq!(s.code, 1, "{}", s.stderr);
    assert!(
        s.stderr.contains("E0103") && s.stderr.contains("`smooth` takes 2 arguments"),
        "{}",
        s.stderr
    );
}

#[test]
fn herk_holds_the_modes_and_radau_2nd_refuses_them() {
    let m = switch("SwitchHerk", false);
    let s = simulate(
        &m,
        &["--method", "herk", "--rtol", "1e-8", "--atol", "1e-8"],
    );
    assert_eq!(s.code, 0, "{}", s.stderr);
    assert_eq!(s.stats["events"], 4, "{}", s.stats);
    let second = model(
        "Second",
        "model Second\n  Real x(start = 1, fixed = true);\nequation\n  der(der(x)) = if x > 0 then -1 else 1;\n  annotation(experiment(StartTime = 0, StopTime = 10));\nend Second;\n",
    );
    let s = simulate(&second, &["--method", "radau-2nd"]);
    assert_ne!(s.code, 0, "{}", s.stderr);
    assert!(
        s.stderr.contains("--method radau-2nd") && s.stderr.contains("`x > 0`"),
        "{}",
        s.stderr
    );
}

/// The last row's value of column `c` and the event count of a run of
/// `model` (a `.dae` text) with `--rtol 1e-10`, asserting success and
/// that no `W0117` warning was printed.
fn last_and_events(name: &str, text: &str, c: usize) -> (f64, u64) {
    let s = simulate(&model(name, text), &["--rtol", "1e-10", "--atol", "1e-12"]);
    assert_eq!(s.code, 0, "{}", s.stderr);
    assert!(!s.stderr.contains("W0117"), "{}", s.stderr);
    let last = s.rows.last().unwrap();
    (last[c], s.stats["events"].as_u64().unwrap())
}

/// `ẋ = 1`, `ẏ = f(x)` from 0 to `stop`: the model text.
fn integral_of(name: &str, f: &str, stop: f64) -> String {
    format!(
        "model {name}\n  Real x(start = 0, fixed = true);\n  Real y(start = 0, fixed = true);\nequation\n  der(x) = 1;\n  der(y) = {f};\n  annotation(experiment(StartTime = 0, StopTime = {stop}));\nend {name};\n"
    )
}

/// `floor` of an unknown is an event-triggering function (MLS 3.6
/// §3.7.2): `ẏ = floor(x)` with `x = t` gives y(2.5) = 0 + 1 + 2·0.5 =
/// 2 exactly, with one state event at each of x = 1 and x = 2 — without
/// them the step-size control would step over the jumps, and y would be
/// off by far more than 1e-9.
#[test]
fn floor_of_the_unknowns_makes_state_events_at_its_jumps() {
    let (y, events) = last_and_events("FloorEv", &integral_of("FloorEv", "floor(x)", 2.5), 2);
    assert!((y - 2.0).abs() < 1e-9, "y(2.5) = {y}");
    assert_eq!(events, 2);
    // the same with `integer`, and with `ceil`: ∫ ceil(t) over [0, 2.5]
    // = 1 + 2 + 3·0.5 = 4.5, with a third event just after the start,
    // where ceil(0) = 0 turns 1
    let (y, events) = last_and_events("IntegerEv", &integral_of("IntegerEv", "integer(x)", 2.5), 2);
    assert!((y - 2.0).abs() < 1e-9, "y(2.5) = {y}");
    assert_eq!(events, 2);
    let (y, events) = last_and_events("CeilEv", &integral_of("CeilEv", "ceil(x)", 2.5), 2);
    assert!((y - 4.5).abs() < 1e-9, "y(2.5) = {y}");
    assert_eq!(events, 3);
}

/// `mod(x, 1)` is the sawtooth x − ⌊x⌋: its integral over [0, 2.5] is
/// 0.5 + 0.5 + 0.125 = 1.125; `div` and `rem` truncate towards zero, so on
/// the negative argument `x = −t` ∫ div(x, 1) = −(0 + 1 + 2·0.5) = −2 and
/// ∫ rem(x, 1) = −1.125, while ∫ floor(x) = −(1 + 2 + 3·0.5) = −4.5.
#[test]
fn mod_div_rem_and_negative_arguments_have_their_closed_forms() {
    let (y, events) = last_and_events("ModEv", &integral_of("ModEv", "mod(x, 1)", 2.5), 2);
    assert!((y - 1.125).abs() < 1e-9, "y(2.5) = {y}");
    assert_eq!(events, 2);
    // (floor(−0) = 0 turns −1 just after the start: a third event)
    for (name, f, want, count) in [
        ("DivNeg", "div(-x, 1)", -2.0, 2),
        ("RemNeg", "rem(-x, 1)", -1.125, 2),
        ("FloorNeg", "floor(-x)", -4.5, 3),
    ] {
        let (y, events) = last_and_events(name, &integral_of(name, f, 2.5), 2);
        assert!(
            (y - want).abs() < 1e-9,
            "{f}: y(2.5) = {y}, expected {want}"
        );
        assert_eq!(events, count, "{f}");
    }
    // `div` by an unknown: x/p with p = 1 + x/10 crosses 1 and 2 at
    // x = 10/9 and x = 2.5 (after the end)
    let text = "model ModVar\n  Real x(start = 0, fixed = true);\n  Real y(start = 0, fixed = true);\nequation\n  der(x) = 1;\n  der(y) = div(x, 1 + x/10);\n  annotation(experiment(StartTime = 0, StopTime = 2.4));\nend ModVar;\n";
    let (y, events) = last_and_events("ModVar", text, 2);
    assert!((y - (2.4 - 10.0 / 9.0)).abs() < 1e-9, "y(2.4) = {y}");
    assert_eq!(events, 1);
}

/// `noEvent(floor(x))` keeps its continuous evaluation: no event, and no
/// warning; `floor` of a derivative still makes no event, with `W0117`;
/// a `when floor(x) > 1` fires once, where x reaches 2.
#[test]
fn no_event_floor_stays_continuous_and_when_floor_fires() {
    let s = simulate(
        &model(
            "FloorQuiet",
            &integral_of("FloorQuiet", "noEvent(floor(x))", 2.5),
        ),
        &[],
    );
    assert_eq!(s.code, 0, "{}", s.stderr);
    assert_eq!(s.stats["events"], 0);
    assert!(!s.stderr.contains("W0117"), "{}", s.stderr);
    let s = simulate(
        &model("FloorDer", &integral_of("FloorDer", "floor(2*der(x))", 1.0)),
        &[],
    );
    assert_eq!(s.code, 0, "{}", s.stderr);
    assert!(s.stderr.contains("warning[W0117]"), "{}", s.stderr);
    assert!(
        s.stderr
            .contains("`floor` of a derivative jumps without an event"),
        "{}",
        s.stderr
    );
    let text = "model WhenFloor\n  Real x(start = 0, fixed = true);\n  Real z(start = 0, fixed = true);\nequation\n  der(x) = 1;\n  der(z) = 0;\n  when floor(x) > 1 then reinit(z, time); end when;\n  annotation(experiment(StartTime = 0, StopTime = 3));\nend WhenFloor;\n";
    let s = simulate(&model("WhenFloor", text), &["--rtol", "1e-10"]);
    assert_eq!(s.code, 0, "{}", s.stderr);
    assert!(!s.stderr.contains("W0117"), "{}", s.stderr);
    assert_eq!(s.stats["events"], 1);
    let z = s.rows.last().unwrap()[2];
    assert!((z - 2.0).abs() < 1e-9, "fired at {z}");
}

/// `div`, `mod` and `rem` of Integer constants are Integer constants
/// (MLS 3.6 §3.7.2): div(−7, 2) = −3 (truncated towards zero), mod(−7, 2)
/// = 1 (the sign of the divisor), rem(−7, 2) = −1 (the sign of the
/// dividend); so ẏ = a + 10·b + 100·c = −93, and no event.
#[test]
fn div_mod_rem_of_integers_are_integers() {
    let text = "model IntDiv\n  parameter Integer a = div(-7, 2);\n  parameter Integer b = mod(-7, 2);\n  parameter Integer c = rem(-7, 2);\n  Real y(start = 0, fixed = true);\nequation\n  der(y) = a + 10*b + 100*c;\n  annotation(experiment(StartTime = 0, StopTime = 1));\nend IntDiv;\n";
    let (y, events) = last_and_events("IntDiv", text, 1);
    assert!((y + 93.0).abs() < 1e-9, "y(1) = {y}");
    assert_eq!(events, 0);
    let s = simulate(
        &model("DivArity", &text.replace("div(-7, 2)", "div(-7)")),
        &[],
    );
    assert_eq!(s.code, 1, "{}", s.stderr);
    assert!(
        s.stderr
            .contains("`div` takes 2 arguments, but 1 was given"),
        "{}",
        s.stderr
    );
}

#[test]
fn a_bounce_restarts_cold_when_the_reached_step_is_asked() {
    // The ball with quadratic drag (`models/fmu/bouncing_ball.dae`): the
    // `when` of the bounce reinitialises v, a genuine jump, and the run
    // restarts from the cold start's step (5.0e-3 s) also with `--restart
    // reached`; at the drag's `if v > 0` switch at each apex the step the
    // run had reached (3-6e-2 s) is less than `RESTART_MIN_GAIN` (64)
    // times the cold start's, and it restarts cold too: the run is the
    // default's to the last bit, its bounce times those of a run at 1e-12.
    let m = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/fmu/bouncing_ball.dae");
    let events = |s: &Sim| -> Vec<(f64, f64, bool)> {
        // (time, first step after it, whether it is a bounce: h = 0)
        (1..s.rows.len() - 1)
            .filter(|&i| s.rows[i][0] == s.rows[i - 1][0])
            .map(|i| {
                let r = &s.rows[i];
                (r[0], s.rows[i + 1][0] - r[0], r[1].abs() < 1e-6)
            })
            .collect()
    };
    let tol = ["--grid", "steps", "--rtol", "1e-8", "--atol", "1e-8"];
    let cold = simulate(&m, &tol);
    let s = simulate(&m, &[&tol[..], &["--restart", "reached"]].concat());
    assert_eq!(s.code, 0, "{}", s.stderr);
    assert_eq!(s.rows, cold.rows);
    assert_eq!(s.stats["steps_accepted"], cold.stats["steps_accepted"]);
    let found = events(&s);
    assert_eq!(found.iter().filter(|e| e.2).count(), 5, "{found:?}");
    assert_eq!(found.iter().filter(|e| !e.2).count(), 4, "{found:?}");
    for &(t, h, _) in &found {
        assert!(h < 1e-2, "event at {t}: first step {h}");
    }
    let fine = simulate(
        &m,
        &["--grid", "steps", "--rtol", "1e-12", "--atol", "1e-12"],
    );
    let bounces =
        |e: &[(f64, f64, bool)]| -> Vec<f64> { e.iter().filter(|e| e.2).map(|e| e.0).collect() };
    for (a, b) in bounces(&found).iter().zip(bounces(&events(&fine))) {
        assert!((a - b).abs() < 1e-7, "bounce at {a}, at 1e-12 {b}");
    }
}
