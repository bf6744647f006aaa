// NumPy's ufunc type resolution with NEP 50's weak Python scalars, for the rules of ops/ufuncs.def.
#include <string>

#include "ops/elementwise.hpp"
#include "ops/iteration.hpp"

namespace jiasu::ops {
namespace {

constexpr UfuncInfo kUfuncs[kUfuncCount] = {
#define JIASU_UFUNC(id, name, arity, rule, loops, functor) {Ufunc::id, name, arity, TypeRule::rule, loops},
#include "ops/ufuncs.def"
#undef JIASU_UFUNC
};

// NumPy's order of loops (bool, then integers by size with signed first, then floats): the loop search
// takes the first type of an operation's loops that the operands cast to safely.
constexpr DType kLoopOrder[] = {DType::Bool,   DType::Int8,    DType::UInt8,    DType::Int16,   DType::UInt16,
                                DType::Int32,  DType::UInt32,  DType::Int64,    DType::UInt64,  DType::Float16,
                                DType::BFloat16, DType::Float32, DType::Float64, DType::Complex64,
                                DType::Complex128};

std::string dtype_list(const Operand* inputs, int count) {
  std::string names;
  for (int i = 0; i < count; ++i) {
    names += i ? ", " : "";
    names += inputs[i].array || !inputs[i].scalar.weak ? info(inputs[i].dtype()).name
             : inputs[i].scalar.dtype == DType::Float64  ? "Python float"
             : inputs[i].scalar.dtype == DType::Complex128 ? "Python complex" : "Python int";
  }
  return names;
}

[[noreturn]] void unsupported(Ufunc op, const Operand* inputs, int count, const char* why = nullptr) {
  std::string message = qualified_name(op) + " is not supported for " +
                        (count == 1 ? "dtype " : "dtypes (") + dtype_list(inputs, count) + (count == 1 ? "" : ")");
  if (why) message += std::string(": ") + why;
  throw BadArgument(message);
}

// Whether a weak Python int fits in integer type `d`.
bool fits(const Scalar& s, DType d) {
  if (s.beyond_uint64) return false;
  const int bits = 8 * info(d).itemsize;
  if (info(d).kind == DTypeKind::Unsigned) {
    if (s.beyond_int64) return bits == 64;
    return s.i >= 0 && (bits == 64 || s.i < (int64_t(1) << bits));
  }
  if (s.beyond_int64) return false;
  return bits == 64 || (s.i >= -(int64_t(1) << (bits - 1)) && s.i < (int64_t(1) << (bits - 1)));
}

std::string int_text(const Scalar& s) {
  return s.beyond_uint64 ? "beyond 64 bits" : s.beyond_int64 ? std::to_string(s.u) : std::to_string(s.i);
}

bool is_integer(DType d) { return category(d) == Category::Integer; }

// The types of inputs [first, count) as the loop search sees them: each array's and NumPy scalar's own,
// each weak Python scalar's per NEP 50 (the others' promotion where of its kind or higher); and their
// promotion in *all.
int operand_types(const Operand* inputs, int first, int count, DType* types, DType* all) {
  std::optional<DType> strong;
  Category weak = Category::Bool;
  for (int i = first; i < count; ++i) {
    const Operand& in = inputs[i];
    if (!in.array && in.scalar.weak) {
      weak = std::max(weak, category(in.scalar.dtype));
      continue;
    }
    strong = strong ? *promote_types(*strong, in.dtype()) : in.dtype();  // promotion always has a value
  }
  int n = 0;
  for (int i = first; i < count; ++i) {
    const Operand& in = inputs[i];
    if (in.array || !in.scalar.weak) types[n++] = in.dtype();
    else if (strong) types[n++] = promote_weak(category(in.scalar.dtype), *strong);
    else types[n++] = weak == Category::Complex ? DType::Complex128 : weak == Category::Float ? DType::Float64
                                                                                               : DType::Int64;
  }
  *all = types[0];
  for (int i = 1; i < n; ++i) *all = *promote_types(*all, types[i]);
  return n;
}

// NumPy's loop search: the first loop type every operand type casts to safely.
std::optional<DType> search_loop(uint32_t loops, const DType* types, int n) {
  for (DType d : kLoopOrder) {
    if (!(loops & bit(d))) continue;
    bool all = true;
    for (int i = 0; i < n && all; ++i) all = can_cast_safe(types[i], d);
    if (all) return d;
  }
  return std::nullopt;
}

}  // namespace

const UfuncInfo& info(Ufunc op) { return kUfuncs[static_cast<int>(op)]; }

std::string qualified_name(Ufunc op) {
  return (info(op).rule == TypeRule::Activation ? "jiasu.nn." : "jiasu.") + std::string(info(op).name);
}

void input_dtypes(const Operand* inputs, int count, DType* types) {
  DType all;
  if (count > 0) operand_types(inputs, 0, count, types, &all);
}

std::optional<Ufunc> ufunc_named(std::string_view name) {
  for (const UfuncInfo& u : kUfuncs)
    if (name == u.name) return u.id;
  return std::nullopt;
}

Resolution resolve_types(Ufunc op, const Operand* inputs, int count, DType cast_to) {
  const UfuncInfo& u = info(op);
  Resolution r;
  const int first = u.rule == TypeRule::Where ? 1 : 0;
  switch (u.rule) {
    case TypeRule::Cast:
      r.loop[0] = r.result = cast_to;
      break;
    case TypeRule::Logical:
      for (int i = 0; i < count; ++i) r.loop[i] = DType::Bool;
      r.result = DType::Bool;
      break;
    case TypeRule::Predicate: {
      DType type = DType::Bool;
      operand_types(inputs, 0, 1, &type, &r.loop[0]);
      r.result = DType::Bool;
      break;
    }
    default: {
      DType types[3] = {}, all = DType::Bool;
      const int n = operand_types(inputs, first, count, types, &all);
      if (u.rule == TypeRule::NoBool && all == DType::Bool)
        unsupported(op, inputs, count, "NumPy has no boolean version of it either");
      if (u.rule == TypeRule::Activation && category(all) != Category::Float)
        unsupported(op, inputs, count, "it takes float16, bfloat16, float32 or float64 arrays");
      // True division of integers (and bool) runs in float64.
      const bool true_division = u.rule == TypeRule::Divide && category(all) <= Category::Integer;
      if (true_division) types[0] = DType::Float64;
      std::optional<DType> loop = search_loop(u.loops, types, true_division ? 1 : n);
      if (!loop) unsupported(op, inputs, count);
      // A Python int beyond the range of an integer comparison's type: compared exactly in a wider type,
      // as NumPy does (uint8 == -1 is False).
      if (u.rule == TypeRule::Compare && is_integer(*loop))
        for (int i = 0; i < count; ++i)
          if (!inputs[i].array && inputs[i].scalar.weak && is_integer(inputs[i].scalar.dtype) &&
              !fits(inputs[i].scalar, *loop))
            loop = inputs[i].scalar.beyond_int64 || inputs[i].scalar.beyond_uint64 ? DType::Float64
                                                                                  : *promote_types(*loop, DType::Int64);
      for (int i = first; i < count; ++i) r.loop[i] = *loop;
      if (first) r.loop[0] = DType::Bool;
      r.result = u.rule == TypeRule::Compare ? DType::Bool : *loop;
    }
  }
  check_weak_ints(inputs, count, r.loop);
  return r;
}

void check_weak_ints(const Operand* inputs, int count, const DType* loop) {
  for (int i = 0; i < count; ++i) {
    const Scalar& s = inputs[i].scalar;
    if (!inputs[i].array && s.weak && is_integer(s.dtype) && is_integer(loop[i]) && !fits(s, loop[i]))
      throw ScalarOverflow("Python integer " + int_text(s) + " out of bounds for " + info(loop[i]).name);
  }
}

}  // namespace jiasu::ops
