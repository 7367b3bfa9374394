//! Errors of the simulation pipeline (all recoverable; no input panics).

use std::fmt;

/// Why a simulation could not be set up or could not continue.
#[derive(Debug, Clone, PartialEq)]
pub enum SimError {
    /// The model cannot be brought into the HiC form (steinbrecher2016
    /// §3.3): structurally singular, constraints not extractable,
    /// not quasi-linear, or of order > 1. The message names the
    /// equations/variables involved.
    Unsupported(String),
    /// The initial conditions are inconsistent or underdetermined; the
    /// message names the variables involved.
    Initialization(String),
    /// Bad simulation options (tolerances, interval, end time).
    Options(String),
    /// A numerical failure during the integration (exit code 3 in the
    /// CLI); the message gives the time, the cause and the variables.
    Numerical(String),
    /// `--native`: the model's native code could not be compiled or
    /// loaded (no `rustc`, a failed build, a library that does not fit);
    /// the message says which.
    Native(String),
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Unsupported(m) => write!(f, "cannot simulate this model: {m}"),
            SimError::Initialization(m) => write!(f, "initialization failed: {m}"),
            SimError::Options(m) => write!(f, "invalid simulation options: {m}"),
            SimError::Numerical(m) => write!(f, "integration failed: {m}"),
            SimError::Native(m) => write!(f, "cannot compile the model to native code: {m}"),
        }
    }
}

impl std::error::Error for SimError {}
