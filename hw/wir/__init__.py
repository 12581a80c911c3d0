"""WIR: warp instruction reuse and warp register reuse.

Paper: ``shared/papers/wir-warp-instruction-reuse.md``; reading: ``shared/spec/wir.md``.
"""

from gpurf.hw.registry import Block

from .backend import Backend
from .h3_hash import H3Hash
from .load_filter import LoadFilter
from .pending_retry import PendingRetry
from .pipeline import Pipeline
from .register_alloc import RegisterAlloc
from .register_pool import RegisterPool
from .rename_reuse import RenameReuse
from .rename_table import RenameTable
from .reuse_buffer import ReuseBuffer
from .value_signature_buffer import ValueSignatureBuffer
from .verify_cache import VerifyCache

BLOCKS: tuple[Block, ...] = (
    Block("wir", "h3_hash", H3Hash,
          test_params=({"width_in": 64, "width_out": 8, "seed": 7},
                       {"width_in": 8, "width_out": 4, "matrix": [0x0F, 0xF0, 0x33, 0x0F]}),
          summary="H3 hash of a warp register value: XOR network from a seeded matrix"),
    Block("wir", "value_signature_buffer", ValueSignatureBuffer,
          test_params=({"entries": 8, "hash_width": 6, "pregs": 16},
                       {"entries": 2, "hash_width": 1, "pregs": 4}),
          summary="direct-indexed {hash, preg} table: lookup, install, displacement, evict"),
    Block("wir", "verify_cache", VerifyCache,
          test_params=({"entries": 3, "pregs": 16, "lanes": 2, "data_width": 4},
                       {"entries": 2, "pregs": 4, "lanes": 1, "data_width": 3,
                        "invalidate_ports": 1}),
          summary="fully associative FIFO cache of register values for verify-reads"),
    Block("wir", "rename_table", RenameTable,
          test_params=({"warps": 4, "regs": 4, "pregs": 16},
                       {"warps": 3, "regs": 5, "pregs": 8, "sources": 1}),
          summary="per-warp logical -> physical mappings with pin bits; exit sweep"),
    Block("wir", "reuse_buffer", ReuseBuffer,
          test_params=({"entries": 8, "opcode_bits": 4, "preg_bits": 4, "imm_bits": 6,
                        "blocks": 2, "barrier_bits": 2},
                       {"entries": 2, "opcode_bits": 5, "preg_bits": 2, "imm_bits": 2,
                        "blocks": 1, "barrier_bits": 1}),
          summary="direct-indexed reuse buffer: hit / pending hit / reserving miss, fill"),
    Block("wir", "pending_retry", PendingRetry,
          test_params=({"depth": 4, "width": 8}, {"depth": 2, "width": 3}),
          summary="queue of pending reuse hits re-checked on idle rename cycles"),
    Block("wir", "load_filter", LoadFilter,
          test_params=({"warps": 4, "blocks": 2, "barrier_bits": 2},
                       {"warps": 1, "blocks": 1, "barrier_bits": 1}),
          summary="load reuse: per-warp store flags and per-block barrier counters"),
    Block("wir", "register_pool", RegisterPool,
          test_params=({"pregs": 16, "count_width": 3, "inc_ports": 3, "dec_ports": 2,
                        "query_ports": 2},
                       {"pregs": 8, "count_width": 2, "inc_ports": 2, "dec_ports": 3,
                        "query_ports": 1, "policy": "capped_register", "low_water": 2}),
          summary="free pool of physical registers with merged 10-bit reference counters",
          amaranth_defaults=False),
    Block("wir", "rename_reuse", RenameReuse,
          test_params=({"warps": 4, "regs": 4, "pregs": 16, "entries": 8, "opcode_bits": 4,
                        "imm_bits": 6, "blocks": 2, "barrier_bits": 2, "retry_depth": 4},
                       {"warps": 3, "regs": 2, "pregs": 4, "entries": 2, "opcode_bits": 5,
                        "imm_bits": 3, "blocks": 1, "barrier_bits": 1, "retry_depth": 2}),
          summary="rename + reuse stages (2 cycles): rename tables, reuse buffer, "
                  "load filter, pending-retry queue"),
    Block("wir", "register_alloc", RegisterAlloc,
          test_params=({"lanes": 4, "data_width": 8, "hash_width": 8, "entries": 8,
                        "pregs": 16, "ticket_bits": 4, "seed": 3},
                       {"lanes": 2, "data_width": 4, "hash_width": 4, "entries": 4,
                        "pregs": 16, "ticket_bits": 3, "matrix": [0x0F, 0xF0, 0x33, 0x0F]}),
          summary="register allocation stage (2 cycles): H3 hash, then VSB lookup"),
    Block("wir", "pipeline", Pipeline,
          test_params=({"warps": 1, "regs": 2, "lanes": 2, "data_width": 2, "hash_width": 2,
                        "entries": 2, "pregs": 4, "count_width": 3, "low_water": 1,
                        "verify_cache": 2},
                       {"warps": 3, "regs": 3, "lanes": 4, "data_width": 4, "hash_width": 3,
                        "entries": 4, "pregs": 16, "count_width": 2, "low_water": 0,
                        "seed": 9, "verify_cache": 0}),
          summary="allocation pipeline: hash, VSB, verify, allocate/install, retire into "
                  "the mappings, one reference count"),
    Block("wir", "backend", Backend,
          test_params=({"warps": 2, "regs": 2, "pregs": 16, "lanes": 2, "data_width": 3,
                        "hash_width": 3, "entries": 4, "reuse_entries": 4, "imm_bits": 4,
                        "blocks": 2, "barrier_bits": 2, "retry_depth": 2, "count_width": 5,
                        "low_water": 2, "seed": 2, "verify_cache": 0},
                       {"warps": 3, "regs": 4, "pregs": 32, "lanes": 4, "data_width": 4,
                        "hash_width": 4, "entries": 8, "reuse_entries": 8, "imm_bits": 5,
                        "blocks": 2, "barrier_bits": 2, "retry_depth": 4, "count_width": 5,
                        "low_water": 3, "seed": 5, "verify_cache": 3}),
          summary="WIR backend: rename, reuse, hash, VSB, verify, allocate/install, retire; "
                  "one pool, one reference count"),
)
