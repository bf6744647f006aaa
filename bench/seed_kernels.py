"""The seed article's kernel as a jiasu kernel (the front end reads source, so it lives in a file), and as
CUDA C++ for the RawKernel and C++ contenders."""
import jiasu
from jiasu import cuda

ADD_CUDA_SOURCE = r"""
extern "C" __global__ void add(const float* x, const float* y, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + y[i];
}
"""


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


@cuda.jit("void(float32[:], float32[:], float32[:], int32)")
def add_n_numba(x, y, out, n):
    """The same written as Numba code, with Numba's signature (served by jiasu's compatibility layer)."""
    i = cuda.grid(1)
    if i < n:
        out[i] = x[i] + y[i]
