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
    #[error("step size too small at t = {}: h = {h:e}", readable_number(*.t))]
    StepSizeTooSmall {
        /// Time of the last accepted step.
        t: f64,
        /// Step size that was being attempted.
        h: f64,
    },
    /// The simplified Newton iteration failed to converge too many times in
    /// a row.
    #[error(
        "Newton iteration diverged {failures} times in a row at t = {} (h = {h:e})",
        readable_number(*.t)
    )]
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
        "singular iteration matrix at t = {} (h = {h:e}); pivot of variable {variable} vanished",
        readable_number(*.t)
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
    #[error(
        "the equations have rank {rank} < {n} unknowns at t = {}",
        readable_number(*.t)
    )]
    RankDeficient {
        /// Time of the last accepted step.
        t: f64,
        /// Numerical rank found.
        rank: usize,
        /// Number of unknowns.
        n: usize,
    },
    /// The limit of step attempts was reached (accepted and rejected
    /// steps and Newton failures, as the statistics count them).
    #[error(
        "the limit of {max_steps} step attempts (accepted and rejected steps and Newton failures) was reached at t = {}",
        readable_number(*.t)
    )]
    TooManySteps {
        /// Time of the last accepted step.
        t: f64,
        /// The limit from the options.
        max_steps: usize,
    },
}

/// A number displayed as the shortest decimal that reads back as it, in
/// exponent form where plain digits would be long (`1e-12`, not
/// `0.000000000001`; `1e300`, not three hundred digits): the form of the
/// messages and of `daec simulate`'s CSV.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReadableNumber(pub f64);

impl std::fmt::Display for ReadableNumber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let x = self.0;
        if x == 0.0 || !x.is_finite() || (1e-4..1e15).contains(&x.abs()) {
            write!(f, "{x}")
        } else {
            write!(f, "{x:e}")
        }
    }
}

/// `x` for a message ([`ReadableNumber`]).
pub fn readable_number(x: f64) -> String {
    ReadableNumber(x).to_string()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_in_messages_are_readable_at_every_scale() {
        let tiny = SolveError::StepSizeTooSmall { t: 1e-12, h: 1e-28 };
        assert_eq!(
            tiny.to_string(),
            "step size too small at t = 1e-12: h = 1e-28"
        );
        let plain = SolveError::NewtonDivergence {
            t: 0.25,
            h: 1e-3,
            failures: 30,
        };
        assert_eq!(
            plain.to_string(),
            "Newton iteration diverged 30 times in a row at t = 0.25 (h = 1e-3)"
        );
        let huge = SolveError::TooManySteps {
            t: 3e20,
            max_steps: 10,
        };
        assert_eq!(
            huge.to_string(),
            "the limit of 10 step attempts (accepted and rejected steps and Newton failures) was reached at t = 3e20"
        );
        assert_eq!(huge.time(), Some(3e20));
        assert_eq!(SolveError::InvalidOptions("h".into()).time(), None);
        assert_eq!(readable_number(-2.5e-7), "-2.5e-7");
        assert_eq!(readable_number(0.0), "0");
        assert_eq!(readable_number(1234.5), "1234.5");
    }
}
