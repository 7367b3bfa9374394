//! `daec` — a compiler and simulator for differential-algebraic equations.
//!
//! This umbrella crate re-exports the pipeline's crates so that the
//! end-to-end tests under `tests/` (and users embedding daec) reach every
//! stage from one place. See `ARCHITECTURE.md` for the map.

pub use daec_cli as cli;
pub use daec_diag as diag;
pub use daec_expr as expr;
pub use daec_model as model;
pub use daec_regularize as regularize;
pub use daec_structure as structure;
pub use daec_syntax as syntax;
