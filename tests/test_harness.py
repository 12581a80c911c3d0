"""The comparison harness itself can fail: a wrong golden model or a wrong port set is caught."""

import pytest

from gpurf.golden.subcore.warp_selector import WarpSelector as GoldenSelector
from gpurf.hw.registry import get_block
from gpurf.tb.harness import BenchConfig, MismatchError, simulate_amaranth
from gpurf.tb.subcore.test_warp_selector import random_slots


class _OffByOne(GoldenSelector):
    def step(self, inputs):
        out = super().step(inputs)
        if out["grant_valid"]:
            out["grant"] = (out["grant"] + 1) % self.config.slots
        return out


class _MissingPort(GoldenSelector):
    def step(self, inputs):
        out = super().step(inputs)
        del out["grant"]
        return out


@pytest.mark.parametrize("model_class", [_OffByOne, _MissingPort])
def test_a_wrong_golden_model_fails_the_run(model_class, seed):
    block = get_block("subcore.warp_selector")
    with pytest.raises(MismatchError, match=r"^subcore\.warp_selector/random_slots: "):
        simulate_amaranth(block.build(), model_class(**block.resolve()), random_slots,
                          block.resolve(), seed, 50, label="subcore.warp_selector/random_slots")


def test_stimulus_driving_an_unknown_port_is_an_error(seed):
    block = get_block("subcore.warp_selector")

    def bad(params, rng, cycles):
        yield {"no_such_port": 1}

    with pytest.raises(KeyError, match="no_such_port"):
        simulate_amaranth(block.build(), block.golden(), bad, block.resolve(), seed, 5)


def test_bench_config_round_trips_through_the_environment(monkeypatch):
    config = BenchConfig(block="subcore.warp_selector", params={"slots": 4}, seed=9, cycles=77)
    for key, value in config.to_env().items():
        monkeypatch.setenv(key, value)
    assert BenchConfig.from_env() == config
