//! The error control of `daec simulate` (`--error-control all|index|
//! differential`, [`ErrorControl`]): the default of each method, the
//! combinations refused, the index of every unknown for RADAU5's scaling,
//! and the report of the unknowns whose error the test leaves out or
//! scales down.
//!
//! The default of `--method radau5` on the regularized formulations is
//! chosen per model on the work–precision of the DAE test set
//! (`models/testset/`, README "Error control"): RADAU5's index scaling
//! for a constrained mechanical system ([`is_constrained_mechanical`]),
//! every component otherwise; the formulations of index 2 and 3 keep
//! RADAU5's index scaling, the half-explicit methods every component
//! (`all`), the second-order methods leave the multipliers out
//! (`differential`; BDF knows no other mode).

use crate::error::{BadOption, SimError};
use crate::formulation::SimForm;
use crate::method::Method;
use daec_regularize::{Analysis, Form, UnknownKind};
use daec_solve::{ErrorControl, QuasiLinearDae};
use serde::Serialize;

/// The error control of the regularized formulations (HiC, ADA, StE, DD,
/// DI1) integrated by Radau IIA when none is given and the model is not a
/// constrained mechanical system, chosen on the DAE test set (README,
/// "Error control").
pub const REGULARIZED_DEFAULT: ErrorControl = ErrorControl::All;

/// The error control of the regularized formulations integrated by Radau
/// IIA when none is given and the model is a constrained mechanical system
/// ([`is_constrained_mechanical`]), chosen on the DAE test set (README,
/// "Error control").
pub const MECHANICAL_DEFAULT: ErrorControl = ErrorControl::Index;

/// The rule that chose a default error control, as the summary ("the
/// default for …") and `--stats-json` (`error_control_rule`) name it.
pub const MECHANICAL_RULE: &str =
    "a constrained mechanical system (kinematic rows der(q) = v, unknowns of index above 1)";

/// The rule's other outcome (see [`MECHANICAL_RULE`]).
pub const NOT_MECHANICAL_RULE: &str = "a model that is not a constrained mechanical system (no kinematic row der(q) = v or no unknown of index above 1)";

/// Whether the default of `method` on `form` depends on the model: Radau
/// IIA on a regularized formulation ([`model_error_control`]).
pub fn default_depends_on_model(method: Method, form: Form) -> bool {
    matches!(
        method,
        Method::Radau5 | Method::Radau5Projected | Method::Projection
    ) && !matches!(form, Form::Ggl | Form::Index3)
}

/// Whether `problem` (a formulation of a model) is a constrained
/// mechanical system: some unknown has index 2 or more
/// ([`QuasiLinearDae::variable_index`]: velocities and multipliers of a
/// DAE of index 3, multipliers of one of index 2) and some differential
/// row is *kinematic*, `ẋ_c = x_v (− G(x)ᵀμ)` — its only column of `E`
/// is `c`, exactly one other unknown `v` appears differentiated itself
/// (a position and its velocity, the chains of the pivot preference of
/// `daec_solve::select_equations_preferring`) and its undifferentiated
/// unknowns, if any, are of index 2 or more (the multipliers `μ` of a
/// stabilized index-2 form, as Fekete's). The circuits of index 2 of
/// the test set (the charge pump: `Ẏ = −I` with `I` algebraic; the water
/// tube) have no such row. The test is structural: a circuit of index 2
/// with a row `C·u̇₁ = (u₂ − u₁)/R` between two capacitor voltages passes
/// it.
pub fn is_constrained_mechanical<P: QuasiLinearDae + ?Sized>(problem: &P) -> bool {
    let n = problem.n_vars();
    let index = problem.variable_index();
    if !index.iter().any(|&k| k > 1) {
        return false;
    }
    let n_d = problem.n_diff();
    let mut e_cols: Vec<Vec<usize>> = vec![Vec::new(); n_d];
    let mut differential = vec![false; n];
    for (r, c) in problem.mass_pattern() {
        if r < n_d && c < n {
            e_cols[r].push(c);
            differential[c] = true;
        }
    }
    // per row: its differentiated unknowns besides its column of E, and
    // whether it has an undifferentiated unknown of index 1
    let mut velocities: Vec<Vec<usize>> = vec![Vec::new(); n_d];
    let mut index1_algebraic = vec![false; n_d];
    for (r, c) in problem.diff_jacobian_pattern() {
        if r >= n_d || c >= n || e_cols[r].contains(&c) {
            continue;
        }
        if differential[c] {
            if !velocities[r].contains(&c) {
                velocities[r].push(c);
            }
        } else if index.get(c).copied().unwrap_or(1) <= 1 {
            index1_algebraic[r] = true;
        }
    }
    (0..n_d).any(|r| e_cols[r].len() == 1 && velocities[r].len() == 1 && !index1_algebraic[r])
}

/// The default error control of a model integrated by Radau IIA on a
/// regularized formulation, and the rule that chose it:
/// [`MECHANICAL_DEFAULT`] for a constrained mechanical system
/// ([`is_constrained_mechanical`]), else [`REGULARIZED_DEFAULT`].
///
/// The regularized formulations are of index 1, so the embedded estimate
/// has the method's order in every component; on a mechanical system
/// the velocities and multipliers, controlled as tightly as the positions,
/// set the step without making the positions more accurate (the
/// work–precision of Andrews' squeezer, the car axis, the slider crank,
/// Fekete and the wheelset, README "Error control"). On the charge pump
/// the loosely controlled current `I` integrates into the gate charge and
/// costs the voltages their accuracy (1.4 correct digits at 1e-4…1e-6
/// against 2.9–4.3 with every component controlled).
pub fn model_error_control<P: QuasiLinearDae + ?Sized>(
    problem: &P,
) -> (ErrorControl, &'static str) {
    if is_constrained_mechanical(problem) {
        (MECHANICAL_DEFAULT, MECHANICAL_RULE)
    } else {
        (REGULARIZED_DEFAULT, NOT_MECHANICAL_RULE)
    }
}

/// The default error control of `method` on `form`: for Radau IIA
/// [`ErrorControl::Index`] on the formulations of index above 1 (GGL,
/// index 2; the DAE as written of projected Radau IIA, index 3), whose
/// embedded error estimate needs the scaling, and
/// [`REGULARIZED_DEFAULT`] on the others until the model is known
/// ([`default_depends_on_model`], [`model_error_control`]); for the
/// half-explicit methods
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
    /// The rule that chose the mode when none was given and the default
    /// depends on the model ([`model_error_control`]); `None` when the
    /// mode was given or is the method's.
    pub rule: Option<&'static str>,
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
        let line = self.mode_line(list);
        match self.rule {
            Some(rule) => format!("{line}; the default for {rule}"),
            None => line,
        }
    }

    /// [`summary_line`](Self::summary_line) without the rule.
    fn mode_line(&self, list: impl Fn(Vec<String>) -> String) -> String {
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
