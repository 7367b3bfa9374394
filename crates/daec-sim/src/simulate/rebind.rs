//! A prepared simulation reused for another parameter set of a parameter
//! study: the formulation and its compiled tapes are kept, the values
//! rebound ([`Prepared::rebind`]).

use super::{Prepared, prepared_limits};
use crate::error::SimError;
use crate::init::initialize;
use crate::invariants::check_at_start;
use crate::outputs::Outputs;
use crate::regularity::SigmaJacobian;
use daec_model::Dae;
use daec_regularize::{Analysis, Form};

impl Prepared {
    /// Whether [`Prepared::rebind`] can reuse this simulation, prepared
    /// from `dae`, for other values: its preparation depended on the
    /// values only through the parameters its tapes read and the
    /// consistent initialisation. That excludes the formulations chosen
    /// at the initial point (StE, DD: the state selection weighs the
    /// Σ-Jacobian's values), the relations frozen into modes and the
    /// `when` events (their values are set at the start values), and
    /// the declared invariants (kept as extra rows of the initialised
    /// formulation).
    pub fn rebindable(&self, dae: &Dae) -> bool {
        !matches!(self.form.form, Form::Ste | Form::Dd)
            && self.ste.is_none()
            && self.modes.is_empty()
            && self.events.is_empty()
            && dae.discrete.is_empty()
            && dae.invariants.is_empty()
            && self.native.is_none()
    }

    /// This simulation prepared for `dae`, a DAE with the structure of the
    /// one it was prepared from ([`Dae::same_structure`], with the nodes
    /// the preparation added to the pool) and other values — `Real`
    /// parameters and the unknowns' start values — with `analysis`, the
    /// analysis of `dae`. The formulation and its tapes are kept with the
    /// parameters rebound ([`crate::FormProblem::set_params`]); the
    /// consistent initial point and the declared invariants' check at it
    /// are computed at `dae`'s values, as [`crate::prepare_method`] does.
    /// The result is the one `prepare_method` builds for `dae`, bit for
    /// bit, when [`Prepared::rebindable`] holds (`None` otherwise). A
    /// simulation that has integrated is rebound as it was prepared only
    /// if the run changed none of its state: rebind a copy kept before.
    pub fn rebind(
        mut self,
        dae: &mut Dae,
        analysis: &Analysis,
    ) -> Option<Result<Prepared, SimError>> {
        if !self.rebindable(dae) {
            return None;
        }
        let init = match initialize(dae, analysis, &self.form) {
            Ok(init) => init,
            Err(e) => return Some(Err(e)),
        };
        if let Err(e) = check_at_start(dae, &init) {
            return Some(Err(e));
        }
        let params = dae.parameter_values();
        self.problem.set_params(&params);
        self.events.set_params(&params);
        self.init = init;
        self.sigma = SigmaJacobian::new(analysis);
        self.limits = prepared_limits(analysis, &self.form);
        self.outputs = Outputs::none(dae);
        self.start_variant = 0;
        Some(Ok(self))
    }
}
