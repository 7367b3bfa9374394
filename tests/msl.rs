//! The `Modelica` library shipped with daec (`library/Modelica/`,
//! embedded in the binary): the example models of `models/msl/`
//! simulated against closed forms or their hand-flattened equivalents
//! (every class of the library is used by one of them), the shadowing of
//! the shipped library by a user's `Modelica`, and diagnostics located in
//! the library's files.

mod common;

use common::{Csv, daec};
use std::f64::consts::PI;

/// Simulates `model` with a tight tolerance and returns its CSV.
fn simulate(model: &str, extra: &[&str]) -> Csv {
    let mut args = vec!["simulate", model, "--rtol", "1e-9", "--atol", "1e-10"];
    args.extend_from_slice(extra);
    let r = daec(&args);
    assert_eq!(r.code, 0, "{model}:\n{}", r.stderr);
    Csv::parse(&r.stdout)
}

/// Every row of `csv` has `column` within `tol` of `exact(t)`.
fn assert_closed_form(csv: &Csv, column: &str, tol: f64, exact: impl Fn(f64) -> f64) {
    let c = csv.col(column);
    assert!(csv.rows.len() > 10, "only {} rows", csv.rows.len());
    for row in &csv.rows {
        let (t, want) = (row[0], exact(row[0]));
        assert!(
            (row[c] - want).abs() <= tol,
            "{column} = {} at t = {t}, the closed form gives {want}",
            row[c]
        );
    }
}

#[test]
fn rc_circuit_charges_as_the_closed_form() {
    let csv = simulate("models/msl/RC.mo", &[]);
    assert_closed_form(&csv, "capacitor.v", 1e-6, |t| 1.0 - (-t).exp());
    // The resistor carries the charging current (1 - v)/R.
    assert_closed_form(&csv, "resistor.i", 1e-9, |t| (-t).exp() / 1000.0);
    assert_closed_form(&csv, "resistor.LossPower", 1e-9, |t| {
        (-2.0 * t).exp() / 1000.0
    });
}

#[test]
fn rlc_circuit_from_the_library_matches_the_flat_circuit() {
    let lib = simulate("models/msl/RLC.mo", &[]);
    let flat = simulate("tests/modelica/flat/rlc_flat.dae", &[]);
    assert_eq!(lib.rows.len(), flat.rows.len());
    for (a, b) in lib.rows.iter().zip(&flat.rows) {
        let (i, vc) = (a[lib.col("L1.i")], a[lib.col("C1.v")]);
        assert!((i - b[flat.col("i")]).abs() <= 1e-6, "i at t = {}", a[0]);
        assert!((vc - b[flat.col("vC")]).abs() <= 1e-6, "vC at t = {}", a[0]);
    }
}

/// The ideal diode conducts the positive half-waves (load current
/// v/(R + Ron)) and blocks the negative ones (current Goff*v/(1 + Goff*R)).
#[test]
fn rectifier_passes_the_positive_half_waves() {
    let csv = simulate("models/msl/Rectifier.mo", &[]);
    let (ron, goff, r) = (1e-5, 1e-5, 100.0);
    assert_closed_form(&csv, "load.i", 1e-6, |t| {
        let v = 10.0 * (2.0 * PI * 50.0 * t).sin();
        if v >= 0.0 {
            v / (r + ron)
        } else {
            goff * v / (1.0 + goff * r)
        }
    });
    let last = csv.rows.len() - 1;
    assert!(csv.value(last, "diode.LossPower").abs() < 1e-3);
}

/// The ideal operational amplifier holds in_n at ground: the output is
/// -R2/R1 times the input; the constant current source drives its
/// current through the model's own conductance.
#[test]
fn inverting_amplifier_and_current_source() {
    let csv = simulate("models/msl/InvertingAmplifier.mo", &[]);
    assert_closed_form(&csv, "opAmp.out.v", 1e-8, |t| {
        -3.0 * 2.0 * (2.0 * PI * 10.0 * t).sin()
    });
    assert_closed_form(&csv, "opAmp.in_n.v", 1e-9, |_| 0.0);
    assert_closed_form(&csv, "conductance.v", 1e-8, |_| 0.5 / 4.0);
    assert_closed_form(&csv, "currentSource.i", 1e-8, |_| 0.5);
}

#[test]
fn drivetrain_matches_its_hand_flattened_equations() {
    let lib = simulate("models/msl/Drivetrain.mo", &[]);
    let flat = simulate("tests/modelica/flat/drivetrain_flat.dae", &[]);
    assert_eq!(lib.rows.len(), flat.rows.len());
    let pairs = [
        ("motorInertia.w", "w1"),
        ("motorInertia.phi", "phi1"),
        ("load.w", "w2"),
        ("load.phi", "phi2"),
        ("flywheel.w", "w3"),
    ];
    for (a, b) in lib.rows.iter().zip(&flat.rows) {
        for (x, y) in pairs {
            let (u, v) = (a[lib.col(x)], b[flat.col(y)]);
            assert!(
                // 4.4e-5 with the default of a mechanical system, index
                // scaling (the speeds, of index 2, controlled to h·TOL;
                // 1e-5 holds with every component controlled)
                (u - v).abs() <= 1e-4 * (1.0 + v.abs()),
                "{x} = {u} but {y} = {v} at t = {}",
                a[0]
            );
        }
        // The gear: flange_a turns ratio times flange_b.
        let (pa, pb) = (a[lib.col("gear.phi_a")], a[lib.col("gear.phi_b")]);
        assert!((pa - 5.0 * pb).abs() <= 1e-9 * (1.0 + pa.abs()));
    }
    // The flywheel: J*der(w) = tau - d*w from rest.
    assert_closed_form(&lib, "flywheel.w", 1e-6, |t| 4.0 * (1.0 - (-2.5 * t).exp()));
}

/// m*s'' + d*s' + c*s = F from s(0) = 2, v(0) = 0 (m = 1, c = 4, d = 0.4,
/// F = 1): s = F/c + (s0 - F/c)*exp(-a*t)*(cos(w*t) + a/w*sin(w*t)),
/// a = d/(2m), w = sqrt(c/m - a^2).
#[test]
fn mass_spring_damper_oscillates_as_the_closed_form() {
    let csv = simulate("models/msl/MassSpringDamper.mo", &[]);
    let a = 0.2_f64;
    let w = (4.0 - a * a).sqrt();
    let exact = |t: f64| 0.25 + 1.75 * (-a * t).exp() * ((w * t).cos() + a / w * (w * t).sin());
    assert_closed_form(&csv, "mass1.s", 1e-6, exact);
    assert_closed_form(&csv, "mass2.s", 1e-6, exact);
    // The damper's loss power is d*v^2.
    for row in &csv.rows {
        let v = row[csv.col("mass1.v")];
        let p = row[csv.col("damper.lossPower")];
        assert!(
            (p - 0.4 * v * v).abs() <= 1e-9,
            "lossPower at t = {}",
            row[0]
        );
        let v2 = row[csv.col("mass2.v")];
        let p2 = row[csv.col("springDamper.lossPower")];
        assert!(
            (p2 - 0.4 * v2 * v2).abs() <= 1e-9,
            "lossPower at t = {}",
            row[0]
        );
    }
    assert_closed_form(&csv, "force1.f", 1e-12, |_| -1.0);
}

#[test]
fn heat_capacitors_approach_their_equilibrium() {
    let csv = simulate("models/msl/HeatingChain.mo", &[]);
    let t_inf = 353.15 + 200.0 / 10.0;
    let exact = |t: f64| t_inf + (293.15 - t_inf) * (-10.0 * t / 500.0).exp();
    assert_closed_form(&csv, "body1.T", 1e-5, exact);
    assert_closed_form(&csv, "body2.T", 1e-5, exact);
    assert_closed_form(&csv, "wall1.Q_flow", 1e-4, |t| 10.0 * (353.15 - exact(t)));
}

/// T*y' = K*(r - y) - y with r = 0.5, then 1.5 from t = 0.5 on.
#[test]
fn feedback_loop_follows_the_closed_loop_response() {
    let csv = simulate("models/msl/FeedbackLoop.mo", &[]);
    let (k, tc) = (4.0, 0.2);
    let rate = (k + 1.0) / tc;
    let gain = k / (k + 1.0);
    let y1 = |t: f64| gain * 0.5 * (1.0 - (-rate * t).exp());
    let y05 = y1(0.5);
    let exact = |t: f64| {
        if t < 0.5 {
            y1(t)
        } else {
            gain * 1.5 + (y05 - gain * 1.5) * (-rate * (t - 0.5)).exp()
        }
    };
    assert_closed_form(&csv, "plant.y", 1e-6, exact);
    // The integrator of the sine 3*sin(4*pi*t).
    assert_closed_form(&csv, "integrator.y", 1e-6, |t| {
        3.0 / (4.0 * PI) * (1.0 - (4.0 * PI * t).cos())
    });
}

/// A `Modelica` on a library directory shadows the shipped one as a
/// whole: its classes are used, and the shipped classes are not found.
#[test]
fn a_users_modelica_shadows_the_shipped_library() {
    let lib = "tests/modelica/shadow";
    let own = simulate("tests/modelica/shadow/uses_own.mo", &["--lib", lib]);
    let last = own.rows.len() - 1;
    let t = own.rows[last][0];
    let x = own.value(last, "d.x");
    assert!((x - (-3.0 * t).exp()).abs() <= 1e-6, "d.x = {x} at t = {t}");
    let r = daec(&[
        "flatten",
        "tests/modelica/shadow/uses_shipped.mo",
        "--lib",
        lib,
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("error[E0130]: cannot find class `Modelica.Electrical.Analog.Basic.Ground`"),
        "{}",
        r.stderr
    );
    // Without the directory, the shipped class is found.
    let r = daec(&["flatten", "tests/modelica/shadow/uses_shipped.mo"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("'ground.p.v' = 0"), "{}", r.stdout);
}

/// A mistake found in a library class points at the library's file, line
/// and column.
#[test]
fn a_diagnostic_inside_the_library_names_its_file() {
    let r = daec(&[
        "simulate",
        "tests/modelica/msl_errors/resistor_without_r.mo",
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("error[E0107]: parameter `resistor.R` has no value"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("┌─ <daec library>/Modelica/Electrical/Analog/Basic.mo:12:29"),
        "{}",
        r.stderr
    );
}

/// The library's own files parse and flatten without a warning: no
/// `W0137` for its `package.order` files, no bound warnings at the start.
#[test]
fn the_library_models_flatten_without_warnings() {
    for model in [
        "RC",
        "Rectifier",
        "Drivetrain",
        "HeatingChain",
        "FeedbackLoop",
    ] {
        let r = daec(&["flatten", &format!("models/msl/{model}.mo")]);
        assert_eq!(r.code, 0, "{model}: {}", r.stderr);
        assert_eq!(r.stderr, "", "{model}");
    }
}

/// The embedding entry point of the Python package reads the shipped
/// library, as the command line does.
#[test]
fn the_embedding_entry_point_sees_the_library() {
    let text = daec::cli::ModelText::read("models/msl/RC.mo").unwrap();
    let out = daec::cli::run_embedded(
        vec!["daec".into(), "flatten".into(), "models/msl/RC.mo".into()],
        Some(text),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let cli = daec(&["flatten", "models/msl/RC.mo"]);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), cli.stdout);
}

/// `daec fmu` flattens a model of the library into the FMU's resources.
#[test]
fn the_fmu_export_sees_the_library() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-msl-fmu-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let runtime = dir.join("libdaec_fmu.so");
    std::fs::write(&runtime, b"\x7fELF stand-in for the runtime").unwrap();
    let out = dir.join("rc.fmu");
    let run = daec(&[
        "fmu",
        "models/msl/RC.mo",
        "-o",
        out.to_str().unwrap(),
        "--runtime",
        runtime.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let entries = daec_fmu::read_zip(&std::fs::read(&out).unwrap()).unwrap();
    let model = entries
        .iter()
        .find(|(n, _)| n == "resources/model.dae")
        .expect("the flat model");
    let flat = daec(&["flatten", "models/msl/RC.mo"]);
    assert_eq!(String::from_utf8(model.1.clone()).unwrap(), flat.stdout);
    let _ = std::fs::remove_dir_all(dir);
}

/// The conditional heat ports: the resistor's loss power heats a body as
/// in the hand-flattened model, and the brake's loss power d*w^2 of a
/// flywheel spun up by a constant torque (w = tau/d*(1 - exp(-k*t)),
/// k = d/J) heats an isolated body by its integral.
#[test]
fn heat_ports_carry_the_loss_power() {
    let lib = simulate("models/msl/HeatedResistor.mo", &[]);
    let flat = simulate("tests/modelica/flat/heated_resistor_flat.dae", &[]);
    assert_eq!(lib.rows.len(), flat.rows.len());
    for (a, b) in lib.rows.iter().zip(&flat.rows) {
        // (1e-7 relative to temperatures near 300 K: the two integrations'
        // global errors, about 10 rtol each)
        let (t1, t2) = (a[lib.col("body.T")], b[flat.col("T")]);
        assert!(
            (t1 - t2).abs() <= 3e-5,
            "body.T = {t1}, T = {t2} at t = {}",
            a[0]
        );
        let r = a[lib.col("resistor.R_actual")];
        assert!((r - 10.0 * (1.0 + 0.01 * (t2 - 300.15))).abs() <= 1e-6);
    }
    let (tau, d, k, c) = (2.0_f64, 1.0, 2.0, 20.0);
    assert_closed_form(&lib, "brakeBody.T", 3e-5, |t| {
        let e = tau * tau / d
            * (t - 2.0 * (1.0 - (-k * t).exp()) / k + (1.0 - (-2.0 * k * t).exp()) / (2.0 * k));
        300.15 + e / c
    });
    // Without the heat port the resistor keeps its temperature T = T_ref.
    let rc = simulate("models/msl/RC.mo", &[]);
    assert_closed_form(&rc, "resistor.T_heatPort", 1e-12, |_| 300.15);
}

/// `initType` of `Continuous.Integrator` and `FirstOrder`
/// (`Modelica.Blocks.Types.Init`) selects the initial equations, and
/// `Sources.Sine(continuous = true)` holds `amplitude*sin(phase)` before
/// its start time (closed forms in `models/msl/BlockInit.mo`).
#[test]
fn block_init_types_and_the_continuous_sine() {
    let csv = simulate("models/msl/BlockInit.mo", &[]);
    assert_closed_form(&csv, "hold.y", 1e-8, |t| 2.0 + t);
    assert_closed_form(&csv, "free.y", 1e-8, |t| 5.0 + t);
    assert_closed_form(&csv, "steady.y", 1e-8, |_| 2.0);
    assert_closed_form(&csv, "initOut.y", 1e-7, |t| 2.0 * (1.0 - (-2.0 * t).exp()));
    let sine = |t: f64| 2.0 * (2.0 * PI * (t - 0.5) + 0.3).sin();
    assert_closed_form(&csv, "smoothSine.y", 1e-12, |t| {
        if t < 0.5 { 2.0 * 0.3f64.sin() } else { sine(t) }
    });
    assert_closed_form(&csv, "stepSine.y", 1e-12, |t| {
        if t < 0.5 { 0.0 } else { sine(t) }
    });
}

/// The conditional support flanges (`useSupport = true`): a constant
/// force between two free masses, a torque between a rotor and a free
/// housing, and a gear whose support is fixed (closed forms in
/// `models/msl/SupportFlanges.mo`); without a support (`drive`) the
/// reaction goes to the ground.
#[test]
fn sources_and_gears_act_on_their_support_flanges() {
    let csv = simulate("models/msl/SupportFlanges.mo", &[]);
    assert_closed_form(&csv, "m1.s", 1e-8, |t| 1.5 * t * t);
    assert_closed_form(&csv, "m2.s", 1e-8, |t| -0.75 * t * t);
    assert_closed_form(&csv, "force.s", 1e-8, |t| 2.25 * t * t);
    assert_closed_form(&csv, "rotor.w", 1e-8, |t| 4.0 * t);
    assert_closed_form(&csv, "housing.w", 1e-8, |t| -t);
    assert_closed_form(&csv, "inertiaA.w", 1e-8, |t| 0.8 * t);
    assert_closed_form(&csv, "inertiaB.w", 1e-8, |t| 0.4 * t);
    // the gear's support takes -(flange_a.tau + flange_b.tau): the drive's
    // 1 less J*a = 0.8 of inertiaA, flange_a.tau = 0.2, and
    // flange_b.tau = -J*a = -0.4 of inertiaB
    assert_closed_form(&csv, "gear.support.tau", 1e-8, |_| 0.2);
    assert_closed_form(&csv, "drive.phi_support", 0.0, |_| 0.0);
    let flat = daec(&["flatten", "models/msl/SupportFlanges.mo"]);
    assert_eq!(flat.code, 0, "{}", flat.stderr);
    assert!(!flat.stdout.contains("drive.support"), "{}", flat.stdout);
}
