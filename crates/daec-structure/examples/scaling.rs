//! Times the structural Σ-method (HVT + canonical offsets + coarse and fine BTF) and
//! Pantelides' algorithm on the pendulum chain for 10^3 .. 10^6 equations.
//!
//! `cargo run --release -p daec-structure --example scaling [max_equations]`

use std::time::Instant;

use daec_structure::generators::{pendulum_chain, spring_chain};
use daec_structure::{SigmaMatrix, analyze, pantelides};

/// Builds Σ with about the given number of equations.
type Generator = fn(usize) -> SigmaMatrix;

fn main() {
    let max: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let models: [(&str, Generator); 2] = [
        ("pendulum chain", |n| pendulum_chain(n / 5)),
        ("spring chain", |n| spring_chain(n / 2)),
    ];
    for (name, make) in models {
        println!("{name}");
        run(max, make);
    }
}

fn run(max: usize, make: Generator) {
    println!("equations  nnz        analyze[s]  pantelides[s]  index  dof      fine_blocks");
    let mut n = 1_000;
    while n <= max {
        let s = make(n);
        let t0 = Instant::now();
        let a = match analyze(&s) {
            Ok(a) => a,
            Err(e) => {
                eprintln!("analysis failed: {e}");
                std::process::exit(1);
            }
        };
        let ta = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let p = pantelides(&s);
        let tp = t1.elapsed().as_secs_f64();
        let same = p.as_ref().is_ok_and(|p| p.differentiations == a.offsets.c);
        println!(
            "{:<10} {:<10} {:<11.4} {:<14.4} {:<6} {:<8} {}{}",
            s.n_rows(),
            s.nnz(),
            ta,
            tp,
            a.structural_index,
            a.dof,
            a.fine_btf.len(),
            if same { "" } else { "  (Pantelides differs!)" }
        );
        n *= 10;
    }
}
