"""cocotb bench of ``toy.counter``."""

from gpurf.tb.harness import cocotb_tests


def random_enable(params, rng, cycles):
    for _ in range(cycles):
        yield {"enable": rng.randrange(2)}


STIMULI = (random_enable,)

globals().update(cocotb_tests(STIMULI))
