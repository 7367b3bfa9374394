//! The index-3 formulation of the *projected Runge–Kutta methods*
//! (projected-rk-index3-daes, §2): the DAE as written
//! ([`Form::Index3`]), integrated by Radau IIA with Hairer's index-aware
//! error scaling (Solving ODEs II, VII.8: the error of an index-`k`
//! variable is weighted by `h^(k−1)`), and after every accepted step the
//! end point projected onto the position and velocity constraints
//! (eq. (2.8); `daec simulate --method radau5-projected --form index3`).
//!
//! Applies to index-3 Hessenberg systems — constrained mechanics
//! `q̇ = v`, `M v̇ = f − Gᵀλ`, `0 = g(q)`: structural index 3 and every
//! stated algebraic constraint a function of the position variables
//! (variable offset `d_j` maximal) only. Anything else is refused with the
//! reason. The position variables have index 1, their derivatives
//! (velocities, `d_j = max d − 1`) index 2, the multipliers (`d_j = 0`)
//! index 3: `index_j = max c + 1 − d_j` (`variable_indices`).

use crate::error::{SimError, Unsupported};
use crate::error_control::variable_indices;
use crate::formulation::{SimForm, sim_form};
use crate::places;
use daec_expr::Leaf;
use daec_model::Dae;
use daec_regularize::{Analysis, RegularizeOptions};
use daec_regularize::{ConstraintRow, Form, QuasiLinearForm};

/// The index-3 formulation and what projected Radau IIA needs beside it.
#[derive(Debug, Clone)]
pub struct Index3Form {
    /// The DAE as written: the differential rows and the stated (level-0)
    /// constraints; square.
    pub form: SimForm,
    /// The manifold of the projection: the position (level-0) and
    /// velocity (level-1) constraints, as a quasi-linear form without
    /// differential rows in the same unknowns.
    pub projection: QuasiLinearForm,
    /// Hairer's index of each unknown (1 positions, 2 velocities,
    /// 3 multipliers).
    pub variable_index: Vec<u8>,
}

fn unsupported(why: impl std::fmt::Display) -> SimError {
    SimError::unsupported(
        Unsupported::MethodModel {
            method: crate::Method::Radau5Projected,
        },
        format!(
            "the index-3 formulation of projected Radau IIA does not apply: {why}; use --form hic (the default) with --method radau5"
        ),
    )
}

/// Builds the index-3 formulation of `dae` (whose `analysis` must be of
/// this `dae`), checking that the model is an index-3 Hessenberg system.
pub fn index3_form(dae: &mut Dae, analysis: &Analysis) -> Result<Index3Form, SimError> {
    if analysis.regular().is_none() {
        return Err(unsupported("the model is structurally singular"));
    }
    let index = analysis.index().unwrap_or(0);
    if index != 3 {
        return Err(unsupported(format!(
            "the model has index {index}, not 3 (projected Runge–Kutta methods are for index-3 Hessenberg systems such as constrained mechanics)"
        )));
    }
    // The HiC form holds the DAE's rows and every hidden constraint by
    // level, split quasi-linearly (velocity unknowns where needed).
    let hic = sim_form(dae, analysis, Form::Hic, &RegularizeOptions::default())?;
    let n = hic.n;
    let n_original = hic.n_original;
    // Hessenberg index 3: `max c = 2` and the positions have the largest
    // offset, so `k_j = max c + 1 − d_j` is 1, 2, 3 as described above.
    let variable_index = variable_indices(analysis, &hic);
    let stated: Vec<ConstraintRow> = hic
        .constraints
        .iter()
        .filter(|c| c.level == 0)
        .cloned()
        .collect();
    if hic.diff.len() + stated.len() != n {
        return Err(unsupported(format!(
            "the DAE as written has {} differential rows and {} algebraic rows for {n} unknowns",
            hic.diff.len(),
            stated.len()
        )));
    }
    // Hessenberg structure: the stated constraints act on positions only.
    for c in &stated {
        for leaf in dae.pool.leaves(c.expr) {
            if let Some(Leaf::Var { unknown, .. }) = dae.pool.as_leaf(leaf) {
                let k = unknown as usize;
                if variable_index.get(k).copied().unwrap_or(1) != 1 {
                    let name = hic.unknowns.get(k).map_or("?", |u| u.name.as_str());
                    let i = hic.rows.get(c.equation).map_or(c.equation, |r| r.equation);
                    let label = places::equation_label(
                        dae,
                        i,
                        format!("algebraic in `{name}`, not a position variable"),
                    );
                    return Err(unsupported(format!(
                        "{} is an algebraic equation in `{name}`, which is not a position variable (not an index-3 Hessenberg system)",
                        places::equation(dae, i)
                    ))
                    .with_labels(label.into_iter().collect()));
                }
            }
        }
    }
    let velocity: Vec<ConstraintRow> = hic
        .constraints
        .iter()
        .filter(|c| c.level == 1)
        .cloned()
        .collect();
    if velocity.is_empty() {
        return Err(unsupported("the model has no velocity-level constraints"));
    }
    let projection = QuasiLinearForm {
        unknowns: hic.unknowns.clone(),
        diff: Vec::new(),
        constraints: stated.iter().chain(&velocity).cloned().collect(),
    };
    let ql = QuasiLinearForm {
        unknowns: hic.unknowns.clone(),
        diff: hic.diff.clone(),
        constraints: stated,
    };
    Ok(Index3Form {
        form: SimForm::from_parts(Form::Index3, None, ql, n_original, hic.rows.clone()),
        projection,
        variable_index,
    })
}
