//! Regularized formulations as first-class values (steinbrecher2016 §3).
//!
//! A [`Formulation`] is a DAE in its own unknowns: the original unknowns
//! `z_0 … z_{n−1}` first (same indices as in the [`daec_model::Dae`]), then
//! the unknowns a formulation adds — ψ of the structurally extended form
//! (eq. (22)), ω of the algebraic derivative array (eq. (31)), the dummy
//! derivatives of Mattsson–Söderlind, the multipliers μ of GGL. Its
//! equations are expressions in the DAE's [`daec_expr::ExprPool`]; the
//! unknown `k` of the formulation is the leaf `Var { unknown: k, order }`,
//! so the added unknowns are leaves with indices `≥ n`.
//!
//! Every row is either *differential* (it contains a derivative of an
//! unknown) or a *constraint* (a function of `t` and the unknowns only).
//! [`QuasiLinearForm`] is the split the integrator and the Rust emitter
//! need: `E(t,z)ż = k(t,z)`, `0 = g(t,z)` with first-order derivatives
//! only, affine in `ż`.

use crate::Limit;
use daec_expr::ExprId;

/// The regularizations `daec regularize --form` offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Form {
    /// Structurally extended formulation, steinbrecher2016 §3.1, eq. (22).
    Ste,
    /// Algebraic derivative array, steinbrecher2016 §3.2, eq. (31).
    Ada,
    /// Hidden constraints, steinbrecher2016 §3.3, eq. (37).
    Hic,
    /// Dummy derivatives (Mattsson & Söderlind 1993).
    Dd,
    /// Gear–Gupta–Leimkuhler stabilisation (1985).
    Ggl,
    /// The d-index-1 form: only the highest-level constraint of each
    /// constraint chain is kept (drifts on the lower levels).
    Di1,
    /// No regularization: the DAE as written (first order), its algebraic
    /// rows as level-0 constraints; of the model's own index (3 for the
    /// Hessenberg mechanical systems). The formulation of the *projected*
    /// Runge–Kutta methods (projected-rk-index3-daes, §2), which restore
    /// the position and velocity constraints by a projection after each
    /// step instead. Not in [`Form::ALL`] (not a regularization).
    Index3,
}

impl Form {
    /// All forms, in the order of the CLI's help text.
    pub const ALL: [Form; 6] = [
        Form::Hic,
        Form::Ada,
        Form::Ste,
        Form::Dd,
        Form::Ggl,
        Form::Di1,
    ];

    /// The name used on the command line and in JSON (`"ste"`, …).
    pub fn name(self) -> &'static str {
        match self {
            Form::Ste => "ste",
            Form::Ada => "ada",
            Form::Hic => "hic",
            Form::Dd => "dd",
            Form::Ggl => "ggl",
            Form::Di1 => "di1",
            Form::Index3 => "index3",
        }
    }

    /// Parses a command-line name (case-insensitive): a form of
    /// [`Form::ALL`] or `index3`.
    pub fn parse(s: &str) -> Option<Form> {
        Form::ALL
            .into_iter()
            .chain([Form::Index3])
            .find(|f| f.name().eq_ignore_ascii_case(s))
    }

    /// Whether the form has as many equations as unknowns (StE, DD, GGL,
    /// DI1, Index3); ADA and HiC are overdetermined.
    pub fn is_square(self) -> bool {
        !matches!(self, Form::Ada | Form::Hic)
    }
}

/// Where an unknown of a formulation comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnknownKind {
    /// Unknown `j` of the original DAE.
    Original(usize),
    /// An algebraic variable standing for `z_j^(order)`: ψ_j^order (StE),
    /// ω_j^order (ADA) or a dummy derivative (DD).
    Derivative {
        /// The original unknown `j`.
        unknown: usize,
        /// The derivative order it replaces (≥ 1).
        order: u32,
    },
    /// A GGL multiplier μ for constraint row `constraint` of the
    /// formulation.
    Multiplier {
        /// Index into [`Formulation::equations`].
        constraint: usize,
    },
    /// An algebraic variable `u_j = ż_j` introduced by
    /// [`QuasiLinearForm`] construction when a row is not affine in `ż`.
    Velocity {
        /// The unknown of the formulation whose derivative it is.
        unknown: usize,
    },
}

/// One unknown of a formulation.
#[derive(Clone, Debug, PartialEq)]
pub struct FormUnknown {
    /// Flat name, e.g. `x`, `psi_x_2` — printable as a `.dae` identifier.
    pub name: String,
    /// Where it comes from.
    pub kind: UnknownKind,
}

/// The derivative-array row an equation comes from: `d^k/dt^k F_i`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowSource {
    /// The model equation `i` (index into `Analysis::residuals`).
    pub equation: usize,
    /// How many times it was differentiated (`k ≤ c_i`).
    pub derivative: u32,
}

impl RowSource {
    /// `F3`, `F3'`, `F3''`, `F3^(3)`: the equation (1-based) with a prime
    /// per differentiation.
    pub fn label(&self) -> String {
        let primes = match self.derivative {
            0 => String::new(),
            1 => "'".into(),
            2 => "''".into(),
            k => format!("^({k})"),
        };
        format!("F{}{primes}", self.equation + 1)
    }
}

/// Differential row or constraint.
#[derive(Clone, Debug, PartialEq)]
pub enum RowKind {
    /// Contains derivatives of unknowns.
    Differential,
    /// A function of `t` and the unknowns only; `level` is the constraint
    /// level (0 = stated, ≥ 1 hidden; steinbrecher2016 Def. 2.3).
    Constraint {
        /// Constraint level.
        level: u32,
    },
}

/// One equation `0 = residual` of a formulation.
#[derive(Clone, Debug, PartialEq)]
pub struct FormEquation {
    /// The residual, in the formulation's unknowns.
    pub residual: ExprId,
    /// Differential or constraint.
    pub kind: RowKind,
    /// The derivative-array row it was made from.
    pub source: RowSource,
}

/// A regularized formulation of a DAE.
#[derive(Clone, Debug, PartialEq)]
pub struct Formulation {
    /// Which form.
    pub form: Form,
    /// Its unknowns: the original ones first, then the added ones.
    pub unknowns: Vec<FormUnknown>,
    /// Its equations, in the order of the paper's examples.
    pub equations: Vec<FormEquation>,
    /// StE: the HVT `T*` it was built on, as `hvt[j] = i` (column `j` of Σ
    /// is matched to row `i`); `None` for the other forms.
    pub hvt: Option<Vec<usize>>,
    /// The size limits that made the construction skip a check (StE's
    /// verification at the consistent point, the dummies' conditioning).
    pub limits: Vec<Limit>,
}

impl Formulation {
    /// Indices of the differential rows.
    pub fn differential_rows(&self) -> Vec<usize> {
        (0..self.equations.len())
            .filter(|&i| self.equations[i].kind == RowKind::Differential)
            .collect()
    }

    /// Indices of the constraint rows.
    pub fn constraint_rows(&self) -> Vec<usize> {
        (0..self.equations.len())
            .filter(|&i| self.equations[i].kind != RowKind::Differential)
            .collect()
    }
}

/// One differential row `Σ_j E_ij(t,z) ż_j − k_i(t,z) = 0` of a
/// quasi-linear form.
#[derive(Clone, Debug, PartialEq)]
pub struct DiffRow {
    /// The residual `E_i·ż − k_i` (first-order derivatives only, affine in
    /// them).
    pub residual: ExprId,
    /// The nonzero entries `(j, E_ij)` of the row of `E`.
    pub mass: Vec<(usize, ExprId)>,
    /// The row of [`Formulation::equations`] it is (`None` for a row
    /// `ż_j − u_j = 0` added for a velocity variable).
    pub equation: Option<usize>,
}

/// One constraint row `0 = g(t, z)` of a quasi-linear form.
#[derive(Clone, Debug, PartialEq)]
pub struct ConstraintRow {
    /// The residual, a function of `t`, the unknowns and parameters only.
    pub expr: ExprId,
    /// Constraint level (0 = stated, ≥ 1 hidden).
    pub level: u32,
    /// The row of [`Formulation::equations`] it is.
    pub equation: usize,
}

/// The quasi-linear split `E(t,z)ż = k(t,z)`, `0 = g(t,z)` of a
/// formulation, as `daec_solve::QuasiLinearDae` wants it (the integrator
/// and the Rust emitter are built on this).
#[derive(Clone, Debug, PartialEq)]
pub struct QuasiLinearForm {
    /// The unknowns (those of the formulation, plus velocity variables
    /// where a row was not affine in `ż`).
    pub unknowns: Vec<FormUnknown>,
    /// The differential rows.
    pub diff: Vec<DiffRow>,
    /// The constraint rows, ordered by level.
    pub constraints: Vec<ConstraintRow>,
}

impl QuasiLinearForm {
    /// Number of unknowns.
    pub fn n(&self) -> usize {
        self.unknowns.len()
    }

    /// The largest constraint level, `None` without constraints.
    pub fn max_level(&self) -> Option<u32> {
        self.constraints.iter().map(|c| c.level).max()
    }
}
