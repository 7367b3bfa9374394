"""Writes models/testset/wheelset.dae (the wheelset of the IVP test set).

The test set's subroutines WHEELP, RAILP, CONSTM and CREEP are written out
as expressions; the normal and the raw creepage forces become auxiliary
algebraic unknowns (see the model header). Expressions are built in Python
syntax, evaluated once at the initial values for the auxiliary unknowns'
start values, and printed in `.dae` syntax.
Run from the repository root: python3 benches/testset/gen_wheelset.py
"""
import math
import re

P = {"MR": 16.08, "G": 9.81, "V": 30.0, "RN0": 0.1, "LI1": 0.0605, "LI2": 0.366, "MA": 0.0,
     "HA": 0.2, "MU": 0.12, "XL": 0.19, "CX": 6400.0, "CZ": 6400.0, "E": 1.3537956,
     "GG": 0.7115218, "SIGMA": 0.28, "GM": 7.92e10, "C11": 4.72772197, "C22": 4.27526987,
     "C23": 1.97203505, "DELTA0": 0.0262, "AR": 0.1506, "RS": 0.06, "EPS": 0.00001,
     "B1": 0.0, "B2": 4.0, "PIC": 3.1415926}

# (name, test set y index, start value, fixed, description)
STATES = [
    ("x", 1, "0.14941e-02", True, "lateral displacement"),
    ("y", 2, "0.40089e-06", True, "vertical displacement"),
    ("z", 3, "0.11241e-05", True, "longitudinal displacement"),
    ("theta", 4, "-.28573e-03", True, "yaw angle"),
    ("phi", 5, "0.26459e-03", True, "roll angle"),
    ("vx", 6, "0", True, "velocity of x"),
    ("vy", 7, "0", False, "velocity of y"),
    ("vz", 8, "0", True, "velocity of z"),
    ("vtheta", 9, "0", False, "velocity of theta"),
    ("vphi", 10, "0", True, "velocity of phi"),
    ("beta", 11, "0", True, "perturbation of the angular velocity of the axle"),
    ("psiR", 12, "-7.4122380357667139e-06", False, "contact angle, right wheel"),
    ("xiR", 13, "-0.1521364296121248", False, "contact point on the right wheel profile"),
    ("psiL", 14, "7.5634406395172940e-06", False, "contact angle, left wheel"),
    ("xiL", 15, "0.1490635714733819", False, "contact point on the left wheel profile"),
    ("lam1", 16, "-8.3593e-3", False, "multiplier of the left contact (scaled by 1e-4)"),
    ("lam2", 17, "-7.4144e-3", False, "multiplier of the right contact (scaled by 1e-4)"),
]

SIT, COT, SIP, COP = "sin(theta)", "cos(theta)", "sin(phi)", "cos(phi)"


def g(e):
    return f"({e})"


def side(s):
    """Profiles, contact geometry and constraint row of one wheel (s = 'L' or 'R')."""
    psi, xi = f"psi{s}", f"xi{s}"
    sis, cos_ = f"sin({psi})", f"cos({psi})"
    rx = g(f"RN0 + tan(DELTA0)*(AR - abs({xi}))")
    drx = g(f"sign({xi})*(-tan(DELTA0))")
    xg = g(f"x + {xi}*{COT}*{COP} + {rx}*({COT}*{SIP}*{cos_} - {SIT}*{sis})")
    sir = "(sin(DELTA0)*RS)"
    t = g(f"sqrt(RS**2 - (abs({xg}) - AR - {sir})**2)")
    dgx = g(f"sign({xg})*(-abs({xg}) + AR + {sir})/{t}")
    d2gx = g(f"-RS**2/{t}**3")
    q = ["0", dgx, "(-1)", "0",
         g(f"{dgx}*({rx}*(-{COT}*{sis} - {cos_}*{SIP}*{SIT}) - {COP}*{SIT}*{xi})"),
         g(f"-({cos_}*{rx}*{SIP}) - {COP}*{xi} + {dgx}*({COP}*{cos_}*{COT}*{rx} - {COT}*{SIP}*{xi})")]
    if s == "L":
        w1 = g(f"({drx}*{COP} - {SIP}*{cos_})*{COT} + {sis}*{SIT}")
        w2 = g(f"-{drx}*{SIP} - {cos_}*{COP}")
    else:
        w1 = g(f"({drx}*{COP} - {SIP}*{cos_})*{COT} + {sis}*{SIT}")
        w2 = g(f"{drx}*{SIP} + {cos_}*{COP}")
    delta = g(f"atan({w1}/{w2})")
    return {"rx": rx, "drx": drx, "dgx": dgx, "d2gx": d2gx, "q": q, "delta": delta,
            "sis": sis, "cos": cos_, "xi": xi}


def creep(s, S, fn, c):
    """Raw creepage forces (TX, TY) of CREEP for one contact, straight track."""
    sid, cod = f"sin({S['delta']})", f"cos({S['delta']})"
    sit_, cot_ = f"sin(theta/{cod})", f"cos(theta/{cod})"
    rx, xi, sis, cos_ = S["rx"], S["xi"], S["sis"], S["cos"]
    om = "(V/RN0 + beta)"
    wvk1 = g(f"-{om}*{rx}*({sit_}*{cos_} + {cot_}*{SIP}*{sis}) + vx"
             f" - vtheta*({rx}*({sit_}*{SIP}*{cos_} + {cot_}*{sis}) + {xi}*{sit_}*{COP})"
             f" - vphi*{cot_}*({xi}*{SIP} - {rx}*{COP}*{cos_})")
    wvk2 = g(f"{om}*{rx}*{COP}*{sis} + vy + vphi*({xi}*{COP} + {rx}*{SIP}*{cos_})")
    wvk3 = g(f"-{om}*{rx}*({cot_}*{cos_} - {sit_}*{SIP}*{sis}) + V + vz"
             f" - vtheta*({xi}*{cot_}*{COP} + {rx}*({cot_}*{SIP}*{cos_} - {sit_}*{sis}))"
             f" + vphi*{sit_}*({xi}*{SIP} - {rx}*{COP}*{cos_})")
    wvr = g(f"0.5*sqrt(({wvk1} - 2*vx)**2 + ({wvk2} - 2*vy)**2 + ({wvk3} - 2*vz - 2*V)**2)")
    nux = g(f"({sit_}*{wvk1} + {cot_}*{wvk3})/{wvr}")
    sgn = "+" if s == "L" else "-"
    nuy = g(f"({cot_}*{cod}*{wvk1} {sgn} {sid}*{wvk2} - {sit_}*{cod}*{wvk3})/{wvr}")
    phis = g(f"({'-' if s == 'L' else '+'}{sid}*{om} + {cod}*vtheta)/{wvr}")
    wt = g(f"MU*{fn}")
    tx = f"-{wt}*tanh(GM*{c}**2*C11*{nux}/{wt})"
    ty = f"-{wt}*tanh(GM*{c}**2*C22*{nuy}/{wt} + GM*{c}**3*C23*{phis}/{wt})"
    return tx, ty, sit_, cot_, sid, cod


def contact_size(S, fn):
    """Semi-axis factor of the contact ellipse (CREEP: CL, CR)."""
    rr = g(f"{S['rx']}*sqrt(1 + {S['drx']}**2)")
    rhog = g(f"-{S['d2gx']}/(1 + {S['dgx']}**2)**1.5")
    a, b = g(f"0.5/{rr}"), g(f"0.5*({rhog} + 0)")
    return f"((abs({fn})*3*(1 - SIGMA)*E)/(2*PIC*({a} + {b})*GM*sqrt(GG)))**(1/3)"


def dae(e):
    """Python syntax to `.dae` syntax."""
    return e.replace("**", "^")


def value(e, env):
    ns = dict(math.__dict__)
    ns.update(env)
    ns["sign"] = lambda v: math.copysign(1.0, v) if v != 0 else 0.0
    ns["abs"] = abs
    return eval(e, ns)


HEADER = """\
// Wheelset (IVP test set problem "wheel"), index-2 formulation. Generated by
//   benches/testset/gen_wheelset.py.
// Source: Test Set for IVP Solvers, release 2.4 (Univ. of Bari), problem file `wheel.F`
//   revision `$Id: wheel.F,v 1.2 2006/10/02 10:29:14 testset Exp $` (RESWHS, WHEELP,
//   RAILP, CONSTM, CREEP by B. Simeon, C. Führer, P. Rentrop), as carried by the R
//   package deTestSet 1.1.7.4 (src/Ex_wheelset.f, R/ex_wheelset.R: parameters, initial
//   values); description document "Wheelset" (test set report, Part II; Simeon, Führer,
//   Rentrop, Surv. Math. Ind. 1 (1991) 1-37).
// Test set: index 2 IDE of dimension 17: position (x, y, z, theta, phi) of the
//   wheelset, velocities, the angular velocity perturbation beta, the contact
//   variables (psi, xi) of both wheels and two multipliers (y16, y17 = E1, E2 scaled by
//   1e-4); kinematics (5 rows), Newton-Euler equations with the mass matrix of the test
//   set (6 rows), the index-2 constraints Q(p, q) v = 0 of both contacts (2 rows) and the
//   contact conditions (4 rows); t in [0, 10]. Straight track: the test set's S = 0,
//   ALPHA = 0 and propulsion forces 0, so the terms with them are left out; MA = 0 as
//   published. Wheel profile: cone; rail profile: circle (WHEELP, RAILP without their
//   derailment checks); creepage forces after Jaschinski with the test set's
//   normalisation when |T| exceeds MU*N (an `if` expression); CREEP's pi = 3.1415926.
// Closest faithful form: the language has no functions or local definitions, and the
//   creepage forces written out in every equation that uses them would make the file
//   megabytes long. The normal forces FNL, FNR, the contact ellipse factors CL, CR and
//   the raw creepage forces TXL, TYL, TXR, TYR (before the normalisation) are therefore
//   auxiliary algebraic unknowns, each defined by one explicit equation: dimension 25,
//   the first 17 unknowns are the test set's y (same order), the solution is the same.
//   Their start values are the defining expressions at the initial values (computed by
//   the generator).
// Initial values of the test set: y0 below, consistent to the published digits (the
//   positions and multipliers have five). The positions, vx, vz, vphi and beta are
//   fixed; vy, vtheta, the contact variables and the multipliers follow from the
//   constraints. The consistent initialisation moves the multipliers by about 2e-5
//   relative and vtheta from 0 to 1.3e-6 (the hidden constraints at the rounded
//   positions; fixing vtheta = 0 as well leaves them unsolvable).
// The saturation of the creep forces (`if TX^2 + TY^2 > (MU*FN)^2`) is written inside
//   `noEvent`: it meets the linear law continuously, and as a state event it costs a
//   restart at each of some hundred switches, and the solution loses accuracy.
// Reference: y(10) in wheelset.ref.json (wheelsoln, DASSL at tolerance 1e-9).
// expect: index=2 c=[0,0,0,0,0,0,0,0,0,0,0,1,1,1,1,1,1,0,0,0,0,0,0,0,0] d=[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,0,0,0,0,0,0,0,0,0,0] dof=9
"""


def main():
    L, R = side("L"), side("R")
    e1, e2 = "(lam1*1e4)", "(lam2*1e4)"
    sid_l, cod_l = f"sin({L['delta']})", f"cos({L['delta']})"
    sid_r, cod_r = f"sin({R['delta']})", f"cos({R['delta']})"
    deter = g(f"-{sid_l}*{cod_r} - {sid_r}*{cod_l}")
    w1 = g(f"{L['q'][1]}*{e1} + {R['q'][1]}*{e2}")
    w2 = g(f"{L['q'][2]}*{e1} + {R['q'][2]}*{e2}")
    aux_def = {
        "FNL": f"({cod_r}*{w1} - {sid_r}*{w2})/{deter}",
        "FNR": f"(-{cod_l}*{w1} - {sid_l}*{w2})/{deter}",
        "CL": contact_size(L, "FNL"),
        "CR": contact_size(R, "FNR"),
    }
    txl, tyl, sitl, cotl, sidl, codl = creep("L", L, "FNL", "CL")
    txr, tyr, sitr, cotr, sidr, codr = creep("R", R, "FNR", "CR")
    aux_def.update({"TXL": txl, "TYL": tyl, "TXR": txr, "TYR": tyr})
    # Normalised creepage forces in the nominal frame (TL, TR of CREEP).
    def norm(tx, ty, fn):
        big = f"({tx}**2 + {ty}**2 > (MU*{fn})**2)"
        # the saturation meets the linear law continuously: `noEvent`, no
        # state events (they would only cost restarts where it switches)
        f = f"(if noEvent({big}) then abs(MU*{fn})/sqrt({tx}**2 + {ty}**2) else 1)"
        return f"({tx}*{f})", f"({ty}*{f})"
    txn, tyn = norm("TXL", "TYL", "FNL")
    tl = [f"({sitl}*{txn} + {cotl}*{codl}*{tyn})", f"({sidl}*{tyn})", f"({cotl}*{txn} - {sitl}*{codl}*{tyn})"]
    txn, tyn = norm("TXR", "TYR", "FNR")
    tr = [f"({sitr}*{txn} + {cotr}*{codr}*{tyn})", f"(-{sidr}*{tyn})", f"({cotr}*{txn} - {sitr}*{codr}*{tyn})"]
    ql, qr = L["q"], R["q"]
    lm2 = "(-2*XL**2*CZ*theta)"
    rxl, rxr, xil, xir = L["rx"], R["rx"], "xiL", "xiR"
    sl, cl, sr, cr = L["sis"], L["cos"], R["sis"], R["cos"]

    def euler(rx, xi, s_, c_, t):
        a = (f"-({xi}*{SIT} + {rx}*{s_}*{COT}*{COP})*{t[0]} - {rx}*{s_}*{SIP}*{t[1]}"
             f" + (-{xi}*{COT} + {rx}*{s_}*{SIT}*{COP})*{t[2]}")
        b = (f"-({xi}*{COT}*{SIP} - {rx}*{c_}*{COT}*{COP})*{t[0]} + ({xi}*{COP} + {rx}*{c_}*{SIP})*{t[1]}"
             f" + ({xi}*{SIT}*{SIP} - {rx}*{c_}*{SIT}*{COP})*{t[2]}")
        c = (f"-{rx}*({c_}*{SIT} + {s_}*{COT}*{SIP})*{t[0]} + {rx}*{s_}*{COP}*{t[1]}"
             f" - {rx}*({c_}*{COT} - {s_}*{SIT}*{SIP})*{t[2]}")
        return a, b, c
    al, bl, cl_ = euler(rxl, xil, sl, cl, tl)
    ar, br, cr_ = euler(rxr, xir, sr, cr, tr)
    om = "(V/RN0 + beta)"
    eqs = [
        ("der(x)", "vx", "kinematics"),
        ("der(y)", "vy", None),
        ("der(z)", "vz", None),
        ("der(theta)", "vtheta", None),
        ("der(phi)", "vphi", None),
        ("MR*der(vx)", f"{tl[0]} + {tr[0]} + {ql[1]}*{e1} + {qr[1]}*{e2} - 2*CX*x", "Newton"),
        ("MR*der(vy)", f"{tl[1]} + {tr[1]} - MA*G - MR*G + {ql[2]}*{e1} + {qr[2]}*{e2}", None),
        ("MR*der(vz)", f"{tl[2]} + {tr[2]} - 2*CZ*z", None),
        (f"LI2*{COP}*der(vtheta)",
         f"LI2*vtheta*vphi*{SIP} - LI1*{om}*vphi - (LI1 - LI2)*vtheta*{SIP}*vphi"
         f" + {al} + {ar} + {COP}*{lm2} + {ql[4]}*{e1} + {qr[4]}*{e2}", "Euler"),
        ("LI2*der(vphi)",
         f"LI1*{om}*vtheta*{COP} + (LI1 - LI2)*vtheta*{SIP}*vtheta*{COP}"
         f" + {bl} + {br} + {ql[5]}*{e1} + {qr[5]}*{e2}", None),
        (f"LI1*{SIP}*der(vtheta) + LI1*der(beta)",
         f"-LI1*vtheta*vphi*{COP} + {cl_} + {cr_} + {SIP}*{lm2}", None),
        ("0", " + ".join(f"{ql[i]}*{v}" for i, v in enumerate(["vx", "vy", "vz", "vtheta", "vphi"], 1)),
         "index-2 constraint, left"),
        ("0", " + ".join(f"{qr[i]}*{v}" for i, v in enumerate(["vx", "vy", "vz", "vtheta", "vphi"], 1)),
         "index-2 constraint, right"),
        ("0", f"{L['dgx']}*({L['drx']}*{SIP} + {COP}*{cl}) + {L['drx']}*{COT}*{COP} - {COT}*{SIP}*{cl} + {SIT}*{sl}",
         "contact condition, left"),
        ("0", f"{L['drx']}*{SIT}*{COP} - {SIT}*{SIP}*{cl} - {COT}*{sl}", None),
        ("0", f"{R['dgx']}*({R['drx']}*{SIP} + {COP}*{cr}) + {R['drx']}*{COT}*{COP} - {COT}*{SIP}*{cr} + {SIT}*{sr}",
         "contact condition, right"),
        ("0", f"{R['drx']}*{SIT}*{COP} - {SIT}*{SIP}*{cr} - {COT}*{sr}", None),
    ]
    env = dict(P)
    for name, _, start, _, _ in STATES:
        env[name] = float(start)
    starts = {}
    for name in ["FNL", "FNR", "CL", "CR", "TXL", "TYL", "TXR", "TYR"]:
        starts[name] = value(aux_def[name], env)
        env[name] = starts[name]
    out = [HEADER.rstrip("\n"), "model Wheelset \"Wheelset, index 2, 17 equations + 8 auxiliary (IVP test set wheel)\""]
    for k, v in P.items():
        desc = " \"pi as in CREEP\"" if k == "PIC" else ""
        out.append(f"  parameter Real {k} = {v!r}{desc};")
    for name, i, start, fixed, desc in STATES:
        f = ", fixed = true" if fixed else ""
        out.append(f"  Real {name}(start = {start}{f}) \"y{i}: {desc}\";")
    aux_desc = {"FNL": "normal force, left", "FNR": "normal force, right",
                "CL": "contact ellipse factor, left", "CR": "contact ellipse factor, right",
                "TXL": "raw creepage force x, left", "TYL": "raw creepage force y, left",
                "TXR": "raw creepage force x, right", "TYR": "raw creepage force y, right"}
    for name, v in starts.items():
        out.append(f"  Real {name}(start = {v!r}) \"auxiliary: {aux_desc[name]}\";")
    out.append("equation")
    for lhs, rhs, desc in eqs:
        d = f" \"{desc}\"" if desc else ""
        out.append(f"  {dae(lhs)} = {dae(rhs)}{d};")
    for name in starts:
        out.append(f"  {name} = {dae(aux_def[name])} \"auxiliary\";")
    out.append("  annotation(experiment(StartTime = 0, StopTime = 10, Tolerance = 1e-6, Interval = 0.01));")
    out.append("end Wheelset;")
    text = "\n".join(out) + "\n"
    assert not re.search(r"\*\*", text)
    open("models/testset/wheelset.dae", "w").write(text)


if __name__ == "__main__":
    main()
