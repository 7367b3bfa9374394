//! `daec regularize`: a regularized formulation of the model
//! (steinbrecher2016 §3: StE, ADA, HiC; the baselines DD, GGL, DI1) as a
//! readable listing, JSON, a `.dae` model (square forms) or Rust source.

use crate::{Ctx, EXIT_MODEL, ModelArgs, emit, load};
use clap::{Args, ValueEnum};
use daec_model::Dae;
use daec_regularize::{
    AnalyzeOptions, Form, Formulation, RegularizeOptions, RowKind, UnknownKind, analyze, regularize,
};
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
    let text = match args.emit {
        Emit::Text => f.to_text(&dae),
        Emit::Json => {
            let v = to_json(&dae, &f, &added);
            let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
            s.push('\n');
            s
        }
        Emit::Modelica => daec_model::to_dae_text(&f.to_dae(&dae)),
        Emit::Rust => {
            let params = dae.named_parameters();
            let name = dae.name.clone();
            match daec_regularize::emit_rust::emit_rust_formulation(
                &mut dae.pool,
                &f,
                &name,
                &params,
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

fn to_json(dae: &Dae, f: &Formulation, first_order: &[usize]) -> Value {
    let n = f
        .unknowns
        .iter()
        .filter(|u| matches!(u.kind, UnknownKind::Original(_)))
        .count();
    let unknowns: Vec<&str> = f.unknowns.iter().map(|u| u.name.as_str()).collect();
    let stands_for: Vec<Value> = f
        .unknowns
        .iter()
        .map(|u| match u.kind {
            UnknownKind::Original(_) => Value::Null,
            UnknownKind::Derivative { unknown, order } => json!({
                "derivative_of": f.unknowns.get(unknown).map(|v| v.name.as_str()),
                "order": order,
            }),
            UnknownKind::Multiplier { constraint } => json!({ "multiplier_of_row": constraint }),
            UnknownKind::Velocity { unknown } => json!({ "velocity_of": unknown }),
        })
        .collect();
    let equations: Vec<String> = (0..f.equations.len())
        .map(|r| f.equation_text(dae, r))
        .collect();
    let levels: Vec<Value> = f
        .equations
        .iter()
        .map(|e| match e.kind {
            RowKind::Differential => Value::Null,
            RowKind::Constraint { level } => json!(level),
        })
        .collect();
    let sources: Vec<Value> = f
        .equations
        .iter()
        .map(|e| json!({"equation": e.source.equation, "derivative": e.source.derivative}))
        .collect();
    let hvt = f.hvt.as_ref().map(|h| {
        h.iter()
            .enumerate()
            .map(|(j, &i)| {
                json!({"unknown": dae.unknowns.get(j).map(|u| u.name.as_str()), "equation": i})
            })
            .collect::<Vec<_>>()
    });
    json!({
        "model": dae.name,
        "form": f.form.name(),
        "square": f.equations.len() == f.unknowns.len(),
        "n_equations": f.equations.len(),
        "n_unknowns": f.unknowns.len(),
        "unknowns": unknowns,
        "original_unknowns": n,
        "stands_for": stands_for,
        "first_order_reduction": first_order
            .iter()
            .map(|&j| dae.unknowns[j].name.as_str())
            .collect::<Vec<_>>(),
        "equations": equations,
        "differential_rows": f.differential_rows(),
        "constraint_rows": f.constraint_rows(),
        "levels": levels,
        "sources": sources,
        "duplicate_rows": f.duplicate_rows(),
        "hvt": hvt,
    })
}
