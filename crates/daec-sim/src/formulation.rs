//! The formulation the integrator runs: any of steinbrecher2016 §3's
//! regularizations (HiC (37) by default, ADA (31), StE (22)) or the
//! baselines of §5 (DD, GGL, DI1), built by
//! [`daec_regularize::regularize`] and split into the quasi-linear form
//! `E(t,z)ż = k(t,z)`, `0 = g(t,z)` by
//! [`daec_regularize::Formulation::quasi_linear`]
//! (first-order derivative leaves only, velocity unknowns where a row is
//! not affine in `ż`). Overdetermined forms (HiC, ADA) are integrated as
//! QUALIDAES does (§4); the square ones through the same Radau IIA.
//!
//! The unknowns are the model's (same indices) followed by the ones the
//! formulation adds (ψ, ω, dummy derivatives, μ, velocities).

use crate::error::{SimError, Unsupported};
use daec_model::Dae;
use daec_regularize::{Analysis, RegularizeOptions, regularize};
use daec_regularize::{Form, Formulation, Limit, QuasiLinearForm, RowSource};

/// A formulation ready for the integrator: its quasi-linear split (reached
/// through `Deref`: `form.diff`, `form.constraints`, `form.unknowns`).
#[derive(Debug, Clone, PartialEq)]
pub struct SimForm {
    /// Which formulation.
    pub form: Form,
    /// StE: the HVT it was built on (`hvt[j] = i`).
    pub hvt: Option<Vec<usize>>,
    /// The quasi-linear split.
    pub ql: QuasiLinearForm,
    /// Number of unknowns `n` of the quasi-linear form.
    pub n: usize,
    /// Number of unknowns of the model (the first ones of the form).
    pub n_original: usize,
    /// Unknowns that occur differentiated (a nonzero column of `E`).
    pub differential: Vec<bool>,
    /// The model equation and number of differentiations each row of the
    /// formulation comes from (indexed by [`daec_regularize::DiffRow::equation`] and
    /// [`daec_regularize::ConstraintRow::equation`]): how messages name a row.
    pub rows: Vec<RowSource>,
    /// How many constraint rows, the last ones, are the model's declared
    /// invariants (HiC and ADA enforce them as constraints; see the
    /// `invariants` module). Their [`daec_regularize::ConstraintRow::equation`]
    /// is `usize::MAX`: no row of the formulation.
    pub invariants: usize,
    /// The size limits that made the construction of the formulation
    /// skip a check ([`Formulation::limits`]).
    pub limits: Vec<Limit>,
}

impl std::ops::Deref for SimForm {
    type Target = QuasiLinearForm;
    fn deref(&self) -> &QuasiLinearForm {
        &self.ql
    }
}

impl SimForm {
    /// Wraps the quasi-linear split of `formulation` for a model with
    /// `n_original` unknowns.
    pub fn new(formulation: &Formulation, ql: QuasiLinearForm, n_original: usize) -> SimForm {
        let rows = formulation.equations.iter().map(|e| e.source).collect();
        let mut f = SimForm::from_parts(
            formulation.form,
            formulation.hvt.clone(),
            ql,
            n_original,
            rows,
        );
        f.limits = formulation.limits.clone();
        f
    }

    /// Wraps the quasi-linear split `ql` of the form `form` (built on the
    /// HVT `hvt` for StE) for a model with `n_original` unknowns, whose
    /// rows come from the model rows `rows`.
    pub fn from_parts(
        form: Form,
        hvt: Option<Vec<usize>>,
        ql: QuasiLinearForm,
        n_original: usize,
        rows: Vec<RowSource>,
    ) -> SimForm {
        let n = ql.n();
        let mut differential = vec![false; n];
        for row in &ql.diff {
            for &(j, _) in &row.mass {
                if let Some(d) = differential.get_mut(j) {
                    *d = true;
                }
            }
        }
        SimForm {
            form,
            hvt,
            ql,
            n,
            n_original,
            differential,
            rows,
            invariants: 0,
            limits: Vec::new(),
        }
    }
}

/// Builds the formulation `form` of `dae` (with the options `opts`, e.g.
/// the HVT of an StE variant) from its `analysis` and splits it.
///
/// Refused with [`SimError::Unsupported`] and the reason (naming equations
/// or variables) when the form does not apply to the model.
pub fn sim_form(
    dae: &mut Dae,
    analysis: &Analysis,
    form: Form,
    opts: &RegularizeOptions,
) -> Result<SimForm, SimError> {
    let n_original = dae.unknowns.len();
    if n_original == 0 {
        return Err(SimError::unsupported(
            Unsupported::NoUnknowns,
            "the model has no unknowns",
        ));
    }
    let f = regularize(dae, analysis, form, opts).map_err(SimError::formulation)?;
    let ql = f
        .quasi_linear(&mut dae.pool)
        .map_err(SimError::formulation)?;
    Ok(SimForm::new(&f, ql, n_original))
}

/// Builds the HiC form (steinbrecher2016 §3.3, eq. (37)) of `dae`.
pub fn hic_form(dae: &mut Dae, analysis: &Analysis) -> Result<SimForm, SimError> {
    sim_form(dae, analysis, Form::Hic, &RegularizeOptions::default())
}
