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
use daec_regularize::{FullPivLu, Matrix};

/// Largest model whose 𝔍 is factorised densely (complete pivoting, on a
/// failure only); larger ones by the sparse LU, with a condition estimate.
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

/// 𝔍 at a point: up to [`DENSE_MAX`] unknowns the smallest/largest pivot
/// of a complete-pivoting LU and the matrix (for the near-null vectors);
/// above, the reciprocal condition number `1/(‖𝔍‖₁ ‖𝔍⁻¹‖₁)` of the sparse
/// LU (the Hager–Higham estimate of `‖𝔍⁻¹‖₁`,
/// [`daec_solve::SparseRealLu::inverse_norm1_estimate`]) and its factors.
/// Either ratio is 0 for a singular 𝔍 and compared only with itself at
/// the start.
struct Conditioning {
    ratio: f64,
    factors: Factors,
}

/// The factorised 𝔍 of a [`Conditioning`].
enum Factors {
    Dense(Matrix),
    Sparse(Option<Box<daec_solve::SparseRealLu>>),
}

impl SigmaJacobian {
    /// The Σ-Jacobian of `analysis` (`None` for a structurally singular
    /// model).
    pub(crate) fn new(analysis: &Analysis) -> Option<SigmaJacobian> {
        let reg = analysis.regular()?;
        let n = reg.sigma.offsets.c.len();
        (n > 0).then(|| SigmaJacobian {
            entries: reg.jacobian.clone(),
            n,
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
        let mut values = Vec::with_capacity(self.entries.len());
        for e in &self.entries {
            let v = dae.pool.eval(e.expr, &env);
            if !v.is_finite() {
                return None;
            }
            values.push((e.row, e.col, v));
        }
        if self.n > DENSE_MAX {
            return Some(sparse_conditioning(self.n, &values));
        }
        let mut a = Matrix::zeros(self.n, self.n);
        for &(r, c, v) in &values {
            a.set(r, c, v);
        }
        let pivots = FullPivLu::new(&a, 0.0).pivots();
        if pivots.len() < self.n {
            // Exactly singular: ratio 0.
            return Some(Conditioning {
                ratio: 0.0,
                factors: Factors::Dense(a),
            });
        }
        let max = pivots.iter().copied().fold(0.0f64, f64::max);
        let min = pivots.iter().copied().fold(f64::INFINITY, f64::min);
        (max > 0.0).then_some(Conditioning {
            ratio: min / max,
            factors: Factors::Dense(a),
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
        let mut now = self.at(dae, t, z, zdot)?;
        if start.ratio <= 0.0 || now.ratio >= DROP * start.ratio {
            return None;
        }
        let (right, left, measure) = match &mut now.factors {
            Factors::Dense(a) => (
                near_null(a, now.ratio),
                near_null(&a.transpose(), now.ratio),
                "smallest/largest pivot",
            ),
            Factors::Sparse(lu) => (
                lu.as_mut()
                    .and_then(|lu| sparse_near_null(lu, self.n, false)),
                lu.as_mut()
                    .and_then(|lu| sparse_near_null(lu, self.n, true)),
                "reciprocal condition number",
            ),
        };
        let unknowns = right
            .map(|v| {
                let names: Vec<String> = v
                    .iter()
                    .map(|&j| format!("`{}`", dae.unknown_name(j)))
                    .collect();
                format!("; near-null direction in {}", names.join(", "))
            })
            .unwrap_or_default();
        let rows = left.unwrap_or_default();
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
            "the model's Σ-Jacobian is nearly singular at t = {t} ({measure} {:.1e}, {:.1e} at the start{unknowns}{equations}): the DAE as written is not regular there — its index, hidden constraints and states hold only where the Σ-Jacobian is nonsingular — so no formulation integrates past this point; a model that is only locally valid (e.g. a structurally extended form written out) must be replaced by the original DAE, whose StE and DD forms switch variants along the solution",
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

/// [`Conditioning`] of the `n × n` matrix with the entries `(row, col,
/// value)` by the sparse LU: the reciprocal condition number in the
/// 1-norm, `1/(‖A‖₁ · est ‖A⁻¹‖₁)` (0 when the LU finds `A` singular).
fn sparse_conditioning(n: usize, entries: &[(usize, usize, f64)]) -> Conditioning {
    let pattern: Vec<(usize, usize)> = entries.iter().map(|&(r, c, _)| (r, c)).collect();
    let (pat, slot) = daec_solve::SparsePattern::new(n, &pattern);
    let mut values = vec![0.0; pat.nnz()];
    let mut col_sum = vec![0.0f64; n];
    for (&(_, c, v), &s) in entries.iter().zip(&slot) {
        values[s] += v;
        col_sum[c] += v.abs();
    }
    let norm = col_sum.iter().copied().fold(0.0f64, f64::max);
    let mut lu = daec_solve::SparseRealLu::new(&pat);
    if lu.factor(&pat, &values).is_err() || norm <= 0.0 {
        return Conditioning {
            ratio: 0.0,
            factors: Factors::Sparse(None),
        };
    }
    let ratio = 1.0 / (norm * lu.inverse_norm1_estimate());
    Conditioning {
        ratio: if ratio.is_finite() { ratio } else { 0.0 },
        factors: Factors::Sparse(Some(Box::new(lu))),
    }
}

/// Steps of the inverse iteration of [`sparse_near_null`]: each divides
/// the other directions by the square of the ratio of their singular
/// value to the smallest.
const INVERSE_STEPS: usize = 6;

/// The indices of the large components (≥ 0.1 of the largest) of an
/// approximate null vector of the factorised `A` (of `Aᵀ` with
/// `transpose`): the singular vector of the smallest singular value, by
/// [`INVERSE_STEPS`] steps of inverse iteration with `AᵀA` (`AAᵀ`) from
/// the alternating vector `(1, −1, 1, …)`.
fn sparse_near_null(
    lu: &mut daec_solve::SparseRealLu,
    n: usize,
    transpose: bool,
) -> Option<Vec<usize>> {
    let mut x: Vec<f64> = (0..n)
        .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
        .collect();
    for _ in 0..INVERSE_STEPS {
        // x ← (AᵀA)⁻¹x for the right singular vector, (AAᵀ)⁻¹x for the left
        if transpose {
            lu.solve(&mut x);
            lu.solve_transpose(&mut x);
        } else {
            lu.solve_transpose(&mut x);
            lu.solve(&mut x);
        }
        let big = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        if !(big > 0.0 && big.is_finite()) {
            return None;
        }
        x.iter_mut().for_each(|v| *v /= big);
    }
    let idx: Vec<usize> = x
        .iter()
        .enumerate()
        .filter(|(_, v)| v.abs() >= 0.1)
        .map(|(j, _)| j)
        .collect();
    (!idx.is_empty() && idx.len() <= 8).then_some(idx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use daec_regularize::{AnalyzeOptions, analyze};

    /// The pendulum's StE variant S2 written out (steinbrecher2016 (24),
    /// valid while y ≠ 0) with `extra` decoupled decaying unknowns `u`
    /// before it.
    fn ste2_with(extra: usize) -> Dae {
        let path = format!(
            "{}/../../models/steinbrecher/pendulum_ste2.dae",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(path)
            .unwrap()
            .replace(
                "  Real x(start = 0, fixed = true)",
                &format!("  Real u[{extra}](each start = 1);\n  Real x(start = 0, fixed = true)"),
            )
            .replace(
                "equation\n",
                &format!(
                    "equation\n  for k in 1:{extra} loop\n    der(u[k]) = -u[k];\n  end for;\n"
                ),
            );
        let mut map = daec_diag::SourceMap::new();
        let file = map.add("ste2.dae", text);
        let parsed = daec_syntax::parse(file, map.source(file));
        let (dae, diags) = daec_model::lower(parsed.model.as_ref().unwrap(), &Default::default());
        dae.unwrap_or_else(|| panic!("{diags:?}"))
    }

    #[test]
    fn a_large_sigma_jacobian_is_diagnosed_by_the_sparse_lu() {
        // 409 unknowns, above the dense diagnosis (which was skipped there,
        // a limit reported). At the bottom of the swing 𝔍 is regular; at
        // x = −1, y = 10⁻⁷ (at rest, λ = ψ = 0) nearly singular.
        let mut dae = ste2_with(400);
        let analysis = analyze(&mut dae, &AnalyzeOptions::default());
        let sigma = SigmaJacobian::new(&analysis).expect("regular");
        assert_eq!(sigma.n, 409);
        let at = |name: &str| dae.unknowns.iter().position(|u| u.name() == name).unwrap();
        let n = dae.unknowns.len();
        let mut z0: Vec<f64> = dae
            .unknowns
            .iter()
            .map(|u| u.start().unwrap_or(0.0))
            .collect();
        let mut zd0 = vec![0.0; n];
        zd0[at("x")] = z0[at("v")];
        let mut z1 = vec![1.0; n];
        for (name, v) in [
            ("x", -1.0),
            ("y", 1e-7),
            ("v", 0.0),
            ("w", 0.0),
            ("lambda", 0.0),
            ("psi1_2", 0.0),
            ("psi2_1", 0.0),
            ("psi2_2", 0.0),
            ("psi4_1", 0.0),
        ] {
            z1[at(name)] = v;
        }
        let zd1 = vec![0.0; n];
        let (text, labels) = sigma
            .explain(&dae, 0.0, &z0, &zd0, 0.5, &z1, &zd1)
            .expect("nearly singular");
        assert!(text.contains("(reciprocal condition number "), "{text}");
        assert!(!labels.is_empty());
        // the dense diagnosis of the pendulum alone names the same equations
        let mut small = ste2_with(1);
        let a1 = analyze(&mut small, &AnalyzeOptions::default());
        let dense = SigmaJacobian::new(&a1).unwrap();
        let pick = |z: &[f64]| -> Vec<f64> {
            let mut v = vec![z[0]];
            v.extend((0..9).map(|k| z[at("x") + k]));
            v
        };
        let (dense_text, _) = dense
            .explain(
                &small,
                0.0,
                &pick(&z0),
                &pick(&zd0),
                0.5,
                &pick(&z1),
                &pick(&zd1),
            )
            .expect("nearly singular");
        let equations = |t: &str| {
            t.split(" and the equation")
                .nth(1)
                .unwrap()
                .split("):")
                .next()
                .unwrap()
                .to_string()
        };
        assert_eq!(equations(&text), equations(&dense_text), "{dense_text}");
        // the unknowns: the column of `y` — 2y, 2λ, 2ψ2_1, 2ψ2_2 — vanishes
        // at this point, so `y` spans a near-null direction (the dense
        // diagnosis names another one of the two)
        assert!(
            text.contains("near-null direction in `y` and the equation"),
            "{text}"
        );
        // as regular as at the start: no diagnosis
        z0[at("y")] = -1.0;
        assert!(
            sigma
                .explain(&dae, 0.0, &z0, &zd0, 0.1, &z0, &zd0)
                .is_none()
        );
    }
}
