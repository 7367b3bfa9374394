//! The compiled path of the Akzo Nobel benchmark: the Rust module
//! `daec regularize models/baese/akzo_nobel.dae --form hic --emit rust`
//! writes, checked in as `benches/emitted/akzo_nobel_hic.rs` (the
//! benchmark compiles it), is the emitter's current output, and
//! integrating it with `daec_solve::Radau5` does what `daec simulate` does
//! with its tapes: the same steps, evaluations, Jacobians and LU
//! decompositions, and the same end values up to rounding.

use daec_diag::SourceMap;
use daec_model::{Dae, LowerOptions};
use daec_regularize::emit_rust::emit_rust_formulation;
use daec_regularize::{AnalyzeOptions, Form, RegularizeOptions, analyze, regularize};
use daec_sim::{SimOptions, default_form, integrate, prepare_form, resolve_options};
use daec_solve::{Options, Radau5, StepControl};

#[rustfmt::skip] // (generated: kept byte for byte as the emitter writes it)
#[path = "../benches/emitted/akzo_nobel_hic.rs"]
mod akzo_nobel_hic;

const MODEL: &str = "models/baese/akzo_nobel.dae";
const MODULE: &str = "benches/emitted/akzo_nobel_hic.rs";

fn load() -> Dae {
    let full = format!("{}/../../{MODEL}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(full).expect("model file");
    let mut map = SourceMap::new();
    let file = map.add(MODEL, text);
    let parsed = daec_syntax::parse(file, map.source(file));
    let (dae, diags) = daec_model::lower(&parsed.model.expect("parses"), &LowerOptions::default());
    dae.unwrap_or_else(|| panic!("{diags:?}"))
}

#[test]
fn the_checked_in_module_is_the_emitters_output() {
    // the steps of `daec regularize --emit rust`
    let mut dae = load();
    daec_sim::reduce_to_first_order(&mut dae);
    let analysis = analyze(&mut dae, &AnalyzeOptions::default());
    let form = regularize(
        &mut dae,
        &analysis,
        Form::Hic,
        &RegularizeOptions::default(),
    )
    .expect("regularizes");
    let params = dae.named_parameters();
    let name = dae.name.clone();
    let emitted = emit_rust_formulation(&mut dae.pool, &form, &name, &params, &[]).expect("emits");
    let path = format!("{}/{MODULE}", env!("CARGO_MANIFEST_DIR"));
    let checked_in = std::fs::read_to_string(&path).expect("the checked-in module");
    assert!(
        emitted == checked_in,
        "crates/daec-sim/{MODULE} is not the emitter's output any more; regenerate it with\n  cargo run -p daec-cli -- regularize {MODEL} --form hic --emit rust -o crates/daec-sim/{MODULE}"
    );
}

#[test]
fn the_compiled_module_integrates_as_the_tapes_do() {
    let mut dae = load();
    let opts = SimOptions {
        rtol: Some(1e-6),
        atol: Some(1e-6),
        interval: Some(180.0),
        ..SimOptions::default()
    };
    let analysis = analyze(&mut dae, &AnalyzeOptions::default());
    let form = opts.form.unwrap_or(default_form(opts.method));
    let mut prepared = prepare_form(&mut dae, &analysis, form).expect("prepares");
    let ro = resolve_options(&dae, &opts).expect("options");
    let sim = integrate(&mut dae, &mut prepared, &ro).expect("integrates");
    let z0 = sim.results.z[0].clone();
    let tape_end = sim.results.z.last().expect("rows").clone();

    let problem = akzo_nobel_hic::AkzoNobel::default();
    assert_eq!(
        akzo_nobel_hic::UNKNOWNS,
        ["y1", "y2", "y3", "y4", "y5", "y6"]
    );
    assert_eq!(akzo_nobel_hic::CONSTRAINT_LEVELS, [0]);
    // (the consistent initial derivative, as `daec simulate` passes it:
    // the starting step size is chosen from it)
    let options = Options {
        rtol: ro.rtol,
        atol: ro.atol,
        initial_derivative: Some(prepared.init.zdot0.clone()),
        error_control: ro.error_control,
        ..Options::default()
    };
    let mut solver = Radau5::new(&problem, options).expect("valid problem");
    let mut end = [0.0; 6];
    let stats = solver
        .integrate(0.0, &z0, 180.0, |step| {
            end.copy_from_slice(step.z);
            StepControl::Continue
        })
        .expect("integrates");
    let s = &sim.stats;
    assert_eq!(
        (
            stats.steps_accepted,
            stats.steps_rejected,
            stats.residual_evals,
            stats.jacobian_evals,
            stats.lu_decompositions,
            stats.newton_iterations
        ),
        (
            s.steps_accepted,
            s.steps_rejected,
            s.residual_evals,
            s.jacobian_evals,
            s.lu_decompositions,
            s.newton_iterations
        )
    );
    for (k, (a, b)) in end.iter().zip(&tape_end).enumerate() {
        assert!(
            (a - b).abs() <= 1e-10 * b.abs(),
            "y{}: compiled {a:e}, tapes {b:e}",
            k + 1
        );
    }
    // the IVP test set's reference at t = 180 (chemakzo), to the accuracy
    // of tolerance 1e-6
    let reference = [
        0.115_079_492_066_170_2,
        0.001_203_831_471_567_7,
        0.161_156_288_740_797_4,
        0.000_365_615_642_124_9,
        0.017_080_108_852_644_0,
        0.004_873_531_310_307_4,
    ];
    for (k, (a, r)) in end.iter().zip(reference).enumerate() {
        assert!(
            ((a - r) / r).abs() < 2e-6,
            "y{}: {a:e} against the reference {r:e}",
            k + 1
        );
    }
}
