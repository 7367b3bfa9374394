//! Consistent initialisation at `t0` and re-initialisation after events.
//!
//! The start values are projected onto all constraints `0 = H(t0, z)`
//! (hidden ones included) and the user's `initial equation`s with the least
//! weighted change, the `fixed = true` starts held (steinbrecher2016,
//! Algorithm 2.1 step 6 computes the same point for the success check and
//! [`daec_regularize::Analysis`] keeps it; it is reused when present).
//! The report lists which values moved and by how much.

use crate::error::{FailureCause, InitFailure, SimError};
use crate::formulation::SimForm;
use crate::places;
use daec_diag::Label;
use daec_expr::{ExprId, Leaf, to_modelica};
use daec_model::{Dae, FlatNames};
use daec_regularize::Analysis;
use daec_regularize::UnknownKind;
use daec_regularize::{ConsistentPoint, ProjectionOptions, consistent_point};

/// A start value changed by the initialisation.
#[derive(Debug, Clone, PartialEq)]
pub struct MovedValue {
    /// Index of the unknown.
    pub variable: usize,
    /// Its flat name.
    pub name: String,
    /// Its value at the start point ([`Dae::start_point`]: the start
    /// value, or the value the equations give an unknown without one, else 0).
    pub start: f64,
    /// The consistent value.
    pub value: f64,
}

/// The consistent initial point and what changed.
#[derive(Debug, Clone, PartialEq)]
pub struct InitReport {
    /// Start time.
    pub t0: f64,
    /// The consistent initial value.
    pub z0: Vec<f64>,
    /// A consistent initial derivative `ż(t0)` from the solved derivatives
    /// `ż = Ω(t, z)` of the analysis (steinbrecher2016 Remark 2.4), where
    /// available (0 elsewhere).
    pub zdot0: Vec<f64>,
    /// Values that moved by more than 1e-12 (relative to max(1, |start|)).
    pub moved: Vec<MovedValue>,
    /// Max-norm of the constraints and initial equations at the start
    /// values.
    pub initial_residual: f64,
    /// Max-norm at `z0`.
    pub residual: f64,
}

/// Tolerance of the projection (max-norm of the constraint residuals).
pub const INIT_TOL: f64 = 1e-10;

/// The model's expressions at `(t, z)` (no derivatives: NaN).
pub(crate) use daec_model::PointEnv as ZEnv;

/// Start values of the unknowns: [`Dae::start_point`] (the declared ones,
/// and for an unknown without one the value an equation gives it from the
/// others, else 0).
pub fn start_values(dae: &Dae) -> Vec<f64> {
    dae.start_point()
}

/// Weights of the least-change projection: `1/nominal`, else
/// `1/max(1, |start|)` (the analysis uses the same).
pub fn weights(dae: &Dae) -> Vec<f64> {
    dae.unknowns
        .iter()
        .map(|u| {
            let nominal = u.nominal().map(f64::abs).filter(|x| *x > 0.0);
            1.0 / nominal.unwrap_or_else(|| u.start().map_or(1.0, |s| s.abs().max(1.0)))
        })
        .collect()
}

fn var_names(dae: &Dae, e: ExprId, fixed: &[bool]) -> String {
    let out: Vec<String> = involved(dae, e)
        .into_iter()
        .map(|j| {
            let f = if fixed.get(j).copied().unwrap_or(false) {
                " (fixed)"
            } else {
                ""
            };
            format!("`{}`{f}", dae.unknowns[j].name())
        })
        .collect();
    if out.is_empty() {
        "no unknowns".into()
    } else {
        out.join(", ")
    }
}

/// The unknowns (not their derivatives) `e` involves, as indices into
/// `dae.unknowns`, in the order of its leaves.
fn involved(dae: &Dae, e: ExprId) -> Vec<usize> {
    dae.pool
        .leaves(e)
        .into_iter()
        .filter_map(|l| match dae.pool.as_leaf(l) {
            Some(Leaf::Var { unknown, order: 0 }) if (unknown as usize) < dae.unknowns.len() => {
                Some(unknown as usize)
            }
            _ => None,
        })
        .collect()
}

/// The names of the unknowns `e` involves ([`involved`]).
fn involved_names(dae: &Dae, e: ExprId) -> Vec<String> {
    involved(dae, e)
        .into_iter()
        .map(|j| dae.unknowns[j].name().into_owned())
        .collect()
}

/// Where an equation of the initialisation comes from.
enum Origin {
    /// A constraint of `level` (0 stated, ≥ 1 hidden) from model equation
    /// `equation` differentiated `differentiations` times.
    Constraint {
        level: u32,
        equation: usize,
        differentiations: u32,
    },
    /// Initial equation `k`.
    Initial(usize),
}

impl Origin {
    /// The equation in words.
    fn describe(&self, dae: &Dae) -> String {
        match *self {
            Origin::Constraint {
                level: 0, equation, ..
            } => places::equation(dae, equation),
            Origin::Constraint {
                level,
                equation,
                differentiations,
            } => format!(
                "the level-{level} constraint from {}{}",
                places::equation(dae, equation),
                places::differentiated(differentiations)
            ),
            Origin::Initial(k) => places::initial_equation(dae, k),
        }
    }

    /// A label with `message` on its source.
    fn label(&self, dae: &Dae, message: String) -> Option<Label> {
        match *self {
            Origin::Constraint {
                level,
                equation,
                differentiations,
            } => places::equation_label(
                dae,
                equation,
                places::constraint_note(level, differentiations, &message),
            ),
            Origin::Initial(k) => places::initial_equation_label(dae, k, message),
        }
    }
}

/// Refuses start values that are not finite (lowering reports them in a
/// model; a `Dae` built otherwise may have them).
fn check_start_values(dae: &Dae, start: &[f64]) -> Result<(), SimError> {
    match start.iter().position(|x| !x.is_finite()) {
        None => Ok(()),
        Some(j) => {
            let name = dae.unknowns[j].name().into_owned();
            let label = places::unknown_label(dae, j, format!("start = {}", start[j]), true);
            Err(SimError::initialization(
                InitFailure::NonFiniteStart {
                    unknown: name.clone(),
                },
                format!(
                    "the start value of `{name}` is not a finite number ({})",
                    start[j]
                ),
            )
            .with_labels(label.into_iter().collect()))
        }
    }
}

/// The error of a failed initial projection: an equation that cannot be
/// evaluated at the start values (a division by zero, an overflow, a
/// function outside its domain), else the equation with the largest
/// residual and its variables (the fixed ones marked).
fn inconsistent(
    dae: &Dae,
    eqs: &[ExprId],
    origins: &[Origin],
    point: &ConsistentPoint,
    at_start: &ZEnv<'_>,
    fixed: &[bool],
) -> SimError {
    let undefined = eqs
        .iter()
        .zip(origins)
        .map(|(&e, o)| (e, o, dae.pool.eval(e, at_start)))
        .find(|(_, _, v)| !v.is_finite());
    if let Some((e, origin, v)) = undefined {
        let label = origin.label(dae, format!("gives {v} at the start values"));
        let cause = InitFailure::Unevaluable {
            value: v,
            unknowns: involved_names(dae, e),
        };
        return SimError::initialization(cause, format!(
            "{} cannot be evaluated at the start values: 0 = {} gives {v} (a division by zero, an overflow, or a function outside its domain such as the square root or logarithm of a negative number); it involves {}",
            origin.describe(dae),
            to_modelica(&dae.pool, e, &FlatNames(dae)),
            var_names(dae, e, fixed)
        ))
        .with_labels(label.into_iter().collect());
    }
    let worst = point
        .worst_equation
        .and_then(|i| Some((eqs.get(i).copied()?, origins.get(i)?)));
    let (what, label) = match worst {
        Some((e, origin)) => (
            format!(
                "{}, 0 = {}, keeps a residual of {:.3e}; it involves {}",
                origin.describe(dae),
                to_modelica(&dae.pool, e, &FlatNames(dae)),
                point.residual,
                var_names(dae, e, fixed)
            ),
            origin.label(dae, format!("keeps a residual of {:.3e}", point.residual)),
        ),
        None => (format!("residual {:.3e}", point.residual), None),
    };
    let cause = InitFailure::Inconsistent {
        residual: point.residual,
        unknowns: worst.map_or_else(Vec::new, |(e, _)| involved_names(dae, e)),
    };
    SimError::initialization(cause, format!(
        "the initial conditions are inconsistent: no point satisfying all (hidden) constraints was found near the start values: {what}; change the start values or fix fewer variables"
    ))
    .with_labels(label.into_iter().collect())
}

/// Computes the consistent initial point of `dae` for `form`.
///
/// First the model's unknowns: the start values are projected onto all
/// (hidden) constraints of the analysis — the constraints of the HiC form,
/// whatever form is integrated, so that e.g. DI1 starts on the same
/// consistent point — and the initial equations. Then the unknowns the
/// formulation adds are computed from its constraints with the model's
/// unknowns held: ψ/ω/dummy derivatives and velocities start from the
/// solved derivatives `Ω(t, z)` of the analysis (steinbrecher2016
/// Remark 2.4), GGL multipliers from 0 (they occur in no constraint and
/// stay 0, the exact value).
///
/// Errors name the constraint with the largest residual and its variables
/// (marking the fixed ones) when no consistent point is found near the
/// start values — inconsistent `fixed` starts or initial equations.
pub fn initialize(
    dae: &mut Dae,
    analysis: &Analysis,
    form: &SimForm,
) -> Result<InitReport, SimError> {
    let n = dae.unknowns.len();
    let t0 = dae.experiment.start_time.unwrap_or(0.0);
    let start = start_values(dae);
    check_start_values(dae, &start)?;
    let fixed: Vec<bool> = dae.unknowns.iter().map(|u| u.fixed).collect();
    let params = dae.parameter_values();
    let reg = analysis.regular();
    let ca = reg.and_then(|r| r.constraints.as_ref());
    // The equations: the (hidden) constraints in the model's unknowns, then
    // the initial equations with the derivatives replaced by Ω(t, z).
    let mut eqs: Vec<ExprId> = Vec::new();
    let mut origins: Vec<Origin> = Vec::new();
    match ca {
        Some(ca) => {
            for c in &ca.constraints {
                eqs.push(c.expr);
                origins.push(Origin::Constraint {
                    level: c.level,
                    equation: c.source.0,
                    differentiations: c.source.1,
                });
            }
        }
        None => {
            for c in &form.constraints {
                let original = dae.pool.leaves(c.expr).into_iter().all(|l| {
                    !matches!(dae.pool.as_leaf(l), Some(Leaf::Var { unknown, .. }) if unknown as usize >= n)
                });
                if original {
                    let source = form.rows.get(c.equation);
                    eqs.push(c.expr);
                    origins.push(Origin::Constraint {
                        level: c.level,
                        equation: source.map_or(c.equation, |r| r.equation),
                        differentiations: source.map_or(c.level, |r| r.derivative),
                    });
                }
            }
        }
    }
    for (k, ie) in dae.initial_equations.clone().into_iter().enumerate() {
        let e = match ca {
            Some(ca) => ca.substitute_derivatives(&mut dae.pool, ie.residual),
            None => ie.residual,
        };
        let has_der =
            dae.pool.leaves(e).into_iter().any(
                |l| matches!(dae.pool.as_leaf(l), Some(Leaf::Var { order, .. }) if order >= 1),
            );
        if has_der {
            let label = places::initial_equation_label(
                dae,
                k,
                "derivatives not determined by the unknowns",
            );
            return Err(SimError::initialization(
                InitFailure::InitialEquationDerivatives { equation: k },
                format!(
                    "the initial equation `{}` contains derivatives that cannot be expressed by the unknowns",
                    to_modelica(&dae.pool, ie.residual, &FlatNames(dae))
                ),
            )
            .with_labels(label.into_iter().collect()));
        }
        eqs.push(e);
        origins.push(Origin::Initial(k));
    }
    let reused = reg
        .and_then(|r| r.success.point.as_ref())
        .filter(|p| p.converged && p.z.len() >= n);
    let point: ConsistentPoint = match reused {
        Some(p) => p.clone(),
        None => {
            let state: Vec<(u32, u32)> = (0..n as u32).map(|j| (j, 0)).collect();
            let w = weights(dae);
            consistent_point(
                &mut dae.pool,
                &eqs,
                &state,
                &start,
                &fixed,
                &w,
                &params,
                t0,
                &ProjectionOptions {
                    tol: INIT_TOL,
                    ..ProjectionOptions::default()
                },
            )
        }
    };
    if !point.converged || point.z.iter().take(n).any(|x| !x.is_finite()) {
        let at_start = ZEnv {
            z: &start,
            params: &params,
            t: t0,
        };
        return Err(inconsistent(dae, &eqs, &origins, &point, &at_start, &fixed));
    }
    let z_orig: Vec<f64> = point.z[..n].to_vec();
    let moved = (0..n)
        .filter(|&j| (z_orig[j] - start[j]).abs() > 1e-12 * start[j].abs().max(1.0))
        .map(|j| MovedValue {
            variable: j,
            name: dae.unknowns[j].name().into_owned(),
            start: start[j],
            value: z_orig[j],
        })
        .collect();
    // Derivatives of the model's unknowns from Ω(t, z).
    let mut omega: rustc_hash::FxHashMap<(usize, u32), f64> = rustc_hash::FxHashMap::default();
    if let Some(ca) = ca {
        let env = ZEnv {
            z: &z_orig,
            params: &params,
            t: t0,
        };
        for (&(j, l), &e) in &ca.derivatives {
            let v = dae.pool.eval(e, &env);
            if v.is_finite() {
                omega.insert((j as usize, l), v);
            }
        }
    }
    let m = form.n.max(n);
    let mut zdot0 = vec![0.0; m];
    for (j, slot) in zdot0.iter_mut().enumerate().take(n) {
        *slot = omega.get(&(j, 1)).copied().unwrap_or(0.0);
    }
    let mut z0 = z_orig.clone();
    z0.resize(m, 0.0);
    for (k, u) in form.unknowns.iter().enumerate().skip(n) {
        z0[k] = match u.kind {
            UnknownKind::Derivative { unknown, order } => {
                omega.get(&(unknown, order)).copied().unwrap_or(0.0)
            }
            UnknownKind::Velocity { unknown } => zdot0.get(unknown).copied().unwrap_or(0.0),
            UnknownKind::Original(_) | UnknownKind::Multiplier { .. } => 0.0,
        };
    }
    let mut residual = point.residual;
    if m > n {
        // The added unknowns from the formulation's constraints, the
        // model's unknowns held.
        let ceqs: Vec<ExprId> = form.constraints.iter().map(|c| c.expr).collect();
        let state: Vec<(u32, u32)> = (0..m as u32).map(|j| (j, 0)).collect();
        let mut hold = vec![true; n];
        hold.resize(m, false);
        let p = consistent_point(
            &mut dae.pool,
            &ceqs,
            &state,
            &z0,
            &hold,
            &vec![1.0; m],
            &params,
            t0,
            &ProjectionOptions {
                tol: INIT_TOL,
                ..ProjectionOptions::default()
            },
        );
        if !p.converged || p.z.iter().any(|x| !x.is_finite()) {
            let names: Vec<String> = form.unknowns[n..]
                .iter()
                .take(8)
                .map(|u| format!("`{}`", u.name))
                .collect();
            let cause = InitFailure::AddedUnknowns {
                unknowns: form.unknowns[n..].iter().map(|u| u.name.clone()).collect(),
                residual: p.residual,
            };
            return Err(SimError::initialization(
                cause,
                format!(
                    "the unknowns the {} formulation adds ({}) could not be computed from its constraints at the consistent initial point (residual {:.3e})",
                    form.form.name().to_ascii_uppercase(),
                    names.join(", "),
                    p.residual
                ),
            ));
        }
        z0 = p.z;
        residual = residual.max(p.residual);
    }
    Ok(InitReport {
        t0,
        z0,
        zdot0,
        moved,
        initial_residual: point.initial_residual,
        residual,
    })
}

/// Projects `z` onto the constraints of `form` at time `t` with the least
/// weighted change, holding the entries marked in `fixed` (used after a
/// `reinit`). First the differential unknowns are held too (the algebraic
/// ones absorb the change, as NDSolve's default re-initialisation); if that
/// fails, only `fixed` is held.
pub fn reinitialize(
    dae: &mut Dae,
    form: &SimForm,
    t: f64,
    z: &[f64],
    fixed: &[bool],
) -> Result<Vec<f64>, SimError> {
    let n = z.len();
    let eqs: Vec<ExprId> = form.constraints.iter().map(|c| c.expr).collect();
    if eqs.is_empty() {
        return Ok(z.to_vec());
    }
    let params = dae.parameter_values();
    let (state, w, opts) = projection_setup(dae, n);
    let keep_states: Vec<bool> = (0..n)
        .map(|j| {
            fixed.get(j).copied().unwrap_or(false)
                || form.differential.get(j).copied().unwrap_or(false)
        })
        .collect();
    let mut last = None;
    for hold in [&keep_states[..], fixed] {
        let p = consistent_point(&mut dae.pool, &eqs, &state, z, hold, &w, &params, t, &opts);
        if p.converged && p.z.iter().all(|x| x.is_finite()) {
            return Ok(p.z);
        }
        last = Some(p);
    }
    let show = daec_solve::readable_number;
    // Held, the values cannot be made consistent. Projected with nothing
    // held, a value goes back onto the constraints; if it cannot be held
    // a little off that point either, the constraints do not let it
    // change at all (it is determined, not a state); otherwise only the
    // value asked for is out of reach.
    let free = consistent_point(
        &mut dae.pool,
        &eqs,
        &state,
        z,
        &vec![false; n],
        &w,
        &params,
        t,
        &opts,
    );
    if free.converged && free.z.iter().all(|x| x.is_finite()) {
        let moved: Vec<usize> = (0..n)
            .filter(|&j| fixed.get(j).copied().unwrap_or(false))
            .filter(|&j| (free.z[j] - z[j]).abs() > 1e-6 * (1.0 + z[j].abs()))
            .collect();
        let mut nudged = free.z.clone();
        let mut held = vec![false; n];
        for &j in &moved {
            nudged[j] += 1e-3 * (1.0 + nudged[j].abs());
            held[j] = true;
        }
        let off = consistent_point(
            &mut dae.pool,
            &eqs,
            &state,
            &nudged,
            &held,
            &w,
            &params,
            t,
            &opts,
        );
        let determined = !(off.converged && off.z.iter().all(|x| x.is_finite()));
        let blocked: Vec<String> = moved
            .iter()
            .filter(|_| determined)
            .map(|&j| {
                let name = form.unknowns.get(j).map_or("?", |u| u.name.as_str());
                format!(
                    "`{name}` (set to {}, put back to {})",
                    show(z[j]),
                    show(free.z[j])
                )
            })
            .collect();
        if !blocked.is_empty() {
            let message = format!(
                "re-initialisation at t = {}: the constraints do not let the value change: {}; the consistent re-initialisation returns it to the constraints",
                show(t),
                blocked.join(", ")
            );
            let unknowns = moved
                .iter()
                .map(|&j| {
                    form.unknowns
                        .get(j)
                        .map_or("?", |u| u.name.as_str())
                        .to_string()
                })
                .collect();
            let cause = FailureCause::ReinitBlocked { unknowns };
            return Err(SimError::numerical(t, cause, message));
        }
    }
    let residual = last.as_ref().map_or(f64::NAN, |p| p.residual);
    let (worst, labels) = worst_constraint(dae, form, last.as_ref());
    Err(SimError::numerical(
        t,
        FailureCause::Projection { residual },
        format!(
            "re-initialisation at t = {} failed: the values after `reinit` cannot be made consistent with the constraints (residual {residual:.3e}{worst})",
            daec_solve::readable_number(t)
        ),
    )
    .with_labels(labels))
}

/// What a re-initialisation of `n` unknowns projects: the unknowns
/// (order 0), their weights (the model's, 1 for the ones a formulation
/// adds) and the options ([`INIT_TOL`]).
fn projection_setup(dae: &Dae, n: usize) -> (Vec<(u32, u32)>, Vec<f64>, ProjectionOptions) {
    let state: Vec<(u32, u32)> = (0..n as u32).map(|j| (j, 0)).collect();
    let mut w = weights(dae);
    w.resize(n, 1.0);
    let opts = ProjectionOptions {
        tol: INIT_TOL,
        ..ProjectionOptions::default()
    };
    (state, w, opts)
}

/// Makes `z` consistent after the modes of relations changed at `t`
/// ([`crate::modes`]; the parameters of `dae` hold the new modes): first
/// holding, besides the states, every unknown of a constraint that still
/// holds at `z` — a switch leaves the values it does not disturb as they
/// are, and the unknowns of the violated constraints alone take the jump
/// (the current through a transistor entering inversion; the other
/// unknowns stay on a switching surface where a least-change projection
/// onto all constraints is ill-conditioned) —, then as
/// [`reinitialize`] with nothing but the states held.
pub fn reinitialize_switch(
    dae: &mut Dae,
    form: &SimForm,
    t: f64,
    z: &[f64],
) -> Result<Vec<f64>, SimError> {
    let n = z.len();
    let params = dae.parameter_values();
    let mut hold: Vec<bool> = (0..n)
        .map(|j| form.differential.get(j).copied().unwrap_or(false))
        .collect();
    let scale = 1.0 + z.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let env = ZEnv {
        z,
        params: &params,
        t,
    };
    for c in &form.constraints {
        if dae.pool.eval(c.expr, &env).abs() > INIT_TOL * scale {
            continue;
        }
        for l in dae.pool.leaves(c.expr) {
            if let Some(Leaf::Var { unknown, order: 0 }) = dae.pool.as_leaf(l)
                && let Some(h) = hold.get_mut(unknown as usize)
            {
                *h = true;
            }
        }
    }
    if hold.iter().any(|h| !h) {
        let eqs: Vec<ExprId> = form.constraints.iter().map(|c| c.expr).collect();
        let (state, w, opts) = projection_setup(dae, n);
        let p = consistent_point(&mut dae.pool, &eqs, &state, z, &hold, &w, &params, t, &opts);
        if p.converged && p.z.iter().all(|x| x.is_finite()) {
            return Ok(p.z);
        }
    }
    reinitialize(dae, form, t, z, &vec![false; n])
}

/// The constraint of `form` with the largest residual at the end of a
/// failed projection `p`, as `; largest at {constraint}` and a label on
/// its equation.
fn worst_constraint(
    dae: &Dae,
    form: &SimForm,
    p: Option<&ConsistentPoint>,
) -> (String, Vec<Label>) {
    let Some(c) = p
        .and_then(|p| p.worst_equation)
        .and_then(|w| form.constraints.get(w))
    else {
        return (String::new(), Vec::new());
    };
    let Some(row) = form.rows.get(c.equation) else {
        return (String::new(), Vec::new());
    };
    let origin = Origin::Constraint {
        level: c.level,
        equation: row.equation,
        differentiations: row.derivative,
    };
    let label = origin.label(dae, "has the largest residual".into());
    (
        format!("; largest at {}", origin.describe(dae)),
        label.into_iter().collect(),
    )
}

/// Projects `x` onto the constraints of `form` at `t` holding the entries
/// marked in `fixed` (unit weights): computes the unknowns a formulation
/// adds (StE's ψ after a switch of variant) from its constraints.
pub fn project_added(
    dae: &mut Dae,
    form: &SimForm,
    t: f64,
    x: &[f64],
    fixed: &[bool],
) -> Result<Vec<f64>, SimError> {
    let eqs: Vec<ExprId> = form.constraints.iter().map(|c| c.expr).collect();
    if eqs.is_empty() {
        return Ok(x.to_vec());
    }
    let params = dae.parameter_values();
    let state: Vec<(u32, u32)> = (0..x.len() as u32).map(|j| (j, 0)).collect();
    let p = consistent_point(
        &mut dae.pool,
        &eqs,
        &state,
        x,
        fixed,
        &vec![1.0; x.len()],
        &params,
        t,
        &ProjectionOptions {
            tol: INIT_TOL,
            ..ProjectionOptions::default()
        },
    );
    if p.converged && p.z.iter().all(|v| v.is_finite()) {
        Ok(p.z)
    } else {
        let (worst, labels) = worst_constraint(dae, form, Some(&p));
        Err(SimError::numerical(
            t,
            FailureCause::Projection {
                residual: p.residual,
            },
            format!(
                "at t = {} the unknowns of the {} formulation could not be made consistent with its constraints (residual {:.3e}{worst})",
                daec_solve::readable_number(t),
                form.form.name().to_ascii_uppercase(),
                p.residual
            ),
        )
        .with_labels(labels))
    }
}
