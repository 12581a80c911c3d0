"""Launch descriptions (``launch.toml`` of a kernel folder) and the data they generate.

A launch file names the PTX entry, the numpy reference (a function of
:mod:`gpurf.sim.kernels.reference` for a shipped kernel, of the folder's ``reference.py`` for a
user's kernel folder, or none when the folder holds expected outputs), a seed, size variables
per size (``[sizes.test]``, ``[sizes.paper]``) and optionally per variant
(``[variants.<name>]``, overriding size variables), the grid and block (``[launch]``), the
kernel parameters in order (``[[params]]``: ``name`` and either ``buffer`` or ``type`` +
``value``) and the buffers (``[buffers.<name>]``: ``dtype``, ``shape``, ``init`` =
``uniform`` (with ``range``) or ``zeros``, ``output``). Numbers may be expressions over the
size variables (``"cdiv(n, block)"``; operators ``+ - * // %``, functions ``cdiv``, ``min``,
``max``). Outputs must equal the reference exactly unless ``rtol`` is given. Dimensions are
positive integers within CUDA's limits (at most 1,024 threads per block) and a buffer holds
at most :data:`MAX_BUFFER_BYTES`.

``inputs = "f"`` names a function of the reference module, ``f(buffers, scalars, rng) ->
{name: array}``, that replaces generated buffers by structured ones (a CSR matrix, a graph,
a diagonally dominant matrix); each returned array must have its buffer's dtype and shape.

A ``[loop]`` table makes the launch a host loop, each iteration one launch of the kernel:
``repeat = N`` (a number or an expression of the size variables) launches N times;
``until = "flag"`` launches until the buffer ``flag`` is all zeros after a launch (the host
zeroes it before every launch, so a kernel sets it to ask for another), at most ``max``
times (required with ``until``; a loop still asking at ``max`` is an error). The variable
``iteration`` (0, 1, ...) may appear in the grid and in parameter values (a pivot column, a
row, a level). ``swap = [["a", "b"]]`` exchanges the two buffers' names after every launch
(ping-pong, as a host swaps two device pointers): the kernel's ``b`` of one launch is its
``a`` of the next, and outputs are read by name after the last swap.

Every mistake raises :class:`LaunchError` whose message starts with ``file:line:`` and says
what was expected.
"""

import ast
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["MAX_BUFFER_BYTES", "MAX_ITERATIONS", "MAX_THREADS_PER_BLOCK", "Iteration", "Launch",
           "LaunchError", "LaunchSpec", "Loop", "load_launch"]

DTYPES = ("uint8", "int8", "uint16", "int16", "float16", "uint32", "int32", "float32",
          "uint64", "int64", "float64")
PARAM_TYPES = {"u8": "uint8", "s8": "int8", "u16": "uint16", "s16": "int16", "u32": "uint32",
               "s32": "int32", "f32": "float32", "u64": "uint64", "s64": "int64",
               "f64": "float64"}
_TOP = {"entry", "reference", "seed", "description", "rtol", "sizes", "variants", "launch",
        "params", "buffers", "inputs", "loop"}
_LOOP_KEYS = {"repeat", "until", "max", "swap"}
ITERATION = "iteration"
"""The loop variable of a ``[loop]`` launch, usable in the grid and in parameter values."""
_BUFFER_KEYS = {"dtype", "shape", "init", "range", "output"}
_FUNCS = {"cdiv": lambda a, b: -(-a // b), "min": min, "max": max}

MAX_THREADS_PER_BLOCK = 1024
"""CUDA's limit on threads per block (every compute capability gpurf models)."""
MAX_GRID = (2**31 - 1, 65535, 65535)
"""CUDA's grid-dimension limits (x, y, z)."""
MAX_BUFFER_BYTES = 1 << 30
"""The largest buffer a launch may ask for (1 GiB), so that a typo is an error rather than an
exhausted memory; the papers' sizes need at most a few MiB."""
MAX_EXPRESSION_CHARACTERS = 200
"""Expressions longer than this are rejected before they are parsed (a launch expression is a
few terms; a very deep one would exhaust Python's recursion)."""
MAX_ITERATIONS = 100_000
"""The most launches a ``[loop]`` may ask for (``repeat`` or ``max``); the papers' host loops
run at most a few thousand."""


class LaunchError(ValueError):
    """A malformed launch description; the message starts with ``file:line:``."""


@dataclass(frozen=True)
class Iteration:
    """One launch of a host loop: its grid and parameter values."""

    grid: tuple[int, int, int]
    params: list[tuple[str, str, object]]


@dataclass(frozen=True)
class Loop:
    """A host loop made concrete: at most ``len(iterations)`` launches; with ``until`` the
    loop stops after the first launch that leaves that buffer all zeros, and ``exhausted``
    is the error to raise when the last launch still asks for another."""

    iterations: tuple[Iteration, ...]
    until: str | None
    swaps: tuple[tuple[str, str], ...]
    exhausted: str


@dataclass(frozen=True)
class Launch:
    """A launch made concrete for one size and variant: dimensions, variables, buffers
    (the generated inputs; outputs start as generated too) and parameter values. ``grid``
    and ``params`` are the first launch's; ``loop`` (``None`` for a single launch) holds
    every launch of a host loop."""

    entry: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    variables: dict
    buffers: dict[str, np.ndarray]
    outputs: tuple[str, ...]
    params: list[tuple[str, str, object]]
    reference: str | None
    rtol: float
    loop: Loop | None = None

    @property
    def iterations(self) -> tuple[Iteration, ...]:
        """Every launch (one for a launch without a loop)."""
        return self.loop.iterations if self.loop else (Iteration(self.grid, self.params),)

    @property
    def max_grid(self) -> tuple[int, int, int]:
        """The largest grid of any launch, per dimension (what a static analysis may assume
        of ``%nctaid`` and ``%ctaid``)."""
        return tuple(max(dims) for dims in zip(*(it.grid for it in self.iterations),
                                                               strict=True))

    @property
    def fixed_params(self) -> list[tuple[str, str, object]]:
        """The parameters, with ``None`` as the value of any scalar that changes between the
        launches of a host loop (a static analysis must not assume one value for it)."""
        fixed = []
        for column in zip(*(it.params for it in self.iterations), strict=True):
            name, ptype, value = column[0]
            varies = any(v != value for _, _, v in column)
            fixed.append((name, ptype, None if varies else value))
        return fixed


class LaunchSpec:
    """A parsed, validated ``launch.toml``."""

    def __init__(self, path: Path):
        self.path = Path(path)
        try:
            self.text = self.path.read_text()
        except UnicodeDecodeError:
            raise LaunchError(f"{self.path}:1: not a UTF-8 TOML file") from None
        try:
            self.data = tomllib.loads(self.text)
        except tomllib.TOMLDecodeError as error:
            line = getattr(error, "lineno", None) or _toml_line(str(error))
            raise LaunchError(f"{self.path}:{line}: invalid TOML: {error}") from None
        self.input_function = None
        """``f(buffers, scalars, rng)`` named by ``inputs``, attached by whoever resolves the
        reference module (:func:`gpurf.sim.sm.run.load_workload`)."""
        self._validate()

    # -- errors --------------------------------------------------------------------------
    def error(self, table: tuple, key: str | None, message: str) -> LaunchError:
        return LaunchError(f"{self.path}:{_line_of(self.text, table, key)}: {message}")

    def _need(self, mapping, table, key, kinds, what):
        if key not in mapping:
            raise self.error(table, None, f"missing '{key}' (expected {what})")
        value = mapping[key]
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            raise self.error(table, key, f"'{key}' must be {what}, not {value!r}")
        return value

    # -- validation ----------------------------------------------------------------------
    def _validate(self):
        d = self.data
        for key in d:
            if key not in _TOP:
                raise self.error((), key, f"unknown key '{key}' (expected one of "
                                          f"{', '.join(sorted(_TOP))})")
        self.entry = self._need(d, (), "entry", (str,), "the .entry name, a string")
        self.reference = None
        if "reference" in d:
            self.reference = self._need(d, (), "reference", (str,), "the name of the "
                                        "reference function")
        self.seed = self._need(d, (), "seed", (int,), "an integer seed")
        self.rtol = float(d.get("rtol", 0.0))
        sizes = self._need(d, (), "sizes", (dict,), "a table [sizes.test] and [sizes.paper]")
        for size in ("test", "paper"):
            if size not in sizes:
                raise self.error(("sizes",), None, f"missing [sizes.{size}]")
        variants = d.get("variants", {})
        self.variants = tuple(variants) or ("default",)
        launch = self._need(d, (), "launch", (dict,), "a table [launch] with grid and block")
        for key in ("grid", "block"):
            dims = self._need(launch, ("launch",), key, (list,), "a list of 3 dimensions")
            if len(dims) != 3:
                raise self.error(("launch",), key, f"'{key}' must have 3 dimensions, "
                                                   f"not {len(dims)}")
        self.params = self._need(d, (), "params", (list,), "[[params]] tables")
        self.buffers = d.get("buffers", {})
        for name, buf in self.buffers.items():
            table = ("buffers", name)
            for key in buf:
                if key not in _BUFFER_KEYS:
                    raise self.error(table, key, f"unknown buffer key '{key}' (expected one "
                                                 f"of {', '.join(sorted(_BUFFER_KEYS))})")
            dtype = self._need(buf, table, "dtype", (str,), f"one of {', '.join(DTYPES)}")
            if dtype not in DTYPES:
                raise self.error(table, "dtype", f"dtype must be one of {', '.join(DTYPES)}, "
                                                 f"not {dtype!r}")
            self._need(buf, table, "shape", (list,), "a list of dimensions")
            init = buf.get("init", "zeros")
            if init not in ("uniform", "zeros"):
                raise self.error(table, "init", f"init must be 'uniform' or 'zeros', "
                                                f"not {init!r}")
            if init == "uniform":
                bounds = self._need(buf, table, "range", (list,), "[low, high]")
                if len(bounds) != 2:
                    raise self.error(table, "range", "range must be [low, high]")
                if all(isinstance(b, int | float) for b in bounds) and bounds[0] > bounds[1]:
                    raise self.error(table, "range", f"range must be [low, high] with low <= "
                                                     f"high, not {bounds}")
        for i, param in enumerate(self.params):
            table = ("params", i)
            if not isinstance(param, dict) or "name" not in param:
                raise self.error(table, None, "each [[params]] needs a 'name'")
            if "buffer" in param:
                if param["buffer"] not in self.buffers:
                    raise self.error(table, "buffer", f"unknown buffer {param['buffer']!r} "
                                     f"(expected one of {', '.join(self.buffers)})")
            else:
                ptype = self._need(param, table, "type", (str,),
                                   f"one of {', '.join(PARAM_TYPES)}")
                if ptype not in PARAM_TYPES:
                    raise self.error(table, "type", f"type must be one of "
                                     f"{', '.join(PARAM_TYPES)}, not {ptype!r}")
                if "value" not in param:
                    raise self.error(table, None, "missing 'value' (expected a number or "
                                                  "an expression)")
        self.inputs = None
        if "inputs" in d:
            self.inputs = self._need(d, (), "inputs", (str,), "the name of a function that "
                                     "makes the structured input buffers")
        self._validate_loop()

    def _validate_loop(self):
        """``[loop]``: exactly one of ``repeat`` and ``until``; ``max`` with ``until``;
        ``until`` and ``swap`` name buffers; swapped buffers agree in dtype and shape."""
        if "loop" not in self.data:
            return
        loop = self._need(self.data, (), "loop", (dict,), "a table [loop]")
        table = ("loop",)
        for key in loop:
            if key not in _LOOP_KEYS:
                raise self.error(table, key, f"unknown loop key '{key}' (expected one of "
                                             f"{', '.join(sorted(_LOOP_KEYS))})")
        if ("repeat" in loop) == ("until" in loop):
            raise self.error(table, None, "[loop] needs exactly one of 'repeat' (a launch "
                                          "count) and 'until' (a flag buffer)")
        if "until" in loop:
            flag = self._need(loop, table, "until", (str,), "the name of a flag buffer")
            self._known_buffer(flag, table, "until")
            if "max" not in loop:
                raise self.error(table, None, "missing 'max' (expected the most launches "
                                              "an 'until' loop may take)")
        elif "max" in loop:
            raise self.error(table, "max", "'max' belongs to an 'until' loop; 'repeat' "
                                           "gives the count")
        for pair in self._need(loop, table, "swap", (list,), "a list of [a, b] buffer pairs") \
                if "swap" in loop else ():
            if not (isinstance(pair, list) and len(pair) == 2
                    and all(isinstance(n, str) for n in pair) and pair[0] != pair[1]):
                raise self.error(table, "swap", f"each swap must be [a, b], two different "
                                                f"buffer names, not {pair!r}")
            for name in pair:
                self._known_buffer(name, table, "swap")
            first, second = (self.buffers[n] for n in pair)
            if first.get("dtype") != second.get("dtype") or first.get("shape") != \
                    second.get("shape"):
                raise self.error(table, "swap", f"swapped buffers {pair[0]!r} and {pair[1]!r} "
                                                f"must have the same dtype and shape")

    def _known_buffer(self, name, table, key):
        if name not in self.buffers:
            raise self.error(table, key, f"unknown buffer {name!r} (expected one of "
                                         f"{', '.join(self.buffers)})")

    # -- evaluation ----------------------------------------------------------------------
    def variables(self, size: str, variant: str | None = None) -> dict:
        if size not in ("test", "paper"):
            raise LaunchError(f"{self.path}: unknown size {size!r} (expected test or paper)")
        variant = variant or self.variants[0]
        if variant not in self.variants:
            raise LaunchError(f"{self.path}: unknown variant {variant!r} (expected one of "
                              f"{', '.join(self.variants)})")
        values = dict(self.data["sizes"][size])
        values.update(self.data.get("variants", {}).get(variant, {}))
        return values

    def evaluate(self, value, variables, table, key):
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise self.error(table, key, f"'{key}' must be a number or an expression, "
                                         f"not {value!r}")
        if not isinstance(value, str):
            return value
        if len(value) > MAX_EXPRESSION_CHARACTERS:
            raise self.error(table, key, f"expression of {len(value):,} characters; at most "
                                         f"{MAX_EXPRESSION_CHARACTERS} are allowed")
        try:
            return _eval(ast.parse(value, mode="eval").body, variables)
        except (SyntaxError, TypeError, ValueError, ZeroDivisionError) as why:
            raise self.error(table, key, f"cannot evaluate {value!r}: {why}") from None

    def whole(self, value, variables, table, key, low: int = 1) -> int:
        """``value`` evaluated, required to be an integer >= ``low`` (42.5 is an error, not
        42)."""
        number = self.evaluate(value, variables, table, key)
        if isinstance(number, float) and number.is_integer():
            number = int(number)
        if not isinstance(number, int) or number < low:
            shown = f"{value!r} = {number!r}" if isinstance(value, str) else repr(value)
            raise self.error(table, key, f"'{key}' must be an integer >= {low}, not {shown}")
        return number

    def _dimensions(self, variables) -> dict[str, tuple[int, int, int]]:
        """Grid and block, each dimension a positive integer within CUDA's limits (the grid
        of every launch of a loop)."""
        dims = {k: tuple(self.whole(v, variables, ("launch",), k)
                         for v in self.data["launch"][k]) for k in ("grid", "block")}
        threads = dims["block"][0] * dims["block"][1] * dims["block"][2]
        if threads > MAX_THREADS_PER_BLOCK:
            raise self.error(("launch",), "block", f"{threads:,} threads per block; at most "
                                                   f"{MAX_THREADS_PER_BLOCK:,} are allowed")
        for axis, (size, limit) in enumerate(zip(dims["grid"], MAX_GRID, strict=True)):
            if size > limit:
                raise self.error(("launch",), "grid", f"grid dimension {axis} is {size:,}; "
                                                      f"at most {limit:,}")
        return dims

    def _shape(self, name, buf, variables) -> tuple[int, ...]:
        """A buffer's shape: non-negative integers, within :data:`MAX_BUFFER_BYTES`."""
        table = ("buffers", name)
        shape = tuple(self.whole(s, variables, table, "shape", low=0) for s in buf["shape"])
        size = int(np.prod(shape, dtype=object)) * np.dtype(buf["dtype"]).itemsize
        if size > MAX_BUFFER_BYTES:
            raise self.error(table, "shape", f"buffer {name!r} of shape {shape} takes "
                                             f"{size:,} bytes; at most {MAX_BUFFER_BYTES:,}")
        return shape

    def make(self, size: str = "test", variant: str | None = None) -> Launch:
        """The concrete launch for ``size`` and ``variant``, with generated buffers."""
        var = self.variables(size, variant)
        dims = self._dimensions({**var, ITERATION: 0} if "loop" in self.data else var)
        rng = np.random.default_rng(self.seed)
        buffers = {}
        for name, buf in self.buffers.items():
            table = ("buffers", name)
            shape = self._shape(name, buf, var)
            dtype = np.dtype(buf["dtype"])
            if buf.get("init", "zeros") == "zeros":
                buffers[name] = np.zeros(shape, dtype)
                continue
            low, high = (self.evaluate(b, var, table, "range") for b in buf["range"])
            if low > high:
                raise self.error(table, "range", f"range must be [low, high] with low <= high, "
                                                 f"not [{low}, {high}]")
            if dtype.kind == "f":
                buffers[name] = rng.uniform(low, high, shape).astype(dtype)
            else:
                buffers[name] = rng.integers(int(low), int(high), shape, endpoint=True,
                                             dtype=dtype)
        self._structured_inputs(buffers, var, rng)
        outputs = tuple(n for n, b in self.buffers.items() if b.get("output", False))
        loop = self._loop(var) if "loop" in self.data else None
        first = loop.iterations[0] if loop else Iteration(dims["grid"], self._params(var))
        return Launch(self.entry, first.grid, dims["block"], var, buffers, outputs,
                      first.params, self.reference, self.rtol, loop)

    def _params(self, variables) -> list[tuple[str, str, object]]:
        params = []
        for i, param in enumerate(self.params):
            if "buffer" in param:
                params.append((param["name"], "ptr", param["buffer"]))
            else:
                value = self.evaluate(param["value"], variables, ("params", i), "value")
                params.append((param["name"], param["type"], value))
        return params

    def _loop(self, variables) -> Loop:
        """Every launch of the ``[loop]``, its grid and parameters evaluated with
        ``iteration`` = 0, 1, ..."""
        loop, table = self.data["loop"], ("loop",)
        key = "repeat" if "repeat" in loop else "max"
        count = self.whole(loop[key], variables, table, key)
        if count > MAX_ITERATIONS:
            raise self.error(table, key, f"'{key}' is {count:,} launches; at most "
                                         f"{MAX_ITERATIONS:,} are allowed")
        iterations = []
        for index in range(count):
            var = {**variables, ITERATION: index}
            iterations.append(Iteration(self._dimensions(var)["grid"], self._params(var)))
        until = loop.get("until")
        exhausted = self.error(table, "max", f"the loop still asks for a launch after max = "
                                             f"{count:,} launches (flag buffer {until!r} is "
                                             f"not all zeros)")
        swaps = tuple(tuple(pair) for pair in loop.get("swap", ()))
        return Loop(tuple(iterations), until, swaps, str(exhausted))

    def _structured_inputs(self, buffers, variables, rng):
        """Apply the ``inputs`` function: its arrays replace generated buffers."""
        if self.inputs is None:
            return
        if self.input_function is None:
            raise self.error((), "inputs", f"inputs function {self.inputs!r} is not loaded "
                                           f"(load the kernel as a workload)")
        made = self.input_function({k: v.copy() for k, v in buffers.items()}, dict(variables),
                                   rng)
        for name, array in made.items():
            if name not in buffers:
                raise self.error((), "inputs", f"inputs function {self.inputs!r} made "
                                               f"unknown buffer {name!r}")
            want = buffers[name]
            if not isinstance(array, np.ndarray) or array.dtype != want.dtype \
                    or array.shape != want.shape:
                raise self.error((), "inputs", f"inputs function {self.inputs!r} made "
                                               f"{name!r} as {_describe(array)}; expected "
                                               f"{want.dtype} of shape {want.shape}")
            buffers[name] = array


def _eval(node, variables):
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in variables:
            raise ValueError(f"unknown variable {node.id!r} (size variables: "
                             f"{', '.join(variables)})")
        return variables[node.id]
    if isinstance(node, ast.BinOp):
        ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
               ast.Mult: lambda a, b: a * b, ast.FloorDiv: lambda a, b: a // b,
               ast.Mod: lambda a, b: a % b}
        if type(node.op) in ops:
            return ops[type(node.op)](_eval(node.left, variables), _eval(node.right, variables))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand, variables)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in _FUNCS and not node.keywords):
        return _FUNCS[node.func.id](*(_eval(a, variables) for a in node.args))
    raise ValueError("only numbers, size variables, + - * // % and cdiv/min/max are allowed")


def _describe(value) -> str:
    if isinstance(value, np.ndarray):
        return f"{value.dtype} of shape {value.shape}"
    return type(value).__name__


def _toml_line(message: str) -> int:
    import re

    match = re.search(r"line (\d+)", message)
    return int(match.group(1)) if match else 1


def _line_of(text: str, table: tuple, key: str | None) -> int:
    """The line of ``key`` in ``table`` (e.g. ``("buffers", "x")`` or ``("params", 2)``),
    or of the table's header when ``key`` is ``None`` or absent; 1 if nothing matches."""
    header_line, current, counts = None, (), {}
    wanted = tuple(str(t) for t in table)
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("[[") and line.endswith("]]"):
            name = line[2:-2].strip()
            index = counts.get(name, -1) + 1
            counts[name] = index
            current = (*name.split("."), str(index))
        elif line.startswith("[") and line.endswith("]"):
            current = tuple(line[1:-1].strip().split("."))
        else:
            if current == wanted and key is not None and line.split("=")[0].strip() == key:
                return number
            continue
        if current == wanted:
            header_line = number
    return header_line or 1


def load_launch(path: str | Path) -> LaunchSpec:
    """Parse and validate the launch description at ``path``."""
    return LaunchSpec(Path(path))
