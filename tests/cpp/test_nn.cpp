// jiasu.nn's C++ core (dnn/nn.hpp) on CPU arrays: values computed by hand in double, the type rules and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "dnn/batch_norm_cuda.hpp"
#include "dnn/nn.hpp"
#include "dnn/pooling_cuda.hpp"
#include "dnn/softmax_cuda.hpp"
#include "ops_test_support.hpp"
#include "test_support.hpp"
#include "toolchain/nvrtc.hpp"

namespace jiasu {
namespace {

using testing::host_array;
using testing::values_of;

TEST(Nn, ActivationsMatchTheirFormulas) {
  const std::vector<double> x = {-2.5, -0.5, 0.0, 0.75, 3.0};
  const Array a = host_array(x, DType::Float64);
  const std::vector<double> relu = values_of<double>(dnn::activation("relu", a, {}));
  const std::vector<double> gelu = values_of<double>(dnn::activation("gelu", a, {}));
  dnn::ActivationOptions leaky;
  leaky.negative_slope = 0.25;
  const std::vector<double> leaky_relu = values_of<double>(dnn::activation("leaky_relu", a, leaky));
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(relu[i], x[i] > 0 ? x[i] : 0.0);
    EXPECT_EQ(leaky_relu[i], x[i] > 0 ? x[i] : 0.25 * x[i]);
    EXPECT_NEAR(gelu[i], 0.5 * x[i] * (1 + std::erf(x[i] / std::sqrt(2.0))), 1e-15);
  }
}

TEST(Nn, SigmoidGradientIsTheDerivative) {
  const std::vector<float> x = {-3.0f, -0.25f, 0.0f, 1.5f};
  const Array a = host_array(x, DType::Float32), ones = host_array(std::vector<float>(4, 1.0f), DType::Float32);
  const std::vector<float> grad = values_of<float>(dnn::activation_backward("sigmoid", ones, a, {}));
  for (size_t i = 0; i < x.size(); ++i) {
    const double s = 1 / (1 + std::exp(-double(x[i])));
    EXPECT_NEAR(grad[i], s * (1 - s), 1e-7) << i;
  }
}

TEST(Nn, ActivationErrorsNameTheFunction) {
  const Array ints = host_array(std::vector<int32_t>{1, 2}, DType::Int32);
  EXPECT_THROW(dnn::activation("relu", ints, {}), BadArgument);
  EXPECT_THROW(dnn::activation("swish", host_array(std::vector<float>{1}, DType::Float32), {}), BadValue);
  const Array two = host_array(std::vector<float>{1, 2}, DType::Float32), three = host_array(std::vector<float>{1, 2, 3}, DType::Float32);
  EXPECT_THROW(dnn::activation_backward("tanh", three, two, {}), BadValue);
}

TEST(Nn, SoftmaxRowsAndColumns) {
  const std::vector<double> x = {1, 2, 3, -1, 0, 4};  // (2, 3)
  const Array a = host_array(x, DType::Float64, {2, 3});
  const std::vector<double> rows = values_of<double>(dnn::softmax(a, -1, false));
  const std::vector<double> columns = values_of<double>(dnn::softmax(a, 0, true));
  for (int r = 0; r < 2; ++r) {
    double total = 0;
    for (int c = 0; c < 3; ++c) total += std::exp(x[r * 3 + c]);
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(rows[r * 3 + c], std::exp(x[r * 3 + c]) / total, 1e-15);
  }
  for (int c = 0; c < 3; ++c) {
    const double total = std::exp(x[c]) + std::exp(x[3 + c]);
    for (int r = 0; r < 2; ++r) EXPECT_NEAR(columns[r * 3 + c], x[r * 3 + c] - std::log(total), 1e-14);
  }
  EXPECT_THROW(dnn::softmax(a, 2, false), OutOfRange);
  EXPECT_THROW(dnn::softmax(a, -3, false), OutOfRange);
}

TEST(Nn, Float16SoftmaxIsComputedInFloat32AndRoundedBack) {
  const Array x = ops::astype(host_array(std::vector<float>{0, 1, 2, 3}, DType::Float32), DType::Float16);
  const Array y = dnn::softmax(x, 0, false);
  EXPECT_EQ(y.dtype(), DType::Float16);
  const std::vector<float> got = values_of<float>(ops::astype(y, DType::Float32));
  double total = 0;
  for (int i = 0; i < 4; ++i) total += std::exp(double(i));
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(got[i], std::exp(double(i)) / total, 1e-3) << i;
}

TEST(Nn, CrossEntropyPicksTheTargetsLogProbability) {
  const std::vector<double> logits = {2, 0, -1, 0.5, 0.5, 3};  // (2, 3)
  const Array a = host_array(logits, DType::Float64, {2, 3});
  const Array target = host_array(std::vector<int64_t>{0, 2}, DType::Int64);
  double expected = 0;
  std::vector<double> grad(6);
  for (int r = 0; r < 2; ++r) {
    double total = 0;
    for (int c = 0; c < 3; ++c) total += std::exp(logits[r * 3 + c]);
    const int t = r == 0 ? 0 : 2;
    expected -= (logits[r * 3 + t] - std::log(total)) / 2;
    for (int c = 0; c < 3; ++c) grad[r * 3 + c] = (std::exp(logits[r * 3 + c]) / total - (c == t)) / 2;
  }
  const Array loss = dnn::cross_entropy(a, target);
  EXPECT_EQ(loss.ndim(), 0);
  EXPECT_NEAR(values_of<double>(loss)[0], expected, 1e-15);
  const std::vector<double> got = values_of<double>(dnn::cross_entropy_backward(a, target));
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(got[i], grad[i], 1e-15) << i;
  EXPECT_THROW(dnn::cross_entropy(a, host_array(std::vector<int64_t>{0, 3}, DType::Int64)), OutOfRange);
  EXPECT_THROW(dnn::cross_entropy(a, host_array(std::vector<float>{0, 1}, DType::Float32)), BadArgument);
}

// NVRTC compiles every softmax kernel (no GPU needed): each dtype, both functions, both passes, in registers of
// several widths and block per row.
TEST(Nn, SoftmaxKernelsCompileUnderNvrtc) {
  if (testing::installed_nvrtc_dir().empty()) GTEST_SKIP() << "no libnvrtc in CUDA_HOME or /usr/local/cuda";
  for (DType dtype : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64})
    for (bool log : {false, true})
      for (bool backward : {false, true})
        for (int registers : {1, 4, 32, 0}) {
          CudaCompileRequest request;
          request.source = dnn::softmax_cuda_source(dtype, log, backward, registers);
          request.kind = CodeKind::Ptx;
          try {
            EXPECT_NE(compile_cuda(request, nullptr).image.find(".entry jiasu_softmax"), std::string::npos);
          } catch (const NvrtcError& e) {
            ADD_FAILURE() << info(dtype).name << " log=" << log << " backward=" << backward << " registers="
                          << registers << ": " << e.log();
          }
        }
}


// NVRTC compiles every pooling kernel (no GPU needed): each dtype, max and average, both passes, both layouts,
// 64-bit indices (with float16) and int, windows and row strides compiled in (channels-last) and known at run time.
TEST(Nn, PoolingKernelsCompileUnderNvrtc) {
  if (testing::installed_nvrtc_dir().empty()) GTEST_SKIP() << "no libnvrtc in CUDA_HOME or /usr/local/cuda";
  for (DType dtype : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64})
    for (bool max : {false, true})
      for (bool backward : {false, true})
        for (bool channels_last : {false, true}) {
          CudaCompileRequest request;
          request.source = dnn::pool_cuda_source(dtype, max, backward, channels_last, dtype == DType::Float16,
                                                 channels_last ? 3 : 0, channels_last ? 2 : 0, channels_last ? 2 : 0);
          request.kind = CodeKind::Ptx;
          try {
            EXPECT_NE(compile_cuda(request, nullptr).image.find(".entry jiasu_pool"), std::string::npos);
          } catch (const NvrtcError& e) {
            ADD_FAILURE() << info(dtype).name << " max=" << max << " backward=" << backward << ": " << e.log();
          }
        }
}

// NVRTC compiles every batch-norm kernel (no GPU needed): each dtype and pass, planes with 16-byte packs and
// without, rows; 64-bit indices (with float16) and int.
TEST(Nn, BatchNormKernelsCompileUnderNvrtc) {
  if (testing::installed_nvrtc_dir().empty()) GTEST_SKIP() << "no libnvrtc in CUDA_HOME or /usr/local/cuda";
  using dnn::BatchNormPass;
  struct Layout {
    bool rows, packed;
  };
  for (DType dtype : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64})
    for (BatchNormPass pass : {BatchNormPass::Inference, BatchNormPass::Training, BatchNormPass::Backward})
      for (Layout layout : {Layout{false, true}, Layout{false, false}, Layout{true, false}}) {
        CudaCompileRequest request;
        request.source = dnn::batch_norm_cuda_source(dtype, pass, layout.rows, layout.packed, dtype == DType::Float16);
        request.kind = CodeKind::Ptx;
        try {
          EXPECT_NE(compile_cuda(request, nullptr).image.find(".entry jiasu_batch_norm"), std::string::npos);
        } catch (const NvrtcError& e) {
          ADD_FAILURE() << info(dtype).name << " pass=" << static_cast<int>(pass) << " rows=" << layout.rows
                        << " packed=" << layout.packed << ": " << e.log();
        }
      }
}

}  // namespace
}  // namespace jiasu
