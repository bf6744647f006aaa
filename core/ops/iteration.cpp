#include "ops/iteration.hpp"

#include "support/error.hpp"

namespace jiasu::ops {

Iteration make_iteration(const Shape& shape, const Layout* const* layouts, int operands) {
  Iteration it;
  it.operands = operands;
  const int ndim = static_cast<int>(shape.size());
  if (ndim > kMaxDims) throw BadValue("arrays of more than 64 dimensions are not supported");
  for (int64_t extent : shape) it.size *= extent;
  if (it.size == 0) return it;
  // Outermost first; extent-1 dimensions dropped.
  for (int d = 0; d < ndim; ++d) {
    if (shape[d] == 1) continue;
    const int at = it.ndim++;
    it.shape[at] = shape[d];
    for (int k = 0; k < operands; ++k) {
      const Layout* layout = layouts[k];
      if (!layout) continue;
      const int shift = ndim - static_cast<int>(layout->shape.size());
      const int own = d - shift;  // the operand's own dimension, if it has one
      it.strides[k][at] = own >= 0 && layout->shape[own] != 1 ? layout->strides[own] : 0;
    }
  }
  // Merge dimension d into d + 1 where every operand steps through d as through d + 1's whole extent.
  int kept = 0;
  for (int d = 0; d < it.ndim; ++d) {
    if (kept > 0) {
      const int inner = d, outer = kept - 1;
      bool mergeable = true;
      for (int k = 0; k < operands && mergeable; ++k)
        mergeable = it.strides[k][outer] == it.strides[k][inner] * it.shape[inner];
      if (mergeable) {
        it.shape[outer] *= it.shape[inner];
        for (int k = 0; k < operands; ++k) it.strides[k][outer] = it.strides[k][inner];
        continue;
      }
    }
    it.shape[kept] = it.shape[d];
    for (int k = 0; k < operands; ++k) it.strides[k][kept] = it.strides[k][d];
    ++kept;
  }
  it.ndim = kept;
  return it;
}

}  // namespace jiasu::ops
