//! Enumeration types (MLS 3.6, §4.9.5) end to end: literals as their
//! ordinals, discrete variables and parameters of an enumeration type,
//! `pre`, `when`, comparisons in literal order, `Integer(e)`, `E(k)`,
//! `for e in E`, the library's `Modelica.Blocks.Types.Init`, and the
//! mistakes (`E0138`).

mod common;

use common::{Csv, daec};
use std::path::PathBuf;

/// Writes a `.mo` model into the temporary directory.
fn model(name: &str, text: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-enum-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.mo"));
    std::fs::write(&path, text).unwrap();
    path
}

/// The diagnostics of `daec flatten` on `text`, which must fail (exit 1).
fn errors(name: &str, text: &str) -> String {
    let path = model(name, text);
    let r = daec(&["flatten", path.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{name}: {}", r.stdout);
    r.stderr
}

fn simulate(model: &str, extra: &[&str]) -> Csv {
    let mut args = vec!["simulate", model, "--grid", "steps", "--rtol", "1e-9"];
    args.extend_from_slice(extra);
    let r = daec(&args);
    assert_eq!(r.code, 0, "{}", r.stderr);
    Csv::parse(&r.stdout)
}

/// The drive of `models/discrete/drive_modes.mo`: x = t in mode
/// `slow` (ordinal 2), then x = 1 + 2(t - 1) in mode `fast` (3) from
/// t = 1.
#[test]
fn a_discrete_enumeration_switches_modes_in_literal_order() {
    let csv = simulate(
        "models/discrete/drive_modes.mo",
        &["--model", "DriveModes.Run"],
    );
    let (x, mode, ordinal) = (
        csv.col("drive.x"),
        csv.col("drive.mode"),
        csv.col("drive.ordinal"),
    );
    let mut switched = 0;
    for row in &csv.rows {
        let t = row[0];
        let expected = if t < 1.0 { t } else { 1.0 + 2.0 * (t - 1.0) };
        assert!((row[x] - expected).abs() < 1e-6, "x({t}) = {}", row[x]);
        if t < 1.0 - 1e-6 {
            assert_eq!(row[mode], 2.0, "mode at t = {t}");
        } else if t > 1.0 + 1e-6 {
            assert_eq!(row[mode], 3.0, "mode at t = {t}");
            switched += 1;
        }
        assert_eq!(row[ordinal], row[mode]);
    }
    assert!(switched > 0);
    let last = csv.rows.last().unwrap();
    assert!((last[x] - 3.0).abs() < 1e-6);
    for (k, name) in ["gear[1]", "gear[2]", "gear[3]"].iter().enumerate() {
        assert_eq!(last[csv.col(name)], (k + 1) as f64);
    }
}

/// The flat model declares an enumeration variable an `Integer` starting
/// at its first literal, and folds the literals and `E(k)` to ordinals.
#[test]
fn flattening_gives_ordinals() {
    let r = daec(&[
        "flatten",
        "models/discrete/drive_modes.mo",
        "--model",
        "DriveModes.Run",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .contains("parameter Integer 'drive.start_mode' = 2"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("parameter Integer top = 3"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("Integer 'drive.mode'(start = 2)"),
        "{}",
        r.stdout
    );
}

/// `initType = Modelica.Blocks.Types.Init.…` selects the initial equation
/// of the library's blocks as in the MSL: `SteadyState` holds y at
/// k·u, `InitialState` starts y at y_start, `NoInit` keeps y's start.
#[test]
fn the_library_init_enumeration_selects_the_initial_equations() {
    let csv = simulate("models/msl/BlockInit.mo", &[]);
    let last = csv.rows.last().unwrap();
    assert!((last[csv.col("steady.y")] - 2.0).abs() < 1e-8);
    assert!((last[csv.col("hold.y")] - 3.0).abs() < 1e-8);
    assert!((last[csv.col("free.y")] - 6.0).abs() < 1e-8);
}

/// A variable of an enumeration declared by a short class of another
/// (`type Level = Mode;`) starts at the first literal; `min`/`max` and the
/// start take literals; an enumeration of a package is reached by an
/// `import` of the type.
#[test]
fn enumerations_through_imports_and_short_classes() {
    let path = model(
        "imported",
        "package P
  type Mode = enumeration(low, mid, high);
end P;
model Imported
  import P.Mode;
  type Level = Mode;
  Level first;
  Mode upper(start = Mode.high, min = Mode.mid, max = P.Mode.high);
  Real x(start = 0, fixed = true);
equation
  der(x) = Integer(first) + Integer(upper);
  when time > 0.5 then
    first = Mode.mid;
    upper = pre(upper);
  end when;
  annotation(experiment(StopTime = 1));
end Imported;
",
    );
    let csv = simulate(path.to_str().unwrap(), &["--model", "Imported"]);
    let last = csv.rows.last().unwrap();
    assert_eq!(last[csv.col("first")], 2.0);
    assert_eq!(last[csv.col("upper")], 3.0);
    // x' = 1 + 3 up to t = 0.5, 2 + 3 after
    assert!((last[csv.col("x")] - (4.0 * 0.5 + 5.0 * 0.5)).abs() < 1e-6);
}

/// The mistakes of the type: a comparison with a number, a binding of the
/// wrong type, an ordinal out of range, `not` of an enumeration and a
/// malformed literal list are `E0138` at their location.
#[test]
fn enumeration_type_mistakes_are_located() {
    let text = |body: &str| {
        format!(
            "model M
  type Mode = enumeration(off, on);
  type Gear = enumeration(first, second);
  parameter Mode m = Mode.on;
  Real x(start = 0, fixed = true);
{body}
end M;
"
        )
    };
    let e = errors(
        "number",
        &text(
            "equation
  der(x) = if m == 1 then 1 else 0;",
        ),
    );
    assert!(
        e.contains("error[E0138]: `==` between a value of enumeration `M.Mode` and a number"),
        "{e}"
    );
    assert!(e.contains("compare with a literal `M.Mode.…`"), "{e}");
    let e = errors(
        "binding",
        &text(
            "  parameter Gear g = Mode.off;
  Integer k = m;
equation
  der(x) = 1;",
        ),
    );
    assert!(
        e.contains("a value of enumeration `M.Mode` for a variable of enumeration `M.Gear`"),
        "{e}"
    );
    assert!(
        e.contains("a value of enumeration `M.Mode` for a variable of a built-in type"),
        "{e}"
    );
    let e = errors(
        "ordinal",
        &text(
            "  parameter Mode n = Mode(3);
equation
  der(x) = 1;",
        ),
    );
    assert!(e.contains("`M.Mode` has no literal of ordinal 3"), "{e}");
    assert!(e.contains("expected 1 to 2"), "{e}");
    let e = errors(
        "negation",
        &text(
            "equation
  der(x) = if not m then 1 else 0;",
        ),
    );
    assert!(
        e.contains("`not` on a value of enumeration `M.Mode`"),
        "{e}"
    );
    let e = errors(
        "literals",
        "model L
  type Mode = enumeration(off, on = 2, off);
  Mode m;
equation
  when time > 1 then
    m = Mode.on;
  end when;
end L;
",
    );
    assert!(
        e.contains("a literal of enumeration `L.Mode` must be a name"),
        "{e}"
    );
    assert!(e.contains("enumeration `L.Mode` lists `off` twice"), "{e}");
}

/// Literals, `Integer(e)` and `E(k)` inside a function are inlined as
/// ordinals; a Boolean binding compares in literal order.
#[test]
fn enumeration_values_in_functions_and_bindings() {
    let path = model(
        "function",
        "model F
  type Mode = enumeration(off, on);
  function level
    input Real u;
    output Real y;
  algorithm
    y := if u > 0 then Integer(Mode.on) else Integer(Mode(1));
  end level;
  parameter Mode m = Mode.on;
  Real x(start = 0, fixed = true);
  Boolean running = m > Mode.off;
equation
  der(x) = level(time - 0.5) + (if running then 10 else 0);
  annotation(experiment(StopTime = 1));
end F;
",
    );
    let csv = simulate(path.to_str().unwrap(), &[]);
    let last = csv.rows.last().unwrap();
    // x' = 11 up to t = 0.5, 12 after
    assert!(
        (last[csv.col("x")] - 11.5).abs() < 1e-6,
        "{}",
        last[csv.col("x")]
    );
    assert_eq!(last[csv.col("running")], 1.0);
}
