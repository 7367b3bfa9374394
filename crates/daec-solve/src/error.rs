//! Typed errors of the integrator.

use thiserror::Error;

/// Why an integration could not be started or could not continue.
///
/// Run-time failures carry the time `t` of the last accepted step (the
/// results up to that time have been delivered to the observer) and the
/// step size `h` that was being attempted.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SolveError {
    /// The problem violates the contract of [`crate::QuasiLinearDae`].
    #[error("invalid problem: {0}")]
    InvalidProblem(String),
    /// The options or initial data are unusable.
    #[error("invalid options: {0}")]
    InvalidOptions(String),
    /// The step size fell below the round-off level of `t`.
    #[error("step size too small at t = {t}: h = {h:e}")]
    StepSizeTooSmall {
        /// Time of the last accepted step.
        t: f64,
        /// Step size that was being attempted.
        h: f64,
    },
    /// The simplified Newton iteration failed to converge too many times in
    /// a row.
    #[error("Newton iteration diverged {failures} times in a row at t = {t} (h = {h:e})")]
    NewtonDivergence {
        /// Time of the last accepted step.
        t: f64,
        /// Step size that was being attempted.
        h: f64,
        /// Consecutive failures.
        failures: usize,
    },
    /// The iteration matrix was singular five times in a row (as RADAU5).
    #[error(
        "singular iteration matrix at t = {t} (h = {h:e}); pivot of variable {variable} vanished"
    )]
    SingularMatrix {
        /// Time of the last accepted step.
        t: f64,
        /// Step size that was being attempted.
        h: f64,
        /// Index of the unknown (column) whose pivot vanished.
        variable: usize,
    },
    /// The overdetermined system `[E; ∂g/∂z]` lost rank.
    #[error("the equations have rank {rank} < {n} unknowns at t = {t}")]
    RankDeficient {
        /// Time of the last accepted step.
        t: f64,
        /// Numerical rank found.
        rank: usize,
        /// Number of unknowns.
        n: usize,
    },
    /// More than `max_steps` step attempts.
    #[error("more than {max_steps} steps needed; stopped at t = {t}")]
    TooManySteps {
        /// Time of the last accepted step.
        t: f64,
        /// The limit from the options.
        max_steps: usize,
    },
}

impl SolveError {
    /// Time of the failure (last accepted step), if it is a run-time failure.
    pub fn time(&self) -> Option<f64> {
        match self {
            Self::InvalidProblem(_) | Self::InvalidOptions(_) => None,
            Self::StepSizeTooSmall { t, .. }
            | Self::NewtonDivergence { t, .. }
            | Self::SingularMatrix { t, .. }
            | Self::RankDeficient { t, .. }
            | Self::TooManySteps { t, .. } => Some(*t),
        }
    }
}
