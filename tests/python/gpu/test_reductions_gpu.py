"""GPU reductions at sizes that take the multi-block paths: a full reduction finished by the last block in
one launch (deterministic: the same bits every time), few long rows, many short ones, columns."""
import numpy as np
import pytest

import jiasu


@pytest.fixture(autouse=True)
def cuda_backend():
    previous = jiasu.get_backend()
    jiasu.set_backend("cuda")
    yield
    jiasu.set_backend(previous)


@pytest.mark.parametrize("n", [(1 << 26) + 5, (1 << 20) + 1, 3 * 4096 * 16])
def test_full_float_sum_is_accurate_and_deterministic(n):
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    a = jiasu.asarray(x)
    first = jiasu.sum(a).get()
    np.testing.assert_allclose(first, x.astype(np.float64).sum(), rtol=1e-5, atol=1e-2)
    for _ in range(3):
        assert jiasu.sum(a).get().tobytes() == first.tobytes()
    assert jiasu.argmax(a).get() == np.argmax(x)
    assert jiasu.max(a).get() == x.max()
    np.testing.assert_allclose(jiasu.var(a).get(), x.astype(np.float64).var(), rtol=1e-4)


@pytest.mark.parametrize("shape", [(3, 1 << 22), (4096, 4096), (1 << 16, 16), (16, 1 << 16)])
@pytest.mark.parametrize("op", ["sum", "max", "argmax", "min", "argmin", "mean", "std"])
def test_rows_and_columns(shape, op):
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    a = jiasu.asarray(x)
    for axis in (0, 1):
        got = getattr(jiasu, op)(a, axis=axis).get()
        expected = getattr(np, op)(x.astype(np.float64), axis=axis)
        if op.startswith("arg"):
            np.testing.assert_array_equal(got, getattr(np, op)(x, axis=axis))
        else:
            np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-3 * np.sqrt(shape[axis]))


def test_int_and_half_types():
    x = np.random.default_rng(3).integers(-100, 100, size=(1 << 21) + 3).astype(np.int8)
    assert jiasu.sum(jiasu.asarray(x)).get() == x.sum()
    h = np.random.default_rng(4).standard_normal(1 << 21).astype(np.float16)
    got = jiasu.sum(jiasu.asarray(h)).get()
    assert got.dtype == np.float16
    np.testing.assert_allclose(float(got), h.astype(np.float64).sum(), rtol=2e-3, atol=2.0)


def test_cpu_and_gpu_arrays_do_not_mix():
    gpu = jiasu.zeros(8, dtype=np.float32)
    with jiasu.backend("cpu"):
        cpu_out = jiasu.zeros((), dtype=np.float32)
    with pytest.raises(jiasu.InvalidArrayError):
        jiasu.sum(gpu, out=cpu_out)


@pytest.mark.parametrize("shape,axes", [((16, 64, 112, 112), (0, 2, 3)), ((3, 5, 70000), (0, 2)),
                                        ((1000, 3, 7), (0, 2)), ((2, 3, 1 << 20), (0, 2))])
@pytest.mark.parametrize("op", ["sum", "max", "mean", "var"])
def test_several_runs_per_result(shape, axes, op):
    # The innermost reduced axis is contiguous but others lie between: each result reduces several runs.
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    got = getattr(jiasu, op)(jiasu.asarray(x), axis=axes).get()
    expected = getattr(np, op)(x.astype(np.float64), axis=axes)
    count = x.size // got.size
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-3 * np.sqrt(count) if op == "sum" else 1e-4)


def test_argmax_of_a_view_whose_rows_are_runs():
    x = np.random.default_rng(6).standard_normal((300, 1000)).astype(np.float32)
    view = jiasu.asarray(x)[:, 3:900]  # a full reduction over 300 runs of 897 elements
    assert jiasu.argmax(view).get() == np.argmax(x[:, 3:900])
    np.testing.assert_allclose(jiasu.sum(view).get(), x[:, 3:900].astype(np.float64).sum(), rtol=1e-5)
