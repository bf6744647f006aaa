// Device functions in CUDA C++ for tests/python/test_numba_external.py (cuda.declare_device, link=).
// The CPU backend compiles it as C++ too: plain C++ with __device__, no CUDA-only headers.

// Numba's ABI: the result through the first pointer, a status returned.
extern "C" __device__ int mul_f32(float* result, float a, float b) {
  *result = a * b;
  return 0;
}

// The C ABI.
extern "C" __device__ double hypot_c(double a, double b) { return sqrt(a * a + b * b); }

extern "C" __device__ int clamp_i32(int* result, int x, int low, int high) {
  *result = x < low ? low : x > high ? high : x;
  return 0;
}
