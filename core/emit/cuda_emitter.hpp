// Internals of emit_cuda() and emit_host(), shared by their source files (not part of the emitters'
// interface). One FunctionEmitter writes both targets; a Target says where they differ:
//   cuda.cpp        the CUDA translation unit, functions, locals and statements
//   cuda_expr.cpp   expressions, conversions, literals and builtin calls
//   host.cpp        the host translation unit and its entry point
//
// Emitted code keeps each value in the C++ type of its fe::Type: every expression's text has exactly that
// type (narrow integer results are cast back, half types round through float), so the runtime header's
// templates deduce the type the checker chose.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "emit/emit.hpp"

namespace jiasu::emit::cuda {

// The C++ name of a user identifier: a trailing '_' keeps it clear of C++ keywords (new, class, ...),
// CUDA names and every name the emitter makes up (those never end in '_').
inline std::string user_name(const std::string& name) { return name + "_"; }
// A function's C++ name: its mangled name (a specialisation's), else its user name.
inline std::string function_name(const fe::Function& fn) {
  return fn.mangled_name.empty() ? user_name(fn.name) : fn.mangled_name;
}

// A C++ string literal of `text` (any bytes).
std::string quoted(const std::string& text);

// What a translation unit defines before its functions: the structs that hold tuple values (only tuple
// variables need them), one per distinct item types, and the bytes of the constant arrays its functions read.
class TupleStructs {
 public:
  std::string name_of(const fe::Type& tuple);  // defines it on first use
  // The struct of a record's bytes (its size and alignment), defined on first use.
  std::string record_name(const fe::RecordLayout& layout);
  // The symbol of `c`'s bytes, defined on first use with `storage` (the target's qualifiers).
  std::string constant_array(const fe::ConstantArray& c, const std::string& storage);
  const std::string& definitions() const { return definitions_; }

 private:
  std::map<std::string, bool> defined_;
  std::map<std::string, std::string> constants_;  // name + bytes -> symbol
  std::vector<fe::RecordLayout> records_;          // record_name(): jiasu_record<index>
  std::string definitions_;
};

// What differs between the C++ dialects the emitter writes.
struct Target {
  const char* name;                 // in messages: "cannot be compiled to <name>"
  std::string kernel_prefix;        // before the kernel's name: `extern "C" __global__ void `
  std::string kernel_name;          // the kernel function's name; "" for its mangled name
  std::string function_prefix;      // before a device function's return type
  std::string context_param;        // a first parameter every function takes ("" for none)
  std::string context_arg;          // what every call passes for it
  // The builtins.def column with the target's spelling of a builtin (a runtime function, or an expression
  // for IndexValue builtins); "" where the target has none.
  const char* fe::Builtin::*spelling;
  // jiasu.grid(n) (grid) or jiasu.gridsize(n) along one axis, as a long long.
  std::string (*grid_axis)(bool grid, int axis);
  // The declaration of a static shared array `element name[size]`: the block's own storage.
  std::string (*shared_array)(const std::string& element, const std::string& name, int64_t size);
  // Dynamic shared memory: the line that declares it in a function using it ("" for none), and its base
  // address, an unsigned char* expression.
  std::string dynamic_shared_declaration;
  std::string dynamic_shared_base;
  // The first statement of a kernel ("" for none): on the GPU, the wait that lets a launch overlap the one before.
  std::string kernel_start;
  // The first statement of every loop iteration ("" for none): the CPU backend checks for Ctrl-C there.
  std::string loop_check;
  // The qualifiers of a constant array's bytes, an `unsigned char` array aligned to 16.
  std::string constant_storage;
  // Linked CUDA C++ (cuda.declare_device): what an external function's declaration starts with, and the lines
  // around the linked files' text (the host target defines CUDA's qualifiers away there).
  std::string external_prefix, linked_prelude, linked_epilogue;
};
const Target& cuda_target();
// The program's external functions declared, each with a wrapper jiasu_external_NAME(params...) returning its
// result, then the linked files' text, each after a #line naming its file.
std::string external_functions(const fe::Program& program, const Target& target);
// emit_cuda_function / emit_host_function for `target`.
EmittedFunction emit_function(const Target& target, const fe::Program& program);

// The arguments of range(stop), range(start, stop) or range(start, stop, step); null where absent.
struct RangeArgs {
  const fe::Expr* start;
  const fe::Expr& stop;
  const fe::Expr* step;
};
inline RangeArgs range_args(const fe::Expr& call) {  // args[0] is the callee
  const auto& a = call.args;
  if (a.size() == 2) return {nullptr, *a[1], nullptr};
  return {a[1].get(), *a[2], a.size() > 3 ? a[3].get() : nullptr};
}

inline const char* axis_name(size_t axis) { return axis == 0 ? "x" : axis == 1 ? "y" : "z"; }

// A value the emitter has in hand: C++ text of type `type`, or an expression not yet emitted (so a
// literal can still be written directly in the type it meets).
struct Value {
  std::string code;
  fe::Type type;
  const fe::Expr* expr = nullptr;
};

class FunctionEmitter {
 public:
  // debug: every array element access, tuple index at run time and integer divisor goes through a check of
  // emit/runtime/debug_checks.h, which reports the first failure with its place in the Python source.
  // access_sites: debug's checks, and element accesses of global and shared arrays go through jiasu::at_traced,
  // their sites appended to access_sites (the host target's build for k.analyze).
  FunctionEmitter(const Target& target, const fe::Function& fn, const fe::SourceText& source, TupleStructs& tuples,
                  bool debug = false, std::vector<AccessSite>* access_sites = nullptr);
  std::string emit();  // the whole definition
  // The host target's kernel as one function per block: thread loops between barriers (host_regions.cpp).
  // Where thread_loops_apply(), prepare_thread_loops() says whether this kernel's controls allow it; then
  // emit_thread_loops() writes it (else emit() writes the per-thread body for fibers).
  bool prepare_thread_loops();
  std::string emit_thread_loops();
  std::string param_type(size_t i) { return c_type(fn_.params.at(i).type); }  // C++ type of parameter i
  // The bytes of the arrays emit() declared on the stack (local arrays): the host target sizes fiber stacks by them.
  int64_t stack_array_bytes() const { return stack_array_bytes_; }

 private:
  [[noreturn]] void fail(fe::SourceLoc loc, const std::string& message) const {
    throw fe::CompileError(source_, loc, message);
  }

  // Types (cuda_expr.cpp)
  std::string c_type(const fe::Type& type);

  // Expressions (cuda_expr.cpp)
  std::string expr(const fe::Expr& e);                       // in e.type
  std::string expr_as(const fe::Expr& e, const fe::Type& to);  // converted to `to`
  std::string value_as(const Value& v, const fe::Type& to);
  std::string condition(const fe::Expr& e);                  // Python's truth, as a C++ bool
  std::string convert(const std::string& code, const fe::Type& from, const fe::Type& to);
  std::string binary_chain(const fe::Expr& e);  // a Binary and the Binary chain of its left operands
  // `at`: where the operation is in the source, for debug-mode reports.
  std::string binary(fe::Op op, const fe::Type& result, const Value& a, const Value& b, fe::SourceLoc at);
  std::string unary(const fe::Expr& e);
  std::string compare(const fe::Expr& e);
  std::string bool_op(const fe::Expr& e);
  std::string subscript(const fe::Expr& e);
  std::string tuple_item_at(const fe::Expr& e);
  // "jiasu::FUNCTION(" with the target's context argument and the jiasu::CheckSite of a debug-mode check.
  std::string check_call(const std::string& function, const std::string& array, fe::SourceLoc at);
  std::string attribute(const fe::Expr& e);
  std::string record_field(const fe::Expr& e);  // r.x: the field as an lvalue, or a subarray field's array
  void copy_into(const fe::Expr& target, const Value& v);  // a record, or a subarray field, copied
  std::string call(const fe::Expr& e);
  std::string builtin_call(const fe::Expr& e);
  std::string atomic_call(const fe::Expr& e, const char* function);
  std::string print_call(const fe::Expr& e, const std::string& printf);
  // array[indices...] as an lvalue; `subscript` is the Python expression, for debug-mode reports; `kind`: what
  // the statement does with the element, for traced builds.
  std::string element_ref(const fe::Expr& array, const std::vector<Value>& indices, const fe::Expr& subscript,
                          AccessKind kind = AccessKind::Load);
  int access_site(const fe::Expr& array, const fe::Expr& subscript, AccessKind kind);  // its index in access_sites_
  std::vector<Value> indices_of(const fe::Expr& subscript);  // a[i, j], or a[ij] with a tuple ij
  Value item(const fe::Expr& tuple, size_t k);   // the k-th item of a tuple-typed expression
  Value item(const Value& tuple, size_t k);
  std::vector<Value> items(const fe::Expr& e);  // a tuple's items, or the value itself
  std::string tuple_value(const Value& tuple, const fe::Type& to);  // a struct of type `to`
  std::string grid_axis(const fe::Expr& call, int axis);
  std::string temp(const std::string& hint);     // a fresh name for a temporary
  std::string spelling(const fe::Expr& e);       // the target's spelling of a builtin; fails where none
  std::string target_text() const { return std::string(" cannot be compiled to ") + target_.name; }

  // Statements (cuda.cpp)
  void declare_locals();
  void declare_array(const fe::Local& local, const fe::Expr& call);
  void block(const std::vector<fe::StmtPtr>& body);
  void stmt(const fe::Stmt& s);
  void if_chain(const fe::Stmt& s);
  void raise(const fe::Stmt& s);
  void for_range(const fe::Stmt& s);
  void assign(const fe::Stmt& s);
  void aug_assign(const fe::Stmt& s);
  void store(const fe::Expr& target, const Value& value);
  void comment(fe::SourceLoc loc);
  void line(const std::string& text);

  // Thread loops (host_regions.cpp)
  void plan_regions(const std::vector<fe::StmtPtr>& body, bool in_loop, int& region);
  bool replicated(const std::string& name) const;  // one copy per thread, kept across regions
  void block_level(const std::vector<fe::StmtPtr>& body);
  void thread_region(const std::vector<const fe::Stmt*>& stmts);
  void open_threads(bool first_only);
  void close_threads(const std::string& label);
  std::string uniform(const fe::Expr& test);
  void uniform_for(const fe::Stmt& s);
  enum class Purity { Uniform, ThreadPure, Varies };
  Purity purity(const fe::Expr& e, bool allow_uniform_vars) const;
  struct Assignment {
    const fe::Stmt* stmt;
    bool top;      // directly in a block-level list
    bool in_loop;  // inside a block-level loop
  };
  void collect_assignments(const std::vector<fe::StmtPtr>& body, bool top, bool in_loop, std::vector<Assignment>& out);
  void classify_variables();
  bool uniform_assignment(const fe::Stmt& s) const;
  bool controls_uniform(const std::vector<fe::StmtPtr>& body) const;

  const Target& target_;
  const fe::Function& fn_;
  const fe::SourceText& source_;
  const fe::SourceLines lines_;  // for the comment before each statement
  TupleStructs& tuples_;
  const bool debug_;
  std::vector<AccessSite>* access_sites_;
  std::map<std::string, const fe::Expr*> new_arrays_;  // variable -> its shared/local.array() call
  std::ostringstream out_;
  int indent_ = 1;
  int temps_ = 0;
  bool dynamic_shared_declared_ = false;
  int64_t stack_array_bytes_ = 0;
  // Thread loops: the regions (block-level: -1; in a block-level loop: -2 - region) using each variable;
  // whether threads that return are tracked; what a kernel's `return` becomes inside a region.
  std::map<std::string, std::set<int>> region_uses_;
  bool thread_loops_ = false;  // emitting with emit_thread_loops()
  bool track_done_ = false;
  bool repeated_region_ = false;  // a region inside a block-level loop
  std::string thread_exit_;
  std::set<std::string> uniform_vars_, remat_vars_;  // one copy per block; recomputed per region
  std::vector<const fe::Stmt*> remat_order_;         // the rematerialised variables' assignments, in order
};

// Collects the names a (tuple) target assigns; false when it also stores into array elements.
bool target_names(const fe::Expr& target, std::set<std::string>& names);

// `v = jiasu.shared.array(...)` / `jiasu.local.array(...)` anywhere in the body: each variable and its call.
void find_new_arrays(const std::vector<fe::StmtPtr>& body, std::map<std::string, const fe::Expr*>& found);
// The extents of such an array (constants, as check() proved), their product and C++ list "4LL, 8LL".
std::vector<int64_t> array_extents(const fe::Expr& call);
int64_t local_array_size(const fe::Expr& call);
std::string local_array_dims(const fe::Expr& call);

// Whether the host target can run this program's kernel as thread loops (see host_regions.cpp).
bool thread_loops_apply(const fe::Program& program);

// The result type of `a op b` for arithmetic operators, as check() types a Binary.
fe::Type binary_result(fe::Op op, const fe::Type& a, const fe::Type& b);

// A number known while emitting: a literal, a global constant, math.pi, or -/+ of one.
bool is_constant(const fe::Expr& e);
std::optional<int64_t> constant_integer(const fe::Expr& e);  // such a number when it is an int64

// `value` as a literal of exactly C++ type d (wrapped to its width as a C++ conversion would).
std::string integer_literal(uint64_t value, DType d);

}  // namespace jiasu::emit::cuda
