// The timing loop of gpurf.sim.sm.timing.TimingSM, compiled, for the baseline SM only (golden
// blocks, GTO, RBA or LRR, no mechanism hooks). It makes the decisions of the Python fast path
// (_SubCore.fast_cycle and what it calls) cycle by cycle, on typed state: per sub-core its warp
// slots, collector units and bank queues, scorer history and writeback masks; per warp its
// trace, scoreboard and pending reads, the scoreboard keys and read registers numbered densely.
// sim/sm/timing_core.py builds it with g++ and drives it through ctypes: the static tables once,
// the traces a cohort of blocks at a time, the statistics once at the end.
//
// GPURF_MUTANT (compile-time, tests only): 1 breaks RBA's tie to the oldest warp (to the
// youngest); 2 makes GTO ignore its greedy warp.

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <queue>
#include <vector>

namespace {

using i64 = int64_t;
constexpr i64 INF = INT64_MAX / 4;
constexpr int UNITS = 5, MEM = 3;
enum Kind { ALU = 0, BRA = 1, EXIT = 2, BAR = 3 };
enum Policy { GTO = 0, RBA = 1, LRR = 2 };
enum Reason { NO_WARP = 0, BARRIER = 1, SCOREBOARD = 2, COLLECTOR_FULL = 3 };
enum Space { OTHER = 0, PARAM = 1, SHARED = 2 };
enum Status { DONE = 0, NEED_BLOCKS = 1, DOES_NOT_FIT = 2, STUCK = 3 };
constexpr i64 WRITE_RING = 4096;  // writeback masks due within this many cycles: a ring

// Configuration: the int64 array timing_core.py packs, in this order.
enum Cfg {
  C_SUBCORES, C_SLOTS, C_BANKS, C_CUS, C_OPERANDS, C_READ_LATENCY, C_SWIZZLE, C_POLICY,
  C_RBA_GREEDY, C_SCORE_LATENCY, C_SCORE_MAX, C_MAX_BLOCKS, C_MAX_WARPS, C_REGISTERS,
  C_SHARED, C_WARP_REGS, C_BLOCK_SHARED, C_LATENCY, C_CONST_AFTER = C_LATENCY + UNITS,
  C_SHARED_AFTER, C_HIT_AFTER, C_MISS_AFTER, C_INTERVAL,
  C_L1_SETS = C_INTERVAL + UNITS, C_L1_WAYS, C_L1_ENABLED, C_KEYS, C_REGS, C_COUNT
};

// Compressed rows: row i is val[off[i]:off[i+1]].
struct Rows {
  std::vector<int32_t> off, val;
  const int32_t* begin(int i) const { return val.data() + off[i]; }
  const int32_t* end(int i) const { return val.data() + off[i + 1]; }
  int size(int i) const { return off[i + 1] - off[i]; }
};

struct Reader {
  const int32_t* at;
  std::vector<int32_t> next() {
    int32_t n = *at++;
    std::vector<int32_t> out(at, at + n);
    at += n;
    return out;
  }
  Rows rows() {
    Rows r;
    r.off = next();
    r.val = next();
    return r;
  }
};

struct Post {
  int32_t bank, reg;  // reg: dense read-register number
};

struct Warp {
  std::vector<int32_t> pcs, rec_n;
  std::vector<i64> rec_line;  // per record its first line (and the end)
  std::vector<uint64_t> lines;
  std::vector<i64> pending;      // per scoreboard key: cycle its write completes (0: none)
  std::vector<int32_t> reading;  // per read register: reads issued and not yet made
  i64 hold = 0, wake = 0, done_at = -1;
  int32_t pos = 0, rpos = 0, sub = -1, slot = -1, block = -1, inflight = 0, nread = 0;
  bool at_bar = false, has_pending = false, retired = false;
};

struct Block {
  i64 id[3];
  std::vector<int32_t> warps, subs, arrived;
  int32_t live = 0, exited = 0;
  i64 last = 0;
};

struct Event {
  i64 finish, id0, id1, id2;
  int32_t block;
  bool operator>(const Event& o) const {
    if (finish != o.finish) return finish > o.finish;
    if (id0 != o.id0) return id0 > o.id0;
    if (id1 != o.id1) return id1 > o.id1;
    return id2 > o.id2;
  }
};

struct Unit {
  bool busy = false;
  int32_t warp = 0, pc = 0, rpos = 0, waiting = 0;
  i64 ready_at = 0;
  const Post* posts = nullptr;
};

struct Sub {
  int index = 0;
  std::vector<int32_t> slots, order, age;
  uint64_t live = 0;  // slots whose warp has instructions left to issue
  i64 soonest = 0, lag = 0;
  int32_t greedy = -1, last = -1, reason = NO_WARP;
  i64 issued = 0, stalls[4] = {0, 0, 0, 0}, conflicts = 0, reads = 0, dispatch_stalls = 0;
  // operand collector
  std::vector<Unit> units;
  std::vector<int32_t> cu_order;
  std::vector<int32_t> qhead, qlen;
  std::vector<std::pair<int32_t, int32_t>> qbuf;  // per bank a ring of (cu, read register)
  int32_t qcap = 0, held = -1;
  i64 queued = 0, oc_cycle = 0;
  bool buf_valid = false;
  int32_t buf_slot = 0, buf_warp = 0, buf_pc = 0, buf_rpos = 0;
  // RBA scorer
  std::vector<int32_t> slot_ops, prev_ops, basis_ops;  // per slot: pc * slots + slot, or -1
  bool prev_none = true;
  std::vector<int32_t> hist;  // score_latency queue-length vectors, oldest at hist_head
  int32_t hist_head = 0;
  // writebacks: cycle -> mask of banks
  std::vector<i64> ring_cycle;
  std::vector<int32_t> ring_mask;
  std::map<i64, int32_t> far;
  i64 unit_free[UNITS] = {0, 0, 0, 0, 0};
};

struct Core {
  i64 cfg[C_COUNT];
  int S = 0, banks = 0, cus = 0, policy = 0, L = 0;
  std::vector<int32_t> unit_of, kind, space, records, loads, stages;
  std::vector<int32_t> alu_after;  // -1: not an ALU instruction of a non-memory unit
  Rows needs, dests, reads, uncollected, overwrites, collected, writes;
  std::vector<int32_t> write_mask;  // per pc * slots + slot
  std::vector<Post> posts;          // per pc * slots + slot: `operands` entries
  std::vector<int32_t> nposts;
  // L1
  std::vector<uint64_t> l1_lines;
  std::vector<int32_t> l1_count;
  i64 l1_free = 0, l1_hits = 0, l1_misses = 0, l1_requests = 0, l1_wait = 0;
  // SM
  std::vector<Sub> subs;
  std::vector<Warp> warps;
  std::vector<int32_t> free_warps;
  std::vector<Block> blocks;
  std::deque<int32_t> ready;  // blocks run functionally, not yet admitted
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  i64 used_blocks = 0, used_warps = 0, used_regs = 0, used_shared = 0;
  i64 now = 0, total = 0, admitted = 0, done = 0, misfit = 0;
  bool admit_pending = true;

  int bank_of(int reg, int slot) const {
    return cfg[C_SWIZZLE] ? (reg + slot) % banks : reg % banks;
  }

  // -- L1 ------------------------------------------------------------------------------
  i64 serve(i64 at) {
    i64 t = std::max(at + 1, l1_free);
    l1_wait += t - at - 1;
    l1_free = t + 1;
    l1_requests++;
    return t;
  }

  bool lookup(uint64_t line, bool allocate) {
    if (!cfg[C_L1_ENABLED]) {
      l1_misses++;
      return false;
    }
    i64 ways = cfg[C_L1_WAYS];
    uint64_t set = line % (uint64_t)cfg[C_L1_SETS];
    uint64_t* entries = l1_lines.data() + set * ways;  // least recently used first
    int32_t& count = l1_count[set];
    for (int i = 0; i < count; i++) {
      if (entries[i] == line) {
        std::copy(entries + i + 1, entries + count, entries + i);
        entries[count - 1] = line;
        l1_hits++;
        return true;
      }
    }
    l1_misses++;
    if (allocate) {
      if (count == ways) {
        std::copy(entries + 1, entries + count, entries);
        count--;
      }
      entries[count++] = line;
    }
    return false;
  }

  i64 memory(Warp& w, int pc, int request, i64 at) {
    if (space[pc] == PARAM) return at + cfg[C_CONST_AFTER];
    if (space[pc] == SHARED) {
      i64 t = at;
      for (int i = 0; i < w.rec_n[request]; i++) t = serve(at);
      return t + cfg[C_SHARED_AFTER];
    }
    bool load = loads[pc];
    i64 t = at;
    for (i64 k = w.rec_line[request]; k < w.rec_line[request + 1]; k++) {
      i64 s = serve(at);
      s += lookup(w.lines[k], load) ? cfg[C_HIT_AFTER] : cfg[C_MISS_AFTER];
      if (s > t) t = s;
    }
    return t;
  }

  // -- writebacks ----------------------------------------------------------------------
  void add_write(Sub& s, i64 when, int32_t mask) {
    if (when - now < WRITE_RING) {
      i64 k = when & (WRITE_RING - 1);
      if (s.ring_cycle[k] == when) {
        s.ring_mask[k] |= mask;
      } else {
        s.ring_cycle[k] = when;
        s.ring_mask[k] = mask;
      }
    } else {
      s.far[when] |= mask;
    }
  }

  int32_t pop_writes(Sub& s, i64 at) {
    int32_t mask = 0;
    i64 k = at & (WRITE_RING - 1);
    if (s.ring_cycle[k] == at) {
      mask = s.ring_mask[k];
      s.ring_cycle[k] = -1;
    }
    while (!s.far.empty() && s.far.begin()->first <= at) {
      if (s.far.begin()->first == at) mask |= s.far.begin()->second;
      s.far.erase(s.far.begin());
    }
    return mask;
  }

  void forget_writes(Sub& s, i64 before) {
    while (!s.far.empty() && s.far.begin()->first < before) s.far.erase(s.far.begin());
  }

  // -- warps ---------------------------------------------------------------------------
  bool finished(const Warp& w) const { return w.pos >= (int32_t)w.pcs.size(); }

  // A register the next instruction writes is still to be read (write-after-read).
  bool war(const Warp& w) const {
    if (!w.nread) return false;
    int pc = w.pcs[w.pos];
    for (const int32_t* r = overwrites.begin(pc); r != overwrites.end(pc); r++)
      if (w.reading[*r]) return true;
    return false;
  }

  i64 wake_of(const Warp& w, int pc) const {
    i64 t = w.hold;
    if (t != INF)
      for (const int32_t* k = needs.begin(pc); k != needs.end(pc); k++)
        if (w.pending[*k] > t) t = w.pending[*k];
    return t;
  }

  void update_wake(Warp& w) {  // _Warp.update_wake
    if (finished(w)) {
      w.wake = INF;
      return;
    }
    i64 t = w.has_pending ? wake_of(w, w.pcs[w.pos]) : w.hold;
    w.wake = t;
    Sub& s = subs[w.sub];
    if (t < s.soonest) s.soonest = t;
  }

  void unread(Warp& w, const int32_t* begin, const int32_t* end) {
    for (const int32_t* r = begin; r != end; r++)
      if (!--w.reading[*r]) w.nread--;
  }

  int32_t new_warp() {
    if (free_warps.empty()) {
      warps.emplace_back();
      Warp& w = warps.back();
      w.pending.assign(cfg[C_KEYS], 0);
      w.reading.assign(cfg[C_REGS], 0);
      return (int32_t)warps.size() - 1;
    }
    int32_t id = free_warps.back();
    free_warps.pop_back();
    return id;
  }

  void release(int32_t id) {  // back to the pool, scoreboard and reads cleared
    Warp& w = warps[id];
    std::fill(w.pending.begin(), w.pending.end(), 0);
    std::fill(w.reading.begin(), w.reading.end(), 0);
    w.pcs.clear();
    w.rec_n.clear();
    w.rec_line.clear();
    w.lines.clear();
    w.hold = w.wake = 0;
    w.done_at = -1;
    w.pos = w.rpos = w.inflight = w.nread = 0;
    w.sub = w.slot = w.block = -1;
    w.at_bar = w.has_pending = w.retired = false;
    free_warps.push_back(id);
  }

  // -- blocks --------------------------------------------------------------------------
  void release_barrier(Block& b) {  // TimingSM._release
    if (!b.arrived.empty() && (int32_t)b.arrived.size() >= b.live) {
      for (int32_t id : b.arrived) {
        Warp& w = warps[id];
        w.hold = b.last;
        w.at_bar = false;
        update_wake(w);
      }
      b.arrived.clear();
      b.last = 0;
    }
  }

  void arrive(Warp& w, i64 when) {
    Block& b = blocks[w.block];
    b.arrived.push_back((int32_t)(&w - warps.data()));
    b.last = std::max(b.last, when);
    release_barrier(b);
  }

  void exit_warp(Warp& w, i64 when) {
    Block& b = blocks[w.block];
    b.live--;
    w.done_at = when;
    release_barrier(b);
    retire_warp(w);
  }

  void retire_warp(Warp& w) {  // TimingSM._retire_warp
    if (w.has_pending) {
      i64 most = *std::max_element(w.pending.begin(), w.pending.end());
      if (most == INF) return;
      w.done_at = std::max(w.done_at, most);
      std::fill(w.pending.begin(), w.pending.end(), 0);
      w.has_pending = false;
    }
    Block& b = blocks[w.block];
    b.exited++;
    if (b.exited == (int32_t)b.warps.size()) {
      i64 finish = 0;
      for (int32_t id : b.warps) finish = std::max(finish, warps[id].done_at);
      events.push({finish, b.id[0], b.id[1], b.id[2], (int32_t)(&b - blocks.data())});
    }
  }

  // -- slots ---------------------------------------------------------------------------
  void ages(Sub& s) {
    int n = (int)s.order.size();
    for (int k = 0; k < n; k++) s.age[s.order[k]] = n - 1 - k;
  }

  void refresh(Sub& s, int slot) {
    if (policy != RBA) return;
    int32_t id = s.slots[slot];
    s.slot_ops[slot] = (id < 0 || finished(warps[id])) ? -1
                                                        : warps[id].pcs[warps[id].pos] * S + slot;
  }

  void advance_scorer(Sub& s, const int32_t* queue_len) {  // RbaScorer.advance's clock edge
    if (!L) return;
    std::copy(queue_len, queue_len + banks, s.hist.begin() + s.hist_head * banks);
    s.hist_head = (s.hist_head + 1) % L;
    s.prev_ops = s.slot_ops;
    s.prev_none = false;
  }

  void catch_up(Sub& s) {  // _SubCore.catch_up: idle cycles the scorer missed
    if (policy == RBA && s.lag) {
      std::vector<int32_t> zeros(banks, 0);
      for (i64 i = 0; i < std::min<i64>(s.lag, L + 1); i++) advance_scorer(s, zeros.data());
    }
    s.lag = 0;
  }

  void place(Sub& s, int32_t id, int slot) {
    catch_up(s);
    Warp& w = warps[id];
    w.slot = slot;
    w.sub = s.index;
    s.slots[slot] = id;
    s.order.push_back(slot);
    s.live |= uint64_t(1) << slot;
    ages(s);
    refresh(s, slot);
  }

  void free_slot(Sub& s, Warp& w) {
    catch_up(s);
    s.slots[w.slot] = -1;
    s.order.erase(std::find(s.order.begin(), s.order.end(), w.slot));
    ages(s);
    refresh(s, w.slot);
  }

  bool fits(const Block& b) {
    i64 n = (i64)b.warps.size();
    if (used_blocks + 1 > cfg[C_MAX_BLOCKS] || used_warps + n > cfg[C_MAX_WARPS] ||
        used_regs + cfg[C_WARP_REGS] * n > cfg[C_REGISTERS] ||
        used_shared + cfg[C_BLOCK_SHARED] > cfg[C_SHARED])
      return false;
    for (Sub& s : subs) {
      i64 want = std::count(b.subs.begin(), b.subs.end(), s.index);
      i64 have = std::count(s.slots.begin(), s.slots.end(), -1);
      if (want > have) return false;
    }
    return true;
  }

  // TimingSM._admit; false when it needs the next cohort of blocks.
  bool admit() {
    while (admitted < total) {
      if (ready.empty()) return false;
      Block& b = blocks[ready.front()];
      if (!fits(b)) {
        if (used_blocks == 0) misfit = (i64)b.warps.size();
        return true;
      }
      ready.pop_front();
      for (size_t k = 0; k < b.warps.size(); k++) {
        Sub& s = subs[b.subs[k]];
        int slot = (int)(std::find(s.slots.begin(), s.slots.end(), -1) - s.slots.begin());
        Warp& w = warps[b.warps[k]];
        place(s, b.warps[k], slot);
        w.wake = now;
        update_wake(w);
      }
      used_blocks++;
      used_warps += (i64)b.warps.size();
      used_regs += cfg[C_WARP_REGS] * (i64)b.warps.size();
      used_shared += cfg[C_BLOCK_SHARED];
      admitted++;
      for (int32_t id : b.warps) {
        Warp& w = warps[id];
        if (w.pcs.empty()) {
          subs[w.sub].live &= ~(uint64_t(1) << w.slot);
          exit_warp(w, now);
        }
      }
    }
    return true;
  }

  void retire_block(Block& b) {  // TimingSM._retire
    for (int32_t id : b.warps) {
      Warp& w = warps[id];
      free_slot(subs[w.sub], w);
      w.retired = true;
      if (!w.inflight) release(id);  // else when its last instruction leaves the collector
    }
    used_blocks--;
    used_warps -= (i64)b.warps.size();
    used_regs -= cfg[C_WARP_REGS] * (i64)b.warps.size();
    used_shared -= cfg[C_BLOCK_SHARED];
  }

  // -- schedulers ----------------------------------------------------------------------
  int32_t gto_pick(Sub& s, i64 at) {  // _SubCore._gto_pick: a warp id or -1
    if (at < s.soonest) return -1;
#if GPURF_MUTANT != 2
    if (s.greedy >= 0) {
      int32_t id = s.slots[s.greedy];
      if (id >= 0 && warps[id].wake <= at && !war(warps[id])) return id;
    }
#endif
    i64 soonest = INF;
    for (int32_t slot : s.order) {
      int32_t id = s.slots[slot];
      const Warp& w = warps[id];
      if (w.wake <= at) {
        if (!war(w)) return id;
        soonest = at;
      } else if (w.wake < soonest) {
        soonest = w.wake;
      }
    }
    s.soonest = soonest;
    return -1;
  }

  // _SubCore._fast_ready: ready slots in ascending order into `out`; returns their count.
  int fast_ready(Sub& s, i64 at, int32_t* out) {
    if (at < s.soonest) return 0;
    int n = 0;
    for (uint64_t m = s.live; m; m &= m - 1) {
      int slot = __builtin_ctzll(m);
      const Warp& w = warps[s.slots[slot]];
      if (w.wake <= at && !war(w)) out[n++] = slot;
    }
    if (!n) {
      i64 soonest = INF;
      for (uint64_t m = s.live; m; m &= m - 1) {
        const Warp& w = warps[s.slots[__builtin_ctzll(m)]];
        if (w.wake <= at) return 0;
        soonest = std::min(soonest, w.wake);
      }
      s.soonest = soonest;
    }
    return n;
  }

  bool any_ready(Sub& s, i64 at) {
    if (at < s.soonest) return false;
    for (uint64_t m = s.live; m; m &= m - 1) {
      const Warp& w = warps[s.slots[__builtin_ctzll(m)]];
      if (w.wake <= at && !war(w)) return true;
    }
    return false;
  }

  int rba_pick(Sub& s, const int32_t* ready, int n, const int32_t* ops, bool none,
               const int32_t* queue_len) {
    i64 score_max = cfg[C_SCORE_MAX];
    int best = -1;
    i64 best_total = INF, best_age = -1;
    for (int i = 0; i < n; i++) {
      int slot = ready[i];
      i64 total = 0;
      if (!none && ops[slot] >= 0) {
        const Post* p = posts.data() + (i64)ops[slot] * cfg[C_OPERANDS];
        for (int k = 0; k < nposts[ops[slot]]; k++) total += queue_len[p[k].bank];
      }
      if (total > score_max) total = score_max;
#if GPURF_MUTANT == 1
      if (total < best_total || (total == best_total && s.age[slot] < best_age) ||
          best < 0) {
#else
      if (total < best_total || (total == best_total && s.age[slot] > best_age)) {
#endif
        best = slot;
        best_total = total;
        best_age = s.age[slot];
      }
    }
    return best;
  }

  int32_t lrr_pick(Sub& s, const int32_t* ready, int n) {
    if (!n) return -1;
    for (int i = 0; i < n; i++)
      if (ready[i] > s.last) return s.slots[ready[i]];
    return s.slots[ready[0]];
  }

  int stall_reason(const Sub& s) const {
    if (!s.live) return NO_WARP;
    for (uint64_t m = s.live; m; m &= m - 1)
      if (!warps[s.slots[__builtin_ctzll(m)]].at_bar) return SCOREBOARD;
    return BARRIER;
  }

  bool stall(Sub& s, i64 at) {
    pop_writes(s, at);
    s.lag++;
    s.reason = stall_reason(s);
    s.stalls[s.reason]++;
    return false;
  }

  // -- dispatch and issue --------------------------------------------------------------
  void dispatch(Sub& s, int32_t id, int pc, int request, i64 at) {
    Warp& w = warps[id];
    int unit = unit_of[pc];
    s.unit_free[unit] = at + cfg[C_INTERVAL + unit];
    if (kind[pc] != ALU) {  // TimingSM.dispatch of a branch, barrier or exit
      i64 t = (unit == MEM ? memory(w, pc, request, at) : at + cfg[C_LATENCY + unit]) +
              stages[pc];
      if (kind[pc] == BRA)
        w.hold = t;
      else if (kind[pc] == BAR)
        arrive(w, t);
      else
        exit_warp(w, t);
      if (w.done_at >= 0 && w.has_pending) retire_warp(w);
      update_wake(w);
    } else {  // _SubCore._fast_dispatch, inline part
      i64 t = alu_after[pc] >= 0 ? at + alu_after[pc] : memory(w, pc, request, at) + stages[pc];
      bool stale = w.wake == INF;
      for (const int32_t* d = dests.begin(pc); d != dests.end(pc); d++) {
        if (w.pending[*d] != INF) stale = true;
        w.pending[*d] = t;
        w.has_pending = true;
      }
      int32_t mask = write_mask[(i64)pc * S + w.slot];
      if (mask) add_write(s, t, mask);
      if (w.done_at >= 0 && w.has_pending) retire_warp(w);
      if (stale) {
        if (finished(w)) {
          w.wake = INF;
        } else {
          i64 wake = wake_of(w, w.pcs[w.pos]);
          w.wake = wake;
          if (wake < s.soonest) s.soonest = wake;
        }
      }
    }
    unread(w, uncollected.begin(pc), uncollected.end(pc));
    if (!--w.inflight && w.retired) release(id);
  }

  void issued(Sub& s, int32_t id, int pc) {  // _SubCore._fast_issued
    Warp& w = warps[id];
    for (const int32_t* r = reads.begin(pc); r != reads.end(pc); r++)
      if (!w.reading[*r]++) w.nread++;
    s.issued++;
    s.greedy = s.last = w.slot;
    w.pos++;
    if (records[pc]) w.rpos++;
    refresh(s, w.slot);
    for (const int32_t* d = dests.begin(pc); d != dests.end(pc); d++) {
      w.pending[*d] = INF;
      w.has_pending = true;
    }
    if (kind[pc] != ALU) {
      w.hold = INF;
      w.at_bar = kind[pc] == BAR;
    }
    if (finished(w)) {
      s.live &= ~(uint64_t(1) << w.slot);
      w.wake = INF;
    } else if (kind[pc] != ALU) {
      w.wake = INF;
    } else {
      i64 t = wake_of(w, w.pcs[w.pos]);
      w.wake = t;
      if (t < s.soonest) s.soonest = t;
    }
  }

  // -- one sub-core cycle (_SubCore.fast_cycle) ----------------------------------------
  bool cycle(Sub& s, i64 at) {
    int32_t ready[64];
    int nready = 0;
    int32_t chosen = -1;
    bool pending_pick = false;  // GTO: pick after this cycle's grants (fast_cycle's `False`)
    if (s.cu_order.empty() && !s.buf_valid) {
      if (policy == GTO) {
        chosen = at < s.soonest ? -1 : gto_pick(s, at);
        if (chosen < 0) return stall(s, at);
      } else if (!fast_ready(s, at, ready)) {
        return stall(s, at);
      }
    } else if (policy == GTO) {
      pending_pick = true;
    }
    if (s.lag) catch_up(s);
    int32_t wmask = pop_writes(s, at);
    int32_t offer = s.held;
    i64 oc_cycle = s.oc_cycle;
    if (offer < 0) {
      for (int32_t c : s.cu_order) {
        const Unit& u = s.units[c];
        if (!u.waiting && u.ready_at <= oc_cycle) {
          offer = c;
          break;
        }
      }
    }
    int32_t basis_q[8];  // the queue lengths and slot operands this cycle's scores are of
    bool basis_none = false;
    if (policy == RBA) {
      int32_t lengths[8];
      for (int b = 0; b < banks; b++) lengths[b] = s.qlen[b];
      if (!L) {
        std::copy(lengths, lengths + banks, basis_q);
      } else {
        std::copy(s.hist.begin() + s.hist_head * banks,
                  s.hist.begin() + (s.hist_head + 1) * banks, basis_q);
        basis_none = s.prev_none;
        s.basis_ops.swap(s.prev_ops);
        advance_scorer(s, lengths);
      }
    }
    if (s.queued) {  // grants, and the reads they make
      i64 due = oc_cycle + cfg[C_READ_LATENCY];
      int granted = 0;
      for (int b = 0; b < banks; b++) {
        if (s.qlen[b] && !(wmask >> b & 1)) {
          auto [cu, reg] = s.qbuf[b * s.qcap + s.qhead[b]];
          s.qhead[b] = (s.qhead[b] + 1) % s.qcap;
          s.qlen[b]--;
          Unit& u = s.units[cu];
          u.waiting--;
          u.ready_at = due;
          granted++;
          Warp& w = warps[u.warp];
          if (!--w.reading[reg]) w.nread--;
        }
      }
      if (granted) {
        s.queued -= granted;
        s.reads += granted;
        s.conflicts += s.queued;
      }
    }
    bool dispatching = false;
    if (offer >= 0) {
      dispatching = true;
      if (s.unit_free[unit_of[s.units[offer].pc]] > at) {
        dispatching = false;
        s.dispatch_stalls++;
      }
    }
    bool any_free = false;
    for (const Unit& u : s.units) any_free |= !u.busy;
    bool accepts = !s.buf_valid || dispatching || any_free;
    if (!accepts) {
      chosen = -1;
    } else if (policy != GTO) {
      nready = fast_ready(s, at, ready);
      if (policy == LRR) {
        chosen = lrr_pick(s, ready, nready);
      } else if (nready == 1) {
        chosen = s.slots[ready[0]];
      } else if (nready) {
        bool greedy_ready = false;
        for (int i = 0; i < nready; i++) greedy_ready |= ready[i] == s.greedy;
        if (cfg[C_RBA_GREEDY] && greedy_ready) {
          chosen = s.slots[s.greedy];
        } else {
          const int32_t* ops = L ? s.basis_ops.data() : s.slot_ops.data();
          chosen = s.slots[rba_pick(s, ready, nready, ops, L && basis_none, basis_q)];
        }
      }
    } else if (pending_pick) {
      chosen = at < s.soonest ? -1 : gto_pick(s, at);
    }
    Unit dispatched;
    if (dispatching) {
      dispatched = s.units[offer];
      s.units[offer].busy = false;
      s.cu_order.erase(std::find(s.cu_order.begin(), s.cu_order.end(), offer));
      s.held = -1;
    } else {
      s.held = offer;
    }
    if (s.buf_valid) {  // allocation into the lowest free CU
      int cu = -1;
      for (int c = 0; c < cus && cu < 0; c++)
        if (!s.units[c].busy) cu = c;
      if (cu >= 0) {
        i64 key = (i64)s.buf_pc * S + s.buf_slot;
        const Post* p = posts.data() + key * cfg[C_OPERANDS];
        int n = nposts[key];
        for (int k = 0; k < n; k++) {
          int b = p[k].bank;
          s.qbuf[b * s.qcap + (s.qhead[b] + s.qlen[b]) % s.qcap] = {cu, p[k].reg};
          s.qlen[b]++;
        }
        Unit& u = s.units[cu];
        u.busy = true;
        u.warp = s.buf_warp;
        u.pc = s.buf_pc;
        u.rpos = s.buf_rpos;
        u.waiting = n;
        u.ready_at = 0;
        u.posts = p;
        s.queued += n;
        s.cu_order.push_back(cu);
        s.buf_valid = false;
      }
    }
    int pc = 0;
    if (chosen >= 0) {
      Warp& w = warps[chosen];
      pc = w.pcs[w.pos];
      s.buf_valid = true;
      s.buf_slot = w.slot;
      s.buf_warp = chosen;
      s.buf_pc = pc;
      s.buf_rpos = w.rpos;
      w.inflight++;
    }
    s.oc_cycle = oc_cycle + 1;
    if (dispatching) dispatch(s, dispatched.warp, dispatched.pc, dispatched.rpos, at);
    if (chosen >= 0) {
      issued(s, chosen, pc);
    } else {
      bool rdy = !accepts && (policy == GTO ? (at >= s.soonest && gto_pick(s, at) >= 0)
                                            : any_ready(s, at));
      s.reason = rdy ? COLLECTOR_FULL : stall_reason(s);
      s.stalls[s.reason]++;
    }
    return true;
  }

  // -- the run (TimingSM.run_blocks and _skip) -----------------------------------------
  int skip() {
    i64 next = INF;
    for (Sub& s : subs)
      for (uint64_t m = s.live; m; m &= m - 1) {
        i64 wake = warps[s.slots[__builtin_ctzll(m)]].wake;
        if (now < wake && wake < INF) next = std::min(next, wake);
      }
    if (!events.empty()) next = std::min(next, events.top().finish);
    if (next == INF) {
      if (done >= total) {
        now++;
        return DONE;
      }
      return STUCK;
    }
    next = std::max(now + 1, next);
    for (Sub& s : subs) {
      i64 skipped = next - now - 1;
      s.stalls[s.reason] += skipped;
      s.lag += skipped;
      forget_writes(s, next);
    }
    now = next;
    return DONE;
  }

  int run() {
    if (admit_pending) {
      if (!admit()) return NEED_BLOCKS;
      if (misfit) return DOES_NOT_FIT;
      admit_pending = false;
    }
    while (done < total) {
      while (!events.empty() && events.top().finish <= now) {
        Event e = events.top();
        events.pop();
        retire_block(blocks[e.block]);
        done++;
        admit_pending = true;
        if (!admit()) return NEED_BLOCKS;
        if (misfit) return DOES_NOT_FIT;
        admit_pending = false;
      }
      if (done == total) break;
      bool busy = false;
      for (Sub& s : subs)
        if (cycle(s, now)) busy = true;
      if (busy) {
        now++;
        continue;
      }
      if (skip() == STUCK) return STUCK;
    }
    return DONE;
  }

  // -- construction --------------------------------------------------------------------
  void setup(const int32_t* blob) {
    S = (int)cfg[C_SLOTS];
    banks = (int)cfg[C_BANKS];
    cus = (int)cfg[C_CUS];
    policy = (int)cfg[C_POLICY];
    L = policy == RBA ? (int)cfg[C_SCORE_LATENCY] : 0;
    Reader in{blob};
    unit_of = in.next();
    kind = in.next();
    space = in.next();
    records = in.next();
    loads = in.next();
    stages = in.next();
    needs = in.rows();
    dests = in.rows();
    reads = in.rows();
    uncollected = in.rows();
    overwrites = in.rows();
    collected = in.rows();  // per pc: (physical register, dense register) pairs
    writes = in.rows();     // per pc: physical registers written back
    int npc = (int)unit_of.size();
    i64 ops = cfg[C_OPERANDS];
    alu_after.assign(npc, -1);
    write_mask.assign((i64)npc * S, 0);
    posts.assign((i64)npc * S * ops, Post{0, 0});
    nposts.assign((i64)npc * S, 0);
    for (int pc = 0; pc < npc; pc++) {
      if (kind[pc] == ALU && unit_of[pc] != MEM)
        alu_after[pc] = (int32_t)cfg[C_LATENCY + unit_of[pc]] + stages[pc];
      for (int slot = 0; slot < S; slot++) {
        i64 key = (i64)pc * S + slot;
        int32_t mask = 0;
        for (const int32_t* r = writes.begin(pc); r != writes.end(pc); r++)
          mask |= 1 << bank_of(*r, slot);
        write_mask[key] = mask;
        int n = collected.size(pc) / 2;
        for (int k = 0; k < n; k++)
          posts[key * ops + k] = {bank_of(collected.begin(pc)[2 * k], slot),
                                  collected.begin(pc)[2 * k + 1]};
        nposts[key] = n;
      }
    }
    l1_lines.assign(cfg[C_L1_SETS] * cfg[C_L1_WAYS], 0);
    l1_count.assign(cfg[C_L1_SETS], 0);
    subs.resize(cfg[C_SUBCORES]);
    for (int i = 0; i < (int)subs.size(); i++) {
      Sub& s = subs[i];
      s.index = i;
      s.slots.assign(S, -1);
      s.age.assign(S, 0);
      s.units.assign(cus, Unit());
      s.qcap = (int32_t)(cus * ops + 1);
      s.qhead.assign(banks, 0);
      s.qlen.assign(banks, 0);
      s.qbuf.assign((i64)banks * s.qcap, {0, 0});
      s.slot_ops.assign(S, -1);
      s.prev_ops.assign(S, -1);
      s.basis_ops.assign(S, -1);
      s.hist.assign((i64)std::max(L, 1) * banks, 0);
      s.ring_cycle.assign(WRITE_RING, -1);
      s.ring_mask.assign(WRITE_RING, 0);
    }
  }
};

}  // namespace

extern "C" {

void* tc_new(const int64_t* cfg, int64_t ncfg, const int32_t* blob, int64_t total) {
  if (ncfg != C_COUNT) return nullptr;
  Core* core = new Core();
  std::copy(cfg, cfg + C_COUNT, core->cfg);
  core->total = total;
  core->setup(blob);
  return core;
}

void tc_free(void* handle) { delete static_cast<Core*>(handle); }

// Blocks run functionally, queued for admission in launch order. Per block: its id (3 int64)
// and warp count; per warp: its sub-core and the bounds of its instructions and records; per
// record its count (a shared access's requests, a global one's lines) and lines.
void tc_add_blocks(void* handle, int64_t nblocks, const int64_t* ids, const int32_t* counts,
                   const int32_t* warp_subs, const int64_t* pc_bounds, const int32_t* pcs,
                   const int64_t* rec_bounds, const int32_t* rec_n, const int64_t* line_bounds,
                   const uint64_t* lines) {
  Core& c = *static_cast<Core*>(handle);
  int64_t warp = 0;
  for (int64_t b = 0; b < nblocks; b++) {
    c.blocks.emplace_back();
    int32_t index = (int32_t)c.blocks.size() - 1;
    Block& block = c.blocks.back();
    std::copy(ids + 3 * b, ids + 3 * b + 3, block.id);
    block.live = counts[b];
    for (int32_t k = 0; k < counts[b]; k++, warp++) {
      int32_t id = c.new_warp();
      Warp& w = c.warps[id];
      w.block = index;
      w.pcs.assign(pcs + pc_bounds[warp], pcs + pc_bounds[warp + 1]);
      w.rec_n.assign(rec_n + rec_bounds[warp], rec_n + rec_bounds[warp + 1]);
      for (int64_t r = rec_bounds[warp]; r <= rec_bounds[warp + 1]; r++)
        w.rec_line.push_back(line_bounds[r] - line_bounds[rec_bounds[warp]]);
      w.lines.assign(lines + line_bounds[rec_bounds[warp]],
                     lines + line_bounds[rec_bounds[warp + 1]]);
      block.warps.push_back(id);
      block.subs.push_back(warp_subs[warp]);
    }
    c.ready.push_back(index);
  }
}

// Runs until the launch is done (0), the next cohort of blocks is needed (1), a block does not
// fit an empty SM (2: tc_misfit says its warps) or nothing can happen (3).
int tc_run(void* handle) { return static_cast<Core*>(handle)->run(); }

int64_t tc_misfit(void* handle) { return static_cast<Core*>(handle)->misfit; }

int64_t tc_admitted(void* handle) { return static_cast<Core*>(handle)->admitted; }

int64_t tc_now(void* handle) { return static_cast<Core*>(handle)->now; }

// Statistics: cycles, bank conflicts, register reads, dispatch stalls, the four stall counts,
// L1 requests, hits, misses, port-wait cycles, then per sub-core its issued instructions.
void tc_stats(void* handle, int64_t* out) {
  Core& c = *static_cast<Core*>(handle);
  int64_t conflicts = 0, reads = 0, dispatch_stalls = 0, stalls[4] = {0, 0, 0, 0};
  for (Sub& s : c.subs) {
    conflicts += s.conflicts;
    reads += s.reads;
    dispatch_stalls += s.dispatch_stalls;
    for (int k = 0; k < 4; k++) stalls[k] += s.stalls[k];
  }
  int64_t fixed[] = {c.now, conflicts, reads, dispatch_stalls, stalls[0], stalls[1], stalls[2],
                     stalls[3], c.l1_requests, c.l1_hits, c.l1_misses, c.l1_wait};
  std::copy(fixed, fixed + 12, out);
  for (size_t i = 0; i < c.subs.size(); i++) out[12 + i] = c.subs[i].issued;
}

}  // extern "C"
