//! `daec regularize`: a regularized formulation of the model
//! (steinbrecher2016 §3: StE, ADA, HiC; the baselines DD, GGL, DI1) as a
//! readable listing, JSON, a `.dae` model (square forms) or Rust source.

use crate::commands::analyze::limits_json;
use crate::json::{Array, write_object};
use crate::{Ctx, EXIT_MODEL, ModelArgs, emit, emit_with, load};
use clap::{Args, ValueEnum};
use daec_model::Dae;
use daec_regularize::{
    AnalyzeOptions, Form, Formulation, Limit, RegularizeOptions, RowKind, UnknownKind, analyze,
    regularize,
};
use serde::ser::SerializeMap;
use serde_json::{Value, json};
use std::path::PathBuf;

/// Output formats of `daec regularize`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Emit {
    /// A readable listing: unknowns and equations with their kinds.
    Text,
    /// JSON: form, unknowns, equations, differential and constraint rows.
    Json,
    /// A flat `.dae` model (square forms only: ste, dd, ggl, di1).
    Modelica,
    /// A Rust module implementing `daec_solve::QuasiLinearDae`.
    Rust,
}

/// Options of `daec regularize`.
#[derive(Args, Debug, Clone)]
pub(crate) struct RegularizeArgs {
    #[command(flatten)]
    model: ModelArgs,
    /// The formulation: ste, ada, hic, dd, ggl, di1, or index3 (the DAE as written).
    #[arg(long, value_name = "FORM")]
    form: String,
    /// What to write.
    #[arg(long, value_enum, default_value_t = Emit::Text)]
    emit: Emit,
    /// Write to this file instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,
}

/// The forms `--form` accepts: the regularizations and `index3` (the DAE
/// as written).
fn form_list() -> String {
    let mut names = Form::ALL.map(Form::name).to_vec();
    names.push(Form::Index3.name());
    names.join(", ")
}

/// `daec regularize MODEL --form F [--emit text|json|modelica|rust] [-o FILE]`.
pub(crate) fn regularize_command(ctx: &mut Ctx<'_, '_>, args: &RegularizeArgs) -> Result<(), i32> {
    let Some(form) = Form::parse(args.form.trim()) else {
        return Err(ctx.usage_error(&format!(
            "unknown form `{}`: the forms are {}",
            args.form,
            form_list()
        )));
    };
    if args.emit == Emit::Modelica && !form.is_square() {
        return Err(ctx.usage_error(&format!(
            "the {} formulation is overdetermined (more equations than unknowns), so it is not a valid flat Modelica model; use --emit json or --emit rust, or a square form (ste, dd, ggl, di1) for --emit modelica",
            form.name().to_ascii_uppercase()
        )));
    }
    crate::files::check_outputs(ctx, &args.model.model, &[("-o", args.output.as_deref())])?;
    let loaded = load(ctx, &args.model)?;
    if matches!(args.emit, Emit::Modelica | Emit::Rust) {
        let what = format!(
            "--emit {}",
            if args.emit == Emit::Rust {
                "rust"
            } else {
                "modelica"
            }
        );
        crate::refuse_calls(ctx, &loaded.map, &loaded.dae, &what)?;
    }
    let mut dae = loaded.dae;
    // Formulations are built for first-order DAEs (as `daec simulate` does).
    let added = daec_sim::reduce_to_first_order(&mut dae);
    let analysis = analyze(&mut dae, &AnalyzeOptions::default());
    let f = match regularize(&mut dae, &analysis, form, &RegularizeOptions::default()) {
        Ok(f) => f,
        Err(e) => {
            let _ = writeln!(ctx.io.stderr, "error: {e}");
            return Err(EXIT_MODEL);
        }
    };
    crate::check_derivative_limit(ctx, &loaded.map, &dae)?;
    let mut limits = analysis
        .regular()
        .map_or_else(Vec::new, |r| r.limits.clone());
    limits.extend(f.limits.iter().cloned());
    crate::commands::analyze::warn_limits(ctx, &limits);
    let text = match args.emit {
        Emit::Text => f.to_text(&dae),
        Emit::Json => {
            return emit_with(ctx, args.output.as_deref(), &mut |w| {
                write_json(w, &dae, &f, &added, &limits)
            });
        }
        Emit::Modelica => daec_model::to_dae_text(&f.to_dae(&dae)),
        Emit::Rust => {
            let params = dae.named_parameters();
            let name = dae.name.clone();
            // (an invariant must be a function of t and the unknowns)
            let invariants = match daec_sim::invariant_rows(&dae) {
                Ok(rows) => rows,
                Err(e) => {
                    let _ = writeln!(ctx.io.stderr, "error: {e}");
                    return Err(EXIT_MODEL);
                }
            };
            match daec_regularize::emit_rust::emit_rust_formulation(
                &mut dae.pool,
                &f,
                &name,
                &params,
                &invariants,
            ) {
                Ok(s) => s,
                Err(e) => {
                    let _ = writeln!(ctx.io.stderr, "error: {e}");
                    return Err(EXIT_MODEL);
                }
            }
        }
    };
    emit(ctx, args.output.as_deref(), &text)
}

/// Writes the formulation as JSON to `w` as it is produced (keys in
/// sorted order, see [`crate::json`]).
fn write_json(
    w: &mut dyn std::io::Write,
    dae: &Dae,
    f: &Formulation,
    first_order: &[usize],
    limits: &[Limit],
) -> std::io::Result<()> {
    let n = f
        .unknowns
        .iter()
        .filter(|u| matches!(u.kind, UnknownKind::Original(_)))
        .count();
    let stands_for = Array(|| {
        f.unknowns.iter().map(|u| match u.kind {
            UnknownKind::Original(_) => Value::Null,
            UnknownKind::Derivative { unknown, order } => json!({
                "derivative_of": f.unknowns.get(unknown).map(|v| v.name.as_str()),
                "order": order,
            }),
            UnknownKind::Multiplier { constraint } => json!({ "multiplier_of_row": constraint }),
            UnknownKind::Velocity { unknown } => json!({ "velocity_of": unknown }),
        })
    });
    let levels = Array(|| {
        f.equations.iter().map(|e| match e.kind {
            RowKind::Differential => None,
            RowKind::Constraint { level } => Some(level),
        })
    });
    let sources = Array(|| {
        f.equations
            .iter()
            .map(|e| json!({"equation": e.source.equation, "derivative": e.source.derivative}))
    });
    let hvt = f.hvt.as_ref().map(|h| {
        Array(move || {
            h.iter().enumerate().map(
                |(j, &i)| json!({"unknown": dae.unknowns.get(j).map(|u| u.name()), "equation": i}),
            )
        })
    });
    write_object(w, |m| {
        m.serialize_entry("constraint_rows", &f.constraint_rows())?;
        m.serialize_entry("differential_rows", &f.differential_rows())?;
        m.serialize_entry("duplicate_rows", &f.duplicate_rows())?;
        m.serialize_entry(
            "equations",
            &Array(|| (0..f.equations.len()).map(|r| f.equation_text(dae, r))),
        )?;
        m.serialize_entry(
            "first_order_reduction",
            &Array(|| first_order.iter().map(|&j| dae.unknowns[j].name())),
        )?;
        m.serialize_entry("form", f.form.name())?;
        m.serialize_entry("hvt", &hvt)?;
        // (only the models that declare invariants have the entry)
        if !dae.invariants.is_empty() {
            m.serialize_entry(
                "invariants",
                &Array(|| {
                    (0..dae.invariants.len()).map(|k| {
                        json!({
                            "equation": format!("0 = {}", f.invariant_text(dae, k)),
                            "description": dae.invariants[k].description.as_deref(),
                            "enforcement": f.invariant_enforcement(),
                        })
                    })
                }),
            )?;
        }
        m.serialize_entry("levels", &levels)?;
        m.serialize_entry("limits", &limits_json(limits))?;
        m.serialize_entry("model", &dae.name)?;
        m.serialize_entry("n_equations", &f.equations.len())?;
        m.serialize_entry("n_unknowns", &f.unknowns.len())?;
        m.serialize_entry("original_unknowns", &n)?;
        m.serialize_entry("sources", &sources)?;
        m.serialize_entry("square", &(f.equations.len() == f.unknowns.len()))?;
        m.serialize_entry("stands_for", &stands_for)?;
        m.serialize_entry(
            "unknowns",
            &Array(|| f.unknowns.iter().map(|u| u.name.as_str())),
        )
    })
}
