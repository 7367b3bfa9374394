//! `daec simulate --native` in-process (after compilation): Akzo Nobel
//! (Baese 2017 §4.7) at rtol = atol = 1e-6 — the reference setting of
//! Hairer's RADAU5 in issue 6 — and at 4e-7, with the model's residuals
//! and Jacobians compiled by rustc (`daec_cli::native::RustcCompiler`,
//! the code `daec_sim::native` generates) and the same driver
//! (`daec_sim::integrate`: consistent start, output, statistics) as the
//! tape runs of `crates/daec-sim/benches/simulate.rs`. Needs `rustc`
//! (the one building this benchmark will do).

use criterion::{Criterion, criterion_group, criterion_main};
use daec_diag::SourceMap;
use daec_model::LowerOptions;
use daec_regularize::{AnalyzeOptions, analyze};
use daec_sim::{SimOptions, default_form, integrate, prepare_form, resolve_options};
use std::sync::Arc;

const MODEL: &str = "models/baese/akzo_nobel.dae";

fn bench(c: &mut Criterion) {
    let path = format!("{}/{MODEL}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("model file");
    // the IVP test set's reference solution at t = 180 (the model's
    // `// ref(t=180):` line)
    let reference: Vec<f64> = text
        .lines()
        .find_map(|l| l.strip_prefix("// ref(t=180):"))
        .map(|rest| {
            rest.split(',')
                .filter_map(|kv| kv.split('=').nth(1)?.trim().parse().ok())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(reference.len(), 6, "the model's reference line");
    let compiler = Arc::new(daec_cli::native::RustcCompiler::new(None).expect("rustc"));
    for (name, tol) in [
        ("akzo_nobel_tol_1e-6_solve_native", 1e-6),
        ("akzo_nobel_tol_4e-7_solve_native", 4e-7),
    ] {
        let mut map = SourceMap::new();
        let file = map.add(MODEL, text.clone());
        let parsed = daec_syntax::parse(file, map.source(file));
        let (dae, _) = daec_model::lower(&parsed.model.expect("parses"), &LowerOptions::default());
        let mut dae = dae.expect("lowers");
        let analysis = analyze(&mut dae, &AnalyzeOptions::default());
        let opts = SimOptions {
            rtol: Some(tol),
            atol: Some(tol),
            interval: Some(180.0),
            ..SimOptions::default()
        };
        let form = opts.form.unwrap_or(default_form(opts.method));
        let mut prepared = prepare_form(&mut dae, &analysis, form).expect("prepares");
        prepared
            .compile_native(&dae, compiler.clone())
            .expect("native code");
        let ro = resolve_options(&dae, &opts).expect("options");
        let sim = integrate(&mut dae, &mut prepared, &ro).expect("integrates");
        assert!(sim.stats.native_code);
        let end = sim.results.z.last().expect("rows");
        let (mut rel, mut abs) = (0.0f64, 0.0f64);
        for (a, r) in end.iter().zip(&reference) {
            abs = abs.max((a - r).abs());
            rel = rel.max(((a - r) / r).abs());
        }
        let s = &sim.stats;
        eprintln!(
            "akzo tol {tol:e}, native: {} steps ({} rejected), {} residual evaluations, {} Jacobians, {} LU, max relative error {rel:.3e}, max absolute error {abs:.3e}",
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

criterion_group!(benches, bench);
criterion_main!(benches);
