//! The d-index-1 form DI1 of steinbrecher2016 §5, eqs. (41), (42): the
//! DAE's differential rows and, for each algebraic equation `g_i` (a
//! constraint chain `g_i, g_i', …`), only the highest-level constraint
//! derived from it — usually the one obtained after `c_i`
//! differentiations; where a differentiated `g_i` was used to solve for a
//! derivative, the chain ends lower (the circuit of Bäse Ex. 2.7 keeps
//! its level-0 equations `e1 − sin(100t)`, `q1 − e1 + e2`; only `q2 − e2`
//! is replaced by the level-1 constraint) (the
//! pendulum's acceleration constraint (11b) replaces (10e); the spring
//! chain's level-4 constraint (17d) replaces (16g)). Square, of index 1,
//! and not solution equivalent: the lower-level constraints are lost, so
//! numerical solutions drift from them (on purpose, as the paper's
//! comparison shows).

use super::{err, has_derivative, names, regular};
use crate::Analysis;
use crate::error::{Refusal, RegularizeError};
use crate::formulation::{Form, FormEquation, Formulation, RowKind, RowSource};
use daec_model::Dae;

/// The DI1 formulation of `dae`.
pub fn di1(dae: &mut Dae, analysis: &Analysis) -> Result<Formulation, RegularizeError> {
    let form = Form::Di1;
    let reg = regular(dae, analysis, form)?;
    let Some(ca) = &reg.constraints else {
        return Err(err(form, Refusal::ConstraintsNotBuilt));
    };
    if !ca.is_complete() {
        let vars = ca.unresolved_derivatives.iter().map(|&(j, _)| j as usize);
        return Err(err(
            form,
            Refusal::UneliminatedDerivatives {
                unknowns: names(dae, vars),
            },
        ));
    }
    let mut equations = Vec::with_capacity(analysis.residuals.len());
    for (i, &r) in analysis.residuals.iter().enumerate() {
        if has_derivative(&dae.pool, r) {
            equations.push(FormEquation {
                residual: r,
                kind: RowKind::Differential,
                source: RowSource {
                    equation: i,
                    derivative: 0,
                },
            });
            continue;
        }
        let top = ca
            .constraints
            .iter()
            .filter(|h| h.source.0 == i)
            .max_by_key(|h| (h.level, h.source.1));
        match top {
            Some(h) => equations.push(FormEquation {
                residual: h.expr,
                kind: RowKind::Constraint { level: h.level },
                source: RowSource {
                    equation: i,
                    derivative: h.source.1,
                },
            }),
            None => {
                return Err(err(form, Refusal::NoConstraintOfAlgebraic { equation: i }));
            }
        }
    }
    // Hidden constraints that do not come from an algebraic equation's
    // chain would be lost without being replaced: the result would not be
    // of index 1.
    if let Some(h) = ca
        .constraints
        .iter()
        .find(|h| h.source.1 >= 1 && has_derivative(&dae.pool, analysis.residuals[h.source.0]))
    {
        return Err(err(
            form,
            Refusal::ConstraintOfDifferential {
                equation: h.source.0,
                level: h.level,
            },
        ));
    }
    // Check the result: the Σ-method on it must give index ≤ 1.
    let res: Vec<_> = equations.iter().map(|e| e.residual).collect();
    let sigma = crate::signature::sigma_matrix(&dae.pool, &res, dae.unknowns.len());
    match daec_structure::analyze(&sigma) {
        Ok(sa) if sa.structural_index <= 1 => {}
        Ok(sa) => {
            return Err(err(
                form,
                Refusal::Di1Index {
                    index: sa.structural_index,
                },
            ));
        }
        Err(_) => {
            return Err(err(form, Refusal::Di1StructurallySingular));
        }
    }
    Ok(Formulation {
        form,
        unknowns: super::original_unknowns(dae),
        equations,
        hvt: None,
        limits: Vec::new(),
    })
}
