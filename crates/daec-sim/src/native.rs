//! Native code for a [`crate::FormProblem`]: its residuals, mass matrix and
//! analytic Jacobians as Rust source with a C ABI, for `daec simulate
//! --native`.
//!
//! The tapes of [`crate::FormProblem`] are an interpreter: on a small model
//! such as Akzo Nobel their dispatch costs about a third of a solve. With
//! `--native` the same expressions (the very roots the tapes were compiled
//! from, so the patterns and the order of the values are the same) are
//! printed by [`daec_expr::to_rust`] as functions of a `cdylib`, compiled
//! by `rustc` and loaded by the caller; the integrator then calls
//! machine code. This crate does no IO: [`NativeSource`] is text, the
//! CLI (`daec-cli/src/native.rs`) compiles and loads it and hands back a
//! [`NativeCode`], which [`crate::FormProblem::set_native`] checks against the
//! problem before using it.
//!
//! The ABI (version [`NATIVE_ABI`]): every function is
//! `extern "C" fn(t, z, zdot, p, out)` ([`NativeFn`]) over arrays of
//! known length — `z` and `zdot` of the `n` unknowns (`zdot` unused by the
//! functions of `z` only), `p` the parameter values by `ParamId`, `out`
//! the rows or the pattern's values — and `daec_native_layout(i)` returns
//! the sizes ([`NativeLayout`]) the library was generated for.

use crate::error::NativeError;
use daec_expr::{ExprId, ExprPool, ParamId, RustNames, to_rust};
use std::fmt::Write as _;
use std::sync::Arc;

/// Version of the calling convention of the generated library.
pub const NATIVE_ABI: u64 = 1;

/// A function of the generated library: `(t, z, zdot, p, out)`.
///
/// It reads `n` values from `z` (and from `zdot` for the functions of
/// `ż`), the parameters from `p`, and writes its outputs to `out`; the
/// loader vouches for that when it creates the pointer, and
/// [`crate::FormProblem`] checks the lengths before every call.
pub type NativeFn = extern "C" fn(f64, *const f64, *const f64, *const f64, *mut f64);

/// The exported functions, by symbol name, in the order of
/// [`NativeCode::functions`].
pub const NATIVE_SYMBOLS: [&str; 6] = [
    "daec_diff_residual",
    "daec_constraints",
    "daec_residual",
    "daec_mass",
    "daec_diff_jacobian",
    "daec_constraint_jacobian",
];

/// The symbol of the layout function `extern "C" fn(u32) -> u64`.
pub const NATIVE_LAYOUT_SYMBOL: &str = "daec_native_layout";

/// The sizes a library was generated for (`daec_native_layout(i)` for
/// `i = 0, 1, …` in the order of the fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NativeLayout {
    /// [`NATIVE_ABI`] of the generator.
    pub abi: u64,
    /// Unknowns `n`.
    pub n: u64,
    /// Differential rows.
    pub n_diff: u64,
    /// Constraint rows.
    pub n_constraints: u64,
    /// Parameters (length of `p`).
    pub n_params: u64,
    /// Values of the mass matrix pattern.
    pub n_mass: u64,
    /// Values of the pattern of `∂(Eż − k)/∂z`.
    pub n_diff_jacobian: u64,
    /// Values of the pattern of `∂g/∂z`.
    pub n_constraint_jacobian: u64,
}

impl NativeLayout {
    /// Number of fields (the valid arguments of `daec_native_layout`).
    pub const FIELDS: u32 = 8;

    /// The layout from the values of `daec_native_layout(0..FIELDS)`.
    pub fn from_fn(get: impl Fn(u32) -> u64) -> Self {
        Self {
            abi: get(0),
            n: get(1),
            n_diff: get(2),
            n_constraints: get(3),
            n_params: get(4),
            n_mass: get(5),
            n_diff_jacobian: get(6),
            n_constraint_jacobian: get(7),
        }
    }

    fn fields(&self) -> [u64; Self::FIELDS as usize] {
        [
            self.abi,
            self.n,
            self.n_diff,
            self.n_constraints,
            self.n_params,
            self.n_mass,
            self.n_diff_jacobian,
            self.n_constraint_jacobian,
        ]
    }

    /// Output length of each function of [`NATIVE_SYMBOLS`].
    pub fn outputs(&self) -> [usize; 6] {
        [
            self.n_diff,
            self.n_constraints,
            self.n_diff + self.n_constraints,
            self.n_mass,
            self.n_diff_jacobian,
            self.n_constraint_jacobian,
        ]
        .map(|v| v as usize)
    }
}

/// Generated source of a problem's library.
#[derive(Debug, Clone, PartialEq)]
pub struct NativeSource {
    /// The Rust source of the `cdylib` (edition 2021, no dependencies).
    pub text: String,
    /// The sizes it is generated for.
    pub layout: NativeLayout,
}

/// A loaded library: its functions and what keeps them alive.
#[derive(Clone)]
pub struct NativeCode {
    /// The sizes the library reports (checked against the problem by
    /// [`crate::FormProblem::set_native`]).
    pub layout: NativeLayout,
    /// The functions of [`NATIVE_SYMBOLS`], in that order.
    pub functions: [NativeFn; 6],
    /// The loaded library (the functions are valid while it lives).
    pub library: Arc<dyn std::any::Any + Send + Sync>,
}

impl std::fmt::Debug for NativeCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeCode")
            .field("layout", &self.layout)
            .finish_non_exhaustive()
    }
}

/// What compiles and loads a [`NativeSource`] (the CLI's `rustc` driver);
/// kept by [`crate::Prepared`] for the formulations built during a run
/// (StE and DD switches).
pub trait NativeCompiler: std::fmt::Debug + Send + Sync {
    /// Compiles and loads `source`, or says why not.
    fn compile(&self, source: &NativeSource) -> Result<NativeCode, NativeError>;
}

/// The roots of each function, as compiled to tapes by [`crate::FormProblem`].
#[derive(Debug, Clone, Default)]
pub(crate) struct NativeRoots {
    /// In the order of [`NATIVE_SYMBOLS`].
    pub(crate) roots: [Vec<ExprId>; 6],
    /// Whether the function reads `ż` (else it is a function of `z`).
    pub(crate) reads_zdot: [bool; 6],
}

struct Names;

impl RustNames for Names {
    fn var(&self, unknown: u32, order: u32) -> String {
        daec_regularize::emit_rust::quasi_linear_var(unknown, order)
    }
    fn param(&self, p: ParamId) -> String {
        format!("p[{}]", p.0)
    }
}

/// The library's source for the functions `roots` of a problem with
/// `layout`; `title` names the model and form in the header comment.
pub(crate) fn native_source(
    pool: &ExprPool,
    roots: &NativeRoots,
    layout: NativeLayout,
    title: &str,
) -> NativeSource {
    let mut out = String::new();
    let title = daec_regularize::emit_rust::comment_text(title);
    let _ = writeln!(
        out,
        "//! {title}: native code generated by daec for `daec simulate --native` (do not edit).\n\
         //! C ABI {NATIVE_ABI}: `fn(t, z, zdot, p, out)`; the caller passes arrays of the lengths below.\n\
         #![allow(unused_variables, unused_parens, non_snake_case, clippy::all)]\n"
    );
    let n = layout.n;
    let _ = writeln!(
        out,
        "const N: usize = {n};\nconst NP: usize = {};\n",
        layout.n_params
    );
    let _ = writeln!(
        out,
        "/// The sizes this library was generated for.\n#[no_mangle]\npub extern \"C\" fn {NATIVE_LAYOUT_SYMBOL}(i: u32) -> u64 {{\n    match i {{"
    );
    for (i, v) in layout.fields().iter().enumerate() {
        let _ = writeln!(out, "        {i} => {v},");
    }
    let _ = writeln!(out, "        _ => u64::MAX,\n    }}\n}}\n");
    for (k, name) in NATIVE_SYMBOLS.iter().enumerate() {
        let m = layout.outputs()[k];
        let (lets, exprs) = to_rust(pool, &roots.roots[k], &Names);
        let _ = writeln!(
            out,
            "/// # Safety\n/// `z`{} hold `N` values, `p` `NP`, `out` {m}.\n#[no_mangle]\npub unsafe extern \"C\" fn {name}(t: f64, z: *const f64, zdot: *const f64, p: *const f64, out: *mut f64) {{",
            if roots.reads_zdot[k] {
                " and `zdot`"
            } else {
                ""
            }
        );
        let _ = writeln!(
            out,
            "    let z = unsafe {{ std::slice::from_raw_parts(z, N) }};"
        );
        if roots.reads_zdot[k] {
            let _ = writeln!(
                out,
                "    let zdot = unsafe {{ std::slice::from_raw_parts(zdot, N) }};"
            );
        }
        let _ = writeln!(
            out,
            "    let p = unsafe {{ std::slice::from_raw_parts(p, NP) }};\n    let out = unsafe {{ std::slice::from_raw_parts_mut(out, {m}) }};"
        );
        for l in &lets {
            let _ = writeln!(out, "    {l}");
        }
        for (i, e) in exprs.iter().enumerate() {
            let _ = writeln!(out, "    out[{i}] = {e};");
        }
        let _ = writeln!(out, "}}\n");
    }
    NativeSource { text: out, layout }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_names_in_the_header_cannot_break_out_of_the_comment() {
        let layout = NativeLayout::from_fn(|_| 0);
        let title = "model `a\nfn injected() {}\u{202e}`, HIC formulation";
        let source = native_source(&ExprPool::new(), &NativeRoots::default(), layout, title);
        let first = source.text.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("//! model `a\\u{a}fn injected() {}\\u{202e}`, HIC formulation:"),
            "{first}"
        );
        assert!(!source.text.contains('\u{202e}'));
        assert!(!source.text.lines().any(|l| l.starts_with("fn injected")));
    }
}
