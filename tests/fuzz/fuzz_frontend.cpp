// Coverage-guided fuzzing of the front end (libFuzzer): tokenize -> parse -> check -> emit_cuda and
// emit_host (plain and debug) on the input as kernel source text. See tests/fuzz/README.md.
//
// The input is the kernel's source, optionally followed by "\n#---\n" and the source of a @jiasu.func
// named f, and once more by one named g (each resolves f and g too). A first line
// "# signature: float32[1] float64[2A] int64 ..." gives the kernel's argument types (an array of that
// dtype and rank, A for strided; a bare dtype is a scalar); parameters it leaves out take types by their
// position from a fixed list.
//
// Correct outcomes: the kernel compiles, or the front end throws fe::CompileError whose file is one of
// the sources, whose line and column lie within that source (or just past its end), and whose text
// starts with "file:line:column: error: ". Anything else aborts, so libFuzzer reports it with the input:
// another exception, an "internal error" CompileError (the checker let through what an emitter cannot
// write), a crash or sanitizer report, a hang (-timeout) or a leak.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "emit/emit.hpp"
#include "frontend/check.hpp"
#include "support/error.hpp"

namespace {

using namespace jiasu;

[[noreturn]] void bug(const std::string& what) {
  std::fprintf(stderr, "front end bug: %s\n", what.c_str());
  std::abort();
}

fe::GlobalValue global(fe::GlobalValue::Kind kind) {
  fe::GlobalValue g;
  g.kind = kind;
  return g;
}

fe::GlobalValue module(const std::string& name) {
  fe::GlobalValue g = global(fe::GlobalValue::Module);
  g.name = name;
  return g;
}

fe::GlobalValue number(int64_t value) {
  fe::GlobalValue g = global(fe::GlobalValue::Int);
  g.int_value = value;
  return g;
}

fe::GlobalValue real(double value) {
  fe::GlobalValue g = global(fe::GlobalValue::Float);
  g.float_value = value;
  return g;
}

fe::GlobalValue tuple(std::vector<fe::GlobalValue> items) {
  fe::GlobalValue g = global(fe::GlobalValue::Tuple);
  g.items = std::move(items);
  return g;
}

// The kernel module's globals other than f and g: those of the test suite's kernel samples, and a few
// that kernels cannot use.
std::map<std::string, fe::GlobalValue> fixed_globals() {
  std::map<std::string, fe::GlobalValue> globals;
  globals["jiasu"] = module("jiasu");
  globals["math"] = module("math");
  globals["np"] = module("numpy");
  globals["numpy"] = module("numpy");
  globals["os"] = module("os");
  globals["N"] = number(4);
  globals["BIG"] = number(INT64_MAX);
  globals["SCALE"] = real(0.5);
  globals["SIZES"] = tuple({number(2), number(3)});
  globals["TILE"] = number(16);
  globals["BLOCK"] = number(256);
  globals["K"] = number(8);
  globals["WARP"] = number(32);
  globals["FULL"] = number(0xFFFFFFFF);
  globals["T"] = tuple({tuple({number(1), real(2.5)}), global(fe::GlobalValue::Bool)});
  globals["FLAG"] = global(fe::GlobalValue::Bool);
  globals["FLAG"].int_value = 1;
  globals["REAL"] = global(fe::GlobalValue::DTypeValue);
  globals["REAL"].dtype = DType::Float32;
  globals["LST"] = global(fe::GlobalValue::Unsupported);
  globals["LST"].name = "list";
  return globals;
}

struct Sources {
  std::vector<std::shared_ptr<fe::FunctionSource>> all;  // the kernel, then f and g where given
};

Sources make_sources(const std::string& input) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t at; parts.size() < 2 && (at = input.find("\n#---\n", start)) != std::string::npos; start = at + 6)
    parts.push_back(input.substr(start, at + 1 - start));
  parts.push_back(input.substr(start));

  static const char* const kFiles[] = {"fuzz.py", "f.py", "g.py"};
  static const int kFirstLines[] = {1, 10, 100};  // line numbers are offset, as for a function inside a file
  Sources sources;
  for (size_t i = 0; i < parts.size(); ++i) {
    auto source = std::make_shared<fe::FunctionSource>();
    source->source = fe::SourceText{parts[i], kFiles[i], kFirstLines[i]};
    source->identity = kFiles[i];
    sources.all.push_back(source);
  }
  // f and g are globals of every source; the resolvers hold weak references, as sources would form a cycle.
  std::vector<std::weak_ptr<const fe::FunctionSource>> functions;
  for (size_t i = 1; i < sources.all.size(); ++i) functions.push_back(sources.all[i]);
  for (auto& source : sources.all) {
    source->resolve = [functions](const std::string& name) {
      static const std::map<std::string, fe::GlobalValue> globals = fixed_globals();
      size_t index = name == "f" ? 0 : name == "g" ? 1 : functions.size();
      if (index < functions.size()) {
        fe::GlobalValue g = global(fe::GlobalValue::Function);
        g.function = functions[index].lock();
        return g;
      }
      auto it = globals.find(name);
      return it == globals.end() ? fe::GlobalValue{} : it->second;
    };
  }
  return sources;
}

// The argument types: from the "# signature:" line, then by position.
std::vector<fe::Type> signature(const std::string& text, size_t count) {
  static const fe::Type kByPosition[] = {
      fe::Type::array(DType::Float32, 1, true), fe::Type::array(DType::Float32, 1, true),
      fe::Type::array(DType::Float32, 1, true), fe::Type::scalar(DType::Int64),
      fe::Type::array(DType::Float64, 2, false), fe::Type::array(DType::Int32, 1, true),
      fe::Type::scalar(DType::Float64), fe::Type::array(DType::Bool, 1, true),
      fe::Type::array(DType::Float16, 3, true), fe::Type::scalar(DType::UInt8),
  };
  std::vector<fe::Type> types;
  const std::string header = "# signature:";
  if (text.compare(0, header.size(), header) == 0) {
    size_t end = text.find('\n');
    std::string line = text.substr(header.size(), end == std::string::npos ? std::string::npos : end - header.size());
    size_t at = 0;
    while (types.size() < 16) {
      at = line.find_first_not_of(' ', at);
      if (at == std::string::npos) break;
      size_t stop = std::min(line.find(' ', at), line.size());
      std::string word = line.substr(at, stop - at);
      at = stop;
      size_t bracket = word.find('[');
      try {
        DType dtype = dtype_from_name(word.substr(0, bracket));
        if (bracket == std::string::npos) {
          types.push_back(fe::Type::scalar(dtype));
        } else {
          int ndim = word.size() > bracket + 1 && word[bracket + 1] >= '0' && word[bracket + 1] <= '4' ? word[bracket + 1] - '0' : 1;
          types.push_back(fe::Type::array(dtype, ndim, word.find('A') == std::string::npos));
        }
      } catch (const Error&) {
        types.push_back(kByPosition[types.size() % std::size(kByPosition)]);  // not a dtype name
      }
    }
  }
  while (types.size() < count) types.push_back(kByPosition[types.size() % std::size(kByPosition)]);
  return types;
}

size_t code_points(const std::string& text) {
  size_t count = 0;
  for (char c : text) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return count;
}

// A CompileError must name one of the sources and a place within it (or just past its end).
void check_error(const fe::CompileError& e, const Sources& sources) {
  const fe::SourceText* source = nullptr;
  for (const auto& s : sources.all)
    if (s->source.file == e.file()) source = &s->source;
  if (!source) bug("error in an unknown file '" + e.file() + "': " + e.what());
  const std::string& text = source->text;
  int lines = 1;  // ended by \n, \r\n or \r, as Python and the tokenizer count them
  for (size_t i = 0; i < text.size(); ++i) lines += text[i] == '\n' || (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n'));
  if (e.line() < source->first_line || e.line() >= source->first_line + lines)
    bug("error line " + std::to_string(e.line()) + " outside " + e.file() + ": " + e.what());
  const size_t width = code_points(source->line_text(e.line()));
  if (e.column() < 1 || static_cast<size_t>(e.column()) > width + 1)
    bug("error column " + std::to_string(e.column()) + " outside line " + std::to_string(e.line()) + " (" +
        std::to_string(width) + " columns): " + e.what());
  const std::string place = e.file() + ":" + std::to_string(e.line()) + ":" + std::to_string(e.column()) + ": error: ";
  if (std::string(e.what()).compare(0, place.size(), place) != 0) bug(std::string("malformed message: ") + e.what());
  if (e.message().empty()) bug("empty message");
  if (e.message().find("internal error") != std::string::npos) bug(e.what());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const Sources sources = make_sources(input);
  try {
    const std::shared_ptr<const fe::FunctionSource> kernel = sources.all[0];
    const size_t params = fe::parse(kernel->source)->params.size();
    fe::Program program = fe::check(kernel, signature(kernel->source.text, params));
    emit::emit_cuda(program);
    emit::emit_host(program);
    emit::emit_host(program, /*debug=*/true);
  } catch (const fe::CompileError& e) {
    check_error(e, sources);
  } catch (const BadArgument&) {
    // The signature line does not fit the kernel's parameters: the caller's error (a TypeError), not a bug.
  } catch (const std::exception& e) {
    bug(std::string("an exception other than CompileError: ") + e.what());
  }
  return 0;
}
