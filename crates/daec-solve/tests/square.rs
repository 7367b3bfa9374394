//! Square DAEs: Akzo Nobel (index 1), the index-3 pendulum as RADAU5 takes
//! it, and a stiff linear index-1 problem with exact solution.

mod common;

use common::*;
use daec_solve::{Options, Radau5, SolveError, StepControl, first_rising_edge, solve};

fn opts(tol: f64) -> Options {
    Options {
        rtol: tol,
        atol: tol,
        ..Options::default()
    }
}

#[test]
fn akzo_nobel_matches_the_ivp_test_set_reference_to_7_digits() {
    let p = akzo();
    // TOL = 1e-8 relative; y4 ≈ 3.7e-4 needs an absolute tolerance below
    // 1e-8·|y4| for 7 digits (with atol = 1e-8 y4 and y6 get 6.8 digits).
    let o = Options {
        h0: 1e-10,
        rtol: 1e-8,
        atol: 1e-10,
        ..Options::default()
    };
    let out = solve(&p, 0.0, &AKZO_Y0, 180.0, &[180.0], o).unwrap();
    assert_eq!(out.t, vec![180.0]);
    for (i, (&got, &want)) in out.z[0].iter().zip(&AKZO_REF).enumerate() {
        let rel = ((got - want) / want).abs();
        assert!(rel < 1e-7, "y{}: {got} vs {want} (rel {rel:e})", i + 1);
    }
}

#[test]
fn akzo_nobel_work_at_tol_1e6_is_at_most_radau5s() {
    // Hairer's RADAU5 on this problem at rtol = atol = 1e-6 (h0 = 1e-10):
    // 38 steps, 295 f-evaluations, 25 Jacobians, 38 LU decompositions
    // (`benches/radau5-reference`).
    let p = akzo();
    let out = solve(
        &p,
        0.0,
        &AKZO_Y0,
        180.0,
        &[180.0],
        Options {
            h0: 1e-10,
            ..opts(1e-6)
        },
    )
    .unwrap();
    let s = out.stats;
    eprintln!("akzo 1e-6: {s:?}");
    assert!(s.steps_accepted <= 45, "{s:?}");
    assert!(s.residual_evals <= 330, "{s:?}");
    // accuracy: better than 1e-5 relative on the dominant components
    for i in [0, 2, 4] {
        let rel = ((out.z[0][i] - AKZO_REF[i]) / AKZO_REF[i]).abs();
        assert!(rel < 1e-5, "y{}: rel {rel:e}", i + 1);
    }
}

#[test]
fn stiff_linear_index1_problem_matches_exact_solution_and_dense_output() {
    let p = linear();
    let times: Vec<f64> = (1..=20).map(|k| k as f64 * 0.5).collect();
    // RADAU5 runs internally at 0.1·tol^(2/3); the stiff component y2 has
    // errors of that size, so tol = 1e-10 gives errors below 1e-7.
    let out = solve(&p, 0.0, &linear_exact(0.0), 10.0, &times, opts(1e-10)).unwrap();
    assert_eq!(out.t.len(), 20);
    assert_eq!(*out.t.last().unwrap(), 10.0);
    for (t, z) in out.t.iter().zip(&out.z) {
        let ex = linear_exact(*t);
        // non-stiff component: order 5, error well below the tolerance
        assert!((z[0] - ex[0]).abs() < 1e-8, "t={t}: {} vs {}", z[0], ex[0]);
        // stiff component (λ = −1000): Prothero–Robinson order reduction to
        // the stage order, and dense output between steps
        for i in 1..3 {
            assert!(
                (z[i] - ex[i]).abs() < 1e-6,
                "t={t} i={i}: {} vs {}",
                z[i],
                ex[i]
            );
        }
    }
    assert!(
        out.stats.steps_accepted > 50 && out.stats.steps_accepted < 400,
        "{:?}",
        out.stats
    );
    // at the step ends the algebraic equation holds to round-off
    let mut solver = Radau5::new(&p, opts(1e-8)).unwrap();
    solver
        .integrate(0.0, &linear_exact(0.0), 10.0, |step| {
            assert!((step.z[2] - step.z[0] - step.z[1]).abs() < 1e-12);
            StepControl::Continue
        })
        .unwrap();
}

#[test]
fn event_location_on_dense_output_finds_ln2() {
    // y1 = e^{-t} crosses 1/2 at t = ln 2.
    let p = linear();
    let mut solver = Radau5::new(&p, opts(1e-9)).unwrap();
    let mut found = None;
    solver
        .integrate(0.0, &linear_exact(0.0), 5.0, |step| {
            // the condition y1 < 1/2, false at the start
            match first_rising_edge(step, &[false], &[true], |_, z, out| out[0] = 0.5 - z[0]) {
                Some(edge) => {
                    assert_eq!(edge.events, [0]);
                    found = Some(edge.t);
                    StepControl::Stop
                }
                None => StepControl::Continue,
            }
        })
        .unwrap();
    let te = found.expect("event found");
    // the crossing lies in the last accepted step; check the dense accessor too
    let mut solver = Radau5::new(&p, opts(1e-9)).unwrap();
    solver
        .integrate(0.0, &linear_exact(0.0), 1.0, |step| {
            let tm = 0.5 * (step.t_start + step.t);
            let v = step.dense_component(tm, 0).unwrap();
            assert!((v - (-tm).exp()).abs() < 1e-7, "{v} at {tm}");
            assert_eq!(step.dense_component(tm, 3), None);
            StepControl::Continue
        })
        .unwrap();
    // the dense output is accurate to about the tolerance (stage order 3)
    assert!((te - std::f64::consts::LN_2).abs() < 1e-7, "{te}");
}

#[test]
fn pendulum_index3_radau5_formulation_returns_after_each_period() {
    let p = pendulum_index3();
    let z0 = [1.0, 0.0, 0.0, 0.0, 0.0];
    // the position constraint holds at every step end (end-point projection)
    let mut solver = Radau5::new(&p, opts(1e-7)).unwrap();
    let mut max_c0 = 0.0f64;
    let stats = solver
        .integrate(0.0, &z0, 10.0, |step| {
            max_c0 = max_c0.max(pendulum_levels(&p.p, step.z)[0].abs());
            StepControl::Continue
        })
        .unwrap();
    assert!(max_c0 < 1e-9, "{max_c0:e}");
    assert!(stats.steps_accepted > 100, "{stats:?}");
    let times: Vec<f64> = (1..=5).map(|k| 2.0 * k as f64).collect();
    let out = solve(&p, 0.0, &z0, 10.0, &times, opts(1e-7)).unwrap();
    for (t, z) in out.t.iter().zip(&out.z) {
        let e = ((z[0] - 1.0).powi(2) + z[1].powi(2)).sqrt();
        // index 3: the phase error grows linearly, ~7e-5 per period here
        assert!(e < 5e-4, "t={t}: position error {e:e}");
    }
}

#[test]
fn pendulum_index3_without_index_aware_scaling_fails() {
    // Without the h^{index-1} scaling of velocities and λ the error test
    // rejects every step of the index-3 formulation (Solving ODEs II, VII.4).
    let mut p = pendulum_index3();
    p.index = vec![1; 5];
    let f = solve(&p, 0.0, &[1.0, 0.0, 0.0, 0.0, 0.0], 10.0, &[], opts(1e-7)).unwrap_err();
    assert!(
        matches!(f.error, SolveError::StepSizeTooSmall { t, .. } if t < 0.1),
        "{:?}",
        f.error
    );
}

#[test]
fn bad_tolerances_and_times_are_rejected() {
    let p = linear();
    let err = Radau5::new(
        &p,
        Options {
            rtol: -1.0,
            ..Options::default()
        },
    )
    .err()
    .unwrap();
    assert!(matches!(err, SolveError::InvalidOptions(ref m) if m.contains("rtol = -1")));
    let f = solve(&p, 1.0, &linear_exact(0.0), 0.5, &[], Options::default()).unwrap_err();
    assert!(matches!(f.error, SolveError::InvalidOptions(_)));
    let f = solve(&p, 0.0, &[1.0, 2.0], 1.0, &[], Options::default()).unwrap_err();
    assert_eq!(
        f.error,
        SolveError::InvalidOptions("initial value has 2 entries, expected 3".into())
    );
}

#[test]
fn failure_keeps_results_up_to_the_last_good_step() {
    // y' = y², y(0) = 1 blows up at t = 1: the step size collapses.
    struct Blowup;
    impl daec_solve::QuasiLinearDae for Blowup {
        fn n_vars(&self) -> usize {
            1
        }
        fn n_diff(&self) -> usize {
            1
        }
        fn n_constraints(&self) -> usize {
            0
        }
        fn diff_residual(&self, _t: f64, z: &[f64], zd: &[f64], out: &mut [f64]) {
            out[0] = zd[0] - z[0] * z[0];
        }
        fn constraints(&self, _t: f64, _z: &[f64], _out: &mut [f64]) {}
        fn mass_pattern(&self) -> Vec<(usize, usize)> {
            vec![(0, 0)]
        }
        fn mass_values(&self, _t: f64, _z: &[f64], out: &mut [f64]) {
            out[0] = 1.0;
        }
        fn diff_jacobian_pattern(&self) -> Vec<(usize, usize)> {
            vec![(0, 0)]
        }
        fn diff_jacobian_values(&self, _t: f64, z: &[f64], _zd: &[f64], out: &mut [f64]) {
            out[0] = -2.0 * z[0];
        }
        fn constraint_jacobian_pattern(&self) -> Vec<(usize, usize)> {
            vec![]
        }
        fn constraint_jacobian_values(&self, _t: f64, _z: &[f64], _out: &mut [f64]) {}
    }
    let f = solve(&Blowup, 0.0, &[1.0], 2.0, &[], opts(1e-6)).unwrap_err();
    assert!(
        matches!(f.error, daec_solve::SolveError::StepSizeTooSmall { .. }),
        "{:?}",
        f.error
    );
    let t_fail = f.error.time().unwrap();
    assert!((t_fail - 1.0).abs() < 1e-2, "{:?}", f.error);
    // the results are kept up to the last good step ...
    assert_eq!(*f.partial.t.last().unwrap(), t_fail);
    assert!(f.partial.t.len() > 20);
    // ... and are accurate away from the pole: y = 1/(1 − t)
    for (t, z) in f
        .partial
        .t
        .iter()
        .zip(&f.partial.z)
        .filter(|(t, _)| **t < 0.9)
    {
        assert!((z[0] * (1.0 - t) - 1.0).abs() < 1e-4, "{} at {t}", z[0]);
    }
}

#[test]
fn domain_errors_in_the_residual_end_in_an_error_not_a_panic() {
    // y' = −2·sqrt(y), y(0) = 1: y = (1 − t)² reaches 0 at t = 1, after
    // which the residual is NaN for the negative iterates.
    struct Sqrt;
    impl daec_solve::QuasiLinearDae for Sqrt {
        fn n_vars(&self) -> usize {
            1
        }
        fn n_diff(&self) -> usize {
            1
        }
        fn n_constraints(&self) -> usize {
            0
        }
        fn diff_residual(&self, _t: f64, z: &[f64], zd: &[f64], out: &mut [f64]) {
            out[0] = zd[0] + 2.0 * z[0].sqrt();
        }
        fn constraints(&self, _t: f64, _z: &[f64], _out: &mut [f64]) {}
        fn mass_pattern(&self) -> Vec<(usize, usize)> {
            vec![(0, 0)]
        }
        fn mass_values(&self, _t: f64, _z: &[f64], out: &mut [f64]) {
            out[0] = 1.0;
        }
        fn diff_jacobian_pattern(&self) -> Vec<(usize, usize)> {
            vec![(0, 0)]
        }
        fn diff_jacobian_values(&self, _t: f64, z: &[f64], _zd: &[f64], out: &mut [f64]) {
            out[0] = 1.0 / z[0].sqrt();
        }
        fn constraint_jacobian_pattern(&self) -> Vec<(usize, usize)> {
            vec![]
        }
        fn constraint_jacobian_values(&self, _t: f64, _z: &[f64], _out: &mut [f64]) {}
    }
    let out = solve(&Sqrt, 0.0, &[1.0], 0.5, &[0.5], opts(1e-8)).unwrap();
    assert!((out.z[0][0] - 0.25).abs() < 1e-7, "{}", out.z[0][0]);
    let f = solve(&Sqrt, 0.0, &[1.0], 2.0, &[], opts(1e-8)).unwrap_err();
    let t = f.error.time().unwrap();
    assert!(t > 0.9 && t <= 1.0 + 1e-3, "{:?}", f.error);
    assert!(!f.partial.t.is_empty());
}

#[test]
fn jacobians_at_the_step_midpoint_save_newton_iterations() {
    // The simplified Newton iteration contracts with θ ≈ ‖(γ/h·M −
    // J)⁻¹(J(stage) − J)‖. Taken at the predicted midpoint, J is at most
    // half a step from every stage instead of a whole step from the last,
    // so the same run needs fewer iterations, and where Newton's
    // convergence limits the step size (the index-3 pendulum's constraint
    // rows turn with the pendulum), fewer steps: Akzo Nobel at 1e-6
    // (h0 = 1e-10 as RADAU5) takes 252 against 295 evaluations and 73
    // against 87 iterations; the index-3 pendulum over [0, 10] at 1e-7
    // 4888 against 5860 evaluations, 1447 against 1772 iterations and 525
    // against 540 accepted steps.
    let runs = |p: &dyn Fn(bool) -> daec_solve::Trajectory| (p(true), p(false));
    let akzo_problem = akzo();
    let (mid, start) = runs(&|midpoint| {
        let o = Options {
            h0: 1e-10,
            jacobian_at_midpoint: midpoint,
            ..opts(1e-6)
        };
        solve(&akzo_problem, 0.0, &AKZO_Y0, 180.0, &[180.0], o).unwrap()
    });
    eprintln!(
        "akzo: midpoint {:?}\n      start {:?}",
        mid.stats, start.stats
    );
    assert!(mid.stats.newton_iterations < start.stats.newton_iterations);
    assert!(mid.stats.residual_evals < start.stats.residual_evals);
    for out in [&mid, &start] {
        for i in [0, 2, 4] {
            let rel = ((out.z[0][i] - AKZO_REF[i]) / AKZO_REF[i]).abs();
            assert!(rel < 1e-5, "y{}: rel {rel:e}", i + 1);
        }
    }
    let pendulum = pendulum_index3();
    let times: Vec<f64> = (1..=5).map(|k| 2.0 * k as f64).collect();
    let (mid, start) = runs(&|midpoint| {
        let o = Options {
            jacobian_at_midpoint: midpoint,
            ..opts(1e-7)
        };
        solve(&pendulum, 0.0, &[1.0, 0.0, 0.0, 0.0, 0.0], 10.0, &times, o).unwrap()
    });
    eprintln!(
        "pendulum: midpoint {:?}\n          start {:?}",
        mid.stats, start.stats
    );
    assert!(mid.stats.newton_iterations < start.stats.newton_iterations);
    assert!(mid.stats.residual_evals < start.stats.residual_evals);
    for out in [&mid, &start] {
        for (t, z) in out.t.iter().zip(&out.z) {
            let e = ((z[0] - 1.0).powi(2) + z[1].powi(2)).sqrt();
            assert!(e < 5e-4, "t={t}: position error {e:e}");
        }
    }
}

thread_local! {
    /// The time of the last residual evaluation with ż = 0: the step start
    /// the integrator has reached (it evaluates `[−k; g]` there).
    static STEP_START: std::cell::Cell<f64> = const { std::cell::Cell::new(f64::NAN) };
}

fn akzo_res_noting_step_starts(p: &[f64], t: f64, y: &[f64], yd: &[f64], out: &mut [f64]) {
    if yd.iter().all(|&v| v == 0.0) {
        STEP_START.with(|s| s.set(t));
    }
    akzo_res(p, t, y, yd, out);
}

/// Akzo's Jacobian where the integrator has been, NaN anywhere else.
fn akzo_jd_at_step_starts_only(p: &[f64], t: f64, y: &[f64], yd: &[f64], out: &mut [f64]) {
    if STEP_START.with(|s| s.get()) == t {
        akzo_jd(p, t, y, yd, out);
    } else {
        out.iter_mut().for_each(|x| *x = f64::NAN);
    }
}

#[test]
fn a_non_finite_midpoint_jacobian_falls_back_to_the_step_start() {
    // A model may be undefined at the predicted midpoint (an extrapolation
    // the integration never reaches). Its Jacobians are then taken at the
    // step start, as with `jacobian_at_midpoint` off: the same run, bit
    // for bit, instead of a Newton divergence.
    let mut p = akzo();
    p.res = akzo_res_noting_step_starts;
    p.jd = akzo_jd_at_step_starts_only;
    let run = |midpoint| {
        let o = Options {
            h0: 1e-10,
            jacobian_at_midpoint: midpoint,
            ..opts(1e-6)
        };
        solve(&p, 0.0, &AKZO_Y0, 180.0, &[60.0, 120.0, 180.0], o).unwrap()
    };
    let (mid, start) = (run(true), run(false));
    assert_eq!(mid, start);
    assert_eq!(mid.stats.steps_accepted, 34, "{:?}", mid.stats);
    for i in [0, 2, 4] {
        let rel = ((mid.z[2][i] - AKZO_REF[i]) / AKZO_REF[i]).abs();
        assert!(rel < 1e-5, "y{}: rel {rel:e}", i + 1);
    }
}

/// Akzo Nobel's initial derivative: `ż = k(z₀)` on the differential rows
/// (`E = I`), and `ż₆` from the constraint `z₆ = Ks·z₁·z₄` differentiated.
fn akzo_initial_derivative(p: &common::DenseDae) -> Vec<f64> {
    use daec_solve::QuasiLinearDae;
    let mut k = [0.0; 5];
    p.diff_residual(0.0, &AKZO_Y0, &[0.0; 6], &mut k);
    let mut zd: Vec<f64> = k.iter().map(|r| -r).collect();
    let ks = p.p[6];
    zd.push(ks * (zd[0] * AKZO_Y0[3] + AKZO_Y0[0] * zd[3]));
    zd
}

/// The first step's size and the run's statistics and end point.
fn first_step_and_end(
    p: &common::DenseDae,
    z0: &[f64],
    t_end: f64,
    o: Options,
) -> (f64, daec_solve::Stats, Vec<f64>) {
    let mut solver = Radau5::new(p, o).unwrap();
    let mut first = None;
    let mut end = vec![0.0; z0.len()];
    let stats = solver
        .integrate(0.0, z0, t_end, |step| {
            first.get_or_insert(step.t - step.t_start);
            end.copy_from_slice(step.z);
            StepControl::Continue
        })
        .unwrap();
    (first.unwrap(), stats, end)
}

#[test]
fn the_starting_step_is_chosen_from_the_initial_derivative() {
    // Solving ODEs I, II.4: with ż₀ given and h0 = 0 the first step is
    // min(100·h₀, (0.01/max(d₁, d₂))^{1/4}) — Akzo Nobel at 1e-6 starts
    // with 2.8e-2 instead of RADAU5's 1e-6, which takes six steps growing
    // by the factor 8 to get there.
    let p = akzo();
    let zdot0 = akzo_initial_derivative(&p);
    let fixed = first_step_and_end(
        &p,
        &AKZO_Y0,
        180.0,
        Options {
            h0: 1e-6,
            ..opts(1e-6)
        },
    );
    assert_eq!(fixed.0, 1e-6);
    // ż₀ not given: the solver solves E·ż = k, ∂g/∂z·ż = −∂g/∂t for it
    // (the same derivative up to round-off, so the same first step)
    let derived = first_step_and_end(&p, &AKZO_Y0, 180.0, opts(1e-6));
    let auto = first_step_and_end(
        &p,
        &AKZO_Y0,
        180.0,
        Options {
            initial_derivative: Some(zdot0),
            ..opts(1e-6)
        },
    );
    assert!((1e-2..5e-2).contains(&auto.0), "first step {:e}", auto.0);
    assert!(
        (derived.0 - auto.0).abs() <= 1e-12 * auto.0,
        "{:e} against {:e}",
        derived.0,
        auto.0
    );
    assert_eq!(auto.1.steps_rejected, 0, "{:?}", auto.1);
    assert!(
        auto.1.steps_accepted + 4 <= fixed.1.steps_accepted,
        "{:?} against {:?}",
        auto.1,
        fixed.1
    );
    assert!(auto.1.residual_evals < fixed.1.residual_evals);
    // as accurate at t = 180 as the run from 1e-6
    for (i, (&got, &want)) in auto.2.iter().zip(&AKZO_REF).enumerate() {
        let rel = ((got - want) / want).abs();
        assert!(rel < 2e-6, "y{}: rel {rel:e}", i + 1);
    }
}

#[test]
fn a_stiff_transient_at_the_start_gets_a_small_starting_step() {
    // The stiff linear problem started off its slow manifold (y₂(0) = 0
    // instead of ≈ 1): ż₂(0) = 1000 and z̈₂(0) = −10⁶ give a first step
    // below the transient's time scale 1e-3, and the transient is
    // followed without a rejected step.
    let p = linear();
    let z0 = [1.0, 0.0, 1.0];
    let zdot0 = vec![-1.0, 1000.0, 999.0];
    let (h, stats, end) = first_step_and_end(
        &p,
        &z0,
        1.0,
        Options {
            initial_derivative: Some(zdot0),
            ..opts(1e-6)
        },
    );
    assert!((1e-5..1e-3).contains(&h), "first step {h:e}");
    assert_eq!(stats.steps_rejected, 0, "{stats:?}");
    // y₂ = LIN_A·cos t + LIN_B·sin t − LIN_A·e^{−1000 t}
    let exact = linear_exact(1.0);
    let y2 = exact[1] - LIN_A * (-1000.0f64).exp();
    assert!((end[0] - exact[0]).abs() < 1e-6, "{end:?}");
    assert!((end[1] - y2).abs() < 1e-6, "{end:?}");
}

#[test]
fn a_step_bound_that_divides_the_span_reaches_the_end() {
    // With steps of h_max = 0.05, t = 0.05 + 0.05 + … reaches
    // 4.99999999999999 after 100 steps: the last step covers the
    // remaining round-off together with the step before it (as two
    // halves when they exceed h_max) instead of leaving a step of 1e-14
    // that fails as "step size too small".
    let p = linear();
    let out = solve(
        &p,
        0.0,
        &linear_exact(0.0),
        5.0,
        &[5.0],
        Options {
            h0: 0.05,
            h_max: 0.05,
            ..opts(1e-3)
        },
    )
    .unwrap();
    assert_eq!(out.t, vec![5.0]);
    let ex = linear_exact(5.0);
    assert!(
        (out.z[0][0] - ex[0]).abs() < 1e-4,
        "{} vs {}",
        out.z[0][0],
        ex[0]
    );
    assert!(out.stats.steps_accepted >= 100, "{:?}", out.stats);
}

/// The growing oscillation of the two-bit adding unit (`models/testset/`)
/// after its input ramp at t = 10: λ = a ± iω with a = 530, ω = 27 150
/// (`benches/testset/twobit_modes.py`), here on the charge-oriented linear
/// DAE `q̇ = A·v`, `0 = q − v`, `A = [[a, −ω], [ω, a]]`. Steps near half
/// its period 2π/ω sample the oscillation as an alternation from step to
/// step that grows by `|R(hλ)|` per step (Radau IIA's stability function;
/// above 1 for h < 1.15e-4, below 1 beyond, where the steps damp it): the
/// exact solution followed as far as the steps resolve it, not an
/// instability of the scheme.
const UNSTABLE_MODE: [f64; 2] = [530.0, 27_150.0];

fn unstable_mode_exact(t: f64) -> [f64; 2] {
    let [a, w] = UNSTABLE_MODE;
    let r = (a * t).exp();
    [r * (w * t).cos(), r * (w * t).sin()]
}

fn unstable_mode_res(p: &[f64], _t: f64, z: &[f64], zd: &[f64], out: &mut [f64]) {
    let (a, w) = (p[0], p[1]);
    out[0] = zd[0] - (a * z[2] - w * z[3]);
    out[1] = zd[1] - (w * z[2] + a * z[3]);
}

fn unstable_mode_con(_p: &[f64], _t: f64, z: &[f64], out: &mut [f64]) {
    out[0] = z[0] - z[2];
    out[1] = z[1] - z[3];
}

fn unstable_mode_mass(_p: &[f64], _t: f64, _z: &[f64], out: &mut [f64]) {
    out[0] = 1.0;
    out[4 + 1] = 1.0;
}

fn unstable_mode_jd(p: &[f64], _t: f64, _z: &[f64], _zd: &[f64], out: &mut [f64]) {
    let (a, w) = (p[0], p[1]);
    out[2..4].copy_from_slice(&[-a, w]);
    out[4 + 2..4 + 4].copy_from_slice(&[-w, -a]);
}

fn unstable_mode_jg(_p: &[f64], _t: f64, _z: &[f64], out: &mut [f64]) {
    out.copy_from_slice(&[1.0, 0.0, -1.0, 0.0, 0.0, 1.0, 0.0, -1.0]);
}

#[test]
fn a_growing_oscillation_is_followed_at_its_exact_rate() {
    let p = common::DenseDae {
        n: 4,
        n_d: 2,
        n_g: 2,
        p: UNSTABLE_MODE.to_vec(),
        index: vec![1; 4],
        res: unstable_mode_res,
        con: unstable_mode_con,
        mass: unstable_mode_mass,
        jd: unstable_mode_jd,
        jg: unstable_mode_jg,
    };
    let [v1, v2] = unstable_mode_exact(0.0);
    let z0 = [v1, v2, v1, v2];
    let t_end = 0.01;
    let times: Vec<f64> = (1..=10).map(|k| k as f64 * 1e-3).collect();
    let out = solve(&p, 0.0, &z0, t_end, &times, opts(1e-9)).unwrap();
    assert_eq!(out.t.len(), 10);
    for (t, z) in out.t.iter().zip(&out.z) {
        let ex = unstable_mode_exact(*t);
        let amplitude = (ex[0].hypot(ex[1])).max(1.0);
        for i in 0..2 {
            let err = (z[2 + i] - ex[i]).abs() / amplitude;
            assert!(
                err < 1e-6,
                "t={t}: v{} = {} vs {} (rel {err:e})",
                i + 1,
                z[2 + i],
                ex[i]
            );
        }
    }
    // the amplitude grew by e^{a·t_end} ≈ 200, as the exact solution
    let last = &out.z[9];
    let growth = last[2].hypot(last[3]);
    assert!(
        (growth / (UNSTABLE_MODE[0] * t_end).exp() - 1.0).abs() < 1e-5,
        "{growth}"
    );
    // At an amplitude of 1e-7 the error test accepts steps of about half
    // the period, h = 1e-4 (the adder's steps at t ≈ 10.0005): |hλ| ≈ 2.7,
    // v1 changes sign at nearly every step, and every step multiplies
    // w = v1 + i·v2 by the stability function R(hλ) of Radau IIA, of
    // modulus 1.017 (e^{a·h} = 1.054 damped by the method): the growing
    // alternation the adder shows.
    let z0: Vec<f64> = z0.iter().map(|x| 1e-7 * x).collect();
    let mut ends = vec![(0.0, [z0[2], z0[3]])];
    let o = Options {
        h_max: 1e-4,
        ..opts(1e-9)
    };
    let mut solver = Radau5::new(&p, o).unwrap();
    solver
        .integrate(0.0, &z0, 2e-3, |s| {
            ends.push((s.t, [s.z[2], s.z[3]]));
            StepControl::Continue
        })
        .unwrap();
    let steps = ends.len() - 1;
    let flips = ends
        .windows(2)
        .filter(|w| w[0].1[0] * w[1].1[0] < 0.0)
        .count();
    assert!(
        steps <= 30 && flips * 10 >= steps * 8,
        "{steps} steps, {flips} sign changes"
    );
    let [a, w] = UNSTABLE_MODE;
    for pair in ends.windows(2) {
        let ((t0, w0), (t1, w1)) = (pair[0], pair[1]);
        let h = t1 - t0;
        let r = radau_iia_stability((a * h, w * h));
        let want = (r.0 * w0[0] - r.1 * w0[1], r.0 * w0[1] + r.1 * w0[0]);
        let err = (w1[0] - want.0).hypot(w1[1] - want.1) / w0[0].hypot(w0[1]);
        assert!(
            err < 1e-6,
            "t = {t1}: step map differs from R(hλ) by {err:e}"
        );
        // below h ≈ 1.15e-4 the step map grows (|R| > 1) like the mode
        assert!(r.0.hypot(r.1) > 1.0, "|R| = {} at h = {h}", r.0.hypot(r.1));
    }
}

/// The stability function of the 3-stage Radau IIA method, the
/// (2,3)-Padé approximation of e^z (Solving ODEs II, IV.5),
/// `R(z) = (1 + 2z/5 + z²/20) / (1 − 3z/5 + 3z²/20 − z³/60)`, at the
/// complex `z = (re, im)`.
fn radau_iia_stability(z: (f64, f64)) -> (f64, f64) {
    let mul = |a: (f64, f64), b: (f64, f64)| (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0);
    let z2 = mul(z, z);
    let z3 = mul(z2, z);
    let num = (1.0 + 0.4 * z.0 + z2.0 / 20.0, 0.4 * z.1 + z2.1 / 20.0);
    let den = (
        1.0 - 0.6 * z.0 + 0.15 * z2.0 - z3.0 / 60.0,
        -0.6 * z.1 + 0.15 * z2.1 - z3.1 / 60.0,
    );
    let d = den.0 * den.0 + den.1 * den.1;
    let q = mul(num, (den.0, -den.1));
    (q.0 / d, q.1 / d)
}

/// Every accepted step of `solver` from Akzo Nobel's start to `t_end` as
/// bits (end time, solution, derivative and the dense output at the step's
/// midpoint), stopped by the observer after `stop_after` steps if given.
fn akzo_steps_as_bits(
    solver: &mut Radau5<'_, DenseDae>,
    t_end: f64,
    stop_after: Option<usize>,
) -> (Result<daec_solve::Stats, SolveError>, Vec<Vec<u64>>) {
    let mut steps = Vec::new();
    let result = solver.integrate(0.0, &AKZO_Y0, t_end, |step| {
        let mut mid = vec![0.0; step.z.len()];
        step.dense(0.5 * (step.t_start + step.t), &mut mid);
        let bits = std::iter::once(step.t)
            .chain(step.z.iter().copied())
            .chain(step.zdot.iter().copied())
            .chain(mid)
            .map(f64::to_bits)
            .collect();
        steps.push(bits);
        if stop_after.is_some_and(|k| steps.len() >= k) {
            StepControl::Stop
        } else {
            StepControl::Continue
        }
    });
    (result, steps)
}

#[test]
fn a_repeated_integration_on_one_integrator_gives_the_same_steps_bit_for_bit() {
    // The workspace, the LU storage and the transformation constants are
    // set up anew (or shared read-only) per integration: a second run,
    // and a run after one the observer stopped, repeat the first exactly.
    let p = akzo();
    let fresh = || Radau5::new(&p, opts(1e-6)).unwrap();
    let (first, steps) = akzo_steps_as_bits(&mut fresh(), 180.0, None);
    let first = first.unwrap();
    assert!(steps.len() > 10, "{} steps", steps.len());
    assert_eq!(first.steps_accepted, steps.len());
    let mut solver = fresh();
    let (s1, again1) = akzo_steps_as_bits(&mut solver, 180.0, None);
    let (stopped, part) = akzo_steps_as_bits(&mut solver, 180.0, Some(5));
    assert_eq!(stopped.unwrap().steps_accepted, 5);
    assert_eq!(part[..], steps[..5]);
    let (s2, again2) = akzo_steps_as_bits(&mut solver, 180.0, None);
    assert_eq!((s1.unwrap(), s2.unwrap()), (first, first));
    assert_eq!(again1, steps);
    assert_eq!(again2, steps);
}

#[test]
fn an_integration_after_a_failed_one_gives_the_same_steps_bit_for_bit() {
    // A run that fails (too few step attempts allowed) leaves nothing
    // behind for the next one on the same integrator.
    let p = akzo();
    let o = Options {
        max_steps: 12,
        ..opts(1e-6)
    };
    let (short, steps) = akzo_steps_as_bits(&mut Radau5::new(&p, o.clone()).unwrap(), 1.0, None);
    let short = short.unwrap();
    assert!(short.steps_accepted < 12, "{short:?}");
    let mut solver = Radau5::new(&p, o).unwrap();
    let (failed, _) = akzo_steps_as_bits(&mut solver, 180.0, None);
    assert!(
        matches!(failed, Err(SolveError::TooManySteps { max_steps: 12, .. })),
        "{failed:?}"
    );
    let (again, again_steps) = akzo_steps_as_bits(&mut solver, 1.0, None);
    assert_eq!(again.unwrap(), short);
    assert_eq!(again_steps, steps);
}

/// Every accepted step of `solver` from `(t0, z0)` to `t_end` as bits (end
/// time, solution and derivative), and the statistics or the error.
fn steps_as_bits(
    solver: &mut Radau5<'_, DenseDae>,
    (t0, z0): (f64, &[f64]),
    t_end: f64,
) -> (Result<daec_solve::Stats, SolveError>, Vec<Vec<u64>>) {
    let mut steps = Vec::new();
    let result = solver.integrate(t0, z0, t_end, |step| {
        let bits = std::iter::once(step.t)
            .chain(step.z.iter().copied())
            .chain(step.zdot.iter().copied())
            .map(f64::to_bits)
            .collect();
        steps.push(bits);
        StepControl::Continue
    });
    (result, steps)
}

#[test]
fn one_integrator_solves_other_starts_and_tolerances_as_fresh_ones_without_allocating() {
    // Solve A, solve B (another start, tolerance and end), fail C (too few
    // steps allowed), solve A again — on one integrator with its options
    // replaced in turn, and carried into a new integrator: each run
    // repeats a fresh integrator's steps bit for bit, and the work arrays
    // keep their size (allocated at the first run and again after the
    // failed one, which gives them up).
    let p = akzo();
    let fresh = |o: Options, start: (f64, &[f64]), t_end: f64| {
        steps_as_bits(&mut Radau5::new(&p, o).unwrap(), start, t_end)
    };
    let (a_opts, a_start, a_end) = (opts(1e-6), (0.0, &AKZO_Y0[..]), 180.0);
    let (a, a_steps) = fresh(a_opts.clone(), a_start, a_end);
    let a = a.unwrap();
    // B starts from A's state at its 10th step, a consistent point
    let b_bits = &a_steps[9];
    let b_t0 = f64::from_bits(b_bits[0]);
    let b_z0: Vec<f64> = b_bits[1..=6].iter().map(|&x| f64::from_bits(x)).collect();
    let (b_opts, b_end) = (opts(1e-4), 60.0);
    let (b, b_steps) = fresh(b_opts.clone(), (b_t0, &b_z0), b_end);
    let b = b.unwrap();
    assert!(b.steps_accepted > 3 && b_steps.len() != a_steps.len());
    let c_opts = Options {
        max_steps: 12,
        ..opts(1e-8)
    };
    let mut solver = Radau5::new(&p, a_opts.clone()).unwrap();
    assert_eq!(solver.storage().capacity(), 0);
    let (a1, a1_steps) = steps_as_bits(&mut solver, a_start, a_end);
    assert_eq!((a1.unwrap(), &a1_steps), (a, &a_steps));
    let capacity = solver.storage().capacity();
    assert!(capacity > 0);
    solver.set_options(b_opts).unwrap();
    let (b1, b1_steps) = steps_as_bits(&mut solver, (b_t0, &b_z0), b_end);
    assert_eq!((b1.unwrap(), &b1_steps), (b, &b_steps));
    assert_eq!(solver.storage().capacity(), capacity);
    solver.set_options(c_opts).unwrap();
    let (c1, _) = steps_as_bits(&mut solver, a_start, a_end);
    assert!(
        matches!(c1, Err(SolveError::TooManySteps { max_steps: 12, .. })),
        "{c1:?}"
    );
    // invalid options are refused and leave the integrator as it was
    assert!(solver.set_options(opts(-1.0)).is_err());
    solver.set_options(a_opts.clone()).unwrap();
    let (a2, a2_steps) = steps_as_bits(&mut solver, a_start, a_end);
    assert_eq!((a2.unwrap(), &a2_steps), (a, &a_steps));
    assert_eq!(solver.storage().capacity(), capacity);
    // the storage carried into a new integrator of the problem
    let mut carried = Radau5::with_storage(&p, a_opts, solver.into_storage()).unwrap();
    assert_eq!(carried.storage().capacity(), capacity);
    let (a3, a3_steps) = steps_as_bits(&mut carried, a_start, a_end);
    assert_eq!((a3.unwrap(), &a3_steps), (a, &a_steps));
    assert_eq!(carried.storage().capacity(), capacity);
}
