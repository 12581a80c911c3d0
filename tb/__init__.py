"""cocotb benches and formal harnesses, one subpackage per mechanism, named as in ``hw``."""
