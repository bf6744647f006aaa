// parse(): kernel source to syntax tree. Trees are compared through a prefix printer, "(+ a (* b c))",
// so each expectation reads as the structure it checks.
#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "frontend/ast.hpp"

namespace jiasu::fe {
namespace {

std::unique_ptr<Function> parse_text(const std::string& text, int first_line = 1) {
  return parse(SourceText{text, "k.py", first_line});
}

std::string print(const Expr& e);

std::string print_operands(const Expr& e, size_t from = 0) {
  std::string out;
  for (size_t i = from; i < e.args.size(); ++i) out += " " + print(*e.args[i]);
  return out;
}

std::string print(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Int:
      return e.is_uint64 ? std::to_string(e.uint_value) + "u" : std::to_string(e.int_value);
    case ExprKind::Float: {
      char buffer[32];
      return std::string(buffer, std::to_chars(buffer, buffer + sizeof buffer, e.float_value).ptr);
    }
    case ExprKind::Bool: return e.int_value ? "True" : "False";
    case ExprKind::None: return "None";
    case ExprKind::String: return "'" + e.name + "'";
    case ExprKind::Name: return e.name;
    case ExprKind::Attribute: return "(. " + print(*e.args[0]) + " " + e.name + ")";
    case ExprKind::Subscript: return "([]" + print_operands(e) + ")";
    case ExprKind::Call: {
      std::string out = "(call" + print_operands(e);
      for (const auto& [name, value] : e.keywords) out += " " + name + "=" + print(*value);
      return out + ")";
    }
    case ExprKind::Binary:
    case ExprKind::Unary:
    case ExprKind::BoolOp:
      return std::string("(") + op_text(e.op) + print_operands(e) + ")";
    case ExprKind::Compare: {
      std::string out = "(";
      for (Op op : e.ops) out += std::string(out.size() > 1 ? " " : "") + op_text(op);
      return out + print_operands(e) + ")";
    }
    case ExprKind::IfExp: return "(if" + print_operands(e) + ")";
    case ExprKind::Tuple: return "(tuple" + print_operands(e) + ")";
  }
  return "?";
}

// Statements one per line, two spaces per block level.
void print_block(const std::vector<StmtPtr>& body, int depth, std::string& out);

void print_stmt(const Stmt& s, int depth, std::string& out) {
  std::string line(2 * depth, ' ');
  switch (s.kind) {
    case StmtKind::Expr: out += line + print(*s.value) + "\n"; return;
    case StmtKind::Assign:
      for (const ExprPtr& target : s.targets) line += print(*target) + " = ";
      out += line + print(*s.value) + "\n";
      return;
    case StmtKind::AugAssign:
      out += line + print(*s.targets[0]) + " " + op_text(s.op) + "= " + print(*s.value) + "\n";
      return;
    case StmtKind::If: out += line + "if " + print(*s.test) + "\n"; break;
    case StmtKind::For: out += line + "for " + print(*s.targets[0]) + " in " + print(*s.value) + "\n"; break;
    case StmtKind::While: out += line + "while " + print(*s.test) + "\n"; break;
    case StmtKind::Break: out += line + "break\n"; return;
    case StmtKind::Continue: out += line + "continue\n"; return;
    case StmtKind::Pass: out += line + "pass\n"; return;
    case StmtKind::Return: out += line + "return" + (s.value ? " " + print(*s.value) : "") + "\n"; return;
    case StmtKind::Def: {
      out += line + "def " + s.function->name;
      for (const Param& p : s.function->params) out += std::string(" ") + (p.variadic ? "*" : "") + p.name;
      out += "\n";
      return print_block(s.function->body, depth + 1, out);
    }
  }
  print_block(s.body, depth + 1, out);
  if (!s.orelse.empty()) {
    out += std::string(2 * depth, ' ') + "else\n";
    print_block(s.orelse, depth + 1, out);
  }
}

void print_block(const std::vector<StmtPtr>& body, int depth, std::string& out) {
  for (const StmtPtr& s : body) print_stmt(*s, depth, out);
}

std::string print_body(const std::string& text) {
  std::string out;
  print_block(parse_text(text)->body, 0, out);
  return out;
}

// The prefix form of one expression, parsed as the value of a kernel's only statement.
std::string print_expr(const std::string& expression) {
  auto function = parse_text("def k():\n    " + expression + "\n");
  return print(*function->body.at(0)->value);
}

std::string at(SourceLoc loc) { return std::to_string(loc.line) + ":" + std::to_string(loc.column); }

TEST(Parse, TheSeedKernel) {
  const char* source =
      "@jiasu.kernel\n"
      "def add(x, y, out):\n"
      "    i = jiasu.grid(1)\n"
      "    if i < out.size:\n"
      "        out[i] = x[i] + y[i]\n";
  auto function = parse_text(source);
  EXPECT_EQ(function->name, "add");
  EXPECT_EQ(at(function->loc), "2:1");
  EXPECT_EQ(function->decorators, std::vector<std::string>{"jiasu.kernel"});
  ASSERT_EQ(function->params.size(), 3u);
  EXPECT_EQ(function->params[0].name, "x");
  EXPECT_EQ(function->params[1].name, "y");
  EXPECT_EQ(function->params[2].name, "out");
  EXPECT_EQ(at(function->params[2].loc), "2:15");
  std::string body;
  print_block(function->body, 0, body);
  EXPECT_EQ(body,
            "i = (call (. jiasu grid) 1)\n"
            "if (< i (. out size))\n"
            "  ([] out i) = (+ ([] x i) ([] y i))\n");
}

TEST(Parse, LocationsPointAtStatementsOperatorsAndTrailers) {
  auto function = parse_text("def k(a):\n    a.b[i] = f(x) + -y\n");
  const Stmt& assign = *function->body[0];
  EXPECT_EQ(at(assign.loc), "2:5");
  const Expr& subscript = *assign.targets[0];
  EXPECT_EQ(at(subscript.loc), "2:8");           // '['
  EXPECT_EQ(at(subscript.args[0]->loc), "2:7");  // the attribute name b
  EXPECT_EQ(at(subscript.args[0]->args[0]->loc), "2:5");
  const Expr& sum = *assign.value;
  EXPECT_EQ(at(sum.loc), "2:19");                // '+'
  EXPECT_EQ(at(sum.args[0]->loc), "2:15");       // '(' of the call
  EXPECT_EQ(at(sum.args[0]->args[0]->loc), "2:14");
  EXPECT_EQ(at(sum.args[1]->loc), "2:21");       // unary '-'
}

struct PrecedenceCase {
  const char* source;
  const char* tree;
};

void PrintTo(const PrecedenceCase& c, std::ostream* out) { *out << c.source; }  // readable test names

class Precedence : public ::testing::TestWithParam<PrecedenceCase> {};

TEST_P(Precedence, FollowsPython) { EXPECT_EQ(print_expr(GetParam().source), GetParam().tree) << GetParam().source; }

INSTANTIATE_TEST_SUITE_P(
    Parse, Precedence,
    ::testing::Values(
        PrecedenceCase{"a + b * c", "(+ a (* b c))"}, PrecedenceCase{"a * b + c", "(+ (* a b) c)"},
        PrecedenceCase{"a - b - c", "(- (- a b) c)"}, PrecedenceCase{"a / b // c % d @ e", "(@ (% (// (/ a b) c) d) e)"},
        PrecedenceCase{"a ** b ** c", "(** a (** b c))"}, PrecedenceCase{"-x ** 2", "(- (** x 2))"},
        PrecedenceCase{"2 ** -1", "(** 2 (- 1))"}, PrecedenceCase{"a ** -b ** c", "(** a (- (** b c)))"},
        PrecedenceCase{"-x * y", "(* (- x) y)"}, PrecedenceCase{"- - +~a", "(- (- (+ (~ a))))"},
        PrecedenceCase{"~a & b", "(& (~ a) b)"}, PrecedenceCase{"a | b ^ c & d", "(| a (^ b (& c d)))"},
        PrecedenceCase{"a & b << c", "(& a (<< b c))"}, PrecedenceCase{"a << b + c >> d", "(>> (<< a (+ b c)) d)"},
        PrecedenceCase{"a < b | c", "(< a (| b c))"}, PrecedenceCase{"not a == b", "(not (== a b))"},
        PrecedenceCase{"not a and b or c", "(or (and (not a) b) c)"}, PrecedenceCase{"a or b and c", "(or a (and b c))"},
        PrecedenceCase{"a or b or c", "(or a b c)"}, PrecedenceCase{"a and b and not c", "(and a b (not c))"},
        PrecedenceCase{"x if c else y", "(if c x y)"}, PrecedenceCase{"x if a else y if b else z", "(if a x (if b y z))"},
        PrecedenceCase{"a + 1 if b or c else d", "(if (or b c) (+ a 1) d)"}, PrecedenceCase{"(a + b) * c", "(* (+ a b) c)"},
        PrecedenceCase{"f(x)[i].y", "(. ([] (call f x) i) y)"}, PrecedenceCase{"a.b.c(d, e=f + 1)", "(call (. (. a b) c) d e=(+ f 1))"},
        PrecedenceCase{"x[i, j + 1]", "([] x i (+ j 1))"}, PrecedenceCase{"x[(i, j)]", "([] x i j)"},
        PrecedenceCase{"x[i][j,]", "([] ([] x i) j)"}, PrecedenceCase{"x[()]", "([] x)"},
        PrecedenceCase{"(a, b)", "(tuple a b)"}, PrecedenceCase{"()", "(tuple)"}, PrecedenceCase{"(a,)", "(tuple a)"},
        PrecedenceCase{"a, b + 1", "(tuple a (+ b 1))"}, PrecedenceCase{"a < b < c", "(< < a b c)"},
        PrecedenceCase{"a == b != c >= d", "(== != >= a b c d)"}, PrecedenceCase{"a is not None", "(is not a None)"},
        PrecedenceCase{"a not in b", "(not in a b)"}, PrecedenceCase{"a is b in c", "(is in a b c)"},
        PrecedenceCase{"True and False", "(and True False)"}, PrecedenceCase{"1.5e3 + 0x10 - .5", "(- (+ 1500 16) 0.5)"},
        PrecedenceCase{"f()", "(call f)"}, PrecedenceCase{"f(a)(b)", "(call (call f a) b)"},
        PrecedenceCase{"-a.b ** c[d]", "(- (** (. a b) ([] c d)))"}));

TEST(Parse, IntegerLiteralsUpTo64Bits) {
  EXPECT_EQ(print_expr("9223372036854775807"), "9223372036854775807");
  EXPECT_EQ(print_expr("9223372036854775808"), "9223372036854775808u");
  EXPECT_EQ(print_expr("18_446_744_073_709_551_615"), "18446744073709551615u");
  EXPECT_EQ(print_expr("0xFFFF_FFFF_FFFF_FFFF"), "18446744073709551615u");
  EXPECT_EQ(print_expr("0o777 + 0b1010 + 00"), "(+ (+ 511 10) 0)");
  EXPECT_EQ(print_expr("-9223372036854775808"), "(- 9223372036854775808u)");
}

TEST(Parse, FloatLiteralsTakePythonValues) {
  EXPECT_EQ(print_expr("1_000.000_1"), "1000.0001");
  EXPECT_EQ(print_expr("5. + 1e-3"), "(+ 5 0.001)");
  auto value = [](const char* literal) { return parse_text(std::string("def k():\n    ") + literal)->body[0]->value->float_value; };
  EXPECT_EQ(value("1e400"), HUGE_VAL);
  EXPECT_EQ(value("0.0000001e-400"), 0.0);
  EXPECT_EQ(value("12345678901234567890e-420"), 0.0);  // 1.2e-401
  EXPECT_EQ(value("0.0001e312"), 1e308);
}

TEST(Parse, ComparisonChainsAreOneCompare) {
  auto function = parse_text("def k():\n    0 <= i < n != m\n");
  const Expr& compare = *function->body[0]->value;
  ASSERT_EQ(compare.kind, ExprKind::Compare);
  EXPECT_EQ(compare.ops, (std::vector<Op>{Op::LtE, Op::Lt, Op::NotEq}));
  ASSERT_EQ(compare.args.size(), 4u);
  EXPECT_EQ(print(*compare.args[3]), "m");
  EXPECT_EQ(at(compare.loc), "2:7");
}

TEST(Parse, AssignmentsAndUnpacking) {
  EXPECT_EQ(print_body("def k(a):\n"
                       "    i, j = jiasu.grid(2)\n"
                       "    (x, y) = a.shape\n"
                       "    a[i, j], b = 1, 2\n"
                       "    p = q = 0\n"
                       "    t = 1,\n"),
            "(tuple i j) = (call (. jiasu grid) 2)\n"
            "(tuple x y) = (. a shape)\n"
            "(tuple ([] a i j) b) = (tuple 1 2)\n"
            "p = q = 0\n"
            "t = (tuple 1)\n");
}

TEST(Parse, AugmentedAssignmentsOfEveryOperator) {
  EXPECT_EQ(print_body("def k(a):\n    a += 1\n    a[0] -= 1\n    a *= 1\n    a /= 1\n    a //= 1\n    a %= 1\n"
                       "    a **= 1\n    a <<= 1\n    a >>= 1\n    a &= 1\n    a |= 1\n    a ^= 1\n    a @= 1\n"),
            "a += 1\n([] a 0) -= 1\na *= 1\na /= 1\na //= 1\na %= 1\na **= 1\na <<= 1\na >>= 1\na &= 1\n"
            "a |= 1\na ^= 1\na @= 1\n");
}

TEST(Parse, ElifChainsNestInOrelse) {
  auto function = parse_text(
      "def k(a):\n"
      "    if a < 0:\n"
      "        a = 0\n"
      "    elif a < 1:\n"
      "        a = 1\n"
      "    elif a < 2: a = 2\n"
      "    else:\n"
      "        a = 3\n");
  std::string out;
  print_block(function->body, 0, out);
  EXPECT_EQ(out,
            "if (< a 0)\n"
            "  a = 0\n"
            "else\n"
            "  if (< a 1)\n"
            "    a = 1\n"
            "  else\n"
            "    if (< a 2)\n"
            "      a = 2\n"
            "    else\n"
            "      a = 3\n");
  const Stmt& elif = *function->body[0]->orelse[0];
  EXPECT_EQ(at(elif.loc), "4:5");
}

TEST(Parse, LoopsWithElseBreakAndContinue) {
  EXPECT_EQ(print_body("def k(a):\n"
                       "    for i in range(a.size):\n"
                       "        if i: continue\n"
                       "        break\n"
                       "    else:\n"
                       "        pass\n"
                       "    for i, j in a:\n"
                       "        while i:\n"
                       "            i -= 1\n"
                       "        else:\n"
                       "            break\n"
                       "    while True: pass\n"),
            "for i in (call range (. a size))\n"
            "  if i\n"
            "    continue\n"
            "  break\n"
            "else\n"
            "  pass\n"
            "for (tuple i j) in a\n"
            "  while i\n"
            "    i -= 1\n"
            "  else\n"
            "    break\n"
            "while True\n"
            "  pass\n");
}

TEST(Parse, ReturnsAndSemicolons) {
  EXPECT_EQ(print_body("def k(a):\n    x = 1; y = 2;\n    if a: return\n    return a, x\n"),
            "x = 1\ny = 2\nif a\n  return\nreturn (tuple a x)\n");
}

TEST(Parse, NestedDefsVariadicParametersAndUnpackedArguments) {
  const char* text = "def k(a):\n    def f(x, *rest,):\n        return x\n    while a:\n        def g():\n"
                     "            pass\n        break\n    f(1, *a)\n";
  EXPECT_EQ(print_body(text), "def f x *rest\n  return x\nwhile a\n  def g\n    pass\n  break\n(call f 1 a)\n");
  auto function = parse_text(text);
  EXPECT_EQ(function->body[0]->function->loc.line, 2);
  EXPECT_EQ(function->body[0]->function->loc.column, 5);
  const Expr& call = *function->body[2]->value;
  EXPECT_FALSE(call.args[1]->unpacked);
  EXPECT_TRUE(call.args[2]->unpacked);
}

TEST(Parse, KeywordArgumentsKeepTheirOrder) {
  auto function = parse_text("def k():\n    s = jiasu.shared.array((16, 16), dtype=np.float32, order=C,)\n");
  const Expr& call = *function->body[0]->value;
  ASSERT_EQ(call.keywords.size(), 2u);
  EXPECT_EQ(call.keywords[0].first, "dtype");
  EXPECT_EQ(call.keywords[1].first, "order");
  EXPECT_EQ(print(call), "(call (. (. jiasu shared) array) (tuple 16 16) dtype=(. np float32) order=C)");
}

TEST(Parse, DecoratorsAreKeptAsWritten) {
  auto function = parse_text(
      "@jiasu.kernel\n"
      "@jiasu.kernel(debug=True)\n"
      "@a.b(c, d = 1)  # comment\n"
      "@options(\n"
      "    fastmath=True,\n"
      "    max_registers=[32])\n"
      "def k():\n"
      "    pass\n");
  EXPECT_EQ(function->decorators, (std::vector<std::string>{"jiasu.kernel", "jiasu.kernel(debug=True)", "a.b(c, d = 1)",
                                                              "options(fastmath=True, max_registers=[32])"}));
}

TEST(Parse, DocstringsAreSkipped) {
  EXPECT_EQ(print_body("def k(a):\n    \"\"\"Adds.\n\n    More.\n    \"\"\"\n    a[0] = 1\n"), "([] a 0) = 1\n");
  EXPECT_EQ(print_body("def k(a):\n    'one' 'two'\n    pass\n"), "pass\n");
  EXPECT_EQ(print_body("def k(a):\n    r'''only a docstring'''\n"), "");
  EXPECT_EQ(print_body("def k(a): 'inline'\n"), "");
  EXPECT_EQ(print_body("def k(a): a[0] = 1; return\n"), "([] a 0) = 1\nreturn\n");
}

TEST(Parse, NestedSourceKeepsFileLocations) {
  auto function = parse_text(
      "    @jiasu.kernel\n"
      "    def k(out):\n"
      "        out[0] = 1\n",
      40);
  EXPECT_EQ(at(function->loc), "41:5");
  EXPECT_EQ(at(function->params[0].loc), "41:11");
  EXPECT_EQ(at(function->body[0]->loc), "42:9");
  EXPECT_EQ(at(function->body[0]->value->loc), "42:18");
}

TEST(Parse, SoftKeywordsAreNamesOutsideTheirStatements) {
  EXPECT_EQ(print_body("def k(match, type):\n    match = type\n    type = match(1)\n    match[0] = 1\n"),
            "match = type\ntype = (call match 1)\n([] match 0) = 1\n");
}

// --- errors: the message and the exact line:column ---------------------------------------------------

struct ErrorCase {
  const char* source;
  const char* expected;  // "line:column: message"
};

void PrintTo(const ErrorCase& c, std::ostream* out) { *out << c.expected; }

class ParseErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ParseErrors, NameTheProblemAtItsLocation) {
  std::string got = "no error";
  try {
    parse_text(GetParam().source);
  } catch (const CompileError& e) {
    got = std::to_string(e.line()) + ":" + std::to_string(e.column()) + ": " + e.message();
  }
  EXPECT_EQ(got, GetParam().expected) << GetParam().source;
}

INSTANTIATE_TEST_SUITE_P(
    Parse, ParseErrors,
    ::testing::Values(
        // Unsupported statements, at their keyword.
        ErrorCase{"def k(a):\n    class C: pass\n", "2:5: 'class' is not supported in jiasu kernels"},
        ErrorCase{"def k(a):\n    with a: pass\n", "2:5: 'with' is not supported in jiasu kernels"},
        ErrorCase{"def k(a):\n    try:\n        pass\n    except E:\n        pass\n", "2:5: 'try' is not supported in jiasu kernels"},
        ErrorCase{"def k(a):\n    if a:\n        raise\n", "3:9: a bare 'raise' (re-raising) is not supported in jiasu kernels"},
        ErrorCase{"def k(a):\n    raise ValueError from a\n", "2:22: 'raise ... from' is not supported in jiasu kernels"},
        ErrorCase{"def k(a):\n    a[0] = 'x'\n", "2:12: strings are not supported in jiasu kernels"},
        ErrorCase{"def k(a):\n    import math\n", "2:5: 'import' is not supported in jiasu kernels"},
        ErrorCase{"def k(a):\n    from math import sqrt\n", "2:5: 'from' is not supported in jiasu kernels"},
        ErrorCase{"def k(a):\n    global n\n", "2:5: 'global' is not supported in jiasu kernels"},
        ErrorCase{"def k(a):\n    nonlocal n\n", "2:5: 'nonlocal' is not supported in jiasu kernels"},
        ErrorCase{"def k(a):\n    x = 1; del x\n", "2:12: 'del' is not supported in jiasu kernels"},
        ErrorCase{"def k(a):\n    assert a > 0\n", "2:5: 'assert' is not supported in jiasu kernels"},
        ErrorCase{"def k(a):\n    yield a\n", "2:5: 'yield' is not supported in jiasu kernels"},
        ErrorCase{"def k(a):\n    x = yield\n", "2:9: 'yield' is not supported in jiasu kernels"},
        ErrorCase{"def k(a):\n    x = await a\n", "2:9: 'await' is not supported in jiasu kernels"},
        ErrorCase{"def k(a):\n    async for i in a: pass\n", "2:5: 'async' is not supported in jiasu kernels"},
        ErrorCase{"def k(a):\n    match a:\n        case 1: pass\n", "2:5: 'match' is not supported in jiasu kernels"},
        ErrorCase{"def k(a):\n    type T = int\n", "2:5: 'type' is not supported in jiasu kernels"},
        ErrorCase{"class K:\n    pass\n", "1:1: 'class' is not supported in jiasu kernels"},
        ErrorCase{"x = 1\n", "1:1: expected a function definition ('def')"},
        ErrorCase{"def k(a):\n    pass\ndef g(): pass\n", "3:1: unexpected code after the function definition"},
        // Unsupported parameters.
        ErrorCase{"def k(a, b=1):\n    pass\n", "1:11: default parameter values are not supported in jiasu kernels"},
        ErrorCase{"def k(a, *rest, b):\n    pass\n",
                  "1:17: keyword-only parameters (after '*rest') are not supported in jiasu kernels"},
        ErrorCase{"def k(a):\n    for i in a:\n        def g():\n            break\n", "4:13: 'break' outside loop"},
        ErrorCase{"def k(a, *, b):\n    pass\n", "1:10: keyword-only parameters ('*') are not supported in jiasu kernels"},
        ErrorCase{"def k(**options):\n    pass\n", "1:7: keyword parameters ('**') are not supported in jiasu kernels"},
        ErrorCase{"def k(a, /):\n    pass\n", "1:10: positional-only parameters ('/') are not supported in jiasu kernels"},
        ErrorCase{"def k(a: float):\n    pass\n", "1:8: parameter annotations are not supported in jiasu kernels"},
        ErrorCase{"def k(a) -> None:\n    pass\n", "1:10: return annotations are not supported in jiasu kernels"},
        ErrorCase{"def k(a, b, a):\n    pass\n", "1:13: duplicate parameter 'a' in function definition"},
        ErrorCase{"def k(a b):\n    pass\n", "1:9: expected ',' or ')'"},
        // Unsupported expressions.
        ErrorCase{"def k(a):\n    f = lambda x: x\n",
                  "2:9: 'lambda' is not supported in jiasu kernels (write a @jiasu.func at module level instead)"},
        ErrorCase{"def k(a):\n    b = [1, 2]\n",
                  "2:9: list displays are not supported in jiasu kernels (use a tuple, or jiasu.local.array)"},
        ErrorCase{"def k(a):\n    b = {1: 2}\n", "2:9: dict and set displays are not supported in jiasu kernels"},
        ErrorCase{"def k(a):\n    b = sum(x for x in a)\n",
                  "2:15: comprehensions and generator expressions are not supported in jiasu kernels"},
        ErrorCase{"def k(a):\n    b = (x for x in a)\n",
                  "2:12: comprehensions and generator expressions are not supported in jiasu kernels"},
        ErrorCase{"def k(a):\n    if (n := a.size) > 0:\n        pass\n",
                  "2:11: assignment expressions (':=') are not supported in jiasu kernels"},
        ErrorCase{"def k(a):\n    x, *y = a\n", "2:8: starred expressions ('*') are not supported in jiasu kernels"},
        ErrorCase{"def k(a):\n    f(**a)\n", "2:7: argument unpacking ('**') is not supported in jiasu kernels"},
        ErrorCase{"def k(a):\n    b = 'text'\n", "2:9: strings are not supported in jiasu kernels"},
        ErrorCase{"def k(a):\n    b = f'{a}'\n", "2:9: f-strings are not supported in jiasu kernels"},
        ErrorCase{"def k(a):\n    b = a[...]\n", "2:11: '...' (Ellipsis) is not supported in jiasu kernels"},
        ErrorCase{"def k(a):\n    b = 18446744073709551616\n", "2:9: integer literal too large"},
        ErrorCase{"def k(a):\n    b = 0x1_0000_0000_0000_0000\n", "2:9: integer literal too large"},
        ErrorCase{"def k(a):\n    f(x=1, x=2)\n", "2:12: keyword argument repeated: x"},
        ErrorCase{"def k(a):\n    f(x=1, a)\n", "2:12: positional argument follows keyword argument"},
        ErrorCase{"def k(a):\n    b: int = 1\n", "2:6: variable annotations are not supported in jiasu kernels"},
        // Assignment targets.
        ErrorCase{"def k(a):\n    f(a) = 1\n", "2:5: cannot assign to a function call"},
        ErrorCase{"def k(a):\n    x, 1 = a\n", "2:8: cannot assign to a literal"},
        ErrorCase{"def k(a):\n    None = a\n", "2:5: cannot assign to None"},
        ErrorCase{"def k(a):\n    a + 1 = 2\n", "2:5: cannot assign to an expression"},
        ErrorCase{"def k(a):\n    (x, (y, z)) = a\n", "2:9: nested tuple targets are not supported in jiasu kernels"},
        ErrorCase{"def k(a):\n    x, y += 1\n", "2:5: a tuple cannot be the target of an augmented assignment"},
        ErrorCase{"def k(a):\n    for f(i) in a: pass\n", "2:9: cannot assign to a function call"},
        // Syntax errors, at the token where the expected thing is missing.
        ErrorCase{"def k(a):\n    if a\n        pass\n", "2:9: expected ':'"},
        ErrorCase{"def k(a)\n    pass\n", "1:9: expected ':'"},
        ErrorCase{"def k:\n    pass\n", "1:6: expected '('"},
        ErrorCase{"def (a):\n    pass\n", "1:5: expected a function name after 'def'"},
        ErrorCase{"def k(a):\n    x = \n", "2:8: expected an expression"},
        ErrorCase{"def k(a):\n    x = a +\n", "2:12: expected an expression"},
        ErrorCase{"def k(a):\n    x = a b\n", "2:11: invalid syntax"},
        ErrorCase{"def k(a):\n    x = (a b)\n", "2:12: expected ')'"},
        ErrorCase{"def k(a):\n    x = f(a b)\n", "2:13: expected ',' or ')'"},
        ErrorCase{"def k(a):\n    x = a[i j]\n", "2:13: expected ',' or ']'"},
        ErrorCase{"def k(a):\n    x = a[]\n", "2:11: expected an index"},
        ErrorCase{"def k(a):\n    x = a.\n", "2:11: expected an attribute name after '.'"},
        ErrorCase{"def k(a):\n    x = a.if\n", "2:11: expected an attribute name after '.'"},
        ErrorCase{"def k(a):\n    x = a if a\n", "2:15: expected 'else' after 'if' expression"},
        ErrorCase{"def k(a):\n    for i range(a): pass\n", "2:11: expected 'in'"},
        ErrorCase{"def k(a):\n    x = if\n", "2:9: invalid syntax"},
        ErrorCase{"def k(a):\n    else:\n        pass\n", "2:5: invalid syntax"},
        ErrorCase{"def k(a):\n    if a:\n    pass\n", "3:5: expected an indented block after 'if' statement on line 2"},
        ErrorCase{"def k(a):\n    while a:\n", "3:1: expected an indented block after 'while' statement on line 2"},
        ErrorCase{"def k(a):\npass\n", "2:1: expected an indented block after function definition on line 1"},
        ErrorCase{"def k(a):\n    x = 1\n        y = 2\n", "3:9: unexpected indent"},
        ErrorCase{"def k(a):\n    if a:\n        x = 1\n      y = 2\n", "4:7: unindent does not match any outer indentation level"},
        ErrorCase{"def k(a):\n    break\n", "2:5: 'break' outside loop"},
        ErrorCase{"def k(a):\n    for i in a:\n        pass\n    else:\n        continue\n", "5:9: 'continue' not properly in loop"},
        ErrorCase{"def k(a):\n    x = (1,\n         2\n", "2:9: '(' was never closed"}));

TEST(Parse, NestingIsBoundedInsteadOfExhaustingTheStack) {
  auto error_of = [](const std::string& expression) {
    try {
      parse_text("def k(a):\n    x = " + expression + "\n");
    } catch (const CompileError& e) {
      return std::to_string(e.line()) + ":" + std::to_string(e.column()) + ": " + e.message();
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of(std::string(199, '(') + "a" + std::string(199, ')')), "no error");
  EXPECT_EQ(error_of(std::string(100000, '(')), "2:209: too many nested parentheses");
  // The statement's expression is the first level, each operator below one more: the 200th fails.
  const std::string too_deep = ": expression too deeply nested (more than 200 levels)";
  EXPECT_EQ(error_of(std::string(100000, '-') + "a"), "2:" + std::to_string(9 + 199) + too_deep);
  std::string powers;
  for (int i = 0; i < 100000; ++i) powers += "a**";
  EXPECT_EQ(error_of(powers + "a"), "2:" + std::to_string(9 + 3 * 199 + 1) + too_deep);
  std::string conditionals;
  for (int i = 0; i < 100000; ++i) conditionals += "a if a else ";
  EXPECT_EQ(error_of(conditionals + "a"), "2:" + std::to_string(9 + 12 * 200) + too_deep);
  std::string nots;
  for (int i = 0; i < 100000; ++i) nots += "not ";
  EXPECT_EQ(error_of(nots + "a"), "2:" + std::to_string(9 + 4 * 199) + too_deep);
}

TEST(Parse, IndentationDepthIsBounded) {
  std::string source = "def k(a):\n";
  for (int level = 1; level <= 101; ++level) source += std::string(level, ' ') + "if a:\n";
  source += std::string(102, ' ') + "pass\n";
  try {
    parse_text(source);
    FAIL() << "expected a CompileError";
  } catch (const CompileError& e) {
    EXPECT_EQ(e.message(), "too many levels of indentation");
    EXPECT_EQ(e.line(), 102);
  }
}

TEST(Parse, ErrorsFormatTheSourceLineWithACaret) {
  try {
    parse(SourceText{"    def k(a):\n        b = a[f'x']\n", "kernels.py", 7});
    FAIL() << "expected a CompileError";
  } catch (const CompileError& e) {
    EXPECT_EQ(std::string(e.what()),
              "kernels.py:8:15: error: f-strings are not supported in jiasu kernels\n"
              "            b = a[f'x']\n"
              "                  ^");
  }
}

}  // namespace
}  // namespace jiasu::fe
