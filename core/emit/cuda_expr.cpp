// emit_cuda(): expressions. Each returns C++ text whose type is exactly the C++ type of the expression's
// fe::Type; operands are converted to the type the checker gave the operation before it is applied.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "emit/cuda_emitter.hpp"

namespace jiasu::emit::cuda {

using fe::Expr;
using fe::ExprKind;
using fe::Meaning;
using fe::Op;
using fe::Type;
using fe::TypeKind;

namespace {

bool is_half(DType d) { return d == DType::Float16 || d == DType::BFloat16; }
bool is_float(DType d) { return info(d).kind == DTypeKind::Float; }
bool is_complex(DType d) { return info(d).kind == DTypeKind::Complex; }
bool is_unsigned(DType d) { return info(d).kind == DTypeKind::Unsigned; }
// Integers and bools that C++ promotes to int before any arithmetic.
bool is_narrow(DType d) { return !is_float(d) && itemsize(d) < 4; }

Type scalar(DType d) { return Type::scalar(d); }

// A number known while emitting: a literal, a global constant, math.pi, or - / + of one.
struct Number {
  bool is_float = false;
  bool is_uint64 = false;  // an integer literal in [2^63, 2^64)
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0;
  bool imaginary = false;  // a float: f is the imaginary part (2j)
};

std::optional<Number> constant_number(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Int:
      return Number{false, e.is_uint64, e.int_value, e.uint_value, 0};
    case ExprKind::Float:
      return Number{true, false, 0, 0, e.float_value, e.imaginary};
    case ExprKind::Bool:
      return Number{false, false, e.int_value, 0, 0};
    case ExprKind::Unary: {
      if (e.op != Op::USub && e.op != Op::UAdd) return std::nullopt;
      std::optional<Number> n = constant_number(*e.args[0]);
      if (n && e.op == Op::USub) {
        n->i = static_cast<int64_t>(0 - (n->is_uint64 ? n->u : static_cast<uint64_t>(n->i)));  // wraps like the device
        n->is_uint64 = false;
        n->f = -n->f;
      }
      return n;
    }
    default:
      break;
  }
  bool named_constant = e.meaning == Meaning::Constant ||
                        (e.meaning == Meaning::Builtin && e.kind == ExprKind::Attribute && e.type.is_float());
  if (!named_constant || !e.type.is_scalar()) return std::nullopt;
  if (e.type.is_float()) return Number{true, false, 0, 0, e.float_value};
  return Number{false, false, e.int_value, 0, 0};
}

// The shortest decimal text that reads back as exactly `value` (a double, or a float when is_float32).
std::string shortest_decimal(double value, bool is_float32) {
  char text[40];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, value);
    if (is_float32 ? std::strtof(text, nullptr) == static_cast<float>(value) : std::strtod(text, nullptr) == value) break;
  }
  std::string out = text;
  if (out.find_first_of(".e") == std::string::npos) out += ".0";
  return out;
}

std::string float_literal(double value, DType d) {
  const std::string c = info(d).c_type;
  if (is_half(d)) return "jiasu::cast<" + c + ">(" + float_literal(value, DType::Float64) + ")";  // rounds once
  if (d == DType::Float32) value = static_cast<float>(value);
  if (std::isnan(value)) return "jiasu::nan<" + c + ">()";
  if (std::isinf(value)) return value > 0 ? "jiasu::inf<" + c + ">()" : "(-jiasu::inf<" + c + ">())";
  std::string text = d == DType::Float32 ? shortest_decimal(value, true) + "f" : shortest_decimal(value, false);
  return std::signbit(value) ? "(" + text + ")" : text;
}

// The number written directly in type d, converted as NumPy converts a Python scalar (NEP 50).
std::string number_literal(const Number& n, DType d) {
  if (is_complex(d)) {
    DType part = d == DType::Complex64 ? DType::Float32 : DType::Float64;
    double value = n.is_float ? n.f : n.is_uint64 ? static_cast<double>(n.u) : static_cast<double>(n.i);
    std::string zero = float_literal(0.0, part), v = float_literal(value, part);
    return std::string(info(d).c_type) + "(" + (n.imaginary ? zero + ", " + v : v + ", " + zero) + ")";
  }
  if (d == DType::Bool) return (n.is_float ? n.f != 0 : n.is_uint64 ? n.u != 0 : n.i != 0) ? "true" : "false";
  if (is_float(d)) return float_literal(n.is_float ? n.f : n.is_uint64 ? static_cast<double>(n.u) : static_cast<double>(n.i), d);
  return integer_literal(n.is_uint64 ? n.u : static_cast<uint64_t>(n.i), d);
}

std::string join(const std::vector<std::string>& parts, const char* separator = ", ") {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? separator : "") + parts[i];
  return out;
}

}  // namespace

std::string integer_literal(uint64_t bits, DType d) {
  const int width = 8 * static_cast<int>(itemsize(d));
  if (width < 64) bits &= (uint64_t(1) << width) - 1;
  bool negative = info(d).kind == DTypeKind::Signed && (bits >> (width - 1)) & 1;
  if (negative && width < 64) bits |= ~uint64_t(0) << width;  // sign-extend to 64 bits
  int64_t value = static_cast<int64_t>(bits);
  switch (d) {
    case DType::Int64:
      if (value == INT64_MIN) return "(-9223372036854775807LL - 1)";
      return negative ? "(" + std::to_string(value) + "LL)" : std::to_string(value) + "LL";
    case DType::Int32:
      if (value == INT32_MIN) return "(-2147483647 - 1)";
      return negative ? "(" + std::to_string(value) + ")" : std::to_string(value);
    case DType::UInt64: return std::to_string(bits) + "ULL";
    case DType::UInt32: return std::to_string(static_cast<uint32_t>(bits)) + "U";
    default:  // 8 and 16 bits: a cast of an int
      return std::string("(") + info(d).c_type + ")" + (negative ? "(" + std::to_string(value) + ")" : std::to_string(value));
  }
}

bool is_constant(const Expr& e) { return constant_number(e).has_value(); }

std::optional<int64_t> constant_integer(const Expr& e) {
  std::optional<Number> n = constant_number(e);
  if (!n || n->is_float || n->is_uint64) return std::nullopt;
  return n->i;
}

Type binary_result(Op op, const Type& a, const Type& b) {
  Type result = fe::promote(a, b);
  switch (op) {
    case Op::Div:
      return result.is_float() || is_complex(result.dtype) ? result : Type::scalar(DType::Float64, result.weak);
    case Op::BitAnd: case Op::BitOr: case Op::BitXor: case Op::LShift: case Op::RShift:
      return result;
    default:
      return result.dtype == DType::Bool ? scalar(DType::Int64) : result;  // Python: True + True == 2
  }
}

// ---------------------------------------------------------------------------------------------------
// Types

namespace {

std::string tuple_code(const Type& t) {
  if (t.kind != TypeKind::Tuple) return info(t.dtype).name;
  std::string out = "tuple" + std::to_string(t.items.size());
  for (const Type& item : t.items) out += "_" + tuple_code(item);
  return out;
}

}  // namespace

std::string TupleStructs::name_of(const Type& tuple) {
  std::string name = "jiasu_" + tuple_code(tuple);
  if (defined_.count(name)) return name;
  std::string fields;
  for (size_t k = 0; k < tuple.items.size(); ++k) {
    const Type& item = tuple.items[k];
    fields += " " + (item.kind == TypeKind::Tuple ? name_of(item) : std::string(info(item.dtype).c_type)) + " v" +
              std::to_string(k) + ";";
  }
  definitions_ += "struct " + name + " {" + fields + " };\n";
  defined_[name] = true;
  return name;
}

std::string TupleStructs::record_name(const fe::RecordLayout& layout) {
  auto known = std::find(records_.begin(), records_.end(), layout);
  const std::string name = "jiasu_record" + std::to_string(known - records_.begin());
  if (known != records_.end()) return name;
  records_.push_back(layout);
  definitions_ += "struct alignas(" + std::to_string(layout.alignment) + ") " + name + " { unsigned char bytes[" +
                  std::to_string(layout.itemsize) + "]; };\n";
  return name;
}

std::string TupleStructs::constant_array(const fe::ConstantArray& c, const std::string& storage) {
  std::string& symbol = constants_[c.name + '\0' + c.data];
  if (!symbol.empty()) return symbol;
  symbol = "jiasu_constant" + std::to_string(constants_.size()) + "_" + user_name(c.name);
  std::string bytes;
  static const char* kHex = "0123456789abcdef";
  for (size_t i = 0; i < c.data.size(); ++i) {
    const unsigned char b = static_cast<unsigned char>(c.data[i]);
    bytes += std::string(i ? (i % 24 ? "," : ",\n  ") : "") + "0x" + kHex[b >> 4] + kHex[b & 15];
  }
  if (bytes.empty()) bytes = "0";  // an empty array: C++ has no zero-length arrays
  definitions_ += storage + " " + symbol + "[" + std::to_string(std::max<size_t>(c.data.size(), 1)) + "] = {\n  " +
                  bytes + "};\n";
  return symbol;
}

std::string FunctionEmitter::c_type(const Type& type) {
  switch (type.kind) {
    case TypeKind::Void:
      return "void";
    case TypeKind::Scalar:
      return info(type.dtype).c_type;
    case TypeKind::Array:
      return std::string(type.contiguous ? "jiasu::ArrayC<" : "jiasu::ArrayA<") +
             (type.record ? tuples_.record_name(*type.record) : std::string(info(type.dtype).c_type)) + ", " +
             std::to_string(type.ndim) + ">";
    case TypeKind::Record:  // a reference to the record's bytes
      return tuples_.record_name(*type.record) + "*";
    case TypeKind::Tuple:
      return tuples_.name_of(type);
    case TypeKind::GridGroup:
      return "jiasu::GridGroup";
    default:
      fail(fn_.loc, "internal error: " + to_string(type) + " has no C++ type");
  }
}

// ---------------------------------------------------------------------------------------------------
// Conversions

std::string FunctionEmitter::convert(const std::string& code, const Type& from, const Type& to) {
  if (to.kind == TypeKind::Tuple) return tuple_value(Value{code, from}, to);
  if (!from.is_scalar() || !to.is_scalar() || from.dtype == to.dtype) return code;
  if (is_half(from.dtype) || is_half(to.dtype)) return "jiasu::cast<" + c_type(to) + ">(" + code + ")";
  if (to.dtype == DType::Bool) return "(" + code + " != 0)";  // Python's truth: nan is true
  return "(" + c_type(to) + ")" + code;
}

std::string FunctionEmitter::expr_as(const Expr& e, const Type& to) {
  if (to.is_scalar()) {
    std::optional<Number> n = constant_number(e);
    bool truncates = n && n->is_float && !is_float(to.dtype) && !is_complex(to.dtype) && to.dtype != DType::Bool;
    if (n && !truncates) return number_literal(*n, to.dtype);
  }
  if (to.kind == TypeKind::Tuple) return tuple_value(Value{"", e.type, &e}, to);
  return convert(expr(e), e.type, to);
}

std::string FunctionEmitter::value_as(const Value& v, const Type& to) {
  return v.expr ? expr_as(*v.expr, to) : convert(v.code, v.type, to);
}

std::string FunctionEmitter::condition(const Expr& e) { return expr_as(e, scalar(DType::Bool)); }

std::string FunctionEmitter::temp(const std::string& hint) { return "jiasu_" + hint + std::to_string(++temps_); }

// ---------------------------------------------------------------------------------------------------
// Expressions

std::string FunctionEmitter::expr(const Expr& e) {
  if (std::optional<Number> n = constant_number(e); n && e.type.is_scalar()) return number_literal(*n, e.type.dtype);
  switch (e.kind) {
    case ExprKind::Name:
      if (e.meaning == Meaning::Local) return user_name(e.name);
      if (e.meaning == Meaning::Constant && e.type.kind == TypeKind::Array) {  // a global array's embedded bytes
        const fe::ConstantArray& c = fn_.constants.at(static_cast<size_t>(e.int_value));
        const std::string element = info(c.dtype).c_type;
        std::vector<std::string> extents;
        for (int64_t extent : c.shape) extents.push_back(std::to_string(extent));
        return c_type(e.type) + "{const_cast<" + element + "*>(reinterpret_cast<const " + element + "*>(" +
               tuples_.constant_array(c, target_.constant_storage) + ")), {" + join(extents) + "}}";
      }
      fail(e.loc, "'" + e.name + "' (" + to_string(e.type) + ") cannot be used as a value");
    case ExprKind::Attribute:
      return attribute(e);
    case ExprKind::Subscript:
      return subscript(e);
    case ExprKind::Call:
      return call(e);
    case ExprKind::Binary:
      return binary_chain(e);
    case ExprKind::Unary:
      return unary(e);
    case ExprKind::Compare:
      return compare(e);
    case ExprKind::BoolOp:
      return bool_op(e);
    case ExprKind::IfExp:
      return "(" + condition(*e.args[0]) + " ? " + expr_as(*e.args[1], e.type) + " : " + expr_as(*e.args[2], e.type) + ")";
    case ExprKind::Tuple:
      return tuple_value(Value{"", e.type, &e}, e.type);
    default:
      fail(e.loc, "this expression" + target_text());
  }
}

namespace {

// The operators C++ writes as Python does, groups of one precedence each: within a group, C++ groups
// `a op b op c` from the left, as Python does. 0 for the others.
int operator_group(Op op) {
  switch (op) {
    case Op::Add: case Op::Sub: return 1;
    case Op::Mul: case Op::Div: return 2;
    case Op::BitAnd: return 3;
    case Op::BitOr: return 4;
    case Op::BitXor: return 5;
    default: return 0;
  }
}

// How binary() writes `a op b` in `result`: the plain C++ operator "(x op y)", or for a narrow integer
// type "(t)(x op y)" (C++ computes in int; the cast wraps the result back), or otherwise.
enum class Form { Other, Plain, Narrow };
Form operator_form(Op op, const Type& result) {
  if (operator_group(op) == 0 || is_half(result.dtype)) return Form::Other;
  return is_narrow(result.dtype) ? Form::Narrow : Form::Plain;
}

}  // namespace

// a op b op c ...: the chain of left operands is walked in a loop, not by recursion, so a long sum costs
// no stack per term. Where an operator's left operand is an operator of its group in the same type (so
// nothing converts it), its parentheses are left out: "(a + b - c)" is C++'s ((a + b) - c), as in Python.
// A narrow type's chain "(t)((unsigned)a + b - c)" runs in unsigned, which wraps where int could overflow
// and, truncated once by the cast, gives what wrapping at each step gives (+, -, * and the bitwise
// operators commute with truncation). A long chain then nests no brackets (C++ compilers bound bracket
// nesting, and g++ takes memory cubic in nested casts) and is written by appending, not by copying the
// text so far at each term.
std::string FunctionEmitter::binary_chain(const Expr& e) {
  std::vector<const Expr*> chain;  // e, its left operand, that one's left operand, ...: every Binary
  for (const Expr* node = &e; node->kind == ExprKind::Binary; node = node->args[0].get()) chain.push_back(node);
  const Expr& first = *chain.back()->args[0];
  Value left{"", first.type, &first};
  int open_group = 0;    // left.code is binary()'s text for an operator of this group, in left.type
  bool unsigned_ = false;  // and, of a narrow type, computes in unsigned
  for (size_t i = chain.size(); i-- > 0;) {
    const Expr& node = *chain[i];
    const Expr& right = *node.args[1];
    const Value b{"", right.type, &right};
    const Form form = operator_form(node.op, node.type);
    const int group = form == Form::Other ? 0 : operator_group(node.op);
    if (group != 0 && group == open_group && left.type.dtype == node.type.dtype) {
      if (form == Form::Narrow && !unsigned_) left.code.insert(c_type(node.type).size() + 3, "(unsigned)");  // "(t)(" ...
      unsigned_ = true;
      left.code.pop_back();  // the ')'
      left.code += std::string(" ") + fe::op_text(node.op) + " " + value_as(b, node.type) + ")";
    } else {
      left.code = binary(node.op, node.type, left, b, fe::start_of(node));
      unsigned_ = form == Form::Narrow && is_unsigned(node.type.dtype);
    }
    left.type = node.type;
    left.expr = nullptr;
    open_group = group;
  }
  return left.code;
}

std::string FunctionEmitter::binary(Op op, const Type& result, const Value& a, const Value& b, fe::SourceLoc at) {
  const std::string x = value_as(a, result), t = c_type(result);
  std::string y = value_as(b, result);
  const bool nonzero_constant = b.expr && constant_integer(*b.expr).value_or(0) != 0;
  if (debug_ && (op == Op::FloorDiv || op == Op::Mod) && result.is_integer() && !nonzero_constant)
    y = check_call("divisor_checked", "", at) + y + ")";  // Python raises for 0
  switch (op) {
    case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: case Op::BitAnd: case Op::BitOr: case Op::BitXor: {
      std::string sign = std::string(" ") + fe::op_text(op) + " ";
      if (operator_form(op, result) == Form::Plain) return "(" + x + sign + y + ")";
      if (is_half(result.dtype)) return "jiasu::cast<" + t + ">(jiasu::widen(" + x + ")" + sign + "jiasu::widen(" + y + "))";
      // C++ computes narrow types in int (unsigned for unsigned ones, so uint16 * uint16 cannot overflow
      // int); the cast wraps the result back to its type.
      return "(" + t + ")(" + (is_unsigned(result.dtype) ? "(unsigned)" : "") + x + sign + y + ")";
    }
    case Op::FloorDiv: return "jiasu::floordiv(" + x + ", " + y + ")";
    case Op::Mod: return "jiasu::mod(" + x + ", " + y + ")";
    case Op::Pow: return "jiasu::power(" + x + ", " + y + ")";
    case Op::LShift: return "jiasu::lshift(" + x + ", " + y + ")";
    case Op::RShift: return "jiasu::rshift(" + x + ", " + y + ")";
    default: fail(a.expr ? a.expr->loc : fn_.loc, std::string("operator ") + fe::op_text(op) + target_text());
  }
}

std::string FunctionEmitter::unary(const Expr& e) {
  const Expr& operand = *e.args[0];
  if (e.op == Op::Not) return "(!" + condition(operand) + ")";
  const std::string x = expr_as(operand, e.type), t = c_type(e.type);
  switch (e.op) {
    case Op::UAdd:
      return x;
    case Op::USub:
      if (is_half(e.type.dtype)) return "jiasu::cast<" + t + ">(-jiasu::widen(" + x + "))";
      return is_narrow(e.type.dtype) ? "(" + t + ")(-" + x + ")" : "(-" + x + ")";
    case Op::Invert:
      if (e.type.dtype == DType::Bool) return "(!" + x + ")";  // NumPy: ~True is False
      return is_narrow(e.type.dtype) ? "(" + t + ")(~" + x + ")" : "(~" + x + ")";
    default:
      fail(e.loc, std::string("operator ") + fe::op_text(e.op) + target_text());
  }
}

// a < b < c: each operand evaluated once, left to right, and only while the comparisons hold.
std::string FunctionEmitter::compare(const Expr& e) {
  auto pair = [&](const Value& a, Op op, const Value& b) {
    Type common = fe::promote(a.type, b.type);
    std::string x = value_as(a, common), y = value_as(b, common);
    if (is_half(common.dtype)) x = "jiasu::widen(" + x + ")", y = "jiasu::widen(" + y + ")";
    return "(" + x + " " + fe::op_text(op) + " " + y + ")";
  };
  auto operand = [&](size_t i) { return Value{"", e.args[i]->type, e.args[i].get()}; };
  if (e.ops.size() == 1) return pair(operand(0), e.ops[0], operand(1));

  // Operands other than variables and constants are held in temporaries, declared as they are reached.
  std::string body;
  std::vector<std::string> tests;
  bool held_any = false;
  auto held = [&](size_t i) {
    const Expr& a = *e.args[i];
    bool plain = (a.kind == ExprKind::Name && a.meaning == Meaning::Local) || is_constant(a);
    if (i == e.ops.size() || plain) return operand(i);  // the last operand is evaluated once anyway
    std::string name = temp("operand");
    body += "const " + c_type(a.type) + " " + name + " = " + expr(a) + "; ";
    held_any = true;
    return Value{name, a.type};
  };
  Value left = held(0);
  for (size_t i = 0; i < e.ops.size(); ++i) {
    Value right = held(i + 1);
    tests.push_back(pair(left, e.ops[i], right));
    body += i + 1 < e.ops.size() ? "if (!" + tests.back() + ") return false; " : "return " + tests.back() + ";";
    left = right;
  }
  return held_any ? "([&]() -> bool { " + body + " }())" : "(" + join(tests, " && ") + ")";
}

// and/or: C++'s && and || when every operand is a bool; otherwise Python's value-returning forms.
std::string FunctionEmitter::bool_op(const Expr& e) {
  const char* sign = e.op == Op::And ? " && " : " || ";
  if (e.type.dtype == DType::Bool) {
    std::vector<std::string> tests;
    for (const auto& operand : e.args) tests.push_back(condition(*operand));
    return "(" + join(tests, sign) + ")";
  }
  std::string t = c_type(e.type), name = temp("value");
  std::string body = t + " " + name + " = " + expr_as(*e.args[0], e.type) + "; ";
  for (size_t i = 1; i < e.args.size(); ++i) {
    std::string truth = convert(name, e.type, scalar(DType::Bool));
    body += "if (" + std::string(e.op == Op::And ? "!" : "") + truth + ") return " + name + "; ";
    body += i + 1 < e.args.size() ? name + " = " + expr_as(*e.args[i], e.type) + "; "
                                   : "return " + expr_as(*e.args[i], e.type) + ";";
  }
  return "([&]() -> " + t + " { " + body + " }())";
}

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {  // three octal digits: no digit after it can join
      const unsigned code = static_cast<unsigned char>(c);
      out += {'\\', char('0' + (code >> 6)), char('0' + ((code >> 3) & 7)), char('0' + (code & 7))};
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string FunctionEmitter::element_ref(const Expr& array, const std::vector<Value>& indices, const Expr& subscript,
                                         AccessKind kind) {
  std::string code = "jiasu::at(" + expr(array);
  if (debug_) {
    const bool traced = access_sites_ && (array.type.space == fe::MemorySpace::Global ||
                                          array.type.space == fe::MemorySpace::Shared);
    code = check_call(traced ? "at_traced" : "at_checked", array.kind == ExprKind::Name ? array.name : "array",
                      fe::start_of(subscript)) +
           (traced ? std::to_string(access_site(array, subscript, kind)) + ", " : std::string()) + expr(array);
  }
  for (const Value& index : indices) code += ", " + (index.expr ? expr(*index.expr) : index.code);
  return code + ")";
}

int FunctionEmitter::access_site(const Expr& array, const Expr& subscript, AccessKind kind) {
  const fe::SourceLoc at = fe::start_of(subscript);
  AccessSite site{source_.file, at.line, at.column, std::string(lines_.text(at.line)),
                  array.kind == ExprKind::Name ? array.name : "array", array.type.space == fe::MemorySpace::Shared, kind};
  site.source.erase(0, site.source.find_first_not_of(" \t"));
  std::vector<AccessSite>& sites = *access_sites_;
  for (size_t i = 0; i < sites.size(); ++i)  // a place emitted twice is one site
    if (sites[i].file == site.file && sites[i].line == site.line && sites[i].column == site.column &&
        sites[i].kind == site.kind && sites[i].shared == site.shared)
      return static_cast<int>(i);
  sites.push_back(std::move(site));
  return static_cast<int>(sites.size() - 1);
}

std::vector<Value> FunctionEmitter::indices_of(const Expr& subscript) {
  if (subscript.args.size() == 2 && subscript.args[1]->type.kind == TypeKind::Tuple) return items(*subscript.args[1]);
  std::vector<Value> indices;
  for (size_t i = 1; i < subscript.args.size(); ++i)
    indices.push_back(Value{"", subscript.args[i]->type, subscript.args[i].get()});
  return indices;
}

std::string FunctionEmitter::subscript(const Expr& e) {
  const Expr& base = *e.args[0];
  if (base.type.kind == TypeKind::Array && e.type.kind == TypeKind::Array) {  // a view: a[1:3], a[i, :], a[i]
    std::vector<std::string> axes;
    auto part = [&](const Expr& p) { return p.kind == ExprKind::None ? std::string("0") : expr_as(p, scalar(DType::Int64)); };
    for (size_t i = 1; i < e.args.size(); ++i) {
      const Expr& index = *e.args[i];
      if (!fe::is_slice(index)) {
        axes.push_back("jiasu::Axis{" + expr_as(index, scalar(DType::Int64)) + ", 0, 1, jiasu::Axis::kIndex}");
        continue;
      }
      const int given = (index.args[1]->kind != ExprKind::None ? 1 : 0) | (index.args[2]->kind != ExprKind::None ? 2 : 0);
      axes.push_back("jiasu::Axis{" + part(*index.args[1]) + ", " + part(*index.args[2]) + ", " +
                     (index.args[3]->kind == ExprKind::None ? std::string("1") : part(*index.args[3])) + ", " +
                     std::to_string(given) + "}");
    }
    for (int d = static_cast<int>(e.args.size()) - 1; d < base.type.ndim; ++d) axes.push_back("jiasu::Axis{0, 0, 1, 0}");
    return "jiasu::view<" + std::to_string(e.type.ndim) + ">(" + expr(base) + ", {" + join(axes) + "})";
  }
  if (base.type.kind == TypeKind::Array && e.type.kind == TypeKind::Record)  // a record: its address
    return "(&" + element_ref(base, indices_of(e), e) + ")";
  if (base.type.kind == TypeKind::Array) return element_ref(base, indices_of(e), e);
  if (e.args[1]->kind != ExprKind::Int) return tuple_item_at(e);
  Value v = item(base, static_cast<size_t>(e.args[1]->int_value));  // check() made a constant index an Int
  return v.expr ? expr(*v.expr) : v.code;
}

// t[i] at a run-time index, of a tuple whose items check() found to be numbers of one type.
std::string FunctionEmitter::tuple_item_at(const Expr& e) {
  const Expr& base = *e.args[0];
  std::vector<std::string> items;
  for (size_t k = 0; k < base.type.items.size(); ++k) items.push_back(value_as(item(base, k), e.type));
  const std::string types = "<" + c_type(e.type) + ", " + std::to_string(items.size()) + ">";
  const std::string args = "{" + join(items) + "}, " + expr_as(*e.args[1], scalar(DType::Int64)) + ")";
  if (!debug_) return "jiasu::tuple_item" + types + "(" + args;
  return check_call("tuple_item_checked" + types, "tuple", fe::start_of(e)) + args;
}

std::string FunctionEmitter::check_call(const std::string& function, const std::string& array, fe::SourceLoc at) {
  return "jiasu::" + function + "(" + (target_.context_arg.empty() ? "" : target_.context_arg + ", ") +
         "jiasu::CheckSite{" + quoted(array) + ", " + quoted(source_.file) + ", " + std::to_string(at.line) + ", " +
         std::to_string(at.column) + "}, ";
}

std::string FunctionEmitter::attribute(const Expr& e) {
  if (e.meaning == Meaning::Builtin && fe::builtin(e.builtin).rule == fe::BuiltinRule::IndexValue)
    return spelling(e);
  const Expr& base = *e.args[0];
  if (base.type.kind == TypeKind::Record) return record_field(e);
  if (base.type.kind == TypeKind::Array && e.name == "size") return "jiasu::size(" + expr(base) + ")";
  if (base.type.kind == TypeKind::Array && (e.name == "real" || e.name == "imag")) {
    if (!is_complex(base.type.dtype)) return expr(base);  // a real array's real part is itself
    return std::string("jiasu::complex_part<") + (e.name == "real" ? "0" : "1") + ">(" + expr(base) + ")";
  }
  if (e.type.kind == TypeKind::Tuple) return tuple_value(Value{"", e.type, &e}, e.type);
  fail(e.loc, "'" + e.name + "' cannot be compiled to CUDA");
}

std::string FunctionEmitter::record_field(const Expr& e) {
  const fe::RecordField& field = e.args[0]->type.record->fields.at(static_cast<size_t>(e.int_value));
  const std::string element = info(field.dtype).c_type;
  const std::string at = "jiasu::field<" + element + ">(" + expr(*e.args[0]) + ", " + std::to_string(field.offset) + ")";
  if (field.shape.empty()) return at;
  std::vector<std::string> extents;
  for (int64_t extent : field.shape) extents.push_back(std::to_string(extent));
  return c_type(e.type) + "{&" + at + ", {" + join(extents) + "}}";
}

// ---------------------------------------------------------------------------------------------------
// Tuples: only tuple variables are materialised (as structs); other tuple expressions are taken apart.

Value FunctionEmitter::item(const Expr& e, size_t k) {
  const Type& type = e.type.items.at(k);
  if (e.kind == ExprKind::Tuple) return Value{"", type, e.args[k].get()};
  if (e.kind == ExprKind::Name && e.meaning == Meaning::Local) return Value{user_name(e.name) + ".v" + std::to_string(k), type};
  if (e.kind == ExprKind::Attribute && e.name == "shape")
    return Value{expr(*e.args[0]) + ".shape[" + std::to_string(k) + "]", type};
  if (e.kind == ExprKind::Call && e.meaning == Meaning::Builtin) {
    if (fe::builtin(e.builtin).rule == fe::BuiltinRule::GridN) return Value{grid_axis(e, static_cast<int>(k)), type};
    return Value{builtin_call(e) + ".v" + std::to_string(k), type};  // cmath.polar(z): a struct from the runtime
  }
  if (e.kind == ExprKind::Subscript) return item(item(*e.args[0], static_cast<size_t>(e.args[1]->int_value)), k);
  fail(e.loc, "this tuple expression" + target_text());
}

Value FunctionEmitter::item(const Value& tuple, size_t k) {
  if (tuple.expr) return item(*tuple.expr, k);
  return Value{tuple.code + ".v" + std::to_string(k), tuple.type.items.at(k)};
}

std::vector<Value> FunctionEmitter::items(const Expr& e) {
  if (e.type.kind != TypeKind::Tuple) return {Value{"", e.type, &e}};
  std::vector<Value> out;
  for (size_t k = 0; k < e.type.items.size(); ++k) out.push_back(item(e, k));
  return out;
}

std::string FunctionEmitter::tuple_value(const Value& tuple, const Type& to) {
  std::vector<std::string> fields;
  for (size_t k = 0; k < to.items.size(); ++k) fields.push_back(value_as(item(tuple, k), to.items[k]));
  return c_type(to) + "{" + join(fields) + "}";
}

std::string FunctionEmitter::grid_axis(const Expr& call, int axis) {
  return target_.grid_axis(fe::builtin(call.builtin).id == fe::BuiltinId::Grid, axis);
}

std::string FunctionEmitter::spelling(const Expr& e) {
  const fe::Builtin& b = fe::builtin(e.builtin);
  std::string text = b.*target_.spelling;
  if (text.empty()) fail(e.loc, std::string(b.path) + target_text());
  return text;
}

namespace {

std::string cuda_grid_axis(bool grid, int axis) {
  std::string a = axis_name(axis);
  if (grid) return "((long long)blockIdx." + a + " * blockDim." + a + " + threadIdx." + a + ")";
  return "((long long)blockDim." + a + " * gridDim." + a + ")";
}

std::string cuda_shared_array(const std::string& element, const std::string& name, int64_t size) {
  return "__shared__ " + element + " " + name + "[" + std::to_string(size) + "];";
}

}  // namespace

const Target& cuda_target() {
  static const Target target{"CUDA", "extern \"C\" __global__ void ", "", "__device__ ", "", "",
                             &fe::Builtin::cuda, cuda_grid_axis, cuda_shared_array,
                             "extern __shared__ __align__(16) unsigned char jiasu_dynamic_shared[];",
                             "jiasu_dynamic_shared", "jiasu::wait_for_prior_grid();", "",
                             "__device__ __align__(16) const unsigned char",
                             "__device__ ", "", ""};
  return target;
}

// ---------------------------------------------------------------------------------------------------
// Calls

std::string FunctionEmitter::call(const Expr& e) {
  switch (e.meaning) {
    case Meaning::DTypeValue:  // np.float32(x)
      return expr_as(*e.args[1], scalar(e.type.dtype));
    case Meaning::DeviceFunction: {
      std::vector<std::string> args;
      if (!target_.context_arg.empty()) args.push_back(target_.context_arg);
      for (size_t i = 1; i < e.args.size(); ++i)
        if (!e.callee->params[i - 1].compile_time) args.push_back(expr_as(*e.args[i], e.callee->params[i - 1].type));
      return e.callee->mangled_name + "(" + join(args) + ")";
    }
    case Meaning::External: {
      std::vector<std::string> args;
      for (size_t i = 1; i < e.args.size(); ++i) args.push_back(expr_as(*e.args[i], scalar(e.external->params[i - 1])));
      return "jiasu_external_" + e.external->name + "(" + join(args) + ")";
    }
    case Meaning::Builtin:
      return builtin_call(e);
    default:
      fail(e.loc, "this call" + target_text());
  }
}

std::string FunctionEmitter::builtin_call(const Expr& e) {
  using fe::BuiltinRule;
  const fe::Builtin& b = fe::builtin(e.builtin);
  auto arg = [&](size_t i) -> const Expr& { return *e.args.at(i + 1); };
  const size_t count = e.args.size() - 1;
  // Builtins the emitter writes itself have no runtime spelling (builtins.def: "" in both columns).
  const std::string f = *b.cuda ? spelling(e) : std::string();
  auto converted = [&](size_t i) { return expr_as(arg(i), e.type); };  // an argument in the call's type
  auto all_converted = [&] {
    std::vector<std::string> args;
    for (size_t i = 0; i < count; ++i) args.push_back(converted(i));
    return join(args);
  };

  switch (b.rule) {
    case BuiltinRule::Len:  // of a global array (check() folded the others)
      return expr(arg(0)) + ".shape[0]";
    case BuiltinRule::MinMax: {  // Python's min(a, b, c) is min(min(a, b), c)
      std::string code = converted(0);
      for (size_t i = 1; i < count; ++i) code = f + "(" + code + ", " + converted(i) + ")";
      return code;
    }
    case BuiltinRule::Round:
      if (count == 1) return f + "(" + expr(arg(0)) + ")";
      return f + "(" + converted(0) + ", " + expr_as(arg(1), scalar(DType::Int64)) + ")";
    case BuiltinRule::SameNumeric1:  // abs(): of a complex number, the runtime's overload gives its magnitude
      if (is_complex(arg(0).type.dtype)) return f + "(" + expr(arg(0)) + ")";
      return f + "(" + all_converted() + ")";
    case BuiltinRule::FloatMath1: case BuiltinRule::FloatMath2: case BuiltinRule::FloatMath3:
    case BuiltinRule::Float32Math1: case BuiltinRule::Float32Math2: case BuiltinRule::Float32Math3:
    case BuiltinRule::Float64Math1: case BuiltinRule::Float64Math2: case BuiltinRule::Float64Math3:
    case BuiltinRule::ComplexMath1: case BuiltinRule::Conjugate: case BuiltinRule::Power2:
      return f + "(" + all_converted() + ")";
    case BuiltinRule::ComplexToReal:
      return f + "(" + expr_as(arg(0), fe::complex_result(arg(0).type)) + ")";
    case BuiltinRule::ComplexPolar:
      return f + "<" + c_type(e.type) + ">(" + expr_as(arg(0), fe::complex_result(arg(0).type)) + ")";
    case BuiltinRule::Frexp:
      return f + "<" + c_type(e.type) + ">(" + expr_as(arg(0), e.type.items[0]) + ")";
    case BuiltinRule::Ldexp:
      return f + "(" + expr_as(arg(0), e.type) + ", " + expr_as(arg(1), scalar(DType::Int32)) + ")";
    case BuiltinRule::ComplexRect: {
      const Type part = fe::real_part(e.type);
      return f + "(" + expr_as(arg(0), part) + ", " + expr_as(arg(1), part) + ")";
    }
    case BuiltinRule::CastComplex:  // complex(), complex(x), complex(re, im)
      if (count == 0) return number_literal(Number{}, e.type.dtype);
      if (count == 1) return converted(0);
      return c_type(e.type) + "(" + expr_as(arg(0), scalar(DType::Float64)) + ", " + expr_as(arg(1), scalar(DType::Float64)) + ")";
    case BuiltinRule::ComplexPart:  // np.real(z) / np.imag(z): of a real number, itself / zero
      if (is_complex(arg(0).type.dtype)) return "(" + expr(arg(0)) + (b.id == fe::BuiltinId::Real ? ").re" : ").im");
      return b.id == fe::BuiltinId::Real ? converted(0) : number_literal(Number{}, e.type.dtype);
    case BuiltinRule::CastInt64: case BuiltinRule::CastFloat64: case BuiltinRule::CastBool:
      return converted(0);
    case BuiltinRule::BitCount:
      if (b.id == fe::BuiltinId::IntBitCount) return f + "(jiasu::abs_(" + expr(arg(0)) + "))";  // Python's: of abs(x)
      return f + "(" + expr(arg(0)) + ")";
    case BuiltinRule::FloatToInt64: case BuiltinRule::FloatPredicate:
    case BuiltinRule::SameInteger1:  // the runtime overloads on the argument's own type
      return f + "(" + expr(arg(0)) + ")";
    case BuiltinRule::FloatCompare2:  // idem, on both arguments' own types
      return f + "(" + expr(arg(0)) + ", " + expr(arg(1)) + ")";
    case BuiltinRule::GridN:
      if (e.type.is_scalar()) return grid_axis(e, 0);
      return tuple_value(Value{"", e.type, &e}, e.type);
    case BuiltinRule::Void0: case BuiltinRule::Mask0: case BuiltinRule::ThisGrid:
      return f + "()";
    case BuiltinRule::GridSync:
      return f + "(" + expr(arg(0)) + ")";
    case BuiltinRule::Reshape: {  // the shape's items, from integers and tuples of them
      std::vector<std::string> extents;
      for (size_t i = 1; i < count; ++i)
        for (const Value& v : items(arg(i))) extents.push_back(value_as(v, scalar(DType::Int64)));
      return f + "<" + std::to_string(e.type.ndim) + ">(" + expr(arg(0)) + ", {" + join(extents) + "})";
    }
    case BuiltinRule::ArrayView:
      return f + "<" + std::string(info(e.type.dtype).c_type) + ">(" + expr(arg(0)) + ")";
    case BuiltinRule::SyncPredicateInt:
      return f + "(" + condition(arg(0)) + ")";
    case BuiltinRule::SyncPredicateBool:
      return "(" + f + "(" + condition(arg(0)) + ") != 0)";
    case BuiltinRule::SyncWarp:
      return f + "(" + (count ? expr_as(arg(0), scalar(DType::UInt32)) : "") + ")";
    case BuiltinRule::Atomic: case BuiltinRule::AtomicInt: case BuiltinRule::AtomicUnsigned:
    case BuiltinRule::AtomicCas:
      return atomic_call(e, f.c_str());
    case BuiltinRule::Print:
      return print_call(e, f);
    case BuiltinRule::Shuffle:
      return f + "(" + expr_as(arg(0), scalar(DType::UInt32)) + ", " + converted(1) + ", " +
             expr_as(arg(2), scalar(DType::Int32)) + ")";
    case BuiltinRule::VoteBallot:
      return f + "(" + expr_as(arg(0), scalar(DType::UInt32)) + ", " + condition(arg(1)) + ")";
    case BuiltinRule::VoteBool:
      return "(" + f + "(" + expr_as(arg(0), scalar(DType::UInt32)) + ", " + condition(arg(1)) + ") != 0)";
    default:  // range() and shared/local.array() are compiled by the statements they belong to
      fail(e.loc, std::string(b.path) + "() cannot be used here");
  }
}

// print(...): one printf call, so that the lines of different threads do not mix, in the format Numba's CUDA target
// writes (integers as %lld or %llu, floats as %f, bools as True or False), string literals in the format itself.
std::string FunctionEmitter::print_call(const Expr& e, const std::string& printf) {
  std::string format;
  std::vector<std::string> args;
  for (size_t i = 1; i < e.args.size(); ++i) {
    const Expr& value = *e.args[i];
    if (i > 1) format += ' ';
    if (value.kind == ExprKind::String) {
      for (char c : value.name) format += c == '%' ? std::string("%%") : std::string(1, c);
    } else if (value.type.dtype == DType::Bool) {
      format += "%s";
      args.push_back("(" + condition(value) + " ? \"True\" : \"False\")");
    } else if (info(value.type.dtype).kind == DTypeKind::Signed) {
      format += "%lld";
      args.push_back(expr_as(value, scalar(DType::Int64)));
    } else if (info(value.type.dtype).kind == DTypeKind::Unsigned) {
      format += "%llu";
      args.push_back(expr_as(value, scalar(DType::UInt64)));
    } else {
      format += "%f";
      args.push_back(expr_as(value, scalar(DType::Float64)));
    }
  }
  args.insert(args.begin(), quoted(format + "\n"));
  return printf + "(" + join(args) + ")";
}

// atomic.op(array, index, value...): the runtime function gets the element's address.
std::string FunctionEmitter::atomic_call(const Expr& e, const char* function) {
  const Expr& array = *e.args[1];
  const Type element = scalar(array.type.dtype);
  std::string code = std::string(function) + "(&" + element_ref(array, items(*e.args[2]), e, AccessKind::Atomic);
  for (size_t i = 3; i < e.args.size(); ++i) code += ", " + expr_as(*e.args[i], element);
  return code + ")";
}

}  // namespace jiasu::emit::cuda
