//! Parser tests: the tree built for valid models (precedence, structured
//! equations, declarations, modifiers, annotations) and recovery counts.

use daec_diag::{FileId, codes};
use daec_syntax::ast::*;
use daec_syntax::{Parsed, parse};

/// The expression as a fully parenthesised S-expression.
fn sexpr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Integer(v) => v.to_string(),
        ExprKind::Real(v) => format!("{v:?}"),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::String(s) => format!("{s:?}"),
        ExprKind::Name(parts) => parts
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join("."),
        ExprKind::Index { base, indices } => {
            let idx: Vec<_> = indices.iter().map(sexpr).collect();
            format!("{}[{}]", sexpr(base), idx.join(", "))
        }
        ExprKind::Call {
            func,
            args,
            named_args,
        } => {
            let name: Vec<_> = func.iter().map(|p| p.name.as_str()).collect();
            let mut a: Vec<_> = args.iter().map(sexpr).collect();
            a.extend(
                named_args
                    .iter()
                    .map(|(n, v)| format!("{}={}", n.name, sexpr(v))),
            );
            format!("{}({})", name.join("."), a.join(", "))
        }
        ExprKind::Binary { op, lhs, rhs } => {
            format!("({} {} {})", sexpr(lhs), op.symbol(), sexpr(rhs))
        }
        ExprKind::Unary { op, expr } => {
            let o = match op {
                UnOp::Neg => "-",
                UnOp::Plus => "+",
                UnOp::Not => "not ",
            };
            format!("({o}{})", sexpr(expr))
        }
        ExprKind::If {
            branches,
            else_value,
        } => {
            let b: Vec<_> = branches
                .iter()
                .map(|(c, v)| format!("{} ? {}", sexpr(c), sexpr(v)))
                .collect();
            format!("(if {} : {})", b.join(" | "), sexpr(else_value))
        }
        ExprKind::Range { start, step, stop } => match step {
            Some(s) => format!("({}:{}:{})", sexpr(start), sexpr(s), sexpr(stop)),
            None => format!("({}:{})", sexpr(start), sexpr(stop)),
        },
        ExprKind::Array(items) => {
            let i: Vec<_> = items.iter().map(sexpr).collect();
            format!("{{{}}}", i.join(", "))
        }
        ExprKind::Matrix(rows) => {
            let r: Vec<_> = rows
                .iter()
                .map(|row| row.iter().map(sexpr).collect::<Vec<_>>().join(", "))
                .collect();
            format!("[{}]", r.join("; "))
        }
        ExprKind::Member { base, name } => {
            let n: Vec<_> = name.iter().map(|i| i.name.as_str()).collect();
            format!("{}.{}", sexpr(base), n.join("."))
        }
        ExprKind::Tuple(items) => {
            let i: Vec<_> = items.iter().map(sexpr).collect();
            format!("({})", i.join(", "))
        }
        ExprKind::Colon => ":".to_owned(),
        ExprKind::End => "end".to_owned(),
        ExprKind::Error => "<error>".to_owned(),
    }
}

fn parse_ok(src: &str) -> Model {
    let p = parse(FileId(0), src);
    assert!(
        p.diagnostics.is_empty(),
        "unexpected diagnostics: {:#?}",
        p.diagnostics
    );
    p.model.expect("a model")
}

/// The right-hand side of the single equation `x = <expr>;`.
fn expr(text: &str) -> String {
    let m = parse_ok(&format!("model M equation x = {text}; end M;"));
    match &m.sections[0].equations[0].kind {
        EquationKind::Simple { rhs, .. } => sexpr(rhs),
        other => panic!("not a simple equation: {other:?}"),
    }
}

#[test]
fn range_has_lowest_precedence() {
    assert_eq!(expr("1:N - 1"), "(1:(N - 1))");
    assert_eq!(expr("1:2:N"), "(1:2:N)");
    assert_eq!(expr("a + 1:b*2"), "((a + 1):(b * 2))");
}

#[test]
fn unary_minus_and_power() {
    assert_eq!(expr("-x^2"), "(-(x ^ 2))");
    assert_eq!(expr("-a*b"), "(-(a * b))");
    assert_eq!(expr("-a + b"), "((-a) + b)");
    assert_eq!(expr("2*-3"), "(2 * (-3))");
    assert_eq!(expr("a - -b"), "(a - (-b))");
    assert_eq!(expr("2^-1"), "(2 ^ (-1))");
    assert_eq!(expr("x.^2 .* y"), "((x .^ 2) .* y)");
}

#[test]
fn arithmetic_is_left_associative() {
    assert_eq!(expr("a - b - c"), "((a - b) - c)");
    assert_eq!(expr("a / b * c"), "((a / b) * c)");
    assert_eq!(expr("a + b * c"), "(a + (b * c))");
    assert_eq!(expr("(a + b) * c"), "((a + b) * c)");
    assert_eq!(expr("a .+ b .- c ./ d"), "((a .+ b) .- (c ./ d))");
}

#[test]
fn logical_and_relational_precedence() {
    assert_eq!(expr("a < b and c"), "((a < b) and c)");
    assert_eq!(expr("a or b and not c"), "(a or (b and (not c)))");
    assert_eq!(expr("x + 1 >= 2 * y"), "((x + 1) >= (2 * y))");
    assert_eq!(expr("a == b or a <> c"), "((a == b) or (a <> c))");
    assert_eq!(expr("not a <= b"), "(not (a <= b))");
}

#[test]
fn if_expression() {
    assert_eq!(
        expr("if x > 0 then 1 elseif x < 0 then -1 else 0"),
        "(if (x > 0) ? 1 | (x < 0) ? (-1) : 0)"
    );
    assert_eq!(expr("2 * (if b then y else z)"), "(2 * (if b ? y : z))");
}

#[test]
fn primaries_calls_arrays_and_subscripts() {
    assert_eq!(expr("der(der(x))"), "der(der(x))");
    assert_eq!(expr("Modelica.Constants.pi"), "Modelica.Constants.pi");
    assert_eq!(expr("atan2(y, x)"), "atan2(y, x)");
    assert_eq!(expr("f(a, k = 2)"), "f(a, k=2)");
    assert_eq!(expr("sum(p[:])"), "sum(p[:])");
    assert_eq!(expr("p[i + 1, end - 1]"), "p[(i + 1), (end - 1)]");
    assert_eq!(expr("{1, 2.5, .5}"), "{1, 2.5, 0.5}");
    assert_eq!(expr("{}"), "{}");
    assert_eq!(expr("[1, 2; 3, 4]"), "[1, 2; 3, 4]");
    assert_eq!(expr("true and false"), "(true and false)");
    assert_eq!(expr("1e-7 + 2.5E+3"), "(1e-7 + 2500.0)");
    assert_eq!(expr("time"), "time");
    assert_eq!(expr("'a b' + 1"), "(a b + 1)");
}

#[test]
fn expression_spans_cover_the_source() {
    let src = "model M equation x = 2 * (a + b); end M;";
    let m = parse_ok(src);
    let eq = &m.sections[0].equations[0];
    assert_eq!(&src[eq.span.range()], "x = 2 * (a + b)");
    let EquationKind::Simple { rhs, .. } = &eq.kind else {
        panic!("simple equation expected");
    };
    assert_eq!(&src[rhs.span.range()], "2 * (a + b)");
    let ExprKind::Binary { rhs: inner, .. } = &rhs.kind else {
        panic!("binary expected");
    };
    assert_eq!(&src[inner.span.range()], "(a + b)");
    assert_eq!(&src[m.span.range()], src);
    assert_eq!(&src[m.sections[0].span.range()], "equation");
}

#[test]
fn declarations_with_prefixes_types_dims_and_descriptions() {
    let src = r#"model Decls "several declarations"
  parameter Real m(unit = "kg") = 1 "mass";
  constant Integer N = 3;
  discrete Boolean b;
  input Real u = sin(time);
  output Real y;
  Modelica.Units.SI.Length len;
  Real x, v(start = 1) "speed";
  Real A[2, N];
  Real[3] p;
  final parameter Real k = 2;
equation
end Decls;"#;
    let m = parse_ok(src);
    assert_eq!(m.name.name, "Decls");
    assert_eq!(m.description.as_deref(), Some("several declarations"));
    assert_eq!(m.end_name.as_ref().map(|i| i.name.as_str()), Some("Decls"));
    let names: Vec<_> = m
        .declarations
        .iter()
        .map(|d| d.name.name.as_str())
        .collect();
    assert_eq!(
        names,
        vec!["m", "N", "b", "u", "y", "len", "x", "v", "A", "p", "k"]
    );
    let d = &m.declarations;
    assert_eq!(d[0].variability, Variability::Parameter);
    assert_eq!(d[0].description.as_deref(), Some("mass"));
    assert_eq!(d[0].binding.as_ref().map(sexpr).as_deref(), Some("1"));
    assert_eq!(d[0].modifiers[0].name.name, "unit");
    assert_eq!(
        d[0].modifiers[0].value.as_ref().map(sexpr).as_deref(),
        Some("\"kg\"")
    );
    assert_eq!(
        &src[d[0].span.range()],
        "parameter Real m(unit = \"kg\") = 1 \"mass\";"
    );
    assert_eq!(d[1].variability, Variability::Constant);
    assert_eq!(d[1].type_name.dotted(), "Integer");
    assert_eq!(d[2].variability, Variability::Discrete);
    assert_eq!(d[3].causality, Causality::Input);
    assert_eq!(d[4].causality, Causality::Output);
    assert_eq!(d[4].variability, Variability::Continuous);
    assert_eq!(
        d[5].type_name.parts,
        vec!["Modelica", "Units", "SI", "Length"]
    );
    assert_eq!(
        &src[d[5].type_name.span.range()],
        "Modelica.Units.SI.Length"
    );
    // `Real x, v(start = 1) "speed";` shares type and span.
    assert_eq!(d[6].type_name, d[7].type_name);
    assert_eq!(d[6].span, d[7].span);
    assert!(d[6].modifiers.is_empty());
    assert_eq!(d[7].description.as_deref(), Some("speed"));
    assert_eq!(
        d[8].dims.iter().map(sexpr).collect::<Vec<_>>(),
        vec!["2", "N"]
    );
    assert_eq!(d[9].dims.iter().map(sexpr).collect::<Vec<_>>(), vec!["3"]);
    assert_eq!(d[10].variability, Variability::Parameter);
}

#[test]
fn modifiers_each_final_nested_and_array_values() {
    let m = parse_ok(
        "model M parameter Integer N = 2;
           Real p[N](each start = 0, each fixed = true, final nominal = 2,
                     min = -1, max = 1, start = {1, 2, 3});
           Real q(stateSelect = StateSelect.prefer) annotation(Dialog(group = \"g\"));
         equation end M;",
    );
    let p = &m.declarations[1];
    let names: Vec<_> = p.modifiers.iter().map(|x| x.name.name.as_str()).collect();
    assert_eq!(
        names,
        vec!["start", "fixed", "nominal", "min", "max", "start"]
    );
    assert!(p.modifiers[0].each && p.modifiers[1].each && !p.modifiers[2].each);
    assert!(p.modifiers[2].is_final);
    let values: Vec<_> = p
        .modifiers
        .iter()
        .map(|x| x.value.as_ref().map(sexpr).unwrap_or_default())
        .collect();
    assert_eq!(values, vec!["0", "true", "2", "(-1)", "1", "{1, 2, 3}"]);
    let q = &m.declarations[2];
    assert_eq!(
        q.modifiers[0].value.as_ref().map(sexpr).as_deref(),
        Some("StateSelect.prefer")
    );
    assert_eq!(q.annotations.len(), 1);
    assert_eq!(q.annotations[0].name.name, "Dialog");
    assert_eq!(q.annotations[0].nested[0].name.name, "group");
}

#[test]
fn experiment_annotation_values() {
    let m = parse_ok(
        "model M Real x; equation der(x) = -x;
           annotation(experiment(StartTime = 0, StopTime = 20, Tolerance = 1e-6, Interval = 0.01));
         end M;",
    );
    assert_eq!(m.annotations.len(), 1);
    let exp = &m.annotations[0];
    assert_eq!(exp.name.name, "experiment");
    assert!(exp.value.is_none());
    let kv: Vec<_> = exp
        .nested
        .iter()
        .map(|x| {
            (
                x.name.name.as_str(),
                x.value.as_ref().map(sexpr).unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        kv,
        vec![
            ("StartTime", "0".to_owned()),
            ("StopTime", "20".to_owned()),
            ("Tolerance", "1e-6".to_owned()),
            ("Interval", "0.01".to_owned()),
        ]
    );
    // The annotation does not count as an equation.
    assert_eq!(m.sections[0].equations.len(), 1);
}

#[test]
fn annotation_before_sections_is_collected() {
    let m = parse_ok(
        "model M annotation(experiment(StopTime = 1)); Real x;
         equation x = 1; annotation(Documentation(info = \"i\")); end M;",
    );
    let names: Vec<_> = m.annotations.iter().map(|a| a.name.name.as_str()).collect();
    assert_eq!(names, vec!["experiment", "Documentation"]);
}

#[test]
fn sections_initial_and_several_equation_sections() {
    let m = parse_ok(
        "model M Real x; Real y;
         initial equation x = 1;
         equation der(x) = -x;
         equation y = 2 * x \"twice\";
         initial equation
         end M;",
    );
    let kinds: Vec<_> = m
        .sections
        .iter()
        .map(|s| (s.initial, s.equations.len()))
        .collect();
    assert_eq!(kinds, vec![(true, 1), (false, 1), (false, 1), (true, 0)]);
    assert_eq!(
        m.sections[2].equations[0].description.as_deref(),
        Some("twice")
    );
}

#[test]
fn nested_for_loops() {
    let m = parse_ok(
        "model M equation
           for i in 1:N, j in 1:2:M loop
             a[i, j] = 0;
             for k in {1, 3} loop b[k] = i; end for;
           end for;
         end M;",
    );
    let EquationKind::For { var, range, body } = &m.sections[0].equations[0].kind else {
        panic!("for expected");
    };
    assert_eq!(var.name, "i");
    assert_eq!(sexpr(range), "(1:N)");
    assert_eq!(body.len(), 1);
    let EquationKind::For { var, range, body } = &body[0].kind else {
        panic!("nested for expected");
    };
    assert_eq!(var.name, "j");
    assert_eq!(sexpr(range), "(1:2:M)");
    assert_eq!(body.len(), 2);
    let EquationKind::For { var, range, body } = &body[1].kind else {
        panic!("inner for expected");
    };
    assert_eq!((var.name.as_str(), sexpr(range).as_str()), ("k", "{1, 3}"));
    assert_eq!(body.len(), 1);
}

#[test]
fn if_equation_with_elseif_and_else() {
    let m = parse_ok(
        "model M equation
           if time < 1 then y = 0; elseif time < 2 then y = 1; else y = 2; end if;
           if b then z = 1; end if;
         end M;",
    );
    let eqs = &m.sections[0].equations;
    let EquationKind::If {
        branches,
        else_branch,
    } = &eqs[0].kind
    else {
        panic!("if expected");
    };
    let conds: Vec<_> = branches.iter().map(|(c, _)| sexpr(c)).collect();
    assert_eq!(conds, vec!["(time < 1)", "(time < 2)"]);
    assert_eq!(branches[1].1.len(), 1);
    assert_eq!(else_branch.len(), 1);
    let EquationKind::If { else_branch, .. } = &eqs[1].kind else {
        panic!("if expected");
    };
    assert!(else_branch.is_empty());
}

#[test]
fn when_with_reinit_and_elsewhen() {
    let m = parse_ok(
        "model M equation
           when h < 0 and v < 0 then
             reinit(v, -e * pre(v));
           elsewhen initial() then
             reinit(h, 1);
           end when;
         end M;",
    );
    let EquationKind::When { branches } = &m.sections[0].equations[0].kind else {
        panic!("when expected");
    };
    assert_eq!(branches.len(), 2);
    assert_eq!(sexpr(&branches[0].0), "((h < 0) and (v < 0))");
    assert_eq!(sexpr(&branches[1].0), "initial()");
    let EquationKind::Call { name, args } = &branches[0].1[0].kind else {
        panic!("call equation expected");
    };
    assert_eq!(name.name, "reinit");
    let args: Vec<_> = args.iter().map(sexpr).collect();
    // MLS A.2.7: the sign applies to the whole first term.
    assert_eq!(args, vec!["v", "(-(e * pre(v)))"]);
}

#[test]
fn call_equation_with_dotted_name() {
    let m = parse_ok("model M equation Modelica.Utilities.assert(x > 0, \"m\"); end M;");
    let EquationKind::Call { name, args } = &m.sections[0].equations[0].kind else {
        panic!("call expected");
    };
    assert_eq!(name.name, "Modelica.Utilities.assert");
    assert_eq!(args.len(), 2);
}

#[test]
fn public_and_protected_are_accepted() {
    let m = parse_ok("model M public Real x; protected Real y; equation x = y; y = 1; end M;");
    assert_eq!(m.declarations.len(), 2);
}

#[test]
fn model_is_kept_despite_errors() {
    let p: Parsed = parse(
        FileId(0),
        "model M\n  Real x;\n  Real y\nequation\n  x = ;\n  y = 1;\nend M;\n",
    );
    assert_eq!(p.diagnostics.len(), 2, "{:#?}", p.diagnostics);
    let m = p.model.expect("model");
    assert_eq!(m.declarations.len(), 2);
    let kinds: Vec<_> = m.sections[0]
        .equations
        .iter()
        .map(|e| matches!(e.kind, EquationKind::Error))
        .collect();
    assert_eq!(kinds, vec![true, false]);
}

#[test]
fn multi_error_file_reports_every_error() {
    let src = "model M\n  Real x(start = );\n  Real y;\nequation\n  der(x) = -x\n  y = 2 * * x;\n  z := 3;\n  x = ) 1;\nend N;\n";
    let p = parse(FileId(0), src);
    let codes_found: Vec<_> = p.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(
        codes_found,
        vec![
            codes::PARSE_UNEXPECTED,
            codes::PARSE_UNEXPECTED,
            codes::PARSE_UNEXPECTED,
            codes::UNSUPPORTED,
            codes::PARSE_UNEXPECTED,
            codes::PARSE_END_NAME,
        ],
        "{:#?}",
        p.diagnostics
    );
    assert!(p.model.is_some());
}

#[test]
fn no_model_gives_no_model_and_an_error() {
    let p = parse(FileId(0), "");
    assert!(p.model.is_none());
    assert_eq!(p.diagnostics.len(), 1);
    assert_eq!(p.diagnostics[0].code, codes::PARSE_EOF);
    let p = parse(FileId(0), "x = 1;");
    assert!(p.model.is_none());
    assert_eq!(p.diagnostics[0].code, codes::PARSE_UNEXPECTED);
    assert_eq!(
        p.diagnostics[0].message,
        "expected `model`, found identifier `x`"
    );
}

#[test]
fn missing_end_still_gives_the_model() {
    let p = parse(FileId(0), "model M\n  Real x;\nequation\n  x = 1;\n");
    let m = p.model.expect("model");
    assert_eq!(m.sections[0].equations.len(), 1);
    assert_eq!(p.diagnostics.len(), 1);
    assert_eq!(p.diagnostics[0].code, codes::PARSE_EOF);
    assert_eq!(
        p.diagnostics[0].message,
        "unexpected end of file: model `M` is not closed"
    );
}

#[test]
fn chained_power_is_reported() {
    let p = parse(FileId(0), "model M equation x = a^b^c; end M;");
    assert_eq!(p.diagnostics.len(), 1);
    assert_eq!(p.diagnostics[0].message, "chained `^` needs parentheses");
    let m = p.model.expect("model");
    let EquationKind::Simple { rhs, .. } = &m.sections[0].equations[0].kind else {
        panic!("simple equation expected");
    };
    assert_eq!(sexpr(rhs), "(a ^ (b ^ c))");
}

/// Models in the style of the examples of `docs/language.md` parse
/// without a diagnostic.
#[test]
fn valid_models_parse_without_diagnostics() {
    let models = [
        "model Pendulum \"Cartesian pendulum, index 3\"
           parameter Real L = 1 \"length\";
           parameter Real g = 9.81;
           Real x(start = 1, fixed = true);
           Real y(start = 0);
           Real lambda;
         equation
           der(der(x)) = -lambda * x;
           der(der(y)) = -lambda * y - g;
           x^2 + y^2 = L^2;
           annotation(experiment(StartTime = 0, StopTime = 20, Tolerance = 1e-6, Interval = 0.01));
         end Pendulum;",
        "model Chain
           parameter Integer N = 5;
           Real p[N](each start = 0);
         equation
           der(p[1]) = -p[1];
           for i in 2:N loop
             der(p[i]) = p[i - 1] - p[i];
           end for;
         end Chain;",
        "model Ball
           Real h(start = 1, fixed = true);
           Real v(start = 0, fixed = true);
           parameter Real e = 0.8;
         equation
           der(h) = v;
           der(v) = if h > 0 then -9.81 else 0;
           when h < 0 then
             reinit(v, -e * pre(v));
           end when;
         end Ball;",
        "model M // comment
           /* block */ Real 'quoted name' = 2 * time;
         end M;",
    ];
    for src in models {
        let p = parse(FileId(0), src);
        assert!(p.diagnostics.is_empty(), "{src}\n{:#?}", p.diagnostics);
        assert!(p.model.is_some());
    }
}

#[test]
fn huge_statements_are_skipped_not_overflowing() {
    let sum = vec!["a"; 5000].join(" + ");
    let src = format!("model M\n  Real x;\nequation\n  x = {sum};\n  x = 1;\nend M;\n");
    let p = parse(FileId(0), &src);
    assert_eq!(p.diagnostics.len(), 1, "{:#?}", p.diagnostics);
    assert_eq!(p.diagnostics[0].code, codes::TOO_LARGE);
    assert_eq!(
        p.diagnostics[0].message,
        "statement too large: 4999 operators and brackets (at most 4096)"
    );
    let m = p.model.expect("model");
    assert_eq!(m.sections[0].equations.len(), 1);
    // Just below the limit is fine.
    let sum = vec!["a"; 4000].join(" + ");
    let p = parse(FileId(0), &format!("model M equation x = {sum}; end M;"));
    assert!(p.diagnostics.is_empty());
}

#[test]
fn a_huge_statement_is_skipped_whole_even_with_if_expressions_inside() {
    // 20 000 nested `if` expressions around a token that is not an
    // expression: the `then`s and `else`s inside are not block openers,
    // so the whole statement is skipped (keeping its prefix up to the last
    // of them left the parser's error recovery 20 000 open brackets deep).
    let depth = 20_000;
    let deep = format!(
        "{}-{}",
        "(if true then ".repeat(depth),
        " else 0)".repeat(depth)
    );
    let src = format!("model M\n  Real x;\nequation\n  x = {deep};\n  x = 1;\nend M;\n");
    let p = parse(FileId(0), &src);
    assert_eq!(p.diagnostics.len(), 1, "{:#?}", p.diagnostics);
    assert_eq!(p.diagnostics[0].code, codes::TOO_LARGE);
    let span = p.diagnostics[0].labels[0].span;
    assert_eq!(&src[span.start as usize..span.start as usize + 5], "x = (");
    let m = p.model.expect("model");
    assert_eq!(m.sections[0].equations.len(), 1);
    // other tokens that are not expressions, some ending the statement
    // early: errors, but a few
    for token in [";", "end", "annotation", "= 0;"] {
        let deep = format!(
            "{}{token}{}",
            "(if true then ".repeat(depth),
            " else 0)".repeat(depth)
        );
        let src = format!("model M\n  Real x;\nequation\n  x = {deep};\n  x = 1;\nend M;\n");
        let p = parse(FileId(0), &src);
        assert_eq!(p.diagnostics[0].code, codes::TOO_LARGE, "{token}");
        assert!(p.diagnostics.len() <= 4, "{token}: {:#?}", p.diagnostics);
    }
    // A block opener before a huge statement stays: the loop keeps its
    // header and loses only its body.
    let sum = vec!["a"; 5000].join(" + ");
    let src = format!(
        "model M\n  Real x[2];\nequation\n  for i in 1:2 loop\n    x[i] = {sum};\n  end for;\nend M;\n"
    );
    let p = parse(FileId(0), &src);
    assert_eq!(p.diagnostics.len(), 1, "{:#?}", p.diagnostics);
    assert_eq!(p.model.expect("model").sections[0].equations.len(), 1);
}

/// A `function` of a `.mo` file: declarations, then an `algorithm`
/// section with every kind of statement, and its annotation.
#[test]
fn function_algorithm_statements_are_parsed() {
    let src = "function f
  input Real x;
  input Real k = 2;
  output Real y;
  output Real z;
protected
  Real a[2];
algorithm
  a[1] := x;
  (y, z) := g(x, k = 1);
  for i in 1:2, j in 1:3 loop
    y := y + i*j;
  end for;
  while y > 1 loop
    y := y/2;
    break;
  end while;
  if x > 0 then
    return;
  elseif x < -1 then
    z := 1;
  else
    z := 2;
  end if;
  assert(x > 0, \"positive\");
  annotation(derivative = f_der, Inline = true);
end f;
model M
  Real u;
  Real v;
equation
  (u, v) = f(time);
end M;
";
    let parsed = daec_syntax::parse_stored(FileId(0), src);
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    let stored = parsed.stored.unwrap();
    let ClassBody::Long {
        algorithm,
        annotations,
        elements,
        ..
    } = &stored.classes[0].body
    else {
        panic!("not a long class");
    };
    assert_eq!(stored.classes[0].kind, ClassKind::Function);
    assert_eq!(elements.len(), 5);
    let kinds: Vec<&str> = algorithm
        .iter()
        .map(|s| match &s.kind {
            StatementKind::Assign { .. } => "assign",
            StatementKind::TupleAssign { lhs, .. } if lhs.len() == 2 => "tuple",
            StatementKind::For { body, .. }
                if matches!(body[0].kind, StatementKind::For { .. }) =>
            {
                "for2"
            }
            StatementKind::While { body, .. } if matches!(body[1].kind, StatementKind::Break) => {
                "while"
            }
            StatementKind::If {
                branches,
                else_branch,
            } if branches.len() == 2
                && else_branch.len() == 1
                && matches!(branches[0].1[0].kind, StatementKind::Return) =>
            {
                "if"
            }
            StatementKind::Call(_) => "call",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["assign", "tuple", "for2", "while", "if", "call"]);
    let names: Vec<&str> = annotations.iter().map(|a| a.name.name.as_str()).collect();
    assert_eq!(names, ["derivative", "Inline"]);
    let ClassBody::Long { sections, .. } = &stored.classes[1].body else {
        panic!("not a long class");
    };
    let EquationKind::Simple { lhs, .. } = &sections[0].equations[0].kind else {
        panic!("not a simple equation");
    };
    assert_eq!(sexpr(lhs), "(u, v)");
}
