//! The `daec` command-line driver.
//!
//! This is the only crate that does file IO, reads the environment or
//! prints (architecture invariant 2). [`run`] takes the arguments and the
//! output streams, so tests drive the whole tool in-process.
//!
//! Exit codes for every subcommand: 0 success, 1 errors in the model
//! (diagnostics printed), 2 usage errors, 3 numerical failure.

mod commands;
mod embed;
mod files;
mod json;
mod memory;
mod modelica;
pub use embed::{
    DiagnosticRecord, Embedded, FailureRecord, ModelText, SharedAnalysis, SimulationRecord,
    run_embedded, run_embedded_shared,
};
// `native` stays a namespace: benches name `native::RustcCompiler`.
pub mod native;

use clap::{Args, Parser, Subcommand, ValueEnum};
use daec_diag::{Diagnostic, SourceMap};
use daec_model::{Dae, LowerOptions};
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Exit code: success.
pub const EXIT_OK: i32 = 0;
/// Exit code: the model has errors (diagnostics were printed).
pub const EXIT_MODEL: i32 = 1;
/// Exit code: usage error (bad arguments, unreadable input, unwritable output).
pub const EXIT_USAGE: i32 = 2;
/// Exit code: numerical failure.
pub const EXIT_NUMERIC: i32 = 3;

/// The output streams of one run.
pub struct Io<'a> {
    /// Standard output.
    pub stdout: &'a mut (dyn Write + Send),
    /// Standard error.
    pub stderr: &'a mut (dyn Write + Send),
    /// Whether stderr is a terminal (colours diagnostics).
    pub stderr_is_terminal: bool,
}

#[derive(Parser, Debug)]
#[command(
    name = "daec",
    version,
    about = "daec — a compiler and simulator for differential-algebraic equations",
    long_about = None
)]
struct Cli {
    /// When to colour diagnostics.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, global = true)]
    color: ColorChoice,
    #[command(subcommand)]
    command: Command,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
}

#[derive(Args, Debug, Clone)]
struct ModelArgs {
    /// The model file: a flat `.dae` model, or Modelica classes (`.mo`).
    model: PathBuf,
    /// The class of a `.mo` file to use (a dotted name; by default the
    /// only model of the file).
    #[arg(long = "model", value_name = "NAME")]
    class: Option<String>,
    /// A directory of Modelica packages (`Name.mo` or `Name/package.mo`)
    /// for the classes a `.mo` model uses (repeatable; the directories of
    /// the `MODELICAPATH` environment variable come after, then the
    /// `Modelica` library shipped with daec, which a `Modelica` of these
    /// directories replaces).
    #[arg(long = "lib", value_name = "DIR")]
    libs: Vec<PathBuf>,
    /// Override a parameter: `-p NAME=VALUE` (repeatable), e.g. `-p N=100000`.
    #[arg(short = 'p', long = "param", value_name = "NAME=VALUE", value_parser = parse_override)]
    params: Vec<Override>,
}

/// One `-p NAME=VALUE`.
#[derive(Clone, Debug)]
struct Override {
    name: String,
    /// The value (`true`/`false` as 1/0).
    value: f64,
    /// The value as written.
    text: String,
}

impl Override {
    /// Written as `true` or `false`.
    fn boolean(&self) -> bool {
        matches!(self.text.as_str(), "true" | "false")
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the flat scalar model (valid `.dae` text, or JSON).
    Flatten {
        #[command(flatten)]
        model: ModelArgs,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Write to this file instead of standard output.
        #[arg(short = 'o', long)]
        output: Option<PathBuf>,
    },
    /// Structural analysis: Σ-matrix, HVT, offsets, index, DOF, Σ-Jacobian,
    /// block triangular forms, Pantelides, hidden constraints by level.
    Analyze {
        #[command(flatten)]
        model: ModelArgs,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
        /// Write to this file instead of standard output.
        #[arg(short = 'o', long)]
        output: Option<PathBuf>,
    },
    /// Simulate: regularize (HiC) and integrate with Radau IIA; the
    /// solution as CSV, an optional SVG plot, statistics.
    Simulate(Box<commands::SimulateArgs>),
    /// Regularize: a formulation of the model without hidden constraints
    /// (ste, ada, hic, dd, ggl, di1) as text, JSON, `.dae` or Rust.
    Regularize(commands::RegularizeArgs),
    /// Export an FMI 2.0 Co-Simulation FMU: the model, daec's integrator
    /// (the chosen formulation, events, state selection) as its binary,
    /// `modelDescription.xml`.
    Fmu(Box<commands::FmuArgs>),
}

fn parse_override(s: &str) -> Result<Override, String> {
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}` is not NAME=VALUE"))?;
    let name = name.trim();
    if name.is_empty() {
        return Err(format!("`{s}` has no parameter name"));
    }
    let value = value.trim();
    let v = match value {
        "true" => 1.0,
        "false" => 0.0,
        _ => value
            .parse::<f64>()
            .map_err(|_| format!("`{value}` is not a number (in `-p {s}`)"))?,
    };
    // (as a parameter's binding in the model must be)
    if !v.is_finite() {
        return Err(format!(
            "`{value}` is not a finite number (in `-p {s}`): parameter values must be finite"
        ));
    }
    Ok(Override {
        name: name.to_string(),
        value: v,
        text: value.to_string(),
    })
}

/// Checks that each `-p` gives a Boolean parameter `true` or `false` and
/// any other parameter a number (`-p N=true` for an Integer `N` is a
/// usage error, not 1); the parameters the model does not have are
/// reported by lowering.
fn check_override_types(
    model: &daec_syntax::ast::Model,
    params: &[Override],
) -> Result<(), String> {
    use daec_syntax::ast::Variability;
    for o in params {
        let base = o.name.split('[').next().unwrap_or(&o.name);
        let Some(d) = model.declarations.iter().find(|d| {
            d.name.name == base
                && matches!(
                    d.variability,
                    Variability::Parameter | Variability::Constant
                )
        }) else {
            continue;
        };
        let is_bool = d.type_name.parts == ["Boolean"];
        if o.boolean() != is_bool {
            let what = if is_bool {
                "is a Boolean parameter; give it `true` or `false`"
            } else {
                "is not a Boolean parameter; give it a number"
            };
            return Err(format!("`-p {}={}`: `{base}` {what}", o.name, o.text));
        }
    }
    Ok(())
}

/// Stack size of the thread `run` works on: lowering recurses over the
/// AST, so deeply nested (generated) models need a large stack.
const STACK_SIZE: usize = 1 << 30;

/// Runs `daec` with `args` (including the program name) and returns the
/// exit code. The work runs on a thread with a 1 GiB stack (reserved, not
/// committed), so that no input can overflow the stack.
pub fn run(args: Vec<OsString>, io: &mut Io<'_>) -> i32 {
    run_with(args, io, None)
}

/// [`run`], gathering into `capture` what [`run_embedded`] hands
/// back.
fn run_with(args: Vec<OsString>, io: &mut Io<'_>, capture: Option<&mut embed::Capture>) -> i32 {
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("daec".into())
            .stack_size(STACK_SIZE)
            .spawn_scoped(scope, || run_here(args, io, capture));
        match worker.map(|h| h.join()) {
            Ok(Ok(code)) => code,
            Ok(Err(_)) => 101,
            Err(e) => {
                // `io` is lent to the closure that could not start.
                eprintln!("error: cannot start the worker thread: {e}");
                EXIT_USAGE
            }
        }
    })
}

fn run_here(args: Vec<OsString>, io: &mut Io<'_>, capture: Option<&mut embed::Capture>) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            let text = e.render().to_string();
            return match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                    let _ = write!(io.stdout, "{text}");
                    EXIT_OK
                }
                _ => {
                    let _ = write!(io.stderr, "{text}");
                    EXIT_USAGE
                }
            };
        }
    };
    let color = match cli.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => io.stderr_is_terminal,
    };
    let bytes_per_unknown = match &cli.command {
        Command::Flatten { .. } => memory::FLATTEN,
        Command::Analyze { .. } => memory::ANALYZE,
        Command::Simulate(_) => memory::SIMULATE,
        Command::Regularize(_) => memory::REGULARIZE,
        Command::Fmu(_) => memory::SIMULATE,
    };
    let mut ctx = Ctx {
        io,
        color,
        bytes_per_unknown,
        capture,
    };
    let result = match cli.command {
        Command::Flatten {
            model,
            format,
            output,
        } => commands::flatten(&mut ctx, &model, format, output.as_deref()),
        Command::Analyze {
            model,
            format,
            output,
        } => commands::analyze_command(&mut ctx, &model, format, output.as_deref()),
        Command::Simulate(args) => commands::simulate(&mut ctx, &args),
        Command::Regularize(args) => commands::regularize_command(&mut ctx, &args),
        Command::Fmu(args) => commands::fmu(&mut ctx, &args),
    };
    match result {
        Ok(()) => EXIT_OK,
        Err(code) => code,
    }
}

/// What a command needs from the driver.
pub(crate) struct Ctx<'a, 'b> {
    pub(crate) io: &'a mut Io<'b>,
    pub(crate) color: bool,
    /// What a scalar unknown costs through the command (its memory budget).
    pub(crate) bytes_per_unknown: u64,
    /// Where an embedding front end gathers the outcome
    /// ([`run_embedded`]).
    pub(crate) capture: Option<&'a mut embed::Capture>,
}

impl Ctx<'_, '_> {
    /// Prints a usage error and returns the usage exit code.
    pub(crate) fn usage_error(&mut self, msg: &str) -> i32 {
        let _ = writeln!(self.io.stderr, "error: {msg}");
        EXIT_USAGE
    }

    /// Prints diagnostics.
    pub(crate) fn diagnostics(&mut self, map: &SourceMap, diags: &[Diagnostic]) {
        if let Some(capture) = self.capture.as_deref_mut() {
            capture.record(map, diags);
        }
        if !diags.is_empty() {
            let _ = write!(self.io.stderr, "{}", map.render(diags, self.color));
        }
    }
}

/// A model read, parsed and lowered.
pub(crate) struct Loaded {
    pub(crate) map: SourceMap,
    pub(crate) dae: Dae,
}

/// Reads, parses and lowers a model; prints diagnostics; `Err(exit code)`
/// when the model has errors or cannot be read.
pub(crate) fn load(ctx: &mut Ctx<'_, '_>, args: &ModelArgs) -> Result<Loaded, i32> {
    let source = read_model(ctx, &args.model)?;
    let mut map = SourceMap::new();
    let file = map.add(args.model.display().to_string(), source);
    let (model, mut diags) = if args.model.extension().is_some_and(|e| e == "mo") {
        let (model, diags) = modelica::instantiate(ctx, args, &mut map, file)?;
        (Some(model), diags)
    } else {
        let parsed = daec_syntax::parse(file, map.source(file));
        (parsed.model, parsed.diagnostics)
    };
    let Some(model) = model else {
        ctx.diagnostics(&map, &diags);
        return Err(EXIT_MODEL);
    };
    check_override_types(&model, &args.params).map_err(|e| ctx.usage_error(&e))?;
    if diags.iter().any(Diagnostic::is_error) {
        // Report lowering errors too where the parse recovered, so that a
        // user sees every mistake at once — but not the ones that are only
        // consequences of the syntax errors: equation counts (a skipped
        // equation is missing) and anything on a line with a syntax error.
        let src = map.source(file);
        let line_of = |off: u32| src[..(off as usize).min(src.len())].matches('\n').count();
        let bad_lines: Vec<usize> = diags
            .iter()
            .filter_map(|d| d.primary_span())
            .map(|s| line_of(s.start))
            .collect();
        let (_, more) = daec_model::lower(&model, &lower_options(ctx, args));
        diags.extend(more.into_iter().filter(|d| {
            d.code != daec_diag::codes::COUNT_MISMATCH
                && d.primary_span()
                    .is_none_or(|s| !bad_lines.contains(&line_of(s.start)))
        }));
        ctx.diagnostics(&map, &diags);
        return Err(EXIT_MODEL);
    }
    let (dae, more) = daec_model::lower(&model, &lower_options(ctx, args));
    diags.extend(more);
    ctx.diagnostics(&map, &diags);
    match dae {
        Some(dae) => Ok(Loaded { map, dae }),
        None => Err(EXIT_MODEL),
    }
}

fn lower_options(ctx: &Ctx<'_, '_>, args: &ModelArgs) -> LowerOptions {
    LowerOptions {
        overrides: args
            .params
            .iter()
            .map(|o| (o.name.clone(), o.value))
            .collect(),
        memory: memory::budget(ctx.bytes_per_unknown),
        ..LowerOptions::default()
    }
}

fn read_model(ctx: &mut Ctx<'_, '_>, path: &Path) -> Result<String, i32> {
    if let Some(text) = ctx.capture.as_ref().and_then(|c| c.source.as_ref())
        && Path::new(&text.name) == path
    {
        return Ok(text.text.clone());
    }
    match std::fs::read(path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(s) => Ok(s),
            Err(e) => {
                // Keep going with the valid prefix replaced: the lexer will
                // point at the replacement characters.
                let _ = writeln!(
                    ctx.io.stderr,
                    "warning: {} is not valid UTF-8 (first bad byte at offset {}); invalid bytes are read as U+FFFD",
                    path.display(),
                    e.utf8_error().valid_up_to()
                );
                Ok(String::from_utf8_lossy(e.as_bytes()).into_owned())
            }
        },
        Err(e) => Err(ctx.usage_error(&format!("cannot read `{}`: {e}", path.display()))),
    }
}

/// Writes command output as `write` produces it (through a buffer) to
/// `-o FILE` (see [`files`]) or stdout: large outputs are never held in
/// memory.
pub(crate) fn emit_with(
    ctx: &mut Ctx<'_, '_>,
    output: Option<&Path>,
    write: &mut dyn FnMut(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), i32> {
    match output {
        Some(path) => files::write_output_with(ctx, path, write),
        None => {
            let mut w = std::io::BufWriter::new(&mut *ctx.io.stdout);
            let _ = write(&mut w).and_then(|()| w.flush());
            Ok(())
        }
    }
}

/// Text command output written to `-o FILE` or stdout as it is produced
/// (`write` prints to a `fmt::Write`), not held whole.
pub(crate) fn emit_text(
    ctx: &mut Ctx<'_, '_>,
    output: Option<&Path>,
    write: &mut dyn FnMut(&mut dyn std::fmt::Write),
) -> Result<(), i32> {
    emit_with(ctx, output, &mut |w| {
        let mut out = FmtIo { w, error: None };
        write(&mut out);
        out.error.map_or(Ok(()), Err)
    })
}

/// A `fmt::Write` over an `io::Write` that keeps the first error and fails
/// every write after it.
struct FmtIo<'a> {
    w: &'a mut dyn Write,
    error: Option<std::io::Error>,
}

impl std::fmt::Write for FmtIo<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        if self.error.is_some() {
            return Err(std::fmt::Error);
        }
        self.w.write_all(s.as_bytes()).map_err(|e| {
            self.error = Some(e);
            std::fmt::Error
        })
    }
}

/// Writes command output to `-o FILE` (see [`files`]) or stdout.
pub(crate) fn emit(ctx: &mut Ctx<'_, '_>, output: Option<&Path>, text: &str) -> Result<(), i32> {
    emit_with(ctx, output, &mut |w| w.write_all(text.as_bytes()))
}

/// The declaration of the function of `dae` named `name`, or of the one a
/// derivative function (`name$der…`) was made from.
fn function_span(dae: &Dae, name: &str) -> Option<daec_diag::Span> {
    let base = name.split('$').next().unwrap_or(name);
    dae.functions
        .iter()
        .zip(&dae.spans.functions)
        .find(|(n, _)| *n == base)
        .map(|(_, &span)| span)
}

/// Refuses `dae` for an output (`what`, such as `--native`) that cannot
/// express a call of a function at run time: a diagnostic on the
/// function, and the usage exit code.
pub(crate) fn refuse_calls(
    ctx: &mut Ctx<'_, '_>,
    map: &SourceMap,
    dae: &Dae,
    what: &str,
) -> Result<(), i32> {
    if !dae.pool.has_calls() {
        return Ok(());
    }
    let name = dae.functions.first().map_or("", String::as_str);
    let mut d = Diagnostic::error(
        "",
        format!("{what} cannot express the call of `{name}`, a function evaluated at run time"),
    )
    .with_note(
        "daec evaluates a function it cannot inline (or one with `annotation(Inline = false)`) \
         by an interpreter of its algorithm, which only the tapes of `daec simulate` run",
    )
    .with_help("simulate without this option, or write the function so that daec can inline it");
    if let Some(span) = function_span(dae, name) {
        d = d.with_primary(span, "called at run time");
    }
    ctx.diagnostics(map, &[d]);
    Err(EXIT_USAGE)
}

/// Reports a function of `dae` whose derivative was needed beyond the
/// order daec makes ([`daec_sim::check_derivative_order`]): a located
/// error and the model exit code.
pub(crate) fn check_derivative_limit(
    ctx: &mut Ctx<'_, '_>,
    map: &SourceMap,
    dae: &Dae,
) -> Result<(), i32> {
    let Err(e) = daec_sim::check_derivative_order(dae) else {
        return Ok(());
    };
    let d = Diagnostic {
        labels: e.labels().to_vec(),
        ..Diagnostic::error(daec_diag::codes::FUNCTION, e.to_string())
    };
    ctx.diagnostics(map, &[d]);
    Err(EXIT_MODEL)
}
