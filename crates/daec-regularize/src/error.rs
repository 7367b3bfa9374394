//! Why a formulation refuses a model: [`RegularizeError`], the form and
//! a typed [`Refusal`] whose `Display` is the message the CLI prints.
//!
//! Equation and unknown indices are 0-based (the messages show equations
//! 1-based, as `daec analyze` does); unknowns are also named, since the
//! messages name them and the model is not at hand where they are shown.

use crate::formulation::{Form, RowSource};
use daec_structure::HvtCount;
use thiserror::Error;

/// Why a formulation cannot be built for a model.
#[derive(Clone, Debug, PartialEq, Error)]
#[error("the {} formulation does not apply: {cause}", .form.name().to_ascii_uppercase())]
pub struct RegularizeError {
    /// The form asked for.
    pub form: Form,
    /// Why it does not apply.
    pub cause: Refusal,
}

impl RegularizeError {
    /// The refusal of `form` for `cause`.
    pub fn new(form: Form, cause: Refusal) -> RegularizeError {
        RegularizeError { form, cause }
    }
}

/// The reasons a formulation refuses a model (or the quasi-linear split
/// refuses a formulation). The message of each names the equations or
/// variables involved and, where there is one, what to do instead.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum Refusal {
    /// The model has no unknowns.
    #[error("the model has no unknowns")]
    NoUnknowns,
    /// Σ has no finite transversal (the Dulmage–Mendelsohn decomposition
    /// of `daec analyze` shows the parts).
    #[error(
        "the model is structurally singular (see `daec analyze` for the over- and under-determined parts)"
    )]
    StructurallySingular {
        /// Equations of the over-determined part (sorted, 0-based).
        over_equations: Vec<usize>,
        /// Unknowns of the under-determined part (sorted, 0-based).
        under_unknowns: Vec<usize>,
    },
    /// Derivatives of order > 1 occur; the forms need a first-order model.
    #[error(
        "derivatives of order > 1 of {}; reduce the model to first order first (`daec regularize` does this: a new unknown for each derivative below the highest)",
        name_list(.unknowns, Some(NAMES_SHOWN))
    )]
    HigherOrder {
        /// The unknowns concerned, in the order of the model.
        unknowns: Vec<String>,
    },
    /// The Σ-Jacobian is singular at the consistent point (the Σ-method
    /// fails there).
    #[error(
        "the Σ-Jacobian is singular at the consistent point, so the Σ-method fails and its offsets and constraints do not describe the model there (see `daec analyze`)"
    )]
    SingularSigmaJacobian,
    /// The model is above the analysis limit for the reduced derivative
    /// array (`AnalyzeOptions::constraints_max_unknowns`).
    #[error(
        "the reduced derivative array was not built (the model is larger than the analysis limit)"
    )]
    DerivativeArrayNotBuilt,
    /// The hidden constraints were not built (model above the analysis
    /// limit).
    #[error("the hidden constraints were not built (model too large for the analysis)")]
    ConstraintsNotBuilt,
    /// Derivatives could not be eliminated symbolically from the hidden
    /// constraints (HiC, DI1).
    #[error(
        "some derivatives could not be eliminated symbolically from the hidden constraints (of {})",
        name_list(.unknowns, Some(NAMES_SHOWN))
    )]
    UneliminatedDerivatives {
        /// The unknowns whose derivatives remain, in the order of the model.
        unknowns: Vec<String>,
    },
    /// A hidden constraint still contains derivatives (HiC).
    #[error(
        "a hidden constraint derived from equation {} still contains derivatives",
        .equation + 1
    )]
    ConstraintKeepsDerivatives {
        /// The model equation it was derived from.
        equation: usize,
    },
    /// DD: the Jacobian of the equations differentiated `differentiations`
    /// times with respect to the candidate derivatives is singular.
    #[error(
        "the Jacobian of the equations differentiated {differentiations} time(s) with respect to the candidate derivatives is singular at the point"
    )]
    SingularDummyBlock {
        /// The level `k` of the block `𝔍[R_k, S_{k−1}]`
        /// (mattsson-soderlind1993; step 2 of the algorithm in
        /// `forms/dd.rs`).
        differentiations: u32,
    },
    /// DD with given dummy levels: not one level per unknown.
    #[error("{levels} dummy levels for {unknowns} unknowns")]
    DummyLevelCount {
        /// Levels given.
        levels: usize,
        /// Unknowns of the model.
        unknowns: usize,
    },
    /// StE: the Σ-Jacobian of the structurally extended system (22) is
    /// singular at the consistent point for every HVT tried
    /// (steinbrecher2016 §3.1: the extension is valid only where it is
    /// nonsingular).
    #[error(
        "the Σ-Jacobian of the structurally extended system is singular at the consistent point for the chosen HVT (largest κ_T among those with well-conditioned dummies){}, for the one with the dummies of Mattsson–Söderlind pivoting{others}; `--form hic` (the default), `ada` and `dd` choose their complement from the constraints' Jacobian instead",
        dependent_text(.dependent_rows)
    )]
    SingularExtension {
        /// The rows of a left null vector of the extension's Σ-Jacobian
        /// for the chosen HVT (the dependent rows), by derivative-array row.
        dependent_rows: Vec<RowSource>,
        /// Which other HVTs were tried.
        others: OtherHvts,
    },
    /// StE: every HVT has the weight `κ_T = 0` at the point.
    #[error("the Σ-Jacobian is singular at the point: no HVT has a non-zero weight κ_T = Π|𝔍_ij|")]
    NoWeightedHvt,
    /// StE: the tight positions have no complete transversal.
    #[error("no complete transversal of the Σ-Jacobian")]
    NoCompleteTransversal,
    /// StE on a given HVT: not one entry per unknown.
    #[error("the HVT has {entries} entries for {unknowns} unknowns")]
    HvtLength {
        /// Entries given.
        entries: usize,
        /// Unknowns of the model.
        unknowns: usize,
    },
    /// StE on a given HVT: two unknowns matched to one equation, or an
    /// equation out of range.
    #[error("the given HVT is not a permutation")]
    HvtNotPermutation,
    /// StE on a given HVT: a position that is not tight.
    #[error(
        "({}, {}) of the given HVT is not a tight position of Σ (d_j − c_i = σ_ij)",
        .equation + 1,
        .unknown + 1
    )]
    HvtNotTight {
        /// The equation `i`.
        equation: usize,
        /// The unknown `j`.
        unknown: usize,
    },
    /// GGL: an ODE has no position constraints.
    #[error(
        "the model has no algebraic equations, so no position constraints to stabilise (it is an ODE)"
    )]
    NoAlgebraicEquations,
    /// GGL: an algebraic equation not differentiated exactly twice.
    #[error(
        "equation {} is an algebraic equation differentiated {differentiations} time(s) by the Σ-method; GGL needs position constraints, differentiated exactly twice (position → velocity → acceleration)",
        .equation + 1
    )]
    NotPositionConstraint {
        /// The equation.
        equation: usize,
        /// Its offset `c_i`.
        differentiations: u32,
    },
    /// GGL: a constraint depends on unknowns without a kinematic equation.
    #[error(
        "the constraint of equation {} depends on {}, which {} no kinematic equation (a row whose only derivative is der(q)); GGL needs constraints on positions only",
        .equation + 1,
        name_list(.unknowns, Some(NAMES_SHOWN)),
        if .unknowns.len() == 1 { "has" } else { "have" }
    )]
    NonKinematicUnknowns {
        /// The equation.
        equation: usize,
        /// The unknowns concerned, in the order of the model.
        unknowns: Vec<String>,
    },
    /// GGL: a constraint depends on no unknown.
    #[error("the constraint of equation {} depends on no unknown", .equation + 1)]
    ConstraintWithoutUnknowns {
        /// The equation.
        equation: usize,
    },
    /// GGL: no velocity-level hidden constraint of a position constraint.
    #[error(
        "no velocity-level (level 1) hidden constraint was derived from equation {}",
        .equation + 1
    )]
    NoVelocityConstraint {
        /// The equation.
        equation: usize,
    },
    /// DI1: no constraint derived from an algebraic equation.
    #[error("no constraint was derived from the algebraic equation {}", .equation + 1)]
    NoConstraintOfAlgebraic {
        /// The equation.
        equation: usize,
    },
    /// DI1: a hidden constraint comes from a differential equation.
    #[error(
        "the hidden constraint of level {level} comes from the differential equation {}, not from the chain of an algebraic equation; DI1 keeps only the top of each algebraic equation's chain",
        .equation + 1
    )]
    ConstraintOfDifferential {
        /// The equation.
        equation: usize,
        /// The constraint's level.
        level: u32,
    },
    /// DI1: the result does not have structural index 1.
    #[error(
        "keeping only the highest-level constraint of each algebraic equation gives a system of structural index {index} here, not 1"
    )]
    Di1Index {
        /// The structural index of the result.
        index: u32,
    },
    /// DI1: the result is structurally singular.
    #[error(
        "keeping only the highest-level constraint of each algebraic equation gives a structurally singular system here"
    )]
    Di1StructurallySingular,
    /// Quasi-linear split: the formulation has no unknowns.
    #[error("the formulation has no unknowns")]
    FormulationWithoutUnknowns,
    /// Quasi-linear split: an expression refers to an unknown the
    /// formulation does not have.
    #[error(
        "equation {} refers to unknown #{unknown}, but the formulation has only {unknowns} unknowns",
        .equation + 1
    )]
    UnknownOutOfRange {
        /// The row of the formulation.
        equation: usize,
        /// The unknown referred to.
        unknown: usize,
        /// The formulation's number of unknowns.
        unknowns: usize,
    },
    /// Quasi-linear split: derivatives of order > 1 in the formulation.
    #[error(
        "derivatives of order > 1 of {}; the model must be reduced to first order first (a new unknown `v` with `der(x) = v` for each such `x`)",
        name_list(.unknowns, None)
    )]
    FormulationHigherOrder {
        /// The unknowns of the formulation concerned, in its order.
        unknowns: Vec<String>,
    },
    /// Quasi-linear split: a constraint row contains derivatives.
    #[error(
        "constraint row {} contains derivatives (of {})",
        .row + 1,
        name_list(.unknowns, None)
    )]
    ConstraintRowDerivatives {
        /// The row of the formulation.
        row: usize,
        /// The unknowns of the formulation whose derivatives occur.
        unknowns: Vec<String>,
    },
    /// Quasi-linear split: a row is not affine in the derivatives even
    /// after introducing velocity unknowns.
    #[error(
        "equation {} is not affine in the derivatives even after introducing velocity unknowns",
        .equation + 1
    )]
    NotAffine {
        /// The row of the formulation.
        equation: usize,
    },
}

/// The other HVTs StE tried after the chosen one
/// ([`Refusal::SingularExtension`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OtherHvts {
    /// There is no other HVT.
    None,
    /// There are others, too many to enumerate; none was tried.
    NotEnumerated(HvtCount),
    /// This many other enumerated HVTs with `κ_T ≠ 0` were tried.
    Tried(usize),
}

impl std::fmt::Display for OtherHvts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OtherHvts::None => Ok(()),
            OtherHvts::NotEnumerated(count) => write!(
                f,
                "; the other HVTs were not tried: there are {}, too many to enumerate",
                match count {
                    HvtCount::Exact(n) => n.to_string(),
                    HvtCount::AtLeast(n) => format!("at least {n}"),
                }
            ),
            OtherHvts::Tried(k) => {
                write!(f, ", and for the {k} other enumerated HVTs with κ_T ≠ 0")
            }
        }
    }
}

/// How many names a message lists before `and k more`.
const NAMES_SHOWN: usize = 8;

/// `` `x`, `y` `` (the first `shown` of them and `and k more`).
fn name_list(names: &[String], shown: Option<usize>) -> String {
    let shown = shown.unwrap_or(names.len());
    let list: Vec<String> = names
        .iter()
        .take(shown)
        .map(|name| format!("`{name}`"))
        .collect();
    let more = if names.len() > shown {
        format!(" and {} more", names.len() - shown)
    } else {
        String::new()
    };
    format!("{}{more}", list.join(", "))
}

/// ` (its rows F3, F4' are dependent there)`, or nothing without rows.
fn dependent_text(rows: &[RowSource]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let labels: Vec<String> = rows.iter().map(|r| r.label()).collect();
    format!(" (its rows {} are dependent there)", labels.join(", "))
}
