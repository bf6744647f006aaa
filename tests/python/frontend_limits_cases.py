"""Cases of test_frontend_limits.py, each run in its own process (``python frontend_limits_cases.py CASE DIR``)
so that a crash fails one test instead of ending pytest. Each prints one line per result.

The kernels are generated into real files under DIR and read from there as any kernel is (inspect), but
CPython never compiles their bodies: some are beyond CPython 3.11's own limits (about 3,000 levels).
"""
import sys
import threading

import numpy as np

import jiasu


def kernel_in_file(directory, name, body):
    """@jiasu.kernel `def k(x, out):` + `body`, written to DIR/name.py; its function object is compiled
    from a stub at the same file and line, so inspect finds the real text."""
    path = f"{directory}/{name}.py"
    with open(path, "w") as f:
        f.write("def k(x, out):\n" + body)
    namespace = {"jiasu": jiasu, "np": np}
    exec(compile("def k(x, out):\n    pass\n", path, "exec"), namespace)
    return jiasu.kernel(namespace["k"]), path


def sum_body(terms):
    return "    out[0] = " + " + ".join(["x[0]"] * terms) + "\n"


def elif_body(branches):
    lines = ["    i = jiasu.grid(1)"]
    for j in range(branches):
        lines += [f"    {'if' if j == 0 else 'elif'} i == {j}:", f"        out[0] = {j}"]
    return "\n".join(lines) + "\n"


def calls_body(levels):
    return "    out[0] = " + "abs(" * levels + "x[0]" + ")" * levels + "\n"


ARGS = (np.zeros(4, np.float32), np.zeros(4, np.float32))


def compile_error(directory, name, body):
    kernel, path = kernel_in_file(directory, name, body)
    try:
        kernel.specialize(*ARGS)
    except jiasu.CompileError as error:
        assert error.file == path, (error.file, path)
        return f"{name}: CompileError {error.line}:{error.column} {error.reason}"
    return f"{name}: compiled"


def too_deep(directory):
    print(compile_error(directory, "sum_10000", sum_body(10000)))
    print(compile_error(directory, "elif_50000", elif_body(50000)))


def at_limits_on_small_stack(directory):
    """At each limit (and past it) on a thread with a 1 MiB stack: specialize (parse, check, CUDA C++)
    and the host C++."""
    results = []

    def work():
        for name, body in [("sum_998", sum_body(998)), ("elif_998", elif_body(998)), ("calls_198", calls_body(198)),
                           ("sum_10000", sum_body(10000)), ("elif_50000", elif_body(50000))]:
            kernel, _ = kernel_in_file(directory, name, body)
            try:
                kernel.specialize(*ARGS)
                host = "".join(kernel.inspect_host().values())
                results.append(f"{name}: compiled, {len(host)} characters of host C++")
            except jiasu.CompileError as error:
                results.append(f"{name}: CompileError {error.line}:{error.column}")

    threading.stack_size(1 << 20)
    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    print("\n".join(results))


def long_chains_compute_as_numpy(directory):
    """Chains at the limit run on the CPU backend, against NumPy evaluating the same text (left to right,
    in the same dtypes)."""
    jiasu.set_backend("cpu")
    rng = np.random.default_rng(7)
    terms = 998
    signs = rng.choice(["+", "-"], terms - 1)
    sums = "x[i, 0]" + "".join(f" {s} x[i, {k + 1}]" for k, s in enumerate(signs))
    # precedence and types mixed along one chain: products, quotients, an int64 index converted to float64
    mixed = " - ".join(f"i * 2 + x[i, {k}] * x[i, {k + 1}] / 4.0 - x[i, {k + 2}]" for k in range(0, 300, 3))
    for name, chain, dtype in [("sum", sums, np.float64), ("sum", sums, np.float32), ("sum", sums, np.int8),
                               ("mixed", mixed, np.float64)]:
        body = f"    i = jiasu.grid(1)\n    if i < out.size:\n        out[i] = {chain}\n"
        kernel, _ = kernel_in_file(directory, f"{name}_{np.dtype(dtype).name}", body)
        if dtype == np.int8:
            x = rng.integers(-128, 128, (64, terms), dtype=np.int8)
        else:
            x = rng.standard_normal((64, terms)).astype(dtype)
        out = np.zeros(64, dtype)
        kernel[1, 64](x, out)
        with np.errstate(over="ignore"):
            expected = eval(chain.replace("x[i, ", "x[:, "), {"x": x, "i": np.arange(64)})
        if name == "sum":
            verdict = "equal" if np.array_equal(out, expected) else "DIFFERENT"
        else:
            verdict = "close" if np.allclose(out, expected, rtol=1e-12, atol=1e-12) else "DIFFERENT"
        print(f"{name} {np.dtype(dtype).name}: {verdict}")


if __name__ == "__main__":
    globals()[sys.argv[1]](sys.argv[2])
