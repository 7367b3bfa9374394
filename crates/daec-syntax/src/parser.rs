//! The parsing context used by the grammar actions: AST construction
//! helpers and the translation of lalrpop's errors into [`Diagnostic`]s.

use crate::ast::*;
use crate::lexer::{Spanned, Tok};
use daec_diag::{Diagnostic, FileId, Span, codes};
use lalrpop_util::{ErrorRecovery, ParseError};
use std::convert::Infallible;

/// One argument of a call, before positional and named ones are split.
pub(crate) enum CallArg {
    Positional(Expr),
    Named(Ident, Expr),
}

/// One declared name of a declaration statement (`x[2](start = 1) = e "d"`).
pub(crate) struct Declarator {
    pub name: Ident,
    pub dims: Vec<Expr>,
    pub modifiers: Vec<Modifier>,
    pub binding: Option<Expr>,
    pub description: Option<String>,
    pub annotations: Vec<Modifier>,
}

/// An element of the declaration part of a model.
pub(crate) enum ElementItem {
    Declarations(Vec<Declaration>),
    Annotation(Vec<Modifier>),
    Nothing,
}

/// What the parser's entry point returns.
pub(crate) enum FileAst {
    /// A `.dae` file.
    Dae(Option<Model>),
    /// A `.mo` file.
    Mo(StoredDefinition),
}

/// An element of a long class definition in a `.mo` file.
pub(crate) enum MoItem {
    Components(Vec<Component>),
    Class(ClassDef),
    Extends(Extends),
    Import(Import),
    /// `public` (false) or `protected` (true).
    Visibility(bool),
    Annotation(Vec<Modifier>),
    Nothing,
}

/// An item of the equation part of a model: a section header
/// (`initial`?), an equation, or a model annotation.
pub(crate) enum SectionPart {
    Head(bool, Span),
    // (boxed: an equation with its annotations is ten times the others)
    Equation(Box<Equation>),
    Annotation(Vec<Modifier>),
    /// A statement of an `algorithm` section (`.mo` files).
    Statement(Box<Statement>),
}

/// What the grammar actions share: the file, the token spans (for "the
/// previous token" in messages) and the diagnostics found so far.
pub(crate) struct Ctx<'s> {
    file: FileId,
    source: &'s str,
    /// `(start, end)` of every token, in order.
    token_spans: Vec<(usize, usize)>,
    /// The syntax errors, in the order found.
    pub diags: Vec<Diagnostic>,
    /// The name after `model`, once seen (for the fallback model).
    pub model_name: Option<Ident>,
    /// Start of the last reported parse error (lalrpop can report the
    /// same position twice while recovering).
    last_error: Option<usize>,
    /// Start of every `;` token, in order.
    semicolons: Vec<usize>,
    /// Where lexical errors start, in order.
    lex_errors: Vec<usize>,
    /// Parse errors before this position are consequences of the last
    /// reported one (they are in the same statement) and are not reported.
    quiet_until: Option<usize>,
}

/// The sign-less name of an expected terminal, as lalrpop spells it.
fn terminal_name(t: &str) -> String {
    match t {
        "Ident" => "identifier".to_owned(),
        "Int" | "Real" => "number".to_owned(),
        "Str" => "description string".to_owned(),
        "EndSub" => "`end`".to_owned(),
        quoted => format!("`{}`", quoted.trim_matches('"')),
    }
}

/// Tokens that can start an expression (lalrpop spelling).
const EXPRESSION_START: &[&str] = &[
    "Ident",
    "Int",
    "Real",
    "Str",
    "\"(\"",
    "\"{\"",
    "\"[\"",
    "\"-\"",
    "\"+\"",
    "\"not\"",
    "\"true\"",
    "\"false\"",
    "\"if\"",
    "\"end\"",
    "\"initial\"",
    "EndSub",
];

/// Binary operators (lalrpop spelling).
const OPERATORS: &[&str] = &[
    "\"+\"", "\"-\"", "\"*\"", "\"/\"", "\"^\"", "\".+\"", "\".-\"", "\".*\"", "\"./\"", "\".^\"",
    "\"<\"", "\"<=\"", "\">\"", "\">=\"", "\"==\"", "\"<>\"", "\"and\"", "\"or\"", "\":\"",
];

/// Tokens that continue a name or a primary (lalrpop spelling); left out
/// of messages that already say "an operator".
const POSTFIX: &[&str] = &["\"(\"", "\"[\"", "\".\""];

/// Keywords that start a structured equation (lalrpop spelling).
const EQUATION_START: &[&str] = &["\"for\"", "\"if\"", "\"when\""];

/// The most alternatives listed in one message.
const MAX_LISTED: usize = 6;

/// Turns lalrpop's list of expected terminals into words: the tokens that
/// start an expression become "an expression", a set of binary operators
/// becomes "an operator", and long lists are cut.
pub(crate) fn describe_expected(expected: &[String]) -> String {
    let has = |t: &str| expected.iter().any(|e| e == t);
    let expression = has("Ident") && has("Int") && has("\"(\"");
    let operator = expected
        .iter()
        .filter(|e| OPERATORS.contains(&e.as_str()))
        .count()
        >= 4;
    let equation = expression && has("\"for\"") && has("\"when\"");
    let mut items: Vec<String> = Vec::new();
    for e in expected {
        let e = e.as_str();
        if (expression && EXPRESSION_START.contains(&e))
            || (operator && (OPERATORS.contains(&e) || POSTFIX.contains(&e)))
            || (equation && EQUATION_START.contains(&e))
        {
            continue;
        }
        let name = terminal_name(e);
        if !items.contains(&name) {
            items.push(name);
        }
    }
    if equation {
        items.insert(0, "an equation".to_owned());
    } else if expression {
        items.insert(0, "an expression".to_owned());
    }
    if operator {
        items.push("an operator".to_owned());
    }
    match items.len() {
        0 => "nothing more".to_owned(),
        1 => items.remove(0),
        2 => format!("{} or {}", items[0], items[1]),
        n if n <= MAX_LISTED => {
            let last = items.pop().unwrap_or_default();
            format!("{} or {last}", items.join(", "))
        }
        n => format!(
            "{}, … ({} more)",
            items[..MAX_LISTED - 1].join(", "),
            n - (MAX_LISTED - 1)
        ),
    }
}

/// The message for an unsupported Modelica keyword, and a help line.
pub(crate) fn unsupported_keyword(kw: &str) -> (String, &'static str) {
    match kw {
        "algorithm" => (
            "`algorithm` sections are not supported by daec".to_owned(),
            "write the model as equations in an `equation` section",
        ),
        "while" | "break" | "return" => (
            format!("`{kw}` statements are not supported by daec"),
            "statements belong in `algorithm` sections, which daec does not support",
        ),
        "function" | "block" | "class" | "package" | "record" | "connector" | "type"
        | "operator" => (
            format!("`{kw}` definitions are not supported by daec"),
            "daec reads one flat `model`",
        ),
        "constrainedby" => (
            "`constrainedby` clauses are not supported by daec".to_owned(),
            "remove the clause: a `replaceable` element is constrained by its declared type",
        ),
        "import" | "extends" | "within" => (
            format!("`{kw}` is not supported by daec"),
            "daec reads one flat `model`; flatten the model first (e.g. with a Modelica tool)",
        ),
        _ => (
            format!("the `{kw}` prefix is not supported by daec"),
            "remove it: daec reads one flat `model`",
        ),
    }
}

/// `name` joined with dots into one identifier spanning all parts.
pub(crate) fn join_name(parts: Vec<Ident>) -> Ident {
    let span = match (parts.first(), parts.last()) {
        (Some(a), Some(b)) => a.span.to(b.span),
        _ => Span::default(),
    };
    let name = parts
        .iter()
        .map(|p| p.name.as_str())
        .collect::<Vec<_>>()
        .join(".");
    Ident { name, span }
}

/// The equation sections of `parts`, the annotations among them and the
/// statements of the `algorithm` sections.
fn sections_of(parts: Vec<SectionPart>) -> (Vec<Section>, Vec<Modifier>, Vec<Statement>) {
    let mut secs: Vec<Section> = Vec::new();
    let mut annotations = Vec::new();
    let mut statements = Vec::new();
    for part in parts {
        match part {
            SectionPart::Head(initial, span) => secs.push(Section {
                initial,
                equations: Vec::new(),
                span,
            }),
            SectionPart::Equation(e) => {
                // The grammar puts a header first; the `if` is a guard.
                if let Some(s) = secs.last_mut() {
                    s.equations.push(*e);
                }
            }
            SectionPart::Annotation(a) => annotations.extend(a),
            SectionPart::Statement(st) => statements.push(*st),
        }
    }
    (secs, annotations, statements)
}

/// The most operators and brackets one statement may hold. Deeper
/// expression trees would risk overflowing the stack of the recursive
/// passes over the AST (including its `Drop`).
pub(crate) const MAX_STATEMENT_OPERATORS: usize = 4096;

/// The most operators and brackets before a block opener (`for i in 1:n
/// loop`, `if c then`, `when x > 0 then`) that [`limit_statement_size`]
/// keeps in front of a statement it skips.
const MAX_KEPT_PREFIX_OPERATORS: usize = 64;

/// Removes every statement (tokens up to a `;`) holding more than
/// [`MAX_STATEMENT_OPERATORS`] operators and brackets, with a
/// [`codes::TOO_LARGE`] diagnostic each.
pub(crate) fn limit_statement_size(
    file: FileId,
    tokens: Vec<Spanned>,
    diags: &mut Vec<Diagnostic>,
) -> Vec<Spanned> {
    let deepens = |t: &Tok| {
        matches!(
            t,
            Tok::Plus
                | Tok::Minus
                | Tok::Star
                | Tok::Slash
                | Tok::Caret
                | Tok::DotPlus
                | Tok::DotMinus
                | Tok::DotStar
                | Tok::DotSlash
                | Tok::DotCaret
                | Tok::Lt
                | Tok::Le
                | Tok::Gt
                | Tok::Ge
                | Tok::EqEq
                | Tok::Ne
                | Tok::And
                | Tok::Or
                | Tok::Not
                | Tok::Colon
                | Tok::LParen
                | Tok::LBracket
                | Tok::LBrace
                | Tok::If
        )
    };
    // Fast path: no statement can be too large.
    if tokens.iter().filter(|(_, t, _)| deepens(t)).count() <= MAX_STATEMENT_OPERATORS {
        return tokens;
    }
    let mut out = Vec::with_capacity(tokens.len());
    let mut start = 0;
    while start < tokens.len() {
        let end = tokens[start..]
            .iter()
            .position(|(_, t, _)| *t == Tok::Semi)
            .map_or(tokens.len(), |i| start + i + 1);
        let mut statement = &tokens[start..end];
        let count = statement.iter().filter(|(_, t, _)| deepens(t)).count();
        if count > MAX_STATEMENT_OPERATORS {
            // Keep what opens a block before the statement (`equation`,
            // `for … loop`, `if … then`, `when … then`, …): only the
            // statement itself is skipped. A block opener comes before the
            // statement's `=` and outside brackets, after a few operators
            // at most; a `then` or `else` elsewhere belongs to an `if`
            // expression of the statement, and keeping up to it would
            // keep the statement.
            let (mut seen, mut depth, mut keep) = (0, 0i64, 0);
            for (i, (_, t, _)) in statement.iter().enumerate() {
                match t {
                    Tok::Assign | Tok::ColonAssign => break,
                    Tok::LParen | Tok::LBracket | Tok::LBrace => depth += 1,
                    Tok::RParen | Tok::RBracket | Tok::RBrace => depth -= 1,
                    Tok::Equation
                    | Tok::Loop
                    | Tok::Then
                    | Tok::Else
                    | Tok::Public
                    | Tok::Protected
                        if depth == 0 =>
                    {
                        keep = i + 1
                    }
                    _ => {}
                }
                if deepens(t) {
                    seen += 1;
                    if seen > MAX_KEPT_PREFIX_OPERATORS {
                        break;
                    }
                }
            }
            out.extend_from_slice(&statement[..keep]);
            statement = &statement[keep..];
            if statement.is_empty() {
                start = end;
                continue;
            }
            let from = statement[0].0;
            let to = statement[statement.len() - 1].2;
            diags.push(
                Diagnostic::error(
                    codes::TOO_LARGE,
                    format!(
                        "statement too large: {count} operators and brackets \
                         (at most {MAX_STATEMENT_OPERATORS})"
                    ),
                )
                .with_primary(Span::new(file, from, to), "this statement is skipped")
                .with_help("split the expression, or use arrays and `sum(…)`"),
            );
        } else {
            out.extend_from_slice(statement);
        }
        start = end;
    }
    out
}

/// Makes sure the token stream ends with `end Name;` when a model was
/// begun, so that the parser can always finish the model: a missing `;`
/// after `end Name` or a missing `end Name;` is reported ([`codes::PARSE_EOF`])
/// and added.
pub(crate) fn close_model(
    file: FileId,
    source: &str,
    tokens: &mut Vec<Spanned>,
    diags: &mut Vec<Diagnostic>,
) {
    let Some(m) = tokens.iter().position(|(_, t, _)| *t == Tok::Model) else {
        return;
    };
    let Some((ns, Tok::Ident(name), ne)) = tokens.get(m + 1).cloned() else {
        return;
    };
    let n = tokens.len();
    let eof = source.len();
    let last_end = tokens.last().map_or(eof, |t| t.2);
    let tail = |i: usize| n.checked_sub(i).map(|k| &tokens[k].1);
    match (tail(3), tail(2), tail(1)) {
        (Some(Tok::End), Some(Tok::Ident(_)), Some(Tok::Semi)) => {}
        (_, Some(Tok::End), Some(Tok::Ident(_))) => {
            diags.push(
                Diagnostic::error(codes::PARSE_EOF, "expected `;` at the end of the model")
                    .with_primary(
                        Span::new(file, last_end.saturating_sub(1), last_end),
                        "expected `;` after this",
                    )
                    .with_help("add `;`"),
            );
            tokens.push((eof, Tok::Semi, eof));
        }
        _ => {
            diags.push(
                Diagnostic::error(
                    codes::PARSE_EOF,
                    format!("unexpected end of file: model `{name}` is not closed"),
                )
                .with_primary(
                    Span::new(file, last_end.saturating_sub(1), last_end),
                    "the file ends here",
                )
                .with_secondary(Span::new(file, ns, ne), "the model begins here")
                .with_help(format!("end the model with `end {name};`")),
            );
            tokens.push((eof, Tok::End, eof));
            tokens.push((eof, Tok::Ident(name), eof));
            tokens.push((eof, Tok::Semi, eof));
        }
    }
}

impl<'s> Ctx<'s> {
    /// A context for the tokens of `source`.
    ///
    /// `lex_errors` are the start positions of the lexical errors: a parse
    /// error in the same statement after one is not reported.
    pub(crate) fn new(
        file: FileId,
        source: &'s str,
        tokens: &[Spanned],
        mut lex_errors: Vec<usize>,
    ) -> Ctx<'s> {
        lex_errors.sort_unstable();
        Ctx {
            file,
            source,
            token_spans: tokens.iter().map(|(s, _, e)| (*s, *e)).collect(),
            diags: Vec::new(),
            model_name: None,
            last_error: None,
            semicolons: tokens
                .iter()
                .filter(|(_, t, _)| *t == Tok::Semi)
                .map(|(s, _, _)| *s)
                .collect(),
            lex_errors,
            quiet_until: None,
        }
    }

    /// The start of the first `;` at or after `pos` (`usize::MAX` if none).
    fn next_semicolon(&self, pos: usize) -> usize {
        let i = self.semicolons.partition_point(|&s| s < pos);
        self.semicolons.get(i).copied().unwrap_or(usize::MAX)
    }

    /// Whether an error at `at` is a consequence of an earlier one in the
    /// same statement (no `;` in between).
    fn is_consequence(&self, at: usize) -> bool {
        if self.quiet_until.is_some_and(|q| at < q) {
            return true;
        }
        let i = self.lex_errors.partition_point(|&p| p < at);
        match i.checked_sub(1).map(|k| self.lex_errors[k]) {
            Some(p) => self.next_semicolon(p) >= at,
            None => false,
        }
    }

    /// The span `l..r` in this file.
    pub(crate) fn span(&self, l: usize, r: usize) -> Span {
        Span::new(self.file, l, r)
    }

    /// Reports `d` unless it is at the position of the last error or is a
    /// consequence of an earlier error in the same statement. With
    /// `statement_done`, the error closes its statement (a missing `;` at the
    /// end of a line) and the errors that follow it are reported.
    fn push_error_with(&mut self, at: usize, d: Diagnostic, statement_done: bool) {
        if self.last_error == Some(at) || self.is_consequence(at) {
            return;
        }
        self.last_error = Some(at);
        self.quiet_until = if statement_done {
            None
        } else {
            Some(self.next_semicolon(at))
        };
        self.diags.push(d);
    }

    fn push_error(&mut self, at: usize, d: Diagnostic) {
        self.push_error_with(at, d, false);
    }

    /// The index of the last token ending at or before `pos`.
    fn token_before(&self, pos: usize) -> Option<usize> {
        self.token_spans
            .partition_point(|&(_, e)| e <= pos)
            .checked_sub(1)
    }

    fn newline_between(&self, a: usize, b: usize) -> bool {
        self.source
            .get(a.min(b)..b)
            .is_some_and(|text| text.contains('\n'))
    }

    /// Reports a recovered syntax error.
    pub(crate) fn recovered(&mut self, e: ErrorRecovery<usize, Tok, Infallible>) {
        self.report(e.error);
    }

    /// Reports tokens after the end of the model.
    pub(crate) fn trailing(&mut self, e: ErrorRecovery<usize, Tok, Infallible>) {
        match e.error {
            ParseError::UnrecognizedToken {
                token: (l, tok, r), ..
            }
            | ParseError::ExtraToken { token: (l, tok, r) } => self.extra_token(l, &tok, r),
            other => self.report(other),
        }
    }

    fn extra_token(&mut self, l: usize, tok: &Tok, r: usize) {
        let d = Diagnostic::error(
            codes::PARSE_UNEXPECTED,
            format!("unexpected {} after the end of the model", tok.describe()),
        )
        .with_primary(self.span(l, r), "the model has already ended")
        .with_help("a `.dae` file holds exactly one model");
        self.push_error(l, d);
    }

    /// Reports a syntax error from lalrpop.
    pub(crate) fn report(&mut self, error: ParseError<usize, Tok, Infallible>) {
        match error {
            ParseError::UnrecognizedToken {
                token: (l, tok, r),
                expected,
            } => self.unexpected(l, &tok, r, &expected),
            ParseError::UnrecognizedEof { location, expected } => {
                let at = self
                    .token_spans
                    .last()
                    .map_or(location, |&(_, e)| e.max(location));
                let what = describe_expected(&expected);
                let mut d = Diagnostic::error(
                    codes::PARSE_EOF,
                    format!("unexpected end of file: expected {what}"),
                )
                .with_primary(
                    self.span(at.saturating_sub(1), at),
                    format!("expected {what} after this"),
                );
                if let Some(name) = &self.model_name {
                    d = d
                        .with_secondary(name.span, "the model begins here")
                        .with_help(format!("the model must end with `end {};`", name.name));
                }
                self.push_error(at, d);
            }
            ParseError::ExtraToken { token: (l, tok, r) } => self.extra_token(l, &tok, r),
            ParseError::InvalidToken { location } => {
                let d = Diagnostic::error(codes::PARSE_UNEXPECTED, "invalid token")
                    .with_primary(self.span(location, location + 1), "");
                self.push_error(location, d);
            }
            ParseError::User { error } => match error {},
        }
    }

    fn unexpected(&mut self, l: usize, tok: &Tok, r: usize, expected: &[String]) {
        let span = self.span(l, r);
        if let Tok::Unsupported(crate::lexer::Keyword(kw)) = tok {
            let (message, help) = unsupported_keyword(kw);
            let d = Diagnostic::error(codes::UNSUPPORTED, message)
                .with_primary(span, "not supported")
                .with_help(help);
            self.push_error(l, d);
            return;
        }
        if *tok == Tok::ColonAssign {
            self.assignment(l, r);
            return;
        }
        if expected.is_empty() {
            self.extra_token(l, tok, r);
            return;
        }
        let prev_end = self.token_before(l).map(|i| self.token_spans[i].1);
        if let Some(pe) = prev_end
            && expected.iter().any(|e| e == "\";\"")
            && self.newline_between(pe, l)
        {
            let d = Diagnostic::error(
                codes::PARSE_UNEXPECTED,
                format!("expected `;`, found {}", tok.describe()),
            )
            .with_primary(
                self.span(pe.saturating_sub(1), pe),
                "expected `;` after this",
            )
            .with_secondary(span, "unexpected token")
            .with_help("add `;` at the end of the previous line");
            self.push_error_with(l, d, true);
            return;
        }
        let what = describe_expected(expected);
        let mut d = Diagnostic::error(
            codes::PARSE_UNEXPECTED,
            format!("expected {what}, found {}", tok.describe()),
        )
        .with_primary(span, format!("unexpected {}", tok.describe()));
        if matches!(
            tok,
            Tok::Parameter | Tok::Constant | Tok::Discrete | Tok::Input | Tok::Output
        ) {
            d = d.with_help("declarations must come before the first `equation` section");
        }
        if expected.iter().any(|e| e == "\"=\"") {
            // The statement so far, from the previous `;`.
            let i = self.semicolons.partition_point(|&p| p < l);
            let from = i.checked_sub(1).map_or(0, |k| self.semicolons[k]);
            if self.source.get(from..l).is_some_and(|t| t.contains("==")) {
                d = d.with_help("equations use `=`; `==` compares two values");
            }
        }
        self.push_error(l, d);
    }

    /// Reports `:=` (an algorithm assignment).
    pub(crate) fn assignment(&mut self, l: usize, r: usize) {
        let d = Diagnostic::error(
            codes::UNSUPPORTED,
            "assignments `:=` are not supported by daec",
        )
        .with_primary(self.span(l, r), "assignment")
        .with_help("write an equation with `=`");
        self.push_error(l, d);
    }

    /// A binary expression spanning `l..r`.
    pub(crate) fn binary(&self, op: BinOp, lhs: Expr, rhs: Expr, l: usize, r: usize) -> Expr {
        Expr {
            kind: ExprKind::Binary {
                op,
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
            },
            span: self.span(l, r),
        }
    }

    /// A unary expression spanning `l..r`.
    pub(crate) fn unary(&self, op: UnOp, expr: Expr, l: usize, r: usize) -> Expr {
        Expr {
            kind: ExprKind::Unary {
                op,
                expr: Box::new(expr),
            },
            span: self.span(l, r),
        }
    }

    /// `a^b^c`: not an expression in MLS A.2.7 (`factor = primary ["^"
    /// primary]`). Reported; read as `a^(b^c)` to continue.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn chained_power(
        &mut self,
        power: Expr,
        op: BinOp,
        rhs: Expr,
        l: usize,
        op_l: usize,
        op_r: usize,
        r: usize,
    ) -> Expr {
        let d = Diagnostic::error(
            codes::PARSE_UNEXPECTED,
            format!("chained `{}` needs parentheses", op.symbol()),
        )
        .with_primary(self.span(op_l, op_r), "second exponentiation")
        .with_help("write `a^(b^c)` or `(a^b)^c`: Modelica does not chain `^`");
        self.push_error(op_l, d);
        match power.kind {
            ExprKind::Binary {
                op: first,
                lhs,
                rhs: middle,
            } => {
                let (ml, _) = (middle.span.start as usize, middle.span.end);
                let inner = self.binary(op, *middle, rhs, ml, r);
                self.binary(first, *lhs, inner, l, r)
            }
            kind => {
                let power = Expr {
                    kind,
                    span: power.span,
                };
                self.binary(op, power, rhs, l, r)
            }
        }
    }

    /// A call expression `func(args)` spanning `l..r`.
    pub(crate) fn call(&self, func: Vec<Ident>, args: Vec<CallArg>, l: usize, r: usize) -> Expr {
        let mut positional = Vec::new();
        let mut named_args = Vec::new();
        for a in args {
            match a {
                CallArg::Positional(e) => positional.push(e),
                CallArg::Named(n, e) => named_args.push((n, e)),
            }
        }
        Expr {
            kind: ExprKind::Call {
                func,
                args: positional,
                named_args,
            },
            span: self.span(l, r),
        }
    }

    /// A call used as an equation. Named arguments (e.g. `assert(…,
    /// level = …)`) are not kept.
    pub(crate) fn call_equation(&self, name: Vec<Ident>, args: Vec<CallArg>) -> EquationKind {
        let args = args
            .into_iter()
            .filter_map(|a| match a {
                CallArg::Positional(e) => Some(e),
                CallArg::Named(..) => None,
            })
            .collect();
        EquationKind::Call {
            name: join_name(name),
            args,
        }
    }

    /// `for i in r1, j in r2 loop body end for` as a statement: nested
    /// `For`s, the first index outermost.
    pub(crate) fn for_statement(
        &self,
        indices: Vec<(Ident, Expr)>,
        body: Vec<Statement>,
    ) -> StatementKind {
        let mut body = body;
        let mut indices = indices;
        while let Some((var, range)) = indices.pop() {
            let span = var.span.to(range.span);
            let kind = StatementKind::For { var, range, body };
            if indices.is_empty() {
                return kind;
            }
            body = vec![Statement { kind, span }];
        }
        StatementKind::Error
    }

    /// `for i in r1, j in r2 loop body end for` as nested `For`s, the
    /// first index outermost (MLS §8.3.2.1). The inner loops take the span
    /// of their index.
    pub(crate) fn for_equation(
        &self,
        indices: Vec<(Ident, Expr)>,
        body: Vec<Equation>,
    ) -> EquationKind {
        let mut indices = indices;
        let mut body = body;
        loop {
            let Some((var, range)) = indices.pop() else {
                // `Comma1` guarantees one index; an empty list is a body.
                return EquationKind::For {
                    var: Ident {
                        name: String::new(),
                        span: Span::default(),
                    },
                    range: Expr {
                        kind: ExprKind::Error,
                        span: Span::default(),
                    },
                    body,
                };
            };
            let kind = EquationKind::For { var, range, body };
            if indices.is_empty() {
                return kind;
            }
            let span = match &kind {
                EquationKind::For { var, range, .. } => var.span.to(range.span),
                _ => Span::default(),
            };
            body = vec![Equation {
                kind,
                description: None,
                annotations: Vec::new(),
                span,
            }];
        }
    }

    /// The declarations of one statement `prefixes type dims a, b, …;`.
    /// Name dimensions come first, then those written after the type
    /// (MLS §10.1: `Real[2] x[3]` has shape `[3, 2]`).
    pub(crate) fn declarations(
        &self,
        prefixes: (Variability, Causality),
        type_name: TypeName,
        type_dims: Option<Vec<Expr>>,
        declarators: Vec<Declarator>,
        span: Span,
    ) -> Vec<Declaration> {
        let type_dims = type_dims.unwrap_or_default();
        declarators
            .into_iter()
            .map(|d| {
                let mut dims = d.dims;
                dims.extend(type_dims.iter().cloned());
                Declaration {
                    variability: prefixes.0,
                    causality: prefixes.1,
                    type_name: type_name.clone(),
                    name: d.name,
                    dims,
                    modifiers: d.modifiers,
                    binding: d.binding,
                    description: d.description,
                    annotations: d.annotations,
                    span,
                }
            })
            .collect()
    }

    /// The model, with the `end` name checked against the `model` name.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn model(
        &mut self,
        l: usize,
        head: (Ident, Option<String>),
        elements: Vec<ElementItem>,
        parts: Vec<SectionPart>,
        end_name: Ident,
        r: usize,
    ) -> Model {
        let (name, description) = head;
        let mut declarations = Vec::new();
        let mut annotations = Vec::new();
        for e in elements {
            match e {
                ElementItem::Declarations(d) => declarations.extend(d),
                ElementItem::Annotation(a) => annotations.extend(a),
                ElementItem::Nothing => {}
            }
        }
        let (secs, more, _) = sections_of(parts);
        annotations.extend(more);
        self.check_end_name(&name, &end_name, "model");
        Model {
            name,
            description,
            declarations,
            sections: secs,
            annotations,
            end_name: Some(end_name),
            functions: Vec::new(),
            span: self.span(l, r),
        }
    }

    /// Reports an `end` name that is not the `what` (model, class) name.
    fn check_end_name(&mut self, name: &Ident, end_name: &Ident, what: &str) {
        if end_name.name != name.name {
            let d = Diagnostic::error(
                codes::PARSE_END_NAME,
                format!(
                    "`end {}` does not match the {what} name `{}`",
                    end_name.name, name.name
                ),
            )
            .with_primary(end_name.span, format!("expected `{}`", name.name))
            .with_secondary(name.span, format!("the {what} is named here"))
            .with_help(format!("write `end {};`", name.name));
            self.diags.push(d);
        }
    }

    /// The type name `parts` spanning `l..r`.
    pub(crate) fn type_name(&self, parts: Vec<Ident>, l: usize, r: usize) -> TypeName {
        TypeName {
            parts: parts.into_iter().map(|i| i.name).collect(),
            span: self.span(l, r),
        }
    }

    /// The components of one statement `prefixes type dims a, b if c, …`.
    pub(crate) fn components(
        &self,
        prefixes: ComponentPrefixes,
        vc: (Variability, Causality),
        type_name: TypeName,
        type_dims: Option<Vec<Expr>>,
        declarators: Vec<(Declarator, Option<Expr>)>,
        span: Span,
    ) -> Vec<Component> {
        let (declarators, conditions): (Vec<_>, Vec<_>) = declarators.into_iter().unzip();
        self.declarations(vc, type_name, type_dims, declarators, span)
            .into_iter()
            .zip(conditions)
            .map(|(decl, condition)| Component {
                decl,
                prefixes: prefixes.clone(),
                condition,
                protected: false,
            })
            .collect()
    }

    /// A long class definition, with the `end` name checked.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn long_class(
        &mut self,
        l: usize,
        prefixes: (bool, bool, ClassKind),
        name: Ident,
        description: Option<String>,
        body: (Vec<MoItem>, Vec<SectionPart>),
        end_name: Ident,
        r: usize,
    ) -> ClassDef {
        let (items, parts) = body;
        let mut elements = Vec::new();
        let mut annotations = Vec::new();
        let mut protected = false;
        for item in items {
            match item {
                MoItem::Components(cs) => elements.extend(cs.into_iter().map(|mut c| {
                    c.protected = protected;
                    Element::Component(Box::new(c))
                })),
                MoItem::Class(c) => elements.push(Element::Class(Box::new(c))),
                MoItem::Extends(e) => elements.push(Element::Extends(e)),
                MoItem::Import(i) => elements.push(Element::Import(i)),
                MoItem::Visibility(p) => protected = p,
                MoItem::Annotation(a) => annotations.extend(a),
                MoItem::Nothing => {}
            }
        }
        let (sections, more, algorithm) = sections_of(parts);
        annotations.extend(more);
        self.check_end_name(&name, &end_name, "class");
        ClassDef {
            kind: prefixes.2,
            partial: prefixes.1,
            encapsulated: prefixes.0,
            name,
            description,
            body: ClassBody::Long {
                elements,
                sections,
                algorithm,
                annotations,
                end_name,
            },
            span: self.span(l, r),
        }
    }

    /// A short class definition `kind Name = [causality] Base[dims](mods)`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn short_class(
        &self,
        l: usize,
        prefixes: (bool, bool, ClassKind),
        name: Ident,
        description: Option<String>,
        causality: Option<Causality>,
        base: TypeName,
        dims: Option<Vec<Expr>>,
        modifiers: Option<Vec<Modifier>>,
        r: usize,
    ) -> ClassDef {
        ClassDef {
            kind: prefixes.2,
            partial: prefixes.1,
            encapsulated: prefixes.0,
            name,
            description,
            body: ClassBody::Short {
                causality: causality.unwrap_or(Causality::None),
                base,
                dims: dims.unwrap_or_default(),
                modifiers: modifiers.unwrap_or_default(),
            },
            span: self.span(l, r),
        }
    }
}
