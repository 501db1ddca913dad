"""The C++ profiler's Python shapes: module-level functions over the global profiler, the
@profile decorator and the sampling context manager. Everything here calls nnprof._native;
nothing re-implements the library."""
import contextlib
import functools
import inspect

from nnprof import _native
from nnprof._native import Error, Profile, Profiler, Scope, global_profiler, load, scope
from nnprof._native import SystemMonitor, carbon_estimate, grid_intensities, merge_ranks
from nnprof._native import ContinuousProfiler, LiveServer, analyze_performance_trends

__all__ = [
    "Error", "Profile", "Profiler", "Scope", "global_profiler", "load", "scope", "profile",
    "start", "stop", "add_flops", "add_items", "annotate", "arg", "snapshot", "save", "summary",
    "print_summary", "report", "bottlenecks", "start_sampling", "stop_sampling", "sampling",
    "set_thread_name", "report_formats", "SystemMonitor", "carbon_estimate", "grid_intensities",
    "merge_ranks", "ContinuousProfiler", "LiveServer", "analyze_performance_trends",
]


def profile(func=None, /, name=None, *, profiler=None):
    """Times every call of a function as a scope.

    ``@nnprof.profile`` names the scope after the function's qualified name;
    ``@nnprof.profile("step")`` or ``@nnprof.profile(name="step")`` gives it a name;
    ``profiler=`` records into that Profiler instead of the global one. A call that raises is
    timed too, and the exception goes on.
    """
    if isinstance(func, str):  # @profile("name")
        if name is not None:
            raise TypeError("nnprof.profile: give the name once, positionally or as name=")
        return functools.partial(profile, name=func, profiler=profiler)
    if func is None:  # @profile(name=..., profiler=...)
        return functools.partial(profile, name=name, profiler=profiler)
    if not callable(func):
        raise TypeError(f"nnprof.profile decorates a function, not {type(func).__name__}")
    if inspect.iscoroutinefunction(func) or inspect.isasyncgenfunction(func) or inspect.isgeneratorfunction(func):
        raise TypeError(
            f"nnprof.profile: {func.__qualname__} is a coroutine or generator function; its suspensions would "
            "interleave other scopes on the thread. Open `with nnprof.scope(name):` around the work inside it instead")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"nnprof.profile: name must be a str, not {type(name).__name__}")
    label = name if name is not None else getattr(func, "__qualname__", None) or repr(func)
    make_scope = scope if profiler is None else profiler.scope
    make_scope(label)  # interns the name now, and rejects an empty one at decoration time

    @functools.wraps(func)
    def timed(*args, **kwargs):
        with make_scope(label):
            return func(*args, **kwargs)

    timed.__nnprof_scope__ = label
    return timed


def start(name):
    """Opens a scope of the global profiler on the calling thread (prefer ``with scope(name)``)."""
    global_profiler().start(name)


def stop(name):
    """Closes the innermost open scope ``name`` of the global profiler on the calling thread."""
    global_profiler().stop(name)


def add_flops(flops, bytes=0):
    """Declares work done in the calling thread's innermost open scope (global profiler)."""
    global_profiler().add_flops(flops, bytes)


def add_items(name, count):
    """Reports work items (samples, tokens, batches) processed under scope ``name``."""
    global_profiler().add_items(name, count)


def annotate(key, value):
    """Records a fact about the run (``annotate("batch_size", 32)``) in every later snapshot."""
    global_profiler().annotate(key, str(value))


def arg(key, value):
    """Attaches ``key=value`` (str, int or float) to the calling thread's innermost open scope."""
    global_profiler().arg(key, value)


def snapshot():
    """Everything the global profiler recorded so far, as a Profile."""
    return global_profiler().snapshot()


def save(path):
    """Saves a snapshot of the global profiler: a .nnprof file, or the report the extension names."""
    global_profiler().save(path)


def summary():
    """The text summary of the global profiler's snapshot."""
    return global_profiler().summary()


def print_summary():
    """Prints the text summary of the global profiler's snapshot."""
    global_profiler().print_summary()


def report(target="text", *, format=None, full_names=False, rows=0):
    """A report of the global profiler: ``report("json")`` returns it, ``report("run.html")`` writes it."""
    return global_profiler().report(target, format=format, full_names=full_names, rows=rows)


def bottlenecks(**thresholds):
    """The bottlenecks of everything the global profiler recorded, most severe first."""
    return global_profiler().bottlenecks(**thresholds)


def start_sampling(*, profiler=None, hz=199.0, clock="cpu", call_graph=True, unwinder="auto", max_stack_depth=128):
    """Samples every thread's call stack (CPU time by default) into the profiler until stop_sampling()."""
    _native.start_sampling(profiler=profiler, hz=hz, clock=clock, call_graph=call_graph, unwinder=unwinder,
                           max_stack_depth=max_stack_depth)


def stop_sampling():
    """Stops sampling; returns its figures (samples, dropped, effective_hz, mechanism, unwinder)."""
    return _native.stop_sampling()


@contextlib.contextmanager
def sampling(**options):
    """``with nnprof.sampling(hz=999):`` samples the block (start_sampling's options). The dict it
    yields is filled with stop_sampling()'s figures when the block ends."""
    figures = {}
    start_sampling(**options)
    try:
        yield figures
    finally:
        figures.update(stop_sampling())


set_thread_name = _native.set_thread_name
report_formats = _native.report_formats
