//! The modified variable-step variable-order BDF method for second-order
//! DAEs (wunderlich2005 §2.1, eqs. (12)–(23), the algorithm "Modified BDF
//! method for second order systems"; after Sand 2002, the paper's [22]).
//!
//! The first derivative at `t_n` is the ordinary variable-step BDF formula
//! of order `k` (12), the derivative at `t_n` of the polynomial through
//! `x_n, …, x_{n−k}`: `ẋ_n = Σ_j β_j x_{n−j}`. The second derivative is
//! not the BDF formula applied to the `ẋ_{n−j}` but the modified formula
//! (13) `ẍ_n = Σ_j δ_j ẋ_{n−j}` whose coefficients make it exact for every
//! polynomial `x` of degree ≤ `k + 1` *given how the `ẋ_{n−j}` were
//! computed* — each by the BDF formula of the order `k_{n−j}` of its own
//! step, the initial velocity exactly — conditions (14), the linear system
//! (17)/(18)/(19). With constant steps and order it is BDF applied twice;
//! after a change of the step size or the order it differs, which removes
//! the `O(1)` errors of the multipliers of index-3 systems that ordinary
//! BDF on the first-order reduction makes there (Tables 1 and 2).
//!
//! Here the conditions are imposed on `(t − t_n)^d / h_n^d`,
//! `d = 1 … k + 1` (shifted and scaled for conditioning; exactness on
//! polynomials does not depend on the basis), for the `k + 1` coefficients
//! `δ_j`; `d = 1` gives `Σ δ_j = 0`, which the paper's divided differences
//! (13) satisfy by construction. Eliminating `ẋ_n` and `ẍ_n` leaves the
//! system (20) in `x_n`, solved by Newton's method with the Jacobian (23)
//! (one stage of [`crate::second_order`]'s stage solver: `ẍ_n` is the
//! unknown of an order-2 component, `ẋ_n` of an order-1 component, `x_n`
//! of a multiplier), started from the predictor polynomial through the
//! last `k + 1` points (line 3 of the algorithm). On a first-order model
//! (no second derivatives) the method is ordinary variable-step BDF — the
//! method of Tables 1 and 2.
//!
//! Step sizes and orders are fixed ([`BdfSteps::Fixed`]: constant steps,
//! the order raised by one per step up to the maximum, the start of the
//! paper's Fig. 2), prescribed ([`BdfSteps::Schedule`]) or chosen by the
//! error estimate ([`BdfSteps::Adaptive`]): the local error of order `j`
//! is estimated as `‖x_n − P_j(t_n)‖ / (j + 1)` with `P_j` the polynomial
//! through the `j + 1` previous points (for constant steps
//! `x_n − P_j(t_n) ≈ h^{j+1} x^{(j+1)}` and `1/(j + 1)` is BDF's error
//! constant), over the unknowns that appear differentiated (the
//! multipliers excluded, as in DASSL); the order is lowered when the
//! estimate of order `k − 1` is not larger, raised after `k + 1` steps at
//! the order when that of order `k + 1` is smaller (the modified formula
//! makes step-size changes harmless, so they do not hold the order back).
//! The estimate is one of the local error: on second-order systems the
//! global error of the positions exceeds the tolerance by a larger factor
//! than on first-order ones.

use crate::error::SolveError;
use crate::linalg::RealLu;
use crate::second_order::{
    SecondOrderDae, SecondOrderStep, StageCoefficients, StageSystem, check_start, largest_step,
    solve_stages,
};
use crate::step::Stats;

/// The largest order offered.
pub const BDF_MAX_ORDER: usize = 5;

/// Step sizes and orders of [`BdfSecondOrder`].
#[derive(Debug, Clone, PartialEq)]
pub enum BdfSteps {
    /// Constant steps `h` (the last one shortened to end at `t_end`); the
    /// order is `min(n, max_order)` in step `n`.
    Fixed {
        /// Step size.
        h: f64,
        /// Largest order (1 to [`BDF_MAX_ORDER`]).
        max_order: usize,
    },
    /// The steps `(h_n, k_n)` in turn; the integration ends after the last
    /// (or at `t_end`). The order of step `n` may not exceed `n`.
    Schedule(Vec<(f64, usize)>),
    /// Step size and order chosen by the error estimate.
    Adaptive {
        /// Relative tolerance.
        rtol: f64,
        /// Absolute tolerance.
        atol: f64,
        /// Largest order (1 to [`BDF_MAX_ORDER`]).
        max_order: usize,
    },
}

/// Options of [`BdfSecondOrder`].
#[derive(Debug, Clone, PartialEq)]
pub struct BdfOptions {
    /// Step sizes and orders.
    pub steps: BdfSteps,
    /// Step attempts allowed.
    pub max_steps: usize,
    /// Largest step of the adaptive control; `0` or infinite means no
    /// bound but the interval.
    pub h_max: f64,
}

impl Default for BdfOptions {
    fn default() -> Self {
        Self {
            steps: BdfSteps::Adaptive {
                rtol: 1e-6,
                atol: 1e-6,
                max_order: BDF_MAX_ORDER,
            },
            max_steps: 1_000_000,
            h_max: 0.0,
        }
    }
}

/// An accepted point: time, values, derivatives and the order of the BDF
/// formula that gave its `ẋ` (`0`: the initial point, `ẋ` exact).
#[derive(Debug, Clone)]
struct Point {
    t: f64,
    x: Vec<f64>,
    xd: Vec<f64>,
    order: usize,
}

/// The modified BDF integrator.
pub struct BdfSecondOrder<'p, P: SecondOrderDae + ?Sized> {
    problem: &'p P,
    options: BdfOptions,
    stats: Stats,
}

/// What a step attempt gives: the new point and its error estimates of
/// orders `k − 1`, `k`, `k + 1` (`∞` where not available).
struct Attempt {
    x: Vec<f64>,
    xd: Vec<f64>,
    errors: [f64; 3],
}

impl<'p, P: SecondOrderDae + ?Sized> BdfSecondOrder<'p, P> {
    /// Binds the method to `problem`.
    pub fn new(problem: &'p P, options: BdfOptions) -> Result<Self, SolveError> {
        let bad_order = |k: usize| !(1..=BDF_MAX_ORDER).contains(&k);
        let invalid = |m: String| Err(SolveError::InvalidOptions(m));
        match &options.steps {
            BdfSteps::Fixed { h, max_order } => {
                if !(h.is_finite() && *h > 0.0) {
                    return invalid(format!("the fixed step must be positive (got {h})"));
                }
                if bad_order(*max_order) {
                    return invalid(format!("BDF orders are 1 to {BDF_MAX_ORDER}"));
                }
            }
            BdfSteps::Schedule(steps) => {
                for (n, &(h, k)) in steps.iter().enumerate() {
                    if !(h.is_finite() && h > 0.0) || bad_order(k) || k > n + 1 {
                        return invalid(format!(
                            "step {} of the schedule: h = {h} must be positive and the order {k} between 1 and min({}, {BDF_MAX_ORDER})",
                            n + 1,
                            n + 1
                        ));
                    }
                }
            }
            BdfSteps::Adaptive {
                rtol,
                atol,
                max_order,
            } => {
                if !(rtol.is_finite() && *rtol > 0.0 && atol.is_finite() && *atol > 0.0) {
                    return invalid(format!(
                        "tolerances must be positive (rtol = {rtol}, atol = {atol})"
                    ));
                }
                if bad_order(*max_order) {
                    return invalid(format!("BDF orders are 1 to {BDF_MAX_ORDER}"));
                }
            }
        }
        Ok(Self {
            problem,
            options,
            stats: Stats::default(),
        })
    }

    /// Work counters of the last integration (as
    /// [`crate::SecondOrderRadau::stats`]).
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// Integrates from `(t0, x0, ẋ0)` to `t_end`, calling `observer` after
    /// every accepted step with the step's end values and the BDF
    /// derivative `ẋ` (it returns `false` to stop early).
    pub fn integrate<F>(
        &mut self,
        t0: f64,
        x0: &[f64],
        xd0: &[f64],
        t_end: f64,
        mut observer: F,
    ) -> Result<Stats, SolveError>
    where
        F: FnMut(&SecondOrderStep<'_>) -> bool,
    {
        let n = self.problem.n_vars();
        check_start(n, t0, x0, xd0, t_end)?;
        self.stats = Stats::default();
        let orders = self.problem.orders();
        let mut history = vec![Point {
            t: t0,
            x: x0.to_vec(),
            xd: xd0.to_vec(),
            order: 0,
        }];
        let h_max = largest_step(self.options.h_max);
        let steps = self.options.steps.clone();
        let (mut h, max_order) = match &steps {
            BdfSteps::Fixed { h, max_order } => (*h, *max_order),
            BdfSteps::Schedule(s) => (s.first().map_or(t_end - t0, |p| p.0), BDF_MAX_ORDER),
            BdfSteps::Adaptive {
                rtol, max_order, ..
            } => (
                ((t_end - t0) * rtol.sqrt().min(1e-3)).min(h_max),
                *max_order,
            ),
        };
        let mut k = 1usize;
        // Accepted steps since the last change of the order or a rejection.
        let mut unchanged = 0usize;
        let mut rejected_in_row = 0usize;
        let mut attempts = 0usize;
        let mut t = t0;
        while t < t_end {
            let accepted = self.stats.steps_accepted;
            if let BdfSteps::Schedule(s) = &steps {
                match s.get(accepted) {
                    Some(&(hs, ks)) => (h, k) = (hs, ks),
                    None => break,
                }
            }
            if let BdfSteps::Fixed { .. } = steps {
                k = (accepted + 1).min(max_order);
            }
            attempts += 1;
            if attempts > self.options.max_steps {
                return Err(SolveError::TooManySteps {
                    t,
                    max_steps: self.options.max_steps,
                });
            }
            let last = t + h >= t_end - 1e-12 * t_end.abs().max(1.0);
            let hh = if last { t_end - t } else { h };
            if hh <= f64::EPSILON * t.abs().max(1.0) * 4.0 {
                return Err(SolveError::StepSizeTooSmall { t, h: hh });
            }
            let k_now = k.min(history.len());
            let tolerances = match steps {
                BdfSteps::Adaptive { rtol, atol, .. } => (rtol, atol),
                _ => (1.0, 1.0),
            };
            let attempt = self.attempt(&history, hh, k_now, &orders, tolerances);
            match steps {
                BdfSteps::Adaptive { .. } => {}
                _ => {
                    // Fixed and prescribed steps: no error test.
                    let a = attempt?;
                    self.accept(&mut history, t + hh, a.x, a.xd, k_now);
                    t = if last { t_end } else { t + hh };
                    if !self.observe(&history, &mut observer) {
                        break;
                    }
                    continue;
                }
            }
            let a = match attempt {
                Ok(a) => a,
                Err(_) => {
                    self.stats.steps_rejected += 1;
                    self.stats.newton_failures += 1;
                    rejected_in_row += 1;
                    h = hh * 0.25;
                    unchanged = 0;
                    continue;
                }
            };
            let [e_lower, e_k, e_higher] = a.errors;
            if e_k.is_nan() || e_k > 1.0 {
                self.stats.steps_rejected += 1;
                rejected_in_row += 1;
                let factor = if e_k.is_finite() {
                    (0.9 * e_k.powf(-1.0 / (k_now as f64 + 1.0))).clamp(0.2, 0.9)
                } else {
                    0.2
                };
                h = hh * factor;
                // Repeated failures: restart at order 1 with a smaller step.
                if rejected_in_row >= 3 {
                    k = 1;
                    h = hh * 0.1;
                }
                unchanged = 0;
                continue;
            }
            rejected_in_row = 0;
            self.accept(&mut history, t + hh, a.x, a.xd, k_now);
            t = if last { t_end } else { t + hh };
            if !self.observe(&history, &mut observer) {
                break;
            }
            unchanged += 1;
            // Order: lower when order k − 1 estimates no larger an error,
            // raise after k + 1 unchanged steps when order k + 1 estimates
            // a smaller one.
            let (k_new, e_new) = if k_now > 1 && e_lower <= e_k {
                (k_now - 1, e_lower)
            } else if k_now < max_order && unchanged > k_now && e_higher < e_k {
                (k_now + 1, e_higher)
            } else {
                (k_now, e_k)
            };
            let factor = if e_new > 0.0 {
                (0.9 * e_new.powf(-1.0 / (k_new as f64 + 1.0))).clamp(0.2, 2.0)
            } else {
                2.0
            };
            // Keep the step (and so the cheaper constant coefficients)
            // unless it grows by a fifth or must shrink.
            let factor = if (1.0..1.2).contains(&factor) {
                1.0
            } else {
                factor
            };
            if k_new != k_now {
                unchanged = 0;
            }
            k = k_new;
            h = (hh * factor).min(h_max);
        }
        Ok(self.stats)
    }

    /// Appends an accepted point, keeping the last `2·BDF_MAX_ORDER + 1`
    /// (the modified coefficients look back `k + k_{n−k}` points).
    fn accept(&mut self, history: &mut Vec<Point>, t: f64, x: Vec<f64>, xd: Vec<f64>, k: usize) {
        self.stats.steps_accepted += 1;
        history.push(Point { t, x, xd, order: k });
        if history.len() > 2 * BDF_MAX_ORDER + 1 {
            history.remove(0);
        }
    }

    /// Calls the observer on the last step of `history`.
    fn observe<F>(&self, history: &[Point], observer: &mut F) -> bool
    where
        F: FnMut(&SecondOrderStep<'_>) -> bool,
    {
        let (a, b) = (&history[history.len() - 2], &history[history.len() - 1]);
        observer(&SecondOrderStep {
            t_start: a.t,
            t: b.t,
            x_start: &a.x,
            xd_start: &a.xd,
            x: &b.x,
            xd: &b.xd,
        })
    }

    /// One step of size `h` and order `k ≤ history.len()` from the last
    /// point of `history`: the coefficients (12) and (17), the predictor,
    /// Newton on (20) and the error estimates.
    fn attempt(
        &mut self,
        history: &[Point],
        h: f64,
        k: usize,
        orders: &[u8],
        (rtol, atol): (f64, f64),
    ) -> Result<Attempt, SolveError> {
        let n = orders.len();
        let len = history.len();
        let prev = &history[len - 1];
        let tn = prev.t + h;
        // Scaled times τ_j = (t_{n−j} − t_n)/h, j = 0..len.
        let tau: Vec<f64> = std::iter::once(0.0)
            .chain(history.iter().rev().map(|p| (p.t - tn) / h))
            .collect();
        let beta: Vec<f64> = derivative_weights(&tau[..=k])
            .iter()
            .map(|b| b / h)
            .collect();
        let delta: Vec<f64> = modified_weights(history, &tau, k)?
            .iter()
            .map(|d| d / h)
            .collect();
        let point = |j: usize| &history[len - j];
        let (g1, g2) = (beta[0], delta[0]);
        let mut base_x = vec![0.0; n];
        let mut base_xd = vec![0.0; n];
        for (q, &o) in orders.iter().enumerate() {
            let r1: f64 = (1..=k).map(|j| beta[j] * point(j).x[q]).sum();
            let r2: f64 = (1..=k).map(|j| delta[j] * point(j).xd[q]).sum();
            match o {
                2 => {
                    base_x[q] = -r2 / (g1 * g2) - r1 / g1;
                    base_xd[q] = -r2 / g2;
                }
                1 => base_x[q] = -r1 / g1,
                _ => {}
            }
        }
        // Predictor through the last k + 1 points (the first step: Taylor).
        let predicted = |npts: usize| -> Vec<f64> {
            if npts <= 1 || len == 1 {
                return (0..n).map(|q| prev.x[q] + h * prev.xd[q]).collect();
            }
            let npts = npts.min(len);
            let w = lagrange_weights(&tau[1..=npts], 0.0);
            (0..n)
                .map(|q| (1..=npts).map(|j| w[j - 1] * point(j).x[q]).sum())
                .collect()
        };
        let xp = predicted(k + 1);
        let mut w: Vec<f64> = (0..n)
            .map(|q| {
                let r1: f64 = (1..=k).map(|j| beta[j] * point(j).x[q]).sum();
                let xdp = g1 * xp[q] + r1;
                match orders[q] {
                    2 => {
                        let r2: f64 = (1..=k).map(|j| delta[j] * point(j).xd[q]).sum();
                        g2 * xdp + r2
                    }
                    1 => xdp,
                    _ => xp[q],
                }
            })
            .collect();
        let (a2, a, a1) = (
            [1.0 / (h * h * g1 * g2)],
            [1.0 / (h * g2)],
            [1.0 / (h * g1)],
        );
        solve_stages(
            self.problem,
            &mut self.stats,
            StageSystem {
                t: prev.t,
                h,
                coefficients: StageCoefficients {
                    c: &[1.0],
                    a2: &a2,
                    a: &a,
                    a1: &a1,
                },
                base_x: &base_x,
                base_xd: &base_xd,
                orders,
            },
            &mut w,
        )?;
        let mut x = vec![0.0; n];
        let mut xd = vec![0.0; n];
        for q in 0..n {
            let r1: f64 = (1..=k).map(|j| beta[j] * point(j).x[q]).sum();
            match orders[q] {
                2 => {
                    xd[q] = base_xd[q] + h * a[0] * w[q];
                    x[q] = base_x[q] + h * h * a2[0] * w[q];
                }
                1 => {
                    x[q] = base_x[q] + h * a1[0] * w[q];
                    xd[q] = w[q];
                }
                _ => {
                    x[q] = w[q];
                    xd[q] = g1 * x[q] + r1;
                }
            }
        }
        // Error estimates of orders k − 1, k, k + 1, weighted by
        // atol + rtol·|x| per unknown.
        let mut errors = [f64::INFINITY; 3];
        for (slot, j) in [(0usize, k.wrapping_sub(1)), (1, k), (2, k + 1)] {
            if j == 0 || j > BDF_MAX_ORDER || j + 1 > len && j > 1 {
                continue;
            }
            let p = predicted(j + 1);
            let mut e = 0.0f64;
            for q in 0..n {
                if orders[q] >= 1 {
                    let scale = atol + rtol * x[q].abs().max(prev.x[q].abs());
                    e = e.max((x[q] - p[q]).abs() / scale);
                }
            }
            errors[slot] = e / (j as f64 + 1.0);
        }
        Ok(Attempt { x, xd, errors })
    }
}

/// Weights `w_j` with `p(τ) = Σ w_j p(τ_j)` for every polynomial `p` of
/// degree < `nodes.len()` (Lagrange interpolation at `τ`).
fn lagrange_weights(nodes: &[f64], tau: f64) -> Vec<f64> {
    (0..nodes.len())
        .map(|j| {
            nodes
                .iter()
                .enumerate()
                .filter(|&(l, _)| l != j)
                .map(|(_, &tl)| (tau - tl) / (nodes[j] - tl))
                .product()
        })
        .collect()
}

/// Weights `β_j` with `p'(τ_0) = Σ β_j p(τ_j)` for every polynomial of
/// degree ≤ `k` (`k + 1` nodes): the variable-step BDF formula of order
/// `k` (12), `β_0 = Σ_{j≥1} 1/(τ_0 − τ_j)` (the third row of (23)).
fn derivative_weights(nodes: &[f64]) -> Vec<f64> {
    let t0 = nodes[0];
    (0..nodes.len())
        .map(|j| {
            if j == 0 {
                return nodes[1..].iter().map(|&tl| 1.0 / (t0 - tl)).sum();
            }
            // ℓ_j'(τ_0) = Π_{l≠0,j} (τ_0 − τ_l) / Π_{l≠j} (τ_j − τ_l).
            let num: f64 = nodes
                .iter()
                .enumerate()
                .filter(|&(l, _)| l != 0 && l != j)
                .map(|(_, &tl)| t0 - tl)
                .product();
            let den: f64 = nodes
                .iter()
                .enumerate()
                .filter(|&(l, _)| l != j)
                .map(|(_, &tl)| nodes[j] - tl)
                .product();
            num / den
        })
        .collect()
}

/// The coefficients `δ_j` (`j = 0..=k`, in scaled time) of the modified
/// formula (13) `ẍ_n = Σ δ_j ẋ_{n−j}`: exact for `x = τ^d`, `d = 1..=k+1`,
/// when each `ẋ_{n−j}` is what its step computed — the BDF derivative of
/// its order over its own points (19), or the exact derivative at the
/// initial point — the system (17)/(18). `tau[j]` is the scaled time of
/// the point `n − j` (`history` holds the points before `n`).
fn modified_weights(history: &[Point], tau: &[f64], k: usize) -> Result<Vec<f64>, SolveError> {
    let len = history.len();
    let m = k + 1;
    // ẋ of τ^d at the point n − j as its step computed it.
    let computed = |j: usize, d: i32| -> f64 {
        let order = if j == 0 { k } else { history[len - j].order };
        if order == 0 {
            return d as f64 * tau[j].powi(d - 1);
        }
        let nodes = &tau[j..=j + order];
        derivative_weights(nodes)
            .iter()
            .zip(nodes)
            .map(|(b, t)| b * t.powi(d))
            .sum()
    };
    let mut matrix = vec![0.0; m * m];
    let mut rhs = vec![0.0; m];
    for d in 1..=m {
        for j in 0..m {
            matrix[(d - 1) * m + j] = computed(j, d as i32);
        }
        // (τ^d)'' at τ_n = 0.
        rhs[d - 1] = if d == 2 { 2.0 } else { 0.0 };
    }
    let mut lu = RealLu::new(m);
    lu.factor(&matrix)
        .map_err(|_| SolveError::InvalidProblem(format!(
            "the modified BDF coefficients of order {k} are not determined by these step sizes (the system (17) is singular)"
        )))?;
    lu.solve(&mut rhs);
    Ok(rhs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(t: f64, order: usize) -> Point {
        Point {
            t,
            x: vec![],
            xd: vec![],
            order,
        }
    }

    /// BDF2 with constant steps: `ẋ_n = (3x_n − 4x_{n−1} + x_{n−2})/(2h)`.
    #[test]
    fn bdf2_weights() {
        let b = derivative_weights(&[0.0, -1.0, -2.0]);
        for (x, y) in b.iter().zip([1.5, -2.0, 0.5]) {
            assert!((x - y).abs() < 1e-14, "{b:?}");
        }
    }

    /// The first step after the exact initial velocity is the modified
    /// Euler method (11) with `t_{−1} = t_0`: `ẍ_1 = 2(ẋ_1 − ẋ_0)/h`.
    #[test]
    fn modified_euler_first_step() {
        let history = [point(0.0, 0)];
        let d = modified_weights(&history, &[0.0, -1.0], 1).unwrap();
        assert!(
            (d[0] - 2.0).abs() < 1e-14 && (d[1] + 2.0).abs() < 1e-14,
            "{d:?}"
        );
    }

    /// (11): after a step change `ẍ_n = (ẋ_n − ẋ_{n−1}) / ((t_n − t_{n−2})/2)`.
    #[test]
    fn modified_euler_after_a_step_change() {
        // t_{n−2} = −1.5, t_{n−1} = −1, t_n = 0 (h_n = 1, h_{n−1} = 0.5).
        let history = [point(-1.5, 0), point(-1.0, 1)];
        let d = modified_weights(&history, &[0.0, -1.0, -1.5], 1).unwrap();
        assert!((d[0] - 2.0 / 1.5).abs() < 1e-14, "{d:?}");
        assert!((d[1] + 2.0 / 1.5).abs() < 1e-14, "{d:?}");
    }
}
