//! Under an address-space limit (`ulimit -v`), a model too large for the
//! memory left is refused with a located diagnostic (exit 1) before it is
//! expanded — not aborted by a failed allocation.

use std::path::PathBuf;
use std::process::Command;

/// Runs the built `daec` with `args` under `ulimit -v 4000000` (4 GB).
fn daec_limited(args: &[&str]) -> (Option<i32>, String) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4000000 && exec \"$@\"")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_daec"))
        .args(args)
        .current_dir(root)
        .output()
        .expect("sh runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn an_oversized_model_under_an_address_space_limit_is_refused() {
    if !cfg!(target_os = "linux") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("daec-memory-limit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("flat.dae");
    let out = out.to_str().unwrap();
    let chain = "models/scale/pendulum_chain.dae";
    for args in [
        &["flatten", "-p", "N=1000000", chain, "-o", out][..],
        &["analyze", "-p", "N=1000000", chain, "-o", out][..],
        &["simulate", "-p", "N=10000000", chain, "-o", out][..],
    ] {
        let (code, stderr) = daec_limited(args);
        assert_eq!(code, Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("error[E0115]: the model is too large: it has"),
            "{args:?}: {stderr}"
        );
        assert!(
            stderr.contains("pendulum_chain.dae:26:3"),
            "{args:?}: {stderr}"
        );
    }
    let (code, stderr) = daec_limited(&["flatten", "-p", "N=1000000", chain, "-o", out]);
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("GB available (estimated at 1.2 kB per scalar unknown with its equation)"),
        "{stderr}"
    );
    let big = dir.join("big.dae");
    std::fs::write(
        &big,
        "model Big\n  Real x[3000000](each start = 1, each fixed = true);\nequation\n  der(x) = -x;\nend Big;\n",
    )
    .unwrap();
    let (code, stderr) = daec_limited(&["flatten", big.to_str().unwrap(), "-o", out]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("it has 3000000 scalar unknowns"),
        "{stderr}"
    );
    assert!(!std::path::Path::new(out).exists());
    let _ = std::fs::remove_dir_all(&dir);
}
