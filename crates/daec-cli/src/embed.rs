//! `daec` as a library for other front ends (the Python package
//! `daec-py`): [`run_embedded`] runs a command line in-process, as
//! [`crate::run`] does, but takes the model's text instead of reading a
//! file, and hands back what the command produced — the standard output,
//! the rendered diagnostics, the diagnostics as records, and the results
//! and statistics of `simulate` as values instead of CSV. The commands
//! themselves are those of the command line, so the numbers are the same
//! to the last digit. [`run_embedded_shared`] runs a parameter study: the
//! runs share one structural analysis and one prepared simulation — the
//! formulation with its compiled tapes — rebound to each run's values
//! ([`SharedAnalysis`]).

use crate::Io;
use daec_diag::{Diagnostic, Severity, SourceMap};
use daec_model::Dae;
use daec_regularize::Form;
use daec_regularize::{Analysis, AnalyzeOptions, analyze, reanalyze, reusable};
use daec_sim::{FailureCause, Method, Prepared, Results, SimError, Simulation};
use std::borrow::Cow;
use std::ffi::OsString;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// A model given by its text.
#[derive(Clone, Debug)]
pub struct ModelText {
    /// The name diagnostics give the text (the command line's model
    /// argument must be this name).
    pub name: String,
    /// The model.
    pub text: String,
}

impl ModelText {
    /// The model file `path` read as UTF-8 (`None` when it cannot be read
    /// or is not UTF-8: then the command reads it itself and reports why,
    /// as the command line does).
    pub fn read(path: &str) -> Option<ModelText> {
        let text = String::from_utf8(std::fs::read(path).ok()?).ok()?;
        Some(ModelText {
            name: path.to_string(),
            text,
        })
    }
}

/// One diagnostic as data (the rendered text is [`Embedded::stderr`]).
#[derive(Clone, Debug, PartialEq)]
pub struct DiagnosticRecord {
    /// `error`, `warning` or `note`.
    pub severity: &'static str,
    /// The stable code (`E0101`…); empty for run-time errors located in
    /// the model.
    pub code: String,
    /// The headline.
    pub message: String,
    /// The file (or the name of the model text) of the primary place.
    pub file: Option<String>,
    /// 1-based line of the primary place.
    pub line: Option<usize>,
    /// 1-based column (in characters) of the primary place.
    pub column: Option<usize>,
}

/// A numerical failure of `simulate` (exit code 3), as data.
#[derive(Clone, Debug, PartialEq)]
pub struct FailureRecord {
    /// When it failed (the last accepted step, or the failing event).
    pub time: f64,
    /// The kind of the cause, e.g. `solver`, `bound`, `too-many-events`.
    pub cause: &'static str,
    /// The whole message.
    pub message: String,
}

/// What `simulate` produced: the results (also those of a failed run, up
/// to the failure), the statistics and the failure.
#[derive(Clone, Debug)]
pub struct SimulationRecord {
    /// The solution at the output times (the CSV of the command line).
    pub results: Results,
    /// The statistics as JSON (the file of `--stats-json`).
    pub stats_json: String,
    /// The numerical failure that ended the run early.
    pub failure: Option<FailureRecord>,
}

/// What [`run_embedded`] gathers while a command runs.
#[derive(Default)]
pub(crate) struct Capture {
    /// The model's text, read instead of the file.
    pub(crate) source: Option<ModelText>,
    /// The diagnostics shown, as records.
    pub(crate) diagnostics: Vec<DiagnosticRecord>,
    /// The results of `simulate`, written here instead of as CSV.
    pub(crate) simulation: Option<SimulationRecord>,
    /// The analysis shared with the other runs of a parameter study.
    pub(crate) shared: Option<Arc<SharedAnalysis>>,
}

impl Capture {
    /// Takes the results, statistics and failure of a run (the results
    /// moved out of `sim`, not copied, unless aliases add columns, as in
    /// the CSV).
    pub(crate) fn take_simulation(&mut self, sim: &mut Simulation, aliases: &[daec_model::Alias]) {
        let results = match sim.results.with_aliases(aliases) {
            Cow::Owned(with_aliases) => with_aliases,
            Cow::Borrowed(_) => Results {
                names: sim.results.names.clone(),
                t: std::mem::take(&mut sim.results.t),
                z: std::mem::take(&mut sim.results.z),
            },
        };
        self.simulation = Some(SimulationRecord {
            results,
            stats_json: sim.stats.to_json(),
            failure: sim.failure.as_ref().and_then(failure_record),
        });
    }

    /// Records `diags` with their places in `map`.
    pub(crate) fn record(&mut self, map: &SourceMap, diags: &[Diagnostic]) {
        for d in diags {
            let place = d.primary_span().map(|s| {
                let (line, column) = map.line_col(s.file, s.start);
                (map.name(s.file).to_string(), line, column)
            });
            self.diagnostics.push(DiagnosticRecord {
                severity: match d.severity {
                    Severity::Error => "error",
                    Severity::Warning => "warning",
                    Severity::Note => "note",
                },
                code: d.code.to_string(),
                message: d.message.clone(),
                file: place.as_ref().map(|p| p.0.clone()),
                line: place.as_ref().map(|p| p.1),
                column: place.as_ref().map(|p| p.2),
            });
        }
    }
}

/// The outcome of [`run_embedded`].
#[derive(Debug)]
pub struct Embedded {
    /// The exit code the command line would have (see [`crate::EXIT_OK`]
    /// and the others).
    pub code: i32,
    /// What the command wrote to standard output (e.g. the JSON of
    /// `analyze --format json`).
    pub stdout: Vec<u8>,
    /// What it wrote to standard error: diagnostics rendered without
    /// colour, warnings, the run summary, usage errors.
    pub stderr: String,
    /// The diagnostics, as records.
    pub diagnostics: Vec<DiagnosticRecord>,
    /// The results of `simulate` (also after a numerical failure).
    pub simulation: Option<SimulationRecord>,
}

/// Runs `daec` with `args` (including the program name) in-process, as
/// [`crate::run`] does, with `--color never`; with `source`, the model
/// argument names that text instead of a file. `simulate` keeps its
/// results in [`Embedded::simulation`] instead of writing the CSV.
pub fn run_embedded(args: Vec<OsString>, source: Option<ModelText>) -> Embedded {
    run_capturing(
        args,
        Capture {
            source,
            ..Capture::default()
        },
    )
}

/// [`run_embedded`] for one run of a parameter study: `simulate` takes
/// its structural analysis from `shared`, which the runs of the study
/// share (see [`SharedAnalysis`] for when a run analyses its model
/// itself). The outcome is that of [`run_embedded`], to the last digit.
pub fn run_embedded_shared(
    args: Vec<OsString>,
    source: Option<ModelText>,
    shared: &Arc<SharedAnalysis>,
) -> Embedded {
    run_capturing(
        args,
        Capture {
            source,
            shared: Some(shared.clone()),
            ..Capture::default()
        },
    )
}

/// Runs `args` in-process, gathering into `capture`.
fn run_capturing(args: Vec<OsString>, mut capture: Capture) -> Embedded {
    let mut stdout: Vec<u8> = Vec::new();
    let mut stderr: Vec<u8> = Vec::new();
    let mut args = args;
    // (a global option: after the subcommand as well)
    args.extend(["--color".into(), "never".into()]);
    let code = {
        let mut io = Io {
            stdout: &mut stdout,
            stderr: &mut stderr,
            stderr_is_terminal: false,
        };
        crate::run_with(args, &mut io, Some(&mut capture))
    };
    Embedded {
        code,
        stdout,
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        diagnostics: capture.diagnostics,
        simulation: capture.simulation,
    }
}

/// The structural analysis and the prepared simulation of a model shared
/// by the runs of a parameter study (the same model, options and
/// structure, other values).
///
/// The first run to get here analyses its model (the others wait for
/// it) and keeps the DAE before and after the analysis and the analysis.
/// A later run reuses them when its DAE — lowered with its own `-p`
/// values, reduced to first order, its output equations split off — has
/// the same structure ([`Dae::same_structure`]: the same expressions,
/// equations and unknowns; only `Real` parameter values and the
/// unknowns' start, nominal, min and max may differ — also where they
/// are computed from parameters, since the lowering keeps no node of
/// those computations). Its values are then put into the kept DAE and the
/// analysis is redone where it depends on values ([`reanalyze`]: the
/// pivots of the hidden constraints, which must come out the same, and
/// the success check at the new consistent point).
///
/// The first run with the shared analysis to be prepared keeps its
/// prepared simulation before it integrates: the formulation, its tapes
/// and the DAE with the nodes they added.
/// The later runs with the shared analysis take it with their parameter
/// values rebound ([`Prepared::rebind`]): their own modes of the
/// relations in `if` conditions, consistent initial point, invariants'
/// check and, for StE and DD, state selection, computed at their values
/// — for every formulation and method, `when` events, discrete
/// variables, declared invariants, second-order methods and `--native`
/// (whose library takes the parameters at run time, so one build from
/// the cache serves every run). A run of StE or DD whose values choose
/// another state selection prepares its own.
///
/// Every other run analyses and prepares its model in full, as `daec
/// simulate` does. The rule: a value folded into the equations changes
/// the model — an `Integer` or `Boolean` parameter, a constant, a `Real`
/// parameter the lowering evaluated (one that sizes an array, picks an
/// `if` branch or a conditional component, or is a `sample` interval;
/// the lowering knows no `Evaluate` annotation) —,
/// told by the parameters before anything is analysed
/// ([`Dae::structural_change`], [`SharedAnalysis::structural`]) and by
/// the expressions ([`Dae::same_structure`]); so does a pivot of the
/// hidden constraints that changes, a Σ-Jacobian singular at the run's
/// consistent point, or a first model whose analysis needed conversions
/// or roots fixed. Either way the run's analysis and preparation are
/// those `daec simulate` computes, and so are its results.
#[derive(Debug, Default)]
pub struct SharedAnalysis {
    base: OnceLock<Option<Box<SharedBase>>>,
    reused: AtomicUsize,
    prepared: OnceLock<Option<Box<SharedPrepared>>>,
    rebound: AtomicUsize,
    structural: AtomicUsize,
    preparations: AtomicUsize,
}

/// What the first run of a parameter study kept.
#[derive(Debug)]
struct SharedBase {
    /// The DAE before its analysis.
    before: Dae,
    /// The DAE after it (its pool holds the derivatives it built).
    after: Dae,
    /// The analysis.
    analysis: Analysis,
}

/// The prepared simulation the first prepared run of a parameter study
/// kept.
#[derive(Debug)]
struct SharedPrepared {
    /// The formulation and the method it was prepared for.
    form: Form,
    method: Method,
    /// The DAE after the preparation (its pool holds the formulation).
    dae: Dae,
    /// The simulation, before it integrated (a run rebinds a copy).
    prepared: Mutex<Prepared>,
}

impl SharedAnalysis {
    /// An analysis not yet made.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many runs reused the analysis.
    pub fn reused(&self) -> usize {
        self.reused.load(Ordering::Relaxed)
    }

    /// How many runs reused the prepared simulation.
    pub fn rebound(&self) -> usize {
        self.rebound.load(Ordering::Relaxed)
    }

    /// How many runs the parameters alone showed to have another
    /// structure than the first ([`Dae::structural_change`]): analysed
    /// and prepared in full.
    pub fn structural(&self) -> usize {
        self.structural.load(Ordering::Relaxed)
    }

    /// How many runs prepared their simulation in full (built and
    /// compiled the formulation): the first, and those that could not
    /// reuse its preparation. A study whose runs all share the model
    /// prepares it once.
    pub fn preparations(&self) -> usize {
        self.preparations.load(Ordering::Relaxed)
    }

    /// The analysis of `dae` (see the type's docs), and whether it is the
    /// study's shared one; `dae` becomes the analysed DAE, as [`analyze`]
    /// leaves it.
    pub(crate) fn analyze(&self, dae: &mut Dae) -> (Analysis, bool) {
        let options = AnalyzeOptions::default();
        let mut fresh = None;
        let base = self.base.get_or_init(|| {
            let before = dae.clone();
            let analysis = analyze(dae, &options);
            let base = reusable(&analysis).then(|| {
                Box::new(SharedBase {
                    before,
                    after: dae.clone(),
                    analysis: analysis.clone(),
                })
            });
            fresh = Some((analysis, base.is_some()));
            base
        });
        if let Some(fresh) = fresh {
            return fresh;
        }
        if let Some(base) = base
            && base.before.structural_change(dae).is_some()
        {
            self.structural.fetch_add(1, Ordering::Relaxed);
        } else if let Some(base) = base
            && base.before.same_structure(dae)
        {
            let mut rebound = base.after.clone();
            if with_values_of(&mut rebound, dae)
                && let Some(analysis) = reanalyze(&mut rebound, &base.analysis, &options)
            {
                *dae = rebound;
                self.reused.fetch_add(1, Ordering::Relaxed);
                return (analysis, true);
            }
        }
        (analyze(dae, &options), false)
    }

    /// The prepared simulation of `dae` for `form` and `method`: when
    /// `shared`, `analysis` is the study's shared one and the prepared
    /// simulation is shared too (see the type's docs); `dae` becomes the
    /// prepared DAE, as [`daec_sim::prepare_method`] leaves it.
    pub(crate) fn prepare(
        &self,
        dae: &mut Dae,
        (analysis, shared): (&Analysis, bool),
        form: Form,
        method: Method,
    ) -> Result<Prepared, SimError> {
        let prepare = |dae: &mut Dae| {
            self.preparations.fetch_add(1, Ordering::Relaxed);
            daec_sim::prepare_method(dae, analysis, form, method)
        };
        if !shared {
            return prepare(dae);
        }
        let mut fresh = None;
        let base = self.prepared.get_or_init(|| {
            let prepared = prepare(dae);
            let base = match &prepared {
                Ok(p) if p.rebindable() => Some(Box::new(SharedPrepared {
                    form,
                    method,
                    dae: dae.clone(),
                    prepared: Mutex::new(p.clone()),
                })),
                _ => None,
            };
            fresh = Some(prepared);
            base
        });
        if let Some(fresh) = fresh {
            return fresh;
        }
        if let Some(base) = base
            && (base.form, base.method) == (form, method)
        {
            let mut rebound = base.dae.clone();
            let template = base.prepared.lock().ok().map(|p| p.clone());
            if with_values_of(&mut rebound, dae)
                && let Some(prepared) = template.and_then(|p| p.rebind(&mut rebound, analysis))
            {
                *dae = rebound;
                self.rebound.fetch_add(1, Ordering::Relaxed);
                return prepared;
            }
        }
        prepare(dae)
    }
}

/// Puts the values of `dae` — its unknowns and parameters — into `kept`,
/// a DAE of the same structure that a later stage extended (more
/// unknowns or parameters after those of `dae`); `false` when `kept` has
/// fewer.
fn with_values_of(kept: &mut Dae, dae: &Dae) -> bool {
    let (n, p) = (dae.unknowns.len(), dae.parameters.len());
    match (kept.unknowns.get_mut(..n), kept.parameters.get_mut(..p)) {
        (Some(unknowns), Some(parameters)) => {
            unknowns.clone_from_slice(&dae.unknowns);
            parameters.clone_from_slice(&dae.parameters);
            true
        }
        _ => false,
    }
}

/// The failure of a run as a record (`None` for errors that are not
/// numerical failures).
fn failure_record(e: &SimError) -> Option<FailureRecord> {
    let f = e.failure()?;
    Some(FailureRecord {
        time: f.time,
        cause: cause_name(&f.cause),
        message: e.to_string(),
    })
}

/// A short name of the kind of a failure's cause.
fn cause_name(cause: &FailureCause) -> &'static str {
    match cause {
        FailureCause::Solver(_) => "solver",
        FailureCause::ReinitNotFinite { .. } => "reinit-not-finite",
        FailureCause::ReinitBlocked { .. } => "reinit-blocked",
        FailureCause::Projection { .. } => "projection",
        FailureCause::EventIteration { .. } => "event-iteration",
        FailureCause::TooManyEvents { .. } => "too-many-events",
        FailureCause::EventAccumulation { .. } => "event-accumulation",
        FailureCause::NoProgress { .. } => "no-progress",
        FailureCause::Bound { .. } => "bound",
        FailureCause::Assertion { .. } => "assertion",
        FailureCause::StateSelection { .. } => "state-selection",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    const DECAY: &str = "model Decay\n  parameter Real k = 2;\n  Real x(start = 1);\nequation\n  der(x) = -k*x;\nend Decay;\n";

    #[test]
    fn simulate_keeps_the_results_of_the_model_text() {
        let out = run_embedded(
            args(&["daec", "simulate", "<string>", "--t-end", "1", "-p", "k=3"]),
            Some(ModelText {
                name: "<string>".into(),
                text: DECAY.into(),
            }),
        );
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(out.stdout.is_empty());
        let sim = out.simulation.expect("results");
        assert_eq!(sim.results.names, ["x"]);
        let last = sim.results.z.last().expect("a row")[0];
        assert!((last - (-3.0f64).exp()).abs() < 1e-5, "{last}");
        assert!(
            sim.stats_json.contains("\"steps_accepted\": 12"),
            "{}",
            sim.stats_json
        );
        assert!(sim.failure.is_none());
    }

    /// The pendulum of Steinbrecher 2016, Ex. 2.7.
    const PENDULUM: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/steinbrecher/pendulum.dae"
    );

    /// Decaying components, their number an Integer parameter and their
    /// start value a Real one.
    const ENSEMBLE: &str = "model Ensemble\n  parameter Integer N = 2;\n  parameter Real k = 2;\n  parameter Real x0 = 1;\n  Real x[N](each start = x0);\nequation\n  for i in 1:N loop\n    der(x[i]) = -i*k*x[i];\n  end for;\nend Ensemble;\n";

    /// The statistics without the timings.
    fn without_timings(json: &str) -> String {
        json.lines().filter(|l| !l.contains("_seconds")).collect()
    }

    /// Runs `daec simulate` on `model` with `extra` options alone and as a
    /// run sharing `shared`; asserts that both agree to the last bit and
    /// returns the shared run's last row.
    fn alone_and_shared(
        model: &ModelText,
        extra: &[&str],
        shared: &Arc<SharedAnalysis>,
    ) -> Vec<f64> {
        let mut list = vec!["daec", "simulate", model.name.as_str(), "--t-end", "1"];
        list.extend(extra);
        let alone = run_embedded(args(&list), Some(model.clone()));
        let many = run_embedded_shared(args(&list), Some(model.clone()), shared);
        assert_eq!((alone.code, many.code), (0, 0), "{}", many.stderr);
        // (the summary's wall times aside)
        let untimed =
            |s: &str| -> String { s.lines().filter(|l| !l.contains("wall time")).collect() };
        assert_eq!(untimed(&alone.stderr), untimed(&many.stderr));
        let (a, b) = (
            alone.simulation.expect("a run"),
            many.simulation.expect("a run"),
        );
        assert_eq!(a.results.names, b.results.names, "{extra:?}");
        let bits = |r: &Results| -> Vec<u64> {
            r.t.iter()
                .chain(r.z.iter().flatten())
                .map(|x| x.to_bits())
                .collect()
        };
        assert_eq!(bits(&a.results), bits(&b.results), "{extra:?}");
        assert_eq!(
            without_timings(&a.stats_json),
            without_timings(&b.stats_json)
        );
        b.results.z.last().cloned().unwrap_or_default()
    }

    #[test]
    fn runs_sharing_the_analysis_equal_runs_alone() {
        let model = ModelText {
            name: "ensemble.dae".into(),
            text: ENSEMBLE.into(),
        };
        let shared = Arc::new(SharedAnalysis::new());
        let first = alone_and_shared(&model, &["-p", "k=1"], &shared);
        let faster = alone_and_shared(&model, &["-p", "k=3"], &shared);
        assert_eq!((shared.reused(), shared.rebound()), (1, 1));
        assert!((faster[0] - (-3.0f64).exp()).abs() < 1e-5, "{faster:?}");
        // a start value through a parameter: the lowering keeps no node of
        // its computation, so the run shares the analysis and the
        // prepared simulation, with its own consistent point
        let moved = alone_and_shared(&model, &["-p", "x0=3"], &shared);
        assert!((moved[0] - 3.0 * (-2.0f64).exp()).abs() < 1e-5, "{moved:?}");
        assert_eq!((shared.reused(), shared.rebound()), (2, 2));
        // an Integer parameter sizes the array: analysed and prepared alone
        let three = alone_and_shared(&model, &["-p", "N=3"], &shared);
        assert_eq!(three.len(), 3);
        assert_eq!((shared.reused(), shared.rebound()), (2, 2));
        let slower = alone_and_shared(&model, &["-p", "k=0.5", "-p", "x0=2"], &shared);
        assert_eq!((shared.reused(), shared.rebound()), (3, 3));
        assert!((first[0] - (-1.0f64).exp()).abs() < 1e-5);
        assert!(
            (slower[0] - 2.0 * (-0.5f64).exp()).abs() < 1e-5,
            "{slower:?}"
        );
    }

    /// A binding equation and a parameter computed from another, both
    /// through `Real` parameters.
    const BOUND: &str = "model Bound\n  parameter Real k = 2;\n  parameter Real c = 3*k;\n  Real x(start = 1, fixed = true);\n  Real v = c*x;\nequation\n  der(x) = -k*x;\nend Bound;\n";

    #[test]
    fn a_binding_through_parameters_shares_the_prepared_simulation() {
        let model = ModelText {
            name: "bound.dae".into(),
            text: BOUND.into(),
        };
        let shared = Arc::new(SharedAnalysis::new());
        alone_and_shared(&model, &[], &shared);
        let last = alone_and_shared(&model, &["-p", "k=1"], &shared);
        // v = c·x with c = 3k = 3, x(1) = e^-1
        let (x, v) = (last[0], last[1]);
        assert!((x - (-1.0f64).exp()).abs() < 1e-5, "{last:?}");
        assert!((v - 3.0 * x).abs() < 1e-12, "{last:?}");
        let last = alone_and_shared(&model, &["-p", "c=10"], &shared);
        assert!((last[1] - 10.0 * last[0]).abs() < 1e-12, "{last:?}");
        assert_eq!((shared.reused(), shared.rebound()), (2, 2));
    }

    #[test]
    fn a_pendulum_study_shares_its_hidden_constraints() {
        let path = PENDULUM;
        let model = ModelText::read(path).expect("a readable model");
        let shared = Arc::new(SharedAnalysis::new());
        for (g, l) in [("9.81", "1"), ("1", "2"), ("20", "0.5"), ("13.75", "1.5")] {
            let (g, l) = (format!("g={g}"), format!("l={l}"));
            alone_and_shared(&model, &["-p", &g, "-p", &l], &shared);
        }
        assert_eq!((shared.reused(), shared.rebound()), (3, 3));
    }

    /// Runs `study` — a model and each run's options — alone and
    /// sharing one analysis, asserting that both agree to the last bit
    /// (see [`alone_and_shared`]); returns the shared analysis.
    fn study(model: &ModelText, runs: &[&[&str]]) -> Arc<SharedAnalysis> {
        let shared = Arc::new(SharedAnalysis::new());
        for run in runs {
            alone_and_shared(model, run, &shared);
        }
        shared
    }

    /// The counts of a study: runs that reused the analysis, runs that
    /// reused the prepared simulation, runs prepared in full, runs whose
    /// parameters changed the structure.
    fn counts(shared: &SharedAnalysis) -> (usize, usize, usize, usize) {
        (
            shared.reused(),
            shared.rebound(),
            shared.preparations(),
            shared.structural(),
        )
    }

    /// Runs `study` as [`study`] does and asserts that every run but the
    /// first reused the first's analysis and prepared simulation.
    fn prepared_once(model: &ModelText, runs: &[&[&str]]) {
        let shared = study(model, runs);
        let others = runs.len() - 1;
        assert_eq!(counts(&shared), (others, others, 1, 0), "{runs:?}");
    }

    /// A bouncing ball whose floor is a parameter (a `when` event), with
    /// drag on the sign of the velocity (an `if` mode) and a start height
    /// through a parameter.
    const BALL: &str = "model Ball\n  parameter Real g = 9.81;\n  parameter Real e = 0.8;\n  parameter Real floor = 0;\n  parameter Real h0 = 1;\n  Real h(start = h0, fixed = true);\n  Real v(start = 0, fixed = true);\nequation\n  der(h) = v;\n  der(v) = -g - (if v > 0 then 0.05*v*v else -0.05*v*v);\n  when h < floor then\n    reinit(v, -e*v);\n  end when;\nend Ball;\n";

    #[test]
    fn a_study_of_events_and_modes_prepares_once() {
        let model = ModelText {
            name: "ball.dae".into(),
            text: BALL.into(),
        };
        prepared_once(
            &model,
            &[
                &[],
                &["-p", "floor=0.3"],
                &["-p", "e=0.5", "-p", "h0=2"],
                // the ball starts below the floor: the event fires later
                &["-p", "h0=0.2", "-p", "floor=0.25"],
            ],
        );
    }

    /// A decay in steps: `floor` of an unknown (a mode that holds an
    /// integer between its events).
    const STAIRS: &str = "model Stairs\n  parameter Real k = 1;\n  parameter Real x0 = 2.5;\n  Real x(start = x0, fixed = true);\nequation\n  der(x) = -k*floor(x) - 0.5;\nend Stairs;\n";

    #[test]
    fn a_study_of_floor_modes_prepares_once() {
        let model = ModelText {
            name: "stairs.dae".into(),
            text: STAIRS.into(),
        };
        prepared_once(
            &model,
            &[&[], &["-p", "k=2"], &["-p", "x0=3.7", "-p", "k=0.5"]],
        );
    }

    /// A thermostat: `when`/`elsewhen` on parameters, a Boolean and an
    /// Integer assigned at events (discrete variables).
    const THERMOSTAT: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/discrete/thermostat.dae"
    );

    #[test]
    fn a_study_of_discrete_variables_prepares_once() {
        let model = ModelText::read(THERMOSTAT).expect("a readable model");
        prepared_once(
            &model,
            &[
                &[],
                &["-p", "Tlow=18", "-p", "Thigh=22"],
                &["-p", "P=3", "-p", "tau=5"],
            ],
        );
    }

    /// `sample(0, Ts)`: the interval is folded into the equations, the
    /// gain is not.
    const SAMPLED: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/discrete/sampled_controller.dae"
    );

    #[test]
    fn a_sampled_controller_shares_its_gain_not_its_period() {
        let model = ModelText::read(SAMPLED).expect("a readable model");
        let shared = study(
            &model,
            &[&[], &["-p", "K=3"], &["-p", "Ts=0.2"], &["-p", "K=1"]],
        );
        // (Ts is a `sample` interval: the run with another one is the
        // only other preparation)
        let (reused, rebound, preparations, _) = counts(&shared);
        assert_eq!((reused, rebound, preparations), (2, 2, 2));
    }

    /// The pendulum with its energy declared as an invariant.
    const PENDULUM_ENERGY: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/steinbrecher/pendulum_energy.dae"
    );

    #[test]
    fn a_study_with_a_declared_invariant_prepares_once() {
        let model = ModelText::read(PENDULUM_ENERGY).expect("a readable model");
        let sets: [&[&str]; 3] = [&[], &["-p", "g=9.81"], &["-p", "m=2", "-p", "g=5"]];
        each_option(
            &model,
            &[&["--method", "radau5"], &["--method", "projection"]],
            &sets,
        );
    }

    /// Runs each of `options` with the parameter sets `sets` of `model`,
    /// alone and sharing, asserting one preparation per study.
    fn each_option(model: &ModelText, options: &[&[&str]], sets: &[&[&str]]) {
        for &extra in options {
            let runs: Vec<Vec<&str>> = sets.iter().map(|p| [extra, p].concat()).collect();
            let runs: Vec<&[&str]> = runs.iter().map(|r| r.as_slice()).collect();
            prepared_once(model, &runs);
        }
    }

    /// Three sets of `g` and `l` of the pendulums.
    const G_AND_L: [&[&str]; 3] = [&[], &["-p", "g=9.81", "-p", "l=2"], &["-p", "g=20"]];

    #[test]
    fn studies_of_every_formulation_prepare_once() {
        let model = ModelText::read(PENDULUM).expect("a readable model");
        // (StE and DD choose their states at each run's consistent point;
        // the pendulum's swing switches them during the runs)
        each_option(
            &model,
            &[
                &["--form", "ste"],
                &["--form", "dd"],
                &["--form", "ada"],
                &["--method", "radau5-projected"],
                &["--method", "projection"],
            ],
            &G_AND_L,
        );
    }

    /// The pendulum started at rest at the angle `a` from the vertical
    /// (its multiplier consistent there).
    const PENDULUM_ANGLE: &str = "model PA\n  parameter Real a = 1.5;\n  parameter Real g = 9.81;\n  Real x(start = sin(a));\n  Real y(start = -cos(a));\n  Real v(start = 0, fixed = true);\n  Real w(start = 0, fixed = true);\n  Real lambda(start = g*cos(a)/2);\nequation\n  der(x) = v;\n  der(y) = w;\n  der(v) = -2*x*lambda;\n  der(w) = -2*y*lambda - g;\n  x^2 + y^2 = 1;\nend PA;\n";

    #[test]
    fn a_run_whose_values_choose_other_dummies_prepares_its_own() {
        let model = ModelText {
            name: "pa.dae".into(),
            text: PENDULUM_ANGLE.into(),
        };
        // near the horizontal StE's HVT and DD's dummies pivot on x, near
        // the bottom on y: the run at a = 0.1 prepares its own
        for form in ["ste", "dd"] {
            let runs: [&[&str]; 3] = [
                &["--form", form],
                &["--form", form, "-p", "a=0.1"],
                &["--form", form, "-p", "a=1.4"],
            ];
            let shared = study(&model, &runs);
            assert_eq!(counts(&shared), (2, 1, 2, 0), "{form}");
        }
    }

    /// The pendulum written with second derivatives.
    const PENDULUM_2ND: &str = "model P2\n  parameter Real g = 9.81;\n  parameter Real l = 1;\n  Real x(start = 1);\n  Real y(start = 0, fixed = true);\n  Real lambda(start = 0);\ninitial equation\n  der(y) = 0;\nequation\n  der(der(x)) = lambda*x;\n  der(der(y)) = lambda*y - g;\n  x^2 + y^2 = l^2;\nend P2;\n";

    #[test]
    fn studies_of_second_order_methods_prepare_once() {
        let model = ModelText {
            name: "p2.dae".into(),
            text: PENDULUM_2ND.into(),
        };
        each_option(
            &model,
            &[&["--method", "radau-2nd"], &["--method", "bdf-2nd"]],
            &G_AND_L,
        );
    }

    #[test]
    fn an_integer_parameter_is_told_structural_before_the_analysis() {
        let model = ModelText {
            name: "ensemble.dae".into(),
            text: ENSEMBLE.into(),
        };
        let shared = study(&model, &[&[], &["-p", "N=3"], &["-p", "k=3"]]);
        assert_eq!(counts(&shared), (1, 1, 2, 1));
    }

    #[test]
    fn a_model_file_is_read_as_text() {
        let path = PENDULUM;
        let m = ModelText::read(path).expect("a readable model");
        assert_eq!(m.name, path);
        assert!(m.text.contains("model Pendulum"));
        assert!(ModelText::read("/nonexistent/m.dae").is_none());
    }

    #[test]
    fn diagnostics_are_records_with_their_places() {
        let text = DECAY.replace("-k*x", "-k*y");
        let out = run_embedded(
            args(&["daec", "analyze", "m.dae"]),
            Some(ModelText {
                name: "m.dae".into(),
                text,
            }),
        );
        assert_eq!(out.code, crate::EXIT_MODEL);
        let d = &out.diagnostics[0];
        assert_eq!(d.severity, "error");
        assert!(d.message.contains('y'), "{}", d.message);
        assert_eq!(
            (d.file.as_deref(), d.line, d.column),
            (Some("m.dae"), Some(5), Some(15))
        );
        assert!(out.stderr.contains("m.dae:5:15"), "{}", out.stderr);
    }
}
