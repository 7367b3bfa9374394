//! `modelDescription.xml` as `daec fmu` writes it, pinned in `snapshots/`.

#[path = "../../../tests/common/snapshot.rs"]
#[macro_use]
mod snapshot;

use daec_fmu::{FmuIdentity, lower_text, model_description};

/// A model with every kind of variable: unknowns with a fixed start, a
/// start guess and none; a Real parameter bound to another; an Integer
/// parameter (structural), a constant; units, bounds, a nominal value, and
/// text that needs escaping.
const MODEL: &str = r#"model Kinds "every <kind> & \"class\" of variable"
  constant Real pi = 3.14159 "pi";
  parameter Integer n = 2 "elements";
  parameter Real k = 2 "rate" ;
  parameter Real k2 = 2*k "twice the rate";
  Real x[n](each start = 1, each fixed = true, each unit = "m", each min = 0) "position";
  Real v(start = 0.5, nominal = 10, unit = "m/s") "speed";
  Real a;
equation
  der(x[1]) = -k*x[1];
  der(x[2]) = -k2*x[2] + v;
  v = pi*x[1];
  a = x[1] + x[2];
  annotation(experiment(StartTime = 0, StopTime = 4, Tolerance = 1e-8, Interval = 0.01));
end Kinds;
"#;

#[test]
fn every_kind_of_variable_is_described() {
    let dae = lower_text(MODEL, Vec::new()).unwrap();
    let id = FmuIdentity {
        model_identifier: daec_fmu::model_identifier(&dae.name),
        guid: daec_fmu::guid(MODEL, "hic", "radau5", None),
        tool: "daec".into(),
    };
    let xml = model_description(&dae, &id);
    assert_workspace_snapshot!("fmu_model_description_kinds", xml);
}

#[test]
fn the_guid_follows_the_model_and_the_settings() {
    let g = daec_fmu::guid(MODEL, "hic", "radau5", None);
    assert_eq!(g.len(), 38);
    assert_eq!(g, daec_fmu::guid(MODEL, "hic", "radau5", None));
    assert_ne!(g, daec_fmu::guid(MODEL, "ste", "radau5", None));
    assert_ne!(g, daec_fmu::guid(MODEL, "hic", "herk", Some("rk4")));
}

#[test]
fn model_identifiers_are_c_identifiers() {
    assert_eq!(daec_fmu::model_identifier("Pendulum"), "Pendulum");
    assert_eq!(daec_fmu::model_identifier("a b.c"), "a_b_c");
    assert_eq!(daec_fmu::model_identifier("2stage"), "_2stage");
    assert_eq!(daec_fmu::model_identifier(""), "_");
}
