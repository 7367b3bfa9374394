//! Hairer's Fortran RADAU5 (`radau_decsol.f`), loaded at run time from a
//! shared library and called through its Fortran interface.
//!
//! The library is built outside cargo (`benches/testset/radau5.sh`:
//! `gfortran -O2 -shared -fPIC`), so the workspace builds without a
//! Fortran compiler; its path comes from the caller. RADAU5 solves
//! `M y' = f(t, y)` with a full mass matrix and a full analytic Jacobian
//! (`MLJAC = MLMAS = N`, `IJAC = IMAS = 1`); the problem is a
//! [`System`], whose functions the callbacks `FCN`, `JAC` and `MAS` call.
//!
//! This file and `crates/daec-cli/src/native.rs` are the only ones of the
//! repository with `unsafe` code (ARCHITECTURE.md, invariant 7; checked
//! by `tests/invariants.rs`): loading the library runs its initialisers,
//! calling `radau5_` trusts its signature, and the callbacks receive raw
//! pointers from Fortran. Each `unsafe` block says why it holds.
#![allow(unsafe_code)]

use std::path::Path;
use std::time::Instant;

/// A problem `M y' = f(t, y)` for RADAU5, its unknowns ordered by
/// Hairer's index (index-1 unknowns first, then index 2, then index 3).
pub trait System {
    /// Number of unknowns `N`.
    fn n(&self) -> usize;
    /// `f(t, y)` into `f`; `false` when a value is not finite (RADAU5
    /// then rejects the point: `IPAR(1) < 0`).
    fn rhs(&self, t: f64, y: &[f64], f: &mut [f64]) -> bool;
    /// `∂f/∂y` at `(t, y)` into `dfy`, column-major `N × N` (zero it first).
    fn jacobian(&self, t: f64, y: &[f64], dfy: &mut [f64]);
    /// The constant mass matrix `M`, column-major `N × N` (zero it first).
    fn mass(&self, am: &mut [f64]);
}

/// RADAU5's counters of one integration (`IWORK(14..20)`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// `NFCN`: evaluations of `f`.
    pub fcn: usize,
    /// `NJAC`: Jacobian evaluations.
    pub jac: usize,
    /// `NSTEP`: computed steps (also those a Newton failure repeats).
    pub steps: usize,
    /// `NACCPT`: accepted steps.
    pub accepted: usize,
    /// `NREJCT`: steps rejected by the error test (not in the first step).
    pub rejected: usize,
    /// `NDEC`: LU decompositions (of both matrices, counted once).
    pub lu: usize,
}

impl std::ops::AddAssign for Counters {
    fn add_assign(&mut self, o: Counters) {
        self.fcn += o.fcn;
        self.jac += o.jac;
        self.steps += o.steps;
        self.accepted += o.accepted;
        self.rejected += o.rejected;
        self.lu += o.lu;
    }
}

/// `FCN(N, X, Y, F, RPAR, IPAR)`.
type Fcn = extern "C" fn(*const i32, *const f64, *const f64, *mut f64, *mut f64, *mut i32);
/// `JAC(N, X, Y, DFY, LDFY, RPAR, IPAR)`.
type Jac =
    extern "C" fn(*const i32, *const f64, *const f64, *mut f64, *const i32, *mut f64, *mut i32);
/// `MAS(N, AM, LMAS, RPAR, IPAR)`.
type Mas = extern "C" fn(*const i32, *mut f64, *const i32, *mut f64, *mut i32);
/// `SOLOUT(NR, XOLD, X, Y, CONT, WERR, LRC, N, RPAR, IPAR, IRTRN)` of
/// Assimulo's copy (called after every accepted step: `IOUT = 1`).
type Solout = extern "C" fn(
    *const i32,
    *const f64,
    *const f64,
    *const f64,
    *const f64,
    *const f64,
    *const i32,
    *const i32,
    *mut f64,
    *mut i32,
    *mut i32,
);

/// `RADAU5(N, FCN, X, Y, XEND, H, RTOL, ATOL, ITOL, JAC, IJAC, MLJAC,
/// MUJAC, MAS, IMAS, MLMAS, MUMAS, SOLOUT, IOUT, WORK, LWORK, IWORK,
/// LIWORK, RPAR, IPAR, IDID)`: every argument by reference.
type Radau5Fn = unsafe extern "C" fn(
    *const i32,
    Fcn,
    *mut f64,
    *mut f64,
    *const f64,
    *mut f64,
    *mut f64,
    *mut f64,
    *const i32,
    Jac,
    *const i32,
    *const i32,
    *const i32,
    Mas,
    *const i32,
    *const i32,
    *const i32,
    Solout,
    *const i32,
    *mut f64,
    *const i32,
    *mut i32,
    *const i32,
    *mut f64,
    *mut i32,
    *mut i32,
);

/// What the callbacks reach through `RPAR`: the problem, and when to
/// stop.
struct Context<'a> {
    system: &'a dyn System,
    deadline: Option<Instant>,
}

/// The context behind `rpar`.
///
/// # Safety
/// `rpar` must be the pointer [`Radau5::solve`] passes to RADAU5 (a
/// `Context` that outlives the call); RADAU5 hands it through unchanged.
unsafe fn context<'a>(rpar: *mut f64) -> &'a Context<'a> {
    // SAFETY: see the function's contract.
    unsafe { &*(rpar as *const Context<'a>) }
}

/// The problem behind `rpar` and `N`.
///
/// # Safety
/// As [`context`], and `n` must point to `N`.
unsafe fn system<'a>(rpar: *mut f64, n: *const i32) -> (&'a dyn System, usize) {
    // SAFETY: see the function's contract.
    let (ctx, n) = unsafe { (context(rpar), *n) };
    (ctx.system, usize::try_from(n).unwrap_or(0))
}

extern "C" fn fcn(
    n: *const i32,
    x: *const f64,
    y: *const f64,
    f: *mut f64,
    rpar: *mut f64,
    ipar: *mut i32,
) {
    // SAFETY: RADAU5 calls FCN with its own `N`, `X`, `Y(N)`, `F(N)` and
    // the `RPAR`/`IPAR` that `solve` gave it (`IPAR` of length 1).
    unsafe {
        let (system, n) = system(rpar, n);
        let y = std::slice::from_raw_parts(y, n);
        let f = std::slice::from_raw_parts_mut(f, n);
        let ok = system.rhs(*x, y, f);
        *ipar = if ok { 0 } else { -1 };
    }
}

extern "C" fn jac(
    n: *const i32,
    x: *const f64,
    y: *const f64,
    dfy: *mut f64,
    ldfy: *const i32,
    rpar: *mut f64,
    _ipar: *mut i32,
) {
    // SAFETY: RADAU5 calls JAC with `Y(N)` and `DFY(LDFY, N)`, `LDFY = N`
    // for a full Jacobian (`MLJAC = N`), and `solve`'s `RPAR`.
    unsafe {
        let (system, n) = system(rpar, n);
        if usize::try_from(*ldfy).ok() != Some(n) {
            return;
        }
        let y = std::slice::from_raw_parts(y, n);
        let dfy = std::slice::from_raw_parts_mut(dfy, n * n);
        system.jacobian(*x, y, dfy);
    }
}

extern "C" fn mas(n: *const i32, am: *mut f64, lmas: *const i32, rpar: *mut f64, _ipar: *mut i32) {
    // SAFETY: RADAU5 calls MAS with `AM(LMAS, N)`, `LMAS = N` for a full
    // mass matrix (`MLMAS = N`), and `solve`'s `RPAR`.
    unsafe {
        let (system, n) = system(rpar, n);
        if usize::try_from(*lmas).ok() != Some(n) {
            return;
        }
        system.mass(std::slice::from_raw_parts_mut(am, n * n));
    }
}

extern "C" fn solout(
    _nr: *const i32,
    _xold: *const f64,
    _x: *const f64,
    _y: *const f64,
    _cont: *const f64,
    _werr: *const f64,
    _lrc: *const i32,
    _n: *const i32,
    rpar: *mut f64,
    _ipar: *mut i32,
    irtrn: *mut i32,
) {
    // SAFETY: RADAU5 calls SOLOUT with `solve`'s `RPAR` and its own
    // `IRTRN`.
    unsafe {
        if context(rpar).deadline.is_some_and(|d| Instant::now() > d) {
            // stop the integration (IDID = 2)
            *irtrn = -1;
        }
    }
}

/// The loaded library.
pub struct Radau5 {
    radau5: Radau5Fn,
    /// Keeps `radau5` valid.
    _library: libloading::Library,
}

/// RADAU5's words for its failure codes.
fn idid_text(idid: i32) -> &'static str {
    match idid {
        -1 => "input is not consistent",
        -2 => "more than NMAX = 100000 steps are needed",
        -3 => "the step size becomes too small",
        -4 => "the matrix is repeatedly singular",
        -5 => "repeatedly unexpected step rejections (f not finite)",
        _ => "unknown failure",
    }
}

impl Radau5 {
    /// Loads the shared library at `path` and finds `radau5_` in it.
    pub fn load(path: &Path) -> Result<Self, String> {
        let what = |e: libloading::Error| format!("cannot load `{}`: {e}", path.display());
        // SAFETY: the library is `radau_decsol.f` compiled by gfortran
        // (benches/testset/radau5.sh); it has no initialisers of its own.
        let library = unsafe { libloading::Library::new(path) }.map_err(what)?;
        // SAFETY: `radau5_` is gfortran's symbol of SUBROUTINE RADAU5,
        // whose arguments are all passed by reference as `Radau5Fn` types
        // them (integers are default INTEGER, 4 bytes; reals DOUBLE
        // PRECISION; the externals are procedure pointers).
        let radau5: Radau5Fn = *unsafe { library.get::<Radau5Fn>(b"radau5_") }.map_err(what)?;
        Ok(Self {
            radau5,
            _library: library,
        })
    }

    /// Integrates `system` from `(t0, y)` to `t_end` with
    /// `rtol = atol = h0 = tol` and `counts` unknowns of index 1, 2 and 3
    /// (`IWORK(5..7)`), every other setting RADAU5's default; stops after
    /// the first accepted step past `deadline`. `y` holds the solution at
    /// `t_end` afterwards; an error names RADAU5's failure (or the
    /// deadline) and where it stopped.
    pub fn solve(
        &self,
        system: &dyn System,
        (t0, t_end): (f64, f64),
        y: &mut [f64],
        tol: f64,
        counts: [usize; 3],
        deadline: Option<Instant>,
    ) -> Result<Counters, String> {
        let n = system.n();
        let int = |v: usize| i32::try_from(v).map_err(|_| format!("{v} does not fit RADAU5"));
        if n == 0 || y.len() != n || counts.iter().sum::<usize>() != n || counts[0] == 0 {
            return Err(format!(
                "RADAU5 needs N > 0 unknowns, index-1 unknowns among them and the counts to add up to N (N = {n}, counts {counts:?})"
            ));
        }
        let ni = int(n)?;
        let lwork = n * (5 * n + 12) + 20;
        let liwork = 3 * n + 20;
        let mut work = vec![0.0f64; lwork];
        let mut iwork = vec![0i32; liwork];
        for (k, &c) in counts.iter().enumerate() {
            iwork[4 + k] = int(c)?;
        }
        let (mut x, xend, mut h) = (t0, t_end, tol);
        let (mut rtol, mut atol) = (tol, tol);
        let (itol, ijac, imas, iout) = (0i32, 1i32, 1i32, 1i32);
        let (lwork, liwork) = (int(lwork)?, int(liwork)?);
        let mut ipar = [0i32; 1];
        let mut idid = 0i32;
        let context = Context { system, deadline };
        let rpar = &context as *const Context<'_> as *mut f64;
        // SAFETY: every pointer is to a live local of the right type and
        // length (`Y(N)`, `WORK(LWORK)`, `IWORK(LIWORK)` with the sizes
        // RADAU5 documents for full matrices, `IPAR(1)`); `RPAR` is
        // `context`, which RADAU5 only hands to the callbacks, and which
        // outlives the call. RADAU5 keeps none of them after returning.
        unsafe {
            (self.radau5)(
                &ni,
                fcn,
                &mut x,
                y.as_mut_ptr(),
                &xend,
                &mut h,
                &mut rtol,
                &mut atol,
                &itol,
                jac,
                &ijac,
                &ni,
                &ni,
                mas,
                &imas,
                &ni,
                &ni,
                solout,
                &iout,
                work.as_mut_ptr(),
                &lwork,
                iwork.as_mut_ptr(),
                &liwork,
                rpar,
                ipar.as_mut_ptr(),
                &mut idid,
            );
        }
        let count = |k: usize| usize::try_from(iwork[k]).unwrap_or(0);
        let counters = Counters {
            fcn: count(13),
            jac: count(14),
            steps: count(15),
            accepted: count(16),
            rejected: count(17),
            lu: count(18),
        };
        if idid == 2 {
            return Err(format!(
                "stopped at t = {x:e}: the solve takes longer than the benchmark's time limit"
            ));
        }
        if idid < 0 {
            return Err(format!(
                "RADAU5 stops at t = {x:e} (IDID = {idid}: {})",
                idid_text(idid)
            ));
        }
        Ok(counters)
    }
}
