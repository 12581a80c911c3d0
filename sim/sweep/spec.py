"""A sweep specification (``SPEC.toml``, ``docs/sweeps.md``): parsed, validated in full and
expanded into points before anything runs.

Two grids, either or both:

- ``[sm]``: kernels x SM configurations x mechanisms on the golden SM's timing model.
  ``[sm.config]`` holds parameters of :class:`~gpurf.sim.sm.config.SMConfig` (``preset``,
  ``scheduler``, ``assign``, ``cus``, ...).
- ``[[blocks]]``: one registered block x its parameters, synthesized and/or cosimulated.

Everywhere a value may be a list, a list is an axis of the grid and the grid is the product
of its axes. Every mistake raises :class:`SpecError`, ``file:line: what was expected``.
"""

import dataclasses
import itertools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .cluster import JOBQUEUE_KINDS, ClusterSpec, MissingExtraError, job_options, job_script
from .lines import line_of

__all__ = ["FLOWS", "SIZES", "SM_MECHANISMS", "Point", "SpecError", "Sweep", "load_spec"]

SM_MECHANISMS = {
    "baseline": {},
    "subcore": {"scheduler": "rba", "assign": "srr"},
}
"""The mechanisms the golden SM models, as the timing parameters each one sets: the
sub-core paper's register-bank-aware scheduler and sub-core-aware assignment (SRR)."""

SIZES = ("test", "paper")
FLOWS = ("synth", "cosim")
_TOP = {"description": "a string", "sm": "a table [sm]", "blocks": "tables [[blocks]]",
        "cluster": "a table [cluster]"}
_SM = {"kernels": "a list of kernels (gpurf sm list)", "size": "test or paper",
       "mechanisms": "a list of mechanisms", "config": "a table of SM parameters"}
_BLOCK = {"block": "a block name (gpurf list)", "flows": "synth and/or cosim",
          "params": "a table of block parameters", "cosim": "a table: sim, cycles, seed"}
_COSIM = {"sim": "a simulator", "cycles": "an integer >= 1", "seed": "an integer"}
_CLUSTER = {"kind": f"local or one of {', '.join(JOBQUEUE_KINDS)}", "jobs": "an integer >= 1",
            "workers": "an integer >= 1", "options": "a table of dask-jobqueue options"}


class SpecError(ValueError):
    """A bad sweep specification; the message starts with ``file:line:``."""


@dataclass(frozen=True)
class Point:
    """One point of a grid.

    Attributes
    ----------
    kind : str
        ``sm`` (a kernel on the timing model), ``synth`` or ``cosim`` (a block).
    axes : dict
        The values the specification gave for this point (the CSV's axis columns).
    inputs : dict
        Everything the result depends on, resolved (the full SM configuration, the block's
        full parameters): with the tool versions, the point's content address.
    """

    kind: str
    axes: dict
    inputs: dict


@dataclass(frozen=True)
class Sweep:
    """A validated specification: its points and where to run them."""

    path: Path
    points: tuple[Point, ...]
    cluster: ClusterSpec


class _Spec:
    """The text of a specification, for messages that name its lines."""

    def __init__(self, path: Path, text: str):
        self.path, self.text = path, text

    def error(self, where: tuple, message: str) -> SpecError:
        return SpecError(f"{self.path}:{line_of(self.text, where)}: {message}")

    def table(self, value, where: tuple, keys: dict, what: str) -> dict:
        """``value`` checked to be a table holding only ``keys``."""
        if not isinstance(value, dict):
            raise self.error(where, f"{_name(where)} must be {what}, not {value!r}")
        for key in value:
            if key not in keys:
                expected = _expected(keys)
                raise self.error((*where, key), f"unknown key {key!r} in {_name(where)} "
                                                f"(expected {expected})")
        return value

    def axis(self, value, where: tuple, choices=None, kind=None) -> list:
        """A value or list of values (an axis) as a list: not empty, without repeats,
        each a scalar of type ``kind`` and one of ``choices`` when given."""
        values = value if isinstance(value, list) else [value]
        if not values:
            raise self.error(where, f"{_name(where)} is an empty list")
        for item in values:
            self._check_item(item, where, choices, kind)
        repeated = [v for i, v in enumerate(values) if v in values[:i]]
        if repeated:
            raise self.error(where, f"{_name(where)} repeats {repeated[0]!r}")
        return values

    def one(self, value, where: tuple, choices) -> str:
        """``value`` checked to be one string of ``choices`` (not an axis)."""
        if not isinstance(value, str):
            raise self.error(where, f"{_name(where)} must be one string, not {value!r}")
        self._check_item(value, where, choices, str)
        return value

    def _check_item(self, item, where, choices, kind):
        if isinstance(item, dict | list):
            raise self.error(where, f"{_name(where)} must hold numbers, strings or booleans, "
                                    f"not {item!r}")
        if kind is not None and not _of_kind(item, kind):
            raise self.error(where, f"{_name(where)} must be {_KINDS[kind]}, not {item!r}")
        if choices is not None and item not in choices:
            raise self.error(where, f"{_name(where)}: {item!r} is not one of "
                                    f"{', '.join(map(str, choices))}")


_KINDS = {str: "a string", int: "an integer", bool: "true or false"}


def _expected(keys: dict) -> str:
    """The keys a table takes, with what each holds (once when they all hold the same)."""
    if len(set(keys.values())) == 1:
        return f"{next(iter(keys.values()))}: {', '.join(keys)}"
    return "; ".join(f"{key}: {what}" for key, what in keys.items())


def _key_named(message: str, keys) -> str | None:
    """The first of ``keys`` a model's error message starts with (``cus must be ...``)."""
    return next((key for key in keys if re.match(rf"{re.escape(key)}\b", message)), None)


def _of_kind(item, kind) -> bool:
    """``isinstance``, where a boolean is not an integer (TOML's ``true`` is not ``1``)."""
    return isinstance(item, kind) and (kind is bool or not isinstance(item, bool))


def _name(where: tuple) -> str:
    """``sm.config.cus`` or ``blocks[1].params`` for messages."""
    text = ""
    for part in where:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else part
    return text or "the file"


def _grid(axes: dict[str, list]) -> list[dict]:
    """Every combination of the ``axes`` values, the first axis slowest."""
    return [dict(zip(axes, values, strict=True)) for values in itertools.product(*axes.values())]


# -- [sm] ---------------------------------------------------------------------------------
def _mechanisms(spec: _Spec, sm: dict) -> list[str]:
    from gpurf.hw.registry import all_blocks

    where = ("sm", "mechanisms")
    names = spec.axis(sm.get("mechanisms", ["baseline"]), where, kind=str)
    elsewhere = sorted({block.mechanism for block in all_blocks()} - set(SM_MECHANISMS))
    for name in names:
        if name not in SM_MECHANISMS:
            known = "; not in the golden SM yet: " + ", ".join(elsewhere) if elsewhere else ""
            raise spec.error(where, f"mechanism {name!r} cannot be swept on the SM; allowed: "
                                    f"{', '.join(SM_MECHANISMS)}{known}")
        clash = sorted(set(SM_MECHANISMS[name]) & set(sm.get("config", {})))
        if clash:
            raise spec.error(where, f"mechanism {name!r} sets {', '.join(clash)}, which "
                                    f"[sm.config] sets too")
    return names


def _sm_configs(spec: _Spec, sm: dict) -> list[dict]:
    from gpurf.sim.sm.config import SMConfig

    fields = [f.name for f in dataclasses.fields(SMConfig)]
    table = spec.table(sm.get("config", {}), ("sm", "config"),
                       dict.fromkeys(fields, "an SM parameter (docs/sm.md)"),
                       "a table of SM parameters")
    return _grid({key: spec.axis(value, ("sm", "config", key))
                  for key, value in table.items()})


def _sm_config(spec: _Spec, combo: dict, mechanism: str) -> dict:
    """The full configuration of one point, as a dict."""
    from gpurf.sim.sm.config import ConfigError, load_config

    try:
        config = load_config(**combo, **SM_MECHANISMS[mechanism])
    except ConfigError as error:
        message = str(error)
        key = _key_named(message, combo)
        where = ("sm", "config", key) if key else ("sm", "config")
        shown = ", ".join(f"{k}={v}" for k, v in combo.items())
        raise spec.error(where, f"[sm.config] {shown} (mechanism {mechanism}): "
                                f"{message}") from None
    return dataclasses.asdict(config)


def _sm_points(spec: _Spec, sm) -> list[Point]:
    from gpurf.sim.kernels import workload_names

    sm = spec.table(sm, ("sm",), _SM, "a table [sm]")
    if "kernels" not in sm:
        raise spec.error(("sm",), f"[sm] needs kernels ({_SM['kernels']})")
    kernels = spec.axis(sm["kernels"], ("sm", "kernels"), workload_names(), str)
    sizes = spec.axis(sm.get("size", "test"), ("sm", "size"), SIZES, str)
    combos = _sm_configs(spec, sm)
    mechanisms = _mechanisms(spec, sm)
    points = []
    for combo in combos:
        for mechanism in mechanisms:
            config = _sm_config(spec, combo, mechanism)
            points += [Point("sm", {"kernel": kernel, "size": size, "mechanism": mechanism,
                                    **combo},
                             {"kernel": kernel, "size": size, "mechanism": mechanism,
                              "config": config})
                       for kernel in kernels for size in sizes]
    return points


# -- [[blocks]] -----------------------------------------------------------------------------
def _block_points(spec: _Spec, entries) -> list[Point]:
    if not isinstance(entries, list):
        raise spec.error(("blocks",), "blocks must be tables [[blocks]], not a single table")
    return [point for index, entry in enumerate(entries)
            for point in _one_block(spec, entry, ("blocks", index))]


def _one_block(spec: _Spec, entry, where: tuple) -> list[Point]:
    from gpurf.hw.registry import all_blocks

    entry = spec.table(entry, where, _BLOCK, "a table [[blocks]]")
    if "block" not in entry:
        raise spec.error(where, f"{_name(where)} needs block ({_BLOCK['block']})")
    names = [block.qualname for block in all_blocks()]
    name = spec.one(entry["block"], (*where, "block"), names)
    flows = spec.axis(entry.get("flows", "synth"), (*where, "flows"), FLOWS, str)
    if "cosim" in entry and "cosim" not in flows:
        raise spec.error((*where, "cosim"), f"{_name(where)} has a cosim table but its flows "
                                            f"do not include cosim")
    params = _block_params(spec, name, entry.get("params", {}), (*where, "params"))
    cosim = _cosim_runs(spec, entry.get("cosim", {}), (*where, "cosim"))
    points = []
    for axes, full in params:
        for flow in flows:
            runs = cosim if flow == "cosim" else [{}]
            points += [Point(flow, {"block": name, "flow": flow, **axes, **run},
                             {"block": name, "flow": flow, "params": full, **run})
                       for run in runs]
    return points


def _block_params(spec: _Spec, name: str, table, where: tuple) -> list[tuple[dict, dict]]:
    """Each combination of the swept parameters, with the block's full parameter set."""
    from gpurf.hw.registry import get_block

    block = get_block(name)
    table = spec.table(table, where, dict.fromkeys(block.defaults, f"a parameter of {name}"),
                       "a table of block parameters")
    combos = _grid({key: spec.axis(value, (*where, key)) for key, value in table.items()})
    resolved = []
    for combo in combos:
        try:
            block.build(combo)
        except (TypeError, ValueError) as error:
            key = _key_named(str(error), combo)
            shown = ", ".join(f"{k}={v}" for k, v in combo.items()) or "defaults"
            raise spec.error((*where, key) if key else where,
                             f"{name} ({shown}): {error}") from None
        resolved.append((combo, block.resolve(combo)))
    return resolved


def _cosim_runs(spec: _Spec, table, where: tuple) -> list[dict]:
    from gpurf.sim.toolchain import SIMULATORS, missing_simulator

    table = spec.table(table, where, _COSIM, "a table: sim, cycles, seed")
    installed = [sim for sim in SIMULATORS if missing_simulator(sim) is None]
    sims = spec.axis(table.get("sim", installed[:1] or "verilator"), (*where, "sim"),
                     SIMULATORS, str)
    cycles = spec.axis(table.get("cycles", 2000), (*where, "cycles"), kind=int)
    if min(cycles) < 1:
        raise spec.error((*where, "cycles"), f"cycles must be >= 1, not {min(cycles)}")
    seeds = spec.axis(table.get("seed", 1), (*where, "seed"), kind=int)
    return _grid({"sim": sims, "cycles": cycles, "seed": seeds})


# -- [cluster] ------------------------------------------------------------------------------
def _cluster(spec: _Spec, table) -> ClusterSpec:
    table = spec.table(table, ("cluster",), _CLUSTER, "a table [cluster]")
    kind = spec.one(table.get("kind", "local"), ("cluster", "kind"), ("local", *JOBQUEUE_KINDS))
    for key in ("jobs", "workers"):
        value = table.get(key, 1)
        if not _of_kind(value, int) or value < 1:
            raise spec.error(("cluster", key), f"cluster.{key} must be an integer >= 1, "
                                               f"not {value!r}")
    batch_only = "options" if "options" in table else "jobs" if "jobs" in table else None
    if kind == "local" and batch_only:
        raise spec.error(("cluster", batch_only), f"cluster.{batch_only} is for a batch "
                                                  f"cluster (kind = slurm, ...), not local")
    if kind != "local" and "workers" in table:
        raise spec.error(("cluster", "workers"), "cluster.workers is for kind = local; a "
                                                 "batch cluster takes jobs and options")
    options = _cluster_options(spec, kind, table.get("options", {})) if kind != "local" else {}
    return ClusterSpec(kind, table.get("jobs", 1), table.get("workers"), options)


def _cluster_options(spec: _Spec, kind: str, options) -> dict:
    try:
        allowed = job_options(kind)
    except MissingExtraError as error:
        raise spec.error(("cluster", "kind"), f"kind = {kind!r}: {error}") from None
    options = spec.table(options, ("cluster", "options"),
                         dict.fromkeys(allowed, f"an option of dask-jobqueue's {kind} cluster"),
                         "a table of dask-jobqueue options")
    try:
        job_script(kind, options)
    except (TypeError, ValueError) as error:
        reason = " ".join(str(error).split())
        raise spec.error(("cluster", "options"), f"dask-jobqueue rejects the {kind} options "
                                                 f"({type(error).__name__}: {reason})") from None
    return options


# -- the file -------------------------------------------------------------------------------
def _syntax_error_line(error: tomllib.TOMLDecodeError, text: str) -> int:
    """The line ``tomllib``'s message names (Python 3.11 has no ``lineno`` attribute); the
    last line for an error "at end of document"."""
    match = re.search(r"line (\d+)", str(error))
    if match:
        return int(match.group(1))
    return max(1, len(text.splitlines())) if "end of document" in str(error) else 1


def load_spec(path: str | Path) -> Sweep:
    """Read, validate and expand the specification at ``path``."""
    path = Path(path)
    try:
        text = path.read_text()
    except UnicodeDecodeError:
        raise SpecError(f"{path}: not a UTF-8 TOML file") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise SpecError(f"{path}:{_syntax_error_line(error, text)}: invalid TOML: "
                        f"{error}") from None
    spec = _Spec(path, text)
    spec.table(data, (), _TOP, "a table")
    if "sm" not in data and "blocks" not in data:
        raise spec.error((), "nothing to sweep: expected a table [sm] and/or [[blocks]]")
    points = [*(_sm_points(spec, data["sm"]) if "sm" in data else []),
              *(_block_points(spec, data["blocks"]) if "blocks" in data else [])]
    if "description" in data and not isinstance(data["description"], str):
        raise spec.error(("description",), "description must be a string")
    return Sweep(path, tuple(points), _cluster(spec, data.get("cluster", {})))
