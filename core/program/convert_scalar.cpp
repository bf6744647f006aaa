// A launch's scalar argument converted to its parameter's declared type, by the kernel language's own
// conversion (the runtime header's cast), so that a declared int32 takes a Python int as the kernel would.
#include "ops/cpu_types.hpp"  // first: the kernel runtime's host part

#include <cstring>

#include "program/launch.hpp"

namespace jiasu {

void convert_scalar(DType from, const void* in, DType to, void* out) {
  ops::dispatch_dtype(from, [&](auto f) {
    using From = ops::ctype_t<decltype(f)::value>;
    From value;
    std::memcpy(&value, in, sizeof value);
    ops::dispatch_dtype(to, [&](auto t) {
      using To = ops::ctype_t<decltype(t)::value>;
      const To result = cast<To>(value);
      std::memcpy(out, &result, sizeof result);
    });
  });
}

void LaunchArgument::convert_to(DType to) {
  unsigned char converted_bytes[sizeof bytes] = {};
  convert_scalar(dtype, bytes, to, converted_bytes);
  std::memcpy(bytes, converted_bytes, sizeof bytes);
  if (!converted) given = dtype;  // converted once only: from the value's own dtype
  converted = true;
  dtype = to;
  size = static_cast<uint8_t>(itemsize(to));
  weak = false;
  enumeration = nullptr;  // a number now
}

}  // namespace jiasu
