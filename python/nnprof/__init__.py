"""nnprof: a profiler for neural-network training and inference, from Python.

The native module nnprof._native wraps the C++ library (libnnprof); this package gives it
the Python shapes its users expect:

    import nnprof
    with nnprof.scope("step"):
        train_step()
    nnprof.save("run.nnprof")          # or "run.html", "run.json", ...
    profile = nnprof.load("run.nnprof")
    profile.top_scopes(5), profile.bottlenecks(), profile.operators()

nnprof.torch (imported on demand: `import nnprof` does not import torch) records PyTorch's
operators and makes each nn.Module a scope. docs/PYTHON.md is the guide.
"""
from nnprof._native import __version__
from nnprof._core import *  # noqa: F401,F403  (the C++ profiler: Profiler, scope, profile, load, ...)
from nnprof import _core
from nnprof._seed_apis import *  # noqa: F401,F403  (the seeds' classes, by their names)
from nnprof import _seed_apis

__all__ = ["__version__"] + list(_core.__all__) + list(_seed_apis.__all__)


def __getattr__(name):
    # nnprof.torch on first use, so that `import nnprof` alone never imports torch.
    if name == "torch":
        import importlib
        return importlib.import_module("nnprof.torch")
    raise AttributeError(f"module 'nnprof' has no attribute '{name}'")
