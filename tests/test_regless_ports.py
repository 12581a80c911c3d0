"""Directed cases of the golden shard's port rules in the fast RegLess model
(``gpurf.sim.sm.regless_ports``); the kernels' agreement with the golden shard itself is
``tests/test_sm_regless_exact.py``."""

import pytest

from gpurf.sim.sm import regless_ports
from gpurf.sim.sm.regless_ports import PORTS, Request, ShardPortTiming
from gpurf.sim.sm.regless_transfer import TransferTiming


class _Owner:
    """Records what the ports report to the fast model."""

    def __init__(self):
        self.cycles, self.entries, self.displaced_lines = [], [], []

    def port_cycle(self, shard, cycle, issue, written, fake):
        self.cycles.append((cycle, None if issue is None else issue.slot, written, fake))

    def entry_taken(self, shard, entry, cycle, hit):
        self.entries.append((entry[0], cycle))

    def displaced(self, shard, owner, dirty, cycle):
        self.displaced_lines.append((owner, dirty, cycle))

    def written_back(self, shard, owner, cycle, *, data):
        self.displaced_lines.append((owner, "written back", cycle))


def _ports():
    owner = _Owner()
    return ShardPortTiming(owner, None, 8), owner


def _taken_at(ports, requests, cycles=6):
    """The cycle each request was taken (``None``: never in ``cycles`` cycles)."""
    at = {}
    for cycle in range(cycles):
        ports.step(cycle)
        for request in requests:
            if request.taken and id(request) not in at:
                at[id(request)] = cycle
    return [at.get(id(request)) for request in requests]


def _write(ports, slot, reg, due, *, written=True):
    reserve = ports.add(Request("reserve", slot, reg, 0, (slot + reg) % 8))
    write = ports.add(Request("write", slot, reg, due, (slot + reg) % 8))
    issue = ports.add(Request("issue", slot, -1, 0, 0))
    issue.info = (None, True, (slot + reg) % 8, False)
    write.reserve, write.issue, write.written = reserve, issue, written
    return reserve, write, issue


def test_port_counts_are_two_instructions_worth():
    assert PORTS == {"read": 4, "reserve": 2, "write": 2, "release": 4}


def test_a_write_goes_before_a_read_of_its_bank():
    ports, _ = _ports()
    _, write, _ = _write(ports, 0, 1, 2)
    read = ports.add(Request("read", 1, 0, 2, 1))
    assert _taken_at(ports, [write, read]) == [2, 3]


def test_tag_port_order_read_reserve_queue_release():
    ports, owner = _ports()
    read = ports.add(Request("read", 0, 3, 0, 3))
    release = ports.add(Request("release", 1, 2, 0, 3))
    reserve = ports.add(Request("reserve", 2, 1, 0, 3))
    ports.queues[3].append((0, ("entry", 0, 4, False, None)))
    assert _taken_at(ports, [read, reserve, release]) == [0, 1, 3]
    assert owner.entries == [("entry", 2)]


def test_only_the_lowest_port_of_a_bank_is_granted():
    ports, _ = _ports()
    reads = [ports.add(Request("read", slot, 5 - slot, 0, 5)) for slot in range(3)]
    other = ports.add(Request("read", 0, 1, 0, 1))
    assert _taken_at(ports, [*reads, other]) == [0, 1, 2, 0]


def test_ports_per_kind_are_handed_out_in_order():
    ports, _ = _ports()
    reads = [ports.add(Request("read", 0, reg, 0, reg)) for reg in range(6)]
    assert _taken_at(ports, reads) == [0, 0, 0, 0, 1, 1]


def test_requests_of_one_register_keep_their_order():
    ports, _ = _ports()
    read = ports.add(Request("read", 0, 4, 1, 4))
    release = ports.add(Request("release", 0, 4, 0, 4))
    assert _taken_at(ports, [read, release]) == [1, 2]


def test_an_issue_waits_for_its_requests_and_a_write_for_its_issue():
    ports, owner = _ports()
    reserve, write, issue = _write(ports, 2, 3, 0)
    assert _taken_at(ports, [reserve, issue, write]) == [0, 1, 2]
    assert [c for c in owner.cycles if c[1] is not None] == [(1, 2, None, None)]
    assert (3, None, (2, 5), None) in owner.cycles


def test_written_reports_one_per_cycle_in_offer_order():
    ports, owner = _ports()
    first = _write(ports, 0, 1, 3)[1]
    second = _write(ports, 1, 1, 3)[1]
    assert _taken_at(ports, [first, second]) == [3, 3]
    assert [c[2] for c in owner.cycles if c[2] is not None] == [(0, 1), (1, 2)]
    assert [c[0] for c in owner.cycles if c[2] is not None] == [4, 5]


def test_invalidations_wait_for_the_fetch_register_lowest_bank_first():
    ports, owner = _ports()
    for bank in (4, 2, 4):
        ports.queues[bank].append((0, (f"b{bank}", 0, bank, True, None)))
    for cycle in range(4):
        ports.step(cycle)
    assert owner.entries == [("b2", 0), ("b4", 0), ("b4", 2)]


def test_an_empty_region_drains_in_a_cycle_no_instruction_issues():
    ports, owner = _ports()
    ports.fake.append((7, 1))
    issue = ports.add(Request("issue", 0, -1, 1, 0))
    issue.info = (None, False, 0, False)
    for cycle in range(4):
        ports.step(cycle)
    assert [c for c in owner.cycles if c[3] is not None] == [(2, None, None, 7)]


def _fill_bank(ports, places, order=None):
    """Bank 0's lines in ``places`` (``"clean"`` / ``"dirty"``), line ``k`` holding
    register ``8 * k`` of slot 0 owned by ``("r", 8 * k)``: all reserved, then released in
    ``order`` (line indices; default by index)."""
    for k in range(len(places)):
        ports.add(Request("reserve", 0, 8 * k, ports.time, 0, owner=("r", 8 * k)))
        ports.step(ports.time)
    for k in order or range(len(places)):
        line = ports.lines[0][k]
        line.written = places[k] == "dirty"
        release = ports.add(Request("release", 0, 8 * k, ports.time, 0, owner=("r", 8 * k)))
        ports.step(ports.time)
        assert release.taken and line.place == places[k]


def _reserve_in_bank0(ports, reg=64):
    return ports.add(Request("reserve", 0, reg, ports.time, 0, owner=("new", reg)))


def test_a_reserve_takes_the_first_free_line_by_index():
    owner = _Owner()
    ports = ShardPortTiming(owner, None, 8, 3)
    _fill_bank(ports, ["dirty", "clean"])
    reserve = _reserve_in_bank0(ports)
    ports.step(ports.time)
    assert reserve.taken and ports.where[0][(0, 64)] == 2 and not owner.displaced_lines


def test_a_reserve_drops_the_first_clean_line_by_index_not_the_oldest():
    """``allocation_choice``: no free line, so the first clean one by index (line 1), not
    the one released first (line 2) nor a dirty one (line 0)."""
    _drops_first_clean()


def test_an_oldest_first_line_choice_is_caught(monkeypatch):
    """The fast model's session-12 choice (clean lines in release order) fails the test."""
    def oldest_clean(lines):
        clean = [k for k, line in enumerate(lines) if line.place == "clean"]
        return ("take", clean[-1]) if clean else None

    monkeypatch.setattr(regless_ports, "allocation_choice", oldest_clean)
    with pytest.raises(AssertionError):
        _drops_first_clean()


def _drops_first_clean():
    owner = _Owner()
    ports = ShardPortTiming(owner, None, 8, 3)
    _fill_bank(ports, ["dirty", "clean", "clean"], order=[2, 0, 1])
    reserve = _reserve_in_bank0(ports)
    ports.step(ports.time)
    assert reserve.taken and ports.where[0][(0, 64)] == 1
    assert [(o, d) for o, d, _ in owner.displaced_lines] == [(("r", 8), False)]


def _evicting_reserve(*, fetch_at=None):
    """Bank 0 holds only dirty lines; a reserve of a new register: the cycle it is taken,
    relative to the cycle it was offered, and the lines' reports (relative cycles)."""
    owner = _Owner()
    ports = ShardPortTiming(owner, None, 8, 2)
    _fill_bank(ports, ["dirty", "dirty"])
    start = ports.time
    reserve = _reserve_in_bank0(ports)
    for _ in range(6):
        if ports.time - start == fetch_at:
            ports.fetch[5] = True
        if not reserve.taken:
            ports.step(ports.time)
    reports = [(o, what, cycle - start) for o, what, cycle in owner.displaced_lines]
    return ports.time - 1 - start, reports


def test_a_reserve_finding_only_dirty_lines_waits_for_the_eviction():
    """``OsuBank.advance``: the first dirty line is chosen (cycle 0), read out on the data
    port (1), offered on ``writeback`` and taken (2: clean), then reserved (3)."""
    taken, reports = _evicting_reserve()
    assert taken == 3
    assert reports == [(("r", 0), "written back", 2), (("r", 0), False, 3)]


def test_a_writeback_waits_while_a_fetch_register_is_full():
    """The transfer unit takes fetches first: a full fetch register delays the offer."""
    assert _evicting_reserve(fetch_at=2)[0] == 4


def test_an_eviction_at_once_is_caught(monkeypatch):
    """Session 12's fast model evicted a dirty line in the reserve's own cycle."""
    def dirty_taken(lines):
        return next((("take", k) for k, line in enumerate(lines) if line.place != "used"),
                    None)

    monkeypatch.setattr(regless_ports, "allocation_choice", dirty_taken)
    with pytest.raises(AssertionError):
        test_a_reserve_finding_only_dirty_lines_waits_for_the_eviction()


PARAMS = {"lines": 128, "banks": 8, "warps": 16, "regs": 64, "lanes": 32, "data_width": 32,
          "compressor_lines": 16, "max_entries": 64, "instructions": 2}
"""A gtx980 shard's parameters (``regless_exact.shard_params`` at 512 entries)."""


class _Filling(_Owner):
    def __init__(self):
        super().__init__()
        self.fills = []

    def filled(self, shard, entry, cycle):
        self.fills.append((entry[0], cycle))

    def line_values(self, key):
        return None


def _preload_miss(latency: int):
    """A preload of an uncompressed register missing in the OSU, its L1 read answered
    ``latency`` cycles after it is served: the cycles it is taken and filled."""
    owner = _Filling()
    transfer = TransferTiming(PARAMS, lambda now, kind, key, op: now + latency)
    ports = ShardPortTiming(owner, None, 8, 16, transfer)
    ports.queues[0].append((0, ("p", 0, 0, False, ("k", 0))))
    for cycle in range(latency + 12):
        ports.step(cycle)
    return owner.entries, owner.fills


def test_a_preload_miss_is_filled_by_the_transfer_unit_after_the_l1_latency():
    """Taken in cycle 0 (its fetch register full at the edge), the fetch is offered and
    taken by the transfer unit (1), offered to the compressor (2), answered uncompressed
    (3), sent to L1 (4), answered after the latency and filled the cycle after."""
    for latency in (10, 20):
        assert _preload_miss(latency) == ([("p", 0)], [("p", latency + 5)])


def test_the_transfer_unit_counts_its_miss_path_and_is_idle_after_it():
    """One preload miss with an L1 latency of 10: the transfer unit is idle before and after
    (its ``IDLE`` phase is an enum member, true as a bool: ``idle`` compares it), and its
    miss-path counters (``MISS_PATH``) see one L1 read, its offer cycle, the cycles it
    waits for the line and one fill."""
    owner = _Filling()
    transfer = TransferTiming(PARAMS, lambda now, kind, key, op: now + 10)
    assert transfer.idle()
    ports = ShardPortTiming(owner, None, 8, 16, transfer)
    ports.queues[0].append((0, ("p", 0, 0, False, ("k", 0))))
    for cycle in range(22):
        ports.step(cycle)
    counts = transfer.counts
    assert owner.fills == [("p", 15)]
    assert transfer.idle()
    assert (counts["miss_reads"], counts["miss_read_latency"], counts["miss_refills"]) == \
        (1, 10, 0)
    assert (counts["miss_l1"], counts["miss_l1_read"], counts["miss_l1_wait"],
            counts["miss_fill"]) == (1, 1, 10, 1)
    assert counts["miss_cycles"] == 15
