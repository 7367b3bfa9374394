//! The work arrays of an integration: every buffer carved from one
//! allocation (a solve of a small system is short enough for ~40
//! allocations to show), and the sparse patterns of the Jacobians.

use crate::error::SolveError;

/// Sparse pattern scattered into dense row-major storage.
#[derive(Debug, Clone)]
pub(super) struct Pattern {
    pub(super) entries: Vec<(usize, usize)>,
    pub(super) values: Vec<f64>,
}

impl Pattern {
    pub(super) fn new(
        entries: Vec<(usize, usize)>,
        rows: usize,
        cols: usize,
        what: &str,
    ) -> Result<Self, SolveError> {
        if let Some(&(r, c)) = entries.iter().find(|&&(r, c)| r >= rows || c >= cols) {
            return Err(SolveError::InvalidProblem(format!(
                "{what} pattern entry ({r}, {c}) outside {rows} × {cols}"
            )));
        }
        let values = vec![0.0; entries.len()];
        Ok(Self { entries, values })
    }

    pub(super) fn scatter(&self, dense: &mut [f64], cols: usize) {
        self.scatter_values(&self.values, dense, cols);
    }

    /// Scatters `values` (in the order of the pattern) into `dense`.
    pub(super) fn scatter_values(&self, values: &[f64], dense: &mut [f64], cols: usize) {
        dense.iter_mut().for_each(|x| *x = 0.0);
        for (&(r, c), &v) in self.entries.iter().zip(values) {
            dense[r * cols + c] += v;
        }
    }
}

/// Consecutive slices of one zeroed allocation.
struct Arena<'a>(&'a mut [f64]);

impl<'a> Arena<'a> {
    /// The next `len` values (the storage is sized for every take).
    pub(super) fn take(&mut self, len: usize) -> &'a mut [f64] {
        let (a, b) = std::mem::take(&mut self.0).split_at_mut(len);
        self.0 = b;
        a
    }
}

/// The sizes that decide the layout of a [`Workspace`].
pub(super) struct Layout {
    /// Unknowns.
    pub(super) n: usize,
    /// Differential rows.
    pub(super) n_d: usize,
    /// Constraint rows.
    pub(super) n_g: usize,
    /// Entries of the mass matrix's pattern.
    pub(super) n_mass: usize,
    /// Whether the iteration matrices are sparse (no dense matrices then).
    pub(super) sparse: bool,
    /// Whether `n_d + n_g > n` (only then are the full dense Jacobians
    /// kept beside the reduced ones).
    pub(super) overdetermined: bool,
}

impl Layout {
    /// Order of the dense matrices (`0` on the sparse path, where the
    /// pattern values and `SparseNewtonSystem` take their place).
    fn dn(&self) -> usize {
        if self.sparse { 0 } else { self.n }
    }

    /// Order of the full dense `E`, `∂(Eż−k)/∂z` and `∂g/∂z`: only an
    /// overdetermined dense system selects rows from them (a square one is
    /// scattered straight into the reduced matrices).
    fn dfull(&self) -> usize {
        if self.overdetermined { self.dn() } else { 0 }
    }

    /// Length of the one allocation a [`Workspace`] is carved from.
    pub(super) fn storage_len(&self) -> usize {
        let (n, n_d, n_g) = (self.n, self.n_d, self.n_g);
        let (dn, dfull, m) = (self.dn(), self.dfull(), n_d + n_g);
        5 * m + n_g + n_d * dn + (n_d + n_g) * dfull + 2 * dn * dn + self.n_mass + 28 * n
    }
}

/// The work arrays of one integration, slices of one zeroed allocation.
pub(super) struct Workspace<'a> {
    /// The solution at the step start.
    pub(super) y: &'a mut [f64],
    /// Its derivative (the last stage derivative of the last step; `ż₀`
    /// at the start).
    pub(super) ydot: &'a mut [f64],
    /// `[E ż − k; g]` scratch.
    pub(super) full: &'a mut [f64],
    /// The stage points.
    pub(super) ys: [&'a mut [f64]; 3],
    /// The stage points' full residuals.
    pub(super) full3: [&'a mut [f64]; 3],
    /// Constraint scratch (`g` at the end point in the projection).
    pub(super) gg: &'a mut [f64],
    /// `[−k(t, y); g(t, y)]` (the residual with `ż = 0`) at the step start.
    pub(super) y0: &'a mut [f64],
    /// Full dense `E` (overdetermined dense systems).
    pub(super) e_full: &'a mut [f64],
    /// `E(t_n, z_n)` row-major for the error estimate (dense path).
    pub(super) e_cur: &'a mut [f64],
    /// Full dense `∂g/∂z` (overdetermined dense systems).
    pub(super) g_full: &'a mut [f64],
    /// The reduced `M` (dense path).
    pub(super) mred: &'a mut [f64],
    /// The reduced `J` (dense path).
    pub(super) jred: &'a mut [f64],
    /// `E(t_n, z_n)` as pattern values: `E` depends on `(t, z)` only, so
    /// the values at the step start serve the error estimate and every
    /// Jacobian evaluated there.
    pub(super) mass_cur: &'a mut [f64],
    /// The stage increments `Z_i`.
    pub(super) z: [&'a mut [f64]; 3],
    /// The stage derivatives `Ż_i`.
    pub(super) zd: [&'a mut [f64]; 3],
    /// The reduced stage residuals (overdetermined systems).
    pub(super) res: [&'a mut [f64]; 3],
    /// The transformed Newton corrections `ΔW`.
    pub(super) dw: [&'a mut [f64]; 3],
    /// One point's scratch.
    pub(super) ystage: &'a mut [f64],
    /// Zeros (`ż = 0`).
    pub(super) zero: &'a [f64],
    /// The dense output's coefficients (as [`crate::step::Step`]).
    pub(super) cont: &'a mut [f64],
    /// Reciprocals of the error weights (the norms multiply).
    pub(super) scal_inv: &'a mut [f64],
    /// The error weights `atol_i + rtol·|y_i|` at the step start.
    pub(super) base_scal: &'a mut [f64],
    /// Scratch (`F1` of the error estimate, the predicted derivative).
    pub(super) f1: &'a mut [f64],
    /// Scratch (`F2` of the error estimate).
    pub(super) f2: &'a mut [f64],
    /// The error estimate and the projection's corrections.
    pub(super) errv: &'a mut [f64],
}

impl<'a> Workspace<'a> {
    /// Carves the arrays from `storage` (zeroed, of
    /// [`Layout::storage_len`]), with the initial value `y` and its
    /// derivative `ydot` (zero if not given).
    pub(super) fn new(storage: &'a mut [f64], l: &Layout, y: &[f64], ydot: Option<&[f64]>) -> Self {
        let (n, n_d, n_g) = (l.n, l.n_d, l.n_g);
        let (dn, dfull, m) = (l.dn(), l.dfull(), n_d + n_g);
        let mut arena = Arena(storage);
        let (y, ydot) = {
            let (ys, ds) = (arena.take(n), arena.take(n));
            ys.copy_from_slice(y);
            if let Some(d) = ydot {
                ds.copy_from_slice(d);
            }
            (ys, ds)
        };
        let full = arena.take(m);
        let ys = [arena.take(n), arena.take(n), arena.take(n)];
        let full3 = [arena.take(m), arena.take(m), arena.take(m)];
        let gg = arena.take(n_g);
        let y0 = arena.take(m);
        let e_full = arena.take(n_d * dfull);
        let e_cur = arena.take(n_d * dn);
        let g_full = arena.take(n_g * dfull);
        let mred = arena.take(dn * dn);
        let jred = arena.take(dn * dn);
        let mass_cur = arena.take(l.n_mass);
        let z = [arena.take(n), arena.take(n), arena.take(n)];
        let zd = [arena.take(n), arena.take(n), arena.take(n)];
        let res = [arena.take(n), arena.take(n), arena.take(n)];
        let dw = [arena.take(n), arena.take(n), arena.take(n)];
        let ystage = arena.take(n);
        let zero: &[f64] = arena.take(n);
        let cont = arena.take(4 * n);
        let scal_inv = arena.take(n);
        let base_scal = arena.take(n);
        let f1 = arena.take(n);
        let f2 = arena.take(n);
        let errv = arena.take(n);
        Self {
            y,
            ydot,
            full,
            ys,
            full3,
            gg,
            y0,
            e_full,
            e_cur,
            g_full,
            mred,
            jred,
            mass_cur,
            z,
            zd,
            res,
            dw,
            ystage,
            zero,
            cont,
            scal_inv,
            base_scal,
            f1,
            f2,
            errv,
        }
    }
}
