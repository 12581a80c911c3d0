"""Shared fixtures: the seed every randomized test prints and accepts."""

import os
import random

import pytest


def pytest_addoption(parser):
    parser.addoption("--seed", type=int, default=None,
                     help="seed of randomized tests (default: GPURF_SEED or a fresh one)")
    parser.addoption("--cycles", type=int, default=None,
                     help="cycles of each randomized cosimulation (default: 2000)")
    parser.addoption("--every-set", action="store_true",
                     help="cosimulate every block parameter set on every simulator (default: "
                          "the defaults on Verilator, the test sets on Icarus)")


@pytest.fixture(scope="session")
def seed(request) -> int:
    """The session's seed: --seed, else GPURF_SEED, else random; printed in the header."""
    return request.config._gpurf_seed


@pytest.fixture(scope="session")
def cycles(request) -> int:
    return request.config.getoption("--cycles") or int(os.environ.get("GPURF_CYCLES", "2000"))


def pytest_configure(config):
    chosen = config.getoption("--seed")
    if chosen is None:
        chosen = int(os.environ.get("GPURF_SEED", random.SystemRandom().randrange(1 << 31)))
    config._gpurf_seed = chosen


def pytest_report_header(config):
    return f"gpurf seed: {config._gpurf_seed} (repeat with --seed {config._gpurf_seed})"


def pytest_collection_modifyitems(config, items):
    """``slow_formal`` proofs run only when asked for (``-m slow_formal``)."""
    if "slow_formal" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="long proof: run with -m slow_formal")
    for item in items:
        if "slow_formal" in item.keywords:
            item.add_marker(skip)


collect_ignore = ["toy_mechanism"]
"""The toy mechanism's files are a fixture of ``test_new_mechanism.py``, not tests here."""
