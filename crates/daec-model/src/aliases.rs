//! Elimination of alias equations before the lowering: an equation
//! `a = b` or `a = -b` between two scalar `Real` unknowns marked
//! `annotation(__daec(alias = true))` — as the instantiation marks the
//! equalities of the potential variables of a connection set and the
//! flow balance of a set of two flow variables (MLS 3.6, §9.2) — makes
//! `a` another name of `b` (or of `-b`). Each set of names joined by such
//! equations keeps one unknown, the *representative*; the others are
//! replaced by it (or by its negation) everywhere and dropped with their
//! equations, so the counts, the index and the states are those of the
//! physical system. The names stay known as [`Alias`]es of the
//! [`crate::Dae`]: the results and the flat text show them.
//!
//! The representative of a set is the member with a `start` or `fixed`
//! attribute, else the member declared first. A set in which more than
//! one member has such attributes, or a member has a binding, or whose
//! equations make a member equal to its own negation, keeps its equations
//! (the attributes could disagree; `a = -a` is not an alias).

use daec_syntax::ast::{self, EquationKind, Expr, ExprKind, Variability};
use std::collections::HashMap;

/// A name of an eliminated unknown and the unknown it names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alias {
    /// The eliminated name, e.g. `R1.p.v`.
    pub name: String,
    /// The unknown it equals, e.g. `source.p.v`.
    pub of: String,
    /// The name is the negation of the unknown (`R1.n.i = -C1.p.i`, a
    /// connection of two flow variables).
    pub negated: bool,
}

/// Whether `eq` is marked `annotation(__daec(alias = true))`.
pub(crate) fn is_alias_equation(eq: &ast::Equation) -> bool {
    eq.annotations.iter().any(|a| {
        a.name.name == "__daec"
            && a.nested.iter().any(|m| {
                m.name.name == "alias"
                    && m.value
                        .as_ref()
                        .is_some_and(|v| matches!(v.kind, ExprKind::Bool(true)))
            })
    })
}

fn single_name(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Name(parts) if parts.len() == 1 => Some(&parts[0].name),
        _ => None,
    }
}

/// The name `e` is, or the name it negates (`-b`), with whether it is
/// negated.
fn signed_name(e: &Expr) -> Option<(&str, bool)> {
    match &e.kind {
        ExprKind::Unary {
            op: ast::UnOp::Neg,
            expr,
        } => single_name(expr).map(|n| (n, true)),
        _ => single_name(e).map(|n| (n, false)),
    }
}

/// The name `e` is (or negates), after the renaming, with its sign.
fn renamed<'e>(e: &'e Expr, map: &'e HashMap<String, (String, bool)>) -> Option<(&'e str, bool)> {
    signed_name(e).map(|(n, neg)| match map.get(n) {
        Some((to, flip)) => (to.as_str(), neg != *flip),
        None => (n, neg),
    })
}

/// Union–find with signs: member `i` equals its parent times
/// `-1` when `negated[i]`. Returns the root of `i` and whether `i` is the
/// root's negation.
fn find(parent: &mut [usize], negated: &mut [bool], i: usize) -> (usize, bool) {
    let mut path = Vec::new();
    let mut at = i;
    while parent[at] != at {
        path.push(at);
        at = parent[at];
    }
    // Path compression: each member on the path points at the root with
    // its sign relative to the root.
    let mut sign = false;
    for &k in path.iter().rev() {
        sign ^= negated[k];
        negated[k] = sign;
        parent[k] = at;
    }
    (at, path.first().is_some_and(|&k| negated[k]))
}

/// `model` with its alias equations eliminated, and the aliases; `None`
/// when it has none to eliminate.
pub(crate) fn eliminate(model: &ast::Model) -> Option<(ast::Model, Vec<Alias>)> {
    // Candidates: scalar `Real` unknowns, by name.
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (k, d) in model.declarations.iter().enumerate() {
        if d.variability == Variability::Continuous
            && d.dims.is_empty()
            && d.type_name.parts == ["Real"]
        {
            index.insert(d.name.name.as_str(), k);
        }
    }
    let n = model.declarations.len();
    let mut parent: Vec<usize> = (0..n).collect();
    let mut negated = vec![false; n];
    // Roots of sets whose equations make a member its own negation.
    let mut contradictory = vec![false; n];
    let mut any = false;
    for s in model.sections.iter().filter(|s| !s.initial) {
        for eq in s.equations.iter().filter(|e| is_alias_equation(e)) {
            let EquationKind::Simple { lhs, rhs } = &eq.kind else {
                continue;
            };
            let (Some((a, neg_a)), Some((b, neg_b))) = (signed_name(lhs), signed_name(rhs)) else {
                continue;
            };
            let (Some(&a), Some(&b)) = (index.get(a), index.get(b)) else {
                continue;
            };
            // a·(±1) = b·(±1): a = b·sign, with sign negative when
            // exactly one side is negated.
            let sign = neg_a != neg_b;
            let ((ra, sa), (rb, sb)) = (
                find(&mut parent, &mut negated, a),
                find(&mut parent, &mut negated, b),
            );
            // ra = rb · (sa ⊕ sign ⊕ sb).
            let rel = sa ^ sign ^ sb;
            if ra == rb {
                contradictory[ra] |= rel;
            } else {
                let (child, root) = (ra.max(rb), ra.min(rb));
                parent[child] = root;
                negated[child] = rel;
                contradictory[root] |= contradictory[child];
            }
            any = true;
        }
    }
    if !any {
        return None;
    }
    // The sets, their members in declaration order with their signs
    // relative to the root.
    let mut sets: HashMap<usize, Vec<(usize, bool)>> = HashMap::new();
    for k in 0..n {
        let (r, sign) = find(&mut parent, &mut negated, k);
        sets.entry(r).or_default().push((k, sign));
    }
    let constrained = |d: &ast::Declaration| {
        d.modifiers
            .iter()
            .any(|m| m.name.name == "start" || m.name.name == "fixed")
    };
    let mut rename: HashMap<String, (String, bool)> = HashMap::new();
    let mut aliases = Vec::new();
    let mut members: Vec<(&usize, &Vec<(usize, bool)>)> = sets
        .iter()
        .filter(|(r, m)| m.len() > 1 && !contradictory[**r])
        .collect();
    members.sort_by_key(|(_, m)| m[0].0);
    for (_, m) in members {
        let decls: Vec<(&ast::Declaration, bool)> = m
            .iter()
            .map(|&(k, sign)| (&model.declarations[k], sign))
            .collect();
        if decls.iter().any(|(d, _)| d.binding.is_some())
            || decls.iter().filter(|(d, _)| constrained(d)).count() > 1
        {
            continue;
        }
        let (rep, rep_sign) = decls
            .iter()
            .find(|(d, _)| constrained(d))
            .unwrap_or(&decls[0]);
        for (d, sign) in &decls {
            if d.name.name != rep.name.name {
                let negated = sign != rep_sign;
                rename.insert(d.name.name.clone(), (rep.name.name.clone(), negated));
                aliases.push(Alias {
                    name: d.name.name.clone(),
                    of: rep.name.name.clone(),
                    negated,
                });
            }
        }
    }
    if aliases.is_empty() {
        return None;
    }
    // By name: the same order whichever way the model was written (the
    // flat text declares the aliases after the unknowns).
    aliases.sort_by(|a, b| a.name.cmp(&b.name));
    let mut out = model.clone();
    out.declarations
        .retain(|d| !rename.contains_key(&d.name.name));
    for d in &mut out.declarations {
        if let Some(b) = &mut d.binding {
            rename_names(b, &rename);
        }
        for m in &mut d.modifiers {
            if let Some(v) = &mut m.value {
                rename_names(v, &rename);
            }
        }
        for e in &mut d.dims {
            rename_names(e, &rename);
        }
    }
    for s in &mut out.sections {
        let initial = s.initial;
        s.equations.retain(|e| {
            initial || !is_alias_equation(e) || {
                // Eliminated: both sides name one representative now
                // (with the same sign: `r = -r` stays, it is no alias).
                match &e.kind {
                    EquationKind::Simple { lhs, rhs } => {
                        let l = renamed(lhs, &rename);
                        l.is_none() || l != renamed(rhs, &rename)
                    }
                    _ => true,
                }
            }
        });
        for e in &mut s.equations {
            rename_equation(e, &rename);
        }
    }
    Some((out, aliases))
}

fn rename_equation(eq: &mut ast::Equation, map: &HashMap<String, (String, bool)>) {
    let mut stack = vec![eq];
    while let Some(eq) = stack.pop() {
        match &mut eq.kind {
            EquationKind::Simple { lhs, rhs } => {
                rename_names(lhs, map);
                rename_names(rhs, map);
            }
            EquationKind::For { range, body, .. } => {
                rename_names(range, map);
                stack.extend(body.iter_mut());
            }
            EquationKind::If {
                branches,
                else_branch,
            } => {
                for (c, b) in branches {
                    rename_names(c, map);
                    stack.extend(b.iter_mut());
                }
                stack.extend(else_branch.iter_mut());
            }
            EquationKind::When { branches } => {
                for (c, b) in branches {
                    rename_names(c, map);
                    stack.extend(b.iter_mut());
                }
            }
            EquationKind::Call { args, .. } => {
                for a in args {
                    rename_names(a, map);
                }
            }
            EquationKind::Error => {}
        }
    }
}

/// Replaces the one-part names of `e` found in `map` (by the negation of
/// the name they map to when it is negated).
fn rename_names(e: &mut Expr, map: &HashMap<String, (String, bool)>) {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        if let ExprKind::Name(parts) = &mut e.kind {
            if parts.len() == 1
                && let Some((to, negated)) = map.get(&parts[0].name)
            {
                parts[0].name.clone_from(to);
                if *negated {
                    let name = e.clone();
                    e.kind = ExprKind::Unary {
                        op: ast::UnOp::Neg,
                        expr: Box::new(name),
                    };
                }
            }
            continue;
        }
        crate::lower::push_children_mut(e, &mut stack);
    }
}
