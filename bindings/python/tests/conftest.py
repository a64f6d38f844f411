"""Shared fixtures: the golden data, and running a test with and without numpy."""

import json
import os

import pytest

import minlsh
from minlsh import _ffi

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
GOLDEN = os.environ.get("MINLSH_GOLDEN",
                        os.path.join(REPO, "tests", "golden", "bindings", "golden.json"))


def pytest_report_header(config):
    return ["minlsh %s from %s (library %s, kernel: %s, numpy: %s)"
            % (minlsh.__version__, os.path.dirname(minlsh.__file__), minlsh.LIBRARY,
               minlsh.simd_kernel(),
               _ffi.numpy.__version__ if _ffi.numpy is not None else "absent")]


@pytest.fixture(scope="session")
def golden():
    with open(GOLDEN, encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture(scope="session")
def texts(golden):
    return [bytes.fromhex(t) for t in golden["texts"]]


@pytest.fixture(params=["numpy", "no-numpy"])
def numpy_mode(request, monkeypatch):
    """Run the test once with numpy (if installed) and once as if it were not."""
    if request.param == "numpy":
        if _ffi.numpy is None:
            pytest.skip("numpy is not installed")
    else:
        monkeypatch.setattr(_ffi, "numpy", None)
    return request.param


def as_list(x):
    """A list of Python ints from a numpy array, array.array, memoryview or list."""
    return [int(v) for v in (x.tolist() if hasattr(x, "tolist") else x)]
