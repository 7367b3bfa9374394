//! Σ-method + canonical offsets + coarse/fine BTF on the pendulum chain
//! (`daec_structure::generators::pendulum_chain`) and the scaling spring chain, 10^3 .. 10^5
//! equations, plus Pantelides' algorithm on the pendulum chain; Σ-method and the HVT count
//! `all_hvts(…, 16)` (and `all_hvts_of_analysis`) on the link-vector pendulum chain of `models/scale/pendulum_chain.dae`
//! (`generators::pendulum_chain_link_vectors`), 10^3 .. 10^6 equations.
//! The other 10^6 cases are timed by `cargo run --release --example scaling`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use daec_structure::generators::{pendulum_chain, pendulum_chain_link_vectors, spring_chain};
use daec_structure::{all_hvts, all_hvts_of_analysis, analyze, pantelides};

fn sigma_method(c: &mut Criterion) {
    let mut g = c.benchmark_group("sigma_method_pendulum_chain");
    g.sample_size(10);
    for links in [200usize, 2_000, 20_000] {
        let s = pendulum_chain(links);
        g.throughput(Throughput::Elements(s.n_rows() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(s.n_rows()), &s, |b, s| {
            b.iter(|| analyze(black_box(s)).map(|a| a.dof))
        });
    }
    g.finish();
    let mut g = c.benchmark_group("sigma_method_spring_chain");
    g.sample_size(10);
    for masses in [500usize, 5_000, 50_000] {
        let s = spring_chain(masses);
        g.throughput(Throughput::Elements(s.n_rows() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(s.n_rows()), &s, |b, s| {
            b.iter(|| analyze(black_box(s)).map(|a| a.dof))
        });
    }
    g.finish();
    // models/scale/pendulum_chain.dae: 7 equations per link.
    let link_vector_sizes = [143usize, 1_429, 14_286, 142_858];
    let mut g = c.benchmark_group("sigma_method_pendulum_chain_link_vectors");
    g.sample_size(10);
    for links in link_vector_sizes {
        let s = pendulum_chain_link_vectors(links);
        g.throughput(Throughput::Elements(s.n_rows() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(s.n_rows()), &s, |b, s| {
            b.iter(|| analyze(black_box(s)).map(|a| a.dof))
        });
    }
    g.finish();
    let mut g = c.benchmark_group("all_hvts_pendulum_chain_link_vectors");
    g.sample_size(10);
    for links in link_vector_sizes {
        let s = pendulum_chain_link_vectors(links);
        let Ok(a) = analyze(&s) else { continue };
        g.throughput(Throughput::Elements(s.n_rows() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(s.n_rows()), &s, |b, s| {
            b.iter(|| all_hvts(black_box(s), &a.offsets, 16).count)
        });
        g.bench_with_input(BenchmarkId::new("of_analysis", s.n_rows()), &s, |b, s| {
            b.iter(|| all_hvts_of_analysis(black_box(s), &a, 16).count)
        });
    }
    g.finish();
    let mut g = c.benchmark_group("pantelides_pendulum_chain");
    g.sample_size(10);
    for links in [200usize, 2_000, 20_000] {
        let s = pendulum_chain(links);
        g.throughput(Throughput::Elements(s.n_rows() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(s.n_rows()), &s, |b, s| {
            b.iter(|| pantelides(black_box(s)).map(|p| p.rounds))
        });
    }
    g.finish();
}

criterion_group!(benches, sigma_method);
criterion_main!(benches);
