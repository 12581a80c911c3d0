"""Recording a mechanism's blocks beside the sub-core blocks (issue 14 item 2).

``gpurf sm run KERNEL --mechanism wir[:CONFIG] --record DIR`` and ``--mechanism
compression[:QUALITY] --record DIR`` write, into ``DIR``, the traces of the sub-core blocks
the SM runs (:class:`~gpurf.sim.sm.record.RecordingBlocks`, the ``blocks=`` seam, named
``launch<L>-<block>[-sc<S>]``) and one trace per block instance the mechanism drives:

- **compression**: ``compression-read_path`` (:mod:`gpurf.sim.sm.compression_trace`):
  every operand read of the compressed file, 64-bit halves included, through the golden
  ``compression.read_path``, joined through :meth:`~gpurf.sim.sm.record.TraceFolder.wrap`;
  each collected operand equals the compressed file's read (else ``AssertionError``);
  ``compression-write_path`` (:mod:`gpurf.sim.sm.compression_write_trace`): every write
  through the golden ``compression.write_path``, whose register-file writes must rebuild
  the file the SM wrote;
- **wir**: ``launch000-value_signature_buffer`` (the VSB's ports during the first launch,
  :meth:`~gpurf.sim.sm.wir.WirStorage.record_vsb`) and ``wir-pipeline`` (the run's register
  traffic through ``wir.pipeline`` at its small tap configuration,
  :mod:`gpurf.sim.sm.wir_trace`) and ``wir-backend`` (the run's instruction stream through
  the composed ``wir.backend``, :class:`~gpurf.sim.sm.wir_trace.BackendTap`). These three
  files are written by the WIR storage itself
  (their headers carry no SM configuration); the folder lists them with the others.

``gpurf replay DIR`` replays them all.
"""

from pathlib import Path

from .compression import compile_kernel, mechanism, tune_formats, within_quality
from .compression_trace import PathsRecording
from .config import SMConfig, load_config
from .record import record_run

__all__ = ["READ_PATH", "VSB", "WIR_BACKEND", "WIR_PIPELINE", "WRITE_PATH", "record_compression",
           "record_wir"]

READ_PATH = "compression-read_path"
WRITE_PATH = "compression-write_path"
VSB = "launch000-value_signature_buffer"
WIR_PIPELINE = "wir-pipeline"
WIR_BACKEND = "wir-backend"


def compression_config() -> SMConfig:
    """The configuration compression runs on: fermi with 8 blocks per SM (as
    :func:`gpurf.sim.reproduce.compression.fermi`)."""
    return load_config(preset="fermi", max_blocks=8)


def record_compression(folder, kernel: str, size: str, quality: str = "perfect", *,
                       config: SMConfig | None = None):
    """Run ``kernel`` with the compressed register file as
    :func:`~gpurf.sim.sm.compression.run_compressed` does (floats tuned per value for
    ``quality``, no launch knowledge, value check on), recording the sub-core blocks and
    the read and write paths into ``folder``. Returns ``(run, pass, reads, paths)``:
    ``reads`` the :class:`~gpurf.sim.sm.compression_trace.RecordedReads` (its ``writes``
    the write path's), ``paths`` the traces.

    Raises ``FileExistsError`` when ``folder`` holds traces (see
    :func:`~gpurf.sim.sm.record.record_run`).
    """
    from .run import run_kernel

    config = config or compression_config()
    traces, sub_cores = record_run(folder, kernel, size, config)
    cp = compile_kernel(kernel, floats=tune_formats(kernel, quality))
    traces.source["mechanism"] = f"compression:{quality}"
    blocks = sub_cores(None)[1]
    storages = []

    def prepare(program):
        narrowed, options = mechanism(cp)(program)
        storage = PathsRecording(
            narrowed, cp, lambda qualname, params, model: traces.wrap(
                qualname, params, model, f"compression-{qualname.split('.')[1]}"))
        storages.append(storage)
        return narrowed, {**options, **blocks, "values": storage}

    try:
        run = run_kernel(kernel, size, timing=config, mechanism=prepare)
        reads = storages[0].finish()
    except BaseException:
        traces.abandon()
        raise
    run.stats["quality"] = within_quality(kernel, run, quality)
    return run, cp, reads, traces.close()


def record_wir(folder, kernel: str, size: str, config: str = "RLPV", *,
               sm: SMConfig | None = None) -> tuple[dict, list[Path]]:
    """:func:`~gpurf.sim.sm.wir.run_wir` of ``kernel`` with WIR configuration ``config``,
    recording the sub-core blocks, the VSB (first launch), ``wir.pipeline`` and
    ``wir.backend`` into
    ``folder``. Returns ``(result, paths)`` (``result`` as ``run_wir``'s, baseline
    included).

    Raises ``FileExistsError`` when ``folder`` holds traces, ``KeyError`` for an unknown
    configuration.
    """
    from .wir import CONFIGS, run_wir, wir_sm_config

    if config not in CONFIGS:
        raise KeyError(f"unknown WIR configuration {config!r}; known: {', '.join(CONFIGS)}")
    sm = sm or load_config(preset="fermi")
    folder = Path(folder)
    traces, sub_cores = record_run(folder, kernel, size, wir_sm_config(sm, CONFIGS[config]))
    traces.source["mechanism"] = f"wir:{config}"
    vsb, pipeline = folder / f"{VSB}.trace", folder / f"{WIR_PIPELINE}.trace"
    backend = folder / f"{WIR_BACKEND}.trace"
    try:
        result = run_wir(kernel, config, size, sm=sm, record_vsb=vsb, record_pipeline=pipeline,
                         record_backend=backend, mechanism=sub_cores)
    except BaseException:
        traces.abandon()
        raise
    paths = traces.close()
    paths += [path for path, cycles in ((vsb, result["vsb_cycles"]),
                                        (pipeline, result["pipeline_cycles"]),
                                        (backend, result["backend_cycles"])) if cycles]
    return result, paths
