// parse()'s expressions (parser.hpp): Python's precedence levels from the conditional expression down to atoms.
#include <cctype>
#include <charconv>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "frontend/parser.hpp"

namespace jiasu::fe::parsing {
namespace {

const char* const kFunctionHint = " (write a @jiasu.func at module level instead)";
const char* const kComprehension = "comprehensions and generator expressions are not supported in jiasu kernels";

// Binary operator levels, loosest first; each is left-associative. '**' is handled in parse_power.
const std::vector<std::vector<BinaryOp>> kBinaryLevels = {
    {{"|", Op::BitOr}},
    {{"^", Op::BitXor}},
    {{"&", Op::BitAnd}},
    {{"<<", Op::LShift}, {">>", Op::RShift}},
    {{"+", Op::Add}, {"-", Op::Sub}},
    {{"*", Op::Mul}, {"/", Op::Div}, {"//", Op::FloorDiv}, {"%", Op::Mod}, {"@", Op::MatMul}},
};

const BinaryOp kComparisonOps[] = {
    {"==", Op::Eq}, {"!=", Op::NotEq}, {"<", Op::Lt}, {"<=", Op::LtE}, {">", Op::Gt}, {">=", Op::GtE},
};

}  // namespace

bool is_keyword(const Token& token) {
  static const std::unordered_set<std::string> keywords = {
      "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def",
      "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is",
      "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield"};
  return token.kind == TokenKind::Name && keywords.count(token.text) > 0;
}

bool Parser::can_start_expression() const {
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
ExprPtr Parser::parse_tuple_expression() {
  ExprPtr first = parse_expression();
  if (!at_op(",")) return first;
  auto tuple = make_expr(ExprKind::Tuple, start_of(*first));
  tuple->args.push_back(std::move(first));
  while (accept_op(",") && can_start_expression()) tuple->args.push_back(parse_expression());
  return finish(std::move(tuple));
}

// expression: disjunction ['if' disjunction 'else' expression]
ExprPtr Parser::parse_expression() {
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

ExprPtr Parser::parse_or() { return parse_bool_op("or", Op::Or, &Parser::parse_and); }

ExprPtr Parser::parse_and() { return parse_bool_op("and", Op::And, &Parser::parse_not); }

// `a or b or c` is one BoolOp with three operands, as in Python's tree.
ExprPtr Parser::parse_bool_op(const char* keyword, Op op, ExprPtr (Parser::*parse_operand)()) {
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

ExprPtr Parser::parse_not() {
  if (!at_keyword("not")) return parse_comparison();
  DepthGuard guard(*this, peek().loc);
  auto unary = make_expr(ExprKind::Unary, next().loc);
  unary->op = Op::Not;
  unary->args.push_back(parse_not());
  return finish(std::move(unary));
}

// The comparison operator at the current token (consumed), or Op::None.
Op Parser::accept_comparison_op() {
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
ExprPtr Parser::parse_comparison() {
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

ExprPtr Parser::parse_binary(size_t level) {
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
ExprPtr Parser::parse_factor() {
  Op op = at_op("+") ? Op::UAdd : at_op("-") ? Op::USub : at_op("~") ? Op::Invert : Op::None;
  if (op == Op::None) return parse_power();
  DepthGuard guard(*this, peek().loc);
  auto unary = make_expr(ExprKind::Unary, next().loc);
  unary->op = op;
  unary->args.push_back(parse_factor());
  return finish(std::move(unary));
}

// power: primary ['**' factor], so -x**2 is -(x**2), 2**-1 works and a**b**c is a**(b**c).
ExprPtr Parser::parse_power() {
  ExprPtr base = parse_primary();
  if (!at_op("**")) return base;
  DepthGuard guard(*this, peek().loc);
  auto power = make_expr(ExprKind::Binary, next().loc);
  power->op = Op::Pow;
  power->args.push_back(std::move(base));
  power->args.push_back(parse_factor());
  return finish(std::move(power));
}

ExprPtr Parser::parse_primary() {
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

void Parser::reject_comprehension() const {
  if (at_keyword("for") || at_keyword("async")) fail(peek(), kComprehension);
}

// callee(positional..., name=value...): the callee is args[0].
ExprPtr Parser::parse_call(ExprPtr callee) {
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
ExprPtr Parser::parse_field_name() {
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
ExprPtr Parser::parse_index() {
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
ExprPtr Parser::parse_subscript(ExprPtr value) {
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

ExprPtr Parser::parse_atom() {
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

ExprPtr Parser::parse_name_atom() {
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
ExprPtr Parser::parse_parenthesised() {
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
ExprPtr Parser::int_literal(const Token& token) {
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

}  // namespace jiasu::fe::parsing
