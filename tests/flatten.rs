//! Directory-driven golden tests of the front end: every model of the
//! library flattens, its flat text is pinned, and flattening is idempotent;
//! every model under `models/err/` fails with its pinned diagnostics.

mod common;

use common::{clip_long, daec, models_under, snapshot_name, valid_models};

#[test]
fn the_library_has_the_papers_models() {
    let models = valid_models();
    assert!(
        models.len() >= 25,
        "only {} models: {models:?}",
        models.len()
    );
    for needed in [
        "models/steinbrecher/pendulum.dae",
        "models/steinbrecher/spring_chain.dae",
        "models/baese/cv_loop_circuit.dae",
        "models/baese/akzo_nobel.dae",
        "models/scale/pendulum_chain.dae",
    ] {
        assert!(models.iter().any(|m| m == needed), "missing {needed}");
    }
    assert!(models_under("err").len() >= 15);
}

#[test]
fn every_model_flattens_and_is_pinned() {
    for model in valid_models() {
        let r = daec(&["flatten", &model]);
        assert_eq!(r.code, 0, "{model} failed:\n{}", r.stderr);
        assert!(
            !r.stderr.contains("error"),
            "{model} printed errors:\n{}",
            r.stderr
        );
        assert_workspace_snapshot!(snapshot_name("flatten", &model), clip_long(&r.stdout));
    }
}

#[test]
fn flatten_is_idempotent() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("daec-roundtrip-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for model in valid_models() {
        let first = daec(&["flatten", &model]);
        assert_eq!(first.code, 0, "{model}: {}", first.stderr);
        let path = dir.join("flat.dae");
        std::fs::write(&path, &first.stdout).unwrap();
        let second = daec(&["flatten", path.to_str().unwrap()]);
        assert_eq!(
            second.code, 0,
            "{model}: flat text does not parse:\n{}",
            second.stderr
        );
        assert_eq!(
            first.stdout, second.stdout,
            "{model}: flatten∘flatten ≠ flatten"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_invalid_model_is_diagnosed_and_pinned() {
    let models = models_under("err");
    for model in models {
        let r = daec(&["flatten", &model]);
        assert_eq!(
            r.code, 1,
            "{model} should fail with exit 1:\n{}{}",
            r.stdout, r.stderr
        );
        assert!(r.stdout.is_empty(), "{model}: output despite errors");
        assert!(r.stderr.contains("error["), "{model}: {}", r.stderr);
        assert!(
            r.stderr.contains(&format!("{model}:")),
            "{model}: diagnostics must name file:line:col:\n{}",
            r.stderr
        );
        assert_workspace_snapshot!(snapshot_name("diagnostics", &model), r.stderr);
    }
}
