//! The start of an integration: the checks of the initial point, the
//! settings derived from the options, the derivative the DAE determines at
//! the initial point and the starting step size (Solving ODEs I, II.4).

use super::jacobian::PREFERRED_SELECTION_MAX;
use super::workspace::Workspace;
use super::{Radau5, Settings, StepState, all_finite};
use crate::error::SolveError;
use crate::linalg::{RealLu, SparsePattern, SparseRealLu};
use crate::problem::QuasiLinearDae;
use crate::selection::{
    EquationSelection, PivotPreference, select_equations_ordered, select_equations_preferring,
    select_equations_sparse,
};

/// What [`starting_step_size`] needs of the initial point.
struct StartingPoint<'a> {
    t: f64,
    /// The consistent initial value `z₀`.
    z: &'a [f64],
    /// Its derivative `ż₀`.
    zdot: &'a [f64],
    /// The error weights `atol_i + rtol·|z₀,i|` (the integrator's, with
    /// RADAU5's transformed tolerances).
    scale: &'a [f64],
    /// The variables' index ([`QuasiLinearDae::variable_index`]).
    index: &'a [u8],
    mass_entries: &'a [(usize, usize)],
    /// `E(t₀, z₀)` in the order of `mass_entries`.
    mass_values: &'a [f64],
}

/// The starting step size of Hairer, Nørsett & Wanner (Solving ODEs I,
/// II.4, "Starting Step Size") for `E(t,z)ż = k(t,z)`, `g(t,z) = 0`, in
/// the weighted RMS norm of the error test:
///
/// 1. `d₀ = ‖z₀‖`, `d₁ = ‖ż₀‖` over the variables of index ≤ 1 (the
///    error test scales the others by `h^{index−1}`, so their size does
///    not bound the first step); `h₀ = 0.01·d₀/d₁` (`1e-6` if either is
///    below `1e-5`);
/// 2. one explicit Euler step `z₁ = z₀ + h₀ż₀`; the differential rows'
///    residual `E(t₁,z₁)ż₀ − k(t₁,z₁) ≈ −h₀·E·z̈`, each row measured in
///    the weight `Σ_j |E_ij| w_j` of the derivatives it combines, gives
///    `d₂ ≈ ‖z̈‖`;
/// 3. `h₁ = (0.01 / max(d₁, d₂))^{1/4}` — the embedded error estimate of
///    Radau IIA (Solving ODEs II, IV.8, (8.19)) is `O(h⁴)`, so this `h₁`
///    makes the first error estimate about `0.01` (`max(1e-6, 1e-3·h₀)`
///    when both derivatives vanish);
/// 4. `h = min(100·h₀, h₁)`.
///
/// RADAU5 leaves the first step to the user (`1e-6` by default), and the
/// growth of at most 8 per step then spends several steps on a start
/// that is smooth: Akzo Nobel took six steps from `1e-6` to `0.03`.
/// One residual evaluation; `scratch` takes `z₁`, `full` its residual.
fn starting_step_size<P: QuasiLinearDae + ?Sized>(
    problem: &P,
    p: &StartingPoint<'_>,
    scratch: &mut [f64],
    full: &mut [f64],
) -> f64 {
    let rms = |sum: f64, count: usize| {
        if count == 0 {
            0.0
        } else {
            (sum / count as f64).sqrt()
        }
    };
    let (mut s0, mut s1, mut count) = (0.0, 0.0, 0usize);
    for (i, w) in p.scale.iter().enumerate() {
        if p.index[i] <= 1 {
            s0 += (p.z[i] / w).powi(2);
            s1 += (p.zdot[i] / w).powi(2);
            count += 1;
        }
    }
    let (d0, d1) = (rms(s0, count), rms(s1, count));
    let h0 = if !(d0 >= 1e-5 && d1 >= 1e-5 && d0.is_finite() && d1.is_finite()) {
        1e-6
    } else {
        0.01 * d0 / d1
    };
    for (i, z1) in scratch.iter_mut().enumerate() {
        *z1 = p.z[i] + h0 * p.zdot[i];
    }
    problem.residual(p.t + h0, scratch, p.zdot, full);
    // the weight of each differential row: Σ_j |E_ij|·w_j
    let n_d = problem.n_diff();
    let mut row_weight = vec![0.0; n_d];
    for (&(r, c), &v) in p.mass_entries.iter().zip(p.mass_values) {
        row_weight[r] += v.abs() * p.scale[c];
    }
    let (mut s2, mut rows) = (0.0, 0usize);
    for (r, &w) in row_weight.iter().enumerate() {
        if w > 0.0 {
            s2 += (full[r] / (h0 * w)).powi(2);
            rows += 1;
        }
    }
    let d2 = rms(s2, rows);
    // (not `f64::max`, which would drop a NaN: a residual that is not
    // finite after the Euler step leaves the start to 1e-6)
    let dmax = if d1 >= d2 { d1 } else { d2 };
    let h1 = if !(dmax.is_finite() && d2.is_finite()) {
        1e-6
    } else if dmax <= 1e-15 {
        (1e-3 * h0).max(1e-6)
    } else {
        (0.01 / dmax).sqrt().sqrt()
    };
    (100.0 * h0).min(h1)
}

impl<P: QuasiLinearDae + ?Sized> Radau5<'_, P> {
    /// Checks the arguments of [`integrate`](Radau5::integrate): `z0` of
    /// `n` finite values, finite `t0 < t_end`.
    pub(super) fn check_start(&self, t0: f64, z0: &[f64], t_end: f64) -> Result<(), SolveError> {
        crate::problem::check_span(self.n, t0, z0, t_end)?;
        if !all_finite(z0) {
            return Err(SolveError::InvalidOptions(
                "initial value is not finite".into(),
            ));
        }
        Ok(())
    }

    /// The settings of an integration from `t0` to `t_end`.
    pub(super) fn settings(&self, t0: f64, t_end: f64) -> Settings {
        let (n, n_d, n_g) = (self.n, self.n_d, self.n_g);
        let problem = self.problem;
        let opts = &self.opts;
        let uround = f64::EPSILON;
        let overdetermined = n_d + n_g > n;
        // the dummy-derivative preference of the selection (dense path,
        // and the sparse one of a small system)
        let prefer = if overdetermined && (!self.sparse || n <= PREFERRED_SELECTION_MAX) {
            PivotPreference::new(
                n,
                &problem.constraint_levels(),
                &self.jg.entries,
                n_g,
                &self.mass.entries,
                &self.jd.entries,
                n_d,
            )
        } else {
            None
        };
        // Tolerance transformation of RADAU5 (the order-5 method is run at
        // rtol' = 0.1·rtol^{2/3}, keeping atol/rtol).
        let rtol_t = 0.1 * opts.rtol.powf(2.0 / 3.0);
        let atol_t: Vec<f64> = (0..n)
            .map(|i| {
                let a = opts.atol_per_variable.as_ref().map_or(opts.atol, |v| v[i]);
                rtol_t * a / opts.rtol
            })
            .collect();
        // Constraint residual accepted after the end-point projection.
        let proj_tol = 1e-4 * rtol_t.min(atol_t.iter().copied().fold(f64::INFINITY, f64::min));
        let fnewt = (10.0 * uround / rtol_t).max(0.03f64.min(rtol_t.sqrt()));
        let nit = opts.newton_max_iter;
        let safe = opts.safety;
        let hmax = if opts.h_max > 0.0 && opts.h_max.is_finite() {
            opts.h_max
        } else {
            t_end - t0
        };
        Settings {
            t_end,
            uround,
            rtol_t,
            atol_t,
            proj_tol,
            fnewt,
            nit,
            thet: opts.jacobian_reuse_theta,
            safe,
            facl: 1.0 / opts.fac_min,
            facr: 1.0 / opts.fac_max,
            cfac: safe * (1.0 + 2.0 * nit as f64),
            hmax,
            overdetermined,
            // a constant E is evaluated once, at the start
            mass_constant: problem.mass_is_constant(),
            prefer,
        }
    }

    /// The state at the start `t0` (with `ws.y = z₀` and `ws.ydot` the
    /// given `ż₀` or zero): the error weights, the residual and the mass
    /// matrix there, without a given `ż(t₀)` the derivative the DAE
    /// determines there (for the starting step and the first Jacobian),
    /// and the first step size.
    pub(super) fn start(&mut self, set: &Settings, ws: &mut Workspace<'_>, t0: f64) -> StepState {
        let n = self.n;
        let problem = self.problem;
        for i in 0..n {
            ws.base_scal[i] = set.atol_t[i] + set.rtol_t * ws.y[i].abs();
        }
        // (an automatic h0 is chosen below, once the start's residual is
        // at hand)
        let mut st = StepState::new(
            t0,
            if self.opts.h0 > 0.0 {
                self.opts.h0
            } else {
                1e-6
            },
        );
        // The residual at the start (full).
        problem.residual(st.t, ws.y, ws.zero, ws.y0);
        self.stats.residual_evals += 1;
        problem.mass_values(st.t, ws.y, ws.mass_cur);
        if !self.sparse {
            self.mass.scatter_values(ws.mass_cur, ws.e_cur, n);
        }
        // Without a given ż(t₀), the derivative the DAE determines there:
        // for the starting step and the first Jacobian.
        let mut derived = false;
        if self.opts.initial_derivative.is_none()
            && self.opts.h0 == 0.0
            && let Some(zdot0) = self.consistent_derivative(
                st.t,
                ws.y,
                ws.y0,
                ws.mass_cur,
                ws.e_cur,
                set.prefer.as_ref(),
            )
        {
            ws.ydot.copy_from_slice(&zdot0);
            derived = true;
        }
        if self.opts.h0 == 0.0 && (derived || self.opts.initial_derivative.is_some()) {
            let span = set.t_end - t0;
            let start = StartingPoint {
                t: t0,
                z: ws.y,
                zdot: ws.ydot,
                scale: ws.base_scal,
                index: &self.index,
                mass_entries: &self.mass.entries,
                mass_values: ws.mass_cur,
            };
            st.h = starting_step_size(problem, &start, ws.ystage, ws.full);
            self.stats.residual_evals += 1;
            st.h = st.h.max(1e-10 * span);
        }
        st.h = st.h.min(set.hmax);
        if st.t + st.h * 1.0001 - set.t_end >= 0.0 {
            st.h = set.t_end - st.t;
            st.last = true;
        }
        st.hold = st.h;
        self.try_restart_step(set, &mut st);
        st
    }

    /// The derivative `ż(t, z)` that the DAE determines at the consistent
    /// point `(t, z)`, as the start of an integration computes it when no
    /// `ż(t₀)` is given (`E(t,z)·ż = k(t,z)`, `∂g/∂z·ż = −∂g/∂t`, the rows
    /// of an overdetermined system selected as for the Newton matrix).
    /// `None` if `z` is not `n` finite values, the rows are singular there
    /// or the result is not finite. Evaluates the residual, the mass
    /// matrix, the constraint Jacobian and (for `∂g/∂t`) the constraints
    /// once each.
    pub fn derivative_at(&mut self, t: f64, z: &[f64]) -> Option<Vec<f64>> {
        let (n, n_d, n_g) = (self.n, self.n_d, self.n_g);
        if z.len() != n || !all_finite(z) || !t.is_finite() {
            return None;
        }
        let set = self.settings(t, t + 1.0);
        let mut start_residual = vec![0.0; n_d + n_g];
        self.problem
            .residual(t, z, &vec![0.0; n], &mut start_residual);
        let mut mass_values = vec![0.0; self.mass.entries.len()];
        self.problem.mass_values(t, z, &mut mass_values);
        let mut e_dense = Vec::new();
        if !self.sparse {
            e_dense = vec![0.0; n_d * n];
            self.mass.scatter_values(&mass_values, &mut e_dense, n);
        }
        let prefer = set.prefer.as_ref();
        self.consistent_derivative(t, z, &start_residual, &mass_values, &e_dense, prefer)
    }

    /// The derivative `ż(t, z)` that the DAE determines at a consistent
    /// point: the solution of `E(t,z)·ż = k(t,z)`, `∂g/∂z·ż = −∂g/∂t`
    /// (the constraints differentiated once along the solution), the
    /// rows an overdetermined system selects for its Newton matrix solved
    /// by LU (the dense or the sparse selection and LU, as the
    /// integration's). `start_residual` is `[−k(t, z); g(t, z)]` (the
    /// residual with `ż = 0`), `mass_values` `E(t, z)` in the order of
    /// its pattern and, on the dense path, `e_dense` the same row-major; `∂g/∂t` by a forward difference (one evaluation
    /// of the constraints). `None` if the rows are singular there or the
    /// result is not finite.
    fn consistent_derivative(
        &mut self,
        t: f64,
        z: &[f64],
        start_residual: &[f64],
        mass_values: &[f64],
        e_dense: &[f64],
        prefer: Option<&PivotPreference>,
    ) -> Option<Vec<f64>> {
        let (n, n_d, n_g) = (self.n, self.n_d, self.n_g);
        let problem = self.problem;
        let mut g_t = vec![0.0; n_g];
        if n_g > 0 {
            problem.constraint_jacobian_values(t, z, &mut self.jg.values);
            let dt = f64::EPSILON.sqrt() * t.abs().max(1.0);
            problem.constraints(t + dt, z, &mut g_t);
            self.stats.constraint_evals += 1;
            for (gt, &g0) in g_t.iter_mut().zip(&start_residual[n_d..]) {
                *gt = (*gt - g0) / dt;
            }
        }
        let (me, mv) = (&self.mass.entries, mass_values);
        let (ge, gv) = (&self.jg.entries, &self.jg.values);
        let g_dense = if self.sparse {
            Vec::new()
        } else {
            let mut g = vec![0.0; n_g * n];
            self.jg.scatter(&mut g, n);
            g
        };
        let sel = if n_d + n_g <= n {
            EquationSelection::all(n_d, n_g)
        } else if self.sparse {
            select_equations_ordered(n, me, mv, n_d, ge, gv, n_g)
                .or_else(|_| select_equations_sparse(n, me, mv, n_d, ge, gv, n_g))
                .ok()?
        } else {
            select_equations_preferring(n, e_dense, n_d, &g_dense, n_g, prefer).ok()?
        };
        // the right-hand side [k; −∂g/∂t] on the selected rows
        let diff_rhs = sel.diff_rows.iter().map(|&r| -start_residual[r]);
        let constraint_rhs = sel.constraint_rows.iter().map(|&r| -g_t[r]);
        let mut zdot: Vec<f64> = diff_rhs.chain(constraint_rhs).collect();
        let nd = sel.diff_rows.len();
        if self.sparse {
            // the selected rows of [E; ∂g/∂z], renumbered 0..n
            let mut at = vec![usize::MAX; n_d + n_g];
            for (k, &r) in sel.diff_rows.iter().enumerate() {
                at[r] = k;
            }
            for (k, &r) in sel.constraint_rows.iter().enumerate() {
                at[n_d + r] = nd + k;
            }
            let mut entries = Vec::with_capacity(me.len() + ge.len());
            let mut values = Vec::with_capacity(me.len() + ge.len());
            let rows = me.iter().zip(mv).map(|(&(r, c), &v)| (r, c, v));
            let constraint_rows = ge.iter().zip(gv).map(|(&(r, c), &v)| (n_d + r, c, v));
            for (r, c, v) in rows.chain(constraint_rows) {
                if at[r] != usize::MAX {
                    entries.push((at[r], c));
                    values.push(v);
                }
            }
            let (pattern, slots) = SparsePattern::new(n, &entries);
            let mut summed = vec![0.0; pattern.nnz()];
            for (&slot, &v) in slots.iter().zip(&values) {
                summed[slot] += v;
            }
            let mut lu = SparseRealLu::new(&pattern);
            lu.factor(&pattern, &summed).ok()?;
            lu.solve(&mut zdot);
        } else {
            let mut lu = RealLu::new(n);
            let a = lu.matrix_mut();
            let diff = sel.diff_rows.iter().map(|&r| &e_dense[r * n..(r + 1) * n]);
            let constraint = sel
                .constraint_rows
                .iter()
                .map(|&r| &g_dense[r * n..(r + 1) * n]);
            for (row, source) in a.chunks_exact_mut(n).zip(diff.chain(constraint)) {
                row.copy_from_slice(source);
            }
            lu.factor_in_place().ok()?;
            lu.solve(&mut zdot);
        }
        all_finite(&zdot).then_some(zdot)
    }
}
