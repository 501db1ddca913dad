"""cmake --install puts a package that Debian's python3 imports, and that loads the installed
libnnprof and libnnprof_torch (not the build tree's), wherever the prefix is."""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import nnprof

BUILD = pathlib.Path(nnprof.__file__).resolve().parents[2]

CHECK = r"""
import json, os, sys
import nnprof
from nnprof.__main__ import find_cli
with nnprof.scope("installed_scope"):
    pass
facts = {"package": nnprof.__file__, "library": nnprof._native.library_directory(), "cli": find_cli(),
         "calls": nnprof.snapshot().scope("installed_scope")["calls"]}
try:
    import torch, nnprof.torch
except ImportError:
    torch = None
if torch is not None and nnprof._native.torch_library:
    with nnprof.torch.capture_operators():
        torch.ones(2) + 1
    facts["add_calls"] = nnprof.snapshot().scope("aten::add")["calls"]
facts["loaded"] = sorted({line.split()[-1] for line in open("/proc/self/maps") if "libnnprof" in line})
print(json.dumps(facts))
"""


@pytest.mark.skipif(not (BUILD / "CMakeCache.txt").exists() or shutil.which("cmake") is None,
                    reason="not running from a CMake build tree")
def test_installed_package_uses_the_installed_libraries(tmp_path):
    prefix = tmp_path / "prefix"
    install = subprocess.run(["cmake", "--install", str(BUILD), "--prefix", str(prefix)], capture_output=True,
                             text=True, timeout=120)
    assert install.returncode == 0, install.stdout + install.stderr
    site = prefix / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "dist-packages"
    env = {k: v for k, v in os.environ.items() if k not in ("NNPROF_CLI", "PYTHONPATH", "LD_LIBRARY_PATH")}
    env["PYTHONPATH"] = str(site)
    run = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=120, env=env,
                         cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    facts = json.loads(run.stdout.strip().splitlines()[-1])
    assert facts["package"] == str(site / "nnprof" / "__init__.py")
    assert facts["calls"] == 1
    libdir = next((line.split("=", 1)[1] for line in (BUILD / "CMakeCache.txt").read_text().splitlines()
                   if line.startswith("CMAKE_INSTALL_LIBDIR:")), "lib")
    assert facts["library"] == str(prefix / libdir)
    assert facts["cli"] == str(prefix / "bin" / "nnprof")
    assert facts["loaded"] and all(path.startswith(str(prefix)) for path in facts["loaded"]), facts["loaded"]
    if "add_calls" in facts:
        assert facts["add_calls"] == 1
        assert any("libnnprof_torch" in path for path in facts["loaded"])
