//! Instantiation: hierarchical Modelica (`.mo` files: packages, classes,
//! components, `extends`, connectors and `connect`) to the flat
//! [`ast::Model`] that [`crate::lower`] takes (MLS 3.6, chapters 5, 7
//! and 9).
//!
//! A component of a class type becomes the components of its class, each
//! named with the dotted path of the components through which it is
//! reached (`R1.p.v`, `R[2].n.i`), as one identifier; equations and
//! bindings are renamed the same way and keep their spans in the source.
//! Modifications are merged outer first (§7.2.4); `extends` copies the
//! elements and equations of the base class with the modification of the
//! clause (§7.1). `connect` equations build connection sets whose
//! equations are generated at the end (§9.2, in `connect.rs`).
//!
//! Structural values the instantiation itself needs — sizes of component
//! arrays, `for` ranges and `if` conditions around `connect`, conditions
//! of conditional components — are evaluated from literals and parameter
//! bindings; everything else stays symbolic for the lowering. Recursion is
//! bounded by [`MAX_DEPTH`]: a class that contains or extends itself is a
//! diagnostic.

mod balance;
mod connect;
mod enumeration;
mod function;
mod instance;
mod modification;
mod runtime;
mod scope;
mod tree;

use connect::Connections;
use daec_diag::{Diagnostic, Span, codes};
use daec_syntax::ast::{
    self, Causality, ClassBody, ClassKind, Component, Element, Equation, EquationKind, Expr,
    ExprKind, Ident, StoredDefinition, Variability,
};
use modification::{Home, Mod, Value};
use scope::Scope;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use tree::ClassTree;

/// The deepest nesting of components (and of `extends` chains) the
/// instantiation follows.
pub(crate) const MAX_DEPTH: usize = 64;

/// The most components one component array or expanded `for` may hold,
/// and the most instances a model may have.
const MAX_EXPANDED: usize = 1_000_000;

/// The most component declarations a diagnostic names on the way to its
/// mistake.
const MAX_VIA: usize = 8;

/// The classes of `files` that can be simulated (non-`partial` `model`,
/// `block` and `class` definitions), by full dotted name.
pub fn model_classes(files: &[StoredDefinition]) -> Vec<String> {
    ClassTree::new(files).models()
}

/// The models of [`model_classes`] that no class of `files` uses as a component
/// type or base class: the model a file is written for, if it is one.
pub fn root_model_classes(files: &[StoredDefinition]) -> Vec<String> {
    ClassTree::new(files).roots()
}

/// Flattens the class `name` (a full dotted name) of `files` into a flat
/// model. `None` with the diagnostics when the model has errors.
pub fn instantiate(
    files: &[StoredDefinition],
    name: &str,
) -> (Option<ast::Model>, Vec<Diagnostic>) {
    let tree = ClassTree::new(files);
    let parts: Vec<String> = name.split('.').map(str::to_owned).collect();
    let Some(class) = tree.lookup(0, &parts) else {
        let d = Diagnostic::error(codes::CLASS_NOT_FOUND, format!("no class `{name}`"))
            .with_note(format!("the models are: {}", tree.models().join(", ")));
        return (None, vec![d]);
    };
    let Some(def) = tree.nodes[class].def else {
        let d = Diagnostic::error(
            codes::CLASS_NOT_FOUND,
            format!("`{name}` is only a package"),
        );
        return (None, vec![d]);
    };
    let mut inst = Inst {
        tree: &tree,
        diags: Vec::new(),
        decls: Vec::new(),
        equations: Vec::new(),
        initial: Vec::new(),
        values: HashMap::new(),
        connections: Connections::default(),
        inputs: HashSet::new(),
        interfaces: Vec::new(),
        stack: Vec::new(),
        const_depth: 0,
        top: class,
        instances: 0,
        calls: Vec::new(),
        enum_vars: HashMap::new(),
        checked_enums: HashSet::new(),
        functions: Vec::new(),
        runtime: HashMap::new(),
        wants_runtime: false,
    };
    let top = Instance {
        class,
        prefix: String::new(),
        modification: Mod::default(),
        parent: None,
        variability: Variability::Continuous,
        top: true,
    };
    inst.instantiate(&top);
    inst.connection_equations();
    let Inst {
        mut diags,
        decls,
        equations,
        initial,
        functions,
        ..
    } = inst;
    if diags.iter().any(Diagnostic::is_error) {
        diags.sort_by_key(|d| d.primary_span().map_or(u32::MAX, |s| s.start));
        return (None, diags);
    }
    let (annotations, end_name) = match &def.body {
        ClassBody::Long {
            annotations,
            end_name,
            ..
        } => (annotations.clone(), Some(end_name.clone())),
        ClassBody::Short { .. } => (Vec::new(), None),
    };
    let mut sections = vec![ast::Section {
        initial: false,
        equations,
        span: def.name.span,
    }];
    if !initial.is_empty() {
        sections.push(ast::Section {
            initial: true,
            equations: initial,
            span: def.name.span,
        });
    }
    let model = ast::Model {
        name: Ident {
            name: name.to_owned(),
            span: def.name.span,
        },
        description: def.description.clone(),
        declarations: decls,
        sections,
        annotations,
        end_name: end_name.map(|e| Ident {
            name: name.to_owned(),
            span: e.span,
        }),
        functions,
        span: def.span,
    };
    (Some(model), diags)
}

/// The state of one instantiation.
pub(crate) struct Inst<'a> {
    tree: &'a ClassTree<'a>,
    diags: Vec<Diagnostic>,
    decls: Vec<ast::Declaration>,
    equations: Vec<Equation>,
    initial: Vec<Equation>,
    /// The bindings of parameters and constants, by flat name (flat
    /// expressions), for structural evaluation.
    values: HashMap<String, Expr>,
    connections: Connections,
    /// The flat names of the variables declared `input` (at any level).
    inputs: HashSet<String>,
    /// The interfaces of the model and block instances whose enclosing
    /// instance is being built, by prefix (`None`: not known), for the
    /// balance check.
    interfaces: Vec<(String, Option<balance::Interface>)>,
    /// The component declarations being instantiated, outermost first:
    /// (class, the declaration's name span, its name).
    stack: Vec<(usize, Span, String)>,
    const_depth: usize,
    /// The class being flattened.
    top: usize,
    /// Instances built so far (at most [`MAX_EXPANDED`]).
    instances: usize,
    /// The functions being inlined, outermost first.
    calls: Vec<usize>,
    /// The enumeration type of each flat variable of one (its class).
    enum_vars: HashMap<String, usize>,
    /// The enumeration classes whose literals were checked.
    checked_enums: HashSet<usize>,
    /// The functions called at run time, in the order of their indices.
    functions: Vec<ast::FlatFunction>,
    /// The index in `functions` of each function class made one.
    runtime: HashMap<usize, usize>,
    /// Set when an inlining fails for a reason a call at run time avoids
    /// (a `while` on run-time values, a value beyond the size budget).
    wants_runtime: bool,
}

/// One instance to build.
struct Instance {
    class: usize,
    /// `""` at the top, `R1.` below.
    prefix: String,
    modification: Mod,
    parent: Option<Rc<Scope>>,
    /// `parameter`/`constant` of the component (records pass it on).
    variability: Variability,
    top: bool,
}

/// A resolved component type.
enum Type {
    /// `Real`, `Integer`, `Boolean` or `String`.
    Builtin(String),
    /// A class with a long definition.
    Class(usize),
}

/// A resolved component type with what the short classes on the way add.
struct Resolved {
    ty: Type,
    /// The modifications of the short classes (weaker than the
    /// component's own).
    modification: Mod,
    /// Their dimensions.
    dims: Vec<Expr>,
    /// One of them is a `connector` (`connector RealInput = input Real`).
    connector: bool,
    /// Their causality.
    causality: Causality,
    /// The enumeration class of an enumeration type (then `ty` is
    /// `Integer`).
    enumeration: Option<usize>,
}

/// What one class contributes to an instance, its base classes included.
#[derive(Default)]
struct Contents<'a> {
    components: Vec<(&'a Component, usize)>,
    equations: Vec<(&'a Equation, bool)>,
    /// The modifications of the `extends` clauses.
    modification: Mod,
    /// The first statement of an `algorithm` section (only functions may
    /// have one).
    algorithm: Option<Span>,
}

const BUILTIN_TYPES: &[&str] = &["Real", "Integer", "Boolean", "String"];

/// `m` with every value of this instance (`Home::Here`) bound to `scope`.
fn bind_home(m: &Mod, scope: &Rc<Scope>) -> Mod {
    Mod {
        value: m.value.as_ref().map(|v| Value {
            expr: v.expr.clone(),
            home: match &v.home {
                Home::Here => Home::In(scope.clone()),
                other => other.clone(),
            },
        }),
        subs: m
            .subs
            .iter()
            .map(|(n, s)| (n.clone(), bind_home(s, scope)))
            .collect(),
        redeclare: m.redeclare.as_ref().map(|(t, home)| {
            let home = match home {
                Home::Here => Home::In(scope.clone()),
                other => other.clone(),
            };
            (t.clone(), home)
        }),
        ..m.clone()
    }
}

/// The modification of element `index` (0-based, per dimension) of a
/// component array: array values without `each` are split (MLS 3.6,
/// §7.2.5).
fn pick(m: &Mod, index: &[usize]) -> Mod {
    let value = m.value.as_ref().map(|v| {
        let mut expr = v.expr.clone();
        if !m.each {
            for &i in index {
                match expr.kind {
                    ExprKind::Array(mut items) if i < items.len() => expr = items.swap_remove(i),
                    kind => {
                        expr = Expr {
                            kind,
                            span: expr.span,
                        };
                        break;
                    }
                }
            }
        }
        Value {
            expr,
            home: v.home.clone(),
        }
    });
    Mod {
        value,
        subs: m
            .subs
            .iter()
            .map(|(n, s)| (n.clone(), pick(s, index)))
            .collect(),
        ..m.clone()
    }
}

/// Whether `eqs` hold a `connect` or a reference through a subscripted
/// component (`R[i].v`), which the instantiation must expand.
fn needs_expansion(eqs: &[Equation]) -> bool {
    eqs.iter().any(|e| match &e.kind {
        EquationKind::Call { name, args } => name.name == "connect" || args.iter().any(has_member),
        EquationKind::Simple { lhs, rhs } => has_member(lhs) || has_member(rhs),
        EquationKind::For { body, .. } => needs_expansion(body),
        EquationKind::If {
            branches,
            else_branch,
        } => {
            branches
                .iter()
                .any(|(c, b)| has_member(c) || needs_expansion(b))
                || needs_expansion(else_branch)
        }
        EquationKind::When { branches } => branches.iter().any(|(_, b)| needs_expansion(b)),
        EquationKind::Error => false,
    })
}

fn has_member(e: &Expr) -> bool {
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        if matches!(e.kind, ExprKind::Member { .. }) {
            return true;
        }
        crate::lower::push_children(e, &mut stack);
    }
    false
}

/// The index tuples of an array of shape `dims`, first index slowest.
fn index_tuples(dims: &[usize]) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new()];
    for &d in dims {
        out = out
            .into_iter()
            .flat_map(|t| {
                (0..d).map(move |i| {
                    let mut t = t.clone();
                    t.push(i);
                    t
                })
            })
            .collect();
    }
    out
}

impl<'a> Inst<'a> {
    /// The secondary labels that say through which component declarations
    /// a mistake was reached ("in component `R1` of `Circuit`").
    fn via(&self, mut d: Diagnostic) -> Diagnostic {
        let shown = self.stack.len().saturating_sub(MAX_VIA);
        if shown > 0 {
            d = d.with_note(format!(
                "reached through {} component declarations; the innermost {MAX_VIA} are shown",
                self.stack.len()
            ));
        }
        for (i, (_, span, name)) in self.stack.iter().enumerate().skip(shown).rev() {
            let owner = match i.checked_sub(1) {
                Some(k) => self.tree.full(self.stack[k].0),
                None => self.top_name(),
            };
            d = d.with_secondary(*span, format!("in component `{name}` of `{owner}`"));
        }
        d
    }

    fn top_name(&self) -> String {
        self.tree.full(self.top)
    }

    fn error(&mut self, d: Diagnostic) {
        let d = self.via(d);
        self.diags.push(d);
    }

    /// The components and equations of `class` and its base classes, the
    /// base classes' first (MLS 3.6, §7.1), and the modification of its
    /// `extends` clauses; `chain` holds the classes being extended (a
    /// cycle is reported).
    fn collect(&mut self, class: usize, chain: &mut Vec<usize>) -> Contents<'a> {
        let mut out = Contents::default();
        let tree: &'a ClassTree<'a> = self.tree;
        let Some(def) = tree.nodes[class].def else {
            return out;
        };
        match &def.body {
            ClassBody::Long {
                elements,
                sections,
                algorithm,
                ..
            } => {
                if let Some(st) = algorithm.first() {
                    out.algorithm.get_or_insert(st.span);
                }
                for e in elements {
                    match e {
                        Element::Extends(x) => {
                            let Some(base) = self.base_class(class, &x.base, chain) else {
                                continue;
                            };
                            chain.push(base);
                            let inherited = self.collect(base, chain);
                            chain.pop();
                            out.components.extend(inherited.components);
                            out.equations.extend(inherited.equations);
                            out.algorithm = out.algorithm.or(inherited.algorithm);
                            let own = Mod::from_ast(&x.modifiers, &Home::Here);
                            let merged = Mod::merge(own, inherited.modification);
                            self.report_final(&merged.1);
                            let (m, _) = Mod::merge(out.modification, merged.0);
                            out.modification = m;
                        }
                        Element::Component(c) => out.components.push((c.as_ref(), class)),
                        Element::Class(_) | Element::Import(_) => {}
                    }
                }
                for s in sections {
                    out.equations
                        .extend(s.equations.iter().map(|e| (e, s.initial)));
                }
            }
            ClassBody::Short {
                base, modifiers, ..
            } => {
                // `model M2 = M(k = 2)` is `model M2 extends M(k = 2); end M2`.
                let parent = tree.nodes[class].parent.unwrap_or(0);
                if let Some(b) = self.base_class(parent, base, chain) {
                    chain.push(b);
                    out = self.collect(b, chain);
                    chain.pop();
                    let own = Mod::from_ast(modifiers, &Home::Here);
                    let merged = Mod::merge(own, out.modification);
                    self.report_final(&merged.1);
                    out.modification = merged.0;
                }
            }
        }
        out
    }

    /// The class an `extends` clause of `class` names, reported if
    /// missing or cyclic.
    fn base_class(&mut self, class: usize, base: &ast::TypeName, chain: &[usize]) -> Option<usize> {
        let Some(b) = self.tree.lookup(class, &base.parts) else {
            self.class_not_found(base, class);
            return None;
        };
        if chain.contains(&b) {
            let d = Diagnostic::error(
                codes::INSTANCE_CYCLE,
                format!("`{}` extends itself", self.tree.full(b)),
            )
            .with_primary(base.span, "this `extends` closes a cycle");
            self.error(d);
            return None;
        }
        if chain.len() >= MAX_DEPTH {
            let d = Diagnostic::error(
                codes::TOO_LARGE,
                format!("`extends` clauses nested more than {MAX_DEPTH} deep"),
            )
            .with_primary(base.span, "one base class too many");
            self.error(d);
            return None;
        }
        Some(b)
    }

    fn class_not_found(&mut self, name: &ast::TypeName, from: usize) {
        let mut d = Diagnostic::error(
            codes::CLASS_NOT_FOUND,
            format!("cannot find class `{}`", name.dotted()),
        )
        .with_primary(name.span, "no class of this name");
        let from = self.tree.full(from);
        if !from.is_empty() {
            d = d.with_note(format!(
                "looked up in `{from}`, its enclosing classes and their imports"
            ));
        }
        self.error(d);
    }

    fn report_final(&mut self, clashes: &[(Span, Option<Span>)]) {
        for &(at, final_at) in clashes {
            let mut d =
                Diagnostic::error(codes::MODIFIER_TARGET, "a modifier of a `final` element")
                    .with_primary(at, "cannot change a `final` value");
            if let Some(f) = final_at {
                d = d.with_secondary(f, "declared `final` here");
            }
            self.error(d);
        }
    }

    /// The type of component `c` declared in `class`, through short class
    /// definitions (each adds its modification and dimensions).
    fn resolve_type(
        &mut self,
        c: &Component,
        class: usize,
        redeclared: Option<&(ast::TypeName, Home)>,
        report: bool,
    ) -> Option<Resolved> {
        let mut resolved = Resolved {
            ty: Type::Builtin(String::new()),
            modification: Mod::default(),
            dims: Vec::new(),
            connector: false,
            causality: Causality::None,
            enumeration: None,
        };
        // A `redeclare` names the class in the scope it is written in.
        let (mut name, mut from) = match redeclared {
            Some((t, Home::In(scope))) => (t.clone(), scope.class),
            Some((t, Home::Here)) => (t.clone(), class),
            None => (c.decl.type_name.clone(), class),
        };
        for _ in 0..MAX_DEPTH {
            if name.parts.len() == 1 && BUILTIN_TYPES.contains(&name.parts[0].as_str()) {
                resolved.ty = Type::Builtin(name.parts[0].clone());
                return Some(resolved);
            }
            let Some(found) = self.tree.lookup(from, &name.parts) else {
                if report {
                    self.class_not_found(&name, from);
                }
                return None;
            };
            let def = self.tree.nodes[found].def?;
            resolved.connector |= def.kind == ClassKind::Connector;
            if let Some((class, _)) = self.enumeration(found) {
                // MLS 3.6, §4.9.5: a value of an enumeration is its ordinal.
                resolved.ty = Type::Builtin("Integer".to_owned());
                resolved.enumeration = Some(class);
                return Some(resolved);
            }
            match &def.body {
                ClassBody::Long { .. } => {
                    resolved.ty = Type::Class(found);
                    return Some(resolved);
                }
                ClassBody::Short {
                    causality,
                    base,
                    dims,
                    modifiers,
                } => {
                    if resolved.causality == Causality::None {
                        resolved.causality = *causality;
                    }
                    // The short class's values are written in its own scope;
                    // daec evaluates them where the component is (they are
                    // literals in practice: units, start values).
                    let m = Mod::from_ast(modifiers, &Home::Here);
                    resolved.modification = Mod::merge(resolved.modification, m).0;
                    resolved.dims.extend(dims.iter().cloned());
                    if BUILTIN_TYPES.contains(&base.dotted().as_str()) {
                        resolved.ty = Type::Builtin(base.dotted());
                        return Some(resolved);
                    }
                    from = self.tree.nodes[found].parent.unwrap_or(0);
                    name = base.clone();
                }
            }
        }
        None
    }

    /// Whether component `c` is a connector, and the enumeration class of
    /// its type.
    fn kind_of(&mut self, c: &Component, class: usize) -> (bool, Option<usize>) {
        self.resolve_type(c, class, None, false)
            .map_or((false, None), |r| (r.connector, r.enumeration))
    }
}
