//! Helpers shared by the end-to-end tests: run `daec` in-process, list
//! the model library.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

mod snapshot;

/// What one run of `daec` produced.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `daec ARGS…` in-process (the working directory is the repository
/// root, so model paths in diagnostics are relative and stable).
pub fn daec(args: &[&str]) -> Run {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let mut io = daec::cli::Io {
        stdout: &mut out,
        stderr: &mut err,
        stderr_is_terminal: false,
    };
    let mut argv = vec!["daec".into()];
    argv.extend(args.iter().map(|a| a.into()));
    let code = daec::cli::run(argv, &mut io);
    Run {
        code,
        stdout: String::from_utf8_lossy(&out).into_owned(),
        stderr: String::from_utf8_lossy(&err).into_owned(),
    }
}

/// The fields of a CSV header line (RFC 4180: a name with a comma, as
/// `c1[1,1]`, is quoted, and a quote inside doubled).
fn header_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                fields.last_mut().unwrap().push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(String::new()),
            _ => fields.last_mut().unwrap().push(c),
        }
    }
    fields
}

/// A parsed CSV of `daec simulate`: header and numeric rows.
pub struct Csv {
    pub header: Vec<String>,
    pub rows: Vec<Vec<f64>>,
}

impl Csv {
    /// Parses `text` (a header line, then rows of numbers).
    pub fn parse(text: &str) -> Csv {
        let mut lines = text.lines();
        let header = header_fields(lines.next().unwrap_or_default());
        let rows = lines
            .map(|l| l.split(',').map(|x| x.parse::<f64>().unwrap()).collect())
            .collect();
        Csv { header, rows }
    }

    /// The column of `name`, if there is one.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }

    /// The column of `name` (panics if there is none).
    pub fn col(&self, name: &str) -> usize {
        self.find(name)
            .unwrap_or_else(|| panic!("no column `{name}` in {:?}", self.header))
    }

    /// The value of column `name` in row `row`.
    pub fn value(&self, row: usize, name: &str) -> f64 {
        self.rows[row][self.col(name)]
    }

    /// The row at output time `t` (to rounding of the output grid).
    pub fn row_at(&self, t: f64) -> Option<&[f64]> {
        self.rows
            .iter()
            .find(|r| (r[0] - t).abs() <= 1e-9 * t.abs().max(1.0))
            .map(Vec::as_slice)
    }
}

/// The number right after the first `prefix` in `text` (panics, showing
/// `text`, if there is none).
pub fn number_after(text: &str, prefix: &str) -> f64 {
    text.split(prefix)
        .nth(1)
        .and_then(|rest| rest.split([' ', ')', ';', ',']).next())
        .and_then(|x| x.parse().ok())
        .unwrap_or_else(|| panic!("no number after `{prefix}` in:\n{text}"))
}

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// All `.dae` files under `models/<sub>` (recursively), sorted, as paths
/// relative to the repository root.
pub fn models_under(sub: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root().join("models").join(sub)];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "dae") {
                out.push(relative(&p));
            }
        }
    }
    out.sort();
    out
}

/// The valid models: everything under `models/` except `models/err/` and
/// the DAE test set `models/testset/`, which `tests/testset.rs` checks
/// against the test set's reference solutions (its circuits and
/// mechanisms are too large for the per-model snapshots of every
/// formulation).
pub fn valid_models() -> Vec<String> {
    models_under("")
        .into_iter()
        .filter(|p| !p.starts_with("models/err/") && !p.starts_with("models/testset/"))
        .collect()
}

fn relative(p: &Path) -> String {
    p.strip_prefix(root())
        .unwrap_or(p)
        .to_string_lossy()
        .replace('\\', "/")
}

/// Largest output pinned whole: a longer one (the 800-unknown food web's
/// flat model and formulations, 0.2–1.5 MB) is pinned by its first
/// [`CLIP_LINES`] lines and its length, so a snapshot stays readable in a
/// review while any change in size still shows.
pub const CLIP_BYTES: usize = 200_000;

/// Lines kept of an output above [`CLIP_BYTES`].
pub const CLIP_LINES: usize = 400;

/// `text` whole, or its first [`CLIP_LINES`] lines and a last line with
/// the number of lines and bytes left out, when it is longer than
/// [`CLIP_BYTES`].
pub fn clip_long(text: &str) -> String {
    if text.len() <= CLIP_BYTES {
        return text.to_string();
    }
    let lines: Vec<&str> = text.lines().collect();
    let kept = lines[..CLIP_LINES.min(lines.len())].join("\n");
    format!(
        "{kept}\n… clipped by the snapshot test: {} more lines, {} bytes in all\n",
        lines.len().saturating_sub(CLIP_LINES),
        text.len()
    )
}

/// A snapshot name from a model path: `models/baese/akzo_nobel.dae` →
/// `baese__akzo_nobel`.
pub fn snapshot_name(prefix: &str, model: &str) -> String {
    let stem = model
        .trim_start_matches("models/")
        .trim_end_matches(".dae")
        .replace('/', "__");
    format!("{prefix}__{stem}")
}

/// The `// expect:` line of a model, parsed into `key=value` pairs.
pub fn expectations(model: &str) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(root().join(model)).unwrap_or_default();
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.trim().strip_prefix("// expect:") else {
            continue;
        };
        // Values may contain commas inside brackets: split on spaces outside [].
        let mut depth = 0;
        let mut cur = String::new();
        let mut items = Vec::new();
        for ch in rest.chars() {
            match ch {
                '[' => depth += 1,
                ']' => depth -= 1,
                _ => {}
            }
            if ch.is_whitespace() && depth == 0 {
                if !cur.is_empty() {
                    items.push(std::mem::take(&mut cur));
                }
            } else {
                cur.push(ch);
            }
        }
        if !cur.is_empty() {
            items.push(cur);
        }
        for it in items {
            if let Some((k, v)) = it.split_once('=') {
                out.push((k.to_string(), v.to_string()));
            }
        }
    }
    out
}
