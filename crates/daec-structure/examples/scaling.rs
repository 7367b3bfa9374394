//! Times the structural Σ-method (HVT + canonical offsets + coarse and fine BTF), the HVT
//! count `all_hvts_of_analysis(…, 16)` and Pantelides' algorithm on the scalable models for 10^3 .. 10^6
//! equations: the pendulum chain of `generators::pendulum_chain`, the link-vector pendulum
//! chain of `models/scale/pendulum_chain.dae` (`generators::pendulum_chain_link_vectors`)
//! and the spring chain of `models/scale/spring_chain.dae`.
//!
//! `cargo run --release -p daec-structure --example scaling [max_equations]`

use std::time::Instant;

use daec_structure::generators::{pendulum_chain, pendulum_chain_link_vectors, spring_chain};
use daec_structure::{HvtCount, SigmaMatrix, all_hvts_of_analysis, analyze, pantelides};

/// Builds Σ with about the given number of equations.
type Generator = fn(usize) -> SigmaMatrix;

fn main() {
    let max: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let models: [(&str, Generator); 3] = [
        ("pendulum chain", |n| pendulum_chain(n / 5)),
        (
            "pendulum chain with link vectors (models/scale/pendulum_chain.dae)",
            |n| pendulum_chain_link_vectors(n.div_ceil(7)),
        ),
        ("spring chain", |n| spring_chain(n / 2)),
    ];
    for (name, make) in models {
        println!("{name}");
        run(max, make);
    }
}

fn run(max: usize, make: Generator) {
    println!(
        "equations  nnz        analyze[s]  hvts[s]      pantelides[s]  index  dof      \
         fine_blocks  HVTs"
    );
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
        let th = Instant::now();
        let hvts = all_hvts_of_analysis(&s, &a, 16);
        let th = th.elapsed().as_secs_f64();
        let count = match hvts.count {
            HvtCount::Exact(k) => format!("{k}"),
            HvtCount::AtLeast(k) if k == u128::MAX => "at least 2^128".to_string(),
            HvtCount::AtLeast(k) => format!("at least {k}"),
        };
        let t1 = Instant::now();
        let p = pantelides(&s);
        let tp = t1.elapsed().as_secs_f64();
        let same = p.as_ref().is_ok_and(|p| p.differentiations == a.offsets.c);
        println!(
            "{:<10} {:<10} {:<11.4} {:<12.4} {:<14.4} {:<6} {:<8} {:<12} {}{}",
            s.n_rows(),
            s.nnz(),
            ta,
            th,
            tp,
            a.structural_index,
            a.dof,
            a.fine_btf.len(),
            count,
            if same { "" } else { "  (Pantelides differs!)" }
        );
        n *= 10;
    }
}
