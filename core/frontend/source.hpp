// Where kernel source text comes from, and the error type every front-end stage raises.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "support/error.hpp"

namespace jiasu::fe {

// A function's source text as the Python layer hands it over (inspect.getsource): the text, the file
// it came from and the file line of its first line, so messages and comments point at the user's file.
struct SourceText {
  std::string text;
  std::string file = "<kernel>";
  int first_line = 1;  // file line number of text's first line
  // The text of file line `line` (without newline); empty when outside the text.
  std::string line_text(int line) const;
};

// Where each line of a SourceText starts, found once: emitters look up a line per statement, which must
// not cost a scan of the text each time.
class SourceLines {
 public:
  explicit SourceLines(const SourceText& source);
  // As SourceText::line_text; the view is into `source`, which must outlive this.
  std::string_view text(int line) const;

 private:
  const SourceText& source_;
  std::vector<size_t> starts_;  // byte offset of each line of the text
};

struct SourceLoc {
  int line = 0;    // file line number (already offset by first_line)
  int column = 0;  // 1-based column in that line
};

// A kernel the front end cannot compile: unsupported syntax, undefined name, type conflict, ...
// what() is the full message: "file:line:column: error: <message>\n    <source line>\n    ^".
class CompileError : public Error {
 public:
  CompileError(const SourceText& source, SourceLoc loc, const std::string& message);
  const std::string& file() const { return file_; }
  int line() const { return loc_.line; }
  int column() const { return loc_.column; }
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  SourceLoc loc_;
  std::string message_;
};

}  // namespace jiasu::fe
