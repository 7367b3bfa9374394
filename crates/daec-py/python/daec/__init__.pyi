"""Type stubs of the package ``daec`` (see ``__init__.py`` for the docs)."""

import os
from typing import Any, Dict, Iterable, Iterator, List, Literal, Mapping, Optional, Sequence, Union, overload

import numpy as np
import numpy.typing as npt

__version__: str
TEXT_NAME: str

Model = Union[str, os.PathLike[str]]
Params = Optional[Mapping[str, Union[float, int, bool]]]

class ModelError(Exception):
    """The model has errors: ``str(e)`` the rendered diagnostics."""

    rendered: str
    diagnostics: List[Dict[str, Any]]
    index: Optional[int]
    params: Optional[Dict[str, Any]]
    def __init__(
        self,
        rendered: str,
        diagnostics: Sequence[Mapping[str, Any]] = ...,
        index: Optional[int] = ...,
        params: Params = ...,
    ) -> None: ...

class SimulationError(Exception):
    """A run failed numerically at ``time`` for ``cause``; ``result`` up to then."""

    message: str
    time: float
    cause: str
    result: Result
    index: Optional[int]
    params: Optional[Dict[str, Any]]
    def __init__(
        self,
        message: str,
        time: float,
        cause: str,
        result: Result,
        index: Optional[int] = ...,
        params: Params = ...,
    ) -> None: ...

class Result:
    """The solution of one run at its output times."""

    names: List[str]
    time: npt.NDArray[np.float64]
    values: npt.NDArray[np.float64]
    stats: Dict[str, Any]
    def __init__(
        self,
        names: Sequence[str],
        time: npt.NDArray[np.float64],
        values: npt.NDArray[np.float64],
        stats: Dict[str, Any],
    ) -> None: ...
    def __getitem__(self, name: str) -> npt.NDArray[np.float64]: ...
    def __contains__(self, name: object) -> bool: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[str]: ...
    def to_pandas(self) -> Any:
        """A pandas DataFrame indexed by time (needs pandas)."""
    def plot(self, vars: Optional[Iterable[str]] = None, ax: Any = None) -> Any:
        """Plots the variables over time with matplotlib; returns the axes."""

def analyze(
    model: Model, *, params: Params = None, model_name: Optional[str] = None
) -> Dict[str, Any]:
    """The content of ``daec analyze --format json``."""

def regularize(
    model: Model, form: str = "hic", *, emit: str = "json", params: Params = None
) -> Union[Dict[str, Any], str]:
    """``daec regularize``: a dict for emit="json", else the text."""

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
    """``daec simulate``: one run, its Result."""

@overload
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
    errors: Literal["raise"] = "raise",
) -> List[Result]:
    """One run per parameter set, in parallel, the model compiled once
    (runs whose values change its equations compile it anew); the
    results in order; the first failure raised (with its ``index`` and
    ``params``)."""

@overload
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
    errors: Literal["return"],
) -> List[Union[Result, Exception]]:
    """One run per parameter set, in parallel, the model compiled once
    (runs whose values change its equations compile it anew); a failed
    run's exception (with its ``index`` and ``params``) in place of its
    result."""
