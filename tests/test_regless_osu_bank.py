# amaranth: UnusedElaboratable=no
"""``regless.osu_bank``: parameters, widths, storage, the golden allocation order and the
SymbiYosys proof of the list and dirty-value invariants."""

import pytest

from gpurf.golden.regless.osu_bank import Line, allocation_choice
from gpurf.hw.registry import get_block
from gpurf.hw.regless.configs import OsuBankConfig
from gpurf.sim.formal import missing_solver, prove
from gpurf.synth.flow import storage
from gpurf.tb.regless.formal_osu_bank import OsuBankFormal


def test_default_widths():
    config = OsuBankConfig(**get_block("regless.osu_bank").defaults)
    assert config == OsuBankConfig(lines=16, warps=16, regs=64, lanes=32, data_width=32)
    assert (config.warp_bits, config.reg_bits, config.line_bits) == (4, 6, 4)
    assert config.value_layout.size == 1024
    ports = config.codecs
    assert ports["write__payload"].width == 4 + 1024 + 1
    assert ports["fetch__payload"].width == 4 + 6 + 4 + 1
    assert ports["writeback__payload"].width == 4 + 6 + 4 + 1024
    assert config.data_bits == 16 * 1024
    assert config.tag_bits == 16 * 11


def test_allocation_order_free_clean_dirty():
    """Spec: free first, else clean (dropped), else dirty (evicted first); lowest line of
    the list first; nothing when every line is in use."""
    lines = [Line("used"), Line("dirty"), Line("clean"), Line("free")]
    assert allocation_choice(lines) == ("take", 3)
    lines[3].place = "used"
    assert allocation_choice(lines) == ("take", 2)
    lines[2].place = "used"
    assert allocation_choice(lines) == ("evict", 1)
    lines[1].place = "used"
    assert allocation_choice(lines) is None


def test_storage():
    """16 lines x 1024 bits as one unmapped memory; flip-flops: 16 tags of 10 bits, 6 per-line
    state vectors of 16 bits (free, clean, dirty, used, written, filling), the eviction slot
    (chosen, held, 4-bit line), the 16-bit fetch register, ``read_resp.valid`` and the
    sticky error."""
    report = storage(get_block("regless.osu_bank"))
    assert report.memories == 1
    assert report.memory_bits == 16 * 1024
    assert report.ff_bits == 16 * 10 + 6 * 16 + 6 + 16 + 2


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
@pytest.mark.parametrize("params", [{}, {"lines": 3, "warps": 3, "regs": 3, "lanes": 2}],
                         ids=["4lines", "3lines"])
def test_lists_and_dirty_values(params):
    """k-induction, depth 4, on ``formal_osu_bank.SMALL`` (4 lines, 2 warps x 4 registers,
    one 2-bit lane) and on 3 lines x (3 warps x 3 registers) with two lanes; every input
    free. Every line is in exactly one of free / clean / dirty / in use; a written value
    stays in its line (in use or dirty, same tag, same data) until a writeback carries it
    or the register is erased; the bank's dirty bit equals the shadow's."""
    name = "osu_bank_" + "_".join(f"{k}{v}" for k, v in params.items())
    result = prove(OsuBankFormal(**params), name=name, depth=4, mode="prove")
    assert result.passed, result.log_tail
