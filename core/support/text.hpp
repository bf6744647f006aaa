// printf into a std::string, for the reports the core writes (profiles, the advisor, access analysis).
#pragma once

#include <string>

namespace jiasu {

std::string format(const char* pattern, ...) __attribute__((format(printf, 1, 2)));

}  // namespace jiasu
