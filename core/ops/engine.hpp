// Inside the elementwise engine: what apply() hands each backend once types, shapes and devices are settled.
#pragma once

#include "ops/elementwise.hpp"
#include "ops/iteration.hpp"

namespace jiasu::ops::detail {

// out = op(inputs): `out` has the broadcast shape and any dtype the result may cast to; each input is
// converted to r.loop[i] on the way in. The arrays are held and on out's device.
void run_cpu(Ufunc op, const Resolution& r, const Operand* inputs, int count, const Array& out);
void run_cuda(Ufunc op, const Resolution& r, const Operand* inputs, int count, const Array& out);

// The scalar's value converted to `to` (kernel_runtime.h's cast): itemsize(to) bytes at `bytes`.
void scalar_bytes(const Scalar& s, DType to, void* bytes);

}  // namespace jiasu::ops::detail
