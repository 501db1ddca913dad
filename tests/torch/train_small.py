"""A small training loop for the tests of nnprof's PyTorch operators: an MLP with layer norm,
GELU and softmax cross-entropy, trained for a few steps with SGD on random data.

Imports torch late, after other work, as a real script may: nnprof must pick up LibTorch when
it is loaded, not only at start. Prints, on its last line, JSON with the PyTorch profiler's
own per-operator call counts and FLOPs when run with --torch-profiler (for comparison).
"""
import argparse
import json
import sys


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--torch-profiler", action="store_true",
                        help="run under torch.profiler (record_shapes, with_flops) and print its counts as JSON")
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

    if args.torch_profiler:
        from torch.profiler import profile, ProfilerActivity
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_flops=True) as prof:
            for _ in range(args.steps):
                step()
        counts = {}
        flops = {}
        for e in prof.key_averages():
            counts[e.key] = e.count
            if e.flops:
                flops[e.key] = e.flops
        print(json.dumps({"counts": counts, "flops": flops}))
    else:
        for _ in range(args.steps):
            loss = step()
        print(f"loss {float(loss):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
