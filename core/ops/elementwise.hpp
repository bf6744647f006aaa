// The elementwise engine: one engine for every operation of ops/ufuncs.def and every dtype, on both
// backends. A call resolves the types (NumPy's ufunc rules, NEP 50 weak Python scalars: type_rules.cpp),
// broadcasts the operands, collapses their dimensions (iteration.hpp) and runs one loop: on the CPU
// backend a loop compiled into the core (elementwise_cpu.cpp), on a GPU a generated kernel compiled once
// per (operation, dtypes, layout class) and cached (elementwise_cuda.cpp).
//
// Other array operations reuse it: assign() is the strided, broadcasting, casting copy (a[...] = b,
// copies of strided views, concatenation); dispatch_dtype() and the kernel cache in elementwise_cuda.hpp
// serve reductions and other generated kernels.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "array/array.hpp"
#include "array/promotion.hpp"
#include "support/error.hpp"

namespace jiasu::ops {

enum class Ufunc : uint8_t {
#define JIASU_UFUNC(id, name, arity, rule, loops, functor) id,
#include "ops/ufuncs.def"
#undef JIASU_UFUNC
};
constexpr int kUfuncCount = 0
#define JIASU_UFUNC(id, name, arity, rule, loops, functor) +1
#include "ops/ufuncs.def"
#undef JIASU_UFUNC
    ;

enum class TypeRule : uint8_t { Arith, NoBool, Compare, Divide, Predicate, Logical, Where, Cast, Activation };

// Sets of dtypes (bit i: DType i) an operation has loops for.
constexpr uint32_t bit(DType d) { return 1u << static_cast<int>(d); }
constexpr uint32_t kBool = bit(DType::Bool);
constexpr uint32_t kInts = bit(DType::Int8) | bit(DType::Int16) | bit(DType::Int32) | bit(DType::Int64) |
                           bit(DType::UInt8) | bit(DType::UInt16) | bit(DType::UInt32) | bit(DType::UInt64);
constexpr uint32_t kFloats = bit(DType::Float16) | bit(DType::BFloat16) | bit(DType::Float32) | bit(DType::Float64);
constexpr uint32_t kBoolInts = kBool | kInts;
constexpr uint32_t kNumbers = kInts | kFloats;
constexpr uint32_t kAllReal = kBool | kInts | kFloats;
constexpr uint32_t kComplex = bit(DType::Complex64) | bit(DType::Complex128);

struct UfuncInfo {
  Ufunc id;
  const char* name;
  int arity;
  TypeRule rule;
  uint32_t loops;
};
const UfuncInfo& info(Ufunc op);
std::optional<Ufunc> ufunc_named(std::string_view name);
// The operation's Python name, in messages: "jiasu.add", "jiasu.nn.relu".
std::string qualified_name(Ufunc op);

// A Python number or NumPy scalar operand. Python's int, float and complex are weak (NEP 50: they take the other
// operands' type where it is of their kind); NumPy's scalars are strong, like 0-d arrays of their dtype.
struct Scalar {
  DType dtype = DType::Float64;  // strong: its dtype; weak: Int64 for an int, Float64 for a float
  bool weak = false;
  // The value: exactly one of these, by dtype's kind (an int beyond int64 but within uint64 sits in u).
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0;
  double imag = 0;               // a complex value's imaginary part (its real part is f)
  bool beyond_int64 = false;    // a weak int in u
  bool beyond_uint64 = false;   // a weak int that no integer type holds; f has its approximate value
};

// An input: an array or a scalar.
struct Operand {
  const Array* array = nullptr;
  Scalar scalar;
  DType dtype() const { return array ? array->dtype() : scalar.dtype; }
};

// The types of a call: each input's loop type, and the result's.
struct Resolution {
  DType loop[3] = {};
  DType result = DType::Bool;
};

// NumPy's type resolution for `op` on these inputs. `cast_to` is the result type of TypeRule::Cast. Throws
// BadArgument naming the operation and the dtypes when no loop takes them, ScalarOverflow for a weak int
// the loop's integer type cannot hold.
Resolution resolve_types(Ufunc op, const Operand* inputs, int count, DType cast_to = DType::Bool);

// A Python integer out of bounds for the type it is converted to: Python's OverflowError.
struct ScalarOverflow : BadValue {
  using BadValue::BadValue;
};
// Throws ScalarOverflow for a weak Python int among the inputs that its loop type loop[i] cannot hold.
void check_weak_ints(const Operand* inputs, int count, const DType* loop);


// The operation on these inputs (count == info(op).arity), into `out` when given (it must have the
// broadcast shape; the result casts to it under NumPy's 'same_kind' rule, else BadArgument), else into a
// new array on the inputs' device. Inputs and out must share one device: InvalidArrayError otherwise.
// At least one input must be an array.
Array apply(Ufunc op, const Operand* inputs, int count, const Array* out = nullptr);

// The bits of a custom loop's id, which the GPU kernel cache's key holds above its own fields.
constexpr int kCustomLoopIdBits = 15;

// A loop that ops/ufuncs.def does not have: a user's scalar function (ops/user_function.hpp), compiled for
// the backend of the call, taking its inputs at the dtypes `loop` and giving `result`.
struct CustomLoop {
  using CpuLoop = void (*)(char* const* data, const int64_t* strides, int64_t n);
  std::string name;                // the function's, in messages
  int arity = 0;
  DType loop[3] = {};
  DType result = DType::Bool;
  uint64_t id = 0;                 // unique in the process, below 2^kCustomLoopIdBits: the GPU kernel cache's key
  std::string cuda_definitions;    // GPU: __device__ definitions, of which cuda_function is called
  std::string cuda_function;
  CpuLoop cpu_loop = nullptr;      // CPU backend: data[0] out, data[1..] inputs, byte strides, n elements
};

// The custom loop on these inputs (count == loop.arity; each array of its loop dtype, scalars converted to it):
// broadcast as apply() does, into `out` (same_kind cast) or a new array of loop.result.
Array apply(const CustomLoop& loop, const Operand* inputs, int count, const Array* out = nullptr);

// Each input's dtype as a function of all its inputs' dtypes sees it: arrays' and NumPy scalars' own, and each
// weak Python scalar's per NEP 50 (the others' promotion where of its kind or higher).
void input_dtypes(const Operand* inputs, int count, DType* types);

// dst[...] = src: src broadcast to dst's shape and converted to its dtype (any cast, as NumPy's
// assignment), through strided views on either side, on the arrays' device.
void assign(const Array& dst, const Array& src);
void assign(const Array& dst, const Scalar& value);
// A C-contiguous copy converted to `dtype`.
Array astype(const Array& a, DType dtype);

}  // namespace jiasu::ops
