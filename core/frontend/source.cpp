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

// The line of `text` that starts at byte `start`, without its line ending.
std::string_view line_at(const std::string& text, size_t start) {
  size_t end = text.find('\n', start);
  std::string_view line(text.data() + start, (end == std::string::npos ? text.size() : end) - start);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
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
  return std::string(line_at(text, start));
}

SourceLines::SourceLines(const SourceText& source) : source_(source), starts_{0} {
  for (size_t at = source.text.find('\n'); at != std::string::npos; at = source.text.find('\n', at + 1))
    starts_.push_back(at + 1);
}

std::string_view SourceLines::text(int line) const {
  int index = line - source_.first_line;
  if (index < 0 || static_cast<size_t>(index) >= starts_.size()) return {};
  return line_at(source_.text, starts_[index]);
}

CompileError::CompileError(const SourceText& source, SourceLoc loc, const std::string& message)
    : Error(format(source, loc, message)), file_(source.file), loc_(loc), message_(message) {}

}  // namespace jiasu::fe
