//! The work–precision benchmark against RADAU5 (`benches/testset/`,
//! issue 22 point 4) without RADAU5 itself: the formulation its callbacks
//! evaluate (variable indices, mass matrix, Jacobian, start values), the
//! accuracy measure, the interpolation of the ratios and the interleaved
//! timing. The benchmark's modules are compiled in here as they are.

#[allow(dead_code)]
#[path = "../benches/testset/problem.rs"]
mod problem;
#[allow(dead_code)]
#[path = "../benches/testset/radau5.rs"]
mod radau5;
#[allow(dead_code)]
#[path = "../benches/testset/report.rs"]
mod report;
#[allow(dead_code)]
#[path = "../benches/testset/timing.rs"]
mod timing;

use problem::{Accuracy, Counts, Reference, Run};
use radau5::System;
use report::{Reached, reach};
use std::path::PathBuf;

fn testset() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models/testset")
}

fn reference(stem: &str) -> Reference {
    let text = std::fs::read_to_string(testset().join(format!("{stem}.ref.json"))).unwrap();
    Reference::parse(&text).unwrap_or_else(|e| panic!("{stem}: {e}"))
}

/// The RADAU5 set-up of a problem (tapes instead of native code).
fn setup(stem: &str) -> problem::Setup {
    let mut dae = problem::load_model(&testset().join(format!("{stem}.dae"))).unwrap();
    let analysis = problem::analyze_model(&mut dae).ok();
    problem::as_written(&mut dae, analysis.as_ref(), &reference(stem), None)
}

#[test]
fn radau5_gets_the_test_sets_index_counts_from_daecs_offsets() {
    // daec analyses these: the counts come from its offsets and equal the
    // test set's IWORK(5..7) (deTestSet's `ind`).
    for (stem, counts) in [
        ("akzo_nobel", [6, 0, 0]),
        ("andrews", [7, 7, 13]),
        ("transistor_amplifier", [8, 0, 0]),
        ("car_axis", [4, 4, 2]),
        ("fekete", [120, 40, 0]),
        ("slider_crank", [14, 10, 0]),
    ] {
        let s = setup(stem).unwrap_or_else(|e| panic!("{stem}: {e}"));
        assert_eq!(s.counts, counts, "{stem}");
        assert_eq!(
            s.indices_from, "from daec's offsets, equal to the test set's",
            "{stem}"
        );
    }
    // daec's offsets give all 29 algebraic unknowns of the water tube
    // index 2; the test set gives its 18 friction coefficients, which
    // index-1 equations determine, index 1: the statement serves
    let s = setup("water_tube").unwrap();
    assert_eq!(s.counts, [38, 11, 0]);
    assert_eq!(
        s.indices_from,
        "the test set's (daec's offsets give 20/29/0)"
    );
    // from daec's offsets or, where its analysis stops, the statement
    for (stem, counts) in [("charge_pump", [8, 1, 0]), ("two_bit_adder", [350, 0, 0])] {
        let s = setup(stem).unwrap_or_else(|e| panic!("{stem}: {e}"));
        assert_eq!(s.counts, counts, "{stem}");
    }
}

#[test]
fn the_test_sets_statement_serves_where_daecs_offsets_differ() {
    let mut dae = problem::load_model(&testset().join("akzo_nobel.dae")).unwrap();
    let analysis = problem::analyze_model(&mut dae).unwrap();
    let mut stated = reference("akzo_nobel");
    stated.index_counts = Some([5, 1, 0]);
    let s = problem::as_written(&mut dae, Some(&analysis), &stated, None).unwrap();
    assert_eq!(s.counts, [5, 1, 0]);
    assert_eq!(s.indices_from, "the test set's (daec's offsets give 6/0/0)");
}

#[test]
fn radau5_does_not_apply_where_the_mass_matrix_depends_on_the_state() {
    for stem in ["nand_gate", "wheelset"] {
        assert_eq!(
            setup(stem).unwrap_err(),
            "not applicable (M depends on y)",
            "{stem}"
        );
    }
}

/// `f(t0, y0)` and the Jacobian RADAU5 gets, and the largest difference
/// of the Jacobian from central differences of `f` relative to the
/// largest entry of its column (at least 1).
fn jacobian_error(s: &problem::AsWritten, t: f64, y: &[f64]) -> f64 {
    let n = s.n();
    let mut dfy = vec![0.0; n * n];
    s.jacobian(t, y, &mut dfy);
    let mut worst = 0.0f64;
    let (mut fp, mut fm) = (vec![0.0; n], vec![0.0; n]);
    for j in 0..n {
        let h = 1e-6 * y[j].abs().max(1e-3);
        let mut yp = y.to_vec();
        yp[j] += h;
        assert!(s.rhs(t, &yp, &mut fp));
        yp[j] = y[j] - h;
        assert!(s.rhs(t, &yp, &mut fm));
        let col = &dfy[j * n..(j + 1) * n];
        let scale = col.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        for i in 0..n {
            let fd = (fp[i] - fm[i]) / (2.0 * h);
            worst = worst.max((fd - col[i]).abs() / scale);
        }
    }
    worst
}

#[test]
fn radau5s_jacobian_is_the_derivative_of_its_f_and_m_is_constant_e() {
    // (the problems and their algebraic equations: the zero rows of M)
    for (stem, algebraic) in [
        ("akzo_nobel", 1),
        ("andrews", 13),
        ("transistor_amplifier", 0),
        ("charge_pump", 6),
        ("car_axis", 2),
        ("fekete", 40),
        ("slider_crank", 10),
        ("water_tube", 29),
    ] {
        let s = setup(stem).unwrap_or_else(|e| panic!("{stem}: {e}"));
        let n = s.n();
        let y0 = s.y0();
        let err = jacobian_error(&s, 0.0, &y0);
        // (rounding in the differences reaches 4e-5 on the water tube,
        // whose pressures are 1e5; a wrong sign or column would be O(1))
        assert!(err < 1e-4, "{stem}: Jacobian against differences {err:e}");
        // M: the differential rows' E (ones on the diagonal of q' = v
        // rows and the like), zero rows for the algebraic equations
        let mut am = vec![f64::NAN; n * n];
        s.mass(&mut am);
        let zero_rows = (0..n)
            .filter(|&i| (0..n).all(|j| am[j * n + i] == 0.0))
            .count();
        assert_eq!(zero_rows, algebraic, "{stem}: zero rows of M");
        // the test set's initial values satisfy the algebraic equations
        let mut f = vec![0.0; n];
        assert!(s.rhs(0.0, &y0, &mut f), "{stem}");
        let scale = y0.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        for i in (0..n).filter(|&i| (0..n).all(|j| am[j * n + i] == 0.0)) {
            assert!(
                f[i].abs() <= 1e-8 * scale,
                "{stem}: algebraic row {i} is {:e} at y0",
                f[i]
            );
        }
    }
}

#[test]
fn akzo_nobels_radau5_problem_is_the_test_sets() {
    // chemakzo: M = diag(1, 1, 1, 1, 1, 0); f6 = Ks y1 y4 − y6 (up to
    // the sign of an algebraic row) vanishes at the consistent y0;
    // f1 = −2 r1 + r2 − r3 − r4 at y0 (r2 = r3 = 0 with y3 = y5 = 0).
    let s = setup("akzo_nobel").unwrap();
    let mut am = vec![0.0; 36];
    s.mass(&mut am);
    for i in 0..6 {
        for j in 0..6 {
            let want = if i == j && i < 5 { 1.0 } else { 0.0 };
            assert_eq!(am[j * 6 + i], want, "M[{i}][{j}]");
        }
    }
    let y0 = s.y0();
    let mut f = vec![0.0; 6];
    assert!(s.rhs(0.0, &y0, &mut f));
    let (k1, k3) = (18.7, 0.09);
    let r1 = k1 * y0[0].powi(4) * y0[1].sqrt();
    let r4 = k3 * y0[0] * y0[3] * y0[3];
    let f1 = -2.0 * r1 - r4;
    assert!((f[0] - f1).abs() <= 1e-14 * f1.abs(), "{} {f1}", f[0]);
    assert!(f[5].abs() < 1e-12);
    // a point where sqrt(y2) is NaN is rejected (RADAU5's IPAR(1) < 0)
    let mut y = y0.clone();
    y[1] = -1e-3;
    assert!(!s.rhs(0.0, &y, &mut f));
}

#[test]
fn scd_is_the_test_sets_measure() {
    let r = Reference::parse(
        r#"{"problem": "p", "t_end": 1.0, "positions": ["a", "c"],
            "reference": {"a": 2.0, "b": 0.0, "c": -4.0}}"#,
    )
    .unwrap();
    let values = |a: f64, b: f64, c: f64| {
        move |n: &str| match n {
            "a" => Some(a),
            "b" => Some(b),
            "c" => Some(c),
            _ => None,
        }
    };
    // relative 1e-3 on a; b's reference is zero: absolute 1e-5
    let acc = r.accuracy(&values(2.002, 1e-5, -4.0)).unwrap();
    assert!((acc.all - 3.0).abs() < 1e-12, "{acc:?}");
    assert!((acc.positions.unwrap() - 3.0).abs() < 1e-12);
    let acc = r.accuracy(&values(2.0, 1e-5, -4.0)).unwrap();
    assert!((acc.all - 5.0).abs() < 1e-12);
    assert_eq!(acc.positions, Some(f64::INFINITY));
    let acc = r.accuracy(&values(2.0, f64::NAN, -4.0)).unwrap();
    assert_eq!(acc.all, f64::NEG_INFINITY);
    assert!(r.accuracy(&|_| None).is_err());
    // the subset the test set measures
    let r = Reference::parse(
        r#"{"problem": "p", "t_end": 1.0, "scd_components": ["a"],
            "reference": {"a": 2.0, "b": 0.0}}"#,
    )
    .unwrap();
    let acc = r.accuracy(&values(2.0002, 1.0, 0.0)).unwrap();
    assert!((acc.all - 4.0).abs() < 1e-9, "{acc:?}");
    assert_eq!(acc.positions, None);
}

#[test]
fn ratios_interpolate_the_time_log_linearly_in_the_scd() {
    let curve = [(4.0, 1e-3), (6.0, 1e-1), (8.0, 1.0)];
    let Reached::At(v) = reach(&curve, 5.0) else {
        panic!()
    };
    assert!((v - 1e-2).abs() < 1e-15, "{v}");
    assert_eq!(reach(&curve, 8.0), Reached::At(1.0));
    // more accurate than asked already at the loosest tolerance
    assert_eq!(reach(&curve, 3.0), Reached::AtMost(1e-3));
    assert_eq!(reach(&curve, 9.0), Reached::Never);
    // a curve that falls back passes 5.5 three times: the cheapest (4^0.75
    // between the first two points; 8 and 16·4^0.25 on the others)
    let curve = [(4.0, 1.0), (6.0, 4.0), (5.0, 16.0), (7.0, 64.0)];
    let Reached::At(v) = reach(&curve, 5.5) else {
        panic!()
    };
    assert!((v - 4f64.powf(0.75)).abs() < 1e-12, "{v}");
    assert_eq!(reach(&[], 5.0), Reached::Never);
}

#[test]
fn a_level_meets_the_target_with_half_the_time_and_at_most_the_steps() {
    use report::{Ratio, Target};
    let ratio = |time, steps| Ratio {
        tol: 1e-6,
        scd: 6.0,
        seconds: 1.0,
        native_time: time,
        native_steps: steps,
        tapes_time: Reached::Never,
    };
    let (at, most) = (Reached::At, Reached::AtMost);
    assert_eq!(ratio(at(0.5), at(1.0)).target(), Target::Met);
    assert_eq!(ratio(at(0.51), at(0.5)).target(), Target::NotMet);
    assert_eq!(ratio(at(0.4), at(1.2)).target(), Target::NotMet);
    // daec's loosest run is more accurate: its cost bounds daec's
    assert_eq!(ratio(most(0.3), most(0.9)).target(), Target::Met);
    assert_eq!(ratio(most(0.7), most(0.9)).target(), Target::Open);
    assert_eq!(
        ratio(Reached::Never, Reached::Never).target(),
        Target::NotReached
    );
}

fn run(seconds: f64) -> Run {
    Run {
        accuracy: Accuracy {
            all: 5.0,
            positions: None,
        },
        counts: Counts::default(),
        seconds,
    }
}

#[test]
fn the_solvers_are_timed_in_turn_until_each_has_enough_solves() {
    // RADAU5 0.2 s, tapes 0.01 s, native fails on its second solve
    let mut order = Vec::new();
    let mut native = 0;
    let cells = timing::measure([Ok(()), Ok(()), Ok(())], &mut |k| {
        order.push(k);
        match k {
            0 => Ok(run(0.2)),
            1 => Ok(run(0.01)),
            _ => {
                native += 1;
                if native == 2 {
                    Err("diverged".into())
                } else {
                    Ok(run(0.001))
                }
            }
        }
    });
    // in turn while all run; RADAU5 stops after 3 solves (0.6 s ≥ 0.3 s),
    // the tapes after 20
    assert_eq!(&order[..8], &[0, 1, 2, 0, 1, 2, 0, 1]);
    assert_eq!(order.iter().filter(|&&k| k == 0).count(), 3);
    assert_eq!(order.iter().filter(|&&k| k == 1).count(), 20);
    let m = cells[0].as_ref().unwrap();
    assert_eq!((m.solves, m.seconds), (3, 0.2));
    assert_eq!(cells[1].as_ref().unwrap().solves, 20);
    assert_eq!(cells[2].as_ref().unwrap_err(), "fails: diverged");
    // a solver that is not set up is not run
    let mut calls = 0;
    let cells = timing::measure([Err("not applicable".into()), Ok(()), Ok(())], &mut |_| {
        calls += 1;
        Ok(run(1.0))
    });
    assert_eq!(cells[0].as_ref().unwrap_err(), "not applicable");
    assert_eq!(calls, 6, "three solves each of 1 s");
}
