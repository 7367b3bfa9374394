//! Simulation of flat DAEs: `daec simulate` outside the integrator.
//!
//! The pipeline (issue 6):
//!
//! 0. [`first_order`] — the reduction of higher-order (and
//!    non-quasi-linear) models to first-order quasi-linear ones;
//! 1. [`hic`] — the HiC formulation of steinbrecher2016 §3.3, eq. (37):
//!    the model's differential equations plus all (hidden) constraints of
//!    the Σ-method analysis, split symbolically into `E(t,z)ż = k(t,z)`,
//!    `0 = H(t,z)`;
//! 2. [`problem`] — the HiC form compiled to tapes with analytic sparse
//!    Jacobians, as a [`daec_solve::QuasiLinearDae`] for the Radau IIA
//!    integrator (overdetermined systems are integrated as QUALIDAES does,
//!    steinbrecher2016 §4);
//! 3. [`init`] — consistent initialisation honouring `fixed` starts and
//!    initial equations, with a report of what moved;
//! 4. [`events`] — `when`/`reinit` events located on the dense output and
//!    discontinuities of `time`;
//! 5. [`output`] — CSV, SVG plot, statistics;
//! 6. [`simulate()`](simulate::simulate) — the driver.
//!
//! This crate does no IO; the CLI writes the files.

pub mod error;
pub mod events;
pub mod first_order;
pub mod hic;
pub mod init;
pub mod output;
pub mod problem;
pub mod simulate;

pub use error::SimError;
pub use first_order::reduce_to_first_order;
pub use hic::{HicForm, hic_form};
pub use init::{InitReport, MovedValue};
pub use output::{Results, SimStats, output_grid, to_csv, to_svg};
pub use problem::HicProblem;
pub use simulate::{
    Prepared, ResolvedOptions, SimOptions, Simulation, integrate, prepare, resolve_options,
    simulate,
};
