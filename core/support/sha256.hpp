// SHA-256 (FIPS 180-4). Used for content-addressed cache keys and to verify cache entries.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace jiasu {

using Sha256Digest = std::array<uint8_t, 32>;

// Incremental hashing: feed any number of chunks, then finish(). finish() also resets the object,
// so it can hash another message.
class Sha256 {
 public:
  Sha256() { reset(); }
  void update(std::string_view data);
  Sha256Digest finish();

 private:
  void reset();
  void compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_;
  size_t buffered_ = 0;      // bytes waiting in buffer_
  uint64_t total_bytes_ = 0;  // message length so far
};

Sha256Digest sha256(std::string_view data);

// Lower-case hex, 64 characters.
std::string to_hex(const Sha256Digest& digest);

}  // namespace jiasu
