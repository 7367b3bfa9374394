//! Building the pool for the N = 100 000 pendulum chain (500 000 equations).

mod common;

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use daec_expr::ExprPool;

fn build(c: &mut Criterion) {
    const N: usize = 100_000;
    let mut p = ExprPool::new();
    let eqs = common::pendulum_chain(&mut p, N);
    println!(
        "pendulum chain N = {N}: {} equations, {} pool nodes",
        eqs.len(),
        p.len()
    );
    let mut g = c.benchmark_group("pool_build");
    g.sample_size(10).measurement_time(Duration::from_secs(8));
    g.bench_function("pendulum_chain_100000", |b| {
        b.iter(|| {
            let mut p = ExprPool::new();
            let eqs = common::pendulum_chain(&mut p, black_box(N));
            black_box((eqs.len(), p.len()))
        })
    });
    // With the size estimated up front (about 30 nodes per link), as
    // lowering can do from the number of equations.
    g.bench_function("pendulum_chain_100000_with_capacity", |b| {
        b.iter(|| {
            let mut p = ExprPool::with_capacity(30 * N);
            let eqs = common::pendulum_chain(&mut p, black_box(N));
            black_box((eqs.len(), p.len()))
        })
    });
    g.finish();
}

criterion_group!(benches, build);
criterion_main!(benches);
