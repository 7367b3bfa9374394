//! [`SpanRuns`]: the spans of a long sequence of parts, stored by runs.

use crate::Span;

/// The source spans of a sequence of parts (unknowns, equations), one per
/// part, stored as runs of equal spans: the elements of an array share
/// their declaration's span and the equations a `for` loop expands to
/// share the loop's equation, so a large model stores a run per source
/// declaration or equation rather than a span per scalar. Reads as a
/// slice does ([`SpanRuns::get`], [`SpanRuns::len`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpanRuns {
    /// `(first part, span)` of each run, by increasing first part; a run
    /// ends where the next begins (the last at `len`).
    runs: Vec<(usize, Span)>,
    /// The number of parts.
    len: usize,
}

impl SpanRuns {
    /// No parts.
    pub fn new() -> SpanRuns {
        SpanRuns::default()
    }

    /// The number of parts.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there is no part.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The span of part `i` (`None` past the end).
    pub fn get(&self, i: usize) -> Option<&Span> {
        if i >= self.len {
            return None;
        }
        let run = self.runs.partition_point(|&(first, _)| first <= i);
        self.runs.get(run.checked_sub(1)?).map(|(_, span)| span)
    }

    /// The span of the first part.
    pub fn first(&self) -> Option<&Span> {
        self.get(0)
    }

    /// Appends a part of span `span`.
    pub fn push(&mut self, span: Span) {
        if self.runs.last().is_none_or(|&(_, last)| last != span) {
            self.runs.push((self.len, span));
        }
        self.len += 1;
    }

    /// Appends the parts of `other`.
    pub fn append(&mut self, other: &SpanRuns) {
        for span in other.iter() {
            self.push(*span);
        }
    }

    /// The span of each part, in order.
    pub fn iter(&self) -> impl Iterator<Item = &Span> + '_ {
        self.runs.iter().enumerate().flat_map(|(k, (first, span))| {
            let end = self.runs.get(k + 1).map_or(self.len, |&(next, _)| next);
            std::iter::repeat_n(span, end - first)
        })
    }

    /// The spans of the parts `i` with `drop[i]` false (or past `drop`'s
    /// end), in order.
    pub fn without(&self, drop: &[bool]) -> SpanRuns {
        let mut out = SpanRuns::new();
        for (i, span) in self.iter().enumerate() {
            if !drop.get(i).copied().unwrap_or(false) {
                out.push(*span);
            }
        }
        out
    }
}

impl FromIterator<Span> for SpanRuns {
    fn from_iter<I: IntoIterator<Item = Span>>(spans: I) -> SpanRuns {
        let mut out = SpanRuns::new();
        for span in spans {
            out.push(span);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FileId;

    fn span(start: u32) -> Span {
        Span {
            file: FileId(0),
            start,
            end: start + 1,
        }
    }

    #[test]
    fn equal_neighbours_share_a_run_and_read_back_per_part() {
        let spans: SpanRuns = [1, 1, 1, 5, 5, 1].into_iter().map(span).collect();
        assert_eq!(spans.runs.len(), 3);
        assert_eq!(spans.len(), 6);
        let starts: Vec<u32> = spans.iter().map(|s| s.start).collect();
        assert_eq!(starts, [1, 1, 1, 5, 5, 1]);
        assert_eq!(spans.get(2), Some(&span(1)));
        assert_eq!(spans.get(3), Some(&span(5)));
        assert_eq!(spans.get(5), Some(&span(1)));
        assert_eq!(spans.get(6), None);
        assert_eq!(SpanRuns::new().first(), None);
        let kept = spans.without(&[false, true, true, true]);
        let starts: Vec<u32> = kept.iter().map(|s| s.start).collect();
        assert_eq!(starts, [1, 5, 1]);
        let mut joined = kept.clone();
        joined.append(&spans);
        assert_eq!(joined.len(), 9);
        assert_eq!(joined.get(3), Some(&span(1)));
        assert_eq!(joined.runs.len(), 5);
    }
}
