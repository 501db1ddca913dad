"""The Python profiler APIs of the seeds (CUDATimer, MemoryTracker, MetricsCollector, Reporter,
StreamProfiler, compare_runs, PerformanceProfiler), re-exported by the package."""

__all__ = []
