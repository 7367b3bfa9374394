//! Work–precision benchmark of daec against Hairer's RADAU5 on the DAE
//! problems of the test set (`models/testset/`), side by side in one
//! process (issue 22, point 4).
//!
//! For every problem and every tolerance `rtol = atol` of the ladder
//! 1e-4 … 1e-10 it runs RADAU5 (the Fortran code, loaded from the shared
//! library `$DAEC_RADAU5_LIB`) on the DAE as written, and daec's
//! integrator as `daec simulate` runs it, with tapes and with the model
//! compiled (`--native`); RADAU5's callbacks call the same kind of
//! rustc-compiled functions as the native run. The three are timed
//! interleaved; the significant correct digits at `t_end` come from the
//! test set's reference solutions. It writes a Markdown table and one SVG
//! per problem. `benches/testset/radau5.sh` builds RADAU5 and runs this;
//! `benches/testset/README.md` says how.
//!
//! ```text
//! cargo bench --bench testset -- [--write-docs | --out DIR] [--tols 4,5,…] [--error-control MODE] [PROBLEM …]
//! cargo bench --bench testset -- --solves N [--tols 4,5,…] [--error-control MODE] [PROBLEM …]
//! cargo bench --bench testset -- --radau5-solves N [--tols 4,5,…] [PROBLEM …]
//! ```
//!
//! With `--solves N` it runs daec `--native` alone, `N` solves per
//! tolerance on one prepared model as the timed runs make them (no RADAU5,
//! no timing), and prints each tolerance's counts and scd (all
//! components, and the positions' of the mechanical problems): the call path
//! of the timed solves for a profiler (README, "Profiling the solves").
//! `--radau5-solves N` does the same for RADAU5 alone.

mod problem;
mod radau5;
mod report;
mod timing;

use daec_cli::native::RustcCompiler;
use daec_solve::ErrorControl;
use problem::Reference;
use radau5::Radau5;
use report::{ProblemReport, SOLVERS, ToleranceRow};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// The problems, in the order of models/README.md.
const PROBLEMS: [&str; 11] = [
    "akzo_nobel",
    "andrews",
    "transistor_amplifier",
    "charge_pump",
    "car_axis",
    "fekete",
    "slider_crank",
    "water_tube",
    "nand_gate",
    "wheelset",
    "two_bit_adder",
];

/// The environment variable with the path of RADAU5's shared library.
const LIBRARY_VAR: &str = "DAEC_RADAU5_LIB";

/// RADAU5 is stopped after this many seconds of one solve (it may take
/// its 100 000 steps of a 350 × 350 system).
const RADAU5_LIMIT: f64 = 60.0;

const USAGE: &str = "usage: cargo bench --bench testset -- [--write-docs | --out DIR] [--tols 4,5,6,7,8,9,10] [--daec-tols 2,3] [--error-control MODE] [PROBLEM ...]
  --write-docs  write docs/benchmarks/testset/ (README.md and one SVG per problem)
  --out DIR     write the table and the plots to DIR (default target/testset-bench)
  --tols LIST   the exponents k of rtol = atol = 1e-k (default 4,5,6,7,8,9,10)
  --daec-tols LIST  further exponents run by daec only (default 2,3; empty: none)
  --error-control MODE  daec's `--error-control` (all, index, differential; default: daec's)
  --solves N    daec --native alone: N solves per tolerance of --tols on one prepared model,
                no RADAU5, no timing, no files; prints the counts and scd (for a profiler)
  --radau5-solves N  the same for RADAU5 alone (needs $DAEC_RADAU5_LIB)
  PROBLEM       file stems of models/testset/ (default: all)
RADAU5's shared library is read from $DAEC_RADAU5_LIB; benches/testset/radau5.sh builds it and runs this benchmark.";

/// The command line.
struct Args {
    out: PathBuf,
    docs: bool,
    tols: Vec<f64>,
    daec_tols: Vec<f64>,
    /// daec's `--error-control` (`None`: its default).
    error_control: Option<ErrorControl>,
    /// `--solves N`: daec `--native` alone, `N` solves per tolerance.
    solves: Option<usize>,
    /// `--radau5-solves N`: RADAU5 alone, `N` solves per tolerance.
    radau5_solves: Option<usize>,
    problems: Vec<String>,
}

/// The tolerances `1e-k` of a comma-separated list of exponents `k`
/// (empty for an empty list).
fn exponents(option: &str, list: &str) -> Result<Vec<f64>, String> {
    list.split(',')
        .filter(|k| !k.trim().is_empty())
        .map(|k| k.trim().parse::<i32>().map(|k| 10f64.powi(-k)))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{option} {list}: {e}"))
}

fn parse_args(root: &Path, args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut out = None;
    let mut docs = false;
    let mut tols: Vec<f64> = (4..=10).map(|k| 10f64.powi(-k)).collect();
    let mut daec_tols: Vec<f64> = (2..=3).map(|k| 10f64.powi(-k)).collect();
    let mut error_control = None;
    let mut solves = None;
    let mut radau5_solves = None;
    let mut problems = Vec::new();
    let mut args = args.peekable();
    while let Some(a) = args.next() {
        match a.as_str() {
            // (cargo bench passes it to every bench target)
            "--bench" => {}
            "--write-docs" => docs = true,
            "--out" => out = Some(PathBuf::from(args.next().ok_or("--out needs a directory")?)),
            "--tols" => {
                let list = args.next().ok_or("--tols needs a list such as 4,6,8")?;
                tols = exponents("--tols", &list)?;
            }
            "--daec-tols" => {
                let list = args.next().ok_or("--daec-tols needs a list such as 2,3")?;
                daec_tols = exponents("--daec-tols", &list)?;
            }
            "--error-control" => {
                let mode = args.next().ok_or("--error-control needs a mode")?;
                error_control = Some(ErrorControl::parse(&mode).ok_or(format!(
                    "--error-control {mode}: the modes are {}",
                    ErrorControl::NAMES.join(", ")
                ))?);
            }
            "--solves" => solves = Some(count(&a, args.next())?),
            "--radau5-solves" => radau5_solves = Some(count(&a, args.next())?),
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            p if p.starts_with('-') => return Err(format!("unknown option `{p}`\n{USAGE}")),
            p => {
                if !PROBLEMS.contains(&p) {
                    return Err(format!(
                        "no problem `{p}`: the problems are {}",
                        PROBLEMS.join(", ")
                    ));
                }
                problems.push(p.to_string());
            }
        }
    }
    if problems.is_empty() {
        problems = PROBLEMS.iter().map(|s| s.to_string()).collect();
    }
    if docs && (solves.is_some() || radau5_solves.is_some()) {
        return Err("--solves and --radau5-solves write no files: not with --write-docs".into());
    }
    if solves.is_some() && radau5_solves.is_some() {
        return Err("--solves and --radau5-solves exclude each other".into());
    }
    let out = match (docs, out) {
        (true, Some(_)) => return Err("--write-docs and --out exclude each other".into()),
        (true, None) => root.join("docs/benchmarks/testset"),
        (false, Some(o)) => o,
        (false, None) => root.join("target/testset-bench"),
    };
    Ok(Args {
        out,
        docs,
        tols,
        daec_tols,
        error_control,
        solves,
        radau5_solves,
        problems,
    })
}

/// The positive number of solves after `option`.
fn count(option: &str, value: Option<String>) -> Result<usize, String> {
    let n = value.ok_or(format!("{option} needs a number of solves"))?;
    n.parse::<usize>()
        .ok()
        .filter(|&n| n > 0)
        .ok_or(format!("{option} {n}: not a positive number"))
}

/// One problem over the ladder.
fn bench_problem(
    root: &Path,
    stem: &str,
    ladder: &[(f64, bool)],
    radau5: &Radau5,
    compiler: &Arc<RustcCompiler>,
    error_control: Option<ErrorControl>,
) -> Result<ProblemReport, String> {
    let (reference, mut dae) = load(&root.join("models/testset"), stem)?;
    let n = dae.unknowns.len();
    let analysis = problem::analyze_model(&mut dae);
    let index = analysis.as_ref().ok().and_then(|a| a.index());
    let setup = problem::as_written(
        &mut dae,
        analysis.as_ref().ok(),
        &reference,
        Some(compiler.as_ref()),
    );
    let (mut tapes, mut native) = match &analysis {
        Ok(a) => match problem::prepare_daec(&mut dae, a, compiler.clone()) {
            Ok((t, nat)) => (Ok(t), nat),
            Err(e) => (Err(e.clone()), Err(e)),
        },
        Err(e) => (Err(e.clone()), Err(e.clone())),
    };
    let radau5_text = match &setup {
        Ok(s) => Ok(format!(
            "the DAE as written, index counts {}/{}/{} {}",
            s.counts[0], s.counts[1], s.counts[2], s.indices_from
        )),
        Err(e) => Err(e.clone()),
    };
    let mut rows = Vec::new();
    for &(tol, with_radau5) in ladder {
        eprintln!("{stem}: tol {tol:e}");
        let ro = problem::daec_options(&dae, tol, error_control);
        let daec_ready = |p: &Result<_, String>| match (p, &ro) {
            (Err(e), _) | (_, Err(e)) => Err(format!("fails: {e}")),
            _ => Ok(()),
        };
        let ready = [
            match (with_radau5, &setup) {
                (false, _) => Err(DAEC_ONLY.to_string()),
                (true, s) => s.as_ref().map(|_| ()).map_err(|e| e.clone()),
            },
            daec_ready(&tapes),
            daec_ready(&native),
        ];
        let cells = timing::measure(ready, &mut |k| match (k, &setup, &ro) {
            (0, Ok(s), _) => s.solve(radau5, tol, &reference, RADAU5_LIMIT),
            (1, _, Ok(ro)) => match &mut tapes {
                Ok(p) => problem::run_daec(&mut dae, p, ro, &reference),
                Err(e) => Err(e.clone()),
            },
            (2, _, Ok(ro)) => match &mut native {
                Ok(p) => problem::run_daec(&mut dae, p, ro, &reference),
                Err(e) => Err(e.clone()),
            },
            _ => Err("not set up".into()),
        });
        for (k, c) in cells.iter().enumerate() {
            match c {
                Ok(m) => eprintln!(
                    "  {:<14} scd {:6.2}  {} solves, {:.3e} s per solve",
                    SOLVERS[k].label(),
                    m.run.accuracy.all,
                    m.solves,
                    m.seconds
                ),
                Err(e) => eprintln!("  {:<14} {e}", SOLVERS[k].label()),
            }
        }
        rows.push(ToleranceRow { tol, cells });
    }
    Ok(ProblemReport {
        stem: stem.to_string(),
        title: reference.problem.clone(),
        n,
        index,
        radau5: radau5_text,
        rows,
    })
}

/// The document's introduction; `{ladder}` is replaced by the
/// tolerances.
const INTRO: &str = "# Work against precision: daec and RADAU5 on the DAE test set

Generated by `benches/testset/radau5.sh --write-docs` (the harness is
`benches/testset/main.rs`; `benches/testset/README.md` says how to reproduce
it). Every problem of `models/testset/` at rtol = atol = {ladder}, the three
codes in one process, and daec alone at {daec_ladder} as well (`--daec-tols`):
daec's default controls the error of every component at the tolerance
except on constrained mechanical systems, which it scales as RADAU5 does
(README, \"Error control\"), where RADAU5 scales the errors of the index-2
and index-3 components by h and h² everywhere, so daec's loosest runs of the
ladder are often more accurate than RADAU5's and the looser ones give the
ratios at RADAU5's accuracies by interpolation instead of a bound:

- **RADAU5**: Hairer's Fortran code (`radau_decsol.f` of the Assimulo 3.0
  source distribution, gfortran -O2) on the test set's formulation
  M y' = f(t, y): the DAE as written in the `.dae` file (M = E, which must
  be constant; f from the residuals), its analytic Jacobian from daec's
  Jacobian patterns as a full matrix (MLJAC = N) and a full M (MLMAS = N),
  the unknowns ordered by Hairer's index with the counts in IWORK(5..7)
  (from daec's offsets where they equal the test set's statement, else
  the statement), h0 = rtol = atol = tol, every other setting RADAU5's
  default; started from the test set's initial values, restarted at the
  time discontinuities where daec's integrator restarts. Its callbacks
  FCN, JAC and MAS evaluate the model's functions compiled by rustc, as
  daec's `--native` run does: the comparison is of the integrators, not of
  the code of the residuals. FCN
  reports a value that is not finite with IPAR(1) = −1 (like the test set's
  IERR), on which RADAU5 halves the step; Assimulo's copy gives up after ten
  such rejections in one integration (IDID = −5). A RADAU5 solve is stopped
  after {limit} s. Where M depends on y, RADAU5 does not apply to the DAE as
  written.
- **daec tapes**: `daec simulate --rtol tol --atol tol --interval t_end
  --max-steps 100000` in the process (`daec_sim::integrate` on the default
  formulation, HiC, evaluated by tapes; the step limit is RADAU5's NMAX).
- **daec --native**: the same with the model compiled by rustc (`daec
  simulate --native`).

scd: significant correct digits at t_end, −log10 of the largest relative
error (absolute where the reference is zero or tiny) over the test set's
components (all of them, or the subset the test set measures:
`scd_components` in the `.ref.json`), as `benches/testset/scd.py` computes
it; \"scd positions\" over the positions of the mechanical problems
(`positions` in the `.ref.json`). Steps: accepted + rejected by the error
test (after the first accepted step), as both codes count them; neither
counts the steps repeated after a Newton failure. Evaluations: of f
(RADAU5) or of the residual (daec) at one point. Time: wall time of the
integration, the median of repeated solves (until they take 0.3 s together
or 20 were made, at least 3), RADAU5 and daec in turn. Times compare only
within these tables (one run, one machine).

The target (issue 22, point 5): at every accuracy RADAU5 reaches, daec
--native reaches it in at most RADAU5's steps and at most half of its time,
and daec reaches accuracies that RADAU5 does not.

## Summary

";

/// The message of RADAU5's cell at a tolerance only daec runs.
const DAEC_ONLY: &str = "not run (daec only)";

/// The tolerances of `--daec-tols` that the ladder does not hold.
fn daec_only(args: &Args) -> Vec<f64> {
    args.daec_tols
        .iter()
        .copied()
        .filter(|t| !args.tols.contains(t))
        .collect()
}

/// The document: introduction, summary and one section per problem.
fn document(problems: &[ProblemReport], svgs: &[Option<String>], args: &Args) -> String {
    let text = |tols: &[f64]| {
        let t: Vec<String> = tols.iter().map(|t| format!("{t:e}")).collect();
        if t.is_empty() {
            "none".to_string()
        } else {
            t.join(", ")
        }
    };
    let mut out = INTRO
        .replace("{ladder}", &text(&args.tols))
        .replace("{daec_ladder}", &text(&daec_only(args)))
        .replace("{limit}", &RADAU5_LIMIT.to_string());
    out.push_str(&report::summary(problems));
    for (p, svg) in problems.iter().zip(svgs) {
        out.push('\n');
        out.push_str(&report::problem_section(p, svg.as_deref()));
    }
    out
}

/// The reference and the model of the problem `stem` of `dir`.
fn load(dir: &Path, stem: &str) -> Result<(Reference, daec_model::Dae), String> {
    let text = std::fs::read_to_string(dir.join(format!("{stem}.ref.json")))
        .map_err(|e| format!("{stem}: cannot read the reference: {e}"))?;
    let reference = Reference::parse(&text).map_err(|e| format!("{stem}.ref.json: {e}"))?;
    let dae = problem::load_model(&dir.join(format!("{stem}.dae")))
        .map_err(|e| format!("{stem}: {e}"))?;
    Ok((reference, dae))
}

/// The line of `--solves` and `--radau5-solves` for the last solve of
/// `stem` at `tol` (`who` before the scd: the solver's name and a space,
/// or nothing).
fn print_solve(stem: &str, tol: f64, who: &str, last: Result<problem::Run, String>) {
    match last {
        Ok(r) => {
            let c = r.counts;
            // (the positions' scd of the mechanical problems)
            let positions = r
                .accuracy
                .positions
                .map_or(String::new(), |p| format!(" (positions {p:.2})"));
            println!(
                "{stem} tol {tol:e}: {who}scd {:.2}{positions}, steps {} + {}, evaluations {}, Jacobians {}, LU {}",
                r.accuracy.all, c.accepted, c.rejected, c.evals, c.jacobians, c.lus
            );
        }
        Err(e) => println!("{stem} tol {tol:e}: {who}fails: {e}"),
    }
}

/// `--solves n`: daec `--native` alone on each problem, `n` solves per
/// tolerance of `--tols` on one prepared model (as [`bench_problem`]'s
/// timed runs make them), the counts and scd of the last on stdout (the
/// positions' scd too where the reference names positions).
fn native_solves(root: &Path, args: &Args, n: usize) -> Result<(), String> {
    let compiler = Arc::new(RustcCompiler::new(None, None));
    let dir = root.join("models/testset");
    for stem in &args.problems {
        let (reference, mut dae) = load(&dir, stem)?;
        let analysis = problem::analyze_model(&mut dae).map_err(|e| format!("{stem}: {e}"))?;
        let (_, native) = problem::prepare_daec(&mut dae, &analysis, compiler.clone())?;
        let mut native = native.map_err(|e| format!("{stem}: {e}"))?;
        for &tol in &args.tols {
            let ro = problem::daec_options(&dae, tol, args.error_control)?;
            let mut last = Err(String::new());
            for _ in 0..n {
                last = problem::run_daec(&mut dae, &mut native, &ro, &reference);
            }
            print_solve(stem, tol, "", last);
        }
    }
    Ok(())
}

/// `--radau5-solves n`: RADAU5 alone on each problem (the DAE as
/// written, as [`bench_problem`] sets it up), `n` solves per tolerance of
/// `--tols`, the counts and scd of the last on stdout.
fn radau5_solves(root: &Path, args: &Args, radau5: &Radau5, n: usize) -> Result<(), String> {
    let compiler = RustcCompiler::new(None, None);
    let dir = root.join("models/testset");
    for stem in &args.problems {
        let (reference, mut dae) = load(&dir, stem)?;
        let analysis = problem::analyze_model(&mut dae).ok();
        let setup = problem::as_written(&mut dae, analysis.as_ref(), &reference, Some(&compiler))
            .map_err(|e| format!("{stem}: RADAU5 {e}"))?;
        for &tol in &args.tols {
            let mut last = Err(String::new());
            for _ in 0..n {
                last = setup.solve(radau5, tol, &reference, RADAU5_LIMIT);
            }
            print_solve(stem, tol, "RADAU5 ", last);
        }
    }
    Ok(())
}

fn run() -> Result<(), String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let args = parse_args(&root, std::env::args().skip(1))?;
    if let Some(n) = args.solves {
        return native_solves(&root, &args, n);
    }
    let library = std::env::var_os(LIBRARY_VAR).filter(|v| !v.is_empty()).ok_or(format!(
        "${LIBRARY_VAR} is not set: it names the shared library of Hairer's RADAU5 that benches/testset/radau5.sh builds (gfortran -O2 -shared -fPIC radau_decsol.f); run that script"
    ))?;
    let radau5 = Radau5::load(Path::new(&library))?;
    if let Some(n) = args.radau5_solves {
        return radau5_solves(&root, &args, &radau5, n);
    }
    let compiler = Arc::new(RustcCompiler::new(None, None));
    let mut ladder: Vec<(f64, bool)> = daec_only(&args).into_iter().map(|t| (t, false)).collect();
    ladder.extend(args.tols.iter().map(|&t| (t, true)));
    ladder.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut problems = Vec::new();
    for stem in &args.problems {
        problems.push(bench_problem(
            &root,
            stem,
            &ladder,
            &radau5,
            &compiler,
            args.error_control,
        )?);
    }
    std::fs::create_dir_all(&args.out)
        .map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;
    let mut svgs = Vec::new();
    for p in &problems {
        let file = format!("{}.svg", p.stem);
        let svg = report::svg(p)?;
        if let Some(svg) = &svg {
            let path = args.out.join(&file);
            std::fs::write(&path, svg)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        svgs.push(svg.map(|_| file));
    }
    let text = document(&problems, &svgs, &args);
    let path = args.out.join("README.md");
    std::fs::write(&path, &text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    print!("{}", report::summary(&problems));
    eprintln!(
        "wrote {}{}",
        path.display(),
        if args.docs {
            " (the project's docs)"
        } else {
            ""
        }
    );
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
