// Type rules of the kernel language: NumPy's promotion (array/promotion.hpp; NEP 50: Python literals are weak), the casts
// that stores allow, and the builtin table with the names that lead to it.
#include <unordered_map>

#include "array/promotion.hpp"
#include "frontend/checker.hpp"

namespace jiasu::fe {
namespace {

const Builtin kBuiltins[] = {
#define JIASU_BUILTIN(id, path, rule, cuda, host) {BuiltinId::id, path, BuiltinRule::rule, cuda, host},
#include "frontend/builtins.def"
#undef JIASU_BUILTIN
};
constexpr int kBuiltinCount = static_cast<int>(sizeof(kBuiltins) / sizeof(kBuiltins[0]));

// A Python literal meets a typed value: the value's type wins unless the literal is of a higher kind.
Type promote_weak(const Type& weak, const Type& strong) {
  return Type::scalar(jiasu::promote_weak(category(weak.dtype), strong.dtype));
}

}  // namespace

Type promote(const Type& a, const Type& b) {
  if (!a.is_scalar() || !b.is_scalar()) return Type{};
  if (a.weak && b.weak) {
    // Two literals stay a literal of the higher kind (a uint64-sized literal keeps its range).
    if (category(a.dtype) != category(b.dtype)) return category(a.dtype) > category(b.dtype) ? a : b;
    return a.dtype == DType::UInt64 ? a : b;
  }
  if (a.weak) return promote_weak(a, b);
  if (b.weak) return promote_weak(b, a);
  return Type::scalar(*promote_types(a.dtype, b.dtype));
}

Type complex_result(const Type& t) {
  if (info(t.dtype).kind == DTypeKind::Complex) return Type::scalar(t.dtype);
  return Type::scalar(t.dtype == DType::Float32 || t.dtype == DType::Float16 || t.dtype == DType::BFloat16
                          ? DType::Complex64 : DType::Complex128);
}

Type real_part(const Type& t) {
  if (info(t.dtype).kind != DTypeKind::Complex) return t;
  return Type::scalar(t.dtype == DType::Complex64 ? DType::Float32 : DType::Float64);
}

const Builtin& builtin(int index) { return kBuiltins[index]; }
int builtin_count() { return kBuiltinCount; }

int find_builtin(const std::string& path) {
  static const std::unordered_map<std::string, int> by_path = [] {
    std::unordered_map<std::string, int> map;
    for (int i = 0; i < kBuiltinCount; ++i) map.emplace(kBuiltins[i].path, i);
    return map;
  }();
  auto it = by_path.find(path);
  return it == by_path.end() ? -1 : it->second;
}

}  // namespace jiasu::fe

namespace jiasu::fe::checking {

bool is_number(const Type& t) { return t.is_scalar(); }
bool is_real(const Type& t) { return t.is_scalar() && !is_complex(t); }
bool is_complex(const Type& t) { return t.is_scalar() && info(t.dtype).kind == DTypeKind::Complex; }

bool is_number_tuple(const Type& t) {
  if (t.kind != TypeKind::Tuple) return false;
  for (const Type& item : t.items)
    if (!is_number(item) && !is_number_tuple(item)) return false;
  return true;
}
bool is_bool(const Type& t) { return t.is_scalar() && t.dtype == DType::Bool; }

Type type_of_kind(TypeKind kind) {
  Type t;
  t.kind = kind;
  return t;
}

// A literal adapts only until it is stored: a variable assigned 0 is an int64.
Type committed(Type t) {
  t.weak = false;
  for (Type& item : t.items) item = committed(item);
  return t;
}

// out[i] = v, x += v and atomics convert v to the target's type when no kind is lost (bool -> integer ->
// float), like NumPy's 'same_kind' casting except that signed -> unsigned is allowed (storing an index
// into a uint32 array is common and harmless); float into an integer array is an error.
bool can_store(const Type& value, DType target) {
  return is_number(value) && category(value.dtype) <= category(target);
}

// A variable keeps its first type: later values must have that type, or be literals of a kind it holds.
bool assignable(const Type& variable, const Type& value) {
  if (variable.kind == TypeKind::Tuple) {
    if (value.kind != TypeKind::Tuple || value.items.size() != variable.items.size()) return false;
    for (size_t i = 0; i < value.items.size(); ++i)
      if (!assignable(variable.items[i], value.items[i])) return false;
    return true;
  }
  if (variable.kind == TypeKind::GridGroup) return value.kind == TypeKind::GridGroup;
  if (!is_number(variable) || !is_number(value)) return false;
  if (variable.dtype == value.dtype) return true;
  return value.weak && category(value.dtype) != Category::Bool && category(value.dtype) <= category(variable.dtype);
}

Type float_result(const Type& t) { return t.is_float() || is_complex(t) ? t : Type::scalar(DType::Float64, t.weak); }

std::optional<DType> dtype_named(const std::string& name) {
  for (int i = 0; i < kDTypeCount; ++i) {
    DType d = static_cast<DType>(i);
    if (name == info(d).name) return d;
  }
  static const std::map<std::string, DType> kAliases = {
      {"bool_", DType::Bool},     {"int_", DType::Int64},      {"intp", DType::Int64}, {"uintp", DType::UInt64},
      {"half", DType::Float16},   {"single", DType::Float32},  {"double", DType::Float64},
      {"csingle", DType::Complex64}, {"cdouble", DType::Complex128}};
  auto it = kAliases.find(name);
  if (it == kAliases.end()) return std::nullopt;
  return it->second;
}

// NumPy spellings of math functions: the ufuncs whose typing matches the math rule (np.floor is not one:
// it returns a float).
std::string builtin_path(const std::string& path) {
  static const std::map<std::string, std::string> kAliases = {
      {"numpy.abs", "abs"},           {"numpy.absolute", "abs"},           {"numpy.minimum", "min"},
      {"numpy.maximum", "max"},       {"numpy.arcsin", "math.asin"},       {"numpy.arccos", "math.acos"},
      {"numpy.arctan", "math.atan"},  {"numpy.arctan2", "math.atan2"},     {"numpy.hypot", "math.hypot"},
      {"numpy.copysign", "math.copysign"}, {"numpy.arccosh", "math.acosh"},   {"numpy.arcsinh", "math.asinh"},
      {"numpy.arctanh", "math.atanh"},  {"numpy.nextafter", "math.nextafter"}, {"numpy.conj", "numpy.conjugate"},
      {"numpy.deg2rad", "math.radians"}, {"numpy.rad2deg", "math.degrees"}, 
      {"numpy.power", "pow"}};
  if (auto it = kAliases.find(path); it != kAliases.end()) return it->second;
  const std::string numpy = "numpy.";
  if (path.compare(0, numpy.size(), numpy) != 0) return path;
  std::string math = "math." + path.substr(numpy.size());
  int index = find_builtin(math);
  if (index < 0) return path;
  switch (builtin(index).rule) {
    case BuiltinRule::FloatMath1: case BuiltinRule::FloatPredicate: case BuiltinRule::ConstPi:
    case BuiltinRule::ConstE: case BuiltinRule::ConstInf: case BuiltinRule::ConstNan:
      return math;
    default:
      return path;
  }
}

// A path with builtins below it ("jiasu.atomic", "jiasu.threadIdx") is a namespace.
bool is_builtin_namespace(const std::string& path) {
  std::string prefix = path + ".";
  for (int i = 0; i < builtin_count(); ++i)
    if (std::string(builtin(i).path).compare(0, prefix.size(), prefix) == 0) return true;
  return false;
}

}  // namespace jiasu::fe::checking
