//! Modelica functions (`.mo` files), inlined by symbolic execution at
//! instantiation or called at run time: the models of `models/functions/`
//! against closed forms, a pendulum whose constraint is written through a
//! function against the flat pendulum, `Modelica.Math` names, and the
//! limits and refusals of calls at run time.

mod common;

use common::{Csv, daec};

/// Simulates `model` and returns its CSV.
fn simulate(model: &str) -> Csv {
    let r = daec(&["simulate", model, "--rtol", "1e-10"]);
    assert_eq!(r.code, 0, "{model}:\n{}", r.stderr);
    Csv::parse(&r.stdout)
}

/// Asserts that column `name` of `csv` is `f(t)` at every output time to
/// `tol`, and returns the number of rows checked.
fn assert_column(csv: &Csv, name: &str, tol: f64, f: impl Fn(f64) -> f64) -> usize {
    let c = csv.col(name);
    for row in &csv.rows {
        let (t, v) = (row[0], row[c]);
        assert!(
            (v - f(t)).abs() <= tol,
            "{name} = {v} at t = {t}, expected {}",
            f(t)
        );
    }
    csv.rows.len()
}

/// A `for` loop over `n - 1:-1:1` (Horner's scheme) with `size` of an
/// array argument and a protected variable with a binding.
#[test]
fn horner_function_evaluates_the_polynomial() {
    let csv = simulate("models/functions/horner.mo");
    let n = assert_column(&csv, "x", 1e-12, |t| {
        1.0 + 2.0 * t + 3.0 * t * t + 4.0 * t.powi(3)
    });
    assert_eq!(n, 11);
    assert_column(&csv, "y", 1e-7, |t| t + t * t + t.powi(3) + t.powi(4));
    let flat = daec(&["flatten", "models/functions/horner.mo"]);
    assert!(
        flat.stdout
            .contains("x = ((4 * time + 3) * time + 2) * time + 1;"),
        "{}",
        flat.stdout
    );
}

/// `if`/`elseif`/`else` on run-time values becomes an if-expression;
/// named arguments in any order and defaults that use earlier inputs.
#[test]
fn piecewise_function_with_named_and_default_arguments() {
    let csv = simulate("models/functions/piecewise.mo");
    let s = |t: f64| (2.0 * std::f64::consts::PI * t).sin();
    assert_column(&csv, "y", 1e-9, |t| s(t).clamp(-0.5, 0.5));
    assert_column(&csv, "z", 1e-9, |t| (2.0 * s(t)).clamp(-1.0, 1.0));
    // Both limits are reached within the run.
    let y = csv.col("y");
    assert!(csv.rows.iter().any(|r| r[y] == 0.5));
    assert!(csv.rows.iter().any(|r| r[y] == -0.5));
}

/// A `while` loop with a bound known at instantiation is unrolled; `break`
/// in a `for` and a conditional `return` are merged like conditions.
#[test]
fn while_break_and_return_are_unrolled() {
    let csv = simulate("models/functions/while_loop.mo");
    // n = firstAbove(20) + 7 = 6 + 7 = 13 terms after the first.
    let partial = |t: f64| {
        let x = 0.5 * t;
        let (mut sum, mut term) = (1.0, 1.0);
        for k in 1..=13 {
            term *= x / f64::from(k);
            sum += term;
        }
        sum
    };
    assert_column(&csv, "y", 1e-12, partial);
    assert_column(&csv, "y", 1e-12, |t| (0.5 * t).exp());
    assert_column(&csv, "c", 1e-12, |t| (t - 0.5).max(0.0));
    let flat = daec(&["flatten", "models/functions/while_loop.mo"]);
    assert!(
        flat.stdout.contains("parameter Integer n = 13;"),
        "{}",
        flat.stdout
    );
}

/// Several outputs: `(a, b) = f(x)` equates each, a call in an expression
/// is its first output, `(s, t) := f(x)` inside a function; an array
/// output.
#[test]
fn several_outputs_as_equations_and_values() {
    let csv = simulate("models/functions/outputs.mo");
    assert_column(&csv, "r", 1e-9, |t| 1.0 + t);
    assert_column(&csv, "phi", 1e-9, |t| 2.0 * t);
    assert_column(&csv, "r2", 1e-12, |_| 10.0);
    assert_column(&csv, "s", 1e-12, |t| t + 1.0);
    assert_column(&csv, "d", 1e-12, |t| t - 1.0);
    // an array output, its size from a default argument
    assert_column(&csv, "q[1]", 1e-12, |t| t);
    assert_column(&csv, "q[2]", 1e-12, |t| t * t);
    assert_column(&csv, "q[3]", 1e-12, |t| t * t * t);
}

/// The pendulum with `squaredNorm(x, y) = L^2` is the flat pendulum: index
/// 3, the same offsets, the same solution.
#[test]
fn pendulum_through_a_function_matches_the_flat_one() {
    let offsets = |model: &str| {
        let r = daec(&["analyze", model]);
        assert_eq!(r.code, 0, "{model}: {}", r.stderr);
        assert!(
            r.stdout.contains("Structural index ν_Σ = 3"),
            "{}",
            r.stdout
        );
        r.stdout
            .lines()
            .filter(|l| l.contains("Offsets") || l.trim_start().starts_with("d = ("))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let with_function = offsets("models/functions/pendulum.mo");
    assert_eq!(with_function.len(), 2);
    assert_eq!(
        with_function,
        offsets("tests/modelica/flat/pendulum_flat.dae")
    );
    let a = simulate("models/functions/pendulum.mo");
    let b = simulate("tests/modelica/flat/pendulum_flat.dae");
    assert_eq!(a.rows.len(), b.rows.len());
    for name in ["x", "y", "vx", "vy", "lambda"] {
        let (ca, cb) = (a.col(name), b.col(name));
        for (ra, rb) in a.rows.iter().zip(&b.rows) {
            assert_eq!(ra[0], rb[0]);
            assert!(
                (ra[ca] - rb[cb]).abs() <= 1e-12 * (1.0 + rb[cb].abs()),
                "{name}: {} vs {} at t = {}",
                ra[ca],
                rb[cb],
                ra[0]
            );
        }
    }
}

/// `Modelica.Math.sin` and `Modelica.Math.atan2` are the built-ins, with
/// no `Modelica` library on the path.
#[test]
fn modelica_math_names_the_builtins() {
    for model in [
        "models/functions/piecewise.mo",
        "models/functions/outputs.mo",
    ] {
        let r = daec(&["flatten", model]);
        assert_eq!(r.code, 0, "{model}: {}", r.stderr);
        assert!(!r.stdout.contains("Modelica.Math"), "{}", r.stdout);
    }
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-math-{}.mo", std::process::id()));
    let names = [
        "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "exp", "log", "log10",
    ];
    let mut text = String::from("model M\n");
    for n in names {
        text.push_str(&format!("  Real {n}_v;\n"));
    }
    text.push_str("  Real atan2_v;\nequation\n");
    for n in names {
        text.push_str(&format!("  {n}_v = Modelica.Math.{n}(0.5);\n"));
    }
    text.push_str("  atan2_v = Modelica.Math.atan2(1, 2);\n");
    text.push_str("  annotation(experiment(StopTime = 0.1));\nend M;\n");
    std::fs::write(&tmp, text).unwrap();
    let r = daec(&["simulate", tmp.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let csv = Csv::parse(&r.stdout);
    let expected: [(&str, f64); 13] = [
        ("sin", 0.5f64.sin()),
        ("cos", 0.5f64.cos()),
        ("tan", 0.5f64.tan()),
        ("asin", 0.5f64.asin()),
        ("acos", 0.5f64.acos()),
        ("atan", 0.5f64.atan()),
        ("sinh", 0.5f64.sinh()),
        ("cosh", 0.5f64.cosh()),
        ("tanh", 0.5f64.tanh()),
        ("exp", 0.5f64.exp()),
        ("log", 0.5f64.ln()),
        ("log10", 0.5f64.log10()),
        ("atan2", 1f64.atan2(2.0)),
    ];
    for (n, v) in expected {
        let got = csv.value(0, &format!("{n}_v"));
        assert!((got - v).abs() <= 1e-14, "{n}: {got} vs {v}");
    }
}

/// A function of a package, found through the model's lookup, with a
/// package constant in its body.
#[test]
fn package_functions_are_found_and_use_package_constants() {
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-pkgfn-{}.mo", std::process::id()));
    std::fs::write(
        &tmp,
        "package P
  constant Real k = 3;
  function scale
    input Real x;
    output Real y;
  algorithm
    y := k*x;
  end scale;
end P;
model M
  Real y;
equation
  y = P.scale(time);
end M;
",
    )
    .unwrap();
    let r = daec(&["flatten", tmp.to_str().unwrap(), "--model", "M"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("y = 3 * time;"), "{}", r.stdout);
}

/// `annotation(Inline = false)` calls `sq` at run time and its
/// `derivative` annotation differentiates it: the annotation names half
/// the derivative on purpose, so `der(sq(t))` is t, which shows that it is
/// used; `LateInline = true` inlines `sq2`, differentiated exactly (2t).
/// A `for` with `break` over a known bound (the help of `E0140` for a
/// `while` on run-time values) halves 10 + t four times for t < 6.
#[test]
fn inline_false_honours_the_derivative_annotation_and_bounded_loops_inline() {
    let csv = simulate("models/functions/annotations.mo");
    assert_column(&csv, "x", 1e-12, |t| t * t);
    assert_column(&csv, "v", 1e-8, |t| t);
    assert_column(&csv, "x2", 1e-12, |t| t * t);
    assert_column(&csv, "w", 1e-8, |t| 2.0 * t);
    assert!(assert_column(&csv, "h", 1e-12, |t| (10.0 + t) / 16.0) > 40);
}

/// Simulates class `class` of `model` to tight tolerances.
fn simulate_class(model: &str, class: &str) -> Csv {
    let r = daec(&["simulate", model, "--model", class, "--rtol", "1e-10"]);
    assert_eq!(r.code, 0, "{class}:\n{}", r.stderr);
    Csv::parse(&r.stdout)
}

/// `sqrt` by Newton's iteration — a `while` on the argument, so a call at
/// run time — in an index-1 and an index-2 model, differentiated by its
/// `derivative` annotation and, without it, by forward-mode
/// differentiation of the algorithm: all against the closed forms.
#[test]
fn newton_sqrt_called_at_run_time_matches_closed_forms() {
    let model = "models/functions/newton_sqrt.mo";
    for class in ["NewtonSqrt.Index1", "NewtonSqrt.Index1AD"] {
        let csv = simulate_class(model, class);
        assert_eq!(assert_column(&csv, "x", 1e-8, |t| 4.0 * (-t).exp()), 21);
        assert_column(&csv, "y", 1e-8, |t| 2.0 * (-t / 2.0).exp());
    }
    for class in ["NewtonSqrt.Index2", "NewtonSqrt.Index2AD"] {
        let csv = simulate_class(model, class);
        assert_eq!(assert_column(&csv, "x", 1e-8, |t| (2.0 + t).powi(2)), 21);
        assert_column(&csv, "z", 1e-8, |t| 2.0 * (2.0 + t));
        let a = daec(&["analyze", model, "--model", class]);
        assert_eq!(a.code, 0, "{}", a.stderr);
        assert!(a.stdout.contains("Index: 2"), "{}", a.stdout);
    }
    // The annotated derivative is a call of `SqrtDer`, the other one of
    // the derivative daec makes.
    let a = daec(&["analyze", model, "--model", "NewtonSqrt.Index2"]);
    assert!(a.stdout.contains("NewtonSqrt.SqrtDer(x, "), "{}", a.stdout);
    let a = daec(&["analyze", model, "--model", "NewtonSqrt.Index2AD"]);
    assert!(
        a.stdout.contains("NewtonSqrt.SqrtPlain$der(x, "),
        "{}",
        a.stdout
    );
}

/// The 50 steps of `collatz`, and the derivative of the result (the
/// product of the slopes of the branches taken).
fn collatz(x: f64) -> (f64, f64) {
    let (mut y, mut dy) = (x, 1.0);
    for _ in 0..50 {
        if y > 1.0 {
            y /= 2.0;
            dy /= 2.0;
        } else {
            y = 1.5 * y + 0.1;
            dy *= 1.5;
        }
    }
    (y, dy)
}

/// An `if` on run-time values in a `for` loop of 50 iterations, which
/// inlined would double at each iteration (`E0115`), is called at run
/// time: its value and derivative against the same loop in Rust.
#[test]
fn if_in_a_long_loop_is_called_at_run_time() {
    let csv = simulate("models/functions/if_in_loop.mo");
    assert_eq!(assert_column(&csv, "y", 1e-12, |t| collatz(1.0 + t).0), 21);
    assert_column(&csv, "v", 1e-12, |t| collatz(1.0 + t).1);
}

/// `annotation(Inline = false)` on a function daec could inline gives
/// the results of the inlined copy to round-off, in an index-2 model
/// that differentiates it.
#[test]
fn inline_false_matches_inlining() {
    let csv = simulate("models/functions/inline_false.mo");
    let c = |n: &str| csv.col(n);
    for row in &csv.rows {
        assert!((row[c("x1")] - row[c("x2")]).abs() < 1e-12, "{row:?}");
        assert!((row[c("z1")] - row[c("z2")]).abs() < 1e-9, "{row:?}");
    }
    assert_eq!(csv.rows.len(), 21);
}

/// A `while` on run-time values that never ends: the call fails after
/// its iteration limit, and the run stops with exit code 3 and a note
/// that names the function.
#[test]
fn a_call_that_does_not_end_stops_the_run() {
    let r = daec(&["simulate", "tests/modelica/runtime/endless.mo"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "note: function `Endless.count` ran more than 100000 loop iterations in one call"
        ),
        "{}",
        r.stderr
    );
}

/// A call differentiated beyond the derivatives daec makes is a located
/// error (exit 1), by `simulate` and by `analyze`.
#[test]
fn a_derivative_beyond_the_supported_order_is_located() {
    for command in ["simulate", "analyze"] {
        let r = daec(&[command, "tests/modelica/runtime/derivative_order.mo"]);
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert!(
            r.stderr
                .contains("needs a derivative of order 5 of `Order.f`")
                && r.stderr.contains("at most 4 times")
                && r.stderr.contains("derivative_order.mo:4:12"),
            "{}",
            r.stderr
        );
    }
}

/// The outputs that cannot express a call at run time refuse the model
/// with exit code 2: the flat `.dae` text, `--emit modelica|rust`,
/// `--native`, an FMU; the readable listings print the call.
#[test]
fn outputs_without_calls_refuse_the_model() {
    let m = "models/functions/if_in_loop.mo";
    let fmu = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-callfn-{}.fmu", std::process::id()));
    for args in [
        vec!["flatten", m],
        vec!["regularize", m, "--form", "hic", "--emit", "rust"],
        vec!["regularize", m, "--form", "dd", "--emit", "modelica"],
        vec!["simulate", m, "--native"],
        vec!["fmu", m, "-o", fmu.to_str().unwrap()],
    ] {
        let r = daec(&args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("`IfInLoop.collatz`"),
            "{args:?}: {}",
            r.stderr
        );
    }
    let r = daec(&["regularize", m, "--form", "hic"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("IfInLoop.collatz(time + 1)"),
        "{}",
        r.stdout
    );
    let r = daec(&["flatten", m, "--format", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// `Inline = false` is a hint: a function the interpreter does not take
/// (an array variable) is inlined all the same.
#[test]
fn inline_false_on_a_function_with_an_array_inlines_it() {
    let text = "model M
  function f
    input Real x;
    output Real y;
  protected
    Real a[2];
  algorithm
    a := {x, 2*x};
    y := a[1] + a[2];
    annotation(Inline = false);
  end f;
  Real y;
equation
  y = f(time);
end M;
";
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-inline-hint-{}.mo", std::process::id()));
    std::fs::write(&tmp, text).unwrap();
    let r = daec(&["flatten", tmp.to_str().unwrap()]);
    let _ = std::fs::remove_file(&tmp);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("y = 3 * time;"), "{}", r.stdout);
}
