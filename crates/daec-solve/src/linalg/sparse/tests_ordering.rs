//! Tests of the column ordering of the sparse LU on a matrix with dense
//! columns (`DENSE_COLUMN_FRACTION`).

use super::ordering::{colamd_order, colamd_order_u32, colamd_order_usize};
use super::{SparsePattern, SparseRealLu};
use crate::linalg::RealLu;

/// A matrix of the structure of Fekete's Newton matrix
/// (`models/testset/fekete.dae`, `n_pts` points, n = 8·n_pts): rows
/// `der(p) = q + 2μp` on the positions, velocity and `μ` columns;
/// rows `der(q) = …` on every position (the repulsion of every pair:
/// the dense block), the velocity and `λ` columns; the constraints
/// `|p_a|² = 1` and `p_a·q_a = 0` on the point's positions and
/// velocities. Columns: positions `0..3N`, velocities `3N..6N`, `μ`
/// `6N..7N`, `λ` `7N..8N`.
fn fekete_like(n_pts: usize) -> (usize, Vec<(usize, usize, f64)>) {
    let (np, n) = (3 * n_pts, 8 * n_pts);
    let (q0, mu0, la0) = (np, 2 * np, 2 * np + n_pts);
    let mut e = Vec::new();
    for i in 0..np {
        e.extend([(i, i, 5.0), (i, q0 + i, -1.0), (i, mu0 + i / 3, 0.5)]);
        let r = np + i;
        e.extend([(r, q0 + i, 6.0), (r, la0 + i / 3, 0.7)]);
        for j in 0..np {
            e.push((r, j, 0.01 * (((i * 7 + j * 3) % 11) as f64 - 5.0)));
        }
    }
    for a in 0..n_pts {
        for k in 0..3 {
            let w = 1.0 + 0.1 * k as f64;
            e.push((2 * np + a, 3 * a + k, w));
            e.extend([(2 * np + n_pts + a, 3 * a + k, 0.3)]);
            e.push((2 * np + n_pts + a, q0 + 3 * a + k, w + 0.1));
        }
    }
    (n, e)
}

#[test]
fn dense_columns_are_ordered_last_and_solve_as_the_dense_lu() {
    let n_pts = 20;
    let (n, e) = fekete_like(n_pts);
    let pat: Vec<(usize, usize)> = e.iter().map(|&(r, c, _)| (r, c)).collect();
    let (p, slot) = SparsePattern::new(n, &pat);
    // the 3N position columns (3N + 3 entries each, more than n/4)
    // are eliminated last, after every sparse column
    let (fwd, _) = colamd_order(&p);
    let mut last: Vec<usize> = fwd[n - 3 * n_pts..].to_vec();
    last.sort_unstable();
    assert_eq!(last, (0..3 * n_pts).collect::<Vec<_>>());
    // the sparse LU solves it as the dense LU does, to rounding
    let mut values = vec![0.0; p.nnz()];
    let mut dense = vec![0.0; n * n];
    for (&(r, c, v), &s) in e.iter().zip(&slot) {
        values[s] += v;
        dense[r * n + c] += v;
    }
    let b: Vec<f64> = (0..n).map(|i| ((i * 5) % 13) as f64 - 6.0).collect();
    let mut sparse = SparseRealLu::reusing_pivots(&p);
    sparse.factor(&p, &values).expect("nonsingular");
    let mut x = b.clone();
    sparse.solve(&mut x);
    let mut lu = RealLu::new(n);
    lu.factor(&dense).expect("nonsingular");
    let mut y = b.clone();
    lu.solve(&mut y);
    let scale = y.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for (got, want) in x.iter().zip(&y) {
        assert!((got - want).abs() <= 1e-12 * scale, "{got} vs {want}");
    }
    // and the residual of the sparse solution is at rounding level
    for (i, &bi) in b.iter().enumerate() {
        let ax: f64 = (0..n).map(|j| dense[i * n + j] * x[j]).sum();
        assert!(
            (ax - bi).abs() <= 1e-12 * (1.0 + bi.abs()),
            "row {i}: {ax} vs {bi}"
        );
    }
}

/// The pattern of `n` columns with a diagonal and `extra` entries at
/// pseudo-random places (a linear congruential sequence from `seed`),
/// and every `dense_every`-th column filled in a third of its rows.
fn random_pattern(n: usize, extra: usize, dense_every: usize, seed: u64) -> SparsePattern {
    let mut state = seed;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as usize
    };
    let mut pat: Vec<(usize, usize)> = (0..n).map(|i| (i, i)).collect();
    for _ in 0..extra {
        pat.push((next() % n, next() % n));
    }
    for c in (0..n).step_by(dense_every.max(1)) {
        for _ in 0..n / 3 {
            pat.push((next() % n, c));
        }
    }
    SparsePattern::new(n, &pat).0
}

#[test]
fn the_ordering_with_32_bit_indices_is_that_with_the_patterns_own() {
    let mut compared = 0;
    for (seed, &(n, extra, dense_every)) in [
        (1, 1, 1),
        (2, 0, 1),
        (7, 20, 3),
        (50, 150, 11),
        (200, 900, 37),
        (400, 1200, 1000),
        (1000, 5000, 97),
    ]
    .iter()
    .enumerate()
    {
        let p = random_pattern(n, extra, dense_every, seed as u64 + 17);
        let narrow = colamd_order_u32(&p).expect("32-bit indices fit");
        let wide = colamd_order_usize(&p);
        assert_eq!(narrow, wide, "n = {n}, {extra} entries");
        // a permutation and its inverse
        assert!((0..n).all(|k| narrow.1[narrow.0[k]] == k));
        compared += 1;
    }
    assert_eq!(compared, 7);
    // the ordering the LU takes is the 32-bit one where it fits
    let p = random_pattern(300, 1000, 29, 5);
    assert_eq!(colamd_order(&p), colamd_order_usize(&p));
}
