"""Cost report of the toy mechanism: the counter's synthesis."""

from gpurf.hw.registry import get_block
from gpurf.synth.flow import synthesize
from gpurf.synth.report import markdown_table


def cost_report():
    return markdown_table([synthesize(get_block("toy.counter"))])
