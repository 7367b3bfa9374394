//! Simulation of flat DAEs: `daec simulate` outside the integrator.
//!
//! The pipeline:
//!
//! 0. [`first_order`] — the reduction of higher-order (and
//!    non-quasi-linear) models to first-order quasi-linear ones;
//! 1. [`formulation`] — the formulation: HiC (steinbrecher2016 §3.3, eq. (37),
//!    the default), ADA, StE, DD, GGL or DI1 from `daec-regularize`, split
//!    symbolically into `E(t,z)ż = k(t,z)`, `0 = g(t,z)`;
//!    [`projected`] — the index-3 formulation (the DAE as written) of
//!    projected Radau IIA;
//!    [`second_order`] — models with `der(der(x))` integrated as written
//!    (`--method radau-2nd`);
//! 2. [`problem`] — the formulation compiled to tapes with analytic sparse
//!    Jacobians, as a [`daec_solve::QuasiLinearDae`] for the Radau IIA
//!    integrator (overdetermined systems are integrated as QUALIDAES does,
//!    steinbrecher2016 §4);
//!    [`native`] — the same functions as the source of a native library
//!    (`daec simulate --native`; the CLI builds and loads it);
//! 3. [`init`] — consistent initialisation honouring `fixed` starts and
//!    initial equations, with a report of what moved;
//! 4. [`events`] — `when`/`reinit` events located on the dense output and
//!    discontinuities of `time`;
//! 5. [`output`] — CSV, SVG plot, statistics; [`outputs`] — equations
//!    that only define output variables, split off before the analysis
//!    and evaluated after the steps; [`bounds`] — `min`/`max` checked
//!    along the run;
//! 6. [`simulate()`](simulate::simulate) — the driver.
//!
//! This crate does no IO; the CLI writes the files.

pub mod bounds;
pub mod error;
pub mod events;
pub mod first_order;
pub mod formulation;
pub mod init;
pub mod method;
pub mod native;
pub mod output;
pub mod outputs;
mod places;
pub mod problem;
pub mod projected;
mod regularity;
pub mod second_order;
pub mod simulate;

pub use bounds::{BoundViolation, BoundsCheck};
pub use error::SimError;
pub use first_order::reduce_to_first_order;
pub use formulation::{SimForm, hic_form, sim_form};
pub use init::{InitReport, MovedValue};
pub use method::Method;
pub use native::{NativeCode, NativeCompiler, NativeSource};
pub use output::{OutputTimes, Plot, Results, SimStats, log_grid, output_grid, to_csv, to_svg};
pub use outputs::{Outputs, split_outputs};
pub use problem::FormProblem;
pub use simulate::{
    MAX_STEPS, Prepared, ResolvedOptions, SWITCH_FACTOR, SimOptions, Simulation, default_form,
    integrate, integrate_with_progress, prepare, prepare_form, resolve_options, simulate,
};
