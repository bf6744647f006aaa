"""Helpers shared by the Python tests: a fresh interpreter, whether NVRTC is installed, and the stand-in CUDA
libraries of the tests without a GPU."""
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jiasu

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# The stand-in libcuda, whose device memory is host memory and whose launches do nothing.
FAKE_DRIVER = os.path.join(ROOT, "tools", "launch-overhead", "fake_driver.cpp")


def build_stand_ins(folder, sources):
    """Compiles stand-in libraries ({file name: C++ source}) into `folder` and returns their paths in that order;
    skips the test when there is no C++ compiler."""
    compiler = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    if not compiler:
        pytest.skip("no C++ compiler to build the stand-in libraries")
    paths = []
    for name, source in sources.items():
        paths.append(str(folder / name))
        subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-o", paths[-1], source], check=True)
    return paths


def run_python(code, **env_overrides):
    """Runs `code` in a fresh interpreter with these environment changes (None unsets a variable); returns the
    CompletedProcess (text mode)."""
    env = dict(os.environ)
    for key, value in env_overrides.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True,
                          text=True, timeout=300)


def nvrtc_missing():
    """Why NVRTC cannot be loaded here, or None when it can."""
    try:
        jiasu._core.library_info("nvrtc")
    except jiasu.LibraryNotFoundError as error:
        return str(error)
    return None


needs_nvrtc = pytest.mark.skipif(nvrtc_missing() is not None, reason=f"NVRTC is not installed: {nvrtc_missing()}")


def assert_gradients(loss, inputs, grads, rng, samples=6, h=1e-6, rtol=1e-6, atol=1e-7):
    """Each of `grads` (jiasu arrays) equals d loss(*inputs) / d inputs[i] by central differences, at `samples`
    elements of each input picked by `rng`; `inputs` are float64 NumPy arrays."""
    for place, (array, grad) in enumerate(zip(inputs, grads)):
        assert grad.shape == array.shape
        got = grad.get()
        for flat in rng.choice(array.size, min(array.size, samples), replace=False):
            index = np.unravel_index(flat, array.shape)
            step = np.zeros_like(array)
            step[index] = h
            plus, minus = list(inputs), list(inputs)
            plus[place], minus[place] = array + step, array - step
            numeric = (loss(*plus) - loss(*minus)) / (2 * h)
            np.testing.assert_allclose(got[index], numeric, rtol=rtol, atol=atol)
