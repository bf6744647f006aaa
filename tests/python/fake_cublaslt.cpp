// A stand-in for libcublasLt.so, for tests on machines without a GPU (with the stand-in libcuda of
// tools/launch-overhead, whose device memory is host memory). It checks each descriptor as cuBLASLt documents
// it (attribute sizes, ld >= rows, op(A) m x k, op(B) k x n, D m x n, equal batch counts) and multiplies on the
// host in double precision, reading column-major matrices with their leading dimensions and batch strides.
// fake_cublaslt_heuristic_calls() counts heuristic queries, so a test can see the algorithm cache work, and
// fake_cublaslt_last_compute() is the compute type of the last product (TF32 or not).
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>

namespace {

using Status = int;
constexpr Status kOk = 0, kInvalid = 7, kNotSupported = 15;
constexpr int kR32F = 0, kR64F = 1, kR16F = 2, kC32F = 4, kC64F = 5, kR16BF = 14;

struct Desc {
  int compute, scale, trans_a = 0, trans_b = 0;
};
struct Layout {
  int type;
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch = 1;
  int64_t stride = 0;
};
int heuristic_calls = 0;
int last_compute = -1;  // the compute type of the last product
char handle_object;

int element_size(int type) {
  switch (type) {
    case kR16F: case kR16BF: return 2;
    case kR32F: return 4;
    case kR64F: case kC32F: return 8;
    case kC64F: return 16;
    default: return 0;
  }
}

float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  float value;
  if (exponent == 0) value = std::ldexp(float(mantissa), -24);
  else if (exponent == 31) value = mantissa ? NAN : INFINITY;
  else value = std::ldexp(float(mantissa | 0x400), int(exponent) - 25);
  return sign ? -value : value;
}

uint16_t float_to_half(float f) {  // round to nearest even, through the exact float value
  if (std::isnan(f)) return 0x7e00;
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  float a = std::fabs(f);
  if (a >= 65520.0f) return sign | 0x7c00;
  if (a < std::ldexp(1.0f, -14)) return sign | uint16_t(std::nearbyint(a * std::ldexp(1.0f, 24)));
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  const float scaled = std::nearbyint(std::ldexp(a, 11 - e));  // 11 significant bits
  uint32_t bits = uint32_t(scaled);
  if (bits == 2048) { bits = 1024; ++e; }
  return sign | uint16_t(((e + 14) << 10) | (bits - 1024));
}

std::complex<double> load(const unsigned char* p, int type) {
  switch (type) {
    case kR16F: { uint16_t h; std::memcpy(&h, p, 2); return half_to_float(h); }
    case kR16BF: { uint16_t h; std::memcpy(&h, p, 2); uint32_t u = uint32_t(h) << 16; float f; std::memcpy(&f, &u, 4); return f; }
    case kR32F: { float f; std::memcpy(&f, p, 4); return f; }
    case kR64F: { double d; std::memcpy(&d, p, 8); return d; }
    case kC32F: { float f[2]; std::memcpy(f, p, 8); return {f[0], f[1]}; }
    default: { double d[2]; std::memcpy(d, p, 16); return {d[0], d[1]}; }
  }
}

void store(unsigned char* p, int type, std::complex<double> v) {
  switch (type) {
    case kR16F: { uint16_t h = float_to_half(float(v.real())); std::memcpy(p, &h, 2); break; }
    case kR16BF: {  // round to nearest even
      float f = float(v.real());
      uint32_t u;
      std::memcpy(&u, &f, 4);
      u += 0x7fff + ((u >> 16) & 1);
      uint16_t h = uint16_t(u >> 16);
      std::memcpy(p, &h, 2);
      break;
    }
    case kR32F: { float f = float(v.real()); std::memcpy(p, &f, 4); break; }
    case kR64F: { double d = v.real(); std::memcpy(p, &d, 8); break; }
    case kC32F: { float f[2] = {float(v.real()), float(v.imag())}; std::memcpy(p, f, 8); break; }
    default: { double d[2] = {v.real(), v.imag()}; std::memcpy(p, d, 16); break; }
  }
}

// op(X) is rows x cols of the product's view: X itself (N) or its transpose (T).
bool op_shape(const Layout& x, int trans, uint64_t rows, uint64_t cols) {
  return trans ? (x.rows == cols && x.cols == rows) : (x.rows == rows && x.cols == cols);
}

Status check(const Desc* d, const Layout* a, const Layout* b, const Layout* c, const Layout* out) {
  const uint64_t m = out->rows, n = out->cols, k = d->trans_a ? a->rows : a->cols;
  if (!op_shape(*a, d->trans_a, m, k) || !op_shape(*b, d->trans_b, k, n)) return kInvalid;
  if (c->rows != m || c->cols != n || c->ld != out->ld) return kInvalid;
  for (const Layout* x : {a, b, c, out})
    if (x->ld < int64_t(x->rows) || x->batch != out->batch || x->type != out->type) return kInvalid;
  return kOk;
}

}  // namespace

extern "C" {

int fake_cublaslt_heuristic_calls() { return heuristic_calls; }
int fake_cublaslt_last_compute() { return last_compute; }

size_t cublasLtGetVersion() { return 130100; }
const char* cublasLtGetStatusName(Status s) { return s == kInvalid ? "CUBLAS_STATUS_INVALID_VALUE" : "CUBLAS_STATUS_OTHER"; }
Status cublasLtCreate(void** handle) { *handle = &handle_object; return kOk; }

Status cublasLtMatmulDescCreate(Desc** d, int compute, int scale) { *d = new Desc{compute, scale}; return kOk; }
Status cublasLtMatmulDescDestroy(Desc* d) { delete d; return kOk; }
Status cublasLtMatmulDescSetAttribute(Desc* d, int attribute, const void* value, size_t bytes) {
  if ((attribute != 3 && attribute != 4) || bytes != 4) return kInvalid;
  int32_t v;
  std::memcpy(&v, value, 4);
  if (v != 0 && v != 1) return kInvalid;
  (attribute == 3 ? d->trans_a : d->trans_b) = v;
  return kOk;
}

Status cublasLtMatrixLayoutCreate(Layout** l, int type, uint64_t rows, uint64_t cols, int64_t ld) {
  if (!element_size(type)) return kInvalid;
  *l = new Layout{type, rows, cols, ld};
  return kOk;
}
Status cublasLtMatrixLayoutDestroy(Layout* l) { delete l; return kOk; }
Status cublasLtMatrixLayoutSetAttribute(Layout* l, int attribute, const void* value, size_t bytes) {
  if (attribute == 5 && bytes == 4) { std::memcpy(&l->batch, value, 4); return l->batch > 0 ? kOk : kInvalid; }
  if (attribute == 6 && bytes == 8) { std::memcpy(&l->stride, value, 8); return kOk; }
  return kInvalid;
}

Status cublasLtMatmulPreferenceCreate(void** p) { *p = new char; return kOk; }
Status cublasLtMatmulPreferenceDestroy(void* p) { delete static_cast<char*>(p); return kOk; }
Status cublasLtMatmulPreferenceSetAttribute(void*, int attribute, const void* value, size_t bytes) {
  if (attribute == 1 && bytes == 8) return kOk;
  if (attribute >= 5 && attribute <= 8 && bytes == 4) {
    uint32_t v;
    std::memcpy(&v, value, 4);
    return v && !(v & (v - 1)) ? kOk : kInvalid;  // a power of two
  }
  return kInvalid;
}

struct Result {
  uint64_t algo[8];
  size_t workspace;
  Status state;
  float waves;
  int reserved[4];
};

Status cublasLtMatmulAlgoGetHeuristic(void*, Desc* d, Layout* a, Layout* b, Layout* c, Layout* out, void*,
                                      int requested, Result* results, int* returned) {
  ++heuristic_calls;
  if (requested < 1) return kInvalid;
  if (Status s = check(d, a, b, c, out)) return s;
  if (d->compute == 77 && out->type != kR32F) return kNotSupported;  // TF32 is for float32
  std::memset(results, 0, sizeof(Result));
  results[0].workspace = 1024;
  *returned = 1;
  return kOk;
}

Status cublasLtMatmul(void*, Desc* d, const void* alpha, const void* a, Layout* al, const void* b, Layout* bl,
                      const void* beta, const void* c, Layout* cl, void* out, Layout* ol, const void* algo,
                      void* workspace, size_t workspace_bytes, void*) {
  if (Status s = check(d, al, bl, cl, ol)) return s;
  if (!algo || (workspace_bytes && !workspace) || c != out) return kInvalid;
  // The real library loads alpha and beta as their type (cuDoubleComplex is 16-byte aligned): a misaligned
  // scalar faults there, so it is refused here.
  const uintptr_t scale_alignment = uintptr_t(std::min(element_size(d->scale), 16));
  if (reinterpret_cast<uintptr_t>(alpha) % scale_alignment || reinterpret_cast<uintptr_t>(beta) % scale_alignment)
    return kInvalid;
  const std::complex<double> one = load(static_cast<const unsigned char*>(alpha), d->scale);
  const std::complex<double> zero = load(static_cast<const unsigned char*>(beta), d->scale);
  if (one != 1.0 || zero != 0.0) return kInvalid;
  last_compute = d->compute;
  const int size = element_size(ol->type);
  const int64_t m = int64_t(ol->rows), n = int64_t(ol->cols), k = int64_t(d->trans_a ? al->rows : al->cols);
  auto at = [&](const void* base, const Layout& l, int64_t batch, int64_t r, int64_t col) {
    return static_cast<const unsigned char*>(base) + (batch * l.stride + r + col * l.ld) * size;
  };
  for (int64_t batch = 0; batch < ol->batch; ++batch)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        std::complex<double> sum = 0;
        for (int64_t p = 0; p < k; ++p) {
          const auto x = load(d->trans_a ? at(a, *al, batch, p, i) : at(a, *al, batch, i, p), al->type);
          const auto y = load(d->trans_b ? at(b, *bl, batch, j, p) : at(b, *bl, batch, p, j), bl->type);
          sum += x * y;
        }
        store(const_cast<unsigned char*>(at(out, *ol, batch, i, j)), ol->type, sum);
      }
  return kOk;
}

}  // extern "C"
