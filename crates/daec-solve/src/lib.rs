//! Numerical integration of (overdetermined) quasi-linear DAEs with the
//! 3-stage Radau IIA method of order 5.
//!
//! * [`QuasiLinearDae`] — the problem interface `E(t,z)ż = k(t,z)`,
//!   `g(t,z) = 0` with analytic sparse Jacobians (square or overdetermined);
//! * [`Radau5`] — the integrator, designed like Hairer & Wanner's RADAU5
//!   (Solving ODEs II, IV.8): transformed simplified Newton, embedded error
//!   estimate, Gustafsson step control, Jacobian reuse, dense output,
//!   index-aware error scaling;
//! * [`select_equations`] and its variants — the QUALIDAES-style reduction of overdetermined
//!   systems (Steinbrecher 2016, section 4);
//! * [`Herk`] — half-explicit Runge–Kutta methods for overdetermined
//!   semi-implicit DAEs (Bäse 2017, Algorithm 3.3) with automatic
//!   selectors and step doubling;
//! * [`SecondOrderRadau`] — the direct one-step discretisations of
//!   second-order DAEs `F(t, x, ẋ, ẍ) = 0` (Wunderlich 2005, §2.2–2.3):
//!   Radau IIA or Gauss collocation (29)/(30) and the general linear method
//!   of Example 2.11 ([`GeneralLinear`], Nordsieck form (60)), selected by
//!   [`Family`], and the same methods on first-order systems;
//! * [`BdfSecondOrder`] — the modified variable-step variable-order BDF
//!   method for second-order DAEs (Wunderlich 2005, §2.1), ordinary BDF on
//!   first-order systems;
//! * `step` — what every integrator hands its observer: the accepted
//!   [`Step`] with its dense output, [`StepControl`], and the work
//!   counters [`Stats`];
//! * [`first_rising_edge`] — root finding for event functions on the dense output;
//! * [`solve`] — convenience driver returning the solution on a grid.
//!
//! This crate depends on no other `daec` crate.
//!
//! # Example
//!
//! The index-1 DAE `y' = −y`, `0 = x − 2y` (unknowns `z = (y, x)`):
//!
//! ```
//! use daec_solve::{Options, QuasiLinearDae, solve};
//!
//! struct Decay;
//!
//! impl QuasiLinearDae for Decay {
//!     fn n_vars(&self) -> usize { 2 }
//!     fn n_diff(&self) -> usize { 1 }
//!     fn n_constraints(&self) -> usize { 1 }
//!     fn diff_residual(&self, _t: f64, z: &[f64], zdot: &[f64], out: &mut [f64]) {
//!         out[0] = zdot[0] + z[0]; // E ż − k
//!     }
//!     fn constraints(&self, _t: f64, z: &[f64], out: &mut [f64]) {
//!         out[0] = z[1] - 2.0 * z[0];
//!     }
//!     fn mass_pattern(&self) -> Vec<(usize, usize)> { vec![(0, 0)] }
//!     fn mass_values(&self, _t: f64, _z: &[f64], out: &mut [f64]) { out[0] = 1.0; }
//!     fn diff_jacobian_pattern(&self) -> Vec<(usize, usize)> { vec![(0, 0)] }
//!     fn diff_jacobian_values(&self, _t: f64, _z: &[f64], _zd: &[f64], out: &mut [f64]) {
//!         out[0] = 1.0;
//!     }
//!     fn constraint_jacobian_pattern(&self) -> Vec<(usize, usize)> { vec![(0, 0), (0, 1)] }
//!     fn constraint_jacobian_values(&self, _t: f64, _z: &[f64], out: &mut [f64]) {
//!         out.copy_from_slice(&[-2.0, 1.0]);
//!     }
//! }
//!
//! let opts = Options { rtol: 1e-8, atol: 1e-8, ..Options::default() };
//! let out = solve(&Decay, 0.0, &[1.0, 2.0], 1.0, &[0.5, 1.0], opts).unwrap();
//! assert_eq!(out.t, vec![0.5, 1.0]);
//! assert!((out.z[1][0] - (-1.0f64).exp()).abs() < 1e-8);
//! assert!((out.z[1][1] - 2.0 * out.z[1][0]).abs() < 1e-12);
//! println!("{} steps", out.stats.steps_accepted);
//! ```

mod bdf_second_order;
mod error;
mod error_control;
mod events;
mod gauss_second_order;
mod glm_nordsieck;
mod herk;
mod linalg;
mod problem;
mod radau5;
mod second_order;
mod selection;
mod step;

pub use bdf_second_order::{BDF_MAX_ORDER, BdfOptions, BdfSecondOrder, BdfSteps};
pub use error::{ReadableNumber, SolveError, readable_number};
pub use error_control::ErrorControl;
pub use events::{
    EVENT_SAMPLES, REFINE_DEPTH, RisingEdge, edge_tolerance, first_rising_edge, holds, locate_edge,
};
pub use glm_nordsieck::GeneralLinear;
pub use herk::{Herk, HerkOptions, Selectors, Tableau};
pub use linalg::{
    FAER_THRESHOLD, MinNormSystem, PARALLEL_LU_MIN, PIVOT_THRESHOLD, RealLu, SPARSE_THRESHOLD,
    SparsePattern, SparseRealLu, min_norm_solve_sparse, saddle_point_solve_sparse,
};
pub use problem::QuasiLinearDae;
// `tableau` stays a namespace: callers name the Radau IIA constants `tableau::C1`.
pub use radau5::tableau;
pub use radau5::{
    LinearSolver, MIDPOINT_FAILURES, NewtonScaling, Options, RESTART_MIN_GAIN, RESTART_THETA,
    Radau5, Radau5Storage, SolveFailure, Trajectory, solve,
};
pub use second_order::{
    Collocation, Family, SecondOrderDae, SecondOrderOptions, SecondOrderRadau, SecondOrderStep,
    StepSize,
};
pub use selection::{
    EquationSelection, INVARIANT_LEVEL, SelectionWork, select_equations, select_equations_ordered,
    select_equations_sparse, select_rows_in_order,
};
pub use step::{Stats, Step, StepControl};
