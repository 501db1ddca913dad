"""The package imports from the build tree and is this build's."""
import pathlib
import re

import nnprof


def test_version_is_the_projects():
    cmake = pathlib.Path(__file__).resolve().parents[2] / "CMakeLists.txt"
    version = re.search(r"project\(nnprof VERSION (\S+)", cmake.read_text()).group(1)
    assert nnprof.__version__ == version


def test_native_module_is_next_to_the_package():
    native = pathlib.Path(nnprof._native.__file__)
    assert native.parent == pathlib.Path(nnprof.__file__).parent
