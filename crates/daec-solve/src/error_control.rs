//! What the local error test of an integrator measures
//! (`daec simulate --error-control`).
//!
//! The integrators accept a step when the estimated local error, weighted
//! componentwise by `atol + rtol·|z_i|`, has a root-mean-square (Radau IIA)
//! or maximum (step doubling) norm below 1. [`ErrorControl`] chooses which
//! components enter that norm and how:
//!
//! * [`ErrorControl::All`] — every component of the integrated vector,
//!   unscaled.
//! * [`ErrorControl::Index`] — RADAU5's index scaling (Hairer & Wanner,
//!   Solving ODEs II, §VII.8, and the NIND2/NIND3 arguments of
//!   `radau5.f`): the error of a component of index `k ≥ 2` is multiplied
//!   by `h^{k−1}`: in a system of higher index the embedded estimate of an
//!   index-`k` component carries the factor `h^{−(k−1)}` of the
//!   differentiations that determine it, and unscaled it would shrink the
//!   steps far below what the solution needs. The index of each component is
//!   [`QuasiLinearDae::variable_index`](crate::QuasiLinearDae::variable_index).
//!   RADAU5 applies the same weights to the Newton stopping test; so does
//!   [`Radau5`](crate::Radau5).
//! * [`ErrorControl::Differential`] — the algebraic components (those
//!   whose column of the mass matrix `E` is empty) are left out of the
//!   error test, as IDA does with `IDASetSuppressAlg` (Hindmarsh et al.,
//!   SUNDIALS IDA user guide, "suppressalg"); the root-mean-square is
//!   still over all `n` components, as IDA's masked norm. The Newton
//!   iteration keeps every component in its stopping test.

use std::fmt;

/// Which components the local error test weighs, and how (see the module
/// documentation).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum ErrorControl {
    /// Every component, weighted by `atol + rtol·|z_i|`.
    All,
    /// RADAU5's index scaling: a component of index `k` by `h^{k−1}`.
    #[default]
    Index,
    /// The algebraic components left out (IDA's `suppressalg`).
    Differential,
}

impl ErrorControl {
    /// The names `--error-control` accepts, in the order of the variants.
    pub const NAMES: [&'static str; 3] = ["all", "index", "differential"];

    /// The mode named `name` (case-insensitive), if any.
    pub fn parse(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "all" => Some(Self::All),
            "index" => Some(Self::Index),
            "differential" => Some(Self::Differential),
            _ => None,
        }
    }

    /// The name of the mode, as [`ErrorControl::parse`] reads it.
    pub fn name(self) -> &'static str {
        match self {
            Self::All => Self::NAMES[0],
            Self::Index => Self::NAMES[1],
            Self::Differential => Self::NAMES[2],
        }
    }

    /// The weight factor of each component in the error test, given the
    /// step size `h`, the components' indices and which components are
    /// differential: `h^{k−1}` (index), `0`/`1` (differential) or `1`.
    pub fn factor(self, h: f64, index: u8, differential: bool) -> f64 {
        match self {
            Self::All => 1.0,
            Self::Index if index > 1 => h.powi(index as i32 - 1),
            Self::Index => 1.0,
            Self::Differential if differential => 1.0,
            Self::Differential => 0.0,
        }
    }
}

impl fmt::Display for ErrorControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::ErrorControl;

    #[test]
    fn names_round_trip_and_factors_follow_the_mode() {
        for name in ErrorControl::NAMES {
            assert_eq!(ErrorControl::parse(name).map(|m| m.name()), Some(name));
        }
        assert_eq!(ErrorControl::parse(" INDEX "), Some(ErrorControl::Index));
        assert_eq!(ErrorControl::parse("ida"), None);
        let h = 0.1;
        assert_eq!(ErrorControl::All.factor(h, 3, false), 1.0);
        assert!((ErrorControl::Index.factor(h, 3, false) - 0.01).abs() < 1e-15);
        assert_eq!(ErrorControl::Index.factor(h, 1, false), 1.0);
        assert_eq!(ErrorControl::Differential.factor(h, 3, false), 0.0);
        assert_eq!(ErrorControl::Differential.factor(h, 1, true), 1.0);
    }
}
