#!/bin/sh
# The compile time of an emitted Rust module: `daec regularize --emit rust`
# of a scalable model, compiled in a throw-away cargo project against
# daec-solve (dev profile, opt-level 0, as a user's first build).
#
#   benches/emit-rust-compile-time.sh [N] [MODEL] [FORM]
#
# Defaults: N = 1000, models/scale/pendulum_chain.dae, hic. Prints the
# size of the module, the time of the emission and of the build. Needs
# the dependencies of daec-solve in the local cargo cache (`--offline`).
set -eu
n=${1:-1000}
model=${2:-models/scale/pendulum_chain.dae}
form=${3:-hic}
root=$(cd "$(dirname "$0")/.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
work=${TMPDIR:-/tmp}/daec-emit-rust-compile-time
(cd "$root" && cargo build --release --quiet -p daec-cli)
mkdir -p "$work/src"
start=$(date +%s.%N)
"$target/release/daec" regularize "$root/$model" -p "N=$n" --form "$form" \
    --emit rust -o "$work/src/module.rs"
end=$(date +%s.%N)
ty=$(sed -n 's/^pub struct \([A-Za-z0-9_]*\) {$/\1/p' "$work/src/module.rs" | head -n 1)
cat > "$work/Cargo.toml" <<TOML
[package]
name = "daec-emit-rust-compile-time"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
daec-solve = { path = "$root/crates/daec-solve" }

[workspace]

[profile.dev]
opt-level = 0
debug = false
incremental = false
TOML
cp "$root/Cargo.lock" "$work/Cargo.lock"
# daec-solve and its dependencies first, so that the time below is the
# module's alone
printf 'fn main() {}\n' > "$work/src/main.rs"
(cd "$work" && CARGO_TARGET_DIR="$work/target" cargo build --offline --quiet)
cat > "$work/src/main.rs" <<RUST
mod module;
use daec_solve::QuasiLinearDae;
fn main() {
    let p = module::$ty::default();
    assert_eq!(module::UNKNOWNS.len(), p.n_vars());
    assert_eq!(module::CONSTRAINT_LEVELS.len(), p.n_constraints());
    let z = vec![0.5; p.n_vars()];
    let mut g = vec![0.0; p.n_constraints()];
    p.constraints(0.0, &z, &mut g);
    println!("{}", g.iter().sum::<f64>());
}
RUST
start_build=$(date +%s.%N)
(cd "$work" && CARGO_TARGET_DIR="$work/target" cargo build --offline --quiet)
end_build=$(date +%s.%N)
bytes=$(wc -c < "$work/src/module.rs")
echo "$model N = $n, $form: $(echo "$bytes / 1000000" | bc -l | cut -c1-4) MB of Rust," \
    "emission $(echo "$end - $start" | bc -l | cut -c1-5) s," \
    "dev build $(echo "$end_build - $start_build" | bc -l | cut -c1-6) s"
