"""The Python profiler APIs of the seeds (CUDATimer, MemoryTracker, MetricsCollector, Reporter,
StreamProfiler, compare_runs, PerformanceProfiler), re-exported by the package."""
from nnprof.memory import MemoryTracker
from nnprof.metrics import MetricsCollector, Reporter, compare_runs
from nnprof.performance import (ComputeMetrics, MemoryMetrics, PerformanceMetrics, PerformanceProfiler,
                                SystemMetrics, TimingMetrics)
from nnprof.streams import StreamProfiler
from nnprof.timing import CUDATimer

__all__ = [
    "CUDATimer",
    "MemoryTracker",
    "MetricsCollector",
    "Reporter",
    "StreamProfiler",
    "compare_runs",
    "PerformanceProfiler",
    "PerformanceMetrics",
    "MemoryMetrics",
    "TimingMetrics",
    "ComputeMetrics",
    "SystemMetrics",
]
