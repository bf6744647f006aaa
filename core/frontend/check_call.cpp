// check(): calls. A dtype called is a cast, a builtin is typed by its rule (builtins.def), and a
// @jiasu.func is specialised for its argument types (once per distinct types in a Program).
#include <algorithm>
#include <cctype>
#include <cstdint>

#include "frontend/checker.hpp"
#include "support/cuda_limits.hpp"

namespace jiasu::fe::checking {
namespace {

constexpr size_t kAny = SIZE_MAX;

std::string dtype_names(const std::vector<DType>& dtypes) {
  std::string out;
  for (DType d : dtypes) out += (out.empty() ? "" : ", ") + std::string(info(d).name);
  return out;
}

std::vector<DType> atomic_dtypes(const Builtin& b) {
  switch (b.rule) {
    case BuiltinRule::AtomicUnsigned: return {DType::UInt32, DType::UInt64};
    case BuiltinRule::AtomicInt:
    case BuiltinRule::AtomicCas: return {DType::Int32, DType::UInt32, DType::Int64, DType::UInt64};
    default: break;
  }
  std::vector<DType> all = {DType::Int32, DType::UInt32, DType::Int64, DType::UInt64, DType::Float32, DType::Float64};
  if (b.id == BuiltinId::AtomicAdd) all.push_back(DType::Float16);
  return all;
}

// float32 for float32 and the half types, float64 for the others: what frexp and ldexp compute in.
Type float_part(const Type& t) {
  const bool single = t.dtype == DType::Float32 || t.dtype == DType::Float16 || t.dtype == DType::BFloat16;
  return Type::scalar(single ? DType::Float32 : DType::Float64);
}

// A cuda.libdevice function's arguments: how many, all converted to the precision of its name, which is its
// result's too (libdevice.sinf: float32, libdevice.sin: float64).
struct LibdeviceSignature {
  size_t arity;
  DType dtype;
};
LibdeviceSignature libdevice_signature(BuiltinRule rule) {
  switch (rule) {
    case BuiltinRule::Float32Math1: return {1, DType::Float32};
    case BuiltinRule::Float32Math2: return {2, DType::Float32};
    case BuiltinRule::Float32Math3: return {3, DType::Float32};
    case BuiltinRule::Float64Math1: return {1, DType::Float64};
    case BuiltinRule::Float64Math2: return {2, DType::Float64};
    default: return {3, DType::Float64};
  }
}

// Whether a call is spelled np.f(...): NumPy's functions take complex numbers where math's do not.
bool spelled_with_numpy(const Expr& call) {
  const Expr& callee = *call.args[0];
  return callee.kind == ExprKind::Attribute && callee.args[0]->type.kind == TypeKind::Module &&
         callee.args[0]->type.name == "numpy";
}

// "sqrt" for math.sqrt.
std::string short_name(const Builtin& b) {
  std::string path = b.path;
  return path.substr(path.rfind('.') + 1);
}

// The cmath row of a math row (cmath.sqrt for math.sqrt), -1 where cmath has none.
int complex_twin(const Builtin& b) { return find_builtin("cmath." + short_name(b)); }

}  // namespace

Type Checker::visit_call(Expr& e) {
  if (std::any_of(e.args.begin(), e.args.end(), [](const ExprPtr& arg) { return arg->unpacked; })) expand_unpacked(e);
  if (rewrite_operator_ufunc(e)) return visit_kind(e);  // np.add(a, b) is a + b
  Expr& callee = *e.args[0];
  const char* method = callee.kind != ExprKind::Attribute ? nullptr
                       : callee.name == "conjugate"     ? "numpy.conjugate"  // z.conjugate() is np.conjugate(z)
                       : callee.name == "bit_count"     ? "int.bit_count"
                       : callee.name == "sync"          ? "grid_group.sync"  // g.sync() of g = cg.this_grid()
                       : callee.name == "reshape"       ? "ndarray.reshape"
                       : callee.name == "view"          ? "ndarray.view"
                                                        : nullptr;
  const Type* object = method ? &visit(*callee.args[0]) : nullptr;
  const TypeKind object_kind = callee.name == "sync"                              ? TypeKind::GridGroup
                               : callee.name == "reshape" || callee.name == "view" ? TypeKind::Array
                                                                                   : TypeKind::Scalar;
  if (object && object->kind == object_kind) {
    if (object_kind != TypeKind::Array && (e.args.size() != 1 || !e.keywords.empty()))
      fail(start_of(e), callee.name + "() takes no arguments");
    ExprPtr value = std::move(callee.args[0]);
    callee.kind = ExprKind::Name;
    callee.name = method;  // a dotted name: one only check() makes (visit_name)
    callee.args.clear();
    callee.meaning = Meaning::Builtin;
    callee.builtin = find_builtin(method);
    callee.type = type_of_kind(TypeKind::Function);
    callee.type.name = method;
    e.args.insert(e.args.begin() + 1, std::move(value));  // the object is the first argument
    e.meaning = Meaning::Builtin;
    e.builtin = callee.builtin;
    return call_builtin(e, builtin(callee.builtin));
  }
  const Type& type = visit(callee);
  if (callee.meaning == Meaning::Builtin && type.kind == TypeKind::Function) {
    e.meaning = Meaning::Builtin;
    e.builtin = callee.builtin;
    return call_builtin(e, builtin(callee.builtin));
  }
  if (callee.meaning == Meaning::DTypeValue) return cast(e, type.dtype);
  if (callee.meaning == Meaning::DeviceFunction) return call_device(e);
  if (callee.meaning == Meaning::External) return call_external(e, *callee.external);
  if (callee.meaning == Meaning::VectorType) return make_vector(e);
  fail(start_of(callee), "'" + describe(callee) + "' is not callable: it is " + to_string(type));
}

// The positional arguments of a builtin call, typed, after checking their number.
std::vector<Expr*> Checker::arguments(Expr& call, size_t min, size_t max) {
  std::string name = describe(*call.args[0]) + "()";
  if (!call.keywords.empty()) fail(start_of(*call.keywords[0].second), name + " takes no keyword arguments");
  size_t given = call.args.size() - 1;
  if (given < min || given > max) {
    std::string expected = min == max ? plural(min, "argument")
                           : max == kAny ? "at least " + plural(min, "argument")
                                         : std::to_string(min) + " to " + plural(max, "argument");
    fail(start_of(call), name + " takes " + expected + " (" + std::to_string(given) + " given)");
  }
  std::vector<Expr*> args;
  for (size_t i = 1; i < call.args.size(); ++i) {
    visit(*call.args[i]);
    args.push_back(call.args[i].get());
  }
  return args;
}

const Type& Checker::number(const Expr& e, const std::string& what) const {
  if (is_complex(e.type)) fail(start_of(e), what + " needs a real number, not " + to_string(e.type));
  if (!is_number(e.type)) fail(start_of(e), what + " needs a number, not " + to_string(e.type));
  return e.type;
}

const Type& Checker::real_or_complex(const Expr& e, const std::string& what) const {
  if (!is_number(e.type)) fail(start_of(e), what + " needs a number, not " + to_string(e.type));
  return e.type;
}

const Type& Checker::integer(const Expr& e, const std::string& what, bool bool_ok) const {
  if (!e.type.is_integer() && !(bool_ok && is_bool(e.type)))
    fail(start_of(e), what + " needs an integer" + (bool_ok ? " or a bool" : "") + ", not " + to_string(e.type));
  return e.type;
}

Type Checker::cast(Expr& e, DType dtype) {
  std::string name = describe(*e.args[0]) + "()";
  std::vector<Expr*> args = arguments(e, 1, 1);
  if (info(dtype).kind == DTypeKind::Complex) real_or_complex(*args[0], name);
  else number(*args[0], name);
  e.meaning = Meaning::DTypeValue;
  return Type::scalar(dtype);
}

// A cuda.declare_device function: numbers converted to its parameters' types, as Numba converts them.
Type Checker::call_external(Expr& e, const ExternalFunction& f) {
  const std::string name = describe(*e.args[0]) + "()";
  const std::vector<Expr*> args = arguments(e, f.params.size(), f.params.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (info(f.params[i]).kind == DTypeKind::Complex) real_or_complex(*args[i], name);
    else number(*args[i], name);
  }
  // Its definition: the compilers' own messages about a missing one (a link or load error) would not say where.
  auto defines = [&](const LinkedFile& file) {
    for (size_t at = file.text.find(f.name); at != std::string::npos; at = file.text.find(f.name, at + 1)) {
      const size_t end = at + f.name.size();
      auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
      if ((at == 0 || !word(file.text[at - 1])) && (end == file.text.size() || !word(file.text[end]))) return true;
    }
    return false;
  };
  if (std::none_of(session_.program.linked.begin(), session_.program.linked.end(), defines))
    fail(start_of(e), name + " is the external function '" + f.name + "', which no linked file names: give the CUDA "
                      "C++ file that defines it as link= to cuda.declare_device or to the kernel");
  e.meaning = Meaning::External;
  e.external = &f;
  return Type::scalar(f.result);
}

Type Checker::call_builtin(Expr& e, const Builtin& b) {
  std::string name = describe(*e.args[0]) + "()";
  switch (b.rule) {
    case BuiltinRule::Range: {
      if (&e != range_call_) fail(start_of(e), "range() can only be the iterable of a for loop");
      std::vector<Expr*> args = arguments(e, 1, 3);
      for (Expr* a : args) integer(*a, name);
      if (args.size() == 3 && constant_int(*args[2]) == 0) fail(start_of(*args[2]), "range() step must not be zero");
      return type_of_kind(TypeKind::Range);
    }
    case BuiltinRule::Len: {
      Expr& arg = *arguments(e, 1, 1)[0];
      if (arg.type.kind == TypeKind::Tuple) {
        make_constant_int(e, static_cast<int64_t>(arg.type.items.size()));  // a Python int, known now
        return Type::scalar(DType::Int64, true);
      }
      if (arg.type.kind != TypeKind::Array) fail(start_of(arg), "len() needs an array or a tuple, not " + to_string(arg.type));
      if (arg.type.ndim == 0) fail(start_of(arg), "len() of a 0-d array");
      if (const Variable* array = static_array(arg)) {
        if (array->shape[0] == 0) fail(start_of(arg), "the size of dynamic shared array '" + arg.name + "' is only known at launch");
        make_constant_int(e, array->shape[0]);
      }
      return Type::scalar(DType::Int64);
    }
    case BuiltinRule::MinMax: {  // np.maximum & co. order complex numbers as NumPy does, min() and max() do not
      Type result;
      const bool numpy = spelled_with_numpy(e);
      for (Expr* a : arguments(e, 2, kAny)) {
        const Type& t = numpy ? real_or_complex(*a, name) : number(*a, name);
        result = result.kind == TypeKind::Unknown ? t : promote(result, t);
      }
      return result;
    }
    case BuiltinRule::SameNumeric1: {  // abs(): of a complex number, its magnitude
      const Type& t = real_or_complex(*arguments(e, 1, 1)[0], name);
      return is_bool(t) ? Type::scalar(DType::Int64) : real_part(t);
    }
    case BuiltinRule::Round: {
      std::vector<Expr*> args = arguments(e, 1, 2);
      const Type& t = number(*args[0], name);
      if (args.size() == 1) return Type::scalar(DType::Int64);
      integer(*args[1], name + "'s ndigits");
      return is_bool(t) ? Type::scalar(DType::Int64) : t;
    }
    case BuiltinRule::CastInt64:
      number(*arguments(e, 1, 1)[0], name);
      return Type::scalar(DType::Int64);
    case BuiltinRule::CastFloat64:
      number(*arguments(e, 1, 1)[0], name);
      return Type::scalar(DType::Float64);
    case BuiltinRule::CastBool:
      real_or_complex(*arguments(e, 1, 1)[0], name);
      return Type::scalar(DType::Bool);
    case BuiltinRule::FloatMath1: {
      const Type& t = real_or_complex(*arguments(e, 1, 1)[0], name);
      const bool numpy_complex = complex_twin(b) >= 0 || b.id == BuiltinId::Log2;  // np.log2 takes complex too
      if (is_complex(t) && !(spelled_with_numpy(e) && numpy_complex))
        fail(start_of(*e.args[1]), name + " needs a real number, not " + to_string(t) +
                                       (complex_twin(b) >= 0 ? " (cmath." + short_name(b) + " takes complex numbers)" : ""));
      return float_result(t);
    }
    case BuiltinRule::ComplexMath1: {  // cmath.exp(z), ...; cmath.log(z, base)
      std::vector<Expr*> args = arguments(e, 1, b.id == BuiltinId::CmathLog ? 2 : 1);
      Type result;
      for (Expr* a : args)
        result = result.kind == TypeKind::Unknown ? real_or_complex(*a, name) : promote(result, real_or_complex(*a, name));
      return complex_result(result);
    }
    case BuiltinRule::ComplexToReal:  // cmath.phase
      return real_part(complex_result(real_or_complex(*arguments(e, 1, 1)[0], name)));
    case BuiltinRule::ComplexPolar: {
      Type part = real_part(complex_result(real_or_complex(*arguments(e, 1, 1)[0], name)));
      return Type::tuple({part, part});
    }
    case BuiltinRule::ComplexRect: {
      std::vector<Expr*> args = arguments(e, 2, 2);
      return complex_result(float_result(promote(number(*args[0], name), number(*args[1], name))));
    }
    case BuiltinRule::CastComplex: {  // complex(re=0, im=0): Python's complex, complex128
      std::vector<Expr*> args = arguments(e, 0, 2);
      for (Expr* a : args)
        if (args.size() == 2) number(*a, name);
        else real_or_complex(*a, name);
      return Type::scalar(DType::Complex128);
    }
    case BuiltinRule::ComplexPart: {  // np.real(z), np.imag(z), z.real, z.imag
      const Type& t = real_or_complex(*arguments(e, 1, 1)[0], name);
      return is_complex(t) ? real_part(t) : committed(t);
    }
    case BuiltinRule::Conjugate:
      return committed(real_or_complex(*arguments(e, 1, 1)[0], name));
    case BuiltinRule::Frexp: {  // math.frexp(x): (mantissa, exponent), in float32 for float32 (and half) values
      const Type& t = number(*arguments(e, 1, 1)[0], name);
      return Type::tuple({float_part(t), Type::scalar(DType::Int64)});
    }
    case BuiltinRule::Ldexp: {
      std::vector<Expr*> args = arguments(e, 2, 2);
      integer(*args[1], name + "'s exponent", true);
      return float_part(number(*args[0], name));
    }
    case BuiltinRule::Power2: {  // pow(x, y) is x ** y
      std::vector<Expr*> args = arguments(e, 2, 2);
      return binary(Op::Pow, args[0]->type, args[1]->type, e.loc, args[0], args[1]);
    }
    case BuiltinRule::FloatMath2:
    case BuiltinRule::FloatMath3: {
      Type result;
      for (Expr* a : arguments(e, b.rule == BuiltinRule::FloatMath2 ? 2 : 3, b.rule == BuiltinRule::FloatMath2 ? 2 : 3))
        result = result.kind == TypeKind::Unknown ? number(*a, name) : promote(result, number(*a, name));
      return float_result(result);
    }
    case BuiltinRule::Float32Math1: case BuiltinRule::Float32Math2: case BuiltinRule::Float32Math3:
    case BuiltinRule::Float64Math1: case BuiltinRule::Float64Math2: case BuiltinRule::Float64Math3: {
      const LibdeviceSignature signature = libdevice_signature(b.rule);
      for (Expr* a : arguments(e, signature.arity, signature.arity)) number(*a, name);
      return Type::scalar(signature.dtype);
    }
    case BuiltinRule::Print:
      return print(e);
    case BuiltinRule::FloatToInt64:
      number(*arguments(e, 1, 1)[0], name);
      return Type::scalar(DType::Int64);
    case BuiltinRule::FloatPredicate: {  // math.isnan(x); cmath.isnan and np.isnan take complex numbers too
      const Type& t = real_or_complex(*arguments(e, 1, 1)[0], name);
      if (is_complex(t) && !spelled_with_numpy(e) && std::string(b.path).rfind("cmath.", 0) != 0)
        fail(start_of(*e.args[1]), name + " needs a real number, not " + to_string(t) + " (cmath." + short_name(b) +
                                       " takes complex numbers)");
      return Type::scalar(DType::Bool);
    }
    case BuiltinRule::FloatCompare2:
      for (Expr* a : arguments(e, 2, 2)) number(*a, name);
      return Type::scalar(DType::Bool);
    case BuiltinRule::GridN: {
      Expr& arg = *arguments(e, 1, 1)[0];
      auto n = constant_int(arg);
      if (!n || *n < 1 || *n > 3) fail(start_of(arg), name + " needs a constant 1, 2 or 3");
      if (*n == 1) return Type::scalar(DType::Int64);
      return Type::tuple(std::vector<Type>(*n, Type::scalar(DType::Int64)));
    }
    case BuiltinRule::Void0:
      arguments(e, 0, 0);
      return type_of_kind(TypeKind::Void);
    case BuiltinRule::SyncPredicateInt:
    case BuiltinRule::SyncPredicateBool:
      integer(*arguments(e, 1, 1)[0], name, true);
      return Type::scalar(b.rule == BuiltinRule::SyncPredicateInt ? DType::Int32 : DType::Bool);
    case BuiltinRule::SyncWarp:
      for (Expr* mask : arguments(e, 0, 1)) integer(*mask, name + "'s mask");
      return type_of_kind(TypeKind::Void);
    case BuiltinRule::ThisGrid:
      arguments(e, 0, 0);
      fn_.cooperative = true;
      return type_of_kind(TypeKind::GridGroup);
    case BuiltinRule::GridSync:  // g.sync(), rewritten by visit_call: the group is the one argument
      return type_of_kind(TypeKind::Void);
    case BuiltinRule::Reshape:
      return reshape(e);
    case BuiltinRule::ArrayView:
      return view_as(e);
    case BuiltinRule::NewArray:
      return new_array(e, b);
    case BuiltinRule::ConstArrayLike: {  // cuda.const.array_like(G): the global array G, a constant already
      Expr& arg = *arguments(e, 1, 1)[0];
      if (arg.type.kind != TypeKind::Array || arg.type.space != MemorySpace::Constant)
        fail(start_of(arg), name + " takes a global NumPy array (its contents are embedded in the kernel), not " +
                                to_string(arg.type));
      return arg.type;
    }
    case BuiltinRule::Atomic:
    case BuiltinRule::AtomicInt:
    case BuiltinRule::AtomicUnsigned:
      return atomic(e, b, arguments(e, 3, 3));
    case BuiltinRule::AtomicCas:
      if (b.id == BuiltinId::AtomicCompareAndSwap) {  // compare_and_swap(a, old, new) is cas(a, 0, old, new)
        arguments(e, 3, 3);
        e.args.insert(e.args.begin() + 2, std::make_unique<Expr>(ExprKind::Int, e.loc));
        make_constant_int(*e.args[2], 0);
        e.args[2]->type = Type::scalar(DType::Int64, true);
      }
      return atomic(e, b, arguments(e, 4, 4));
    case BuiltinRule::Slice:
      fail(start_of(e), "a slice can only index an array: a[start:stop:step]");
    case BuiltinRule::Shuffle: {
      std::vector<Expr*> args = arguments(e, 3, 3);
      integer(*args[0], name + "'s mask");
      Type value = committed(number(*args[1], name));
      const std::vector<DType> allowed = {DType::Int32, DType::UInt32, DType::Int64, DType::UInt64, DType::Float32, DType::Float64};
      if (std::find(allowed.begin(), allowed.end(), value.dtype) == allowed.end())
        fail(start_of(*args[1]), name + " shuffles " + dtype_names(allowed) + " values, not " + to_string(value));
      integer(*args[2], name + "'s lane");
      return value;
    }
    case BuiltinRule::VoteBallot:
    case BuiltinRule::VoteBool: {
      std::vector<Expr*> args = arguments(e, 2, 2);
      integer(*args[0], name + "'s mask");
      integer(*args[1], name + "'s predicate", true);
      return Type::scalar(b.rule == BuiltinRule::VoteBallot ? DType::UInt32 : DType::Bool);
    }
    case BuiltinRule::Mask0:
      arguments(e, 0, 0);
      return Type::scalar(DType::UInt32);
    case BuiltinRule::BitCount:
      integer(*arguments(e, 1, 1)[0], name);
      return Type::scalar(DType::Int32);
    case BuiltinRule::SameInteger1: {
      const Type& t = integer(*arguments(e, 1, 1)[0], name);
      return Type::scalar(itemsize(t.dtype) <= 4 ? DType::UInt32 : DType::UInt64);
    }
    default:  // values (jiasu.threadIdx.x, math.pi) are typed as attributes and never reach a call
      break;
  }
  fail(start_of(e), name + " is not callable");
}

// shared.array(shape, dtype) / local.array(shape, dtype): the shape must be known at compile time.
Type Checker::new_array(Expr& e, const Builtin& b) {
  std::string name = describe(*e.args[0]) + "()";
  if (&e != new_array_call_) fail(start_of(e), name + " must be assigned directly to a variable of its own");
  if (e.args.size() > 3) fail(start_of(*e.args[3]), name + " takes a shape and a dtype");
  ExprPtr slots[2];
  for (size_t i = 1; i < e.args.size(); ++i) slots[i - 1] = std::move(e.args[i]);
  for (auto& [keyword, value] : e.keywords) {
    int slot = keyword == "shape" ? 0 : keyword == "dtype" ? 1 : -1;
    if (slot < 0) fail(start_of(*value), name + " got an unexpected keyword argument '" + keyword + "'");
    if (slots[slot]) fail(start_of(*value), name + " got multiple values for argument '" + keyword + "'");
    slots[slot] = std::move(value);
  }
  e.keywords.clear();
  e.args.resize(1);
  if (!slots[0] || !slots[1]) fail(start_of(e), name + " needs a shape and a dtype");
  e.args.push_back(std::move(slots[0]));
  e.args.push_back(std::move(slots[1]));
  Expr& shape = *e.args[1];
  Expr& dtype = *e.args[2];
  visit(shape);
  visit(dtype);

  std::vector<int64_t> dims;
  std::vector<Expr*> extents;
  if (shape.kind == ExprKind::Tuple)
    for (ExprPtr& item : shape.args) extents.push_back(item.get());
  else
    extents.push_back(&shape);
  for (Expr* extent : extents) {
    std::optional<int64_t> value = constant_int(*extent);
    if (!value && (value = constant_local(*extent))) make_constant_int(*extent, *value);  // the emitter reads it there
    if (!value)
      fail(start_of(*extent), name + " needs a shape known at compile time: an integer, a tuple of integers, or a "
                                     "variable assigned once to one");
    dims.push_back(*value);
  }
  if (dims.empty()) fail(start_of(shape), name + " needs at least one dimension");

  DType element;
  if (dtype.meaning == Meaning::DTypeValue) {
    element = dtype.type.dtype;
  } else if (dtype.meaning == Meaning::Builtin && builtin(dtype.builtin).rule == BuiltinRule::CastInt64) {
    element = DType::Int64;
  } else if (dtype.meaning == Meaning::Builtin && builtin(dtype.builtin).rule == BuiltinRule::CastFloat64) {
    element = DType::Float64;
  } else if (dtype.meaning == Meaning::Builtin && builtin(dtype.builtin).rule == BuiltinRule::CastBool) {
    element = DType::Bool;
  } else {
    fail(start_of(dtype), name + " needs a dtype such as " + dtype_code(DType::Float32, "") + ", not " + to_string(dtype.type));
  }

  bool shared = b.id == BuiltinId::SharedArray;
  if (shared && dims == std::vector<int64_t>{0}) {
    fn_.uses_dynamic_shared = true;  // sized by the launch's shared memory argument
  } else {
    for (int64_t d : dims)
      if (d <= 0)
        fail(start_of(shape), name + " needs positive dimensions, not " + std::to_string(d) +
                                  (shared ? " (a shape of 0 alone asks for dynamic shared memory)" : ""));
    // Bounded so that sizes computed from the shape cannot overflow (no GPU has that much anyway).
    int64_t bytes = static_cast<int64_t>(itemsize(element));
    for (int64_t d : dims)
      if (__builtin_mul_overflow(bytes, d, &bytes) || bytes >= kMaxArrayBytes)
        fail(start_of(shape), name + " of " + to_string(Type::scalar(element)) + " is too large (2 GiB or more)");
    add_array_bytes(shared, bytes, start_of(e));
  }
  for (size_t i = 0; i < extents.size(); ++i) make_constant_int(*extents[i], dims[i]);  // the emitters read literals
  new_array_shapes_[&e] = dims;
  return Type::array(element, static_cast<int>(dims.size()), true, shared ? MemorySpace::Shared : MemorySpace::Local);
}

// Counts an array's bytes (or a callee's) against the limits of CUDA GPUs, which the CPU backend keeps too,
// so that a kernel that runs on one runs on the other.
void Checker::add_array_bytes(bool shared, int64_t bytes, SourceLoc where) {
  int64_t& total = shared ? fn_.shared_array_bytes : fn_.local_array_bytes;
  if (__builtin_add_overflow(total, bytes, &total)) total = INT64_MAX;
  if (shared && total > kStaticSharedBytesPerBlock)
    fail(where, "the shared arrays of '" + fn_.name + "' need " + std::to_string(total) +
                    " bytes; CUDA GPUs give a block at most " + std::to_string(kStaticSharedBytesPerBlock) +
                    " bytes of static shared memory (for more, use a dynamic shared array, jiasu.shared.array(0, "
                    "dtype), sized by the launch's shared memory argument)");
  if (!shared && total > kLocalBytesPerThread)
    fail(where, "the local arrays of '" + fn_.name + "' need " + std::to_string(total) +
                    " bytes per thread; CUDA GPUs give a thread at most " + std::to_string(kLocalBytesPerThread) +
                    " bytes of local memory");
}

// jiasu.atomic.*(array, index, value[, value]): the index is an integer (1-D) or a tuple of ndim integers.
Type Checker::atomic(Expr& e, const Builtin& b, const std::vector<Expr*>& args) {
  std::string name = describe(*e.args[0]) + "()";
  Expr& array = *args[0];
  const Type& type = array.type;
  if (type.kind != TypeKind::Array)
    fail(start_of(array), name + " needs an array as its first argument, not " + to_string(type));
  Expr& index = *args[1];
  std::string wanted = to_string(type) + " '" + describe(array) + "' needs " + plural(type.ndim, "index", "indices");
  if (index.type.kind == TypeKind::Tuple) {
    if (index.type.items.size() != static_cast<size_t>(type.ndim))
      fail(start_of(index), name + ": " + wanted + ", got " + std::to_string(index.type.items.size()));
    for (const Type& item : index.type.items)
      if (!item.is_integer()) fail(start_of(index), name + " indices must be integers, not " + to_string(item));
  } else if (index.type.is_integer()) {
    if (type.ndim != 1) fail(start_of(index), name + ": " + wanted + " (pass them as a tuple)");
  } else {
    fail(start_of(index), name + " needs an integer index or a tuple of them, not " + to_string(index.type));
  }
  std::vector<DType> allowed = atomic_dtypes(b);
  if (std::find(allowed.begin(), allowed.end(), type.dtype) == allowed.end())
    fail(start_of(array), name + " does not support " + info(type.dtype).name + " arrays (it supports " +
                              dtype_names(allowed) + ")");
  Type element = Type::scalar(type.dtype);
  for (size_t i = 2; i < args.size(); ++i) {
    if (!can_store(args[i]->type, type.dtype))
      fail(start_of(*args[i]), name + " cannot apply " + to_string(args[i]->type) + " to " + to_string(type) + " '" +
                                   describe(array) + "'");
    check_literal_fits(args[i], element);
  }
  mark_written(array);
  mark_read(array);  // an atomic operation reads the old value
  return element;
}

// print(a, b, ...), as Numba's CUDA target takes it: numbers (not complex), bools and string literals, printed in
// one line separated by spaces; the emitters write one printf call.
Type Checker::print(Expr& e) {
  if (!e.keywords.empty())
    fail(start_of(*e.keywords[0].second), "print() in a kernel takes no keyword arguments ('" + e.keywords[0].first +
                                              "='): it prints its values separated by spaces, then a newline");
  if (e.args.size() - 1 > static_cast<size_t>(kPrintfArguments))
    fail(start_of(*e.args[kPrintfArguments + 1]), "print() in a kernel prints at most " +
                                                      std::to_string(kPrintfArguments) + " values (CUDA's printf limit)");
  for (size_t i = 1; i < e.args.size(); ++i) {
    Expr& value = *e.args[i];
    if (value.kind == ExprKind::String) continue;  // written into the format
    const Type& type = visit(value);
    if (is_complex(type))
      fail(start_of(value), "print() in a kernel cannot print " + to_string(type) + " values, as Numba's CUDA target "
                            "cannot: print their .real and .imag");
    if (!is_number(type))
      fail(start_of(value), "print() in a kernel prints numbers, bools and string literals, not " + to_string(type));
  }
  fn_.prints = true;
  return type_of_kind(TypeKind::Void);
}

namespace {

// A constant integer argument, or a tuple of them, as the value a parameter may be bound to; Missing otherwise.
GlobalValue constant_argument(const Expr& e) {
  GlobalValue g;
  if (e.type.is_integer()) {
    if (auto v = constant_int(e)) {
      g.kind = GlobalValue::Int;
      g.int_value = *v;
    }
  } else if (e.kind == ExprKind::Tuple && !e.args.empty()) {
    for (const ExprPtr& item : e.args) {
      g.items.push_back(constant_argument(*item));
      if (g.items.back().kind == GlobalValue::Missing) return GlobalValue{};
    }
    g.kind = GlobalValue::Tuple;
  }
  return g;
}

std::string constant_key(const GlobalValue& g) {
  if (g.kind == GlobalValue::Int) return std::to_string(g.int_value);
  std::string key = "(";
  for (const GlobalValue& item : g.items) key += constant_key(item) + ",";
  return key + ")";
}

}  // namespace

// What a device function's argument binds at compile time (Missing: nothing, it is passed): a dtype, a builtin,
// a device function, or a constant integer or tuple of them (Numba's literals).
GlobalValue Checker::bound_argument(const Expr& e) {
  GlobalValue g;
  if (e.type.kind == TypeKind::DType && e.meaning == Meaning::DTypeValue) {
    g.kind = GlobalValue::DTypeValue;
    g.dtype = e.type.dtype;
  } else if (e.type.kind == TypeKind::Function && e.meaning == Meaning::Builtin) {
    g.kind = GlobalValue::Builtin;
    g.name = builtin(e.builtin).path;
  } else if (e.type.kind == TypeKind::Function && e.meaning == Meaning::DeviceFunction && e.kind == ExprKind::Name) {
    g.kind = GlobalValue::Function;
    g.function = global(e.name).function;
  } else {
    return constant_argument(e);
  }
  return g;
}

// A @jiasu.func call: parse its source, type it for these argument types (or reuse that specialisation).
Type Checker::call_device(Expr& e) {
  Expr& callee = *e.args[0];
  std::shared_ptr<const FunctionSource> source = global(callee.name).function;
  if (!source) fail(start_of(callee), "'" + callee.name + "' has no source to compile");
  if (session_.stack_base - static_cast<const char*>(__builtin_frame_address(0)) > kCallChainStack)
    fail(start_of(e), "device function calls nested too deeply (the calls leading here take more than " +
                          std::to_string(kCallChainStack >> 10) + " KiB of stack)");
  std::unique_ptr<Function> fn = parse_function(*source);
  std::string name = callee.name + "()";
  if (!fn->params.empty() && fn->params.back().variadic) pack_variadic(e, *fn);

  // Keyword arguments take their parameter's position, so emitters see positional calls only.
  if (!e.keywords.empty() && e.args.size() - 1 <= fn->params.size()) {
    std::vector<ExprPtr> slots(fn->params.size());
    for (size_t i = 1; i < e.args.size(); ++i) slots[i - 1] = std::move(e.args[i]);
    for (auto& entry : e.keywords) {
      const std::string& keyword = entry.first;  // a plain reference: C++17 lambdas cannot capture bindings
      ExprPtr& value = entry.second;
      auto param = std::find_if(fn->params.begin(), fn->params.end(), [&](const Param& p) { return p.name == keyword; });
      if (param == fn->params.end()) fail(start_of(*value), name + " got an unexpected keyword argument '" + keyword + "'");
      ExprPtr& slot = slots[param - fn->params.begin()];
      if (slot) fail(start_of(*value), name + " got multiple values for argument '" + keyword + "'");
      slot = std::move(value);
    }
    e.keywords.clear();
    e.args.resize(1);
    for (size_t i = 0; i < slots.size(); ++i) {
      if (!slots[i]) fail(start_of(e), name + " is missing argument '" + fn->params[i].name + "'");
      e.args.push_back(std::move(slots[i]));
    }
  }
  if (e.args.size() - 1 != fn->params.size() || !e.keywords.empty())
    fail(start_of(e), name + " takes " + plural(fn->params.size(), "argument") + " (" +
                          std::to_string(e.args.size() - 1 + e.keywords.size()) + " given)");

  std::vector<Type> types;
  std::vector<GlobalValue> bound;  // what each argument binds at compile time: part of the specialisation's key
  std::string key = source->identity + "(";
  for (size_t i = 1; i < e.args.size(); ++i) {
    const Type& type = visit(*e.args[i]);
    bound.push_back(bound_argument(*e.args[i]));
    const GlobalValue& value = bound.back();
    const bool fixed = value.kind == GlobalValue::DTypeValue || value.kind == GlobalValue::Builtin ||
                       value.kind == GlobalValue::Function;
    if (!is_number(type) && type.kind != TypeKind::Array && type.kind != TypeKind::Record && !is_number_tuple(type) &&
        type.kind != TypeKind::GridGroup && !fixed)
      fail(start_of(*e.args[i]), "cannot pass " + to_string(type) + " to device function '" + callee.name +
                                     "': pass numbers, tuples of numbers, arrays, records, grid groups, dtypes or "
                                     "functions");
    types.push_back(fixed ? type : committed(type));  // a parameter is a variable: a literal commits
    key += (i > 1 ? ", " : "") + (value.kind == GlobalValue::Function ? "function@" + value.function->identity
                                                                       : to_string(types.back()));
    if (types.back().enumeration) key += "@" + std::to_string(types.back().enumeration->identity);
    if (value.kind == GlobalValue::Int || value.kind == GlobalValue::Tuple) key += "=" + constant_key(value);
  }
  key += ")";

  Function* target;
  auto memo = session_.specialisations.find(key);
  auto recursive = session_.in_progress.find(key);
  if (memo != session_.specialisations.end()) {
    target = memo->second;
  } else if (recursive != session_.in_progress.end()) {
    if (session_.active.back() != source->identity)
      fail(start_of(e), "recursive call to '" + callee.name + "' through another function: in kernels a function "
                        "may call itself, not one of its callers");
    return recursive_call(e, recursive->second);
  } else {
    if (std::find(session_.active.begin(), session_.active.end(), source->identity) != session_.active.end())
      fail(start_of(e), "recursive call to '" + callee.name + "' with other argument types or constants: a "
                        "recursive function calls itself with the types it was called with (a constant argument, "
                        "such as a literal, is bound at compile time: pass a variable)");
    session_.active.push_back(source->identity);
    Checker checker(session_, *source, *fn);
    Session::InProgress& self = session_.in_progress[key] = {fn.get(), &checker.returns_, std::nullopt, {}};
    checker.run(types, false, bound);
    if (self.assumed && *self.assumed != fn->return_type)
      fail(self.call, "recursive call to '" + callee.name + "' is typed " + to_string(*self.assumed) +
                          " by the returns before it, but the function returns " + to_string(fn->return_type));
    session_.in_progress.erase(key);
    session_.active.pop_back();
    fn->mangled_name = "jiasu_fn_" + fn->name + "_" + std::to_string(session_.program.functions.size());
    target = fn.get();
    session_.program.functions.push_back(std::move(fn));
    session_.program.sources.push_back(source);
    session_.specialisations.emplace(key, target);
  }
  for (size_t i = 0; i < target->params.size(); ++i) {
    if (target->params[i].written) mark_written(*e.args[i + 1]);
    if (target->params[i].read) mark_read(*e.args[i + 1]);
  }
  if (target->uses_dynamic_shared) fn_.uses_dynamic_shared = true;
  if (target->cooperative) fn_.cooperative = true;
  if (counted_callees_.insert(target).second) {
    add_array_bytes(true, target->shared_array_bytes, start_of(e));
    add_array_bytes(false, target->local_array_bytes, start_of(e));
  }
  callee.callee = target;
  e.callee = target;
  e.meaning = Meaning::DeviceFunction;
  return target->return_type;
}

// A call of the specialisation being checked: its type is that of the returns met before it (Numba's rule), so
// a recursive function returns its base case first (fib: `if n < 2: return n`).
Type Checker::recursive_call(Expr& e, Session::InProgress& self) {
  if (!self.assumed) {
    if (self.returns->empty())
      fail(start_of(e), "recursive call to '" + e.args[0]->name + "' before any return: its type is inferred from "
                        "the returns before the first recursive call (return the base case first)");
    Type type = (*self.returns)[0].type;
    for (const ReturnSite& r : *self.returns) type = promote(type, r.type);
    self.assumed = committed(type);
    self.call = start_of(e);
  }
  e.args[0]->callee = self.fn;
  e.callee = self.fn;
  e.meaning = Meaning::DeviceFunction;
  return *self.assumed;
}

}  // namespace jiasu::fe::checking
