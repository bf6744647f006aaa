#include <gtest/gtest.h>

#include <string>

#include "support/sha256.hpp"

namespace jiasu {
namespace {

std::string hex_of(std::string_view message) { return to_hex(sha256(message)); }

// Test vectors from NIST's SHA-256 examples (FIPS 180-4 appendix and the CAVP short messages).
TEST(Sha256, EmptyMessage) {
  EXPECT_EQ(hex_of(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256, Abc) {
  EXPECT_EQ(hex_of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, TwoBlockMessage448Bits) {
  EXPECT_EQ(hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, Message896Bits) {
  EXPECT_EQ(hex_of("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklm"
                   "nopqrlmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST(Sha256, OneMillionA) {
  EXPECT_EQ(hex_of(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Binary data with every byte value, including NULs (checked with Python's hashlib).
TEST(Sha256, BinaryBytes) {
  std::string bytes;
  for (int repeat = 0; repeat < 3; ++repeat)
    for (int b = 0; b < 256; ++b) bytes += char(b);
  EXPECT_EQ(hex_of(bytes), "f3a25aa93aa2fbba28d79260535bbd6a5eb0fc1c24a8b0f04e12b484c1dfe363");
}

// Chunk sizes that straddle the 64-byte block and the 56-byte padding boundary in every way.
TEST(Sha256, IncrementalMatchesOneShot) {
  std::string message;
  for (int i = 0; i < 1000; ++i) message += char('A' + i * 7 % 53);
  for (size_t length : {0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000}) {
    std::string_view part(message.data(), length);
    for (size_t chunk : {1, 3, 17, 63, 64, 65, 200}) {
      Sha256 hasher;
      for (size_t at = 0; at < part.size(); at += chunk) hasher.update(part.substr(at, chunk));
      EXPECT_EQ(hasher.finish(), sha256(part)) << "length " << length << ", chunk " << chunk;
    }
  }
}

TEST(Sha256, FinishResetsForTheNextMessage) {
  Sha256 hasher;
  hasher.update("first message");
  hasher.finish();
  hasher.update("abc");
  EXPECT_EQ(to_hex(hasher.finish()),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace jiasu
