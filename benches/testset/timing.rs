//! Timing: every solver of a problem and tolerance solved in turn until
//! each is timed enough; the median time per solve.

use crate::problem::Run;
use crate::report::{Cell, Measured};

/// A timed solve is repeated until the solves take this long together …
pub const MIN_SECONDS: f64 = 0.3;
/// … or this many were made, …
pub const MAX_SOLVES: usize = 20;
/// … but at least this many.
pub const MIN_SOLVES: usize = 3;

/// Whether a solver has been timed enough.
pub fn timed_enough(times: &[f64]) -> bool {
    let n = times.len();
    n >= MIN_SOLVES && (n >= MAX_SOLVES || times.iter().sum::<f64>() >= MIN_SECONDS)
}

/// The median of `times` (sorts them).
pub fn median(times: &mut [f64]) -> f64 {
    times.sort_by(f64::total_cmp);
    let n = times.len();
    if n % 2 == 1 {
        times[n / 2]
    } else {
        0.5 * (times[n / 2 - 1] + times[n / 2])
    }
}

/// Runs `solve(k)` for the solvers `k` that `ready` admits, interleaved
/// (one solve of each in turn) until each is timed enough; a solver that
/// fails is not run again.
pub fn measure(
    ready: [Result<(), String>; 3],
    solve: &mut dyn FnMut(usize) -> Result<Run, String>,
) -> [Cell; 3] {
    let mut first: [Option<Run>; 3] = [None; 3];
    let mut times: [Vec<f64>; 3] = Default::default();
    let mut cells: [Option<Cell>; 3] = ready.map(|r| r.err().map(Err));
    loop {
        let mut ran = false;
        for k in 0..3 {
            if cells[k].is_some() || timed_enough(&times[k]) {
                continue;
            }
            ran = true;
            match solve(k) {
                Ok(run) => {
                    times[k].push(run.seconds);
                    first[k].get_or_insert(run);
                }
                Err(e) => cells[k] = Some(Err(format!("fails: {e}"))),
            }
        }
        if !ran {
            break;
        }
    }
    std::array::from_fn(|k| {
        cells[k].take().unwrap_or_else(|| match first[k] {
            Some(run) => Ok(Measured {
                run,
                seconds: median(&mut times[k]),
                solves: times[k].len(),
            }),
            None => Err("not run".into()),
        })
    })
}
