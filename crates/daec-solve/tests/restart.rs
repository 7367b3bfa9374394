//! The guarded first step of a restart (`Options::restart_step`): kept
//! where the solution is smooth from the start, abandoned for the cold
//! start where a fast transient begins there.

mod common;

use common::*;
use daec_solve::{Options, Radau5, Stats, StepControl};

/// Integrates the stiff linear problem (`y1' = −y1`, `y2' = −1000 (y2 −
/// cos t)`, `0 = y3 − y1 − y2`) from `(1, z0)` to 3 at tolerance 1e-6 with
/// the given `restart_step`: the size of the first accepted step, the
/// values at every accepted step and the statistics.
fn run(z0: &[f64], restart_step: f64) -> (f64, Vec<(f64, Vec<f64>)>, Stats) {
    run_with_gain(z0, restart_step, daec_solve::RESTART_MIN_GAIN)
}

/// [`run`] trying `restart_step` when it is `gain` times the cold start's
/// step (`Options::restart_min_gain`).
fn run_with_gain(z0: &[f64], restart_step: f64, gain: f64) -> (f64, Vec<(f64, Vec<f64>)>, Stats) {
    let p = linear();
    let opts = Options {
        rtol: 1e-6,
        atol: 1e-6,
        restart_step,
        restart_min_gain: gain,
        ..Options::default()
    };
    let mut solver = Radau5::new(&p, opts).unwrap();
    let mut first = None;
    let mut steps = Vec::new();
    let stats = solver
        .integrate(1.0, z0, 3.0, |s| {
            first.get_or_insert(s.t - s.t_start);
            steps.push((s.t, s.z.to_vec()));
            StepControl::Continue
        })
        .unwrap();
    (first.unwrap(), steps, stats)
}

/// The exact solution from `y1(1) = y1`, `y2(1) = y2` at `t`.
fn exact_from(y1: f64, y2: f64, t: f64) -> [f64; 3] {
    let slow = |t: f64| LIN_A * t.cos() + LIN_B * t.sin();
    let a = y1 * (-(t - 1.0)).exp();
    let b = slow(t) + (y2 - slow(1.0)) * (-1000.0 * (t - 1.0)).exp();
    [a, b, a + b]
}

fn max_error(steps: &[(f64, Vec<f64>)], y1: f64, y2: f64) -> f64 {
    steps
        .iter()
        .flat_map(|(t, z)| {
            let ex = exact_from(y1, y2, *t);
            (0..3).map(move |i| (z[i] - ex[i]).abs())
        })
        .fold(0.0, f64::max)
}

#[test]
fn a_smooth_restart_keeps_the_step_it_is_given() {
    // On the slow manifold the solution is smooth from t = 1: the step of
    // 0.2 (12 times the cold start's 0.017, tried with a minimal gain of
    // 10) is kept, and the run takes fewer steps than from the cold start
    // at the same accuracy.
    let z0 = linear_exact(1.0);
    let (h_cold, cold, s_cold) = run(&z0, 0.0);
    let (h_kept, kept, s_kept) = run_with_gain(&z0, 0.2, 10.0);
    assert!(h_cold < 0.02, "cold start {h_cold}");
    assert!((h_kept - 0.2).abs() < 1e-12, "first step {h_kept}");
    assert_eq!(s_kept.steps_rejected, s_cold.steps_rejected, "{s_kept:?}");
    let work = |s: &Stats| s.steps_accepted + s.steps_rejected;
    assert!(work(&s_kept) < work(&s_cold), "{s_kept:?} vs {s_cold:?}");
    let (e_cold, e_kept) = (
        max_error(&cold, z0[0], z0[1]),
        max_error(&kept, z0[0], z0[1]),
    );
    assert!(e_kept <= 1e-6, "error {e_kept:e} (cold start {e_cold:e})");
}

#[test]
fn a_fast_transient_after_a_restart_falls_back_to_the_cold_start() {
    // y2 = 0 where the slow solution is cos 1: a transient with rate 1000
    // begins at t = 1. The step of 0.2 fails its guard and the run goes on
    // from the cold start's step: the same first step and the same number
    // of accepted steps as without the hint, one rejected attempt more (the
    // values agree to rounding: the failed attempt leaves the Newton
    // iteration's convergence rate to the next one).
    let z0 = [(-1.0f64).exp(), 0.0, (-1.0f64).exp()];
    let (h_cold, cold, s_cold) = run(&z0, 0.0);
    let (h_hint, hinted, s_hint) = run_with_gain(&z0, 0.2, 1.0);
    assert_eq!(h_hint, h_cold);
    for ((ta, a), (tb, b)) in hinted.iter().zip(&cold).take(8) {
        assert_eq!(ta, tb);
        assert!(
            a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-12),
            "t = {ta}: {a:?} vs {b:?}"
        );
    }
    assert_eq!(s_hint.steps_accepted, s_cold.steps_accepted);
    assert_eq!(s_hint.steps_rejected, s_cold.steps_rejected + 1);
    let (e_cold, e) = (
        max_error(&cold, z0[0], z0[1]),
        max_error(&hinted, z0[0], z0[1]),
    );
    assert!(
        e <= 1e-5 && e <= 1.5 * e_cold,
        "error {e:e} (cold start {e_cold:e})"
    );
}

#[test]
fn a_step_that_saves_less_than_two_growth_steps_is_not_tried() {
    // A given step below RESTART_MIN_GAIN (64) times the cold start's
    // would save at most one of the cold start's steps (which grow by 8):
    // the run is the cold start's to the last bit, without a trial.
    let z0 = linear_exact(1.0);
    let (h_cold, cold, s_cold) = run(&z0, 0.0);
    let (h, hinted, s) = run(&z0, 0.5 * daec_solve::RESTART_MIN_GAIN * h_cold);
    assert_eq!(h, h_cold);
    assert_eq!(hinted, cold);
    assert_eq!(s.steps_rejected, s_cold.steps_rejected);
    assert_eq!(s.steps_accepted, s_cold.steps_accepted);
}
