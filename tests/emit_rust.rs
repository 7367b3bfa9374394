//! Every emitted Rust module compiles and evaluates right: for
//! every model in `models/` and every formulation that applies to it, the
//! module of `daec_regularize::emit_rust` is written into one temporary
//! cargo project (path dependency on `crates/daec-solve`, the workspace's
//! `Cargo.lock`, `--offline`), built once for all models together, run,
//! and its residuals (apart and in one `residual` call), mass matrices and
//! sparse Jacobians at pseudo-random points are compared with the
//! in-process tape evaluation (`daec_expr::Tape`): equal patterns, values
//! within 1e-12 relative, and `mass_is_constant` as the mass tape says;
//! for a model with declared invariants also the module's `invariants`.
//!
//! Models above [`MAX_UNKNOWNS`] unknowns are compiled in a smaller size
//! of the same equations ([`small_variants`]), so the build stays short.
//!
//! The project is built in `<target dir>/emit-rust-check` (kept between
//! runs, so `daec-solve`'s dependencies are compiled once), with
//! `opt-level = 0` for a quick build.

mod common;

use daec_diag::SourceMap;
use daec_expr::{ExprId, ExprPool, Tape};
use daec_model::{Dae, LowerOptions};
use daec_regularize::emit_rust::{emit_rust_formulation, type_name};
use daec_regularize::{AnalyzeOptions, RegularizeOptions, analyze, regularize};
use daec_regularize::{Form, QuasiLinearForm};
use daec_regularize::{mass_entries, sparse_jacobian};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

fn load(path: &str) -> Option<Dae> {
    let text = std::fs::read_to_string(common::root().join(path)).ok()?;
    load_text(path, text)
}

fn load_text(path: &str, text: String) -> Option<Dae> {
    let mut map = SourceMap::new();
    let file = map.add(path, text);
    let parsed = daec_syntax::parse(file, map.source(file));
    let model = parsed.model?;
    daec_model::lower(&model, &LowerOptions::default()).0
}

/// The largest model (unknowns as written) whose modules the test
/// compiles. The emitted source grows linearly with the model (about 1 kB
/// per unknown and formulation), and so does rustc's time: the food web's
/// 800 unknowns make 4.3 MB of Rust in five formulations, which took the
/// build from 8 s to about 5 minutes. Larger models of the library are
/// checked here in a smaller size of the same equations
/// ([`small_variants`]); the compile time of a large module is measured
/// by `benches/emit-rust-compile-time.sh`.
const MAX_UNKNOWNS: usize = 200;

/// The library's models above [`MAX_UNKNOWNS`], at a size below it (their
/// size parameters overridden): the same equations, boundary rows and
/// mirrored neighbours included, in a module that compiles quickly.
fn small_variants() -> Vec<(String, Dae)> {
    let variants: [(&str, &[(&str, f64)]); 1] =
        [("models/ndsolve/food_web.dae", &[("MX", 3.0), ("MY", 4.0)])];
    variants
        .iter()
        .map(|(model, overrides)| {
            let text = std::fs::read_to_string(common::root().join(model)).unwrap();
            let mut map = SourceMap::new();
            let file = map.add(*model, text);
            let parsed = daec_syntax::parse(file, map.source(file));
            let options = LowerOptions {
                overrides: overrides.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
                ..LowerOptions::default()
            };
            let dae = daec_model::lower(parsed.model.as_ref().unwrap(), &options)
                .0
                .unwrap();
            assert!(dae.unknowns.len() <= MAX_UNKNOWNS, "{model}");
            (format!("{model} {overrides:?}"), dae)
        })
        .collect()
}

/// Models whose names could break generated Rust: names of the prelude and
/// of the module's own items, a keyword, and quoted names with line
/// breaks, comment delimiters, quotes, bidirectional overrides and other
/// invisible characters — as model, parameter and unknown names and in
/// descriptions.
fn odd_models() -> Vec<(String, Dae)> {
    let names = [
        "Default",
        "Vec",
        "Option",
        "Self",
        "Some",
        "String",
        "Box",
        "Result",
        "QuasiLinearDae",
        "UNKNOWNS",
        "f64",
        "type",
        "a\u{202e}b\u{2066}c\u{2069}",
        "*/ x /*",
        "line\nbreak\r",
        "say \"hi\" \\ 'there'",
        "zero\u{200b}width\u{2028}sep",
    ];
    names
        .iter()
        .map(|name| {
            let q = daec_model::ident_source(name);
            let text = format!(
                "model {q} {d}\n  parameter Real {p} = 2 {d};\n  parameter Real k = 3;\n  Real {x}(start = 1, fixed = true) {d};\n  Real y;\nequation\n  der({x}) = -{p} * {x} + k * y;\n  0 = y - sin(time) * {x};\nend {q};\n",
                d = daec_syntax::lexer::string_literal(name),
                p = daec_model::ident_source(&format!("{name}p")),
                x = daec_model::ident_source(&format!("x {name}")),
            );
            let dae = load_text(&format!("odd model {name:?}"), text.clone())
                .unwrap_or_else(|| panic!("{text}"));
            (format!("model named {name:?}"), dae)
        })
        .collect()
}

/// A deterministic pseudo-random number in `[0.2, 1.2)` (64-bit LCG).
fn next(state: &mut u64) -> f64 {
    *state = state
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    0.2 + ((*state >> 11) as f64) / ((1u64 << 53) as f64)
}

/// The in-process side of one module: patterns and values at the points.
struct Expected {
    label: String,
    /// `(kind, pattern)` for `m`, `jd`, `jg`.
    patterns: Vec<(&'static str, Vec<(usize, usize)>)>,
    /// `(kind, point, values)` for `d`, `g`, `m`, `jd`, `jg`.
    values: Vec<(&'static str, usize, Vec<f64>)>,
}

fn eval(
    pool: &ExprPool,
    roots: &[ExprId],
    inputs: &[ExprId],
    t: f64,
    x: &[f64],
    params: &[f64],
) -> Vec<f64> {
    let tape = Tape::compile(pool, roots, inputs).expect("tape compiles");
    let mut out = vec![0.0; roots.len()];
    let mut scratch = Vec::new();
    tape.eval(t, x, params, &mut out, &mut scratch);
    out
}

type Point = (f64, Vec<f64>, Vec<f64>);

fn expected(
    pool: &mut ExprPool,
    q: &QuasiLinearForm,
    invariants: &[ExprId],
    params: &[f64],
    points: &[Point],
    label: String,
) -> Expected {
    let n = q.n();
    let diff: Vec<ExprId> = q.diff.iter().map(|r| r.residual).collect();
    let cons: Vec<ExprId> = q.constraints.iter().map(|c| c.expr).collect();
    let (mp, me) = mass_entries(q);
    let (jdp, jde) = sparse_jacobian(pool, &diff);
    let (jgp, jge) = sparse_jacobian(pool, &cons);
    let z: Vec<ExprId> = (0..n as u32).map(|j| pool.var(j, 0)).collect();
    let zd: Vec<ExprId> = (0..n as u32).map(|j| pool.var(j, 1)).collect();
    let zzd: Vec<ExprId> = z.iter().chain(&zd).copied().collect();
    let mut values = Vec::new();
    for (k, (t, x, xd)) in points.iter().enumerate() {
        let xx: Vec<f64> = x.iter().chain(xd).copied().collect();
        values.push(("d", k, eval(pool, &diff, &zzd, *t, &xx, params)));
        values.push(("g", k, eval(pool, &cons, &z, *t, x, params)));
        values.push(("m", k, eval(pool, &me, &z, *t, x, params)));
        values.push(("jd", k, eval(pool, &jde, &zzd, *t, &xx, params)));
        values.push(("jg", k, eval(pool, &jge, &z, *t, x, params)));
        let both: Vec<ExprId> = diff.iter().chain(&cons).copied().collect();
        values.push(("r", k, eval(pool, &both, &zzd, *t, &xx, params)));
        if !invariants.is_empty() {
            values.push(("i", k, eval(pool, invariants, &z, *t, x, params)));
        }
    }
    // `mass_is_constant`: the emitter decides from the leaves, the tape
    // from its instructions.
    let constant = Tape::compile(pool, &me, &z)
        .expect("tape compiles")
        .is_constant();
    values.push(("mc", 0, vec![f64::from(u8::from(constant))]));
    Expected {
        label,
        patterns: vec![("m", mp), ("jd", jdp), ("jg", jgp)],
        values,
    }
}

fn slice_literal(v: &[f64]) -> String {
    let items: Vec<String> = v.iter().map(|x| format!("{x:?}")).collect();
    format!("&[{}][..]", items.join(", "))
}

/// The directory the test binary's target dir is (`<target>/debug/deps/…`).
fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        let p = PathBuf::from(dir);
        return if p.is_absolute() {
            p
        } else {
            common::root().join(p)
        };
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.ancestors().nth(3).map(Path::to_path_buf))
        .unwrap_or_else(|| common::root().join("target"))
}

const MAIN_HELPERS: &str = r#"
use daec_solve::QuasiLinearDae;

type Point<'a> = (f64, &'a [f64], &'a [f64]);

fn print(tag: usize, kind: &str, k: usize, v: &[f64]) {
    let items: Vec<String> = v.iter().map(|x| format!("{x:?}")).collect();
    println!("{tag} {kind} {k} {}", items.join(" "));
}

fn pattern(tag: usize, kind: &str, p: &[(usize, usize)]) {
    let items: Vec<String> = p.iter().map(|(i, j)| format!("{i}:{j}")).collect();
    println!("{tag} p{kind} 0 {}", items.join(" "));
}

fn check(tag: usize, p: &dyn QuasiLinearDae, points: &[Point<'_>]) {
    pattern(tag, "m", &p.mass_pattern());
    pattern(tag, "jd", &p.diff_jacobian_pattern());
    pattern(tag, "jg", &p.constraint_jacobian_pattern());
    let (nd, ng) = (p.n_diff(), p.n_constraints());
    let (nm, njd, njg) = (
        p.mass_pattern().len(),
        p.diff_jacobian_pattern().len(),
        p.constraint_jacobian_pattern().len(),
    );
    for (k, (t, z, zd)) in points.iter().enumerate() {
        let mut d = vec![0.0; nd];
        p.diff_residual(*t, z, zd, &mut d);
        print(tag, "d", k, &d);
        let mut g = vec![0.0; ng];
        p.constraints(*t, z, &mut g);
        print(tag, "g", k, &g);
        let mut m = vec![0.0; nm];
        p.mass_values(*t, z, &mut m);
        print(tag, "m", k, &m);
        let mut jd = vec![0.0; njd];
        p.diff_jacobian_values(*t, z, zd, &mut jd);
        print(tag, "jd", k, &jd);
        let mut jg = vec![0.0; njg];
        p.constraint_jacobian_values(*t, z, &mut jg);
        print(tag, "jg", k, &jg);
        let mut r = vec![0.0; nd + ng];
        p.residual(*t, z, zd, &mut r);
        print(tag, "r", k, &r);
    }
    print(tag, "mc", 0, &[f64::from(u8::from(p.mass_is_constant()))]);
}
"#;

/// Whether the emitted value `a` agrees with the tape's `b`, an entry of a
/// vector or matrix whose largest tape entry is `scale`: to 1e-12 of
/// itself, or of `scale` (a normwise bound: the emitted code and the tape
/// sum the terms of an entry in different orders, so an entry that cancels
/// carries the rounding of its larger terms, bounded by the matrix's
/// size, not its own).
fn close(a: f64, b: f64, scale: f64) -> bool {
    if a.is_nan() || b.is_nan() {
        return a.is_nan() && b.is_nan();
    }
    if a == b {
        return true;
    }
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(scale).max(1e-300)
        || (a - b).abs() <= 1e-14 * a.abs().max(b.abs()).max(1.0)
}

/// The seed of a module's points, from its label: adding a model does not
/// move the points of the others.
fn seed_of(label: &str) -> u64 {
    label.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

#[test]
fn every_emitted_module_compiles_and_matches_the_tape_evaluation() {
    let mut modules: Vec<(String, String)> = Vec::new(); // (file, text)
    let mut expect: Vec<Expected> = Vec::new();
    let mut main_body = String::new();
    let (library, large): (Vec<_>, Vec<_>) = common::valid_models()
        .into_iter()
        .filter_map(|model| load(&model).map(|dae| (model, dae)))
        .partition(|(_, dae)| dae.unknowns.len() <= MAX_UNKNOWNS);
    let small = small_variants();
    for (model, _) in &large {
        assert!(
            small.iter().any(|(m, _)| m.starts_with(model.as_str())),
            "{model} is above {MAX_UNKNOWNS} unknowns: give it a smaller size in small_variants"
        );
    }
    for (model, mut dae) in library.into_iter().chain(small).chain(odd_models()) {
        daec_sim::reduce_to_first_order(&mut dae);
        let analysis = analyze(&mut dae, &AnalyzeOptions::default());
        let params = dae.named_parameters();
        let pvals: Vec<f64> = params.iter().map(|p| p.1).collect();
        for form in Form::ALL {
            let Ok(f) = regularize(&mut dae, &analysis, form, &RegularizeOptions::default()) else {
                continue;
            };
            let Ok(q) = f.quasi_linear(&mut dae.pool) else {
                continue;
            };
            let tag = modules.len();
            // (a model with declared invariants gets `invariants(t, z, out)`)
            let invariants = daec_sim::invariant_rows(&dae).unwrap_or_default();
            let text =
                emit_rust_formulation(&mut dae.pool, &f, &dae.name, &params, &invariants).unwrap();
            let n = q.n();
            let label = format!("{model} --form {}", form.name());
            let mut seed = seed_of(&label);
            let points: Vec<Point> = (0..3)
                .map(|_| {
                    let t = next(&mut seed);
                    let z = (0..n).map(|_| next(&mut seed)).collect();
                    let zd = (0..n).map(|_| next(&mut seed)).collect();
                    (t, z, zd)
                })
                .collect();
            expect.push(expected(
                &mut dae.pool,
                &q,
                &invariants,
                &pvals,
                &points,
                label,
            ));
            let _ = writeln!(
                main_body,
                "    // {} --form {}",
                model.escape_default(),
                form.name()
            );
            let ty = type_name(&dae.name);
            let _ = writeln!(
                main_body,
                "    let p = m{tag}::{ty}::default();\n    assert_eq!(m{tag}::UNKNOWNS.len(), p.n_vars());\n    assert_eq!(m{tag}::CONSTRAINT_LEVELS.len(), p.n_constraints());\n    check({tag}, &p, &["
            );
            for (t, z, zd) in &points {
                let _ = writeln!(
                    main_body,
                    "        ({t:?}, {}, {}),",
                    slice_literal(z),
                    slice_literal(zd)
                );
            }
            let _ = writeln!(main_body, "    ]);");
            for (k, (t, z, _)) in points.iter().enumerate().filter(|_| !invariants.is_empty()) {
                let _ = writeln!(
                    main_body,
                    "    let mut o = vec![0.0; m{tag}::N_INVARIANTS];\n    p.invariants({t:?}, {}, &mut o);\n    print({tag}, \"i\", {k}, &o);",
                    slice_literal(z)
                );
            }
            modules.push((format!("m{tag}.rs"), text));
        }
    }
    assert!(modules.len() >= 20, "only {} modules", modules.len());
    // The project.
    let dir = target_dir().join("emit-rust-check");
    let src = dir.join("src");
    let _ = std::fs::remove_dir_all(&src);
    std::fs::create_dir_all(&src).unwrap();
    let solve = common::root().join("crates/daec-solve");
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"daec-emit-check\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n[dependencies]\ndaec-solve = {{ path = {:?} }}\n\n[workspace]\n\n[profile.dev]\nopt-level = 0\ndebug = false\nincremental = false\n",
            solve.to_string_lossy()
        ),
    )
    .unwrap();
    std::fs::copy(common::root().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    let mut main = String::from("//! Generated by tests/emit_rust.rs.\n\n");
    for (k, _) in modules.iter().enumerate() {
        let _ = writeln!(main, "mod m{k};");
    }
    main.push_str(MAIN_HELPERS);
    let _ = writeln!(main, "\nfn main() {{\n{main_body}}}");
    std::fs::write(src.join("main.rs"), main).unwrap();
    for (file, text) in &modules {
        std::fs::write(src.join(file), text).unwrap();
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let target = dir.join("target");
    let clock = std::time::Instant::now();
    let build = Command::new(&cargo)
        .args(["build", "--offline", "--quiet", "--message-format=short"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .expect("cargo runs");
    let stderr = String::from_utf8_lossy(&build.stderr);
    assert!(
        build.status.success(),
        "the emitted modules do not compile:\n{stderr}"
    );
    eprintln!(
        "{} modules built in {:.1} s",
        modules.len(),
        clock.elapsed().as_secs_f64()
    );
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("warning")).collect();
    assert!(warnings.is_empty(), "warnings:\n{}", warnings.join("\n"));
    let exe = target.join("debug").join("daec-emit-check");
    let run = Command::new(&exe).output().expect("the check program runs");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let stdout = String::from_utf8_lossy(&run.stdout);
    // Parse `tag kind k values…`.
    let mut got: std::collections::HashMap<(usize, String, usize), Vec<String>> =
        std::collections::HashMap::new();
    for line in stdout.lines() {
        let mut it = line.split(' ');
        let (Some(tag), Some(kind), Some(k)) = (it.next(), it.next(), it.next()) else {
            continue;
        };
        let (Ok(tag), Ok(k)) = (tag.parse::<usize>(), k.parse::<usize>()) else {
            continue;
        };
        got.insert(
            (tag, kind.to_string(), k),
            it.filter(|s| !s.is_empty()).map(str::to_string).collect(),
        );
    }
    let mut failures = Vec::new();
    for (tag, e) in expect.iter().enumerate() {
        for (kind, pattern) in &e.patterns {
            let want: Vec<String> = pattern.iter().map(|(i, j)| format!("{i}:{j}")).collect();
            let have = got
                .get(&(tag, format!("p{kind}"), 0))
                .cloned()
                .unwrap_or_default();
            if want != have {
                failures.push(format!("{}: pattern {kind} differs", e.label));
            }
        }
        for (kind, k, want) in &e.values {
            let have: Vec<f64> = got
                .get(&(tag, kind.to_string(), *k))
                .map(|v| v.iter().map(|s| s.parse().unwrap_or(f64::NAN)).collect())
                .unwrap_or_default();
            if have.len() != want.len() {
                failures.push(format!(
                    "{}: {kind} at point {k}: {} values, expected {}",
                    e.label,
                    have.len(),
                    want.len()
                ));
                continue;
            }
            let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            for (i, (a, b)) in have.iter().zip(want).enumerate() {
                if !close(*a, *b, scale) {
                    failures.push(format!(
                        "{}: {kind}[{i}] at point {k}: emitted {a:e}, tape {b:e}",
                        e.label
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
