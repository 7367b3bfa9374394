//! A prepared simulation reused for another parameter set of a parameter
//! study: the formulation and its compiled tapes are kept, the values
//! rebound ([`Prepared::rebind`]).
//!
//! What [`crate::prepare_method`] computes from values, and so what a
//! rebinding redoes at the new ones:
//!
//! * the parameters the tapes read (the formulation's, the `when`
//!   events', the relations' crossings, the invariants', the
//!   projector's): reloaded ([`crate::FormProblem::set_params`]);
//! * the modes of the relations in `if` conditions: set from the start
//!   values, then from the consistent initial point, the initialisation
//!   repeated while they change (MLS 3.6 §8.6), as the preparation does;
//! * the consistent initial point, and the declared invariants' check
//!   there;
//! * the state selection of StE and DD made at the consistent point
//!   (steinbrecher2016 §3.1, the HVT of largest `κ_T`; Mattsson–Söderlind
//!   pivoting): chosen again at the new values; the prepared simulation
//!   serves when the choice is the one it was built on, else the run is
//!   prepared anew.
//!
//! The discrete variables' start values and `pre` values are parameters
//! of the DAE, rebound with the others; the `when` conditions and the
//! `sample` times are evaluated from them at the start of the run, as in a
//! run prepared alone.

use super::variants::dummy_levels;
use super::{Prepared, prepared_limits};
use crate::error::SimError;
use crate::events::MAX_EVENT_ITERATIONS;
use crate::init::{initialize, start_values};
use crate::invariants::{check_at_start, without_invariant_rows};
use crate::outputs::Outputs;
use crate::regularity::SigmaJacobian;
use daec_model::Dae;
use daec_regularize::{Analysis, Form, RegularizeOptions, dd_levels, regularize};
use std::borrow::Cow;

impl Prepared {
    /// Whether [`Prepared::rebind`] can reuse this simulation, prepared
    /// from `dae`, for other values. Every simulation a preparation
    /// builds can be, except one already compiled to native code (the
    /// compiled library is installed after the preparation, and a
    /// rebound copy compiles it again from its cache) — rebind the copy
    /// kept before. Whether it serves for given values is decided by
    /// [`Prepared::rebind`] at those values.
    pub fn rebindable(&self) -> bool {
        self.native.is_none()
    }

    /// This simulation prepared for `dae`, a DAE with the structure of the
    /// one it was prepared from ([`Dae::same_structure`], with the nodes
    /// the preparation added to the pool) and other values — `Real`
    /// parameters, the discrete variables' and the unknowns' start values
    /// — with `analysis`, the analysis of `dae`. The formulation and its
    /// tapes are kept with the parameters rebound; the modes, the
    /// consistent initial point, the declared invariants' check at it and
    /// the state selection of StE and DD are computed at `dae`'s values,
    /// as [`crate::prepare_method`] does (see the module docs). The result
    /// is the one `prepare_method` builds for `dae`, bit for bit; `None`
    /// when the simulation does not serve for these values (not
    /// [`Prepared::rebindable`], or StE or DD choose another state
    /// selection there): then prepare `dae` anew. A simulation that has
    /// integrated is rebound as it was prepared only if the run changed
    /// none of its state: rebind a copy kept before.
    pub fn rebind(
        mut self,
        dae: &mut Dae,
        analysis: &Analysis,
    ) -> Option<Result<Prepared, SimError>> {
        if !self.rebindable() {
            return None;
        }
        match self.same_selection(dae, analysis) {
            Ok(true) => {}
            Ok(false) => return None,
            Err(e) => return Some(Err(e)),
        }
        Some(self.rebound(dae, analysis).map(|()| self))
    }

    /// Whether the state selection of StE or DD at `dae`'s values (the
    /// choice [`regularize`] makes with `analysis`) is the one this
    /// simulation was built on; true for the other formulations, which
    /// choose nothing by value.
    fn same_selection(&self, dae: &mut Dae, analysis: &Analysis) -> Result<bool, SimError> {
        match self.form.form {
            Form::Dd => {
                let levels = dd_levels(dae, analysis).map_err(SimError::formulation)?;
                Ok(levels == dummy_levels(&self.form))
            }
            Form::Ste => {
                // (the same HVT builds the same nodes, which the pool
                // holds already: the choice adds nothing to it)
                let f = regularize(dae, analysis, Form::Ste, &RegularizeOptions::default())
                    .map_err(SimError::formulation)?;
                Ok(f.hvt == self.form.hvt)
            }
            _ => Ok(true),
        }
    }

    /// The values-dependent part of [`crate::prepare_method`] redone for
    /// `dae` (see [`Prepared::rebind`]).
    fn rebound(&mut self, dae: &mut Dae, analysis: &Analysis) -> Result<(), SimError> {
        // The modes as the preparation sets them: from the start values,
        // then from the consistent point until they hold (MLS 3.6 §8.6).
        let t0 = dae.experiment.start_time.unwrap_or(0.0);
        self.modes.reset(dae);
        self.modes.set_from(dae, t0, &start_values(dae));
        // (the consistent point is that of the model without the
        // invariant rows the overdetermined forms carry)
        let form = if self.form.invariants == 0 {
            Cow::Borrowed(&self.form)
        } else {
            Cow::Owned(without_invariant_rows(&self.form))
        };
        let mut init = initialize(dae, analysis, &form)?;
        for _ in 0..MAX_EVENT_ITERATIONS {
            if !self.modes.set_from(dae, init.t0, &init.z0) {
                break;
            }
            init = initialize(dae, analysis, &form)?;
        }
        check_at_start(dae, &init)?;
        let params = dae.parameter_values();
        self.problem.set_params(&params);
        self.events.set_params(&params);
        if let Some(ste) = &mut self.ste {
            *ste.analysis = analysis.clone();
            ste.built.clear();
        }
        self.init = init;
        self.sigma = SigmaJacobian::new(analysis);
        self.limits = prepared_limits(analysis, &self.form);
        self.outputs = Outputs::none(dae);
        self.start_variant = 0;
        Ok(())
    }
}
