//! `daec simulate --vars`: the variables to plot, by name or by pattern.

use crate::Ctx;
use daec_model::Dae;
use std::borrow::Cow;

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

/// The names of the result columns, in the order of
/// [`daec_sim::Results::with_aliases`]: the unknowns, the discrete
/// variables (those a `when` clause assigns, then those defined outside
/// `when`), then each alias of one of them (its column holds the alias's
/// own values, negated for a negated alias). The second value is how many
/// come before the aliases.
pub(crate) fn column_names(dae: &Dae) -> (Vec<Cow<'_, str>>, usize) {
    let mut names: Vec<Cow<'_, str>> = dae
        .unknowns
        .iter()
        .map(|u| u.name())
        .chain(dae.shown_discrete().map(|p| Cow::from(p.name.as_str())))
        .chain(dae.defined.iter().map(|d| Cow::from(d.name.as_str())))
        .collect();
    let base = names.len();
    let aliases: Vec<Cow<'_, str>> = dae
        .aliases
        .iter()
        .filter(|a| names.iter().any(|n| *n == a.of))
        .map(|a| Cow::from(a.name.as_str()))
        .collect();
    names.extend(aliases);
    (names, base)
}

/// The columns `--vars` names, in the order given, as indices into the
/// results with their alias columns ([`column_names`]): an alias is shown
/// under its own name with its own sign. A pattern (with `*` or `?`) adds
/// the variables and aliases it matches in the model's order. An entry
/// that is neither a variable nor a pattern matching one is a usage error
/// naming it. Empty: every variable (not the aliases, which repeat them).
pub(crate) fn plot_columns(
    ctx: &mut Ctx<'_, '_>,
    dae: &Dae,
    vars: &[String],
) -> Result<Vec<usize>, i32> {
    let (names, base) = column_names(dae);
    if vars.is_empty() {
        return Ok((0..base).collect());
    }
    let mut columns = Vec::new();
    let mut taken = vec![false; names.len()];
    for v in vars {
        let v = v.trim();
        let matched: Vec<usize> = match names.iter().position(|n| n == v) {
            Some(j) => vec![j],
            None if v.contains(['*', '?']) => (0..names.len())
                .filter(|&j| glob_match(v, &names[j]))
                .collect(),
            None => {
                let hint = daec_model::did_you_mean(v, names.iter().map(|n| &**n))
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
