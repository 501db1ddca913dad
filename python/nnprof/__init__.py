"""nnprof: a profiler for neural-network training and inference, from Python.

The native module nnprof._native wraps the C++ library (libnnprof); this package gives it
the Python shapes its users expect.
"""
from nnprof._native import __version__
from nnprof._seed_apis import *  # noqa: F401,F403  (the seeds' classes, by their names)
from nnprof import _seed_apis

__all__ = ["__version__"] + list(_seed_apis.__all__)
