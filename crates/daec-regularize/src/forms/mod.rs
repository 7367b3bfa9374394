//! The regularized formulations of steinbrecher2016 §3 and the baselines
//! of its comparisons (§5), each built from the Σ-method [`Analysis`] of a
//! first-order DAE as a [`Formulation`]:
//!
//! | form | module | paper |
//! |------|--------|-------|
//! | HiC  | [`hic`] | §3.3, eq. (37): `F` plus all hidden constraints `H` |
//! | ADA  | [`ada`] | §3.2, eq. (31): `F` plus the algebraic reduced derivative array (7) |
//! | StE  | [`ste`] | §3.1, eq. (22): the reduced derivative array with ψ for the derivatives off the HVT `T*` |
//! | DD   | [`dd`]  | Mattsson & Söderlind (1993), dummy derivatives chosen by column pivoting |
//! | GGL  | [`ggl`] | Gear, Gupta & Leimkuhler (1985), §5 eq. (40) |
//! | DI1  | [`di1`] | §5 eqs. (41), (42): the dynamics plus the highest-level constraint only |
//! | Index3 | [`regularize`] | none: the DAE as written, for projected-rk-index3-daes §2 (projected Radau IIA) |
//!
//! [`regularize`] is the entry point; [`Formulation::to_dae`] turns a
//! (square) formulation into a flat [`Dae`] that `daec analyze` can check
//! and [`daec_model::to_dae_text`] prints as `.dae` text.
//!
//! Equations are kept literally as in the paper: ADA (31) and HiC (37)
//! list the DAE's algebraic equations twice (once in `F`, once in the
//! constraint part), which gives the paper's counts (14/11 and 8/5 for the
//! pendulum). The repeated rows have the same hash-consed residual;
//! [`Formulation::duplicate_rows`] names them for consumers (the
//! integrator) that need a full-rank constraint Jacobian.

pub mod ada;
pub mod dd;
pub mod di1;
pub mod ggl;
pub mod hic;
pub mod ste;

pub use dd::{dd_levels, dd_levels_at, dd_log_quality};
pub use ste::{MIN_LEVEL_CONDITIONING, best_hvt, hvt_conditioning, log_kappa, ste_for_hvt};

use crate::error::{Refusal, RegularizeError};
use crate::formulation::{
    Form, FormEquation, FormUnknown, Formulation, RowKind, RowSource, UnknownKind,
};
use crate::{Analysis, Regular};
use daec_expr::{ExprId, ExprPool, Leaf, Names, ParamId, to_modelica};
use daec_model::{Dae, Equation, Parameter, Unknown, UnknownDecl};
use rustc_hash::{FxHashMap, FxHashSet};
use std::borrow::Cow;
use std::fmt::Write;
use std::sync::Arc;

/// Options of [`regularize`].
#[derive(Clone, Debug, Default)]
pub struct RegularizeOptions {
    /// StE: build the formulation on this HVT (`hvt[j] = i`, column `j` of
    /// Σ matched to row `i`) instead of choosing `T*` by `κ_T`.
    pub hvt: Option<Vec<usize>>,
    /// DD: build the formulation with these dummy derivatives — for each
    /// unknown `j`, its `dummies[j]` highest derivatives — instead of
    /// pivoting at the consistent point (see [`dd::dd_levels_at`]).
    pub dummies: Option<Vec<u32>>,
}

/// Builds the formulation `form` of `dae` from its Σ-method `analysis`
/// (which must be the analysis of this `dae`: the expressions live in
/// `dae.pool`, which grows).
///
/// Refused with a [`RegularizeError`] that names why when the form does
/// not apply: a structurally singular model, derivatives of order > 1
/// (reduce to first order first), hidden constraints that could not be
/// extracted symbolically, a singular Σ-Jacobian at the point (StE, DD),
/// no position constraints (GGL).
pub fn regularize(
    dae: &mut Dae,
    analysis: &Analysis,
    form: Form,
    opts: &RegularizeOptions,
) -> Result<Formulation, RegularizeError> {
    match form {
        Form::Hic => hic::hic(dae, analysis),
        Form::Ada => ada::ada(dae, analysis),
        Form::Ste => match &opts.hvt {
            Some(h) => ste::ste_for_hvt(dae, analysis, h),
            None => ste::ste(dae, analysis),
        },
        Form::Dd => match &opts.dummies {
            Some(levels) => dd::dd_with_levels(dae, analysis, levels),
            None => dd::dd(dae, analysis),
        },
        Form::Ggl => ggl::ggl(dae, analysis),
        Form::Di1 => di1::di1(dae, analysis),
        Form::Index3 => index3(dae, analysis),
    }
}

/// The DAE as written ([`Form::Index3`]): its rows, differential or
/// level-0 constraints, in the original unknowns — what the projected
/// Runge–Kutta methods of projected-rk-index3-daes (§2, eq. (2.8))
/// integrate.
fn index3(dae: &mut Dae, analysis: &Analysis) -> Result<Formulation, RegularizeError> {
    regular(dae, analysis, Form::Index3)?;
    Ok(Formulation {
        form: Form::Index3,
        unknowns: original_unknowns(dae),
        equations: dae_rows(dae, analysis),
        hvt: None,
        limits: Vec::new(),
    })
}

pub(crate) fn err(form: Form, cause: Refusal) -> RegularizeError {
    RegularizeError::new(form, cause)
}

/// The names of the unknowns `vars` of `dae` (sorted by index,
/// deduplicated), as the refusals carry them.
pub(crate) fn names(dae: &Dae, vars: impl IntoIterator<Item = usize>) -> Vec<String> {
    let mut v: Vec<usize> = vars.into_iter().collect();
    v.sort_unstable();
    v.dedup();
    v.iter()
        .map(|&j| {
            dae.unknowns
                .get(j)
                .map_or_else(|| "?".to_string(), |u| u.name().into_owned())
        })
        .collect()
}

/// [`Refusal::StructurallySingular`] with the parts of `analysis`'s
/// Dulmage–Mendelsohn decomposition (empty when Σ is not singular).
pub(crate) fn structurally_singular(analysis: &Analysis) -> Refusal {
    let (over_equations, under_unknowns) = match &analysis.outcome {
        crate::Outcome::Singular(s) => (s.dm.over_rows.clone(), s.dm.under_cols.clone()),
        crate::Outcome::Regular(_) => (Vec::new(), Vec::new()),
    };
    Refusal::StructurallySingular {
        over_equations,
        under_unknowns,
    }
}

/// The common preconditions: a structurally regular, first-order DAE with
/// the reduced derivative array built.
pub(crate) fn regular<'a>(
    dae: &Dae,
    analysis: &'a Analysis,
    form: Form,
) -> Result<&'a Regular, RegularizeError> {
    if dae.unknowns.is_empty() {
        return Err(err(form, Refusal::NoUnknowns));
    }
    let Some(reg) = analysis.regular() else {
        return Err(err(form, structurally_singular(analysis)));
    };
    let high: Vec<usize> = analysis
        .sigma
        .iter()
        .filter(|&(_, _, s)| s > 1)
        .map(|(_, j, _)| j)
        .collect();
    if !high.is_empty() {
        return Err(err(
            form,
            Refusal::HigherOrder {
                unknowns: names(dae, high),
            },
        ));
    }
    if reg.success.singular() {
        return Err(err(form, Refusal::SingularSigmaJacobian));
    }
    if reg.derivative_array.is_none() {
        return Err(err(form, Refusal::DerivativeArrayNotBuilt));
    }
    Ok(reg)
}

/// Whether `e` contains a derivative leaf `z_j^(l)`, `l ≥ 1`.
pub(crate) fn has_derivative(pool: &ExprPool, e: ExprId) -> bool {
    pool.leaves(e)
        .into_iter()
        .any(|l| matches!(pool.as_leaf(l), Some(Leaf::Var { order, .. }) if order >= 1))
}

/// For every node of a pool, whether it depends on a derivative leaf: one
/// forward pass over the pool (children have smaller ids than parents), so
/// classifying many rows costs O(pool) instead of a traversal per row.
pub(crate) struct DerivativeFlags(Vec<bool>);

impl DerivativeFlags {
    pub(crate) fn new(pool: &ExprPool) -> DerivativeFlags {
        let n = pool.len();
        let mut f = vec![false; n];
        for k in 0..n {
            let Some(id) = pool.id_at(k) else { continue };
            f[k] = match pool.as_leaf(id) {
                Some(Leaf::Var { order, .. }) => order >= 1,
                Some(_) => false,
                None => pool
                    .node(id)
                    .children()
                    .any(|c| f.get(c.index()).copied().unwrap_or(false)),
            };
        }
        DerivativeFlags(f)
    }

    /// Whether `e` contains a derivative (nodes newer than the pass are
    /// traversed).
    pub(crate) fn get(&self, pool: &ExprPool, e: ExprId) -> bool {
        match self.0.get(e.index()) {
            Some(&b) => b,
            None => has_derivative(pool, e),
        }
    }

    /// Differential if `e` contains a derivative, else a constraint.
    pub(crate) fn kind(&self, pool: &ExprPool, e: ExprId, level: u32) -> RowKind {
        if self.get(pool, e) {
            RowKind::Differential
        } else {
            RowKind::Constraint { level }
        }
    }
}

/// The original unknowns as formulation unknowns. Names that are not
/// identifiers (`der(x)`, the unknowns of the first-order reduction) are
/// made identifiers (`der_x`), so that every name prints as valid `.dae`.
pub(crate) fn original_unknowns(dae: &Dae) -> Vec<FormUnknown> {
    if dae.unknowns.iter().all(|u| is_identifier(u.base())) {
        return dae
            .unknowns
            .iter()
            .enumerate()
            .map(|(j, u)| FormUnknown {
                name: u.name().into_owned(),
                kind: UnknownKind::Original(j),
            })
            .collect();
    }
    let mut namer = Namer::new(dae);
    dae.unknowns
        .iter()
        .enumerate()
        .map(|(j, u)| FormUnknown {
            name: if is_identifier(u.base()) {
                u.name().into_owned()
            } else {
                namer.fresh(sanitize(u.base()))
            },
            kind: UnknownKind::Original(j),
        })
        .collect()
}

/// The rows of `F` (the analysed residuals) as they stand: differential
/// rows, and the algebraic ones as level-0 constraints.
pub(crate) fn dae_rows(dae: &Dae, analysis: &Analysis) -> Vec<FormEquation> {
    let flags = DerivativeFlags::new(&dae.pool);
    analysis
        .residuals
        .iter()
        .enumerate()
        .map(|(i, &r)| FormEquation {
            residual: r,
            kind: flags.kind(&dae.pool, r, 0),
            source: RowSource {
                equation: i,
                derivative: 0,
            },
        })
        .collect()
}

/// Fresh identifiers for the unknowns a formulation adds: valid `.dae`
/// identifiers, distinct from every unknown, parameter and each other.
pub(crate) struct Namer {
    taken: FxHashSet<String>,
}

impl Namer {
    pub(crate) fn new(dae: &Dae) -> Namer {
        let mut taken: FxHashSet<String> = FxHashSet::default();
        for u in &dae.unknowns {
            taken.insert(u.name().into_owned());
            taken.insert(u.base().to_string());
        }
        for p in &dae.parameters {
            taken.insert(p.name.clone());
            taken.insert(p.base.clone());
        }
        for kw in [
            "time",
            "der",
            "model",
            "end",
            "equation",
            "parameter",
            "Real",
        ] {
            taken.insert(kw.to_string());
        }
        Namer { taken }
    }

    /// `prefix_x_l` for `z_j^(l)` (`x[2]` becomes `x_2`); `_` appended
    /// until unique.
    pub(crate) fn derivative(&mut self, dae: &Dae, prefix: &str, j: usize, l: u32) -> String {
        let base = sanitize(&dae.unknowns.get(j).map_or(Cow::Borrowed("z"), |u| u.name()));
        self.fresh(format!("{prefix}_{base}_{l}"))
    }

    /// `name`, with `_` appended until unique.
    pub(crate) fn fresh(&mut self, mut name: String) -> String {
        while self.taken.contains(&name) {
            name.push('_');
        }
        self.taken.insert(name.clone());
        name
    }
}

/// The sparse LU (COLAMD ordering, partial pivoting; `faer`'s simplicial
/// LU through [`daec_solve::SparseRealLu`]) of the `m × m` matrix with the
/// entries `(row, col, value)` (repeated positions summed). With
/// `Some(floor)` the rows are scaled to a largest entry of 1 and a pivot
/// at or below `floor` counts as singular (a rank decision); with `None`
/// only a vanished or non-finite pivot does (for a determinant). `None`
/// when singular.
pub(super) fn sparse_lu(
    m: usize,
    entries: &[(usize, usize, f64)],
    floor: Option<f64>,
) -> Option<daec_solve::SparseRealLu> {
    let mut row_max = vec![0.0f64; m];
    if floor.is_some() {
        for &(r, _, v) in entries {
            row_max[r] = row_max[r].max(v.abs());
        }
    }
    let pattern: Vec<(usize, usize)> = entries.iter().map(|&(r, c, _)| (r, c)).collect();
    let (pat, slot) = daec_solve::SparsePattern::new(m, &pattern);
    let mut values = vec![0.0; pat.nnz()];
    for (&(r, _, v), &s) in entries.iter().zip(&slot) {
        values[s] += if row_max[r] > 0.0 { v / row_max[r] } else { v };
    }
    let mut lu = daec_solve::SparseRealLu::new(&pat);
    let ok = match floor {
        Some(floor) => lu.factor_with_pivot_floor(&pat, &values, floor),
        None => lu.factor(&pat, &values),
    };
    ok.is_ok().then_some(lu)
}

/// Whether `s` is a plain identifier (`[A-Za-z_][A-Za-z0-9_]*`).
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `x[2, 3]` → `x_2_3`: only ASCII letters, digits and `_`.
fn sanitize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    while out.ends_with('_') {
        out.pop();
    }
    if out.is_empty() { "z".into() } else { out }
}

/// The replacement of derivatives by new algebraic unknowns shared by StE
/// (steinbrecher2016 eq. (22)), ADA (eq. (7), (31)) and dummy derivatives:
/// for each unknown `j`, the derivatives `z_j^(l)` with
/// `keep[j] < l ≤ d_j` become the new unknowns `prefix_x_l`, leaves
/// `Var { unknown: n + k, order: 0 }`. Returns the added unknowns and the
/// leaf map.
pub(crate) fn replacement(
    dae: &mut Dae,
    d: &[u32],
    keep: &[u32],
    prefix: &str,
) -> (Vec<FormUnknown>, FxHashMap<ExprId, ExprId>) {
    let n = dae.unknowns.len();
    let mut namer = Namer::new(dae);
    let mut added = Vec::new();
    let mut map: FxHashMap<ExprId, ExprId> = FxHashMap::default();
    for j in 0..n {
        for l in keep[j] + 1..=d[j] {
            let name = namer.derivative(dae, prefix, j, l);
            let k = n + added.len();
            let from = dae.pool.var(j as u32, l);
            let to = dae.pool.var(k as u32, 0);
            map.insert(from, to);
            added.push(FormUnknown {
                name,
                kind: UnknownKind::Derivative {
                    unknown: j,
                    order: l,
                },
            });
        }
    }
    (added, map)
}

/// `e` with the leaves of `map` replaced.
pub(crate) fn replace(pool: &mut ExprPool, e: ExprId, map: &FxHashMap<ExprId, ExprId>) -> ExprId {
    if map.is_empty() {
        return e;
    }
    pool.substitute(e, &|l| map.get(&l).copied())
}

/// The reduced derivative array `d^k F_i` (`k = 0..=c_i`, rows in the
/// paper's order: by equation, then by `k`) with the leaves of `map`
/// replaced; rows without derivatives are constraints of level `k`.
pub(crate) fn replaced_array(
    dae: &mut Dae,
    reg: &Regular,
    map: &FxHashMap<ExprId, ExprId>,
) -> Vec<FormEquation> {
    let Some(da) = &reg.derivative_array else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(da.len());
    for (i, row) in da.rows().enumerate() {
        for (k, &e) in row.iter().enumerate() {
            let r = replace(&mut dae.pool, e, map);
            out.push(FormEquation {
                residual: r,
                kind: RowKind::Differential,
                source: RowSource {
                    equation: i,
                    derivative: k as u32,
                },
            });
        }
    }
    let flags = DerivativeFlags::new(&dae.pool);
    for e in &mut out {
        e.kind = flags.kind(&dae.pool, e.residual, e.source.derivative);
    }
    out
}

impl Formulation {
    /// Rows whose residual is identical to that of an earlier row (ADA and
    /// HiC list the DAE's algebraic equations twice, as the paper does).
    pub fn duplicate_rows(&self) -> Vec<usize> {
        let mut seen: FxHashSet<ExprId> = FxHashSet::default();
        (0..self.equations.len())
            .filter(|&r| !seen.insert(self.equations[r].residual))
            .collect()
    }

    /// Number of equations.
    pub fn n_equations(&self) -> usize {
        self.equations.len()
    }

    /// Number of unknowns.
    pub fn n_unknowns(&self) -> usize {
        self.unknowns.len()
    }

    /// The largest constraint level, `None` without constraints.
    pub fn max_level(&self) -> Option<u32> {
        self.equations
            .iter()
            .filter_map(|e| match e.kind {
                RowKind::Constraint { level } => Some(level),
                RowKind::Differential => None,
            })
            .max()
    }

    /// The formulation as a flat DAE over the same pool (a clone of
    /// `dae`'s): its unknowns (the original ones with their attributes,
    /// the added ones as scalar `Real`s without start values), its
    /// equations as `0 = residual` with a description naming the
    /// derivative-array row, and `dae`'s parameters, initial equations,
    /// events and experiment. For the square forms this is a model
    /// `daec` parses and analyses; printed with
    /// [`daec_model::to_dae_text`].
    pub fn to_dae(&self, dae: &Dae) -> Dae {
        let mut out = dae.clone();
        out.name = format!("{}_{}", dae.name, self.form.name());
        out.description = Some(format!(
            "{} formulation of {} ({} equations, {} unknowns), generated by daec regularize",
            self.form.name().to_ascii_uppercase(),
            dae.name,
            self.equations.len(),
            self.unknowns.len()
        ));
        let mut unknowns: Vec<Unknown> = Vec::with_capacity(self.unknowns.len());
        for u in &self.unknowns {
            match u.kind {
                UnknownKind::Original(j) if j < dae.unknowns.len() => {
                    let mut v = dae.unknowns[j].clone();
                    if !is_identifier(v.base()) {
                        // `der(x)` of the first-order reduction.
                        let mut decl = UnknownDecl::clone(v.decl());
                        decl.base = u.name.as_str().into();
                        decl.derivative = 0;
                        decl.dims = Default::default();
                        v.set_decl(Arc::new(decl));
                    }
                    unknowns.push(v);
                }
                _ => {
                    let description = match u.kind {
                        UnknownKind::Derivative { unknown, order } => Some(format!(
                            "stands for der({}, {order})",
                            self.unknowns.get(unknown).map_or("?", |v| v.name.as_str())
                        )),
                        UnknownKind::Multiplier { .. } => Some("GGL multiplier".to_string()),
                        UnknownKind::Velocity { unknown } => {
                            Some(format!("velocity of unknown {unknown}"))
                        }
                        UnknownKind::Original(_) => None,
                    };
                    unknowns.push(Unknown::scalar(&u.name, description.as_deref()));
                }
            }
        }
        out.unknowns = unknowns;
        let zero = out.pool.constant(0.0);
        out.equations = self
            .equations
            .iter()
            .map(|e| Equation {
                lhs: zero,
                rhs: e.residual,
                residual: e.residual,
                description: Some(row_label(dae, e).into()),
            })
            .collect();
        out.spans = Default::default();
        out
    }
}

/// `F3'' (level 2)`: the derivative-array row and the kind of an equation.
pub fn row_label(dae: &Dae, e: &FormEquation) -> String {
    let _ = dae;
    let kind = match e.kind {
        RowKind::Differential => "differential".to_string(),
        RowKind::Constraint { level } => format!("constraint, level {level}"),
    };
    format!("{} ({kind})", e.source.label())
}

/// Names of a formulation's unknowns (and of the DAE's parameters) for the
/// printers of `daec-expr` ([`to_modelica`], `to_latex`).
pub struct FormulationNames<'a> {
    /// The formulation.
    pub form: &'a Formulation,
    /// The DAE it was built from (parameter names).
    pub dae: &'a Dae,
}

/// The names are `.dae` source ([`Formulation::source_name`]).
impl Names for FormulationNames<'_> {
    fn unknown(&self, j: u32) -> String {
        self.form.source_name(self.dae, j as usize)
    }
    fn param(&self, p: ParamId) -> String {
        self.dae
            .parameters
            .get(p.0 as usize)
            .map_or_else(|| format!("p{}", p.0), Parameter::source_name)
    }
}

impl Formulation {
    /// The name of unknown `j` as `.dae` source: an original unknown's
    /// [`daec_model::Unknown::source_name`], another name quoted when it is
    /// not a plain identifier.
    pub fn source_name(&self, dae: &Dae, j: usize) -> String {
        let Some(u) = self.unknowns.get(j) else {
            return format!("z{j}");
        };
        match u.kind {
            UnknownKind::Original(i) if dae.unknowns.get(i).is_some_and(|v| v.name() == u.name) => {
                dae.unknowns[i].source_name()
            }
            _ => daec_model::ident_source(&u.name).into_owned(),
        }
    }
}

impl Formulation {
    /// The residual of equation `row` in Modelica syntax (`der(x)` for
    /// derivatives).
    pub fn equation_text(&self, dae: &Dae, row: usize) -> String {
        let names = FormulationNames { form: self, dae };
        self.equations
            .get(row)
            .map_or_else(String::new, |e| to_modelica(&dae.pool, e.residual, &names))
    }

    /// The residual of the model's declared invariant `k`
    /// (`Dae::invariants`, `__daec(invariant = true)`) in Modelica syntax,
    /// in the formulation's names.
    pub fn invariant_text(&self, dae: &Dae, k: usize) -> String {
        let names = FormulationNames { form: self, dae };
        dae.invariants
            .get(k)
            .map_or_else(String::new, |e| to_modelica(&dae.pool, e.residual, &names))
    }

    /// How `daec simulate` keeps the declared invariants with this form
    /// (by the default method): `rows` — the overdetermined forms HiC and
    /// ADA carry them as additional constraint rows — or `measured`: the
    /// square forms and the index-3 form have no rows for them, so they
    /// are evaluated and reported, not enforced (`--method projection`
    /// projects onto them on HiC and DI1).
    pub fn invariant_enforcement(&self) -> &'static str {
        if self.form.is_square() {
            "measured"
        } else {
            "rows"
        }
    }

    /// A readable listing: the form, its size, the HVT (StE), the unknowns
    /// (with what the added ones stand for), every equation with its
    /// derivative-array row and kind, and the model's declared invariants
    /// (not rows of the formulation).
    pub fn to_text(&self, dae: &Dae) -> String {
        let mut out = String::new();
        let (m, n) = (self.equations.len(), self.unknowns.len());
        let shape = if m == n {
            "square".to_string()
        } else {
            format!("overdetermined by {}", m as i64 - n as i64)
        };
        let _ = writeln!(
            out,
            "{} formulation of {}: {m} equations, {n} unknowns ({shape})",
            self.form.name().to_ascii_uppercase(),
            daec_model::ident_source(&dae.name)
        );
        if let Some(hvt) = &self.hvt {
            let pairs: Vec<String> = hvt
                .iter()
                .enumerate()
                .map(|(j, &i)| format!("{}→F{}", self.source_name(dae, j), i + 1))
                .collect();
            let _ = writeln!(out, "HVT T*: {}", pairs.join(", "));
        }
        out.push_str("unknowns:\n");
        for (k, u) in self.unknowns.iter().enumerate() {
            let what = match u.kind {
                UnknownKind::Original(_) => String::new(),
                UnknownKind::Derivative { unknown, order } => {
                    let x = self.source_name(dae, unknown);
                    if order == 1 {
                        format!("  (der({x}))")
                    } else {
                        format!("  (der({x}, {order}))")
                    }
                }
                UnknownKind::Multiplier { constraint } => {
                    format!("  (multiplier of equation {})", constraint + 1)
                }
                UnknownKind::Velocity { unknown } => {
                    format!("  (der({}))", self.source_name(dae, unknown))
                }
            };
            let _ = writeln!(out, "  {:>3} {}{what}", k + 1, self.source_name(dae, k));
        }
        out.push_str("equations:\n");
        let dups: FxHashSet<usize> = self.duplicate_rows().into_iter().collect();
        for r in 0..m {
            let e = &self.equations[r];
            let dup = if dups.contains(&r) {
                "  [repeated]"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "  {:>3} {:<36} 0 = {}{dup}",
                r + 1,
                row_label(dae, e),
                self.equation_text(dae, r)
            );
        }
        if !dae.invariants.is_empty() {
            let how = match self.invariant_enforcement() {
                "rows" => "daec simulate adds them as constraint rows",
                _ => "not rows of this form: daec simulate measures them, it does not enforce them",
            };
            let _ = writeln!(out, "invariants (declared; {how}):");
            for k in 0..dae.invariants.len() {
                let _ = writeln!(
                    out,
                    "  {:>3} {:<36} 0 = {}",
                    k + 1,
                    format!("I{} (invariant)", k + 1),
                    self.invariant_text(dae, k)
                );
            }
        }
        out
    }
}
