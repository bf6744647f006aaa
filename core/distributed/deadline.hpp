// The deadlines of jiasu.distributed's waits (the store's, the communicators'): seconds from now, clamped so that a
// huge, infinite or NaN timeout (one a malformed store request can carry) cannot overflow the clock.
#pragma once

#include <chrono>

namespace jiasu::distributed {

using Clock = std::chrono::steady_clock;

inline Clock::time_point deadline_after(double seconds) {
  if (!(seconds < 1e8)) seconds = 1e8;  // about three years: far enough
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace jiasu::distributed
