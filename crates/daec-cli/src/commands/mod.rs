//! One module per subcommand.

mod analyze;
mod flatten;
mod fmu;
mod regularize;
mod simulate;
mod vars;

pub(crate) use analyze::analyze_command;
pub(crate) use flatten::flatten;
pub(crate) use fmu::{FmuArgs, fmu};
pub(crate) use regularize::{RegularizeArgs, regularize_command};
pub(crate) use simulate::{SimulateArgs, simulate};
