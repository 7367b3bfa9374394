//! `daec simulate --vars`: the variables to plot, by name or by pattern.

use crate::Ctx;
use daec_model::Dae;

/// Whether `name` matches the glob `pattern`: `*` stands for any run of
/// characters (dots and brackets included), `?` for one character, and
/// every other character for itself — brackets too, so `x[*]` matches
/// every element of the array `x`. Iterative, `O(|name| · |pattern|)` at
/// worst.
pub(crate) fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let (mut i, mut j) = (0, 0);
    // the last `*` seen and the position in `name` it was tried at
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        if i < p.len() && (p[i] == '?' || (p[i] != '*' && p[i] == n[j])) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            // let the last `*` take one more character
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

/// The columns (unknowns) `--vars` names, in the order given; a pattern
/// (with `*` or `?`) adds the variables it matches in the model's order.
/// An entry that is neither a variable nor a pattern matching one is a
/// usage error naming it. Empty: every variable.
pub(crate) fn plot_columns(
    ctx: &mut Ctx<'_, '_>,
    dae: &Dae,
    vars: &[String],
) -> Result<Vec<usize>, i32> {
    // (the columns: the unknowns, then the discrete variables)
    let names: Vec<&str> = dae
        .unknowns
        .iter()
        .map(|u| u.name.as_str())
        .chain(dae.shown_discrete().map(|p| p.name.as_str()))
        .collect();
    if vars.is_empty() {
        return Ok((0..names.len()).collect());
    }
    let index = |name: &str| names.iter().position(|&n| n == name);
    let mut columns = Vec::new();
    let mut taken = vec![false; names.len()];
    for v in vars {
        let v = v.trim();
        // An alias (a connection's other name of an unknown) shows the
        // unknown it names.
        let alias_of = |name: &str| {
            dae.aliases
                .iter()
                .find(|a| a.name == name)
                .and_then(|a| index(&a.of))
        };
        let matched: Vec<usize> = match index(v).or_else(|| alias_of(v)) {
            Some(j) => vec![j],
            None if v.contains(['*', '?']) => (0..names.len())
                .filter(|&j| glob_match(v, names[j]))
                .chain(
                    dae.aliases
                        .iter()
                        .filter(|a| glob_match(v, &a.name))
                        .filter_map(|a| index(&a.of)),
                )
                .collect(),
            None => {
                let hint = daec_model::did_you_mean(v, names.iter().copied())
                    .map(|s| format!("; did you mean `{s}`?"))
                    .unwrap_or_default();
                return Err(
                    ctx.usage_error(&format!("--vars: the model has no variable `{v}`{hint}"))
                );
            }
        };
        if matched.is_empty() {
            return Err(ctx.usage_error(&format!(
                "--vars: the pattern `{v}` matches no variable of the model (`*` stands for any characters, `?` for one)"
            )));
        }
        for j in matched {
            if !std::mem::replace(&mut taken[j], true) {
                columns.push(j);
            }
        }
    }
    Ok(columns)
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn globs_match_whole_flat_names() {
        for (pattern, name) in [
            ("x*", "x"),
            ("x*", "x_dot"),
            ("C1.*", "C1.v"),
            ("C1.*", "C1.pin[2].i"),
            ("*.v", "R1.v"),
            ("x[*]", "x[12]"),
            ("x[?]", "x[3]"),
            ("*", ""),
            ("a*b*c", "aXbYbZc"),
            ("?", "λ"),
        ] {
            assert!(glob_match(pattern, name), "{pattern} {name}");
        }
        for (pattern, name) in [
            ("x*", "y"),
            ("C1.*", "C10.v"),
            ("x[?]", "x[12]"),
            ("x[*]", "x1"),
            ("*.v", "R1.vv"),
            ("a*b*c", "aXbYbZ"),
            ("?", ""),
        ] {
            assert!(!glob_match(pattern, name), "{pattern} {name}");
        }
        // no exponential backtracking
        let name = "a".repeat(10_000);
        assert!(!glob_match(&format!("{}b", "*a".repeat(50)), &name));
    }
}
