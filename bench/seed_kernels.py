"""The seed article's kernel as a jiasu kernel (the front end reads source, so it lives in a file)."""
import jiasu


@jiasu.kernel
def add(x, y, out):
    i = jiasu.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]


@jiasu.kernel
def add_n(x, y, out, n):
    """The same with the length as a parameter, like the C++ and CuPy contenders of bench/launch.py."""
    i = jiasu.grid(1)
    if i < n:
        out[i] = x[i] + y[i]
