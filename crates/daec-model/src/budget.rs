//! How large a model lowering may expand: the hard limits and the memory
//! budget ([`MemoryBudget`]), the estimate of a model's memory, and the
//! texts of the diagnostics that report a model as too large.
//!
//! Lowering counts what it creates before it allocates it: the scalar
//! unknowns of all declarations before the first is created, parameters
//! and equations as they are expanded, expression nodes before an
//! operation on arrays builds them. A model over a limit is a
//! [`codes::TOO_LARGE`](daec_diag::codes::TOO_LARGE) diagnostic, never an
//! aborted allocation.

/// The most expression nodes lowering creates (the pool's ids are 32-bit).
pub(crate) const MAX_NODES: usize = 1 << 31;

/// The memory a command can use for a model and what a model costs in it:
/// lowering refuses a model whose estimate exceeds `available`.
///
/// The estimate is `bytes_per_unknown` for each scalar unknown with its
/// equation (half of it for each scalar unknown, parameter or equation
/// counted alone) and an eighth of it for each expression node: the
/// command's measured peak memory per unknown on models with a few
/// operations per equation, which covers the nodes of such models.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MemoryBudget {
    /// Bytes the process can still allocate.
    pub available: u64,
    /// Bytes one scalar unknown and its equation cost through the command.
    pub bytes_per_unknown: u64,
}

impl MemoryBudget {
    /// Bytes of one scalar unknown, parameter or equation.
    fn per_scalar(&self) -> u64 {
        (self.bytes_per_unknown / 2).max(1)
    }

    /// Bytes of one expression node.
    fn per_node(&self) -> u64 {
        (self.bytes_per_unknown / 8).max(1)
    }

    /// The estimated bytes of `scalars` scalars and `nodes` nodes.
    pub(crate) fn estimate(&self, scalars: usize, nodes: usize) -> u64 {
        (scalars as u64)
            .saturating_mul(self.per_scalar())
            .saturating_add((nodes as u64).saturating_mul(self.per_node()))
    }

    /// The most scalars that fit.
    pub(crate) fn max_scalars(&self) -> usize {
        usize::try_from(self.available / self.per_scalar()).unwrap_or(usize::MAX)
    }
}

/// `bytes` for a message: `2.7 GB`, `350 MB`, `3.5 MB`, `1.2 kB` (decimal
/// units; one decimal below 10).
pub(crate) fn bytes_text(bytes: u64) -> String {
    let b = bytes as f64;
    let (v, unit) = if b >= 1e9 {
        (b / 1e9, "GB")
    } else if b >= 1e6 {
        (b / 1e6, "MB")
    } else {
        ((b / 1e3).max(0.1), "kB")
    };
    if v < 10.0 {
        format!("{v:.1} {unit}")
    } else {
        format!("{v:.0} {unit}")
    }
}

/// The number of elements of an array of `dims` (saturating).
pub(crate) fn elements(dims: &[usize]) -> usize {
    dims.iter().fold(1usize, |a, &d| a.saturating_mul(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_and_texts() {
        let b = MemoryBudget {
            available: 1_000_000,
            bytes_per_unknown: 1000,
        };
        assert_eq!(b.estimate(10, 8), 10 * 500 + 8 * 125);
        assert_eq!(b.max_scalars(), 2000);
        assert_eq!(bytes_text(2_700_000_000), "2.7 GB");
        assert_eq!(bytes_text(350_000_000), "350 MB");
        assert_eq!(bytes_text(3_460_000), "3.5 MB");
        assert_eq!(bytes_text(42_000_000_000), "42 GB");
        assert_eq!(bytes_text(1_200), "1.2 kB");
        assert_eq!(bytes_text(12_000), "12 kB");
        assert_eq!(bytes_text(3), "0.1 kB");
        assert_eq!(
            elements(&[3_000_000_000, 3_000_000_000, 3_000_000_000]),
            usize::MAX
        );
        assert_eq!(elements(&[]), 1);
    }
}
