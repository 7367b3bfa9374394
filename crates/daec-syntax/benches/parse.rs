//! Parsing speed: a generated model with 100 000 equations
//! (`x1 = 2*x0 + sin(time);` …). Throughput is reported in bytes/s.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use daec_diag::FileId;
use std::fmt::Write;
use std::hint::black_box;

/// A model with `n` unknowns and `n` equations.
fn generated_model(n: usize) -> String {
    let mut s = String::with_capacity(n * 40);
    s.push_str("model Big \"generated\"\n");
    for i in 0..n {
        let _ = writeln!(s, "  Real x{i}(start = 0.5);");
    }
    s.push_str("equation\n  x0 = 1;\n");
    for i in 1..n {
        let _ = writeln!(s, "  x{i} = 2*x{} + sin(time);", i - 1);
    }
    s.push_str("end Big;\n");
    s
}

fn bench_parse(c: &mut Criterion) {
    let src = generated_model(100_000);
    let mut group = c.benchmark_group("parse");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(src.len() as u64));
    group.bench_function("100k_equations", |b| {
        b.iter(|| {
            let parsed = daec_syntax::parse(FileId(0), black_box(&src));
            assert!(parsed.diagnostics.is_empty());
            parsed
        })
    });
    group.finish();
}

criterion_group!(benches, bench_parse);
criterion_main!(benches);
