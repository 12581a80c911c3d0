"""numpy references of the workloads: the same computation as each kernel.cu, written
directly from the CUDA source (not from the PTX), with the same float rounding order.

Each function takes the generated inputs (buffer name -> array) and the scalars (size
variables and scalar kernel parameters by name) and returns the expected output buffers.
"""

import numpy as np

from gpurf.sim.kernels.fp import fma_f32

__all__ = ["bankconflict", "divergent", "fma_subcore", "hotspot", "matmul", "narrow",
           "reduction", "saxpy", "sobel", "vecadd"]

f32 = np.float32


def bankconflict(buf, p):
    out = buf["out"].copy()
    n = p["n"]
    x = buf["in"][:n]
    p_, q, r, s = x * f32(0.5), x * f32(0.25), x + f32(0.5), x - f32(0.5)
    t, u, v, w = x * f32(0.75), x + f32(0.25), x - f32(0.25), x * f32(0.125)
    a, b, c, d = x, x + f32(1), x + f32(2), x + f32(3)
    for _ in range(p["iters"]):
        a, b, c, d = fma_f32(p_, q, a), fma_f32(r, s, b), fma_f32(t, u, c), fma_f32(v, w, d)
    out[:n] = (a + b) + (c + d)
    return {"out": out}


def vecadd(buf, p):
    c = buf["c"].copy()
    n = p["n"]
    c[:n] = buf["a"][:n] + buf["b"][:n]
    return {"c": c}


def saxpy(buf, p):
    y = buf["y"].copy()
    n = p["n"]
    y[:n] = fma_f32(f32(p["a"]), buf["x"][:n], y[:n])
    return {"y": y}


def fma_subcore(buf, p):
    out = buf["out"].copy().reshape(p["blocks"], p["threads"])
    tid = np.arange(p["threads"])
    warp = tid // 32
    compute = (warp % p["stride"] == 0) & (warp // p["stride"] < 8)
    acc = tid[compute].astype(f32)
    for _ in range(p["iters"]):
        acc = fma_f32(acc, f32(p["a"]), f32(p["b"]))
    out[:, compute] = acc
    return {"out": out.reshape(-1)}


def sobel(buf, p):
    img = buf["img"].astype(np.int32)
    h, w = img.shape
    pad = np.zeros((h + 2, w + 2), np.int32)
    pad[1:-1, 1:-1] = img

    def at(dy, dx):
        return pad[1 + dy:1 + dy + h, 1 + dx:1 + dx + w]

    horz = at(-1, 1) + 2 * at(0, 1) + at(1, 1) - at(-1, -1) - 2 * at(0, -1) - at(1, -1)
    vert = at(-1, -1) + 2 * at(-1, 0) + at(-1, 1) - at(1, -1) - 2 * at(1, 0) - at(1, 1)
    horz, vert = horz.astype(np.int16), vert.astype(np.int16)
    total = f32(p["fscale"]) * (np.abs(horz.astype(np.int32)) + np.abs(vert.astype(np.int32))
                                ).astype(f32)
    value = np.clip(np.trunc(total.astype(np.float64)), -2**31, 2**31 - 1).astype(np.int64)
    value = value.astype(np.int16)
    return {"out": np.clip(value, 0, 255).astype(np.uint8)}


def hotspot(buf, p):
    t = buf["temp"]
    n = np.vstack([t[:1], t[:-1]])
    s = np.vstack([t[1:], t[-1:]])
    w = np.hstack([t[:, :1], t[:, :-1]])
    e = np.hstack([t[:, 1:], t[:, -1:]])
    t2 = f32(2) * t
    dy = ((n + s) - t2) * f32(p["ry"])
    dx = ((e + w) - t2) * f32(p["rx"])
    dz = (f32(p["amb"]) - t) * f32(p["rz"])
    delta = ((buf["power"] + dy) + dx) + dz
    return {"out": (t + f32(p["cap"]) * delta).astype(f32)}


def reduction(buf, p):
    n, block = p["n"], p["block"]
    blocks = -(-n // block)
    data = np.zeros(blocks * block, f32)
    data[:n] = buf["inp"][:n]
    data = data.reshape(blocks, block)
    s = block // 2
    while s > 0:
        data[:, :s] = data[:, :s] + data[:, s:2 * s]
        s //= 2
    return {"partial": data[:, 0].copy()}


def matmul(buf, p):
    a, b = buf["A"], buf["B"]
    c = np.zeros_like(buf["C"])
    for k in range(p["n"]):
        c = fma_f32(a[:, k, None], b[None, k, :], c)
    return {"C": c}


def divergent(buf, p):
    n, limit = p["n"], p["limit"]
    x = buf["inp"][:n].astype(np.uint32)
    steps = np.zeros(n, np.uint32)
    odd3 = np.zeros(n, np.uint32)
    running = (x != 1) & (steps < limit)
    while running.any():
        odd = running & (x & 1 == 1)
        even = running & ~odd
        odd3 += (odd & (x % 3 == 0)).astype(np.uint32)
        x = np.where(odd, x * np.uint32(3) + np.uint32(1), np.where(even, x >> 1, x))
        steps += running.astype(np.uint32)
        running = (x != 1) & (steps < limit)
    out_steps, out_odd3 = buf["steps"].copy(), buf["odd3"].copy()
    out_steps[:n], out_odd3[:n] = steps, odd3
    return {"steps": out_steps, "odd3": out_odd3}


def narrow(buf, p):
    n = p["n"]
    a, b, hw = buf["a"][:n], buf["b"][:n], buf["hw"][:n]
    q, f, m = buf["q"].copy(), buf["f"].copy(), buf["m"].copy()
    q[:n] = ((a & 0x0F).astype(np.int16) * np.int16(3) + (b >> 8)).astype(np.int16)
    f[:n] = a.astype(f32) * f32(0.5) + hw.astype(f32)
    m[:n] = np.minimum(a, 100)
    return {"q": q, "f": f, "m": m}
