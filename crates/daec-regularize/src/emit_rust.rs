//! The Rust emitter: a [`QuasiLinearForm`] as a self-contained Rust module
//! implementing `daec_solve::QuasiLinearDae` (`--emit rust`).
//!
//! The module has `daec-solve` as its only dependency. It contains
//!
//! * `pub struct <Model>` with one `f64` field per parameter (names made
//!   safe for Rust, the original name in the field's doc comment) and a
//!   `Default` impl with the model's values;
//! * `pub const UNKNOWNS: &[&str]` — the flat names, `z[j]` is
//!   `UNKNOWNS[j]` — and `CONSTRAINT_LEVELS` (the level of each constraint
//!   row, steinbrecher2016 Def. 2.3);
//! * the trait impl: residuals `E(t,z)ż − k(t,z)` and `g(t,z)` (also
//!   both in one function, `residual`), the mass matrix `E(t,z)` (declared
//!   constant when it depends on parameters only), and the analytic
//!   sparse Jacobians `∂(Eż − k)/∂z`, `∂g/∂z` (differentiated
//!   symbolically with [`ExprPool::diff`]), each as a constant pattern and
//!   a values function. Shared subexpressions are
//!   `let` bindings ([`daec_expr::to_rust`] does the common-subexpression
//!   elimination per function).
//!
//! This crate does not depend on `daec-solve`: the emitter writes text, and
//! a test compiles it against the real trait (`tests/emit_rust.rs` of the
//! root package).

use crate::error::RegularizeError;
use crate::formulation::{Formulation, QuasiLinearForm, UnknownKind};
use crate::quasi_linear::{mass_entries, sparse_jacobian};
use daec_expr::{ExprId, ExprPool, ParamId, RustNames, to_rust};
use std::fmt::Write as _;

/// Rust's keywords (strict, reserved and weak ones that cannot be field
/// names), which get a trailing `_`.
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "type",
    "union", "unsafe", "use", "where", "while", "abstract", "become", "box", "do", "final",
    "macro", "override", "priv", "try", "typeof", "unsized", "virtual", "yield",
];

/// `name` as a Rust identifier: non-alphanumeric characters become `_`, a
/// leading digit or an empty name gets a prefix, keywords get a trailing
/// `_`.
pub fn rust_ident(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    while s.contains("__") {
        s = s.replace("__", "_");
    }
    let s = s.trim_matches('_').to_string();
    let s = if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        format!("p_{s}")
    } else {
        s
    };
    if KEYWORDS.contains(&s.as_str()) {
        format!("{s}_")
    } else {
        s
    }
}

/// The names in Rust's type namespace that the emitted module uses or that
/// the standard prelude brings in (Rust 2021 and 2024): a struct of one of
/// these names would shadow it (`impl Default for Default`).
const PRELUDE_TYPES: &[&str] = &[
    "AsMut",
    "AsRef",
    "AsyncFn",
    "AsyncFnMut",
    "AsyncFnOnce",
    "Box",
    "Clone",
    "Copy",
    "Debug",
    "Default",
    "DoubleEndedIterator",
    "Drop",
    "Eq",
    "Err",
    "ExactSizeIterator",
    "Extend",
    "Fn",
    "FnMut",
    "FnOnce",
    "From",
    "FromIterator",
    "Future",
    "Hash",
    "Into",
    "IntoFuture",
    "IntoIterator",
    "Iterator",
    "None",
    "Ok",
    "Option",
    "Ord",
    "PartialEq",
    "PartialOrd",
    "QuasiLinearDae",
    "Result",
    "Send",
    "Sized",
    "Some",
    "String",
    "Sync",
    "ToOwned",
    "ToString",
    "TryFrom",
    "TryInto",
    "Unpin",
    "Vec",
];

/// `name` as a Rust type name (CamelCase): the name of the struct
/// [`emit_rust`] emits for a model called `name`. Only ASCII letters,
/// digits and `_`; a keyword or a type name of Rust's prelude gets the
/// suffix `Model` (`Default` → `DefaultModel`), so that it shadows no
/// name of the prelude or of the module.
pub fn type_name(name: &str) -> String {
    let mut out = String::new();
    for part in rust_ident(name).split('_') {
        let mut cs = part.chars();
        if let Some(c) = cs.next() {
            out.push(c.to_ascii_uppercase());
            out.extend(cs);
        }
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert_str(0, "Model");
    }
    if KEYWORDS.contains(&out.as_str()) || PRELUDE_TYPES.contains(&out.as_str()) {
        out.push_str("Model");
    }
    out
}

/// A float literal that reads back to exactly `v`.
fn literal(v: f64) -> String {
    if v.is_nan() {
        "f64::NAN".into()
    } else if v == f64::INFINITY {
        "f64::INFINITY".into()
    } else if v == f64::NEG_INFINITY {
        "f64::NEG_INFINITY".into()
    } else {
        format!("{v:?}")
    }
}

/// Whether `c` may stand for itself in generated Rust text (comments and
/// string literals): printable ASCII and non-ASCII letters and digits.
/// Everything else — line breaks and other control characters, the
/// bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069,
/// which rustc refuses), line and paragraph separators, invisible
/// formatting characters, combining marks — is written as an escape.
fn stands_for_itself(c: char) -> bool {
    matches!(c, ' '..='~') || (!c.is_ascii() && c.is_alphanumeric())
}

/// `text` made safe for a `//` or `///` comment of generated Rust (the
/// comments of [`emit_rust`] and the header of `daec-sim`'s native
/// source): the characters other than printable ASCII and non-ASCII
/// letters and digits as `\u{…}`, so that a name can neither end the
/// comment line nor reorder the text around it.
pub fn comment_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if stands_for_itself(c) {
            out.push(c);
        } else {
            out.extend(c.escape_unicode());
        }
    }
    out
}

/// `text` as a Rust string literal: `"` and `\` escaped, the characters that
/// do not [`stands_for_itself`] as `\u{…}` escapes.
fn string_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if stands_for_itself(c) => out.push(c),
            c => out.extend(c.escape_unicode()),
        }
    }
    out.push('"');
    out
}

/// The Rust text of an unknown of a quasi-linear form in generated code:
/// `z[j]`, or `zdot[j]` for its derivative (the form is of first order:
/// higher derivatives never occur and read as NaN).
pub fn quasi_linear_var(unknown: u32, order: u32) -> String {
    match order {
        0 => format!("z[{unknown}]"),
        1 => format!("zdot[{unknown}]"),
        _ => "f64::NAN".into(),
    }
}

struct Names<'a> {
    fields: &'a [Option<String>],
}

impl RustNames for Names<'_> {
    fn var(&self, unknown: u32, order: u32) -> String {
        quasi_linear_var(unknown, order)
    }
    fn param(&self, p: ParamId) -> String {
        match self.fields.get(p.0 as usize) {
            Some(Some(f)) => format!("self.{f}"),
            _ => "f64::NAN".into(),
        }
    }
}

/// Writes `fn <name>(&self, <args>, out: &mut [f64]) { lets; out[k] = … }`.
fn write_values_fn(
    out: &mut String,
    pool: &ExprPool,
    names: &Names<'_>,
    name: &str,
    args: &str,
    roots: &[ExprId],
) {
    let (lets, exprs) = to_rust(pool, roots, names);
    let _ = writeln!(out, "    fn {name}(&self, {args}, out: &mut [f64]) {{");
    for l in &lets {
        let _ = writeln!(out, "        {l}");
    }
    for (k, e) in exprs.iter().enumerate() {
        let _ = writeln!(out, "        out[{k}] = {e};");
    }
    let _ = writeln!(out, "    }}");
}

fn write_pattern(out: &mut String, name: &str, pattern: &[(usize, usize)]) {
    let _ = writeln!(
        out,
        "/// Sparsity pattern `(row, column)`, in the order of the values.\npub const {name}: &[(usize, usize)] = &["
    );
    for chunk in pattern.chunks(8) {
        let items: Vec<String> = chunk.iter().map(|(i, j)| format!("({i}, {j})")).collect();
        let _ = writeln!(out, "    {},", items.join(", "));
    }
    let _ = writeln!(out, "];");
}

/// Emits `form` (expressions in `pool`, which grows by the Jacobians) as a
/// Rust module. `params[p]` is the name and default value of parameter
/// `ParamId(p)` (`Dae::parameters` order); `model_name` names the struct
/// (in CamelCase) and the module documentation.
pub fn emit_rust(
    pool: &mut ExprPool,
    form: &QuasiLinearForm,
    model_name: &str,
    params: &[(String, f64)],
) -> String {
    emit(pool, form, model_name, params, None, &[])
}

/// [`Formulation::quasi_linear`] followed by [`emit_rust`]; the module
/// documentation names the form. `invariants` are the residuals of the
/// model's declared invariants in the formulation's unknowns (no
/// derivatives): a module for a model with invariants has
/// `N_INVARIANTS` and an inherent `invariants(t, z, out)` that evaluates
/// them, for a caller to measure or enforce (the formulation's rows do
/// not contain them).
pub fn emit_rust_formulation(
    pool: &mut ExprPool,
    form: &Formulation,
    model_name: &str,
    params: &[(String, f64)],
    invariants: &[ExprId],
) -> Result<String, RegularizeError> {
    let q = form.quasi_linear(pool)?;
    Ok(emit(pool, &q, model_name, params, Some(form), invariants))
}

fn emit(
    pool: &mut ExprPool,
    form: &QuasiLinearForm,
    model_name: &str,
    params: &[(String, f64)],
    formulation: Option<&Formulation>,
    invariants: &[ExprId],
) -> String {
    let n = form.n();
    // Only the parameters the equations use become fields.
    let diff_rows: Vec<ExprId> = form.diff.iter().map(|r| r.residual).collect();
    let con_rows: Vec<ExprId> = form.constraints.iter().map(|c| c.expr).collect();
    let (mass_pattern, mass_exprs) = mass_entries(form);
    let (jd_pattern, jd_exprs) = sparse_jacobian(pool, &diff_rows);
    let (jg_pattern, jg_exprs) = sparse_jacobian(pool, &con_rows);
    let pool: &ExprPool = pool;
    let mut used = vec![false; params.len()];
    for &r in diff_rows.iter().chain(&con_rows).chain(invariants) {
        for l in pool.leaves(r) {
            if let Some(daec_expr::Leaf::Param(p)) = pool.as_leaf(l)
                && let Some(u) = used.get_mut(p.0 as usize)
            {
                *u = true;
            }
        }
    }
    let mut taken: Vec<String> = Vec::new();
    let fields: Vec<Option<String>> = params
        .iter()
        .zip(&used)
        .map(|((name, _), &u)| {
            if !u {
                return None;
            }
            let base = rust_ident(name);
            let mut f = base.clone();
            let mut k = 1;
            while taken.contains(&f) {
                k += 1;
                f = format!("{base}_{k}");
            }
            taken.push(f.clone());
            Some(f)
        })
        .collect();
    let names = Names { fields: &fields };
    let ty = type_name(model_name);
    let form_name = formulation.map_or("quasi-linear".to_string(), |f| {
        f.form.name().to_ascii_uppercase()
    });
    let mut out = String::new();
    let _ = writeln!(
        out,
        "//! Model `{}`, {form_name} formulation, generated by daec (do not edit).\n//!\n//! A quasi-linear DAE `E(t,z)·ż = k(t,z)`, `0 = g(t,z)` with {n} unknowns,\n//! {} differential rows and {} constraint rows, implementing\n//! [`daec_solve::QuasiLinearDae`] with analytic sparse Jacobians.",
        comment_text(model_name),
        form.diff.len(),
        form.constraints.len()
    );
    let _ = writeln!(
        out,
        "#![allow(unused_variables, non_snake_case, non_camel_case_types, unused_parens, clippy::all)]\n"
    );
    let _ = writeln!(out, "/// Names of the unknowns: `z[j]` is `UNKNOWNS[j]`.");
    let _ = writeln!(out, "///");
    for (j, u) in form.unknowns.iter().enumerate() {
        let what = match u.kind {
            UnknownKind::Original(_) => "unknown of the model".to_string(),
            UnknownKind::Derivative { unknown, order } => format!(
                "stands for the derivative of order {order} of `{}`",
                form.unknowns.get(unknown).map_or("?", |v| v.name.as_str())
            ),
            UnknownKind::Multiplier { constraint } => {
                format!("multiplier of constraint row {}", constraint + 1)
            }
            UnknownKind::Velocity { unknown } => format!(
                "velocity, the derivative of `{}`",
                form.unknowns.get(unknown).map_or("?", |v| v.name.as_str())
            ),
        };
        let _ = writeln!(
            out,
            "/// * `z[{j}]`: `{}` ({})",
            comment_text(&u.name),
            comment_text(&what)
        );
    }
    let list: Vec<String> = form
        .unknowns
        .iter()
        .map(|u| string_literal(&u.name))
        .collect();
    let _ = writeln!(out, "pub const UNKNOWNS: &[&str] = &[");
    for chunk in list.chunks(8) {
        let _ = writeln!(out, "    {},", chunk.join(", "));
    }
    let _ = writeln!(out, "];\n");
    let levels: Vec<String> = form
        .constraints
        .iter()
        .map(|c| c.level.to_string())
        .collect();
    let _ = writeln!(
        out,
        "/// Constraint level of each constraint row (0 = stated, ≥ 1 hidden).\npub const CONSTRAINT_LEVELS: &[u32] = &[{}];\n",
        levels.join(", ")
    );
    write_pattern(&mut out, "MASS_PATTERN", &mass_pattern);
    write_pattern(&mut out, "DIFF_JACOBIAN_PATTERN", &jd_pattern);
    write_pattern(&mut out, "CONSTRAINT_JACOBIAN_PATTERN", &jg_pattern);
    // The struct and its defaults.
    let _ = writeln!(
        out,
        "\n/// Model `{}` with its parameters (defaults: the model's values).\n#[derive(Clone, Debug, PartialEq)]\npub struct {ty} {{",
        comment_text(model_name)
    );
    for ((name, _), f) in params.iter().zip(&fields) {
        if let Some(f) = f {
            let _ = writeln!(
                out,
                "    /// Parameter `{}`.\n    pub {f}: f64,",
                comment_text(name)
            );
        }
    }
    let _ = writeln!(out, "}}\n");
    let _ = writeln!(
        out,
        "impl Default for {ty} {{\n    fn default() -> Self {{\n        Self {{"
    );
    for ((_, v), f) in params.iter().zip(&fields) {
        if let Some(f) = f {
            let _ = writeln!(out, "            {f}: {},", literal(*v));
        }
    }
    let _ = writeln!(out, "        }}\n    }}\n}}\n");
    // The trait.
    let _ = writeln!(out, "impl daec_solve::QuasiLinearDae for {ty} {{");
    let _ = writeln!(
        out,
        "    fn n_vars(&self) -> usize {{\n        {n}\n    }}\n    fn n_diff(&self) -> usize {{\n        {}\n    }}\n    fn n_constraints(&self) -> usize {{\n        {}\n    }}",
        form.diff.len(),
        form.constraints.len()
    );
    let zz = "t: f64, z: &[f64], zdot: &[f64]";
    let z = "t: f64, z: &[f64]";
    write_values_fn(&mut out, pool, &names, "diff_residual", zz, &diff_rows);
    write_values_fn(&mut out, pool, &names, "constraints", z, &con_rows);
    // Both residuals in one function (the integrator's call at every
    // stage): the subexpressions the rows share are computed once.
    let both: Vec<ExprId> = diff_rows.iter().chain(&con_rows).copied().collect();
    write_values_fn(&mut out, pool, &names, "residual", zz, &both);
    let _ = writeln!(
        out,
        "    fn mass_pattern(&self) -> Vec<(usize, usize)> {{\n        MASS_PATTERN.to_vec()\n    }}"
    );
    write_values_fn(&mut out, pool, &names, "mass_values", z, &mass_exprs);
    // A mass matrix of parameters and constants only is evaluated once by
    // the integrator.
    let mass_constant = mass_exprs.iter().all(|&e| {
        pool.leaves(e).iter().all(|&l| {
            !matches!(
                pool.as_leaf(l),
                Some(daec_expr::Leaf::Time | daec_expr::Leaf::Var { .. })
            )
        })
    });
    if mass_constant {
        let _ = writeln!(
            out,
            "    fn mass_is_constant(&self) -> bool {{\n        true\n    }}"
        );
    }
    let _ = writeln!(
        out,
        "    fn diff_jacobian_pattern(&self) -> Vec<(usize, usize)> {{\n        DIFF_JACOBIAN_PATTERN.to_vec()\n    }}"
    );
    write_values_fn(
        &mut out,
        pool,
        &names,
        "diff_jacobian_values",
        zz,
        &jd_exprs,
    );
    let _ = writeln!(
        out,
        "    fn constraint_jacobian_pattern(&self) -> Vec<(usize, usize)> {{\n        CONSTRAINT_JACOBIAN_PATTERN.to_vec()\n    }}"
    );
    write_values_fn(
        &mut out,
        pool,
        &names,
        "constraint_jacobian_values",
        z,
        &jg_exprs,
    );
    let _ = writeln!(out, "}}");
    if !invariants.is_empty() {
        write_invariants(&mut out, pool, &names, &ty, invariants);
    }
    out
}

/// The model's declared invariants: `N_INVARIANTS` and the inherent
/// `invariants(t, z, out)` (`out[k] = I_k(t, z)`, zero on the exact
/// solution). They are not rows of the formulation: a caller measures
/// them or projects onto them.
fn write_invariants(
    out: &mut String,
    pool: &ExprPool,
    names: &Names<'_>,
    ty: &str,
    invariants: &[ExprId],
) {
    let _ = writeln!(
        out,
        "\n/// Number of the model's declared invariants (`__daec(invariant = true)`).\npub const N_INVARIANTS: usize = {};\n",
        invariants.len()
    );
    let _ = writeln!(out, "impl {ty} {{");
    let _ = writeln!(
        out,
        "    /// The residuals of the model's declared invariants at `(t, z)`,\n    /// zero on the exact solution: not rows of this formulation, so\n    /// measured or projected onto by the caller."
    );
    let mut f = String::new();
    write_values_fn(
        &mut f,
        pool,
        names,
        "invariants",
        "t: f64, z: &[f64]",
        invariants,
    );
    out.push_str(&f.replacen("    fn ", "    pub fn ", 1));
    let _ = writeln!(out, "}}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_safe() {
        assert_eq!(rust_ident("k[2]"), "k_2");
        assert_eq!(rust_ident("type"), "type_");
        assert_eq!(rust_ident("2x"), "p_2x");
        assert_eq!(rust_ident("a.b[1,2]"), "a_b_1_2");
        assert_eq!(rust_ident(""), "p_");
        assert_eq!(type_name("pendulum_chain"), "PendulumChain");
        assert_eq!(type_name("Self"), "SelfModel");
        assert_eq!(type_name("Default"), "DefaultModel");
        assert_eq!(type_name("vec"), "VecModel");
        assert_eq!(type_name("a\u{202e}b"), "AB");
        assert_eq!(comment_text("x\ny\u{202e}φ */"), "x\\u{a}y\\u{202e}φ */");
        assert_eq!(
            string_literal("a\"\\\u{2066}\r"),
            "\"a\\\"\\\\\\u{2066}\\u{d}\""
        );
        assert_eq!(literal(0.1), "0.1");
        assert_eq!(literal(1.0), "1.0");
    }
}
