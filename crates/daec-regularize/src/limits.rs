//! Size limits that make a stage skip part of its work. No limit is
//! applied silently: every one that applies to a model is recorded as a
//! [`Limit`], which the command-line tool prints as a warning and lists in
//! the `limits` field of its JSON output.

/// A size limit that applied: the stage skipped part of its work because
/// the model is larger than the limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limit {
    /// The stage that was limited (`"hidden constraints"`,
    /// `"success check"`, …).
    pub stage: &'static str,
    /// The limit (in the unit of `size`).
    pub limit: usize,
    /// The size of the model in that unit (unknowns or rows), above the
    /// limit.
    pub size: usize,
    /// What was not done.
    pub what_was_skipped: String,
}

impl Limit {
    /// The limit when `size > limit`, `None` otherwise.
    pub fn check(
        stage: &'static str,
        limit: usize,
        size: usize,
        what_was_skipped: impl FnOnce() -> String,
    ) -> Option<Limit> {
        (size > limit).then(|| Limit {
            stage,
            limit,
            size,
            what_was_skipped: what_was_skipped(),
        })
    }

    /// One line for a warning: `stage: what was skipped (size > limit)`.
    pub fn message(&self) -> String {
        format!(
            "{}: {} (size {} above the limit {})",
            self.stage, self.what_was_skipped, self.size, self.limit
        )
    }
}
