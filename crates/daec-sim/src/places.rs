//! Places in the model's source for run-time messages: the equations,
//! declarations and `reinit`s a message is about, named in words by
//! their flat text (`the equation `x ^ 2 + y ^ 2 = L ^ 2`, differentiated
//! twice`) and located by [`Label`]s on the spans of
//! [`daec_model::SourceSpans`], which the CLI renders with the source
//! lines as it renders compile-time diagnostics.

use daec_diag::{Label, Span};
use daec_expr::to_modelica;
use daec_model::{Dae, FlatNames};

/// Longest equation text quoted in a message, in characters (longer ones
/// end in `…`; the label shows the whole source line).
const MAX_TEXT: usize = 100;

/// `text` shortened to [`MAX_TEXT`] characters.
fn shorten(text: String) -> String {
    if text.chars().count() <= MAX_TEXT {
        return text;
    }
    let mut s: String = text.chars().take(MAX_TEXT - 1).collect();
    s.push('…');
    s
}

/// A span that points into the source: the parts a pipeline stage adds
/// (the equations of the first-order reduction) have empty ones.
fn real(span: Option<&Span>) -> Option<Span> {
    span.copied().filter(|s| s.end > s.start)
}

/// A label on `span` (none for a part without a place in the source).
fn label(span: Option<Span>, message: impl Into<String>, primary: bool) -> Option<Label> {
    span.map(|span| Label {
        span,
        message: message.into(),
        primary,
    })
}

/// `lhs = rhs` of equation `i` of the model, quoted.
fn quoted(dae: &Dae, eq: &daec_model::Equation) -> String {
    let names = FlatNames(dae);
    shorten(format!(
        "`{} = {}`",
        to_modelica(&dae.pool, eq.lhs, &names),
        to_modelica(&dae.pool, eq.rhs, &names)
    ))
}

/// Equation `i` of the model in words: `the equation `lhs = rhs``, with
/// `of the first-order reduction` for one that reduction added.
pub(crate) fn equation(dae: &Dae, i: usize) -> String {
    match dae.equations.get(i) {
        Some(eq) if real(dae.spans.equations.get(i)).is_none() => {
            format!(
                "the equation {} of the first-order reduction",
                quoted(dae, eq)
            )
        }
        Some(eq) => format!("the equation {}", quoted(dae, eq)),
        None => format!("equation {}", i + 1),
    }
}

/// `once`, `twice`, `3 times`.
fn times(k: u32) -> String {
    match k {
        1 => "once".into(),
        2 => "twice".into(),
        k => format!("{k} times"),
    }
}

/// `, differentiated twice` for `k = 2`; empty for `k = 0`.
pub(crate) fn differentiated(k: u32) -> String {
    if k == 0 {
        String::new()
    } else {
        format!(", differentiated {}", times(k))
    }
}

/// What a label on an equation says of its level-`level` constraint,
/// the equation differentiated `k` times: `its level-2 constraint
/// (differentiated twice) {message}` (just `{message}` for the stated
/// equation).
pub(crate) fn constraint_note(level: u32, k: u32, message: &str) -> String {
    match (level, k) {
        (0, 0) => message.to_string(),
        (_, 0) => format!("its level-{level} constraint {message}"),
        _ => format!(
            "its level-{level} constraint (differentiated {}) {message}",
            times(k)
        ),
    }
}

/// A primary label with `message` on the source of equation `i`.
pub(crate) fn equation_label(dae: &Dae, i: usize, message: impl Into<String>) -> Option<Label> {
    label(real(dae.spans.equations.get(i)), message, true)
}

/// Initial equation `k` of the model in words.
pub(crate) fn initial_equation(dae: &Dae, k: usize) -> String {
    match dae.initial_equations.get(k) {
        Some(eq) => format!("the initial equation {}", quoted(dae, eq)),
        None => format!("initial equation {}", k + 1),
    }
}

/// A primary label with `message` on the source of initial equation `k`.
pub(crate) fn initial_equation_label(
    dae: &Dae,
    k: usize,
    message: impl Into<String>,
) -> Option<Label> {
    label(real(dae.spans.initial_equations.get(k)), message, true)
}

/// Declared invariant `k` of the model in words.
pub(crate) fn invariant(dae: &Dae, k: usize) -> String {
    match dae.invariants.get(k) {
        Some(eq) => format!("the invariant {}", quoted(dae, eq)),
        None => format!("invariant {}", k + 1),
    }
}

/// A primary label with `message` on the source of invariant `k`.
pub(crate) fn invariant_label(dae: &Dae, k: usize, message: impl Into<String>) -> Option<Label> {
    label(real(dae.spans.invariants.get(k)), message, true)
}

/// A label with `message` on the declaration of unknown `j`.
pub(crate) fn unknown_label(
    dae: &Dae,
    j: usize,
    message: impl Into<String>,
    primary: bool,
) -> Option<Label> {
    label(real(dae.spans.unknowns.get(j)), message, primary)
}

/// A primary label with `message` on `reinit` `k` of event `event`.
pub(crate) fn reinit_label(
    dae: &Dae,
    event: usize,
    k: usize,
    message: impl Into<String>,
) -> Option<Label> {
    let span = dae.spans.reinits.get(event).and_then(|r| r.get(k));
    label(real(span), message, true)
}

/// The failure of an assertion at `t`: its message, the time and a label
/// at the `assert` (its `span`).
pub(crate) fn assertion_failure(message: &str, span: Option<&Span>, t: f64) -> crate::SimError {
    let shown = daec_solve::readable_number(t);
    let label = label(real(span), format!("fails at t = {shown}"), true);
    let cause = crate::FailureCause::Assertion {
        message: message.to_string(),
    };
    crate::SimError::numerical(
        t,
        cause,
        format!("assertion failed at t = {shown}: {message}"),
    )
    .with_labels(label.into_iter().collect())
}

/// Refuses `reinit` values (`values[k] = (unknown, value)` of event
/// `event` at `t`) that are not finite: a numerical failure at the
/// `reinit`.
pub(crate) fn check_reinits(
    dae: &Dae,
    event: usize,
    t: f64,
    values: &[(usize, f64)],
) -> Result<(), crate::SimError> {
    match values.iter().position(|(_, v)| !v.is_finite()) {
        None => Ok(()),
        Some(k) => {
            let (j, v) = values[k];
            Err(reinit_failure(dae, event, k, j, v, t))
        }
    }
}

/// The failure of a `reinit` whose value is not finite: `reinit` `k` of
/// event `event` gave `value` for unknown `j` at `t`.
fn reinit_failure(
    dae: &Dae,
    event: usize,
    k: usize,
    j: usize,
    value: f64,
    t: f64,
) -> crate::SimError {
    let name = dae.unknown_name(j);
    let time = t;
    let t = daec_solve::readable_number(t);
    let expr = dae
        .events
        .get(event)
        .and_then(|ev| ev.reinits.get(k))
        .map(|&(_, v)| format!(" `{}`", to_modelica(&dae.pool, v, &FlatNames(dae))))
        .unwrap_or_default();
    let label = reinit_label(dae, event, k, format!("gives {value} at t = {t}"));
    let cause = crate::FailureCause::ReinitNotFinite {
        unknown: name.to_string(),
        value,
    };
    crate::SimError::numerical(time, cause, format!(
        "the reinit of `{name}` gave {value} at t = {t}: its value{expr} cannot be evaluated there (a division by zero, an overflow, or a function outside its domain such as the square root or logarithm of a negative number)"
    ))
    .with_labels(label.into_iter().collect())
}
