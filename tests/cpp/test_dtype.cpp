// The dtype table (core/array/dtype.hpp) against NumPy's names and typestrs and DLPack's codes, written
// out here independently of the table in dtype.cpp.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "array/dtype.hpp"
#include "support/error.hpp"
#include "test_support.hpp"

namespace jiasu {
namespace {

using testing::message_of;

struct Expected {
  DType dtype;
  const char* name;     // NumPy's dtype name
  int itemsize;
  int dlpack_code;      // kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLComplex 5, kDLBool 6
  const char* typestr;  // np.dtype(name).str on a little-endian machine; "" for bfloat16
  DTypeKind kind;
};

const Expected kExpected[] = {
    {DType::Bool, "bool", 1, 6, "|b1", DTypeKind::Bool},
    {DType::Int8, "int8", 1, 0, "|i1", DTypeKind::Signed},
    {DType::Int16, "int16", 2, 0, "<i2", DTypeKind::Signed},
    {DType::Int32, "int32", 4, 0, "<i4", DTypeKind::Signed},
    {DType::Int64, "int64", 8, 0, "<i8", DTypeKind::Signed},
    {DType::UInt8, "uint8", 1, 1, "|u1", DTypeKind::Unsigned},
    {DType::UInt16, "uint16", 2, 1, "<u2", DTypeKind::Unsigned},
    {DType::UInt32, "uint32", 4, 1, "<u4", DTypeKind::Unsigned},
    {DType::UInt64, "uint64", 8, 1, "<u8", DTypeKind::Unsigned},
    {DType::Float16, "float16", 2, 2, "<f2", DTypeKind::Float},
    {DType::BFloat16, "bfloat16", 2, 4, "", DTypeKind::Float},
    {DType::Float32, "float32", 4, 2, "<f4", DTypeKind::Float},
    {DType::Float64, "float64", 8, 2, "<f8", DTypeKind::Float},
    {DType::Complex64, "complex64", 8, 5, "<c8", DTypeKind::Complex},
    {DType::Complex128, "complex128", 16, 5, "<c16", DTypeKind::Complex},
};

TEST(DType, TableCoversEveryDType) {
  ASSERT_EQ(sizeof(kExpected) / sizeof(kExpected[0]), size_t(kDTypeCount));
  std::set<std::string> names;
  for (int i = 0; i < kDTypeCount; ++i) {
    const DTypeInfo& t = info(static_cast<DType>(i));
    EXPECT_EQ(t.dtype, static_cast<DType>(i)) << "entry " << i << " is out of order";
    names.insert(t.name);
  }
  EXPECT_EQ(names.size(), size_t(kDTypeCount)) << "names must be unique";
}

TEST(DType, NameRoundTrip) {
  for (const Expected& e : kExpected) {
    EXPECT_STREQ(info(e.dtype).name, e.name);
    EXPECT_EQ(dtype_from_name(e.name), e.dtype) << e.name;
    EXPECT_EQ(dtype_from_name(info(e.dtype).name), e.dtype) << e.name;
  }
}

TEST(DType, ItemsizeAndKind) {
  for (const Expected& e : kExpected) {
    EXPECT_EQ(itemsize(e.dtype), size_t(e.itemsize)) << e.name;
    EXPECT_EQ(int(info(e.dtype).itemsize), e.itemsize) << e.name;
    EXPECT_EQ(info(e.dtype).kind, e.kind) << e.name;
  }
}

TEST(DType, CTypes) {
  EXPECT_STREQ(info(DType::Float32).c_type, "float");
  EXPECT_STREQ(info(DType::Float64).c_type, "double");
  EXPECT_STREQ(info(DType::Float16).c_type, "__half");
  EXPECT_STREQ(info(DType::BFloat16).c_type, "__nv_bfloat16");
  EXPECT_STREQ(info(DType::Int32).c_type, "int");
  EXPECT_STREQ(info(DType::Int64).c_type, "long long");
  EXPECT_STREQ(info(DType::UInt8).c_type, "unsigned char");
  EXPECT_STREQ(info(DType::Bool).c_type, "bool");
  for (const Expected& e : kExpected) EXPECT_NE(std::string(info(e.dtype).c_type), "") << e.name;
}

TEST(DType, DLPackRoundTrip) {
  for (const Expected& e : kExpected) {
    EXPECT_EQ(int(info(e.dtype).dlpack_code), e.dlpack_code) << e.name;
    EXPECT_EQ(dtype_from_dlpack(uint8_t(e.dlpack_code), uint8_t(e.itemsize * 8)), e.dtype) << e.name;
  }
}

TEST(DType, DLPackUnsupported) {
  EXPECT_THROW(dtype_from_dlpack(2, 128), BadArgument);  // float128
  EXPECT_THROW(dtype_from_dlpack(4, 32), BadArgument);   // no 32-bit bfloat
  EXPECT_THROW(dtype_from_dlpack(0, 4), BadArgument);    // int4
  EXPECT_THROW(dtype_from_dlpack(3, 64), BadArgument);   // kDLOpaqueHandle
  EXPECT_THROW(dtype_from_dlpack(6, 1), BadArgument);    // bool must be 8 bits
  try {
    dtype_from_dlpack(2, 128);
  } catch (const BadArgument& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("code 2"), std::string::npos) << m;
    EXPECT_NE(m.find("128 bits"), std::string::npos) << m;
  }
}

TEST(DType, TypestrRoundTrip) {
  for (const Expected& e : kExpected) {
    EXPECT_STREQ(info(e.dtype).typestr, e.typestr) << e.name;
    if (e.typestr[0] == '\0') continue;
    EXPECT_EQ(dtype_from_typestr(e.typestr), e.dtype) << e.name;
    // '=' (native) and '|' (not applicable) spell the same type on a little-endian device.
    std::string body = e.typestr + 1;
    EXPECT_EQ(dtype_from_typestr("=" + body), e.dtype) << e.name;
    EXPECT_EQ(dtype_from_typestr("|" + body), e.dtype) << e.name;
    // Big-endian data cannot be used on a GPU as is.
    if (e.itemsize > 1) EXPECT_THROW(dtype_from_typestr(">" + body), BadArgument) << e.name;
  }
}

TEST(DType, BFloat16HasNoTypestr) {
  EXPECT_STREQ(info(DType::BFloat16).typestr, "");
  EXPECT_THROW(dtype_from_typestr(""), BadArgument);
  EXPECT_THROW(dtype_from_typestr("<"), BadArgument);
  EXPECT_THROW(dtype_from_typestr("<V2"), BadArgument);  // what NumPy shows for ml_dtypes' bfloat16
  // No typestr maps to bfloat16.
  for (const char* s : {"<f2", "<V2", "<u2", "<i2", "<b2"}) {
    try {
      EXPECT_NE(dtype_from_typestr(s), DType::BFloat16) << s;
    } catch (const BadArgument&) {
    }
  }
}

TEST(DType, TypestrUnsupported) {
  EXPECT_THROW(dtype_from_typestr("<f16"), BadArgument);  // float128
  EXPECT_THROW(dtype_from_typestr("<M8"), BadArgument);   // datetime64
  EXPECT_THROW(dtype_from_typestr("f4"), BadArgument);    // no byte order character
  EXPECT_THROW(dtype_from_typestr("<f4x"), BadArgument);
  std::string m = message_of<BadArgument>([] { dtype_from_typestr("<M8"); });
  EXPECT_NE(m.find("'<M8'"), std::string::npos) << m;
}

TEST(DType, UnknownNameListsSupported) {
  std::string m = message_of<BadArgument>([] { dtype_from_name("float128"); });
  EXPECT_NE(m.find("'float128'"), std::string::npos) << m;
  for (const Expected& e : kExpected) EXPECT_NE(m.find(e.name), std::string::npos) << e.name << " missing from: " << m;
  EXPECT_THROW(dtype_from_name(""), BadArgument);
  EXPECT_THROW(dtype_from_name("Float32"), BadArgument);
  EXPECT_THROW(dtype_from_name("float32 "), BadArgument);
  EXPECT_THROW(dtype_from_name("<f4"), BadArgument);
}

}  // namespace
}  // namespace jiasu
