//! Property tests on random signature matrices, against independent oracles:
//! `pathfinding::kuhn_munkres` (dense Hungarian) for the HVT value, brute force for the
//! minimality of the offsets and the number of HVTs, Pryce 2001 Thm 5.8 for Pantelides,
//! `petgraph` for the strongly connected components of the BTF.

use daec_structure::*;
use pathfinding::kuhn_munkres::kuhn_munkres;
use pathfinding::matrix::Matrix;
use petgraph::graph::DiGraph;
use proptest::prelude::*;
use rustc_hash::FxHashSet;

/// Random n×m Σ: each position finite with probability ~density, orders 0..=max.
fn arb_sigma(max_n: usize, max_order: u32, square: bool) -> impl Strategy<Value = SigmaMatrix> {
    (1..=max_n, 1..=max_n, 20u32..80).prop_flat_map(move |(n, m, density)| {
        let m = if square { n } else { m };
        proptest::collection::vec((0u32..100, 0..=max_order), n * m).prop_map(move |cells| {
            SigmaMatrix::from_entries(
                n,
                m,
                cells
                    .iter()
                    .enumerate()
                    .filter(|(_, (p, _))| *p < density)
                    .map(|(k, &(_, o))| (k / m, k % m, o)),
            )
        })
    })
}

/// Random structurally nonsingular square Σ: a random permutation is always finite.
fn arb_nonsingular(max_n: usize, max_order: u32) -> impl Strategy<Value = SigmaMatrix> {
    (1..=max_n).prop_flat_map(move |n| {
        (
            Just(n).prop_shuffle_perm(),
            proptest::collection::vec((0u32..100, 0..=max_order), n * n),
            proptest::collection::vec(0..=max_order, n),
            15u32..60,
        )
            .prop_map(move |(perm, cells, diag, density)| {
                let mut e: Vec<(usize, usize, u32)> = cells
                    .iter()
                    .enumerate()
                    .filter(|(_, (p, _))| *p < density)
                    .map(|(k, &(_, o))| (k / n, k % n, o))
                    .collect();
                e.extend(perm.iter().enumerate().map(|(i, &j)| (i, j, diag[i])));
                SigmaMatrix::from_entries(n, n, e)
            })
    })
}

trait ShufflePerm {
    fn prop_shuffle_perm(self) -> BoxedStrategy<Vec<usize>>;
}
impl ShufflePerm for Just<usize> {
    fn prop_shuffle_perm(self) -> BoxedStrategy<Vec<usize>> {
        let n = self.0;
        Just((0..n).collect::<Vec<_>>()).prop_shuffle().boxed()
    }
}

/// Hungarian oracle: best value over finite transversals, or None if there is none.
fn oracle_hvt_value(s: &SigmaMatrix) -> Option<i64> {
    let n = s.n_rows();
    let big = 1_000_000i64;
    let mut w = vec![-big; n * n];
    for (i, j, o) in s.iter() {
        w[i * n + j] = i64::from(o);
    }
    let (value, cols) = kuhn_munkres(&Matrix::from_vec(n, n, w).ok()?);
    cols.iter()
        .enumerate()
        .all(|(i, &j)| s.get(i, j).is_some())
        .then_some(value)
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    let mut out = vec![];
    let mut p: Vec<usize> = (0..n).collect();
    fn rec(k: usize, p: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if k == p.len() {
            out.push(p.clone());
            return;
        }
        for i in k..p.len() {
            p.swap(k, i);
            rec(k + 1, p, out);
            p.swap(k, i);
        }
    }
    rec(0, &mut p, &mut out);
    out
}

/// Random banded nonsingular Σ of medium size (long augmenting paths, many offsets > 0).
fn arb_banded(max_n: usize) -> impl Strategy<Value = SigmaMatrix> {
    (8..=max_n).prop_flat_map(|n| {
        (
            Just(n),
            proptest::collection::vec((0usize..5, 0u32..3), 3 * n),
            proptest::collection::vec(0u32..3, n),
        )
            .prop_map(|(n, off, diag)| {
                let mut e: Vec<(usize, usize, u32)> =
                    (0..n).map(|i| (i, (i + n / 2) % n, diag[i])).collect();
                for (k, &(band, o)) in off.iter().enumerate() {
                    let i = k % n;
                    e.push((i, (i + band) % n, o));
                }
                SigmaMatrix::from_entries(n, n, e)
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    #[test]
    fn medium_banded_hvt_offsets_and_pantelides(s in arb_banded(40)) {
        let a = analyze(&s).unwrap();
        prop_assert_eq!(Some(a.hvt.value), oracle_hvt_value(&s));
        prop_assert!(a.offsets.are_valid_for(&s));
        let plain = Transversal { dual_c: None, ..a.hvt.clone() };
        prop_assert_eq!(&canonical_offsets(&s, &plain), &a.offsets);
        let p = pantelides(&s).unwrap();
        prop_assert_eq!(&p.differentiations, &a.offsets.c);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn hvt_value_matches_kuhn_munkres(s in arb_sigma(7, 4, true)) {
        match (highest_value_transversal(&s), oracle_hvt_value(&s)) {
            (Ok(t), Some(v)) => {
                prop_assert_eq!(t.value, v);
                let checked = Transversal::from_cols(&s, t.col_of_row.clone());
                prop_assert_eq!(checked.map(|c| c.value), Some(v));
            }
            (Err(e), None) => prop_assert!(e.dm.matching_size < s.n_rows()),
            (t, v) => prop_assert!(false, "solver {:?} vs oracle {:?}", t.map(|t| t.value), v),
        }
    }

    #[test]
    fn offsets_are_valid_tight_on_the_hvt_and_smallest(s in arb_nonsingular(4, 2)) {
        let a = analyze(&s).unwrap();
        let (c, d) = (&a.offsets.c, &a.offsets.d);
        prop_assert!(a.offsets.are_valid_for(&s));
        for (i, j) in a.hvt.positions() {
            prop_assert_eq!(i64::from(d[j]) - i64::from(c[i]), i64::from(s.get(i, j).unwrap()));
        }
        prop_assert_eq!(a.dof, a.hvt.value);
        // The plain Pryce iteration (no warm start) gives the same offsets.
        let plain = Transversal { dual_c: None, ..a.hvt.clone() };
        prop_assert_eq!(&canonical_offsets(&s, &plain), &a.offsets);
        // Brute force: every valid offset pair for this HVT dominates ours element-wise.
        let n = s.n_rows();
        let bound = 10u32;
        let mut cand = vec![0u32; n];
        loop {
            let mut dd = vec![0i64; n];
            for (i, j) in a.hvt.positions() {
                dd[j] = i64::from(cand[i]) + i64::from(s.get(i, j).unwrap());
            }
            let valid = s.iter().all(|(i, j, o)| dd[j] - i64::from(cand[i]) >= i64::from(o));
            if valid {
                for i in 0..n {
                    prop_assert!(c[i] <= cand[i], "c {:?} not below valid {:?}", c, cand);
                }
            }
            let mut k = 0;
            while k < n && cand[k] == bound { cand[k] = 0; k += 1; }
            if k == n { break; }
            cand[k] += 1;
        }
    }

    #[test]
    fn all_hvts_are_exactly_the_maximal_permutations(s in arb_nonsingular(5, 2)) {
        let a = analyze(&s).unwrap();
        let e = all_hvts(&s, &a.offsets, 1000);
        let brute: FxHashSet<Vec<usize>> = permutations(s.n_rows())
            .into_iter()
            .filter(|p| Transversal::from_cols(&s, p.clone()).is_some_and(|t| t.value == a.hvt.value))
            .collect();
        prop_assert_eq!(e.count, HvtCount::Exact(brute.len() as u128));
        let listed: FxHashSet<Vec<usize>> = e.hvts.iter().cloned().collect();
        prop_assert_eq!(listed.len(), e.hvts.len());
        prop_assert_eq!(listed, brute);
        // Reusing the analysis' HVT and fine BTF gives the same answer, for any limit.
        prop_assert_eq!(&all_hvts_of_analysis(&s, &a, 1000), &e);
        prop_assert_eq!(all_hvts_of_analysis(&s, &a, 1), all_hvts(&s, &a.offsets, 1));
        // The canonical offsets do not depend on the HVT (Pryce 2001, Thm 3.6).
        for t in &e.hvts {
            let t = Transversal::from_cols(&s, t.clone()).unwrap();
            prop_assert_eq!(&canonical_offsets(&s, &t), &a.offsets);
        }
    }

    #[test]
    fn pantelides_counts_equal_canonical_c(s in arb_nonsingular(8, 3)) {
        let a = analyze(&s).unwrap();
        let p = pantelides(&s).unwrap();
        prop_assert_eq!(&p.differentiations, &a.offsets.c);
        prop_assert_eq!(&p.max_var_order, &a.offsets.d);
        // Its final matching is an HVT (a transversal of tight positions).
        let t = Transversal::from_cols(&s, p.assignment.clone()).unwrap();
        prop_assert_eq!(t.value, a.hvt.value);
    }

    #[test]
    fn btf_blocks_are_petgraph_sccs_in_solution_order(s in arb_nonsingular(9, 2)) {
        let a = analyze(&s).unwrap();
        let n = s.n_rows();
        let mut row_of_col = vec![0; n];
        for (i, j) in a.hvt.positions() { row_of_col[j] = i; }
        for (btf, tight_only) in [(&a.coarse_btf, false), (&a.fine_btf, true)] {
            let mut g = DiGraph::<(), ()>::new();
            let nodes: Vec<_> = (0..n).map(|_| g.add_node(())).collect();
            for (i, j, o) in s.iter() {
                let tight = i64::from(a.offsets.d[j]) - i64::from(a.offsets.c[i]) == i64::from(o);
                if tight || !tight_only {
                    g.add_edge(nodes[i], nodes[row_of_col[j]], ());
                    // Solution order: an equation's block never precedes the block of
                    // an unknown it uses.
                    prop_assert!(btf.block_of_row()[row_of_col[j]] <= btf.block_of_row()[i]);
                }
            }
            let mut expected: Vec<Vec<usize>> = petgraph::algo::kosaraju_scc(&g)
                .into_iter()
                .map(|c| { let mut v: Vec<usize> = c.iter().map(|x| x.index()).collect(); v.sort(); v })
                .collect();
            expected.sort();
            let mut got: Vec<Vec<usize>> = btf
                .blocks()
                .map(|b| b.rows.iter().map(|&i| i as usize).collect())
                .collect();
            got.sort();
            prop_assert_eq!(got, expected);
            for b in btf.blocks() {
                for (k, &i) in b.rows.iter().enumerate() {
                    prop_assert_eq!(b.cols[k] as usize, a.hvt.col_of_row[i as usize]);
                }
            }
        }
    }

    #[test]
    fn dulmage_mendelsohn_parts_are_consistent(s in arb_sigma(7, 1, false)) {
        let dm = dulmage_mendelsohn(&s);
        // Structural rank from the Hungarian oracle on 0/1 weights (padded to square).
        let n = s.n_rows().max(s.n_cols());
        let mut w = vec![0i64; n * n];
        for (i, j, _) in s.iter() { w[i * n + j] = 1; }
        let (rank, _) = kuhn_munkres(&Matrix::from_vec(n, n, w).unwrap());
        prop_assert_eq!(dm.matching_size as i64, rank);
        prop_assert_eq!(dm.over_rows.len(), dm.over_cols.len() + dm.unmatched_rows.len());
        prop_assert_eq!(dm.under_cols.len(), dm.under_rows.len() + dm.unmatched_cols.len());
        prop_assert_eq!(dm.square_rows.len(), dm.square_cols.len());
        prop_assert_eq!(dm.over_rows.len() + dm.under_rows.len() + dm.square_rows.len(), s.n_rows());
        prop_assert_eq!(dm.over_cols.len() + dm.under_cols.len() + dm.square_cols.len(), s.n_cols());
        // Block triangularity: over-determined equations only use over-determined unknowns;
        // square equations use no under-determined unknown.
        for (i, j, _) in s.iter() {
            if dm.over_rows.contains(&i) { prop_assert!(dm.over_cols.contains(&j)); }
            if dm.square_rows.contains(&i) { prop_assert!(!dm.under_cols.contains(&j)); }
        }
        prop_assert_eq!(dm.is_structurally_nonsingular(), s.is_square() && rank as usize == s.n_rows());
        let (cr, _) = maximum_matching(&s);
        prop_assert_eq!(cr.iter().flatten().count(), dm.matching_size);
    }
}
