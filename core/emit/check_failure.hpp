// What a debug kernel's failed check (emit/runtime/debug_checks.h) raises, on either backend: the record's
// message (format_check_failure) after the kernel's name, as an IndexError or a ZeroDivisionError.
#pragma once

#include <string>

#include "emit/runtime/device_error.h"
#include "support/error.hpp"

namespace jiasu::emit {

// kind: a DeviceErrorKind other than error_raise.
[[noreturn]] inline void throw_check_failure(const std::string& kernel, int kind, const char* message) {
  const std::string text = "kernel '" + kernel + "' (debug): " + message;
  if (kind == error_zero_division) throw DivisionByZero(text);
  throw OutOfRange(text);
}

}  // namespace jiasu::emit
