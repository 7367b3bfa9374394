//! The words of a failed run: what the integrator's error means in the
//! model's unknowns, and why, when the Σ-Jacobian has become nearly
//! singular along the solution.

use crate::error::{FailureCause, SimError};
use crate::formulation::SimForm;
use crate::init::InitReport;
use crate::regularity::SigmaJacobian;
use crate::simulate::ResolvedOptions;
use daec_model::Dae;
use daec_solve::SolveError;
use daec_solve::readable_number as show; // `x` for a message

/// Up to three unknowns changing fastest relative to the tolerance at the
/// last good step — the likely culprits of a failed step.
fn fastest(names: &[String], z: &[f64], zdot: &[f64], rtol: f64, atol: f64) -> String {
    let mut v: Vec<(f64, usize)> = z
        .iter()
        .zip(zdot)
        .enumerate()
        .map(|(j, (x, d))| {
            let r = d.abs() / (atol + rtol * x.abs());
            (if r.is_nan() { f64::INFINITY } else { r }, j)
        })
        .collect();
    v.sort_by(|a, b| b.0.total_cmp(&a.0));
    v.iter()
        .take(3)
        .map(|&(_, j)| {
            let name = names.get(j).map_or("?", |s| s.as_str());
            format!("`{name}` = {:.6e}", z[j])
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The failure `err` of the integrator whose last good point is
/// `(t, z, ż)`, in the words of the model (`names` of its unknowns).
fn describe_failure(
    names: &[String],
    err: &SolveError,
    (t, z, zdot): (f64, &[f64], &[f64]),
    ro: &ResolvedOptions,
) -> SimError {
    let name = |j: usize| names.get(j).map_or("?", |s| s.as_str());
    let msg = match err {
        SolveError::SingularMatrix { t, h, variable } => format!(
            "singular iteration matrix at t = {} (h = {h:e}): the pivot of `{}` vanished; check the equations that determine `{}`",
            show(*t),
            name(*variable),
            name(*variable)
        ),
        SolveError::RankDeficient { t, rank, n } => format!(
            "the equations lost rank at t = {} ({rank} < {n} unknowns); fastest-changing unknowns: {}",
            show(*t),
            fastest(names, z, zdot, ro.rtol, ro.atol)
        ),
        SolveError::StepSizeTooSmall { t, h } => format!(
            "step size too small at t = {} (h = {h:e}), the solution may blow up or be discontinuous; fastest-changing unknowns: {}",
            show(*t),
            fastest(names, z, zdot, ro.rtol, ro.atol)
        ),
        SolveError::NewtonDivergence { t, h, failures } => format!(
            "the Newton iteration diverged {failures} times in a row at t = {} (h = {h:e}); fastest-changing unknowns: {}",
            show(*t),
            fastest(names, z, zdot, ro.rtol, ro.atol)
        ),
        SolveError::TooManySteps { t, .. } => format!(
            "the run reached its limit of {} step attempts (--max-steps) at t = {} (accepted and rejected steps and Newton failures, as the statistics count them; raise it with --max-steps, or loosen the tolerances if these unknowns oscillate faster than the output needs); fastest-changing unknowns: {}",
            ro.max_steps,
            show(*t),
            fastest(names, z, zdot, ro.rtol, ro.atol)
        ),
        other => other.to_string(),
    };
    let time = err.time().unwrap_or(t);
    let cause = match *err {
        // the integrator of a segment counts against what is left of the
        // run's limit; the run's limit is the one the user set
        SolveError::TooManySteps { t, .. } => SolveError::TooManySteps {
            t,
            max_steps: ro.max_steps,
        },
        ref other => other.clone(),
    };
    SimError::numerical(time, FailureCause::Solver(cause), msg)
}

/// The failure `err` of a segment of `form` whose last good point is
/// `last = (t, z, ż)`: [`describe_failure`], and why when the model's
/// Σ-Jacobian (`sigma`) has become nearly singular there compared with
/// the start `init` (with labels on the equations involved).
pub(crate) fn explain_failure(
    dae: &Dae,
    form: &SimForm,
    (sigma, init): (Option<&SigmaJacobian>, &InitReport),
    err: &SolveError,
    (t, z, zdot): (f64, &[f64], &[f64]),
    ro: &ResolvedOptions,
) -> SimError {
    let names: Vec<String> = form.unknowns.iter().map(|u| u.name.clone()).collect();
    let mut f = describe_failure(&names, err, (t, z, zdot), ro);
    let why = sigma.and_then(|s| s.explain(dae, init.t0, &init.z0, &init.zdot0, t, z, zdot));
    if let Some((why, labels)) = why {
        if let Some(failure) = f.failure_mut() {
            failure.message.push_str("; ");
            failure.message.push_str(&why);
        }
        f = f.with_labels(labels);
    }
    f
}
