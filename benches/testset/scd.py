"""Accuracy of a daec run at t_end against a test-set reference.

    python3 benches/testset/scd.py models/testset/<problem>.ref.json out.csv [--ratio R]

Prints the significant correct digits as the IVP test set defines them:
  scd   = -log10(max_i |y_i - ref_i| / |ref_i|)        (relative error; the
          absolute error for the components whose reference is zero or tiny,
          |ref_i| <= 1e-10 max_j |ref_j|: Fekete's velocities are 1e-16 at t_end,
          rounding noise of the reference run)
  mescd = -log10(max_i |y_i - ref_i| / (R + |ref_i|))  (mixed error, R = atol/rtol,
          default 1)
over the reference's `scd_components` when it lists them (slider crank: the
positions), else over all components. The CSV is daec's output (header of
flat names, last row at t_end).
"""
import csv
import json
import math
import sys


def last_row(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    header, last = rows[0], rows[-1]
    return {name: float(v) for name, v in zip(header, last)}


def digits(ref, row, ratio=1.0):
    names = ref.get("scd_components") or list(ref["reference"])
    rel, mixed, worst = 0.0, 0.0, None
    tiny = 1e-10 * max(abs(float(ref["reference"][n])) for n in names)
    for n in names:
        r = float(ref["reference"][n])
        y = row[n]
        err = abs(y - r)
        e_rel = err / abs(r) if abs(r) > tiny else err
        if e_rel >= rel:
            rel, worst = e_rel, n
        mixed = max(mixed, err / (ratio + abs(r)))
    as_digits = lambda e: math.inf if e == 0 else -math.log10(e)
    return {"t": row["time"], "scd": as_digits(rel), "mescd": as_digits(mixed), "worst": worst}


def main():
    ratio = 1.0
    args = sys.argv[1:]
    if "--ratio" in args:
        i = args.index("--ratio")
        ratio = float(args[i + 1])
        del args[i:i + 2]
    ref = json.load(open(args[0]))
    d = digits(ref, last_row(args[1]), ratio)
    if abs(d["t"] - ref["t_end"]) > 1e-9 * max(1.0, abs(ref["t_end"])):
        print(f"the run ends at t = {d['t']}, not at t_end = {ref['t_end']}")
        sys.exit(1)
    print(f"scd {d['scd']:.2f} mescd {d['mescd']:.2f} (worst: {d['worst']})")


if __name__ == "__main__":
    main()
