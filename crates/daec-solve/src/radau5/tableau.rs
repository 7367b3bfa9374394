//! Coefficients of the 3-stage Radau IIA method (order 5) and of its
//! transformation to one real and one complex linear system.
//!
//! Hairer & Wanner, Solving ODEs II, section IV.8: `A^{-1}` has one real
//! eigenvalue `γ̂` and a complex pair `α̂ ± iβ̂`; with `T` such that
//! `T^{-1} A^{-1} T = [[γ̂,0,0],[0,α̂,−β̂],[0,β̂,α̂]]` the simplified Newton
//! system of dimension `3n` decouples into a real system with matrix
//! `γ̂/h·M − J` and a complex system with matrix `(α̂+iβ̂)/h·M − J`
//! (IV.8, equations (8.15)–(8.17)). The embedded error estimate uses
//! `γ0 = γ̂` and the coefficients `e_i` of (IV.8.19)–(IV.8.20).

/// √6.
const SQ6: f64 = 2.449_489_742_783_178;

/// Nodes `c1, c2` (`c3 = 1`).
pub const C1: f64 = (4.0 - SQ6) / 10.0;
/// Second node.
pub const C2: f64 = (4.0 + SQ6) / 10.0;

/// Error-estimate coefficients `e_i/γ0` applied to the stage increments
/// (Solving ODEs II, IV.8, (8.20)).
pub const DD: [f64; 3] = [
    -(13.0 + 7.0 * SQ6) / 3.0,
    (-13.0 + 7.0 * SQ6) / 3.0,
    -1.0 / 3.0,
];

/// The Runge–Kutta matrix `A` of Radau IIA, s = 3 (Solving ODEs II, Table IV.5.6).
pub const A: [[f64; 3]; 3] = [
    [
        (88.0 - 7.0 * SQ6) / 360.0,
        (296.0 - 169.0 * SQ6) / 1800.0,
        (-2.0 + 3.0 * SQ6) / 225.0,
    ],
    [
        (296.0 + 169.0 * SQ6) / 1800.0,
        (88.0 + 7.0 * SQ6) / 360.0,
        (-2.0 - 3.0 * SQ6) / 225.0,
    ],
    [(16.0 - SQ6) / 36.0, (16.0 + SQ6) / 36.0, 1.0 / 9.0],
];

/// Precomputed constants of the transformed Newton iteration.
#[derive(Debug, Clone)]
pub struct Transform {
    /// `A^{-1}`, used to form stage derivatives `Ż = (A^{-1} ⊗ I) Z / h`.
    pub a_inv: [[f64; 3]; 3],
    /// Eigenvector matrix `T` (real Schur-like form of `A^{-1}`).
    pub t: [[f64; 3]; 3],
    /// `T^{-1}`.
    pub t_inv: [[f64; 3]; 3],
    /// Real eigenvalue `γ̂` of `A^{-1}`.
    pub gamma: f64,
    /// Real part `α̂` of the complex eigenvalue pair of `A^{-1}`.
    pub alpha: f64,
    /// Imaginary part `β̂` of the complex eigenvalue pair of `A^{-1}`.
    pub beta: f64,
}

fn inv3(m: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
        - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
    let mut r = [[0.0; 3]; 3];
    for (i, ri) in r.iter_mut().enumerate() {
        for (j, rij) in ri.iter_mut().enumerate() {
            // cofactor C_ji / det
            let (a0, a1) = ((j + 1) % 3, (j + 2) % 3);
            let (b0, b1) = ((i + 1) % 3, (i + 2) % 3);
            *rij = (m[a0][b0] * m[a1][b1] - m[a0][b1] * m[a1][b0]) / det;
        }
    }
    r
}

fn mul3(a: &[[f64; 3]; 3], b: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let mut r = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            r[i][j] = (0..3).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    r
}

impl Transform {
    /// [`Transform::new`], computed once per process (the constants are
    /// the same for every integration; an integrator is built per solve).
    pub fn shared() -> &'static Transform {
        static SHARED: std::sync::OnceLock<Transform> = std::sync::OnceLock::new();
        SHARED.get_or_init(Transform::new)
    }

    /// Computes `A^{-1}`, its eigenvalues (closed form, IV.8) and a real
    /// transformation `T` (eigenvector of `γ̂`, real and imaginary parts of
    /// an eigenvector of `α̂ + iβ̂`).
    pub fn new() -> Self {
        let a_inv = inv3(&A);
        let c81 = 81f64.cbrt();
        let c9 = 9f64.cbrt();
        let u1 = (6.0 + c81 - c9) / 30.0;
        let alph = (12.0 - c81 + c9) / 60.0;
        let bet = (c81 + c9) * 3f64.sqrt() / 60.0;
        // eigenvalues of A are u1 and alph ± i bet; those of A^{-1} are the inverses
        let gamma = 1.0 / u1;
        let cno = alph * alph + bet * bet;
        let alpha = alph / cno;
        let beta = bet / cno;
        // Eigenvector of A^{-1} for gamma: null vector of (A^{-1} − γ I),
        // via the cross product of two rows.
        let null_real = |m: [[f64; 3]; 3]| -> [f64; 3] {
            let (r0, r1) = (m[0], m[1]);
            [
                r0[1] * r1[2] - r0[2] * r1[1],
                r0[2] * r1[0] - r0[0] * r1[2],
                r0[0] * r1[1] - r0[1] * r1[0],
            ]
        };
        let mut mg = a_inv;
        for (i, row) in mg.iter_mut().enumerate() {
            row[i] -= gamma;
        }
        let v1 = null_real(mg);
        // Complex eigenvector x = a + i·b of A^{-1} for α + iβ: then
        // A^{-1} a = α a − β b and A^{-1} b = β a + α b, so with p = a,
        // q = −b the columns (p, q) satisfy A^{-1}(p, q) = (p, q)[[α, −β], [β, α]].
        // x is the (bilinear) cross product of two rows of A^{-1} − (α+iβ)I.
        let cm = |i: usize, j: usize| -> (f64, f64) {
            let d = if i == j { 1.0 } else { 0.0 };
            (a_inv[i][j] - alpha * d, -beta * d)
        };
        let cmul = |a: (f64, f64), b: (f64, f64)| (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0);
        let csub = |a: (f64, f64), b: (f64, f64)| (a.0 - b.0, a.1 - b.1);
        let x = [
            csub(cmul(cm(0, 1), cm(1, 2)), cmul(cm(0, 2), cm(1, 1))),
            csub(cmul(cm(0, 2), cm(1, 0)), cmul(cm(0, 0), cm(1, 2))),
            csub(cmul(cm(0, 0), cm(1, 1)), cmul(cm(0, 1), cm(1, 0))),
        ];
        // Normalisation as RADAU5's T (Hairer–Wanner IV.8): the real
        // eigenvector of unit length with a positive last component, the
        // complex one scaled to last component 1 (T32 = 1, T33 = 0). The
        // simplified Newton iteration measures its increments in these
        // transformed coordinates (θ, the stopping test η·‖ΔW‖ ≤ κ·Tol), so
        // their scale is part of the method, not a free choice.
        let len = v1.iter().map(|x| x * x).sum::<f64>().sqrt();
        let sign = if v1[2] < 0.0 { -1.0 } else { 1.0 };
        let v1 = v1.map(|x| sign * x / len);
        let last = x[2];
        let den = last.0 * last.0 + last.1 * last.1;
        let inv_last = (last.0 / den, -last.1 / den);
        let mut x = x.map(|xi| cmul(xi, inv_last));
        x[2] = (1.0, 0.0); // exactly (the division leaves ~1e-17)
        let p = [x[0].0, x[1].0, x[2].0];
        let q = [-x[0].1, -x[1].1, -x[2].1];
        let t = [
            [v1[0], p[0], q[0]],
            [v1[1], p[1], q[1]],
            [v1[2], p[2], q[2]],
        ];
        let t_inv = inv3(&t);
        Self {
            a_inv,
            t,
            t_inv,
            gamma,
            alpha,
            beta,
        }
    }

    /// `T^{-1} A^{-1} T` (for verification; should be block diagonal).
    pub fn transformed(&self) -> [[f64; 3]; 3] {
        mul3(&self.t_inv, &mul3(&self.a_inv, &self.t))
    }
}

impl Default for Transform {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radau_iia_row_sums_are_the_nodes() {
        let c = [C1, C2, 1.0];
        for i in 0..3 {
            let s: f64 = A[i].iter().sum();
            assert!((s - c[i]).abs() < 1e-15);
        }
    }

    #[test]
    fn the_shared_transformation_is_the_computed_one_bit_for_bit() {
        let (shared, new) = (Transform::shared(), Transform::new());
        let bits = |t: &Transform| {
            let m = [t.a_inv, t.t, t.t_inv].concat().concat();
            let mut v: Vec<u64> = m.into_iter().map(f64::to_bits).collect();
            v.extend([t.gamma, t.alpha, t.beta].map(f64::to_bits));
            v
        };
        assert_eq!(bits(shared), bits(&new));
        assert!(std::ptr::eq(shared, Transform::shared()));
    }

    #[test]
    fn transformation_block_diagonalises_a_inverse() {
        let tr = Transform::new();
        let m = tr.transformed();
        let want = [
            [tr.gamma, 0.0, 0.0],
            [0.0, tr.alpha, -tr.beta],
            [0.0, tr.beta, tr.alpha],
        ];
        for i in 0..3 {
            for j in 0..3 {
                assert!(
                    (m[i][j] - want[i][j]).abs() < 1e-11,
                    "({i},{j}): {} vs {}",
                    m[i][j],
                    want[i][j]
                );
            }
        }
        // known values (Solving ODEs II, IV.8): γ̂ ≈ 3.6378, α̂ ≈ 2.6811, β̂ ≈ 3.0504
        assert!((tr.gamma - 3.637_834_252_744_496).abs() < 1e-12);
        assert!((tr.alpha - 2.681_082_873_627_752).abs() < 1e-12);
        assert!((tr.beta - 3.050_430_199_247_411).abs() < 1e-12);
        // RADAU5's normalisation of T: last row (0.96604818…, 1, 0) and a
        // unit first column
        assert!(
            (tr.t[2][0] - 0.966_048_182_615_093).abs() < 1e-12,
            "{:?}",
            tr.t
        );
        assert_eq!((tr.t[2][1], tr.t[2][2]), (1.0, 0.0));
        let len: f64 = (0..3).map(|i| tr.t[i][0] * tr.t[i][0]).sum();
        assert!((len - 1.0).abs() < 1e-14);
        assert!(
            (tr.t[0][1] + 0.141_255_295_020_954_2).abs() < 1e-12,
            "{:?}",
            tr.t
        );
        assert!(
            (tr.t[1][2] - 0.382_942_112_757_261_9).abs() < 1e-12,
            "{:?}",
            tr.t
        );
    }
}
