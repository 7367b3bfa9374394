//! Declared invariants (`annotation(__daec(invariant = true))`,
//! [`daec_model::Dae::invariants`]) in the simulation.
//!
//! An invariant `I(t, z) = 0` is a relation the exact solution keeps but
//! the model's equations do not state (the energy of a conservative
//! system; ndsolve-dae-tutorial, "ODEs with Invariants"). It is checked at
//! the consistent initial point (an inconsistent one is a located error)
//! and then enforced in one of two ways:
//!
//! - the overdetermined formulations (HiC, ADA) get it as an additional
//!   constraint row, as QUALIDAES integrates a DAE with its hidden
//!   constraints (steinbrecher2016 §4): the equation selection of every
//!   Jacobian solves it together with the constraints and drops a
//!   differential row instead, so it holds to the Newton tolerance and,
//!   after the end-point projection, to round-off at every step;
//! - NDSolve's "Projection" method (`--method projection`;
//!   ndsolve-dae-tutorial, "Projection"): the formulation is integrated
//!   as it is and every accepted step's end point is projected onto the
//!   model's constraints, all hidden constraints and the invariants with
//!   the least Euclidean change (Gauss–Newton with minimum-norm steps,
//!   `FormProblem::with_full_projection`).

use crate::error::{InitFailure, SimError, Unsupported};
use crate::formulation::SimForm;
use crate::init::InitReport;
use crate::places;
use daec_expr::{Env, ExprId, ExprPool, Leaf, ParamId};
use daec_model::Dae;
use daec_regularize::{Analysis, ConstraintRow, QuasiLinearForm};
use daec_solve::INVARIANT_LEVEL;
use daec_solve::readable_number as show;

/// An invariant whose residual at the consistent initial point exceeds
/// this, relative to `max(1, |lhs|, |rhs|)`, is inconsistent with the
/// initial conditions (the consistent point itself is accurate to
/// `INIT_TOL` = 1e-10).
pub const INVARIANT_START_TOL: f64 = 1e-8;

/// The residuals of the declared invariants of the (first-order) model
/// `dae`, refused when one contains a derivative: after the first-order
/// reduction an invariant must be a function of `t` and the unknowns
/// (velocities are unknowns then), as the constraint rows of a
/// formulation are.
pub fn invariant_rows(dae: &Dae) -> Result<Vec<ExprId>, SimError> {
    let n = dae.unknowns.len();
    let mut rows = Vec::with_capacity(dae.invariants.len());
    for (k, inv) in dae.invariants.iter().enumerate() {
        let bad =
            dae.pool
                .leaves(inv.residual)
                .into_iter()
                .find_map(|l| match dae.pool.as_leaf(l) {
                    Some(Leaf::Var { unknown, order }) if order >= 1 || unknown as usize >= n => {
                        Some(unknown as usize)
                    }
                    _ => None,
                });
        if let Some(j) = bad {
            let name = dae.unknowns.get(j).map_or("?", |u| u.name.as_str());
            let label = places::invariant_label(dae, k, "contains a derivative");
            return Err(SimError::unsupported(
                Unsupported::InvariantDerivative { invariant: k },
                format!(
                    "{} contains the derivative of `{name}`, which the first-order form of the model does not have as an unknown: write the invariant in the unknowns (declare a velocity `v` with `der({name}) = v` and use `v`)",
                    places::invariant(dae, k)
                ),
            )
            .with_labels(label.into_iter().collect()));
        }
        rows.push(inv.residual);
    }
    Ok(rows)
}

/// The value of the model's expressions at `(t, z)`.
struct At<'a> {
    t: f64,
    z: &'a [f64],
    params: &'a [f64],
}

impl Env for At<'_> {
    fn var(&self, unknown: u32, order: u32) -> f64 {
        match order {
            0 => self.z.get(unknown as usize).copied().unwrap_or(f64::NAN),
            _ => f64::NAN,
        }
    }
    fn param(&self, p: ParamId) -> f64 {
        self.params.get(p.0 as usize).copied().unwrap_or(f64::NAN)
    }
    fn time(&self) -> f64 {
        self.t
    }
}

/// Checks every declared invariant at the consistent initial point
/// `init`: one that does not hold there (beyond [`INVARIANT_START_TOL`])
/// contradicts the initial conditions, an initialisation error located at
/// the invariant with its value.
pub fn check_at_start(dae: &Dae, init: &InitReport) -> Result<(), SimError> {
    let params = dae.parameter_values();
    let env = At {
        t: init.t0,
        z: &init.z0,
        params: &params,
    };
    for (k, inv) in dae.invariants.iter().enumerate() {
        let lhs = dae.pool.eval(inv.lhs, &env);
        let rhs = dae.pool.eval(inv.rhs, &env);
        let r = lhs - rhs;
        let scale = 1f64.max(lhs.abs()).max(rhs.abs());
        if r.abs() <= INVARIANT_START_TOL * scale {
            continue;
        }
        let label = places::invariant_label(
            dae,
            k,
            format!("{} = {} at t = {}", show(lhs), show(rhs), show(init.t0)),
        );
        return Err(SimError::initialization(
            InitFailure::Invariant {
                invariant: k,
                residual: r,
            },
            format!(
                "{} does not hold at the consistent initial point (t = {}): its two sides are {} and {} (residual {r:.3e}); an invariant must hold for the initial values, so the start values, the initial equations and the invariant contradict each other",
                places::invariant(dae, k),
                show(init.t0),
                show(lhs),
                show(rhs),
            ),
        )
        .with_labels(label.into_iter().collect()));
    }
    Ok(())
}

/// The rows `rows` (invariants) as constraint rows after `constraints`,
/// of the level [`INVARIANT_LEVEL`]: the equation selection pivots them
/// after the model's constraints, by magnitude alone.
fn push_rows(constraints: &mut Vec<ConstraintRow>, rows: &[ExprId]) {
    constraints.extend(rows.iter().map(|&expr| ConstraintRow {
        expr,
        level: INVARIANT_LEVEL,
        // (no equation of the formulation: `SimForm::rows` has none)
        equation: usize::MAX,
    }));
}

/// `form` with the invariants `rows` as additional constraint rows (the
/// overdetermined formulations, QUALIDAES-style; see the module).
pub fn with_invariant_rows(form: &SimForm, rows: &[ExprId]) -> SimForm {
    let mut ql = form.ql.clone();
    push_rows(&mut ql.constraints, rows);
    let mut f = SimForm::from_parts(
        form.form,
        form.hvt.clone(),
        ql,
        form.n_original,
        form.rows.clone(),
    );
    f.invariants = rows.len();
    f
}

/// The constraints NDSolve's projection method projects onto
/// (ndsolve-dae-tutorial, "Projection": "the original constraints, their
/// derivatives and the invariants"): the hidden constraints of the
/// `analysis` by level — in the model's unknowns, which are the first of
/// the formulation's — where the analysis has them all in that form,
/// else the formulation's own constraints; then the invariants `rows`.
/// The differential rows are `form`'s (the projector evaluates only the
/// constraints).
pub fn projection_form(
    pool: &ExprPool,
    form: &SimForm,
    analysis: &Analysis,
    rows: &[ExprId],
) -> QuasiLinearForm {
    let mut ql = form.ql.clone();
    let hidden = analysis
        .regular()
        .and_then(|r| r.constraints.as_ref())
        .filter(|ca| ca.is_complete())
        .filter(|ca| {
            // (every row a function of `t` and the model's unknowns)
            ca.constraints.iter().all(|c| {
                pool.leaves(c.expr)
                    .into_iter()
                    .all(|l| match pool.as_leaf(l) {
                        Some(Leaf::Var { unknown, order }) => {
                            order == 0 && (unknown as usize) < form.n_original
                        }
                        _ => true,
                    })
            })
        });
    if let Some(ca) = hidden {
        ql.constraints = ca
            .constraints
            .iter()
            .enumerate()
            .map(|(i, c)| ConstraintRow {
                expr: c.expr,
                level: c.level,
                equation: i,
            })
            .collect();
    }
    push_rows(&mut ql.constraints, rows);
    ql
}
