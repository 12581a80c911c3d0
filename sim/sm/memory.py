"""Byte-addressed memories: global memory (the device's buffers) and shared memory.

Both hold their bytes in one ``numpy.uint8`` array and serve a warp's loads and stores as
one gather or scatter over the active lanes' addresses. Accesses must be naturally aligned
and in bounds; anything else raises :class:`MemoryFaultError` (the warp adds the instruction's
file and line). Where several lanes store to one address, the highest lane wins.

Global buffers start at :data:`GLOBAL_BASE` (above 4 GiB, so a pointer truncated to 32 bits
faults instead of aliasing) and are aligned to 256 bytes, as ``cudaMalloc`` does.
"""

import numpy as np

__all__ = ["GLOBAL_BASE", "GlobalMemory", "Memory", "MemoryFaultError"]

GLOBAL_BASE = 1 << 32
_ALIGN = 256


class MemoryFaultError(RuntimeError):
    """An out-of-bounds or misaligned access."""


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
