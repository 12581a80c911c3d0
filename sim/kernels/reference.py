"""numpy references of the workloads: the same computation as each kernel.cu, written
directly from the CUDA source (not from the PTX), with the same float rounding order.

Each function takes the generated inputs (buffer name -> array) and the scalars (size
variables and scalar kernel parameters by name) and returns the expected output buffers.
An ``*_inputs`` function (a launch file's ``inputs`` key) takes the generated buffers, the size
variables and the launch's random generator and returns the buffers it replaces by
structured ones.
"""

import numpy as np

from gpurf.sim.kernels.fp import fma_f32

__all__ = ["backprop_adjust", "backprop_forward", "bankconflict", "bfs", "bfs_inputs",
           "divergent", "ffma_imad", "fma_subcore", "gaussian", "gaussian_inputs", "histogram",
           "hotspot", "imgvf", "kmeans", "lud", "lud_inputs", "matmul", "narrow", "nw",
           "nw_inputs", "pathfinder", "reduction", "saxpy", "scan", "sobel", "spmv",
           "spmv_inputs", "srad", "vecadd"]

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


# -- the register-bound suite (docs/kernels.md) ------------------------------------------------
# Float kernels fix their rounding order with CUDA's _rn intrinsics, so these references are
# bit-exact; srad alone calls expf, whose PTX sequence (ex2.approx) is not correctly rounded
# (its launch file states the tolerance).

HIDDEN = 16
"""Hidden units of the backprop kernels (``HIDDEN`` in their kernel.cu)."""
TILE = 16
"""Tile side of lud and nw (``BS`` in their kernel.cu)."""
INT_MAX = np.int32(2**31 - 1)


def backprop_forward(buf, p):
    product = (buf["weights"] * buf["input"][:, None]).reshape(-1, HIDDEN, HIDDEN)
    step = 2
    while step <= HIDDEN:
        product[:, ::step] = product[:, ::step] + product[:, step // 2::step]
        step *= 2
    return {"partial": product[:, 0, :].reshape(-1)}


def backprop_adjust(buf, p):
    change = ((f32(p["eta"]) * buf["delta"])[None, :] * buf["input"][:, None]
              + f32(p["momentum"]) * buf["old_change"])
    return {"weights": buf["weights"] + change, "old_change": change}


def csr_rows(rows: int, entries: int, rng) -> np.ndarray:
    """Row starts of a CSR structure of ``entries`` (>= ``rows``) entries over ``rows`` rows:
    every row has one entry, the rest fall on rows uniformly at random (lengths vary,
    binomially)."""
    lengths = 1 + rng.multinomial(entries - rows, np.full(rows, 1 / rows))
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)


def bfs_inputs(buf, p, rng):
    """A random directed graph (CSR) and the search's start: vertex 0 at level 0."""
    vertices = p["vertices"]
    cost = np.full(vertices, -1, np.int32)
    cost[0] = 0
    frontier = np.zeros(vertices, np.int32)
    frontier[0] = 1
    return {"row_start": csr_rows(vertices, buf["edges"].size, rng), "cost": cost,
            "frontier": frontier}


def bfs(buf, p):
    row_start, edges, cost = buf["row_start"], buf["edges"], buf["cost"].copy()
    owner = np.repeat(np.arange(p["vertices"]), np.diff(row_start))
    frontier, level = cost == 0, 0
    while True:
        targets = edges[frontier[owner]]
        fresh = np.unique(targets[cost[targets] == -1])
        if fresh.size == 0:
            return {"cost": cost}
        level += 1
        cost[fresh] = level
        frontier = np.zeros_like(frontier)
        frontier[fresh] = True


def _diagonally_dominant(matrix, n, weight):
    """``matrix`` with ``weight`` added to its first ``n`` diagonal entries, so that no
    pivot is near zero."""
    matrix = matrix.copy()
    matrix[np.arange(n), np.arange(n)] += f32(weight)
    return matrix


def gaussian_inputs(buf, p, rng):
    """A diagonally dominant augmented matrix."""
    return {"a": _diagonally_dominant(buf["a"], p["n"], p["n"])}


def gaussian(buf, p):
    a = buf["a"].copy()
    for t in range(p["n"] - 1):
        multiplier = a[t + 1:, t] / a[t, t]
        a[t + 1:, t:] = fma_f32(-multiplier[:, None], a[t, t:][None, :], a[t + 1:, t:])
    return {"a": a}


def kmeans(buf, p):
    features, clusters = buf["features"], buf["clusters"]
    distance = np.zeros((p["points"], p["k"]), f32)
    for f in range(p["dims"]):
        diff = features[f][:, None] - clusters[None, :, f]
        distance = fma_f32(diff, diff, distance)
    return {"membership": np.argmin(distance, axis=1).astype(np.int32)}


def lud_inputs(buf, p, rng):
    """Diagonally dominant diagonal tiles."""
    return {"m": _diagonally_dominant(buf["m"], p["n"], TILE)}


def lud(buf, p):
    m = buf["m"].copy()
    tiles = p["n"] // TILE
    index = np.arange(tiles)[:, None] * TILE + np.arange(TILE)
    t = m[index[:, :, None], index[:, None, :]]
    for i in range(TILE - 1):
        column = t[:, i + 1:, i]
        for j in range(i):
            column = fma_f32(-t[:, i + 1:, j], t[:, j, i][:, None], column)
        t[:, i + 1:, i] = column / t[:, i, i][:, None]
        row = t[:, i + 1, i + 1:]
        for j in range(i + 1):
            row = fma_f32(-t[:, i + 1, j][:, None], t[:, j, i + 1:], row)
        t[:, i + 1, i + 1:] = row
    m[index[:, :, None], index[:, None, :]] = t
    return {"m": m}


def nw_inputs(buf, p, rng):
    """The score matrix's first row and column: gap penalties from the corner."""
    score = np.zeros_like(buf["score"])
    gaps = -p["penalty"] * np.arange(p["n"] + 1, dtype=np.int32)
    score[0, :], score[:, 0] = gaps, gaps
    return {"score": score}


def nw(buf, p):
    s, ref, n, penalty = buf["score"].copy(), buf["reference"], p["n"], p["penalty"]
    for d in range(2, 2 * n + 1):
        i = np.arange(max(1, d - n), min(n, d - 1) + 1)
        j = d - i
        s[i, j] = np.maximum(np.maximum(s[i - 1, j - 1] + ref[i - 1, j - 1],
                                        s[i - 1, j] - penalty), s[i, j - 1] - penalty)
    return {"score": s}


def pathfinder(buf, p):
    cost = buf["src"].copy()
    for row in buf["wall"][1:]:
        left = np.concatenate([[INT_MAX], cost[:-1]])
        right = np.concatenate([cost[1:], [INT_MAX]])
        cost = row + np.minimum(np.minimum(left, cost), right)
    return {"src": cost}


def _srad_coefficient(j, q0sqr):
    """Each pixel's diffusion coefficient (kernel.cu's ``coefficient``) and its four
    differences north, south, west, east."""
    pad = np.pad(j, 1, mode="edge")
    dn, ds = pad[:-2, 1:-1] - j, pad[2:, 1:-1] - j
    dw, de = pad[1:-1, :-2] - j, pad[1:-1, 2:] - j
    g2 = ((dn * dn + ds * ds) + (dw * dw + de * de)) / (j * j)
    lap = ((dn + ds) + (dw + de)) / j
    num = f32(0.5) * g2 - f32(0.0625) * (lap * lap)
    den = f32(1) + f32(0.25) * lap
    q = np.sqrt(np.maximum(num / (den * den), f32(0)))
    x = (q * q - f32(q0sqr)) / (f32(q0sqr) * (f32(1) + f32(q0sqr)))
    c = np.exp(-x.astype(np.float64)).astype(f32)
    return np.clip(c, f32(0), f32(1)), (dn, ds, dw, de)


def srad(buf, p):
    j = buf["j"]
    c, (dn, ds, dw, de) = _srad_coefficient(j, p["q0sqr"])
    south = np.vstack([c[1:], c[-1:]])
    east = np.hstack([c[:, 1:], c[:, -1:]])
    d = (c * dn + south * ds) + (c * dw + east * de)
    return {"out": j + (f32(0.25) * f32(p["lambda"])) * d}


def spmv_inputs(buf, p, rng):
    """CSR row starts: the entries cut into rows of random lengths."""
    return {"row_start": csr_rows(p["rows"], buf["value"].size, rng)}


def spmv(buf, p):
    row_start, column, value, x = buf["row_start"], buf["column"], buf["value"], buf["x"]
    lengths = np.diff(row_start)
    y = np.zeros(p["rows"], f32)
    for k in range(int(lengths.max(initial=0))):
        rows = np.flatnonzero(lengths > k)
        entry = row_start[rows] + k
        y[rows] = fma_f32(value[entry], x[column[entry]], y[rows])
    return {"y": y}


def histogram(buf, p):
    data = buf["words"][:p["n"]].view(np.uint8)
    return {"bins": np.bincount(data, minlength=256).astype(np.uint32)}


def scan(buf, p):
    n, block = p["n"], p["block"]
    blocks = -(-n // block)
    data = np.zeros(blocks * block, np.int64)
    data[:n] = buf["inp"][:n]
    sums = np.cumsum(data.reshape(blocks, block), axis=1).astype(np.int32)
    out = buf["out"].copy()
    out[:n] = sums.reshape(-1)[:n]
    return {"out": out, "block_sums": sums[:, -1].copy()}


def imgvf(buf, p):
    image = buf["image"]
    side = image.shape[1]
    near = np.arange(side)
    up, down = np.maximum(near - 1, 0), np.minimum(near + 1, side - 1)
    gx = image[:, :, down] - image[:, :, up]
    gy = image[:, down, :] - image[:, up, :]
    inv_eps, mu = f32(p["inv_eps"]), f32(p["mu_over_lambda"])
    pull = f32(p["one_over_lambda"]) * image

    def flow(d, direction):
        s = (d * direction) * inv_eps
        return fma_f32(f32(0.5), s / (f32(1) + np.abs(s)), f32(0.5)) * d

    v = image.copy()
    for _ in range(p["iters"]):
        def diff(rows, cols, v=v):
            return v[:, rows][:, :, cols] - v

        total = flow(diff(up, near), -gy)
        total = total + flow(diff(down, near), gy)
        total = total + flow(diff(near, up), -gx)
        total = total + flow(diff(near, down), gx)
        total = total + flow(diff(up, up), -gx - gy)
        total = total + flow(diff(up, down), gx - gy)
        total = total + flow(diff(down, up), gy - gx)
        total = total + flow(diff(down, down), gx + gy)
        u = fma_f32(mu, total, v)
        v = u - pull * (u - image)
    return {"out": v.reshape(buf["out"].shape)}


def ffma_imad(buf, p):
    n = p["n"]
    a, b = f32(p["a"]), np.uint32(p["b"])
    f0 = buf["fin"][:n]
    f1, f2, f3 = f0 + f32(1), f0 + f32(2), f0 + f32(3)
    k0 = buf["iin"][:n]
    k1, k2, k3 = k0 ^ np.uint32(0x5555), k0 + np.uint32(7), k0 * np.uint32(3)
    for _ in range(p["iters"]):
        f0 = fma_f32(f0, a, f1)
        k0 = k0 * b + k1
        f1 = fma_f32(f1, a, f2)
        k1 = k1 * b + k2
        f2 = fma_f32(f2, a, f3)
        k2 = k2 * b + k3
        f3 = fma_f32(f3, a, f0)
        k3 = k3 * b + k0
    fout, iout = buf["fout"].copy(), buf["iout"].copy()
    fout[:n] = (f0 + f1) + (f2 + f3)
    iout[:n] = (k0 ^ k1) + (k2 ^ k3)
    return {"fout": fout, "iout": iout}
