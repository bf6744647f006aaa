"""The seed article's kernel as a jiasu kernel (the front end reads source, so it lives in a file)."""
import jiasu


@jiasu.kernel
def add(x, y, out):
    i = jiasu.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]
