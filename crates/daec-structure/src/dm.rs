//! Maximum matchings (Hopcroft–Karp) and the Dulmage–Mendelsohn decomposition of the
//! sparsity pattern of Σ, for diagnosing structurally singular models.
//!
//! Dulmage & Mendelsohn (1958); Pothen & Fan (1990) §2: with a maximum matching M,
//! * the **over-determined** part is everything reachable by M-alternating paths from the
//!   unmatched equations (rows): more equations than unknowns;
//! * the **under-determined** part is everything reachable by M-alternating paths from the
//!   unmatched unknowns (columns): more unknowns than equations;
//! * the rest is the square, well-determined part.

use std::collections::VecDeque;
use std::fmt;

use crate::sigma::SigmaMatrix;

const NONE: u32 = u32::MAX;

/// A maximum matching of the pattern of Σ (Hopcroft & Karp 1973), iterative.
/// Returns `(col_of_row, row_of_col)` with `None` for unmatched.
pub fn maximum_matching(s: &SigmaMatrix) -> (Vec<Option<usize>>, Vec<Option<usize>>) {
    let (cr, rc) = hopcroft_karp(s);
    (
        cr.iter()
            .map(|&j| (j != NONE).then_some(j as usize))
            .collect(),
        rc.iter()
            .map(|&i| (i != NONE).then_some(i as usize))
            .collect(),
    )
}

fn hopcroft_karp(s: &SigmaMatrix) -> (Vec<u32>, Vec<u32>) {
    let (nr, nc) = (s.n_rows(), s.n_cols());
    let mut col_of_row = vec![NONE; nr];
    let mut row_of_col = vec![NONE; nc];
    // Greedy start.
    for (i, cr) in col_of_row.iter_mut().enumerate() {
        for &(j, _) in s.row(i) {
            if row_of_col[j as usize] == NONE {
                row_of_col[j as usize] = i as u32;
                *cr = j;
                break;
            }
        }
    }
    let mut layer = vec![u32::MAX; nr];
    let mut queue = VecDeque::new();
    let mut it = vec![0usize; nr];
    let mut stack: Vec<u32> = Vec::new();
    loop {
        // BFS layering from free rows.
        queue.clear();
        for i in 0..nr {
            if col_of_row[i] == NONE {
                layer[i] = 0;
                queue.push_back(i as u32);
            } else {
                layer[i] = u32::MAX;
            }
        }
        let mut found = false;
        while let Some(i) = queue.pop_front() {
            let i = i as usize;
            for &(j, _) in s.row(i) {
                let i2 = row_of_col[j as usize];
                if i2 == NONE {
                    found = true;
                } else if layer[i2 as usize] == u32::MAX {
                    layer[i2 as usize] = layer[i] + 1;
                    queue.push_back(i2);
                }
            }
        }
        if !found {
            break;
        }
        // Iterative DFS along layers.
        it.iter_mut().for_each(|x| *x = 0);
        let mut augmented = false;
        for root in 0..nr {
            if col_of_row[root] != NONE || layer[root] != 0 {
                continue;
            }
            stack.clear();
            stack.push(root as u32);
            while let Some(&top) = stack.last() {
                let i = top as usize;
                let row = s.row(i);
                if it[i] >= row.len() {
                    layer[i] = u32::MAX; // dead end
                    stack.pop();
                    continue;
                }
                let j = row[it[i]].0;
                it[i] += 1;
                let i2 = row_of_col[j as usize];
                if i2 == NONE {
                    // Augment along the stack: each row on the stack takes the column it
                    // just advanced over.
                    for &r in stack.iter().rev() {
                        let r = r as usize;
                        let jj = s.row(r)[it[r] - 1].0;
                        col_of_row[r] = jj;
                        row_of_col[jj as usize] = r as u32;
                    }
                    for &r in &stack {
                        layer[r as usize] = u32::MAX;
                    }
                    augmented = true;
                    stack.clear();
                } else if layer[i2 as usize] == layer[i] + 1 {
                    stack.push(i2);
                }
            }
        }
        if !augmented {
            break;
        }
    }
    (col_of_row, row_of_col)
}

/// The coarse Dulmage–Mendelsohn decomposition of Σ's sparsity pattern (any shape).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DmDecomposition {
    /// Size of a maximum matching (the structural rank).
    pub matching_size: usize,
    /// Equations of the over-determined part (sorted).
    pub over_rows: Vec<usize>,
    /// Unknowns of the over-determined part (sorted).
    pub over_cols: Vec<usize>,
    /// Equations of the under-determined part (sorted).
    pub under_rows: Vec<usize>,
    /// Unknowns of the under-determined part (sorted).
    pub under_cols: Vec<usize>,
    /// Equations of the well-determined (square) part (sorted).
    pub square_rows: Vec<usize>,
    /// Unknowns of the well-determined (square) part (sorted).
    pub square_cols: Vec<usize>,
    /// Equations left unmatched by the maximum matching (a subset of `over_rows`).
    pub unmatched_rows: Vec<usize>,
    /// Unknowns left unmatched by the maximum matching (a subset of `under_cols`).
    pub unmatched_cols: Vec<usize>,
}

impl DmDecomposition {
    /// Whether Σ is structurally nonsingular (square with a perfect matching).
    pub fn is_structurally_nonsingular(&self) -> bool {
        self.over_rows.is_empty() && self.under_cols.is_empty()
    }
}

/// The Dulmage–Mendelsohn decomposition of Σ's sparsity pattern; works for non-square Σ.
pub fn dulmage_mendelsohn(s: &SigmaMatrix) -> DmDecomposition {
    let (nr, nc) = (s.n_rows(), s.n_cols());
    let (col_of_row, row_of_col) = hopcroft_karp(s);
    let (col_ptr, col_rows) = s.column_pattern();
    let matching_size = col_of_row.iter().filter(|&&j| j != NONE).count();
    // Over-determined: alternating BFS from unmatched rows (row -any-> col -M-> row).
    let mut row_over = vec![false; nr];
    let mut col_over = vec![false; nc];
    let mut queue: Vec<u32> = (0..nr as u32)
        .filter(|&i| col_of_row[i as usize] == NONE)
        .collect();
    let unmatched_rows: Vec<usize> = queue.iter().map(|&i| i as usize).collect();
    for &i in &queue {
        row_over[i as usize] = true;
    }
    while let Some(i) = queue.pop() {
        for &(j, _) in s.row(i as usize) {
            if !col_over[j as usize] {
                col_over[j as usize] = true;
                let i2 = row_of_col[j as usize];
                if i2 != NONE && !row_over[i2 as usize] {
                    row_over[i2 as usize] = true;
                    queue.push(i2);
                }
            }
        }
    }
    // Under-determined: alternating BFS from unmatched columns (col -any-> row -M-> col).
    let mut row_under = vec![false; nr];
    let mut col_under = vec![false; nc];
    let mut queue: Vec<u32> = (0..nc as u32)
        .filter(|&j| row_of_col[j as usize] == NONE)
        .collect();
    let unmatched_cols: Vec<usize> = queue.iter().map(|&j| j as usize).collect();
    for &j in &queue {
        col_under[j as usize] = true;
    }
    while let Some(j) = queue.pop() {
        for &i in &col_rows[col_ptr[j as usize]..col_ptr[j as usize + 1]] {
            if !row_under[i as usize] {
                row_under[i as usize] = true;
                let j2 = col_of_row[i as usize];
                if j2 != NONE && !col_under[j2 as usize] {
                    col_under[j2 as usize] = true;
                    queue.push(j2);
                }
            }
        }
    }
    let pick = |flags: &[bool]| -> Vec<usize> {
        flags
            .iter()
            .enumerate()
            .filter_map(|(k, &f)| f.then_some(k))
            .collect()
    };
    let square_rows = (0..nr).filter(|&i| !row_over[i] && !row_under[i]).collect();
    let square_cols = (0..nc).filter(|&j| !col_over[j] && !col_under[j]).collect();
    DmDecomposition {
        matching_size,
        over_rows: pick(&row_over),
        over_cols: pick(&col_over),
        under_rows: pick(&row_under),
        under_cols: pick(&col_under),
        square_rows,
        square_cols,
        unmatched_rows,
        unmatched_cols,
    }
}

/// Σ has no finite transversal (structurally singular, or not square): the model is over-
/// and/or under-determined. Carries the Dulmage–Mendelsohn decomposition naming the parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructuralSingularity {
    /// The Dulmage–Mendelsohn decomposition of Σ (boxed to keep `Result`s small).
    pub dm: Box<DmDecomposition>,
    /// Number of equations.
    pub n_rows: usize,
    /// Number of unknowns.
    pub n_cols: usize,
}

impl StructuralSingularity {
    pub(crate) fn new(dm: DmDecomposition) -> Self {
        let n_rows = dm.over_rows.len() + dm.under_rows.len() + dm.square_rows.len();
        let n_cols = dm.over_cols.len() + dm.under_cols.len() + dm.square_cols.len();
        StructuralSingularity {
            dm: Box::new(dm),
            n_rows,
            n_cols,
        }
    }
}

impl fmt::Display for StructuralSingularity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "structurally singular: {} equations, {} unknowns, structural rank {}",
            self.n_rows, self.n_cols, self.dm.matching_size
        )?;
        if !self.dm.over_rows.is_empty() {
            write!(
                f,
                "; over-determined: {} equations in {} unknowns",
                self.dm.over_rows.len(),
                self.dm.over_cols.len()
            )?;
        }
        if !self.dm.under_cols.is_empty() {
            write!(
                f,
                "; under-determined: {} equations in {} unknowns",
                self.dm.under_rows.len(),
                self.dm.under_cols.len()
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for StructuralSingularity {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn over_and_under_determined_parts() {
        // rows 0,1 only use col 0 (over-determined); row 2 uses cols 1,2 (under-determined).
        let s = SigmaMatrix::from_entries(3, 3, [(0, 0, 0), (1, 0, 1), (2, 1, 0), (2, 2, 0)]);
        let dm = dulmage_mendelsohn(&s);
        assert_eq!(dm.matching_size, 2);
        assert_eq!(dm.over_rows, vec![0, 1]);
        assert_eq!(dm.over_cols, vec![0]);
        assert_eq!(dm.under_rows, vec![2]);
        assert_eq!(dm.under_cols, vec![1, 2]);
        assert!(dm.square_rows.is_empty());
        assert!(!dm.is_structurally_nonsingular());
        let e = StructuralSingularity::new(dm);
        assert_eq!(
            e.to_string(),
            "structurally singular: 3 equations, 3 unknowns, structural rank 2; \
             over-determined: 2 equations in 1 unknowns; under-determined: 1 equations in 2 unknowns"
        );
    }

    #[test]
    fn nonsingular_is_all_square() {
        let s = SigmaMatrix::from_entries(2, 2, [(0, 0, 0), (0, 1, 0), (1, 0, 1)]);
        let dm = dulmage_mendelsohn(&s);
        assert_eq!(dm.matching_size, 2);
        assert_eq!(dm.square_rows, vec![0, 1]);
        assert!(dm.is_structurally_nonsingular());
    }

    #[test]
    fn non_square_three_equations_two_unknowns() {
        let s = SigmaMatrix::from_entries(3, 2, [(0, 0, 0), (1, 1, 0), (2, 0, 0), (2, 1, 0)]);
        let dm = dulmage_mendelsohn(&s);
        assert_eq!(dm.matching_size, 2);
        assert_eq!(dm.over_rows, vec![0, 1, 2]);
        assert_eq!(dm.over_cols, vec![0, 1]);
        assert_eq!(dm.unmatched_rows.len(), 1);
    }
}
