// check(): what its messages tell the user. A wrong set of arguments is the caller's error (BadArgument,
// a TypeError in Python) worded as Python words it, and code a message suggests compiles when followed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "frontend_test_support.hpp"

namespace jiasu::fe {
namespace {

using testing::array;
using testing::Globals;
using testing::module_value;
using testing::python;
using testing::scalar;

const GlobalValue kMissing{};  // a name the module does not bind

std::string argument_error(const std::string& kernel, const std::vector<Type>& signature) {
  try {
    check(python(kernel), signature);
  } catch (const BadArgument& e) {
    return e.what();
  }
  return "no BadArgument";
}

TEST(CheckArguments, AWrongCountIsTheCallersErrorInPythonsWords) {
  const Type f32 = array(DType::Float32);
  EXPECT_EQ(argument_error("def k(a, b):\n    pass\n", {f32}),
            "k() missing 1 required positional argument: 'b' (defined at k.py:1:1)");
  EXPECT_EQ(argument_error("def k(a, b, c):\n    pass\n", {f32}),
            "k() missing 2 required positional arguments: 'b' and 'c' (defined at k.py:1:1)");
  EXPECT_EQ(argument_error("def k(a, b, c):\n    pass\n", {}),
            "k() missing 3 required positional arguments: 'a', 'b', and 'c' (defined at k.py:1:1)");
  EXPECT_EQ(argument_error("@jiasu.kernel\ndef k(a):\n    pass\n", {f32, f32}),
            "k() takes 1 positional argument but 2 were given (defined at k.py:2:1)");
  EXPECT_EQ(argument_error("def k():\n    pass\n", {f32}), "k() takes 0 positional arguments but 1 was given (defined at k.py:1:1)");
}


TEST(CheckArguments, ADeviceFunctionCalledWrongIsAnErrorInTheKernel) {
  Globals globals{{"twice", testing::device_function("def twice(x):\n    return 2 * x\n")}};
  try {
    check(python("def k(a):\n    a[0] = twice(1, 2)\n", globals), {array(DType::Float32)});
    ADD_FAILURE() << "no error";
  } catch (const CompileError& e) {
    EXPECT_EQ(e.message(), "twice() takes 1 argument (2 given)");
    EXPECT_EQ(e.line(), 2);
  }
}

std::string compile_error(const std::string& kernel, const Globals& globals, const std::vector<Type>& signature) {
  try {
    check(python(kernel, globals), signature);
  } catch (const CompileError& e) {
    return e.message();
  }
  return "no CompileError";
}

// The text of `message` between `before` and `after`: the code it suggests.
std::string suggestion(const std::string& message, const std::string& before, const std::string& after) {
  size_t start = message.find(before);
  if (start == std::string::npos) return "<no suggestion in: " + message + ">";
  start += before.size();
  return message.substr(start, message.find(after, start) - start);
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  return text.replace(text.find(from), from.size(), to);
}

// Modules that spell jiasu and NumPy differently, and what messages should suggest in each.
struct Spelling {
  const char* name;
  const char* decorator;  // the kernel's
  Globals globals;
  const char* reach;  // how the kernel itself reaches jiasu.shared (a name the front end cannot guess)
  const char* cast;   // the conversion to int32 suggested
  const char* said;   // how messages name jiasu
};
std::ostream& operator<<(std::ostream& out, const Spelling& s) { return out << s.name; }

std::vector<Spelling> spellings() {
  return {
      {"Default", "@jiasu.kernel\n", {}, "jiasu", "jiasu.int32", "jiasu"},
      {"Undecorated", "", {}, "jiasu", "jiasu.int32", "jiasu"},
      {"Aliased", "@jk.kernel(debug=True)\n", {{"jk", module_value("jiasu")}, {"jiasu", kMissing}}, "jk", "jk.int32", "jk"},
      {"NumpyOnly", "", {{"jiasu", kMissing}, {"js", module_value("jiasu")}}, "js", "np.int32", "jiasu"},
      {"Neither", "", {{"jiasu", kMissing}, {"np", kMissing}, {"js", module_value("jiasu")}}, "js", "jiasu.int32", "jiasu"},
  };
}

// The module after following `message`: with jiasu imported where the message says to.
Globals followed(const Spelling& s, const std::string& message) {
  Globals globals = s.globals;
  if (message.find("after `import jiasu`") != std::string::npos) globals["jiasu"] = module_value("jiasu");
  return globals;
}

class CheckHints : public ::testing::TestWithParam<Spelling> {};

TEST_P(CheckHints, TheConversionSuggestedCompiles) {
  const Spelling& s = GetParam();
  std::string kernel = std::string(s.decorator) + "def k(a, out):\n    out[0] = a[0] * 2\n";
  std::string message = compile_error(kernel, s.globals, {array(DType::Float32), array(DType::Int32)});
  std::string code = suggestion(message, "e.g. with ", "(...)");
  EXPECT_EQ(code, s.cast) << message;
  Program program = check(python(replaced(kernel, "a[0] * 2", code + "(a[0] * 2)"), followed(s, message)),
                          {array(DType::Float32), array(DType::Int32)});
  EXPECT_EQ(program.kernel().body[0]->value->type, scalar(DType::Int32));
}

TEST_P(CheckHints, TheDTypeSuggestedCompiles) {
  const Spelling& s = GetParam();
  std::string kernel = std::string(s.decorator) + "def k(a):\n    t = " + s.reach + ".shared.array(4, a)\n";
  std::string message = compile_error(kernel, s.globals, {array(DType::Float32)});
  std::string code = suggestion(message, "such as ", ",");
  code = code.substr(0, code.find(" after"));
  EXPECT_EQ(code.substr(code.find('.')), ".float32") << message;
  Program program = check(python(replaced(kernel, "(4, a)", "(4, " + code + ")"), followed(s, message)),
                          {array(DType::Float32)});
  EXPECT_EQ(program.kernel().locals[0].type, Type::array(DType::Float32, 1, true, MemorySpace::Shared)) << code;
}

TEST_P(CheckHints, TheArraysSuggestedCompile) {
  const Spelling& s = GetParam();
  std::string kernel = std::string(s.decorator) + "def k(a):\n    b = a\n";
  std::string message = compile_error(kernel, s.globals, {array(DType::Float32)});
  for (const char* space : {"shared", "local"}) {
    std::string function = std::string(s.said) + "." + space + ".array";
    EXPECT_NE(message.find(function + "(...)"), std::string::npos) << message;
    Program program = check(python(replaced(kernel, "b = a", "b = " + function + "(4, float)"), followed(s, message)),
                            {array(DType::Float32)});
    EXPECT_EQ(program.kernel().locals[0].type, Type::array(DType::Float64, 1, true,
                                                           space[0] == 's' ? MemorySpace::Shared : MemorySpace::Local));
  }
}

INSTANTIATE_TEST_SUITE_P(Modules, CheckHints, ::testing::ValuesIn(spellings()),
                         [](const ::testing::TestParamInfo<Spelling>& info) { return std::string(info.param.name); });

TEST(CheckHints, ALocalVariableDoesNotPassForTheModule) {
  // `np` is a local here, so the suggestion cannot be np.int32.
  std::string message = compile_error("def k(a, out):\n    np = 1\n    out[0] = a[0] * np\n", {{"jiasu", kMissing}},
                                      {array(DType::Float32), array(DType::Int32)});
  EXPECT_EQ(suggestion(message, "e.g. with ", ")"), "jiasu.int32(...") << message;
  EXPECT_NE(message.find("after `import jiasu`"), std::string::npos) << message;
}

TEST(CheckHints, BoolIsSpelledAsTheModulesHaveIt) {
  std::string message = compile_error("def k(a, out):\n    out[0] = a[0]\n", {}, {array(DType::Int32), array(DType::Bool)});
  EXPECT_EQ(suggestion(message, "e.g. with ", "(...)"), "jiasu.bool_") << message;
  check(python("def k(a, out):\n    out[0] = jiasu.bool_(a[0])\n"), {array(DType::Int32), array(DType::Bool)});
}

TEST(CheckComplex, OperationsPythonRefusesOnComplexNumbersAreErrors) {
  const Globals modules{{"math", module_value("math")}, {"cmath", module_value("cmath")}};
  const std::vector<Type> z2 = {array(DType::Complex64), array(DType::Complex64)};
  EXPECT_EQ(compile_error("def k(a, b):\n    x = a[0] < b[0]\n", modules, z2),
            "unsupported operand types for <: complex64 and complex64");
  EXPECT_EQ(compile_error("def k(a, b):\n    x = a[0] // b[0]\n", modules, z2),
            "unsupported operand types for //: complex64 and complex64");
  EXPECT_EQ(compile_error("def k(a, b):\n    x = a[0] % 2\n", modules, z2),
            "unsupported operand types for %: complex64 and int64");
  EXPECT_EQ(compile_error("def k(a, b):\n    x = ~a[0]\n", modules, z2), "bad operand type for unary ~: complex64");
  EXPECT_EQ(compile_error("def k(a, b):\n    x = math.sqrt(a[0])\n", modules, z2),
            "math.sqrt() needs a real number, not complex64 (cmath.sqrt takes complex numbers)");
  EXPECT_EQ(compile_error("def k(a, b):\n    x = math.isnan(a[0])\n", modules, z2),
            "math.isnan() needs a real number, not complex64 (cmath.isnan takes complex numbers)");
  EXPECT_EQ(compile_error("def k(a, b):\n    x = int(a[0])\n", modules, z2), "int() needs a real number, not complex64");
  EXPECT_EQ(compile_error("def k(a, b):\n    x = min(a[0], b[0])\n", modules, z2),
            "min() needs a real number, not complex64");
  EXPECT_EQ(compile_error("def k(a, b):\n    x = cmath.rect(a[0], 1.0)\n", modules, z2),
            "cmath.rect() needs a real number, not complex64");
  EXPECT_EQ(compile_error("def k(a, b):\n    x = 1.5\n    x = a[0]\n", modules, z2).substr(0, 31),
            "variable 'x' was float64 (line ");
}

TEST(CheckComplex, ComplexArgumentsLiteralsAndCmathTypeAsPythonAndNumPy) {
  const Globals modules{{"math", module_value("math")}, {"cmath", module_value("cmath")}, {"np", module_value("numpy")}};
  auto local_type = [&](const std::string& body, const std::vector<Type>& signature, const std::string& name) {
    Program program = check(python("def k(a, s):\n" + body, modules), signature);
    for (const Local& local : program.kernel().locals)
      if (local.name == name) return to_string(local.type);
    return std::string("no local ") + name;
  };
  const std::vector<Type> c64 = {array(DType::Complex64), scalar(DType::Float32)};
  EXPECT_EQ(local_type("    x = a[0] * 2.5\n", c64, "x"), "complex64");       // a Python float adapts (NEP 50)
  EXPECT_EQ(local_type("    x = s + 1j\n", c64, "x"), "complex64");           // float32 with a Python complex
  EXPECT_EQ(local_type("    x = 1j * 2\n", c64, "x"), "complex128");
  EXPECT_EQ(local_type("    x = abs(a[0])\n", c64, "x"), "float32");
  EXPECT_EQ(local_type("    x = a[0].real\n", c64, "x"), "float32");
  EXPECT_EQ(local_type("    x = a[0].conjugate()\n", c64, "x"), "complex64");
  EXPECT_EQ(local_type("    x = cmath.exp(s)\n", c64, "x"), "complex64");
  EXPECT_EQ(local_type("    x = np.sqrt(a[0])\n", c64, "x"), "complex64");
  EXPECT_EQ(local_type("    x = cmath.phase(a[0])\n", c64, "x"), "float32");
  EXPECT_EQ(local_type("    x = cmath.polar(a[0])\n", c64, "x"), "tuple(float32, float32)");
  EXPECT_EQ(local_type("    x = complex(s, 2)\n", c64, "x"), "complex128");
  EXPECT_EQ(local_type("    x = a[0] / 2\n", c64, "x"), "complex64");
  EXPECT_EQ(local_type("    x = a[0] == s\n", c64, "x"), "bool");
}

}  // namespace
}  // namespace jiasu::fe
