// Inside the elementwise engine: what apply() hands each backend once types, shapes and devices are settled.
#pragma once

#include "ops/elementwise.hpp"
#include "ops/iteration.hpp"

namespace jiasu::ops::detail {

// out = op(inputs): `out` has the broadcast shape and any dtype the result may cast to; each input is
// converted to r.loop[i] on the way in. The arrays are held and on out's device.
// With `custom`, its loop instead of op's (the inputs are then of their loop types already).
void run_cpu(Ufunc op, const Resolution& r, const Operand* inputs, int count, const Array& out,
             const CustomLoop* custom = nullptr);
void run_cuda(Ufunc op, const Resolution& r, const Operand* inputs, int count, const Array& out,
              const CustomLoop* custom = nullptr);

// The scalar's value converted to `to` (kernel_runtime.h's cast): itemsize(to) bytes at `bytes`.
void scalar_bytes(const Scalar& s, DType to, void* bytes);

}  // namespace jiasu::ops::detail
