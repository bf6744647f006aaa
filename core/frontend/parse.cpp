// parse(): the function definition and its statements; expressions are parse_expr.cpp's (parser.hpp).
#include <set>
#include <string>
#include <vector>

#include "frontend/parser.hpp"

namespace jiasu::fe {
namespace parsing {
namespace {

const BinaryOp kAugmentedOps[] = {
    {"+=", Op::Add},     {"-=", Op::Sub},      {"*=", Op::Mul},      {"/=", Op::Div},    {"//=", Op::FloorDiv},
    {"%=", Op::Mod},     {"**=", Op::Pow},     {"<<=", Op::LShift},  {">>=", Op::RShift}, {"&=", Op::BitAnd},
    {"|=", Op::BitOr},   {"^=", Op::BitXor},   {"@=", Op::MatMul},
};

int code_points(const std::string& text) {
  int count = 0;
  for (char c : text) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return count;
}

// Keeps spacing as written on one line; across a bracket's line break, a space unless next to a bracket.
bool needs_space_between(const Token& a, const Token& b) {
  if (a.loc.line == b.loc.line) return b.loc.column > a.loc.column + code_points(a.text);
  return !(a.text == "(" || a.text == "[" || a.text == "{" || b.text == ")" || b.text == "]" || b.text == "}");
}

}  // namespace

std::string unsupported(const std::string& construct) {
  return "'" + construct + "' is not supported in jiasu kernels";
}

std::unique_ptr<Function> Parser::parse_source() {
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

// --- the function ---------------------------------------------------------------------------------

// A decorator's text as written, one line; the Python layer has already run it, so it is not parsed.
std::string Parser::parse_decorator() {
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

void Parser::parse_def(Function& function) {
  const Token& def = next();
  function.loc = def.loc;
  function.name = expect_name("expected a function name after 'def'").text;
  expect_op("(");
  parse_params(function);
  if (at_op("->")) fail(peek(), "return annotations are not supported in jiasu kernels");
  expect_op(":");
  function.body = parse_block("function definition", def.loc, /*function_body=*/true);
}

void Parser::parse_params(Function& function) {
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
    Param param;
    param.name = name.text;
    param.loc = name.loc;
    param.variadic = variadic;
    function.params.push_back(std::move(param));
    if (!accept_op(",")) break;
    if (variadic && !at_op(")"))
      fail(peek(), "keyword-only parameters (after '*" + name.text + "') are not supported in jiasu kernels");
  }
  expect_op(")", "expected ',' or ')'");
}
// --- statements -----------------------------------------------------------------------------------

// The block after a header's ':': statements on the same line, or an indented block. `header` names
// the statement for the message when the indented block is missing, as Python does.
std::vector<StmtPtr> Parser::parse_block(const std::string& header, SourceLoc header_loc, bool function_body) {
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
bool Parser::skip_docstring() {
  size_t after = 0;
  while (peek(after).kind == TokenKind::String) ++after;
  if (after == 0 || peek(after).kind != TokenKind::Newline) return false;
  index_ += after + 1;
  return true;
}

void Parser::parse_statement(std::vector<StmtPtr>& out) {
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
StmtPtr Parser::parse_nested_def() {
  auto stmt = std::make_unique<Stmt>(StmtKind::Def, peek().loc);
  stmt->function = std::make_unique<Function>();
  const int enclosing_loops = loop_depth_;
  loop_depth_ = 0;  // break and continue cannot leave a function
  parse_def(*stmt->function);
  loop_depth_ = enclosing_loops;
  return stmt;
}

// `match subject:` and `type X = ...` (soft keywords: both words are ordinary names elsewhere).
bool Parser::is_soft_keyword_statement() const {
  if (at_keyword("type")) return at_name(1) && (at_op("=", 2) || at_op("[", 2));
  if (!at_keyword("match")) return false;
  size_t end = 1;
  while (peek(end).kind != TokenKind::Newline && peek(end).kind != TokenKind::End) ++end;
  return end > 1 && at_op(":", end - 1);
}

// simple_stmt (';' simple_stmt)* [';'] NEWLINE
void Parser::parse_simple_statements(std::vector<StmtPtr>& out) {
  for (;;) {
    out.push_back(parse_simple_statement());
    if (!accept_op(";") || peek().kind == TokenKind::Newline) break;
  }
  if (peek().kind != TokenKind::Newline) fail(peek(), "invalid syntax");
  next();
}

bool Parser::at_statement_end() const { return peek().kind == TokenKind::Newline || at_op(";"); }

StmtPtr Parser::parse_simple_statement() {
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
void Parser::check_target(const Expr& target, bool inside_tuple, bool may_nest) {
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
StmtPtr Parser::parse_if() {
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

void Parser::parse_else(Stmt& stmt) {
  const Token& keyword = next();
  expect_op(":");
  stmt.orelse = parse_block("'else' statement", keyword.loc);
}

StmtPtr Parser::parse_for() {
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

StmtPtr Parser::parse_while() {
  const Token& keyword = next();
  auto stmt = std::make_unique<Stmt>(StmtKind::While, keyword.loc);
  stmt->test = parse_expression();
  expect_op(":");
  parse_loop_body(*stmt, "'while' statement", keyword.loc);
  return stmt;
}

// The body counts as inside the loop; the else clause does not.
void Parser::parse_loop_body(Stmt& stmt, const std::string& header, SourceLoc header_loc) {
  ++loop_depth_;
  stmt.body = parse_block(header, header_loc);
  --loop_depth_;
  if (at_keyword("else")) parse_else(stmt);
}

// A for loop's target list: operands above comparisons, so 'in' ends it.
ExprPtr Parser::parse_target_list() {
  ExprPtr first = parse_binary(0);
  if (!at_op(",")) return first;
  auto tuple = make_expr(ExprKind::Tuple, start_of(*first));
  tuple->args.push_back(std::move(first));
  while (accept_op(",") && !at_keyword("in")) tuple->args.push_back(parse_binary(0));
  return finish(std::move(tuple));
}

}  // namespace parsing

std::unique_ptr<Function> parse(const SourceText& source) { return parsing::Parser(source).parse_source(); }

}  // namespace jiasu::fe
