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

// Where the line starting at byte `start` ends: at its \n, \r\n or lone \r (Python's line endings), or at
// the end of the text. *next: where the next line starts (npos after the last).
size_t line_end(const std::string& text, size_t start, size_t* next) {
  size_t end = text.find_first_of("\r\n", start);
  if (end == std::string::npos) {
    *next = std::string::npos;
    return text.size();
  }
  *next = end + (text[end] == '\r' && end + 1 < text.size() && text[end + 1] == '\n' ? 2 : 1);
  return end;
}

// The line of `text` that starts at byte `start`, without its line ending.
std::string_view line_at(const std::string& text, size_t start) {
  size_t next;
  return std::string_view(text.data() + start, line_end(text, start, &next) - start);
}

}  // namespace

std::string SourceText::line_text(int line) const {
  int index = line - first_line;
  if (index < 0) return "";
  size_t start = 0;
  for (int i = 0; i < index && start != std::string::npos; ++i) line_end(text, start, &start);
  return start == std::string::npos ? "" : std::string(line_at(text, start));
}

SourceLines::SourceLines(const SourceText& source) : source_(source), starts_{0} {
  size_t next;
  for (line_end(source.text, 0, &next); next != std::string::npos; line_end(source.text, next, &next)) starts_.push_back(next);
}

std::string_view SourceLines::text(int line) const {
  int index = line - source_.first_line;
  if (index < 0 || static_cast<size_t>(index) >= starts_.size()) return {};
  return line_at(source_.text, starts_[index]);
}

CompileError::CompileError(const SourceText& source, SourceLoc loc, const std::string& message)
    : Error(format(source, loc, message)), file_(source.file), loc_(loc), message_(message) {}

}  // namespace jiasu::fe
