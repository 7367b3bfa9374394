//! `daec simulate --method bdf-2nd|gauss-2nd|glm-2nd`: the modified BDF
//! method (wunderlich2005 §2.1), Gauss collocation
//! (Example 2.4) and the general linear method of Example 2.11 on models
//! written with `der(der(x))`, integrated as written like
//! `--method radau-2nd`.

mod common;

use common::daec;

/// Numeric CSV rows (after the header).
fn rows(csv: &str) -> Vec<Vec<f64>> {
    csv.lines()
        .skip(1)
        .map(|l| l.split(',').map(|x| x.parse::<f64>().unwrap()).collect())
        .collect()
}

/// `simulate MODEL --method METHOD ARGS…`, which must succeed: the header
/// and the last row.
fn last_row(model: &str, method: &str, args: &[&str]) -> (String, Vec<f64>) {
    let r = daec(&[&["simulate", model, "--method", method][..], args].concat());
    assert_eq!(r.code, 0, "{method} on {model}: {}", r.stderr);
    let header = r.stdout.lines().next().unwrap_or_default().to_string();
    (header, rows(&r.stdout).pop().unwrap_or_default())
}

/// The particle on the circular track (Example 1.3, exact solution
/// `y = (sin t², cos t²)`, `λ = −4t²` from t0 = 1): BDF and GLM with error
/// control reach t = 2 within small multiples of the tolerance 1e-6
/// (measured: BDF 1.9e-5 in y1 and 7e-4 in λ, GLM 2e-7 and 9e-4).
#[test]
fn circular_track_with_error_control() {
    let m = "models/wunderlich/circular_track.dae";
    for method in ["bdf-2nd", "glm-2nd"] {
        let (header, end) = last_row(m, method, &["--rtol", "1e-6", "--interval", "0.5"]);
        assert_eq!(header, "time,y1,y2,lambda,der(y1),der(y2)");
        assert_eq!(end[0], 2.0);
        assert!(
            (end[1] - 4f64.sin()).abs() < 1e-4,
            "{method}: y1 = {}",
            end[1]
        );
        assert!(
            (end[2] - 4f64.cos()).abs() < 1e-4,
            "{method}: y2 = {}",
            end[2]
        );
        assert!((end[3] + 16.0).abs() < 1e-2, "{method}: λ = {}", end[3]);
        assert!(
            (end[4] - 4.0 * 4f64.cos()).abs() < 1e-3,
            "{method}: y1' = {}",
            end[4]
        );
    }
}

/// The body on the unit circle (62)–(63) against the reference of
/// problem-catalogue W3 at t = 0.1 (measured at rtol 1e-8: BDF 4e-8 in
/// the positions, 1.4e-6 in λ; GLM 5e-10 and 5e-7).
#[test]
fn unit_circle_matches_the_reference() {
    let (y1, y2, la) = (0.099849875368738, 0.995002513760065, 0.002316786822683);
    let m = "models/wunderlich/unit_circle.dae";
    for method in ["bdf-2nd", "glm-2nd"] {
        let (_, end) = last_row(m, method, &["--rtol", "1e-8", "--interval", "0.05"]);
        assert_eq!(end[0], 0.1);
        assert!((end[1] - y1).abs() < 1e-6, "{method}: y1 = {}", end[1]);
        assert!((end[2] - y2).abs() < 1e-6, "{method}: y2 = {}", end[2]);
        assert!((end[3] - la).abs() < 1e-5, "{method}: λ = {}", end[3]);
    }
}

/// The RLC circuit (67) (index 1, exact `vC = exp(μt)`): every method,
/// Gauss included, to 3e-5 at t = 7 with rtol 1e-6 (reference of
/// models/wunderlich/rlc.dae; measured: BDF 1.3e-5 in vR, the others
/// ≤ 3e-6).
#[test]
fn rlc_with_every_method() {
    let (vl, vc, vr) = (0.005255920067, 0.083764932761, -0.089020852828);
    for method in ["bdf-2nd", "gauss-2nd", "glm-2nd"] {
        let (header, end) = last_row(
            "models/wunderlich/rlc.dae",
            method,
            &["--rtol", "1e-6", "--interval", "3.5"],
        );
        assert_eq!(header, "time,vL,vC,vR,der(vC)");
        assert_eq!(end[0], 7.0);
        for (k, reference) in [(1, vl), (2, vc), (3, vr)] {
            assert!(
                (end[k] - reference).abs() < 3e-5,
                "{method}, column {k}: {} vs {reference}",
                end[k]
            );
        }
    }
}

/// Gauss collocation on an index-3 system: a numerical failure (exit 3)
/// that says why and what to use, with the results up to the failure.
#[test]
fn gauss_on_an_index_3_system_fails_with_an_explanation() {
    let r = daec(&[
        "simulate",
        "models/wunderlich/circular_track.dae",
        "--method",
        "gauss-2nd",
    ]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.stderr.contains("not stiffly accurate"), "{}", r.stderr);
    assert!(r.stderr.contains("use --method radau-2nd"), "{}", r.stderr);
}

/// The refusals of `--method radau-2nd`, with each method's name.
#[test]
fn refusals_name_the_method() {
    for method in ["bdf-2nd", "gauss-2nd", "glm-2nd"] {
        let r = daec(&[
            "simulate",
            "models/wunderlich/circular_track_first_order.dae",
            "--method",
            method,
        ]);
        assert_eq!(r.code, 1, "{method}: {}", r.stderr);
        assert!(
            r.stderr.contains(&format!(
                "--method {method} integrates models written with second derivatives"
            )),
            "{}",
            r.stderr
        );
        assert!(r.stderr.contains("use --method radau5"), "{}", r.stderr);
        assert!(r.stdout.is_empty());
        let m = "models/wunderlich/unit_circle.dae";
        let r = daec(&["simulate", m, "--method", method, "--tableau", "rk4"]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        let r = daec(&["simulate", m, "--method", method, "--native"]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(
            r.stderr.contains(&format!(
                "--method {method} integrates the model as written"
            )),
            "{}",
            r.stderr
        );
    }
}

/// Every model of the library written with `der(der(x))` is integrated or
/// refused with an explanation by every second-order method: exit 0, 1
/// (refused) or 3 (a numerical failure, explained), never a panic. (BDF
/// and GLM integrate all the second-order ones; Gauss fails on the
/// index-3 ones, as `gauss_on_an_index_3_system_fails_with_an_explanation`
/// shows for one.)
#[test]
fn every_second_order_model_runs_or_is_refused() {
    let models: Vec<String> = common::models_under("")
        .into_iter()
        .filter(|m| {
            std::fs::read_to_string(common::root().join(m)).is_ok_and(|t| t.contains("der(der("))
        })
        .collect();
    assert!(models.len() >= 10, "{models:?}");
    for m in &models {
        for method in ["bdf-2nd", "gauss-2nd", "glm-2nd"] {
            let r = daec(&["simulate", m, "--method", method, "--max-steps", "20000"]);
            assert!([0, 1, 3].contains(&r.code), "{method} on {m}: {}", r.stderr);
            if r.code != 0 {
                assert!(r.stderr.contains("error"), "{method} on {m}: {}", r.stderr);
            }
        }
    }
}
