//! Equation selection for overdetermined quasi-linear DAEs.
//!
//! QUALIDAES (Steinbrecher 2016, section 4, system (39)) integrates
//! `E(t,z) ż = k(t,z)`, `0 = g(t,z)` with `m_d + m_c ≥ n` such that the
//! constraints are solved exactly while the differential part holds in an
//! "approximative sense". We realise this with a rank-revealing *selection*:
//! at every Jacobian evaluation, Gaussian elimination with complete pivoting
//! first picks a maximal set of linearly independent constraint rows of
//! `G = ∂g/∂z` (so redundant constraints, like the repeated level-0
//! constraint of the pendulum HiC form (38), are harmless), and then
//! completes the rank with the rows of `E` restricted to the complement
//! eliminated by those pivots — i.e. the differential equations are
//! projected onto a coordinate complement of the constraint manifold's
//! normal space. The selected rows form a square DAE whose Newton matrix
//! `γ/h·M − J` is nonsingular for small `h` whenever the overdetermined DAE
//! is regular (rank `[E; G] = n`).

/// Rows chosen from the differential part and from the constraints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EquationSelection {
    /// Indices (into `0..n_d`) of the differential rows kept, ascending.
    pub diff_rows: Vec<usize>,
    /// Indices (into `0..n_g`) of the constraint rows kept, ascending.
    pub constraint_rows: Vec<usize>,
}

/// Relative pivot threshold below which a row is considered dependent.
const RANK_TOL: f64 = 1e-10;

/// Selects `n` rows from the dense row-major `e` (`n_d × n`) and `g`
/// (`n_g × n`): first a maximal independent set of constraint rows, then
/// differential rows completing the rank. Returns `Err(rank)` if
/// `[E; G]` has rank below `n`.
pub fn select_equations(
    n: usize,
    e: &[f64],
    n_d: usize,
    g: &[f64],
    n_g: usize,
) -> Result<EquationSelection, usize> {
    // Work matrix: constraint rows first, then differential rows; each row
    // normalised by its infinity norm so that the threshold is scale-free.
    let rows = n_g + n_d;
    let mut w = Vec::with_capacity(rows * n);
    w.extend_from_slice(g);
    w.extend_from_slice(e);
    for r in 0..rows {
        let row = &mut w[r * n..(r + 1) * n];
        let m = row.iter().fold(0.0f64, |a, &x| a.max(x.abs()));
        if m > 0.0 && m.is_finite() {
            row.iter_mut().for_each(|x| *x /= m);
        }
    }
    let mut row_used = vec![false; rows];
    let mut col_used = vec![false; n];
    let mut sel = EquationSelection {
        diff_rows: Vec::new(),
        constraint_rows: Vec::new(),
    };
    let mut rank = 0;
    for (lo, hi) in [(0, n_g), (n_g, rows)] {
        while rank < n {
            // complete pivoting within the current block of rows
            let mut best = 0.0;
            let mut piv = None;
            for r in lo..hi {
                if row_used[r] {
                    continue;
                }
                for c in 0..n {
                    if !col_used[c] {
                        let v = w[r * n + c].abs();
                        if v > best {
                            best = v;
                            piv = Some((r, c));
                        }
                    }
                }
            }
            let Some((pr, pc)) = piv else { break };
            if best <= RANK_TOL || !best.is_finite() {
                break;
            }
            row_used[pr] = true;
            col_used[pc] = true;
            rank += 1;
            if pr < n_g {
                sel.constraint_rows.push(pr);
            } else {
                sel.diff_rows.push(pr - n_g);
            }
            let p = w[pr * n + pc];
            for r in 0..rows {
                if row_used[r] {
                    continue;
                }
                let f = w[r * n + pc] / p;
                if f != 0.0 {
                    for c in 0..n {
                        w[r * n + c] -= f * w[pr * n + c];
                    }
                    w[r * n + pc] = 0.0;
                }
            }
        }
    }
    if rank < n {
        return Err(rank);
    }
    sel.diff_rows.sort_unstable();
    sel.constraint_rows.sort_unstable();
    Ok(sel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pendulum_hic_drops_the_repeated_constraint_and_two_velocity_rows() {
        // z = (x, y, v, w, λ) at the horizontal start x = 1, m = l = 1.
        let n = 5;
        let e = [
            1.0, 0.0, 0.0, 0.0, 0.0, //
            0.0, 1.0, 0.0, 0.0, 0.0, //
            0.0, 0.0, 1.0, 0.0, 0.0, //
            0.0, 0.0, 0.0, 1.0, 0.0,
        ];
        let g = [
            2.0, 0.0, 0.0, 0.0, 0.0, // x² + y² − 1
            2.0, 0.0, 0.0, 0.0, 0.0, // repeated
            0.0, 0.0, 2.0, 0.0, 0.0, // 2xv + 2yw (v = w = 0)
            0.0, -13.75, 0.0, 0.0, -2.0, // level 2
        ];
        let s = select_equations(n, &e, 4, &g, 4).unwrap();
        assert_eq!(s.constraint_rows.len(), 3);
        assert!(s.constraint_rows.contains(&2) && s.constraint_rows.contains(&3));
        // x and v are fixed by the constraints, so der(y) and der(w) remain
        assert_eq!(s.diff_rows, vec![1, 3]);
    }

    #[test]
    fn rank_deficient_system_is_reported() {
        let e = [1.0, 0.0, 0.0];
        let g = [1.0, 0.0, 0.0];
        assert_eq!(select_equations(3, &e, 1, &g, 1), Err(1));
    }
}
