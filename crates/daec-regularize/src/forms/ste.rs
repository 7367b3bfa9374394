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

use super::{err, regular, replaced_array, replacement, row_label};
use crate::Analysis;
use crate::dense::{FullPivLu, Matrix};
use crate::formulation::{Form, Formulation, RegularizeError, UnknownKind};
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
    let reg = regular(dae, analysis, form)?;
    if reg.success.singular() {
        return Err(err(
            form,
            "the Σ-Jacobian is singular at the consistent point, so no HVT gives a valid structural extension there (see `daec analyze`)",
        ));
    }
    let hvt = match &reg.success.jacobian {
        Some(jm) => {
            let weights: Vec<(usize, usize, f64)> = reg
                .jacobian
                .iter()
                .map(|e| (e.row, e.col, jm.get(e.row, e.col)))
                .collect();
            hvt_from_weights(dae.unknowns.len(), &weights)?
        }
        None => {
            let params = dae.parameter_values();
            let start: Vec<f64> = dae
                .unknowns
                .iter()
                .map(|u| u.start.unwrap_or(0.0))
                .collect();
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
    let Some(values) = point_values(dae, reg) else {
        return Ok(first);
    };
    let dependent = match n_ok(dae, &first, &values) {
        Some(Err(rows)) => rows,
        _ => return Ok(first),
    };
    let env = Values {
        v: &values,
        f: None,
        params: dae.parameter_values(),
        t: dae.experiment.start_time.unwrap_or(0.0),
    };
    let n = dae.unknowns.len();
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
    let first_rows = if dependent.is_empty() {
        String::new()
    } else {
        format!(" (its rows {} are dependent there)", dependent.join(", "))
    };
    let others = match (&reg.hvts.count, tried) {
        (HvtCount::Exact(n), 0) if *n <= 1 => String::new(),
        (_, 0) if reg.hvts.hvts.is_empty() => format!(
            "; the other HVTs were not tried: there are {}, too many to enumerate",
            match reg.hvts.count {
                HvtCount::Exact(n) => n.to_string(),
                HvtCount::AtLeast(n) => format!("at least {n}"),
            }
        ),
        (_, k) => format!(", and for the {k} other enumerated HVTs with κ_T ≠ 0"),
    };
    Err(err(
        Form::Ste,
        format!(
            "the Σ-Jacobian of the structurally extended system is singular at the consistent point for the HVT with the largest κ_T{first_rows}{others}. κ_T = Π|𝔍_ij| is a heuristic (Steinbrecher 2016, §3.1) that does not see a singular block of the constraints' Jacobian; `--form hic` (the default), `ada` and `dd` choose their complement numerically"
        ),
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

/// Largest formulation whose Σ-Jacobian is checked densely.
const CHECK_MAX: usize = 800;

/// Whether the Σ-method succeeds on the formulation `f` at the point:
/// `Some(Err(rows))` when its Σ-Jacobian is singular there, with the
/// labels (`F8'`) of the rows of a left null vector (the dependent rows),
/// `None` when not checked (too large, or structurally singular —
/// reported elsewhere).
fn n_ok(
    dae: &mut Dae,
    f: &Formulation,
    values: &FxHashMap<(u32, u32), f64>,
) -> Option<Result<(), Vec<String>>> {
    let m = f.unknowns.len();
    if m > CHECK_MAX || f.equations.len() != m {
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
    let mut jm = Matrix::zeros(m, m);
    for e in &jac {
        jm.set(e.row, e.col, dae.pool.eval(e.expr, &env));
    }
    if FullPivLu::new(&jm, 1e-10).rank == m {
        return Some(Ok(()));
    }
    let left = FullPivLu::new(&jm.transpose(), 1e-10).null_vector();
    let big = left
        .as_ref()
        .map_or(0.0, |y| y.iter().fold(0.0f64, |a, v| a.max(v.abs())));
    let rows = left
        .iter()
        .flatten()
        .enumerate()
        .filter(|(_, v)| v.abs() > 1e-3 * big)
        .map(|(i, _)| {
            let label = row_label(dae, &f.equations[i]);
            label.split(" (").next().unwrap_or_default().to_string()
        })
        .collect();
    Some(Err(rows))
}

fn hvt_from_weights(
    n: usize,
    weights: &[(usize, usize, f64)],
) -> Result<Vec<usize>, RegularizeError> {
    let Some(col_of_row) = daec_structure::max_weight_tight_transversal(n, weights) else {
        return Err(err(
            Form::Ste,
            "the Σ-Jacobian is singular at the point: no HVT has a non-zero weight κ_T = Π|𝔍_ij|",
        ));
    };
    let mut hvt = vec![usize::MAX; n];
    for (i, &j) in col_of_row.iter().enumerate() {
        if j < n {
            hvt[j] = i;
        }
    }
    if hvt.contains(&usize::MAX) {
        return Err(err(Form::Ste, "no complete transversal of the Σ-Jacobian"));
    }
    Ok(hvt)
}

/// The HVT `T*` with the largest `κ_T = Π|𝔍_ij|` at the point `env`
/// (values of `t`, the unknowns and their derivatives), as `hvt[j] = i`.
/// An error when every HVT has `κ_T = 0` there (𝔍 singular).
pub fn best_hvt(
    pool: &ExprPool,
    analysis: &Analysis,
    env: &dyn Env,
) -> Result<Vec<usize>, RegularizeError> {
    let Some(reg) = analysis.regular() else {
        return Err(err(Form::Ste, "the model is structurally singular"));
    };
    let weights: Vec<(usize, usize, f64)> = reg
        .jacobian
        .iter()
        .map(|e| (e.row, e.col, pool.eval(e.expr, env)))
        .collect();
    hvt_from_weights(analysis.sigma.n_cols(), &weights)
}

/// `log κ_T = Σ_j log|𝔍_{hvt[j], j}|` at `env` (−∞ when an entry is 0 or
/// `hvt` is not a transversal of the tight positions).
pub fn log_kappa(pool: &ExprPool, analysis: &Analysis, hvt: &[usize], env: &dyn Env) -> f64 {
    let Some(reg) = analysis.regular() else {
        return f64::NEG_INFINITY;
    };
    let mut sum = 0.0;
    for (j, &i) in hvt.iter().enumerate() {
        match reg.jacobian.iter().find(|e| e.row == i && e.col == j) {
            Some(e) => sum += pool.eval(e.expr, env).abs().ln(),
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
            format!("the HVT has {} entries for {n} unknowns", hvt.len()),
        ));
    }
    let mut used = vec![false; n];
    let mut keep = vec![0u32; n];
    for (j, &i) in hvt.iter().enumerate() {
        if i >= n || used[i] {
            return Err(err(form, "the given HVT is not a permutation"));
        }
        used[i] = true;
        match analysis.sigma.get(i, j) {
            Some(s) if d[j] as i64 - c[i] as i64 == s as i64 => keep[j] = s,
            _ => {
                return Err(err(
                    form,
                    format!(
                        "({}, {}) of the given HVT is not a tight position of Σ (d_j − c_i = σ_ij)",
                        i + 1,
                        j + 1
                    ),
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
    })
}
