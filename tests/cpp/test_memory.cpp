// Allocation's lifetime rules (core/runtime/memory.hpp): release() ends the arrays' use of the memory at
// once, and the memory itself goes back only when no hold is left. An owner whose deleter records when it
// runs stands for the memory (the same path returns pool and host memory).
#include <gtest/gtest.h>

#include <memory>

#include "array/array.hpp"
#include "runtime/memory.hpp"
#include "support/error.hpp"

namespace jiasu {
namespace {

// Memory at a made-up address whose owner sets *returned when it is dropped.
std::shared_ptr<Allocation> watched(bool* returned) {
  std::shared_ptr<void> owner(returned, [](bool* flag) { *flag = true; });
  return adopt_device_memory(0x1000, 64, kCpuDevice, std::move(owner));
}

TEST(Allocation, ReleaseWithoutHoldsReturnsTheMemoryAtOnce) {
  bool returned = false;
  auto memory = watched(&returned);
  EXPECT_EQ(memory->ptr(), 0x1000u);
  memory->release();
  EXPECT_TRUE(returned);
  EXPECT_TRUE(memory->released());
  EXPECT_THROW(memory->ptr(), InvalidArrayError);
  memory->release();  // a second call does nothing
}

TEST(Allocation, AHoldKeepsTheMemoryPastRelease) {
  bool returned = false;
  auto memory = watched(&returned);
  auto first = memory->hold(), second = memory->hold();
  memory->release();
  EXPECT_FALSE(returned);
  EXPECT_THROW(memory->ptr(), InvalidArrayError);  // the arrays are done with it at once
  EXPECT_THROW(memory->hold(), InvalidArrayError);  // and nothing new may hold it
  first.reset();
  EXPECT_FALSE(returned);
  second.reset();
  EXPECT_TRUE(returned);  // the last hold returns it, while the Allocation lives on
  EXPECT_TRUE(memory->released());
}

TEST(Allocation, HoldsDroppedBeforeReleaseLeaveReleaseInCharge) {
  bool returned = false;
  auto memory = watched(&returned);
  memory->hold().reset();
  EXPECT_FALSE(returned);
  memory->release();
  EXPECT_TRUE(returned);
}

TEST(Allocation, HeldWhileAliveStaysUntilTheAllocationIsGone) {
  bool returned = false;
  auto memory = watched(&returned);
  memory->hold_while_alive();
  memory->release();
  EXPECT_FALSE(returned);
  EXPECT_THROW(memory->ptr(), InvalidArrayError);
  memory.reset();
  EXPECT_TRUE(returned);
}

TEST(Allocation, NothingHoldsFreedMemory) {
  bool returned = false;
  auto memory = watched(&returned);
  memory->release();
  EXPECT_THROW(memory->hold_while_alive(), InvalidArrayError);
}

TEST(Allocation, AnArrayWithoutHoldsReturnsItsMemoryWhenItGoes) {
  bool returned = false;
  {
    Array a(DType::Float32, contiguous_layout({16}, 4), watched(&returned));
    Array view = a.index({IndexItem{}});  // [0]: a view sharing the memory
    EXPECT_FALSE(returned);
  }
  EXPECT_TRUE(returned);
}

TEST(Allocation, HostArraysFailOnceFreedAndCopiesHoldTheirMemory) {
  Array a = Array::empty({4}, DType::Int32, kCpuDevice);
  const int values[4] = {1, 2, 3, 4};
  a.copy_from_host(values);
  auto held = a.memory()->hold();  // an export: a NumPy view, say
  a.memory()->release();
  int out[4] = {};
  EXPECT_THROW(a.copy_to_host(out), InvalidArrayError);
  EXPECT_THROW(a.fill(values), InvalidArrayError);
  // The exported memory is still the array's, and still holds its values.
  const int* exported = static_cast<const int*>(held.get());
  EXPECT_EQ(exported[0], 1);
  EXPECT_EQ(exported[3], 4);
}

}  // namespace
}  // namespace jiasu
