// The CPU backend's elementwise loops, end to end through ops::apply on host arrays.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "ops/elementwise.hpp"
#include "ops_test_support.hpp"

namespace jiasu::ops {
namespace {

using testing::host_array;
using testing::of;
using testing::values_of;

TEST(OpsCpu, AddFloat32Contiguous) {
  std::vector<float> x(1000), y(1000);
  for (int i = 0; i < 1000; ++i) x[i] = 0.5f * i, y[i] = 3.0f - i;
  Array a = host_array(x, DType::Float32), b = host_array(y, DType::Float32);
  Operand in[] = {of(a), of(b)};
  std::vector<float> r = values_of<float>(apply(Ufunc::Add, in, 2));
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(r[i], x[i] + y[i]) << i;
}

TEST(OpsCpu, LargeArraysSplitOverThePoolGiveTheSameAnswer) {
  const int n = (1 << 20) + 17;
  std::vector<int32_t> x(n);
  for (int i = 0; i < n; ++i) x[i] = i * 7 - 12345;
  Array a = host_array(x, DType::Int32);
  Operand in[] = {of(a), of(a)};
  std::vector<int32_t> r = values_of<int32_t>(apply(Ufunc::Multiply, in, 2));
  for (int i = 0; i < n; ++i) ASSERT_EQ(r[i], static_cast<int32_t>(static_cast<uint32_t>(x[i]) * static_cast<uint32_t>(x[i]))) << i;
}

TEST(OpsCpu, IntegerSemanticsAreNumpys) {
  Array a = host_array<int8_t>({-7, 7, -128, 5, 0}, DType::Int8), b = host_array<int8_t>({2, -2, -1, 0, 3}, DType::Int8);
  Operand in[] = {of(a), of(b)};
  EXPECT_EQ(values_of<int8_t>(apply(Ufunc::FloorDivide, in, 2)), (std::vector<int8_t>{-4, -4, -128, 0, 0}));
  EXPECT_EQ(values_of<int8_t>(apply(Ufunc::Mod, in, 2)), (std::vector<int8_t>{1, -1, 0, 0, 0}));
  EXPECT_EQ(values_of<int8_t>(apply(Ufunc::Add, in, 2)), (std::vector<int8_t>{-5, 5, 127, 5, 3}));  // wraps
}

TEST(OpsCpu, BroadcastScalarAndCastOnTheWayIn) {
  Array col = host_array<int16_t>({1, 2, 3}, DType::Int16, {3, 1});
  Array row = host_array<float>({0.5f, 1.5f}, DType::Float32, {1, 2});
  Operand in[] = {of(col), of(row)};
  Array r = apply(Ufunc::Multiply, in, 2);
  EXPECT_EQ(r.dtype(), DType::Float32);
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
  EXPECT_EQ(values_of<float>(r), (std::vector<float>{0.5f, 1.5f, 1, 3, 1.5f, 4.5f}));
  Operand scalar;
  scalar.scalar.dtype = DType::Float64;
  scalar.scalar.weak = true;
  scalar.scalar.f = 0.25;
  Operand with_scalar[] = {of(col), scalar};
  Array s = apply(Ufunc::Add, with_scalar, 2);
  EXPECT_EQ(s.dtype(), DType::Float64);
  EXPECT_EQ(values_of<double>(s), (std::vector<double>{1.25, 2.25, 3.25}));
}

TEST(OpsCpu, NegativeStridesAndOutWithAnotherDtype) {
  Array a = host_array<float>({1, 2, 3, 4}, DType::Float32);
  Array reversed = a.index({IndexItem{IndexItem::Slice, 0, "", std::nullopt, std::nullopt, -1}});
  Array out = Array::empty({4}, DType::Float64, kCpuDevice);
  Operand in[] = {of(a), of(reversed)};
  apply(Ufunc::Subtract, in, 2, &out);
  EXPECT_EQ(values_of<double>(out), (std::vector<double>{-3, -1, 1, 3}));
  Array narrow = Array::empty({4}, DType::Int32, kCpuDevice);
  EXPECT_THROW(apply(Ufunc::Subtract, in, 2, &narrow), BadArgument);  // float32 -> int32 is not same_kind
  Array wrong_shape = Array::empty({2}, DType::Float32, kCpuDevice);
  EXPECT_THROW(apply(Ufunc::Subtract, in, 2, &wrong_shape), BadValue);
}

TEST(OpsCpu, InPlaceWithOverlapReadsTheOldValues) {
  Array a = host_array<int32_t>({1, 2, 3, 4, 5}, DType::Int32);
  Array head = a.index({IndexItem{IndexItem::Slice, 0, "", 0, 4, std::nullopt}});
  Array tail = a.index({IndexItem{IndexItem::Slice, 0, "", 1, 5, std::nullopt}});
  Operand in[] = {of(tail), of(head)};
  apply(Ufunc::Add, in, 2, &tail);  // a[1:] += a[:-1], as NumPy: from the values before the call
  EXPECT_EQ(values_of<int32_t>(a), (std::vector<int32_t>{1, 3, 5, 7, 9}));
}

TEST(OpsCpu, FloatFunctionsAndHalfTypes) {
  Array a = host_array<int8_t>({1, 4, 9}, DType::Int8);
  Operand in[] = {of(a)};
  Array r = apply(Ufunc::Sqrt, in, 1);
  ASSERT_EQ(r.dtype(), DType::Float16);
  Array wide = astype(r, DType::Float32);
  EXPECT_EQ(values_of<float>(wide), (std::vector<float>{1, 2, 3}));
  Array f = host_array<float>({NAN, 1.0f, -2.0f}, DType::Float32);
  Array g = host_array<float>({0.0f, NAN, 5.0f}, DType::Float32);
  Operand fg[] = {of(f), of(g)};
  std::vector<float> m = values_of<float>(apply(Ufunc::Maximum, fg, 2));
  EXPECT_TRUE(std::isnan(m[0]) && std::isnan(m[1]));
  EXPECT_EQ(m[2], 5.0f);
}

TEST(OpsCpu, AssignBroadcastsAndConverts) {
  Array dst = Array::empty({2, 3}, DType::Int64, kCpuDevice);
  Array row = host_array<double>({1.9, -2.9, 3.0}, DType::Float64);
  assign(dst, row);
  EXPECT_EQ(values_of<int64_t>(dst), (std::vector<int64_t>{1, -2, 3, 1, -2, 3}));
  Array column = host_array<double>({1, 2}, DType::Float64);
  EXPECT_THROW(assign(dst, column), BadValue);
}

TEST(OpsCpu, AssignOfTheSameLayoutCopiesAndOverlapsReadOldValues) {
  Array src = host_array<int16_t>({1, 2, 3, 4, 5}, DType::Int16);
  Array dst = Array::empty({5}, DType::Int16, kCpuDevice);
  assign(dst, src);
  EXPECT_EQ(values_of<int16_t>(dst), (std::vector<int16_t>{1, 2, 3, 4, 5}));
  Array head = src.index({IndexItem{IndexItem::Slice, 0, "", 0, 4, std::nullopt}});
  Array tail = src.index({IndexItem{IndexItem::Slice, 0, "", 1, 5, std::nullopt}});
  assign(tail, head);  // overlapping contiguous views: as NumPy, from the values before
  EXPECT_EQ(values_of<int16_t>(src), (std::vector<int16_t>{1, 1, 2, 3, 4}));
}

TEST(OpsCpu, MixedDevicesAreInvalid) {
  Array a = Array::empty({2}, DType::Float32, kCpuDevice);
  Array fake(DType::Float32, a.layout(), std::make_shared<Allocation>(a.data(), 8, 0, nullptr));
  Operand in[] = {of(a), of(fake)};
  EXPECT_THROW(apply(Ufunc::Add, in, 2), InvalidArrayError);
}

}  // namespace
}  // namespace jiasu::ops
