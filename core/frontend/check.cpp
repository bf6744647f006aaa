// check(): name resolution and type inference, one pass over each function in source order.
//
// What check() leaves in the tree for the emitters, beyond Expr::type:
//   * a compile-time constant has Meaning::Constant: a scalar keeps its value in int_value (ints, bool as
//     0/1) or float_value; a constant tuple (a tuple global, the shape of a shared array) becomes an
//     ExprKind::Tuple whose args are its constant items. Folded expressions (s.shape[0], T[1], len(t),
//     a.ndim, s.size, the extents of a shared/local array's shape) become Int literals with
//     Meaning::Constant and no args.
//   * a call's meaning says what it calls: Builtin (Expr::builtin), DeviceFunction (Expr::callee) or
//     DTypeValue (a cast such as np.float32(x)); keyword arguments are moved into positional order.
//   * a tuple index is rewritten to its non-negative constant; `return None` becomes a bare return.
#include "frontend/checker.hpp"

namespace jiasu::fe {
namespace checking {

std::string describe(const Expr& e) {
  if (e.kind == ExprKind::Name) return e.name;
  if (e.kind == ExprKind::Attribute) return describe(*e.args[0]) + "." + e.name;
  return "this expression";
}

std::string plural(size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many.empty() ? one + "s" : many);
}

namespace {

// Python's // and % (floor, sign of the divisor), for folding constant shapes and indices; they wrap as
// int64 does on the device (INT64_MIN // -1 is INT64_MIN, where C++'s / would trap).
int64_t floor_div(int64_t a, int64_t b) {
  if (b == -1) return static_cast<int64_t>(0 - uint64_t(a));
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}
int64_t floor_mod(int64_t a, int64_t b) { return b == -1 ? 0 : a - floor_div(a, b) * b; }

}  // namespace

// The value of an integer expression known at compile time: literals, global constants, folded shapes
// and arithmetic on them. Reads a typed tree.
std::optional<int64_t> constant_int(const Expr& e) {
  if (e.kind == ExprKind::Int) return e.is_uint64 ? std::nullopt : std::optional<int64_t>(e.int_value);
  if (e.meaning == Meaning::Constant && e.type.is_integer()) return e.int_value;
  if (e.kind == ExprKind::Unary && (e.op == Op::USub || e.op == Op::UAdd)) {
    auto v = constant_int(*e.args[0]);
    if (v && e.op == Op::USub) return static_cast<int64_t>(0 - uint64_t(*v));  // wraps, as for Binary
    return v;
  }
  if (e.kind != ExprKind::Binary || !e.type.is_integer()) return std::nullopt;
  auto a = constant_int(*e.args[0]), b = constant_int(*e.args[1]);
  if (!a || !b) return std::nullopt;
  switch (e.op) {
    case Op::Add: return static_cast<int64_t>(uint64_t(*a) + uint64_t(*b));  // wraps like the device would
    case Op::Sub: return static_cast<int64_t>(uint64_t(*a) - uint64_t(*b));
    case Op::Mul: return static_cast<int64_t>(uint64_t(*a) * uint64_t(*b));
    case Op::FloorDiv: return *b ? std::optional<int64_t>(floor_div(*a, *b)) : std::nullopt;
    case Op::Mod: return *b ? std::optional<int64_t>(floor_mod(*a, *b)) : std::nullopt;
    default: return std::nullopt;
  }
}

void make_constant_int(Expr& e, int64_t value) {
  e.kind = ExprKind::Int;
  e.int_value = value;
  e.args.clear();
  e.keywords.clear();
  e.meaning = Meaning::Constant;
}

namespace {

bool is_true_literal(const Expr& e) { return e.kind == ExprKind::Bool && e.int_value != 0; }

bool breaks_out(const std::vector<StmtPtr>& body) {
  for (const StmtPtr& s : body) {
    if (s->kind == StmtKind::Break) return true;
    if (s->kind == StmtKind::If && (breaks_out(s->body) || breaks_out(s->orelse))) return true;
  }
  return false;
}

// Whether control cannot fall off the end of `body` (so a valued function always returns a value).
bool always_returns(const std::vector<StmtPtr>& body) {
  for (const StmtPtr& s : body) {
    if (s->kind == StmtKind::Return || s->kind == StmtKind::Raise) return true;
    if (s->kind == StmtKind::If && !s->orelse.empty() && always_returns(s->body) && always_returns(s->orelse))
      return true;
    if (s->kind == StmtKind::While && is_true_literal(*s->test) && !breaks_out(s->body)) return true;
  }
  return false;
}

void collect_target_names(const Expr& target, std::set<std::string>& names) {
  if (target.kind == ExprKind::Name) names.insert(target.name);
  if (target.kind == ExprKind::Tuple)
    for (const ExprPtr& item : target.args) collect_target_names(*item, names);
}

// Python's scoping: a name assigned anywhere in a function is local to all of it.
void collect_assigned(const std::vector<StmtPtr>& body, std::set<std::string>& names) {
  for (const StmtPtr& s : body) {
    if (s->kind == StmtKind::Assign || s->kind == StmtKind::AugAssign || s->kind == StmtKind::For)
      for (const ExprPtr& target : s->targets) collect_target_names(*target, names);
    if (s->kind == StmtKind::Def) names.insert(s->function->name);
    collect_assigned(s->body, names);
    collect_assigned(s->orelse, names);
  }
}

}  // namespace

void Checker::run(const std::vector<Type>& param_types, bool is_kernel, const std::vector<GlobalValue>& bound) {
  fn_.is_kernel = is_kernel;
  collect_assigned(fn_.body, assigned_);
  for (size_t i = 0; i < fn_.params.size(); ++i) {
    Param& p = fn_.params[i];
    p.type = param_types[i];
    const GlobalValue none;
    const GlobalValue& value = i < bound.size() ? bound[i] : none;
    // A constant integer (or tuple of them) stays a variable where the callee assigns it; a dtype or a
    // function must not be assigned.
    const bool constant = value.kind == GlobalValue::Int || value.kind == GlobalValue::Tuple;
    p.compile_time = value.kind != GlobalValue::Missing && !(constant && assigned_.count(p.name));
    if (!p.compile_time) {
      variables_[p.name] = Variable{p.type, p.loc, static_cast<int>(i), {}};
      continue;
    }
    if (assigned_.count(p.name))
      fail(p.loc, "parameter '" + p.name + "' holds a " + to_string(p.type) +
                      ", which is fixed when the call is compiled: it cannot be assigned");
    globals_[p.name] = value;  // read as a global from here on
  }
  check_definite_assignment(source_.source, fn_, assigned_);
  check_block(fn_.body);
  fn_.return_type = is_kernel ? type_of_kind(TypeKind::Void) : finish_returns();
}

const GlobalValue& Checker::global(const std::string& name) {
  auto it = globals_.find(name);
  if (it == globals_.end())
    it = globals_.emplace(name, source_.resolve ? source_.resolve(name) : GlobalValue{}).first;
  return it->second;
}

void Checker::mark_written(const Expr& array) {
  if (array.type.kind == TypeKind::Array && array.type.space == MemorySpace::Constant)
    fail(start_of(array), "'" + describe(array) + "' is a global array, embedded in the kernel as a constant: it cannot "
                                                  "be written");
  const int param = viewed_param(array);
  if (param >= 0) fn_.params[param].written = true;
}

void Checker::mark_read(const Expr& array) {
  const int param = viewed_param(array);
  if (param >= 0) fn_.params[param].read = true;
}

// The array a view is made of: a[1:], a[i], a.real, a.reshape(shape), a.view(dtype); null for other expressions.
const Expr* view_base(const Expr& e) {
  if (e.kind == ExprKind::Subscript) return e.args[0].get();
  if (e.kind == ExprKind::Attribute && e.type.kind == TypeKind::Array && (e.name == "real" || e.name == "imag"))
    return e.args[0].get();
  if (e.kind == ExprKind::Call && e.meaning == Meaning::Builtin && e.args.size() > 1) {
    const BuiltinRule rule = builtin(e.builtin).rule;
    if (rule == BuiltinRule::Reshape || rule == BuiltinRule::ArrayView) return e.args[1].get();
  }
  return nullptr;
}

// The array parameter whose memory `array` is: itself, or what a view (a[1:], a variable holding one) views.
int Checker::viewed_param(const Expr& array) const {
  if (const Expr* base = view_base(array)) return viewed_param(*base);
  if (array.kind == ExprKind::Attribute) return viewed_param(*array.args[0]);
  if (array.kind != ExprKind::Name) return -1;
  auto it = variables_.find(array.name);
  if (it == variables_.end()) return -1;
  return it->second.param >= 0 ? it->second.param : it->second.view_of;
}

// ---------------------------------------------------------------------------------------------------
// Statements

void Checker::check_block(std::vector<StmtPtr>& body) {
  for (StmtPtr& s : body) check_stmt(*s);
}

void Checker::check_stmt(Stmt& s) {
  switch (s.kind) {
    case StmtKind::Expr:
      if (rewrite_ufunc_with_out(s)) return check_stmt(s);
      visit(*s.value);
      return;
    case StmtKind::Assign: return check_assign(s);
    case StmtKind::AugAssign: return check_aug_assign(s);
    case StmtKind::If:
      check_condition(*s.test);
      check_block(s.body);
      check_block(s.orelse);
      return;
    case StmtKind::For: return check_for(s);
    case StmtKind::While:
      if (!s.orelse.empty()) fail(s.loc, "while/else is not supported");
      check_condition(*s.test);
      check_block(s.body);
      return;
    case StmtKind::Break:
    case StmtKind::Continue:  // parse() already rejects them outside a loop
    case StmtKind::Return: return check_return(s);
    case StmtKind::Pass: return;
    case StmtKind::Raise: return check_raise(s);
    case StmtKind::Def: return check_def(s);
  }
}

void Checker::check_assign(Stmt& s) {
  bool single_name = s.targets.size() == 1 && s.targets[0]->kind == ExprKind::Name;
  if (single_name) new_array_call_ = s.value.get();
  Type value = visit(*s.value);
  new_array_call_ = nullptr;
  if (value.kind == TypeKind::Array && value.space == MemorySpace::Constant) {  // C = cuda.const.array_like(G)
    const Expr* source = s.value.get();
    if (source->kind == ExprKind::Call) source = source->args[1].get();
    for (ExprPtr& target : s.targets) {
      if (target->kind != ExprKind::Name || variables_.count(target->name) || constant_aliases_.count(target->name))
        fail(start_of(*target), "a constant array can only be given a new name once: " + describe(*s.value));
      constant_aliases_[target->name] = source->int_value;
    }
    s.kind = StmtKind::Pass;  // a name for the constant, nothing to run
    return;
  }
  for (ExprPtr& target : s.targets) assign_target(*target, value, s.value.get());
}

void Checker::assign_target(Expr& target, const Type& value, const Expr* value_expr) {
  switch (target.kind) {
    case ExprKind::Name: return bind_name(target, value, value_expr);
    case ExprKind::Attribute:
    case ExprKind::Subscript: {
      Type element = store_target(target);
      if (element.kind == TypeKind::Record || element.kind == TypeKind::Array) return check_copy(target, element, value);
      const Expr& array = *target.args[0];
      if (!can_store(value, element.dtype))
        fail(start_of(target), "cannot store " + to_string(value) + " into an element of " + to_string(array.type) + " '" +
                             describe(array) + "'" +
                             (is_number(value) ? " (convert explicitly, e.g. with " + dtype_code(element.dtype, "(...)") + ")" : ""));
      check_literal_fits(value_expr, element);
      return;
    }
    case ExprKind::Tuple: {
      if (value.kind != TypeKind::Tuple)
        fail(target.loc, "cannot unpack " + to_string(value) + " into " + plural(target.args.size(), "target"));
      if (value.items.size() != target.args.size())
        fail(target.loc, "cannot unpack a tuple of " + plural(value.items.size(), "value") + " into " +
                             plural(target.args.size(), "target"));
      bool literal_items = value_expr && value_expr->kind == ExprKind::Tuple;
      for (size_t i = 0; i < target.args.size(); ++i)
        assign_target(*target.args[i], value.items[i], literal_items ? value_expr->args[i].get() : nullptr);
      target.type = value;
      return;
    }
    default: fail(start_of(target), "cannot assign to this expression");  // parse() allows no other targets
  }
}

void Checker::bind_name(Expr& target, const Type& value, const Expr* value_expr) {
  target.meaning = Meaning::Local;
  auto it = variables_.find(target.name);
  if (it == variables_.end()) {
    auto shape = new_array_shapes_.find(value_expr);
    bool new_array = value.kind == TypeKind::Array && shape != new_array_shapes_.end();
    // v = a[1:], or r = a[i] of a record array (a reference to the record, as Numba's records are)
    if ((value.kind == TypeKind::Array && value_expr && view_base(*value_expr)) ||
        value.kind == TypeKind::Record) {
      const int root = value_expr ? viewed_param(*value_expr) : -1;
      variables_[target.name] = Variable{value, target.loc, -1, {}, root};
      fn_.locals.push_back(Local{target.name, value, target.loc});
      target.type = value;
      return;
    }
    if (value.kind == TypeKind::Array && !new_array)
      fail(target.loc, "cannot assign " + to_string(value) + " to '" + target.name +
                           "': arrays cannot be copied or aliased; only " + jiasu_code("shared.array(...)") + " and " +
                           jiasu_code("local.array(...)") + " can be assigned to a variable" + jiasu_import_note());
    if (!is_number(value) && !is_number_tuple(value) && !new_array && value.kind != TypeKind::GridGroup)
      fail(target.loc, "cannot assign " + (value.kind == TypeKind::Void ? std::string("a call that returns nothing") : to_string(value)) +
                           " to '" + target.name + "': variables hold numbers, tuples of numbers, shared/local arrays "
                           "and grid groups");
    Type type = committed(value);
    if (value_expr) first_values_[target.name] = captured_value(*value_expr);
    variables_[target.name] = Variable{type, target.loc, -1, new_array ? shape->second : std::vector<int64_t>{}};
    fn_.locals.push_back(Local{target.name, type, target.loc});
    target.type = type;
    return;
  }
  const Variable& v = it->second;
  if (v.type.kind == TypeKind::Array && v.param < 0 && v.shape.empty() && value == v.type && value_expr &&
      view_base(*value_expr) && viewed_param(*value_expr) == v.view_of) {
    target.type = v.type;  // another view of the same array, of the same type
    return;
  }
  if (v.type.kind == TypeKind::Array)
    fail(target.loc, v.param >= 0 ? "cannot assign to array parameter '" + target.name + "'"
                                  : "array variable '" + target.name + "' (line " + std::to_string(v.loc.line) +
                                        ") cannot be reassigned");
  if (!assignable(v.type, value)) {
    std::string was = v.param >= 0 ? "parameter '" + target.name + "' is " + to_string(v.type)
                                   : "variable '" + target.name + "' was " + to_string(v.type) + " (line " +
                                         std::to_string(v.loc.line) + ")";
    fail(target.loc, was + " but is assigned " + to_string(value) + " here");
  }
  check_literal_fits(value_expr, v.type);
  target.type = v.type;
}

// a[i] = r (a record of the same layout) or r.h = b (a subarray field, from an array of as many axes): copied
// element by element, as NumPy assigns them.
void Checker::check_copy(const Expr& target, const Type& into, const Type& value) {
  const Expr& base = *target.args[0];
  if (into.kind == TypeKind::Record) {
    if (value != into)
      fail(start_of(target), "cannot store " + to_string(value) + " into an element of " + to_string(base.type) + " '" +
                                 describe(base) + "'");
    return;
  }
  if (value.kind != TypeKind::Array || value.record || value.ndim != into.ndim ||
      !can_store(Type::scalar(value.dtype), into.dtype))
    fail(start_of(target), "cannot store " + to_string(value) + " into field '" + target.name + "' of " +
                               to_string(base.type) + " '" + describe(base) + "': it takes an array of " +
                               plural(into.ndim, "axis", "axes") + " of " + info(into.dtype).name);
}

// The element type an `a[i] = ...` or `a[i] += ...` target stores into (a record's field for r.x = ...); the
// array counts as written.
Type Checker::store_target(Expr& target) {
  Expr& base = *target.args[0];
  const Type& type = visit(base);
  if (type.kind == TypeKind::Record) {  // r.x = v, r['x'] = v, a[i].x = v
    mark_written(base);
    target.type = target.kind == ExprKind::Attribute ? record_field(target, type) : record_item(target, Type(type));
    return target.type;
  }
  if (target.kind == ExprKind::Attribute)
    fail(start_of(target), "cannot assign to attribute '" + target.name + "' of " + to_string(type) + " '" +
                               describe(base) + "'");
  if (type.kind == TypeKind::Tuple) fail(start_of(target), "tuples are immutable: cannot assign to an item of '" + describe(base) + "'");
  if (type.kind != TypeKind::Array) fail(start_of(target), to_string(type) + " '" + describe(base) + "' does not support item assignment");
  mark_written(base);
  target.type = array_element(target, type);
  if (target.type.kind == TypeKind::Array)  // a[1:3] = x: NumPy would fill the view
    fail(start_of(target), "cannot assign to a view of " + to_string(type) + " '" + describe(base) +
                               "' (a slice, or fewer indices than axes): assign to its elements one at a time");
  return target.type;
}

// NumPy raises for a Python integer that does not fit the type it meets (int8 + 300); so do we.
void Checker::check_literal_fits(const Expr* value, const Type& target) const {
  if (!value || !value->type.weak || !target.is_integer() || target.weak) return;
  bool is_unsigned = info(target.dtype).kind == DTypeKind::Unsigned;
  int bits = 8 * static_cast<int>(itemsize(target.dtype));
  if (value->kind == ExprKind::Int && value->is_uint64) {
    if (target.dtype != DType::UInt64)
      fail(value->loc, "Python integer " + std::to_string(value->uint_value) + " is out of bounds for " + to_string(target));
    return;
  }
  auto v = constant_int(*value);
  if (!v) return;
  bool fits = is_unsigned ? *v >= 0 && (bits == 64 || *v < (int64_t(1) << bits))
                          : bits == 64 || (*v >= -(int64_t(1) << (bits - 1)) && *v < (int64_t(1) << (bits - 1)));
  if (!fits) fail(value->loc, "Python integer " + std::to_string(*v) + " is out of bounds for " + to_string(target));
}

void Checker::check_aug_assign(Stmt& s) {
  Expr& target = *s.targets[0];
  std::string op = std::string(op_text(s.op)) + "=";
  Type current;
  if (target.kind == ExprKind::Name) {
    auto it = variables_.find(target.name);
    if (it == variables_.end()) fail(target.loc, "local variable '" + target.name + "' is used before it is assigned");
    current = it->second.type;
    if (!is_number(current)) fail(s.loc, "'" + op + "' is not supported on " + to_string(current) + " '" + target.name + "'");
    target.meaning = Meaning::Local;
    target.type = current;
  } else if (target.kind == ExprKind::Subscript || target.kind == ExprKind::Attribute) {
    current = store_target(target);
    mark_read(*target.args[0]);
    if (!is_number(current)) fail(s.loc, "'" + op + "' is not supported on " + to_string(current) + " '" + describe(target) + "'");
  } else {
    fail(target.loc, "'" + op + "' needs a variable or an array element on its left");
  }
  const Type& value = visit(*s.value);
  Type result = binary(s.op, current, value, s.loc, &target, s.value.get());
  if (!can_store(result, current.dtype))
    fail(s.loc, "'" + describe(target.kind == ExprKind::Name ? target : *target.args[0]) + " " + op + " ...' gives " +
                    to_string(result) + ", which cannot be stored back into " + to_string(current));
}

void Checker::check_for(Stmt& s) {
  if (!s.orelse.empty()) fail(s.loc, "for/else is not supported");
  rewrite_sequence_loop(s);  // for v in a / enumerate(a) / zip(a, b): a loop over range() from here on
  Expr& iterable = *s.value;
  range_call_ = &iterable;
  const Type& type = visit(iterable);
  range_call_ = nullptr;
  if (type.kind != TypeKind::Range)
    fail(start_of(iterable), "for loops iterate over range(...), 1-D arrays, or enumerate() and zip() of them, not " +
                                 to_string(type));
  Expr& target = *s.targets[0];
  if (target.kind != ExprKind::Name) fail(target.loc, "the target of a for loop over range() must be a single name");
  // The loop variable is int64 unless every bound is the same strong integer type; a variable that
  // already exists keeps its integer type when it holds every bound (a second loop over range(10)).
  Type loop_type = iterable.args[1]->type;
  for (size_t i = 1; i < iterable.args.size(); ++i)
    if (iterable.args[i]->type != loop_type || loop_type.weak) loop_type = Type::scalar(DType::Int64);
  auto existing = variables_.find(target.name);
  if (existing != variables_.end() && existing->second.type.is_integer()) {
    const Type& variable = existing->second.type;
    bool holds_bounds = true;
    for (size_t i = 1; i < iterable.args.size(); ++i) holds_bounds &= promote(iterable.args[i]->type, variable) == variable;
    if (holds_bounds) loop_type = variable;
  }
  bind_name(target, loop_type, nullptr);
  check_block(s.body);
}

void Checker::check_return(Stmt& s) {
  if (s.value && s.value->kind == ExprKind::None) s.value.reset();
  if (fn_.is_kernel) {
    if (s.value) fail(s.loc, "kernels cannot return a value");
    return;
  }
  if (!s.value) {
    bare_returns_.push_back(s.loc);
    return;
  }
  const Type& type = visit(*s.value);
  if (!is_number(type) && type.kind != TypeKind::Record)
    fail(start_of(*s.value), "device functions can only return numbers and records, not " + to_string(type));
  returns_.push_back(ReturnSite{type, s.loc});
}

// A device function's return type: its returned values promoted together (literals committed).
Type Checker::finish_returns() {
  if (returns_.empty()) return type_of_kind(TypeKind::Void);
  Type type = returns_[0].type;
  for (const ReturnSite& r : returns_) {
    if (type.kind == TypeKind::Record || r.type.kind == TypeKind::Record) {  // a reference: of one layout only
      if (r.type != type)
        fail(r.loc, "function '" + fn_.name + "' returns " + to_string(type) + " at line " +
                        std::to_string(returns_[0].loc.line) + " but " + to_string(r.type) + " here");
      continue;
    }
    if (r.type == type) continue;  // members of one enum stay its members
    refuse_plain_enums(type, r.type, "function '" + fn_.name + "' returns " + to_string(type) + " at line " +
                                         std::to_string(returns_[0].loc.line) + " but " + to_string(r.type) + " here",
                       r.loc);
    type = promote(type, r.type);
    type.enumeration = nullptr;
  }
  type = committed(type);
  std::string returns = "function '" + fn_.name + "' returns " + to_string(type) + " at line " +
                        std::to_string(returns_[0].loc.line);
  if (!bare_returns_.empty()) fail(bare_returns_[0], returns + " but returns nothing here");
  if (!always_returns(fn_.body)) fail(fn_.loc, returns + " but can reach its end without returning a value");
  return type;
}

}  // namespace checking

namespace {

// The caller's arguments against the kernel's parameters, as Python would: a wrong count or a kind of
// value no kernel takes is the caller's error (BadArgument, TypeError in Python), and the message says
// where the kernel is defined. (A device function's count is checked at its call, in the kernel.)
void check_arguments(const Function& kernel, const SourceText& source, const std::vector<Type>& signature) {
  if (!kernel.params.empty() && kernel.params.back().variadic)
    throw CompileError(source, kernel.params.back().loc,
                       "'*" + kernel.params.back().name + "' is for device functions: a kernel takes one argument per parameter");
  auto at = [&](SourceLoc loc) {
    return source.file + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.column);
  };
  const size_t expected = kernel.params.size(), given = signature.size();
  if (given < expected) {
    size_t missing = expected - given;
    std::string names;
    for (size_t i = given; i < expected; ++i)
      names += (i == given ? "" : i + 1 == expected ? (missing == 2 ? " and " : ", and ") : ", ") +
               ("'" + kernel.params[i].name + "'");
    throw BadArgument(kernel.name + "() missing " + checking::plural(missing, "required positional argument") +
                      ": " + names + " (defined at " + at(kernel.loc) + ")");
  }
  if (given > expected)
    throw BadArgument(kernel.name + "() takes " + checking::plural(expected, "positional argument") + " but " +
                      std::to_string(given) + (given == 1 ? " was" : " were") + " given (defined at " + at(kernel.loc) + ")");
}

}  // namespace

Program check(std::shared_ptr<const FunctionSource> kernel, const std::vector<Type>& signature) {
  checking::Session session;
  session.stack_base = static_cast<const char*>(__builtin_frame_address(0));
  std::unique_ptr<Function> fn = parse(kernel->source);
  check_arguments(*fn, kernel->source, signature);
  session.active.push_back(kernel->identity);
  session.add_linked(kernel->link);
  checking::Checker(session, *kernel, *fn).run(signature, true);
  fn->mangled_name = "jiasu_kernel_" + fn->name;
  session.program.functions.push_back(std::move(fn));
  session.program.sources.push_back(std::move(kernel));
  return std::move(session.program);
}

Program check_scalar_function(std::shared_ptr<const FunctionSource> function, const std::vector<Type>& signature) {
  checking::Session session;
  session.stack_base = static_cast<const char*>(__builtin_frame_address(0));
  std::unique_ptr<Function> fn = parse(function->source);
  check_arguments(*fn, function->source, signature);
  for (size_t i = 0; i < signature.size(); ++i)
    if (!signature[i].is_scalar())
      throw CompileError(function->source, fn->params[i].loc,
                         "an elementwise function takes numbers, but parameter '" + fn->params[i].name + "' is " +
                             to_string(signature[i]));
  session.active.push_back(function->identity);
  checking::Checker(session, *function, *fn).run(signature, false);
  if (!fn->return_type.is_scalar())
    throw CompileError(function->source, fn->loc,
                       "an elementwise function must return one number, but '" + fn->name + "' returns " +
                           (fn->return_type.kind == TypeKind::Void ? std::string("nothing")
                                                                   : to_string(fn->return_type)));
  fn->mangled_name = "jiasu_scalar_" + fn->name;
  session.program.functions.push_back(std::move(fn));
  session.program.sources.push_back(std::move(function));
  return std::move(session.program);
}

}  // namespace jiasu::fe
