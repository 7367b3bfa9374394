//! Signature matrices of scalable test models (for benchmarks and tests).

use crate::sigma::SigmaMatrix;

/// Σ of a planar chain of `links` pendulums in first-order form (5 equations per link).
///
/// Link k has unknowns `x_k, y_k, v_k, w_k, λ_k` (columns `5k..5k+5`) and equations
/// ```text
/// x_k' − v_k = 0
/// y_k' − w_k = 0
/// m v_k' + λ_k (x_k − x_{k−1}) − λ_{k+1} (x_{k+1} − x_k) = 0
/// m w_k' + λ_k (y_k − y_{k−1}) − λ_{k+1} (y_{k+1} − y_k) + m g = 0
/// (x_k − x_{k−1})² + (y_k − y_{k−1})² − ℓ² = 0
/// ```
/// (link 0 hangs from the fixed origin; the last link has no λ_{k+1}). For one link this
/// is steinbrecher2016 (10). Every link has offsets c = (1,1,0,0,2), d = (2,2,1,1,0).
pub fn pendulum_chain(links: usize) -> SigmaMatrix {
    let n = 5 * links;
    let mut e = Vec::with_capacity(16 * links);
    let (x, y, v, w, l) = (0, 1, 2, 3, 4);
    for k in 0..links {
        let b = 5 * k;
        let prev = k.checked_sub(1).map(|p| 5 * p);
        let next = (k + 1 < links).then_some(5 * (k + 1));
        e.push((b, b + x, 1));
        e.push((b, b + v, 0));
        e.push((b + 1, b + y, 1));
        e.push((b + 1, b + w, 0));
        for (row, pos, vel) in [(b + 2, x, v), (b + 3, y, w)] {
            e.push((row, b + vel, 1));
            e.push((row, b + l, 0));
            e.push((row, b + pos, 0));
            if let Some(p) = prev {
                e.push((row, p + pos, 0));
            }
            if let Some(q) = next {
                e.push((row, q + l, 0));
                e.push((row, q + pos, 0));
            }
        }
        e.push((b + 4, b + x, 0));
        e.push((b + 4, b + y, 0));
        if let Some(p) = prev {
            e.push((b + 4, p + x, 0));
            e.push((b + 4, p + y, 0));
        }
    }
    SigmaMatrix::from_entries(n, n, e)
}

/// Σ of the scaling spring chain `models/scale/spring_chain.dae` with `masses ≥ 3` masses
/// (2·masses + 1 equations; index 5 like steinbrecher2016 Ex. 2.8).
///
/// Unknowns `p_1..p_N` (columns `0..N`), `v_1..v_N` (columns `N..2N`), `F` (column `2N`);
/// equations `p_k' = v_k` (rows `0..N`), `m v_k' = c (p_{k−1} − 2 p_k + p_{k+1}) [+ F for
/// k = 2]` (rows `N..2N`), and the path `p_1 = sin t` (row `2N`). Fewer than 3 masses give
/// an empty matrix.
pub fn spring_chain(masses: usize) -> SigmaMatrix {
    if masses < 3 {
        return SigmaMatrix::new(0, 0);
    }
    let n = masses;
    let (p, v, f) = (0, n, 2 * n);
    let mut e = Vec::with_capacity(7 * n);
    for k in 0..n {
        e.push((k, p + k, 1));
        e.push((k, v + k, 0));
        let row = n + k;
        e.push((row, v + k, 1));
        e.push((row, p + k, 0));
        if k > 0 {
            e.push((row, p + k - 1, 0));
        }
        if k + 1 < n {
            e.push((row, p + k + 1, 0));
        }
        if k == 1 {
            e.push((row, f, 0));
        }
    }
    e.push((2 * n, p, 0));
    SigmaMatrix::from_entries(2 * n + 1, 2 * n + 1, e)
}

/// Σ of the scaling model `models/scale/pendulum_chain.dae` with `links` links
/// (7 equations and 7 unknowns per link; index 3).
///
/// Unknowns in the model's declaration order: `x` (columns `0..N`), `y` (`N..2N`), `v`
/// (`2N..3N`), `w` (`3N..4N`), the link vectors `dx` (`4N..5N`), `dy` (`5N..6N`) and the
/// multipliers `λ` (`6N..7N`). Equations in flattened source order:
/// ```text
/// rows 2k, 2k+1           x_k' = v_k,  y_k' = w_k
/// rows 2N+2k, 2N+2k+1     dx_k = x_k − x_{k−1},  dy_k = y_k − y_{k−1}   (x_0 = y_0 = 0)
/// rows 4N+2k, 4N+2k+1     m v_k' = −2 λ_k dx_k + 2 λ_{k+1} dx_{k+1}   (same for w, dy, − m g)
/// row  6N+k               dx_k² + dy_k² = L²
/// ```
/// (the last link has no `k+1` terms). Canonical offsets: c = 1 on the der rows, 2 on the
/// link-vector and constraint rows, 0 on the force rows; d = 2 for x, y, dx, dy, 1 for v, w
/// and 0 for λ. Unlike [`pendulum_chain`], the positions are coupled to each other only
/// through the link vectors, which gives long alternating paths to assignment solvers.
pub fn pendulum_chain_link_vectors(links: usize) -> SigmaMatrix {
    let n = links;
    let (x, y, v, w, dx, dy, lam) = (0, n, 2 * n, 3 * n, 4 * n, 5 * n, 6 * n);
    let mut e = Vec::with_capacity(22 * n);
    for k in 0..n {
        // der(x[k]) = v[k]; der(y[k]) = w[k].
        e.push((2 * k, x + k, 1));
        e.push((2 * k, v + k, 0));
        e.push((2 * k + 1, y + k, 1));
        e.push((2 * k + 1, w + k, 0));
        // Link vectors.
        for (r, pos, d) in [(2 * n + 2 * k, x, dx), (2 * n + 2 * k + 1, y, dy)] {
            e.push((r, d + k, 0));
            e.push((r, pos + k, 0));
            if k > 0 {
                e.push((r, pos + k - 1, 0));
            }
        }
        // Forces.
        for (r, vel, d) in [(4 * n + 2 * k, v, dx), (4 * n + 2 * k + 1, w, dy)] {
            e.push((r, vel + k, 1));
            e.push((r, lam + k, 0));
            e.push((r, d + k, 0));
            if k + 1 < n {
                e.push((r, lam + k + 1, 0));
                e.push((r, d + k + 1, 0));
            }
        }
        // Rigid link.
        e.push((6 * n + k, dx + k, 0));
        e.push((6 * n + k, dy + k, 0));
    }
    SigmaMatrix::from_entries(7 * n, 7 * n, e)
}
