"""Expression builders for the MOS circuit problems of the IVP test set.

The NAND gate and the two-bit adding unit use the transistor model of
Shichman and Hodges (drain current, bulk diodes, bulk capacitances) and
trapezoidal input pulses. The `.dae` language has no functions, so each use
is written out as an `if` expression; these helpers produce that text.
"""

# Transistor data: (VT0, CGAMMA, PHI, BETA for VDS > 0, BETA for VDS < 0).
# 1 = depletion type, 2 = enhancement type. The test set's problem files use
# BETA = 1.748e-3 for the enhancement type when VDS > 0 and 1.748e-4 when
# VDS < 0; both are kept as published.
TRANSISTOR = {
    1: ("(-2.43)", "0.2", "1.28", "5.35e-4", "5.35e-4"),
    2: ("0.2", "0.035", "1.01", "1.748e-3", "1.748e-4"),
}


def p(e):
    return f"({e})"


# The two-bit adding unit's transistors (time axis scaled by CTIME, currents
# by STIFF); type 0 is the depletion transistor, types 1-3 enhancement
# transistors of widths 4, 8 and 12.
TWOBIT = {
    0: ("(-2.43)", "0.2", "1.28", "(53.5e-6*CTIME*STIFF)", "(53.5e-6*CTIME*STIFF)"),
    1: ("0.2", "0.035", "1.01", "(4*43.7e-6*CTIME*STIFF)", "(4*43.7e-6*CTIME*STIFF)"),
    2: ("0.2", "0.035", "1.01", "(8*43.7e-6*CTIME*STIFF)", "(8*43.7e-6*CTIME*STIFF)"),
    3: ("0.2", "0.035", "1.01", "(12*43.7e-6*CTIME*STIFF)", "(12*43.7e-6*CTIME*STIFF)"),
}


def vte(ned, vb, table=TRANSISTOR):
    vt0, gam, phi, _, _ = table[ned]
    return f"({vt0} + {gam}*(sqrt({phi} - {p(vb)}) - sqrt({phi})))"


def gdsp(ned, vds, vgs, vbs, table=TRANSISTOR):
    beta = table[ned][3]
    t = vte(ned, vbs, table)
    ov = f"({p(vgs)} - {t})"
    return (f"(if {ov} <= 0 then 0 else if {ov} <= {p(vds)} then "
            f"-{beta}*{ov}^2*(1 + DELTA*{p(vds)}) else "
            f"-{beta}*{p(vds)}*(2*{ov} - {p(vds)})*(1 + DELTA*{p(vds)}))")


def gdsm(ned, vds, vgd, vbd, table=TRANSISTOR):
    beta = table[ned][4]
    t = vte(ned, vbd, table)
    ov = f"({p(vgd)} - {t})"
    return (f"(if {ov} <= 0 then 0 else if {ov} <= -{p(vds)} then "
            f"{beta}*{ov}^2*(1 - DELTA*{p(vds)}) else "
            f"-{beta}*{p(vds)}*(2*{ov} + {p(vds)})*(1 - DELTA*{p(vds)}))")


def ids(ned, vds, vgs, vbs, vgd, vbd, table=TRANSISTOR):
    """Drain current (Shichman-Hodges)."""
    return (f"(if {p(vds)} > 0 then {gdsp(ned, vds, vgs, vbs, table)} "
            f"else if {p(vds)} == 0 then 0 else {gdsm(ned, vds, vgd, vbd, table)})")


def ibs(v):
    """Current of the bulk-source (or bulk-drain) pn junction."""
    return f"(if {p(v)} <= 0 then -CURIS*(exp({p(v)}/VTH) - 1) else 0)"


def cbdbs(v):
    """Voltage-dependent bulk capacitance."""
    return f"(if {p(v)} <= 0 then CBD/sqrt(1 - {p(v)}/PHIB) else CBD*(1 + {p(v)}/(2*PHIB)))"


def pulse(low, high, delay, t1, t2, t3, period):
    """Trapezoidal pulse and its time derivative, as functions of `time`."""
    tm = f"(time - {period}*floor(time/{period}))"
    v = (f"(if {tm} > {delay + t1 + t2 + t3} then {low} "
         f"else if {tm} > {delay + t1 + t2} then {(high - low) / t3}*({delay + t1 + t2 + t3} - {tm}) + {low} "
         f"else if {tm} > {delay + t1} then {high} "
         f"else if {tm} > {delay} then {(high - low) / t1}*({tm} - {delay}) + {low} "
         f"else {low})")
    vd = (f"(if {tm} > {delay + t1 + t2 + t3} then 0 "
          f"else if {tm} > {delay + t1 + t2} then {-(high - low) / t3} "
          f"else if {tm} > {delay + t1} then 0 "
          f"else if {tm} > {delay} then {(high - low) / t1} "
          f"else 0)")
    return v, vd
