#!/usr/bin/env python3
"""A parameter study with the Python package: `daec.simulate_many` against
one `daec.simulate` call per parameter set.

    python benches/simulate_many.py [--sets K] [--model PATH] [--n N]
        [--t-end T] [--param NAME] [--workers W]

Runs K parameter sets (default 64) of a model (default the pendulum chain
of `models/scale`, `-p N=10`, to t = 1), the Real parameter NAME (default
`g`) spread over ±20 % of its value, three ways, one after the other:

- `simulate`: one `daec.simulate` call per set, in turn (each analyses
  the model);
- `simulate_many, 1 worker`: one call, the runs in turn, the structural
  analysis and the prepared simulation (the formulation and its tapes)
  shared, each run rebinding its parameter values and computing its own
  consistent initial point;
- `simulate_many, W workers`: the same on W threads (default: the
  machine's cores).

It prints the wall time of each, the ratios to the first, the sum of the
runs' `compile_seconds` and `integrate_seconds`, and checks that the
three give the same results bit for bit. Needs the package installed
(`pip install crates/daec-py`).

Figures: the dev-profile wheel of `.ci/run`, 64 sets, 2 workers, on 2
cores that other jobs kept busy (load average 15–16, so the second
worker gains little and the wall times are noisy), the branch's wheel
and, side by side, the wheel of `main` before every kind of simulation
was rebound and the complete pivot was found from the rows' maxima:

    python benches/simulate_many.py --n 50 --t-end 0.1 --sets 64 --workers 2

    50-link chain (350 unknowns)     wall s  ratio  compile s  integrate s
    simulate, one call per set       13.26   1.000     6.19       6.54
    simulate_many, 1 worker          10.70   0.806     4.09       6.12
    simulate_many, 2 workers          9.61   0.724     6.52      11.39
    (main) simulate, one per set     14.31   1.000     8.49       5.38
    (main) simulate_many, 1 worker   13.79   0.964     7.45       5.80
    (main) simulate_many, 2 workers  13.08   0.914    14.22      10.86

    python benches/simulate_many.py --model models/testset/water_tube.dae \
        --n 0 --param k --value 2e-4 --t-end 61200 --sets 64 --workers 2

    water tube (49 unknowns, 10 state events of its `if` relations per run)
    simulate, one call per set       21.11   1.000     1.06      19.60
    simulate_many, 1 worker          22.23   1.053     0.58      21.06
    (main) simulate, one per set     20.94   1.000     1.06      19.39
    (main) simulate_many, 1 worker   23.68   1.131     1.12      21.95

The water tube's runs are now prepared once (`compile s` of the study
halved; `main` prepared every run anew because of its modes), but its
integration dominates. On the chain a rebound run's preparation
(formulation, tapes, initialisation) takes about 1.5 ms instead of
25 ms; what a run still pays before it integrates is the lowering and
the reanalysis at its values — the hidden constraints' pivots and the
success check's consistent point and LU of the Σ-Jacobian, whose
complete pivot search no longer scans every entry (a rebound chain run
about 90 → 65 ms in the debug profile).
"""

import argparse
import os
import pathlib
import time

import numpy as np

import daec

ROOT = pathlib.Path(__file__).resolve().parents[1]


def timed(f):
    t = time.perf_counter()
    out = f()
    return out, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", type=int, default=64)
    ap.add_argument("--model", default=str(ROOT / "models" / "scale" / "pendulum_chain.dae"))
    ap.add_argument("--n", type=int, default=10, help="-p N=… (0: leave N alone)")
    ap.add_argument("--t-end", type=float, default=1.0)
    ap.add_argument("--param", default="g")
    ap.add_argument("--value", type=float, default=9.81, help="the parameter's nominal value")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    base = {"N": a.n} if a.n else {}
    sets = [
        {**base, a.param: a.value * (0.8 + 0.4 * k / max(a.sets - 1, 1))} for k in range(a.sets)
    ]
    opts = dict(t_end=a.t_end)
    one, t_one = timed(lambda: [daec.simulate(a.model, params=p, **opts) for p in sets])
    seq, t_seq = timed(lambda: daec.simulate_many(a.model, params=sets, workers=1, **opts))
    par, t_par = timed(lambda: daec.simulate_many(a.model, params=sets, workers=a.workers, **opts))
    for r1, r2, r3 in zip(one, seq, par):
        assert np.array_equal(r1.values, r2.values) and np.array_equal(r1.values, r3.values)
        assert np.array_equal(r1.time, r2.time) and np.array_equal(r1.time, r3.time)

    def sums(rs):
        return (
            sum(r.stats["compile_seconds"] for r in rs),
            sum(r.stats["integrate_seconds"] for r in rs),
        )

    print(f"{a.sets} sets of {pathlib.Path(a.model).name} {base} to t = {a.t_end}, {a.param} varied")
    print(f"{'':28} {'wall s':>8} {'ratio':>6} {'compile s':>10} {'integrate s':>12}")
    for name, t, rs in (
        ("simulate, one call per set", t_one, one),
        ("simulate_many, 1 worker", t_seq, seq),
        (f"simulate_many, {a.workers} workers", t_par, par),
    ):
        c, i = sums(rs)
        print(f"{name:28} {t:8.2f} {t / t_one:6.3f} {c:10.3f} {i:12.3f}")
    print("results equal bit for bit: yes")


if __name__ == "__main__":
    main()
