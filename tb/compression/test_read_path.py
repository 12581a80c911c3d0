"""cocotb bench of ``compression.read_path`` against its golden model.

The stimulus loads legal entries (split or not, any width) into the source table, then
offers operand reads of loaded registers (held until accepted), a narrow float converted
only where its slice count has a Table 3 format; the register file's answer ``rf_data`` is
random every cycle (the path must extract whatever the read returns).
"""

from gpurf.hw.compression.configs import ReadPathConfig
from gpurf.tb.harness import cocotb_tests

from .drivers import random_entry

__all__ = ["STIMULI"]


class _Driver:
    """The table's contents as loaded, and the read offered until accepted."""

    def __init__(self, params, rng):
        self.config = ReadPathConfig(**params)
        self.rng = rng
        self.table: dict[int, dict] = {}
        self.offer = None

    def load(self, reg, entry):
        self.table[reg] = entry
        return {"load__valid": 1, "load__payload": self.config.codecs["load__payload"].pack(
            {"reg": reg, "entry": entry})}

    def request(self, reg, *, signed=None, convert=None):
        """A read of ``reg`` (loaded): random flags unless given; ``convert`` only for
        2..8 slices."""
        rng, entry = self.rng, self.table[reg]
        slices = entry["m0"].bit_count() + entry["m1"].bit_count()
        convert = (slices >= 2 and rng.random() < 0.5) if convert is None else convert
        signed = (not convert and rng.random() < 0.5) if signed is None else signed
        return {"reg": reg, "signed": int(signed), "convert": int(convert),
                "tag": rng.getrandbits(self.config.tag_width)}

    def inputs(self):
        config, rng = self.config, self.rng
        words = [rng.getrandbits(32) for _ in range(config.lanes)]
        step = {"rf_data": config.codecs["rf_data"].pack(words)}
        if self.offer is not None:
            step.update(request_valid=1, request=config.codecs["request"].pack(self.offer))
        return step

    def accepted(self, got):
        if got["request_ready"]:
            self.offer = None


def random_reads(params, rng, cycles):
    """Load every entry once, then random reads back to back (60 %) with a reload now and
    then (a load and a read of one register in a cycle: the read sees the old entry; the
    reload keeps the slice count, so an offered float keeps its format)."""
    driver = _Driver(params, rng)
    config = driver.config
    for reg in range(config.entries):
        yield driver.load(reg, random_entry(rng))
    for _ in range(cycles):
        if driver.offer is None and rng.random() < 0.6:
            driver.offer = driver.request(rng.randrange(config.entries))
        step = driver.inputs()
        if rng.random() < 0.1:
            reg = rng.randrange(config.entries)
            old = driver.table[reg]
            width = old["m0"].bit_count() + old["m1"].bit_count()
            step.update(driver.load(reg, random_entry(rng, width=width)))
        driver.accepted((yield step))
    for _ in range(6):
        yield driver.inputs()


def directed_shapes(params, rng, cycles):
    """Every width 1..8, split and not, signed, unsigned and converted, back to back; then
    two split operands in a row (the second waits a cycle for the double fetch)."""
    driver = _Driver(params, rng)
    config = driver.config
    cases = []
    for width in range(1, 9):
        for split in (False, True):
            for flags in ({"signed": True, "convert": False}, {"signed": False,
                                                               "convert": False},
                          {"signed": False, "convert": width >= 2}):
                cases.append((random_entry(rng, width=width, split=split), flags))
    for index in range(0, len(cases), config.entries):
        batch = cases[index:index + config.entries]
        for reg, (entry, _) in enumerate(batch):
            yield driver.load(reg, entry)
        for reg, (_, flags) in enumerate(batch):
            driver.offer = driver.request(reg, **flags)
            while driver.offer is not None:
                driver.accepted((yield driver.inputs()))
    for _ in range(6):
        yield driver.inputs()


STIMULI = (random_reads, directed_shapes)


globals().update(cocotb_tests(STIMULI))
