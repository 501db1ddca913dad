"""Seed 002 (kitsune's profiler): the CUDATimer, MemoryTracker and StreamProfiler examples, run
on torch CPU models. Without a GPU the GPU classes must refuse with the reason."""
import os
import pathlib
import subprocess
import sys
import textwrap
import time

import pytest
import torch
import torch.nn as nn

import nnprof
from nnprof import _native

GPU_USABLE, GPU_WHY = _native._gpu_available()
needs_no_gpu = pytest.mark.skipif(GPU_USABLE, reason="checks the error given where no GPU is usable")


def small_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 10))


# -- CUDATimer -----------------------------------------------------------------------------------

@needs_no_gpu
def test_basic_profiling_cuda_timer_says_why_it_cannot_time():
    # timer = CUDATimer(); with timer.measure('forward_pass'): ...
    with pytest.raises(RuntimeError) as error:
        nnprof.CUDATimer()
    message = str(error.value)
    assert message.startswith("CudaTimer: ")
    assert "CUDA" in message and ("driver" in message or "device" in message or "built without" in message)


@needs_no_gpu
def test_cuda_event_timing_options_are_checked_before_the_gpu():
    # The seed's options, with its defaults, reach the C++ timer (which then refuses).
    with pytest.raises(RuntimeError, match="CudaTimer"):
        nnprof.CUDATimer(synchronize=True, warmup=3, repeat=10)
    with pytest.raises(ValueError, match="repeat"):
        nnprof.CUDATimer(repeat=0)


@pytest.mark.skipif(not GPU_USABLE, reason=f"no GPU: {GPU_WHY}")
def test_cuda_timer_on_a_gpu():
    model = small_model().cuda()
    x = torch.randn(64, 256, device="cuda")
    timer = nnprof.CUDATimer()
    with timer.measure("forward_pass"):
        model(x)
    assert timer.get_elapsed("forward_pass") > 0
    timer.start("kernel_launch")
    model(x)
    timer.stop("kernel_launch")
    assert timer.get_stats("kernel_launch")["count"] == 1
    stats = timer.measure("matmul", lambda: x @ x.T)
    assert stats["count"] == 10  # repeat=10 timed runs after warmup=3
    # Best practice: end-to-end, phases nested in the full iteration.
    with timer.measure("full_iteration"):
        with timer.measure("forward"):
            loss = model(x).sum()
        with timer.measure("backward"):
            loss.backward()
    assert timer.get_elapsed("forward") + timer.get_elapsed("backward") <= timer.get_elapsed("full_iteration") * 1.01


# -- MemoryTracker -------------------------------------------------------------------------------

def test_memory_profiling_training_loop_peak():
    # tracker = MemoryTracker(); with tracker: for batch in dataloader: ...; tracker.print_summary()
    model = small_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    dataloader = [torch.randn(512, 256) for _ in range(4)]
    tracker = nnprof.MemoryTracker(device="cpu")
    assert (tracker.track_allocations, tracker.track_timeline, tracker.interval) == (True, True, 100)
    with tracker:
        for batch in dataloader:
            output = model(batch)
            loss = output.square().mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    tracker.print_summary()
    stats = tracker.get_stats()
    print(f"Peak memory: {stats['peak_allocated'] / 1e9:.2f} GB")
    assert stats["samples"] >= 2  # the start and the end at least
    assert stats["peak_allocated"] >= max(stats["initial_allocated"], stats["current_allocated"])
    assert stats["peak_reserved"] >= stats["peak_allocated"]
    assert stats["peak_rss"] > 0
    assert stats["exact"] is False and stats["num_allocations"] is None  # no hooks in this process


def test_memory_tracker_catches_a_peak_inside_the_block():
    # A 40 MB tensor that lives 0.3 s inside the block and is gone at its end: only the
    # readings every `interval` can see it.
    tracker = nnprof.MemoryTracker(interval=10, device="cpu")
    size = 10 * 1000 * 1000 * 4
    with tracker:
        x = torch.ones(10 * 1000 * 1000)
        time.sleep(0.3)
        del x
    stats = tracker.get_stats()
    assert stats["peak_allocated"] >= stats["initial_allocated"] + 0.95 * size
    assert stats["block_peak_allocated"] >= 0.95 * size
    assert stats["current_allocated"] < stats["initial_allocated"] + 0.5 * size


def test_memory_tracking_sees_a_tensor_kept_alive():
    # with tracker: x = torch.randn(1000, 1000); y = torch.matmul(x, x)  (on the CPU here)
    tracker = nnprof.MemoryTracker(track_allocations=True, device="cpu")
    with tracker:
        x = torch.randn(1000, 1000)
        y = torch.matmul(x, x)
    stats = tracker.get_stats()
    tensor_bytes = 1000 * 1000 * 4
    # x and y are alive after the block: the heap in use grew by both (torch's CPU allocator
    # takes them from malloc).
    assert stats["current_allocated"] - stats["initial_allocated"] >= 2 * tensor_bytes * 0.95
    assert stats["peak_allocated"] >= stats["initial_allocated"] + 2 * tensor_bytes * 0.95
    assert stats["block_peak_allocated"] == stats["peak_allocated"] - stats["initial_allocated"]
    timeline = tracker.get_allocation_timeline()
    assert len(timeline) >= 2
    assert [p["time_s"] for p in timeline] == sorted(p["time_s"] for p in timeline)
    assert set(timeline[0]) == {"time_s", "allocated", "reserved", "rss"}
    assert timeline[-1]["allocated"] - timeline[0]["allocated"] >= 2 * tensor_bytes * 0.95
    del x, y


def test_memory_tracker_interval_is_the_period_of_its_readings():
    tracker = nnprof.MemoryTracker(interval=20, device="cpu")
    with tracker:
        time.sleep(0.5)
    readings = tracker.get_stats()["samples"]
    # One at the start, one at the end, and one every 20 ms between (a loaded machine may miss some).
    assert 10 <= readings <= 0.5 / 0.02 + 3


def test_memory_tracker_without_timeline_says_so():
    tracker = nnprof.MemoryTracker(track_timeline=False, device="cpu")
    with tracker:
        pass
    with pytest.raises(RuntimeError, match="track_timeline=False"):
        tracker.get_allocation_timeline()


@needs_no_gpu
def test_memory_tracker_on_a_gpu_says_why_not():
    with pytest.raises(RuntimeError, match=r"MemoryTracker\(device='cuda'\)"):
        nnprof.MemoryTracker(device="cuda")
    assert nnprof.MemoryTracker().device == "cpu"


HOOKED_SCRIPT = textwrap.dedent("""
    import torch, nnprof
    tracker = nnprof.MemoryTracker(interval=10, device="cpu")
    with tracker:
        x = torch.randn(1000, 1000)
        y = torch.matmul(x, x)
        del x, y
    stats = tracker.get_stats()
    print(stats["source"])
    print(stats["exact"], stats["peak_allocated"], stats["initial_allocated"], stats["block_peak_allocated"],
          stats["num_allocations"], stats["largest_allocation"])
""")


def test_memory_tracker_under_the_heap_hooks_counts_every_allocation():
    # Under LD_PRELOAD=libnnprof_memory.so (what `nnprof record --memory` does) the tracker uses
    # nnprof's heap tracking: exact peak, every allocation counted.
    hooks = pathlib.Path(nnprof._native.library_directory()) / "libnnprof_memory.so"
    assert hooks.exists(), hooks
    env = dict(os.environ, LD_PRELOAD=str(hooks))
    out = subprocess.run([sys.executable, "-c", HOOKED_SCRIPT], env=env, capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr
    source, figures = out.stdout.strip().splitlines()[-2:]
    assert source.startswith("nnprof heap tracking")
    exact, peak, initial, block_peak, allocations, largest = figures.split()
    tensor_bytes = 1000 * 1000 * 4
    assert exact == "True"
    # x and y alive together at the peak.
    assert int(block_peak) >= 2 * tensor_bytes
    assert int(peak) >= int(initial) + 2 * tensor_bytes
    assert int(allocations) >= 2
    assert int(largest) >= tensor_bytes


# -- StreamProfiler ------------------------------------------------------------------------------

@needs_no_gpu
def test_stream_profiling_says_why_it_cannot_profile():
    # profiler = StreamProfiler(num_streams=4); with profiler: ...; profiler.print_stream_efficiency()
    with pytest.raises(RuntimeError) as error:
        nnprof.StreamProfiler(num_streams=4)
    assert str(error.value).startswith("StreamProfiler: ")
    assert "CUDA" in str(error.value)


@pytest.mark.skipif(not GPU_USABLE, reason=f"no GPU: {GPU_WHY}")
def test_stream_profiling_on_a_gpu():
    profiler = nnprof.StreamProfiler(num_streams=4)
    tasks = [torch.randn(1024, 1024, device="cuda") for _ in range(4)]
    with profiler:
        for stream, task in zip(profiler.streams, tasks):
            with torch.cuda.stream(stream):
                task @ task
    profiler.print_stream_efficiency()
    streams = profiler.get_stream_stats()
    assert len(streams) >= 4
    assert all(0 < s["efficiency"] <= 1 for s in streams)
