//! The structurally extended (StE) formulation, steinbrecher2016 §3.1,
//! eq. (22), and the choice of its HVT `T*` by the weighting coefficient
//! `κ_T = Π_{(i,j)∈T} |𝔍_ij|`.
//!
//! For each unknown `j` with `(i, j) ∈ T*`, the derivatives
//! `z_j^(σ_ij+1), …, z_j^(d_j)` of the reduced derivative array (4) are
//! replaced by new algebraic unknowns ψ_j^l (named `psi_x_l`); the result
//! has `n + Σc_i` equations in as many unknowns, `c̃ = 0` and structural
//! index ≤ 1 while its Σ-Jacobian is nonsingular (Examples 3.1, 3.2: the
//! pendulum's S1 (23) and S2 (24), the spring chain's (27) and (28)).
//!
//! `T*` maximises `κ_T`, i.e. `Σ log|𝔍_ij|` over the transversals of the
//! tight positions (`d_j − c_i = σ_ij`; every such transversal is an HVT),
//! an assignment problem solved by
//! [`daec_structure::max_weight_tight_transversal`] — no enumeration of
//! HVTs. Since an StE form is valid only near points where its Σ-Jacobian
//! is nonsingular (the pendulum's S1 needs `x ≠ 0`, S2 `y ≠ 0`), the
//! integrator re-evaluates [`best_hvt`] at step starts and switches to
//! [`ste_for_hvt`] of the new `T*` (dynamic state selection, §3.1 and
//! Ex. 5.1); [`log_kappa`] compares the current and the best HVT.
//!
//! `κ_T` is a product of single entries and cannot see a singular block:
//! on Andrews' squeezer the `κ_T`-best HVT makes dummies of β, Θ, γ, Φ in
//! four position constraints that are dependent in them. So the choice is
//! guarded by the dummies' conditioning ([`hvt_conditioning`]: the
//! determinants of DD's blocks `𝔍[R_k, S_k]` for the HVT's dummies against
//! those of Mattsson–Söderlind pivoting, [`super::dd`]), with the HVT of
//! the pivoted dummies as the alternative.

use super::{err, regular, replaced_array, replacement};
use crate::Analysis;
use crate::dense::{FullPivLu, Matrix};
use crate::error::{OtherHvts, Refusal, RegularizeError};
use crate::formulation::{Form, Formulation, RowSource, UnknownKind};
use crate::hidden_constraints::ReferencePoint;
use crate::signature::{sigma_jacobian, sigma_matrix};
use daec_expr::ParamId;
use daec_expr::{Env, ExprPool};
use daec_model::Dae;
use daec_structure::HvtCount;
use rustc_hash::FxHashMap;

/// The StE formulation on the HVT `T*` chosen by `κ_T` at the consistent
/// point of the analysis' success check (at the start values, with zero
/// derivatives, when the check was not performed). Where the check was
/// made, the extension's own Σ-Jacobian is verified to be nonsingular at
/// that point (ψ = Ω(t, z)); when it is not, the other enumerated HVTs are
/// tried by decreasing `κ_T`, and the form is refused when none works.
pub fn ste(dae: &mut Dae, analysis: &Analysis) -> Result<Formulation, RegularizeError> {
    let form = Form::Ste;
    // (`regular` refuses a Σ-Jacobian singular at the consistent point)
    let reg = regular(dae, analysis, form)?;
    // 𝔍 at the consistent point: from the dense success check, else
    // evaluated there (the sparse check keeps no values).
    let values = point_values(dae, reg);
    let weights: Option<Vec<(usize, usize, f64)>> = match (&reg.success.jacobian, &values) {
        (Some(jm), _) => Some(
            reg.jacobian
                .iter()
                .map(|e| (e.row, e.col, jm.get(e.row, e.col)))
                .collect(),
        ),
        (None, Some(v)) => {
            let env = Values {
                v,
                f: None,
                params: dae.parameter_values(),
                t: dae.experiment.start_time.unwrap_or(0.0),
            };
            Some(jacobian_at(reg, &dae.pool, &env))
        }
        (None, None) => None,
    };
    let hvt = match &weights {
        Some(weights) => regular_best_hvt(analysis, weights, &reg.sigma.offsets.c)?,
        None => {
            let params = dae.parameter_values();
            let start = crate::start_values(dae);
            let env = ReferencePoint {
                z: &start,
                params: &params,
                t: dae.experiment.start_time.unwrap_or(0.0),
            };
            best_hvt(&dae.pool, analysis, &env)?
        }
    };
    let first = ste_for_hvt(dae, analysis, &hvt)?;
    // Verify at the consistent point that the extension's own Σ-Jacobian is
    // nonsingular (κ_T is a heuristic, §3.1); if it is not, try the other
    // HVTs of the enumeration by decreasing κ_T.
    let Some(values) = values else {
        return Ok(first);
    };
    let dependent = match n_ok(dae, &first, &values) {
        Some(Err(rows)) => rows,
        _ => return Ok(first),
    };
    let n = dae.unknowns.len();
    // The HVT with Mattsson–Söderlind's dummies (see `pivoted_hvt`).
    if let Some(h) = weights
        .as_deref()
        .and_then(|w| pivoted_hvt(analysis, w, &reg.sigma.offsets.c))
        .filter(|h| *h != hvt)
    {
        let f = ste_for_hvt(dae, analysis, &h)?;
        if n_ok(dae, &f, &values) == Some(Ok(())) {
            return Ok(f);
        }
    }
    let env = Values {
        v: &values,
        f: None,
        params: dae.parameter_values(),
        t: dae.experiment.start_time.unwrap_or(0.0),
    };
    let mut candidates: Vec<(f64, Vec<usize>)> = reg
        .hvts
        .hvts
        .iter()
        .map(|col_of_row| {
            let mut h = vec![0usize; n];
            for (i, &j) in col_of_row.iter().enumerate() {
                if j < n {
                    h[j] = i;
                }
            }
            (log_kappa(&dae.pool, analysis, &h, &env), h)
        })
        .filter(|(k, h)| k.is_finite() && *h != hvt)
        .collect();
    candidates.sort_by(|a, b| b.0.total_cmp(&a.0));
    let tried = candidates.len();
    for (_, h) in candidates {
        let f = ste_for_hvt(dae, analysis, &h)?;
        if n_ok(dae, &f, &values) == Some(Ok(())) {
            return Ok(f);
        }
    }
    let others = match (&reg.hvts.count, tried) {
        (HvtCount::Exact(n), 0) if *n <= 1 => OtherHvts::None,
        (&count, 0) if reg.hvts.hvts.is_empty() => OtherHvts::NotEnumerated(count),
        (_, k) => OtherHvts::Tried(k),
    };
    Err(err(
        Form::Ste,
        Refusal::SingularExtension {
            dependent_rows: dependent,
            others,
        },
    ))
}

/// Values `z_j^(l)` at the analysis' consistent point: the state from the
/// projection, the derivatives from `Ω(t, z)` (Remark 2.4, eq. (8)).
fn point_values(dae: &Dae, reg: &crate::Regular) -> Option<FxHashMap<(u32, u32), f64>> {
    let point = reg.success.point.as_ref()?;
    let ca = reg.constraints.as_ref()?;
    let n = dae.unknowns.len();
    if point.z.len() < n {
        return None;
    }
    let params = dae.parameter_values();
    let t = dae.experiment.start_time.unwrap_or(0.0);
    let mut values: FxHashMap<(u32, u32), f64> = FxHashMap::default();
    for (j, &x) in point.z[..n].iter().enumerate() {
        values.insert((j as u32, 0), x);
    }
    let env = Values {
        v: &values,
        f: None,
        params: params.clone(),
        t,
    };
    let mut keys: Vec<(u32, u32)> = ca.derivatives.keys().copied().collect();
    keys.sort_unstable();
    let derivs: Vec<((u32, u32), f64)> = keys
        .into_iter()
        .map(|k| (k, dae.pool.eval(ca.derivatives[&k], &env)))
        .collect();
    values.extend(derivs);
    Some(values)
}

/// Point values as an [`Env`]; with `f`, unknowns `k ≥ n` of the
/// formulation are the derivatives they stand for.
struct Values<'a> {
    v: &'a FxHashMap<(u32, u32), f64>,
    f: Option<&'a Formulation>,
    params: Vec<f64>,
    t: f64,
}

impl Env for Values<'_> {
    fn var(&self, unknown: u32, order: u32) -> f64 {
        if let Some(f) = self.f
            && let Some(u) = f.unknowns.get(unknown as usize)
            && let UnknownKind::Derivative {
                unknown: j,
                order: l,
            } = u.kind
        {
            return if order == 0 {
                self.v.get(&(j as u32, l)).copied().unwrap_or(0.0)
            } else {
                f64::NAN
            };
        }
        self.v.get(&(unknown, order)).copied().unwrap_or(0.0)
    }
    fn param(&self, p: ParamId) -> f64 {
        self.params.get(p.0 as usize).copied().unwrap_or(f64::NAN)
    }
    fn time(&self) -> f64 {
        self.t
    }
}

/// Largest formulation whose Σ-Jacobian is checked densely (a complete
/// pivoting LU, whose left null vector names the dependent rows of a
/// singular one); larger ones are checked by the sparse LU.
const DENSE_CHECK_MAX: usize = 800;

/// Relative pivot below which the Σ-Jacobian of the extension counts as
/// singular (of the largest entry for the dense LU, of the row's largest
/// for the sparse one).
const CHECK_TOL: f64 = 1e-10;

/// Whether the Σ-method succeeds on the formulation `f` at the point
/// (steinbrecher2016 §3.1: (22) is a regularization while its Σ-Jacobian
/// is nonsingular): `Some(Err(rows))` when its Σ-Jacobian is singular
/// there, with the derivative-array rows of a left null vector (the
/// dependent rows; none named above [`DENSE_CHECK_MAX`] unknowns, where
/// the rank is decided by the sparse LU), `None` when not checked
/// (structurally singular — reported elsewhere).
fn n_ok(
    dae: &mut Dae,
    f: &Formulation,
    values: &FxHashMap<(u32, u32), f64>,
) -> Option<Result<(), Vec<RowSource>>> {
    let m = f.unknowns.len();
    if f.equations.len() != m {
        return None;
    }
    let res: Vec<_> = f.equations.iter().map(|e| e.residual).collect();
    let s = sigma_matrix(&dae.pool, &res, m);
    let sa = daec_structure::analyze(&s).ok()?;
    let jac = sigma_jacobian(&mut dae.pool, &res, &s, &sa.offsets);
    let env = Values {
        v: values,
        f: Some(f),
        params: dae.parameter_values(),
        t: dae.experiment.start_time.unwrap_or(0.0),
    };
    if m > DENSE_CHECK_MAX {
        let entries: Vec<(usize, usize, f64)> = jac
            .iter()
            .map(|e| (e.row, e.col, dae.pool.eval(e.expr, &env)))
            .collect();
        return Some(match super::sparse_lu(m, &entries, Some(CHECK_TOL)) {
            Some(_) => Ok(()),
            None => Err(Vec::new()),
        });
    }
    let mut jm = Matrix::zeros(m, m);
    for e in &jac {
        jm.set(e.row, e.col, dae.pool.eval(e.expr, &env));
    }
    if FullPivLu::new(&jm, CHECK_TOL).rank == m {
        return Some(Ok(()));
    }
    let left = FullPivLu::new(&jm.transpose(), CHECK_TOL).null_vector();
    let big = left
        .as_ref()
        .map_or(0.0, |y| y.iter().fold(0.0f64, |a, v| a.max(v.abs())));
    let rows = left
        .iter()
        .flatten()
        .enumerate()
        .filter(|(_, v)| v.abs() > 1e-3 * big)
        .map(|(i, _)| f.equations[i].source)
        .collect();
    Some(Err(rows))
}

/// 𝔍's entries as the map DD's choice works on.
fn jacobian_map(weights: &[(usize, usize, f64)]) -> FxHashMap<(usize, usize), f64> {
    weights.iter().map(|&(i, j, v)| ((i, j), v)).collect()
}

/// How well the HVT `hvt` (`hvt[j] = i`) conditions its dummies at the
/// point, relative to the dummy derivatives of Mattsson–Söderlind
/// pivoting (`dd::choose_levels`): StE on `hvt` makes dummies of the
/// `c_{hvt[j]}` highest derivatives of unknown `j`, the same replacement
/// as DD with those levels, so both are valid where the blocks
/// `𝔍[R_k, S_k]` are nonsingular; the ratio of their determinants
/// (`dd::log_quality`): 0 when a block is singular, about 1 (or more) for
/// an equally good choice. This is what `κ_T = Π|𝔍_ij|` — a product of
/// single entries — cannot see: on Andrews' squeezer the `κ_T`-best HVT
/// takes β, Θ, γ, Φ as the dummies of four position constraints whose
/// Jacobian in them is singular at the start.
fn level_conditioning(
    analysis: &Analysis,
    weights: &[(usize, usize, f64)],
    c: &[u32],
    hvt: &[usize],
) -> f64 {
    let n = c.len();
    if hvt.len() != n || hvt.iter().any(|&i| i >= n) {
        return 0.0;
    }
    let jac = jacobian_map(weights);
    let Ok(reference) = super::dd::choose_levels(analysis, &jac) else {
        return 0.0;
    };
    let own: Vec<u32> = hvt.iter().map(|&i| c[i]).collect();
    let q = super::dd::log_quality(analysis, &jac, &own)
        - super::dd::log_quality(analysis, &jac, &reference);
    if q.is_nan() { 0.0 } else { q.exp() }
}

/// Below this `level_conditioning` an HVT is not used: the StE variant
/// of the `κ_T`-best HVT is replaced by the pivoted one, and the dynamic
/// state selection leaves a variant that fell below it.
pub const MIN_LEVEL_CONDITIONING: f64 = 0.1;

/// The HVT with the dummies of Mattsson–Söderlind pivoting
/// (`dd::choose_levels`) instead of `κ_T` alone: unknown `j` with `K_j`
/// dummy derivatives may only be matched to a row with `c_i = K_j`; among
/// those transversals the one of largest `κ_T`. `None` when the pivoting
/// fails or the restricted pattern has no transversal.
fn pivoted_hvt(
    analysis: &Analysis,
    weights: &[(usize, usize, f64)],
    c: &[u32],
) -> Option<Vec<usize>> {
    let n = c.len();
    let dummies = super::dd::choose_levels(analysis, &jacobian_map(weights)).ok()?;
    let allowed: Vec<(usize, usize, f64)> = weights
        .iter()
        .copied()
        .filter(|&(i, j, _)| i < n && j < n && c[i] == dummies[j])
        .collect();
    hvt_from_weights(n, &allowed).ok()
}

/// The HVT of largest `κ_T` (steinbrecher2016 §3.1) when it conditions
/// its dummies well enough ([`level_conditioning`] at least
/// [`MIN_LEVEL_CONDITIONING`]), else the pivoted one ([`pivoted_hvt`]),
/// else the `κ_T`-best after all.
fn regular_best_hvt(
    analysis: &Analysis,
    weights: &[(usize, usize, f64)],
    c: &[u32],
) -> Result<Vec<usize>, RegularizeError> {
    let best = hvt_from_weights(c.len(), weights)?;
    if level_conditioning(analysis, weights, c, &best) >= MIN_LEVEL_CONDITIONING {
        return Ok(best);
    }
    Ok(pivoted_hvt(analysis, weights, c).unwrap_or(best))
}

fn hvt_from_weights(
    n: usize,
    weights: &[(usize, usize, f64)],
) -> Result<Vec<usize>, RegularizeError> {
    let Some(col_of_row) = daec_structure::max_weight_tight_transversal(n, weights) else {
        return Err(err(Form::Ste, Refusal::NoWeightedHvt));
    };
    let mut hvt = vec![usize::MAX; n];
    for (i, &j) in col_of_row.iter().enumerate() {
        if j < n {
            hvt[j] = i;
        }
    }
    if hvt.contains(&usize::MAX) {
        return Err(err(Form::Ste, Refusal::NoCompleteTransversal));
    }
    Ok(hvt)
}

/// The HVT `T*` with the largest `κ_T = Π|𝔍_ij|` at the point `env`
/// (values of `t`, the unknowns and their derivatives), as `hvt[j] = i`,
/// when its dummies are well conditioned there ([`hvt_conditioning`]);
/// else the HVT with the dummies of Mattsson–Söderlind pivoting. An error when every HVT has `κ_T = 0` there (𝔍
/// singular).
pub fn best_hvt(
    pool: &ExprPool,
    analysis: &Analysis,
    env: &dyn Env,
) -> Result<Vec<usize>, RegularizeError> {
    let Some(reg) = analysis.regular() else {
        return Err(err(Form::Ste, super::structurally_singular(analysis)));
    };
    let weights = jacobian_at(reg, pool, env);
    regular_best_hvt(analysis, &weights, &reg.sigma.offsets.c)
}

/// The Σ-Jacobian's entries `(row, col, 𝔍_ij)` at `env`.
fn jacobian_at(reg: &crate::Regular, pool: &ExprPool, env: &dyn Env) -> Vec<(usize, usize, f64)> {
    reg.jacobian
        .iter()
        .map(|e| (e.row, e.col, pool.eval(e.expr, env)))
        .collect()
}

/// `level_conditioning` of `hvt` at `env`: how well its StE variant
/// conditions its dummies there, relative to Mattsson–Söderlind
/// pivoting's choice (0: singular). The dynamic state selection leaves a variant
/// below [`MIN_LEVEL_CONDITIONING`] even when no other HVT dominates it by
/// `κ_T`.
pub fn hvt_conditioning(pool: &ExprPool, analysis: &Analysis, hvt: &[usize], env: &dyn Env) -> f64 {
    let Some(reg) = analysis.regular() else {
        return 0.0;
    };
    let weights = jacobian_at(reg, pool, env);
    level_conditioning(analysis, &weights, &reg.sigma.offsets.c, hvt)
}

/// `log κ_T = Σ_j log|𝔍_{hvt[j], j}|` at `env` (−∞ when an entry is 0 or
/// `hvt` is not a transversal of the tight positions).
pub fn log_kappa(pool: &ExprPool, analysis: &Analysis, hvt: &[usize], env: &dyn Env) -> f64 {
    let Some(reg) = analysis.regular() else {
        return f64::NEG_INFINITY;
    };
    let mut entry: FxHashMap<(usize, usize), daec_expr::ExprId> = FxHashMap::default();
    for e in &reg.jacobian {
        entry.entry((e.row, e.col)).or_insert(e.expr);
    }
    let mut sum = 0.0;
    for (j, &i) in hvt.iter().enumerate() {
        match entry.get(&(i, j)) {
            Some(&e) => sum += pool.eval(e, env).abs().ln(),
            None => return f64::NEG_INFINITY,
        }
    }
    sum
}

/// The StE formulation (22) on the given HVT (`hvt[j] = i`: unknown `j`
/// matched to equation `i`), which must be a transversal of Σ's tight
/// positions.
pub fn ste_for_hvt(
    dae: &mut Dae,
    analysis: &Analysis,
    hvt: &[usize],
) -> Result<Formulation, RegularizeError> {
    let form = Form::Ste;
    let reg = regular(dae, analysis, form)?;
    let n = dae.unknowns.len();
    let (c, d) = (&reg.sigma.offsets.c, &reg.sigma.offsets.d);
    if hvt.len() != n {
        return Err(err(
            form,
            Refusal::HvtLength {
                entries: hvt.len(),
                unknowns: n,
            },
        ));
    }
    let mut used = vec![false; n];
    let mut keep = vec![0u32; n];
    for (j, &i) in hvt.iter().enumerate() {
        if i >= n || used[i] {
            return Err(err(form, Refusal::HvtNotPermutation));
        }
        used[i] = true;
        match analysis.sigma.get(i, j) {
            Some(s) if d[j] as i64 - c[i] as i64 == s as i64 => keep[j] = s,
            _ => {
                return Err(err(
                    form,
                    Refusal::HvtNotTight {
                        equation: i,
                        unknown: j,
                    },
                ));
            }
        }
    }
    let d = d.clone();
    let (added, map) = replacement(dae, &d, &keep, "psi");
    let equations = replaced_array(dae, reg, &map);
    let mut unknowns = super::original_unknowns(dae);
    unknowns.extend(added);
    Ok(Formulation {
        form,
        unknowns,
        equations,
        hvt: Some(hvt.to_vec()),
        limits: Vec::new(),
    })
}
