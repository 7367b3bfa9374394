//! Removes the Modelica constructs that the `.dae` language does not
//! support from the token stream, reporting each once
//! ([`codes::UNSUPPORTED`]), so that the parser sees a flat model and does
//! not report a cascade of syntax errors:
//!
//! - an `algorithm` section is skipped up to the next `equation`,
//!   `initial equation`, `public`/`protected` or `end Name`;
//! - a nested class definition (`function f … end f;`, `type T = …;`) is
//!   skipped; a class keyword in place of `model` (`block M … end M;`) is
//!   read as `model`;
//! - `import …;`, `extends …;`, `within …;` are skipped;
//! - prefixes such as `flow`, `inner`, `partial`, `replaceable` are dropped.
//!
//! Statements (`while`, `break`, `return`) are left to the parser, which
//! reports them as unsupported where they appear.

use crate::lexer::{Keyword, Spanned, Tok};
use crate::parser::unsupported_keyword;
use daec_diag::{Diagnostic, FileId, Span, codes};

const CLASS_KEYWORDS: &[&str] = &[
    "function",
    "block",
    "class",
    "package",
    "record",
    "connector",
    "type",
    "operator",
];

const CLAUSE_KEYWORDS: &[&str] = &["import", "extends", "within"];

const PREFIXES: &[&str] = &[
    "flow",
    "stream",
    "inner",
    "outer",
    "redeclare",
    "replaceable",
    "encapsulated",
    "partial",
    "impure",
    "pure",
    "expandable",
];

fn report(file: FileId, kw: &str, start: usize, end: usize, diags: &mut Vec<Diagnostic>) {
    let (message, help) = unsupported_keyword(kw);
    diags.push(
        Diagnostic::error(codes::UNSUPPORTED, message)
            .with_primary(Span::new(file, start, end), "not supported")
            .with_help(help),
    );
}

/// The index after the first `;` at or after `from` (the length if none).
fn after_semicolon(tokens: &[Spanned], from: usize) -> usize {
    tokens[from..]
        .iter()
        .position(|(_, t, _)| *t == Tok::Semi)
        .map_or(tokens.len(), |i| from + i + 1)
}

/// Where an `algorithm` section starting at `from` ends.
fn algorithm_end(tokens: &[Spanned], from: usize) -> usize {
    let mut i = from;
    while i < tokens.len() {
        match (&tokens[i].1, tokens.get(i + 1).map(|t| &t.1)) {
            (Tok::Equation | Tok::Public | Tok::Protected, _)
            | (Tok::Initial, Some(Tok::Equation))
            | (Tok::End, Some(Tok::Ident(_)))
            | (Tok::Unsupported(Keyword("algorithm")), _) => return i,
            _ => i += 1,
        }
    }
    i
}

/// Where a nested class definition whose keyword is at `kw` ends, if its
/// end can be found: after `;` for `type T = …;`, after `end T;`
/// otherwise.
fn class_end(tokens: &[Spanned], kw: usize) -> Option<usize> {
    let Some((_, Tok::Ident(name), _)) = tokens.get(kw + 1) else {
        return None;
    };
    if matches!(tokens.get(kw + 2), Some((_, Tok::Assign, _))) {
        return Some(after_semicolon(tokens, kw + 2));
    }
    (kw + 2..tokens.len()).find_map(|i| {
        match (&tokens[i].1, tokens.get(i + 1), tokens.get(i + 2)) {
            (Tok::End, Some((_, Tok::Ident(n), _)), Some((_, Tok::Semi, _))) if n == name => {
                Some(i + 3)
            }
            _ => None,
        }
    })
}

/// Filters `tokens` as described in the module documentation.
pub(crate) fn filter(
    file: FileId,
    tokens: Vec<Spanned>,
    diags: &mut Vec<Diagnostic>,
) -> Vec<Spanned> {
    if !tokens
        .iter()
        .any(|(_, t, _)| matches!(t, Tok::Unsupported(_)))
    {
        return tokens;
    }
    let mut out: Vec<Spanned> = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        let (start, tok, end) = &tokens[i];
        let Tok::Unsupported(Keyword(kw)) = tok else {
            out.push(tokens[i].clone());
            i += 1;
            continue;
        };
        let kw: &'static str = kw;
        let (start, end) = (*start, *end);
        if kw == "algorithm" {
            report(file, kw, start, end, diags);
            i = algorithm_end(tokens.as_slice(), i + 1);
        } else if CLASS_KEYWORDS.contains(&kw) {
            let seen_model = out.iter().any(|(_, t, _)| *t == Tok::Model);
            if !seen_model {
                // The file's own class: read it as the model.
                let mut d = Diagnostic::error(
                    codes::UNSUPPORTED,
                    format!("`{kw}` is not supported by daec"),
                )
                .with_primary(Span::new(file, start, end), "read as `model`");
                d = d.with_help("daec reads one flat `model`; write `model` here");
                diags.push(d);
                out.push((start, Tok::Model, end));
                i += 1;
            } else {
                let (message, help) = unsupported_keyword(kw);
                diags.push(
                    Diagnostic::error(codes::UNSUPPORTED, format!("nested {message}"))
                        .with_primary(Span::new(file, start, end), "not supported")
                        .with_help(help),
                );
                i = class_end(&tokens, i).unwrap_or(i + 1);
            }
        } else if CLAUSE_KEYWORDS.contains(&kw) {
            report(file, kw, start, end, diags);
            i = after_semicolon(&tokens, i);
        } else if PREFIXES.contains(&kw) {
            report(file, kw, start, end, diags);
            i += 1;
        } else {
            out.push(tokens[i].clone());
            i += 1;
        }
    }
    out
}

/// Filters the tokens of a `.mo` file: only the `pure` (silently) and
/// `impure` (with a diagnostic) prefixes of functions are removed;
/// classes, `algorithm` sections, `extends`, `import`, `within` and the
/// component prefixes are read by the parser.
pub(crate) fn filter_stored(
    file: FileId,
    tokens: Vec<Spanned>,
    diags: &mut Vec<Diagnostic>,
) -> Vec<Spanned> {
    let mut out: Vec<Spanned> = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i].1 {
            // `pure` is what every function is (MLS 3.6, §12.3).
            Tok::Unsupported(Keyword("pure")) => i += 1,
            Tok::Unsupported(Keyword(kw @ "impure")) => {
                report(file, kw, tokens[i].0, tokens[i].2, diags);
                i += 1;
            }
            _ => {
                out.push(tokens[i].clone());
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::lex;

    fn run(src: &str) -> (Vec<String>, Vec<Diagnostic>) {
        let (tokens, mut diags) = lex(FileId(0), src);
        let out = filter(FileId(0), tokens, &mut diags);
        (
            out.into_iter().map(|(_, t, _)| t.to_string()).collect(),
            diags,
        )
    }

    #[test]
    fn algorithm_section_is_skipped_to_the_next_section() {
        let (toks, diags) = run("model M algorithm x := 1; equation x = 1; end M;");
        assert_eq!(toks.join(" "), "model M equation x = 1 ; end M ;");
        assert_eq!(diags.len(), 1);
        assert_eq!(
            diags[0].message,
            "`algorithm` sections are not supported by daec"
        );
        assert_eq!(diags[0].primary_span().map(|s| s.range()), Some(8..17));
    }

    #[test]
    fn nested_function_and_short_type_are_skipped() {
        let (toks, diags) = run(
            "model M type V = Real(unit = \"V\"); function f input Real a; \
             algorithm end f; Real x; end M;",
        );
        assert_eq!(toks.join(" "), "model M Real x ; end M ;");
        assert_eq!(diags.len(), 2);
        assert_eq!(
            diags[1].message,
            "nested `function` definitions are not supported by daec"
        );
    }

    #[test]
    fn block_is_read_as_model_and_prefixes_are_dropped() {
        let (toks, diags) = run("partial block B flow Real i; extends C(k = 1); end B;");
        assert_eq!(toks.join(" "), "model B Real i ; end B ;");
        let messages: Vec<_> = diags.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            vec![
                "the `partial` prefix is not supported by daec",
                "`block` is not supported by daec",
                "the `flow` prefix is not supported by daec",
                "`extends` is not supported by daec",
            ]
        );
    }
}
