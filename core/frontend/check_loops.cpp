// check(): loops over 1-D arrays, as Numba allows them: `for v in a`, `for i, v in enumerate(a[, start])` and
// `for x, y in zip(a, b, ...)` (also nested, as in enumerate(zip(a, b))). Each is rewritten here into the one
// loop the rest of the compiler knows,
//     for k in range(n):      n = len(a), or the shortest len() of zip's arrays
//         <target> = <items>  a[k], (k + start, a[k]), (a[k], b[k]), ... paired item by item with the target
// so that typing, definite assignment and both emitters see only range() loops and plain assignments.
#include "frontend/checker.hpp"

namespace jiasu::fe::checking {
namespace {

ExprPtr node(ExprKind kind, SourceLoc loc) { return std::make_unique<Expr>(kind, loc); }

ExprPtr name(const std::string& id, SourceLoc loc) {
  ExprPtr e = node(ExprKind::Name, loc);
  e->name = id;
  return e;
}

ExprPtr call(const std::string& callee, std::vector<ExprPtr> args, SourceLoc loc) {
  ExprPtr e = node(ExprKind::Call, loc);
  e->args.push_back(name(callee, loc));
  for (ExprPtr& a : args) e->args.push_back(std::move(a));
  return e;
}

// A sequence read again on every pass must not change meaning: a name, or attributes of one (self.a).
bool is_plain(const Expr& e) {
  if (e.kind == ExprKind::Name) return true;
  return e.kind == ExprKind::Attribute && is_plain(*e.args[0]);
}

ExprPtr copy(const Expr& e) {
  ExprPtr c = node(e.kind, e.loc);
  c->name = e.name;
  for (const ExprPtr& a : e.args) c->args.push_back(copy(*a));
  return c;
}

// One pass's items of `it` (an array, enumerate(...) or zip(...)) at index `k`; the sequences whose length
// bounds the loop go to `sequences`. Null when `it` is not such an iterable.
ExprPtr items_at(const Expr& it, const std::string& k, std::vector<const Expr*>& sequences) {
  if (is_plain(it)) {
    sequences.push_back(&it);
    ExprPtr element = node(ExprKind::Subscript, it.loc);
    element->args.push_back(copy(it));
    element->args.push_back(name(k, it.loc));
    return element;
  }
  if (it.kind != ExprKind::Call || it.args[0]->kind != ExprKind::Name || !it.keywords.empty()) return nullptr;
  const std::string& f = it.args[0]->name;
  const size_t given = it.args.size() - 1;
  ExprPtr tuple = node(ExprKind::Tuple, it.loc);
  if (f == "enumerate" && (given == 1 || (given == 2 && it.args[2]->kind == ExprKind::Int))) {
    ExprPtr index = name(k, it.loc);
    if (given == 2 && it.args[2]->int_value != 0) {
      ExprPtr sum = node(ExprKind::Binary, it.loc);
      sum->op = Op::Add;
      sum->args.push_back(std::move(index));
      ExprPtr start = node(ExprKind::Int, it.args[2]->loc);
      start->int_value = it.args[2]->int_value;
      sum->args.push_back(std::move(start));
      index = std::move(sum);
    }
    ExprPtr item = items_at(*it.args[1], k, sequences);
    if (!item) return nullptr;
    tuple->args.push_back(std::move(index));
    tuple->args.push_back(std::move(item));
    return tuple;
  }
  if (f == "zip" && given >= 1) {
    for (size_t i = 1; i < it.args.size(); ++i) {
      ExprPtr item = items_at(*it.args[i], k, sequences);
      if (!item) return nullptr;
      tuple->args.push_back(std::move(item));
    }
    return tuple;
  }
  return nullptr;
}

// target = value, item by item where both are tuples of the same length (nested targets need this).
void assign(ExprPtr target, ExprPtr value, std::vector<StmtPtr>& out) {
  if (target->kind == ExprKind::Tuple && value->kind == ExprKind::Tuple && target->args.size() == value->args.size()) {
    for (size_t i = 0; i < target->args.size(); ++i) assign(std::move(target->args[i]), std::move(value->args[i]), out);
    return;
  }
  auto s = std::make_unique<Stmt>(StmtKind::Assign, target->loc);
  s->targets.push_back(std::move(target));
  s->value = std::move(value);
  out.push_back(std::move(s));
}

}  // namespace

bool rewrite_sequence_loop(Stmt& s) {
  const Expr& it = *s.value;
  if (it.kind == ExprKind::Call && it.args[0]->kind == ExprKind::Name && it.args[0]->name == "range") return false;
  const std::string k = "jiasu_index_" + std::to_string(s.loc.line) + "_" + std::to_string(s.loc.column);
  std::vector<const Expr*> sequences;
  ExprPtr items = items_at(it, k, sequences);
  if (!items) return false;
  std::vector<ExprPtr> lengths;
  for (const Expr* sequence : sequences) {
    std::vector<ExprPtr> arg;
    arg.push_back(copy(*sequence));
    lengths.push_back(call("len", std::move(arg), sequence->loc));
  }
  ExprPtr count = lengths.size() == 1 ? std::move(lengths[0]) : call("min", std::move(lengths), it.loc);
  std::vector<ExprPtr> bound;
  bound.push_back(std::move(count));
  std::vector<StmtPtr> body;
  assign(std::move(s.targets[0]), std::move(items), body);
  for (StmtPtr& statement : s.body) body.push_back(std::move(statement));
  s.body = std::move(body);
  s.targets[0] = name(k, s.loc);
  s.value = call("range", std::move(bound), it.loc);
  return true;
}

}  // namespace jiasu::fe::checking
