#include "dnn/checks.hpp"

#include "array/layout.hpp"
#include "array/promotion.hpp"
#include "runtime/driver.hpp"
#include "ops/elementwise.hpp"
#include "support/error.hpp"

namespace jiasu::dnn {

void require_float(const Array& a, const char* function, const char* what) {
  if (category(a.dtype()) != Category::Float)
    throw BadArgument(std::string("jiasu.nn.") + function + ": " + what + " must be float16, bfloat16, float32 or "
                      "float64, not " + info(a.dtype()).name);
}

void require_same(const Array& a, const char* a_name, const Array& b, const char* b_name, const char* function) {
  if (a.shape() != b.shape())
    throw BadValue(std::string("jiasu.nn.") + function + ": " + a_name + " has shape " + shape_string(a.shape()) +
                   " but " + b_name + " has shape " + shape_string(b.shape()));
  require_like(a, a_name, b, b_name, function);
}

void require_like(const Array& a, const char* a_name, const Array& b, const char* b_name, const char* function) {
  const std::string prefix = std::string("jiasu.nn.") + function + ": ";
  if (a.dtype() != b.dtype())
    throw BadArgument(prefix + a_name + " is " + info(a.dtype()).name + " but " + b_name + " is " +
                      info(b.dtype()).name);
  require_same_device(a, a_name, b, b_name, function);
}

void require_same_device(const Array& a, const char* a_name, const Array& b, const char* b_name,
                         const char* function) {
  if (a.device() != b.device())
    throw InvalidArrayError(cu::CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
                            std::string("jiasu.nn.") + function + ": " + a_name + " and " + b_name +
                                " live on different devices");
}

int64_t normalize_dim(int64_t dim, int64_t ndim, const char* function) {
  const int64_t rank = ndim == 0 ? 1 : ndim;
  if (dim < -rank || dim >= rank)
    throw OutOfRange(std::string("jiasu.nn.") + function + ": dimension out of range (expected to be in range of [" +
                     std::to_string(-rank) + ", " + std::to_string(rank - 1) + "], but got " + std::to_string(dim) + ")");
  return dim < 0 ? dim + rank : dim;
}

Array computed_in_float32(const Array& a) {
  const bool half = a.dtype() == DType::Float16 || a.dtype() == DType::BFloat16;
  return half ? ops::astype(a, DType::Float32) : a;
}

Array rounded_back(const Array& a, DType dtype) { return a.dtype() == dtype ? a : ops::astype(a, dtype); }

}  // namespace jiasu::dnn
