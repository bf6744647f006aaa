// Small POSIX file helpers of the toolchain, which report errno so that a message can say what
// failed (a full disk, a missing folder) instead of a later, misleading symptom.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

namespace jiasu {

// Writes all of data to fd (retrying short writes and EINTR); false with errno set on failure.
bool write_all(int fd, std::string_view data);

// Creates path (which must not exist; a symbolic link there is not followed) with mode and writes
// bytes into it. 0 on success, else the errno of what failed; a partly written file is removed.
int write_new_file(const std::string& path, std::string_view bytes, mode_t mode);

// The contents of the regular file at path. 0 on success, else the errno of what failed.
int read_regular_file(const std::string& path, std::string& out);

}  // namespace jiasu
