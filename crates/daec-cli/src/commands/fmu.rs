//! `daec fmu`: the model as an FMI 2.0 FMU (Co-Simulation, Model
//! Exchange or both) — the flat model
//! text and the export options as resources, `modelDescription.xml`, and
//! daec's FMU runtime library (`daec-fmu`, found beside the `daec`
//! executable, or by `--runtime` / `$DAEC_FMU_RUNTIME`) as the binary.

use crate::files::{check_outputs, write_output};
use crate::{Ctx, EXIT_MODEL, ModelArgs, load};
use clap::Args;
use daec_fmu::{FmuIdentity, FmuKind, FmuLayout, FmuOptions};
use daec_model::Dae;
use daec_regularize::{AnalyzeOptions, Form, RegularizeOptions, analyze, regularize};
use std::path::{Path, PathBuf};

/// The file name of the runtime library cargo builds.
const RUNTIME_NAME: &str = "libdaec_fmu.so";

/// Options of `daec fmu`.
#[derive(Args, Debug, Clone)]
pub(crate) struct FmuArgs {
    #[command(flatten)]
    model: ModelArgs,
    /// Write the FMU here (default: `<model name>.fmu` in the current
    /// directory).
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// The FMI version: 2 (FMI 3.0 is not written yet).
    #[arg(long = "fmi-version", value_name = "2|3", default_value = "2")]
    fmi_version: String,
    /// The kind of FMU: cs (Co-Simulation, daec's integrator inside), me
    /// (Model Exchange, the importer integrates the states; models of
    /// index ≤ 1 only) or both.
    #[arg(long, value_name = "cs|me|both", default_value = "cs")]
    kind: String,
    /// The formulation `fmi2DoStep` integrates (as `daec simulate
    /// --form`; default hic, index3 for --method radau5-projected); with
    /// --kind me, a square form (di1, dd, ste, ggl) is the model the FMU
    /// carries.
    #[arg(long)]
    form: Option<String>,
    /// The integrator (as `daec simulate --method`; the second-order
    /// methods are refused).
    #[arg(long, default_value = "radau5")]
    method: String,
    /// Explicit tableau of --method herk.
    #[arg(long, value_name = "T")]
    tableau: Option<String>,
    /// The FMU runtime library (`libdaec_fmu.so`; default:
    /// $DAEC_FMU_RUNTIME, else beside the `daec` executable).
    #[arg(long, value_name = "PATH")]
    runtime: Option<PathBuf>,
}

/// Where the runtime library is looked for, in order.
fn runtime_candidates(args: &FmuArgs) -> Vec<PathBuf> {
    if let Some(p) = &args.runtime {
        return vec![p.clone()];
    }
    if let Some(p) = std::env::var_os("DAEC_FMU_RUNTIME") {
        return vec![PathBuf::from(p)];
    }
    let mut out = Vec::new();
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
    {
        out.push(dir.join(RUNTIME_NAME));
        // (a test binary lives in `target/<profile>/deps/`)
        if let Some(up) = dir.parent() {
            out.push(up.join(RUNTIME_NAME));
        }
    }
    out
}

/// Reads the runtime library: the first candidate that is a file.
fn read_runtime(ctx: &mut Ctx<'_, '_>, args: &FmuArgs) -> Result<Vec<u8>, i32> {
    let candidates = runtime_candidates(args);
    for p in &candidates {
        if p.is_file() {
            return std::fs::read(p).map_err(|e| {
                ctx.usage_error(&format!(
                    "cannot read the FMU runtime `{}`: {e}",
                    p.display()
                ))
            });
        }
    }
    let looked: Vec<String> = candidates
        .iter()
        .map(|p| format!("`{}`", p.display()))
        .collect();
    Err(ctx.usage_error(&format!(
        "the FMU runtime library ({RUNTIME_NAME}) was not found; looked at {}; build it with `cargo build --release -p daec-fmu` and give it with --runtime PATH or $DAEC_FMU_RUNTIME",
        if looked.is_empty() {
            "nothing (the executable's directory is unknown)".to_string()
        } else {
            looked.join(", ")
        }
    )))
}

/// Refuses an output path that exists and is not a regular file (a
/// directory, a device, a FIFO): an FMU is an archive, replaced
/// atomically.
fn check_regular(ctx: &mut Ctx<'_, '_>, path: &Path) -> Result<(), i32> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => Err(ctx.usage_error(&format!(
            "-o: `{}` is not a regular file; an FMU is written to a file of its own",
            path.display()
        ))),
        _ => Ok(()),
    }
}

/// `daec fmu MODEL [options]`.
pub(crate) fn fmu(ctx: &mut Ctx<'_, '_>, args: &FmuArgs) -> Result<(), i32> {
    match args.fmi_version.trim() {
        "2" | "2.0" => {}
        "3" | "3.0" => {
            return Err(ctx.usage_error(
                "--fmi-version 3: daec writes FMI 2.0 FMUs only; FMI 3.0 is not implemented",
            ));
        }
        v => {
            return Err(ctx.usage_error(&format!("unknown `--fmi-version {v}`: the version is 2")));
        }
    }
    let Some(kind) = FmuKind::parse(args.kind.trim()) else {
        return Err(ctx.usage_error(&format!(
            "unknown `--kind {}`: the kinds are cs (Co-Simulation), me (Model Exchange) and both",
            args.kind.trim()
        )));
    };
    let method = daec_sim::Method::from_names(&args.method, args.tableau.as_deref())
        .map_err(|e| ctx.usage_error(&format!("--method: {e}")))?;
    let form = match &args.form {
        Some(f) => f.trim().to_ascii_lowercase(),
        None => daec_sim::default_form(method).name().to_string(),
    };
    if let Some(out) = &args.output {
        check_regular(ctx, out)?;
    }
    check_outputs(ctx, &args.model.model, &[("-o", args.output.as_deref())])?;
    let loaded = load(ctx, &args.model)?;
    crate::refuse_calls(ctx, &loaded.map, &loaded.dae, "an FMU")?;
    // Model Exchange of a square `--form`: the FMU carries that
    // formulation as its model (integrated as written), whose index the
    // layout below checks.
    let (text, form) = match args.form.as_deref().and_then(|f| Form::parse(f.trim())) {
        Some(f) if kind == FmuKind::Me && f.is_square() => (
            formulated_text(ctx, loaded.dae, f)?,
            daec_sim::default_form(method).name().to_string(),
        ),
        _ => (daec_model::to_dae_text(&loaded.dae), form),
    };
    let mut options = FmuOptions {
        guid: String::new(),
        form,
        method: args.method.trim().to_string(),
        tableau: args.tableau.clone(),
        kind,
    };
    options.guid = daec_fmu::guid_of_kind(
        &text,
        &options.form,
        &options.method,
        args.tableau.as_deref(),
        kind,
    );
    let (form, method) = options.resolve().map_err(|e| ctx.usage_error(&e))?;
    // The model the FMU reads back, and the check that daec simulates it.
    let dae = daec_fmu::lower_text(&text, Vec::new()).map_err(|e| {
        let _ = write!(ctx.io.stderr, "{e}");
        EXIT_MODEL
    })?;
    let mut check = dae.clone();
    if let Err(e) = daec_fmu::prepare(&mut check, form, method) {
        let _ = writeln!(ctx.io.stderr, "error: {e}");
        return Err(EXIT_MODEL);
    }
    // Model Exchange: the model must be an ODE in fixed states.
    let layout = FmuLayout::new(&dae, kind).map_err(|e| {
        let _ = writeln!(
            ctx.io.stderr,
            "error: --kind {}: the model `{}` cannot be exported for Model Exchange: {e}",
            args.kind.trim(),
            dae.name
        );
        EXIT_MODEL
    })?;
    let identity = FmuIdentity {
        model_identifier: daec_fmu::model_identifier(&dae.name),
        guid: options.guid.clone(),
        tool: format!("daec {}", env!("CARGO_PKG_VERSION")),
    };
    let xml = daec_fmu::model_description_for(&dae, &identity, &layout);
    let runtime = read_runtime(ctx, args)?;
    let archive =
        daec_fmu::fmu_archive(&xml, &identity.model_identifier, &runtime, &text, &options)
            .map_err(|e| ctx.usage_error(&format!("cannot write the FMU: {e}")))?;
    let path = args
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("{}.fmu", identity.model_identifier)));
    if args.output.is_none() {
        check_regular(ctx, &path)?;
    }
    write_output(ctx, &path, &archive)?;
    let vars = &layout.vars;
    let params = vars
        .iter()
        .filter(|v| matches!(v.kind, daec_fmu::VarKind::Parameter(_)))
        .count();
    let _ = writeln!(
        ctx.io.stderr,
        "wrote {}: FMI 2.0 {}, model `{}`, {} variables ({} outputs, {params} parameters{}), {} formulation, --method {}",
        path.display(),
        match kind {
            FmuKind::Cs => "Co-Simulation",
            FmuKind::Me => "Model Exchange",
            FmuKind::Both => "Model Exchange and Co-Simulation",
        },
        dae.name,
        vars.len(),
        dae.unknowns.len(),
        if kind.model_exchange() {
            let states = vars.iter().filter(|v| v.derivative_of.is_some()).count();
            format!(
                ", {states} states, {} event indicators",
                layout.n_indicators
            )
        } else {
            String::new()
        },
        form.name().to_ascii_uppercase(),
        method
    );
    Ok(())
}

/// The square formulation `form` of `dae` as a flat model (what `daec
/// regularize --form F --emit modelica` prints): DI1 gives an index-1
/// model from a model of any index, DD one with the dummy derivatives
/// selected at the start (a static selection, valid while its pivots stay
/// regular), so a Model Exchange FMU can carry them.
fn formulated_text(ctx: &mut Ctx<'_, '_>, mut dae: Dae, form: Form) -> Result<String, i32> {
    daec_sim::reduce_to_first_order(&mut dae);
    let analysis = analyze(&mut dae, &AnalyzeOptions::default());
    match regularize(&mut dae, &analysis, form, &RegularizeOptions::default()) {
        Ok(f) => Ok(daec_model::to_dae_text(&f.to_dae(&dae))),
        Err(e) => {
            let _ = writeln!(ctx.io.stderr, "error: --form {}: {e}", form.name());
            Err(EXIT_MODEL)
        }
    }
}
