//! The `experiment` annotation: `StartTime`, `StopTime`, `Tolerance` and
//! `Interval`, each checked.

use super::{Lowerer, Mode, Val};
use crate::{BaseType, Experiment};
use daec_diag::{Diagnostic, Span, codes};

impl<'a> Lowerer<'a> {
    /// The `experiment` annotation: each setting a finite number, the
    /// tolerance and the output interval positive, the stop time after the
    /// start time (0 when not given). A bad value is a mistake in the
    /// model, reported at it and not used — also when the command line
    /// gives the setting, as the flat model would carry it.
    pub(super) fn experiment(&mut self) {
        let model = self.model;
        // (value, span of the value) of StartTime, StopTime, Tolerance, Interval.
        let mut got: [Option<(f64, Span)>; 4] = [None; 4];
        for a in &model.annotations {
            if a.name.name != "experiment" {
                continue;
            }
            for m in &a.nested {
                let slot = match m.name.name.as_str() {
                    "StartTime" => 0,
                    "StopTime" => 1,
                    "Tolerance" => 2,
                    "Interval" => 3,
                    _ => continue,
                };
                let Some(value) = &m.value else { continue };
                let Ok(v) = self.lower_expr(value, Mode::Const) else {
                    continue;
                };
                let x = match v {
                    Val::Scalar(t, e) if t != BaseType::Boolean => self.const_value(e),
                    _ => None,
                };
                match x {
                    Some(x) if x.is_finite() => got[slot] = Some((x, value.span)),
                    _ => self.diags.push(
                        Diagnostic::error(
                            codes::MODIFIER,
                            format!("`{}` must be a number", m.name.name),
                        )
                        .with_primary(value.span, "not a finite number"),
                    ),
                }
            }
        }
        for (slot, name) in [(2, "Tolerance"), (3, "Interval")] {
            if let Some((x, span)) = got[slot]
                && x <= 0.0
            {
                self.diags.push(
                    Diagnostic::error(
                        codes::MODIFIER,
                        format!("`{name}` must be positive (it is {x})"),
                    )
                    .with_primary(span, "not positive"),
                );
                got[slot] = None;
            }
        }
        if let Some((stop, span)) = got[1] {
            let start = got[0].map_or(0.0, |(x, _)| x);
            if stop <= start {
                let mut d = Diagnostic::error(
                    codes::MODIFIER,
                    format!("`StopTime` ({stop}) must be after `StartTime` ({start})"),
                )
                .with_primary(span, "not after the start time");
                match got[0] {
                    Some((_, start_span)) => {
                        d = d.with_secondary(start_span, "the start time");
                    }
                    None => d = d.with_note("`StartTime` is 0 when not given"),
                }
                self.diags.push(d);
                got[1] = None;
            }
        }
        let value = |k: usize| got[k].map(|(x, _)| x);
        self.experiment = Experiment {
            start_time: value(0),
            stop_time: value(1),
            tolerance: value(2),
            interval: value(3),
        };
    }
}
