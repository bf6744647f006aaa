// Packing of kernel arguments (LaunchArgs in core/runtime/module.hpp). No GPU: the parameter layout
// is written by hand, as cuFuncGetParamInfo would report it.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "runtime/module.hpp"
#include "support/error.hpp"
#include "test_support.hpp"

namespace jiasu {
namespace {

using testing::message_of;

// Four parameters at offsets {0, 8, 16, 20} with sizes {8, 8, 4, 8} (e.g. a pointer, a double, an
// int and an 8-byte struct of two ints, which needs only 4-byte alignment).
ParamLayout known_layout() {
  ParamLayout layout;
  layout.kernel_name = "k";
  layout.known = true;
  layout.params = {{0, 8}, {8, 8}, {16, 4}, {20, 8}};
  return layout;
}

ParamLayout unknown_layout() {
  ParamLayout layout;
  layout.kernel_name = "u";
  layout.known = false;
  return layout;
}

template <typename T>
T read_at(const LaunchArgs& args, size_t offset) {
  T value;
  std::memcpy(&value, static_cast<const unsigned char*>(args.data()) + offset, sizeof value);
  return value;
}

template <typename T>
void add(LaunchArgs& args, T value, const char* what) {
  args.add(&value, sizeof value, alignof(T), what);
}

TEST(LaunchArgsKnown, BytesLandAtDeclaredOffsets) {
  ParamLayout layout = known_layout();
  LaunchArgs args;
  args.begin(layout);
  EXPECT_EQ(args.count(), 0u);
  EXPECT_EQ(args.next_size(), 8u);
  add<uint64_t>(args, 0x1111222233334444ull, "pointer");
  EXPECT_EQ(args.next_size(), 8u);
  add<double>(args, 2.5, "float");
  EXPECT_EQ(args.next_size(), 4u);
  add<int32_t>(args, -7, "int");
  EXPECT_EQ(args.next_size(), 8u);
  add<int64_t>(args, 0x0102030405060708ll, "int");
  EXPECT_EQ(args.next_size(), 0u);  // all filled
  EXPECT_EQ(args.count(), 4u);
  EXPECT_NO_THROW(args.finish());

  EXPECT_EQ(args.size(), 20u + 8u);  // last.offset + last.size
  EXPECT_EQ(read_at<uint64_t>(args, 0), 0x1111222233334444ull);
  EXPECT_EQ(read_at<double>(args, 8), 2.5);
  EXPECT_EQ(read_at<int32_t>(args, 16), -7);
  EXPECT_EQ(read_at<int64_t>(args, 20), 0x0102030405060708ll);

  // The same bytes as cuLaunchKernel's kernelParams: one pointer per parameter, at its offset.
  void** pointers = args.param_pointers();
  ASSERT_NE(pointers, nullptr);
  const auto* base = static_cast<const unsigned char*>(args.data());
  for (size_t i = 0; i < layout.params.size(); ++i)
    EXPECT_EQ(static_cast<const unsigned char*>(pointers[i]), base + layout.params[i].offset) << "parameter " << i;
}

TEST(LaunchArgsKnown, SizeMismatchNamesArgumentAndBothSizes) {
  ParamLayout layout = known_layout();
  LaunchArgs args;
  args.begin(layout);
  add<uint64_t>(args, 1, "pointer");
  add<double>(args, 1.0, "float");
  std::string m = message_of<BadArgument>([&] { add<double>(args, 3.0, "numpy.float64"); });
  EXPECT_EQ(m, "argument 2 of kernel 'k' is numpy.float64 (8 bytes) but the kernel's parameter 2 takes 4 bytes");
  // The failed argument was not counted.
  EXPECT_EQ(args.count(), 2u);
  EXPECT_EQ(args.next_size(), 4u);
}

TEST(LaunchArgsKnown, TooManyArguments) {
  ParamLayout layout = known_layout();
  LaunchArgs args;
  args.begin(layout);
  add<uint64_t>(args, 1, "a");
  add<double>(args, 1.0, "b");
  add<int32_t>(args, 1, "c");
  add<int64_t>(args, 1, "d");
  std::string m = message_of<BadArgument>([&] { add<int32_t>(args, 5, "int"); });
  EXPECT_EQ(m, "kernel 'k' takes 4 arguments but more were given");
}

TEST(LaunchArgsKnown, TooFewArguments) {
  ParamLayout layout = known_layout();
  LaunchArgs args;
  args.begin(layout);
  add<uint64_t>(args, 1, "a");
  add<double>(args, 1.0, "b");
  add<int32_t>(args, 1, "c");
  std::string m = message_of<BadArgument>([&] { args.finish(); });
  EXPECT_EQ(m, "kernel 'k' takes 4 arguments but 3 were given");
  args.begin(layout);
  m = message_of<BadArgument>([&] { args.finish(); });
  EXPECT_EQ(m, "kernel 'k' takes 4 arguments but 0 were given");
}

TEST(LaunchArgsKnown, SingularArgument) {
  ParamLayout layout;
  layout.kernel_name = "one";
  layout.known = true;
  layout.params = {{0, 4}};
  LaunchArgs args;
  args.begin(layout);
  add<int32_t>(args, 1, "int");
  std::string m = message_of<BadArgument>([&] { add<int32_t>(args, 2, "int"); });
  EXPECT_EQ(m, "kernel 'one' takes 1 argument but more were given");
}

TEST(LaunchArgsKnown, NoParameters) {
  ParamLayout layout;
  layout.kernel_name = "empty";
  layout.known = true;
  LaunchArgs args;
  args.begin(layout);
  EXPECT_EQ(args.next_size(), 0u);
  EXPECT_NO_THROW(args.finish());
  EXPECT_EQ(args.size(), 0u);
  std::string m = message_of<BadArgument>([&] { add<int32_t>(args, 1, "int"); });
  EXPECT_EQ(m, "kernel 'empty' takes 0 arguments but more were given");
}

TEST(LaunchArgsKnown, BeginResetsForTheNextLaunch) {
  ParamLayout layout = known_layout();
  LaunchArgs args;
  for (int launch = 0; launch < 3; ++launch) {
    args.begin(layout);
    EXPECT_EQ(args.count(), 0u);
    EXPECT_EQ(args.next_size(), 8u);
    add<uint64_t>(args, 100 + launch, "a");
    add<double>(args, launch * 0.5, "b");
    add<int32_t>(args, launch, "c");
    add<int64_t>(args, -launch, "d");
    args.finish();
    EXPECT_EQ(args.size(), 28u);
    EXPECT_EQ(read_at<uint64_t>(args, 0), uint64_t(100 + launch));
    EXPECT_EQ(read_at<double>(args, 8), launch * 0.5);
    EXPECT_EQ(read_at<int32_t>(args, 16), launch);
    EXPECT_EQ(read_at<int64_t>(args, 20), -launch);
  }
}

TEST(LaunchArgsKnown, SwitchingLayouts) {
  ParamLayout big = known_layout();
  ParamLayout small;
  small.kernel_name = "s";
  small.known = true;
  small.params = {{0, 4}, {4, 4}};
  LaunchArgs args;
  args.begin(big);
  add<uint64_t>(args, 1, "a");
  args.begin(small);
  EXPECT_EQ(args.count(), 0u);
  EXPECT_EQ(args.next_size(), 4u);
  add<int32_t>(args, 11, "int");
  add<int32_t>(args, 22, "int");
  args.finish();
  EXPECT_EQ(args.size(), 8u);
  EXPECT_EQ(read_at<int32_t>(args, 0), 11);
  EXPECT_EQ(read_at<int32_t>(args, 4), 22);
  // And back to a larger one: the buffer grows to fit.
  args.begin(big);
  add<uint64_t>(args, 5, "a");
  add<double>(args, 6.0, "b");
  add<int32_t>(args, 7, "c");
  add<int64_t>(args, 8, "d");
  EXPECT_EQ(args.size(), 28u);
  EXPECT_EQ(read_at<int64_t>(args, 20), 8);
}

TEST(LaunchArgsUnknown, NaturalAlignment) {
  ParamLayout layout = unknown_layout();
  LaunchArgs args;
  args.begin(layout);
  EXPECT_EQ(args.next_size(), 0u);
  add<int32_t>(args, 42, "int");
  EXPECT_EQ(args.size(), 4u);
  add<double>(args, 1.25, "float");
  EXPECT_EQ(args.size(), 16u);  // the double goes to offset 8
  add<int8_t>(args, -3, "int8");
  EXPECT_EQ(args.size(), 17u);
  add<int16_t>(args, 300, "int16");
  EXPECT_EQ(args.size(), 20u);  // int16 at offset 18
  add<uint64_t>(args, 77, "pointer");
  EXPECT_EQ(args.size(), 32u);  // at offset 24
  EXPECT_EQ(args.next_size(), 0u);
  EXPECT_EQ(args.count(), 5u);
  EXPECT_NO_THROW(args.finish());  // nothing to check against

  EXPECT_EQ(read_at<int32_t>(args, 0), 42);
  EXPECT_EQ(read_at<double>(args, 8), 1.25);
  EXPECT_EQ(read_at<int8_t>(args, 16), -3);
  EXPECT_EQ(read_at<int16_t>(args, 18), 300);
  EXPECT_EQ(read_at<uint64_t>(args, 24), 77u);
  EXPECT_EQ(args.param_pointers(), nullptr);  // the packed buffer is launched as it is
}

TEST(LaunchArgsUnknown, AnySizeIsAccepted) {
  ParamLayout layout = unknown_layout();
  LaunchArgs args;
  args.begin(layout);
  struct Big {
    double v[5];
  } big = {{1, 2, 3, 4, 5}};
  add<char>(args, 'x', "char");
  args.add(&big, sizeof big, alignof(Big), "struct");
  EXPECT_EQ(args.size(), 8u + sizeof big);
  EXPECT_EQ(read_at<char>(args, 0), 'x');
  EXPECT_EQ(read_at<double>(args, 8 + 4 * 8), 5.0);
}

TEST(LaunchArgsUnknown, BufferReusedAcrossBegin) {
  ParamLayout layout = unknown_layout();
  LaunchArgs args;
  args.begin(layout);
  for (int i = 0; i < 8; ++i) add<double>(args, i + 0.5, "float");
  EXPECT_EQ(args.size(), 64u);
  const void* first = args.data();

  args.begin(layout);
  EXPECT_EQ(args.size(), 0u);
  EXPECT_EQ(args.count(), 0u);
  add<int32_t>(args, 9, "int");
  add<double>(args, 10.5, "float");
  EXPECT_EQ(args.size(), 16u);
  EXPECT_EQ(args.data(), first) << "a smaller launch should reuse the buffer";
  EXPECT_EQ(read_at<int32_t>(args, 0), 9);
  EXPECT_EQ(read_at<double>(args, 8), 10.5);
}

TEST(LaunchArgsUnknown, GrowsPastInitialCapacity) {
  ParamLayout layout = unknown_layout();
  LaunchArgs args;
  args.begin(layout);
  for (int i = 0; i < 1000; ++i) add<int32_t>(args, i * 3, "int");
  EXPECT_EQ(args.size(), 4000u);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(read_at<int32_t>(args, 4 * i), i * 3) << i;
}

}  // namespace
}  // namespace jiasu
