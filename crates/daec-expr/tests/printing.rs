//! Printer output for the Modelica, Rust and LaTeX back ends.

mod common;

use common::{Parser, names};
use daec_expr::{
    CmpOp, ExprPool, Func, Func2, ParamId, RustChunks, modelica_number, to_latex, to_modelica,
    to_rust, to_rust_chunked, to_rust_looped,
};

#[test]
fn numbers_reread_exactly() {
    assert_eq!(modelica_number(1.0), "1");
    assert_eq!(modelica_number(-0.0), "(-0.0)");
    assert_eq!(modelica_number(0.1), "0.1");
    assert_eq!(modelica_number(1e-7), "1e-7");
    assert_eq!(modelica_number(-2.5), "(-2.5)");
    assert_eq!(modelica_number(f64::INFINITY), "(1.0 / 0.0)");
    assert_eq!(modelica_number(f64::NAN), "(0.0 / 0.0)");
    for v in [
        0.1,
        1.0 / 3.0,
        6.02214076e23,
        1e-300,
        f64::MIN_POSITIVE,
        123456789.125,
    ] {
        let s = modelica_number(v);
        assert_eq!(s.parse::<f64>().expect("a number"), v, "{s}");
    }
}

#[test]
fn modelica_precedence_and_signs() {
    let mut p = ExprPool::new();
    let n = names();
    let (x, y) = (p.var(0, 0), p.var(1, 0));
    let m = p.param(ParamId(0));
    let s = p.add(x, y);
    let e = p.mul(s, m);
    assert_eq!(to_modelica(&p, e, &n), "m * (x + y)");
    let d = p.div(x, s);
    assert_eq!(to_modelica(&p, d, &n), "x / (x + y)");
    let nx = p.neg(x);
    let pw = p.pow(y, nx);
    assert_eq!(to_modelica(&p, pw, &n), "y^(-x)");
    let x2 = p.powi(x, 2);
    let ny2 = p.neg(x2);
    assert_eq!(to_modelica(&p, ny2, &n), "-x^2");
    let sub = p.sub(y, x2);
    assert_eq!(to_modelica(&p, sub, &n), "y - x^2");
    let three = p.constant(3.0);
    let third = p.div(x, three);
    assert_eq!(to_modelica(&p, third, &n), "x / 3");
    let xd = p.var(0, 2);
    assert_eq!(to_modelica(&p, xd, &n), "der(der(x))");
    let c = p.cmp(CmpOp::Ge, x, y);
    let zero = p.constant(0.0);
    let c2 = p.cmp(CmpOp::Ne, y, zero);
    let both = p.and(c, c2);
    let sel = p.select(both, x, nx);
    assert_eq!(
        to_modelica(&p, sel, &n),
        "if y <= x and y <> 0 then x else -x"
    );
    let at = p.func2(Func2::Atan2, y, x);
    let sq = p.func(Func::Sqrt, at);
    assert_eq!(to_modelica(&p, sq, &n), "sqrt(atan2(y, x))");
    let t = p.time();
    let k = p.mul(m, t);
    let ex = p.func(Func::Exp, k);
    assert_eq!(to_modelica(&p, ex, &n), "exp(m * time)");
}

/// The Modelica printer orders a sum's terms by sign and constancy, then
/// highest derivative first, then by text; a product's factors lowest
/// derivative first, then by text — whatever the order of the ids.
#[test]
fn modelica_orders_terms_by_derivative_then_text() {
    for ids_reversed in [false, true] {
        let mut p = ExprPool::new();
        let n = names();
        let (y2, x1) = if ids_reversed {
            let y2 = p.var(1, 2);
            (y2, p.var(0, 1))
        } else {
            let x1 = p.var(0, 1);
            (p.var(1, 2), x1)
        };
        let x = p.var(0, 0);
        let s1 = p.func(Func::Sin, x1);
        let sum = p.add(x, s1);
        let sum = p.add(sum, y2);
        assert_eq!(to_modelica(&p, sum, &n), "der(der(y)) + sin(der(x)) + x");
        let prod = p.mul(y2, x);
        let prod = p.mul(prod, s1);
        assert_eq!(to_modelica(&p, prod, &n), "x * sin(der(x)) * der(der(y))");
        let two = p.constant(2.0);
        let y1 = p.var(1, 1);
        let mixed = p.sub(x, y1);
        let mixed = p.add(two, mixed);
        assert_eq!(to_modelica(&p, mixed, &n), "x + 2 - der(y)");
    }
}

#[test]
fn modelica_output_rereads_to_the_same_id() {
    let mut p = ExprPool::new();
    let n = names();
    let (x, y, lam) = (p.var(0, 0), p.var(1, 0), p.var(4, 0));
    let (m, g) = (p.param(ParamId(0)), p.param(ParamId(1)));
    let two = p.constant(2.0);
    let wd = p.var(3, 1);
    let mwd = p.mul(m, wd);
    let yl = p.product(&[two, y, lam]);
    let mg = p.mul(m, g);
    let f4 = p.sum(&[mwd, yl, mg]);
    let d2 = p.dt_n(f4, 2);
    let dx = p.diff(d2, x);
    for e in [f4, d2, dx] {
        let text = to_modelica(&p, e, &n);
        assert_eq!(Parser::parse(&mut p, &text, &n), Ok(e), "{text}");
    }
}

#[test]
fn rust_emission_binds_shared_subexpressions() {
    let mut p = ExprPool::new();
    let (x, y) = (p.var(0, 0), p.var(1, 1));
    let s = p.func(Func::Sin, x);
    let a = p.mul(s, y);
    let b = p.add(s, y);
    let one = p.constant(1.0);
    let nb = p.sub(one, b);
    let (lets, roots) = to_rust(&p, &[a, nb], &common::VecNames);
    assert_eq!(lets, vec!["let s0 = z[0].sin();".to_string()]);
    assert_eq!(
        roots,
        vec!["zp[1] * s0".to_string(), "1.0 - zp[1] - s0".to_string()]
    );
    let c = p.cmp(CmpOp::Lt, x, y);
    let two = p.constant(2.0);
    let sel = p.select(c, two, x);
    let sg = p.func(Func::Sign, x);
    let lg = p.func(Func::Log, x);
    let inv = p.powi(x, -1);
    let m2 = p.constant(-2.0);
    let pw = p.pow(m2, y);
    let (lets, roots) = to_rust(&p, &[pw], &common::VecNames);
    assert!(lets.is_empty());
    assert_eq!(roots, vec!["(-2.0_f64).powf(zp[1])".to_string()]);
    let (lets, roots) = to_rust(&p, &[sel, sg, lg, inv], &common::VecNames);
    assert!(lets.is_empty());
    assert_eq!(
        roots,
        vec![
            "if z[0] < zp[1] { 2.0 } else { z[0] }".to_string(),
            "(if z[0] > 0.0 { 1.0 } else if z[0] < 0.0 { -1.0 } else { z[0] })".to_string(),
            "z[0].ln()".to_string(),
            "1.0 / z[0]".to_string(),
        ]
    );
}

#[test]
fn rust_emission_computes_a_shared_reciprocal_once() {
    // x/(a + b) and y/(a + b) share the node 1/(a + b): it is one `let`
    // that both multiply (the tape's `Recip` and `Mul`), not the sum
    // printed again under each division; an unshared one still divides.
    let mut p = ExprPool::new();
    let (a, b, x, y) = (p.var(0, 0), p.var(1, 0), p.var(2, 0), p.var(3, 0));
    let sum = p.add(a, b);
    let (u, v) = (p.div(x, sum), p.div(y, sum));
    let (lets, roots) = to_rust(&p, &[u, v], &common::VecNames);
    assert_eq!(lets, ["let s0 = 1.0 / (z[0] + z[1]);"]);
    assert_eq!(roots, ["z[2] * s0", "z[3] * s0"]);
    let chunks = to_rust_chunked(&p, &[u, v], &common::VecNames, 1 << 16);
    assert_eq!(
        chunks.chunks,
        [[
            "let s0: f64 = 1.0 / (z[0] + z[1]);",
            "out[0] = z[2] * s0;",
            "out[1] = z[3] * s0;"
        ]]
    );
    let (lets, roots) = to_rust(&p, &[u], &common::VecNames);
    assert!(lets.is_empty());
    assert_eq!(roots, ["z[2] / (z[0] + z[1])"]);
}

/// `s` with `sK` renamed by `rename` (other identifiers kept).
fn rename_lets(s: &str, rename: &dyn Fn(&str) -> String) -> String {
    let mut out = String::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let starts = b[i] == b's'
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
            && b.get(i + 1).is_some_and(u8::is_ascii_digit);
        if starts {
            let end = (i + 1..b.len())
                .find(|&j| !b[j].is_ascii_digit())
                .unwrap_or(b.len());
            out.push_str(&rename(&s[i..end]));
            i = end;
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

#[test]
fn chunked_rust_prints_every_expression_as_the_unchunked_printer() {
    // Shared subexpressions across many roots: sin(x_k), the products
    // and a boolean shared by two selects.
    let mut p = ExprPool::new();
    let x: Vec<_> = (0..6).map(|k| p.var(k, 0)).collect();
    let s: Vec<_> = x.iter().map(|&v| p.func(Func::Sin, v)).collect();
    let c = p.cmp(CmpOp::Lt, x[0], x[1]);
    let mut roots = Vec::new();
    for k in 0..6 {
        let m = p.mul(s[k], s[(k + 1) % 6]);
        let a = p.add(m, s[(k + 2) % 6]);
        roots.push(a);
        roots.push(m);
        roots.push(p.select(c, s[k], m));
    }
    let (lets, exprs) = to_rust(&p, &roots, &common::VecNames);
    let whole = to_rust_chunked(&p, &roots, &common::VecNames, usize::MAX);
    assert_eq!(whole.chunks.len(), 1);
    assert_eq!((whole.scratch_f64, whole.scratch_bool), (0, 0));
    // the same statements up to the names of the lets and their order
    let mut theirs: Vec<String> = whole.chunks[0]
        .iter()
        .filter_map(|l| l.strip_prefix("let ").and_then(|l| l.split_once(" = ")))
        .map(|(name, text)| {
            let name = name.trim_end_matches(": f64").trim_end_matches(": bool");
            format!("{name} = {text}")
        })
        .collect();
    assert_eq!(theirs.len(), lets.len());
    let mut name = std::collections::HashMap::new();
    for l in &lets {
        let (ours, text) = l["let ".len()..].split_once(" = ").unwrap();
        let k = theirs
            .iter()
            .position(|t| {
                let (_, tt) = t.split_once(" = ").unwrap();
                rename_lets(tt, &|m| name.get(m).cloned().unwrap_or_default()) == text
            })
            .unwrap_or_else(|| panic!("{l} not in {theirs:?}"));
        let (n, _) = theirs
            .remove(k)
            .split_once(" = ")
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .unwrap();
        name.insert(n, ours.to_string());
    }
    let untyped = |l: &str| {
        l.replacen(": f64 = ", " = ", 1)
            .replacen(": bool = ", " = ", 1)
    };
    for (i, e) in exprs.iter().enumerate() {
        let line = format!("out[{i}] = {e};");
        assert!(
            whole.chunks[0]
                .iter()
                .any(|l| rename_lets(l, &|m| name[m].clone()) == line),
            "{line}"
        );
    }
    // One statement per chunk: a later chunk reads a shared value from
    // `sf` or `sb`, where its chunk stored it; otherwise nothing changes.
    let split = to_rust_chunked(&p, &roots, &common::VecNames, 1);
    let flat: Vec<&String> = split.chunks.iter().flatten().collect();
    assert_eq!(split.chunks.len(), flat.len());
    assert_eq!(flat.len(), whole.chunks[0].len());
    assert_eq!(split.scratch_bool, 1, "{flat:?}");
    assert!(split.scratch_f64 >= 6, "{flat:?}");
    let mut stored = std::collections::HashMap::new();
    for l in &flat {
        if let Some((def, store)) = l.split_once("; ") {
            let (slot, name) = store.trim_end_matches(';').split_once(" = ").unwrap();
            stored.insert(slot.to_string(), name.to_string());
            assert!(untyped(def).starts_with(&format!("let {name} = ")), "{l}");
        }
    }
    for (a, b) in flat.iter().zip(&whole.chunks[0]) {
        let mut a = a
            .split_once("; ")
            .map_or(a.to_string(), |(d, _)| format!("{d};"));
        for (slot, name) in &stored {
            a = a.replace(slot.as_str(), name);
        }
        assert_eq!(&a, b);
    }
}

/// The rows of a table of [`to_rust_looped`] declared as `head` (`static
/// NAME: [[u16; C]; M] = `): its byte string decoded in the machine's byte
/// order.
fn table_rows(text: &str, head: &str) -> Vec<Vec<u16>> {
    let columns: usize = head
        .split("; ")
        .nth(1)
        .unwrap()
        .trim_end_matches(']')
        .parse()
        .unwrap();
    let literal = text
        .strip_prefix(head)
        .and_then(|t| t.strip_prefix("unsafe { core::mem::transmute(*b\""))
        .and_then(|t| t.strip_suffix("\") };"))
        .unwrap_or_else(|| panic!("{text}"));
    let bytes = byte_string_bytes(literal);
    let values: Vec<u16> = bytes
        .chunks(2)
        .map(|b| u16::from_ne_bytes([b[0], b[1]]))
        .collect();
    values.chunks(columns).map(<[u16]>::to_vec).collect()
}

/// The bytes of a byte string literal's text (without the quotes), as
/// [`to_rust_looped`] prints them: printable ASCII and `\xNN`.
fn byte_string_bytes(literal: &str) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut chars = literal.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            assert_eq!(chars.next(), Some('x'), "{literal}");
            let hex: String = chars.by_ref().take(2).collect();
            bytes.push(u8::from_str_radix(&hex, 16).unwrap());
        } else {
            bytes.push(c as u8);
        }
    }
    bytes
}

/// A chain of `n` links: the differences `d_k = x_k - x_{k+1}` (each read
/// twice, so a common subexpression), and per link the outputs `d_k²·m`
/// and `sin(d_k)·x_k + 2`, `m` a parameter; and one output of its own shape.
fn chain(p: &mut ExprPool, n: u32) -> Vec<daec_expr::ExprId> {
    let x: Vec<_> = (0..=n).map(|k| p.var(k, 0)).collect();
    let m = p.param(ParamId(0));
    let two = p.constant(2.0);
    let mut roots = Vec::new();
    for k in 0..n as usize {
        let d = p.sub(x[k], x[k + 1]);
        let d2 = p.powi(d, 2);
        roots.push(p.mul(d2, m));
        let s = p.func(Func::Sin, d);
        let sx = p.mul(s, x[k]);
        roots.push(p.add(sx, two));
    }
    let last = p.func(Func::Cos, x[0]);
    roots.push(last);
    roots
}

#[test]
fn looped_rust_prints_each_repeated_shape_once_over_a_table() {
    let mut p = ExprPool::new();
    let roots = chain(&mut p, 40);
    let code = to_rust_looped(&p, &roots, &common::VecNames, 1 << 16, 8, "T");
    // three loops of 40 rows: the differences (level 0) and each kind of
    // output (level 1, reading them); the cosine stays a statement
    assert_eq!(code.loop_rows, [40, 40, 40], "{code:#?}");
    assert_eq!(code.chunks.len(), 1);
    let text = code.chunks[0].join("\n");
    assert_eq!(text.matches("for r in ").count(), 3, "{text}");
    assert!(text.contains("out[80] = z[0].cos();"), "{text}");
    // the differences are written to `sf`, whose slots the outputs read
    assert_eq!((code.scratch_f64, code.scratch_bool), (40, 0));
    let difference = code.chunks[0]
        .iter()
        .find(|s| s.contains("*sf.get_unchecked_mut(r[0] as usize) ="))
        .unwrap();
    assert_eq!(
        *difference,
        "for r in T0.iter() {\n        unsafe {\n            let a0: f64 = *z.get_unchecked(r[1] as usize);\n            let a1: f64 = *z.get_unchecked(r[2] as usize);\n            *sf.get_unchecked_mut(r[0] as usize) = a0 - a1;\n        }\n    }"
    );
    let rows = |k: usize| table_rows(&code.tables[k], &format!("static T{k}: [[u16; 3]; 40] = "));
    assert_eq!(rows(0)[..3], [[0, 0, 1], [1, 1, 2], [2, 2, 3]]);
    // each output's row: its output index and the slot (and unknown) it
    // reads, so the body is the straight-line statement of every row
    let straight = to_rust_chunked(&p, &roots, &common::VecNames, 1 << 16);
    let lines = &straight.chunks[0];
    assert_eq!(rows(1)[..3], [[0, 0, 0], [2, 0, 1], [4, 0, 2]]);
    assert_eq!(rows(2)[..3], [[1, 0, 0], [3, 1, 1], [5, 2, 2]]);
    assert!(
        lines.contains(&"out[0] = p[0] * s0.powi(2);".to_string()),
        "{lines:?}"
    );
    assert!(lines.contains(&"out[1] = z[0] * s0.sin() + 2.0;".to_string()));
    assert!(
        text.contains("*out.get_unchecked_mut(r[0] as usize) = a0 * a1.powi(2);"),
        "{text}"
    );
    assert!(
        text.contains("*out.get_unchecked_mut(r[0] as usize) = a0 * a1.sin() + 2.0;"),
        "{text}"
    );
    // the lengths the unchecked indexing needs: 81 outputs written by
    // loops up to out[79], unknowns 0..=40, one parameter, 40 slots
    assert_eq!(
        code.loop_reach,
        [
            ("out".to_string(), 80),
            ("p".to_string(), 1),
            ("sf".to_string(), 40),
            ("z".to_string(), 41)
        ]
    );
    // below the threshold, the straight-line statements
    let few = to_rust_looped(&p, &roots, &common::VecNames, 1 << 16, 41, "T");
    assert_eq!(few, straight);
    // a loop is one item of a chunk: a later chunk reads its values in `sf`
    let split = to_rust_looped(&p, &roots, &common::VecNames, 1, 8, "T");
    assert_eq!(split.chunks.len(), 4, "{split:#?}");
    assert_eq!(split.scratch_f64, 40);
    // three links in loops of at least two rows: the loops would be
    // longer than the straight-line text, which is printed
    let mut q = ExprPool::new();
    let short = chain(&mut q, 3);
    let code = to_rust_looped(&q, &short, &common::VecNames, 1 << 16, 2, "T");
    assert_eq!(
        code,
        to_rust_chunked(&q, &short, &common::VecNames, 1 << 16)
    );
    assert!(code.tables.is_empty());
}

#[test]
fn a_chunk_holds_at_most_eight_loops() {
    // ten functions of the unknowns in two sums each, 24 rows each: two
    // loops of the arguments shared by the functions (`z[i] - z[i + 24]`,
    // `z[i] + z[i + 48]`) and twenty of the outputs (one per function and
    // sum), in chunks of eight loops however large the chunks may be
    let funcs = [
        Func::Sin,
        Func::Cos,
        Func::Tan,
        Func::Exp,
        Func::Log,
        Func::Sqrt,
        Func::Abs,
        Func::Sinh,
        Func::Cosh,
        Func::Tanh,
    ];
    let mut p = ExprPool::new();
    let mut roots = Vec::new();
    for (k, &f) in funcs.iter().enumerate() {
        for i in 0..24 {
            let (x, y, w) = (p.var(i, 0), p.var(i + 24, 0), p.var(i + 48, 0));
            let d = p.sub(x, y);
            let fd = p.func(f, d);
            let wfd = p.mul(w, fd);
            let c = p.constant(2.0 + k as f64);
            roots.push(p.add(wfd, c));
            let s = p.add(x, w);
            let fs = p.func(f, s);
            roots.push(p.mul(y, fs));
        }
    }
    let code = to_rust_looped(&p, &roots, &common::VecNames, 1 << 20, 8, "T");
    assert_eq!(code.loop_rows, [24; 22], "{code:#?}");
    let loops: Vec<usize> = code
        .chunks
        .iter()
        .map(|c| c.iter().filter(|s| s.starts_with("for r in ")).count())
        .collect();
    assert_eq!(loops, [8, 8, 6], "{code:#?}");
    assert_eq!((code.scratch_f64, code.scratch_bool), (48, 0));
    // one loop per chunk when the chunks are small
    let split = to_rust_looped(&p, &roots, &common::VecNames, 1, 8, "T");
    assert_eq!(split.chunks.len(), 22);
}

#[test]
fn latex_output() {
    let mut p = ExprPool::new();
    let n = names();
    let (x, y) = (p.var(0, 0), p.var(1, 0));
    let lam = p.var(4, 0);
    let m = p.param(ParamId(0));
    let xy = p.add(x, y);
    let q = p.div(lam, xy);
    let e = p.mul(m, q);
    assert_eq!(
        to_latex(&p, e, &n),
        "\\frac{\\mathit{lambda} \\cdot m}{x + y}"
    );
    let v3 = p.var(2, 3);
    let v6 = p.var(2, 6);
    assert_eq!(to_latex(&p, v3, &n), "\\dddot{v}");
    assert_eq!(to_latex(&p, v6, &n), "v^{(6)}");
    let small = p.constant(1e-7);
    let e2 = p.mul(small, x);
    assert_eq!(to_latex(&p, e2, &n), "1 \\cdot 10^{-7} \\cdot x");
    let ab = p.func(Func::Abs, x);
    let sq = p.func(Func::Sqrt, ab);
    assert_eq!(to_latex(&p, sq, &n), "\\sqrt{\\left|x\\right|}");
}

/// Gates of one kind whose trees differ only in their constants (and in
/// the unknowns they read), as a circuit's devices with their parameters
/// folded: per gate `k` the difference `d = x_k - y_k + c` (read three
/// times, a common subexpression), a branch on `d <= 0` with a
/// coefficient per gate (±1 among them), a quotient by a constant per
/// gate, a constant exponent shared by all, and a constant alone (a mass
/// matrix entry). The constants' signs alternate, which orders the terms
/// of the sums differently.
fn gates(p: &mut ExprPool, n: u32) -> Vec<daec_expr::ExprId> {
    let m = p.param(ParamId(0));
    let zero = p.constant(0.0);
    let half = p.constant(0.5);
    let mut roots = Vec::new();
    for k in 0..n {
        let (x, y) = (p.var(2 * k, 0), p.var(2 * k + 1, 0));
        let f = f64::from(k);
        let sign = if k % 2 == 0 { 1.0 } else { -1.0 };
        let c = p.constant(sign * (0.37 + 0.11 * f));
        let xy = p.sub(x, y);
        let d = p.add(xy, c);
        let le = p.cmp(CmpOp::Le, d, zero);
        let d2 = p.powi(d, 2);
        let md2 = p.mul(m, d2);
        let coef = [1.0, -1.0, 2.5 + f, -(1.5 + f)][k as usize % 4];
        let low = p.scale(coef, md2);
        let dx = p.mul(d, x);
        let high = p.scale(-0.25 - 0.01 * f, dx);
        roots.push(p.select(le, low, high));
        // (odd: a power of two would be an exact reciprocal, a product)
        let q = p.constant(3.0 + 2.0 * f);
        let xq = p.div(x, q);
        let a = p.func(Func::Abs, d);
        let root = p.pow(a, half);
        roots.push(p.add(xq, root));
        roots.push(p.constant(sign * (1.0 + f)));
    }
    roots
}

/// A program that evaluates `looped` and `straight` (each the chunks of
/// one function over `z`, `p` and `out`) at 200 pseudo-random points and
/// prints the outputs whose bits differ.
fn comparison_program(looped: &RustChunks, straight: &RustChunks, n: usize, m: usize) -> String {
    let function = |name: &str, code: &RustChunks| {
        format!(
            "#[allow(unused_mut, unused_unsafe, unused_parens)]\nfn {name}(t: f64, z: &[f64; {n}], p: &[f64; 1], out: &mut [f64; {m}]) {{\n    let mut sf = [0.0f64; {}];\n    let mut sb = [false; {}];\n    {}\n}}\n",
            code.scratch_f64,
            code.scratch_bool,
            code.chunks.concat().join("\n    ")
        )
    };
    let mut text = String::from("#![allow(unused_variables)]\n");
    text.push_str(&function("looped", looped));
    text.push_str(&function("straight", straight));
    for item in looped.tables.iter().chain([&looped.constants]) {
        text.push_str(item);
        text.push('\n');
    }
    text.push_str(&format!(
        "fn main() {{\n    let mut seed = 0x2545f4914f6cdd1du64;\n    let mut next = move || {{ seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17; (seed >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0 }};\n    for _ in 0..200 {{\n        let mut z = [0.0; {n}];\n        z.iter_mut().for_each(|v| *v = next());\n        let p = [next()];\n        let (mut a, mut b) = ([0.0; {m}], [0.0; {m}]);\n        looped(0.0, &z, &p, &mut a);\n        straight(0.0, &z, &p, &mut b);\n        for i in 0..{m} {{\n            if a[i].to_bits() != b[i].to_bits() {{ println!(\"out[{{i}}]: {{}} against {{}}\", a[i], b[i]); }}\n        }}\n    }}\n    println!(\"done\");\n}}\n"
    ));
    text
}

#[test]
fn statements_that_differ_in_their_constants_share_a_loop_and_its_bits() {
    let mut p = ExprPool::new();
    let roots = gates(&mut p, 48);
    let code = to_rust_looped(&p, &roots, &common::VecNames, 1 << 20, 8, "T");
    let straight = to_rust_chunked(&p, &roots, &common::VecNames, 1 << 20);
    let text = code.chunks.concat().join("\n");
    // no statement is left outside a loop: the differences (two signs of
    // their constant), the branches (the four kinds of coefficient), the
    // quotients with roots, the constants alone (two signs)
    assert!(
        !text.contains("\nout[") && !text.starts_with("out["),
        "{text}"
    );
    assert_eq!(code.loop_rows.iter().sum::<usize>(), 4 * 48, "{code:#?}");
    assert!(code.loop_rows.len() <= 9, "{:?}", code.loop_rows);
    // the constants of each gate are read from `TK`; the shared ones (the
    // condition's 0.0, the exponent 0.5) stay literals
    assert!(
        code.constants.starts_with("static TK: [f64; "),
        "{}",
        code.constants
    );
    assert!(text.contains("*TK.get_unchecked(r["), "{text}");
    assert!(text.contains(" <= 0.0 {"), "{text}");
    assert!(text.contains(".powf(0.5)"), "{text}");
    // every value of TK is one of the model's constants, bit for bit
    let values = table_f64(&code.constants, "static TK: [f64; ");
    assert!(values.contains(&(3.0 + 2.0 * 47.0)), "{values:?}");
    assert!(values.contains(&-(0.37 + 0.11 * 47.0)), "{values:?}");
    assert!(values.len() > 4 * 48 / 2, "{}", values.len());
    assert!(text.len() * 3 < straight.chunks.concat().join("\n").len());
    // compiled, the loops give the straight-line code's values bit for bit
    let dir = std::env::temp_dir().join(format!("daec-expr-loops-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("compare.rs");
    std::fs::write(
        &source,
        comparison_program(&code, &straight, 96, roots.len()),
    )
    .unwrap();
    for level in ["1", "3"] {
        let exe = dir.join(format!("compare-{level}"));
        let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
        let built = std::process::Command::new(rustc)
            .args(["--edition=2021", &format!("-Copt-level={level}"), "-o"])
            .arg(&exe)
            .arg(&source)
            .output()
            .unwrap();
        assert!(
            built.status.success(),
            "{}",
            String::from_utf8_lossy(&built.stderr)
        );
        let ran = std::process::Command::new(&exe).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&ran.stdout), "done\n");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The values of a static `[f64; M]` of [`to_rust_looped`] declared as
/// `head`: its byte string decoded in the machine's byte order.
fn table_f64(text: &str, head: &str) -> Vec<f64> {
    let rest = text.strip_prefix(head).unwrap_or_else(|| panic!("{text}"));
    let (_, literal) = rest.split_once("] = ").unwrap();
    let bytes = byte_string_bytes(
        literal
            .strip_prefix("unsafe { core::mem::transmute(*b\"")
            .and_then(|t| t.strip_suffix("\") };"))
            .unwrap_or_else(|| panic!("{text}")),
    );
    bytes
        .chunks(8)
        .map(|b| f64::from_ne_bytes(b.try_into().unwrap()))
        .collect()
}
