"""Runs daec on the test set: default settings and rtol = atol = 1e-4 ... 1e-10.

    python3 benches/testset/run.py [--daec target/release/daec] [--timeout 300]
                                   [--tols 4,5,6,7,8,9,10] [--error-control MODE]
                                   [--json FILE] [PROBLEM ...]

For every run: exit code, accepted/rejected steps, wall time, scd and mescd at
t_end (benches/testset/scd.py), or the first line of the error. Prints a
Markdown table. Runs under `nice`; output files go to a temporary directory.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from scd import digits, last_row  # noqa: E402

PROBLEMS = ["akzo_nobel", "andrews", "transistor_amplifier", "charge_pump", "car_axis", "fekete",
            "slider_crank", "water_tube", "two_bit_adder", "nand_gate", "wheelset"]


def run(daec, model, ref, tol, timeout, tmp, mode=None):
    name = os.path.basename(model)[:-4]
    tag = "default" if tol is None else f"1e-{tol}"
    csv = os.path.join(tmp, f"{name}-{tag}.csv")
    stats = os.path.join(tmp, f"{name}-{tag}.json")
    cmd = ["nice", "-n", "10", daec, "simulate", model, "-o", csv, "--stats-json", stats,
           "--interval", str(ref["t_end"])]
    if tol is not None:
        cmd += ["--rtol", f"1e-{tol}", "--atol", f"1e-{tol}"]
    if mode is not None:
        cmd += ["--error-control", mode]
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        code, err = p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        code, err = "timeout", f"no result within {timeout} s"
    wall = time.monotonic() - start
    row = {"problem": name, "tol": tag, "exit": code, "wall": wall, "mode": mode}
    if os.path.exists(stats):
        s = json.load(open(stats))
        row["steps"] = f"{s['steps_accepted']}/{s['steps_rejected']}"
        row["constraint_scaled"] = s.get("max_constraint_residual_scaled")
    if code == 0:
        d = digits(ref, last_row(csv))
        row["scd"], row["mescd"], row["worst"] = d["scd"], d["mescd"], d["worst"]
    else:
        lines = [ln for ln in err.splitlines() if ln.startswith("error")]
        last = err.strip().splitlines()[-1:] or [""]
        row["message"] = (lines[0] if lines else last[0])[:400]
    return row


def main():
    args = sys.argv[1:]
    daec, timeout, tols = "target/release/daec", 300, [4, 5, 6, 7, 8, 9, 10]
    mode, out_json, rows = None, None, []
    while args and args[0].startswith("--"):
        opt, val = args[0], args[1]
        args = args[2:]
        if opt == "--daec":
            daec = val
        elif opt == "--timeout":
            timeout = float(val)
        elif opt == "--tols":
            tols = [int(x) for x in val.split(",")]
        elif opt == "--error-control":
            mode = val
        elif opt == "--json":
            out_json = val
    problems = args or PROBLEMS
    tmp = tempfile.mkdtemp(prefix="daec-testset-")
    print("| problem | tol | exit | steps acc/rej | wall s | scd | mescd | failure |")
    print("|---|---|---|---|---|---|---|---|")
    for name in problems:
        model = f"models/testset/{name}.dae"
        if not os.path.exists(model):
            print(f"| {name} | - | - | - | - | - | - | no model |")
            continue
        ref = json.load(open(f"models/testset/{name}.ref.json"))
        for tol in [None] + tols:
            r = run(daec, model, ref, tol, timeout, tmp, mode)
            rows.append(r)
            scd = f"{r['scd']:.2f}" if "scd" in r else ""
            mescd = f"{r['mescd']:.2f}" if "mescd" in r else ""
            worst = f" ({r['worst']})" if "worst" in r else ""
            print(f"| {name} | {r['tol']} | {r['exit']} | {r.get('steps', '')} | {r['wall']:.2f} "
                  f"| {scd}{worst} | {mescd} | {r.get('message', '')} |", flush=True)
    if out_json:
        with open(out_json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
