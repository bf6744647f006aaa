// check(): functions defined inside kernels and device functions (nested defs), their captures, and the
// calls that pass tuples along: `*args` parameters and `*t` arguments.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "frontend_test_support.hpp"

namespace jiasu::fe {
namespace {

using testing::array;
using testing::device_function;
using testing::Globals;
using testing::int_value;
using testing::python;
using testing::scalar;

const Type kInt64 = scalar(DType::Int64);

Globals with_consumer() {
  return {{"consumer", device_function("def consumer(func, *args):\n    return func(*args)\n")},
          {"G", int_value(123)}};
}

TEST(CheckNested, ANestedDefIsADeviceFunctionCapturingConstants) {
  Program program = check(python(R"(def k(out, x):
    y = 10
    def inner(z):
        return y + z + G
    out[0] = inner(x)
)", with_consumer()), {array(DType::Int64), kInt64});
  ASSERT_EQ(program.functions.size(), 2u);
  const Function& inner = *program.functions[0];
  EXPECT_EQ(inner.name, "inner");
  EXPECT_FALSE(inner.is_kernel);
  EXPECT_EQ(inner.return_type, kInt64);
  EXPECT_EQ(inner.params[0].type, kInt64);
  const Function& k = program.kernel();
  EXPECT_EQ(k.body[1]->kind, StmtKind::Def);
  EXPECT_EQ(k.body[2]->value->callee, &inner);
  EXPECT_EQ(program.sources[0]->source.text, program.sources[1]->source.text);  // messages point into the kernel
}

TEST(CheckNested, NestedFunctionsPassToDeviceFunctionsWithTheRestAsATuple) {
  Program program = check(python(R"(def k(out, x):
    def ten():
        return 10
    def twice(v):
        def double(w):
            return 2 * w
        return double(v)
    out[0] = consumer(ten) + consumer(twice, x) + consumer(twice, 3)
)", with_consumer()), {array(DType::Int64), kInt64});
  // ten, consumer(ten), then double, twice and consumer(twice, v) for v = x and for the constant v = 3, the kernel
  ASSERT_EQ(program.functions.size(), 9u);
  const Function& with_ten = *program.functions[1];
  EXPECT_EQ(with_ten.name, "consumer");
  EXPECT_TRUE(with_ten.params[0].compile_time);  // the function is bound
  EXPECT_EQ(with_ten.params[1].type, Type::tuple({}));
  const Function& with_x = *program.functions[4];
  EXPECT_EQ(with_x.params[1].type, Type::tuple({kInt64}));
  EXPECT_FALSE(with_x.params[1].compile_time);
  EXPECT_TRUE(program.functions[7]->params[1].compile_time);  // a constant tuple binds, as a literal does
  EXPECT_EQ(program.functions[2]->name, "double");
}

TEST(CheckNested, EachSpecialisationOfTheEnclosingFunctionHasItsOwnNestedFunction) {
  Globals globals = with_consumer();
  globals["call_with"] = device_function(R"(def call_with(f, v):
    def bound():
        return f(v)
    return consumer(bound)
)", {{"consumer", globals["consumer"]}});
  globals["negate"] = device_function("def negate(v):\n    return -v\n");
  globals["square"] = device_function("def square(v):\n    return v * v\n");
  Program program = check(python("def k(out):\n    out[0] = call_with(negate, 2) + call_with(square, 3)\n", globals),
                          {array(DType::Int64)});
  int bound = 0;
  for (const auto& fn : program.functions) bound += fn->name == "bound";
  EXPECT_EQ(bound, 2);
}

struct ErrorCase {
  std::string kernel;
  std::string expected;  // "line:column: message"
};

void PrintTo(const ErrorCase& c, std::ostream* out) { *out << c.expected; }

class CheckNestedErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(CheckNestedErrors, NameTheProblemAtItsLocation) {
  std::string got = "no error";
  try {
    check(python(GetParam().kernel, with_consumer()), {array(DType::Int64), kInt64});
  } catch (const CompileError& e) {
    got = std::to_string(e.line()) + ":" + std::to_string(e.column()) + ": " + e.message();
  }
  EXPECT_EQ(got, GetParam().expected) << GetParam().kernel;
}

const std::string kCaptures =
    "; a nested function captures the constants its function assigns once before the def, as Numba does (pass other "
    "values as arguments)";

INSTANTIATE_TEST_SUITE_P(
    Captures, CheckNestedErrors,
    ::testing::Values(
        ErrorCase{"def k(out, x):\n    def f():\n        return x\n    out[0] = f()\n",
                  "3:16: cannot capture 'x': it is a parameter of 'k', known only when it runs" + kCaptures},
        ErrorCase{"def k(out, x):\n    y = x\n    def f():\n        return y\n    out[0] = f()\n",
                  "4:16: cannot capture 'y': variable 'y' of 'k' is not a constant" + kCaptures},
        ErrorCase{"def k(out, x):\n    y = 1\n    def f():\n        return y\n    y = 2\n    out[0] = f()\n",
                  "4:16: cannot capture 'y': variable 'y' of 'k' is assigned more than once" + kCaptures},
        ErrorCase{"def k(out, x):\n    def f():\n        return y\n    y = 2\n    out[0] = f()\n",
                  "3:16: cannot capture 'y': variable 'y' of 'k' is assigned after the def of 'f' (line 2)" + kCaptures},
        ErrorCase{"def k(out, x):\n    def f(v):\n        return f(v)\n    out[0] = f(1)\n",
                  "3:16: nested function 'f' calls itself: recursion is not supported in kernels"},
        ErrorCase{"def k(out, x):\n    if x:\n        def f():\n            return 1\n    else:\n        def f():\n"
                  "            return 2\n    out[0] = f()\n",
                  "3:9: 'f' is assigned more than once in 'k': a nested function is defined once, and its name is not "
                  "reassigned"},
        ErrorCase{"def k(out, x):\n    def x():\n        return 1\n",
                  "2:5: 'x' is a parameter of 'k': give the nested function a name of its own"},
        ErrorCase{"def k(out, x):\n    out[0] = f()\n    def f():\n        return 1\n",
                  "2:14: local variable 'f' is used before it is assigned"},
        ErrorCase{"def k(out, x):\n    if x:\n        def f():\n            return 1\n    out[0] = f()\n",
                  "5:14: local variable 'f' may be unassigned here: it is assigned at line 3, but not on every path "
                  "that reaches this line"},
        ErrorCase{"def k(out, *rest):\n    pass\n", "1:13: '*rest' is for device functions: a kernel takes one argument per parameter"},
        ErrorCase{"def k(out, x):\n    out[0] = consumer(x, *x)\n",
                  "2:27: cannot unpack int64 'x' with '*': only a tuple can be"},
        ErrorCase{"def k(out, x):\n    out[0] = consumer(x, args=(1,))\n",
                  "2:31: consumer() got an unexpected keyword argument 'args'"}));

}  // namespace
}  // namespace jiasu::fe
