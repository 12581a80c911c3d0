"""Shared fixtures: the seed every randomized test prints and accepts; a result cache of the
session's own."""

import os
import random
import tempfile

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
    if "GPURF_CACHE" not in os.environ:
        # Set before pytest-xdist starts its workers, which inherit it: the whole session
        # shares one fresh cache, so a test's "fresh synthesis" is one (docs/mainjob.md).
        os.environ["GPURF_CACHE"] = tempfile.mkdtemp(prefix="gpurf-test-cache-")


def pytest_report_header(config):
    return f"gpurf seed: {config._gpurf_seed} (repeat with --seed {config._gpurf_seed})"


OPT_IN_TIERS = {
    "slow_formal": "long proof",
    "paper_size": "paper-size run",
    "soak": "soak run",
}
"""Markers of the tiers beyond the default one (README, "Test tiers"): their tests run only
when ``-m`` names them."""


def pytest_collection_modifyitems(config, items):
    """Tests of an opt-in tier are skipped, with the command that runs them, unless ``-m``
    names the tier."""
    asked = config.getoption("-m") or ""
    for tier, what in OPT_IN_TIERS.items():
        if tier in asked:
            continue
        skip = pytest.mark.skip(reason=f"{what}: run with -m {tier}")
        for item in items:
            if tier in item.keywords:
                item.add_marker(skip)
