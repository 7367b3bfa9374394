//! The linear-combination (LC) conversion method of Tan, Nedialkov & Pryce
//! ("Conversion methods for improving structural analysis of
//! differential-algebraic equation systems", BIT 2017), for DAEs whose
//! Σ-Jacobian is singular at a consistent point although Σ has a finite
//! HVT (the Σ-method "fails": cancellation, linear dependence).
//!
//! With a left null vector `u` of 𝔍 (`uᵀ𝔍 = 0`), `I = {i : u_i ≠ 0}`,
//! `θ = min_{i∈I} c_i` and some `l ∈ I` with `c_l = θ`, equation `F_l` is
//! replaced by `F̄_l = Σ_{i∈I} u_i · d^{c_i−θ}/dt^{c_i−θ} F_i`. In it the
//! highest-order terms cancel, so `Val(Σ)` decreases; the method repeats
//! until 𝔍 is nonsingular. daec applies it when the rows of 𝔍 in `I` are
//! constant in time and state (parameters allowed), where a null vector
//! found at one point is a null vector everywhere.

use crate::{Analysis, Outcome};
use daec_expr::{ExprId, ExprPool, Leaf, Node};

/// One conversion step.
#[derive(Clone, Debug, PartialEq)]
pub struct Conversion {
    /// The replaced equation `l`.
    pub replaced: usize,
    /// `(i, u_i, c_i − θ)`: the combination `Σ u_i F_i^(c_i−θ)`.
    pub combination: Vec<(usize, f64, u32)>,
    /// `Val(Σ)` before the step.
    pub val_before: i64,
    /// The residuals after the step.
    pub residuals: Vec<ExprId>,
}

/// Appends the terms of `coef · e` with sums and constant factors
/// distributed (`c·(a + b)` → `c·a + c·b`, recursively), so that terms of
/// different rows cancel when summed by the pool.
pub fn linear_terms(pool: &mut ExprPool, e: ExprId, coef: f64, out: &mut Vec<ExprId>) {
    let mut stack = vec![(e, coef)];
    while let Some((e, c)) = stack.pop() {
        match pool.node(e).clone() {
            Node::Add(ts) => stack.extend(ts.iter().map(|&t| (t, c))),
            Node::Mul(fs) if fs.len() == 2 => {
                let (k, other) = match (pool.as_constant(fs[0]), pool.as_constant(fs[1])) {
                    (Some(k), None) => (k, fs[1]),
                    (None, Some(k)) => (k, fs[0]),
                    _ => {
                        out.push(pool.scale(c, e));
                        continue;
                    }
                };
                if matches!(pool.node(other), Node::Add(_) | Node::Mul(_)) {
                    stack.push((other, c * k));
                } else {
                    out.push(pool.scale(c * k, other));
                }
            }
            _ => out.push(pool.scale(c, e)),
        }
    }
}

/// A number close to a small rational is snapped to it.
fn snap(x: f64) -> f64 {
    for q in 1..=12 {
        let p = (x * q as f64).round();
        if (x * q as f64 - p).abs() < 1e-9 {
            return p / q as f64;
        }
    }
    x
}

/// One LC step, if the analysis has a singular Σ-Jacobian with a
/// constant-coefficient dependency.
pub fn convert(pool: &mut ExprPool, analysis: &Analysis) -> Option<Conversion> {
    let Outcome::Regular(reg) = &analysis.outcome else {
        return None;
    };
    let u = reg.success.left_null_vector.as_ref()?;
    let umax = u.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let set: Vec<usize> = (0..u.len()).filter(|&i| u[i].abs() > 1e-9 * umax).collect();
    if set.is_empty() {
        return None;
    }
    // The rows of 𝔍 in I must not depend on time or unknowns.
    for e in &reg.jacobian {
        if set.contains(&e.row) {
            let varying = pool
                .leaves(e.expr)
                .into_iter()
                .any(|l| !matches!(pool.as_leaf(l), Some(Leaf::Param(_))));
            if varying {
                return None;
            }
        }
    }
    let c = &reg.sigma.offsets.c;
    let theta = set.iter().map(|&i| c[i]).min()?;
    let l = *set.iter().find(|&&i| c[i] == theta)?;
    let da = reg.derivative_array.as_ref()?;
    let mut terms = Vec::new();
    let mut combination = Vec::new();
    for &i in &set {
        let ui = snap(u[i] / u[l]);
        let k = c[i] - theta;
        let row = da.rows[i][k as usize];
        linear_terms(pool, row, ui, &mut terms);
        combination.push((i, ui, k));
    }
    let combined = pool.sum(&terms);
    let mut residuals = analysis.residuals.clone();
    residuals[l] = combined;
    Some(Conversion {
        replaced: l,
        combination,
        val_before: reg.sigma.dof,
        residuals,
    })
}
