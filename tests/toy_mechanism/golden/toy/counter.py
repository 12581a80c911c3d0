"""Golden model of ``toy.counter``."""

from gpurf.golden.model import PortModel
from gpurf.hw.toy import CounterConfig


class Counter(PortModel, config=CounterConfig):
    def reset(self):
        self.count = 0

    def step(self, inputs):
        shown = self.count
        if inputs["enable"]:
            self.count = (self.count + 1) % (1 << self.config.width)
        return {"count": shown}
