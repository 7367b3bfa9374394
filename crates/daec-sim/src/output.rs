//! Results a user can use: the solution on the output grid as CSV, an SVG
//! plot of chosen variables, and the run statistics (text and JSON).

use crate::bounds::BoundViolation;
use crate::error_control::ErrorControlReport;
use daec_regularize::Limit;
use daec_solve::Stats;
use serde::ser::{Serialize, SerializeMap, SerializeSeq, SerializeStruct, Serializer};
use std::borrow::Cow;
use std::fmt::Write;

/// The solution at the output times.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Results {
    /// Flat variable names (the CSV columns after `time`).
    pub names: Vec<String>,
    /// Output times, ascending.
    pub t: Vec<f64>,
    /// `z[k]` is the solution at `t[k]`.
    pub z: Vec<Vec<f64>>,
}

impl Results {
    /// Index of the variable with this flat name.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// These results with a column for each alias after the others, a
    /// copy of the column of the unknown it names, negated for a negated
    /// alias (borrowed unchanged when no alias names a column).
    pub fn with_aliases(&self, aliases: &[daec_model::Alias]) -> Cow<'_, Results> {
        let from: Vec<(String, usize, bool)> = aliases
            .iter()
            .filter_map(|a| self.column(&a.of).map(|c| (a.name.clone(), c, a.negated)))
            .collect();
        if from.is_empty() {
            return Cow::Borrowed(self);
        }
        let mut names = self.names.clone();
        names.extend(from.iter().map(|(n, _, _)| n.clone()));
        let z = self
            .z
            .iter()
            .map(|row| {
                let mut out = row.clone();
                out.extend(
                    from.iter()
                        .map(|&(_, c, negated)| if negated { -row[c] } else { row[c] }),
                );
                out
            })
            .collect();
        Cow::Owned(Results {
            names,
            t: self.t.clone(),
            z,
        })
    }
}

/// The output grid `t0, t0 + Δ, …` with the last point exactly `t_end`
/// (a grid point closer than `Δ·1e-9` to `t_end` is replaced by it).
pub fn output_grid(t0: f64, t_end: f64, interval: f64) -> Vec<f64> {
    let mut grid = vec![t0];
    let positive = |x: f64| x.is_finite() && x > 0.0;
    if !positive(t_end - t0) || !positive(interval) {
        return grid;
    }
    let mut k = 1u64;
    loop {
        let t = t0 + k as f64 * interval;
        if t >= t_end - 1e-9 * interval {
            break;
        }
        grid.push(t);
        k += 1;
    }
    grid.push(t_end);
    grid
}

/// Which times the results hold (`daec simulate --grid`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OutputTimes {
    /// The uniform grid of [`output_grid`] with the output interval (the
    /// default).
    #[default]
    Uniform,
    /// The end point of every accepted step; at an event the values before
    /// it (the step stops there) and after it, both at the event time — the
    /// only repeated times.
    Steps,
    /// `t0` and `points` times spaced logarithmically in `t − t0`, from the
    /// end of the first accepted step (the first time after `t0` the
    /// solution is computed at) to `t_end`: a transient at `t − t0 ≈ 1e-6`
    /// and the state at `4e10` in one table.
    Log {
        /// Number of points from the first step's end to `t_end`
        /// (at least 2).
        points: usize,
    },
}

/// The logarithmic grid of [`OutputTimes::Log`]: `t0`, then `points`
/// times `t0 + s1·(span/s1)^(k/(points−1))`, `k = 0, …, points − 1`, the
/// last exactly `t_end` (one point, `t_end`, when `s1 ≥ span`).
pub fn log_grid(t0: f64, t_end: f64, s1: f64, points: usize) -> Vec<f64> {
    let span = t_end - t0;
    let mut grid = vec![t0];
    if !(s1 > 0.0 && s1 < span && points >= 2) {
        grid.push(t_end);
        return grid;
    }
    let ratio = (span / s1).ln();
    for k in 0..points - 1 {
        let t = t0 + s1 * (ratio * k as f64 / (points - 1) as f64).exp();
        if t > *grid.last().unwrap_or(&t0) && t < t_end {
            grid.push(t);
        }
    }
    grid.push(t_end);
    grid
}

/// Fills [`Results`] at the output times of an [`OutputTimes`] from the
/// accepted steps of a run.
#[derive(Debug, Clone)]
pub(crate) struct OutputWriter {
    times: OutputTimes,
    t0: f64,
    t_end: f64,
    grid: Vec<f64>,
    next: usize,
}

impl OutputWriter {
    /// The writer of a run over `[t0, t_end]` (the row at `t0` is the
    /// caller's); `interval` is the uniform grid's.
    pub(crate) fn new(times: OutputTimes, t0: f64, t_end: f64, interval: f64) -> Self {
        let grid = match times {
            OutputTimes::Uniform => output_grid(t0, t_end, interval),
            OutputTimes::Steps | OutputTimes::Log { .. } => vec![t0],
        };
        Self {
            times,
            t0,
            t_end,
            grid,
            next: 1,
        }
    }

    /// The rows of a step integrated up to `t` (its end, or the event
    /// that stopped it): `value(τ, out)` writes the solution at an output
    /// time `τ ≤ t` into `out` (all unknowns of the formulation), and
    /// `emit(τ, &out[..n])` makes the row written of its first `n` (the
    /// output equations appended, the bounds checked).
    pub(crate) fn step(
        &mut self,
        results: &mut Results,
        t: f64,
        n: usize,
        out: &mut [f64],
        mut value: impl FnMut(f64, &mut [f64]),
        mut emit: impl FnMut(f64, &[f64]) -> Vec<f64>,
    ) {
        match self.times {
            OutputTimes::Steps => {
                if results.t.last().is_none_or(|&last| t > last) {
                    value(t, out);
                    results.t.push(t);
                    results.z.push(emit(t, &out[..n]));
                }
                return;
            }
            OutputTimes::Log { points } if self.grid.len() == 1 && t > self.t0 => {
                self.grid = log_grid(self.t0, self.t_end, t - self.t0, points);
            }
            _ => {}
        }
        while self.next < self.grid.len() && self.grid[self.next] <= t {
            let to = self.grid[self.next];
            value(to, out);
            results.t.push(to);
            results.z.push(emit(to, &out[..n]));
            self.next += 1;
        }
    }

    /// The values `z` after an event at `t` (a row of their own with
    /// [`OutputTimes::Steps`]; the grids take the solution at grid times
    /// only).
    pub(crate) fn event(
        &mut self,
        results: &mut Results,
        t: f64,
        z: &[f64],
        emit: impl FnOnce(f64, &[f64]) -> Vec<f64>,
    ) {
        if self.times == OutputTimes::Steps {
            results.t.push(t);
            results.z.push(emit(t, z));
        }
    }
}

/// `s` as one CSV field (RFC 4180, 2.6–2.7): between double quotes, with
/// its quotes doubled, when it holds a comma, quote, line feed or carriage
/// return; as it is otherwise.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The CSV text: header `time,<flat names>`, one row per output point,
/// numbers in Rust's shortest round-trip form.
pub fn to_csv(results: &Results) -> String {
    to_csv_threads(results, 1)
}

/// The numbers of a CSV from which [`to_csv_threads`] formats the rows on
/// two threads: below, starting a thread costs more than it saves.
pub const PARALLEL_CSV_MIN_NUMBERS: usize = 65_536;

/// [`to_csv`], formatting the first and the second half of the rows on two
/// threads at once when `threads > 1` and the table has at least
/// [`PARALLEL_CSV_MIN_NUMBERS`] numbers (the same text either way).
pub fn to_csv_threads(results: &Results, threads: usize) -> String {
    let width = results.names.len() + 1;
    let mut s = String::with_capacity(16 * width * (results.t.len() + 1));
    s.push_str("time");
    for n in &results.names {
        s.push(',');
        s.push_str(&csv_field(n));
    }
    s.push('\n');
    let rows = results.t.len().min(results.z.len());
    if threads < 2 || rows < 2 || width * rows < PARALLEL_CSV_MIN_NUMBERS {
        push_rows(&mut s, &results.t, &results.z);
        return s;
    }
    let cut = rows / 2;
    let tail = std::thread::scope(|sc| {
        let tail = sc.spawn(|| {
            let mut tail = String::with_capacity(16 * width * (rows - cut));
            push_rows(&mut tail, &results.t[cut..rows], &results.z[cut..rows]);
            tail
        });
        push_rows(&mut s, &results.t[..cut], &results.z[..cut]);
        tail.join()
    });
    // (a panic of the formatting thread is re-raised here)
    s.push_str(&tail.unwrap_or_else(|p| std::panic::resume_unwind(p)));
    s
}

/// The CSV rows of the times `t` and the values `z` appended to `s`.
fn push_rows(s: &mut String, t: &[f64], z: &[Vec<f64>]) {
    for (t, z) in t.iter().zip(z) {
        push_number(s, *t);
        for v in z {
            s.push(',');
            push_number(s, *v);
        }
        s.push('\n');
    }
}

/// A number in the shortest form that reads back to the same `f64`:
/// positional for moderate magnitudes, scientific otherwise.
fn push_number(s: &mut String, v: f64) {
    let _ = write!(s, "{}", daec_solve::ReadableNumber(v));
}

/// Labels plotters puts on an axis at most (its key points; set
/// explicitly, so that [`AxisFormat`] sees the ticks that are drawn).
const AXIS_LABELS: usize = 11;
/// Series in one panel of a plot.
pub const PANEL_SERIES: usize = 12;
/// Panels in one plot at most: series beyond `PANEL_SERIES × MAX_PANELS`
/// are not drawn ([`Plot::series`] says how many were).
pub const MAX_PANELS: usize = 8;
/// Characters of a name in a legend; longer names are shortened in the
/// middle (`abc…xyz`).
const LEGEND_CHARS: usize = 40;

/// How the ticks of an axis are labelled. The ticks are the ones
/// plotters draws (its key points for the axis range, computed here by
/// plotters itself); the labels get the decimals of their step `1, 2 or
/// 5 × 10^k` — for values below 1e-3 or from 1e6 on, the exponent form
/// with the mantissa digits that step needs — and more where two labels
/// would still read the same. A tick at round-off distance from zero
/// reads `0` (not `-0.0`).
#[derive(Debug, Clone, PartialEq)]
struct AxisFormat {
    step: f64,
    exponent: bool,
    digits: usize,
}

impl AxisFormat {
    /// The format of the ticks plotters puts on an axis over `range`,
    /// and those ticks.
    fn new(range: std::ops::Range<f64>) -> (Self, Vec<f64>) {
        use plotters::coord::ranged1d::{BoldPoints, Ranged};
        use plotters::coord::types::RangedCoordf64;
        let ticks = RangedCoordf64::from(range.clone()).key_points(BoldPoints(AXIS_LABELS));
        let step = match ticks.as_slice() {
            [a, b, ..] => b - a,
            _ => range.end - range.start,
        };
        let step = if step.is_finite() && step > 0.0 {
            step
        } else {
            1.0
        };
        let magnitude = ticks.iter().fold(0.0f64, |m, t| m.max(t.abs()));
        let step_exponent = (step.log10() + 1e-9).floor();
        let exponent = magnitude > 0.0 && !(1e-3..1e6).contains(&magnitude);
        let digits = if exponent {
            magnitude.log10().floor() - step_exponent
        } else {
            -step_exponent
        };
        let mut format = Self {
            step,
            exponent,
            digits: digits.clamp(0.0, 15.0) as usize,
        };
        while format.digits < 17 {
            let mut labels: Vec<String> = ticks.iter().map(|&t| format.label(t)).collect();
            labels.sort();
            labels.dedup();
            if labels.len() == ticks.len() {
                break;
            }
            format.digits += 1;
        }
        (format, ticks)
    }

    /// The label of the tick at `v`.
    fn label(&self, v: f64) -> String {
        let v = if v.abs() < 1e-6 * self.step { 0.0 } else { v };
        let d = self.digits;
        if !v.is_finite() {
            format!("{v}")
        } else if self.exponent {
            if v == 0.0 {
                "0".to_string()
            } else {
                format!("{v:.d$e}")
            }
        } else {
            format!("{v:.d$}")
        }
    }
}

/// `name`, shortened in the middle to [`LEGEND_CHARS`] characters.
fn legend_name(name: &str) -> String {
    let n = name.chars().count();
    if n <= LEGEND_CHARS {
        return name.to_string();
    }
    let head = (LEGEND_CHARS - 1) / 2;
    let tail = LEGEND_CHARS - 1 - head;
    let mut s: String = name.chars().take(head).collect();
    s.push('…');
    s.extend(name.chars().skip(n - tail));
    s
}

/// An SVG plot and how many series it draws.
#[derive(Debug, Clone, PartialEq)]
pub struct Plot {
    /// The SVG document.
    pub svg: String,
    /// Series drawn: all asked for, or the first
    /// `PANEL_SERIES × MAX_PANELS`.
    pub series: usize,
}

/// The y range of the series `columns`, padded, never empty.
fn value_range(results: &Results, columns: &[usize]) -> (f64, f64) {
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for z in &results.z {
        for &c in columns {
            if let Some(&v) = z.get(c)
                && v.is_finite()
            {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
    }
    if !(lo.is_finite() && hi.is_finite()) {
        (lo, hi) = (-1.0, 1.0);
    }
    if hi - lo < 1e-12 * hi.abs().max(1.0) {
        (lo, hi) = (lo - 0.5 * lo.abs().max(1.0), hi + 0.5 * hi.abs().max(1.0));
    }
    let pad = 0.05 * (hi - lo);
    (lo - pad, hi + pad)
}

/// Why [`to_svg`] could not draw a plot.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlotError {
    /// The drawing backend failed (its message).
    #[error("{0}")]
    Drawing(String),
}

impl PlotError {
    fn drawing(e: impl std::fmt::Display) -> PlotError {
        PlotError::Drawing(e.to_string())
    }
}

/// An SVG line plot of the variables `columns` (indices into
/// `results.names`) over time: one panel per [`PANEL_SERIES`] variables,
/// stacked, each with its own value axis and its legend to the right of
/// it; at most [`MAX_PANELS`] panels (the caption and [`Plot::series`]
/// say how many variables were drawn).
pub fn to_svg(results: &Results, columns: &[usize], title: &str) -> Result<Plot, PlotError> {
    use plotters::prelude::*;
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    let drawn = &columns[..columns.len().min(PANEL_SERIES * MAX_PANELS)];
    let groups: Vec<&[usize]> = if drawn.is_empty() {
        vec![drawn]
    } else {
        drawn.chunks(PANEL_SERIES).collect()
    };
    let caption = if drawn.len() < columns.len() {
        format!("{title} ({} of {} variables)", drawn.len(), columns.len())
    } else {
        title.to_string()
    };
    let (t0, t1) = match (results.t.first(), results.t.last()) {
        (Some(&a), Some(&b)) if b > a => (a, b),
        (Some(&a), _) => (a, a + 1.0),
        _ => (0.0, 1.0),
    };
    let name_of = |c: usize| legend_name(results.names.get(c).map_or("", String::as_str));
    let legend_width = drawn
        .iter()
        .map(|&c| name_of(c).chars().count())
        .max()
        .unwrap_or(0) as u32
        * 8
        + 48;
    let panel_height: u32 = if groups.len() == 1 { 520 } else { 300 };
    let size = (900 + legend_width, 40 + panel_height * groups.len() as u32);
    let (x_format, _) = AxisFormat::new(t0..t1);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(PlotError::drawing)?;
        let body = root
            .titled(&caption, ("sans-serif", 22))
            .map_err(PlotError::drawing)?;
        let panels = body.split_evenly((groups.len(), 1));
        for (panel, group) in panels.iter().zip(&groups) {
            let (plot_area, legend_area) = panel.split_horizontally(900);
            let (y0, y1) = value_range(results, group);
            let (y_format, y_ticks) = AxisFormat::new(y0..y1);
            let y_label_chars = y_ticks
                .iter()
                .map(|&y| y_format.label(y).chars().count())
                .max()
                .unwrap_or(1) as u32;
            let mut chart = ChartBuilder::on(&plot_area)
                .margin(12)
                .x_label_area_size(36)
                .y_label_area_size((y_label_chars * 8 + 16).clamp(40, 200))
                .build_cartesian_2d(t0..t1, y0..y1)
                .map_err(PlotError::drawing)?;
            chart
                .configure_mesh()
                .x_labels(AXIS_LABELS)
                .y_labels(AXIS_LABELS)
                .x_desc("time")
                .x_label_formatter(&|t| x_format.label(*t))
                .y_label_formatter(&|y| y_format.label(*y))
                .draw()
                .map_err(PlotError::drawing)?;
            for (k, &c) in group.iter().enumerate() {
                let color = Palette99::pick(k).to_rgba();
                let pts: Vec<(f64, f64)> = results
                    .t
                    .iter()
                    .zip(&results.z)
                    .filter_map(|(&t, z)| {
                        z.get(c).copied().filter(|v| v.is_finite()).map(|v| (t, v))
                    })
                    .collect();
                chart
                    .draw_series(LineSeries::new(pts, color.stroke_width(2)))
                    .map_err(PlotError::drawing)?;
                let y = 24 + 20 * k as i32;
                legend_area
                    .draw(&PathElement::new(
                        vec![(4, y), (28, y)],
                        color.stroke_width(2),
                    ))
                    .map_err(PlotError::drawing)?;
                let font = TextStyle::from(("sans-serif", 14).into_font())
                    .pos(Pos::new(HPos::Left, VPos::Center));
                legend_area
                    .draw(&Text::new(name_of(c), (36, y), font))
                    .map_err(PlotError::drawing)?;
            }
        }
        root.present().map_err(PlotError::drawing)?;
    }
    Ok(Plot {
        svg,
        series: drawn.len(),
    })
}

/// How a simulation keeps the model's declared invariants
/// (`__daec(invariant = true)`; the `invariants` module).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum InvariantEnforcement {
    /// Evaluated at every accepted step and reported, not enforced: the
    /// square formulations (StE, DD, GGL, DI1) and the index-3 form carry
    /// no rows for them, and no projection onto them is made.
    #[default]
    Measured,
    /// Additional constraint rows of the overdetermined forms (HiC, ADA),
    /// solved with the constraints at every step.
    Rows,
    /// Projected onto after every accepted step (`--method projection`).
    Projection,
}

impl InvariantEnforcement {
    /// The name in `--stats-json`: `measured`, `rows` or `projection`.
    pub fn name(self) -> &'static str {
        match self {
            InvariantEnforcement::Measured => "measured",
            InvariantEnforcement::Rows => "rows",
            InvariantEnforcement::Projection => "projection",
        }
    }

    /// What the summary says of it.
    pub fn summary(self) -> &'static str {
        match self {
            InvariantEnforcement::Measured => {
                "measured, not enforced: this formulation and method carry no rows for them and do not project onto them (--form hic or ada, or --method projection, enforce them)"
            }
            InvariantEnforcement::Rows => "enforced as constraint rows",
            InvariantEnforcement::Projection => "enforced by projection after every step",
        }
    }
}

/// Work and accuracy statistics of a simulation: the integrator's counters
/// ([`Stats`], summed over the restarts; read through `Deref`, e.g.
/// `stats.steps_accepted`) and the simulation's own.
///
/// The JSON of [`to_json`](Self::to_json) (`daec simulate --stats-json`)
/// has the integrator's counters `steps_accepted`, `steps_rejected`,
/// `residual_evals`, `jacobian_evals`, `lu_decompositions`,
/// `newton_iterations`, `newton_failures`, `selection_changes` and
/// `projections` beside the fields below.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SimStats {
    /// The integrator's work counters.
    pub solver: Stats,
    /// Switches between StE variants or DD choices of dummy derivatives
    /// (dynamic state selection).
    pub ste_switches: usize,
    /// `when` events that fired.
    pub events: usize,
    /// Restarts of the integrator (events and discontinuities of `time`).
    pub restarts: usize,
    /// Number of unknowns.
    pub unknowns: usize,
    /// Differential rows of the HiC form.
    pub differential_equations: usize,
    /// Constraint rows (all levels; not the rows of declared invariants,
    /// counted in [`SimStats::invariants`]).
    pub constraints: usize,
    /// Largest constraint residual `max |H_i(t, z)|` at the accepted steps.
    pub max_constraint_residual: f64,
    /// The same per constraint level `0..=ν_c`.
    pub max_constraint_residual_by_level: Vec<f64>,
    /// Largest constraint residual at the accepted steps in units of the
    /// error weights: `max_i |g_i| / Σ_j |∂g_i/∂z_j|·(atol + rtol·|z_j|)`,
    /// to first order the multiple of the tolerance by which the unknowns
    /// would have to move to satisfy the constraints (below 1: on the
    /// constraints within the tolerance).
    pub max_constraint_residual_scaled: f64,
    /// What the error test weighed, and which of the model's unknowns it
    /// left out or scaled down.
    pub error_control: ErrorControlReport,
    /// The model's declared invariants (`__daec(invariant = true)`).
    pub invariants: usize,
    /// Largest invariant residual `max |I_k(t, z)|` at the accepted steps
    /// (0 without invariants).
    pub max_invariant_residual: f64,
    /// How the run kept the declared invariants: as constraint rows,
    /// by projection, or only measured.
    pub invariant_enforcement: InvariantEnforcement,
    /// Wall time of parsing, analysis, the HiC form and compilation, in
    /// seconds.
    pub compile_seconds: f64,
    /// Wall time of the integration, in seconds.
    pub integrate_seconds: f64,
    /// Whether the integrator evaluated native code (`--native`, compiled
    /// by `rustc`; its time is in `compile_seconds`) rather than tapes
    /// (the field is left out of the JSON then).
    pub native_code: bool,
    /// Wall time of the native code (`--native`): generating its source,
    /// finding the library in the cache or building it, and loading it,
    /// for the first formulation and those built during the run, in
    /// seconds; part of `compile_seconds` (the field is left out of the
    /// JSON of a tape run).
    pub native_seconds: f64,
    /// The variables that left their `min` or `max` during the run
    /// (checked at the accepted steps and output points; see
    /// [`crate::BoundsCheck`]).
    pub bound_violations: Vec<BoundViolation>,
    /// The size limits that made the analysis, the formulation or the
    /// simulation skip part of their work (each also a warning of the
    /// CLI): the field `limits` of the JSON, one object per limit with
    /// `stage`, `limit`, `size` and `what_was_skipped`.
    pub limits: Vec<Limit>,
    /// Threads the evaluation of the run could use: 2 when the run
    /// allowed more than one ([`crate::ResolvedOptions::threads`]) and
    /// the problem is large enough for a second thread
    /// ([`crate::FormProblem::is_parallel`]), else 1 (the field `threads`
    /// of the JSON only when 2).
    pub threads: usize,
}

/// [`SimStats::limits`] in the JSON: the fields of every [`Limit`].
struct LimitsJson<'a>(&'a [Limit]);

impl Serialize for LimitsJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct One<'a>(&'a Limit);
        impl Serialize for One<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let l = self.0;
                let mut m = serializer.serialize_map(Some(4))?;
                m.serialize_entry("stage", l.stage)?;
                m.serialize_entry("limit", &l.limit)?;
                m.serialize_entry("size", &l.size)?;
                m.serialize_entry("what_was_skipped", &l.what_was_skipped)?;
                m.end()
            }
        }
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for l in self.0 {
            seq.serialize_element(&One(l))?;
        }
        seq.end()
    }
}

impl std::ops::Deref for SimStats {
    type Target = Stats;

    fn deref(&self) -> &Stats {
        &self.solver
    }
}

impl std::ops::DerefMut for SimStats {
    fn deref_mut(&mut self) -> &mut Stats {
        &mut self.solver
    }
}

impl Serialize for SimStats {
    /// The fields in the order of `--stats-json`: the integrator's
    /// counters the simulation reports, then its own (`invariants`,
    /// `max_invariant_residual` and `invariant_enforcement` only for a
    /// model with invariants,
    /// `native_code` only when set, `threads` only when 2).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let s = &self.solver;
        let mut m = serializer.serialize_struct("SimStats", 30)?;
        m.serialize_field("steps_accepted", &s.steps_accepted)?;
        m.serialize_field("steps_rejected", &s.steps_rejected)?;
        m.serialize_field("residual_evals", &s.residual_evals)?;
        m.serialize_field("jacobian_evals", &s.jacobian_evals)?;
        m.serialize_field("lu_decompositions", &s.lu_decompositions)?;
        m.serialize_field("newton_iterations", &s.newton_iterations)?;
        m.serialize_field("newton_failures", &s.newton_failures)?;
        m.serialize_field("selection_changes", &s.selection_changes)?;
        m.serialize_field("ste_switches", &self.ste_switches)?;
        m.serialize_field("projections", &s.projections)?;
        m.serialize_field("events", &self.events)?;
        m.serialize_field("restarts", &self.restarts)?;
        m.serialize_field("unknowns", &self.unknowns)?;
        m.serialize_field("differential_equations", &self.differential_equations)?;
        m.serialize_field("constraints", &self.constraints)?;
        m.serialize_field("max_constraint_residual", &self.max_constraint_residual)?;
        m.serialize_field(
            "max_constraint_residual_by_level",
            &self.max_constraint_residual_by_level,
        )?;
        m.serialize_field(
            "max_constraint_residual_scaled",
            &self.max_constraint_residual_scaled,
        )?;
        m.serialize_field("error_control", self.error_control.mode.name())?;
        m.serialize_field("error_control_suppressed", &self.error_control.suppressed)?;
        m.serialize_field("error_control_scaled", &self.error_control.scaled)?;
        m.serialize_field("error_control_rule", &self.error_control.rule)?;
        if self.invariants > 0 {
            m.serialize_field("invariants", &self.invariants)?;
            m.serialize_field("max_invariant_residual", &self.max_invariant_residual)?;
            m.serialize_field("invariant_enforcement", self.invariant_enforcement.name())?;
        } else {
            m.skip_field("invariants")?;
            m.skip_field("max_invariant_residual")?;
            m.skip_field("invariant_enforcement")?;
        }
        m.serialize_field("compile_seconds", &self.compile_seconds)?;
        m.serialize_field("integrate_seconds", &self.integrate_seconds)?;
        if self.native_code {
            m.serialize_field("native_code", &self.native_code)?;
            m.serialize_field("native_seconds", &self.native_seconds)?;
        } else {
            m.skip_field("native_code")?;
            m.skip_field("native_seconds")?;
        }
        m.serialize_field("bound_violations", &self.bound_violations)?;
        m.serialize_field("limits", &LimitsJson(&self.limits))?;
        if self.threads > 1 {
            m.serialize_field("threads", &self.threads)?;
        } else {
            m.skip_field("threads")?;
        }
        m.end()
    }
}

impl SimStats {
    /// Takes the constraint residuals `by_level` (max-norm per level) of one
    /// accepted point into the running maxima.
    pub fn record_constraint_residuals(&mut self, by_level: &[f64]) {
        let m = &mut self.max_constraint_residual_by_level;
        if m.len() < by_level.len() {
            m.resize(by_level.len(), 0.0);
        }
        for (m, &v) in m.iter_mut().zip(by_level) {
            *m = m.max(v);
        }
        self.max_constraint_residual = m.iter().fold(0.0, |a: f64, &b| a.max(b));
    }

    /// Takes the constraint values `g` of one accepted point, row `i` of
    /// level `levels[i]`, into the running maxima (NaN counts as
    /// infinite): [`SimStats::record_constraint_residuals`] of the
    /// max-norms per level, without forming them.
    pub fn record_constraint_rows(&mut self, g: &[f64], levels: &[u32]) {
        let m = &mut self.max_constraint_residual_by_level;
        for (v, &l) in g.iter().zip(levels) {
            let a = if v.is_nan() { f64::INFINITY } else { v.abs() };
            let l = l as usize;
            if m.len() <= l {
                m.resize(l + 1, 0.0);
            }
            m[l] = m[l].max(a);
            self.max_constraint_residual = self.max_constraint_residual.max(a);
        }
    }

    /// Takes the scaled constraint residual of one accepted point
    /// ([`SimStats::max_constraint_residual_scaled`]) into the running
    /// maximum (NaN counts as infinite).
    pub fn record_scaled_constraint_residual(&mut self, scaled: f64) {
        let v = if scaled.is_nan() {
            f64::INFINITY
        } else {
            scaled
        };
        self.max_constraint_residual_scaled = self.max_constraint_residual_scaled.max(v);
    }

    /// The statistics as a pretty-printed JSON document.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }

    /// A short human-readable summary.
    pub fn summary(&self) -> String {
        let levels: Vec<String> = self
            .max_constraint_residual_by_level
            .iter()
            .enumerate()
            .map(|(l, v)| format!("level {l}: {v:.2e}"))
            .collect();
        let mut s = String::new();
        let _ = writeln!(
            s,
            "steps: {} accepted, {} rejected{}; residual evaluations: {}; Jacobians: {}; LU: {}; Newton iterations: {}",
            self.steps_accepted,
            self.steps_rejected,
            if self.newton_failures > 0 {
                format!(", {} Newton failures", self.newton_failures)
            } else {
                String::new()
            },
            self.residual_evals,
            self.jacobian_evals,
            self.lu_decompositions,
            self.newton_iterations
        );
        /// `n thing`, `n things`.
        fn count(n: usize, thing: &str) -> String {
            format!("{n} {thing}{}", if n == 1 { "" } else { "s" })
        }
        let _ = writeln!(
            s,
            "formulation: {}, {}, {}; events: {}, restarts: {}{}",
            count(self.unknowns, "unknown"),
            count(self.differential_equations, "differential equation"),
            count(self.constraints, "constraint"),
            self.events,
            self.restarts,
            if self.ste_switches > 0 {
                format!(", state-selection switches (StE/DD): {}", self.ste_switches)
            } else if self.projections > 0 {
                format!(", projections: {}", self.projections)
            } else {
                String::new()
            }
        );
        if self.constraints > 0 {
            let _ = writeln!(
                s,
                "max constraint residual: {:.2e}{}; in units of the tolerance: {:.2e}",
                self.max_constraint_residual,
                if levels.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", levels.join(", "))
                },
                self.max_constraint_residual_scaled
            );
        }
        let _ = writeln!(s, "{}", self.error_control.summary_line(8));
        if self.invariants > 0 {
            let _ = writeln!(
                s,
                "max invariant residual: {:.2e} ({}; {})",
                self.max_invariant_residual,
                count(self.invariants, "invariant"),
                self.invariant_enforcement.summary()
            );
        }
        if !self.bound_violations.is_empty() {
            let variables: std::collections::BTreeSet<&str> = self
                .bound_violations
                .iter()
                .map(|v| v.variable.as_str())
                .collect();
            let points: usize = self.bound_violations.iter().map(|v| v.points).sum();
            let _ = writeln!(
                s,
                "bounds: {} left {} min/max ({} beyond the tolerance)",
                count(variables.len(), "variable"),
                if variables.len() == 1 { "its" } else { "their" },
                count(points, "checked point")
            );
        }
        if !self.limits.is_empty() {
            let stages: Vec<&str> = self.limits.iter().map(|l| l.stage).collect();
            let _ = writeln!(
                s,
                "size limits applied (see the warnings): {}",
                stages.join(", ")
            );
        }
        let _ = writeln!(
            s,
            "wall time: compile {:.3} s{}, integrate {:.3} s",
            self.compile_seconds,
            if self.native_code {
                format!(" (native code {:.3} s)", self.native_seconds)
            } else {
                String::new()
            },
            self.integrate_seconds
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::{AxisFormat, MAX_PANELS, PANEL_SERIES, Results, SimStats, log_grid, to_svg};

    #[test]
    fn the_log_grid_is_geometric_in_the_time_since_the_start() {
        let close = |g: Vec<f64>, want: &[f64]| {
            assert_eq!(g.len(), want.len(), "{g:?}");
            for (a, b) in g.iter().zip(want) {
                assert!((a - b).abs() <= 1e-12 * b.abs(), "{g:?}");
            }
            assert_eq!(g.last(), want.last(), "the last point is exact");
        };
        close(
            log_grid(0.0, 1e4, 1.0, 5),
            &[0.0, 1.0, 10.0, 100.0, 1000.0, 1e4],
        );
        close(log_grid(1.0, 101.0, 1.0, 3), &[1.0, 2.0, 11.0, 101.0]);
        // a first step that ends the run
        assert_eq!(log_grid(0.0, 1.0, 1.0, 10), [0.0, 1.0]);
    }

    /// The labels of the ticks plotters draws on an axis over `lo..hi`.
    fn labels(lo: f64, hi: f64) -> Vec<String> {
        let (format, ticks) = AxisFormat::new(lo..hi);
        ticks.iter().map(|&t| format.label(t)).collect()
    }

    #[test]
    fn axis_labels_are_those_of_the_ticks_drawn() {
        // The double pendulum's [-2.6, 2.4]: plotters draws up to eleven
        // ticks, here 0.5 apart; the step guessed from a tenth of the span
        // (0.5 → "5 × 10^-1", rounded up to 1) gave no decimals and
        // labels "-3 -2 -2 -2 -1 -0 0 0 1 2 2".
        assert_eq!(
            labels(-2.6, 2.4),
            [
                "-2.5", "-2.0", "-1.5", "-1.0", "-0.5", "0.0", "0.5", "1.0", "1.5", "2.0"
            ]
        );
        // [-1.1, 1.1]: steps of 0.2
        assert_eq!(
            labels(-1.1, 1.1),
            [
                "-1.0", "-0.8", "-0.6", "-0.4", "-0.2", "0.0", "0.2", "0.4", "0.6", "0.8", "1.0"
            ]
        );
        // negative ranges
        assert_eq!(
            labels(-7.3, -2.1),
            [
                "-7.0", "-6.5", "-6.0", "-5.5", "-5.0", "-4.5", "-4.0", "-3.5", "-3.0", "-2.5"
            ]
        );
        assert_eq!(
            labels(-0.0375, -0.0001),
            [
                "-0.035", "-0.030", "-0.025", "-0.020", "-0.015", "-0.010", "-0.005"
            ]
        );
        // a tiny variable: exponent form with the digits of the step
        assert_eq!(
            labels(0.0, 1e-8),
            [
                "0", "1.0e-9", "2.0e-9", "3.0e-9", "4.0e-9", "5.0e-9", "6.0e-9", "7.0e-9",
                "8.0e-9", "9.0e-9", "1.0e-8"
            ]
        );
        // a large value that changes little: as many digits as tell the
        // ticks apart
        assert_eq!(
            labels(1e6, 1e6 + 3.0),
            [
                "1.0000000e6",
                "1.0000005e6",
                "1.0000010e6",
                "1.0000015e6",
                "1.0000020e6",
                "1.0000025e6",
                "1.0000030e6"
            ]
        );
        // moderate magnitudes; a tick at round-off distance from zero is 0
        assert_eq!(
            labels(0.0, 0.0075),
            [
                "0.000", "0.001", "0.002", "0.003", "0.004", "0.005", "0.006", "0.007"
            ]
        );
        assert_eq!(labels(0.0, 1000.0)[2], "200");
        let (format, _) = AxisFormat::new(-1.1..1.1);
        assert_eq!(format.label(-1.1e-17), "0.0");
        // every label distinct, over many ranges
        for k in 0..200 {
            let lo = -3.7 + 0.37 * k as f64;
            let hi = lo + 10f64.powi(k % 13 - 6) * (1.0 + (k % 7) as f64);
            let l = labels(lo, hi);
            let mut d = l.clone();
            d.dedup();
            assert_eq!(d, l, "[{lo}, {hi}]");
        }
    }

    #[test]
    fn the_plot_of_a_tiny_variable_has_distinct_labels() {
        let results = Results {
            names: vec!["x".into()],
            t: (0..=10).map(|k| k as f64 * 0.1).collect(),
            z: (0..=10).map(|k| vec![k as f64 * 1e-8]).collect(),
        };
        let svg = to_svg(&results, &[0], "tiny").expect("plots").svg;
        for label in ["0", "2.0e-8", "4.0e-8", "8.0e-8", "0.4", "1.0"] {
            assert!(
                svg.contains(&format!(">\n{label}\n<")),
                "no label {label}: {svg}"
            );
        }
        assert!(!svg.contains(">\n-0"), "{svg}");
    }

    #[test]
    fn many_series_go_into_panels_with_the_legend_outside() {
        let n = 200;
        let results = Results {
            names: (0..n).map(|j| format!("chain.x[{j}]")).collect(),
            t: (0..=10).map(|k| k as f64).collect(),
            z: (0..=10)
                .map(|k| (0..n).map(|j| (k * j) as f64).collect())
                .collect(),
        };
        // 30 series: three panels of at most twelve, every name in a legend
        let columns: Vec<usize> = (0..30).collect();
        let plot = to_svg(&results, &columns, "chain").expect("plots");
        assert_eq!(plot.series, 30);
        let legend_x: Vec<f64> = (0..30)
            .map(|j| {
                let label = format!(">\nchain.x[{j}]\n<");
                let at = plot
                    .svg
                    .find(&label)
                    .unwrap_or_else(|| panic!("no {label}"));
                let tag = &plot.svg[plot.svg[..at].rfind("<text").unwrap()..at];
                let x = tag.split("x=\"").nth(1).unwrap();
                x[..x.find('"').unwrap()].parse().unwrap()
            })
            .collect();
        // right of the 900 pixels of the plots
        assert!(legend_x.iter().all(|&x| x > 900.0), "{legend_x:?}");
        // three panels, each with its axes
        assert_eq!(plot.svg.matches(">\ntime\n<").count(), 3);
        assert!(plot.svg.contains(">\nchain\n<"));
        // all 200: the first PANEL_SERIES × MAX_PANELS, said in the caption
        let columns: Vec<usize> = (0..n).collect();
        let plot = to_svg(&results, &columns, "chain").expect("plots");
        let max = PANEL_SERIES * MAX_PANELS;
        assert_eq!(plot.series, max);
        assert!(
            plot.svg
                .contains(&format!(">\nchain ({max} of {n} variables)\n<"))
        );
        assert!(plot.svg.contains(&format!(">\nchain.x[{}]\n<", max - 1)));
        assert!(!plot.svg.contains(&format!(">\nchain.x[{max}]\n<")));
    }

    #[test]
    fn a_size_limit_reaches_the_json_and_the_summary() {
        let stats = SimStats {
            limits: vec![daec_regularize::Limit {
                stage: "DD re-selection",
                limit: 200,
                size: 700,
                what_was_skipped: "kept".into(),
            }],
            ..SimStats::default()
        };
        let v: serde_json::Value = serde_json::from_str(&stats.to_json()).unwrap();
        assert_eq!(v["limits"][0]["stage"], "DD re-selection");
        assert_eq!(v["limits"][0]["size"], 700);
        assert_eq!(v["limits"][0]["limit"], 200);
        assert!(
            stats
                .summary()
                .contains("size limits applied (see the warnings): DD re-selection"),
            "{}",
            stats.summary()
        );
        let none: serde_json::Value = serde_json::from_str(&SimStats::default().to_json()).unwrap();
        assert_eq!(none["limits"], serde_json::json!([]));
    }

    #[test]
    fn the_stats_json_keeps_its_fields_and_their_order() {
        let mut stats = SimStats {
            ste_switches: 2,
            ..SimStats::default()
        };
        stats.steps_accepted = 7;
        stats.selections = 3; // an integrator counter the JSON leaves out
        let json = stats.to_json();
        let keys: Vec<&str> = json
            .lines()
            .filter_map(|l| l.trim().strip_prefix('"')?.split('"').next())
            .collect();
        assert_eq!(
            keys,
            [
                "steps_accepted",
                "steps_rejected",
                "residual_evals",
                "jacobian_evals",
                "lu_decompositions",
                "newton_iterations",
                "newton_failures",
                "selection_changes",
                "ste_switches",
                "projections",
                "events",
                "restarts",
                "unknowns",
                "differential_equations",
                "constraints",
                "max_constraint_residual",
                "max_constraint_residual_by_level",
                "max_constraint_residual_scaled",
                "error_control",
                "error_control_suppressed",
                "error_control_scaled",
                "error_control_rule",
                "compile_seconds",
                "integrate_seconds",
                "bound_violations",
                "limits",
            ]
        );
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(
            (v["steps_accepted"].as_u64(), v["ste_switches"].as_u64()),
            (Some(7), Some(2))
        );
        stats.native_code = true;
        let v: serde_json::Value = serde_json::from_str(&stats.to_json()).unwrap();
        assert_eq!(v["native_code"], true);
        assert!(v["native_seconds"].is_number(), "{v}");
        // the integrator's projections reach the JSON and the summary
        stats.projections = 496;
        let v: serde_json::Value = serde_json::from_str(&stats.to_json()).unwrap();
        assert_eq!(v["projections"], 496);
        stats.ste_switches = 0;
        assert!(
            stats.summary().contains(", projections: 496"),
            "{}",
            stats.summary()
        );
    }

    #[test]
    fn the_summary_counts_in_words_and_names_constraint_residuals_only_with_constraints() {
        let ode = SimStats {
            unknowns: 1,
            differential_equations: 1,
            ..SimStats::default()
        };
        let s = ode.summary();
        assert!(
            s.contains("formulation: 1 unknown, 1 differential equation, 0 constraints;"),
            "{s}"
        );
        assert!(!s.contains("constraint residual"), "{s}");
        let pendulum = SimStats {
            unknowns: 5,
            differential_equations: 4,
            constraints: 3,
            max_constraint_residual: 2.5e-10,
            max_constraint_residual_by_level: vec![1e-12, 1e-11, 2.5e-10],
            ..SimStats::default()
        };
        let s = pendulum.summary();
        assert!(
            s.contains("formulation: 5 unknowns, 4 differential equations, 3 constraints;"),
            "{s}"
        );
        assert!(
            s.contains(
                "max constraint residual: 2.50e-10 (level 0: 1.00e-12, level 1: 1.00e-11, level 2: 2.50e-10)"
            ),
            "{s}"
        );
    }
}
