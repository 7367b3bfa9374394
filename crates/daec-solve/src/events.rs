//! Event location on the dense output.
//!
//! A condition becomes an *event function* `φ(t, z)` that holds where
//! `φ > 0` (a strict comparison such as `a > b`) or `φ ≥ 0` (`a ≥ b`).
//! An event is a *rising edge*: the condition changes from false to true
//! (a Modelica `when` fires then, MLS §8.3.5). The edges inside an accepted
//! step are found on the step's dense output (Solving ODEs I, II.6 "dense
//! output and event location"), independently of the step size the error
//! control chose:
//!
//! * every event function is sampled at [`EVENT_SAMPLES`] equal
//!   sub-intervals of the step, so a condition that becomes true and false
//!   again within one step is seen when a sample falls inside;
//! * where the parabola through three neighbouring samples has its
//!   extremum between two samples and there comes closer to zero than the
//!   samples (or crosses it), the interval is halved, up to
//!   [`REFINE_DEPTH`] times — a narrow excursion between samples is found
//!   too;
//! * the first edge is located by the Illinois variant of regula falsi,
//!   which keeps it bracketed and converges superlinearly.

use crate::step::Step;

/// Sub-intervals of a step at which the event functions are sampled.
pub const EVENT_SAMPLES: usize = 8;

/// One value per sample of a step ([`EVENT_SAMPLES`] intervals).
type Samples<T> = [T; EVENT_SAMPLES + 1];

/// Halvings of a sampling interval in which a parabola through the
/// neighbouring samples suggests an excursion to the other side.
pub const REFINE_DEPTH: u32 = 8;

/// Whether a condition holds at the event-function value `phi`: `φ > 0`
/// for a strict comparison, `φ ≥ 0` otherwise (NaN: false).
pub fn holds(phi: f64, strict: bool) -> bool {
    if strict { phi > 0.0 } else { phi >= 0.0 }
}

/// The first rising edge on a step: its time and the events whose edges
/// lie there (within the location tolerance), ascending.
#[derive(Debug, Clone, PartialEq)]
pub struct RisingEdge {
    /// Time of the edge: the first time the condition holds, to about
    /// 1e-14 of the step length.
    pub t: f64,
    /// Indices of the events with an edge at `t`.
    pub events: Vec<usize>,
}

/// Finds the first rising edge of the conditions on the step's dense
/// output. `pre[k]` is whether condition `k` held at the step start (its
/// value before the step: an edge at the start itself is reported when it
/// holds there but did not), `strict[k]` its kind (see [`holds`]);
/// `phi(t, z, out)` writes every event function at `(t, z)` into `out`.
/// Returns `None` if no condition becomes true on the step.
pub fn first_rising_edge<F>(
    step: &Step<'_>,
    pre: &[bool],
    strict: &[bool],
    phi: F,
) -> Option<RisingEdge>
where
    F: FnMut(f64, &[f64], &mut [f64]),
{
    let m = pre.len().min(strict.len());
    let (a, b) = (step.t_start, step.t);
    if m == 0 || b.partial_cmp(&a) != Some(std::cmp::Ordering::Greater) {
        return None;
    }
    let mut sampler = Sampler {
        step,
        phi,
        z: vec![0.0; step.n()],
        out: vec![0.0; m],
    };
    let times: Samples<f64> = std::array::from_fn(|i| {
        if i == EVENT_SAMPLES {
            b
        } else {
            a + (b - a) * i as f64 / EVENT_SAMPLES as f64
        }
    });
    // the samples of every function, sample after sample
    let mut values = Vec::with_capacity(times.len() * m);
    for &t in &times {
        values.extend_from_slice(&sampler.all(t)[..m]);
    }
    let tol = edge_tolerance(a, b);
    let mut found: Vec<(f64, usize)> = Vec::new();
    for k in 0..m {
        let series: Samples<f64> = std::array::from_fn(|i| values[i * m + k]);
        let edge = EdgeSearch {
            sampler: &mut sampler,
            k,
            strict: strict[k],
            tol,
        }
        .first(pre[k], &times, &series);
        if let Some(t) = edge {
            found.push((t, k));
        }
    }
    let t = found.iter().map(|&(t, _)| t).fold(f64::INFINITY, f64::min);
    if !t.is_finite() {
        return None;
    }
    let events = found
        .iter()
        .filter(|&&(te, _)| te <= t + 2.0 * tol)
        .map(|&(_, k)| k)
        .collect();
    Some(RisingEdge { t, events })
}

/// The tolerance to which [`first_rising_edge`] locates an edge on the
/// step `[a, b]`: `1e-14` of its length and a few units of round-off of
/// the time.
pub fn edge_tolerance(a: f64, b: f64) -> f64 {
    1e-14 * (b - a) + 4.0 * f64::EPSILON * a.abs().max(b.abs())
}

/// The edge in `[a, b]` of a condition that does not hold at `a`, where
/// its event function is `fa`, and holds at `b` (`fb`): the first time it
/// holds ([`holds`] with `strict`), to `tol`, by the Illinois method on
/// `phi(t)`. A value of `phi` that is not finite ends the search at the
/// time where the condition is known to hold.
pub fn locate_edge<F>(
    (mut a, mut fa): (f64, f64),
    (mut b, mut fb): (f64, f64),
    strict: bool,
    tol: f64,
    mut phi: F,
) -> f64
where
    F: FnMut(f64) -> f64,
{
    let mut side = 0i8;
    for _ in 0..200 {
        if b - a <= tol {
            break;
        }
        let mut c = (a * fb - b * fa) / (fb - fa);
        if !(c > a && c < b) {
            c = 0.5 * (a + b);
        }
        let fc = phi(c);
        if !fc.is_finite() {
            break;
        }
        if holds(fc, strict) {
            b = c;
            fb = fc;
            if side == -1 {
                fa *= 0.5;
            }
            side = -1;
        } else {
            a = c;
            fa = fc;
            if side == 1 {
                fb *= 0.5;
            }
            side = 1;
        }
    }
    b
}

/// Evaluates the event functions on the dense output.
struct Sampler<'s, 'a, F> {
    step: &'s Step<'a>,
    phi: F,
    z: Vec<f64>,
    out: Vec<f64>,
}

impl<F: FnMut(f64, &[f64], &mut [f64])> Sampler<'_, '_, F> {
    fn all(&mut self, t: f64) -> &[f64] {
        self.step.dense(t, &mut self.z);
        (self.phi)(t, &self.z, &mut self.out);
        &self.out
    }

    fn one(&mut self, t: f64, k: usize) -> f64 {
        self.all(t)[k]
    }
}

/// The search for the first rising edge of one event function.
struct EdgeSearch<'r, 's, 'a, F> {
    sampler: &'r mut Sampler<'s, 'a, F>,
    k: usize,
    strict: bool,
    tol: f64,
}

impl<F: FnMut(f64, &[f64], &mut [f64])> EdgeSearch<'_, '_, '_, F> {
    fn holds(&self, phi: f64) -> bool {
        holds(phi, self.strict)
    }

    /// The first edge given the samples `values` at `times` and the value
    /// `pre` before the first sample.
    fn first(&mut self, pre: bool, times: &Samples<f64>, values: &Samples<f64>) -> Option<f64> {
        // a non-finite sample keeps the value of the one before
        let mut truth: Samples<bool> = [false; EVENT_SAMPLES + 1];
        let mut last = pre;
        for (held, &v) in truth.iter_mut().zip(values) {
            if v.is_finite() {
                last = self.holds(v);
            }
            *held = last;
        }
        if !pre && truth[0] {
            return Some(times[0]);
        }
        for i in 0..times.len() - 1 {
            let (ta, tb) = (times[i], times[i + 1]);
            let (fa, fb) = (values[i], values[i + 1]);
            if !truth[i] && truth[i + 1] {
                return Some(self.locate(ta, fa, tb, fb));
            }
            if truth[i] == truth[i + 1] && fa.is_finite() && fb.is_finite() {
                // the parabolas through this interval and a neighbouring
                // sample on either side
                let triples = [i.checked_sub(1), (i + 2 < times.len()).then_some(i)];
                let suspicious = triples.into_iter().flatten().any(|j| {
                    let p = [times[j], times[j + 1], times[j + 2]];
                    let f = [values[j], values[j + 1], values[j + 2]];
                    self.excursion(p, f, (ta, fa), (tb, fb))
                });
                if suspicious && let Some(t) = self.refine(ta, fa, tb, fb) {
                    return Some(t);
                }
            }
        }
        None
    }

    /// Whether the parabola through `(p, f)` has its extremum strictly
    /// inside `(ta, tb)` (where the event function has the values `fa`,
    /// `fb`) and there reaches the other side of zero or comes closer to it
    /// than at both ends.
    fn excursion(
        &self,
        p: [f64; 3],
        f: [f64; 3],
        (ta, fa): (f64, f64),
        (tb, fb): (f64, f64),
    ) -> bool {
        let Some((tv, fv)) = parabola_vertex(p, f) else {
            return false;
        };
        tv > ta
            && tv < tb
            && (self.holds(fv) != self.holds(fa) || fv.abs() < fa.abs().min(fb.abs()))
    }

    /// Searches `(ta, tb)`, where the condition has the same value at both
    /// ends, for a rising edge by halving (depth-first, earliest first).
    fn refine(&mut self, ta: f64, fa: f64, tb: f64, fb: f64) -> Option<f64> {
        // (interval, depth) to visit, earliest on top
        let mut stack = vec![(ta, fa, tb, fb, 0u32)];
        while let Some((a, fa, b, fb, depth)) = stack.pop() {
            if depth >= REFINE_DEPTH || b - a <= self.tol {
                continue;
            }
            let c = 0.5 * (a + b);
            let fc = self.sampler.one(c, self.k);
            if !fc.is_finite() {
                continue;
            }
            let (ha, hc, hb) = (self.holds(fa), self.holds(fc), self.holds(fb));
            if !ha && hc {
                return Some(self.locate(a, fa, c, fc));
            }
            if !hc && hb {
                return Some(self.locate(c, fc, b, fb));
            }
            let p = [a, c, b];
            let f = [fa, fc, fb];
            // right half first onto the stack: the left is visited first
            if self.excursion(p, f, (c, fc), (b, fb)) {
                stack.push((c, fc, b, fb, depth + 1));
            }
            if self.excursion(p, f, (a, fa), (c, fc)) {
                stack.push((a, fa, c, fc, depth + 1));
            }
        }
        None
    }

    /// The edge in `[a, b]`, where the condition does not hold at `a` and
    /// holds at `b`: the first time it holds ([`locate_edge`]).
    fn locate(&mut self, a: f64, fa: f64, b: f64, fb: f64) -> f64 {
        let (strict, tol, k) = (self.strict, self.tol, self.k);
        let sampler = &mut *self.sampler;
        locate_edge((a, fa), (b, fb), strict, tol, |t| sampler.one(t, k))
    }
}

/// The extremum `(t, value)` of the parabola through three points, if
/// they are not collinear.
fn parabola_vertex(p: [f64; 3], f: [f64; 3]) -> Option<(f64, f64)> {
    let (h1, h2) = (p[1] - p[0], p[2] - p[1]);
    if !(h1 > 0.0 && h2 > 0.0) {
        return None;
    }
    let d1 = (f[1] - f[0]) / h1;
    let d2 = (f[2] - f[1]) / h2;
    let a = (d2 - d1) / (p[2] - p[0]);
    if a == 0.0 || !a.is_finite() {
        return None;
    }
    // q(t) = f0 + d1·(t − p0) + a·(t − p0)(t − p1); q'(tv) = 0
    let tv = 0.5 * (p[0] + p[1]) - d1 / (2.0 * a);
    let fv = f[0] + d1 * (tv - p[0]) + a * (tv - p[0]) * (tv - p[1]);
    (tv.is_finite() && fv.is_finite()).then_some((tv, fv))
}

#[cfg(test)]
mod tests {
    use super::{first_rising_edge, parabola_vertex};
    use crate::step::Step;

    /// The first edges of the conditions `sin(t) − level ≷ 0` on one step
    /// `[a, b]` of a constant solution (the step size is the error
    /// control's business; the event functions depend on `t` alone).
    fn edge_of_sine(a: f64, b: f64, level: f64, pre: bool, strict: bool) -> Option<f64> {
        let (z, zdot) = ([0.0], [0.0]);
        let cont = [0.0; 4];
        let step = Step::from_parts(a, b, &z, &zdot, &cont);
        first_rising_edge(&step, &[pre], &[strict], |t, _, out| {
            out[0] = t.sin() - level
        })
        .map(|e| e.t)
    }

    #[test]
    fn every_crossing_in_a_long_step_is_found_in_order() {
        let te = edge_of_sine(0.0, 14.0, 0.001, false, true).unwrap();
        assert!((te - 0.001f64.asin()).abs() < 1e-12, "{te}");
        // from just after it, the condition holds: the next edge follows
        // its fall at π
        let te = edge_of_sine(0.5, 14.0, 0.001, true, true).unwrap();
        let want = 2.0 * std::f64::consts::PI + 0.001f64.asin();
        assert!((te - want).abs() < 1e-12, "{te}");
        let te = edge_of_sine(7.0, 14.0, 0.001, true, true).unwrap();
        let want = 4.0 * std::f64::consts::PI + 0.001f64.asin();
        assert!((te - want).abs() < 1e-12, "{te}");
        assert_eq!(edge_of_sine(13.0, 14.0, 0.001, true, true), None);
    }

    #[test]
    fn a_narrow_excursion_between_two_samples_is_found() {
        // sin t > 0.999 only on (1.526, 1.616), between the samples at 0
        // and 1.75 of a step of 14
        let te = edge_of_sine(0.0, 14.0, 0.999, false, true).unwrap();
        assert!((te - 0.999f64.asin()).abs() < 1e-12, "{te}");
        // and a narrow dip: sin t ≥ −0.999 fails only around 3π/2
        let te = edge_of_sine(2.0, 16.0, -0.999, true, false).unwrap();
        let want = 2.0 * std::f64::consts::PI - 0.999f64.asin();
        assert!((te - want).abs() < 1e-12, "{te}");
    }

    #[test]
    fn a_condition_that_becomes_true_right_after_the_start_is_an_edge() {
        // sin t > 0 is false at t = 0 (and was before) and true just after
        let te = edge_of_sine(0.0, 14.0, 0.0, false, true).unwrap();
        assert!(te.abs() < 1e-12, "{te}");
        // sin t ≥ 0 holds at 0: its first edge is at 2π
        let te = edge_of_sine(0.0, 14.0, 0.0, true, false).unwrap();
        assert!((te - 2.0 * std::f64::consts::PI).abs() < 1e-12, "{te}");
        // a condition that holds at the start but did not before: an edge
        // at the start
        assert_eq!(edge_of_sine(1.0, 2.0, 0.0, false, true), Some(1.0));
    }

    #[test]
    fn the_vertex_of_a_parabola_through_three_points() {
        // 2 − (t − 1)² through t = 0, 0.5, 3
        let q = |t: f64| 2.0 - (t - 1.0) * (t - 1.0);
        let (tv, fv) = parabola_vertex([0.0, 0.5, 3.0], [q(0.0), q(0.5), q(3.0)]).unwrap();
        assert!(
            (tv - 1.0).abs() < 1e-14 && (fv - 2.0).abs() < 1e-14,
            "{tv} {fv}"
        );
        assert_eq!(parabola_vertex([0.0, 1.0, 2.0], [0.0, 1.0, 2.0]), None);
    }
}
