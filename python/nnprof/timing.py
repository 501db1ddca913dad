"""CUDATimer: GPU time of a block or a function, measured with CUDA events (nnprof::CudaTimer).

    timer = nnprof.CUDATimer()                 # RuntimeError naming the reason without a GPU
    with timer.measure("forward_pass"):
        output = model(input)
    timer.get_elapsed("forward_pass")          # ms of GPU time, mean over the block's runs

    timer.measure("matmul", lambda: a @ b)     # warmup untimed runs, then repeat timed ones

What is timed is the GPU's work between two events recorded in the current CUDA stream (torch's
when torch has initialised CUDA, else the default stream), not the Python calls that launch it.
"""
from nnprof import _native

__all__ = ["CUDATimer"]


def _current_stream():
    """The handle of torch's current CUDA stream, or 0 (the default stream) without torch."""
    import sys
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        return torch.cuda.current_stream().cuda_stream
    return 0


class _MeasuredBlock:
    """The context manager of CUDATimer.measure(name): one timed run per entry."""

    def __init__(self, timer, name):
        self._timer = timer
        self._name = name

    def __enter__(self):
        self._timer.start(self._name)
        return self

    def __exit__(self, exc_type, exc, tb):
        self._timer.stop(self._name)
        return False


class CUDATimer:
    """High-precision GPU timing with CUDA events.

    synchronize: wait for each timed run to finish before the next one starts (True), or record
        all events and read them when a result is asked for (False: less interference between
        runs, the GPU may still be working when the block's Python code has returned).
    warmup: untimed runs before the timed ones, for measure(name, fn) (lazy loading, caches,
        clocks); a ``with timer.measure(name)`` block runs once per entry and is always timed.
    repeat: timed runs of measure(name, fn).
    device: the CUDA device whose primary context is used when the thread has none.

    Without a usable GPU (no driver, no device, nnprof built without CUDA) the constructor
    raises RuntimeError whose message says which.
    """

    def __init__(self, synchronize=True, warmup=3, repeat=10, device=0):
        if warmup < 0 or repeat < 1:
            raise ValueError(f"CUDATimer: warmup must be >= 0 and repeat >= 1 (got warmup={warmup}, repeat={repeat})")
        self.synchronize = bool(synchronize)
        self.warmup = int(warmup)
        self.repeat = int(repeat)
        self._timer = _native._CudaTimer(self.synchronize, self.warmup, self.repeat, int(device))

    def measure(self, name, fn=None):
        """``with timer.measure(name):`` times the block; ``timer.measure(name, fn)`` calls fn
        warmup + repeat times, times the last repeat calls and returns their statistics."""
        if fn is None:
            return _MeasuredBlock(self, name)
        return self._timer.measure(name, fn, _current_stream())

    def start(self, name):
        """Records the start event of `name` in the current stream."""
        self._timer.start(name, _current_stream())

    def stop(self, name):
        """Records the stop event of `name`; RuntimeError for a stop without a start."""
        self._timer.stop(name, _current_stream())

    def get_stats(self, name):
        """{'count', 'mean_ms', 'std_ms', 'min_ms', 'max_ms', 'total_ms'} of the finished runs
        of `name`; KeyError when it has none."""
        stats = self._timer.result(name)
        if stats["count"] == 0:
            raise KeyError(f"CUDATimer: no finished run of {name!r}")
        return stats

    def get_elapsed(self, name):
        """GPU time of `name` in milliseconds: the mean over its finished runs (the run's time
        when it ran once)."""
        return self.get_stats(name)["mean_ms"]

    def results(self):
        """The statistics of every name, in the order first started."""
        return self._timer.results()
