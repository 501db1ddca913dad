"""PerformanceProfiler: time, memory and compute of named regions of a program (seed 003).

    profiler = nnprof.PerformanceProfiler()
    with profiler.profile("training_loop"):
        train()
    metrics = profiler.get_metrics()
    print(metrics.summary())     # Peak RAM: 2.4 GB, Wall Time: 45.2s, GPU Util: not measured

Each region is nnprof::Profiler::profile (nnprof/session_metrics.hpp) on a profiler of the
PerformanceProfiler's own: wall time; the process's CPU, user and system time (getrusage, every
thread); the process's RSS at the start and end, and its peak (exact when the process's
high-water mark rose in the region, else the largest of the start, end and the readings taken
every memory_interval); FLOPs declared inside the region. An exception leaving the region keeps
its figures up to then (PerformanceMetrics.completed is False).

What is not measured yet is None and prints as "not measured", never a guess:
- system: a figure the region's system monitor (nnprof.SystemMonitor) could not read: a disk
  busy % without /proc/diskstats, carbon_kg without track_carbon;
- GPU figures without a GPU nnprof can trace (no driver, no device, built without CUDA);
- estimated_flops without estimate_flops=True; memory_leak_detected without detailed_memory=True.
MB are 10**6 bytes and GB 10**9, as the seed prints them.
"""
import dataclasses
import os
import sys
import warnings
from typing import Any, Dict, List, Optional

from nnprof import _native

__all__ = ["PerformanceProfiler", "PerformanceMetrics", "MemoryMetrics", "TimingMetrics", "ComputeMetrics",
           "SystemMetrics"]

_MB = 1e6
_LINE_PROFILE_HZ = 997  # enable_line_profiling's sampling rate: ~1,000 samples per CPU second, a few % of cost
_NOT_MEASURED = "not measured"


@dataclasses.dataclass
class MemoryMetrics:
    peak_ram_mb: float                       # peak RSS of the process in the region
    final_ram_mb: float                      # RSS at the region's end
    initial_ram_mb: float                    # RSS at its start
    peak_ram_exact: bool                     # False: the peak is the largest reading, a lower bound
    peak_gpu_mb: Optional[float] = None      # device memory allocated at most (CUPTI); None: no GPU traced
    memory_leak_detected: Optional[bool] = None  # detailed_memory only, see PerformanceProfiler
    heap_initial_mb: Optional[float] = None  # glibc heap in use at the start (detailed_memory)
    heap_peak_mb: Optional[float] = None     # the largest reading of the heap in use (detailed_memory)
    heap_final_mb: Optional[float] = None    # heap in use at the end (detailed_memory)


@dataclasses.dataclass
class TimingMetrics:
    wall_time_s: float
    cpu_time_s: float     # user + system, every thread of the process
    user_time_s: float
    system_time_s: float


@dataclasses.dataclass
class ComputeMetrics:
    estimated_flops: Optional[float] = None     # FLOPs of the torch operators run in the region
    flops_per_second: Optional[float] = None    # estimated_flops / wall time
    gpu_utilization_percent: Optional[float] = None  # NVML's mean over the region; None: not measured
    cpu_utilization_percent: Optional[float] = None  # CPU time / wall time: 100 is one core busy


@dataclasses.dataclass
class SystemMetrics:
    """The machine over the region, from its system monitor (nnprof.SystemMonitor); None: not read."""
    cpu_percent: Optional[float] = None     # mean busy % of the CPUs the process may use (cgroup quota, else all)
    memory_percent: Optional[float] = None  # peak % of memory in use (of the cgroup's limit, else of the host's)
    disk_io_percent: Optional[float] = None  # mean busy % of the busiest disk
    network_io_mb: Optional[float] = None   # MB received and sent on every interface but lo
    energy_kwh: Optional[float] = None      # every energy domain (psys excluded), measured or modelled
    energy_measured: Optional[bool] = None  # True: RAPL/NVML only; False: some of it is modelled
    carbon_kg: Optional[float] = None       # energy x PUE x grid intensity (track_carbon)
    carbon_region: Optional[str] = None     # the grid intensity's region and source


@dataclasses.dataclass
class PerformanceMetrics:
    name: str
    completed: bool       # False: an exception ended the region; the figures cover it up to then
    memory: MemoryMetrics
    timing: TimingMetrics
    compute: ComputeMetrics
    system: SystemMetrics
    notes: list = dataclasses.field(default_factory=list)  # why a figure is not measured
    # enable_line_profiling: the region's Python lines, most self time first (Profile.python_lines()
    # rows: function, file, line, self/total samples, time and percentage); None: not measured.
    line_profile: Optional[List[Dict[str, Any]]] = None

    def to_dict(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)

    def summary(self) -> str:
        """One line: "Peak RAM: 2.4 GB, Wall Time: 45.2s, GPU Util: 78%"."""
        peak = self.memory.peak_ram_mb * _MB
        ram = f"{peak / 1e9:.1f} GB" if peak >= 1e9 else f"{peak / _MB:.1f} MB"
        wall = self.timing.wall_time_s
        wall_text = f"{wall:.1f}s" if wall >= 1 else f"{wall:.3g}s"
        gpu = self.compute.gpu_utilization_percent
        gpu_text = _NOT_MEASURED if gpu is None else f"{gpu:.0f}%"
        line = f"Peak RAM: {ram}, Wall Time: {wall_text}, GPU Util: {gpu_text}"
        return line if self.completed else line + " (partial: ended by an exception)"

    def line_report(self, n=20) -> str:
        """The region's `n` hottest Python lines as text, or why there is no line profile."""
        if self.line_profile is None:
            why = next((note for note in self.notes if note.startswith("line_profile")), "line_profile: not measured")
            return why
        rows = [f"{'self %':>7} {'total %':>8}  line"]
        for l in self.line_profile[:n]:
            rows.append(f"{l['self_percentage']:7.1f} {l['percentage']:8.1f}  {l['file']}:{l['line']}  {l['function']}")
        return "\n".join(rows)


def _operator_capture(profiler):
    """nnprof.torch.capture_operators into `profiler`: libnnprof_torch's observer makes every
    torch operator a scope and declares its FLOPs. Raises RuntimeError (nnprof.Error) naming the
    reason when torch or libnnprof_torch is missing."""
    try:
        import nnprof.torch as nnprof_torch
    except ImportError as error:
        raise RuntimeError(f"estimate_flops=True counts the FLOPs of torch operators: {error}") from None
    return nnprof_torch.capture_operators(profiler)


class _OpenRegion:
    def __init__(self, name):
        self.name = name
        self.native = None
        self.sampler = None
        self.gpu = None
        self.observer = None
        self.lines = None  # the CPU sampler of enable_line_profiling
        self.notes = []
        self.system = None  # the region's nnprof.SystemMonitor


def _integrated(times, values):
    """Sum of rate x interval: each value is the mean rate over the interval ending at its sample."""
    total = 0.0
    for i in range(1, len(times)):
        if values[i] is not None:
            total += values[i] * (times[i] - times[i - 1])
    return total


def _mean(values):
    read = [v for v in values if v is not None]
    return sum(read) / len(read) if read else None


def _system_metrics(system, carbon, notes):
    """SystemMetrics from a SystemMonitor.result() dict and its carbon dict (or None)."""
    tracks, times = system["tracks"], system["sample_s"]

    def values(name):
        track = tracks.get(name)
        return track["values"] if track is not None else []

    metrics = SystemMetrics()
    cgroup_cpu = _mean(values("cgroup.cpu.used"))
    metrics.cpu_percent = cgroup_cpu if cgroup_cpu is not None else _mean(values("system.cpu.busy"))
    memory = [v for v in values("cgroup.memory.used") if v is not None] or \
        [v for v in values("system.memory.used") if v is not None]
    metrics.memory_percent = max(memory) if memory else None
    disks = [_mean(t["values"]) for name, t in tracks.items() if name.startswith("disk.") and name.endswith(".busy")]
    disks = [d for d in disks if d is not None]
    metrics.disk_io_percent = max(disks) if disks else None
    if not disks:
        notes.append("system.disk_io_percent: no disk was read (/proc/diskstats)")
    net = [name for name in tracks if name.startswith("net.") and not name.startswith("net.lo.")
           and (name.endswith(".rx_bytes") or name.endswith(".tx_bytes"))]
    metrics.network_io_mb = sum(_integrated(times, values(name)) for name in net) / 1e6 if net else None
    domains = [d for d in system["energy"] if d["kind"] != "psys"]
    if domains:
        metrics.energy_kwh = sum(d["joules"] for d in domains) / 3.6e6
        metrics.energy_measured = all(d["measured"] for d in domains)
        for d in domains:
            if not d["measured"]:
                notes.append(f"system.energy_kwh: {d['name']} is modelled, not measured: {d['note']}")
    if carbon is not None:
        metrics.carbon_kg = carbon["grams_co2"] / 1000.0
        metrics.carbon_region = f"{carbon['region']} ({carbon['grams_per_kwh']:g} g/kWh, {carbon['source']})"
        if carbon["defaulted_region"]:
            notes.append("system.carbon_kg: no carbon_region given: the world average grid intensity was used")
    notes.extend(f"system: {note}" for note in system["notes"])
    return metrics


class _ProfiledBlock:
    """The context manager of PerformanceProfiler.profile(name)."""

    def __init__(self, profiler, name):
        self._profiler = profiler
        self._name = name
        self._region = None

    def __enter__(self):
        if self._region is not None:
            raise RuntimeError(f"PerformanceProfiler: the block of {self._name!r} is already open")
        self._region = self._profiler._begin(self._name)
        return self

    def __exit__(self, exc_type, exc, tb):
        region, self._region = self._region, None
        self._profiler._end(region, completed=exc_type is None)
        return False


class PerformanceProfiler:
    """Time, memory and compute of named regions.

    track_gpu: trace the GPU (CUPTI: device memory; NVML: utilisation) in each region, where
        nnprof can; elsewhere the GPU figures are None.
    track_carbon: give each region's carbon (system.carbon_kg): its energy (RAPL, NVML, else
        modelled from CPU utilisation and said so in system.energy_measured and the notes) x PUE x
        the grid intensity of `carbon_region` (ISO 3166 code; default NNPROF_CARBON_REGION, else the
        world average, said so in the notes), from nnprof's shipped table, never a network lookup.
    Each region runs a system monitor (nnprof.SystemMonitor) at memory_interval: system.* are the
    machine's CPU and memory (against the container's limits when it has any), disk busy %,
    network traffic and energy over the region.
    detailed_memory: read the glibc heap in use every memory_interval and flag a potential leak:
        memory_leak_detected is True when the heap grew by more than 1 MB over the region and
        kept at least half of what it gained at its peak (memory allocated and never given
        back). Without it memory_leak_detected is None.
    memory_interval: seconds between memory readings (RSS always, the heap with detailed_memory).
    enable_line_profiling: sample the CPU at 997 Hz during each region, Python frames
        included (CPython 3.11), and give its line-level profile (PerformanceMetrics.line_profile,
        line_report()): each line's share of the samples whose innermost Python frame was on it
        (with the native code it called), and of those with it anywhere on the Python stack. One
        sampler runs per process: a region inside another region, or while nnprof.start_sampling()
        or `nnprof record` samples, has no line profile of its own and a note says why.
    estimate_flops: count the FLOPs of every torch operator run in the region on the thread
        that opened it (nnprof's operator observer, libnnprof_torch: matmuls, convolutions,
        softmax, layer norm, GELU, elementwise add/sub/mul/div).
    """

    def __init__(self, track_gpu=True, track_carbon=False, detailed_memory=False, memory_interval=0.5,
                 enable_line_profiling=False, estimate_flops=False, carbon_region="", pue=1.0):
        if memory_interval <= 0:
            raise ValueError(f"PerformanceProfiler: memory_interval must be a positive number of seconds "
                             f"(got {memory_interval})")
        self.track_gpu = bool(track_gpu)
        self.track_carbon = bool(track_carbon)
        self.detailed_memory = bool(detailed_memory)
        self.memory_interval = float(memory_interval)
        self.enable_line_profiling = bool(enable_line_profiling)
        self.estimate_flops = bool(estimate_flops)
        self.carbon_region = str(carbon_region)
        self.pue = float(pue)
        if self.track_carbon:
            # An unknown region or a PUE below 1 fails now, not at the end of the first region.
            regions = {g["region"] for g in _native.grid_intensities()}
            if self.carbon_region and self.carbon_region.upper() not in regions:
                raise ValueError(f"PerformanceProfiler: unknown carbon_region {self.carbon_region!r}; "
                                 f"nnprof.grid_intensities() lists the regions: {', '.join(sorted(regions))}")
            if not self.pue >= 1.0:
                raise ValueError(f"PerformanceProfiler: pue must be at least 1.0 (got {self.pue})")
        self._profiler = _native.Profiler()  # this PerformanceProfiler's own regions and operators
        self._regions = _native._RegionProfiler(self._profiler)
        self._extras = {}       # name -> what the Python side measured of its last finished region
        self._gpu_why = None
        if self.track_gpu:
            usable, why = _native._gpu_available()
            self._gpu_why = None if usable else why
        self._capture = _operator_capture(self._profiler) if self.estimate_flops else None  # says now what is missing
        self._capture_depth = 0

    # -- regions ----------------------------------------------------------------------------

    def profile(self, operation_name):
        """``with profiler.profile(name):`` measures the block as a region named `name`."""
        return _ProfiledBlock(self, str(operation_name))

    def _begin(self, name):
        region = _OpenRegion(name)
        if self.estimate_flops:
            try:
                if self._capture_depth == 0:
                    self._capture.start()
                self._capture_depth += 1
                region.observer = self._capture
            except RuntimeError as error:  # another observer records (nnprof record, another profiler)
                region.notes.append(f"estimated_flops: not measured: {error}")
                warnings.warn(f"PerformanceProfiler.profile({name!r}): {error}; the region's FLOPs are not counted",
                              RuntimeWarning, stacklevel=3)
        if self.enable_line_profiling:
            self._start_line_sampler(region)
        try:
            region.sampler = _native._AllocatorSampler(self.memory_interval * 1000.0)
            region.sampler.start()
            region.system = _native.SystemMonitor(interval=max(0.01, self.memory_interval))
            if self.track_gpu and self._gpu_why is None:
                gpu = _native._GpuTrace(True)
                if gpu.tracing:
                    region.gpu = gpu
                else:
                    region.notes.append(f"GPU not traced: {gpu.status}")
            region.native = self._regions.begin(name)
        except BaseException:
            self._release_observer(region)
            if region.lines is not None:
                region.lines.stop()
            raise
        return region

    def _start_line_sampler(self, region):
        if os.environ.get("NNPROF_RECORD_OUT"):
            region.notes.append("line_profile: not measured: the process runs under `nnprof record`, whose CPU "
                                "samples hold the Python lines (nnprof.load(profile).python_lines())")
            return
        try:
            sampler = _native._LineSampler(_LINE_PROFILE_HZ)
            sampler.start()
            region.lines = sampler
        except RuntimeError as error:  # another sampler runs: an enclosing region, nnprof.start_sampling()
            region.notes.append(f"line_profile: not measured: {error}")

    def _release_observer(self, region):
        if region.observer is None:
            return
        region.observer = None
        self._capture_depth -= 1
        if self._capture_depth == 0:
            self._capture.stop()

    def _end(self, region, completed):
        try:
            region.native.end(completed)
        finally:
            region.sampler.stop()
            system = carbon = None
            if region.system is not None:
                region.system.stop()
                system = region.system.result()
                if self.track_carbon:
                    carbon = region.system.carbon(self.carbon_region, self.pue)
            self._release_observer(region)
            line_profile = None
            if region.lines is not None:
                samples, line_profile = region.lines.stop()
                if not line_profile:
                    region.notes.append(f"line_profile: none of the region's {samples} CPU samples ran Python code "
                                        "nnprof can read (CPython 3.11)")
                    line_profile = None
            gpu_memory = gpu_streams = None
            if region.gpu is not None:
                torch = sys.modules.get("torch")
                if torch is not None and torch.cuda.is_initialized():
                    torch.cuda.synchronize()
                region.gpu.stop()
                gpu_memory = region.gpu.memory_report()
                gpu_streams = region.gpu.stream_report()
            flops_counted = self.estimate_flops and not any(n.startswith("estimated_flops") for n in region.notes)
            self._extras[region.name] = (region.sampler.readings(), gpu_memory, gpu_streams, region.notes, flops_counted,
                                         line_profile, system, carbon)
            self._extras[None] = self._extras[region.name]

    # -- results ----------------------------------------------------------------------------

    def has_results(self):
        """True once a region has finished (also when an exception ended it)."""
        return self._regions.has_results()

    def get_metrics(self, operation_name=None):
        """The metrics of the last finished region named `operation_name`, or of the last
        finished region. KeyError for a name without a finished region; RuntimeError when
        none has finished."""
        raw = self._regions.get_metrics(operation_name)
        if raw is None:
            if operation_name is not None:
                raise KeyError(f"PerformanceProfiler: no finished region named {operation_name!r}")
            raise RuntimeError("PerformanceProfiler: no profiled region has finished yet")
        readings, gpu_memory, gpu_streams, notes, flops_counted, line_profile, system, carbon = self._extras[
            raw["name"] if operation_name is not None else None]
        return self._metrics(raw, readings, gpu_memory, gpu_streams, list(notes), flops_counted, line_profile, system,
                             carbon)

    def _metrics(self, raw, readings, gpu_memory, gpu_streams, notes, flops_counted, line_profile, system, carbon):
        wall_s = raw["wall_ns"] / 1e9
        peak_rss = raw["rss_peak_bytes"]
        if not raw["rss_peak_exact"] and readings:
            peak_rss = max(peak_rss, max(r[3] for r in readings))
        memory = MemoryMetrics(peak_ram_mb=peak_rss / _MB, final_ram_mb=raw["rss_final_bytes"] / _MB,
                               initial_ram_mb=raw["rss_initial_bytes"] / _MB, peak_ram_exact=raw["rss_peak_exact"])
        if self.detailed_memory and readings:
            initial, final = readings[0][1], readings[-1][1]
            peak = max(r[1] for r in readings)
            growth = final - initial
            memory.heap_initial_mb, memory.heap_peak_mb, memory.heap_final_mb = initial / _MB, peak / _MB, final / _MB
            memory.memory_leak_detected = growth > _MB and growth >= 0.5 * (peak - initial)
        elif not self.detailed_memory:
            notes.append("memory_leak_detected: not measured (detailed_memory=False)")
        timing = TimingMetrics(wall_time_s=wall_s, cpu_time_s=raw["cpu_ns"] / 1e9, user_time_s=raw["user_ns"] / 1e9,
                               system_time_s=raw["system_ns"] / 1e9)
        compute = ComputeMetrics(cpu_utilization_percent=raw["cpu_utilization"] * 100.0)
        if flops_counted:
            compute.estimated_flops = raw["flops"]
            compute.flops_per_second = raw["flops_per_second"]
        elif not self.estimate_flops:
            notes.append("estimated_flops: not measured (estimate_flops=False)")
        if gpu_memory is not None:
            memory.peak_gpu_mb = sum(d["peak_bytes"] for d in gpu_memory["devices"]) / _MB
            utilization = [d["gpu_utilization_mean"] for d in gpu_streams["devices"]
                           if d["gpu_utilization_mean"] is not None]
            if utilization:
                compute.gpu_utilization_percent = sum(utilization) / len(utilization)
            else:
                notes.append("gpu_utilization_percent: no NVML sample in the region")
        elif not self.track_gpu:
            notes.append("GPU: not measured (track_gpu=False)")
        elif self._gpu_why is not None:
            notes.append(f"GPU: not measured: {self._gpu_why}")
        if not self.enable_line_profiling:
            notes.append("line_profile: not measured (enable_line_profiling=False)")
        if system is not None:
            system_metrics = _system_metrics(system, carbon, notes)
        else:
            system_metrics = SystemMetrics()
            notes.append("system: not measured: the region's system monitor did not start")
        if not self.track_carbon:
            notes.append("system.carbon_kg: not measured (track_carbon=False)")
        return PerformanceMetrics(name=raw["name"], completed=raw["completed"], memory=memory, timing=timing,
                                  compute=compute, system=system_metrics, notes=notes, line_profile=line_profile)

    def get_timing_breakdown(self):
        """Seconds of wall time of every region name (regions of one name summed), in the
        order first finished."""
        return {name: wall_ns / 1e9 for name, _count, wall_ns, _share in self._regions.get_timing_breakdown()}

    def get_current_memory(self):
        """The process's resident memory (RSS) now, in MB."""
        return _native._current_rss() / _MB

    def get_current_gpu_memory(self):
        """The share of the current CUDA device's memory in use now, 0..1 (every process's, as
        the driver reports it). RuntimeError naming the reason where no GPU is tracked:
        track_gpu=False, no usable GPU, or torch without CUDA."""
        if not self.track_gpu:
            raise RuntimeError("PerformanceProfiler.get_current_gpu_memory: track_gpu is False")
        if self._gpu_why is not None:
            raise RuntimeError(f"PerformanceProfiler.get_current_gpu_memory: {self._gpu_why}")
        torch = sys.modules.get("torch")
        if torch is None or not torch.cuda.is_available():
            raise RuntimeError("PerformanceProfiler.get_current_gpu_memory: reads the device's memory through "
                               "torch.cuda, which is not imported or has no CUDA device")
        free, total = torch.cuda.mem_get_info()
        return (total - free) / total
