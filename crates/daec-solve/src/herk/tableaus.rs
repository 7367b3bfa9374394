//! Butcher tableaus of the explicit Runge–Kutta methods (a)–(e) of
//! Bäse (2017), section 4.1.2, used by the half-explicit method of
//! Algorithm 3.3.

use std::fmt;
use std::str::FromStr;

/// The explicit Runge–Kutta methods of Bäse (2017), section 4.1.2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Tableau {
    /// (a) forward Euler, `s = 1`, `p = 1`.
    Euler,
    /// (b) Heun's method, `s = 2`, `p = 2`.
    Heun,
    /// (c) Kutta's third-order method, `s = 3`, `p = 3`.
    Kutta3,
    /// (d) the classical fourth-order method, `s = 4`, `p = 4`.
    Rk4,
    /// (e) Brasey & Hairer's five-stage HEM4 (SIAM J. Numer. Anal. 30,
    /// 1993; Bäse 2017, 4.1.2 (e)), `s = 5`, `p = 4`.
    #[default]
    Hem4,
}

/// Coefficients `A` (strictly lower triangular, row-major `s × s`), `b`,
/// `c` and the order `p` of an explicit Runge–Kutta method.
#[derive(Debug, Clone, PartialEq)]
pub struct Coefficients {
    /// Number of stages `s`.
    pub stages: usize,
    /// `a[i * s + j]`, zero for `j ≥ i`.
    pub a: Vec<f64>,
    /// Weights `b_j`.
    pub b: Vec<f64>,
    /// Nodes `c_i`.
    pub c: Vec<f64>,
    /// Classical convergence order `p`.
    pub order: u32,
}

impl Tableau {
    /// All methods, in the order (a)–(e) of the paper.
    pub const ALL: [Tableau; 5] = [
        Tableau::Euler,
        Tableau::Heun,
        Tableau::Kutta3,
        Tableau::Rk4,
        Tableau::Hem4,
    ];

    /// The name used on the command line (`euler`, `heun`, `kutta3`,
    /// `rk4`, `hem4`).
    pub fn name(self) -> &'static str {
        match self {
            Tableau::Euler => "euler",
            Tableau::Heun => "heun",
            Tableau::Kutta3 => "kutta3",
            Tableau::Rk4 => "rk4",
            Tableau::Hem4 => "hem4",
        }
    }

    /// The Butcher tableau (Bäse 2017, 4.1.2 (a)–(e)).
    pub fn coefficients(self) -> Coefficients {
        let s6 = 6.0f64.sqrt();
        let (stages, a, b, c, order): (usize, Vec<f64>, Vec<f64>, Vec<f64>, u32) = match self {
            Tableau::Euler => (1, vec![0.0], vec![1.0], vec![0.0], 1),
            Tableau::Heun => (
                2,
                vec![0.0, 0.0, 1.0, 0.0],
                vec![0.5, 0.5],
                vec![0.0, 1.0],
                2,
            ),
            Tableau::Kutta3 => (
                3,
                vec![
                    0.0, 0.0, 0.0, //
                    0.5, 0.0, 0.0, //
                    -1.0, 2.0, 0.0,
                ],
                vec![1.0 / 6.0, 2.0 / 3.0, 1.0 / 6.0],
                vec![0.0, 0.5, 1.0],
                3,
            ),
            Tableau::Rk4 => (
                4,
                vec![
                    0.0, 0.0, 0.0, 0.0, //
                    0.5, 0.0, 0.0, 0.0, //
                    0.0, 0.5, 0.0, 0.0, //
                    0.0, 0.0, 1.0, 0.0,
                ],
                vec![1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0],
                vec![0.0, 0.5, 0.5, 1.0],
                4,
            ),
            Tableau::Hem4 => (
                5,
                vec![
                    0.0,
                    0.0,
                    0.0,
                    0.0,
                    0.0, //
                    3.0 / 10.0,
                    0.0,
                    0.0,
                    0.0,
                    0.0, //
                    (1.0 + s6) / 30.0,
                    (11.0 - 4.0 * s6) / 30.0,
                    0.0,
                    0.0,
                    0.0, //
                    (-79.0 - 31.0 * s6) / 150.0,
                    (-1.0 - 4.0 * s6) / 30.0,
                    (24.0 + 11.0 * s6) / 25.0,
                    0.0,
                    0.0, //
                    (14.0 + 5.0 * s6) / 6.0,
                    (-8.0 + 7.0 * s6) / 6.0,
                    (-9.0 - 7.0 * s6) / 4.0,
                    (9.0 - s6) / 4.0,
                    0.0,
                ],
                vec![0.0, 0.0, (16.0 - s6) / 36.0, (16.0 + s6) / 36.0, 1.0 / 9.0],
                vec![0.0, 3.0 / 10.0, (4.0 - s6) / 10.0, (4.0 + s6) / 10.0, 1.0],
                4,
            ),
        };
        Coefficients {
            stages,
            a,
            b,
            c,
            order,
        }
    }
}

impl fmt::Display for Tableau {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Tableau {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let l = s.trim().to_ascii_lowercase();
        Tableau::ALL
            .into_iter()
            .find(|t| t.name() == l)
            .ok_or_else(|| {
                format!(
                    "unknown tableau `{s}`; the tableaus are {}",
                    Tableau::ALL.map(Tableau::name).join(", ")
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The classical order conditions up to order 4 (Hairer–Nørsett–Wanner,
    /// Solving ODEs I, II.2, Table 2.2) and the row-sum condition.
    #[test]
    fn tableaus_satisfy_their_order_conditions() {
        for t in Tableau::ALL {
            let k = t.coefficients();
            let s = k.stages;
            let a = |i: usize, j: usize| k.a[i * s + j];
            for i in 0..s {
                let row: f64 = (0..s).map(|j| a(i, j)).sum();
                assert!((row - k.c[i]).abs() < 1e-14, "{t}: row sum {i}");
                for j in i..s {
                    assert_eq!(a(i, j), 0.0, "{t}: not explicit");
                }
            }
            let sum = |f: &dyn Fn(usize) -> f64| (0..s).map(f).sum::<f64>();
            let ac = |i: usize| sum(&|j| a(i, j) * k.c[j]);
            let mut conds: Vec<(f64, f64)> = vec![(sum(&|i| k.b[i]), 1.0)];
            if k.order >= 2 {
                conds.push((sum(&|i| k.b[i] * k.c[i]), 0.5));
            }
            if k.order >= 3 {
                conds.push((sum(&|i| k.b[i] * k.c[i] * k.c[i]), 1.0 / 3.0));
                conds.push((sum(&|i| k.b[i] * ac(i)), 1.0 / 6.0));
            }
            if k.order >= 4 {
                conds.push((sum(&|i| k.b[i] * k.c[i].powi(3)), 0.25));
                conds.push((sum(&|i| k.b[i] * k.c[i] * ac(i)), 1.0 / 8.0));
                conds.push((
                    sum(&|i| k.b[i] * sum(&|j| a(i, j) * k.c[j] * k.c[j])),
                    1.0 / 12.0,
                ));
                conds.push((sum(&|i| k.b[i] * sum(&|j| a(i, j) * ac(j))), 1.0 / 24.0));
            }
            for (n, (got, want)) in conds.into_iter().enumerate() {
                assert!(
                    (got - want).abs() < 1e-13,
                    "{t}: condition {n}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn names_round_trip() {
        for t in Tableau::ALL {
            assert_eq!(t.name().parse::<Tableau>(), Ok(t));
        }
        assert!("rk5".parse::<Tableau>().unwrap_err().contains("hem4"));
    }
}
