//! The iteration matrices of the simplified Newton method: the Jacobians
//! (at the predicted midpoint of the step or at its start), the equation
//! selection of an overdetermined system, and the LU decompositions of the
//! transformed real and complex systems (Solving ODEs II, IV.8,
//! (8.15)–(8.17)).

use super::workspace::{Pattern, Workspace};
use super::{MIDPOINT_FAILURES, Radau5, Settings, StepState, all_finite};
use crate::error::SolveError;
use crate::linalg::{ComplexLu, RealLu, SparseNewtonSystem};
use crate::problem::QuasiLinearDae;
use crate::selection::{
    DenseSelectionScratch, EquationSelection, select_equations_ordered,
    select_equations_preferring_into, select_equations_sparse, selected_min_pivot,
};
use crate::step::collocation_increment;

/// The sparse path selects the rows of an overdetermined system of at
/// most this many unknowns as the dense path does — complete pivoting
/// with the dummy-derivative preference ([`crate::selection::select_equations_preferring`])
/// on dense copies of `E` and `∂g/∂z` — and larger ones by the
/// fill-limited ordered elimination ([`select_equations_ordered`]). The
/// ordered selection keeps a differential row iff it is independent of
/// the rows before it, so it drops the *last* row of each constrained
/// group whatever the size of its entries: on Fekete (IVP test set, 160
/// unknowns) it solves every sphere constraint `|p_i|² = 1` and its
/// velocity constraint for the third coordinate `p_i3`, `q_i3`, also where
/// `|p_i3|` is small, a chart whose errors grow into the rotation of the
/// whole configuration, the one error at `t_end` that no damping removes
/// (positions 1.3e-4 off at rtol = atol = 1e-4 with every distance
/// `|p_i − p_j|` 1.7e-9 off). Pivoting on the largest entries, the same
/// steps reach 1.1–2.3 more correct digits at rtol = atol = 1e-5 … 1e-9
/// (benches/testset: 6.71 digits at 1e-6 in 121 steps where the ordered
/// selection reached 4.41 in 133). The elimination on the dense copies
/// costs `O((n_d + n_g)·n²)` per selection, made at the start and after
/// a Newton failure: on the two-bit adding unit (350 unknowns, the same
/// selection either way) it raised the integration time at 1e-4 from
/// 1.2 s to 1.5–2.0 s, hence the bound.
pub(super) const PREFERRED_SELECTION_MAX: usize = 256;

/// The factorised iteration matrices and the equation selection they were
/// built for.
pub(super) struct NewtonMatrices {
    /// `γ̂/h·M − J` (dense path).
    pub(super) lu1: RealLu,
    /// `(α̂ + iβ̂)/h·M − J` (dense path).
    pub(super) lu2: ComplexLu,
    /// The sparse system (sparse path; built at the first Jacobian and
    /// rebuilt when the equation selection changes).
    pub(super) sys: Option<(EquationSelection, SparseNewtonSystem)>,
    /// Position of each differential row in the selected system (sparse
    /// error estimate), `usize::MAX` if not selected.
    pub(super) diff_at: Vec<usize>,
    /// The rows of the square system the Newton iteration solves.
    pub(super) sel: EquationSelection,
    /// The storage a dense selection is made in before it is compared
    /// with `sel` and swapped with it (no allocation per selection).
    sel_next: EquationSelection,
    /// The smallest pivot of the selected rows when they were selected
    /// (dense path, [`selected_min_pivot`]).
    sel_pivot: f64,
    /// The step size at which `sel` was last selected (dense path).
    sel_h: f64,
    /// Whether the selection before `sel` was the same rows: only a
    /// selection two Jacobians agreed on is kept (dense path).
    sel_confirmed: bool,
    /// Whether `sel` was kept at the current Jacobians rather than made
    /// from them (a Newton failure then selects anew from them at once).
    pub(super) sel_kept: bool,
    /// Scratch factorisation of [`selected_min_pivot`].
    pivot_work: RealLu,
    /// The storage of the dense selection, kept between selections.
    sel_scratch: DenseSelectionScratch,
    /// Position of each differential row in the reduced dense system,
    /// `usize::MAX` if not selected (dense path, set by `reduce_dense`).
    diff_pos: Vec<usize>,
}

impl NewtonMatrices {
    /// Unfactorised matrices of order `dn` (`0` on the sparse path) for
    /// `n_d` differential and `n_g` constraint rows, every row selected.
    pub(super) fn new(dn: usize, n_d: usize, n_g: usize) -> Self {
        Self {
            lu1: RealLu::new(dn),
            lu2: ComplexLu::new(dn),
            sys: None,
            diff_at: vec![usize::MAX; n_d],
            sel: EquationSelection::all(n_d, n_g),
            sel_next: EquationSelection::all(n_d, n_g),
            sel_pivot: 0.0,
            sel_h: 0.0,
            sel_confirmed: false,
            sel_kept: false,
            pivot_work: RealLu::new(dn),
            sel_scratch: DenseSelectionScratch::default(),
            diff_pos: vec![usize::MAX; n_d],
        }
    }

    /// Puts these matrices in the state [`new`](Self::new) gives them, for the
    /// next integration: the storage of the dense factorisations, the
    /// selection and its scratch kept when the sizes are the same (the
    /// factorisations are overwritten before they are used), a sparse
    /// system dropped (rebuilt at the first Jacobian, as after `new`).
    pub(super) fn reuse(&mut self, dn: usize, n_d: usize, n_g: usize) {
        let same = self.lu1.matrix_mut().len() == dn * dn
            && self.lu2.matrix_mut().0.len() == dn * dn
            && self.pivot_work.matrix_mut().len() == dn * dn
            && self.diff_at.len() == n_d
            && self.diff_pos.len() == n_d;
        if !same {
            *self = Self::new(dn, n_d, n_g);
            return;
        }
        self.sys = None;
        self.diff_at.fill(usize::MAX);
        self.diff_pos.fill(usize::MAX);
        self.sel.diff_rows.clear();
        self.sel.diff_rows.extend(0..n_d);
        self.sel.constraint_rows.clear();
        self.sel.constraint_rows.extend(0..n_g);
        self.sel_pivot = 0.0;
        self.sel_h = 0.0;
        self.sel_confirmed = false;
        self.sel_kept = false;
    }

    /// Solves with the real iteration matrix: the sparse system when there
    /// is one, the dense LU otherwise.
    pub(super) fn solve_real(&mut self, b: &mut [f64]) {
        match self.sys.as_mut() {
            Some((_, system)) => system.solve_real(b),
            None => self.lu1.solve(b),
        }
    }

    /// [`solve_real`](Self::solve_real) of `dw[0]` and the solve with the
    /// complex iteration matrix of `dw[1] + i·dw[2]` in place: a large
    /// sparse system solves the two on two threads if `threads > 1`
    /// ([`SparseNewtonSystem::solve_both`]).
    pub(super) fn solve_stages(&mut self, threads: usize, dw: &mut [&mut [f64]; 3]) {
        let [b, re, im] = dw;
        match self.sys.as_mut() {
            Some((_, system)) => system.solve_both(threads, b, re, im),
            None => {
                self.lu1.solve(b);
                self.lu2.solve(re, im);
            }
        }
    }
}

/// Whether the values of the three Jacobians are finite.
fn finite(m: &Pattern, jd: &Pattern, jg: &Pattern) -> bool {
    all_finite(&m.values) && all_finite(&jd.values) && all_finite(&jg.values)
}

impl<P: QuasiLinearDae + ?Sized> Radau5<'_, P> {
    /// Evaluates the Jacobians, selects the equations of an overdetermined
    /// system and assembles the reduced `M` and `J` (dense) or loads the
    /// sparse system; the LU decomposition is due next (`Ok(true)`).
    /// `Ok(false)`: the equations lost rank at the point the Jacobians
    /// were evaluated at, and the step is retried with half the step size
    /// ([`Self::retry_smaller`]).
    pub(super) fn evaluate_jacobians(
        &mut self,
        set: &Settings,
        st: &mut StepState,
        ws: &mut Workspace<'_>,
        lin: &mut NewtonMatrices,
    ) -> Result<bool, SolveError> {
        self.jacobian_values(set, st, ws)?;
        self.scatter_jacobians(set, ws);
        // A selection is kept while steps succeed: selecting is an
        // elimination with complete pivoting over all rows (sparse: a
        // large share of the cost of a Jacobian evaluation of a big
        // HiC/ADA system; dense: the largest single cost of a step of a
        // small mechanical system), and a selection stays valid while the
        // Newton matrix it gives is regular. It is recomputed after a
        // singular factorisation or a Newton failure (an error-test
        // rejection is about the step size, not the selection). The
        // dense path also re-selects while the selection is not
        // confirmed or has expired ([`Self::selection_expired`]).
        if set.overdetermined
            && (st.reselect || (!self.sparse && self.selection_expired(ws, lin, st.h)))
        {
            st.reselect = false;
            if let Err(e) = self.select_equations(set, st, ws, lin) {
                return self.retry_smaller(st, e);
            }
        } else {
            lin.sel_kept = set.overdetermined && !self.sparse;
        }
        if self.sparse {
            self.load_sparse(lin);
        }
        // Reduced M and J (J = −∂(Eż−k)/∂z on differential rows, ∂g/∂z on constraint rows).
        if !self.sparse && set.overdetermined {
            reduce_dense(self.n, ws, &lin.sel, &self.jd, &mut lin.diff_pos);
        }
        st.caljac = true;
        st.need_jac = false;
        st.need_lu = true;
        Ok(true)
    }

    /// After a Newton failure on a selection kept at the current
    /// Jacobians (dense path): selects the equations anew from those
    /// Jacobians, without evaluating them again, and assembles the reduced
    /// `M` and `J`; the LU decomposition is due next (`Ok(true)`).
    /// `Ok(false)` as in [`Self::evaluate_jacobians`].
    pub(super) fn reselect_at_jacobians(
        &mut self,
        set: &Settings,
        st: &mut StepState,
        ws: &mut Workspace<'_>,
        lin: &mut NewtonMatrices,
    ) -> Result<bool, SolveError> {
        st.reselect = false;
        if let Err(e) = self.select_equations(set, st, ws, lin) {
            return self.retry_smaller(st, e);
        }
        reduce_dense(self.n, ws, &lin.sel, &self.jd, &mut lin.diff_pos);
        st.need_lu = true;
        Ok(true)
    }

    /// After the equations lost rank (`e`) at the Jacobians' point — the
    /// midpoint of the attempted step, at the values the last step's
    /// collocation polynomial predicts there — halves the step and asks
    /// for the Jacobians again, as a singular iteration matrix does
    /// (RADAU5 halves the step up to five times in a row, Hairer–Wanner,
    /// Solving ODEs II, IV.8): the midpoint moves with the step, so a rank
    /// loss of the prediction ends the run only if it persists.
    fn retry_smaller(&mut self, st: &mut StepState, e: SolveError) -> Result<bool, SolveError> {
        st.nsing += 1;
        if st.nsing >= 5 || !st.jacobian_at_midpoint {
            return Err(e);
        }
        halve_step(st);
        st.need_jac = true;
        Ok(false)
    }

    /// The values of `E`, `∂(Eż−k)/∂z` and `∂g/∂z` at the midpoint
    /// `t + h/2` of the step, at the value and derivative the last step's
    /// collocation polynomial predicts there (its extrapolation, as the
    /// Newton starting values). The simplified Newton iteration (Solving
    /// ODEs II, IV.8) converges at a rate θ ≈ ‖(γ/h·M − J)⁻¹(J(stage) −
    /// J)‖: its matrix may be any approximation of the stages' Jacobians,
    /// and the one at the step start is up to a whole step away from the
    /// last stage (c₃ = 1), the one at the midpoint at most half a step
    /// from every stage. Where the Jacobian turns with the solution —
    /// constraint rows ∂g/∂z of a fast rotating mechanism, which carry no
    /// 1/h — θ ∝ h·(distance), so the step size Newton tolerates about
    /// doubles (Andrews' squeezer at 1e-6: 33 % fewer Newton iterations;
    /// Akzo Nobel 17 %). The converged collocation solution does not
    /// depend on the choice; the error estimate's filter (γ₀/h·M − J)⁻¹
    /// sees it as it sees a reused Jacobian. At the first step, if the
    /// prediction gives a non-finite Jacobian, or from the step's
    /// [`MIDPOINT_FAILURES`]-th Newton failure on, the start.
    fn jacobian_values(
        &mut self,
        set: &Settings,
        st: &mut StepState,
        ws: &mut Workspace<'_>,
    ) -> Result<(), SolveError> {
        let n = self.n;
        self.stats.jacobian_evals += 1;
        let mut done = false;
        if self.opts.jacobian_at_midpoint && !st.first && st.newton_failures < MIDPOINT_FAILURES {
            let tm = st.t + 0.5 * st.h;
            let s = 0.5 * st.h / st.hold;
            for i in 0..n {
                let (dy, dy_ds) = collocation_increment(ws.cont, n, i, s);
                ws.ystage[i] = ws.y[i] + dy;
                ws.f1[i] = dy_ds / st.hold;
            }
            if set.mass_constant {
                self.mass.values.copy_from_slice(ws.mass_cur);
            } else {
                self.problem
                    .mass_values(tm, ws.ystage, &mut self.mass.values);
            }
            self.problem
                .diff_jacobian_values(tm, ws.ystage, ws.f1, &mut self.jd.values);
            self.problem
                .constraint_jacobian_values(tm, ws.ystage, &mut self.jg.values);
            done = finite(&self.mass, &self.jd, &self.jg);
        }
        st.jacobian_at_midpoint = done;
        if !done {
            self.mass.values.copy_from_slice(ws.mass_cur);
            self.problem
                .diff_jacobian_values(st.t, ws.y, ws.ydot, &mut self.jd.values);
            self.problem
                .constraint_jacobian_values(st.t, ws.y, &mut self.jg.values);
            if !finite(&self.mass, &self.jd, &self.jg) {
                return Err(SolveError::NewtonDivergence {
                    t: st.t,
                    h: st.h,
                    failures: st.newton_failures + 1,
                });
            }
        }
        Ok(())
    }

    /// Scatters the Jacobians' values into the dense matrices: the full
    /// ones of an overdetermined system, the reduced ones of a square
    /// system (nothing on the sparse path).
    fn scatter_jacobians(&self, set: &Settings, ws: &mut Workspace<'_>) {
        let (n, n_d) = (self.n, self.n_d);
        // (a constant E is scattered once)
        let scatter_mass = !(set.mass_constant && self.stats.jacobian_evals > 1);
        if !self.sparse && set.overdetermined {
            if scatter_mass {
                self.mass.scatter(ws.e_full, n);
            }
            // (∂(Eż−k)/∂z goes to the selected rows only: reduce_dense)
            self.jg.scatter(ws.g_full, n);
        } else if !self.sparse {
            // Square: the selection is the identity, so the reduced
            // M = [E; 0] and J = [−∂(Eż−k)/∂z; ∂g/∂z] (below) are
            // scattered into directly (the constraint rows of M
            // stay zero from the allocation).
            if scatter_mass {
                self.mass.scatter(&mut ws.mred[..n_d * n], n);
            }
            ws.jred.fill(0.0);
            for (&(r, c), &v) in self.jd.entries.iter().zip(&self.jd.values) {
                ws.jred[r * n + c] -= v;
            }
            for (&(r, c), &v) in self.jg.entries.iter().zip(&self.jg.values) {
                ws.jred[(n_d + r) * n + c] += v;
            }
        }
    }

    /// Whether the dense selection must be made anew at a Jacobian of
    /// step size `h`. A selection is kept only once two consecutive
    /// selections agreed on it, and only while `h` stays within
    /// [`Options::keep_selection_step_ratio`](super::Options::keep_selection_step_ratio)
    /// of the step it was last selected at: the rows the complete
    /// pivoting prefers change with the configuration, and the error
    /// estimate follows the selected rows, so a selection kept from a
    /// configuration the step has left behind lets the error estimate
    /// miss the rows that now determine the step. With a positive
    /// [`Options::keep_selection_pivot`](super::Options::keep_selection_pivot)
    /// it also expires once the smallest pivot of its rows fell below
    /// that fraction of its value at the selection.
    fn selection_expired(&self, ws: &Workspace<'_>, lin: &mut NewtonMatrices, h: f64) -> bool {
        let (r, q) = (self.opts.keep_selection_step_ratio, h / lin.sel_h);
        if !(lin.sel_confirmed && q <= r && q * r >= 1.0) {
            return true;
        }
        if self.opts.keep_selection_pivot == 0.0 {
            return false;
        }
        let p = selected_min_pivot(self.n, ws.e_full, ws.g_full, &lin.sel, &mut lin.pivot_work);
        lin.sel_pivot == 0.0 || p <= self.opts.keep_selection_pivot * lin.sel_pivot
    }

    /// Selects the rows of an overdetermined system
    /// ([`crate::selection`]): dense, and sparse up to
    /// [`PREFERRED_SELECTION_MAX`] unknowns, complete pivoting with the
    /// dummy-derivative preference; larger sparse systems the fill-limited
    /// ordered selection and complete pivoting if it finds the system rank
    /// deficient.
    fn select_equations(
        &mut self,
        set: &Settings,
        st: &StepState,
        ws: &Workspace<'_>,
        lin: &mut NewtonMatrices,
    ) -> Result<(), SolveError> {
        let (n, n_d, n_g) = (self.n, self.n_d, self.n_g);
        self.stats.selections += 1;
        let prefer = set.prefer.as_ref();
        // (the dense elimination selects into `sel_next`, kept storage)
        let next = &mut lin.sel_next;
        let selected = if self.sparse && n <= PREFERRED_SELECTION_MAX {
            let (mut e, mut g) = (vec![0.0; n_d * n], vec![0.0; n_g * n]);
            self.mass.scatter(&mut e, n);
            self.jg.scatter(&mut g, n);
            let scratch = &mut lin.sel_scratch;
            select_equations_preferring_into(scratch, n, &e, n_d, &g, n_g, prefer, next)
        } else if self.sparse {
            // the fill-limited ordered selection; complete
            // pivoting if it finds the system rank deficient
            let (me, mv) = (&self.mass.entries, &self.mass.values);
            let (ge, gv) = (&self.jg.entries, &self.jg.values);
            select_equations_ordered(n, me, mv, n_d, ge, gv, n_g)
                .or_else(|_| select_equations_sparse(n, me, mv, n_d, ge, gv, n_g))
                .map(|s| *next = s)
        } else {
            let (e, g) = (&ws.e_full[..], &ws.g_full[..]);
            select_equations_preferring_into(&mut lin.sel_scratch, n, e, n_d, g, n_g, prefer, next)
        };
        match selected {
            Ok(()) => {
                lin.sel_confirmed = lin.sel_next == lin.sel && self.stats.jacobian_evals > 1;
                lin.sel_h = st.h;
                lin.sel_kept = false;
                if lin.sel_next != lin.sel && self.stats.jacobian_evals > 1 {
                    self.stats.selection_changes += 1;
                }
                std::mem::swap(&mut lin.sel, &mut lin.sel_next);
                if !self.sparse && self.opts.keep_selection_pivot > 0.0 {
                    let (e, g) = (&ws.e_full[..], &ws.g_full[..]);
                    lin.sel_pivot = selected_min_pivot(n, e, g, &lin.sel, &mut lin.pivot_work);
                }
                Ok(())
            }
            Err(rank) => Err(SolveError::RankDeficient { t: st.t, rank, n }),
        }
    }

    /// Loads the Jacobians' values into the sparse system, built anew
    /// (pattern and symbolic analysis) once per selection.
    fn load_sparse(&self, lin: &mut NewtonMatrices) {
        let (n, n_d, n_g) = (self.n, self.n_d, self.n_g);
        // Pattern and symbolic analysis once per selection.
        if lin.sys.as_ref().is_none_or(|(s, _)| *s != lin.sel) {
            let system = SparseNewtonSystem::new(
                n,
                &lin.sel.diff_rows,
                &lin.sel.constraint_rows,
                n_d,
                n_g,
                &self.mass.entries,
                &self.jd.entries,
                &self.jg.entries,
            );
            lin.diff_at.iter_mut().for_each(|x| *x = usize::MAX);
            for (k, &r) in lin.sel.diff_rows.iter().enumerate() {
                lin.diff_at[r] = k;
            }
            lin.sys = Some((lin.sel.clone(), system));
        }
        if let Some((_, system)) = lin.sys.as_mut() {
            system.load(&self.mass.values, &self.jd.values, &self.jg.values);
        }
    }

    /// Decomposes `γ̂/h·M − J` and `(α̂ + iβ̂)/h·M − J` (Solving ODEs II,
    /// IV.8, (8.17)). `Ok(false)` if a matrix is singular: the step is then
    /// retried with half the step size (at the fifth singular matrix in a
    /// row the integration stops).
    pub(super) fn factorize(
        &mut self,
        set: &Settings,
        st: &mut StepState,
        ws: &Workspace<'_>,
        lin: &mut NewtonMatrices,
    ) -> Result<bool, SolveError> {
        let n = self.n;
        let fac1 = self.tr.gamma / st.h;
        let alphn = self.tr.alpha / st.h;
        let betan = self.tr.beta / st.h;
        self.stats.lu_decompositions += 1;
        let result = match lin.sys.as_mut() {
            Some((_, system)) if self.sparse => {
                self.stats.sparse_lu_decompositions += 1;
                system.factor(fac1, alphn, betan, self.opts.threads)
            }
            _ => {
                // (assembled in the factorisations' own storage)
                let e1 = &mut lin.lu1.matrix_mut()[..n * n];
                let (e2r, e2i) = lin.lu2.matrix_mut();
                let (e2r, e2i) = (&mut e2r[..n * n], &mut e2i[..n * n]);
                let (mred, jred) = (&ws.mred[..n * n], &ws.jred[..n * n]);
                for k in 0..n * n {
                    e1[k] = fac1 * mred[k] - jred[k];
                    e2r[k] = alphn * mred[k] - jred[k];
                    e2i[k] = betan * mred[k];
                }
                let r1 = lin.lu1.factor_in_place();
                let r2 = if r1.is_ok() {
                    lin.lu2.factor_in_place()
                } else {
                    Ok(())
                };
                r1.and(r2)
            }
        };
        if let Err(crate::linalg::Singular(var)) = result {
            st.nsing += 1;
            if st.nsing >= 5 {
                return Err(SolveError::SingularMatrix {
                    t: st.t,
                    h: st.h,
                    variable: var,
                });
            }
            halve_step(st);
            // (a new selection needs the Jacobian at hand again)
            st.need_jac = !st.caljac || (self.sparse && set.overdetermined);
            return Ok(false);
        }
        st.need_lu = false;
        Ok(true)
    }
}

/// Halves the step after the equations or the iteration matrix were
/// found singular and asks for a new selection and LU decomposition
/// (RADAU5's answer to a singular matrix; the caller says whether the
/// Jacobians are needed again).
fn halve_step(st: &mut StepState) {
    st.h *= 0.5;
    st.reject = true;
    st.reselect = true;
    st.last = false;
    st.need_lu = true;
}

/// The reduced dense `M` and `J` of an overdetermined system: the
/// selected rows of the full `E` and `∂g/∂z`, `J = −∂(Eż−k)/∂z` on
/// differential rows (scattered from the pattern `jd` into the selected
/// rows only, summed in the pattern's order: the values a scatter into a
/// full matrix and its negated rows give, but for a zero without an entry,
/// `+0` for `−0`, which `γ/h·M − J` does not tell apart), `∂g/∂z` on
/// constraint rows. `diff_pos` (`n_d` entries) receives the position of
/// each differential row.
fn reduce_dense(
    n: usize,
    ws: &mut Workspace<'_>,
    sel: &EquationSelection,
    jd: &Pattern,
    diff_pos: &mut [usize],
) {
    let nd = sel.diff_rows.len();
    diff_pos.fill(usize::MAX);
    for (k, &r) in sel.diff_rows.iter().enumerate() {
        diff_pos[r] = k;
        ws.mred[k * n..(k + 1) * n].copy_from_slice(&ws.e_full[r * n..(r + 1) * n]);
        ws.jred[k * n..(k + 1) * n].fill(0.0);
    }
    for (&(r, c), &v) in jd.entries.iter().zip(&jd.values) {
        let k = diff_pos[r];
        if k != usize::MAX {
            ws.jred[k * n + c] -= v;
        }
    }
    for (k, &r) in sel.constraint_rows.iter().enumerate() {
        for c in 0..n {
            ws.mred[(nd + k) * n + c] = 0.0;
            ws.jred[(nd + k) * n + c] = ws.g_full[r * n + c];
        }
    }
}
