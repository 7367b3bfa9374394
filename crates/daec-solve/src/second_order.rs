//! Direct Runge–Kutta discretisation of second-order DAEs
//! (wunderlich2005-second-order-daes, §2.2, eqs. (29), (30), (32), (33)).
//!
//! A model `F(t, x, ẋ, ẍ) = 0` — e.g. the semi-explicit system (1)
//! `ÿ = f(t, y, ẏ, λ)`, `0 = g(t, y)` with `x = (y, λ)` — is integrated
//! without the reduction to first order: with collocation coefficients
//! `A`, `b`, `c` (Radau IIA here) and `Ã = A²`, `b̃ = bA` (eq. (28f)) the
//! unknowns of a step are the stage accelerations `Ẍ_i`, the stage values
//! follow from (32c)
//!
//! ```text
//!   X_i = x_{n−1} + h c_i ẋ_{n−1} + h² Σ_j ã_ij Ẍ_j,
//!   Ẋ_i = ẋ_{n−1} + h Σ_j a_ij Ẍ_j,
//! ```
//!
//! the stage equations `F(t_{n−1} + c_i h, X_i, Ẋ_i, Ẍ_i) = 0` (32b) are
//! solved by Newton's method with the Jacobian (33)
//! `F_ẍ + h²(Ã⊗I) F_x + h(A⊗I) F_ẋ` (rows equilibrated, the paper's
//! scaling by `1/h²` in line 11 of its algorithm generalised), and the step
//! ends with (32a) `x_n = x_{n−1} + h ẋ_{n−1} + h² (b̃ᵀ⊗I) Ẍ`,
//! `ẋ_n = ẋ_{n−1} + h (bᵀ⊗I) Ẍ`. Radau IIA is stiffly accurate, so
//! `x_n = X_s`: the end point satisfies the stage equations, the
//! constraints included.
//!
//! Unknowns that appear only to first order in `F` are collocated as
//! first-order components (stage unknown `Ẋ_i`, `X_i = x + h Σ a_ij Ẋ_j`),
//! those that appear undifferentiated — the multipliers — through their
//! stage values `X_i` directly, `x_n = X_s`. This deviates from (30c),
//! which gives λ the second-order form `Λ_i = λ + h c_i λ̇ + h² Σ ã_ij Λ̈_j`:
//! the stage values `Λ_i` are the same (they are fixed by the stage
//! equations either way), but the auxiliary `λ̇_n = λ̇ + h Σ b_i Λ̈_i` of
//! (30a) is multiplied by `1 − bᵀÃ⁻¹c` in every step — 9/8 for the 2-stage
//! method — so it grows geometrically, and on the unit-circle example of
//! §3 Newton's method stalls at the round-off level after about 200 steps
//! of h = 5e-4. A first-order model (every order ≤ 1) gets plain Radau IIA
//! collocation, the comparison of the paper's Fig. 4.
//!
//! Steps are fixed ([`StepSize::Fixed`]) or chosen by step doubling
//! ([`StepSize::Adaptive`]; the error of the unknowns that appear
//! differentiated, the multipliers excluded as in DASSL, whose index > 1
//! components the local error test cannot control).
//!
//! The linear algebra is dense (`s·n` unknowns per step): meant for the
//! mechanical and circuit models of moderate size this method is for.

use crate::error::SolveError;
use crate::error_control::ErrorControl;
use crate::glm_nordsieck::GeneralLinear;
use crate::linalg::RealLu;
use crate::step::Stats;

/// A square DAE `F(t, x, ẋ, ẍ) = 0` of order ≤ 2 in `n` unknowns with
/// dense Jacobians.
pub trait SecondOrderDae {
    /// Number of unknowns (and equations).
    fn n_vars(&self) -> usize;
    /// Writes `F(t, x, ẋ, ẍ)` to `out` (length `n`).
    fn residual(&self, t: f64, x: &[f64], xd: &[f64], xdd: &[f64], out: &mut [f64]);
    /// Writes the row-major `n × n` Jacobians `∂F/∂x`, `∂F/∂ẋ`, `∂F/∂ẍ`
    /// one after the other into `jac` (length `3n²`).
    fn jacobians(&self, t: f64, x: &[f64], xd: &[f64], xdd: &[f64], jac: &mut [f64]);
    /// The highest derivative order (0, 1 or 2) of each unknown in `F`: it
    /// selects the stage unknown of the unknown (its stage acceleration,
    /// derivative or value); the step-size control measures the error of
    /// the unknowns of order ≥ 1 (default: all of order 2).
    fn orders(&self) -> Vec<u8> {
        vec![2; self.n_vars()]
    }
}

/// Collocation coefficients of Radau IIA with `s` stages: `c`, `A`, `b`
/// and the second-order coefficients `Ã = A²`, `b̃ = bA` (eq. (28f)).
#[derive(Debug, Clone, PartialEq)]
pub struct Collocation {
    /// Nodes.
    pub c: Vec<f64>,
    /// `A` (row-major `s × s`): `a_ij = ∫_0^{c_i} L_j` (eq. (28c)).
    pub a: Vec<f64>,
    /// Weights `b_j = ∫_0^1 L_j`.
    pub b: Vec<f64>,
    /// `Ã = A²`.
    pub a2: Vec<f64>,
    /// `b̃ = bA`.
    pub b2: Vec<f64>,
}

impl Collocation {
    /// Radau IIA with 2 stages (order 3; the method of the paper's
    /// Example 2.4 and Fig. 4) or 3 stages (order 5).
    pub fn radau_iia(stages: usize) -> Result<Collocation, SolveError> {
        let c = match stages {
            2 => vec![1.0 / 3.0, 1.0],
            3 => {
                let r = 6.0f64.sqrt();
                vec![(4.0 - r) / 10.0, (4.0 + r) / 10.0, 1.0]
            }
            _ => {
                return Err(SolveError::InvalidOptions(format!(
                    "Radau IIA with {stages} stages is not offered (2 or 3)"
                )));
            }
        };
        Ok(Collocation::from_nodes(c))
    }

    /// The collocation method on the nodes `c` (eq. (28c), (28f)).
    pub fn from_nodes(c: Vec<f64>) -> Collocation {
        let s = c.len();
        // Lagrange basis polynomial L_j in monomial coefficients.
        let basis = |j: usize| -> Vec<f64> {
            let mut p = vec![1.0];
            for (k, &ck) in c.iter().enumerate() {
                if k == j {
                    continue;
                }
                let d = c[j] - ck;
                let mut q = vec![0.0; p.len() + 1];
                for (e, &v) in p.iter().enumerate() {
                    q[e + 1] += v / d;
                    q[e] -= ck * v / d;
                }
                p = q;
            }
            p
        };
        let integral = |p: &[f64], x: f64| -> f64 {
            p.iter()
                .enumerate()
                .map(|(e, &v)| v * x.powi(e as i32 + 1) / (e as f64 + 1.0))
                .sum()
        };
        let mut a = vec![0.0; s * s];
        let mut b = vec![0.0; s];
        for j in 0..s {
            let l = basis(j);
            for i in 0..s {
                a[i * s + j] = integral(&l, c[i]);
            }
            b[j] = integral(&l, 1.0);
        }
        let mut a2 = vec![0.0; s * s];
        let mut b2 = vec![0.0; s];
        for i in 0..s {
            for l in 0..s {
                a2[i * s + l] = (0..s).map(|j| a[i * s + j] * a[j * s + l]).sum();
            }
        }
        for j in 0..s {
            b2[j] = (0..s).map(|i| b[i] * a[i * s + j]).sum();
        }
        Collocation { c, a, b, a2, b2 }
    }

    /// Number of stages.
    pub fn stages(&self) -> usize {
        self.c.len()
    }

    /// Classical order `2s − 1` of Radau IIA.
    pub fn order(&self) -> u32 {
        2 * self.stages() as u32 - 1
    }
}

/// Step-size choice.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StepSize {
    /// Constant steps `h` (the last one shortened to end at `t_end`).
    Fixed(f64),
    /// Step doubling with these tolerances.
    Adaptive {
        /// Relative tolerance.
        rtol: f64,
        /// Absolute tolerance.
        atol: f64,
    },
}

/// The method [`SecondOrderRadau`] runs (wunderlich2005 §2.2–2.3).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Family {
    /// Radau IIA collocation (Example 2.4), order `2s − 1`, stiffly
    /// accurate.
    #[default]
    RadauIia,
    /// Gauss collocation (Example 2.4), order `2s`; not stiffly accurate:
    /// the end values of the unknowns collocated as first-order or
    /// algebraic components are the stage polynomial's at `c = 1`
    /// ([`Collocation::gauss`]).
    Gauss,
    /// The order-2 general linear method in Nordsieck form of Example 2.11
    /// ([`GeneralLinear::example_2_11`]); `stages` is ignored.
    Glm,
}

/// Options of [`SecondOrderRadau`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SecondOrderOptions {
    /// The method.
    pub family: Family,
    /// Collocation stages (Radau IIA: 2 or 3; Gauss: 1 to 3).
    pub stages: usize,
    /// Fixed or adaptive steps.
    pub step: StepSize,
    /// Step attempts allowed.
    pub max_steps: usize,
    /// Largest step of the adaptive control; `0` or infinite means no
    /// bound but the interval.
    pub h_max: f64,
    /// Which unknowns the step-doubling estimate weighs:
    /// [`ErrorControl::Differential`] (default) those that appear
    /// differentiated, [`ErrorControl::All`] also the others (the
    /// multipliers). [`ErrorControl::Index`] is refused: the estimate
    /// compares two solutions of the same method, whose multipliers
    /// converge with the method's order — the `h^{k−1}` scaling corrects
    /// the embedded estimate of the first-order Radau IIA only.
    pub error_control: ErrorControl,
}

impl Default for SecondOrderOptions {
    fn default() -> Self {
        Self {
            family: Family::RadauIia,
            stages: 3,
            step: StepSize::Adaptive {
                rtol: 1e-6,
                atol: 1e-6,
            },
            max_steps: 1_000_000,
            h_max: 0.0,
            error_control: ErrorControl::Differential,
        }
    }
}

/// The state after an accepted step: `x(t)`, `ẋ(t)` (for first-order
/// systems `ẋ` is the stage derivative at the end point).
#[derive(Debug, Clone, Copy)]
pub struct SecondOrderStep<'a> {
    /// Start of the step.
    pub t_start: f64,
    /// End of the step.
    pub t: f64,
    /// `x` at the start.
    pub x_start: &'a [f64],
    /// `ẋ` at the start.
    pub xd_start: &'a [f64],
    /// `x(t)`.
    pub x: &'a [f64],
    /// `ẋ(t)`.
    pub xd: &'a [f64],
}

impl SecondOrderStep<'_> {
    /// Cubic Hermite interpolation of `x` on the step from `x`, `ẋ` at both
    /// ends (exact for cubics; the dense output of the driver).
    pub fn dense(&self, t: f64, out: &mut [f64]) {
        let h = self.t - self.t_start;
        if h == 0.0 {
            out.copy_from_slice(self.x);
            return;
        }
        let s = (t - self.t_start) / h;
        let (h00, h10) = ((1.0 + 2.0 * s) * (1.0 - s).powi(2), s * (1.0 - s).powi(2));
        let (h01, h11) = (s * s * (3.0 - 2.0 * s), s * s * (s - 1.0));
        for (k, o) in out.iter_mut().enumerate() {
            *o = h00 * self.x_start[k]
                + h10 * h * self.xd_start[k]
                + h01 * self.x[k]
                + h11 * h * self.xd[k];
        }
    }
}

/// The one-step integrator of wunderlich2005 §2.2–2.3: the collocation
/// methods (29)/(30) (Radau IIA or Gauss) and the general linear method
/// (60), all in the Nordsieck form of [`GeneralLinear`].
pub struct SecondOrderRadau<'p, P: SecondOrderDae + ?Sized> {
    problem: &'p P,
    options: SecondOrderOptions,
    method: GeneralLinear,
    stats: Stats,
}

/// Result of one step attempt.
struct StepResult {
    x: Vec<f64>,
    xd: Vec<f64>,
    xdd: Vec<f64>,
}

impl<'p, P: SecondOrderDae + ?Sized> SecondOrderRadau<'p, P> {
    /// Binds the method to `problem`.
    pub fn new(problem: &'p P, options: SecondOrderOptions) -> Result<Self, SolveError> {
        let method = match options.family {
            Family::RadauIia => {
                let c = Collocation::radau_iia(options.stages)?;
                let order = c.order();
                GeneralLinear::from_collocation(&c, order)
            }
            Family::Gauss => {
                let c = Collocation::gauss(options.stages)?;
                GeneralLinear::from_collocation(&c, 2 * options.stages as u32)
            }
            Family::Glm => GeneralLinear::example_2_11(),
        };
        match options.step {
            StepSize::Fixed(h) if !(h.is_finite() && h > 0.0) => {
                return Err(SolveError::InvalidOptions(format!(
                    "the fixed step must be positive (got {h})"
                )));
            }
            StepSize::Adaptive { rtol, atol }
                if !(rtol.is_finite() && rtol > 0.0 && atol.is_finite() && atol > 0.0) =>
            {
                return Err(SolveError::InvalidOptions(format!(
                    "tolerances must be positive (rtol = {rtol}, atol = {atol})"
                )));
            }
            _ => {}
        }
        if options.error_control == ErrorControl::Index {
            return Err(SolveError::InvalidOptions(
                "the index scaling of the error test is for the embedded estimate of the first-order Radau IIA on index-2/3 components; the second-order method estimates its error by step doubling: use differential or all".into(),
            ));
        }
        Ok(Self {
            problem,
            options,
            method,
            stats: Stats::default(),
        })
    }

    /// Work counters of the last integration: accepted steps, rejected
    /// steps (error test and Newton failures together), evaluations of `F`
    /// and of its three Jacobians at one point, LU factorisations of the
    /// stage Jacobian and Newton iterations; the other counters stay zero.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// Integrates from `(t0, x0, ẋ0)` to `t_end`, calling `observer` after
    /// every accepted step (it returns `false` to stop early).
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
        let (mut t, mut x, mut xd) = (t0, x0.to_vec(), xd0.to_vec());
        let mut xdd = vec![0.0; n];
        let orders = self.problem.orders();
        let p = self.method.order as i32;
        let h_max = largest_step(self.options.h_max);
        let mut h = match self.options.step {
            StepSize::Fixed(h) => h,
            StepSize::Adaptive { rtol, .. } => {
                ((t_end - t0).min(rtol.powf(1.0 / p as f64)) * 0.1).min(h_max)
            }
        };
        let mut attempts = 0usize;
        while t < t_end {
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
            let outcome = match self.options.step {
                StepSize::Fixed(_) => self.step(t, &x, &xd, &xdd, hh, &orders).map(|r| (r, 0.0)),
                StepSize::Adaptive { rtol, atol } => {
                    self.doubled_step(t, &x, &xd, &xdd, hh, &orders, rtol, atol)
                }
            };
            match outcome {
                Ok((r, err)) if err <= 1.0 => {
                    let step = SecondOrderStep {
                        t_start: t,
                        t: t + hh,
                        x_start: &x,
                        xd_start: &xd,
                        x: &r.x,
                        xd: &r.xd,
                    };
                    self.stats.steps_accepted += 1;
                    let go_on = observer(&step);
                    t = if last { t_end } else { t + hh };
                    (x, xd, xdd) = (r.x, r.xd, r.xdd);
                    if !go_on {
                        break;
                    }
                    if let StepSize::Adaptive { .. } = self.options.step {
                        let fac = if err > 0.0 {
                            (0.9 * err.powf(-1.0 / (p as f64 + 1.0))).clamp(0.2, 4.0)
                        } else {
                            4.0
                        };
                        h = (hh * fac).min(h_max);
                    }
                }
                Ok((_, err)) => {
                    self.stats.steps_rejected += 1;
                    h = hh * (0.9 * err.powf(-1.0 / (p as f64 + 1.0))).clamp(0.1, 0.9);
                }
                Err(e) => match self.options.step {
                    StepSize::Fixed(_) => return Err(e),
                    StepSize::Adaptive { .. } => {
                        self.stats.steps_rejected += 1;
                        h = hh * 0.25;
                    }
                },
            }
        }
        Ok(self.stats)
    }

    /// Step doubling: one step of `h` against two of `h/2`; the error
    /// estimate `‖x_{h/2} − x_h‖ / (2^p − 1)` over the unknowns that appear
    /// differentiated (all with [`ErrorControl::All`]; and `ẋ` of those of
    /// order 2), weighted by
    /// `atol + rtol·|x|`. Returns the two-half-step result.
    #[allow(clippy::too_many_arguments)]
    fn doubled_step(
        &mut self,
        t: f64,
        x: &[f64],
        xd: &[f64],
        xdd: &[f64],
        h: f64,
        orders: &[u8],
        rtol: f64,
        atol: f64,
    ) -> Result<(StepResult, f64), SolveError> {
        let big = self.step(t, x, xd, xdd, h, orders)?;
        let half = self.step(t, x, xd, xdd, h / 2.0, orders)?;
        let two = self.step(t + h / 2.0, &half.x, &half.xd, &half.xdd, h / 2.0, orders)?;
        let p = self.method.order as i32;
        let scale = 1.0 / (2f64.powi(p) - 1.0);
        let mut err = 0.0f64;
        for k in 0..x.len() {
            let o = orders.get(k).copied().unwrap_or(2);
            if o >= 1 || self.options.error_control == ErrorControl::All {
                let w = atol + rtol * two.x[k].abs().max(x[k].abs());
                err = err.max((two.x[k] - big.x[k]).abs() * scale / w);
            }
            if o >= 2 {
                let w = atol + rtol * two.xd[k].abs().max(xd[k].abs());
                err = err.max((two.xd[k] - big.xd[k]).abs() * scale / w);
            }
        }
        if !err.is_finite() {
            err = 1e10;
        }
        Ok((two, err))
    }

    /// One step of size `h` from `(t, x, ẋ)` (`ẍ` the previous step's end
    /// values, the Newton start) in the Nordsieck form (60) of
    /// wunderlich2005 §2.3: the incoming vector `ỹ = [x, hẋ, h²ẍ]` (57) —
    /// the rescaling `D(h_n/h_{n−1})` (58) of the previous step's vector,
    /// formed directly from the unscaled values — gives the constant parts
    /// of the stages (60c), [`solve_stages`] the stage unknowns, and (60a)
    /// the outgoing values. A Runge–Kutta method is the case (39) of
    /// Example 2.7.
    fn step(
        &mut self,
        t: f64,
        x: &[f64],
        xd: &[f64],
        xdd: &[f64],
        h: f64,
        orders: &[u8],
    ) -> Result<StepResult, SolveError> {
        let n = x.len();
        let m = &self.method;
        let s = m.stages();
        let order = |k: usize| orders.get(k).copied().unwrap_or(2).min(2);
        let mut base_x = vec![0.0; n * s];
        let mut base_xd = vec![0.0; n * s];
        for i in 0..s {
            let (u2, u1) = (&m.u2[3 * i..3 * i + 3], &m.u1[3 * i..3 * i + 3]);
            for k in 0..n {
                let y = [x[k], h * xd[k], h * h * xdd[k]];
                let at = i * n + k;
                match order(k) {
                    2 => {
                        base_x[at] = dot(u2, &y);
                        base_xd[at] = dot(u1, &y) / h;
                    }
                    1 => base_x[at] = x[k],
                    _ => {}
                }
            }
        }
        let mut w: Vec<f64> = (0..s)
            .flat_map(|_| {
                (0..n).map(|k| match order(k) {
                    2 => xdd[k],
                    1 => xd[k],
                    _ => x[k],
                })
            })
            .collect();
        let coefficients = StageCoefficients {
            c: &m.c,
            a2: &m.a2,
            a: &m.a,
            a1: &m.a,
        };
        solve_stages(
            self.problem,
            &mut self.stats,
            StageSystem {
                t,
                h,
                coefficients,
                base_x: &base_x,
                base_xd: &base_xd,
                orders,
            },
            &mut w,
        )?;
        // (60a); the values at c = 1 of the stage polynomial for the
        // unknowns collocated as first-order or algebraic components.
        let mut xn = x.to_vec();
        let mut xdn = xd.to_vec();
        let mut xddn = vec![0.0; n];
        for k in 0..n {
            let stage = |j: usize| w[j * n + k];
            let at_end: f64 = (0..s).map(|j| m.end[j] * stage(j)).sum();
            match order(k) {
                2 => {
                    let y = [x[k], h * xd[k], h * h * xdd[k]];
                    let acc = |row: &[f64]| -> f64 { (0..s).map(|j| row[j] * stage(j)).sum() };
                    xn[k] = dot(&m.v2[..3], &y) + h * h * acc(&m.b2[..s]);
                    xdn[k] = (dot(&m.v2[3..6], &y) + h * h * acc(&m.b2[s..2 * s])) / h;
                    xddn[k] = at_end;
                }
                1 => {
                    xn[k] += h * (0..s).map(|j| m.b2[s + j] * stage(j)).sum::<f64>();
                    xdn[k] = at_end;
                }
                _ => {
                    xn[k] = at_end;
                    // The secant slope, for the dense output only.
                    xdn[k] = (at_end - x[k]) / h;
                }
            }
        }
        Ok(StepResult {
            x: xn,
            xd: xdn,
            xdd: xddn,
        })
    }
}

/// Checks the start of an integration: `n` entries in `x0` and `ẋ0`,
/// `t_end` after `t0`.
pub(crate) fn check_start(
    n: usize,
    t0: f64,
    x0: &[f64],
    xd0: &[f64],
    t_end: f64,
) -> Result<(), SolveError> {
    if x0.len() != n || xd0.len() != n {
        return Err(SolveError::InvalidOptions(format!(
            "initial values have {} and {} entries, expected {n}",
            x0.len(),
            xd0.len()
        )));
    }
    if t_end.partial_cmp(&t0) != Some(std::cmp::Ordering::Greater) {
        return Err(SolveError::InvalidOptions(format!(
            "t_end = {t_end} must lie after t0 = {t0}"
        )));
    }
    Ok(())
}

/// The bound on the step size: `h_max`, or no bound for `0` or a
/// non-finite value.
pub(crate) fn largest_step(h_max: f64) -> f64 {
    if h_max > 0.0 && h_max.is_finite() {
        h_max
    } else {
        f64::INFINITY
    }
}

/// `Σ a_i b_i`.
fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// How the stage values of one step follow from its Newton unknowns `W`
/// (row-major `s × s` matrices, multiplied by `h²` or `h`): for an unknown
/// of order 2 `X_i = P_i + h² Σ_j a2_ij W_j`, `Ẋ_i = Ṗ_i + h Σ_j a_ij W_j`,
/// `Ẍ_i = W_i` (eq. (32c), (60c)); of order 1 `X_i = P_i + h Σ_j a1_ij W_j`,
/// `Ẋ_i = W_i`; of order 0 `X_i = W_i`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StageCoefficients<'a> {
    /// Nodes: stage `i` is evaluated at `t + c_i h`.
    pub(crate) c: &'a [f64],
    /// Positions from accelerations.
    pub(crate) a2: &'a [f64],
    /// Velocities from accelerations.
    pub(crate) a: &'a [f64],
    /// Values from derivatives (first-order unknowns).
    pub(crate) a1: &'a [f64],
}

/// The nonlinear system of one step: stage equations
/// `F(t + c_i h, X_i, Ẋ_i, Ẍ_i) = 0`, `i = 1..s`, with the stage values of
/// [`StageCoefficients`] and their constant parts `P` (`base_x`) and `Ṗ`
/// (`base_xd`), `s·n` entries each, stage by stage.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StageSystem<'a> {
    /// Start of the step.
    pub(crate) t: f64,
    /// Step size.
    pub(crate) h: f64,
    /// The method's coefficients.
    pub(crate) coefficients: StageCoefficients<'a>,
    /// `P`.
    pub(crate) base_x: &'a [f64],
    /// `Ṗ` (order-2 unknowns).
    pub(crate) base_xd: &'a [f64],
    /// Highest derivative order of each unknown in `F`.
    pub(crate) orders: &'a [u8],
}

/// Newton's method on the stage equations of `system` (eq. (32b), (60b),
/// and with one stage the BDF system (20)) for the stage unknowns `w`
/// (`s·n`, the start on entry): per unknown `k` its highest derivative in
/// `F` — `Ẍ_ik` (order 2), `Ẋ_ik` (order 1) or the stage value `X_ik`
/// itself (order 0: multipliers). The Jacobian is (33)/(61),
/// `F_ẍ + h²(Ã⊗I) F_x + h(A⊗I) F_ẋ`, recomputed every iteration, rows
/// equilibrated (the paper's scaling by `1/h²`, line 11 of its algorithm,
/// generalised).
pub(crate) fn solve_stages<P: SecondOrderDae + ?Sized>(
    problem: &P,
    stats: &mut Stats,
    system: StageSystem<'_>,
    w: &mut [f64],
) -> Result<(), SolveError> {
    let StageSystem {
        t,
        h,
        coefficients: m,
        base_x,
        base_xd,
        orders,
    } = system;
    let s = m.c.len();
    let ns = w.len();
    let n = ns / s.max(1);
    let order = |k: usize| orders.get(k).copied().unwrap_or(2).min(2);
    let mut xs = vec![0.0; ns];
    let mut xds = vec![0.0; ns];
    let mut xdds = vec![0.0; ns];
    let mut res = vec![0.0; ns];
    let mut jac = vec![0.0; 3 * n * n];
    let mut big = vec![0.0; ns * ns];
    let mut lu = RealLu::new(ns);
    let stage_values = |w: &[f64], xs: &mut [f64], xds: &mut [f64], xdds: &mut [f64]| {
        for i in 0..s {
            for k in 0..n {
                let at = i * n + k;
                match order(k) {
                    2 => {
                        let mut a = base_x[at];
                        let mut b = base_xd[at];
                        for j in 0..s {
                            a += h * h * m.a2[i * s + j] * w[j * n + k];
                            b += h * m.a[i * s + j] * w[j * n + k];
                        }
                        (xs[at], xds[at], xdds[at]) = (a, b, w[at]);
                    }
                    1 => {
                        let mut a = base_x[at];
                        for j in 0..s {
                            a += h * m.a1[i * s + j] * w[j * n + k];
                        }
                        (xs[at], xds[at], xdds[at]) = (a, w[at], 0.0);
                    }
                    _ => (xs[at], xds[at], xdds[at]) = (w[at], 0.0, 0.0),
                }
            }
        }
    };
    let scale: f64 = base_x
        .iter()
        .chain(base_xd)
        .fold(1.0f64, |a: f64, v| a.max(v.abs()));
    let mut previous = f64::INFINITY;
    for iteration in 0..12 {
        stage_values(w, &mut xs, &mut xds, &mut xdds);
        // Residuals and the Jacobian (33) at the current iterate.
        for i in 0..s {
            let ti = t + m.c[i] * h;
            let (xi, xdi, xddi) = (
                &xs[i * n..(i + 1) * n],
                &xds[i * n..(i + 1) * n],
                &xdds[i * n..(i + 1) * n],
            );
            problem.residual(ti, xi, xdi, xddi, &mut res[i * n..(i + 1) * n]);
            problem.jacobians(ti, xi, xdi, xddi, &mut jac);
            let (jx, rest) = jac.split_at(n * n);
            let (jxd, jxdd) = rest.split_at(n * n);
            stats.residual_evals += 1;
            stats.jacobian_evals += 1;
            for j in 0..s {
                let d = if i == j { 1.0 } else { 0.0 };
                let (a, a2, a1) = (
                    h * m.a[i * s + j],
                    h * h * m.a2[i * s + j],
                    h * m.a1[i * s + j],
                );
                for r in 0..n {
                    let row = (i * n + r) * ns + j * n;
                    for c in 0..n {
                        let e = r * n + c;
                        big[row + c] = match order(c) {
                            2 => d * jxdd[e] + a2 * jx[e] + a * jxd[e],
                            1 => d * jxd[e] + a1 * jx[e],
                            _ => d * jx[e],
                        };
                    }
                }
            }
        }
        // Row equilibration (the paper scales by 1/h², line 11 of its
        // algorithm).
        for r in 0..ns {
            let mx = big[r * ns..(r + 1) * ns]
                .iter()
                .fold(0.0f64, |a, v| a.max(v.abs()));
            if mx > 0.0 && mx.is_finite() {
                for v in &mut big[r * ns..(r + 1) * ns] {
                    *v /= mx;
                }
                res[r] /= mx;
            }
        }
        stats.lu_decompositions += 1;
        stats.newton_iterations += 1;
        if let Err(e) = lu.factor(&big) {
            return Err(SolveError::SingularMatrix {
                t,
                h,
                variable: e.0 % n.max(1),
            });
        }
        for v in res.iter_mut() {
            *v = -*v;
        }
        lu.solve(&mut res);
        if res.iter().any(|v| !v.is_finite()) {
            break;
        }
        for (wi, d) in w.iter_mut().zip(&res) {
            *wi += d;
        }
        // Size of the change of the stage values against their round-off
        // level.
        let mut change = 0.0f64;
        let mut floor = scale;
        for (at, (d, wv)) in res.iter().zip(w.iter()).enumerate() {
            let f = match order(at % n) {
                2 => h * h,
                1 => h,
                _ => 1.0,
            };
            change = change.max(d.abs() * f);
            floor = floor.max(wv.abs() * f);
        }
        // Converged, or stalled at the round-off level of the iteration
        // matrix: its condition grows like h^(−k) for a multiplier of index
        // k + 1 (the reason for the scaling in line 11 of the paper's
        // algorithm), which limits how well the multipliers can be
        // resolved with very small steps.
        if change <= 1e-13 * floor
            || (iteration >= 2 && change >= 0.5 * previous && change <= 1e-3 * floor)
        {
            return Ok(());
        }
        previous = change;
    }
    Err(SolveError::NewtonDivergence { t, h, failures: 1 })
}
