//! Tape evaluation of the residual and sparse Jacobian of a 6-link pendulum
//! chain (30 unknowns) against the same formulas written by hand.

mod common;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use daec_expr::{ExprPool, Tape};

const N: usize = 6;

fn tape(c: &mut Criterion) {
    let mut p = ExprPool::new();
    let (eqs, entries, inputs) = common::residual_and_jacobian(&mut p, N);
    let mut roots = eqs.clone();
    roots.extend(entries.iter().map(|e| e.expr));
    let tape = Tape::compile(&p, &roots, &inputs).expect("tape compiles");
    let nn = 5 * N;
    let z: Vec<f64> = (0..nn).map(|j| 0.1 + 0.37 * j as f64).collect();
    let zp: Vec<f64> = (0..nn).map(|j| -0.2 + 0.11 * j as f64).collect();
    let mut input = z.clone();
    input.extend(&zp);
    let mut out = vec![0.0; roots.len()];
    let mut scratch = Vec::new();
    tape.eval(0.0, &input, &common::PARAMS, &mut out, &mut scratch);
    // Check the tape against the hand-written code once.
    let (mut f, mut jz, mut jzp) = (vec![0.0; nn], vec![0.0; nn * nn], vec![0.0; nn * nn]);
    common::hand_written(N, &z, &zp, &common::PARAMS, &mut f, &mut jz, &mut jzp);
    for (k, fk) in f.iter().enumerate() {
        assert!(
            (out[k] - fk).abs() < 1e-12,
            "residual {k}: {} vs {fk}",
            out[k]
        );
    }
    for (e, v) in entries.iter().zip(&out[nn..]) {
        let h = if e.order == 0 {
            jz[e.row * nn + e.col]
        } else {
            jzp[e.row * nn + e.col]
        };
        assert!(
            (v - h).abs() < 1e-12,
            "J[{}][{}] order {}: {v} vs {h}",
            e.row,
            e.col,
            e.order
        );
    }
    println!(
        "tape: {} outputs ({} residuals + {} Jacobian entries), {} instructions",
        roots.len(),
        nn,
        entries.len(),
        tape.len()
    );
    let mut g = c.benchmark_group("residual_jacobian_30");
    g.bench_function("tape", |b| {
        b.iter(|| {
            tape.eval(
                0.0,
                black_box(&input),
                &common::PARAMS,
                &mut out,
                &mut scratch,
            );
            black_box(out[0])
        })
    });
    g.bench_function("hand_written", |b| {
        b.iter(|| {
            common::hand_written(
                N,
                black_box(&z),
                black_box(&zp),
                &common::PARAMS,
                &mut f,
                &mut jz,
                &mut jzp,
            );
            black_box(f[0])
        })
    });
    g.finish();
    // Three points (the stages of a Radau IIA step): three framed scalar
    // evaluations against one pass in three lanes (same values bit for
    // bit, checked once here).
    let points: Vec<Vec<f64>> = (0..3)
        .map(|s| input.iter().map(|x| x * (1.0 + 0.01 * s as f64)).collect())
        .collect();
    let mut frame = tape.frame(&common::PARAMS);
    let mut lanes = tape.lanes::<3>(&common::PARAMS);
    let mut outs = vec![vec![0.0; roots.len()]; 3];
    let mut lane_outs = vec![vec![0.0; roots.len()]; 3];
    for (x, o) in points.iter().zip(outs.iter_mut()) {
        tape.eval_frame(&mut frame, 0.0, &[x], o);
    }
    {
        let [a, b, c] = &mut lane_outs[..] else {
            unreachable!("three lanes")
        };
        let parts = [[&points[0][..], &points[1][..], &points[2][..]]];
        tape.eval_lanes(&mut lanes, [0.0; 3], &parts, [a, b, c]);
    }
    assert!(
        outs.iter()
            .flatten()
            .zip(lane_outs.iter().flatten())
            .all(|(a, b)| a.to_bits() == b.to_bits()),
        "lanes = scalar evaluations"
    );
    let mut g = c.benchmark_group("residual_jacobian_30_three_points");
    g.bench_function("three_frame_evaluations", |b| {
        b.iter(|| {
            for (x, o) in points.iter().zip(outs.iter_mut()) {
                tape.eval_frame(&mut frame, 0.0, &[black_box(x)], o);
            }
            black_box(outs[2][0])
        })
    });
    g.bench_function("one_pass_three_lanes", |b| {
        b.iter(|| {
            let [a, b, c] = &mut lane_outs[..] else {
                unreachable!("three lanes")
            };
            let parts = [[black_box(&points[0][..]), &points[1][..], &points[2][..]]];
            tape.eval_lanes(&mut lanes, [0.0; 3], &parts, [a, b, c]);
            black_box(lane_outs[2][0])
        })
    });
    g.finish();
}

criterion_group!(benches, tape);
criterion_main!(benches);
