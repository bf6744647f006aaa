// Matrix products with NumPy's semantics: matmul (the @ operator) and dot. The shape, dtype and layout rules
// here are pure (unit-tested without a GPU); on a GPU the product runs through cuBLASLt (matmul_cublaslt.cpp).
// The CPU backend's product runs in the binding through NumPy on views of the arrays (see docs/arrays.md).
#pragma once

#include <string>
#include <vector>

#include "array/array.hpp"

namespace jiasu::ops {

// NumPy's matmul shape rule: 1-D operands are promoted to matrices ((k,) -> (1, k) on the left, (k, 1) on
// the right) and the added dimension is removed from the result; the batch dimensions broadcast.
struct MatmulShapes {
  Shape batch;    // the broadcast batch dimensions
  int64_t m = 0, n = 0, k = 0;
  bool a_vector = false, b_vector = false;  // a 1-D operand, promoted
  Shape result;   // the result's shape
};
// Throws BadValue in NumPy's words for operands that do not fit.
MatmulShapes matmul_shapes(const Shape& a, const Shape& b);
// np.dot's shape: a.shape[:-1] + b.shape[:-2] + b.shape[-1:] (b 1-D: a.shape[:-1]). Throws BadValue.
Shape dot_shape(const Shape& a, const Shape& b);

// The result dtype of a product (NumPy's promotion of the two, with ml_dtypes' rules for bfloat16). Throws
// BadArgument naming `op` where NumPy has no common dtype (bfloat16 with float16, say).
DType product_dtype(DType a, DType b, const char* op);

// Whether float32 products may use TF32 tensor cores (as torch.set_float32_matmul_precision): "highest" does
// not; "high", "medium" and "tf32" do. Process-wide; "highest" until set.
void set_matmul_precision(const std::string& name);  // BadValue for another name
std::string matmul_precision();                      // "highest" or "high"
bool matmul_allows_tf32();

// One operand's matrices as cuBLASLt (column-major) sees them: the matrix stored is `rows` x `cols` with
// leading dimension `ld` (elements); `transposed` says the product reads its transpose.
struct StoredMatrix {
  bool transposed = false;
  int64_t rows = 0, cols = 0, ld = 0;
};
// How a row-major `rows` x `cols` matrix with byte strides (row_stride, col_stride) is stored: row-major
// (column-major storage of its transpose: the usual case) or column-major (a transposed view such as `a.T`),
// or neither (the operand must be copied first). Strides of dimensions of size 1 do not matter.
struct MatrixStorage {
  bool row_major = false, column_major = false;
  StoredMatrix stored;  // the row-major reading when there is one, else the column-major one
};
MatrixStorage classify_matrix(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride, int64_t itemsize);

// How a batched product D = A @ B of row-major operands runs as column-major cuBLASLt calls: D^T = B^T A^T,
// so cuBLASLt's first operand is B and its second A; m = n_cols(D), n = n_rows(D).
struct GemmPlan {
  int64_t m = 0, n = 0, k = 0;  // cuBLASLt's: m = N, n = M, k = K
  StoredMatrix first, second, out;  // cuBLASLt's A (our B), B (our A) and D (our result, never transposed)
  bool copy_a = false, copy_b = false, use_temporary_out = false;  // layouts cuBLASLt cannot read or write
  // The inner batch: one strided-batched call; strides in elements (0: a broadcast operand).
  int64_t batch_count = 1;
  int64_t a_batch_stride = 0, b_batch_stride = 0, out_batch_stride = 0;
  // The outer batch: one call per index, at these byte strides (dimensions the inner batch cannot take).
  Shape outer_shape, a_outer_strides, b_outer_strides, out_outer_strides;
};
// a: (batch..., M, K), b: (batch..., K, N), out: (batch, M, N) with the full batch; a's and b's layouts have
// as many dimensions as out's (size-1 or stride-0 dimensions for broadcast batches).
GemmPlan plan_gemm(const Layout& a, const Layout& b, const Layout& out);

// A layout broadcast to `batch` + its own last two dimensions (stride 0 where it is broadcast), with `vector`
// (a 1-D operand) first promoted to a matrix: (k,) -> (1, k) when `on_left`, else (k, 1).
Layout matrix_operand_layout(const Layout& layout, const Shape& batch, bool vector, bool on_left);

// The operands of a product and the array its result goes to (a new one, or `out`), checked: devices
// (InvalidArrayError), shapes (BadValue, in NumPy's words) and dtypes (BadArgument; `out` must have the
// result's shape and dtype).
struct Product {
  Array a, b, result;
  bool dot = false;         // np.dot's rule for N-D operands, not matmul's
  bool allow_tf32 = false;  // float32 on TF32 tensor cores: matmul_allows_tf32() when prepared
};
Product prepare_matmul(const Array& a, const Array& b, const Array* out);
Product prepare_dot(const Array& a, const Array& b, const Array* out);

// Computes a prepared product on its GPU through cuBLASLt, on the legacy default stream. Throws BadArgument
// naming the dtype for types cuBLASLt has no product for (integers, bool), LibraryNotFound without cuBLASLt.
void run_on_gpu(const Product& product);

// The CPU backend's product, which the Python layer provides (NumPy's BLAS on views of the arrays:
// bindings/matmul.cpp) and installs once. It takes the GIL itself.
using HostProduct = void (*)(const Product& product);
void set_host_product(HostProduct run);
// A prepared product computed on its backend: run_on_gpu, or the host product (LibraryNotFound before one is
// installed). Returns product.result.
Array compute(const Product& product);
// NumPy's matmul on either backend (prepare_matmul, then compute).
Array matmul(const Array& a, const Array& b, const Array* out = nullptr);

}  // namespace jiasu::ops
