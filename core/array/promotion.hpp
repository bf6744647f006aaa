// NumPy's type promotion between dtypes (np.promote_types, np.can_cast), shared by the kernel front end
// (frontend/promote.cpp, which adds NEP 50's weak Python literals on top) and the array operations (ops/).
#pragma once

#include <optional>

#include "array/dtype.hpp"

namespace jiasu {

// bool < integers < floats < complex: the "kind" order NumPy promotes along.
enum class Category : uint8_t { Bool, Integer, Float, Complex };
Category category(DType d);

// np.promote_types: int64 with uint64 is float64; float16 with bfloat16 is float32; bfloat16 holds (u)int8 as
// float16 does; a complex type's parts promote as floats (complex64 with int32 is complex128). Always a value.
std::optional<DType> promote_types(DType a, DType b);
// The type a Python literal of `weak` category (Integer or Float; Bool is never weak) takes beside a value of
// dtype `strong` (NEP 50): the strong dtype unless the literal is of a higher kind, then int64 / float64.
DType promote_weak(Category weak, DType strong);
// np.can_cast(from, to, "safe"): the promotion of the two is `to`.
bool can_cast_safe(DType from, DType to);
// np.can_cast(from, to, "same_kind"): safe, or within the kind order bool < unsigned < signed < float.
bool can_cast_same_kind(DType from, DType to);

}  // namespace jiasu
