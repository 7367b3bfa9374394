"""The unstable modes of the two-bit adding unit along a computed solution.

    python3 benches/testset/twobit_modes.py CSV T [T ...] [--corrected]

CSV is a `daec simulate models/testset/two_bit_adder.dae` result (columns
time, y[1..175], x[1..175]); at the row nearest to each time T the script
linearises the DAE as written in the model file, y' = f(t, x), 0 = y - g(x),
and prints the finite eigenvalues λ of the pencil det(∂f/∂x − λ·∂g/∂x) = 0
(the linearised charge-oriented circuit G(x)·x' = f(t, x), G = ∂g/∂x) whose
real part is positive, with the node potentials each mode lives on. The 13
nodes without a capacitance to ground make G singular: their infinite
eigenvalues are left out. Derivatives by central differences.

`--corrected` evaluates the last charge of the first NOR gate as
CBDBS(x[13] − x[5])·(x[13] − x[5]) instead of the published
CBDBS(x[13] − x[5])·(x[13] − x[15]) (test set `tba.F`, DNOR: G(I+12)), to
show which term makes a mode unstable.

With the published charge the incremental capacitance of node 13,
∂g13/∂x13 = C(v) + C'(v)·(x13 − x15) with v = x13 − x5, turns negative when
x15 − x13 exceeds 2·PHIB − 2v (from t ≈ 3.5, when x5 has fallen to ≈ 0.2 V),
and the circuit has a growing oscillation on x13 (λ ≈ 530 ± 27150i at
t = 10 ... 10.01). A solution resolved at tight tolerances follows it; the
test set's reference (RADAU5 at 1e-5) takes steps over which Radau IIA
damps it (|R(hλ)| < 1 for |hλ| large). Only numpy is needed.
"""
import csv
import math
import os
import re
import sys

import numpy as np

MODEL = os.path.join(os.path.dirname(__file__), "..", "..", "models", "testset",
                     "two_bit_adder.dae")
N = 175
TOKEN = re.compile(r"\s*(?:(\d+\.?\d*(?:[eE][-+]?\d+)?)|([A-Za-z_]\w*)|(<=|>=|==|[-+*/^()\[\],<>]))")


def tokens(text):
    out, i = [], 0
    while i < len(text):
        m = TOKEN.match(text, i)
        if not m:
            if text[i:].strip():
                raise ValueError(f"cannot read {text[i:i + 30]!r}")
            break
        i = m.end()
        out.append(m.group(1) or m.group(2) or m.group(3))
    return out


class Expr:
    """A recursive-descent translation of the model's expressions (numbers,
    x[k], y[k], parameters, time, + - * / ^, comparisons, sqrt, exp, floor,
    noEvent, if-then-else) into Python source."""

    def __init__(self, text):
        self.t, self.i = tokens(text), 0

    def peek(self):
        return self.t[self.i] if self.i < len(self.t) else None

    def take(self, want=None):
        tok = self.t[self.i]
        self.i += 1
        if want is not None and tok != want:
            raise ValueError(f"expected {want}, read {tok}")
        return tok

    def python(self):
        e = self.expr()
        if self.i != len(self.t):
            raise ValueError(f"trailing {self.t[self.i:self.i + 5]}")
        return e

    def expr(self):
        if self.peek() == "if":
            self.take()
            c = self.expr()
            self.take("then")
            a = self.expr()
            self.take("else")
            b = self.expr()
            return f"(({a}) if ({c}) else ({b}))"
        a = self.sum()
        if self.peek() in ("<=", ">=", "<", ">", "=="):
            op = self.take()
            return f"({a}{op}{self.sum()})"
        return a

    def sum(self):
        a = f"({self.take()}{self.product()})" if self.peek() in ("-", "+") else self.product()
        while self.peek() in ("+", "-"):
            op = self.take()
            a = f"({a}{op}{self.product()})"
        return a

    def product(self):
        a = self.power()
        while self.peek() in ("*", "/"):
            op = self.take()
            a = f"({a}{op}{self.power()})"
        return a

    def power(self):
        a = self.primary()
        if self.peek() == "^":
            self.take()
            return f"({a}**{self.primary()})"
        return a

    def primary(self):
        tok = self.take()
        if tok == "(":
            e = self.expr()
            self.take(")")
            return e
        if tok == "-":
            return f"(-{self.power()})"
        if tok[0].isdigit():
            return tok
        if self.peek() == "(":
            self.take()
            args = [self.expr()]
            while self.peek() == ",":
                self.take()
                args.append(self.expr())
            self.take(")")
            if tok == "noEvent":
                return args[0]
            return f"math.{tok}({', '.join(args)})"
        if self.peek() == "[":
            self.take()
            k = self.expr()
            self.take("]")
            return f"{tok}[{k}]"
        return tok


def load(corrected):
    text = open(MODEL).read()
    params = {"math": math}
    for m in re.finditer(r"parameter Real (\w+) = ([^;\"]+)", text):
        params[m.group(1)] = eval(Expr(m.group(2)).python(), params)
    f, g = [None] * (N + 1), [None] * (N + 1)
    for m in re.finditer(r"^  der\(y\[(\d+)\]\) = (.*);$", text, re.M):
        f[int(m.group(1))] = compile(Expr(m.group(2)).python(), "f", "eval")
    for m in re.finditer(r"^  0 = y\[(\d+)\] - (.*);$", text, re.M):
        k, rhs = int(m.group(1)), m.group(2)
        if corrected and k == 13:
            fixed = rhs.replace("*(x[13] - x[15])", "*(x[13] - x[5])")
            assert fixed != rhs, "the published charge of node 13 is not in the model"
            rhs = fixed
        g[k] = compile(Expr(rhs).python(), "g", "eval")
    assert all(f[1:]) and all(g[1:]), "not the charge-oriented two-bit adder"
    return params, f, g


def evaluate(params, funcs, t, x):
    env = dict(params, time=t, x=[0.0] + list(x))
    return np.array([eval(funcs[k], env) for k in range(1, N + 1)])


def jacobians(params, f, g, t, x):
    fx, gx = np.zeros((N, N)), np.zeros((N, N))
    for j in range(N):
        d = 1e-7 * max(1.0, abs(x[j]))
        xp, xm = x.copy(), x.copy()
        xp[j] += d
        xm[j] -= d
        fx[:, j] = (evaluate(params, f, t, xp) - evaluate(params, f, t, xm)) / (2 * d)
        gx[:, j] = (evaluate(params, g, t, xp) - evaluate(params, g, t, xm)) / (2 * d)
    return fx, gx


def finite_modes(fx, gx, shift=-7.0):
    """The finite eigenvalues of det(fx − λ·gx) = 0 and their vectors, by the
    shifted inverse (fx − σ·gx)^{-1}·gx, whose eigenvalue μ = 1/(λ − σ); the
    μ ≈ 0 of a singular gx are the infinite λ."""
    mu, vec = np.linalg.eig(np.linalg.solve(fx - shift * gx, gx))
    keep = np.abs(mu) > 1e-9 * np.abs(mu).max()
    return shift + 1.0 / mu[keep], vec[:, keep]


def main():
    args = [a for a in sys.argv[1:] if a != "--corrected"]
    if len(args) < 2:
        sys.exit(__doc__)
    params, f, g = load("--corrected" in sys.argv)
    reader = csv.reader(open(args[0]))
    header = next(reader)
    xcol = [header.index(f"x[{k}]") for k in range(1, N + 1)]
    rows = np.array([[float(v) for v in row] for row in reader])
    for want in map(float, args[1:]):
        i = min(np.searchsorted(rows[:, 0], want), len(rows) - 1)
        t, x = rows[i, 0], rows[i, xcol]
        lam, vec = finite_modes(*jacobians(params, f, g, t, x))
        print(f"t = {t:.9g}: {len(lam)} finite eigenvalues, largest real part {lam.real.max():.4g}")
        for k in np.argsort(-lam.real):
            if lam[k].real <= 1e-6 * max(1.0, abs(lam[k])):
                break
            v = np.abs(vec[:, k])
            top = np.argsort(-v)[:4]
            nodes = ", ".join(f"x[{j + 1}] {v[j] / v.max():.2f}" for j in top)
            print(f"  λ = {lam[k].real:.6g} {lam[k].imag:+.6g}i  on {nodes}")


if __name__ == "__main__":
    main()
