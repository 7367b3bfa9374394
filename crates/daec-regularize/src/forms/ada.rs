//! The algebraic derivative array (ADA) formulation, steinbrecher2016
//! §3.2, eq. (31):
//!
//! ```text
//!   0 = F(t, z, ż)       the DAE as written
//!   0 = 𝓕(t, z, ω)       the algebraic reduced derivative array (7)
//! ```
//!
//! where 𝓕 is the reduced derivative array (4) (`d^k F_i`, `k = 0..c_i`)
//! with every derivative `z_j^(l)`, `1 ≤ l ≤ d_j`, replaced by a new
//! algebraic unknown ω_j^l (Remark 2.4), named `omega_x_l`. Overdetermined
//! and globally valid: the pendulum gives (34), 14 equations in 11
//! unknowns; the spring chain (36), 25 in 20. The rows of 𝓕 are
//! constraints (no derivatives are left) with `level` = the number of
//! differentiations `k` of the row.

use super::{dae_rows, regular, replaced_array, replacement};
use crate::Analysis;
use crate::error::RegularizeError;
use crate::formulation::{Form, Formulation};
use daec_model::Dae;

/// The ADA formulation (31) of `dae`.
pub fn ada(dae: &mut Dae, analysis: &Analysis) -> Result<Formulation, RegularizeError> {
    let reg = regular(dae, analysis, Form::Ada)?;
    let d = reg.sigma.offsets.d.clone();
    let keep = vec![0u32; d.len()];
    let (added, map) = replacement(dae, &d, &keep, "omega");
    let mut equations = dae_rows(dae, analysis);
    equations.extend(replaced_array(dae, reg, &map));
    let mut unknowns = super::original_unknowns(dae);
    unknowns.extend(added);
    Ok(Formulation {
        form: Form::Ada,
        unknowns,
        equations,
        hvt: None,
        limits: Vec::new(),
    })
}
