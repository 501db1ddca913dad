#!/usr/bin/python3
"""What recording PyTorch operators costs: nnprof record against torch.profiler (issue 19).

Runs tests/torch/train_small.py --time-steps (an MLP trained with SGD; the script times its own
steps) in four ways, alternated, --runs times each:
  plain           no profiler
  nnprof-no-ops   nnprof record --no-torch-ops (CPU sampling only: what nnprof costs without operators)
  nnprof          nnprof record (every operator a scope, with shapes, dtypes and FLOPs)
  torch           torch.profiler.profile(record_shapes=True, with_flops=True) around the steps
and, with the floor library (bench/torch_callback_floor.cpp; built with the benchmarks), two more:
  floor           a global RecordFunction callback that does nothing
  floor-inputs    the same, asking for the operators' inputs (what shapes need)
Each run gives its median step time; a configuration's figure is the median over its runs.
Extra step time = configuration's median - plain's median.

Post-processing, per operator event:
  torch   the profile's exit (stop, event building) + key_averages(), timed inside the script
  nnprof  from the end of the last step (CLOCK_MONOTONIC, printed by the script) to the end of
          `nnprof record` (measured here on the same clock): the interpreter's teardown, the
          agent's profile build and save, record's own end. The same interval under
          --no-torch-ops is subtracted, which leaves what the operator events add; divided by
          the operator events the profile holds.

Usage: bench/torch_overhead.py [--nnprof build/release/bin/nnprof] [--steps 200] [--width 256] [--runs 5]
                               [--floor build/release/lib/libnnprof_torch_callback_floor.so]
"""
import argparse
import json
import os
import pathlib
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tests" / "torch" / "train_small.py"


def run_once(kind, args, nnprof, floor, workdir, index):
    script = [sys.executable, str(SCRIPT), "--time-steps", *args]
    profile = workdir / f"{kind}-{index}.nnprof"
    env = None
    if kind == "plain":
        command = script
    elif kind.startswith("floor"):
        command = script
        env = dict(os.environ, LD_PRELOAD=str(floor), TORCH_FLOOR_INPUTS="1" if kind == "floor-inputs" else "0")
    elif kind == "torch":
        command = script + ["--torch-profiler"]
    else:
        options = ["--no-torch-ops"] if kind == "nnprof-no-ops" else []
        command = [str(nnprof), "record", "-q", *options, "-o", str(profile), "--", *script]
    run = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
    ended = time.monotonic_ns()
    result = json.loads(run.stdout.strip().splitlines()[-1])
    figures = {"median_step_ns": statistics.median(result["step_ns"]),
               "end_ns": ended - result["steps_end_monotonic_ns"]}
    if kind == "torch":
        figures["post_ns"] = result["profiler_stop_ns"] + result["key_averages_ns"]
        figures["events"] = sum(result["counts"].values())
    if kind.startswith("nnprof"):
        db = sqlite3.connect(f"file:{profile}?mode=ro", uri=True)
        # A Python script's only scopes under nnprof record are its operators (and record_function's).
        figures["events"] = db.execute("select count(*) from slice").fetchone()[0]
        db.close()
        profile.unlink()
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nnprof", default=str(ROOT / "build" / "release" / "bin" / "nnprof"))
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--runs", type=int, default=5)
    default_floor = ROOT / "build" / "release" / "lib" / "libnnprof_torch_callback_floor.so"
    parser.add_argument("--floor", default=str(default_floor) if default_floor.exists() else None,
                        help="libnnprof_torch_callback_floor.so (built with the benchmarks): also time a do-nothing "
                             "observer (default: the build tree's, when built)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    options = parser.parse_args()
    args = ["--steps", str(options.steps), "--width", str(options.width), "--batch", str(options.batch)]
    kinds = ["plain", "nnprof-no-ops", "nnprof", "torch"] + (["floor", "floor-inputs"] if options.floor else [])
    runs = {kind: [] for kind in kinds}
    with tempfile.TemporaryDirectory(prefix="nnprof-torch-bench-") as tmp:
        for index in range(options.runs):
            for kind in kinds:
                runs[kind].append(run_once(kind, args, options.nnprof, options.floor, pathlib.Path(tmp), index))

    def median(kind, key):
        return statistics.median(r[key] for r in runs[kind])

    plain = median("plain", "median_step_ns")
    summary = {"steps": options.steps, "width": options.width, "batch": options.batch, "runs": options.runs,
               "nproc": os.cpu_count(), "loadavg": os.getloadavg()}
    for kind in kinds:
        step = median(kind, "median_step_ns")
        summary[kind] = {"median_step_us": step / 1e3, "extra_step_us": (step - plain) / 1e3,
                         "per_run_step_us": [round(r["median_step_ns"] / 1e3, 1) for r in runs[kind]],
                         "end_ms": median(kind, "end_ns") / 1e6}
        if "events" in runs[kind][0]:
            summary[kind]["operator_events"] = median(kind, "events")
    summary["torch"]["post_ms"] = median("torch", "post_ns") / 1e6
    summary["torch"]["post_us_per_event"] = median("torch", "post_ns") / 1e3 / summary["torch"]["operator_events"]
    nnprof_post = median("nnprof", "end_ns") - median("nnprof-no-ops", "end_ns")
    summary["nnprof"]["post_ms"] = nnprof_post / 1e6
    summary["nnprof"]["post_us_per_event"] = nnprof_post / 1e3 / summary["nnprof"]["operator_events"]
    extra_nnprof = summary["nnprof"]["extra_step_us"]
    extra_torch = summary["torch"]["extra_step_us"]
    summary["extra_ratio_nnprof_to_torch"] = extra_nnprof / extra_torch if extra_torch > 0 else None

    if options.json:
        print(json.dumps(summary, indent=1))
        return 0
    print(f"{options.runs} runs each of {options.steps} steps (width {options.width}, batch {options.batch}); "
          f"nproc {summary['nproc']}, load {summary['loadavg'][0]:.2f}")
    print(f"{'':15} {'median step':>12} {'extra':>10} {'end':>10} {'post/event':>11}")
    for kind in kinds:
        s = summary[kind]
        per_event = f"{s['post_us_per_event']:.3f} us" if "post_us_per_event" in s else ""
        print(f"{kind:15} {s['median_step_us']:9.1f} us {s['extra_step_us']:7.1f} us {s['end_ms']:7.1f} ms {per_event:>11}")
    if summary["extra_ratio_nnprof_to_torch"] is not None:
        print(f"nnprof's extra step time / torch.profiler's: {summary['extra_ratio_nnprof_to_torch']:.3f} (target <= 0.2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
