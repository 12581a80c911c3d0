"""``gpurf sweep`` and ``gpurf stats``: a sweep on a 2-worker local Dask cluster equals the
serial run, re-runs skip finished points, failing points are recorded and the sweep goes on,
every rule of the specification gives ``file:line`` and exit 2, the stats CSV of a 2 x 2 x 2
grid, and the job script a batch cluster would submit."""

import csv
import io
import json
import os
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from gpurf.sim.cli import main
from gpurf.sim.sweep import ClusterSpec, connect, load_spec, run_points
from gpurf.sim.sweep import records as records_module
from gpurf.sim.sweep.compute import COMPUTE
from gpurf.sim.sweep.lines import line_of
from gpurf.sim.sweep.records import RECORD, point_key, read_record, record_path
from gpurf.sim.sweep.stats import flatten, gather

EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"
GRID = (EXAMPLES / "sweep.toml").read_text()
"""docs/examples/sweep.toml: 2 kernels x 2 configurations x 2 mechanisms, size test, 8
points of a fraction of a second each."""


def run_cli(capsys, *argv):
    with pytest.raises(SystemExit) as done:
        main([str(arg) for arg in argv])
    out, err = capsys.readouterr()
    return done.value.code, out, err


def write(folder, text, name="spec.toml"):
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


def comparable(record: dict) -> dict:
    """A record without what differs between two runs of one point: its wall time and
    the date."""
    return {**record, "seconds": None, "provenance": {**record["provenance"], "date": None}}


def records_by_key(folder) -> dict[str, dict]:
    return {r["key"]: r for r in (read_record(p) for p in folder.rglob(RECORD))}


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    """The 2 x 2 x 2 grid run serially: its spec and its records folder."""
    folder = tmp_path_factory.mktemp("serial")
    spec = write(folder, GRID)
    outcome = run_points(load_spec(spec).points, folder / "out")
    assert len(outcome.records) == 8 and not outcome.failed
    return spec, folder / "out"


# -- a sweep on Dask ------------------------------------------------------------------------
def test_local_cluster_of_two_workers_equals_the_serial_run(serial, tmp_path):
    spec, serial_out = serial
    client, cluster = connect(ClusterSpec(), workers=2)
    try:
        assert len(client.scheduler_info()["workers"]) == 2
        outcome = run_points(load_spec(spec).points, tmp_path, client=client)
    finally:
        client.close()
        cluster.close()
    assert len(outcome.records) == 8 and not outcome.failed
    on_dask, alone = records_by_key(tmp_path), records_by_key(serial_out)
    assert set(on_dask) == set(alone)
    for key, record in on_dask.items():
        assert comparable(record) == comparable(alone[key]), record["axes"]
    cycles = {r["results"]["timing"]["cycles"] for r in alone.values()}
    assert len(cycles) > 1, "the grid's points must differ, or equal records prove nothing"


def test_the_command_runs_a_local_cluster_then_skips_what_it_finished(capsys, tmp_path):
    spec = write(tmp_path, '[sm]\nkernels = ["saxpy", "fma_subcore/balanced"]\n')
    code, out, _ = run_cli(capsys, "sweep", spec, "--workers", "2", "--out", tmp_path / "out")
    assert code == 0
    assert f"2 points from {spec} on a local cluster; records in {tmp_path / 'out'}" in out
    assert out.count("\nok   sm    kernel=") == 2
    assert "2 run, 0 skipped (finished), 0 failed" in out
    code, out, _ = run_cli(capsys, "sweep", spec, "--out", tmp_path / "out")
    assert code == 0 and "0 run, 2 skipped (finished), 0 failed" in out


def test_comparable_records_differ_when_a_result_does(serial):
    _, out = serial
    record = next(iter(records_by_key(out).values()))
    broken = json.loads(json.dumps(record))
    broken["results"]["timing"]["cycles"] += 1
    assert comparable(broken) != comparable(record)


def test_a_failing_point_is_recorded_and_the_sweep_goes_on_exit_1(capsys, tmp_path,
                                                                   monkeypatch):
    """On a scheduler whose workers are threads of this process, so the broken computation
    reaches them; also the --scheduler path."""
    from distributed import LocalCluster

    real = COMPUTE["sm"]

    def broken(inputs, work):
        if inputs["kernel"] == "saxpy":
            raise RuntimeError("broken\nmodel")
        return real(inputs, work)

    monkeypatch.setitem(COMPUTE, "sm", broken)
    spec = write(tmp_path, GRID)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=":0") as cluster:
        code, out, err = run_cli(capsys, "sweep", spec, "--scheduler", cluster.scheduler_address,
                                 "--out", tmp_path / "out")
    assert code == 1
    assert "8 run, 0 skipped (finished), 4 failed" in out
    assert err.count("failed: ") == 4 and "RuntimeError: broken model" in err
    statuses = {(r["axes"]["kernel"], r["status"]) for r in records_by_key(tmp_path / "out")
                .values()}
    assert statuses == {("saxpy", "failed"), ("fma_subcore/unbalanced", "ok")}


def test_a_task_that_dies_gets_its_failure_record_from_the_client(tmp_path, monkeypatch):
    """A task that raises outside the point's own handling (a worker killed, out of
    memory) still leaves a record, written by the client."""
    from distributed import Client, LocalCluster

    def lost(point, key, out, versions):
        raise OSError("worker lost")

    monkeypatch.setattr("gpurf.sim.sweep.execute", lost)
    spec = write(tmp_path, '[sm]\nkernels = ["saxpy"]\n')
    with (LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                       dashboard_address=":0") as cluster, Client(cluster) as client):
        (record,) = run_points(load_spec(spec).points, tmp_path / "out", client=client).records
    assert record["status"] == "failed" and record["error"] == "OSError: worker lost"
    assert read_record(record_path(tmp_path / "out", record["key"])) == record


def test_a_worker_with_other_tools_records_a_failure_and_computes_nothing(tmp_path,
                                                                           monkeypatch):
    from gpurf.sim.provenance import tool_versions

    def computed(inputs, work):
        raise AssertionError("a point was computed with tools other than its key's")

    monkeypatch.setitem(COMPUTE, "sm", computed)
    (point,) = load_spec(write(tmp_path, '[sm]\nkernels = ["saxpy"]\n')).points
    sweep_versions = {**tool_versions(), "revision": "0123456789ab"}
    record = records_module.execute(point, "k", tmp_path, sweep_versions)
    assert record["status"] == "failed"
    assert record["error"] == ("this worker's tools differ from the sweep's: revision "
                               f"{tool_versions()['revision']} here, 0123456789ab in the key")


def test_a_mismatch_against_the_reference_fails_the_point(tmp_path, monkeypatch):
    from gpurf.sim.sm import run as sm_run

    real = sm_run.run_kernel

    def wrong_outputs(*args, **kwargs):
        result = real(*args, **kwargs)
        for value in result.outputs.values():
            value.flat[0] += 1
        return result

    monkeypatch.setattr("gpurf.sim.sm.run_kernel", wrong_outputs)
    spec = write(tmp_path, '[sm]\nkernels = ["saxpy"]\n')
    (record,) = run_points(load_spec(spec).points, tmp_path / "out").records
    assert record["status"] == "failed"
    assert record["error"].startswith("outputs differ from the numpy reference: ")
    assert record["results"]["passed"] is False


# -- re-runs --------------------------------------------------------------------------------
def test_a_rerun_skips_finished_points_and_reruns_the_rest(serial, tmp_path):
    spec, serial_out = serial
    out = tmp_path / "out"
    shutil.copytree(serial_out, out)
    points = load_spec(spec).points
    again = run_points(points, out)
    assert again.records == [] and len(again.skipped) == 8

    deleted, failed, torn = (record_path(out, point_key(p)) for p in points[:3])
    deleted.unlink()
    marked = read_record(failed)
    failed.write_text(json.dumps({**marked, "status": "failed"}))
    torn.write_text(torn.read_text()[:100])
    rerun = run_points(points, out)
    assert {r["key"] for r in rerun.records} == {p.parent.name for p in (deleted, failed, torn)}
    assert len(rerun.skipped) == 5
    assert all(read_record(p)["status"] == "ok" for p in (deleted, failed, torn))


def test_a_point_named_twice_runs_once(tmp_path):
    spec = write(tmp_path, """\
        [sm]
        kernels = ["saxpy"]
        [sm.config]
        preset = ["v100"]
        cus = [2]
        [[blocks]]
        block = "subcore.warp_selector"
        [blocks.params]
        slots = 4
        [[blocks]]
        block = "subcore.warp_selector"
        [blocks.params]
        slots = [4, 8]
    """)
    points = load_spec(spec).points
    assert len(points) == 4
    outcome = run_points(points, tmp_path / "out")
    assert len(outcome.records) == 3 and not outcome.failed


def test_a_record_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    def interrupted(source, target):
        raise KeyboardInterrupt

    monkeypatch.setattr(records_module.os, "replace", interrupted)
    path = tmp_path / "k" / RECORD
    with pytest.raises(KeyboardInterrupt):
        records_module.write_record(path, {"schema": "x"})
    assert os.listdir(tmp_path / "k") == []


def test_the_blocks_example_expands_to_its_grid():
    points = load_spec(EXAMPLES / "blocks.toml").points
    assert [(p.kind, p.axes["slots"], p.axes.get("seed")) for p in points] == [
        ("synth", 8, None), ("cosim", 8, 1), ("cosim", 8, 2),
        ("synth", 16, None), ("cosim", 16, 1), ("cosim", 16, 2)]
    assert all(p.inputs["params"]["policy"] == "rba" for p in points)


def test_the_key_changes_with_inputs_and_tool_versions(serial):
    spec, _ = serial
    first, second = load_spec(spec).points[:2]
    versions = {"gpurf": "0.1.0", "revision": "abc"}
    assert point_key(first, versions) != point_key(second, versions)
    assert point_key(first, versions) != point_key(first, {**versions, "revision": "abd"})
    assert point_key(first, versions) == point_key(first, dict(versions))


# -- the specification's rules --------------------------------------------------------------
BAD_SPECS = [
    ('[sm]\nkernels = ["saxpy"\n', 2, "invalid TOML"),
    ('colour = 1\n[sm]\nkernels = ["saxpy"]\n', 1, "unknown key 'colour'"),
    ('description = 3\n[sm]\nkernels = ["saxpy"]\n', 1, "description must be a string"),
    ('description = "nothing"\n', 1, "nothing to sweep"),
    ('[sm]\nkernel = ["saxpy"]\n', 2, "unknown key 'kernel' in sm"),
    ('[sm]\nsize = "test"\n', 1, "[sm] needs kernels"),
    ('[sm]\nkernels = []\n', 2, "sm.kernels is an empty list"),
    ('[sm]\nkernels = ["saxpy", "nope"]\n', 2, "'nope' is not one of"),
    ('[sm]\nkernels = ["saxpy", "saxpy"]\n', 2, "sm.kernels repeats 'saxpy'"),
    ('[sm]\nkernels = [1]\n', 2, "sm.kernels must be a string, not 1"),
    ('[sm]\nkernels = [["saxpy"]]\n', 2, "must hold numbers, strings or booleans"),
    ('[sm]\nkernels = ["saxpy"]\nsize = "huge"\n', 3, "'huge' is not one of test, paper"),
    ('[sm]\nkernels = ["saxpy"]\nmechanisms = ["regless"]\n', 3,
     "mechanism 'regless' cannot be swept on the SM; allowed: baseline, subcore; not in the "
     "golden SM yet: compression, greener, regless, wir"),
    ('[sm]\nkernels = ["saxpy"]\nmechanisms = ["magic"]\n', 3, "mechanism 'magic' cannot"),
    ('[sm]\nkernels = ["saxpy"]\nmechanisms = ["subcore"]\n[sm.config]\nscheduler = "gto"\n',
     3, "mechanism 'subcore' sets scheduler, which [sm.config] sets too"),
    ('[sm]\nkernels = ["saxpy"]\n[sm.config]\nbankz = 2\n', 4, "unknown key 'bankz'"),
    ('[sm]\nkernels = ["saxpy"]\n[sm.config]\npreset = "v100"\ncus = [2, 0]\n', 5,
     "cus must be an integer in 1..8, not 0"),
    ('[sm]\nkernels = ["saxpy"]\n[sm.config]\npreset = "fermi"\nassign = ["rr", "srr"]\n', 5,
     "[sm.config] preset=fermi, assign=srr (mechanism baseline): assign srr needs 4"),
    ('[sm]\nkernels = ["saxpy"]\nconfig = 3\n', 3, "sm.config must be a table"),
    ('[blocks]\nblock = "subcore.warp_selector"\n', 1, "blocks must be tables [[blocks]]"),
    ('[[blocks]]\nflows = ["synth"]\n', 1, "blocks[0] needs block"),
    ('[[blocks]]\nblock = "subcore.nope"\n', 2, "'subcore.nope' is not one of"),
    ('[[blocks]]\nblock = ["subcore.warp_selector", "subcore.rba_scorer"]\n', 2,
     "blocks[0].block must be one string, not ["),
    ('[[blocks]]\nblock = "subcore.warp_selector"\nflows = ["synth", "lint"]\n', 3,
     "'lint' is not one of synth, cosim"),
    ('[[blocks]]\nblock = "subcore.warp_selector"\n[blocks.cosim]\ncycles = 10\n', 3,
     "has a cosim table but its flows do not include cosim"),
    ('[[blocks]]\nblock = "subcore.warp_selector"\n[blocks.params]\nslotz = 4\n', 4,
     "unknown key 'slotz' in blocks[0].params"),
    ('[[blocks]]\nblock = "subcore.rba_scorer"\n[[blocks]]\nblock = "subcore.warp_selector"\n'
     '[blocks.params]\nslots = [4, 0]\n', 6, "subcore.warp_selector (slots=0): slots must"),
    ('[[blocks]]\nblock = "subcore.warp_selector"\nflows = "cosim"\n[blocks.cosim]\n'
     'sim = "modelsim"\n', 5, "'modelsim' is not one of icarus, verilator"),
    ('[[blocks]]\nblock = "subcore.warp_selector"\nflows = "cosim"\n[blocks.cosim]\n'
     'cycles = [100, 0]\n', 5, "cycles must be >= 1, not 0"),
    ('[[blocks]]\nblock = "subcore.warp_selector"\nflows = "cosim"\n[blocks.cosim]\n'
     'seed = "one"\n', 5, "blocks[0].cosim.seed must be an integer"),
    ('[sm]\nkernels = ["saxpy"]\n[cluster]\nkind = "kubernetes"\n', 4,
     "'kubernetes' is not one of local, slurm"),
    ('[sm]\nkernels = ["saxpy"]\n[cluster]\nkind = "slurm"\njobs = 0\n', 5,
     "cluster.jobs must be an integer >= 1, not 0"),
    ('[sm]\nkernels = ["saxpy"]\n[cluster]\nworkers = true\n', 4,
     "cluster.workers must be an integer >= 1, not True"),
    ('[sm]\nkernels = ["saxpy"]\n[cluster]\njobs = 2\n', 4,
     "cluster.jobs is for a batch cluster"),
    ('[sm]\nkernels = ["saxpy"]\n[cluster]\nkind = "slurm"\nworkers = 2\n', 5,
     "cluster.workers is for kind = local"),
]


@pytest.mark.parametrize(("text", "line", "message"), BAD_SPECS,
                         ids=[m for _, _, m in BAD_SPECS])
def test_a_bad_spec_is_one_line_naming_its_line_exit_2(capsys, tmp_path, text, line, message):
    spec = write(tmp_path, text)
    code, out, err = run_cli(capsys, "sweep", spec, "--out", tmp_path / "out")
    assert code == 2, err
    assert err.startswith(f"gpurf: {spec}:{line}: ") and err.count("\n") == 1, err
    assert message in err
    assert out == "" and not (tmp_path / "out").exists()


def test_an_unknown_batch_option_names_its_line(capsys, tmp_path):
    pytest.importorskip("dask_jobqueue", reason="the cluster extra is not installed "
                                                "(pip install -e '.[cluster]')")
    spec = write(tmp_path, '[sm]\nkernels = ["saxpy"]\n[cluster]\nkind = "slurm"\n'
                           '[cluster.options]\nqueue = "a"\npartition = "b"\n')
    code, _, err = run_cli(capsys, "sweep", spec)
    assert code == 2
    assert err.startswith(f"gpurf: {spec}:7: unknown key 'partition' in cluster.options")
    assert "(expected an option of dask-jobqueue's slurm cluster: account, cores," in err
    assert ", queue," in err


@pytest.mark.parametrize(("options", "message"), [
    ('cores = 2\n', "You must specify how much cores and memory per job"),
    ('cores = 2\nmemory = "4GB"\nprocesses = "two"\n', "TypeError"),
])
def test_batch_options_dask_jobqueue_rejects_name_their_table(capsys, tmp_path, options,
                                                              message):
    pytest.importorskip("dask_jobqueue", reason="the cluster extra is not installed "
                                                "(pip install -e '.[cluster]')")
    spec = write(tmp_path, '[sm]\nkernels = ["saxpy"]\n[cluster]\nkind = "slurm"\n'
                           f'[cluster.options]\n{options}')
    code, _, err = run_cli(capsys, "sweep", spec)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"gpurf: {spec}:5: dask-jobqueue rejects the slurm options (")
    assert message in err


def test_a_batch_cluster_without_the_extra_is_one_line(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "dask_jobqueue", None)
    spec = write(tmp_path, '[sm]\nkernels = ["saxpy"]\n[cluster]\nkind = "pbs"\n')
    code, _, err = run_cli(capsys, "sweep", spec)
    assert code == 2
    assert err == (f"gpurf: {spec}:4: kind = 'pbs': dask-jobqueue is not installed; a batch "
                   f"cluster needs the cluster extra: pip install -e '.[cluster]'\n")


@pytest.mark.parametrize(("cluster", "options", "message"), [
    ("", ["--workers", "2", "--scheduler", "tcp://127.0.0.1:1"], "with --scheduler"),
    ('[cluster]\nkind = "slurm"\n', ["--workers", "2"], "the spec asks for a slurm cluster"),
])
def test_options_that_do_not_apply_are_usage_errors(capsys, tmp_path, monkeypatch, cluster,
                                                    options, message):
    monkeypatch.setattr("gpurf.sim.sweep.spec.job_options", lambda kind: [])
    monkeypatch.setattr("gpurf.sim.sweep.spec.job_script", lambda kind, options: "")
    spec = write(tmp_path, f'[sm]\nkernels = ["saxpy"]\n{cluster}')
    code, _, err = run_cli(capsys, "sweep", spec, *options)
    assert code == 2 and message in err and err.count("\n") == 1


def test_lines_of_array_tables_dotted_and_quoted_keys():
    text = textwrap.dedent("""\
        [sm]
        kernels = [
          "saxpy",
        ]
        [[blocks]]
        block = "a"
        [[blocks]]
        block = "b"
        [blocks.params]
        "slots" = 4
        cosim.seed = 1
    """)
    assert line_of(text, ("sm", "kernels")) == 2
    assert line_of(text, ("blocks", 1, "block")) == 8
    assert line_of(text, ("blocks", 1, "params", "slots")) == 10
    assert line_of(text, ("blocks", 1, "params", "nothing")) == 9
    assert line_of(text, ("blocks", 1, "params", "cosim", "seed")) == 11
    assert line_of(text, ("blocks", 0, "params")) == 5
    assert line_of(text, ("cluster",)) == 1


# -- gpurf stats ----------------------------------------------------------------------------
def test_stats_csv_of_the_2x2x2_grid_has_8_rows_and_the_axes(capsys, serial, tmp_path):
    _, out = serial
    target = tmp_path / "grid.csv"
    code, _, err = run_cli(capsys, "stats", out, "--csv", target)
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(target.read_text())))
    assert len(rows) == 8
    columns = list(rows[0])
    assert columns[:7] == ["key", "kind", "status", "kernel", "size", "mechanism", "preset"]
    for column in ("passed", "warp_instructions", "timing.cycles", "timing.ipc",
                   "timing.issued.0", "timing.issued.3", "timing.bank_conflicts",
                   "timing.stalls.barrier", "mismatches.y", "seconds", "error"):
        assert column in columns
    assert columns[-2:] == ["seconds", "error"]
    assert columns.index("mismatches.y") == columns.index("mismatches.out") + 1
    grid = {(r["kernel"], r["preset"], r["mechanism"]) for r in rows}
    assert grid == {(k, p, m) for k in ("saxpy", "fma_subcore/unbalanced")
                    for p in ("v100", "gtx980") for m in ("baseline", "subcore")}
    assert {r["status"] for r in rows} == {"ok"}


def test_flatten_names_nested_tables_and_lists():
    assert flatten({"a": {"b": [1, {"c": 2}]}, "d": None}) == {"a.b.0": 1, "a.b.1.c": 2,
                                                               "d": None}


def test_stats_rows_sort_numbers_by_value(serial, tmp_path):
    _, out = serial
    record = next(iter(records_by_key(out).values()))
    for slots in (16, 8, 4):
        folder = tmp_path / str(slots)
        folder.mkdir()
        (folder / RECORD).write_text(json.dumps({**record, "axes": {"slots": slots}}))
    assert [r["axes"]["slots"] for r in gather(tmp_path).records] == [4, 8, 16]


def test_stats_names_each_bad_record_and_exits_1(capsys, serial, tmp_path):
    _, out = serial
    shutil.copytree(out, tmp_path / "out")
    (tmp_path / "out" / "junk").mkdir()
    (tmp_path / "out" / "junk" / RECORD).write_text("{not json")
    (tmp_path / "out" / "other").mkdir()
    (tmp_path / "out" / "other" / RECORD).write_text('{"schema": "something else"}')
    key = next(iter(records_by_key(out)))
    cut = read_record(tmp_path / "out" / key / RECORD)
    del cut["results"]
    (tmp_path / "out" / key / RECORD).write_text(json.dumps(cut))
    code, csv_text, err = run_cli(capsys, "stats", tmp_path / "out")
    assert code == 1
    assert len(list(csv.DictReader(io.StringIO(csv_text)))) == 7
    assert f"gpurf: {tmp_path / 'out' / 'junk' / RECORD}: not a sweep record" in err
    assert f"gpurf: {tmp_path / 'out' / 'other' / RECORD}: not a sweep record" in err
    assert f"gpurf: {tmp_path / 'out' / key / RECORD}: sweep record without results" in err
    assert len(gather(tmp_path / "out").bad) == 3


def test_stats_of_a_folder_without_records_is_bad_input(capsys, tmp_path):
    code, _, err = run_cli(capsys, "stats", tmp_path)
    assert code == 2 and err == f"gpurf: {tmp_path}: no sweep records (record.json) under it\n"


# -- a batch cluster ------------------------------------------------------------------------
def test_slurm_job_script_from_the_spec(tmp_path):
    pytest.importorskip("dask_jobqueue", reason="the cluster extra is not installed "
                                                "(pip install -e '.[cluster]')")
    from gpurf.sim.sweep.cluster import jobqueue_cluster

    spec = write(tmp_path, """\
        [sm]
        kernels = ["saxpy"]
        [cluster]
        kind = "slurm"
        jobs = 3
        [cluster.options]
        queue = "gpu-sim"
        account = "rf-lab"
        cores = 4
        memory = "8GB"
        walltime = "02:00:00"
        job_extra_directives = ["--constraint=avx2"]
        scheduler_options = { dashboard_address = ":0" }
    """)
    plan = load_spec(spec)
    assert plan.cluster.kind == "slurm" and plan.cluster.jobs == 3
    cluster = jobqueue_cluster(plan.cluster)
    try:
        script = cluster.job_script()
    finally:
        cluster.close()
    for line in ("#SBATCH -p gpu-sim", "#SBATCH -A rf-lab", "#SBATCH -n 1",
                 "#SBATCH --cpus-per-task=4", "#SBATCH -t 02:00:00",
                 "#SBATCH --constraint=avx2"):
        assert line in script.splitlines(), script
    assert "--mem=" in script
    assert f"{sys.executable} -m distributed.cli.dask_worker" in script
    assert "--nworkers 4" in script and "--nthreads 1" in script
