//! Unknowns fixed at an isolated root of an equation in them alone.
//!
//! An equation `f(y) = 0` in one unknown `y`, with no derivative and no
//! `time` (parameters are constants), does not determine `y` as a smooth
//! function of the state: it holds `y` at one of its roots. Each simple
//! root (`f'(y*) ≠ 0`) is isolated, so a continuous solution stays on the
//! root the consistent initial point selects, and on that branch `y` is the
//! constant `y*`. Which other terms vanish with it depends on the branch:
//! the NDSolve tutorial's "Index of a DAE" example
//! (`der(x) = z, y(y − 1) = 0, (1 − y)z + yx = sin t`, catalogue N2) is
//! index 1 on `y = 0` and index 2 on `y = 1`, where the Σ-Jacobian
//! (det = −(y − 1)(2y − 1)) is singular and its null vector depends on the
//! state, so neither the Σ-method nor the linear-combination conversion of
//! Tan, Nedialkov & Pryce (2017) applies to the model as written.
//!
//! [`fix_roots`] substitutes the root for `y` (and 0 for its derivatives)
//! in every other equation and replaces `f(y) = 0` by `y − y* = 0`; the
//! Σ-method then runs on the reduced DAE, which on that branch has the
//! structure the model really has (index 2, no degrees of freedom, for N2).
//! It is used only when the Σ-Jacobian is singular at the consistent point
//! (a regular model keeps its equations as written). An equation in one
//! unknown that cannot be fixed soundly — its roots move with `time`, the
//! root found is not simple, or Newton's method does not reach one — is
//! reported with the reason ([`RootRefusal`]).

use daec_expr::{Env, ExprId, ExprPool, Leaf, ParamId};

/// Newton iterations allowed to reach the root.
const MAX_NEWTON: usize = 50;

/// An unknown held at an isolated root by an equation in it alone, on the
/// branch the consistent initial point selects.
#[derive(Clone, Debug, PartialEq)]
pub struct FixedRoot {
    /// The equation `f(y) = 0` (row of the analysed residuals).
    pub equation: usize,
    /// The unknown `y`.
    pub unknown: usize,
    /// The root `y*`.
    pub value: f64,
    /// The value the root was found from (the consistent point's, else the
    /// start value): the branch it selects.
    pub from: f64,
}

/// An equation in one unknown alone whose unknown was not fixed, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct RootRefusal {
    /// The equation.
    pub equation: usize,
    /// The unknown it is in.
    pub unknown: usize,
    /// Why the unknown is not fixed at a root.
    pub reason: String,
}

/// The equations in one unknown found in a DAE: the unknowns fixed at
/// their roots and the equations that could not fix theirs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RootFixing {
    /// Unknowns fixed at a root.
    pub fixed: Vec<FixedRoot>,
    /// Equations in one unknown that did not fix it.
    pub refused: Vec<RootRefusal>,
}

/// Evaluation of `f(y)` with the other leaves at their values.
struct OneUnknown<'a> {
    y: f64,
    params: &'a [f64],
}

impl Env for OneUnknown<'_> {
    fn var(&self, _unknown: u32, order: u32) -> f64 {
        if order == 0 { self.y } else { 0.0 }
    }
    fn param(&self, p: ParamId) -> f64 {
        self.params.get(p.0 as usize).copied().unwrap_or(f64::NAN)
    }
    fn time(&self) -> f64 {
        f64::NAN
    }
}

/// The unknown an equation is in alone (order 0 only, no `time`), or
/// `Err(true)` when it is in one unknown but also in `time`, `Err(false)`
/// when it is not an equation in one unknown.
fn single_unknown(pool: &ExprPool, e: ExprId) -> Result<u32, bool> {
    let mut unknown: Option<u32> = None;
    let mut timed = false;
    for l in pool.leaves(e) {
        match pool.as_leaf(l) {
            Some(Leaf::Var { unknown: j, order }) => {
                if order > 0 || unknown.is_some_and(|u| u != j) {
                    return Err(false);
                }
                unknown = Some(j);
            }
            Some(Leaf::Time) => timed = true,
            _ => {}
        }
    }
    match unknown {
        Some(j) if !timed => Ok(j),
        Some(_) => Err(true),
        None => Err(false),
    }
}

/// Newton's method on `f(y) = 0` from `y0`: the root and `f'` there, or
/// why none was found.
fn newton(pool: &mut ExprPool, f: ExprId, j: u32, y0: f64, params: &[f64]) -> Result<f64, String> {
    let var = pool.var(j, 0);
    let df = pool.diff(f, var);
    let eval = |pool: &ExprPool, e: ExprId, y: f64| pool.eval(e, &OneUnknown { y, params });
    let mut y = y0;
    for _ in 0..MAX_NEWTON {
        let (fy, dfy) = (eval(pool, f, y), eval(pool, df, y));
        let (_, scale) = pool.eval_with_scale(f, &OneUnknown { y, params });
        if !fy.is_finite() || !dfy.is_finite() {
            return Err(format!("it cannot be evaluated near {y0}"));
        }
        let tol = 1e-12 * scale.max(1.0);
        if fy.abs() <= tol {
            // A simple root: f' is non-zero relative to f's scale there.
            if dfy.abs() <= 1e-8 * scale.max(1.0) / y.abs().max(1.0) {
                return Err(format!(
                    "its root {y} is not simple (the derivative vanishes there), so it is not shown to be isolated"
                ));
            }
            return Ok(polish(pool, f, df, y, params));
        }
        if dfy == 0.0 {
            return Err(format!(
                "Newton's method from {y0} stopped where the derivative vanishes ({y})"
            ));
        }
        y -= fy / dfy;
    }
    Err(format!("Newton's method from {y0} reached no root"))
}

/// The root `y` refined to the last bit: Newton steps while they lower
/// `|f|`, then the nearest integer if `f` is no larger there. A root the
/// tolerance accepted may be off by a rounding error (1.0000000000000004
/// for `y(y − 1) = 0` from 0.9), and substituted it would leave a
/// coefficient such as `1 − y` at 4e-16 instead of the zero that removes
/// its term from the reduced DAE.
fn polish(pool: &ExprPool, f: ExprId, df: ExprId, mut y: f64, params: &[f64]) -> f64 {
    let eval = |e: ExprId, y: f64| pool.eval(e, &OneUnknown { y, params });
    for _ in 0..3 {
        let next = y - eval(f, y) / eval(df, y);
        // (a NaN or a larger |f| ends it)
        let better = eval(f, next).abs() < eval(f, y).abs();
        if next == y || !next.is_finite() || !better {
            break;
        }
        y = next;
    }
    let r = y.round();
    if (r - y).abs() <= 1e-9 * y.abs().max(1.0) && eval(f, r).abs() <= eval(f, y).abs() {
        y = r;
    }
    y
}

/// Finds the equations of `residuals` in one unknown alone and fixes each
/// such unknown at the root `from(j)` selects (see the module doc);
/// returns the fixing and the reduced residuals (`None` when nothing was
/// fixed). An unknown is fixed by its first equation only; a second
/// equation in it alone is kept, with the root substituted (a constant
/// residual then shows an inconsistency in the success check).
pub fn fix_roots(
    pool: &mut ExprPool,
    residuals: &[ExprId],
    params: &[f64],
    from: &dyn Fn(usize) -> f64,
) -> (RootFixing, Option<Vec<ExprId>>) {
    let mut fixing = RootFixing::default();
    for (i, &r) in residuals.iter().enumerate() {
        let j = match single_unknown(pool, r) {
            Ok(j) => j,
            Err(true) => {
                if let Some(j) = pool.max_orders(r).first().map(|&(j, _)| j) {
                    fixing.refused.push(RootRefusal {
                        equation: i,
                        unknown: j as usize,
                        reason: "it depends on time, so its roots move and the unknown is not a constant".into(),
                    });
                }
                continue;
            }
            Err(false) => continue,
        };
        if fixing.fixed.iter().any(|f| f.unknown == j as usize) {
            continue;
        }
        let y0 = from(j as usize);
        match newton(pool, r, j, y0, params) {
            Ok(value) => fixing.fixed.push(FixedRoot {
                equation: i,
                unknown: j as usize,
                value,
                from: y0,
            }),
            Err(reason) => fixing.refused.push(RootRefusal {
                equation: i,
                unknown: j as usize,
                reason,
            }),
        }
    }
    if fixing.fixed.is_empty() {
        return (fixing, None);
    }
    let values: Vec<(u32, f64)> = fixing
        .fixed
        .iter()
        .map(|f| (f.unknown as u32, f.value))
        .collect();
    let map = |pool: &ExprPool, id: ExprId| -> Option<(u32, u32)> {
        match pool.as_leaf(id) {
            Some(Leaf::Var { unknown, order }) if values.iter().any(|&(j, _)| j == unknown) => {
                Some((unknown, order))
            }
            _ => None,
        }
    };
    // The replacement of every leaf of a fixed unknown: the root for the
    // unknown, 0 for its derivatives.
    let leaves: Vec<ExprId> = {
        let mut all: Vec<ExprId> = residuals.iter().flat_map(|&r| pool.leaves(r)).collect();
        all.sort_unstable();
        all.dedup();
        all.into_iter()
            .filter(|&l| map(pool, l).is_some())
            .collect()
    };
    let mut replacement: Vec<(ExprId, ExprId)> = Vec::with_capacity(leaves.len());
    for l in leaves {
        let Some((j, order)) = map(pool, l) else {
            continue;
        };
        let v = if order == 0 {
            values.iter().find(|p| p.0 == j).map_or(0.0, |p| p.1)
        } else {
            0.0
        };
        replacement.push((l, pool.constant(v)));
    }
    let mut reduced: Vec<ExprId> = residuals.to_vec();
    for (i, r) in reduced.iter_mut().enumerate() {
        if let Some(f) = fixing.fixed.iter().find(|f| f.equation == i) {
            let y = pool.var(f.unknown as u32, 0);
            let c = pool.constant(f.value);
            *r = pool.sub(y, c);
        } else {
            *r = pool.substitute(*r, &|l| replacement.iter().find(|p| p.0 == l).map(|p| p.1));
        }
    }
    (fixing, Some(reduced))
}
