// Internals of parse(), shared by its source files (not part of the front end's interface):
//   parse.cpp       parse(), the function definition and its statements
//   parse_expr.cpp  expressions
//
// Recursive descent over tokenize()'s tokens, following Python's grammar for the kernel subset. Python
// syntax outside the subset is recognised far enough to name it in the error.
//
// Depth: no tree deeper than the limits of ast.hpp is ever built. An expression node's depth and nesting
// are set when it is complete (finish()), which fails at the node that first gets too deep in reading
// order (a long sum fails at the + that makes it too long). The descent's own recursion, which runs ahead
// of any complete node (`- - - a`, `a ** b ** c`, `x if c else y if d else z`, brackets), is bounded by
// the same nesting limit through a DepthGuard, and so are blocks and elif branches.
//
// Locations: a statement is at its first token. An expression with an operator is at that operator
// (Binary, Unary, BoolOp: the first 'and'/'or', Compare: the first comparison, IfExp: 'if'), a trailer
// at its trailer (Attribute: the attribute name, Subscript: '[', Call: '('), a parenthesised tuple at
// '(', anything else at its first character. The operands carry their own locations.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "frontend/ast.hpp"
#include "frontend/token.hpp"

namespace jiasu::fe::parsing {

bool is_keyword(const Token& token);                    // Python's keywords, which are not names (parse_expr.cpp)
std::string unsupported(const std::string& construct);  // "'with' is not supported in jiasu kernels" (parse.cpp)

// An operator's spelling and its Op: the tables of binary, comparison and augmented-assignment operators.
struct BinaryOp {
  const char* text;
  Op op;
};

inline ExprPtr make_expr(ExprKind kind, SourceLoc loc) { return std::make_unique<Expr>(kind, loc); }

class Parser {
 public:
  explicit Parser(const SourceText& source) : source_(source), tokens_(tokenize(source)) {}

  std::unique_ptr<Function> parse_source();  // parse.cpp

 private:
  const SourceText& source_;
  std::vector<Token> tokens_;
  size_t index_ = 0;
  // Strings are values only in a raise statement (an exception's message) and in the arguments of print().
  bool strings_allowed_ = false;
  int loop_depth_ = 0;  // for 'break'/'continue' outside a loop, which Python rejects at compile time
  int expression_depth_ = 0;  // the descent's recursion into subexpressions
  int block_depth_ = 0;       // blocks entered, each elif counting as one

  // One more level of `depth`, refused past `limit`.
  class DepthGuard {
   public:
    DepthGuard(const Parser& parser, int& depth, int limit, SourceLoc loc, const std::string& (*message)())
        : depth_(depth) {
      if (++depth_ > limit) parser.fail(loc, message());
    }
    DepthGuard(Parser& parser, SourceLoc loc)
        : DepthGuard(parser, parser.expression_depth_, kMaxExpressionNesting, loc, too_nested_expression) {}
    ~DepthGuard() { --depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    int& depth_;
  };

  static const std::string& too_nested_expression() {
    static const std::string message =
        "expression too deeply nested (more than " + std::to_string(kMaxExpressionNesting) + " levels)";
    return message;
  }
  static const std::string& too_deep_expression() {
    static const std::string message = "expression too deeply nested (more than " + std::to_string(kMaxExpressionDepth) +
                                       " levels, each operator of a chain such as a + b + c counting as one)";
    return message;
  }
  static const std::string& too_deep_blocks() {
    static const std::string message = "blocks too deeply nested (more than " + std::to_string(kMaxBlockDepth) +
                                       " levels, each elif counting as one): split the if/elif chain";
    return message;
  }
  DepthGuard block_guard(SourceLoc header) { return DepthGuard(*this, block_depth_, kMaxBlockDepth, header, too_deep_blocks); }

  // A composite node is complete: one level above its deepest child (a binary operator's left operand
  // counts at its own level of nesting).
  ExprPtr finish(ExprPtr e) const {
    int depth = 0, nesting = 0;
    auto below = [&](const Expr& child) {
      depth = std::max(depth, child.depth);
      nesting = std::max(nesting, child.nesting);
    };
    for (const ExprPtr& arg : e->args) below(*arg);
    for (const auto& keyword : e->keywords) below(*keyword.second);
    e->depth = depth + 1;
    e->nesting = e->kind == ExprKind::Binary ? std::max(e->args[0]->nesting, e->args[1]->nesting + 1) : nesting + 1;
    if (e->nesting > kMaxExpressionNesting) fail(e->loc, too_nested_expression());
    if (e->depth > kMaxExpressionDepth) fail(e->loc, too_deep_expression());
    return e;
  }

  // --- token access ---------------------------------------------------------------------------------

  const Token& peek(size_t ahead = 0) const { return tokens_[std::min(index_ + ahead, tokens_.size() - 1)]; }
  const Token& next() {
    const Token& token = tokens_[index_];
    if (index_ + 1 < tokens_.size()) ++index_;
    return token;
  }
  // The first characters decide most comparisons, which are most of the parser's time.
  bool at_op(const char* op, size_t ahead = 0) const {
    const Token& token = peek(ahead);
    return token.kind == TokenKind::Op && token.text[0] == op[0] && token.text == op;
  }
  bool at_keyword(const char* keyword, size_t ahead = 0) const {
    const Token& token = peek(ahead);
    return token.kind == TokenKind::Name && token.text[0] == keyword[0] && token.text == keyword;
  }
  bool at_name(size_t ahead = 0) const { return peek(ahead).kind == TokenKind::Name && !is_keyword(peek(ahead)); }
  bool accept_op(const char* op) {
    if (!at_op(op)) return false;
    next();
    return true;
  }
  const Token& expect_op(const char* op, const std::string& message) {
    if (!at_op(op)) fail(peek(), message);
    return next();
  }
  const Token& expect_op(const char* op) { return expect_op(op, std::string("expected '") + op + "'"); }
  const Token& expect_name(const std::string& message) {
    if (!at_name()) fail(peek(), message);
    return next();
  }
  void expect_keyword(const char* keyword) {
    if (!at_keyword(keyword)) fail(peek(), std::string("expected '") + keyword + "'");
    next();
  }

  [[noreturn]] void fail(SourceLoc loc, const std::string& message) const { throw CompileError(source_, loc, message); }
  [[noreturn]] void fail(const Token& token, const std::string& message) const { fail(token.loc, message); }

  // The function definition and its statements (parse.cpp)
  std::string parse_decorator();
  void parse_def(Function& function);
  void parse_params(Function& function);
  std::vector<StmtPtr> parse_block(const std::string& header, SourceLoc header_loc, bool function_body = false);
  bool skip_docstring();
  void parse_statement(std::vector<StmtPtr>& out);
  StmtPtr parse_nested_def();
  bool is_soft_keyword_statement() const;
  void parse_simple_statements(std::vector<StmtPtr>& out);
  bool at_statement_end() const;
  StmtPtr parse_simple_statement();
  void check_target(const Expr& target, bool inside_tuple, bool may_nest = false);
  StmtPtr parse_if();
  void parse_else(Stmt& stmt);
  StmtPtr parse_for();
  StmtPtr parse_while();
  void parse_loop_body(Stmt& stmt, const std::string& header, SourceLoc header_loc);
  ExprPtr parse_target_list();

  // Expressions (parse_expr.cpp)
  bool can_start_expression() const;
  ExprPtr parse_tuple_expression();
  ExprPtr parse_expression();
  ExprPtr parse_or();
  ExprPtr parse_and();
  ExprPtr parse_bool_op(const char* keyword, Op op, ExprPtr (Parser::*parse_operand)());
  ExprPtr parse_not();
  Op accept_comparison_op();
  ExprPtr parse_comparison();
  ExprPtr parse_binary(size_t level);
  ExprPtr parse_factor();
  ExprPtr parse_power();
  ExprPtr parse_primary();
  void reject_comprehension() const;
  ExprPtr parse_call(ExprPtr callee);
  ExprPtr parse_field_name();
  ExprPtr parse_index();
  ExprPtr parse_subscript(ExprPtr value);
  ExprPtr parse_atom();
  ExprPtr parse_name_atom();
  ExprPtr parse_parenthesised();
  ExprPtr int_literal(const Token& token);
};

}  // namespace jiasu::fe::parsing
