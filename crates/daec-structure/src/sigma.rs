//! The signature matrix Σ (steinbrecher2016 §2, Algorithm 2.1 step 1; Pryce 2001 §2).
//!
//! `σ_ij` is the highest order of the derivative of unknown `z_j` occurring in equation
//! `F_i`, or −∞ if `z_j` does not occur in `F_i` at all. Σ is stored sparsely (compressed
//! rows): only the finite entries are kept; an absent entry is −∞.

use std::fmt;

/// The value −∞ of an absent signature entry in the `i32` encoding used by
/// [`SigmaMatrix::get_i32`]. The rest of the API uses `Option<u32>` (`None` = −∞).
pub const NEG_INF: i32 = i32::MIN;

/// A sparse signature matrix Σ, row-major (rows = equations, columns = unknowns).
///
/// Each row holds its finite entries `(column, order)` sorted by column, without
/// duplicates. Absent entries are −∞.
#[derive(Clone, PartialEq, Eq)]
pub struct SigmaMatrix {
    n_rows: usize,
    n_cols: usize,
    row_ptr: Vec<usize>,
    entries: Vec<(u32, u32)>,
}

/// Invalid input to [`SigmaMatrix::try_from_entries`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SigmaError {
    /// An entry lies outside the `n_rows × n_cols` matrix.
    OutOfRange {
        /// Row index of the offending entry.
        row: usize,
        /// Column index of the offending entry.
        col: usize,
        /// Number of rows of the matrix.
        n_rows: usize,
        /// Number of columns of the matrix.
        n_cols: usize,
    },
    /// The matrix has more than `u32::MAX` columns.
    TooManyColumns(usize),
}

impl fmt::Display for SigmaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SigmaError::OutOfRange {
                row,
                col,
                n_rows,
                n_cols,
            } => write!(
                f,
                "signature entry ({row}, {col}) lies outside the {n_rows}×{n_cols} matrix"
            ),
            SigmaError::TooManyColumns(n) => {
                write!(f, "signature matrix has {n} columns, more than u32::MAX")
            }
        }
    }
}

impl std::error::Error for SigmaError {}

impl SigmaMatrix {
    /// An `n_rows × n_cols` signature matrix with all entries −∞.
    pub fn new(n_rows: usize, n_cols: usize) -> Self {
        SigmaMatrix {
            n_rows,
            n_cols,
            row_ptr: vec![0; n_rows + 1],
            entries: Vec::new(),
        }
    }

    /// Builds Σ from finite entries `(row, col, order)`; duplicates keep the maximum order.
    ///
    /// # Panics
    /// If an entry lies outside the matrix; use [`SigmaMatrix::try_from_entries`] to get an
    /// error instead.
    pub fn from_entries(
        n_rows: usize,
        n_cols: usize,
        entries: impl IntoIterator<Item = (usize, usize, u32)>,
    ) -> Self {
        match Self::try_from_entries(n_rows, n_cols, entries) {
            Ok(s) => s,
            Err(e) => panic!("{e}"),
        }
    }

    /// Builds Σ from finite entries `(row, col, order)`; duplicates keep the maximum order.
    /// Returns an error if an entry lies outside the matrix.
    pub fn try_from_entries(
        n_rows: usize,
        n_cols: usize,
        entries: impl IntoIterator<Item = (usize, usize, u32)>,
    ) -> Result<Self, SigmaError> {
        if u32::try_from(n_cols).is_err() {
            return Err(SigmaError::TooManyColumns(n_cols));
        }
        let mut triples: Vec<(usize, u32, u32)> = Vec::new();
        for (row, col, order) in entries {
            if row >= n_rows || col >= n_cols {
                return Err(SigmaError::OutOfRange {
                    row,
                    col,
                    n_rows,
                    n_cols,
                });
            }
            // `col < n_cols <= u32::MAX` was checked above.
            triples.push((row, col as u32, order));
        }
        // Sort by (row, col, order descending) so that the first of equal (row, col) is the max.
        triples.sort_unstable_by(|a, b| (a.0, a.1, b.2).cmp(&(b.0, b.1, a.2)));
        triples.dedup_by(|next, kept| next.0 == kept.0 && next.1 == kept.1);
        let mut row_ptr = vec![0usize; n_rows + 1];
        for &(r, _, _) in &triples {
            row_ptr[r + 1] += 1;
        }
        for i in 0..n_rows {
            row_ptr[i + 1] += row_ptr[i];
        }
        let entries = triples.into_iter().map(|(_, c, o)| (c, o)).collect();
        Ok(SigmaMatrix {
            n_rows,
            n_cols,
            row_ptr,
            entries,
        })
    }

    /// `σ_ij`, or `None` for −∞ (also for indices outside the matrix).
    pub fn get(&self, i: usize, j: usize) -> Option<u32> {
        if i >= self.n_rows {
            return None;
        }
        let row = self.row(i);
        let j = u32::try_from(j).ok()?;
        row.binary_search_by_key(&j, |&(c, _)| c)
            .ok()
            .map(|k| row[k].1)
    }

    /// `σ_ij` in the `i32` encoding: [`NEG_INF`] for −∞; orders above `i32::MAX` saturate.
    pub fn get_i32(&self, i: usize, j: usize) -> i32 {
        self.get(i, j)
            .map_or(NEG_INF, |o| i32::try_from(o).unwrap_or(i32::MAX))
    }

    /// The finite entries `(column, order)` of row `i`, sorted by column.
    ///
    /// # Panics
    /// If `i >= self.n_rows()`.
    pub fn row(&self, i: usize) -> &[(u32, u32)] {
        &self.entries[self.row_ptr[i]..self.row_ptr[i + 1]]
    }

    /// Number of rows (equations).
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// Number of columns (unknowns).
    pub fn n_cols(&self) -> usize {
        self.n_cols
    }

    /// Number of finite entries.
    pub fn nnz(&self) -> usize {
        self.entries.len()
    }

    /// Whether Σ is square.
    pub fn is_square(&self) -> bool {
        self.n_rows == self.n_cols
    }

    /// All finite entries `(row, col, order)` in row-major order.
    pub fn iter(&self) -> impl Iterator<Item = (usize, usize, u32)> + '_ {
        (0..self.n_rows)
            .flat_map(move |i| self.row(i).iter().map(move |&(c, o)| (i, c as usize, o)))
    }

    /// The rows holding a finite entry in each column (the transposed pattern), as
    /// `(col_ptr, rows)` in compressed-column form.
    pub(crate) fn column_pattern(&self) -> (Vec<usize>, Vec<u32>) {
        let mut col_ptr = vec![0usize; self.n_cols + 1];
        for &(c, _) in &self.entries {
            col_ptr[c as usize + 1] += 1;
        }
        for j in 0..self.n_cols {
            col_ptr[j + 1] += col_ptr[j];
        }
        let mut next = col_ptr.clone();
        let mut rows = vec![0u32; self.entries.len()];
        for i in 0..self.n_rows {
            for &(c, _) in self.row(i) {
                rows[next[c as usize]] = i as u32;
                next[c as usize] += 1;
            }
        }
        (col_ptr, rows)
    }

    /// `p_j = max_i σ_ij`: the highest derivative of each unknown in the DAE (0 for an
    /// unknown that occurs only underived or not at all).
    pub fn column_orders(&self) -> Vec<u32> {
        let mut p = vec![0u32; self.n_cols];
        for &(c, o) in &self.entries {
            p[c as usize] = p[c as usize].max(o);
        }
        p
    }

    /// The largest finite entry, or `None` if Σ has no finite entry.
    pub fn max_order(&self) -> Option<u32> {
        self.entries.iter().map(|&(_, o)| o).max()
    }
}

impl fmt::Debug for SigmaMatrix {
    /// Prints Σ as a table, `-` for −∞.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "SigmaMatrix {}x{} [", self.n_rows, self.n_cols)?;
        if self.n_rows <= 40 && self.n_cols <= 40 {
            for i in 0..self.n_rows {
                let cells: Vec<String> = (0..self.n_cols)
                    .map(|j| self.get(i, j).map_or("-".to_string(), |o| o.to_string()))
                    .collect();
                writeln!(f, "  [{}]", cells.join(","))?;
            }
        } else {
            writeln!(f, "  {} finite entries", self.nnz())?;
        }
        write!(f, "]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_keep_max_and_rows_sorted() {
        let s = SigmaMatrix::from_entries(2, 3, [(0, 2, 1), (0, 0, 0), (0, 2, 3), (1, 1, 2)]);
        assert_eq!(s.row(0), &[(0, 0), (2, 3)]);
        assert_eq!(s.get(0, 2), Some(3));
        assert_eq!(s.get(0, 1), None);
        assert_eq!(s.get_i32(0, 1), NEG_INF);
        assert_eq!(s.get_i32(1, 1), 2);
        assert_eq!(s.nnz(), 3);
        assert_eq!(s.max_order(), Some(3));
        assert_eq!(
            s.iter().collect::<Vec<_>>(),
            vec![(0, 0, 0), (0, 2, 3), (1, 1, 2)]
        );
    }

    #[test]
    fn out_of_range_is_an_error() {
        let e = SigmaMatrix::try_from_entries(2, 2, [(0, 2, 1)]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "signature entry (0, 2) lies outside the 2×2 matrix"
        );
        assert_eq!(SigmaMatrix::new(3, 3).get(5, 0), None);
    }

    #[test]
    fn column_pattern_transposes() {
        let s = SigmaMatrix::from_entries(3, 2, [(0, 1, 0), (2, 1, 1), (1, 0, 0)]);
        let (ptr, rows) = s.column_pattern();
        assert_eq!(ptr, vec![0, 1, 3]);
        assert_eq!(rows, vec![1, 0, 2]);
    }
}
