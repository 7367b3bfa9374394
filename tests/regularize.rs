//! `daec regularize`: every formulation of every model in `models/`
//! pinned as a readable listing (or the reason it is refused), the
//! emitted `.dae` models of the square forms re-parsed and re-analysed,
//! and the command's usage errors.

mod common;

use common::{clip_long, daec, snapshot_name, valid_models};

const FORMS: [&str; 6] = ["hic", "ada", "ste", "dd", "ggl", "di1"];

/// Scalable models are pinned at a small size.
fn args_for(model: &str) -> Vec<String> {
    let mut a = vec!["regularize".to_string(), model.to_string()];
    if model.starts_with("models/scale/") {
        a.extend(["-p".to_string(), "N=3".to_string()]);
    }
    a
}

fn run(model: &str, extra: &[&str]) -> common::Run {
    let mut a = args_for(model);
    a.extend(extra.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = a.iter().map(String::as_str).collect();
    daec(&refs)
}

#[test]
fn formulations_of_every_model() {
    for model in valid_models() {
        let mut text = String::new();
        for form in FORMS {
            let r = run(&model, &["--form", form]);
            match r.code {
                0 => text.push_str(&r.stdout),
                1 => {
                    assert!(r.stdout.is_empty(), "{model} {form}");
                    text.push_str(&format!("{}: refused\n  {}", form.to_uppercase(), r.stderr));
                }
                c => panic!("{model} --form {form}: exit {c}\n{}", r.stderr),
            }
            text.push('\n');
        }
        assert_workspace_snapshot!(snapshot_name("regularize", &model), clip_long(&text));
    }
}

fn index_of(path: &str) -> (i32, Option<u64>, String) {
    let r = daec(&["analyze", path, "--format", "json"]);
    let v: Option<serde_json::Value> = serde_json::from_str(&r.stdout).ok();
    let idx = v.as_ref().and_then(|v| v["index"].as_u64());
    (r.code, idx, r.stderr)
}

#[test]
fn emitted_models_parse_and_have_the_expected_index() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-regularize-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut checked = 0;
    let mut failures: Vec<String> = Vec::new();
    for model in valid_models() {
        for form in ["ste", "dd", "ggl", "di1"] {
            let file = dir.join(format!(
                "{}_{form}.dae",
                snapshot_name("m", &model).replace("__", "_")
            ));
            let file_s = file.to_string_lossy().into_owned();
            let r = run(
                &model,
                &["--form", form, "--emit", "modelica", "-o", &file_s],
            );
            if r.code == 1 {
                continue; // the form does not apply (pinned in the snapshots)
            }
            assert_eq!(r.code, 0, "{model} {form}: {}", r.stderr);
            let (code, index, stderr) = index_of(&file_s);
            if code != 0 {
                failures.push(format!("{model} {form}: analyze failed:\n{stderr}"));
                continue;
            }
            let index = index.unwrap_or_else(|| panic!("{model} {form}: no index"));
            match form {
                // GGL: index 2 (steinbrecher2016 §5, (40); catalogue ν_Σ = 2).
                "ggl" => assert_eq!(index, 2, "{model} {form}"),
                // StE (Def. 2.6 / [21]), dummy derivatives, DI1: index ≤ 1.
                _ => assert!(index <= 1, "{model} {form}: index {index}"),
            }
            checked += 1;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 40, "only {checked} emitted models checked");
}

#[test]
fn pendulum_json_has_the_papers_counts() {
    let r = run(
        "models/steinbrecher/pendulum.dae",
        &["--form", "ada", "--emit", "json"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["form"], "ada");
    assert_eq!(v["equations"].as_array().unwrap().len(), 14);
    assert_eq!(v["unknowns"].as_array().unwrap().len(), 11);
    assert_eq!(v["differential_rows"], serde_json::json!([0, 1, 2, 3]));
    assert_eq!(v["constraint_rows"].as_array().unwrap().len(), 10);
    assert_eq!(v["equations"][0], "der(x) - v");
    let r = run(
        "models/steinbrecher/spring_chain.dae",
        &["--form", "hic", "--emit", "json"],
    );
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["equations"].as_array().unwrap().len(), 12);
    assert_eq!(v["unknowns"].as_array().unwrap().len(), 7);
    assert_eq!(v["levels"][11], 4);
}

#[test]
fn usage_and_model_errors() {
    let p = "models/steinbrecher/pendulum.dae";
    // Overdetermined forms are not flat Modelica: usage error.
    for form in ["ada", "hic"] {
        let r = daec(&["regularize", p, "--form", form, "--emit", "modelica"]);
        assert_eq!(r.code, 2);
        assert!(r.stderr.contains("overdetermined") && r.stderr.contains("--emit json"));
    }
    let r = daec(&["regularize", p, "--form", "xyz"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("unknown form `xyz`"), "{}", r.stderr);
    // A form that does not apply is an error in the model's domain: exit 1.
    let r = daec(&[
        "regularize",
        "models/steinbrecher/spring_chain.dae",
        "--form",
        "ggl",
    ]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .starts_with("error: the GGL formulation does not apply"),
        "{}",
        r.stderr
    );
}

#[test]
fn large_models_are_regularized_without_size_limits() {
    // StE of the spring chain with 10 000 masses (20 001 unknowns): the
    // analysis's success check is made block by block at every size and
    // StE checks its extension by the sparse LU, so no stage stops at a
    // size limit; the JSON output's `limits` field is an empty list and
    // no warning is printed, for the large model as for a small one.
    let model = "models/scale/spring_chain.dae";
    for n in ["N=10000", "N=3"] {
        let r = daec(&[
            "regularize",
            model,
            "-p",
            n,
            "--form",
            "ste",
            "--emit",
            "json",
        ]);
        assert_eq!(r.code, 0, "{n}: {}", r.stderr);
        assert!(!r.stderr.contains("warning"), "{n}: {}", r.stderr);
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(v["limits"], serde_json::json!([]), "{n}");
    }
}
