"""The functions of the package `daec`, their errors, pickling, and the
equality of their results with the command line's."""

import csv
import io
import json
import pickle
import subprocess
import threading

import numpy as np
import pytest

import daec
from conftest import BLOW_UP, DECAY, MISSPELT, PENDULUM


def cli(daec_bin, *args, ok=(0,)):
    out = subprocess.run([str(daec_bin), *map(str, args)], capture_output=True, text=True)
    assert out.returncode in ok, out.stderr
    return out


def read_csv(text):
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0], [[float(v) for v in row] for row in rows[1:]]


# --- simulate -----------------------------------------------------------

def test_simulate_equals_the_cli_to_the_last_digit(daec_bin, tmp_path):
    stats = tmp_path / "stats.json"
    opts = dict(t_end=2.5, rtol=1e-7, interval=0.05, params={"g": 9.81})
    out = cli(daec_bin, "simulate", PENDULUM, "--t-end", "2.5", "--rtol", "1e-07",
              "--interval", "0.05", "-p", "g=9.81", "--stats-json", stats)
    header, rows = read_csv(out.stdout)
    r = daec.simulate(PENDULUM, **opts)
    assert header == ["time", *r.names]
    assert r.names == ["x", "y", "v", "w", "lambda"]
    expected = np.array(rows)
    assert r.time.shape == (51,)
    # exact: the CSV prints the shortest text that reads back to the same float
    assert np.array_equal(r.time, expected[:, 0])
    for j, name in enumerate(r.names):
        assert np.array_equal(r[name], expected[:, j + 1]), name
    cli_stats = json.loads(stats.read_text())
    assert set(r.stats) == set(cli_stats)
    for key, value in cli_stats.items():
        if not key.endswith("_seconds"):
            assert r.stats[key] == value, key
    assert r.stats["steps_accepted"] > 0


def test_simulate_takes_the_model_text_and_parameters():
    r = daec.simulate(DECAY, t_end=1.0, params={"k": 3})
    assert r.names == ["x"]
    assert r.time[0] == 0.0 and r.time[-1] == 1.0
    assert abs(r["x"][-1] - np.exp(-3.0)) < 1e-5
    assert "x" in r and "time" in r and "y" not in r
    assert len(r) == len(r.time)
    assert list(r) == ["x"]


def test_numpy_numbers_are_options_and_parameters():
    r = daec.simulate(DECAY, t_end=np.float32(0.5), rtol=np.float64(1e-7), params={"k": np.int64(3)})
    same = daec.simulate(DECAY, t_end=0.5, rtol=1e-7, params={"k": 3})
    assert np.array_equal(r.values, same.values)
    with pytest.raises(ValueError, match="parameter `k` must be finite"):
        daec.simulate(DECAY, params={"k": float("inf")})


def test_warnings_of_a_run_are_python_warnings():
    model = DECAY.replace("Real x(start = 1);", "Real x(start = 1, max = 1.5);").replace("-k*x", "k*x")
    with pytest.warns(RuntimeWarning, match="x.*max") as record:
        r = daec.simulate(model, t_end=1.0)
    assert r["x"][-1] > 1.5
    assert all(str(w.message).startswith("warning") for w in record)


def test_result_columns_are_views_of_one_array():
    r = daec.simulate(PENDULUM, t_end=0.5)
    assert r.values.shape == (len(r.time), 5)
    assert r["x"].base is not None
    assert np.shares_memory(r["x"], r.values)
    assert r["time"] is r.time


def test_result_repr_and_missing_variable():
    r = daec.simulate(PENDULUM, t_end=1.0, interval=0.5)
    text = repr(r)
    assert text.startswith("<daec.Result: 3 times (t = 0 … 1), 5 variables [x, y, v, w, lambda]")
    with pytest.raises(KeyError, match="no variable `z`"):
        r["z"]


def test_result_to_pandas():
    pd = pytest.importorskip("pandas")
    r = daec.simulate(PENDULUM, t_end=1.0, interval=0.25)
    df = r.to_pandas()
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == r.names
    assert df.index.name == "time"
    assert np.array_equal(df.index.to_numpy(), r.time)
    assert np.array_equal(df["lambda"].to_numpy(), r["lambda"])


def test_result_plot_labels_the_axes():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    r = daec.simulate(PENDULUM, t_end=1.0)
    ax = r.plot(vars=["x", "y"])
    assert ax.get_xlabel() == "time"
    assert ax.get_ylabel() == "value"
    assert [line.get_label() for line in ax.get_lines()] == ["x", "y"]
    assert np.array_equal(ax.get_lines()[1].get_ydata(), r["y"])
    assert len(r.plot().get_lines()) == 5


def test_result_pickles_with_its_arrays():
    r = daec.simulate(PENDULUM, t_end=1.0)
    back = pickle.loads(pickle.dumps(r))
    assert back.names == r.names
    assert np.array_equal(back.time, r.time)
    assert np.array_equal(back["lambda"], r["lambda"])
    assert back.stats == r.stats
    assert np.shares_memory(back["x"], back.values)


def test_simulate_runs_beside_other_python_threads():
    # the GIL is released while integrating: runs on two Python threads
    # both finish, with the same numbers as a run alone
    alone = daec.simulate(PENDULUM, t_end=2.0)
    out = [None, None]

    def work(k):
        out[k] = daec.simulate(PENDULUM, t_end=2.0)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in out:
        assert np.array_equal(r.values, alone.values)


# --- simulate_many ------------------------------------------------------

def test_simulate_many_equals_one_simulate_per_parameter_set():
    sets = [{"g": g} for g in (9.0, 9.81, 13.75, 20.0, 1.0)]
    many = daec.simulate_many(PENDULUM, params=sets, t_end=1.0, rtol=1e-7, workers=2)
    assert len(many) == len(sets)
    for p, r in zip(sets, many):
        one = daec.simulate(PENDULUM, t_end=1.0, rtol=1e-7, params=p)
        assert np.array_equal(r.values, one.values), p
        assert np.array_equal(r.time, one.time)
    # the parameters change the runs
    assert not np.array_equal(many[0]["y"], many[3]["y"])


def test_simulate_many_takes_the_model_text_and_raises_the_first_failure():
    rs = daec.simulate_many(DECAY, params=[{"k": 1}, {"k": 2}], t_end=1.0)
    assert abs(rs[0]["x"][-1] - np.exp(-1.0)) < 1e-5
    assert abs(rs[1]["x"][-1] - np.exp(-2.0)) < 1e-5
    with pytest.raises(daec.ModelError, match="nope"):
        daec.simulate_many(DECAY, params=[{"k": 1}, {"nope": 2}], t_end=1.0)
    assert daec.simulate_many(DECAY, params=[], t_end=1.0) == []


#: Decaying components (their number an Integer parameter, their start
#: value a Real one) and `y' = a*y^2`, which escapes at t = 1 for a = 1.
ENSEMBLE = """model Ensemble
  parameter Integer N = 2 "number of decaying components";
  parameter Real k = 2 "rate";
  parameter Real x0 = 1 "start value of the components";
  parameter Real a = 0 "growth of y";
  Real x[N](each start = x0);
  Real y(start = 1);
equation
  for i in 1:N loop
    der(x[i]) = -i*k*x[i];
  end for;
  der(y) = a*y^2;
end Ensemble;
"""


def without_timings(stats):
    return {k: v for k, v in stats.items() if not k.endswith("_seconds")}


def assert_each_equals_simulate(model, sets, many, **opts):
    """Asserts that each outcome of `simulate_many` (`errors="return"`)
    equals that of one `simulate` per set bit for bit (a failed run's
    exception and partial results)."""
    for k, (p, got) in enumerate(zip(sets, many)):
        try:
            one = daec.simulate(model, params=p, **opts)
        except daec.SimulationError as e:
            assert isinstance(got, daec.SimulationError), p
            assert (got.index, got.params) == (k, p)
            assert (got.time, got.cause, str(got)) == (e.time, e.cause, str(e))
            got, one = got.result, e.result
        assert got.names == one.names, p
        assert np.array_equal(got.time, one.time), p
        assert np.array_equal(got.values, one.values), p
        assert without_timings(got.stats) == without_timings(one.stats), p


def test_simulate_many_is_bit_for_bit_simulate_per_set():
    sets = [
        {"k": 1},
        {"x0": 3.0},  # a start value through a parameter
        {"N": 3},  # a structural Integer parameter: another array size
        {"k": 0.5, "x0": -1.5},
        {"a": 1.0},  # y escapes at t = 1: this run fails
        {"N": 4, "k": 3},
    ]
    opts = dict(t_end=2.0, rtol=1e-8, interval=0.1)
    many = daec.simulate_many(ENSEMBLE, params=sets, workers=2, errors="return", **opts)
    assert len(many) == len(sets)
    assert_each_equals_simulate(ENSEMBLE, sets, many, **opts)
    assert isinstance(many[4], daec.SimulationError) and many[4].cause == "solver"
    assert many[1]["x[1]"][0] == 3.0 and many[0]["x[1]"][0] == 1.0
    assert "x[3]" in many[2] and "x[3]" not in many[0]
    assert many[5].names == ["x[1]", "x[2]", "x[3]", "x[4]", "y"]


def test_simulate_many_shares_the_analysis_of_a_study():
    sets = [{"g": g, "l": l} for g, l in ((9.81, 1.0), (1.0, 2.0), (20.0, 0.5), (13.75, 1.5))]
    many = daec.simulate_many(PENDULUM, params=sets, t_end=1.0, workers=2)
    for p, r in zip(sets, many):
        one = daec.simulate(PENDULUM, t_end=1.0, params=p)
        assert np.array_equal(r.time, one.time), p
        assert np.array_equal(r.values, one.values), p
        assert without_timings(r.stats) == without_timings(one.stats), p
    # (the private binding counts the runs that reused the first's analysis
    # and its prepared simulation)
    runs = [["daec", "simulate", str(PENDULUM), "--t-end", "1", *daec._param_args(p)] for p in sets]
    _, reused, rebound, prepared = daec._daec.run_many(runs, str(PENDULUM), None, 2)
    assert (reused, rebound, prepared) == (len(sets) - 1, len(sets) - 1, 1)


#: A binding equation and a parameter computed from another, through
#: `Real` parameters.
BOUND = """model Bound
  parameter Real k = 2;
  parameter Real c = 3*k;
  Real x(start = 1, fixed = true);
  Real v = c*x;
equation
  der(x) = -k*x;
end Bound;
"""


def study_counts(model, sets, **opts):
    """`simulate_many` on one worker (the first set is the shared one),
    asserted equal to one `simulate` per set bit for bit (a failed run's
    partial results); the results (or exceptions), how many runs reused
    the analysis and the prepared simulation, and how many prepared the
    model in full."""
    many = daec.simulate_many(model, params=sets, workers=1, errors="return", **opts)
    assert_each_equals_simulate(model, sets, many, **opts)
    extra = []
    for k, v in opts.items():
        flag = f"--{k.replace('_', '-')}"
        extra += [flag] if v is True else [flag, str(v)]
    arg, text = daec._source(model)
    runs = [["daec", "simulate", arg, *extra, *daec._param_args(p)] for p in sets]
    _, reused, rebound, prepared = daec._daec.run_many(runs, arg, text, 1)
    assert prepared == len(sets) - rebound
    return many, reused, rebound, prepared


def study(model, sets, **opts):
    """:func:`study_counts` without the count of preparations."""
    return study_counts(model, sets, **opts)[:3]


def test_simulate_many_rebinds_the_prepared_simulation():
    sets = [
        {"k": 1},
        {"k": 2.5},
        {"x0": 3.0},  # a start value through a parameter
        {"N": 3},  # a structural Integer parameter: prepared alone
        {"k": 0.5, "x0": -1.5},
        {"a": 1.0},  # y escapes at t = 1: this run fails
    ]
    many, reused, rebound, prepared = study_counts(
        ENSEMBLE, sets, t_end=2.0, rtol=1e-8, interval=0.1
    )
    # (N = 3 changes the equations: that run is prepared on its own)
    assert (reused, rebound, prepared) == (4, 4, 2)
    assert many[2]["x[1]"][0] == 3.0 and many[4]["x[2]"][0] == -1.5
    assert "x[3]" in many[3] and "x[3]" not in many[0]
    assert isinstance(many[5], daec.SimulationError) and many[5].index == 5
    # a binding equation's value and a parameter computed from another
    sets = [{}, {"k": 1.0}, {"c": 10.0}, {"k": 0.5, "c": 1.0}]
    many, reused, rebound = study(BOUND, sets, t_end=1.0)
    assert (reused, rebound) == (3, 3)
    for p, r in zip(sets, many):
        c = p.get("c", 3 * p.get("k", 2.0))
        assert np.allclose(r["v"], c * r["x"], rtol=1e-12, atol=0), p
        assert abs(r["x"][-1] - np.exp(-p.get("k", 2.0))) < 1e-5, p


#: A bouncing ball whose floor is a parameter (a `when` event), with
#: drag on the sign of the velocity (an `if` mode).
BALL = """model Ball
  parameter Real g = 9.81;
  parameter Real e = 0.8;
  parameter Real floor = 0;
  parameter Real h0 = 1;
  Real h(start = h0, fixed = true);
  Real v(start = 0, fixed = true);
equation
  der(h) = v;
  der(v) = -g - (if v > 0 then 0.05*v*v else -0.05*v*v);
  when h < floor then
    reinit(v, -e*v);
  end when;
end Ball;
"""

#: The pendulum written with second derivatives.
PENDULUM_2ND = """model P2
  parameter Real g = 9.81;
  parameter Real l = 1;
  Real x(start = 1);
  Real y(start = 0, fixed = true);
  Real lambda(start = 0);
initial equation
  der(y) = 0;
equation
  der(der(x)) = lambda*x;
  der(der(y)) = lambda*y - g;
  x^2 + y^2 = l^2;
end P2;
"""

#: The pendulum with its energy declared as an invariant.
PENDULUM_ENERGY = PENDULUM.parent / "pendulum_energy.dae"


def test_simulate_many_prepares_a_model_with_events_once():
    sets = [{}, {"floor": 0.3}, {"e": 0.5, "h0": 2.0}, {"g": 5.0, "floor": -0.5}]
    many, reused, rebound, prepared = study_counts(BALL, sets, t_end=2.5)
    assert (reused, rebound, prepared) == (3, 3, 1)
    # the floor moved up: the first bounce is where h = 0.3
    first = np.argmax(np.diff(many[1]["v"]) > 1.0)
    assert abs(many[1]["h"][first] - 0.3) < 0.05


@pytest.mark.parametrize(
    "model,opts",
    [
        (PENDULUM_ENERGY, {}),  # a declared invariant, kept as constraint rows
        (PENDULUM_ENERGY, {"method": "projection"}),
        (PENDULUM, {"form": "ste"}),
        (PENDULUM, {"form": "dd"}),
        (PENDULUM_2ND, {"method": "radau-2nd"}),
    ],
    ids=["invariant", "invariant-projection", "ste", "dd", "radau-2nd"],
)
def test_simulate_many_prepares_every_kind_of_model_once(model, opts):
    sets = [{}, {"g": 9.81, "l": 2.0}, {"g": 20.0}]
    if model is PENDULUM_ENERGY:
        sets = [{}, {"g": 9.81}, {"g": 5.0, "m": 2.0}]
    _, reused, rebound, prepared = study_counts(model, sets, t_end=1.0, **opts)
    assert (reused, rebound, prepared) == (2, 2, 1)


def test_simulate_many_native_shares_one_library(tmp_path, monkeypatch):
    monkeypatch.setenv("DAEC_CACHE_DIR", str(tmp_path / "cache"))
    sets = [{}, {"g": 9.81, "l": 2.0}, {"g": 20.0}]
    _, reused, rebound, prepared = study_counts(PENDULUM, sets, t_end=1.0, native=True)
    assert (reused, rebound, prepared) == (2, 2, 1)
    # the parameters are inputs of the library: one build serves every set
    assert len(list((tmp_path / "cache").glob("*.so"))) == 1


def test_simulate_many_names_the_failed_run():
    sets = [{"a": 0.0}, {"a": 1.0}, {"a": 2.0}]
    with pytest.raises(daec.SimulationError) as e:
        daec.simulate_many(ENSEMBLE, params=sets, t_end=2.0)
    # the first failure in the order of the sets
    assert (e.value.index, e.value.params) == (1, {"a": 1.0})
    back = pickle.loads(pickle.dumps(e.value))
    assert (back.index, back.params, back.time) == (1, {"a": 1.0}, e.value.time)
    rs = daec.simulate_many(ENSEMBLE, params=sets, t_end=2.0, errors="return")
    assert isinstance(rs[0], daec.Result) and rs[0]["y"][-1] == 1.0
    assert [type(r).__name__ for r in rs[1:]] == ["SimulationError"] * 2
    assert [r.index for r in rs[1:]] == [1, 2]
    with pytest.raises(daec.ModelError) as e:
        daec.simulate_many(ENSEMBLE, params=[{}, {"nope": 1}], t_end=1.0)
    assert (e.value.index, e.value.params) == (1, {"nope": 1})
    back = pickle.loads(pickle.dumps(e.value))
    assert (back.index, back.params) == (1, {"nope": 1})
    with pytest.raises(daec.ModelError, match="needs an integer") as e:
        daec.simulate_many(ENSEMBLE, params=[{}, {}, {"N": 2.5}], t_end=1.0)
    assert (e.value.index, e.value.params) == (2, {"N": 2.5})
    with pytest.raises(ValueError, match="must be a number") as e:
        daec.simulate_many(ENSEMBLE, params=[{}, {"k": "fast"}], t_end=1.0)
    assert (e.value.index, e.value.params) == (1, {"k": "fast"})
    with pytest.raises(ValueError, match="errors must be"):
        daec.simulate_many(ENSEMBLE, params=[{}], errors="ignore")


# --- analyze and regularize ---------------------------------------------

def test_analyze_is_the_cli_json(daec_bin):
    out = cli(daec_bin, "analyze", PENDULUM, "--format", "json", "-p", "m=2")
    expected = json.loads(out.stdout)
    got = daec.analyze(PENDULUM, params={"m": 2})
    assert got == expected
    assert got["index"] == 3


def test_analyze_names_model_text_in_diagnostics():
    with pytest.raises(daec.ModelError) as e:
        daec.analyze(DECAY.replace("-k*x", "-k*y"), model_name="decay.dae")
    d = e.value.diagnostics[0]
    assert (d["file"], d["line"], d["column"]) == ("decay.dae", 5, 15)
    assert "decay.dae:5:15" in str(e.value)


def test_regularize_json_and_text_equal_the_cli(daec_bin):
    out = cli(daec_bin, "regularize", PENDULUM, "--form", "ggl", "--emit", "json")
    assert daec.regularize(PENDULUM, "ggl") == json.loads(out.stdout)
    out = cli(daec_bin, "regularize", PENDULUM, "--form", "ggl", "--emit", "modelica", "-p", "l=2")
    text = daec.regularize(PENDULUM, "ggl", emit="modelica", params={"l": 2})
    assert isinstance(text, str)
    assert text == out.stdout


# --- errors -------------------------------------------------------------

def test_model_error_has_rendered_and_structured_diagnostics(daec_bin):
    with pytest.raises(daec.ModelError) as e:
        daec.simulate(MISSPELT)
    out = cli(daec_bin, "simulate", MISSPELT, "--color", "never", ok=(1,))
    assert str(e.value) == out.stderr
    d = e.value.diagnostics[0]
    assert d["severity"] == "error"
    assert d["code"].startswith("E")
    assert "lamda" in d["message"]
    assert d["file"] == str(MISSPELT)
    assert (d["line"], d["column"]) == (13, 17)
    back = pickle.loads(pickle.dumps(e.value))
    assert str(back) == str(e.value) and back.diagnostics == e.value.diagnostics


def test_simulation_error_has_the_time_cause_and_partial_result():
    with pytest.raises(daec.SimulationError) as e:
        daec.simulate(BLOW_UP, t_end=2.0)
    err = e.value
    assert err.cause == "solver"
    assert 0.99 < err.time < 1.01
    r = err.result
    assert isinstance(r, daec.Result)
    assert r.time[-1] <= err.time
    assert r["x"][-1] > 10.0
    assert str(err) and str(err) == err.message
    back = pickle.loads(pickle.dumps(err))
    assert (back.time, back.cause, str(back)) == (err.time, err.cause, str(err))
    assert np.array_equal(back.result["x"], r["x"])


@pytest.mark.parametrize(
    "options, message",
    [
        (dict(rtol=-1.0), "--rtol must be a positive finite number"),
        (dict(t_end=float("nan")), "--t-end must be finite"),
        (dict(form="xyz"), "unknown form `--form xyz`"),
        (dict(method="euler"), "--method"),
        (dict(rtol="small"), "rtol must be a number"),
        (dict(params={"k": "fast"}), "parameter `k` must be a number"),
        (dict(params={"k": True}), "is not a Boolean parameter"),
        (dict(params=[("k", 1)]), "params must be a dict"),
    ],
)
def test_bad_options_are_value_errors(options, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("`", ".")):
        daec.simulate(DECAY, **options)


def test_bad_options_of_the_other_functions():
    with pytest.raises(ValueError, match="unknown"):
        daec.regularize(DECAY, "xyz")
    with pytest.raises(ValueError, match="invalid value 'dae' for '--emit") as e:
        daec.regularize(DECAY, emit="dae")
    assert "possible values: text, json, modelica, rust" in str(e.value)
    assert "--help" not in str(e.value)
    with pytest.raises(ValueError, match="workers"):
        daec.simulate_many(DECAY, params=[{}], workers=0)
    with pytest.raises(ValueError, match="list of parameter dicts"):
        daec.simulate_many(DECAY, params={"k": 1})
    with pytest.raises(FileNotFoundError, match="missing.dae"):
        daec.simulate("missing.dae")
    with pytest.raises(TypeError):
        daec.analyze(42)


def test_native_simulate_equals_the_native_cli(daec_bin, tmp_path, monkeypatch):
    # (the cache of the builds: in the test's directory, for both)
    monkeypatch.setenv("DAEC_CACHE_DIR", str(tmp_path / "cache"))
    r = daec.simulate(PENDULUM, t_end=1.0, interval=0.1, native=True)
    out = cli(daec_bin, "simulate", PENDULUM, "--t-end", "1", "--interval", "0.1", "--native")
    header, rows = read_csv(out.stdout)
    assert header == ["time", *r.names]
    assert np.array_equal(r.values, np.array(rows)[:, 1:])
    assert any((tmp_path / "cache").iterdir())
