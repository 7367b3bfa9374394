//! `.mo` input: the model file and the library directories (`--lib`,
//! `MODELICAPATH`) are parsed, the class is chosen (`--model`, or the
//! only model of the file) and instantiated into a flat model.

use crate::{Ctx, EXIT_MODEL, ModelArgs};
use daec_diag::{Diagnostic, FileId, SourceMap};
use daec_syntax::ast::{Model, StoredDefinition};
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
    for dir in &dirs {
        if !dir.is_dir() {
            return Err(ctx.usage_error(&format!("--lib: `{}` is not a directory", dir.display())));
        }
        library_files(dir, 0, &mut paths);
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
        files.extend(parsed.stored);
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

/// The `.mo` files of the library directory `dir`: each `Name.mo` and
/// each package directory `Name/package.mo` with its files (its
/// `package.mo` first).
fn library_files(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
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
    }
    for path in entries {
        if path.is_dir() {
            if path.join("package.mo").is_file() {
                library_files(&path, depth + 1, out);
            }
        } else if path.extension().is_some_and(|e| e == "mo")
            && path.file_name().is_some_and(|n| n != "package.mo")
        {
            out.push(path);
        }
    }
}
