//! The flat model printed back as `.dae` text (`daec flatten`).
//!
//! The output is a valid model: parsing and flattening it again gives the
//! same text. Arrays are declared as arrays and their elements referenced
//! as `p[3]`; a name that is not a plain identifier (or is a keyword) is
//! written as a quoted identifier with its escapes (`'a b'[3]`).

use crate::{BaseType, Dae, Equation, Parameter, Unknown};
use daec_expr::{Names, ParamId, to_modelica};
use daec_syntax::lexer::{ident_source, string_literal};
use std::fmt::Write;

/// Names of a [`Dae`]'s unknowns and parameters for the printers.
pub struct FlatNames<'a>(pub &'a Dae);

/// The names are `.dae` source ([`crate::Unknown::source_name`]), so printed
/// expressions parse again.
impl Names for FlatNames<'_> {
    fn unknown(&self, j: u32) -> String {
        self.0
            .unknowns
            .get(j as usize)
            .map_or_else(|| format!("z{j}"), Unknown::source_name)
    }
    fn push_unknown(&self, j: u32, out: &mut String) {
        match self.0.unknowns.get(j as usize) {
            Some(u) => u.push_source_name(out),
            None => out.push_str(&self.unknown(j)),
        }
    }
    fn param(&self, p: ParamId) -> String {
        if self.0.initial == Some(p.0) {
            return "initial()".to_string();
        }
        if self.0.terminal == Some(p.0) {
            return "terminal()".to_string();
        }
        if let Some((d, true)) = self.0.discrete_of(p.0) {
            return format!("pre({})", self.param(ParamId(d.param)));
        }
        self.0
            .parameters
            .get(p.0 as usize)
            .map_or_else(|| format!("p{}", p.0), Parameter::source_name)
    }
}

/// A number as `.dae` text that reads back to the same `f64`.
pub(crate) fn number(x: f64) -> String {
    if x.is_finite() {
        format!("{x:?}")
    } else if x.is_nan() {
        "(0.0/0.0)".to_string()
    } else if x > 0.0 {
        "(1.0/0.0)".to_string()
    } else {
        "(-1.0/0.0)".to_string()
    }
}

fn quoted(s: &str) -> String {
    string_literal(s)
}

fn description(d: Option<&str>) -> String {
    d.map_or(String::new(), |d| format!(" {}", quoted(d)))
}

/// `{…}` of the `len` values of an array with `dims`, row-major, the `k`-th
/// written by `value(k)`: written element by element, so that no list of
/// the elements' texts is held.
fn array_literal(len: usize, dims: &[usize], mut value: impl FnMut(usize) -> String) -> String {
    // the number of elements of one row at each depth (innermost: 1)
    let mut strides = vec![1usize; dims.len().max(1)];
    for k in (0..dims.len().saturating_sub(1)).rev() {
        strides[k] = strides[k + 1].saturating_mul(dims[k + 1].max(1));
    }
    let depth = strides.len();
    let mut out = "{".repeat(depth);
    for k in 0..len {
        if k > 0 {
            // close and reopen the rows that end at element k
            let ended = strides[..depth - 1]
                .iter()
                .filter(|&&s| s > 1 && k % s == 0)
                .count();
            out.push_str(&"}".repeat(ended));
            out.push_str(", ");
            out.push_str(&"{".repeat(ended));
        }
        out.push_str(&value(k));
    }
    out.push_str(&"}".repeat(depth));
    out
}

/// The extent of each dimension of an array whose elements have the
/// subscripts `subs`.
fn dims_of<S: std::ops::Deref<Target = [usize]>>(mut subs: impl Iterator<Item = S>) -> Vec<usize> {
    let Some(first) = subs.next() else {
        return Vec::new();
    };
    let mut dims = first.to_vec();
    for s in subs {
        for (d, &x) in dims.iter_mut().zip(s.iter()) {
            *d = (*d).max(x);
        }
    }
    dims
}

fn dims_text(dims: &[usize]) -> String {
    if dims.is_empty() {
        String::new()
    } else {
        let d: Vec<String> = dims.iter().map(|x| x.to_string()).collect();
        format!("[{}]", d.join(", "))
    }
}

/// An attribute of an array of unknowns or parameters: `each start = 1`
/// when all equal, else `start = {…}`; `None` when no element has it.
fn attribute<T>(
    group: &[T],
    dims: &[usize],
    name: &str,
    get: impl Fn(&T) -> Option<String>,
) -> Option<String> {
    // (each element's text is compared with the first's and dropped: a large
    // array holds no list of them)
    let first = get(group.first()?);
    if dims.is_empty() {
        return first.map(|v| format!("{name} = {v}"));
    }
    if group[1..].iter().all(|q| get(q) == first) {
        return first.map(|v| format!("each {name} = {v}"));
    }
    let default = if name == "fixed" { "false" } else { "0.0" };
    let literal = array_literal(group.len(), dims, |k| {
        get(&group[k]).unwrap_or_else(|| default.to_string())
    });
    Some(format!("{name} = {literal}"))
}

/// `(a = 1, b = 2)` of the attributes given, "" when none is.
fn modification<const N: usize>(attrs: [Option<String>; N]) -> String {
    let given: Vec<String> = attrs.into_iter().flatten().collect();
    if given.is_empty() {
        String::new()
    } else {
        format!("({})", given.join(", "))
    }
}

/// The declarations of the discrete variables, an array as one
/// (`Integer n[2](start = {1, 2});`): `discrete Real y(start = 1.0);`,
/// `Integer n(start = 2);`, `Boolean b(start = true);`.
fn discrete_declarations(dae: &Dae, out: &mut dyn Write) {
    let params: Vec<&Parameter> = dae
        .discrete
        .iter()
        .filter_map(|d| dae.parameters.get(d.param as usize))
        .collect();
    let mut i = 0;
    while i < params.len() {
        let mut j = i + 1;
        while j < params.len()
            && params[j].base == params[i].base
            && !params[j].subscripts.is_empty()
        {
            j += 1;
        }
        let group = &params[i..j];
        let p = group[0];
        let value = |x: f64| match p.ty {
            BaseType::Integer => format!("{}", x as i64),
            BaseType::Boolean => (x != 0.0).to_string(),
            BaseType::Real => number(x),
        };
        let ty = match p.ty {
            BaseType::Integer => "Integer".to_string(),
            BaseType::Boolean => "Boolean".to_string(),
            BaseType::Real => format!("discrete {}", p.type_name),
        };
        let dims = dims_of(group.iter().map(|q| &q.subscripts[..]));
        let attrs = [
            attribute(group, &dims, "start", |q| Some(value(q.value))),
            attribute(group, &dims, "fixed", |q| q.fixed.map(|f| f.to_string())),
        ];
        let _ = writeln!(
            out,
            "  {ty} {}{}{}{};",
            ident_source(&p.base),
            dims_text(&dims),
            modification(attrs),
            description(p.description.as_deref())
        );
        i = j;
    }
}

/// Prints the flat model as `.dae` text.
pub fn to_dae_text(dae: &Dae) -> String {
    let mut out = String::new();
    write_dae_text(dae, &mut out);
    out
}

/// Writes the flat model as `.dae` text ([`to_dae_text`]) to `out` line by
/// line, so that a large model's text is never held whole. An error of
/// `out` does not stop the writing: a writer over an `io::Write` keeps its
/// first error and fails every later write.
pub fn write_dae_text(dae: &Dae, out: &mut dyn Write) {
    let names = FlatNames(dae);
    let model_name = ident_source(&dae.name);
    let _ = writeln!(
        out,
        "model {model_name}{}",
        description(dae.description.as_deref())
    );
    // Parameters, grouped by array (the discrete variables after them).
    let mut i = 0;
    while i < dae.parameters.len() {
        let base = &dae.parameters[i].base;
        let mut j = i + 1;
        while j < dae.parameters.len() && &dae.parameters[j].base == base {
            j += 1;
        }
        let group = &dae.parameters[i..j];
        let p = &group[0];
        if dae.discrete_of(i as u32).is_some()
            || dae.initial == Some(i as u32)
            || dae.terminal == Some(i as u32)
        {
            i = j;
            continue;
        }
        let kw = if p.constant { "constant" } else { "parameter" };
        let ty = match p.ty {
            BaseType::Real => p.type_name.as_str(),
            BaseType::Integer => "Integer",
            BaseType::Boolean => "Boolean",
        };
        let value = |x: f64| match p.ty {
            BaseType::Integer => format!("{}", x as i64),
            BaseType::Boolean => (if x != 0.0 { "true" } else { "false" }).to_string(),
            BaseType::Real => number(x),
        };
        let dims = dims_of(group.iter().map(|q| &q.subscripts[..]));
        let v = if dims.is_empty() {
            value(p.value)
        } else {
            array_literal(group.len(), &dims, |k| value(group[k].value))
        };
        let attrs = [
            attribute(group, &dims, "start", |q| q.start.map(number)),
            attribute(group, &dims, "fixed", |q| q.fixed.map(|f| f.to_string())),
            attribute(group, &dims, "nominal", |q| q.nominal.map(number)),
            attribute(group, &dims, "min", |q| q.min.map(number)),
            attribute(group, &dims, "max", |q| q.max.map(number)),
            attribute(group, &dims, "unit", |q| q.unit.as_deref().map(quoted)),
            attribute(group, &dims, "displayUnit", |q| {
                q.display_unit.as_deref().map(quoted)
            }),
            attribute(group, &dims, "quantity", |q| {
                q.quantity.as_deref().map(quoted)
            }),
        ];
        let _ = writeln!(
            out,
            "  {kw} {ty} {}{}{} = {v}{};",
            ident_source(base),
            dims_text(&dims),
            modification(attrs),
            description(p.description.as_deref())
        );
        i = j;
    }
    discrete_declarations(dae, &mut *out);
    // Unknowns, grouped by array.
    let mut i = 0;
    while i < dae.unknowns.len() {
        let base = dae.unknowns[i].base();
        let mut j = i + 1;
        while j < dae.unknowns.len() && dae.unknowns[j].base() == base {
            j += 1;
        }
        let group = &dae.unknowns[i..j];
        let dims = dims_of(group.iter().map(Unknown::subscripts));
        // A group where only some elements are fixed prints `fixed = {…}`
        // with `false` for the others; `each fixed = true` when all are.
        let attrs = [
            attribute(group, &dims, "start", |u| u.start().map(number)),
            attribute(group, &dims, "fixed", |u| {
                u.fixed.then(|| "true".to_string())
            }),
            attribute(group, &dims, "nominal", |u| u.nominal().map(number)),
            attribute(group, &dims, "min", |u| u.min().map(number)),
            attribute(group, &dims, "max", |u| u.max().map(number)),
            attribute(group, &dims, "unit", |u| u.unit().map(quoted)),
            attribute(group, &dims, "displayUnit", |u| {
                u.display_unit().map(quoted)
            }),
            attribute(group, &dims, "quantity", |u| u.quantity().map(quoted)),
        ];
        let _ = writeln!(
            out,
            "  {} {}{}{}{};",
            group[0].type_name(),
            ident_source(base),
            dims_text(&dims),
            modification(attrs),
            description(group[0].description())
        );
        i = j;
    }
    // Aliases: declared after the unknowns, so that the unknown they
    // name stays the representative when the text is read again.
    for a in &dae.aliases {
        let _ = writeln!(out, "  Real {};", ident_source(&a.name));
    }
    // (an invariant keeps its annotation: the flat model declares it too)
    let eqs_with = |out: &mut dyn Write, list: &[Equation], annotation: &str| {
        for e in list {
            let _ = writeln!(
                out,
                "  {} = {}{}{annotation};",
                to_modelica(&dae.pool, e.lhs, &names),
                to_modelica(&dae.pool, e.rhs, &names),
                description(e.description.as_deref())
            );
        }
    };
    let eqs = |out: &mut dyn Write, list: &[Equation]| eqs_with(out, list, "");
    if !dae.initial_equations.is_empty() {
        let _ = out.write_str("initial equation\n");
        eqs(&mut *out, &dae.initial_equations);
    }
    let _ = out.write_str("equation\n");
    eqs(&mut *out, &dae.equations);
    for a in &dae.aliases {
        let _ = writeln!(
            out,
            "  {} = {}{} annotation(__daec(alias = true));",
            ident_source(&a.name),
            if a.negated { "-" } else { "" },
            ident_source(&a.of)
        );
    }
    eqs_with(
        &mut *out,
        &dae.invariants,
        " annotation(__daec(invariant = true))",
    );
    for a in &dae.asserts {
        let level = if a.warning {
            ", AssertionLevel.warning"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  assert({}, {}{level});",
            to_modelica(&dae.pool, a.condition, &names),
            quoted(&a.message)
        );
    }
    for (k, ev) in dae.events.iter().enumerate() {
        let first = ev.clause as usize == k;
        let _ = writeln!(
            out,
            "  {} {} then",
            if first { "when" } else { "elsewhen" },
            to_modelica(&dae.pool, ev.condition, &names)
        );
        for &(u, v) in &ev.reinits {
            let _ = writeln!(
                out,
                "    reinit({}, {});",
                names.unknown(u),
                to_modelica(&dae.pool, v, &names)
            );
        }
        for &(p, v) in &ev.assigns {
            let boolean = dae
                .parameters
                .get(p as usize)
                .is_some_and(|q| q.ty == BaseType::Boolean);
            // (a Boolean constant folds to 0 or 1)
            let value = match dae.pool.as_constant(v) {
                Some(x) if boolean => (x != 0.0).to_string(),
                _ => to_modelica(&dae.pool, v, &names),
            };
            let _ = writeln!(out, "    {} = {value};", names.param(ParamId(p)));
        }
        if let Some(m) = &ev.terminate {
            let _ = writeln!(out, "    terminate({});", quoted(m));
        }
        // (the next event opens a statement of its own, or there is none)
        if dae
            .events
            .get(k + 1)
            .is_none_or(|e| e.clause as usize == k + 1)
        {
            let _ = out.write_str("  end when;\n");
        }
    }
    let x = &dae.experiment;
    let mut exp = Vec::new();
    let fields = [
        ("StartTime", x.start_time),
        ("StopTime", x.stop_time),
        ("Tolerance", x.tolerance),
        ("Interval", x.interval),
    ];
    for (k, v) in fields {
        if let Some(v) = v {
            exp.push(format!("{k} = {}", number(v)));
        }
    }
    if !exp.is_empty() {
        let _ = writeln!(out, "  annotation(experiment({}));", exp.join(", "));
    }
    let _ = writeln!(out, "end {model_name};");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_literals_nest_by_dimension() {
        let v = |k: usize| k.to_string();
        assert_eq!(array_literal(3, &[3], v), "{0, 1, 2}");
        assert_eq!(array_literal(6, &[2, 3], v), "{{0, 1, 2}, {3, 4, 5}}");
        assert_eq!(
            array_literal(8, &[2, 2, 2], v),
            "{{{0, 1}, {2, 3}}, {{4, 5}, {6, 7}}}"
        );
        assert_eq!(dims_of([&[1, 2][..], &[2, 1], &[2, 3]].into_iter()), [2, 3]);
    }
}
