//! Signature-method analysis of a flat DAE and, on top of it, its
//! regularizations (steinbrecher2016 §2–3).
//!
//! [`analyze`] runs Pryce's Σ-method on a [`Dae`]: the signature matrix
//! ([`sigma_matrix`]), HVT, canonical offsets and block
//! triangular forms (from `daec-structure`), the symbolic Σ-Jacobian, the
//! reduced derivative array, the array of hidden constraints by level
//! ([`hidden_constraints()`]), Pantelides' algorithm as a cross-check, and
//! the success check at a consistent point ([`consistent_point`]). When the
//! Σ-Jacobian is singular at that point although Σ has a finite HVT, the
//! linear-combination conversion of Tan, Nedialkov & Pryce (2017)
//! ([`Conversion`]) rewrites the DAE until it is not, and the
//! analysis reports the converted structure. Before that, an equation in
//! one unknown alone holds its unknown at an isolated root
//! ([`fix_roots`]): on the branch the consistent point selects, the root is
//! substituted and the reduced DAE analysed ([`RootFixing`]).

mod block_newton;
mod block_rank;
mod consistent;
mod dense;
mod error;
// `emit_rust` stays a namespace: its helpers are named `emit_rust::type_name` etc.
pub mod emit_rust;
mod expand;
mod fixed_roots;
mod forms;
mod formulation;
mod gradients;
mod hidden_constraints;
mod limits;
mod linear_combination;
mod quasi_linear;
mod reanalysis;
mod signature;
mod success_check;

pub use block_rank::BlockRank;
pub use consistent::{ConsistentPoint, Point, ProjectionOptions, consistent_point};
pub use dense::{FullPivLu, LeastNormFactor, Matrix, least_norm_solve};
pub use error::{OtherHvts, Refusal, RegularizeError};
pub use expand::expand;
pub use fixed_roots::{FixedRoot, RootFixing, RootRefusal, fix_roots};
pub use forms::{
    MIN_LEVEL_CONDITIONING, RegularizeOptions, best_hvt, dd_levels, dd_levels_at, dd_log_quality,
    hvt_conditioning, log_kappa, regularize, ste_for_hvt,
};
pub use formulation::{
    ConstraintRow, DiffRow, Form, FormEquation, FormUnknown, Formulation, QuasiLinearForm, RowKind,
    RowSource, UnknownKind,
};
pub use hidden_constraints::{
    ConstraintArray, HiddenConstraint, ReferencePoint, hidden_constraints,
};
pub use limits::Limit;
pub use linear_combination::{Conversion, has_rational_entries};
pub use quasi_linear::{mass_entries, sparse_jacobian};
pub use reanalysis::{reanalyze, reusable};
pub use signature::{DerivativeArray, JacobianEntry, sigma_jacobian, sigma_matrix};
pub use success_check::SuccessCheck;

use daec_expr::ExprId;
use daec_model::Dae;
use daec_structure::{
    HvtEnumeration, PantelidesError, PantelidesResult, SigmaAnalysis, SigmaMatrix,
    StructuralSingularity,
};
use success_check::success_check;

/// Options of [`analyze`].
#[derive(Clone, Debug)]
pub struct AnalyzeOptions {
    /// Enumerate all HVTs when there are at most this many.
    pub hvt_limit: usize,
    /// Largest number of unknowns for which the numerical success check is
    /// dense (determinant, numerical rank and a left null vector of 𝔍).
    pub success_check_max_unknowns: usize,
    /// Largest number of unknowns for which the success check is done at
    /// all (no limit by default; the limit is for tests and callers with a
    /// tighter budget): above
    /// [`success_check_max_unknowns`](Self::success_check_max_unknowns) the
    /// consistent point is found by sparse least-norm steps and 𝔍's
    /// regularity is decided block by block on the fine BTF, with no
    /// determinant or null vector ([`BlockRank`]).
    pub sparse_success_check_max_unknowns: usize,
    /// Largest diagonal block of the fine BTF that the block check of a
    /// large model factorises densely (complete pivoting); larger blocks
    /// get the sparse LU with a pivot test.
    pub dense_block_max: usize,
    /// Largest number of unknowns for which the derivative array and the
    /// hidden constraints are built (no limit by default: their cost grows
    /// linearly with the model; the limit is for tests and callers with a
    /// tighter budget).
    pub constraints_max_unknowns: usize,
    /// Largest number of linear-combination conversions.
    pub max_conversions: usize,
}

impl Default for AnalyzeOptions {
    fn default() -> Self {
        AnalyzeOptions {
            hvt_limit: 16,
            success_check_max_unknowns: 800,
            sparse_success_check_max_unknowns: usize::MAX,
            dense_block_max: 200,
            constraints_max_unknowns: usize::MAX,
            max_conversions: 20,
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
    /// The size limits that made the analysis skip work (the hidden
    /// constraints, the numerical success check).
    pub limits: Vec<Limit>,
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
    /// The unknowns fixed at a root of an equation in them alone, and the
    /// equations in one unknown that could not fix theirs (looked for only
    /// when the Σ-Jacobian of the model as written is singular).
    pub roots: RootFixing,
    /// The analysis of the model as written, when unknowns were fixed at
    /// roots (the residuals above are then the reduced ones).
    pub before_fixing: Option<Box<Analysis>>,
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
    let (roots, before_fixing) = fix_branch_roots(dae, &mut analysis, options);
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
    analysis.roots = roots;
    analysis.before_fixing = before_fixing;
    analysis
}

/// When the Σ-Jacobian is singular at the consistent point, fixes the
/// unknowns of equations in one unknown alone at the roots the consistent
/// point (else the start values) selects and analyses the reduced DAE
/// (see [`fix_roots`]); `analysis` becomes the reduced analysis, and the
/// one it replaces is returned. A reduction that leaves the DAE
/// structurally singular is not kept: its roots are reported as refused.
fn fix_branch_roots(
    dae: &mut Dae,
    analysis: &mut Analysis,
    options: &AnalyzeOptions,
) -> (RootFixing, Option<Box<Analysis>>) {
    let Some(reg) = analysis.regular() else {
        return (RootFixing::default(), None);
    };
    if !reg.success.singular() {
        return (RootFixing::default(), None);
    }
    let point: Option<Vec<f64>> = reg
        .success
        .point
        .as_ref()
        .filter(|p| p.converged)
        .map(|p| p.z.clone());
    let start = start_values(dae);
    let from = |j: usize| {
        point
            .as_ref()
            .and_then(|z| z.get(j).copied())
            .unwrap_or_else(|| start.get(j).copied().unwrap_or(0.0))
    };
    let params = dae.parameter_values();
    let (mut fixing, reduced) = fix_roots(&mut dae.pool, &analysis.residuals, &params, &from);
    let Some(reduced) = reduced else {
        return (fixing, None);
    };
    let next = analyze_residuals(dae, reduced, options);
    if next.regular().is_none() {
        for f in std::mem::take(&mut fixing.fixed) {
            fixing.refused.push(RootRefusal {
                equation: f.equation,
                unknown: f.unknown,
                reason: format!(
                    "with the unknown fixed at its root {} the model is structurally singular",
                    f.value
                ),
            });
        }
        return (fixing, None);
    }
    let before = std::mem::replace(analysis, next);
    (fixing, Some(Box::new(before)))
}

/// The start point of `dae` ([`Dae::start_point`]: the start values, and
/// for unknowns without one the values the equations give them from the
/// others): the reference point of the analysis.
pub(crate) fn start_values(dae: &Dae) -> Vec<f64> {
    dae.start_point()
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
                roots: RootFixing::default(),
                before_fixing: None,
            };
        }
    };
    let jacobian = sigma_jacobian(&mut dae.pool, &residuals, &sigma, &sa.offsets);
    // The memo of the Jacobian's partial derivatives (an entry per node of
    // each residual and tight leaf) is not read again: free it before the
    // derivative array and the success check allocate theirs.
    dae.pool.forget_partial_derivatives();
    let params = dae.parameter_values();
    let start = start_values(dae);
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
    let mut limits: Vec<Limit> = Limit::check(
        "hidden constraints",
        options.constraints_max_unknowns,
        n,
        || "the derivative array and the hidden constraints were not built".into(),
    )
    .into_iter()
    .collect();
    limits.extend(Limit::check(
        "success check",
        options.sparse_success_check_max_unknowns,
        n,
        || "the numerical success check (consistent point, regularity of the Σ-Jacobian) was not performed".into(),
    ));
    let success = success_check(
        dae,
        &jacobian,
        constraints.as_ref(),
        &orders,
        &start,
        &params,
        t0,
        &sa.fine_btf,
        options,
    );
    // The HVT enumeration and Pantelides' algorithm read Σ alone: run
    // after the success check, their results and scratch are not held
    // beside its consistent point, where the analysis peaks in memory.
    let hvts = daec_structure::all_hvts_of_analysis(&sigma, &sa, options.hvt_limit);
    let pantelides = daec_structure::pantelides(&sigma);
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
            limits,
        })),
        conversions: Vec::new(),
        before_conversion: None,
        roots: RootFixing::default(),
        before_fixing: None,
    }
}
