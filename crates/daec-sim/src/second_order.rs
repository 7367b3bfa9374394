//! `daec simulate --method radau-2nd|bdf-2nd|gauss-2nd|glm-2nd`: a model
//! written with `der(der(x))` integrated directly in second-order form by
//! the methods of wunderlich2005-second-order-daes — the Radau IIA (3
//! stages) or Gauss (2 stages, Example 2.4) discretisation (29)/(30) and
//! the general linear method of Example 2.11 (60), all
//! [`daec_solve::SecondOrderRadau`] with step doubling, or the modified
//! variable-step variable-order BDF method (15)
//! ([`daec_solve::BdfSecondOrder`], orders 1–5) — without the first-order
//! reduction the other methods integrate.
//!
//! The consistent initial point comes from the usual pipeline on the
//! reduced model (the velocities are its `der(x)` unknowns); the results
//! have the same columns as the other methods' (the model's unknowns,
//! then the velocities `der(x)`), the rows interpolated by cubic Hermite
//! polynomials from `x`, `ẋ` at the step ends.

use crate::bounds::BoundsMonitor;
use crate::error::{BadOption, FailureCause, SimError, Unsupported};
use crate::error_control::ErrorControlReport;
use crate::method::Method;
use crate::output::{OutputWriter, Results, SimStats};
use crate::simulate::{Prepared, ResolvedOptions, Simulation};
use daec_expr::{ExprId, Leaf, Tape};
use daec_model::Dae;
use daec_solve::{
    BDF_MAX_ORDER, BdfOptions, BdfSecondOrder, BdfSteps, Family, SecondOrderDae,
    SecondOrderOptions, SecondOrderRadau, SecondOrderStep, SolveError, StepSize,
};
use std::cell::RefCell;
use std::time::Instant;

/// A model `F(t, x, ẋ, ẍ) = 0` of order ≤ 2 compiled to tapes.
#[derive(Debug)]
pub struct SecondOrderProblem {
    n: usize,
    params: Vec<f64>,
    residual: Tape,
    jacobian: Tape,
    /// `(row, column, derivative order)` of each Jacobian tape output.
    entries: Vec<(usize, usize, u8)>,
    orders: Vec<u8>,
    /// `[x, ẋ, ẍ]` input buffer, tape scratch, Jacobian values.
    work: RefCell<(Vec<f64>, Vec<f64>, Vec<f64>)>,
}

/// The highest derivative order of every unknown in the equations of
/// `dae`.
pub fn derivative_orders(dae: &Dae) -> Vec<u32> {
    let mut orders = vec![0u32; dae.unknowns.len()];
    for e in &dae.equations {
        for (j, k) in dae.pool.max_orders(e.residual) {
            if let Some(o) = orders.get_mut(j as usize) {
                *o = (*o).max(k);
            }
        }
    }
    orders
}

impl SecondOrderProblem {
    /// Compiles the equations of `dae` (not reduced to first order) for
    /// `method`. Refused, saying what to use instead, when the model has
    /// no second derivatives, derivatives above the second, `when` events,
    /// or is not square.
    pub fn for_method(dae: &mut Dae, method: Method) -> Result<Self, SimError> {
        let refuses = |why: String| refuses(method, why);
        let n = dae.unknowns.len();
        let orders = derivative_orders(dae);
        let max = orders.iter().copied().max().unwrap_or(0);
        if max < 2 {
            return Err(refuses(format!(
                "--method {method} integrates models written with second derivatives (der(der(x))); this model is of first order: use --method radau5"
            )));
        }
        if max > 2 {
            return Err(refuses(format!(
                "--method {method} handles derivatives up to the second; this model has higher ones: use --method radau5 (the first-order reduction)"
            )));
        }
        if !dae.events.is_empty() {
            return Err(refuses(format!(
                "--method {method} does not handle `when` events: use --method radau5"
            )));
        }
        if dae.equations.len() != n {
            return Err(refuses(format!(
                "the model has {} equations for {n} unknowns",
                dae.equations.len()
            )));
        }
        let pool = &mut dae.pool;
        let mut inputs: Vec<ExprId> = Vec::with_capacity(3 * n);
        for k in 0..3u32 {
            inputs.extend((0..n as u32).map(|j| pool.var(j, k)));
        }
        let residuals: Vec<ExprId> = dae.equations.iter().map(|e| e.residual).collect();
        let mut entries = Vec::new();
        let mut exprs = Vec::new();
        for (i, &r) in residuals.iter().enumerate() {
            for leaf in pool.leaves(r) {
                if let Some(Leaf::Var { unknown, order }) = pool.as_leaf(leaf)
                    && order <= 2
                {
                    let d = pool.diff(r, leaf);
                    entries.push((i, unknown as usize, order as u8));
                    exprs.push(d);
                }
            }
        }
        let pool = &*pool;
        let compile = |roots: &[ExprId]| {
            Tape::compile(pool, roots, &inputs).map_err(crate::problem::compile_error)
        };
        let residual = compile(&residuals)?;
        let jacobian = compile(&exprs)?;
        let m = entries.len();
        Ok(Self {
            n,
            params: dae.parameter_values(),
            residual,
            jacobian,
            entries,
            orders: orders.iter().map(|&o| o as u8).collect(),
            work: RefCell::new((vec![0.0; 3 * n], Vec::new(), vec![0.0; m])),
        })
    }
}

impl SecondOrderDae for SecondOrderProblem {
    fn n_vars(&self) -> usize {
        self.n
    }
    fn residual(&self, t: f64, x: &[f64], xd: &[f64], xdd: &[f64], out: &mut [f64]) {
        let mut w = self.work.borrow_mut();
        let (buf, scratch, _) = &mut *w;
        let n = self.n;
        buf[..n].copy_from_slice(x);
        buf[n..2 * n].copy_from_slice(xd);
        buf[2 * n..].copy_from_slice(xdd);
        self.residual.eval(t, buf, &self.params, out, scratch);
    }
    fn jacobians(&self, t: f64, x: &[f64], xd: &[f64], xdd: &[f64], jac: &mut [f64]) {
        let mut w = self.work.borrow_mut();
        let (buf, scratch, vals) = &mut *w;
        let n = self.n;
        buf[..n].copy_from_slice(x);
        buf[n..2 * n].copy_from_slice(xd);
        buf[2 * n..].copy_from_slice(xdd);
        self.jacobian.eval(t, buf, &self.params, vals, scratch);
        jac.fill(0.0);
        for (&(r, c, k), &v) in self.entries.iter().zip(vals.iter()) {
            if let Some(e) = jac.get_mut(k as usize * n * n + r * n + c) {
                *e += v;
            }
        }
    }
    fn orders(&self) -> Vec<u8> {
        self.orders.clone()
    }
}

/// Integrates `original` (the model as written) with the second-order
/// method of `ro` (`--method radau-2nd`, `bdf-2nd`, `gauss-2nd`,
/// `glm-2nd`) from the consistent point of `prepared` (built on
/// `reduced`, its first-order reduction, whose unknowns `added` are the
/// velocities `der(x)` of the second-order unknowns in increasing order).
pub fn integrate_second_order(
    original: &mut Dae,
    reduced: &Dae,
    added: &[usize],
    prepared: &Prepared,
    ro: &ResolvedOptions,
) -> Result<Simulation, SimError> {
    if !prepared.modes.is_empty() {
        let message = format!(
            "--method {} integrates the equations as written and cannot hold the relation {} constant between its state events: use --method radau5 (the default), or wrap the relations in `noEvent` to evaluate them continuously",
            ro.method,
            prepared
                .modes
                .describe(&(0..prepared.modes.len()).collect::<Vec<_>>())
        );
        return Err(refuses(ro.method, message));
    }
    let clock = Instant::now();
    let method = ro.method;
    let problem = SecondOrderProblem::for_method(original, method)?;
    let n = problem.n;
    let init = &prepared.init;
    let orders = problem.orders.clone();
    // Velocity unknown of the reduction for each second-order unknown.
    let second: Vec<usize> = (0..n).filter(|&j| orders[j] == 2).collect();
    if second.len() != added.len() {
        return Err(refuses(
            method,
            "the first-order reduction does not match the second-order unknowns",
        ));
    }
    let z0 = &init.z0;
    let zd0 = &init.zdot0;
    let at = |v: &[f64], k: usize| v.get(k).copied().unwrap_or(0.0);
    let x0: Vec<f64> = (0..n).map(|j| at(z0, j)).collect();
    let mut xd0: Vec<f64> = (0..n).map(|j| at(zd0, j)).collect();
    for (&j, &a) in second.iter().zip(added) {
        xd0[j] = at(z0, a);
    }
    let (t0, t_end) = (init.t0.max(ro.t0), ro.t_end);
    let mut writer = OutputWriter::new(ro.output, t0, t_end, ro.interval);
    let names: Vec<String> = reduced
        .unknowns
        .iter()
        .map(|u| u.name().into_owned())
        .collect();
    let n_red = names.len();
    // A row of the results: x, then the velocities at their reduced index.
    let row = |x: &[f64], xd: &[f64]| {
        let mut z = vec![0.0; n_red];
        z[..n].copy_from_slice(x);
        for (&j, &a) in second.iter().zip(added) {
            if let Some(v) = z.get_mut(a) {
                *v = xd[j];
            }
        }
        z
    };
    let mut results = Results {
        names,
        t: vec![t0],
        z: vec![row(&x0, &xd0)],
    };
    let algebraic = original
        .equations
        .iter()
        .filter(|e| {
            original
                .pool
                .max_orders(e.residual)
                .iter()
                .all(|&(_, k)| k == 0)
        })
        .count();
    let mut stats = SimStats {
        unknowns: n,
        differential_equations: n - algebraic.min(n),
        constraints: algebraic,
        error_control: ErrorControlReport::new(
            ro.error_control,
            &original
                .unknowns
                .iter()
                .map(|u| u.name().into_owned())
                .collect::<Vec<_>>(),
            &[],
            &orders.iter().map(|&o| o > 0).collect::<Vec<_>>(),
        ),
        // (evaluated on the reduced coordinates by `record`; the
        // second-order methods integrate the equations as written, which
        // carry no rows for them)
        invariants: prepared.problem.n_invariants(),
        invariant_enforcement: crate::InvariantEnforcement::Measured,
        ..SimStats::default()
    };
    let record = |stats: &mut SimStats, t: f64, z: &[f64]| {
        if prepared.form.n != z.len() {
            return;
        }
        prepared
            .problem
            .record_constraint_residuals(stats, t, z, (ro.rtol, ro.atol));
    };
    record(&mut stats, t0, &results.z[0]);
    let bounded = prepared.outputs().bounded();
    let mut bounds = BoundsMonitor::new(bounded, ro.rtol, ro.atol, ro.bounds);
    bounds.check(t0, &results.z[0]);
    let mut dense_x = vec![0.0; n];
    let mut dense_xd = vec![0.0; n];
    let mut out = vec![0.0; n_red];
    let mut on_step = |step: &SecondOrderStep<'_>| {
        let end = row(step.x, step.xd);
        record(&mut stats, step.t, &end);
        let check = |tg: f64, z: &[f64]| {
            bounds.check(tg, z);
            z.to_vec()
        };
        writer.step(
            &mut results,
            step.t,
            n_red,
            &mut out,
            |tg, out| {
                if tg == step.t {
                    // a grid point at the step end (t_end included): the
                    // step's own values
                    out.copy_from_slice(&row(step.x, step.xd));
                    return;
                }
                step.dense(tg, &mut dense_x);
                // ẋ between the ends: the derivative of the Hermite cubic.
                let h = step.t - step.t_start;
                let s = (tg - step.t_start) / h;
                for (k, out) in dense_xd.iter_mut().enumerate() {
                    let (p0, p1) = (step.x_start[k], step.x[k]);
                    let (m0, m1) = (step.xd_start[k] * h, step.xd[k] * h);
                    let d = (6.0 * s * s - 6.0 * s) * (p0 - p1)
                        + (3.0 * s * s - 4.0 * s + 1.0) * m0
                        + (3.0 * s * s - 2.0 * s) * m1;
                    *out = d / h;
                }
                out.copy_from_slice(&row(&dense_x, &dense_xd));
            },
            check,
        );
        !bounds.check(step.t, &end)
    };
    let refused = crate::method::refused;
    let h_max = ro.max_step.unwrap_or(0.0);
    let (outcome, solver_stats) = if method == Method::Bdf2nd {
        let options = BdfOptions {
            steps: BdfSteps::Adaptive {
                rtol: ro.rtol,
                atol: ro.atol,
                max_order: BDF_MAX_ORDER,
            },
            max_steps: ro.max_steps,
            h_max,
        };
        let mut solver = BdfSecondOrder::new(&problem, options).map_err(refused)?;
        let outcome = solver.integrate(t0, &x0, &xd0, t_end, &mut on_step);
        (outcome, solver.stats())
    } else {
        let (family, stages) = match method {
            Method::Gauss2nd => (Family::Gauss, 2),
            Method::Glm2nd => (Family::Glm, 3),
            _ => (Family::RadauIia, 3),
        };
        let options = SecondOrderOptions {
            family,
            stages,
            step: StepSize::Adaptive {
                rtol: ro.rtol,
                atol: ro.atol,
            },
            max_steps: ro.max_steps,
            h_max,
            error_control: ro.error_control,
        };
        let mut solver = SecondOrderRadau::new(&problem, options).map_err(refused)?;
        let outcome = solver.integrate(t0, &x0, &xd0, t_end, &mut on_step);
        (outcome, solver.stats())
    };
    stats.solver = solver_stats;
    stats.integrate_seconds = clock.elapsed().as_secs_f64();
    let failure = match outcome {
        Ok(_) => None,
        Err(e @ (SolveError::InvalidOptions(_) | SolveError::InvalidProblem(_))) => {
            let message = e.to_string();
            return Err(SimError::options(BadOption::Integrator(e), message));
        }
        Err(e) => {
            let hint = if method == Method::Gauss2nd {
                "; Gauss collocation is not stiffly accurate, and with it the multipliers of index-3 systems do not converge: use --method radau-2nd"
            } else {
                ""
            };
            let message = format!(
                "{e} (--method {method}{hint}; --method radau5 integrates the first-order reduction)"
            );
            let time = e.time().unwrap_or(t0);
            Some(SimError::numerical(time, FailureCause::Solver(e), message))
        }
    };
    let failure = bounds.failure().or(failure);
    stats.bound_violations = bounds.finish();
    Ok(Simulation {
        results,
        stats,
        init: init.clone(),
        failure,
        end: None,
        terminated: None,
        warnings: Vec::new(),
    })
}

/// The second-order `method` does not apply to the model, for `why`.
fn refuses(method: Method, why: impl Into<String>) -> SimError {
    SimError::unsupported(Unsupported::MethodModel { method }, why)
}
