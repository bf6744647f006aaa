#include "frontend/source.hpp"

namespace jiasu::fe {
namespace {

std::string format(const SourceText& source, SourceLoc loc, const std::string& message) {
  std::string out = source.file + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.column) +
                    ": error: " + message;
  std::string text = source.line_text(loc.line);
  if (!text.empty()) {
    out += "\n    " + text + "\n    ";
    for (int i = 1; i < loc.column && i <= static_cast<int>(text.size()); ++i) out += text[i - 1] == '\t' ? '\t' : ' ';
    out += "^";
  }
  return out;
}

}  // namespace

std::string SourceText::line_text(int line) const {
  int index = line - first_line;
  if (index < 0) return "";
  size_t start = 0;
  for (int i = 0; i < index; ++i) {
    start = text.find('\n', start);
    if (start == std::string::npos) return "";
    ++start;
  }
  size_t end = text.find('\n', start);
  std::string out = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
  if (!out.empty() && out.back() == '\r') out.pop_back();
  return out;
}

CompileError::CompileError(const SourceText& source, SourceLoc loc, const std::string& message)
    : Error(format(source, loc, message)), file_(source.file), loc_(loc), message_(message) {}

}  // namespace jiasu::fe
