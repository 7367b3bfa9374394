//! The Gauss variant of the direct Runge–Kutta discretisation of
//! second-order DAEs (wunderlich2005 §2.2, Example 2.4): collocation (29)/(32) at the Gauss–Legendre nodes, with
//! `Ã = A²`, `b̃ = bA` (28f). With `s = 2` the paper's tableau
//! `c = (3 ∓ √3)/6`, `A = [1/4, (3 − 2√3)/12; (3 + 2√3)/12, 1/4]`,
//! `Ã = [1/24, (3 − 2√3)/24; (3 + 2√3)/24, 1/24]`, `b = (1/2, 1/2)`,
//! `b̃ = ((3 + √3)/12, (3 − √3)/12)`, of order `p = 4`.
//!
//! Gauss collocation is not stiffly accurate (`c_s < 1`): the positions
//! and velocities of the end point come from (32a) — they satisfy the
//! constraints only to the order of the method — and the end values of
//! the multipliers (and of unknowns appearing only to first order) are the
//! stage polynomial's values at `c = 1`, `Σ_j L_j(1) X_j`. The step is that
//! of [`crate::SecondOrderRadau`] with [`crate::Family::Gauss`].

use crate::error::SolveError;
use crate::second_order::Collocation;

impl Collocation {
    /// Gauss–Legendre collocation with `s` stages (1 to 3; order `2s`).
    pub fn gauss(stages: usize) -> Result<Collocation, SolveError> {
        let c = match stages {
            1 => vec![0.5],
            2 => {
                let r = 3.0f64.sqrt() / 6.0;
                vec![0.5 - r, 0.5 + r]
            }
            3 => {
                let r = 15.0f64.sqrt() / 10.0;
                vec![0.5 - r, 0.5, 0.5 + r]
            }
            _ => {
                return Err(SolveError::InvalidOptions(format!(
                    "Gauss collocation with {stages} stages is not offered (1 to 3)"
                )));
            }
        };
        Ok(Collocation::from_nodes(c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tableau of Example 2.4 (Gauss, `s = 2`) as printed.
    #[test]
    fn example_2_4_gauss_tableau() {
        let m = Collocation::gauss(2).unwrap();
        let r = 3.0f64.sqrt();
        let close = |x: f64, y: f64| assert!((x - y).abs() < 1e-15, "{x} vs {y}");
        close(m.c[0], (3.0 - r) / 6.0);
        close(m.c[1], (3.0 + r) / 6.0);
        let a = [0.25, (3.0 - 2.0 * r) / 12.0, (3.0 + 2.0 * r) / 12.0, 0.25];
        let a2 = [
            1.0 / 24.0,
            (3.0 - 2.0 * r) / 24.0,
            (3.0 + 2.0 * r) / 24.0,
            1.0 / 24.0,
        ];
        for k in 0..4 {
            close(m.a[k], a[k]);
            close(m.a2[k], a2[k]);
        }
        close(m.b[0], 0.5);
        close(m.b[1], 0.5);
        close(m.b2[0], (3.0 + r) / 12.0);
        close(m.b2[1], (3.0 - r) / 12.0);
        assert!(Collocation::gauss(4).is_err());
    }
}
