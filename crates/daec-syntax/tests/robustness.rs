//! Property tests: `parse` never panics, on arbitrary text and on
//! arbitrary sequences of valid tokens, and every generated valid model
//! parses without a diagnostic.

use daec_diag::FileId;
use daec_syntax::parse;
use proptest::prelude::*;

/// Every kind of token of the language, with a few spellings each.
const TOKENS: &[&str] = &[
    "model",
    "end",
    "M",
    "x",
    "y",
    "der",
    "time",
    "parameter",
    "constant",
    "discrete",
    "input",
    "output",
    "Real",
    "Integer",
    "Boolean",
    "equation",
    "initial",
    "for",
    "in",
    "loop",
    "if",
    "then",
    "elseif",
    "else",
    "when",
    "elsewhen",
    "and",
    "or",
    "not",
    "true",
    "false",
    "each",
    "final",
    "annotation",
    "public",
    "protected",
    "algorithm",
    "function",
    "extends",
    "flow",
    "while",
    "1",
    "2.5",
    ".5",
    "1e-7",
    "\"s\"",
    "'q x'",
    "+",
    "-",
    "*",
    "/",
    "^",
    ".+",
    ".-",
    ".*",
    "./",
    ".^",
    "=",
    ":=",
    "==",
    "<>",
    "<",
    "<=",
    ">",
    ">=",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ";",
    ":",
    ".",
];

fn token_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..80).prop_map(|t| t.join(" "))
}

/// A small valid expression.
fn expression() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("x".to_owned()),
        Just("time".to_owned()),
        (0u32..100).prop_map(|v| v.to_string()),
        (0u32..100).prop_map(|v| format!("{v}.5")),
        Just("p[2]".to_owned()),
    ];
    leaf.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            (
                inner.clone(),
                prop::sample::select(vec!["+", "-", "*", "/", "^"]),
                inner.clone()
            )
                .prop_map(|(a, op, b)| format!("({a} {op} {b})")),
            inner.clone().prop_map(|a| format!("(-{a})")),
            inner.clone().prop_map(|a| format!("sin({a})")),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(c, a, b)| format!("(if {c} > 0 then {a} else {b})")),
            (inner.clone(), inner).prop_map(|(a, b)| format!("{{{a}, {b}}}")),
        ]
    })
}

fn valid_model() -> impl Strategy<Value = String> {
    prop::collection::vec(expression(), 1..8).prop_map(|rhs| {
        let mut s = String::from(
            "model G\n  parameter Real p[3] = {1, 2, 3};\n  Real x(start = 1);\nequation\n",
        );
        for (i, e) in rhs.iter().enumerate() {
            if i % 3 == 2 {
                s.push_str(&format!(
                    "  for i in 1:3 loop\n    p[i] = {e};\n  end for;\n"
                ));
            } else {
                s.push_str(&format!("  der(x) = {e};\n"));
            }
        }
        s.push_str("end G;\n");
        s
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_text_never_panics(src in any::<String>()) {
        let _ = parse(FileId(0), &src);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let src = String::from_utf8_lossy(&bytes);
        let _ = parse(FileId(0), &src);
    }

    #[test]
    fn token_sequences_never_panic(src in token_soup()) {
        let p = parse(FileId(0), &src);
        // Every diagnostic points into the source.
        for d in &p.diagnostics {
            if let Some(span) = d.primary_span() {
                prop_assert!(span.end as usize <= src.len());
            }
        }
    }

    #[test]
    fn token_sequences_inside_a_model_never_panic(src in token_soup()) {
        let text = format!("model M\nequation\n{src}\nend M;\n");
        let p = parse(FileId(0), &text);
        prop_assert!(p.model.is_some());
    }

    #[test]
    fn valid_models_have_no_diagnostics(src in valid_model()) {
        let p = parse(FileId(0), &src);
        prop_assert!(p.diagnostics.is_empty(), "{}\n{:?}", src, p.diagnostics);
        let m = p.model.expect("model");
        prop_assert_eq!(m.declarations.len(), 2);
        prop_assert!(!m.sections[0].equations.is_empty());
    }
}
