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
//! until 𝔍 is nonsingular.
//!
//! The paper requires of `u` that it depend on no derivative of an unknown
//! that the highest-order terms of the combination contain
//! (tan-nedialkov-pryce2017 §4: `σ(u, x_j) < d_j − θ` for every `j`); a
//! constant `u` meets this always. daec uses constant null vectors only, in
//! two cases:
//!
//! - the rows of 𝔍 in `I` are constant in time and state (parameters
//!   allowed): a null vector found at one point is one everywhere;
//! - the rows depend on the state but the null vector found at the
//!   consistent point has small rational entries (ratios `p/q` with
//!   `q ≤ 12` to 1e-9): the combination is formed with these exact
//!   constants, the rows multiplied out ([`crate::expand::expand`]) so that
//!   the pool's canonical sums collect the terms that cancel (charge
//!   conservation at a node without a capacitance to ground: the charges
//!   of the capacitors at the node sum to zero term by term), and terms
//!   that a parameter of value 0 multiplies dropped (parameters are fixed
//!   for a run; `Conversion::zero_parameters` lists them). Whether
//!   they cancelled is checked, not assumed: the caller accepts a
//!   conversion only if `Val(Σ)` of the new system is lower (Thm. 4.3),
//!   which requires the highest-order terms to have vanished symbolically.
//!
//! For a constant `u` with `u_l ≠ 0` and `c_l = θ` the new system is
//! equivalent to the old one (`F_l` is recovered from `F̄_l` and the other
//! rows), whatever the state.

use crate::expand::expand;
use crate::{Analysis, Outcome};
use daec_expr::{ExprId, ExprPool, Leaf, Node, ParamId};

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
    /// Parameters of value 0 taken as the constant 0 in the combined row
    /// (only for a combination of state-dependent rows): the converted
    /// system holds for these parameter values.
    pub zero_parameters: Vec<ParamId>,
}

/// Appends the terms of `coef · e` with sums and constant factors
/// distributed (`c·(a + b)` → `c·a + c·b`, recursively), so that terms of
/// different rows cancel when summed by the pool.
pub fn linear_terms(pool: &mut ExprPool, e: ExprId, coef: f64, out: &mut Vec<ExprId>) {
    let mut stack = vec![(e, coef)];
    while let Some((e, c)) = stack.pop() {
        match pool.node(e) {
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

/// A number close to a small rational `p/q` (`q ≤ 12`, to 1e-9) is snapped
/// to it; `None` when there is none.
fn rational(x: f64) -> Option<f64> {
    (1..=12).find_map(|q| {
        let p = (x * q as f64).round();
        ((x * q as f64 - p).abs() < 1e-9).then(|| p / q as f64)
    })
}

/// Whether every entry of the null vector `u`, divided by its largest
/// entry, is a small rational (the condition for a combination of rows
/// that depend on the state).
pub fn has_rational_entries(u: &[f64]) -> bool {
    let umax = u.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    umax > 0.0 && u.iter().all(|&x| rational(x / umax).is_some())
}

/// A number close to a small rational is snapped to it.
fn snap(x: f64) -> f64 {
    rational(x).unwrap_or(x)
}

/// The most terms a product may be multiplied out to when a state-dependent
/// row is expanded for the combination.
const EXPAND_TERMS: usize = 64;

/// One LC step, if the analysis has a singular Σ-Jacobian with a
/// constant-coefficient dependency: constant rows of 𝔍, or a null vector
/// of small rationals (see the module documentation).
pub fn convert(pool: &mut ExprPool, analysis: &Analysis, params: &[f64]) -> Option<Conversion> {
    let Outcome::Regular(reg) = &analysis.outcome else {
        return None;
    };
    let u = reg.success.left_null_vector.as_ref()?;
    let umax = u.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let set: Vec<usize> = (0..u.len()).filter(|&i| u[i].abs() > 1e-9 * umax).collect();
    if set.is_empty() {
        return None;
    }
    let c = &reg.sigma.offsets.c;
    let theta = set.iter().map(|&i| c[i]).min()?;
    let l = *set.iter().find(|&&i| c[i] == theta)?;
    // Constant rows of 𝔍 in I (no time, no unknowns), or else a null
    // vector of small rationals, whose rows are multiplied out.
    let varying = reg.jacobian.iter().any(|e| {
        set.contains(&e.row)
            && pool
                .leaves(e.expr)
                .into_iter()
                .any(|l| !matches!(pool.as_leaf(l), Some(Leaf::Param(_))))
    });
    if varying && set.iter().any(|&i| rational(u[i] / u[l]).is_none()) {
        return None;
    }
    let da = reg.derivative_array.as_ref()?;
    let mut terms = Vec::new();
    let mut combination = Vec::new();
    for &i in &set {
        let ui = snap(u[i] / u[l]);
        let k = c[i] - theta;
        let mut row = da.row(i)[k as usize];
        if varying {
            row = expand(pool, row, EXPAND_TERMS);
        }
        linear_terms(pool, row, ui, &mut terms);
        combination.push((i, ui, k));
    }
    let mut combined = pool.sum(&terms);
    let mut zero_parameters = Vec::new();
    if varying {
        // Parameters are fixed for a run: terms that a parameter of value 0
        // multiplies (a load capacitance of 0 at the node) are dropped.
        for l in pool.leaves(combined) {
            if let Some(Leaf::Param(p)) = pool.as_leaf(l)
                && params.get(p.0 as usize) == Some(&0.0)
            {
                zero_parameters.push(p);
            }
        }
        if !zero_parameters.is_empty() {
            let zero = pool.constant(0.0);
            let params_leaf: Vec<ExprId> = zero_parameters.iter().map(|&p| pool.param(p)).collect();
            combined = pool.substitute(combined, &|l| params_leaf.contains(&l).then_some(zero));
        }
    }
    let mut residuals = analysis.residuals.clone();
    residuals[l] = combined;
    Some(Conversion {
        replaced: l,
        combination,
        val_before: reg.sigma.dof,
        residuals,
        zero_parameters,
    })
}
