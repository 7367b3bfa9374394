//! An accepted step: the projection of its end point onto the
//! constraints, the dense output (the collocation polynomial, Solving ODEs
//! II, IV.8, (8.23)), the problem's own projection, the observer, and the
//! start of the next step.

use super::jacobian::NewtonMatrices;
use super::tableau::{C1, C2};
use super::workspace::Workspace;
use super::{Radau5, Settings, StepState, all_finite};
use crate::error::SolveError;
use crate::problem::QuasiLinearDae;
use crate::step::{Step, StepControl};

/// Maximal simplified-Newton corrections of the end-point projection.
const PROJECTION_MAX_ITER: usize = 4;

/// The end-point projection stops at round-off when a correction reduced
/// the largest constraint residual by less than this factor (and the
/// residual is within [`PROJECTION_ROUNDOFF`] roundings of the size of
/// `g`'s terms). Its contraction is linear: the matrix is the step's
/// simplified-Newton matrix, `∂g/∂z` at the Jacobians' point (the step's
/// midpoint, or an earlier step's), not at the end point, so the rate
/// grows with the step; where the Newton iteration's test is loosened by
/// the index scaling, [`PROJECTION_MAX_ITER`] rather than round-off ends
/// the projection.
const PROJECTION_MIN_REDUCTION: f64 = 0.5;

/// The round-off level of a constraint residual, in units of the unit
/// round-off times [`Radau5::constraint_scale`].
const PROJECTION_ROUNDOFF: f64 = 4.0;

impl<P: QuasiLinearDae + ?Sized> Radau5<'_, P> {
    /// Completes an accepted step: advances `t`, projects the end point,
    /// builds the dense output, hands the step to `observer` and prepares
    /// the next step of size `hnew` (proposed). `Ok(true)` when the
    /// integration ends here (the last step, or the observer stopped it).
    pub(super) fn accept<F>(
        &mut self,
        set: &Settings,
        st: &mut StepState,
        ws: &mut Workspace<'_>,
        lin: &mut NewtonMatrices,
        hnew: f64,
        observer: &mut F,
    ) -> Result<bool, SolveError>
    where
        F: FnMut(&Step<'_>) -> StepControl,
    {
        let n = self.n;
        let t_start = st.t;
        st.hold = st.h;
        st.t = if st.last { set.t_end } else { st.t + st.h };
        // stage derivative at c3 = 1 approximates ż(t_{n+1})
        let mut g_at_end = self.project_end_point(set, st, ws, lin);
        ws.ydot.copy_from_slice(ws.zd[2]);
        self.dense_output(set, ws);
        // Projected Runge–Kutta (projected-rk-index3-daes, eq.
        // (2.8)): the problem may move the end point onto its
        // position and velocity constraints; the next step starts
        // from the projected point and the dense output ends there.
        if self.problem.project_step(st.t, ws.y) {
            self.stats.projections += 1;
            ws.cont[..n].copy_from_slice(ws.y);
            g_at_end = false;
        }
        st.caljac = false;
        st.nsing = 0;
        let control = observer(&Step {
            t_start,
            t: st.t,
            z: ws.y,
            zdot: ws.ydot,
            cont: ws.cont,
            constraints: g_at_end.then_some(&ws.gg[..]),
        });
        if st.last || control == StepControl::Stop {
            return Ok(true);
        }
        self.next_step(set, st, ws, g_at_end, hnew);
        Ok(false)
    }

    /// Projection of the end point onto the constraints with the
    /// simplified-Newton matrix (diff rows: (γ/h·M − J)Δ = 0, constraint
    /// rows: ∂g/∂z·Δ = −g), so that the constraints — hidden ones included
    /// for HiC/ADA — hold to round-off at every step as in QUALIDAES
    /// (steinbrecher2016 §4) rather than only to the Newton tolerance.
    /// A correction that more than doubles the largest constraint
    /// residual is undone and the projection stopped there. At round-off
    /// the projection stops as well: a residual that the last correction
    /// did not reduce by [`PROJECTION_MIN_REDUCTION`] and that is within
    /// [`PROJECTION_ROUNDOFF`] roundings of the size of `g`'s terms
    /// ([`Self::constraint_scale`]) — `proj_tol` is relative to the
    /// tolerances, not to that size, and may be below it.
    /// Returns whether `ws.gg` holds `g(t, y + z[2])` for the final `z[2]`.
    fn project_end_point(
        &mut self,
        set: &Settings,
        st: &StepState,
        ws: &mut Workspace<'_>,
        lin: &mut NewtonMatrices,
    ) -> bool {
        let n = self.n;
        let nd_sel = lin.sel.diff_rows.len();
        let mut g_at_end = false;
        // The residual before the last correction (`errv` holds it).
        let mut gprev = f64::INFINITY;
        if self.n_g > 0 {
            for _ in 0..PROJECTION_MAX_ITER {
                for i in 0..n {
                    ws.ystage[i] = ws.y[i] + ws.z[2][i];
                }
                self.problem.constraints(st.t, ws.ystage, ws.gg);
                self.stats.constraint_evals += 1;
                g_at_end = true;
                let gmax = lin
                    .sel
                    .constraint_rows
                    .iter()
                    .map(|&r| ws.gg[r].abs())
                    .fold(0.0, f64::max);
                if gmax <= set.proj_tol {
                    break;
                }
                if gmax > PROJECTION_MIN_REDUCTION * gprev
                    && gmax <= PROJECTION_ROUNDOFF * set.uround * self.constraint_scale(ws.ystage)
                {
                    // At round-off: the last correction did not reduce
                    // the residual usefully, and the residual is of the
                    // size of the rounding of `g`'s terms. It is undone
                    // if it increased the residual (`gg` is then stale).
                    if gmax > gprev {
                        for i in 0..n {
                            ws.z[2][i] -= ws.errv[i];
                        }
                        g_at_end = false;
                    }
                    break;
                }
                if gmax > 2.0 * gprev {
                    // Diverging: with a large step the differential rows
                    // (γ/h·M − J)Δ = 0 are dominated by J, which no longer
                    // describes the end point, and the corrections move
                    // away from the constraints (Fekete at 1e-2, h ≈ 243:
                    // 2.7e-5, 1.4e-4, 2.6e-3, 1.6 — a point the next step
                    // cannot start from). The last correction is undone:
                    // the point with the smaller residual is kept (`gg`
                    // is then stale).
                    for i in 0..n {
                        ws.z[2][i] -= ws.errv[i];
                    }
                    g_at_end = false;
                    break;
                }
                gprev = gmax;
                ws.errv[..nd_sel].iter_mut().for_each(|x| *x = 0.0);
                for (k, &r) in lin.sel.constraint_rows.iter().enumerate() {
                    ws.errv[nd_sel + k] = ws.gg[r];
                }
                lin.solve_real(ws.errv);
                if !all_finite(ws.errv) {
                    break;
                }
                for i in 0..n {
                    ws.z[2][i] += ws.errv[i];
                }
                g_at_end = false;
            }
        }
        g_at_end
    }

    /// The size of the terms of the constraints at `z`, the scale of their
    /// round-off: the largest entry of `∂g/∂z` (at the Jacobians' point)
    /// times the largest `|z_j|` — for `g = x² + y² − l²` near the circle
    /// `2l·l`, twice the size of `l²`.
    fn constraint_scale(&self, z: &[f64]) -> f64 {
        let zmax = z.iter().fold(0.0f64, |a, &x| a.max(x.abs()));
        let gmax = self.jg.values.iter().fold(0.0f64, |a, &x| a.max(x.abs()));
        zmax * gmax
    }

    /// The new point `y + Z₃`, the coefficients of the collocation
    /// polynomial (Solving ODEs II, IV.8, (8.23)) and the error weights
    /// at the new point.
    fn dense_output(&self, set: &Settings, ws: &mut Workspace<'_>) {
        let n = self.n;
        // (divided differences of (8.23), by multiplication with
        // the constant reciprocals)
        let (r_c1m1, r_c2m1, r_c1mc2) = (1.0 / (C1 - 1.0), 1.0 / (C2 - 1.0), 1.0 / (C1 - C2));
        let (r_c1, r_c2) = (1.0 / C1, 1.0 / C2);
        // (slices of length n: no bounds checks in the loop)
        let (c0, rest) = ws.cont.split_at_mut(n);
        let (c1, rest) = rest.split_at_mut(n);
        let (c2, c3) = rest.split_at_mut(n);
        let (c3, y, scal) = (&mut c3[..n], &mut ws.y[..n], &mut ws.base_scal[..n]);
        let (za, zb, zc) = (&ws.z[0][..n], &ws.z[1][..n], &ws.z[2][..n]);
        let atol = &set.atol_t[..n];
        for i in 0..n {
            let (z1, z2, z3) = (za[i], zb[i], zc[i]);
            let yi = y[i] + z3;
            y[i] = yi;
            c0[i] = yi;
            let d1 = (z2 - z3) * r_c2m1;
            c1[i] = d1;
            let ak = (z1 - z2) * r_c1mc2;
            let acont3 = (ak - z1 * r_c1) * r_c2;
            let d2 = (ak - d1) * r_c1m1;
            c2[i] = d2;
            c3[i] = d2 - acont3;
            scal[i] = atol[i] + set.rtol_t * yi.abs();
        }
    }

    /// The start of the next step: the residual (and a variable mass
    /// matrix) at the new point, the step size `hnew` bounded by `h_max`
    /// (and by `h` after a rejection) and ending exactly at `t_end`, and
    /// whether the Jacobians and the LU decomposition are kept (`θ` small
    /// and the step size nearly unchanged) or renewed.
    fn next_step(
        &mut self,
        set: &Settings,
        st: &mut StepState,
        ws: &mut Workspace<'_>,
        g_at_end: bool,
        mut hnew: f64,
    ) {
        let (n, n_d) = (self.n, self.n_d);
        if g_at_end {
            // the projection's last evaluation was at this very point
            let (d, g) = ws.y0.split_at_mut(n_d);
            self.problem.diff_residual(st.t, ws.y, ws.zero, d);
            g.copy_from_slice(ws.gg);
        } else {
            self.problem.residual(st.t, ws.y, ws.zero, ws.y0);
        }
        if !set.mass_constant {
            self.problem.mass_values(st.t, ws.y, ws.mass_cur);
            if !self.sparse {
                self.mass.scatter_values(ws.mass_cur, ws.e_cur, n);
            }
        }
        self.stats.residual_evals += 1;
        hnew = hnew.min(set.hmax);
        if st.reject {
            hnew = hnew.min(st.h);
        }
        st.reject = false;
        // RADAU5 ends on `t + hnew ≥ t_end`; the margin 1.0001 (as for the
        // first step) also ends the run when a step of `hnew` would leave
        // only round-off (`t` a sum of steps of `h_max` just short of
        // `t_end`), which no step could cover. A rest beyond `h_max` is
        // covered in two halves.
        if st.t + hnew * 1.0001 - set.t_end >= 0.0 {
            let rest = set.t_end - st.t;
            if rest <= set.hmax {
                st.h = rest;
                st.last = true;
            } else {
                st.h = 0.5 * rest;
            }
        } else {
            let qt = hnew / st.h;
            if st.theta <= set.thet && (1.0..=1.2).contains(&qt) {
                // keep Jacobian and LU decomposition
                return;
            }
            st.h = hnew;
        }
        st.need_lu = true;
        st.need_jac = st.theta > set.thet;
    }
}
