"""Writes models/testset/fekete.dae (the Fekete problem of the IVP test set).

The equations are written with `for` loops; this script only computes the
test set's initial values (fekinit: points on the sphere given by angles,
q = 0, mu = 0, lambda from the first evaluation of the right-hand side) and
prints them with 17 significant digits.
Run from the repository root: python3 benches/testset/gen_fekete.py
"""
import math

N = 20
ALPHA = 0.5


def initial_points():
    pts = []
    for i in range(1, 4):
        pts.append((2 * math.pi * i / 3 + math.pi / 13, 3 * math.pi / 8))
    for i in range(4, 11):
        pts.append((2 * math.pi * (i - 3) / 7 + math.pi / 29, math.pi / 8))
    for i in range(11, 17):
        pts.append((2 * math.pi * (i - 10) / 6 + math.pi / 7, -2 * math.pi / 15))
    for i in range(17, 21):
        pts.append((2 * math.pi * (i - 17) / 4 + math.pi / 17, -3 * math.pi / 10))
    return [(math.cos(a) * math.cos(b), math.sin(a) * math.cos(b), math.sin(b)) for a, b in pts]


def initial_lambda(p):
    # With q = 0 and lambda = 0: q'_i = sum_j (p_i - p_j)/|p_i - p_j|^2;
    # lambda_i = -p_i . q'_i / 2 (makes the derivative of p_i . q_i vanish).
    lam = []
    for i in range(N):
        f = [0.0, 0.0, 0.0]
        for j in range(N):
            if i == j:
                continue
            rn = sum((p[i][k] - p[j][k]) ** 2 for k in range(3))
            for k in range(3):
                f[k] += (p[i][k] - p[j][k]) / rn
        lam.append(-sum(p[i][k] * f[k] for k in range(3)) / 2)
    return lam


HEADER = """\
// Fekete problem (IVP test set problem "fekete"), stabilized index-2 formulation.
// Source: Test Set for IVP Solvers, release 2.4 (Univ. of Bari), problem file `fekete.F`
//   revision `$Id: fekete.F,v 1.2 2006/10/02 10:29:14 testset Exp $`, as carried by the
//   R package deTestSet 1.1.7.4 (src/Ex_fekete.f: fekfunc, fekinit, feksoln); description
//   document "Fekete problem" (test set report, Part II; E. Hairer, W. M. Lioen).
// Test set: index 2 DAE of dimension 160 = 8*20: positions p[i,:] of 20 points on the
//   unit sphere, velocities q[i,:], multipliers lambda[i] and mu[i];
//   p' = q + 2 mu p, q' = -alpha q + 2 lambda p + sum_{j != i} (p_i - p_j)/|p_i - p_j|^2,
//   0 = |p_i|^2 - 1, 0 = 2 p_i . q_i (alpha = 1/2); t in [0, 1000]. The sum over j != i
//   is written as two sums over the points before and after i (the ranges 1:i-1 and
//   i+1:N). Variable order of the test set's y: p row by row (y1..y60 = p[1,1], p[1,2],
//   p[1,3], p[2,1], ...), then q likewise (y61..y120), lambda (y121..y140), mu (y141..y160).
// Initial values of the test set (fekinit): p[i,:] = (cos a cos b, sin a cos b, sin b)
//   for the angles (a, b) of fekinit, q = 0, mu = 0, lambda[i] = -p_i . F_i / 2 with F_i
//   the repulsion sum at t = 0; the numbers below are these formulas evaluated in double
//   precision by benches/testset/gen_fekete.py. Consistent; p and q are fixed (they
//   satisfy the constraints to rounding and determine lambda and mu).
// Reference: y(1000) in fekete.ref.json (feksoln, RADAU5 at tolerance 1e-12).
// expect: index=2 dof=80
"""


def main():
    p = initial_points()
    lam = initial_lambda(p)
    fmt = lambda x: repr(x)
    prows = ", ".join("{" + ", ".join(fmt(x) for x in row) + "}" for row in p)
    out = [HEADER.rstrip("\n"),
           "model Fekete \"Fekete problem, index 2, 160 equations (IVP test set fekete)\"",
           "  parameter Integer N = 20 \"number of points\";",
           "  parameter Real alpha = 0.5 \"damping\";",
           f"  Real p[N, 3](start = {{{prows}}}, each fixed = true) \"positions\";",
           "  Real q[N, 3](each start = 0, each fixed = true) \"velocities\";",
           f"  Real lambda[N](start = {{{', '.join(fmt(x) for x in lam)}}}) \"multipliers of the velocity rows\";",
           "  Real mu[N](each start = 0) \"multipliers of the position rows\";",
           "equation",
           "  for i in 1:N loop",
           "    for k in 1:3 loop",
           "      der(p[i, k]) = q[i, k] + 2*mu[i]*p[i, k];",
           "      der(q[i, k]) = -alpha*q[i, k] + 2*lambda[i]*p[i, k]",
           "        + sum((p[i, k] .- p[1:i - 1, k]) ./ ((p[i, 1] .- p[1:i - 1, 1]).^2",
           "          + (p[i, 2] .- p[1:i - 1, 2]).^2 + (p[i, 3] .- p[1:i - 1, 3]).^2))",
           "        + sum((p[i, k] .- p[i + 1:N, k]) ./ ((p[i, 1] .- p[i + 1:N, 1]).^2",
           "          + (p[i, 2] .- p[i + 1:N, 2]).^2 + (p[i, 3] .- p[i + 1:N, 3]).^2));",
           "    end for;",
           "    0 = p[i, 1]^2 + p[i, 2]^2 + p[i, 3]^2 - 1 \"on the unit sphere\";",
           "    0 = 2*(p[i, 1]*q[i, 1] + p[i, 2]*q[i, 2] + p[i, 3]*q[i, 3]) \"velocity tangential\";",
           "  end for;",
           "  annotation(experiment(StartTime = 0, StopTime = 1000, Tolerance = 1e-6, Interval = 10));",
           "end Fekete;"]
    open("models/testset/fekete.dae", "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
