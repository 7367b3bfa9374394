//! An analysis reused for the same model with other parameter values
//! (`reanalyze`) equals the analysis of that model.

use daec_diag::SourceMap;
use daec_model::{Dae, LowerOptions};
use daec_regularize::{AnalyzeOptions, analyze, reanalyze, reusable};

fn lowered(text: &str, overrides: &[(&str, f64)]) -> Dae {
    let mut map = SourceMap::new();
    let file = map.add("m.dae", text.to_string());
    let parsed = daec_syntax::parse(file, map.source(file));
    let options = LowerOptions {
        overrides: overrides.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        ..LowerOptions::default()
    };
    let (dae, diags) = daec_model::lower(parsed.model.as_ref().expect("a model"), &options);
    dae.unwrap_or_else(|| panic!("{diags:?}"))
}

fn pendulum() -> String {
    let path = format!(
        "{}/../../models/steinbrecher/pendulum.dae",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path).expect("the pendulum")
}

/// `base` (lowered and analysed) reused for `run`: the DAE after the
/// reuse and its analysis, or `None`.
fn reuse(base: &Dae, run: &Dae) -> Option<(Dae, daec_regularize::Analysis)> {
    let mut after = base.clone();
    let analysis = analyze(&mut after, &AnalyzeOptions::default());
    assert!(reusable(&analysis));
    assert!(base.same_structure(run));
    let mut rebound = after;
    rebound.parameters.clone_from(&run.parameters);
    rebound.unknowns.clone_from(&run.unknowns);
    let again = reanalyze(&mut rebound, &analysis, &AnalyzeOptions::default())?;
    Some((rebound, again))
}

#[test]
fn a_reused_analysis_equals_the_analysis_at_the_new_values() {
    let text = pendulum();
    let base = lowered(&text, &[("g", 9.81), ("l", 1.0)]);
    let mut run = lowered(&text, &[("g", 1.0), ("l", 2.0)]);
    let (rebound, again) = reuse(&base, &run).expect("the same pivots");
    let fresh = analyze(&mut run, &AnalyzeOptions::default());
    // the same pool, node for node, and the same constraints
    assert!(rebound.pool.same_nodes(&run.pool));
    let (a, b) = (
        again.regular().expect("regular"),
        fresh.regular().expect("regular"),
    );
    assert_eq!(a.constraints, b.constraints);
    let point = |r: &daec_regularize::Regular| -> Vec<u64> {
        let p = r.success.point.as_ref().expect("a consistent point");
        p.z.iter().map(|x| x.to_bits()).collect()
    };
    assert_eq!(point(a), point(b));
    assert_eq!(
        a.success.determinant.map(f64::to_bits),
        b.success.determinant.map(f64::to_bits)
    );
    // (−4·m·l² at the consistent point: l = 2 now)
    let det = a.success.determinant.expect("a determinant");
    assert!((det.abs() - 16.0).abs() < 1e-9, "{det}");
}

#[test]
fn a_sigma_jacobian_singular_at_the_new_values_is_not_reused() {
    let text = "model M\n  parameter Real k = 1;\n  Real x(start = 1);\n  Real y;\nequation\n  der(x) = -x;\n  k*y = x;\nend M;\n";
    let base = lowered(text, &[("k", 1.0)]);
    assert!(reuse(&base, &lowered(text, &[("k", 2.0)])).is_some());
    // y drops out at k = 0: the full analysis finds 𝔍 singular
    let mut run = lowered(text, &[("k", 0.0)]);
    assert!(reuse(&base, &run).is_none());
    assert!(!reusable(&analyze(&mut run, &AnalyzeOptions::default())));
}
