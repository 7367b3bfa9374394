//! Expression swell: node count and time of the k-th total derivative
//! (k = 1..8) of the pendulum constraint x² + y² − ℓ² (steinbrecher2016
//! Ex. 2.7) and of a 100-term polynomial constraint.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use daec_expr::{ExprId, ExprPool, ParamId};

fn pendulum_constraint(p: &mut ExprPool) -> ExprId {
    let (x, y, l) = (p.var(0, 0), p.var(1, 0), p.param(ParamId(0)));
    let (x2, y2, l2) = (p.powi(x, 2), p.powi(y, 2), p.powi(l, 2));
    let s = p.add(x2, y2);
    p.sub(s, l2)
}

/// Σ_{i=0}^{99} (i+1) · z_i² · z_{i+1}.
fn polynomial_constraint(p: &mut ExprPool) -> ExprId {
    let terms: Vec<ExprId> = (0..100u32)
        .map(|i| {
            let (a, b) = (p.var(i, 0), p.var(i + 1, 0));
            let a2 = p.powi(a, 2);
            let c = p.constant(f64::from(i + 1));
            p.product(&[c, a2, b])
        })
        .collect();
    p.sum(&terms)
}

/// A named constraint builder.
type Builder = (&'static str, fn(&mut ExprPool) -> ExprId);

fn swell(c: &mut Criterion) {
    let builders: [Builder; 2] = [
        ("pendulum", pendulum_constraint),
        ("poly100", polynomial_constraint),
    ];
    for (name, build) in builders {
        let mut p = ExprPool::new();
        let mut e = build(&mut p);
        let mut line = format!("{name}: nodes of d^k/dt^k for k = 0..8:");
        for k in 0..=8 {
            line.push_str(&format!(" {}", p.topo_order(&[e]).len()));
            if k < 8 {
                e = p.dt(e);
            }
        }
        println!("{line} (pool {})", p.len());
    }
    let mut g = c.benchmark_group("dt_k");
    g.sample_size(20)
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500));
    for (name, build) in builders {
        for k in [1u32, 2, 4, 8] {
            g.bench_with_input(BenchmarkId::new(name, k), &k, |b, &k| {
                b.iter(|| {
                    let mut p = ExprPool::new();
                    let e = build(&mut p);
                    black_box(p.dt_n(e, k))
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, swell);
criterion_main!(benches);
