//! Front end at scale: parse + lower the scalable pendulum chain
//! (`models/scale/pendulum_chain.dae`, 7 unknowns and equations per link).
//! Issue target: N = 100 000 (7·10^5 scalar equations) in < 1 s.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use daec::diag::SourceMap;
use daec::model::LowerOptions;

fn parse_and_lower(src: &str, n: usize) -> usize {
    let mut map = SourceMap::new();
    let file = map.add("pendulum_chain.dae", src.to_string());
    let parsed = daec::syntax::parse(file, map.source(file));
    let options = LowerOptions {
        overrides: vec![("N".to_string(), n as f64)],
        ..LowerOptions::default()
    };
    let (dae, _) = daec::model::lower(parsed.model.as_ref().expect("model"), &options);
    dae.expect("lowers").equations.len()
}

fn frontend(c: &mut Criterion) {
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/models/scale/pendulum_chain.dae"
    ))
    .expect("model");
    let mut group = c.benchmark_group("parse_and_lower_pendulum_chain");
    group.sample_size(10);
    for n in [1_000usize, 10_000, 100_000] {
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
            b.iter(|| assert_eq!(parse_and_lower(&src, n), 7 * n))
        });
    }
    group.finish();
}

criterion_group!(benches, frontend);
criterion_main!(benches);
