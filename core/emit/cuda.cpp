// emit_cuda(): a typed Program becomes one CUDA C++ translation unit: the runtime header, the structs of
// tuple variables, each device function, then the kernel. This file writes functions and statements;
// cuda_expr.cpp writes expressions.
#include <set>

#include "emit/cuda_emitter.hpp"

namespace jiasu::emit {
namespace cuda {

using fe::Expr;
using fe::ExprKind;
using fe::Stmt;
using fe::StmtKind;
using fe::Type;
using fe::TypeKind;

namespace {

bool is_new_array(const Expr& e) {
  return e.kind == ExprKind::Call && e.meaning == fe::Meaning::Builtin &&
         fe::builtin(e.builtin).rule == fe::BuiltinRule::NewArray;
}

bool mentions(const Expr& e, const std::set<std::string>& names) {
  if (e.kind == ExprKind::Name && names.count(e.name)) return true;
  for (const fe::ExprPtr& arg : e.args)
    if (mentions(*arg, names)) return true;
  return false;
}

// A Python source line as a comment: without its indentation, and without a trailing backslash, which
// would continue the comment onto the next C++ line.
std::string comment_text(std::string_view text) {
  size_t start = text.find_first_not_of(" \t");
  text = start == std::string_view::npos ? "" : text.substr(start);
  while (!text.empty() && (text.back() == '\\' || text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return std::string(text);
}

}  // namespace

// Collects the names a (tuple) target assigns; false when it also stores into array elements.
bool target_names(const Expr& target, std::set<std::string>& names) {
  if (target.kind == ExprKind::Name) return names.insert(target.name), true;
  if (target.kind != ExprKind::Tuple) return false;
  bool only_names = true;
  for (const fe::ExprPtr& item : target.args) only_names &= target_names(*item, names);
  return only_names;
}

void find_new_arrays(const std::vector<fe::StmtPtr>& body, std::map<std::string, const Expr*>& found) {
  for (const fe::StmtPtr& s : body) {
    if (s->kind == StmtKind::Assign && is_new_array(*s->value))
      for (const fe::ExprPtr& target : s->targets) found[target->name] = s->value.get();
    find_new_arrays(s->body, found);
    find_new_arrays(s->orelse, found);
  }
}

// check() folded each extent into a literal, after bounding the array's size.
std::vector<int64_t> array_extents(const Expr& call) {
  const Expr& shape = *call.args[1];
  std::vector<int64_t> extents;
  if (shape.kind == ExprKind::Tuple)
    for (const fe::ExprPtr& extent : shape.args) extents.push_back(extent->int_value);
  else
    extents.push_back(shape.int_value);
  return extents;
}

int64_t local_array_size(const Expr& call) {
  int64_t size = 1;
  for (int64_t extent : array_extents(call)) size *= extent;
  return size;
}

std::string local_array_dims(const Expr& call) {
  std::string dims;
  for (int64_t extent : array_extents(call)) dims += (dims.empty() ? "" : ", ") + std::to_string(extent) + "LL";
  return dims;
}

FunctionEmitter::FunctionEmitter(const Target& target, const fe::Function& fn, const fe::SourceText& source,
                                 TupleStructs& tuples, bool debug, std::vector<AccessSite>* access_sites)
    : target_(target), fn_(fn), source_(source), lines_(source), tuples_(tuples), debug_(debug || access_sites),
      access_sites_(access_sites) {
  find_new_arrays(fn_.body, new_arrays_);
}

std::string FunctionEmitter::emit() {
  std::string params = target_.context_param;
  for (const fe::Param& p : fn_.params)
    if (!p.compile_time) params += (params.empty() ? "" : ", ") + c_type(p.type) + " " + user_name(p.name);
  std::string name = function_name(fn_);
  if (fn_.is_kernel && !target_.kernel_name.empty()) name = target_.kernel_name;
  std::string signature = fn_.is_kernel ? target_.kernel_prefix + name
                                        : target_.function_prefix + c_type(fn_.return_type) + " " + name;
  if (fn_.is_kernel && !target_.kernel_start.empty()) line(target_.kernel_start);
  declare_locals();
  block(fn_.body);
  return "// " + source_.file + ":" + std::to_string(fn_.loc.line) + "  " + comment_text(lines_.text(fn_.loc.line)) +
         "\n" + signature + "(" + params + ") {\n" + out_.str() + "}\n";
}

// ---------------------------------------------------------------------------------------------------
// Locals: declared at the top, as Python scopes them, zero-initialised. Shared and local arrays get their
// storage there too (each such variable is assigned exactly once).

void FunctionEmitter::declare_locals() {
  for (const fe::Local& local : fn_.locals) {
    if (local.type.kind == TypeKind::Array && new_arrays_.count(local.name))
      declare_array(local, *new_arrays_.at(local.name));
    else  // a number, a tuple, or a view of an array (v = a[1:])
      line(c_type(local.type) + " " + user_name(local.name) + "{};");
  }
}

void FunctionEmitter::declare_array(const fe::Local& local, const Expr& call) {
  const std::string element = info(local.type.dtype).c_type, name = user_name(local.name);
  const std::vector<int64_t> extents = array_extents(call);

  bool shared = local.type.space == fe::MemorySpace::Shared;
  if (shared && extents == std::vector<int64_t>{0}) {
    // Dynamic shared memory: every such array of a kernel starts at the same address (as in Numba), and its
    // extent is what the launch gave.
    if (!dynamic_shared_declared_ && !target_.dynamic_shared_declaration.empty())
      line(target_.dynamic_shared_declaration);
    dynamic_shared_declared_ = true;
    line(c_type(local.type) + " " + name + " = {reinterpret_cast<" + element + "*>(" + target_.dynamic_shared_base +
         "), {jiasu::dynamic_shared_bytes() / (long long)sizeof(" + element + ")}};");
    return;
  }
  const int64_t size = local_array_size(call);
  std::string storage = name + "storage";
  // Thread loops run a whole block in one call: its shared arrays are that call's locals (no thread-local
  // lookups in the loops).
  const bool block_local = shared && thread_loops_;
  if (shared && !block_local) {
    line(target_.shared_array(element, storage, size));
  } else {
    line(std::string(block_local ? "alignas(16) " : "") + element + " " + storage + "[" + std::to_string(size) + "];");
    stack_array_bytes_ += size * info(local.type.dtype).itemsize;
  }
  line(c_type(local.type) + " " + name + " = {" + storage + ", {" + local_array_dims(call) + "}};");
}

// ---------------------------------------------------------------------------------------------------
// Statements

void FunctionEmitter::line(const std::string& text) { out_ << std::string(2 * indent_, ' ') << text << '\n'; }

void FunctionEmitter::comment(fe::SourceLoc loc) {
  line("// " + source_.file + ":" + std::to_string(loc.line) + "  " + comment_text(lines_.text(loc.line)));
}

void FunctionEmitter::block(const std::vector<fe::StmtPtr>& body) {
  for (const fe::StmtPtr& s : body) stmt(*s);
}

void FunctionEmitter::stmt(const Stmt& s) {
  comment(s.loc);
  switch (s.kind) {
    case StmtKind::Expr:
      line((s.value->kind == ExprKind::Call ? "" : "(void)") + expr(*s.value) + ";");
      return;
    case StmtKind::Assign: return assign(s);
    case StmtKind::AugAssign: return aug_assign(s);
    case StmtKind::If: return if_chain(s);
    case StmtKind::For: return for_range(s);
    case StmtKind::While:
      line("while (" + condition(*s.test) + ") {");
      ++indent_;
      if (!target_.loop_check.empty()) line(target_.loop_check);
      block(s.body);
      --indent_;
      line("}");
      return;
    case StmtKind::Break: return line("break;");
    case StmtKind::Continue: return line("continue;");
    case StmtKind::Return:
      if (fn_.is_kernel && !thread_exit_.empty()) return line(thread_exit_);  // ends this thread's region
      return line(s.value ? "return " + expr_as(*s.value, fn_.return_type) + ";" : "return;");
    case StmtKind::Pass: return;
    case StmtKind::Raise: return raise(s);
    case StmtKind::Def: return;  // a nested function is emitted as a function of its own
  }
}

// The target's runtime reports the exception (the CPU backend stops the launch with it) or ends the thread
// (CUDA); where it comes back, the thread ends here as a `return` would end it.
void FunctionEmitter::raise(const Stmt& s) {
  const std::string context = target_.context_arg.empty() ? "" : target_.context_arg + ", ";
  line("jiasu::raise_exception(" + context + "jiasu::RaiseSite{" + std::to_string(s.exception_handle) + ", " +
       quoted(s.exception) + ", " + quoted(s.message) + ", " + quoted(fn_.name) + ", " + quoted(source_.file) + ", " +
       std::to_string(s.loc.line) + ", " + std::to_string(s.loc.column) + "});");
  if (fn_.is_kernel) return line(thread_exit_.empty() ? "return;" : thread_exit_);
  line(fn_.return_type.kind == TypeKind::Void ? "return;" : "return {};");
}

// if / elif / else: an else holding only an if continues the chain as `else if`.
void FunctionEmitter::if_chain(const Stmt& s) {
  line("if (" + condition(*s.test) + ") {");
  const Stmt* branch = &s;
  for (;;) {
    ++indent_;
    block(branch->body);
    --indent_;
    const auto& orelse = branch->orelse;
    if (orelse.size() != 1 || orelse[0]->kind != StmtKind::If) break;
    branch = orelse[0].get();
    comment(branch->loc);
    line("} else if (" + condition(*branch->test) + ") {");
  }
  if (!branch->orelse.empty()) {
    line("} else {");
    ++indent_;
    block(branch->orelse);
    --indent_;
  }
  line("}");
}

// for v in range(start, stop, step): bounds evaluated once; a hidden counter drives the loop and v is set
// from it, so assigning v in the body does not change the iteration and after the loop v holds the last
// value taken (or is unchanged when the range is empty), as in Python.
void FunctionEmitter::for_range(const Stmt& s) {
  const RangeArgs range = range_args(*s.value);
  const Expr& variable = *s.targets[0];
  const Type& type = variable.type;
  const std::string next = temp("next"), stop = temp("stop");
  std::string start = range.start ? expr_as(*range.start, type) : integer_literal(0, type.dtype);
  std::string init = c_type(type) + " " + next + " = " + start + ", " + stop + " = " + expr_as(range.stop, type);
  std::string test = next + " < " + stop, increment = "++" + next;
  if (range.step) {
    std::string step = expr_as(*range.step, type);
    if (std::optional<int64_t> constant = constant_integer(*range.step)) {  // never 0: check() refuses that
      test = next + (*constant < 0 ? " > " : " < ") + stop;
    } else {
      std::string name = temp("step");
      init += ", " + name + " = " + step;
      step = name;
      // a step of 0 (Python raises) runs no iteration rather than forever
      test = "(" + step + " > 0 ? " + next + " < " + stop + " : " + step + " < 0 && " + next + " > " + stop + ")";
    }
    increment = next + " += " + step;
  }
  line("for (" + init + "; " + test + "; " + increment + ") {");
  ++indent_;
  if (!target_.loop_check.empty()) line(target_.loop_check);
  line(user_name(variable.name) + " = " + next + ";");
  block(s.body);
  --indent_;
  line("}");
}

void FunctionEmitter::assign(const Stmt& s) {
  const Expr& value = *s.value;
  if (is_new_array(value)) return;  // declared with the locals
  Value v{"", value.type, &value};
  if (s.targets.size() > 1 && value.type.kind != TypeKind::Tuple) {  // a = b = value: evaluate it once
    std::string name = temp("value");
    line("const " + c_type(value.type) + " " + name + " = " + expr(value) + ";");
    v = Value{name, value.type};
  }
  for (const fe::ExprPtr& target : s.targets) store(*target, v);
}

// target = v, for a name, an array element or a tuple of targets (unpacked item by item).
void FunctionEmitter::store(const Expr& target, const Value& v) {
  switch (target.kind) {
    case ExprKind::Name:
      return line(user_name(target.name) + " = " + value_as(v, target.type) + ";");
    case ExprKind::Attribute:
    case ExprKind::Subscript:
      if (target.type.kind == TypeKind::Record || target.type.kind == TypeKind::Array) return copy_into(target, v);
      if (target.kind == ExprKind::Attribute) return line(expr(target) + " = " + value_as(v, target.type) + ";");
      return line(element_ref(*target.args[0], indices_of(target), target, AccessKind::Store) + " = " +
                  value_as(v, target.type) + ";");
    case ExprKind::Tuple: {
      // Python evaluates every item before it stores any: when a store could change an item still to be
      // read (a, b = b, a), the items go to temporaries first.
      std::set<std::string> names;
      bool reads_first = v.expr && v.expr->kind == ExprKind::Tuple &&
                         (!target_names(target, names) || mentions(*v.expr, names));
      std::vector<Value> items;
      for (size_t k = 0; k < target.args.size(); ++k) {
        Value value = item(v, k);
        if (reads_first && !(value.expr && is_constant(*value.expr))) {
          std::string name = temp("item");
          line("const " + c_type(value.type) + " " + name + " = " + value_as(value, value.type) + ";");
          value = Value{name, value.type};
        }
        items.push_back(value);
      }
      for (size_t k = 0; k < target.args.size(); ++k) store(*target.args[k], items[k]);
      return;
    }
    default:
      fail(target.loc, "cannot assign to this expression");
  }
}

// a[i] = r copies the record's bytes; r.h = b copies b's elements into the subarray field h.
void FunctionEmitter::copy_into(const Expr& target, const Value& v) {
  const std::string value = v.expr ? expr(*v.expr) : v.code;
  if (target.type.kind == TypeKind::Record) return line("*" + expr(target) + " = *" + value + ";");
  line("jiasu::copy_elements(" + expr(target) + ", " + value + ");");
}

// x op= v; a[i] op= v evaluates the element's address once (through a reference unless its indices are
// variables and constants).
void FunctionEmitter::aug_assign(const Stmt& s) {
  const Expr& target = *s.targets[0];
  const Expr& value = *s.value;
  const Type& current = target.type;
  const Type result = binary_result(s.op, current, value.type);
  std::string place = user_name(target.name);
  if (target.kind == ExprKind::Subscript) {
    bool plain = true;
    for (size_t i = 1; i < target.args.size(); ++i) {
      const Expr& index = *target.args[i];
      plain &= index.type.is_scalar() &&
               ((index.kind == ExprKind::Name && index.meaning == fe::Meaning::Local) || is_constant(index));
    }
    place = element_ref(*target.args[0], indices_of(target), target, AccessKind::LoadStore);
    if (!plain || access_sites_) {  // a traced access is recorded where it is written: once
      std::string name = temp("element");
      line(c_type(current) + "& " + name + " = " + place + ";");
      place = name;
    }
  } else if (target.kind == ExprKind::Attribute) {  // r.x op= v: the field, by reference
    place = temp("field");
    line(c_type(current) + "& " + place + " = " + expr(target) + ";");
  }
  std::string updated = binary(s.op, result, Value{place, current}, Value{"", value.type, &value}, s.loc);
  line(place + " = " + convert(updated, result, current) + ";");
}

std::string external_functions(const fe::Program& program, const Target& target) {
  std::string out;
  for (const auto& f : program.externals) {
    const std::string result = info(f->result).c_type;
    std::string declared = f->c_abi ? "" : result + "*", params, args;
    for (size_t i = 0; i < f->params.size(); ++i) {
      const std::string type = info(f->params[i]).c_type, name = "a" + std::to_string(i);
      declared += (declared.empty() ? "" : ", ") + type;
      params += (i ? ", " : "") + type + " " + name;
      args += ", " + name;
    }
    out += "extern \"C\" " + target.external_prefix + (f->c_abi ? result : "int") + " " + f->name + "(" + declared +
           ");\n" + target.function_prefix + "inline " + result + " jiasu_external_" + f->name + "(" + params + ") {\n";
    out += f->c_abi ? "  return " + f->name + "(" + (args.empty() ? "" : args.substr(2)) + ");\n}\n"
                    : "  " + result + " result;\n  " + f->name + "(&result" + args + ");\n  return result;\n}\n";
  }
  if (program.linked.empty()) return out;
  out += target.linked_prelude;
  for (const fe::LinkedFile& file : program.linked) out += "#line 1 " + quoted(file.path) + "\n" + file.text + "\n";
  return out + target.linked_epilogue;
}

}  // namespace cuda

EmittedKernel emit_cuda(const fe::Program& program, bool debug) {
  cuda::TupleStructs tuples;
  std::string functions;
  for (size_t i = 0; i < program.functions.size(); ++i)
    functions += "\n" + cuda::FunctionEmitter(cuda::cuda_target(), *program.functions[i], program.sources[i]->source,
                                              tuples, debug).emit();
  const fe::Function& kernel = program.kernel();
  EmittedKernel out;
  out.entry_name = cuda::function_name(kernel);
  out.device_errors = debug;
  out.cooperative = kernel.cooperative;
  out.waits_for_prior_grid = !cuda::cuda_target().kernel_start.empty();
  out.source = (out.device_errors ? "#define JIASU_DEVICE_ERRORS 1\n" : "") + cuda_runtime_header() +
               "\n// ---- generated by jiasu from " + program.sources.back()->source.file +
               ": kernel " + kernel.name + "\n" +
               "// Python code may well set a variable it never reads, or compare an unsigned value with 0\n"
               "#pragma nv_diag_suppress 550\n#pragma nv_diag_suppress 186\n" +
               cuda::external_functions(program, cuda::cuda_target()) + tuples.definitions() + functions;
  return out;
}

EmittedFunction cuda::emit_function(const Target& target, const fe::Program& program) {
  cuda::TupleStructs tuples;
  std::string functions;
  for (size_t i = 0; i < program.functions.size(); ++i)
    functions += "\n" + cuda::FunctionEmitter(target, *program.functions[i], program.sources[i]->source, tuples).emit();
  const fe::Function& fn = *program.functions.back();
  return {"// ---- generated by jiasu from " + program.sources.back()->source.file + ": function " + fn.name + "\n" +
              external_functions(program, target) + tuples.definitions() + functions,
          cuda::function_name(fn), fn.return_type.dtype};
}

EmittedFunction emit_cuda_function(const fe::Program& program) { return cuda::emit_function(cuda::cuda_target(), program); }

}  // namespace jiasu::emit
