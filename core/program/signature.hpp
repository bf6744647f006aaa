// The argument signature a Python kernel is specialised for, encoded as a short byte string so that the
// launch path can build it and look it up without allocating. One entry per argument:
//   array:  'A', dtype, ndim, contiguous (0/1)      scalar: 'S', dtype, weak (0/1)
#pragma once

#include <string>
#include <vector>

#include "frontend/ast.hpp"

namespace jiasu {

inline void append_array_key(std::string& key, DType dtype, int ndim, bool contiguous) {
  key += 'A';
  key += static_cast<char>(dtype);
  key += static_cast<char>(ndim);
  key += static_cast<char>(contiguous);
}

inline void append_scalar_key(std::string& key, DType dtype, bool weak) {
  key += 'S';
  key += static_cast<char>(dtype);
  key += static_cast<char>(weak);
}

// The types a key stands for (the slow path: first call of a signature).
std::vector<fe::Type> signature_types(const std::string& key);

// "(array(float32, 1d, C), int64)": for messages and introspection.
std::string describe_signature(const std::string& key);

}  // namespace jiasu
