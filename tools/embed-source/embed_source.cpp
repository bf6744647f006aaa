// Embeds source files into the core at build time, for compilers that cannot read jiasu's files (NVRTC, the
// CPU backend's run-time compiler): each named file becomes one string, its quoted includes inlined (a file
// with `#pragma once` only the first time, without that line), system includes left as they are.
//
//   embed_source OUTPUT.cpp INCLUDE_ROOT NAME=FILE...
//
// OUTPUT.cpp defines, in namespace jiasu::embedded, `const char NAME[]` (NUL-terminated) and
// `const unsigned long long NAME_size` for each NAME; FILE and the includes are relative to INCLUDE_ROOT.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The file named by `#include "NAME"` on this line, or "" when the line is no quoted include.
std::string quoted_include(const std::string& line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos || line[i] != '#') return "";
  i = line.find_first_not_of(" \t", i + 1);
  if (i == std::string::npos || line.compare(i, 7, "include") != 0) return "";
  const size_t open = line.find('"', i + 7), close = open == std::string::npos ? open : line.find('"', open + 1);
  if (close == std::string::npos || line.find_first_not_of(" \t", i + 7) != open) return "";
  return line.substr(open + 1, close - open - 1);
}

bool is_pragma_once(const std::string& line) {
  std::istringstream words(line);
  std::string hash, pragma, once;
  words >> hash >> pragma >> once;
  return (hash == "#pragma" && pragma == "once") || (hash == "#" && pragma == "pragma" && once == "once");
}

class Inliner {
 public:
  explicit Inliner(std::string root) : root_(std::move(root)) {}

  void inline_file(const std::string& name, std::string& out, int depth = 0) {
    if (depth > 32) throw std::runtime_error("includes nested too deeply at " + name);
    const std::string text = read(root_ + "/" + name);
    if (text.find("#pragma once") != std::string::npos && !once_.insert(name).second) return;
    out += "// ---- jiasu: " + name + "\n";
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      if (is_pragma_once(line)) continue;
      const std::string included = quoted_include(line);
      if (included.empty()) out += line + "\n";
      else inline_file(included, out, depth + 1);
    }
  }

 private:
  std::string root_;
  std::set<std::string> once_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: embed_source OUTPUT.cpp INCLUDE_ROOT NAME=FILE...\n";
    return 2;
  }
  try {
    std::string out = "// Generated at build time by tools/embed-source: edit the files named below, not this one.\n"
                      "namespace jiasu::embedded {\n";
    for (int a = 3; a < argc; ++a) {
      const std::string spec = argv[a];
      const size_t eq = spec.find('=');
      if (eq == std::string::npos || eq == 0) throw std::runtime_error("not NAME=FILE: " + spec);
      const std::string name = spec.substr(0, eq), file = spec.substr(eq + 1);
      std::string text;
      Inliner(argv[2]).inline_file(file, text);
      out += "// " + file + "\nextern const char " + name + "[] = {";
      for (size_t i = 0; i < text.size(); ++i) {
        if (i % 24 == 0) out += "\n";
        // Bytes above 127 through a cast, which cannot narrow whether char is signed or not.
        const unsigned byte = static_cast<unsigned char>(text[i]);
        out += byte < 128 ? std::to_string(byte) + "," : "static_cast<char>(" + std::to_string(byte) + "),";
      }
      out += "0};\nextern const unsigned long long " + name + "_size = " + std::to_string(text.size()) + ";\n";
    }
    out += "}  // namespace jiasu::embedded\n";
    const std::string tmp = std::string(argv[1]) + ".tmp";
    std::ofstream file(tmp, std::ios::binary);
    file << out;
    file.close();
    if (!file) throw std::runtime_error("cannot write " + tmp);
    if (std::rename(tmp.c_str(), argv[1]) != 0) throw std::runtime_error(std::string("cannot write ") + argv[1]);
  } catch (const std::exception& e) {
    std::cerr << "embed_source: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
