//! `daec fmu`: the archive it writes (read back entry by entry) and its
//! refusals. FMPy's checks of the FMUs are `tests/fmu/test_fmu.py`.

mod common;

use common::{daec, root};

/// A unique scratch directory of this test binary.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-fmu-export-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_fmu_holds_the_description_the_runtime_and_the_model() {
    let dir = scratch("archive");
    let runtime = dir.join("libdaec_fmu.so");
    std::fs::write(&runtime, b"\x7fELF stand-in for the runtime").unwrap();
    let out = dir.join("lv.fmu");
    let model = root().join("models/fmu/lotka_volterra.dae");
    let run = daec(&[
        "fmu",
        model.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--runtime",
        runtime.to_str().unwrap(),
        "-p",
        "beta=0.5",
        "--form",
        "ste",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("FMI 2.0 Co-Simulation, model `LotkaVolterra`, 6 variables (2 outputs, 4 parameters), STE formulation"), "{}", run.stderr);
    let entries = daec_fmu::read_zip(&std::fs::read(&out).unwrap()).unwrap();
    let names: Vec<&str> = entries.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "modelDescription.xml",
            "binaries/linux64/LotkaVolterra.so",
            "resources/model.dae",
            "resources/options.json"
        ]
    );
    assert_eq!(entries[1].1, std::fs::read(&runtime).unwrap());
    let text = String::from_utf8(entries[2].1.clone()).unwrap();
    let flat = daec(&["flatten", model.to_str().unwrap(), "-p", "beta=0.5"]);
    assert_eq!(text, flat.stdout, "the model is the flat text, -p applied");
    let options: daec_fmu::FmuOptions = serde_json::from_slice(&entries[3].1).unwrap();
    assert_eq!(
        (options.form.as_str(), options.method.as_str()),
        ("ste", "radau5")
    );
    let xml = String::from_utf8(entries[0].1.clone()).unwrap();
    assert!(xml.contains(&format!("guid=\"{}\"", options.guid)));
    assert!(xml.contains("name=\"beta\" valueReference=\"3\" description=\"predation rate\" causality=\"parameter\" variability=\"fixed\" initial=\"exact\">\n      <Real start=\"0.5\"/>"), "{xml}");
    assert!(xml.contains("<DefaultExperiment startTime=\"0\" stopTime=\"20\" tolerance=\"1e-6\" stepSize=\"0.05\"/>"), "{xml}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn refusals_are_usage_or_model_errors() {
    let dir = scratch("refusals");
    let runtime = dir.join("libdaec_fmu.so");
    std::fs::write(&runtime, b"runtime").unwrap();
    let lv = root().join("models/fmu/lotka_volterra.dae");
    let lv = lv.to_str().unwrap();
    let rt = runtime.to_str().unwrap();
    let out = dir.join("x.fmu");
    let out = out.to_str().unwrap();
    let missing = dir.join("missing.so");
    let dir_s = dir.to_str().unwrap();
    let missing = missing.to_str().unwrap();
    let cases: [(&[&str], i32, &str); 6] = [
        (
            &["--kind", "mx"],
            2,
            "unknown `--kind mx`: the kinds are cs",
        ),
        (&["--fmi-version", "3"], 2, "FMI 3.0 is not implemented"),
        (
            &["--method", "bdf-2nd"],
            2,
            "cannot be continued from step to step",
        ),
        (&["--form", "nope"], 2, "unknown form `--form nope`"),
        (&["--runtime", missing], 2, "was not found; looked at"),
        (&["-o", dir_s], 2, "is not a regular file"),
    ];
    for (args, code, fragment) in cases {
        let mut argv = vec!["fmu", lv];
        argv.extend_from_slice(args);
        if !args.contains(&"--runtime") {
            argv.extend(["--runtime", rt]);
        }
        if !args.contains(&"-o") {
            argv.extend(["-o", out]);
        }
        let run = daec(&argv);
        assert_eq!(run.code, code, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(fragment), "{args:?}: {}", run.stderr);
    }
    assert!(
        !dir.join("x.fmu").exists(),
        "no FMU written by a refused run"
    );
    // a model daec cannot simulate (structurally singular: `y` is in no
    // equation): its reason, exit 1
    let singular = dir.join("singular.dae");
    std::fs::write(
        &singular,
        "model S\n  Real x;\n  Real y;\nequation\n  x = 1;\n  2*x = time;\nend S;\n",
    )
    .unwrap();
    let run = daec(&[
        "fmu",
        singular.to_str().unwrap(),
        "--runtime",
        rt,
        "-o",
        out,
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("the model is structurally singular"),
        "{}",
        run.stderr
    );
    assert!(!dir.join("x.fmu").exists(), "no FMU of a refused model");
    // a mistake in the model: its diagnostic, exit 1
    let bad = root().join("models/err/undeclared_function.dae");
    let run = daec(&["fmu", bad.to_str().unwrap(), "--runtime", rt, "-o", out]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("undeclared_function.dae:"),
        "{}",
        run.stderr
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn model_exchange_describes_the_states_and_refuses_what_is_no_ode() {
    let dir = scratch("model-exchange");
    let runtime = dir.join("libdaec_fmu.so");
    std::fs::write(&runtime, b"runtime").unwrap();
    let rt = runtime.to_str().unwrap();
    let out = dir.join("x.fmu");
    let out_s = out.to_str().unwrap();
    let export = |model: &str, kind: &str| {
        let m = root().join(model);
        daec(&[
            "fmu",
            m.to_str().unwrap(),
            "--kind",
            kind,
            "--runtime",
            rt,
            "-o",
            out_s,
        ])
    };
    // Lotka-Volterra in both kinds: the states' derivatives described
    let run = export("models/fmu/lotka_volterra.dae", "both");
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("FMI 2.0 Model Exchange and Co-Simulation, model `LotkaVolterra`, 8 variables (2 outputs, 4 parameters, 2 states, 0 event indicators)"),
        "{}",
        run.stderr
    );
    let entries = daec_fmu::read_zip(&std::fs::read(&out).unwrap()).unwrap();
    let xml = String::from_utf8(entries[0].1.clone()).unwrap();
    for fragment in [
        "numberOfEventIndicators=\"0\"",
        "<ModelExchange modelIdentifier=\"LotkaVolterra\"",
        "<CoSimulation modelIdentifier=\"LotkaVolterra\"",
        "name=\"der(x)\" valueReference=\"6\" description=\"the derivative of x\" causality=\"local\" variability=\"continuous\" initial=\"calculated\">\n      <Real derivative=\"1\"/>",
        "<Derivatives>\n      <Unknown index=\"7\"/>\n      <Unknown index=\"8\"/>\n    </Derivatives>",
    ] {
        assert!(xml.contains(fragment), "{fragment}\n{xml}");
    }
    let options: daec_fmu::FmuOptions = serde_json::from_slice(&entries[3].1).unwrap();
    assert_eq!(options.kind, daec_fmu::FmuKind::Both);
    // the bouncing ball: a when clause and a relation, two indicators
    let run = export("models/fmu/bouncing_ball.dae", "me");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let entries = daec_fmu::read_zip(&std::fs::read(&out).unwrap()).unwrap();
    let xml = String::from_utf8(entries[0].1.clone()).unwrap();
    assert!(xml.contains("numberOfEventIndicators=\"2\""), "{xml}");
    assert!(!xml.contains("<CoSimulation"), "{xml}");
    std::fs::remove_file(&out).unwrap();
    // what is no ODE in fixed states: exit 1 with the reason
    let cases = [
        (
            "models/steinbrecher/pendulum.dae",
            "the model is of index 3: the Σ-method differentiates equation 5",
        ),
        (
            "models/baese/cv_loop_circuit.dae",
            "the model is of index 2",
        ),
        (
            "models/ndsolve/index_by_initial_values_branch1.dae",
            "the algebraic part is singular",
        ),
    ];
    for (model, reason) in cases {
        let run = export(model, "me");
        assert_eq!(run.code, 1, "{model}: {}", run.stderr);
        assert!(
            run.stderr.contains("cannot be exported for Model Exchange")
                && run.stderr.contains(reason)
                && run.stderr.contains("use --kind cs"),
            "{model}: {}",
            run.stderr
        );
        assert!(!out.exists(), "{model}: no FMU of a refused model");
    }
    let _ = std::fs::remove_dir_all(dir);
}
