//! The sparse linear algebra of Radau5 (sparse LU of the iteration
//! matrices, sparse equation selection) against the dense one on a large
//! overdetermined DAE: a chain of `m` nonlinear oscillators with the
//! accelerations as algebraic unknowns and some constraint rows repeated
//! (as the HiC form repeats the DAE's algebraic equations), `n = 3m`.

use daec_solve::{LinearSolver, Options, QuasiLinearDae, Radau5, StepControl};
use daec_solve::{select_equations, select_equations_ordered, select_equations_sparse};

/// Unknowns `z = (x_0..x_m, v_0..v_m, a_0..a_m)`; differential rows
/// `x_i' = v_i`, `μ_i v_i' = a_i`; constraints
/// `a_i + κ(2x_i − x_{i−1} − x_{i+1}) + c·v_i + ε·x_i³ = 0` (fixed ends),
/// every `dup`-th one listed twice.
struct Chain {
    m: usize,
    dup: usize,
}

const KAPPA: f64 = 50.0;
const DAMP: f64 = 0.3;
const EPS: f64 = 400.0;

impl Chain {
    fn mu(i: usize) -> f64 {
        1.0 + 0.5 * ((i % 7) as f64) / 7.0
    }
    fn n_dup(&self) -> usize {
        self.m.div_ceil(self.dup)
    }
    /// The chain row behind constraint row `r`.
    fn chain_row(&self, r: usize) -> usize {
        if r < self.m {
            r
        } else {
            (r - self.m) * self.dup
        }
    }
    fn initial(&self) -> Vec<f64> {
        let m = self.m;
        let mut z = vec![0.0; 3 * m];
        for (i, x) in z[..m].iter_mut().enumerate() {
            let s = (i as f64 + 1.0) / (m as f64 + 1.0);
            *x = 0.3 * (std::f64::consts::PI * s).sin() + 0.1 * (5.0 * s).sin();
        }
        let mut g = vec![0.0; m];
        self.constraints(0.0, &z, &mut g);
        for (a, gi) in z[2 * m..].iter_mut().zip(&g) {
            *a -= gi;
        }
        z
    }
}

impl QuasiLinearDae for Chain {
    fn n_vars(&self) -> usize {
        3 * self.m
    }
    fn n_diff(&self) -> usize {
        2 * self.m
    }
    fn n_constraints(&self) -> usize {
        self.m + self.n_dup()
    }
    fn diff_residual(&self, _t: f64, z: &[f64], zd: &[f64], out: &mut [f64]) {
        let m = self.m;
        for i in 0..m {
            out[2 * i] = zd[i] - z[m + i];
            out[2 * i + 1] = Self::mu(i) * zd[m + i] - z[2 * m + i];
        }
    }
    fn constraints(&self, _t: f64, z: &[f64], out: &mut [f64]) {
        let m = self.m;
        let x = |i: isize| {
            if i < 0 || i >= m as isize {
                0.0
            } else {
                z[i as usize]
            }
        };
        for (r, o) in out.iter_mut().enumerate() {
            let i = self.chain_row(r);
            let ii = i as isize;
            *o = z[2 * m + i]
                + KAPPA * (2.0 * x(ii) - x(ii - 1) - x(ii + 1))
                + DAMP * z[m + i]
                + EPS * z[i].powi(3);
        }
    }
    fn mass_pattern(&self) -> Vec<(usize, usize)> {
        let m = self.m;
        (0..m)
            .flat_map(|i| [(2 * i, i), (2 * i + 1, m + i)])
            .collect()
    }
    fn mass_values(&self, _t: f64, _z: &[f64], out: &mut [f64]) {
        for i in 0..self.m {
            out[2 * i] = 1.0;
            out[2 * i + 1] = Self::mu(i);
        }
    }
    fn diff_jacobian_pattern(&self) -> Vec<(usize, usize)> {
        let m = self.m;
        (0..m)
            .flat_map(|i| [(2 * i, m + i), (2 * i + 1, 2 * m + i)])
            .collect()
    }
    fn diff_jacobian_values(&self, _t: f64, _z: &[f64], _zd: &[f64], out: &mut [f64]) {
        out.iter_mut().for_each(|x| *x = -1.0);
    }
    fn constraint_jacobian_pattern(&self) -> Vec<(usize, usize)> {
        let m = self.m;
        let mut p = Vec::new();
        for r in 0..self.n_constraints() {
            let i = self.chain_row(r);
            p.push((r, 2 * m + i));
            p.push((r, i));
            if i > 0 {
                p.push((r, i - 1));
            }
            if i + 1 < m {
                p.push((r, i + 1));
            }
            p.push((r, m + i));
        }
        p
    }
    fn constraint_jacobian_values(&self, _t: f64, z: &[f64], out: &mut [f64]) {
        let m = self.m;
        let mut k = 0;
        for r in 0..self.n_constraints() {
            let i = self.chain_row(r);
            out[k] = 1.0;
            out[k + 1] = 2.0 * KAPPA + 3.0 * EPS * z[i] * z[i];
            k += 2;
            if i > 0 {
                out[k] = -KAPPA;
                k += 1;
            }
            if i + 1 < m {
                out[k] = -KAPPA;
                k += 1;
            }
            out[k] = DAMP;
            k += 1;
        }
    }
}

fn run(p: &Chain, solver: LinearSolver, t_end: f64) -> (Vec<f64>, daec_solve::Stats, bool) {
    let z0 = p.initial();
    let opts = Options {
        rtol: 1e-7,
        atol: 1e-7,
        linear_solver: solver,
        ..Options::default()
    };
    let mut r = Radau5::new(p, opts).unwrap();
    let sparse = r.uses_sparse_lu();
    let mut last = z0.clone();
    let stats = r
        .integrate(0.0, &z0, t_end, |s| {
            last.copy_from_slice(s.z);
            StepControl::Continue
        })
        .unwrap();
    (last, stats, sparse)
}

#[test]
fn sparse_and_dense_paths_agree_on_a_large_overdetermined_chain() {
    let p = Chain { m: 170, dup: 10 };
    assert_eq!(p.n_vars(), 510);
    assert!(p.n_diff() + p.n_constraints() > p.n_vars());
    let (zs, ss, sparse) = run(&p, LinearSolver::Auto, 0.5);
    assert!(sparse, "n = 510 takes the sparse path by default");
    assert_eq!(ss.sparse_lu_decompositions, ss.lu_decompositions);
    assert!(ss.lu_decompositions > 0);
    let (zd, sd, dense_sparse) = run(&p, LinearSolver::Dense, 0.5);
    assert!(!dense_sparse);
    assert_eq!(sd.sparse_lu_decompositions, 0);
    eprintln!("sparse: {ss:?}\ndense:  {sd:?}");
    // the dense path keeps a selection once two agreed on it (and while
    // the step size stays in its window), the sparse one keeps its first
    // (no Newton failure here)
    assert!(sd.selections >= 2, "{sd:?}");
    assert!(sd.selections < sd.jacobian_evals, "{sd:?}");
    assert!(sd.jacobian_evals > 1);
    assert_eq!(ss.selections, 1, "{ss:?}");
    // Same steps (round-off does not change the step-size decisions) and
    // the same solution to round-off relative to the state.
    assert_eq!(ss.steps_accepted, sd.steps_accepted);
    assert_eq!(ss.newton_iterations, sd.newton_iterations);
    let scale = zd.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let diff = zs
        .iter()
        .zip(&zd)
        .fold(0.0f64, |a, (x, y)| a.max((x - y).abs()));
    assert!(
        diff <= 1e-10 * scale,
        "max difference {diff:e} (scale {scale})"
    );
    // the constraints hold at the end
    let mut g = vec![0.0; p.n_constraints()];
    p.constraints(0.5, &zs, &mut g);
    assert!(g.iter().all(|v| v.abs() < 1e-9), "{g:?}");
}

#[test]
fn sparse_path_is_forced_for_small_systems_and_agrees() {
    let p = Chain { m: 8, dup: 3 };
    let (zs, ss, sparse) = run(&p, LinearSolver::Sparse, 1.0);
    assert!(sparse);
    let (zd, sd, dense) = run(&p, LinearSolver::Auto, 1.0);
    assert!(!dense, "small systems stay dense by default");
    assert_eq!(ss.steps_accepted, sd.steps_accepted);
    for (a, b) in zs.iter().zip(&zd) {
        assert!((a - b).abs() <= 1e-11 * (1.0 + b.abs()), "{a} vs {b}");
    }
}

#[test]
fn sparse_selection_equals_the_dense_one() {
    // the chain's Jacobians at its initial point, plus random sparse rows
    let p = Chain { m: 30, dup: 4 };
    let (n, n_d, n_g) = (p.n_vars(), p.n_diff(), p.n_constraints());
    let (ep, ev, gp, gv) = initial_jacobians(&p);
    let dense = |pat: &[(usize, usize)], val: &[f64], rows: usize, n: usize| {
        let mut d = vec![0.0; rows * n];
        for (&(r, c), &v) in pat.iter().zip(val) {
            d[r * n + c] += v;
        }
        d
    };
    let s_dense = select_equations(
        n,
        &dense(&ep, &ev, n_d, n),
        n_d,
        &dense(&gp, &gv, n_g, n),
        n_g,
    );
    let s_sparse = select_equations_sparse(n, &ep, &ev, n_d, &gp, &gv, n_g);
    assert_eq!(s_dense, s_sparse);
    assert_eq!(s_sparse.unwrap().constraint_rows.len(), p.m);

    // pseudo-random sparse matrices with dependent rows and duplicates
    let mut seed = 12345u64;
    let mut rnd = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as f64 / (1u64 << 31) as f64
    };
    for case in 0..40 {
        let n = 12 + case % 9;
        let (n_d, n_g) = (n - 2 + case % 3, 3 + case % 5);
        let mut ep = Vec::new();
        let mut ev = Vec::new();
        for r in 0..n_d {
            for _ in 0..3 {
                ep.push((r, (rnd() * n as f64) as usize % n));
                ev.push(rnd() - 0.5);
            }
        }
        let mut gp = Vec::new();
        let mut gv = Vec::new();
        for r in 0..n_g {
            for _ in 0..4 {
                gp.push((r, (rnd() * n as f64) as usize % n));
                gv.push(if rnd() < 0.2 { 1.0 } else { rnd() - 0.5 });
            }
        }
        // a repeated constraint row
        let rep: Vec<usize> = (0..gp.len()).filter(|&k| gp[k].0 == 0).collect();
        for k in rep {
            gp.push((n_g, gp[k].1));
            gv.push(gv[k]);
        }
        let n_g = n_g + 1;
        let d = select_equations(
            n,
            &dense(&ep, &ev, n_d, n),
            n_d,
            &dense(&gp, &gv, n_g, n),
            n_g,
        );
        let s = select_equations_sparse(n, &ep, &ev, n_d, &gp, &gv, n_g);
        assert_eq!(d, s, "case {case}");
        // the ordered (fill-limited) selection: a valid complement too
        let o = select_equations_ordered(n, &ep, &ev, n_d, &gp, &gv, n_g);
        match (&d, &o) {
            (Ok(d), Ok(o)) => {
                assert_eq!(
                    o.constraint_rows.len(),
                    d.constraint_rows.len(),
                    "case {case}"
                );
                assert!(!o.constraint_rows.contains(&(n_g - 1)) || !o.constraint_rows.contains(&0));
                assert_regular(n, &ep, &ev, &gp, &gv, o, case);
            }
            (Err(_), Err(_)) => {}
            _ => panic!("case {case}: dense {d:?} vs ordered {o:?}"),
        }
    }
}

/// The selected rows of `[E; G]` form a nonsingular `n × n` matrix.
fn assert_regular(
    n: usize,
    ep: &[(usize, usize)],
    ev: &[f64],
    gp: &[(usize, usize)],
    gv: &[f64],
    sel: &daec_solve::EquationSelection,
    case: usize,
) {
    let mut a = vec![0.0; n * n];
    let rows = sel.diff_rows.len();
    for (&(r, c), &v) in ep.iter().zip(ev) {
        if let Some(k) = sel.diff_rows.iter().position(|&x| x == r) {
            a[k * n + c] += v;
        }
    }
    for (&(r, c), &v) in gp.iter().zip(gv) {
        if let Some(k) = sel.constraint_rows.iter().position(|&x| x == r) {
            a[(rows + k) * n + c] += v;
        }
    }
    assert_eq!(rows + sel.constraint_rows.len(), n);
    let mut lu = daec_solve::RealLu::new(n);
    assert!(
        lu.factor(&a).is_ok(),
        "case {case}: singular selection {sel:?}"
    );
}

#[test]
fn ordered_selection_on_a_large_chain_is_regular_and_keeps_every_independent_constraint() {
    let p = Chain { m: 170, dup: 10 };
    let (n, n_d, n_g) = (p.n_vars(), p.n_diff(), p.n_constraints());
    let (ep, ev, gp, gv) = initial_jacobians(&p);
    let o = select_equations_ordered(n, &ep, &ev, n_d, &gp, &gv, n_g).expect("regular");
    // the duplicated constraints are dropped, every other one kept
    assert_eq!(o.constraint_rows.len(), p.m);
    assert_regular(n, &ep, &ev, &gp, &gv, &o, 0);
}

/// `E` and `∂g/∂z` of the chain at its initial point: patterns and values.
#[allow(clippy::type_complexity)]
fn initial_jacobians(p: &Chain) -> (Vec<(usize, usize)>, Vec<f64>, Vec<(usize, usize)>, Vec<f64>) {
    let z = p.initial();
    let ep = p.mass_pattern();
    let mut ev = vec![0.0; ep.len()];
    p.mass_values(0.0, &z, &mut ev);
    let gp = p.constraint_jacobian_pattern();
    let mut gv = vec![0.0; gp.len()];
    p.constraint_jacobian_values(0.0, &z, &mut gv);
    (ep, ev, gp, gv)
}
