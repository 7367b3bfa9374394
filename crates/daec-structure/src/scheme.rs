//! Pryce's standard solution scheme (Pryce 2001 §4; Nedialkov & Pryce 2005, "Solving
//! DAEs by Taylor series (I)", §3.3): the reduced derivative array of steinbrecher2016
//! Algorithm 2.1 step 5, split into stages.
//!
//! At stage `k = k_d, …, 0` with `k_d = −max_j d_j`, solve the equations
//! `F_i^{(k + c_i)}` (those with `k + c_i ≥ 0`) for the unknowns `z_j^{(k + d_j)}` (those
//! with `k + d_j ≥ 0`). Stage 0 is square with Jacobian 𝔍; the stages `k < 0` hold the
//! explicit and hidden constraints and fix the initial values up to Val(Σ) free ones.
//! Over all stages there are `n + Σc` equations (M of steinbrecher2016 §2) in `n + Σd`
//! unknowns.

use crate::offsets::Offsets;

/// One stage of the solution scheme.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stage {
    /// The stage number `k ≤ 0`.
    pub k: i64,
    /// Equations solved at this stage: `(i, m)` means `F_i` differentiated `m = k + c_i` times.
    pub equations: Vec<(usize, u32)>,
    /// Unknowns found at this stage: `(j, l)` means `z_j^{(l)}` with `l = k + d_j`.
    pub unknowns: Vec<(usize, u32)>,
}

/// The stages `k_d, …, 0` of the standard solution scheme for offsets `c`, `d`.
pub fn solution_scheme(offsets: &Offsets) -> Vec<Stage> {
    let max_d = offsets.d.iter().copied().max().unwrap_or(0);
    let pick = |v: &[u32], k: i64| -> Vec<(usize, u32)> {
        v.iter()
            .enumerate()
            .filter_map(|(idx, &o)| {
                let m = k + i64::from(o);
                u32::try_from(m).ok().map(|m| (idx, m))
            })
            .collect()
    };
    (-i64::from(max_d)..=0)
        .map(|k| Stage {
            k,
            equations: pick(&offsets.c, k),
            unknowns: pick(&offsets.d, k),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pendulum_stages_count_nine_equations_in_eleven_unknowns() {
        // steinbrecher2016 (14): M = 9 equations in Z = 11 derivative unknowns.
        let off = Offsets {
            c: vec![1, 1, 0, 0, 2],
            d: vec![2, 2, 1, 1, 0],
        };
        let st = solution_scheme(&off);
        assert_eq!(st.len(), 3);
        assert_eq!(st[0].k, -2);
        assert_eq!(st[0].equations, vec![(4, 0)]);
        assert_eq!(st[0].unknowns, vec![(0, 0), (1, 0)]);
        assert_eq!(st[1].equations, vec![(0, 0), (1, 0), (4, 1)]);
        assert_eq!(st[1].unknowns, vec![(0, 1), (1, 1), (2, 0), (3, 0)]);
        assert_eq!(
            st[2].equations,
            vec![(0, 1), (1, 1), (2, 0), (3, 0), (4, 2)]
        );
        assert_eq!(st[2].unknowns.len(), 5);
        let m: usize = st.iter().map(|s| s.equations.len()).sum();
        let z: usize = st.iter().map(|s| s.unknowns.len()).sum();
        assert_eq!((m, z), (9, 11));
    }
}
