// tokenize(): Python's lexical rules for kernel source — literals, operators, indentation, line joining,
// and locations that point into the user's file.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "frontend/token.hpp"

namespace jiasu::fe {
namespace {

std::vector<Token> lex(const std::string& text, int first_line = 1) { return tokenize(SourceText{text, "k.py", first_line}); }

std::string describe(const Token& token) {
  switch (token.kind) {
    case TokenKind::Newline: return "NL";
    case TokenKind::Indent: return "IN";
    case TokenKind::Dedent: return "DE";
    case TokenKind::End: return "END";
    default: return token.text;
  }
}

// The tokens as "text text NL IN ... END", one space apart.
std::string texts(const std::string& text) {
  std::string out;
  for (const Token& token : lex(text)) out += (out.empty() ? "" : " ") + describe(token);
  return out;
}

// The tokens with their locations: "text@line:column ...".
std::string located(const std::string& text, int first_line = 1) {
  std::string out;
  for (const Token& token : lex(text, first_line))
    out += (out.empty() ? "" : " ") + describe(token) + "@" + std::to_string(token.loc.line) + ":" +
           std::to_string(token.loc.column);
  return out;
}

// "line:column: message" of the CompileError tokenize() throws.
std::string error_of(const std::string& text, int first_line = 1) {
  try {
    lex(text, first_line);
  } catch (const CompileError& e) {
    return std::to_string(e.line()) + ":" + std::to_string(e.column()) + ": " + e.message();
  }
  return "no error";
}

TEST(Tokenize, IntegerLiteralsInEveryFormAreOneTokenWithTheirText) {
  for (const char* literal : {"0", "7", "00", "0_0", "1_000", "0x1F", "0X_ff", "0xdead_BEEF", "0o17", "0O7", "0o_1",
                              "0b101", "0B1_0", "123456789012345678901234567890"}) {
    std::vector<Token> tokens = lex(literal);
    ASSERT_EQ(tokens.size(), 3u) << literal;
    EXPECT_EQ(tokens[0].kind, TokenKind::Int) << literal;
    EXPECT_EQ(tokens[0].text, literal);
    EXPECT_EQ(tokens[1].kind, TokenKind::Newline);
    EXPECT_EQ(tokens[2].kind, TokenKind::End);
  }
}

TEST(Tokenize, FloatLiteralsInEveryFormAreOneTokenWithTheirText) {
  for (const char* literal : {"1.5", ".5", "5.", "0.0", "1e3", "1E3", "1e+3", "1.5E-3", ".5e2", "5.e-1", "1_0.0_1",
                              "1_0e1_0", "012.5", "00e1", "09.9"}) {
    std::vector<Token> tokens = lex(literal);
    ASSERT_EQ(tokens.size(), 3u) << literal;
    EXPECT_EQ(tokens[0].kind, TokenKind::Float) << literal;
    EXPECT_EQ(tokens[0].text, literal);
  }
}

TEST(Tokenize, ADotAfterDigitsBelongsToTheNumber) {
  EXPECT_EQ(texts("1..real"), "1. . real NL END");
  EXPECT_EQ(texts("x.y1.z"), "x . y1 . z NL END");
}

TEST(Tokenize, MalformedNumbersAreErrorsAtTheLiteralOrTheBadDigit) {
  EXPECT_EQ(error_of("x = 012"), "1:5: leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers");
  EXPECT_EQ(error_of("x = 0_7"), "1:5: leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers");
  EXPECT_EQ(error_of("x = 1_"), "1:5: invalid decimal literal");
  EXPECT_EQ(error_of("x = 1__0"), "1:5: invalid decimal literal");
  EXPECT_EQ(error_of("x = 1e"), "1:5: invalid decimal literal");
  EXPECT_EQ(error_of("x = 1.5e+"), "1:5: invalid decimal literal");
  EXPECT_EQ(error_of("x = 12abc"), "1:5: invalid decimal literal");
  EXPECT_EQ(error_of("x = 0x"), "1:5: invalid hexadecimal literal");
  EXPECT_EQ(error_of("x = 0x1g"), "1:5: invalid hexadecimal literal");
  EXPECT_EQ(error_of("x = 0b1_"), "1:5: invalid binary literal");
  EXPECT_EQ(error_of("x = 0b102"), "1:9: invalid digit '2' in binary literal");
  EXPECT_EQ(error_of("x = 0o8"), "1:7: invalid digit '8' in octal literal");
}

TEST(Tokenize, ImaginaryLiteralsAreFloatTokensEndingInJ) {
  for (const char* literal : {"1j", "1.5J", "2e3j", "0j", "00j", "1_0.5j", ".5j"}) {
    std::vector<Token> tokens = lex(literal);
    ASSERT_EQ(tokens.size(), 3u) << literal;
    EXPECT_EQ(tokens[0].kind, TokenKind::Float) << literal;
    EXPECT_EQ(tokens[0].text, literal);
  }
  EXPECT_EQ(error_of("x = 1jj"), "1:5: invalid decimal literal");
  EXPECT_EQ(error_of("x = 0x1j"), "1:5: invalid hexadecimal literal");
}

TEST(Tokenize, OperatorsTakeTheLongestMatch) {
  const char* ops[] = {"**", "//", "<<", ">>", "<=", ">=", "==", "!=", "->", ":=", "+=", "-=", "*=", "/=", "//=",
                       "%=", "**=", "&=", "|=", "^=", "<<=", ">>=", "@=", "...", "+", "-", "*", "/", "%", "@",
                       "&", "|", "^", "~", "<", ">", ",", ":", ".", ";", "="};
  for (const char* op : ops) {
    std::vector<Token> tokens = lex(std::string("a ") + op + " b");
    ASSERT_EQ(tokens.size(), 5u) << op;
    EXPECT_EQ(tokens[1].kind, TokenKind::Op);
    EXPECT_EQ(tokens[1].text, op);
    EXPECT_EQ(tokens[1].loc.column, 3);
  }
  EXPECT_EQ(texts("a**-b//=c<<=d"), "a ** - b //= c <<= d NL END");
  EXPECT_EQ(texts("(x)[y]{z}"), "( x ) [ y ] { z } NL END");
}

TEST(Tokenize, NamesAndKeywordsAreNames) {
  std::vector<Token> tokens = lex("if _x1 and not None");
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(tokens[i].kind, TokenKind::Name) << tokens[i].text;
  EXPECT_EQ(texts("if _x1 and not None"), "if _x1 and not None NL END");
}

TEST(Tokenize, UnicodeNamesCountColumnsInCharacters) {
  EXPECT_EQ(located("élan = naïve + 1"), "élan@1:1 =@1:6 naïve@1:8 +@1:14 1@1:16 NL@1:17 END@1:17");
  EXPECT_EQ(located("数据 = 1"), "数据@1:1 =@1:4 1@1:6 NL@1:7 END@1:7");
}

TEST(Tokenize, PunctuationLookalikesAndStrayCharactersAreErrors) {
  EXPECT_EQ(error_of("f(a，b)"), "1:4: invalid character '，' (U+FF0C)");
  EXPECT_EQ(error_of("x = a – b"), "1:7: invalid character '–' (U+2013)");
  EXPECT_EQ(error_of("x = $a"), "1:5: invalid character '$'");
  EXPECT_EQ(error_of("x = a ? b"), "1:7: invalid character '?'");
  EXPECT_EQ(error_of("x = a ! b"), "1:7: invalid character '!'");
}

TEST(Tokenize, StringsWithQuotesPrefixesAndTripleQuotesAreOneToken) {
  EXPECT_EQ(texts("'a' \"b\" r'\\d' b\"x\" f'{y}' Rb'z' u'w'"),
            "'a' \"b\" r'\\d' b\"x\" f'{y}' Rb'z' u'w' NL END");
  EXPECT_EQ(texts("'it\\'s' \"q\\\"q\""), "'it\\'s' \"q\\\"q\" NL END");
  std::vector<Token> tokens = lex("x = \"\"\"one\n'two' \"\n\"\"\" + y");
  ASSERT_EQ(tokens.size(), 7u);
  EXPECT_EQ(tokens[2].kind, TokenKind::String);
  EXPECT_EQ(tokens[2].text, "\"\"\"one\n'two' \"\n\"\"\"");
  EXPECT_EQ(located("x = \"\"\"one\n'two' \"\n\"\"\" + y"), "x@1:1 =@1:3 \"\"\"one\n'two' \"\n\"\"\"@1:5 +@3:5 y@3:7 NL@3:8 END@3:8");
  EXPECT_EQ(texts("br = rb"), "br = rb NL END");  // prefixes are names unless a quote follows
}

TEST(Tokenize, UnterminatedStringsAreErrorsAtTheirStart) {
  EXPECT_EQ(error_of("x = 'abc\ny = 1"), "1:5: unterminated string literal (detected at line 1)");
  EXPECT_EQ(error_of("def f():\n    \"\"\"doc\n    more\n"), "2:5: unterminated triple-quoted string literal (detected at line 4)");
}

TEST(Tokenize, CommentsAndBlankLinesProduceNoTokens) {
  EXPECT_EQ(located("# leading\n\nx = 1  # trailing\n   # indented comment\n\t\ny\n"),
            "x@3:1 =@3:3 1@3:5 NL@3:6 y@6:1 NL@6:2 END@7:1");
}

TEST(Tokenize, NewlineSitsRightAfterTheLineLastToken) {
  EXPECT_EQ(located("if x   # why\n"), "if@1:1 x@1:4 NL@1:5 END@2:1");
}

TEST(Tokenize, IndentAndDedentFollowNestedBlocks) {
  const char* source =
      "def f(a):\n"
      "    if a:\n"
      "        for i in a:\n"
      "            pass\n"
      "    return\n"
      "x\n";
  EXPECT_EQ(texts(source),
            "def f ( a ) : NL IN if a : NL IN for i in a : NL IN pass NL DE DE return NL DE x NL END");
  EXPECT_EQ(located("if a:\n  b\n    \nc\n"), "if@1:1 a@1:4 :@1:5 NL@1:6 IN@2:3 b@2:3 NL@2:4 DE@4:1 c@4:1 NL@4:2 END@5:1");
}

TEST(Tokenize, DedentsCloseEveryOpenBlockAtTheEnd) {
  EXPECT_EQ(texts("def f():\n  if a:\n    b"), "def f ( ) : NL IN if a : NL IN b NL DE DE END");
  EXPECT_EQ(located("def f():\n  if a:\n    b"), "def@1:1 f@1:5 (@1:6 )@1:7 :@1:8 NL@1:9 IN@2:3 if@2:3 a@2:6 :@2:7 NL@2:8 "
                                                  "IN@3:5 b@3:5 NL@3:6 DE@3:6 DE@3:6 END@3:6");
}

TEST(Tokenize, InconsistentDedentIsAnErrorAtTheLine) {
  EXPECT_EQ(error_of("def f():\n    if a:\n        b\n      c\n"), "4:7: unindent does not match any outer indentation level");
  EXPECT_EQ(error_of("def f():\n    b\n  c\n", 20), "22:3: unindent does not match any outer indentation level");
}

TEST(Tokenize, TabsIndentToTheNextMultipleOfEight) {
  // Columns in locations count a tab as one character; indentation widths count it to the next 8.
  EXPECT_EQ(located("def f():\n\tif a:\n\t\tb\n\tc\n"),
            "def@1:1 f@1:5 (@1:6 )@1:7 :@1:8 NL@1:9 IN@2:2 if@2:2 a@2:5 :@2:6 NL@2:7 IN@3:3 b@3:3 NL@3:4 "
            "DE@4:2 c@4:2 NL@4:3 DE@5:1 END@5:1");
  EXPECT_EQ(texts("if a:\n\tb\n\tif c:\n\t    d\n"), "if a : NL IN b NL if c : NL IN d NL DE DE END");
  // Python's TabError: indentation that compares differently when a tab counts as one column.
  EXPECT_EQ(error_of("if a:\n\tb\n        c\n"), "3:9: inconsistent use of tabs and spaces in indentation");
}

TEST(Tokenize, LinesJoinInsideBracketsKeepingRealLocations) {
  const char* source =
      "x = f(a,\n"
      "      b[1,\n"
      "  2],   # comment inside\n"
      "\n"
      "{c})\n"
      "y\n";
  EXPECT_EQ(located(source), "x@1:1 =@1:3 f@1:5 (@1:6 a@1:7 ,@1:8 b@2:7 [@2:8 1@2:9 ,@2:10 2@3:3 ]@3:4 ,@3:5 "
                             "{@5:1 c@5:2 }@5:3 )@5:4 NL@5:5 y@6:1 NL@6:2 END@7:1");
}

TEST(Tokenize, BackslashContinuesTheLogicalLine) {
  EXPECT_EQ(located("if a:\n    x = 1 + \\\n2\n    y\n"),
            "if@1:1 a@1:4 :@1:5 NL@1:6 IN@2:5 x@2:5 =@2:7 1@2:9 +@2:11 2@3:1 NL@3:2 y@4:5 NL@4:6 DE@5:1 END@5:1");
  EXPECT_EQ(error_of("x = 1 + \\ 2\n"), "1:9: unexpected character after line continuation character");
  EXPECT_EQ(error_of("x = 1 + \\"), "1:9: unexpected end of file after line continuation character");
}

TEST(Tokenize, BracketsMustMatch) {
  EXPECT_EQ(error_of("x = (a]\n"), "1:7: closing parenthesis ']' does not match opening parenthesis '('");
  EXPECT_EQ(error_of("x = a)\n"), "1:6: unmatched ')'");
  EXPECT_EQ(error_of("x = f(a,\n  [b\n"), "2:3: '[' was never closed");
}

TEST(Tokenize, NestedSourceUsesItsFirstLineAsTheBaseAndKeepsRealColumns) {
  const char* source =
      "    @jiasu.kernel\n"
      "    def k(x):\n"
      "        if x:\n"
      "            x = 1\n";
  EXPECT_EQ(located(source, 10),
            "@@10:5 jiasu@10:6 .@10:11 kernel@10:12 NL@10:18 def@11:5 k@11:9 (@11:10 x@11:11 )@11:12 :@11:13 "
            "NL@11:14 IN@12:9 if@12:9 x@12:12 :@12:13 NL@12:14 IN@13:13 x@13:13 =@13:15 1@13:17 NL@13:18 "
            "DE@14:1 DE@14:1 END@14:1");
  EXPECT_EQ(error_of("    def k(x):\n        x\n  y\n", 5), "7:3: unindent does not match any outer indentation level");
}

TEST(Tokenize, LocationsStartAtTheFirstLineNumber) {
  EXPECT_EQ(located("a\n\nb = c\n", 10), "a@10:1 NL@10:2 b@12:1 =@12:3 c@12:5 NL@12:6 END@13:1");
  try {
    lex("a\n  b = 0x\n", 10);
    FAIL() << "expected a CompileError";
  } catch (const CompileError& e) {
    EXPECT_EQ(e.line(), 11);
    EXPECT_EQ(e.column(), 7);
    EXPECT_EQ(e.file(), "k.py");
    EXPECT_EQ(std::string(e.what()), "k.py:11:7: error: invalid hexadecimal literal\n      b = 0x\n          ^");
  }
}

TEST(Tokenize, WindowsLineEndingsAreNewlines) {
  EXPECT_EQ(located("if a:\r\n    b\r\nc\r\n"), "if@1:1 a@1:4 :@1:5 NL@1:6 IN@2:5 b@2:5 NL@2:6 DE@3:1 c@3:1 NL@3:2 END@4:1");
}

TEST(Tokenize, ALoneCarriageReturnEndsALineAsInPython) {
  EXPECT_EQ(located("if a:\r    b\rc"), "if@1:1 a@1:4 :@1:5 NL@1:6 IN@2:5 b@2:5 NL@2:6 DE@3:1 c@3:1 NL@3:2 END@3:2");
  // a line of carriage returns and a comment is blank lines, not a statement without tokens
  EXPECT_EQ(located("a\n  \r\r  # c\rb\n"), "a@1:1 NL@1:2 b@5:1 NL@5:2 END@6:1");
  EXPECT_EQ(error_of("x = 'abc\ry = 1"), "1:5: unterminated string literal (detected at line 1)");
  SourceText source{"a = 1\rb = (\r", "k.py", 1};
  EXPECT_EQ(source.line_text(2), "b = (");
  EXPECT_EQ(SourceLines(source).text(2), "b = (");
  EXPECT_EQ(error_of("a = 1\rb = (\r"), "2:5: '(' was never closed");
}

TEST(Tokenize, ABackslashContinuedIntoABlankLineIsBlank) {
  // As in Python: neither a statement nor a change of indentation.
  EXPECT_EQ(texts("if a:\n    \\\n\n    b\n"), "if a : NL IN b NL DE END");
  EXPECT_EQ(texts("if a:\n    b\n  \\\n\n    c\n"), "if a : NL IN b NL c NL DE END");
  EXPECT_EQ(texts("if a:\n    b\n\\\n\n    c\n"), "if a : NL IN b NL c NL DE END");
  EXPECT_EQ(texts("if a:\n    b\n    \\\n  # c\n    c\n"), "if a : NL IN b NL c NL DE END");
  EXPECT_EQ(located("a \\\n + b\n"), "a@1:1 +@2:2 b@2:4 NL@2:5 END@3:1");
  EXPECT_EQ(error_of("a = 1\n\\"), "2:1: unexpected end of file after line continuation character");
}

TEST(Tokenize, NullBytesAreRefusedWhereTheyAre) {
  EXPECT_EQ(error_of(std::string("a = 1\n# x\0y\n", 13)), "2:4: source code cannot contain null bytes");
  EXPECT_EQ(error_of(std::string("\0", 1)), "1:1: source code cannot contain null bytes");
}

TEST(Tokenize, EmptySourceIsJustTheEnd) {
  EXPECT_EQ(texts(""), "END");
  EXPECT_EQ(texts("\n  # only a comment\n\n"), "END");
}

}  // namespace
}  // namespace jiasu::fe
