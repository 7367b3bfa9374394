//! The analysis of a DAE reused for another DAE of the same structure
//! whose values differ (a parameter study: the same model with other
//! `Real` parameter values and start values).
//!
//! [`analyze`](crate::analyze) depends on values in two places only, both
//! redone here at the new values: the pivots of the symbolic elimination
//! of the hidden constraints are chosen at the reference point (the start
//! values and parameters, [`hidden_constraints`]), and the success check
//! computes the consistent point and the Σ-Jacobian's regularity there
//! (steinbrecher2016, Algorithm 2.1 step 6). The rest — the signature
//! matrix, the offsets (Pryce 2001), the HVTs, the symbolic Σ-Jacobian,
//! the derivative array and Pantelides' algorithm — depends on the
//! equations alone and is kept. Linear-combination conversions and roots
//! fixed at the consistent point follow from a singular Σ-Jacobian, so an
//! analysis that needed them is not reused, nor is one whose success
//! check at the new values finds the Σ-Jacobian singular.

use crate::hidden_constraints::{ReferencePoint, hidden_constraints};
use crate::success_check::success_check;
use crate::{Analysis, AnalyzeOptions, Outcome, RootFixing, start_values};
use daec_model::Dae;

/// Whether [`reanalyze`] can reuse `analysis`: the DAE is structurally
/// regular, its Σ-Jacobian is not singular at the consistent point, and
/// no conversion or root fixing was needed.
pub fn reusable(analysis: &Analysis) -> bool {
    analysis.regular().is_some_and(|r| !r.success.singular())
        && analysis.conversions.is_empty()
        && analysis.before_conversion.is_none()
        && analysis.before_fixing.is_none()
        && analysis.roots == RootFixing::default()
}

/// The analysis of `dae`, which must have the structure of the DAE that
/// `base` was computed for (the same pool, equations, unknowns and
/// parameters; values such as `Real` parameter values and start values
/// may differ) and whose pool already holds the nodes that analysis
/// added: `base` with the hidden constraints derived again and the success
/// check redone at `dae`'s values. It equals what
/// [`analyze`](crate::analyze) computes for `dae`. `None` when `base` is
/// not [`reusable`], when a pivot of the hidden constraints changes at the
/// new values (the constraints differ), or when the Σ-Jacobian is singular
/// there (then `analyze` goes on with conversions or fixed roots).
pub fn reanalyze(dae: &mut Dae, base: &Analysis, options: &AnalyzeOptions) -> Option<Analysis> {
    if !reusable(base) {
        return None;
    }
    let Outcome::Regular(reg) = &base.outcome else {
        return None;
    };
    // (as `analyze_residuals` computes them)
    let params = dae.parameter_values();
    let start = start_values(dae);
    let t0 = dae.experiment.start_time.unwrap_or(0.0);
    let orders = base.sigma.column_orders();
    if let Some(da) = &reg.derivative_array {
        let reference = ReferencePoint {
            z: &start,
            params: &params,
            t: t0,
        };
        let ca = hidden_constraints(&mut dae.pool, da, &reg.sigma.offsets, &orders, &reference);
        if reg.constraints.as_ref() != Some(&ca) {
            return None;
        }
    }
    let success = success_check(
        dae,
        &reg.jacobian,
        reg.constraints.as_ref(),
        &orders,
        &start,
        &params,
        t0,
        &reg.sigma.fine_btf,
        options,
    );
    if success.singular() {
        return None;
    }
    let mut analysis = base.clone();
    if let Outcome::Regular(reg) = &mut analysis.outcome {
        reg.success = success;
    }
    Some(analysis)
}
