"""Byte-addressed memories: global memory (the device's buffers), shared, local, static.

Each holds its bytes in one ``numpy.uint8`` array and serves a warp's loads and stores as
one gather or scatter over the active lanes' addresses. Accesses must be naturally aligned
and in bounds; anything else raises :class:`MemoryFaultError` (the warp adds the instruction's
file and line). Where several lanes store to one address, the highest lane wins. Atomics
(:meth:`Memory.atomic`) apply the lanes' operations one after another in lane order (warps
of a group in warp order), so each lane's old value is what that sequential order gives.

Address map (a documented choice; PTX fixes none). Global buffers start at
:data:`GLOBAL_BASE` (above 4 GiB, so a pointer truncated to 32 bits faults instead of
aliasing) and are aligned to 256 bytes, as ``cudaMalloc`` does. The module's own
``.global`` and ``.const`` variables live in one static image at :data:`STATIC_BASE`; a
``.global`` access below :data:`GLOBAL_BASE` reaches it, and ``.const`` accesses always do.
Generic addresses (``ld``/``st``/``atom`` without a state space) are windows of one space:
``[SHARED_WINDOW, SHARED_WINDOW + WINDOW_BYTES)`` is the block's shared memory,
``[LOCAL_WINDOW, LOCAL_WINDOW + WINDOW_BYTES)`` the thread's local frame, anything else
global (or static) memory; ``cvta`` converts between a space's own addresses and these.
"""

import numpy as np

__all__ = ["GLOBAL_BASE", "LOCAL_WINDOW", "SHARED_WINDOW", "STATIC_BASE", "WINDOW_BYTES",
           "FaultError", "GlobalMemory", "Memory", "MemoryFaultError"]

GLOBAL_BASE = 1 << 32
STATIC_BASE = 1 << 31
WINDOW_BYTES = 1 << 24
SHARED_WINDOW = 1 << 24
LOCAL_WINDOW = 2 << 24
_ALIGN = 256


class FaultError(RuntimeError):
    """A fault of one instruction (the warp adds file, line, block and warp)."""


class MemoryFaultError(FaultError):
    """An out-of-bounds or misaligned access."""


_ACCUMULATE = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
               "or": np.bitwise_or, "xor": np.bitwise_xor}


def atomic_result(op: str, old, b, c=None):
    """The value an atomic ``op`` leaves in memory holding ``old`` (PTX ``atom`` semantics:
    ``inc`` wraps to 0 at ``b``, ``dec`` to ``b`` at 0 or above ``b``, ``cas`` stores ``c``
    where ``old == b``)."""
    if op in _ACCUMULATE:
        return _ACCUMULATE[op](old, b)
    if op == "exch":
        return np.asarray(b).copy()
    if op == "cas":
        return np.where(old == b, c, old)
    one = np.asarray(1, np.asarray(old).dtype)
    if op == "inc":
        return np.where(old >= b, 0, old + one).astype(np.asarray(old).dtype)
    if op == "dec":
        return np.where((old == 0) | (old > b), b, old - one).astype(np.asarray(old).dtype)
    raise ValueError(f"unknown atomic operation {op!r}")


class Memory:
    """``size`` bytes starting at address ``base``, named ``space`` in fault messages."""

    def __init__(self, size: int, *, base: int = 0, space: str = "shared"):
        self.base = base
        self.space = space
        self.size = size
        self.data = np.zeros(-(-max(size, 8) // 8) * 8, np.uint8)

    def _index(self, addresses: np.ndarray, itemsize: int) -> np.ndarray:
        """Element indices of ``addresses`` in :attr:`data` viewed as ``itemsize`` items.
        An address below the base wraps to a huge offset, so one comparison checks both
        bounds."""
        offsets = addresses.astype(np.uint64, copy=False) - np.uint64(self.base)
        limit = np.uint64(max(self.size - itemsize, 0))
        bad = offsets > limit
        if self.size < itemsize:
            bad[:] = True
        misaligned = (offsets & np.uint64(itemsize - 1)) != 0
        if not (bad | misaligned).any():
            return offsets >> np.uint64(itemsize.bit_length() - 1)
        if bad.any():
            raise MemoryFaultError(f"{self.space} access of {itemsize} bytes out of bounds at "
                                   f"0x{int(addresses[bad][0]):x}")
        raise MemoryFaultError(f"misaligned {self.space} access of {itemsize} bytes at "
                               f"0x{int(addresses[misaligned][0]):x}")

    def load(self, addresses: np.ndarray, dtype) -> np.ndarray:
        """Values of ``dtype`` at ``addresses`` (one per lane)."""
        dtype = np.dtype(dtype)
        return self.data.view(dtype)[self._index(addresses, dtype.itemsize)]

    def store(self, addresses: np.ndarray, values: np.ndarray) -> None:
        """Write ``values`` (one per lane) at ``addresses``."""
        self.data.view(values.dtype)[self._index(addresses, values.dtype.itemsize)] = values

    def atomic(self, op: str, addresses: np.ndarray, b: np.ndarray, c=None,
               flush=None) -> np.ndarray:
        """Apply atomic ``op`` with operands ``b`` (and ``c`` for ``cas``), one per lane, in
        lane order; return each lane's old value. ``flush`` (``ftz``), when given, is applied
        to every value stored (``atom.add.f32`` flushes subnormals)."""
        view = self.data.view(b.dtype)
        index = self._index(addresses, b.dtype.itemsize)
        slots, inverse = np.unique(index, return_inverse=True)
        if slots.size == index.size:
            old = view[index]
            new = atomic_result(op, old, b, c)
            view[index] = new if flush is None else flush(new)
            return old
        old = np.empty_like(b)
        for k, slot in enumerate(slots.tolist()):
            lanes = np.flatnonzero(inverse == k)
            if op in _ACCUMULATE and flush is None:
                run = _ACCUMULATE[op].accumulate(np.concatenate([view[slot:slot + 1], b[lanes]]),
                                                 dtype=b.dtype)
                old[lanes], view[slot] = run[:-1], run[-1]
                continue
            current = view[slot]
            for lane in lanes.tolist():
                old[lane] = current
                current = atomic_result(op, current, b[lane], None if c is None else c[lane])
                current = current if flush is None else flush(np.asarray(current))[()]
            view[slot] = current
        return old


class GlobalMemory(Memory):
    """Global memory holding named buffers; :attr:`addresses` maps a name to its address."""

    def __init__(self, buffers: dict[str, np.ndarray]):
        offsets, end = {}, 0
        for name, array in buffers.items():
            offsets[name] = end
            end += -(-max(array.nbytes, 1) // _ALIGN) * _ALIGN
        super().__init__(end, base=GLOBAL_BASE, space="global")
        self.buffers = {name: (offsets[name], array.dtype, array.shape)
                        for name, array in buffers.items()}
        self.addresses = {name: GLOBAL_BASE + off for name, off in offsets.items()}
        for name, array in buffers.items():
            raw = np.ascontiguousarray(array).view(np.uint8).ravel()
            self.data[offsets[name]:offsets[name] + raw.size] = raw

    def read(self, name: str) -> np.ndarray:
        """A copy of buffer ``name`` with its dtype and shape."""
        offset, dtype, shape = self.buffers[name]
        count = int(np.prod(shape))
        raw = self.data[offset:offset + count * dtype.itemsize]
        return raw.view(dtype).reshape(shape).copy()
