//! `daec simulate --method radau-2nd`: models written with `der(der(x))`
//! integrated as written by the Radau IIA discretisation of
//! wunderlich2005-second-order-daes (eqs. (29)/(30)) — the body on the
//! unit circle (62)–(63) against its reference, the refusal of first-order
//! models.

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
fn unit_circle_matches_the_reference_with_the_columns_of_radau5() {
    // problem-catalogue W3 (DOP853 at rtol 1e-13): t = 0.1.
    let (y1, y2, v1, v2, la) = (
        0.099849875368738,
        0.995002513760065,
        0.995658448199700,
        -0.099915699294952,
        0.002316786822683,
    );
    let m = "models/wunderlich/unit_circle.dae";
    let args = ["simulate", m, "--rtol", "1e-8", "--interval", "0.05"];
    let r = daec(&[&args[..], &["--method", "radau-2nd"]].concat());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let first = daec(&args);
    assert_eq!(first.code, 0, "{}", first.stderr);
    // Same columns as the first-order reduction: y1, y2, λ, der(y1), der(y2).
    assert_eq!(r.stdout.lines().next(), first.stdout.lines().next());
    assert_eq!(
        r.stdout.lines().next(),
        Some("time,y1,y2,lambda,der(y1),der(y2)")
    );
    let rows = rows(&r.stdout);
    assert_eq!(rows.len(), 3, "{}", r.stdout);
    let end = rows.last().unwrap();
    assert_eq!(end[0], 0.1);
    // Positions to the tolerance, velocities (index 2) to 10× of it.
    for (k, reference, tol) in [(1, y1, 1e-8), (2, y2, 1e-8), (4, v1, 1e-7), (5, v2, 1e-7)] {
        let v = end[k];
        assert!(
            (v - reference).abs() < tol,
            "column {k}: {v} vs {reference}"
        );
    }
    // λ of the index-3 formulation: a few steps of order s − 1 (not error
    // controlled, as in DASSL).
    assert!((end[3] - la).abs() < 1e-5, "λ = {} vs {la}", end[3]);
    assert!((end[1] * end[1] + end[2] * end[2] - 1.0).abs() < 1e-13);
    assert!(r.stderr.contains(", 1 constraint;"), "{}", r.stderr);
}

#[test]
fn first_order_models_are_refused_with_what_to_use_instead() {
    for m in [
        "models/wunderlich/unit_circle_first_order.dae",
        "models/steinbrecher/pendulum.dae",
    ] {
        let r = daec(&["simulate", m, "--method", "radau-2nd"]);
        assert_eq!(r.code, 1, "{m}: {}", r.stderr);
        assert!(r.stderr.contains("of first order"), "{m}: {}", r.stderr);
        assert!(
            r.stderr.contains("use --method radau5"),
            "{m}: {}",
            r.stderr
        );
        assert!(r.stdout.is_empty(), "{m}");
    }
    let r = daec(&[
        "simulate",
        "models/wunderlich/unit_circle.dae",
        "--method",
        "radau-2nd",
        "--tableau",
        "rk4",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}
