//! Connection sets and their equations (MLS 3.6, §9.2): the potential
//! variables of a set are equal, its flow variables sum to zero (those of
//! outside connectors with a minus sign), and a flow variable that is not
//! connected as part of an inside connector is zero. The equalities, and
//! the sums of two flow variables (`a = -b`), are marked as aliases for
//! [`crate::aliases`].

use super::Inst;
use super::instance::flat_name;
use super::scope::{Loops, Scope};
use daec_diag::{Diagnostic, Span, codes};
use daec_syntax::ast::{BinOp, Equation, EquationKind, Expr, ExprKind, UnOp};
use std::collections::HashMap;

/// The connectors of the instance tree and the connection sets.
#[derive(Default)]
pub(super) struct Connections {
    /// Every connector instance by flat name: its variables (relative
    /// names, `.v` or `""` for a connector of a built-in type) and
    /// whether each is a flow variable.
    pub connectors: HashMap<String, Vec<(String, bool)>>,
    /// Every flow variable by flat name, with its declaration.
    pub flows: Vec<(String, Span)>,
    /// Set elements: flat variable and whether it is part of an outside
    /// connector.
    index: HashMap<(String, bool), usize>,
    nodes: Vec<(String, bool)>,
    /// Union–find parents.
    parent: Vec<usize>,
    /// Per element: flow variable, and the `connect` that made it.
    info: Vec<(bool, Span)>,
}

impl Connections {
    fn node(&mut self, name: String, outside: bool, flow: bool, span: Span) -> usize {
        let key = (name, outside);
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        let i = self.nodes.len();
        self.index.insert(key.clone(), i);
        self.nodes.push(key);
        self.parent.push(i);
        self.info.push((flow, span));
        i
    }

    fn root(&mut self, mut i: usize) -> usize {
        while self.parent[i] != i {
            self.parent[i] = self.parent[self.parent[i]];
            i = self.parent[i];
        }
        i
    }

    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.root(a), self.root(b));
        if ra != rb {
            // The smaller index stays the root: sets keep source order.
            self.parent[ra.max(rb)] = ra.min(rb);
        }
    }
}

impl Connections {
    /// The number of set elements made so far.
    pub(super) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// The connection sets of the elements `from..` (those that the
    /// `connect` equations of one instance made): for each, whether it
    /// holds flow variables, its number of elements and its distinct
    /// variables; `None` when a set also holds an earlier element.
    pub(super) fn sets_since(&mut self, from: usize) -> Option<Vec<(bool, usize, Vec<String>)>> {
        let mut sets: Vec<(bool, usize, Vec<String>)> = Vec::new();
        let mut set_of: HashMap<usize, usize> = HashMap::new();
        for i in from..self.nodes.len() {
            let r = self.root(i);
            if r < from {
                return None;
            }
            let k = *set_of.entry(r).or_insert_with(|| {
                sets.push((self.info[i].0, 0, Vec::new()));
                sets.len() - 1
            });
            let set = &mut sets[k];
            set.1 += 1;
            if !set.2.contains(&self.nodes[i].0) {
                set.2.push(self.nodes[i].0.clone());
            }
        }
        Some(sets)
    }

    /// Whether the variable `flat` is connected as part of an inside
    /// connector.
    pub(super) fn connected_inside(&self, flat: &str) -> bool {
        self.index.contains_key(&(flat.to_owned(), false))
    }
}

impl Inst<'_> {
    /// `connect(a, b)` in `scope`: the variables of the two connectors
    /// join connection sets.
    pub(super) fn connect(&mut self, a: &Expr, b: &Expr, scope: &Scope, loops: &Loops, span: Span) {
        let disabled = |e: &Expr| {
            let mut e = e;
            loop {
                match &e.kind {
                    ExprKind::Name(parts) => {
                        return scope.names.get(&parts[0].name).is_some_and(|c| c.disabled);
                    }
                    ExprKind::Index { base, .. } | ExprKind::Member { base, .. } => e = base,
                    _ => return false,
                }
            }
        };
        // A connection to a removed conditional component is removed
        // (MLS 3.6, §4.4.5).
        if disabled(a) || disabled(b) {
            return;
        }
        let (Some((fa, oa)), Some((fb, ob))) = (
            self.component_ref(a, scope, loops),
            self.component_ref(b, scope, loops),
        ) else {
            return;
        };
        let va = self.connector_vars(&fa, a.span);
        let vb = self.connector_vars(&fb, b.span);
        let (Some(va), Some(vb)) = (va, vb) else {
            return;
        };
        let mut sa = va.clone();
        let mut sb = vb.clone();
        sa.sort();
        sb.sort();
        if sa != sb {
            let only = |x: &[(String, bool)], y: &[(String, bool)]| {
                x.iter()
                    .filter(|v| !y.contains(v))
                    .map(|(n, f)| {
                        let n = n.trim_start_matches('.');
                        if *f {
                            format!("flow `{n}`")
                        } else {
                            format!("`{n}`")
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let d = Diagnostic::error(
                codes::CONNECT,
                format!("`{fa}` and `{fb}` are connectors of different kinds"),
            )
            .with_primary(a.span, format!("has {}", only(&sa, &sb)))
            .with_secondary(b.span, format!("has {}", only(&sb, &sa)))
            .with_note("connected connectors must have the same variables, with the same `flow` prefixes (MLS 3.6, §9.3)");
            self.error(d);
            return;
        }
        for (rel, flow) in va {
            let x = self.connections.node(format!("{fa}{rel}"), oa, flow, span);
            let y = self.connections.node(format!("{fb}{rel}"), ob, flow, span);
            self.connections.union(x, y);
        }
    }

    fn connector_vars(&mut self, flat: &str, span: Span) -> Option<Vec<(String, bool)>> {
        if let Some(v) = self.connections.connectors.get(flat) {
            return Some(v.clone());
        }
        let d = Diagnostic::error(codes::CONNECT, format!("`{flat}` is not a connector"))
            .with_primary(span, "not a connector")
            .with_note("`connect` joins components of `connector` classes");
        self.error(d);
        None
    }

    /// The equations of the connection sets, and `f = 0` for the flow
    /// variables not connected as part of an inside connector.
    pub(super) fn connection_equations(&mut self) {
        let c = &mut self.connections;
        let mut sets: Vec<Vec<usize>> = Vec::new();
        let mut set_of: HashMap<usize, usize> = HashMap::new();
        for i in 0..c.nodes.len() {
            let r = c.root(i);
            let k = *set_of.entry(r).or_insert_with(|| {
                sets.push(Vec::new());
                sets.len() - 1
            });
            sets[k].push(i);
        }
        let mut out = Vec::new();
        for set in &sets {
            let (flow, span) = c.info[set[0]];
            let name = |i: usize| flat_name(c.nodes[i].0.clone(), span);
            if flow && set.len() == 2 && c.nodes[set[0]].0 != c.nodes[set[1]].0 {
                // Two flow variables: `a + b = 0` (or `a - b = 0` across
                // an outside connector) is the alias `a = -b` (`a = b`).
                let (a, b) = (set[0], set[1]);
                let rhs = if c.nodes[a].1 == c.nodes[b].1 {
                    Expr {
                        kind: ExprKind::Unary {
                            op: UnOp::Neg,
                            expr: Box::new(name(b)),
                        },
                        span,
                    }
                } else {
                    name(b)
                };
                let mut eq = equation(name(a), rhs, span);
                eq.annotations = alias_annotation(span);
                out.push(eq);
            } else if flow {
                // Σ (inside) − Σ (outside) = 0, each variable once per side.
                let mut sum: Option<Expr> = None;
                for &i in set {
                    let term = name(i);
                    let outside = c.nodes[i].1;
                    sum = Some(match sum {
                        None if outside => Expr {
                            kind: ExprKind::Unary {
                                op: UnOp::Neg,
                                expr: Box::new(term),
                            },
                            span,
                        },
                        None => term,
                        Some(s) => Expr {
                            kind: ExprKind::Binary {
                                op: if outside { BinOp::Sub } else { BinOp::Add },
                                lhs: Box::new(s),
                                rhs: Box::new(term),
                            },
                            span,
                        },
                    });
                }
                if let Some(lhs) = sum.filter(|_| set.len() > 1) {
                    out.push(equation(lhs, zero(span), span));
                }
            } else {
                let mut seen = vec![c.nodes[set[0]].0.clone()];
                for &i in &set[1..] {
                    if seen.contains(&c.nodes[i].0) {
                        continue;
                    }
                    seen.push(c.nodes[i].0.clone());
                    let mut eq = equation(name(set[0]), name(i), span);
                    eq.annotations = alias_annotation(span);
                    out.push(eq);
                }
            }
        }
        for (f, span) in c.flows.clone() {
            let connected = match c.index.get(&(f.clone(), false)) {
                Some(&i) => {
                    let r = c.root(i);
                    set_of.get(&r).is_some_and(|&k| sets[k].len() > 1)
                }
                None => false,
            };
            if !connected {
                out.push(equation(flat_name(f, span), zero(span), span));
            }
        }
        self.equations.extend(out);
    }
}

fn zero(span: Span) -> Expr {
    Expr {
        kind: ExprKind::Real(0.0),
        span,
    }
}

fn equation(lhs: Expr, rhs: Expr, span: Span) -> Equation {
    Equation {
        kind: EquationKind::Simple { lhs, rhs },
        description: None,
        annotations: Vec::new(),
        span,
    }
}

/// `annotation(__daec(alias = true))`: the equality of two potential
/// variables, or of two flow variables up to the sign, which the lowering
/// eliminates as an alias.
fn alias_annotation(span: Span) -> Vec<daec_syntax::ast::Modifier> {
    let ident = |name: &str| daec_syntax::ast::Ident {
        name: name.to_owned(),
        span,
    };
    vec![daec_syntax::ast::Modifier {
        each: false,
        is_final: false,
        name: ident("__daec"),
        nested: vec![daec_syntax::ast::Modifier {
            each: false,
            is_final: false,
            name: ident("alias"),
            nested: Vec::new(),
            value: Some(Expr {
                kind: ExprKind::Bool(true),
                span,
            }),
            redeclare: None,
            span,
        }],
        value: None,
        redeclare: None,
        span,
    }]
}
