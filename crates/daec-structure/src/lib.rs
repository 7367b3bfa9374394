//! Structural analysis of DAEs: Pryce's Signature method, HVT, offsets, BTF, Pantelides,
//! Dulmage-Mendelsohn.
//!
//! The input is a sparse signature matrix Σ ([`SigmaMatrix`]): `σ_ij` is the highest
//! derivative order of unknown `z_j` in equation `F_i`, −∞ (absent) if `z_j` does not occur.
//! Everything here is purely combinatorial; the symbolic parts of the Σ-method (Σ-Jacobian
//! entries, reduced derivative array, hidden constraints) live in the driver.
//!
//! * [`analyze`]: HVT ([`highest_value_transversal`]), canonical offsets
//!   ([`canonical_offsets`]), structural index, Val(Σ), Σ-Jacobian pattern, coarse and fine
//!   block triangular forms ([`coarse_btf`], [`fine_btf`]) — steinbrecher2016 §2 / Pryce 2001.
//! * [`all_hvts`]: every HVT (the perfect matchings of the tight pattern), or their number
//!   or a lower bound within an `O(nnz)` budget; [`all_hvts_of_analysis`] reuses an
//!   [`analyze`] result.
//! * [`max_weight_tight_transversal`]: the HVT maximising κ_T = Π|𝔍_ij| (steinbrecher2016 §3).
//! * [`dulmage_mendelsohn`]: over-/under-determined parts of a structurally singular model.
//! * [`pantelides`]: Pantelides' algorithm on the same data (its counts equal c).
//! * [`solution_scheme`]: the stages of the reduced derivative array (Pryce's scheme).
//! * [`strongly_connected_components`]: iterative Tarjan on any dependency graph (also the
//!   evaluation order of a model's parameters).
//!
//! ```
//! use daec_structure::{SigmaMatrix, analyze, pantelides};
//!
//! // steinbrecher2016 Ex. 2.7: the pendulum x' = v, y' = w, m v' = −2xλ, m w' = −2yλ − mg,
//! // x² + y² = ℓ², unknowns (x, y, v, w, λ).
//! let s = SigmaMatrix::from_entries(5, 5, [
//!     (0, 0, 1), (0, 2, 0),
//!     (1, 1, 1), (1, 3, 0),
//!     (2, 0, 0), (2, 2, 1), (2, 4, 0),
//!     (3, 1, 0), (3, 3, 1), (3, 4, 0),
//!     (4, 0, 0), (4, 1, 0),
//! ]);
//! let a = analyze(&s).expect("structurally nonsingular");
//! assert_eq!(a.offsets.c, [1, 1, 0, 0, 2]);
//! assert_eq!(a.offsets.d, [2, 2, 1, 1, 0]);
//! assert_eq!((a.structural_index, a.dof), (3, 2));
//! assert_eq!(pantelides(&s).unwrap().differentiations, a.offsets.c);
//! ```

mod analysis;
mod btf;
mod dm;
// `generators` stays a namespace: benches and tests name `generators::pendulum_chain`.
pub mod generators;
mod hvt;
mod hvt_enumeration;
mod offsets;
mod pantelides;
mod scheme;
mod sigma;

pub use analysis::{SigmaAnalysis, analysis_from_offsets, analyze};
pub use btf::{Block, Btf, coarse_btf, fine_btf, strongly_connected_components};
pub use dm::{DmDecomposition, StructuralSingularity, dulmage_mendelsohn, maximum_matching};
pub use hvt::{Transversal, highest_value_transversal, max_weight_tight_transversal};
pub use hvt_enumeration::{HvtCount, HvtEnumeration, all_hvts, all_hvts_of_analysis};
pub use offsets::{Offsets, OffsetsError, canonical_offsets, try_canonical_offsets};
pub use pantelides::{PantelidesError, PantelidesResult, pantelides};
pub use scheme::{Stage, solution_scheme};
pub use sigma::{NEG_INF, SigmaError, SigmaMatrix};
