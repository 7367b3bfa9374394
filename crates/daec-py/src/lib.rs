//! The extension module `daec._daec` of the Python package `daec`
//! (python/daec): it runs `daec` command lines in-process through
//! [`daec_cli::run_embedded`] — the commands of the command line,
//! so that the numbers are the CLI's to the last digit — with the GIL
//! released, and hands the outcome to Python: the results of `simulate`
//! as numpy arrays, without copying the time column. The options, the
//! `Result` class and the exceptions are Python (python/daec/__init__.py).

use daec_cli::{Embedded, ModelText, SharedAnalysis, run_embedded, run_embedded_shared};
use numpy::{PyArray1, PyArrayMethods};
use pyo3::IntoPyObjectExt;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::ffi::OsString;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The model text given under `name`, if any.
fn model_text(name: Option<String>, text: Option<String>) -> Option<ModelText> {
    Some(ModelText {
        name: name?,
        text: text?,
    })
}

fn os_args(args: Vec<String>) -> Vec<OsString> {
    args.into_iter().map(OsString::from).collect()
}

/// Runs one `daec` command line (`args`, with the program name); with
/// `text`, the model argument `name` is that text instead of a file.
/// Returns `(code, stdout, stderr, diagnostics, simulation)`: the exit
/// code, the output, the rendered diagnostics, the diagnostics as dicts
/// (`severity`, `code`, `message`, `file`, `line`, `column`) and, for
/// `simulate`, `(names, time, values, stats_json, failure)` with `values`
/// of shape (times, names) and `failure` `None` or `(time, cause,
/// message)`. The GIL is released while the command runs.
#[pyfunction]
#[pyo3(signature = (args, name=None, text=None))]
fn run<'py>(
    py: Python<'py>,
    args: Vec<String>,
    name: Option<String>,
    text: Option<String>,
) -> PyResult<Bound<'py, PyAny>> {
    let source = model_text(name, text);
    let out = py.detach(move || run_embedded(os_args(args), source));
    to_python(py, out)
}

/// Runs the command lines `runs` (`simulate` with the same model and
/// options, other `-p` values) on `workers` threads (at least 1), each
/// as [`run`] does, the model read once and its structural analysis and
/// prepared simulation shared ([`SharedAnalysis`]): with `text` the model argument `name` is
/// that text; without it, the file `name` is read here once (each run
/// reads it itself when it cannot be read as UTF-8). Returns the
/// outcomes in the order of `runs`, how many runs reused the analysis,
/// how many the prepared simulation ([`SharedAnalysis::rebound`]) and
/// how many runs prepared the model in full
/// ([`SharedAnalysis::preparations`]: 1 when all shared it). The GIL is
/// released while the commands run.
#[pyfunction]
#[pyo3(signature = (runs, name, text=None, workers=1))]
fn run_many<'py>(
    py: Python<'py>,
    runs: Vec<Vec<String>>,
    name: String,
    text: Option<String>,
    workers: usize,
) -> PyResult<(Bound<'py, PyList>, usize, usize, usize)> {
    let (outs, reused, rebound, preparations) = py.detach(move || {
        let source = match text {
            Some(text) => Some(ModelText { name, text }),
            None => ModelText::read(&name),
        };
        let shared = Arc::new(SharedAnalysis::new());
        let outs = parallel(runs, source, workers, &shared);
        let counts = (shared.reused(), shared.rebound(), shared.preparations());
        (outs, counts.0, counts.1, counts.2)
    });
    let items = outs
        .into_iter()
        .map(|out| to_python(py, out))
        .collect::<PyResult<Vec<_>>>()?;
    Ok((PyList::new(py, items)?, reused, rebound, preparations))
}

/// Runs each command line of `runs` on one of `workers` scoped threads
/// (each takes the next run not yet taken), sharing `shared`, the
/// outcomes in the order of `runs`.
fn parallel(
    runs: Vec<Vec<String>>,
    source: Option<ModelText>,
    workers: usize,
    shared: &Arc<SharedAnalysis>,
) -> Vec<Embedded> {
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<Embedded>>> = runs.iter().map(|_| Mutex::new(None)).collect();
    let workers = workers.clamp(1, runs.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(args) = runs.get(k) else { break };
                    let out = run_embedded_shared(os_args(args.clone()), source.clone(), shared);
                    if let Ok(mut slot) = slots[k].lock() {
                        *slot = Some(out);
                    }
                }
            });
        }
    });
    slots
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .ok()
                .flatten()
                .unwrap_or_else(|| Embedded {
                    code: 101,
                    stdout: Vec::new(),
                    stderr: "error: a run of simulate_many ended without an outcome\n".into(),
                    diagnostics: Vec::new(),
                    simulation: None,
                })
        })
        .collect()
}

/// The outcome as the tuple [`run`] returns.
fn to_python(py: Python<'_>, out: Embedded) -> PyResult<Bound<'_, PyAny>> {
    let diagnostics = out
        .diagnostics
        .iter()
        .map(|d| {
            let dict = PyDict::new(py);
            dict.set_item("severity", d.severity)?;
            dict.set_item("code", &d.code)?;
            dict.set_item("message", &d.message)?;
            dict.set_item("file", &d.file)?;
            dict.set_item("line", d.line)?;
            dict.set_item("column", d.column)?;
            Ok(dict)
        })
        .collect::<PyResult<Vec<_>>>()?;
    let simulation = match out.simulation {
        None => None,
        Some(sim) => {
            let results = sim.results;
            let (rows, cols) = (results.t.len(), results.names.len());
            let values: Vec<f64> = results.z.into_iter().flatten().collect();
            let values = if values.len() == rows * cols {
                PyArray1::from_vec(py, values).reshape([rows, cols])?
            } else {
                return Err(pyo3::exceptions::PyRuntimeError::new_err(
                    "the results of the run have rows of unequal length",
                ));
            };
            let time = PyArray1::from_vec(py, results.t);
            let failure = sim.failure.map(|f| (f.time, f.cause, f.message));
            Some((results.names, time, values, sim.stats_json, failure))
        }
    };
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.code, stdout, out.stderr, diagnostics, simulation).into_bound_py_any(py)
}

/// The extension module `daec._daec`.
#[pymodule]
fn _daec(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_many, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
