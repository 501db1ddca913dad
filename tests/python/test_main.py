"""python3 -m nnprof: record a script under the nnprof CLI, and the CLI's other subcommands."""
import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

import nnprof
from nnprof import __main__ as main

PACKAGE_ROOT = str(pathlib.Path(nnprof.__file__).resolve().parent.parent)
SCRIPT = """
import sys
import nnprof

@nnprof.profile("work")
def work(n):
    return sum(i * i for i in range(n))

for _ in range(3):
    work(100000)
print("args:", sys.argv[1:])
sys.exit(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
"""


def run_module(args, env=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "nnprof", *args], capture_output=True, text=True, timeout=120,
                          env=env, cwd=cwd)


def test_record_writes_a_profile_with_the_scripts_scopes(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    out = tmp_path / "train.nnprof"
    run = run_module(["record", "-q", "-o", str(out), str(script), "first", "0"])
    assert run.returncode == 0, run.stderr
    assert "args: ['first', '0']" in run.stdout
    profile = nnprof.load(str(out))
    # The script's scopes went into the global profiler, which the CLI's agent saved.
    assert profile.scope("work")["calls"] == 3
    assert profile.cpu["sampled"]
    assert sys.executable in profile.metadata["command_line"] and str(script) in profile.metadata["command_line"]


def test_record_passes_the_scripts_exit_status(tmp_path):
    script = tmp_path / "failing.py"
    script.write_text(SCRIPT)
    run = run_module(["record", "-q", "-o", str(tmp_path / "failing.nnprof"), str(script), "x", "3"])
    assert run.returncode == 3, run.stderr


def test_record_a_module_and_report(tmp_path):
    (tmp_path / "job.py").write_text(SCRIPT)
    out = tmp_path / "job.nnprof"
    run = run_module(["record", "-q", "--sample-hz", "99", "-o", str(out), "-m", "job"], cwd=tmp_path,
                     env={**os.environ, "PYTHONPATH": os.pathsep.join([PACKAGE_ROOT, str(tmp_path)])})
    assert run.returncode == 0, run.stderr
    assert nnprof.load(str(out)).scope("work")["calls"] == 3
    report = run_module(["report", str(out)])
    assert report.returncode == 0, report.stderr
    assert "work" in report.stdout


def test_record_command_line():
    assert main.record_command("/bin/nnprof", ["--memory", "-o", "x.nnprof", "train.py", "--lr", "1"]) == [
        "/bin/nnprof", "record", "--memory", "-o", "x.nnprof", "--", sys.executable, "train.py", "--lr", "1"]
    assert main.record_command("/bin/nnprof", ["-m", "pkg.train", "-v"]) == [
        "/bin/nnprof", "record", "--", sys.executable, "-m", "pkg.train", "-v"]


def test_a_missing_cli_is_a_clear_message(tmp_path):
    run = run_module(["record", "x.py"], env={**os.environ, "NNPROF_CLI": str(tmp_path / "no-nnprof")})
    assert run.returncode == 126
    assert "could not run" in run.stderr and "no-nnprof" in run.stderr
    run = run_module(["record"])
    assert run.returncode != 0 and "which script" in run.stderr


def test_the_cli_is_found_beside_the_library(monkeypatch):
    monkeypatch.delenv("NNPROF_CLI", raising=False)
    found = pathlib.Path(main.find_cli())
    assert found.name == "nnprof" and found.parent.parent == pathlib.Path(nnprof._native.library_directory()).parent


TRAIN = """
import torch
import nnprof.torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
with nnprof.torch.instrument(model, name="net"):
    for _ in range(2):
        model(torch.randn(5, 8)).sum().backward()
"""


@pytest.mark.skipif(importlib.util.find_spec("torch") is None or not nnprof._native.torch_library,
                    reason="needs torch, and nnprof built with LibTorch")
def test_record_an_instrumented_model(tmp_path):
    """Under nnprof record the agent records the operators; instrument()'s layers hold them."""
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    out = tmp_path / "train.nnprof"
    run = run_module(["record", "-q", "-o", str(out), str(script)])
    assert run.returncode == 0, run.stderr
    profile = nnprof.load(str(out))
    paths = {n["path"]: n["calls"] for n in profile.call_tree[1:]}
    assert paths["net > 0 > aten::linear > aten::addmm"] == 2
    assert paths["net.backward > 2.backward > autograd::engine::evaluate_function: AddmmBackward0 > "
                 "AddmmBackward0"] == 2
    assert paths["net.backward > 0.backward"] == 2
    assert not [d for d in profile.diagnostics if d["kind"] in ("implicitly_closed", "stop_without_start")]
