//! Modifications (MLS 3.6, §7.2): trees of `name = value` entries, each
//! value with the scope it was written in, merged so that the outer one
//! wins (§7.2.4) and `final` entries cannot be changed (§7.2.6).

use super::scope::Scope;
use daec_diag::Span;
use daec_syntax::ast::{self, Expr};
use std::rc::Rc;

/// Where the value of a modifier is evaluated.
#[derive(Clone, Debug)]
pub(super) enum Home {
    /// In the instance being built (a modifier of its own declarations or
    /// of its `extends` clauses).
    Here,
    /// In an enclosing instance.
    In(Rc<Scope>),
}

/// A value of a modification with its scope.
#[derive(Clone, Debug)]
pub(super) struct Value {
    pub expr: Expr,
    pub home: Home,
}

/// A modification: an optional value and nested entries by name.
#[derive(Clone, Debug, Default)]
pub(super) struct Mod {
    pub value: Option<Value>,
    pub subs: Vec<(String, Mod)>,
    pub each: bool,
    pub is_final: bool,
    /// `redeclare Type name`: the class of the element, and where the
    /// modifier is written (for the lookup of `Type`).
    pub redeclare: Option<(ast::TypeName, Home)>,
    /// Where the entry is written (the first one written, if merged).
    pub span: Option<Span>,
}

impl Mod {
    /// The modification of the modifiers `mods` written in `home`.
    pub fn from_ast(mods: &[ast::Modifier], home: &Home) -> Mod {
        let mut m = Mod::default();
        for a in mods {
            let mut entry = Mod {
                value: a.value.clone().map(|expr| Value {
                    expr,
                    home: home.clone(),
                }),
                subs: Mod::from_ast(&a.nested, home).subs,
                each: a.each,
                is_final: a.is_final,
                redeclare: a.redeclare.clone().map(|t| (t, home.clone())),
                span: Some(a.span),
            };
            // `a.b.c = v` is `a(b(c = v))`.
            let parts: Vec<&str> = a.name.name.split('.').collect();
            for p in parts[1..].iter().rev() {
                entry = Mod {
                    subs: vec![((*p).to_owned(), entry)],
                    each: a.each,
                    span: Some(a.span),
                    ..Mod::default()
                };
            }
            m.add(parts[0], entry);
        }
        m
    }

    fn add(&mut self, name: &str, entry: Mod) {
        match self.subs.iter_mut().find(|(n, _)| n == name) {
            Some((_, old)) => {
                let merged = Mod::merge(std::mem::take(old), entry).0;
                *old = merged;
            }
            None => self.subs.push((name.to_owned(), entry)),
        }
    }

    /// The entry `name`, if any.
    pub fn sub(&self, name: &str) -> Option<&Mod> {
        self.subs.iter().find(|(n, _)| n == name).map(|(_, m)| m)
    }

    /// `outer` merged over `inner`: the outer value wins. The second
    /// result lists the spans of outer entries that try to change a
    /// `final` inner one.
    pub fn merge(outer: Mod, inner: Mod) -> (Mod, Vec<(Span, Option<Span>)>) {
        let mut clashes = Vec::new();
        let merged = merge_into(outer, inner, &mut clashes);
        (merged, clashes)
    }
}

fn merge_into(outer: Mod, inner: Mod, clashes: &mut Vec<(Span, Option<Span>)>) -> Mod {
    let mut out = inner;
    if let Some(v) = outer.value {
        if out.is_final && out.value.is_some() {
            if let Some(s) = outer.span {
                clashes.push((s, out.span));
            }
        } else {
            out.value = Some(v);
            out.span = outer.span.or(out.span);
        }
    }
    if outer.redeclare.is_some() {
        out.redeclare = outer.redeclare;
    }
    out.each |= outer.each;
    out.is_final |= outer.is_final;
    for (name, o) in outer.subs {
        match out.subs.iter_mut().find(|(n, _)| *n == name) {
            Some((_, i)) => {
                let merged = merge_into(o, std::mem::take(i), clashes);
                *i = merged;
            }
            None => out.subs.push((name, o)),
        }
    }
    out
}
