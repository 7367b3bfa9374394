#!/usr/bin/env python3
"""Start-up cost of `daec simulate --native` on the DAE test set.

    benches/native-startup.py [DAEC] [--repeat K] [--models GLOB]

For every `models/testset/*.dae` (default form and settings) it measures:

- `source`: the size of the generated library source (bytes, lines);
- `build`: a first build with an empty cache (`native_seconds` of
  `--stats-json`: generation, `rustc`, hashing and loading), and its CPU
  time (`build cpu`: that run's CPU time, daec's and the compiler's,
  minus the CPU time of a run with the cache warm), which a busy machine
  changes far less than the wall time;
- `cached`: the same run again with the cache warm (`native_seconds`:
  generation, checking the cached library, loading it), the median of K
  runs;
- `integrate`: `integrate_seconds` of the tapes and of `--native`, the
  median of K runs.

DAEC defaults to `target/release/daec` (`$CARGO_TARGET_DIR` honoured);
build it first with `cargo build --release -p daec-cli`. With a binary
whose statistics have no `native_seconds` (older than the field), the
native start-up is taken as the difference of `compile_seconds` with and
without `--native`.
"""

import glob
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(daec, model, native, cache, stats):
    cmd = [daec, "simulate", model, "--stats-json", stats, "-o", stats + ".csv"]
    if native:
        cmd += ["--native", "--cache-dir", cache]
    cpu = children_cpu()
    done = subprocess.run(cmd, capture_output=True, text=True)
    cpu = children_cpu() - cpu
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {done.returncode}\n{done.stderr}")
    with open(stats) as f:
        out = json.load(f)
    out["cpu_seconds"] = cpu
    return out


def native_seconds(native, tapes):
    if "native_seconds" in native:
        return native["native_seconds"]
    return native["compile_seconds"] - tapes["compile_seconds"]


def main():
    args = sys.argv[1:]
    repeat = 3
    pattern = "models/testset/*.dae"
    daec = None
    while args:
        a = args.pop(0)
        if a == "--repeat":
            repeat = int(args.pop(0))
        elif a == "--models":
            pattern = args.pop(0)
        else:
            daec = a
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if daec is None:
        target = os.environ.get("CARGO_TARGET_DIR", os.path.join(root, "target"))
        daec = os.path.join(target, "release", "daec")
    work = tempfile.mkdtemp(prefix="daec-native-startup-")
    stats = os.path.join(work, "stats.json")
    print(
        f"{'problem':<22} {'n':>4} {'source':>9} {'lines':>6} {'build s':>8} "
        f"{'build cpu s':>11} {'cached ms':>9} {'tapes int ms':>12} {'native int ms':>13}"
    )
    try:
        for model in sorted(glob.glob(os.path.join(root, pattern))):
            name = os.path.basename(model)[:-4]
            cache = os.path.join(work, "cache-" + name)
            tapes = [run(daec, model, False, cache, stats) for _ in range(repeat)]
            first = run(daec, model, True, cache, stats)
            warm = [run(daec, model, True, cache, stats) for _ in range(repeat)]
            sources = glob.glob(os.path.join(cache, "*.rs"))
            size = sum(os.path.getsize(s) for s in sources)
            lines = 0
            for s in sources:
                with open(s) as f:
                    lines += sum(1 for _ in f)
            t0 = statistics.median(t["compile_seconds"] for t in tapes)
            build = native_seconds(first, {"compile_seconds": t0})
            cached = statistics.median(
                native_seconds(w, {"compile_seconds": t0}) for w in warm
            )
            ti = statistics.median(t["integrate_seconds"] for t in tapes)
            ni = statistics.median(w["integrate_seconds"] for w in warm)
            cpu = first["cpu_seconds"] - min(w["cpu_seconds"] for w in warm)
            print(
                f"{name:<22} {first['unknowns']:>4} {size:>9} {lines:>6} {build:>8.3f} "
                f"{cpu:>11.3f} {cached * 1e3:>9.2f} {ti * 1e3:>12.2f} {ni * 1e3:>13.2f}",
                flush=True,
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
