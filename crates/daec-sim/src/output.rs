//! Results a user can use: the solution on the output grid as CSV, an SVG
//! plot of chosen variables, and the run statistics (text and JSON).

use serde::Serialize;
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

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The CSV text: header `time,<flat names>`, one row per output point,
/// numbers in Rust's shortest round-trip form.
pub fn to_csv(results: &Results) -> String {
    let mut s = String::with_capacity(16 * (results.names.len() + 1) * (results.t.len() + 1));
    s.push_str("time");
    for n in &results.names {
        s.push(',');
        s.push_str(&csv_field(n));
    }
    s.push('\n');
    for (t, z) in results.t.iter().zip(&results.z) {
        push_number(&mut s, *t);
        for v in z {
            s.push(',');
            push_number(&mut s, *v);
        }
        s.push('\n');
    }
    s
}

/// A number in the shortest form that reads back to the same `f64`:
/// positional for moderate magnitudes, scientific otherwise.
fn push_number(s: &mut String, v: f64) {
    let _ = write!(s, "{}", daec_solve::ReadableNumber(v));
}

/// The label of the tick at `v` on an axis spanning `span` whose values
/// reach `magnitude` in absolute value. Plotters puts at most ten labels
/// on an axis, at multiples of a step `1, 2 or 5 × 10^k`; the labels get
/// the decimals of that step (or, for values below 1e-3 or from 1e6 on,
/// the exponent form with the mantissa digits of the step): uniform
/// labels, a tick at round-off distance from zero reads as zero (not
/// `-0.0`), and a variable of size 1e-8 gets `2.0e-8`, `4.0e-8` where
/// plotters' fixed five decimals printed `0.0` throughout.
fn axis_label(v: f64, span: f64, magnitude: f64) -> String {
    let rough = span / 10.0;
    if !(rough > 0.0 && rough.is_finite() && v.is_finite()) {
        return format!("{v}");
    }
    let k = rough.log10().floor();
    let m = rough / 10f64.powf(k);
    let step_exponent = if m <= 5.0 { k } else { k + 1.0 };
    let v = if v.abs() < 1e-6 * rough { 0.0 } else { v };
    if !(1e-3..1e6).contains(&magnitude) {
        if v == 0.0 {
            return "0".to_string();
        }
        let digits = (magnitude.log10().floor() - step_exponent).clamp(0.0, 12.0) as usize;
        format!("{v:.digits$e}")
    } else {
        let decimals = (-step_exponent).clamp(0.0, 12.0) as usize;
        format!("{v:.decimals$}")
    }
}

/// An SVG line plot of the variables `columns` (indices into
/// `results.names`) over time.
pub fn to_svg(results: &Results, columns: &[usize], title: &str) -> Result<String, String> {
    use plotters::prelude::*;
    let mut svg = String::new();
    let (t0, t1) = match (results.t.first(), results.t.last()) {
        (Some(&a), Some(&b)) if b > a => (a, b),
        (Some(&a), _) => (a, a + 1.0),
        _ => (0.0, 1.0),
    };
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
    {
        let root = SVGBackend::with_string(&mut svg, (900, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 22))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(64)
            .build_cartesian_2d(t0..t1, (lo - pad)..(hi + pad))
            .map_err(|e| e.to_string())?;
        let (y0, y1) = (lo - pad, hi + pad);
        let (t_span, t_mag) = (t1 - t0, t0.abs().max(t1.abs()));
        let (y_span, y_mag) = (y1 - y0, y0.abs().max(y1.abs()));
        chart
            .configure_mesh()
            .x_desc("time")
            .x_label_formatter(&|t| axis_label(*t, t_span, t_mag))
            .y_label_formatter(&|y| axis_label(*y, y_span, y_mag))
            .draw()
            .map_err(|e| e.to_string())?;
        for (k, &c) in columns.iter().enumerate() {
            let color = Palette99::pick(k).to_rgba();
            let name = results.names.get(c).cloned().unwrap_or_default();
            let pts: Vec<(f64, f64)> = results
                .t
                .iter()
                .zip(&results.z)
                .filter_map(|(&t, z)| z.get(c).copied().filter(|v| v.is_finite()).map(|v| (t, v)))
                .collect();
            chart
                .draw_series(LineSeries::new(pts, color.stroke_width(2)))
                .map_err(|e| e.to_string())?
                .label(name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// Work and accuracy statistics of a simulation.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SimStats {
    /// Accepted steps.
    pub steps_accepted: usize,
    /// Rejected steps.
    pub steps_rejected: usize,
    /// Residual evaluations at one point `(t, z)`.
    pub residual_evals: usize,
    /// Jacobian evaluations.
    pub jacobian_evals: usize,
    /// LU factorisations (a real and a complex one count as one).
    pub lu_decompositions: usize,
    /// Simplified Newton iterations.
    pub newton_iterations: usize,
    /// Changes of the equation selection of the overdetermined HiC system.
    pub selection_changes: usize,
    /// Switches between StE variants or DD choices of dummy derivatives
    /// (dynamic state selection).
    pub ste_switches: usize,
    /// Step end points projected onto the position and velocity
    /// constraints (`--method radau5-projected`).
    pub projections: usize,
    /// `when` events that fired.
    pub events: usize,
    /// Restarts of the integrator (events and discontinuities of `time`).
    pub restarts: usize,
    /// Number of unknowns.
    pub unknowns: usize,
    /// Differential rows of the HiC form.
    pub differential_equations: usize,
    /// Constraint rows (all levels).
    pub constraints: usize,
    /// Largest constraint residual `max |H_i(t, z)|` at the accepted steps.
    pub max_constraint_residual: f64,
    /// The same per constraint level `0..=ν_c`.
    pub max_constraint_residual_by_level: Vec<f64>,
    /// Wall time of parsing, analysis, the HiC form and compilation, in
    /// seconds.
    pub compile_seconds: f64,
    /// Wall time of the integration, in seconds.
    pub integrate_seconds: f64,
    /// Whether the integrator evaluated native code (`--native`, compiled
    /// by `rustc`; its time is in `compile_seconds`) rather than tapes
    /// (the field is left out of the JSON then).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub native_code: bool,
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
            "steps: {} accepted, {} rejected; residual evaluations: {}; Jacobians: {}; LU: {}; Newton iterations: {}",
            self.steps_accepted,
            self.steps_rejected,
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
                "max constraint residual: {:.2e}{}",
                self.max_constraint_residual,
                if levels.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", levels.join(", "))
                }
            );
        }
        let _ = writeln!(
            s,
            "wall time: compile {:.3} s{}, integrate {:.3} s",
            self.compile_seconds,
            if self.native_code {
                " (native code)"
            } else {
                ""
            },
            self.integrate_seconds
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::{Results, SimStats, axis_label, to_svg};

    #[test]
    fn axis_labels_resolve_the_span_at_every_scale() {
        // [-1.1, 1.1]: steps of 0.2 or 0.5, one decimal; the tick at
        // round-off distance from zero reads 0.0, not -0.0
        assert_eq!(axis_label(-1.1e-17, 2.2, 1.1), "0.0");
        assert_eq!(axis_label(0.2, 2.2, 1.1), "0.2");
        assert_eq!(axis_label(-0.4, 2.2, 1.1), "-0.4");
        // Akzo Nobel's y4 over [0, 0.0075]: steps of 0.001
        assert_eq!(axis_label(0.007, 0.0075, 0.0075), "0.007");
        assert_eq!(axis_label(0.05, 0.3, 0.3), "0.05");
        assert_eq!(axis_label(400.0, 1000.0, 1000.0), "400");
        // small and large variables: exponent form with the digits that
        // tell the ticks apart
        assert_eq!(axis_label(2e-8, 1e-7, 1e-7), "2.0e-8");
        assert_eq!(axis_label(0.0, 1e-7, 1e-7), "0");
        assert_eq!(axis_label(3.65e-4, 2e-5, 3.7e-4), "3.65e-4");
        assert_eq!(axis_label(2.5e7, 1e8, 1e8), "2.5e7");
    }

    #[test]
    fn the_plot_of_a_tiny_variable_has_distinct_labels() {
        let results = Results {
            names: vec!["x".into()],
            t: (0..=10).map(|k| k as f64 * 0.1).collect(),
            z: (0..=10).map(|k| vec![k as f64 * 1e-8]).collect(),
        };
        let svg = to_svg(&results, &[0], "tiny").expect("plots");
        for label in ["0", "2.0e-8", "4.0e-8", "8.0e-8", "0.4", "1.0"] {
            assert!(
                svg.contains(&format!(">\n{label}\n<")),
                "no label {label}: {svg}"
            );
        }
        assert!(!svg.contains(">\n-0"), "{svg}");
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
