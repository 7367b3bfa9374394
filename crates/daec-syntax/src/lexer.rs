//! The lexer of the `.dae` language (a `logos` state machine).
//!
//! The lexical rules follow the Modelica Language Specification 3.6,
//! Appendix A.1 ("Lexical conventions"): identifiers `IDENT` (plain and
//! quoted `Q-IDENT`), `UNSIGNED-NUMBER` (split here into integer and real
//! literals, §2.4.1), `STRING` with the `S-ESCAPE` escapes, and `//` and
//! `/* */` comments (which do not nest).
//!
//! [`lex`] never fails: a character that starts no token is reported as
//! [`codes::LEX_INVALID`] and skipped, an unterminated string, quoted
//! identifier or block comment is reported as [`codes::LEX_UNTERMINATED`]
//! and runs to the end of the input (of the line, for a quoted identifier).

use daec_diag::{Diagnostic, FileId, Span, codes};
use logos::{FilterResult, Lexer, Logos};
use std::borrow::Cow;
use std::fmt;

/// Why `logos` could not produce a token.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum LexError {
    /// A character that starts no token.
    #[default]
    Invalid,
    /// A `"…` string that is never closed.
    UnterminatedString,
    /// A `'…` quoted identifier that is not closed on its line.
    UnterminatedQuotedIdent,
    /// A `/* …` comment that is never closed.
    UnterminatedComment,
    /// An integer literal that does not fit in an `i64` (read as a real).
    IntegerTooLarge,
}

/// A token of the `.dae` language.
#[derive(Logos, Clone, Debug, PartialEq)]
#[logos(error = LexError)]
#[logos(skip r"[ \t\r\n\f\u{feff}]+")]
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
pub enum Tok {
    /// A skipped `/* … */` comment (never emitted).
    #[token("/*", block_comment)]
    BlockComment,

    /// `model`
    #[token("model")]
    Model,
    /// `end`
    #[token("end")]
    End,
    /// `end` inside subscript brackets (`x[end]`); produced by [`lex`]
    /// from [`Tok::End`], never by the state machine.
    EndSubscript,
    /// Marks a `.dae` file for the parser (first token; never lexed).
    StartDae,
    /// Marks a `.mo` file for the parser (first token; never lexed).
    StartMo,
    /// `parameter`
    #[token("parameter")]
    Parameter,
    /// `constant`
    #[token("constant")]
    Constant,
    /// `discrete`
    #[token("discrete")]
    Discrete,
    /// `input`
    #[token("input")]
    Input,
    /// `output`
    #[token("output")]
    Output,
    /// `equation`
    #[token("equation")]
    Equation,
    /// `initial` (section prefix, and the `initial()` operator)
    #[token("initial")]
    Initial,
    /// `for`
    #[token("for")]
    For,
    /// `in`
    #[token("in")]
    In,
    /// `loop`
    #[token("loop")]
    Loop,
    /// `if`
    #[token("if")]
    If,
    /// `then`
    #[token("then")]
    Then,
    /// `elseif`
    #[token("elseif")]
    Elseif,
    /// `else`
    #[token("else")]
    Else,
    /// `when`
    #[token("when")]
    When,
    /// `elsewhen`
    #[token("elsewhen")]
    Elsewhen,
    /// `and`
    #[token("and")]
    And,
    /// `or`
    #[token("or")]
    Or,
    /// `not`
    #[token("not")]
    Not,
    /// `true`
    #[token("true")]
    True,
    /// `false`
    #[token("false")]
    False,
    /// `each`
    #[token("each")]
    Each,
    /// `final`
    #[token("final")]
    Final,
    /// `annotation`
    #[token("annotation")]
    Annotation,
    /// `public` (accepted and ignored: a flat model has no outside)
    #[token("public")]
    Public,
    /// `protected` (accepted and ignored)
    #[token("protected")]
    Protected,
    /// A Modelica keyword that the `.dae` language does not support
    /// (`algorithm`, `function`, `extends`, `flow`, …). The parser reports
    /// it by name.
    #[token("algorithm", unsupported_keyword)]
    #[token("function", unsupported_keyword)]
    #[token("block", unsupported_keyword)]
    #[token("class", unsupported_keyword)]
    #[token("package", unsupported_keyword)]
    #[token("record", unsupported_keyword)]
    #[token("connector", unsupported_keyword)]
    #[token("type", unsupported_keyword)]
    #[token("import", unsupported_keyword)]
    #[token("extends", unsupported_keyword)]
    #[token("within", unsupported_keyword)]
    #[token("flow", unsupported_keyword)]
    #[token("stream", unsupported_keyword)]
    #[token("inner", unsupported_keyword)]
    #[token("outer", unsupported_keyword)]
    #[token("redeclare", unsupported_keyword)]
    #[token("replaceable", unsupported_keyword)]
    #[token("encapsulated", unsupported_keyword)]
    #[token("partial", unsupported_keyword)]
    #[token("break", unsupported_keyword)]
    #[token("return", unsupported_keyword)]
    #[token("while", unsupported_keyword)]
    #[token("expandable", unsupported_keyword)]
    #[token("operator", unsupported_keyword)]
    #[token("impure", unsupported_keyword)]
    #[token("pure", unsupported_keyword)]
    #[token("constrainedby", unsupported_keyword)]
    Unsupported(Keyword),

    /// An identifier; a quoted identifier `'a b'` without its quotes.
    #[regex(r"[A-Za-z_][A-Za-z0-9_]*", |lex| lex.slice().to_owned())]
    #[token("'", quoted_ident)]
    Ident(String),
    /// An integer literal (`UNSIGNED-INTEGER`).
    #[regex(r"[0-9]+", integer)]
    Int(i64),
    /// A real literal: `1.0`, `1.`, `.5`, `1e-7`, `2.5E+3`.
    #[regex(r"[0-9]+\.[0-9]*([eE][+-]?[0-9]+)?", real)]
    #[regex(r"\.[0-9]+([eE][+-]?[0-9]+)?", real)]
    #[regex(r"[0-9]+[eE][+-]?[0-9]+", real)]
    Real(f64),
    /// A string literal, with escapes resolved.
    #[token("\"", string)]
    Str(String),

    /// `+`
    #[token("+")]
    Plus,
    /// `-`
    #[token("-")]
    Minus,
    /// `*`
    #[token("*")]
    Star,
    /// `/`
    #[token("/")]
    Slash,
    /// `^`
    #[token("^")]
    Caret,
    /// `.+`
    #[token(".+")]
    DotPlus,
    /// `.-`
    #[token(".-")]
    DotMinus,
    /// `.*`
    #[token(".*")]
    DotStar,
    /// `./`
    #[token("./")]
    DotSlash,
    /// `.^`
    #[token(".^")]
    DotCaret,
    /// `=`
    #[token("=")]
    Assign,
    /// `:=` (an algorithm assignment; reported as unsupported)
    #[token(":=")]
    ColonAssign,
    /// `==`
    #[token("==")]
    EqEq,
    /// `<>`
    #[token("<>")]
    Ne,
    /// `<`
    #[token("<")]
    Lt,
    /// `<=`
    #[token("<=")]
    Le,
    /// `>`
    #[token(">")]
    Gt,
    /// `>=`
    #[token(">=")]
    Ge,
    /// `(`
    #[token("(")]
    LParen,
    /// `)`
    #[token(")")]
    RParen,
    /// `[`
    #[token("[")]
    LBracket,
    /// `]`
    #[token("]")]
    RBracket,
    /// `{`
    #[token("{")]
    LBrace,
    /// `}`
    #[token("}")]
    RBrace,
    /// `,`
    #[token(",")]
    Comma,
    /// `;`
    #[token(";")]
    Semi,
    /// `:`
    #[token(":")]
    Colon,
    /// `.`
    #[token(".")]
    Dot,
}

/// The Modelica keywords that the `.dae` language does not support.
const UNSUPPORTED_KEYWORDS: &[&str] = &[
    "algorithm",
    "function",
    "block",
    "class",
    "package",
    "record",
    "connector",
    "type",
    "import",
    "extends",
    "within",
    "flow",
    "stream",
    "inner",
    "outer",
    "redeclare",
    "replaceable",
    "encapsulated",
    "partial",
    "break",
    "return",
    "while",
    "expandable",
    "operator",
    "impure",
    "pure",
    "constrainedby",
];

/// An unsupported Modelica keyword, e.g. `Keyword("algorithm")`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Keyword(pub &'static str);

fn unsupported_keyword(lex: &mut Lexer<'_, Tok>) -> Keyword {
    let slice = lex.slice();
    Keyword(
        UNSUPPORTED_KEYWORDS
            .iter()
            .find(|k| **k == slice)
            .copied()
            .unwrap_or("keyword"),
    )
}

/// Skips a block comment after its `/*`; comments do not nest (MLS A.1).
fn block_comment(lex: &mut Lexer<'_, Tok>) -> FilterResult<(), LexError> {
    match lex.remainder().find("*/") {
        Some(i) => {
            lex.bump(i + 2);
            FilterResult::Skip
        }
        None => {
            lex.bump(lex.remainder().len());
            FilterResult::Error(LexError::UnterminatedComment)
        }
    }
}

/// Reads a string after its `"`, resolving the `S-ESCAPE`s of MLS A.1
/// (`\' \" \? \\ \a \b \f \n \r \t \v`). An unknown escape keeps the
/// escaped character.
fn string(lex: &mut Lexer<'_, Tok>) -> Result<String, LexError> {
    let rest = lex.remainder();
    let mut out = String::new();
    let mut chars = rest.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => {
                lex.bump(i + 1);
                return Ok(out);
            }
            '\\' => match chars.next() {
                Some((_, e)) => out.push(unescape(e)),
                None => break,
            },
            c => out.push(c),
        }
    }
    lex.bump(rest.len());
    Err(LexError::UnterminatedString)
}

/// Reads a quoted identifier after its `'` (MLS A.1 `Q-IDENT`); it must be
/// closed on the same line.
fn quoted_ident(lex: &mut Lexer<'_, Tok>) -> Result<String, LexError> {
    let rest = lex.remainder();
    let mut out = String::new();
    let mut chars = rest.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\'' => {
                lex.bump(i + 1);
                return Ok(out);
            }
            '\n' => {
                lex.bump(i);
                return Err(LexError::UnterminatedQuotedIdent);
            }
            '\\' => match chars.next() {
                Some((_, '\n')) | None => break,
                Some((_, e)) => out.push(unescape(e)),
            },
            c => out.push(c),
        }
    }
    let line = rest.find('\n').unwrap_or(rest.len());
    lex.bump(line);
    Err(LexError::UnterminatedQuotedIdent)
}

/// `name` as `.dae` source text: as it is when it reads back as this one
/// plain identifier (`IDENT`, not a keyword), else as a quoted identifier
/// `'…'` (MLS 2.3.1 `Q-IDENT`) with `'`, `\\` and control characters
/// escaped, so that the lexer reads back exactly `name`.
pub fn ident_source(name: &str) -> Cow<'_, str> {
    let mut chars = name.chars();
    let plain = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && matches!(Tok::lexer(name).next(), Some(Ok(Tok::Ident(_))));
    if plain {
        Cow::Borrowed(name)
    } else {
        Cow::Owned(escaped(name, '\''))
    }
}

/// `text` as a string literal `"…"` that the lexer reads back as `text`.
pub fn string_literal(text: &str) -> String {
    escaped(text, '"')
}

/// `text` between `quote`s, with the quote, `\\` and the control
/// characters that have an `S-ESCAPE` escaped (the inverse of
/// [`unescape`]; the other characters stand for themselves).
fn escaped(text: &str, quote: char) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push(quote);
    for c in text.chars() {
        let e = match c {
            '\\' => '\\',
            '\n' => 'n',
            '\r' => 'r',
            '\t' => 't',
            '\u{7}' => 'a',
            '\u{8}' => 'b',
            '\u{b}' => 'v',
            '\u{c}' => 'f',
            c if c == quote => c,
            c => {
                out.push(c);
                continue;
            }
        };
        out.push('\\');
        out.push(e);
    }
    out.push(quote);
    out
}

fn unescape(e: char) -> char {
    match e {
        'a' => '\u{7}',
        'b' => '\u{8}',
        'f' => '\u{c}',
        'n' => '\n',
        'r' => '\r',
        't' => '\t',
        'v' => '\u{b}',
        other => other,
    }
}

fn integer(lex: &mut Lexer<'_, Tok>) -> Result<i64, LexError> {
    lex.slice().parse().map_err(|_| LexError::IntegerTooLarge)
}

fn real(lex: &mut Lexer<'_, Tok>) -> f64 {
    // The regexes only match valid Rust float syntax (`1.` and `.5`
    // included); huge exponents give infinity, never an error.
    lex.slice().parse().unwrap_or(f64::INFINITY)
}

impl Tok {
    /// How the token is named in messages: "`model`", "identifier `x`",
    /// "number `1.5`", "string literal".
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(name) => format!("identifier `{name}`"),
            Tok::Int(v) => format!("number `{v}`"),
            Tok::Real(v) => format!("number `{v:?}`"),
            Tok::Str(_) => "string literal".to_owned(),
            other => format!("`{other}`"),
        }
    }
}

impl fmt::Display for Tok {
    /// The token as written in source (strings and quoted identifiers
    /// without their escapes).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Tok::BlockComment => "/* */",
            Tok::Model => "model",
            Tok::StartDae | Tok::StartMo => "",
            Tok::End | Tok::EndSubscript => "end",
            Tok::Parameter => "parameter",
            Tok::Constant => "constant",
            Tok::Discrete => "discrete",
            Tok::Input => "input",
            Tok::Output => "output",
            Tok::Equation => "equation",
            Tok::Initial => "initial",
            Tok::For => "for",
            Tok::In => "in",
            Tok::Loop => "loop",
            Tok::If => "if",
            Tok::Then => "then",
            Tok::Elseif => "elseif",
            Tok::Else => "else",
            Tok::When => "when",
            Tok::Elsewhen => "elsewhen",
            Tok::And => "and",
            Tok::Or => "or",
            Tok::Not => "not",
            Tok::True => "true",
            Tok::False => "false",
            Tok::Each => "each",
            Tok::Final => "final",
            Tok::Annotation => "annotation",
            Tok::Public => "public",
            Tok::Protected => "protected",
            Tok::Unsupported(kw) => kw.0,
            Tok::Ident(name) => name,
            Tok::Int(v) => return write!(f, "{v}"),
            Tok::Real(v) => return write!(f, "{v:?}"),
            Tok::Str(s) => return write!(f, "\"{s}\""),
            Tok::Plus => "+",
            Tok::Minus => "-",
            Tok::Star => "*",
            Tok::Slash => "/",
            Tok::Caret => "^",
            Tok::DotPlus => ".+",
            Tok::DotMinus => ".-",
            Tok::DotStar => ".*",
            Tok::DotSlash => "./",
            Tok::DotCaret => ".^",
            Tok::Assign => "=",
            Tok::ColonAssign => ":=",
            Tok::EqEq => "==",
            Tok::Ne => "<>",
            Tok::Lt => "<",
            Tok::Le => "<=",
            Tok::Gt => ">",
            Tok::Ge => ">=",
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBracket => "[",
            Tok::RBracket => "]",
            Tok::LBrace => "{",
            Tok::RBrace => "}",
            Tok::Comma => ",",
            Tok::Semi => ";",
            Tok::Colon => ":",
            Tok::Dot => ".",
        };
        f.write_str(s)
    }
}

/// A token with its byte range `start..end`, as the parser consumes it.
pub type Spanned = (usize, Tok, usize);

/// Splits `source` into tokens, reporting (and skipping) what is not one.
///
/// Consecutive invalid characters are reported once. An integer literal too
/// large for `i64` is reported as a warning and read as a real literal.
pub fn lex(file: FileId, source: &str) -> (Vec<Spanned>, Vec<Diagnostic>) {
    let mut tokens = Vec::with_capacity(source.len() / 4);
    let mut diags: Vec<Diagnostic> = Vec::new();
    // The pending run of invalid characters, reported when it ends.
    let mut invalid: Option<(usize, usize)> = None;
    let mut lexer = Tok::lexer(source);
    while let Some(result) = lexer.next() {
        let range = lexer.span();
        let (start, end) = (range.start, range.end);
        if !matches!(result, Err(LexError::Invalid))
            && let Some((s, e)) = invalid.take()
        {
            diags.push(invalid_chars(file, source, s, e));
        }
        match result {
            Ok(tok) => tokens.push((start, tok, end)),
            Err(LexError::Invalid) => {
                invalid = match invalid {
                    Some((s, e)) if e == start => Some((s, end)),
                    Some((s, e)) => {
                        diags.push(invalid_chars(file, source, s, e));
                        Some((start, end))
                    }
                    None => Some((start, end)),
                };
            }
            Err(LexError::IntegerTooLarge) => {
                let value: f64 = source[start..end].parse().unwrap_or(f64::INFINITY);
                diags.push(
                    Diagnostic::warning(
                        codes::LEX_INVALID,
                        "integer literal is too large for a 64-bit Integer",
                    )
                    .with_primary(Span::new(file, start, end), "read as a Real number")
                    .with_help("write it as a real literal, e.g. with a trailing `.0`"),
                );
                tokens.push((start, Tok::Real(value), end));
            }
            Err(kind) => {
                let (what, label) = match kind {
                    LexError::UnterminatedString => {
                        ("unterminated string literal", "the string starts here")
                    }
                    LexError::UnterminatedQuotedIdent => (
                        "unterminated quoted identifier",
                        "the identifier starts here and is not closed on this line",
                    ),
                    _ => ("unterminated block comment", "the comment starts here"),
                };
                let opener = if kind == LexError::UnterminatedComment {
                    2
                } else {
                    1
                };
                let closer = match kind {
                    LexError::UnterminatedString => "`\"`",
                    LexError::UnterminatedQuotedIdent => "`'`",
                    _ => "`*/`",
                };
                diags.push(
                    Diagnostic::error(codes::LEX_UNTERMINATED, what)
                        .with_primary(Span::new(file, start, start + opener), label)
                        .with_help(format!("add the closing {closer}")),
                );
            }
        }
    }
    if let Some((s, e)) = invalid {
        diags.push(invalid_chars(file, source, s, e));
    }
    mark_subscript_ends(&mut tokens);
    (tokens, diags)
}

/// Turns `end` inside `[ … ]` into [`Tok::EndSubscript`] (MLS §10.5: `end`
/// in a subscript is the size of that dimension), so that the grammar can
/// tell it from the `end` that closes a block without a second token of
/// lookahead. An `end` followed by a name, `for`, `if` or `when` still
/// closes a block (and resets the bracket count, after an unclosed `[`).
fn mark_subscript_ends(tokens: &mut [Spanned]) {
    let mut depth = 0usize;
    for i in 0..tokens.len() {
        match tokens[i].1 {
            Tok::LBracket => depth += 1,
            Tok::RBracket => depth = depth.saturating_sub(1),
            Tok::End if depth > 0 => {
                let closes_block = matches!(
                    tokens.get(i + 1).map(|t| &t.1),
                    Some(Tok::Ident(_) | Tok::For | Tok::If | Tok::When)
                );
                if closes_block {
                    depth = 0;
                } else {
                    tokens[i].1 = Tok::EndSubscript;
                }
            }
            _ => {}
        }
    }
}

fn invalid_chars(file: FileId, source: &str, start: usize, end: usize) -> Diagnostic {
    let text = source.get(start..end).unwrap_or("");
    let message = if text.chars().count() == 1 {
        format!("invalid character `{}` in the model", text.escape_debug())
    } else {
        format!("invalid characters `{}` in the model", text.escape_debug())
    };
    Diagnostic::error(codes::LEX_INVALID, message)
        .with_primary(Span::new(file, start, end), "no token starts with this")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<Tok> {
        let (t, d) = lex(FileId(0), src);
        assert!(d.is_empty(), "unexpected diagnostics for {src:?}: {d:?}");
        t.into_iter().map(|(_, t, _)| t).collect()
    }

    #[test]
    fn identifiers_print_back_as_source() {
        assert_eq!(ident_source("x_1"), "x_1");
        assert_eq!(ident_source("a b"), "'a b'");
        assert_eq!(ident_source("end"), "'end'");
        assert_eq!(ident_source("algorithm"), "'algorithm'");
        assert_eq!(ident_source("1x"), "'1x'");
        assert_eq!(ident_source(""), "''");
        assert_eq!(ident_source("it's"), "'it\\'s'");
        assert_eq!(ident_source("a\\b"), "'a\\\\b'");
        assert_eq!(ident_source("a\nb"), "'a\\nb'");
        assert_eq!(ident_source("φ"), "'φ'");
        assert_eq!(string_literal("say \"hi\"\n"), "\"say \\\"hi\\\"\\n\"");
        for name in [
            "a b",
            "end",
            "it's",
            "a\\b",
            "x\ny",
            "tab\there",
            "\u{7}\u{8}\u{b}\u{c}\r",
            "φ\u{202e}",
        ] {
            assert_eq!(
                toks(&ident_source(name)),
                vec![Tok::Ident(name.into())],
                "{name:?}"
            );
        }
    }

    proptest::proptest! {
        #[test]
        fn every_name_and_string_reads_back(text in "(?s).*|[ -~\n\r\t\u{7}\u{8}\u{b}\u{c}'\"\\\\]*") {
            proptest::prop_assert_eq!(toks(&ident_source(&text)), vec![Tok::Ident(text.clone())]);
            proptest::prop_assert_eq!(toks(&string_literal(&text)), vec![Tok::Str(text.clone())]);
        }
    }

    #[test]
    fn numbers_integer_and_real() {
        assert_eq!(toks("1"), vec![Tok::Int(1)]);
        assert_eq!(toks("1.0"), vec![Tok::Real(1.0)]);
        assert_eq!(toks(".5"), vec![Tok::Real(0.5)]);
        assert_eq!(toks("1."), vec![Tok::Real(1.0)]);
        assert_eq!(toks("1e-7"), vec![Tok::Real(1e-7)]);
        assert_eq!(toks("2.5E+3"), vec![Tok::Real(2500.0)]);
        assert_eq!(toks("3E2"), vec![Tok::Real(300.0)]);
        assert_eq!(toks("1.e3"), vec![Tok::Real(1000.0)]);
        assert_eq!(toks("007"), vec![Tok::Int(7)]);
        assert_eq!(
            toks("9223372036854775807"),
            vec![Tok::Int(9_223_372_036_854_775_807)]
        );
    }

    #[test]
    fn too_large_integer_is_a_real_with_a_warning() {
        let (t, d) = lex(FileId(0), "x = 99999999999999999999;");
        assert_eq!(t[2].1, Tok::Real(1e20));
        assert_eq!(d.len(), 1);
        assert!(!d[0].is_error());
        assert_eq!(d[0].primary_span().map(|s| s.range()), Some(4..24));
    }

    #[test]
    fn element_wise_operators_and_dots() {
        assert_eq!(
            toks("a.*b ./ c .+ d .- e .^ 2"),
            vec![
                Tok::Ident("a".into()),
                Tok::DotStar,
                Tok::Ident("b".into()),
                Tok::DotSlash,
                Tok::Ident("c".into()),
                Tok::DotPlus,
                Tok::Ident("d".into()),
                Tok::DotMinus,
                Tok::Ident("e".into()),
                Tok::DotCaret,
                Tok::Int(2),
            ]
        );
        assert_eq!(
            toks("Modelica.Units.SI.Length"),
            vec![
                Tok::Ident("Modelica".into()),
                Tok::Dot,
                Tok::Ident("Units".into()),
                Tok::Dot,
                Tok::Ident("SI".into()),
                Tok::Dot,
                Tok::Ident("Length".into()),
            ]
        );
        // `2./x` is `2.` then `/` (longest match, as in Modelica).
        assert_eq!(toks("2./x")[..2], [Tok::Real(2.0), Tok::Slash]);
    }

    #[test]
    fn relational_and_assignment_operators() {
        assert_eq!(
            toks("< <= > >= == <> = := :"),
            vec![
                Tok::Lt,
                Tok::Le,
                Tok::Gt,
                Tok::Ge,
                Tok::EqEq,
                Tok::Ne,
                Tok::Assign,
                Tok::ColonAssign,
                Tok::Colon,
            ]
        );
    }

    #[test]
    fn keywords_identifiers_and_unsupported_keywords() {
        assert_eq!(
            toks("model der time end_ elsewhen algorithm connect 'a b'"),
            vec![
                Tok::Model,
                Tok::Ident("der".into()),
                Tok::Ident("time".into()),
                Tok::Ident("end_".into()),
                Tok::Elsewhen,
                Tok::Unsupported(Keyword("algorithm")),
                Tok::Ident("connect".into()),
                Tok::Ident("a b".into()),
            ]
        );
        assert_eq!(toks(r"'it\'s'"), vec![Tok::Ident("it's".into())]);
    }

    #[test]
    fn strings_with_escapes() {
        assert_eq!(
            toks(r#""a \"q\" \\ \n b""#),
            vec![Tok::Str("a \"q\" \\ \n b".into())]
        );
        assert_eq!(toks("\"two\nlines\""), vec![Tok::Str("two\nlines".into())]);
    }

    #[test]
    fn comments_are_skipped() {
        assert_eq!(
            toks("a // line comment\n/* block\n * comment */ b /**/ c //"),
            vec![
                Tok::Ident("a".into()),
                Tok::Ident("b".into()),
                Tok::Ident("c".into()),
            ]
        );
    }

    #[test]
    fn spans_are_byte_ranges() {
        let (t, _) = lex(FileId(0), "  x1 = 2.5;");
        let ranges: Vec<_> = t.iter().map(|(s, _, e)| (*s, *e)).collect();
        assert_eq!(ranges, vec![(2, 4), (5, 6), (7, 10), (10, 11)]);
    }

    #[test]
    fn unterminated_comment_string_and_quoted_ident() {
        let (t, d) = lex(FileId(0), "x /* never closed");
        assert_eq!(t.len(), 1);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].code, codes::LEX_UNTERMINATED);
        assert_eq!(d[0].message, "unterminated block comment");
        assert_eq!(d[0].primary_span().map(|s| s.range()), Some(2..4));

        let (t, d) = lex(FileId(0), "y = \"abc\n def");
        assert_eq!(t.len(), 2);
        assert_eq!(d[0].message, "unterminated string literal");
        assert_eq!(d[0].primary_span().map(|s| s.range()), Some(4..5));

        let (t, d) = lex(FileId(0), "'abc\nx");
        assert_eq!(t, vec![(5, Tok::Ident("x".into()), 6)]);
        assert_eq!(d[0].message, "unterminated quoted identifier");
    }

    #[test]
    fn invalid_characters_are_reported_and_skipped() {
        let (t, d) = lex(FileId(0), "a $ b @@ c é");
        let names: Vec<_> = t.iter().map(|(_, t, _)| t.to_string()).collect();
        assert_eq!(names, vec!["a", "b", "c"]);
        assert_eq!(d.len(), 3);
        assert!(d.iter().all(|d| d.code == codes::LEX_INVALID));
        assert_eq!(d[0].message, "invalid character `$` in the model");
        assert_eq!(d[1].message, "invalid characters `@@` in the model");
        assert_eq!(d[1].primary_span().map(|s| s.range()), Some(6..8));
        assert_eq!(d[2].primary_span().map(|s| s.range()), Some(11..13));
    }

    #[test]
    fn describe_names_tokens_for_messages() {
        assert_eq!(Tok::Semi.describe(), "`;`");
        assert_eq!(Tok::Ident("x".into()).describe(), "identifier `x`");
        assert_eq!(Tok::Real(1.5).describe(), "number `1.5`");
        assert_eq!(Tok::Str("s".into()).describe(), "string literal");
    }
}
