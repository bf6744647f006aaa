"""Helpers shared by the Python tests: a fresh interpreter, and whether NVRTC is installed."""
import os
import subprocess
import sys
import textwrap

import pytest

import jiasu


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
