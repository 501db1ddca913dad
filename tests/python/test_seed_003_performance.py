"""Seed 003 (cookbook's PerformanceProfiler): every example of the seed, on torch CPU models."""
import math
import os
import re
import subprocess
import sys
import time
import warnings

import pytest
import torch
import torch.nn as nn

import nnprof
from nnprof import _native

GPU_USABLE, GPU_WHY = _native._gpu_available()


def spin(seconds):
    """CPU work for about `seconds` of wall time."""
    end = time.perf_counter() + seconds
    x = 0
    while time.perf_counter() < end:
        x += 1
    return x


def train_epoch(model, optimizer, data, target):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(data), target)
    loss.backward()
    optimizer.step()
    return loss.item()


def test_constructor_defaults_are_the_seeds():
    profiler = nnprof.PerformanceProfiler()
    assert (profiler.track_gpu, profiler.track_carbon, profiler.detailed_memory, profiler.memory_interval,
            profiler.enable_line_profiling, profiler.estimate_flops) == (True, False, False, 0.5, False, False)


def test_basic_performance_profiling():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data, target = torch.randn(256, 128), torch.randint(0, 10, (256,))
    profiler = nnprof.PerformanceProfiler(track_gpu=True)
    started = time.perf_counter()
    with profiler.profile("model_training"):
        for epoch in range(10):
            train_epoch(model, optimizer, data, target)
    elapsed = time.perf_counter() - started
    metrics = profiler.get_metrics()
    print(f"Training completed in {metrics.timing.wall_time_s:.1f}s")
    print(f"Peak memory usage: {metrics.memory.peak_ram_mb:.1f} MB")
    assert metrics.name == "model_training" and metrics.completed
    assert 0 < metrics.timing.wall_time_s <= elapsed
    assert metrics.timing.cpu_time_s == pytest.approx(metrics.timing.user_time_s + metrics.timing.system_time_s)
    assert metrics.timing.cpu_time_s > 0
    assert metrics.memory.peak_ram_mb >= max(metrics.memory.initial_ram_mb, metrics.memory.final_ram_mb)
    assert metrics.memory.peak_ram_mb > 10  # a Python process with torch loaded
    assert metrics.compute.cpu_utilization_percent == pytest.approx(
        metrics.timing.cpu_time_s / metrics.timing.wall_time_s * 100, rel=1e-6)
    if not GPU_USABLE:
        assert metrics.memory.peak_gpu_mb is None
        assert metrics.compute.gpu_utilization_percent is None
        assert any("GPU: not measured" in note for note in metrics.notes)


def test_metrics_attributes_dict_and_summary():
    profiler = nnprof.PerformanceProfiler()
    with profiler.profile("op"):
        spin(0.05)
    metrics = profiler.get_metrics("op")
    for attribute in ("peak_ram_mb", "final_ram_mb", "peak_gpu_mb", "memory_leak_detected"):
        assert hasattr(metrics.memory, attribute)
    for attribute in ("wall_time_s", "cpu_time_s", "user_time_s", "system_time_s"):
        assert hasattr(metrics.timing, attribute)
    for attribute in ("estimated_flops", "flops_per_second", "gpu_utilization_percent", "cpu_utilization_percent"):
        assert hasattr(metrics.compute, attribute)
    # The machine over the region, from its system monitor: percentages in range.
    assert 0.0 <= metrics.system.cpu_percent <= 100.0
    assert 0.0 < metrics.system.memory_percent <= 100.0
    assert metrics.system.energy_kwh > 0.0  # modelled here (no RAPL in this VM) and flagged so
    assert metrics.system.carbon_kg is None  # track_carbon=False
    assert metrics.compute.estimated_flops is None and metrics.memory.memory_leak_detected is None
    d = metrics.to_dict()
    assert d["timing"]["wall_time_s"] == metrics.timing.wall_time_s
    assert d["system"]["cpu_percent"] == metrics.system.cpu_percent
    assert d["name"] == "op" and d["completed"] is True
    summary = metrics.summary()
    print(summary)
    assert re.fullmatch(r"Peak RAM: [\d.]+ (GB|MB), Wall Time: [\d.e-]+s, GPU Util: (\d+%|not measured)", summary)
    if not GPU_USABLE:
        assert summary.endswith("GPU Util: not measured")
    assert 0.04 <= metrics.timing.wall_time_s < 1.0


def test_get_current_memory_follows_a_large_buffer():
    import gc
    gc.collect()  # no garbage of earlier tests freed between the two readings
    profiler = nnprof.PerformanceProfiler()
    before = profiler.get_current_memory()
    buffer = torch.ones(64 * 1024 * 1024 // 4)  # 64 MiB written: resident
    after = profiler.get_current_memory()
    assert after - before >= 0.9 * 64 * 1024 * 1024 / 1e6
    del buffer


@pytest.mark.skipif(GPU_USABLE, reason="checks the error given where no GPU is usable")
def test_gpu_memory_monitoring_without_a_gpu():
    profiler = nnprof.PerformanceProfiler(track_gpu=True, detailed_memory=True)
    with profiler.profile("gpu_intensive_task"):
        model = nn.Linear(64, 64)
        for batch in [torch.randn(8, 64) for _ in range(3)]:
            model(batch)
            with pytest.raises(RuntimeError, match="get_current_gpu_memory: .*CUDA"):
                profiler.get_current_gpu_memory()
    gpu_metrics = profiler.get_metrics()
    print(f"Peak GPU memory: {gpu_metrics.memory.peak_gpu_mb} MB")
    assert gpu_metrics.memory.peak_gpu_mb is None
    with pytest.raises(RuntimeError, match="track_gpu is False"):
        nnprof.PerformanceProfiler(track_gpu=False).get_current_gpu_memory()


def test_multi_operation_timing_breakdown():
    profiler = nnprof.PerformanceProfiler()
    with profiler.profile("data_loading"):
        spin(0.02)
        data = torch.randn(512, 128)
    with profiler.profile("preprocessing"):
        spin(0.05)
        processed = (data - data.mean(0)) / data.std(0)
    with profiler.profile("training"):
        spin(0.25)
        nn.Linear(128, 10)(processed).sum().backward()
    timing_breakdown = profiler.get_timing_breakdown()
    total_time = sum(timing_breakdown.values())
    print("Operation breakdown:")
    for op, time_s in timing_breakdown.items():
        print(f"  {op}: {time_s:.2f}s ({time_s / total_time * 100:.1f}%)")
    assert list(timing_breakdown) == ["data_loading", "preprocessing", "training"]
    assert timing_breakdown["data_loading"] >= 0.02 and timing_breakdown["preprocessing"] >= 0.05
    assert timing_breakdown["training"] >= 0.25
    assert max(timing_breakdown, key=timing_breakdown.get) == "training"
    for name, seconds in timing_breakdown.items():
        assert seconds == pytest.approx(profiler.get_metrics(name).timing.wall_time_s)


def test_memory_leak_detection():
    profiler = nnprof.PerformanceProfiler(detailed_memory=True, memory_interval=0.1)
    kept = []
    with profiler.profile("memory_leak_check"):
        for i in range(100):
            data = torch.full((64 * 1024,), float(i))  # 256 KiB per iteration
            scratch = data.cumsum(0)                    # process_data(data): freed each time
            del scratch
            kept.append(data)                           # forgot to clean up data!
    metrics = profiler.get_metrics()
    assert metrics.memory.memory_leak_detected is True
    print(f"Memory grew from {metrics.memory.initial_ram_mb}MB to {metrics.memory.final_ram_mb}MB")
    assert metrics.memory.heap_final_mb - metrics.memory.heap_initial_mb >= 0.9 * 100 * 256 * 1024 / 1e6
    kept.clear()

    with profiler.profile("no_leak"):
        for i in range(100):
            data = torch.full((64 * 1024,), float(i))
            del data
    assert profiler.get_metrics("no_leak").memory.memory_leak_detected is False
    # The first region's figures are still there by name.
    assert profiler.get_metrics("memory_leak_check").memory.memory_leak_detected is True


def test_flops_estimation_counts_the_linear_layers():
    profiler = nnprof.PerformanceProfiler(estimate_flops=True)
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 10))
    with profiler.profile("flops_analysis"):
        x = torch.randn(32, 784)
        output = model(x)
    compute_metrics = profiler.get_metrics().compute
    print(f"Estimated FLOPs: {compute_metrics.estimated_flops:,}")
    print(f"FLOPS per second: {compute_metrics.flops_per_second:,.0f}")
    matmuls = 2 * 32 * 784 * 512 + 2 * 32 * 512 * 10
    # nnprof counts 2 per multiply-add of the matmuls; bias adds and ReLU are at most 0.1% more.
    assert matmuls <= compute_metrics.estimated_flops <= matmuls * 1.001
    wall = profiler.get_metrics().timing.wall_time_s
    assert compute_metrics.flops_per_second == pytest.approx(compute_metrics.estimated_flops / wall, rel=1e-6)
    assert output.shape == (32, 10)

    # The observer stops with the region: operators outside it are not counted in later regions.
    model(torch.randn(32, 784))
    with profiler.profile("no_torch"):
        spin(0.01)
    assert profiler.get_metrics("no_torch").compute.estimated_flops == 0


def test_flops_of_a_backward_pass_are_counted_too():
    profiler = nnprof.PerformanceProfiler(estimate_flops=True)
    model = nn.Linear(256, 256, bias=False)
    x = torch.randn(64, 256)
    with profiler.profile("forward"):
        y = model(x)
    with profiler.profile("forward_backward"):
        model(x).sum().backward()
    forward = profiler.get_metrics("forward").compute.estimated_flops
    both = profiler.get_metrics("forward_backward").compute.estimated_flops
    assert forward == 2 * 64 * 256 * 256
    # The weight's gradient is one more matmul of the same size (x needs none).
    assert both >= 2 * forward
    assert y.shape == (64, 256)


def test_flops_where_another_observer_records_are_not_measured():
    # Under `nnprof record` the agent's observer records every operator; a second one cannot
    # start, so the region says its FLOPs are not measured rather than giving 0.
    outer = nnprof.PerformanceProfiler(estimate_flops=True)
    inner = nnprof.PerformanceProfiler(estimate_flops=True)
    model = nn.Linear(64, 64, bias=False)
    with outer.profile("outer"):
        with pytest.warns(RuntimeWarning, match="already recorded"):
            with inner.profile("inner"):
                model(torch.randn(8, 64))
    assert inner.get_metrics().compute.estimated_flops is None
    assert any(n.startswith("estimated_flops: not measured") for n in inner.get_metrics().notes)
    assert outer.get_metrics().compute.estimated_flops == 2 * 8 * 64 * 64


class DataSourceGone(Exception):
    pass


def risky_operation():
    nn.Linear(256, 256)(torch.randn(128, 256))
    spin(0.02)
    raise DataSourceGone("the data source went away after the first batch")


def test_error_handling_keeps_partial_results():
    profiler = nnprof.PerformanceProfiler()
    assert not profiler.has_results()
    with pytest.raises(RuntimeError, match="no profiled region"):
        profiler.get_metrics()
    try:
        with profiler.profile("potentially_failing_operation"):
            risky_operation()
    except Exception as e:
        print(f"Operation failed: {e}")
        assert isinstance(e, DataSourceGone)  # the block's exception reaches the caller unchanged
    assert profiler.has_results()
    partial_metrics = profiler.get_metrics()
    print(f"Partial timing: {partial_metrics.timing.wall_time_s:.2f}s")
    assert partial_metrics.completed is False
    assert partial_metrics.timing.wall_time_s >= 0.02
    assert partial_metrics.summary().endswith("(partial: ended by an exception)")
    # A region after the failure works as before.
    with profiler.profile("after"):
        pass
    assert profiler.get_metrics().completed is True
    with pytest.raises(KeyError):
        profiler.get_metrics("never_ran")


def test_nested_regions_and_a_failing_inner_one():
    profiler = nnprof.PerformanceProfiler(estimate_flops=True)
    model = nn.Linear(128, 128, bias=False)
    with profiler.profile("outer"):
        with pytest.raises(ValueError):
            with profiler.profile("inner"):
                model(torch.randn(16, 128))
                raise ValueError("inner failed")
        model(torch.randn(16, 128))
    inner, outer = profiler.get_metrics("inner"), profiler.get_metrics("outer")
    assert inner.completed is False and outer.completed is True
    assert inner.compute.estimated_flops == 2 * 16 * 128 * 128
    assert outer.compute.estimated_flops == 2 * inner.compute.estimated_flops
    assert outer.timing.wall_time_s >= inner.timing.wall_time_s


def test_regions_on_several_threads_end_their_own():
    import threading
    profiler = nnprof.PerformanceProfiler(track_gpu=False)
    barrier = threading.Barrier(2)

    def work(name, seconds):
        with profiler.profile(name):
            barrier.wait()  # both regions open at once
            spin(seconds)

    threads = [threading.Thread(target=work, args=(f"worker{i}", 0.03 * (i + 1))) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(profiler.get_timing_breakdown()) == {"worker0", "worker1"}
    assert profiler.get_metrics("worker0").completed and profiler.get_metrics("worker1").completed
    assert profiler.get_metrics("worker1").timing.wall_time_s >= 0.06


def test_best_practices_intervals_names_and_workloads():
    # Sampling intervals: memory is read every memory_interval seconds.
    slow = nnprof.PerformanceProfiler(memory_interval=1.0)
    fast = nnprof.PerformanceProfiler(memory_interval=0.1)
    assert (slow.memory_interval, fast.memory_interval) == (1.0, 0.1)
    # Conditional GPU tracking.
    profiler = nnprof.PerformanceProfiler(track_gpu=torch.cuda.is_available())
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10))
    with profiler.profile("resnet50_forward_pass"):
        model(torch.randn(8, 3, 64, 64))
    with profiler.profile("production_inference"):
        batch = torch.randn(32, 3, 64, 64)  # realistic-size batch (scaled down for a test)
        predictions = model(batch)
    assert predictions.shape == (32, 10)
    assert set(profiler.get_timing_breakdown()) == {"resnet50_forward_pass", "production_inference"}
    with pytest.raises(ValueError):
        nnprof.PerformanceProfiler(memory_interval=0)


def test_track_carbon_gives_carbon_from_energy_and_says_how_it_was_obtained():
    profiler = nnprof.PerformanceProfiler(track_carbon=True, carbon_region="fr", pue=1.5)
    with profiler.profile("op"):
        spin(0.2)
    metrics = profiler.get_metrics()
    system = metrics.system
    assert system.energy_kwh > 0.0
    france = next(g for g in nnprof.grid_intensities() if g["region"] == "FR")
    # grams = kWh x PUE x g/kWh, exactly as stated
    assert system.carbon_kg == pytest.approx(system.energy_kwh * 1.5 * france["grams_per_kwh"] / 1000.0, rel=1e-9)
    assert system.carbon_region.startswith("FR (")
    if not system.energy_measured:
        assert any("modelled" in n for n in metrics.notes)
    assert not any(isinstance(v, float) and math.isnan(v) for v in metrics.to_dict()["system"].values())
    with pytest.raises(ValueError, match="unknown carbon_region"):
        nnprof.PerformanceProfiler(track_carbon=True, carbon_region="atlantis")
    with pytest.raises(ValueError, match="pue"):
        nnprof.PerformanceProfiler(track_carbon=True, pue=0.5)


def test_flags_not_measured_say_so():
    profiler = nnprof.PerformanceProfiler()
    with profiler.profile("op"):
        spin(0.01)
    metrics = profiler.get_metrics()
    assert metrics.line_profile is None
    assert metrics.line_report() == "line_profile: not measured (enable_line_profiling=False)"


def hot_and_cold(seconds):
    """About three quarters of the time on the hot line, a quarter on the cold one."""
    total = 0
    end = time.process_time() + seconds
    while time.process_time() < end:
        for i in range(3000):
            total += i * i % 7  # HOT
        for i in range(1000):
            total -= i % 3  # COLD
    return total


def test_line_profiling_finds_the_hot_line():
    source = open(__file__).read().splitlines()
    hot = next(n for n, text in enumerate(source, 1) if text.rstrip().endswith("# HOT"))
    cold = next(n for n, text in enumerate(source, 1) if text.rstrip().endswith("# COLD"))
    profiler = nnprof.PerformanceProfiler(enable_line_profiling=True)
    with profiler.profile("loop"):
        hot_and_cold(0.6)
    metrics = profiler.get_metrics()
    lines = {(l["file"], l["line"]): l for l in metrics.line_profile}
    here = os.path.abspath(__file__)
    hot_line, cold_line = lines[(here, hot)], lines[(here, cold)]
    assert hot_line["function"].startswith("hot_and_cold (")
    # The loop's two lines take most self samples, the hot one about three times the cold one's
    # (the bounds are wide: the machine is shared).
    assert hot_line["self_samples"] > 1.5 * cold_line["self_samples"] > 0
    assert hot_line["self_percentage"] + cold_line["self_percentage"] > 60
    assert metrics.line_profile[0] is hot_line
    # The caller's line is on every sample's Python stack: its total is (nearly) everything.
    caller = next(l for l in metrics.line_profile if l["function"].startswith("test_line_profiling_finds_the_hot_line"))
    assert caller["percentage"] > 90 and caller["self_samples"] <= caller["total_samples"]
    assert f"{here}:{hot}" in metrics.line_report(5)
    assert metrics.to_dict()["line_profile"][0]["line"] == hot


def test_line_profiling_of_a_nested_region_says_why_not():
    profiler = nnprof.PerformanceProfiler(enable_line_profiling=True)
    with profiler.profile("outer"):
        with profiler.profile("inner"):
            hot_and_cold(0.05)
        hot_and_cold(0.1)
    inner = profiler.get_metrics("inner")
    assert inner.line_profile is None
    assert inner.line_report().startswith("line_profile: not measured:")
    assert profiler.get_metrics("outer").line_profile


RECORDED_SCRIPT = """
import torch, torch.nn as nn, nnprof
tracker = nnprof.MemoryTracker(device="cpu")
with tracker:
    x = torch.randn(1000, 1000)
print("SOURCE", tracker.get_stats()["source"])
profiler = nnprof.PerformanceProfiler(estimate_flops=True)
with profiler.profile("f"):
    nn.Linear(64, 64, bias=False)(torch.randn(8, 64))
print("FLOPS", profiler.get_metrics().compute.estimated_flops)
"""


@pytest.mark.skipif(not os.path.exists(os.environ.get("NNPROF_CLI", "")), reason="nnprof CLI not built")
def test_under_nnprof_record_the_apis_say_what_the_agent_holds(tmp_path):
    # `nnprof record --memory` tracks the heap and observes torch operators itself: the APIs
    # fall back to sampling and to "not measured" FLOPs instead of failing the program.
    script = tmp_path / "script.py"
    script.write_text(RECORDED_SCRIPT)
    out = subprocess.run([os.environ["NNPROF_CLI"], "record", "--memory", "-o", str(tmp_path / "run.nnprof"), "--",
                          sys.executable, str(script)], capture_output=True, text=True, timeout=280)
    assert out.returncode == 0, out.stderr
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines() if line.startswith(("SOURCE", "FLOPS")))
    assert lines["SOURCE"].startswith("glibc allocator statistics") and "already on" in lines["SOURCE"]
    assert lines["FLOPS"] == "None"
    assert "already recorded into another profiler" in out.stderr
