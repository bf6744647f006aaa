// check(): functions defined in a function's body (nested defs), and the calls that pass them tuples: a
// `*args` parameter and a `*t` argument.
//
// A nested def is a device function of its own, specialised per call as a @jiasu.func is, and passed to
// device functions the same way (bound at compile time). It reads the enclosing function's names as its
// globals, bound when the def runs, as Numba's closures capture constants: variables assigned once to a
// constant, the nested functions defined before it, the enclosing function's compile-time parameters and
// its globals. A variable whose value is known only when the kernel runs cannot be captured: reading one
// is a CompileError at the read (pass it as an argument instead).
#include <algorithm>

#include "frontend/checker.hpp"

namespace jiasu::fe {
namespace {

bool same_place(SourceLoc a, SourceLoc b) { return a.line == b.line && a.column == b.column; }

// The def at `loc` among `body`'s statements and the functions nested in them; null when there is none.
std::unique_ptr<Function>* find_def(std::vector<StmtPtr>& body, SourceLoc loc) {
  for (StmtPtr& s : body) {
    std::unique_ptr<Function>* found = nullptr;
    if (s->kind == StmtKind::Def)
      found = same_place(s->loc, loc) ? &s->function : find_def(s->function->body, loc);
    if (!found) found = find_def(s->body, loc);
    if (!found) found = find_def(s->orelse, loc);
    if (found) return found;
  }
  return nullptr;
}

}  // namespace

std::unique_ptr<Function> parse_function(const FunctionSource& source) {
  std::unique_ptr<Function> outer = parse(source.source);
  if (source.nested_def.line == 0) return outer;
  std::unique_ptr<Function>* nested = find_def(outer->body, source.nested_def);
  if (!nested) throw CompileError(source.source, source.nested_def, "internal error: nested function not found");
  return std::move(*nested);
}

namespace checking {
namespace {

int count_in_target(const Expr& target, const std::string& name) {
  if (target.kind == ExprKind::Name) return target.name == name;
  int count = 0;
  if (target.kind == ExprKind::Tuple)
    for (const ExprPtr& item : target.args) count += count_in_target(*item, name);
  return count;
}

// How many statements of `body` assign `name` (a def of that name counts as one).
int assignments(const std::vector<StmtPtr>& body, const std::string& name) {
  int count = 0;
  for (const StmtPtr& s : body) {
    if (s->kind == StmtKind::Assign || s->kind == StmtKind::AugAssign || s->kind == StmtKind::For)
      for (const ExprPtr& target : s->targets) count += count_in_target(*target, name);
    if (s->kind == StmtKind::Def && s->function->name == name) ++count;
    count += assignments(s->body, name) + assignments(s->orelse, name);
  }
  return count;
}

// What a nested function's read of `name` is told.
GlobalValue uncaptured(const std::string& name, const std::string& why) {
  GlobalValue g;
  g.kind = GlobalValue::Uncaptured;
  g.name = "cannot capture '" + name + "': " + why +
           "; a nested function captures the constants its function assigns once before the def, as Numba does "
           "(pass other values as arguments)";
  return g;
}

}  // namespace

// A local variable assigned once, to a constant integer (`N = 100`): its value, which a shape may use as Numba
// lets it; nullopt for anything else.
std::optional<int64_t> Checker::constant_local(const Expr& e) const {
  if (e.kind != ExprKind::Name || e.meaning != Meaning::Local) return std::nullopt;
  auto value = first_values_.find(e.name);
  if (value == first_values_.end() || value->second.kind != GlobalValue::Int) return std::nullopt;
  auto [count, added] = assignment_counts_.try_emplace(e.name, 0);
  if (added) count->second = assignments(fn_.body, e.name);
  if (count->second != 1) return std::nullopt;
  return value->second.int_value;
}

// The value a variable's first assignment gives it, where a nested function can capture it: a constant number
// (or what a device function's argument would bind); Missing otherwise.
GlobalValue Checker::captured_value(const Expr& value) {
  GlobalValue g = bound_argument(value);
  if (g.kind != GlobalValue::Missing) return g;
  if (value.type.is_float() && (value.kind == ExprKind::Float || value.meaning == Meaning::Constant) && !value.imaginary) {
    g.kind = GlobalValue::Float;
    g.float_value = value.float_value;
  } else if (is_bool(value.type) && (value.kind == ExprKind::Bool || value.meaning == Meaning::Constant)) {
    g.kind = GlobalValue::Bool;
    g.int_value = value.int_value;
  }
  return g;
}

void Checker::check_def(Stmt& s) {
  const std::string& name = s.function->name;
  if (auto it = variables_.find(name); it != variables_.end())
    fail(s.loc, "'" + name + "' is " +
                    (it->second.param >= 0 ? "a parameter" : "a variable (line " + std::to_string(it->second.loc.line) + ")") +
                    " of '" + fn_.name + "': give the nested function a name of its own");
  if (assignments(fn_.body, name) > 1)
    fail(s.loc, "'" + name + "' is assigned more than once in '" + fn_.name +
                    "': a nested function is defined once, and its name is not reassigned");

  // What the nested function reads of this one, as of here: a name assigned in this function shadows the globals.
  auto captures = std::make_shared<std::map<std::string, GlobalValue>>(globals_);
  const std::string of = " of '" + fn_.name + "'";
  for (const std::string& local : assigned_) {
    if (nested_functions_.count(local)) continue;  // in globals_
    auto it = variables_.find(local);
    auto value = first_values_.find(local);
    if (it == variables_.end())
      (*captures)[local] = uncaptured(local, "variable '" + local + "'" + of + " is assigned after the def of '" + name + "' (line " +
                                                 std::to_string(s.loc.line) + ")");
    else if (assignments(fn_.body, local) > 1)
      (*captures)[local] = uncaptured(local, "variable '" + local + "'" + of + " is assigned more than once");
    else if (value == first_values_.end() || value->second.kind == GlobalValue::Missing)
      (*captures)[local] = uncaptured(local, "variable '" + local + "'" + of + " is not a constant");
    else
      (*captures)[local] = value->second;
  }
  for (const Param& p : fn_.params)
    if (!p.compile_time) (*captures)[p.name] = uncaptured(p.name, "it is a parameter" + of + ", known only when it runs");
  GlobalValue itself;
  itself.kind = GlobalValue::Uncaptured;
  itself.name = "nested function '" + name + "' calls itself: recursion is not supported in kernels";
  (*captures)[name] = std::move(itself);

  auto nested = std::make_shared<FunctionSource>();
  nested->source = source_.source;
  nested->nested_def = s.loc;
  // Unique per def and per specialisation of this function, whose captures it may differ in.
  nested->identity = source_.identity + "/" + name + "@" + std::to_string(s.loc.line) + ":" +
                     std::to_string(s.loc.column) + "#" + std::to_string(session_.nested_defs++);
  nested->resolve = [captures, enclosing = source_.resolve](const std::string& read) {
    auto it = captures->find(read);
    if (it != captures->end()) return it->second;
    return enclosing ? enclosing(read) : GlobalValue{};
  };
  GlobalValue function;
  function.kind = GlobalValue::Function;
  function.function = std::move(nested);
  globals_[name] = std::move(function);
  nested_functions_.insert(name);
}

// f(*t): the items of the tuple t become arguments of their own (a name's as t[0], t[1], ...).
void Checker::expand_unpacked(Expr& call) {
  std::vector<ExprPtr> args;
  for (ExprPtr& arg : call.args) {
    if (!arg->unpacked) {
      args.push_back(std::move(arg));
      continue;
    }
    const Type type = visit(*arg);
    if (type.kind != TypeKind::Tuple)
      fail(start_of(*arg), "cannot unpack " + to_string(type) + " '" + describe(*arg) + "' with '*': only a tuple can be");
    if (arg->kind == ExprKind::Tuple) {  // a tuple display, or a constant tuple
      for (ExprPtr& item : arg->args) args.push_back(std::move(item));
      continue;
    }
    if (arg->kind != ExprKind::Name) fail(start_of(*arg), "name the tuple to unpack with '*'");
    for (size_t i = 0; i < type.items.size(); ++i) {
      auto item = std::make_unique<Expr>(ExprKind::Subscript, arg->loc);
      item->args.push_back(std::make_unique<Expr>(ExprKind::Name, arg->loc));
      item->args[0]->name = arg->name;
      item->args.push_back(std::make_unique<Expr>(ExprKind::Int, arg->loc));
      item->args[1]->int_value = static_cast<int64_t>(i);
      args.push_back(std::move(item));
    }
  }
  call.args = std::move(args);
}

// A call of `def f(x, *rest)`: the positional arguments past x become one tuple, passed as the keyword `rest`.
void Checker::pack_variadic(Expr& call, const Function& callee) {
  const std::string& rest_name = callee.params.back().name;
  for (const auto& keyword : call.keywords)
    if (keyword.first == rest_name)
      fail(start_of(*keyword.second), callee.name + "() got an unexpected keyword argument '" + rest_name + "'");
  const size_t fixed = callee.params.size() - 1;
  auto rest = std::make_unique<Expr>(ExprKind::Tuple, call.loc);
  if (call.args.size() - 1 > fixed) {
    rest->loc = start_of(*call.args[fixed + 1]);
    for (size_t i = fixed + 1; i < call.args.size(); ++i) rest->args.push_back(std::move(call.args[i]));
    call.args.resize(fixed + 1);
  }
  call.keywords.emplace_back(rest_name, std::move(rest));
}

}  // namespace checking
}  // namespace jiasu::fe
