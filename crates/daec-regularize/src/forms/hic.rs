//! The hidden-constraints (HiC) formulation, steinbrecher2016 §3.3,
//! eq. (37):
//!
//! ```text
//!   0 = F(t, z, ż)     the DAE as written (its algebraic rows are level-0
//!                      constraints)
//!   0 = H(t, z)        the array of (hidden) constraints by level, Def. 2.3
//! ```
//!
//! overdetermined, in the original unknowns, solution equivalent to the DAE
//! with Φ = id. The pendulum gives (38): 8 equations in 5 unknowns, the
//! spring chain (Ex. 3.6) 12 in 7. As in (38), the stated constraint
//! appears twice (in `F` and as the level-0 row of `H`); see
//! [`Formulation::duplicate_rows`].

use super::{DerivativeFlags, dae_rows, err, names, original_unknowns, regular};
use crate::Analysis;
use crate::error::{Refusal, RegularizeError};
use crate::formulation::{Form, FormEquation, Formulation, RowKind, RowSource};
use daec_model::Dae;

/// The HiC formulation (37) of `dae`.
pub fn hic(dae: &mut Dae, analysis: &Analysis) -> Result<Formulation, RegularizeError> {
    let form = Form::Hic;
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
    let mut equations = dae_rows(dae, analysis);
    let flags = DerivativeFlags::new(&dae.pool);
    for c in &ca.constraints {
        if flags.get(&dae.pool, c.expr) {
            return Err(err(
                form,
                Refusal::ConstraintKeepsDerivatives {
                    equation: c.source.0,
                },
            ));
        }
        equations.push(FormEquation {
            residual: c.expr,
            kind: RowKind::Constraint { level: c.level },
            source: RowSource {
                equation: c.source.0,
                derivative: c.source.1,
            },
        });
    }
    Ok(Formulation {
        form,
        unknowns: original_unknowns(dae),
        equations,
        hvt: None,
        limits: Vec::new(),
    })
}
