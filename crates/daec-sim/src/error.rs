//! Errors of the simulation pipeline (all recoverable; no input panics).

use daec_diag::Label;
use std::fmt;

/// Why a simulation could not be set up or could not continue.
#[derive(Debug, Clone, PartialEq)]
pub enum SimError {
    /// The model cannot be simulated with the formulation or method
    /// asked for: the formulation does not apply to it (the reason of
    /// `daec_regularize::regularize` or of its quasi-linear split, e.g. a
    /// structurally singular model or constraints that cannot be
    /// extracted), the method does not fit the formulation or the model
    /// (projected Radau IIA without the index-3 formulation, half-explicit
    /// Runge–Kutta on it, `--method radau-2nd` on a first-order model or
    /// one with events), or a `when` condition or `reinit` value depends
    /// on a derivative. The message names the equations or variables
    /// involved and what to use instead.
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
    /// An error of one of the other kinds with the places in the model's
    /// source it is about (equations, declarations, `reinit`s), which the
    /// CLI shows with the source lines as it shows compile-time
    /// diagnostics. The message names them in words too.
    Located(Box<SimError>, Vec<Label>),
}

impl SimError {
    /// The error with `labels` (places in the model) attached.
    pub fn with_labels(self, labels: Vec<Label>) -> SimError {
        if labels.is_empty() {
            return self;
        }
        match self {
            SimError::Located(e, mut all) => {
                all.extend(labels);
                SimError::Located(e, all)
            }
            e => SimError::Located(Box::new(e), labels),
        }
    }

    /// The error without its places: one of the other variants.
    pub fn kind(&self) -> &SimError {
        match self {
            SimError::Located(e, _) => e.kind(),
            e => e,
        }
    }

    /// The places in the model the error is about (empty when none).
    pub fn labels(&self) -> &[Label] {
        match self {
            SimError::Located(_, labels) => labels,
            _ => &[],
        }
    }

    /// The message, to be extended.
    pub fn message_mut(&mut self) -> &mut String {
        match self {
            SimError::Unsupported(m)
            | SimError::Initialization(m)
            | SimError::Options(m)
            | SimError::Numerical(m)
            | SimError::Native(m) => m,
            SimError::Located(e, _) => e.message_mut(),
        }
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Unsupported(m) => write!(f, "cannot simulate this model: {m}"),
            SimError::Initialization(m) => write!(f, "initialization failed: {m}"),
            SimError::Options(m) => write!(f, "invalid simulation options: {m}"),
            SimError::Numerical(m) => write!(f, "integration failed: {m}"),
            SimError::Native(m) => write!(f, "cannot compile the model to native code: {m}"),
            SimError::Located(e, _) => e.fmt(f),
        }
    }
}

impl std::error::Error for SimError {}
