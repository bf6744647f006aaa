// Python's lexical rules for the kernel language: one pass over the text, physical line by physical
// line (ended by \n, \r\n or a lone \r, as in Python), producing Indent/Dedent from an indentation stack
// and joining lines inside brackets and after a backslash. Columns count code points (as Python's SyntaxError offsets do), so a caret under a line
// holding non-ASCII identifiers still lands on the right character.
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/token.hpp"

namespace jiasu::fe {
namespace {

bool is_ascii_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

bool is_digit_of(char c, int radix) {
  if (radix == 16) return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  return c >= '0' && c < '0' + radix;
}

// Non-ASCII code points are accepted in names (Python allows most letters of every script), except the
// punctuation and spaces most often pasted in by accident, which Python rejects too.
bool is_name_code_point(uint32_t cp) {
  if (cp < 0x80) return false;
  if (cp <= 0xBF) return cp == 0xAA || cp == 0xB5 || cp == 0xBA;  // Latin-1 punctuation, except ª µ º
  if (cp == 0xD7 || cp == 0xF7) return false;                       // × ÷
  if (cp >= 0x2000 && cp <= 0x206F) return false;                   // spaces, dashes, smart quotes
  if (cp >= 0x3000 && cp <= 0x303F) return cp >= 0x3005 && cp <= 0x3007;  // CJK punctuation, except 々〆〇
  if (cp >= 0xFF00 && cp <= 0xFF0F) return false;                   // fullwidth punctuation
  if ((cp >= 0xFF1A && cp <= 0xFF20) || (cp >= 0xFF3B && cp <= 0xFF40) || (cp >= 0xFF5B && cp <= 0xFF65))
    return false;
  return cp != 0xFEFF;  // a stray byte-order mark
}

const char* const kOperators[] = {
    // Longest first, so the first match is the longest.
    "**=", "//=", ">>=", "<<=", "...",
    "**", "//", "<<", ">>", "<=", ">=", "==", "!=", "->", ":=",
    "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=",
    "+", "-", "*", "/", "%", "@", "&", "|", "^", "~", "<", ">",
    "(", ")", "[", "]", "{", "}", ",", ":", ".", ";", "=",
};

// Indentation width of a line start, measured twice: tabs to the next multiple of 8 (Python's rule) and
// tabs as one column. Indentation that compares differently under the two is ambiguous (TabError).
struct Indentation {
  int col = 0;
  int alt_col = 0;
};

// Python's limits, which also keep the recursive-descent parser's stack small.
constexpr size_t kMaxIndentLevels = 100;
constexpr size_t kMaxNestedBrackets = 200;

struct OpenBracket {
  char bracket;
  SourceLoc loc;
};

class Tokenizer {
 public:
  explicit Tokenizer(const SourceText& source) : source_(source), text_(source.text) {}

  std::vector<Token> run() {
    if (size_t nul = text_.find('\0'); nul != std::string::npos) {  // as Python refuses them
      while (pos_ < nul) at_line_end() && !at_end() ? consume_newline() : void(++pos_);
      fail(here(), "source code cannot contain null bytes");
    }
    while (pos_ < text_.size()) {
      Indentation indentation = read_indentation();
      if (at_line_end() || peek() == '#') {  // blank or comment-only: no tokens, no indentation change
        skip_comment();
        if (!at_end()) consume_newline();
        continue;
      }
      if (skip_blank_continued_line()) continue;
      apply_indentation(indentation);
      read_logical_line();
    }
    SourceLoc end = here();
    while (indents_.size() > 1) {
      indents_.pop_back();
      tokens_.push_back({TokenKind::Dedent, "", end});
    }
    tokens_.push_back({TokenKind::End, "", end});
    return std::move(tokens_);
  }

 private:
  const SourceText& source_;
  const std::string& text_;
  size_t pos_ = 0;
  int line_index_ = 0;     // 0-based physical line of pos_
  size_t line_start_ = 0;  // byte offset where that line starts
  std::vector<Token> tokens_;
  std::vector<Indentation> indents_;  // the first entry is the base: the first line's indentation
  std::vector<OpenBracket> brackets_;
  SourceLoc last_token_end_;
  mutable size_t column_pos_ = 0;  // loc_at()'s cache: the column of byte column_pos_ of the current line
  mutable int column_ = 1;

  bool at_end() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  bool at_line_end() const { return at_end() || peek() == '\n' || peek() == '\r'; }

  // Columns are counted forward from the last one asked for, so long lines cost linear time.
  SourceLoc loc_at(size_t pos) const {
    if (column_pos_ < line_start_ || pos < column_pos_) column_pos_ = line_start_, column_ = 1;
    for (; column_pos_ < pos; ++column_pos_) column_ += is_continuation_byte(text_[column_pos_]) ? 0 : 1;
    return {source_.first_line + line_index_, column_};
  }
  SourceLoc here() const { return loc_at(pos_); }

  [[noreturn]] void fail(SourceLoc loc, const std::string& message) const { throw CompileError(source_, loc, message); }

  void consume_newline() {
    pos_ += peek() == '\r' && peek(1) == '\n' ? 2 : 1;
    ++line_index_;
    line_start_ = pos_;
  }

  void skip_comment() {
    if (peek() != '#') return;
    while (!at_line_end()) ++pos_;
  }

  // A line that backslashes continue into a blank line (or the end) is blank too: as in Python, it makes
  // no statement and changes no indentation. Skips it if so.
  bool skip_blank_continued_line() {
    auto space = [](char c) { return c == ' ' || c == '\t' || c == '\f'; };
    size_t p = pos_;
    while (p < text_.size() && text_[p] == '\\') {
      if (++p == text_.size() || (text_[p] != '\n' && text_[p] != '\r')) return false;
      p += text_[p] == '\r' && p + 1 < text_.size() && text_[p + 1] == '\n' ? 2 : 1;
      while (p < text_.size() && space(text_[p])) ++p;
    }
    if (p == pos_ || (p < text_.size() && text_[p] != '\n' && text_[p] != '\r' && text_[p] != '#')) return false;
    while (peek() == '\\') {
      ++pos_;
      consume_newline();
      while (space(peek())) ++pos_;
    }
    skip_comment();
    if (!at_end()) consume_newline();
    return true;
  }

  Indentation read_indentation() {
    Indentation indentation;
    for (;; ++pos_) {
      char c = peek();
      if (c == ' ') {
        ++indentation.col, ++indentation.alt_col;
      } else if (c == '\t') {
        indentation.col = (indentation.col / 8 + 1) * 8;
        ++indentation.alt_col;
      } else if (c == '\f') {  // Python resets the count at a form feed
        indentation = {};
      } else {
        return indentation;
      }
    }
  }

  void apply_indentation(Indentation indentation) {
    SourceLoc loc = here();
    if (indents_.empty()) {  // the first line sets the base, so nested (indented) defs tokenize as is
      indents_.push_back(indentation);
      return;
    }
    auto inconsistent = [&] { fail(loc, "inconsistent use of tabs and spaces in indentation"); };
    if (indentation.col > indents_.back().col) {
      if (indentation.alt_col <= indents_.back().alt_col) inconsistent();
      if (indents_.size() > kMaxIndentLevels) fail(loc, "too many levels of indentation");
      indents_.push_back(indentation);
      tokens_.push_back({TokenKind::Indent, "", loc});
      return;
    }
    while (indents_.size() > 1 && indentation.col < indents_.back().col) {
      indents_.pop_back();
      tokens_.push_back({TokenKind::Dedent, "", loc});
    }
    if (indentation.col != indents_.back().col) fail(loc, "unindent does not match any outer indentation level");
    if (indentation.alt_col != indents_.back().alt_col) inconsistent();
  }

  // Tokens up to the Newline that ends the logical line starting at pos_.
  void read_logical_line() {
    for (;;) {
      char c = peek();
      if (c == ' ' || c == '\t' || c == '\f') {
        ++pos_;
      } else if (c == '#') {
        skip_comment();
      } else if (c == '\\') {
        SourceLoc loc = here();
        ++pos_;
        if (at_end()) fail(loc, "unexpected end of file after line continuation character");
        if (!at_line_end()) fail(loc, "unexpected character after line continuation character");
        consume_newline();
      } else if (at_line_end()) {
        if (!brackets_.empty()) {
          if (at_end()) fail(brackets_.back().loc, std::string("'") + brackets_.back().bracket + "' was never closed");
          consume_newline();  // implicit line joining
          continue;
        }
        tokens_.push_back({TokenKind::Newline, "", last_token_end_});
        if (!at_end()) consume_newline();
        return;
      } else {
        read_token();
      }
    }
  }

  void push(TokenKind kind, size_t start) {
    SourceLoc loc = loc_at(start);
    tokens_.push_back({kind, text_.substr(start, pos_ - start), loc});
    last_token_end_ = here();
  }

  void read_token() {
    size_t start = pos_;
    char c = peek();
    if (is_digit(c) || (c == '.' && is_digit(peek(1)))) return read_number();
    if (c == '"' || c == '\'') return read_string(start);
    if (is_ascii_name_start(c) || (c & 0x80)) return read_name_or_prefixed_string();
    for (const char* op : kOperators) {
      if (op[0] != c) continue;
      std::string_view candidate(op);
      if (text_.compare(pos_, candidate.size(), candidate) == 0) {
        pos_ += candidate.size();
        track_bracket(op[0], start);
        return push(TokenKind::Op, start);
      }
    }
    fail(here(), "invalid character '" + std::string(1, c) + "'");
  }

  void track_bracket(char c, size_t start) {
    static const std::string opening = "([{", closing = ")]}";
    if (opening.find(c) != std::string::npos) {
      if (brackets_.size() == kMaxNestedBrackets) fail(loc_at(start), "too many nested parentheses");
      brackets_.push_back({c, loc_at(start)});
    } else if (size_t kind = closing.find(c); kind != std::string::npos) {
      if (brackets_.empty()) fail(loc_at(start), std::string("unmatched '") + c + "'");
      if (brackets_.back().bracket != opening[kind])
        fail(loc_at(start), std::string("closing parenthesis '") + c + "' does not match opening parenthesis '" +
                                brackets_.back().bracket + "'");
      brackets_.pop_back();
    }
  }

  // Decodes the UTF-8 sequence at pos_; fails on malformed bytes.
  uint32_t code_point_at(size_t& length) const {
    auto byte = [&](size_t i) { return static_cast<unsigned char>(peek(i)); };
    unsigned char lead = byte(0);
    length = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC2 ? 2 : 0;
    if (length == 0 || pos_ + length > text_.size()) fail(here(), "invalid UTF-8 in source");
    uint32_t cp = length == 1 ? lead : lead & (0x3F >> (length - 1));
    for (size_t i = 1; i < length; ++i) {
      if (!is_continuation_byte(static_cast<char>(byte(i)))) fail(here(), "invalid UTF-8 in source");
      cp = (cp << 6) | (byte(i) & 0x3F);
    }
    return cp;
  }

  // Consumes one name character if there is one at pos_.
  bool consume_name_char(bool allow_digit) {
    char c = peek();
    if (is_ascii_name_start(c) || (allow_digit && is_digit(c))) {
      ++pos_;
      return true;
    }
    if (!(c & 0x80)) return false;
    size_t length;
    uint32_t cp = code_point_at(length);
    if (!is_name_code_point(cp)) {
      char hex[16];
      std::snprintf(hex, sizeof hex, "U+%04X", cp);
      fail(here(), "invalid character '" + text_.substr(pos_, length) + "' (" + hex + ")");
    }
    pos_ += length;
    return true;
  }

  void read_name_or_prefixed_string() {
    size_t start = pos_;
    consume_name_char(false);
    while (consume_name_char(true)) {
    }
    if (peek() == '"' || peek() == '\'') {
      std::string prefix = text_.substr(start, pos_ - start);
      for (char& ch : prefix) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      static const char* const kPrefixes[] = {"r", "u", "b", "f", "br", "rb", "fr", "rf"};
      for (const char* p : kPrefixes)
        if (prefix == p) return read_string(start);
    }
    push(TokenKind::Name, start);
  }

  // A string literal whose prefix (if any) starts at `start` and whose quote is at pos_. Escapes only
  // matter for finding the closing quote: strings are docstrings or errors.
  void read_string(size_t start) {
    SourceLoc loc = loc_at(start);
    char quote = peek();
    bool triple = peek(1) == quote && peek(2) == quote;
    pos_ += triple ? 3 : 1;
    for (;;) {
      if (at_end() || (!triple && at_line_end())) {
        std::string detected = " (detected at line " + std::to_string(source_.first_line + line_index_) + ")";
        fail(loc, std::string(triple ? "unterminated triple-quoted string literal" : "unterminated string literal") +
                      detected);
      }
      char c = peek();
      if (c == '\\') {
        ++pos_;
        if (at_end()) continue;
        if (at_line_end()) consume_newline();
        else ++pos_;
      } else if (c == quote && (!triple || (peek(1) == quote && peek(2) == quote))) {
        pos_ += triple ? 3 : 1;
        break;
      } else if (at_line_end()) {
        consume_newline();
      } else {
        ++pos_;
      }
    }
    tokens_.push_back({TokenKind::String, text_.substr(start, pos_ - start), loc});  // loc: its first line
    last_token_end_ = here();
  }

  // digitpart: digits with single underscores between them. Returns false on a misplaced underscore.
  bool read_digits(int radix) {
    if (!is_digit_of(peek(), radix)) return false;
    while (is_digit_of(peek(), radix) || peek() == '_') {
      if (peek() == '_' && !is_digit_of(peek(1), radix)) return false;
      ++pos_;
    }
    return true;
  }

  void read_number() {
    size_t start = pos_;
    SourceLoc loc = here();
    if (peek() == '0' && std::string("xXoObB").find(peek(1)) != std::string::npos) {
      char letter = static_cast<char>(std::tolower(static_cast<unsigned char>(peek(1))));
      int radix = letter == 'x' ? 16 : letter == 'o' ? 8 : 2;
      const char* name = letter == 'x' ? "hexadecimal" : letter == 'o' ? "octal" : "binary";
      pos_ += 2;
      if (peek() == '_') ++pos_;  // 0x_1F is valid
      bool ok = read_digits(radix);
      if (radix != 16 && is_digit(peek()))
        fail(here(), "invalid digit '" + std::string(1, peek()) + "' in " + name + " literal");
      if (!ok || is_ascii_name_start(peek()) || is_digit(peek()) || (peek() & 0x80))
        fail(loc, std::string("invalid ") + name + " literal");
      return push(TokenKind::Int, start);
    }
    auto invalid = [&] { fail(loc, "invalid decimal literal"); };
    bool is_float = false;
    if (peek() != '.' && !read_digits(10)) invalid();
    if (peek() == '.') {  // as in Python, a dot after digits always belongs to the number: 1..real
      ++pos_;
      is_float = true;
      if (is_digit(peek()) && !read_digits(10)) invalid();
    }
    if (peek() == 'e' || peek() == 'E') {
      size_t sign = (peek(1) == '+' || peek(1) == '-') ? 1 : 0;
      if (!is_digit(peek(1 + sign))) invalid();
      pos_ += 1 + sign;
      if (!read_digits(10)) invalid();
      is_float = true;
    }
    if (peek() == 'j' || peek() == 'J') {  // an imaginary literal: 2j, 1.5e3J (a Float token ending in j)
      ++pos_;
      is_float = true;
    }
    if (is_ascii_name_start(peek()) || (peek() & 0x80)) invalid();
    if (!is_float && text_[start] == '0' && text_.find_first_not_of("0_", start) < pos_)
      fail(loc, "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers");
    push(is_float ? TokenKind::Float : TokenKind::Int, start);
  }
};

// The base-10 exponent of a decimal literal's leading nonzero digit, saturated: tells an overflowing
// literal (Python: inf) from an underflowing one (Python: 0.0).
long decimal_exponent(const std::string& literal) {
  size_t e = literal.find_first_of("eE");
  std::string mantissa = literal.substr(0, e);
  size_t point = std::min(mantissa.find('.'), mantissa.size());
  size_t first = mantissa.find_first_not_of("0.");
  long exponent = first < point ? static_cast<long>(point - first) - 1 : -static_cast<long>(first - point);
  if (e != std::string::npos) {
    long written = 0;
    size_t i = e + 1 + (literal[e + 1] == '+' || literal[e + 1] == '-');
    for (; i < literal.size() && written < 1000000; ++i) written = written * 10 + (literal[i] - '0');
    exponent += literal[e + 1] == '-' ? -written : written;
  }
  return exponent;
}

}  // namespace

// Python's value for the literal: the nearest double, inf past the largest, 0.0 below the smallest.
// from_chars rather than strtod, which would follow the host process's locale.
double float_literal_value(const std::string& text) {
  std::string literal;
  for (char c : text)
    if (c != '_') literal += c;
  double value = 0;
  auto [end, error] = std::from_chars(literal.data(), literal.data() + literal.size(), value);
  if (error == std::errc::result_out_of_range) return decimal_exponent(literal) > 0 ? HUGE_VAL : 0.0;
  return value;
}

std::vector<Token> tokenize(const SourceText& source) { return Tokenizer(source).run(); }

std::string string_value(const std::string& token_text) {
  const size_t quote = token_text.find_first_of("'\"");
  const bool raw = token_text.find_first_of("rR") < quote;
  const size_t width = token_text.compare(quote, 3, std::string(3, token_text[quote])) == 0 ? 3 : 1;
  const std::string body = token_text.substr(quote + width, token_text.size() - quote - 2 * width);
  if (raw) return body;
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\' || i + 1 == body.size()) {
      out += body[i];
      continue;
    }
    const char c = body[++i];
    switch (c) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case '0': out += '\0'; break;
      case '\\': case '\'': case '"': out += c; break;
      case '\n': break;  // a continuation
      default: out += '\\'; out += c;
    }
  }
  return out;
}

}  // namespace jiasu::fe
