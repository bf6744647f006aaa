// check(): definite assignment. Python raises UnboundLocalError when a local variable is read on a path
// that has not assigned it; a compiled kernel would read garbage (or 0) instead, so check() rejects every
// read that some path reaches without an assignment, before typing the function.
//
// The analysis follows Python's control flow over the parsed tree: both branches of an if; a loop body
// that may run zero times (unless a literal range() or `while True` says otherwise); break, continue and
// return, after which nothing is reachable; the else of a loop, which runs when it ends without break.
// A loop body needs one pass: it starts from the state before the loop, since going round again only
// adds assignments. Statements nest as deep as the source does; expressions are walked with a stack.
#include <cstdint>
#include <map>
#include <optional>

#include "frontend/checker.hpp"

namespace jiasu::fe::checking {
namespace {

// The local variables definitely assigned at a point of the function, one bit each; nothing is missing
// at a point that cannot be reached.
struct Flow {
  bool reachable = true;
  std::vector<uint64_t> bits;

  bool has(size_t i) const { return !reachable || (bits[i / 64] >> (i % 64)) & 1; }
  void add(size_t i) { bits[i / 64] |= uint64_t(1) << (i % 64); }
  static Flow unreachable() { return Flow{false, {}}; }
  // Where two paths meet: what both assigned.
  void meet(const Flow& other) {
    if (!other.reachable) return;
    if (!reachable) {
      *this = other;
      return;
    }
    for (size_t w = 0; w < bits.size(); ++w) bits[w] &= other.bits[w];
  }
};

struct Loop {
  Flow at_break = Flow::unreachable();     // met over its break statements
  Flow at_continue = Flow::unreachable();  // met over its continue statements
};

// A literal condition's truth: `while True`, `if 0`. Empty for anything else.
std::optional<bool> literal_truth(const Expr& e) {
  if (e.kind == ExprKind::Bool) return e.int_value != 0;
  if (e.kind == ExprKind::Int) return e.is_uint64 || e.int_value != 0;
  return std::nullopt;
}

std::optional<int64_t> literal_int(const Expr& e) {
  if (e.kind == ExprKind::Int && !e.is_uint64) return e.int_value;
  if (e.kind == ExprKind::Unary && e.op == Op::USub && e.args[0]->kind == ExprKind::Int && !e.args[0]->is_uint64)
    return -e.args[0]->int_value;
  return std::nullopt;
}

// Whether `for ... in <iterable>` surely runs its body: range() of literals with at least one value.
bool runs_at_least_once(const Expr& iterable) {
  if (iterable.kind != ExprKind::Call || iterable.args[0]->kind != ExprKind::Name || iterable.args[0]->name != "range" ||
      !iterable.keywords.empty() || iterable.args.size() < 2 || iterable.args.size() > 4)
    return false;
  std::vector<int64_t> values;
  for (size_t i = 1; i < iterable.args.size(); ++i) {
    auto v = literal_int(*iterable.args[i]);
    if (!v) return false;
    values.push_back(*v);
  }
  int64_t start = values.size() == 1 ? 0 : values[0], stop = values.size() == 1 ? values[0] : values[1];
  int64_t step = values.size() == 3 ? values[2] : 1;
  return step > 0 ? start < stop : step < 0 && start > stop;
}

class AssignmentCheck {
 public:
  AssignmentCheck(const SourceText& source, const Function& fn, const std::set<std::string>& assigned)
      : source_(source) {
    for (const Param& p : fn.params) index_.emplace(p.name, index_.size());
    for (const std::string& name : assigned) index_.emplace(name, index_.size());
    first_store_.resize(index_.size());
  }

  void run(const Function& fn) {
    Flow flow{true, std::vector<uint64_t>((index_.size() + 63) / 64)};
    for (const Param& p : fn.params) flow.add(index_.at(p.name));
    block(fn.body, flow);
  }

 private:
  void block(const std::vector<StmtPtr>& body, Flow& flow) {
    for (const StmtPtr& s : body) statement(*s, flow);
  }

  void statement(const Stmt& s, Flow& flow) {
    switch (s.kind) {
      case StmtKind::Expr: return read(*s.value, flow);
      case StmtKind::Assign:  // the value first, then the targets from left to right (as Python does)
        read(*s.value, flow);
        for (const ExprPtr& target : s.targets) store(*target, flow);
        return;
      case StmtKind::AugAssign: {  // `x += v` reads x (and leaves it assigned); `a[i] += v` reads a and i
        const Expr& target = *s.targets[0];
        if (target.kind == ExprKind::Name)
          read_name(target, flow);
        else
          read(target, flow);
        return read(*s.value, flow);
      }
      case StmtKind::If: {
        read(*s.test, flow);
        std::optional<bool> truth = literal_truth(*s.test);
        Flow taken = flow;
        if (truth == false) taken = Flow::unreachable();
        if (truth == true) flow = Flow::unreachable();
        block(s.body, taken);
        block(s.orelse, flow);
        flow.meet(taken);
        return;
      }
      case StmtKind::While: {
        read(*s.test, flow);
        Flow body = flow;
        Loop& loop = loop_body(s.body, body);
        if (literal_truth(*s.test) == true) flow = Flow::unreachable();  // it ends only by break
        return loop_end(s, loop, flow);
      }
      case StmtKind::For: {
        read(*s.value, flow);
        Flow body = flow;
        store(*s.targets[0], body);
        Loop& loop = loop_body(s.body, body);
        if (runs_at_least_once(*s.value)) {  // it ends after a whole pass, or by break
          flow = body;
          flow.meet(loop.at_continue);
        }
        return loop_end(s, loop, flow);
      }
      case StmtKind::Break:
        loops_.back().at_break.meet(flow);
        flow = Flow::unreachable();
        return;
      case StmtKind::Continue:
        loops_.back().at_continue.meet(flow);
        flow = Flow::unreachable();
        return;
      case StmtKind::Return:
        if (s.value) read(*s.value, flow);
        flow = Flow::unreachable();
        return;
      case StmtKind::Raise:  // reads only constants: the exception class and its message
        flow = Flow::unreachable();
        return;
      case StmtKind::Pass: return;
      case StmtKind::Def: return define(s, flow);
    }
  }

  // Runs a loop's body from `body` (the state at its top); the loop stays open for loop_end.
  Loop& loop_body(const std::vector<StmtPtr>& statements, Flow& body) {
    loops_.emplace_back();
    block(statements, body);
    return loops_.back();
  }

  // `flow` is the state when the loop ends without break; its else runs from there, and break joins after.
  void loop_end(const Stmt& s, Loop& loop, Flow& flow) {
    Flow at_break = std::move(loop.at_break);
    loops_.pop_back();
    block(s.orelse, flow);
    flow.meet(at_break);
  }

  // Every name an expression reads, left to right.
  void read(const Expr& root, const Flow& flow) {
    if (!flow.reachable) return;  // code after return, break or continue never runs
    std::vector<const Expr*> pending{&root};
    while (!pending.empty()) {
      const Expr& e = *pending.back();
      pending.pop_back();
      if (e.kind == ExprKind::Name) read_name(e, flow);
      for (auto k = e.keywords.rbegin(); k != e.keywords.rend(); ++k) pending.push_back(k->second.get());
      for (auto a = e.args.rbegin(); a != e.args.rend(); ++a) pending.push_back(a->get());
    }
  }

  void read_name(const Expr& name, const Flow& flow) {
    auto it = index_.find(name.name);
    if (it == index_.end() || flow.has(it->second)) return;  // a global, or assigned on every path here
    SourceLoc first = first_store_[it->second];
    if (first.line == 0) fail(name.loc, "local variable '" + name.name + "' is used before it is assigned");
    fail(name.loc, "local variable '" + name.name + "' may be unassigned here: it is assigned at line " +
                       std::to_string(first.line) + ", but not on every path that reaches this line");
  }

  // An assignment target: the array and indices of `a[i] = ...` are read, names are assigned.
  void store(const Expr& target, Flow& flow) {
    switch (target.kind) {
      case ExprKind::Name: {
        size_t i = index_.at(target.name);
        if (first_store_[i].line == 0) first_store_[i] = target.loc;
        if (flow.reachable) flow.add(i);
        return;
      }
      case ExprKind::Tuple:  // one level: parse() rejects nested tuple targets
        for (const ExprPtr& item : target.args) store(*item, flow);
        return;
      default:
        return read(target, flow);
    }
  }

  // A def assigns its name (what it reads of this function is checked where its body reads it).
  void define(const Stmt& s, Flow& flow) {
    size_t i = index_.at(s.function->name);
    if (first_store_[i].line == 0) first_store_[i] = s.loc;
    if (flow.reachable) flow.add(i);
  }

  [[noreturn]] void fail(SourceLoc loc, const std::string& message) const { throw CompileError(source_, loc, message); }

  const SourceText& source_;
  std::map<std::string, size_t> index_;  // parameters and assigned names -> bit
  std::vector<SourceLoc> first_store_;    // per bit: the first assignment met so far (line 0: none yet)
  std::vector<Loop> loops_;               // the loops around the statement being read
};

}  // namespace

void check_definite_assignment(const SourceText& source, const Function& fn, const std::set<std::string>& assigned) {
  AssignmentCheck(source, fn, assigned).run(fn);
}

}  // namespace jiasu::fe::checking
