// check(): expressions other than calls (names, globals, attributes, subscripts, operators).
#include <algorithm>
#include <limits>
#include <utility>

#include "frontend/checker.hpp"

namespace jiasu::fe::checking {
namespace {

// How deeply a tuple global nests (1 for a flat tuple), counted without recursion: its value comes from
// the resolver, not from parsed code, so parse()'s limits do not bound it.
int tuple_nesting(const GlobalValue& tuple) {
  int deepest = 0;
  std::vector<std::pair<const GlobalValue*, int>> pending{{&tuple, 1}};
  while (!pending.empty()) {
    auto [value, level] = pending.back();
    pending.pop_back();
    deepest = std::max(deepest, level);
    for (const GlobalValue& item : value->items)
      if (item.kind == GlobalValue::Tuple) pending.emplace_back(&item, level + 1);
  }
  return deepest;
}

Type function_type(const std::string& name) {
  Type t = type_of_kind(TypeKind::Function);
  t.name = name;
  return t;
}

Type dtype_type(DType dtype) {
  Type t = type_of_kind(TypeKind::DType);
  t.dtype = dtype;
  return t;
}

// jiasu.float32x4 and the other vector types (`name` without "jiasu."): e means it; false for other names.
bool vector_type(Expr& e, const std::string& name, Type& type) {
  const auto vector = vector_type_named(name);
  if (!vector) return false;
  e.meaning = Meaning::VectorType;
  e.int_value = vector->count;
  type = function_type("jiasu." + name);
  type.dtype = vector->dtype;
  return true;
}

}  // namespace

const Type& Checker::visit(Expr& e) {
  Type type = visit_kind(e);
  e.type = std::move(type);
  return e.type;
}

Type Checker::visit_kind(Expr& e) {
  switch (e.kind) {
    case ExprKind::Int: return Type::scalar(e.is_uint64 ? DType::UInt64 : DType::Int64, true);
    case ExprKind::Float: return Type::scalar(e.imaginary ? DType::Complex128 : DType::Float64, true);
    case ExprKind::Bool: return Type::scalar(DType::Bool);
    case ExprKind::None: fail(e.loc, "None is not supported here: kernel values are numbers, tuples and arrays");
    case ExprKind::String:  // parse() rejects them outside raise statements and print()
      fail(e.loc, "a string in a kernel can only be a value print() prints, or the message of an exception raised");
    case ExprKind::Name: return visit_name(e);
    case ExprKind::Attribute: return visit_attribute(e);
    case ExprKind::Subscript: return visit_subscript(e);
    case ExprKind::Call: return visit_call(e);
    case ExprKind::Binary: {
      const Type& a = visit(*e.args[0]);
      const Type& b = visit(*e.args[1]);
      return binary(e.op, a, b, e.loc, e.args[0].get(), e.args[1].get());
    }
    case ExprKind::Unary: return visit_unary(e);
    case ExprKind::Compare: return visit_compare(e);
    case ExprKind::BoolOp: return visit_bool_op(e);
    case ExprKind::IfExp: return visit_if_exp(e);
    case ExprKind::Tuple: return visit_tuple(e);
  }
  fail(e.loc, "unsupported expression");
}

Type Checker::visit_name(Expr& e) {
  if (e.meaning == Meaning::Builtin && e.builtin >= 0 && e.name == builtin(e.builtin).path)
    return function_type(e.name);  // a builtin check() put in place of a method or attribute: z.real, z.conjugate()
  if (auto alias = constant_aliases_.find(e.name); alias != constant_aliases_.end()) {  // C = const.array_like(G)
    e.meaning = Meaning::Constant;
    e.int_value = alias->second;
    const ConstantArray& c = fn_.constants[alias->second];
    return Type::array(c.dtype, static_cast<int>(c.shape.size()), true, MemorySpace::Constant);
  }
  auto it = variables_.find(e.name);
  if (it != variables_.end()) {
    e.meaning = Meaning::Local;
    return it->second.type;
  }
  if (assigned_.count(e.name) && !nested_functions_.count(e.name)) fail(e.loc, "local variable '" + e.name + "' is used before it is assigned");
  const GlobalValue& g = global(e.name);
  if (g.kind == GlobalValue::Tuple && tuple_nesting(g) > kMaxExpressionNesting)
    fail(e.loc, "global '" + e.name + "' is a tuple nested more than " + std::to_string(kMaxExpressionNesting) + " levels deep");
  return resolve_global(e, g);
}

Type Checker::resolve_global(Expr& e, const GlobalValue& g) {
  switch (g.kind) {
    case GlobalValue::Int:
      e.meaning = Meaning::Constant;
      e.int_value = g.int_value;
      return Type::scalar(DType::Int64, true);  // a Python int: weak, like a literal
    case GlobalValue::Float:
      e.meaning = Meaning::Constant;
      e.float_value = g.float_value;
      return Type::scalar(DType::Float64, true);
    case GlobalValue::Bool:
      e.meaning = Meaning::Constant;
      e.int_value = g.int_value != 0;
      return Type::scalar(DType::Bool);
    case GlobalValue::Tuple: {
      e.kind = ExprKind::Tuple;
      e.meaning = Meaning::Constant;
      std::vector<Type> items;
      for (const GlobalValue& item : g.items) {
        if (item.kind != GlobalValue::Int && item.kind != GlobalValue::Float && item.kind != GlobalValue::Bool &&
            item.kind != GlobalValue::Tuple)
          fail(e.loc, "global '" + e.name + "' is a tuple holding something other than numbers");
        // Items become literals, so that the tree reads the same however often it is visited.
        ExprKind kind = item.kind == GlobalValue::Int     ? ExprKind::Int
                        : item.kind == GlobalValue::Float ? ExprKind::Float
                        : item.kind == GlobalValue::Bool  ? ExprKind::Bool
                                                          : ExprKind::Tuple;
        auto constant = std::make_unique<Expr>(kind, e.loc);
        constant->name = e.name;
        constant->type = resolve_global(*constant, item);
        items.push_back(constant->type);
        e.args.push_back(std::move(constant));
      }
      return Type::tuple(std::move(items));
    }
    case GlobalValue::Module:
      if (g.name != "math" && g.name != "cmath" && g.name != "numpy" && g.name != "jiasu")
        fail(e.loc, "module '" + g.name + "' cannot be used in kernels (math, cmath, numpy and jiasu can)");
      e.meaning = Meaning::Module;
      return Type::module(g.name);
    case GlobalValue::DTypeValue:
      e.meaning = Meaning::DTypeValue;
      return dtype_type(g.dtype);
    case GlobalValue::Function:
      e.meaning = Meaning::DeviceFunction;
      return function_type(e.name);
    case GlobalValue::External:
      e.meaning = Meaning::External;
      e.external = g.external.get();
      session_.add_external(g.external);
      return function_type(e.name);
    case GlobalValue::ConstantArray: {  // read as it was when the kernel was compiled, as Numba does
      auto known = std::find_if(fn_.constants.begin(), fn_.constants.end(),
                                [&](const ConstantArray& c) { return c.name == e.name; });
      if (known == fn_.constants.end())
        known = fn_.constants.insert(fn_.constants.end(), ConstantArray{e.name, g.dtype, g.shape, g.data});
      e.meaning = Meaning::Constant;
      e.int_value = known - fn_.constants.begin();
      return Type::array(g.dtype, static_cast<int>(g.shape.size()), true, MemorySpace::Constant);
    }
    case GlobalValue::Builtin:  // a kernel-language name (jiasu.grid, jiasu.atomic) or operator.add & co.
      if (Type t; g.name.rfind("jiasu.", 0) == 0 && vector_type(e, g.name.substr(6), t)) return t;
      if (is_builtin_namespace(g.name)) {
        e.meaning = Meaning::Module;
        return Type::module(g.name);
      }
      e.builtin = find_builtin(g.name);
      if (e.builtin < 0 && g.name.rfind("operator.", 0) != 0)
        fail(e.loc, "global '" + e.name + "' is " + g.name + ", which kernels cannot use");
      e.meaning = Meaning::Builtin;
      return function_type(g.name);  // an operator function has no row: rewrite_operator_ufunc makes it the operator
    case GlobalValue::Missing: {
      int index = e.name.find('.') == std::string::npos ? find_builtin(e.name) : -1;
      if (index < 0) fail(e.loc, "name '" + e.name + "' is not defined");
      e.meaning = Meaning::Builtin;
      e.builtin = index;
      return function_type(e.name);
    }
    case GlobalValue::Enum:
      e.meaning = Meaning::Module;  // a namespace of constants
      return Type::enum_class(g.enumeration);
    case GlobalValue::EnumMember:
      e.meaning = Meaning::Constant;
      e.int_value = g.int_value;
      return Type::enum_member(g.enumeration);
    case GlobalValue::String:
      fail(e.loc, "global '" + e.name + "' is a str: kernels take a string only as the message of an exception they raise");
    case GlobalValue::ExceptionClass:
      fail(e.loc, "'" + e.name + "' is an exception class: kernels can only raise it");
    case GlobalValue::Uncaptured:
      fail(e.loc, g.name);
    case GlobalValue::Unsupported:
      break;
  }
  fail(e.loc, "global '" + e.name + "' is a " + g.name +
                  "; kernels can use numbers, tuples of numbers, NumPy arrays (as constants), dtypes, the modules math, "
                  "cmath, numpy and jiasu, the operator module's functions and @jiasu.func functions");
}

Type Checker::visit_attribute(Expr& e) {
  Expr& base = *e.args[0];
  Type type = visit(base);
  if (type.kind == TypeKind::Module) return module_attribute(e, type.name, type.name + "." + e.name);
  if (type.kind == TypeKind::EnumClass) return enum_member(e, type, e.name);
  if (type.kind == TypeKind::Array) return array_attribute(e, type);
  if (type.kind == TypeKind::Record) return record_field(e, type);
  if (type.kind == TypeKind::Tuple && !type.fields.empty()) {  // point.x of a namedtuple is point[0]
    auto field = std::find(type.fields.begin(), type.fields.end(), e.name);
    if (field == type.fields.end()) fail(e.loc, "'" + e.name + "' is not a field of " + to_string(type));
    e.kind = ExprKind::Subscript;
    e.args.push_back(std::make_unique<Expr>(ExprKind::Int, e.loc));
    e.args.back()->int_value = field - type.fields.begin();
    return tuple_item(e, Type(type));
  }
  if (type.is_scalar() && (e.name == "real" || e.name == "imag")) {  // z.real is np.real(z)
    ExprPtr value = std::move(e.args[0]);
    auto callee = std::make_unique<Expr>(ExprKind::Name, e.loc);
    callee->name = "numpy." + e.name;  // a dotted name: one only check() makes (visit_name)
    callee->meaning = Meaning::Builtin;
    callee->builtin = find_builtin("numpy." + e.name);
    callee->type = function_type(builtin(callee->builtin).path);
    e.kind = ExprKind::Call;
    e.args.clear();
    e.args.push_back(std::move(callee));
    e.args.push_back(std::move(value));
    e.meaning = Meaning::Builtin;
    e.builtin = e.args[0]->builtin;
    return real_part(type);
  }
  if (type.kind == TypeKind::GridGroup)
    fail(e.loc, e.name == "sync" ? std::string("sync is a method of a grid group: call it, sync()")
                                 : "'" + e.name + "' is not an attribute of a grid group (cg.this_grid()): its one "
                                   "method is sync()");
  fail(e.loc, "'" + e.name + "' is not an attribute of " + to_string(type) + " values in kernels");
}

Type Checker::module_attribute(Expr& e, const std::string& module, const std::string& path) {
  int index = find_builtin(builtin_path(path));
  if (index >= 0) {
    e.meaning = Meaning::Builtin;
    e.builtin = index;
    switch (builtin(index).rule) {
      case BuiltinRule::IndexValue: return Type::scalar(DType::Int64);
      case BuiltinRule::ConstPi: e.float_value = 3.14159265358979323846; return Type::scalar(DType::Float64, true);
      case BuiltinRule::ConstE: e.float_value = 2.71828182845904523536; return Type::scalar(DType::Float64, true);
      case BuiltinRule::ConstInf:
        e.float_value = std::numeric_limits<double>::infinity();
        return Type::scalar(DType::Float64, true);
      case BuiltinRule::ConstNan:
        e.float_value = std::numeric_limits<double>::quiet_NaN();
        return Type::scalar(DType::Float64, true);
      default:
        return function_type(builtin(index).path);
    }
  }
  if (is_builtin_namespace(path)) {
    e.meaning = Meaning::Module;
    return Type::module(path);
  }
  if (Type t; module == "jiasu" && vector_type(e, e.name, t)) return t;
  if (module == "numpy" || module == "jiasu") {
    if (auto dtype = dtype_named(e.name)) {
      e.meaning = Meaning::DTypeValue;
      return dtype_type(*dtype);
    }
  }
  fail(e.loc, "'" + path + "' is not supported in kernels");
}

// The shared/local array a name holds, when its shape is known at compile time.
const Variable* Checker::static_array(const Expr& e) const {
  if (e.kind != ExprKind::Name || e.meaning != Meaning::Local) return nullptr;
  auto it = variables_.find(e.name);
  return it != variables_.end() && !it->second.shape.empty() ? &it->second : nullptr;
}

Type Checker::array_attribute(Expr& e, const Type& array) {
  const Variable* shared = static_array(*e.args[0]);
  if (shared && shared->shape == std::vector<int64_t>{0} && (e.name == "shape" || e.name == "size"))
    fail(e.loc, "the size of dynamic shared array '" + e.args[0]->name + "' is only known at launch");
  if (e.name == "shape") {
    std::vector<Type> items(array.ndim, Type::scalar(DType::Int64));
    if (shared) {
      std::vector<int64_t> shape = shared->shape;
      e.kind = ExprKind::Tuple;
      e.meaning = Meaning::Constant;
      e.args.clear();
      for (int64_t extent : shape) {
        e.args.push_back(std::make_unique<Expr>(ExprKind::Int, e.loc));
        make_constant_int(*e.args.back(), extent);
        e.args.back()->type = Type::scalar(DType::Int64);
      }
    }
    return Type::tuple(std::move(items));
  }
  if (e.name == "size") {
    if (shared) {
      int64_t size = 1;
      for (int64_t extent : shared->shape) size *= extent;
      make_constant_int(e, size);
    }
    return Type::scalar(DType::Int64);
  }
  if (e.name == "ndim") {
    make_constant_int(e, array.ndim);
    return Type::scalar(DType::Int64, true);  // a Python int, like a literal
  }
  if (e.name == "real" || e.name == "imag") {  // of a complex array: a view of that part of each element
    if (!is_complex(element_type(array)) && (e.name == "imag" || array.record))
      fail(e.loc, "'" + e.name + "' of " + to_string(array) + ": only complex arrays have an imaginary part to view");
    Type part = array;
    part.dtype = real_part(element_type(array)).dtype;
    part.contiguous = part.contiguous && !is_complex(element_type(array));
    return part;
  }
  fail(e.loc, "array attribute '" + e.name + "' is not supported in kernels (shape, size, ndim, real and imag are)");
}

Type Checker::visit_subscript(Expr& e) {
  const Type& type = visit(*e.args[0]);
  if (type.kind == TypeKind::Array) {
    mark_read(*e.args[0]);
    return array_element(e, type);
  }
  if (type.kind == TypeKind::Tuple) return tuple_item(e, Type(type));  // a copy: folding replaces the base
  if (type.kind == TypeKind::Record) return record_item(e, Type(type));
  if (type.kind == TypeKind::EnumClass) {
    if (e.args.size() != 2 || e.args[1]->kind != ExprKind::String)
      fail(e.loc, "an enum class takes a member's name in quotes: " + describe(*e.args[0]) + "[\"name\"]");
    return enum_member(e, Type(type), e.args[1]->name);
  }
  fail(e.loc, to_string(type) + " '" + describe(*e.args[0]) + "' is not subscriptable");
}

// r.name of a record: the field, read and written in place; a subarray field is a C-contiguous array over the
// record's memory. e.int_value becomes the field's index.
Type Checker::record_field(Expr& e, const Type& record) {
  const RecordLayout& layout = *record.record;
  const RecordField* field = layout.field(e.name);
  if (!field) fail(e.loc, "'" + e.name + "' is not a field of " + to_string(record));
  e.int_value = field - layout.fields.data();
  if (field->shape.empty()) return Type::scalar(field->dtype);
  return Type::array(field->dtype, static_cast<int>(field->shape.size()), true);
}

// r['name'] or r[k] (k a constant integer, NumPy's field k) of a record: rewritten to the attribute r.name.
Type Checker::record_item(Expr& e, const Type& record) {
  const std::vector<RecordField>& fields = record.record->fields;
  if (e.args.size() != 2) fail(e.loc, "a record takes one index: a field name or a constant integer");
  Expr& index = *e.args[1];
  std::string name = index.name;
  if (index.kind != ExprKind::String) {
    std::optional<int64_t> k = visit(index).is_integer() ? constant_int(index) : std::nullopt;
    if (!k) fail(start_of(index), "a record is indexed by a field name or a constant integer");
    const int64_t count = static_cast<int64_t>(fields.size());
    if (*k < -count || *k >= count)
      fail(start_of(index), "record index " + std::to_string(*k) + " is out of range for " + plural(count, "field"));
    name = fields[static_cast<size_t>(*k < 0 ? *k + count : *k)].name;
  }
  e.kind = ExprKind::Attribute;
  e.name = name;
  e.loc = index.loc;
  e.args.resize(1);
  return record_field(e, record);
}

void Checker::too_many_indices(const Expr& e, const Type& array) {
  fail(e.loc, "too many indices for " + to_string(array) + " '" + describe(*e.args[0]) + "': it has " +
                  plural(array.ndim, "axis", "axes") + ", but " + std::to_string(e.args.size() - 1) + " were indexed");
}

// a[1:3], a[i, :], a[i] of a 2-D array: a view of the axes sliced or not indexed, as NumPy's basic indexing
// (strided, so ArrayA); each slice's parts, where given, are integers.
Type Checker::array_view(Expr& e, const Type& array) {
  const size_t count = e.args.size() - 1;
  if (count > static_cast<size_t>(array.ndim)) too_many_indices(e, array);
  int axes = array.ndim - static_cast<int>(count);
  for (size_t i = 1; i < e.args.size(); ++i) {
    Expr& index = *e.args[i];
    if (!is_slice(index)) {
      if (!visit(index).is_integer()) fail(start_of(index), "array indices must be integers, not " + to_string(index.type));
      continue;
    }
    ++axes;
    global("slice");  // a global named slice would not be Python's slice here
    for (size_t k = 1; k < 4; ++k) {
      Expr& part = *index.args[k];
      if (part.kind == ExprKind::None) continue;
      if (!visit(part).is_integer()) fail(start_of(part), "slice indices must be integers, not " + to_string(part.type));
    }
    if (index.args[3]->kind != ExprKind::None && constant_int(*index.args[3]) == 0)
      fail(start_of(*index.args[3]), "slice step cannot be zero");
  }
  Type view = array;  // a record array's view holds records too
  view.ndim = axes;
  view.contiguous = false;
  return view;
}

Type Checker::array_element(Expr& e, const Type& array) {
  size_t count = e.args.size() - 1;
  for (size_t i = 1; i < e.args.size(); ++i)
    if (is_slice(*e.args[i])) return array_view(e, array);
  for (size_t i = 1; i < e.args.size(); ++i) visit(*e.args[i]);
  if (count < static_cast<size_t>(array.ndim) && !(count == 1 && e.args[1]->type.kind == TypeKind::Tuple))
    return array_view(e, array);  // a[i] of a 2-D array: its row
  if (count == 1 && e.args[1]->type.kind == TypeKind::Tuple) {  // a[ij], with ij a tuple of one index per axis
    const Type& index = e.args[1]->type;
    if (index.items.size() != static_cast<size_t>(array.ndim))
      fail(start_of(*e.args[1]), to_string(array) + " '" + describe(*e.args[0]) + "' needs " +
                                     plural(array.ndim, "index", "indices") + ", got a " + to_string(index));
    for (const Type& item : index.items)
      if (!item.is_integer()) fail(start_of(*e.args[1]), "array indices must be integers, not " + to_string(index));
    return element_type(array);
  }
  if (count > static_cast<size_t>(array.ndim)) too_many_indices(e, array);
  for (size_t i = 1; i < e.args.size(); ++i)
    if (!e.args[i]->type.is_integer())
      fail(start_of(*e.args[i]), "array indices must be integers, not " + to_string(e.args[i]->type));
  return element_type(array);
}

Type Checker::element_type(const Type& array) {
  return array.record ? Type::record_of(array.record) : Type::scalar(array.dtype);
}

Type Checker::tuple_item(Expr& e, const Type& tuple) {
  if (e.args.size() != 2) fail(e.loc, "a tuple takes one index");
  Expr& index = *e.args[1];
  visit(index);
  auto k = constant_int(index);
  if (!k) {  // known at run time: the items must be numbers of one type, which t[i] has (Numba's UniTuple)
    if (!index.type.is_integer()) fail(start_of(index), "tuple indices must be integers, not " + to_string(index.type));
    const bool uniform = !tuple.items.empty() && is_number(tuple.items[0]) &&
                         std::all_of(tuple.items.begin(), tuple.items.end(), [&](const Type& t) { return t == tuple.items[0]; });
    if (!uniform)
      fail(start_of(index), "a tuple index must be a constant integer unless the tuple's items are numbers of one type, "
                            "and " + describe(*e.args[0]) + " is a " + to_string(tuple));
    return tuple.items[0];
  }
  int64_t n = static_cast<int64_t>(tuple.items.size());
  int64_t i = *k < 0 ? *k + n : *k;
  if (i < 0 || i >= n)
    fail(start_of(index), "tuple index " + std::to_string(*k) + " is out of range for " + to_string(tuple));
  make_constant_int(index, i);
  Expr& base = *e.args[0];
  if (base.meaning == Meaning::Constant && base.kind == ExprKind::Tuple) {
    ExprPtr item = std::move(base.args[i]);  // the constant itself replaces the subscript
    e.kind = item->kind;
    e.name = item->name;
    e.int_value = item->int_value;
    e.float_value = item->float_value;
    e.meaning = Meaning::Constant;
    e.args = std::move(item->args);
  }
  return tuple.items[i];
}

Type Checker::binary(Op op, const Type& a, const Type& b, SourceLoc loc, const Expr* lhs, const Expr* rhs) const {
  if (op == Op::MatMul) fail(loc, "the @ operator is not supported in kernels");
  std::string unsupported = std::string("unsupported operand types for ") + op_text(op) + ": " + to_string(a) + " and " + to_string(b);
  if (!is_number(a) || !is_number(b)) fail(loc, unsupported);
  refuse_plain_enums(a, b, unsupported, loc);
  Type result = promote(a, b);
  result.enumeration = nullptr;  // an IntEnum's member in arithmetic is an int
  if (is_complex(result) && op != Op::Add && op != Op::Sub && op != Op::Mul && op != Op::Div && op != Op::Pow)
    fail(loc, unsupported);  // as in Python: no //, % or bitwise operators on complex numbers
  switch (op) {
    case Op::BitAnd: case Op::BitOr: case Op::BitXor:
      if (!result.is_integer() && !is_bool(result)) fail(loc, unsupported);
      break;
    case Op::LShift: case Op::RShift:
      if (!a.is_integer() || !b.is_integer() || !result.is_integer()) fail(loc, unsupported);
      break;
    case Op::Div:
      result = float_result(result);  // true division: int / int -> float64
      break;
    default:
      if (is_bool(result)) result = Type::scalar(DType::Int64);  // Python: True + True == 2
      break;
  }
  if (result.is_integer() && !result.weak) {
    check_literal_fits(lhs, result);
    check_literal_fits(rhs, result);
  }
  return result;
}

Type Checker::visit_unary(Expr& e) {
  Expr& operand = *e.args[0];
  if (e.op == Op::Not) {
    check_condition(operand);
    return Type::scalar(DType::Bool);
  }
  Type type = visit(operand);
  const std::string bad = std::string("bad operand type for unary ") + op_text(e.op) + ": " + to_string(type);
  if (!is_number(type)) fail(e.loc, bad);
  refuse_plain_enums(type, type, bad, e.loc);
  type.enumeration = nullptr;
  if (e.op == Op::Invert) {
    if (type.is_float() || is_complex(type)) fail(e.loc, bad);
    return type;
  }
  return is_bool(type) ? Type::scalar(DType::Int64) : type;
}

Type Checker::visit_compare(Expr& e) {
  for (Op op : e.ops)
    if (op == Op::In || op == Op::NotIn) fail(e.loc, std::string("'") + op_text(op) + "' is not supported in kernels");
  for (ExprPtr& operand : e.args) visit(*operand);
  if (compare_enums(e)) return Type::scalar(DType::Bool);
  for (size_t i = 0; i < e.ops.size(); ++i) {
    Op& op = e.ops[i];
    if (op != Op::Is && op != Op::IsNot) continue;
    // `flag is True`: bools are singletons, so identity is equality between two bools
    if (!is_bool(e.args[i]->type) || !is_bool(e.args[i + 1]->type))
      fail(e.loc, std::string("'") + op_text(op) + "' is not supported in kernels between " +
                      to_string(e.args[i]->type) + " and " + to_string(e.args[i + 1]->type) + "; compare numbers "
                      "with == or !=");
    op = op == Op::Is ? Op::Eq : Op::NotEq;
  }
  for (size_t i = 0; i < e.ops.size(); ++i) {
    const Type& a = e.args[i]->type;
    const Type& b = e.args[i + 1]->type;
    bool ordered = e.ops[i] != Op::Eq && e.ops[i] != Op::NotEq;  // complex numbers have no order
    if (!is_number(a) || !is_number(b) || (ordered && !e.numpy_order && (is_complex(a) || is_complex(b))))
      fail(e.loc, std::string("unsupported operand types for ") + op_text(e.ops[i]) + ": " + to_string(a) + " and " + to_string(b));
  }
  return Type::scalar(DType::Bool);
}

// and/or give a bool when every operand is one; otherwise their promoted type (Python returns an operand).
Type Checker::visit_bool_op(Expr& e) {
  Type result;
  for (ExprPtr& operand : e.args) {
    check_condition(*operand);
    result = result.kind == TypeKind::Unknown ? operand->type : promote(result, operand->type);
  }
  return result;
}

Type Checker::visit_if_exp(Expr& e) {
  check_condition(*e.args[0]);
  const Type& a = visit(*e.args[1]);
  const Type& b = visit(*e.args[2]);
  if (!is_number(a) || !is_number(b))
    fail(e.loc, "the branches of a conditional expression must be numbers, not " + to_string(a) + " and " + to_string(b));
  if (a == b) return a;  // two members of one enum stay its members
  refuse_plain_enums(a, b, "the branches of a conditional expression are " + to_string(a) + " and " + to_string(b) +
                               ": members of one enum, or numbers", e.loc);
  Type result = promote(a, b);
  result.enumeration = nullptr;
  return result;
}

Type Checker::visit_tuple(Expr& e) {
  std::vector<Type> items;
  for (ExprPtr& item : e.args) {
    const Type& type = visit(*item);
    if (!is_number(type) && type.kind != TypeKind::Tuple)
      fail(start_of(*item), "tuples can only hold numbers, not " + to_string(type));
    items.push_back(type);
  }
  return Type::tuple(std::move(items));
}

void Checker::check_condition(Expr& e) {
  const Type& type = visit(e);
  if (type.kind == TypeKind::Array) fail(start_of(e), "an array has no truth value; compare its elements instead");
  if (!is_number(type)) fail(start_of(e), "a condition must be a number or a bool, not " + to_string(type));
}

}  // namespace jiasu::fe::checking
