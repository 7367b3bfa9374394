//! One problem of the test set for the benchmark: the model through daec's
//! front end, its reference solution and accuracy measure, daec's runs
//! (tapes and native code) and the formulation RADAU5 integrates.

use crate::radau5::{Counters, Radau5, System};
use daec_diag::SourceMap;
use daec_expr::Leaf;
use daec_model::{Dae, LowerOptions};
use daec_regularize::{Analysis, AnalyzeOptions, Outcome, analyze};
use daec_regularize::{
    Form, FormEquation, FormUnknown, Formulation, RowKind, RowSource, UnknownKind,
};
use daec_sim::{
    FormProblem, NativeCompiler, Prepared, ResolvedOptions, SimOptions, integrate, prepare_form,
    resolve_options,
};
use daec_sim::{discontinuities, time_conditions};
use daec_solve::{ErrorControl, QuasiLinearDae};
use std::cell::RefCell;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// A reference solution, `models/testset/<problem>.ref.json`
/// (models/README.md).
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// The problem's name in the test set.
    pub problem: String,
    /// The end of the interval.
    pub t_end: f64,
    /// Every component at `t_end`, by the model's unknown names.
    pub values: Vec<(String, f64)>,
    /// The components the test set measures, where it measures a subset.
    pub scd_components: Option<Vec<String>>,
    /// The position components of a mechanical problem.
    pub positions: Option<Vec<String>>,
    /// The test set's numbers of index-1, -2 and -3 variables, which come
    /// first, second and third in its `y` (its drivers' `IWORK(5..7)`).
    pub index_counts: Option<[usize; 3]>,
}

/// Significant correct digits at `t_end` over all measured components
/// and over the positions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Accuracy {
    /// Over the test set's components (`scd_components`, else all).
    pub all: f64,
    /// Over the positions, for the mechanical problems.
    pub positions: Option<f64>,
}

fn names_of(v: &serde_json::Value, key: &str) -> Result<Option<Vec<String>>, String> {
    let Some(list) = v.get(key) else {
        return Ok(None);
    };
    let list = list.as_array().ok_or(format!("`{key}` is not a list"))?;
    list.iter()
        .map(|n| n.as_str().map(str::to_string))
        .collect::<Option<Vec<_>>>()
        .map(Some)
        .ok_or(format!("`{key}` holds a non-string"))
}

impl Reference {
    /// Reads the JSON text of a reference file.
    pub fn parse(text: &str) -> Result<Reference, String> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let problem = v["problem"].as_str().ok_or("no `problem`")?.to_string();
        let t_end = v["t_end"].as_f64().ok_or("no `t_end`")?;
        let values = v["reference"]
            .as_object()
            .ok_or("no `reference`")?
            .iter()
            .map(|(k, x)| x.as_f64().map(|x| (k.clone(), x)))
            .collect::<Option<Vec<_>>>()
            .ok_or("a reference value is not a number")?;
        let index_counts = match v.get("index_counts") {
            None => None,
            Some(c) => {
                let c: Option<Vec<usize>> = c
                    .as_array()
                    .and_then(|a| a.iter().map(|x| x.as_u64().map(|x| x as usize)).collect());
                Some(
                    c.and_then(|c| <[usize; 3]>::try_from(c).ok())
                        .ok_or("`index_counts` is not three counts")?,
                )
            }
        };
        Ok(Reference {
            problem,
            t_end,
            values,
            scd_components: names_of(&v, "scd_components")?,
            positions: names_of(&v, "positions")?,
            index_counts,
        })
    }

    /// The significant correct digits of `value` over the components
    /// `names`, as `benches/testset/scd.py` computes them:
    /// `−log10(max_i e_i)` with `e_i` the relative error, the absolute one
    /// where the reference is zero or tiny (`|ref_i| ≤ 1e-10·max_j |ref_j|`);
    /// `−∞` for a value that is not finite.
    pub fn scd(
        &self,
        names: &[String],
        value: &dyn Fn(&str) -> Option<f64>,
    ) -> Result<f64, String> {
        let mut refs = Vec::with_capacity(names.len());
        for n in names {
            let r = self
                .values
                .iter()
                .find(|(k, _)| k == n)
                .map(|&(_, r)| r)
                .ok_or(format!("no reference value for `{n}`"))?;
            let y = value(n).ok_or(format!("no value for `{n}`"))?;
            refs.push((r, y));
        }
        let tiny = 1e-10 * refs.iter().fold(0.0f64, |m, &(r, _)| m.max(r.abs()));
        let worst = refs.iter().fold(0.0f64, |m, &(r, y)| {
            let e = (y - r).abs();
            let e = if r.abs() > tiny { e / r.abs() } else { e };
            if e.is_nan() { f64::INFINITY } else { m.max(e) }
        });
        Ok(if worst == 0.0 {
            f64::INFINITY
        } else {
            -worst.log10()
        })
    }

    /// [`Reference::scd`] over the test set's components and over the
    /// positions.
    pub fn accuracy(&self, value: &dyn Fn(&str) -> Option<f64>) -> Result<Accuracy, String> {
        let all: Vec<String> = match &self.scd_components {
            Some(c) => c.clone(),
            None => self.values.iter().map(|(k, _)| k.clone()).collect(),
        };
        let positions = match &self.positions {
            Some(p) => Some(self.scd(p, value)?),
            None => None,
        };
        Ok(Accuracy {
            all: self.scd(&all, value)?,
            positions,
        })
    }
}

/// The model at `path` parsed, lowered and reduced to first order, or the
/// first error.
pub fn load_model(path: &Path) -> Result<Dae, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut map = SourceMap::new();
    let file = map.add(path.display().to_string(), text);
    let parsed = daec_syntax::parse(file, map.source(file));
    let error =
        |d: &[daec_diag::Diagnostic]| d.iter().find(|d| d.is_error()).map(|d| d.message.clone());
    if let Some(e) = error(&parsed.diagnostics) {
        return Err(e);
    }
    let model = parsed.model.ok_or("the file holds no model")?;
    let (dae, diagnostics) = daec_model::lower(&model, &LowerOptions::default());
    if let Some(e) = error(&diagnostics) {
        return Err(e);
    }
    let mut dae = dae.ok_or("the model does not lower")?;
    daec_sim::reduce_to_first_order(&mut dae);
    Ok(dae)
}

/// daec's analysis of `dae`, or why `daec simulate` stops after it.
pub fn analyze_model(dae: &mut Dae) -> Result<Analysis, String> {
    let analysis = analyze(dae, &AnalyzeOptions::default());
    if let Outcome::Singular(_) = &analysis.outcome {
        return Err("the model is structurally singular".into());
    }
    if analysis.regular().is_some_and(|r| r.success.singular()) {
        return Err("the Σ-Jacobian is singular at the consistent initial point".into());
    }
    Ok(analysis)
}

/// The work of one solve.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counts {
    /// Accepted steps.
    pub accepted: usize,
    /// Steps rejected by the error test (after the first accepted one).
    pub rejected: usize,
    /// Evaluations of the residual (daec) or of `f` (RADAU5) at one point.
    pub evals: usize,
    /// Jacobian evaluations.
    pub jacobians: usize,
    /// LU decompositions (a real and a complex one counted as one).
    pub lus: usize,
}

/// One solve: its accuracy at `t_end`, its work and its wall time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Run {
    /// Significant correct digits.
    pub accuracy: Accuracy,
    /// Work counters.
    pub counts: Counts,
    /// Wall time of the integration, seconds.
    pub seconds: f64,
}

/// `daec simulate`'s default formulation prepared twice: evaluated by
/// tapes, and with the functions compiled by rustc (`--native`).
pub fn prepare_daec(
    dae: &mut Dae,
    analysis: &Analysis,
    compiler: Arc<dyn NativeCompiler>,
) -> Result<(Prepared, Result<Prepared, String>), String> {
    let form = daec_sim::default_form(daec_sim::Method::default());
    let tapes = prepare_form(dae, analysis, form).map_err(|e| e.to_string())?;
    let native = prepare_form(dae, analysis, form)
        .and_then(|mut p| p.compile_native(dae, compiler).map(|()| p))
        .map_err(|e| e.to_string());
    Ok((tapes, native))
}

/// The step attempts a daec solve may make: RADAU5's default limit
/// (NMAX = 100 000), which its solves in this benchmark keep.
pub const DAEC_MAX_STEPS: usize = 100_000;

/// The options of `daec simulate --rtol tol --atol tol --interval t_end
/// --max-steps 100000` (one output interval: results at `t0` and `t_end`
/// only; the step limit RADAU5's, [`DAEC_MAX_STEPS`]), with
/// `--error-control` when `error_control` is given.
pub fn daec_options(
    dae: &Dae,
    tol: f64,
    error_control: Option<ErrorControl>,
) -> Result<ResolvedOptions, String> {
    let span = resolve_options(dae, &SimOptions::default()).map_err(|e| e.to_string())?;
    resolve_options(
        dae,
        &SimOptions {
            rtol: Some(tol),
            atol: Some(tol),
            interval: Some(span.t_end - span.t0),
            max_steps: Some(DAEC_MAX_STEPS),
            error_control,
            ..SimOptions::default()
        },
    )
    .map_err(|e| e.to_string())
}

/// One run of daec's integrator (`daec_sim::integrate`, as `daec
/// simulate` calls it) on `prepared`.
pub fn run_daec(
    dae: &mut Dae,
    prepared: &mut Prepared,
    ro: &ResolvedOptions,
    reference: &Reference,
) -> Result<Run, String> {
    let clock = Instant::now();
    let sim = integrate(dae, prepared, ro).map_err(|e| e.to_string())?;
    let seconds = clock.elapsed().as_secs_f64();
    let last = sim.results.t.last().copied().unwrap_or(ro.t0);
    if let Some(f) = &sim.failure {
        return Err(format!("{f} (last output at t = {last:e})"));
    }
    if last != ro.t_end {
        return Err(format!(
            "the run ends at t = {last:e}, not at {:e}",
            ro.t_end
        ));
    }
    let end = sim.results.z.last();
    let value = |name: &str| Some(*end?.get(sim.results.column(name)?)?);
    let s = &sim.stats;
    Ok(Run {
        accuracy: reference.accuracy(&value)?,
        counts: Counts {
            accepted: s.steps_accepted,
            rejected: s.steps_rejected,
            evals: s.residual_evals,
            jacobians: s.jacobian_evals,
            lus: s.lu_decompositions,
        },
        seconds,
    })
}

/// Hairer's index of each unknown from daec's offsets:
/// `max(1, max_i c_i + 1 − d_j)`, which is 1 for the states and the
/// algebraic unknowns of an index-1 system, and 2 and 3 for the unknowns
/// that take one or two more differentiations (the velocities and
/// multipliers of an index-3 mechanical system, the multipliers of an
/// index-2 one). It gives every algebraic unknown of an index-2 system
/// index 2, also those an index-1 equation determines (the water tube's
/// friction coefficients); the test set's statement then serves.
pub fn offset_indices(analysis: &Analysis) -> Option<Vec<usize>> {
    let offsets = &analysis.regular()?.sigma.offsets;
    let c_max = offsets.c.iter().copied().max().unwrap_or(0) as usize;
    Some(
        offsets
            .d
            .iter()
            .map(|&d| (c_max + 1).saturating_sub(d as usize).max(1))
            .collect(),
    )
}

/// The indices the test set states: its `y` holds `counts[0]` index-1
/// unknowns, then `counts[1]` of index 2, then `counts[2]` of index 3.
fn stated_indices(counts: [usize; 3]) -> Vec<usize> {
    (1..=3)
        .flat_map(|k| std::iter::repeat_n(k, counts[k - 1]))
        .collect()
}

/// The number of index-1, -2, -3 unknowns of `indices`.
fn counts_of(indices: &[usize]) -> [usize; 3] {
    let mut c = [0; 3];
    for &i in indices {
        c[(i.clamp(1, 3)) - 1] += 1;
    }
    c
}

/// The rows of `dae` as written: differential where a derivative occurs,
/// else a level-0 constraint; in the model's unknowns.
fn as_written_formulation(dae: &Dae) -> Formulation {
    let has_derivative = |r| {
        dae.pool
            .leaves(r)
            .into_iter()
            .any(|l| matches!(dae.pool.as_leaf(l), Some(Leaf::Var { order, .. }) if order >= 1))
    };
    Formulation {
        form: Form::Index3,
        unknowns: dae
            .unknowns
            .iter()
            .enumerate()
            .map(|(j, u)| FormUnknown {
                name: u.name().into_owned(),
                kind: UnknownKind::Original(j),
            })
            .collect(),
        equations: dae
            .equations
            .iter()
            .enumerate()
            .map(|(i, e)| FormEquation {
                residual: e.residual,
                kind: if has_derivative(e.residual) {
                    RowKind::Differential
                } else {
                    RowKind::Constraint { level: 0 }
                },
                source: RowSource {
                    equation: i,
                    derivative: 0,
                },
            })
            .collect(),
        hvt: None,
        limits: Vec::new(),
    }
}

/// Buffers of the callbacks (`System` takes `&self`).
#[derive(Debug, Default)]
struct Work {
    z: Vec<f64>,
    zero: Vec<f64>,
    out: Vec<f64>,
    jd: Vec<f64>,
    jg: Vec<f64>,
}

/// The problem as the test set's drivers give it to RADAU5: the DAE as
/// written, `M y' = f(t, y)` with `M = E` constant, `f = k` on the
/// differential rows and `f = −g` on the algebraic ones, its unknowns
/// ordered by Hairer's index; evaluated by the same native code as daec's
/// `--native` runs (the rows compiled by rustc through `daec_sim`).
#[derive(Debug)]
pub struct AsWritten {
    problem: FormProblem,
    n_diff: usize,
    /// `perm[p]`: the unknown at RADAU5's position `p`.
    perm: Vec<usize>,
    /// `pos[j]`: RADAU5's position of unknown `j`.
    pos: Vec<usize>,
    /// The number of index-1, -2 and -3 unknowns.
    pub counts: [usize; 3],
    /// Where the indices come from (for the report).
    pub indices_from: String,
    names: Vec<String>,
    y0: Vec<f64>,
    t0: f64,
    /// The ends of the pieces RADAU5 integrates: the time discontinuities
    /// daec's integrator restarts at, then `t_end`.
    breaks: Vec<f64>,
    mass_pattern: Vec<(usize, usize)>,
    jd_pattern: Vec<(usize, usize)>,
    jg_pattern: Vec<(usize, usize)>,
    work: RefCell<Work>,
}

/// Why RADAU5 is not run on a problem, or how it is set up.
pub type Setup = Result<AsWritten, String>;

/// Builds [`AsWritten`] for `dae` (its `analysis` gives the variable
/// indices where daec analyses the model; where they disagree with the
/// test set's statement in `reference`, the statement serves and the
/// report says so), its functions compiled by `compiler`
/// (tapes without one). `Err` says why RADAU5 does not apply.
pub fn as_written(
    dae: &mut Dae,
    analysis: Option<&Analysis>,
    reference: &Reference,
    compiler: Option<&dyn NativeCompiler>,
) -> Setup {
    let n = dae.unknowns.len();
    let ql = as_written_formulation(dae)
        .quasi_linear(&mut dae.pool)
        .map_err(|e| format!("not applicable: {}", e.cause))?;
    if ql.n() != n || ql.diff.len() + ql.constraints.len() != n {
        return Err(format!(
            "not applicable: the DAE as written is not of the form M y' = f(t, y) in its {n} unknowns"
        ));
    }
    let mut depends = (false, false);
    for &(_, e) in ql.diff.iter().flat_map(|r| &r.mass) {
        for l in dae.pool.leaves(e) {
            match dae.pool.as_leaf(l) {
                Some(Leaf::Var { .. }) => depends.0 = true,
                Some(Leaf::Time) => depends.1 = true,
                _ => {}
            }
        }
    }
    match depends {
        (true, _) => return Err("not applicable (M depends on y)".into()),
        (_, true) => return Err("not applicable (M depends on t)".into()),
        _ => {}
    }
    let stated = reference
        .index_counts
        .filter(|c| c.iter().sum::<usize>() == n)
        .map(stated_indices);
    let (indices, indices_from) = match (analysis.and_then(offset_indices), stated) {
        // (the test set's drivers' setting; the model's unknowns are in
        // the order of the test set's `y`)
        (Some(daec), Some(stated)) if daec != stated => {
            let [a, b, c] = counts_of(&daec);
            let text = format!("the test set's (daec's offsets give {a}/{b}/{c})");
            (stated, text)
        }
        (Some(daec), Some(_)) => (daec, "from daec's offsets, equal to the test set's".into()),
        (Some(daec), None) => (daec, "from daec's offsets".into()),
        (None, Some(stated)) => (
            stated,
            "the test set's (daec does not analyse the model)".into(),
        ),
        (None, None) => return Err("not run: no variable indices".into()),
    };
    let mut perm: Vec<usize> = (0..n).collect();
    perm.sort_by_key(|&j| indices[j]);
    let mut pos = vec![0; n];
    for (p, &j) in perm.iter().enumerate() {
        pos[j] = p;
    }
    let params = dae.parameter_values();
    let mut problem =
        FormProblem::new(&mut dae.pool, &ql, params.clone()).map_err(|e| e.to_string())?;
    if let Some(compiler) = compiler {
        let title = format!("model `{}`, as written", dae.name);
        let source = problem.native_source(&dae.pool, &title);
        compiler
            .compile(&source)
            .and_then(|code| problem.set_native(code))
            .map_err(|e| e.to_string())?;
    }
    let span = resolve_options(dae, &SimOptions::default()).map_err(|e| e.to_string())?;
    let mut roots: Vec<_> = ql.diff.iter().map(|r| r.residual).collect();
    roots.extend(ql.constraints.iter().map(|c| c.expr));
    let conditions = time_conditions(&dae.pool, &roots);
    // (pieces shorter than RADAU5's smallest step are left out: the
    // solution does not change across them)
    let tiny = 1e-12
        * span
            .t_end
            .abs()
            .max(span.t0.abs())
            .max(span.t_end - span.t0);
    let mut breaks: Vec<f64> = Vec::new();
    for b in discontinuities(&dae.pool, &conditions, &params, span.t0, span.t_end) {
        let after = breaks.last().copied().unwrap_or(span.t0);
        if b > after + tiny && b < span.t_end - tiny {
            breaks.push(b);
        }
    }
    breaks.push(span.t_end);
    let work = Work {
        z: vec![0.0; n],
        zero: vec![0.0; n],
        out: vec![0.0; n],
        jd: vec![0.0; problem.diff_jacobian_pattern().len()],
        jg: vec![0.0; problem.constraint_jacobian_pattern().len()],
    };
    Ok(AsWritten {
        n_diff: ql.diff.len(),
        perm,
        pos,
        counts: counts_of(&indices),
        indices_from,
        names: dae.unknowns.iter().map(|u| u.name().into_owned()).collect(),
        y0: dae
            .unknowns
            .iter()
            .map(|u| u.start().unwrap_or(0.0))
            .collect(),
        t0: span.t0,
        breaks,
        mass_pattern: problem.mass_pattern(),
        jd_pattern: problem.diff_jacobian_pattern(),
        jg_pattern: problem.constraint_jacobian_pattern(),
        work: RefCell::new(work),
        problem,
    })
}

impl AsWritten {
    /// `y` in RADAU5's order into `work.z` (the model's order).
    fn scatter(&self, y: &[f64], z: &mut [f64]) {
        for (p, &j) in self.perm.iter().enumerate() {
            z[j] = y[p];
        }
    }

    /// The start values (the test set's `y0`) in RADAU5's order.
    pub fn y0(&self) -> Vec<f64> {
        self.perm.iter().map(|&j| self.y0[j]).collect()
    }

    /// One integration by RADAU5 over `[t0, t_end]` at `rtol = atol = h0
    /// = tol`, restarted at the breaks, stopped after `limit` seconds.
    pub fn solve(
        &self,
        radau5: &Radau5,
        tol: f64,
        reference: &Reference,
        limit: f64,
    ) -> Result<Run, String> {
        let mut y = self.y0();
        let clock = Instant::now();
        let deadline = clock.checked_add(std::time::Duration::from_secs_f64(limit));
        let mut total = Counters::default();
        let mut t = self.t0;
        for &b in &self.breaks {
            total += radau5.solve(self, (t, b), &mut y, tol, self.counts, deadline)?;
            t = b;
        }
        let seconds = clock.elapsed().as_secs_f64();
        let value = |name: &str| {
            let j = self.names.iter().position(|n| n == name)?;
            y.get(self.pos[j]).copied()
        };
        Ok(Run {
            accuracy: reference.accuracy(&value)?,
            counts: Counts {
                accepted: total.accepted,
                rejected: total.rejected,
                evals: total.fcn,
                jacobians: total.jac,
                lus: total.lu,
            },
            seconds,
        })
    }
}

impl System for AsWritten {
    fn n(&self) -> usize {
        self.perm.len()
    }

    fn rhs(&self, t: f64, y: &[f64], f: &mut [f64]) -> bool {
        let mut w = self.work.borrow_mut();
        let Work { z, zero, out, .. } = &mut *w;
        self.scatter(y, z);
        // [E·0 − k; g] = [−k; g]
        self.problem.residual(t, z, zero, out);
        for (fi, r) in f.iter_mut().zip(out.iter()) {
            *fi = -r;
        }
        f.iter().all(|v| v.is_finite())
    }

    fn jacobian(&self, t: f64, y: &[f64], dfy: &mut [f64]) {
        let n = self.n();
        let mut w = self.work.borrow_mut();
        let Work {
            z, zero, jd, jg, ..
        } = &mut *w;
        self.scatter(y, z);
        self.problem.diff_jacobian_values(t, z, zero, jd);
        self.problem.constraint_jacobian_values(t, z, jg);
        dfy.fill(0.0);
        let rows = self
            .jd_pattern
            .iter()
            .zip(jd.iter())
            .map(|(&(i, j), &v)| (i, j, v));
        let constraint_rows = self
            .jg_pattern
            .iter()
            .zip(jg.iter())
            .map(|(&(r, j), &v)| (self.n_diff + r, j, v));
        for (i, j, v) in rows.chain(constraint_rows) {
            dfy[self.pos[j] * n + i] -= v;
        }
    }

    fn mass(&self, am: &mut [f64]) {
        let n = self.n();
        let mut values = vec![0.0; self.mass_pattern.len()];
        // constant: any point serves
        self.problem.mass_values(self.t0, &self.y0, &mut values);
        am.fill(0.0);
        for (&(i, j), v) in self.mass_pattern.iter().zip(values) {
            am[self.pos[j] * n + i] += v;
        }
    }
}
