//! `daec simulate --method herk`: the half-explicit Runge–Kutta methods of
//! Bäse (2017) end to end — accuracy on the pendulum of steinbrecher2016
//! Ex. 5.1 and Bäse's academic example, refusal of models HERK cannot
//! integrate, usage errors.

mod common;

use common::daec;

/// Numeric CSV rows (after the header).
fn rows(csv: &str) -> Vec<Vec<f64>> {
    csv.lines()
        .skip(1)
        .map(|l| l.split(',').map(|x| x.parse::<f64>().unwrap()).collect())
        .collect()
}

#[test]
fn pendulum_hem4_matches_the_reference_every_period() {
    // steinbrecher2016 Ex. 5.1: period 2, so (x, y, v, w, λ) = (1, 0, 0, 0, 0)
    // at t = 2i (`ref(t=2)` in the model file).
    let r = daec(&[
        "simulate",
        "models/steinbrecher/pendulum.dae",
        "--method",
        "herk",
        "--tableau",
        "hem4",
        "--t-end",
        "10",
        "--rtol",
        "1e-8",
        "--atol",
        "1e-8",
        "--interval",
        "0.5",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows = rows(&r.stdout);
    assert_eq!(rows.len(), 21);
    for row in rows.iter().step_by(4) {
        let err = ((row[1] - 1.0).powi(2) + row[2].powi(2)).sqrt();
        assert!(err < 1e-5, "t = {}: position error {err:e}", row[0]);
        assert!(row[3].abs() < 1e-4 && row[4].abs() < 1e-4, "{row:?}");
    }
    // dense output (projected) between the periods stays on the circle
    for row in &rows {
        let c = row[1] * row[1] + row[2] * row[2] - 1.0;
        assert!(c.abs() < 1e-9, "t = {}: level-0 residual {c:e}", row[0]);
    }
    assert!(r.stderr.contains("steps:"), "{}", r.stderr);
}

#[test]
fn academic_example_with_every_tableau() {
    // Bäse 4.2.3: x = y = eᵗ.
    for tab in ["euler", "heun", "kutta3", "rk4", "hem4"] {
        let r = daec(&[
            "simulate",
            "models/baese/academic.dae",
            "--method",
            "herk",
            "--tableau",
            tab,
            "--rtol",
            "1e-6",
            "--interval",
            "0.5",
        ]);
        assert_eq!(r.code, 0, "{tab}: {}", r.stderr);
        let rows = rows(&r.stdout);
        let last = rows.last().unwrap();
        assert_eq!(last[0], 1.0);
        let e = std::f64::consts::E;
        // error control per step: the global error of the low orders is larger
        let bound = match tab {
            "euler" => 5e-3,
            "heun" => 5e-4,
            _ => 1e-4,
        };
        assert!((last[1] - e).abs() < bound, "{tab}: {last:?}");
        assert!((last[2] - last[1]).abs() < 1e-12, "{tab}: {last:?}");
    }
}

#[test]
fn herk_is_refused_where_it_does_not_apply() {
    // der(x) + der(y) = 1, x = y: two unknowns differentiated in one
    // equation, E has not full column rank on them (Bäse Criterion 3.6).
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-herk-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("coupled.dae");
    std::fs::write(
        &path,
        "model Coupled\n  Real x(start = 0, fixed = true);\n  Real y(start = 0);\nequation\n  der(x) + der(y) = 1;\n  x - y = 0;\nend Coupled;\n",
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let r = daec(&["simulate", p, "--method", "herk"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("full column rank"), "{}", r.stderr);
    assert!(r.stderr.contains("--method radau5"), "{}", r.stderr);
    // Radau IIA integrates it.
    let r = daec(&["simulate", p, "--interval", "1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn bad_method_options_are_usage_errors() {
    let m = "models/baese/academic.dae";
    let r = daec(&["simulate", m, "--method", "rk45"]);
    assert_eq!(r.code, 2);
    for name in ["radau5", "radau5-projected", "herk"] {
        assert!(r.stderr.contains(name), "{name}: {}", r.stderr);
    }
    let r = daec(&["simulate", m, "--method", "herk", "--tableau", "dopri"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("euler, heun, kutta3, rk4, hem4"),
        "{}",
        r.stderr
    );
    let r = daec(&["simulate", m, "--tableau", "rk4"]);
    assert_eq!(r.code, 2);
}
