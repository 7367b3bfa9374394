//! `daec simulate`: parse, analyze, regularize (HiC by default) and integrate; the
//! solution as CSV, an optional SVG plot and statistics.

use crate::files::write_output;
use crate::native::RustcCompiler;
use crate::{Ctx, EXIT_MODEL, EXIT_NUMERIC, ModelArgs, emit, load};
use clap::Args;
use daec_diag::{Diagnostic, SourceMap};
use daec_regularize::Form;
use daec_regularize::{AnalyzeOptions, Outcome, analyze};
use daec_sim::{SimError, SimOptions, resolve_options, to_csv_threads, to_svg};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// Options of `daec simulate`.
#[derive(Args, Debug, Clone)]
pub(crate) struct SimulateArgs {
    #[command(flatten)]
    model: ModelArgs,
    /// Formulation to integrate: hic (the default), ada, ste (with dynamic
    /// state selection), dd, ggl, di1, or index3 (the DAE as written, the
    /// default of --method radau5-projected).
    #[arg(long)]
    form: Option<String>,
    /// Integration method: radau5 (overdetermined Radau IIA; the declared
    /// invariants are extra constraints of hic and ada),
    /// radau5-projected (Radau IIA on the index-3 formulation, projected
    /// onto the position and velocity constraints after each step),
    /// projection (NDSolve's projection method: Radau IIA on hic or di1,
    /// each step projected onto all constraints, hidden ones and the
    /// declared invariants), radau-2nd (Radau IIA directly on a model with der(der(x)),
    /// Wunderlich 2005), bdf-2nd (the modified variable-step
    /// variable-order BDF method of Wunderlich 2005 §2.1 on such a model,
    /// orders 1–5, error control), gauss-2nd (2-stage Gauss collocation on
    /// it, Example 2.4, order 4, step doubling), glm-2nd (the order-2
    /// general linear method in Nordsieck form of Example 2.11, step
    /// doubling) or herk (half-explicit Runge–Kutta, Bäse 2017).
    #[arg(long, default_value = "radau5")]
    method: String,
    /// Explicit tableau of --method herk: euler, heun, kutta3, rk4 or hem4
    /// (default hem4).
    #[arg(long, value_name = "T")]
    tableau: Option<String>,
    /// End time (default: the experiment's StopTime).
    #[arg(long = "t-end", value_name = "T", allow_negative_numbers = true)]
    t_end: Option<f64>,
    /// Relative tolerance (default: the experiment's Tolerance, else 1e-6).
    #[arg(long, value_name = "R", allow_negative_numbers = true)]
    rtol: Option<f64>,
    /// Absolute tolerance (default: the relative tolerance).
    #[arg(long, value_name = "A", allow_negative_numbers = true)]
    atol: Option<f64>,
    /// Output interval (default: the experiment's Interval, else 1/500 of the run).
    #[arg(long, value_name = "DT", allow_negative_numbers = true)]
    interval: Option<f64>,
    /// Output times: uniform (every --interval, the default), steps (every
    /// accepted step, and before and after each event), or log (--points
    /// times spaced logarithmically in t − t0 from the end of the first
    /// step to the end time).
    #[arg(long, value_name = "KIND", default_value = "uniform")]
    grid: String,
    /// Number of points of --grid log (default 500).
    #[arg(long, value_name = "N")]
    points: Option<usize>,
    /// Largest step of the integrator (default: no bound but the run);
    /// bounds the steps for `when` conditions that change faster than the
    /// solution.
    #[arg(long = "max-step", value_name = "H", allow_negative_numbers = true)]
    max_step: Option<f64>,
    /// Events a run may have before it stops with an error (default
    /// 100000).
    #[arg(long = "max-events", value_name = "N")]
    max_events: Option<usize>,
    /// Step attempts a run may make before it stops with an error:
    /// accepted and rejected steps and Newton failures, over the whole run
    /// (default 1000000).
    #[arg(long = "max-steps", value_name = "N")]
    max_steps: Option<usize>,
    /// What the local error test weighs: all (every component, unscaled),
    /// index (RADAU5: the error of an index-k unknown scaled by h^(k−1))
    /// or differential (the algebraic unknowns left out, as IDA's
    /// suppressalg). Default: for radau5 on the regularized forms index
    /// on a constrained mechanical system (kinematic rows der(q) = v and
    /// unknowns of index above 1), else all; index on ggl and index3
    /// (radau5-projected), all for herk,
    /// differential for the second-order methods; index does not apply to
    /// herk and the second-order methods, all not to bdf-2nd. The summary
    /// and --stats-json name the unknowns left out or scaled.
    #[arg(long = "error-control", value_name = "MODE")]
    error_control: Option<String>,
    /// The first step after an event: cold (the starting step's rule,
    /// growing by at most 8 per step) or reached (after an `if` switching
    /// branches, the step the run had reached, kept if it converges, passes
    /// the error test and stays near the linear prediction; fewer steps
    /// where switches are rare, but less accurate at the same tolerance
    /// than cold). Default cold.
    #[arg(long, value_name = "KIND", default_value = "cold")]
    restart: String,
    /// Threads for a large model (default: $DAEC_THREADS, else the cores
    /// available less the one-minute load average, at least 1): its residual and Jacobian tapes of at least 16384
    /// outputs are evaluated in two halves at once, the real and the
    /// complex iteration matrix of at least 8192 unknowns factorised and
    /// solved at once; smaller models use one thread. The results are the
    /// same for every value.
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Write the CSV here instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Write an SVG plot of the chosen variables (--vars, default all).
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Variables to plot, comma-separated flat names or patterns (`*` any
    /// characters, `?` one: `x*`, `C1.*`, `x[*]`); at most 96, in panels
    /// of 12.
    #[arg(long, value_delimiter = ',', value_name = "x,y")]
    vars: Vec<String>,
    /// Write the statistics as JSON to this file.
    #[arg(long = "stats-json", value_name = "FILE")]
    stats_json: Option<PathBuf>,
    /// Report the initialisation (which start values moved and by how much)
    /// and the output equations evaluated after the steps.
    #[arg(long)]
    verbose: bool,
    /// What a variable outside its min/max does: warn (the default; one
    /// warning per variable with the first time and value, and a count)
    /// or error (the run stops at the first violation, exit code 3, with
    /// the results so far). Checked at every accepted step and output
    /// point, beyond the tolerance atol + rtol·|bound|.
    #[arg(long, value_name = "warn|error", default_value = "warn")]
    bounds: String,
    /// Compile the residuals, mass matrix and Jacobians to machine code
    /// with rustc (cached) instead of evaluating tapes: slower to start
    /// (a build takes seconds; a cached one milliseconds), faster to
    /// integrate. Needs a Rust compiler (`rustc`, or RUSTC=path).
    #[arg(long)]
    native: bool,
    /// The Rust compiler of --native (default: $RUSTC, else `rustc` on the PATH).
    #[arg(long, value_name = "PATH", requires = "native")]
    rustc: Option<PathBuf>,
    /// The cache of --native builds (default: $DAEC_CACHE_DIR, else
    /// $XDG_CACHE_HOME/daec/native, else ~/.cache/daec/native): a
    /// directory of the user's that no one else can write.
    #[arg(long = "cache-dir", value_name = "DIR", requires = "native")]
    cache_dir: Option<PathBuf>,
}

/// Checks the numeric options (positive finite tolerances, interval and
/// step, at least one step, a finite end time) and resolves the threads:
/// `--threads`, else `$DAEC_THREADS`, else the idle cores.
/// A value that is not a positive integer is a usage error.
fn check_numbers(ctx: &mut Ctx<'_, '_>, args: &SimulateArgs) -> Result<Option<usize>, i32> {
    for (what, v) in [
        ("--rtol", args.rtol),
        ("--atol", args.atol),
        ("--interval", args.interval),
        ("--max-step", args.max_step),
    ] {
        if let Some(v) = v
            && !(v.is_finite() && v > 0.0)
        {
            return Err(ctx.usage_error(&format!(
                "{what} must be a positive finite number (got {v})"
            )));
        }
    }
    if args.max_steps == Some(0) {
        return Err(ctx.usage_error("--max-steps must be at least 1"));
    }
    if let Some(t) = args.t_end
        && !t.is_finite()
    {
        return Err(ctx.usage_error(&format!("--t-end must be finite (got {t})")));
    }
    if args.threads == Some(0) {
        return Err(ctx.usage_error("--threads must be at least 1"));
    }
    if args.threads.is_some() {
        return Ok(args.threads);
    }
    Ok(Some(
        threads_from_env()
            .map_err(|e| ctx.usage_error(&e))?
            .unwrap_or_else(idle_cores),
    ))
}

/// The cores available (`std::thread::available_parallelism`) less those
/// busy with other work — the one-minute load average of
/// `/proc/loadavg`, rounded; all of them where it cannot be read — and at
/// least 1. A second thread on a core that other processes keep busy
/// waits for its time slice at every parallel section: with the load
/// above the cores, `--threads 2` made a run of the pendulum chain
/// (N = 6400) three times slower instead of faster.
fn idle_cores() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |k| k.get());
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .filter(|l| l.is_finite() && *l >= 0.0)
        .unwrap_or(0.0);
    cores.saturating_sub(load.round() as usize).max(1)
}

/// The thread count the environment variable `DAEC_THREADS` sets: `None`
/// when it is not set, an error naming the value when it is not a
/// positive integer.
fn threads_from_env() -> Result<Option<usize>, String> {
    let bad = |v: &str| format!("DAEC_THREADS must be a positive integer (got `{v}`)");
    match std::env::var("DAEC_THREADS") {
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(v)) => Err(bad(&v.to_string_lossy())),
        Ok(v) => match v.trim().parse::<usize>() {
            Ok(k) if k > 0 => Ok(Some(k)),
            _ => Err(bad(&v)),
        },
    }
}

/// `daec simulate MODEL [options]`.
pub(crate) fn simulate(ctx: &mut Ctx<'_, '_>, args: &SimulateArgs) -> Result<(), i32> {
    let clock = Instant::now();
    let method = daec_sim::Method::from_names(&args.method, args.tableau.as_deref())
        .map_err(|e| ctx.usage_error(&format!("--method: {e}")))?;
    if args.native && method.is_second_order() {
        return Err(ctx.usage_error(&format!(
            "--native compiles the first-order formulations; --method {method} integrates the model as written and has no native code",
        )));
    }
    let bounds = daec_sim::BoundsCheck::parse(&args.bounds).ok_or_else(|| {
        ctx.usage_error(&format!(
            "unknown `--bounds {}`: use {}",
            args.bounds,
            daec_sim::BoundsCheck::NAMES.join(" or ")
        ))
    })?;
    let error_control = match &args.error_control {
        None => None,
        Some(name) => Some(daec_sim::ErrorControl::parse(name).ok_or_else(|| {
            ctx.usage_error(&format!(
                "unknown `--error-control {name}`: the modes are {}",
                daec_sim::ErrorControl::NAMES.join(", ")
            ))
        })?),
    };
    let restart = match args.restart.as_str() {
        "cold" => daec_sim::Restart::Cold,
        "reached" => daec_sim::Restart::Reached,
        other => {
            return Err(
                ctx.usage_error(&format!("unknown `--restart {other}`: use cold or reached"))
            );
        }
    };
    let form = match &args.form {
        None => daec_sim::default_form(method),
        Some(name) => match Form::parse(name) {
            Some(f) => f,
            None => {
                let forms: Vec<&str> = Form::ALL
                    .iter()
                    .chain(&[Form::Index3])
                    .map(|f| f.name())
                    .collect();
                return Err(ctx.usage_error(&format!(
                    "unknown form `--form {name}`: the forms are {}",
                    forms.join(", ")
                )));
            }
        },
    };
    let output = match (args.grid.trim().to_ascii_lowercase().as_str(), args.points) {
        ("uniform", None) => daec_sim::OutputTimes::Uniform,
        ("steps", None) => daec_sim::OutputTimes::Steps,
        ("log", points) => daec_sim::OutputTimes::Log {
            points: points.unwrap_or(500),
        },
        ("uniform" | "steps", Some(_)) => {
            return Err(ctx.usage_error("--points applies only to --grid log"));
        }
        (other, _) => {
            return Err(ctx.usage_error(&format!(
                "unknown output grid `--grid {other}`: the grids are uniform, steps, log"
            )));
        }
    };
    if let daec_sim::OutputTimes::Log { points } = output
        && points < 2
    {
        return Err(ctx.usage_error(&format!("--points must be at least 2 (got {points})")));
    }
    let threads = check_numbers(ctx, args)?;
    crate::files::check_outputs(
        ctx,
        &args.model.model,
        &[
            ("-o", args.output.as_deref()),
            ("--plot", args.plot.as_deref()),
            ("--stats-json", args.stats_json.as_deref()),
        ],
    )?;
    let loaded = load(ctx, &args.model)?;
    let map = loaded.map;
    let mut dae = loaded.dae;
    let columns = super::vars::plot_columns(ctx, &dae, &args.vars)?;
    let opts = SimOptions {
        t_end: args.t_end,
        rtol: args.rtol,
        atol: args.atol,
        interval: args.interval,
        form: Some(form),
        method,
        bounds,
        max_step: args.max_step,
        max_events: args.max_events,
        output,
        max_steps: args.max_steps,
        error_control,
        threads,
        restart,
    };
    let ro = resolve_options(&dae, &opts).map_err(|e| ctx.usage_error(&e.to_string()))?;
    // --method radau-2nd, bdf-2nd, gauss-2nd and glm-2nd integrate the
    // model as written.
    let mut original = method.is_second_order().then(|| dae.clone());
    let added = daec_sim::reduce_to_first_order(&mut dae);
    if args.verbose && !added.is_empty() {
        let names: Vec<String> = added
            .iter()
            .map(|&j| dae.unknowns[j].name().into_owned())
            .collect();
        let _ = writeln!(
            ctx.io.stderr,
            "first-order reduction: new unknowns {}",
            names.join(", ")
        );
    }
    // (--method radau-2nd starts the model as written from the first-order
    // reduction's consistent point: it keeps the output equations)
    let outputs = if original.is_none() {
        daec_sim::split_outputs(&mut dae, form)
    } else {
        daec_sim::Outputs::none(&dae)
    };
    let (analysis, shared) = analyze_model(ctx, &mut dae);
    let model_error = |ctx: &mut Ctx<'_, '_>, msg: &str| {
        if let Some(capture) = ctx.capture.as_deref_mut() {
            capture.record(&map, &[Diagnostic::error("", msg)]);
        }
        let _ = writeln!(ctx.io.stderr, "error: {msg}");
        EXIT_MODEL
    };
    if let Outcome::Singular(_) = &analysis.outcome {
        return Err(model_error(
            ctx,
            "the model is structurally singular; run `daec analyze` for the over- and under-determined parts",
        ));
    }
    if analysis.regular().is_some_and(|r| r.success.singular()) {
        return Err(model_error(
            ctx,
            "the Σ-Jacobian is singular at the consistent initial point; run `daec analyze` for details",
        ));
    }
    // An unknown fixed at a root is a fact of this branch the user should
    // know: the results hold on it only.
    for f in &analysis.roots.fixed {
        let _ = writeln!(
            ctx.io.stderr,
            "note: {}",
            super::analyze::fixed_root_text(&dae, f)
        );
    }
    let not_states = daec_sim::reinit_diagnostics(&dae, &analysis);
    if !not_states.is_empty() {
        ctx.diagnostics(&map, &not_states);
        return Err(EXIT_MODEL);
    }
    let mut prepared = match prepare_model(ctx, &mut dae, (&analysis, shared), form, method) {
        Ok(p) => p,
        Err(e) if matches!(e.kind(), SimError::Options { .. }) => {
            return Err(ctx.usage_error(&e.to_string()));
        }
        Err(e) => {
            located_error(ctx, &map, &dae.pool, &e, None);
            return Err(EXIT_MODEL);
        }
    };
    prepared.set_outputs(outputs);
    let mut native_log = None;
    let mut native_seconds = 0.0;
    if args.native {
        let compiler = Arc::new(RustcCompiler::new(
            args.rustc.clone(),
            args.cache_dir.clone(),
        ));
        let build = std::time::Instant::now();
        let compiled = prepared.compile_native(&dae, compiler.clone());
        native_seconds = build.elapsed().as_secs_f64();
        if args.verbose {
            print_native_log(ctx, &compiler);
        }
        compiled.map_err(|e| ctx.usage_error(&e.to_string()))?;
        native_log = Some(compiler);
    }
    if args.verbose {
        print_initialization(ctx, &prepared);
    }
    let compile = clock.elapsed().as_secs_f64();
    let run = match original.as_mut() {
        Some(original) => daec_sim::integrate_second_order(original, &dae, &added, &prepared, &ro),
        None => {
            // A progress bar on stderr when it is a terminal.
            let bar = ctx
                .io
                .stderr_is_terminal
                .then(|| progress_bar(ro.t0, ro.t_end));
            let span = (ro.t_end - ro.t0).max(f64::MIN_POSITIVE);
            let mut last = u64::MAX;
            let mut progress = |t: f64| {
                if let Some(bar) = &bar {
                    let pos = (((t - ro.t0) / span).clamp(0.0, 1.0) * 1000.0) as u64;
                    if pos != last {
                        last = pos;
                        bar.set_position(pos);
                        bar.set_message(format!("t = {t:.6e}"));
                    }
                }
            };
            let r = daec_sim::integrate_with_progress(&mut dae, &mut prepared, &ro, &mut progress);
            if let Some(bar) = bar {
                bar.finish_and_clear();
            }
            r
        }
    };
    let mut sim = match run {
        Ok(s) => s,
        Err(e) if matches!(e.kind(), SimError::Options { .. }) => {
            return Err(ctx.usage_error(&e.to_string()));
        }
        Err(e) => {
            located_error(ctx, &map, &dae.pool, &e, None);
            return Err(EXIT_MODEL);
        }
    };
    sim.stats.compile_seconds += compile;
    sim.stats.native_seconds += native_seconds;
    let last = sim.results.t.last().copied().unwrap_or(ro.t0);
    // (drawn before the results are handed on; the columns index the
    // results with their alias columns, so an alias is drawn under its own
    // name with its own sign)
    let plot = args
        .plot
        .as_ref()
        .map(|_| to_svg(&sim.results.with_aliases(&dae.aliases), &columns, &dae.name));
    match ctx.capture.as_deref_mut() {
        // (an embedding front end takes the values, not the CSV)
        Some(capture) => capture.take_simulation(&mut sim, &dae.aliases),
        // Results (also the partial ones of a failed run), written atomically.
        None => {
            let results = sim.results.with_aliases(&dae.aliases);
            emit(
                ctx,
                args.output.as_deref(),
                &to_csv_threads(&results, ro.threads),
            )?
        }
    }
    if let (Some(path), Some(plot)) = (&args.plot, plot) {
        let plot = plot.map_err(|e| ctx.usage_error(&format!("cannot draw the plot: {e}")))?;
        if plot.series < columns.len() {
            let _ = writeln!(
                ctx.io.stderr,
                "warning: --plot draws at most {} variables ({} panels of {}): the first {} of the {} chosen are drawn; choose others with --vars (names or patterns such as `x*`)",
                daec_sim::PANEL_SERIES * daec_sim::MAX_PANELS,
                daec_sim::MAX_PANELS,
                daec_sim::PANEL_SERIES,
                plot.series,
                columns.len()
            );
        }
        write_output(ctx, path, plot.svg.as_bytes())?;
    }
    if let Some(path) = &args.stats_json {
        write_output(ctx, path, sim.stats.to_json().as_bytes())?;
    }
    // (the builds of the variants a run switched to)
    if let Some(compiler) = native_log.filter(|_| args.verbose) {
        print_native_log(ctx, &compiler);
    }
    bound_warnings(ctx, &map, &sim.stats.bound_violations);
    crate::commands::analyze::warn_limits(ctx, &sim.stats.limits);
    error_control_warning(ctx, &dae, &args.vars, &columns, &sim.stats.error_control);
    let _ = ctx.io.stderr.write_all(sim.stats.summary().as_bytes());
    for w in &sim.warnings {
        let _ = writeln!(ctx.io.stderr, "warning: {w}");
    }
    if let Some((t, message)) = &sim.terminated {
        let _ = writeln!(
            ctx.io.stderr,
            "the model terminated the run at t = {}: {message}",
            t
        );
    }
    if let Some(f) = &sim.failure {
        located_error(ctx, &map, &dae.pool, f, Some(last));
        return Err(EXIT_NUMERIC);
    }
    Ok(())
}

/// The structural analysis of `dae`: the one a parameter study shares
/// ([`crate::SharedAnalysis`]) when the run is one, else [`analyze`];
/// and whether it is the shared one.
fn analyze_model(
    ctx: &Ctx<'_, '_>,
    dae: &mut daec_model::Dae,
) -> (daec_regularize::Analysis, bool) {
    match ctx.capture.as_ref().and_then(|c| c.shared.as_ref()) {
        Some(shared) => shared.analyze(dae),
        None => (analyze(dae, &AnalyzeOptions::default()), false),
    }
}

/// The formulation of `dae` for `method`, compiled, at the consistent
/// initial point: the prepared simulation a parameter study shares,
/// rebound to this run's values, when `analysis` is the study's shared
/// one ([`crate::SharedAnalysis::prepare`]); else
/// [`daec_sim::prepare_method`].
fn prepare_model(
    ctx: &Ctx<'_, '_>,
    dae: &mut daec_model::Dae,
    (analysis, shared): (&daec_regularize::Analysis, bool),
    form: Form,
    method: daec_sim::Method,
) -> Result<daec_sim::Prepared, SimError> {
    match ctx.capture.as_ref().and_then(|c| c.shared.as_ref()) {
        Some(study) => study.prepare(dae, (analysis, shared), form, method),
        None => daec_sim::prepare_method(dae, analysis, form, method),
    }
}

/// `--verbose`: the consistent initialisation (residuals, the unknowns it
/// moved) and the output equations evaluated after every step.
fn print_initialization(ctx: &mut Ctx<'_, '_>, prepared: &daec_sim::Prepared) {
    let init = &prepared.init;
    let mut s = format!(
        "initialization at t = {}: constraint residual {:.3e} at the start values, {:.3e} after projection\n",
        init.t0, init.initial_residual, init.residual
    );
    if init.moved.is_empty() {
        s.push_str("  the start values are consistent; none moved\n");
    }
    for m in &init.moved {
        s.push_str(&format!(
            "  {} moved from {} to {} (by {:+.6e})\n",
            m.name,
            m.start,
            m.value,
            m.value - m.start
        ));
    }
    let names = prepared.outputs().output_names();
    if !names.is_empty() {
        s.push_str(&format!(
            "output equations, evaluated after every step: {}\n",
            names.join(", ")
        ));
    }
    let _ = ctx.io.stderr.write_all(s.as_bytes());
}

/// Warns when the error test leaves out or scales down a variable the
/// user chose to see (`--vars`), naming them: their accuracy is not the
/// tolerance's.
fn error_control_warning(
    ctx: &mut Ctx<'_, '_>,
    dae: &daec_model::Dae,
    vars: &[String],
    columns: &[usize],
    report: &daec_sim::ErrorControlReport,
) {
    if vars.is_empty() {
        return;
    }
    // (an alias is as accurate as the unknown it names)
    let (names, _) = super::vars::column_names(dae);
    let chosen: Vec<&str> = columns
        .iter()
        .filter_map(|&j| names.get(j).map(|n| &**n))
        .filter(|&name| {
            let of = dae.aliases.iter().find(|a| a.name == name);
            report.affects(of.map_or(name, |a| a.of.as_str()))
        })
        .collect();
    if chosen.is_empty() {
        return;
    }
    let what = match report.mode {
        daec_sim::ErrorControl::Differential => "leaves out of the error test",
        _ => "scales down by h^(k−1) in the error test",
    };
    let _ = writeln!(
        ctx.io.stderr,
        "warning: --error-control {} {what} {} of the variables chosen with --vars: {}; their error is not controlled to the tolerance (--error-control all controls every unknown)",
        report.mode,
        chosen.len(),
        chosen.join(", ")
    );
}

/// Prints `error: {e}` — with the places in the model it names shown as
/// compile-time diagnostics show them — and, after a failed run, that the
/// results up to `last` were written.
/// Prints the run's error `e` (located when it has labels), the failed
/// call of a function at run time that may have caused it, and how far
/// the results go.
fn located_error(
    ctx: &mut Ctx<'_, '_>,
    map: &SourceMap,
    pool: &daec_expr::ExprPool,
    e: &SimError,
    last: Option<f64>,
) {
    let d = Diagnostic {
        labels: e.labels().to_vec(),
        ..Diagnostic::error("", e.to_string())
    };
    if let Some(capture) = ctx.capture.as_deref_mut() {
        capture.record(map, std::slice::from_ref(&d));
    }
    if e.labels().is_empty() {
        let _ = writeln!(ctx.io.stderr, "error: {e}");
    } else {
        let _ = write!(ctx.io.stderr, "{}", map.render_one(&d, ctx.color));
    }
    if let Some(call) = pool.call_failure() {
        let _ = writeln!(ctx.io.stderr, "note: {call}");
    }
    if let Some(last) = last {
        let _ = writeln!(
            ctx.io.stderr,
            "note: the results up to t = {last} were written"
        );
    }
}

/// One warning per variable that left its `min`/`max`, on its declaration.
fn bound_warnings(ctx: &mut Ctx<'_, '_>, map: &SourceMap, violations: &[daec_sim::BoundViolation]) {
    for v in violations {
        let mut d = Diagnostic::warning("", v.describe());
        if let Some(span) = v.span {
            d = d.with_primary(span, v.declared());
        }
        let _ = write!(ctx.io.stderr, "{}", map.render_one(&d, ctx.color));
    }
}

/// `--verbose`: what the native builds since the last call did.
fn print_native_log(ctx: &mut Ctx<'_, '_>, compiler: &RustcCompiler) {
    for line in compiler.take_log() {
        let _ = writeln!(ctx.io.stderr, "{line}");
    }
}

/// The progress bar of `daec simulate` over `[t0, t_end]` (1000 ticks).
fn progress_bar(t0: f64, t_end: f64) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(1000),
        indicatif::ProgressDrawTarget::stderr(),
    );
    if let Ok(style) = indicatif::ProgressStyle::with_template(&format!(
        "simulating [{{bar:40}}] {{percent:>3}}% {{msg}} of [{t0}, {t_end}] {{elapsed}}"
    )) {
        bar.set_style(style);
    }
    bar
}
