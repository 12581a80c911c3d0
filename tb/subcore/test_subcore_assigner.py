"""cocotb bench of ``subcore.subcore_assigner`` against its golden model."""

from gpurf.golden.subcore.assignment import rr_table, shuffle_table, srr_table
from gpurf.hw.subcore.configs import MODE_HASHED, MODE_ROUND_ROBIN, SubcoreAssignerConfig
from gpurf.tb.harness import cocotb_tests

__all__ = ["STIMULI", "load_table"]


def load_table(table):
    """Cycles writing ``table`` through the write port, entry 0 first."""
    for index, byte in enumerate(table):
        yield {"table_we": 1, "table_index": index, "table_data": byte}


def random_traffic(params, rng, cycles):
    """Random warp and launch strobes, mode changes and table writes."""
    config = SubcoreAssignerConfig(**params)
    mode = MODE_HASHED
    for _ in range(cycles):
        inputs = {"warp": int(rng.random() < 0.6), "launch": int(rng.random() < 0.04)}
        if config.hashed:
            if rng.random() < 0.05:
                mode ^= 1
            inputs["mode"] = mode
            if rng.random() < 0.1:
                inputs.update(table_we=1, table_index=rng.randrange(config.depth),
                              table_data=rng.randrange(256))
        yield inputs


def _policy_tables(config, rng):
    return [rr_table(depth=config.depth), srr_table(depth=config.depth),
            srr_table(subcores=2, depth=config.depth),
            shuffle_table(rng.randrange(1 << 16), depth=config.depth)]


def _kernel(config, rng, mode, warps):
    """A launch strobe, then ``warps`` warps, back to back or with idle gaps."""
    yield {"launch": 1, "mode": mode} if config.hashed else {"launch": 1}
    for _ in range(warps):
        while rng.random() < 0.2:
            yield {"mode": mode} if config.hashed else {}
        yield {"warp": 1, "mode": mode} if config.hashed else {"warp": 1}


def directed_policy_tables(params, rng, cycles):
    """Each policy table loaded, then two passes over it (and one in round robin)."""
    config = SubcoreAssignerConfig(**params)
    warps = 2 * 4 * config.depth + 3
    if not config.hashed:
        yield from _kernel(config, rng, MODE_ROUND_ROBIN, 3 * config.subcores + 1)
        yield from _kernel(config, rng, MODE_ROUND_ROBIN, warps)
        return
    for table in _policy_tables(config, rng):
        yield from load_table(table)
        yield from _kernel(config, rng, MODE_HASHED, warps)
        yield from _kernel(config, rng, MODE_ROUND_ROBIN, 4 * config.depth + 1)


def directed_launch_and_writes(params, rng, cycles):
    """Launch mid-group and together with a warp; table writes racing the reads."""
    config = SubcoreAssignerConfig(**params)
    hashed = {"mode": MODE_HASHED} if config.hashed else {}
    if config.hashed:
        yield from load_table(srr_table(depth=config.depth))
    for offset in range(1, 6):
        for _ in range(offset):
            yield {"warp": 1, **hashed}
        yield {"warp": 1, "launch": 1, **hashed}
        yield {"warp": 1, **hashed}
        yield {"launch": 1, **hashed}
        yield {"warp": 1, **hashed}
    if not config.hashed:
        return
    yield {"launch": 1, **hashed}
    for warp in range(4 * config.depth + 4):
        index = (warp // 4 + warp % 2) % config.depth
        yield {"warp": 1, "table_we": 1, "table_index": index,
               "table_data": rng.randrange(256), **hashed}


STIMULI = (random_traffic, directed_policy_tables, directed_launch_and_writes)


globals().update(cocotb_tests(STIMULI))
