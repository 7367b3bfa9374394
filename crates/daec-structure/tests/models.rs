//! Data-driven check against the `// expect:` lines of the repository's `models/*.dae`
//! (the numbers of `problem-catalogue.md`): Σ is read off the model text by a small
//! structural scanner (highest `der` nesting of each unknown per equation), then the
//! Σ-method must reproduce index, c, d and dof, and Pantelides' counts must equal c
//! (Pryce 2001, Thm 5.8).

use std::path::{Path, PathBuf};

use daec_structure::{SigmaMatrix, analyze, pantelides};

struct Expect {
    index: Option<u32>,
    c: Option<Vec<u32>>,
    d: Option<Vec<u32>>,
    dof: Option<i64>,
}

fn parse_list(s: &str) -> Vec<u32> {
    s.trim_matches(|ch| ch == '[' || ch == ']')
        .split(',')
        .map(|x| x.trim().parse().expect("offset"))
        .collect()
}

fn parse_expect(text: &str) -> Option<Expect> {
    let line = text.lines().find(|l| l.starts_with("// expect:"))?;
    let mut e = Expect {
        index: None,
        c: None,
        d: None,
        dof: None,
    };
    for tok in line["// expect:".len()..].split_whitespace() {
        if let Some(v) = tok.strip_prefix("index=") {
            e.index = v.parse().ok();
        } else if let Some(v) = tok.strip_prefix("c=") {
            e.c = Some(parse_list(v));
        } else if let Some(v) = tok.strip_prefix("d=") {
            e.d = Some(parse_list(v));
        } else if let Some(v) = tok.strip_prefix("dof=") {
            e.dof = v.parse().ok();
        }
    }
    Some(e)
}

/// Removes `// …` comments and `"…"` strings.
fn strip(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let line = line.split("//").next().unwrap_or("");
        let mut in_str = false;
        for ch in line.chars() {
            if ch == '"' {
                in_str = !in_str;
            } else if !in_str {
                out.push(ch);
            }
        }
        out.push('\n');
    }
    out
}

/// Σ of a scalar `.dae` model, or `None` if the model uses arrays, loops or events.
fn sigma_of_model(text: &str) -> Option<(Vec<String>, SigmaMatrix)> {
    let body = strip(text);
    if body.contains('[') || body.contains(" for ") || body.contains("when ") {
        return None;
    }
    let eq_start = body.find("\nequation")?;
    let mut unknowns = Vec::new();
    for line in body[..eq_start].lines() {
        let line = line.trim();
        if line == "initial equation" {
            break;
        }
        let mut words = line.split_whitespace();
        let Some(first) = words.next() else { continue };
        if matches!(first, "model" | "parameter" | "constant" | "annotation") {
            continue;
        }
        let name = words.next()?.split(['(', ';']).next()?.to_string();
        unknowns.push(name);
    }
    let rest = &body[eq_start + "\nequation".len()..];
    let end = rest.rfind("\nend ")?;
    let mut equations = Vec::new();
    for stmt in rest[..end].split(';') {
        let stmt = stmt.trim();
        // (a declared invariant is no equation of the system)
        if stmt.is_empty()
            || stmt.starts_with("annotation")
            || stmt.contains("__daec(invariant = true)")
        {
            continue;
        }
        equations.push(stmt.to_string());
    }
    let mut entries = Vec::new();
    for (i, eq) in equations.iter().enumerate() {
        // Tokenise identifiers and parentheses; order = number of enclosing der( ).
        let chars: Vec<char> = eq.chars().collect();
        let mut stack: Vec<bool> = Vec::new();
        let mut k = 0;
        let mut pending_der = false;
        while k < chars.len() {
            let ch = chars[k];
            if ch.is_alphabetic() || ch == '_' {
                let start = k;
                while k < chars.len() && (chars[k].is_alphanumeric() || chars[k] == '_') {
                    k += 1;
                }
                let ident: String = chars[start..k].iter().collect();
                if ident == "der" {
                    pending_der = true;
                    continue;
                }
                if let Some(j) = unknowns.iter().position(|u| *u == ident) {
                    let order = stack.iter().filter(|&&d| d).count() as u32;
                    entries.push((i, j, order));
                }
                continue;
            }
            if ch.is_ascii_digit() {
                // Skip numbers (including exponents like 1e-5).
                while k < chars.len() && (chars[k].is_alphanumeric() || chars[k] == '.') {
                    k += 1;
                }
                continue;
            }
            match ch {
                '(' => {
                    stack.push(pending_der);
                    pending_der = false;
                }
                ')' => {
                    stack.pop();
                }
                _ => {}
            }
            k += 1;
        }
    }
    let n_eq = equations.len();
    let n = unknowns.len();
    Some((unknowns, SigmaMatrix::from_entries(n_eq, n, entries)))
}

fn model_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models");
    let mut files = Vec::new();
    let mut dirs = vec![root];
    while let Some(d) = dirs.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "dae") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn every_scalar_model_matches_its_expect_line() {
    let mut checked = Vec::new();
    let mut failures = Vec::new();
    for path in model_files() {
        let text = std::fs::read_to_string(&path).expect("read model");
        let Some(expect) = parse_expect(&text) else {
            continue;
        };
        let Some((unknowns, s)) = sigma_of_model(&text) else {
            continue;
        };
        let name = path.display().to_string();
        let a = match analyze(&s) {
            Ok(a) => a,
            Err(e) => {
                failures.push(format!("{name}: {e} (unknowns {unknowns:?})"));
                continue;
            }
        };
        let mut bad = Vec::new();
        if let Some(c) = &expect.c
            && &a.offsets.c != c
        {
            bad.push(format!("c {:?} != {:?}", a.offsets.c, c));
        }
        if let Some(d) = &expect.d
            && &a.offsets.d != d
        {
            bad.push(format!("d {:?} != {:?}", a.offsets.d, d));
        }
        if let Some(ix) = expect.index
            && a.structural_index != ix
        {
            bad.push(format!("index {} != {}", a.structural_index, ix));
        }
        if let Some(dof) = expect.dof
            && a.dof != dof
        {
            bad.push(format!("dof {} != {}", a.dof, dof));
        }
        match pantelides(&s) {
            Ok(p) if p.differentiations == a.offsets.c && p.max_var_order == a.offsets.d => {}
            Ok(p) => bad.push(format!(
                "Pantelides c {:?} d {:?}",
                p.differentiations, p.max_var_order
            )),
            Err(e) => bad.push(format!("Pantelides: {e}")),
        }
        if !bad.is_empty() {
            failures.push(format!("{name}: {}", bad.join("; ")));
        }
        checked.push(name);
    }
    eprintln!("checked {}: {checked:?}", checked.len());
    assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
    // All scalar models with an expect line (arrays/loops/events are skipped).
    assert!(
        checked.len() >= 30,
        "only {} models checked: {checked:#?}",
        checked.len()
    );
}

/// `generators::pendulum_chain_link_vectors(10)` is the Σ of `models/scale/pendulum_chain.dae`
/// at its default N = 10: the Σ-method must reproduce the file's `// expect:` line.
#[test]
fn link_vector_pendulum_chain_generator_matches_the_model_file() {
    use daec_structure::generators::pendulum_chain_link_vectors;
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/scale/pendulum_chain.dae");
    let text = std::fs::read_to_string(path).expect("read pendulum_chain.dae");
    let expect = parse_expect(&text).expect("expect line");
    let s = pendulum_chain_link_vectors(10);
    assert_eq!((s.n_rows(), s.n_cols(), s.nnz()), (70, 70, 214));
    let a = analyze(&s).expect("nonsingular");
    assert_eq!(Some(a.offsets.c.clone()), expect.c);
    assert_eq!(Some(a.offsets.d.clone()), expect.d);
    assert_eq!(Some(a.structural_index), expect.index);
    assert_eq!(Some(a.dof), expect.dof);
    assert_eq!((a.structural_index, a.dof), (3, 20));
    let mut c = vec![1u32; 20];
    c.extend([2; 20]);
    c.extend([0; 20]);
    c.extend([2; 10]);
    assert_eq!(a.offsets.c, c);
    let p = pantelides(&s).expect("Pantelides");
    assert_eq!(p.differentiations, a.offsets.c);
}
