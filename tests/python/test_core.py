"""The C++ profiler from Python: scopes, the decorator, snapshots, files, reports, errors and
CPU sampling, with exact counts where the program determines them."""
import hashlib
import json
import os
import pathlib
import subprocess
import sys
import threading
import time

import pytest

import nnprof


def nodes_by_path(profile):
    return {n["path"]: n for n in profile.call_tree if n["id"] != 0}


def test_scopes_nest_with_exact_counts():
    p = nnprof.Profiler()
    for _ in range(3):
        with p.scope("epoch"):
            for _ in range(4):
                with p.scope("step"):
                    with p.scope("forward"):
                        pass
                    with p.scope("backward"):
                        pass
    tree = nodes_by_path(p.snapshot())
    assert set(tree) == {"epoch", "epoch > step", "epoch > step > forward", "epoch > step > backward"}
    assert tree["epoch"]["calls"] == 3
    assert tree["epoch > step"]["calls"] == 12
    assert tree["epoch > step > forward"]["calls"] == 12
    assert tree["epoch > step"]["parent"] == tree["epoch"]["id"]
    assert tree["epoch"]["depth"] == 1 and tree["epoch > step > backward"]["depth"] == 3
    assert p.call_count("step") == 12


def test_global_scope_records_into_the_global_profiler():
    with nnprof.scope("core_test_global_outer"):
        with nnprof.scope("core_test_global_inner"):
            pass
    profile = nnprof.snapshot()
    assert profile.scope("core_test_global_outer")["calls"] == 1
    assert "core_test_global_outer > core_test_global_inner" in nodes_by_path(profile)
    assert nnprof.global_profiler() is nnprof.global_profiler()


def test_scope_measures_the_time_of_its_block():
    import time
    p = nnprof.Profiler()
    with p.scope("sleep"):
        time.sleep(0.02)
    s = p.snapshot().scope("sleep")
    assert 0.019e9 < s["total_ns"] < 0.2e9
    assert s["total_ns"] == s["time"]["sum_ns"] and s["calls"] == 1
    assert 0.019 < p.total_time("sleep") < 0.2


def test_decorator_with_and_without_a_name():
    p = nnprof.Profiler()

    @nnprof.profile(profiler=p)
    def plain(x):
        """Doubles."""
        return 2 * x

    @nnprof.profile("named_step", profiler=p)
    def named():
        return plain(1)

    @nnprof.profile(name="fib", profiler=p)
    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    assert plain(3) == 6 and named() == 2 and fib(10) == 55
    assert plain.__name__ == "plain" and plain.__doc__ == "Doubles." and plain.__wrapped__ is not None
    profile = p.snapshot()
    qualname = "test_decorator_with_and_without_a_name.<locals>.plain"
    assert profile.scope(qualname)["calls"] == 2
    assert profile.scope("named_step")["calls"] == 1
    assert f"named_step > {qualname}" in nodes_by_path(profile)
    assert profile.scope("fib")["calls"] == 177  # calls of a naive fib(10)


def test_decorator_on_the_global_profiler_and_on_methods():
    class Model:
        @nnprof.profile
        def forward(self, x):
            return x + 1

    assert Model().forward(1) == 2 and Model().forward(2) == 3
    assert nnprof.snapshot().scope(
        "test_decorator_on_the_global_profiler_and_on_methods.<locals>.Model.forward")["calls"] == 2


def test_an_exception_closes_the_scope_and_keeps_its_data():
    p = nnprof.Profiler()

    @nnprof.profile("failing", profiler=p)
    def failing():
        with p.scope("inside"):
            raise KeyError("boom")

    with pytest.raises(KeyError):
        with p.scope("outer"):
            failing()
    with p.scope("after"):
        pass
    profile = p.snapshot()
    tree = nodes_by_path(profile)
    assert tree["outer > failing > inside"]["calls"] == 1
    assert "after" in tree  # at the top level: nothing was left open
    assert profile.diagnostics == []


def test_scope_objects():
    p = nnprof.Profiler()
    s = p.scope("reused")
    assert isinstance(s, nnprof.Scope) and s.name == "reused" and not s.open
    for _ in range(5):
        with s as entered:
            assert entered is s and s.open
            s.add_flops(1e6, 1000)
            s.arg("batch", 32)
    with s:
        with pytest.raises(RuntimeError, match="already open"):
            s.__enter__()
    stats = p.snapshot().scope("reused")
    assert stats["calls"] == 6
    assert stats["flops"] == 5e6 and stats["bytes"] == 5000


def test_start_stop_flops_items_annotations():
    p = nnprof.Profiler()
    p.annotate("git_commit", "8d2e793")
    p.start("matmul")
    p.add_flops(2e9, 3_000_000)
    p.stop("matmul")
    p.add_items("matmul", 64)
    profile = p.snapshot()
    s = profile.scope("matmul")
    assert s["calls"] == 1 and s["flops"] == 2e9 and s["bytes"] == 3_000_000 and s["items"] == 64
    assert profile.annotations["git_commit"] == "8d2e793"
    assert p.stats("matmul")["calls"] == 1 and p.stats("nothing") is None


def test_threads_record_their_own_scopes():
    p = nnprof.Profiler()

    def work():
        for _ in range(10):
            with p.scope("worker_step"):
                pass

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    s = p.snapshot().scope("worker_step")
    assert s["calls"] == 40 and s["thread_count"] == 4


def test_wrong_arguments_are_clear_errors():
    with pytest.raises(TypeError, match="scope name must be a str"):
        nnprof.scope(3)
    with pytest.raises(ValueError, match="must not be empty"):
        nnprof.scope("")
    with pytest.raises(ValueError, match="memory_cap_bytes"):
        nnprof.Profiler(memory_cap_bytes=0)
    with pytest.raises(ValueError, match="keep-first"):
        nnprof.Profiler(policy="newest")
    with pytest.raises(TypeError, match="coroutine or generator"):
        @nnprof.profile
        async def coroutine():
            pass
    with pytest.raises(TypeError, match="unknown bottleneck threshold 'slowness'"):
        nnprof.Profiler().snapshot().bottlenecks(slowness=1)
    with pytest.raises(ValueError, match="annotation key"):
        nnprof.Profiler().annotate("", "x")
    with pytest.raises(ValueError, match="unknown report format"):
        nnprof.Profiler().report("out.txt", format="word")


def recorded_profile():
    p = nnprof.Profiler()
    for _ in range(3):
        with p.scope("train_step"):
            with p.scope("forward"):
                p.add_flops(1e6, 4096)
            with p.scope("backward"):
                pass
    p.annotate("batch_size", "32")
    return p


def test_nnprof_file_round_trip(tmp_path):
    p = recorded_profile()
    snapshot = p.snapshot()
    path = tmp_path / "run.nnprof"
    p.save(str(path))
    loaded = nnprof.load(str(path))
    assert loaded.scope("train_step")["calls"] == 3
    assert loaded.scope("forward")["flops"] == 3e6
    assert nodes_by_path(loaded).keys() == nodes_by_path(snapshot).keys()
    assert loaded.annotations["batch_size"] == "32"
    snapshot.save(tmp_path / "again.nnprof")  # os.PathLike works as well as str
    assert nnprof.load(tmp_path / "again.nnprof") == snapshot  # every field round-trips
    with pytest.raises(TypeError, match="str or os.PathLike"):
        nnprof.load(3)
    assert [s["name"] for s in loaded.top_scopes(2)] == [s["name"] for s in snapshot.top_scopes(2)]


def test_json_report_round_trip(tmp_path):
    p = recorded_profile()
    path = tmp_path / "run.json"
    p.save(str(path))
    written = json.loads(path.read_text())
    returned = json.loads(p.report("json"))
    assert json.dumps(written).count('"train_step"') > 0
    assert json.dumps(returned).count('"train_step"') > 0
    p.snapshot().report(str(tmp_path / "run.html"))
    assert "train_step" in (tmp_path / "run.html").read_text()
    assert "train_step" in p.summary()


def test_loading_a_corrupt_file_raises_nnprof_error(tmp_path):
    corrupt = tmp_path / "corrupt.nnprof"
    corrupt.write_bytes(b"this is not a profile" * 100)
    with pytest.raises(nnprof.Error) as raised:
        nnprof.load(str(corrupt))
    assert str(corrupt) in str(raised.value)
    assert isinstance(raised.value, RuntimeError)
    with pytest.raises(nnprof.Error, match="missing.nnprof"):
        nnprof.load(str(tmp_path / "missing.nnprof"))


def test_analyses_are_python_objects():
    p = recorded_profile()
    profile = p.snapshot()
    first = profile.scopes[0]
    assert first["name"] == "train_step"
    for key in ("calls", "total_ns", "self_ns", "mean_ns", "time", "flops", "bytes", "memory", "heap"):
        assert key in first
    found = profile.bottlenecks(slow_operation_share=0.0)
    assert found and {"type", "severity", "name", "value", "threshold", "description", "suggestion"} <= found[0].keys()
    assert isinstance(profile.recommendations(), list)
    assert profile.operators()["groups"] == []
    assert profile.hot_functions() == []
    assert profile.completeness["scopes_recorded"] == 9
    assert profile.scope("nothing") is None
    assert [f["name"] for f in nnprof.report_formats()][:2] == ["text", "markdown"]
    # Reports of a profile Python holds leave it whole (only a snapshot taken for one is moved).
    before = profile.scopes
    assert "train_step" in profile.summary() and "train_step" in profile.report("markdown")
    assert profile.scopes == before


def hash_for(seconds):
    import time
    end = time.process_time() + seconds
    while time.process_time() < end:
        hashlib.pbkdf2_hmac("sha256", b"password", b"salt", 20000)


def test_sampling_finds_the_hot_native_function():
    p = nnprof.Profiler()
    with nnprof.sampling(profiler=p, hz=199) as figures:
        with p.scope("hashing"):
            hash_for(1.0)
    assert figures["samples"] > 50
    profile = p.snapshot()
    assert profile.cpu["sampled"] and profile.cpu_sample_count == figures["samples"]
    # The hot native function is on nearly every sampled stack (its callees vary: HMAC, SHA-256, copies).
    hot = {f["name"]: f for f in profile.hot_functions()}
    assert hot["PKCS5_PBKDF2_HMAC"]["percentage"] > 60, sorted(hot.values(), key=lambda f: -f["total_samples"])[:5]
    assert hot["PKCS5_PBKDF2_HMAC"]["module"].startswith("libcrypto")
    assert p.report("pprof")[:2] == b"\x1f\x8b"  # gzip: the binary format comes back as bytes
    with pytest.raises(ValueError, match="not running"):
        nnprof.stop_sampling()


def python_spin(seconds):
    total = 0
    end = time.process_time() + seconds
    while time.process_time() < end:
        total += sum(i * i for i in range(2000))  # SPIN
    return total


def test_sampling_from_the_module_shows_python_frames_and_lines():
    # The sampler started from inside the interpreter reads the Python frames of its threads
    # (CPython 3.11): the function that spins is a frame of every sample of the main thread,
    # named "qualname (file.py:first line)", and its hot line leads the line profile.
    spin_line = next(n for n, text in enumerate(open(__file__).read().splitlines(), 1) if text.endswith("# SPIN"))
    p = nnprof.Profiler()
    with nnprof.sampling(profiler=p, hz=199) as figures:
        python_spin(0.5)
    assert figures["samples"] > 30
    profile = p.snapshot()
    functions = {f["name"]: f for f in profile.hot_functions()}
    spin = next(f for name, f in functions.items() if name.startswith("python_spin (test_core.py:"))
    assert spin["percentage"] > 80, sorted(functions.values(), key=lambda f: -f["total_samples"])[:5]
    lines = profile.python_lines()
    here = os.path.abspath(__file__)
    spin_lines = [l for l in lines if l["file"] == here and l["function"].startswith("python_spin (")]
    assert sum(l["total_samples"] for l in spin_lines) >= 0.8 * figures["samples"]
    # The generator expression on the same line is its own code object: its frame is innermost.
    assert any(l["line"] == spin_line for l in lines if l["file"] == here)


def test_import_does_not_import_torch():
    code = "import sys, nnprof; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
