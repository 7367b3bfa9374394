//! Shared test problems, written by hand as `QuasiLinearDae` impls with
//! dense patterns (every `(row, col)` pair listed).
#![allow(dead_code)]

use daec_solve::QuasiLinearDae;

type Res = fn(&[f64], f64, &[f64], &[f64], &mut [f64]);
type Con = fn(&[f64], f64, &[f64], &mut [f64]);

/// A quasi-linear DAE given by plain functions with dense Jacobians
/// (row-major `rows × n` buffers). `p` holds the parameters.
pub struct DenseDae {
    pub n: usize,
    pub n_d: usize,
    pub n_g: usize,
    pub p: Vec<f64>,
    pub index: Vec<u8>,
    /// E ż − k
    pub res: Res,
    /// g
    pub con: Con,
    /// E (dense n_d × n), given z
    pub mass: Con,
    /// ∂(E ż − k)/∂z (dense n_d × n)
    pub jd: Res,
    /// ∂g/∂z (dense n_g × n)
    pub jg: Con,
}

fn dense(rows: usize, cols: usize) -> Vec<(usize, usize)> {
    (0..rows)
        .flat_map(|r| (0..cols).map(move |c| (r, c)))
        .collect()
}

fn zero_fill(out: &mut [f64]) {
    out.iter_mut().for_each(|x| *x = 0.0);
}

impl QuasiLinearDae for DenseDae {
    fn n_vars(&self) -> usize {
        self.n
    }
    fn n_diff(&self) -> usize {
        self.n_d
    }
    fn n_constraints(&self) -> usize {
        self.n_g
    }
    fn diff_residual(&self, t: f64, z: &[f64], zdot: &[f64], out: &mut [f64]) {
        (self.res)(&self.p, t, z, zdot, out)
    }
    fn constraints(&self, t: f64, z: &[f64], out: &mut [f64]) {
        (self.con)(&self.p, t, z, out)
    }
    fn mass_pattern(&self) -> Vec<(usize, usize)> {
        dense(self.n_d, self.n)
    }
    fn mass_values(&self, t: f64, z: &[f64], out: &mut [f64]) {
        zero_fill(out);
        (self.mass)(&self.p, t, z, out)
    }
    fn diff_jacobian_pattern(&self) -> Vec<(usize, usize)> {
        dense(self.n_d, self.n)
    }
    fn diff_jacobian_values(&self, t: f64, z: &[f64], zdot: &[f64], out: &mut [f64]) {
        zero_fill(out);
        (self.jd)(&self.p, t, z, zdot, out)
    }
    fn constraint_jacobian_pattern(&self) -> Vec<(usize, usize)> {
        dense(self.n_g, self.n)
    }
    fn constraint_jacobian_values(&self, t: f64, z: &[f64], out: &mut [f64]) {
        zero_fill(out);
        (self.jg)(&self.p, t, z, out)
    }
    fn variable_index(&self) -> Vec<u8> {
        self.index.clone()
    }
}

// ---------------------------------------------------------------------------
// [B9] Akzo Nobel (IVP test set "chemakzo"; Baese 4.7), index 1.
// p = [k1, k2, k3, k4, K, klA, Ks, pCO2, H]
// ---------------------------------------------------------------------------

pub const AKZO_Y0: [f64; 6] = [0.444, 0.00123, 0.0, 0.007, 0.0, 0.35999964];
/// Reference at t = 180 (IVP test set).
pub const AKZO_REF: [f64; 6] = [
    0.1150794920661702,
    0.1203831471567715e-2,
    0.1611562887407974,
    0.3656156421249283e-3,
    0.1708010885264404e-1,
    0.4873531310307455e-2,
];

fn akzo_rates(p: &[f64], y: &[f64]) -> [f64; 6] {
    let (k1, k2, k3, k4, kk, kla, _ks, pco2, hh) =
        (p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8]);
    let s2 = y[1].sqrt();
    let r1 = k1 * y[0].powi(4) * s2;
    let r2 = k2 * y[2] * y[3];
    let r3 = k2 / kk * y[0] * y[4];
    let r4 = k3 * y[0] * y[3] * y[3];
    let r5 = k4 * y[5] * y[5] * s2;
    let fin = kla * (pco2 / hh - y[1]);
    [r1, r2, r3, r4, r5, fin]
}

pub fn akzo_res(p: &[f64], _t: f64, y: &[f64], yd: &[f64], out: &mut [f64]) {
    let [r1, r2, r3, r4, r5, fin] = akzo_rates(p, y);
    out[0] = yd[0] - (-2.0 * r1 + r2 - r3 - r4);
    out[1] = yd[1] - (-0.5 * r1 - r4 - 0.5 * r5 + fin);
    out[2] = yd[2] - (r1 - r2 + r3);
    out[3] = yd[3] - (-r2 + r3 - 2.0 * r4);
    out[4] = yd[4] - (r2 - r3 + r5);
}

fn akzo_con(p: &[f64], _t: f64, y: &[f64], out: &mut [f64]) {
    out[0] = p[6] * y[0] * y[3] - y[5];
}

fn akzo_mass(_p: &[f64], _t: f64, _y: &[f64], out: &mut [f64]) {
    for i in 0..5 {
        out[i * 6 + i] = 1.0;
    }
}

pub fn akzo_jd(p: &[f64], _t: f64, y: &[f64], _yd: &[f64], out: &mut [f64]) {
    let (k1, k2, k3, k4, kk, kla) = (p[0], p[1], p[2], p[3], p[4], p[5]);
    let s2 = y[1].sqrt();
    // partial derivatives of the rates: d[rate][var]
    let mut d = [[0.0f64; 6]; 6];
    d[0][0] = 4.0 * k1 * y[0].powi(3) * s2;
    d[0][1] = 0.5 * k1 * y[0].powi(4) / s2;
    d[1][2] = k2 * y[3];
    d[1][3] = k2 * y[2];
    d[2][0] = k2 / kk * y[4];
    d[2][4] = k2 / kk * y[0];
    d[3][0] = k3 * y[3] * y[3];
    d[3][3] = 2.0 * k3 * y[0] * y[3];
    d[4][5] = 2.0 * k4 * y[5] * s2;
    d[4][1] = 0.5 * k4 * y[5] * y[5] / s2;
    d[5][1] = -kla;
    // f rows as combinations of the rates
    let comb: [[f64; 6]; 5] = [
        [-2.0, 1.0, -1.0, -1.0, 0.0, 0.0],
        [-0.5, 0.0, 0.0, -1.0, -0.5, 1.0],
        [1.0, -1.0, 1.0, 0.0, 0.0, 0.0],
        [0.0, -1.0, 1.0, -2.0, 0.0, 0.0],
        [0.0, 1.0, -1.0, 0.0, 1.0, 0.0],
    ];
    for r in 0..5 {
        for c in 0..6 {
            let df: f64 = (0..6).map(|k| comb[r][k] * d[k][c]).sum();
            out[r * 6 + c] = -df;
        }
    }
}

fn akzo_jg(p: &[f64], _t: f64, y: &[f64], out: &mut [f64]) {
    out[0] = p[6] * y[3];
    out[3] = p[6] * y[0];
    out[5] = -1.0;
}

pub fn akzo() -> DenseDae {
    DenseDae {
        n: 6,
        n_d: 5,
        n_g: 1,
        p: vec![18.7, 0.58, 0.09, 0.42, 34.4, 3.3, 115.83, 0.9, 737.0],
        index: vec![1; 6],
        res: akzo_res,
        con: akzo_con,
        mass: akzo_mass,
        jd: akzo_jd,
        jg: akzo_jg,
    }
}

// ---------------------------------------------------------------------------
// [S1] Steinbrecher Ex. 2.7/5.1 pendulum, z = (x, y, v, w, λ), p = [m, l, g].
// ---------------------------------------------------------------------------

pub const PENDULUM_G: f64 = 13.750_371_637_329_454;

fn pend_res(p: &[f64], _t: f64, z: &[f64], zd: &[f64], out: &mut [f64]) {
    let (m, g) = (p[0], p[2]);
    out[0] = zd[0] - z[2];
    out[1] = zd[1] - z[3];
    out[2] = m * zd[2] + 2.0 * z[0] * z[4];
    out[3] = m * zd[3] + 2.0 * z[1] * z[4] + m * g;
}

fn pend_mass(p: &[f64], _t: f64, _z: &[f64], out: &mut [f64]) {
    out[0] = 1.0;
    out[5 + 1] = 1.0;
    out[10 + 2] = p[0];
    out[15 + 3] = p[0];
}

fn pend_jd(_p: &[f64], _t: f64, z: &[f64], _zd: &[f64], out: &mut [f64]) {
    out[2] = -1.0;
    out[5 + 3] = -1.0;
    out[10] = 2.0 * z[4];
    out[10 + 4] = 2.0 * z[0];
    out[15 + 1] = 2.0 * z[4];
    out[15 + 4] = 2.0 * z[1];
}

fn pend_con_index3(p: &[f64], _t: f64, z: &[f64], out: &mut [f64]) {
    out[0] = z[0] * z[0] + z[1] * z[1] - p[1] * p[1];
}

fn pend_jg_index3(_p: &[f64], _t: f64, z: &[f64], out: &mut [f64]) {
    out[0] = 2.0 * z[0];
    out[1] = 2.0 * z[1];
}

/// The classic index-3 formulation (10) as RADAU5 takes it: index 1 for
/// positions, 2 for velocities, 3 for λ.
pub fn pendulum_index3() -> DenseDae {
    DenseDae {
        n: 5,
        n_d: 4,
        n_g: 1,
        p: vec![1.0, 1.0, PENDULUM_G],
        index: vec![1, 1, 2, 2, 3],
        res: pend_res,
        con: pend_con_index3,
        mass: pend_mass,
        jd: pend_jd,
        jg: pend_jg_index3,
    }
}

/// The three constraint levels of the pendulum.
pub fn pendulum_levels(p: &[f64], z: &[f64]) -> [f64; 3] {
    let (m, l, g) = (p[0], p[1], p[2]);
    let (x, y, v, w, la) = (z[0], z[1], z[2], z[3], z[4]);
    [
        x * x + y * y - l * l,
        2.0 * x * v + 2.0 * y * w,
        v * v + w * w - 2.0 / m * (x * x + y * y) * la - y * g,
    ]
}

fn pend_con_hic(p: &[f64], _t: f64, z: &[f64], out: &mut [f64]) {
    let [c0, c1, c2] = pendulum_levels(p, z);
    out[0] = c0;
    out[1] = c0;
    out[2] = c1;
    out[3] = c2;
}

fn pend_jg_hic(p: &[f64], _t: f64, z: &[f64], out: &mut [f64]) {
    let (m, g) = (p[0], p[2]);
    let (x, y, v, w, la) = (z[0], z[1], z[2], z[3], z[4]);
    for r in 0..2 {
        out[r * 5] = 2.0 * x;
        out[r * 5 + 1] = 2.0 * y;
    }
    out[10..15].copy_from_slice(&[2.0 * v, 2.0 * w, 2.0 * x, 2.0 * y, 0.0]);
    out[15..20].copy_from_slice(&[
        -4.0 / m * x * la,
        -4.0 / m * y * la - g,
        2.0 * v,
        2.0 * w,
        -2.0 / m * (x * x + y * y),
    ]);
}

/// [S1-HiC] (38): 8 equations, 5 unknowns.
pub fn pendulum_hic() -> DenseDae {
    DenseDae {
        n: 5,
        n_d: 4,
        n_g: 4,
        p: vec![1.0, 1.0, PENDULUM_G],
        index: vec![1; 5],
        res: pend_res,
        con: pend_con_hic,
        mass: pend_mass,
        jd: pend_jd,
        jg: pend_jg_hic,
    }
}

fn pend_con_di1(p: &[f64], _t: f64, z: &[f64], out: &mut [f64]) {
    out[0] = pendulum_levels(p, z)[2];
}

fn pend_jg_di1(p: &[f64], t: f64, z: &[f64], out: &mut [f64]) {
    let mut full = [0.0; 20];
    pend_jg_hic(p, t, z, &mut full);
    out.copy_from_slice(&full[15..20]);
}

/// [S1-DI1] (41): only the level-2 constraint; drifts from levels 0 and 1.
pub fn pendulum_di1() -> DenseDae {
    DenseDae {
        n: 5,
        n_d: 4,
        n_g: 1,
        p: vec![1.0, 1.0, PENDULUM_G],
        index: vec![1; 5],
        res: pend_res,
        con: pend_con_di1,
        mass: pend_mass,
        jd: pend_jd,
        jg: pend_jg_di1,
    }
}

// ---------------------------------------------------------------------------
// [S2-HiC] spring-mass chain, z = (p1, p2, p3, v1, v2, v3, F), p = [m, c].
// ---------------------------------------------------------------------------

fn chain_res(p: &[f64], _t: f64, z: &[f64], zd: &[f64], out: &mut [f64]) {
    let (m, c) = (p[0], p[1]);
    out[0] = zd[0] - z[3];
    out[1] = zd[1] - z[4];
    out[2] = zd[2] - z[5];
    out[3] = m * zd[3] + c * (z[0] - z[1]) - z[6];
    out[4] = m * zd[4] - c * (z[0] - z[1]) + c * (z[1] - z[2]);
    out[5] = m * zd[5] - c * (z[1] - z[2]) - z[6];
}

fn chain_mass(p: &[f64], _t: f64, _z: &[f64], out: &mut [f64]) {
    for i in 0..3 {
        out[i * 7 + i] = 1.0;
        out[(i + 3) * 7 + i + 3] = p[0];
    }
}

fn chain_jd(p: &[f64], _t: f64, _z: &[f64], _zd: &[f64], out: &mut [f64]) {
    let c = p[1];
    for i in 0..3 {
        out[i * 7 + i + 3] = -1.0;
    }
    out[21..28].copy_from_slice(&[c, -c, 0.0, 0.0, 0.0, 0.0, -1.0]);
    out[28..35].copy_from_slice(&[-c, 2.0 * c, -c, 0.0, 0.0, 0.0, 0.0]);
    out[35..42].copy_from_slice(&[0.0, -c, c, 0.0, 0.0, 0.0, -1.0]);
}

fn chain_con(p: &[f64], t: f64, z: &[f64], out: &mut [f64]) {
    let (m, c) = (p[0], p[1]);
    out[0] = z[1] - t.sin();
    out[1] = z[1] - t.sin();
    out[2] = z[4] - t.cos();
    out[3] = c / m * (z[0] - z[1]) - c / m * (z[1] - z[2]) + t.sin();
    out[4] = c / m * (z[3] - z[4]) - c / m * (z[4] - z[5]) + t.cos();
    out[5] =
        c / (m * m) * (-3.0 * c * (z[0] - z[1]) + 3.0 * c * (z[1] - z[2]) + 2.0 * z[6]) - t.sin();
}

fn chain_jg(p: &[f64], _t: f64, _z: &[f64], out: &mut [f64]) {
    let (m, c) = (p[0], p[1]);
    let a = c / m;
    let b = c / (m * m);
    out[1] = 1.0;
    out[7 + 1] = 1.0;
    out[14 + 4] = 1.0;
    out[21..24].copy_from_slice(&[a, -2.0 * a, a]);
    out[28 + 3..28 + 6].copy_from_slice(&[a, -2.0 * a, a]);
    out[35..42].copy_from_slice(&[
        -3.0 * c * b,
        6.0 * c * b,
        -3.0 * c * b,
        0.0,
        0.0,
        0.0,
        2.0 * b,
    ]);
}

pub const CHAIN_Z0: [f64; 7] = [0.0, 0.0, 0.0, -2.0, 1.0, -2.0, 0.0];

pub fn chain_exact(t: f64) -> [f64; 7] {
    let (s, c) = (t.sin(), t.cos());
    [-2.0 * s, s, -2.0 * s, -2.0 * c, c, -2.0 * c, 1.5 * s]
}

/// [S2-HiC] (Steinbrecher Ex. 3.6): 12 equations, 7 unknowns.
pub fn chain_hic() -> DenseDae {
    DenseDae {
        n: 7,
        n_d: 6,
        n_g: 6,
        p: vec![1.0, 1.0 / 6.0],
        index: vec![1; 7],
        res: chain_res,
        con: chain_con,
        mass: chain_mass,
        jd: chain_jd,
        jg: chain_jg,
    }
}

// ---------------------------------------------------------------------------
// Linear stiff index-1 test problem with exact solution:
//   y1' = −y1,  y2' = −1000 (y2 − cos t),  0 = y3 − y1 − y2.
// ---------------------------------------------------------------------------

pub const LIN_A: f64 = 1.0e6 / (1.0e6 + 1.0);
pub const LIN_B: f64 = 1.0e3 / (1.0e6 + 1.0);

pub fn linear_exact(t: f64) -> [f64; 3] {
    let y1 = (-t).exp();
    let y2 = LIN_A * t.cos() + LIN_B * t.sin();
    [y1, y2, y1 + y2]
}

fn lin_res(_p: &[f64], t: f64, z: &[f64], zd: &[f64], out: &mut [f64]) {
    out[0] = zd[0] + z[0];
    out[1] = zd[1] + 1000.0 * (z[1] - t.cos());
}

fn lin_con(_p: &[f64], _t: f64, z: &[f64], out: &mut [f64]) {
    out[0] = z[2] - z[0] - z[1];
}

fn lin_mass(_p: &[f64], _t: f64, _z: &[f64], out: &mut [f64]) {
    out[0] = 1.0;
    out[3 + 1] = 1.0;
}

fn lin_jd(_p: &[f64], _t: f64, _z: &[f64], _zd: &[f64], out: &mut [f64]) {
    out[0] = 1.0;
    out[3 + 1] = 1000.0;
}

fn lin_jg(_p: &[f64], _t: f64, _z: &[f64], out: &mut [f64]) {
    out.copy_from_slice(&[-1.0, -1.0, 1.0]);
}

pub fn linear() -> DenseDae {
    DenseDae {
        n: 3,
        n_d: 2,
        n_g: 1,
        p: vec![],
        index: vec![1; 3],
        res: lin_res,
        con: lin_con,
        mass: lin_mass,
        jd: lin_jd,
        jg: lin_jg,
    }
}
