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
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <unordered_set>

#include "frontend/ast.hpp"
#include "frontend/token.hpp"

namespace jiasu::fe {
namespace {

bool is_keyword(const Token& token) {
  static const std::unordered_set<std::string> keywords = {
      "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def",
      "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is",
      "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield"};
  return token.kind == TokenKind::Name && keywords.count(token.text) > 0;
}

std::string unsupported(const std::string& construct) {
  return "'" + construct + "' is not supported in jiasu kernels";
}

const char* const kFunctionHint = " (write a @jiasu.func at module level instead)";
const char* const kComprehension = "comprehensions and generator expressions are not supported in jiasu kernels";

// Binary operator levels, loosest first; each is left-associative. '**' is handled in parse_power.
struct BinaryOp {
  const char* text;
  Op op;
};
const std::vector<std::vector<BinaryOp>> kBinaryLevels = {
    {{"|", Op::BitOr}},
    {{"^", Op::BitXor}},
    {{"&", Op::BitAnd}},
    {{"<<", Op::LShift}, {">>", Op::RShift}},
    {{"+", Op::Add}, {"-", Op::Sub}},
    {{"*", Op::Mul}, {"/", Op::Div}, {"//", Op::FloorDiv}, {"%", Op::Mod}, {"@", Op::MatMul}},
};

const BinaryOp kAugmentedOps[] = {
    {"+=", Op::Add},     {"-=", Op::Sub},      {"*=", Op::Mul},      {"/=", Op::Div},    {"//=", Op::FloorDiv},
    {"%=", Op::Mod},     {"**=", Op::Pow},     {"<<=", Op::LShift},  {">>=", Op::RShift}, {"&=", Op::BitAnd},
    {"|=", Op::BitOr},   {"^=", Op::BitXor},   {"@=", Op::MatMul},
};

const BinaryOp kComparisonOps[] = {
    {"==", Op::Eq}, {"!=", Op::NotEq}, {"<", Op::Lt}, {"<=", Op::LtE}, {">", Op::Gt}, {">=", Op::GtE},
};

ExprPtr make_expr(ExprKind kind, SourceLoc loc) { return std::make_unique<Expr>(kind, loc); }

int code_points(const std::string& text) {
  int count = 0;
  for (char c : text) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return count;
}

class Parser {
 public:
  explicit Parser(const SourceText& source) : source_(source), tokens_(tokenize(source)) {}

  std::unique_ptr<Function> parse_source() {
    auto function = std::make_unique<Function>();
    while (at_op("@")) function->decorators.push_back(parse_decorator());
    if (!at_keyword("def")) {
      if (at_keyword("class") || at_keyword("async")) fail(peek(), unsupported(peek().text));
      fail(peek(), "expected a function definition ('def')");
    }
    parse_def(*function);
    if (peek().kind != TokenKind::End) fail(peek(), "unexpected code after the function definition");
    return function;
  }

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

  // --- the function ---------------------------------------------------------------------------------

  // A decorator's text as written, one line; the Python layer has already run it, so it is not parsed.
  std::string parse_decorator() {
    next();  // '@'
    if (peek().kind == TokenKind::Newline) fail(peek(), "expected a decorator expression after '@'");
    std::string text;
    const Token* previous = nullptr;
    for (; peek().kind != TokenKind::Newline; previous = &next()) {
      const Token& token = peek();
      if (previous && needs_space_between(*previous, token)) text += ' ';
      text += token.text;
    }
    next();  // Newline
    return text;
  }

  // Keeps spacing as written on one line; across a bracket's line break, a space unless next to a bracket.
  static bool needs_space_between(const Token& a, const Token& b) {
    if (a.loc.line == b.loc.line) return b.loc.column > a.loc.column + code_points(a.text);
    return !(a.text == "(" || a.text == "[" || a.text == "{" || b.text == ")" || b.text == "]" || b.text == "}");
  }

  void parse_def(Function& function) {
    const Token& def = next();
    function.loc = def.loc;
    function.name = expect_name("expected a function name after 'def'").text;
    expect_op("(");
    parse_params(function);
    if (at_op("->")) fail(peek(), "return annotations are not supported in jiasu kernels");
    expect_op(":");
    function.body = parse_block("function definition", def.loc, /*function_body=*/true);
  }

  void parse_params(Function& function) {
    std::set<std::string> seen;
    while (!at_op(")")) {
      const Token& token = peek();
      const bool variadic = accept_op("*");
      if (variadic && !at_name()) fail(token, "keyword-only parameters ('*') are not supported in jiasu kernels");
      if (at_op("**")) fail(token, "keyword parameters ('**') are not supported in jiasu kernels");
      if (at_op("/")) fail(token, "positional-only parameters ('/') are not supported in jiasu kernels");
      const Token& name = expect_name("expected a parameter name");
      if (at_op(":")) fail(peek(), "parameter annotations are not supported in jiasu kernels");
      if (at_op("=")) fail(peek(), "default parameter values are not supported in jiasu kernels");
      if (!seen.insert(name.text).second)
        fail(name, "duplicate parameter '" + name.text + "' in function definition");
      function.params.push_back({name.text, name.loc, Type(), false, false, variadic});
      if (!accept_op(",")) break;
      if (variadic && !at_op(")"))
        fail(peek(), "keyword-only parameters (after '*" + name.text + "') are not supported in jiasu kernels");
    }
    expect_op(")", "expected ',' or ')'");
  }

  // --- statements -----------------------------------------------------------------------------------

  // The block after a header's ':': statements on the same line, or an indented block. `header` names
  // the statement for the message when the indented block is missing, as Python does.
  std::vector<StmtPtr> parse_block(const std::string& header, SourceLoc header_loc, bool function_body = false) {
    DepthGuard guard = block_guard(header_loc);
    std::vector<StmtPtr> body;
    if (peek().kind != TokenKind::Newline) {
      if (!(function_body && skip_docstring())) parse_simple_statements(body);
      return body;
    }
    next();
    if (peek().kind != TokenKind::Indent)
      fail(peek(), "expected an indented block after " + header + " on line " + std::to_string(header_loc.line));
    next();
    if (function_body) skip_docstring();
    while (peek().kind != TokenKind::Dedent && peek().kind != TokenKind::End) parse_statement(body);
    next();  // Dedent
    return body;
  }

  // A string-only first statement is the docstring: no code.
  bool skip_docstring() {
    size_t after = 0;
    while (peek(after).kind == TokenKind::String) ++after;
    if (after == 0 || peek(after).kind != TokenKind::Newline) return false;
    index_ += after + 1;
    return true;
  }

  void parse_statement(std::vector<StmtPtr>& out) {
    const Token& token = peek();
    if (token.kind == TokenKind::Indent) fail(token, "unexpected indent");
    if (at_keyword("if")) return out.push_back(parse_if());
    if (at_keyword("for")) return out.push_back(parse_for());
    if (at_keyword("while")) return out.push_back(parse_while());
    if (at_keyword("def")) return out.push_back(parse_nested_def());
    for (const char* keyword : {"class", "with", "try", "async"})
      if (at_keyword(keyword)) fail(token, unsupported(keyword));
    if (is_soft_keyword_statement()) fail(token, unsupported(token.text));
    parse_simple_statements(out);
  }

  // A function defined in a function's body: check() makes it a device function of its own.
  StmtPtr parse_nested_def() {
    auto stmt = std::make_unique<Stmt>(StmtKind::Def, peek().loc);
    stmt->function = std::make_unique<Function>();
    const int enclosing_loops = loop_depth_;
    loop_depth_ = 0;  // break and continue cannot leave a function
    parse_def(*stmt->function);
    loop_depth_ = enclosing_loops;
    return stmt;
  }

  // `match subject:` and `type X = ...` (soft keywords: both words are ordinary names elsewhere).
  bool is_soft_keyword_statement() const {
    if (at_keyword("type")) return at_name(1) && (at_op("=", 2) || at_op("[", 2));
    if (!at_keyword("match")) return false;
    size_t end = 1;
    while (peek(end).kind != TokenKind::Newline && peek(end).kind != TokenKind::End) ++end;
    return end > 1 && at_op(":", end - 1);
  }

  // simple_stmt (';' simple_stmt)* [';'] NEWLINE
  void parse_simple_statements(std::vector<StmtPtr>& out) {
    for (;;) {
      out.push_back(parse_simple_statement());
      if (!accept_op(";") || peek().kind == TokenKind::Newline) break;
    }
    if (peek().kind != TokenKind::Newline) fail(peek(), "invalid syntax");
    next();
  }

  bool at_statement_end() const { return peek().kind == TokenKind::Newline || at_op(";"); }

  StmtPtr parse_simple_statement() {
    const Token& token = peek();
    SourceLoc loc = token.loc;
    for (const char* keyword : {"import", "from", "global", "nonlocal", "del", "assert", "yield", "await"})
      if (at_keyword(keyword)) fail(token, unsupported(keyword));
    if (at_keyword("raise")) {
      next();
      if (at_statement_end()) fail(token, "a bare 'raise' (re-raising) is not supported in jiasu kernels");
      auto stmt = std::make_unique<Stmt>(StmtKind::Raise, loc);
      strings_allowed_ = true;
      stmt->value = parse_expression();
      strings_allowed_ = false;
      if (at_keyword("from")) fail(peek(), unsupported("raise ... from"));
      return stmt;
    }
    if (at_keyword("pass") || at_keyword("break") || at_keyword("continue")) {
      next();
      if (token.text == "break" && loop_depth_ == 0) fail(token, "'break' outside loop");
      if (token.text == "continue" && loop_depth_ == 0) fail(token, "'continue' not properly in loop");
      StmtKind kind = token.text == "pass"    ? StmtKind::Pass
                      : token.text == "break" ? StmtKind::Break
                                              : StmtKind::Continue;
      return std::make_unique<Stmt>(kind, loc);
    }
    if (at_keyword("return")) {
      next();
      auto stmt = std::make_unique<Stmt>(StmtKind::Return, loc);
      if (!at_statement_end()) stmt->value = parse_tuple_expression();
      return stmt;
    }

    ExprPtr first = parse_tuple_expression();
    if (at_op("=")) {
      auto stmt = std::make_unique<Stmt>(StmtKind::Assign, loc);
      std::vector<ExprPtr> chain;
      chain.push_back(std::move(first));
      while (accept_op("=")) chain.push_back(parse_tuple_expression());
      stmt->value = std::move(chain.back());
      chain.pop_back();
      for (ExprPtr& target : chain) {
        check_target(*target, false);
        stmt->targets.push_back(std::move(target));
      }
      return stmt;
    }
    for (const BinaryOp& augmented : kAugmentedOps) {
      if (!at_op(augmented.text)) continue;
      if (first->kind == ExprKind::Tuple)
        fail(start_of(*first), "a tuple cannot be the target of an augmented assignment");
      check_target(*first, false);
      next();
      auto stmt = std::make_unique<Stmt>(StmtKind::AugAssign, loc);
      stmt->op = augmented.op;
      stmt->targets.push_back(std::move(first));
      stmt->value = parse_tuple_expression();
      return stmt;
    }
    if (at_op(":")) fail(peek(), "variable annotations are not supported in jiasu kernels");
    auto stmt = std::make_unique<Stmt>(StmtKind::Expr, loc);
    stmt->value = std::move(first);
    return stmt;
  }

  // Targets: a name, a subscript, or a tuple of those (one level: `i, j = jiasu.grid(2)`; a for loop's may
  // nest, as in `for i, (x, y) in enumerate(zip(a, b))`, which check() takes apart item by item).
  void check_target(const Expr& target, bool inside_tuple, bool may_nest = false) {
    SourceLoc loc = start_of(target);
    switch (target.kind) {
      case ExprKind::Name:
      case ExprKind::Subscript:
        return;
      case ExprKind::Tuple:
        if (inside_tuple && !may_nest) fail(loc, "nested tuple targets are not supported in jiasu kernels");
        if (target.args.empty()) fail(loc, "cannot assign to an empty tuple");
        for (const ExprPtr& item : target.args) check_target(*item, true, may_nest);
        return;
      case ExprKind::Attribute:  // a record's field (check() refuses any other)
        return;
      case ExprKind::Call:
        fail(loc, "cannot assign to a function call");
      case ExprKind::Bool:
        fail(loc, target.int_value ? "cannot assign to True" : "cannot assign to False");
      case ExprKind::None:
        fail(loc, "cannot assign to None");
      case ExprKind::Int:
      case ExprKind::Float:
      case ExprKind::String:
        fail(loc, "cannot assign to a literal");
      default:
        fail(loc, "cannot assign to an expression");
    }
  }

  // if/elif: an elif is an If alone in the orelse of the one before.
  StmtPtr parse_if() {
    const Token& keyword = next();
    auto stmt = std::make_unique<Stmt>(StmtKind::If, keyword.loc);
    stmt->test = parse_expression();
    expect_op(":");
    stmt->body = parse_block("'" + keyword.text + "' statement", keyword.loc);
    if (at_keyword("elif")) {
      DepthGuard guard = block_guard(peek().loc);  // the elif is an If in the else block of this one
      stmt->orelse.push_back(parse_if());
    } else if (at_keyword("else")) {
      parse_else(*stmt);
    }
    return stmt;
  }

  void parse_else(Stmt& stmt) {
    const Token& keyword = next();
    expect_op(":");
    stmt.orelse = parse_block("'else' statement", keyword.loc);
  }

  StmtPtr parse_for() {
    const Token& keyword = next();
    auto stmt = std::make_unique<Stmt>(StmtKind::For, keyword.loc);
    ExprPtr target = parse_target_list();
    check_target(*target, false, true);
    stmt->targets.push_back(std::move(target));
    expect_keyword("in");
    stmt->value = parse_tuple_expression();
    expect_op(":");
    parse_loop_body(*stmt, "'for' statement", keyword.loc);
    return stmt;
  }

  StmtPtr parse_while() {
    const Token& keyword = next();
    auto stmt = std::make_unique<Stmt>(StmtKind::While, keyword.loc);
    stmt->test = parse_expression();
    expect_op(":");
    parse_loop_body(*stmt, "'while' statement", keyword.loc);
    return stmt;
  }

  // The body counts as inside the loop; the else clause does not.
  void parse_loop_body(Stmt& stmt, const std::string& header, SourceLoc header_loc) {
    ++loop_depth_;
    stmt.body = parse_block(header, header_loc);
    --loop_depth_;
    if (at_keyword("else")) parse_else(stmt);
  }

  // A for loop's target list: operands above comparisons, so 'in' ends it.
  ExprPtr parse_target_list() {
    ExprPtr first = parse_binary(0);
    if (!at_op(",")) return first;
    auto tuple = make_expr(ExprKind::Tuple, start_of(*first));
    tuple->args.push_back(std::move(first));
    while (accept_op(",") && !at_keyword("in")) tuple->args.push_back(parse_binary(0));
    return finish(std::move(tuple));
  }

  // --- expressions ----------------------------------------------------------------------------------

  bool can_start_expression() const {
    const Token& token = peek();
    switch (token.kind) {
      case TokenKind::Int:
      case TokenKind::Float:
      case TokenKind::String:
        return true;
      case TokenKind::Name:
        return !is_keyword(token) || token.text == "True" || token.text == "False" || token.text == "None" ||
               token.text == "not" || token.text == "lambda" || token.text == "await" || token.text == "yield";
      case TokenKind::Op:
        for (const char* op : {"(", "[", "{", "-", "+", "~", "*", "..."})
          if (token.text == op) return true;
        return false;
      default:
        return false;
    }
  }

  // An expression, or a tuple of them without parentheses (`return a, b`, `x = 1, 2`).
  ExprPtr parse_tuple_expression() {
    ExprPtr first = parse_expression();
    if (!at_op(",")) return first;
    auto tuple = make_expr(ExprKind::Tuple, start_of(*first));
    tuple->args.push_back(std::move(first));
    while (accept_op(",") && can_start_expression()) tuple->args.push_back(parse_expression());
    return finish(std::move(tuple));
  }

  // expression: disjunction ['if' disjunction 'else' expression]
  ExprPtr parse_expression() {
    DepthGuard guard(*this, peek().loc);
    if (at_keyword("lambda")) fail(peek(), unsupported("lambda") + kFunctionHint);
    ExprPtr body = parse_or();
    if (at_keyword("if")) {
      const Token& keyword = next();
      auto conditional = make_expr(ExprKind::IfExp, keyword.loc);
      conditional->args.push_back(parse_or());
      if (!at_keyword("else")) fail(peek(), "expected 'else' after 'if' expression");
      next();
      conditional->args.push_back(std::move(body));
      conditional->args.push_back(parse_expression());
      body = finish(std::move(conditional));
    }
    if (at_op(":=")) fail(peek(), "assignment expressions (':=') are not supported in jiasu kernels");
    return body;
  }

  ExprPtr parse_or() { return parse_bool_op("or", Op::Or, &Parser::parse_and); }
  ExprPtr parse_and() { return parse_bool_op("and", Op::And, &Parser::parse_not); }

  // `a or b or c` is one BoolOp with three operands, as in Python's tree.
  ExprPtr parse_bool_op(const char* keyword, Op op, ExprPtr (Parser::*parse_operand)()) {
    ExprPtr first = (this->*parse_operand)();
    if (!at_keyword(keyword)) return first;
    auto bool_op = make_expr(ExprKind::BoolOp, peek().loc);
    bool_op->op = op;
    bool_op->args.push_back(std::move(first));
    while (at_keyword(keyword)) {
      next();
      bool_op->args.push_back((this->*parse_operand)());
    }
    return finish(std::move(bool_op));
  }

  ExprPtr parse_not() {
    if (!at_keyword("not")) return parse_comparison();
    DepthGuard guard(*this, peek().loc);
    auto unary = make_expr(ExprKind::Unary, next().loc);
    unary->op = Op::Not;
    unary->args.push_back(parse_not());
    return finish(std::move(unary));
  }

  // The comparison operator at the current token (consumed), or Op::None.
  Op accept_comparison_op() {
    for (const BinaryOp& comparison : kComparisonOps)
      if (accept_op(comparison.text)) return comparison.op;
    if (at_keyword("in")) return next(), Op::In;
    if (at_keyword("not") && at_keyword("in", 1)) return next(), next(), Op::NotIn;
    if (at_keyword("is")) {
      next();
      if (!at_keyword("not")) return Op::Is;
      next();
      return Op::IsNot;
    }
    return Op::None;
  }

  // `a < b <= c` is one Compare with operands a, b, c and operators <, <=.
  ExprPtr parse_comparison() {
    ExprPtr first = parse_binary(0);
    SourceLoc loc = peek().loc;
    Op op = accept_comparison_op();
    if (op == Op::None) return first;
    auto compare = make_expr(ExprKind::Compare, loc);
    compare->args.push_back(std::move(first));
    do {
      compare->ops.push_back(op);
      compare->args.push_back(parse_binary(0));
    } while ((op = accept_comparison_op()) != Op::None);
    return finish(std::move(compare));
  }

  ExprPtr parse_binary(size_t level) {
    if (level == kBinaryLevels.size()) return parse_factor();
    ExprPtr left = parse_binary(level + 1);
    for (;;) {
      const BinaryOp* matched = nullptr;
      for (const BinaryOp& candidate : kBinaryLevels[level])
        if (at_op(candidate.text)) matched = &candidate;
      if (!matched) return left;
      auto binary = make_expr(ExprKind::Binary, next().loc);
      binary->op = matched->op;
      binary->args.push_back(std::move(left));
      binary->args.push_back(parse_binary(level + 1));
      left = finish(std::move(binary));
    }
  }

  // factor: ('+' | '-' | '~') factor | power
  ExprPtr parse_factor() {
    Op op = at_op("+") ? Op::UAdd : at_op("-") ? Op::USub : at_op("~") ? Op::Invert : Op::None;
    if (op == Op::None) return parse_power();
    DepthGuard guard(*this, peek().loc);
    auto unary = make_expr(ExprKind::Unary, next().loc);
    unary->op = op;
    unary->args.push_back(parse_factor());
    return finish(std::move(unary));
  }

  // power: primary ['**' factor], so -x**2 is -(x**2), 2**-1 works and a**b**c is a**(b**c).
  ExprPtr parse_power() {
    ExprPtr base = parse_primary();
    if (!at_op("**")) return base;
    DepthGuard guard(*this, peek().loc);
    auto power = make_expr(ExprKind::Binary, next().loc);
    power->op = Op::Pow;
    power->args.push_back(std::move(base));
    power->args.push_back(parse_factor());
    return finish(std::move(power));
  }

  ExprPtr parse_primary() {
    ExprPtr value = parse_atom();
    for (;;) {
      if (accept_op(".")) {
        const Token& name = expect_name("expected an attribute name after '.'");
        auto attribute = make_expr(ExprKind::Attribute, name.loc);
        attribute->name = name.text;
        attribute->args.push_back(std::move(value));
        value = finish(std::move(attribute));
      } else if (at_op("(")) {
        value = parse_call(std::move(value));
      } else if (at_op("[")) {
        value = parse_subscript(std::move(value));
      } else {
        return value;
      }
    }
  }

  void reject_comprehension() const {
    if (at_keyword("for") || at_keyword("async")) fail(peek(), kComprehension);
  }

  // callee(positional..., name=value...): the callee is args[0].
  ExprPtr parse_call(ExprPtr callee) {
    auto call = make_expr(ExprKind::Call, next().loc);
    const bool strings_were_allowed = strings_allowed_;
    if (callee->kind == ExprKind::Name && callee->name == "print") strings_allowed_ = true;  // check() says which
    call->args.push_back(std::move(callee));
    while (!at_op(")")) {
      const Token& token = peek();
      if (at_op("**")) fail(token, "argument unpacking ('**') is not supported in jiasu kernels");
      if (accept_op("*")) {
        call->args.push_back(parse_expression());
        call->args.back()->unpacked = true;
      } else if (at_name() && at_op("=", 1)) {
        next(), next();
        for (const auto& keyword : call->keywords)
          if (keyword.first == token.text) fail(token, "keyword argument repeated: " + token.text);
        call->keywords.emplace_back(token.text, parse_expression());
      } else {
        ExprPtr argument = parse_expression();
        reject_comprehension();
        if (!call->keywords.empty()) fail(token, "positional argument follows keyword argument");
        call->args.push_back(std::move(argument));
      }
      if (!accept_op(",")) break;
    }
    expect_op(")", "expected ',' or ')'");
    strings_allowed_ = strings_were_allowed;
    return finish(std::move(call));
  }

  // r['name']: a record's field by name, a String expression holding the name (the only strings kernels take).
  ExprPtr parse_field_name() {
    const Token& token = peek();
    const std::string& text = token.text;
    const char quote = text.front();
    if ((quote != '\'' && quote != '"') || text.size() < 2 || text.back() != quote ||
        text.find('\\') != std::string::npos || text.compare(0, 3, std::string(3, quote)) == 0)
      fail(token, "a field name is a plain string literal, such as r['x']");
    auto name = make_expr(ExprKind::String, next().loc);
    name->name = text.substr(1, text.size() - 2);
    if (!at_op("]")) fail(peek(), "expected ']' after a field name");
    return name;
  }

  // One index of a subscript: an expression, or a slice `[start]:[stop][:step]`, which becomes the call
  // slice(start, stop, step) with None for a part left out (Python's meaning of a[1:3] is a[slice(1, 3)]).
  ExprPtr parse_index() {
    const SourceLoc loc = peek().loc;
    if (peek().kind == TokenKind::String && (peek().text[0] == '\'' || peek().text[0] == '"')) return parse_field_name();
    ExprPtr start;
    if (!at_op(":")) {
      start = parse_expression();
      if (!at_op(":")) return start;
    }
    auto part = [&](ExprPtr given, SourceLoc at) { return given ? std::move(given) : make_expr(ExprKind::None, at); };
    const SourceLoc colon = next().loc;
    ExprPtr stop, step;
    if (!at_op("]") && !at_op(",") && !at_op(":")) stop = parse_expression();
    if (accept_op(":") && !at_op("]") && !at_op(",")) step = parse_expression();
    auto slice = make_expr(ExprKind::Call, start ? start->loc : loc);
    auto callee = make_expr(ExprKind::Name, colon);
    callee->name = "slice";
    slice->args.push_back(std::move(callee));
    slice->args.push_back(part(std::move(start), loc));
    slice->args.push_back(part(std::move(stop), colon));
    slice->args.push_back(part(std::move(step), colon));
    return finish(std::move(slice));
  }

  // value[i, j, ...]: the value is args[0], then one argument per index. a[(i, j)] means a[i, j].
  ExprPtr parse_subscript(ExprPtr value) {
    auto subscript = make_expr(ExprKind::Subscript, next().loc);
    subscript->args.push_back(std::move(value));
    if (at_op("]")) fail(peek(), "expected an index");
    do {
      if (at_op("]")) break;  // a[i,] is a[i]
      subscript->args.push_back(parse_index());
    } while (accept_op(","));
    expect_op("]", "expected ',' or ']'");
    if (subscript->args.size() == 2 && subscript->args[1]->kind == ExprKind::Tuple) {
      ExprPtr index = std::move(subscript->args[1]);
      subscript->args.pop_back();
      for (ExprPtr& item : index->args) subscript->args.push_back(std::move(item));
    }
    return finish(std::move(subscript));
  }

  ExprPtr parse_atom() {
    const Token& token = peek();
    switch (token.kind) {
      case TokenKind::Int:
        return int_literal(next());
      case TokenKind::Float: {
        auto literal = make_expr(ExprKind::Float, next().loc);
        std::string text = token.text;
        literal->imaginary = text.back() == 'j' || text.back() == 'J';
        if (literal->imaginary) text.pop_back();
        literal->float_value = float_literal_value(text);
        return literal;
      }
      case TokenKind::String: {
        if (token.text.find_first_of("fF") < token.text.find_first_of("'\""))
          fail(token, "f-strings are not supported in jiasu kernels");
        if (!strings_allowed_) fail(token, "strings are not supported in jiasu kernels");
        auto literal = make_expr(ExprKind::String, token.loc);  // a message: check() says where it may be
        while (peek().kind == TokenKind::String) literal->name += string_value(next().text);
        return literal;
      }
      case TokenKind::Name:
        return parse_name_atom();
      case TokenKind::Op:
        if (token.text == "(") return parse_parenthesised();
        if (token.text == "[")
          fail(token, "list displays are not supported in jiasu kernels (use a tuple, or jiasu.local.array)");
        if (token.text == "{") fail(token, "dict and set displays are not supported in jiasu kernels");
        if (token.text == "...") fail(token, "'...' (Ellipsis) is not supported in jiasu kernels");
        if (token.text == "*") fail(token, "starred expressions ('*') are not supported in jiasu kernels");
        fail(token, "expected an expression");
      default:
        fail(token, "expected an expression");
    }
  }

  ExprPtr parse_name_atom() {
    const Token& token = next();
    if (!is_keyword(token)) {
      auto name = make_expr(ExprKind::Name, token.loc);
      name->name = token.text;
      return name;
    }
    if (token.text == "True" || token.text == "False") {
      auto literal = make_expr(ExprKind::Bool, token.loc);
      literal->int_value = token.text == "True";
      return literal;
    }
    if (token.text == "None") return make_expr(ExprKind::None, token.loc);
    if (token.text == "await" || token.text == "yield") fail(token, unsupported(token.text));
    fail(token, "invalid syntax");
  }

  // (expr), (), (a,), (a, b): only a comma makes a tuple.
  ExprPtr parse_parenthesised() {
    const Token& open = next();
    if (accept_op(")")) return make_expr(ExprKind::Tuple, open.loc);
    ExprPtr first = parse_expression();
    reject_comprehension();
    if (!at_op(",")) {
      expect_op(")");
      return first;
    }
    auto tuple = make_expr(ExprKind::Tuple, open.loc);
    tuple->args.push_back(std::move(first));
    while (accept_op(",") && !at_op(")")) tuple->args.push_back(parse_expression());
    expect_op(")", "expected ',' or ')'");
    return finish(std::move(tuple));
  }

  // Values up to 2^64 - 1; those of 2^63 and above are kept unsigned (is_uint64).
  ExprPtr int_literal(const Token& token) {
    std::string digits;
    for (char c : token.text)
      if (c != '_') digits += c;
    int radix = 10;
    size_t start = 0;
    if (digits.size() > 1 && digits[0] == '0' && std::isalpha(static_cast<unsigned char>(digits[1]))) {
      char letter = static_cast<char>(std::tolower(static_cast<unsigned char>(digits[1])));
      radix = letter == 'x' ? 16 : letter == 'o' ? 8 : 2;
      start = 2;
    }
    uint64_t value = 0;
    auto [end, error] = std::from_chars(digits.data() + start, digits.data() + digits.size(), value, radix);
    if (error == std::errc::result_out_of_range) fail(token, "integer literal too large");
    auto literal = make_expr(ExprKind::Int, token.loc);
    if (value > static_cast<uint64_t>(INT64_MAX)) {
      literal->is_uint64 = true;
      literal->uint_value = value;
    } else {
      literal->int_value = static_cast<int64_t>(value);
    }
    return literal;
  }
};

}  // namespace

std::unique_ptr<Function> parse(const SourceText& source) { return Parser(source).parse_source(); }

}  // namespace jiasu::fe
