//! The variants of a locally valid formulation (StE on an HVT, DD with a
//! choice of dummy derivatives) and the switch between them when the
//! current choice becomes ill-conditioned during a run.

use super::*;

/// A variant of a locally valid formulation: StE on an HVT, DD with a
/// choice of dummy derivatives (for each unknown, how many of its highest
/// derivatives are dummies).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Variant {
    Hvt(Vec<usize>),
    Dummies(Vec<u32>),
}

impl Variant {
    /// The variant a formulation is built on.
    pub(super) fn of(form: &SimForm) -> Option<Variant> {
        match form.form {
            Form::Ste => form.hvt.clone().map(Variant::Hvt),
            Form::Dd => Some(Variant::Dummies(dummy_levels(form))),
            _ => None,
        }
    }

    pub(super) fn options(&self) -> RegularizeOptions {
        match self {
            Variant::Hvt(h) => RegularizeOptions {
                hvt: Some(h.clone()),
                ..RegularizeOptions::default()
            },
            Variant::Dummies(l) => RegularizeOptions {
                dummies: Some(l.clone()),
                ..RegularizeOptions::default()
            },
        }
    }

    pub(super) fn form(&self) -> Form {
        match self {
            Variant::Hvt(_) => Form::Ste,
            Variant::Dummies(_) => Form::Dd,
        }
    }
}

/// The dummy derivatives of a DD formulation: per model unknown, the
/// number of its derivatives that are unknowns of the form.
pub(super) fn dummy_levels(form: &SimForm) -> Vec<u32> {
    let mut levels = vec![0u32; form.n_original];
    for u in &form.unknowns {
        if let UnknownKind::Derivative { unknown, .. } = u.kind
            && let Some(l) = levels.get_mut(unknown)
        {
            *l += 1;
        }
    }
    levels
}

/// DD dynamic re-selection (Mattsson & Söderlind's dummy pivoting): the
/// choice pivoting makes at `(t, z)`, when its blocks are better
/// conditioned than the current choice's by more than [`SWITCH_FACTOR`]
/// (`Σ log|det|` of the blocks, the analogue of StE's `κ_T`).
pub(super) fn dd_switch(
    dae: &Dae,
    analysis: &Analysis,
    form: &SimForm,
    z: &[f64],
    t: f64,
) -> Option<Vec<u32>> {
    let current = dummy_levels(form);
    let zo = z.get(..form.n_original)?;
    let best = dd_levels_at(dae, analysis, zo, t).ok()?;
    if best == current {
        return None;
    }
    let qc = dd_log_quality(dae, analysis, &current, zo, t);
    let qb = dd_log_quality(dae, analysis, &best, zo, t);
    (qb.is_finite() && qb > qc + SWITCH_FACTOR.ln()).then_some(best)
}

/// Hysteresis of the StE state selection: switch from the current HVT `T`
/// to `T'` only when `κ_T' > SWITCH_FACTOR · κ_T`. With `κ = Π|𝔍_ij|`
/// over the HVT (steinbrecher2016 §3.1) the pendulum's variants have
/// `|det| = 16 m x² ℓ²` (S1, (23)) and `16 m y² ℓ²` (S2, (24)): a factor
/// 2 switches at `|y| = √2 |x|` and back at `|x| = √2 |y|` (angles 54.7°
/// and 35.3° from the horizontal), so the selection does not chatter near
/// `|x| = |y|`, where both variants are equally well conditioned, and the
/// active variant is never worse than half the best `κ` — the pendulum
/// switches four times per period (steinbrecher2016 Fig. 3).
pub const SWITCH_FACTOR: f64 = 2.0;

/// Values of `z_j^(l)` for `κ_T` at a point of an StE variant: the
/// unknowns, their ψ where the variant has them, else `ż` for `l = 1`.
pub(super) struct SteEnv<'a> {
    pub(super) form: &'a SimForm,
    pub(super) z: &'a [f64],
    pub(super) zdot: &'a [f64],
    pub(super) params: &'a [f64],
    pub(super) t: f64,
}

impl Env for SteEnv<'_> {
    fn var(&self, unknown: u32, order: u32) -> f64 {
        let j = unknown as usize;
        if order == 0 {
            return self.z.get(j).copied().unwrap_or(f64::NAN);
        }
        let psi = self.form.unknowns.iter().position(|u| {
            matches!(u.kind, UnknownKind::Derivative { unknown, order: o } if unknown == j && o == order)
        });
        match psi {
            Some(k) => self.z.get(k).copied().unwrap_or(f64::NAN),
            None if order == 1 => self.zdot.get(j).copied().unwrap_or(f64::NAN),
            None => f64::NAN,
        }
    }
    fn param(&self, p: ParamId) -> f64 {
        self.params.get(p.0 as usize).copied().unwrap_or(f64::NAN)
    }
    fn time(&self) -> f64 {
        self.t
    }
}

/// The HVT to switch to at a point of the StE variant `form`, if another
/// HVT dominates by [`SWITCH_FACTOR`].
pub(super) fn ste_switch(
    dae: &Dae,
    analysis: &Analysis,
    form: &SimForm,
    env: &SteEnv<'_>,
) -> Option<Vec<usize>> {
    let current = form.hvt.as_ref()?;
    let best = best_hvt(&dae.pool, analysis, env).ok()?;
    if &best == current {
        return None;
    }
    // a variant whose dummies became ill-conditioned is left whatever κ_T
    // says
    if hvt_conditioning(&dae.pool, analysis, current, env) < MIN_LEVEL_CONDITIONING {
        return Some(best);
    }
    let (lc, lb) = (
        log_kappa(&dae.pool, analysis, current, env),
        log_kappa(&dae.pool, analysis, &best, env),
    );
    (lb.is_finite() && (lb > lc + SWITCH_FACTOR.ln())).then_some(best)
}

/// Values of the StE variant `to` at `(t, z_orig)`: the model's unknowns
/// from `z` (held), ψ from those of the variant `from` where both have the
/// same derivative, else from `ż` (order 1) or 0, then projected onto the
/// constraints of `to` (they determine ψ: StE is of d-index 1).
pub(super) fn switch_state(
    dae: &mut Dae,
    from: &SimForm,
    to: &SimForm,
    t: f64,
    z: &[f64],
    zdot: &[f64],
) -> Result<Vec<f64>, SimError> {
    let n0 = to.n_original;
    let mut x = vec![0.0; to.n];
    x[..n0].copy_from_slice(&z[..n0]);
    for (k, u) in to.unknowns.iter().enumerate().skip(n0) {
        x[k] = match u.kind {
            UnknownKind::Derivative { unknown, order } => {
                let old = from.unknowns.iter().position(|v| v.kind == u.kind);
                match old {
                    Some(o) => z[o],
                    None if order == 1 => zdot.get(unknown).copied().unwrap_or(0.0),
                    None => 0.0,
                }
            }
            UnknownKind::Velocity { unknown } => zdot.get(unknown).copied().unwrap_or(0.0),
            _ => 0.0,
        };
    }
    let mut fixed = vec![true; n0];
    fixed.resize(to.n, false);
    crate::init::project_added(dae, to, t, &x, &fixed)
}
