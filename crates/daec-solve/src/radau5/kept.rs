//! The storage an integration allocates, kept for the next one: a model
//! solved many times (a parameter study, a benchmark's repeated solves)
//! allocates its work arrays once.

use super::jacobian::NewtonMatrices;
use super::{Options, Radau5};
use crate::error::SolveError;
use crate::problem::QuasiLinearDae;

/// The work arrays of a [`Radau5`] integrator and the storage of its
/// iteration matrices' factorisations, without the problem: what
/// [`Radau5::integrate`] allocates at its first call and reuses at the
/// next. An integrator keeps it between its own calls; a caller that
/// binds a new integrator to the same problem for every solve (the
/// options or the borrow of the problem change) carries it over with
/// [`Radau5::into_storage`] and [`Radau5::with_storage`].
///
/// It holds no values a later integration reads before writing them:
/// an integration on reused storage gives the same results to the last
/// bit as one on new storage. A failed integration gives the storage up
/// (the next allocates it anew); a clone is empty (its first integration
/// allocates).
#[derive(Default)]
pub struct Radau5Storage {
    /// The one allocation the workspace is carved from.
    work: Vec<f64>,
    /// The iteration matrices and their factorisations (boxed: they are
    /// moved in and out at every integration).
    lin: Option<Box<NewtonMatrices>>,
}

impl Clone for Radau5Storage {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl std::fmt::Debug for Radau5Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Radau5Storage")
            .field("capacity", &self.capacity())
            .field("matrices", &self.lin.is_some())
            .finish()
    }
}

impl Radau5Storage {
    /// The number of values the work arrays have room for (0 before the
    /// first integration): the same after every further integration of
    /// the same problem, which allocates no new work arrays.
    pub fn capacity(&self) -> usize {
        self.work.capacity()
    }

    /// The zeroed work array of `len` values and the iteration matrices
    /// of order `dn` for `n_d` differential and `n_g` constraint rows, as
    /// new, in the kept storage where it fits.
    pub(super) fn take(
        &mut self,
        len: usize,
        dn: usize,
        n_d: usize,
        n_g: usize,
    ) -> (Vec<f64>, Box<NewtonMatrices>) {
        let mut work = std::mem::take(&mut self.work);
        if work.len() == len {
            // (a fill with zeros is a memset; `resize` writes value by value)
            work.fill(0.0);
        } else {
            work.clear();
            work.resize(len, 0.0);
        }
        let lin = match self.lin.take() {
            Some(mut lin) => {
                lin.reuse(dn, n_d, n_g);
                lin
            }
            None => Box::new(NewtonMatrices::new(dn, n_d, n_g)),
        };
        (work, lin)
    }

    /// Keeps `work` and `lin` for the next integration.
    pub(super) fn put(&mut self, work: Vec<f64>, lin: Box<NewtonMatrices>) {
        self.work = work;
        self.lin = Some(lin);
    }
}

impl<'p, P: QuasiLinearDae + ?Sized> Radau5<'p, P> {
    /// [`Radau5::new`] with the storage of an earlier integrator
    /// ([`Radau5::into_storage`]; of any problem: storage of other sizes
    /// is replaced at the first integration).
    pub fn with_storage(
        problem: &'p P,
        options: Options,
        storage: Radau5Storage,
    ) -> Result<Self, SolveError> {
        let mut solver = Self::new(problem, options)?;
        solver.kept = storage;
        Ok(solver)
    }

    /// The storage of this integrator's integrations, for
    /// [`Radau5::with_storage`].
    pub fn into_storage(self) -> Radau5Storage {
        self.kept
    }

    /// The storage kept for the next integration.
    pub fn storage(&self) -> &Radau5Storage {
        &self.kept
    }

    /// Replaces the options (tolerances, step limits, error control, …)
    /// for the next integrations, validated as [`Radau5::new`] does; the
    /// storage is kept. On an error the integrator keeps its options.
    pub fn set_options(&mut self, options: Options) -> Result<(), SolveError> {
        let mut solver = Self::new(self.problem, options)?;
        std::mem::swap(&mut solver.kept, &mut self.kept);
        *self = solver;
        Ok(())
    }
}
