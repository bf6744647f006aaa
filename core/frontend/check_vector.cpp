// Numba's CUDA vector types in kernels: cuda.float32x4(a, b, c, d), cuda.int2(v1, n), ... A vector is a
// namedtuple of its element type with fields x, y, z, w (as many as it has), made from numbers and other vectors
// whose components it takes in order ("fancy" construction), so v.x reads and tuple rules apply.
#include <string>

#include "frontend/checker.hpp"

namespace jiasu::fe {
namespace {

// The element types: their names (Numba's prefixes) and C's aliases, whose sizes are Linux's (long is 64 bits).
struct Element {
  const char* name;
  DType dtype;
  bool alias;  // spelled without the x: int4 is int32x4
};
constexpr Element kElements[] = {
    {"int8", DType::Int8, false},       {"int16", DType::Int16, false},      {"int32", DType::Int32, false},
    {"int64", DType::Int64, false},     {"uint8", DType::UInt8, false},      {"uint16", DType::UInt16, false},
    {"uint32", DType::UInt32, false},   {"uint64", DType::UInt64, false},    {"float32", DType::Float32, false},
    {"float64", DType::Float64, false}, {"char", DType::Int8, true},         {"short", DType::Int16, true},
    {"int", DType::Int32, true},        {"long", DType::Int64, true},        {"longlong", DType::Int64, true},
    {"uchar", DType::UInt8, true},      {"ushort", DType::UInt16, true},     {"uint", DType::UInt32, true},
    {"ulong", DType::UInt64, true},     {"ulonglong", DType::UInt64, true},  {"float", DType::Float32, true},
    {"double", DType::Float64, true}};
constexpr const char* kFields[] = {"x", "y", "z", "w"};

}  // namespace

std::optional<VectorTypeInfo> vector_type_named(const std::string& name) {
  if (name.size() < 2 || name.back() < '1' || name.back() > '4') return std::nullopt;
  const std::string stem = name.substr(0, name.size() - 1);
  for (const Element& e : kElements)
    if (stem == std::string(e.name) + (e.alias ? "" : "x")) return VectorTypeInfo{e.dtype, name.back() - '0'};
  return std::nullopt;
}

std::vector<std::string> vector_type_names() {
  std::vector<std::string> names;
  for (const Element& e : kElements)
    for (char n = '1'; n <= '4'; ++n) names.push_back(std::string(e.name) + (e.alias ? "" : "x") + n);
  return names;
}

namespace checking {

Type Checker::make_vector(Expr& e) {
  const Expr& callee = *e.args[0];
  const DType dtype = callee.type.dtype;
  const size_t count = static_cast<size_t>(callee.int_value);
  const std::string name = describe(callee) + "()";
  if (!e.keywords.empty()) fail(start_of(*e.keywords[0].second), name + " takes no keyword arguments");
  std::vector<ExprPtr> components;
  for (size_t i = 1; i < e.args.size(); ++i) {
    ExprPtr arg = std::move(e.args[i]);
    const Type type = visit(*arg);
    if (type.kind != TypeKind::Tuple || type.fields.empty()) {
      number(*arg, name);
      components.push_back(std::move(arg));
    } else if (arg->kind == ExprKind::Tuple) {  // a vector made here: its components
      for (ExprPtr& item : arg->args) components.push_back(std::move(item));
    } else if (arg->kind == ExprKind::Name) {  // a vector variable: v[0], v[1], ...
      for (size_t k = 0; k < type.items.size(); ++k) {
        auto item = std::make_unique<Expr>(ExprKind::Subscript, arg->loc);
        item->args.push_back(std::make_unique<Expr>(ExprKind::Name, arg->loc));
        item->args[0]->name = arg->name;
        item->args.push_back(std::make_unique<Expr>(ExprKind::Int, arg->loc));
        item->args[1]->int_value = static_cast<int64_t>(k);
        visit(*item);
        components.push_back(std::move(item));
      }
    } else {
      fail(start_of(*arg), name + " takes numbers, and vectors held in variables or made in the call");
    }
  }
  if (components.size() != count)
    fail(start_of(e), name + " takes " + std::to_string(count) + " components (numbers, or vectors of them), but " +
                          std::to_string(components.size()) + (components.size() == 1 ? " was" : " were") + " given");
  // The call becomes the tuple of its components, each converted to the element type as np.float32(x) would be.
  e.kind = ExprKind::Tuple;
  e.args.clear();
  std::vector<Type> items;
  for (ExprPtr& component : components) {
    if (component->type.dtype != dtype || component->type.weak) {
      auto cast = std::make_unique<Expr>(ExprKind::Call, component->loc);
      cast->args.push_back(std::make_unique<Expr>(ExprKind::Name, component->loc));
      cast->args[0]->name = info(dtype).name;
      cast->args[0]->meaning = Meaning::DTypeValue;
      cast->args[0]->type = type_of_kind(TypeKind::DType);
      cast->args[0]->type.dtype = dtype;
      cast->args.push_back(std::move(component));
      cast->meaning = Meaning::DTypeValue;
      cast->type = Type::scalar(dtype);
      component = std::move(cast);
    }
    items.push_back(Type::scalar(dtype));
    e.args.push_back(std::move(component));
  }
  e.meaning = Meaning::Unresolved;
  Type vector = Type::tuple(std::move(items));
  vector.fields.assign(kFields, kFields + count);
  return vector;
}

}  // namespace checking
}  // namespace jiasu::fe
