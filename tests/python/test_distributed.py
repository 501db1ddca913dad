"""The ranks of a distributed job from Python: two real processes started as ranks 0 and 1
(RANK/WORLD_SIZE, as torchrun sets them), each recording its steps and a collective whose
members really wait for each other (a barrier on files), rank 1 made late by a known sleep;
then Profile.ranks, nnprof.merge_ranks and Profile.analyze_ranks on what they wrote."""
import os
import subprocess
import sys
import textwrap

import pytest

import nnprof

LATE_S = 0.06  # rank 1's extra work per step: what rank 0 waits at each collective
STEPS = 4

RANK_SCRIPT = textwrap.dedent("""
    import os, sys, time
    import nnprof

    rank, directory = int(os.environ["RANK"]), sys.argv[1]
    late = float(sys.argv[2]) if rank == 1 else 0.0

    def barrier(step):
        # Both members must arrive before either leaves, as at an allreduce.
        open(os.path.join(directory, f"arrived.{step}.{rank}"), "w").close()
        other = os.path.join(directory, f"arrived.{step}.{1 - rank}")
        deadline = time.monotonic() + 30
        while not os.path.exists(other):
            if time.monotonic() > deadline:
                sys.exit("the other rank never arrived")
            time.sleep(0.0005)

    # Both processes started, imported nnprof and are ready before the first step: otherwise
    # rank 0's first wait also holds rank 1's start-up (126 ms against 60 once, under load).
    barrier("start")
    for step in range(int(sys.argv[3])):
        with nnprof.scope("train_step"):
            with nnprof.scope("forward"):
                time.sleep(0.01 + late)
            with nnprof.scope("all_reduce") as collective:
                collective.arg("collective", "allreduce")
                collective.arg("group", "world")
                collective.arg("seq", step)
                collective.arg("bytes", 4096)
                collective.arg("group_size", 2)
                barrier(step)
    nnprof.save(os.path.join(directory, f"rank{rank}.nnprof"))
""")


@pytest.fixture(scope="module")
def rank_files(tmp_path_factory):
    directory = tmp_path_factory.mktemp("ranks")
    script = directory / "rank.py"
    script.write_text(RANK_SCRIPT)
    ranks = []
    for rank in (0, 1):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK=str(rank))
        env.pop("NNPROF_OUTPUT", None)
        ranks.append(subprocess.Popen([sys.executable, str(script), str(directory), str(LATE_S), str(STEPS)], env=env))
    for p in ranks:
        assert p.wait(timeout=120) == 0
    return [str(directory / "rank0.nnprof"), str(directory / "rank1.nnprof")], directory


def test_each_rank_profile_says_which_rank_it_is(rank_files):
    paths, _ = rank_files
    for number, path in enumerate(paths):
        profile = nnprof.load(path)
        assert len(profile.ranks) == 1
        rank = profile.ranks[0]
        assert rank["rank"] == number and rank["world_size"] == 2 and rank["local_rank"] == number
        assert rank["pid"] > 0 and rank["hostname"]
        assert all(t["rank"] == number for t in profile.threads)
    # A process that was no rank has none, and its threads none.
    plain = nnprof.Profiler()
    with plain.scope("alone"):
        pass
    snapshot = plain.snapshot()
    assert snapshot.ranks == []
    assert all(t["rank"] is None for t in snapshot.threads)


def test_merged_ranks_name_the_late_rank_and_the_wait_it_caused(rank_files):
    paths, directory = rank_files
    job = str(directory / "job.nnprof")
    result = nnprof.merge_ranks(paths, job)
    assert result["world_size"] == 2 and result["ranks_merged"] == 2 and result["missing_ranks"] == []
    assert result["collectives"] == STEPS
    merged = nnprof.load(job)
    assert [r["rank"] for r in merged.ranks] == [0, 1]
    assert {t["rank"] for t in merged.threads} == {0, 1}

    analysis = merged.analyze_ranks()
    assert analysis["step"] == "train_step"
    assert analysis["steps"] == STEPS
    assert analysis["straggler"] == 1
    by_rank = {r["rank"]: r for r in analysis["ranks"]}
    # Rank 0 waits at every collective for rank 1's extra sleep; rank 1 hardly waits.
    for step in by_rank[0]["steps"]:
        assert LATE_S - 0.02 <= step["wait_ns"] / 1e9 <= LATE_S + 0.1, step
    assert by_rank[1]["wait_ns"] < by_rank[0]["wait_ns"] / 4
    assert by_rank[1]["caused_wait_ns"] == pytest.approx(by_rank[0]["wait_ns"], rel=0.05)
    assert by_rank[1]["straggler_vs_fastest"] > 1.0  # 70 ms of own work per step against 10 ms
    top_wait = analysis["waits"][0]
    assert (top_wait["waiter"], top_wait["waited_for"], top_wait["operation"]) == (0, 1, "allreduce")
    assert top_wait["calls"] == STEPS
    for call in analysis["collectives"]:
        assert call["last_rank"] == 1 and len(call["arrivals"]) == 2

    # The slowest step's critical path runs through rank 1's forward, not rank 0's wait.
    path = analysis["critical_path"]
    assert path["segments"] and path["duration_ns"] > 0
    compute = [s for s in path["segments"] if s["kind"] == "compute"]
    assert any(s["rank"] == 1 and s["name"] == "forward" and s["duration_ns"] >= LATE_S * 1e9 * 0.9 for s in compute)
    assert not any(s["rank"] == 0 and s["name"] == "forward" for s in compute)
    assert sum(s["duration_ns"] for s in path["segments"]) == path["duration_ns"]
    first = merged.rank_critical_path(0)
    assert first["step"] == 0 and first["segments"]


def test_merge_errors_say_what_to_do(rank_files, tmp_path):
    paths, _ = rank_files
    with pytest.raises(nnprof.Error, match="two or more ranks"):
        nnprof.merge_ranks([paths[0]], str(tmp_path / "one.nnprof"))
    with pytest.raises(nnprof.Error, match="appears twice"):
        nnprof.merge_ranks([paths[0], paths[1], paths[1]], str(tmp_path / "dup.nnprof"))
    assert not (tmp_path / "dup.nnprof").exists()
    plain = nnprof.Profiler()
    with plain.scope("alone"):
        pass
    with pytest.raises(nnprof.Error, match="no ranks|records no rank|not a merge|ranks"):
        plain.snapshot().analyze_ranks()
