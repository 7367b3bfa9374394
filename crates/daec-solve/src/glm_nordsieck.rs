//! General linear methods for second-order DAEs in Nordsieck form
//! (wunderlich2005 §2.3, eqs. (35)–(61)).
//!
//! A `k`-value `s`-stage method passes the Nordsieck vector
//! `y^[n] ≈ [y(t_n), h ẏ(t_n), h² ÿ(t_n)]` (40) from step to step and
//! computes, with the stage accelerations `Ẍ_n` of the stage equations
//! (60b),
//!
//! ```text
//!   X_n   = Ũ ỹ^[n−1] + h² Ã Ẍ_n,      Ẋ_n = U ỹ^[n−1] + h A Ẍ_n,   (60c)
//!   y^[n] = Ṽ ỹ^[n−1] + h² B̃ Ẍ_n,                                 (60a)
//! ```
//!
//! where `ỹ^[n−1] = D(h_n/h_{n−1}) y^[n−1]` is the incoming vector
//! rescaled to the new step (57)–(58): `[y, h_n ẏ, h_n² ÿ]`. The matrices
//! `Ũ`, `U`, `Ṽ` follow from `Ã`, `A`, `B̃` and `c` by the order conditions
//! (54) (Remark 2.10).
//!
//! [`GeneralLinear`] holds such a method: the order-2 method of
//! Example 2.11 (`c = (1/4, 1/2, 1)`), or a collocation Runge–Kutta method
//! (29) written as a general linear method by (39) (Example 2.7). Both are
//! run by [`crate::SecondOrderRadau`], whose step forms `ỹ^[n−1]` from the
//! unscaled values `(x, ẋ, ẍ)` with the new step size — the rescaling (58)
//! — so that the step size may change from step to step.
//!
//! In Example 2.11 the third columns of `Ũ` and `U` and the first two
//! entries of the third column of `Ṽ` are zero, and the third rows of `B̃`
//! and `Ṽ` carry `h² ÿ` unchanged: the third Nordsieck component enters no
//! result, and the integrator keeps there the acceleration of the last
//! stage instead (its Newton start for the next step).

use crate::second_order::Collocation;

/// A general linear method (37) for second-order systems in Nordsieck form
/// with `k = 3` values `[y, hẏ, h²ÿ]`; the matrices are row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneralLinear {
    /// Nodes `c` (stage `i` approximates `y(t_{n−1} + c_i h)`).
    pub c: Vec<f64>,
    /// `A` (`s × s`): stage velocities from stage accelerations.
    pub a: Vec<f64>,
    /// `Ã` (`s × s`): stage positions from stage accelerations.
    pub a2: Vec<f64>,
    /// `Ũ` (`s × 3`).
    pub u2: Vec<f64>,
    /// `h·U` (`s × 3`; `U` carries the factor `1/h` of (39)).
    pub u1: Vec<f64>,
    /// The first two rows of `B̃` (`2 × s`): the outputs `y` and `hẏ`.
    pub b2: Vec<f64>,
    /// The first two rows of `Ṽ` (`2 × 3`).
    pub v2: Vec<f64>,
    /// `L_j(1)`: the value at `c = 1` of the polynomial through the stage
    /// values (the end values of first-order and algebraic unknowns).
    pub end: Vec<f64>,
    /// The order `p` the step-size control assumes.
    pub order: u32,
}

impl GeneralLinear {
    /// Number of stages.
    pub fn stages(&self) -> usize {
        self.c.len()
    }

    /// A collocation method (29) as a general linear method (39)
    /// (Example 2.7): `Ũ = [e, c, 0]`, `hU = [0, e, 0]`,
    /// `Ṽ = [1 1 0; 0 1 0]`, `B̃ = [b̃ᵀ; bᵀ]`.
    pub fn from_collocation(method: &Collocation, order: u32) -> GeneralLinear {
        let s = method.stages();
        let mut u2 = Vec::with_capacity(3 * s);
        let mut u1 = Vec::with_capacity(3 * s);
        for &ci in &method.c {
            u2.extend([1.0, ci, 0.0]);
            u1.extend([0.0, 1.0, 0.0]);
        }
        let mut b2 = method.b2.clone();
        b2.extend(&method.b);
        GeneralLinear {
            c: method.c.clone(),
            a: method.a.clone(),
            a2: method.a2.clone(),
            u2,
            u1,
            b2,
            v2: vec![1.0, 1.0, 0.0, 0.0, 1.0, 0.0],
            end: lagrange_at_one(&method.c),
            order,
        }
    }

    /// The order-2 method of Example 2.11 (`p = q = 2`, `s = 3`,
    /// `c = (1/4, 1/2, 1)`), its coefficient matrix `M` (38) as printed.
    pub fn example_2_11() -> GeneralLinear {
        let c = vec![0.25, 0.5, 1.0];
        #[rustfmt::skip]
        let a2 = vec![
            37.0 / 432.0, -41.0 / 576.0, 29.0 / 1728.0,
            23.0 / 108.0, -1.0 / 9.0, 5.0 / 216.0,
            13.0 / 27.0, -1.0 / 18.0, 2.0 / 27.0,
        ];
        #[rustfmt::skip]
        let a = vec![
            4.0 / 9.0, -11.0 / 48.0, 5.0 / 144.0,
            5.0 / 9.0, -1.0 / 12.0, 1.0 / 36.0,
            4.0 / 9.0, 1.0 / 3.0, 2.0 / 9.0,
        ];
        #[rustfmt::skip]
        let u2 = vec![
            1.0, 0.25, 0.0,
            1.0, 0.5, 0.0,
            1.0, 1.0, 0.0,
        ];
        let u1 = [0.0, 1.0, 0.0].repeat(3);
        #[rustfmt::skip]
        let b2 = vec![
            13.0 / 27.0, -1.0 / 18.0, 2.0 / 27.0,
            4.0 / 9.0, 1.0 / 3.0, 2.0 / 9.0,
        ];
        let end = lagrange_at_one(&c);
        GeneralLinear {
            c,
            a,
            a2,
            u2,
            u1,
            b2,
            v2: vec![1.0, 1.0, 0.0, 0.0, 1.0, 0.0],
            end,
            order: 2,
        }
    }

    /// The largest residual of the order conditions (54) (Remark 2.10)
    /// for order and stage order `p = 2` with `Z = [1, z, z²]`:
    /// `Ũ = C − Ã C Kᵀ`, `hU = C Jᵀ − A C Kᵀ`, `Ṽ = E − B̃ C Kᵀ` with
    /// `C = [e, c, c²/2]`, so `C Kᵀ = [0, 0, e]` and `C Jᵀ = [0, e, c]`.
    pub fn order_condition_defect(&self) -> f64 {
        let s = self.stages();
        let mut worst = 0.0f64;
        for i in 0..s {
            let ci = self.c[i];
            let row_sum = |m: &[f64]| -> f64 { m[i * s..(i + 1) * s].iter().sum() };
            let u2 = [1.0, ci, ci * ci / 2.0 - row_sum(&self.a2)];
            let u1 = [0.0, 1.0, ci - row_sum(&self.a)];
            for e in 0..3 {
                worst = worst.max((self.u2[3 * i + e] - u2[e]).abs());
                worst = worst.max((self.u1[3 * i + e] - u1[e]).abs());
            }
        }
        let e = [[1.0, 1.0, 0.5], [0.0, 1.0, 1.0]];
        for (r, er) in e.iter().enumerate() {
            let bsum: f64 = self.b2[r * s..(r + 1) * s].iter().sum();
            let v = [er[0], er[1], er[2] - bsum];
            for (got, want) in self.v2[3 * r..3 * r + 3].iter().zip(v) {
                worst = worst.max((got - want).abs());
            }
        }
        worst
    }
}

/// `L_j(1)` for the Lagrange basis on the nodes `c` (27).
pub(crate) fn lagrange_at_one(c: &[f64]) -> Vec<f64> {
    (0..c.len())
        .map(|j| {
            c.iter()
                .enumerate()
                .filter(|&(l, _)| l != j)
                .map(|(_, &cl)| (1.0 - cl) / (c[j] - cl))
                .product()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Example 2.11 satisfies (54); its `A` is the collocation matrix of
    /// its nodes and `Ã = A²`, so the method is the 3-stage collocation
    /// method on `c = (1/4, 1/2, 1)` written in Nordsieck form.
    #[test]
    fn example_2_11_satisfies_the_order_conditions() {
        let m = GeneralLinear::example_2_11();
        assert!(
            m.order_condition_defect() < 1e-15,
            "{}",
            m.order_condition_defect()
        );
        let col = Collocation::from_nodes(m.c.clone());
        for (x, y) in m.a.iter().zip(&col.a) {
            assert!((x - y).abs() < 1e-15);
        }
        for (x, y) in m.a2.iter().zip(&col.a2) {
            assert!((x - y).abs() < 1e-15);
        }
        assert_eq!(m.end, vec![0.0, 0.0, 1.0]);
    }

    /// Example 2.7: a collocation method is a general linear method
    /// satisfying (54).
    #[test]
    fn collocation_methods_are_general_linear_methods() {
        for col in [
            Collocation::radau_iia(3).unwrap(),
            Collocation::gauss(2).unwrap(),
        ] {
            let m = GeneralLinear::from_collocation(&col, 3);
            assert!(m.order_condition_defect() < 1e-14);
        }
    }
}
