//! The size checks of the lowering: scalars and expression nodes counted
//! against `LowerOptions::max_scalars`, `MAX_NODES` and the memory budget
//! before they are created, and the reports when a model does not fit.

use super::{Lowerer, R, Reported};
use crate::budget::{MAX_NODES, bytes_text};
use daec_diag::{Diagnostic, Span, codes};

impl<'a> Lowerer<'a> {
    /// Reports (once) that expanding the part at `span` makes the model
    /// too large, with the counts so far, the budget or the limits, and
    /// the `for` loops being expanded.
    fn too_large(&mut self, span: Span) -> Reported {
        if self.too_large_reported {
            return Reported;
        }
        self.too_large_reported = true;
        let (scalars, nodes) = (self.scalar_count, self.pool.len());
        let mut d = Diagnostic::error(
            codes::TOO_LARGE,
            format!(
                "the model is too large: expanding it gives {scalars} scalar unknowns, parameters and equations and {nodes} expression nodes"
            ),
        )
        .with_primary(span, "expanding this exceeds the limit");
        for &(sp, n) in self.loops.iter().rev() {
            d = d.with_secondary(sp, format!("in this loop of {n} iterations"));
        }
        d = d.with_note(self.limit_note(scalars, nodes, false));
        self.diags.push(self.with_overrides(d));
        Reported
    }

    /// What `scalars` scalars and `nodes` nodes exceed: the fixed limits,
    /// else the memory budget; `whole` when they are the whole model's
    /// (then the note gives the estimate), not the count so far.
    pub(super) fn limit_note(&self, scalars: usize, nodes: usize, whole: bool) -> String {
        let fixed = format!(
            "daec expands at most {} scalar unknowns, parameters and equations and {MAX_NODES} expression nodes",
            self.options.max_scalars
        );
        let Some(m) = self.options.memory else {
            return fixed;
        };
        if scalars > self.options.max_scalars || nodes > MAX_NODES {
            return fixed;
        }
        let per = format!(
            "estimated at {} per scalar unknown with its equation",
            bytes_text(m.bytes_per_unknown)
        );
        if whole {
            format!(
                "this needs about {} of memory, more than the {} available ({per})",
                bytes_text(m.estimate(scalars, nodes)),
                bytes_text(m.available)
            )
        } else {
            format!(
                "this needs more than the {} of memory available ({per})",
                bytes_text(m.available)
            )
        }
    }

    /// `d` with a note naming the `-p` overrides, which may be what made
    /// the model large.
    pub(super) fn with_overrides(&self, d: Diagnostic) -> Diagnostic {
        if self.options.overrides.is_empty() {
            return d;
        }
        let list: Vec<String> = self
            .options
            .overrides
            .iter()
            .map(|(n, v)| format!("-p {n}={v}"))
            .collect();
        d.with_note(format!("with {}", list.join(" ")))
    }

    /// Whether `scalars` scalars and `nodes` expression nodes fit the
    /// limits and the memory budget.
    pub(super) fn fits(&self, scalars: usize, nodes: usize) -> bool {
        scalars <= self.options.scalar_limit()
            && nodes <= MAX_NODES
            && self
                .options
                .memory
                .is_none_or(|m| m.estimate(scalars, nodes) <= m.available)
    }

    /// Counts `n` more scalars (unknowns, parameters, equations) before
    /// they are created; reports the model as too large at `span` when
    /// they do not fit.
    pub(super) fn count_scalars(&mut self, n: usize, span: Span) -> R<()> {
        self.scalar_count = self.scalar_count.saturating_add(n);
        if self.fits(self.scalar_count, self.pool.len()) {
            Ok(())
        } else {
            Err(self.too_large(span))
        }
    }

    /// Checks, before an operation at `span` builds up to `n` expression
    /// nodes, that they fit.
    pub(super) fn reserve_nodes(&mut self, n: usize, span: Span) -> R<()> {
        if self.fits(self.scalar_count, self.pool.len().saturating_add(n)) {
            Ok(())
        } else {
            Err(self.too_large(span))
        }
    }

    /// An empty vector with room for `n` elements, or a diagnostic at
    /// `span` when the memory cannot be had (the estimate let through a
    /// model that does not fit after all).
    pub(super) fn vec_with_capacity<T>(&mut self, n: usize, span: Span) -> R<Vec<T>> {
        let mut v = Vec::new();
        match v.try_reserve_exact(n) {
            Ok(()) => Ok(v),
            Err(_) => Err(self.no_memory(n, std::mem::size_of::<T>(), span)),
        }
    }

    /// Reports that `n` more elements of `size` bytes for the part at
    /// `span` could not be allocated.
    pub(super) fn no_memory(&mut self, n: usize, size: usize, span: Span) -> Reported {
        let bytes = (n as u64).saturating_mul(size as u64);
        let d = Diagnostic::error(
            codes::TOO_LARGE,
            format!(
                "the model is too large: there is no memory for {n} more elements ({})",
                bytes_text(bytes)
            ),
        )
        .with_primary(span, "expanding this needs more memory than there is");
        let d = self.with_overrides(d);
        self.error(d)
    }
}
