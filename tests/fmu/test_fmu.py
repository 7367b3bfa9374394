"""FMUs written by `daec fmu`, checked by an independent importer (FMPy).

Every FMU must pass `fmpy.validation.validate_fmu` without a problem, and
`fmpy.simulate_fmu` must reproduce `daec simulate` at t_end to 1e-6
(mixed: |a - b| <= 1e-6 * (1 + |b|)). Both run at a tolerance far below
that (1e-10): the FMU restarts daec's integrator at every communication
point, `daec simulate` does not, so the two runs take different steps.

The release binaries are taken from `$DAEC` (default
`target/release/daec`); the FMU runtime library beside it
(`libdaec_fmu.so`) is found by `daec fmu` itself. `.ci/run` builds both
and runs this file.
"""

import csv
import io
import math
import os
import subprocess
import zipfile
from pathlib import Path

import pytest
from fmpy import read_model_description, simulate_fmu
from fmpy.fmi1 import FMICallException
from fmpy.fmi2 import FMU2Slave
from fmpy.validation import validate_fmu

ROOT = Path(__file__).resolve().parents[2]
DAEC = Path(os.environ.get("DAEC", ROOT / "target" / "release" / "daec"))
RTOL = 1e-10
MATCH = 1e-6

# (model, t_end, communication interval, extra `daec fmu`/`simulate` options)
MODELS = [
    # index 3: the pendulum, HiC (the default) and StE with dynamic state
    # selection, which switches between the variants within the run
    ("models/steinbrecher/pendulum.dae", 2.0, 0.1, []),
    ("models/steinbrecher/pendulum.dae", 2.0, 0.1, ["--form", "ste"]),
    # the index-3 formulation of projected Radau IIA (see UNCONTROLLED)
    ("models/steinbrecher/pendulum.dae", 2.0, 0.1, ["--method", "radau5-projected"]),
    # circuits: index 0, 1 and 2
    ("models/fmu/rc_circuit.dae", 10.0, 0.1, []),
    ("models/wunderlich/rlc_first_order.dae", 7.0, 0.1, []),
    ("models/baese/cv_loop_circuit.dae", 1.0, 0.01, []),
    # Lotka-Volterra (index 0)
    ("models/fmu/lotka_volterra.dae", 20.0, 0.2, []),
    # a `when`/`reinit` event between two communication points
    ("models/ndsolve/event_reinit.dae", 2.0, 0.15, []),
]

# Variables whose error the integrator does not control to the tolerance,
# left out of the comparison: the index-3 formulation weighs the error of
# the index-3 multiplier by h^2 (`--error-control index`, RADAU5's
# scaling), so its λ is accurate to about 1e-3 in `daec simulate` and in
# the FMU alike, which restarts at every communication point.
UNCONTROLLED = {("pendulum", "--methodradau5-projected"): {"lambda"}}


def daec(*args, check=True):
    run = subprocess.run([str(DAEC), *map(str, args)], capture_output=True, text=True)
    if check and run.returncode != 0:
        raise AssertionError(f"daec {' '.join(map(str, args))} exited {run.returncode}:\n{run.stderr}")
    return run


def build_fmu(tmp_path, model, options=(), params=()):
    out = tmp_path / (Path(model).stem + ".fmu")
    pflags = [f for p in params for f in ("-p", p)]
    daec("fmu", ROOT / model, "-o", out, *options, *pflags)
    return out


def reference(model, t_end, options=(), params=()):
    """The last row of `daec simulate` as {name: value}."""
    pflags = [f for p in params for f in ("-p", p)]
    run = daec("simulate", ROOT / model, "--t-end", t_end, "--rtol", RTOL, *options, *pflags)
    rows = list(csv.reader(io.StringIO(run.stdout)))
    header, last = rows[0], rows[-1]
    assert math.isclose(float(last[0]), t_end), last
    return dict(zip(header[1:], map(float, last[1:])))


def assert_matches(result, ref, skip=()):
    bad = []
    for name, want in ref.items():
        if name in skip:
            continue
        got = float(result[name][-1])
        if not abs(got - want) <= MATCH * (1 + abs(want)):
            bad.append(f"{name}: FMU {got!r}, daec simulate {want!r}")
    assert not bad, "\n".join(bad)


def ids(m):
    return f"{Path(m[0]).stem}{''.join(m[3])}"


@pytest.mark.parametrize("model,t_end,dt,options", MODELS, ids=[ids(m) for m in MODELS])
def test_fmpy_validates_and_reproduces_daec_simulate(tmp_path, model, t_end, dt, options):
    fmu = build_fmu(tmp_path, model, options)
    assert validate_fmu(str(fmu)) == []
    md = read_model_description(str(fmu))
    assert md.coSimulation is not None and md.modelExchange is None
    result = simulate_fmu(
        str(fmu), stop_time=t_end, output_interval=dt, relative_tolerance=RTOL
    )
    assert result["time"][-1] == pytest.approx(t_end)
    skip = UNCONTROLLED.get((Path(model).stem, "".join(options)), ())
    assert_matches(result, reference(model, t_end, options), skip)


# Model Exchange: (model, t_end, output interval, --kind). The importer's
# integrator (FMPy's CVode, at RTOL) steps the states; the FMU solves the
# algebraic unknowns and handles the events.
ME_MODELS = [
    # circuits: index 0 and 1 (the algebraic unknowns solved by the FMU)
    ("models/fmu/rc_circuit.dae", 10.0, 0.1, "me"),
    ("models/wunderlich/rlc_first_order.dae", 7.0, 0.1, "both"),
    # Lotka-Volterra, both kinds in one FMU
    ("models/fmu/lotka_volterra.dae", 20.0, 0.2, "both"),
    # a when/reinit event at the floor and a relation (a mode) at each apex
    ("models/fmu/bouncing_ball.dae", 2.5, 0.05, "me"),
]


@pytest.mark.parametrize(
    "model,t_end,dt,kind", ME_MODELS, ids=[f"{Path(m[0]).stem}-{m[3]}" for m in ME_MODELS]
)
def test_model_exchange_reproduces_daec_simulate(tmp_path, model, t_end, dt, kind):
    fmu = build_fmu(tmp_path, model, ["--kind", kind])
    assert validate_fmu(str(fmu)) == []
    md = read_model_description(str(fmu))
    assert md.modelExchange is not None
    assert (md.coSimulation is not None) == (kind == "both")
    ref = reference(model, t_end)
    kinds = ["ModelExchange", "CoSimulation"] if kind == "both" else ["ModelExchange"]
    for fmi_type in kinds:
        result = simulate_fmu(
            str(fmu),
            stop_time=t_end,
            output_interval=dt,
            fmi_type=fmi_type,
            solver="CVode",
            relative_tolerance=RTOL,
        )
        assert result["time"][-1] == pytest.approx(t_end)
        assert_matches(result, ref)


def test_model_exchange_of_an_index_1_formulation(tmp_path):
    """`--kind me --form di1` exports the pendulum's DI1 formulation (index
    1): the importer integrates it as `daec simulate --form di1` does."""
    model, t_end = "models/steinbrecher/pendulum.dae", 1.0
    fmu = build_fmu(tmp_path, model, ["--kind", "me", "--form", "di1"])
    assert validate_fmu(str(fmu)) == []
    md = read_model_description(str(fmu))
    assert md.modelExchange is not None and md.coSimulation is None
    assert md.modelName == "Pendulum_di1"
    assert len(md.derivatives) == 4
    result = simulate_fmu(
        str(fmu), stop_time=t_end, output_interval=0.01, fmi_type="ModelExchange",
        solver="CVode", relative_tolerance=RTOL,
    )
    assert_matches(result, reference(model, t_end, ["--form", "di1"]))


def test_model_exchange_is_refused_for_the_index_3_pendulum(tmp_path):
    run = daec(
        "fmu", ROOT / "models/steinbrecher/pendulum.dae", "--kind", "me",
        "-o", tmp_path / "p.fmu", check=False,
    )
    assert run.returncode == 1, run.stderr
    assert "the model is of index 3" in run.stderr and "use --kind cs" in run.stderr
    assert not (tmp_path / "p.fmu").exists()


def test_parameters_set_before_initialisation_reach_the_model(tmp_path):
    model = "models/fmu/lotka_volterra.dae"
    fmu = build_fmu(tmp_path, model)
    result = simulate_fmu(
        str(fmu),
        stop_time=5.0,
        output_interval=0.1,
        relative_tolerance=RTOL,
        start_values={"alpha": 0.9, "y": 5.0},
    )
    # (a start value of a fixed unknown is its initial value)
    assert result["y"][0] == 5.0
    # `daec simulate` with the same values: -p for the parameter, and the
    # start of y through a copy of the model
    text = (ROOT / model).read_text().replace("Real y(start = 10", "Real y(start = 5")
    copy = tmp_path / "lv_y5.dae"
    copy.write_text(text)
    ref = reference(copy, 5.0, params=["alpha=0.9"])
    assert_matches(result, ref)


def test_parameters_exported_with_p_are_the_defaults(tmp_path):
    model = "models/fmu/lotka_volterra.dae"
    fmu = build_fmu(tmp_path, model, params=["beta=0.5"])
    md = read_model_description(str(fmu))
    beta = next(v for v in md.modelVariables if v.name == "beta")
    assert (beta.causality, beta.variability, float(beta.start)) == ("parameter", "fixed", 0.5)
    result = simulate_fmu(str(fmu), stop_time=3.0, output_interval=0.1, relative_tolerance=RTOL)
    assert_matches(result, reference(model, 3.0, params=["beta=0.5"]))


def slave(fmu, tmp_path):
    md = read_model_description(str(fmu))
    unzipped = tmp_path / "unzipped"
    zipfile.ZipFile(fmu).extractall(unzipped)
    s = FMU2Slave(
        guid=md.guid,
        unzipDirectory=str(unzipped),
        modelIdentifier=md.coSimulation.modelIdentifier,
        instanceName="daec",
    )
    s.instantiate()
    vrs = {v.name: v.valueReference for v in md.modelVariables}
    return s, vrs


def test_fmu_state_and_reset_repeat_the_run(tmp_path):
    fmu = build_fmu(tmp_path, "models/steinbrecher/pendulum.dae")
    s, vrs = slave(fmu, tmp_path)
    xy = [vrs["x"], vrs["y"], vrs["lambda"]]
    h = 0.05

    def start():
        s.setupExperiment(tolerance=1e-8, startTime=0.0)
        s.enterInitializationMode()
        s.exitInitializationMode()

    def steps(t, n):
        """n steps of h from t: the values after each."""
        out = []
        for k in range(n):
            s.doStep(t + k * h, h)
            out.append(s.getReal(xy))
        return out

    start()
    steps(0.0, 6)
    state = s.getFMUstate()
    path = steps(6 * h, 6)
    s.setFMUstate(state)
    assert steps(6 * h, 6) == path
    s.freeFMUstate(state)
    # fmi2Reset: the same run from the start
    s.reset()
    start()
    assert steps(0.0, 12)[-1] == path[-1]
    s.terminate()
    s.freeInstance()


def test_bad_values_and_value_references_are_errors(tmp_path, capsys):
    fmu = build_fmu(tmp_path, "models/fmu/lotka_volterra.dae")
    s, vrs = slave(fmu, tmp_path)

    def refused(call, fragment):
        capsys.readouterr()
        with pytest.raises(FMICallException):
            call()
        # (FMPy's logger prints the FMU's messages)
        assert fragment in capsys.readouterr().out

    alpha = vrs["alpha"]
    refused(lambda: s.setReal([alpha], [float("nan")]), "is not a finite number")
    refused(lambda: s.setReal([10_000], [1.0]), "is not a variable of this FMU")
    refused(lambda: s.getReal([10_000]), "is not a variable of this FMU")
    refused(lambda: s.setReal([vrs["gamma"], alpha], [0.5, float("inf")]), "`alpha`")
    # the instance still works after the refused calls, which set nothing
    assert s.getReal([vrs["gamma"]]) == [0.4]
    s.setReal([alpha], [1.0])
    s.setupExperiment(startTime=0.0)
    s.enterInitializationMode()
    s.exitInitializationMode()
    assert s.getReal([alpha]) == [1.0]
    refused(lambda: s.setReal([alpha], [2.0]), "fixed after initialisation")
    refused(lambda: s.doStep(1.0, 0.1), "the communication points must follow each other")
    s.freeInstance()


def test_usage_errors_exit_2(tmp_path):
    model = ROOT / "models/fmu/lotka_volterra.dae"
    for args, fragment in [
        (["--kind", "mx"], "unknown `--kind mx`"),
        (["--fmi-version", "3"], "FMI 3.0"),
        (["--method", "radau-2nd"], "first-order formulation"),
        (["--runtime", tmp_path / "missing.so"], "was not found"),
        (["-o", tmp_path], "not a regular file"),
    ]:
        run = daec("fmu", model, *args, check=False)
        assert run.returncode == 2, (args, run.stderr)
        assert fragment in run.stderr, (args, run.stderr)
