// Streams and events on the CPU device (core/runtime/stream.hpp): work there is done when its call returns, so
// a stream has nothing to wait for and an event records the host clock. No driver is loaded by any of this.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "runtime/memory.hpp"
#include "runtime/stream.hpp"
#include "support/error.hpp"

namespace jiasu {
namespace {

TEST(CpuStream, IsAlwaysDoneAndWaitsForNothing) {
  Stream stream(kCpuDevice, false);
  EXPECT_EQ(stream.handle(), nullptr);
  EXPECT_TRUE(stream.done());
  stream.synchronize();
  Event event(kCpuDevice, true);
  event.record(stream.handle());
  stream.wait(event);
  EXPECT_TRUE(event.done());
}

TEST(CpuEvent, ElapsedTimeIsTheHostClocks) {
  Event start(kCpuDevice, true), end(kCpuDevice, true);
  EXPECT_THROW(start.elapsed_ms(end), BadValue);  // not recorded yet
  start.record(nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  end.record(nullptr);
  end.synchronize();
  const float ms = start.elapsed_ms(end);
  EXPECT_GE(ms, 19.0f);
  EXPECT_LT(ms, 5000.0f);
  Event untimed(kCpuDevice, false);
  untimed.record(nullptr);
  EXPECT_THROW(start.elapsed_ms(untimed), BadValue);
}

}  // namespace
}  // namespace jiasu
