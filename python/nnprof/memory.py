"""MemoryTracker: the memory a block of code uses, on the CPU or on a GPU.

    tracker = nnprof.MemoryTracker()
    with tracker:
        train_one_epoch()
    tracker.print_summary()
    tracker.get_stats()["peak_allocated"]      # bytes

What is measured, by device:

- CPU, heap hooks loaded (the process runs under ``nnprof record --memory`` or with
  ``LD_PRELOAD=libnnprof_memory.so``): nnprof's heap tracking (nnprof::MemoryProfiler) sees every
  malloc, free, new and delete of the process, torch's CPU allocator included. peak_allocated
  is the exact peak of the heap in use; num_allocations counts every allocation.
- CPU, no hooks (a plain ``python3``: the hooks cannot be added to a running process, whose
  calls to malloc are already bound to glibc): glibc's allocator statistics (mallinfo2), read
  every `interval` ms on a thread of nnprof's and at the start and end of the block.
  peak_allocated is the largest heap in use among those readings (a lower bound of the true
  peak: a peak between two readings is missed); num_allocations is None. The glibc heap holds
  torch's and NumPy's CPU buffers and Python objects over 512 bytes; smaller Python objects
  live in pymalloc's arenas, which only the RSS (also given) counts.
- GPU (device="cuda", or by default where nnprof can trace a GPU): device allocations traced
  by CUPTI (nnprof::CudaProfiler): peak_reserved is the peak of device memory allocated
  (cudaMalloc: what torch's caching allocator reserves); peak_allocated is torch's
  max_memory_allocated when torch uses that device, else the same as peak_reserved.

peak_reserved on the CPU is the memory glibc's malloc holds from the system (arenas and
mmap'd blocks), the counterpart of what a caching allocator reserves.
"""
import sys

from nnprof import _native

__all__ = ["MemoryTracker"]


def _gpu_usable():
    usable, _ = _native._gpu_available()
    return usable


class MemoryTracker:
    """Tracks memory while used as a context manager (or between start() and stop()).

    track_allocations: count individual allocations (needs the heap hooks on the CPU; without
        them the heap is sampled and the counts are None).
    track_timeline: keep every reading for get_allocation_timeline().
    interval: period of the readings, in milliseconds.
    device: "cpu", "cuda", or None for "cuda" where nnprof can trace a GPU, else "cpu".
    """

    def __init__(self, track_allocations=True, track_timeline=True, interval=100, device=None):
        if interval <= 0:
            raise ValueError(f"MemoryTracker: interval must be a positive number of milliseconds (got {interval})")
        self.track_allocations = bool(track_allocations)
        self.track_timeline = bool(track_timeline)
        self.interval = interval
        if device is None:
            device = "cuda" if _gpu_usable() else "cpu"
        if device not in ("cpu", "cuda"):
            raise ValueError(f"MemoryTracker: device must be 'cpu' or 'cuda' (got {device!r})")
        if device == "cuda":
            usable, why = _native._gpu_available()
            if not usable:
                raise RuntimeError(f"MemoryTracker(device='cuda'): {why}")
        self.device = device
        self._sampler = None
        self._heap = None
        self._heap_note = None
        self._heap_result = None
        self._gpu = None
        self._gpu_result = None
        self._torch_cuda_peak = None

    # -- tracking ---------------------------------------------------------------------------

    def start(self):
        if self.running:
            raise RuntimeError("MemoryTracker: already tracking")
        self._heap_result = None
        self._gpu_result = None
        self._torch_cuda_peak = None
        if self.device == "cuda":
            self._gpu = _native._GpuTrace(True)
            if not self._gpu.tracing:
                why = self._gpu.status
                self._gpu = None
                raise RuntimeError(f"MemoryTracker(device='cuda'): {why}")
            torch = sys.modules.get("torch")
            if torch is not None and torch.cuda.is_initialized():
                torch.cuda.reset_peak_memory_stats()
        elif self.track_allocations:
            hooks, why = _native._heap_hooks_available()
            if hooks:
                heap = _native._HeapProfiler(float(self.interval), False)
                try:
                    heap.start()
                    self._heap = heap
                except RuntimeError as error:  # another tracker runs (nnprof record --memory)
                    self._heap_note = str(error)
            else:
                self._heap_note = why
        self._sampler = _native._AllocatorSampler(float(self.interval))
        self._sampler.start()
        return self

    def stop(self):
        if not self.running:
            raise RuntimeError("MemoryTracker: not tracking")
        self._sampler.stop()
        if self._heap is not None:
            self._heap_result = self._heap.stop()
            self._heap = None
        if self._gpu is not None:
            torch = sys.modules.get("torch")
            if torch is not None and torch.cuda.is_initialized():
                self._torch_cuda_peak = torch.cuda.max_memory_allocated()
            self._gpu.stop()
            self._gpu_result = self._gpu.memory_report()
            self._gpu = None
        return self

    @property
    def running(self):
        return self._sampler is not None and self._sampler.running

    def __enter__(self):
        return self.start()

    def __exit__(self, exc_type, exc, tb):
        self.stop()
        return False

    # -- results ----------------------------------------------------------------------------

    def _readings(self):
        if self._sampler is None:
            raise RuntimeError("MemoryTracker: nothing tracked yet (use it as a context manager, or start() and stop())")
        return self._sampler.readings()

    def get_stats(self):
        """Figures in bytes:
        peak_allocated: the most memory in use at once (the process's whole heap on the CPU,
            allocations made before the block included; device memory on a GPU);
        block_peak_allocated: the most in use at once by what the block allocated;
        peak_reserved: the most the allocator held from the system;
        initial_allocated, current_allocated, current_reserved: at the start and now;
        peak_rss: the process's largest resident set seen;
        num_allocations, num_frees, largest_allocation: counted allocations (None where not
            measured); samples, interval_ms: the readings;
        exact: whether the peaks are exact rather than the largest reading;
        source: what was measured, in words."""
        readings = self._readings()
        first, last = readings[0], readings[-1]
        peak_reading = max(r[1] for r in readings)
        stats = {
            "device": self.device,
            "peak_allocated": peak_reading,
            "block_peak_allocated": max(0, peak_reading - first[1]),
            "peak_reserved": max(r[2] for r in readings),
            "initial_allocated": first[1],
            "current_allocated": last[1],
            "current_reserved": last[2],
            "peak_rss": max(r[3] for r in readings),
            "num_allocations": None,
            "num_frees": None,
            "largest_allocation": None,
            "samples": len(readings),
            "interval_ms": self.interval,
            "exact": False,
            "source": f"glibc allocator statistics (mallinfo2), read every {self.interval} ms",
        }
        if self._heap_note is not None:
            stats["source"] += f"; allocations not counted: {self._heap_note}"
        heap = self._heap_result
        if heap is not None:
            # Heap tracking counts the blocks allocated while it ran; the heap in use before
            # it (the first reading) is taken as held throughout.
            stats.update(
                peak_allocated=max(peak_reading, first[1] + heap["peak_bytes"]),
                block_peak_allocated=heap["peak_bytes"],
                num_allocations=heap["num_allocations"],
                num_frees=heap["num_frees"],
                largest_allocation=heap["largest_allocation_bytes"],
                peak_rss=max(stats["peak_rss"], heap["rss_peak_bytes"]),
                exact=True,
                source="nnprof heap tracking (allocation hooks): every malloc/free/new/delete of the process")
            stats["peak_reserved"] = max(stats["peak_reserved"], stats["peak_allocated"])
        gpu = self._gpu_result
        if gpu is not None:
            reserved = sum(d["peak_bytes"] for d in gpu["devices"])
            allocated = self._torch_cuda_peak if self._torch_cuda_peak is not None else reserved
            live = sum(d["live_bytes"] for d in gpu["devices"])
            stats.update(
                peak_allocated=allocated,
                block_peak_allocated=reserved,
                peak_reserved=reserved,
                initial_allocated=None,
                current_allocated=live,
                current_reserved=live,
                num_allocations=sum(d["alloc_count"] for d in gpu["devices"]),
                num_frees=sum(d["free_count"] for d in gpu["devices"]),
                exact=True,
                source="device allocations traced by CUPTI (counted from the block's start)" +
                       ("; peak_allocated from torch.cuda.max_memory_allocated" if self._torch_cuda_peak is not None else ""))
        return stats

    def get_allocation_timeline(self):
        """The readings in time order: dicts with time_s (since start), allocated, reserved and
        rss in bytes (on a GPU: time_s, device, allocated after each device allocation or
        release; under heap tracking: the heap in use and RSS every interval)."""
        if not self.track_timeline:
            raise RuntimeError("MemoryTracker: the timeline was not kept (track_timeline=False)")
        if self._gpu_result is not None:
            timeline = self._gpu_result["timeline"]
            t0 = timeline[0][0] if timeline else 0
            return [{"time_s": (t - t0) / 1e9, "device": device, "allocated": allocated}
                    for t, device, allocated in timeline]
        if self._heap_result is not None:
            return [{"time_s": t, "allocated": heap, "reserved": None, "rss": rss}
                    for t, heap, rss in self._heap_result["timeline"]]
        return [{"time_s": t, "allocated": allocated, "reserved": reserved, "rss": rss}
                for t, allocated, reserved, rss in self._readings()]

    def summary(self):
        """The figures of get_stats() as text, one per line."""
        s = self.get_stats()
        mb = lambda b: "not measured" if b is None else f"{b / 1e6:.1f} MB"  # noqa: E731
        lines = [
            f"Memory ({s['device']}): {s['source']}",
            f"  peak allocated: {mb(s['peak_allocated'])}{'' if s['exact'] else ' (largest reading)'}",
            f"  peak reserved:  {mb(s['peak_reserved'])}",
            f"  allocated now:  {mb(s['current_allocated'])} (at start {mb(s['initial_allocated'])})",
            f"  peak RSS:       {mb(s['peak_rss'])}",
        ]
        if s["num_allocations"] is not None:
            lines.append(f"  allocations:    {s['num_allocations']} ({s['num_frees']} freed)")
        if s["largest_allocation"] is not None:
            lines.append(f"  largest block:  {mb(s['largest_allocation'])}")
        lines.append(f"  readings:       {s['samples']} every {s['interval_ms']} ms")
        return "\n".join(lines)

    def print_summary(self):
        print(self.summary())
