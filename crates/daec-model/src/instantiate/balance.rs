//! The balance check of component instances (MLS 3.6, §4.8): the local
//! equation size of a non-`partial` model or block equals its local
//! number of unknowns, so that an unbalanced model names the component
//! that is wrong.
//!
//! Both are counted in scalars, array sizes evaluated at instantiation:
//! - the local number of unknowns is the number of the variables of its
//!   components of built-in and record type and of its connectors that are
//!   not parameters or constants, plus, for each component of model or
//!   block type, the inputs and flow variables of its public connectors
//!   and its unbound public inputs (its [`Interface`]);
//! - the local equation size is the number of its own equations (`for`
//!   loops times their iterations, the branch an `if` with a parameter
//!   condition chooses or the common size of the branches of any other
//!   `if`, the equations of a `when` branch, none for `assert` or
//!   `reinit`), of the bindings of those variables, of the equations of
//!   the connection sets its `connect` equations make (the equalities of
//!   potential variables, one sum per flow set) and of the `f = 0` of the
//!   flow variables of its components' public connectors that it leaves
//!   unconnected; plus the equations supplied from outside: one for each
//!   flow variable of its own connectors and for each of its unbound
//!   public inputs.
//!
//! Summed over the instance tree, each variable and each equation of the
//! flat model is counted once, so a model whose components all balance
//! has as many equations as unknowns. An instance whose counts cannot be
//! known at instantiation (a size or a range that is not evaluable, an
//! equation of unknown size, an `if` whose branches differ with a
//! condition that is not a parameter) is not checked: the whole-model
//! count of the lowering covers it.

use super::modification::Mod;
use super::{Contents, Inst, Instance, Type};
use daec_diag::{Diagnostic, codes};
use daec_syntax::ast::{
    self, BinOp, Causality, ClassKind, Equation, EquationKind, Expr, ExprKind, Variability,
};
use std::collections::{HashMap, HashSet};

/// What a model or block instance adds to the counts of the instance that
/// contains it (MLS 3.6, §4.8).
pub(super) struct Interface {
    /// The inputs and flow variables of its public connectors and its
    /// unbound public inputs: unknowns of the enclosing instance.
    unknowns: usize,
    /// The flow variables of its public connectors, with their sizes: the
    /// enclosing instance gives `f = 0` to those it does not connect.
    flows: Vec<(String, usize)>,
}

/// Where the items of one instance start in the instantiation's lists.
pub(super) struct Marks {
    /// Its declarations (and those of its sub-instances).
    pub decls: usize,
    /// Its flow variables (and those of its sub-instances).
    pub flows: usize,
    /// Its own equations.
    pub equations: usize,
    /// The connection set elements its own `connect` equations made.
    pub nodes: usize,
    /// The interfaces of its model and block sub-instances.
    pub interfaces: usize,
}

/// The kind of a component, for the counts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Not counted (`outer`).
    Skip,
    /// A variable of a built-in type (a connector of one too).
    Variable { connector: bool, public: bool },
    /// A record.
    Record,
    /// A connector of a class type.
    Connector { public: bool },
    /// A model or block: counted through its [`Interface`].
    Model,
}

/// The local counts of one instance: equations, unknowns, interface.
struct Counts {
    equations: usize,
    unknowns: usize,
    interface: Interface,
}

impl Inst<'_> {
    /// Records the interface of model or block instance `inst` (whose
    /// items start at `marks`) for the instance that contains it, and
    /// reports `inst` when its local equation size and number of unknowns
    /// differ.
    pub(super) fn check_balance(
        &mut self,
        inst: &Instance,
        contents: &Contents<'_>,
        mods: &[Mod],
        marks: &Marks,
    ) {
        let Some(def) = self.tree.nodes[inst.class].def else {
            return;
        };
        if inst.top
            || !matches!(
                def.kind,
                ClassKind::Model | ClassKind::Block | ClassKind::Class
            )
        {
            return;
        }
        let kinds = self.component_kinds(contents, mods);
        let counts = kinds.and_then(|k| self.local_counts(inst, contents, &k, marks));
        self.interfaces.truncate(marks.interfaces);
        let Some(counts) = counts else {
            self.interfaces.push((inst.prefix.clone(), None));
            return;
        };
        let (equations, unknowns) = (counts.equations, counts.unknowns);
        self.interfaces
            .push((inst.prefix.clone(), Some(counts.interface)));
        // After an error the counts are not those of the model written.
        if equations == unknowns
            || def.partial
            || def.kind == ClassKind::Class
            || self.diags.iter().any(Diagnostic::is_error)
        {
            return;
        }
        let component = inst.prefix.trim_end_matches('.');
        let class = self.tree.full(inst.class);
        let plural = |n: usize, w: &str| {
            if n == 1 {
                format!("{n} {w}")
            } else {
                format!("{n} {w}s")
            }
        };
        let d = Diagnostic::error(
            codes::UNBALANCED_COMPONENT,
            format!(
                "component `{component}` of type `{class}` has {} for {}",
                plural(equations, "equation"),
                plural(unknowns, "unknown")
            ),
        )
        .with_primary(
            def.name.span,
            if equations > unknowns {
                "this class has too many equations"
            } else {
                "this class has too few equations"
            },
        )
        .with_note(
            "a model or block must have as many equations as unknowns (MLS 3.6, §4.8); \
             the flow variables of its connectors and its unbound inputs count as equations \
             supplied from outside, a component of model type as the inputs and flow \
             variables of its public connectors",
        );
        self.error(d);
    }

    /// The kind of each component of `contents` (`mods`: their
    /// modifications, for a `redeclare`); `None` for a kind the counts do
    /// not know.
    fn component_kinds(&mut self, contents: &Contents<'_>, mods: &[Mod]) -> Option<Vec<Kind>> {
        let mut kinds = Vec::with_capacity(contents.components.len());
        for (k, (c, class)) in contents.components.iter().enumerate() {
            if c.prefixes.outer {
                kinds.push(Kind::Skip);
                continue;
            }
            let redeclared = mods.get(k).and_then(|m| m.redeclare.as_ref());
            let resolved = self.resolve_type(c, *class, redeclared, false)?;
            let public = !c.protected;
            kinds.push(match resolved.ty {
                Type::Builtin(_) => Kind::Variable {
                    connector: resolved.connector,
                    public,
                },
                Type::Class(_) if resolved.connector => Kind::Connector { public },
                Type::Class(id) => match self.tree.kind(id) {
                    ClassKind::Record => Kind::Record,
                    ClassKind::Model | ClassKind::Block | ClassKind::Class => Kind::Model,
                    _ => return None,
                },
            });
        }
        Some(kinds)
    }

    /// The local counts of `inst`, or `None` when they cannot be known.
    fn local_counts(
        &mut self,
        inst: &Instance,
        contents: &Contents<'_>,
        kinds: &[Kind],
        marks: &Marks,
    ) -> Option<Counts> {
        let sets = self.connections.sets_since(marks.nodes)?;
        let by_component: HashMap<&str, Kind> = contents
            .components
            .iter()
            .zip(kinds)
            .map(|((c, _), &k)| (c.decl.name.name.as_str(), k))
            .collect();
        let decls = &self.decls[marks.decls..];
        let by_name: HashMap<&str, &ast::Declaration> =
            decls.iter().map(|d| (d.name.name.as_str(), d)).collect();
        let flows: HashSet<&str> = self.connections.flows[marks.flows..]
            .iter()
            .map(|(f, _)| f.as_str())
            .collect();
        let mut c = Counts {
            equations: 0,
            unknowns: 0,
            interface: Interface {
                unknowns: 0,
                flows: Vec::new(),
            },
        };
        for d in decls {
            let rel = d.name.name.strip_prefix(&inst.prefix)?;
            let head = &rel[..rel.find(['.', '[']).unwrap_or(rel.len())];
            let kind = *by_component.get(head)?;
            let (connector, public) = match kind {
                Kind::Skip | Kind::Model => continue,
                Kind::Variable { connector, public } => (connector, public),
                Kind::Record => (false, false),
                Kind::Connector { public } => (true, public),
            };
            if !matches!(
                d.variability,
                Variability::Continuous | Variability::Discrete
            ) {
                continue;
            }
            let n = self.decl_size(d)?;
            c.unknowns += n;
            let flow = flows.contains(d.name.name.as_str());
            let input = self.inputs.contains(&d.name.name);
            if d.binding.is_some() {
                c.equations += n;
            } else if input && public {
                c.equations += n;
                c.interface.unknowns += n;
            }
            if flow && connector {
                // Supplied from outside: the enclosing instance's
                // connection, or its `f = 0` (for a protected connector,
                // that of this instance).
                c.equations += n;
                if public {
                    c.interface.unknowns += n;
                    c.interface.flows.push((d.name.name.clone(), n));
                }
            }
        }
        // Sub-instances of model type: their interfaces.
        for (prefix, interface) in &self.interfaces[marks.interfaces..] {
            let rel = prefix.strip_prefix(&inst.prefix)?;
            let head = &rel[..rel.find(['.', '[']).unwrap_or(rel.len())];
            if by_component.get(head) != Some(&Kind::Model) {
                continue;
            }
            let interface = interface.as_ref()?;
            c.unknowns += interface.unknowns;
            for (f, n) in &interface.flows {
                if !self.connections.connected_inside(f) {
                    c.equations += n;
                }
            }
        }
        for (flow, members, names) in &sets {
            let d = by_name.get(names[0].as_str())?;
            if !matches!(
                d.variability,
                Variability::Continuous | Variability::Discrete
            ) {
                continue;
            }
            let n = self.decl_size(d)?;
            c.equations += if *flow {
                usize::from(*members > 1) * n
            } else {
                (names.len() - 1) * n
            };
        }
        let mut loops = Vec::new();
        for eq in &self.equations[marks.equations..] {
            c.equations += self.equation_size(eq, &by_name, &mut loops)?;
        }
        Some(c)
    }

    /// The number of scalars of declaration `d`.
    fn decl_size(&self, d: &ast::Declaration) -> Option<usize> {
        d.dims.iter().try_fold(1usize, |acc, e| {
            let v = self.eval(e, 0)?;
            (v.fract() == 0.0 && (0.0..1e9).contains(&v)).then(|| acc.checked_mul(v as usize))?
        })
    }

    /// The number of scalar equations of the flat equation `eq` (MLS 3.6,
    /// §4.8, §8.3.4 and §8.3.5), `None` when it cannot be known.
    fn equation_size(
        &self,
        eq: &Equation,
        by_name: &HashMap<&str, &ast::Declaration>,
        loops: &mut Vec<String>,
    ) -> Option<usize> {
        let body = |s: &Self, eqs: &[Equation], loops: &mut Vec<String>| {
            eqs.iter().try_fold(0usize, |acc, e| {
                acc.checked_add(s.equation_size(e, by_name, loops)?)
            })
        };
        match &eq.kind {
            EquationKind::Simple { lhs, rhs } => {
                match (
                    self.expr_size(lhs, by_name, loops, 0),
                    self.expr_size(rhs, by_name, loops, 0),
                ) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (a, b) => a.or(b),
                }
            }
            EquationKind::For {
                var,
                range,
                body: eqs,
            } => {
                let n = self.range_len(range)?;
                loops.push(var.name.clone());
                let inner = body(self, eqs, loops);
                loops.pop();
                n.checked_mul(inner?)
            }
            EquationKind::If {
                branches,
                else_branch,
            } => {
                let mut sizes = Vec::new();
                for (cond, eqs) in branches {
                    match self.eval(cond, 0) {
                        // A parameter condition chooses its branch.
                        Some(v) if sizes.is_empty() => {
                            if v != 0.0 {
                                return body(self, eqs, loops);
                            }
                        }
                        _ => sizes.push(body(self, eqs, loops)?),
                    }
                }
                let rest = body(self, else_branch, loops)?;
                // Otherwise every branch must have the same size (§8.3.4).
                sizes.iter().all(|&s| s == rest).then_some(rest)
            }
            // The equations of one branch (§8.3.5).
            EquationKind::When { branches } => branches
                .first()
                .map_or(Some(0), |(_, eqs)| body(self, eqs, loops)),
            EquationKind::Call { name, .. }
                if matches!(name.name.as_str(), "assert" | "terminate" | "reinit") =>
            {
                Some(0)
            }
            EquationKind::Call { .. } | EquationKind::Error => None,
        }
    }

    /// The number of values of the `for` range `e`.
    fn range_len(&self, e: &Expr) -> Option<usize> {
        let int = |x: &Expr| {
            let v = self.eval(x, 0)?;
            (v.fract() == 0.0 && v.abs() < 1e15).then_some(v as i64)
        };
        match &e.kind {
            ExprKind::Range { start, step, stop } => {
                let (a, b) = (int(start)?, int(stop)?);
                let s = step.as_deref().map_or(Some(1), int)?;
                if s == 0 {
                    return None;
                }
                let n = (b - a) / s + 1;
                usize::try_from(n.max(0)).ok()
            }
            ExprKind::Array(items) => Some(items.len()),
            _ => None,
        }
    }

    /// The number of scalars of the flat expression `e` (at nesting
    /// `depth`), `None` when it cannot be known without types (matrix
    /// products, functions) or is nested deeper than [`MAX_SIZE_DEPTH`].
    fn expr_size(
        &self,
        e: &Expr,
        by_name: &HashMap<&str, &ast::Declaration>,
        loops: &[String],
        depth: usize,
    ) -> Option<usize> {
        if depth > MAX_SIZE_DEPTH {
            return None;
        }
        let size = |x: &Expr| self.expr_size(x, by_name, loops, depth + 1);
        match &e.kind {
            ExprKind::Integer(_) | ExprKind::Real(_) | ExprKind::Bool(_) | ExprKind::String(_) => {
                Some(1)
            }
            ExprKind::Name(parts) if parts.len() == 1 => {
                let name = parts[0].name.as_str();
                if name == "time" || loops.iter().any(|l| l == name) {
                    return Some(1);
                }
                self.decl_size(by_name.get(name)?)
            }
            ExprKind::Index { base, indices } => {
                let ExprKind::Name(parts) = &base.kind else {
                    return None;
                };
                let d = by_name.get(parts.first()?.name.as_str())?;
                let scalar = |i: &Expr| {
                    !matches!(i.kind, ExprKind::Colon | ExprKind::Range { .. })
                        && size(i) == Some(1)
                };
                (parts.len() == 1 && indices.len() == d.dims.len() && indices.iter().all(scalar))
                    .then_some(1)
            }
            ExprKind::Unary { expr, .. } => size(expr),
            ExprKind::Binary { op, lhs, rhs } => {
                let (a, b) = (size(lhs)?, size(rhs)?);
                match op {
                    BinOp::Add
                    | BinOp::Sub
                    | BinOp::ElemAdd
                    | BinOp::ElemSub
                    | BinOp::ElemMul
                    | BinOp::ElemDiv
                    | BinOp::ElemPow
                        if a == b || a == 1 || b == 1 =>
                    {
                        Some(a.max(b))
                    }
                    BinOp::Mul if a == 1 || b == 1 => Some(a.max(b)),
                    BinOp::Div if b == 1 => Some(a),
                    _ if a == 1 && b == 1 => Some(1),
                    _ => None,
                }
            }
            ExprKind::If { else_value, .. } => size(else_value),
            ExprKind::Call { func, args, .. } if func.len() == 1 => {
                let sizes: Option<Vec<usize>> = args.iter().map(size).collect();
                let sizes = sizes?;
                match (func[0].name.as_str(), sizes.as_slice()) {
                    (
                        "der" | "pre" | "sin" | "cos" | "tan" | "asin" | "acos" | "atan" | "sinh"
                        | "cosh" | "tanh" | "exp" | "log" | "log10" | "sqrt" | "abs" | "sign"
                        | "floor" | "ceil" | "noEvent" | "edge" | "change",
                        [n],
                    ) => Some(*n),
                    ("smooth", [_, n]) => Some(*n),
                    ("sum" | "product" | "min" | "max", [_]) => Some(1),
                    (_, s) if s.iter().all(|&n| n == 1) && is_scalar_function(&func[0].name) => {
                        Some(1)
                    }
                    _ => None,
                }
            }
            ExprKind::Array(items) => {
                let first = size(items.first()?)?;
                items
                    .iter()
                    .all(|i| size(i) == Some(first))
                    .then(|| first.checked_mul(items.len()))?
            }
            _ => None,
        }
    }
}

/// The deepest expression nesting whose size is worked out (deeper ones
/// leave the instance to the whole-model count).
const MAX_SIZE_DEPTH: usize = 256;

/// The built-in functions of scalar arguments with a scalar value.
fn is_scalar_function(name: &str) -> bool {
    matches!(
        name,
        "atan2"
            | "min"
            | "max"
            | "mod"
            | "rem"
            | "div"
            | "integer"
            | "semiLinear"
            | "initial"
            | "terminal"
            | "sample"
            | "homotopy"
    )
}

/// Whether the declaration of component `c` makes it an input.
pub(super) fn is_input(c: &ast::Component, resolved: Causality) -> bool {
    c.decl.causality == Causality::Input || resolved == Causality::Input
}
