//! Expansion of products over sums, so that derived constraints print as
//! flat sums of monomials in which like terms have been collected by the
//! pool (`2y·(2yλ + mg)/m` → `4y²λ/m + 2gy`). Used when printing the
//! hidden constraints, whose elimination leaves nested products behind
//! (done at print time: the analysis itself does not need it, and it would
//! cost a traversal per constraint on large models).

use daec_expr::{ExprId, ExprPool, Node};
use rustc_hash::FxHashMap;

/// `e` with products of sums multiplied out, as long as no intermediate sum
/// exceeds `max_terms` terms (beyond that the product is kept as it is).
/// Functions, powers and conditionals are expanded inside but not across.
pub fn expand(pool: &mut ExprPool, e: ExprId, max_terms: usize) -> ExprId {
    let order = pool.topo_order(&[e]);
    let mut new: FxHashMap<ExprId, ExprId> = FxHashMap::default();
    let mut ops = Vec::new();
    for id in order {
        let node = pool.node_owned(id, &mut ops);
        let get = |c: &ExprId, new: &FxHashMap<ExprId, ExprId>| new.get(c).copied().unwrap_or(*c);
        let r = match &node {
            Node::Add(ts) => {
                let terms: Vec<ExprId> = ts.iter().map(|t| get(t, &new)).collect();
                pool.sum(&terms)
            }
            Node::Mul(fs) => {
                // Multiply out factor by factor: a list of terms.
                let mut terms: Vec<ExprId> = vec![pool.constant(1.0)];
                let mut kept: Vec<ExprId> = Vec::new();
                for f in fs.iter() {
                    let f = get(f, &new);
                    let parts: Vec<ExprId> = match pool.node(f) {
                        Node::Add(ps) => ps.to_vec(),
                        _ => vec![f],
                    };
                    if terms.len() * parts.len() > max_terms {
                        kept.push(f);
                        continue;
                    }
                    let mut next = Vec::with_capacity(terms.len() * parts.len());
                    for &t in &terms {
                        for &p in &parts {
                            next.push(pool.mul(t, p));
                        }
                    }
                    terms = next;
                }
                let s = pool.sum(&terms);
                if kept.is_empty() {
                    s
                } else {
                    kept.push(s);
                    pool.product(&kept)
                }
            }
            _ => {
                // Rebuild other nodes only if a child changed.
                let changed = node.children().any(|c| new.contains_key(&c));
                if changed {
                    pool.substitute(id, &|l| new.get(&l).copied())
                } else {
                    id
                }
            }
        };
        if r != id {
            new.insert(id, r);
        }
    }
    new.get(&e).copied().unwrap_or(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_of_sums_are_multiplied_out_and_collected() {
        let mut p = ExprPool::new();
        let (x, y, m) = (p.var(0, 0), p.var(1, 0), p.param(daec_expr::ParamId(0)));
        // 2y·(2y + m)/m − 4y²/m  →  2y
        let two = p.constant(2.0);
        let four = p.constant(4.0);
        let two_y = p.mul(two, y);
        let s = p.add(two_y, m);
        let num = p.mul(two_y, s);
        let a = p.div(num, m);
        let y2 = p.powi(y, 2);
        let b0 = p.mul(four, y2);
        let b = p.div(b0, m);
        let e = p.sub(a, b);
        let r = expand(&mut p, e, 64);
        assert_eq!(r, two_y, "{:?}", p.node(r));
        // A product of two binomials: (x + 1)(x − 1) = x² − 1.
        let one = p.constant(1.0);
        let xp = p.add(x, one);
        let xm = p.sub(x, one);
        let prod = p.mul(xp, xm);
        let r = expand(&mut p, prod, 64);
        let x2 = p.powi(x, 2);
        let want = p.sub(x2, one);
        assert_eq!(r, want);
    }
}
