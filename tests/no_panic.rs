//! No input may panic daec: random models (from fragments of the
//! language, so that they get past the parser) through `flatten` and
//! `analyze`, plus pathological inputs.

mod common;

use proptest::prelude::*;

const DECLS: &[&str] = &[
    "Real x;",
    "Real y(start = 1, fixed = true);",
    "Real z[3](each start = 0);",
    "parameter Real k = 2;",
    "parameter Integer N = 3;",
    "parameter Real a = b + 1;",
    "parameter Real b = a;",
    "Real w = sin(x);",
    "input Real u;",
    "Boolean flag;",
    "Real x;",
    "parameter Real m;",
    "Modelica.Units.SI.Length len(start = -1);",
    "parameter Real v[2] = {1, 2, 3};",
];

const EQS: &[&str] = &[
    "der(x) = -k*x;",
    "der(y) = x - y;",
    "x^2 + y^2 = 1;",
    "z[1] = z[4];",
    "for i in 1:N loop der(z[i]) = -z[i]; end for;",
    "for i in 1:N - 1 loop z[i + 1] = z[i]; end for;",
    "der(der(x)) = -x;",
    "der(k) = 1;",
    "x = if time > 1 then 1 else 0;",
    "if time < 1 then x = 0; else x = 1; y = 2; end if;",
    "when x < 0 then reinit(y, -y); end when;",
    "reinit(x, 0);",
    "y = atan2(x);",
    "y = lamda;",
    "0 = 1/0 + log(-1);",
    "der(x + y) = 0;",
    "z = {1, 2, 3};",
    "z = {1, 2};",
    "x = true + 1;",
    "x = ((((((((((y))))))))));",
    "der(x) = sqrt(-x) * 1e308 * 1e308;",
];

fn model(decls: &[usize], eqs: &[usize]) -> String {
    let mut s = String::from("model R\n");
    for &d in decls {
        s.push_str("  ");
        s.push_str(DECLS[d % DECLS.len()]);
        s.push('\n');
    }
    s.push_str("equation\n");
    for &e in eqs {
        s.push_str("  ");
        s.push_str(EQS[e % EQS.len()]);
        s.push('\n');
    }
    s.push_str("end R;\n");
    s
}

fn run_all(text: &str, dir: &std::path::Path, tag: usize) {
    let path = dir.join(format!("m{tag}.dae"));
    std::fs::write(&path, text).unwrap();
    let p = path.to_str().unwrap();
    for args in [
        vec!["flatten", p],
        vec!["flatten", p, "--format", "json"],
        vec!["analyze", p],
        vec!["analyze", p, "--format", "json"],
    ] {
        let r = common::daec(&args);
        assert!(
            matches!(r.code, 0..=3),
            "exit {} for\n{text}\n{}",
            r.code,
            r.stderr
        );
        assert!(!r.stderr.contains("panicked"), "{text}\n{}", r.stderr);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, .. ProptestConfig::default() })]

    #[test]
    fn random_models_never_panic(decls in proptest::collection::vec(0usize..100, 0..6),
                                 eqs in proptest::collection::vec(0usize..100, 0..7)) {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("daec-nopanic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        run_all(&model(&decls, &eqs), &dir, decls.len() * 100 + eqs.len());
    }
}

#[test]
fn pathological_inputs_do_not_panic() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-patho-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let deep = format!(
        "model D\n  Real x;\nequation\n  x = {}1{};\nend D;\n",
        "(".repeat(50_000),
        ")".repeat(50_000)
    );
    let long_sum = format!(
        "model S\n  Real x;\nequation\n  x = {}1;\nend S;\n",
        "x + ".repeat(100_000)
    );
    let huge = "model H\n  parameter Integer N = 1000000000000;\n  Real x[N];\nequation\n  for i in 1:N loop x[i] = 1; end for;\nend H;\n".to_string();
    for (k, text) in [
        deep,
        long_sum,
        huge,
        String::new(),
        "\u{0}\u{1}".into(),
        "model".into(),
    ]
    .iter()
    .enumerate()
    {
        run_all(text, &dir, k);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
