//! Mutation fuzzing of the whole CLI (architecture invariants 1 and 5): a
//! model from `models/` (all of it: the papers' examples, `scale/`,
//! `err/`, `testset/`) with one to four random mutations — at the token
//! level (delete, duplicate, swap, another identifier of the file, an
//! extreme number, another operator, `der(…)` around tokens, deep
//! nesting), at the statement level (an equation or declaration
//! duplicated or deleted, a `start`/`fixed`/`min`/parameter value
//! changed, a `when`/`reinit` clause inserted) or at the character level —
//! run through `flatten`, `analyze`, `regularize` and `simulate` (short
//! runs: `--t-end`, `--max-steps`, `--max-events`), and the numeric
//! options of `simulate` (`-p`, tolerances, end times, grids, step bounds)
//! on the unmutated models.
//!
//! Every run must end with an exit code in {0, 1, 2, 3}, a diagnostic on
//! stderr when it is not 0, no panic (the CLI turns one into exit 101) and
//! within a deadline (`DEADLINE`; the run works on its own thread). A
//! failure reports the command and the mutated model. An abort (a failed
//! allocation) ends the test process: the case that was running is in
//! `target/tmp/fuzz_models/running-<test>.dae`, with the command in its
//! first line.
//!
//! The cases are reproducible: a fixed seed (`DAEC_FUZZ_SEED` chooses
//! another) and `CASES` cases per test (`DAEC_FUZZ_CASES=5000` for a long
//! run, best with `cargo test --release --test fuzz_models`). A defect
//! the harness finds is kept, minimised, in `tests/fuzz_regressions/`:
//! every file there runs through every command (and the `// run:` lines
//! it names, with their expected exit code and messages).

mod common;

use daec::diag::FileId;
use daec::syntax::lexer::{Tok, lex};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::mpsc;
use std::time::Duration;

/// Cases per test in a default run (CI: five tests, a few seconds in a
/// debug build).
const CASES: u32 = 64;

/// The seed of a default run.
const SEED: u64 = 0x0da3_c0f2_2028;

/// How long one run may take before it counts as a hang. Runs are short
/// (small step and event limits); the slowest legitimate ones, the
/// largest test-set models through `simulate`, take about a tenth of this
/// in a debug build.
const DEADLINE: Duration = Duration::from_secs(if cfg!(debug_assertions) { 40 } else { 10 });

/// The step attempts and events a fuzzed simulation may make.
const SIM_LIMITS: [&str; 4] = ["--max-steps", "200", "--max-events", "20"];

/// A model of the corpus: its path (relative to the repository root) and
/// text.
struct Model {
    path: String,
    text: String,
}

/// Every `.dae` file under `models/`.
fn corpus() -> &'static [Model] {
    static CORPUS: OnceLock<Vec<Model>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        common::models_under("")
            .into_iter()
            .map(|path| {
                let text = std::fs::read_to_string(common::root().join(&path)).unwrap();
                Model { path, text }
            })
            .collect()
    })
}

/// One change to a model's text. The indices choose among the tokens (or
/// statements, characters, …) of the text at hand, modulo their number.
#[derive(Clone, Debug)]
enum Mutation {
    DeleteToken(usize),
    DuplicateToken(usize),
    SwapTokens(usize, usize),
    /// An identifier replaced by another one of the file (or a name from
    /// [`NAMES`]).
    ReplaceIdent(usize, usize),
    /// A number (or any token) replaced by one of [`EXTREMES`].
    ExtremeNumber(usize, usize),
    ReplaceOperator(usize, usize),
    /// `der(` before token `at`, `)` after the `len`-th token from it.
    WrapDer {
        at: usize,
        len: usize,
    },
    DuplicateStatement(usize),
    DeleteStatement(usize),
    /// The value of a `start`, `fixed`, `min`, `max` or `nominal`
    /// modifier or of a parameter's binding replaced by one of [`VALUES`].
    SetValue(usize, usize),
    /// A `when … then reinit(…); end when;` after an `equation` keyword.
    InsertWhen {
        cond: usize,
        var: usize,
        value: usize,
    },
    /// Token `at` nested `depth` times in one of [`NESTINGS`].
    Nest {
        at: usize,
        kind: usize,
        depth: usize,
    },
    DeleteChar(usize),
    InsertText(usize, usize),
}

/// Names an identifier may become besides the file's own.
const NAMES: &[&str] = &[
    "time", "der", "sin", "atan2", "sum", "N", "end", "'a\\nb'", "'x,y'", "'q\"'", "_",
];

/// Numbers a number may become: zeros, the ends of the `f64` range,
/// `0/0`, `1/0`, literals beyond `i64`, and integers far beyond any
/// memory for array sizes and loop bounds (moderately large ones, which
/// only take long, are left out).
const EXTREMES: &[&str] = &[
    "0",
    "-0",
    "0.0",
    "1e308",
    "-1e308",
    "1e-308",
    "4.9e-324",
    "1e400",
    "(0/0)",
    "(1/0)",
    "-1",
    "2",
    "9223372036854775807",
    "-9223372036854775807",
    "99999999999999999999",
    "2147483648",
    "4294967297",
    "1000000000000",
];

/// Operators an operator may become.
const OPERATORS: &[&str] = &[
    "+", "-", "*", "/", "^", "<", "<=", ">", ">=", "==", "<>", "=", "and", "or", "not", ".*", ":",
    ",",
];

/// Values of modifiers and parameter bindings.
const VALUES: &[&str] = &[
    "true",
    "false",
    "0",
    "-1",
    "1e308",
    "-1e308",
    "1e-308",
    "(0/0)",
    "(1/0)",
    "2",
    "1000000000000",
    "{1, 2}",
    "time",
    "x",
    "-9223372036854775807",
];

/// Conditions of inserted `when` clauses (`{v}`: an identifier of the file).
const CONDITIONS: &[&str] = &[
    "time > 0.001",
    "time >= 0",
    "{v} < 0",
    "{v} > 1e-300",
    "sin(1e6*time) > 0",
    "true",
    "time > -1",
    "{v} <> {v}",
    "{v} > 0 and time > 0.01",
    "{v} > 0 or {v} < 0",
];

/// Values of inserted `reinit`s.
const REINITS: &[&str] = &[
    "-{v}", "0", "2*{v}", "(0/0)", "1e308", "{v} + 1", "-0.5*{v}",
];

/// Nestings: prefix and suffix repeated around a token.
const NESTINGS: &[(&str, &str)] = &[
    ("(", ")"),
    ("-(", ")"),
    ("der(", ")"),
    ("sin(", ")"),
    ("(if true then ", " else 0)"),
    ("{", "}"),
    ("(1 + ", ")"),
];

/// Nesting depths.
const DEPTHS: &[usize] = &[2, 40, 1000, 20_000];

/// Text inserted at a character position.
const FRAGMENTS: &[&str] = &[
    "'",
    "\"",
    "/*",
    "*/",
    "{",
    "}",
    "(",
    ")",
    ";",
    "\n",
    "\u{0}",
    "é",
    " end ",
    " equation ",
    "[",
    "]",
    "..",
    ":",
    "=",
    "der",
    "'a\\nb'",
    "[1]",
    "[0]",
    ".",
    "e",
    "-",
];

/// The tokens of `text` as byte ranges (comments are not tokens).
fn tokens(text: &str) -> Vec<(usize, Tok, usize)> {
    lex(FileId(0), text).0
}

fn replace(text: &str, start: usize, end: usize, with: &str) -> String {
    let mut s = String::with_capacity(text.len() + with.len());
    s.push_str(&text[..start]);
    s.push_str(with);
    s.push_str(&text[end..]);
    s
}

fn pick<T: Copy>(items: &[T], i: usize) -> Option<T> {
    (!items.is_empty()).then(|| items[i % items.len()])
}

fn is_operator(t: &Tok) -> bool {
    use Tok::*;
    matches!(
        t,
        Plus | Minus
            | Star
            | Slash
            | Caret
            | DotPlus
            | DotMinus
            | DotStar
            | DotSlash
            | DotCaret
            | Assign
            | EqEq
            | Ne
            | Lt
            | Le
            | Gt
            | Ge
            | And
            | Or
            | Not
            | Colon
            | Comma
    )
}

/// The identifiers of `text` (their source text).
fn identifiers<'a>(text: &'a str, toks: &[(usize, Tok, usize)]) -> Vec<&'a str> {
    toks.iter()
        .filter(|t| matches!(t.1, Tok::Ident(_)))
        .map(|&(s, _, e)| &text[s..e])
        .collect()
}

/// The byte ranges of the statements of `text`: from the end of one `;`
/// to the end of the next.
fn statements(toks: &[(usize, Tok, usize)]) -> Vec<(usize, usize)> {
    let ends: Vec<usize> = toks
        .iter()
        .filter(|t| t.1 == Tok::Semi)
        .map(|t| t.2)
        .collect();
    ends.windows(2).map(|w| (w[0], w[1])).collect()
}

/// The byte range of the value after token `eq` (an `=`): up to a `,`,
/// `)`, `;` or string at the same nesting depth.
fn value_after(toks: &[(usize, Tok, usize)], eq: usize) -> Option<(usize, usize)> {
    let first = toks.get(eq + 1)?;
    let mut depth = 0i32;
    let mut end = first.2;
    for t in &toks[eq + 1..] {
        match t.1 {
            Tok::LParen | Tok::LBrace | Tok::LBracket => depth += 1,
            Tok::RParen | Tok::RBrace | Tok::RBracket if depth == 0 => break,
            Tok::RParen | Tok::RBrace | Tok::RBracket => depth -= 1,
            Tok::Comma | Tok::Semi | Tok::Str(_) if depth == 0 => break,
            _ => {}
        }
        end = t.2;
    }
    Some((first.0, end))
}

/// The `=` tokens whose value [`Mutation::SetValue`] may change: those of
/// `start`, `fixed`, `min`, `max`, `nominal` modifiers and the first
/// at depth 0 of a `parameter` or `constant` declaration.
fn value_sites(toks: &[(usize, Tok, usize)]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut in_param = false;
    let mut depth = 0i32;
    for (i, t) in toks.iter().enumerate() {
        match &t.1 {
            Tok::Parameter | Tok::Constant => in_param = true,
            Tok::Semi => in_param = false,
            Tok::LParen => depth += 1,
            Tok::RParen => depth -= 1,
            Tok::Assign => {
                let modifier = i > 0
                    && matches!(&toks[i - 1].1, Tok::Ident(n)
                        if ["start", "fixed", "min", "max", "nominal"].contains(&n.as_str()));
                if modifier || (in_param && depth == 0) {
                    out.push(i);
                }
                if in_param && depth == 0 {
                    in_param = false;
                }
            }
            _ => {}
        }
    }
    out
}

/// `text` with `m` applied (unchanged where `m` finds nothing to change).
fn mutate(text: &str, m: &Mutation) -> String {
    let toks = tokens(text);
    let tok = |i: usize| toks.get(i % toks.len().max(1)).cloned();
    let fill = |s: &str, v: &str| s.replace("{v}", v);
    match *m {
        Mutation::DeleteToken(i) => match tok(i) {
            Some((s, _, e)) => replace(text, s, e, " "),
            None => text.to_string(),
        },
        Mutation::DuplicateToken(i) => match tok(i) {
            Some((s, _, e)) => replace(text, e, e, &format!(" {}", &text[s..e])),
            None => text.to_string(),
        },
        Mutation::SwapTokens(i, j) => match (tok(i), tok(j)) {
            (Some(a), Some(b)) if a.0 != b.0 => {
                let (a, b) = if a.0 < b.0 { (a, b) } else { (b, a) };
                let mut s = String::new();
                s.push_str(&text[..a.0]);
                s.push_str(&text[b.0..b.2]);
                s.push_str(&text[a.2..b.0]);
                s.push_str(&text[a.0..a.2]);
                s.push_str(&text[b.2..]);
                s
            }
            _ => text.to_string(),
        },
        Mutation::ReplaceIdent(i, j) => {
            let sites: Vec<_> = toks
                .iter()
                .filter(|t| matches!(t.1, Tok::Ident(_)))
                .collect();
            let mut names = identifiers(text, &toks);
            names.extend_from_slice(NAMES);
            match (pick(&sites, i), pick(&names, j)) {
                (Some(&(s, _, e)), Some(n)) => replace(text, s, e, n),
                _ => text.to_string(),
            }
        }
        Mutation::ExtremeNumber(i, j) => {
            let numbers: Vec<_> = toks
                .iter()
                .filter(|t| matches!(t.1, Tok::Int(_) | Tok::Real(_)))
                .collect();
            let site = pick(&numbers, i).cloned().or_else(|| tok(i));
            match site {
                Some((s, _, e)) => replace(text, s, e, EXTREMES[j % EXTREMES.len()]),
                None => text.to_string(),
            }
        }
        Mutation::ReplaceOperator(i, j) => {
            let ops: Vec<_> = toks.iter().filter(|t| is_operator(&t.1)).collect();
            match pick(&ops, i) {
                Some(&(s, _, e)) => {
                    replace(text, s, e, &format!(" {} ", OPERATORS[j % OPERATORS.len()]))
                }
                None => text.to_string(),
            }
        }
        Mutation::WrapDer { at, len } => match tok(at) {
            Some((s, _, _)) => {
                let last = (at % toks.len() + len % 4).min(toks.len() - 1);
                let e = toks[last].2;
                let wrapped = format!("der({})", &text[s..e]);
                replace(text, s, e, &wrapped)
            }
            None => text.to_string(),
        },
        Mutation::DuplicateStatement(i) => match pick(&statements(&toks), i) {
            Some((s, e)) => replace(text, e, e, &text[s..e]),
            None => text.to_string(),
        },
        Mutation::DeleteStatement(i) => match pick(&statements(&toks), i) {
            Some((s, e)) => replace(text, s, e, ""),
            None => text.to_string(),
        },
        Mutation::SetValue(i, j) => {
            match pick(&value_sites(&toks), i).and_then(|eq| value_after(&toks, eq)) {
                Some((s, e)) => replace(text, s, e, VALUES[j % VALUES.len()]),
                None => text.to_string(),
            }
        }
        Mutation::InsertWhen { cond, var, value } => {
            let names = identifiers(text, &toks);
            let v = pick(&names, var).unwrap_or("x");
            let at = toks
                .iter()
                .filter(|t| t.1 == Tok::Equation)
                .map(|t| t.2)
                .next_back();
            match at {
                Some(at) => {
                    let clause = format!(
                        "\n  when {} then reinit({v}, {}); end when;",
                        fill(CONDITIONS[cond % CONDITIONS.len()], v),
                        fill(REINITS[value % REINITS.len()], v)
                    );
                    replace(text, at, at, &clause)
                }
                None => text.to_string(),
            }
        }
        Mutation::Nest { at, kind, depth } => match tok(at) {
            Some((s, _, e)) => {
                let (pre, post) = NESTINGS[kind % NESTINGS.len()];
                let d = DEPTHS[depth % DEPTHS.len()];
                let nested = format!("{}{}{}", pre.repeat(d), &text[s..e], post.repeat(d));
                replace(text, s, e, &nested)
            }
            None => text.to_string(),
        },
        Mutation::DeleteChar(i) => match char_range(text, i) {
            Some((s, e)) => replace(text, s, e, ""),
            None => text.to_string(),
        },
        Mutation::InsertText(i, j) => {
            let at = char_range(text, i).map_or(0, |r| r.0);
            replace(text, at, at, FRAGMENTS[j % FRAGMENTS.len()])
        }
    }
}

/// The byte range of character `i` (modulo their number) of `text`.
fn char_range(text: &str, i: usize) -> Option<(usize, usize)> {
    let n = text.chars().count();
    let (s, c) = text.char_indices().nth(i % n.max(1))?;
    Some((s, s + c.len_utf8()))
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let i = || 0usize..1_000_000;
    prop_oneof![
        i().prop_map(Mutation::DeleteToken),
        i().prop_map(Mutation::DuplicateToken),
        (i(), i()).prop_map(|(a, b)| Mutation::SwapTokens(a, b)),
        (i(), i()).prop_map(|(a, b)| Mutation::ReplaceIdent(a, b)),
        (i(), i()).prop_map(|(a, b)| Mutation::ExtremeNumber(a, b)),
        (i(), i()).prop_map(|(a, b)| Mutation::ReplaceOperator(a, b)),
        (i(), 0usize..4).prop_map(|(at, len)| Mutation::WrapDer { at, len }),
        i().prop_map(Mutation::DuplicateStatement),
        i().prop_map(Mutation::DeleteStatement),
        (i(), i()).prop_map(|(a, b)| Mutation::SetValue(a, b)),
        (i(), i(), i()).prop_map(|(cond, var, value)| Mutation::InsertWhen { cond, var, value }),
        (i(), i(), i()).prop_map(|(at, kind, depth)| Mutation::Nest { at, kind, depth }),
        i().prop_map(Mutation::DeleteChar),
        (i(), i()).prop_map(|(a, b)| Mutation::InsertText(a, b)),
    ]
}

/// A model of the corpus with 1–4 mutations.
fn mutant() -> impl Strategy<Value = (usize, Vec<Mutation>)> {
    (
        0..corpus().len(),
        proptest::collection::vec(mutation(), 1..=4),
    )
}

/// The mutant: a first line naming the model and the mutations, then the
/// mutated text.
fn mutated(model: usize, mutations: &[Mutation]) -> String {
    let m = &corpus()[model];
    let text = mutations
        .iter()
        .fold(m.text.clone(), |text, mutation| mutate(&text, mutation));
    format!("// {}: {mutations:?}\n{text}", m.path)
}

/// The settings of a run: `DAEC_FUZZ_CASES` cases (else `CASES`) from the
/// seed `DAEC_FUZZ_SEED` (else `SEED`); failures are kept in
/// `tests/fuzz_regressions/` by hand, not in proptest's files.
fn config() -> Config {
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u64>().ok());
    Config {
        cases: env("DAEC_FUZZ_CASES").map_or(CASES, |c| c as u32),
        rng_seed: RngSeed::Fixed(env("DAEC_FUZZ_SEED").unwrap_or(SEED)),
        failure_persistence: None,
        // (a shrink step that hangs costs a deadline)
        max_shrink_iters: 200,
        max_shrink_time: 300_000,
        ..Config::default()
    }
}

/// Where the case that is running is kept (and a failing one written).
fn scratch() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fuzz_models");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `daec ARGS` (with `{model}` standing for a file holding `text`)
/// on a thread with a deadline and checks the outcome: no panic, no hang,
/// an exit code in 0..=3 and a diagnostic with every nonzero one. Returns
/// the run.
fn check_run(test: &str, text: &str, args: &[&str]) -> Result<common::Run, TestCaseError> {
    let dir = scratch();
    let model = dir.join(format!("running-{test}.dae"));
    let args: Vec<String> = args
        .iter()
        .map(|a| a.replace("{model}", model.to_str().unwrap()))
        .collect();
    let command = format!("daec {}", args.join(" "));
    std::fs::write(&model, format!("// {command}\n{text}")).unwrap();
    let (send, receive) = mpsc::channel();
    let worker_args = args.clone();
    std::thread::Builder::new()
        .name(format!("fuzz-{test}"))
        .spawn(move || {
            let argv: Vec<&str> = worker_args.iter().map(String::as_str).collect();
            let _ = send.send(common::daec(&argv));
        })
        .unwrap();
    let failure = |what: String| {
        let kept = dir.join(format!("failed-{test}.dae"));
        let _ = std::fs::write(&kept, format!("// {command}\n{text}"));
        TestCaseError::fail(format!(
            "{what}\ncommand: {command}\nmodel (kept in {}):\n{text}",
            kept.display()
        ))
    };
    let run = match receive.recv_timeout(DEADLINE) {
        Ok(run) => run,
        Err(_) => return Err(failure(format!("no result within {DEADLINE:?}"))),
    };
    if run.code == 101 {
        return Err(failure(format!("daec panicked\n{}", run.stderr)));
    }
    if !(0..=3).contains(&run.code) {
        return Err(failure(format!("exit code {}\n{}", run.code, run.stderr)));
    }
    if run.code != 0 && !run.stderr.contains("error") {
        return Err(failure(format!(
            "exit code {} without an error message; stderr:\n{}",
            run.code, run.stderr
        )));
    }
    Ok(run)
}

const FORMS: &[&str] = &["ste", "ada", "hic", "dd", "ggl", "di1", "index3"];

proptest! {
    #![proptest_config(config())]

    #[test]
    fn mutants_flatten((model, muts) in mutant(), json in any::<bool>()) {
        let text = mutated(model, &muts);
        let mut args = vec!["flatten", "{model}"];
        if json {
            args.extend(["--format", "json"]);
        }
        check_run("flatten", &text, &args)?;
    }

    #[test]
    fn mutants_analyze((model, muts) in mutant(), json in any::<bool>()) {
        let text = mutated(model, &muts);
        let mut args = vec!["analyze", "{model}"];
        if json {
            args.extend(["--format", "json"]);
        }
        check_run("analyze", &text, &args)?;
    }

    #[test]
    fn mutants_regularize((model, muts) in mutant(), form in 0..FORMS.len(), emit in 0usize..4) {
        let text = mutated(model, &muts);
        let emit = ["text", "json", "modelica", "rust"][emit];
        check_run("regularize", &text, &["regularize", "{model}", "--form", FORMS[form], "--emit", emit])?;
    }

    #[test]
    fn mutants_simulate(
        (model, muts) in mutant(),
        form in 0..FORMS.len() + 3,
        method in 0usize..9,
        t_end in 0usize..4,
    ) {
        let text = mutated(model, &muts);
        let mut args = vec!["simulate", "{model}", "--t-end", ["0.001", "0.1", "1", "10"][t_end]];
        args.extend(SIM_LIMITS);
        // (the default form thrice as often)
        if let Some(f) = FORMS.get(form) {
            args.extend(["--form", f]);
        }
        // (radau5 thrice as often)
        let methods = ["herk", "radau-2nd", "radau5-projected", "bdf-2nd", "gauss-2nd", "glm-2nd"];
        if let Some(m) = methods.get(method) {
            args.extend(["--method", m]);
        }
        check_run("simulate", &text, &args)?;
    }
}

/// The parameters a model declares: name and type name.
fn parameters(text: &str) -> Vec<(String, String)> {
    let toks = tokens(text);
    let mut out = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        if t.1 != Tok::Parameter {
            continue;
        }
        let mut idents = toks[i + 1..].iter().filter_map(|t| match &t.1 {
            Tok::Ident(n) => Some(n.clone()),
            _ => None,
        });
        if let (Some(ty), Some(name)) = (idents.next(), idents.next()) {
            out.push((name, ty));
        }
    }
    out
}

/// Values of `-p` by parameter type (sizes either small or far beyond
/// any memory).
fn override_value(ty: &str, i: usize) -> &'static str {
    let values: &[&str] = match ty {
        "Integer" => &["0", "1", "2", "3", "7", "40", "-1", "1000000000000"],
        "Boolean" => &["true", "false"],
        _ => &[
            "0", "-1", "1e-300", "1e300", "2", "0.5", "-1e-10", "1e20", "7",
        ],
    };
    values[i % values.len()]
}

/// Options of the numeric fuzzing: each `(flag, values)`.
const NUMERIC_OPTIONS: &[(&str, &[&str])] = &[
    ("--rtol", &["1e-14", "1e-1", "1e-300", "0.9"]),
    ("--atol", &["1e-14", "1", "1e-300"]),
    (
        "--t-end",
        &["1e-300", "1e-12", "1", "1e6", "1e300", "-1", "0"],
    ),
    ("--interval", &["1e-300", "1e-3", "1e9", "0.3"]),
    ("--max-step", &["1e-300", "1e-3", "1e300"]),
    ("--points", &["1", "2", "3"]),
];

proptest! {
    #![proptest_config(config())]

    #[test]
    fn numeric_options_simulate(
        model in 0..corpus().len(),
        overrides in proptest::collection::vec((0usize..100, 0usize..100), 0..3),
        options in proptest::collection::vec((0..NUMERIC_OPTIONS.len(), 0usize..100), 0..4),
        form in 0..FORMS.len() + 3,
    ) {
        let m = &corpus()[model];
        let params = parameters(&m.text);
        let mut owned: Vec<String> = vec!["simulate".into(), "{model}".into()];
        for (p, v) in overrides {
            if let Some((name, ty)) = params.get(p % params.len().max(1)) {
                owned.push("-p".into());
                owned.push(format!("{name}={}", override_value(ty, v)));
            }
        }
        let mut given = Vec::new();
        for (o, v) in options {
            let (flag, values) = NUMERIC_OPTIONS[o];
            if given.contains(&flag) {
                continue;
            }
            given.push(flag);
            if flag == "--points" {
                owned.extend(["--grid".into(), "log".into()]);
            }
            owned.extend([flag.to_string(), values[v % values.len()].to_string()]);
        }
        if let Some(f) = FORMS.get(form) {
            owned.extend(["--form".into(), f.to_string()]);
        }
        owned.extend(SIM_LIMITS.iter().map(|s| s.to_string()));
        let args: Vec<&str> = owned.iter().map(String::as_str).collect();
        check_run("numeric", &m.text, &args)?;
    }
}

/// A run a regression file asks for: its arguments (after the model),
/// the exit code and fragments of stderr expected.
struct Expected {
    args: Vec<String>,
    code: Option<i32>,
    stderr: Vec<String>,
}

/// The `// run: ARGS`, `// exit: N` and `// stderr: TEXT` lines of a
/// regression file (`exit` and `stderr` belong to the `run` before them).
fn expected_runs(text: &str) -> Vec<Expected> {
    let mut out: Vec<Expected> = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(args) = line.strip_prefix("// run:") {
            out.push(Expected {
                args: args.split_whitespace().map(str::to_string).collect(),
                code: None,
                stderr: Vec::new(),
            });
        } else if let (Some(code), Some(last)) = (line.strip_prefix("// exit:"), out.last_mut()) {
            last.code = Some(code.trim().parse().unwrap());
        } else if let (Some(frag), Some(last)) = (line.strip_prefix("// stderr:"), out.last_mut()) {
            last.stderr.push(frag.trim().to_string());
        }
    }
    out
}

/// Every model under `tests/fuzz_regressions/` (each once a defect the
/// harness found) runs through every command without a panic or hang,
/// and its `// run:` lines give the exit codes and messages they name.
#[test]
fn fuzz_regressions_run_cleanly() {
    let dir = common::root().join("tests/fuzz_regressions");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "dae"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let mut runs: Vec<Vec<String>> = [
            &["flatten"][..],
            &["analyze", "--format", "json"],
            &["regularize", "--form", "hic"],
            &["simulate", "--t-end", "1"],
        ]
        .iter()
        .map(|a| a.iter().map(|s| s.to_string()).collect())
        .collect();
        let expected = expected_runs(&text);
        assert!(!expected.is_empty(), "{name} has no `// run:` line");
        runs.extend(expected.iter().map(|e| e.args.clone()));
        for (k, run) in runs.iter().enumerate() {
            let mut args = vec![run[0].as_str(), "{model}"];
            args.extend(run[1..].iter().map(String::as_str));
            // (the `// run:` lines say their limits themselves)
            if run[0] == "simulate" && k < 4 {
                args.extend(SIM_LIMITS);
            }
            let r = check_run("regression", &text, &args).unwrap_or_else(|e| panic!("{name}: {e}"));
            let Some(e) = k.checked_sub(4).map(|i| &expected[i]) else {
                continue;
            };
            if let Some(code) = e.code {
                assert_eq!(r.code, code, "{name}: {args:?}\n{}", r.stderr);
            }
            for frag in &e.stderr {
                assert!(
                    r.stderr.contains(frag.as_str()),
                    "{name}: {args:?}: no `{frag}` in\n{}",
                    r.stderr
                );
            }
        }
    }
}
