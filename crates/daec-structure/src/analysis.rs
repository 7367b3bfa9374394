//! The structural part of the Σ-method (steinbrecher2016 Algorithm 2.1, steps 1–4 and
//! Definition 2.3): HVT, canonical offsets, Σ-Jacobian pattern, structural index ν_Σ,
//! degrees of freedom Val(Σ), number of hidden constraints m_c, block triangular forms.

use crate::btf::{Btf, coarse_btf, fine_btf};
use crate::dm::StructuralSingularity;
use crate::hvt::{Transversal, highest_value_transversal};
use crate::offsets::{Offsets, try_canonical_offsets};
use crate::sigma::SigmaMatrix;

/// Everything the Σ-method derives from Σ alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SigmaAnalysis {
    /// A highest-value transversal T.
    pub hvt: Transversal,
    /// The canonical offsets c, d.
    pub offsets: Offsets,
    /// Structural index ν_Σ = max c_i, plus 1 if some d_j = 0 (Pryce 2001 §4;
    /// steinbrecher2016 Algorithm 2.1).
    pub structural_index: u32,
    /// Degrees of freedom Val(Σ) = Σ d_j − Σ c_i (= value of the HVT): the dimension of the
    /// consistent manifold when the Σ-Jacobian is nonsingular.
    pub dof: i64,
    /// Number of equations of the reduced derivative array, M = n + Σ c_i
    /// (steinbrecher2016 §2, after Algorithm 2.1).
    pub n_derivative_array: u64,
    /// Number of explicit and hidden constraints on the state: m_c = n + Σ c − Σ d for a
    /// first-order DAE (steinbrecher2016, Definition 2.3, (6)). That formula is stated
    /// for first-order systems; a model in which z_j occurs differentiated k_j ≥ 2 times
    /// (k_j = max_i σ_ij) is counted as its first-order form, whose state holds z_j and
    /// its derivatives below the k_j-th: n + Σ_j max(k_j − 1, 0) components, of which
    /// Val(Σ) are free (the degrees of freedom do not change with the reduction), so
    /// m_c = n + Σ_j max(k_j − 1, 0) + Σ c − Σ d. (The second-order pendulum x'' = −λx,
    /// y'' = −λy − g, x² + y² = 1: 3 constraints on (x, y, x', y', λ), where
    /// n + Σc − Σd gives 1.)
    pub n_constraints: i64,
    /// Σ_j max(k_j − 1, 0) with k_j = max_i σ_ij: the derivatives below the highest that
    /// a first-order form adds as unknowns (0 for a first-order DAE).
    pub n_lower_derivatives: i64,
    /// Coarse block triangular form (full Σ sparsity).
    pub coarse_btf: Btf,
    /// Fine block triangular form (Σ-Jacobian sparsity).
    pub fine_btf: Btf,
}

impl SigmaAnalysis {
    /// Tight positions `(i, j)` of `s` with `d_j − c_i = σ_ij`, row-major: the sparsity
    /// pattern of the Σ-Jacobian 𝔍 (`𝔍_ij = ∂F_i / ∂z_j^{(σ_ij)}` there, 0 elsewhere).
    /// Computed when asked (not stored: the analysis reads the pattern off Σ and the
    /// offsets where it needs it).
    pub fn tight<'a>(&'a self, s: &'a SigmaMatrix) -> impl Iterator<Item = (usize, usize)> + 'a {
        s.iter()
            .filter(|&(i, j, o)| {
                let (c, d) = (self.offsets.c.get(i), self.offsets.d.get(j));
                c.zip(d)
                    .is_some_and(|(&c, &d)| i64::from(d) - i64::from(c) == i64::from(o))
            })
            .map(|(i, j, _)| (i, j))
    }
}

/// Runs the structural Σ-method on Σ: HVT, canonical offsets, ν_Σ, Val(Σ), tight pattern
/// and both BTFs. Fails with the Dulmage–Mendelsohn diagnosis when Σ is not square or has
/// no finite transversal. Near-linear in the number of entries for DAE-like sparsity.
pub fn analyze(s: &SigmaMatrix) -> Result<SigmaAnalysis, StructuralSingularity> {
    let hvt = highest_value_transversal(s)?;
    let offsets = match try_canonical_offsets(s, &hvt) {
        Ok(o) => o,
        // Unreachable for a solver-produced HVT; fall back to the plain iteration.
        Err(_) => {
            let plain = Transversal {
                dual_c: None,
                ..hvt.clone()
            };
            try_canonical_offsets(s, &plain)
                .map_err(|_| StructuralSingularity::new(crate::dm::dulmage_mendelsohn(s)))?
        }
    };
    // The dual certificate only warm-starts the offsets: not kept in the analysis.
    let hvt = Transversal {
        dual_c: None,
        ..hvt
    };
    Ok(analysis_from_offsets(s, hvt, offsets))
}

/// Completes a [`SigmaAnalysis`] from an HVT and valid offsets for it.
///
/// # Panics
/// If `offsets.c` / `offsets.d` are shorter than the number of rows / columns of `s`.
pub fn analysis_from_offsets(s: &SigmaMatrix, hvt: Transversal, offsets: Offsets) -> SigmaAnalysis {
    let max_c = offsets.c.iter().copied().max().unwrap_or(0);
    let some_d_zero = offsets.d.contains(&0);
    let structural_index = max_c + u32::from(some_d_zero);
    let sum_c: i64 = offsets.c.iter().map(|&x| i64::from(x)).sum();
    let sum_d: i64 = offsets.d.iter().map(|&x| i64::from(x)).sum();
    let n = s.n_rows() as i64;
    let lower: i64 = s
        .column_orders()
        .iter()
        .map(|&k| i64::from(k.saturating_sub(1)))
        .sum();
    let coarse = coarse_btf(s, &hvt);
    let fine = fine_btf(s, &offsets, &hvt);
    SigmaAnalysis {
        hvt,
        offsets,
        structural_index,
        dof: sum_d - sum_c,
        n_derivative_array: (n + sum_c) as u64,
        n_constraints: n + lower + sum_c - sum_d,
        n_lower_derivatives: lower,
        coarse_btf: coarse,
        fine_btf: fine,
    }
}
