"""StreamProfiler: how busy each CUDA stream was (nnprof::CudaProfiler and stream_report).

    profiler = nnprof.StreamProfiler(num_streams=4)   # RuntimeError naming the reason without a GPU
    with profiler:
        for stream, task in zip(profiler.streams, tasks):
            with torch.cuda.stream(stream):
                execute_task(task)
    profiler.print_stream_efficiency()

Every stream of the process is traced by CUPTI while the block runs; a stream's efficiency is
the time it had work running over the time from its first operation's start to its last one's
end.
"""
import sys

from nnprof import _native

__all__ = ["StreamProfiler"]


class StreamProfiler:
    """Profiles multi-stream execution.

    num_streams: the streams the program means to use: `streams` gives that many torch CUDA
        streams, and print_stream_efficiency() says when fewer carried work.
    """

    def __init__(self, num_streams=4):
        if num_streams < 1:
            raise ValueError(f"StreamProfiler: num_streams must be >= 1 (got {num_streams})")
        usable, why = _native._gpu_available()
        if not usable:
            raise RuntimeError(f"StreamProfiler: {why}")
        self.num_streams = int(num_streams)
        self._trace = None
        self._report = None
        self._streams = None

    @property
    def streams(self):
        """num_streams torch.cuda.Stream objects, created on first use."""
        if self._streams is None:
            import torch
            self._streams = [torch.cuda.Stream() for _ in range(self.num_streams)]
        return self._streams

    def __enter__(self):
        self._report = None
        self._trace = _native._GpuTrace(False)
        if not self._trace.tracing:
            why = self._trace.status
            self._trace = None
            raise RuntimeError(f"StreamProfiler: {why}")
        return self

    def __exit__(self, exc_type, exc, tb):
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_initialized():
            torch.cuda.synchronize()
        self._trace.stop()
        self._report = self._trace.stream_report()
        return False

    def get_stream_stats(self):
        """One dict per stream with GPU work: device, stream_id, ops, kernels, busy_ns,
        idle_ns, idle_gaps (gaps over 20 us), longest_gap_ns, efficiency (0..1)."""
        if self._report is None:
            raise RuntimeError("StreamProfiler: no profile yet (use it as a context manager first)")
        return self._report["streams"]

    def print_stream_efficiency(self):
        streams = self.get_stream_stats()
        print(f"Stream efficiency ({len(streams)} streams with GPU work, {self.num_streams} expected):")
        for s in streams:
            print(f"  device {s['device']} stream {s['stream_id']}: {s['efficiency'] * 100:.1f}% busy, {s['ops']} ops, "
                  f"{s['idle_gaps']} idle gaps (longest {s['longest_gap_ns'] / 1e6:.3f} ms)")
        if len(streams) < self.num_streams:
            print(f"  only {len(streams)} of {self.num_streams} streams carried work")
