//! Pantelides' algorithm (Pantelides 1988, "The consistent initialization of
//! differential-algebraic systems", SIAM J. Sci. Stat. Comput. 9(2), Algorithm 4.1) on the
//! structure of a DAE of any order.
//!
//! The structural data is Σ: differentiating equation `i` `c_i` times makes it contain
//! `z_j^{(σ_ij + c_i)}`. Each unknown's *highest derivative* is `d_j = max_i σ_ij + c_i`.
//! Pantelides' algorithm looks for a matching of every equation to a distinct unknown whose
//! highest derivative it contains; when the augmenting-path search from an equation fails,
//! every equation visited (coloured) is differentiated and every coloured unknown gets a
//! new highest derivative, and the search is repeated. The matching of coloured pairs is
//! kept (the differentiated equation is matched to the new derivative).
//!
//! When both this algorithm and the Σ-method succeed, the differentiation counts equal the
//! canonical offsets c (Pryce 2001, Thm 5.8), which the test-suite checks on every example.
//! The implementation is iterative (explicit DFS stack) and uses epoch stamps instead of
//! clearing colour arrays, so a failed search costs time proportional to what it colours.

use std::fmt;

use crate::dm::{StructuralSingularity, dulmage_mendelsohn};
use crate::sigma::SigmaMatrix;

/// Result of [`pantelides`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PantelidesResult {
    /// Number of differentiations of each equation (equals the canonical offsets c).
    pub differentiations: Vec<u32>,
    /// Highest derivative order of each unknown in the differentiated system (equals d).
    pub max_var_order: Vec<u32>,
    /// The final assignment: equation `i` (differentiated `c_i` times) is matched to the
    /// highest derivative of unknown `assignment[i]`. A transversal of the tight positions.
    pub assignment: Vec<usize>,
    /// Number of failed augmenting-path searches (each followed by one round of
    /// differentiations).
    pub rounds: u64,
}

/// Why Pantelides' algorithm did not finish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PantelidesError {
    /// Σ is not square or structurally singular; the algorithm would not terminate.
    StructurallySingular(StructuralSingularity),
    /// The differentiation limit was reached (guard against non-termination).
    IterationLimit {
        /// Number of rounds performed.
        rounds: u64,
    },
}

impl fmt::Display for PantelidesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PantelidesError::StructurallySingular(s) => write!(f, "Pantelides: {s}"),
            PantelidesError::IterationLimit { rounds } => write!(
                f,
                "Pantelides' algorithm did not terminate within {rounds} differentiation rounds"
            ),
        }
    }
}

impl std::error::Error for PantelidesError {}

/// Pantelides' algorithm on the structure Σ (which may contain orders > 1).
///
/// Returns an error for structurally singular Σ (checked first, via a maximum matching)
/// and, as a guard, when the number of rounds exceeds `n · (max σ + 1) + n` or any offset
/// exceeds `n · (max σ + 1)` (the canonical offsets satisfy `c_i ≤ n · max σ`).
pub fn pantelides(s: &SigmaMatrix) -> Result<PantelidesResult, PantelidesError> {
    let dm = dulmage_mendelsohn(s);
    if !s.is_square() || !dm.is_structurally_nonsingular() {
        return Err(PantelidesError::StructurallySingular(
            StructuralSingularity::new(dm),
        ));
    }
    let n = s.n_rows();
    let max_sigma = u64::from(s.max_order().unwrap_or(0));
    let order_limit = (n as u64).saturating_mul(max_sigma + 1);
    let round_limit = order_limit.saturating_add(n as u64);
    let mut c = vec![0u64; n];
    let mut d = vec![0u64; n];
    for (_, j, o) in s.iter() {
        d[j] = d[j].max(u64::from(o));
    }
    const FREE: u32 = u32::MAX;
    let mut eq_of_var = vec![FREE; n];
    let mut var_of_eq = vec![FREE; n];
    // Colour stamps: equation/var coloured in the current search iff stamp == epoch.
    let mut eq_stamp = vec![0u64; n];
    let mut var_stamp = vec![0u64; n];
    let mut epoch = 0u64;
    let mut rounds = 0u64;
    let mut stack: Vec<(u32, usize)> = Vec::new();
    let mut coloured_eqs: Vec<u32> = Vec::new();
    let mut coloured_vars: Vec<u32> = Vec::new();
    let highest = |i: usize, j: u32, o: u32, c: &[u64], d: &[u64]| -> bool {
        u64::from(o) + c[i] == d[j as usize]
    };
    for k in 0..n {
        loop {
            epoch += 1;
            coloured_eqs.clear();
            coloured_vars.clear();
            eq_stamp[k] = epoch;
            coloured_eqs.push(k as u32);
            stack.clear();
            stack.push((k as u32, 0));
            let mut success = false;
            // Iterative AUGMENTPATH: first look for an unassigned highest derivative of the
            // equation, then recurse through assigned, uncoloured ones.
            'search: while let Some(&(i, _)) = stack.last() {
                let iu = i as usize;
                // Direct hit: an unassigned highest-derivative variable.
                if stack.last().map(|e| e.1) == Some(0) {
                    for &(j, o) in s.row(iu) {
                        if highest(iu, j, o, &c, &d) && eq_of_var[j as usize] == FREE {
                            // Augment along the stack.
                            let mut jj = j as usize;
                            for &(ei, _) in stack.iter().rev() {
                                let ei = ei as usize;
                                let prev = var_of_eq[ei];
                                var_of_eq[ei] = jj as u32;
                                eq_of_var[jj] = ei as u32;
                                if prev == FREE {
                                    break;
                                }
                                jj = prev as usize;
                            }
                            success = true;
                            break 'search;
                        }
                    }
                }
                let pos = stack.last().map_or(0, |e| e.1);
                let row = s.row(iu);
                let mut next = None;
                let mut p = pos;
                while p < row.len() {
                    let (j, o) = row[p];
                    p += 1;
                    if highest(iu, j, o, &c, &d) && var_stamp[j as usize] != epoch {
                        var_stamp[j as usize] = epoch;
                        coloured_vars.push(j);
                        let e2 = eq_of_var[j as usize];
                        if e2 != FREE && eq_stamp[e2 as usize] != epoch {
                            next = Some(e2);
                            break;
                        }
                    }
                }
                if let Some(top) = stack.last_mut() {
                    // `pos` 0 means "direct hits not tried yet"; use p.max(1) afterwards.
                    top.1 = p.max(1);
                }
                match next {
                    Some(e2) => {
                        eq_stamp[e2 as usize] = epoch;
                        coloured_eqs.push(e2);
                        stack.push((e2, 0));
                    }
                    None => {
                        if p >= row.len() {
                            stack.pop();
                        }
                    }
                }
            }
            if success {
                break;
            }
            rounds += 1;
            if rounds > round_limit {
                return Err(PantelidesError::IterationLimit { rounds });
            }
            for &j in &coloured_vars {
                d[j as usize] += 1;
            }
            for &i in &coloured_eqs {
                c[i as usize] += 1;
                if c[i as usize] > order_limit {
                    return Err(PantelidesError::IterationLimit { rounds });
                }
            }
        }
    }
    let to_u32 = |v: Vec<u64>| -> Result<Vec<u32>, PantelidesError> {
        v.into_iter()
            .map(|x| u32::try_from(x).map_err(|_| PantelidesError::IterationLimit { rounds }))
            .collect()
    };
    Ok(PantelidesResult {
        differentiations: to_u32(c)?,
        max_var_order: to_u32(d)?,
        assignment: var_of_eq.into_iter().map(|j| j as usize).collect(),
        rounds,
    })
}
