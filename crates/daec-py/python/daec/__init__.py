"""daec: a compiler and simulator for differential-algebraic equations.

The functions run the commands of the ``daec`` command line in-process
(the same code, so the numbers equal the CLI's to the last digit):

- :func:`analyze` — the structural analysis (``daec analyze --format json``);
- :func:`regularize` — a formulation without hidden constraints
  (``daec regularize``);
- :func:`simulate` — one run (``daec simulate``), a :class:`Result` of
  numpy arrays;
- :func:`simulate_many` — one run per parameter set, in parallel on the
  machine's cores.

A model is a path (``str`` or :class:`os.PathLike`) or the model's text.
Errors in the model raise :class:`ModelError`, numerical failures
:class:`SimulationError` (with the results up to the failure), bad options
:class:`ValueError`.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import warnings
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _daec

__all__ = [
    "ModelError",
    "Result",
    "SimulationError",
    "analyze",
    "regularize",
    "simulate",
    "simulate_many",
]

__version__: str = _daec.__version__

#: The name diagnostics give a model passed as text.
TEXT_NAME = "<string>"

Model = Union[str, "os.PathLike[str]"]
Params = Optional[Mapping[str, Union[float, int, bool]]]


class ModelError(Exception):
    """The model has errors (the CLI's exit code 1).

    ``str(error)`` is the rendered diagnostics, as the CLI prints them;
    :attr:`diagnostics` lists them as dicts with the keys ``severity``,
    ``code``, ``message``, ``file``, ``line`` and ``column`` (the last
    three ``None`` for a diagnostic without a place). From
    :func:`simulate_many`, :attr:`index` and :attr:`params` name the
    failed run.
    """

    def __init__(
        self,
        rendered: str,
        diagnostics: Sequence[Mapping[str, Any]] = (),
        index: Optional[int] = None,
        params: Params = None,
    ) -> None:
        super().__init__(rendered)
        self.rendered: str = rendered
        self.diagnostics: List[Dict[str, Any]] = [dict(d) for d in diagnostics]
        #: From :func:`simulate_many`: the position of the failed run in
        #: its ``params`` and that parameter set (else ``None``).
        self.index: Optional[int] = index
        self.params: Optional[Dict[str, Any]] = None if params is None else dict(params)

    def __reduce__(self) -> Tuple[Any, ...]:
        return (type(self), (self.rendered, self.diagnostics, self.index, self.params))


class SimulationError(Exception):
    """A run failed numerically (the CLI's exit code 3).

    :attr:`time` is when it failed, :attr:`cause` the kind of the cause
    (``"solver"``, ``"bound"``, ``"too-many-events"``, …), :attr:`result`
    the :class:`Result` up to the failure; ``str(error)`` is the CLI's
    message. From :func:`simulate_many`, :attr:`index` and :attr:`params`
    name the failed run.
    """

    def __init__(
        self,
        message: str,
        time: float,
        cause: str,
        result: "Result",
        index: Optional[int] = None,
        params: Params = None,
    ) -> None:
        super().__init__(message)
        self.message: str = message
        self.time: float = time
        self.cause: str = cause
        self.result: Result = result
        #: From :func:`simulate_many`: the position of the failed run in
        #: its ``params`` and that parameter set (else ``None``).
        self.index: Optional[int] = index
        self.params: Optional[Dict[str, Any]] = None if params is None else dict(params)

    def __reduce__(self) -> Tuple[Any, ...]:
        return (
            type(self),
            (self.message, self.time, self.cause, self.result, self.index, self.params),
        )


class Result:
    """The solution of one run at its output times.

    ``result.time`` is the time column, ``result["x"]`` the column of the
    variable ``x`` (numpy arrays: views of one array of shape
    ``(len(time), len(names))``, :attr:`values`, not copies),
    :attr:`names` the flat variable names (the CSV's columns after
    ``time``), :attr:`stats` the statistics (the JSON of
    ``--stats-json``).
    """

    def __init__(
        self,
        names: Sequence[str],
        time: np.ndarray,
        values: np.ndarray,
        stats: Dict[str, Any],
    ) -> None:
        self.names: List[str] = list(names)
        self.time: np.ndarray = time
        self.values: np.ndarray = values
        self.stats: Dict[str, Any] = stats
        self._columns = {name: j for j, name in enumerate(self.names)}

    def __getitem__(self, name: str) -> np.ndarray:
        if name == "time":
            return self.time
        try:
            j = self._columns[name]
        except KeyError:
            raise KeyError(
                f"no variable `{name}` in the results; the variables are {', '.join(self.names)}"
            ) from None
        return self.values[:, j]

    def __contains__(self, name: object) -> bool:
        return name == "time" or name in self._columns

    def __len__(self) -> int:
        return len(self.time)

    def __iter__(self):
        return iter(self.names)

    def __repr__(self) -> str:
        if len(self.time):
            span = f"t = {self.time[0]:g} … {self.time[-1]:g}"
        else:
            span = "no output times"
        shown = ", ".join(self.names[:8]) + (", …" if len(self.names) > 8 else "")
        return f"<daec.Result: {len(self.time)} times ({span}), {len(self.names)} variables [{shown}]>"

    def __reduce__(self) -> Tuple[Any, ...]:
        return (type(self), (self.names, self.time, self.values, self.stats))

    def to_pandas(self):
        """The results as a :class:`pandas.DataFrame` indexed by ``time``.

        Needs pandas (``pip install pandas``).
        """
        try:
            import pandas as pd
        except ImportError as e:
            raise ImportError("Result.to_pandas needs pandas: pip install pandas") from e
        return pd.DataFrame(
            self.values, columns=self.names, index=pd.Index(self.time, name="time")
        )

    def plot(self, vars: Optional[Iterable[str]] = None, ax=None):
        """Plots the variables ``vars`` (default: all) over time with
        matplotlib and returns the axes; the x axis is labelled ``time``,
        the y axis ``value``, a legend names the variables.

        Needs matplotlib (``pip install matplotlib``).
        """
        try:
            import matplotlib.pyplot as plt
        except ImportError as e:
            raise ImportError("Result.plot needs matplotlib: pip install matplotlib") from e
        names = self.names if vars is None else list(vars)
        if ax is None:
            _, ax = plt.subplots()
        for name in names:
            ax.plot(self.time, self[name], label=name)
        ax.set_xlabel("time")
        ax.set_ylabel("value")
        if names:
            ax.legend()
        return ax


def _is_path(model: Model) -> bool:
    """A path: an :class:`os.PathLike`, or a one-line string naming a file
    or ending in ``.dae``; any other string is the model's text."""
    if isinstance(model, os.PathLike):
        return True
    if not isinstance(model, str):
        raise TypeError(f"a model is a path or the model's text, not {type(model).__name__}")
    return "\n" not in model and (model.endswith(".dae") or os.path.isfile(model))


def _source(model: Model, name: Optional[str] = None) -> Tuple[str, Optional[str]]:
    """The model argument of the command line and the text (``None``
    for a file)."""
    if _is_path(model):
        path = os.fspath(model)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"no model file `{path}`")
        return path, None
    return name or TEXT_NAME, model


def _number(option: str, value: Any) -> str:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{option} must be a number, not {value!r}")
    return repr(float(value))


def _param_args(params: Params) -> List[str]:
    if params is None:
        return []
    if not isinstance(params, Mapping):
        raise ValueError(f"params must be a dict of parameter values, not {type(params).__name__}")
    args: List[str] = []
    for name, value in params.items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"a parameter name must be a non-empty string, not {name!r}")
        if isinstance(value, (bool, np.bool_)):
            text = "true" if value else "false"
        elif isinstance(value, numbers.Real):
            if not math.isfinite(float(value)):
                raise ValueError(f"parameter `{name}` must be finite (got {value!r})")
            text = str(int(value)) if isinstance(value, numbers.Integral) else repr(float(value))
        else:
            raise ValueError(f"parameter `{name}` must be a number or a bool, not {value!r}")
        args += ["-p", f"{name}={text}"]
    return args


def _check(outcome: Tuple[Any, ...], stacklevel: int = 3) -> Tuple[Any, ...]:
    """Raises the exception of a failed command (exit codes 1 and 2, and
    any other but 0 and 3); passes the warnings of one that ran on as
    :class:`RuntimeWarning` (their first lines, as the CLI prints them)."""
    code, _stdout, stderr, diagnostics, _sim = outcome
    if code in (0, 3):
        for line in stderr.splitlines():
            if line.startswith("warning"):
                warnings.warn(line, RuntimeWarning, stacklevel=stacklevel)
    if code == 1:
        raise ModelError(stderr, diagnostics)
    if code == 2:
        # (without clap's pointer to `--help`, which is the CLI's)
        lines = [l for l in stderr.splitlines() if not l.startswith("For more information")]
        message = "\n".join(lines).strip()
        if message.startswith("error: "):
            message = message[len("error: ") :]
        raise ValueError(message)
    if code not in (0, 3):
        raise RuntimeError(f"daec failed (exit code {code}): {stderr}")
    return outcome


def _result(outcome: Tuple[Any, ...]) -> Result:
    """The :class:`Result` of a ``simulate`` outcome, or its
    :class:`SimulationError`."""
    code, _stdout, stderr, _diagnostics, sim = _check(outcome, stacklevel=4)
    if sim is None:
        raise RuntimeError(f"daec simulate returned no results (exit code {code}): {stderr}")
    names, time, values, stats_json, failure = sim
    result = Result(names, time, values, json.loads(stats_json))
    if failure is not None:
        t, cause, message = failure
        raise SimulationError(message, t, cause, result)
    if code != 0:
        raise RuntimeError(f"daec simulate failed (exit code {code}): {stderr}")
    return result


def analyze(model: Model, *, params: Params = None, model_name: Optional[str] = None) -> Dict[str, Any]:
    """The structural analysis of ``model``: the content of ``daec
    analyze --format json`` as a dict (Σ-matrix, offsets, index, degrees
    of freedom, block triangular forms, hidden constraints by level, …).

    ``params`` overrides parameters (``-p NAME=VALUE``); ``model_name`` is
    the name diagnostics give a model passed as text (default
    ``"<string>"``; a file keeps its path).
    """
    arg, text = _source(model, model_name)
    args = ["daec", "analyze", arg, "--format", "json", *_param_args(params)]
    _, stdout, _, _, _ = _check(_daec.run(args, arg if text is not None else None, text))
    return json.loads(stdout)


def regularize(
    model: Model, form: str = "hic", *, emit: str = "json", params: Params = None
) -> Union[Dict[str, Any], str]:
    """The formulation ``form`` of ``model`` without hidden constraints
    (``daec regularize --form FORM --emit EMIT``): a dict for
    ``emit="json"``, else the text (``"text"``, ``"modelica"`` — a
    ``.dae`` model —, ``"rust"``).
    """
    if not isinstance(form, str) or not isinstance(emit, str):
        raise ValueError("form and emit are strings")
    arg, text = _source(model)
    args = ["daec", "regularize", arg, "--form", form, "--emit", emit, *_param_args(params)]
    _, stdout, _, _, _ = _check(_daec.run(args, arg if text is not None else None, text))
    return json.loads(stdout) if emit == "json" else stdout


def _simulate_args(
    arg: str,
    t_end: Optional[float],
    rtol: Optional[float],
    atol: Optional[float],
    interval: Optional[float],
    form: Optional[str],
    method: Optional[str],
    native: bool,
) -> List[str]:
    args = ["daec", "simulate", arg]
    for option, value in (
        ("--t-end", t_end),
        ("--rtol", rtol),
        ("--atol", atol),
        ("--interval", interval),
    ):
        if value is not None:
            args += [option, _number(option.lstrip("-").replace("-", "_"), value)]
    for option, value in (("--form", form), ("--method", method)):
        if value is not None:
            if not isinstance(value, str):
                raise ValueError(f"{option.lstrip('-')} must be a string, not {value!r}")
            args += [option, value]
    if not isinstance(native, bool):
        raise ValueError(f"native must be True or False, not {native!r}")
    if native:
        args.append("--native")
    return args


def simulate(
    model: Model,
    *,
    t_end: Optional[float] = None,
    rtol: Optional[float] = None,
    atol: Optional[float] = None,
    interval: Optional[float] = None,
    form: Optional[str] = None,
    method: Optional[str] = None,
    params: Params = None,
    native: bool = False,
) -> Result:
    """Simulates ``model`` (``daec simulate``) and returns its
    :class:`Result`.

    The options are those of the command line: ``t_end`` (default: the
    experiment's StopTime), ``rtol``, ``atol``, ``interval`` (the output
    interval), ``form`` (``hic``, ``ada``, ``ste``, ``dd``, ``ggl``,
    ``di1``, ``index3``), ``method`` (``radau5`` by default,
    ``radau5-projected``, ``projection``, ``herk``, …), ``params``
    (parameter overrides), ``native`` (compile to machine code with
    rustc). The GIL is released while the model is integrated.

    Raises :class:`ModelError`, :class:`SimulationError` (with the
    results up to the failure) or :class:`ValueError`; the warnings of
    the run (a variable beyond its ``min``/``max``, …) are issued as
    :class:`RuntimeWarning`.
    """
    arg, text = _source(model)
    args = _simulate_args(arg, t_end, rtol, atol, interval, form, method, native)
    args += _param_args(params)
    return _result(_daec.run(args, arg if text is not None else None, text))


def simulate_many(
    model: Model,
    params: Sequence[Params],
    *,
    t_end: Optional[float] = None,
    rtol: Optional[float] = None,
    atol: Optional[float] = None,
    interval: Optional[float] = None,
    form: Optional[str] = None,
    method: Optional[str] = None,
    native: bool = False,
    workers: Optional[int] = None,
    errors: str = "raise",
) -> List[Union[Result, Exception]]:
    """One :func:`simulate` per parameter set of ``params`` (a list of
    dicts), the runs in parallel on ``workers`` threads (default: the
    machine's cores), with the GIL released. Returns the results in the
    order of ``params``; each equals that of ``simulate(model,
    params=p, ...)`` with the same options, bit for bit (values, times
    and statistics but the timings).

    The model is read once, and it is compiled once: its structural
    analysis (the Σ-method, the HVTs, the Σ-Jacobian, the derivative
    array) and its prepared simulation (the formulation with its
    derivatives and compiled tapes) are made for the first run and
    shared. Each run is lowered with its own values, as ``-p`` does, and
    takes the shared analysis when its lowered model is the first run's
    node for node but for values: ``Real`` parameters, also those
    computed from other parameters, and start, nominal, min and max
    values, also those computed from parameters. The parts of the
    analysis that depend on values are then redone at the run's values
    (the pivots of the hidden constraints, which must come out the same,
    and the consistent point of the success check); the prepared
    simulation is taken with the run's parameter values rebound, and
    what its preparation computes from values is computed again: the
    modes of the relations in ``if`` conditions, the consistent initial
    point, the check of the declared invariants there, and for the
    formulations ``ste`` and ``dd`` the state selection at that point.
    This holds for every model and option: ``when`` events (also on
    parameters, and ``sample``), discrete variables, declared
    invariants, every formulation and method (the second-order ones
    too) and ``native=True``, whose compiled library takes the
    parameters at run time, so one build serves every run.

    The rule for the fallback: a run is analysed and prepared in full,
    as :func:`simulate` does, when a value changes the model's equations
    — an ``Integer`` or ``Boolean`` parameter, a parameter that sizes an
    array, selects an ``if`` branch or a conditional component at
    lowering, or a ``sample`` interval (a ``Real`` parameter stays
    symbolic unless the lowering needs its value; there is no
    ``Evaluate`` annotation); such a parameter is told before the run is
    analysed. A run is also prepared in full when a pivot of the hidden
    constraints changes, when the Σ-Jacobian is singular at its
    consistent point, or, with ``ste`` and ``dd``, when its values
    choose other states. Either way its results are those of
    :func:`simulate`.

    ``errors="raise"`` (the default) runs every set, then raises the
    exception of the first run that failed (in the order of ``params``);
    ``errors="return"`` puts each failed run's exception in the list in
    place of its result. Either way a failed run's :class:`ModelError`
    or :class:`SimulationError` has ``index`` (its position in
    ``params``) and ``params`` (its parameter set). A parameter set that
    is not a dict of numbers raises :class:`ValueError` before any run,
    with ``index`` and ``params`` as attributes too.
    """
    if isinstance(params, Mapping) or not isinstance(params, Sequence):
        raise ValueError("params must be a list of parameter dicts")
    if workers is None:
        workers = os.cpu_count() or 1
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer, not {workers!r}")
    if errors not in ("raise", "return"):
        raise ValueError(f'errors must be "raise" or "return", not {errors!r}')
    arg, text = _source(model)
    base = _simulate_args(arg, t_end, rtol, atol, interval, form, method, native)
    runs = []
    for k, p in enumerate(params):
        try:
            runs.append(base + _param_args(p))
        except ValueError as e:
            e.index, e.params = k, p
            raise
    outcomes, _reused, _rebound, _prepared = _daec.run_many(runs, arg, text, workers)
    out: List[Union[Result, Exception]] = []
    for k, (p, outcome) in enumerate(zip(params, outcomes)):
        try:
            out.append(_result(outcome))
        except (ModelError, SimulationError, ValueError) as e:
            e.index = k
            e.params = None if p is None else dict(p)
            if errors == "raise":
                raise
            out.append(e)
    return out
