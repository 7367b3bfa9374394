//! The guarded first step of a restart ([`Options::restart_step`]): the
//! step size the integration had reached before an event, tried once and
//! kept only where the step shows that the switch left the solution as
//! smooth as before; otherwise the cold start's step size.
//!
//! A restart after an event starts the method afresh: Radau IIA is a
//! one-step method, so nothing of the old solution but its end value is
//! needed, and its first step may be as long as the new solution's
//! smoothness allows (Solving ODEs II, IV.8: the embedded error estimate
//! (8.19)–(8.21) holds at the first step as at any other). The cold start
//! ([`Options::h0`]'s rule, Solving ODEs I, II.4) knows only `ż₀` and one
//! Euler step and grows by at most 8 per step, which after a switch
//! that merely changes a slope spends several short steps per event
//! (the water tube's friction-law switches). The trial step is guarded
//! against what the error test alone does not catch (a Newton iteration
//! drawn to another root over a long step): it must contract from its
//! first iteration ([`RESTART_THETA`]) and its end value must stay
//! within a trust bound of the linear prediction ([`within_trust`]).
//! It is tried by default only where it would save at least two of the
//! cold start's growth steps ([`RESTART_MIN_GAIN`]), and a failed trial goes back to
//! the cold start at once.
//!
//! [`Options::restart_step`]: super::Options::restart_step
//! [`Options::h0`]: super::Options::h0

use super::workspace::Workspace;
use super::{Radau5, Settings, StepState};
use crate::problem::QuasiLinearDae;

/// The largest contraction `θ` of the simplified Newton iteration
/// (Solving ODEs II, IV.8, (8.12)) that the guarded first step of a
/// restart accepts: its iteration must converge at least as fast as
/// halving the correction per iteration.
pub const RESTART_THETA: f64 = 0.5;

/// How much longer than the cold start's step the given step must be for
/// the first step of a restart to try it, by default
/// ([`Options::restart_min_gain`](super::Options::restart_min_gain)): `8²`, two of the cold start's
/// steps, which grow by at most 8 each ([`Options::h0`]'s rule). A
/// shorter trial saves at most one step and costs, on the NAND gate and
/// the charge pump (trials 3–20 times the cold step at their transistors'
/// switches), accuracy at `t_end` and steps; on the water tube the trials
/// are 100–1000 times the cold step.
///
/// [`Options::h0`]: super::Options::h0
pub const RESTART_MIN_GAIN: f64 = 64.0;

impl<P: QuasiLinearDae + ?Sized> Radau5<'_, P> {
    /// At the start, once the cold start's step size is in `st.h`: the
    /// first step tries [`Options::restart_step`](super::Options::restart_step)
    /// instead when that is at least
    /// [`Options::restart_min_gain`](super::Options::restart_min_gain)
    /// times longer
    /// (and the cold step does not already reach `t_end`), keeping the
    /// cold one in `st.fallback`.
    pub(super) fn try_restart_step(&self, set: &Settings, st: &mut StepState) {
        let h = self.opts.restart_step.min(set.hmax);
        // (a NaN is no step)
        if h.is_nan() || h < self.opts.restart_min_gain * st.h || st.last {
            return;
        }
        st.fallback = st.h;
        st.h = h;
        if st.t + st.h * 1.0001 - set.t_end >= 0.0 {
            st.h = set.t_end - st.t;
            st.last = true;
        }
        st.hold = st.h;
    }

    /// Whether the guarded first step keeps its step size, given its
    /// error estimate `err`: the error test passes, the Newton iteration
    /// contracted by at most [`RESTART_THETA`] and the end value is
    /// [`within_trust`]; then the guard ends. Otherwise the step is tried
    /// again with the cold start's step size ([`fall_back`](Self::fall_back)):
    /// a trial retried shorter with the error estimate's proposal kept
    /// steps near `t_end` whose error was close to the tolerance, and lost
    /// the water tube 0.3 of its digits at 1e-6.
    pub(super) fn restart_step_holds(
        &mut self,
        set: &Settings,
        st: &mut StepState,
        ws: &Workspace<'_>,
        err: f64,
    ) -> bool {
        let n = self.n;
        let tol = (&set.atol_t[..], set.rtol_t);
        if st.theta <= RESTART_THETA
            && err < 1.0
            && within_trust(&ws.y[..n], &ws.ydot[..n], &ws.z[2][..n], st.h, tol)
        {
            st.fallback = 0.0;
            return true;
        }
        self.fall_back(st);
        false
    }

    /// The guarded first step failed (its Newton iteration, or
    /// [`restart_step_holds`](Self::restart_step_holds)): the step is
    /// tried again with the cold start's step size and a new LU
    /// decomposition (the Jacobians at the start stay), the failed
    /// attempt counted as a rejected step.
    pub(super) fn fall_back(&mut self, st: &mut StepState) {
        st.h = std::mem::take(&mut st.fallback);
        st.hold = st.h;
        st.last = false;
        st.need_lu = true;
        self.stats.steps_rejected += 1;
    }
}

/// The trust bound of a guarded first step from `y` with derivative `ydot`
/// over `h` to `y + dz` (`dz` the last stage's increment, `c₃ = 1`): its
/// departure from the linear prediction, `dz − h·ẏ`, is in the RMS at most
/// the size of the solution, each component measured in
/// `|y_i| + atol_i/rtol` (the solution's own scale, the absolute tolerance
/// where it is small). A smooth solution over a step the error test
/// accepts departs far less; a Newton iteration that has jumped to
/// another root of the stage equations (a temperature of −1.9e25 K where
/// the cold start finds 300 K) far more.
fn within_trust(y: &[f64], ydot: &[f64], dz: &[f64], h: f64, (atol, rtol): (&[f64], f64)) -> bool {
    let n = y.len();
    if n == 0 {
        return true;
    }
    let mut sum = 0.0;
    for i in 0..n {
        let scale = y[i].abs() + atol[i] / rtol;
        sum += ((dz[i] - h * ydot[i]) / scale).powi(2);
    }
    // (`sum / n <= 1` is false for a NaN)
    sum / n as f64 <= 1.0
}

#[cfg(test)]
mod tests {
    use super::within_trust;

    #[test]
    fn trust_bound_admits_a_smooth_step_and_rejects_another_root() {
        let tol: (&[f64], f64) = (&[1e-6], 1e-6);
        // y = 300, ẏ = 1, a step of 10 ending at 310.5: 0.5 off the line
        assert!(within_trust(&[300.0], &[1.0], &[10.5], 10.0, tol));
        // the same step ending at −1.9e25
        assert!(!within_trust(&[300.0], &[1.0], &[-1.9e25], 10.0, tol));
        // departing by twice the solution's size
        assert!(!within_trust(&[300.0], &[0.0], &[600.5], 10.0, tol));
        // a component at zero is measured in atol/rtol (here 1)
        assert!(within_trust(&[0.0], &[0.0], &[0.9], 1.0, tol));
        assert!(!within_trust(&[0.0], &[0.0], &[1.1], 1.0, tol));
        assert!(!within_trust(&[0.0], &[0.0], &[f64::NAN], 1.0, tol));
        // the RMS over the components: one far off among many passes
        let y = [1.0; 16];
        let mut dz = [0.0; 16];
        dz[3] = 3.0;
        assert!(within_trust(&y, &[0.0; 16], &dz, 1.0, (&[1e-6; 16], 1e-6)));
    }
}
