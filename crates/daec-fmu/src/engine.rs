//! The model inside an FMU at run time, without the C ABI: the flat
//! model text and the export options the FMU carries in `resources/`,
//! the variables the model description lists (their value references
//! are their positions), and a run of daec's simulator continued from one
//! communication point to the next.
//!
//! A co-simulation step `[t, t + h]` is one run of [`daec_sim::integrate`]
//! restarted at the end point of the previous one
//! ([`Prepared::restart_at`]): the chosen formulation, its events, StE/DD
//! switching and projections are daec's own; the integrator restarts at
//! every communication point, as it does at a discontinuity of `time`.

use daec_diag::{FileId, SourceMap};
use daec_model::{BaseType, Dae, LowerOptions};
use daec_regularize::{AnalyzeOptions, Form, Outcome, analyze};
use daec_sim::{EndPoint, Method, OutputTimes, Prepared, ResolvedOptions, SimOptions};
use serde::{Deserialize, Serialize};

/// The settings `daec fmu` fixes at export, kept as
/// `resources/options.json` in the FMU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FmuOptions {
    /// The model description's `guid`, which `fmi2Instantiate` checks.
    pub guid: String,
    /// The formulation integrated (a name of [`Form::parse`]).
    pub form: String,
    /// The integrator (a name of [`Method::from_names`]).
    pub method: String,
    /// The explicit tableau of `--method herk`.
    pub tableau: Option<String>,
    /// The kinds of FMU: Co-Simulation, Model Exchange or both (absent
    /// in the options of FMUs written before Model Exchange: `cs`).
    #[serde(default)]
    pub kind: FmuKind,
}

/// The kinds of FMU an export provides (`daec fmu --kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FmuKind {
    /// Co-Simulation: daec's integrator steps the model.
    #[default]
    Cs,
    /// Model Exchange: the importer integrates the states.
    Me,
    /// Both, in one FMU.
    Both,
}

impl FmuKind {
    /// The kind of `--kind NAME` (`cs`, `me`, `both`).
    pub fn parse(name: &str) -> Option<FmuKind> {
        match name {
            "cs" => Some(FmuKind::Cs),
            "me" => Some(FmuKind::Me),
            "both" => Some(FmuKind::Both),
            _ => None,
        }
    }

    /// Whether the FMU provides Co-Simulation.
    pub fn co_simulation(self) -> bool {
        self != FmuKind::Me
    }

    /// Whether the FMU provides Model Exchange.
    pub fn model_exchange(self) -> bool {
        self != FmuKind::Cs
    }
}

impl FmuOptions {
    /// The formulation and the method, checked: second-order methods are
    /// refused (they integrate the model as written, with no end point to
    /// continue from).
    pub fn resolve(&self) -> Result<(Form, Method), String> {
        let method = Method::from_names(&self.method, self.tableau.as_deref())
            .map_err(|e| format!("--method: {e}"))?;
        if method.is_second_order() {
            return Err(format!(
                "--method {method} integrates the model as written and cannot be continued from step to step; an FMU integrates a first-order formulation (--method radau5, radau5-projected, projection or herk)"
            ));
        }
        let form = Form::parse(&self.form).ok_or_else(|| {
            format!(
                "unknown form `--form {}`: the forms are hic, ada, ste, dd, ggl, di1, index3",
                self.form
            )
        })?;
        Ok((form, method))
    }
}

/// What a variable of the FMU is in the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarKind {
    /// The model's unknown with this index: an output, continuous.
    Unknown(usize),
    /// A `Real` parameter (this index of `Dae::parameters`): settable
    /// before initialisation.
    Parameter(usize),
    /// A constant, or an `Integer` or `Boolean` parameter (folded into the
    /// structure of the model: not settable).
    Constant(usize),
    /// An unknown the first-order reduction added (`der(x)` of an `x`
    /// whose second derivative occurs), this index of the first-order
    /// model: a local variable of a Model Exchange FMU.
    Reduced(usize),
    /// The derivative of this unknown of the first-order model, a state
    /// of a Model Exchange FMU.
    Derivative(usize),
}

/// One variable of the FMU; its value reference is its position in
/// [`variables`].
#[derive(Debug, Clone, PartialEq)]
pub struct FmuVariable {
    /// The flat name.
    pub name: String,
    /// What it is in the model.
    pub kind: VarKind,
    /// `Real`, `Integer` or `Boolean`.
    pub ty: BaseType,
    /// The start value: an unknown's `start` (if any), a parameter's or
    /// constant's value.
    pub start: Option<f64>,
    /// An unknown's `fixed`.
    pub fixed: bool,
    /// The description string.
    pub description: Option<String>,
    /// `unit`.
    pub unit: Option<String>,
    /// `min`.
    pub min: Option<f64>,
    /// `max`.
    pub max: Option<f64>,
    /// `nominal`.
    pub nominal: Option<f64>,
    /// In a Model Exchange FMU, the state (an unknown of the first-order
    /// model) whose derivative this variable is.
    pub derivative_of: Option<usize>,
}

/// The variables of the FMU for `dae`: its unknowns, then its parameters
/// and constants, in the model's order.
pub fn variables(dae: &Dae) -> Vec<FmuVariable> {
    let mut out = Vec::with_capacity(dae.unknowns.len() + dae.parameters.len());
    for (j, u) in dae.unknowns.iter().enumerate() {
        out.push(FmuVariable {
            name: u.name().into_owned(),
            kind: VarKind::Unknown(j),
            ty: BaseType::Real,
            start: u.start(),
            fixed: u.fixed,
            description: u.description().map(String::from),
            unit: u.unit().map(String::from),
            min: u.min(),
            max: u.max(),
            nominal: u.nominal(),
            derivative_of: None,
        });
    }
    for (k, p) in dae.parameters.iter().enumerate() {
        let settable = !p.constant && p.symbolic && p.ty == BaseType::Real;
        out.push(FmuVariable {
            name: p.name.clone(),
            kind: if settable {
                VarKind::Parameter(k)
            } else {
                VarKind::Constant(k)
            },
            ty: p.ty,
            start: Some(p.value),
            fixed: true,
            description: p.description.clone(),
            unit: p.unit.clone(),
            min: p.min,
            max: p.max,
            nominal: p.nominal,
            derivative_of: None,
        });
    }
    out
}

/// Stack of the thread that lowers a model: lowering recurses over the
/// AST (bounded by its nesting limit), and the importer's thread may have
/// a small stack; reserved, not committed, as the CLI's worker thread.
const LOWER_STACK: usize = 1 << 30;

/// Parses and lowers the flat model `text` with the parameter
/// `overrides`, on a thread with a large stack; the diagnostics rendered
/// as text on failure.
pub fn lower_text(text: &str, overrides: Vec<(String, f64)>) -> Result<Dae, String> {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("daec-fmu-lower".into())
            .stack_size(LOWER_STACK)
            .spawn_scoped(scope, || lower_here(text, overrides))
            .map_err(|e| format!("cannot start the thread that reads the model: {e}"))?
            .join()
            .map_err(|_| "internal error in daec while reading the model".to_string())?
    })
}

fn lower_here(text: &str, overrides: Vec<(String, f64)>) -> Result<Dae, String> {
    let mut map = SourceMap::new();
    let file: FileId = map.add("model.dae".to_string(), text.to_string());
    let parsed = daec_syntax::parse(file, map.source(file));
    let mut diags = parsed.diagnostics;
    let dae = match parsed.model {
        Some(model) if !diags.iter().any(|d| d.is_error()) => {
            let options = LowerOptions {
                overrides,
                ..LowerOptions::default()
            };
            let (dae, more) = daec_model::lower(&model, &options);
            diags.extend(more);
            dae
        }
        _ => None,
    };
    match dae {
        Some(dae) if !diags.iter().any(|d| d.is_error()) => Ok(dae),
        _ => Err(map.render(&diags, false)),
    }
}

/// The simulator's side of an FMU run: the model as simulated (reduced
/// to first order, output equations split off), the prepared
/// formulation and the point the run has reached.
#[derive(Debug)]
pub struct Run {
    dae: Dae,
    prepared: Prepared,
    ro: ResolvedOptions,
    point: EndPoint,
    /// The results' column of each FMU variable that is an unknown.
    columns: Vec<Option<usize>>,
}

/// The settings of `fmi2SetupExperiment`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Experiment {
    /// The relative (and absolute) tolerance, if the master gave one.
    pub tolerance: Option<f64>,
    /// The start time, if the master gave one.
    pub start: Option<f64>,
    /// The stop time, if the master gave one.
    pub stop: Option<f64>,
}

/// Lowers the model `text` with the values `set` by the master (per value
/// reference of `vars`): parameters as overrides, unknowns as start
/// values.
pub fn lower_with(text: &str, vars: &[FmuVariable], set: &[Option<f64>]) -> Result<Dae, String> {
    let overrides = vars
        .iter()
        .zip(set)
        .filter_map(|(v, s)| match (v.kind, s) {
            (VarKind::Parameter(_), Some(x)) => Some((v.name.clone(), *x)),
            _ => None,
        })
        .collect();
    let mut dae = lower_text(text, overrides)?;
    for (v, s) in vars.iter().zip(set) {
        if let (VarKind::Unknown(_), Some(x)) = (v.kind, s)
            && let Some(j) = dae.unknown_index(&v.name)
        {
            dae.unknowns[j].set_start(Some(*x));
        }
    }
    Ok(dae)
}

/// Builds the run of `text` with `options`: the values `set` by the master
/// (per value reference of `vars`: parameters as overrides, unknowns as
/// start values), the `experiment`; ends at the consistent initial point.
pub fn build_run(
    text: &str,
    options: &FmuOptions,
    vars: &[FmuVariable],
    set: &[Option<f64>],
    experiment: Experiment,
) -> Result<(Run, Vec<f64>), String> {
    let (form, method) = options.resolve()?;
    let mut dae = lower_with(text, vars, set)?;
    if let Some(t0) = experiment.start {
        dae.experiment.start_time = Some(t0);
    }
    let opts = SimOptions {
        t_end: experiment.stop,
        rtol: experiment.tolerance,
        form: Some(form),
        method,
        ..SimOptions::default()
    };
    let mut ro = daec_sim::resolve_options(&dae, &opts).map_err(|e| e.to_string())?;
    let prepared = prepare(&mut dae, form, method)?;
    let mut prepared = prepared;
    let names = prepared.outputs().names().to_vec();
    let columns = vars
        .iter()
        .map(|v| match v.kind {
            VarKind::Unknown(_) | VarKind::Reduced(_) => names.iter().position(|n| *n == v.name),
            _ => None,
        })
        .collect();
    let init = &prepared.init;
    let point = EndPoint {
        t: init.t0,
        z: init.z0.clone(),
        zdot: Some(init.zdot0.clone()),
        variant: 0,
    };
    ro.t0 = init.t0;
    let n = dae.unknowns.len().min(point.z.len());
    let row = prepared.row(point.t, &point.z[..n]);
    let run = Run {
        dae,
        prepared,
        ro,
        point,
        columns,
    };
    let values = run.values(vars, &row);
    Ok((run, values))
}

/// The pipeline of `daec simulate` from a lowered model to a prepared
/// formulation, each refusal a message.
pub fn prepare(dae: &mut Dae, form: Form, method: Method) -> Result<Prepared, String> {
    daec_sim::reduce_to_first_order(dae);
    let outputs = daec_sim::split_outputs(dae, form);
    let analysis = analyze(dae, &AnalyzeOptions::default());
    if let Outcome::Singular(_) = &analysis.outcome {
        return Err(
            "the model is structurally singular; run `daec analyze` for the over- and under-determined parts"
                .into(),
        );
    }
    if analysis.regular().is_some_and(|r| r.success.singular()) {
        return Err(
            "the Σ-Jacobian is singular at the consistent initial point; run `daec analyze` for details"
                .into(),
        );
    }
    if let Some(d) = daec_sim::reinit_diagnostics(dae, &analysis).first() {
        return Err(d.message.clone());
    }
    let mut prepared =
        daec_sim::prepare_method(dae, &analysis, form, method).map_err(|e| e.to_string())?;
    prepared.set_outputs(outputs);
    Ok(prepared)
}

impl Run {
    /// The time the run has reached.
    pub fn time(&self) -> f64 {
        self.point.t
    }

    /// The values of `vars` at a results `row` of this run.
    fn values(&self, vars: &[FmuVariable], row: &[f64]) -> Vec<f64> {
        vars.iter()
            .zip(&self.columns)
            .map(|(v, c)| match v.kind {
                VarKind::Unknown(_) | VarKind::Reduced(_) | VarKind::Derivative(_) => {
                    c.and_then(|c| row.get(c).copied()).unwrap_or(f64::NAN)
                }
                VarKind::Parameter(_) | VarKind::Constant(_) => self
                    .dae
                    .parameters
                    .iter()
                    .find(|p| p.name == v.name)
                    .map_or(f64::NAN, |p| p.value),
            })
            .collect()
    }

    /// Integrates from the current point `t` over `h` (`fmi2DoStep`);
    /// returns the values of `vars` at `t + h`.
    pub fn step(&mut self, vars: &[FmuVariable], t: f64, h: f64) -> Result<Vec<f64>, String> {
        let now = self.point.t;
        if !(t.is_finite() && (t - now).abs() <= 1e-9 * now.abs().max(1.0)) {
            return Err(format!(
                "fmi2DoStep from t = {t}, but the FMU is at t = {now}: the communication points must follow each other"
            ));
        }
        if !(h.is_finite() && h > 0.0) {
            return Err(format!(
                "fmi2DoStep with communicationStepSize = {h}: the step must be positive and finite"
            ));
        }
        let t_end = now + h;
        if t_end <= now {
            return Err(format!(
                "fmi2DoStep with communicationStepSize = {h} at t = {now}: the step is below the resolution of t"
            ));
        }
        if !self.prepared.restart_at(&self.point) {
            return Err("the FMU state is not a point of this model's formulation".into());
        }
        let ro = ResolvedOptions {
            t0: now,
            t_end,
            interval: t_end - now,
            output: OutputTimes::Uniform,
            ..self.ro
        };
        let sim = daec_sim::integrate(&mut self.dae, &mut self.prepared, &ro)
            .map_err(|e| e.to_string())?;
        if let Some(f) = sim.failure {
            return Err(f.to_string());
        }
        let (Some(mut end), Some(row)) = (sim.end, sim.results.z.last()) else {
            return Err("the run ended without an end point".into());
        };
        end.t = t_end;
        self.point = end;
        Ok(self.values(vars, row))
    }

    /// The point the run has reached, for `fmi2GetFMUstate`.
    pub fn point(&self) -> &EndPoint {
        &self.point
    }

    /// Continues from `point` (`fmi2SetFMUstate`).
    pub fn set_point(&mut self, point: EndPoint) {
        self.point = point;
    }
}
