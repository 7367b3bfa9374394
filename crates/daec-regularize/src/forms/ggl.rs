//! The Gear–Gupta–Leimkuhler (GGL) stabilisation (1985), the baseline
//! RADAU5(GGL) of steinbrecher2016 §5, eq. (40): for a mechanical system
//! with position constraints `0 = g(t, q)` and multipliers,
//!
//! ```text
//!   q̇ = v − G(q)ᵀ μ          the kinematic rows, with new multipliers μ
//!   M v̇ = f − G(q)ᵀ λ        unchanged
//!   0 = g(t, q)               unchanged (position level)
//!   0 = G(q) v + g_t          the velocity-level hidden constraint
//! ```
//!
//! with `G = ∂g/∂q`. Square, index 2, solution equivalent (μ = 0 on
//! solutions). Applies when every algebraic equation of the DAE is a
//! position constraint — differentiated exactly twice by the Σ-method
//! (`c_i = 2`: position → velocity → acceleration) and a function of
//! positions only, i.e. of unknowns `q_j` that have a *kinematic row*, an
//! equation whose only derivative is `q̇_j`, linearly. In residual form a
//! kinematic row `r(q̇_j, …) = a·q̇_j + …` becomes `r + a·Σ_k G_kj μ_k`.
//! The velocity constraint is the analysis' level-1 hidden constraint
//! derived from `g_k` (for the pendulum `2xv + 2yw`, (11a)).

use super::{Namer, err, has_derivative, names, regular};
use crate::Analysis;
use crate::error::{Refusal, RegularizeError};
use crate::formulation::{
    Form, FormEquation, FormUnknown, Formulation, RowKind, RowSource, UnknownKind,
};
use daec_expr::{ExprId, Leaf};
use daec_model::Dae;

/// The GGL formulation of `dae`.
pub fn ggl(dae: &mut Dae, analysis: &Analysis) -> Result<Formulation, RegularizeError> {
    let form = Form::Ggl;
    let reg = regular(dae, analysis, form)?;
    let Some(ca) = &reg.constraints else {
        return Err(err(form, Refusal::ConstraintsNotBuilt));
    };
    let n = dae.unknowns.len();
    let c = &reg.sigma.offsets.c;
    let res = &analysis.residuals;
    let algebraic: Vec<usize> = (0..res.len())
        .filter(|&i| !has_derivative(&dae.pool, res[i]))
        .collect();
    if algebraic.is_empty() {
        return Err(err(form, Refusal::NoAlgebraicEquations));
    }
    if let Some(&i) = algebraic.iter().find(|&&i| c[i] != 2) {
        return Err(err(
            form,
            Refusal::NotPositionConstraint {
                equation: i,
                differentiations: c[i],
            },
        ));
    }
    // Kinematic rows: the only derivative is q̇_j, linearly with a nonzero
    // coefficient.
    let mut kinematic: Vec<Option<(usize, ExprId)>> = vec![None; n];
    for (i, &r) in res.iter().enumerate() {
        let ders: Vec<(u32, ExprId)> = dae
            .pool
            .leaves(r)
            .into_iter()
            .filter_map(|l| match dae.pool.as_leaf(l) {
                Some(Leaf::Var { unknown, order }) if order >= 1 => Some((unknown, l)),
                _ => None,
            })
            .collect();
        if let [(j, leaf)] = ders[..] {
            let j = j as usize;
            if j < n
                && kinematic[j].is_none()
                && let Some((coef, _)) = dae.pool.linear_in(r, &[leaf])
                && dae.pool.as_constant(coef[0]) != Some(0.0)
            {
                kinematic[j] = Some((i, coef[0]));
            }
        }
    }
    // Positions in each constraint.
    let mut positions: Vec<Vec<usize>> = Vec::new();
    for &i in &algebraic {
        let vars: Vec<usize> = dae
            .pool
            .max_orders(res[i])
            .into_iter()
            .map(|(j, _)| j as usize)
            .collect();
        let bad: Vec<usize> = vars
            .iter()
            .copied()
            .filter(|&j| j >= n || kinematic[j].is_none())
            .collect();
        if !bad.is_empty() {
            return Err(err(
                form,
                Refusal::NonKinematicUnknowns {
                    equation: i,
                    unknowns: names(dae, bad.iter().copied()),
                },
            ));
        }
        if vars.is_empty() {
            return Err(err(
                form,
                Refusal::ConstraintWithoutUnknowns { equation: i },
            ));
        }
        positions.push(vars);
    }
    // Velocity constraints: the level-1 hidden constraint of each g_k.
    let mut velocity: Vec<ExprId> = Vec::new();
    for &i in &algebraic {
        let Some(h) = ca
            .constraints
            .iter()
            .find(|h| h.source == (i, 1) && !has_derivative(&dae.pool, h.expr))
        else {
            return Err(err(form, Refusal::NoVelocityConstraint { equation: i }));
        };
        velocity.push(h.expr);
    }
    // Unknowns: z, then one μ per position constraint.
    let mut namer = Namer::new(dae);
    let m = algebraic.len();
    let mut unknowns = super::original_unknowns(dae);
    let first_velocity_row = res.len();
    for k in 0..m {
        let name = if m == 1 {
            namer.fresh("mu".into())
        } else {
            namer.fresh(format!("mu_{}", k + 1))
        };
        unknowns.push(FormUnknown {
            name,
            kind: UnknownKind::Multiplier {
                constraint: first_velocity_row + k,
            },
        });
    }
    // Kinematic rows + a·Σ_k G_kj μ_k.
    let mut extra: Vec<Vec<ExprId>> = vec![Vec::new(); res.len()];
    for (k, &i) in algebraic.iter().enumerate() {
        let mu = dae.pool.var((n + k) as u32, 0);
        for &j in &positions[k] {
            let q = dae.pool.var(j as u32, 0);
            let g_kj = dae.pool.diff(res[i], q);
            if dae.pool.as_constant(g_kj) == Some(0.0) {
                continue;
            }
            let Some((row, coef)) = kinematic[j] else {
                continue;
            };
            let t1 = dae.pool.mul(g_kj, mu);
            let t = dae.pool.mul(coef, t1);
            extra[row].push(t);
        }
    }
    let mut equations = Vec::with_capacity(res.len() + m);
    for (i, &r) in res.iter().enumerate() {
        let residual = if extra[i].is_empty() {
            r
        } else {
            let mut terms = vec![r];
            terms.extend(extra[i].iter().copied());
            dae.pool.sum(&terms)
        };
        let kind = if has_derivative(&dae.pool, residual) {
            RowKind::Differential
        } else {
            RowKind::Constraint { level: 0 }
        };
        equations.push(FormEquation {
            residual,
            kind,
            source: RowSource {
                equation: i,
                derivative: 0,
            },
        });
    }
    for (k, &i) in algebraic.iter().enumerate() {
        equations.push(FormEquation {
            residual: velocity[k],
            kind: RowKind::Constraint { level: 1 },
            source: RowSource {
                equation: i,
                derivative: 1,
            },
        });
    }
    Ok(Formulation {
        form,
        unknowns,
        equations,
        hvt: None,
        limits: Vec::new(),
    })
}
