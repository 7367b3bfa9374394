//! Overdetermined DAEs integrated as QUALIDAES does (Steinbrecher 2016,
//! section 4): pendulum HiC (38) and the spring–mass chain HiC (Ex. 3.6).

mod common;

use common::*;
use daec_solve::{Options, Radau5, StepControl, solve};

fn opts(tol: f64) -> Options {
    Options {
        rtol: tol,
        atol: tol,
        ..Options::default()
    }
}

#[test]
fn pendulum_hic_over_10_periods_keeps_all_constraint_levels() {
    // Steinbrecher Ex. 5.1: period 2 s, start state returns at t = 2i.
    let p = pendulum_hic();
    let z0 = [1.0, 0.0, 0.0, 0.0, 0.0];
    let mut solver = Radau5::new(&p, opts(1e-7)).unwrap();
    let mut max_level = [0.0f64; 3];
    let mut steps = 0;
    solver
        .integrate(0.0, &z0, 20.0, |step| {
            let lv = pendulum_levels(&p.p, step.z);
            for (m, l) in max_level.iter_mut().zip(lv) {
                *m = m.max(l.abs());
            }
            steps += 1;
            StepControl::Continue
        })
        .unwrap();
    for (k, m) in max_level.iter().enumerate() {
        assert!(*m < 1e-7, "level {k}: {m:e}");
    }
    let stats = solver.stats();
    eprintln!("pendulum HiC [0,20]: {stats:?}");
    assert_eq!(stats.steps_accepted, steps);

    let times: Vec<f64> = (1..=10).map(|i| 2.0 * i as f64).collect();
    let out = solve(&p, 0.0, &z0, 20.0, &times, opts(1e-7)).unwrap();
    for (t, z) in out.t.iter().zip(&out.z) {
        let e = ((z[0] - 1.0).powi(2) + z[1].powi(2)).sqrt();
        assert!(e < 1e-5, "t={t}: position error {e:e}");
    }
}

#[test]
fn pendulum_di1_drifts_from_the_lost_constraints() {
    // The d-index-1 form keeps only the level-2 constraint; levels 0 and 1
    // drift (Steinbrecher, Ex. 5.1, Fig. 8), unlike HiC above.
    let p = pendulum_di1();
    let z0 = [1.0, 0.0, 0.0, 0.0, 0.0];
    let out = solve(&p, 0.0, &z0, 20.0, &[20.0], opts(1e-7)).unwrap();
    let lv = pendulum_levels(&p.p, &out.z[0]);
    // (HiC keeps level 0 at ~1e-9 at this tolerance; DI1 ~9e-7 at t = 20)
    assert!(lv[0].abs() > 3e-7, "level 0 did not drift: {:e}", lv[0]);
    assert!(lv[2].abs() < 1e-8);
}

#[test]
fn spring_mass_chain_hic_matches_the_exact_sine_solution() {
    let p = chain_hic();
    // Steinbrecher Ex. 5.2 / Baese 4.5: [0, 400] at TOL = 1e-7
    let times: Vec<f64> = (1..=400).map(|i| i as f64).collect();
    let out = solve(&p, 0.0, &CHAIN_Z0, 400.0, &times, opts(1e-7)).unwrap();
    assert_eq!(out.t.len(), 400);
    let mut max_err = 0.0f64;
    for (t, z) in out.t.iter().zip(&out.z) {
        let ex = chain_exact(*t);
        for i in 0..7 {
            max_err = max_err.max((z[i] - ex[i]).abs());
        }
    }
    eprintln!("chain HiC [0,400]: max error {max_err:e}, {:?}", out.stats);
    assert!(max_err < 1e-5, "max error {max_err:e}");
}

#[test]
fn underdetermined_problem_is_rejected() {
    let mut p = pendulum_index3();
    p.n_g = 0;
    let err = Radau5::new(&p, Options::default()).err().unwrap();
    assert_eq!(
        err,
        daec_solve::SolveError::InvalidProblem(
            "underdetermined: 4 equations for 5 unknowns".into()
        )
    );
}

#[test]
fn derivative_at_a_consistent_point_of_an_overdetermined_system_is_the_solutions() {
    // [S2-HiC]: 12 equations for 7 unknowns; on the exact solution the
    // selected rows give its derivative.
    let p = chain_hic();
    let mut r = Radau5::new(&p, Options::default()).unwrap();
    let t = 0.7;
    let zdot = r.derivative_at(t, &chain_exact(t)).unwrap();
    let (s, c) = (t.sin(), t.cos());
    let want = [-2.0 * c, c, -2.0 * c, 2.0 * s, -s, 2.0 * s, 1.5 * c];
    for (k, (got, want)) in zdot.iter().zip(want).enumerate() {
        assert!((got - want).abs() < 1e-6, "ż[{k}] = {got}, exact {want}");
    }
    // not n finite values: none
    assert!(r.derivative_at(t, &[0.0; 3]).is_none());
    assert!(r.derivative_at(t, &[f64::NAN; 7]).is_none());
}

/// The pendulum HiC from rest at (1, 0) at `tol` with the dense selection
/// kept within the step window `ratio` and while its pivots stay above
/// `pivot` times their value at the selection: the solution at
/// t = 2, 4, …, 20 and the statistics.
fn pendulum_with_kept_selection(ratio: f64, pivot: f64, tol: f64) -> daec_solve::Trajectory {
    let p = pendulum_hic();
    let z0 = [1.0, 0.0, 0.0, 0.0, 0.0];
    let times: Vec<f64> = (1..=10).map(|i| 2.0 * i as f64).collect();
    let o = Options {
        keep_selection_step_ratio: ratio,
        keep_selection_pivot: pivot,
        ..opts(tol)
    };
    solve(&p, 0.0, &z0, 20.0, &times, o).unwrap()
}

#[test]
fn a_kept_selection_gives_the_solution_of_a_fresh_one() {
    let fresh = pendulum_with_kept_selection(0.0, 0.0, 1e-7);
    let kept = pendulum_with_kept_selection(1.5, 0.0, 1e-7);
    eprintln!("fresh: {:?}\nkept:  {:?}", fresh.stats, kept.stats);
    // a window below 1 selects at every Jacobian
    assert_eq!(fresh.stats.selections, fresh.stats.jacobian_evals);
    // the default window keeps it for most Jacobians
    assert!(
        2 * kept.stats.selections < kept.stats.jacobian_evals,
        "{:?}",
        kept.stats
    );
    for ((t, a), b) in kept.t.iter().zip(&kept.z).zip(&fresh.z) {
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() < 1e-5, "t = {t}: {a:?} vs {b:?}");
        }
        // and both the exact periodic solution
        let e = ((a[0] - 1.0).powi(2) + a[1].powi(2)).sqrt();
        assert!(e < 1e-5, "t = {t}: position error {e:e}");
    }
}

#[test]
fn a_selection_is_kept_only_once_confirmed_and_within_its_step_window() {
    let window = pendulum_with_kept_selection(1.5, 0.0, 1e-6);
    let unbounded = pendulum_with_kept_selection(f64::INFINITY, 0.0, 1e-6);
    eprintln!(
        "window: {:?}\nunbounded: {:?}",
        window.stats, unbounded.stats
    );
    // every kept selection was confirmed by a second one: at least two
    // selections per change
    for s in [&window.stats, &unbounded.stats] {
        assert!(s.selections >= 2 * s.selection_changes, "{s:?}");
    }
    // the window re-selects where the unbounded selection stays
    assert!(
        window.stats.selections > unbounded.stats.selections,
        "{:?} vs {:?}",
        window.stats,
        unbounded.stats
    );
}

#[test]
fn a_kept_selection_is_replaced_when_its_pivots_degrade() {
    // From (1, 0) the position constraint x² + y² = 1 has the gradient
    // (2, 0): it determines x, and the kinematic row of y is selected.
    // At the bottom (0, −1) that gradient is (0, −2): the selected rows
    // turn singular twice per period and must be replaced before.
    let kept = pendulum_with_kept_selection(f64::INFINITY, 0.7, 1e-6);
    let until_failure = pendulum_with_kept_selection(f64::INFINITY, 0.0, 1e-6);
    eprintln!(
        "kept: {:?}\nuntil failure: {:?}",
        kept.stats, until_failure.stats
    );
    // 20 s are 10 periods, 20 passes through the bottom and 20 through
    // the turning points: at least one selection per pass
    assert!(kept.stats.selections >= 20, "{:?}", kept.stats);
    assert!(kept.stats.selection_changes >= 20, "{:?}", kept.stats);
    // keeping until a failure fails more often than re-selecting first
    assert!(
        until_failure.stats.newton_failures > kept.stats.newton_failures,
        "{:?} vs {:?}",
        until_failure.stats,
        kept.stats
    );
}

#[test]
fn a_negative_or_nan_step_window_is_refused() {
    let p = pendulum_hic();
    for ratio in [-1.0, f64::NAN] {
        let o = Options {
            keep_selection_step_ratio: ratio,
            ..opts(1e-6)
        };
        let e = Radau5::new(&p, o).err().expect("refused");
        assert!(
            e.to_string()
                .contains("keep_selection_step_ratio must be ≥ 0"),
            "{e}"
        );
    }
}

/// The pendulum HiC of length `l` from rest at (l, 0) over [0, 20] at
/// rtol = atol = 1e-8: the statistics and the largest relative residual
/// of the position constraint `x² + y² − l²` (relative to `l²`) at the
/// steps' ends.
fn long_pendulum(l: f64) -> (daec_solve::Stats, f64) {
    let mut p = pendulum_hic();
    p.p[1] = l;
    let z0 = [l, 0.0, 0.0, 0.0, 0.0];
    let mut solver = Radau5::new(&p, opts(1e-8)).unwrap();
    let mut worst = 0.0f64;
    solver
        .integrate(0.0, &z0, 20.0, |step| {
            worst = worst.max(pendulum_levels(&p.p, step.z)[0].abs() / (l * l));
            StepControl::Continue
        })
        .unwrap();
    (solver.stats(), worst)
}

#[test]
fn the_end_point_projection_stops_at_round_off() {
    // The projection's tolerance is relative to the integration's
    // tolerances (here 4.6e-11); a pendulum 1e4 long has a position
    // constraint of size 1e8, whose round-off (about 1e-8) is far above
    // it. The corrections stop where they no longer reduce the residual,
    // not at the cap of four per step.
    let (stats, worst) = long_pendulum(1e4);
    eprintln!("l = 1e4: {stats:?}, worst |g₀|/l² = {worst:e}");
    let steps = stats.steps_accepted;
    assert!(steps > 10, "{stats:?}");
    // (the starting point's checks evaluate g a few times more)
    assert!(
        stats.constraint_evals < 3 * steps,
        "{} evaluations of g in {steps} steps",
        stats.constraint_evals
    );
    // the constraint holds to round-off all the same
    assert!(worst < 1e-14, "{worst:e}");
    // a pendulum of length 1 reaches the tolerance at the same rtol
    let (unit, worst_unit) = long_pendulum(1.0);
    eprintln!("l = 1: {unit:?}, worst |g₀| = {worst_unit:e}");
    assert!(worst_unit < 1e-10, "{worst_unit:e}");
    assert!(unit.constraint_evals <= 5 * unit.steps_accepted + 10);
}
