//! `min` and `max` of the model's variables checked along the run, as
//! Modelica tools do: at every accepted step's end point and at every
//! output point (the values between them are not searched for extremes).
//!
//! A value violates its bound when it lies beyond it by more than the
//! integration tolerance there, `atol + rtol·|bound|` (the accuracy the
//! step size control asks of a value of that size): `x < min −
//! (atol + rtol·|min|)` or `x > max + (atol + rtol·|max|)`. By default a
//! violation is reported ([`BoundViolation`]: first time and value, the
//! farthest one, how many checked points) and the run goes on;
//! [`BoundsCheck::Error`] stops the run at the first one, a numerical
//! failure with the results up to that point.

use crate::error::{FailureCause, SimError};
use crate::outputs::Outputs;
use crate::places;
use daec_diag::{Label, Span};
use daec_model::Dae;
use daec_solve::readable_number as show;
use serde::Serialize;

/// What a run does when a variable leaves its `min`/`max`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum BoundsCheck {
    /// Report each variable's violations (the default); the run goes on.
    #[default]
    Warn,
    /// Stop the run at the first violation: a numerical failure (exit
    /// code 3 in the CLI) with the results up to that point.
    Error,
}

impl BoundsCheck {
    /// The names `--bounds` accepts.
    pub const NAMES: [&'static str; 2] = ["warn", "error"];

    /// `warn` or `error`.
    pub fn parse(name: &str) -> Option<BoundsCheck> {
        match name.trim().to_ascii_lowercase().as_str() {
            "warn" => Some(BoundsCheck::Warn),
            "error" => Some(BoundsCheck::Error),
            _ => None,
        }
    }
}

/// A variable with `min` or `max`, by its column in the results.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Bounded {
    column: usize,
    name: String,
    min: Option<f64>,
    max: Option<f64>,
    /// The label on its declaration.
    declaration: Option<Label>,
}

impl Bounded {
    /// The unknowns of `dae` with `min` or `max` (columns = unknowns).
    pub(crate) fn of(dae: &Dae) -> Vec<Bounded> {
        dae.unknowns
            .iter()
            .enumerate()
            .filter(|(_, u)| u.min().is_some() || u.max().is_some())
            .map(|(j, u)| Bounded {
                column: j,
                name: u.name().into_owned(),
                min: u.min(),
                max: u.max(),
                declaration: places::unknown_label(dae, j, "declared here", false),
            })
            .collect()
    }
}

/// A variable that left its `min` or `max` during a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BoundViolation {
    /// The variable's flat name.
    pub variable: String,
    /// `min` or `max`.
    pub bound: &'static str,
    /// The bound's value.
    pub limit: f64,
    /// The first checked time at which it was violated.
    pub first_time: f64,
    /// The value then.
    pub first_value: f64,
    /// The time of the farthest violation.
    pub worst_time: f64,
    /// The value then.
    pub worst_value: f64,
    /// Checked points (step ends and output points) beyond the bound.
    pub points: usize,
    /// The variable's declaration (not serialised).
    #[serde(skip)]
    pub span: Option<Span>,
}

impl BoundViolation {
    /// What a label on the declaration says: `declared with min = 0`.
    pub fn declared(&self) -> String {
        declared(self.bound, self.limit)
    }

    /// One sentence: which bound, when first, the farthest value.
    pub fn describe(&self) -> String {
        let (dir, of) = if self.bound == "min" {
            ("below", "lowest")
        } else {
            ("above", "highest")
        };
        format!(
            "`{}` went {dir} its {} = {} at t = {} (`{}` = {}); {of} value {} at t = {}, {} checked point{} beyond the bound",
            self.variable,
            self.bound,
            show(self.limit),
            approx(self.first_time),
            self.variable,
            approx(self.first_value),
            approx(self.worst_value),
            approx(self.worst_time),
            self.points,
            if self.points == 1 { "" } else { "s" }
        )
    }
}

/// The checks of one run.
#[derive(Debug)]
pub(crate) struct BoundsMonitor {
    bounded: Vec<Bounded>,
    rtol: f64,
    atol: f64,
    mode: BoundsCheck,
    /// Per variable, its `min` and `max` violations so far.
    found: Vec<[Option<BoundViolation>; 2]>,
    /// [`BoundsCheck::Error`]: the first violation.
    failure: Option<SimError>,
    /// A row of the results, reused.
    row: Vec<f64>,
}

impl BoundsMonitor {
    /// Checks of the variables `bounded` with the tolerances `rtol`,
    /// `atol`.
    pub(crate) fn new(bounded: &[Bounded], rtol: f64, atol: f64, mode: BoundsCheck) -> Self {
        BoundsMonitor {
            found: vec![[None, None]; bounded.len()],
            bounded: bounded.to_vec(),
            rtol,
            atol,
            mode,
            failure: None,
            row: Vec::new(),
        }
    }

    /// [`BoundsMonitor::check`] of the row `outputs` makes of the
    /// unknowns `z` at `t` (no row is made when no variable is bounded:
    /// this runs after every accepted step).
    pub(crate) fn check_state(&mut self, outputs: &mut Outputs, t: f64, z: &[f64]) -> bool {
        if self.bounded.is_empty() {
            return false;
        }
        let mut row = std::mem::take(&mut self.row);
        outputs.row_into(t, z, &mut row);
        let stop = self.check(t, &row);
        self.row = row;
        stop
    }

    /// Checks the results' row `row` at `t`; `true` when the run must
    /// stop ([`BoundsCheck::Error`] and a violation).
    pub(crate) fn check(&mut self, t: f64, row: &[f64]) -> bool {
        for (b, found) in self.bounded.iter().zip(&mut self.found) {
            let Some(&x) = row.get(b.column) else {
                continue;
            };
            let sides = [("min", b.min, -1.0), ("max", b.max, 1.0)];
            for (slot, (bound, limit, sign)) in found.iter_mut().zip(sides) {
                let Some(limit) = limit else { continue };
                let slack = self.atol + self.rtol * limit.abs();
                let beyond = sign * (x - limit);
                if beyond <= slack {
                    continue;
                }
                match slot {
                    Some(v) => {
                        v.points += 1;
                        if sign * (x - v.worst_value) > 0.0 {
                            (v.worst_time, v.worst_value) = (t, x);
                        }
                    }
                    None => {
                        *slot = Some(BoundViolation {
                            variable: b.name.clone(),
                            bound,
                            limit,
                            first_time: t,
                            first_value: x,
                            worst_time: t,
                            worst_value: x,
                            points: 1,
                            span: b.declaration.as_ref().map(|l| l.span),
                        });
                        if self.mode == BoundsCheck::Error && self.failure.is_none() {
                            self.failure = Some(stop_error(b, bound, limit, slack, t, x));
                        }
                    }
                }
            }
        }
        self.failure.is_some()
    }

    /// [`BoundsCheck::Error`]: the failure of the first violation.
    pub(crate) fn failure(&self) -> Option<SimError> {
        self.failure.clone()
    }

    /// The violations, by first time (then column).
    pub(crate) fn finish(self) -> Vec<BoundViolation> {
        let mut all: Vec<BoundViolation> = self.found.into_iter().flatten().flatten().collect();
        all.sort_by(|a, b| a.first_time.total_cmp(&b.first_time));
        all
    }
}

/// `x` to six significant digits, for a message (`-0.002`, not
/// `-0.0019999999999996687`; the statistics keep every digit).
fn approx(x: f64) -> String {
    let rounded: f64 = format!("{x:.5e}").parse().unwrap_or(x);
    show(rounded)
}

/// `declared with min = 0`.
fn declared(bound: &str, limit: f64) -> String {
    format!("declared with {bound} = {}", show(limit))
}

/// The failure of [`BoundsCheck::Error`] at the first violation.
fn stop_error(b: &Bounded, bound: &str, limit: f64, slack: f64, t: f64, x: f64) -> SimError {
    let dir = if bound == "min" { "below" } else { "above" };
    let cause = FailureCause::Bound {
        variable: b.name.clone(),
        bound: bound.to_string(),
        limit,
        value: x,
    };
    SimError::numerical(t, cause, format!(
        "`{}` = {} at t = {} is {dir} its {bound} = {} (beyond the tolerance atol + rtol·|{bound}| = {}); the run stops at the first violation of a bound (--bounds error)",
        b.name,
        approx(x),
        approx(t),
        show(limit),
        show(slack)
    ))
    .with_labels(
        b.declaration
            .iter()
            .map(|l| Label {
                message: declared(bound, limit),
                primary: true,
                ..l.clone()
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dae_of;

    #[test]
    fn the_state_check_makes_a_row_only_when_a_variable_is_bounded() {
        let bounded = "model B\n  Real x(start = 1, fixed = true, max = 2);\nequation\n  der(x) = 1;\nend B;\n";
        let free = "model F\n  Real x(start = 1, fixed = true);\nequation\n  der(x) = 1;\nend F;\n";
        // x = 3 is beyond max = 2 (and its slack 1e-6 + 1e-6·2)
        let dae = dae_of(bounded);
        let mut outputs = Outputs::none(&dae);
        let mut m = BoundsMonitor::new(outputs.bounded(), 1e-6, 1e-6, BoundsCheck::Error);
        assert!(!m.check_state(&mut outputs, 0.5, &[1.5]));
        assert_eq!(m.row, [1.5]);
        assert!(m.check_state(&mut outputs, 1.0, &[3.0]));
        assert_eq!(m.row, [3.0]);
        let found = m.finish();
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].bound, found[0].first_time), ("max", 1.0));
        // no bounded variable: nothing to violate, and no row is made
        let dae = dae_of(free);
        let mut outputs = Outputs::none(&dae);
        assert!(outputs.bounded().is_empty());
        let mut m = BoundsMonitor::new(outputs.bounded(), 1e-6, 1e-6, BoundsCheck::Error);
        assert!(!m.check_state(&mut outputs, 1.0, &[3.0]));
        assert!(m.row.is_empty());
        assert!(m.failure().is_none() && m.finish().is_empty());
    }
}
