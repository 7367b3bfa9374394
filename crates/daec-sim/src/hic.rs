//! The HiC formulation (steinbrecher2016 §3.3, eq. (37)): the model's
//! differential equations together with *all* (hidden) constraints
//! `0 = H(t, z)` of the Σ-method analysis,
//!
//! ```text
//!   E(t, z) ż = k(t, z)    every residual of the DAE that contains a derivative
//!          0  = H(t, z)    the constraint array by level (level 0 includes the
//!                          DAE's purely algebraic equations)
//! ```
//!
//! an overdetermined quasi-linear DAE of d-index 1 that `daec-solve`
//! integrates as QUALIDAES does (§4). The quasi-linear split is done
//! symbolically with [`daec_expr::ExprPool::linear_in`] on the derivative
//! leaves `ż_j`: the coefficients are the row of `E`, the rest is `−k`.

use crate::error::SimError;
use daec_expr::{ExprId, ExprPool, Leaf};
use daec_model::Dae;
use daec_regularize::Analysis;

/// One differential row `Σ_j E_ij(t,z) ż_j − k_i(t,z) = 0`.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffRow {
    /// Index of the model equation (in `Analysis::residuals`).
    pub equation: usize,
    /// The residual `E_i·ż − k_i` (the model equation itself).
    pub residual: ExprId,
    /// The nonzero entries `(j, E_ij)` of the row of `E`.
    pub mass: Vec<(usize, ExprId)>,
}

/// One constraint row `0 = h(t, z)`.
#[derive(Debug, Clone, PartialEq)]
pub struct ConstraintRow {
    /// The residual, a function of `t`, `z` and parameters only.
    pub expr: ExprId,
    /// Constraint level (0 = stated, ≥ 1 hidden; steinbrecher2016 Ex. 2.7).
    pub level: u32,
    /// The model equation it was derived from.
    pub equation: usize,
}

/// The HiC form of a first-order quasi-linear DAE.
#[derive(Debug, Clone, PartialEq)]
pub struct HicForm {
    /// Number of unknowns `n`.
    pub n: usize,
    /// The differential part.
    pub diff: Vec<DiffRow>,
    /// The constraints `H`, ordered by level.
    pub constraints: Vec<ConstraintRow>,
    /// Unknowns that occur differentiated (`ż_j` in some row).
    pub differential: Vec<bool>,
}

impl HicForm {
    /// The largest constraint level (ν_c), `None` without constraints.
    pub fn max_level(&self) -> Option<u32> {
        self.constraints.iter().map(|c| c.level).max()
    }
}

fn names(dae: &Dae, vars: &[u32]) -> String {
    let mut v: Vec<u32> = vars.to_vec();
    v.sort_unstable();
    v.dedup();
    v.iter()
        .map(|&j| {
            let name = dae
                .unknowns
                .get(j as usize)
                .map_or("?", |u| u.name.as_str());
            format!("`{name}`")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Builds the HiC form of `dae` from its `analysis` (which must be the
/// analysis of this `dae`: the expressions live in `dae.pool`, which grows).
///
/// Refused with [`SimError::Unsupported`] and a message naming the
/// equations or variables when the model is structurally singular, when
/// some derivative could not be eliminated from the constraints, when a
/// residual is not linear in the derivatives, or when a variable occurs
/// with a derivative of order > 1 (second-order models must be written in
/// first-order form).
pub fn hic_form(dae: &mut Dae, analysis: &Analysis) -> Result<HicForm, SimError> {
    let n = dae.unknowns.len();
    if n == 0 {
        return Err(SimError::Unsupported("the model has no unknowns".into()));
    }
    let Some(reg) = analysis.regular() else {
        return Err(SimError::Unsupported(
            "the model is structurally singular (see `daec analyze`)".into(),
        ));
    };
    let Some(ca) = &reg.constraints else {
        return Err(SimError::Unsupported(
            "the hidden constraints were not built (model too large for the analysis)".into(),
        ));
    };
    if !ca.is_complete() {
        let vars: Vec<u32> = ca.unresolved_derivatives.iter().map(|&(j, _)| j).collect();
        return Err(SimError::Unsupported(format!(
            "some derivatives could not be eliminated symbolically from the hidden constraints (of {})",
            names(dae, &vars)
        )));
    }
    // Orders: first-order models only.
    let mut high: Vec<u32> = Vec::new();
    for &r in &analysis.residuals {
        for (j, o) in dae.pool.max_orders(r) {
            if o > 1 {
                high.push(j);
            }
        }
    }
    if !high.is_empty() {
        return Err(SimError::Unsupported(format!(
            "derivatives of order > 1 of {}; write the model in first-order form (a new unknown `v` with `der(x) = v` for each such `x`)",
            names(dae, &high)
        )));
    }
    let dvars: Vec<ExprId> = (0..n as u32).map(|j| dae.pool.var(j, 1)).collect();
    let is_derivative = |pool: &ExprPool, l: ExprId| matches!(pool.as_leaf(l), Some(Leaf::Var { order, .. }) if order >= 1);
    let mut diff = Vec::new();
    let mut algebraic = Vec::new();
    let mut differential = vec![false; n];
    for (i, &r) in analysis.residuals.iter().enumerate() {
        let has_der = dae
            .pool
            .leaves(r)
            .into_iter()
            .any(|l| is_derivative(&dae.pool, l));
        if !has_der {
            algebraic.push((i, r));
            continue;
        }
        let Some((coefs, _rest)) = dae.pool.linear_in(r, &dvars) else {
            return Err(SimError::Unsupported(format!(
                "equation {} is not linear in the derivatives (the integrator needs the quasi-linear form E(t,z)ż = k(t,z))",
                i + 1
            )));
        };
        let mass: Vec<(usize, ExprId)> = coefs
            .into_iter()
            .enumerate()
            .filter(|(_, c)| dae.pool.as_constant(*c) != Some(0.0))
            .collect();
        for &(j, _) in &mass {
            differential[j] = true;
        }
        diff.push(DiffRow {
            equation: i,
            residual: r,
            mass,
        });
    }
    let mut constraints: Vec<ConstraintRow> = Vec::new();
    for c in &ca.constraints {
        if dae
            .pool
            .leaves(c.expr)
            .into_iter()
            .any(|l| is_derivative(&dae.pool, l))
        {
            return Err(SimError::Unsupported(format!(
                "a hidden constraint of equation {} still contains derivatives",
                c.source.0 + 1
            )));
        }
        constraints.push(ConstraintRow {
            expr: c.expr,
            level: c.level,
            equation: c.source.0,
        });
    }
    // The DAE's own algebraic equations are level-0 constraints; the
    // analysis normally lists them already (hash-consing makes equal
    // residuals equal ids).
    for (i, r) in algebraic {
        if !constraints.iter().any(|c| c.expr == r) {
            constraints.push(ConstraintRow {
                expr: r,
                level: 0,
                equation: i,
            });
        }
    }
    constraints.sort_by_key(|c| c.level);
    Ok(HicForm {
        n,
        diff,
        constraints,
        differential,
    })
}
