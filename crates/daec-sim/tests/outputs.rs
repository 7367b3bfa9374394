//! Output equations split off a model (`daec_sim::split_outputs`): which
//! equations qualify, the renumbered model, the values computed after a
//! step.

use daec_diag::SourceMap;
use daec_model::{Dae, FlatNames, LowerOptions};
use daec_regularize::Form;
use daec_sim::split_outputs;

fn load_text(text: &str) -> Dae {
    let mut map = SourceMap::new();
    let file = map.add("m.dae", text.to_string());
    let parsed = daec_syntax::parse(file, map.source(file));
    let model = parsed.model.expect("parses");
    let (dae, diags) = daec_model::lower(&model, &LowerOptions::default());
    dae.unwrap_or_else(|| panic!("{diags:?}"))
}

/// `a` and `b` are outputs (`b` uses `a`: an output of an output); `q`
/// (nonlinear), `r` (coefficient `x`), `s` (a derivative), `w` (fixed)
/// and `x` (in a `reinit`) are not.
const MODEL: &str = "model M
  parameter Real c = 2;
  Real x(start = 1, fixed = true);
  Real a;
  Real q(start = 1);
  Real b;
  Real r;
  Real s;
  Real w(start = 2, fixed = true);
equation
  der(x) = -x;
  a = 2*x;
  q^2 = x;
  c*b = x + a;
  x*r = 1;
  s = der(x);
  w = 2*x;
  when x < 0.5 then
    reinit(x, 1 + r);
  end when;
end M;
";

fn equations(dae: &Dae) -> Vec<String> {
    dae.equations
        .iter()
        .map(|e| daec_expr::to_modelica(&dae.pool, e.residual, &FlatNames(dae)))
        .collect()
}

#[test]
fn explicit_equations_of_otherwise_unused_variables_are_split_off() {
    let mut dae = load_text(MODEL);
    let before = equations(&dae);
    let reinit =
        |dae: &Dae| daec_expr::to_modelica(&dae.pool, dae.events[0].reinits[0].1, &FlatNames(dae));
    let value = reinit(&dae);
    let mut outputs = split_outputs(&mut dae, Form::Ggl);
    assert_eq!(outputs.output_names(), ["a", "b"]);
    assert_eq!(outputs.names(), ["x", "a", "q", "b", "r", "s", "w"]);
    let names: Vec<String> = dae.unknowns.iter().map(|u| u.name().into_owned()).collect();
    assert_eq!(names, ["x", "q", "r", "s", "w"]);
    // the other equations, renumbered, read as before
    let kept: Vec<String> = [0, 2, 4, 5, 6].iter().map(|&i| before[i].clone()).collect();
    assert_eq!(equations(&dae), kept);
    assert_eq!(dae.spans.equations.len(), 5);
    assert_eq!(dae.spans.unknowns.len(), 5);
    // the event's reinit target and value follow the renumbering
    assert_eq!(dae.events[0].reinits[0].0, 0);
    assert_eq!(reinit(&dae), value);
    // a row from (x, q, r, s, w): a = 2x, b = (x + a)/c
    let row = outputs.row(0.0, &[3.0, 5.0, 7.0, 11.0, 13.0]);
    assert_eq!(row, [3.0, 6.0, 5.0, 4.5, 7.0, 11.0, 13.0]);
}

#[test]
fn other_formulations_keep_the_output_equations() {
    for form in [Form::Hic, Form::Ada, Form::Ste, Form::Dd, Form::Di1] {
        let mut dae = load_text(MODEL);
        let outputs = split_outputs(&mut dae, form);
        assert!(outputs.output_names().is_empty(), "{form:?}");
        assert_eq!(dae.unknowns.len(), 7);
        assert_eq!(outputs.names().len(), 7);
    }
}

#[test]
fn at_least_one_unknown_is_kept() {
    // x and y are both explicit and otherwise unused once the other is
    // gone: one stays.
    let mut dae = load_text(
        "model M\n  Real x;\n  Real y;\nequation\n  x = sin(time);\n  y = 2*x;\nend M;\n",
    );
    let outputs = split_outputs(&mut dae, Form::Index3);
    assert_eq!(outputs.output_names(), ["y"]);
    assert_eq!(dae.unknowns.len(), 1);
}
