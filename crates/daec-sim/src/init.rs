//! Consistent initialisation at `t0` and re-initialisation after events.
//!
//! The start values are projected onto all constraints `0 = H(t0, z)`
//! (hidden ones included) and the user's `initial equation`s with the least
//! weighted change, the `fixed = true` starts held (steinbrecher2016,
//! Algorithm 2.1 step 6 computes the same point for the success check and
//! [`daec_regularize::Analysis`] keeps it; it is reused when present).
//! The report lists which values moved and by how much.

use crate::error::SimError;
use crate::hic::SimForm;
use daec_expr::{Env, ExprId, Leaf, ParamId, to_modelica};
use daec_model::{Dae, FlatNames};
use daec_regularize::Analysis;
use daec_regularize::consistent::{ConsistentPoint, ProjectionOptions, consistent_point};
use daec_regularize::formulation::UnknownKind;

/// A start value changed by the initialisation.
#[derive(Debug, Clone, PartialEq)]
pub struct MovedValue {
    /// Index of the unknown.
    pub variable: usize,
    /// Its flat name.
    pub name: String,
    /// The start value (0 when none was given).
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

struct ZEnv<'a> {
    z: &'a [f64],
    params: &'a [f64],
    t: f64,
}

impl Env for ZEnv<'_> {
    fn var(&self, unknown: u32, order: u32) -> f64 {
        if order == 0 {
            self.z.get(unknown as usize).copied().unwrap_or(f64::NAN)
        } else {
            f64::NAN
        }
    }
    fn param(&self, p: ParamId) -> f64 {
        self.params.get(p.0 as usize).copied().unwrap_or(f64::NAN)
    }
    fn time(&self) -> f64 {
        self.t
    }
}

/// Start values of the unknowns (0 where none is given).
pub fn start_values(dae: &Dae) -> Vec<f64> {
    dae.unknowns
        .iter()
        .map(|u| u.start.unwrap_or(0.0))
        .collect()
}

/// Weights of the least-change projection: `1/nominal`, else
/// `1/max(1, |start|)` (the analysis uses the same).
pub fn weights(dae: &Dae) -> Vec<f64> {
    dae.unknowns
        .iter()
        .map(|u| {
            let nominal = u.nominal.map(f64::abs).filter(|x| *x > 0.0);
            1.0 / nominal.unwrap_or_else(|| u.start.map_or(1.0, |s| s.abs().max(1.0)))
        })
        .collect()
}

fn var_names(dae: &Dae, e: ExprId, fixed: &[bool]) -> String {
    let mut out = Vec::new();
    for l in dae.pool.leaves(e) {
        if let Some(Leaf::Var { unknown, order: 0 }) = dae.pool.as_leaf(l)
            && let Some(u) = dae.unknowns.get(unknown as usize)
        {
            let f = if fixed.get(unknown as usize).copied().unwrap_or(false) {
                " (fixed)"
            } else {
                ""
            };
            out.push(format!("`{}`{f}", u.name));
        }
    }
    if out.is_empty() {
        "no unknowns".into()
    } else {
        out.join(", ")
    }
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
    let fixed: Vec<bool> = dae.unknowns.iter().map(|u| u.fixed).collect();
    let params = dae.parameter_values();
    let reg = analysis.regular();
    let ca = reg.and_then(|r| r.constraints.as_ref());
    // The equations: the (hidden) constraints in the model's unknowns, then
    // the initial equations with the derivatives replaced by Ω(t, z).
    let mut eqs: Vec<ExprId> = Vec::new();
    let mut origins: Vec<String> = Vec::new();
    match ca {
        Some(ca) => {
            for c in &ca.constraints {
                eqs.push(c.expr);
                origins.push(format!(
                    "the level-{} constraint from equation {}",
                    c.level,
                    c.source.0 + 1
                ));
            }
        }
        None => {
            for c in &form.constraints {
                let original = dae.pool.leaves(c.expr).into_iter().all(|l| {
                    !matches!(dae.pool.as_leaf(l), Some(Leaf::Var { unknown, .. }) if unknown as usize >= n)
                });
                if original {
                    eqs.push(c.expr);
                    origins.push(format!(
                        "the level-{} constraint from equation {}",
                        c.level,
                        c.equation + 1
                    ));
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
            return Err(SimError::Initialization(format!(
                "the initial equation `{}` contains derivatives that cannot be expressed by the unknowns",
                to_modelica(&dae.pool, ie.residual, &FlatNames(dae))
            )));
        }
        eqs.push(e);
        origins.push(format!("initial equation {}", k + 1));
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
        let what = match point
            .worst_equation
            .and_then(|i| eqs.get(i).map(|&e| (i, e)))
        {
            Some((i, e)) => {
                let origin = origins.get(i).cloned().unwrap_or_default();
                format!(
                    "{origin}, 0 = {}, keeps a residual of {:.3e}; it involves {}",
                    to_modelica(&dae.pool, e, &FlatNames(dae)),
                    point.residual,
                    var_names(dae, e, &fixed)
                )
            }
            None => format!("residual {:.3e}", point.residual),
        };
        return Err(SimError::Initialization(format!(
            "the initial conditions are inconsistent: no point satisfying all (hidden) constraints was found near the start values: {what}; change the start values or fix fewer variables"
        )));
    }
    let z_orig: Vec<f64> = point.z[..n].to_vec();
    let moved = (0..n)
        .filter(|&j| (z_orig[j] - start[j]).abs() > 1e-12 * start[j].abs().max(1.0))
        .map(|j| MovedValue {
            variable: j,
            name: dae.unknowns[j].name.clone(),
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
            return Err(SimError::Initialization(format!(
                "the unknowns the {} formulation adds ({}) could not be computed from its constraints at the consistent initial point (residual {:.3e})",
                form.form.name().to_ascii_uppercase(),
                names.join(", "),
                p.residual
            )));
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
    let state: Vec<(u32, u32)> = (0..n as u32).map(|j| (j, 0)).collect();
    let mut w = weights(dae);
    w.resize(n, 1.0);
    let opts = ProjectionOptions {
        tol: INIT_TOL,
        ..ProjectionOptions::default()
    };
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
    let residual = last.map_or(f64::NAN, |p| p.residual);
    Err(SimError::Numerical(format!(
        "re-initialisation at t = {t} failed: the values after `reinit` cannot be made consistent with the constraints (residual {residual:.3e})",
        t = daec_solve::readable_number(t)
    )))
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
        Err(SimError::Numerical(format!(
            "at t = {t} the unknowns of the {} formulation could not be made consistent with its constraints (residual {:.3e})",
            form.form.name().to_ascii_uppercase(),
            p.residual,
            t = daec_solve::readable_number(t)
        )))
    }
}
