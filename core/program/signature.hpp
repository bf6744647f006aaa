// The argument signature a Python kernel is specialised for, encoded as a short byte string so that the
// launch path can build it and look it up without allocating. One entry per argument:
//   array:  'A', dtype, ndim, contiguous (0/1)      scalar: 'S', dtype, weak (0/1)
//   tuple:  'T', count, then each item's entry (scalars and tuples); a namedtuple: 'N', count, then each item's
//           name (its length, its bytes) and entry
//   enum member (an int64): 'E', int-valued (0/1), the class's identity (8 bytes), its name (length, bytes)
//   record array: 'R', ndim, contiguous (0/1), then its layout     one record (by reference): 'r', then its layout
//           layout: itemsize (8 bytes), field count, then per field its name (length, bytes), dtype, offset
//           (8 bytes), subarray rank and dimensions (8 bytes each)
#pragma once

#include <string>
#include <vector>

#include "frontend/ast.hpp"

namespace jiasu {

// The entries, written at `out`; they return their length.
constexpr size_t kArrayKeyLength = 4, kScalarKeyLength = 3;
inline size_t array_key(char* out, DType dtype, int ndim, bool contiguous) {
  out[0] = 'A', out[1] = static_cast<char>(dtype), out[2] = static_cast<char>(ndim), out[3] = static_cast<char>(contiguous);
  return kArrayKeyLength;
}
inline size_t scalar_key(char* out, DType dtype, bool weak) {
  out[0] = 'S', out[1] = static_cast<char>(dtype), out[2] = static_cast<char>(weak);
  return kScalarKeyLength;
}

inline void append_array_key(std::string& key, DType dtype, int ndim, bool contiguous) {
  char entry[kArrayKeyLength];
  key.append(entry, array_key(entry, dtype, ndim, contiguous));
}
inline void append_scalar_key(std::string& key, DType dtype, bool weak) {
  char entry[kScalarKeyLength];
  key.append(entry, scalar_key(entry, dtype, weak));
}

void append_enum_key(std::string& key, const fe::EnumClass& enumeration);

// ndim < 0: one record, passed by reference (a NumPy record scalar); else an array of records.
void append_record_key(std::string& key, const fe::RecordLayout& layout, int ndim, bool contiguous);

// The types a key stands for (the slow path: first call of a signature).
std::vector<fe::Type> signature_types(const std::string& key);

// "(array(float32, 1d, C), int64)": for messages and introspection.
std::string describe_signature(const std::string& key);

}  // namespace jiasu
