//! `daec simulate --native` in-process (after compilation): Akzo Nobel
//! (baese2017 §4.7) at rtol = atol = 1e-6 — the setting of the comparison
//! with Hairer's RADAU5, `benches/radau5-reference/README.md` — and at
//! 4e-7, with the model's residuals and Jacobians compiled by rustc
//! (`daec_cli::native::RustcCompiler`, the code `daec_sim::native`
//! generates) and the same driver (`daec_sim::integrate`: consistent
//! start, output, statistics) as the tape runs of
//! `crates/daec-sim/benches/simulate.rs`; and Andrews' squeezer on the HiC
//! form at 1e-3, 1e-5 and 1e-6 (1e-5: the positions at t = 0.03 as
//! accurate as RADAU5's at 1e-8); and the start-up `--native` adds
//! (`native_startup`: a cached library's generation and load, a first
//! build). Needs `rustc` (the one building this benchmark will do).
//! `cargo bench --bench simulate_native -- native_startup` runs the
//! start-up group alone.

use criterion::{Criterion, criterion_group, criterion_main};
use daec_diag::SourceMap;
use daec_model::LowerOptions;
use daec_regularize::{AnalyzeOptions, analyze};
use daec_sim::{SimOptions, default_form, integrate, prepare_form, resolve_options};
use std::sync::Arc;

const MODEL: &str = "models/baese/akzo_nobel.dae";
const ANDREWS: &str = "models/projected_rk/andrews_squeezer.dae";

/// The values of a model file's `// ref(t=T): y1=…, y2=…` comment line
/// (the IVP test set's reference solution).
fn model_reference(text: &str, t: &str) -> Vec<f64> {
    let tag = format!("// ref(t={t}):");
    text.lines()
        .find_map(|l| l.strip_prefix(tag.as_str()))
        .map(|rest| {
            rest.split(',')
                .filter_map(|kv| kv.split('=').nth(1)?.trim().parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The model of `path` parsed, lowered, analysed and prepared in `opts`'
/// form with its functions compiled by rustc, and the resolved options.
fn load_native(
    path: &str,
    text: &str,
    opts: &SimOptions,
    compiler: &Arc<daec_cli::native::RustcCompiler>,
) -> (
    daec_model::Dae,
    daec_sim::Prepared,
    daec_sim::ResolvedOptions,
) {
    let mut map = SourceMap::new();
    let file = map.add(path, text.to_string());
    let parsed = daec_syntax::parse(file, map.source(file));
    let (dae, _) = daec_model::lower(&parsed.model.expect("parses"), &LowerOptions::default());
    let mut dae = dae.expect("lowers");
    // as `daec simulate` (a no-op on first-order models)
    daec_sim::reduce_to_first_order(&mut dae);
    let analysis = analyze(&mut dae, &AnalyzeOptions::default());
    let form = opts.form.unwrap_or(default_form(opts.method));
    let mut prepared = prepare_form(&mut dae, &analysis, form).expect("prepares");
    prepared
        .compile_native(&dae, compiler.clone())
        .expect("native code");
    let ro = resolve_options(&dae, opts).expect("options");
    (dae, prepared, ro)
}

/// The largest absolute and relative differences of `values` from `reference`.
fn errors(values: &[f64], reference: &[f64]) -> (f64, f64) {
    let (mut rel, mut abs) = (0.0f64, 0.0f64);
    for (a, r) in values.iter().zip(reference) {
        abs = abs.max((a - r).abs());
        rel = rel.max(((a - r) / r).abs());
    }
    (rel, abs)
}

/// One model's runs: each `(benchmark name, tol)` of `runs` with the
/// options `options(tol)`, its counts and the errors of the first
/// `reference.len()` values at the end against `reference` printed once,
/// then timed by criterion.
fn bench_model(
    c: &mut Criterion,
    compiler: &Arc<daec_cli::native::RustcCompiler>,
    (model, label): (&str, &str),
    reference: &[f64],
    runs: &[(&str, f64)],
    options: impl Fn(f64) -> SimOptions,
) {
    let path = format!("{}/{model}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("model file");
    for &(name, tol) in runs {
        let (mut dae, mut prepared, ro) = load_native(model, &text, &options(tol), compiler);
        let sim = integrate(&mut dae, &mut prepared, &ro).expect("integrates");
        assert!(sim.stats.native_code);
        let end = sim.results.z.last().expect("rows");
        let (rel, abs) = errors(&end[..reference.len()], reference);
        let s = &sim.stats;
        eprintln!(
            "{label} tol {tol:e}, native: {} steps ({} rejected), {} residual evaluations, {} Jacobians, {} LU, max relative error {rel:.3e}, max absolute error {abs:.3e}",
            s.steps_accepted,
            s.steps_rejected,
            s.residual_evals,
            s.jacobian_evals,
            s.lu_decompositions
        );
        c.bench_function(name, |b| {
            b.iter(|| integrate(&mut dae, &mut prepared, &ro).expect("integrates"))
        });
    }
}

/// The reference line `// ref(t=T):` of the model file `model`.
fn reference_of(model: &str, t: &str) -> Vec<f64> {
    let path = format!("{}/{model}", env!("CARGO_MANIFEST_DIR"));
    model_reference(&std::fs::read_to_string(path).expect("model file"), t)
}

fn bench(c: &mut Criterion) {
    let compiler = Arc::new(daec_cli::native::RustcCompiler::new(None, None));
    // the IVP test set's reference solution at t = 180
    let reference = reference_of(MODEL, "180");
    assert_eq!(reference.len(), 6, "the model's reference line");
    bench_model(
        c,
        &compiler,
        (MODEL, "akzo"),
        &reference,
        &[
            ("akzo_nobel_tol_1e-6_solve_native", 1e-6),
            ("akzo_nobel_tol_4e-7_solve_native", 4e-7),
        ],
        |tol| SimOptions {
            rtol: Some(tol),
            atol: Some(tol),
            interval: Some(180.0),
            ..SimOptions::default()
        },
    );
    // Andrews' squeezer (IVP test set `andrews`) on the HiC form, the
    // positions at t = 0.03 against the test set's reference: the runs of
    // `crates/daec-sim/benches/simulate.rs` with the residuals and
    // Jacobians compiled (the tapes' figures there), for comparison with
    // RADAU5's compiled Fortran (benches/radau5-reference).
    let reference = reference_of(ANDREWS, "0.03");
    assert_eq!(reference.len(), 7, "the model's reference line");
    bench_model(
        c,
        &compiler,
        (ANDREWS, "andrews (positions)"),
        &reference,
        &[
            ("andrews_hic_tol_1e-3_solve_native", 1e-3),
            ("andrews_hic_tol_1e-5_solve_native", 1e-5),
            ("andrews_hic_tol_1e-6_solve_native", 1e-6),
        ],
        |tol| SimOptions {
            rtol: Some(tol),
            interval: Some(0.03),
            ..SimOptions::default()
        },
    );
}

/// The start-up `--native` adds to a run, on test-set problems of
/// growing size: generating the source and loading the cached library
/// (`native_cached_start_<problem>`, a run whose library is in the cache),
/// and the first build into an empty cache (`native_first_build_<problem>`).
fn startup(c: &mut Criterion) {
    let cache = std::env::temp_dir().join(format!("daec-bench-native-{}", std::process::id()));
    let compiler = Arc::new(daec_cli::native::RustcCompiler::new(
        None,
        Some(cache.join("warm")),
    ));
    let mut group = c.benchmark_group("native_startup");
    group.sample_size(10);
    for problem in ["akzo_nobel", "andrews", "fekete"] {
        let model = format!("models/testset/{problem}.dae");
        let path = format!("{}/{model}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).expect("model file");
        // fills the cache
        let (dae, mut prepared, _) = load_native(&model, &text, &SimOptions::default(), &compiler);
        group.bench_function(format!("native_cached_start_{problem}"), |b| {
            b.iter(|| {
                prepared
                    .compile_native(&dae, compiler.clone())
                    .expect("native code")
            })
        });
        let mut fresh = 0u32;
        group.bench_function(format!("native_first_build_{problem}"), |b| {
            b.iter(|| {
                fresh += 1;
                let cold = Arc::new(daec_cli::native::RustcCompiler::new(
                    None,
                    Some(cache.join(format!("cold-{fresh}"))),
                ));
                prepared.compile_native(&dae, cold).expect("native code")
            })
        });
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&cache);
}

criterion_group!(benches, bench, startup);
criterion_main!(benches);
