//! Lowering on models written for the test: the order parameters are
//! evaluated in, the attributes of parameters, the `experiment`
//! annotation, the limits on a model's size, and flat text that reads
//! back as the same model (quoted identifiers included).

use daec_diag::{Diagnostic, SourceMap, codes};
use daec_model::{Dae, LowerOptions, MemoryBudget, lower, to_dae_text};

/// Parses and lowers `source` (named `m.dae` in the rendered diagnostics).
fn lower_text(source: &str, options: &LowerOptions) -> (Option<Dae>, Vec<Diagnostic>, String) {
    let mut map = SourceMap::new();
    let file = map.add("m.dae", source);
    let parsed = daec_syntax::parse(file, map.source(file));
    assert!(
        !parsed.has_errors(),
        "{}",
        map.render(&parsed.diagnostics, false)
    );
    let model = parsed.model.expect("a model");
    let (dae, diags) = lower(&model, options);
    let rendered = map.render(&diags, false);
    (dae, diags, rendered)
}

fn lowered(source: &str) -> Dae {
    let (dae, _, rendered) = lower_text(source, &LowerOptions::default());
    dae.unwrap_or_else(|| panic!("lowering failed:\n{rendered}"))
}

fn errors(source: &str, options: &LowerOptions) -> (Vec<Diagnostic>, String) {
    let (dae, diags, rendered) = lower_text(source, options);
    assert!(dae.is_none(), "lowering succeeded");
    (diags, rendered)
}

/// A model with the alias chain `p0 = 1`, `p_k = p_(k-1) + 1` of length
/// `n`, declared in dependency order or in reverse.
fn chain(n: usize, reverse: bool) -> String {
    let mut decls: Vec<String> = vec!["  parameter Real p0 = 1;\n".into()];
    decls.extend((1..=n).map(|k| format!("  parameter Real p{k} = p{} + 1;\n", k - 1)));
    if reverse {
        decls.reverse();
    }
    format!(
        "model Chain\n{}  Real x(start = 0);\nequation\n  der(x) = p{n};\nend Chain;\n",
        decls.concat()
    )
}

fn value(dae: &Dae, name: &str) -> f64 {
    dae.parameters
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("no parameter {name}"))
        .value
}

#[test]
fn long_parameter_chains_evaluate_in_either_order() {
    let n = 100_000;
    for reverse in [false, true] {
        let dae = lowered(&chain(n, reverse));
        assert_eq!(dae.parameters.len(), n + 1);
        assert_eq!(value(&dae, "p0"), 1.0);
        assert_eq!(value(&dae, "p50000"), 50_001.0);
        assert_eq!(value(&dae, &format!("p{n}")), (n + 1) as f64);
        // Dependencies first, whatever the declaration order.
        assert_eq!(dae.parameters[0].name, "p0");
    }
}

#[test]
fn integer_chains_size_arrays_in_reverse_order() {
    let n = 30_000;
    let mut src = String::from("model C\n  Real x[m0](each start = 0);\n");
    for k in (1..=n).rev() {
        src.push_str(&format!("  parameter Integer m{} = m{k};\n", k - 1));
    }
    src.push_str(&format!(
        "  parameter Integer m{n} = 3;\nequation\n  der(x) = -x;\nend C;\n"
    ));
    let dae = lowered(&src);
    assert_eq!(dae.unknowns.len(), 3);
    assert_eq!(value(&dae, "m0"), 3.0);
}

#[test]
fn a_cycle_at_the_end_of_a_long_chain_is_reported_with_its_members() {
    let mut src = String::from("model C\n");
    for k in (1..=30_000).rev() {
        src.push_str(&format!("  parameter Real q{k} = q{} * 2;\n", k - 1));
    }
    src.push_str(
        "  parameter Real q0 = a;\n  parameter Real a = b + 1;\n  parameter Real b = a;\n",
    );
    src.push_str("  Real x;\nequation\n  x = q30000;\nend C;\n");
    let (diags, rendered) = errors(&src, &LowerOptions::default());
    let cycles: Vec<&Diagnostic> = diags
        .iter()
        .filter(|d| d.code == codes::PARAMETER_CYCLE)
        .collect();
    assert_eq!(cycles.len(), 1, "{rendered}");
    assert_eq!(
        cycles[0].message,
        "parameter values depend on each other in a cycle: `a` → `b` → `a`"
    );
    assert_eq!(diags.len(), 1, "only the cycle is reported:\n{rendered}");
}

#[test]
fn a_branch_not_taken_does_not_make_a_cycle() {
    let dae = lowered(
        "model B\n  parameter Integer a = if false then b else 2;\n  parameter Integer b = a + 1;\n  Real x;\nequation\n  x = b;\nend B;\n",
    );
    assert_eq!(value(&dae, "a"), 2.0);
    assert_eq!(value(&dae, "b"), 3.0);
}

#[test]
fn parameter_attributes_are_kept_and_printed_back() {
    let src = r#"model P
  parameter Real m(unit = "kg", displayUnit = "g", quantity = "Mass", min = 0, max = 10, nominal = 2, start = 1, fixed = true) = 1 "mass";
  parameter Real k[2](each min = -1, unit = "N/m") = {1, 2};
  Real x(start = 1, displayUnit = "mm", quantity = "Length");
equation
  der(x) = -k[1] * x / m;
end P;
"#;
    let dae = lowered(src);
    let m = &dae.parameters[0];
    assert_eq!(
        (m.min, m.max, m.nominal, m.start, m.fixed),
        (Some(0.0), Some(10.0), Some(2.0), Some(1.0), Some(true))
    );
    assert_eq!(m.display_unit.as_deref(), Some("g"));
    assert_eq!(m.quantity.as_deref(), Some("Mass"));
    assert_eq!(dae.unknowns[0].display_unit(), Some("mm"));
    let text = to_dae_text(&dae);
    assert!(
        text.contains(
            r#"  parameter Real m(start = 1.0, fixed = true, nominal = 2.0, min = 0.0, max = 10.0, unit = "kg", displayUnit = "g", quantity = "Mass") = 1.0 "mass";"#
        ),
        "{text}"
    );
    assert!(
        text.contains(r#"  parameter Real k[2](each min = -1.0, each unit = "N/m") = {1.0, 2.0};"#),
        "{text}"
    );
    assert!(
        text.contains(r#"  Real x(start = 1.0, displayUnit = "mm", quantity = "Length");"#),
        "{text}"
    );
    let again = lowered(&text);
    assert_eq!(to_dae_text(&again), text);
    assert_eq!(again.parameters, dae.parameters);
}

#[test]
fn a_parameter_outside_its_bounds_is_warned_about() {
    let (dae, diags, rendered) = lower_text(
        "model P\n  parameter Real m(min = 0) = -1;\n  Real x;\nequation\n  x = m;\nend P;\n",
        &LowerOptions::default(),
    );
    assert!(dae.is_some());
    assert_eq!(diags.len(), 1);
    assert_eq!(diags[0].code, codes::BOUNDS);
    assert!(
        rendered.contains("the value -1 of `m` violates min = 0"),
        "{rendered}"
    );
    assert!(rendered.contains("m.dae:2:3"), "{rendered}");
}

#[test]
fn unknown_parameter_attributes_are_errors() {
    let (diags, rendered) = errors(
        "model P\n  parameter Real m(mni = 0) = 1;\n  Real x;\nequation\n  x = m;\nend P;\n",
        &LowerOptions::default(),
    );
    assert_eq!(diags[0].code, codes::MODIFIER);
    assert!(rendered.contains("unknown attribute `mni`"), "{rendered}");
    assert!(rendered.contains("did you mean `min`?"), "{rendered}");
}

#[test]
fn an_array_too_large_for_the_limits_is_refused_before_it_is_built() {
    let (diags, rendered) = errors(
        "model H\n  Real x[3000000000](each start = 0);\nequation\n  der(x) = -x;\nend H;\n",
        &LowerOptions::default(),
    );
    assert_eq!(diags.len(), 1, "{rendered}");
    assert_eq!(diags[0].code, codes::TOO_LARGE);
    assert_eq!(
        diags[0].message,
        "the model is too large: it has 3000000000 scalar unknowns"
    );
    assert!(rendered.contains("m.dae:2:3"), "{rendered}");
    assert!(
        rendered.contains("`x` declared here has 3000000000 elements"),
        "{rendered}"
    );
    assert!(
        rendered.contains("daec expands at most 50000000 scalar unknowns"),
        "{rendered}"
    );
}

fn budget(available: u64) -> LowerOptions {
    LowerOptions {
        memory: Some(MemoryBudget {
            available,
            bytes_per_unknown: 1000,
        }),
        ..LowerOptions::default()
    }
}

#[test]
fn a_model_over_the_memory_budget_is_refused_with_its_size() {
    let src = "model M\n  parameter Integer N = 3000;\n  Real x[N](each start = 0);\n  Real y;\nequation\n  der(x) = -x;\n  y = 1;\nend M;\n";
    // 3001 unknowns with their equations at 1 kB: about 3 MB.
    let (diags, rendered) = errors(src, &budget(1_000_000));
    assert_eq!(diags.len(), 1, "{rendered}");
    assert_eq!(
        diags[0].message,
        "the model is too large: it has 3001 scalar unknowns"
    );
    assert!(
        rendered.contains("`x` declared here has 3000 elements"),
        "{rendered}"
    );
    assert!(
        rendered.contains("this needs about 3.0 MB of memory, more than the 1.0 MB available"),
        "{rendered}"
    );
    // The same model with a budget of 6 MB.
    assert_eq!(lowered(src).unknowns.len(), 3001);
    let (dae, _, _) = lower_text(src, &budget(6_000_000));
    assert_eq!(dae.map(|d| d.equations.len()), Some(3001));
    // An override that makes it too large is named.
    let mut options = budget(6_000_000);
    options.overrides = vec![("N".into(), 100_000.0)];
    let (_, rendered) = errors(src, &options);
    assert!(
        rendered.contains("it has 100001 scalar unknowns"),
        "{rendered}"
    );
    assert!(rendered.contains("with -p N=100000"), "{rendered}");
}

#[test]
fn equations_from_a_loop_over_the_budget_are_refused_at_the_loop() {
    let src = "model L\n  Real x;\nequation\n  for i in 1:100 loop\n    for j in 1:100 loop\n      x = i + j;\n    end for;\n  end for;\nend L;\n";
    // At most 2000 scalars of 500 bytes: the 10 000 equations do not fit.
    let (diags, rendered) = errors(src, &budget(1_000_000));
    assert_eq!(diags.len(), 1, "{rendered}");
    assert_eq!(diags[0].code, codes::TOO_LARGE);
    assert!(
        diags[0]
            .message
            .starts_with("the model is too large: expanding it gives"),
        "{rendered}"
    );
    assert!(rendered.contains("m.dae:6:7"), "{rendered}");
    assert!(
        rendered.contains("in this loop of 100 iterations"),
        "{rendered}"
    );
    assert_eq!(
        rendered.matches("in this loop of 100 iterations").count(),
        2,
        "{rendered}"
    );
    assert!(
        rendered.contains("this needs more than the 1.0 MB of memory available (estimated at 1.0 kB per scalar unknown with its equation)"),
        "{rendered}"
    );
    // A single loop longer than the budget allows is refused at its range.
    let src =
        "model L\n  Real x;\nequation\n  for i in 1:100000 loop\n    x = i;\n  end for;\nend L;\n";
    let (diags, rendered) = errors(src, &budget(1_000_000));
    assert_eq!(
        diags[0].message,
        "this range has 100000 values, more than the model can have scalars"
    );
    assert!(rendered.contains("m.dae:4:12"), "{rendered}");
}

#[test]
fn a_range_longer_than_the_limit_is_refused() {
    let src = "model L\n  Real x;\nequation\n  for i in 1:1000000000000 loop\n    x = i;\n  end for;\nend L;\n";
    let (diags, rendered) = errors(src, &LowerOptions::default());
    assert_eq!(diags.len(), 1, "{rendered}");
    assert_eq!(
        diags[0].message,
        "this range has 1000000000000 values, more than the model can have scalars"
    );
}

#[test]
fn a_matrix_product_over_the_budget_is_refused_before_it_is_built() {
    let src = "model P\n  Real A[100, 100](each start = 1);\n  Real B[100, 100];\nequation\n  der(A) = -A;\n  B = A * A;\nend P;\n";
    // 20000 unknowns fit in 25 MB; the 1 000 000 products do not.
    let (diags, rendered) = errors(src, &budget(25_000_000));
    assert_eq!(diags.len(), 1, "{rendered}");
    assert_eq!(diags[0].code, codes::TOO_LARGE);
    assert!(rendered.contains("m.dae:6:7"), "{rendered}");
}

#[test]
fn overrides_must_fit_the_parameter_type() {
    let src = "model O\n  parameter Integer N = 2;\n  parameter Boolean b = true;\n  Real x[N];\nequation\n  x = if b then {1, 2} else {0, 0};\nend O;\n";
    for (name, v, message) in [
        (
            "N",
            2.5,
            "`-p N=2.5`: `N` is an Integer parameter and needs an integer",
        ),
        (
            "b",
            2.0,
            "`-p b=2`: `b` is a Boolean parameter and needs true or false",
        ),
    ] {
        let options = LowerOptions {
            overrides: vec![(name.into(), v)],
            ..LowerOptions::default()
        };
        let (diags, rendered) = errors(src, &options);
        assert_eq!(diags[0].message, message, "{rendered}");
    }
}

fn with_experiment(args: &str) -> String {
    format!(
        "model E\n  Real x(start = 1);\nequation\n  der(x) = -x;\n  annotation(experiment({args}));\nend E;\n"
    )
}

#[test]
fn bad_experiment_settings_are_located_errors() {
    let cases = [
        (
            "Tolerance = 0",
            "`Tolerance` must be positive (it is 0)",
            "m.dae:5:37",
        ),
        (
            "Interval = -0.5",
            "`Interval` must be positive (it is -0.5)",
            "m.dae:5:36",
        ),
        (
            "StopTime = -5",
            "`StopTime` (-5) must be after `StartTime` (0)",
            "m.dae:5:36",
        ),
        (
            "StartTime = 2, StopTime = 1",
            "`StopTime` (1) must be after `StartTime` (2)",
            "m.dae:5:51",
        ),
        (
            "StopTime = 0/0",
            "`StopTime` must be a number",
            "m.dae:5:36",
        ),
        (
            "Tolerance = true",
            "`Tolerance` must be a number",
            "m.dae:5:37",
        ),
    ];
    for (args, message, at) in cases {
        let (diags, rendered) = errors(&with_experiment(args), &LowerOptions::default());
        assert_eq!(diags.len(), 1, "{args}: {rendered}");
        assert_eq!(diags[0].code, codes::MODIFIER, "{args}");
        assert_eq!(diags[0].message, message, "{args}");
        assert!(rendered.contains(at), "{args}: {rendered}");
    }
    let (_, rendered) = errors(
        &with_experiment("StartTime = 2, StopTime = 1"),
        &LowerOptions::default(),
    );
    assert!(rendered.contains("the start time"), "{rendered}");
    let dae = lowered(&with_experiment(
        "StartTime = 1, StopTime = 3, Tolerance = 1e-8, Interval = 0.5",
    ));
    assert_eq!(dae.experiment.stop_time, Some(3.0));
    assert_eq!(dae.experiment.tolerance, Some(1e-8));
}

#[test]
fn quoted_identifiers_print_back_as_the_same_model() {
    let src = r#"model 'my model'
  parameter Real 'k 1'(unit = "1/s") = 2;
  parameter Integer 'end' = 2;
  Real 'a b'['end'](each start = 1);
  Real 'it\'s';
  Real 'back\\slash';
  Real 'new\nline\r\t\a\b\f\v';
  Real 'φBIDI';
  Real '1x';
  Real model_;
equation
  der('a b') = -'k 1' * 'a b';
  'it\'s' = 'a b'[1];
  'back\\slash' = 'it\'s' + 1;
  'new\nline\r\t\a\b\f\v' = time;
  'φBIDI' = 2 * 'new\nline\r\t\a\b\f\v';
  '1x' = 'φBIDI';
  model_ = '1x';
  when 'a b'[2] < 0.5 then
    reinit('a b'[2], 1);
  end when;
end 'my model';
"#
    .replace("BIDI", "\u{202e}");
    let dae = lowered(&src);
    let names: Vec<String> = dae.unknowns.iter().map(|u| u.name().into_owned()).collect();
    assert_eq!(
        names,
        [
            "a b[1]",
            "a b[2]",
            "it's",
            "back\\slash",
            "new\nline\r\t\u{7}\u{8}\u{c}\u{b}",
            "φ\u{202e}",
            "1x",
            "model_"
        ]
    );
    let text = to_dae_text(&dae);
    assert!(text.starts_with("model 'my model'\n"), "{text}");
    assert!(
        text.contains("  Real 'a b'[2](each start = 1.0);\n"),
        "{text}"
    );
    assert!(
        text.contains("  Real 'new\\nline\\r\\t\\a\\b\\f\\v';\n"),
        "{text}"
    );
    assert!(
        text.contains("  der('a b'[1]) = -'a b'[1] * 'k 1';\n"),
        "{text}"
    );
    assert!(text.contains("    reinit('a b'[2], 1);\n"), "{text}");
    // One line per declaration and equation: no name breaks a line.
    assert_eq!(text.lines().count(), 23, "{text}");
    let again = lowered(&text);
    assert_eq!(to_dae_text(&again), text);
    let again_names: Vec<String> = again
        .unknowns
        .iter()
        .map(|u| u.name().into_owned())
        .collect();
    assert_eq!(again_names, names);
    assert_eq!(again.name, "my model");
    assert_eq!(again.parameters, dae.parameters);
}

#[test]
fn same_structure_tells_other_values_from_another_structure() {
    let text = "model M\n  parameter Integer N = 2;\n  parameter Real k = 2;\n  parameter Real x0 = 1;\n  Real x[N](each start = x0);\nequation\n  for i in 1:N loop\n    der(x[i]) = -k*x[i];\n  end for;\nend M;\n";
    let with = |overrides: &[(&str, f64)]| {
        let options = LowerOptions {
            overrides: overrides.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
            ..LowerOptions::default()
        };
        let (dae, _, rendered) = lower_text(text, &options);
        dae.unwrap_or_else(|| panic!("lowering failed:\n{rendered}"))
    };
    let base = with(&[("k", 1.0)]);
    // a Real parameter stays a leaf: only its value differs
    let other = with(&[("k", 3.0)]);
    assert_eq!(value(&other, "k"), 3.0);
    assert!(base.same_structure(&other) && other.same_structure(&base));
    // an Integer parameter sizes the array
    assert!(!base.same_structure(&with(&[("k", 1.0), ("N", 3.0)])));
    // a start value computed from a parameter leaves no node in the pool,
    // nor does a parameter the base run leaves alone
    let moved = with(&[("k", 1.0), ("x0", 3.0)]);
    assert_eq!(moved.unknowns[0].start(), Some(3.0));
    assert!(base.same_structure(&moved));
    assert!(base.same_structure(&with(&[("x0", -2.0)])));
    assert_eq!(base.pool.len(), moved.pool.len());
}

/// Negated aliases (`a = -b`, the connection of two flow variables)
/// compose with their signs: `a = -b`, `b = -c` make `a` the name of `c`
/// and `b` that of `-c`; the flat text prints them and reads back the same.
#[test]
fn negated_aliases_compose_with_their_signs() {
    let source = "model M\n  Real c(start = 1, fixed = true);\n  Real a;\n  Real b;\n\
                  equation\n  der(c) = -c;\n  a = -b annotation(__daec(alias = true));\n  \
                  b = -c annotation(__daec(alias = true));\nend M;\n";
    let dae = lowered(source);
    assert_eq!(dae.unknowns.len(), 1);
    let aliases: Vec<(&str, &str, bool)> = dae
        .aliases
        .iter()
        .map(|a| (a.name.as_str(), a.of.as_str(), a.negated))
        .collect();
    assert_eq!(aliases, [("a", "c", false), ("b", "c", true)]);
    let text = to_dae_text(&dae);
    assert!(
        text.contains("  b = -c annotation(__daec(alias = true));"),
        "{text}"
    );
    let again = lowered(&text);
    assert_eq!(again.aliases, dae.aliases);
}

/// Alias equations that make a name equal to its own negation (`a = b`
/// and `a = -b`) are no aliases: the set keeps its equations.
#[test]
fn contradictory_signs_keep_the_equations() {
    let source = "model M\n  Real a;\n  Real b;\nequation\n  \
                  a = b annotation(__daec(alias = true));\n  \
                  a = -b annotation(__daec(alias = true));\nend M;\n";
    let dae = lowered(source);
    assert!(dae.aliases.is_empty(), "{:?}", dae.aliases);
    assert_eq!(dae.unknowns.len(), 2);
    assert_eq!(dae.equations.len(), 2);
}

#[test]
fn an_array_stores_its_shared_texts_once() {
    // An unknown's inline part is its declaration (one pointer), its
    // subscripts and its numeric attributes; the data its array shares
    // (base name, type name, description, units) is one allocation per
    // array, not one per element, and its flat name is rendered on demand.
    assert!(
        std::mem::size_of::<daec_model::Unknown>() <= 48,
        "Unknown is {} bytes",
        std::mem::size_of::<daec_model::Unknown>()
    );
    let dae = lowered(
        "model C\n  parameter Integer N = 50;\n  Modelica.Units.SI.Length x[N](each start = 1, unit = \"m\", displayUnit = \"mm\", quantity = \"Length\") \"positions\";\nequation\n  for k in 1:N loop\n    der(x[k]) = -x[k] \"decay\";\n  end for;\nend C;\n",
    );
    assert_eq!(dae.unknowns.len(), 50);
    let first = &dae.unknowns[0];
    assert_eq!(first.base(), "x");
    assert_eq!(first.type_name(), "Modelica.Units.SI.Length");
    assert_eq!(first.description(), Some("positions"));
    assert_eq!(first.unit(), Some("m"));
    assert_eq!(first.display_unit(), Some("mm"));
    assert_eq!(first.quantity(), Some("Length"));
    for u in &dae.unknowns[1..] {
        assert!(
            std::sync::Arc::ptr_eq(u.decl(), first.decl()),
            "{}",
            u.name()
        );
    }
    assert_eq!(*dae.unknowns[6].subscripts(), [7]);
    assert_eq!(dae.unknowns[6].name(), "x[7]");
    assert_eq!(dae.unknowns[6].start(), Some(1.0));
    let mut u = dae.unknowns[6].clone();
    u.set_start(None);
    assert_eq!(u.start(), None);
    assert_ne!(u, dae.unknowns[6]);
    u.set_start(Some(-0.0));
    assert_eq!(u.start().map(f64::to_bits), Some((-0.0_f64).to_bits()));
    assert_eq!(dae.equations.len(), 50);
    assert_eq!(dae.equations[0].description.as_deref(), Some("decay"));
    // one interned handle, not a copy of the text per scalar equation
    for e in &dae.equations[1..] {
        assert!(e.description.is_some());
        assert_eq!(e.description, dae.equations[0].description);
    }
}

/// The start point: declared start values are kept; an unknown without
/// one takes the value an equation affine in it gives from the others, in
/// dependency order (`r` from `x`, `s = sqrt(r^2)` from `r`, `f` from
/// `s`); an unknown only a nonlinear equation (`q^2 = 4`) or an equation
/// with derivatives determines stays 0.
#[test]
fn the_start_point_solves_explicit_definitions_in_order() {
    let dae = lowered(
        "model S
  parameter Real c = 4;
  Real x(start = -2, fixed = true);
  Real v(start = 0, fixed = true);
  Real f;
  Real s;
  Real r;
  Real q;
  Real w;
equation
  der(x) = v;
  der(v) = f;
  f = -c*(s - 1);
  s = sqrt(r^2);
  r = x - 0;
  q^2 = 4 + 0*w;
  w = der(x);
end S;",
    );
    let z = dae.start_point();
    let at = |name: &str| z[dae.unknown_index(name).unwrap()];
    assert_eq!(at("x"), -2.0);
    assert_eq!(at("v"), 0.0);
    assert_eq!(at("r"), -2.0);
    assert_eq!(at("s"), 2.0);
    assert_eq!(at("f"), -4.0);
    assert_eq!(at("q"), 0.0);
    assert_eq!(at("w"), 0.0);
}

#[test]
fn an_unknown_renders_its_flat_name_from_its_declaration() {
    use daec_model::{Unknown, UnknownDecl};
    use std::sync::Arc;
    let mut x = UnknownDecl::real("x", Some("positions"));
    x.dims = vec![2, 4].into();
    // element 6 (0-based) of a 2×4 array
    let u = Unknown::new(Arc::new(x.clone()), 6);
    assert_eq!(*u.subscripts(), [2, 3]);
    assert_eq!(u.name(), "x[2,3]");
    assert_eq!(u.base(), "x");
    assert_eq!(u.description(), Some("positions"));
    assert!(u.name_is("x[2,3]"));
    assert!(!u.name_is("x[2,4]"));
    assert!(!u.name_is("x[2,3"));
    assert!(!u.name_is("x[2,3]]"));
    assert!(!u.name_is("x[02,3]"));
    assert!(!u.name_is("x[2,3,4]"));
    assert!(!u.name_is("y[2,3]"));
    assert!(!u.name_is("x"));
    x.dims = vec![9].into();
    assert_eq!(Unknown::new(Arc::new(x), 6).name(), "x[7]");
    // The unknowns of a first-order reduction: `der(der(x[4]))`, an
    // element of the declaration `der(der(x))`.
    let mut d = UnknownDecl::real("der(der(x))", None);
    d.derivative = 2;
    d.dims = vec![5].into();
    let u = Unknown::new(Arc::new(d), 3);
    assert_eq!(u.name(), "der(der(x[4]))");
    assert_eq!(u.base(), "der(der(x))");
    assert!(u.name_is("der(der(x[4]))"));
    assert!(!u.name_is("der(der(x))[4]"));
    let s = Unknown::scalar("der(y)", None);
    assert_eq!(s.name(), "der(y)");
    assert!(s.name_is("der(y)"));
    assert_eq!(s.type_name(), "Real");
}

#[test]
fn the_flat_text_is_written_line_by_line() {
    // `write_dae_text` hands the text to its writer in pieces of a line or
    // less, so that `daec flatten` of a large model never holds it whole;
    // the pieces make up `to_dae_text`.
    struct Pieces {
        text: String,
        largest: usize,
        count: usize,
    }
    impl std::fmt::Write for Pieces {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.text.push_str(s);
            self.largest = self.largest.max(s.len());
            self.count += 1;
            Ok(())
        }
    }
    let dae = lowered(
        "model C\n  parameter Integer N = 2000;\n  Real x[N](each start = 1) \"positions\";\nequation\n  for k in 1:N loop\n    der(x[k]) = -x[k] \"decay\";\n  end for;\nend C;\n",
    );
    let mut out = Pieces {
        text: String::new(),
        largest: 0,
        count: 0,
    };
    daec_model::write_dae_text(&dae, &mut out);
    assert_eq!(out.text, to_dae_text(&dae));
    assert!(out.text.len() > 50_000, "{}", out.text.len());
    assert!(out.largest < 100, "a piece of {} bytes", out.largest);
    assert!(out.count > 2000, "{} pieces", out.count);
}

#[test]
fn a_matrix_with_different_start_values_prints_them_row_by_row() {
    let src = "model M\n  Real A[2, 3](start = {{1, 2, 3}, {4, 5, 6}});\n  Real b[2](each start = 7);\nequation\n  der(A) = -A;\n  der(b) = -b;\nend M;\n";
    let (dae, diags, rendered) = lower_text(src, &LowerOptions::default());
    let dae = dae.unwrap_or_else(|| panic!("{diags:?}\n{rendered}"));
    let text = to_dae_text(&dae);
    assert!(
        text.contains("  Real A[2, 3](start = {{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});"),
        "{text}"
    );
    assert!(text.contains("  Real b[2](each start = 7.0);"), "{text}");
}

#[test]
fn an_arrays_elements_and_a_loops_equations_share_their_span() {
    let source = "model M\n  Real x[3](start = {1, 2, 3}, min = {0, -1, 0});\n  Real y(nominal = 10);\nequation\n  for k in 1:3 loop\n    der(x[k]) = -x[k];\n  end for;\n  y = x[1];\nend M;\n";
    let dae = lowered(source);
    let text = |s: &daec_diag::Span| &source[s.start as usize..s.end as usize];
    let spans = &dae.spans;
    assert_eq!(spans.unknowns.len(), 4);
    assert_eq!(spans.equations.len(), 4);
    assert_eq!(spans.unknowns.get(0), spans.unknowns.get(2));
    assert_ne!(spans.unknowns.get(2), spans.unknowns.get(3));
    assert!(text(spans.unknowns.get(3).unwrap()).contains("nominal = 10"));
    assert_eq!(spans.unknowns.get(4), None);
    assert_eq!(text(spans.equations.get(1).unwrap()), "der(x[k]) = -x[k]");
    assert_eq!(text(spans.equations.get(3).unwrap()), "y = x[1]");
    let kept = spans.equations.without(&[false, true, true, false]);
    assert_eq!(kept.len(), 2);
    let texts: Vec<&str> = kept.iter().map(text).collect();
    assert_eq!(texts, ["der(x[k]) = -x[k]", "y = x[1]"]);
    // The bounds read back per element; an unknown without them has none.
    let starts: Vec<_> = dae.unknowns.iter().map(|u| u.start()).collect();
    assert_eq!(starts, [Some(1.0), Some(2.0), Some(3.0), None]);
    let mins: Vec<_> = dae.unknowns.iter().map(|u| u.min()).collect();
    assert_eq!(mins, [Some(0.0), Some(-1.0), Some(0.0), None]);
    assert_eq!(dae.unknowns[3].nominal(), Some(10.0));
    assert_eq!(dae.unknowns[0].max(), None);
}
