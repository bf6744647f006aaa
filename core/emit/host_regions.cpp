// Thread loops: the host target's way to run a block without fibers. The kernel body is cut at its
// barriers into regions; each region runs as a loop over the block's threads, one after another, so a
// barrier is simply the end of one loop and the start of the next. Control statements that contain a
// barrier (uniform across the block, as CUDA requires) run once per block, their conditions taken from the
// first thread still running. Variables that live across regions get one copy per thread; the others are
// plain locals of the thread's iteration, which the C++ compiler can keep in registers and vectorise.
//
// It applies when every barrier is a plain `jiasu.syncthreads()` statement of the kernel itself, reached
// through if/while/for statements whose conditions and bounds are block-uniform, with no warp operation
// anywhere and no parameter assigned; a `break` or `continue` may not leave a region for a loop that holds
// a barrier. Other kernels run as fibers, and so do cooperative ones (jiasu.cg.this_grid()).
#include <algorithm>
#include <set>

#include "emit/cuda_emitter.hpp"

namespace jiasu::emit::cuda {

using fe::Expr;
using fe::ExprKind;
using fe::Stmt;
using fe::StmtKind;

namespace {

bool is_builtin_call(const Expr& e, fe::BuiltinId id) {
  return e.kind == ExprKind::Call && e.meaning == fe::Meaning::Builtin && e.builtin >= 0 &&
         fe::builtin(e.builtin).id == id;
}

// Barriers and warp operations, by their builtin's rule (so a new one of either kind counts at once).
bool barrier_builtin(const fe::Builtin& b) {
  return b.id == fe::BuiltinId::SyncThreads || b.rule == fe::BuiltinRule::SyncPredicateInt ||
         b.rule == fe::BuiltinRule::SyncPredicateBool;
}

bool warp_builtin(const fe::Builtin& b) {
  switch (b.rule) {
    case fe::BuiltinRule::SyncWarp: case fe::BuiltinRule::Shuffle: case fe::BuiltinRule::VoteBallot:
    case fe::BuiltinRule::VoteBool: case fe::BuiltinRule::Mask0:
      return true;
    default:
      return false;
  }
}

using BuiltinKind = bool (*)(const fe::Builtin&);

// Whether the expression, statement or statements mention a builtin of this kind anywhere.
bool mentions_builtin(const Expr& e, BuiltinKind kind) {
  if (e.meaning == fe::Meaning::Builtin && e.builtin >= 0 && kind(fe::builtin(e.builtin))) return true;
  for (const fe::ExprPtr& arg : e.args)
    if (arg && mentions_builtin(*arg, kind)) return true;
  return false;
}

bool mentions_builtin(const std::vector<fe::StmtPtr>& body, BuiltinKind kind);

bool mentions_builtin(const Stmt& s, BuiltinKind kind) {
  if ((s.value && mentions_builtin(*s.value, kind)) || (s.test && mentions_builtin(*s.test, kind))) return true;
  for (const fe::ExprPtr& t : s.targets)  // out[i, jiasu.syncthreads_count(p)] = ...
    if (t && mentions_builtin(*t, kind)) return true;
  return mentions_builtin(s.body, kind) || mentions_builtin(s.orelse, kind);
}

bool mentions_builtin(const std::vector<fe::StmtPtr>& body, BuiltinKind kind) {
  for (const fe::StmtPtr& s : body)
    if (mentions_builtin(*s, kind)) return true;
  return false;
}

bool has_barrier(const Stmt& s) { return mentions_builtin(s, barrier_builtin); }

bool is_plain_barrier(const Stmt& s) {
  return s.kind == StmtKind::Expr && is_builtin_call(*s.value, fe::BuiltinId::SyncThreads);
}

// A break or continue in this statement that is not inside a loop of its own.
bool leaves_loop(const Stmt& s);
bool leaves_loop(const std::vector<fe::StmtPtr>& body) {
  return std::any_of(body.begin(), body.end(), [](const fe::StmtPtr& s) { return leaves_loop(*s); });
}
bool leaves_loop(const Stmt& s) {
  if (s.kind == StmtKind::Break || s.kind == StmtKind::Continue) return true;
  return s.kind == StmtKind::If && (leaves_loop(s.body) || leaves_loop(s.orelse));
}

// Statements at block level: barriers, control statements holding barriers, and thread statements.
bool block_level_ok(const std::vector<fe::StmtPtr>& body, bool in_loop) {
  for (const fe::StmtPtr& s : body) {
    if (!has_barrier(*s)) {
      if (in_loop && leaves_loop(*s)) return false;
      continue;
    }
    if (is_plain_barrier(*s)) continue;
    switch (s->kind) {
      case StmtKind::If:
        if (mentions_builtin(*s->test, barrier_builtin) || !block_level_ok(s->body, in_loop) ||
            !block_level_ok(s->orelse, in_loop))
          return false;
        break;
      case StmtKind::While:
        if (mentions_builtin(*s->test, barrier_builtin) || !block_level_ok(s->body, true)) return false;
        break;
      case StmtKind::For:
        if (mentions_builtin(*s->value, barrier_builtin) || !block_level_ok(s->body, true)) return false;
        break;
      default:
        return false;  // a barrier inside an expression (syncthreads_count, ...)
    }
  }
  return true;
}

void assigned_names(const std::vector<fe::StmtPtr>& body, std::set<std::string>& names) {
  for (const fe::StmtPtr& s : body) {
    for (const fe::ExprPtr& t : s->targets) target_names(*t, names);
    assigned_names(s->body, names);
    assigned_names(s->orelse, names);
  }
}

void local_names(const Expr& e, std::set<std::string>& names) {
  if (e.kind == ExprKind::Name && e.meaning == fe::Meaning::Local) names.insert(e.name);
  for (const fe::ExprPtr& arg : e.args)
    if (arg) local_names(*arg, names);
}

void local_names(const Stmt& s, std::set<std::string>& names) {
  for (const fe::ExprPtr& t : s.targets) local_names(*t, names);
  if (s.value) local_names(*s.value, names);
  if (s.test) local_names(*s.test, names);
  for (const fe::StmtPtr& b : s.body) local_names(*b, names);
  for (const fe::StmtPtr& b : s.orelse) local_names(*b, names);
}

bool has_return(const std::vector<fe::StmtPtr>& body) {
  for (const fe::StmtPtr& s : body)
    if (s->kind == StmtKind::Return || s->kind == StmtKind::Raise || has_return(s->body) || has_return(s->orelse))
      return true;
  return false;
}

bool is_param(const fe::Function& fn, const std::string& name) {
  for (const fe::Param& p : fn.params)
    if (p.name == name) return true;
  return false;
}

}  // namespace

// How an expression varies: Uniform (the same in every thread of the block: constants, parameters,
// block indices, array shapes, uniform variables), ThreadPure (also thread indices and rematerialised
// variables: recomputable anywhere), or Varies (reads memory, or a variable that changes per thread).
FunctionEmitter::Purity FunctionEmitter::purity(const Expr& e, bool allow_uniform_vars) const {
  auto worst = [&](size_t first) {
    Purity p = Purity::Uniform;
    for (size_t i = first; i < e.args.size(); ++i)
      if (e.args[i]) p = std::max(p, purity(*e.args[i], allow_uniform_vars));
    return p;
  };
  switch (e.kind) {
    case ExprKind::Int: case ExprKind::Float: case ExprKind::Bool: case ExprKind::None:
      return Purity::Uniform;
    case ExprKind::Name:
      if (e.meaning != fe::Meaning::Local) return Purity::Uniform;  // constants, modules, dtypes
      if (is_param(fn_, e.name)) return Purity::Uniform;             // never assigned (thread_loops_apply)
      if (allow_uniform_vars && uniform_vars_.count(e.name)) return Purity::Uniform;
      if (remat_vars_.count(e.name)) return Purity::ThreadPure;
      return Purity::Varies;
    case ExprKind::Attribute:
      if (e.meaning == fe::Meaning::Builtin && e.builtin >= 0 && fe::builtin(e.builtin).rule == fe::BuiltinRule::IndexValue) {
        const fe::BuiltinId id = fe::builtin(e.builtin).id;
        const bool per_thread = id == fe::BuiltinId::ThreadIdxX || id == fe::BuiltinId::ThreadIdxY ||
                                id == fe::BuiltinId::ThreadIdxZ || id == fe::BuiltinId::LaneId;
        return per_thread ? Purity::ThreadPure : Purity::Uniform;
      }
      if (!e.args.empty() && e.args[0] && e.args[0]->type.kind == fe::TypeKind::Array) return Purity::Uniform;  // shape
      return Purity::Varies;
    case ExprKind::Subscript:
      if (e.args[0]->type.kind == fe::TypeKind::Array) return Purity::Varies;  // an element: memory
      return worst(0);
    case ExprKind::Call: {
      const Expr& callee = *e.args[0];
      if (callee.meaning == fe::Meaning::DTypeValue) return worst(1);  // a cast
      if (callee.meaning != fe::Meaning::Builtin || callee.builtin < 0) return Purity::Varies;
      switch (fe::builtin(callee.builtin).rule) {
        case fe::BuiltinRule::GridN: return std::max(Purity::ThreadPure, worst(1));
        case fe::BuiltinRule::CastInt64: case fe::BuiltinRule::CastFloat64: case fe::BuiltinRule::CastBool:
        case fe::BuiltinRule::MinMax:
          return worst(1);
        default:
          return Purity::Varies;
      }
    }
    case ExprKind::Binary: case ExprKind::Unary: case ExprKind::Compare: case ExprKind::BoolOp: case ExprKind::IfExp:
    case ExprKind::Tuple:
      return worst(0);
    default:
      return Purity::Varies;
  }
}

// Statements directly in a block-level list (not nested in a thread statement), each with whether it is
// inside a block-level loop; and every other assignment target.
void FunctionEmitter::collect_assignments(const std::vector<fe::StmtPtr>& body, bool top, bool in_loop,
                                          std::vector<Assignment>& out) {
  for (const fe::StmtPtr& s : body) {
    const bool block_level = top && has_barrier(*s);
    if (top && !block_level) {
      out.push_back({s.get(), true, in_loop});
    } else if (!s->targets.empty()) {
      out.push_back({s.get(), top, in_loop});
    }
    collect_assignments(s->body, block_level, in_loop || (block_level && s->kind != StmtKind::If), out);
    collect_assignments(s->orelse, block_level, in_loop || (block_level && s->kind != StmtKind::If), out);
  }
}

// Uniform variables: scalars only ever assigned by top-level statements from uniform values (and block-level
// for loops with uniform bounds); one copy per block, assigned once per block. Rematerialised variables:
// scalars assigned once, at the top of the kernel body, from a thread-pure value; recomputed in each region.
void FunctionEmitter::classify_variables() {
  std::vector<Assignment> assignments;
  collect_assignments(fn_.body, true, false, assignments);
  for (const fe::Local& local : fn_.locals)
    if (local.type.kind == fe::TypeKind::Scalar) uniform_vars_.insert(local.name);
  for (bool changed = true; changed;) {
    changed = false;
    for (const Assignment& a : assignments) {
      const Stmt& s = *a.stmt;
      for (const fe::ExprPtr& target : s.targets) {
        std::set<std::string> names;
        target_names(*target, names);
        for (const std::string& name : names) {
          if (!uniform_vars_.count(name)) continue;
          // One plain target: `u = w = v` runs in a thread region (uniform_assignment() lifts single ones).
          bool ok = a.top && target->kind == ExprKind::Name && s.targets.size() == 1;
          if (ok && s.kind == StmtKind::For) {
            ok = has_barrier(s);  // a block-level loop with uniform bounds
            for (size_t i = 1; ok && i < s.value->args.size(); ++i)
              ok = purity(*s.value->args[i], true) == Purity::Uniform;
          } else if (ok) {
            ok = (s.kind == StmtKind::Assign || s.kind == StmtKind::AugAssign) &&
                 purity(*s.value, true) == Purity::Uniform;
          }
          if (!ok) uniform_vars_.erase(name), changed = true;
        }
      }
    }
  }
  std::map<std::string, int> count;
  for (const Assignment& a : assignments)
    for (const fe::ExprPtr& target : a.stmt->targets) {
      std::set<std::string> names;
      target_names(*target, names);
      for (const std::string& name : names) ++count[name];
    }
  for (const fe::StmtPtr& s : fn_.body) {  // in order: a value may use the ones before it
    if (s->kind != StmtKind::Assign || s->targets.size() != 1 || s->targets[0]->kind != ExprKind::Name) continue;
    const std::string& name = s->targets[0]->name;
    if (uniform_vars_.count(name) || count[name] != 1 || s->targets[0]->type.kind != fe::TypeKind::Scalar) continue;
    if (purity(*s->value, false) <= Purity::ThreadPure) {
      remat_vars_.insert(name);
      remat_order_.push_back(s.get());
    }
  }
}

bool FunctionEmitter::uniform_assignment(const Stmt& s) const {
  return (s.kind == StmtKind::Assign || s.kind == StmtKind::AugAssign) && s.targets.size() == 1 &&
         s.targets[0]->kind == ExprKind::Name && uniform_vars_.count(s.targets[0]->name);
}

// Every condition and loop bound around a barrier is block-uniform (by purity()), so the first running
// thread's value is every thread's. Otherwise (a grid-stride loop around a barrier, say) threads would
// run iterations or branches that are not theirs: such kernels run as fibers.
bool FunctionEmitter::controls_uniform(const std::vector<fe::StmtPtr>& body) const {
  for (const fe::StmtPtr& s : body) {
    if (!has_barrier(*s) || is_plain_barrier(*s)) continue;
    if (s->test && purity(*s->test, true) != Purity::Uniform) return false;
    if (s->kind == StmtKind::For)
      for (size_t i = 1; i < s->value->args.size(); ++i)
        if (purity(*s->value->args[i], true) != Purity::Uniform) return false;
    if (!controls_uniform(s->body) || !controls_uniform(s->orelse)) return false;
  }
  return true;
}

bool FunctionEmitter::prepare_thread_loops() {
  classify_variables();
  return controls_uniform(fn_.body);
}

bool thread_loops_apply(const fe::Program& program) {
  if (program.kernel().cooperative) return false;  // a grid barrier waits for the other blocks in the scheduler
  for (const auto& fn : program.functions) {
    if (mentions_builtin(fn->body, warp_builtin)) return false;
    if (!fn->is_kernel && mentions_builtin(fn->body, barrier_builtin)) return false;
  }
  const fe::Function& kernel = program.kernel();
  std::set<std::string> assigned;
  assigned_names(kernel.body, assigned);
  for (const fe::Param& p : kernel.params)
    if (assigned.count(p.name)) return false;
  return block_level_ok(kernel.body, false);
}

// ---------------------------------------------------------------------------------------------------
// Emission. First a dry walk numbers the regions exactly as emission will and records which variables
// each one (and the block-level conditions) touch; then the function is written.

void FunctionEmitter::plan_regions(const std::vector<fe::StmtPtr>& body, bool in_loop, int& region) {
  std::set<std::string> names;
  bool open = false;
  auto close = [&] {
    if (!open) return;
    repeated_region_ |= in_loop;
    for (const std::string& n : names) region_uses_[n].insert(in_loop ? -2 - region : region);
    names.clear();
    open = false;
    ++region;
  };
  for (const fe::StmtPtr& s : body) {
    if (uniform_assignment(*s)) {
      close();
      continue;
    }
    if (!has_barrier(*s)) {
      local_names(*s, names);
      open = true;
      continue;
    }
    close();
    if (is_plain_barrier(*s)) continue;
    std::set<std::string> control;
    if (s->test) local_names(*s->test, control);
    if (s->value) local_names(*s->value, control);
    for (const fe::ExprPtr& t : s->targets) local_names(*t, control);
    for (const std::string& n : control) region_uses_[n].insert(-1);  // evaluated at block level
    const bool loop = s->kind != StmtKind::If;
    plan_regions(s->body, in_loop || loop, region);
    plan_regions(s->orelse, in_loop || loop, region);
  }
  close();
}

// A variable is the thread iteration's own when only one region touches it, and that region is not
// repeated by a block-level loop (which would need the value to survive from one pass to the next).
bool FunctionEmitter::replicated(const std::string& name) const {
  if (uniform_vars_.count(name) || remat_vars_.count(name)) return false;
  auto it = region_uses_.find(name);
  if (it == region_uses_.end()) return false;
  return it->second.size() > 1 || *it->second.begin() < 0;
}

std::string FunctionEmitter::emit_thread_loops() {
  std::string params = "const jiasu::HostThread& jiasu_block";
  for (const fe::Param& p : fn_.params) params += ", " + c_type(p.type) + " " + user_name(p.name);
  thread_loops_ = true;
  int regions = 0;
  plan_regions(fn_.body, false, regions);
  // Threads that return must sit out the later regions, and the next passes of a block-level loop.
  track_done_ = has_return(fn_.body) && (regions > 1 || repeated_region_);

  line("const long long jiasu_bx = jiasu_block.blockDim.x, jiasu_by = jiasu_block.blockDim.y, "
       "jiasu_bz = jiasu_block.blockDim.z, jiasu_threads = jiasu_bx * jiasu_by * jiasu_bz;");
  line("(void)jiasu_threads;");
  if (track_done_) {
    line("static thread_local unsigned char jiasu_done_tls[1024];  // threads that have returned");
    line("unsigned char* const jiasu_done = jiasu::opaque(jiasu_done_tls);");
    line("for (long long t = 0; t < jiasu_threads; ++t) jiasu_done[t] = 0;");
  }
  // Shared arrays belong to the block (locals of this call); replicated variables get a copy per thread
  // (storage of the OS thread, which runs one block at a time; a block has at most 1024 threads), reached
  // through a pointer the compiler cannot trace back to the thread-local, so it looks the storage up once
  // per block rather than at every access (a call to __tls_get_addr in a dlopen'd library).
  for (const fe::Local& local : fn_.locals) {
    const std::string name = user_name(local.name);
    const bool new_array = local.type.kind == fe::TypeKind::Array && new_arrays_.count(local.name);  // not a view
    if (new_array && local.type.space == fe::MemorySpace::Shared) {
      declare_array(local, *new_arrays_.at(local.name));
    } else if (replicated(local.name) && new_array) {
      const std::string element = info(local.type.dtype).c_type, size = std::to_string(local_array_size(*new_arrays_.at(local.name)));
      line("static thread_local " + element + " " + name + "tls[1024][" + size + "];");
      line(element + " (*const " + name + "copies)[" + size + "] = jiasu::opaque(" + name + "tls);");
    } else if (uniform_vars_.count(local.name)) {
      line(c_type(local.type) + " " + name + "{};  // the same in every thread of the block");
    } else if (replicated(local.name)) {
      line("static thread_local " + c_type(local.type) + " " + name + "tls[1024];");
      line(c_type(local.type) + "* const " + name + "copies = jiasu::opaque(" + name + "tls);");
      line("for (long long t = 0; t < jiasu_threads; ++t) " + name + "copies[t] = {};");
    }
  }
  block_level(fn_.body);
  return "// " + source_.file + ":" + std::to_string(fn_.loc.line) + " (the block's threads in loops between barriers)\n"
         "static void jiasu_kernel_blocks(" + params + ") {\n" + out_.str() + "}\n";
}

void FunctionEmitter::block_level(const std::vector<fe::StmtPtr>& body) {
  std::vector<const Stmt*> pending;
  for (const fe::StmtPtr& s : body) {
    if (uniform_assignment(*s)) {  // once for the block, between the thread loops around it
      thread_region(pending);
      pending.clear();
      line("{");
      ++indent_;
      line("[[maybe_unused]] const jiasu::HostThread& jiasu_thread = jiasu_block;");
      stmt(*s);
      --indent_;
      line("}");
      continue;
    }
    if (!has_barrier(*s)) {
      pending.push_back(s.get());
      continue;
    }
    thread_region(pending);
    pending.clear();
    comment(s->loc);
    if (is_plain_barrier(*s)) continue;  // the end of one thread loop is the barrier
    if (s->kind == StmtKind::If) {
      const std::string c = uniform(*s->test);
      line("if (" + c + ") {");
      ++indent_;
      block_level(s->body);
      --indent_;
      if (!s->orelse.empty()) {
        line("} else {");
        ++indent_;
        block_level(s->orelse);
        --indent_;
      }
      line("}");
    } else if (s->kind == StmtKind::While) {
      line("for (;;) {");
      ++indent_;
      line(target_.loop_check);
      line("if (!" + uniform(*s->test) + ") break;");
      block_level(s->body);
      --indent_;
      line("}");
    } else {
      uniform_for(*s);
    }
  }
  thread_region(pending);
}

// Opens the loop over the block's threads (x fastest, as CUDA numbers them) and binds, per thread, its
// HostThread and its copies of the replicated variables.
void FunctionEmitter::open_threads(bool first_only) {
  if (first_only) {
    line("for (long long jiasu_t = 0; jiasu_t < jiasu_threads; ++jiasu_t) {");
    ++indent_;
    if (track_done_) line("if (jiasu_done[jiasu_t]) continue;");
    line("const long long jiasu_x = jiasu_t % jiasu_bx, jiasu_y = jiasu_t / jiasu_bx % jiasu_by, "
         "jiasu_z = jiasu_t / (jiasu_bx * jiasu_by);");
  } else {
    line("for (long long jiasu_z = 0, jiasu_t = 0; jiasu_z < jiasu_bz; ++jiasu_z)");
    line("for (long long jiasu_y = 0; jiasu_y < jiasu_by; ++jiasu_y)");
    line("for (long long jiasu_x = 0; jiasu_x < jiasu_bx; ++jiasu_x, ++jiasu_t) {");
    ++indent_;
    if (track_done_) line("if (jiasu_done[jiasu_t]) continue;");
  }
  line("{");
  ++indent_;
  line("[[maybe_unused]] const jiasu::HostThread jiasu_thread{{jiasu_x, jiasu_y, jiasu_z}, jiasu_block.blockIdx, "
       "jiasu_block.blockDim, jiasu_block.gridDim};");
  for (const fe::Local& local : fn_.locals) {
    if (!replicated(local.name)) continue;
    const std::string name = user_name(local.name);
    if (local.type.kind == fe::TypeKind::Array && new_arrays_.count(local.name)) {
      if (local.type.space == fe::MemorySpace::Shared) continue;
      line("[[maybe_unused]] " + c_type(local.type) + " " + name + " = {" + name + "copies[jiasu_t], {" +
           local_array_dims(*new_arrays_.at(local.name)) + "}};");
    } else {
      line("[[maybe_unused]] auto& " + name + " = " + name + "copies[jiasu_t];");
    }
  }
  for (const Stmt* s : remat_order_) {
    const Expr& target = *s->targets[0];
    line("[[maybe_unused]] const " + c_type(target.type) + " " + user_name(target.name) + " = " +
         expr_as(*s->value, target.type) + ";");
  }
}

void FunctionEmitter::close_threads(const std::string& label) {
  --indent_;
  line("}");
  if (!label.empty()) line(label + ":;");
  --indent_;
  line("}");
}

void FunctionEmitter::thread_region(const std::vector<const Stmt*>& stmts) {
  if (stmts.empty()) return;
  const std::string label = temp("next_thread");
  open_threads(false);
  // The region's own variables: fresh for each thread, as at the start of a CUDA thread.
  std::set<std::string> names;
  for (const Stmt* s : stmts) local_names(*s, names);
  for (const fe::Local& local : fn_.locals) {
    if (!names.count(local.name) || replicated(local.name) || uniform_vars_.count(local.name) ||
        remat_vars_.count(local.name))
      continue;
    if (local.type.kind == fe::TypeKind::Array && new_arrays_.count(local.name)) {
      if (local.type.space != fe::MemorySpace::Shared) declare_array(local, *new_arrays_.at(local.name));
    } else {
      line(c_type(local.type) + " " + user_name(local.name) + "{};");
    }
  }
  thread_exit_ = track_done_ ? "{ jiasu_done[jiasu_t] = 1; goto " + label + "; }" : "goto " + label + ";";
  for (const Stmt* s : stmts)
    if (!(s->kind == StmtKind::Assign && s->targets.size() == 1 && remat_vars_.count(s->targets[0]->name)))
      stmt(*s);  // a rematerialised variable's assignment is its declaration at the top of the loop
  thread_exit_.clear();
  close_threads(label);
}

// A block-level condition: the value the first thread still running computes (the kernel promises
// the same value in every thread, as CUDA requires of a condition around a barrier).
std::string FunctionEmitter::uniform(const Expr& test) {
  const std::string name = temp("uniform");
  line("bool " + name + " = false;");
  open_threads(true);
  line(name + " = " + condition(test) + ";");
  line("break;");
  close_threads("");
  return name;
}

// for v in range(...) around barriers: the bounds from the first running thread; each pass sets every
// thread's copy of v.
void FunctionEmitter::uniform_for(const Stmt& s) {
  const RangeArgs range = range_args(*s.value);
  const Expr& variable = *s.targets[0];
  const std::string t = c_type(variable.type), v = user_name(variable.name);
  const std::string start = temp("start"), stop = temp("stop"), step = temp("step"), next = temp("next");
  line(t + " " + start + " = 0, " + stop + " = 0, " + step + " = 1;");
  open_threads(true);
  if (range.start) line(start + " = " + expr_as(*range.start, variable.type) + ";");
  line(stop + " = " + expr_as(range.stop, variable.type) + ";");
  if (range.step) line(step + " = " + expr_as(*range.step, variable.type) + ";");
  line("break;");
  close_threads("");
  line("for (" + t + " " + next + " = " + start + "; " + step + " > 0 ? " + next + " < " + stop + " : " + step +
       " < 0 && " + next + " > " + stop + "; " + next + " += " + step + ") {");
  ++indent_;
  line(target_.loop_check);
  if (uniform_vars_.count(variable.name))
    line(v + " = " + next + ";");
  else
    line("for (long long t = 0; t < jiasu_threads; ++t) " + v + "copies[t] = " + next + ";");
  block_level(s.body);
  --indent_;
  line("}");
}

}  // namespace jiasu::emit::cuda
