//! Models shared by the benchmarks: the pendulum chain (problem S1 of
//! steinbrecher2016 Ex. 2.7 coupled link to link) and its hand-written
//! residual and Jacobian.
#![allow(dead_code)]

use daec_expr::{ExprId, ExprPool, ParamId};

/// Unknown index of component `c` (0 = x, 1 = y, 2 = v, 3 = w, 4 = λ) of
/// link `i`.
pub fn unknown(i: usize, c: usize) -> u32 {
    (5 * i + c) as u32
}

/// Parameters: m = 0, g = 1, ℓ = 2.
pub const PARAMS: [f64; 3] = [1.0, 9.81, 1.0];

/// The 5·n equations of an n-link pendulum chain: link i hangs from link
/// i−1 (the first from the origin), all rods of length ℓ, each joint a mass
/// m:
///   ẋ_i − v_i, ẏ_i − w_i,
///   m v̇_i + 2λ_i (x_i − x_{i−1}) − 2λ_{i+1} (x_{i+1} − x_i),
///   m ẇ_i + 2λ_i (y_i − y_{i−1}) − 2λ_{i+1} (y_{i+1} − y_i) + m g,
///   (x_i − x_{i−1})² + (y_i − y_{i−1})² − ℓ².
pub fn pendulum_chain(p: &mut ExprPool, n: usize) -> Vec<ExprId> {
    let (m, g, l) = (
        p.param(ParamId(0)),
        p.param(ParamId(1)),
        p.param(ParamId(2)),
    );
    let two = p.constant(2.0);
    let zero = p.constant(0.0);
    let mg = p.mul(m, g);
    let l2 = p.powi(l, 2);
    let mut eqs = Vec::with_capacity(5 * n);
    let var = |p: &mut ExprPool, i: usize, c: usize, k: u32| p.var(unknown(i, c), k);
    for i in 0..n {
        let (x, y, v, w, lam) = (
            var(p, i, 0, 0),
            var(p, i, 1, 0),
            var(p, i, 2, 0),
            var(p, i, 3, 0),
            var(p, i, 4, 0),
        );
        let (xd, yd, vd, wd) = (
            var(p, i, 0, 1),
            var(p, i, 1, 1),
            var(p, i, 2, 1),
            var(p, i, 3, 1),
        );
        let (xp, yp) = if i == 0 {
            (zero, zero)
        } else {
            (var(p, i - 1, 0, 0), var(p, i - 1, 1, 0))
        };
        let dx = p.sub(x, xp);
        let dy = p.sub(y, yp);
        eqs.push(p.sub(xd, v));
        eqs.push(p.sub(yd, w));
        let mvd = p.mul(m, vd);
        let fx = p.product(&[two, lam, dx]);
        let mwd = p.mul(m, wd);
        let fy = p.product(&[two, lam, dy]);
        let (mut f3, mut f4) = (vec![mvd, fx], vec![mwd, fy, mg]);
        if i + 1 < n {
            let (xn, yn, ln) = (
                var(p, i + 1, 0, 0),
                var(p, i + 1, 1, 0),
                var(p, i + 1, 4, 0),
            );
            let dxn = p.sub(xn, x);
            let dyn_ = p.sub(yn, y);
            let gx = p.product(&[two, ln, dxn]);
            let gy = p.product(&[two, ln, dyn_]);
            f3.push(p.neg(gx));
            f4.push(p.neg(gy));
        }
        eqs.push(p.sum(&f3));
        eqs.push(p.sum(&f4));
        let dx2 = p.powi(dx, 2);
        let dy2 = p.powi(dy, 2);
        let s = p.add(dx2, dy2);
        eqs.push(p.sub(s, l2));
    }
    eqs
}

/// One Jacobian entry: equation row, unknown column, derivative order of the
/// column leaf (0: ∂F/∂z, 1: ∂F/∂ż) and the symbolic entry.
pub struct Entry {
    pub row: usize,
    pub col: usize,
    pub order: u32,
    pub expr: ExprId,
}

/// Residuals followed by every structurally non-zero entry of ∂F/∂z and
/// ∂F/∂ż, and the input leaves (z then ż).
pub fn residual_and_jacobian(p: &mut ExprPool, n: usize) -> (Vec<ExprId>, Vec<Entry>, Vec<ExprId>) {
    let eqs = pendulum_chain(p, n);
    let mut entries = Vec::new();
    for (row, &f) in eqs.iter().enumerate() {
        for leaf in p.leaves(f) {
            if let Some(daec_expr::Leaf::Var { unknown, order }) = p.as_leaf(leaf) {
                let d = p.diff(f, leaf);
                if p.as_constant(d) != Some(0.0) {
                    entries.push(Entry {
                        row,
                        col: unknown as usize,
                        order,
                        expr: d,
                    });
                }
            }
        }
    }
    let mut inputs: Vec<ExprId> = (0..5 * n).map(|j| p.var(j as u32, 0)).collect();
    inputs.extend((0..5 * n).map(|j| p.var(j as u32, 1)));
    (eqs, entries, inputs)
}

/// The same residual and Jacobian written by hand: `f` gets the residuals,
/// `jz`/`jzp` the dense ∂F/∂z and ∂F/∂ż (row-major, 5n × 5n; only the
/// structurally non-zero entries are written).
pub fn hand_written(
    n: usize,
    z: &[f64],
    zp: &[f64],
    prm: &[f64; 3],
    f: &mut [f64],
    jz: &mut [f64],
    jzp: &mut [f64],
) {
    let [m, g, l] = *prm;
    let nn = 5 * n;
    for i in 0..n {
        let k = 5 * i;
        let (x, y, v, w, lam) = (z[k], z[k + 1], z[k + 2], z[k + 3], z[k + 4]);
        let (xp, yp) = if i == 0 {
            (0.0, 0.0)
        } else {
            (z[k - 5], z[k - 4])
        };
        let (dx, dy) = (x - xp, y - yp);
        f[k] = zp[k] - v;
        f[k + 1] = zp[k + 1] - w;
        let mut f3 = m * zp[k + 2] + 2.0 * lam * dx;
        let mut f4 = m * zp[k + 3] + 2.0 * lam * dy + m * g;
        jzp[k * nn + k] = 1.0;
        jz[k * nn + k + 2] = -1.0;
        jzp[(k + 1) * nn + k + 1] = 1.0;
        jz[(k + 1) * nn + k + 3] = -1.0;
        jzp[(k + 2) * nn + k + 2] = m;
        jzp[(k + 3) * nn + k + 3] = m;
        jz[(k + 2) * nn + k + 4] = 2.0 * dx;
        jz[(k + 3) * nn + k + 4] = 2.0 * dy;
        let (mut jx, mut jy) = (2.0 * lam, 2.0 * lam);
        if i > 0 {
            jz[(k + 2) * nn + k - 5] = -2.0 * lam;
            jz[(k + 3) * nn + k - 4] = -2.0 * lam;
        }
        if i + 1 < n {
            let (xn, yn, ln) = (z[k + 5], z[k + 6], z[k + 9]);
            f3 -= 2.0 * ln * (xn - x);
            f4 -= 2.0 * ln * (yn - y);
            jx += 2.0 * ln;
            jy += 2.0 * ln;
            jz[(k + 2) * nn + k + 5] = -2.0 * ln;
            jz[(k + 3) * nn + k + 6] = -2.0 * ln;
            jz[(k + 2) * nn + k + 9] = -2.0 * (xn - x);
            jz[(k + 3) * nn + k + 9] = -2.0 * (yn - y);
        }
        jz[(k + 2) * nn + k] = jx;
        jz[(k + 3) * nn + k + 1] = jy;
        f[k + 2] = f3;
        f[k + 3] = f4;
        f[k + 4] = dx * dx + dy * dy - l * l;
        jz[(k + 4) * nn + k] = 2.0 * dx;
        jz[(k + 4) * nn + k + 1] = 2.0 * dy;
        if i > 0 {
            jz[(k + 4) * nn + k - 5] = -2.0 * dx;
            jz[(k + 4) * nn + k - 4] = -2.0 * dy;
        }
    }
}
