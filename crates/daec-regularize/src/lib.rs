//! Signature-method analysis of a flat DAE and, on top of it, its
//! regularizations (steinbrecher2016 §2–3).
//!
//! [`analyze`] runs Pryce's Σ-method on a [`Dae`]: the signature matrix
//! ([`signature::sigma_matrix`]), HVT, canonical offsets and block
//! triangular forms (from `daec-structure`), the symbolic Σ-Jacobian, the
//! reduced derivative array, the array of hidden constraints by level
//! ([`hidden_constraints()`]), Pantelides' algorithm as a cross-check, and
//! the success check at a consistent point ([`consistent`]). When the
//! Σ-Jacobian is singular at that point although Σ has a finite HVT, the
//! linear-combination conversion of Tan, Nedialkov & Pryce (2017)
//! ([`linear_combination`]) rewrites the DAE until it is not, and the
//! analysis reports the converted structure.

pub mod consistent;
pub mod dense;
pub mod emit_rust;
pub mod expand;
pub mod forms;
pub mod formulation;
pub mod hidden_constraints;
pub mod linear_combination;
pub mod quasi_linear;
pub mod signature;

pub use forms::{
    MIN_LEVEL_CONDITIONING, RegularizeOptions, best_hvt, dd_levels_at, dd_log_quality,
    hvt_conditioning, log_kappa, regularize, ste_for_hvt,
};
pub use formulation::{
    ConstraintRow, DiffRow, Form, FormEquation, FormUnknown, Formulation, QuasiLinearForm,
    RegularizeError, RowKind, RowSource, UnknownKind,
};

use consistent::{ConsistentPoint, Point, ProjectionOptions, consistent_point};
use daec_expr::ExprId;
use daec_model::Dae;
use daec_structure::{
    HvtEnumeration, PantelidesError, PantelidesResult, SigmaAnalysis, SigmaMatrix,
    StructuralSingularity,
};
use dense::{FullPivLu, Matrix};
use hidden_constraints::{ConstraintArray, ReferencePoint, hidden_constraints};
use linear_combination::Conversion;
use signature::{DerivativeArray, JacobianEntry, sigma_jacobian, sigma_matrix};

/// Options of [`analyze`].
#[derive(Clone, Debug)]
pub struct AnalyzeOptions {
    /// Enumerate all HVTs when there are at most this many.
    pub hvt_limit: usize,
    /// Largest number of unknowns for which the numerical success check is
    /// dense (determinant, numerical rank and a left null vector of 𝔍).
    pub success_check_max_unknowns: usize,
    /// Largest number of unknowns for which the success check is done at
    /// all: above [`success_check_max_unknowns`](Self::success_check_max_unknowns)
    /// it is sparse (the consistent point by sparse least-norm steps, 𝔍's
    /// regularity by a sparse LU, no determinant or null vector).
    pub sparse_success_check_max_unknowns: usize,
    /// Largest number of unknowns for which the derivative array and the
    /// hidden constraints are built.
    pub constraints_max_unknowns: usize,
    /// Largest number of linear-combination conversions.
    pub max_conversions: usize,
}

impl Default for AnalyzeOptions {
    fn default() -> Self {
        AnalyzeOptions {
            hvt_limit: 16,
            success_check_max_unknowns: 800,
            sparse_success_check_max_unknowns: 20_000,
            constraints_max_unknowns: 200_000,
            max_conversions: 20,
        }
    }
}

/// The success check (Algorithm 2.1 step 6).
#[derive(Clone, Debug, Default)]
pub struct SuccessCheck {
    /// Why it was not performed, if it was not.
    pub skipped: Option<String>,
    /// The consistent point found from the start values.
    pub point: Option<ConsistentPoint>,
    /// The Σ-Jacobian evaluated there (dense, n × n).
    pub jacobian: Option<Matrix>,
    /// Its determinant.
    pub determinant: Option<f64>,
    /// Its numerical rank.
    pub rank: Option<usize>,
    /// A left null vector when singular (`uᵀ𝔍 = 0`).
    pub left_null_vector: Option<Vec<f64>>,
    /// The order `n` of 𝔍 when it was checked (densely or sparsely).
    pub order: Option<usize>,
}

impl SuccessCheck {
    /// Whether the Σ-Jacobian was found nonsingular at a consistent point.
    pub fn succeeded(&self) -> bool {
        self.point.as_ref().is_some_and(|p| p.converged)
            && self.rank.is_some_and(|r| Some(r) == self.order)
    }

    /// Whether the Σ-Jacobian was found singular.
    pub fn singular(&self) -> bool {
        match (self.rank, self.order) {
            (Some(r), Some(n)) => r < n,
            _ => false,
        }
    }
}

/// The Σ-method's results for a structurally regular DAE.
#[derive(Clone, Debug)]
pub struct Regular {
    /// HVT, offsets, index, DOF, BTFs.
    pub sigma: SigmaAnalysis,
    /// All HVTs (or their count).
    pub hvts: HvtEnumeration,
    /// The symbolic Σ-Jacobian.
    pub jacobian: Vec<JacobianEntry>,
    /// The reduced derivative array (None for very large models).
    pub derivative_array: Option<DerivativeArray>,
    /// The array of (hidden) constraints.
    pub constraints: Option<ConstraintArray>,
    /// Pantelides' algorithm on the same DAE.
    pub pantelides: Result<PantelidesResult, PantelidesError>,
    /// The success check.
    pub success: SuccessCheck,
}

/// Structural regularity or singularity.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// Σ has no finite transversal.
    Singular(StructuralSingularity),
    /// The Σ-method's results.
    Regular(Box<Regular>),
}

/// The analysis of a DAE.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// The residuals analysed (the DAE's, after any conversions).
    pub residuals: Vec<ExprId>,
    /// The signature matrix of `residuals`.
    pub sigma: SigmaMatrix,
    /// Regular or singular.
    pub outcome: Outcome,
    /// Linear-combination conversions applied (empty when none was needed).
    pub conversions: Vec<Conversion>,
    /// The analysis before the first conversion, when there was one.
    pub before_conversion: Option<Box<Analysis>>,
}

impl Analysis {
    /// The regular results, if any.
    pub fn regular(&self) -> Option<&Regular> {
        match &self.outcome {
            Outcome::Regular(r) => Some(r),
            Outcome::Singular(_) => None,
        }
    }

    /// How often each *original* equation is differentiated in the end:
    /// its own offset `c̄_i`, or, where it was combined into a converted
    /// row `l` after `k` differentiations, `k + c̄_l` (the larger).
    pub fn effective_differentiations(&self) -> Option<Vec<u32>> {
        let reg = self.regular()?;
        let n = self.residuals.len();
        let mut composite: Vec<Vec<(usize, u32)>> = (0..n).map(|i| vec![(i, 0)]).collect();
        for conv in &self.conversions {
            let mut merged: Vec<(usize, u32)> = Vec::new();
            for &(i, _, k) in &conv.combination {
                for &(e, off) in &composite[i] {
                    match merged.iter_mut().find(|(m, _)| *m == e) {
                        Some(slot) => slot.1 = slot.1.max(off + k),
                        None => merged.push((e, off + k)),
                    }
                }
            }
            composite[conv.replaced] = merged;
        }
        let mut eff = vec![0u32; n];
        for (r, comp) in composite.iter().enumerate() {
            for &(e, off) in comp {
                eff[e] = eff[e].max(off + reg.sigma.offsets.c[r]);
            }
        }
        Some(eff)
    }

    /// The index: the structural index ν_Σ when the Σ-method succeeds on
    /// the model as written; after linear-combination conversions, the
    /// largest effective number of differentiations of an original
    /// equation, plus 1 if some `d_j = 0` (the same rule as ν_Σ).
    pub fn index(&self) -> Option<u32> {
        let reg = self.regular()?;
        if self.conversions.is_empty() {
            return Some(reg.sigma.structural_index);
        }
        let eff = self.effective_differentiations()?;
        let max = eff.iter().copied().max().unwrap_or(0);
        let algebraic = reg.sigma.offsets.d.contains(&0);
        Some(max + u32::from(algebraic))
    }
}

/// Runs the Σ-method on `dae` (its pool grows with the derivatives).
pub fn analyze(dae: &mut Dae, options: &AnalyzeOptions) -> Analysis {
    let residuals: Vec<ExprId> = dae.equations.iter().map(|e| e.residual).collect();
    let mut analysis = analyze_residuals(dae, residuals, options);
    let mut first: Option<Box<Analysis>> = None;
    let mut conversions = Vec::new();
    let params = dae.parameter_values();
    while conversions.len() < options.max_conversions {
        let Some(reg) = analysis.regular() else { break };
        if !reg.success.singular() {
            break;
        }
        let Some(conv) = linear_combination::convert(&mut dae.pool, &analysis, &params) else {
            break;
        };
        let residuals = conv.residuals.clone();
        let next = analyze_residuals(dae, residuals, options);
        // The conversion must lower Val(Σ) (Tan, Nedialkov & Pryce 2017,
        // Thm. 4.3); otherwise it did not cancel and is discarded.
        let lowered = next
            .regular()
            .is_some_and(|r| r.sigma.dof < conv.val_before);
        if !lowered {
            break;
        }
        conversions.push(conv);
        if first.is_none() {
            first = Some(Box::new(analysis));
        }
        analysis = next;
    }
    analysis.conversions = conversions;
    analysis.before_conversion = first;
    analysis
}

fn analyze_residuals(dae: &mut Dae, residuals: Vec<ExprId>, options: &AnalyzeOptions) -> Analysis {
    let n = dae.unknowns.len();
    let sigma = sigma_matrix(&dae.pool, &residuals, n);
    let sa = match daec_structure::analyze(&sigma) {
        Ok(sa) => sa,
        Err(sing) => {
            return Analysis {
                residuals,
                sigma,
                outcome: Outcome::Singular(sing),
                conversions: Vec::new(),
                before_conversion: None,
            };
        }
    };
    let hvts = daec_structure::all_hvts_of_analysis(&sigma, &sa, options.hvt_limit);
    let jacobian = sigma_jacobian(&mut dae.pool, &residuals, &sigma, &sa.offsets);
    let pantelides = daec_structure::pantelides(&sigma);
    let params = dae.parameter_values();
    let start: Vec<f64> = dae
        .unknowns
        .iter()
        .map(|u| u.start.unwrap_or(0.0))
        .collect();
    let t0 = dae.experiment.start_time.unwrap_or(0.0);
    let orders = sigma.column_orders();
    let (derivative_array, constraints) = if n <= options.constraints_max_unknowns {
        let da = DerivativeArray::new(&mut dae.pool, &residuals, &sa.offsets.c);
        let reference = ReferencePoint {
            z: &start,
            params: &params,
            t: t0,
        };
        let ca = hidden_constraints(&mut dae.pool, &da, &sa.offsets, &orders, &reference);
        (Some(da), Some(ca))
    } else {
        (None, None)
    };
    let success = success_check(
        dae,
        &jacobian,
        constraints.as_ref(),
        &orders,
        &start,
        &params,
        t0,
        options,
    );
    Analysis {
        residuals,
        sigma,
        outcome: Outcome::Regular(Box::new(Regular {
            sigma: sa,
            hvts,
            jacobian,
            derivative_array,
            constraints,
            pantelides,
            success,
        })),
        conversions: Vec::new(),
        before_conversion: None,
    }
}

#[allow(clippy::too_many_arguments)]
fn success_check(
    dae: &mut Dae,
    jacobian: &[JacobianEntry],
    constraints: Option<&ConstraintArray>,
    orders: &[u32],
    start: &[f64],
    params: &[f64],
    t0: f64,
    options: &AnalyzeOptions,
) -> SuccessCheck {
    let n = dae.unknowns.len();
    if n > options.sparse_success_check_max_unknowns {
        return SuccessCheck {
            skipped: Some(format!(
                "the numerical success check is done for at most {} unknowns (this model has {n})",
                options.sparse_success_check_max_unknowns
            )),
            ..SuccessCheck::default()
        };
    }
    let Some(ca) = constraints else {
        return SuccessCheck {
            skipped: Some("the hidden constraints were not built".into()),
            ..SuccessCheck::default()
        };
    };
    // The state: z_j^(l) for l < max(p_j, 1).
    let mut state: Vec<(u32, u32)> = (0..n as u32).map(|j| (j, 0)).collect();
    for (j, &p) in orders.iter().enumerate() {
        for l in 1..p {
            state.push((j as u32, l));
        }
    }
    let is_state = |j: u32, l: u32| l < orders.get(j as usize).copied().unwrap_or(1).max(1);
    // The constraints plus the user's initial equations (derivatives in
    // those replaced by their consistent expressions).
    let mut eqs: Vec<ExprId> = ca.constraints.iter().map(|c| c.expr).collect();
    for ie in &dae.initial_equations {
        let e = ca.substitute_derivatives(&mut dae.pool, ie.residual);
        eqs.push(e);
    }
    let unresolved = eqs.iter().any(|&e| {
        dae.pool.leaves(e).into_iter().any(|l| {
            matches!(dae.pool.as_leaf(l), Some(daec_expr::Leaf::Var { unknown, order }) if !is_state(unknown, order))
        })
    });
    if unresolved {
        return SuccessCheck {
            skipped: Some(
                "some derivatives could not be eliminated from the constraints symbolically, so no consistent point was computed"
                    .into(),
            ),
            ..SuccessCheck::default()
        };
    }
    let mut x0: Vec<f64> = start.to_vec();
    x0.resize(state.len(), 0.0);
    let mut fixed: Vec<bool> = dae.unknowns.iter().map(|u| u.fixed).collect();
    fixed.resize(state.len(), false);
    let mut weights: Vec<f64> = dae
        .unknowns
        .iter()
        .map(|u| {
            let nominal = u.nominal.map(f64::abs).filter(|x| *x > 0.0);
            1.0 / nominal.unwrap_or_else(|| u.start.map_or(1.0, |s| s.abs().max(1.0)))
        })
        .collect();
    weights.resize(state.len(), 1.0);
    let point = consistent_point(
        &mut dae.pool,
        &eqs,
        &state,
        &x0,
        &fixed,
        &weights,
        params,
        t0,
        &ProjectionOptions::default(),
    );
    let mut values: rustc_hash::FxHashMap<(u32, u32), f64> =
        state.iter().copied().zip(point.z.iter().copied()).collect();
    // Derivatives at the point from Ω(t, z).
    let mut derivs: Vec<((u32, u32), f64)> = Vec::new();
    {
        let lookup_state = |j: u32, l: u32| values.get(&(j, l)).copied();
        let p = Point {
            z: &point.z[..n],
            derivative: &lookup_state,
            params,
            t: t0,
        };
        for (&key, &e) in &ca.derivatives {
            derivs.push((key, dae.pool.eval(e, &p)));
        }
    }
    values.extend(derivs);
    let lookup = |j: u32, l: u32| values.get(&(j, l)).copied();
    let p = Point {
        z: &point.z[..n],
        derivative: &lookup,
        params,
        t: t0,
    };
    if n > options.success_check_max_unknowns {
        // Large models: 𝔍's regularity by a sparse LU (partial pivoting,
        // a vanishing pivot means singular); no determinant, rank or null
        // vector (those need the dense factorisation).
        let entries: Vec<(usize, usize)> = jacobian.iter().map(|e| (e.row, e.col)).collect();
        let (pattern, slot) = daec_solve::linalg::SparsePattern::new(n, &entries);
        let mut values = vec![0.0; pattern.nnz()];
        for (e, &k) in jacobian.iter().zip(&slot) {
            values[k] += dae.pool.eval(e.expr, &p);
        }
        let mut lu = daec_solve::linalg::SparseRealLu::new(&pattern);
        let regular = values.iter().all(|v| v.is_finite()) && lu.factor(&pattern, &values).is_ok();
        return SuccessCheck {
            skipped: (!regular).then(|| {
                format!(
                    "the sparse LU of 𝔍 ({n} unknowns) found it singular at the consistent point; its rank and null vector need the dense check (at most {} unknowns)",
                    options.success_check_max_unknowns
                )
            }),
            rank: regular.then_some(n),
            order: regular.then_some(n),
            point: Some(point),
            ..SuccessCheck::default()
        };
    }
    let mut jm = Matrix::zeros(n, n);
    for e in jacobian {
        jm.set(e.row, e.col, dae.pool.eval(e.expr, &p));
    }
    // The rank is decided on 𝔍 equilibrated (R 𝔍 C, rows and columns
    // scaled to unit size): relative to 𝔍's largest entry, a regular 𝔍
    // of equations in different units has pivots far below any tolerance
    // (the water tube of the IVP test set: 1.3e6 on the flows' derivatives
    // and 1 on the pressures give a Schur complement of 1e-12 relative).
    let (scaled, r, c) = dense::equilibrate(&jm);
    let lu = FullPivLu::new(&scaled, 1e-10);
    // a left null vector of R 𝔍 C is one of 𝔍 after multiplying by R
    let left_null_vector = if lu.rank < n {
        FullPivLu::new(&scaled.transpose(), 1e-10)
            .null_vector()
            .map(|y| {
                let y: Vec<f64> = y.iter().zip(&r).map(|(a, b)| a * b).collect();
                let norm = y.iter().map(|v| v * v).sum::<f64>().sqrt();
                y.into_iter().map(|v| v / norm).collect()
            })
    } else {
        None
    };
    // det 𝔍 = det(R 𝔍 C) / (det R · det C), the scales powers of two
    let exponent: i64 = r.iter().chain(&c).map(|s| s.log2() as i64).sum();
    SuccessCheck {
        skipped: None,
        determinant: Some(dense::scale_by_power_of_two(lu.determinant(), -exponent)),
        rank: Some(lu.rank),
        point: Some(point),
        jacobian: Some(jm),
        left_null_vector,
        order: Some(n),
    }
}
