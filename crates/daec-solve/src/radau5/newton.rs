//! One step attempt: the checks of the step limits, the index-aware error
//! weights, the starting values from the last collocation polynomial and
//! the simplified Newton iteration on the transformed stage equations
//! (Solving ODEs II, IV.8, (8.10)–(8.17)).

use super::jacobian::NewtonMatrices;
use super::options::NewtonScaling;
use super::tableau::{C1, C2};
use super::workspace::Workspace;
use super::{MIDPOINT_FAILURES, Radau5, Settings, StepState, reduce};
use crate::error::SolveError;
use crate::problem::QuasiLinearDae;
use crate::step::collocation_increment;

/// How a simplified Newton iteration ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NewtonOutcome {
    /// `η·‖ΔW‖ ≤ κ·Tol`: the stage increments are converged.
    Converged,
    /// Diverged, not finite or out of iterations: retry with half the step.
    Failed,
    /// Converging too slowly to finish within the iterations: the step
    /// size is already reduced by the predicted factor.
    Slow,
}

impl<P: QuasiLinearDae + ?Sized> Radau5<'_, P> {
    /// Prepares a step attempt (RADAU5's label 30): checks the limits of
    /// steps and step size, sets the index-aware weights of the Newton
    /// test (RADAU5's NIND2/NIND3: `scal / h^{index−1}`, or as
    /// [`Options::newton_scaling`](super::Options::newton_scaling) says)
    /// and the Newton starting values
    /// (the last step's collocation polynomial extrapolated; zero at the
    /// first step).
    pub(super) fn prepare_attempt(
        &self,
        set: &Settings,
        st: &StepState,
        ws: &mut Workspace<'_>,
    ) -> Result<(), SolveError> {
        let n = self.n;
        let s = &self.stats;
        if s.steps_accepted + s.steps_rejected + s.newton_failures >= self.opts.max_steps {
            return Err(SolveError::TooManySteps {
                t: st.t,
                max_steps: self.opts.max_steps,
            });
        }
        if 0.1 * st.h.abs() <= st.t.abs() * set.uround || st.h < f64::MIN_POSITIVE {
            return Err(SolveError::StepSizeTooSmall { t: st.t, h: st.h });
        }
        // Index-aware scaling (RADAU5's NIND2/NIND3): scal / h^{index−1},
        // or as `Options::newton_scaling` says (all indices 1 unless the
        // error control is `Index`; the error test scales by the rest of
        // h^{index−1} itself, `err_scale`).
        let factors = newton_factors(self.opts.newton_scaling, st.h);
        let scaling = self.opts.newton_scaling;
        let (scal_inv, base_scal) = (&mut ws.scal_inv[..n], &ws.base_scal[..n]);
        for ((s, &b), &k) in scal_inv.iter_mut().zip(base_scal).zip(&self.index[..n]) {
            let f = match factors.get(usize::from(k)) {
                Some(&f) => f,
                None => scaling.factor(st.h, k),
            };
            *s = f / b;
        }
        // Starting values for Newton: extrapolated collocation polynomial.
        if st.first {
            for zi in ws.z.iter_mut() {
                zi.iter_mut().for_each(|x| *x = 0.0);
            }
        } else {
            let c3q = st.h / st.hold;
            let c1q = C1 * c3q;
            let c2q = C2 * c3q;
            for (zs, cq) in ws.z.iter_mut().zip([c1q, c2q, c3q]) {
                for (i, x) in zs[..n].iter_mut().enumerate() {
                    *x = collocation_increment(ws.cont, n, i, cq).0;
                }
            }
        }
        Ok(())
    }

    /// The simplified Newton iteration (Solving ODEs II, IV.8): at most
    /// `nit` corrections of the stage increments, the contraction `θ`
    /// estimated from successive corrections and the iteration stopped
    /// when `η·‖ΔW‖ ≤ κ·Tol` ((8.10)–(8.14)); a predicted slow
    /// convergence shrinks the step size. The number of iterations is left
    /// in `st.newt`.
    pub(super) fn newton(
        &mut self,
        set: &Settings,
        st: &mut StepState,
        ws: &mut Workspace<'_>,
        lin: &mut NewtonMatrices,
    ) -> NewtonOutcome {
        let n = self.n;
        st.faccon = st.faccon.max(set.uround).powf(0.8);
        st.theta = set.thet.abs();
        st.newt = 0;
        let mut dynold = 0.0f64;
        let mut thqold = 0.0f64;
        loop {
            if st.newt >= set.nit {
                return NewtonOutcome::Failed;
            }
            self.newton_rhs(set, st, ws, lin);
            lin.solve_stages(self.opts.threads, &mut ws.dw);
            self.stats.newton_iterations += 1;
            st.newt += 1;
            let newt = st.newt;
            // the weighted norm of the corrections and `Z += (T ⊗ I) ΔW` in
            // one pass (a failed or slow iteration leaves `Z` to the next
            // attempt's starting values, which overwrite it)
            let mut dyno = self.newton_update(ws);
            dyno = (dyno / (3 * n) as f64).sqrt();
            if !dyno.is_finite() {
                return NewtonOutcome::Failed;
            }
            if newt > 1 && newt < set.nit {
                let thq = dyno / dynold;
                st.theta = if newt == 2 {
                    thq
                } else {
                    (thq * thqold).sqrt()
                };
                thqold = thq;
                if st.theta < 0.99 {
                    st.faccon = st.theta / (1.0 - st.theta);
                    let dyth =
                        st.faccon * dyno * st.theta.powi((set.nit - 1 - newt) as i32) / set.fnewt;
                    if dyth >= 1.0 {
                        let qnewt = dyth.clamp(1e-4, 20.0);
                        let hhfac =
                            0.8 * qnewt.powf(-1.0 / (4.0 + set.nit as f64 - 1.0 - newt as f64));
                        st.h *= hhfac;
                        return NewtonOutcome::Slow;
                    }
                } else {
                    return NewtonOutcome::Failed;
                }
            }
            dynold = dyno.max(set.uround);
            if st.faccon * dyno <= set.fnewt {
                return NewtonOutcome::Converged;
            }
        }
    }

    /// The right-hand side `−(T^{-1} ⊗ I) R` of a Newton iteration in
    /// `ws.dw`, from the stage derivatives `Ż = (A^{-1} ⊗ I) Z / h` and the
    /// stage residuals (the three stages in one call: the problem may
    /// evaluate them together).
    fn newton_rhs(
        &mut self,
        set: &Settings,
        st: &StepState,
        ws: &mut Workspace<'_>,
        lin: &NewtonMatrices,
    ) {
        let (n, n_d) = (self.n, self.n_d);
        let hinv = 1.0 / st.h;
        {
            // (one pass over the components for the three stages, each
            // `Z_i` loaded once; slices of length n: no bounds checks)
            let (z0, z1, z2, yv) = (&ws.z[0][..n], &ws.z[1][..n], &ws.z[2][..n], &ws.y[..n]);
            let a = self.tr.a_inv;
            let [zd0, zd1, zd2] = &mut ws.zd;
            let (zd0, zd1, zd2) = (&mut zd0[..n], &mut zd1[..n], &mut zd2[..n]);
            let [ys0, ys1, ys2] = &mut ws.ys;
            let (ys0, ys1, ys2) = (&mut ys0[..n], &mut ys1[..n], &mut ys2[..n]);
            for i in 0..n {
                let (x0, x1, x2, y) = (z0[i], z1[i], z2[i], yv[i]);
                zd0[i] = (a[0][0] * x0 + a[0][1] * x1 + a[0][2] * x2) * hinv;
                zd1[i] = (a[1][0] * x0 + a[1][1] * x1 + a[1][2] * x2) * hinv;
                zd2[i] = (a[2][0] * x0 + a[2][1] * x1 + a[2][2] * x2) * hinv;
                ys0[i] = y + x0;
                ys1[i] = y + x1;
                ys2[i] = y + x2;
            }
        }
        {
            let [r0, r1, r2] = &mut ws.full3;
            let [y0, y1, y2] = &ws.ys;
            let [d0, d1, d2] = &ws.zd;
            self.problem.residual_stages(
                [st.t + C1 * st.h, st.t + C2 * st.h, st.t + st.h],
                [y0, y1, y2],
                [d0, d1, d2],
                [r0, r1, r2],
            );
        }
        self.stats.residual_evals += 3;
        // rhs = −(T^{-1} ⊗ I) R. A square system selects every
        // row in order, so R is the full residual with the
        // constraint rows negated: that sign is folded into the
        // rhs (an exact negation, the same values) instead of
        // copying R out of it.
        let ti = self.tr.t_inv;
        if set.overdetermined {
            for (f, r) in ws.full3.iter().zip(ws.res.iter_mut()) {
                reduce(n_d, f, &lin.sel, r);
            }
        }
        let rr = if set.overdetermined {
            &ws.res
        } else {
            &ws.full3
        };
        // the rows entering the rhs negated: all rows of R, the
        // differential rows of the full residual
        let n_neg = if set.overdetermined { n } else { n_d.min(n) };
        let (r0, r1, r2) = (&rr[0][..n], &rr[1][..n], &rr[2][..n]);
        let [d0, d1, d2] = &mut ws.dw;
        let (d0, d1, d2) = (&mut d0[..n], &mut d1[..n], &mut d2[..n]);
        // (two loops instead of a sign per row: the negation is exact,
        // the same values as a multiplication by −1)
        for i in 0..n_neg {
            let (r0, r1, r2) = (r0[i], r1[i], r2[i]);
            d0[i] = -(ti[0][0] * r0 + ti[0][1] * r1 + ti[0][2] * r2);
            d1[i] = -(ti[1][0] * r0 + ti[1][1] * r1 + ti[1][2] * r2);
            d2[i] = -(ti[2][0] * r0 + ti[2][1] * r1 + ti[2][2] * r2);
        }
        for i in n_neg..n {
            let (r0, r1, r2) = (r0[i], r1[i], r2[i]);
            d0[i] = ti[0][0] * r0 + ti[0][1] * r1 + ti[0][2] * r2;
            d1[i] = ti[1][0] * r0 + ti[1][1] * r1 + ti[1][2] * r2;
            d2[i] = ti[2][0] * r0 + ti[2][1] * r1 + ti[2][2] * r2;
        }
    }

    /// `Z += (T ⊗ I) ΔW`: the transformed corrections back to the stage
    /// increments. Returns `Σ_i Σ_k (ΔW_k,i / scal_i)²`, the sum of the
    /// squares of the Newton test's norm (Solving ODEs II, IV.8, (8.13)),
    /// taken in the same pass over `ΔW` (the same sum, in the same order,
    /// as a pass of its own).
    fn newton_update(&self, ws: &mut Workspace<'_>) -> f64 {
        let n = self.n;
        let tm = self.tr.t;
        let (d0, d1, d2) = (&ws.dw[0][..n], &ws.dw[1][..n], &ws.dw[2][..n]);
        let sc = &ws.scal_inv[..n];
        let [z0, z1, z2] = &mut ws.z;
        let (z0, z1, z2) = (&mut z0[..n], &mut z1[..n], &mut z2[..n]);
        let mut sum = 0.0;
        for i in 0..n {
            let (w0, w1, w2) = (d0[i], d1[i], d2[i]);
            let d = sc[i];
            sum += (w0 * d).powi(2) + (w1 * d).powi(2) + (w2 * d).powi(2);
            z0[i] += tm[0][0] * w0 + tm[0][1] * w1 + tm[0][2] * w2;
            z1[i] += tm[1][0] * w0 + tm[1][1] * w1 + tm[1][2] * w2;
            z2[i] += tm[2][0] * w0 + tm[2][1] * w1 + tm[2][2] * w2;
        }
        sum
    }

    /// After a failed Newton iteration: counts it (stops at
    /// `max_newton_failures` in a row), halves the step after a failure
    /// (a slow iteration has already reduced it) and asks for a new
    /// selection, a new LU and — at the step start from the
    /// [`MIDPOINT_FAILURES`]-th failure of a midpoint Jacobian — new
    /// Jacobians.
    pub(super) fn newton_failed(
        &mut self,
        st: &mut StepState,
        outcome: NewtonOutcome,
    ) -> Result<(), SolveError> {
        st.newton_failures += 1;
        self.stats.newton_failures += 1;
        if st.newton_failures >= self.opts.max_newton_failures {
            return Err(SolveError::NewtonDivergence {
                t: st.t,
                h: st.h,
                failures: st.newton_failures,
            });
        }
        if outcome == NewtonOutcome::Failed {
            st.h *= 0.5;
        }
        st.reject = true;
        st.reselect = true;
        st.last = false;
        st.need_jac =
            !st.caljac || (st.jacobian_at_midpoint && st.newton_failures >= MIDPOINT_FAILURES);
        st.need_lu = true;
        Ok(())
    }
}

/// The factors of the Newton test's weights for the variables of index 0
/// (as 1), 1, 2 and 3 at step size `h` ([`NewtonScaling::factor`]): the
/// weights of a step attempt take them from here instead of one `powi`
/// per unknown.
fn newton_factors(scaling: NewtonScaling, h: f64) -> [f64; 4] {
    [0, 1, 2, 3].map(|k| scaling.factor(h, k))
}
