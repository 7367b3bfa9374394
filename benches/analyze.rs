//! Analysis at scale on the pendulum chain: Σ + HVT + offsets + BTF +
//! Pantelides + derivative array + hidden constraints (the numerical success
//! check is dense and only runs for small models). Issue target: hidden
//! constraints for N = 10^4 in < 2 s.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use daec::diag::SourceMap;
use daec::model::LowerOptions;
use daec::regularize::{AnalyzeOptions, analyze};

fn analyze_chain(c: &mut Criterion) {
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/models/scale/pendulum_chain.dae"
    ))
    .expect("model");
    let mut group = c.benchmark_group("analyze_pendulum_chain");
    group.sample_size(10);
    for n in [100usize, 1_000, 10_000] {
        let mut map = SourceMap::new();
        let file = map.add("pendulum_chain.dae", src.clone());
        let parsed = daec::syntax::parse(file, map.source(file));
        let options = LowerOptions {
            overrides: vec![("N".to_string(), n as f64)],
            ..LowerOptions::default()
        };
        let (dae, _) = daec::model::lower(parsed.model.as_ref().expect("model"), &options);
        let dae = dae.expect("lowers");
        group.bench_with_input(BenchmarkId::from_parameter(n), &dae, |b, dae| {
            b.iter(|| {
                let mut d = dae.clone();
                let a = analyze(&mut d, &AnalyzeOptions::default());
                let reg = a.regular().expect("regular");
                assert_eq!(
                    reg.constraints
                        .as_ref()
                        .expect("constraints")
                        .constraints
                        .len(),
                    5 * n
                );
            })
        });
    }
    group.finish();
}

criterion_group!(benches, analyze_chain);
criterion_main!(benches);
