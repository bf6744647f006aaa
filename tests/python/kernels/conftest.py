"""The kernel test suite runs once per backend: every test here is parametrised with ``cpu`` (kernels
compiled for the host; runs on every machine, CI included) and ``cuda`` (skipped without a GPU). The
tests themselves make arrays with jiasu.asarray / jiasu.zeros and read them with .get(), so the active
backend decides where everything lives and runs."""
import pytest

import jiasu


@pytest.fixture(autouse=True)
def backend(each_backend):
    return each_backend


@jiasu.kernel
def _scale(x, out):
    i = jiasu.grid(1)
    if i < x.size:
        out[i] = 2 * x[i]


def _check_backend_healthy(n=4099):
    """A normal launch and copy still work and give the right answer on the active backend."""
    import numpy as np

    x = np.random.default_rng().random(n, dtype=np.float32)
    out = jiasu.full(n, np.nan, dtype=np.float32)
    _scale[(n + 127) // 128, 128](jiasu.asarray(x), out)
    jiasu.synchronize()
    np.testing.assert_array_equal(out.get(), 2 * x)


@pytest.fixture
def healthy():
    """Call the returned function to assert that the backend still works (after errors, for instance)."""
    return _check_backend_healthy


@pytest.fixture
def cpu_only(backend):
    """Skips the test on the CUDA backend: what it checks (a raise outside debug mode, the order of printed lines, a
    deadlock) is the CPU backend's alone."""
    if backend != "cpu":
        pytest.skip("the CPU backend's behaviour")
    return backend
