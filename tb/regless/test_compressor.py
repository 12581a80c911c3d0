"""cocotb bench of ``regless.compressor`` against its golden model.

The stimulus plays the OSU (requests, response ``ready``) and L1: a golden memory of
compressed lines that takes write-backs and answers fetches after a random latency, with a
random ``ready``. Values come from the patterns, their near misses (one lane off) and
random data, on a register pool a little larger than the internal store covers, so hits,
refills and dirty write-backs are all frequent.
"""

from gpurf.golden.regless.compressor import PATTERNS, expand
from gpurf.hw.regless.configs import CompressorConfig
from gpurf.hw.regless.layouts import CompressorOp, PatternState
from gpurf.tb.harness import cocotb_tests

__all__ = ["STIMULI", "directed_values"]


def directed_values(lanes: int, data_width: int, rng) -> list[tuple[list[int], PatternState]]:
    """``(value, expected state)`` cases: every pattern and half-warp variant (also with
    bases that wrap around ``2**data_width``; a half-warp pair of bases that would make
    the full-warp pattern is moved by one), values matching two patterns (the first wins)
    and, per pattern, a near miss in every lane position."""
    top = (1 << data_width) - 1
    cases = []
    for state, stride, halves in PATTERNS:
        for b0, b1 in ((rng.randrange(top + 1), rng.randrange(top + 1)),
                       (top - 2, top), (top, top - 5)):
            if b1 == (b0 + stride * (lanes // 2)) & top:
                b1 = (b1 + 1) & top
            value = expand(state, b0, b1 if halves else 0, lanes, data_width)
            cases.append((value, state))
    cases.append((expand(PatternState.STRIDE1, 7, 0, lanes, data_width),
                  PatternState.STRIDE1))
    cases.append((expand(PatternState.HALF_STRIDE1, 7, 7 + lanes // 2, lanes, data_width),
                  PatternState.STRIDE1))
    cases.append((expand(PatternState.HALF_STRIDE4, top, (top + 2 * lanes) & top, lanes,
                         data_width), PatternState.STRIDE4))
    for state, _, _ in PATTERNS:
        base = expand(state, rng.randrange(top + 1), rng.randrange(top + 1), lanes, data_width)
        for lane in range(lanes):
            value = list(base)
            value[lane] = (value[lane] + rng.randrange(1, top + 1)) & top
            cases.append((value, PatternState.NONE))
    return cases


class Bench:
    """Request issue, response acceptance and the L1 stand-in, one cycle at a time."""

    def __init__(self, params, rng, *, p_ready=0.7, max_latency=6, p_overlap=0.6):
        self.config = CompressorConfig(**params)
        self.ports = self.config.codecs
        self.rng, self.p_ready, self.max_latency = rng, p_ready, max_latency
        self.p_overlap = p_overlap
        """How often the next request is offered while the previous one waits for its
        answer (the compressor takes it in the cycle that answer is taken)."""
        self.memory: dict[int, int] = {}
        self.reads: list[list[int]] = []
        """Fetches accepted and not answered: ``[line, cycles left]``."""
        self.request = None
        self.waiting = False
        self.evicted: dict[int, list[int]] = {}

    def line(self, number: int) -> int:
        if number not in self.memory:
            self.memory[number] = self.rng.getrandbits(self.config.line_bits)
        return self.memory[number]

    def cycle(self) -> dict:
        rng = self.rng
        ports = {"response__ready": int(rng.random() < self.p_ready),
                 "l1_request__ready": int(rng.random() < self.p_ready)}
        if self.request is not None:
            op, warp, reg, value = self.request
            ports["request__valid"] = 1
            ports["request__payload"] = self.ports["request__payload"].pack(
                {"op": op, "warp": warp, "reg": reg, "value": value})
        else:
            ports["request__payload"] = rng.getrandbits(self.ports["request__payload"].width)
        if self.reads and self.reads[0][1] <= 0:
            ports["l1_response__valid"] = 1
            ports["l1_response__payload"] = self.line(self.reads[0][0])
        return ports

    def after(self, ports: dict, outputs: dict) -> None:
        """Take the handshakes of the cycle."""
        if outputs["response__valid"] and ports["response__ready"]:
            self.waiting = False
        if ports.get("request__valid") and outputs["request__ready"]:
            self.request, self.waiting = None, True
        if outputs["l1_request__valid"] and ports["l1_request__ready"]:
            request = self.ports["l1_request__payload"].unpack(outputs["l1_request__payload"])
            if request.write:
                self.memory[request.line] = self.ports["l1_response__payload"].pack(request.data)
            else:
                self.reads.append([request.line, self.rng.randrange(self.max_latency)])
        if ports.get("l1_response__valid") and outputs["l1_response__ready"]:
            self.reads.pop(0)
        for read in self.reads:
            read[1] -= 1

    def offers_next(self) -> bool:
        """Whether to offer the next request this cycle: nothing is offered, and the
        previous request was answered or the bench overlaps them this time."""
        return self.request is None and (not self.waiting
                                         or self.rng.random() < self.p_overlap)

    def run(self, requests, limit=None):
        """Issue ``requests`` (``(op, warp, reg, lanes)``) one after the other."""
        requests, cycles = iter(requests), 0
        while limit is None or cycles < limit:
            if self.offers_next():
                self.request = next(requests, None)
                if self.request is None and not self.waiting:
                    return
            ports = self.cycle()
            outputs = yield ports
            self.after(ports, outputs)
            cycles += 1


def _registers(config, rng, count):
    return [(rng.randrange(config.warps), rng.randrange(config.regs)) for _ in range(count)]


def random_stream(params, rng, cycles):
    """Random evictions (pattern, near-miss and random values), preloads and invalidates
    over a pool of registers spanning more compressed lines than the store holds."""
    bench = Bench(params, rng)
    config = bench.config
    pool = _registers(config, rng, config.slots * (config.lines + 2) + 4)
    cases = directed_values(config.lanes, config.data_width, rng)
    matching = [value for value, state in cases if state != PatternState.NONE]
    missing = [value for value, state in cases if state == PatternState.NONE]

    def value():
        kind = rng.random()
        if kind < 0.55:
            return rng.choice(matching)
        if kind < 0.8:
            return rng.choice(missing)
        return [rng.getrandbits(config.data_width) for _ in range(config.lanes)]

    def requests():
        while True:
            warp, reg = rng.choice(pool)
            kind = rng.random()
            if kind < 0.45:
                yield CompressorOp.EVICT, warp, reg, value()
            elif kind < 0.9:
                yield CompressorOp.PRELOAD, warp, reg, [0] * config.lanes
            else:
                op = rng.choice((CompressorOp.INVALIDATE, CompressorOp.RESERVED))
                yield op, warp, reg, [0] * config.lanes

    yield from bench.run(requests(), limit=cycles)


def directed_patterns(params, rng, cycles):
    """Every directed value evicted into a register and preloaded back, each request offered
    while the previous one waits (the preload is taken in the cycle the eviction is
    answered, so its check must see the eviction's bit), then the last registers again in
    reverse order; registers are spread over the compressed lines, so
    lines are replaced (dirty ones written back) and refilled."""
    bench = Bench(params, rng, p_ready=1.0, max_latency=2, p_overlap=1.0)
    config = bench.config
    cases = directed_values(config.lanes, config.data_width, rng)
    step = 2 * config.slots + 1
    spread = [k * step % config.registers for k in range(len(cases))]
    used = [(g % config.warps, g // config.warps) for g in spread]
    requests = []
    for (warp, reg), (value, _) in zip(used, cases, strict=True):
        requests += [(CompressorOp.EVICT, warp, reg, value),
                     (CompressorOp.PRELOAD, warp, reg, [0] * config.lanes)]
    requests += [(CompressorOp.PRELOAD, warp, reg, [0] * config.lanes)
                 for warp, reg in reversed(used[-config.slots * (config.lines + 1):])]
    yield from bench.run(requests)


STIMULI = (random_stream, directed_patterns)

globals().update(cocotb_tests(STIMULI))
