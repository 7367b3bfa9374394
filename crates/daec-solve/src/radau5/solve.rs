//! The driver [`solve`]: an integration with the solution on a time grid.

use super::{Options, Radau5};
use crate::error::SolveError;
use crate::problem::QuasiLinearDae;
use crate::step::{Stats, StepControl};

/// Output of [`solve`]: the solution on a time grid.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trajectory {
    /// Output times.
    pub t: Vec<f64>,
    /// Solution at each output time (`z[k]` belongs to `t[k]`).
    pub z: Vec<Vec<f64>>,
    /// Work counters.
    pub stats: Stats,
}

/// A failed [`solve`]: the error and the results up to the last good step.
#[derive(Debug, Clone, PartialEq)]
pub struct SolveFailure {
    /// What went wrong.
    pub error: SolveError,
    /// Output points reached before the failure.
    pub partial: Trajectory,
}

/// Integrates `problem` from `(t0, z0)` and returns the solution at the
/// given output `times` (ascending, within `(t0, t_end]`, evaluated with the
/// dense output; `t0` itself is included if listed) — or, if `times` is
/// empty, at every accepted step. The last accepted step ends exactly at
/// `t_end`, so an output time equal to `t_end` gets the step's end value.
pub fn solve<P: QuasiLinearDae + ?Sized>(
    problem: &P,
    t0: f64,
    z0: &[f64],
    t_end: f64,
    times: &[f64],
    options: Options,
) -> Result<Trajectory, Box<SolveFailure>> {
    let fail = |error, partial| Box::new(SolveFailure { error, partial });
    let mut solver = match Radau5::new(problem, options) {
        Ok(s) => s,
        Err(e) => return Err(fail(e, Trajectory::default())),
    };
    if times.windows(2).any(|w| {
        matches!(
            w[0].partial_cmp(&w[1]),
            Some(std::cmp::Ordering::Greater) | None
        )
    }) || times.iter().any(|&x| !(t0..=t_end).contains(&x))
    {
        let e =
            SolveError::InvalidOptions("output times must be ascending within [t0, t_end]".into());
        return Err(fail(e, Trajectory::default()));
    }
    let mut out = Trajectory::default();
    let mut next = 0;
    while next < times.len() && times[next] <= t0 {
        out.t.push(times[next]);
        out.z.push(z0.to_vec());
        next += 1;
    }
    let n = z0.len();
    let result = solver.integrate(t0, z0, t_end, |step| {
        if times.is_empty() {
            out.t.push(step.t);
            out.z.push(step.z.to_vec());
        } else {
            while next < times.len() && times[next] <= step.t {
                let mut v = vec![0.0; n];
                if times[next] == step.t {
                    v.copy_from_slice(step.z);
                } else {
                    step.dense(times[next], &mut v);
                }
                out.t.push(times[next]);
                out.z.push(v);
                next += 1;
            }
        }
        StepControl::Continue
    });
    out.stats = solver.stats();
    match result {
        Ok(_) => Ok(out),
        Err(error) => Err(fail(error, out)),
    }
}
