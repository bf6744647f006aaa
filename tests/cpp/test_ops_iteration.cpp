// Broadcasting and dimension collapsing of the elementwise engine.
#include <gtest/gtest.h>

#include "ops/elementwise.hpp"
#include "ops/iteration.hpp"

namespace jiasu::ops {
namespace {

TEST(OpsBroadcast, NumpyRule) {
  EXPECT_EQ(broadcast_shapes({{4096, 1}, {1, 65536}}), (Shape{4096, 65536}));
  EXPECT_EQ(broadcast_shapes({{2, 3}, {3}, {}}), (Shape{2, 3}));
  EXPECT_EQ(broadcast_shapes({{0, 3}, {1, 3}}), (Shape{0, 3}));
}

TEST(OpsBroadcast, IncompatibleShapesInNumpysWords) {
  try {
    broadcast_shapes({{2, 3}, {4}});
    FAIL() << "no error";
  } catch (const BadValue& e) {
    EXPECT_STREQ(e.what(), "operands could not be broadcast together with shapes (2,3) (4,) ");
  }
}

TEST(OpsIteration, ContiguousCollapsesToOneDimension) {
  Layout a = contiguous_layout({4, 5, 6}, 4);
  const Layout* layouts[] = {&a, &a, nullptr};
  Iteration it = make_iteration({4, 5, 6}, layouts, 3);
  ASSERT_EQ(it.ndim, 1);
  EXPECT_EQ(it.shape[0], 120);
  EXPECT_EQ(it.strides[0][0], 4);
  EXPECT_EQ(it.strides[2][0], 0);  // the scalar
}

TEST(OpsIteration, BroadcastKeepsTheDimensionsThatDoNotMerge) {
  Layout out = contiguous_layout({8, 3, 5}, 8), row = contiguous_layout({5}, 8);
  const Layout* layouts[] = {&out, &row};
  Iteration it = make_iteration({8, 3, 5}, layouts, 2);
  ASSERT_EQ(it.ndim, 2);  // (8, 3) merge for both (row is broadcast along both): 24 x 5
  EXPECT_EQ(it.shape[0], 24);
  EXPECT_EQ(it.shape[1], 5);
  EXPECT_EQ(it.strides[1][0], 0);
  EXPECT_EQ(it.strides[1][1], 8);
}

TEST(OpsIteration, NegativeStridesAndUnitDimensions) {
  Layout out = contiguous_layout({1, 6}, 4);
  Layout reversed = contiguous_layout({1, 6}, 4);
  reversed.strides[1] = -4;
  reversed.offset = 20;
  const Layout* layouts[] = {&out, &reversed};
  Iteration it = make_iteration({1, 6}, layouts, 2);
  ASSERT_EQ(it.ndim, 1);
  EXPECT_EQ(it.shape[0], 6);
  EXPECT_EQ(it.strides[1][0], -4);
}

TEST(OpsIteration, TransposedOperandStaysTwoDimensional) {
  Layout out = contiguous_layout({3, 4}, 4), t = contiguous_layout({4, 3}, 4);
  std::swap(t.shape[0], t.shape[1]);
  std::swap(t.strides[0], t.strides[1]);
  const Layout* layouts[] = {&out, &t};
  Iteration it = make_iteration({3, 4}, layouts, 2);
  EXPECT_EQ(it.ndim, 2);
  EXPECT_EQ(it.size, 12);
}

TEST(OpsIteration, EmptyAndZeroDimensional) {
  Layout empty = contiguous_layout({0, 3}, 4);
  const Layout* e[] = {&empty};
  EXPECT_EQ(make_iteration({0, 3}, e, 1).size, 0);
  Layout scalar = contiguous_layout({}, 4);
  const Layout* s[] = {&scalar};
  Iteration it = make_iteration({}, s, 1);
  EXPECT_EQ(it.ndim, 0);
  EXPECT_EQ(it.size, 1);
}

}  // namespace
}  // namespace jiasu::ops

// The strided GPU path's division by a multiply (ops/runtime/elementwise_cuda.h), checked on the host.
#include "emit/runtime/kernel_runtime.h"
#include "ops/runtime/elementwise_cuda.h"

namespace jiasu::ops {
namespace {

TEST(OpsFastDivider, EqualsIntegerDivision) {
  const unsigned divisors[] = {1, 2, 3, 5, 7, 10, 64, 100, 255, 256, 1000, 4095, 4096, 65535, 65536, 65537,
                               1000003, (1u << 30) - 1, 1u << 30, (1u << 31) - 1};
  const unsigned top = (1u << 31) - 1;
  for (unsigned d : divisors) {
    const ufunc::FastDivider divider = ufunc::make_divider(d);
    for (unsigned n : {0u, 1u, d - 1, d, d + 1, 2 * d - 1, 12345u, 999999u, top - 1, top}) {
      if (n > top) continue;
      ASSERT_EQ(ufunc::divide(n, divider), n / d) << n << " / " << d;
    }
    for (unsigned n = 0; n < 100000; n += 7) ASSERT_EQ(ufunc::divide(n, divider), n / d) << n << " / " << d;
    for (unsigned n = top; n > top - 100000; n -= 13) ASSERT_EQ(ufunc::divide(n, divider), n / d) << n << " / " << d;
  }
}

}  // namespace
}  // namespace jiasu::ops
