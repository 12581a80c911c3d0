"""``gpurf reproduce`` and ``gpurf cost --json``: the paper data files and their errors, the
JSON schema and its checker (with broken documents it must catch), the figures, the
comparisons with the paper, and the command's bad inputs. Runs use the lightest mechanism
(greener, on two small kernels at size test)."""

import copy
import json
import types

import pytest

from gpurf.sim import reproduce as reproduce_package
from gpurf.sim import verilog
from gpurf.sim.cli import main
from gpurf.sim.reproduce import (
    MECHANISMS,
    NoResultsError,
    reproduce,
    write_results,
)
from gpurf.sim.reproduce import greener as greener_results
from gpurf.sim.reproduce import regless as regless_results
from gpurf.sim.reproduce.result import Comparison, Plot, Result, Series, Table
from gpurf.sim.reproduce.schema import problems
from gpurf.synth import costs
from gpurf.synth.costs import table
from gpurf.synth.papers import PaperDataError, load_papers, paper_values
from gpurf.synth.regless import fig11_report, fig11_rows

from .test_regless_cost import TINY

SMALL = ["saxpy", "vecadd"]


def run_cli(capsys, *argv):
    with pytest.raises(SystemExit) as done:
        main(list(argv))
    out, err = capsys.readouterr()
    return done.value.code, out, err


@pytest.fixture(scope="module")
def greener():
    return reproduce("greener", "test", kernels=SMALL, latencies=(1, 2))


@pytest.fixture(scope="module")
def written(greener, tmp_path_factory):
    folder = tmp_path_factory.mktemp("greener")
    return folder, write_results(greener, folder)


# -- paper data ------------------------------------------------------------------------------
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_every_mechanism_has_paper_values_with_references(mechanism):
    papers = paper_values(mechanism)
    assert papers.paper and papers.source.endswith(".md")
    for key, value in papers.values.items():
        assert value.key == key and value.ref and value.section and value.what
        assert value.reference.startswith(f"{value.ref}, Section {value.section}")


def test_paper_values_are_the_papers():
    """Spot checks against the papers' text (Fig. 13: +1 % / +27 %; VII-E: 9.9 KB, 13 XOR2;
    6.4: 6,774 per CU; GReEneR Fig. 8: 69.04 %)."""
    subcore = paper_values("subcore")
    assert (subcore["fig13_rba_area"].value, subcore["fig13_cus4_area"].value) == (1, 27)
    assert subcore["fig13_cus4_area"].reference == "Fig. 13, Section VI-B2"
    assert paper_values("wir")["total_kb"].value == 9.9
    assert paper_values("wir")["xor_depth"].value == 13
    assert paper_values("compression")["cu"].value == 1024 * 6 + 35 * 3 * 6
    assert paper_values("greener")["greener_leakage_energy"].value == 69.04


GOOD = """\
paper = "P"
source = "p.md"

[value.a]
value = 1
unit = "%"
what = "w"
ref = "Fig. 1"
section = "2"
"""


@pytest.mark.parametrize(("edit", "expected"), [
    (lambda t: t.replace('ref = "Fig. 1"\n', ""), r":4: \[value.a\]: expected ref = a string"),
    (lambda t: t.replace("value = 1", 'value = "one"'), r":4: .*value must be a number"),
    (lambda t: t.replace("value = 1", "value = true"), r":4: .*value must be a number"),
    (lambda t: t + "approximate = 1\n", r":4: .*approximate must be true or false"),
    (lambda t: t + "page = 3\n", r":4: .*unknown key 'page'"),
    (lambda t: t.replace('source = "p.md"\n', ""), r":1: expected a top-level string source"),
    (lambda t: t.replace("[value.a]", "[values.a]"), r":1: expected one or more \[value.KEY\]"),
    (lambda t: t.replace('unit = "%"', "unit = %"), r"at line 6"),
])
def test_a_broken_paper_file_names_file_line_and_expectation(tmp_path, edit, expected):
    path = tmp_path / "broken.toml"
    path.write_text(edit(GOOD))
    with pytest.raises(PaperDataError, match=rf"^{tmp_path}/broken\.toml.*{expected}"):
        load_papers(path)


def test_the_good_file_loads(tmp_path):
    path = tmp_path / "good.toml"
    path.write_text(GOOD + "approximate = true\n")
    value = load_papers(path)["a"]
    assert value.approximate and value.reference == "Fig. 1, Section 2, read off the plot, " \
                                                    "approximate"


# -- results, JSON and figures ---------------------------------------------------------------
def test_result_json_follows_the_schema(written):
    _, document = written
    assert problems(document) == []
    assert document["provenance"]["versions"]["gpurf"]
    assert [t["name"] for t in document["tables"]] == ["leakage", "optimizations", "wakeup"]
    assert [row["kernel"] for row in document["tables"][0]["rows"]] == [*SMALL, "G.Mean"]


def test_files_are_written(written):
    folder, document = written
    assert json.loads((folder / "result.json").read_text())["mechanism"] == "greener"
    assert (folder / "report.md").read_text().startswith("# greener: ")
    for figure in document["figures"]:
        png, svg = (folder / name for name in figure["files"])
        assert png.read_bytes().startswith(b"\x89PNG") and png.stat().st_size > 1000
        assert "<svg" in svg.read_text() and svg.stat().st_size > 1000


def test_paper_values_stand_beside_gpurf_in_the_figure(written):
    _, document = written
    figure = document["figures"][0]
    assert {line["value"] for line in figure["lines"]} == {69.04, 60.23}


def _broken(document, edit):
    broken = copy.deepcopy(document)
    edit(broken)
    return problems(broken)


@pytest.mark.parametrize(("edit", "expected"), [
    (lambda d: d.pop("provenance"), "document: missing key 'provenance'"),
    (lambda d: d.update(size="huge"), "size: expected one of"),
    (lambda d: d["tables"][0]["rows"][0].pop("kernel"), "tables[0].rows[0]: columns"),
    (lambda d: d["tables"][0]["units"].update(kernel=3), "tables[0].units.kernel: expected str"),
    (lambda d: d["figures"][0]["series"][0]["values"].pop(), "figures[0].series[0]: 2 values"),
    (lambda d: d["comparisons"][0].update(key="nope"), "comparisons[0]: key 'nope'"),
    (lambda d: d["comparisons"][0].update(gpurf=True), "comparisons[0].gpurf: expected int"),
    (lambda d: d["paper"]["values"]["greener_cycles"].pop("ref"), "missing key 'ref'"),
    (lambda d: d.update(extra=1), "unexpected key 'extra'"),
])
def test_the_schema_checker_catches_broken_documents(written, edit, expected):
    _, document = written
    found = _broken(document, edit)
    assert any(expected in problem for problem in found), found


def test_a_result_that_departs_from_the_schema_is_not_written(greener, tmp_path):
    nested = Table("t", "T", {"kernel": ""}, [{"kernel": {"not": "a scalar"}}])
    bad = Result(greener.mechanism, greener.size, greener.papers, [nested], [], [])
    with pytest.raises(ValueError, match=r"departs from the schema: tables\[0\]\.rows\[0\]"):
        write_results(bad, tmp_path)
    assert not (tmp_path / "result.json").exists()


def test_a_comparison_needs_a_paper_value(greener):
    with pytest.raises(ValueError, match=r"'nope' is not a value of synth/papers/greener\.toml"):
        Result("greener", "test", greener.papers, [], [], [Comparison("nope", 1, 1, "", 0, "")])


def test_comparisons_say_matches_or_differs_and_why(greener):
    papers = greener.papers
    same = Comparison("greener_cycles", 0.53, 0.53, "%", 0, "never shown")
    near = Comparison("greener_cycles", 1.0, 0.53, "%", 0.5, "never shown")
    far = Comparison("greener_cycles", 2.0, 0.53, "%", 0.5, "the replay differs")
    assert same.matches and near.matches and not far.matches
    assert far.as_dict(papers)["why"] == "the replay differs"
    assert far.as_dict(papers)["difference"] == pytest.approx(1.47)
    assert near.as_dict(papers)["why"] is None
    text = Result("greener", "test", papers, [], [], [same, near, far]).markdown()
    assert "| matches |" in text and "matches (within ±0.50)" in text
    assert "**differs**: the replay differs" in text and "never shown" not in text


@pytest.mark.parametrize("mean, says", [(2.0, "short and issue-bound"),
                                         (-1.0, "below the paper's: per kernel the cycles "
                                                "change by -2.00 to +1.00 %")])
def test_a_cycle_overhead_that_differs_says_why_for_its_direction(mean, says):
    comparison = greener_results._cycles_comparison("sleep_reg_cycles", mean, [-2.0, 1.0],
                                                    "paper", 1e6)
    assert not comparison.matches and says in comparison.why


def test_tables_and_plots_refuse_inconsistent_shapes():
    with pytest.raises(ValueError, match="row columns"):
        Table("t", "T", {"a": "", "b": ""}, [{"a": 1}])
    with pytest.raises(ValueError, match="2 values for 3 categories"):
        Plot("p", "P", "u", ["x", "y", "z"], [Series("s", "gpurf", [1, 2])])


# -- the command -----------------------------------------------------------------------------
def test_reproduce_command_writes_json_and_figures(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(greener_results, "one_per_kernel", lambda: SMALL)
    monkeypatch.setattr(greener_results, "LATENCIES", (1, 2))
    code, out, err = run_cli(capsys, "reproduce", "greener", "--json", "--out",
                             str(tmp_path / "r"))
    assert code == 0, err
    document = json.loads(out)
    assert problems(document) == []
    figures = ("cycles", "leakage", "optimizations", "wakeup")
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == sorted(
        [*(f"{f}.{k}" for f in figures for k in ("png", "svg")), "report.md", "result.json"])
    assert "gpurf: greener: saxpy" in err


@pytest.mark.parametrize(("argv", "message"), [
    (["reproduce", "nope"], "unknown mechanism 'nope'; results exist for: compression,"),
    (["reproduce", "greener", "--size", "huge"], "Invalid value for '--size'"),
    (["reproduce", "greener", "--cycles", "5"], "No such option '--cycles'"),
    (["reproduce", "wir", "--no-fig11"], "gpurf: --no-fig11 applies to regless, not wir"),
    (["reproduce", "nope", "--no-fig11"], "unknown mechanism 'nope'; results exist for: "),
    (["cost", "flow", "--json"], "no cost report for mechanism 'flow'"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err


@pytest.mark.parametrize(("flags", "synthesized"), [((), True), (("--no-fig11",), False)])
def test_no_fig11_runs_regless_without_its_synthesis(capsys, tmp_path, monkeypatch, flags,
                                                     synthesized):
    """``--no-fig11`` reaches the reproduction as ``fig11=False``: Fig. 11's synthesis (here a
    stand-in that records its call) is not run and its table is not written."""
    calls = []

    def fig11(size, say):
        calls.append(size)
        return Table("fig11", "Fig. 11", {"design": ""}, [{"design": "register file"}]), \
            Plot("fig11", "Fig. 11", "ratio", ["register file"], [Series("s", "gpurf", [1.0])]), []

    runtime = Table("fig16", "Fig. 16", {"kernel": ""}, [{"kernel": "saxpy"}])
    monkeypatch.setattr(regless_results, "runtime_results",
                        lambda size, kernels, say, jobs: ([runtime], [], [], []))
    monkeypatch.setattr(regless_results, "_fig11", fig11)
    code, out, err = run_cli(capsys, "reproduce", "regless", "--kernels", "saxpy", *flags,
                             "--json", "--out", str(tmp_path / "r"))
    assert code == 0, err
    assert calls == (["test"] if synthesized else [])
    tables = [t["name"] for t in json.loads(out)["tables"]]
    assert tables == (["fig16", "fig11"] if synthesized else ["fig16"])


def test_a_mechanism_without_results_is_named(capsys, monkeypatch):
    monkeypatch.setattr(reproduce_package, "MECHANISMS", ("greener",))
    with pytest.raises(NoResultsError, match="'wir' has no paper results to reproduce yet"):
        reproduce("wir")
    code, _, err = run_cli(capsys, "reproduce", "wir")
    assert code == 2 and "has no paper results" in err and err.count("\n") == 1


# -- cost --json -----------------------------------------------------------------------------
def test_cost_json_carries_rows_units_paper_values_and_provenance(tmp_path):
    """(Own build folder: test_regless_cost.py synthesizes the same blocks, maybe at once.)"""
    report = fig11_report(list(fig11_rows(TINY, root=tmp_path)), TINY)
    document = report.as_json()
    assert document["mechanism"] == "regless" and document["kind"] == "cost"
    (fig11,) = document["tables"]
    assert fig11["units"]["total transistors"] == "transistors"
    assert all(list(row) == list(fig11["units"]) for row in fig11["rows"])
    baseline = next(row for row in fig11["rows"] if row["role"] == "baseline")
    assert baseline["total transistors ratio"] == 1.0
    assert document["paper"]["values"]["baseline_registers"]["reference"] == \
        "Fig. 11, Section 6.2"
    assert set(document["provenance"]) == {"versions", "date"}
    json.dumps(document)


def test_cost_tables_refuse_rows_without_their_columns():
    with pytest.raises(ValueError, match="row columns"):
        table("t", {"a": "bits"}, [{"b": 1}])


def test_a_markdown_only_cost_report_still_prints_but_has_no_json(monkeypatch):
    """A new mechanism may start with ``cost_report()`` alone (as tests/toy_mechanism)."""
    markdown_only = types.SimpleNamespace(cost_report=lambda: "| toy |")
    monkeypatch.setattr(costs, "_module", lambda mechanism: markdown_only)
    assert costs.cost_report("toy") == "| toy |"
    with pytest.raises(LookupError, match=r"synth/toy\.py gives cost_report\(\) but no cost_data"):
        costs.cost_json("toy")


def test_regless_checks_the_papers_claim_on_its_rows(monkeypatch, tmp_path):
    """Fig. 11 has no numbers: no comparison, the paper's statement, and whether gpurf's
    OSU rows grow with capacity (tiny configurations, as tests/test_regless_cost.py)."""
    monkeypatch.setitem(regless_results.SETUPS, "test", TINY)
    monkeypatch.setattr(verilog, "BUILD_ROOT", tmp_path / "build")
    result = reproduce("regless", "test", kernels=[])
    assert result.comparisons == []
    assert "logic transistors grow with capacity: yes; memory bits: yes" in result.notes[1]
    document = write_results(result, tmp_path)
    assert problems(document) == []
    (figure,) = document["figures"]
    assert figure["lines"] == [] and {s["source"] for s in figure["series"]} == {"gpurf"}
    baseline = figure["categories"].index("register file")
    assert all(s["values"][baseline] == 1.0 for s in figure["series"])
