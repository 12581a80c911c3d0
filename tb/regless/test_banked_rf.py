"""cocotb bench of ``regless.banked_rf`` against its golden model.

Reads and writes name registers of the file only (``warp < warps``, ``reg < entries /
warps``); both ports are always ready, so every request transfers in its cycle.
"""

from gpurf.hw.regless.configs import BankedRfConfig
from gpurf.tb.harness import cocotb_tests

__all__ = ["STIMULI"]


def _read(config, ref) -> dict:
    return {"read__valid": 1,
            "read__payload": config.codecs["read__payload"].pack({"warp": ref[0], "reg": ref[1]})}


def _write(config, ref, value: int) -> dict:
    """A write of the packed ``value``."""
    return {"write__valid": 1,
            "write__payload": config.codecs["write__payload"].pack(
                {"warp": ref[0], "reg": ref[1], "data": value})}


def _registers(config) -> list[tuple[int, int]]:
    return [(warp, reg) for warp in range(config.warps) for reg in range(config.regs)]


def _pick(rng, pool, every):
    return rng.choice(pool if rng.random() < 0.7 else every)


def random_stream(params, rng, cycles):
    """Random reads and writes; the registers come from a small pool most of the time, so
    reads see recent writes and a read often meets a write of the same register in its
    cycle (it must return the old value); rates change every 100 cycles."""
    config = BankedRfConfig(**params)
    every = _registers(config)
    pool = rng.sample(every, min(len(every), 6))
    width = config.lanes * config.data_width
    for now in range(cycles):
        if now % 100 == 0:
            p_read, p_write = rng.choice([0.3, 0.7, 1.0]), rng.choice([0.3, 0.7, 1.0])
        inputs = {}
        if rng.random() < p_write:
            inputs.update(_write(config, _pick(rng, pool, every), rng.getrandbits(width)))
        if rng.random() < p_read:
            inputs.update(_read(config, _pick(rng, pool, every)))
        yield inputs


def directed_every_register(params, rng, cycles):
    """Write every register with a distinct value (its index in the low 12 bits, where the
    width allows), read every register back (in another
    order), then a write and a read of the same register in one cycle (old value), and a
    read of it in the next cycle (new value), for every bank."""
    config = BankedRfConfig(**params)
    every = _registers(config)
    width = config.lanes * config.data_width
    high = rng.getrandbits(width) & ~((1 << 12) - 1)
    for index, ref in enumerate(every):
        yield _write(config, ref, (high | (index + 1)) % (1 << width))
    for ref in reversed(every):
        yield _read(config, ref)
    yield {}
    first = {}
    for ref in every:
        first.setdefault(config.bank_of(*ref), ref)
    for ref in first.values():
        yield {**_write(config, ref, rng.getrandbits(width)), **_read(config, ref)}
        yield _read(config, ref)
    yield {}


STIMULI = (random_stream, directed_every_register)

globals().update(cocotb_tests(STIMULI))
