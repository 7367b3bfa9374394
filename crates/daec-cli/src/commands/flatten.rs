//! `daec flatten`: the flat scalar model as `.dae` text or JSON.

use crate::{Ctx, Format, ModelArgs, emit, load};
use daec_model::{FlatNames, to_dae_text};
use serde_json::{Map, Value, json};
use std::path::Path;

/// `daec flatten MODEL [--format text|json] [-o FILE]`.
pub(crate) fn flatten(
    ctx: &mut Ctx<'_, '_>,
    args: &ModelArgs,
    format: Format,
    output: Option<&Path>,
) -> Result<(), i32> {
    crate::files::check_outputs(ctx, &args.model, &[("-o", output)])?;
    let loaded = load(ctx, args)?;
    let dae = &loaded.dae;
    let text = match format {
        Format::Text => to_dae_text(dae),
        Format::Json => {
            let names = FlatNames(dae);
            let unknowns: Vec<Value> = dae
                .unknowns
                .iter()
                .map(|u| json!({"name": u.name, "start": u.start, "fixed": u.fixed}))
                .collect();
            let text = |list: &[daec_model::Equation]| -> Vec<Value> {
                list.iter()
                    .map(|e| {
                        Value::String(format!(
                            "{} = {}",
                            daec_expr::to_modelica(&dae.pool, e.lhs, &names),
                            daec_expr::to_modelica(&dae.pool, e.rhs, &names)
                        ))
                    })
                    .collect()
            };
            let equations = text(&dae.equations);
            let initial = text(&dae.initial_equations);
            let mut params = Map::new();
            for p in &dae.parameters {
                params.insert(p.name.clone(), json!(p.value));
            }
            let x = &dae.experiment;
            let doc = json!({
                "model": dae.name,
                "unknowns": unknowns,
                "equations": equations,
                "initial_equations": initial,
                "parameters": params,
                "experiment": {
                    "start_time": x.start_time,
                    "stop_time": x.stop_time,
                    "tolerance": x.tolerance,
                    "interval": x.interval,
                },
            });
            let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
            s.push('\n');
            s
        }
    };
    emit(ctx, output, &text)
}
