"""A parameter study of daec on dask.distributed.

``daec.simulate`` is mapped over parameter sets by a dask scheduler; each
task runs on a worker process (local or remote) and sends
back its ``daec.Result``, pickled. The model travels as text, so the
workers need the package ``daec`` but not the model file.

Run it on a cluster of local worker processes::

    python parameter_study.py MODEL.dae NAME=V1,V2,... [t_end]

or, the same code unchanged, on a running scheduler (``dask scheduler``
on one machine, ``dask worker tcp://HOST:8786`` on each of the others,
the package daec installed on every worker)::

    DASK_SCHEDULER=tcp://HOST:8786 python parameter_study.py MODEL.dae NAME=V1,V2,...
"""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, List, Mapping, Optional, Sequence

import daec


def simulate_one(model_text: str, params: Mapping[str, float], options: Mapping[str, Any]) -> daec.Result:
    """One run: the task dask sends to a worker."""
    return daec.simulate(model_text, params=dict(params), **options)


def study(
    client: Any,
    model: str,
    param_sets: Sequence[Mapping[str, float]],
    **options: Any,
) -> List[daec.Result]:
    """Simulates ``model`` (a path or the text) once per parameter set on
    the workers of the dask ``client``; the results in the order of
    ``param_sets``. A run that fails raises its exception here
    (``daec.ModelError``, ``daec.SimulationError``, ``ValueError``)."""
    text = model
    if "\n" not in model and os.path.isfile(model):
        with open(model, encoding="utf-8") as f:
            text = f.read()
    futures = client.map(
        simulate_one,
        [text] * len(param_sets),
        list(param_sets),
        [dict(options)] * len(param_sets),
        pure=False,
    )
    return client.gather(futures)


def connect(address: Optional[str] = None, workers: int = 2) -> Any:
    """A dask client: of the scheduler at ``address`` (e.g.
    ``tcp://host:8786``), else of a new cluster of ``workers`` worker
    processes on the local machine."""
    from dask.distributed import Client, LocalCluster

    if address:
        return Client(address)
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True)
    return Client(cluster)


def main(argv: Sequence[str], address: Optional[str] = None) -> List[Dict[str, Any]]:
    """``MODEL NAME=V1,V2,... [T_END]``: one run per value; prints and
    returns a line per run (the parameter, the final time, the final
    values)."""
    model, sweep = argv[0], argv[1]
    name, values = sweep.split("=", 1)
    options: Dict[str, Any] = {}
    if len(argv) > 2:
        options["t_end"] = float(argv[2])
    param_sets = [{name: float(v)} for v in values.split(",")]
    client = connect(address)
    try:
        results = study(client, model, param_sets, **options)
    finally:
        cluster = getattr(client, "cluster", None)
        client.close()
        if cluster is not None and not address:
            cluster.close()
    rows = []
    for p, r in zip(param_sets, results):
        final = {n: float(r[n][-1]) for n in r.names}
        rows.append({"params": p, "t_end": float(r.time[-1]), "final": final})
        print(p, "t =", r.time[-1], final)
    return rows


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1:], os.environ.get("DASK_SCHEDULER"))
