//! `daec flatten`: the flat scalar model as `.dae` text or JSON.

use crate::json::{Array, write_object};
use crate::{Ctx, Format, ModelArgs, emit_text, emit_with, load};
use daec_model::{Dae, FlatNames, write_dae_text};
use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::json;
use std::collections::BTreeMap;
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
    if matches!(format, Format::Text) {
        crate::refuse_calls(ctx, &loaded.map, dae, "a flat `.dae` model")?;
    }
    match format {
        Format::Text => emit_text(ctx, output, &mut |out| write_dae_text(dae, out)),
        Format::Json => emit_with(ctx, output, &mut |w| write_json(w, dae)),
    }
}

/// The experiment settings in the JSON output (keys in sorted order).
#[derive(Serialize)]
struct ExperimentJson {
    interval: Option<f64>,
    start_time: Option<f64>,
    stop_time: Option<f64>,
    tolerance: Option<f64>,
}

/// Writes the flat model as JSON to `w` as it is produced (keys in sorted
/// order, see [`crate::json`]).
fn write_json(w: &mut dyn std::io::Write, dae: &Dae) -> std::io::Result<()> {
    let names = FlatNames(dae);
    // the parameters by name, a later one of the same name replacing an
    // earlier one (as in a JSON object)
    let params: BTreeMap<&str, f64> = dae
        .parameters
        .iter()
        .map(|p| (p.name.as_str(), p.value))
        .collect();
    let x = &dae.experiment;
    let experiment = ExperimentJson {
        interval: x.interval,
        start_time: x.start_time,
        stop_time: x.stop_time,
        tolerance: x.tolerance,
    };
    write_object(w, |m| {
        m.serialize_entry(
            "equations",
            &Array(|| text_iter(dae, &names, &dae.equations)),
        )?;
        m.serialize_entry("experiment", &experiment)?;
        m.serialize_entry(
            "initial_equations",
            &Array(|| text_iter(dae, &names, &dae.initial_equations)),
        )?;
        m.serialize_entry("model", &dae.name)?;
        m.serialize_entry("parameters", &params)?;
        m.serialize_entry(
            "unknowns",
            &Array(|| {
                dae.unknowns
                    .iter()
                    .map(|u| json!({"name": u.name(), "start": u.start(), "fixed": u.fixed}))
            }),
        )
    })
}

/// The equations of `list` as `lhs = rhs` text, one at a time.
fn text_iter<'a>(
    dae: &'a Dae,
    names: &'a FlatNames<'a>,
    list: &'a [daec_model::Equation],
) -> impl Iterator<Item = String> + 'a {
    list.iter().map(move |e| {
        format!(
            "{} = {}",
            daec_expr::to_modelica(&dae.pool, e.lhs, names),
            daec_expr::to_modelica(&dae.pool, e.rhs, names)
        )
    })
}
