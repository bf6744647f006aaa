// Tokens of the kernel language (a subset of Python's lexical grammar), produced by tokenize().
#pragma once

#include <string>
#include <vector>

#include "frontend/source.hpp"

namespace jiasu::fe {

enum class TokenKind {
  Name,       // identifiers and keywords (the parser tells them apart)
  Int,        // 12, 0x1F, 0o17, 0b101, 1_000
  Float,      // 1.5, .5, 1e-3, 1_0.0, 2., and imaginary literals: 2j, 1.5J
  String,     // 'x', "x" (docstrings and the messages of raised exceptions; rejected elsewhere)
  Op,         // operators and delimiters: + - * / // % ** << >> & | ^ ~ < > <= >= == != ( ) [ ] , : . = += ... ->
  Newline,    // end of a logical line
  Indent,
  Dedent,
  End,        // end of input
};

struct Token {
  TokenKind kind;
  std::string text;   // the exact source text (for Int/Float: the literal with underscores kept)
  SourceLoc loc;      // where the token starts
};

// Splits `source` into tokens with Python's rules: indentation (Indent/Dedent), implicit line joining
// inside brackets, backslash continuations, comments, blank lines. Numeric literals in every form
// (hex, octal, binary, underscores, exponents) are single tokens. Throws CompileError on a lexical
// error (bad character, inconsistent dedent, unterminated string).
std::vector<Token> tokenize(const SourceText& source);

// The text a string literal token stands for: its prefix and quotes removed and, unless it is raw, Python's
// common escapes (\\ \' \" \n \t \r \0, a backslash-newline) replaced; other escapes are kept as written.
std::string string_value(const std::string& token_text);
// Python's value for a Float token's text (underscores allowed): the nearest double, inf past the largest,
// 0.0 below the smallest.
double float_literal_value(const std::string& text);

}  // namespace jiasu::fe
