//! [`FormProblem`]: a quasi-linear formulation (HiC, ADA, StE, DD, GGL,
//! DI1) as a [`daec_solve::QuasiLinearDae`], evaluated with compiled
//! [`daec_expr::Tape`]s.
//!
//! Residuals, `E(t,z)` and the analytic sparse Jacobians
//! `∂(E ż − k)/∂z` and `∂H/∂z` are differentiated symbolically
//! ([`daec_expr::ExprPool::diff`]) and compiled once; an evaluation is one
//! forward pass over a tape without allocation.

use crate::error::{NativeError, SimError, Unsupported};
use crate::native::{
    NATIVE_ABI, NativeCode, NativeLayout, NativeRoots, NativeSource, native_source,
};
use crate::output::SimStats;
use crate::parallel::Compiled;
use daec_expr::{ExprId, ExprPool};
use daec_regularize::QuasiLinearForm;
use daec_regularize::{FullPivLu, Matrix, least_norm_solve};
use daec_regularize::{mass_entries, sparse_jacobian};
use daec_solve::QuasiLinearDae;
use daec_solve::{MinNormSystem, SPARSE_THRESHOLD, saddle_point_solve_sparse};
use std::cell::{Cell, RefCell};

mod output_projection;

/// `max |v|` over `values` (NaN counts as infinite).
fn max_abs(values: &[f64]) -> f64 {
    values.iter().fold(0.0f64, |a, v| {
        if v.is_nan() {
            f64::INFINITY
        } else {
            a.max(v.abs())
        }
    })
}

/// A tape with its sparsity pattern.
#[derive(Debug, Clone)]
struct Sparse {
    code: Compiled,
    pattern: Vec<(usize, usize)>,
}

/// The direction of a projection step of projected Runge–Kutta methods
/// (projected-rk-index3-daes, eq. (2.8)): corrections `Δ = −A⁻¹K μ` of the
/// `n` movable unknowns, with `A` (`n × n`) the mass matrix of the rows
/// that hold their derivatives and `K` (`n × m`) those rows' derivative
/// `∂(E ż − k)/∂λ` by the `m` multipliers; `μ` is chosen so that the
/// linearised constraints hold. For `M v̇ = f − Gᵀλ` the corrections are
/// `M⁻¹Gᵀ μ`: orthogonal in the metric of the mass matrix.
#[derive(Debug, Clone)]
struct Direction {
    n: usize,
    m: usize,
    a: Vec<(usize, usize, f64)>,
    k: Vec<(usize, usize, f64)>,
}

impl Direction {
    /// The correction `Δ` along the direction with `B Δ = rhs` (`B` the
    /// constraints' Jacobian on the movable unknowns, `m × n` entries):
    /// the saddle-point system `[A K; B 0] [Δ; μ] = [0; rhs]`, dense or
    /// (large) sparse. `None` when it is singular (e.g. dependent
    /// constraints).
    fn solve(&self, b: impl Iterator<Item = (usize, usize, f64)>, rhs: &[f64]) -> Option<Vec<f64>> {
        let (n, m) = (self.n, self.m);
        let b: Vec<(usize, usize, f64)> = b.collect();
        if n + m > SPARSE_THRESHOLD {
            return saddle_point_solve_sparse(n, m, &self.a, &self.k, &b, rhs);
        }
        let mut s = Matrix::zeros(n + m, n + m);
        let blocks = [(&self.a, 0, 0), (&self.k, 0, n), (&b, n, 0)];
        for (entries, r0, c0) in blocks {
            for &(i, j, v) in entries {
                s.set(r0 + i, c0 + j, s.get(r0 + i, c0 + j) + v);
            }
        }
        let mut x = vec![0.0; n + m];
        x[n..].copy_from_slice(rhs);
        let mut x = FullPivLu::new(&s, 1e-14).solve(&x)?;
        x.truncate(n);
        x.iter().all(|v| v.is_finite()).then_some(x)
    }
}

/// The projection of step end points a [`FormProblem`] with a projector
/// makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Projection {
    /// Projected Radau IIA on the index-3 formulation: positions, then
    /// velocities along the mass matrix's metric (`project_step`).
    Index3,
    /// NDSolve's "Projection" method (ndsolve-dae-tutorial, "ODEs with
    /// Invariants", "Projection"): all constraints of the projector — the
    /// model's constraints with every hidden one and the declared
    /// invariants — together, with the least Euclidean change
    /// (Gauss–Newton, minimum-norm steps).
    Full,
}

/// A quasi-linear formulation compiled for the integrator.
#[derive(Debug, Clone)]
pub struct FormProblem {
    n: usize,
    n_d: usize,
    n_g: usize,
    params: Vec<f64>,
    levels: Vec<u32>,
    diff: Compiled,
    constraints: Compiled,
    /// `[E ż − k; g]` in one pass (the residual of every Radau stage),
    /// with the frame of the three Radau stages in one pass.
    both: Compiled,
    mass: Sparse,
    jd: Sparse,
    jg: Sparse,
    /// Hairer's index of each unknown (all 1 for the regularized forms).
    variable_index: Vec<u8>,
    /// Projected Runge–Kutta (projected-rk-index3-daes, eq. (2.8)): the
    /// constraints the end point of each accepted step is projected onto,
    /// and whether the projection is on.
    projector: Option<Box<FormProblem>>,
    projecting: bool,
    /// How the end points are projected onto the projector's constraints.
    projection: Projection,
    /// The model's declared invariants, compiled over `z` (for the
    /// statistics), and how many of the constraint rows (the last ones)
    /// are those invariants.
    invariants: Option<Compiled>,
    n_invariants: usize,
    invariant_rows: usize,
    /// Buffers of [`FormProblem::record_constraint_residuals`].
    residual_work: RefCell<ResidualWork>,
    /// The sparse least-norm solver of the projections.
    min_norm: MinNormCache,
    /// The work arrays of the projection of output points.
    output_work: RefCell<output_projection::OutputWork>,
    /// The roots of the tapes, for [`FormProblem::native_source`].
    roots: NativeRoots,
    /// The same functions as machine code (`daec simulate --native`),
    /// used instead of the tapes when set.
    native: Option<NativeCode>,
    /// The threads a tape compiled in halves may use
    /// ([`FormProblem::set_threads`]).
    threads: Cell<usize>,
}

/// The sparse least-norm solver of [`FormProblem::project`] for the last
/// subsystem it projected with (constraint rows and unknowns): analysed
/// once and reused while the subsystem stays — the projection of every
/// output point of a large model solves with the same pattern, whose
/// sorting and ordering cost several times the numeric factorisation. A
/// clone starts empty.
#[derive(Debug, Default)]
struct MinNormCache {
    solver: RefCell<Option<CachedMinNorm>>,
    /// The symbolic analyses made so far.
    analyses: Cell<usize>,
}

/// The solver of [`MinNormCache`] and the subsystem it was analysed for.
#[derive(Debug)]
struct CachedMinNorm {
    rows: Vec<usize>,
    cols: Vec<usize>,
    solver: MinNormSystem,
}

impl Clone for MinNormCache {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl MinNormCache {
    /// The least-norm solution of `G y = rhs`, `G` the `entries` of the
    /// subsystem of the constraint rows `rows` and the unknowns `cols`
    /// (renumbered; the same pattern for the same subsystem).
    fn solve(
        &self,
        (rows, cols): (&[usize], &[usize]),
        entries: &[(usize, usize, f64)],
        rhs: &[f64],
    ) -> Option<Vec<f64>> {
        let at = || entries.iter().map(|&(i, j, _)| (i, j)).collect();
        let values: Vec<f64> = entries.iter().map(|e| e.2).collect();
        self.analysed((rows, cols), at)?.solve(&values, rhs)
    }
}

/// The buffers of the constraint residual recorded after every step.
#[derive(Debug, Clone, Default)]
struct ResidualWork {
    /// `g(t, z)`.
    g: Vec<f64>,
    /// The largest `|g_i|` per level.
    by_level: Vec<f64>,
    /// The values of `∂g/∂z`.
    jac: Vec<f64>,
    /// The scale of each row, `Σ_j |∂g_i/∂z_j|·(atol + rtol·|z_j|)`.
    scale: Vec<f64>,
}

fn compile(
    pool: &ExprPool,
    roots: &[ExprId],
    inputs: &[ExprId],
    params: &[f64],
) -> Result<Compiled, SimError> {
    Compiled::new(pool, roots, inputs, params, false).map_err(compile_error)
}

/// The equations cannot be compiled to tapes.
pub(crate) fn compile_error(e: daec_expr::TapeError) -> SimError {
    let message = format!("cannot compile the equations: {e}");
    SimError::unsupported(Unsupported::Compile(e), message)
}

impl FormProblem {
    /// Differentiates and compiles `form` (whose expressions live in
    /// `pool`); `params` are the parameter values indexed by `ParamId`.
    pub fn new(
        pool: &mut ExprPool,
        form: &QuasiLinearForm,
        params: Vec<f64>,
    ) -> Result<Self, SimError> {
        let n = form.n();
        let z: Vec<ExprId> = (0..n as u32).map(|j| pool.var(j, 0)).collect();
        let zd: Vec<ExprId> = (0..n as u32).map(|j| pool.var(j, 1)).collect();
        let zzd: Vec<ExprId> = z.iter().chain(&zd).copied().collect();
        let diff_rows: Vec<ExprId> = form.diff.iter().map(|r| r.residual).collect();
        let con_rows: Vec<ExprId> = form.constraints.iter().map(|c| c.expr).collect();
        let (jd_pattern, jd_exprs) = sparse_jacobian(pool, &diff_rows);
        let (jg_pattern, jg_exprs) = sparse_jacobian(pool, &con_rows);
        let (mass_pattern, mass_exprs) = mass_entries(form);
        let all_rows: Vec<ExprId> = diff_rows.iter().chain(&con_rows).copied().collect();
        let pool: &ExprPool = pool;
        let p = &params;
        let both = Compiled::new(pool, &all_rows, &zzd, p, true).map_err(compile_error)?;
        let roots = NativeRoots {
            roots: [
                diff_rows.clone(),
                con_rows.clone(),
                all_rows.clone(),
                mass_exprs.clone(),
                jd_exprs.clone(),
                jg_exprs.clone(),
            ],
            reads_zdot: [true, false, true, false, true, false],
        };
        Ok(Self {
            n,
            n_d: diff_rows.len(),
            n_g: con_rows.len(),
            levels: form.constraints.iter().map(|c| c.level).collect(),
            diff: compile(pool, &diff_rows, &zzd, p)?,
            constraints: compile(pool, &con_rows, &z, p)?,
            both,
            mass: Sparse {
                code: compile(pool, &mass_exprs, &z, p)?,
                pattern: mass_pattern,
            },
            jd: Sparse {
                code: compile(pool, &jd_exprs, &zzd, p)?,
                pattern: jd_pattern,
            },
            jg: Sparse {
                code: compile(pool, &jg_exprs, &z, p)?,
                pattern: jg_pattern,
            },
            params,
            variable_index: vec![1; n],
            projector: None,
            projecting: false,
            projection: Projection::Index3,
            invariants: None,
            n_invariants: 0,
            invariant_rows: 0,
            residual_work: RefCell::default(),
            min_norm: MinNormCache::default(),
            output_work: RefCell::default(),
            roots,
            native: None,
            threads: Cell::new(1),
        })
    }

    /// The sizes of the problem's functions (see [`crate::native`]).
    pub fn native_layout(&self) -> NativeLayout {
        let len = |v: &Vec<ExprId>| v.len() as u64;
        let r = &self.roots.roots;
        NativeLayout {
            abi: NATIVE_ABI,
            n: self.n as u64,
            n_diff: self.n_d as u64,
            n_constraints: self.n_g as u64,
            n_params: self.params.len() as u64,
            n_mass: len(&r[3]),
            n_diff_jacobian: len(&r[4]),
            n_constraint_jacobian: len(&r[5]),
        }
    }

    /// The problem's residuals, mass matrix and Jacobians as the source of
    /// a native library (`pool` is the pool the problem was built from;
    /// `title` names model and form in its header).
    pub fn native_source<'a>(&'a self, pool: &'a ExprPool, title: &str) -> NativeSource<'a> {
        native_source(pool, &self.roots, self.native_layout(), title)
    }

    /// Evaluates with `code` instead of the tapes from now on, if `code`
    /// was generated for a problem of this layout (else says why not and
    /// keeps the tapes). The projector of the index-3 formulation keeps
    /// its tapes (it runs once per step).
    pub fn set_native(&mut self, code: NativeCode) -> Result<(), NativeError> {
        let want = self.native_layout();
        if code.layout != want {
            return Err(NativeError::Layout {
                library: Box::new(code.layout),
                problem: Box::new(want),
            });
        }
        self.native = Some(code);
        Ok(())
    }

    /// Whether the problem evaluates native code ([`FormProblem::set_native`]).
    pub fn is_native(&self) -> bool {
        self.native.is_some()
    }

    /// Calls native function `k` of [`crate::native::NATIVE_SYMBOLS`]
    /// after checking the lengths against its layout (the functions of
    /// `z` only get `z` as `zdot`); `false` (nothing called) without
    /// native code or with short arrays.
    fn call_native(&self, k: usize, t: f64, z: &[f64], zdot: &[f64], out: &mut [f64]) -> bool {
        let Some(code) = &self.native else {
            return false;
        };
        let n = self.n;
        if z.len() < n || zdot.len() < n || out.len() < code.layout.outputs()[k] {
            return false;
        }
        (code.functions[k])(
            t,
            z.as_ptr(),
            zdot.as_ptr(),
            self.params.as_ptr(),
            out.as_mut_ptr(),
        );
        true
    }

    /// The problem of projected Radau IIA on an index-3 formulation:
    /// `variable_index` gives Hairer's index of each unknown for the error
    /// scaling, `projector` (a problem whose constraints are the position
    /// and velocity constraints) the manifold of the projection after each
    /// accepted step, which [`FormProblem::set_projection`] switches on.
    pub fn with_index3(mut self, variable_index: Vec<u8>, projector: FormProblem) -> Self {
        if variable_index.len() == self.n {
            self.variable_index = variable_index;
        }
        self.projector = Some(Box::new(projector));
        self
    }

    /// The problem of NDSolve's "Projection" method
    /// (ndsolve-dae-tutorial, "Projection"): after every accepted step
    /// the end point is projected onto all constraints of `projector`
    /// (the model's constraints, the hidden ones and the declared
    /// invariants) with the least Euclidean change; so is the dense
    /// output. [`FormProblem::set_projection`] switches it on.
    pub fn with_full_projection(mut self, projector: FormProblem) -> Self {
        self.projector = Some(Box::new(projector));
        self.projection = Projection::Full;
        self
    }

    /// Compiles the model's declared invariants `exprs` (residuals in the
    /// unknowns of the form, no derivatives) for the statistics
    /// ([`SimStats::max_invariant_residual`]); `in_constraints` says the
    /// last `exprs.len()` constraint rows are these invariants (the
    /// overdetermined forms with invariant rows), which the residuals by
    /// level then leave out.
    pub fn with_invariants(
        mut self,
        pool: &mut ExprPool,
        exprs: &[ExprId],
        in_constraints: bool,
    ) -> Result<Self, SimError> {
        if exprs.is_empty() {
            return Ok(self);
        }
        // (the leaves exist already: `new` made them)
        let z: Vec<ExprId> = (0..self.n as u32).map(|j| pool.var(j, 0)).collect();
        self.invariants = Some(compile(pool, exprs, &z, &self.params)?);
        self.n_invariants = exprs.len();
        self.invariant_rows = if in_constraints {
            exprs.len().min(self.n_g)
        } else {
            0
        };
        Ok(self)
    }

    /// How the problem keeps its declared invariants: as its last
    /// constraint rows, by the full projection after every step, or only
    /// measured.
    pub fn invariant_enforcement(&self) -> crate::InvariantEnforcement {
        if self.invariant_rows > 0 {
            crate::InvariantEnforcement::Rows
        } else if self.projection == Projection::Full && self.projector.is_some() {
            crate::InvariantEnforcement::Projection
        } else {
            crate::InvariantEnforcement::Measured
        }
    }

    /// Number of declared invariants the problem evaluates.
    pub fn n_invariants(&self) -> usize {
        self.n_invariants
    }

    /// `max |I_k(t, z)|` over the declared invariants (0 without; NaN
    /// counts as infinite).
    pub fn invariant_residual(&self, t: f64, z: &[f64]) -> f64 {
        let Some(code) = &self.invariants else {
            return 0.0;
        };
        let mut w = self.residual_work.borrow_mut();
        let buf = &mut w.g;
        buf.resize(self.n_invariants, 0.0);
        code.eval(self.threads.get(), t, &[&z[..self.n.min(z.len())]], buf);
        max_abs(buf)
    }

    /// Sets Hairer's index of each unknown for the error scaling (ignored
    /// unless there is one entry per unknown).
    pub fn with_variable_index(mut self, variable_index: Vec<u8>) -> Self {
        if variable_index.len() == self.n {
            self.variable_index = variable_index;
        }
        self
    }

    /// Switches the projection of step end points on or off (no effect
    /// without a projector).
    pub fn set_projection(&mut self, on: bool) {
        self.projecting = on && self.projector.is_some();
    }

    /// Lets the tapes compiled in halves (those of at least
    /// [`PARALLEL_MIN_OUTPUTS`](crate::PARALLEL_MIN_OUTPUTS) outputs)
    /// evaluate their halves on two threads when `threads > 1`; the values
    /// are the same for every `threads` (see the `parallel` module). The
    /// default is 1.
    pub fn set_threads(&self, threads: usize) {
        self.threads.set(threads.max(1));
    }

    /// Whether a second thread can share the problem's work: some tape of
    /// it is compiled in halves, or it has at least
    /// [`PARALLEL_LU_MIN`](daec_solve::PARALLEL_LU_MIN) unknowns (the real
    /// and complex iteration matrices of Radau IIA's sparse path are
    /// factorised at once).
    pub fn is_parallel(&self) -> bool {
        self.n >= daec_solve::PARALLEL_LU_MIN
            || [&self.both, &self.jd.code, &self.jg.code, &self.mass.code]
                .iter()
                .any(|c| c.is_split())
    }

    /// How many times the sparse least-norm system of the projections onto
    /// the constraints (the output points' projections of a model of more
    /// than [`SPARSE_THRESHOLD`] unknowns) was analysed: once per
    /// subsystem of rows and unknowns, not once per projection.
    pub fn projection_analyses(&self) -> usize {
        self.min_norm.analyses.get()
    }

    /// Whether step end points are projected.
    pub fn is_projecting(&self) -> bool {
        self.projecting
    }

    /// Evaluates with the parameter values `params` from now on (the
    /// modes of relations change at state events): the
    /// tapes' frames are loaded again, native code reads `params` at every
    /// call; the projector of the index-3 formulation too.
    pub fn set_params(&mut self, params: &[f64]) {
        if params == self.params.as_slice() {
            return;
        }
        self.params = params.to_vec();
        for c in [
            &mut self.diff,
            &mut self.constraints,
            &mut self.both,
            &mut self.mass.code,
            &mut self.jd.code,
            &mut self.jg.code,
        ] {
            c.set_params(params);
        }
        if let Some(c) = &mut self.invariants {
            c.set_params(params);
        }
        if let Some(p) = &mut self.projector {
            p.set_params(params);
        }
    }

    /// The parameter values used.
    pub fn params(&self) -> &[f64] {
        &self.params
    }

    /// Largest `|h_i(t, z)|` per constraint level `0..=ν_c` (empty without
    /// constraints); NaN residuals count as infinite. With a projector
    /// (the index-3 formulation) the levels of the projection: positions
    /// and velocities.
    pub fn constraint_residual_by_level(&self, t: f64, z: &[f64]) -> Vec<f64> {
        let mut out = Vec::new();
        self.residual_by_level(t, z, &mut Vec::new(), &mut out);
        out
    }

    /// Takes the constraint residuals at `(t, z)` into the running maxima
    /// of `stats`: the largest `|g_i|` per level and the residual in
    /// units of the tolerance
    /// ([`SimStats::max_constraint_residual_scaled`]) with `tol =
    /// (rtol, atol)` (allocation-free after the first call: it runs after
    /// every accepted step), and the declared invariants' residual
    /// ([`FormProblem::invariant_residual`]) when there are any.
    pub fn record_constraint_residuals(
        &self,
        stats: &mut SimStats,
        t: f64,
        z: &[f64],
        tol: (f64, f64),
    ) {
        self.record_constraint_values(stats, t, z, None, tol);
    }

    /// [`FormProblem::record_constraint_residuals`] with the constraint
    /// values `g(t, z)` when the caller has them (the integrator's own
    /// evaluation at a step's end point): no evaluation of `g` then. (With
    /// a projector the constraints are those of the projection, evaluated
    /// here.)
    pub fn record_constraint_values(
        &self,
        stats: &mut SimStats,
        t: f64,
        z: &[f64],
        g: Option<&[f64]>,
        tol: (f64, f64),
    ) {
        let mut guard = self.residual_work.borrow_mut();
        let w = &mut *guard;
        let scaled = match (g, &self.projector) {
            // (straight into the maxima: this runs after every step)
            (Some(g), None) if g.len() == self.n_g => {
                stats.record_constraint_rows(g, self.model_levels());
                self.scaled_residual(t, z, g, tol, w)
            }
            (_, projector) => {
                let own = projector.as_deref().unwrap_or(self);
                own.residual_by_level(t, z, &mut w.g, &mut w.by_level);
                stats.record_constraint_residuals(&w.by_level);
                let g = std::mem::take(&mut w.g);
                let s = own.scaled_residual(t, z, &g, tol, w);
                w.g = g;
                s
            }
        };
        stats.record_scaled_constraint_residual(scaled);
        drop(guard);
        if self.invariants.is_some() {
            let r = self.invariant_residual(t, z);
            stats.max_invariant_residual = stats.max_invariant_residual.max(r);
        }
    }

    /// The constraint residual in units of the error weights: the largest
    /// over the rows of `|g_i| / Σ_j |∂g_i/∂z_j|·(atol + rtol·|z_j|)`,
    /// `tol = (rtol, atol)` — to first order the smallest `c` such that a
    /// change of every `z_j` by at most `c·(atol + rtol·|z_j|)` satisfies
    /// the row, so below 1 a point lies on the constraints within the
    /// tolerance the error test asks of the unknowns. A row violated that
    /// no unknown enters (or NaN) counts as infinite.
    fn scaled_residual(
        &self,
        t: f64,
        z: &[f64],
        g: &[f64],
        (rtol, atol): (f64, f64),
        w: &mut ResidualWork,
    ) -> f64 {
        if self.n_g == 0 || z.len() != self.n || g.len() != self.n_g {
            return 0.0;
        }
        w.jac.resize(self.jg.pattern.len(), 0.0);
        self.constraint_jacobian_values(t, z, &mut w.jac);
        w.scale.clear();
        w.scale.resize(self.n_g, 0.0);
        for (&(r, c), &v) in self.jg.pattern.iter().zip(&w.jac) {
            w.scale[r] += v.abs() * (atol + rtol * z[c].abs());
        }
        g.iter().zip(&w.scale).fold(0.0, |m: f64, (&gi, &si)| {
            let v = if gi == 0.0 {
                0.0
            } else if si > 0.0 && !gi.is_nan() {
                gi.abs() / si
            } else {
                f64::INFINITY
            };
            m.max(v)
        })
    }

    /// The residuals by level into `out`, `g` the constraint buffer.
    fn residual_by_level(&self, t: f64, z: &[f64], g: &mut Vec<f64>, out: &mut Vec<f64>) {
        if let Some(p) = &self.projector {
            return p.residual_by_level(t, z, g, out);
        }
        g.resize(self.n_g, 0.0);
        self.constraints(t, z, g);
        self.by_level(g, out);
    }

    /// The levels of the model's constraint rows (those that are not
    /// declared invariants).
    fn model_levels(&self) -> &[u32] {
        &self.levels[..self.n_g - self.invariant_rows]
    }

    /// The largest `|g_i|` per constraint level into `out` (NaN counts as
    /// infinite), over the model's constraint rows.
    fn by_level(&self, g: &[f64], out: &mut Vec<f64>) {
        let levels = self.model_levels();
        let count = levels.iter().copied().max().map_or(0, |m| m as usize + 1);
        out.clear();
        out.resize(count, 0.0);
        for (v, &l) in g.iter().zip(levels) {
            let a = if v.is_nan() { f64::INFINITY } else { v.abs() };
            out[l as usize] = out[l as usize].max(a);
        }
    }

    /// Projects `z` onto the constraints `H(t, ·) = 0` with the least
    /// (Euclidean) change: Gauss–Newton steps `Δ = −G⁺ h` with the
    /// minimum-norm solution of `G Δ = −h` (`G = ∂H/∂z`; regularised normal
    /// equations when `G` is rank deficient, e.g. for repeated
    /// constraints), `G` factorised once per point while the residual
    /// contracts (simplified Gauss–Newton, see `output_projection`; work
    /// arrays kept in the problem). Used for the dense output between
    /// steps, whose
    /// collocation polynomial (Hairer–Wanner IV.8, (8.23)) is only of order
    /// 3 and would otherwise violate the constraints by more than the
    /// tolerance. Returns the final max-norm residual.
    ///
    /// With NDSolve's projection ([`FormProblem::with_full_projection`])
    /// switched on, onto the projector's constraints (invariants
    /// included) instead.
    pub fn project_onto_constraints(&self, t: f64, z: &mut [f64]) -> f64 {
        match &self.projector {
            Some(p) if self.projecting && self.projection == Projection::Full => {
                p.project_output(t, z)
            }
            _ => self.project_output(t, z),
        }
    }

    /// The solution of the accepted `step` at `t` in its interval: its end
    /// point at the end, else the dense output projected onto the
    /// constraints ([`FormProblem::project_onto_constraints`]).
    pub(crate) fn step_value(&self, step: &daec_solve::Step<'_>, t: f64, out: &mut [f64]) {
        if t == step.t {
            out.copy_from_slice(step.z);
        } else {
            step.dense(t, out);
            self.project_onto_constraints(t, out);
        }
    }

    /// [`FormProblem::project_onto_constraints`] restricted to the
    /// constraint rows of level `level` (all rows with `None`), moving
    /// only the unknowns with `movable[k]` (all with `None`). Returns the
    /// final max-norm residual of those rows.
    /// With a `direction`, the corrections are `Δ = −A⁻¹K μ` instead (see
    /// [`Direction`]), where its blocks fit the rows and unknowns.
    fn project(
        &self,
        t: f64,
        z: &mut [f64],
        level: Option<u32>,
        movable: Option<&[bool]>,
        direction: Option<&Direction>,
    ) -> f64 {
        let rows: Vec<usize> = (0..self.n_g)
            .filter(|&i| level.is_none_or(|l| self.levels[i] == l))
            .collect();
        let cols: Vec<usize> = (0..self.n)
            .filter(|&k| movable.is_none_or(|m| m.get(k).copied().unwrap_or(false)))
            .collect();
        let (m, n) = (rows.len(), cols.len());
        // Position of each constraint row / unknown in the subsystem.
        let mut row_at = vec![usize::MAX; self.n_g];
        for (a, &i) in rows.iter().enumerate() {
            row_at[i] = a;
        }
        let mut col_at = vec![usize::MAX; self.n];
        for (a, &k) in cols.iter().enumerate() {
            col_at[k] = a;
        }
        let mut all = vec![0.0; self.n_g];
        let mut vals = vec![0.0; self.jg.pattern.len()];
        let norm = |all: &[f64]| {
            rows.iter().fold(0.0f64, |a, &i| {
                let v = all[i];
                if v.is_nan() {
                    f64::INFINITY
                } else {
                    a.max(v.abs())
                }
            })
        };
        self.constraints(t, z, &mut all);
        let scale = z.iter().fold(1.0f64, |a, v| a.max(v.abs()));
        for _ in 0..3 {
            let r = norm(&all);
            if m == 0 || n == 0 || r <= 4.0 * f64::EPSILON * scale || !r.is_finite() {
                return r;
            }
            self.constraint_jacobian_values(t, z, &mut vals);
            let rhs: Vec<f64> = rows.iter().map(|&i| -all[i]).collect();
            // G restricted to the rows and unknowns of the projection
            let entries = self
                .jg
                .pattern
                .iter()
                .zip(&vals)
                .map(|(&(i, j), &v)| (row_at[i], col_at[j], v))
                .filter(|&(a, b, _)| a != usize::MAX && b != usize::MAX);
            let along = direction
                .filter(|d| d.n == n && d.m == m)
                .and_then(|d| d.solve(entries.clone(), &rhs));
            // else the least (Euclidean) change
            let delta = along.or_else(|| {
                if n > SPARSE_THRESHOLD {
                    // large systems: the sparse augmented system
                    let entries: Vec<(usize, usize, f64)> = entries.collect();
                    self.min_norm.solve((&rows, &cols), &entries, &rhs)
                } else {
                    let mut g = Matrix::zeros(m, n);
                    for (a, b, v) in entries {
                        g.set(a, b, g.get(a, b) + v);
                    }
                    least_norm_solve(&g, &rhs)
                }
            });
            let Some(delta) = delta else { return r };
            let old: Vec<f64> = z.to_vec();
            for (&k, d) in cols.iter().zip(&delta) {
                z[k] += d;
            }
            self.constraints(t, z, &mut all);
            if norm(&all).partial_cmp(&r) != Some(std::cmp::Ordering::Less) {
                z.copy_from_slice(&old);
                self.constraints(t, z, &mut all);
                return r;
            }
        }
        norm(&all)
    }

    /// The direction of the velocity projection of projected Radau IIA
    /// (projected-rk-index3-daes, eq. (2.8): `v = ṽ + ∂k/∂λ · μ`) at
    /// `(t, z)`: the mass matrix of the differential rows that hold the
    /// derivatives of the `movable` unknowns (the velocities), and those
    /// rows' derivatives by the multipliers (index-3 unknowns). `None` when
    /// the rows do not form a square block with the velocities (then the
    /// projection is the Euclidean one).
    fn velocity_direction(&self, t: f64, z: &[f64], movable: &[bool]) -> Option<Direction> {
        let n = self.n;
        let mut col_at = vec![usize::MAX; n];
        let mut n_v = 0;
        let mut lam_at = vec![usize::MAX; n];
        let mut n_lam = 0;
        for k in 0..n {
            if movable.get(k).copied().unwrap_or(false) {
                col_at[k] = n_v;
                n_v += 1;
            } else if self.variable_index.get(k) == Some(&3) {
                lam_at[k] = n_lam;
                n_lam += 1;
            }
        }
        if n_v == 0 || n_lam == 0 {
            return None;
        }
        let mut row_at = vec![usize::MAX; self.n_d];
        let mut rows = 0;
        for &(r, c) in &self.mass.pattern {
            if col_at[c] != usize::MAX && row_at[r] == usize::MAX {
                row_at[r] = rows;
                rows += 1;
            }
        }
        if rows != n_v {
            return None;
        }
        // the entries of a pattern in the selected rows and columns,
        // renumbered
        let block = |pattern: &[(usize, usize)], values: &[f64], cols: &[usize]| {
            pattern
                .iter()
                .zip(values)
                .filter(|&(&(r, c), _)| row_at[r] != usize::MAX && cols[c] != usize::MAX)
                .map(|(&(r, c), &v)| (row_at[r], cols[c], v))
                .collect()
        };
        let mut mass = vec![0.0; self.mass.pattern.len()];
        self.mass_values(t, z, &mut mass);
        let a = block(&self.mass.pattern, &mass, &col_at);
        // ∂(E ż − k)/∂λ = −∂k/∂λ: E does not depend on the multipliers of
        // a Hessenberg system, so ż = 0 serves
        let mut jd = vec![0.0; self.jd.pattern.len()];
        self.diff_jacobian_values(t, z, &vec![0.0; n], &mut jd);
        let k = block(&self.jd.pattern, &jd, &lam_at);
        Some(Direction {
            n: n_v,
            m: n_lam,
            a,
            k,
        })
    }

    /// Evaluates `code` (compiled over `[z, ż]`) at `(t, z, ż)`.
    fn eval_zzd(&self, code: &Compiled, t: f64, z: &[f64], zdot: &[f64], out: &mut [f64]) {
        let n = self.n;
        code.eval(self.threads.get(), t, &[&z[..n.min(z.len())], zdot], out);
    }
}

impl QuasiLinearDae for FormProblem {
    fn n_vars(&self) -> usize {
        self.n
    }
    fn n_diff(&self) -> usize {
        self.n_d
    }
    fn n_constraints(&self) -> usize {
        self.n_g
    }
    fn diff_residual(&self, t: f64, z: &[f64], zdot: &[f64], out: &mut [f64]) {
        if !self.call_native(0, t, z, zdot, out) {
            self.eval_zzd(&self.diff, t, z, zdot, out);
        }
    }
    fn constraints(&self, t: f64, z: &[f64], out: &mut [f64]) {
        if !self.call_native(1, t, z, z, out) {
            self.constraints.eval(self.threads.get(), t, &[z], out);
        }
    }
    fn residual(&self, t: f64, z: &[f64], zdot: &[f64], out: &mut [f64]) {
        if !self.call_native(2, t, z, zdot, out) {
            self.eval_zzd(&self.both, t, z, zdot, out);
        }
    }
    /// The three stages in one pass over the combined tape (one dispatch
    /// per run of instructions for the three points; the same values as
    /// three calls of [`QuasiLinearDae::residual`]).
    fn residual_stages(
        &self,
        t: [f64; 3],
        z: [&[f64]; 3],
        zdot: [&[f64]; 3],
        out: [&mut [f64]; 3],
    ) {
        if self.native.is_some() {
            // machine code: three calls are as cheap as one pass
            for (s, o) in out.into_iter().enumerate() {
                self.residual(t[s], z[s], zdot[s], o);
            }
            return;
        }
        let n = self.n;
        let z = z.map(|x| &x[..n.min(x.len())]);
        self.both.eval_lanes(self.threads.get(), t, &[z, zdot], out);
    }
    fn mass_pattern(&self) -> Vec<(usize, usize)> {
        self.mass.pattern.clone()
    }
    fn mass_values(&self, t: f64, z: &[f64], out: &mut [f64]) {
        if !self.call_native(3, t, z, z, out) {
            self.mass.code.eval(self.threads.get(), t, &[z], out);
        }
    }
    fn mass_is_constant(&self) -> bool {
        self.mass.code.is_constant()
    }
    fn diff_jacobian_pattern(&self) -> Vec<(usize, usize)> {
        self.jd.pattern.clone()
    }
    fn diff_jacobian_values(&self, t: f64, z: &[f64], zdot: &[f64], out: &mut [f64]) {
        if !self.call_native(4, t, z, zdot, out) {
            self.eval_zzd(&self.jd.code, t, z, zdot, out);
        }
    }
    fn constraint_jacobian_pattern(&self) -> Vec<(usize, usize)> {
        self.jg.pattern.clone()
    }
    fn constraint_jacobian_values(&self, t: f64, z: &[f64], out: &mut [f64]) {
        if !self.call_native(5, t, z, z, out) {
            self.jg.code.eval(self.threads.get(), t, &[z], out);
        }
    }
    /// The index of each unknown that `with_variable_index` or
    /// `with_index3` set (`crate::variable_indices`: Hairer's index in the
    /// DAE as written, 2 for GGL's undifferentiated unknowns), used by
    /// `--error-control index` only. The regularized forms are
    /// strangeness-free, of d-index 1 (steinbrecher2016 §3.3; ADA §3.2,
    /// StE §3.1): their error estimate needs no scaling, and the scaling
    /// by the model's index is RADAU5's treatment of the DAE as written
    /// (the indices the test set gives RADAU5), the default for a
    /// constrained mechanical system (`crate::model_error_control`) and
    /// applied to the error test, to the Newton test only where it
    /// loosens it on a constrained mechanical system
    /// (`Options::newton_scaling`).
    fn variable_index(&self) -> Vec<u8> {
        self.variable_index.clone()
    }
    /// The level of each constraint row: the overdetermined forms' (HiC,
    /// ADA) equation selection solves a level-`ℓ` constraint for the
    /// unknowns that first appear at level `ℓ` (dummy derivatives).
    fn constraint_levels(&self) -> Vec<u32> {
        self.levels.clone()
    }
    /// Projected Radau IIA (projected-rk-index3-daes, eq. (2.8)): first
    /// the positions (index-1 unknowns) onto the position constraints,
    /// then, at the projected positions, the velocities (index-2 unknowns)
    /// onto the velocity constraints.
    ///
    /// The velocities move along the paper's direction `∂k/∂λ` — for
    /// `M v̇ = f − Gᵀλ` that is `M⁻¹Gᵀ`, the projection orthogonal in the
    /// metric of the mass matrix (see `Direction`). Radau IIA's velocity
    /// error normal to the manifold comes from the multipliers' error and
    /// lies along that direction, so this removes it and nothing else. A
    /// Euclidean projection instead turns it into an error along the
    /// manifold, which the positions integrate: on Andrews' squeezer it
    /// made β(0.03) 100× less accurate than no projection at all.
    ///
    /// The positions keep the least (Euclidean) change: Radau IIA is
    /// stiffly accurate, its end point satisfies the position constraints
    /// up to the Newton tolerance, and (2.8) has no position step; what
    /// is left of that residual is removed. Projecting both levels
    /// together would move the positions tangentially to satisfy the
    /// velocity constraint (a phase error that accumulates); the
    /// multipliers enter neither and are not moved.
    ///
    /// NDSolve's "Projection" method ([`FormProblem::with_full_projection`])
    /// instead projects onto all the projector's constraints at once with
    /// the least Euclidean change (ndsolve-dae-tutorial, "Projection").
    fn project_step(&self, t: f64, z: &mut [f64]) -> bool {
        match &self.projector {
            Some(p) if self.projecting && self.projection == Projection::Full => {
                p.project(t, z, None, None, None);
                true
            }
            Some(p) if self.projecting => {
                for (level, index) in [(0, 1), (1, 2)] {
                    let movable: Vec<bool> =
                        self.variable_index.iter().map(|&i| i == index).collect();
                    let direction = (level == 1)
                        .then(|| self.velocity_direction(t, z, &movable))
                        .flatten();
                    p.project(t, z, Some(level), Some(&movable), direction.as_ref());
                }
                true
            }
            _ => false,
        }
    }
}
