//! `modelDescription.xml` of an FMI 2.0 FMU, Co-Simulation, Model
//! Exchange or both (FMI 2.0.4, §2.2, §3.3 and §4.3): every variable of [`variables`] with its value
//! reference, causality, variability, initial, start, description and
//! unit; the units; the model structure; the `experiment` annotation as
//! `DefaultExperiment`.
//!
//! Causality and variability (FMI 2.0.4 §2.2.7, Table 2.2.7-1): the
//! model's unknowns are continuous outputs (`initial` "exact" with a fixed
//! start, "approx" with another start, "calculated" without one); `Real`
//! parameters are fixed parameters with `initial` "exact"; constants and
//! the structural `Integer` and `Boolean` parameters are local constants.
//! The outputs are listed in `ModelStructure/Outputs`, and those whose
//! `initial` is not "exact" in `InitialUnknowns` (§2.2.8), without
//! dependencies (every output may depend on every parameter).
//!
//! Model Exchange adds the derivative of every state (a local continuous
//! variable `der(x)` with `derivative` naming the state, unless the
//! first-order reduction made it an unknown of its own), lists them in
//! `ModelStructure/Derivatives` — their order is that of the state vector
//! — and in `InitialUnknowns` with the states that are not `exact`, and
//! sets `numberOfEventIndicators`.

use crate::engine::{FmuKind, FmuVariable, VarKind, variables};
use crate::me::MeModel;
use daec_model::{BaseType, Dae};
use std::fmt::Write;

/// The identity of an FMU: the names the model description and the
/// archive use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FmuIdentity {
    /// `modelIdentifier`: the name of the shared library in
    /// `binaries/linux64/` (a C identifier).
    pub model_identifier: String,
    /// `guid`.
    pub guid: String,
    /// `generationTool`.
    pub tool: String,
}

/// A number as `xs:double` text that reads back to the same `f64`.
fn num(x: f64) -> String {
    let a = x.abs();
    if x == 0.0 || (1e-5..1e16).contains(&a) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// `s` escaped for an XML attribute value.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "&#{};", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// `causality`, `variability` and `initial` of a variable.
fn classes(v: &FmuVariable) -> (&'static str, &'static str, &'static str) {
    match v.kind {
        VarKind::Unknown(_) => (
            "output",
            "continuous",
            match (v.start, v.fixed) {
                (Some(_), true) => "exact",
                (Some(_), false) => "approx",
                (None, _) => "calculated",
            },
        ),
        VarKind::Parameter(_) => ("parameter", "fixed", "exact"),
        VarKind::Constant(_) => ("local", "constant", "exact"),
        VarKind::Reduced(_) | VarKind::Derivative(_) => ("local", "continuous", "calculated"),
    }
}

/// The variables of an FMU and what its model description declares.
#[derive(Debug, Clone, PartialEq)]
pub struct FmuLayout {
    /// The kinds the FMU provides.
    pub kind: FmuKind,
    /// Its variables (the value reference is the position).
    pub vars: Vec<FmuVariable>,
    /// `numberOfEventIndicators` (Model Exchange).
    pub n_indicators: usize,
}

impl FmuLayout {
    /// The layout of an FMU of `kind` for the lowered model `dae`: for
    /// Model Exchange the model is checked ([`MeModel::new`]) and its
    /// states' derivatives added; the reason as a message when it cannot
    /// be exported so.
    pub fn new(dae: &Dae, kind: FmuKind) -> Result<FmuLayout, String> {
        if !kind.model_exchange() {
            return Ok(FmuLayout {
                kind,
                vars: variables(dae),
                n_indicators: 0,
            });
        }
        let model = MeModel::new(dae.clone())?;
        let (vars, _) = model.variables(dae);
        Ok(FmuLayout {
            kind,
            vars,
            n_indicators: model.n_indicators(),
        })
    }
}

/// The type element of a variable (`<Real start=… unit=…/>`).
fn type_element(v: &FmuVariable, initial: &str, derivative: Option<usize>) -> String {
    let mut attrs = String::new();
    if let Some(d) = derivative {
        let _ = write!(attrs, " derivative=\"{d}\"");
    }
    let start = v.start.filter(|_| initial != "calculated");
    match v.ty {
        BaseType::Real => {
            if let Some(s) = start {
                let _ = write!(attrs, " start=\"{}\"", num(s));
            }
            if let Some(u) = &v.unit {
                let _ = write!(attrs, " unit=\"{}\"", escape(u));
            }
            for (name, x) in [("min", v.min), ("max", v.max)] {
                if let Some(x) = x.filter(|x| x.is_finite()) {
                    let _ = write!(attrs, " {name}=\"{}\"", num(x));
                }
            }
            if let Some(x) = v.nominal.filter(|x| x.is_finite() && *x > 0.0) {
                let _ = write!(attrs, " nominal=\"{}\"", num(x));
            }
            format!("<Real{attrs}/>")
        }
        BaseType::Integer => {
            if let Some(s) = start {
                let _ = write!(attrs, " start=\"{}\"", s as i64);
            }
            format!("<Integer{attrs}/>")
        }
        BaseType::Boolean => {
            if let Some(s) = start {
                let _ = write!(attrs, " start=\"{}\"", s != 0.0);
            }
            format!("<Boolean{attrs}/>")
        }
    }
}

/// The `modelDescription.xml` of `dae` (lowered from the FMU's model
/// text) as a Co-Simulation FMU named by `id`.
pub fn model_description(dae: &Dae, id: &FmuIdentity) -> String {
    let layout = FmuLayout {
        kind: FmuKind::Cs,
        vars: variables(dae),
        n_indicators: 0,
    };
    model_description_for(dae, id, &layout)
}

/// The `modelDescription.xml` of `dae` (lowered from the FMU's model
/// text) as an FMU of `layout` named by `id`: `<ModelExchange>` and
/// `<CoSimulation>` as its kind says, the states' derivatives in
/// `ModelStructure/Derivatives` (without dependencies: each may depend on
/// every state) and in `InitialUnknowns`.
pub fn model_description_for(dae: &Dae, id: &FmuIdentity, layout: &FmuLayout) -> String {
    let vars = &layout.vars;
    let mut x = String::new();
    x.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = write!(
        x,
        "<fmiModelDescription fmiVersion=\"2.0\" modelName=\"{}\" guid=\"{}\"",
        escape(&dae.name),
        escape(&id.guid)
    );
    if let Some(d) = &dae.description {
        let _ = write!(x, " description=\"{}\"", escape(d));
    }
    let _ = writeln!(
        x,
        " generationTool=\"{}\" variableNamingConvention=\"flat\" numberOfEventIndicators=\"{}\">",
        escape(&id.tool),
        layout.n_indicators
    );
    if layout.kind.model_exchange() {
        let _ = writeln!(
            x,
            "  <ModelExchange modelIdentifier=\"{}\" canGetAndSetFMUstate=\"true\" canNotUseMemoryManagementFunctions=\"true\"/>",
            escape(&id.model_identifier)
        );
    }
    if layout.kind.co_simulation() {
        let _ = writeln!(
            x,
            "  <CoSimulation modelIdentifier=\"{}\" canHandleVariableCommunicationStepSize=\"true\" canGetAndSetFMUstate=\"true\" canNotUseMemoryManagementFunctions=\"true\"/>",
            escape(&id.model_identifier)
        );
    }
    let mut units: Vec<&str> = vars.iter().filter_map(|v| v.unit.as_deref()).collect();
    units.sort_unstable();
    units.dedup();
    if !units.is_empty() {
        x.push_str("  <UnitDefinitions>\n");
        for u in units {
            let _ = writeln!(x, "    <Unit name=\"{}\"/>", escape(u));
        }
        x.push_str("  </UnitDefinitions>\n");
    }
    // (the categories of the runtime's messages, FMI 2.0.4 §2.2.4)
    x.push_str("  <LogCategories>\n");
    x.push_str(
        "    <Category name=\"logStatusError\" description=\"a call failed: its reason\"/>\n",
    );
    x.push_str(
        "    <Category name=\"logStatusFatal\" description=\"an internal error of daec\"/>\n",
    );
    x.push_str("  </LogCategories>\n");
    let e = &dae.experiment;
    let mut exp = String::new();
    for (name, v) in [
        ("startTime", e.start_time),
        ("stopTime", e.stop_time),
        ("tolerance", e.tolerance),
        ("stepSize", e.interval),
    ] {
        if let Some(v) = v {
            let _ = write!(exp, " {name}=\"{}\"", num(v));
        }
    }
    if !exp.is_empty() {
        let _ = writeln!(x, "  <DefaultExperiment{exp}/>");
    }
    x.push_str("  <ModelVariables>\n");
    let mut outputs = Vec::new();
    let mut initial_unknowns = Vec::new();
    let mut derivatives = Vec::new();
    // (the 1-based index of the variable of each unknown of the
    // first-order model)
    let index_of = |j: usize| {
        vars.iter()
            .position(|v| matches!(v.kind, VarKind::Unknown(k) | VarKind::Reduced(k) if k == j))
            .map(|p| p + 1)
    };
    let states: Vec<usize> = vars.iter().filter_map(|v| v.derivative_of).collect();
    for (vr, v) in vars.iter().enumerate() {
        let (causality, variability, initial) = classes(v);
        let index = vr + 1;
        let _ = writeln!(x, "    <!-- index {index} -->");
        let _ = write!(
            x,
            "    <ScalarVariable name=\"{}\" valueReference=\"{vr}\"",
            escape(&v.name)
        );
        if let Some(d) = &v.description {
            let _ = write!(x, " description=\"{}\"", escape(d));
        }
        let _ = writeln!(
            x,
            " causality=\"{causality}\" variability=\"{variability}\" initial=\"{initial}\">"
        );
        let derivative = v.derivative_of.and_then(index_of);
        let _ = writeln!(x, "      {}", type_element(v, initial, derivative));
        x.push_str("    </ScalarVariable>\n");
        if causality == "output" {
            outputs.push(index);
        }
        let state =
            matches!(v.kind, VarKind::Unknown(j) | VarKind::Reduced(j) if states.contains(&j));
        if derivative.is_some() {
            derivatives.push(index);
        }
        if initial != "exact" && (causality == "output" || derivative.is_some() || state) {
            initial_unknowns.push(index);
        }
    }
    x.push_str("  </ModelVariables>\n  <ModelStructure>\n");
    for (tag, list) in [
        ("Outputs", &outputs),
        ("Derivatives", &derivatives),
        ("InitialUnknowns", &initial_unknowns),
    ] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(x, "    <{tag}>");
        for i in list {
            let _ = writeln!(x, "      <Unknown index=\"{i}\"/>");
        }
        let _ = writeln!(x, "    </{tag}>");
    }
    x.push_str("  </ModelStructure>\n</fmiModelDescription>\n");
    x
}
