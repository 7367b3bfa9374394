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
use daec_expr::{ExprId, ExprPool, ParamId, RustChunks, RustNames, to_rust_looped};
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

/// The source of a problem's library: what it is generated from, and the
/// text on demand (a cached library is found by [`NativeSource::fingerprint`]
/// without generating the text).
#[derive(Debug, Clone)]
pub struct NativeSource<'a> {
    pool: &'a ExprPool,
    roots: &'a NativeRoots,
    title: String,
    /// The sizes it is generated for.
    pub layout: NativeLayout,
}

/// Revision of the generator: part of [`NativeSource::fingerprint`], raised
/// whenever the text generated from the same expressions changes.
const GENERATOR: u32 = 7;

impl NativeSource<'_> {
    /// Everything the text is generated from, as bytes: the generator's
    /// revision, chunk size and loop threshold, the layout, the title, and the expressions
    /// of each function ([`ExprPool::encode`]). Equal bytes give equal
    /// text, so a cryptographic hash of them keys the compiled library.
    pub fn fingerprint(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&GENERATOR.to_le_bytes());
        out.extend_from_slice(&(CHUNK_BYTES as u64).to_le_bytes());
        out.extend_from_slice(&(LOOP_ROWS as u64).to_le_bytes());
        for v in self.layout.fields() {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&(self.title.len() as u64).to_le_bytes());
        out.extend_from_slice(self.title.as_bytes());
        // the functions share most of their nodes (the residual is the
        // differential rows and the constraints): one encoding of all
        // roots, then how many roots each function has
        for (roots, zdot) in self.roots.roots.iter().zip(self.roots.reads_zdot) {
            out.push(u8::from(zdot));
            out.extend_from_slice(&(roots.len() as u64).to_le_bytes());
        }
        let all: Vec<ExprId> = self.roots.roots.iter().flatten().copied().collect();
        out.extend_from_slice(&self.pool.encode(&all));
        out
    }

    /// The Rust source of the `cdylib` (edition 2021, no dependencies).
    pub fn text(&self) -> String {
        native_text(self.pool, self.roots, self.layout, &self.title)
    }
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
    fn compile(&self, source: &NativeSource<'_>) -> Result<NativeCode, NativeError>;
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

/// Unknowns, derivatives and parameters are locals (`z3`, `zd3`, `p0`)
/// bound at the top of each function from the arrays (`leaf_bindings`):
/// rustc type-checks an index expression far more slowly than a local, and
/// the Jacobians read the same unknown many times.
impl RustNames for Names {
    fn var(&self, unknown: u32, order: u32) -> String {
        match order {
            0 => format!("z{unknown}"),
            1 => format!("zd{unknown}"),
            _ => "f64::NAN".into(),
        }
    }
    fn param(&self, p: ParamId) -> String {
        format!("p{}", p.0)
    }
    fn var_array(&self, order: u32) -> Option<String> {
        match order {
            0 => Some("z".into()),
            1 => Some("zdot".into()),
            _ => None,
        }
    }
    fn param_array(&self) -> Option<String> {
        Some("p".into())
    }
}

/// The bindings `let z3 = z[3];` (`zd3` from `zdot`, `p0` from `p`) of the
/// leaves that `statements` read, in order.
fn leaf_bindings(statements: &[String]) -> Vec<String> {
    let mut used = std::collections::BTreeSet::new();
    for s in statements {
        let b = s.as_bytes();
        let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        let mut i = 0;
        while i < b.len() {
            if !ident(b[i]) || (i > 0 && ident(b[i - 1])) || b[i].is_ascii_digit() {
                i += 1;
                continue;
            }
            let end = (i..b.len()).find(|&j| !ident(b[j])).unwrap_or(b.len());
            let word = &s[i..end];
            for (prefix, array) in [("zd", "zdot"), ("z", "z"), ("p", "p")] {
                let index = word
                    .strip_prefix(prefix)
                    .filter(|k| !k.is_empty() && k.bytes().all(|c| c.is_ascii_digit()));
                if let Some(k) = index {
                    if let Ok(k) = k.parse::<u32>() {
                        used.insert((array, prefix, k));
                    }
                    break;
                }
            }
            i = end;
        }
    }
    used.into_iter()
        .map(|(array, prefix, k)| format!("let {prefix}{k}: f64 = {array}[{k}];"))
        .collect()
}

/// The library's source for the functions `roots` of a problem with
/// `layout`; `title` names the model and form in the header comment.
pub(crate) fn native_source<'a>(
    pool: &'a ExprPool,
    roots: &'a NativeRoots,
    layout: NativeLayout,
    title: &str,
) -> NativeSource<'a> {
    NativeSource {
        pool,
        roots,
        title: title.to_string(),
        layout,
    }
}

/// The text of [`NativeSource::text`].
fn native_text(pool: &ExprPool, roots: &NativeRoots, layout: NativeLayout, title: &str) -> String {
    let mut out = String::new();
    let title = daec_regularize::emit_rust::comment_text(title);
    let _ = writeln!(
        out,
        "//! {title}: native code generated by daec for `daec simulate --native` (do not edit).\n\
         //! C ABI {NATIVE_ABI}: `fn(t, z, zdot, p, out)`; the caller passes arrays of the lengths below.\n\
         #![allow(unused_variables, unused_mut, unused_parens, non_snake_case, clippy::all)]\n"
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
        if k == RESIDUAL && roots.residual_is_concatenation() {
            residual_function(&mut out, layout);
            continue;
        }
        let tables = format!("T{k}_");
        let code = to_rust_looped(
            pool,
            &roots.roots[k],
            &Names,
            CHUNK_BYTES,
            LOOP_ROWS,
            &tables,
        );
        native_function(
            &mut out,
            name,
            layout.outputs()[k],
            roots.reads_zdot[k],
            &code,
        );
    }
    out
}

/// The position of `daec_residual` in [`NATIVE_SYMBOLS`].
const RESIDUAL: usize = 2;

impl NativeRoots {
    /// Whether the residual's rows are the differential rows followed by
    /// the constraints (as [`crate::FormProblem`] builds them), so that
    /// `daec_residual` is those two functions called one after the other.
    fn residual_is_concatenation(&self) -> bool {
        let [diff, constraints, residual, ..] = &self.roots;
        residual.len() == diff.len() + constraints.len()
            && residual.iter().eq(diff.iter().chain(constraints))
    }
}

/// Appends `daec_residual` as calls of `daec_diff_residual` and
/// `daec_constraints` (writing after the differential rows): the same
/// expressions as its own body, without compiling every row twice (the
/// residual was a third of the source). The two functions get copies of
/// `z`, `ż` and `p` in locals: `out` cannot alias a local, so once rustc
/// inlines the two calls it computes their common terms once (the
/// transistor amplifier's constraints repeat the two `exp` of its
/// differential rows, which the caller's arrays, possibly aliased by
/// `out`, made it evaluate twice per residual); the values are the same
/// bits as the two calls on the caller's arrays. Equal to the residual's
/// own body up to round-off: a sum prints a term bound to a `let` in
/// another place than the same term written out, and the two functions
/// bind fewer terms than their union.
fn residual_function(out: &mut String, layout: NativeLayout) {
    let [diff, constraints, residual] = [0, 1, RESIDUAL].map(|k| NATIVE_SYMBOLS[k]);
    let _ = writeln!(
        out,
        "/// # Safety\n/// `z` and `zdot` hold `N` values, `p` `NP`, `out` {}.\n#[no_mangle]\npub unsafe extern \"C\" fn {residual}(t: f64, z: *const f64, zdot: *const f64, p: *const f64, out: *mut f64) {{\n    unsafe {{\n        let z: [f64; N] = *(z as *const [f64; N]);\n        let zdot: [f64; N] = *(zdot as *const [f64; N]);\n        let p: [f64; NP] = *(p as *const [f64; NP]);\n        {diff}(t, z.as_ptr(), zdot.as_ptr(), p.as_ptr(), out);\n        {constraints}(t, z.as_ptr(), zdot.as_ptr(), p.as_ptr(), out.add({}));\n    }}\n}}\n",
        layout.n_diff + layout.n_constraints,
        layout.n_diff
    );
}

/// Text per chunk function of the generated source (see
/// [`daec_expr::to_rust_chunked`]). rustc's time grows faster than
/// linearly in the size of a function: Fekete's Jacobians (160 unknowns,
/// 1.5 MB of Rust) take about 11 s of CPU in chunks of this size against
/// 19.5 s as one function per symbol (opt-level 1). Below it the front
/// end's time, linear in the text, dominates, and smaller chunks only add
/// their calls and the loads and stores of the values they share (16 KiB
/// chunks make the wheelset's 200 KB build a fifth slower).
pub const CHUNK_BYTES: usize = 64 * 1024;

/// The least number of statements of one shape printed as a loop over a
/// table instead of one after the other (see [`daec_expr::to_rust_looped`]).
pub const LOOP_ROWS: usize = 8;

/// Appends the exported function `name` with `m` outputs: its body when
/// `code` is one chunk, else a call of each chunk's function (`name_0`,
/// `name_1`, …, which follow it) with the arrays `sf` and `sb` the chunks
/// and loops share; then the loops' tables and the constants they read.
fn native_function(out: &mut String, name: &str, m: usize, reads_zdot: bool, code: &RustChunks) {
    let _ = writeln!(
        out,
        "/// # Safety\n/// `z`{} hold `N` values, `p` `NP`, `out` {m}.\n#[no_mangle]\npub unsafe extern \"C\" fn {name}(t: f64, z: *const f64, zdot: *const f64, p: *const f64, out: *mut f64) {{",
        if reads_zdot { " and `zdot`" } else { "" }
    );
    let _ = writeln!(out, "    let z = unsafe {{ &*(z as *const [f64; N]) }};");
    if reads_zdot {
        let _ = writeln!(
            out,
            "    let zdot = unsafe {{ &*(zdot as *const [f64; N]) }};"
        );
    }
    let _ = writeln!(
        out,
        "    let p = unsafe {{ &*(p as *const [f64; NP]) }};\n    let out = unsafe {{ &mut *(out as *mut [f64; {m}]) }};"
    );
    let (nf, nb) = (code.scratch_f64, code.scratch_bool);
    if code.chunks.len() > 1 || nf + nb > 0 {
        let _ = writeln!(
            out,
            "    let mut sf = [0.0f64; {nf}];\n    let mut sb = [false; {nb}];"
        );
    }
    // the loops index without bounds checks: the arrays are long enough
    // (checked when the library is compiled)
    for (array, need) in &code.loop_reach {
        let length = match array.as_str() {
            "z" | "zdot" => "N".to_string(),
            "p" => "NP".to_string(),
            "sf" => nf.to_string(),
            "sb" => nb.to_string(),
            "out" => m.to_string(),
            _ => "0".to_string(),
        };
        let _ = writeln!(
            out,
            "    const _: () = assert!({need} <= {length}, \"{array}\");"
        );
    }
    match code.chunks.as_slice() {
        [single] => {
            for s in leaf_bindings(single).iter().chain(single) {
                let _ = writeln!(out, "    {s}");
            }
            let _ = writeln!(out, "}}\n");
        }
        chunks => {
            let zdot = if reads_zdot { "zdot, " } else { "" };
            for c in 0..chunks.len() {
                let _ = writeln!(out, "    {name}_{c}(t, z, {zdot}p, &mut sf, &mut sb, out);");
            }
            let _ = writeln!(out, "}}\n");
            for (c, statements) in chunks.iter().enumerate() {
                let zdot = if reads_zdot { "zdot: &[f64; N], " } else { "" };
                let _ = writeln!(
                    out,
                    "#[inline(never)]\nfn {name}_{c}(t: f64, z: &[f64; N], {zdot}p: &[f64; NP], sf: &mut [f64; {nf}], sb: &mut [bool; {nb}], out: &mut [f64; {m}]) {{"
                );
                for s in leaf_bindings(statements).iter().chain(statements) {
                    let _ = writeln!(out, "    {s}");
                }
                let _ = writeln!(out, "}}\n");
            }
        }
    }
    for table in &code.tables {
        let _ = writeln!(out, "{table}\n");
    }
    if !code.constants.is_empty() {
        let _ = writeln!(out, "{}\n", code.constants);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_names_in_the_header_cannot_break_out_of_the_comment() {
        let layout = NativeLayout::from_fn(|_| 0);
        let title = "model `a\nfn injected() {}\u{202e}`, HIC formulation";
        let (pool, roots) = (ExprPool::new(), NativeRoots::default());
        let text = native_source(&pool, &roots, layout, title).text();
        let first = text.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("//! model `a\\u{a}fn injected() {}\\u{202e}`, HIC formulation:"),
            "{first}"
        );
        assert!(!text.contains('\u{202e}'));
        assert!(!text.lines().any(|l| l.starts_with("fn injected")));
    }
}
