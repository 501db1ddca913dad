"""A small training loop for the tests of nnprof's PyTorch operators: an MLP with layer norm,
GELU and softmax cross-entropy, trained for a few steps with SGD on random data.

Imports torch late, after other work, as a real script may: nnprof must pick up LibTorch when
it is loaded, not only at start. Prints, on its last line, JSON with the PyTorch profiler's
own per-operator call counts and FLOPs when run with --torch-profiler (for comparison), with
its events in order (name, input shapes, sequence number, thread). --time-steps adds each
step's wall time and the monotonic clock at the end of the last step (for the overhead
benchmark, bench/torch_overhead.py), and with --torch-profiler the time torch's profiler takes
to stop and to aggregate its events.
"""
import argparse
import json
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--torch-profiler", action="store_true",
                        help="run under torch.profiler (record_shapes, with_flops) and print its counts as JSON")
    parser.add_argument("--time-steps", action="store_true",
                        help="print each step's wall time (ns) and the end of the last step as JSON")
    args = parser.parse_args()

    total = sum(i * i for i in range(10_000))  # work before torch is loaded
    assert total > 0

    import torch  # noqa: E402  (late on purpose)

    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    model = torch.nn.Sequential(
        torch.nn.Linear(args.width, 2 * args.width),
        torch.nn.LayerNorm(2 * args.width),
        torch.nn.GELU(),
        torch.nn.Linear(2 * args.width, 10),
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(args.batch, args.width)
    y = torch.randint(0, 10, (args.batch,))

    def step():
        with torch.autograd.profiler.record_function("train_step"):
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
        return loss

    step_ns = []

    def timed_steps():
        loss = None
        for _ in range(args.steps):
            begin = time.perf_counter_ns()
            loss = step()
            step_ns.append(time.perf_counter_ns() - begin)
        return loss

    timing = {}
    if args.torch_profiler:
        from torch.profiler import profile, ProfilerActivity
        prof = profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_flops=True)
        prof.__enter__()
        timed_steps()
        steps_end = time.monotonic_ns()
        prof.__exit__(None, None, None)
        stopped = time.monotonic_ns()
        averages = prof.key_averages()
        aggregated = time.monotonic_ns()
        timing = {"steps_end_monotonic_ns": steps_end, "profiler_stop_ns": stopped - steps_end,
                  "key_averages_ns": aggregated - stopped}
        counts = {}
        flops = {}
        for e in averages:
            counts[e.key] = e.count
            if e.flops:
                flops[e.key] = e.flops
        result = {"counts": counts, "flops": flops}
        if not args.time_steps:
            result["events"] = [[e.name, str(e.input_shapes), e.sequence_nr, e.thread] for e in prof.events()]
    else:
        loss = timed_steps()
        timing = {"steps_end_monotonic_ns": time.monotonic_ns()}
        result = {"loss": round(float(loss), 4)}
    if args.time_steps:
        result.update(timing)
        result["step_ns"] = step_ns
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
