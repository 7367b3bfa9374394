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
