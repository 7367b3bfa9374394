"""Shared fixtures of the tests of the Python package `daec`."""

import os
import pathlib
import shutil

import pytest

#: The workspace root (crates/daec-py/tests/ → three levels up).
ROOT = pathlib.Path(__file__).resolve().parents[3]

#: The pendulum of Steinbrecher 2016, Ex. 2.7 (parameters m, l, g).
PENDULUM = ROOT / "models" / "steinbrecher" / "pendulum.dae"

#: A model with a misspelt unknown (an error with a place).
MISSPELT = ROOT / "models" / "err" / "undeclared_variable_near_miss.dae"

#: Exponential decay with a parameter `k`, as text.
DECAY = """model Decay
  parameter Real k = 2 "rate";
  Real x(start = 1);
equation
  der(x) = -k*x;
end Decay;
"""

#: x' = x^2 from x = 1: the solution 1/(1 - t) escapes at t = 1.
BLOW_UP = """model BlowUp
  Real x(start = 1);
equation
  der(x) = x^2;
end BlowUp;
"""


def daec_binary() -> pathlib.Path:
    """The `daec` command line the package is compared with: $DAEC_BIN,
    else target/release/daec, else target/debug/daec, else `daec` on the
    PATH."""
    if "DAEC_BIN" in os.environ:
        return pathlib.Path(os.environ["DAEC_BIN"])
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    for profile in ("release", "debug"):
        path = target / profile / "daec"
        if path.is_file():
            return path
    found = shutil.which("daec")
    if found is None:
        pytest.fail("no daec binary: build it with `cargo build --release -p daec-cli` or set DAEC_BIN")
    return pathlib.Path(found)


@pytest.fixture(scope="session")
def daec_bin() -> pathlib.Path:
    return daec_binary()
