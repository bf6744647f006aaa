#include "toolchain/nvrtc.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "support/cuda_libraries.hpp"
#include "support/error.hpp"
#include "support/library_finder.hpp"
#include "toolchain/disk_cache.hpp"

namespace jiasu {
namespace {

// NVRTC's C types, declared here so that no CUDA header is needed. nvrtcResult is a C enum, which
// the ABI passes as an int.
using NvrtcStatus = int;
constexpr NvrtcStatus kNvrtcSuccess = 0;
struct NvrtcProgramState;
using NvrtcProgram = NvrtcProgramState*;

struct NvrtcLibrary {
#define JIASU_NVRTC_FUNCTION(name, params) NvrtcStatus(*name) params = nullptr;
#include "toolchain/nvrtc_api.def"
#undef JIASU_NVRTC_FUNCTION
  const char* (*nvrtcGetErrorString)(NvrtcStatus) = nullptr;  // optional: only improves messages

  NvrtcInfo info;
  std::vector<int> supported_archs;
  std::string include_dir;  // CUDA headers shipped with this NVRTC; empty when there are none
};

std::string status_text(const NvrtcLibrary& nvrtc, NvrtcStatus status) {
  const char* text = nvrtc.nvrtcGetErrorString ? nvrtc.nvrtcGetErrorString(status) : nullptr;
  return text ? text : "NVRTC error " + std::to_string(status);
}

void check(const NvrtcLibrary& nvrtc, NvrtcStatus status, const char* call) {
  if (status != kNvrtcSuccess)
    throw NvrtcError(std::string(call) + " failed: " + status_text(nvrtc, status), "");
}

// The CUDA headers (cuda_fp16.h, ...) that match the NVRTC found, so that #include <cuda_fp16.h>
// works without the user passing -I.
std::string find_cuda_include_dir(const std::string& nvrtc_path) {
  namespace fs = std::filesystem;
  fs::path lib_dir = fs::path(nvrtc_path).parent_path();
  const fs::path candidates[] = {
      lib_dir / ".." / "include",  // toolkit (<CUDA_HOME>/lib64) and the merged nvidia/cu13 wheel
      lib_dir / ".." / ".." / "cuda_runtime" / "include",  // CUDA 12 wheels: nvidia/cuda_nvrtc/lib
  };
  for (const fs::path& dir : candidates) {
    std::error_code error;
    if (!fs::is_regular_file(dir / "cuda_fp16.h", error)) continue;
    fs::path resolved = fs::canonical(dir, error);
    return error ? dir.lexically_normal().string() : resolved.string();
  }
  return "";
}

NvrtcLibrary load_nvrtc() {
  FoundLibrary found = find_library(cuda_library_spec("nvrtc"));
  NvrtcLibrary nvrtc;
#define JIASU_NVRTC_FUNCTION(name, params) bind_required(found, #name, nvrtc.name, "NVRTC 12 or newer");
#include "toolchain/nvrtc_api.def"
#undef JIASU_NVRTC_FUNCTION
  bind_optional(found, "nvrtcGetErrorString", nvrtc.nvrtcGetErrorString);

  nvrtc.info.path = found.path;
  nvrtc.info.source = found.source;
  check(nvrtc, nvrtc.nvrtcVersion(&nvrtc.info.major, &nvrtc.info.minor), "nvrtcVersion");
  int arch_count = 0;
  check(nvrtc, nvrtc.nvrtcGetNumSupportedArchs(&arch_count), "nvrtcGetNumSupportedArchs");
  nvrtc.supported_archs.resize(size_t(std::max(arch_count, 0)));
  check(nvrtc, nvrtc.nvrtcGetSupportedArchs(nvrtc.supported_archs.data()), "nvrtcGetSupportedArchs");
  nvrtc.include_dir = find_cuda_include_dir(found.path);
  return nvrtc;
}

const NvrtcLibrary& nvrtc() { return load_once<NvrtcLibrary>(load_nvrtc); }

bool starts_with(const std::string& text, std::string_view prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

void check_arch(const NvrtcLibrary& nvrtc, int arch) {
  const std::vector<int>& supported = nvrtc.supported_archs;
  if (std::find(supported.begin(), supported.end(), arch) != supported.end()) return;
  std::string list;
  for (int a : supported) list += (list.empty() ? "" : ", ") + std::to_string(a);
  throw BadValue("arch " + std::to_string(arch) + " is not supported by NVRTC " +
                 std::to_string(nvrtc.info.major) + "." + std::to_string(nvrtc.info.minor) +
                 "; supported archs: " + list);
}

std::vector<std::string> final_options(const NvrtcLibrary& nvrtc, const CudaCompileRequest& request) {
  bool user_chose_std = false;
  for (const std::string& option : request.options) {
    if (starts_with(option, "-arch") || starts_with(option, "--gpu-architecture"))
      throw BadValue("set the target with the arch field, not the option '" + option + "'");
    if (starts_with(option, "-std") || starts_with(option, "--std")) user_chose_std = true;
  }
  std::vector<std::string> options;
  const char* arch_prefix = request.kind == CodeKind::Cubin ? "-arch=sm_" : "-arch=compute_";
  options.push_back(arch_prefix + std::to_string(request.arch));
  if (!user_chose_std) options.push_back("-std=c++17");
  options.insert(options.end(), request.options.begin(), request.options.end());
  // Last, so that the user's own -I folders are searched first.
  if (!nvrtc.include_dir.empty()) options.push_back("-I" + nvrtc.include_dir);
  return options;
}

// Destroys the program on every path out of compile_with_nvrtc, including exceptions.
struct ProgramDeleter {
  const NvrtcLibrary* nvrtc;
  void operator()(NvrtcProgram program) const { nvrtc->nvrtcDestroyProgram(&program); }
};

using SizeFunction = NvrtcStatus (*)(NvrtcProgram, size_t*);
using ReadFunction = NvrtcStatus (*)(NvrtcProgram, char*);

// Fetches a log, PTX or cubin. NVRTC counts the NUL ending a log or PTX; drop it (std::string
// keeps its own).
std::string read_output(const NvrtcLibrary& nvrtc, NvrtcProgram program, SizeFunction get_size,
                        ReadFunction get_data, const char* what, bool is_text) {
  size_t size = 0;
  check(nvrtc, get_size(program, &size), what);
  std::string out(size, '\0');
  if (size > 0) check(nvrtc, get_data(program, out.data()), what);
  if (is_text)
    while (!out.empty() && out.back() == '\0') out.pop_back();
  return out;
}

CompiledCode compile_with_nvrtc(const NvrtcLibrary& nvrtc, const CudaCompileRequest& request,
                                const std::vector<std::string>& options) {
  NvrtcProgram program = nullptr;
  check(nvrtc,
        nvrtc.nvrtcCreateProgram(&program, request.source.c_str(), request.file_name.c_str(), 0,
                                 nullptr, nullptr),
        "nvrtcCreateProgram");
  std::unique_ptr<NvrtcProgramState, ProgramDeleter> owner(program, ProgramDeleter{&nvrtc});

  std::vector<const char*> argv;
  for (const std::string& option : options) argv.push_back(option.c_str());
  NvrtcStatus status = nvrtc.nvrtcCompileProgram(program, int(argv.size()), argv.data());
  std::string log = read_output(nvrtc, program, nvrtc.nvrtcGetProgramLogSize,
                                nvrtc.nvrtcGetProgramLog, "nvrtcGetProgramLog", true);
  if (status != kNvrtcSuccess) {
    // An invalid option can fail with an empty log: then the status is all there is to say.
    const std::string& details = log.empty() ? status_text(nvrtc, status) : log;
    throw NvrtcError("NVRTC failed to compile " + request.file_name + ":\n" + details, log);
  }

  CompiledCode code;
  code.log = std::move(log);
  if (request.kind == CodeKind::Ptx)
    code.image = read_output(nvrtc, program, nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX,
                             "nvrtcGetPTX", true);
  else
    code.image = read_output(nvrtc, program, nvrtc.nvrtcGetCUBINSize, nvrtc.nvrtcGetCUBIN,
                             "nvrtcGetCUBIN", false);
  return code;
}

}  // namespace

const NvrtcInfo& nvrtc_info() { return nvrtc().info; }

std::vector<int> nvrtc_supported_archs() { return nvrtc().supported_archs; }

CompiledCode compile_cuda(const CudaCompileRequest& request, const DiskCache* cache) {
  const NvrtcLibrary& library = nvrtc();
  check_arch(library, request.arch);
  std::vector<std::string> options = final_options(library, request);

  std::string key;
  if (cache) {
    std::string nvrtc_version =
        std::to_string(library.info.major) + "." + std::to_string(library.info.minor);
    std::string target =
        (request.kind == CodeKind::Ptx ? "ptx " : "cubin ") + std::to_string(request.arch);
    key = compile_cache_key(
        {"nvrtc", nvrtc_version, request.source, request.file_name, options, target});
    if (std::optional<std::string> image = cache->load(key)) {
      CompiledCode code;
      code.image = std::move(*image);
      code.from_cache = true;
      return code;
    }
  }

  CompiledCode code = compile_with_nvrtc(library, request, options);
  if (cache) cache->store(key, code.image);
  return code;
}

}  // namespace jiasu
