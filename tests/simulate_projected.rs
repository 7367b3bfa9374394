//! `daec simulate --method radau5-projected --form index3`: projected
//! Radau IIA (projected-rk-index3-daes, §2, eq. (2.8)) end to end — the
//! paper's normalized pendulum (4.1) (numerical example 1, Table 1) and
//! Andrews' squeezer, refusal of models that are not index-3 Hessenberg.

mod common;

use common::daec;

/// Numeric CSV rows (after the header).
fn rows(csv: &str) -> Vec<Vec<f64>> {
    csv.lines()
        .skip(1)
        .map(|l| l.split(',').map(|x| x.parse::<f64>().unwrap()).collect())
        .collect()
}

/// Runs `daec ARGS… --stats-json FILE` (a file of its own in the
/// temporary directory), asserts success and returns the run and the
/// statistics.
fn daec_with_stats(args: &[&str]) -> (common::Run, serde_json::Value) {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let k = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let stats = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-projected-{}-{k}.json", std::process::id()));
    let mut all = args.to_vec();
    all.extend(["--stats-json", stats.to_str().unwrap()]);
    let r = daec(&all);
    assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    let s = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let _ = std::fs::remove_file(&stats);
    (r, s)
}

/// Runs the normalized pendulum over [0, 20] and returns the last CSV row
/// and the statistics.
fn pendulum(method: &str, tol: &str) -> (Vec<f64>, serde_json::Value) {
    let (r, s) = daec_with_stats(&[
        "simulate",
        "models/projected_rk/pendulum.dae",
        "--form",
        "index3",
        "--method",
        method,
        "--t-end",
        "20",
        "--rtol",
        tol,
        "--interval",
        "20",
    ]);
    (rows(&r.stdout).pop().unwrap(), s)
}

fn level(s: &serde_json::Value, l: usize) -> f64 {
    s["max_constraint_residual_by_level"][l].as_f64().unwrap()
}

fn count(s: &serde_json::Value, key: &str) -> u64 {
    s[key].as_u64().unwrap()
}

#[test]
fn normalized_pendulum_stays_on_the_constraints_with_fewer_evaluations() {
    // The reference at t = 20 (problem-catalogue P1, computed).
    let reference = [
        -0.517719703553,
        -0.855550295747,
        1.119137160280,
        -0.677224193289,
    ];
    // Bounds of the position and velocity error at t = 20 (2.7 periods),
    // one per tolerance.
    for (tol, bound) in [
        ("1e-6", 3e-4),
        ("1e-8", 1e-5),
        ("1e-10", 1e-6),
        ("1e-12", 1e-8),
    ] {
        let (end, proj) = pendulum("radau5-projected", tol);
        let (_, plain) = pendulum("radau5", tol);
        // d1, d2 at round-off after every step with the projection ...
        assert!(level(&proj, 0) < 1e-14, "{tol}: d1 = {:e}", level(&proj, 0));
        assert!(level(&proj, 1) < 1e-14, "{tol}: d2 = {:e}", level(&proj, 1));
        assert_eq!(count(&proj, "projections"), count(&proj, "steps_accepted"));
        // ... while without it the velocity constraint drifts.
        assert!(
            level(&plain, 1) > 1e-8,
            "{tol}: d2 = {:e}",
            level(&plain, 1)
        );
        assert_eq!(count(&plain, "projections"), 0);
        // The paper's Table 1 trend: fewer evaluations with projection.
        let (fp, fu) = (
            count(&proj, "residual_evals"),
            count(&plain, "residual_evals"),
        );
        assert!(fp < fu, "{tol}: {fp} evaluations projected, {fu} without");
        let err = end[1..5]
            .iter()
            .zip(&reference)
            .fold(0.0f64, |a, (x, r)| a.max((x - r).abs()));
        assert!(err < bound, "{tol}: error {err:e} at t = 20");
        eprintln!(
            "tol {tol}: f-evaluations {fp} projected / {fu} plain, Jacobians {} / {}, error at t = 20: {err:.1e}",
            count(&proj, "jacobian_evals"),
            count(&plain, "jacobian_evals")
        );
    }
}

#[test]
fn projected_radau_is_the_default_form_of_the_method_and_keeps_andrews_on_its_constraints() {
    // Andrews' squeezer (projected-rk-index3-daes, example 2): seven bodies,
    // six position constraints, 20 unknowns in first-order form.
    let (r, s) = daec_with_stats(&[
        "simulate",
        "models/projected_rk/andrews_squeezer.dae",
        "--method",
        "radau5-projected",
        "--rtol",
        "1e-6",
        "--interval",
        "0.01",
    ]);
    assert_eq!(count(&s, "unknowns"), 20);
    assert_eq!(count(&s, "constraints"), 6);
    assert!(level(&s, 0) < 1e-13 && level(&s, 1) < 1e-12, "{s}");
    assert!(r.stderr.contains("projections:"), "{}", r.stderr);
    let rows = rows(&r.stdout);
    assert_eq!(rows.last().map(|r| r[0]), Some(0.03));
}

/// The positions of Andrews' squeezer at t = 0.03 (IVP test set "andrews",
/// reference solution): β, Θ, γ, Φ, δ, Ω, ε.
const ANDREWS_REFERENCE: [f64; 7] = [
    15.81077119629904,
    -15.75637105984298,
    0.04082224013073101,
    -0.5347301163226948,
    0.5244099658805304,
    0.5347301163226948,
    1.048080741042263,
];

/// The state of Andrews' squeezer at t = 0.03 (the CSV's last row),
/// simulated with the extra options `args`.
fn andrews_at_end(args: &[&str]) -> Vec<f64> {
    let mut all = vec![
        "simulate",
        "models/projected_rk/andrews_squeezer.dae",
        "--interval",
        "0.03",
    ];
    all.extend_from_slice(args);
    let r = daec(&all);
    assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
    let end = rows(&r.stdout).pop().unwrap();
    assert_eq!(end[0], 0.03);
    end
}

/// The largest position error of a state of Andrews' squeezer at t = 0.03.
fn andrews_position_error_of(end: &[f64]) -> f64 {
    end[1..8]
        .iter()
        .zip(&ANDREWS_REFERENCE)
        .fold(0.0f64, |a, (x, r)| a.max((x - r).abs()))
}

/// The largest position error of Andrews' squeezer at t = 0.03 with Radau
/// IIA on the index-3 formulation, with or without the projection.
fn andrews_position_error(method: &str, tol: &str) -> f64 {
    andrews_position_error_of(&andrews_at_end(&[
        "--form", "index3", "--method", method, "--rtol", tol,
    ]))
}

#[test]
fn projecting_andrews_velocities_in_the_mass_metric_keeps_the_accuracy() {
    // Eq. (2.8) moves the velocities along ∂k/∂λ = −M⁻¹Gᵀ. Andrews' mass
    // matrix is far from the identity (inertias 1e-7 … 1e-5), and a
    // Euclidean projection there turns the velocity error normal to the
    // manifold into one along it (positions at t = 0.03 off by 5.2e-2 at
    // 1e-6, 100× worse than without projecting), where Theorem 2.1 says
    // the projection leaves the accuracy untouched. In the mass metric
    // the projected and the plain run are about equally accurate (largest
    // position errors near 1e-3 at 1e-6 and 5e-5 at 1e-8; Hairer's RADAU5
    // on the 27-variable index-3 form: 9.1e-4 and 5.2e-6).
    for (tol, bound) in [("1e-6", 3e-3), ("1e-8", 2e-4)] {
        let projected = andrews_position_error("radau5-projected", tol);
        let plain = andrews_position_error("radau5", tol);
        eprintln!("tol {tol}: position error {projected:.1e} projected, {plain:.1e} without");
        assert!(projected < bound, "{tol}: projected error {projected:e}");
        assert!(plain < bound, "{tol}: plain error {plain:e}");
        assert!(
            projected < 2.0 * plain,
            "{tol}: the projection costs accuracy: {projected:e} against {plain:e}"
        );
    }
}

/// The multipliers λ₁…λ₆ of Andrews' squeezer at t = 0.03 (IVP test set
/// "andrews", y22…y27).
const ANDREWS_MULTIPLIERS: [f64; 6] = [
    199.175333373191,
    -29.75531228015052,
    23.06654119098399,
    31.45271365475927,
    22.64249232082739,
    11.61740700019673,
];

#[test]
fn andrews_on_the_default_hic_form_is_accurate_in_positions_and_multipliers() {
    // The default path (HiC, overdetermined Radau IIA). The equation
    // selection pivots each constraint on the unknowns of its own level
    // (dummy derivatives). Complete pivoting by magnitude would solve the
    // velocity constraints G(q)v = 0 for positions (their entries there,
    // ∂(Gv)/∂q, are ~10³ × those on v), so that the positions follow the
    // velocities' direction instead of q̇ = v, with a position error of
    // 1.1e-6 at 1e-6 in 232 steps. With the level pivots: 5.8e-7 at 1e-6
    // and 1.6e-4 at 1e-3; multipliers (relative to max(1, |λ|)) 2.3e-6
    // and 3.4e-4. At 1e-3 the error at t = 0.03 moves with any change to
    // the iteration while the largest error along the run stays within
    // the tolerance, so that bound only guards against gross errors.
    // Hairer's RADAU5 on the index-3 form: positions 9.1e-4 at 1e-6.
    // Every component controlled (`all`): the default of a mechanical
    // system, index scaling, leaves the multipliers' error to h²·TOL
    // (positions 1.2e-5 at 1e-6), which hides the selection's effect.
    for (tol, pos_bound, lambda_bound) in [("1e-6", 1.5e-6, 1e-5), ("1e-3", 1e-3, 1e-3)] {
        let end = andrews_at_end(&["--rtol", tol, "--error-control", "all"]);
        let pos = andrews_position_error_of(&end);
        let lambda = end[8..14]
            .iter()
            .zip(&ANDREWS_MULTIPLIERS)
            .fold(0.0f64, |a, (x, r)| a.max((x - r).abs() / r.abs().max(1.0)));
        eprintln!("tol {tol}: positions {pos:.1e}, multipliers {lambda:.1e}");
        assert!(pos < pos_bound, "{tol}: position error {pos:e}");
        assert!(lambda < lambda_bound, "{tol}: multiplier error {lambda:e}");
    }
}

/// The statistics of Andrews' squeezer on the default (HiC) form at
/// rtol = `tol`.
fn andrews_stats(tol: &str) -> serde_json::Value {
    daec_with_stats(&[
        "simulate",
        "models/projected_rk/andrews_squeezer.dae",
        "--rtol",
        tol,
        "--interval",
        "0.03",
    ])
    .1
}

#[test]
fn andrews_work_falls_as_the_tolerance_loosens() {
    // A Newton failure retries the step with a smaller h and the same
    // matrix (RADAU5). With the Jacobians at the predicted midpoint that
    // matrix sits at a point extrapolated half the failed step ahead;
    // near t = 0.02, where the squeezer turns sharply, keeping it makes
    // the Newton iteration fail again and again (θ growing as h shrinks,
    // down to h ≈ 1e-6), and looser tolerances cost more work than
    // tighter ones. From the second failure of a step the Jacobians are
    // taken at the step start (`daec_solve::MIDPOINT_FAILURES`),
    // and the work falls as the tolerance loosens. With the Newton test
    // of a mechanical system converging the velocities, accelerations and
    // multipliers only to what the error test asks of them, the work is
    // a quarter of what it was (448, 457, 416, 553, 577 evaluations
    // against 1880, 1968, 2129, 2554, 2719) and flat from 1e-3 to 1e-4,
    // where the squeezer's motion, not the tolerance, sets the 35–36
    // steps: a looser tolerance may cost at most 10 % more than the
    // next tighter one (at 3e-4 and 1e-4 the equation selection kept
    // over different steps tips it either way), and 1e-3 less than 1e-5.
    let tols = ["1e-3", "3e-4", "1e-4", "3e-5", "1e-5"];
    let work: Vec<u64> = tols
        .iter()
        .map(|tol| count(&andrews_stats(tol), "residual_evals"))
        .collect();
    eprintln!("residual evaluations at {tols:?}: {work:?}");
    assert!(work[0] < work[4], "{work:?}");
    for (k, pair) in work.windows(2).enumerate() {
        assert!(
            pair[0] as f64 <= 1.10 * pair[1] as f64,
            "{} costs {} evaluations, {} costs {}",
            tols[k],
            pair[0],
            tols[k + 1],
            pair[1]
        );
    }
}

#[test]
fn andrews_structural_extension_takes_dummies_whose_constraint_block_is_regular() {
    // The HVT of largest κ_T = Π|𝔍_ij| (Steinbrecher 2016, §3.1) makes
    // β, Θ, γ, Φ, Ω, ε dummies, but the four position constraints that
    // fix β, Θ, γ, Φ are dependent in them at the start, so that StE on
    // it fails. The HVT is chosen among those whose dummies' blocks
    // Gaussian elimination finds regular; StE integrates (β free) and
    // matches the test-set reference (2.5e-9 at the model's 1e-8).
    let end = andrews_at_end(&["--form", "ste"]);
    let pos = andrews_position_error_of(&end);
    assert!(pos < 1e-7, "position error {pos:e}");
}

#[test]
fn models_that_are_not_index_3_hessenberg_are_refused() {
    // The spring chain has index 5, Akzo Nobel index 1.
    for (m, index) in [
        ("models/steinbrecher/spring_chain.dae", "index 5"),
        ("models/baese/akzo_nobel.dae", "index 1"),
    ] {
        let r = daec(&["simulate", m, "--method", "radau5-projected"]);
        assert_eq!(r.code, 1, "{m}: {}", r.stderr);
        assert!(r.stderr.contains(index), "{m}: {}", r.stderr);
        assert!(r.stderr.contains("use --form hic"), "{m}: {}", r.stderr);
        assert!(r.stdout.is_empty());
    }
    // The method needs the index-3 formulation, HERK a regularized one.
    let p = "models/steinbrecher/pendulum.dae";
    let r = daec(&[
        "simulate",
        p,
        "--method",
        "radau5-projected",
        "--form",
        "hic",
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("use --form index3"), "{}", r.stderr);
    let r = daec(&["simulate", p, "--method", "herk", "--form", "index3"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("need the hidden constraints"),
        "{}",
        r.stderr
    );
    let r = daec(&["simulate", p, "--form", "index4"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("index3"), "{}", r.stderr);
}
