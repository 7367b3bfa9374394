//! The simulation driver: HiC form → compiled problem → consistent
//! initialisation → Radau IIA integration with events and
//! discontinuities → results on the output grid and statistics.

use crate::error::SimError;
use crate::events::{WhenEvents, discontinuities, time_conditions};
use crate::hic::{HicForm, hic_form};
use crate::init::{INIT_TOL, InitReport, initialize, reinitialize};
use crate::output::{Results, SimStats, output_grid};
use crate::problem::HicProblem;
use daec_expr::ExprId;
use daec_model::Dae;
use daec_regularize::Analysis;
use daec_solve::{Options, Radau5, SolveError, Stats, StepControl, locate_event};
use std::time::Instant;

/// Simulation settings; `None` takes the model's `experiment` annotation,
/// then the defaults (`t_end` 1 after the start, tolerance 1e-6,
/// 500 output intervals).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SimOptions {
    /// End time.
    pub t_end: Option<f64>,
    /// Relative tolerance.
    pub rtol: Option<f64>,
    /// Absolute tolerance (default: the relative one).
    pub atol: Option<f64>,
    /// Output interval.
    pub interval: Option<f64>,
}

/// The settings actually used.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ResolvedOptions {
    /// Start time.
    pub t0: f64,
    /// End time.
    pub t_end: f64,
    /// Relative tolerance.
    pub rtol: f64,
    /// Absolute tolerance.
    pub atol: f64,
    /// Output interval.
    pub interval: f64,
}

/// Resolves `opts` against the `experiment` annotation of `dae` and checks
/// them (positive finite tolerances and interval, `t_end > t0`).
pub fn resolve_options(dae: &Dae, opts: &SimOptions) -> Result<ResolvedOptions, SimError> {
    let x = &dae.experiment;
    let t0 = x.start_time.unwrap_or(0.0);
    let t_end = opts.t_end.or(x.stop_time).unwrap_or(t0 + 1.0);
    let rtol = opts.rtol.or(x.tolerance).unwrap_or(1e-6);
    let atol = opts.atol.unwrap_or(rtol);
    let positive = |v: f64| v.is_finite() && v > 0.0;
    if !positive(rtol) || !positive(atol) {
        return Err(SimError::Options(format!(
            "tolerances must be positive and finite (rtol = {rtol}, atol = {atol})"
        )));
    }
    if !(t0.is_finite() && t_end.is_finite() && t_end > t0) {
        return Err(SimError::Options(format!(
            "the end time must be finite and after the start time {t0} (got {t_end})"
        )));
    }
    let interval = opts.interval.or(x.interval).unwrap_or((t_end - t0) / 500.0);
    if !positive(interval) {
        return Err(SimError::Options(format!(
            "the output interval must be positive and finite (got {interval})"
        )));
    }
    if (t_end - t0) / interval > 1e7 {
        return Err(SimError::Options(format!(
            "the output interval {interval} gives more than 1e7 output points"
        )));
    }
    Ok(ResolvedOptions {
        t0,
        t_end,
        rtol,
        atol,
        interval,
    })
}

/// A compiled model, ready to integrate.
#[derive(Debug)]
pub struct Prepared {
    /// The HiC form.
    pub form: HicForm,
    /// The compiled problem.
    pub problem: HicProblem,
    /// The consistent initial point.
    pub init: InitReport,
    events: WhenEvents,
    time_conditions: Vec<ExprId>,
}

/// Builds the HiC form, compiles it and computes the consistent initial
/// point.
pub fn prepare(dae: &mut Dae, analysis: &Analysis) -> Result<Prepared, SimError> {
    let form = hic_form(dae, analysis)?;
    let params = dae.parameter_values();
    let problem = HicProblem::new(&mut dae.pool, &form, params)?;
    let init = initialize(dae, analysis, &form)?;
    let events = WhenEvents::new(dae)?;
    let mut roots: Vec<ExprId> = form.diff.iter().map(|r| r.residual).collect();
    roots.extend(form.constraints.iter().map(|c| c.expr));
    let time_conditions = time_conditions(&dae.pool, &roots);
    Ok(Prepared {
        form,
        problem,
        init,
        events,
        time_conditions,
    })
}

/// The outcome of [`simulate`]: results (up to the last good step on a
/// failure), statistics, and the failure, if any.
#[derive(Debug, Clone, PartialEq)]
pub struct Simulation {
    /// Results on the output grid.
    pub results: Results,
    /// Statistics (`compile_seconds` covers [`prepare`] only; callers add
    /// their front-end time).
    pub stats: SimStats,
    /// The initialisation report.
    pub init: InitReport,
    /// A numerical failure ([`SimError::Numerical`]); `results` end at the
    /// last good step.
    pub failure: Option<SimError>,
}

fn add_stats(total: &mut SimStats, s: &Stats) {
    total.steps_accepted += s.steps_accepted;
    total.steps_rejected += s.steps_rejected;
    total.residual_evals += s.residual_evals;
    total.jacobian_evals += s.jacobian_evals;
    total.lu_decompositions += s.lu_decompositions;
    total.newton_iterations += s.newton_iterations;
    total.selection_changes += s.selection_changes;
}

/// Up to three unknowns changing fastest relative to the tolerance at the
/// last good step — the likely culprits of a failed step.
fn fastest(dae: &Dae, z: &[f64], zdot: &[f64], rtol: f64, atol: f64) -> String {
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
        .map(|&(_, j)| format!("`{}` = {:.6e}", dae.unknowns[j].name, z[j]))
        .collect::<Vec<_>>()
        .join(", ")
}

fn describe_failure(
    dae: &Dae,
    err: &SolveError,
    z: &[f64],
    zdot: &[f64],
    ro: &ResolvedOptions,
) -> SimError {
    let name = |j: usize| dae.unknowns.get(j).map_or("?", |u| u.name.as_str());
    let msg = match err {
        SolveError::SingularMatrix { t, h, variable } => format!(
            "singular iteration matrix at t = {t} (h = {h:e}): the pivot of `{}` vanished; check the equations that determine `{}`",
            name(*variable),
            name(*variable)
        ),
        SolveError::RankDeficient { t, rank, n } => format!(
            "the equations lost rank at t = {t} ({rank} < {n} unknowns); fastest-changing unknowns: {}",
            fastest(dae, z, zdot, ro.rtol, ro.atol)
        ),
        SolveError::StepSizeTooSmall { t, h } => format!(
            "step size too small at t = {t} (h = {h:e}), the solution may blow up or be discontinuous; fastest-changing unknowns: {}",
            fastest(dae, z, zdot, ro.rtol, ro.atol)
        ),
        SolveError::NewtonDivergence { t, h, failures } => format!(
            "the Newton iteration diverged {failures} times in a row at t = {t} (h = {h:e}); fastest-changing unknowns: {}",
            fastest(dae, z, zdot, ro.rtol, ro.atol)
        ),
        SolveError::TooManySteps { t, max_steps } => format!(
            "more than {max_steps} steps were needed; stopped at t = {t}; fastest-changing unknowns: {}",
            fastest(dae, z, zdot, ro.rtol, ro.atol)
        ),
        other => other.to_string(),
    };
    SimError::Numerical(msg)
}

/// Simulates `dae` (whose `analysis` must have been computed on it):
/// [`prepare`], then [`integrate`].
pub fn simulate(
    dae: &mut Dae,
    analysis: &Analysis,
    opts: &SimOptions,
) -> Result<Simulation, SimError> {
    let ro = resolve_options(dae, opts)?;
    let start = Instant::now();
    let mut prepared = prepare(dae, analysis)?;
    let compile = start.elapsed().as_secs_f64();
    let mut sim = integrate(dae, &mut prepared, &ro)?;
    sim.stats.compile_seconds = compile;
    Ok(sim)
}

/// Step attempts allowed per integration segment (the pendulum of
/// steinbrecher2016 Ex. 5.1 over 1000 periods needs about 1.2e5).
const MAX_STEPS: usize = 10_000_000;

/// What stopped one integration segment early.
enum Stop {
    Event(usize),
}

/// Integrates a prepared model over `[t0, t_end]` of `ro`. A numerical
/// failure is reported in [`Simulation::failure`] with the results up to
/// the last good step; `Err` only for set-up errors.
pub fn integrate(
    dae: &mut Dae,
    prepared: &mut Prepared,
    ro: &ResolvedOptions,
) -> Result<Simulation, SimError> {
    let clock = Instant::now();
    let Prepared {
        form,
        problem,
        init,
        events,
        time_conditions,
    } = prepared;
    let problem: &HicProblem = problem;
    let n = form.n;
    let params = dae.parameter_values();
    let (t0, t_end) = (init.t0.max(ro.t0), ro.t_end);
    let grid = output_grid(t0, t_end, ro.interval);
    let mut breaks = discontinuities(&dae.pool, time_conditions, &params, t0, t_end);
    breaks.push(t_end);
    let mut results = Results {
        names: dae.unknowns.iter().map(|u| u.name.clone()).collect(),
        t: vec![t0],
        z: vec![init.z0.clone()],
    };
    let mut next_out = 1usize;
    let levels = form.max_level().map_or(0, |l| l as usize + 1);
    let mut stats = SimStats {
        unknowns: n,
        differential_equations: form.diff.len(),
        constraints: form.constraints.len(),
        max_constraint_residual_by_level: vec![0.0; levels],
        ..SimStats::default()
    };
    let record = |stats: &mut SimStats, t: f64, z: &[f64]| {
        let by_level = problem.constraint_residual_by_level(t, z);
        for (m, v) in stats
            .max_constraint_residual_by_level
            .iter_mut()
            .zip(by_level)
        {
            *m = m.max(v);
        }
        stats.max_constraint_residual = stats
            .max_constraint_residual_by_level
            .iter()
            .fold(0.0, |a: f64, &b| a.max(b));
    };
    record(&mut stats, t0, &init.z0);
    let n_ev = events.len();
    let mut phi = vec![0.0; n_ev];
    events.eval(t0, &init.z0, &mut phi);
    // An event is armed while its condition is false.
    let mut armed: Vec<bool> = phi.iter().map(|&p| p < 0.0).collect();
    let (mut t, mut z, mut zdot) = (t0, init.z0.clone(), init.zdot0.clone());
    let mut failure = None;
    let mut brk = 0usize;
    while t < t_end && failure.is_none() {
        while brk < breaks.len() && breaks[brk] <= t {
            brk += 1;
        }
        let seg_end = breaks.get(brk).copied().unwrap_or(t_end);
        let options = Options {
            rtol: ro.rtol,
            atol: ro.atol,
            initial_derivative: Some(zdot.clone()),
            max_steps: MAX_STEPS,
            ..Options::default()
        };
        let mut solver = Radau5::new(problem, options)
            .map_err(|e| SimError::Options(format!("the integrator refused the problem: {e}")))?;
        let mut stop: Option<Stop> = None;
        let (mut last_t, mut last_z, mut last_zdot) = (t, z.clone(), zdot.clone());
        let mut dense = vec![0.0; n];
        let mut phi_buf = vec![0.0; n_ev];
        let result = solver.integrate(t, &z, seg_end, |step| {
            // The earliest rising edge of an armed event in this step.
            let mut first: Option<(f64, usize)> = None;
            for k in 0..n_ev {
                if !armed[k] {
                    continue;
                }
                let te = locate_event(step, |tt, zz| {
                    events.eval(tt, zz, &mut phi_buf);
                    phi_buf[k]
                });
                if let Some(te) = te
                    && first.is_none_or(|(tf, _)| te < tf)
                {
                    first = Some((te, k));
                }
            }
            let t_stop = first.map_or(step.t, |(te, _)| te);
            while next_out < grid.len() && grid[next_out] <= t_stop {
                let to = grid[next_out];
                if to == step.t {
                    dense.copy_from_slice(step.z);
                } else {
                    step.dense(to, &mut dense);
                    problem.project_onto_constraints(to, &mut dense);
                }
                results.t.push(to);
                results.z.push(dense.clone());
                next_out += 1;
            }
            last_t = t_stop;
            last_zdot.copy_from_slice(step.zdot);
            if t_stop == step.t {
                last_z.copy_from_slice(step.z);
            } else {
                step.dense(t_stop, &mut last_z);
                problem.project_onto_constraints(t_stop, &mut last_z);
            }
            record(&mut stats, last_t, &last_z);
            match first {
                Some((_, k)) => {
                    stop = Some(Stop::Event(k));
                    StepControl::Stop
                }
                None => {
                    // Re-arm events whose condition became false.
                    events.eval(step.t, step.z, &mut phi_buf);
                    for (a, &p) in armed.iter_mut().zip(&phi_buf) {
                        if p < 0.0 {
                            *a = true;
                        }
                    }
                    StepControl::Continue
                }
            }
        });
        add_stats(&mut stats, &solver.stats());
        if let Err(e) = result {
            failure = Some(describe_failure(dae, &e, &last_z, &last_zdot, ro));
            break;
        }
        t = last_t;
        z.clone_from(&last_z);
        zdot.clone_from(&last_zdot);
        if t >= t_end {
            break;
        }
        stats.restarts += 1;
        let mut fixed = vec![false; n];
        if let Some(Stop::Event(k)) = stop {
            stats.events += 1;
            armed[k] = false;
            for (j, v) in events.reinits(k, t, &z) {
                if j < n {
                    z[j] = v;
                    fixed[j] = true;
                }
            }
        } else if t < seg_end {
            // The solver returned early without an event: nothing to do.
            break;
        }
        let worst = problem
            .constraint_residual_by_level(t, &z)
            .into_iter()
            .fold(0.0f64, f64::max);
        if worst > INIT_TOL || fixed.iter().any(|&f| f) {
            match reinitialize(dae, form, t, &z, &fixed) {
                Ok(p) => z = p,
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        // Conditions after the re-initialisation.
        events.eval(t, &z, &mut phi);
        for (k, &p) in phi.iter().enumerate() {
            if p < 0.0 {
                armed[k] = true;
            }
        }
    }
    stats.integrate_seconds = clock.elapsed().as_secs_f64();
    Ok(Simulation {
        results,
        stats,
        init: init.clone(),
        failure,
    })
}
