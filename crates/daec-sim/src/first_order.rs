//! The first-order reduction: every unknown `x` that occurs with a
//! derivative of order `p ≥ 2` gets new unknowns `der(x)`, …,
//! `der^(p−1)(x)` and the equations `der(x) = der(x)`, … linking them, and
//! `x^(k)` is replaced by the new unknowns in every equation, initial
//! equation, declared invariant and event (the standard reduction of Hairer–Wanner, Solving
//! ODEs II, VII.1, for second-order mechanical systems, as Wunderlich 2005
//! discusses for second-order DAEs). The HiC form (steinbrecher2016 §3.3)
//! and the integrator need a first-order model.

use daec_expr::{ExprId, Leaf};
use daec_model::{Dae, Equation, Unknown, UnknownDecl};
use rustc_hash::FxHashMap;
use std::sync::Arc;

fn derivative_name(base: &str, k: u32) -> String {
    (0..k).fold(base.to_string(), |s, _| format!("der({s})"))
}

/// Reduces `dae` to first order in place; returns the indices of the new
/// unknowns (empty when the model is of first order already). The new
/// unknowns are named `der(x)`, `der(der(x))`, … and have no start values
/// (the consistent initialisation computes them from the constraints and
/// initial equations).
pub fn reduce_to_first_order(dae: &mut Dae) -> Vec<usize> {
    let n = dae.unknowns.len();
    let mut order = vec![0u32; n];
    let mut roots: Vec<ExprId> = dae.equations.iter().map(|e| e.residual).collect();
    roots.extend(dae.initial_equations.iter().map(|e| e.residual));
    for ev in &dae.events {
        roots.push(ev.condition);
        roots.extend(ev.reinits.iter().map(|r| r.1));
    }
    for &r in &roots {
        for (j, k) in dae.pool.max_orders(r) {
            if let Some(o) = order.get_mut(j as usize) {
                *o = (*o).max(k);
            }
        }
    }
    // new[j][k-1] = index of the unknown standing for x_j^(k), k < p_j
    let mut added = Vec::new();
    let mut map: FxHashMap<ExprId, ExprId> = FxHashMap::default();
    let mut links: Vec<(ExprId, ExprId)> = Vec::new();
    for (j, &p) in order.iter().enumerate() {
        if p < 2 {
            continue;
        }
        let mut prev = j as u32; // unknown whose derivative is x^(k)
        for k in 1..p {
            let idx = dae.unknowns.len() as u32;
            let unknown = new_unknown(&dae.unknowns[j], k);
            dae.unknowns.push(unknown);
            dae.spans.unknowns.push(Default::default());
            added.push(idx as usize);
            // x^(k) -> w_k; der(prev) = w_k
            let leaf = dae.pool.var(j as u32, k);
            let w = dae.pool.var(idx, 0);
            map.insert(leaf, w);
            let dprev = dae.pool.var(prev, 1);
            links.push((dprev, w));
            prev = idx;
        }
        // the highest derivative x^(p) -> der(w_{p-1})
        let leaf = dae.pool.var(j as u32, p);
        let top = dae.pool.var(prev, 1);
        map.insert(leaf, top);
    }
    if !added.is_empty() {
        substitute_everywhere(dae, &map, links);
    }
    added.extend(quasi_linearize(dae));
    added
}

/// Makes every equation quasi-linear: where an equation is not linear in
/// the derivatives (e.g. `2*der(y)^2` in the structurally extended forms
/// of steinbrecher2016 (23)), each derivative `der(x)` in it is replaced
/// by a new unknown `der(x)` with the link `der(x) = der(x)` — the same
/// device as the reduction above. The index may rise by one; the
/// Σ-method analysis of the result provides the extra hidden constraint.
fn quasi_linearize(dae: &mut Dae) -> Vec<usize> {
    let n = dae.unknowns.len();
    // The leaves der(z_j) of the original unknowns, numbered by j: the test
    // of a row costs its size, not n.
    let first_derivative = |l: &Leaf| match *l {
        Leaf::Var { unknown, order: 1 } if (unknown as usize) < n => Some(unknown as usize),
        _ => None,
    };
    let mut added = Vec::new();
    let mut map: FxHashMap<ExprId, ExprId> = FxHashMap::default();
    let mut links = Vec::new();
    for i in 0..dae.equations.len() {
        let r = dae.equations[i].residual;
        if dae.pool.linear_in_sparse(r, &first_derivative).is_some() {
            continue;
        }
        for l in dae.pool.leaves(r) {
            let Some(Leaf::Var { unknown, order: 1 }) = dae.pool.as_leaf(l) else {
                continue;
            };
            if map.contains_key(&l) {
                continue;
            }
            let idx = dae.unknowns.len() as u32;
            let u = &dae.unknowns[unknown as usize];
            dae.unknowns.push(new_unknown(u, 1));
            dae.spans.unknowns.push(Default::default());
            added.push(idx as usize);
            let w = dae.pool.var(idx, 0);
            map.insert(l, w);
            links.push((l, w));
        }
    }
    if added.is_empty() {
        return added;
    }
    // Substitute only in the equations that are not quasi-linear.
    let nonlinear: Vec<usize> = (0..dae.equations.len())
        .filter(|&i| {
            dae.pool
                .linear_in_sparse(dae.equations[i].residual, &first_derivative)
                .is_none()
        })
        .collect();
    for i in nonlinear {
        let eq = dae.equations[i].clone();
        dae.equations[i] = Equation {
            lhs: dae.pool.substitute(eq.lhs, &|l| map.get(&l).copied()),
            rhs: dae.pool.substitute(eq.rhs, &|l| map.get(&l).copied()),
            residual: dae.pool.substitute(eq.residual, &|l| map.get(&l).copied()),
            description: eq.description,
        };
    }
    push_links(dae, links);
    added
}

fn new_unknown(u: &Unknown, k: u32) -> Unknown {
    let description = format!(
        "derivative of order {k} of {} (first-order reduction)",
        u.name()
    );
    let mut decl = UnknownDecl::real(&derivative_name(u.base(), k), Some(&description));
    // Its elements are named `der(x[i])`, not `der(x)[i]`.
    decl.derivative = if u.decl().dims.is_empty() { 0 } else { k };
    decl.dims = u.decl().dims.clone();
    Unknown::new(Arc::new(decl), u.element())
}

fn push_links(dae: &mut Dae, links: Vec<(ExprId, ExprId)>) {
    for (d, w) in links {
        let residual = dae.pool.sub(d, w);
        dae.equations.push(Equation {
            lhs: d,
            rhs: w,
            residual,
            description: Some("first-order reduction".into()),
        });
        dae.spans.equations.push(Default::default());
    }
}

fn substitute_everywhere(
    dae: &mut Dae,
    map: &FxHashMap<ExprId, ExprId>,
    links: Vec<(ExprId, ExprId)>,
) {
    let is_var =
        |pool: &daec_expr::ExprPool, l: ExprId| matches!(pool.as_leaf(l), Some(Leaf::Var { .. }));
    let subst = |dae: &mut Dae, e: ExprId| -> ExprId {
        if !dae
            .pool
            .leaves(e)
            .into_iter()
            .any(|l| is_var(&dae.pool, l) && map.contains_key(&l))
        {
            return e;
        }
        dae.pool.substitute(e, &|l| map.get(&l).copied())
    };
    let subst_eq = |dae: &mut Dae, eq: Equation| Equation {
        lhs: subst(dae, eq.lhs),
        rhs: subst(dae, eq.rhs),
        residual: subst(dae, eq.residual),
        description: eq.description,
    };
    for i in 0..dae.equations.len() {
        dae.equations[i] = subst_eq(dae, dae.equations[i].clone());
    }
    for i in 0..dae.initial_equations.len() {
        dae.initial_equations[i] = subst_eq(dae, dae.initial_equations[i].clone());
    }
    // (the declared invariants speak of the same derivatives)
    for i in 0..dae.invariants.len() {
        dae.invariants[i] = subst_eq(dae, dae.invariants[i].clone());
    }
    for i in 0..dae.events.len() {
        let c = dae.events[i].condition;
        dae.events[i].condition = subst(dae, c);
        for r in 0..dae.events[i].reinits.len() {
            let v = dae.events[i].reinits[r].1;
            dae.events[i].reinits[r].1 = subst(dae, v);
        }
    }
    push_links(dae, links);
}
