// Internals of check(), shared by its source files (not part of the front end's interface):
//   promote.cpp         promotion, the other type rules and the builtin table
//   check.cpp           check(), statements and variables
//   check_assigned.cpp  definite assignment: no read of a variable that some path left unassigned
//   check_expr.cpp      names, attributes, subscripts and operators
//   check_call.cpp      calls: casts, builtins and device functions
//   check_ufuncs.cpp    NumPy's ufuncs: operators by other names, and np.f(x, out) filling an array
//   check_hints.cpp     code that messages suggest, spelled so that this function's module compiles it
//   check_raise.cpp     `raise` of exception classes with constant messages
//   check_nested.cpp    nested defs, *args parameters and *t arguments
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "frontend/check.hpp"

namespace jiasu::fe::checking {

// Type rules (promote.cpp)
bool is_number(const Type& t);  // a bool, integer, float or complex scalar
bool is_real(const Type& t);    // a bool, integer or float scalar
bool is_complex(const Type& t);
bool is_number_tuple(const Type& t);  // a tuple of numbers and of such tuples
bool is_bool(const Type& t);
Type type_of_kind(TypeKind kind);  // Void, Range, DType, Function: types without parameters
Type committed(Type t);                                  // literals made concrete: weak int -> int64
bool can_store(const Type& value, DType target);         // a[i] = v, x += v, atomics
bool assignable(const Type& variable, const Type& value);  // x = v for an existing x
Type float_result(const Type& t);                        // ints -> float64, floats and complex unchanged
std::optional<DType> dtype_named(const std::string& name);  // numpy/jiasu attribute names
std::string builtin_path(const std::string& path);       // NumPy spellings of math builtins
bool is_builtin_namespace(const std::string& path);      // "jiasu.atomic", "jiasu.threadIdx"

// Tree helpers (check.cpp)
std::string describe(const Expr& e);  // "a", "np.float32": the user's spelling, for messages
const Expr* view_base(const Expr& e);  // the array a view expression views (a[1:], a.reshape(...)), or null
std::string plural(size_t n, const std::string& one, const std::string& many = "");  // "1 index", "2 indices"
std::optional<int64_t> constant_int(const Expr& e);  // the value of a typed constant integer expression
void make_constant_int(Expr& e, int64_t value);       // folds `e` into a constant Int

// Every read of a local variable is preceded by its assignment on every path that reaches it; else a
// CompileError at the read (check_assigned.cpp). `assigned`: the names the function assigns somewhere.
void check_definite_assignment(const SourceText& source, const Function& fn, const std::set<std::string>& assigned);

// State shared by every function of one check() call.
struct Session {
  Program program;
  std::map<std::string, Function*> specialisations;  // identity + argument types -> checked function
  std::vector<std::string> active;                   // identities being checked: calling one is recursion
  // A specialisation being checked, which may call itself (recursion): its function, the returns its checker
  // has met so far (the recursive call's type comes from them, as Numba infers it) and that type once assumed.
  struct InProgress {
    Function* fn;
    const std::vector<struct ReturnSite>* returns;
    std::optional<Type> assumed;
    SourceLoc call;
  };
  std::map<std::string, InProgress> in_progress;  // by specialisation key
  // Where check() began on the stack: each callee is checked inside its caller, and a chain of calls may
  // take at most kCallChainStack of it (call_device).
  const char* stack_base = nullptr;
  int nested_defs = 0;  // nested defs checked so far: each one's FunctionSource gets a unique identity

  // Records an external function the program calls, and the files it links, once each.
  void add_external(const std::shared_ptr<const ExternalFunction>& f) {
    for (const auto& known : program.externals)
      if (known == f) return;
    program.externals.push_back(f);
    add_linked(f->link);
  }
  void add_linked(const std::vector<LinkedFile>& files) {
    for (const LinkedFile& file : files) {
      bool known = false;
      for (const LinkedFile& k : program.linked) known = known || (k.path == file.path && k.text == file.text);
      if (!known) program.linked.push_back(file);
    }
  }
};

// Each function is within parse()'s limits, and one more at its limits fits in what a 1 MiB stack has
// left after a chain of calls that took this much (tests/cpp/test_limits.cpp).
constexpr long kCallChainStack = 128 << 10;

// The bytes a shared or local array may take, at most (less one).
constexpr int64_t kMaxArrayBytes = int64_t(1) << 31;

struct Variable {
  Type type;
  SourceLoc loc;   // first assignment (parameters: the parameter)
  int param = -1;  // index in Function::params, -1 for a local
  std::vector<int64_t> shape;  // a shared/local array's constant shape ({0}: dynamic shared memory)
  int view_of = -1;            // a view of an array parameter (v = a[1:]): that parameter's index
};

struct ReturnSite {
  Type type;
  SourceLoc loc;
};

// Types one function for one list of parameter types, visiting statements in source order.
class Checker {
 public:
  Checker(Session& session, const FunctionSource& source, Function& fn)
      : session_(session), source_(source), fn_(fn) {}
  // One type per parameter; `bound`: what a device function's arguments bind at compile time (Missing for a
  // parameter that stays a variable; see call_device).
  void run(const std::vector<Type>& param_types, bool is_kernel, const std::vector<GlobalValue>& bound = {});

 private:
  [[noreturn]] void fail(SourceLoc loc, const std::string& message) const {
    throw CompileError(source_.source, loc, message);
  }
  const GlobalValue& global(const std::string& name);
  void mark_written(const Expr& array);
  void mark_read(const Expr& array);
  int viewed_param(const Expr& array) const;

  // Statements (check.cpp)
  void check_block(std::vector<StmtPtr>& body);
  void check_stmt(Stmt& s);
  void check_assign(Stmt& s);
  void check_aug_assign(Stmt& s);
  void check_for(Stmt& s);
  void check_return(Stmt& s);
  void check_raise(Stmt& s);  // check_raise.cpp
  void check_def(Stmt& s);  // check_nested.cpp
  GlobalValue captured_value(const Expr& value);
  std::optional<int64_t> constant_local(const Expr& e) const;
  void assign_target(Expr& target, const Type& value, const Expr* value_expr);
  void bind_name(Expr& target, const Type& value, const Expr* value_expr);
  Type store_target(Expr& target);
  void check_literal_fits(const Expr* value, const Type& target) const;
  Type finish_returns();

  // Expressions (check_expr.cpp)
  const Type& visit(Expr& e);
  Type visit_kind(Expr& e);
  Type visit_name(Expr& e);
  Type resolve_global(Expr& e, const GlobalValue& g);
  Type visit_attribute(Expr& e);
  Type module_attribute(Expr& e, const std::string& module, const std::string& path);
  Type array_attribute(Expr& e, const Type& array);
  Type visit_subscript(Expr& e);
  Type array_element(Expr& e, const Type& array);
  Type array_view(Expr& e, const Type& array);
  Type recursive_call(Expr& e, Session::InProgress& self);
  static Type element_type(const Type& array);  // a number, or a record of a record array
  Type record_field(Expr& e, const Type& record);
  Type record_item(Expr& e, const Type& record);
  void check_copy(const Expr& target, const Type& into, const Type& value);
  [[noreturn]] void too_many_indices(const Expr& e, const Type& array);
  Type tuple_item(Expr& e, const Type& tuple);
  Type binary(Op op, const Type& a, const Type& b, SourceLoc loc, const Expr* lhs, const Expr* rhs) const;
  Type visit_unary(Expr& e);
  Type visit_compare(Expr& e);
  Type visit_bool_op(Expr& e);
  Type visit_if_exp(Expr& e);
  Type visit_tuple(Expr& e);
  void check_condition(Expr& e);
  const Variable* static_array(const Expr& e) const;

  // Code suggested by messages, in this module's spelling (check_hints.cpp)
  std::string module_alias(const std::string& module);
  std::string dtype_code(DType dtype, const std::string& suffix);
  std::string jiasu_code(const std::string& path);
  std::string jiasu_import_note();

  // NumPy's ufuncs (check_ufuncs.cpp): np.add(a, b) and the like become operators; np.f(x, out) a loop nest.
  bool rewrite_operator_ufunc(Expr& call);
  bool rewrite_ufunc_with_out(Stmt& s);
  int ufunc_inputs(const Expr& call);

  // Calls (check_call.cpp)
  Type visit_call(Expr& e);
  Type cast(Expr& e, DType dtype);
  Type call_device(Expr& e);
  Type call_external(Expr& e, const ExternalFunction& f);
  Type make_vector(Expr& e);  // check_vector.cpp
  Type reshape(Expr& e);      // check_array_methods.cpp
  Type view_as(Expr& e);
  // Enums (check_enum.cpp)
  Type enum_member(Expr& e, const Type& enumeration, const std::string& name);
  bool compare_enums(Expr& e);
  void refuse_plain_enums(const Type& a, const Type& b, const std::string& message, SourceLoc loc) const;
  void expand_unpacked(Expr& call);  // check_nested.cpp
  void pack_variadic(Expr& call, const Function& callee);
  GlobalValue bound_argument(const Expr& e);
  Type call_builtin(Expr& e, const Builtin& b);
  Type new_array(Expr& e, const Builtin& b);
  void add_array_bytes(bool shared, int64_t bytes, SourceLoc where);
  Type atomic(Expr& e, const Builtin& b, const std::vector<Expr*>& args);
  Type print(Expr& e);
  std::vector<Expr*> arguments(Expr& call, size_t min, size_t max);
  const Type& number(const Expr& e, const std::string& what) const;  // a real number
  const Type& real_or_complex(const Expr& e, const std::string& what) const;
  const Type& integer(const Expr& e, const std::string& what, bool bool_ok = false) const;

  Session& session_;
  const FunctionSource& source_;
  Function& fn_;
  std::map<std::string, Variable> variables_;   // parameters and locals assigned so far

  std::set<std::string> assigned_;              // every name the function assigns somewhere
  std::map<std::string, GlobalValue> globals_;  // the resolver's answers, asked once per name, and the parameters
                                                // bound at compile time (Param::compile_time), which read as globals
  std::map<const Expr*, std::vector<int64_t>> new_array_shapes_;  // shared/local.array() calls
  std::map<std::string, GlobalValue> first_values_;  // what each local's first assignment binds (captured_value)
  mutable std::map<std::string, int> assignment_counts_;  // constant_local's: assignments(fn_.body, name), once
  std::set<std::string> nested_functions_;      // the nested defs checked so far (in globals_)
  std::map<std::string, int64_t> constant_aliases_;  // C = cuda.const.array_like(G): C reads Function::constants[i]
  std::set<const Function*> counted_callees_;   // whose arrays add_array_bytes() counted
  std::vector<ReturnSite> returns_;
  std::vector<SourceLoc> bare_returns_;
  const Expr* range_call_ = nullptr;      // the for loop's iterable: the one place range() may appear
  const Expr* new_array_call_ = nullptr;  // `s = <this>`: the one place shared/local.array() may appear
};

// check_loops.cpp: rewrites `for ... in a / enumerate(a) / zip(a, b)` over arrays into a loop over range();
// false (and nothing changed) for any other loop.
bool rewrite_sequence_loop(Stmt& s);

}  // namespace jiasu::fe::checking
