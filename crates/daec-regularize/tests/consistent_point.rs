//! The consistent point of a long pendulum chain: positions and
//! multipliers of thousands of units moved far from their start values,
//! projected onto the constraints to a tolerance near the round-off of the
//! constraints' terms.

use daec_diag::SourceMap;
use daec_expr::{ExprId, Leaf};
use daec_model::{Dae, LowerOptions};
use daec_regularize::{AnalyzeOptions, ProjectionOptions, analyze, consistent_point};

fn chain(n: usize) -> Dae {
    let path = format!(
        "{}/../../models/scale/pendulum_chain.dae",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).expect("the pendulum chain");
    let mut map = SourceMap::new();
    let file = map.add("m.dae", text);
    let parsed = daec_syntax::parse(file, map.source(file));
    let options = LowerOptions {
        overrides: vec![("N".to_string(), n as f64)],
        ..LowerOptions::default()
    };
    let (dae, diags) = daec_model::lower(parsed.model.as_ref().expect("a model"), &options);
    dae.unwrap_or_else(|| panic!("{diags:?}"))
}

#[test]
fn a_long_chain_far_from_its_start_values_converges_to_a_tight_tolerance() {
    let n = 800;
    let mut dae = chain(n);
    let analysis = analyze(&mut dae, &AnalyzeOptions::default());
    let regular = analysis.regular().expect("regular");
    let found = regular.success.point.as_ref().expect("a consistent point");
    assert!(found.converged, "{found:?}");
    // the constraints and the initial equations, as the success check
    // projects them
    let ca = regular
        .constraints
        .as_ref()
        .expect("the hidden constraints");
    let mut eqs: Vec<ExprId> = ca.constraints.iter().map(|c| c.expr).collect();
    for k in 0..dae.initial_equations.len() {
        let e = ca.substitute_derivatives(&mut dae.pool, dae.initial_equations[k].residual);
        eqs.push(e);
    }
    let mut state: Vec<(u32, u32)> = eqs
        .iter()
        .flat_map(|&e| dae.pool.leaves(e))
        .filter_map(|l| match dae.pool.as_leaf(l) {
            Some(Leaf::Var { unknown, order }) => Some((unknown, order)),
            _ => None,
        })
        .collect();
    state.sort_unstable();
    state.dedup();
    let start: Vec<f64> = state
        .iter()
        .map(|&(j, l)| match l {
            0 => dae.unknowns[j as usize].start().unwrap_or(0.0),
            _ => 0.0,
        })
        .collect();
    let params = dae.parameter_values();
    let m = state.len();
    // residual below 1e-14·(1 + max|x|): a few units in the last place of
    // the largest terms (the multipliers, about 4500, times 8)
    let options = ProjectionOptions {
        tol: 1e-14,
        max_iter: 50,
    };
    let p = consistent_point(
        &mut dae.pool,
        &eqs,
        &state,
        &start,
        &vec![false; m],
        &vec![1.0; m],
        &params,
        0.0,
        &options,
    );
    let largest = p.z.iter().fold(0.0f64, |a, x| a.max(x.abs()));
    assert!(
        largest > 1e3,
        "the multipliers grow with the chain: {largest}"
    );
    assert!(
        p.converged,
        "residual {:e} after {} iterations",
        p.residual, p.iterations
    );
    assert!(p.residual <= 1e-14 * (1.0 + largest));
    assert!(p.iterations <= 8, "{} iterations", p.iterations);
    // the end of the chain hangs at N·L·(sin θ0, −cos θ0)
    let x_end = state
        .iter()
        .position(|&(j, l)| l == 0 && dae.unknowns[j as usize].source_name() == format!("x[{n}]"))
        .expect("x[N]");
    assert!((p.z[x_end] - n as f64 * 0.5f64.sin()).abs() < 1e-9 * n as f64);
}
