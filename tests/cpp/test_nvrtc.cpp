#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "support/error.hpp"
#include "test_support.hpp"
#include "toolchain/disk_cache.hpp"
#include "toolchain/nvrtc.hpp"

namespace jiasu {
namespace {

class NvrtcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (testing::installed_nvrtc_dir().empty()) GTEST_SKIP() << "no libnvrtc in CUDA_HOME or /usr/local/cuda";
  }
};

constexpr const char* kVectorAdd = R"(
extern "C" __global__ void add(const float* x, const float* y, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + y[i];
}
)";

CudaCompileRequest request_for(std::string source, CodeKind kind = CodeKind::Cubin) {
  CudaCompileRequest request;
  request.source = std::move(source);
  request.kind = kind;
  return request;
}

TEST_F(NvrtcTest, InfoAndSupportedArchs) {
  const NvrtcInfo& info = nvrtc_info();
  EXPECT_GE(info.major, 12);
  EXPECT_FALSE(info.path.empty());
  EXPECT_FALSE(info.source.empty());
  std::vector<int> archs = nvrtc_supported_archs();
  EXPECT_NE(std::find(archs.begin(), archs.end(), 90), archs.end());
  EXPECT_TRUE(std::is_sorted(archs.begin(), archs.end()));
}

TEST_F(NvrtcTest, VectorAddToPtx) {
  CompiledCode code = compile_cuda(request_for(kVectorAdd, CodeKind::Ptx), nullptr);
  EXPECT_NE(code.image.find(".entry add"), std::string::npos) << code.image;
  EXPECT_NE(code.image.find(".target sm_90"), std::string::npos) << code.image;
  EXPECT_EQ(code.image.find('\0'), std::string::npos);
  EXPECT_FALSE(code.from_cache);
}

TEST_F(NvrtcTest, VectorAddToCubin) {
  CompiledCode code = compile_cuda(request_for(kVectorAdd), nullptr);
  ASSERT_GT(code.image.size(), 4u);
  EXPECT_EQ(code.image.substr(0, 4), "\x7f" "ELF");
}

TEST_F(NvrtcTest, IncludesCudaFp16) {
  CompiledCode code = compile_cuda(request_for(R"(
#include <cuda_fp16.h>
extern "C" __global__ void scale(__half* x, float factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = __float2half(__half2float(x[i]) * factor);
}
)"),
                                   nullptr);
  EXPECT_FALSE(code.image.empty());
}

TEST_F(NvrtcTest, SyntaxErrorReportsTheLine) {
  CudaCompileRequest request = request_for(
      "extern \"C\" __global__ void broken(float* out) {\n"
      "  int i = threadIdx.x;\n"
      "  out[i] = i +;\n"
      "}\n");
  request.file_name = "broken.cu";
  try {
    compile_cuda(request, nullptr);
    FAIL() << "expected NvrtcError";
  } catch (const NvrtcError& error) {
    EXPECT_NE(error.log().find("broken.cu(3)"), std::string::npos) << error.log();
    EXPECT_EQ(std::string(error.what()), "NVRTC failed to compile broken.cu:\n" + error.log());
  }
}

TEST_F(NvrtcTest, UserOptionsArePassed) {
  CudaCompileRequest request = request_for(R"(
#if VALUE != 3
#error VALUE must be 3
#endif
extern "C" __global__ void k() {}
)");
  request.options = {"-DVALUE=3", "-use_fast_math"};
  EXPECT_NO_THROW(compile_cuda(request, nullptr));
  request.options = {"-DVALUE=4"};
  EXPECT_THROW(compile_cuda(request, nullptr), NvrtcError);
}

TEST_F(NvrtcTest, DefaultsToCxx17UnlessAStdIsGiven) {
  CudaCompileRequest request = request_for(R"(
#if __cplusplus != 201703L
#error not C++17
#endif
extern "C" __global__ void k() {}
)");
  EXPECT_NO_THROW(compile_cuda(request, nullptr));

  request.source = R"(
template <typename T> concept Small = sizeof(T) <= 4;
template <Small T> __device__ T twice(T x) { return x + x; }
extern "C" __global__ void k(int* x) { *x = twice(*x); }
)";
  EXPECT_THROW(compile_cuda(request, nullptr), NvrtcError);
  request.options = {"-std=c++20"};
  EXPECT_NO_THROW(compile_cuda(request, nullptr));
}

TEST_F(NvrtcTest, SecondCompileComesFromTheCache) {
  testing::TempDir dir;
  DiskCache cache(dir.path().string());

  CudaCompileRequest request = request_for(kVectorAdd);
  CompiledCode first = compile_cuda(request, &cache);
  CompiledCode second = compile_cuda(request, &cache);
  EXPECT_FALSE(first.from_cache);
  EXPECT_TRUE(second.from_cache);
  EXPECT_EQ(first.image, second.image);

  // Anything that changes the image changes the key.
  request.options = {"-DUNUSED=1"};
  EXPECT_FALSE(compile_cuda(request, &cache).from_cache);
  request.options.clear();
  request.kind = CodeKind::Ptx;
  EXPECT_FALSE(compile_cuda(request, &cache).from_cache);
}

TEST_F(NvrtcTest, UnsupportedArchThrowsBadValue) {
  CudaCompileRequest request = request_for(kVectorAdd);
  request.arch = 12;
  try {
    compile_cuda(request, nullptr);
    FAIL() << "expected BadValue";
  } catch (const BadValue& error) {
    std::string message = error.what();
    EXPECT_NE(message.find("12"), std::string::npos) << message;
    EXPECT_NE(message.find("90"), std::string::npos) << message;  // the supported list
  }
}

TEST_F(NvrtcTest, ArchOptionIsRejected) {
  CudaCompileRequest request = request_for(kVectorAdd);
  request.options = {"-arch=sm_80"};
  EXPECT_THROW(compile_cuda(request, nullptr), BadValue);
}

TEST_F(NvrtcTest, ConcurrentCompiles) {
  std::vector<std::string> images(4);
  std::vector<std::thread> threads;
  for (std::string& image : images)
    threads.emplace_back([&image] { image = compile_cuda(request_for(kVectorAdd), nullptr).image; });
  for (std::thread& thread : threads) thread.join();
  for (const std::string& image : images) EXPECT_EQ(image, images[0]);
}

}  // namespace
}  // namespace jiasu
