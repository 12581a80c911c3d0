# amaranth: UnusedElaboratable=no
"""The float arithmetic of the value converter and truncator together: Table 3, the rules
between the format parameters, numpy as external reference (golden model and RTL), correct
rounding, widening and narrowing as inverses, every format's RTL against the golden model.
Each block's own directed cases (ports, slice placement, input protocol) are in its file.

The RTL checks run the generated Verilog of a 4-lane configuration (lanes are identical
copies) through one Verilator batch sweep per block (:mod:`gpurf.sim.vectors`): the
first build takes about 30 s per block, later runs reuse it from the build folder, and a
sweep of 10^5 values takes about a second.
"""

import random
from fractions import Fraction

import numpy as np
import pytest

from gpurf.golden.compression.formats import decode, pack, unpack
from gpurf.golden.compression.value_converter import widen
from gpurf.golden.compression.value_truncator import narrow
from gpurf.hw.compression.configs import ValueConverterConfig, ValueTruncatorConfig
from gpurf.hw.compression.formats import FP32, TABLE3, FloatFormat, resolve_formats
from gpurf.hw.compression.value_converter import ValueConverter
from gpurf.hw.compression.value_truncator import ValueTruncator
from gpurf.hw.registry import get_block
from gpurf.sim.toolchain import missing_simulator
from gpurf.sim.vectors import Sweeper
from gpurf.tb.compression.drivers import FP32_SPECIALS, fp32_edges, random_fp32

F16 = TABLE3[16]
RANDOM_VALUES = 100_000
SWEEP_LANES = 4

needs_verilator = pytest.mark.skipif(missing_simulator("verilator") is not None,
                                     reason=str(missing_simulator("verilator")))


def numpy_widen(codes) -> np.ndarray:
    """numpy's float16 -> float32, as bits."""
    return np.asarray(codes, dtype=np.uint16).view(np.float16).astype(np.float32).view(
        np.uint32)


def numpy_narrow(bits) -> np.ndarray:
    """numpy's ``float32.astype(float16)``, as bits."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(bits, dtype=np.uint32).view(np.float32).astype(np.float16).view(
            np.uint16)


def random_f16_inputs(seed: int) -> list[int]:
    """10^5 fp32 values around float16's range (ties, edges, any pattern) and 5 x 10^4
    uniformly random bit patterns."""
    rng = random.Random(seed)
    return ([random_fp32(rng, F16) for _ in range(RANDOM_VALUES)]
            + [rng.randrange(1 << 32) for _ in range(RANDOM_VALUES // 2)])


def mismatches(values, got, want) -> list[str]:
    bad = np.nonzero(np.asarray(got) != np.asarray(want))[0]
    return [f"{int(values[i]):#x}: got {int(got[i]):#x}, numpy {int(want[i]):#x}"
            for i in bad[:8]]


# --- Table 3 and parameters -------------------------------------------------------------

def test_table3_formats():
    """Paper Table 3: total, exponent and mantissa bits; every format has a sign bit."""
    rows = {w: (f.exponent, f.mantissa) for w, f in TABLE3.items()}
    assert rows == {32: (8, 23), 28: (7, 20), 24: (6, 17), 20: (5, 14), 16: (5, 10),
                    12: (4, 7), 8: (3, 4)}
    assert all(f.width == w and f.slices == w // 4 for w, f in TABLE3.items())
    assert (FP32.bias, F16.bias, TABLE3[8].bias) == (127, 15, 3)
    assert F16.layout.size == 16 and list(dict(F16.layout)) == ["mantissa", "exponent", "sign"]


def test_resolve_formats():
    assert resolve_formats(width=0, exponent=0, mantissa=0) == tuple(
        TABLE3[w] for w in (8, 12, 16, 20, 24, 28, 32))
    assert resolve_formats(width=20, exponent=0, mantissa=0) == (TABLE3[20],)
    assert resolve_formats(width=0, exponent=4, mantissa=4) == (FloatFormat(4, 4),)
    assert resolve_formats(width=9, exponent=4, mantissa=4) == (FloatFormat(4, 4),)


BAD_PARAMS = [
    ({"width": 18}, r"^width must be one of 0, 8, 12, 16, 20, 24, 28, 32, not 18$"),
    ({"exponent": 5}, r"^mantissa must be an integer in 1\.\.23, not 0$"),
    ({"mantissa": 10}, r"^exponent must be an integer in 2\.\.8, not 0$"),
    ({"exponent": 1, "mantissa": 4}, r"^exponent must be an integer in 2\.\.8, not 1$"),
    ({"exponent": 8, "mantissa": 23, "width": 31},
     r"^width must be 0 or 32 \(1 \+ exponent \+ mantissa\), not 31$"),
    ({"exponent": 2, "mantissa": 1, "width": 16},
     r"^width must be 0 or 4 \(1 \+ exponent \+ mantissa\), not 16$"),
]
"""Rules between the format parameters (each parameter's own range and type are checked by
the tests generated from the declarations, ``tests/test_params.py``)."""


@pytest.mark.parametrize("build", [
    ValueConverter, ValueTruncator,
    lambda **p: get_block("compression.value_converter").golden(p),
    lambda **p: get_block("compression.value_truncator").golden(p),
], ids=["converter", "truncator", "golden-converter", "golden-truncator"])
@pytest.mark.parametrize(("params", "message"), BAD_PARAMS)
def test_format_rules(build, params, message):
    with pytest.raises(ValueError, match=message):
        build(**params)


# --- numpy float16, golden model ------------------------------------------------------

def test_golden_widen_equals_numpy_for_all_float16():
    codes = np.arange(1 << 16, dtype=np.uint32)
    got = np.array([widen(int(c), F16) for c in codes], dtype=np.uint32)
    want = numpy_widen(codes)
    assert not mismatches(codes, got, want)


def test_golden_narrow_equals_numpy_on_edge_cases():
    """Zeros, fp32 and float16 subnormals, ties (even and odd), the overflow border,
    infinities, NaN payloads (kept, truncated, forced non-zero), both signs; numpy's
    scalar path (``np.float32(x).astype(np.float16)``) and its array path agree."""
    edges = list(fp32_edges(F16))
    assert len(edges) > 60
    got = [narrow(b, F16) for b in edges]
    assert not mismatches(edges, got, numpy_narrow(edges))
    with np.errstate(over="ignore", invalid="ignore"):
        scalar = [int(np.uint32(b).view(np.float32).astype(np.float16).view(np.uint16))
                  for b in edges]
    assert not mismatches(edges, got, scalar)


def test_golden_narrow_equals_numpy_on_random_values(seed):
    values = random_f16_inputs(seed)
    got = np.array([narrow(v, F16) for v in values], dtype=np.uint16)
    assert not mismatches(values, got, numpy_narrow(values))


# --- numpy float16, RTL ---------------------------------------------------------------

def rtl_widen(values: list[int], slices: int, params=None) -> list[int]:
    """The converter RTL's fp32 results for narrow encodings of ``slices`` data slices."""
    params = {"lanes": SWEEP_LANES, **(params or {})}
    lanes = params["lanes"]
    sweeper = Sweeper(get_block("compression.value_converter"), params)
    ports = ValueConverterConfig(**params).codecs
    padded = values + [0] * (-len(values) % lanes)
    fixed = params.get("width") or params.get("exponent")
    vectors = [{"operand": ports["operand"].pack(padded[i:i + lanes]),
                **({} if fixed else {"slices": slices})}
               for i in range(0, len(padded), lanes)]
    out = sweeper.run(vectors)
    return [value for o in out for value in ports["result"].unpack(o["result"])][:len(values)]


def rtl_narrow(values: list[int], slices: int, params=None) -> list[int]:
    """The truncator RTL's narrow results for fp32 ``values``: an unsplit float of
    ``slices`` slices in slices 0.. of r0 (so ``write[0].data`` holds the narrow value)."""
    params = {"lanes": SWEEP_LANES, **(params or {})}
    lanes = params["lanes"]
    sweeper = Sweeper(get_block("compression.value_truncator"), params)
    ports = ValueTruncatorConfig(**params).codecs
    mask = (1 << slices) - 1
    entry = ports["entry"].pack({"r0": 7, "m0": mask, "r1": 3, "m1": 0})
    padded = values + [0] * (-len(values) % lanes)
    vectors = [{"entry": entry, "is_float": 1,
                "operand": ports["operand"].pack(padded[i:i + lanes])}
               for i in range(0, len(padded), lanes)]
    results = []
    for out in sweeper.run(vectors):
        first, second = ports["write"].unpack(out["write"])
        assert (first.reg, first.mask, second.mask) == (7, mask, 0)
        results += first.data
    return results[:len(values)]


@needs_verilator
def test_rtl_widen_equals_numpy_for_all_float16():
    """The default converter (every Table 3 format, ``slices = 4``) on all 65,536
    encodings."""
    codes = list(range(1 << 16))
    assert not mismatches(codes, rtl_widen(codes, 4), numpy_widen(codes))


@needs_verilator
def test_rtl_narrow_equals_numpy(seed):
    """The default truncator (``m0 = 0x0F``: a 4-slice float) on the edge cases and
    1.5 x 10^5 random values."""
    values = list(fp32_edges(F16)) + random_f16_inputs(seed)
    assert not mismatches(values, rtl_narrow(values, 4), numpy_narrow(values))


# --- every format: golden properties and RTL against golden ------------------------

def _all_or_sample(fmt: FloatFormat, rng, count=20_000) -> list[int]:
    if fmt.width <= 16:
        return list(range(1 << fmt.width))
    return [rng.randrange(1 << fmt.width) for _ in range(count)]


@pytest.mark.parametrize("width", sorted(TABLE3))
def test_golden_narrow_inverts_widen(width, seed):
    """Every encoding (8-16 bits) or 2 x 10^4 random ones: widening is exact and narrowing
    gives the encoding back, NaN payloads included; the value is the same rational."""
    fmt, rng = TABLE3[width], random.Random(seed)
    for code in _all_or_sample(fmt, rng):
        wide = widen(code, fmt)
        assert narrow(wide, fmt) == code, f"{fmt} {code:#x}"
        source, target = decode(code, fmt), decode(wide, FP32)
        assert (source.kind, source.sign) == (target.kind, target.sign)
        if source.kind == "finite":
            assert source.magnitude == target.magnitude


def _neighbours_value(fmt: FloatFormat, code: int) -> Fraction | None:
    value = decode(code, fmt)
    return value.magnitude if value.kind == "finite" else None


@pytest.mark.parametrize("width", sorted(TABLE3))
def test_golden_narrow_is_correctly_rounded(width, seed):
    """For random finite fp32 ``x``: no finite value of the format is nearer than the
    result; on a tie the result's mantissa is even; infinity only when ``|x|`` reaches the
    largest finite value plus half its step."""
    fmt, rng = TABLE3[width], random.Random(seed)
    largest = _neighbours_value(fmt, pack(fmt, 0, fmt.max_exponent - 1, (1 << fmt.mantissa) - 1))
    step = largest - _neighbours_value(fmt, pack(fmt, 0, fmt.max_exponent - 1,
                                                 (1 << fmt.mantissa) - 2))
    for _ in range(5000):
        x = random_fp32(rng, fmt)
        source = decode(x, FP32)
        if source.kind != "finite":
            continue
        result = narrow(x, fmt)
        got = decode(result, fmt)
        assert got.sign == source.sign
        if got.kind == "inf":
            assert source.magnitude >= largest + step / 2, f"{x:#x}"
            continue
        error = abs(source.magnitude - got.magnitude)
        unsigned = pack(fmt, 0, *_fields(result, fmt))
        for other in (unsigned - 1, unsigned + 1):
            neighbour = _neighbours_value(fmt, other) if other >= 0 else None
            if neighbour is not None:
                assert error <= abs(source.magnitude - neighbour), f"{x:#x}"
                if error == abs(source.magnitude - neighbour) and error:
                    assert unsigned % 2 == 0, f"tie {x:#x} not to even"


def _fields(code, fmt):
    value = unpack(code, fmt)
    return value["exponent"], value["mantissa"]


@needs_verilator
@pytest.mark.parametrize("width", sorted(TABLE3))
def test_rtl_widen_every_format_equals_golden(width, seed):
    """Default converter, ``slices = width / 4``: every encoding up to 16 bits, 2 x 10^4
    random ones above, against the golden model."""
    fmt, rng = TABLE3[width], random.Random(seed)
    codes = _all_or_sample(fmt, rng)
    got = rtl_widen(codes, fmt.slices)
    want = [widen(c, fmt) for c in codes]
    assert not mismatches(codes, got, want)


@needs_verilator
@pytest.mark.parametrize("width", sorted(TABLE3))
def test_rtl_narrow_every_format_equals_golden(width, seed):
    """Default truncator, an unsplit float of ``width / 4`` slices: the format's edges
    and 2 x 10^4 random values, against the golden model."""
    fmt, rng = TABLE3[width], random.Random(seed)
    values = list(fp32_edges(fmt)) + [random_fp32(rng, fmt) for _ in range(20_000)]
    got = rtl_narrow(values, fmt.slices)
    want = [narrow(v, fmt) for v in values]
    assert not mismatches(values, got, want)


def test_fp32_is_the_identity_both_ways(seed):
    rng = random.Random(seed)
    for bits in [*FP32_SPECIALS, *(rng.randrange(1 << 32) for _ in range(5000))]:
        assert narrow(bits, FP32) == bits and widen(bits, FP32) == bits
