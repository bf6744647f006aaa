// The rules of matmul and dot that need no GPU (shapes, dtypes, how operands are stored, the batch plan), and the
// choice of backend for a product.
#include "ops/matmul.hpp"

#include "array/promotion.hpp"

#include <algorithm>
#include <atomic>
#include <climits>

#include "support/error.hpp"

namespace jiasu::ops {
namespace {

constexpr const char* kMatmulSignature = "(n?,k),(k,m?)->(n?,m?)";

// NumPy's spelling of a shape in its messages: (2,3,4) and (3,).
std::string numpy_tuple(const Shape& shape, const char* core = nullptr, int core_dims = 0) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? "," : "") + std::to_string(shape[i]);
  for (int i = 0; i < core_dims; ++i) text += std::string(shape.empty() && i == 0 ? "" : ",") + core;
  if (shape.size() == 1 && core_dims == 0) text += ",";
  return text + ")";
}

[[noreturn]] void no_common_dtype(DType a, DType b, const char* op) {
  throw BadArgument(std::string(op) + ": " + info(a).name + " and " + info(b).name +
                    " have no common dtype (as in NumPy); convert one with astype first");
}

std::atomic<bool> tf32_allowed{false};

}  // namespace

MatmulShapes matmul_shapes(const Shape& a, const Shape& b) {
  for (int operand = 0; operand < 2; ++operand)
    if ((operand ? b : a).empty())
      throw BadValue("matmul: Input operand " + std::to_string(operand) +
                     " does not have enough dimensions (has 0, gufunc core with signature " + kMatmulSignature +
                     " requires 1)");
  MatmulShapes s;
  s.a_vector = a.size() == 1;
  s.b_vector = b.size() == 1;
  Shape ma = s.a_vector ? Shape{1, a[0]} : a;
  Shape mb = s.b_vector ? Shape{b[0], 1} : b;
  s.m = ma[ma.size() - 2];
  s.k = ma.back();
  s.n = mb.back();
  const int64_t kb = mb[mb.size() - 2];
  if (kb != s.k)
    throw BadValue("matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature " +
                   std::string(kMatmulSignature) + " (size " + std::to_string(kb) + " is different from " +
                   std::to_string(s.k) + ")");
  const size_t batch_a = ma.size() - 2, batch_b = mb.size() - 2;
  const size_t nd = std::max(batch_a, batch_b);
  s.batch.assign(nd, 1);
  for (size_t i = 0; i < nd; ++i) {
    const int64_t da = i + batch_a >= nd ? ma[i + batch_a - nd] : 1;
    const int64_t db = i + batch_b >= nd ? mb[i + batch_b - nd] : 1;
    if (da != db && da != 1 && db != 1)
      throw BadValue("operands could not be broadcast together with remapped shapes [original->remapped]: " +
                     numpy_tuple(a) + "->" + numpy_tuple(Shape(ma.begin(), ma.end() - 2), "newaxis", 2) + " " +
                     numpy_tuple(b) + "->" + numpy_tuple(Shape(mb.begin(), mb.end() - 2), "newaxis", 2) +
                     "  and requested shape " + numpy_tuple({s.m, s.n}));
    s.batch[i] = da == 1 ? db : da;
  }
  s.result = s.batch;
  if (!s.a_vector) s.result.push_back(s.m);
  if (!s.b_vector) s.result.push_back(s.n);
  return s;
}

Shape dot_shape(const Shape& a, const Shape& b) {
  if (a.empty()) return b;  // a scalar times b
  if (b.empty()) return a;
  const size_t a_dim = a.size() - 1, b_dim = b.size() == 1 ? 0 : b.size() - 2;
  if (a[a_dim] != b[b_dim])
    throw BadValue("shapes " + numpy_tuple(a) + " and " + numpy_tuple(b) + " not aligned: " +
                   std::to_string(a[a_dim]) + " (dim " + std::to_string(a_dim) + ") != " + std::to_string(b[b_dim]) +
                   " (dim " + std::to_string(b_dim) + ")");
  Shape out(a.begin(), a.end() - 1);
  if (b.size() >= 2) {
    out.insert(out.end(), b.begin(), b.end() - 2);
    out.push_back(b.back());
  }
  return out;
}

DType product_dtype(DType a, DType b, const char* op) {
  if (std::optional<DType> common = promote_types(a, b)) return *common;  // NumPy's rule, shared (array/promotion)
  no_common_dtype(a, b, op);
}

void set_matmul_precision(const std::string& name) {
  if (name == "highest") {
    tf32_allowed = false;
  } else if (name == "high" || name == "medium" || name == "tf32") {
    tf32_allowed = true;
  } else {
    throw BadValue("unknown matmul precision '" + name +
                   "': use 'highest' (float32 products in float32), or 'high', 'medium' or 'tf32' (TF32 tensor cores)");
  }
}

std::string matmul_precision() { return tf32_allowed ? "high" : "highest"; }
bool matmul_allows_tf32() { return tf32_allowed; }

MatrixStorage classify_matrix(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride,
                              int64_t itemsize) {
  MatrixStorage s;
  // Row-major: columns one element apart, rows at least a row apart.
  {
    const int64_t cs = cols == 1 ? itemsize : col_stride;
    const int64_t rs = rows == 1 ? std::max<int64_t>(cols, 1) * itemsize : row_stride;
    if (cs == itemsize && rs % itemsize == 0 && rs / itemsize >= std::max<int64_t>(cols, 1)) {
      s.row_major = true;
      s.stored = {false, cols, rows, rs / itemsize};
    }
  }
  // Column-major (a transposed view): rows one element apart, columns at least a column apart.
  {
    const int64_t rs = rows == 1 ? itemsize : row_stride;
    const int64_t cs = cols == 1 ? std::max<int64_t>(rows, 1) * itemsize : col_stride;
    if (rs == itemsize && cs % itemsize == 0 && cs / itemsize >= std::max<int64_t>(rows, 1)) {
      s.column_major = true;
      if (!s.row_major) s.stored = {true, rows, cols, cs / itemsize};
    }
  }
  return s;
}

GemmPlan plan_gemm(const Layout& a, const Layout& b, const Layout& out) {
  const size_t nd = out.shape.size();
  const int64_t item = out.itemsize;
  const int64_t m = out.shape[nd - 2], n = out.shape[nd - 1], k = a.shape[nd - 1];
  const MatrixStorage sa = classify_matrix(m, k, a.strides[nd - 2], a.strides[nd - 1], item);
  const MatrixStorage sb = classify_matrix(k, n, b.strides[nd - 2], b.strides[nd - 1], item);
  const MatrixStorage so = classify_matrix(m, n, out.strides[nd - 2], out.strides[nd - 1], item);
  GemmPlan plan;
  plan.m = n;
  plan.n = m;
  plan.k = k;
  plan.first = sb.stored;
  plan.second = sa.stored;
  plan.out = so.row_major ? so.stored : StoredMatrix{false, n, m, std::max<int64_t>(n, 1)};
  plan.copy_a = !sa.row_major && !sa.column_major;
  plan.copy_b = !sb.row_major && !sb.column_major;
  plan.use_temporary_out = !so.row_major;

  // The batch dimensions that matter (size > 1), innermost last.
  struct BatchDim {
    int64_t size, a, b, out;
  };
  std::vector<BatchDim> dims;
  for (size_t d = 0; d + 2 < nd; ++d) {
    if (out.shape[d] == 1) continue;
    // Written more than once (an `out` broadcast along a batch dimension): through a temporary.
    if (out.strides[d] == 0) plan.use_temporary_out = true;
    dims.push_back({out.shape[d], a.strides[d], b.strides[d], out.strides[d]});
  }
  // A temporary output is C-contiguous: plan with its strides.
  if (plan.use_temporary_out) {
    int64_t stride = m * n * item;
    for (size_t i = dims.size(); i-- > 0;) {
      dims[i].out = stride;
      stride *= dims[i].size;
    }
  }
  // The longest innermost run of dimensions every operand steps through with one stride: one strided-batched
  // call. cuBLASLt takes non-negative strides in whole elements and a batch count that fits an int32.
  size_t inner = dims.size();
  int64_t count = 1, sa_bytes = 0, sb_bytes = 0, so_bytes = 0;
  while (inner > 0) {
    const BatchDim& d = dims[inner - 1];
    if (count > INT_MAX / d.size) break;
    if (inner == dims.size()) {
      const bool usable = d.a >= 0 && d.b >= 0 && d.out > 0 && d.a % item == 0 && d.b % item == 0 &&
                          d.out % item == 0;
      if (!usable) break;
      sa_bytes = d.a;
      sb_bytes = d.b;
      so_bytes = d.out;
    } else if (d.a != sa_bytes * count || d.b != sb_bytes * count || d.out != so_bytes * count) {
      break;
    }
    count *= d.size;
    --inner;
  }
  plan.batch_count = count;
  plan.a_batch_stride = sa_bytes / item;
  plan.b_batch_stride = sb_bytes / item;
  plan.out_batch_stride = so_bytes / item;
  for (size_t i = 0; i < inner; ++i) {
    plan.outer_shape.push_back(dims[i].size);
    plan.a_outer_strides.push_back(dims[i].a);
    plan.b_outer_strides.push_back(dims[i].b);
    plan.out_outer_strides.push_back(dims[i].out);
  }
  return plan;
}

Layout matrix_operand_layout(const Layout& layout, const Shape& batch, bool vector, bool on_left) {
  Layout m = layout;
  if (vector) {
    if (on_left) {
      m.shape.insert(m.shape.begin(), 1);
      m.strides.insert(m.strides.begin(), 0);
    } else {
      m.shape.push_back(1);
      m.strides.push_back(0);
    }
  }
  const size_t own = m.shape.size() - 2, nd = batch.size();
  Layout out;
  out.offset = m.offset;
  out.itemsize = m.itemsize;
  for (size_t i = 0; i < nd; ++i) {
    const bool present = i + own >= nd;
    const size_t j = i + own - nd;
    out.shape.push_back(batch[i]);
    out.strides.push_back(present && m.shape[j] == batch[i] ? m.strides[j] : 0);
  }
  for (size_t j = own; j < own + 2; ++j) {
    out.shape.push_back(m.shape[j]);
    out.strides.push_back(m.strides[j]);
  }
  return out;
}

namespace {

std::string device_name(int device) { return device == kCpuDevice ? "cpu" : "cuda:" + std::to_string(device); }

void check_devices(const Array& a, const Array& b, const Array* out, const char* op) {
  auto differ = [&](const Array& x, const Array& y, const char* what) {
    if (x.device() != y.device())
      throw InvalidArrayError(cu::CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE",
                              std::string(op) + ": " + what + " are on different devices (" +
                                  device_name(x.device()) + " and " + device_name(y.device()) +
                                  "); move one with jiasu.asarray(x, device=...)");
  };
  differ(a, b, "the operands");
  if (out) differ(a, *out, "the operands and out");
}

Array result_array(const Array& a, const Shape& shape, DType dtype, const Array* out, const char* op) {
  if (!out) return Array::empty(shape, dtype, a.device());
  if (out->shape() != shape)
    throw BadValue(std::string(op) + ": out has shape " + numpy_tuple(out->shape()) + " but the result has shape " +
                   numpy_tuple(shape));
  if (out->dtype() != dtype)
    throw BadArgument(std::string(op) + ": out has dtype " + info(out->dtype()).name + " but the result is " +
                      info(dtype).name + " (jiasu does not cast into out)");
  out->data();  // a freed out fails here
  return *out;
}

}  // namespace

Product prepare_matmul(const Array& a, const Array& b, const Array* out) {
  check_devices(a, b, out, "matmul");
  const MatmulShapes shapes = matmul_shapes(a.shape(), b.shape());
  const DType dtype = product_dtype(a.dtype(), b.dtype(), "matmul");
  return Product{a, b, result_array(a, shapes.result, dtype, out, "matmul"), false, matmul_allows_tf32()};
}

Product prepare_dot(const Array& a, const Array& b, const Array* out) {
  check_devices(a, b, out, "dot");
  const Shape shape = dot_shape(a.shape(), b.shape());
  const DType dtype = product_dtype(a.dtype(), b.dtype(), "dot");
  return Product{a, b, result_array(a, shape, dtype, out, "dot"), true, matmul_allows_tf32()};
}

namespace {
std::atomic<HostProduct> host_product{nullptr};
}  // namespace

void set_host_product(HostProduct run) { host_product = run; }

Array compute(const Product& product) {
  if (!product.result.on_host()) {
    run_on_gpu(product);
  } else if (HostProduct run = host_product.load()) {
    run(product);
  } else {
    throw LibraryNotFound("jiasu: the CPU backend's matrix product is NumPy's, which the Python module installs");
  }
  return product.result;
}

Array matmul(const Array& a, const Array& b, const Array* out) { return compute(prepare_matmul(a, b, out)); }

}  // namespace jiasu::ops
