//! Hierarchical Modelica (`.mo` files): golden flattening tests (one
//! directory per construct under `tests/flatten_golden/`), the round trip
//! of `daec flatten`, one error test per instantiation diagnostic, and
//! component models of `models/modelica/` against their hand-flattened
//! equivalents in `tests/modelica/flat/`.

mod common;

use common::{Csv, daec, root};

const LIB: &str = "models/modelica";

/// Every `tests/flatten_golden/<case>/model.mo` flattens (class `Top`) to
/// its `expected.dae`, and the flat text flattens to itself.
#[test]
fn golden_flattening() {
    let dir = root().join("tests/flatten_golden");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert!(cases.len() >= 9, "only {} cases", cases.len());
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-golden-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    for case in cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let model = format!("tests/flatten_golden/{name}/model.mo");
        let r = daec(&["flatten", &model, "--model", "Top"]);
        assert_eq!(r.code, 0, "{name}:\n{}", r.stderr);
        let expected = std::fs::read_to_string(case.join("expected.dae"))
            .unwrap_or_else(|_| panic!("{name}: no expected.dae; the output is:\n{}", r.stdout));
        assert_eq!(r.stdout, expected, "{name}: the flat model differs");
        // Round trip: the flat text is a `.dae` model that flattens to itself.
        let flat = tmp.join(format!("{name}.dae"));
        std::fs::write(&flat, &r.stdout).unwrap();
        let again = daec(&["flatten", flat.to_str().unwrap()]);
        assert_eq!(again.code, 0, "{name}: {}", again.stderr);
        assert_eq!(again.stdout, r.stdout, "{name}: the round trip differs");
    }
}

/// The flat text of each component model of `models/modelica/` parses
/// again to the same model.
#[test]
fn flatten_round_trips_the_component_models() {
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-mo-roundtrip-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    for m in ["rlc", "msd", "pendulum", "rc_ring"] {
        let model = format!("{LIB}/{m}.mo");
        let first = daec(&["flatten", &model, "--lib", LIB]);
        assert_eq!(first.code, 0, "{m}: {}", first.stderr);
        let flat = tmp.join(format!("{m}.dae"));
        std::fs::write(&flat, &first.stdout).unwrap();
        let second = daec(&["flatten", flat.to_str().unwrap()]);
        assert_eq!(second.code, 0, "{m}: {}", second.stderr);
        assert_eq!(first.stdout, second.stdout, "{m}: the round trip differs");
    }
}

/// Simulates `model` (with `extra` arguments) and returns its CSV.
fn simulate(model: &str, extra: &[&str]) -> Csv {
    // A tight tolerance: the component model and its hand-flattened
    // equivalent are different DAEs, whose errors differ within it.
    let mut args = vec!["simulate", model, "--rtol", "1e-10"];
    args.extend_from_slice(extra);
    let r = daec(&args);
    assert_eq!(r.code, 0, "{model}:\n{}", r.stderr);
    Csv::parse(&r.stdout)
}

/// The columns `pairs` (component model name, flat model name) agree at
/// every output time to `tol` (relative to the column's largest value).
fn assert_same(component: &Csv, flat: &Csv, pairs: &[(&str, &str)], tol: f64) {
    assert_eq!(component.rows.len(), flat.rows.len(), "output times differ");
    for &(a, b) in pairs {
        let (ca, cb) = (component.col(a), flat.col(b));
        let scale = flat.rows.iter().map(|r| r[cb].abs()).fold(1e-12, f64::max);
        for (ra, rb) in component.rows.iter().zip(&flat.rows) {
            assert_eq!(ra[0], rb[0], "output times differ");
            let err = (ra[ca] - rb[cb]).abs() / scale;
            assert!(
                err <= tol,
                "{a} = {} but {b} = {} at t = {} (relative error {err:.2e})",
                ra[ca],
                rb[cb],
                ra[0]
            );
        }
    }
}

#[test]
fn rlc_circuit_from_components_matches_the_flat_circuit() {
    let component = simulate("models/modelica/rlc.mo", &["--lib", LIB]);
    let flat = simulate("tests/modelica/flat/rlc_flat.dae", &[]);
    assert_same(&component, &flat, &[("L1.i", "i"), ("C1.v", "vC")], 1e-7);
    // Kirchhoff: the resistor carries the loop current.
    let last = component.rows.len() - 1;
    let (i, ir) = (component.value(last, "L1.i"), component.value(last, "R1.i"));
    assert!((i - ir).abs() <= 1e-9, "L1.i = {i}, R1.i = {ir}");
}

/// The connection equalities, and the flow sums of two-pin connections,
/// are eliminated as aliases before the analysis: of 26 unknowns, 5 pin
/// potentials and 3 pin currents are other names (or negated names).
#[test]
fn analyze_counts_the_component_circuit_without_aliases() {
    let r = daec(&["analyze", "models/modelica/rlc.mo", "--lib", LIB]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("18 equations, 18 unknowns"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(
            "Aliases eliminated before the analysis: 8 ('C1.n.v' = 'source.n.v', \
             'C1.p.i' = -'L1.n.i', 'C1.p.v' = 'L1.n.v', 'L1.p.i' = -'R1.n.i', \
             'L1.p.v' = 'R1.n.v', 'R1.p.i' = -'source.p.i', 'R1.p.v' = 'source.p.v', \
             'ground.p.v' = 'source.n.v')"
        ),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("Degrees of freedom Val(Σ) = Σd − Σc = 2"));
}

/// The results still show every variable: an alias's column repeats the
/// column of the unknown it names (negated for a flow alias), and
/// `--vars` takes alias names.
#[test]
fn aliases_keep_their_columns_and_names() {
    let csv = simulate("models/modelica/rlc.mo", &["--lib", LIB]);
    assert_eq!(csv.header.len(), 27, "{:?}", csv.header);
    let mut moving = 0;
    for row in 0..csv.rows.len() {
        assert_eq!(csv.value(row, "R1.p.v"), csv.value(row, "source.p.v"));
        assert!(csv.value(row, "ground.p.v").abs() <= 1e-12);
        let (a, b) = (csv.value(row, "R1.p.i"), csv.value(row, "source.p.i"));
        assert_eq!(a, -b, "row {row}");
        assert_eq!(csv.value(row, "C1.p.i"), -csv.value(row, "L1.n.i"));
        moving += usize::from(a.abs() > 1e-6);
    }
    assert!(moving > 0, "the current is zero throughout");
    let flat = daec(&["flatten", "models/modelica/rlc.mo", "--lib", LIB]);
    assert_eq!(flat.code, 0, "{}", flat.stderr);
    assert!(
        flat.stdout
            .contains("  'R1.p.i' = -'source.p.i' annotation(__daec(alias = true));"),
        "{}",
        flat.stdout
    );
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-alias-plot-{}.svg", std::process::id()));
    let r = daec(&[
        "simulate",
        "models/modelica/rlc.mo",
        "--lib",
        LIB,
        "--vars",
        "R1.p.v,R1.p.i,C1.*",
        "--plot",
        tmp.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Each alias is drawn under its own name (its column, negated for a
    // flow alias), not under the name of the unknown it names.
    let svg = std::fs::read_to_string(&tmp).unwrap();
    let _ = std::fs::remove_file(&tmp);
    let legend = |name: &str| svg.lines().any(|l| l.trim() == name);
    for label in ["R1.p.v", "R1.p.i", "C1.p.i", "C1.v"] {
        assert!(legend(label), "no legend {label}");
    }
    for label in ["source.p.v", "source.p.i", "L1.n.i"] {
        assert!(!legend(label), "legend {label}");
    }
}

#[test]
fn mass_spring_damper_from_components_matches_the_flat_one() {
    let component = simulate("models/modelica/msd.mo", &["--lib", LIB]);
    let flat = simulate("tests/modelica/flat/msd_flat.dae", &[]);
    assert_same(&component, &flat, &[("mass.s", "s"), ("mass.v", "v")], 1e-7);
}

#[test]
fn pendulum_from_components_is_index_three_and_matches_the_flat_one() {
    let r = daec(&["analyze", "models/modelica/pendulum.mo", "--lib", LIB]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("Structural index ν_Σ = 3"),
        "{}",
        r.stdout
    );
    let component = simulate("models/modelica/pendulum.mo", &["--lib", LIB]);
    let flat = simulate("tests/modelica/flat/pendulum_flat.dae", &[]);
    assert_same(
        &component,
        &flat,
        &[("body.x", "x"), ("body.y", "y"), ("body.vy", "vy")],
        // 1.4e-7 (the velocity vy; positions 6.4e-8) with the default of a
        // mechanical system, index scaling (velocities controlled to h·TOL)
        3e-7,
    );
}

#[test]
fn component_array_ring_matches_the_flat_ring() {
    let component = simulate("models/modelica/rc_ring.mo", &["--lib", LIB]);
    let flat = simulate("tests/modelica/flat/rc_ring_flat.dae", &[]);
    assert_same(
        &component,
        &flat,
        &[
            ("C[1].v", "v[1]"),
            ("C[2].v", "v[2]"),
            ("C[3].v", "v[3]"),
            ("C[4].v", "v[4]"),
        ],
        1e-7,
    );
}

#[test]
fn parameter_overrides_take_dotted_names() {
    let base = simulate("models/modelica/msd.mo", &["--lib", LIB]);
    let stiff = simulate(
        "models/modelica/msd.mo",
        &["--lib", LIB, "-p", "spring.c=40"],
    );
    // A four times stiffer spring halves the period: the first zero
    // crossing of the position comes earlier.
    let crossing = |csv: &Csv| {
        let s = csv.col("mass.s");
        csv.rows.iter().find(|r| r[s] < 0.0).map(|r| r[0]).unwrap()
    };
    assert!(crossing(&stiff) < 0.7 * crossing(&base));
}

#[test]
fn the_library_path_comes_from_modelicapath_too() {
    // Without a library the package is missing.
    let r = daec(&["flatten", "models/modelica/msd.mo"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("cannot find class `Mechanics.Fixed`"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_library_in_package_directories_is_read() {
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-lib-{}", std::process::id()));
    let pkg = tmp.join("Lib").join("Sub");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(
        tmp.join("Lib/package.mo"),
        "package Lib\n  constant Real k = 2;\nend Lib;\n",
    )
    .unwrap();
    std::fs::write(
        pkg.join("package.mo"),
        "within Lib;\npackage Sub\nend Sub;\n",
    )
    .unwrap();
    std::fs::write(
        pkg.join("Decay.mo"),
        "within Lib.Sub;\nmodel Decay\n  Real x(start = 1, fixed = true);\nequation\n  der(x) = -Lib.k*x;\nend Decay;\n",
    )
    .unwrap();
    let model = tmp.join("top.mo");
    std::fs::write(&model, "model Top\n  Lib.Sub.Decay d;\nend Top;\n").unwrap();
    let r = daec(&[
        "flatten",
        model.to_str().unwrap(),
        "--lib",
        tmp.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("der('d.x') = -2 * 'd.x'"), "{}", r.stdout);
}

#[test]
fn several_models_need_a_choice() {
    let r = daec(&["flatten", "tests/modelica/errors/several_models.mo"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("holds 2 models; choose one with --model NAME (its models are: A, B)"),
        "{}",
        r.stderr
    );
    let r = daec(&[
        "flatten",
        "tests/modelica/errors/several_models.mo",
        "--model",
        "B",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("model B"));
    let r = daec(&[
        "flatten",
        "tests/modelica/errors/several_models.mo",
        "--model",
        "C",
    ]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("no class `C`"), "{}", r.stderr);
}

/// Every model of `tests/modelica/errors/` (but the one with two models)
/// fails with its pinned diagnostics (exit 1).
#[test]
fn instantiation_errors_are_located() {
    let dir = root().join("tests/modelica/errors");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_stem().is_some_and(|s| s != "several_models"))
        .collect();
    files.sort();
    assert!(files.len() >= 10);
    for path in files {
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let model = format!("tests/modelica/errors/{stem}.mo");
        let r = daec(&["flatten", &model]);
        assert_eq!(r.code, 1, "{stem}: {}", r.stderr);
        assert!(!r.stdout.contains("model"), "{stem}: printed a model");
        assert_workspace_snapshot!(format!("modelica_error__{stem}"), r.stderr);
    }
}

/// Deep hierarchies are limits reported with a location, never a stack
/// overflow: components nested 200 deep, `extends` 200 deep; packages
/// nested 5000 deep are read (class names are not stored per level).
#[test]
fn deep_hierarchies_are_reported_not_overflowed() {
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-deep-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let n = 200;
    let mut inst: String = (0..n)
        .map(|i| format!("model M{i}\n  M{} c;\nend M{i};\n", i + 1))
        .collect();
    inst.push_str(&format!("model M{n}\n  Real x = 1;\nend M{n};\n"));
    let mut ext = String::from("model A0\n  Real x = 1;\nend A0;\n");
    ext.extend((0..n).map(|i| format!("model A{}\n  extends A{i};\nend A{};\n", i + 1, i + 1)));
    ext.push_str(&format!("model Top\n  A{n} a;\nend Top;\n"));
    for (name, text, model, message) in [
        ("inst.mo", inst, "M0", "components nested more than 64 deep"),
        (
            "ext.mo",
            ext,
            "Top",
            "`extends` clauses nested more than 64 deep",
        ),
    ] {
        let path = tmp.join(name);
        std::fs::write(&path, text).unwrap();
        let r = daec(&["flatten", path.to_str().unwrap(), "--model", model]);
        assert_eq!(r.code, 1, "{name}: {}", r.stderr);
        assert!(r.stderr.contains(message), "{name}: {}", r.stderr);
        assert!(
            r.stderr.contains("the innermost 8 are shown") || name == "ext.mo",
            "{name}: {}",
            r.stderr
        );
    }
    let depth = 5000;
    let mut pkg: String = (0..depth).map(|i| format!("package P{i}\n")).collect();
    pkg.push_str("model M\n  Real x(start = 1, fixed = true);\nequation\n  der(x) = -x;\nend M;\n");
    pkg.extend((0..depth).rev().map(|i| format!("end P{i};\n")));
    let path = tmp.join("pkg.mo");
    std::fs::write(&path, pkg).unwrap();
    let r = daec(&["flatten", path.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("der(x) = -x;"), "{}", r.stdout);
}

/// No prefix of a component library, however it is cut, makes daec
/// panic: each is a model (exit 0), a located error (1) or a usage
/// error (2).
#[test]
fn truncated_modelica_files_never_panic() {
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-cut-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut text = std::fs::read_to_string(root().join("models/modelica/Electrical.mo")).unwrap();
    text.push_str(&std::fs::read_to_string(root().join("models/modelica/rc_ring.mo")).unwrap());
    let path = tmp.join("cut.mo");
    let mut cut = 0;
    while cut < text.len() {
        while !text.is_char_boundary(cut) {
            cut += 1;
        }
        std::fs::write(&path, &text[..cut]).unwrap();
        let r = daec(&["flatten", path.to_str().unwrap()]);
        assert!(
            matches!(r.code, 0..=2),
            "cut at {cut}: exit {}\n{}",
            r.code,
            r.stderr
        );
        cut += 13;
    }
}

/// The balance check of components (MLS 3.6, §4.8): blocks whose inputs
/// come from outside and models whose connectors' flows are supplied by
/// connections are balanced; a block with one equation too many is named
/// with its counts.
#[test]
fn components_are_checked_for_balance() {
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-balance-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let library = "connector RealInput = input Real;
connector RealOutput = output Real;
connector Pin
  Real v;
  flow Real i;
end Pin;
block Gain
  parameter Real k = 2;
  RealInput u;
  RealOutput y;
equation
  y = k * u;
end Gain;
model Capacitor
  parameter Real C = 1;
  Pin p;
  Pin n;
  Real v(start = 1, fixed = true);
protected
  Real i;
equation
  v = p.v - n.v;
  0 = p.i + n.i;
  i = p.i;
  C * der(v) = i;
end Capacitor;
model Ground
  Pin p;
equation
  p.v = 0;
end Ground;
";
    let good = format!(
        "{library}model Top
  Gain g(u = time);
  Capacitor c;
  Ground gnd;
equation
  connect(c.p, gnd.p);
  connect(c.n, gnd.p);
end Top;
"
    );
    let bad = good.replace("  y = k * u;\n", "  y = k * u;\n  u = 1;\n");
    let (good_path, bad_path) = (tmp.join("good.mo"), tmp.join("bad.mo"));
    std::fs::write(&good_path, good).unwrap();
    std::fs::write(&bad_path, bad).unwrap();
    let r = daec(&["flatten", good_path.to_str().unwrap(), "--model", "Top"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = daec(&["flatten", bad_path.to_str().unwrap(), "--model", "Top"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("[E0136]: component `g` of type `Gain` has 3 equations for 2 unknowns"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("in component `g` of `Top`"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("Capacitor"), "{}", r.stderr);
}

/// A library package's `package.order` (MLS 3.6, §13.4.3) orders its
/// classes, those of its files and those that `package.mo` defines alike
/// (the list of models in a diagnostic follows it), and a name
/// listed there that the package does not define is a located warning.
#[test]
fn package_order_orders_classes_and_reports_missing_names() {
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-order-{}", std::process::id()));
    let lib = tmp.join("Lib");
    std::fs::create_dir_all(&lib).unwrap();
    let write = |name: &str, text: &str| std::fs::write(lib.join(name), text).unwrap();
    write(
        "package.mo",
        "package Lib\n  model Inner\n    Real x = 1;\n  end Inner;\nend Lib;\n",
    );
    write("package.order", "Zeta\nInner\n  Missing\nAlpha\n");
    write(
        "Alpha.mo",
        "within Lib;\nmodel Alpha\n  Real a = 1;\nend Alpha;\n",
    );
    write(
        "Zeta.mo",
        "within Lib;\nmodel Zeta\n  Real z = 1;\nend Zeta;\n",
    );
    let top = tmp.join("top.mo");
    std::fs::write(&top, "model Top\n  Lib.Alpha a;\nend Top;\n").unwrap();
    let (top, lib) = (top.to_str().unwrap(), tmp.to_str().unwrap());
    let r = daec(&["flatten", top, "--lib", lib, "--model", "Nope"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("the models are: Top, Lib.Zeta, Lib.Inner, Lib.Alpha"),
        "{}",
        r.stderr
    );
    let r = daec(&["flatten", top, "--lib", lib]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("'a.a' = 1;"), "{}", r.stdout);
    assert!(
        r.stderr.contains(
            "warning[W0137]: `package.order` lists `Missing`, which the package does not define"
        ),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("package.order:3:3"), "{}", r.stderr);
    assert_eq!(r.stderr.matches("W0137").count(), 1, "{}", r.stderr);
}

/// The balance check (MLS 3.6, §4.8) accepts balanced components of every
/// shape it counts: arrays sized by parameters, `for` loops, `if` with
/// parameter and non-parameter conditions, `when`, components of model
/// type wired with `connect` (arrays of them in a loop), inputs bound
/// by modifiers.
#[test]
fn balanced_components_of_every_shape_are_accepted() {
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-balanced-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let model = tmp.join("balanced.mo");
    std::fs::write(
        &model,
        r#"connector Pin
  Real v;
  flow Real i;
end Pin;

model Resistor
  Pin p;
  Pin n;
  parameter Real R = 1;
equation
  p.v - n.v = R * p.i;
  p.i + n.i = 0;
end Resistor;

model Chain
  parameter Integer m = 3;
  Pin p;
  Pin n;
  Resistor r[m];
equation
  connect(p, r[1].p);
  for k in 1:m - 1 loop
    connect(r[k].n, r[k + 1].p);
  end for;
  connect(r[m].n, n);
end Chain;

model Decay
  parameter Integer n = 2;
  parameter Boolean fast = true;
  input Real u;
  Real x[n](each start = 1, each fixed = true);
  Real y;
  Real z;
equation
  for k in 1:n loop
    der(x[k]) = -k * x[k] + u;
  end for;
  if fast then
    y = 2 * x[1];
  else
    y = x[1];
    z = 0;
  end if;
  if time > 0.5 then
    z = y;
  else
    z = -y;
  end if;
  when time > 0.7 then
    reinit(x[1], 0);
  end when;
end Decay;

model Source
  Pin p;
  Pin n;
equation
  p.v - n.v = 1;
  p.i + n.i = 0;
end Source;

model Ground
  Pin p;
equation
  p.v = 0;
end Ground;

model Top
  Chain c(m = 4);
  Source s;
  Ground g;
  Decay d(n = 3, u = sin(time));
equation
  connect(s.p, c.p);
  connect(c.n, s.n);
  connect(s.n, g.p);
end Top;
"#,
    )
    .unwrap();
    let r = daec(&["analyze", model.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("E0136"), "{}", r.stderr);
}
