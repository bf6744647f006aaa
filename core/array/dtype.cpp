#include "array/dtype.hpp"

#include "support/error.hpp"

namespace jiasu {
namespace {

// NumPy's own letters for 64-bit integers ('l' where long has 64 bits), so that its views get int64 itself.
constexpr const char* kInt64Format = sizeof(long) == 8 ? "l" : "q";
constexpr const char* kUInt64Format = sizeof(long) == 8 ? "L" : "Q";

constexpr DTypeInfo kTable[kDTypeCount] = {
    {DType::Bool, "bool", "bool", DTypeKind::Bool, 1, 6, "|b1", "?"},
    {DType::Int8, "int8", "signed char", DTypeKind::Signed, 1, 0, "|i1", "b"},
    {DType::Int16, "int16", "short", DTypeKind::Signed, 2, 0, "<i2", "h"},
    {DType::Int32, "int32", "int", DTypeKind::Signed, 4, 0, "<i4", "i"},
    {DType::Int64, "int64", "long long", DTypeKind::Signed, 8, 0, "<i8", kInt64Format},
    {DType::UInt8, "uint8", "unsigned char", DTypeKind::Unsigned, 1, 1, "|u1", "B"},
    {DType::UInt16, "uint16", "unsigned short", DTypeKind::Unsigned, 2, 1, "<u2", "H"},
    {DType::UInt32, "uint32", "unsigned int", DTypeKind::Unsigned, 4, 1, "<u4", "I"},
    {DType::UInt64, "uint64", "unsigned long long", DTypeKind::Unsigned, 8, 1, "<u8", kUInt64Format},
    {DType::Float16, "float16", "__half", DTypeKind::Float, 2, 2, "<f2", "e"},
    {DType::BFloat16, "bfloat16", "__nv_bfloat16", DTypeKind::Float, 2, 4, "", ""},
    {DType::Float32, "float32", "float", DTypeKind::Float, 4, 2, "<f4", "f"},
    {DType::Float64, "float64", "double", DTypeKind::Float, 8, 2, "<f8", "d"},
    {DType::Complex64, "complex64", "jiasu::complex64", DTypeKind::Complex, 8, 5, "<c8", "Zf"},
    {DType::Complex128, "complex128", "jiasu::complex128", DTypeKind::Complex, 16, 5, "<c16", "Zd"},
};

std::string supported_names() {
  std::string names;
  for (const auto& t : kTable) names += std::string(names.empty() ? "" : ", ") + t.name;
  return names;
}

}  // namespace

const DTypeInfo& info(DType dtype) { return kTable[static_cast<int>(dtype)]; }

DType dtype_from_name(std::string_view name) {
  for (const auto& t : kTable)
    if (name == t.name) return t.dtype;
  throw BadArgument("unsupported dtype '" + std::string(name) + "'; jiasu arrays hold " + supported_names());
}

DType dtype_from_dlpack(uint8_t code, uint8_t bits) {
  for (const auto& t : kTable)
    if (t.dlpack_code == code && t.itemsize * 8 == bits) return t.dtype;
  throw BadArgument("unsupported DLPack dtype (code " + std::to_string(code) + ", " + std::to_string(bits) +
                    " bits); jiasu arrays hold " + supported_names());
}

DType dtype_from_typestr(std::string_view typestr) {
  // Byte order: '|' (not applicable) and '<' (little) are what CUDA devices use; '=' is native.
  if (typestr.size() >= 2 && (typestr[0] == '<' || typestr[0] == '|' || typestr[0] == '=')) {
    for (const auto& t : kTable)
      if (t.typestr[0] && typestr.substr(1) == std::string_view(t.typestr + 1)) return t.dtype;
  }
  throw BadArgument("unsupported __cuda_array_interface__ typestr '" + std::string(typestr) +
                    "'; jiasu arrays hold " + supported_names());
}

}  // namespace jiasu
