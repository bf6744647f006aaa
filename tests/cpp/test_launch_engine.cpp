// The launch engine (program/launch.hpp) without Python: the array-parameter ABI the packer writes, the
// signature key, the repeat launch's record/check/pack logic (no driver: GPU arrays here are adopted
// addresses that are never dereferenced) and whole CPU launches of a Python kernel from C++.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "emit/runtime/array_abi.h"
#include "frontend_test_support.hpp"
#include "program/launch.hpp"
#include "program/signature.hpp"
#include "runtime/memory.hpp"
#include "support/error.hpp"
#include "test_support.hpp"

namespace jiasu {
namespace {

using testing::message_of;
using testing::python;

// An array "on GPU `device`" at a made-up address: the repeat logic only reads its metadata and pointer.
Array gpu_array(DType dtype, Shape shape, int device, cu::CUdeviceptr address) {
  const int64_t itemsize = static_cast<int64_t>(jiasu::itemsize(dtype));
  Layout layout = contiguous_layout(shape, itemsize);
  return Array(dtype, layout, adopt_device_memory(address, static_cast<size_t>(layout.size() * itemsize), device, nullptr));
}

// The transpose of a C-contiguous (rows, cols) array: strided, not C-contiguous.
Array transposed(const Array& a) {
  Layout t = a.layout();
  std::swap(t.shape[0], t.shape[1]);
  std::swap(t.strides[0], t.strides[1]);
  return a.view(t);
}

template <typename T>
T read_at(const unsigned char* bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes + offset, sizeof value);
  return value;
}

TEST(ArrayParamAbi, PackedBytesAreTheRuntimeStructs) {
  const Array c = gpu_array(DType::Float32, {3, 5}, 0, 0x10000);
  ASSERT_TRUE(c.c_contiguous());
  unsigned char bytes[8 + 16 * kMaxKernelArrayRank] = {};
  ASSERT_EQ(array_param_size(c), sizeof(ArrayC<float, 2>));
  pack_array(c, bytes);
  ArrayC<float, 2> as_c;
  std::memcpy(&as_c, bytes, sizeof as_c);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(as_c.data), 0x10000u);
  EXPECT_EQ(as_c.shape[0], 3);
  EXPECT_EQ(as_c.shape[1], 5);

  const Array t = transposed(c);
  ASSERT_FALSE(t.c_contiguous());
  ASSERT_EQ(array_param_size(t), sizeof(ArrayA<float, 2>));
  pack_array(t, bytes);
  ArrayA<float, 2> as_a;
  std::memcpy(&as_a, bytes, sizeof as_a);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(as_a.data), 0x10000u);
  EXPECT_EQ(as_a.shape[0], 5);
  EXPECT_EQ(as_a.shape[1], 3);
  EXPECT_EQ(as_a.strides[0], 4);   // bytes
  EXPECT_EQ(as_a.strides[1], 20);

  const Array scalar_view = gpu_array(DType::Int64, {}, 0, 0x20000);
  EXPECT_EQ(array_param_size(scalar_view), sizeof(ArrayC<long long, 0>));
}

TEST(LaunchKey, EntriesAreTheSignatureFormat) {
  const Array a = gpu_array(DType::Float32, {4, 4}, 0, 0x10000);
  std::string key;
  append_argument_key(key, LaunchArgument::of(a));
  append_argument_key(key, LaunchArgument::of(transposed(a)));  // a temporary: the key is built at once
  append_argument_key(key, LaunchArgument::scalar<int64_t>(7, DType::Int64, true));
  append_argument_key(key, LaunchArgument::scalar<float>(1.5f, DType::Float32));
  std::string expected;
  append_array_key(expected, DType::Float32, 2, true);
  append_array_key(expected, DType::Float32, 2, false);
  append_scalar_key(expected, DType::Int64, true);
  append_scalar_key(expected, DType::Float32, false);
  EXPECT_EQ(key, expected);
  EXPECT_EQ(describe_signature(key), "(array(float32, 2d, C), array(float32, 2d, A), int, float32)");

  const Array nine = gpu_array(DType::Int8, Shape(9, 1), 0, 0x10000);
  std::string too_deep;
  EXPECT_EQ(message_of<BadArgument>([&] { append_argument_key(too_deep, LaunchArgument::of(nine)); }),
            "kernel arrays have at most 8 dimensions");
}

// The layout cuFuncGetParamInfo would report for (ArrayC<float, 1>, ArrayA<double, 2>, int64, double, int32).
ParamLayout five_params() {
  ParamLayout layout;
  layout.kernel_name = "k";
  layout.known = true;
  layout.params = {{0, 16}, {16, 40}, {56, 8}, {64, 8}, {72, 4}};
  return layout;
}

constexpr uint8_t kInt = 1, kFloat = 2, kNumpy = 3;  // a caller's scalar kinds
const int numpy_int32_type = 0;                      // stands for a type object

struct Packed {
  Array x = gpu_array(DType::Float32, {100}, 0, 0x100000);
  Array y = transposed(gpu_array(DType::Float64, {6, 7}, 0, 0x200000));
  std::vector<LaunchArgument> arguments;
  RepeatLaunch repeat;
  ParamLayout layout = five_params();

  Packed() {
    arguments = {LaunchArgument::of(x), LaunchArgument::of(y), LaunchArgument::scalar<int64_t>(-3, DType::Int64, true),
                 LaunchArgument::scalar<double>(0.5, DType::Float64, true),
                 LaunchArgument::scalar<int32_t>(9, DType::Int32)};
    arguments[2].scalar_kind = kInt;
    arguments[3].scalar_kind = kFloat;
    arguments[4].scalar_kind = kNumpy;
    arguments[4].scalar_type = &numpy_int32_type;
    repeat.pack(layout, arguments.data(), arguments.size(), 0);
  }
  const unsigned char* bytes() { return repeat.args().buffer(); }
};

TEST(RepeatLaunch, FullPathPacksAtDeclaredOffsetsAndRecordsEachArgument) {
  Packed p;
  EXPECT_TRUE(p.repeat.repeatable());
  EXPECT_TRUE(p.repeat.has_array());
  EXPECT_TRUE(p.repeat.matches(0, 5));
  EXPECT_FALSE(p.repeat.matches(1, 5));       // another device
  EXPECT_FALSE(p.repeat.matches(0, 4));       // another count
  EXPECT_FALSE(p.repeat.matches(kCpuDevice, 5));
  const uint32_t offsets[] = {0, 16, 56, 64, 72};
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(p.repeat.record(i).offset, offsets[i]) << i;
  EXPECT_EQ(p.repeat.record(0).kind, RepeatLaunch::Record::Array);
  EXPECT_EQ(p.repeat.record(4).kind, RepeatLaunch::Record::Scalar);
  EXPECT_EQ(read_at<uint64_t>(p.bytes(), 0), 0x100000u);
  EXPECT_EQ(read_at<int64_t>(p.bytes(), 8), 100);
  EXPECT_EQ(read_at<uint64_t>(p.bytes(), 16), 0x200000u);
  EXPECT_EQ(read_at<int64_t>(p.bytes(), 24), 7);   // shape
  EXPECT_EQ(read_at<int64_t>(p.bytes(), 32), 6);
  EXPECT_EQ(read_at<int64_t>(p.bytes(), 40), 8);   // strides
  EXPECT_EQ(read_at<int64_t>(p.bytes(), 48), 56);
  EXPECT_EQ(read_at<int64_t>(p.bytes(), 56), -3);
  EXPECT_EQ(read_at<double>(p.bytes(), 64), 0.5);
  EXPECT_EQ(read_at<int32_t>(p.bytes(), 72), 9);
}

TEST(RepeatLaunch, RepeatWritesTheNewBytesAtTheRecordedOffsets) {
  Packed p;
  const Array x2 = gpu_array(DType::Float32, {250}, 0, 0x300000);
  const Array y2 = transposed(gpu_array(DType::Float64, {2, 3}, 0, 0x400000));
  EXPECT_TRUE(p.repeat.put_array(p.repeat.record(0), x2, 0));
  EXPECT_TRUE(p.repeat.put_array(p.repeat.record(1), y2, 0));
  const int64_t i = 41;
  const double f = -2.25;
  const int32_t n = 12345;
  EXPECT_TRUE(p.repeat.put_scalar(p.repeat.record(2), kInt, nullptr, &i, 8));
  EXPECT_TRUE(p.repeat.put_scalar(p.repeat.record(3), kFloat, nullptr, &f, 8));
  EXPECT_TRUE(p.repeat.put_scalar(p.repeat.record(4), kNumpy, &numpy_int32_type, &n, 4));
  EXPECT_EQ(read_at<uint64_t>(p.bytes(), 0), 0x300000u);
  EXPECT_EQ(read_at<int64_t>(p.bytes(), 8), 250);
  EXPECT_EQ(read_at<uint64_t>(p.bytes(), 16), 0x400000u);
  EXPECT_EQ(read_at<int64_t>(p.bytes(), 24), 3);
  EXPECT_EQ(read_at<int64_t>(p.bytes(), 32), 2);
  EXPECT_EQ(read_at<int64_t>(p.bytes(), 40), 8);
  EXPECT_EQ(read_at<int64_t>(p.bytes(), 48), 24);
  EXPECT_EQ(read_at<int64_t>(p.bytes(), 56), 41);
  EXPECT_EQ(read_at<double>(p.bytes(), 64), -2.25);
  EXPECT_EQ(read_at<int32_t>(p.bytes(), 72), 12345);
  EXPECT_EQ(p.repeat.args().size(), 76u);
}

TEST(RepeatLaunch, ADifferentKindOfArgumentIsRefusedAndWritesNothing) {
  Packed p;
  const std::vector<unsigned char> before(p.bytes(), p.bytes() + 76);
  const auto& x = p.repeat.record(0);
  const auto& y = p.repeat.record(1);
  EXPECT_FALSE(p.repeat.put_array(x, gpu_array(DType::Float64, {100}, 0, 0x900000), 0));      // dtype
  EXPECT_FALSE(p.repeat.put_array(x, gpu_array(DType::Float32, {10, 10}, 0, 0x900000), 0));   // rank
  EXPECT_FALSE(p.repeat.put_array(y, gpu_array(DType::Float64, {7, 6}, 0, 0x900000), 0));     // contiguity
  EXPECT_FALSE(p.repeat.put_array(x, gpu_array(DType::Float32, {100}, 1, 0x900000), 0));      // device
  EXPECT_FALSE(p.repeat.put_array(p.repeat.record(2), p.x, 0));                                // an array for a scalar
  const int64_t i = 1;
  const double f = 1.0;
  const int16_t narrow = 1;
  const int other_type = 0;
  EXPECT_FALSE(p.repeat.put_scalar(p.repeat.record(2), kFloat, nullptr, &f, 8));   // int → float
  EXPECT_FALSE(p.repeat.put_scalar(p.repeat.record(3), kInt, nullptr, &i, 8));     // float → int
  EXPECT_FALSE(p.repeat.put_scalar(p.repeat.record(4), kNumpy, &other_type, &i, 4));  // another NumPy type
  EXPECT_FALSE(p.repeat.put_scalar(p.repeat.record(4), kNumpy, &numpy_int32_type, &narrow, 2));  // size
  EXPECT_FALSE(p.repeat.put_scalar(x, kInt, nullptr, &i, 8));                      // a scalar for an array
  EXPECT_EQ(std::vector<unsigned char>(p.bytes(), p.bytes() + 76), before);
}

// Numba's signature types (cuda.jit("void(int32, float32, ...)")): a scalar takes its parameter's declared dtype.
TEST(DeclaredScalarTypes, ConvertAsTheKernelLanguageDoes) {
  LaunchArgument big = LaunchArgument::scalar<int64_t>((int64_t{1} << 32) + 7, DType::Int64, true);
  big.convert_to(DType::Int32);  // wraps, as the kernel's int32(x) does
  EXPECT_EQ(big.dtype, DType::Int32);
  EXPECT_EQ(big.size, 4);
  EXPECT_FALSE(big.weak);
  EXPECT_TRUE(big.converted);
  EXPECT_EQ(big.given, DType::Int64);
  EXPECT_EQ(read_at<int32_t>(big.bytes, 0), 7);

  LaunchArgument negative = LaunchArgument::scalar<double>(-2.75, DType::Float64, true);
  negative.convert_to(DType::Int16);  // truncates toward zero
  EXPECT_EQ(read_at<int16_t>(negative.bytes, 0), -2);
  EXPECT_EQ(negative.size, 2);

  LaunchArgument third = LaunchArgument::scalar<double>(1.0 / 3.0, DType::Float64, true);
  third.convert_to(DType::Float32);
  EXPECT_EQ(read_at<float>(third.bytes, 0), static_cast<float>(1.0 / 3.0));

  LaunchArgument flag = LaunchArgument::scalar<uint8_t>(1, DType::Bool);
  flag.convert_to(DType::Float64);
  EXPECT_EQ(read_at<double>(flag.bytes, 0), 1.0);

  LaunchArgument whole = LaunchArgument::scalar<int64_t>(-3, DType::Int64, true);
  whole.convert_to(DType::Complex64);
  EXPECT_EQ(read_at<float>(whole.bytes, 0), -3.0f);
  EXPECT_EQ(read_at<float>(whole.bytes, 4), 0.0f);
  EXPECT_EQ(whole.size, 8);

  whole.convert_to(DType::Int8);  // a second conversion keeps the value's own dtype as `given`
  EXPECT_EQ(whole.given, DType::Int64);
  EXPECT_EQ(read_at<int8_t>(whole.bytes, 0), -3);

  // Integers wrap into an unsigned type. A float out of the integer type's range converts as the kernel's own
  // cast does, which C++ leaves undefined (the GPU saturates), so no such case is asserted.
  LaunchArgument minus_one = LaunchArgument::scalar<int64_t>(-1, DType::Int64, true);
  minus_one.convert_to(DType::UInt8);
  EXPECT_EQ(read_at<uint8_t>(minus_one.bytes, 0), 255);
  LaunchArgument fraction = LaunchArgument::scalar<double>(255.75, DType::Float64, true);
  fraction.convert_to(DType::UInt8);  // in range once truncated
  EXPECT_EQ(read_at<uint8_t>(fraction.bytes, 0), 255);
}

TEST(DeclaredScalarTypes, RepeatLaunchConvertsTheNewValue) {
  Packed p;
  p.arguments[2].convert_to(DType::Int32);    // a Python int for an int32 parameter
  p.arguments[3].convert_to(DType::Float32);  // a Python float for a float32 parameter
  p.layout.params[2] = {56, 4};
  p.layout.params[3] = {64, 4};
  p.repeat.pack(p.layout, p.arguments.data(), p.arguments.size(), 0);
  EXPECT_EQ(read_at<int32_t>(p.bytes(), 56), -3);
  EXPECT_EQ(read_at<float>(p.bytes(), 64), 0.5f);
  const int64_t i = (int64_t{5} << 32) | 12;
  const double f = 0.1;
  EXPECT_TRUE(p.repeat.put_scalar(p.repeat.record(2), kInt, nullptr, &i, 8));
  EXPECT_TRUE(p.repeat.put_scalar(p.repeat.record(3), kFloat, nullptr, &f, 8));
  EXPECT_EQ(read_at<int32_t>(p.bytes(), 56), 12);
  EXPECT_EQ(read_at<float>(p.bytes(), 64), 0.1f);
  const int32_t narrow = 3;  // a value of another size than the one converted before: the full path
  EXPECT_FALSE(p.repeat.put_scalar(p.repeat.record(2), kInt, nullptr, &narrow, 4));
  EXPECT_FALSE(p.repeat.put_scalar(p.repeat.record(3), kInt, nullptr, &i, 8));  // another kind
}

TEST(RepeatLaunch, ArgumentsMadeForOneLaunchCannotBeRepeated) {
  Packed p;
  p.arguments[1].repeatable = false;  // e.g. a staged NumPy copy
  p.repeat.pack(p.layout, p.arguments.data(), p.arguments.size(), 0);
  EXPECT_FALSE(p.repeat.repeatable());
  EXPECT_FALSE(p.repeat.matches(0, 5));
  EXPECT_EQ(p.repeat.record(1).kind, RepeatLaunch::Record::None);

  p.arguments[1].repeatable = true;
  p.arguments[2].scalar_kind = 0;  // a scalar the caller cannot convert again cheaply
  p.repeat.pack(p.layout, p.arguments.data(), p.arguments.size(), 0);
  EXPECT_FALSE(p.repeat.matches(0, 5));

  // A pack that fails (a wrong argument count) leaves nothing to repeat.
  p.arguments[2].scalar_kind = kInt;
  EXPECT_THROW(p.repeat.pack(p.layout, p.arguments.data(), 4, 0), Error);
  EXPECT_FALSE(p.repeat.matches(0, 4));
  EXPECT_FALSE(p.repeat.matches(0, 5));
}

TEST(ForallGrid, CoversTheTasksWithinCudasGrid) {
  EXPECT_EQ(forall_grid(0, 256).x, 1u);
  EXPECT_EQ(forall_grid(1000, 256).x, 4u);
  EXPECT_EQ(forall_grid(1024, 256).x, 4u);
  const std::string message = message_of<BadValue>([] { forall_grid(int64_t(1) << 62, 64); });
  EXPECT_NE(message.find("more than a CUDA grid has (2147483647)"), std::string::npos) << message;
}

const char* const kScaleAdd =
    "@jiasu.kernel\n"
    "def scale_add(x, y, out, a):\n"
    "    i = jiasu.grid(1)\n"
    "    if i < out.size:\n"
    "        out[i] = a * x[i] + y[i]\n";

template <typename T>
T* host_data(const Array& a) {
  return reinterpret_cast<T*>(a.data());
}

// What the array operations do: launch a Python kernel's specialisation from C++, on the CPU backend.
TEST(KernelLauncher, LaunchesAPythonKernelFromCppOnTheCpu) {
  PythonKernel kernel(python(kScaleAdd));
  KernelLauncher launcher(kernel);
  const int64_t n = 1000;
  const Array x = Array::empty({n}, DType::Float32, kCpuDevice), out = Array::empty({n}, DType::Float32, kCpuDevice);
  const Array y2d = Array::empty({2, n}, DType::Float32, kCpuDevice);
  for (int64_t i = 0; i < n; ++i) {
    host_data<float>(x)[i] = static_cast<float>(i);
    host_data<float>(y2d)[2 * i] = 0.5f;          // y = y2d[:, 0] ... as a strided column of the transpose
    host_data<float>(y2d)[2 * i + 1] = -1.0f;
  }
  // y: every other element of y2d viewed as (n, 2) and taken at column 0: a 1-d strided view.
  Layout column = contiguous_layout({n}, 4);
  column.strides = {8};
  const Array y = y2d.view(column);
  ASSERT_FALSE(y.c_contiguous());

  LaunchConfig config;
  config.grid = {static_cast<unsigned>((n + 127) / 128), 1, 1};
  config.block = {128, 1, 1};
  std::vector<LaunchArgument> args = {LaunchArgument::of(x), LaunchArgument::of(y), LaunchArgument::of(out),
                                      LaunchArgument::scalar<double>(3.0, DType::Float64, true)};
  Specialization& spec = launcher.launch(config, args.data(), args.size(), kCpuDevice);
  EXPECT_EQ(describe_signature(spec.key()), "(array(float32, 1d, C), array(float32, 1d, A), array(float32, 1d, C), float)");
  EXPECT_EQ(spec.written(), (std::vector<bool>{false, false, true, false}));
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(host_data<float>(out)[i], 3.0f * static_cast<float>(i) + 0.5f) << i;

  // Again through forall, with another scale: the same specialisation.
  config.forall = n;
  args[3] = LaunchArgument::scalar<double>(-1.0, DType::Float64, true);
  EXPECT_EQ(&launcher.launch(config, args.data(), args.size(), kCpuDevice), &spec);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(host_data<float>(out)[i], -static_cast<float>(i) + 0.5f) << i;
  EXPECT_EQ(kernel.specializations().size(), 1u);
  // CPU launches record nothing for the GPU's repeat launch.
  EXPECT_EQ(launcher.repeat_kernel(kCpuDevice, args.size()), nullptr);
}

TEST(KernelLauncher, RefusesAReadOnlyOutput) {
  PythonKernel kernel(python(kScaleAdd));
  KernelLauncher launcher(kernel);
  const Array x = Array::empty({4}, DType::Float32, kCpuDevice);
  std::vector<LaunchArgument> args = {LaunchArgument::of(x), LaunchArgument::of(x), LaunchArgument::of(x),
                                      LaunchArgument::scalar<double>(1.0, DType::Float64, true)};
  args[0].read_only = true;  // read only, and only read: allowed
  LaunchConfig config;
  config.block = {4, 1, 1};
  EXPECT_NO_THROW(launcher.launch(config, args.data(), args.size(), kCpuDevice));
  args[2].read_only = true;
  EXPECT_EQ(message_of<BadValue>([&] { launcher.launch(config, args.data(), args.size(), kCpuDevice); }),
            "argument 2 is a read-only NumPy array, and results would be written into it");
}

TEST(KernelLauncher, HostLaunchInTwoStepsHoldsTheArrays) {
  PythonKernel kernel(python(kScaleAdd));
  KernelLauncher launcher(kernel);
  const int64_t n = 64;
  Array x = Array::empty({n}, DType::Float32, kCpuDevice), out = Array::empty({n}, DType::Float32, kCpuDevice);
  for (int64_t i = 0; i < n; ++i) host_data<float>(x)[i] = static_cast<float>(i);
  std::vector<LaunchArgument> args = {LaunchArgument::of(x), LaunchArgument::of(x), LaunchArgument::of(out),
                                      LaunchArgument::scalar<double>(2.0, DType::Float64, true)};
  std::string key;
  for (const auto& a : args) append_argument_key(key, a);
  HostParams params;
  params.hold(x);
  params.hold(out);
  Specialization& spec = launcher.prepare_host(args.data(), args.size(), key, params);
  ASSERT_EQ(params.pointers.size(), 4u);
  EXPECT_EQ(read_at<uint64_t>(static_cast<const unsigned char*>(params.pointers[2]), 0), out.data());
  out.memory()->release();  // another thread's free() while the launch runs: the hold keeps the memory
  LaunchConfig config;
  config.grid = {1, 1, 1};
  config.block = {static_cast<unsigned>(n), 1, 1};
  KernelLauncher::run_host(spec, config, params);
  const float* result = read_at<const float*>(static_cast<const unsigned char*>(params.pointers[2]), 0);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(result[i], 3.0f * static_cast<float>(i)) << i;
  params.clear();
  HostParams again;
  EXPECT_THROW(again.hold(out), InvalidArrayError);  // a freed array cannot be launched
}

}  // namespace
}  // namespace jiasu
