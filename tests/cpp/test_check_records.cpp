// Records (NumPy structured dtypes) in kernels: the layout rules, the signature key's record entries, and
// check()'s typing of fields, record copies and record references.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "frontend_test_support.hpp"
#include "program/signature.hpp"

namespace jiasu::fe {
namespace {

using testing::array;
using testing::python;
using testing::scalar;

// np.dtype([("x", float64), ("n", int32), ("h", float32, (3, 2))], align=True)
std::shared_ptr<const RecordLayout> point_layout() {
  auto layout = std::make_shared<RecordLayout>();
  layout->itemsize = 40;
  layout->fields = {{"x", DType::Float64, 0, {}}, {"n", DType::Int32, 8, {}}, {"h", DType::Float32, 12, {3, 2}}};
  check_record_layout(*layout);
  return layout;
}

Type records(int ndim = 1) {
  Type t = array(DType::UInt8, ndim);
  t.record = point_layout();
  return t;
}

std::string bad_layout(RecordLayout layout) {
  try {
    check_record_layout(layout);
  } catch (const BadArgument& e) {
    return e.what();
  }
  return "no BadArgument";
}

TEST(RecordLayout, FieldsMustBeAlignedInEveryElement) {
  EXPECT_EQ(point_layout()->alignment, 8);
  RecordLayout packed{9, 1, {{"a", DType::Int8, 0, {}}, {"b", DType::Float64, 1, {}}}};
  EXPECT_EQ(bad_layout(packed),
            "record field 'b' (float64) is at offset 1, not aligned for its type: make the dtype with align=True");
  RecordLayout odd_size{9, 1, {{"b", DType::Float64, 0, {}}, {"a", DType::Int8, 8, {}}}};
  EXPECT_EQ(bad_layout(odd_size),
            "records of 9 bytes would hold fields misaligned in every other element: make the dtype with align=True");
  RecordLayout complex{12, 1, {{"i", DType::Int32, 0, {}}, {"z", DType::Complex64, 4, {}}}};  // aligned as its parts
  EXPECT_EQ(bad_layout(complex), "no BadArgument");
}

TEST(RecordLayout, SignatureKeysRoundTrip) {
  std::string key;
  append_record_key(key, *point_layout(), 2, false);
  append_record_key(key, *point_layout(), -1, true);
  const std::vector<Type> types = signature_types(key);
  ASSERT_EQ(types.size(), 2u);
  Type strided = records(2);
  strided.contiguous = false;
  EXPECT_EQ(types[0], strided);
  EXPECT_EQ(types[1], Type::record_of(point_layout()));
  EXPECT_EQ(describe_signature(key),
            "(array(record(x: float64, n: int32, h: float32[3, 2]), 2d, A), record(x: float64, n: int32, h: float32[3, 2]))");
  RecordLayout other = *point_layout();
  other.fields[1].name = "m";
  EXPECT_NE(Type::record_of(point_layout()), Type::record_of(std::make_shared<RecordLayout>(other)));
}

TEST(CheckRecords, FieldsRecordsAndCopiesAreTyped) {
  const Program program = check(python(R"(def k(p, r, out):
    i = jiasu.grid(1)
    q = p[i]
    q.x = r["x"] * 2.0
    p[i].n += 1
    out[i] = r[1] + q.h[2, 1]
    p[0] = r
    r.h = q.h
)"),
                                {records(), Type::record_of(point_layout()), array(DType::Float32, 1)});
  const Function& k = program.kernel();
  EXPECT_TRUE(k.params[0].written);
  EXPECT_TRUE(k.params[1].written);
  EXPECT_EQ(k.locals[1].name, "q");
  EXPECT_EQ(k.locals[1].type, Type::record_of(point_layout()));
  const Expr& store = *k.body[2]->targets[0];  // q.x
  EXPECT_EQ(store.kind, ExprKind::Attribute);
  EXPECT_EQ(store.type, scalar(DType::Float64));
  const Expr& by_name = *k.body[2]->value->args[0];  // r["x"]: rewritten to r.x
  EXPECT_EQ(by_name.kind, ExprKind::Attribute);
  EXPECT_EQ(by_name.name, "x");
  EXPECT_EQ(k.body[4]->value->args[0]->name, "n");  // r[1]: field 1
  EXPECT_EQ(k.body[4]->value->args[1]->args[0]->type, array(DType::Float32, 2));  // q.h
}

TEST(CheckRecords, AReadOnlyUseLeavesTheArrayUnwritten) {
  const Program program = check(python("def k(p, out):\n    out[0] = p[0].x + p[1]['n']\n"),
                                {records(), array(DType::Float64, 1)});
  EXPECT_FALSE(program.kernel().params[0].written);
}

struct Failure {
  std::string message;
  int line = 0, column = 0;
};

Failure failure(const std::string& kernel, const std::vector<Type>& signature) {
  try {
    check(python(kernel), signature);
  } catch (const CompileError& e) {
    return {e.message(), e.line(), e.column()};
  }
  return {"no CompileError"};
}

TEST(CheckRecords, MistakesNameTheRecord) {
  const Type r = Type::record_of(point_layout());
  const std::string point = "record(x: float64, n: int32, h: float32[3, 2])";
  Failure f = failure("def k(r):\n    r.y = 1\n", {r});
  EXPECT_EQ(f.message, "'y' is not a field of " + point);
  EXPECT_EQ(f.line, 2);
  EXPECT_EQ(failure("def k(r):\n    r[5] = 1\n", {r}).message, "record index 5 is out of range for 3 fields");
  EXPECT_EQ(failure("def k(r, i):\n    r[i] = 1\n", {r, scalar(DType::Int64)}).message,
            "a record is indexed by a field name or a constant integer");
  EXPECT_EQ(failure("def k(p, r):\n    p[0] = 1.5\n", {records(), r}).message,
            "cannot store float64 into an element of array(" + point + ", 1d, C) 'p'");
  EXPECT_EQ(failure("def k(r, a):\n    r.h = a\n", {r, array(DType::Float32, 1)}).message,
            "cannot store array(float32, 1d, C) into field 'h' of " + point + " 'r': it takes an array of 2 axes of "
            "float32");
  EXPECT_EQ(failure("def k(a):\n    a.x = 1\n", {array(DType::Float32, 1)}).message,
            "cannot assign to attribute 'x' of array(float32, 1d, C) 'a'");
  EXPECT_EQ(failure("def k(r):\n    r.h += 1\n", {r}).message,
            "'+=' is not supported on array(float32, 2d, C) 'r.h'");
}

}  // namespace
}  // namespace jiasu::fe
