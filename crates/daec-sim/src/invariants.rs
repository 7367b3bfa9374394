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
use crate::init::ZEnv;
use crate::places;
use daec_expr::{ExprId, ExprPool, Leaf};
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
            let name = dae.unknown_name(j);
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

/// The two sides of `inv` at `env` and whether they agree within
/// [`INVARIANT_START_TOL`] (relative to `max(1, |lhs|, |rhs|)`).
fn sides(dae: &Dae, inv: &daec_model::Equation, env: &ZEnv<'_>) -> (f64, f64, bool) {
    let lhs = dae.pool.eval(inv.lhs, env);
    let rhs = dae.pool.eval(inv.rhs, env);
    let scale = 1f64.max(lhs.abs()).max(rhs.abs());
    (lhs, rhs, (lhs - rhs).abs() <= INVARIANT_START_TOL * scale)
}

/// Checks every declared invariant at the consistent initial point
/// `init`: one that does not hold there (beyond [`INVARIANT_START_TOL`])
/// contradicts the initial conditions, an initialisation error located at
/// the invariant with its value.
pub fn check_at_start(dae: &Dae, init: &InitReport) -> Result<(), SimError> {
    let params = dae.parameter_values();
    let env = ZEnv {
        t: init.t0,
        z: &init.z0,
        params: &params,
    };
    for (k, inv) in dae.invariants.iter().enumerate() {
        let (lhs, rhs, holds) = sides(dae, inv, &env);
        if holds {
            continue;
        }
        let r = lhs - rhs;
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
    with_split(form, ql, rows.len())
}

/// `form` without the invariant rows [`with_invariant_rows`] added: the
/// formulation the consistent initial point is computed on.
pub(crate) fn without_invariant_rows(form: &SimForm) -> SimForm {
    let mut ql = form.ql.clone();
    let keep = ql.constraints.len().saturating_sub(form.invariants);
    ql.constraints.truncate(keep);
    with_split(form, ql, 0)
}

/// `form` with the quasi-linear split `ql`, whose last `invariants`
/// constraint rows are declared invariants.
fn with_split(form: &SimForm, ql: QuasiLinearForm, invariants: usize) -> SimForm {
    let mut f = SimForm::from_parts(
        form.form,
        form.hvt.clone(),
        ql,
        form.n_original,
        form.rows.clone(),
    );
    f.invariants = invariants;
    f.limits = form.limits.clone();
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

/// Relative size of `dI/dt` (against the sum of the magnitudes of its
/// terms `|∂I/∂z_j · ż_j|`) below which the time derivative of an
/// invariant counts as vanishing at a point.
pub const DERIVATIVE_TOL: f64 = 1e-8;

/// Points of the manifold of the constraints and invariants, besides the
/// consistent initial point, at which `dI/dt` is checked.
const EXTRA_POINTS: usize = 3;

/// What `daec analyze` reports of a declared invariant.
#[derive(Debug, Clone, PartialEq)]
pub struct InvariantCheck {
    /// Index into [`Dae::invariants`].
    pub invariant: usize,
    /// `lhs − rhs` at the consistent initial point (the simulation's,
    /// honouring `fixed` starts and initial equations).
    pub residual: f64,
    /// Whether that residual is within [`INVARIANT_START_TOL`] of the
    /// sides' size (else `daec simulate` refuses the model).
    pub holds: bool,
    /// The check that the invariant's time derivative vanishes along the
    /// DAE.
    pub derivative: DerivativeCheck,
}

/// The numerical check of `dI/dt = ∂I/∂t + ∂I/∂z · ż = 0` along the DAE,
/// with `ż = Ω(t, z)` the derivatives the Σ-method's analysis solves for
/// (steinbrecher2016 Remark 2.4), at the consistent initial point and at
/// three further points of the manifold of the constraints and
/// invariants (the start moved off it and projected back).
#[derive(Debug, Clone, PartialEq)]
pub enum DerivativeCheck {
    /// `|dI/dt|` stayed within [`DERIVATIVE_TOL`] of the size of its
    /// terms at every point checked.
    Vanishes {
        /// Points checked.
        points: usize,
        /// The largest relative `|dI/dt|` found.
        largest: f64,
    },
    /// `dI/dt` does not vanish: the relation is no invariant of the DAE.
    DoesNotVanish {
        /// Its value at the worst point.
        value: f64,
        /// Relative to the size of its terms there.
        relative: f64,
        /// The point (the model's unknowns after the first-order
        /// reduction, by name).
        at: Vec<(String, f64)>,
    },
    /// Not checked, and why.
    NotChecked(String),
}

/// Checks the declared invariants of `dae` as `daec analyze` reports
/// them: each one's residual at the consistent initial point of the
/// simulation (of the first-order reduction, HiC form), and whether its
/// time derivative vanishes along the DAE ([`DerivativeCheck`]). `Err`
/// when the model cannot be set up for that (the reason).
pub fn check_invariants(dae: &Dae) -> Result<Vec<InvariantCheck>, SimError> {
    if dae.invariants.is_empty() {
        return Ok(Vec::new());
    }
    let mut d = dae.clone();
    crate::first_order::reduce_to_first_order(&mut d);
    let rows = invariant_rows(&d)?;
    let analysis = daec_regularize::analyze(&mut d, &daec_regularize::AnalyzeOptions::default());
    let form = crate::formulation::hic_form(&mut d, &analysis)?;
    let init = crate::init::initialize(&mut d, &analysis, &form)?;
    let params = d.parameter_values();
    let n = d.unknowns.len();
    let z0 = &init.z0[..n.min(init.z0.len())];
    let ca = analysis.regular().and_then(|r| r.constraints.as_ref());
    // The manifold: the model's constraints (all levels) and the invariants.
    let mut manifold: Vec<ExprId> = ca
        .map(|ca| ca.constraints.iter().map(|c| c.expr).collect())
        .unwrap_or_default();
    manifold.extend(&rows);
    let points = manifold_points(&mut d, &manifold, z0, &params, init.t0);
    let mut out = Vec::with_capacity(rows.len());
    for (k, &row) in rows.iter().enumerate() {
        let env = ZEnv {
            t: init.t0,
            z: z0,
            params: &params,
        };
        let (lhs, rhs, holds) = sides(&d, &d.invariants[k], &env);
        let derivative = match ca {
            None => DerivativeCheck::NotChecked(
                "the analysis solved no derivatives of the unknowns".into(),
            ),
            Some(ca) => derivative_check(&mut d, ca, row, &points, &params, init.t0),
        };
        out.push(InvariantCheck {
            invariant: k,
            residual: lhs - rhs,
            holds,
            derivative,
        });
    }
    Ok(out)
}

/// The consistent point `z0` and up to [`EXTRA_POINTS`] points near it on
/// `0 = manifold(t0, z)`: `z0` moved by a few per cent in a fixed pattern
/// and projected back (least change, Gauss–Newton); the projections that
/// do not converge are left out.
fn manifold_points(
    d: &mut Dae,
    manifold: &[ExprId],
    z0: &[f64],
    params: &[f64],
    t0: f64,
) -> Vec<Vec<f64>> {
    let n = z0.len();
    let state: Vec<(u32, u32)> = (0..n as u32).map(|j| (j, 0)).collect();
    let mut points = vec![z0.to_vec()];
    for p in 1..=EXTRA_POINTS {
        let start: Vec<f64> = z0
            .iter()
            .enumerate()
            .map(|(j, &z)| {
                let phase = 1.3 * (j + 1) as f64 * p as f64 + p as f64;
                z + 0.05 * (1.0 + z.abs()) * phase.sin()
            })
            .collect();
        let found = daec_regularize::consistent_point(
            &mut d.pool,
            manifold,
            &state,
            &start,
            &vec![false; n],
            &vec![1.0; n],
            params,
            t0,
            &daec_regularize::ProjectionOptions::default(),
        );
        if found.converged {
            points.push(found.z);
        }
    }
    points
}

/// [`DerivativeCheck`] of the invariant residual `row` at `points`, with
/// the derivatives `ż = Ω(t, z)` of `ca`.
fn derivative_check(
    d: &mut Dae,
    ca: &daec_regularize::ConstraintArray,
    row: ExprId,
    points: &[Vec<f64>],
    params: &[f64],
    t0: f64,
) -> DerivativeCheck {
    let total = d.pool.dt(row);
    let along = ca.substitute_derivatives(&mut d.pool, total);
    let unsolved = d
        .pool
        .leaves(along)
        .into_iter()
        .find_map(|l| match d.pool.as_leaf(l) {
            Some(Leaf::Var { unknown, order }) if order >= 1 => Some(unknown as usize),
            _ => None,
        });
    if let Some(j) = unsolved {
        let name = d.unknown_name(j);
        return DerivativeCheck::NotChecked(format!(
            "the analysis did not solve for the derivative of `{name}`"
        ));
    }
    // The terms ∂I/∂z_j · ż_j, for the scale of dI/dt.
    let mut terms = Vec::new();
    for l in d.pool.leaves(row) {
        if let Some(Leaf::Var { unknown, order: 0 }) = d.pool.as_leaf(l) {
            let g = d.pool.diff(row, l);
            let zd = d.pool.var(unknown, 1);
            let zd = ca.substitute_derivatives(&mut d.pool, zd);
            terms.push(d.pool.mul(g, zd));
        }
    }
    let mut largest = 0.0f64;
    let mut worst: Option<(f64, f64, usize)> = None;
    for (p, z) in points.iter().enumerate() {
        let env = ZEnv { t: t0, z, params };
        let value = d.pool.eval(along, &env);
        let scale = terms
            .iter()
            .map(|&e| d.pool.eval(e, &env).abs())
            .sum::<f64>()
            .max(f64::MIN_POSITIVE);
        let relative = if value == 0.0 {
            0.0
        } else {
            value.abs() / scale
        };
        let relative = if relative.is_nan() {
            f64::INFINITY
        } else {
            relative
        };
        largest = largest.max(relative);
        if relative > DERIVATIVE_TOL && worst.is_none_or(|(_, r, _)| relative > r) {
            worst = Some((value, relative, p));
        }
    }
    match worst {
        None => DerivativeCheck::Vanishes {
            points: points.len(),
            largest,
        },
        Some((value, relative, p)) => DerivativeCheck::DoesNotVanish {
            value,
            relative,
            at: d
                .unknowns
                .iter()
                .zip(&points[p])
                .map(|(u, &x)| (u.name().into_owned(), x))
                .collect(),
        },
    }
}
