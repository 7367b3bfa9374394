//! The formulations of steinbrecher2016 §3 on the paper's two examples:
//! equation/unknown counts, the equations themselves, the StE Σ-Jacobian
//! determinants at consistent points, and the refusals.

use daec_diag::SourceMap;
use daec_expr::{Env, ExprPool, ParamId};
use daec_model::{Dae, LowerOptions};
use daec_regularize::{
    Analysis, AnalyzeOptions, Form, Formulation, Refusal, RegularizeOptions, RowKind, UnknownKind,
    analyze, best_hvt, regularize, ste_for_hvt,
};
use daec_regularize::{FullPivLu, Matrix};
use daec_regularize::{sigma_jacobian, sigma_matrix};

fn load_with(path: &str, overrides: &[(&str, f64)]) -> Dae {
    let full = format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(full).unwrap();
    let mut map = SourceMap::new();
    let file = map.add(path, text);
    let parsed = daec_syntax::parse(file, map.source(file));
    let options = LowerOptions {
        overrides: overrides.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        ..LowerOptions::default()
    };
    let (dae, diags) = daec_model::lower(parsed.model.as_ref().unwrap(), &options);
    dae.unwrap_or_else(|| panic!("{path}: {diags:?}"))
}

fn load_text(text: &str) -> Dae {
    let mut map = SourceMap::new();
    let file = map.add("inline.dae", text.to_string());
    let parsed = daec_syntax::parse(file, map.source(file));
    let (dae, diags) = daec_model::lower(parsed.model.as_ref().unwrap(), &LowerOptions::default());
    dae.unwrap_or_else(|| panic!("{diags:?}"))
}

fn load(path: &str) -> (Dae, Analysis) {
    let mut dae = load_with(path, &[]);
    let a = analyze(&mut dae, &AnalyzeOptions::default());
    (dae, a)
}

fn form(dae: &mut Dae, a: &Analysis, f: Form) -> Formulation {
    regularize(dae, a, f, &RegularizeOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", f.name()))
}

fn texts(dae: &Dae, f: &Formulation) -> Vec<String> {
    (0..f.equations.len())
        .map(|r| f.equation_text(dae, r))
        .collect()
}

const PENDULUM: &str = "models/steinbrecher/pendulum.dae";
const SPRING: &str = "models/steinbrecher/spring_chain.dae";
/// T1, T2 of (12) as `hvt[j] = i` (0-based).
const PENDULUM_T1: [usize; 5] = [4, 1, 0, 3, 2];
const PENDULUM_T2: [usize; 5] = [0, 4, 2, 1, 3];
/// T1, T2 of (18).
const SPRING_T1: [usize; 7] = [4, 6, 2, 0, 1, 5, 3];
const SPRING_T2: [usize; 7] = [0, 6, 4, 3, 1, 2, 5];

#[test]
fn pendulum_counts_match_the_paper() {
    let (mut dae, a) = load(PENDULUM);
    // (34): 14 equations for 11 unknowns.
    let ada = form(&mut dae, &a, Form::Ada);
    assert_eq!((ada.equations.len(), ada.unknowns.len()), (14, 11));
    assert_eq!(ada.differential_rows(), [0, 1, 2, 3]);
    // (38): 8 equations for 5 unknowns; (10e) is listed twice.
    let hic = form(&mut dae, &a, Form::Hic);
    assert_eq!((hic.equations.len(), hic.unknowns.len()), (8, 5));
    assert_eq!(hic.differential_rows(), [0, 1, 2, 3]);
    assert_eq!(hic.constraint_rows(), [4, 5, 6, 7]);
    assert_eq!(hic.duplicate_rows(), [5]);
    let levels: Vec<u32> = hic.equations[5..]
        .iter()
        .map(|e| match e.kind {
            RowKind::Constraint { level } => level,
            RowKind::Differential => 99,
        })
        .collect();
    assert_eq!(levels, [0, 1, 2]);
    // (23), (24): 9 / 9.
    for hvt in [PENDULUM_T1, PENDULUM_T2] {
        let ste = ste_for_hvt(&mut dae, &a, &hvt).unwrap();
        assert_eq!((ste.equations.len(), ste.unknowns.len()), (9, 9));
    }
    // DD, GGL (40): 6 × 6, DI1 (41): 5 × 5.
    let dd = form(&mut dae, &a, Form::Dd);
    assert_eq!((dd.equations.len(), dd.unknowns.len()), (9, 9));
    let ggl = form(&mut dae, &a, Form::Ggl);
    assert_eq!((ggl.equations.len(), ggl.unknowns.len()), (6, 6));
    let di1 = form(&mut dae, &a, Form::Di1);
    assert_eq!((di1.equations.len(), di1.unknowns.len()), (5, 5));
    assert_eq!(di1.differential_rows(), [0, 1, 2, 3]);
    assert_eq!(di1.equations[4].kind, RowKind::Constraint { level: 2 });
}

#[test]
fn pendulum_ste_equations_are_23_and_24() {
    let (mut dae, a) = load(PENDULUM);
    let s1 = ste_for_hvt(&mut dae, &a, &PENDULUM_T1).unwrap();
    let names: Vec<&str> = s1.unknowns.iter().map(|u| u.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "x", "y", "v", "w", "lambda", "psi_x_1", "psi_x_2", "psi_y_2", "psi_v_1"
        ]
    );
    let t = texts(&dae, &s1);
    println!("{t:#?}");
    // (23a), (23b), (23e), (23h): ψ1¹ − v, ψ1² − ψ3¹, mψ3¹ + 2xλ, 2xψ1¹ + 2yẏ.
    assert!(t[0].contains("psi_x_1") && t[0].contains('v'), "{}", t[0]);
    assert!(t[1].contains("psi_x_2") && t[1].contains("psi_v_1"));
    assert!(t[2].contains("der(y)"));
    assert!(t[3].contains("psi_y_2") && t[3].contains("der(w)"));
    assert!(t[4].contains("psi_v_1") && !t[4].contains("der("));
    assert!(t[7].contains("psi_x_1") && t[7].contains("der(y)"));
    assert_eq!(s1.differential_rows(), [2, 3, 5, 7, 8]);
    let s2 = ste_for_hvt(&mut dae, &a, &PENDULUM_T2).unwrap();
    let names: Vec<&str> = s2.unknowns[5..].iter().map(|u| u.name.as_str()).collect();
    assert_eq!(names, ["psi_x_2", "psi_y_1", "psi_y_2", "psi_w_1"]);
    assert_eq!(s2.differential_rows(), [0, 1, 4, 7, 8]);
}

/// Values of the formulation's unknowns and derivatives at a consistent
/// point of the pendulum: `x = ℓ sin θ`, `y = −ℓ cos θ`, velocity
/// `ω·(ℓ cos θ, ℓ sin θ)`, λ from the level-2 constraint, the derivatives
/// from the DAE.
struct PendulumPoint {
    z: [f64; 5],
    /// ẋ, ẏ, v̇, ẇ, ẍ, ÿ
    dz: [f64; 4],
    ddxy: [f64; 2],
    params: Vec<f64>,
    psi: Vec<(usize, u32)>,
}

impl PendulumPoint {
    fn new(theta: f64, omega: f64, m: f64, l: f64, g: f64, f: &Formulation) -> Self {
        let (x, y) = (l * theta.sin(), -l * theta.cos());
        let (v, w) = (omega * l * theta.cos(), omega * l * theta.sin());
        // (11b): v² + w² − (2/m)(x² + y²)λ − yg = 0
        let lambda = (v * v + w * w - y * g) * m / (2.0 * (x * x + y * y));
        let vd = -2.0 * x * lambda / m;
        let wd = -(2.0 * y * lambda + m * g) / m;
        let psi = f.unknowns[5..]
            .iter()
            .map(|u| match u.kind {
                UnknownKind::Derivative { unknown, order } => (unknown, order),
                _ => panic!(),
            })
            .collect();
        PendulumPoint {
            z: [x, y, v, w, lambda],
            dz: [v, w, vd, wd],
            ddxy: [vd, wd],
            params: vec![m, l, g],
            psi,
        }
    }
    fn derivative(&self, j: usize, order: u32) -> f64 {
        match (j, order) {
            (0..=3, 1) => self.dz[j],
            (0 | 1, 2) => self.ddxy[j],
            _ => f64::NAN,
        }
    }
}

impl Env for PendulumPoint {
    fn var(&self, unknown: u32, order: u32) -> f64 {
        let k = unknown as usize;
        if k < 5 {
            if order == 0 {
                self.z[k]
            } else {
                self.derivative(k, order)
            }
        } else {
            let (j, l) = self.psi[k - 5];
            if order == 0 {
                self.derivative(j, l)
            } else {
                f64::NAN
            }
        }
    }
    fn param(&self, p: ParamId) -> f64 {
        self.params[p.0 as usize]
    }
    fn time(&self) -> f64 {
        0.0
    }
}

/// The Σ-method on a formulation: offsets and the Σ-Jacobian's
/// determinant at `env`.
fn sigma_of(pool: &mut ExprPool, f: &Formulation, env: &dyn Env) -> (Vec<u32>, Vec<u32>, f64) {
    let res: Vec<_> = f.equations.iter().map(|e| e.residual).collect();
    let n = f.unknowns.len();
    let s = sigma_matrix(pool, &res, n);
    let sa = daec_structure::analyze(&s).expect("structurally regular");
    let jac = sigma_jacobian(pool, &res, &s, &sa.offsets);
    let mut m = Matrix::zeros(n, n);
    for e in &jac {
        m.set(e.row, e.col, pool.eval(e.expr, env));
    }
    let det = FullPivLu::new(&m, 1e-14).determinant();
    (sa.offsets.c.clone(), sa.offsets.d.clone(), det)
}

#[test]
fn pendulum_ste_sigma_jacobian_determinants_are_16mx2l2_and_minus_16my2l2() {
    // Ex. 3.1: det 𝔍̃1 = 16 m x² ℓ² (25), det 𝔍̃2 = −16 m y² ℓ² (26), at
    // consistent points; c̃ = 0, d̃1 = (0,1,0,1,0,0,0,0,0), d̃2 = (1,0,1,0,…).
    let (m, l, g) = (2.0, 1.5, 9.81);
    let mut dae = load_with(PENDULUM, &[("m", m), ("l", l), ("g", g)]);
    let a = analyze(&mut dae, &AnalyzeOptions::default());
    let s1 = ste_for_hvt(&mut dae, &a, &PENDULUM_T1).unwrap();
    let s2 = ste_for_hvt(&mut dae, &a, &PENDULUM_T2).unwrap();
    for (theta, omega) in [(0.3, 0.7), (1.1, -0.4), (2.5, 1.3), (-0.8, 0.0)] {
        let p1 = PendulumPoint::new(theta, omega, m, l, g, &s1);
        let (c, d, det1) = sigma_of(&mut dae.pool, &s1, &p1);
        assert_eq!(c, [0; 9]);
        assert_eq!(d, [0, 1, 0, 1, 0, 0, 0, 0, 0]);
        let [x, y, ..] = p1.z;
        let want1 = 16.0 * m * x * x * l * l;
        assert!(
            (det1 - want1).abs() <= 1e-9 * want1.abs().max(1.0),
            "θ={theta}: {det1} vs {want1}"
        );
        let p2 = PendulumPoint::new(theta, omega, m, l, g, &s2);
        let (c, d, det2) = sigma_of(&mut dae.pool, &s2, &p2);
        assert_eq!(c, [0; 9]);
        assert_eq!(d, [1, 0, 1, 0, 0, 0, 0, 0, 0]);
        let want2 = -16.0 * m * y * y * l * l;
        assert!(
            (det2 - want2).abs() <= 1e-9 * want2.abs().max(1.0),
            "θ={theta}: {det2} vs {want2}"
        );
    }
}

#[test]
fn pendulum_ste_switches_between_s1_and_s2_with_x_versus_y() {
    // κ_T1 = 4m x², κ_T2 = 4m y² (Ex. 3.1): S1 if |x| > |y|, else S2.
    let (mut dae, a) = load(PENDULUM);
    // The model starts at x = 1, y = 0: S1.
    let ste = form(&mut dae, &a, Form::Ste);
    assert_eq!(ste.hvt.as_deref(), Some(&PENDULUM_T1[..]));
    for (theta, want) in [
        (0.3, PENDULUM_T2),
        (1.2, PENDULUM_T1),
        (2.0, PENDULUM_T1),
        (2.9, PENDULUM_T2),
    ] {
        let p = PendulumPoint::new(theta, 0.5, 1.0, 1.0, 13.75, &ste);
        assert_eq!(best_hvt(&dae.pool, &a, &p).unwrap(), want, "θ = {theta}");
    }
}

#[test]
fn spring_chain_counts_match_the_paper() {
    let (mut dae, a) = load(SPRING);
    // (36): 25 / 20; HiC (Ex. 3.6): 12 / 7.
    let ada = form(&mut dae, &a, Form::Ada);
    assert_eq!((ada.equations.len(), ada.unknowns.len()), (25, 20));
    let hic = form(&mut dae, &a, Form::Hic);
    assert_eq!((hic.equations.len(), hic.unknowns.len()), (12, 7));
    // (27), (28): 18 / 18 (7 + 11 ψ; the ψ list printed for (27) has a
    // spurious 12th entry ψ3⁴, see the catalogue).
    for hvt in [SPRING_T1, SPRING_T2] {
        let ste = ste_for_hvt(&mut dae, &a, &hvt).unwrap();
        assert_eq!((ste.equations.len(), ste.unknowns.len()), (18, 18));
    }
    // κ_T1 = κ_T2 = cm: the default choice is one of them.
    let ste = form(&mut dae, &a, Form::Ste);
    let hvt = ste.hvt.clone().unwrap();
    assert!(hvt == SPRING_T1 || hvt == SPRING_T2, "{hvt:?}");
    // DI1 (42): the level-4 constraint replaces (16g).
    let di1 = form(&mut dae, &a, Form::Di1);
    assert_eq!((di1.equations.len(), di1.unknowns.len()), (7, 7));
    assert_eq!(di1.equations[6].kind, RowKind::Constraint { level: 4 });
    // GGL does not apply: (16g) is differentiated 4 times.
    let e = regularize(&mut dae, &a, Form::Ggl, &RegularizeOptions::default()).unwrap_err();
    assert_eq!(
        e.cause,
        Refusal::NotPositionConstraint {
            equation: 6,
            differentiations: 4
        }
    );
    assert!(
        e.to_string().contains("equation 7") && e.to_string().contains("4 time"),
        "{e}"
    );
}

#[test]
fn spring_chain_ste_t1_is_27_with_the_typo_corrected() {
    let (mut dae, a) = load(SPRING);
    let s1 = ste_for_hvt(&mut dae, &a, &SPRING_T1).unwrap();
    let names: Vec<&str> = s1.unknowns[7..].iter().map(|u| u.name.as_str()).collect();
    // ψ1 of (27) without the spurious ψ3⁴.
    assert_eq!(
        names,
        [
            "psi_p1_1", "psi_p1_2", "psi_p2_1", "psi_p2_2", "psi_p2_3", "psi_p2_4", "psi_p3_2",
            "psi_v1_1", "psi_v2_1", "psi_v2_2", "psi_v2_3"
        ]
    );
    let t = texts(&dae, &s1);
    println!("{t:#?}");
    // Row 11 of (27) (from (20k)): c(ψ2¹ − ṗ3), printed as c(ψ2¹ − p3).
    assert!(t[10].contains("der(p3)"), "{}", t[10]);
    let s2 = ste_for_hvt(&mut dae, &a, &SPRING_T2).unwrap();
    let names: Vec<&str> = s2.unknowns[7..].iter().map(|u| u.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "psi_p1_2", "psi_p2_1", "psi_p2_2", "psi_p2_3", "psi_p2_4", "psi_p3_1", "psi_p3_2",
            "psi_v2_1", "psi_v2_2", "psi_v2_3", "psi_v3_1"
        ]
    );
}

#[test]
fn spring_chain_ste_sigma_jacobians_are_constant_and_nonsingular() {
    // Both (27) and (28) are globally valid, c̃ = 0 (catalogue: det = −2c³m
    // for both, with rows and columns in the paper's order).
    let (mut dae, a) = load(SPRING);
    struct Any;
    impl Env for Any {
        fn var(&self, _: u32, _: u32) -> f64 {
            0.37
        }
        fn param(&self, p: ParamId) -> f64 {
            [1.0, 1.0 / 6.0][p.0 as usize]
        }
        fn time(&self) -> f64 {
            0.2
        }
    }
    let (m, c) = (1.0, 1.0 / 6.0);
    for hvt in [SPRING_T1, SPRING_T2] {
        let s = ste_for_hvt(&mut dae, &a, &hvt).unwrap();
        let (cc, _, det) = sigma_of(&mut dae.pool, &s, &Any);
        assert_eq!(cc, [0; 18]);
        let want = -2.0 * c * c * c * m;
        assert!((det - want).abs() < 1e-12, "{det} vs {want}");
    }
}

#[test]
fn refusals_name_the_reason() {
    // An ODE: GGL has no constraints to stabilise.
    let text = "model O\n  Real x(start = 1);\nequation\n  der(x) = -x;\nend O;\n";
    let mut map = SourceMap::new();
    let file = map.add("o.dae", text.to_string());
    let parsed = daec_syntax::parse(file, map.source(file));
    let (dae, _) = daec_model::lower(parsed.model.as_ref().unwrap(), &LowerOptions::default());
    let mut dae = dae.unwrap();
    let a = analyze(&mut dae, &AnalyzeOptions::default());
    let e = regularize(&mut dae, &a, Form::Ggl, &RegularizeOptions::default()).unwrap_err();
    assert_eq!(
        (e.form, &e.cause),
        (Form::Ggl, &Refusal::NoAlgebraicEquations)
    );
    assert!(e.to_string().contains("ODE"), "{e}");
    // StE on a given non-tight HVT.
    let (mut dae, a) = load(PENDULUM);
    let e = ste_for_hvt(&mut dae, &a, &[0, 1, 2, 3, 4]).unwrap_err();
    assert!(e.to_string().contains("not a tight position"), "{e}");
    assert!(matches!(e.cause, Refusal::HvtNotTight { .. }), "{e:?}");
    let e = ste_for_hvt(&mut dae, &a, &[0, 1]).unwrap_err();
    assert_eq!(
        e.cause,
        Refusal::HvtLength {
            entries: 2,
            unknowns: 5
        }
    );
    assert_eq!(
        ste_for_hvt(&mut dae, &a, &[0, 0, 1, 2, 3])
            .unwrap_err()
            .cause,
        Refusal::HvtNotPermutation
    );
}

#[test]
fn a_structurally_singular_model_is_refused_with_its_parts() {
    // `x` is fixed twice (equations 1 and 2), `y` and `z` share equation 3:
    // over-determined {F1, F2} in `x`, under-determined {F3} in `y`, `z`.
    let text = "model S\n  Real x(start = 1);\n  Real y;\n  Real z;\nequation\n  der(x) = -x;\n  x = 2*time;\n  y + z = 0;\nend S;\n";
    let mut dae = load_text(text);
    let a = analyze(&mut dae, &AnalyzeOptions::default());
    for form in [Form::Ste, Form::Hic, Form::Dd] {
        let e = regularize(&mut dae, &a, form, &RegularizeOptions::default()).unwrap_err();
        assert_eq!(e.form, form);
        assert_eq!(
            e.cause,
            Refusal::StructurallySingular {
                over_equations: vec![0, 1],
                under_unknowns: vec![1, 2]
            }
        );
        assert_eq!(
            e.to_string(),
            format!(
                "the {} formulation does not apply: the model is structurally singular (see `daec analyze` for the over- and under-determined parts)",
                form.name().to_ascii_uppercase()
            )
        );
    }
}

#[test]
fn pendulum_dd_picks_the_s1_dummies_and_ggl_has_index_2() {
    let (mut dae, a) = load(PENDULUM);
    // At x = 1, y = 0 the pivoting chooses ẍ, ÿ, v̇ (level 1) and ẋ (level 2):
    // the same derivatives as S1 (23).
    let dd = form(&mut dae, &a, Form::Dd);
    let names: Vec<&str> = dd.unknowns[5..].iter().map(|u| u.name.as_str()).collect();
    assert_eq!(names, ["dd_x_1", "dd_x_2", "dd_y_2", "dd_v_1"]);
    // GGL (40): c = (0,0,0,0,1,1), d = (1,1,1,1,0,0), ν_Σ = 2,
    // det 𝔍 = −16 m (x² + y²)² (catalogue S1).
    let ggl = form(&mut dae, &a, Form::Ggl);
    assert!(matches!(
        ggl.unknowns[5].kind,
        UnknownKind::Multiplier { constraint: 5 }
    ));
    let (m, l, g) = (1.0, 1.0, 13.75);
    let p = PendulumPoint::new(
        0.7,
        0.3,
        m,
        l,
        g,
        &ste_for_hvt(&mut dae, &a, &PENDULUM_T1).unwrap(),
    );
    struct Ggl<'a>(&'a PendulumPoint);
    impl Env for Ggl<'_> {
        fn var(&self, unknown: u32, order: u32) -> f64 {
            if unknown == 5 {
                0.0
            } else {
                self.0.var(unknown, order)
            }
        }
        fn param(&self, p: ParamId) -> f64 {
            self.0.param(p)
        }
        fn time(&self) -> f64 {
            0.0
        }
    }
    let (c, d, det) = sigma_of(&mut dae.pool, &ggl, &Ggl(&p));
    assert_eq!(c, [0, 0, 0, 0, 1, 1]);
    assert_eq!(d, [1, 1, 1, 1, 0, 0]);
    let r2 = p.z[0] * p.z[0] + p.z[1] * p.z[1];
    let want = -16.0 * m * r2 * r2;
    assert!((det - want).abs() < 1e-9, "{det} vs {want}");
}

const CHARGE_PUMP: &str = "models/testset/charge_pump.dae";

/// The charge pump's level-1 constraint: which derivative-array row it
/// comes from, with the start value of the gate potential `U1` replaced.
fn charge_pump_hidden_constraint(u1: f64) -> (usize, u32) {
    let mut dae = load_with(CHARGE_PUMP, &[]);
    let j = dae.unknowns.iter().position(|u| u.name() == "U1").unwrap();
    dae.unknowns[j].set_start(Some(u1));
    let a = analyze(&mut dae, &AnalyzeOptions::default());
    let ca = a.regular().unwrap().constraints.as_ref().unwrap();
    assert!(
        ca.is_complete(),
        "U1 = {u1}: unresolved {:?}",
        ca.unresolved_derivatives
    );
    let hidden: Vec<_> = ca.constraints.iter().filter(|c| c.level == 1).collect();
    assert_eq!(hidden.len(), 1, "U1 = {u1}");
    assert_eq!(ca.constraints.len(), 7);
    hidden[0].source
}

#[test]
fn charge_pump_pivots_are_capacitances_and_vanish_in_no_branch() {
    // The pivots of the source and drain rows are the capacitances
    // −C_S − ∂Q_S/∂U2 and −C_D − ∂Q_D/∂U3 + …, of size 1e-12 to 1e-13;
    // in the depletion region of the start values (U1 = 0) the charge
    // derivatives vanish, and the gate-charge row F5 differentiated once is
    // left as the hidden constraint that determines `I`.
    assert_eq!(charge_pump_hidden_constraint(0.0), (4, 1));
    // In the inversion region (U1 = 5) the gate row's coefficients of U2'
    // and U3' are non-zero, but they vanish identically in depletion: F5
    // must still be the constraint, not a pivot row.
    assert_eq!(charge_pump_hidden_constraint(5.0), (4, 1));
    let (mut dae, a) = load(CHARGE_PUMP);
    let hic = form(&mut dae, &a, Form::Hic);
    assert_eq!((hic.equations.len(), hic.unknowns.len()), (16, 9));
}

/// A node `b` joined to node `a` by a nonlinear capacitor only (its load
/// capacitance `CL` is 0): the charge rows' Σ-Jacobian rows depend on the
/// state, and their sum vanishes (charge conservation at `b`).
const FLOATING_NODE: &str = "model FloatingNode
  parameter Real C = 1;
  parameter Real CL = 0;
  parameter Real R = 1;
  Real qa(start = 0);
  Real qb(start = 0);
  Real va(start = 0);
  Real vb(start = 0);
equation
  der(qa) = -(va - sin(time))/R - (va - vb)/R;
  der(qb) = -vb/R - (vb - va)/R;
  0 = qa - (if va - vb <= 0 then C/sqrt(1 - (va - vb)) else C*(1 + (va - vb)/2))*(va - vb);
  0 = qb - ((if va - vb <= 0 then C/sqrt(1 - (va - vb)) else C*(1 + (va - vb)/2))*(vb - va) + CL*vb);
end FloatingNode;
";

#[test]
fn lc_conversion_applies_to_a_constant_null_vector_of_state_dependent_rows() {
    let mut dae = load_text(FLOATING_NODE);
    let a = analyze(&mut dae, &AnalyzeOptions::default());
    assert_eq!(
        a.conversions.len(),
        1,
        "{:?}",
        a.regular().map(|r| &r.success)
    );
    let conv = &a.conversions[0];
    assert_eq!(conv.replaced, 2);
    assert_eq!(conv.combination, vec![(2, 1.0, 0), (3, 1.0, 0)]);
    let cl = dae.parameters.iter().position(|p| p.name == "CL").unwrap();
    assert_eq!(conv.zero_parameters, vec![daec_expr::ParamId(cl as u32)]);
    let reg = a.regular().unwrap();
    assert!(reg.success.succeeded(), "{:?}", reg.success);
    // qa + qb = 0, differentiated once, determines vb: index 2.
    assert_eq!(a.before_conversion.as_ref().unwrap().index(), Some(1));
    assert_eq!(a.index(), Some(2));
    // With a load capacitance the rows are independent: no conversion.
    let mut dae = load_with_text_override(FLOATING_NODE, "CL = 0", "CL = 0.5");
    let a = analyze(&mut dae, &AnalyzeOptions::default());
    assert!(a.conversions.is_empty());
    assert!(a.regular().unwrap().success.succeeded());
    assert_eq!(a.index(), Some(1));
}

fn load_with_text_override(text: &str, from: &str, to: &str) -> Dae {
    load_text(&text.replace(from, to))
}

/// A pendulum whose rod angle `a` is an alias of the joint angle `phi`,
/// the rod's rows written before the alias (as a component model flattens
/// them): differentiated, the `y` row is a singleton in `ȧ` with the
/// coefficient `L cos a`, non-zero at the start (`a = 0`), and the alias
/// row one with the constant coefficient 1. Solving the `y` row for `ȧ`
/// made `cos a` a denominator of the hidden constraints, singular where
/// the rod hangs straight down; the constant pivot goes first, and no
/// constraint divides by a state-dependent expression. `x` and `y` start
/// at 0 (the reference point the pivots are chosen at): the torque row
/// `x*fy - y*fx` cancels the angular acceleration, so at a start point on
/// the rod (`x = L cos a`, which the start point would give `x` without a
/// start value) the Σ-Jacobian is singular and no formulation applies.
#[test]
fn hidden_constraints_pivot_on_a_constant_coefficient_first() {
    let mut dae = load_text(
        "model AliasedPendulum
  parameter Real m = 1;
  parameter Real L = 1;
  parameter Real g = 9.81;
  Real phi(start = 0, fixed = true);
  Real w(start = 0, fixed = true);
  Real a;
  Real x(start = 0);
  Real y(start = 0);
  Real vx;
  Real vy;
  Real fx;
  Real fy;
equation
  x = L*cos(a);
  y = L*sin(a);
  a = phi;
  der(x) = vx;
  der(y) = vy;
  der(phi) = w;
  m*der(vx) = fx;
  m*der(vy) = fy - m*g;
  m*L*L*der(w) = x*fy - y*fx;
end AliasedPendulum;",
    );
    let a = analyze(&mut dae, &AnalyzeOptions::default());
    let f = form(&mut dae, &a, Form::Hic);
    let texts = texts(&dae, &f);
    // 9 equations, the repeated 3 position rows, 2 at each hidden level.
    assert!(texts.len() > 9, "no hidden constraint in {texts:#?}");
    for t in &texts {
        for (i, _) in t.match_indices("/ ") {
            let d = divisor(&t[i + 2..]);
            assert!(
                !d.contains("cos") && !d.contains("sin"),
                "the divisor {d} in {t}"
            );
        }
    }
}

/// The operand that starts `s`: a parenthesised group or a name.
fn divisor(s: &str) -> &str {
    let mut depth = 0;
    for (i, ch) in s.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' if depth == 1 => return &s[..=i],
            ')' => depth -= 1,
            ' ' if depth == 0 => return &s[..i],
            _ => {}
        }
    }
    s
}

const PENDULUM_CHAIN: &str = "models/scale/pendulum_chain.dae";

/// The derivatives a form replaced by algebraic unknowns, counted by how
/// far below the highest derivative `d_j` of their unknown they are (0:
/// `z_j^(d_j)` itself).
fn replaced_by_depth(a: &Analysis, f: &Formulation) -> Vec<usize> {
    let d = &a.regular().unwrap().sigma.offsets.d;
    let mut count = Vec::new();
    for u in &f.unknowns {
        if let UnknownKind::Derivative { unknown, order } = u.kind {
            let depth = (d[unknown] - order) as usize;
            if count.len() <= depth {
                count.resize(depth + 1, 0);
            }
            count[depth] += 1;
        }
    }
    count
}

#[test]
fn dd_and_ste_form_a_pendulum_chain_above_the_former_dense_limits() {
    // N = 320 links: 7N = 2240 unknowns, 5N = 1600 equations differentiated
    // at least once (c = 1 for der(x), der(y); c = 2 for the link vectors
    // and the constraints). DD pivoted densely up to 1500 such equations
    // and refused above; StE checked its extension (15N = 4800 unknowns)
    // only up to 800 and the conditioning of its dummies up to 120. Both
    // now go the sparse way, with no limit reported.
    let n = 320;
    let mut dae = load_with(PENDULUM_CHAIN, &[("N", n as f64)]);
    let a = analyze(&mut dae, &AnalyzeOptions::default());
    assert_eq!(dae.unknowns.len(), 7 * n);
    let c = &a.regular().unwrap().sigma.offsets.c;
    assert_eq!(c.iter().filter(|&&ci| ci >= 1).count(), 5 * n);
    assert_eq!(c.iter().map(|&ci| ci as usize).sum::<usize>(), 8 * n);
    for f in [Form::Dd, Form::Ste] {
        let form = form(&mut dae, &a, f);
        let name = f.name();
        // the reduced derivative array: n + Σc equations in as many
        // unknowns, Σc of them the replaced derivatives
        assert_eq!(form.equations.len(), 15 * n, "{name}");
        assert_eq!(form.unknowns.len(), 15 * n, "{name}");
        assert!(form.limits.is_empty(), "{name}: {:?}", form.limits);
        // DD: |R_1| = 5N dummies of the highest derivatives, |R_2| = 3N
        // one below (Mattsson–Söderlind, one level per differentiation);
        // StE: the c_i highest derivatives of the unknown the HVT matches
        // to row i, the same counts.
        assert_eq!(replaced_by_depth(&a, &form), [5 * n, 3 * n], "{name}");
        // the second derivatives of all 4N positions and link vectors
        // (d = 2) are replaced: the derivatives left are of first order
        let d = &a.regular().unwrap().sigma.offsets.d;
        let second = form
            .unknowns
            .iter()
            .filter(|u| matches!(u.kind, UnknownKind::Derivative { unknown, order: 2 } if d[unknown] == 2))
            .count();
        assert_eq!(second, 4 * n, "{name}");
    }
    let ste = form(&mut dae, &a, Form::Ste);
    assert_eq!(ste.hvt.as_ref().map(Vec::len), Some(7 * n));
}

#[test]
fn the_analysis_frees_the_memo_of_the_jacobians_partial_derivatives() {
    let (dae, a) = load(SPRING);
    let reg = a.regular().unwrap();
    assert_eq!(reg.jacobian.len(), 14);
    // the fine BTF's blocks hold the 7 equations once each
    assert_eq!(
        reg.sigma
            .fine_btf
            .blocks()
            .map(|b| b.rows.len())
            .sum::<usize>(),
        7
    );
    assert_eq!(dae.pool.partial_derivatives_memoised(), 0);
}
