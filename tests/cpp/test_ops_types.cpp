// The elementwise engine's type rules against NumPy 2's answers (np.result_type / ufunc loop search, NEP 50).
#include <gtest/gtest.h>

#include "ops/elementwise.hpp"

namespace jiasu::ops {
namespace {

using D = DType;

Operand array_of(const Array& a) {
  Operand o;
  o.array = &a;
  return o;
}
Operand weak_int(int64_t v) {
  Operand o;
  o.scalar.dtype = D::Int64;
  o.scalar.weak = true;
  o.scalar.i = v;
  return o;
}
Operand weak_float(double v) {
  Operand o;
  o.scalar.dtype = D::Float64;
  o.scalar.weak = true;
  o.scalar.f = v;
  return o;
}
Operand strong(D d) {
  Operand o;
  o.scalar.dtype = d;
  return o;
}

struct Case {
  Ufunc op;
  D a, b;
  D result;
};

// Each row: np.OP(np.ones(1, A), np.ones(1, B)).dtype with NumPy 2.
const Case kBinary[] = {
    {Ufunc::Add, D::Int8, D::UInt8, D::Int16},          {Ufunc::Add, D::Int64, D::UInt64, D::Float64},
    {Ufunc::Add, D::Bool, D::Bool, D::Bool},            {Ufunc::Add, D::Int16, D::Float16, D::Float32},
    {Ufunc::Add, D::UInt32, D::Float32, D::Float64},    {Ufunc::Add, D::Float16, D::BFloat16, D::Float32},
    {Ufunc::Multiply, D::Bool, D::Bool, D::Bool},       {Ufunc::FloorDivide, D::Bool, D::Bool, D::Int8},
    {Ufunc::Mod, D::Bool, D::Int32, D::Int32},          {Ufunc::Power, D::Bool, D::Bool, D::Int8},
    {Ufunc::Divide, D::Int8, D::Int8, D::Float64},      {Ufunc::Divide, D::Bool, D::Bool, D::Float64},
    {Ufunc::Divide, D::Float16, D::Float16, D::Float16}, {Ufunc::Divide, D::Int8, D::Float16, D::Float16},
    {Ufunc::Arctan2, D::Int8, D::Int8, D::Float16},     {Ufunc::Arctan2, D::Int16, D::UInt8, D::Float32},
    {Ufunc::Arctan2, D::Int32, D::Float32, D::Float64}, {Ufunc::Less, D::Int8, D::Float64, D::Bool},
    {Ufunc::Equal, D::UInt64, D::Int64, D::Bool},       {Ufunc::LeftShift, D::Bool, D::Bool, D::Int8},
    {Ufunc::LeftShift, D::UInt8, D::Int8, D::Int16},    {Ufunc::BitwiseAnd, D::Bool, D::Bool, D::Bool},
    {Ufunc::LogicalAnd, D::Float32, D::Int8, D::Bool},  {Ufunc::Maximum, D::Bool, D::Bool, D::Bool},
};

TEST(OpsTypes, BinaryTableMatchesNumpy) {
  for (const Case& c : kBinary) {
    Array a = Array::empty({1}, c.a, kCpuDevice), b = Array::empty({1}, c.b, kCpuDevice);
    Operand in[] = {array_of(a), array_of(b)};
    EXPECT_EQ(resolve_types(c.op, in, 2).result, c.result)
        << info(c.op).name << "(" << info(c.a).name << ", " << info(c.b).name << ")";
  }
}

struct UnaryCase {
  Ufunc op;
  D a;
  D result;
};
const UnaryCase kUnary[] = {
    {Ufunc::Sqrt, D::Int8, D::Float16},   {Ufunc::Sqrt, D::Int16, D::Float32},  {Ufunc::Sqrt, D::Int32, D::Float64},
    {Ufunc::Sqrt, D::Int64, D::Float64},  {Ufunc::Sqrt, D::Bool, D::Float16},   {Ufunc::Sqrt, D::UInt8, D::Float16},
    {Ufunc::Exp, D::BFloat16, D::BFloat16}, {Ufunc::Floor, D::Int32, D::Int32}, {Ufunc::Floor, D::Bool, D::Bool},
    {Ufunc::Rint, D::Int8, D::Float16},   {Ufunc::Square, D::Bool, D::Int8},    {Ufunc::Absolute, D::Bool, D::Bool},
    {Ufunc::Isnan, D::Int8, D::Bool},     {Ufunc::Invert, D::Bool, D::Bool},    {Ufunc::LogicalNot, D::Float64, D::Bool},
};

TEST(OpsTypes, UnaryTableMatchesNumpy) {
  for (const UnaryCase& c : kUnary) {
    Array a = Array::empty({1}, c.a, kCpuDevice);
    Operand in[] = {array_of(a)};
    EXPECT_EQ(resolve_types(c.op, in, 1).result, c.result) << info(c.op).name << "(" << info(c.a).name << ")";
  }
}

TEST(OpsTypes, WeakScalarsFollowNep50) {
  Array i8 = Array::empty({1}, D::Int8, kCpuDevice), f16 = Array::empty({1}, D::Float16, kCpuDevice);
  Array b = Array::empty({1}, D::Bool, kCpuDevice), u8 = Array::empty({1}, D::UInt8, kCpuDevice);
  Operand int8_and_3[] = {array_of(i8), weak_int(3)};
  EXPECT_EQ(resolve_types(Ufunc::Add, int8_and_3, 2).result, D::Int8);
  Operand int8_and_half[] = {array_of(i8), weak_float(0.5)};
  EXPECT_EQ(resolve_types(Ufunc::Add, int8_and_half, 2).result, D::Float64);
  Operand f16_and_float[] = {weak_float(2.0), array_of(f16)};
  EXPECT_EQ(resolve_types(Ufunc::Multiply, f16_and_float, 2).result, D::Float16);
  Operand bool_and_1[] = {array_of(b), weak_int(1)};
  EXPECT_EQ(resolve_types(Ufunc::Add, bool_and_1, 2).result, D::Int64);
  Operand int8_and_strong_f32[] = {array_of(i8), strong(D::Float32)};
  EXPECT_EQ(resolve_types(Ufunc::Add, int8_and_strong_f32, 2).result, D::Float32);
  Operand divide_by_300[] = {array_of(i8), weak_int(300)};  // the float loop takes it: no overflow
  EXPECT_EQ(resolve_types(Ufunc::Divide, divide_by_300, 2).result, D::Float64);
  Operand compare_minus_1[] = {array_of(u8), weak_int(-1)};  // compared exactly, in a wider type
  EXPECT_EQ(resolve_types(Ufunc::Equal, compare_minus_1, 2).loop[0], D::Int64);
}

TEST(OpsTypes, OutOfRangePythonIntIsOverflow) {
  Array i8 = Array::empty({1}, D::Int8, kCpuDevice), u8 = Array::empty({1}, D::UInt8, kCpuDevice);
  Operand plus_300[] = {array_of(i8), weak_int(300)};
  EXPECT_THROW(resolve_types(Ufunc::Add, plus_300, 2), ScalarOverflow);
  Operand minus_1[] = {array_of(u8), weak_int(-1)};
  EXPECT_THROW(resolve_types(Ufunc::Add, minus_1, 2), ScalarOverflow);
  Operand plus_255[] = {array_of(u8), weak_int(255)};
  EXPECT_EQ(resolve_types(Ufunc::Add, plus_255, 2).result, D::UInt8);
}

TEST(OpsTypes, UnsupportedDtypesNameTheOperation) {
  Array f = Array::empty({1}, D::Float32, kCpuDevice), b = Array::empty({1}, D::Bool, kCpuDevice);
  Array c = Array::empty({1}, D::Complex64, kCpuDevice);
  Operand shift_float[] = {array_of(f), weak_int(1)};
  try {
    resolve_types(Ufunc::LeftShift, shift_float, 2);
    FAIL() << "no error";
  } catch (const BadArgument& e) {
    EXPECT_NE(std::string(e.what()).find("left_shift"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("float32"), std::string::npos) << e.what();
  }
  Operand bool_minus_bool[] = {array_of(b), array_of(b)};
  EXPECT_THROW(resolve_types(Ufunc::Subtract, bool_minus_bool, 2), BadArgument);
  Operand negative_bool[] = {array_of(b)};
  EXPECT_THROW(resolve_types(Ufunc::Negative, negative_bool, 1), BadArgument);
  Operand complex_sqrt[] = {array_of(c)};
  EXPECT_THROW(resolve_types(Ufunc::Sqrt, complex_sqrt, 1), BadArgument);
}

TEST(OpsTypes, PromotionHelpers) {
  EXPECT_TRUE(can_cast_safe(D::Int8, D::Float16));
  EXPECT_FALSE(can_cast_safe(D::UInt8, D::Int8));
  EXPECT_FALSE(can_cast_safe(D::Float16, D::BFloat16));
  EXPECT_TRUE(can_cast_same_kind(D::Float64, D::Float16));
  EXPECT_TRUE(can_cast_same_kind(D::UInt64, D::Int8));
  EXPECT_FALSE(can_cast_same_kind(D::Int64, D::UInt8));
  EXPECT_FALSE(can_cast_same_kind(D::Float32, D::Int64));
}

}  // namespace
}  // namespace jiasu::ops
