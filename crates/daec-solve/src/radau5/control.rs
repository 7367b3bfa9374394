//! The embedded error estimate (Solving ODEs II, IV.8, (8.19)–(8.20)) and
//! the step-size control: the classical controller with RADAU5's safety
//! factor and the predictive controller of Gustafsson (IV.8, (8.25)).

use super::jacobian::NewtonMatrices;
use super::tableau::DD;
use super::workspace::Workspace;
use super::{Radau5, Settings, StepState, all_finite, reduce};
use crate::problem::QuasiLinearDae;

/// `max(‖e‖, 1e-10)` in the weighted RMS norm of the error test
/// (`scal_inv` the reciprocal weights; `mask` the factor of each component
/// with [`ErrorControl::Differential`](crate::ErrorControl::Differential),
/// the mean still over all `n` components, as IDA's masked norm).
fn weighted_norm(e: &[f64], scal_inv: &[f64], mask: Option<&[f64]>, n: usize) -> f64 {
    let s: f64 = match mask {
        None => e
            .iter()
            .zip(scal_inv.iter())
            .map(|(a, d)| (a * d).powi(2))
            .sum(),
        Some(m) => e
            .iter()
            .zip(scal_inv.iter())
            .zip(m)
            .map(|((a, d), m)| (a * d * m).powi(2))
            .sum(),
    };
    ((s / n as f64).sqrt()).max(1e-10)
}

impl<P: QuasiLinearDae + ?Sized> Radau5<'_, P> {
    /// The error of the converged step in the norm of the error test: the
    /// embedded formula filtered by `(γ0/h·M − J)^{-1}` (Solving ODEs II,
    /// IV.8, (8.19)–(8.20)), at the first step and after a rejection
    /// filtered once more when it exceeds 1 ((8.21)); a non-finite error
    /// is `1e6`.
    pub(super) fn error_estimate(
        &mut self,
        st: &StepState,
        ws: &mut Workspace<'_>,
        lin: &mut NewtonMatrices,
    ) -> f64 {
        let (n, n_d) = (self.n, self.n_d);
        let nd_sel = lin.sel.diff_rows.len();
        let hinv = 1.0 / st.h;
        {
            let (z0, z1, z2, f1) = (&ws.z[0][..n], &ws.z[1][..n], &ws.z[2][..n], &mut ws.f1[..n]);
            for i in 0..n {
                f1[i] = (DD[0] * z0[i] + DD[1] * z1[i] + DD[2] * z2[i]) * hinv;
            }
        }
        // M·F1 with the mass matrix at the current step start (the one
        // in the Newton matrix may be from an older step when the
        // Jacobian is reused, and E may depend on z).
        ws.f2.iter_mut().for_each(|x| *x = 0.0);
        if self.sparse {
            for (&(r, c), &v) in self.mass.entries.iter().zip(ws.mass_cur.iter()) {
                let k = lin.diff_at[r];
                if k != usize::MAX {
                    ws.f2[k] += v * ws.f1[c];
                }
            }
        } else {
            for (k, &r) in lin.sel.diff_rows.iter().enumerate() {
                let row = &ws.e_cur[r * n..(r + 1) * n];
                ws.f2[k] = row.iter().zip(ws.f1.iter()).map(|(a, b)| a * b).sum();
            }
        }
        for (k, &r) in lin.sel.diff_rows.iter().enumerate() {
            ws.errv[k] = ws.f2[k] - ws.y0[r];
        }
        for (k, &r) in lin.sel.constraint_rows.iter().enumerate() {
            ws.errv[nd_sel + k] = ws.f2[nd_sel + k] + ws.y0[n_d + r];
        }
        lin.solve_real(ws.errv);
        // Index scaling of the error test, RADAU5's `h^{k−1}`: the part
        // the Newton weights in `scal_inv` do not carry.
        let scaling = self.opts.newton_scaling;
        for (f, &k) in self.err_scale.iter_mut().zip(self.index.iter()) {
            *f = scaling.error_rest(st.h, k);
        }
        let mask = if self.err_scale.is_empty() {
            self.err_mask.as_deref()
        } else {
            Some(&self.err_scale[..])
        };
        let mut err = weighted_norm(ws.errv, ws.scal_inv, mask, n);
        if err >= 1.0 && (st.first || st.reject) {
            for i in 0..n {
                ws.ystage[i] = ws.y[i] + ws.errv[i];
            }
            self.problem.residual(st.t, ws.ystage, ws.zero, ws.full);
            reduce(n_d, ws.full, &lin.sel, ws.f1);
            let ok = all_finite(ws.f1);
            self.stats.residual_evals += 1;
            // F = −R(·, ż = 0)
            for i in 0..n {
                ws.errv[i] = -ws.f1[i] + ws.f2[i];
            }
            lin.solve_real(ws.errv);
            err = if ok {
                weighted_norm(ws.errv, ws.scal_inv, mask, n)
            } else {
                f64::INFINITY
            };
        }
        if !err.is_finite() {
            err = 1e6;
        }
        err
    }

    /// After an accepted step with error `err`: counts it and returns the
    /// next step size, the classical proposal `h/quot` or, with the
    /// predictive controller of Gustafsson (Solving ODEs II, IV.8,
    /// (8.25)), the smaller of it and the predictive one.
    pub(super) fn accepted_step_size(
        &mut self,
        set: &Settings,
        st: &mut StepState,
        err: f64,
    ) -> f64 {
        let (mut quot, mut hnew) = proposed_step(set, st, err);
        st.first = false;
        self.stats.steps_accepted += 1;
        if self.opts.predictive {
            if self.stats.steps_accepted > 1 {
                let facgus = (st.hacc / st.h) * (err * err / st.erracc).sqrt().sqrt() / set.safe;
                let facgus = set.facr.max(set.facl.min(facgus));
                quot = quot.max(facgus);
                hnew = st.h / quot;
            }
            st.hacc = st.h;
            st.erracc = err.max(1e-2);
        }
        hnew
    }

    /// After a step rejected by the error test with error `err`: the step
    /// is retried with the proposed step size (a tenth at the first step)
    /// and a new LU decomposition (new Jacobians unless they are fresh).
    pub(super) fn rejected(&mut self, set: &Settings, st: &mut StepState, err: f64) {
        let (_, hnew) = proposed_step(set, st, err);
        st.reject = true;
        st.last = false;
        if st.first {
            st.h *= 0.1;
        } else {
            st.h = hnew;
        }
        if self.stats.steps_accepted >= 1 {
            self.stats.steps_rejected += 1;
        }
        st.need_lu = true;
        st.need_jac = !st.caljac;
    }
}

/// The classical step-size proposal of RADAU5: `quot = h/h_new` from
/// `err^{1/4}` and a safety factor that falls with the Newton iterations,
/// bounded by `fac_min`/`fac_max`; returns `(quot, h_new)`.
fn proposed_step(set: &Settings, st: &StepState, err: f64) -> (f64, f64) {
    let fac = set
        .safe
        .min(set.cfac / (st.newt as f64 + 2.0 * set.nit as f64));
    // (x^{1/4} as two square roots: correctly rounded and much
    // cheaper than `powf`)
    let quot = set.facr.max(set.facl.min(err.sqrt().sqrt() / fac));
    let hnew = st.h / quot;
    (quot, hnew)
}
