//! The files a command writes (`-o`, `--plot`, `--stats-json`): checked
//! before the command does any work, and written so that nothing but the
//! named file's contents changes.
//!
//! - A regular file (or a name not yet taken) is replaced atomically: the
//!   text goes to a fresh file beside it (created exclusively, with the
//!   old file's permission bits), which is then renamed over it — an
//!   interrupted run leaves the old file.
//! - A symbolic link is followed: its target is written and the link
//!   kept.
//! - Anything else (a FIFO, a character device, standard output as
//!   `/dev/stdout`) is opened and written to, never replaced.
//! - Refused, with a usage error before any work: a directory; a
//!   directory that does not exist; a read-only regular file (checked
//!   from the permission bits too, since root may rename over any file);
//!   a file that is the input model; two options naming the same file.
//!   Files are compared by identity (device and inode, or the directory's
//!   for a new name), so `./m.dae` and `m.dae`, hard links and symbolic
//!   links are all recognised.

use crate::Ctx;
use std::ffi::OsString;
use std::fs::{self, Metadata, OpenOptions};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Symbolic links followed before a path is given up on (Linux's limit).
const MAX_LINKS: usize = 40;

/// How a path is written.
#[derive(Debug)]
enum Kind {
    /// A regular file at `path` (links resolved), or a new one there:
    /// replaced atomically, keeping the permission bits `mode`.
    Replace { path: PathBuf, mode: Option<u32> },
    /// A FIFO, device or the like: opened for writing and written to.
    Direct,
}

/// What a file is, by identity.
#[derive(Debug, PartialEq, Eq)]
enum Identity {
    /// An existing file: device and inode.
    File(u64, u64),
    /// A name not yet taken: its directory's device and inode, and the
    /// name.
    New(u64, u64, OsString),
}

/// An output path resolved.
#[derive(Debug)]
struct Target {
    kind: Kind,
    identity: Identity,
}

fn identity(meta: &Metadata) -> Identity {
    Identity::File(meta.dev(), meta.ino())
}

/// Follows the symbolic links of `path` to what they name (which may not
/// exist yet). `Ok(None)` for a link through `/proc` (such as
/// `/dev/stdout`), whose target only the kernel can follow.
fn follow_links(path: &Path) -> Result<Option<(PathBuf, Option<Metadata>)>, String> {
    let mut p = path.to_path_buf();
    for _ in 0..=MAX_LINKS {
        if p.starts_with("/proc") {
            return Ok(None);
        }
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = fs::read_link(&p).map_err(|e| e.to_string())?;
                p = match p.parent() {
                    Some(dir) => dir.join(to),
                    None => to,
                };
            }
            Ok(m) => return Ok(Some((p, Some(m)))),
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Some((p, None))),
            Err(e) => return Err(e.to_string()),
        }
    }
    Err("too many levels of symbolic links".into())
}

/// Resolves `path` (see the module documentation); `Err` says why it
/// cannot be written.
fn resolve(path: &Path) -> Result<Target, String> {
    let Some((real, meta)) = follow_links(path)? else {
        let meta = fs::metadata(path).map_err(|e| e.to_string())?;
        return Ok(Target {
            kind: Kind::Direct,
            identity: identity(&meta),
        });
    };
    match meta {
        Some(m) if m.is_dir() => Err("it is a directory".into()),
        Some(m) if !m.is_file() => Ok(Target {
            kind: Kind::Direct,
            identity: identity(&m),
        }),
        Some(m) => {
            // Opening for writing (without truncating) is the system's own
            // permission check; root passes it for any file, so the bits
            // are checked as well.
            let denied = match OpenOptions::new().write(true).open(&real) {
                Err(e) if e.kind() == ErrorKind::PermissionDenied => true,
                _ => m.permissions().mode() & 0o222 == 0,
            };
            if denied {
                return Err(
                    "it is read-only (daec does not replace a file it may not write)".into(),
                );
            }
            Ok(Target {
                kind: Kind::Replace {
                    path: real,
                    mode: Some(m.permissions().mode() & 0o7777),
                },
                identity: identity(&m),
            })
        }
        None => {
            let dir = real
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or_else(|| Path::new("."));
            let name = real.file_name().ok_or("it names no file")?.to_os_string();
            let d = fs::metadata(dir)
                .ok()
                .filter(Metadata::is_dir)
                .ok_or_else(|| format!("the directory `{}` does not exist", dir.display()))?;
            Ok(Target {
                kind: Kind::Replace {
                    path: real,
                    mode: None,
                },
                identity: Identity::New(d.dev(), d.ino(), name),
            })
        }
    }
}

/// Checks the outputs `(option, path)` of a command that reads `input`
/// before it does any work: each must be writable (see the module
/// documentation), none may be the input, and no two options may name
/// the same file that is replaced.
pub(crate) fn check_outputs(
    ctx: &mut Ctx<'_, '_>,
    input: &Path,
    outputs: &[(&str, Option<&Path>)],
) -> Result<(), i32> {
    let input_id = fs::metadata(input).ok().map(|m| identity(&m));
    let mut seen: Vec<(&str, &Path, Identity)> = Vec::new();
    for &(option, path) in outputs {
        let Some(path) = path else { continue };
        let target = resolve(path).map_err(|why| {
            ctx.usage_error(&format!(
                "{option}: cannot write `{}`: {why}",
                path.display()
            ))
        })?;
        if !matches!(target.kind, Kind::Replace { .. }) {
            continue;
        }
        if input_id.as_ref() == Some(&target.identity) {
            return Err(ctx.usage_error(&format!(
                "{option}: `{}` is the input model `{}`; daec does not overwrite its input — choose another output file",
                path.display(),
                input.display()
            )));
        }
        if let Some((other, other_path, _)) = seen.iter().find(|(_, _, id)| *id == target.identity)
        {
            return Err(ctx.usage_error(&format!(
                "{other} `{}` and {option} `{}` are the same file; give each output its own file",
                other_path.display(),
                path.display()
            )));
        }
        seen.push((option, path, target.identity));
    }
    Ok(())
}

/// A name beside `path` that no other writer uses.
fn temporary_beside(path: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let k = NEXT.fetch_add(1, Ordering::Relaxed);
    let name = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.daec-tmp-{}-{k}", std::process::id()))
}

/// Writes what `write` produces to a fresh file beside `path` and renames it over
/// `path`. The fresh file is created exclusively (`O_EXCL`: an existing
/// file or link of that name is never followed) with the permission bits
/// `mode` of the file it replaces.
fn replace_atomically(
    path: &Path,
    mode: Option<u32>,
    write: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut open = OpenOptions::new();
    open.write(true).create_new(true);
    if let Some(mode) = mode {
        open.mode(mode);
    }
    let (tmp, mut file) = loop {
        let tmp = temporary_beside(path);
        match open.open(&tmp) {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    };
    let result = (|| {
        let mut w = std::io::BufWriter::new(&mut file);
        write(&mut w)?;
        w.flush()?;
        drop(w);
        if let Some(mode) = mode {
            // (`mode` at creation is reduced by the umask)
            file.set_permissions(fs::Permissions::from_mode(mode))?;
        }
        drop(file);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Writes `contents` to `path` (see the module documentation); a usage
/// error when it cannot.
pub(crate) fn write_output(ctx: &mut Ctx<'_, '_>, path: &Path, contents: &[u8]) -> Result<(), i32> {
    write_output_with(ctx, path, &mut |w| w.write_all(contents))
}

/// [`write_output`] of what `write` produces, written as it is produced
/// (through a buffer), so that a large output is never held in memory.
pub(crate) fn write_output_with(
    ctx: &mut Ctx<'_, '_>,
    path: &Path,
    write: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), i32> {
    let written = resolve(path).and_then(|target| {
        match target.kind {
            Kind::Replace { path: real, mode } => replace_atomically(&real, mode, write),
            Kind::Direct => OpenOptions::new().append(true).open(path).and_then(|f| {
                let mut w = std::io::BufWriter::new(f);
                write(&mut w)?;
                w.flush()
            }),
        }
        .map_err(|e| e.to_string())
    });
    written.map_err(|why| ctx.usage_error(&format!("cannot write `{}`: {why}", path.display())))
}
