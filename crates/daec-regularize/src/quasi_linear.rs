//! The quasi-linear split of a [`Formulation`]: `E(t,z)ż = k(t,z)`,
//! `0 = g(t,z)` (the problem class of `daec_solve::QuasiLinearDae` and of
//! QUALIDAES, steinbrecher2016 §4).
//!
//! Differential rows are split with [`ExprPool::linear_in_sparse`] on the
//! first-order derivative leaves `ż_j`: the coefficients are the row of `E`,
//! the residual `E_i·ż − k_i` is kept as it is. Constraint rows keep their
//! levels and are ordered by level.
//!
//! A differential row that is not affine in `ż` (e.g. row 9 of the StE
//! formulation (23) of the pendulum, steinbrecher2016 §3.1, which contains
//! `2ẋ² + 2ẏ²`) gets *velocity* unknowns `u_j = ż_j`
//! ([`UnknownKind::Velocity`]) for every derivative `ż_j` occurring in a
//! non-affine row, one differential row `ż_j − u_j = 0` each, and `ż_j` is
//! replaced by `u_j` in *every other* row of the formulation. Replacing it
//! everywhere (not only in the non-affine rows) keeps the d-index at 1: the
//! algebraic part in the unknowns `(u, …)` has the same Jacobian as the
//! original rows in `(ż, …)`, whereas keeping `ż_j` in the affine rows
//! would give two differential rows in `ż_j` and make `u_j` an index-2
//! variable. Rows left without derivatives become level-0 constraints (they
//! are algebraic equations of the formulation, not hidden constraints of
//! the model).
//!
//! Rows repeated literally (ADA (31) and HiC (37) list the DAE's algebraic
//! equations twice, as the paper does; hash-consing makes them the same
//! expression) are kept once: the integrator needs a constraint Jacobian of
//! full row rank. Each row remembers the formulation row it came from.
//!
//! Derivatives of order ≥ 2 are refused: models are reduced to first order
//! before they are regularized (`daec_sim::reduce_to_first_order`).

use crate::error::{Refusal, RegularizeError};
use crate::formulation::{
    ConstraintRow, DiffRow, FormUnknown, Formulation, QuasiLinearForm, RowKind, UnknownKind,
};
use daec_expr::{ExprId, ExprPool, Leaf};
use rustc_hash::{FxHashMap, FxHashSet};

impl Formulation {
    /// The quasi-linear split `E(t,z)ż = k(t,z)`, `0 = g(t,z)` of this
    /// formulation (its expressions live in `pool`, which grows). See the
    /// documentation of the `quasi_linear` module for the velocity unknowns introduced
    /// for rows that are not affine in `ż`.
    ///
    /// Refused, with a message naming the variables or equations, when the
    /// formulation has no unknowns, when an expression refers to an unknown
    /// it does not have, when a derivative of order ≥ 2 occurs, or when a
    /// constraint row contains derivatives.
    pub fn quasi_linear(&self, pool: &mut ExprPool) -> Result<QuasiLinearForm, RegularizeError> {
        quasi_linear(pool, self)
    }
}

fn err(form: &Formulation, cause: Refusal) -> RegularizeError {
    RegularizeError::new(form.form, cause)
}

/// The names of the unknowns `vars` of a formulation (sorted by index,
/// deduplicated).
fn name_list(unknowns: &[FormUnknown], vars: &[usize]) -> Vec<String> {
    let mut v = vars.to_vec();
    v.sort_unstable();
    v.dedup();
    v.iter()
        .map(|&j| unknowns.get(j).map_or("?", |u| u.name.as_str()).to_string())
        .collect()
}

/// The derivative leaves `(unknown, order ≥ 1)` of `e`.
fn derivatives(pool: &ExprPool, e: ExprId) -> Vec<(usize, u32)> {
    pool.leaves(e)
        .into_iter()
        .filter_map(|l| match pool.as_leaf(l) {
            Some(Leaf::Var { unknown, order }) if order >= 1 => Some((unknown as usize, order)),
            _ => None,
        })
        .collect()
}

/// A name for the velocity of `base` that is not taken yet.
fn fresh_name(base: &str, taken: &mut FxHashSet<String>) -> String {
    let clean: String = base
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let clean = clean.trim_matches('_');
    let stem = format!("u_{clean}");
    let mut name = stem.clone();
    let mut k = 1;
    while taken.contains(&name) {
        k += 1;
        name = format!("{stem}_{k}");
    }
    taken.insert(name.clone());
    name
}

/// Free-function form of [`Formulation::quasi_linear`].
pub fn quasi_linear(
    pool: &mut ExprPool,
    form: &Formulation,
) -> Result<QuasiLinearForm, RegularizeError> {
    let n = form.unknowns.len();
    if n == 0 {
        return Err(err(form, Refusal::FormulationWithoutUnknowns));
    }
    // Every leaf must be an unknown of the formulation, of order ≤ 1.
    let mut high = Vec::new();
    for (i, eq) in form.equations.iter().enumerate() {
        for l in pool.leaves(eq.residual) {
            if let Some(Leaf::Var { unknown, order }) = pool.as_leaf(l) {
                let j = unknown as usize;
                if j >= n {
                    return Err(err(
                        form,
                        Refusal::UnknownOutOfRange {
                            equation: i,
                            unknown: j,
                            unknowns: n,
                        },
                    ));
                }
                if order >= 2 {
                    high.push(j);
                }
            }
        }
    }
    if !high.is_empty() {
        return Err(err(
            form,
            Refusal::FormulationHigherOrder {
                unknowns: name_list(&form.unknowns, &high),
            },
        ));
    }
    for (i, eq) in form.equations.iter().enumerate() {
        if matches!(eq.kind, RowKind::Constraint { .. }) {
            let d = derivatives(pool, eq.residual);
            if !d.is_empty() {
                let vars: Vec<usize> = d.iter().map(|&(j, _)| j).collect();
                return Err(err(
                    form,
                    Refusal::ConstraintRowDerivatives {
                        row: i,
                        unknowns: name_list(&form.unknowns, &vars),
                    },
                ));
            }
        }
    }
    let dvars: Vec<ExprId> = (0..n as u32).map(|j| pool.var(j, 1)).collect();
    // The leaves ż_j, numbered by j: the split of a row costs its size, not n.
    let first_derivative = |l: &Leaf| match *l {
        Leaf::Var { unknown, order: 1 } => Some(unknown as usize),
        _ => None,
    };
    // Pass 1: which rows are affine in ż, and the derivatives of the others.
    let mut velocity: Vec<usize> = Vec::new();
    for eq in &form.equations {
        if eq.kind != RowKind::Differential {
            continue;
        }
        let d = derivatives(pool, eq.residual);
        if d.is_empty() {
            continue;
        }
        if pool
            .linear_in_sparse(eq.residual, &first_derivative)
            .is_none()
        {
            velocity.extend(d.iter().map(|&(j, _)| j));
        }
    }
    velocity.sort_unstable();
    velocity.dedup();
    let mut unknowns = form.unknowns.clone();
    let mut taken: FxHashSet<String> = unknowns.iter().map(|u| u.name.clone()).collect();
    let mut subst: FxHashMap<ExprId, ExprId> = FxHashMap::default();
    let mut diff = Vec::new();
    for &j in &velocity {
        let k = unknowns.len();
        let name = fresh_name(&form.unknowns[j].name, &mut taken);
        unknowns.push(FormUnknown {
            name,
            kind: UnknownKind::Velocity { unknown: j },
        });
        let u = pool.var(k as u32, 0);
        // ż_j − u_j = 0
        let residual = pool.sub(dvars[j], u);
        let one = pool.constant(1.0);
        diff.push(DiffRow {
            residual,
            mass: vec![(j, one)],
            equation: None,
        });
        subst.insert(dvars[j], u);
    }
    let mut constraints = Vec::new();
    // The expressions of the rows kept so far, to drop literal repeats.
    let mut constraint_exprs: FxHashSet<ExprId> = FxHashSet::default();
    let mut diff_exprs: FxHashSet<ExprId> = diff.iter().map(|d| d.residual).collect();
    for (i, eq) in form.equations.iter().enumerate() {
        let level = match eq.kind {
            RowKind::Constraint { level } => {
                if !constraint_exprs.insert(eq.residual) {
                    continue;
                }
                constraints.push(ConstraintRow {
                    expr: eq.residual,
                    level,
                    equation: i,
                });
                continue;
            }
            RowKind::Differential => 0,
        };
        let r = if subst.is_empty() {
            eq.residual
        } else {
            pool.substitute(eq.residual, &|l| subst.get(&l).copied())
        };
        if derivatives(pool, r).is_empty() {
            // Algebraic (possibly after the velocity substitution).
            if !constraint_exprs.insert(r) {
                continue;
            }
            constraints.push(ConstraintRow {
                expr: r,
                level,
                equation: i,
            });
            continue;
        }
        if !diff_exprs.insert(r) {
            continue;
        }
        let Some((coefs, _rest)) = pool.linear_in_sparse(r, &first_derivative) else {
            // Cannot happen: every derivative of a non-affine row was
            // replaced by a velocity unknown.
            return Err(err(form, Refusal::NotAffine { equation: i }));
        };
        let mass: Vec<(usize, ExprId)> = coefs
            .into_iter()
            .filter(|(_, c)| pool.as_constant(*c) != Some(0.0))
            .collect();
        diff.push(DiffRow {
            residual: r,
            mass,
            equation: Some(i),
        });
    }
    // Velocity rows after the formulation's own rows (their order in the
    // paper's examples is kept for the latter).
    let n_vel = velocity.len();
    diff.rotate_left(n_vel);
    constraints.sort_by_key(|c| c.level);
    Ok(QuasiLinearForm {
        unknowns,
        diff,
        constraints,
    })
}

/// Symbolic sparse Jacobian of `rows` with respect to the unknowns `z_j`
/// (the order-0 leaves): the pattern `(row, j)` (row-major, columns in
/// leaf order) and the entries `∂rows[i]/∂z_j`, structurally zero entries
/// left out. Used for `∂(E ż − k)/∂z` and `∂g/∂z` by the integrator's tape
/// problem and by the Rust emitter.
pub fn sparse_jacobian(pool: &mut ExprPool, rows: &[ExprId]) -> (Vec<(usize, usize)>, Vec<ExprId>) {
    let mut pattern = Vec::new();
    let mut exprs = Vec::new();
    for (i, &r) in rows.iter().enumerate() {
        for l in pool.leaves(r) {
            if let Some(Leaf::Var { unknown, order: 0 }) = pool.as_leaf(l) {
                let d = pool.diff(r, l);
                if pool.as_constant(d) != Some(0.0) {
                    pattern.push((i, unknown as usize));
                    exprs.push(d);
                }
            }
        }
    }
    (pattern, exprs)
}

/// The mass matrix `E` of `form` as a pattern `(row, j)` and entries.
pub fn mass_entries(form: &QuasiLinearForm) -> (Vec<(usize, usize)>, Vec<ExprId>) {
    let mut pattern = Vec::new();
    let mut exprs = Vec::new();
    for (i, row) in form.diff.iter().enumerate() {
        for &(j, e) in &row.mass {
            pattern.push((i, j));
            exprs.push(e);
        }
    }
    (pattern, exprs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formulation::{Form, FormEquation, RowSource};

    fn unknown(name: &str, j: usize) -> FormUnknown {
        FormUnknown {
            name: name.into(),
            kind: UnknownKind::Original(j),
        }
    }

    fn eq(residual: ExprId, kind: RowKind) -> FormEquation {
        FormEquation {
            residual,
            kind,
            source: RowSource {
                equation: 0,
                derivative: 0,
            },
        }
    }

    #[test]
    fn pendulum_hic_splits_into_mass_rows_and_levels() {
        // steinbrecher2016 (38) in part: ẋ − v = 0, m ẏ... on (x, v, λ)
        let mut p = ExprPool::new();
        let (x, v, l) = (p.var(0, 0), p.var(1, 0), p.var(2, 0));
        let (xd, vd) = (p.var(0, 1), p.var(1, 1));
        let m = p.param(daec_expr::ParamId(0));
        let r1 = p.sub(xd, v);
        let mvd = p.mul(m, vd);
        let xl = p.mul(x, l);
        let r2 = p.add(mvd, xl);
        let x2 = p.powi(x, 2);
        let one = p.constant(1.0);
        let c0 = p.sub(x2, one);
        let form = Formulation {
            form: Form::Hic,
            unknowns: vec![unknown("x", 0), unknown("v", 1), unknown("lambda", 2)],
            equations: vec![
                eq(c0, RowKind::Constraint { level: 1 }),
                eq(r1, RowKind::Differential),
                eq(r2, RowKind::Differential),
                eq(x, RowKind::Constraint { level: 0 }),
            ],
            hvt: None,
            limits: Vec::new(),
        };
        let q = form.quasi_linear(&mut p).unwrap();
        assert_eq!(q.n(), 3);
        assert_eq!(q.diff.len(), 2);
        assert_eq!(q.diff[0].mass, vec![(0, one)]);
        assert_eq!(q.diff[1].mass, vec![(1, m)]);
        assert_eq!(q.diff[1].equation, Some(2));
        let levels: Vec<u32> = q.constraints.iter().map(|c| c.level).collect();
        assert_eq!(levels, [0, 1]);
        assert_eq!(q.max_level(), Some(1));
    }

    #[test]
    fn non_affine_rows_get_velocity_unknowns() {
        // ẋ − y = 0 and ẋ² + y − 1 = 0 (cf. row 9 of StE (23)).
        let mut p = ExprPool::new();
        let (x, y) = (p.var(0, 0), p.var(1, 0));
        let xd = p.var(0, 1);
        let r1 = p.sub(xd, y);
        let xd2 = p.powi(xd, 2);
        let one = p.constant(1.0);
        let s = p.add(xd2, y);
        let r2 = p.sub(s, one);
        let form = Formulation {
            form: Form::Ste,
            unknowns: vec![unknown("x", 0), unknown("y[1]", 1)],
            equations: vec![eq(r1, RowKind::Differential), eq(r2, RowKind::Differential)],
            hvt: None,
            limits: Vec::new(),
        };
        let q = form.quasi_linear(&mut p).unwrap();
        assert_eq!(q.n(), 3);
        assert_eq!(q.unknowns[2].name, "u_x");
        assert_eq!(q.unknowns[2].kind, UnknownKind::Velocity { unknown: 0 });
        // one differential row ẋ − u = 0, two algebraic rows u − y, u² + y − 1
        assert_eq!(q.diff.len(), 1);
        assert_eq!(q.diff[0].equation, None);
        assert_eq!(q.constraints.len(), 2);
        let _ = x;
    }

    #[test]
    fn second_derivatives_and_derivatives_in_constraints_are_refused() {
        let mut p = ExprPool::new();
        let xdd = p.var(0, 2);
        let form = Formulation {
            form: Form::Hic,
            unknowns: vec![unknown("x", 0)],
            equations: vec![eq(xdd, RowKind::Differential)],
            hvt: None,
            limits: Vec::new(),
        };
        let e = form.quasi_linear(&mut p).unwrap_err();
        assert!(e.to_string().contains("order > 1 of `x`"), "{e}");
        assert_eq!(
            e.cause,
            Refusal::FormulationHigherOrder {
                unknowns: vec!["x".into()]
            }
        );
        let xd = p.var(0, 1);
        let form = Formulation {
            form: Form::Hic,
            unknowns: vec![unknown("x", 0)],
            equations: vec![eq(xd, RowKind::Constraint { level: 0 })],
            hvt: None,
            limits: Vec::new(),
        };
        assert_eq!(
            form.quasi_linear(&mut p).unwrap_err().cause,
            Refusal::ConstraintRowDerivatives {
                row: 0,
                unknowns: vec!["x".into()]
            }
        );
        let z = p.var(3, 0);
        let form = Formulation {
            form: Form::Hic,
            unknowns: vec![unknown("x", 0)],
            equations: vec![eq(z, RowKind::Differential)],
            hvt: None,
            limits: Vec::new(),
        };
        let e = form.quasi_linear(&mut p).unwrap_err();
        assert_eq!(
            e.cause,
            Refusal::UnknownOutOfRange {
                equation: 0,
                unknown: 3,
                unknowns: 1
            }
        );
        assert_eq!(
            e.to_string(),
            "the HIC formulation does not apply: equation 1 refers to unknown #3, but the formulation has only 1 unknowns"
        );
        let empty = Formulation {
            form: Form::Hic,
            unknowns: vec![],
            equations: vec![],
            hvt: None,
            limits: Vec::new(),
        };
        assert_eq!(
            empty.quasi_linear(&mut p).unwrap_err().cause,
            Refusal::FormulationWithoutUnknowns
        );
    }
}
