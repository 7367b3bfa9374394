//! Embeds the packages shipped with daec (`library/` at the top of the
//! repository: `Modelica`, `PlanarMechanics`) in the binary: writes `$OUT_DIR/library.rs`,
//! the list of its `.mo` files (paths relative to `library/`) with their
//! text by `include_str!`, in the order in which a library directory is
//! read (`modelica.rs`: each package's `package.mo` first, then the
//! entries of its `package.order`, then the others in name order).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let library = manifest.join("../../library");
    println!("cargo:rerun-if-changed={}", library.display());
    let mut files = Vec::new();
    if library.is_dir() {
        walk(&library, 0, &mut files);
    }
    let mut out = String::from(
        "/// The `.mo` files of the shipped library: path under `library/`, text.\n\
         pub(crate) static LIBRARY: &[(&str, &str)] = &[\n",
    );
    for file in &files {
        let rel = file.strip_prefix(&library).expect("under library/");
        let rel: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let abs = file.canonicalize().expect("a file of the walk");
        writeln!(
            out,
            "    ({:?}, include_str!({:?})),",
            rel.join("/"),
            abs.display().to_string()
        )
        .expect("writing to a String");
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo")).join("library.rs");
    std::fs::write(dest, out).expect("OUT_DIR is writable");
}

/// The `.mo` files of the package directory `dir` (the top level when
/// `depth` is 0), as `modelica.rs`'s `library_files` orders them.
fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("a library directory")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    if depth > 0 {
        out.push(dir.join("package.mo"));
        if let Ok(order) = std::fs::read_to_string(dir.join("package.order")) {
            let mut listed = Vec::new();
            for name in order.lines().map(str::trim).filter(|n| !n.is_empty()) {
                if let Some(k) = entries.iter().position(|p| {
                    p.file_stem().is_some_and(|s| s == name)
                        && (p.is_dir() || p.extension().is_some_and(|e| e == "mo"))
                }) {
                    listed.push(entries.remove(k));
                }
            }
            listed.append(&mut entries);
            entries = listed;
        }
    }
    for path in entries {
        if path.is_dir() {
            if path.join("package.mo").is_file() {
                walk(&path, depth + 1, out);
            }
        } else if path.extension().is_some_and(|e| e == "mo")
            && path.file_name().is_some_and(|n| n != "package.mo")
        {
            out.push(path);
        }
    }
}
