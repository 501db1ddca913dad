"""MetricsCollector, Reporter and compare_runs: metrics by name, timed phases, their reports.

    collector = nnprof.MetricsCollector()
    collector.record("batch_size", 32)               # a histogram of values (nnprof::Metrics)
    with collector.measure_time("iteration"):        # a duration and a scope of that name
        train_step()
    print(collector.generate_report())               # nnprof's text report, metrics included
    collector.analyze_bottlenecks()["bottleneck"]    # the scope nnprof's analysis names first

    reporter = nnprof.Reporter(collector)
    reporter.save_json("metrics.json")               # timing, memory, throughput (the seed's shape)
    reporter.save_html("report.html")                # nnprof's HTML report of the collector
    reporter.save_csv("metrics.csv")                 # one row per observation

Each collector records into a profiler of its own (nnprof::Profiler), so collectors do not mix.
"""
import json

from nnprof import _native
from nnprof.memory import MemoryTracker

__all__ = ["MetricsCollector", "Reporter", "compare_runs"]

_NS_PER_MS = 1e6


class _TimedBlock:
    """The context manager of MetricsCollector.measure_time(name)."""

    def __init__(self, session, name):
        self._session = session
        self._name = name
        self._guard = None
        self.elapsed_ms = None

    def __enter__(self):
        self._guard = self._session.measure_time(self._name)
        return self

    def __exit__(self, exc_type, exc, tb):
        self.elapsed_ms = self._guard.stop() / _NS_PER_MS
        return False


class MetricsCollector:
    """Collects metrics by name and times phases.

    track_memory: also track the process's memory (a MemoryTracker on the CPU heap, see
        nnprof.memory) from the collector's creation, for the reports' memory section.
    memory_interval: period of that tracker's readings, in milliseconds.
    """

    def __init__(self, track_memory=True, memory_interval=100):
        self._session = _native._MetricsSession()
        self._memory = None
        if track_memory:
            self._memory = MemoryTracker(track_allocations=False, track_timeline=False,
                                         interval=memory_interval, device="cpu").start()

    def record(self, name, value):
        """Adds one observation of `name` (a loss, a batch size, an accuracy)."""
        self._session.record(name, float(value))

    def increment(self, name, delta=1):
        """Adds `delta` to the counter `name` (samples seen, tokens)."""
        self._session.increment(name, float(delta))

    def measure_time(self, name):
        """``with collector.measure_time(name):`` records the block's duration under `name`
        (a histogram in ns) and times a scope `name` over it, which the report and
        analyze_bottlenecks() read. The block object's elapsed_ms holds its duration after it."""
        return _TimedBlock(self._session, name)

    def get_summary(self, name):
        """count, sum, min, max, mean, std, p50, p90, p95, p99, last of `name` (durations of
        measure_time in ns); None when it was never recorded."""
        return self._session.summary(name)

    def metrics(self):
        """Every metric: its summary, name, kind ('counter', 'gauge', 'histogram') and unit."""
        return self._session.metrics()

    def scopes(self):
        """Every timed scope: count, total_ns, self_ns, mean_ns, std_ns, min_ns, max_ns."""
        return self._session.scopes()

    def memory_stats(self):
        """The memory tracker's figures (MemoryTracker.get_stats()), or None without one."""
        return None if self._memory is None else self._memory.get_stats()

    def generate_report(self):
        """nnprof's text report of everything collected: the timed scopes, the metrics section
        and the findings."""
        text = self._session.report_text()
        stats = self.memory_stats()
        if stats is not None:
            text += (f"\nMemory: peak allocated {stats['peak_allocated'] / 1e6:.1f} MB, peak reserved "
                     f"{stats['peak_reserved'] / 1e6:.1f} MB, peak RSS {stats['peak_rss'] / 1e6:.1f} MB "
                     f"({stats['source']})\n")
        return text

    def analyze_bottlenecks(self):
        """nnprof's bottleneck analysis of the timed phases:
        'bottleneck': the name of the most severe finding (None when nothing stands out),
        'description' and 'suggestion' of that finding, 'findings': every finding (type,
        severity, name, value, threshold, description, suggestion), 'phases': each timed
        scope's seconds (inclusive) and self_share (its own time, outside the phases timed
        inside it, over all timed time), and 'slowest': the phase with the most seconds."""
        findings = self._session.analyze_bottlenecks()
        scopes = self._session.scopes()
        total = sum(s["self_ns"] for s in scopes) or 1
        phases = {s["name"]: {"seconds": s["total_ns"] / 1e9, "self_share": s["self_ns"] / total} for s in scopes}
        top = findings[0] if findings else None
        return {
            "bottleneck": top["name"] if top else None,
            "description": top["description"] if top else None,
            "suggestion": top["suggestion"] if top else None,
            "findings": findings,
            "phases": phases,
            "slowest": max(scopes, key=lambda s: s["total_ns"])["name"] if scopes else None,
        }

    def __repr__(self):
        return f"<nnprof.MetricsCollector: {len(self.metrics())} metrics>"


def _ms_stats(summary):
    return {
        "mean": summary["mean"] / _NS_PER_MS,
        "std": summary["std"] / _NS_PER_MS,
        "min": summary["min"] / _NS_PER_MS,
        "max": summary["max"] / _NS_PER_MS,
        "count": summary["count"],
        "total": summary["sum"] / _NS_PER_MS,
    }


class Reporter:
    """Reports of a MetricsCollector.

    iteration: the timed phase that is one training iteration, for the throughput; None: the
        phase named "iteration" when there is one, else the timed phase with the most time.
    batch_size_metric: the metric recording each iteration's batch size, for samples_per_sec.
    """

    def __init__(self, collector, iteration=None, batch_size_metric="batch_size"):
        if not isinstance(collector, MetricsCollector):
            raise TypeError(f"Reporter: expected a MetricsCollector, got {type(collector).__name__}")
        self.collector = collector
        self.iteration = iteration
        self.batch_size_metric = batch_size_metric

    def to_dict(self):
        """{'timing': {phase: {mean, std, min, max, count, total} in ms}, 'memory':
        {peak_allocated, peak_reserved (bytes), source}, 'throughput': {samples_per_sec,
        iterations_per_sec, iteration}, 'metrics': {name: summary} of the other metrics}."""
        metrics = self.collector.metrics()
        timed = {m["name"]: m for m in metrics if m["kind"] == "histogram" and m["unit"] == "ns"}
        timing = {name: _ms_stats(m) for name, m in timed.items()}
        others = {m["name"]: {k: v for k, v in m.items() if k not in ("name",)}
                  for m in metrics if m["name"] not in timed}

        memory = {"peak_allocated": None, "peak_reserved": None, "source": "not measured (track_memory=False)"}
        stats = self.collector.memory_stats()
        if stats is not None:
            memory = {"peak_allocated": stats["peak_allocated"], "peak_reserved": stats["peak_reserved"],
                      "peak_rss": stats["peak_rss"], "source": stats["source"]}

        iteration = self.iteration
        if iteration is None and timed:
            iteration = "iteration" if "iteration" in timed else max(timed.values(), key=lambda m: m["sum"])["name"]
        throughput = {"samples_per_sec": None, "iterations_per_sec": None, "iteration": iteration}
        if iteration in timed and timed[iteration]["sum"] > 0:
            seconds = timed[iteration]["sum"] / 1e9
            throughput["iterations_per_sec"] = timed[iteration]["count"] / seconds
            batch = others.get(self.batch_size_metric)
            if batch is not None:
                throughput["samples_per_sec"] = batch["sum"] / seconds
        return {"timing": timing, "memory": memory, "throughput": throughput, "metrics": others}

    def save_json(self, path):
        """Writes to_dict() as JSON."""
        with open(path, "w", encoding="utf-8") as out:
            json.dump(self.to_dict(), out, indent=2, allow_nan=False)
            out.write("\n")

    def save_html(self, path):
        """nnprof's HTML report of the collector (one self-contained page: hot paths, call
        tree, timeline, the metrics' charts and tables, findings)."""
        if not str(path).lower().endswith((".html", ".htm")):
            raise ValueError(f"Reporter.save_html: the path must end in .html (got {path!r})")
        self.collector._session.save(str(path))

    def save_csv(self, path, summary=False):
        """Writes the metrics as CSV: one row per observation (metric,kind,unit,time_ns,value,
        thread), or with summary=True one row per metric with its statistics."""
        if summary:
            self.collector._session.save_metrics_summary(str(path))
            return
        if not str(path).lower().endswith(".csv"):
            raise ValueError(f"Reporter.save_csv: the path must end in .csv (got {path!r})")
        self.collector._session.save_metrics(str(path))

    def summary(self):
        d = self.to_dict()
        lines = ["Timing (ms):"]
        for name, t in d["timing"].items():
            lines.append(f"  {name}: mean {t['mean']:.3f}, std {t['std']:.3f}, min {t['min']:.3f}, "
                         f"max {t['max']:.3f} ({t['count']} runs)")
        m = d["memory"]
        if m["peak_allocated"] is None:
            lines.append(f"Memory: {m['source']}")
        else:
            lines.append(f"Memory: peak allocated {m['peak_allocated'] / 1e6:.1f} MB, "
                         f"peak reserved {m['peak_reserved'] / 1e6:.1f} MB ({m['source']})")
        t = d["throughput"]
        if t["iterations_per_sec"] is not None:
            samples = "" if t["samples_per_sec"] is None else f", {t['samples_per_sec']:.1f} samples/s"
            lines.append(f"Throughput: {t['iterations_per_sec']:.2f} iterations/s of {t['iteration']!r}{samples}")
        for name, s in d["metrics"].items():
            lines.append(f"{name}: mean {s['mean']:.6g}, min {s['min']:.6g}, max {s['max']:.6g} ({s['count']} values)")
        return "\n".join(lines)

    def print_summary(self):
        print(self.summary())


def _run_seconds(run, side):
    """Seconds a run took, for compare_runs."""
    from nnprof.performance import PerformanceMetrics, PerformanceProfiler
    if isinstance(run, PerformanceMetrics):
        return run.timing.wall_time_s
    if isinstance(run, PerformanceProfiler):
        return sum(run.get_timing_breakdown().values())
    if isinstance(run, (int, float)) and not isinstance(run, bool):
        return float(run)
    if isinstance(run, dict):
        for key in ("time", "wall_time_s", "total_time", "seconds"):
            if key in run:
                return float(run[key])
        raise KeyError(f"compare_runs: run {side} is a dict without 'time', 'wall_time_s', 'total_time' or 'seconds'")
    raise TypeError(f"compare_runs: run {side} is a {type(run).__name__}; expected a MetricsCollector, "
                    "PerformanceProfiler, PerformanceMetrics, a number of seconds or a dict with 'time'")


def compare_runs(a, b):
    """Compares run `a` (the baseline) with run `b`; 'speedup' > 1 means b is faster.

    a and b are both MetricsCollector: nnprof::compare of their profiles. speedup is a's
        time in timed phases over b's (the top-level measure_time blocks, summed); 'verdict'
        ('improved', 'regressed', 'stable', 'unreliable') and 'scopes' (per phase: ratio of
        mean time per call b/a, verdict from a Mann-Whitney test, p_value) come with it.
    or each a number of seconds, a dict with 'time' (or 'wall_time_s', 'total_time',
        'seconds'), PerformanceMetrics (its wall time) or a PerformanceProfiler (the wall time
        of all its regions): speedup is time a / time b.
    Always: 'speedup', 'time_a_s', 'time_b_s'.
    """
    if isinstance(a, MetricsCollector) and isinstance(b, MetricsCollector):
        c = _native._compare_sessions(a._session, b._session)
        time_a, time_b = c.pop("instrumented_a_ns") / 1e9, c.pop("instrumented_b_ns") / 1e9
        c.pop("runtime_basis")
        c.pop("runtime_change")
        if time_b <= 0:
            raise ValueError("compare_runs: run b has no timed phase (measure_time) to compare")
        return {"speedup": time_a / time_b, "time_a_s": time_a, "time_b_s": time_b,
                "basis": "time in timed phases (measure_time)", **c}
    time_a, time_b = _run_seconds(a, "a"), _run_seconds(b, "b")
    if time_b <= 0:
        raise ValueError(f"compare_runs: run b took {time_b} s; a speedup needs a positive time")
    return {"speedup": time_a / time_b, "time_a_s": time_a, "time_b_s": time_b, "basis": "the runs' times"}
