// check(): NumPy's ufuncs in kernels, as Numba allows them.
//   - Those that are Python operators (np.add, np.bitwise_and, np.less, np.logical_and, np.invert, ...) are
//     rewritten into the operator, so that they type and compile as `a + b`, `a < b`, `bool(a) and bool(b)`
//     (np.less & co. also order complex numbers, as NumPy does: by real part, then imaginary part).
//   - A ufunc given its output array, `np.sin(x, out)` or `np.sin(x, out=out)`, fills it: the statement
//     becomes a loop nest over out's shape storing the ufunc of the inputs' elements (a scalar input, or an
//     array of out's shape, indexed alike; arrays are not broadcast). Scalar inputs are evaluated once.
#include "frontend/checker.hpp"

namespace jiasu::fe::checking {
namespace {

struct OperatorUfunc {
  const char* name;
  ExprKind kind;  // Binary, Unary, Compare or BoolOp (of the inputs' truth)
  Op op;
  int inputs;
};

const OperatorUfunc kOperatorUfuncs[] = {
    {"add", ExprKind::Binary, Op::Add, 2},
    {"subtract", ExprKind::Binary, Op::Sub, 2},
    {"multiply", ExprKind::Binary, Op::Mul, 2},
    {"divide", ExprKind::Binary, Op::Div, 2},
    {"true_divide", ExprKind::Binary, Op::Div, 2},
    {"floor_divide", ExprKind::Binary, Op::FloorDiv, 2},
    {"bitwise_and", ExprKind::Binary, Op::BitAnd, 2},
    {"bitwise_or", ExprKind::Binary, Op::BitOr, 2},
    {"bitwise_xor", ExprKind::Binary, Op::BitXor, 2},
    {"left_shift", ExprKind::Binary, Op::LShift, 2},
    {"right_shift", ExprKind::Binary, Op::RShift, 2},
    {"invert", ExprKind::Unary, Op::Invert, 1},
    {"bitwise_not", ExprKind::Unary, Op::Invert, 1},
    {"negative", ExprKind::Unary, Op::USub, 1},
    {"positive", ExprKind::Unary, Op::UAdd, 1},
    {"equal", ExprKind::Compare, Op::Eq, 2},
    {"not_equal", ExprKind::Compare, Op::NotEq, 2},
    {"less", ExprKind::Compare, Op::Lt, 2},
    {"less_equal", ExprKind::Compare, Op::LtE, 2},
    {"greater", ExprKind::Compare, Op::Gt, 2},
    {"greater_equal", ExprKind::Compare, Op::GtE, 2},
    {"logical_and", ExprKind::BoolOp, Op::And, 2},
    {"logical_or", ExprKind::BoolOp, Op::Or, 2},
    {"logical_xor", ExprKind::Compare, Op::NotEq, 2},  // of the truths: bool(a) != bool(b)
    {"logical_not", ExprKind::Unary, Op::Not, 1},
};

// The operator module's functions as values (op = operator.add; op(a, b)), as Numba takes them: Python's
// operators, so complex numbers are not ordered. operator.abs is the builtin abs.
const OperatorUfunc kOperatorFunctions[] = {
    {"add", ExprKind::Binary, Op::Add, 2},         {"iadd", ExprKind::Binary, Op::Add, 2},
    {"sub", ExprKind::Binary, Op::Sub, 2},         {"isub", ExprKind::Binary, Op::Sub, 2},
    {"mul", ExprKind::Binary, Op::Mul, 2},         {"imul", ExprKind::Binary, Op::Mul, 2},
    {"truediv", ExprKind::Binary, Op::Div, 2},     {"itruediv", ExprKind::Binary, Op::Div, 2},
    {"floordiv", ExprKind::Binary, Op::FloorDiv, 2}, {"ifloordiv", ExprKind::Binary, Op::FloorDiv, 2},
    {"mod", ExprKind::Binary, Op::Mod, 2},         {"imod", ExprKind::Binary, Op::Mod, 2},
    {"pow", ExprKind::Binary, Op::Pow, 2},         {"ipow", ExprKind::Binary, Op::Pow, 2},
    {"and_", ExprKind::Binary, Op::BitAnd, 2},     {"iand", ExprKind::Binary, Op::BitAnd, 2},
    {"or_", ExprKind::Binary, Op::BitOr, 2},       {"ior", ExprKind::Binary, Op::BitOr, 2},
    {"xor", ExprKind::Binary, Op::BitXor, 2},      {"ixor", ExprKind::Binary, Op::BitXor, 2},
    {"lshift", ExprKind::Binary, Op::LShift, 2},   {"ilshift", ExprKind::Binary, Op::LShift, 2},
    {"rshift", ExprKind::Binary, Op::RShift, 2},   {"irshift", ExprKind::Binary, Op::RShift, 2},
    {"neg", ExprKind::Unary, Op::USub, 1},         {"pos", ExprKind::Unary, Op::UAdd, 1},
    {"invert", ExprKind::Unary, Op::Invert, 1},    {"inv", ExprKind::Unary, Op::Invert, 1},
    {"not_", ExprKind::Unary, Op::Not, 1},
    {"lt", ExprKind::Compare, Op::Lt, 2},          {"le", ExprKind::Compare, Op::LtE, 2},
    {"gt", ExprKind::Compare, Op::Gt, 2},          {"ge", ExprKind::Compare, Op::GtE, 2},
    {"eq", ExprKind::Compare, Op::Eq, 2},          {"ne", ExprKind::Compare, Op::NotEq, 2},
};

ExprPtr node(ExprKind kind, SourceLoc loc) { return std::make_unique<Expr>(kind, loc); }

// A name check() resolves to a builtin without asking the module (visit_name): `bool` stays Python's bool
// even where the module binds the name.
ExprPtr builtin_name(const std::string& path, SourceLoc loc) {
  ExprPtr e = node(ExprKind::Name, loc);
  e->name = path;
  e->meaning = Meaning::Builtin;
  e->builtin = find_builtin(path);
  return e;
}

ExprPtr truth(ExprPtr value) {
  ExprPtr call = node(ExprKind::Call, value->loc);
  call->args.push_back(builtin_name("bool", value->loc));
  call->args.push_back(std::move(value));
  return call;
}

// The callee's name when a call is np.NAME(...) (the module already visited), else "".
std::string numpy_name(const Expr& call) {
  const Expr& callee = *call.args[0];
  if (callee.kind != ExprKind::Attribute) return "";
  const Expr& base = *callee.args[0];
  return base.type.kind == TypeKind::Module && base.type.name == "numpy" ? callee.name : "";
}

template <size_t N>
const OperatorUfunc* find(const OperatorUfunc (&table)[N], const std::string& name) {
  for (const OperatorUfunc& u : table)
    if (name == u.name) return &u;
  return nullptr;
}
const OperatorUfunc* operator_ufunc(const std::string& name) { return find(kOperatorUfuncs, name); }

// A copy of an unchecked name or attribute chain (what the loop nest reads again on every pass).
ExprPtr copy_plain(const Expr& e) {
  ExprPtr c = node(e.kind, e.loc);
  c->name = e.name;
  for (const ExprPtr& a : e.args) c->args.push_back(copy_plain(*a));
  return c;
}

bool is_plain(const Expr& e) {
  return e.kind == ExprKind::Name || (e.kind == ExprKind::Attribute && is_plain(*e.args[0]));
}

}  // namespace

bool Checker::rewrite_operator_ufunc(Expr& call) {
  Expr& callee = *call.args[0];
  const OperatorUfunc* u = nullptr;
  bool numpy = false;
  if (callee.kind == ExprKind::Attribute) {
    visit(*callee.args[0]);
    u = operator_ufunc(numpy_name(call));
    numpy = true;
  } else if (callee.kind == ExprKind::Name) {  // a global bound to operator.add & co.
    const Type& type = visit(callee);
    const std::string prefix = "operator.";
    if (type.kind == TypeKind::Function && type.name.rfind(prefix, 0) == 0) {
      const std::string name = type.name.substr(prefix.size());
      if (name == "abs" || name == "truth") {  // builtins: abs(x), bool(x)
        call.args[0] = builtin_name(name == "abs" ? "abs" : "bool", callee.loc);
        return false;
      }
      u = find(kOperatorFunctions, name);
      if (!u) fail(callee.loc, "'" + type.name + "' is not supported in kernels");
    }
  }
  if (!u || static_cast<int>(call.args.size()) - 1 != u->inputs || !call.keywords.empty()) return false;
  std::vector<ExprPtr> operands;
  for (size_t i = 1; i < call.args.size(); ++i) operands.push_back(std::move(call.args[i]));
  const bool of_truths = u->kind == ExprKind::BoolOp || std::string(u->name) == "logical_xor";
  if (of_truths)
    for (ExprPtr& operand : operands) operand = truth(std::move(operand));
  call.kind = u->kind;
  call.args = std::move(operands);
  if (u->kind == ExprKind::Compare) {
    call.ops = {u->op};
    call.numpy_order = numpy;
  } else {
    call.op = u->op;
  }
  return true;
}

// How many inputs np.NAME takes, when it is a ufunc the kernel language has; 0 otherwise.
int Checker::ufunc_inputs(const Expr& call) {
  const std::string name = numpy_name(call);
  if (name.empty()) return 0;
  if (const OperatorUfunc* u = operator_ufunc(name)) return u->inputs;
  int index = find_builtin(builtin_path("numpy." + name));
  if (index < 0) return 0;
  switch (builtin(index).rule) {
    case BuiltinRule::FloatMath1: case BuiltinRule::SameNumeric1: case BuiltinRule::FloatPredicate:
    case BuiltinRule::Conjugate:
      return 1;
    case BuiltinRule::FloatMath2: case BuiltinRule::MinMax: case BuiltinRule::Power2:
      return 2;
    default:
      return 0;
  }
}

bool Checker::rewrite_ufunc_with_out(Stmt& s) {
  Expr& call = *s.value;
  if (call.kind != ExprKind::Call || call.args[0]->kind != ExprKind::Attribute) return false;
  visit(*call.args[0]->args[0]);
  const int inputs = ufunc_inputs(call);
  const size_t given = call.args.size() - 1;
  ExprPtr out;
  if (inputs > 0 && call.keywords.size() == 1 && call.keywords[0].first == "out" && given == static_cast<size_t>(inputs)) {
    out = std::move(call.keywords[0].second);
    call.keywords.clear();
  } else if (inputs > 0 && call.keywords.empty() && given == static_cast<size_t>(inputs) + 1) {
    out = std::move(call.args.back());
    call.args.pop_back();
  } else {
    return false;
  }
  const std::string f = describe(*call.args[0]) + "()";
  const Type& out_type = visit(*out);
  if (out_type.kind != TypeKind::Array || !is_plain(*out))
    fail(start_of(*out), f + "'s output must be an array variable, not " + to_string(out_type));
  if (out_type.ndim == 0) fail(start_of(*out), f + "'s output must have at least one dimension");

  // if True: <scalar inputs held once>; for i0 in range(out.shape[0]): ... out[i0, ...] = np.f(<elements>)
  const SourceLoc loc = s.loc;
  const std::string tag = std::to_string(loc.line) + "_" + std::to_string(loc.column);
  std::vector<StmtPtr> block;
  std::vector<std::string> indices;
  for (int d = 0; d < out_type.ndim; ++d) indices.push_back("jiasu_ufunc_" + tag + "_i" + std::to_string(d));
  auto index_names = [&](const Expr& array) {
    ExprPtr element = node(ExprKind::Subscript, array.loc);
    element->args.push_back(copy_plain(array));
    for (const std::string& index : indices) {
      element->args.push_back(node(ExprKind::Name, array.loc));
      element->args.back()->name = index;
    }
    return element;
  };
  for (size_t i = 1; i < call.args.size(); ++i) {
    ExprPtr& input = call.args[i];
    const Type& type = visit(*input);
    if (type.kind == TypeKind::Array) {
      if (type.ndim != out_type.ndim || !is_plain(*input))
        fail(start_of(*input), f + " takes arrays of its output's dimensions (" + std::to_string(out_type.ndim) +
                                   "), as variables, and scalars; not " + to_string(type));
      input = index_names(*input);
      continue;
    }
    if (!is_number(type)) fail(start_of(*input), f + " needs numbers or arrays, not " + to_string(type));
    const std::string held = "jiasu_ufunc_" + tag + "_x" + std::to_string(i);
    auto hold = std::make_unique<Stmt>(StmtKind::Assign, input->loc);
    hold->targets.push_back(node(ExprKind::Name, input->loc));
    hold->targets.back()->name = held;
    const SourceLoc at = input->loc;
    hold->value = std::move(input);
    block.push_back(std::move(hold));
    input = node(ExprKind::Name, at);
    input->name = held;
  }
  auto store = std::make_unique<Stmt>(StmtKind::Assign, loc);
  store->targets.push_back(index_names(*out));
  store->value = std::move(s.value);
  StmtPtr nest = std::move(store);
  for (int d = out_type.ndim - 1; d >= 0; --d) {
    auto loop = std::make_unique<Stmt>(StmtKind::For, loc);
    loop->targets.push_back(node(ExprKind::Name, loc));
    loop->targets.back()->name = indices[d];
    ExprPtr extent = node(ExprKind::Subscript, loc);
    extent->args.push_back(node(ExprKind::Attribute, loc));
    extent->args.back()->name = "shape";
    extent->args.back()->args.push_back(copy_plain(*out));
    extent->args.push_back(node(ExprKind::Int, loc));
    extent->args.back()->int_value = d;
    ExprPtr range = node(ExprKind::Call, loc);
    range->args.push_back(builtin_name("range", loc));
    range->args.push_back(std::move(extent));
    loop->value = std::move(range);
    loop->body.push_back(std::move(nest));
    nest = std::move(loop);
  }
  block.push_back(std::move(nest));
  s.kind = StmtKind::If;
  s.test = node(ExprKind::Bool, loc);
  s.test->int_value = 1;
  s.value.reset();
  s.body = std::move(block);
  return true;
}

}  // namespace jiasu::fe::checking
