// Python enums in kernels, as Numba types them: a member (Color.red, Color["red"], or an argument) is an int64
// that remembers its class. Members of one class compare by value, with ==, != and `is`; members of two classes
// are never the same member, and equal only when both are IntEnums of equal values. An IntEnum's members are
// ints in every other use (arithmetic, casts, comparisons with numbers); another enum's members are not numbers.
#include <string>

#include "frontend/checker.hpp"

namespace jiasu::fe::checking {

namespace {

bool plain_enum(const Type& t) { return t.enumeration && !t.enumeration->int_valued; }

bool same_class(const Type& a, const Type& b) {
  return a.enumeration && b.enumeration && a.enumeration->identity == b.enumeration->identity;
}

}  // namespace

// Arithmetic and the like: an IntEnum's member is an int; another enum's is refused with `message`.
void Checker::refuse_plain_enums(const Type& a, const Type& b, const std::string& message, SourceLoc loc) const {
  if (plain_enum(a) || plain_enum(b)) fail(loc, message);
}

// Color.red or Color["red"] of `enumeration` (a class used by name): the member, as a constant.
Type Checker::enum_member(Expr& e, const Type& enumeration, const std::string& name) {
  const EnumClass& cls = *enumeration.enumeration;
  for (const auto& [member, value] : cls.members) {
    if (member != name) continue;
    e.meaning = Meaning::Constant;
    e.int_value = value;
    return Type::enum_member(enumeration.enumeration);
  }
  fail(e.loc, "'" + name + "' is not a member of enum " + cls.name);
}

// A comparison with an enum member among its operands: true when it is decided at compile time (e becomes a
// bool constant: members of two classes, or a plain enum's member and a number); otherwise `is` and `is not`
// between members of one class become == and !=, and the ordinary checks follow.
bool Checker::compare_enums(Expr& e) {
  bool any = false;
  for (const ExprPtr& operand : e.args) any = any || operand->type.enumeration;
  if (!any) return false;
  if (e.ops.size() != 1) fail(e.loc, "chained comparisons of enum members are not supported in kernels");
  const Type& a = e.args[0]->type;
  const Type& b = e.args[1]->type;
  Op& op = e.ops[0];
  const bool identity = op == Op::Is || op == Op::IsNot;
  const bool negated = op == Op::IsNot || op == Op::NotEq;
  auto decided = [&](bool value) {
    e.meaning = Meaning::Constant;
    e.int_value = value;
    return true;
  };
  if (identity) {
    if (!a.enumeration || !b.enumeration)
      fail(e.loc, std::string("'") + op_text(op) + "' compares enum members in kernels; compare numbers with == or !=");
    if (!same_class(a, b)) return decided(negated);
    op = negated ? Op::NotEq : Op::Eq;
    return false;
  }
  const bool ordered = op != Op::Eq && op != Op::NotEq;
  if (same_class(a, b)) {
    if (ordered && plain_enum(a))
      fail(e.loc, std::string("'") + op_text(op) + "' is not supported between members of enum " + a.enumeration->name);
    return false;
  }
  if (!plain_enum(a) && !plain_enum(b)) return false;  // IntEnums and numbers: compared as ints
  if (ordered)
    fail(e.loc, std::string("unsupported operand types for ") + op_text(op) + ": " + to_string(a) + " and " + to_string(b));
  return decided(negated);  // a plain enum's member equals no number and no other class's member
}

}  // namespace jiasu::fe::checking
