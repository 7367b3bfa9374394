//! Declarations: the symbol table, base types and array sizes, the scalar
//! unknowns, and the attributes (`start`, `fixed`, `nominal`, `min`, `max`,
//! units, `stateSelect`) of unknowns and parameters.

use std::sync::Arc;

use super::{EvalState, Lowerer, Mode, R, SymKind, Symbol, type_source};
use crate::budget::elements;
use crate::suggest::did_you_mean;
use crate::{BaseType, Unknown, UnknownDecl};
use daec_diag::{Diagnostic, Span, codes};
use daec_syntax::ast::{Causality, Declaration, ExprKind, Modifier, Variability};

/// The value of an attribute modifier ([`Lowerer::attribute`]).
pub(super) enum Attr {
    /// `unit`, `displayUnit`, `quantity`.
    Text(String),
    /// One value per element (`fixed` as 0/1).
    Values(Vec<f64>),
}

/// The attributes of one parameter element while it is lowered.
#[derive(Clone, Debug, Default)]
pub(super) struct ParameterAttributes {
    pub(super) start: Option<f64>,
    pub(super) fixed: Option<bool>,
    pub(super) nominal: Option<f64>,
    pub(super) min: Option<f64>,
    pub(super) max: Option<f64>,
    pub(super) unit: Option<String>,
    pub(super) display_unit: Option<String>,
    pub(super) quantity: Option<String>,
}

/// The warning for `value` (described by `what`, e.g. "start value 2 of
/// `x`") outside `[min, max]`, pointing at `span`.
fn bounds_warning(
    what: &str,
    value: f64,
    min: Option<f64>,
    max: Option<f64>,
    span: Span,
) -> Option<Diagnostic> {
    let (bound, limit) = match (min, max) {
        (Some(m), _) if value < m => ("min", m),
        (_, Some(m)) if value > m => ("max", m),
        _ => return None,
    };
    Some(
        Diagnostic::warning(codes::BOUNDS, format!("{what} violates {bound} = {limit}"))
            .with_primary(span, "declared here"),
    )
}

const UNKNOWN_ATTRS: &[&str] = &[
    "start",
    "fixed",
    "nominal",
    "min",
    "max",
    "unit",
    "displayUnit",
    "quantity",
    "stateSelect",
];

impl<'a> Lowerer<'a> {
    pub(super) fn declare_symbols(&mut self) {
        let model = self.model;
        for (i, d) in model.declarations.iter().enumerate() {
            let name = d.name.name.as_str();
            if let Some(&prev) = self.by_name.get(name) {
                let prev_span = model.declarations[self.symbols[prev].decl].name.span;
                self.diags.push(
                    Diagnostic::error(codes::DUPLICATE, format!("`{name}` is declared twice"))
                        .with_primary(d.name.span, "declared again here")
                        .with_secondary(prev_span, "first declared here"),
                );
                continue;
            }
            if name == "time" {
                self.diags.push(
                    Diagnostic::error(
                        codes::DUPLICATE,
                        "`time` is a built-in name and cannot be declared",
                    )
                    .with_primary(d.name.span, "rename this"),
                );
                continue;
            }
            let Some(ty) = self.base_type(d) else {
                continue;
            };
            let kind = match d.variability {
                Variability::Parameter => SymKind::Parameter,
                Variability::Constant => SymKind::Constant,
                Variability::Discrete => SymKind::Discrete,
                Variability::Continuous => {
                    if d.causality == Causality::Input && d.binding.is_none() {
                        self.diags.push(
                            Diagnostic::error(codes::INPUT, format!("input `{name}` has no binding"))
                                .with_primary(d.span, "an input needs a value")
                                .with_note("daec models have no external inputs")
                                .with_help(format!("write the input as a function of time: `input Real {name} = sin(time);`")),
                        );
                        continue;
                    }
                    // (MLS 3.6 §3.8.3: Integer and Boolean variables and
                    // the Reals assigned in `when` clauses are discrete)
                    if ty != BaseType::Real || self.when_assigned.contains(name) {
                        SymKind::Discrete
                    } else {
                        SymKind::Unknown
                    }
                }
            };
            self.by_name.insert(name, self.symbols.len());
            self.symbols.push(Symbol {
                decl: i,
                kind,
                ty,
                dims: Vec::new(),
                first: 0,
                state: EvalState::Todo,
            });
        }
    }

    fn base_type(&mut self, d: &Declaration) -> Option<BaseType> {
        let parts = &d.type_name.parts;
        let t = match parts
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice()
        {
            ["Real"] => BaseType::Real,
            ["Integer"] => BaseType::Integer,
            ["Boolean"] => BaseType::Boolean,
            ["Modelica", ..] | ["SI", ..] | ["SIunits", ..] => BaseType::Real,
            _ => {
                let name = d.type_name.dotted();
                let mut diag = Diagnostic::error(codes::UNSUPPORTED, format!("unknown type `{name}`"))
                    .with_primary(d.type_name.span, "not a type daec knows")
                    .with_note("daec reads `Real`, `Integer`, `Boolean` and the Modelica SI types (`Modelica.Units.SI.*`, read as `Real`)");
                if let Some(s) = did_you_mean(&name, ["Real", "Integer", "Boolean"]) {
                    diag = diag.with_help(format!("did you mean `{s}`?"));
                }
                self.diags.push(diag);
                return None;
            }
        };
        Some(t)
    }

    pub(super) fn decl(&self, s: usize) -> &'a Declaration {
        &self.model.declarations[self.symbols[s].decl]
    }

    /// Evaluates the dimensions of symbol `s` (Const mode).
    pub(super) fn evaluate_dims(&mut self, s: usize) -> R<Vec<usize>> {
        let d = self.decl(s);
        let mut dims = Vec::with_capacity(d.dims.len());
        for e in &d.dims {
            let n = self.const_int(e)?;
            if n < 0 {
                return Err(self.error(
                    Diagnostic::error(codes::SHAPE, format!("array size {n} is negative"))
                        .with_primary(e.span, "must be ≥ 0"),
                ));
            }
            dims.push(n as usize);
        }
        Ok(dims)
    }

    /// Sizes every unknown declaration, checks that the model fits (all
    /// its scalar unknowns with as many equations) before the first is
    /// created, and creates them.
    pub(super) fn create_unknowns(&mut self) {
        let mut sized = Vec::new();
        let mut total = 0usize;
        for s in 0..self.symbols.len() {
            if self.symbols[s].kind != SymKind::Unknown {
                continue;
            }
            let Ok(dims) = self.evaluate_dims(s) else {
                continue;
            };
            let n = elements(&dims);
            total = total.saturating_add(n);
            sized.push((s, dims, n));
        }
        let with_equations = self.scalar_count.saturating_add(total.saturating_mul(2));
        if !self.fits(with_equations, self.pool.len()) {
            let mut largest: Option<(usize, usize)> = None;
            for &(s, _, n) in &sized {
                if largest.is_none_or(|(_, m)| n > m) {
                    largest = Some((s, n));
                }
            }
            self.unknowns_too_large(total, with_equations, largest);
            return;
        }
        // One allocation of the final size (growing by doubling would take
        // up to twice the address space); a failure is reported below, by
        // the declaration that does not fit.
        let _ = self.unknowns.try_reserve_exact(total);
        for (s, dims, n) in sized {
            if self.create_unknown(s, dims, n).is_err() {
                return;
            }
        }
    }

    /// Reports that the `total` scalar unknowns (`scalars` with their
    /// equations and the parameters) do not fit; `largest` is the largest
    /// declaration and its size.
    fn unknowns_too_large(
        &mut self,
        total: usize,
        scalars: usize,
        largest: Option<(usize, usize)>,
    ) {
        self.too_large_reported = true;
        let mut d = Diagnostic::error(
            codes::TOO_LARGE,
            format!("the model is too large: it has {total} scalar unknowns"),
        );
        if let Some((s, n)) = largest {
            let decl = self.decl(s);
            d = d.with_primary(
                decl.span,
                format!("`{}` declared here has {n} elements", decl.name.name),
            );
        }
        d = d.with_note(self.limit_note(scalars, self.pool.len(), true));
        let d = self.with_overrides(d).with_help(
            "make the arrays smaller (a parameter that sizes them can be set with `-p NAME=VALUE`)",
        );
        self.diags.push(d);
    }

    /// Creates the `n` scalar unknowns of symbol `s`, an array of `dims`.
    fn create_unknown(&mut self, s: usize, dims: Vec<usize>, n: usize) -> R<()> {
        let d = self.decl(s);
        self.count_scalars(n, d.span)?;
        if self.unknowns.try_reserve(n).is_err() {
            return Err(self.no_memory(n, std::mem::size_of::<Unknown>(), d.span));
        }
        self.symbols[s].first = self.unknowns.len();
        // One copy of the shared data for the whole array.
        let decl = Arc::new(UnknownDecl {
            base: Arc::from(d.name.name.as_str()),
            type_name: Arc::from(type_source(&d.type_name)),
            dims: dims.clone().into_boxed_slice(),
            description: d.description.as_deref().map(|t| self.shared_text(t)),
            unit: None,
            display_unit: None,
            quantity: None,
            derivative: 0,
        });
        for i in 0..n {
            // (`n` fits in a `u32`: lowering creates fewer scalars)
            self.unknowns.push(Unknown::new(decl.clone(), i as u32));
            self.spans.unknowns.push(d.span);
        }
        self.symbols[s].dims = dims;
        self.symbols[s].state = EvalState::Done;
        Ok(())
    }

    /// Checks modifier `m` of a declaration of size `dims` as an attribute
    /// of `UNKNOWN_ATTRS` and evaluates its value: the text of `unit`,
    /// `displayUnit` and `quantity`, one number per element for the others
    /// (`fixed` as 0/1). `None` for `stateSelect` (accepted, not used) and
    /// after a diagnostic (a value that is not finite is one, named after
    /// the declaration `decl`).
    pub(super) fn attribute(&mut self, m: &Modifier, decl: &str, dims: &[usize]) -> Option<Attr> {
        let key = m.name.name.as_str();
        if !UNKNOWN_ATTRS.contains(&key) {
            let mut diag = Diagnostic::error(codes::MODIFIER, format!("unknown attribute `{key}`"))
                .with_primary(m.name.span, "not an attribute of Real")
                .with_note(format!("attributes of Real: {}", UNKNOWN_ATTRS.join(", ")));
            if let Some(sug) = did_you_mean(key, UNKNOWN_ATTRS.iter().copied()) {
                diag = diag.with_help(format!("did you mean `{sug}`?"));
            }
            self.diags.push(diag);
            return None;
        }
        let Some(value) = &m.value else {
            self.diags.push(
                Diagnostic::error(codes::MODIFIER, format!("`{key}` needs a value"))
                    .with_primary(m.span, format!("write `{key} = …`")),
            );
            return None;
        };
        match key {
            "unit" | "displayUnit" | "quantity" => {
                if let ExprKind::String(text) = &value.kind {
                    return Some(Attr::Text(text.clone()));
                }
                self.diags.push(
                    Diagnostic::error(codes::MODIFIER, format!("`{key}` must be a string"))
                        .with_primary(value.span, "expected a string such as \"m\""),
                );
                None
            }
            "stateSelect" => None,
            _ => {
                let v = self.lower_expr(value, Mode::Const).ok()?;
                // (the start value of a Boolean variable is a Boolean)
                let boolean = self
                    .by_name
                    .get(decl)
                    .is_some_and(|&s| self.symbols[s].ty == BaseType::Boolean);
                let want_bool = key == "fixed" || (key == "start" && boolean);
                if want_bool != (v.ty() == BaseType::Boolean) {
                    let want = if want_bool {
                        BaseType::Boolean
                    } else {
                        BaseType::Real
                    };
                    let _ = self.type_error(value.span, want, v.ty());
                    return None;
                }
                let v = self
                    .broadcast_to(v, dims, value.span, &format!("`{key}`"))
                    .ok()?;
                let values: Vec<f64> = v
                    .elems()
                    .iter()
                    .map(|&e| self.const_value(e).unwrap_or(f64::NAN))
                    .collect();
                if let Some(x) = values.iter().find(|x| !x.is_finite()) {
                    let diag = non_finite_attribute(key, decl, *x, value.span);
                    self.diags.push(diag);
                    return None;
                }
                Some(Attr::Values(values))
            }
        }
    }

    pub(super) fn unknown_attributes(&mut self) {
        for s in 0..self.symbols.len() {
            if self.symbols[s].kind != SymKind::Unknown || self.symbols[s].state != EvalState::Done
            {
                continue;
            }
            let d = self.decl(s);
            let dims = self.symbols[s].dims.clone();
            let first = self.symbols[s].first;
            let n: usize = dims.iter().product();
            for m in &d.modifiers {
                let Some(attr) = self.attribute(m, &d.name.name, &dims) else {
                    continue;
                };
                let key = m.name.name.as_str();
                let group = &mut self.unknowns[first..first + n];
                match attr {
                    Attr::Text(text) => {
                        let Some(first) = group.first() else {
                            continue;
                        };
                        let mut decl = UnknownDecl::clone(first.decl());
                        let slot = match key {
                            "unit" => &mut decl.unit,
                            "displayUnit" => &mut decl.display_unit,
                            _ => &mut decl.quantity,
                        };
                        *slot = Some(Arc::from(text));
                        let decl = Arc::new(decl);
                        for u in group {
                            u.set_decl(decl.clone());
                        }
                    }
                    Attr::Values(values) => {
                        for (u, x) in group.iter_mut().zip(values) {
                            match key {
                                "start" => u.set_start(Some(x)),
                                "fixed" => u.fixed = x != 0.0,
                                "nominal" => u.set_nominal(Some(x)),
                                "min" => u.set_min(Some(x)),
                                _ => u.set_max(Some(x)),
                            }
                        }
                    }
                }
            }
            for j in first..first + n {
                let u = &self.unknowns[j];
                if let Some(start) = u.start()
                    && let Some(w) = bounds_warning(
                        &format!("start value {start} of `{}`", u.name()),
                        start,
                        u.min(),
                        u.max(),
                        d.span,
                    )
                {
                    self.diags.push(w);
                }
            }
        }
    }

    /// The attributes of parameter symbol `s` (declaration `d`, `n`
    /// elements of `dims`), with a warning for each value outside its
    /// `min`/`max`.
    pub(super) fn parameter_attributes(
        &mut self,
        d: &Declaration,
        dims: &[usize],
        values: &[f64],
        names: &[String],
    ) -> Vec<ParameterAttributes> {
        let n = values.len();
        let mut out = vec![ParameterAttributes::default(); n];
        for m in &d.modifiers {
            let Some(attr) = self.attribute(m, &d.name.name, dims) else {
                continue;
            };
            let key = m.name.name.as_str();
            match attr {
                Attr::Text(text) => {
                    for a in &mut out {
                        let slot = match key {
                            "unit" => &mut a.unit,
                            "displayUnit" => &mut a.display_unit,
                            _ => &mut a.quantity,
                        };
                        *slot = Some(text.clone());
                    }
                }
                Attr::Values(xs) => {
                    for (a, x) in out.iter_mut().zip(xs) {
                        match key {
                            "start" => a.start = Some(x),
                            "fixed" => a.fixed = Some(x != 0.0),
                            "nominal" => a.nominal = Some(x),
                            "min" => a.min = Some(x),
                            _ => a.max = Some(x),
                        }
                    }
                }
            }
        }
        for ((a, &x), name) in out.iter().zip(values).zip(names) {
            if let Some(w) = bounds_warning(
                &format!("the value {x} of `{name}`"),
                x,
                a.min,
                a.max,
                d.span,
            ) {
                self.diags.push(w);
            }
        }
        out
    }
}

/// The error for a numeric attribute (`start`, `nominal`, `min`, `max`)
/// of `name` whose value `x` is NaN or infinite.
fn non_finite_attribute(key: &str, name: &str, x: f64, span: Span) -> Diagnostic {
    let d = Diagnostic::error(
        codes::MODIFIER,
        format!("the `{key}` value of `{name}` is not a finite number"),
    )
    .with_primary(span, format!("evaluates to {x}"));
    if x.is_nan() {
        d.with_note("an undefined operation such as 0/0 gives NaN")
    } else {
        d.with_note(
            "a value beyond ±1.8e308 (the largest double) or a division by zero gives an infinity",
        )
    }
}
