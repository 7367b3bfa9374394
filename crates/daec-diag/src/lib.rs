//! Source files, spans and diagnostics for daec.
//!
//! Every stage of the pipeline reports a user's mistake as a [`Diagnostic`]
//! carrying one or more [`Label`]s on [`Span`]s of a file held in a
//! [`SourceMap`]. Rendering (with `codespan-reporting`) produces the
//! rustc-like text: `file:line:col`, the source line, a caret under the span,
//! the message, notes and help. Rendering writes into a `String`; only the
//! CLI prints it.

mod spans;

pub use spans::SpanRuns;

use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term;
use std::fmt;

/// Identifies a file in a [`SourceMap`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FileId(pub u32);

/// A byte range `start..end` in one source file.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Span {
    /// The file the range is in.
    pub file: FileId,
    /// First byte of the range.
    pub start: u32,
    /// One past the last byte of the range.
    pub end: u32,
}

impl Span {
    /// A span over `start..end` in `file`.
    pub fn new(file: FileId, start: usize, end: usize) -> Span {
        let clamp = |x: usize| u32::try_from(x).unwrap_or(u32::MAX);
        Span {
            file,
            start: clamp(start),
            end: clamp(end.max(start)),
        }
    }

    /// The smallest span covering both `self` and `other` (same file assumed).
    pub fn to(self, other: Span) -> Span {
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    /// The byte range as `usize`s.
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// How serious a diagnostic is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// The model cannot be processed.
    Error,
    /// The model is processed, but something is probably wrong.
    Warning,
    /// Extra information.
    Note,
}

/// A span with a message under it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    /// Where.
    pub span: Span,
    /// What to say there (may be empty).
    pub message: String,
    /// Primary labels are underlined with `^`, secondary ones with `-`.
    pub primary: bool,
}

/// A message for the user about their model, located by labels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Error, warning or note.
    pub severity: Severity,
    /// A stable code such as `E0101` (see [`codes`]); empty for messages
    /// without one (run-time failures located in the model), which render
    /// as `error: …`.
    pub code: &'static str,
    /// The headline.
    pub message: String,
    /// Located parts.
    pub labels: Vec<Label>,
    /// `= note: …` lines.
    pub notes: Vec<String>,
    /// `= help: …` lines.
    pub help: Vec<String>,
}

impl Diagnostic {
    /// A new error diagnostic with no labels.
    pub fn error(code: &'static str, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            code,
            message: message.into(),
            labels: Vec::new(),
            notes: Vec::new(),
            help: Vec::new(),
        }
    }

    /// A new warning diagnostic with no labels.
    pub fn warning(code: &'static str, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, message)
        }
    }

    /// Adds a primary label.
    pub fn with_primary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: message.into(),
            primary: true,
        });
        self
    }

    /// Adds a secondary label.
    pub fn with_secondary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: message.into(),
            primary: false,
        });
        self
    }

    /// Adds a note line.
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    /// Adds a help line.
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help.push(help.into());
        self
    }

    /// Whether this is an error (as opposed to a warning or note).
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The first primary span, if any.
    pub fn primary_span(&self) -> Option<Span> {
        self.labels.iter().find(|l| l.primary).map(|l| l.span)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}", self.code, self.message)
    }
}

// `codes` stays a namespace: diagnostics are matched as `codes::LEX_INVALID`.
/// Stable diagnostic codes, grouped by stage.
pub mod codes {
    /// A character that starts no token.
    pub const LEX_INVALID: &str = "E0001";
    /// A string or block comment that is never closed.
    pub const LEX_UNTERMINATED: &str = "E0002";
    /// A token where the grammar expects something else.
    pub const PARSE_UNEXPECTED: &str = "E0003";
    /// The file ends in the middle of the model.
    pub const PARSE_EOF: &str = "E0004";
    /// `end Name;` does not match `model Name`.
    pub const PARSE_END_NAME: &str = "E0005";
    /// A construct of Modelica that the `.dae` language does not support.
    pub const UNSUPPORTED: &str = "E0006";
    /// A name that is not declared.
    pub const UNDECLARED: &str = "E0101";
    /// A name declared twice.
    pub const DUPLICATE: &str = "E0102";
    /// A function called with the wrong number of arguments, or an unknown function.
    pub const ARITY: &str = "E0103";
    /// `der` of a parameter or constant, or of something that is not an expression of unknowns.
    pub const DER_OF_PARAMETER: &str = "E0104";
    /// An array index outside the declared size.
    pub const INDEX_RANGE: &str = "E0105";
    /// Parameters whose values depend on each other in a cycle.
    pub const PARAMETER_CYCLE: &str = "E0106";
    /// A parameter without a value, or a value that cannot be evaluated.
    pub const PARAMETER_VALUE: &str = "E0107";
    /// Numbers of equations and unknowns differ.
    pub const COUNT_MISMATCH: &str = "E0108";
    /// Wrong kind of value: array where a scalar is expected, Boolean in arithmetic, ….
    pub const TYPE_MISMATCH: &str = "E0109";
    /// An `input` without a binding.
    pub const INPUT: &str = "E0110";
    /// Array shapes do not agree.
    pub const SHAPE: &str = "E0111";
    /// An invalid modifier or modifier value.
    pub const MODIFIER: &str = "E0112";
    /// `if`-equation branches with different numbers of equations.
    pub const IF_EQUATION: &str = "E0113";
    /// A `when` body that is not `reinit(…)`, or `reinit` outside `when`.
    pub const WHEN: &str = "E0114";
    /// A model too large to expand (e.g. a loop of 10^12 iterations).
    pub const TOO_LARGE: &str = "E0115";
    /// A class name that no class of the model or its libraries has.
    pub const CLASS_NOT_FOUND: &str = "E0130";
    /// A modifier of an element that the modified class does not have, or
    /// of a `final` one.
    pub const MODIFIER_TARGET: &str = "E0131";
    /// A `connect` of references that are not connectors, or of
    /// connectors that do not match.
    pub const CONNECT: &str = "E0132";
    /// A class that extends or contains itself, or an instance hierarchy
    /// deeper than the instantiation allows.
    pub const INSTANCE_CYCLE: &str = "E0134";
    /// A structural value (array size, loop range, condition) that the
    /// instantiation cannot evaluate.
    pub const STRUCTURAL_VALUE: &str = "E0135";
    /// A component whose class has not as many equations as unknowns
    /// (MLS 3.6, §4.8).
    pub const UNBALANCED_COMPONENT: &str = "E0136";
    /// A name in a library's `package.order` that the package does not
    /// define (a warning).
    pub const PACKAGE_ORDER: &str = "W0137";
    /// A mistake with an enumeration type (MLS 3.6, §4.9.5): an unknown
    /// literal, values of two enumeration types (or of one and a number)
    /// compared or equated, arithmetic on an enumeration value, a
    /// malformed `enumeration(…)`.
    pub const ENUMERATION: &str = "E0138";
    /// A function that cannot be inlined, or a mistake in one (an
    /// assignment to an input, an output not assigned, recursion).
    pub const FUNCTION: &str = "E0140";
    /// A start value that lies outside `min`/`max`.
    pub const BOUNDS: &str = "W0116";
    /// `floor`, `ceil`, `integer`, `div`, `mod` or `rem` of a derivative
    /// of the unknowns, evaluated without events (a warning).
    pub const NO_EVENT_JUMP: &str = "W0117";
    /// A structurally singular model (no transversal).
    pub const STRUCTURALLY_SINGULAR: &str = "E0201";
    /// A singular Σ-Jacobian at the consistent point.
    pub const SINGULAR_JACOBIAN: &str = "E0202";
    /// A `reinit` of an unknown that cannot be a state: no derivative of it
    /// occurs, or the constraints determine it.
    pub const REINIT_NOT_STATE: &str = "E0203";
    /// A declared invariant that does not hold at the consistent initial
    /// point, or whose time derivative does not vanish along the DAE.
    pub const INVARIANT: &str = "W0204";
}

/// The source files of one run, with names, for rendering.
#[derive(Default)]
pub struct SourceMap {
    files: SimpleFiles<String, String>,
    count: u32,
}

impl SourceMap {
    /// An empty map.
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    /// Adds a file and returns its id.
    pub fn add(&mut self, name: impl Into<String>, source: impl Into<String>) -> FileId {
        let id = self.files.add(name.into(), source.into());
        self.count += 1;
        FileId(u32::try_from(id).unwrap_or(u32::MAX))
    }

    /// The text of a file.
    pub fn source(&self, file: FileId) -> &str {
        self.files
            .get(file.0 as usize)
            .map(|f| f.source().as_str())
            .unwrap_or("")
    }

    /// The name of a file.
    pub fn name(&self, file: FileId) -> &str {
        self.files
            .get(file.0 as usize)
            .map(|f| f.name().as_str())
            .unwrap_or("<unknown>")
    }

    /// The text covered by a span ("" when out of range).
    pub fn snippet(&self, span: Span) -> &str {
        self.source(span.file).get(span.range()).unwrap_or("")
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, file: FileId, offset: u32) -> (usize, usize) {
        let src = self.source(file);
        let offset = (offset as usize).min(src.len());
        let before = &src[..floor_char_boundary(src, offset)];
        let line = before.matches('\n').count() + 1;
        let col = before
            .rsplit_once('\n')
            .map_or(before, |(_, tail)| tail)
            .chars()
            .count()
            + 1;
        (line, col)
    }

    /// Renders diagnostics to text, rustc style. `color` adds ANSI colours.
    pub fn render(&self, diagnostics: &[Diagnostic], color: bool) -> String {
        let mut out = String::new();
        for d in diagnostics {
            out.push_str(&self.render_one(d, color));
        }
        out
    }

    /// Renders one diagnostic.
    pub fn render_one(&self, d: &Diagnostic, color: bool) -> String {
        let severity = match d.severity {
            Severity::Error => cs::Severity::Error,
            Severity::Warning => cs::Severity::Warning,
            Severity::Note => cs::Severity::Note,
        };
        let labels = d
            .labels
            .iter()
            .filter(|l| (l.span.file.0 as usize) < self.count as usize)
            .map(|l| {
                let style = if l.primary {
                    cs::LabelStyle::Primary
                } else {
                    cs::LabelStyle::Secondary
                };
                let src = self.source(l.span.file);
                let start = floor_char_boundary(src, l.span.start as usize);
                let end = floor_char_boundary(src, (l.span.end as usize).max(start));
                cs::Label::new(style, l.span.file.0 as usize, start..end)
                    .with_message(l.message.clone())
            })
            .collect();
        let mut notes: Vec<String> = d.notes.iter().map(|n| format!("note: {n}")).collect();
        notes.extend(d.help.iter().map(|h| format!("help: {h}")));
        let mut diag = cs::Diagnostic::new(severity);
        if !d.code.is_empty() {
            diag = diag.with_code(d.code);
        }
        let diag = diag
            .with_message(d.message.clone())
            .with_labels(labels)
            .with_notes(notes);
        let config = term::Config::default();
        let mut buf = String::new();
        let result = if color {
            let mut w = AnsiWriter::new(&mut buf);
            term::emit_to_write_style(&mut w, &config, &self.files, &diag)
        } else {
            let mut w = PlainWriter(&mut buf);
            term::emit_to_write_style(&mut w, &config, &self.files, &diag)
        };
        if result.is_err() {
            // Rendering only fails on inconsistent spans; fall back to one line.
            buf = if d.code.is_empty() {
                format!("error: {}\n", d.message)
            } else {
                format!("error[{}]: {}\n", d.code, d.message)
            };
        }
        buf
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A plain-text sink for codespan-reporting.
struct PlainWriter<'a>(&'a mut String);

impl std::io::Write for PlainWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.push_str(&String::from_utf8_lossy(buf));
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl term::WriteStyle for PlainWriter<'_> {
    fn set_header(&mut self, _severity: cs::Severity) -> std::io::Result<()> {
        Ok(())
    }
    fn set_header_message(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    fn set_line_number(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    fn set_note_bullet(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    fn set_source_border(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    fn set_label(
        &mut self,
        _severity: cs::Severity,
        _style: cs::LabelStyle,
    ) -> std::io::Result<()> {
        Ok(())
    }
    fn reset(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// An ANSI-coloured sink for codespan-reporting.
struct AnsiWriter<'a>(&'a mut String);

impl<'a> AnsiWriter<'a> {
    fn new(s: &'a mut String) -> Self {
        AnsiWriter(s)
    }
    fn code(&mut self, c: &str) -> std::io::Result<()> {
        self.0.push_str(c);
        Ok(())
    }
}

impl std::io::Write for AnsiWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.push_str(&String::from_utf8_lossy(buf));
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn severity_color(s: cs::Severity) -> &'static str {
    match s {
        cs::Severity::Bug | cs::Severity::Error => "\x1b[1;31m",
        cs::Severity::Warning => "\x1b[1;33m",
        cs::Severity::Note => "\x1b[1;32m",
        cs::Severity::Help => "\x1b[1;36m",
    }
}

impl term::WriteStyle for AnsiWriter<'_> {
    fn set_header(&mut self, severity: cs::Severity) -> std::io::Result<()> {
        self.code(severity_color(severity))
    }
    fn set_header_message(&mut self) -> std::io::Result<()> {
        self.code("\x1b[0m\x1b[1m")
    }
    fn set_line_number(&mut self) -> std::io::Result<()> {
        self.code("\x1b[1;34m")
    }
    fn set_note_bullet(&mut self) -> std::io::Result<()> {
        self.code("\x1b[1;34m")
    }
    fn set_source_border(&mut self) -> std::io::Result<()> {
        self.code("\x1b[1;34m")
    }
    fn set_label(&mut self, severity: cs::Severity, style: cs::LabelStyle) -> std::io::Result<()> {
        match style {
            cs::LabelStyle::Primary => self.code(severity_color(severity)),
            cs::LabelStyle::Secondary => self.code("\x1b[1;34m"),
        }
    }
    fn reset(&mut self) -> std::io::Result<()> {
        self.code("\x1b[0m")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_file_line_col_and_caret() {
        let mut map = SourceMap::new();
        let f = map.add(
            "m.dae",
            "model M\n  Real x;\nequation\n  der(x) = y;\nend M;\n",
        );
        let src = map.source(f);
        let at = src.find("y;").unwrap();
        let d = Diagnostic::error(codes::UNDECLARED, "cannot find `y` in this model")
            .with_primary(Span::new(f, at, at + 1), "not declared")
            .with_help("did you mean `x`?");
        let text = map.render(&[d], false);
        assert!(
            text.contains("error[E0101]: cannot find `y` in this model"),
            "{text}"
        );
        assert!(text.contains("m.dae:4:12"), "{text}");
        assert!(text.contains("  der(x) = y;"), "{text}");
        assert!(text.contains("^ not declared"), "{text}");
        assert!(text.contains("= help: did you mean `x`?"), "{text}");
        assert!(!text.contains('\x1b'));
        assert!(
            map.render(&[Diagnostic::error("E1", "x")], true)
                .contains('\x1b')
        );
        assert_eq!(map.line_col(f, at as u32), (4, 12));
    }

    #[test]
    fn a_diagnostic_without_code_renders_without_brackets() {
        let mut map = SourceMap::new();
        let f = map.add("m.dae", "model M\n  x = 1;\nend M;\n");
        let d = Diagnostic::error("", "integration failed: at t = 1")
            .with_primary(Span::new(f, 10, 16), "this equation");
        let text = map.render(&[d], false);
        assert!(
            text.starts_with("error: integration failed: at t = 1\n"),
            "{text}"
        );
        assert!(text.contains("m.dae:2:3"), "{text}");
        assert!(text.contains("^^^^^^ this equation"), "{text}");
    }

    #[test]
    fn out_of_range_spans_do_not_panic() {
        let mut map = SourceMap::new();
        let f = map.add("a.dae", "é");
        let d = Diagnostic::error("E1", "x").with_primary(Span::new(f, 1, 99), "here");
        let _ = map.render(&[d], false);
        let d = Diagnostic::error("E1", "x").with_primary(Span::new(FileId(7), 0, 1), "here");
        assert!(map.render(&[d], false).contains("error[E1]"));
    }
}
