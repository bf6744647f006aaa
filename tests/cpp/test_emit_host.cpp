// The host emitter: Python kernels are checked, emitted as host C++, compiled with the system C++
// compiler into a shared library, loaded with dlopen and run on host arrays; results are checked exactly.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "frontend_test_support.hpp"
#include "emit/emit.hpp"
#include "support/error.hpp"

namespace jiasu {
namespace {

namespace fs = std::filesystem;
using fe::GlobalValue;
using fe::Type;
using testing::array;
using testing::device_function;
using testing::Globals;
using testing::int_value;
using testing::module_value;
using testing::python;
using testing::scalar;

// The layouts the entry point reads (as the runtime header declares them).
struct LaunchError {
  int failed;
  char message[512];
};
struct Launch {
  long long grid[3], block[3];
  long long block_begin, block_end;
  long long shared_bytes;
  LaunchError* error;
  void* (*fiber_stacks)(long long count, long long bytes);  // null here: the library maps its own
};
template <typename T, int N> struct ArrayC { T* data; long long shape[N]; };
template <typename T, int N> struct ArrayA { T* data; long long shape[N]; long long strides[N]; };

template <typename T>
ArrayC<T, 1> view(std::vector<T>& v) { return {v.data(), {static_cast<long long>(v.size())}}; }

// A compiled and loaded host kernel.
class HostKernel {
 public:
  using Entry = void (*)(const Launch*, void* const*);
  // flags: more compiler options (e.g. -DJIASU_HOST_UCONTEXT: fibers on ucontext, the other targets' way).
  HostKernel(const std::string& source, const std::string& entry_name, const std::string& flags = "") {
    char pattern[] = "/tmp/jiasu_host_test_XXXXXX";
    dir_ = mkdtemp(pattern);
    const fs::path cpp = dir_ / "kernel.cpp", so = dir_ / "kernel.so";
    std::ofstream(cpp) << source;
    const char* cxx = std::getenv("CXX");
    std::string command = std::string(cxx && *cxx ? cxx : "g++") + " -O2 -std=c++17 -shared -fPIC -Wall " + flags + " -o " +
                          so.string() + " " + cpp.string() + " > " + (dir_ / "log").string() + " 2>&1";
    if (std::system(command.c_str()) != 0) {
      std::ifstream log(dir_ / "log");
      ADD_FAILURE() << "host compile failed:\n" << std::string(std::istreambuf_iterator<char>(log), {}) << "\n" << source;
      return;
    }
    handle_ = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      ADD_FAILURE() << dlerror();
      return;
    }
    entry_ = reinterpret_cast<Entry>(dlsym(handle_, entry_name.c_str()));
    EXPECT_NE(entry_, nullptr) << entry_name;
  }
  ~HostKernel() {
    if (handle_) dlclose(handle_);
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  bool ok() const { return entry_ != nullptr; }

  // Runs the whole grid (or blocks [begin, end) when end >= 0), with shared_bytes of dynamic shared memory;
  // a failure the library reports is a test failure.
  void run(std::vector<long long> grid, std::vector<long long> block, std::vector<void*> params, long long begin = 0,
           long long end = -1, long long shared_bytes = 0) const {
    const std::string failure = try_run(std::move(grid), std::move(block), std::move(params), begin, end, shared_bytes);
    EXPECT_EQ(failure, "");
  }
  // The same, giving the library's failure message ("" when none).
  std::string try_run(std::vector<long long> grid, std::vector<long long> block, std::vector<void*> params,
                      long long begin = 0, long long end = -1, long long shared_bytes = 0) const {
    if (!ok()) return "not compiled";
    grid.resize(3, 1);
    block.resize(3, 1);
    LaunchError error{};
    Launch launch{{grid[0], grid[1], grid[2]}, {block[0], block[1], block[2]}, begin, end, shared_bytes, &error, nullptr};
    if (end < 0) launch.block_end = grid[0] * grid[1] * grid[2];
    entry_(&launch, params.data());
    return error.failed ? std::string(error.message) : std::string();
  }

 private:
  fs::path dir_;
  void* handle_ = nullptr;
  Entry entry_ = nullptr;
};

std::unique_ptr<HostKernel> build(const std::string& text, const std::vector<Type>& signature, Globals globals = {},
                                  std::string* source = nullptr, const std::string& flags = "") {
  fe::Program program = fe::check(python(text, std::move(globals)), signature);
  emit::EmittedKernel kernel = emit::emit_host(program);
  if (source) *source = kernel.source;
  return std::make_unique<HostKernel>(kernel.source, kernel.entry_name, flags);
}

TEST(EmitHost, TheSeedKernel) {
  auto k = build(
      "@jiasu.kernel\n"
      "def add(x, y, out):\n"
      "    i = jiasu.grid(1)\n"
      "    if i < out.size:\n"
      "        out[i] = x[i] + y[i]\n",
      {array(DType::Float32), array(DType::Float32), array(DType::Float32)});
  const int n = 1000;
  std::vector<float> x(n), y(n), out(n, -1.0f);
  for (int i = 0; i < n; ++i) x[i] = 0.1f * i, y[i] = 1.0f / (i + 1);
  auto xv = view(x); auto yv = view(y); auto ov = view(out);
  k->run({8}, {128}, {&xv, &yv, &ov});
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], x[i] + y[i]) << i;
}

TEST(EmitHost, BlockRangesRunOnlyTheirBlocks) {
  auto k = build(
      "@jiasu.kernel\n"
      "def mark(out):\n"
      "    out[jiasu.grid(1)] = jiasu.blockIdx.x * 100 + jiasu.threadIdx.x\n",
      {array(DType::Int64)});
  std::vector<int64_t> out(12, -1);
  auto ov = view(out);
  k->run({4}, {3}, {&ov}, 1, 3);  // blocks 1 and 2
  std::vector<int64_t> expected = {-1, -1, -1, 100, 101, 102, 200, 201, 202, -1, -1, -1};
  EXPECT_EQ(out, expected);
}

TEST(EmitHost, StencilOnAStridedArray) {
  auto k = build(
      "@jiasu.kernel\n"
      "def stencil(a, out, w):\n"
      "    i, j = jiasu.grid(2)\n"
      "    n, m = a.shape\n"
      "    if 0 < i < n - 1 and 0 < j < m - 1:\n"
      "        out[i, j] = w * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1]) - 4 * a[i, j]\n",
      {array(DType::Float64, 2, false), array(DType::Float64, 2), scalar(DType::Float32)});
  const long long n = 13, m = 9;
  std::vector<double> storage(n * 2 * m);  // a is every other column of an n x 2m array
  for (size_t i = 0; i < storage.size(); ++i) storage[i] = std::sin(0.37 * i) * 10;
  auto a = [&](long long i, long long j) { return storage[i * 2 * m + 2 * j]; };
  std::vector<double> out(n * m, 0.0);
  float w = 0.3f;
  ArrayA<double, 2> av{storage.data(), {n, m}, {static_cast<long long>(2 * m * sizeof(double)), 2 * sizeof(double)}};
  ArrayC<double, 2> ov{out.data(), {n, m}};
  k->run({(n + 3) / 4, (m + 3) / 4}, {4, 4}, {&av, &ov, &w});
  for (long long i = 0; i < n; ++i)
    for (long long j = 0; j < m; ++j) {
      double expected = 0;
      if (0 < i && i < n - 1 && 0 < j && j < m - 1)
        expected = static_cast<double>(w) * (a(i - 1, j) + a(i + 1, j) + a(i, j - 1) + a(i, j + 1)) - 4 * a(i, j);
      ASSERT_EQ(out[i * m + j], expected) << i << "," << j;
    }
}

TEST(EmitHost, GridStrideLoop) {
  auto k = build(
      "@jiasu.kernel\n"
      "def twice(x, out):\n"
      "    for i in range(jiasu.grid(1), x.size, jiasu.gridsize(1)):\n"
      "        out[i] += 2 * x[i]\n",
      {array(DType::Int64), array(DType::Int64)});
  std::vector<int64_t> x(1001), out(1001, 1);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int64_t>(i) - 500;
  auto xv = view(x); auto ov = view(out);
  k->run({3}, {5}, {&xv, &ov});
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(out[i], 1 + 2 * x[i]) << i;  // each element exactly once
}

TEST(EmitHost, MathFunctions) {
  auto k = build(
      "@jiasu.kernel\n"
      "def f(x, out, ints):\n"
      "    i = jiasu.grid(1)\n"
      "    if i < x.size:\n"
      "        v = x[i]\n"
      "        out[i] = math.sin(v) + math.sqrt(abs(v)) * math.exp(-v * v) + math.atan2(v, 2.0) + v ** 2\n"
      "        ints[i] = math.floor(v) * 1000 + round(v) * 10 + max(min(i, 7), 3)\n",
      {array(DType::Float64), array(DType::Float64), array(DType::Int64)});
  std::vector<double> x = {-3.5, -2.5, -0.75, 0.0, 0.5, 1.5, 2.5, 7.25, 1e-3, -1e3};
  std::vector<double> out(x.size());
  std::vector<int64_t> ints(x.size());
  auto xv = view(x); auto ov = view(out); auto iv = view(ints);
  k->run({1}, {32}, {&xv, &ov, &iv});
  for (size_t i = 0; i < x.size(); ++i) {
    double v = x[i];
    EXPECT_EQ(out[i], std::sin(v) + std::sqrt(std::fabs(v)) * std::exp(-v * v) + std::atan2(v, 2.0) + v * v) << v;
    int64_t m = std::max<int64_t>(std::min<int64_t>(i, 7), 3);
    EXPECT_EQ(ints[i], static_cast<int64_t>(std::floor(v)) * 1000 + static_cast<int64_t>(std::nearbyint(v)) * 10 + m) << v;
  }
}

TEST(EmitHost, FloorDivisionAndModuloFollowPython) {
  auto k = build(
      "@jiasu.kernel\n"
      "def divmod_(a, b, q, r, fq, fr):\n"
      "    i = jiasu.grid(1)\n"
      "    if i < a.size:\n"
      "        q[i] = a[i] // b[i]\n"
      "        r[i] = a[i] % b[i]\n"
      "        fq[i] = float(a[i]) // (b[i] * 0.5)\n"
      "        fr[i] = float(a[i]) % (b[i] * 0.5)\n",
      {array(DType::Int32), array(DType::Int32), array(DType::Int32), array(DType::Int32), array(DType::Float64),
       array(DType::Float64)});
  std::vector<int32_t> a = {7, -7, 7, -7, 6, -6, 0, 5}, b = {2, 2, -2, -2, 3, -3, 5, 0};
  std::vector<int32_t> q(a.size()), r(a.size());
  std::vector<double> fq(a.size()), fr(a.size());
  auto av = view(a); auto bv = view(b); auto qv = view(q); auto rv = view(r); auto fqv = view(fq); auto frv = view(fr);
  k->run({1}, {8}, {&av, &bv, &qv, &rv, &fqv, &frv});
  EXPECT_EQ(q, (std::vector<int32_t>{3, -4, -4, 3, 2, 2, 0, 0}));   // x // 0 is 0 (NumPy)
  EXPECT_EQ(r, (std::vector<int32_t>{1, 1, -1, -1, 0, 0, 0, 0}));
  // floats: 7 // 1.0 = 7, -7 // 1.0 = -7, 7 // -1.0 = -7, ...; 6 // 1.5 = 4, -6 // -1.5 = 4, 0 // 2.5 = 0
  EXPECT_EQ(std::vector<double>(fq.begin(), fq.end() - 1), (std::vector<double>{7, -7, -7, 7, 4, 4, 0}));
  EXPECT_EQ(std::vector<double>(fr.begin(), fr.end() - 1), (std::vector<double>{0, 0, -0.0, -0.0, 0, -0.0, 0}));
  EXPECT_TRUE(std::signbit(fr[2]));
  EXPECT_TRUE(std::isinf(fq[7]));  // 5 // 0.0
  EXPECT_TRUE(std::isnan(fr[7]));  // 5 % 0.0
}

TEST(EmitHost, AtomicHistogramAcrossAllThreads) {
  auto k = build(
      "@jiasu.kernel\n"
      "def hist(x, bins, biggest, total):\n"
      "    i = jiasu.grid(1)\n"
      "    if i < x.size:\n"
      "        jiasu.atomic.add(bins, x[i] % bins.size, 1)\n"
      "        jiasu.atomic.max(biggest, 0, x[i])\n"
      "        jiasu.atomic.add(total, 0, np.float32(0.5))\n",
      {array(DType::Int64), array(DType::Int32), array(DType::Int64), array(DType::Float32)});
  std::vector<int64_t> x(777), biggest = {-1};
  std::vector<int32_t> bins(10, 0);
  std::vector<float> total = {0};
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int64_t>((i * 7919) % 1009) - 300;
  auto xv = view(x); auto bv = view(bins); auto mv = view(biggest); auto tv = view(total);
  k->run({7}, {128}, {&xv, &bv, &mv, &tv});
  std::vector<int32_t> expected(10, 0);
  int64_t most = -1;
  for (int64_t v : x) ++expected[((v % 10) + 10) % 10], most = std::max(most, v);
  EXPECT_EQ(bins, expected);
  EXPECT_EQ(biggest[0], most);
  EXPECT_EQ(total[0], 388.5f);
}

TEST(EmitHost, DeviceFunctionsSeeTheirThread) {
  Globals globals;
  globals["clamp"] = device_function(
      "@jiasu.func\n"
      "def clamp(v, lo, hi):\n"
      "    if v < lo:\n"
      "        return lo\n"
      "    return min(v, hi)\n");
  globals["lane"] = device_function(
      "@jiasu.func\n"
      "def lane():\n"
      "    return jiasu.threadIdx.x\n");
  auto k = build(
      "@jiasu.kernel\n"
      "def k(x, y, who):\n"
      "    i = jiasu.grid(1)\n"
      "    if i < x.size:\n"
      "        y[i] = clamp(x[i], np.float32(0), hi=np.float32(1))\n"
      "        who[i] = lane()\n",
      {array(DType::Float32), array(DType::Float32), array(DType::Int64)}, globals);
  std::vector<float> x = {-1.0f, 0.25f, 0.5f, 2.0f, 1.0f, -0.0f, 0.75f}, y(x.size());
  std::vector<int64_t> who(x.size());
  auto xv = view(x); auto yv = view(y); auto wv = view(who);
  k->run({3}, {3}, {&xv, &yv, &wv});
  EXPECT_EQ(y, (std::vector<float>{0.0f, 0.25f, 0.5f, 1.0f, 1.0f, -0.0f, 0.75f}));
  EXPECT_EQ(who, (std::vector<int64_t>{0, 1, 2, 0, 1, 2, 0}));
}

TEST(EmitHost, ReturnEndsOnlyItsThread) {
  auto k = build(
      "@jiasu.kernel\n"
      "def odd(out, n):\n"
      "    i = jiasu.grid(1)\n"
      "    if i >= n:\n"
      "        return\n"
      "    if i % 2 == 0:\n"
      "        return\n"
      "    out[i] = i\n",
      {array(DType::Int64), scalar(DType::Int64)});
  std::vector<int64_t> out(10, -1);
  int64_t n = 9;
  auto ov = view(out);
  k->run({2}, {8}, {&ov, &n});
  EXPECT_EQ(out, (std::vector<int64_t>{-1, 1, -1, 3, -1, 5, -1, 7, -1, -1}));
}

TEST(EmitHost, HalfTypesRoundToNearestEven) {
  auto k = build(
      "@jiasu.kernel\n"
      "def third(a, b, h, bf):\n"
      "    i = jiasu.grid(1)\n"
      "    if i < a.size:\n"
      "        h[i] = a[i] / b[i]\n"
      "        bf[i] = np.float32(h[i]) * np.float32(3.0)\n",
      {array(DType::Float16), array(DType::Float16), array(DType::Float16), array(DType::BFloat16)});
  // float16 bits: 1.0 = 0x3c00, 3.0 = 0x4200, 2.0 = 0x4000, 65504 = 0x7bff, 0.5 = 0x3800
  std::vector<uint16_t> a = {0x3c00, 0x4000, 0x7bff, 0x3c00}, b = {0x4200, 0x4200, 0x3800, 0x3c00};
  std::vector<uint16_t> h(4), bf(4);
  auto av = view(a); auto bv = view(b); auto hv = view(h); auto bfv = view(bf);
  k->run({1}, {4}, {&av, &bv, &hv, &bfv});
  EXPECT_EQ(h, (std::vector<uint16_t>{0x3555, 0x3955, 0x7c00, 0x3c00}));  // 1/3, 2/3, inf, 1
  // bfloat16(float(h) * 3): 0.333251953125 * 3 = 0.999755859375 -> 0x3f80 (1.0, to nearest)
  EXPECT_EQ(bf[0], 0x3f80);
  EXPECT_EQ(bf[3], 0x4040);  // 3.0
}

// ---- The block scheduler: barriers and shared memory

TEST(EmitHost, KernelsWithoutBarriersRunThreadAfterThread) {
  std::string source;
  auto k = build(
      "@jiasu.kernel\n"
      "def k(out):\n"
      "    out[jiasu.grid(1)] = 1\n",
      {array(DType::Int64)}, {}, &source);
  EXPECT_NE(source.find("  blocks.run_blocks(body);\n"), std::string::npos);
  EXPECT_NE(source.find("static void jiasu_kernel_blocks("), std::string::npos);
  EXPECT_EQ(source.find("blocks.run_fibers(body)"), std::string::npos);
}

// Thread loops take a condition around a barrier from the first thread: only where it is the same in every
// thread. A grid-stride loop around a barrier (each thread its own index) runs as fibers.
TEST(EmitHost, ThreadLoopsOnlyAroundBlockUniformControls) {
  auto schedule_of = [](const std::string& loop) {
    const fe::Program program = fe::check(python("@jiasu.kernel\n"
                                                 "def k(x, n):\n"
                                                 "    sh = jiasu.shared.array(32, jiasu.int64)\n"
                                                 "    s = n // 2\n" +
                                                 loop +
                                                 "        sh[jiasu.threadIdx.x] = i\n"
                                                 "        jiasu.syncthreads()\n"),
                                          {array(DType::Int64), scalar(DType::Int64)});
    const std::string source = emit::emit_host(program).source;
    const bool loops = source.find("blocks.run_blocks(body)") != std::string::npos;
    EXPECT_NE(loops, source.find("blocks.run_fibers(body)") != std::string::npos);
    return loops ? "thread loops" : "fibers";
  };
  EXPECT_EQ(schedule_of("    for i in range(s):\n"), "thread loops");
  EXPECT_EQ(schedule_of("    for i in range(0, n * jiasu.gridDim.x, jiasu.blockDim.x):\n"), "thread loops");
  EXPECT_EQ(schedule_of("    for i in range(jiasu.grid(1), n, jiasu.gridsize(1)):\n"), "fibers");
  EXPECT_EQ(schedule_of("    for i in range(x[0]):\n"), "fibers");  // memory may differ by the time
  EXPECT_EQ(schedule_of("    i = jiasu.threadIdx.x\n    while i < n:\n        i += 32\n"), "fibers");
}

TEST(EmitHost, BlockReductionInSharedMemory) {
  std::string source;
  auto k = build(
      "@jiasu.kernel\n"
      "def block_sum(x, out):\n"
      "    buf = jiasu.shared.array(256, np.int64)\n"
      "    t = jiasu.threadIdx.x\n"
      "    i = jiasu.grid(1)\n"
      "    buf[t] = x[i] if i < x.size else 0\n"
      "    jiasu.syncthreads()\n"
      "    s = jiasu.blockDim.x // 2\n"
      "    while s > 0:\n"
      "        if t < s:\n"
      "            buf[t] += buf[t + s]\n"
      "        jiasu.syncthreads()\n"
      "        s //= 2\n"
      "    if t == 0:\n"
      "        out[jiasu.blockIdx.x] = buf[0]\n",
      {array(DType::Int64), array(DType::Int64)}, {}, &source);
  EXPECT_NE(source.find("blocks.run_blocks(body)"), std::string::npos);
  const long long blocks = 7, n = blocks * 256 - 100;
  std::vector<int64_t> x(n), out(blocks, -1);
  for (long long i = 0; i < n; ++i) x[i] = (i * 7919) % 100003 - 5000;
  auto xv = view(x); auto ov = view(out);
  k->run({blocks}, {256}, {&xv, &ov});
  for (long long b = 0; b < blocks; ++b) {
    int64_t expected = 0;
    for (long long i = b * 256; i < std::min(n, (b + 1) * 256); ++i) expected += x[i];
    EXPECT_EQ(out[b], expected) << b;
  }
}

TEST(EmitHost, BarrierInABranchEveryThreadTakes) {
  Globals globals;
  globals["exchange"] = device_function(  // a barrier inside a device function
      "@jiasu.func\n"
      "def exchange(s, t, n):\n"
      "    jiasu.syncthreads()\n"
      "    return s[n - 1 - t]\n");
  auto k = build(
      "@jiasu.kernel\n"
      "def reverse(x, out, flag):\n"
      "    s = jiasu.shared.array(64, np.float64)\n"
      "    t = jiasu.threadIdx.x\n"
      "    s[t] = x[jiasu.grid(1)]\n"
      "    if flag > 0:\n"
      "        out[jiasu.grid(1)] = exchange(s, t, jiasu.blockDim.x)\n"
      "    else:\n"
      "        out[jiasu.grid(1)] = -1.0\n",
      {array(DType::Float64), array(DType::Float64), scalar(DType::Int64)}, globals);
  std::vector<double> x(128), out(128);
  for (int i = 0; i < 128; ++i) x[i] = 0.5 * i;
  int64_t flag = 1;
  auto xv = view(x); auto ov = view(out);
  k->run({2}, {64}, {&xv, &ov, &flag});
  for (int i = 0; i < 128; ++i) ASSERT_EQ(out[i], x[(i / 64) * 64 + 63 - i % 64]) << i;
}

TEST(EmitHost, SyncthreadsCountAndOr) {
  auto k = build(
      "@jiasu.kernel\n"
      "def votes(x, out):\n"
      "    t = jiasu.threadIdx.x + jiasu.blockDim.x * jiasu.threadIdx.y\n"
      "    v = x[jiasu.blockIdx.x * jiasu.blockDim.x * jiasu.blockDim.y + t]\n"
      "    c = jiasu.syncthreads_count(v > 0)\n"
      "    a = jiasu.syncthreads_and(v > 0)\n"
      "    o = jiasu.syncthreads_or(v > 0)\n"
      "    if t == 0:\n"
      "        out[jiasu.blockIdx.x, 0] = c\n"
      "        out[jiasu.blockIdx.x, 1] = a\n"
      "        out[jiasu.blockIdx.x, 2] = o\n",
      {array(DType::Int32), array(DType::Int32, 2)});
  // 4 blocks of 8 x 4 threads: some positive, all positive, none positive, one positive
  std::vector<int32_t> x(4 * 32, 0), out(4 * 3, -1);
  for (int i = 0; i < 32; ++i) x[i] = i % 3 == 0 ? 1 : -1;  // 11 positive
  for (int i = 32; i < 64; ++i) x[i] = 5;
  x[96 + 17] = 1;
  auto xv = view(x);
  ArrayC<int32_t, 2> ov{out.data(), {4, 3}};
  k->run({4}, {8, 4}, {&xv, &ov});
  EXPECT_EQ(out, (std::vector<int32_t>{11, 0, 1, 32, 1, 1, 0, 0, 0, 1, 0, 1}));
}

TEST(EmitHost, TiledMatmulInSharedMemory) {
  auto k = build(
      "@jiasu.kernel\n"
      "def matmul(A, B, C):\n"
      "    sA = jiasu.shared.array((TILE, TILE), np.float64)\n"
      "    sB = jiasu.shared.array(shape=(TILE, TILE), dtype=np.float64)\n"
      "    x, y = jiasu.grid(2)\n"
      "    tx = jiasu.threadIdx.x\n"
      "    ty = jiasu.threadIdx.y\n"
      "    tmp = 0.0\n"
      "    for i in range((A.shape[1] + TILE - 1) // TILE):\n"
      "        sA[ty, tx] = 0\n"
      "        sB[ty, tx] = 0\n"
      "        if y < A.shape[0] and (tx + i * TILE) < A.shape[1]:\n"
      "            sA[ty, tx] = A[y, tx + i * TILE]\n"
      "        if x < B.shape[1] and (ty + i * TILE) < B.shape[0]:\n"
      "            sB[ty, tx] = B[ty + i * TILE, x]\n"
      "        jiasu.syncthreads()\n"
      "        for j in range(TILE):\n"
      "            tmp += sA[ty, j] * sB[j, tx]\n"
      "        jiasu.syncthreads()\n"
      "    if y < C.shape[0] and x < C.shape[1]:\n"
      "        C[y, x] = tmp\n",
      {array(DType::Float64, 2), array(DType::Float64, 2), array(DType::Float64, 2)}, {{"TILE", int_value(8)}});
  const long long n = 37, m = 29, p = 21;  // C (n x p) = A (n x m) B (m x p); no side a multiple of 8
  std::vector<double> a(n * m), b(m * p), c(n * p, -1);
  for (long long i = 0; i < n * m; ++i) a[i] = (i % 17) - 8;  // small integers: every sum is exact
  for (long long i = 0; i < m * p; ++i) b[i] = (i % 13) - 6;
  ArrayC<double, 2> av{a.data(), {n, m}}, bv{b.data(), {m, p}}, cv{c.data(), {n, p}};
  k->run({(p + 7) / 8, (n + 7) / 8}, {8, 8}, {&av, &bv, &cv});
  for (long long i = 0; i < n; ++i)
    for (long long j = 0; j < p; ++j) {
      double expected = 0;
      for (long long q = 0; q < m; ++q) expected += a[i * m + q] * b[q * p + j];
      ASSERT_EQ(c[i * p + j], expected) << i << "," << j;
    }
}

TEST(EmitHost, DynamicSharedMemory) {
  auto k = build(
      "@jiasu.kernel\n"
      "def rotate(x, out):\n"
      "    s = jiasu.shared.array(0, np.float32)\n"
      "    t = jiasu.threadIdx.x\n"
      "    n = jiasu.blockDim.x\n"
      "    s[t] = x[jiasu.grid(1)]\n"
      "    jiasu.syncthreads()\n"
      "    out[jiasu.grid(1)] = s[(t + 1) % n]\n",
      {array(DType::Float32), array(DType::Float32)});
  std::vector<float> x(3 * 100), out(x.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.25f * i;
  auto xv = view(x); auto ov = view(out);
  k->run({3}, {100}, {&xv, &ov}, 0, -1, 100 * sizeof(float));
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(out[i], x[(i / 100) * 100 + (i % 100 + 1) % 100]) << i;
}

TEST(EmitHost, EarlyReturnCountsAsArrivedAtLaterBarriers) {
  auto k = build(
      "@jiasu.kernel\n"
      "def tail(x, out, counts):\n"
      "    s = jiasu.shared.array(128, np.int32)\n"
      "    t = jiasu.threadIdx.x\n"
      "    i = jiasu.grid(1)\n"
      "    if i >= x.size:\n"
      "        return\n"
      "    s[t] = x[i]\n"
      "    jiasu.syncthreads()\n"
      "    c = jiasu.syncthreads_count(True)\n"
      "    out[i] = s[0] + s[t // 2]\n"
      "    if t == 0:\n"
      "        counts[jiasu.blockIdx.x] = c\n",
      {array(DType::Int32), array(DType::Int32), array(DType::Int32)});
  const int n = 300;  // the last block of 128 threads has 44 running
  std::vector<int32_t> x(n), out(n, -1), counts(3, -1);
  for (int i = 0; i < n; ++i) x[i] = 3 * i + 1;
  auto xv = view(x); auto ov = view(out); auto cv = view(counts);
  k->run({3}, {128}, {&xv, &ov, &cv});
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], x[(i / 128) * 128] + x[(i / 128) * 128 + (i % 128) / 2]) << i;
  EXPECT_EQ(counts, (std::vector<int32_t>{128, 128, 44}));
}

TEST(EmitHost, LaneIdFollowsTheLinearThreadIndex) {
  auto k = build(
      "@jiasu.kernel\n"
      "def lanes(out):\n"
      "    t = jiasu.threadIdx.x + jiasu.blockDim.x * jiasu.threadIdx.y\n"
      "    out[t] = jiasu.laneid\n",
      {array(DType::Int64)});
  std::vector<int64_t> out(80, -1);
  auto ov = view(out);
  k->run({1}, {10, 8}, {&ov});
  for (int i = 0; i < 80; ++i) ASSERT_EQ(out[i], i % 32) << i;
}

// ---- Warps: 32 consecutive linear threads of a block meet at each warp operation

TEST(EmitHost, WarpShuffleReductionThenBlockReduction) {
  std::string source;
  auto k = build(
      "@jiasu.kernel\n"
      "def block_sum(x, warps, out):\n"
      "    partial = jiasu.shared.array(32, np.int64)\n"
      "    i = jiasu.grid(1)\n"
      "    t = jiasu.threadIdx.x\n"
      "    v = x[i] if i < x.size else 0\n"
      "    offset = 16\n"
      "    while offset > 0:\n"
      "        v += jiasu.shfl_down_sync(0xffffffff, v, offset)\n"
      "        offset //= 2\n"
      "    if jiasu.laneid == 0:\n"
      "        warps[i // 32] = v\n"
      "        partial[t // 32] = v\n"
      "    jiasu.syncthreads()\n"
      "    if t < 32:\n"
      "        v = partial[t] if t < jiasu.blockDim.x // 32 else 0\n"
      "        offset = 16\n"
      "        while offset > 0:\n"
      "            v += jiasu.shfl_down_sync(0xffffffff, v, offset)\n"
      "            offset //= 2\n"
      "        if t == 0:\n"
      "            out[jiasu.blockIdx.x] = v\n",
      {array(DType::Int64), array(DType::Int64), array(DType::Int64)}, {}, &source);
  EXPECT_NE(source.find("blocks.run_fibers(body)"), std::string::npos);
  const long long blocks = 5, threads = 256, n = blocks * threads - 77;
  std::vector<int64_t> x(n), warps(blocks * threads / 32, -1), out(blocks, -1);
  for (long long i = 0; i < n; ++i) x[i] = (i * 7919) % 100003 - 50000;
  auto xv = view(x); auto wv = view(warps); auto ov = view(out);
  k->run({blocks}, {threads}, {&xv, &wv, &ov});
  for (size_t w = 0; w < warps.size(); ++w) {
    int64_t expected = 0;
    for (long long i = w * 32; i < std::min<long long>(n, (w + 1) * 32); ++i) expected += x[i];
    ASSERT_EQ(warps[w], expected) << w;
  }
  int64_t total = 0;
  for (long long b = 0; b < blocks; ++b) {
    int64_t expected = 0;
    for (long long i = b * threads; i < std::min(n, (b + 1) * threads); ++i) expected += x[i];
    EXPECT_EQ(out[b], expected) << b;
    total += out[b];
  }
  int64_t exact = 0;
  for (int64_t v : x) exact += v;
  EXPECT_EQ(total, exact);
}

TEST(EmitHost, ShflXorButterflyGivesEveryLaneTheWarpSum) {
  auto k = build(
      "@jiasu.kernel\n"
      "def butterfly(x, out, biggest):\n"
      "    i = jiasu.grid(1)\n"
      "    v = x[i]\n"
      "    m = x[i]\n"
      "    mask = 16\n"
      "    while mask > 0:\n"
      "        v += jiasu.shfl_xor_sync(0xffffffff, v, mask)\n"
      "        m = max(m, jiasu.shfl_xor_sync(0xffffffff, m, mask))\n"
      "        mask //= 2\n"
      "    out[i] = v\n"
      "    biggest[i] = m\n",
      {array(DType::Float64), array(DType::Float64), array(DType::Float64)});
  const int n = 3 * 64;  // blocks of 2 x 32 threads: 2 warps each, warps follow the linear index
  std::vector<double> x(n), out(n, -1), biggest(n, -1);
  for (int i = 0; i < n; ++i) x[i] = (i * 37) % 101 - 50;  // small integers: every sum is exact
  auto xv = view(x); auto ov = view(out); auto bv = view(biggest);
  k->run({3}, {64}, {&xv, &ov, &bv});
  for (int w = 0; w < n / 32; ++w) {
    double sum = 0, most = -1e300;
    for (int l = 0; l < 32; ++l) sum += x[w * 32 + l], most = std::max(most, x[w * 32 + l]);
    for (int l = 0; l < 32; ++l) {
      ASSERT_EQ(out[w * 32 + l], sum) << w << "," << l;
      ASSERT_EQ(biggest[w * 32 + l], most) << w << "," << l;
    }
  }
}

TEST(EmitHost, ShflIndexAndUpOverTwoDimensionalBlocksAndAPartialWarp) {
  auto k = build(
      "@jiasu.kernel\n"
      "def shuffles(x, third, scan, down):\n"
      "    t = jiasu.threadIdx.x + jiasu.blockDim.x * jiasu.threadIdx.y\n"
      "    i = jiasu.blockIdx.x * jiasu.blockDim.x * jiasu.blockDim.y + t\n"
      "    v = x[i]\n"
      "    third[i] = jiasu.shfl_sync(0xffffffff, v, 3)\n"
      "    s = v\n"
      "    d = 1\n"
      "    while d < 32:\n"
      "        u = jiasu.shfl_up_sync(0xffffffff, s, d)\n"
      "        if jiasu.laneid >= d:\n"
      "            s += u\n"
      "        d *= 2\n"
      "    scan[i] = s\n"
      "    down[i] = jiasu.shfl_down_sync(0xffffffff, v, 1)\n",
      {array(DType::Int32), array(DType::Int32), array(DType::Int32), array(DType::Int32)});
  const int per_block = 8 * 5, blocks = 2, n = per_block * blocks;  // warps of 32 and 8 lanes per block
  std::vector<int32_t> x(n), third(n, -1), scan(n, -1), down(n, -1);
  for (int i = 0; i < n; ++i) x[i] = (i * 13) % 29 - 7;
  auto xv = view(x); auto tv = view(third); auto sv = view(scan); auto dv = view(down);
  k->run({blocks}, {8, 5}, {&xv, &tv, &sv, &dv});
  for (int i = 0; i < n; ++i) {
    const int t = i % per_block, first = i - t + t / 32 * 32, lane = t % 32;
    const int lanes = std::min(32, per_block - t / 32 * 32);
    ASSERT_EQ(third[i], x[first + 3]) << i;
    int32_t prefix = 0;
    for (int l = 0; l <= lane; ++l) prefix += x[first + l];
    ASSERT_EQ(scan[i], prefix) << i;
    // from lane + 1; the last lane (of a full warp, or of the partial one) keeps its own value
    ASSERT_EQ(down[i], lane + 1 < lanes ? x[i + 1] : x[i]) << i;
  }
}

TEST(EmitHost, BallotAnyAllWithAKnownPattern) {
  auto k = build(
      "@jiasu.kernel\n"
      "def votes(x, ballots, low, anys, alls, nones):\n"
      "    i = jiasu.grid(1)\n"
      "    p = x[i] > 0\n"
      "    ballots[i] = jiasu.ballot_sync(0xffffffff, p)\n"
      "    low[i] = jiasu.ballot_sync(0x0000ffff, p)\n"
      "    anys[i] = jiasu.any_sync(0xffffffff, p)\n"
      "    alls[i] = jiasu.all_sync(0xffffffff, p)\n"
      "    nones[i] = jiasu.any_sync(0xffffffff, x[i] > 1000) or jiasu.all_sync(0xffff0000, x[i] > 0)\n",
      {array(DType::Int32), array(DType::UInt32), array(DType::UInt32), array(DType::Bool), array(DType::Bool),
       array(DType::Bool)});
  // 4 warps: every third lane positive; all positive; none positive; only lane 17 positive
  const int n = 128;
  std::vector<int32_t> x(n, -5);
  for (int l = 0; l < 32; l += 3) x[l] = 1;
  for (int l = 32; l < 64; ++l) x[l] = 7;
  x[96 + 17] = 2;
  std::vector<uint32_t> ballots(n), low(n);
  std::vector<uint8_t> anys(n, 9), alls(n, 9), nones(n, 9);
  auto xv = view(x); auto bv = view(ballots); auto lv = view(low);
  ArrayC<uint8_t, 1> av{anys.data(), {n}}, allv{alls.data(), {n}}, nv{nones.data(), {n}};
  k->run({2}, {64}, {&xv, &bv, &lv, &av, &allv, &nv});
  const uint32_t thirds = 0x49249249u;  // lanes 0, 3, ..., 30
  const uint32_t expected_ballot[4] = {thirds, 0xffffffffu, 0u, 1u << 17};
  const uint8_t expected_any[4] = {1, 1, 0, 1}, expected_all[4] = {0, 1, 0, 0};
  const uint8_t expected_none[4] = {0, 1, 0, 0};  // all_sync over lanes 16..31: only warp 1 has them all positive
  for (int i = 0; i < n; ++i) {
    const int w = i / 32;
    ASSERT_EQ(ballots[i], expected_ballot[w]) << i;
    ASSERT_EQ(low[i], expected_ballot[w] & 0xffffu) << i;
    ASSERT_EQ(anys[i], expected_any[w]) << i;
    ASSERT_EQ(alls[i], expected_all[w]) << i;
    ASSERT_EQ(nones[i], expected_none[w]) << i;
  }
}

TEST(EmitHost, ActiveMaskAndSyncWarp) {
  auto k = build(
      "@jiasu.kernel\n"
      "def masks(x, full, swapped, after):\n"
      "    s = jiasu.shared.array(64, np.int64)\n"
      "    t = jiasu.threadIdx.x\n"
      "    i = jiasu.grid(1)\n"
      "    full[i] = jiasu.activemask()\n"
      "    s[t] = x[i]\n"
      "    jiasu.syncwarp()\n"
      "    swapped[i] = s[t ^ 1]\n"
      "    if jiasu.laneid >= 20:\n"
      "        return\n"
      "    jiasu.syncwarp(0xfffff)\n"
      "    after[i] = jiasu.activemask()\n",
      {array(DType::Int64), array(DType::UInt32), array(DType::Int64), array(DType::UInt32)});
  const int n = 128;
  std::vector<int64_t> x(n), swapped(n, -1);
  std::vector<uint32_t> full(n, 0), after(n, 0);
  for (int i = 0; i < n; ++i) x[i] = 1000 + i;
  auto xv = view(x); auto fv = view(full); auto sv = view(swapped); auto av = view(after);
  k->run({2}, {64}, {&xv, &fv, &sv, &av});
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(full[i], 0xffffffffu) << i;
    ASSERT_EQ(swapped[i], x[i ^ 1]) << i;  // every lane wrote before any read: syncwarp waited for them
    ASSERT_EQ(after[i], i % 32 < 20 ? 0xfffffu : 0u) << i;  // lanes that returned are no longer active
  }
}

TEST(EmitHost, ActiveMaskInABranchAndAShuffleFromItsLeader) {
  // warp-aggregated increments: the lanes with work meet in the branch, the lowest one adds for all of them
  auto k = build(
      "@jiasu.kernel\n"
      "def aggregate(x, counter, masks, got):\n"
      "    i = jiasu.grid(1)\n"
      "    if x[i] > 0:\n"
      "        m = jiasu.activemask()\n"
      "        masks[i] = m\n"
      "        leader = jiasu.ffs(m) - 1\n"
      "        base = 0\n"
      "        if jiasu.laneid == leader:\n"
      "            base = jiasu.atomic.add(counter, 0, jiasu.popc(m))\n"
      "        got[i] = jiasu.shfl_sync(m, base, leader) + jiasu.popc(m & ((1 << jiasu.laneid) - 1))\n",
      {array(DType::Int32), array(DType::Int64), array(DType::UInt32), array(DType::Int64)});
  const int n = 96;
  std::vector<int32_t> x(n);
  for (int i = 0; i < n; ++i) x[i] = (i * 7) % 5 == 1 || i / 32 == 1 ? 1 : 0;  // warp 1: every lane
  std::vector<int64_t> counter = {0}, got(n, -1);
  std::vector<uint32_t> masks(n, 0);
  auto xv = view(x); auto cv = view(counter); auto mv = view(masks); auto gv = view(got);
  k->run({1}, {96}, {&xv, &cv, &mv, &gv});
  std::vector<int64_t> slots;
  int64_t positive = 0;
  for (int i = 0; i < n; ++i) {
    uint32_t expected = 0;
    for (int l = 0; l < 32; ++l) expected |= (x[i / 32 * 32 + l] > 0 ? 1u : 0u) << l;
    if (x[i] > 0) {
      ++positive;
      ASSERT_EQ(masks[i], expected) << i;
      slots.push_back(got[i]);
    } else {
      ASSERT_EQ(masks[i], 0u) << i;
      ASSERT_EQ(got[i], -1) << i;
    }
  }
  EXPECT_EQ(counter[0], positive);
  std::sort(slots.begin(), slots.end());  // every positive lane got its own slot
  for (size_t j = 0; j < slots.size(); ++j) ASSERT_EQ(slots[j], static_cast<int64_t>(j));
}

// ---- Deadlocks: the entry point returns and reports them (HostLaunch::error) instead of aborting

TEST(EmitHost, LanesSplitBetweenABarrierAndAWarpOperationAreReported) {
  auto k = build(
      "@jiasu.kernel\n"
      "def split(out):\n"
      "    i = jiasu.grid(1)\n"
      "    if jiasu.laneid < 16:\n"
      "        jiasu.syncthreads()\n"
      "    else:\n"
      "        out[i] = jiasu.shfl_down_sync(0xffffffff, out[i], 1)\n"
      "    out[i] = 7\n",
      {array(DType::Int64)});
  std::vector<int64_t> out(3 * 64, 0);
  auto ov = view(out);
  EXPECT_EQ(k->try_run({3}, {64}, {&ov}),
            "deadlock in block (0, 0, 0): threads (0, 0, 0)-(15, 0, 0) wait at a block barrier (syncthreads) that "
            "threads (16, 0, 0)-(31, 0, 0) of their warp never reach: those wait at shfl_down_sync for the first ones");
  // The block stopped there, and so did the range: blocks 1 and 2 never started.
  EXPECT_EQ(std::count(out.begin(), out.end(), 7), 0);
}

TEST(EmitHost, LanesAtDifferentWarpOperationsAreReported) {
  auto k = build(
      "@jiasu.kernel\n"
      "def apart(out):\n"
      "    t = jiasu.threadIdx.x + jiasu.blockDim.x * jiasu.threadIdx.y\n"
      "    if t % 2 == 0:\n"
      "        out[t] = jiasu.shfl_sync(0xffffffff, t, 0)\n"
      "    else:\n"
      "        out[t] = jiasu.ballot_sync(0xffffffff, True)\n",
      {array(DType::Int64)});
  std::vector<int64_t> out(64, -1);
  auto ov = view(out);
  // 2-d blocks of 16 x 4 threads, block (1, 2, 0) of a 2 x 3 grid: the messages name threadIdx
  EXPECT_EQ(k->try_run({2, 3}, {16, 4}, {&ov}, 5, 6),
            "deadlock in block (1, 2, 0): threads (0, 0, 0) wait at shfl_sync while thread (1, 0, 0) of their warp "
            "reaches ballot_sync (the lanes of a warp must meet at the same warp operation)");
}

TEST(EmitHost, ABarrierThatSomeThreadsSkipByReturningIsNoDeadlock) {
  // as on the device (sm_70+): threads that have returned do not hold a barrier up
  auto k = build(
      "@jiasu.kernel\n"
      "def half(out):\n"
      "    t = jiasu.threadIdx.x\n"
      "    if t >= 40:\n"
      "        return\n"
      "    n = jiasu.syncthreads_count(True)\n"
      "    out[t] = n + jiasu.shfl_sync(0xffffffff, t, 0)\n",
      {array(DType::Int64)});
  std::vector<int64_t> out(100, -1);
  auto ov = view(out);
  k->run({1}, {100}, {&ov});
  for (int t = 0; t < 100; ++t) ASSERT_EQ(out[t], t < 40 ? 40 + t / 32 * 32 : -1) << t;
}

// The fallback for targets other than x86-64 and aarch64 (ucontext) keeps the scheduler's behaviour.
TEST(EmitHost, FibersOnUcontext) {
  const std::string flags = "-DJIASU_HOST_UCONTEXT";
  std::string source;
  auto k = build(
      "@jiasu.kernel\n"
      "def scan(x, out):\n"
      "    s = jiasu.shared.array(96, np.float64)\n"
      "    t = jiasu.threadIdx.x\n"
      "    i = jiasu.grid(1)\n"
      "    v = x[i]\n"
      "    d = 1\n"
      "    while d < 32:\n"
      "        u = jiasu.shfl_up_sync(0xffffffff, v, d)\n"
      "        if jiasu.laneid >= d:\n"
      "            v += u\n"
      "        d *= 2\n"
      "    s[t] = v\n"
      "    jiasu.syncthreads()\n"
      "    w = t // 32 - 1\n"
      "    while w >= 0:\n"
      "        v += s[w * 32 + 31]\n"
      "        w -= 1\n"
      "    out[i] = v\n",
      {array(DType::Float64), array(DType::Float64)}, {}, &source, flags);
  const int n = 4 * 96;
  std::vector<double> x(n), out(n, -1);
  for (int i = 0; i < n; ++i) x[i] = (i * 5) % 11 - 3;
  auto xv = view(x); auto ov = view(out);
  k->run({4}, {96}, {&xv, &ov});
  for (int b = 0; b < 4; ++b) {
    double prefix = 0;
    for (int t = 0; t < 96; ++t) ASSERT_EQ(out[b * 96 + t], prefix += x[b * 96 + t]) << b << "," << t;
  }
  auto bad = build(
      "@jiasu.kernel\n"
      "def split(out):\n"
      "    if jiasu.laneid < 16:\n"
      "        jiasu.syncthreads()\n"
      "    else:\n"
      "        jiasu.syncwarp()\n",
      {array(DType::Int64)}, {}, nullptr, flags);
  std::vector<int64_t> unused(32);
  auto uv = view(unused);
  EXPECT_NE(bad->try_run({1}, {32}, {&uv}).find("deadlock in block (0, 0, 0)"), std::string::npos);
}

// jiasu::report_failure, for checks in emitted code: the first report of a launch wins, the block stops
// (after the reporting thread when threads run one after another; as fibers, when the reporting one
// reaches its next barrier: no other fiber runs after that) and the blocks not yet started are skipped.
TEST(EmitHost, ReportedFailuresStopTheBlocks) {
  const std::string source = emit::cuda_runtime_header() + R"(
extern "C" void reporting(const jiasu::HostLaunch* launch, void* const* params) {
  long long* ran = *static_cast<long long* const*>(params[0]);
  const bool fibers = *static_cast<const bool*>(params[1]);
  auto body = [&](const jiasu::HostThread& t) {
    const long long i = t.blockIdx.x * t.blockDim.x + t.threadIdx.x;
    if (t.blockIdx.x == 1 && t.threadIdx.x >= 2) jiasu::report_failure("thread %lld, block %lld", t.threadIdx.x, t.blockIdx.x);
    ran[i] += 1;
    if (fibers) {
      jiasu::syncthreads();
      ran[i] += 10;
    }
  };
  auto per_block = [&](const jiasu::HostThread& b) {  // as thread loops run a block: every thread, then stop
    for (long long x = 0; x < b.blockDim.x; ++x) {
      jiasu::HostThread t = b;
      t.threadIdx = {x, 0, 0};
      body(t);
    }
  };
  jiasu::HostBlocks blocks(launch);
  if (fibers) blocks.run_fibers(body);
  else blocks.run_blocks(per_block);
}
)";
  HostKernel k(source, "reporting");
  for (bool fibers : {false, true}) {
    std::vector<long long> ran(4 * 4, 0);
    long long* data = ran.data();
    EXPECT_EQ(k.try_run({4}, {4}, {&data, &fibers}), "thread 2, block 1");
    const std::vector<long long> expected =
        fibers ? std::vector<long long>{11, 11, 11, 11, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0}  // at thread 2's barrier
               : std::vector<long long>{1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0};    // after block 1
    EXPECT_EQ(ran, expected) << fibers;
  }
}

}  // namespace
}  // namespace jiasu
