//! Model Exchange: the model as an ODE in fixed states for the
//! importer's integrator (FMI 2.0.4 §3).
//!
//! A Model Exchange FMU hands its continuous states `x` to the importer,
//! which integrates `ẋ = f(t, x)` with its own method; the FMU evaluates
//! `f`. daec exports the models for which the first-order model (after
//! [`daec_sim::reduce_to_first_order`]) is such an ODE in fixed states:
//! the Σ-method (pryce2001 §2, the offsets `c`, `d` of the signature
//! matrix) finds every equation offset `c_i = 0` — no equation needs to
//! be differentiated, so there are no hidden constraints between the
//! states and the structural index is at most 1 — and the Σ-Jacobian
//! `∂F/∂(ẋ, y)` (pryce2001 §4, eq. (4.3): with `c = 0` its columns are
//! the derivatives of the unknowns with `d_j = 1` and the unknowns with
//! `d_j = 0` themselves) is regular at the consistent initial point. The
//! states are the unknowns with `d_j = 1`, the algebraic unknowns those
//! with `d_j = 0`. Every other model is refused with the reason
//! ([`MeModel::new`]): a higher index (hidden constraints tie the states
//! together, and a structurally fixed selection of states does not stay
//! valid in general), a singular algebraic part, a structurally singular
//! model.
//!
//! At a point `(t, x)` the derivatives and the algebraic unknowns
//! `w = (ẋ, y)` solve `F(t, x, ẋ, y) = 0`, all equations at once, by
//! Newton's method with the symbolic Σ-Jacobian, warm-started from the
//! last solution ([`MeRun::solve`]; one step for a model linear in `w`).
//!
//! Events (MLS 3.6 §8.5, as `daec simulate` treats them, see
//! `daec_sim`'s `events` and `modes`): the event indicators are the event
//! functions of the `when` conditions, then the crossing functions of
//! the relations that are modes (relations of the unknowns in `if`
//! conditions, frozen as parameters between events, so the right-hand
//! side is smooth for the importer's integrator). At an event
//! ([`MeRun::event_update`], `fmi2NewDiscreteStates`) each condition and
//! relation is taken at its value just after the event — on the
//! first-order prediction `z + δ·ż`, `δ` = [`daec_sim::RIGHT_LIMIT_STEP`]
//! relative, so a relation the importer located at its zero within its
//! tolerance is decided by the direction the solution moves — the
//! clauses whose condition became true fire, their `reinit`s computed
//! from the values before the event and assigned together, and the modes
//! take the relations' values; the importer repeats the call while
//! something changed, at most [`daec_sim::MAX_EVENT_ITERATIONS`] rounds.

use crate::engine::{FmuVariable, VarKind, variables};
use daec_expr::{ExprId, Tape, to_modelica};
use daec_model::{BaseType, Dae, FlatNames};
use daec_regularize::{AnalyzeOptions, FullPivLu, Matrix, Outcome, analyze};
use daec_sim::{MAX_EVENT_ITERATIONS, Modes, RIGHT_LIMIT_STEP, WhenEvents};

/// Newton iterations allowed for the algebraic equations at one point.
const MAX_NEWTON: usize = 50;
/// A Newton step below this (relative to `1 + |w|`) ends the iteration.
const NEWTON_TOL: f64 = 1e-12;
/// Pivots of the Σ-Jacobian below this (relative to its largest entry)
/// count as zero.
const PIVOT_TOL: f64 = 1e-14;
/// The most unknowns of the first-order model a Model Exchange FMU
/// solves for: every Newton step factorises the Σ-Jacobian as a dense
/// matrix (`n²` numbers, `n³` operations), at every call of the
/// importer that needs the derivatives.
pub const MAX_ME_UNKNOWNS: usize = 1000;

/// The first-order model of a Model Exchange FMU, its states and its
/// compiled functions.
#[derive(Debug)]
pub struct MeModel {
    /// The first-order model, relations frozen as mode parameters.
    dae: Dae,
    /// The number of unknowns of the model as lowered (the first-order
    /// reduction appends its unknowns after them).
    n_lowered: usize,
    /// Whether each unknown of the first-order model is a state.
    is_state: Vec<bool>,
    /// `F(t, z, ż)`: inputs `z`, then `ż`.
    residual: Tape,
    /// The Σ-Jacobian's entries (inputs as `residual`) and their
    /// positions `(equation, unknown)`.
    jacobian: Tape,
    positions: Vec<(usize, usize)>,
    events: WhenEvents,
    modes: Modes,
}

/// `equation i` with its text, for messages.
fn equation_text(dae: &Dae, i: usize) -> String {
    let names = FlatNames(dae);
    dae.equations.get(i).map_or_else(
        || format!("equation {}", i + 1),
        |e| {
            format!(
                "equation {} `{} = {}`",
                i + 1,
                to_modelica(&dae.pool, e.lhs, &names),
                to_modelica(&dae.pool, e.rhs, &names)
            )
        },
    )
}

/// Why a Model Exchange FMU cannot carry the model, or its Σ-Jacobian.
fn check_structure(
    dae: &Dae,
    analysis: &daec_regularize::Analysis,
) -> Result<Vec<daec_regularize::JacobianEntry>, String> {
    let cs = "use --kind cs, where daec's own integrator steps the model";
    let reg = match &analysis.outcome {
        Outcome::Singular(_) => {
            return Err(format!(
                "the model is structurally singular (run `daec analyze` for the over- and under-determined parts); {cs}"
            ));
        }
        Outcome::Regular(reg) => reg,
    };
    if !analysis.conversions.is_empty()
        || analysis.before_fixing.is_some()
        || reg.success.singular()
    {
        return Err(format!(
            "the algebraic part is singular: the Σ-Jacobian (the Jacobian of the equations with respect to the derivatives of the states and the algebraic unknowns) is singular at the consistent initial point, so the equations cannot be solved for the derivatives and the algebraic unknowns at a given state (run `daec analyze` for details); {cs}"
        ));
    }
    let c = &reg.sigma.offsets.c;
    if let Some((i, &ci)) = c.iter().enumerate().max_by_key(|&(_, &ci)| ci)
        && ci > 0
    {
        let index = analysis.index().unwrap_or(ci + 1);
        return Err(format!(
            "the model is of index {index}: the Σ-method differentiates {} {ci} time{} to find its hidden constraints, which tie the states together; a Model Exchange FMU hands the importer an ODE in fixed states, so it needs a model of index ≤ 1 (every equation solved as written for the derivatives and the algebraic unknowns), and the model as written is not one; export an index-1 formulation of it instead with --form di1 (the constraints' highest derivatives: the lower-level constraints drift) or --form dd (dummy derivatives selected at the start, valid while their pivots stay regular), or {cs} (its formulations regularize any index, with dynamic state selection by StE or DD)",
            equation_text(dae, i),
            if ci == 1 { "" } else { "s" }
        ));
    }
    Ok(reg.jacobian.clone())
}

impl MeModel {
    /// The Model Exchange form of `dae` (as lowered, with its parameters'
    /// values): reduced to first order, relations frozen, analysed and
    /// checked (see the module docs); the reason as a message when the
    /// model cannot be exported for Model Exchange.
    pub fn new(mut dae: Dae) -> Result<MeModel, String> {
        let n_lowered = dae.unknowns.len();
        daec_sim::reduce_to_first_order(&mut dae);
        if dae.unknowns.len() > MAX_ME_UNKNOWNS {
            return Err(format!(
                "the model has {} unknowns (in its first-order form); a Model Exchange FMU solves for them with a dense LU of the Σ-Jacobian at every evaluation of the derivatives, which daec limits to {MAX_ME_UNKNOWNS} unknowns; use --kind cs, where daec's integrator uses sparse factorisations",
                dae.unknowns.len()
            ));
        }
        let modes = Modes::new(&mut dae).map_err(|e| e.to_string())?;
        modes.freeze_equations(&mut dae);
        let analysis = analyze(&mut dae, &AnalyzeOptions::default());
        let jacobian = check_structure(&dae, &analysis)?;
        let d = analysis
            .regular()
            .map(|r| r.sigma.offsets.d.clone())
            .unwrap_or_default();
        let n = dae.unknowns.len();
        let is_state: Vec<bool> = (0..n).map(|j| d.get(j).is_some_and(|&d| d >= 1)).collect();
        let mut inputs: Vec<ExprId> = (0..n as u32).map(|j| dae.pool.var(j, 0)).collect();
        inputs.extend((0..n as u32).map(|j| dae.pool.var(j, 1)));
        let residuals: Vec<ExprId> = dae.equations.iter().map(|e| e.residual).collect();
        let compile = |dae: &Dae, roots: &[ExprId]| {
            Tape::compile(&dae.pool, roots, &inputs)
                .map_err(|e| format!("cannot compile the model's equations: {e}"))
        };
        let residual = compile(&dae, &residuals)?;
        let entries: Vec<ExprId> = jacobian.iter().map(|e| e.expr).collect();
        let jacobian_tape = compile(&dae, &entries)?;
        let positions = jacobian.iter().map(|e| (e.row, e.col)).collect();
        let events = WhenEvents::new(&mut dae).map_err(|e| e.to_string())?;
        Ok(MeModel {
            dae,
            n_lowered,
            is_state,
            residual,
            jacobian: jacobian_tape,
            positions,
            events,
            modes,
        })
    }

    /// The number of event indicators: the `when` conditions, then the
    /// relations that are modes.
    pub fn n_indicators(&self) -> usize {
        self.events.len() + self.modes.len()
    }

    /// The FMU's variables for Model Exchange: those of the lowered model
    /// `lowered` ([`variables`]), then the unknowns the first-order
    /// reduction added, then the derivative of every state that has no
    /// variable of its own (`der(x)`); and the states in the order of the
    /// state vector (the order of their derivatives' variables, which is
    /// that of `ModelStructure/Derivatives`), as unknowns of the
    /// first-order model.
    pub fn variables(&self, lowered: &Dae) -> (Vec<FmuVariable>, Vec<usize>) {
        let mut vars = variables(lowered);
        for (j, u) in self.dae.unknowns.iter().enumerate().skip(self.n_lowered) {
            vars.push(FmuVariable {
                name: u.name().into_owned(),
                kind: VarKind::Reduced(j),
                ty: BaseType::Real,
                start: None,
                fixed: false,
                description: u.description().map(String::from),
                unit: None,
                min: None,
                max: None,
                nominal: None,
                derivative_of: None,
            });
        }
        for (j, u) in self.dae.unknowns.iter().enumerate() {
            if !self.is_state[j] {
                continue;
            }
            let name = format!("der({})", u.name());
            if let Some(v) = vars.iter_mut().find(|v| v.name == name) {
                v.derivative_of = Some(j);
                continue;
            }
            vars.push(FmuVariable {
                name,
                kind: VarKind::Derivative(j),
                ty: BaseType::Real,
                start: None,
                fixed: false,
                description: Some(format!("the derivative of {}", u.name())),
                unit: None,
                min: None,
                max: None,
                nominal: None,
                derivative_of: Some(j),
            });
        }
        let states = vars.iter().filter_map(|v| v.derivative_of).collect();
        (vars, states)
    }
}

/// The dynamic part of a Model Exchange run, for FMU states.
#[derive(Debug, Clone, PartialEq)]
pub struct MeState {
    t: f64,
    z: Vec<f64>,
    zdot: Vec<f64>,
    pre: Vec<bool>,
    modes: Vec<f64>,
}

/// What an event update did (`fmi2EventInfo`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EventOutcome {
    /// Another round is needed (something changed).
    pub needed: bool,
    /// A `reinit` changed the states.
    pub states_changed: bool,
}

/// A Model Exchange run: the model, the point `(t, z, ż)` and the
/// values of the `when` conditions before the current time.
#[derive(Debug)]
pub struct MeRun {
    model: MeModel,
    /// The states in the order of the state vector.
    states: Vec<usize>,
    params: Vec<f64>,
    t: f64,
    z: Vec<f64>,
    zdot: Vec<f64>,
    /// Whether `z`'s algebraic unknowns and `zdot` solve the equations at
    /// `(t, x)`.
    solved: bool,
    /// The value of each `when` condition before the current time.
    pre: Vec<bool>,
    /// Rounds of the current event iteration.
    rounds: usize,
    scratch: Vec<f64>,
}

impl MeRun {
    /// The run of `model` from the consistent initial point `(t0, z0)`
    /// (every unknown of the first-order model), the states in the order
    /// `states`.
    pub fn new(mut model: MeModel, states: Vec<usize>, t0: f64, z0: Vec<f64>) -> MeRun {
        let n = model.dae.unknowns.len();
        let mut z = z0;
        z.resize(n, 0.0);
        model.modes.set_from(&mut model.dae, t0, &z);
        let mut phi = vec![0.0; model.events.len()];
        model.events.eval(t0, &z, &mut phi);
        let pre = (0..phi.len())
            .map(|k| model.events.holds(k, phi[k]))
            .collect();
        let params = model.dae.parameter_values();
        MeRun {
            model,
            states,
            params,
            t: t0,
            z,
            zdot: vec![0.0; n],
            solved: false,
            pre,
            rounds: 0,
            scratch: Vec::new(),
        }
    }

    /// The number of continuous states.
    pub fn n_states(&self) -> usize {
        self.states.len()
    }

    /// The number of event indicators.
    pub fn n_indicators(&self) -> usize {
        self.model.n_indicators()
    }

    /// The current time.
    pub fn time(&self) -> f64 {
        self.t
    }

    /// `fmi2SetTime`.
    pub fn set_time(&mut self, t: f64) {
        if t != self.t {
            self.t = t;
            self.solved = false;
        }
    }

    /// `fmi2SetContinuousStates`.
    pub fn set_states(&mut self, x: &[f64]) {
        for (&j, &v) in self.states.iter().zip(x) {
            if self.z[j] != v {
                self.z[j] = v;
                self.solved = false;
            }
        }
    }

    /// Moves the run to time `t` and the values of the unknowns in
    /// `values` (per variable of `vars`; values that are not finite
    /// skipped): the point a Co-Simulation step reached.
    pub fn sync(&mut self, t: f64, vars: &[FmuVariable], values: &[f64]) {
        self.set_time(t);
        for (v, &x) in vars.iter().zip(values) {
            if let VarKind::Unknown(j) | VarKind::Reduced(j) = v.kind
                && let Some(z) = self.z.get_mut(j)
                && x.is_finite()
                && *z != x
            {
                *z = x;
                self.solved = false;
            }
        }
    }

    /// `fmi2GetContinuousStates`.
    pub fn states(&self) -> Vec<f64> {
        self.states.iter().map(|&j| self.z[j]).collect()
    }

    /// `fmi2GetNominalsOfContinuousStates`: each state's `nominal`, else 1.
    pub fn nominals(&self) -> Vec<f64> {
        self.states
            .iter()
            .map(|&j| {
                self.model.dae.unknowns[j]
                    .nominal()
                    .filter(|x| x.is_finite() && *x > 0.0)
                    .unwrap_or(1.0)
            })
            .collect()
    }

    /// `F(t, z, ż)` into `out`.
    fn residual(&mut self, out: &mut [f64]) {
        let mut inputs = self.z.clone();
        inputs.extend_from_slice(&self.zdot);
        self.model
            .residual
            .eval(self.t, &inputs, &self.params, out, &mut self.scratch);
    }

    /// Solves the equations for the derivatives and the algebraic
    /// unknowns at the current `(t, x)` by Newton's method from the last
    /// solution (see the module docs).
    pub fn solve(&mut self) -> Result<(), String> {
        if self.solved {
            return Ok(());
        }
        let n = self.z.len();
        let mut f = vec![0.0; n];
        let mut entries = vec![0.0; self.model.positions.len()];
        let mut last = f64::INFINITY;
        for _ in 0..MAX_NEWTON {
            self.residual(&mut f);
            if let Some(i) = f.iter().position(|v| !v.is_finite()) {
                return Err(format!(
                    "the residual of {} is {} at t = {} (the states {:?})",
                    equation_text(&self.model.dae, i),
                    f[i],
                    self.t,
                    self.states()
                ));
            }
            let mut inputs = self.z.clone();
            inputs.extend_from_slice(&self.zdot);
            self.model.jacobian.eval(
                self.t,
                &inputs,
                &self.params,
                &mut entries,
                &mut self.scratch,
            );
            let mut jac = Matrix::zeros(n, n);
            for (&(r, c), &v) in self.model.positions.iter().zip(&entries) {
                jac.set(r, c, jac.get(r, c) + v);
            }
            let Some(step) = FullPivLu::new(&jac, PIVOT_TOL).solve(&f) else {
                return Err(format!(
                    "the Σ-Jacobian of the equations with respect to the derivatives and the algebraic unknowns is singular at t = {} (the states {:?}): the algebraic equations cannot be solved there",
                    self.t,
                    self.states()
                ));
            };
            let mut size: f64 = 0.0;
            for (j, &s) in step.iter().enumerate() {
                let w = if self.model.is_state[j] {
                    &mut self.zdot[j]
                } else {
                    &mut self.z[j]
                };
                *w -= s;
                size = size.max(s.abs() / (1.0 + w.abs()));
            }
            if !size.is_finite() {
                break;
            }
            if size <= NEWTON_TOL || (size <= 1e3 * NEWTON_TOL && size >= last) {
                self.solved = true;
                return Ok(());
            }
            last = size;
        }
        Err(format!(
            "Newton's method on the algebraic equations did not converge at t = {} (the states {:?}) in {MAX_NEWTON} iterations",
            self.t,
            self.states()
        ))
    }

    /// `fmi2GetDerivatives`: the derivatives of the states, in order.
    pub fn derivatives(&mut self) -> Result<Vec<f64>, String> {
        self.solve()?;
        Ok(self.states.iter().map(|&j| self.zdot[j]).collect())
    }

    /// `fmi2GetEventIndicators`: the `when` conditions' event functions,
    /// then the relations' crossing functions, at the current point.
    pub fn indicators(&mut self) -> Result<Vec<f64>, String> {
        self.solve()?;
        let mut out = vec![0.0; self.model.events.len()];
        self.model.events.eval(self.t, &self.z, &mut out);
        out.extend_from_slice(self.model.modes.crossings(self.t, &self.z));
        Ok(out)
    }

    /// The value of the FMU variable `v` at the current point (solved
    /// first), NaN for a variable that is not an unknown or a derivative.
    pub fn value(&mut self, v: &FmuVariable) -> Result<f64, String> {
        self.solve()?;
        Ok(match v.kind {
            VarKind::Unknown(j) | VarKind::Reduced(j) => self.z.get(j).copied(),
            VarKind::Derivative(j) => self.zdot.get(j).copied(),
            VarKind::Parameter(_) | VarKind::Constant(_) => None,
        }
        .unwrap_or(f64::NAN))
    }

    /// `fmi2EnterEventMode`: a new event iteration starts.
    pub fn enter_event_mode(&mut self) {
        self.rounds = 0;
    }

    /// One round of the event iteration (`fmi2NewDiscreteStates`, see the
    /// module docs).
    pub fn event_update(&mut self) -> Result<EventOutcome, String> {
        self.solve()?;
        self.rounds += 1;
        if self.rounds > MAX_EVENT_ITERATIONS {
            return Err(format!(
                "the event iteration at t = {} does not end: after {MAX_EVENT_ITERATIONS} rounds a `when` condition or a relation changes again",
                self.t
            ));
        }
        let t = self.t;
        let delta = RIGHT_LIMIT_STEP * t.abs().max(1.0);
        let m = self.model.events.len();
        let (mut phi, mut rate) = (vec![0.0; m], vec![0.0; m]);
        self.model.events.eval(t, &self.z, &mut phi);
        self.model
            .events
            .eval_rates(t, &self.z, &self.zdot, &mut rate);
        let now: Vec<bool> = (0..m)
            .map(|k| self.model.events.holds(k, phi[k] + delta * rate[k]))
            .collect();
        let fired: Vec<usize> = (0..m).filter(|&k| now[k] && !self.pre[k]).collect();
        let mut assigned = Vec::new();
        for &k in &fired {
            assigned.extend(self.model.events.reinits(k, t, &self.z));
        }
        for &(j, v) in &assigned {
            if let Some(x) = self.z.get_mut(j) {
                *x = v;
            }
        }
        self.pre = now;
        let mut outcome = EventOutcome {
            needed: !fired.is_empty(),
            states_changed: !assigned.is_empty(),
        };
        if !assigned.is_empty() {
            self.solved = false;
            self.solve()?;
        }
        if !self.model.modes.is_empty() {
            let dae = &mut self.model.dae;
            let mut changed = self.model.modes.set_from(dae, t, &self.z);
            self.params = dae.parameter_values();
            self.solved = false;
            self.solve()?;
            let which = self.model.modes.leaving(t, &self.z, &self.zdot, delta);
            if !which.is_empty() {
                self.model.modes.flip(&mut self.model.dae, &which, false);
                self.params = self.model.dae.parameter_values();
                self.solved = false;
                self.solve()?;
                changed = true;
            }
            outcome.needed |= changed;
        }
        Ok(outcome)
    }

    /// The dynamic part of the run (`fmi2GetFMUstate`).
    pub fn save(&self) -> MeState {
        MeState {
            t: self.t,
            z: self.z.clone(),
            zdot: self.zdot.clone(),
            pre: self.pre.clone(),
            modes: self.model.modes.values().to_vec(),
        }
    }

    /// Back to a saved point (`fmi2SetFMUstate`).
    pub fn restore(&mut self, s: &MeState) {
        self.t = s.t;
        self.z.clone_from(&s.z);
        self.zdot.clone_from(&s.zdot);
        self.pre.clone_from(&s.pre);
        self.model.modes.restore(&mut self.model.dae, &s.modes);
        self.params = self.model.dae.parameter_values();
        self.solved = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::lower_text;

    #[test]
    fn a_model_over_the_size_limit_is_refused_with_the_limit() {
        let n = MAX_ME_UNKNOWNS + 1;
        let text = format!(
            "model Big\n  Real x[{n}](each start = 1, each fixed = true);\nequation\n  der(x) = -x;\nend Big;\n"
        );
        let dae = lower_text(&text, Vec::new()).unwrap();
        let err = MeModel::new(dae).unwrap_err();
        assert!(
            err.contains(&format!("the model has {n} unknowns"))
                && err.contains(&format!("limits to {MAX_ME_UNKNOWNS} unknowns")),
            "{err}"
        );
        // at the limit the model is exported
        let text = text.replace(&format!("x[{n}]"), &format!("x[{MAX_ME_UNKNOWNS}]"));
        let dae = lower_text(&text, Vec::new()).unwrap();
        assert_eq!(
            MeModel::new(dae)
                .unwrap()
                .variables(&lower_text(&text, Vec::new()).unwrap())
                .1
                .len(),
            MAX_ME_UNKNOWNS
        );
    }
}
