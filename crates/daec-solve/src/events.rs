//! Event location on the dense output.
//!
//! A `when` condition becomes an event function `φ(t, z)` whose sign
//! change inside an accepted step is located on the collocation polynomial
//! of that step (Solving ODEs I, II.6 "dense output and event location"),
//! here with the Illinois variant of regula falsi, which keeps the root
//! bracketed and converges superlinearly.

use crate::radau5::Step;

/// Finds the first zero crossing of `phi(t, z(t))` on the step, where
/// `z(t)` is the step's dense output. Returns the time of the crossing
/// (to about 1e-14 relative accuracy of the step length), or `None` if
/// `phi` has the same sign (or is non-finite) at both ends of the step.
///
/// A crossing is a change from strictly negative to non-negative or from
/// strictly positive to non-positive; a zero at the step start does not
/// count (it was reported with the previous step).
pub fn locate_event<F>(step: &Step<'_>, mut phi: F) -> Option<f64>
where
    F: FnMut(f64, &[f64]) -> f64,
{
    let n = step.n();
    let mut buf = vec![0.0; n];
    let mut eval = |t: f64, buf: &mut Vec<f64>| {
        step.dense(t, buf);
        phi(t, buf)
    };
    let (mut a, mut b) = (step.t_start, step.t);
    let mut fa = eval(a, &mut buf);
    let mut fb = eval(b, &mut buf);
    if !(fa.is_finite() && fb.is_finite()) || fa == 0.0 || fa.signum() == fb.signum() && fb != 0.0 {
        return None;
    }
    if fb == 0.0 {
        return Some(b);
    }
    let tol = 1e-14 * (b - a).abs().max(f64::MIN_POSITIVE) + 4.0 * f64::EPSILON * b.abs();
    let mut side = 0i8;
    for _ in 0..200 {
        if (b - a).abs() <= tol {
            break;
        }
        let mut c = (a * fb - b * fa) / (fb - fa);
        if !(c > a.min(b) && c < a.max(b)) {
            c = 0.5 * (a + b);
        }
        let fc = eval(c, &mut buf);
        if !fc.is_finite() {
            return Some(b);
        }
        if fc == 0.0 {
            return Some(c);
        }
        if fc.signum() == fb.signum() {
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
    Some(b)
}
