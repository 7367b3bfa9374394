//! `daec simulate --native`: the residuals, mass matrix and Jacobians
//! compiled by rustc give the results of the tapes (the same expressions;
//! only rustc's rounding of `powi` and the like may differ), across the
//! features that touch the problem: constraints of every level, events
//! with `reinit`, StE switching (a variant built and compiled during the
//! run), parameters given with `-p` (passed at run time, not baked into
//! the library); and the usage errors.

mod common;

use common::daec;
use std::path::PathBuf;

/// A fresh path in the temporary directory.
fn temp(name: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-native-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The CSV rows of a successful run, and its stats JSON and stderr.
fn run(args: &[&str], tag: &str) -> (Vec<Vec<f64>>, serde_json::Value, String) {
    let json = temp(&format!("{tag}.json"));
    let mut all = vec!["simulate"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--stats-json", json.to_str().unwrap()]);
    let r = daec(&all);
    assert_eq!(r.code, 0, "{all:?}: {}", r.stderr);
    let rows = r
        .stdout
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|x| x.parse::<f64>().unwrap()).collect())
        .collect();
    let stats = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (rows, stats, r.stderr)
}

/// Runs `args` with tapes and with `--native` and checks that the results
/// agree within `tol` (relative to max(1, |value|)) at every output point
/// and the work counts are the same; returns the native run's statistics
/// and stderr.
fn same_as_tapes(args: &[&str], tag: &str, tol: f64) -> (serde_json::Value, String) {
    let (tape_rows, tape_stats, _) = run(args, &format!("{tag}-tapes"));
    let mut native_args = args.to_vec();
    native_args.extend_from_slice(&["--native", "--verbose"]);
    let (rows, stats, stderr) = run(&native_args, &format!("{tag}-native"));
    assert_eq!(rows.len(), tape_rows.len(), "{tag}: output points");
    for (k, (a, b)) in rows.iter().zip(&tape_rows).enumerate() {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!(
                (x - y).abs() <= tol * y.abs().max(1.0),
                "{tag}: row {k}: native {x} against tapes {y}"
            );
        }
    }
    for key in [
        "steps_accepted",
        "steps_rejected",
        "jacobian_evals",
        "lu_decompositions",
        "events",
        "ste_switches",
    ] {
        assert_eq!(stats[key], tape_stats[key], "{tag}: {key}");
    }
    // (the key is left out of the JSON of a tape run)
    assert_eq!(stats["native_code"], true, "{tag}");
    assert!(tape_stats.get("native_code").is_none(), "{tag}");
    (stats, stderr)
}

#[test]
fn akzo_nobel_native_gives_the_tape_run() {
    // baese2017 §4.7 at the setting of the RADAU5 comparison (rtol = atol
    // = 1e-6, `benches/radau5-reference`): an index-1 model with one
    // algebraic constraint. The tapes take 24 steps and 217 residual
    // evaluations; rustc's code gives the same run.
    let args = [
        "models/baese/akzo_nobel.dae",
        "--rtol",
        "1e-6",
        "--interval",
        "180",
    ];
    let (stats, stderr) = same_as_tapes(&args, "akzo", 1e-12);
    assert_eq!(stats["steps_accepted"], 24);
    assert_eq!(stats["residual_evals"], 217);
    assert!(
        stderr.contains("native code: compiled `") || stderr.contains("native code: cached `"),
        "{stderr}"
    );
    assert!(stderr.contains("(native code "), "{stderr}");
}

#[test]
fn chunked_native_functions_give_the_tape_run() {
    // The wheelset's constraint Jacobian (its hidden constraints
    // differentiated) is about 100 KB of Rust: its statements are split
    // into chunk functions that pass the shared subexpressions on through
    // the arrays `sf` and `sb` (`daec_expr::to_rust_chunked`), whose
    // values are those of one function (the library of one function per
    // symbol gave the same CSV, byte for byte). That run and the tapes'
    // agree to 3.0e-10 relative (the contact force TYL, an index-3
    // multiplier, whose error the default of a mechanical system, index
    // scaling, controls to h²·TOL): the index-3 model amplifies the
    // round-off of the tapes' different order of the terms of a sum.
    let args = ["models/testset/wheelset.dae", "--t-end", "0.1"];
    let (stats, stderr) = same_as_tapes(&args, "wheelset", 1e-9);
    assert!(stats["steps_accepted"].as_u64().unwrap() > 10, "{stats}");
    assert!(stats["native_seconds"].as_f64().unwrap() > 0.0, "{stats}");
    let source = library_source(&stderr);
    assert!(
        source.contains("\n#[inline(never)]\nfn daec_constraint_jacobian_1(t: f64, z: &[f64; N], p: &[f64; NP], sf: &mut"),
        "{}",
        &source[..source.len().min(4000)]
    );
    assert!(source.contains("    daec_constraint_jacobian_1(t, z, p, &mut sf, &mut sb, out);"));
}

#[test]
fn two_bit_adder_native_reads_its_gates_constants_from_tables() {
    // The two-bit adder (350 unknowns): its gates and transistors repeat a
    // few trees of operations that differ only in the unknowns they read
    // and in their constants (the devices' parameters, folded by the
    // lowering). The constants of sums, products and branches are table
    // entries (`daec_expr::to_rust_looped`), so the Jacobian's statements
    // share loop bodies: 67 loops in `daec_diff_jacobian`, whose
    // straight-line text was 189 KB of the 329 KB source, and 27 in the
    // differential rows of the residual; at most eight loops to a chunk
    // function. The run is the tapes' up to the round-off of the order of
    // the terms of a sum.
    let args = ["models/testset/two_bit_adder.dae", "--t-end", "1"];
    let (stats, stderr) = same_as_tapes(&args, "adder", 1e-12);
    assert!(stats["steps_accepted"].as_u64().unwrap() >= 8, "{stats}");
    let source = library_source(&stderr);
    assert!(source.len() < 290_000, "{} bytes", source.len());
    assert!(
        source.contains("\nstatic T4_K: [f64; "),
        "no table of constants"
    );
    let loops = source.matches("\n    for r in T4_").count();
    assert!(loops >= 60, "{loops} loops");
    assert!(source.matches("*T4_K.get_unchecked(r[").count() >= 20);
    let rows = source.matches("\n    for r in T0_").count();
    assert!(rows >= 20, "{rows} loops in the differential rows");
    assert!(source.contains("\n    daec_diff_jacobian_8(t, z, zdot, p, &mut sf, &mut sb, out);"));
}

/// The source kept beside the library that a `--verbose` run's stderr
/// names.
fn library_source(stderr: &str) -> String {
    let lib = stderr
        .lines()
        .find_map(|l| {
            l.strip_prefix("native code: compiled `")
                .or_else(|| l.strip_prefix("native code: cached `"))
        })
        .map(|l| PathBuf::from(&l[..l.find('`').unwrap()]))
        .unwrap_or_else(|| panic!("{stderr}"));
    let name = lib.file_name().unwrap().to_str().unwrap();
    let stem = name
        .trim_start_matches(std::env::consts::DLL_PREFIX)
        .trim_end_matches(std::env::consts::DLL_SUFFIX);
    std::fs::read_to_string(lib.with_file_name(format!("{stem}.rs"))).unwrap()
}

#[test]
fn looped_native_functions_give_the_tape_run() {
    // Fekete (20 particles, 160 unknowns): the terms of its residuals and
    // Jacobians repeat per particle and per pair of particles, and each
    // repeated shape is one loop body over a table of indices
    // (`daec_expr::to_rust_looped`), every expression printed as in the
    // straight-line code. The run is the tapes' up to the round-off of
    // the order of the terms of a sum.
    let args = [
        "models/testset/fekete.dae",
        "--t-end",
        "2",
        "--interval",
        "1",
    ];
    let (stats, stderr) = same_as_tapes(&args, "fekete", 1e-9);
    assert!(stats["steps_accepted"].as_u64().unwrap() > 5, "{stats}");
    let source = library_source(&stderr);
    let loops = source.matches("\n    for r in T").count();
    assert!(loops >= 40, "{loops} loops");
    assert!(source.contains(".get_unchecked(r[1] as usize)"));
}

#[test]
fn hic_pendulum_native_keeps_every_constraint_level() {
    // steinbrecher2016 Ex. 5.1 (HiC, index 3): the hidden constraints of
    // levels 1 and 2 are rows of the native library too.
    let args = [
        "models/steinbrecher/pendulum.dae",
        "--t-end",
        "4",
        "--rtol",
        "1e-7",
        "--interval",
        "1",
    ];
    let (stats, _) = same_as_tapes(&args, "pendulum", 1e-9);
    let levels = stats["max_constraint_residual_by_level"]
        .as_array()
        .unwrap();
    assert_eq!(levels.len(), 3);
    for l in levels {
        assert!(l.as_f64().unwrap() < 1e-7, "{levels:?}");
    }
}

#[test]
fn events_with_reinit_run_on_native_code() {
    let (stats, _) = same_as_tapes(&["models/ndsolve/event_reinit.dae"], "events", 1e-9);
    assert!(stats["events"].as_u64().unwrap() > 0, "{stats}");
}

#[test]
fn relations_of_the_state_read_their_modes_in_native_code() {
    // a = if x > 0 then -1 else 1: the relation is a mode, a parameter
    // that the native functions read at every call; four state events
    let m = temp("switch.dae");
    std::fs::write(
        &m,
        "model Switch\n  Real x(start = 1, fixed = true);\n  Real v(start = 0, fixed = true);\n  Real a;\nequation\n  der(x) = v;\n  der(v) = a;\n  a = if x > 0 then -1 else 1;\n  annotation(experiment(StartTime = 0, StopTime = 10));\nend Switch;\n",
    )
    .unwrap();
    let (stats, _) = same_as_tapes(&[m.to_str().unwrap()], "switch", 1e-9);
    assert_eq!(stats["events"], 4, "{stats}");
}

#[test]
fn ste_variants_built_during_the_run_are_compiled_too() {
    // steinbrecher2016 §5, Fig. 3: StE switches between the variants on
    // two HVTs; the second is built (and compiled) at the first switch,
    // and the run reports both builds.
    let args = [
        "models/steinbrecher/pendulum.dae",
        "--form",
        "ste",
        "--t-end",
        "4",
        "--rtol",
        "1e-7",
        "--interval",
        "1",
    ];
    let (stats, stderr) = same_as_tapes(&args, "ste", 1e-9);
    assert!(stats["ste_switches"].as_u64().unwrap() >= 7, "{stats}");
    let libraries = stderr
        .lines()
        .filter(|l| {
            l.starts_with("native code: compiled `") || l.starts_with("native code: cached `")
        })
        .count();
    assert_eq!(libraries, 2, "{stderr}");
}

#[test]
fn parameters_are_passed_at_run_time_not_compiled_in() {
    // The library reads the parameters from an array: `-p` changes the
    // solution but not the code, so the second run finds the first run's
    // library in the cache.
    let base = [
        "models/baese/akzo_nobel.dae",
        "--rtol",
        "1e-6",
        "--interval",
        "180",
        "--native",
        "--verbose",
    ];
    let (default_rows, _, _) = run(&base, "param-default");
    let mut changed = base.to_vec();
    changed.extend_from_slice(&["-p", "k1=25"]);
    let (rows, _, stderr) = run(&changed, "param-changed");
    assert!(stderr.contains("native code: cached `"), "{stderr}");
    // a faster first reaction consumes more y1 by t = 180
    assert!(
        rows[1][1] < default_rows[1][1] - 1e-3,
        "{:?} against {:?}",
        rows[1],
        default_rows[1]
    );
    let mut tapes = changed.clone();
    tapes.retain(|a| *a != "--native");
    let (tape_rows, _, _) = run(&tapes, "param-tapes");
    for (x, y) in rows[1].iter().zip(&tape_rows[1]) {
        assert!((x - y).abs() <= 1e-12 * y.abs().max(1.0), "{x} against {y}");
    }
}

#[test]
fn native_without_a_compiler_is_a_usage_error() {
    let cache = fresh_cache("no-compiler");
    let r = daec(&[
        "simulate",
        "models/baese/akzo_nobel.dae",
        "--native",
        "--rustc",
        "/nonexistent/bin/rustc",
        "--cache-dir",
        cache.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "cannot compile the model to native code: cannot run `/nonexistent/bin/rustc`"
        ) && r.stderr.contains("--native needs a Rust compiler"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty(), "no results without the run");
}

#[test]
fn native_needs_a_first_order_formulation() {
    let r = daec(&[
        "simulate",
        "models/wunderlich/rlc.dae",
        "--method",
        "radau-2nd",
        "--native",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("--native compiles the first-order formulations"),
        "{}",
        r.stderr
    );
    let r = daec(&[
        "simulate",
        "models/baese/akzo_nobel.dae",
        "--rustc",
        "rustc",
    ]);
    assert_eq!(r.code, 2, "--rustc without --native: {}", r.stderr);
    assert!(r.stderr.contains("--native"), "{}", r.stderr);
}

#[test]
fn a_cached_library_is_loaded_without_running_the_compiler() {
    // The compiler runs only to build: a run whose library is cached
    // needs none.
    let cache = fresh_cache("no-compiler-cached");
    let cache_arg = cache.to_str().unwrap();
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let akzo = [
        "models/baese/akzo_nobel.dae",
        "--interval",
        "60",
        "--native",
        "--verbose",
        "--cache-dir",
        cache_arg,
        "--rustc",
    ];
    let (first, _, stderr) = run(&[&akzo[..], &[rustc.as_str()]].concat(), "cached-1");
    let lib = library_of(&stderr, "compiled");
    let (again, _, stderr) = run(
        &[&akzo[..], &["/nonexistent/bin/rustc"]].concat(),
        "cached-2",
    );
    assert_eq!(library_of(&stderr, "cached"), lib);
    assert_eq!(again, first);
}

/// A fresh cache directory for one test (0755: private enough).
fn fresh_cache(tag: &str) -> PathBuf {
    let dir = temp(&format!("cache-{tag}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The library path a `--verbose` run reports as `what` (`compiled` or
/// `cached`).
fn library_of(stderr: &str, what: &str) -> PathBuf {
    let start = format!("native code: {what} `");
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix(&start))
        .unwrap_or_else(|| panic!("no `{start}` in {stderr}"));
    PathBuf::from(&line[..line.find('`').unwrap()])
}

#[test]
fn a_swapped_library_is_refused_and_rebuilt() {
    // A library replaced in the cache (here by another model's valid
    // library) was loaded — its initialisers run inside daec — and
    // reported as "cached". The SHA-256 of the bytes recorded at build
    // time is checked before loading; a mismatch or a missing record
    // builds the library again.
    let cache = fresh_cache("swap");
    let cache_arg = cache.to_str().unwrap();
    let akzo = [
        "models/baese/akzo_nobel.dae",
        "--interval",
        "60",
        "--native",
        "--verbose",
        "--cache-dir",
        cache_arg,
    ];
    let (first, _, stderr) = run(&akzo, "swap-1");
    let lib = library_of(&stderr, "compiled");
    assert!(lib.starts_with(std::fs::canonicalize(&cache).unwrap()));
    let (_, _, stderr) = run(
        &[
            "models/steinbrecher/pendulum.dae",
            "--t-end",
            "0.1",
            "--native",
            "--verbose",
            "--cache-dir",
            cache_arg,
        ],
        "swap-other",
    );
    let other = library_of(&stderr, "compiled");
    assert_ne!(lib, other);
    std::fs::copy(&other, &lib).unwrap();
    let (rows, _, stderr) = run(&akzo, "swap-2");
    assert!(
        stderr.contains(&format!(
            "native code: `{}` does not have the SHA-256 recorded when daec built it; not loaded, building it again",
            lib.display()
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("native code: cached"), "{stderr}");
    assert_eq!(library_of(&stderr, "compiled"), lib);
    assert_eq!(rows, first);
    // the rebuilt library is found again; a missing record rebuilds too
    let (_, _, stderr) = run(&akzo, "swap-3");
    assert_eq!(library_of(&stderr, "cached"), lib);
    let mut sum = lib.clone();
    sum.set_file_name(
        lib.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .trim_start_matches("lib")
            .replace(std::env::consts::DLL_SUFFIX, ".sha256"),
    );
    std::fs::remove_file(&sum).unwrap();
    let (rows, _, stderr) = run(&akzo, "swap-4");
    assert!(
        stderr.contains("has no recorded SHA-256; not loaded, building it again"),
        "{stderr}"
    );
    assert_eq!(library_of(&stderr, "compiled"), lib);
    assert_eq!(rows, first);
    // the record: the library's SHA-256 and the cache key it was built for
    let record = std::fs::read_to_string(&sum).unwrap();
    let record: Vec<&str> = record.lines().collect();
    assert_eq!(record.iter().map(|l| l.len()).collect::<Vec<_>>(), [64, 64]);
    assert!(
        lib.to_str().unwrap().contains(&record[1][..16]),
        "{record:?}"
    );
    // only the cache's own files are left (no private load copies)
    let mut names: Vec<String> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 6, "{names:?}");
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn native_code_is_loaded_only_from_a_private_cache() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let akzo = |cache: &str| {
        daec(&[
            "simulate",
            "models/baese/akzo_nobel.dae",
            "--native",
            "--cache-dir",
            cache,
        ])
    };
    let cache = fresh_cache("private");
    // directories daec creates are 0700
    let nested = cache.join("a").join("b");
    let (_, _, _) = run(
        &[
            "models/baese/akzo_nobel.dae",
            "--interval",
            "60",
            "--native",
            "--cache-dir",
            nested.to_str().unwrap(),
        ],
        "private-nested",
    );
    for d in [cache.join("a"), nested.clone()] {
        let mode = std::fs::metadata(&d).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700, "{}", d.display());
    }
    // a directory others can write is refused, before anything is loaded
    std::fs::set_permissions(&nested, std::fs::Permissions::from_mode(0o777)).unwrap();
    let r = akzo(nested.to_str().unwrap());
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("is writable by other users (mode 777)"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty());
    // so is a directory of another user (changing the owner needs root)
    std::fs::set_permissions(&nested, std::fs::Permissions::from_mode(0o700)).unwrap();
    let me = std::fs::metadata(&nested).unwrap().uid();
    if std::os::unix::fs::chown(&nested, Some(me + 1), None).is_ok() {
        let r = akzo(nested.to_str().unwrap());
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(
            r.stderr.contains(&format!(
                "belongs to another user (uid {}, not {me})",
                me + 1
            )),
            "{}",
            r.stderr
        );
    }
    // no fallback to a shared directory when the cache cannot be created
    let file = cache.join("file");
    std::fs::write(&file, "").unwrap();
    let r = akzo(file.join("cache").to_str().unwrap());
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "cannot create the cache directory `{}/cache`",
            file.display()
        )) && r.stderr.contains("set DAEC_CACHE_DIR (or --cache-dir)"),
        "{}",
        r.stderr
    );
    let _ = std::fs::remove_dir_all(&cache);
}

#[test]
fn the_native_residual_is_its_two_parts_to_the_bit() {
    // The transistor amplifier's constraints repeat the two `exp` of its
    // differential rows. `daec_residual` calls the functions of the
    // differential rows and of the constraints on local copies of z, ż
    // and p (which `out` cannot alias, so rustc evaluates the shared
    // terms once): its values are the two functions' to the last bit, at
    // points on and off the solution.
    use daec_solve::QuasiLinearDae;
    use std::sync::Arc;
    let text = std::fs::read_to_string("models/testset/transistor_amplifier.dae").unwrap();
    let mut map = daec_diag::SourceMap::new();
    let file = map.add("transistor_amplifier.dae", text);
    let parsed = daec_syntax::parse(file, map.source(file));
    let lower = daec_model::LowerOptions::default();
    let (dae, _) = daec_model::lower(&parsed.model.unwrap(), &lower);
    let mut dae = dae.unwrap();
    daec_sim::reduce_to_first_order(&mut dae);
    let analysis = daec_regularize::analyze(&mut dae, &daec_regularize::AnalyzeOptions::default());
    let form = daec_sim::default_form(daec_sim::Method::default());
    let mut prepared = daec_sim::prepare_form(&mut dae, &analysis, form).unwrap();
    let cache = fresh_cache("residual-parts");
    let compiler = Arc::new(daec_cli::native::RustcCompiler::new(None, Some(cache)));
    prepared.compile_native(&dae, compiler).unwrap();
    let problem = &prepared.problem;
    let (n, n_d, n_g) = (problem.n_vars(), problem.n_diff(), problem.n_constraints());
    assert_eq!((n, n_d, n_g), (8, 5, 3));
    let z0 = prepared.init.z0.clone();
    for k in 0..20 {
        let s = k as f64;
        let t = 1e-3 * s;
        let z: Vec<f64> = (0..n)
            .map(|i| z0[i] + 0.05 * (s + i as f64).sin())
            .collect();
        let zdot: Vec<f64> = (0..n).map(|i| 10.0 * (0.7 * s - i as f64).cos()).collect();
        let mut whole = vec![0.0; n_d + n_g];
        problem.residual(t, &z, &zdot, &mut whole);
        let mut diff = vec![0.0; n_d];
        problem.diff_residual(t, &z, &zdot, &mut diff);
        let mut g = vec![0.0; n_g];
        problem.constraints(t, &z, &mut g);
        let parts: Vec<u64> = diff.iter().chain(&g).map(|v| v.to_bits()).collect();
        let bits: Vec<u64> = whole.iter().map(|v| v.to_bits()).collect();
        assert_eq!(bits, parts, "t = {t}, z = {z:?}");
        assert!(whole.iter().all(|v| v.is_finite()), "{whole:?}");
        assert!(
            whole.iter().filter(|v| **v != 0.0).count() >= n_d,
            "{whole:?}"
        );
    }
}
