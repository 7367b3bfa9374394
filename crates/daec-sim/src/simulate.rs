//! The simulation driver: formulation (HiC by default; ADA, StE, DD, GGL,
//! DI1) → compiled problem → consistent initialisation → Radau IIA
//! integration with events, discontinuities and, for StE, dynamic state
//! selection → results on the output grid and statistics.

use crate::bounds::{BoundsCheck, BoundsMonitor};
use crate::error::{BadOption, FailureCause, SimError, Unsupported};
use crate::error_control::{
    ErrorControlReport, check_error_control, default_depends_on_model, default_error_control,
    is_constrained_mechanical, model_error_control, variable_indices,
};
use crate::events::{
    DEFAULT_MAX_EVENTS, EventTracker, MAX_EVENT_ITERATIONS, WhenEvents, discontinuities,
    reinit_diagnostics, time_conditions,
};
use crate::failure::explain_failure;
use crate::formulation::{SimForm, sim_form};
use crate::init::{INIT_TOL, InitReport, initialize, reinitialize, reinitialize_switch};
use crate::invariants::{check_at_start, invariant_rows, projection_form, with_invariant_rows};
use crate::method::{Method, Solver};
use crate::modes::{Modes, crossing_on_constraints, right_limits};
use crate::native::NativeCompiler;
use crate::output::{OutputTimes, OutputWriter, Results, SimStats};
use crate::outputs::Outputs;
use crate::problem::FormProblem;
use crate::projected::index3_form;
use crate::regularity::SigmaJacobian;
use daec_expr::{Env, ExprId, ParamId};
use daec_model::Dae;
use daec_regularize::{
    Analysis, Limit, MIN_LEVEL_CONDITIONING, RegularizeOptions, best_hvt, dd_levels_at,
    dd_log_quality, hvt_conditioning, log_kappa,
};
use daec_regularize::{Form, UnknownKind};
use daec_solve::readable_number as show; // `x` for a message
use daec_solve::{
    ErrorControl, NewtonScaling, Options, Radau5Storage, RisingEdge, Step, StepControl,
};
use std::sync::Arc;
use std::time::Instant;

mod rebind;
mod variants;
pub use variants::SWITCH_FACTOR;
use variants::*;

/// Simulation settings; `None` takes the model's `experiment` annotation,
/// then the defaults (`t_end` 1 after the start, tolerance 1e-6,
/// 500 output intervals).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SimOptions {
    /// End time.
    pub t_end: Option<f64>,
    /// Relative tolerance.
    pub rtol: Option<f64>,
    /// Absolute tolerance (default: the relative one).
    pub atol: Option<f64>,
    /// Output interval.
    pub interval: Option<f64>,
    /// The formulation to integrate (default HiC).
    pub form: Option<Form>,
    /// The integrator (default Radau IIA).
    pub method: Method,
    /// What a violated `min`/`max` does (default: a warning).
    pub bounds: BoundsCheck,
    /// Largest step of the integrator (default: none but the interval).
    pub max_step: Option<f64>,
    /// Events allowed in the run (default [`DEFAULT_MAX_EVENTS`]).
    pub max_events: Option<usize>,
    /// The output times (default the uniform grid of `interval`).
    pub output: OutputTimes,
    /// Step attempts allowed in the run (default [`MAX_STEPS`]).
    pub max_steps: Option<usize>,
    /// What the error test weighs (default [`default_error_control`] of
    /// the method and formulation).
    pub error_control: Option<ErrorControl>,
    /// Threads the evaluation of a large problem may use (default 1; the
    /// CLI's default is `DAEC_THREADS` or the idle cores). The results are
    /// the same for every value.
    pub threads: Option<usize>,
    /// The first step after an event (default [`Restart::Cold`]).
    pub restart: Restart,
}

/// The first step of the integration after an event.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Restart {
    /// The cold start's step size ([`Options::h0`]'s rule, Solving ODEs I,
    /// II.4), growing by at most 8 per step.
    #[default]
    Cold,
    /// After the crossing of a relation alone (an `if` switching branches,
    /// in a model without discrete variables or jumping functions), the
    /// step size the run had reached, tried guarded
    /// ([`Options::restart_step`]) where it is at least
    /// [`RESTART_MIN_GAIN`](daec_solve::RESTART_MIN_GAIN) times the cold
    /// start's; after every other event the cold start. Fewer steps at the
    /// same tolerance where switches are rare and the steps long (the water
    /// tube: 116 → 94 steps at 1e-4), but less accurate there than the
    /// cold start's short steps at the same tolerance (scd 3.09 → 2.63 at
    /// 1e-5), hence not the default.
    Reached,
}

/// The settings actually used.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ResolvedOptions {
    /// Start time.
    pub t0: f64,
    /// End time.
    pub t_end: f64,
    /// Relative tolerance.
    pub rtol: f64,
    /// Absolute tolerance.
    pub atol: f64,
    /// Output interval.
    pub interval: f64,
    /// The integrator.
    pub method: Method,
    /// What a violated `min`/`max` does.
    pub bounds: BoundsCheck,
    /// Largest step of the integrator, if bounded.
    pub max_step: Option<f64>,
    /// Events allowed in the run.
    pub max_events: usize,
    /// The output times.
    pub output: OutputTimes,
    /// Step attempts allowed in the run, over all its segments: accepted
    /// and rejected steps and Newton failures, as the statistics count
    /// them.
    pub max_steps: usize,
    /// What the error test weighs.
    pub error_control: ErrorControl,
    /// No mode was given and the default depends on the model
    /// ([`default_depends_on_model`]): the run chooses it from the
    /// prepared formulation ([`model_error_control`]) instead of
    /// `error_control`.
    pub error_control_per_model: bool,
    /// Threads the evaluation of a large problem may use (at least 1).
    pub threads: usize,
    /// The first step after an event.
    pub restart: Restart,
}

/// Resolves `opts` against the `experiment` annotation of `dae` and checks
/// them (positive finite tolerances and interval, `t_end > t0`).
pub fn resolve_options(dae: &Dae, opts: &SimOptions) -> Result<ResolvedOptions, SimError> {
    let x = &dae.experiment;
    let t0 = x.start_time.unwrap_or(0.0);
    let t_end = opts.t_end.or(x.stop_time).unwrap_or(t0 + 1.0);
    let rtol = opts.rtol.or(x.tolerance).unwrap_or(1e-6);
    let atol = opts.atol.unwrap_or(rtol);
    let positive = |v: f64| v.is_finite() && v > 0.0;
    if !positive(rtol) || !positive(atol) {
        return Err(SimError::options(
            BadOption::Tolerances,
            format!(
                "tolerances must be positive and finite (rtol = {}, atol = {})",
                show(rtol),
                show(atol)
            ),
        ));
    }
    if !(t0.is_finite() && t_end.is_finite() && t_end > t0) {
        return Err(SimError::options(
            BadOption::EndTime,
            format!(
                "the end time must be finite and after the start time {} (got {})",
                show(t0),
                show(t_end)
            ),
        ));
    }
    let interval = opts.interval.or(x.interval).unwrap_or((t_end - t0) / 500.0);
    if !positive(interval) {
        return Err(SimError::options(
            BadOption::Interval,
            format!(
                "the output interval must be positive and finite (got {})",
                show(interval)
            ),
        ));
    }
    if opts.output == OutputTimes::Uniform && (t_end - t0) / interval > 1e7 {
        return Err(SimError::options(
            BadOption::Interval,
            format!(
                "the output interval {} over [{}, {}] gives more than 1e7 output points",
                show(interval),
                show(t0),
                show(t_end)
            ),
        ));
    }
    if let OutputTimes::Log { points } = opts.output
        && !(2..=10_000_000).contains(&points)
    {
        return Err(SimError::options(
            BadOption::OutputPoints,
            format!("a logarithmic output grid needs 2 to 1e7 points (got {points})"),
        ));
    }
    if let Some(h) = opts.max_step
        && !positive(h)
    {
        return Err(SimError::options(
            BadOption::MaxStep,
            format!(
                "the maximal step must be positive and finite (got {})",
                show(h)
            ),
        ));
    }
    let form = opts.form.unwrap_or(default_form(opts.method));
    let error_control = opts
        .error_control
        .unwrap_or_else(|| default_error_control(opts.method, form));
    check_error_control(opts.method, error_control)?;
    Ok(ResolvedOptions {
        error_control,
        error_control_per_model: opts.error_control.is_none()
            && default_depends_on_model(opts.method, form),
        t0,
        t_end,
        rtol,
        atol,
        interval,
        method: opts.method,
        bounds: opts.bounds,
        max_step: opts.max_step,
        max_events: opts.max_events.unwrap_or(DEFAULT_MAX_EVENTS),
        output: opts.output,
        max_steps: opts.max_steps.unwrap_or(MAX_STEPS),
        threads: opts.threads.unwrap_or(1).max(1),
        restart: opts.restart,
    })
}

/// A compiled model, ready to integrate.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The formulation (for StE: the variant on the HVT chosen at the
    /// initial point).
    pub form: SimForm,
    /// The compiled problem.
    pub problem: FormProblem,
    /// The consistent initial point (all unknowns of `form`).
    pub init: InitReport,
    events: WhenEvents,
    /// The modes of the relations of the unknowns (state events).
    pub(crate) modes: Modes,
    time_conditions: Vec<ExprId>,
    /// StE: the analysis (for `κ_T`) and the variants built so far.
    ste: Option<SteVariants>,
    /// The model's Σ-Jacobian, to tell a singular model from other
    /// failures.
    sigma: Option<SigmaJacobian>,
    /// The size limits of the analysis, the formulation and the run
    /// ([`SimStats::limits`]).
    limits: Vec<Limit>,
    /// `--native`: compiles the formulations built during the run (StE
    /// and DD switches) as [`Prepared::compile_native`] did the first.
    native: Option<Arc<dyn NativeCompiler>>,
    /// The output equations split off the model and the results' columns.
    outputs: Outputs,
    /// The variant `init` is a point of (`restart_at`).
    start_variant: usize,
    /// The integrator's storage, kept from one run to the next.
    kept: Radau5Storage,
}

impl Prepared {
    /// Compiles the problem to native code with `compiler` (`daec simulate
    /// --native`) and evaluates it from then on; the variants a run builds
    /// later (StE and DD switches) are compiled with it too. The projector
    /// of the index-3 formulation keeps its tapes.
    pub fn compile_native(
        &mut self,
        dae: &Dae,
        compiler: Arc<dyn NativeCompiler>,
    ) -> Result<(), SimError> {
        if dae.pool.has_calls() {
            let name = dae.functions.first().map_or("", String::as_str);
            return Err(SimError::Native(crate::error::NativeError::Calls(format!(
                "the model calls `{name}` at run time (a function daec does not inline), \
                 which native code does not express; simulate without --native"
            ))));
        }
        compile_native(&mut self.problem, dae, &self.form, &*compiler)?;
        self.native = Some(compiler);
        Ok(())
    }

    /// The output equations [`split_outputs`](crate::outputs::split_outputs)
    /// took off the model before its analysis: evaluated at every
    /// accepted step and output point, their variables are columns of
    /// the results as the model declares them.
    pub fn set_outputs(&mut self, outputs: Outputs) {
        self.outputs = outputs;
    }

    /// The results' columns and the output equations.
    pub fn outputs(&self) -> &Outputs {
        &self.outputs
    }

    /// The results' row at `(t, z)` (`z`: the model's unknowns): the
    /// unknowns and the output equations' values, in the columns of
    /// [`Prepared::outputs`].
    pub fn row(&mut self, t: f64, z: &[f64]) -> Vec<f64> {
        self.outputs.row(t, z)
    }

    /// Makes the next [`integrate`] start from `point` (a [`Simulation::end`]
    /// of an earlier run on this model) instead of the consistent initial
    /// point: a run continued in pieces, as a co-simulation master steps an
    /// FMU. The run goes on in the variant active at `point`; the `when`
    /// conditions and the relations' modes start from their values at
    /// `point`; the integrator restarts there (its first step from
    /// `point.zdot`, or solved from the DAE when it is unknown). `false`
    /// (and nothing changed) when `point` is in a variant this model has
    /// not built or has another number of unknowns.
    pub fn restart_at(&mut self, point: &EndPoint) -> bool {
        let n = match (point.variant, self.ste.as_ref()) {
            (0, _) => self.form.n,
            (k, Some(v)) if k <= v.built.len() => v.built[k - 1].0.n,
            _ => return false,
        };
        if point.z.len() != n || point.zdot.as_ref().is_some_and(|d| d.len() != n) {
            return false;
        }
        self.init.t0 = point.t;
        self.init.z0.clone_from(&point.z);
        self.init.zdot0 = point.zdot.clone().unwrap_or_default();
        self.start_variant = point.variant;
        true
    }
}

/// Generates the native source of `problem` (built from `form`), has
/// `compiler` build and load it, and installs it in `problem`.
fn compile_native(
    problem: &mut FormProblem,
    dae: &Dae,
    form: &SimForm,
    compiler: &dyn NativeCompiler,
) -> Result<(), SimError> {
    let title = format!(
        "model `{}`, {} formulation",
        dae.name,
        form.form.name().to_ascii_uppercase()
    );
    let source = problem.native_source(&dae.pool, &title);
    compiler
        .compile(&source)
        .and_then(|code| problem.set_native(code))
        .map_err(SimError::Native)
}

/// The StE variants of dynamic state selection: the
/// analysis the HVTs and `κ_T` come from and the variants on other HVTs,
/// built when first needed and kept for switching back.
#[derive(Debug, Clone)]
struct SteVariants {
    analysis: Box<Analysis>,
    built: Vec<(SimForm, FormProblem)>,
}

/// Builds the HiC form, compiles it and computes the consistent initial
/// point.
pub fn prepare(dae: &mut Dae, analysis: &Analysis) -> Result<Prepared, SimError> {
    prepare_form(dae, analysis, Form::Hic)
}

/// Builds the formulation `form`, compiles it and computes the consistent
/// initial point (for the default method, Radau IIA).
pub fn prepare_form(dae: &mut Dae, analysis: &Analysis, form: Form) -> Result<Prepared, SimError> {
    prepare_method(dae, analysis, form, Method::Radau5)
}

/// Builds the formulation `form` for `method`, compiles it and computes
/// the consistent initial point, where the model's declared invariants
/// must hold ([`check_at_start`]). The overdetermined forms (HiC, ADA)
/// get the invariants as additional constraint rows; `--method
/// projection` gets the projector onto the hidden constraints and the
/// invariants instead (see the `invariants` module). Relations of the
/// unknowns in `if` conditions are frozen into modes (the `modes`
/// module), set at the consistent initial point.
pub fn prepare_method(
    dae: &mut Dae,
    analysis: &Analysis,
    form: Form,
    method: Method,
) -> Result<Prepared, SimError> {
    // (the CLI reports these with their spans before it gets here)
    if let Some(d) = reinit_diagnostics(dae, analysis).first() {
        let mut m = d.message.clone();
        for note in &d.notes {
            m.push_str("; ");
            m.push_str(note);
        }
        return Err(SimError::unsupported(Unsupported::Event, m));
    }
    check_method(method, form)?;
    crate::error::check_derivative_order(dae)?;
    let invariants = invariant_rows(dae)?;
    let mut modes = Modes::new(dae)?;
    let t0 = dae.experiment.start_time.unwrap_or(0.0);
    modes.set_from(dae, t0, &crate::init::start_values(dae));
    let (mut sim, mut projection, index) = if form == Form::Index3 {
        let i3 = index3_form(dae, analysis)?;
        (i3.form, Some(i3.projection), Some(i3.variable_index))
    } else {
        let sim = sim_form(dae, analysis, form, &RegularizeOptions::default())?;
        (sim, None, None)
    };
    let mut roots: Vec<ExprId> = sim.diff.iter().map(|r| r.residual).collect();
    roots.extend(sim.constraints.iter().map(|c| c.expr));
    // (before the relations are frozen: a condition that mixes `time` and
    // the unknowns is not a time event)
    let time_conditions = time_conditions(&dae.pool, &roots);
    modes.freeze(&mut dae.pool, &mut sim.ql);
    if let Some(p) = &mut projection {
        modes.freeze(&mut dae.pool, p);
    }
    // The modes are the relations' values at the consistent initial point
    // (MLS 3.6 §8.6); an initialisation on the formulation's own
    // constraints sees the modes, so it is repeated while they change.
    // (The consistent point is that of the model without its invariants,
    // which are checked there.)
    let mut init = initialize(dae, analysis, &sim)?;
    for _ in 0..MAX_EVENT_ITERATIONS {
        if !modes.set_from(dae, init.t0, &init.z0) {
            break;
        }
        init = initialize(dae, analysis, &sim)?;
    }
    check_at_start(dae, &init)?;
    let params = dae.parameter_values();
    let (sim, problem) =
        match (projection, index) {
            (Some(projection), Some(index)) => {
                let projector = FormProblem::new(&mut dae.pool, &projection, params.clone())?;
                let problem = FormProblem::new(&mut dae.pool, &sim, params)?
                    .with_index3(index, projector)
                    .with_invariants(&mut dae.pool, &invariants, false)?;
                (sim, problem)
            }
            _ => {
                let rows =
                    !invariants.is_empty() && !form.is_square() && method != Method::Projection;
                let augmented = rows.then(|| with_invariant_rows(&sim, &invariants));
                let run = augmented.as_ref().unwrap_or(&sim);
                let mut problem = FormProblem::new(&mut dae.pool, run, params.clone())?;
                if method == Method::Projection {
                    let mut onto = projection_form(&dae.pool, &sim, analysis, &invariants);
                    modes.freeze(&mut dae.pool, &mut onto);
                    let projector = FormProblem::new(&mut dae.pool, &onto, params)?
                        .with_invariants(&mut dae.pool, &invariants, true)?;
                    problem = problem.with_full_projection(projector);
                }
                problem = problem
                    .with_invariants(&mut dae.pool, &invariants, rows)?
                    .with_variable_index(variable_indices(analysis, &sim));
                (augmented.unwrap_or(sim), problem)
            }
        };
    let events = WhenEvents::new(dae)?;
    crate::error::check_derivative_order(dae)?;
    let ste = matches!(form, Form::Ste | Form::Dd).then(|| SteVariants {
        analysis: Box::new(analysis.clone()),
        built: Vec::new(),
    });
    let limits = prepared_limits(analysis, &sim);
    Ok(Prepared {
        form: sim,
        problem,
        init,
        events,
        modes,
        time_conditions,
        ste,
        sigma: SigmaJacobian::new(analysis),
        limits,
        native: None,
        outputs: Outputs::none(dae),
        start_variant: 0,
        kept: Radau5Storage::default(),
    })
}

/// The size limits a run on `sim` (built from `analysis`) reports: the
/// analysis's and the formulation's.
fn prepared_limits(analysis: &Analysis, sim: &SimForm) -> Vec<Limit> {
    let mut limits: Vec<Limit> = analysis
        .regular()
        .map(|r| r.limits.clone())
        .unwrap_or_default();
    limits.extend(sim.limits.iter().cloned());
    limits
}

/// The outcome of [`simulate`]: results (up to the last good step on a
/// failure), statistics, and the failure, if any.
#[derive(Debug, Clone, PartialEq)]
pub struct Simulation {
    /// Results on the output grid.
    pub results: Results,
    /// Statistics. From [`integrate`], `compile_seconds` holds only the
    /// native builds of variants made during the run (`--native` with StE
    /// or DD switches); [`simulate`] adds [`prepare`], callers add their
    /// front-end time.
    pub stats: SimStats,
    /// The initialisation report.
    pub init: InitReport,
    /// A numerical failure ([`SimError::Numerical`]); `results` end at the
    /// last good step.
    pub failure: Option<SimError>,
    /// Where the run ended (the start of the failed segment on a
    /// failure): what [`Prepared::restart_at`] continues from. `None` from
    /// the second-order methods.
    pub end: Option<EndPoint>,
    /// The time and message of a `terminate(message)` that ended the run
    /// (successfully, before the end time; MLS 3.6 §8.3.8).
    pub terminated: Option<(f64, String)>,
    /// The failed assertions of `AssertionLevel.warning`, each once.
    pub warnings: Vec<String>,
}

/// A point of a run: the time, the unknowns of the formulation variant
/// active there (StE and DD switch between variants) and their
/// derivative.
#[derive(Debug, Clone, PartialEq)]
pub struct EndPoint {
    /// The time.
    pub t: f64,
    /// All unknowns of the active variant.
    pub z: Vec<f64>,
    /// Their derivative, where the run knows it (not right after an event).
    pub zdot: Option<Vec<f64>>,
    /// The active variant: 0 the prepared formulation, `k` the `k`-th
    /// variant a run of StE or DD switched to (kept in the [`Prepared`]
    /// model for switching back).
    pub variant: usize,
}

/// The formulation `method` integrates when none is given: the index-3
/// formulation for projected Radau IIA, HiC otherwise.
pub fn default_form(method: Method) -> Form {
    match method {
        Method::Radau5Projected => Form::Index3,
        _ => Form::Hic,
    }
}

/// Simulates `dae` (whose `analysis` must have been computed on it):
/// [`prepare`], then [`integrate`].
pub fn simulate(
    dae: &mut Dae,
    analysis: &Analysis,
    opts: &SimOptions,
) -> Result<Simulation, SimError> {
    let ro = resolve_options(dae, opts)?;
    let start = Instant::now();
    let form = opts.form.unwrap_or(default_form(opts.method));
    let mut prepared = prepare_method(dae, analysis, form, opts.method)?;
    let compile = start.elapsed().as_secs_f64();
    let mut sim = integrate(dae, &mut prepared, &ro)?;
    sim.stats.compile_seconds += compile;
    Ok(sim)
}

/// Step attempts allowed in a run by default, over all its integration
/// segments: accepted and rejected steps and Newton failures, the counts of
/// the statistics (the pendulum of steinbrecher2016 Ex. 5.1 over 1000
/// periods needs about 1.2e5, the test set's slider crank at rtol = atol =
/// 1e-10 about 4e4). A run past it is almost always resolving something
/// the user did not mean to resolve (an unstable fast mode, chattering)
/// and is stopped with an explanation instead of running for hours;
/// RADAU5's default limit (NMAX) is 1e5.
pub const MAX_STEPS: usize = 1_000_000;

/// The step size the integration may try first (guarded, see
/// [`Options::restart_step`]) after an event found in `step`, `genuine`
/// if it is a `when` edge, the model has discrete variables or functions
/// that jump (`floor`, `integer`, …, [`Modes::has_jumps`]): the step's
/// own size after the crossing of a relation alone (an `if` switching
/// between the branches of an expression: the state is continuous and the
/// new branch's solution is usually as smooth as the old one — the water
/// tube's friction law), 0 (the cold start) after a `when` edge (a
/// `reinit` or a discrete change: a genuine jump) and in a model with
/// discrete variables or jumping functions (`k = integer(x)`: its jump
/// the state's round-off at the crossing undid for an instant on a long
/// first step). Discontinuities of
/// `time` and state-selection switches restart cold too, and so does an
/// event after a segment with Newton failures (the step size it reached
/// is then no measure of the steps the iteration handles: on the charge
/// pump, whose iterations fail at a third of its steps near its
/// transistor's switches, the guarded step cost up to 6 % more steps).
fn restart_step_after(genuine: bool, step: &Step<'_>) -> f64 {
    if genuine { 0.0 } else { step.t - step.t_start }
}

/// `h` ([`restart_step_after`]) under [`Restart::Reached`] after a
/// segment without Newton failures (`seg`, its statistics), else 0: the
/// cold start.
fn after_calm_segment(restart: Restart, h: f64, seg: &daec_solve::Stats) -> f64 {
    if restart == Restart::Reached && seg.newton_failures == 0 {
        h
    } else {
        0.0
    }
}

/// What stopped one integration segment early.
enum Stop {
    /// A `when` edge (if any) or a relation's crossing (or both).
    Event(Option<RisingEdge>),
    /// StE or DD: switch to this variant.
    Switch(Variant),
}

/// Refuses a method on a formulation it does not integrate: projected
/// Radau IIA needs the index-3 formulation (and only it), the projection
/// method HiC or DI1 (whose unknowns are the model's, which its projector
/// moves), the half-explicit methods the hidden constraints of a
/// regularized form.
fn check_method(method: Method, form: Form) -> Result<(), SimError> {
    match (method, form) {
        (Method::Radau5Projected, f) if f != Form::Index3 => Err(SimError::unsupported(
            Unsupported::MethodForm { method, form },
            format!(
                "projected Radau IIA integrates the DAE as written and projects onto its constraints: use --form index3 (its default), or --method radau5 for the {} formulation",
                f.name()
            ),
        )),
        (Method::Projection, f) if !matches!(f, Form::Hic | Form::Di1) => {
            Err(SimError::unsupported(
                Unsupported::MethodForm { method, form },
                format!(
                    "the projection method integrates an index-reduced formulation and projects onto all hidden constraints and invariants: use --form hic (its default) or di1, not {}",
                    f.name()
                ),
            ))
        }
        (Method::Herk(_), Form::Index3) => Err(SimError::unsupported(
            Unsupported::MethodForm { method, form },
            "the half-explicit Runge–Kutta methods need the hidden constraints of a regularized formulation: use --form hic (the default), or --method radau5-projected for the index-3 formulation",
        )),
        _ => Ok(()),
    }
}

/// The report of the run's error control on the model's unknowns (the
/// first of `form`): the mode (`ro`'s, or chosen for the model by
/// [`model_error_control`]) and which unknowns the error test leaves out
/// or scales down.
fn error_control_report(
    form: &SimForm,
    problem: &FormProblem,
    ro: &ResolvedOptions,
) -> ErrorControlReport {
    let (mode, rule) = if ro.error_control_per_model {
        let (mode, rule) = model_error_control(problem);
        (mode, Some(rule))
    } else {
        (ro.error_control, None)
    };
    let names: Vec<String> = form
        .unknowns
        .iter()
        .take(form.n_original)
        .map(|u| u.name.clone())
        .collect();
    let index = daec_solve::QuasiLinearDae::variable_index(problem);
    ErrorControlReport {
        rule,
        ..ErrorControlReport::new(mode, &names, &index, &form.differential)
    }
}

/// Integrates a prepared model over `[t0, t_end]` of `ro`. A numerical
/// failure is reported in [`Simulation::failure`] with the results up to
/// the last good step; `Err` only for set-up errors.
pub fn integrate(
    dae: &mut Dae,
    prepared: &mut Prepared,
    ro: &ResolvedOptions,
) -> Result<Simulation, SimError> {
    integrate_with_progress(dae, prepared, ro, &mut |_| {})
}

/// The integrator's options of a segment of `form` with the run's error
/// control `mode` that starts with `zdot` (if known) after `used` step
/// attempts; `problem` evaluates its tapes on `ro.threads` threads, and
/// its Newton test weighs the unknowns as [`newton_scaling`] says.
fn segment_options(
    ro: &ResolvedOptions,
    mode: ErrorControl,
    form: &SimForm,
    problem: &FormProblem,
    zdot: Option<Vec<f64>>,
    used: usize,
    restart_step: f64,
) -> Options {
    problem.set_threads(ro.threads);
    Options {
        rtol: ro.rtol,
        atol: ro.atol,
        initial_derivative: zdot,
        restart_step,
        max_steps: ro.max_steps.saturating_sub(used),
        h_max: ro.max_step.unwrap_or(0.0),
        error_control: mode,
        newton_scaling: newton_scaling(mode, form.form, problem),
        threads: ro.threads,
        ..Options::default()
    }
}

/// The weights of the Newton test under [`ErrorControl::Index`]: RADAU5's
/// index scaling on the formulations of index 2 and 3 (GGL, the DAE as
/// written); on the regularized ones, of index 1, RADAU5's scaling where
/// it loosens the test (steps below 1) for a constrained mechanical
/// system ([`is_constrained_mechanical`]: its velocities, accelerations
/// and multipliers need converge only to what the error test asks of
/// them), else unscaled weights (the charge pump's current must converge
/// as tightly as its charges). See [`NewtonScaling`].
fn newton_scaling(mode: ErrorControl, form: Form, problem: &FormProblem) -> NewtonScaling {
    match form {
        Form::Ggl | Form::Index3 => NewtonScaling::Index,
        _ if mode == ErrorControl::Index && is_constrained_mechanical(problem) => {
            NewtonScaling::IndexBelowUnitStep
        }
        _ => NewtonScaling::Unscaled,
    }
}

/// [`integrate`], calling `progress(t)` after every accepted step (the
/// CLI's progress bar).
pub fn integrate_with_progress(
    dae: &mut Dae,
    prepared: &mut Prepared,
    ro: &ResolvedOptions,
    progress: &mut dyn FnMut(f64),
) -> Result<Simulation, SimError> {
    let clock = Instant::now();
    let Prepared {
        form: form0,
        problem: problem0,
        init,
        events,
        modes,
        time_conditions,
        ste,
        sigma,
        limits,
        native,
        outputs,
        start_variant,
        kept,
    } = prepared;
    check_method(ro.method, form0.form)?;
    // A run starts from the modes of the consistent initial point, also
    // when an earlier run on the same `prepared` left them switched.
    if modes.set_from(dae, init.t0, &init.z0) {
        reload_params(dae, problem0, ste);
    }
    problem0.set_projection(matches!(
        ro.method,
        Method::Radau5Projected | Method::Projection
    ));
    // Variant 0 is the prepared one; StE switching appends others. (A run
    // continued by `restart_at` starts in the variant it left.)
    let mut active = *start_variant;
    let n_orig = dae.unknowns.len();
    let params = dae.parameter_values();
    let (t0, t_end) = (init.t0.max(ro.t0), ro.t_end);
    let mut writer = OutputWriter::new(ro.output, t0, t_end, ro.interval);
    let mut breaks = discontinuities(&dae.pool, time_conditions, &params, t0, t_end);
    breaks.push(t_end);
    let mut results = Results {
        names: outputs.names().to_vec(),
        t: vec![t0],
        z: vec![outputs.row(t0, &init.z0[..n_orig.min(init.z0.len())])],
    };
    let mut bounds = BoundsMonitor::new(outputs.bounded(), ro.rtol, ro.atol, ro.bounds);
    bounds.check(t0, &results.z[0]);
    let mut stats = start_stats(
        form0,
        problem0,
        ste.as_ref(),
        active,
        limits,
        ro,
        t0,
        &init.z0,
    );
    let tol = (ro.rtol, ro.atol);
    let mut tracker = EventTracker::new(events, t0, &init.z0, t_end, ro.max_events);
    // ż at the segment's start where known (after an event the integrator
    // computes it from the DAE)
    // (an empty `zdot0`: a restart after an event, `Prepared::restart_at`)
    let zdot0 = (!init.zdot0.is_empty()).then(|| init.zdot0.clone());
    let (mut t, mut z, mut zdot) = (t0, init.z0.clone(), zdot0);
    let mut failure = bounds.failure();
    match start_events(dae, events, &mut tracker, form0, t0, &mut z, n_orig) {
        Ok(0) => {}
        Ok(k) => {
            (stats.events, zdot) = (stats.events + k, None);
            reload_params(dae, problem0, ste);
            set_discrete(dae, events, modes, outputs);
            results.z[0] = outputs.row(t0, &z[..n_orig]);
        }
        Err(e) => failure = Some(e),
    }
    let (mut brk, mut restart_h) = (0usize, 0.0);
    while t < t_end && failure.is_none() {
        let (form, problem): (&SimForm, &FormProblem) = match (active, ste.as_ref()) {
            (0, _) | (_, None) => (&*form0, &*problem0),
            (k, Some(v)) => (&v.built[k - 1].0, &v.built[k - 1].1),
        };
        while brk < breaks.len() && breaks[brk] <= t {
            brk += 1;
        }
        let seg_end = breaks.get(brk).copied().unwrap_or(t_end);
        if no_step_fits(t, seg_end) {
            // A breakpoint within round-off of `t` — the last time before a
            // switch at `t_end`, or one just after an event: the solution
            // is continuous, so its value at `t` is the one at `seg_end`.
            skip_to(
                &mut writer,
                &mut results,
                (&mut *outputs, &mut bounds),
                seg_end,
                &z,
                n_orig,
            );
            t = seg_end;
            continue;
        }
        let used = stats.steps_accepted + stats.steps_rejected + stats.newton_failures;
        let options = segment_options(
            ro,
            stats.error_control.mode,
            form,
            problem,
            zdot.take(),
            used,
            restart_h,
        );
        let mut solver = Solver::with_storage(ro.method, problem, options, (t, &z), kept)?;
        let mut seg = Segment {
            form,
            problem,
            events: &mut *events,
            modes: &mut *modes,
            tracker: &mut tracker,
            writer: &mut writer,
            results: &mut results,
            stats: &mut stats,
            progress: &mut *progress,
            n_orig,
            outputs: &mut *outputs,
            bounds: &mut bounds,
            seg_end,
            tol,
            ste: ste.as_ref().map(|v| (&*dae, &*v.analysis, &params[..])),
            last: (t, z.clone(), vec![0.0; form.n]),
            dense: vec![0.0; form.n],
            stop: None,
            failure: None,
            restart_h: 0.0,
        };
        let result = solver.integrate(t, &z, seg_end, |step| seg.on_step(step));
        let Segment {
            last: (last_t, last_z, last_zdot),
            stop,
            failure: seg_failure,
            restart_h: h_next,
            ..
        } = seg;
        let seg_stats = solver.stats();
        stats.solver += seg_stats;
        solver.keep(kept);
        if let Err(e) = result {
            let (last, why) = (
                (last_t, &last_z[..], &last_zdot[..]),
                (sigma.as_ref(), &*init),
            );
            failure = Some(explain_failure(dae, form, why, &e, last, ro));
            break;
        }
        if let Some(f) = seg_failure {
            failure = Some(f);
            break;
        }
        (t, z, zdot) = (last_t, last_z, Some(last_zdot));
        restart_h = after_calm_segment(ro.restart, h_next, &seg_stats);
        if let Some(f) = bounds.failure() {
            failure = Some(f);
            break;
        }
        if t >= t_end {
            break;
        }
        stats.restarts += 1;
        let mut flipped = Vec::new();
        let why = match stop {
            Some(Stop::Event(edge)) => {
                let mut project =
                    |dae: &mut Dae, zz: &[f64], held: &[bool]| reinitialize(dae, form, t, zz, held);
                if let Some(edge) = &edge {
                    match tracker.fire(dae, events, edge, t, &mut z, n_orig, &mut project) {
                        Ok(k) => stats.events += k,
                        Err(e) => {
                            failure = Some(e);
                            break;
                        }
                    }
                }
                set_discrete(dae, events, modes, outputs);
                // the relations, evaluated again after every event
                match settle(dae, (form, problem), modes, &mut tracker, t, &mut z) {
                    Ok(k) => {
                        stats.events += k.len();
                        flipped = k;
                    }
                    Err(e) => {
                        failure = Some(e);
                        break;
                    }
                }
                writer.event(&mut results, t, &z[..n_orig], |t, z| {
                    let row = outputs.row(t, z);
                    bounds.check(t, &row);
                    row
                });
                // the derivative after a reinit: the integrator's own
                zdot = None;
                if tracker.terminated.is_some() {
                    break;
                }
                "events"
            }
            Some(Stop::Switch(variant)) => {
                let Some(v) = ste.as_mut() else { break };
                let times = (&mut stats.compile_seconds, &mut stats.native_seconds);
                let switched = switch_variant(dae, v, form0, variant, native, modes, t, times)
                    .and_then(|target| {
                        let get = |k: usize| if k == 0 { &*form0 } else { &v.built[k - 1].0 };
                        let zd = zdot.as_deref().unwrap_or(&[]);
                        let znew = switch_state(dae, get(active), get(target), t, &z, zd)?;
                        Ok((target, znew))
                    });
                match switched {
                    Ok((target, znew)) => {
                        let zd = carried_derivative(zdot.as_deref(), znew.len(), n_orig);
                        (z, zdot, active) = (znew, Some(zd), target);
                        stats.ste_switches += 1;
                    }
                    Err(e) => {
                        failure = Some(e);
                        break;
                    }
                }
                if let Err(e) = tracker.restart(events, t, &z, "state-selection switches") {
                    failure = Some(e);
                }
                continue;
            }
            // (the solver returned early without an event: nothing to do)
            None if t < seg_end => break,
            None => {
                if let Some(right) = right_of_discontinuity(t, t_end) {
                    (t, zdot) = (right, None);
                }
                "discontinuities of `time`"
            }
        };
        if why != "events" {
            match settle(dae, (form, problem), modes, &mut tracker, t, &mut z) {
                Ok(k) => {
                    stats.events += k.len();
                    flipped = k;
                }
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        let why = if flipped.is_empty() {
            why.to_string()
        } else {
            // (the derivative under the new modes: the one `right_limits`
            // found, else the integrator's own)
            zdot = None;
            if active == 0 {
                let span = t_end - t0;
                let turned;
                (turned, zdot) = right_limits(dae, form0, problem0, modes, t, &mut z, span);
                stats.events += turned.len();
            }
            modes.chatter_reason(&flipped)
        };
        // (the new modes and discrete values)
        reload_params(dae, problem0, ste);
        if let Err(e) = tracker.restart(events, t, &z, &why) {
            failure = Some(e);
        }
    }
    // (`terminate` ends a run successfully too, MLS 3.6 §8.3.7)
    if failure.is_none() && (t >= t_end || tracker.terminated.is_some()) {
        let form = match (active, ste.as_ref()) {
            (0, _) | (_, None) => &*form0,
            (k, Some(v)) => &v.built[k - 1].0,
        };
        let run = (&mut *events, &mut *modes, &mut tracker);
        let last = (&mut *outputs, &mut results, &mut stats);
        failure = end_of_run(dae, run, form, (t, &mut z, n_orig), last);
    }
    stats.bound_violations = bounds.finish();
    stats.integrate_seconds = clock.elapsed().as_secs_f64() - stats.compile_seconds;
    let end = Some(EndPoint {
        t,
        z,
        zdot,
        variant: active,
    });
    Ok(Simulation {
        results,
        stats,
        init: init.clone(),
        failure,
        end,
        terminated: tracker.terminated.take(),
        warnings: std::mem::take(&mut events.warnings),
    })
}

/// The derivative a run continues with after a state-selection switch to
/// a variant of `n_to` unknowns: the model's own `n_orig` derivatives kept
/// from `zdot`, the variant's others zero.
fn carried_derivative(zdot: Option<&[f64]>, n_to: usize, n_orig: usize) -> Vec<f64> {
    let mut zd = vec![0.0; n_to];
    if let Some(old) = zdot {
        zd[..n_orig].copy_from_slice(&old[..n_orig]);
    }
    zd
}

/// The end of a successful run at `t` (MLS 3.6 §3.7.5): the `when
/// terminal()` clauses fire once ([`end_events`]); their discrete values
/// replace the last output row. The failure they cause, if any.
fn end_of_run(
    dae: &mut Dae,
    (events, modes, tracker): (&mut WhenEvents, &mut Modes, &mut EventTracker),
    form: &SimForm,
    (t, z, n_orig): (f64, &mut Vec<f64>, usize),
    (outputs, results, stats): (&mut Outputs, &mut Results, &mut SimStats),
) -> Option<SimError> {
    match end_events(dae, events, tracker, form, t, z, n_orig) {
        Ok(0) => None,
        Ok(k) => {
            stats.events += k;
            set_discrete(dae, events, modes, outputs);
            if let (Some(&last), Some(row)) = (results.t.last(), results.z.last_mut()) {
                *row = outputs.row(last, &z[..n_orig]);
            }
            None
        }
        Err(e) => Some(e),
    }
}

/// The statistics of a run before its first step: the sizes of the
/// formulation, its error control and limits, and the constraint
/// residuals at the start point `z0` in the active variant.
#[allow(clippy::too_many_arguments)]
fn start_stats(
    form0: &SimForm,
    problem0: &FormProblem,
    ste: Option<&SteVariants>,
    active: usize,
    limits: &[Limit],
    ro: &ResolvedOptions,
    t0: f64,
    z0: &[f64],
) -> SimStats {
    // (the levels of the model's constraints, not of the invariant rows)
    let own = &form0.constraints[..form0.constraints.len() - form0.invariants];
    let levels = own.iter().map(|c| c.level as usize + 1).max().unwrap_or(0);
    let mut stats = SimStats {
        unknowns: form0.n,
        differential_equations: form0.diff.len(),
        constraints: own.len(),
        max_constraint_residual_by_level: vec![0.0; levels],
        invariants: problem0.n_invariants(),
        invariant_enforcement: problem0.invariant_enforcement(),
        native_code: problem0.is_native(),
        error_control: error_control_report(form0, problem0, ro),
        limits: limits.to_vec(),
        threads: 1 + usize::from(ro.threads > 1 && problem0.is_parallel()),
        ..SimStats::default()
    };
    let tol = (ro.rtol, ro.atol);
    match (active, ste) {
        (0, _) | (_, None) => problem0.record_constraint_residuals(&mut stats, t0, z0, tol),
        (k, Some(v)) => v.built[k - 1]
            .1
            .record_constraint_residuals(&mut stats, t0, z0, tol),
    }
    stats
}

/// Loads the parameters of `dae` (the modes, the discrete variables) into
/// the formulation and its StE/DD variants.
fn reload_params(dae: &Dae, problem0: &mut FormProblem, ste: &mut Option<SteVariants>) {
    let p = dae.parameter_values();
    problem0.set_params(&p);
    for (_, built) in ste.iter_mut().flat_map(|v| v.built.iter_mut()) {
        built.set_params(&p);
    }
}

/// Loads the discrete variables' values (after an event) into the
/// relations' crossing functions and the output.
fn set_discrete(dae: &Dae, events: &WhenEvents, modes: &mut Modes, outputs: &mut Outputs) {
    if events.has_discrete() {
        let p = dae.parameter_values();
        modes.set_params(&p);
        outputs.set_params(&p);
    }
}

/// At the start `(t0, z)`: fires the clauses of `initial()` and of the
/// samples due ([`EventTracker::fire_at_start`]) and checks the
/// assertions. Returns the number of events.
fn start_events(
    dae: &mut Dae,
    events: &mut WhenEvents,
    tracker: &mut EventTracker,
    form0: &SimForm,
    t0: f64,
    z: &mut Vec<f64>,
    n_orig: usize,
) -> Result<usize, SimError> {
    let mut project =
        |dae: &mut Dae, zz: &[f64], held: &[bool]| reinitialize(dae, form0, t0, zz, held);
    let k = tracker.fire_at_start(dae, events, t0, z, n_orig, &mut project)?;
    events.check_asserts(t0, &z[..n_orig])?;
    Ok(k)
}

/// At the end `(t_end, z)` of a successful run: fires the clauses of
/// `terminal()` ([`EventTracker::fire_at_end`]) and checks the
/// assertions. Returns the number of events.
fn end_events(
    dae: &mut Dae,
    events: &mut WhenEvents,
    tracker: &mut EventTracker,
    form: &SimForm,
    t_end: f64,
    z: &mut Vec<f64>,
    n_orig: usize,
) -> Result<usize, SimError> {
    let mut project =
        |dae: &mut Dae, zz: &[f64], held: &[bool]| reinitialize(dae, form, t_end, zz, held);
    let k = tracker.fire_at_end(dae, events, t_end, z, n_orig, &mut project)?;
    if k > 0 {
        events.check_asserts(t_end, &z[..n_orig])?;
    }
    Ok(k)
}

/// After an event or a discontinuity at `t`: `z` made consistent where
/// its constraints' residual exceeds [`INIT_TOL`] and, with modes, the
/// relations' event iteration ([`relation_events`]; the re-initialisation
/// is part of it then: an algebraic unknown may jump across a relation).
/// Returns the relations that changed.
fn settle(
    dae: &mut Dae,
    (form, problem): (&SimForm, &FormProblem),
    modes: &mut Modes,
    tracker: &mut EventTracker,
    t: f64,
    z: &mut Vec<f64>,
) -> Result<Vec<usize>, SimError> {
    let worst = problem
        .constraint_residual_by_level(t, z)
        .into_iter()
        .fold(0.0f64, f64::max);
    if !modes.is_empty() {
        return relation_events(dae, form, modes, tracker, (t, worst > INIT_TOL), z);
    }
    if worst > INIT_TOL {
        *z = reinitialize(dae, form, t, z, &vec![false; form.n])?;
    }
    Ok(Vec::new())
}

/// The event iteration of the relations at `t` ([`Modes::update`]: the
/// states kept, the algebraic unknowns re-initialised with the new modes —
/// from the start if `inconsistent`),
/// counted against `--max-events`. Returns the relations that changed.
fn relation_events(
    dae: &mut Dae,
    form: &SimForm,
    modes: &mut Modes,
    tracker: &mut EventTracker,
    (t, inconsistent): (f64, bool),
    z: &mut Vec<f64>,
) -> Result<Vec<usize>, SimError> {
    let mut project = |dae: &mut Dae, zz: &[f64]| reinitialize_switch(dae, form, t, zz);
    let flipped = modes.update(dae, t, z, inconsistent, &mut project)?;
    tracker.count_state_events(flipped.len(), t, || modes.describe(&flipped))?;
    Ok(flipped)
}

/// Where the integration goes on after a discontinuity of `time` at `t`,
/// the last time of the left branch of its condition
/// ([`discontinuities`]): the first time of the right branch, where
/// `settle` makes the algebraic unknowns consistent with it (the states
/// kept) and the integrator finds the new derivative; `None` at `t_end`.
/// Restarted at `t` itself, the integrator's first step would start from
/// the left branch's algebraic values, and its dense output there,
/// projected onto the right branch's constraints, would move the states.
fn right_of_discontinuity(t: f64, t_end: f64) -> Option<f64> {
    let right = t.next_up();
    (right < t_end).then_some(right)
}

/// Whether the interval `[t, to]` is too short for any integration step:
/// Radau5 refuses a step `h` with `0.1·h ≤ ε·|t|` (RADAU5's step size
/// underflow test); within `100·ε·|t|` of `t` a breakpoint is one or a
/// few units of round-off away, where the solution does not change.
fn no_step_fits(t: f64, to: f64) -> bool {
    to - t <= 100.0 * f64::EPSILON * t.abs().max(to.abs())
}

/// Advances the output over an interval that [`no_step_fits`] to `to`: the
/// rows of the output times up to `to` take the values `z` of its start.
fn skip_to(
    writer: &mut OutputWriter,
    results: &mut Results,
    (outputs, bounds): (&mut Outputs, &mut BoundsMonitor),
    to: f64,
    z: &[f64],
    n_orig: usize,
) {
    let mut out = vec![0.0; z.len()];
    let value = |_: f64, out: &mut [f64]| out.copy_from_slice(z);
    let emit = |at: f64, z: &[f64]| {
        let row = outputs.row(at, z);
        bounds.check(at, &row);
        row
    };
    writer.step(results, to, n_orig, &mut out, value, emit);
}

/// StE or DD: the index of the variant `variant` among the prepared one
/// (0) and those built so far, building it (and compiling it with the
/// native compiler of the run, if any, the build's time added to both
/// `times`, the statistics' `compile_seconds` and `native_seconds`) when
/// it is new.
#[allow(clippy::too_many_arguments)]
fn switch_variant(
    dae: &mut Dae,
    v: &mut SteVariants,
    form0: &SimForm,
    variant: Variant,
    native: &Option<Arc<dyn NativeCompiler>>,
    modes: &Modes,
    t: f64,
    times: (&mut f64, &mut f64),
) -> Result<usize, SimError> {
    if Variant::of(form0).as_ref() == Some(&variant) {
        return Ok(0);
    }
    if let Some(k) = v
        .built
        .iter()
        .position(|(f, _)| Variant::of(f).as_ref() == Some(&variant))
    {
        return Ok(k + 1);
    }
    let opts = variant.options();
    let built = sim_form(dae, &v.analysis, variant.form(), &opts).and_then(|mut f| {
        modes.freeze(&mut dae.pool, &mut f.ql);
        let params = dae.parameter_values();
        let mut p = FormProblem::new(&mut dae.pool, &f, params)?
            .with_variable_index(variable_indices(&v.analysis, &f));
        if let Some(compiler) = native {
            let build = Instant::now();
            let compiled = compile_native(&mut p, dae, &f, &**compiler);
            let seconds = build.elapsed().as_secs_f64();
            *times.0 += seconds;
            *times.1 += seconds;
            compiled?;
        }
        Ok((f, p))
    });
    match built {
        Ok(b) => {
            v.built.push(b);
            Ok(v.built.len())
        }
        Err(e) => {
            let form = variant.form();
            let message = format!(
                "{} state selection at t = {}: the variant {variant:?} cannot be built: {e}",
                form.name().to_ascii_uppercase(),
                show(t)
            );
            let cause = FailureCause::StateSelection {
                form,
                source: Box::new(e),
            };
            Err(SimError::numerical(t, cause, message))
        }
    }
}

/// One integration segment's observer: events, output rows, constraint
/// statistics and the StE/DD switch check after every accepted step.
struct Segment<'a> {
    form: &'a SimForm,
    /// `(rtol, atol)`, the weights of the scaled constraint residual.
    tol: (f64, f64),
    problem: &'a FormProblem,
    events: &'a mut WhenEvents,
    modes: &'a mut Modes,
    tracker: &'a mut EventTracker,
    writer: &'a mut OutputWriter,
    results: &'a mut Results,
    stats: &'a mut SimStats,
    progress: &'a mut dyn FnMut(f64),
    n_orig: usize,
    /// The output equations split off the model, evaluated per row.
    outputs: &'a mut Outputs,
    /// The `min`/`max` checks along the run.
    bounds: &'a mut BoundsMonitor,
    seg_end: f64,
    /// StE/DD: the model, its analysis and the parameters.
    ste: Option<(&'a Dae, &'a Analysis, &'a [f64])>,
    /// The last good point: time, values, derivative.
    last: (f64, Vec<f64>, Vec<f64>),
    dense: Vec<f64>,
    stop: Option<Stop>,
    /// A failure found by the event checks.
    failure: Option<SimError>,
    /// The step the next segment tries first, guarded
    /// ([`Options::restart_step`]): see [`restart_step_after`].
    restart_h: f64,
}

impl Segment<'_> {
    fn on_step(&mut self, step: &Step<'_>) -> StepControl {
        (self.progress)(step.t);
        // the first rising edge of a `when` condition in this step, and
        // the first crossing of a relation: the earlier stops the step
        let mut edge = self.tracker.scan(self.events, step);
        let crossing = self
            .modes
            .scan(step)
            .map(|c| crossing_on_constraints(self.modes, self.problem, step, c));
        let t_when = edge.as_ref().map_or(f64::INFINITY, |e| e.t);
        let t_cross = crossing.as_ref().map_or(f64::INFINITY, |e| e.t);
        if t_cross < t_when {
            edge = None;
        }
        let t_stop = t_when.min(t_cross).min(step.t);
        let problem = self.problem;
        let value = |to: f64, out: &mut [f64]| problem.step_value(step, to, out);
        let (outputs, bounds) = (&mut *self.outputs, &mut *self.bounds);
        let emit = |to: f64, z: &[f64]| {
            let row = outputs.row(to, z);
            bounds.check(to, &row);
            row
        };
        self.writer.step(
            self.results,
            t_stop,
            self.n_orig,
            &mut self.dense,
            value,
            emit,
        );
        let (last_t, last_z, last_zdot) = &mut self.last;
        *last_t = t_stop;
        last_zdot.copy_from_slice(step.zdot);
        value(t_stop, last_z);
        // (at a step's end point the integrator's own evaluation of the
        // constraints serves, when it made one)
        let g_end = if t_stop == step.t {
            step.constraints()
        } else {
            None
        };
        problem.record_constraint_values(self.stats, t_stop, last_z, g_end, self.tol);
        if self
            .bounds
            .check_state(&mut *self.outputs, t_stop, &last_z[..self.n_orig])
        {
            return StepControl::Stop;
        }
        let checked = self
            .tracker
            .after_step(self.events, step, t_stop, last_z, edge.as_ref())
            .and_then(|()| self.events.check_asserts(t_stop, &last_z[..self.n_orig]));
        if let Err(e) = checked {
            self.failure = Some(e);
            return StepControl::Stop;
        }
        if edge.is_some() || t_cross <= t_when.min(step.t) {
            let genuine = edge.is_some() || self.events.has_discrete() || self.modes.has_jumps();
            self.restart_h = restart_step_after(genuine, step);
            self.stop = Some(Stop::Event(edge));
            return StepControl::Stop;
        }
        // StE/DD: dynamic state selection at the start of the next step.
        if let Some(v) = self.switch(step) {
            self.stop = Some(Stop::Switch(v));
            return StepControl::Stop;
        }
        StepControl::Continue
    }

    /// StE/DD: the variant to switch to after `step`, if any.
    fn switch(&self, step: &Step<'_>) -> Option<Variant> {
        let (dae, analysis, params) = self.ste?;
        if step.t >= self.seg_end {
            return None;
        }
        let form = self.form;
        match form.form {
            Form::Dd => dd_switch(dae, analysis, form, step.z, step.t).map(Variant::Dummies),
            Form::Ste => {
                let env = SteEnv {
                    form,
                    z: step.z,
                    zdot: step.zdot,
                    params,
                    t: step.t,
                };
                ste_switch(dae, analysis, form, &env).map(Variant::Hvt)
            }
            _ => None,
        }
    }
}
