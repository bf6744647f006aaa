// emit_host(): a typed Program becomes one host C++17 translation unit, written by the same
// FunctionEmitter as emit_cuda() with the host Target: every function takes the thread's
// `const jiasu::HostThread& jiasu_thread` first (thread and block indices are read from it). A block's
// threads run in one of two ways, decided here per kernel:
//  - thread loops (host_regions.cpp): the kernel becomes one function per block that loops over the
//    threads between barriers; every kernel without warp operations whose barriers are plain statements;
//  - fibers: the kernel body is called once per thread as a fiber that switches at each barrier and meets
//    its warp at each warp operation (syncwarp, shuffles, votes); `return` ends that thread only. Cooperative
//    kernels (jiasu.cg.this_grid()) run so, every block on an OS thread of its own, waiting at grid barriers.
// The extern "C" entry point runs a range of blocks with the runtime header's jiasu::HostBlocks.
// Shared arrays are static thread_local arrays (the block's, as one OS thread runs one block at a time);
// dynamic shared memory is the launch's shared_bytes, at jiasu::dynamic_shared_memory().
#include "emit/cuda_emitter.hpp"

namespace jiasu::emit {
namespace cuda {
namespace {

std::string host_grid_axis(bool grid, int axis) {
  std::string a = axis_name(axis), t = "jiasu_thread.";
  if (grid) return "(" + t + "blockIdx." + a + " * " + t + "blockDim." + a + " + " + t + "threadIdx." + a + ")";
  return "(" + t + "blockDim." + a + " * " + t + "gridDim." + a + ")";
}

// Shared arrays: static storage of the OS thread, and one OS thread runs one block at a time (all its
// threads, as fibers or one after another), so it is the block's shared memory. Its content at the start
// of a block is unspecified, as in CUDA (what the last block run on that OS thread left). Aligned as CUDA aligns
// shared memory, so that the banks an analysis of accesses (trace_accesses) finds are the GPU's.
std::string host_shared_array(const std::string& element, const std::string& name, int64_t size) {
  return "alignas(16) static thread_local " + element + " " + name + "[" + std::to_string(size) + "];";
}

const Target& host_target() {
  static const Target target{"host C++", "static void ", "jiasu_kernel_body", "static ",
                             "[[maybe_unused]] const jiasu::HostThread& jiasu_thread", "jiasu_thread", &fe::Builtin::host, host_grid_axis,
                             host_shared_array, "", "jiasu::dynamic_shared_memory()", "", "jiasu::detail::poll_stop();",
                             "alignas(16) static const unsigned char", "",
                             "#define __device__\n#define __host__\n#define __forceinline__ inline\n",
                             "#undef __device__\n#undef __host__\n#undef __forceinline__\n"};
  return target;
}

// How a block's threads run (see the top of this file and host_regions.cpp).
enum class Schedule { ThreadLoops, Fibers };

// The extern "C" entry point: unpacks the parameters, then runs each block of the range with
// jiasu::HostBlocks: the kernel's thread loops once per block, or its body as one fiber per thread.
// kernel: its emitter, for the parameters' C++ types.
// stack_arrays: the bytes of every local array the kernel and its device functions declare, which each fiber's
// stack gets on top of the usual size (an upper bound: not every function is on the stack at once).
std::string entry_point(const fe::Function& kernel, const std::string& name, FunctionEmitter& types, Schedule how,
                        int64_t stack_arrays) {
  std::string out = "extern \"C\" void " + name + "(const jiasu::HostLaunch* launch, void* const* params) {\n";
  std::string args;
  for (size_t i = 0; i < kernel.params.size(); ++i) {
    const std::string p = "p" + std::to_string(i), type = "jiasu_param" + std::to_string(i) + "_t";
    out += "  using " + type + " = " + types.param_type(i) + ";\n";
    out += "  const " + type + " " + p + " = *static_cast<const " + type + "*>(params[" + std::to_string(i) + "]);\n";
    args += ", " + p;
  }
  out += "  jiasu::HostBlocks blocks(launch);\n";
  if (how == Schedule::ThreadLoops)
    return out + "  auto body = [&](const jiasu::HostThread& block) { jiasu_kernel_blocks(block" + args + "); };\n"
                 "  blocks.run_blocks(body);\n}\n";
  return out + "  auto body = [&](const jiasu::HostThread& thread) { jiasu_kernel_body(thread" + args + "); };\n"
               "  blocks.run_fibers(body, " + std::to_string(stack_arrays) +
               "LL);  // warp operations, barriers thread loops cannot take, or a cooperative launch\n}\n";
}

}  // namespace
}  // namespace cuda

EmittedFunction emit_host_function(const fe::Program& program) { return cuda::emit_function(cuda::host_target(), program); }

const char* access_kind_name(AccessKind kind) {
  switch (kind) {
    case AccessKind::Load: return "load";
    case AccessKind::Store: return "store";
    case AccessKind::LoadStore: return "load+store";
    case AccessKind::Atomic: return "atomic";
  }
  return "?";
}

EmittedKernel emit_host(const fe::Program& program, bool debug, bool trace_accesses) {
  const fe::Function& kernel = program.kernel();
  cuda::TupleStructs tuples;
  std::string functions;
  int64_t stack_arrays = 0;
  EmittedKernel out;
  std::vector<AccessSite>* sites = trace_accesses ? &out.access_sites : nullptr;
  for (size_t i = 0; i + 1 < program.functions.size(); ++i) {  // the device functions: called per thread
    cuda::FunctionEmitter callee(cuda::host_target(), *program.functions[i], program.sources[i]->source, tuples, debug,
                                 sites);
    functions += "\n" + callee.emit();
    stack_arrays += callee.stack_array_bytes();
  }
  cuda::FunctionEmitter emitter(cuda::host_target(), kernel, program.sources.back()->source, tuples, debug, sites);
  const cuda::Schedule how = cuda::thread_loops_apply(program) && emitter.prepare_thread_loops()
                                 ? cuda::Schedule::ThreadLoops
                                 : cuda::Schedule::Fibers;
  functions += "\n" + (how == cuda::Schedule::ThreadLoops ? emitter.emit_thread_loops() : emitter.emit());
  out.entry_name = cuda::function_name(kernel);
  out.cooperative = kernel.cooperative;
  out.fiber_array_bytes = stack_arrays + emitter.stack_array_bytes();
  out.source = host_runtime_header() + "\n// ---- generated by jiasu (host) from " + program.sources.back()->source.file +
               ": kernel " + kernel.name + "\n" + cuda::external_functions(program, cuda::host_target()) +
               tuples.definitions() + functions + "\n" +
               cuda::entry_point(kernel, out.entry_name, emitter, how, out.fiber_array_bytes);
  return out;
}

}  // namespace jiasu::emit
