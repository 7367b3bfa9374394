//! Architecture invariants that a grep can check (see ARCHITECTURE.md).

mod common;

/// Source files of a crate (recursively).
fn sources(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Invariant 2: only `daec-cli` does file IO, reads the environment or
/// prints. Library code of every other crate (its `src/`, not its tests,
/// benches or examples, and not `#[cfg(test)]` modules) must not — but
/// for `crates/daec-fmu/src/ffi.rs`, the FMU's entry points, which read
/// the FMU's own resources (`std::fs` only).
#[test]
fn only_the_cli_does_io() {
    let crates = common::root().join("crates");
    let forbidden = [
        "std::fs",
        "std::env",
        "println!",
        "eprintln!",
        "print!(",
        "eprint!(",
        "std::process::exit",
    ];
    let mut offenders = Vec::new();
    for entry in std::fs::read_dir(&crates).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == "daec-cli" {
            continue;
        }
        let mut files = Vec::new();
        sources(&entry.path().join("src"), &mut files);
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            let fmu_resources = f.ends_with("daec-fmu/src/ffi.rs");
            // Ignore unit-test modules at the end of a file.
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            for (lineno, line) in code.lines().enumerate() {
                let line = line.trim_start();
                if line.starts_with("//") {
                    continue;
                }
                for pat in forbidden {
                    if fmu_resources && pat == "std::fs" {
                        continue;
                    }
                    if line.contains(pat) {
                        offenders.push(format!("{}:{}: {}", f.display(), lineno + 1, line));
                    }
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "IO outside daec-cli:\n{}",
        offenders.join("\n")
    );
}

/// Invariant 7: `unsafe` code lives in three modules. The workspace denies
/// `unsafe_code`; only `crates/daec-cli/src/native.rs` (loading the
/// library `daec simulate --native` compiles),
/// `benches/testset/radau5.rs` (the benchmark's FFI to Hairer's Fortran
/// RADAU5) and `crates/daec-fmu/src/ffi.rs` (the FMI C ABI of the FMU
/// runtime) may allow it. Every Rust file of the repository (crates,
/// tests, benches) is scanned for the allowance.
#[test]
fn unsafe_code_is_allowed_in_the_native_loader_the_radau5_ffi_and_the_fmi_abi_only() {
    let root = common::root();
    let mut files = Vec::new();
    for dir in ["crates", "tests", "benches"] {
        sources(&root.join(dir), &mut files);
    }
    assert!(files.len() > 50, "the scan found the sources");
    let allowed = [
        root.join("crates/daec-cli/src/native.rs"),
        root.join("benches/testset/radau5.rs"),
        root.join("crates/daec-fmu/src/ffi.rs"),
    ];
    let mut offenders = Vec::new();
    let mut found = [false; 3];
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let allows = text.lines().any(|l| {
            let l = l.trim_start();
            !l.starts_with("//")
                && l.contains("allow(unsafe_code)")
                && !l.contains("\"allow(unsafe_code)")
        });
        match allowed.iter().position(|a| *a == f) {
            Some(k) if allows => found[k] = true,
            _ if allows => offenders.push(f.display().to_string()),
            _ => {}
        }
    }
    assert_eq!(
        found, [true; 3],
        "the three modules are where the scan expects them"
    );
    assert!(
        offenders.is_empty(),
        "unsafe code allowed outside {allowed:?}: {offenders:?}"
    );
}

/// Invariant 4 (partly): the pipeline is deterministic — two runs of the
/// analysis print byte-identical reports.
#[test]
fn analysis_output_is_deterministic() {
    for model in [
        "models/steinbrecher/spring_chain.dae",
        "models/scale/pendulum_chain.dae",
    ] {
        let a = common::daec(&["analyze", model, "--format", "json"]);
        let b = common::daec(&["analyze", model, "--format", "json"]);
        assert_eq!(a.code, 0, "{}", a.stderr);
        assert_eq!(a.stdout, b.stdout, "{model}");
    }
}

/// The daec crates a crate of the workspace lists under `[dependencies]`
/// in its `Cargo.toml` (not its dev-dependencies).
fn daec_dependencies(krate: &str) -> Vec<String> {
    let manifest = common::root().join("crates").join(krate).join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let mut deps = Vec::new();
    let mut in_dependencies = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_dependencies = line == "[dependencies]";
        } else if in_dependencies && line.starts_with("daec-") {
            let name = line.split(['.', ' ', '=']).next().unwrap_or(line);
            deps.push(name.to_owned());
        }
    }
    deps
}

/// The layering of ARCHITECTURE.md: the symbolic core, the structural
/// analysis and the integrators depend on no other daec crate, so each
/// is tested on its own.
#[test]
fn the_core_crates_depend_on_no_daec_crate() {
    for krate in ["daec-expr", "daec-structure", "daec-solve"] {
        let deps = daec_dependencies(krate);
        assert!(deps.is_empty(), "{krate} depends on {deps:?}");
    }
    // (the scan reads the manifests it should)
    assert!(daec_dependencies("daec-model").contains(&"daec-syntax".to_owned()));
}

/// Invariant 3: semantic IRs keep no spans. `daec_diag::Span` is reachable
/// only from the crates that depend on `daec-diag` — the parser, the
/// lowering, the simulation's run-time messages and the CLI — so the
/// expression pool, the structural analysis, the formulations and the
/// integrators cannot hold one; and the lowering's `Dae` keeps its spans
/// in the `SourceSpans` side table, keyed by index, and in no other type
/// of `daec-model`'s `lib.rs`. (`daec-sim` reads that side table to label
/// its run-time messages; its formulations and tapes are built from the
/// span-free crates.)
#[test]
fn spans_stay_out_of_the_semantic_representations() {
    for krate in [
        "daec-expr",
        "daec-structure",
        "daec-regularize",
        "daec-solve",
    ] {
        let deps = daec_dependencies(krate);
        assert!(
            !deps.iter().any(|d| d == "daec-diag"),
            "{krate} depends on daec-diag: {deps:?}"
        );
    }
    let path = common::root().join("crates/daec-model/src/lib.rs");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut in_side_table = false;
    let mut side_table_found = false;
    let mut offenders = Vec::new();
    for (lineno, line) in text.lines().enumerate() {
        if line.starts_with("pub struct SourceSpans") {
            in_side_table = true;
            side_table_found = true;
        } else if in_side_table && line.starts_with('}') {
            in_side_table = false;
        }
        let code = line.trim_start();
        if in_side_table || code.starts_with("//") || code.starts_with("use ") {
            continue;
        }
        if code.replace("SourceSpans", "").contains("Span") {
            offenders.push(format!("lib.rs:{}: {code}", lineno + 1));
        }
    }
    assert!(side_table_found, "the scan finds SourceSpans");
    assert!(
        offenders.is_empty(),
        "spans outside the SourceSpans side table:\n{}",
        offenders.join("\n")
    );
}

/// Invariant 8: every crate's public API is an explicit `pub use` list in
/// its `lib.rs` over private modules. A `pub mod` is allowed only for the
/// few modules callers name as a namespace (listed here, each with a
/// comment in its `lib.rs` saying why), and no `lib.rs` re-exports a glob.
#[test]
fn crates_export_an_explicit_list_over_private_modules() {
    let allowed = [
        ("daec-cli", "native"),
        ("daec-diag", "codes"),
        ("daec-regularize", "emit_rust"),
        ("daec-sim", "native"),
        ("daec-structure", "generators"),
        ("daec-syntax", "ast"),
        ("daec-syntax", "lexer"),
    ];
    let crates = common::root().join("crates");
    let mut seen = 0;
    let mut offences = Vec::new();
    for entry in std::fs::read_dir(&crates).unwrap().flatten() {
        let lib = entry.path().join("src/lib.rs");
        let Ok(text) = std::fs::read_to_string(&lib) else {
            continue;
        };
        seen += 1;
        let krate = entry.file_name().to_string_lossy().into_owned();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim_start();
            if let Some(rest) = line.strip_prefix("pub mod ") {
                let name = rest.trim_end_matches([';', '{', ' ']);
                if !allowed.contains(&(krate.as_str(), name)) {
                    offences.push(format!("{krate}/src/lib.rs:{}: pub mod {name}", n + 1));
                }
            }
            if line.starts_with("pub use") && line.contains("::*") {
                offences.push(format!("{krate}/src/lib.rs:{}: {line}", n + 1));
            }
        }
    }
    assert!(seen >= 9, "found only {seen} crates under {crates:?}");
    assert!(
        offences.is_empty(),
        "make these modules private and export their items by name \
         (or add a namespace to the allow-list with a reason):\n{}",
        offences.join("\n")
    );
}

/// Longest function body allowed in `crates/*/src` (issue #29).
const FUNCTION_LINES_MAX: usize = 300;
/// Longest source file allowed without a reason at its top.
const FILE_LINES_MAX: usize = 1500;

/// The functions of a rustfmt-formatted source longer than
/// [`FUNCTION_LINES_MAX`] lines: `(first line, length, signature)`. A
/// function runs from its `fn` line to the first later line that is its
/// indentation followed by `}`; a declaration without a body (its
/// signature ends in `;`) is skipped.
fn long_functions(text: &str) -> Vec<(usize, usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut long = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let body = line.trim_start();
        let indent = &line[..line.len() - body.len()];
        let is_fn = [
            "fn ",
            "pub fn ",
            "pub(crate) fn ",
            "pub(super) fn ",
            "const fn ",
        ]
        .iter()
        .any(|p| body.starts_with(p));
        if !is_fn || body.starts_with("fn(") {
            continue;
        }
        let Some(sig_end) = (i..lines.len())
            .find(|&j| lines[j].trim_end().ends_with('{') || lines[j].trim_end().ends_with(';'))
        else {
            continue;
        };
        if lines[sig_end].trim_end().ends_with(';') {
            continue;
        }
        let close = format!("{indent}}}");
        if let Some(end) = (sig_end..lines.len()).find(|&j| lines[j].trim_end() == close) {
            let length = end - i + 1;
            if length > FUNCTION_LINES_MAX {
                long.push((i + 1, length, body.to_string()));
            }
        }
    }
    long
}

/// Invariant 9: no function in `crates/*/src` is longer than 300 lines,
/// and a source file longer than 1 500 lines says why at its top (a
/// `//! Length:` line among its first 40 lines).
#[test]
fn functions_and_files_stay_short_enough_to_read() {
    let mut files = Vec::new();
    for krate in std::fs::read_dir(common::root().join("crates"))
        .unwrap()
        .flatten()
    {
        sources(&krate.path().join("src"), &mut files);
    }
    assert!(files.len() > 50, "found only {} source files", files.len());
    let mut problems = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (line, length, signature) in long_functions(&text) {
            problems.push(format!(
                "{}:{line}: {length} lines: {signature}",
                file.display()
            ));
        }
        let reason = text.lines().take(40).any(|l| l.starts_with("//! Length:"));
        if text.lines().count() > FILE_LINES_MAX && !reason {
            problems.push(format!(
                "{}: {} lines and no `//! Length:` reason at its top",
                file.display(),
                text.lines().count()
            ));
        }
    }
    assert!(problems.is_empty(), "too long:\n{}", problems.join("\n"));
}

#[test]
fn a_long_function_is_found_and_a_declaration_is_skipped() {
    let mut text = String::from("trait T {\n    fn declared(&self);\n}\n\nfn long() {\n");
    for _ in 0..FUNCTION_LINES_MAX {
        text.push_str("    let x = 1;\n");
    }
    text.push_str("}\n\nfn short() {\n    let y = 2;\n}\n");
    let long = long_functions(&text);
    assert_eq!(
        long,
        vec![(5, FUNCTION_LINES_MAX + 2, "fn long() {".to_string())]
    );
}
