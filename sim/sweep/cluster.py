"""Where a sweep runs: a Dask ``LocalCluster``, an existing scheduler, or a batch cluster
through dask-jobqueue (the optional ``cluster`` extra).

Every worker is a process with one thread: the golden SM, yosys and the simulators'
Python drivers are CPU-bound and hold the GIL, so threads would only queue behind each other.
"""

import importlib
import inspect
from dataclasses import dataclass, field

__all__ = ["JOBQUEUE_KINDS", "ClusterSpec", "MissingExtraError", "connect", "job_options",
           "job_script", "jobqueue_cluster"]

JOBQUEUE_KINDS = {"slurm": "SLURMCluster", "pbs": "PBSCluster", "sge": "SGECluster",
                  "lsf": "LSFCluster", "oar": "OARCluster", "htcondor": "HTCondorCluster",
                  "moab": "MoabCluster"}
"""``[cluster] kind`` values and the dask-jobqueue class each one builds."""

_CLUSTER_OPTIONS = ("interface", "protocol", "scheduler_options", "shared_temp_directory",
                    "host")
"""Options of the cluster itself (the rest go to each job)."""

_OURS = ("scheduler", "name", "config_name", "self")
"""Job arguments dask-jobqueue fills in itself."""


class MissingExtraError(RuntimeError):
    """dask-jobqueue is not installed."""


@dataclass(frozen=True)
class ClusterSpec:
    """A ``[cluster]`` table: ``kind`` (``local`` or one of :data:`JOBQUEUE_KINDS`),
    ``jobs`` to submit and dask-jobqueue ``options`` (batch kinds), ``workers`` (local)."""

    kind: str = "local"
    jobs: int = 1
    workers: int | None = None
    options: dict = field(default_factory=dict)


def _jobqueue():
    try:
        return importlib.import_module("dask_jobqueue")
    except ImportError:
        raise MissingExtraError("dask-jobqueue is not installed; a batch cluster needs the "
                                "cluster extra: pip install -e '.[cluster]'") from None


def _job_class(kind: str) -> type:
    """dask-jobqueue's job class of ``kind`` (``SLURMJob``)."""
    _jobqueue()
    module = importlib.import_module(f"dask_jobqueue.{kind}")
    return next(cls for name, cls in inspect.getmembers(module, inspect.isclass)
                if name.endswith("Job") and cls.__module__ == module.__name__)


def _with_defaults(options: dict) -> dict:
    """One thread per worker process unless the options say otherwise: ``processes``
    defaults to ``cores``."""
    options = dict(options)
    options.setdefault("processes", options.get("cores", 1))
    options.setdefault("cores", options["processes"])
    return options


def job_options(kind: str) -> list[str]:
    """The options ``[cluster.options]`` may hold for ``kind``: the arguments of its job
    class and of dask-jobqueue's base job, and a few of the cluster's."""
    names = set(_CLUSTER_OPTIONS)
    for cls in inspect.getmro(_job_class(kind)):
        if "__init__" in vars(cls):
            names |= {name for name, parameter
                      in inspect.signature(cls.__init__).parameters.items()
                      if parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)}
    return sorted(names - set(_OURS))


def job_script(kind: str, options: dict) -> str:
    """The job script ``options`` give for ``kind``, built without a scheduler; raises
    what dask-jobqueue raises for options it rejects (a value of the wrong type, no
    ``memory``)."""
    job = {k: v for k, v in _with_defaults(options).items() if k not in _CLUSTER_OPTIONS}
    return _job_class(kind)(scheduler="tcp://scheduler:8786", name="check", **job).job_script()


def jobqueue_cluster(spec: ClusterSpec):
    """The dask-jobqueue cluster of ``spec`` (not yet scaled: no job is submitted), with
    one thread per worker process unless the options say otherwise (``processes``
    defaults to ``cores``)."""
    cluster_class = getattr(_jobqueue(), JOBQUEUE_KINDS[spec.kind])
    return cluster_class(**_with_defaults(spec.options))


def connect(spec: ClusterSpec, *, address: str | None = None, workers: int | None = None):
    """A Dask client of the cluster to run on, and the cluster to close after it (``None``
    for an existing scheduler).

    ``address``: an existing scheduler; else ``spec.kind`` (a ``LocalCluster`` of
    ``workers`` or ``spec.workers`` processes, by default one per core, or a batch cluster
    scaled to ``spec.jobs`` jobs).
    """
    from distributed import Client, LocalCluster

    if address is not None:
        return Client(address), None
    if spec.kind == "local":
        # ":0": the scheduler's HTTP server on a free port, not beside another cluster's 8787.
        cluster = LocalCluster(n_workers=workers or spec.workers, threads_per_worker=1,
                               processes=True, dashboard_address=":0")
    else:
        cluster = jobqueue_cluster(spec)
        cluster.scale(jobs=spec.jobs)
    return Client(cluster), cluster
