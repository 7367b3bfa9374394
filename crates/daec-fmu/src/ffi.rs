//! The FMI 2.0 C ABI of the FMU's runtime library (FMI 2.0.4 §2.1, §3.2
//! and §4.2: the common functions, those of Model Exchange and those of
//! Co-Simulation).
//!
//! Length: every exported function of the C ABI is here, so that the
//! `unsafe` code of the FMU stays in one module (architecture invariant
//! 7), with the unit tests that call them as an importer does.
//!
//! This is one of the modules with `unsafe` code (checked by
//! `tests/invariants.rs`): the importer hands raw pointers across the C
//! ABI. Why it is sound, given an importer that keeps the FMI calling
//! rules for the pointers it passes (arrays of the length it states,
//! NUL-terminated strings):
//!
//! - a component is a pointer this library made (`Box::into_raw` of an
//!   [`Instance`]) and recorded in a registry; every function looks the
//!   pointer up there before it dereferences it, so a null, freed or
//!   foreign component is an error, never a dereference; likewise FMU
//!   states;
//! - array arguments are checked for null when their length is not zero
//!   and turned into slices of the stated length; strings are read only
//!   when not null;
//! - every function's body runs under `catch_unwind`: a panic never
//!   crosses the C ABI; it becomes `fmi2Fatal` with the panic's message
//!   through the logger, and the instance refuses to work on;
//! - the logger is called with the format `"%s"` and the message as its
//!   one argument, so no text of the model is read as a format.
//!
//! Errors are `fmi2Error` with a message through the logger callback
//! (when the importer gave one): a value reference that is not a variable
//! of the type asked, a value that is not finite, a variable that is not
//! settable, a call out of order, a failed simulation step.
//!
//! Reading the FMU's resources (`fmuResourceLocation`) is the file IO of
//! this crate (architecture invariant 2 names this module).
#![allow(unsafe_code)]

use crate::engine::{
    Experiment, FmuOptions, FmuVariable, Run, VarKind, build_run, lower_text, lower_with,
};
use crate::me::{MeModel, MeRun, MeState};
use crate::xml::FmuLayout;
use crate::{MODEL_RESOURCE, OPTIONS_RESOURCE};
use daec_model::BaseType;
use daec_sim::EndPoint;
use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::Mutex;

/// `fmi2Status`.
type Status = c_int;
const OK: Status = 0;
const DISCARD: Status = 2;
const ERROR: Status = 3;
const FATAL: Status = 4;

/// `fmi2CallbackLogger`.
type Logger =
    unsafe extern "C" fn(*mut c_void, *const c_char, Status, *const c_char, *const c_char, ...);

/// `fmi2CallbackFunctions`.
#[repr(C)]
pub struct CallbackFunctions {
    logger: Option<Logger>,
    _allocate_memory: Option<unsafe extern "C" fn(usize, usize) -> *mut c_void>,
    _free_memory: Option<unsafe extern "C" fn(*mut c_void)>,
    _step_finished: Option<unsafe extern "C" fn(*mut c_void, Status)>,
    component_environment: *mut c_void,
}

/// Where an instance is in the FMI state machine (FMI 2.0.4 §4.2.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Instantiated,
    Initialization,
    Stepping,
    /// Model Exchange: event mode.
    Event,
    /// Model Exchange: continuous-time mode.
    Continuous,
    Terminated,
    /// After an error or a panic: only `fmi2Reset` and `fmi2FreeInstance`
    /// work.
    Failed,
}

/// One FMU instance.
pub struct Instance {
    name: CString,
    logger: Option<Logger>,
    env: *mut c_void,
    text: String,
    options: FmuOptions,
    /// Model Exchange (`fmuType` 0) rather than Co-Simulation.
    model_exchange: bool,
    vars: Vec<FmuVariable>,
    /// The values at instantiation (the start values).
    defaults: Vec<f64>,
    /// The values the master set, per value reference.
    set: Vec<Option<f64>>,
    /// The current values, per value reference.
    values: Vec<f64>,
    experiment: Experiment,
    run: Option<Run>,
    /// The Model Exchange run (built with `run`, from its consistent
    /// initial point).
    me: Option<MeRun>,
    /// What `run` was built with.
    built_with: Option<(Vec<Option<f64>>, Experiment)>,
    phase: Phase,
    /// The last message logged (also without a logger).
    last_message: String,
}

/// An FMU state (`fmi2GetFMUstate`).
struct Snapshot {
    set: Vec<Option<f64>>,
    values: Vec<f64>,
    experiment: Experiment,
    point: Option<EndPoint>,
    me: Option<MeState>,
    phase: Phase,
}

/// The live instances and FMU states, by address.
static INSTANCES: Mutex<Vec<usize>> = Mutex::new(Vec::new());
static STATES: Mutex<Vec<usize>> = Mutex::new(Vec::new());

fn registry(r: &'static Mutex<Vec<usize>>) -> std::sync::MutexGuard<'static, Vec<usize>> {
    r.lock().unwrap_or_else(|e| e.into_inner())
}

fn is_live(r: &'static Mutex<Vec<usize>>, p: *const c_void) -> bool {
    !p.is_null() && registry(r).contains(&(p as usize))
}

/// The text of a panic's payload.
fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_string())
}

/// Calls `logger` (if any) with `msg` (`#` doubled, FMI 2.0.4 §2.1.5).
fn log_to(
    logger: Option<Logger>,
    env: *mut c_void,
    name: &CStr,
    status: Status,
    category: &CStr,
    msg: &str,
) {
    let Some(logger) = logger else { return };
    let text = msg.replace('#', "##").replace('\0', " ");
    let Ok(text) = CString::new(text) else { return };
    // SAFETY: the importer's logger takes the environment it gave, two
    // NUL-terminated strings, the status, a format and its arguments; the
    // format is "%s" with one NUL-terminated string.
    unsafe {
        logger(
            env,
            name.as_ptr(),
            status,
            category.as_ptr(),
            c"%s".as_ptr(),
            text.as_ptr(),
        );
    }
}

impl Instance {
    fn log(&mut self, status: Status, msg: &str) {
        self.last_message = msg.to_string();
        let category = if status >= FATAL {
            c"logStatusFatal"
        } else {
            c"logStatusError"
        };
        log_to(self.logger, self.env, &self.name, status, category, msg);
    }

    fn var(&self, vr: c_uint, ty: BaseType) -> Result<(usize, &FmuVariable), String> {
        let k = vr as usize;
        match self.vars.get(k) {
            Some(v) if v.ty == ty => Ok((k, v)),
            Some(v) => Err(format!(
                "valueReference {vr} is `{}`, a {:?} variable, not a {ty:?} one",
                v.name, v.ty
            )),
            None => Err(format!(
                "valueReference {vr} is not a variable of this FMU (it has {})",
                self.vars.len()
            )),
        }
    }

    /// Builds the run for the current settings unless it is built.
    fn ensure_run(&mut self) -> Result<(), String> {
        let key = (self.set.clone(), self.experiment);
        if self.run.is_some() && self.built_with.as_ref() == Some(&key) {
            return Ok(());
        }
        let (run, values) = build_run(
            &self.text,
            &self.options,
            &self.vars,
            &self.set,
            self.experiment,
        )?;
        // (a Co-Simulation instance of an FMU of both kinds keeps one too:
        // it gives the derivatives' values at the communication points)
        self.me = if self.options.kind.model_exchange() {
            Some(self.me_run(&values, run.time())?)
        } else {
            None
        };
        self.run = Some(run);
        self.values = values;
        self.built_with = Some(key);
        Ok(())
    }

    /// The Model Exchange run from the consistent initial point `values`
    /// (per value reference) at `t0`.
    fn me_run(&self, values: &[f64], t0: f64) -> Result<MeRun, String> {
        let dae = lower_with(&self.text, &self.vars, &self.set)?;
        let model = MeModel::new(dae.clone())?;
        let (vars, states) = model.variables(&dae);
        let n = vars
            .iter()
            .filter(|v| matches!(v.kind, VarKind::Unknown(_) | VarKind::Reduced(_)))
            .count();
        let mut z0 = vec![0.0; n];
        for (v, &x) in vars.iter().zip(values) {
            if let VarKind::Unknown(j) | VarKind::Reduced(j) = v.kind
                && let Some(z) = z0.get_mut(j)
            {
                *z = if x.is_finite() { x } else { 0.0 };
            }
        }
        Ok(MeRun::new(model, states, t0, z0))
    }

    /// The Model Exchange run, or why there is none.
    fn me(&mut self) -> Result<&mut MeRun, String> {
        if !self.model_exchange {
            return Err("this instance is a Co-Simulation one (fmuType fmi2CoSimulation); the Model Exchange functions need an instance made with fmi2ModelExchange".into());
        }
        self.me
            .as_mut()
            .ok_or_else(|| "the FMU was not initialised".to_string())
    }

    /// The current values of the unknowns and derivatives of a Model
    /// Exchange run into `values`; for a Co-Simulation instance of an FMU
    /// of both kinds, the derivatives at the point the run has reached.
    fn refresh(&mut self) -> Result<(), String> {
        let Some(me) = self.me.as_mut() else {
            return Ok(());
        };
        if !self.model_exchange {
            let Some(run) = self.run.as_ref() else {
                return Ok(());
            };
            me.sync(run.time(), &self.vars, &self.values);
        }
        for (v, x) in self.vars.iter().zip(self.values.iter_mut()) {
            let read = match v.kind {
                VarKind::Unknown(_) | VarKind::Reduced(_) => self.model_exchange,
                VarKind::Derivative(_) => true,
                VarKind::Parameter(_) | VarKind::Constant(_) => false,
            };
            if read {
                *x = me.value(v)?;
            }
        }
        Ok(())
    }

    fn require(&self, phases: &[Phase], what: &str) -> Result<(), String> {
        if phases.contains(&self.phase) {
            Ok(())
        } else {
            Err(format!(
                "{what} is not allowed in the state {:?} of the FMU",
                self.phase
            ))
        }
    }
}

/// Runs `f` on the instance `c` under `catch_unwind`; its error is logged
/// and returned as `fmi2Error` (and leaves the instance failed when
/// `fails`), a panic as `fmi2Fatal`.
fn with_instance(
    c: *mut c_void,
    fails: bool,
    f: impl FnOnce(&mut Instance) -> Result<Status, String>,
) -> Status {
    if !is_live(&INSTANCES, c) {
        return ERROR;
    }
    // SAFETY: `c` is in the registry: a live `Box<Instance>` of ours.
    let inst = unsafe { &mut *c.cast::<Instance>() };
    match catch_unwind(AssertUnwindSafe(|| f(inst))) {
        Ok(Ok(s)) => s,
        Ok(Err(msg)) => {
            if fails {
                inst.phase = Phase::Failed;
            }
            inst.log(ERROR, &msg);
            ERROR
        }
        Err(p) => {
            inst.phase = Phase::Failed;
            inst.log(
                FATAL,
                &format!("internal error in daec: {}", panic_message(&*p)),
            );
            FATAL
        }
    }
}

/// The slices of a get/set call: `n` value references and `n` values.
///
/// # Safety
/// Non-null pointers must point to `n` elements.
unsafe fn slices<'a, T>(
    vr: *const c_uint,
    n: usize,
    value: *mut T,
) -> Result<(&'a [c_uint], &'a mut [T]), String> {
    if n == 0 {
        return Ok((&[], &mut []));
    }
    if vr.is_null() || value.is_null() {
        return Err(format!(
            "a null array of value references or values for {n} variables"
        ));
    }
    // SAFETY: non-null, `n` elements by the caller's contract.
    unsafe {
        Ok((
            std::slice::from_raw_parts(vr, n),
            std::slice::from_raw_parts_mut(value, n),
        ))
    }
}

/// The path of a `file:` URI (or a plain path), percent-decoded.
fn resource_path(uri: &str) -> PathBuf {
    let rest = uri
        .strip_prefix("file://localhost")
        .or_else(|| uri.strip_prefix("file://"))
        .or_else(|| uri.strip_prefix("file:"))
        .unwrap_or(uri);
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).and_then(|&b| hex(b)),
                bytes.get(i + 2).and_then(|&b| hex(b)),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    PathBuf::from(String::from_utf8_lossy(&out).into_owned())
}

/// Reads the model and the options from the resources at `location` and
/// checks the GUID.
fn load(location: &str, guid: &str) -> Result<(String, FmuOptions), String> {
    let dir = resource_path(location);
    let read = |name: &str| {
        let p = dir.join(name);
        std::fs::read_to_string(&p).map_err(|e| format!("cannot read `{}`: {e}", p.display()))
    };
    let text = read(MODEL_RESOURCE)?;
    let options: FmuOptions = serde_json::from_str(&read(OPTIONS_RESOURCE)?)
        .map_err(|e| format!("`{OPTIONS_RESOURCE}` of the FMU is not valid: {e}"))?;
    if options.guid != guid {
        return Err(format!(
            "the GUID `{guid}` is not this FMU's (`{}`)",
            options.guid
        ));
    }
    Ok((text, options))
}

/// A string argument, or `""` for null.
///
/// # Safety
/// A non-null `s` must be a NUL-terminated string.
unsafe fn text<'a>(s: *const c_char) -> std::borrow::Cow<'a, str> {
    if s.is_null() {
        return "".into();
    }
    // SAFETY: non-null and NUL-terminated by the caller's contract.
    unsafe { CStr::from_ptr(s) }.to_string_lossy()
}

/// `fmi2GetTypesPlatform`.
#[unsafe(no_mangle)]
pub extern "C" fn fmi2GetTypesPlatform() -> *const c_char {
    c"default".as_ptr()
}

/// `fmi2GetVersion`.
#[unsafe(no_mangle)]
pub extern "C" fn fmi2GetVersion() -> *const c_char {
    c"2.0".as_ptr()
}

/// `fmi2Instantiate`: reads the model from the resources; the kinds the
/// FMU was exported for (`fmuType` 0, Model Exchange, or 1,
/// Co-Simulation).
///
/// # Safety
/// Strings NUL-terminated or null; `functions` null or an
/// `fmi2CallbackFunctions`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2Instantiate(
    instance_name: *const c_char,
    fmu_type: c_int,
    guid: *const c_char,
    resource_location: *const c_char,
    functions: *const CallbackFunctions,
    _visible: c_int,
    _logging_on: c_int,
) -> *mut c_void {
    // SAFETY: by the caller's contract.
    let (logger, env) = match unsafe { functions.as_ref() } {
        Some(f) => (f.logger, f.component_environment),
        None => (None, std::ptr::null_mut()),
    };
    // SAFETY: by the caller's contract.
    let (name, guid, location) =
        unsafe { (text(instance_name), text(guid), text(resource_location)) };
    let name = CString::new(name.replace('\0', " ")).unwrap_or_default();
    let made = catch_unwind(AssertUnwindSafe(|| -> Result<Box<Instance>, String> {
        let (text, options) = load(&location, &guid)?;
        let model_exchange = match fmu_type {
            0 if options.kind.model_exchange() => true,
            1 if options.kind.co_simulation() => false,
            0 => {
                return Err("fmuType fmi2ModelExchange: this FMU is for Co-Simulation only".into());
            }
            1 => {
                return Err("fmuType fmi2CoSimulation: this FMU is for Model Exchange only".into());
            }
            k => return Err(format!("fmuType {k} is not an FMI 2.0 kind of FMU")),
        };
        let dae = lower_text(&text, Vec::new())?;
        let vars = FmuLayout::new(&dae, options.kind)?.vars;
        let defaults: Vec<f64> = vars.iter().map(|v| v.start.unwrap_or(0.0)).collect();
        Ok(Box::new(Instance {
            name: name.clone(),
            logger,
            env,
            text,
            options,
            model_exchange,
            set: vec![None; vars.len()],
            values: defaults.clone(),
            defaults,
            vars,
            experiment: Experiment {
                tolerance: None,
                start: None,
                stop: None,
            },
            run: None,
            me: None,
            built_with: None,
            phase: Phase::Instantiated,
            last_message: String::new(),
        }))
    }));
    let msg = match made {
        Ok(Ok(inst)) => {
            let p = Box::into_raw(inst).cast::<c_void>();
            registry(&INSTANCES).push(p as usize);
            return p;
        }
        Ok(Err(msg)) => msg,
        Err(p) => format!("internal error in daec: {}", panic_message(&*p)),
    };
    log_to(logger, env, &name, ERROR, c"logStatusError", &msg);
    std::ptr::null_mut()
}

/// `fmi2FreeInstance`.
///
/// # Safety
/// `c` is checked against the live instances.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2FreeInstance(c: *mut c_void) {
    let mut live = registry(&INSTANCES);
    if let Some(k) = live.iter().position(|&p| p == c as usize) {
        live.swap_remove(k);
        drop(live);
        // SAFETY: a live `Box<Instance>` of ours, now out of the registry.
        let inst = unsafe { Box::from_raw(c.cast::<Instance>()) };
        let _ = catch_unwind(AssertUnwindSafe(move || drop(inst)));
    }
}

/// `fmi2SetDebugLogging`: accepted; daec logs errors only.
///
/// # Safety
/// `c` is checked against the live instances.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetDebugLogging(
    c: *mut c_void,
    _logging_on: c_int,
    _n: usize,
    _categories: *const *const c_char,
) -> Status {
    with_instance(c, false, |_| Ok(OK))
}

/// `fmi2SetupExperiment`.
///
/// # Safety
/// `c` is checked against the live instances.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetupExperiment(
    c: *mut c_void,
    tolerance_defined: c_int,
    tolerance: f64,
    start_time: f64,
    stop_time_defined: c_int,
    stop_time: f64,
) -> Status {
    with_instance(c, false, |inst| {
        inst.require(&[Phase::Instantiated], "fmi2SetupExperiment")?;
        if tolerance_defined != 0 && !(tolerance.is_finite() && tolerance > 0.0) {
            return Err(format!(
                "tolerance {tolerance} is not a positive finite number"
            ));
        }
        if !start_time.is_finite() {
            return Err(format!("startTime {start_time} is not finite"));
        }
        if stop_time_defined != 0 && !(stop_time.is_finite() && stop_time > start_time) {
            return Err(format!(
                "stopTime {stop_time} is not a finite time after startTime {start_time}"
            ));
        }
        inst.experiment = Experiment {
            tolerance: (tolerance_defined != 0).then_some(tolerance),
            start: Some(start_time),
            stop: (stop_time_defined != 0).then_some(stop_time),
        };
        Ok(OK)
    })
}

/// Moves the instance `c` from one of the phases `from` to `to` (the call
/// `what`), building the run first when `build` (and failing the instance
/// when that fails).
fn transition(c: *mut c_void, from: &[Phase], to: Phase, what: &str, build: bool) -> Status {
    with_instance(c, build, |inst| {
        inst.require(from, what)?;
        if build {
            inst.ensure_run()?;
        }
        inst.phase = to;
        Ok(OK)
    })
}

/// `fmi2EnterInitializationMode`: runs daec's pipeline up to the
/// consistent initial point.
///
/// # Safety
/// `c` is checked against the live instances.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2EnterInitializationMode(c: *mut c_void) -> Status {
    let what = "fmi2EnterInitializationMode";
    transition(c, &[Phase::Instantiated], Phase::Initialization, what, true)
}

/// `fmi2ExitInitializationMode`: again with the parameters set in
/// initialisation mode, if any.
///
/// # Safety
/// `c` is checked against the live instances.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2ExitInitializationMode(c: *mut c_void) -> Status {
    with_instance(c, true, |inst| {
        inst.require(&[Phase::Initialization], "fmi2ExitInitializationMode")?;
        inst.ensure_run()?;
        if let Some(me) = inst.me.as_mut() {
            me.enter_event_mode();
        }
        inst.phase = if inst.model_exchange {
            Phase::Event
        } else {
            Phase::Stepping
        };
        Ok(OK)
    })
}

/// `fmi2Terminate`.
///
/// # Safety
/// `c` is checked against the live instances.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2Terminate(c: *mut c_void) -> Status {
    let from = [
        Phase::Stepping,
        Phase::Event,
        Phase::Continuous,
        Phase::Failed,
    ];
    transition(c, &from, Phase::Terminated, "fmi2Terminate", false)
}

/// `fmi2Reset`: back to the instantiated state with the start values.
///
/// # Safety
/// `c` is checked against the live instances.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2Reset(c: *mut c_void) -> Status {
    with_instance(c, false, |inst| {
        inst.set = vec![None; inst.vars.len()];
        inst.values.clone_from(&inst.defaults);
        inst.experiment = Experiment {
            tolerance: None,
            start: None,
            stop: None,
        };
        inst.run = None;
        inst.me = None;
        inst.built_with = None;
        inst.phase = Phase::Instantiated;
        Ok(OK)
    })
}

/// Reads the values of `vr` of type `ty` into `out` through `conv`.
///
/// # Safety
/// `vr` and `out` null or of `n` elements.
unsafe fn get_values<T>(
    c: *mut c_void,
    vr: *const c_uint,
    n: usize,
    out: *mut T,
    ty: BaseType,
    conv: impl Fn(f64) -> T,
) -> Status {
    with_instance(c, false, |inst| {
        // SAFETY: by the caller's contract.
        let (vr, out) = unsafe { slices(vr, n, out)? };
        if !vr.is_empty() {
            inst.refresh()?;
        }
        for (r, o) in vr.iter().zip(out.iter_mut()) {
            let (k, _) = inst.var(*r, ty)?;
            *o = conv(inst.values[k]);
        }
        Ok(OK)
    })
}

/// `fmi2GetReal`.
///
/// # Safety
/// `vr` and `value` null or of `nvr` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetReal(
    c: *mut c_void,
    vr: *const c_uint,
    nvr: usize,
    value: *mut f64,
) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { get_values(c, vr, nvr, value, BaseType::Real, |x| x) }
}

/// `fmi2GetInteger`.
///
/// # Safety
/// `vr` and `value` null or of `nvr` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetInteger(
    c: *mut c_void,
    vr: *const c_uint,
    nvr: usize,
    value: *mut c_int,
) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { get_values(c, vr, nvr, value, BaseType::Integer, |x| x as c_int) }
}

/// `fmi2GetBoolean`.
///
/// # Safety
/// `vr` and `value` null or of `nvr` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetBoolean(
    c: *mut c_void,
    vr: *const c_uint,
    nvr: usize,
    value: *mut c_int,
) -> Status {
    // SAFETY: by the caller's contract.
    unsafe {
        get_values(c, vr, nvr, value, BaseType::Boolean, |x| {
            c_int::from(x != 0.0)
        })
    }
}

/// Checks and applies the values the master sets: `Real` parameters and
/// the start values of unknowns that have one, before the end of
/// initialisation; finite values only. Nothing is set when one is
/// refused.
fn set_values(
    inst: &mut Instance,
    vr: &[c_uint],
    values: &[f64],
    ty: BaseType,
) -> Result<(), String> {
    if vr.is_empty() {
        return Ok(());
    }
    inst.require(
        &[Phase::Instantiated, Phase::Initialization],
        "setting a variable (the parameters are fixed after initialisation; the FMU has no inputs)",
    )?;
    let mut checked = Vec::with_capacity(vr.len());
    for (&r, &x) in vr.iter().zip(values) {
        let (k, v) = inst.var(r, ty)?;
        match v.kind {
            VarKind::Constant(_) => {
                return Err(format!(
                    "`{}` is a constant of the model (or a structural Integer or Boolean parameter) and cannot be set",
                    v.name
                ));
            }
            VarKind::Unknown(_) | VarKind::Reduced(_) | VarKind::Derivative(_)
                if v.start.is_none() =>
            {
                return Err(format!(
                    "`{}` has no start value (initial = \"calculated\") and cannot be set",
                    v.name
                ));
            }
            _ => {}
        }
        if !x.is_finite() {
            return Err(format!("{x} for `{}` is not a finite number", v.name));
        }
        checked.push((k, x));
    }
    for (k, x) in checked {
        inst.set[k] = Some(x);
        inst.values[k] = x;
    }
    Ok(())
}

/// `fmi2SetReal`: parameters and start values, before the end of
/// initialisation.
///
/// # Safety
/// `vr` and `value` null or of `nvr` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetReal(
    c: *mut c_void,
    vr: *const c_uint,
    nvr: usize,
    value: *const f64,
) -> Status {
    with_instance(c, false, |inst| {
        // SAFETY: by the caller's contract (the values are only read).
        let (vr, values) = unsafe { slices(vr, nvr, value.cast_mut())? };
        set_values(inst, vr, values, BaseType::Real)?;
        Ok(OK)
    })
}

/// `fmi2SetInteger`: the Integer variables are structural constants.
///
/// # Safety
/// `vr` and `value` null or of `nvr` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetInteger(
    c: *mut c_void,
    vr: *const c_uint,
    nvr: usize,
    value: *const c_int,
) -> Status {
    with_instance(c, false, |inst| {
        // SAFETY: by the caller's contract (the values are only read).
        let (vr, values) = unsafe { slices(vr, nvr, value.cast_mut())? };
        let values: Vec<f64> = values.iter().map(|&x| f64::from(x)).collect();
        set_values(inst, vr, &values, BaseType::Integer)?;
        Ok(OK)
    })
}

/// `fmi2SetBoolean`: the Boolean variables are structural constants.
///
/// # Safety
/// `vr` and `value` null or of `nvr` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetBoolean(
    c: *mut c_void,
    vr: *const c_uint,
    nvr: usize,
    value: *const c_int,
) -> Status {
    with_instance(c, false, |inst| {
        // SAFETY: by the caller's contract (the values are only read).
        let (vr, values) = unsafe { slices(vr, nvr, value.cast_mut())? };
        let values: Vec<f64> = values.iter().map(|&x| f64::from(x)).collect();
        set_values(inst, vr, &values, BaseType::Boolean)?;
        Ok(OK)
    })
}

/// `fmi2GetString` / `fmi2SetString`: the FMU has no String variables.
fn no_strings(c: *mut c_void, nvr: usize) -> Status {
    with_instance(c, false, |_| {
        if nvr == 0 {
            Ok(OK)
        } else {
            Err("this FMU has no String variables".into())
        }
    })
}

/// `fmi2GetString`: the FMU has no String variables.
///
/// # Safety
/// `c` is checked against the live instances.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetString(
    c: *mut c_void,
    _vr: *const c_uint,
    nvr: usize,
    _value: *mut *const c_char,
) -> Status {
    no_strings(c, nvr)
}

/// `fmi2SetString`: the FMU has no String variables.
///
/// # Safety
/// `c` is checked against the live instances.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetString(
    c: *mut c_void,
    _vr: *const c_uint,
    nvr: usize,
    _value: *const *const c_char,
) -> Status {
    no_strings(c, nvr)
}

/// `fmi2DoStep`: daec's simulation from the current communication point
/// over `h`.
///
/// # Safety
/// `c` is checked against the live instances.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2DoStep(
    c: *mut c_void,
    t: f64,
    h: f64,
    _no_set_prior: c_int,
) -> Status {
    with_instance(c, true, |inst| {
        inst.require(&[Phase::Stepping], "fmi2DoStep")?;
        let Some(run) = inst.run.as_mut() else {
            return Err("the FMU was not initialised".into());
        };
        inst.values = run.step(&inst.vars, t, h)?;
        Ok(OK)
    })
}

/// `fmi2CancelStep`: steps are synchronous; nothing to cancel.
///
/// # Safety
/// `c` is checked against the live instances.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2CancelStep(c: *mut c_void) -> Status {
    with_instance(c, false, |_| {
        Err(
            "fmi2CancelStep: daec's steps are synchronous (fmi2DoStep never returns fmi2Pending)"
                .into(),
        )
    })
}

/// `fmi2EventInfo`.
#[repr(C)]
pub struct EventInfo {
    new_discrete_states_needed: c_int,
    terminate_simulation: c_int,
    nominals_of_continuous_states_changed: c_int,
    values_of_continuous_states_changed: c_int,
    next_event_time_defined: c_int,
    next_event_time: f64,
}

/// The phases in which the Model Exchange values may be read.
const ME_READ: [Phase; 4] = [
    Phase::Initialization,
    Phase::Event,
    Phase::Continuous,
    Phase::Terminated,
];

/// A Model Exchange array argument of `n` elements, which must be the
/// `expected` count of `what`.
///
/// # Safety
/// A non-null `p` must point to `n` elements.
unsafe fn me_array<'a, T>(
    p: *mut T,
    n: usize,
    expected: usize,
    what: &str,
) -> Result<&'a mut [T], String> {
    if n != expected {
        return Err(format!("{n} {what} asked for, but the FMU has {expected}"));
    }
    if n == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(format!("a null array for {n} {what}"));
    }
    // SAFETY: non-null, `n` elements by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, n) })
}

/// `fmi2EnterEventMode` (Model Exchange).
///
/// # Safety
/// `c` is checked against the live instances.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2EnterEventMode(c: *mut c_void) -> Status {
    with_instance(c, false, |inst| {
        inst.require(&[Phase::Event, Phase::Continuous], "fmi2EnterEventMode")?;
        inst.me()?.enter_event_mode();
        inst.phase = Phase::Event;
        Ok(OK)
    })
}

/// `fmi2NewDiscreteStates` (Model Exchange): one round of the event
/// iteration — `when` clauses whose condition became true fire their
/// `reinit`s, the modes of the relations take their values.
///
/// # Safety
/// `info` null (refused) or an `fmi2EventInfo`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2NewDiscreteStates(c: *mut c_void, info: *mut EventInfo) -> Status {
    with_instance(c, false, |inst| {
        inst.require(&[Phase::Event], "fmi2NewDiscreteStates")?;
        if info.is_null() {
            return Err("fmi2NewDiscreteStates with a null fmi2EventInfo".into());
        }
        // (a failed event iteration leaves the instance failed)
        let outcome = inst.me()?.event_update().inspect_err(|_| {
            inst.phase = Phase::Failed;
        })?;
        // SAFETY: non-null, an `fmi2EventInfo` by the caller's contract.
        let info = unsafe { &mut *info };
        info.new_discrete_states_needed = c_int::from(outcome.needed);
        info.terminate_simulation = 0;
        info.nominals_of_continuous_states_changed = 0;
        info.values_of_continuous_states_changed = c_int::from(outcome.states_changed);
        info.next_event_time_defined = 0;
        info.next_event_time = 0.0;
        Ok(OK)
    })
}

/// `fmi2EnterContinuousTimeMode` (Model Exchange).
///
/// # Safety
/// `c` is checked against the live instances.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2EnterContinuousTimeMode(c: *mut c_void) -> Status {
    with_instance(c, false, |inst| {
        inst.require(&[Phase::Event], "fmi2EnterContinuousTimeMode")?;
        inst.me()?;
        inst.phase = Phase::Continuous;
        Ok(OK)
    })
}

/// `fmi2CompletedIntegratorStep` (Model Exchange): no step event, no
/// termination (the events are the indicators' zero crossings).
///
/// # Safety
/// The flags null or one `fmi2Boolean` each.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2CompletedIntegratorStep(
    c: *mut c_void,
    _no_set_prior: c_int,
    enter_event_mode: *mut c_int,
    terminate_simulation: *mut c_int,
) -> Status {
    with_instance(c, false, |inst| {
        inst.require(&[Phase::Continuous], "fmi2CompletedIntegratorStep")?;
        inst.me()?;
        for flag in [enter_event_mode, terminate_simulation] {
            if !flag.is_null() {
                // SAFETY: non-null, one `fmi2Boolean` by the caller's
                // contract.
                unsafe { *flag = 0 };
            }
        }
        Ok(OK)
    })
}

/// `fmi2SetTime` (Model Exchange).
///
/// # Safety
/// `c` is checked against the live instances.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetTime(c: *mut c_void, time: f64) -> Status {
    with_instance(c, false, |inst| {
        inst.require(&[Phase::Event, Phase::Continuous], "fmi2SetTime")?;
        if !time.is_finite() {
            return Err(format!("fmi2SetTime({time}): the time is not finite"));
        }
        inst.me()?.set_time(time);
        Ok(OK)
    })
}

/// `fmi2SetContinuousStates` (Model Exchange): finite values only.
///
/// # Safety
/// `x` null or of `nx` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetContinuousStates(
    c: *mut c_void,
    x: *const f64,
    nx: usize,
) -> Status {
    with_instance(c, false, |inst| {
        inst.require(
            &[Phase::Event, Phase::Continuous],
            "fmi2SetContinuousStates",
        )?;
        let me = inst.me()?;
        // SAFETY: by the caller's contract (the values are only read).
        let x = unsafe { me_array(x.cast_mut(), nx, me.n_states(), "states")? };
        if let Some(k) = x.iter().position(|v| !v.is_finite()) {
            return Err(format!(
                "fmi2SetContinuousStates: state {k} is {}, not a finite number",
                x[k]
            ));
        }
        me.set_states(x);
        Ok(OK)
    })
}

/// Writes `values` (of the run `get`) into the importer's array `p` of
/// `n` elements, the count of `what`.
///
/// # Safety
/// `p` null or of `n` elements.
unsafe fn me_get(
    c: *mut c_void,
    p: *mut f64,
    n: usize,
    what: &'static str,
    get: impl FnOnce(&mut MeRun) -> Result<Vec<f64>, String>,
) -> Status {
    with_instance(c, false, |inst| {
        inst.require(&ME_READ, what)?;
        let values = get(inst.me()?)?;
        // SAFETY: by the caller's contract.
        let out = unsafe { me_array(p, n, values.len(), what)? };
        out.copy_from_slice(&values);
        Ok(OK)
    })
}

/// `fmi2GetContinuousStates` (Model Exchange).
///
/// # Safety
/// `x` null or of `nx` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetContinuousStates(c: *mut c_void, x: *mut f64, nx: usize) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { me_get(c, x, nx, "states", |me| Ok(me.states())) }
}

/// `fmi2GetDerivatives` (Model Exchange): the algebraic equations solved
/// at the current time and states.
///
/// # Safety
/// `dx` null or of `nx` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetDerivatives(c: *mut c_void, dx: *mut f64, nx: usize) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { me_get(c, dx, nx, "derivatives", MeRun::derivatives) }
}

/// `fmi2GetEventIndicators` (Model Exchange).
///
/// # Safety
/// `z` null or of `ni` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetEventIndicators(c: *mut c_void, z: *mut f64, ni: usize) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { me_get(c, z, ni, "event indicators", MeRun::indicators) }
}

/// `fmi2GetNominalsOfContinuousStates` (Model Exchange).
///
/// # Safety
/// `x` null or of `nx` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetNominalsOfContinuousStates(
    c: *mut c_void,
    x: *mut f64,
    nx: usize,
) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { me_get(c, x, nx, "nominals", |me| Ok(me.nominals())) }
}

/// An unsupported optional function: `fmi2Error` with `why`.
fn unsupported(c: *mut c_void, why: &str) -> Status {
    with_instance(c, false, |_| Err(why.to_string()))
}

/// `fmi2GetStatus`: no asynchronous step, so no status to report.
///
/// # Safety
/// `c` is checked against the live instances.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetStatus(c: *mut c_void, _kind: c_int, _value: *mut c_int) -> Status {
    with_instance(c, false, |_| Ok(DISCARD))
}

/// `fmi2GetRealStatus`: `fmi2LastSuccessfulTime` (kind 2), the time the
/// run has reached.
///
/// # Safety
/// `value` null or one `f64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetRealStatus(c: *mut c_void, kind: c_int, value: *mut f64) -> Status {
    with_instance(c, false, |inst| {
        let t = inst.run.as_ref().map(Run::time);
        match (kind, t) {
            (2, Some(t)) if !value.is_null() => {
                // SAFETY: non-null, one `f64` by the caller's contract.
                unsafe { *value = t };
                Ok(OK)
            }
            _ => Ok(DISCARD),
        }
    })
}

/// `fmi2GetIntegerStatus`: nothing to report.
///
/// # Safety
/// `c` is checked against the live instances.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetIntegerStatus(
    c: *mut c_void,
    _kind: c_int,
    _value: *mut c_int,
) -> Status {
    with_instance(c, false, |_| Ok(DISCARD))
}

/// `fmi2GetBooleanStatus`: nothing to report.
///
/// # Safety
/// `c` is checked against the live instances.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetBooleanStatus(
    c: *mut c_void,
    _kind: c_int,
    _value: *mut c_int,
) -> Status {
    with_instance(c, false, |_| Ok(DISCARD))
}

/// `fmi2GetStringStatus`: nothing to report.
///
/// # Safety
/// `c` is checked against the live instances.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetStringStatus(
    c: *mut c_void,
    _kind: c_int,
    _value: *mut *const c_char,
) -> Status {
    with_instance(c, false, |_| Ok(DISCARD))
}

/// `fmi2SetRealInputDerivatives`: the FMU has no inputs.
///
/// # Safety
/// `c` is checked against the live instances.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetRealInputDerivatives(
    c: *mut c_void,
    _vr: *const c_uint,
    _nvr: usize,
    _order: *const c_int,
    _value: *const f64,
) -> Status {
    unsupported(c, "fmi2SetRealInputDerivatives: the FMU has no inputs")
}

/// `fmi2GetRealOutputDerivatives`: `maxOutputDerivativeOrder` is 0.
///
/// # Safety
/// `c` is checked against the live instances.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetRealOutputDerivatives(
    c: *mut c_void,
    _vr: *const c_uint,
    _nvr: usize,
    _order: *const c_int,
    _value: *mut f64,
) -> Status {
    unsupported(
        c,
        "fmi2GetRealOutputDerivatives: the FMU provides no output derivatives (maxOutputDerivativeOrder = 0)",
    )
}

/// `fmi2GetDirectionalDerivative`: not provided.
///
/// # Safety
/// `c` is checked against the live instances.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetDirectionalDerivative(
    c: *mut c_void,
    _unknown: *const c_uint,
    _n_unknown: usize,
    _known: *const c_uint,
    _n_known: usize,
    _dv_known: *const f64,
    _dv_unknown: *mut f64,
) -> Status {
    unsupported(
        c,
        "fmi2GetDirectionalDerivative: the FMU does not provide directional derivatives",
    )
}

/// `fmi2GetFMUstate`: a copy of the instance's state (its settings, values
/// and the point its run has reached), new or into `*state`.
///
/// # Safety
/// `state` null or a pointer to an FMU state pointer (null or one of
/// ours, checked).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetFMUstate(c: *mut c_void, state: *mut *mut c_void) -> Status {
    with_instance(c, false, |inst| {
        if state.is_null() {
            return Err("fmi2GetFMUstate with a null FMUstate pointer".into());
        }
        let snap = Snapshot {
            set: inst.set.clone(),
            values: inst.values.clone(),
            experiment: inst.experiment,
            point: inst.run.as_ref().map(|r| r.point().clone()),
            me: inst.me.as_ref().map(MeRun::save),
            phase: inst.phase,
        };
        // SAFETY: non-null by the check above; the caller's pointer.
        let old = unsafe { *state };
        if is_live(&STATES, old) {
            // SAFETY: a live `Box<Snapshot>` of ours.
            unsafe { *old.cast::<Snapshot>() = snap };
        } else {
            let p = Box::into_raw(Box::new(snap)).cast::<c_void>();
            registry(&STATES).push(p as usize);
            // SAFETY: non-null, checked above.
            unsafe { *state = p };
        }
        Ok(OK)
    })
}

/// `fmi2SetFMUstate`: back to a state of [`fmi2GetFMUstate`] (the run is
/// built again when the state has other parameters).
///
/// # Safety
/// `state` is checked against the live FMU states.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetFMUstate(c: *mut c_void, state: *mut c_void) -> Status {
    with_instance(c, true, |inst| {
        if !is_live(&STATES, state) {
            return Err("fmi2SetFMUstate with a state that is not one of this FMU's".into());
        }
        // SAFETY: a live `Box<Snapshot>` of ours.
        let snap = unsafe { &*state.cast::<Snapshot>() };
        inst.set.clone_from(&snap.set);
        inst.experiment = snap.experiment;
        if let Some(point) = &snap.point {
            inst.ensure_run()?;
            if let Some(run) = inst.run.as_mut() {
                run.set_point(point.clone());
            }
        }
        if let (Some(me), Some(saved)) = (inst.me.as_mut(), &snap.me) {
            me.restore(saved);
        }
        inst.values.clone_from(&snap.values);
        inst.phase = snap.phase;
        Ok(OK)
    })
}

/// `fmi2FreeFMUstate`.
///
/// # Safety
/// `state` null or a pointer to an FMU state pointer (checked).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2FreeFMUstate(c: *mut c_void, state: *mut *mut c_void) -> Status {
    with_instance(c, false, |_| {
        if state.is_null() {
            return Ok(OK);
        }
        // SAFETY: non-null, the caller's pointer.
        let p = unsafe { *state };
        if p.is_null() {
            return Ok(OK);
        }
        let mut live = registry(&STATES);
        let Some(k) = live.iter().position(|&q| q == p as usize) else {
            return Err("fmi2FreeFMUstate with a state that is not one of this FMU's".into());
        };
        live.swap_remove(k);
        drop(live);
        // SAFETY: a live `Box<Snapshot>` of ours, now out of the registry.
        drop(unsafe { Box::from_raw(p.cast::<Snapshot>()) });
        // SAFETY: non-null, the caller's pointer.
        unsafe { *state = std::ptr::null_mut() };
        Ok(OK)
    })
}

/// `fmi2SerializedFMUstateSize`: `canSerializeFMUstate` is false.
///
/// # Safety
/// `c` is checked against the live instances.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SerializedFMUstateSize(
    c: *mut c_void,
    _state: *mut c_void,
    _size: *mut usize,
) -> Status {
    unsupported(
        c,
        "the FMU cannot serialize its state (canSerializeFMUstate = false)",
    )
}

/// `fmi2SerializeFMUstate`: `canSerializeFMUstate` is false.
///
/// # Safety
/// `c` is checked against the live instances.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SerializeFMUstate(
    c: *mut c_void,
    _state: *mut c_void,
    _bytes: *mut c_char,
    _size: usize,
) -> Status {
    unsupported(
        c,
        "the FMU cannot serialize its state (canSerializeFMUstate = false)",
    )
}

/// `fmi2DeSerializeFMUstate`: `canSerializeFMUstate` is false.
///
/// # Safety
/// `c` is checked against the live instances.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2DeSerializeFMUstate(
    c: *mut c_void,
    _bytes: *const c_char,
    _size: usize,
    _state: *mut *mut c_void,
) -> Status {
    unsupported(
        c,
        "the FMU cannot serialize its state (canSerializeFMUstate = false)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ptr::{null, null_mut};

    /// Cargo's `target/tmp` (unit tests get no `CARGO_TARGET_TMPDIR`): the
    /// test binary runs from `target/<profile>/deps`.
    fn scratch_root() -> PathBuf {
        let exe = std::env::current_exe().unwrap();
        let target = exe
            .ancestors()
            .nth(3)
            .expect("target/<profile>/deps/<binary>");
        target.join("tmp")
    }

    /// A unique directory for one test's resources.
    fn resources(name: &str, model: &str, guid: &str) -> (PathBuf, CString) {
        resources_of(name, model, guid, crate::FmuKind::Cs)
    }

    /// [`resources`] of an FMU of `kind`.
    fn resources_of(
        name: &str,
        model: &str,
        guid: &str,
        kind: crate::FmuKind,
    ) -> (PathBuf, CString) {
        let dir = scratch_root().join(format!("daec-fmu-ffi-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(MODEL_RESOURCE), model).unwrap();
        let options = FmuOptions {
            guid: guid.to_string(),
            form: "hic".into(),
            method: "radau5".into(),
            tableau: None,
            kind,
        };
        std::fs::write(
            dir.join(OPTIONS_RESOURCE),
            serde_json::to_string(&options).unwrap(),
        )
        .unwrap();
        let uri = CString::new(format!("file://{}", dir.display())).unwrap();
        (dir, uri)
    }

    const RC: &str = "model RC\n  parameter Real tau = 1;\n  Real v(start = 0, fixed = true) \"voltage\";\n  Real i;\nequation\n  tau*der(v) = sin(time) - v;\n  i = sin(time) - v;\nend RC;\n";

    fn instantiate(name: &str) -> (*mut c_void, PathBuf) {
        let (dir, uri) = resources(name, RC, "{g}");
        // SAFETY: valid strings, no callbacks.
        let c = unsafe {
            fmi2Instantiate(
                c"t".as_ptr(),
                1,
                c"{g}".as_ptr(),
                uri.as_ptr(),
                null(),
                0,
                0,
            )
        };
        assert!(!c.is_null());
        (c, dir)
    }

    fn last_message(c: *mut c_void) -> String {
        // SAFETY: a live instance of the test.
        unsafe { (*c.cast::<Instance>()).last_message.clone() }
    }

    #[test]
    fn null_and_foreign_components_are_errors_not_crashes() {
        let mut x = 0.0;
        let vr = 0u32;
        let mut bogus = 17u64;
        let foreign = (&raw mut bogus).cast::<c_void>();
        for c in [null_mut(), foreign] {
            // SAFETY: the functions check the component before any use.
            unsafe {
                assert_eq!(fmi2GetReal(c, &vr, 1, &mut x), ERROR);
                assert_eq!(fmi2SetReal(c, &vr, 1, &x), ERROR);
                assert_eq!(fmi2DoStep(c, 0.0, 0.1, 0), ERROR);
                assert_eq!(fmi2EnterInitializationMode(c), ERROR);
                assert_eq!(fmi2Reset(c), ERROR);
                fmi2FreeInstance(c);
            }
        }
        assert_eq!(bogus, 17, "the foreign memory was not touched");
    }

    #[test]
    fn instantiation_refuses_model_exchange_a_wrong_guid_and_missing_resources() {
        let (dir, uri) = resources("refuse", RC, "{g}");
        let missing = CString::new("file:///nonexistent/daec/resources").unwrap();
        for (kind, guid, loc) in [
            (0, c"{g}", uri.as_ptr()),
            (1, c"{other}", uri.as_ptr()),
            (1, c"{g}", missing.as_ptr()),
            (1, c"{g}", null()),
        ] {
            // SAFETY: valid or null strings, no callbacks.
            let c = unsafe { fmi2Instantiate(null(), kind, guid.as_ptr(), loc, null(), 0, 0) };
            assert!(c.is_null());
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn bad_value_references_values_and_arrays_are_errors() {
        let (c, dir) = instantiate("values");
        let tau = 2u32; // v, i, tau
        let mut out = [0.0; 2];
        // SAFETY: arrays of the stated lengths, or null with a check.
        unsafe {
            assert_eq!(fmi2GetReal(c, [0, 99].as_ptr(), 2, out.as_mut_ptr()), ERROR);
            assert!(last_message(c).contains("valueReference 99 is not a variable"));
            assert_eq!(fmi2SetReal(c, &tau, 1, &f64::NAN), ERROR);
            assert!(last_message(c).contains("NaN for `tau` is not a finite number"));
            assert_eq!(fmi2SetReal(c, &tau, 1, &f64::INFINITY), ERROR);
            assert_eq!(fmi2SetReal(c, null(), 1, &1.0), ERROR);
            assert!(last_message(c).contains("null array"));
            assert_eq!(fmi2SetReal(c, null(), 0, null()), OK);
            // `i` has no start value: not settable
            assert_eq!(fmi2SetReal(c, &1, 1, &1.0), ERROR);
            assert!(last_message(c).contains("`i` has no start value"));
            let mut n = 0;
            assert_eq!(fmi2GetInteger(c, &tau, 1, &mut n), ERROR);
            assert!(last_message(c).contains("not a Integer one"));
            // nothing was set by the refused calls
            assert_eq!(fmi2GetReal(c, &tau, 1, out.as_mut_ptr()), OK);
            assert_eq!(out[0], 1.0);
            // out of order: a step before initialisation
            assert_eq!(fmi2DoStep(c, 0.0, 0.1, 0), ERROR);
            assert!(last_message(c).contains("fmi2DoStep is not allowed"));
            fmi2FreeInstance(c);
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn steps_reach_the_exact_solution_and_states_repeat_them() {
        let (c, dir) = instantiate("steps");
        let vr = [0u32, 1];
        let mut out = [0.0; 2];
        let exact = |t: f64| ((t.sin() - t.cos()) + (-t).exp()) / 2.0;
        // SAFETY: arrays of the stated lengths; states from the FMU.
        unsafe {
            assert_eq!(fmi2SetupExperiment(c, 1, 1e-10, 0.0, 0, 0.0), OK);
            assert_eq!(fmi2EnterInitializationMode(c), OK);
            assert_eq!(fmi2ExitInitializationMode(c), OK);
            let mut t = 0.0;
            for _ in 0..5 {
                assert_eq!(fmi2DoStep(c, t, 0.2, 1), OK);
                t += 0.2;
            }
            assert_eq!(fmi2GetReal(c, vr.as_ptr(), 2, out.as_mut_ptr()), OK);
            assert!((out[0] - exact(1.0)).abs() < 1e-8, "{out:?}");
            assert!((out[1] - (1f64.sin() - out[0])).abs() < 1e-12);
            let mut state = null_mut();
            assert_eq!(fmi2GetFMUstate(c, &mut state), OK);
            assert!(!state.is_null());
            assert_eq!(fmi2DoStep(c, t, 0.5, 1), OK);
            let mut first = [0.0; 2];
            assert_eq!(fmi2GetReal(c, vr.as_ptr(), 2, first.as_mut_ptr()), OK);
            assert_eq!(fmi2SetFMUstate(c, state), OK);
            assert_eq!(fmi2DoStep(c, t, 0.5, 1), OK);
            let mut again = [0.0; 2];
            assert_eq!(fmi2GetReal(c, vr.as_ptr(), 2, again.as_mut_ptr()), OK);
            assert_eq!(first, again);
            assert_eq!(fmi2FreeFMUstate(c, &mut state), OK);
            assert!(state.is_null());
            let mut bogus = 5u64;
            assert_eq!(fmi2SetFMUstate(c, (&raw mut bogus).cast()), ERROR);
            assert_eq!(fmi2Terminate(c), OK);
            fmi2FreeInstance(c);
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    /// An `fmi2EventInfo` with every flag `flag` (overwritten by the FMU).
    fn event_info(flag: c_int) -> EventInfo {
        EventInfo {
            new_discrete_states_needed: flag,
            terminate_simulation: flag,
            nominals_of_continuous_states_changed: flag,
            values_of_continuous_states_changed: flag,
            next_event_time_defined: flag,
            next_event_time: f64::from(flag),
        }
    }

    /// An instance of `model` for Model Exchange, initialised and in event
    /// mode, from an FMU of both kinds.
    fn model_exchange(name: &str, model: &str) -> (*mut c_void, PathBuf) {
        let (dir, uri) = resources_of(name, model, "{g}", crate::FmuKind::Both);
        // SAFETY: valid strings, no callbacks.
        let c = unsafe {
            fmi2Instantiate(
                c"me".as_ptr(),
                0,
                c"{g}".as_ptr(),
                uri.as_ptr(),
                null(),
                0,
                0,
            )
        };
        assert!(!c.is_null());
        // SAFETY: a live instance.
        unsafe {
            assert_eq!(fmi2SetupExperiment(c, 1, 1e-10, 0.0, 0, 0.0), OK);
            assert_eq!(fmi2EnterInitializationMode(c), OK);
            assert_eq!(fmi2ExitInitializationMode(c), OK);
        }
        (c, dir)
    }

    #[test]
    fn model_exchange_solves_the_algebraic_unknowns_at_the_given_state() {
        // an index-1 circuit: i is algebraic, v the state
        let (c, dir) = model_exchange("me-rc", RC);
        let mut info = event_info(1);
        let (mut x, mut dx, mut nominal) = ([0.0], [0.0], [0.0]);
        // SAFETY: arrays of the stated lengths, or null with a check.
        unsafe {
            assert_eq!(fmi2NewDiscreteStates(c, &mut info), OK);
            assert_eq!(info.new_discrete_states_needed, 0);
            assert_eq!(info.values_of_continuous_states_changed, 0);
            assert_eq!(fmi2EnterContinuousTimeMode(c), OK);
            assert_eq!(fmi2GetContinuousStates(c, x.as_mut_ptr(), 1), OK);
            assert_eq!(x, [0.0]);
            assert_eq!(
                fmi2GetNominalsOfContinuousStates(c, nominal.as_mut_ptr(), 1),
                OK
            );
            assert_eq!(nominal, [1.0]);
            // tau*der(v) = sin(t) - v, i = sin(t) - v at t = 0.5, v = 0.25
            assert_eq!(fmi2SetTime(c, 0.5), OK);
            assert_eq!(fmi2SetContinuousStates(c, [0.25].as_ptr(), 1), OK);
            assert_eq!(fmi2GetDerivatives(c, dx.as_mut_ptr(), 1), OK);
            let want = 0.5f64.sin() - 0.25;
            assert!((dx[0] - want).abs() < 1e-14, "{dx:?}");
            // v, i, tau, der(v)
            let mut out = [0.0; 4];
            assert_eq!(
                fmi2GetReal(c, [0, 1, 2, 3].as_ptr(), 4, out.as_mut_ptr()),
                OK
            );
            assert_eq!(out[0], 0.25);
            assert!((out[1] - want).abs() < 1e-14 && (out[3] - want).abs() < 1e-14);
            assert_eq!(out[2], 1.0);
            // wrong counts, null arrays and values that are not finite
            assert_eq!(fmi2GetDerivatives(c, dx.as_mut_ptr(), 2), ERROR);
            assert!(last_message(c).contains("2 derivatives asked for, but the FMU has 1"));
            assert_eq!(fmi2GetContinuousStates(c, null_mut(), 1), ERROR);
            assert!(last_message(c).contains("null array"));
            assert_eq!(fmi2SetContinuousStates(c, [f64::NAN].as_ptr(), 1), ERROR);
            assert!(last_message(c).contains("not a finite number"));
            assert_eq!(fmi2SetTime(c, f64::INFINITY), ERROR);
            assert_eq!(fmi2NewDiscreteStates(c, &mut info), ERROR);
            assert!(last_message(c).contains("not allowed in the state Continuous"));
            let mut no_indicators = [0.0; 0];
            assert_eq!(fmi2GetEventIndicators(c, no_indicators.as_mut_ptr(), 0), OK);
            // a Co-Simulation call is out of order (and fails the instance)
            assert_eq!(fmi2DoStep(c, 0.5, 0.1, 1), ERROR);
            assert!(last_message(c).contains("fmi2DoStep is not allowed"));
            assert_eq!(fmi2Terminate(c), OK);
            fmi2FreeInstance(c);
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn model_exchange_events_fire_reinit_and_switch_modes() {
        // a ball: the when clause at the floor, the mode v > 0 of the drag
        let ball = "model Ball\n  Real h(start = 1, fixed = true);\n  Real v(start = 0, fixed = true);\nequation\n  der(h) = v;\n  der(v) = -10 - (if v > 0 then v else -v);\n  when h < 0 then reinit(v, -0.5*v); end when;\nend Ball;\n";
        let (c, dir) = model_exchange("me-ball", ball);
        let mut info = event_info(0);
        let (mut z, mut dx, mut x) = ([0.0; 2], [0.0; 2], [0.0; 2]);
        let (mut enter, mut stop) = (1, 1);
        // SAFETY: arrays of the stated lengths.
        unsafe {
            assert_eq!(fmi2NewDiscreteStates(c, &mut info), OK);
            assert_eq!(fmi2EnterContinuousTimeMode(c), OK);
            assert_eq!(fmi2CompletedIntegratorStep(c, 1, &mut enter, &mut stop), OK);
            assert_eq!((enter, stop), (0, 0));
            // at the floor, falling: h = -1e-13, v = -4
            assert_eq!(fmi2SetTime(c, 0.4), OK);
            assert_eq!(fmi2SetContinuousStates(c, [-1e-13, -4.0].as_ptr(), 2), OK);
            assert_eq!(fmi2GetEventIndicators(c, z.as_mut_ptr(), 2), OK);
            // φ of `h < 0` is -h, of `v > 0` is v
            assert_eq!(z, [1e-13, -4.0]);
            assert_eq!(fmi2GetDerivatives(c, dx.as_mut_ptr(), 2), OK);
            assert_eq!(dx, [-4.0, -10.0 - 4.0]);
            assert_eq!(fmi2EnterEventMode(c), OK);
            assert_eq!(fmi2NewDiscreteStates(c, &mut info), OK);
            assert_eq!(info.values_of_continuous_states_changed, 1);
            assert_eq!(info.new_discrete_states_needed, 1);
            assert_eq!(fmi2GetContinuousStates(c, x.as_mut_ptr(), 2), OK);
            assert_eq!(x, [-1e-13, 2.0]);
            // the second round: v > 0 is now true (the drag changes sign),
            // the clause does not fire again
            assert_eq!(fmi2NewDiscreteStates(c, &mut info), OK);
            assert_eq!(info.values_of_continuous_states_changed, 0);
            assert_eq!(fmi2NewDiscreteStates(c, &mut info), OK);
            assert_eq!(info.new_discrete_states_needed, 0);
            assert_eq!(fmi2EnterContinuousTimeMode(c), OK);
            assert_eq!(fmi2GetDerivatives(c, dx.as_mut_ptr(), 2), OK);
            assert_eq!(dx, [2.0, -10.0 - 2.0]);
            // an FMU state restores the point and the modes
            let mut state = null_mut();
            assert_eq!(fmi2GetFMUstate(c, &mut state), OK);
            assert_eq!(fmi2SetContinuousStates(c, [0.5, -1.0].as_ptr(), 2), OK);
            assert_eq!(fmi2SetFMUstate(c, state), OK);
            assert_eq!(fmi2GetContinuousStates(c, x.as_mut_ptr(), 2), OK);
            assert_eq!(x, [-1e-13, 2.0]);
            assert_eq!(fmi2GetDerivatives(c, dx.as_mut_ptr(), 2), OK);
            assert_eq!(dx, [2.0, -12.0]);
            assert_eq!(fmi2FreeFMUstate(c, &mut state), OK);
            fmi2FreeInstance(c);
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_kind_the_fmu_lacks_is_refused_at_instantiation() {
        let (dir, uri) = resources_of("me-only", RC, "{g}", crate::FmuKind::Me);
        // SAFETY: valid strings, no callbacks.
        unsafe {
            let cs = fmi2Instantiate(null(), 1, c"{g}".as_ptr(), uri.as_ptr(), null(), 0, 0);
            assert!(cs.is_null());
            let me = fmi2Instantiate(null(), 0, c"{g}".as_ptr(), uri.as_ptr(), null(), 0, 0);
            assert!(!me.is_null());
            // the Model Exchange functions on a Co-Simulation instance
            let (c, dir2) = instantiate("me-on-cs");
            let mut dx = [0.0];
            assert_eq!(fmi2EnterInitializationMode(c), OK);
            assert_eq!(fmi2GetDerivatives(c, dx.as_mut_ptr(), 1), ERROR);
            assert!(last_message(c).contains("a Co-Simulation one"));
            fmi2FreeInstance(c);
            fmi2FreeInstance(me);
            let _ = std::fs::remove_dir_all(dir2);
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_co_simulation_instance_of_both_kinds_gives_the_derivatives() {
        let (dir, uri) = resources_of("both-cs", RC, "{g}", crate::FmuKind::Both);
        let mut out = [0.0; 4];
        // SAFETY: valid strings, no callbacks; arrays of the stated lengths.
        unsafe {
            let c = fmi2Instantiate(null(), 1, c"{g}".as_ptr(), uri.as_ptr(), null(), 0, 0);
            assert!(!c.is_null());
            assert_eq!(fmi2SetupExperiment(c, 1, 1e-10, 0.0, 0, 0.0), OK);
            assert_eq!(fmi2EnterInitializationMode(c), OK);
            assert_eq!(fmi2ExitInitializationMode(c), OK);
            assert_eq!(fmi2DoStep(c, 0.0, 0.7, 1), OK);
            // v, i, tau, der(v): der(v) = sin(t) - v at the point reached
            assert_eq!(
                fmi2GetReal(c, [0, 1, 2, 3].as_ptr(), 4, out.as_mut_ptr()),
                OK
            );
            let want = 0.7f64.sin() - out[0];
            assert!((out[3] - want).abs() < 1e-12, "{out:?}");
            assert!((out[1] - want).abs() < 1e-12, "{out:?}");
            fmi2FreeInstance(c);
        }
        let _ = std::fs::remove_dir_all(dir);
    }
}
