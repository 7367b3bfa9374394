//! Why an integration stopped: is the *model* singular there?
//!
//! The Σ-method's results — index, offsets, hidden constraints, which
//! unknowns are states — hold where the Σ-Jacobian 𝔍 of the DAE is
//! nonsingular (steinbrecher2016 §2, Pryce 2001). A model that is only
//! locally valid (a structurally extended form written out as a model,
//! e.g. the pendulum's S2 (24), valid while `y ≠ 0`) reaches a point where
//! 𝔍 becomes singular; there no formulation of it (HiC, ADA, StE, DD,
//! DI1) can continue, and the integrator reports a rank loss or a step
//! size too small. When a run fails, [`SigmaJacobian::explain`] compares 𝔍
//! at the last good point with 𝔍 at the start and, when it has become
//! nearly singular, says so and names the unknowns and equations of the
//! near-null directions, so the failure is not mistaken for a tolerance
//! or step-size problem.

use crate::places;
use daec_diag::Label;
use daec_expr::{Env, ParamId};
use daec_model::Dae;
use daec_regularize::Analysis;
use daec_regularize::JacobianEntry;
use daec_regularize::{FullPivLu, Limit, Matrix};

/// Largest model whose 𝔍 is factorised (densely, on a failure only).
const DENSE_MAX: usize = 400;

/// The ratio of the smallest to the largest pivot of 𝔍 may drop by this
/// factor from the start before the failure is blamed on the model.
const DROP: f64 = 1e-4;

/// The symbolic Σ-Jacobian of a model, kept to diagnose failures.
#[derive(Debug, Clone)]
pub(crate) struct SigmaJacobian {
    entries: Vec<JacobianEntry>,
    n: usize,
}

/// `z_j` and `ż_j` of the model's unknowns at a point; higher derivatives
/// are unknown (NaN: the diagnosis is then skipped).
struct Point<'a> {
    z: &'a [f64],
    zdot: &'a [f64],
    params: &'a [f64],
    t: f64,
}

impl Env for Point<'_> {
    fn var(&self, unknown: u32, order: u32) -> f64 {
        let j = unknown as usize;
        match order {
            0 => self.z.get(j).copied().unwrap_or(f64::NAN),
            1 => self.zdot.get(j).copied().unwrap_or(f64::NAN),
            _ => f64::NAN,
        }
    }
    fn param(&self, p: ParamId) -> f64 {
        self.params.get(p.0 as usize).copied().unwrap_or(f64::NAN)
    }
    fn time(&self) -> f64 {
        self.t
    }
}

/// 𝔍 at a point: smallest/largest pivot of a complete-pivoting LU, and
/// the factorisation with the smallest pivot counted as zero (for the
/// near-null vectors).
struct Conditioning {
    ratio: f64,
    matrix: Matrix,
}

impl SigmaJacobian {
    /// The Σ-Jacobian of `analysis` (`None` for structurally singular or
    /// large models: see [`SigmaJacobian::limit`]).
    pub(crate) fn new(analysis: &Analysis) -> Option<SigmaJacobian> {
        let reg = analysis.regular()?;
        let n = reg.sigma.offsets.c.len();
        (n > 0 && n <= DENSE_MAX).then(|| SigmaJacobian {
            entries: reg.jacobian.clone(),
            n,
        })
    }

    /// The size limit of the diagnosis when the regular model of
    /// `analysis` is too large for [`SigmaJacobian::new`]: reported with
    /// a failed run, whose cause is then not checked against 𝔍.
    pub(crate) fn limit(analysis: &Analysis) -> Option<Limit> {
        let n = analysis.regular()?.sigma.offsets.c.len();
        Limit::check("singularity diagnosis", DENSE_MAX, n, || {
            "the failure was not checked for a nearly singular Σ-Jacobian of the model (a dense complete-pivoting LU)".into()
        })
    }

    fn at(&self, dae: &Dae, t: f64, z: &[f64], zdot: &[f64]) -> Option<Conditioning> {
        let params = dae.parameter_values();
        let env = Point {
            z,
            zdot,
            params: &params,
            t,
        };
        let mut a = Matrix::zeros(self.n, self.n);
        for e in &self.entries {
            let v = dae.pool.eval(e.expr, &env);
            if !v.is_finite() {
                return None;
            }
            a.set(e.row, e.col, v);
        }
        let pivots = FullPivLu::new(&a, 0.0).pivots();
        if pivots.len() < self.n {
            // Exactly singular: ratio 0.
            return Some(Conditioning {
                ratio: 0.0,
                matrix: a,
            });
        }
        let max = pivots.iter().copied().fold(0.0f64, f64::max);
        let min = pivots.iter().copied().fold(f64::INFINITY, f64::min);
        (max > 0.0).then_some(Conditioning {
            ratio: min / max,
            matrix: a,
        })
    }

    /// When 𝔍 at the last good point `(t, z, ż)` (the model's unknowns
    /// first in `z`) is nearly singular compared with the start
    /// `(t0, z0, ż0)`, a sentence saying so that names the unknowns and
    /// equations involved, and labels on those equations; `None` when 𝔍
    /// is as regular as at the start (the failure has another cause) or
    /// cannot be evaluated.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn explain(
        &self,
        dae: &Dae,
        t0: f64,
        z0: &[f64],
        zdot0: &[f64],
        t: f64,
        z: &[f64],
        zdot: &[f64],
    ) -> Option<(String, Vec<Label>)> {
        let start = self.at(dae, t0, z0, zdot0)?;
        let now = self.at(dae, t, z, zdot)?;
        if start.ratio <= 0.0 || now.ratio >= DROP * start.ratio {
            return None;
        }
        let unknowns = near_null(&now.matrix, now.ratio)
            .map(|v| {
                let names: Vec<String> = v
                    .iter()
                    .map(|&j| format!("`{}`", dae.unknowns.get(j).map_or("?", |u| u.name.as_str())))
                    .collect();
                format!("; near-null direction in {}", names.join(", "))
            })
            .unwrap_or_default();
        let rows = near_null(&now.matrix.transpose(), now.ratio).unwrap_or_default();
        let equations = if rows.is_empty() {
            String::new()
        } else {
            let named: Vec<String> = rows.iter().map(|&i| places::equation(dae, i)).collect();
            format!(" and {}", named.join(", "))
        };
        let labels = rows
            .iter()
            .filter_map(|&i| {
                places::equation_label(
                    dae,
                    i,
                    format!(
                        "its row of the Σ-Jacobian is nearly dependent on the others at t = {}",
                        daec_solve::readable_number(t)
                    ),
                )
            })
            .collect();
        let text = format!(
            "the model's Σ-Jacobian is nearly singular at t = {t} (smallest/largest pivot {:.1e}, {:.1e} at the start{unknowns}{equations}): the DAE as written is not regular there — its index, hidden constraints and states hold only where the Σ-Jacobian is nonsingular — so no formulation integrates past this point; a model that is only locally valid (e.g. a structurally extended form written out) must be replaced by the original DAE, whose StE and DD forms switch variants along the solution",
            now.ratio,
            start.ratio,
            t = daec_solve::readable_number(t)
        );
        Some((text, labels))
    }
}

/// The indices of the large components (≥ 0.1 of the largest) of a unit
/// vector `x` with `a x ≈ 0`, the smallest pivot of `a` (relative
/// `ratio`) counted as zero.
fn near_null(a: &Matrix, ratio: f64) -> Option<Vec<usize>> {
    let lu = FullPivLu::new(a, 0.0);
    let pivots = lu.pivots();
    let max = pivots.iter().copied().fold(0.0f64, f64::max);
    let tol = (ratio * max * (1.0 + 1e-9)) / a.max_abs().max(f64::MIN_POSITIVE);
    let x = FullPivLu::new(a, tol).null_vector()?;
    let big = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let idx: Vec<usize> = x
        .iter()
        .enumerate()
        .filter(|(_, v)| v.abs() >= 0.1 * big)
        .map(|(j, _)| j)
        .collect();
    (!idx.is_empty() && idx.len() <= 8).then_some(idx)
}
