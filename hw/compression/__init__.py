"""Static data compression register file: indirection tables, value extractor, value
converter, value truncator, extended collector unit, and the operand-read and write-back
paths composed from them.

Paper: ``shared/papers/static-data-compression-rf.md``; reading: ``shared/spec/compression.md``.
"""

from gpurf.hw.registry import Block

from .collector_ext import CollectorExt
from .configs import DESTINATION
from .indirection_table import IndirectionTable
from .read_path import ReadPath
from .value_converter import ValueConverter
from .value_extractor import ValueExtractor
from .value_truncator import ValueTruncator
from .write_path import WritePath

BLOCKS = (
    Block("compression", "collector_ext", CollectorExt,
          test_params=({"operands": 2, "lanes": 2}, {"operands": 1, "lanes": 1}),
          summary="collector-unit extension: per-operand fields, OR merge, split sign fill",
          icarus_defaults=False),
    Block("compression", "indirection_table", IndirectionTable,
          test_params=({**DESTINATION, "tag_width": 4},
                       {"entries": 16, "banks": 4, "ports": 3, "buffer": 2, "tag_width": 3},
                       {"entries": 8, "banks": 1, "ports": 2, "tag_width": 2}),
          summary="banked table of {r0, m0, r1, m1} entries with arbiter and conflict buffer",
          icarus_defaults=False),
    Block("compression", "value_extractor", ValueExtractor,
          test_params=({"lanes": 2},),
          summary="warp of thread value extractors: slice alignment and padding of one part"),
    Block("compression", "value_converter", ValueConverter,
          test_params=({"lanes": 2}, {"lanes": 2, "exponent": 4, "mantissa": 4}),
          summary="warp of thread value converters: narrow float (Table 3) -> fp32, exact",
          amaranth_defaults=False),
    Block("compression", "value_truncator", ValueTruncator,
          test_params=({"lanes": 2}, {"lanes": 2, "exponent": 4, "mantissa": 4}),
          summary="warp of thread value truncators: fp32 -> narrow float (RNE), slice "
                  "scatter and write masks",
          icarus_defaults=False, amaranth_defaults=False),
    Block("compression", "read_path", ReadPath,
          test_params=({"lanes": 2, "entries": 16, "banks": 4, "tag_width": 3},
                       {"lanes": 1, "entries": 4, "banks": 1, "tag_width": 1}),
          summary="operand-read path: source table -> one or two reads -> extract -> "
                  "merge -> convert",
          synth_params={"lanes": 2},
          icarus_defaults=False, amaranth_defaults=False, lint_defaults=False),
    Block("compression", "write_path", WritePath,
          test_params=({"lanes": 2, "entries": 16, "banks": 2, "ports": 3, "buffer": 1},
                       {"lanes": 1, "entries": 8, "banks": 1, "ports": 2, "buffer": 2}),
          summary="write-back path: destination table -> value truncators -> writes "
                  "with slice masks",
          synth_params={"lanes": 2},
          icarus_defaults=False, amaranth_defaults=False, lint_defaults=False),
)
