//! "Did you mean …?" suggestions by edit distance.

/// The candidate closest to `name` by Damerau–Levenshtein distance, if it
/// is close enough to be a plausible typo (distance ≤ max(1, len/3)).
/// Ties go to the first candidate in iteration order.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    let mut best: Option<(usize, &'a str)> = None;
    for cand in candidates {
        if cand == name {
            continue;
        }
        let d = distance(name, cand);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, cand));
        }
    }
    best.map(|(_, c)| c)
}

/// Optimal-string-alignment distance (Levenshtein plus transpositions),
/// case differences counting half (rounded down) so `Lambda` ~ `lambda`.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > 3 {
        return usize::MAX;
    }
    let (n, m) = (a.len(), b.len());
    // Costs doubled so that a case-only change costs 1 (half a substitution).
    let mut d = vec![vec![0usize; m + 1]; n + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = 2 * i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = 2 * j;
    }
    for i in 1..=n {
        for j in 1..=m {
            let sub = if a[i - 1] == b[j - 1] {
                0
            } else if a[i - 1].eq_ignore_ascii_case(&b[j - 1]) {
                1
            } else {
                2
            };
            let mut v = (d[i - 1][j] + 2)
                .min(d[i][j - 1] + 2)
                .min(d[i - 1][j - 1] + sub);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 2);
            }
            d[i][j] = v;
        }
    }
    d[n][m] / 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        let names = ["lambda", "x", "y", "velocity"];
        assert_eq!(did_you_mean("lamda", names), Some("lambda"));
        assert_eq!(did_you_mean("lmabda", names), Some("lambda"));
        assert_eq!(did_you_mean("Lambda", names), Some("lambda"));
        assert_eq!(did_you_mean("velocty", names), Some("velocity"));
        assert_eq!(did_you_mean("z", names), Some("x"));
        assert_eq!(did_you_mean("pressure", names), None);
        assert_eq!(did_you_mean("x", ["x"]), None);
    }
}
