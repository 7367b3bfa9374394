//! `daec analyze`: Pryce's Signature method on the model — Σ, HVT, offsets,
//! index, DOF, Σ-Jacobian, BTF, Pantelides, hidden constraints by level,
//! success check, the declared invariants and their checks — as a text
//! report or JSON.

use crate::json::{Array, write_object};
use crate::{Ctx, EXIT_MODEL, Format, ModelArgs, emit, emit_with, load};
use daec_diag::{Diagnostic, Span, codes};
use daec_expr::{ExprId, to_modelica};
use daec_model::{Dae, FlatNames};
use daec_regularize::expand;
use daec_regularize::has_rational_entries;
use daec_regularize::{Analysis, AnalyzeOptions, Limit, Outcome, Regular, analyze};
use daec_sim::{DerivativeCheck, InvariantCheck};
use daec_structure::{HvtCount, SigmaAnalysis, StructuralSingularity};
use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::{Value, json};
use std::fmt::Write;
use std::path::Path;

/// Largest model whose Σ is printed as a table.
const TABLE_MAX: usize = 24;
/// Widest column heading of the Σ table (longer names are keyed).
const COLUMN_MAX: usize = 12;
/// Largest number of constraints listed in the text report.
const LIST_MAX: usize = 60;

/// `daec analyze MODEL [--format text|json] [-o FILE]`.
pub(crate) fn analyze_command(
    ctx: &mut Ctx<'_, '_>,
    args: &ModelArgs,
    format: Format,
    output: Option<&Path>,
) -> Result<(), i32> {
    crate::files::check_outputs(ctx, &args.model, &[("-o", output)])?;
    let loaded = load(ctx, args)?;
    let mut dae = loaded.dae;
    // (on the model as loaded: the check reduces a copy to first order)
    let invariants = daec_sim::check_invariants(&dae).map_err(|e| e.to_string());
    let analysis = analyze(&mut dae, &AnalyzeOptions::default());
    crate::check_derivative_limit(ctx, &loaded.map, &dae)?;
    // Structural singularity is a model error: diagnostics with spans.
    if let Outcome::Singular(sing) = &analysis.outcome {
        let d = singular_diagnostic(&dae, sing);
        ctx.diagnostics(&loaded.map, &[d]);
        return Err(EXIT_MODEL);
    }
    let Some(reg) = analysis.regular() else {
        return Err(EXIT_MODEL);
    };
    if reg.success.singular() {
        let d = singular_jacobian_diagnostic(&dae, &analysis, reg);
        ctx.diagnostics(&loaded.map, &[d]);
        return Err(EXIT_MODEL);
    }
    let mut warnings = Vec::new();
    if let Some(p) = &reg.success.point
        && !p.converged
    {
        let mut d = Diagnostic::warning(
            codes::SINGULAR_JACOBIAN,
            format!(
                "the start values are far from consistent: no point satisfying all constraints was found near them (residual {:.3e})",
                p.residual
            ),
        )
        .with_primary(dae.spans.equations.first().copied().unwrap_or_default(), "")
        .with_help("give start values that satisfy the constraints (see the hidden constraints in this report), or fix fewer variables");
        d.labels.clear();
        warnings.push(d);
    }
    if let Ok(checks) = &invariants {
        warnings.extend(invariant_warnings(&dae, checks));
    }
    ctx.diagnostics(&loaded.map, &warnings);
    // Constraints printed with products multiplied out (all of them for
    // JSON, the listed ones for text).
    let shown = match format {
        Format::Text => LIST_MAX,
        Format::Json => usize::MAX,
    };
    let expanded: Vec<ExprId> = reg
        .constraints
        .as_ref()
        .map(|ca| {
            ca.constraints
                .iter()
                .take(shown)
                .map(|h| expand(&mut dae.pool, h.expr, 64))
                .collect()
        })
        .unwrap_or_default();
    warn_limits(ctx, &reg.limits);
    match format {
        Format::Text => {
            let mut text = text_report(&dae, &analysis, reg, &expanded);
            invariants_section(&mut text, &dae, &invariants);
            emit(ctx, output, &text)
        }
        Format::Json => {
            // (only the models that declare invariants have the entry)
            let declared = (!dae.invariants.is_empty()).then(|| invariants_json(&dae, &invariants));
            emit_with(ctx, output, &mut |w| {
                write_json_report(w, &dae, &analysis, reg, &expanded, declared.as_ref())
            })
        }
    }
}

fn eq_name(i: usize) -> String {
    format!("F{}", i + 1)
}

fn eq_span(dae: &Dae, i: usize) -> Span {
    dae.spans.equations.get(i).copied().unwrap_or_default()
}

/// The first `max` of `items`, each shown by `show` and separated by
/// commas, then "and N more" for the rest (which are counted, not shown:
/// a model of 10⁵ unknowns formats 12 of them, not all).
fn list_with<T>(
    items: impl Iterator<Item = T>,
    max: usize,
    mut show: impl FnMut(T) -> String,
) -> String {
    let mut s = String::new();
    let mut n = 0usize;
    for item in items {
        if n < max {
            if n > 0 {
                s.push_str(", ");
            }
            s.push_str(&show(item));
        }
        n += 1;
    }
    if n > max {
        let _ = write!(s, " and {} more", n - max);
    }
    s
}

fn singular_diagnostic(dae: &Dae, sing: &StructuralSingularity) -> Diagnostic {
    let dm = &sing.dm;
    let n_eq = dae.equations.len();
    let n_un = dae.unknowns.len();
    let mut d = Diagnostic::error(
        codes::STRUCTURALLY_SINGULAR,
        format!(
            "the model is structurally singular: at most {} of its {} equations can be matched to distinct unknowns",
            dm.matching_size,
            n_eq.max(n_un)
        ),
    );
    if !dm.over_rows.is_empty() {
        d = d.with_note(format!(
            "over-determined part: equations {} constrain only the unknowns {}",
            list_with(dm.over_rows.iter(), 12, |&i| eq_name(i)),
            list_with(dm.over_cols.iter(), 12, |&j| format!(
                "`{}`",
                dae.unknowns[j].name()
            )),
        ));
        for &i in dm.over_rows.iter().take(8) {
            d = d.with_primary(eq_span(dae, i), format!("{}: over-determined", eq_name(i)));
        }
    }
    if !dm.under_cols.is_empty() {
        d = d.with_note(format!(
            "under-determined part: the unknowns {} are not determined by the equations {}",
            list_with(dm.under_cols.iter(), 12, |&j| format!(
                "`{}`",
                dae.unknowns[j].name()
            )),
            list_with(dm.under_rows.iter(), 12, |&i| eq_name(i)),
        ));
        let mut seen = std::collections::BTreeSet::new();
        for &j in dm.under_cols.iter().take(8) {
            let sp = dae.spans.unknowns.get(j).copied().unwrap_or_default();
            if seen.insert(sp) {
                d = d.with_secondary(
                    sp,
                    format!("`{}` is under-determined", dae.unknowns[j].name()),
                );
            }
        }
    }
    d.with_help("an equation is redundant or one is missing: check which unknowns each over-determined equation should determine")
}

fn singular_jacobian_diagnostic(dae: &Dae, analysis: &Analysis, reg: &Regular) -> Diagnostic {
    let names = FlatNames(dae);
    let mut d = Diagnostic::error(
        codes::SINGULAR_JACOBIAN,
        format!(
            "the Σ-Jacobian is singular at the consistent point (rank {} of {}): the Σ-method fails for this model",
            reg.success.rank.unwrap_or(0),
            dae.unknowns.len()
        ),
    );
    if let (None, Some(rows)) = (
        &reg.success.left_null_vector,
        reg.success
            .blocks
            .as_ref()
            .and_then(|b| b.singular_block.as_ref()),
    ) {
        d = d.with_note(format!(
            "the first singular diagonal block of 𝔍 (fine BTF, in solution order) holds {} equations: {}",
            rows.len(),
            list_with(rows.iter(), 12, |&i| eq_name(i))
        ));
        for &i in rows.iter().take(8) {
            let text = to_modelica(&dae.pool, analysis.residuals[i], &names);
            d = d.with_primary(eq_span(dae, i), format!("{}: {text} = 0", eq_name(i)));
        }
    }
    if let Some(u) = &reg.success.left_null_vector {
        let umax = u.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let dep: Vec<usize> = (0..u.len()).filter(|&i| u[i].abs() > 1e-9 * umax).collect();
        let combo = dep
            .iter()
            .map(|&i| format!("{:+.4}·{}", u[i] / umax, eq_name(i)))
            .collect::<Vec<_>>()
            .join(" ");
        d = d.with_note(format!("dependent rows of the Σ-Jacobian: {combo} = 0"));
        for &i in dep.iter().take(8) {
            let text = to_modelica(&dae.pool, analysis.residuals[i], &names);
            d = d.with_primary(eq_span(dae, i), format!("{}: {text} = 0", eq_name(i)));
        }
    }
    let rational = reg
        .success
        .left_null_vector
        .as_deref()
        .is_some_and(has_rational_entries);
    d = d.with_note(if rational {
        "the rows of 𝔍 involved depend on the state; their combination with these constant coefficients does not cancel the highest-order terms symbolically, so the linear-combination conversion does not apply"
    } else {
        "the rows of 𝔍 involved depend on the state and the null vector's entries are not small rationals, so the linear-combination conversion (which needs a constant combination) does not apply"
    });
    for f in &analysis.roots.fixed {
        d = d.with_note(fixed_root_text(dae, f));
    }
    for r in &analysis.roots.refused {
        d = d.with_note(root_refusal_text(dae, r));
    }
    d.with_help("reformulate the dependent equations (e.g. eliminate the cancelling terms by hand)")
}

/// A count for people: exact below 10^6, else as a power of two.
fn big_count(n: u128) -> String {
    if n < 1_000_000 {
        n.to_string()
    } else {
        format!("2^{}", 127 - n.leading_zeros())
    }
}

fn hvt_count(reg: &Regular) -> String {
    match reg.hvts.count {
        HvtCount::Exact(n) => big_count(n),
        HvtCount::AtLeast(n) => format!("at least {}", big_count(n)),
    }
}

fn text_report(dae: &Dae, analysis: &Analysis, reg: &Regular, expanded: &[ExprId]) -> String {
    let sa = &reg.sigma;
    let n = dae.unknowns.len();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "model {}: {} equations, {} unknowns",
        daec_model::ident_source(&dae.name),
        n,
        n
    );
    if !dae.aliases.is_empty() {
        let listed: Vec<String> = dae
            .aliases
            .iter()
            .map(|a| {
                format!(
                    "{} = {}{}",
                    daec_model::ident_source(&a.name),
                    if a.negated { "-" } else { "" },
                    daec_model::ident_source(&a.of)
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "Aliases eliminated before the analysis: {} ({})",
            listed.len(),
            listed.join(", ")
        );
    }
    roots_section(&mut out, dae, analysis, n);
    conversion_section(&mut out, analysis, n);
    // Σ table.
    if n <= TABLE_MAX {
        sigma_table(&mut out, dae, analysis, sa);
    } else {
        let _ = writeln!(
            out,
            "\nSignature matrix Σ: {n}×{n} with {} finite entries (too large to print; use --format json)",
            analysis.sigma.nnz()
        );
    }
    structure_section(&mut out, dae, reg);
    jacobian_section(&mut out, dae, reg);
    pantelides_section(&mut out, reg);
    constraints_section(&mut out, dae, reg, expanded);
    success_section(&mut out, dae, reg);
    let index = analysis.index().unwrap_or(sa.structural_index);
    if analysis.conversions.is_empty() {
        let _ = writeln!(out, "\nIndex: {index}");
    } else {
        let eff = analysis.effective_differentiations().unwrap_or_default();
        let _ = writeln!(
            out,
            "\nIndex: {index} (after conversion: original equations differentiated {} times; the structural index of the model as written is {})",
            offsets_text(&eff),
            analysis
                .before_conversion
                .as_ref()
                .and_then(|b| b.regular().map(|r| r.sigma.structural_index))
                .unwrap_or(sa.structural_index)
        );
    }
    out
}

/// A vector of offsets or counts: `(1, 0, 2)`, or its length and maximum
/// when it has more than 40 entries.
fn offsets_text(v: &[u32]) -> String {
    if v.len() <= 40 {
        format!(
            "({})",
            v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    } else {
        format!(
            "(… {} entries, max {})",
            v.len(),
            v.iter().max().unwrap_or(&0)
        )
    }
}

/// What fixing an unknown at a root means, for the reports of `analyze`
/// and `simulate`: "y is fixed at 1 by F2: `y * (y - 1) = 0` on this
/// branch (…)".
pub(crate) fn fixed_root_text(dae: &Dae, f: &daec_regularize::FixedRoot) -> String {
    let names = FlatNames(dae);
    let equation = dae
        .equations
        .get(f.equation)
        .map(|e| to_modelica(&dae.pool, e.residual, &names))
        .unwrap_or_default();
    let unknown = dae.unknown_name(f.unknown);
    format!(
        "{unknown} is fixed at {} by {}: `{equation} = 0` on this branch (the isolated root its consistent initial value {} selects)",
        f.value,
        eq_name(f.equation),
        f.from
    )
}

/// The `fixed_roots` entry of the JSON report: each unknown fixed (name,
/// equation, root, the value that selected it), each refusal, and the
/// Σ-method's numbers for the model as written (`as_written`).
fn fixed_roots_json(dae: &Dae, analysis: &Analysis) -> Value {
    let name = |j: usize| dae.unknown_name(j);
    let as_written = analysis
        .before_fixing
        .as_ref()
        .and_then(|b| b.regular())
        .map(|b| {
            json!({
                "structural_index": b.sigma.structural_index,
                "dof": b.sigma.dof,
                "c": b.sigma.offsets.c,
                "d": b.sigma.offsets.d,
                "rank": b.success.rank,
            })
        });
    json!({
        "as_written": as_written,
        "fixed": analysis.roots.fixed.iter().map(|f| json!({
            "unknown": name(f.unknown),
            "equation": f.equation,
            "value": f.value,
            "selected_by": f.from,
        })).collect::<Vec<_>>(),
        "refused": analysis.roots.refused.iter().map(|r| json!({
            "unknown": name(r.unknown),
            "equation": r.equation,
            "reason": r.reason,
        })).collect::<Vec<_>>(),
    })
}

/// Why an equation in one unknown did not fix it.
fn root_refusal_text(dae: &Dae, r: &daec_regularize::RootRefusal) -> String {
    let unknown = dae.unknown_name(r.unknown);
    format!(
        "{} is an equation in {unknown} alone, but {unknown} is not fixed at a root: {}",
        eq_name(r.equation),
        r.reason
    )
}

/// "The Σ-method fails on the model as written …" with the numbers of
/// its analysis `b` (`n` unknowns), before the reports of what made it
/// succeed.
fn failure_heading(out: &mut String, b: &Regular, n: usize) {
    let _ = writeln!(
        out,
        "\nThe Σ-method fails on the model as written: its Σ-Jacobian is singular at the consistent point\n  (structural index {}, Val(Σ) = {}, rank of 𝔍 = {} of {}).",
        b.sigma.structural_index,
        b.sigma.dof,
        b.success.rank.unwrap_or(0),
        n
    );
}

/// The unknowns fixed at a root of an equation in them alone, when the
/// model as written fails the Σ-method (see `daec_regularize::fix_roots`).
fn roots_section(out: &mut String, dae: &Dae, analysis: &Analysis, n: usize) {
    let Some(b) = analysis.before_fixing.as_ref().and_then(|b| b.regular()) else {
        return;
    };
    failure_heading(out, b, n);
    let _ = writeln!(
        out,
        "Unknowns fixed at an isolated root of an equation in them alone:"
    );
    for f in &analysis.roots.fixed {
        let _ = writeln!(out, "  {}", fixed_root_text(dae, f));
    }
    for r in &analysis.roots.refused {
        let _ = writeln!(out, "  {}", root_refusal_text(dae, r));
    }
    let _ = writeln!(
        out,
        "The report below is for the model reduced on this branch (the root substituted)."
    );
}

/// The linear-combination conversions applied, when the model as written
/// fails the Σ-method (Tan, Nedialkov & Pryce 2017).
fn conversion_section(out: &mut String, analysis: &Analysis, n: usize) {
    if let Some(before) = &analysis.before_conversion
        && let Some(b) = before.regular()
    {
        failure_heading(out, b, n);
        let _ = writeln!(
            out,
            "Linear-combination conversion (Tan, Nedialkov & Pryce 2017):"
        );
        for conv in &analysis.conversions {
            let combo = conv
                .combination
                .iter()
                .map(|&(i, u, k)| {
                    let d = if k == 0 {
                        String::new()
                    } else {
                        format!("^({k})")
                    };
                    format!("{u:+}·{}{d}", eq_name(i))
                })
                .collect::<Vec<_>>()
                .join(" ");
            let _ = writeln!(
                out,
                "  {} := {combo}   (Val(Σ) was {})",
                eq_name(conv.replaced),
                conv.val_before
            );
        }
        let _ = writeln!(out, "The report below is for the converted model.");
    }
}

/// Offsets, structural index, degrees of freedom, the size of the reduced
/// derivative array and the highest-value transversals.
fn structure_section(out: &mut String, dae: &Dae, reg: &Regular) {
    let sa = &reg.sigma;
    let n = dae.unknowns.len();
    let (c, d) = (&sa.offsets.c, &sa.offsets.d);
    let _ = writeln!(out, "\nOffsets: c = {}", offsets_text(c));
    let _ = writeln!(out, "         d = {}", offsets_text(d));
    let _ = writeln!(out, "Structural index ν_Σ = {}", sa.structural_index);
    let _ = writeln!(out, "Degrees of freedom Val(Σ) = Σd − Σc = {}", sa.dof);
    if sa.n_lower_derivatives == 0 {
        let _ = writeln!(
            out,
            "Reduced derivative array: {} equations; constraints m_c = n + Σc − Σd = {}",
            sa.n_derivative_array, sa.n_constraints
        );
    } else {
        // (Definition 2.3 counts the constraints of a first-order DAE: the
        // state of the first-order form includes the lower derivatives)
        let _ = writeln!(
            out,
            "Reduced derivative array: {} equations; constraints m_c = n + Σ(k_j − 1)⁺ + Σc − Σd = {} (the first-order form's: {} unknowns, k_j = max_i σ_ij)",
            sa.n_derivative_array,
            sa.n_constraints,
            sa.offsets.c.len() as i64 + sa.n_lower_derivatives
        );
    }
    // HVTs.
    let _ = writeln!(
        out,
        "\nHighest-value transversals: {} (value {})",
        hvt_count(reg),
        sa.hvt.value
    );
    if n <= TABLE_MAX {
        for (k, t) in reg.hvts.hvts.iter().enumerate() {
            let pairs = t
                .iter()
                .enumerate()
                .map(|(i, &j)| format!("({},{})", eq_name(i), dae.unknowns[j].source_name()))
                .collect::<Vec<_>>()
                .join(" ");
            let _ = writeln!(out, "  T{} = {{{pairs}}}", k + 1);
        }
    }
}

/// The Σ-Jacobian and the block triangular forms.
fn jacobian_section(out: &mut String, dae: &Dae, reg: &Regular) {
    let names = FlatNames(dae);
    let sa = &reg.sigma;
    let n = dae.unknowns.len();
    // Σ-Jacobian.
    if n <= TABLE_MAX {
        let _ = writeln!(
            out,
            "\nΣ-Jacobian 𝔍 (∂F_i/∂z_j^(σ_ij) where d_j − c_i = σ_ij):"
        );
        for e in &reg.jacobian {
            let _ = writeln!(
                out,
                "  𝔍[{},{}] = {}",
                eq_name(e.row),
                dae.unknowns[e.col].source_name(),
                to_modelica(&dae.pool, e.expr, &names)
            );
        }
    } else {
        let _ = writeln!(
            out,
            "\nΣ-Jacobian 𝔍: {} structural non-zeros",
            reg.jacobian.len()
        );
    }
    // BTF.
    let btf_line = |name: &str, b: &daec_structure::Btf| {
        format!("{name}: {} blocks, largest {}", b.len(), b.max_block_size())
    };
    let _ = writeln!(out, "\nBlock triangular forms:");
    let _ = writeln!(out, "  {}", btf_line("coarse", &sa.coarse_btf));
    let _ = writeln!(out, "  {}", btf_line("fine", &sa.fine_btf));
    if n <= TABLE_MAX {
        for (k, b) in sa.fine_btf.blocks().enumerate() {
            let rows = b
                .rows
                .iter()
                .map(|&i| eq_name(i as usize))
                .collect::<Vec<_>>()
                .join(", ");
            let cols = b
                .cols
                .iter()
                .map(|&j| dae.unknowns[j as usize].source_name())
                .collect::<Vec<_>>()
                .join(", ");
            let _ = writeln!(out, "    fine block {}: {{{rows}}} → {{{cols}}}", k + 1);
        }
    }
}

/// Pantelides' differentiations, compared with the offsets `c`.
fn pantelides_section(out: &mut String, reg: &Regular) {
    let c = &reg.sigma.offsets.c;
    // Pantelides.
    match &reg.pantelides {
        Ok(p) => {
            let agree = p.differentiations == *c;
            let _ = writeln!(
                out,
                "\nPantelides: differentiations {} — {}",
                offsets_text(&p.differentiations),
                if agree {
                    "equal to c (Pryce 2001, Thm. 5.8)"
                } else {
                    "DIFFERENT from c"
                }
            );
        }
        Err(e) => {
            let _ = writeln!(out, "\nPantelides: {e}");
        }
    }
}

/// The constraints by level, each with the equation it comes from.
fn constraints_section(out: &mut String, dae: &Dae, reg: &Regular, expanded: &[ExprId]) {
    let names = FlatNames(dae);
    // Hidden constraints.
    if let Some(ca) = &reg.constraints {
        let _ = writeln!(
            out,
            "\nConstraints 0 = H(t, z) by level ({} found, ν_c = {}):",
            ca.constraints.len(),
            ca.max_level().map_or("-".to_string(), |l| l.to_string())
        );
        for (k, h) in ca.constraints.iter().enumerate() {
            if k == LIST_MAX {
                let _ = writeln!(
                    out,
                    "  … and {} more (use --format json)",
                    ca.constraints.len() - LIST_MAX
                );
                break;
            }
            let kind = if h.level == 0 { "explicit" } else { "hidden" };
            let _ = writeln!(
                out,
                "  level {} ({kind}, from {}{}): 0 = {}",
                h.level,
                eq_name(h.source.0),
                if h.source.1 == 0 {
                    String::new()
                } else {
                    format!("^({})", h.source.1)
                },
                to_modelica(&dae.pool, expanded[k], &names)
            );
        }
        if !ca.is_complete() {
            let rows = list_with(ca.unresolved_rows.iter(), 20, |&(i, k)| {
                format!("{}^({k})", eq_name(i))
            });
            let _ = writeln!(
                out,
                "  not eliminated symbolically (kept in derivative-array form): {rows}"
            );
        }
    }
}

/// The success check (steinbrecher2016 Algorithm 2.1, step 6): the
/// consistent point, the start values it moved, and 𝔍 there.
fn success_section(out: &mut String, dae: &Dae, reg: &Regular) {
    let n = dae.unknowns.len();
    // Success check.
    let _ = writeln!(out, "\nSuccess check (Algorithm 2.1, step 6):");
    let s = &reg.success;
    if let Some(why) = &s.skipped {
        let _ = writeln!(out, "  not performed: {why}");
    }
    if let Some(p) = &s.point {
        if p.converged {
            let _ = writeln!(
                out,
                "  consistent point found from the start values ({} Gauss–Newton iterations, start residual {}, residual {})",
                p.iterations,
                fmt_residual(p.initial_residual),
                fmt_residual(p.residual)
            );
        } else {
            let _ = writeln!(
                out,
                "  NO consistent point near the start values: residual {:.3e} after {} iterations (worst: constraint {})",
                p.residual,
                p.iterations,
                p.worst_equation.map_or("-".into(), |w| (w + 1).to_string())
            );
        }
        let moved = dae
            .unknowns
            .iter()
            .zip(&p.z)
            .filter(|(u, z)| (u.start().unwrap_or(0.0) - **z).abs() > 1e-9 * (1.0 + z.abs()));
        // (an item's text is never empty: an empty list is no line)
        let shown = list_with(moved, 12, |(u, z)| {
            format!(
                "{} {} → {}",
                u.source_name(),
                fmt_num(u.start().unwrap_or(0.0)),
                fmt_num(*z)
            )
        });
        if !shown.is_empty() {
            let _ = writeln!(out, "  start values moved: {shown}");
        }
    }
    if let (Some(b), Some(rank)) = (&s.blocks, s.rank) {
        // the block check of large models
        let _ = writeln!(
            out,
            "  𝔍 {} at the consistent point (rank {rank} of {n}), checked block by block on the fine BTF: {} diagonal blocks, the largest of order {}; {} by sparse LU (COLAMD, partial pivoting, pivots ≤ 1e-10 of the equilibrated block count as zero), the others by dense LU with complete pivoting",
            if rank == n { "nonsingular" } else { "SINGULAR" },
            b.blocks,
            b.largest,
            b.sparse_blocks,
        );
        let _ = writeln!(
            out,
            "  {}",
            if s.succeeded() {
                "the Σ-method succeeds: the model is structurally regular"
            } else {
                "the Σ-method does not succeed at this point"
            }
        );
    }
    if let (Some(det), Some(rank)) = (s.determinant, s.rank) {
        let _ = writeln!(out, "  det 𝔍 = {} (rank {rank} of {n})", fmt_num(det));
        let _ = writeln!(
            out,
            "  {}",
            if s.succeeded() {
                "the Σ-method succeeds: the model is structurally regular"
            } else {
                "the Σ-method does not succeed at this point"
            }
        );
    }
}

/// Writes the Σ table of a small model: a column per unknown headed by
/// its name as source (quoted when it is not a plain identifier, so that
/// no name breaks a line), or, when a name is longer than [`COLUMN_MAX`]
/// characters, by
/// `z1`, `z2`, … with a key of the full names below the table (the width
/// of every column comes from its heading, so no name can widen the table
/// beyond `COLUMN_MAX`).
fn sigma_table(out: &mut String, dae: &Dae, analysis: &Analysis, sa: &SigmaAnalysis) {
    let n = dae.unknowns.len();
    let keyed = dae
        .unknowns
        .iter()
        .any(|u| u.source_name().chars().count() > COLUMN_MAX);
    let heading = |j: usize| {
        if keyed {
            format!("z{}", j + 1)
        } else {
            dae.unknowns[j].source_name()
        }
    };
    let width = (0..n)
        .map(|j| heading(j).chars().count())
        .max()
        .unwrap_or(1)
        .clamp(3, COLUMN_MAX)
        + 1;
    let _ = writeln!(
        out,
        "\nSignature matrix Σ (rows: equations, columns: unknowns; * marks the HVT, - is −∞):"
    );
    let mut header = format!("{:>5} ", "");
    for j in 0..n {
        let _ = write!(header, " {:>width$} ", heading(j));
    }
    let _ = writeln!(out, "{header} |  c");
    for (i, (&ci, &hvt_col)) in sa.offsets.c.iter().zip(&sa.hvt.col_of_row).enumerate() {
        let mut line = format!("{:>5} ", eq_name(i));
        for j in 0..n {
            let (cell, mark) = match analysis.sigma.get(i, j) {
                Some(s) if hvt_col == j => (s.to_string(), '*'),
                Some(s) => (s.to_string(), ' '),
                None => ("-".to_string(), ' '),
            };
            let _ = write!(line, " {cell:>width$}{mark}");
        }
        let _ = writeln!(out, "{line} |  {ci}");
    }
    let mut dl = format!("{:>5} ", "d");
    for &dj in &sa.offsets.d {
        let _ = write!(dl, " {dj:>width$} ");
    }
    let _ = writeln!(out, "{dl}");
    if keyed {
        let _ = writeln!(
            out,
            "(columns by number: a name is longer than {COLUMN_MAX} characters)"
        );
        for (j, u) in dae.unknowns.iter().enumerate() {
            let _ = writeln!(out, "  z{} = {}", j + 1, u.source_name());
        }
    }
}

/// A residual, with round-off shown as such (so that reports do not change
/// with the last bits of a computation).
fn fmt_residual(r: f64) -> String {
    if r < 1e-12 {
        "< 1e-12".to_string()
    } else {
        format!("{r:.3e}")
    }
}

fn fmt_num(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    let r = (x * 1e9).round() / 1e9;
    if r != 0.0 && (r.abs() >= 1e-4 && r.abs() < 1e9) {
        let s = format!("{r}");
        if s.len() <= 14 {
            return s;
        }
    }
    format!("{x:.6e}")
}

/// A warning on standard error for every size limit that applied.
pub(crate) fn warn_limits(ctx: &mut Ctx<'_, '_>, limits: &[Limit]) {
    for l in limits {
        let line = format!("warning: {}\n", l.message());
        let _ = std::io::Write::write_all(&mut ctx.io.stderr, line.as_bytes());
    }
}

/// The `limits` field of the JSON reports: one object per limit that
/// applied.
pub(crate) fn limits_json(limits: &[Limit]) -> Vec<Value> {
    limits
        .iter()
        .map(|l| {
            json!({
                "stage": l.stage,
                "limit": l.limit,
                "size": l.size,
                "what_was_skipped": l.what_was_skipped,
            })
        })
        .collect()
}

/// The success check in the JSON report (keys in sorted order).
#[derive(Serialize)]
struct SuccessJson<'a> {
    consistent: Option<bool>,
    determinant: Option<f64>,
    method: Option<&'static str>,
    performed: bool,
    point: Option<&'a [f64]>,
    rank: Option<usize>,
    residual: Option<f64>,
    skipped_because: Option<&'a str>,
    succeeded: bool,
}

/// The canonical offsets in the JSON report.
#[derive(Serialize)]
struct OffsetsJson<'a> {
    c: &'a [u32],
    d: &'a [u32],
}

/// Pantelides' differentiations in the JSON report.
#[derive(Serialize)]
struct PantelidesJson<'a> {
    differentiations: &'a [u32],
    equals_c: bool,
}

/// The blocks of a block triangular form in the JSON report.
struct BlocksJson<'a>(&'a daec_structure::Btf);

impl Serialize for BlocksJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(
            self.0
                .blocks()
                .map(|bl| json!({"equations": bl.rows, "unknowns": bl.cols})),
        )
    }
}

/// Writes the JSON report to `w` as it is produced (keys in sorted order,
/// see [`crate::json`]).
fn write_json_report(
    w: &mut dyn std::io::Write,
    dae: &Dae,
    analysis: &Analysis,
    reg: &Regular,
    expanded: &[ExprId],
    invariants: Option<&Value>,
) -> std::io::Result<()> {
    let names = FlatNames(dae);
    let sa = &reg.sigma;
    let structural_index = analysis
        .before_conversion
        .as_ref()
        .and_then(|b| b.regular().map(|r| r.sigma.structural_index))
        .unwrap_or(sa.structural_index);
    let s = &reg.success;
    let success = SuccessJson {
        consistent: s.point.as_ref().map(|p| p.converged),
        determinant: s.determinant,
        method: s.order.map(|_| {
            if s.blocks.is_some() {
                "block LU on the fine BTF"
            } else {
                "dense LU with complete pivoting"
            }
        }),
        performed: s.skipped.is_none(),
        point: s.point.as_ref().map(|p| p.z.as_slice()),
        rank: s.rank,
        residual: s.point.as_ref().map(|p| p.residual),
        skipped_because: s.skipped.as_deref(),
        succeeded: s.succeeded(),
    };
    let constraints = Array(|| {
        reg.constraints
            .iter()
            .flat_map(|ca| ca.constraints.iter().enumerate())
            .map(|(k, h)| {
                json!({
                    "level": h.level,
                    "equation": format!("0 = {}", to_modelica(&dae.pool, expanded[k], &names)),
                    "source": {"equation": h.source.0, "differentiations": h.source.1},
                })
            })
    });
    let conversions = Array(|| {
        analysis.conversions.iter().map(|c| {
            json!({
                "replaced": c.replaced,
                "combination": c.combination.iter().map(|&(i, u, k)| json!({"equation": i, "coefficient": u, "differentiations": k})).collect::<Vec<_>>(),
                "dof_before": c.val_before,
            })
        })
    });
    let hvt_count = match reg.hvts.count {
        HvtCount::Exact(n) => u64::try_from(n).map_or_else(|_| json!(n as f64), |n| json!(n)),
        HvtCount::AtLeast(n) => json!({"at_least": n as f64}),
    };
    let pantelides = match &reg.pantelides {
        Ok(p) => serde_json::to_value(PantelidesJson {
            differentiations: &p.differentiations,
            equals_c: p.differentiations == sa.offsets.c,
        })
        .unwrap_or_default(),
        Err(e) => json!({"error": e.to_string()}),
    };
    write_object(w, |m| {
        m.serialize_entry("all_hvts", &reg.hvts.hvts)?;
        m.serialize_entry("blocks", &BlocksJson(&sa.fine_btf))?;
        m.serialize_entry("coarse_blocks", &BlocksJson(&sa.coarse_btf))?;
        m.serialize_entry("conversions", &conversions)?;
        m.serialize_entry("dof", &sa.dof)?;
        m.serialize_entry(
            "equations",
            &Array(|| {
                analysis
                    .residuals
                    .iter()
                    .map(|&r| format!("0 = {}", to_modelica(&dae.pool, r, &names)))
            }),
        )?;
        // (only the models whose unknowns were fixed at a root have the entry)
        if !analysis.roots.fixed.is_empty() || !analysis.roots.refused.is_empty() {
            m.serialize_entry("fixed_roots", &fixed_roots_json(dae, analysis))?;
        }
        m.serialize_entry("hidden_constraints", &constraints)?;
        m.serialize_entry(
            "hvt",
            &Array(|| sa.hvt.col_of_row.iter().enumerate().map(|(i, &j)| (i, j))),
        )?;
        m.serialize_entry("hvt_count", &hvt_count)?;
        m.serialize_entry("index", &analysis.index().unwrap_or(sa.structural_index))?;
        if let Some(invariants) = invariants {
            m.serialize_entry("invariants", invariants)?;
        }
        m.serialize_entry("limits", &limits_json(&reg.limits))?;
        m.serialize_entry("model", &dae.name)?;
        m.serialize_entry("n_constraints", &sa.n_constraints)?;
        m.serialize_entry(
            "offsets",
            &OffsetsJson {
                c: &sa.offsets.c,
                d: &sa.offsets.d,
            },
        )?;
        m.serialize_entry("pantelides", &pantelides)?;
        m.serialize_entry("sigma", &Array(|| analysis.sigma.iter()))?;
        m.serialize_entry(
            "sigma_jacobian",
            &Array(|| {
                reg.jacobian
                    .iter()
                    .map(|e| (e.row, e.col, to_modelica(&dae.pool, e.expr, &names)))
            }),
        )?;
        m.serialize_entry("structural_index", &structural_index)?;
        m.serialize_entry("success_check", &success)?;
        m.serialize_entry("unknowns", &Array(|| dae.unknowns.iter().map(|u| u.name())))
    })
}

/// The declared invariant `k` as `lhs = rhs`.
fn invariant_text(dae: &Dae, k: usize) -> String {
    let names = FlatNames(dae);
    let eq = &dae.invariants[k];
    format!(
        "{} = {}",
        to_modelica(&dae.pool, eq.lhs, &names),
        to_modelica(&dae.pool, eq.rhs, &names)
    )
}

/// A warning per declared invariant that does not hold at the consistent
/// initial point or whose time derivative does not vanish along the DAE.
fn invariant_warnings(dae: &Dae, checks: &[InvariantCheck]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for c in checks {
        let span = dae
            .spans
            .invariants
            .get(c.invariant)
            .copied()
            .unwrap_or_default();
        let text = invariant_text(dae, c.invariant);
        if !c.holds {
            out.push(
                Diagnostic::warning(
                    codes::INVARIANT,
                    format!(
                        "the invariant `{text}` does not hold at the consistent initial point (residual {:.3e})",
                        c.residual
                    ),
                )
                .with_primary(span, "declared an invariant")
                .with_help("`daec simulate` refuses it: correct the invariant or the initial values"),
            );
        }
        if let DerivativeCheck::DoesNotVanish {
            value, relative, ..
        } = &c.derivative
        {
            out.push(
                Diagnostic::warning(
                    codes::INVARIANT,
                    format!(
                        "the time derivative of the invariant `{text}` does not vanish along the DAE: d/dt = {value:.3e} ({relative:.1e} of the size of its terms)"
                    ),
                )
                .with_primary(span, "not an invariant of the equations")
                .with_note("checked with the derivatives the Σ-method solves for, at points of the manifold of the constraints and invariants"),
            );
        }
    }
    out
}

/// The derivative check in words.
fn derivative_text(d: &DerivativeCheck) -> String {
    match d {
        DerivativeCheck::Vanishes { points, largest } => format!(
            "d/dt along the DAE vanishes at {points} points of the manifold (largest relative {})",
            fmt_residual(*largest)
        ),
        DerivativeCheck::DoesNotVanish {
            value, relative, ..
        } => format!("d/dt along the DAE does NOT vanish: {value:.3e} ({relative:.1e} relative)"),
        DerivativeCheck::NotChecked(why) => format!("d/dt not checked: {why}"),
    }
}

/// The declared invariants: each with its residual at the consistent
/// initial point and the check of its time derivative.
fn invariants_section(out: &mut String, dae: &Dae, checks: &Result<Vec<InvariantCheck>, String>) {
    if dae.invariants.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nInvariants (annotation(__daec(invariant = true)); not counted in the system): {}",
        dae.invariants.len()
    );
    for k in 0..dae.invariants.len() {
        let _ = writeln!(out, "  I{}: {}", k + 1, invariant_text(dae, k));
    }
    match checks {
        Err(e) => {
            let _ = writeln!(out, "  not checked: {e}");
        }
        Ok(checks) => {
            for c in checks {
                let _ = writeln!(
                    out,
                    "  I{}: residual at the consistent initial point {}; {}",
                    c.invariant + 1,
                    fmt_residual(c.residual.abs()),
                    derivative_text(&c.derivative)
                );
            }
        }
    }
}

/// The `invariants` entry of the JSON report.
fn invariants_json(dae: &Dae, checks: &Result<Vec<InvariantCheck>, String>) -> Value {
    let check = |k: usize| -> Value {
        let Ok(checks) = checks else {
            return json!({"checked": false});
        };
        let Some(c) = checks.iter().find(|c| c.invariant == k) else {
            return json!({"checked": false});
        };
        let derivative = match &c.derivative {
            DerivativeCheck::Vanishes { points, largest } => {
                json!({"vanishes": true, "points": points, "largest_relative": largest})
            }
            DerivativeCheck::DoesNotVanish {
                value,
                relative,
                at,
            } => json!({
                "vanishes": false,
                "value": value,
                "relative": relative,
                "at": at.iter().map(|(n, x)| json!([n, x])).collect::<Vec<_>>(),
            }),
            DerivativeCheck::NotChecked(why) => json!({"vanishes": null, "not_checked": why}),
        };
        json!({"checked": true, "residual": c.residual, "derivative": derivative})
    };
    Value::Array(
        (0..dae.invariants.len())
            .map(|k| {
                let mut v = json!({"equation": invariant_text(dae, k)});
                if let (Value::Object(m), Value::Object(c)) = (&mut v, check(k)) {
                    m.extend(c);
                }
                v
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_shows_its_first_items_and_counts_the_rest() {
        let mut shown = 0;
        let text = list_with(1..=15, 12, |k| {
            shown += 1;
            format!("F{k}")
        });
        assert_eq!(
            text,
            "F1, F2, F3, F4, F5, F6, F7, F8, F9, F10, F11, F12 and 3 more"
        );
        // the rest is counted, not formatted
        assert_eq!(shown, 12);
        assert_eq!(list_with(1..=3, 12, |k| format!("x{k}")), "x1, x2, x3");
        assert_eq!(
            list_with(1..=12, 12, |k| k.to_string())
                .matches(", ")
                .count(),
            11
        );
        assert_eq!(
            list_with(std::iter::empty::<u32>(), 12, |k| k.to_string()),
            ""
        );
    }
}
