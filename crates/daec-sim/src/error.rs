//! Errors of the simulation pipeline (all recoverable; no input panics).
//!
//! Each kind of [`SimError`] carries a typed cause, for programs, and the
//! message the CLI prints (which names the model's variables and
//! equations in its own words).

use crate::native::NativeLayout;
use daec_diag::Label;
use daec_regularize::{Form, RegularizeError};
use daec_solve::SolveError;
use std::fmt;

/// Why a simulation could not be set up or could not continue.
#[derive(Debug, Clone, PartialEq)]
pub enum SimError {
    /// The model cannot be simulated with the formulation or method
    /// asked for; the message names the equations or variables involved
    /// and what to use instead.
    Unsupported {
        /// Why.
        cause: Unsupported,
        /// The message.
        message: String,
    },
    /// The initial conditions are inconsistent or cannot be evaluated;
    /// the message names the variables and equations involved.
    Initialization {
        /// Why.
        cause: InitFailure,
        /// The message.
        message: String,
    },
    /// Bad simulation options (the CLI reports them as usage errors).
    Options {
        /// The option at fault.
        cause: BadOption,
        /// The message.
        message: String,
    },
    /// A numerical failure during the integration (exit code 3 in the
    /// CLI): its time, cause and message.
    Numerical(Box<NumericalFailure>),
    /// `--native`: the model's native code could not be compiled or
    /// loaded.
    Native(NativeError),
    /// An error of one of the other kinds with the places in the model's
    /// source it is about (equations, declarations, `reinit`s), which the
    /// CLI shows with the source lines as it shows compile-time
    /// diagnostics. The message names them in words too.
    Located(Box<SimError>, Vec<Label>),
}

/// Why a model cannot be simulated as asked ([`SimError::Unsupported`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Unsupported {
    /// The model has no unknowns.
    NoUnknowns,
    /// The formulation does not apply to the model (or its quasi-linear
    /// split to the formulation).
    Formulation(RegularizeError),
    /// The method does not integrate this formulation.
    MethodForm {
        /// The method.
        method: crate::Method,
        /// The formulation.
        form: Form,
    },
    /// The method does not apply to this model (e.g. `radau-2nd` on a
    /// first-order model or one with events, a half-explicit method on a
    /// model whose constraints it cannot solve).
    MethodModel {
        /// The method.
        method: crate::Method,
    },
    /// A `when` condition or `reinit` value depends on a derivative, or a
    /// `reinit` assigns a variable that is not a state.
    Event,
    /// The equations cannot be compiled to tapes.
    Compile(daec_expr::TapeError),
    /// A declared invariant contains a derivative that the first-order
    /// form of the model does not have as an unknown.
    InvariantDerivative {
        /// The invariant (index into `Dae::invariants`).
        invariant: usize,
    },
    /// A function called at run time is differentiated more often than
    /// [`daec_expr::MAX_DERIVATIVE_ORDER`] allows.
    DerivativeOrder {
        /// The function's name.
        function: String,
    },
}

/// Why the initialisation failed ([`SimError::Initialization`]).
#[derive(Debug, Clone, PartialEq)]
pub enum InitFailure {
    /// A start value is not a finite number.
    NonFiniteStart {
        /// The unknown.
        unknown: String,
    },
    /// An equation or constraint cannot be evaluated at the start values.
    Unevaluable {
        /// The value it gives.
        value: f64,
        /// The unknowns it involves.
        unknowns: Vec<String>,
    },
    /// No point satisfying all (hidden) constraints was found near the
    /// start values.
    Inconsistent {
        /// The residual left.
        residual: f64,
        /// The unknowns of the equation with the largest residual (empty
        /// when the projection did not name one).
        unknowns: Vec<String>,
    },
    /// An initial equation contains derivatives that cannot be expressed
    /// by the unknowns.
    InitialEquationDerivatives {
        /// The initial equation (index into `Dae::initial_equations`).
        equation: usize,
    },
    /// A declared invariant does not hold at the consistent initial
    /// point.
    Invariant {
        /// The invariant (index into `Dae::invariants`).
        invariant: usize,
        /// Its residual `lhs − rhs` there.
        residual: f64,
    },
    /// The unknowns a formulation adds could not be computed from its
    /// constraints.
    AddedUnknowns {
        /// Their names.
        unknowns: Vec<String>,
        /// The residual left.
        residual: f64,
    },
}

/// The simulation option at fault ([`SimError::Options`]).
#[derive(Debug, Clone, PartialEq)]
pub enum BadOption {
    /// `rtol`, `atol`.
    Tolerances,
    /// The end time.
    EndTime,
    /// The output interval.
    Interval,
    /// The number of points of a logarithmic output grid.
    OutputPoints,
    /// The maximal step size.
    MaxStep,
    /// An error control the method does not apply
    /// ([`crate::check_error_control`]).
    ErrorControl,
    /// The integrator refused the problem or its options.
    Integrator(SolveError),
}

/// A numerical failure of a run ([`SimError::Numerical`]): the results
/// end at the last good step.
#[derive(Debug, Clone, PartialEq)]
pub struct NumericalFailure {
    /// When it failed: the time of the last accepted step, or of the
    /// event or check that failed.
    pub time: f64,
    /// Why.
    pub cause: FailureCause,
    /// The message (the time, the cause, the variables involved).
    pub message: String,
}

/// Why a run failed ([`NumericalFailure::cause`]).
#[derive(Debug, Clone, PartialEq)]
pub enum FailureCause {
    /// The integrator failed (step size too small, Newton divergence,
    /// singular iteration matrix, rank loss, step limit).
    Solver(SolveError),
    /// A `reinit` value is not finite.
    ReinitNotFinite {
        /// The unknown re-initialised.
        unknown: String,
        /// Its value.
        value: f64,
    },
    /// The constraints do not let re-initialised values change.
    ReinitBlocked {
        /// The unknowns put back.
        unknowns: Vec<String>,
    },
    /// A state could not be projected onto the constraints (after a
    /// `reinit` or a change of state-selection variant).
    Projection {
        /// The residual left.
        residual: f64,
    },
    /// The event iteration at one time does not end.
    EventIteration {
        /// The rounds of `reinit`s done.
        rounds: usize,
    },
    /// More events than `--max-events`.
    TooManyEvents {
        /// The limit.
        limit: usize,
    },
    /// Events accumulate (Zeno behaviour or chattering).
    EventAccumulation {
        /// Events counted in the accumulation.
        events: usize,
    },
    /// The integration restarts without progress.
    NoProgress {
        /// Restarts without progress.
        restarts: usize,
    },
    /// A variable left its `min`/`max` (`--bounds error`).
    Bound {
        /// The variable.
        variable: String,
        /// `min` or `max`.
        bound: String,
        /// The bound's value.
        limit: f64,
        /// The variable's value.
        value: f64,
    },
    /// An `assert` of the model failed.
    Assertion {
        /// Its message.
        message: String,
    },
    /// A variant of dynamic state selection (StE, DD) could not be built.
    StateSelection {
        /// The form.
        form: Form,
        /// Why.
        source: Box<SimError>,
    },
}

/// Why native code could not be built or used ([`SimError::Native`]).
#[derive(Debug, Clone, PartialEq)]
pub enum NativeError {
    /// No usable Rust compiler.
    Compiler(String),
    /// No usable cache directory for the library.
    Cache(String),
    /// The compiler failed on the generated source.
    Build(String),
    /// The library could not be written or loaded.
    Load(String),
    /// The model calls a function at run time, which native code does
    /// not express.
    Calls(String),
    /// The library was generated for another problem (the layouts are
    /// boxed to keep the error small).
    Layout {
        /// The sizes the library reports.
        library: Box<NativeLayout>,
        /// The problem's.
        problem: Box<NativeLayout>,
    },
}

impl fmt::Display for NativeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NativeError::Compiler(m)
            | NativeError::Cache(m)
            | NativeError::Build(m)
            | NativeError::Load(m)
            | NativeError::Calls(m) => f.write_str(m),
            NativeError::Layout { library, problem } => write!(
                f,
                "the compiled library does not fit the problem (library {library:?}, problem {problem:?})"
            ),
        }
    }
}

impl std::error::Error for NativeError {}

impl From<NativeError> for SimError {
    fn from(e: NativeError) -> SimError {
        SimError::Native(e)
    }
}

impl SimError {
    /// [`SimError::Unsupported`].
    pub fn unsupported(cause: Unsupported, message: impl Into<String>) -> SimError {
        SimError::Unsupported {
            cause,
            message: message.into(),
        }
    }

    /// [`SimError::Initialization`].
    pub fn initialization(cause: InitFailure, message: impl Into<String>) -> SimError {
        SimError::Initialization {
            cause,
            message: message.into(),
        }
    }

    /// [`SimError::Options`].
    pub fn options(cause: BadOption, message: impl Into<String>) -> SimError {
        SimError::Options {
            cause,
            message: message.into(),
        }
    }

    /// [`SimError::Numerical`].
    pub fn numerical(time: f64, cause: FailureCause, message: impl Into<String>) -> SimError {
        SimError::Numerical(Box::new(NumericalFailure {
            time,
            cause,
            message: message.into(),
        }))
    }

    /// The refusal of a formulation, with its message.
    pub fn formulation(e: RegularizeError) -> SimError {
        let message = e.to_string();
        SimError::unsupported(Unsupported::Formulation(e), message)
    }

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

    /// The numerical failure, if it is one.
    pub fn failure(&self) -> Option<&NumericalFailure> {
        match self.kind() {
            SimError::Numerical(f) => Some(f),
            _ => None,
        }
    }

    /// The time of a numerical failure (`None` for the other kinds).
    pub fn time(&self) -> Option<f64> {
        self.failure().map(|f| f.time)
    }

    /// The cause of a numerical failure (`None` for the other kinds).
    pub fn cause(&self) -> Option<&FailureCause> {
        self.failure().map(|f| &f.cause)
    }

    /// The integrator's error behind a numerical failure, when it is one.
    pub fn solve_error(&self) -> Option<&SolveError> {
        match self.cause()? {
            FailureCause::Solver(e) => Some(e),
            _ => None,
        }
    }

    /// The numerical failure, to extend its message.
    pub(crate) fn failure_mut(&mut self) -> Option<&mut NumericalFailure> {
        match self {
            SimError::Numerical(f) => Some(f),
            SimError::Located(e, _) => e.failure_mut(),
            _ => None,
        }
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Unsupported { message, .. } => {
                write!(f, "cannot simulate this model: {message}")
            }
            SimError::Initialization { message, .. } => {
                write!(f, "initialization failed: {message}")
            }
            SimError::Options { message, .. } => {
                write!(f, "invalid simulation options: {message}")
            }
            SimError::Numerical(failure) => write!(f, "integration failed: {}", failure.message),
            SimError::Native(e) => write!(f, "cannot compile the model to native code: {e}"),
            SimError::Located(e, _) => e.fmt(f),
        }
    }
}

impl std::error::Error for SimError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SimError::Unsupported {
                cause: Unsupported::Formulation(e),
                ..
            } => Some(e),
            SimError::Options {
                cause: BadOption::Integrator(e),
                ..
            } => Some(e),
            SimError::Numerical(failure) => match &failure.cause {
                FailureCause::Solver(e) => Some(e),
                FailureCause::StateSelection { source, .. } => Some(&**source),
                _ => None,
            },
            SimError::Native(e) => Some(e),
            SimError::Located(e, _) => e.source(),
            _ => None,
        }
    }
}

/// An error, located on the function, when the derivatives built so far
/// needed a derivative of a function called at run time beyond
/// [`daec_expr::MAX_DERIVATIVE_ORDER`].
pub fn check_derivative_order(dae: &daec_model::Dae) -> Result<(), SimError> {
    let Some(f) = dae.pool.derivative_limit() else {
        return Ok(());
    };
    let func = dae.pool.function(f);
    let name = func.name.split('$').next().unwrap_or(&func.name).to_owned();
    let message = format!(
        "the model needs a derivative of order {} of `{name}`, a function called at run time; \
         daec differentiates such a function at most {} times (the time derivatives of the \
         equations that call it and their Jacobians together)",
        func.order + 1,
        daec_expr::MAX_DERIVATIVE_ORDER
    );
    let labels = dae
        .functions
        .iter()
        .zip(&dae.spans.functions)
        .filter(|(n, _)| **n == name)
        .map(|(_, &span)| daec_diag::Label {
            span,
            message: "differentiated too often".into(),
            primary: true,
        })
        .collect();
    Err(
        SimError::unsupported(Unsupported::DerivativeOrder { function: name }, message)
            .with_labels(labels),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_and_cause_are_reached_through_the_labels() {
        let e = SimError::numerical(
            0.5,
            FailureCause::Solver(SolveError::StepSizeTooSmall { t: 0.5, h: 1e-16 }),
            "step size too small",
        );
        let located = e.clone().with_labels(vec![Label {
            span: daec_diag::Span::new(daec_diag::FileId(0), 0, 1),
            message: "here".into(),
            primary: true,
        }]);
        for e in [&e, &located] {
            assert_eq!(e.time(), Some(0.5));
            assert!(matches!(
                e.solve_error(),
                Some(SolveError::StepSizeTooSmall { h, .. }) if *h == 1e-16
            ));
            assert_eq!(e.to_string(), "integration failed: step size too small");
        }
        assert_eq!(located.labels().len(), 1);
        let options = SimError::options(BadOption::MaxStep, "the maximal step must be positive");
        assert_eq!((options.time(), options.cause()), (None, None));
        assert_eq!(
            options.to_string(),
            "invalid simulation options: the maximal step must be positive"
        );
    }
}
