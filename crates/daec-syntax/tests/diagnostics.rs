//! Rendered diagnostics of broken models, pinned as insta snapshots
//! (`snapshots/syntax__*.snap`).

use daec_diag::SourceMap;
use daec_syntax::parse;

/// Parses `source` as `name` and renders every diagnostic, without colour.
fn render(name: &str, source: &str) -> String {
    let mut map = SourceMap::new();
    let file = map.add(name, source);
    let parsed = parse(file, source);
    map.render(&parsed.diagnostics, false)
}

#[path = "../../../tests/common/snapshot.rs"]
mod snapshot;

macro_rules! snapshot {
    ($name:literal, $source:expr) => {
        assert_workspace_snapshot!($name, render("model.dae", $source))
    };
}

#[test]
fn missing_semicolons() {
    snapshot!(
        "syntax__missing_semicolons",
        "model M\n  Real x\n  Real y;\nequation\n  der(x) = -x\n  y = 2 * x;\nend M;\n"
    );
}

#[test]
fn end_name_mismatch() {
    snapshot!(
        "syntax__end_name_mismatch",
        "model Pendulum\n  Real x;\nequation\n  x = 1;\nend Pendulm;\n"
    );
}

#[test]
fn unexpected_token_in_expression() {
    snapshot!(
        "syntax__unexpected_token_in_expression",
        "model M\n  Real x;\nequation\n  x = 2 * * 3;\n  x = (1 + 2;\nend M;\n"
    );
}

#[test]
fn unterminated_comment_and_string() {
    snapshot!(
        "syntax__unterminated_string",
        "model M\n  Real x \"position;\nequation\n  x = 1;\nend M;\n"
    );
    snapshot!(
        "syntax__unterminated_block_comment",
        "model M\n  Real x;\nequation\n  x = 1; /* never closed\nend M;\n"
    );
}

#[test]
fn invalid_characters() {
    snapshot!(
        "syntax__invalid_characters",
        "model M\n  Real x;\nequation\n  x = 2 $ 3;\n  x = y @@ z;\nend M;\n"
    );
}

#[test]
fn unsupported_constructs() {
    snapshot!(
        "syntax__unsupported_constructs",
        "model M\n  extends Base;\n  flow Real i;\nalgorithm\n  i := 1;\nequation\n  x := 2;\n  while x < 1 loop end while;\nend M;\n"
    );
}

#[test]
fn unexpected_end_of_file() {
    snapshot!(
        "syntax__unexpected_eof",
        "model M \"unfinished\"\n  Real x;\nequation\n  der(x) = -x;\n"
    );
}

#[test]
fn declaration_after_equations_and_double_equals() {
    snapshot!(
        "syntax__declaration_after_equations",
        "model M\n  Real x;\nequation\n  x == 1;\n  parameter Real k = 2;\nend M;\n"
    );
}

#[test]
fn chained_power_and_text_after_model() {
    snapshot!(
        "syntax__chained_power_and_trailing",
        "model M\n  Real x;\nequation\n  x = 2^3^2;\nend M;\nmodel N end N;\n"
    );
}

#[test]
fn many_errors_in_one_file() {
    snapshot!(
        "syntax__many_errors",
        "model M\n  Real x(start = );\n  Real y;\nequation\n  der(x) = -x\n  y = 2 * * x;\n  for i in 1:3 loop\n    y[i] = ;\n  end for;\nend M;\n"
    );
}
