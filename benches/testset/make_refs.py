"""Writes models/testset/<problem>.ref.json from the test set's reference solutions.

The reference values are the numbers of the problem files' solution routines
(`*soln` / `*_solut`), read from the Fortran sources given on the command line
or typed in below where the problem file is not available; the names are
those of the `.dae` models. Run from the repository root:
  python3 benches/testset/make_refs.py DIR
with DIR holding deTestSet's src/Ex_*.f files.
"""
import json
import re
import sys

RELEASE = "Test Set for IVP Solvers, release 2.4 (Univ. of Bari)"


def fortran_values(path, routine):
    text = open(path).read()
    start = re.search(r"subroutine\s+" + routine + r"\b", text, re.I).start()
    end = re.search(r"^\s+end\s*$", text[start:], re.I | re.M).start() + start
    vals = {}
    for m in re.finditer(r"y\(\s*(\d+)\)\s*=\s*([-+0-9.dDeE]+)", text[start:end], re.I):
        vals[int(m.group(1))] = m.group(2).lower().replace("d", "e")
    return [vals[i] for i in range(1, len(vals) + 1)]


def names_tube():
    edges = [(1, 2), (2, 3), (2, 6), (3, 4), (3, 5), (4, 5), (5, 10), (6, 5), (7, 4),
             (7, 8), (8, 5), (8, 10), (9, 8), (11, 9), (11, 12), (12, 7), (12, 8), (13, 11)]
    nodes = [5, 8, 1, 2, 3, 4, 6, 7, 9, 10, 11, 12, 13]
    return ([f"phi_{i}_{j}" for i, j in edges] + [f"lambda_{i}_{j}" for i, j in edges]
            + [f"p{n}" for n in nodes])


def names_fekete():
    return ([f"p[{i},{k}]" for i in range(1, 21) for k in range(1, 4)]
            + [f"q[{i},{k}]" for i in range(1, 21) for k in range(1, 4)]
            + [f"lambda[{i}]" for i in range(1, 21)] + [f"mu[{i}]" for i in range(1, 21)])


PROBLEMS = {
    # file: (problem, test set file, revision, t_end, Fortran source, routine, names, scd note)
    "akzo_nobel": ("Chemical Akzo Nobel problem", "chemakzo.F",
                   "$Id: chemakzo.F,v 1.2 2006/10/02 10:29:14 testset Exp $", 180.0, None, None,
                   [f"y{i}" for i in range(1, 7)], None),
    "andrews": ("Andrews' squeezing mechanism", "andrews.F",
                "$Id: andrews.F,v 1.2 2006/10/02 10:29:13 testset Exp $", 0.03,
                "Ex_andrews.f", "andsoln",
                [f"q[{i}]" for i in range(1, 8)] + [f"v[{i}]" for i in range(1, 8)]
                + [f"w[{i}]" for i in range(1, 8)] + [f"lambda[{i}]" for i in range(1, 7)], None),
    "transistor_amplifier": ("Transistor amplifier", "transamp.F",
                             "$Id: transamp.F,v 1.3 2006/10/25 08:21:22 testset Exp $", 0.2,
                             "Ex_transistor.f", "transsoln", [f"y{i}" for i in range(1, 9)], None),
    "car_axis": ("Car axis problem", "caraxis.F",
                 "$Id: caraxis.F,v 1.2 2006/10/02 10:29:13 testset Exp $", 3.0,
                 "Ex_car.f", "carsoln",
                 ["xl", "yl", "xr", "yr", "ul", "vl", "ur", "vr", "lam1", "lam2"], None),
    "fekete": ("Fekete problem", "fekete.F",
               "$Id: fekete.F,v 1.2 2006/10/02 10:29:14 testset Exp $", 1000.0,
               "Ex_fekete.f", "feksoln", names_fekete(), None),
    "slider_crank": ("Slider crank", "crank.F",
                     "$Id: crank.F,v 1.2 2006/10/02 10:29:14 testset Exp $", 0.1,
                     "Ex_crank.f", "cranksoln",
                     ["phi1", "phi2", "x3", "q[1]", "q[2]", "q[3]", "q[4]", "vphi1", "vphi2", "vx3",
                      "vq[1]", "vq[2]", "vq[3]", "vq[4]", "aphi1", "aphi2", "ax3", "aq[1]", "aq[2]",
                      "aq[3]", "aq[4]", "la[1]", "la[2]", "la[3]"],
                     ["phi1", "phi2", "x3", "q[1]", "q[2]", "q[3]", "q[4]"]),
    "water_tube": ("Water tube system", "water.F",
                   "$Id: water.F,v 1.2 2006/10/02 10:29:14 testset Exp $", 61200.0,
                   "Ex_tube.f", "tubesoln", names_tube(), None),
    "nand_gate": ("NAND gate", "nand.F", "$Id: nand.F,v 1.2 2006/10/02 10:29:14 testset Exp $",
                  80.0, "Ex_nand.f", "nandsoln", [f"y{i}" for i in range(1, 15)], None),
    "wheelset": ("Wheelset", "wheel.F", "$Id: wheel.F,v 1.2 2006/10/02 10:29:14 testset Exp $",
                 10.0, "Ex_wheelset.f", "wheelsoln",
                 ["x", "y", "z", "theta", "phi", "vx", "vy", "vz", "vtheta", "vphi", "beta",
                  "psiR", "xiR", "psiL", "xiL", "lam1", "lam2"], None),
    "two_bit_adder": ("Two bit adding unit", "tba.F", "$Id: tba.F,v 1.2 2006/10/02 10:29:14 testset Exp $",
                      320.0, "Ex_twobit.f", "twobsoln",
                      [f"y[{k}]" for k in range(1, 176)] + [f"x[{k}]" for k in range(1, 176)],
                      ["x[49]", "x[130]", "x[148]"]),
    "charge_pump": ("Charge pump", "pump.f", "unknown (problem file not available; see the model header)",
                    1.2e-6, None, None,
                    ["YT1", "YS", "YT2", "YD", "YT3", "U1", "U2", "U3", "I"], None),
}

TYPED = {
    # chemakzo_solut of chemakzo.F (PSIDE, tolerance 1e-19).
    "akzo_nobel": ["0.1150794920661702e0", "0.1203831471567715e-2", "0.1611562887407974e0",
                   "0.3656156421249283e-3", "0.1708010885264404e-1", "0.4873531310307455e-2"],
    # GAMD in quadruple precision, as quoted by the ports of pump.f.
    "charge_pump": ["0.126280042987675933170893e-12", "0", "0", "0", "0", "0", "0", "0",
                    "0.152255686815577679043511e-3"],
}


# The test set's numbers of index-1, -2 and -3 variables, which its y holds in
# this order (the drivers' IWORK(5..7); deTestSet's `ind`, the charge pump's
# from the model header).
INDEX_COUNTS = {
    "akzo_nobel": [6, 0, 0], "andrews": [7, 7, 13], "transistor_amplifier": [8, 0, 0],
    "car_axis": [4, 4, 2], "fekete": [120, 40, 0], "slider_crank": [14, 10, 0],
    "water_tube": [38, 11, 0], "nand_gate": [14, 0, 0], "wheelset": [15, 2, 0],
    "two_bit_adder": [350, 0, 0], "charge_pump": [8, 1, 0],
}

# The position components of the mechanical problems (the benchmark's
# "scd positions", benches/testset/main.rs).
POSITIONS = {
    "andrews": [f"q[{i}]" for i in range(1, 8)],
    "car_axis": ["xl", "yl", "xr", "yr"],
    "fekete": [f"p[{i},{k}]" for i in range(1, 21) for k in range(1, 4)],
    "slider_crank": ["phi1", "phi2", "x3", "q[1]", "q[2]", "q[3]", "q[4]"],
    "wheelset": ["x", "y", "z", "theta", "phi"],
}


def main():
    src = sys.argv[1]
    for key, (problem, file, rev, t_end, fsrc, routine, names, scd) in PROBLEMS.items():
        vals = TYPED[key] if fsrc is None else fortran_values(f"{src}/{fsrc}", routine)
        assert len(vals) == len(names), key
        source = f"{RELEASE}, problem file {file}"
        if key == "akzo_nobel":
            source += " (solution routine chemakzo_solut)"
        if key == "charge_pump":
            source += (" (not available here; the reference values as quoted by public ports"
                       " of pump.f, e.g. SciMLBenchmarks' Charge Pump DAE benchmark)")
        if fsrc is not None:
            source += f" (solution routine {routine}, as carried by the R package deTestSet 1.1.7.4, src/{fsrc})"
        # The numbers are written as published (JSON numbers, all digits).
        for v in vals:
            json.loads(v)
        lines = ["{",
                 f'  "problem": {json.dumps(problem)},',
                 f'  "source": {json.dumps(source)},',
                 f'  "revision": {json.dumps(rev)},',
                 f'  "t_end": {t_end!r},']
        if scd:
            lines.append(f'  "scd_components": {json.dumps(scd)},')
        lines.append(f'  "index_counts": {json.dumps(INDEX_COUNTS[key])},')
        if key in POSITIONS:
            lines.append(f'  "positions": {json.dumps(POSITIONS[key])},')
        lines.append('  "reference": {')
        body = [f"    {json.dumps(n)}: {v}" for n, v in zip(names, vals)]
        lines.append(",\n".join(body))
        lines += ["  }", "}"]
        text = "\n".join(lines) + "\n"
        json.loads(text)
        with open(f"models/testset/{key}.ref.json", "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
