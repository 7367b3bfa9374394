//! FMI 2.0 export of daec models (`daec fmu`): Co-Simulation, Model
//! Exchange or both.
//!
//! An FMU made by daec carries the flat model text
//! (`resources/model.dae`), the export options (`resources/options.json`:
//! formulation, method, the model description's `guid`) and this crate
//! built as a shared library (`binaries/linux64/<modelIdentifier>.so`).
//! The library exports the FMI 2.0 functions (`ffi`, the C ABI); at
//! `fmi2Instantiate` it reads the model from the resources and at
//! `fmi2EnterInitializationMode` runs daec's pipeline — lowering with the
//! parameters the master set, analysis, the chosen formulation, the
//! consistent initial point — and `fmi2DoStep` integrates with daec's own
//! simulator (`engine`). For Model Exchange (`me`) the importer's
//! integrator steps the states of an index-≤ 1 model, and the library
//! solves the algebraic unknowns and handles the events. The same library
//! serves every model: the model is data, not code.
//!
//! The CLI uses the rest: [`model_description`] (the XML, from the model
//! lowered from the text the FMU carries, so the value references are the
//! runtime's), [`fmu_archive`] (the ZIP) and [`guid`].
//!
//! Besides the CLI, this crate does file IO in one place: `ffi` reads the
//! FMU's resources, which only the FMU's own entry points can do.

mod engine;
mod ffi;
mod me;
mod xml;
mod zip;

pub use engine::{
    Experiment, FmuKind, FmuOptions, FmuVariable, Run, VarKind, build_run, lower_text, lower_with,
    prepare, variables,
};
pub use me::{EventOutcome, MAX_ME_UNKNOWNS, MeModel, MeRun, MeState};
pub use xml::{FmuIdentity, FmuLayout, model_description, model_description_for};
pub use zip::{ZipError, crc32, read_zip, write_zip};

use sha2::{Digest, Sha256};

/// The name of the model text in the FMU's `resources/`.
pub const MODEL_RESOURCE: &str = "model.dae";
/// The name of the options in the FMU's `resources/`.
pub const OPTIONS_RESOURCE: &str = "options.json";

/// A GUID for the FMU of `text` with the export settings `form`, `method`
/// and `tableau`: the SHA-256 of them, in the 8-4-4-4-12 form, so the
/// same export gives the same GUID.
pub fn guid(text: &str, form: &str, method: &str, tableau: Option<&str>) -> String {
    guid_of_kind(text, form, method, tableau, FmuKind::Cs)
}

/// [`guid`] for an FMU of `kind`: the kind is hashed too unless it is
/// Co-Simulation alone (whose GUIDs stay those of [`guid`]).
pub fn guid_of_kind(
    text: &str,
    form: &str,
    method: &str,
    tableau: Option<&str>,
    kind: FmuKind,
) -> String {
    let mut h = Sha256::new();
    for part in [text, form, method, tableau.unwrap_or("")] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    let kind = match kind {
        FmuKind::Cs => "",
        FmuKind::Me => "me",
        FmuKind::Both => "both",
    };
    if !kind.is_empty() {
        h.update((kind.len() as u64).to_le_bytes());
        h.update(kind.as_bytes());
    }
    let d = h.finalize();
    let hex: String = d.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!(
        "{{{}-{}-{}-{}-{}}}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// The FMU archive: `modelDescription.xml`, the runtime library as
/// `binaries/linux64/<model_identifier>.so`, the model text and the
/// options in `resources/`.
pub fn fmu_archive(
    xml: &str,
    model_identifier: &str,
    runtime: &[u8],
    text: &str,
    options: &FmuOptions,
) -> Result<Vec<u8>, ZipError> {
    let json = serde_json::to_string_pretty(options).unwrap_or_default();
    let binary = format!("binaries/linux64/{model_identifier}.so");
    let model = format!("resources/{MODEL_RESOURCE}");
    let opts = format!("resources/{OPTIONS_RESOURCE}");
    write_zip(&[
        ("modelDescription.xml", xml.as_bytes()),
        (&binary, runtime),
        (&model, text.as_bytes()),
        (&opts, json.as_bytes()),
    ])
}

/// The `modelIdentifier` for a model named `name`: a C identifier (other
/// characters become `_`, a leading digit gets a `_` before it).
pub fn model_identifier(name: &str) -> String {
    let mut id: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if id.is_empty() || id.starts_with(|c: char| c.is_ascii_digit()) {
        id.insert(0, '_');
    }
    id
}
