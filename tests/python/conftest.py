"""Shared pytest setup for jiasu's Python tests.

* ``@pytest.mark.gpu`` marks a test that needs a CUDA GPU; it is skipped ("no CUDA GPU") when
  ``jiasu.is_available()`` is False. Every test collected under ``tests/python/gpu/`` gets the
  marker automatically, so that folder can be collected (and is) on machines without a GPU.
* ``tmp_cache``: ``JIASU_CACHE_DIR`` pointing at a fresh temporary folder. The process-wide compile
  cache fixes its folder at the first compile, so this only affects subprocesses started by the test
  (or a process that has not compiled anything yet).
* ``JIASU_TEST_SHARD=i/n``: run only the i-th of n interleaved parts of the collected tests.
* ``JIASU_TEST_CURRENT=FILE``: each test's id is written to FILE as it starts, so that a process that dies
  (a crash takes pytest's report with it) leaves the name of the test it was running.
"""
import os
import pathlib
import secrets

import pytest

GPU_DIR = pathlib.Path(__file__).resolve().parent / "gpu"


def pytest_configure(config):
    # Also declared in pyproject.toml; repeated so that running with another rootdir/ini still knows it.
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU (skipped when none is present)")


def _under_gpu_dir(item):
    try:
        pathlib.Path(str(item.path)).resolve().relative_to(GPU_DIR)
    except ValueError:
        return False
    return True


def _select_shard(config, items):
    """JIASU_TEST_SHARD=i/n keeps every n-th test from the i-th (tools/gpu-check runs n pytest processes at once,
    as the GPU tests spend most of their time compiling kernels on one core each)."""
    shard = os.environ.get("JIASU_TEST_SHARD", "")
    if not shard:
        return
    try:
        index, count = (int(part) for part in shard.split("/"))
    except ValueError:
        raise pytest.UsageError(f"JIASU_TEST_SHARD={shard!r}: expected i/n with 0 <= i < n") from None
    if not 0 <= index < count:
        raise pytest.UsageError(f"JIASU_TEST_SHARD={shard!r}: expected i/n with 0 <= i < n")
    config.hook.pytest_deselected(items=[item for k, item in enumerate(items) if k % count != index])
    items[:] = [item for k, item in enumerate(items) if k % count == index]


def pytest_runtest_logstart(nodeid, location):
    path = os.environ.get("JIASU_TEST_CURRENT")
    if path:
        with open(path, "w") as f:
            f.write(nodeid + "\n")


@pytest.hookimpl(trylast=True)  # after -k and -m have deselected, so that the shards share what is left
def pytest_collection_modifyitems(config, items):
    _select_shard(config, items)
    for item in items:
        if _under_gpu_dir(item) and item.get_closest_marker("gpu") is None:
            item.add_marker(pytest.mark.gpu)
    if not any(item.get_closest_marker("gpu") for item in items):
        return
    import jiasu  # only now: collecting tests must not depend on the package when no test needs it

    if jiasu.is_available():
        return
    skip = pytest.mark.skip(reason="no CUDA GPU")
    for item in items:
        if item.get_closest_marker("gpu") is not None:
            item.add_marker(skip)


@pytest.fixture
def tmp_cache(tmp_path, monkeypatch):
    """A fresh compile-cache folder, exported as JIASU_CACHE_DIR; yields its path."""
    cache = tmp_path / "jiasu-cache"
    cache.mkdir()
    monkeypatch.setenv("JIASU_CACHE_DIR", str(cache))
    return cache


@pytest.fixture
def rng():
    """A fresh generator per test; the seed is printed so that a failure can be replayed."""
    import numpy as np

    seed = secrets.randbits(64)
    print(f"rng seed: {seed}")
    return np.random.default_rng(seed)


@pytest.fixture(params=["cpu", "cuda"])
def each_backend(request):
    """The test once per backend: ``cpu`` everywhere, ``cuda`` where a GPU is present (skipped otherwise).
    A module takes it for every test with ``pytestmark = pytest.mark.usefixtures("each_backend")``."""
    import jiasu

    if request.param == "cuda" and not jiasu.is_available():
        pytest.skip("needs a CUDA GPU")
    with jiasu.backend(request.param):
        yield request.param


@pytest.fixture
def cpu_backend():
    """The CPU backend for the test, then the previous backend again."""
    import jiasu

    previous = jiasu.get_backend()
    jiasu.set_backend("cpu")
    yield
    jiasu.set_backend(previous)
