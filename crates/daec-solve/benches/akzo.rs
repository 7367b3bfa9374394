//! Criterion benchmark: Akzo Nobel (IVP test set "chemakzo") over [0, 180]
//! at rtol = atol = 1e-6, the setting of the RADAU5 reference figures
//! (`benches/radau5-reference/README.md`: 38 steps, 295 f-evaluations).

use criterion::{Criterion, criterion_group, criterion_main};
use daec_solve::{Options, QuasiLinearDae, Radau5, StepControl};
use std::hint::black_box;

/// Akzo Nobel with its analytic sparse Jacobian.
struct Akzo;

const K1: f64 = 18.7;
const K2: f64 = 0.58;
const K3: f64 = 0.09;
const K4: f64 = 0.42;
const KBIG: f64 = 34.4;
const KLA: f64 = 3.3;
const KS: f64 = 115.83;
const PCO2: f64 = 0.9;
const HH: f64 = 737.0;

impl QuasiLinearDae for Akzo {
    fn n_vars(&self) -> usize {
        6
    }
    fn n_diff(&self) -> usize {
        5
    }
    fn n_constraints(&self) -> usize {
        1
    }
    fn diff_residual(&self, _t: f64, y: &[f64], yd: &[f64], out: &mut [f64]) {
        let s2 = y[1].sqrt();
        let r1 = K1 * y[0].powi(4) * s2;
        let r2 = K2 * y[2] * y[3];
        let r3 = K2 / KBIG * y[0] * y[4];
        let r4 = K3 * y[0] * y[3] * y[3];
        let r5 = K4 * y[5] * y[5] * s2;
        let fin = KLA * (PCO2 / HH - y[1]);
        out[0] = yd[0] - (-2.0 * r1 + r2 - r3 - r4);
        out[1] = yd[1] - (-0.5 * r1 - r4 - 0.5 * r5 + fin);
        out[2] = yd[2] - (r1 - r2 + r3);
        out[3] = yd[3] - (-r2 + r3 - 2.0 * r4);
        out[4] = yd[4] - (r2 - r3 + r5);
    }
    fn constraints(&self, _t: f64, y: &[f64], out: &mut [f64]) {
        out[0] = KS * y[0] * y[3] - y[5];
    }
    fn mass_pattern(&self) -> Vec<(usize, usize)> {
        (0..5).map(|i| (i, i)).collect()
    }
    fn mass_values(&self, _t: f64, _y: &[f64], out: &mut [f64]) {
        out.fill(1.0);
    }
    fn diff_jacobian_pattern(&self) -> Vec<(usize, usize)> {
        // rows: equations 0..5; each row lists the rates' variables
        let mut p = Vec::new();
        for r in 0..5 {
            for c in 0..6 {
                p.push((r, c));
            }
        }
        p
    }
    fn diff_jacobian_values(&self, _t: f64, y: &[f64], _yd: &[f64], out: &mut [f64]) {
        let s2 = y[1].sqrt();
        let r1 = [
            4.0 * K1 * y[0].powi(3) * s2,
            0.5 * K1 * y[0].powi(4) / s2,
            0.0,
            0.0,
            0.0,
            0.0,
        ];
        let r2 = [0.0, 0.0, K2 * y[3], K2 * y[2], 0.0, 0.0];
        let r3 = [K2 / KBIG * y[4], 0.0, 0.0, 0.0, K2 / KBIG * y[0], 0.0];
        let r4 = [K3 * y[3] * y[3], 0.0, 0.0, 2.0 * K3 * y[0] * y[3], 0.0, 0.0];
        let r5 = [
            0.0,
            0.5 * K4 * y[5] * y[5] / s2,
            0.0,
            0.0,
            0.0,
            2.0 * K4 * y[5] * s2,
        ];
        for c in 0..6 {
            let fin = if c == 1 { -KLA } else { 0.0 };
            out[c] = -(-2.0 * r1[c] + r2[c] - r3[c] - r4[c]);
            out[6 + c] = -(-0.5 * r1[c] - r4[c] - 0.5 * r5[c] + fin);
            out[12 + c] = -(r1[c] - r2[c] + r3[c]);
            out[18 + c] = -(-r2[c] + r3[c] - 2.0 * r4[c]);
            out[24 + c] = -(r2[c] - r3[c] + r5[c]);
        }
    }
    fn constraint_jacobian_pattern(&self) -> Vec<(usize, usize)> {
        vec![(0, 0), (0, 3), (0, 5)]
    }
    fn constraint_jacobian_values(&self, _t: f64, y: &[f64], out: &mut [f64]) {
        out.copy_from_slice(&[KS * y[3], KS * y[0], -1.0]);
    }
}

const Y0: [f64; 6] = [0.444, 0.00123, 0.0, 0.007, 0.0, 0.35999964];

fn bench_akzo(c: &mut Criterion) {
    let opts = Options {
        rtol: 1e-6,
        atol: 1e-6,
        h0: 1e-10,
        ..Options::default()
    };
    let problem = Akzo;
    let mut solver = Radau5::new(&problem, opts).expect("valid problem");
    let stats = solver
        .integrate(0.0, &Y0, 180.0, |_| StepControl::Continue)
        .expect("solves");
    eprintln!("akzo rtol=atol=1e-6: {stats:?}");
    c.bench_function("akzo_nobel_tol1e-6", |b| {
        b.iter(|| {
            let mut last = [0.0; 6];
            solver
                .integrate(0.0, black_box(&Y0), 180.0, |s| {
                    last.copy_from_slice(s.z);
                    StepControl::Continue
                })
                .expect("solves");
            black_box(last)
        })
    });
}

criterion_group!(benches, bench_akzo);
criterion_main!(benches);
