"""The dask example (examples/parameter_study.py) on a LocalCluster of
worker processes: the results equal those of local runs."""

import importlib.util

import numpy as np
import pytest

import daec
from conftest import DECAY, PENDULUM, ROOT

distributed = pytest.importorskip("dask.distributed")


def load_example():
    path = ROOT / "crates" / "daec-py" / "examples" / "parameter_study.py"
    spec = importlib.util.spec_from_file_location("parameter_study", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        yield cluster


def test_study_on_worker_processes_equals_local_runs(cluster):
    example = load_example()
    sets = [{"g": g} for g in (9.0, 9.81, 12.0, 13.75)]
    with distributed.Client(cluster) as client:
        results = example.study(client, str(PENDULUM), sets, t_end=1.0, rtol=1e-7)
        # the tasks ran in the worker processes
        assert len(client.scheduler_info()["workers"]) == 2
    assert len(results) == len(sets)
    for p, r in zip(sets, results):
        local = daec.simulate(PENDULUM, t_end=1.0, rtol=1e-7, params=p)
        assert isinstance(r, daec.Result)
        assert r.names == local.names
        assert np.array_equal(r.values, local.values), p


def test_study_reports_the_failure_of_a_run(cluster):
    example = load_example()
    with distributed.Client(cluster) as client:
        with pytest.raises(daec.ModelError) as e:
            example.study(client, DECAY, [{"k": 1}, {"nope": 1}], t_end=1.0)
    assert "nope" in str(e.value)


def test_main_against_a_scheduler_address(cluster, capsys):
    # the code path of a remote scheduler: the example connects to an
    # address, here that of the LocalCluster's scheduler
    example = load_example()
    rows = example.main([str(PENDULUM), "g=9.81,13.75", "2"], cluster.scheduler_address)
    assert [row["params"] for row in rows] == [{"g": 9.81}, {"g": 13.75}]
    local = daec.simulate(PENDULUM, t_end=2.0, params={"g": 13.75})
    assert rows[1]["t_end"] == 2.0
    assert rows[1]["final"]["x"] == local["x"][-1]
    assert "t = 2.0" in capsys.readouterr().out
