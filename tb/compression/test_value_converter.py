"""cocotb bench of ``compression.value_converter`` against its golden model.

Every cycle picks one format (all lanes share it: one operand of a warp) and a narrow float
per lane, with random bits above the format's width, which the converter ignores.
"""

from gpurf.hw.compression.configs import ValueConverterConfig
from gpurf.hw.ports import codec
from gpurf.tb.harness import cocotb_tests

from .drivers import narrow_edges, random_narrow

__all__ = ["STIMULI"]


def _inputs(config, fmt, lanes):
    """One cycle's ports: ``slices`` (run-time format choice only) and the operand."""
    inputs = {"operand": config.codecs["operand"].pack(lanes)}
    if not config.fixed:
        inputs["slices"] = fmt.slices
    return inputs


def _chunks(config, codes):
    """``codes`` a warp register at a time (the last one padded with its first code)."""
    for start in range(0, len(codes), config.lanes):
        chunk = codes[start:start + config.lanes]
        yield chunk + [chunk[0]] * (config.lanes - len(chunk))


def random_operands(params, rng, cycles):
    """A random format and random encodings (a quarter of them edge cases) every cycle."""
    config = ValueConverterConfig(**params)
    for _ in range(cycles):
        fmt = rng.choice(config.formats)
        yield _inputs(config, fmt, [random_narrow(rng, fmt) for _ in range(config.lanes)])


def directed_edges(params, rng, cycles):
    """Every format's zeros, subnormal and normal extremes, one, infinities and NaNs."""
    config = ValueConverterConfig(**params)
    for fmt in config.formats:
        for lanes in _chunks(config, list(narrow_edges(fmt))):
            yield _inputs(config, fmt, lanes)


def sweep_encodings(params, rng, cycles):
    """Every encoding of each handled format of at most 8 bits; for wider formats every
    exponent value, with a random sign and mantissa (the exhaustive and 10^5-value sweeps
    of every format are in ``tests/test_compression_float.py``)."""
    config = ValueConverterConfig(**params)
    for fmt in config.formats:
        if fmt.width <= 8:
            codes = list(range(1 << fmt.width))
        else:
            fields = codec(fmt.layout)
            codes = [fields.pack({"sign": rng.randrange(2), "exponent": e,
                                  "mantissa": rng.randrange(1 << fmt.mantissa)})
                     for e in range(fmt.max_exponent + 1)]
        for lanes in _chunks(config, codes):
            yield _inputs(config, fmt, lanes)


STIMULI = (random_operands, directed_edges, sweep_encodings)


globals().update(cocotb_tests(STIMULI))
