//! [`SpanRuns`]: the spans of a long sequence of parts, stored by runs.

use crate::Span;

/// The source spans of a sequence of parts (unknowns, equations), one per
/// part, stored as runs of a repeated cycle of spans: the elements of an
/// array share their declaration's span (a cycle of one span) and the
/// equations a `for` loop expands to repeat the loop body's equations (a
/// cycle of as many spans as the body has equations), so a large model
/// stores a run per source declaration or loop rather than a span per
/// scalar. Reads as a slice does ([`SpanRuns::get`], [`SpanRuns::len`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpanRuns {
    /// The runs, by increasing first part; a run ends where the next
    /// begins (the last at `len`).
    runs: Vec<Run>,
    /// The cycle of each run, run after run.
    cycles: Vec<Span>,
    /// The number of parts.
    len: usize,
}

/// The longest cycle of a run: a `for` loop's body of more equations
/// than this is stored as several runs per iteration (and a sequence of
/// distinct spans as runs of this many).
const MAX_CYCLE: usize = 64;

/// Parts `first..` (up to the next run) with the spans
/// `cycles[start..start + period]` repeated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Run {
    first: usize,
    start: usize,
    period: usize,
}

impl Run {
    /// The index in `cycles` of the span of part `i` of this run.
    fn at(&self, i: usize) -> usize {
        self.start + (i - self.first) % self.period
    }
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
        let run = self.runs.partition_point(|r| r.first <= i);
        let run = self.runs.get(run.checked_sub(1)?)?;
        self.cycles.get(run.at(i))
    }

    /// The span of the first part.
    pub fn first(&self) -> Option<&Span> {
        self.get(0)
    }

    /// Appends a part of span `span`: it continues the last run where it
    /// is the span its cycle puts there, lengthens the cycle of a run that
    /// has not repeated yet by a span new to the cycle (up to
    /// 64 spans), and starts a run otherwise.
    pub fn push(&mut self, span: Span) {
        let len = self.len;
        self.len += 1;
        if let Some(run) = self.runs.last_mut() {
            if self.cycles[run.at(len)] == span {
                return;
            }
            if len - run.first == run.period
                && run.period < MAX_CYCLE
                && !self.cycles[run.start..].contains(&span)
            {
                run.period += 1;
                self.cycles.push(span);
                return;
            }
        }
        self.runs.push(Run {
            first: len,
            start: self.cycles.len(),
            period: 1,
        });
        self.cycles.push(span);
    }

    /// Appends the parts of `other`.
    pub fn append(&mut self, other: &SpanRuns) {
        for span in other.iter() {
            self.push(*span);
        }
    }

    /// The span of each part, in order.
    pub fn iter(&self) -> impl Iterator<Item = &Span> + '_ {
        self.runs.iter().enumerate().flat_map(|(k, run)| {
            let end = self.runs.get(k + 1).map_or(self.len, |next| next.first);
            (run.first..end).map(|i| &self.cycles[run.at(i)])
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
        // [1, 5, 1] is one run of the cycle [1, 5]; the parts appended
        // start three more: [1, 1, 1], [5, 5], [1]
        assert_eq!(joined.runs.len(), 4);
        let starts: Vec<u32> = joined.iter().map(|s| s.start).collect();
        assert_eq!(starts, [1, 5, 1, 1, 1, 1, 5, 5, 1]);
    }

    #[test]
    fn a_loop_body_of_several_equations_is_one_run() {
        // a `for` loop with two equations in its body, then one equation
        let parts: Vec<u32> = (0..1000).map(|k| 10 + k % 2).chain([20]).collect();
        let spans: SpanRuns = parts.iter().copied().map(span).collect();
        assert_eq!(spans.runs.len(), 2);
        assert_eq!(spans.cycles.len(), 3);
        assert_eq!(spans.len(), 1001);
        for (i, &p) in parts.iter().enumerate() {
            assert_eq!(spans.get(i), Some(&span(p)));
        }
        let read: Vec<u32> = spans.iter().map(|s| s.start).collect();
        assert_eq!(read, parts);
        // a scalar equation, a loop of one equation, then a scalar
        // equation and a loop of two: a span already in the cycle starts
        // a run ([1, 2], [2, 2], [3, 4, 5], [4, 5, 4, 5])
        let parts: Vec<u32> = [1, 2, 2, 2, 3, 4, 5, 4, 5, 4, 5].into();
        let spans: SpanRuns = parts.iter().copied().map(span).collect();
        assert_eq!(spans.runs.len(), 4);
        assert_eq!(spans.cycles.len(), 8);
        let read: Vec<u32> = spans.iter().map(|s| s.start).collect();
        assert_eq!(read, parts);
        let parts: Vec<u32> = (0..1000).map(|k| k / 10).collect();
        let spans: SpanRuns = parts.iter().copied().map(span).collect();
        let read: Vec<u32> = spans.iter().map(|s| s.start).collect();
        assert_eq!(read, parts);
        assert_eq!(spans.runs.len(), 100);
        assert_eq!(spans.cycles.len(), 100);
        // distinct spans are one cycle, read back in order
        let distinct: SpanRuns = [3, 1, 2].into_iter().map(span).collect();
        assert_eq!(distinct.runs.len(), 1);
        let read: Vec<u32> = distinct.iter().map(|s| s.start).collect();
        assert_eq!(read, [3, 1, 2]);
        // a cycle holds at most MAX_CYCLE spans
        let distinct: SpanRuns = (0..200).map(span).collect();
        assert_eq!(distinct.runs.len(), 200usize.div_ceil(MAX_CYCLE));
        assert_eq!(distinct.get(199), Some(&span(199)));
    }
}
