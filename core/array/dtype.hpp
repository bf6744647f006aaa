// Element types of jiasu arrays, with their NumPy, DLPack, CUDA Array Interface and buffer protocol spellings.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace jiasu {

enum class DType : uint8_t {
  Bool, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64,
  Float16, BFloat16, Float32, Float64, Complex64, Complex128,
};
constexpr int kDTypeCount = 15;

enum class DTypeKind : uint8_t { Bool, Signed, Unsigned, Float, Complex };

struct DTypeInfo {
  DType dtype;
  const char* name;      // NumPy's name: "float32", "bfloat16" (ml_dtypes), ...
  const char* c_type;    // CUDA C++ spelling: "float", "__nv_bfloat16", ...
  DTypeKind kind;
  uint8_t itemsize;
  uint8_t dlpack_code;   // DLPack's type code (0 int, 1 uint, 2 float, 4 bfloat, 5 complex, 6 bool)
  const char* typestr;   // __cuda_array_interface__ typestr, "" where none exists (bfloat16)
  const char* buffer_format;  // the buffer protocol's (PEP 3118) struct format, "" where none exists (bfloat16)
};

const DTypeInfo& info(DType dtype);
inline size_t itemsize(DType dtype) { return info(dtype).itemsize; }
// Throws BadArgument naming the supported types.
DType dtype_from_name(std::string_view name);
DType dtype_from_dlpack(uint8_t code, uint8_t bits);
DType dtype_from_typestr(std::string_view typestr);

}  // namespace jiasu
