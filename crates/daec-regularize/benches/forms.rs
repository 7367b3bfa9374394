//! HiC and StE (steinbrecher2016 §3.3, §3.1) for the scalable pendulum
//! chain at N = 10⁴ links (70 000 unknowns). The analysis is done once;
//! each iteration builds the formulation on a fresh clone of the DAE (so
//! the pool's memo tables start cold). Target: < 2 s each.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use daec_diag::SourceMap;
use daec_model::{Dae, LowerOptions};
use daec_regularize::{AnalyzeOptions, Form, RegularizeOptions, analyze, regularize};
use std::hint::black_box;
use std::time::Instant;

fn load(n: usize) -> Dae {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/scale/pendulum_chain.dae"
    );
    let text = std::fs::read_to_string(path).expect("model");
    let mut map = SourceMap::new();
    let file = map.add("pendulum_chain.dae", text);
    let parsed = daec_syntax::parse(file, map.source(file));
    let options = LowerOptions {
        overrides: vec![("N".into(), n as f64)],
        max_scalars: usize::MAX,
        memory: None,
    };
    let (dae, _) = daec_model::lower(parsed.model.as_ref().expect("parses"), &options);
    dae.expect("lowers")
}

fn bench(c: &mut Criterion) {
    let n = 10_000;
    let mut dae = load(n);
    let t = Instant::now();
    let analysis = analyze(&mut dae, &AnalyzeOptions::default());
    eprintln!(
        "pendulum_chain N = {n}: {} unknowns, analysis {:.2} s",
        dae.unknowns.len(),
        t.elapsed().as_secs_f64()
    );
    let mut g = c.benchmark_group("regularize_pendulum_chain_1e4");
    g.sample_size(10);
    for form in [Form::Hic, Form::Ste] {
        g.bench_function(form.name(), |b| {
            b.iter_batched(
                || dae.clone(),
                |mut d| {
                    let f = regularize(&mut d, &analysis, form, &RegularizeOptions::default())
                        .expect("applies");
                    black_box(f.equations.len())
                },
                BatchSize::LargeInput,
            );
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
