//! The error control of `daec simulate` (`--error-control all|index|
//! differential`, [`ErrorControl`]): the default of each method, the
//! combinations refused, the index of every unknown for RADAU5's scaling,
//! and the report of the unknowns whose error the test leaves out or
//! scales down.
//!
//! The default of `--method radau5` on the regularized formulations is
//! chosen on the work–precision of the DAE test set (`models/testset/`,
//! README "Error control"); the formulations of index 2 and 3 keep
//! RADAU5's index scaling, the half-explicit methods every component
//! (`all`), the second-order methods leave the multipliers out
//! (`differential`; BDF knows no other mode).

use crate::error::{BadOption, SimError};
use crate::formulation::SimForm;
use crate::method::Method;
use daec_regularize::{Analysis, Form, UnknownKind};
use daec_solve::ErrorControl;
use serde::Serialize;

/// The error control of the regularized formulations (HiC, ADA, StE, DD,
/// DI1) integrated by Radau IIA when none is given, chosen on the DAE test
/// set (README, "Error control").
pub const REGULARIZED_DEFAULT: ErrorControl = ErrorControl::All;

/// The default error control of `method` on `form`: for Radau IIA
/// [`ErrorControl::Index`] on the formulations of index above 1 (GGL,
/// index 2; the DAE as written of projected Radau IIA, index 3), whose
/// embedded error estimate needs the scaling, and
/// [`REGULARIZED_DEFAULT`] on the others; for the half-explicit methods
/// [`ErrorControl::All`]; for the second-order methods
/// [`ErrorControl::Differential`] (the multipliers left out, as each
/// did before the option).
pub fn default_error_control(method: Method, form: Form) -> ErrorControl {
    match method {
        Method::Herk(_) => ErrorControl::All,
        Method::Radau2nd | Method::Bdf2nd | Method::Gauss2nd | Method::Glm2nd => {
            ErrorControl::Differential
        }
        Method::Radau5 | Method::Radau5Projected | Method::Projection => match form {
            Form::Ggl | Form::Index3 => ErrorControl::Index,
            _ => REGULARIZED_DEFAULT,
        },
    }
}

/// Refuses a mode that does not apply to `method` (a usage error,
/// [`SimError::Options`] with [`BadOption::ErrorControl`]), with the
/// reason.
pub fn check_error_control(method: Method, mode: ErrorControl) -> Result<(), SimError> {
    let why = match (method, mode) {
        (Method::Herk(_), ErrorControl::Index) => {
            "the half-explicit Runge–Kutta methods compute the algebraic components from the constraints at every stage and estimate the error by step doubling, whose estimate of them has the method's order; the h^(k−1) scaling corrects Radau IIA's embedded estimate on index-2/3 components only"
        }
        (Method::Radau2nd | Method::Gauss2nd | Method::Glm2nd, ErrorControl::Index) => {
            "the second-order methods estimate their error by step doubling, whose estimate of the multipliers has the method's order; the h^(k−1) scaling corrects the embedded estimate of the first-order Radau IIA on index-2/3 components only"
        }
        (Method::Bdf2nd, ErrorControl::All | ErrorControl::Index) => {
            "the BDF method's error estimate, the difference of corrector and predictor, is formed on the unknowns that appear differentiated only (the multipliers have no predictor of their own)"
        }
        _ => return Ok(()),
    };
    let allowed: Vec<&str> = ErrorControl::NAMES
        .iter()
        .copied()
        .filter(|&m| m != mode.name() && (method != Method::Bdf2nd || m == "differential"))
        .collect();
    Err(SimError::options(
        BadOption::ErrorControl,
        format!(
            "--error-control {mode} does not apply to --method {method}: {why}; use {}",
            allowed.join(" or ")
        ),
    ))
}

/// The index of every unknown of `form` for RADAU5's scaling
/// ([`ErrorControl::Index`]). For GGL, a DAE of index 2
/// (steinbrecher2016 §5, eq. (40)), the unknowns that occur
/// undifferentiated have index 2. For every other formulation the index
/// of the unknown in the DAE as written, from the canonical offsets
/// (Pryce 2001): `k_j = max_i c_i + 1 − d_j`, at least 1 — positions 1,
/// velocities 2 and multipliers 3 in constrained mechanics (the indices
/// the test set gives RADAU5), the algebraic unknowns of an index-1 model
/// 1 — and one more per derivative an unknown of the formulation stands
/// for (`ψ`, dummy derivatives, velocity unknowns).
pub fn variable_indices(analysis: &Analysis, form: &SimForm) -> Vec<u8> {
    if form.form == Form::Ggl {
        return form
            .differential
            .iter()
            .map(|&d| if d { 1 } else { 2 })
            .collect();
    }
    let Some(reg) = analysis.regular() else {
        return vec![1; form.n];
    };
    let (c, d) = (&reg.sigma.offsets.c, &reg.sigma.offsets.d);
    let top = c.iter().copied().max().unwrap_or(0) as i64 + 1;
    let of_original =
        |j: usize, order: u32| -> i64 { d.get(j).map_or(1, |&dj| top - dj as i64 + order as i64) };
    let clamp = |k: i64| k.clamp(1, u8::MAX as i64) as u8;
    let mut index = vec![1u8; form.n];
    for (k, u) in form.unknowns.iter().enumerate() {
        index[k] = match u.kind {
            UnknownKind::Original(j) => clamp(of_original(j, 0)),
            UnknownKind::Derivative { unknown, order } => clamp(of_original(unknown, order)),
            UnknownKind::Velocity { unknown } => match form.unknowns.get(unknown).map(|b| b.kind) {
                Some(UnknownKind::Original(j)) => clamp(of_original(j, 1)),
                Some(UnknownKind::Derivative { unknown, order }) => {
                    clamp(of_original(unknown, order + 1))
                }
                _ => 1,
            },
            UnknownKind::Multiplier { .. } => 1,
        };
    }
    index
}

/// An unknown whose error the test scales down by `h^{index−1}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScaledVariable {
    /// Its flat name.
    pub variable: String,
    /// Its index.
    pub index: u8,
}

/// What the error test of a run does with the model's unknowns (those of
/// the CSV): which it leaves out and which it scales down.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ErrorControlReport {
    /// The mode.
    pub mode: ErrorControl,
    /// The unknowns left out of the error test (`differential`: the
    /// algebraic ones).
    pub suppressed: Vec<String>,
    /// The unknowns whose error is scaled by `h^{index−1}` (`index`).
    pub scaled: Vec<ScaledVariable>,
}

impl ErrorControlReport {
    /// The report of `mode` on the unknowns `names` (the model's, first in
    /// the formulation), with their `index` and whether each is
    /// `differential`.
    pub fn new(mode: ErrorControl, names: &[String], index: &[u8], differential: &[bool]) -> Self {
        let mut r = ErrorControlReport {
            mode,
            ..Default::default()
        };
        for (k, name) in names.iter().enumerate() {
            match mode {
                ErrorControl::All => {}
                ErrorControl::Index => {
                    let i = index.get(k).copied().unwrap_or(1);
                    if i > 1 {
                        r.scaled.push(ScaledVariable {
                            variable: name.clone(),
                            index: i,
                        });
                    }
                }
                ErrorControl::Differential => {
                    if !differential.get(k).copied().unwrap_or(true) {
                        r.suppressed.push(name.clone());
                    }
                }
            }
        }
        r
    }

    /// Whether the error test leaves out or scales down `name`.
    pub fn affects(&self, name: &str) -> bool {
        self.suppressed.iter().any(|s| s == name) || self.scaled.iter().any(|s| s.variable == name)
    }

    /// One line for the summary: the mode and the unknowns it leaves out
    /// or scales (at most `max` named).
    pub fn summary_line(&self, max: usize) -> String {
        let list = |names: Vec<String>| -> String {
            let more = names.len().saturating_sub(max);
            let mut s = names.into_iter().take(max).collect::<Vec<_>>().join(", ");
            if more > 0 {
                s.push_str(&format!(" and {more} more"));
            }
            s
        };
        match self.mode {
            ErrorControl::All => {
                "local error control: all (every component in the error test)".into()
            }
            ErrorControl::Index if self.scaled.is_empty() => {
                "local error control: index (every unknown of index 1: all in the error test)"
                    .into()
            }
            ErrorControl::Index => format!(
                "local error control: index (error scaled by h^(k−1): {})",
                list(
                    self.scaled
                        .iter()
                        .map(|s| format!("{} (index {})", s.variable, s.index))
                        .collect()
                )
            ),
            ErrorControl::Differential if self.suppressed.is_empty() => {
                "local error control: differential (no algebraic unknowns: all in the error test)"
                    .into()
            }
            ErrorControl::Differential => format!(
                "local error control: differential (not in the error test: {})",
                list(self.suppressed.clone())
            ),
        }
    }
}
