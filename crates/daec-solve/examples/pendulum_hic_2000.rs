//! Steinbrecher Ex. 5.1: the pendulum in the HiC formulation (38) over
//! [0, 2000] (1000 periods) at TOL = 1e-7, the paper's long run. Prints the
//! wall time, the work statistics, the position error at t = 2000, the
//! largest constraint residual along the run and the energy drift.
//!
//! Run with `cargo run --release -p daec-solve --example pendulum_hic_2000`.

#[path = "../tests/common/mod.rs"]
mod common;

use common::{pendulum_hic, pendulum_levels};
use daec_solve::{Options, Radau5, StepControl};
use std::time::Instant;

fn main() {
    let p = pendulum_hic();
    let g = p.p[2];
    let z0 = [1.0, 0.0, 0.0, 0.0, 0.0];
    // energy per unit mass: (v² + w²)/2 + g·y (zero at the start)
    let energy = |z: &[f64]| 0.5 * (z[2] * z[2] + z[3] * z[3]) + g * z[1];
    let opts = Options {
        rtol: 1e-7,
        atol: 1e-7,
        max_steps: 1_000_000,
        ..Options::default()
    };
    let mut solver = match Radau5::new(&p, opts) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let mut max_level = [0.0f64; 3];
    let mut max_energy = 0.0f64;
    let mut last = z0.to_vec();
    let start = Instant::now();
    let result = solver.integrate(0.0, &z0, 2000.0, |step| {
        let lv = pendulum_levels(&p.p, step.z);
        for (m, l) in max_level.iter_mut().zip(lv) {
            *m = m.max(l.abs());
        }
        max_energy = max_energy.max(energy(step.z).abs());
        last.copy_from_slice(step.z);
        StepControl::Continue
    });
    let wall = start.elapsed();
    match result {
        Ok(stats) => {
            let pos_err = ((last[0] - 1.0).powi(2) + last[1].powi(2)).sqrt();
            println!("wall time: {:.3} ms", wall.as_secs_f64() * 1e3);
            println!("{stats:?}");
            println!("position error at t = 2000: {pos_err:.3e}");
            println!(
                "max |constraint| per level: {:.3e} {:.3e} {:.3e}",
                max_level[0], max_level[1], max_level[2]
            );
            println!("max |energy drift|: {max_energy:.3e}");
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
