//! Simulation of flat DAEs: `daec simulate` outside the integrator.
//!
//! The pipeline:
//!
//! 0. [`reduce_to_first_order`] — the reduction of higher-order (and
//!    non-quasi-linear) models to first-order quasi-linear ones;
//! 1. [`sim_form`] — the formulation: HiC (steinbrecher2016 §3.3, eq. (37),
//!    the default), ADA, StE, DD, GGL or DI1 from `daec-regularize`, split
//!    symbolically into `E(t,z)ż = k(t,z)`, `0 = g(t,z)`;
//!    `projected` — the index-3 formulation (the DAE as written) of
//!    projected Radau IIA;
//!    [`integrate_second_order`] — models with `der(der(x))` integrated as written
//!    (`--method radau-2nd`, `bdf-2nd`, `gauss-2nd`, `glm-2nd`);
//! 2. [`FormProblem`] — the formulation compiled to tapes with analytic sparse
//!    Jacobians, as a [`daec_solve::QuasiLinearDae`] for the Radau IIA
//!    integrator (overdetermined systems are integrated as QUALIDAES does,
//!    steinbrecher2016 §4);
//!    [`native`] — the same functions as the source of a native library
//!    (`daec simulate --native`; the CLI builds and loads it);
//! 3. [`InitReport`] — consistent initialisation honouring `fixed` starts and
//!    initial equations, with a report of what moved; [`check_at_start`] —
//!    the declared invariants at that point (`invariants`: enforced as
//!    constraint rows of HiC/ADA or by NDSolve's projection method);
//! 4. [`discontinuities`] and `events` — `when`/`reinit` events located on the dense output and
//!    discontinuities of `time`;
//! 5. [`to_csv`], [`to_svg`], [`SimStats`] — CSV, SVG plot, statistics;
//!    [`split_outputs`] — equations
//!    that only define output variables, split off before the analysis
//!    and evaluated after the steps; [`BoundsCheck`] — `min`/`max` checked
//!    along the run;
//! 6. [`simulate()`] — the driver.
//!
//! This crate does no IO; the CLI writes the files.

mod bounds;
mod error;
mod error_control;
mod events;
mod failure;
mod first_order;
mod formulation;
mod init;
mod invariants;
mod method;
mod modes;
// `native` stays a namespace: the ABI of the native library (`native::NATIVE_ABI`, …).
pub mod native;
mod output;
mod outputs;
mod parallel;
mod places;
mod problem;
mod projected;
mod regularity;
mod second_order;
mod simulate;

pub use bounds::{BoundViolation, BoundsCheck};
pub use daec_solve::ErrorControl;
pub use error::{
    BadOption, FailureCause, InitFailure, NativeError, NumericalFailure, SimError, Unsupported,
    check_derivative_order,
};
pub use error_control::{
    ErrorControlReport, MECHANICAL_DEFAULT, MECHANICAL_RULE, NOT_MECHANICAL_RULE,
    REGULARIZED_DEFAULT, ScaledVariable, check_error_control, default_depends_on_model,
    default_error_control, is_constrained_mechanical, model_error_control, variable_indices,
};
pub use events::{
    DEFAULT_MAX_EVENTS, MAX_EVENT_ITERATIONS, WhenEvents, discontinuities, reinit_diagnostics,
    time_conditions,
};
pub use first_order::reduce_to_first_order;
pub use formulation::{SimForm, hic_form, sim_form};
pub use init::{InitReport, MovedValue};
pub use invariants::{
    DERIVATIVE_TOL, DerivativeCheck, INVARIANT_START_TOL, InvariantCheck, check_at_start,
    check_invariants, invariant_rows,
};
pub use method::{Method, MethodError};
pub use modes::{Modes, RIGHT_LIMIT_STEP, state_jumps, state_relations};
pub use native::{NativeCode, NativeCompiler, NativeSource};
pub use output::{
    InvariantEnforcement, OutputTimes, Plot, PlotError, Results, SimStats, log_grid, output_grid,
    to_csv, to_csv_threads, to_svg,
};
pub use output::{MAX_PANELS, PANEL_SERIES, PARALLEL_CSV_MIN_NUMBERS};
pub use outputs::{Outputs, split_outputs};
pub use parallel::PARALLEL_MIN_OUTPUTS;
pub use problem::FormProblem;
pub use second_order::integrate_second_order;
pub use simulate::{
    EndPoint, MAX_STEPS, Prepared, ResolvedOptions, Restart, SWITCH_FACTOR, SimOptions, Simulation,
    default_form, integrate, integrate_with_progress, prepare, prepare_form, prepare_method,
    resolve_options, simulate,
};

/// A model from its text (a flat `.dae` model), for the unit tests.
#[cfg(test)]
fn dae_of(text: &str) -> daec_model::Dae {
    let mut map = daec_diag::SourceMap::new();
    let file = map.add("test.dae", text.to_string());
    let parsed = daec_syntax::parse(file, map.source(file));
    let (dae, diags) = daec_model::lower(parsed.model.as_ref().unwrap(), &Default::default());
    dae.unwrap_or_else(|| panic!("{diags:?}"))
}
