//! The direct Runge–Kutta method for second-order DAEs
//! (wunderlich2005-second-order-daes, eqs. (29)/(30)) on the paper's body
//! of mass 1 on the unit circle (62)–(63), against the same Radau IIA
//! collocation on the first-order reduction (64) — the comparison of the
//! paper's Fig. 4 (2-stage Radau IIA, order 3, constant h = 0.001 on
//! [0, 0.1]).
//!
//! The paper reports a smaller λ error for the direct method. For a
//! stiffly accurate collocation method the two discretisations have the
//! same stage equations (`Y_i = y + h c_i v + h² Σ (A²)_ij V̇_j` is
//! `Y_i = y + h Σ a_ij V_j` with `V_j = v + h Σ a_jk V̇_k`), so the results
//! agree to round-off; that is what is asserted here (see the module docs
//! of `daec_solve::second_order`).

use daec_solve::{Collocation, SecondOrderDae, SecondOrderOptions, SecondOrderRadau, StepSize};

/// Which discretisation: the direct one on (62) or the reduction (64).
#[derive(Clone, Copy)]
enum DaeOrder {
    Second,
    First,
}

/// Reference at t = 0.1 (problem-catalogue W3, DOP853 at rtol 1e-13 on an
/// index-1 formulation): y1, y2, y1', y2', λ.
const REF: [f64; 5] = [
    0.099849875368738,
    0.995002513760065,
    0.995658448199700,
    -0.099915699294952,
    0.002316786822683,
];

/// (62) in second-order form, `x = (y1, y2, λ)`.
struct UnitCircle2;

impl SecondOrderDae for UnitCircle2 {
    fn n_vars(&self) -> usize {
        3
    }
    fn residual(&self, _t: f64, x: &[f64], xd: &[f64], xdd: &[f64], out: &mut [f64]) {
        let (y1, y2, la) = (x[0], x[1], x[2]);
        let (d1, d2) = (xd[0], xd[1]);
        out[0] = xdd[0] + y1 + 2.0 * y1 * d1 * d2 + 2.0 * y1 * la;
        out[1] = xdd[1] + d1 - 2.0 * y1 * d2 * d2 + 2.0 * y2 * la;
        out[2] = y1 * y1 + y2 * y2 - 1.0;
    }
    fn jacobians(&self, _t: f64, x: &[f64], xd: &[f64], _xdd: &[f64], jac: &mut [f64]) {
        let (y1, y2, la) = (x[0], x[1], x[2]);
        let (d1, d2) = (xd[0], xd[1]);
        #[rustfmt::skip]
        let j = [
            // ∂F/∂x
            1.0 + 2.0 * d1 * d2 + 2.0 * la, 0.0, 2.0 * y1,
            -2.0 * d2 * d2, 2.0 * la, 2.0 * y2,
            2.0 * y1, 2.0 * y2, 0.0,
            // ∂F/∂ẋ
            2.0 * y1 * d2, 2.0 * y1 * d1, 0.0,
            1.0, -4.0 * y1 * d2, 0.0,
            0.0, 0.0, 0.0,
            // ∂F/∂ẍ
            1.0, 0.0, 0.0,
            0.0, 1.0, 0.0,
            0.0, 0.0, 0.0,
        ];
        jac.copy_from_slice(&j);
    }
    fn orders(&self) -> Vec<u8> {
        vec![2, 2, 0]
    }
}

/// The first-order reduction (64), `x = (y1, y2, v1, v2, λ)`.
struct UnitCircle1;

impl SecondOrderDae for UnitCircle1 {
    fn n_vars(&self) -> usize {
        5
    }
    fn residual(&self, _t: f64, x: &[f64], xd: &[f64], _xdd: &[f64], out: &mut [f64]) {
        let (y1, y2, v1, v2, la) = (x[0], x[1], x[2], x[3], x[4]);
        out[0] = xd[0] - v1;
        out[1] = xd[1] - v2;
        out[2] = xd[2] + y1 + 2.0 * y1 * v1 * v2 + 2.0 * y1 * la;
        out[3] = xd[3] + v1 - 2.0 * y1 * v2 * v2 + 2.0 * y2 * la;
        out[4] = y1 * y1 + y2 * y2 - 1.0;
    }
    fn jacobians(&self, _t: f64, x: &[f64], _xd: &[f64], _xdd: &[f64], jac: &mut [f64]) {
        let (y1, y2, v1, v2, la) = (x[0], x[1], x[2], x[3], x[4]);
        #[rustfmt::skip]
        let j = [
            0.0, 0.0, -1.0, 0.0, 0.0,
            0.0, 0.0, 0.0, -1.0, 0.0,
            1.0 + 2.0 * v1 * v2 + 2.0 * la, 0.0, 2.0 * y1 * v2, 2.0 * y1 * v1, 2.0 * y1,
            -2.0 * v2 * v2, 2.0 * la, 1.0, -4.0 * y1 * v2, 2.0 * y2,
            2.0 * y1, 2.0 * y2, 0.0, 0.0, 0.0,
        ];
        jac.fill(0.0);
        jac[..25].copy_from_slice(&j);
        for k in 0..4 {
            jac[25 + k * 5 + k] = 1.0;
        }
    }
    fn orders(&self) -> Vec<u8> {
        vec![1, 1, 1, 1, 0]
    }
}

/// `(y1, y2, y1', y2', λ)` at t = 0.1 with fixed steps `h`, `stages`-stage
/// Radau IIA, directly on (62) or on the reduction (64).
fn run(order: DaeOrder, stages: usize, h: f64) -> [f64; 5] {
    let options = SecondOrderOptions {
        stages,
        step: StepSize::Fixed(h),
        ..SecondOrderOptions::default()
    };
    match order {
        DaeOrder::Second => {
            let mut m = SecondOrderRadau::new(&UnitCircle2, options).unwrap();
            let mut end = [0.0; 5];
            m.integrate(0.0, &[0.0, 1.0, 0.0], &[1.0, 0.0, 0.0], 0.1, |s| {
                end = [s.x[0], s.x[1], s.xd[0], s.xd[1], s.x[2]];
                true
            })
            .unwrap();
            end
        }
        DaeOrder::First => {
            let mut m = SecondOrderRadau::new(&UnitCircle1, options).unwrap();
            let mut end = [0.0; 5];
            // ẋ(0) = (v, ÿ(0), λ̇) = (1, 0, 0, -1, 0) (the start of Newton).
            m.integrate(
                0.0,
                &[0.0, 1.0, 1.0, 0.0, 0.0],
                &[1.0, 0.0, 0.0, -1.0, 0.0],
                0.1,
                |s| {
                    end = [s.x[0], s.x[1], s.x[2], s.x[3], s.x[4]];
                    true
                },
            )
            .unwrap();
            end
        }
    }
}

fn errors(end: [f64; 5]) -> (f64, f64) {
    let y = (0..4).fold(0.0f64, |a, k| a.max((end[k] - REF[k]).abs()));
    (y, (end[4] - REF[4]).abs())
}

#[test]
fn collocation_coefficients_satisfy_the_simplifying_assumptions() {
    for s in [2, 3] {
        let m = Collocation::radau_iia(s).unwrap();
        // C(s): Σ_j a_ij c_j^{k−1} = c_i^k / k; B(2s−1) via b = last row of A.
        for i in 0..s {
            for k in 1..=s {
                let lhs: f64 = (0..s)
                    .map(|j| m.a[i * s + j] * m.c[j].powi(k as i32 - 1))
                    .sum();
                assert!((lhs - m.c[i].powi(k as i32) / k as f64).abs() < 1e-14);
            }
        }
        for k in 1..=(2 * s - 1) {
            let lhs: f64 = (0..s).map(|i| m.b[i] * m.c[i].powi(k as i32 - 1)).sum();
            assert!((lhs - 1.0 / k as f64).abs() < 1e-14, "B({k}), s = {s}");
        }
        // (28f) and the paper's Example 2.4 table for s = 2.
        for j in 0..s {
            assert!((m.b2[j] - m.a2[(s - 1) * s + j]).abs() < 1e-15);
        }
    }
    let m = Collocation::radau_iia(2).unwrap();
    let expect_a = [5.0 / 12.0, -1.0 / 12.0, 0.75, 0.25];
    let expect_a2 = [1.0 / 9.0, -1.0 / 18.0, 0.5, 0.0];
    for k in 0..4 {
        assert!((m.a[k] - expect_a[k]).abs() < 1e-15);
        assert!((m.a2[k] - expect_a2[k]).abs() < 1e-15);
    }
}

#[test]
fn direct_method_and_reduction_give_the_same_multiplier() {
    // Fig. 4 of the paper: 2-stage Radau IIA (order 3), constant steps.
    // Where the discretisation error dominates the two agree; with smaller
    // steps both reach the round-off floor of the index-3 iteration matrix
    // (condition ~h^-2 for the direct method, ~h^-3 for the reduction) and
    // the λ errors are noise (printed, not asserted).
    for s in [2, 3] {
        for h in [0.005, 0.002, 0.001, 5e-4, 1e-4, 2e-5] {
            let (y2, l2) = errors(run(DaeOrder::Second, s, h));
            let (y1, l1) = errors(run(DaeOrder::First, s, h));
            eprintln!(
                "s = {s}, h = {h}: λ error {l2:.3e} (second order) vs {l1:.3e} (first-order reduction); state error {y2:.3e} vs {y1:.3e}"
            );
            assert!(y2 < 1e-6 && y1 < 1e-6, "s = {s}, h = {h}: {y2:e}, {y1:e}");
            if s == 2 && h >= 5e-4 {
                assert!(
                    (l2 - l1).abs() <= 1e-3 * l1,
                    "s = {s}, h = {h}: {l2:e} vs {l1:e}"
                );
                assert!(
                    (y2 - y1).abs() <= 1e-3 * y1,
                    "s = {s}, h = {h}: {y2:e} vs {y1:e}"
                );
            }
        }
    }
}

#[test]
fn direct_method_converges_with_its_order_and_keeps_the_constraint() {
    // Position error at t = 0.1 for halved steps (Radau IIA on index 3:
    // positions of order 2s - 1 = 3 for s = 2; for s = 3 the error reaches
    // the reference's accuracy first, so the order is read at larger
    // steps); the end points satisfy g = 0 (stiffly accurate).
    let position = |e: [f64; 5]| (e[0] - REF[0]).abs().max((e[1] - REF[1]).abs());
    for (s, p, h) in [(2usize, 3.0, 0.02), (3, 5.0, 0.05)] {
        let e1 = position(run(DaeOrder::Second, s, h));
        let e2 = position(run(DaeOrder::Second, s, h / 2.0));
        let observed = (e1 / e2).log2();
        eprintln!("s = {s}: errors {e1:.2e}, {e2:.2e}, observed order {observed:.2}");
        assert!(observed > p - 0.6, "s = {s}: observed order {observed}");
        let end = run(DaeOrder::Second, s, 0.01);
        assert!((end[0] * end[0] + end[1] * end[1] - 1.0).abs() < 1e-13);
    }
}

#[test]
fn adaptive_steps_reach_the_tolerance() {
    let options = SecondOrderOptions {
        step: StepSize::Adaptive {
            rtol: 1e-8,
            atol: 1e-8,
        },
        ..SecondOrderOptions::default()
    };
    let mut m = SecondOrderRadau::new(&UnitCircle2, options).unwrap();
    let mut end = [0.0; 5];
    let stats = m
        .integrate(0.0, &[0.0, 1.0, 0.0], &[1.0, 0.0, 0.0], 0.1, |s| {
            end = [s.x[0], s.x[1], s.xd[0], s.xd[1], s.x[2]];
            true
        })
        .unwrap();
    let (ey, el) = errors(end);
    assert!(ey < 1e-7, "{ey:e}");
    assert!(el < 1e-5, "{el:e}");
    assert!(stats.steps_accepted >= 1 && stats.residual_evals > stats.steps_accepted);
    assert!(
        SecondOrderRadau::new(
            &UnitCircle2,
            SecondOrderOptions {
                stages: 4,
                ..options
            }
        )
        .is_err()
    );
}
