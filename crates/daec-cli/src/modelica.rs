//! `.mo` input: the model file and the library directories (`--lib`,
//! `MODELICAPATH`) are parsed, the class is chosen (`--model`, or the
//! only model of the file) and instantiated into a flat model.

use crate::{Ctx, EXIT_MODEL, ModelArgs};
use daec_diag::{Diagnostic, FileId, SourceMap, Span, codes};
use daec_syntax::ast::{ClassBody, Element, Model, StoredDefinition};
use std::path::{Path, PathBuf};

/// The deepest package directory nesting read from a library.
const MAX_PACKAGE_DEPTH: usize = 32;

/// The most files read from the libraries.
const MAX_LIBRARY_FILES: usize = 10_000;

/// Parses the `.mo` file `file` and the libraries, and instantiates the
/// chosen class; diagnostics are printed and the exit code returned when
/// that fails.
pub(crate) fn instantiate(
    ctx: &mut Ctx<'_, '_>,
    args: &ModelArgs,
    map: &mut SourceMap,
    file: FileId,
) -> Result<(Model, Vec<Diagnostic>), i32> {
    let parsed = daec_syntax::parse_stored(file, map.source(file));
    let mut diags = parsed.diagnostics;
    let Some(main) = parsed
        .stored
        .filter(|_| !diags.iter().any(Diagnostic::is_error))
    else {
        ctx.diagnostics(map, &diags);
        return Err(EXIT_MODEL);
    };
    let name = choose(ctx, args, &main)?;
    let mut files = vec![main];
    let mut dirs = args.libs.clone();
    if let Some(path) = std::env::var_os("MODELICAPATH") {
        dirs.extend(std::env::split_paths(&path).filter(|p| !p.as_os_str().is_empty()));
    }
    let mut paths = Vec::new();
    let mut orders = Vec::new();
    for dir in &dirs {
        if !dir.is_dir() {
            return Err(ctx.usage_error(&format!("--lib: `{}` is not a directory", dir.display())));
        }
        library_files(dir, 0, &mut paths, &mut orders);
    }
    if paths.len() > MAX_LIBRARY_FILES {
        return Err(ctx.usage_error(&format!(
            "the libraries hold more than {MAX_LIBRARY_FILES} `.mo` files"
        )));
    }
    // The model file itself may lie in a library directory.
    let own = std::fs::canonicalize(&args.model).ok();
    paths.retain(|p| std::fs::canonicalize(p).ok() != own);
    for path in paths {
        let Ok(text) = std::fs::read_to_string(&path) else {
            return Err(ctx.usage_error(&format!("cannot read `{}`", path.display())));
        };
        let id = map.add(path.display().to_string(), text);
        let parsed = daec_syntax::parse_stored(id, map.source(id));
        diags.extend(parsed.diagnostics);
        if path.file_name().is_some_and(|n| n == "package.mo")
            && let Some(stored) = &parsed.stored
        {
            let members = package_members(stored);
            for order in orders.iter_mut().filter(|o| path.parent() == Some(&o.dir)) {
                order.missing.retain(|(name, _)| !members.contains(name));
            }
        }
        files.extend(parsed.stored);
    }
    for order in orders {
        diags.extend(order.warnings(map));
    }
    if diags.iter().any(Diagnostic::is_error) {
        ctx.diagnostics(map, &diags);
        return Err(EXIT_MODEL);
    }
    let (model, more) = daec_model::instantiate(&files, &name);
    diags.extend(more);
    match model {
        Some(m) => Ok((m, diags)),
        None => {
            ctx.diagnostics(map, &diags);
            Err(EXIT_MODEL)
        }
    }
}

/// The class to flatten: `--model NAME` (a full name, or the last part
/// of one model's name), or the only model of the file, or else the only
/// one that no other class of the file uses.
fn choose(ctx: &mut Ctx<'_, '_>, args: &ModelArgs, main: &StoredDefinition) -> Result<String, i32> {
    let candidates = daec_model::model_classes(std::slice::from_ref(main));
    let list = || {
        if candidates.is_empty() {
            "the file defines no model".to_owned()
        } else {
            format!("its models are: {}", candidates.join(", "))
        }
    };
    match &args.class {
        Some(name) => {
            if candidates.contains(name) {
                return Ok(name.clone());
            }
            let suffix = format!(".{name}");
            let matching: Vec<&String> =
                candidates.iter().filter(|c| c.ends_with(&suffix)).collect();
            match matching.as_slice() {
                [one] => Ok((*one).clone()),
                // A class of a library, or one the instantiation reports.
                _ => Ok(name.clone()),
            }
        }
        None => match (
            candidates.as_slice(),
            daec_model::root_model_classes(std::slice::from_ref(main)).as_slice(),
        ) {
            ([one], _) | (_, [one]) => Ok(one.clone()),
            _ => Err(ctx.usage_error(&format!(
                "`{}` holds {} models; choose one with --model NAME ({})",
                args.model.display(),
                candidates.len(),
                list()
            ))),
        },
    }
}

/// The `package.order` of a package directory (MLS 3.6, §13.4.3) and
/// the names it lists that no file or directory of the package holds
/// (with their byte ranges in the file); those that `package.mo`
/// defines are removed once it is parsed.
struct PackageOrder {
    dir: PathBuf,
    file: PathBuf,
    text: String,
    missing: Vec<(String, (usize, usize))>,
}

impl PackageOrder {
    /// A warning for each name listed that the package does not define.
    fn warnings(self, map: &mut SourceMap) -> Vec<Diagnostic> {
        if self.missing.is_empty() {
            return Vec::new();
        }
        let id = map.add(self.file.display().to_string(), self.text);
        self.missing
            .into_iter()
            .map(|(name, (start, end))| {
                Diagnostic::warning(
                    codes::PACKAGE_ORDER,
                    format!("`package.order` lists `{name}`, which the package does not define"),
                )
                .with_primary(
                    Span::new(id, start, end),
                    "no file, directory or class of this name",
                )
            })
            .collect()
    }
}

/// The names of the classes that the `package.mo` file `stored` defines
/// inside its package.
fn package_members(stored: &StoredDefinition) -> Vec<String> {
    let mut out = Vec::new();
    for class in &stored.classes {
        if let ClassBody::Long { elements, .. } = &class.body {
            for e in elements {
                if let Element::Class(c) = e {
                    out.push(c.name.name.clone());
                }
            }
        }
    }
    out
}

/// The entries of the package directory `dir` in the order of its
/// `package.order` (MLS 3.6, §13.4.3), the unlisted ones after them in
/// name order; the listed names that no entry has go to `orders`.
fn ordered_entries(dir: &Path, entries: &mut Vec<PathBuf>, orders: &mut Vec<PackageOrder>) {
    let file = dir.join("package.order");
    let Ok(text) = std::fs::read_to_string(&file) else {
        return;
    };
    let mut listed = Vec::new();
    let mut missing = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let name = line.trim();
        let start = offset + (line.len() - line.trim_start().len());
        offset += line.len();
        if name.is_empty() {
            continue;
        }
        let found = entries.iter().position(|p| {
            p.file_stem().is_some_and(|s| s == name)
                && (p.is_dir() || p.extension().is_some_and(|e| e == "mo"))
        });
        match found {
            Some(k) => listed.push(entries.remove(k)),
            None => missing.push((name.to_owned(), (start, start + name.len()))),
        }
    }
    listed.append(entries);
    *entries = listed;
    orders.push(PackageOrder {
        dir: dir.to_path_buf(),
        file,
        text,
        missing,
    });
}

/// The `.mo` files of the library directory `dir`: each `Name.mo` and
/// each package directory `Name/package.mo` with its files (its
/// `package.mo` first, the others in the order of its `package.order`).
fn library_files(dir: &Path, depth: usize, out: &mut Vec<PathBuf>, orders: &mut Vec<PackageOrder>) {
    if depth > MAX_PACKAGE_DEPTH || out.len() > MAX_LIBRARY_FILES {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    let package = dir.join("package.mo");
    if depth > 0 && package.is_file() {
        out.push(package);
        ordered_entries(dir, &mut entries, orders);
    }
    for path in entries {
        if path.is_dir() {
            if path.join("package.mo").is_file() {
                library_files(&path, depth + 1, out, orders);
            }
        } else if path.extension().is_some_and(|e| e == "mo")
            && path.file_name().is_some_and(|n| n != "package.mo")
        {
            out.push(path);
        }
    }
}
