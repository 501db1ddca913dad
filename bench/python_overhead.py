"""What nnprof costs from Python: a scope, the decorator, and instrument() plus operator capture
on a small training loop against the PyTorch profiler recording the same (operators with their
input shapes). Prints one table; docs/PYTHON.md and docs/PERFORMANCE.md quote it.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/python_overhead.py
"""
import contextlib
import statistics
import time
import timeit

import nnprof


def per_call_us(statement, number, repeat=7):
    """Median of `repeat` runs of `number` calls, in microseconds per call."""
    return statistics.median(timeit.repeat(statement, number=number, repeat=repeat)) / number * 1e6


def scope_costs(n=200_000):
    profiler = nnprof.Profiler()

    def bare():
        pass

    def null():
        with contextlib.nullcontext():
            pass

    def global_scope():
        with nnprof.scope("x"):
            pass

    def profiler_scope():
        with profiler.scope("x"):
            pass

    def start_stop():
        profiler.start("x")
        profiler.stop("x")

    def plain():
        return None

    decorated = nnprof.profile("f", profiler=profiler)(plain)
    rows = {name: per_call_us(fn, n) for name, fn in [
        ("empty function call", bare), ("with contextlib.nullcontext()", null), ("with nnprof.scope(name)", global_scope),
        ("with profiler.scope(name)", profiler_scope), ("profiler.start(name); profiler.stop(name)", start_stop),
        ("call of a plain function", plain), ("call of a @nnprof.profile function", decorated)]}
    return rows


def training_costs(steps=30, rounds=9):
    import torch
    import nnprof.torch

    torch.manual_seed(0)
    torch.set_num_threads(1)
    layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.0, batch_first=True)
    model = torch.nn.Sequential(torch.nn.TransformerEncoder(layer, num_layers=2), torch.nn.Linear(64, 8))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(8, 16, 64), torch.randn(8, 16, 8)

    def loop():
        # CPU time of the whole process (every thread: nnprof's drainer too), which other
        # programs on a shared machine disturb less than wall time.
        start = time.process_time()
        for _ in range(steps):
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
        return (time.process_time() - start) / steps * 1e3

    def results_time(get):
        start = time.process_time()
        get()
        return (time.process_time() - start) / steps * 1e3

    def plain():
        return loop(), 0.0

    def with_nnprof():
        profiler = nnprof.Profiler()
        with nnprof.torch.instrument(model, profiler=profiler), nnprof.torch.capture_operators(profiler=profiler):
            ms = loop()
        return ms, results_time(lambda: profiler.snapshot().operators())

    def with_nnprof_ops_only():
        profiler = nnprof.Profiler()
        with nnprof.torch.capture_operators(profiler=profiler):
            ms = loop()
        return ms, results_time(lambda: profiler.snapshot().operators())

    def with_torch_profiler():
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True) as prof:
            ms = loop()
        # The PyTorch profiler's results exist only once post-processed.
        return ms, results_time(lambda: prof.key_averages(group_by_input_shape=True))

    loop()  # warm up
    variants = [("no profiler", plain), ("nnprof capture_operators()", with_nnprof_ops_only),
                ("nnprof instrument() + capture_operators()", with_nnprof),
                ("torch.profiler (CPU, record_shapes)", with_torch_profiler)]
    results = {name: [] for name, _ in variants}
    for _ in range(rounds):  # interleaved, so that drifts of the machine hit every variant alike
        for name, run in variants:
            results[name].append(run())
    return {name: (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))
            for name, runs in results.items()}


if __name__ == "__main__":
    print("per call (median of 7 x 200000), microseconds")
    for name, us in scope_costs().items():
        print(f"  {name:45s} {us:7.3f}")
    try:
        costs = training_costs()
    except ImportError:
        costs = {}
    if costs:
        base = costs["no profiler"][0]
        print("training step of a 2-layer transformer (d_model 64, batch 8x16, 1 thread), process CPU time per step,")
        print("median of 9 x 30 steps: while recording, and getting the operator table afterwards")
        for name, (ms, results_ms) in costs.items():
            print(f"  {name:45s} {ms:7.2f} ms  ({(ms / base - 1) * 100:+5.1f}%)  + results {results_ms:5.2f} ms")
