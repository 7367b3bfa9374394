//! Catalogue examples (`problem-catalogue.md`) with the numbers printed in the papers.

use daec_structure::*;

/// Σ from a dense table, `-1` = −∞.
fn sigma(rows: &[&[i32]]) -> SigmaMatrix {
    let n_cols = rows.first().map_or(0, |r| r.len());
    SigmaMatrix::from_entries(
        rows.len(),
        n_cols,
        rows.iter().enumerate().flat_map(|(i, r)| {
            r.iter()
                .enumerate()
                .filter(|&(_, &o)| o >= 0)
                .map(move |(j, &o)| (i, j, o as u32))
        }),
    )
}

/// steinbrecher2016 Ex. 2.7, (12): pendulum, unknowns x, y, v, w, λ.
fn pendulum() -> SigmaMatrix {
    sigma(&[
        &[1, -1, 0, -1, -1],
        &[-1, 1, -1, 0, -1],
        &[0, -1, 1, -1, 0],
        &[-1, 0, -1, 1, 0],
        &[0, 0, -1, -1, -1],
    ])
}

/// steinbrecher2016 Ex. 2.8, (18): spring chain, unknowns p1, p2, p3, v1, v2, v3, F.
fn spring_chain() -> SigmaMatrix {
    sigma(&[
        &[1, -1, -1, 0, -1, -1, -1],
        &[-1, 1, -1, -1, 0, -1, -1],
        &[-1, -1, 1, -1, -1, 0, -1],
        &[0, 0, -1, 1, -1, -1, 0],
        &[0, 0, 0, -1, 1, -1, -1],
        &[-1, 0, 0, -1, -1, 1, 0],
        &[-1, 0, -1, -1, -1, -1, -1],
    ])
}

#[test]
fn s1_pendulum_offsets_index_dof_and_both_hvts() {
    let s = pendulum();
    let a = analyze(&s).unwrap();
    assert_eq!(a.offsets.c, vec![1, 1, 0, 0, 2]);
    assert_eq!(a.offsets.d, vec![2, 2, 1, 1, 0]);
    assert_eq!(a.structural_index, 3);
    assert_eq!(a.dof, 2);
    assert_eq!(a.hvt.value, 2);
    // The assignment solver's dual certificate only warm-starts the offsets.
    assert_eq!(a.hvt.dual_c, None);
    // Reduced derivative array (14): M = Σc + n = 9 equations; m_c = 3 constraints.
    assert_eq!(a.n_derivative_array, 9);
    assert_eq!(a.n_constraints, 3);
    // Σ-Jacobian pattern (13): [[1,0,−1,0,0],[0,1,0,−1,0],[0,0,m,0,2x],[0,0,0,m,2y],[2x,2y,0,0,0]].
    assert_eq!(
        a.tight(&s).collect::<Vec<_>>(),
        vec![
            (0, 0),
            (0, 2),
            (1, 1),
            (1, 3),
            (2, 2),
            (2, 4),
            (3, 3),
            (3, 4),
            (4, 0),
            (4, 1)
        ]
    );
    // T1 = {(1,3),(2,2),(3,5),(4,4),(5,1)}, T2 = {(1,1),(2,4),(3,3),(4,5),(5,2)} (1-based).
    let e = all_hvts(&s, &a.offsets, 10);
    assert_eq!(e.count, HvtCount::Exact(2));
    assert_eq!(e.hvts, vec![vec![0, 3, 2, 4, 1], vec![2, 1, 4, 3, 0]]);
    // One irreducible block, coarse and fine.
    assert_eq!(a.coarse_btf.len(), 1);
    assert_eq!(a.fine_btf.len(), 1);
    let p = pantelides(&s).unwrap();
    assert_eq!(p.differentiations, a.offsets.c);
    assert_eq!(p.max_var_order, a.offsets.d);
}

#[test]
fn s1_kappa_choice_follows_the_position() {
    // 𝔍 at (x, y) with m = 1: κ_T1 = 4x², κ_T2 = 4y² (steinbrecher2016 §3, StE).
    let jac = |x: f64, y: f64| {
        vec![
            (0, 0, 1.0),
            (0, 2, -1.0),
            (1, 1, 1.0),
            (1, 3, -1.0),
            (2, 2, 1.0),
            (2, 4, 2.0 * x),
            (3, 3, 1.0),
            (3, 4, 2.0 * y),
            (4, 0, 2.0 * x),
            (4, 1, 2.0 * y),
        ]
    };
    assert_eq!(
        max_weight_tight_transversal(5, &jac(0.8, -0.6)),
        Some(vec![2, 1, 4, 3, 0])
    );
    assert_eq!(
        max_weight_tight_transversal(5, &jac(0.6, -0.8)),
        Some(vec![0, 3, 2, 4, 1])
    );
    // At x = 0 only T2 has κ > 0.
    assert_eq!(
        max_weight_tight_transversal(5, &jac(0.0, -1.0)),
        Some(vec![0, 3, 2, 4, 1])
    );
}

#[test]
fn s2_spring_chain_offsets_index_and_hvts() {
    let s = spring_chain();
    let a = analyze(&s).unwrap();
    assert_eq!(a.offsets.c, vec![1, 3, 1, 0, 2, 0, 4]);
    assert_eq!(a.offsets.d, vec![2, 4, 2, 1, 3, 1, 0]);
    assert_eq!(a.structural_index, 5);
    assert_eq!(a.dof, 2);
    // (20): 18 equations; m_c = 7 + 11 − 13 = 5 constraints.
    assert_eq!(a.n_derivative_array, 18);
    assert_eq!(a.n_constraints, 5);
    // T1 = {(1,4),(2,5),(3,3),(4,7),(5,1),(6,6),(7,2)}, T2 = {(1,1),(2,5),(3,6),(4,4),(5,3),(6,7),(7,2)}.
    let e = all_hvts(&s, &a.offsets, 10);
    assert_eq!(e.count, HvtCount::Exact(2));
    assert_eq!(
        e.hvts,
        vec![vec![0, 4, 5, 3, 2, 6, 1], vec![3, 4, 2, 6, 0, 5, 1]]
    );
    let p = pantelides(&s).unwrap();
    assert_eq!(p.differentiations, vec![1, 3, 1, 0, 2, 0, 4]);
}

#[test]
fn b1_cv_loop_circuit() {
    // baese2017 (2.3): unknowns q1, q2, e1, e2, iV.
    let s = sigma(&[
        &[1, -1, 0, -1, 0],
        &[1, 1, -1, 0, -1],
        &[-1, -1, 0, -1, -1],
        &[0, -1, 0, 0, -1],
        &[-1, 0, -1, 0, -1],
    ]);
    let a = analyze(&s).unwrap();
    assert_eq!(a.offsets.c, vec![0, 0, 1, 1, 1]);
    assert_eq!(a.offsets.d, vec![1, 1, 1, 1, 0]);
    assert_eq!(a.structural_index, 2);
    assert_eq!(a.dof, 1);
    // e1 − sin(100t) = 0 is solved first, on its own, in both forms.
    assert_eq!(a.coarse_btf.block(0).rows, [2]);
    assert_eq!(a.coarse_btf.block(0).cols, [2]);
    assert_eq!(pantelides(&s).unwrap().differentiations, a.offsets.c);
}

#[test]
fn n13_index4_linear_structural_index_two() {
    // Synthesized NDSolve index-4 system: Σ says 2 (the true index 4 needs the conversion).
    // x1' − x3 + x4 = e^t; x2' = x1; x1' + x2' − x4' − x1 + x2 − x3 + 2x4 = 2e^t; x4 = e^t.
    let s = sigma(&[
        &[1, -1, 0, 0],
        &[0, 1, -1, -1],
        &[1, 1, 0, 1],
        &[-1, -1, -1, 0],
    ]);
    let a = analyze(&s).unwrap();
    assert_eq!(a.offsets.c, vec![0, 0, 0, 1]);
    assert_eq!(a.offsets.d, vec![1, 1, 0, 1]);
    assert_eq!(a.structural_index, 2);
    assert_eq!(a.dof, 2);
    assert_eq!(pantelides(&s).unwrap().differentiations, a.offsets.c);
}

#[test]
fn w2_second_order_circular_track() {
    // wunderlich2005 Ex. 1.3: y1'' = 2y2 + λy1, y2'' = −2y1 + λy2, y1² + y2² = 1.
    let s = sigma(&[&[2, 0, 0], &[0, 2, 0], &[0, 0, -1]]);
    let a = analyze(&s).unwrap();
    assert_eq!(a.offsets.c, vec![0, 0, 2]);
    assert_eq!(a.offsets.d, vec![2, 2, 0]);
    assert_eq!(a.structural_index, 3);
    assert_eq!(a.dof, 2);
    let p = pantelides(&s).unwrap();
    assert_eq!(p.differentiations, vec![0, 0, 2]);
    assert_eq!(p.max_var_order, vec![2, 2, 0]);
}

#[test]
fn pendulum_chain_generator_has_pendulum_offsets_per_link() {
    let s = generators::pendulum_chain(4);
    let a = analyze(&s).unwrap();
    assert_eq!(a.offsets.c, [1, 1, 0, 0, 2].repeat(4));
    assert_eq!(a.offsets.d, [2, 2, 1, 1, 0].repeat(4));
    assert_eq!(a.structural_index, 3);
    assert_eq!(a.dof, 8);
    assert_eq!(pantelides(&s).unwrap().differentiations, a.offsets.c);
}

#[test]
fn independent_pendulums_multiply_their_hvts() {
    // Three uncoupled pendulums: 2³ = 8 HVTs, 3 fine blocks.
    let p = pendulum();
    let s = SigmaMatrix::from_entries(
        15,
        15,
        (0..3).flat_map(|k| p.iter().map(move |(i, j, o)| (5 * k + i, 5 * k + j, o))),
    );
    let a = analyze(&s).unwrap();
    assert_eq!(a.fine_btf.len(), 3);
    assert_eq!(a.coarse_btf.len(), 3);
    let few = all_hvts(&s, &a.offsets, 4);
    assert_eq!(few.count, HvtCount::Exact(8));
    assert!(few.hvts.is_empty());
    let all = all_hvts(&s, &a.offsets, 8);
    assert_eq!(all.hvts.len(), 8);
    for t in &all.hvts {
        assert_eq!(
            Transversal::from_cols(&s, t.clone()).unwrap().value,
            a.hvt.value
        );
    }
}

#[test]
fn overdetermined_pendulum_is_diagnosed() {
    // baese2017 (2.9): the pendulum plus its three constraint levels: 8 equations, 5 unknowns.
    let s = sigma(&[
        &[1, -1, 0, -1, -1],
        &[-1, 1, -1, 0, -1],
        &[0, -1, 1, -1, 0],
        &[-1, 0, -1, 1, 0],
        &[0, 0, -1, -1, -1],
        &[0, 0, -1, -1, -1],
        &[0, 0, 0, 0, -1],
        &[0, 0, 0, 0, 0],
    ]);
    let e = analyze(&s).unwrap_err();
    assert_eq!(e.dm.matching_size, 5);
    assert_eq!(e.dm.unmatched_rows.len(), 3);
    assert_eq!(e.dm.over_rows.len(), 8);
    assert_eq!(e.dm.over_cols.len(), 5);
    assert!(e.dm.under_cols.is_empty());
    assert!(matches!(
        pantelides(&s),
        Err(PantelidesError::StructurallySingular(_))
    ));
}

#[test]
fn underdetermined_pendulum_without_constraint() {
    // Dropping x² + y² = ℓ² leaves λ undetermined.
    let s = sigma(&[
        &[1, -1, 0, -1, -1],
        &[-1, 1, -1, 0, -1],
        &[0, -1, 1, -1, 0],
        &[-1, 0, -1, 1, 0],
    ]);
    let e = analyze(&s).unwrap_err();
    assert_eq!(e.dm.matching_size, 4);
    assert_eq!(e.dm.unmatched_cols.len(), 1);
    assert_eq!(e.dm.under_cols, vec![0, 1, 2, 3, 4]);
    assert_eq!(e.dm.under_rows, vec![0, 1, 2, 3]);
    assert!(e.dm.over_rows.is_empty());
    assert_eq!(
        e.to_string(),
        "structurally singular: 4 equations, 5 unknowns, structural rank 4; \
         under-determined: 4 equations in 5 unknowns"
    );
}

#[test]
fn square_but_structurally_singular_names_both_parts() {
    // x' = 1, x = t, and y absent: two equations for x, none for y.
    let s = sigma(&[&[1, -1], &[0, -1]]);
    let e = analyze(&s).unwrap_err();
    assert_eq!(e.dm.over_rows, vec![0, 1]);
    assert_eq!(e.dm.over_cols, vec![0]);
    assert_eq!(e.dm.under_cols, vec![1]);
    assert!(e.dm.under_rows.is_empty());
    assert!(pantelides(&s).is_err());
    assert!(highest_value_transversal(&s).is_err());
}

#[test]
fn empty_and_trivial_systems() {
    let a = analyze(&SigmaMatrix::new(0, 0)).unwrap();
    assert_eq!(a.structural_index, 0);
    assert_eq!(a.dof, 0);
    assert!(a.coarse_btf.is_empty());
    // An ODE x' = f(x): index 0 (no d_j = 0), dof 1.
    let a = analyze(&sigma(&[&[1]])).unwrap();
    assert_eq!(a.structural_index, 0);
    assert_eq!(a.dof, 1);
    // A purely algebraic equation: index 1.
    assert_eq!(analyze(&sigma(&[&[0]])).unwrap().structural_index, 1);
    // An empty row (equation without unknowns) is structurally singular, not a panic.
    assert!(analyze(&SigmaMatrix::new(1, 1)).is_err());
}

#[test]
fn scale_spring_chain_generator_matches_its_model_expectation() {
    // models/scale/spring_chain.dae, N = 10: index 5, dof 16.
    let s = generators::spring_chain(10);
    let a = analyze(&s).unwrap();
    let mut c = vec![3, 1];
    c.extend([0; 8]);
    c.extend([2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4]);
    let mut d = vec![4, 2];
    d.extend([1; 8]);
    d.extend([3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0]);
    assert_eq!(a.offsets.c, c);
    assert_eq!(a.offsets.d, d);
    assert_eq!(a.structural_index, 5);
    assert_eq!(a.dof, 16);
    assert_eq!(pantelides(&s).unwrap().differentiations, c);
    assert_eq!(generators::spring_chain(2).n_rows(), 0);
}

#[test]
fn hvts_of_a_long_chain_are_counted_not_listed() {
    // Each link has the pendulum's two local choices, coupled along the chain: far more than
    // the limit, so only a count (or a lower bound) is reported, within the step budget.
    let s = generators::pendulum_chain(20);
    let a = analyze(&s).unwrap();
    let e = all_hvts(&s, &a.offsets, 10);
    assert!(e.hvts.is_empty());
    // The enumeration stops at max(limit + 1, 10 000) transversals per block or at the work
    // budget (250 000 + 4·nnz steps); the reported lower bound is then 2^m for m disjoint
    // alternating cycles (one per link here).
    assert_eq!(e.count, HvtCount::AtLeast(1 << 20));
}
