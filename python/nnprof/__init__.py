"""nnprof: a profiler for neural-network training and inference, from Python.

The native module nnprof._native wraps the C++ library (libnnprof); this package gives it
the Python shapes its users expect.
"""
from nnprof._native import __version__

__all__ = ["__version__"]
