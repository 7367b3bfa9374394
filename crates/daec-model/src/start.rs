//! The start point of the analysis and the initialisation: the declared
//! start values, and for an unknown without one the value that the
//! equations give it from the other start values, where an equation
//! defines it explicitly.
//!
//! A component model leaves the start values of its internal unknowns to
//! the user, who cannot know them all: a planar spring's vector `r0`
//! between its frames and its length `s = sqrt(r0·r0)` start at 0 unless
//! given, where the Jacobian of the length is 0/0 and the force law
//! `f·r0/s` divides by zero, so the Σ-Jacobian evaluated there is singular
//! and the projection onto the constraints starts from a point where
//! Newton's method fails. The start values of the bodies' positions
//! determine `r0` and `s` through the equations `r0 = frame_b − frame_a`
//! and `s = sqrt(r0·r0)` themselves: a forward substitution through the
//! equations that are affine in their one unknown without a start value
//! (the 1×1 blocks of the block triangular form that the value of the
//! others determines, evaluated in dependency order) gives them.

use crate::Dae;
use daec_expr::{Env, Leaf, ParamId};

/// The values of the leaves at a point `(t, z)` of the unknowns (their
/// derivatives are NaN), for [`daec_expr::ExprPool::eval`].
pub struct PointEnv<'a> {
    /// The values of the unknowns.
    pub z: &'a [f64],
    /// The values of the parameters, by `ParamId`.
    pub params: &'a [f64],
    /// The time.
    pub t: f64,
}

impl Env for PointEnv<'_> {
    fn var(&self, unknown: u32, order: u32) -> f64 {
        if order == 0 {
            self.z.get(unknown as usize).copied().unwrap_or(f64::NAN)
        } else {
            f64::NAN
        }
    }
    fn param(&self, p: ParamId) -> f64 {
        self.params.get(p.0 as usize).copied().unwrap_or(f64::NAN)
    }
    fn time(&self) -> f64 {
        self.t
    }
}

impl Dae {
    /// The start point: each unknown's `start`, and for an unknown
    /// without one the value an equation of the model gives it from the
    /// start values of the others when the equation is affine in it and
    /// has no derivatives (solved in dependency order), else 0. The
    /// declared values are never changed; an equation that cannot be
    /// solved so (nonlinear in its unknown, a non-finite value) assigns
    /// nothing. Cost: one pass over the equations' leaves and three
    /// evaluations of each equation that assigns a value.
    pub fn start_point(&self) -> Vec<f64> {
        let n = self.unknowns.len();
        let mut z: Vec<f64> = self
            .unknowns
            .iter()
            .map(|u| u.start().unwrap_or(0.0))
            .collect();
        let mut known: Vec<bool> = self.unknowns.iter().map(|u| u.start().is_some()).collect();
        // Each equation's unknowns without a start value; equations with
        // derivatives take no part.
        let mut open: Vec<Vec<u32>> = Vec::with_capacity(self.equations.len());
        let mut uses: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (i, eq) in self.equations.iter().enumerate() {
            let mut vars = Vec::new();
            let mut derivative = false;
            for l in self.pool.leaves(eq.residual) {
                match self.pool.as_leaf(l) {
                    Some(Leaf::Var { order, .. }) if order > 0 => derivative = true,
                    Some(Leaf::Var { unknown, .. })
                        if (unknown as usize) < n && !known[unknown as usize] =>
                    {
                        vars.push(unknown);
                    }
                    _ => {}
                }
            }
            vars.sort_unstable();
            vars.dedup();
            if derivative {
                vars.clear();
            }
            for &j in &vars {
                uses[j as usize].push(i as u32);
            }
            open.push(vars);
        }
        let params = self.parameter_values();
        let t = self.experiment.start_time.unwrap_or(0.0);
        let mut count: Vec<usize> = open.iter().map(Vec::len).collect();
        let mut work: Vec<usize> = (0..open.len()).filter(|&i| count[i] == 1).collect();
        while let Some(i) = work.pop() {
            if count[i] != 1 {
                continue;
            }
            let Some(&j) = open[i].iter().find(|&&j| !known[j as usize]) else {
                continue;
            };
            let j = j as usize;
            let Some(v) = self.solve_affine(i, j, &mut z, &params, t) else {
                count[i] = 0;
                continue;
            };
            z[j] = v;
            known[j] = true;
            for &k in &uses[j] {
                let k = k as usize;
                count[k] = count[k].saturating_sub(1);
                if count[k] == 1 {
                    work.push(k);
                }
            }
        }
        z
    }

    /// The value of unknown `j` that makes equation `i` hold, the other
    /// unknowns at `z`, when the residual is affine in it: `r(0) + c·v`
    /// with `c = r(1) − r(0)`, checked at the solution.
    fn solve_affine(
        &self,
        i: usize,
        j: usize,
        z: &mut [f64],
        params: &[f64],
        t: f64,
    ) -> Option<f64> {
        let e = self.equations[i].residual;
        let at = |v: f64, z: &mut [f64]| {
            z[j] = v;
            self.pool.eval(e, &PointEnv { z, params, t })
        };
        let r0 = at(0.0, z);
        let c = at(1.0, z) - r0;
        let v = -r0 / c;
        let check = at(v, z);
        z[j] = 0.0;
        let scale = 1.0 + r0.abs() + c.abs() * (1.0 + v.abs());
        (v.is_finite() && c != 0.0 && check.abs() <= 1e-12 * scale).then_some(v)
    }
}
