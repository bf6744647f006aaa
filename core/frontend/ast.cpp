#include "frontend/ast.hpp"

#include <algorithm>

#include "support/error.hpp"

namespace jiasu::fe {

Type Type::scalar(DType d, bool weak) {
  Type t;
  t.kind = TypeKind::Scalar;
  t.dtype = d;
  t.weak = weak;
  return t;
}

Type Type::array(DType d, int ndim, bool contiguous, MemorySpace space) {
  Type t;
  t.kind = TypeKind::Array;
  t.dtype = d;
  t.ndim = ndim;
  t.contiguous = contiguous;
  t.space = space;
  return t;
}

Type Type::tuple(std::vector<Type> items) {
  Type t;
  t.kind = TypeKind::Tuple;
  t.items = std::move(items);
  return t;
}

Type Type::module(std::string name) {
  Type t;
  t.kind = TypeKind::Module;
  t.name = std::move(name);
  return t;
}

// Compares only the fields that mean something for the kind, so stale defaults never make two equal
// types differ. Weakness is part of a scalar type: a literal's int64 and a variable's int64 promote
// differently.
static bool same_record(const std::shared_ptr<const RecordLayout>& a, const std::shared_ptr<const RecordLayout>& b) {
  return a == b || (a && b && *a == *b);
}

bool RecordLayout::operator==(const RecordLayout& other) const {
  if (itemsize != other.itemsize || fields.size() != other.fields.size()) return false;
  for (size_t i = 0; i < fields.size(); ++i) {
    const RecordField &a = fields[i], &b = other.fields[i];
    if (a.name != b.name || a.dtype != b.dtype || a.offset != b.offset || a.shape != b.shape) return false;
  }
  return true;
}

const RecordField* RecordLayout::field(const std::string& name) const {
  for (const RecordField& f : fields)
    if (f.name == name) return &f;
  return nullptr;
}

void check_record_layout(RecordLayout& layout) {
  layout.alignment = 1;
  for (const RecordField& f : layout.fields) {
    // A complex number is aligned as its parts; any other number as its size.
    const int64_t align = info(f.dtype).kind == DTypeKind::Complex ? itemsize(f.dtype) / 2 : itemsize(f.dtype);
    if (f.offset % align != 0)
      throw BadArgument("record field '" + f.name + "' (" + info(f.dtype).name + ") is at offset " +
                        std::to_string(f.offset) + ", not aligned for its type: make the dtype with align=True");
    layout.alignment = std::max(layout.alignment, align);
  }
  if (layout.itemsize % layout.alignment != 0)
    throw BadArgument("records of " + std::to_string(layout.itemsize) + " bytes would hold fields misaligned in every "
                      "other element: make the dtype with align=True");
}

Type Type::record_of(std::shared_ptr<const RecordLayout> layout) {
  Type t;
  t.kind = TypeKind::Record;
  t.record = std::move(layout);
  return t;
}

Type Type::enum_class(std::shared_ptr<const EnumClass> enumeration) {
  Type t;
  t.kind = TypeKind::EnumClass;
  t.enumeration = std::move(enumeration);
  return t;
}

Type Type::enum_member(std::shared_ptr<const EnumClass> enumeration) {
  Type t = scalar(DType::Int64, enumeration->int_valued);
  t.enumeration = std::move(enumeration);
  return t;
}

static bool same_enum(const std::shared_ptr<const EnumClass>& a, const std::shared_ptr<const EnumClass>& b) {
  return a == b || (a && b && a->identity == b->identity);
}

bool Type::operator==(const Type& other) const {
  if (kind != other.kind) return false;
  switch (kind) {
    case TypeKind::Scalar:
      return dtype == other.dtype && weak == other.weak && same_enum(enumeration, other.enumeration);
    case TypeKind::EnumClass:
      return same_enum(enumeration, other.enumeration);
    case TypeKind::DType:
      return dtype == other.dtype;
    case TypeKind::Array:
      return dtype == other.dtype && ndim == other.ndim && contiguous == other.contiguous &&
             space == other.space && same_record(record, other.record);
    case TypeKind::Record:
      return same_record(record, other.record);
    case TypeKind::Tuple:
      return items == other.items && fields == other.fields;
    case TypeKind::Module:
    case TypeKind::Function:
      return name == other.name;
    case TypeKind::Unknown:
    case TypeKind::Void:
    case TypeKind::Range:
    case TypeKind::GridGroup:
      return true;
  }
  return true;
}

bool Type::is_integer() const {
  if (kind != TypeKind::Scalar) return false;
  DTypeKind k = info(dtype).kind;
  return k == DTypeKind::Signed || k == DTypeKind::Unsigned;
}

bool Type::is_float() const { return kind == TypeKind::Scalar && info(dtype).kind == DTypeKind::Float; }

std::string to_string(const Type& type) {
  switch (type.kind) {
    case TypeKind::Unknown:
      return "unknown";
    case TypeKind::Void:
      return "void";
    case TypeKind::Scalar:
      if (type.enumeration) return "enum(" + type.enumeration->name + ")";
      return info(type.dtype).name;  // weak literals read as their dtype: messages speak NumPy's names
    case TypeKind::EnumClass:
      return "enum class(" + type.enumeration->name + ")";
    case TypeKind::Array: {
      const char* space = type.space == MemorySpace::Shared  ? "shared "
                          : type.space == MemorySpace::Local ? "local "
                                                             : "";
      const std::string element = type.record ? to_string(Type::record_of(type.record)) : info(type.dtype).name;
      return std::string(space) + "array(" + element + ", " + std::to_string(type.ndim) + "d, " +
             (type.contiguous ? "C" : "A") + ")";
    }
    case TypeKind::Record: {
      std::string out = "record(";
      for (const RecordField& f : type.record->fields) {
        out += (&f == &type.record->fields.front() ? "" : ", ") + f.name + ": " + info(f.dtype).name;
        for (size_t d = 0; d < f.shape.size(); ++d) out += (d ? ", " : "[") + std::to_string(f.shape[d]);
        if (!f.shape.empty()) out += "]";
      }
      return out + ")";
    }
    case TypeKind::Tuple: {
      std::string out = type.fields.empty() ? "tuple(" : "namedtuple(";
      for (size_t i = 0; i < type.items.size(); ++i)
        out += (i ? ", " : "") + (type.fields.empty() ? "" : type.fields[i] + "=") + to_string(type.items[i]);
      return out + ")";
    }
    case TypeKind::Module:
      return "module(" + type.name + ")";
    case TypeKind::Function:
      return "function(" + type.name + ")";
    case TypeKind::DType:
      return "dtype(" + std::string(info(type.dtype).name) + ")";
    case TypeKind::Range:
      return "range";
    case TypeKind::GridGroup:
      return "grid_group";
  }
  return "unknown";
}

const char* op_text(Op op) {
  switch (op) {
    case Op::None: return "";
    case Op::Add: return "+";
    case Op::Sub: return "-";
    case Op::Mul: return "*";
    case Op::Div: return "/";
    case Op::FloorDiv: return "//";
    case Op::Mod: return "%";
    case Op::Pow: return "**";
    case Op::LShift: return "<<";
    case Op::RShift: return ">>";
    case Op::BitAnd: return "&";
    case Op::BitOr: return "|";
    case Op::BitXor: return "^";
    case Op::MatMul: return "@";
    case Op::UAdd: return "+";
    case Op::USub: return "-";
    case Op::Invert: return "~";
    case Op::Not: return "not";
    case Op::Eq: return "==";
    case Op::NotEq: return "!=";
    case Op::Lt: return "<";
    case Op::LtE: return "<=";
    case Op::Gt: return ">";
    case Op::GtE: return ">=";
    case Op::Is: return "is";
    case Op::IsNot: return "is not";
    case Op::In: return "in";
    case Op::NotIn: return "not in";
    case Op::And: return "and";
    case Op::Or: return "or";
  }
  return "";
}

bool is_slice(const Expr& e) {
  return e.kind == ExprKind::Call && e.args.size() == 4 && e.args[0]->kind == ExprKind::Name && e.args[0]->name == "slice";
}

SourceLoc start_of(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Attribute:
    case ExprKind::Subscript:
    case ExprKind::Call:
    case ExprKind::Binary:
    case ExprKind::Compare:
    case ExprKind::BoolOp:
      return start_of(*e.args[0]);
    case ExprKind::IfExp:
      return start_of(*e.args[1]);
    default:
      return e.loc;
  }
}

}  // namespace jiasu::fe
