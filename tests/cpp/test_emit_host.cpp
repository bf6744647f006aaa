// The host emitter: Python kernels are checked, emitted as host C++, compiled with the system C++
// compiler into a shared library, loaded with dlopen and run on host arrays; results are checked exactly.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "emit/emit.hpp"
#include "support/error.hpp"

namespace jiasu {
namespace {

namespace fs = std::filesystem;
using fe::GlobalValue;
using fe::Type;
using Globals = std::map<std::string, GlobalValue>;

Type array(DType dtype, int ndim = 1, bool contiguous = true) { return Type::array(dtype, ndim, contiguous); }
Type scalar(DType dtype) { return Type::scalar(dtype); }

GlobalValue module_value(const std::string& name) {
  GlobalValue g;
  g.kind = GlobalValue::Module;
  g.name = name;
  return g;
}

std::shared_ptr<const fe::FunctionSource> python(const std::string& text, Globals globals = {}) {
  auto source = std::make_shared<fe::FunctionSource>();
  source->source = fe::SourceText{text, "k.py", 1};
  source->identity = text;
  globals.emplace("jiasu", module_value("jiasu"));
  globals.emplace("math", module_value("math"));
  globals.emplace("np", module_value("numpy"));
  source->resolve = [globals](const std::string& name) {
    auto it = globals.find(name);
    return it == globals.end() ? GlobalValue{} : it->second;
  };
  return source;
}

GlobalValue device_function(const std::string& text) {
  GlobalValue g;
  g.kind = GlobalValue::Function;
  g.function = python(text);
  return g;
}

// The layouts the entry point reads (as the runtime header declares them).
struct Launch {
  long long grid[3], block[3];
  long long block_begin, block_end;
};
template <typename T, int N> struct ArrayC { T* data; long long shape[N]; };
template <typename T, int N> struct ArrayA { T* data; long long shape[N]; long long strides[N]; };

template <typename T>
ArrayC<T, 1> view(std::vector<T>& v) { return {v.data(), {static_cast<long long>(v.size())}}; }

// A compiled and loaded host kernel.
class HostKernel {
 public:
  using Entry = void (*)(const Launch*, void* const*);
  HostKernel(const std::string& source, const std::string& entry_name) {
    char pattern[] = "/tmp/jiasu_host_test_XXXXXX";
    dir_ = mkdtemp(pattern);
    const fs::path cpp = dir_ / "kernel.cpp", so = dir_ / "kernel.so";
    std::ofstream(cpp) << source;
    const char* cxx = std::getenv("CXX");
    std::string command = std::string(cxx && *cxx ? cxx : "g++") + " -O2 -std=c++17 -shared -fPIC -Wall -o " +
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

  // Runs the whole grid (or blocks [begin, end) when end >= 0).
  void run(std::vector<long long> grid, std::vector<long long> block, std::vector<void*> params, long long begin = 0,
           long long end = -1) const {
    ASSERT_TRUE(ok());
    grid.resize(3, 1);
    block.resize(3, 1);
    Launch launch{{grid[0], grid[1], grid[2]}, {block[0], block[1], block[2]}, begin, end};
    if (end < 0) launch.block_end = grid[0] * grid[1] * grid[2];
    entry_(&launch, params.data());
  }

 private:
  fs::path dir_;
  void* handle_ = nullptr;
  Entry entry_ = nullptr;
};

std::unique_ptr<HostKernel> build(const std::string& text, const std::vector<Type>& signature, Globals globals = {}) {
  fe::Program program = fe::check(python(text, std::move(globals)), signature);
  emit::EmittedKernel kernel = emit::emit_host(program);
  return std::make_unique<HostKernel>(kernel.source, kernel.entry_name);
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

TEST(EmitHost, BarriersNeedTheBlockScheduler) {
  fe::Program program = fe::check(python("@jiasu.kernel\n"
                                         "def k(out):\n"
                                         "    i = jiasu.grid(1)\n"
                                         "    out[i] = 1\n"
                                         "    jiasu.syncthreads()\n"),
                                  {array(DType::Int64)});
  try {
    emit::emit_host(program);
    ADD_FAILURE() << "no error";
  } catch (const BadValue& e) {
    EXPECT_NE(std::string(e.what()).find("jiasu.syncthreads"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("needs the block scheduler (not available yet)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace jiasu
