// matmul's rules that need no GPU: shapes, dtypes, how operands are read by cuBLASLt, the batch plan, and
// (where cuBLASLt is installed) that cuBLASLt accepts the descriptors of a plan.
#include <gtest/gtest.h>

#include "ops/matmul.hpp"
#include "ops/matmul_cublaslt.hpp"
#include "support/error.hpp"

namespace jiasu::ops {
namespace {

std::string value_error(const Shape& a, const Shape& b, bool dot = false) {
  try {
    if (dot)
      dot_shape(a, b);
    else
      matmul_shapes(a, b);
  } catch (const BadValue& e) {
    return e.what();
  }
  return "";
}

TEST(MatmulShapes, VectorsMatricesAndBatches) {
  MatmulShapes s = matmul_shapes({3}, {3});
  EXPECT_EQ(s.result, Shape{});
  EXPECT_TRUE(s.a_vector && s.b_vector);
  EXPECT_EQ(matmul_shapes({2, 3}, {3}).result, (Shape{2}));
  EXPECT_EQ(matmul_shapes({3}, {3, 4}).result, (Shape{4}));
  s = matmul_shapes({2, 3}, {3, 4});
  EXPECT_EQ(s.result, (Shape{2, 4}));
  EXPECT_EQ(s.m, 2);
  EXPECT_EQ(s.n, 4);
  EXPECT_EQ(s.k, 3);
  s = matmul_shapes({5, 1, 2, 3}, {7, 3, 4});
  EXPECT_EQ(s.batch, (Shape{5, 7}));
  EXPECT_EQ(s.result, (Shape{5, 7, 2, 4}));
  EXPECT_EQ(matmul_shapes({3}, {6, 3, 4}).result, (Shape{6, 4}));
  EXPECT_EQ(matmul_shapes({6, 2, 3}, {3}).result, (Shape{6, 2}));
}

TEST(MatmulShapes, ErrorsInNumpysWords) {
  EXPECT_EQ(value_error({2, 3}, {4, 5}),
            "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
            "(n?,k),(k,m?)->(n?,m?) (size 4 is different from 3)");
  EXPECT_EQ(value_error({2, 3, 4}, {3, 4, 5}),
            "operands could not be broadcast together with remapped shapes [original->remapped]: "
            "(2,3,4)->(2,newaxis,newaxis) (3,4,5)->(3,newaxis,newaxis)  and requested shape (3,5)");
  EXPECT_EQ(value_error({}, {3}),
            "matmul: Input operand 0 does not have enough dimensions (has 0, gufunc core with signature "
            "(n?,k),(k,m?)->(n?,m?) requires 1)");
  EXPECT_EQ(value_error({2, 3}, {4, 5}, true), "shapes (2,3) and (4,5) not aligned: 3 (dim 1) != 4 (dim 0)");
  EXPECT_EQ(value_error({3}, {4}, true), "shapes (3,) and (4,) not aligned: 3 (dim 0) != 4 (dim 0)");
}

TEST(DotShape, NumpysRule) {
  EXPECT_EQ(dot_shape({3}, {3}), Shape{});
  EXPECT_EQ(dot_shape({2, 3}, {3, 4}), (Shape{2, 4}));
  EXPECT_EQ(dot_shape({2, 5, 3}, {7, 3, 4}), (Shape{2, 5, 7, 4}));
  EXPECT_EQ(dot_shape({2, 5, 3}, {3}), (Shape{2, 5}));
  EXPECT_EQ(dot_shape({}, {2, 3}), (Shape{2, 3}));
}

TEST(ProductDtype, NumpysPromotion) {
  EXPECT_EQ(product_dtype(DType::Float32, DType::Float32, "matmul"), DType::Float32);
  EXPECT_EQ(product_dtype(DType::Float32, DType::Float64, "matmul"), DType::Float64);
  EXPECT_EQ(product_dtype(DType::Float16, DType::Int8, "matmul"), DType::Float16);
  EXPECT_EQ(product_dtype(DType::Float16, DType::Int16, "matmul"), DType::Float32);
  EXPECT_EQ(product_dtype(DType::Float32, DType::Int32, "matmul"), DType::Float64);
  EXPECT_EQ(product_dtype(DType::Complex64, DType::Float64, "matmul"), DType::Complex128);
  EXPECT_EQ(product_dtype(DType::Int8, DType::UInt8, "matmul"), DType::Int16);
  EXPECT_EQ(product_dtype(DType::Int64, DType::UInt64, "matmul"), DType::Float64);
  EXPECT_EQ(product_dtype(DType::Bool, DType::Int32, "matmul"), DType::Int32);
  EXPECT_EQ(product_dtype(DType::BFloat16, DType::Int8, "matmul"), DType::BFloat16);
  EXPECT_EQ(product_dtype(DType::BFloat16, DType::Float32, "matmul"), DType::Float32);
  // The shared rule (array/promotion, as ml_dtypes 0.7): bfloat16 with float16 is float32, with int32 float64.
  EXPECT_EQ(product_dtype(DType::BFloat16, DType::Float16, "matmul"), DType::Float32);
  EXPECT_EQ(product_dtype(DType::BFloat16, DType::Int32, "matmul"), DType::Float64);
}

TEST(MatmulPrecision, NamesLikeTorch) {
  set_matmul_precision("tf32");
  EXPECT_TRUE(matmul_allows_tf32());
  EXPECT_EQ(matmul_precision(), "high");
  set_matmul_precision("highest");
  EXPECT_FALSE(matmul_allows_tf32());
  set_matmul_precision("medium");
  EXPECT_TRUE(matmul_allows_tf32());
  EXPECT_THROW(set_matmul_precision("low"), BadValue);
  set_matmul_precision("highest");
}

TEST(ClassifyMatrix, RowMajorTransposedAndNeither) {
  // A contiguous 3 x 4 float: row-major, stored as its 4 x 3 column-major transpose.
  MatrixStorage s = classify_matrix(3, 4, 16, 4, 4);
  EXPECT_TRUE(s.row_major);
  EXPECT_FALSE(s.column_major);
  EXPECT_FALSE(s.stored.transposed);
  EXPECT_EQ(s.stored.rows, 4);
  EXPECT_EQ(s.stored.cols, 3);
  EXPECT_EQ(s.stored.ld, 4);
  // Its transpose a.T (4 x 3, strides (4, 16)): column-major, read transposed, no copy.
  s = classify_matrix(4, 3, 4, 16, 4);
  EXPECT_FALSE(s.row_major);
  EXPECT_TRUE(s.column_major);
  EXPECT_TRUE(s.stored.transposed);
  EXPECT_EQ(s.stored.rows, 4);
  EXPECT_EQ(s.stored.cols, 3);
  EXPECT_EQ(s.stored.ld, 4);
  // A column slice a[:, :2] keeps its row pitch as the leading dimension.
  s = classify_matrix(3, 2, 16, 4, 4);
  EXPECT_TRUE(s.row_major);
  EXPECT_EQ(s.stored.ld, 4);
  // Every other column, reversed rows, broadcast rows: neither.
  EXPECT_FALSE(classify_matrix(3, 2, 16, 8, 4).row_major || classify_matrix(3, 2, 16, 8, 4).column_major);
  EXPECT_FALSE(classify_matrix(3, 4, -16, 4, 4).row_major);
  EXPECT_FALSE(classify_matrix(3, 4, 0, 4, 4).row_major);
  // Size-1 dimensions: their strides do not matter.
  s = classify_matrix(1, 5, 0, 16, 8);  // one row, every other element: a 1 x 5 column-major matrix, ld 2
  EXPECT_FALSE(s.row_major);
  EXPECT_TRUE(s.column_major);
  EXPECT_EQ(s.stored.ld, 2);
  s = classify_matrix(5, 1, 8, 123, 8);
  EXPECT_TRUE(s.row_major && s.column_major);
  EXPECT_EQ(s.stored.ld, 1);
}

Layout strided(Shape shape, Shape strides, int64_t itemsize = 4) {
  Layout l;
  l.shape = std::move(shape);
  l.strides = std::move(strides);
  l.itemsize = itemsize;
  return l;
}

TEST(PlanGemm, TwoDimensionsSwapOperands) {
  // (2 x 3) @ (3 x 5): cuBLASLt computes the 5 x 2 column-major D^T = B^T A^T.
  GemmPlan p = plan_gemm(contiguous_layout({2, 3}, 4), contiguous_layout({3, 5}, 4), contiguous_layout({2, 5}, 4));
  EXPECT_EQ(p.m, 5);
  EXPECT_EQ(p.n, 2);
  EXPECT_EQ(p.k, 3);
  EXPECT_FALSE(p.first.transposed);
  EXPECT_EQ(p.first.rows, 5);
  EXPECT_EQ(p.first.cols, 3);
  EXPECT_EQ(p.first.ld, 5);
  EXPECT_FALSE(p.second.transposed);
  EXPECT_EQ(p.second.rows, 3);
  EXPECT_EQ(p.second.cols, 2);
  EXPECT_EQ(p.out.rows, 5);
  EXPECT_EQ(p.out.cols, 2);
  EXPECT_EQ(p.out.ld, 5);
  EXPECT_FALSE(p.copy_a || p.copy_b || p.use_temporary_out);
  EXPECT_EQ(p.batch_count, 1);
  EXPECT_TRUE(p.outer_shape.empty());
}

TEST(PlanGemm, TransposedViewsAreTransposesNotCopies) {
  // a = x.T with x (3 x 2) contiguous; b = y.T with y (5 x 3).
  GemmPlan p = plan_gemm(strided({2, 3}, {4, 8}), strided({3, 5}, {4, 12}), contiguous_layout({2, 5}, 4));
  EXPECT_FALSE(p.copy_a || p.copy_b);
  EXPECT_TRUE(p.first.transposed);  // our b, read as (y)^T
  EXPECT_EQ(p.first.rows, 3);
  EXPECT_EQ(p.first.cols, 5);
  EXPECT_EQ(p.first.ld, 3);
  EXPECT_TRUE(p.second.transposed);
  EXPECT_EQ(p.second.rows, 2);
  EXPECT_EQ(p.second.cols, 3);
  EXPECT_EQ(p.second.ld, 2);
}

TEST(PlanGemm, StridedOperandsAndOutputsAreFlagged) {
  GemmPlan p = plan_gemm(strided({2, 3}, {24, 8}), contiguous_layout({3, 5}, 4), strided({2, 5}, {4, 8}));
  EXPECT_TRUE(p.copy_a);
  EXPECT_FALSE(p.copy_b);
  EXPECT_TRUE(p.use_temporary_out);  // a column-major out is written through a temporary
}

TEST(PlanGemm, BroadcastBatchIsStrideZero) {
  // (4, 2, 3) @ (3, 5) broadcast to (4, 3, 5): b's batch stride is 0, one strided-batched call.
  Layout a = contiguous_layout({4, 2, 3}, 4);
  Layout b = matrix_operand_layout(contiguous_layout({3, 5}, 4), {4}, false, false);
  GemmPlan p = plan_gemm(a, b, contiguous_layout({4, 2, 5}, 4));
  EXPECT_EQ(p.batch_count, 4);
  EXPECT_EQ(p.a_batch_stride, 6);
  EXPECT_EQ(p.b_batch_stride, 0);
  EXPECT_EQ(p.out_batch_stride, 10);
  EXPECT_TRUE(p.outer_shape.empty());
}

TEST(PlanGemm, BatchesThatNeedALoop) {
  // a (3, 1, 2, 2) broadcast to batch (3, 4) against b (3, 4, 2, 2): a's strides (16, 0) are no single
  // stride over the 12 matrices, so the outer dimension of 3 is a loop of 4-matrix batches.
  Layout a = matrix_operand_layout(contiguous_layout({3, 1, 2, 2}, 4), {3, 4}, false, true);
  EXPECT_EQ(a.strides, (Shape{16, 0, 8, 4}));
  GemmPlan p = plan_gemm(a, contiguous_layout({3, 4, 2, 2}, 4), contiguous_layout({3, 4, 2, 2}, 4));
  EXPECT_EQ(p.batch_count, 4);
  EXPECT_EQ(p.a_batch_stride, 0);
  EXPECT_EQ(p.b_batch_stride, 4);
  EXPECT_EQ(p.outer_shape, Shape{3});
  EXPECT_EQ(p.a_outer_strides, Shape{16});
  EXPECT_EQ(p.b_outer_strides, Shape{64});
  EXPECT_EQ(p.out_outer_strides, Shape{64});
  // Contiguous batches of several dimensions collapse into one call.
  p = plan_gemm(contiguous_layout({3, 4, 2, 2}, 4), contiguous_layout({3, 4, 2, 2}, 4),
                contiguous_layout({3, 4, 2, 2}, 4));
  EXPECT_EQ(p.batch_count, 12);
  EXPECT_TRUE(p.outer_shape.empty());
  // A reversed batch (negative stride) is looped over.
  p = plan_gemm(strided({3, 2, 2}, {-16, 8, 4}), contiguous_layout({3, 2, 2}, 4), contiguous_layout({3, 2, 2}, 4));
  EXPECT_EQ(p.batch_count, 1);
  EXPECT_EQ(p.outer_shape, Shape{3});
}

TEST(MatrixOperandLayout, VectorsBecomeMatrices) {
  Layout v = strided({3}, {8});
  Layout left = matrix_operand_layout(v, {2}, true, true);
  EXPECT_EQ(left.shape, (Shape{2, 1, 3}));
  EXPECT_EQ(left.strides, (Shape{0, 0, 8}));
  Layout right = matrix_operand_layout(v, {}, true, false);
  EXPECT_EQ(right.shape, (Shape{3, 1}));
  EXPECT_EQ(right.strides, (Shape{8, 0}));
}

// Built with the real library where there is one: cuBLASLt checks each attribute's size and value, so this
// catches a wrong enum value or type in runtime/cublaslt.hpp without a GPU.
TEST(CublasLtDescriptors, AcceptedByTheLibrary) {
  try {
    blaslt::api();
  } catch (const LibraryNotFound& e) {
    GTEST_SKIP() << "no cuBLASLt here: " << e.what();
  }
  for (DType dtype : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64, DType::Complex64,
                      DType::Complex128}) {
    for (const char* precision : {"highest", "tf32"}) {
      set_matmul_precision(precision);
      Layout a = contiguous_layout({4, 2, 3}, itemsize(dtype));
      Layout b = matrix_operand_layout(strided({3, 5}, {int64_t(itemsize(dtype)), 3 * int64_t(itemsize(dtype))},
                                               itemsize(dtype)),
                                       {4}, false, false);
      GemmPlan plan = plan_gemm(a, b, contiguous_layout({4, 2, 5}, itemsize(dtype)));
      ASSERT_EQ(plan.batch_count, 4);
      EXPECT_NO_THROW(make_gemm_descriptors(gemm_types(dtype, false, "matmul"), plan, {16, 16, 256})) << info(dtype).name;
    }
  }
  set_matmul_precision("highest");
  EXPECT_THROW(gemm_types(DType::Int32, false, "matmul"), BadArgument);
}

}  // namespace
}  // namespace jiasu::ops
