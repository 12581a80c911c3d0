"""Plots of a :class:`~.result.Result` as PNG and SVG (matplotlib, Agg backend): grouped
bars, gpurf's solid and the paper's hatched, the paper's averages as dashed lines."""

from pathlib import Path

from .result import Plot

__all__ = ["draw"]

_PAPER_HATCH = "//"
_LINE_STYLES = ["--", ":", "-."]


def draw(plot: Plot, folder: Path) -> list[Path]:
    """Write ``plot`` as ``<name>.png`` and ``<name>.svg`` in ``folder``; the paths."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(figsize=(max(7.0, 0.9 * len(plot.categories) + 5), 4.2))
    try:
        _bars(axes, plot)
        for (label, value), style in zip(plot.lines.items(), _LINE_STYLES * 3, strict=False):
            axes.axhline(value, color="black", linewidth=1.2, label=label, linestyle=style)
        axes.set_title(plot.title, fontsize=10)
        axes.set_ylabel(plot.unit)
        if plot.log:
            axes.set_yscale("log")
        axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        figure.tight_layout()
        paths = [folder / f"{plot.name}.{kind}" for kind in ("png", "svg")]
        for path in paths:
            figure.savefig(path, dpi=120)
    finally:
        pyplot.close(figure)
    return paths


def _bars(axes, plot: Plot) -> None:
    width = 0.8 / max(1, len(plot.series))
    for i, series in enumerate(plot.series):
        xs = [x + (i - (len(plot.series) - 1) / 2) * width
              for x, v in enumerate(series.values) if v is not None]
        values = [v for v in series.values if v is not None]
        paper = series.source == "paper"
        axes.bar(xs, values, width, label=series.label, hatch=_PAPER_HATCH if paper else None,
                 edgecolor="black", linewidth=0.5, alpha=0.6 if paper else 1.0)
    axes.set_xticks(range(len(plot.categories)), plot.categories, rotation=30, ha="right",
                    fontsize=8)
    axes.axhline(0, color="black", linewidth=0.5)
