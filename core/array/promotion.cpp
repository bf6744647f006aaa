#include "array/promotion.hpp"

namespace jiasu {
namespace {

int bits(DType d) { return 8 * info(d).itemsize; }
bool is_signed(DType d) { return info(d).kind == DTypeKind::Signed; }

DType signed_of_bits(int b) {
  switch (b) {
    case 8: return DType::Int8;
    case 16: return DType::Int16;
    case 32: return DType::Int32;
    default: return DType::Int64;
  }
}

DType promote_integers(DType a, DType b) {
  if (is_signed(a) == is_signed(b)) return bits(a) >= bits(b) ? a : b;
  DType s = is_signed(a) ? a : b;
  DType u = is_signed(a) ? b : a;
  if (bits(s) > bits(u)) return s;
  if (bits(u) < 64) return signed_of_bits(2 * bits(u));
  return DType::Float64;  // int64 with uint64: no integer holds both
}

// float16 and bfloat16 trade range for precision differently, so only float32 holds both.
DType promote_floats(DType a, DType b) {
  if (a == b) return a;
  if (bits(a) == 16 && bits(b) == 16) return DType::Float32;
  return bits(a) >= bits(b) ? a : b;
}

// The smallest float NumPy holds an integer type in: (u)int8 -> float16, (u)int16 -> float32, else float64.
DType float_for_integer(DType d) {
  if (bits(d) == 8) return DType::Float16;
  if (bits(d) == 16) return DType::Float32;
  return DType::Float64;
}

// NumPy's kind letters in can_cast's order: b < u < i < f.
int kind_rank(DType d) {
  switch (info(d).kind) {
    case DTypeKind::Bool: return 0;
    case DTypeKind::Unsigned: return 1;
    case DTypeKind::Signed: return 2;
    case DTypeKind::Float: return 3;
    case DTypeKind::Complex: return 4;
  }
  return 4;
}

// The complex type whose parts are of float type f: float16, bfloat16 and float32 fit complex64.
DType complex_of(DType f) { return bits(f) <= 32 ? DType::Complex64 : DType::Complex128; }
DType part_of(DType c) { return c == DType::Complex64 ? DType::Float32 : DType::Float64; }

}  // namespace

Category category(DType d) {
  switch (info(d).kind) {
    case DTypeKind::Bool: return Category::Bool;
    case DTypeKind::Signed:
    case DTypeKind::Unsigned: return Category::Integer;
    case DTypeKind::Float: return Category::Float;
    case DTypeKind::Complex: return Category::Complex;
  }
  return Category::Complex;
}

std::optional<DType> promote_types(DType a, DType b) {
  Category ca = category(a), cb = category(b);
  if (ca == Category::Complex || cb == Category::Complex) {
    if (ca == Category::Bool) return b;
    if (cb == Category::Bool) return a;
    // The parts' promotion: complex64 with int16 stays complex64, with int32 or float64 is complex128.
    auto part = [](DType d) { return category(d) == Category::Complex ? part_of(d) : category(d) == Category::Integer
                                                                                    ? float_for_integer(d) : d; };
    return complex_of(*promote_types(part(a), part(b)));
  }
  if (ca == Category::Bool) return b;
  if (cb == Category::Bool) return a;
  if (ca == Category::Integer && cb == Category::Integer) return promote_integers(a, b);
  if (ca == Category::Float && cb == Category::Float) return promote_floats(a, b);
  DType i = ca == Category::Integer ? a : b;
  DType f = ca == Category::Float ? a : b;
  DType holds_i = float_for_integer(i);
  return bits(holds_i) <= bits(f) ? f : promote_floats(holds_i, f);  // bfloat16 holds int8 as float16 does
}

DType promote_weak(Category weak, DType strong) {
  if (weak <= category(strong)) return strong;
  if (weak == Category::Complex)  // a Python complex keeps a float's precision: float32 + 1j is complex64
    return category(strong) == Category::Float ? complex_of(strong) : DType::Complex128;
  return weak == Category::Integer ? DType::Int64 : DType::Float64;  // bool + 1 -> int64, int32 + 1.0 -> float64
}

bool can_cast_safe(DType from, DType to) {
  if (from == to) return true;
  std::optional<DType> both = promote_types(from, to);
  return both && *both == to;
}

bool can_cast_same_kind(DType from, DType to) {
  return can_cast_safe(from, to) || kind_rank(from) <= kind_rank(to);
}

}  // namespace jiasu
