// check(): name resolution and type inference. Kernels are written as Python source and parsed, so each
// test reads as the kernel a user would write. Expected promotions come from NumPy 2 (np.result_type).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "frontend/check.hpp"

namespace jiasu::fe {
namespace {

constexpr DType B = DType::Bool, I8 = DType::Int8, I16 = DType::Int16, I32 = DType::Int32, I64 = DType::Int64,
                U8 = DType::UInt8, U16 = DType::UInt16, U32 = DType::UInt32, U64 = DType::UInt64,
                F16 = DType::Float16, BF16 = DType::BFloat16, F32 = DType::Float32, F64 = DType::Float64;

Type S(DType d) { return Type::scalar(d); }
Type W(DType d) { return Type::scalar(d, true); }  // a weak (literal) scalar
Type A(DType d, int ndim = 1, bool contiguous = true) { return Type::array(d, ndim, contiguous); }
Type T(std::vector<Type> items) { return Type::tuple(std::move(items)); }
Type void_type() {
  Type t;
  t.kind = TypeKind::Void;
  return t;
}

GlobalValue global(GlobalValue::Kind kind) {
  GlobalValue g;
  g.kind = kind;
  return g;
}
GlobalValue module_global(const char* name) {
  GlobalValue g = global(GlobalValue::Module);
  g.name = name;
  return g;
}
GlobalValue int_global(int64_t value) {
  GlobalValue g = global(GlobalValue::Int);
  g.int_value = value;
  return g;
}
GlobalValue float_global(double value) {
  GlobalValue g = global(GlobalValue::Float);
  g.float_value = value;
  return g;
}
GlobalValue tuple_global(std::vector<GlobalValue> items) {
  GlobalValue g = global(GlobalValue::Tuple);
  g.items = std::move(items);
  return g;
}
GlobalValue dtype_global(DType dtype) {
  GlobalValue g = global(GlobalValue::DTypeValue);
  g.dtype = dtype;
  return g;
}

// A Python module as the resolver sees it: jiasu, numpy (as np) and math imported, plus what a test adds.
class TestModule {
 public:
  TestModule() {
    globals_["jiasu"] = module_global("jiasu");
    globals_["np"] = module_global("numpy");
    globals_["math"] = module_global("math");
  }
  TestModule(const TestModule&) = delete;

  void set(const std::string& name, GlobalValue value) { globals_[name] = std::move(value); }
  // A @jiasu.func named `name` with this source.
  void func(const std::string& name, const std::string& text) {
    GlobalValue g = global(GlobalValue::Function);
    g.function = source(text, name);
    set(name, g);
  }
  std::shared_ptr<FunctionSource> source(const std::string& text, const std::string& identity) {
    auto s = std::make_shared<FunctionSource>();
    s->source = SourceText{text, "k.py", 1};
    s->resolve = [this](const std::string& name) {
      auto it = globals_.find(name);
      return it == globals_.end() ? GlobalValue{} : it->second;
    };
    s->identity = identity;
    return s;
  }
  Program check(const std::string& kernel, const std::vector<Type>& signature) {
    return fe::check(source(kernel, "kernel"), signature);
  }

 private:
  std::map<std::string, GlobalValue> globals_;
};

struct Failure {
  std::string message;
  int line = 0;
  int column = 0;
};

Failure failure(TestModule& module, const std::string& kernel, const std::vector<Type>& signature) {
  try {
    module.check(kernel, signature);
  } catch (const CompileError& e) {
    return {e.message(), e.line(), e.column()};
  }
  ADD_FAILURE() << "no CompileError for:\n" << kernel;
  return {};
}

const Local* find_local(const Function& fn, const std::string& name) {
  for (const Local& local : fn.locals)
    if (local.name == name) return &local;
  return nullptr;
}

// ---------------------------------------------------------------------------------------------------
// promote()

const DType kPromoted[] = {B, I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64};

// np.result_type(row, column) for every pair of NumPy's own scalar types.
const DType kStrongTable[12][12] = {
    {B, I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64},
    {I8, I8, I16, I32, I64, I16, I32, I64, F64, F16, F32, F64},
    {I16, I16, I16, I32, I64, I16, I32, I64, F64, F32, F32, F64},
    {I32, I32, I32, I32, I64, I32, I32, I64, F64, F64, F64, F64},
    {I64, I64, I64, I64, I64, I64, I64, I64, F64, F64, F64, F64},
    {U8, I16, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64},
    {U16, I32, I32, I32, I64, U16, U16, U32, U64, F32, F32, F64},
    {U32, I64, I64, I64, I64, U32, U32, U32, U64, F64, F64, F64},
    {U64, F64, F64, F64, F64, U64, U64, U64, U64, F64, F64, F64},
    {F16, F16, F32, F64, F64, F16, F32, F64, F64, F16, F32, F64},
    {F32, F32, F32, F64, F64, F32, F32, F64, F64, F32, F32, F64},
    {F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64, F64},
};

TEST(CheckPromote, StrongPairsMatchNumPy) {
  for (int i = 0; i < 12; ++i)
    for (int j = 0; j < 12; ++j) {
      Type result = promote(S(kPromoted[i]), S(kPromoted[j]));
      EXPECT_EQ(result, S(kStrongTable[i][j])) << info(kPromoted[i]).name << " + " << info(kPromoted[j]).name;
    }
}

// NEP 50: np.result_type(T, 1) and np.result_type(T, 1.0).
TEST(CheckPromote, WeakLiteralsMatchNep50) {
  const DType with_int[] = {I64, I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64};
  const DType with_float[] = {F64, F64, F64, F64, F64, F64, F64, F64, F64, F16, F32, F64};
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(promote(S(kPromoted[i]), W(I64)), S(with_int[i])) << info(kPromoted[i]).name << " + 1";
    EXPECT_EQ(promote(W(I64), S(kPromoted[i])), S(with_int[i])) << "1 + " << info(kPromoted[i]).name;
    EXPECT_EQ(promote(S(kPromoted[i]), W(F64)), S(with_float[i])) << info(kPromoted[i]).name << " + 1.0";
  }
}

TEST(CheckPromote, TwoLiteralsStayALiteralOfTheHigherKind) {
  EXPECT_EQ(promote(W(I64), W(I64)), W(I64));
  EXPECT_EQ(promote(W(I64), W(F64)), W(F64));
  EXPECT_EQ(promote(W(F64), W(I64)), W(F64));
  EXPECT_EQ(promote(W(U64), W(I64)), W(U64));  // 2**63 + 1 keeps its range
}

// ml_dtypes promotes bfloat16 with few types; jiasu treats it as the other 16-bit float.
TEST(CheckPromote, BFloat16FollowsFloat16) {
  EXPECT_EQ(promote(S(BF16), S(BF16)), S(BF16));
  EXPECT_EQ(promote(S(BF16), S(F16)), S(F32));
  EXPECT_EQ(promote(S(BF16), S(I8)), S(BF16));   // as ml_dtypes
  EXPECT_EQ(promote(S(BF16), S(U8)), S(BF16));   // as ml_dtypes
  EXPECT_EQ(promote(S(BF16), S(I16)), S(F32));
  EXPECT_EQ(promote(S(BF16), S(I32)), S(F64));
  EXPECT_EQ(promote(S(BF16), S(F32)), S(F32));   // as ml_dtypes
  EXPECT_EQ(promote(S(BF16), W(F64)), S(BF16));
  EXPECT_EQ(promote(S(BF16), W(I64)), S(BF16));  // as ml_dtypes
}

TEST(CheckPromote, NonScalarsHaveNoPromotion) {
  EXPECT_EQ(promote(A(F32), S(F32)).kind, TypeKind::Unknown);
  EXPECT_EQ(promote(S(F32), T({S(F32)})).kind, TypeKind::Unknown);
}

TEST(CheckPromote, ComplexPromotesAsNumPy) {
  const DType C64 = DType::Complex64, C128 = DType::Complex128;
  EXPECT_EQ(promote(S(C64), S(F32)), S(C64));
  EXPECT_EQ(promote(S(C64), S(F64)), S(C128));
  EXPECT_EQ(promote(S(C64), S(I32)), S(C128));
  EXPECT_EQ(promote(S(C64), W(F64)), S(C64));    // a Python float adapts (NEP 50)
  EXPECT_EQ(promote(S(F32), W(C128)), S(C64));   // float32 with a Python complex: complex64
  EXPECT_EQ(promote(S(I16), W(C128)), S(C128));
  EXPECT_EQ(promote(W(I64), W(C128)), W(C128));  // two literals: the higher kind, still a literal
}

TEST(CheckBuiltins, TableIsConsistent) {
  for (int i = 0; i < builtin_count(); ++i) {
    EXPECT_EQ(find_builtin(builtin(i).path), i) << builtin(i).path;
    EXPECT_EQ(static_cast<int>(builtin(i).id), i) << builtin(i).path;
  }
  EXPECT_EQ(find_builtin("math.nope"), -1);
}

// ---------------------------------------------------------------------------------------------------
// The type of one expression, in a kernel with a parameter of every type

struct ExprCase {
  const char* expr;
  Type type;
};
std::ostream& operator<<(std::ostream& out, const ExprCase& c) { return out << c.expr; }

const char* const kParams = "i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32, f64, b, xs, m2, ys, us";
const std::vector<Type> kParamTypes = {S(I8),  S(I16), S(I32), S(I64), S(U8), S(U16), S(U32), S(U64), S(F16),
                                       S(BF16), S(F32), S(F64), S(B),  A(F32), A(F64, 2, false), A(I32), A(U32)};

Type type_of(const std::string& expr) {
  TestModule module;
  Program program = module.check("def k(" + std::string(kParams) + "):\n    " + expr + "\n", kParamTypes);
  return program.kernel().body[0]->value->type;
}

class CheckExprType : public ::testing::TestWithParam<ExprCase> {};

TEST_P(CheckExprType, IsInferred) { EXPECT_EQ(to_string(type_of(GetParam().expr)), to_string(GetParam().type)); }
TEST_P(CheckExprType, KeepsWeakness) { EXPECT_EQ(type_of(GetParam().expr).weak, GetParam().type.weak) << GetParam().expr; }

INSTANTIATE_TEST_SUITE_P(Arithmetic, CheckExprType, ::testing::Values(
    ExprCase{"i8 + 1", S(I8)}, ExprCase{"i8 + i16", S(I16)}, ExprCase{"u8 + i8", S(I16)},
    ExprCase{"u64 + i64", S(F64)}, ExprCase{"f32 * 2.0", S(F32)}, ExprCase{"i32 * 2.0", S(F64)},
    ExprCase{"1 + 2", W(I64)}, ExprCase{"1 + 2.0", W(F64)}, ExprCase{"b + b", S(I64)}, ExprCase{"b + 1", S(I64)},
    ExprCase{"i32 / i32", S(F64)}, ExprCase{"f32 / f32", S(F32)}, ExprCase{"f16 / 2", S(F16)},
    ExprCase{"1 / 2", W(F64)}, ExprCase{"i64 // 2", S(I64)}, ExprCase{"f32 // 2", S(F32)},
    ExprCase{"i32 % 3", S(I32)}, ExprCase{"f64 % 2.5", S(F64)}, ExprCase{"i32 ** 2", S(I32)},
    ExprCase{"f32 ** 2", S(F32)}, ExprCase{"i8 + f16", S(F16)}, ExprCase{"i16 + f16", S(F32)},
    ExprCase{"f16 + bf16", S(F32)}, ExprCase{"i8 * bf16", S(BF16)}, ExprCase{"u8 - 1", S(U8)}));

INSTANTIATE_TEST_SUITE_P(BitsUnaryCompare, CheckExprType, ::testing::Values(
    ExprCase{"i32 & 1", S(I32)}, ExprCase{"u8 | u16", S(U16)}, ExprCase{"b & b", S(B)}, ExprCase{"b ^ i8", S(I8)},
    ExprCase{"u8 << 2", S(U8)}, ExprCase{"i64 >> i32", S(I64)}, ExprCase{"-i8", S(I8)}, ExprCase{"-b", S(I64)},
    ExprCase{"+f32", S(F32)}, ExprCase{"~u32", S(U32)}, ExprCase{"~b", S(B)}, ExprCase{"not f32", S(B)},
    ExprCase{"-1", W(I64)}, ExprCase{"i32 < f32", S(B)}, ExprCase{"0 <= i32 < i64", S(B)},
    ExprCase{"f32 == 1.0", S(B)}, ExprCase{"b and b", S(B)}, ExprCase{"b or i32 > 0", S(B)},
    ExprCase{"i32 and f32", S(F64)}, ExprCase{"i32 or 1", S(I32)}, ExprCase{"f32 if b else 1.0", S(F32)},
    ExprCase{"i32 if b else f32", S(F64)}, ExprCase{"(i32, 1.0)", T({S(I32), W(F64)})}));

INSTANTIATE_TEST_SUITE_P(Arrays, CheckExprType, ::testing::Values(
    ExprCase{"xs[i32]", S(F32)}, ExprCase{"m2[i64, u8]", S(F64)}, ExprCase{"xs[-1]", S(F32)},
    ExprCase{"xs.size", S(I64)}, ExprCase{"xs.shape", T({S(I64)})}, ExprCase{"m2.shape", T({S(I64), S(I64)})},
    ExprCase{"m2.shape[1]", S(I64)}, ExprCase{"m2.shape[-1]", S(I64)}, ExprCase{"m2.ndim", W(I64)},
    ExprCase{"len(xs)", S(I64)}, ExprCase{"len(m2.shape)", W(I64)}));

INSTANTIATE_TEST_SUITE_P(PythonBuiltins, CheckExprType, ::testing::Values(
    ExprCase{"min(i32, 1)", S(I32)}, ExprCase{"max(i8, u8, 2.0)", S(F64)}, ExprCase{"max(f32, 1)", S(F32)},
    ExprCase{"min(1, 2)", W(I64)}, ExprCase{"abs(i8)", S(I8)}, ExprCase{"abs(b)", S(I64)},
    ExprCase{"abs(-2.5)", W(F64)}, ExprCase{"round(f32)", S(I64)}, ExprCase{"round(f32, 2)", S(F32)},
    ExprCase{"int(f32)", S(I64)}, ExprCase{"float(i8)", S(F64)}, ExprCase{"bool(i32)", S(B)}));

INSTANTIATE_TEST_SUITE_P(Math, CheckExprType, ::testing::Values(
    ExprCase{"math.sqrt(i32)", S(F64)}, ExprCase{"math.sqrt(f32)", S(F32)}, ExprCase{"math.sqrt(f16)", S(F16)},
    ExprCase{"math.exp(bf16)", S(BF16)}, ExprCase{"math.sqrt(2)", W(F64)}, ExprCase{"np.sqrt(f32)", S(F32)},
    ExprCase{"np.arctan2(f32, 1)", S(F32)}, ExprCase{"math.atan2(f32, 1)", S(F32)},
    ExprCase{"math.pow(i32, f32)", S(F64)}, ExprCase{"math.floor(f32)", S(I64)}, ExprCase{"math.isnan(f64)", S(B)},
    ExprCase{"math.pi", W(F64)}, ExprCase{"np.pi", W(F64)}, ExprCase{"math.inf * f32", S(F32)},
    ExprCase{"jiasu.fma(f32, f32, 1.0)", S(F32)}, ExprCase{"jiasu.fma(i32, i32, i32)", S(F64)},
    ExprCase{"np.abs(i16)", S(I16)}, ExprCase{"np.maximum(f16, f32)", S(F32)}));

INSTANTIATE_TEST_SUITE_P(Threads, CheckExprType, ::testing::Values(
    ExprCase{"jiasu.grid(1)", S(I64)}, ExprCase{"jiasu.grid(2)", T({S(I64), S(I64)})},
    ExprCase{"jiasu.gridsize(3)", T({S(I64), S(I64), S(I64)})}, ExprCase{"jiasu.threadIdx.x", S(I64)},
    ExprCase{"jiasu.blockDim.y", S(I64)}, ExprCase{"jiasu.gridDim.z", S(I64)}, ExprCase{"jiasu.laneid", S(I64)},
    ExprCase{"jiasu.warpsize", S(I64)}, ExprCase{"jiasu.syncthreads()", void_type()},
    ExprCase{"jiasu.syncthreads_count(b)", S(I32)}, ExprCase{"jiasu.syncthreads_and(i32)", S(B)},
    ExprCase{"jiasu.syncthreads_or(b)", S(B)}, ExprCase{"jiasu.syncwarp()", void_type()},
    ExprCase{"jiasu.syncwarp(0xffffffff)", void_type()}, ExprCase{"jiasu.threadfence()", void_type()}));

INSTANTIATE_TEST_SUITE_P(AtomicsWarpsBits, CheckExprType, ::testing::Values(
    ExprCase{"jiasu.atomic.add(xs, i32, 1)", S(F32)}, ExprCase{"jiasu.atomic.max(m2, (i32, 0), f64)", S(F64)},
    ExprCase{"jiasu.atomic.sub(ys, u8, b)", S(I32)}, ExprCase{"jiasu.atomic.and_(ys, 0, 3)", S(I32)},
    ExprCase{"jiasu.atomic.exch(us, 0, u32)", S(U32)}, ExprCase{"jiasu.atomic.cas(ys, 0, 1, 2)", S(I32)},
    ExprCase{"jiasu.atomic.inc(us, 0, 10)", S(U32)}, ExprCase{"jiasu.shfl_sync(0xffffffff, f32, 0)", S(F32)},
    ExprCase{"jiasu.shfl_down_sync(0xffffffff, 1, 2)", S(I64)}, ExprCase{"jiasu.shfl_xor_sync(-1, u64, 1)", S(U64)},
    ExprCase{"jiasu.ballot_sync(0xffffffff, b)", S(U32)}, ExprCase{"jiasu.any_sync(0xffffffff, i32 > 0)", S(B)},
    ExprCase{"jiasu.all_sync(1, i32)", S(B)}, ExprCase{"jiasu.activemask()", S(U32)},
    ExprCase{"jiasu.popc(u32)", S(I32)}, ExprCase{"jiasu.clz(i64)", S(I32)}, ExprCase{"jiasu.ffs(i8)", S(I32)},
    ExprCase{"jiasu.brev(u32)", S(U32)}, ExprCase{"jiasu.brev(i64)", S(U64)}));

INSTANTIATE_TEST_SUITE_P(Casts, CheckExprType, ::testing::Values(
    ExprCase{"np.float32(i64)", S(F32)}, ExprCase{"jiasu.float16(1)", S(F16)}, ExprCase{"np.uint8(f32)", S(U8)},
    ExprCase{"jiasu.bfloat16(f32)", S(BF16)}, ExprCase{"np.bool_(i32)", S(B)}, ExprCase{"np.float32(2) * 3.0", S(F32)}));

// ---------------------------------------------------------------------------------------------------
// Statements, variables, meanings

TEST(Check, TheSeedKernel) {
  TestModule module;
  Program program = module.check(R"(def add(x, y, out):
    i = jiasu.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]
)", {A(F32), A(F32), A(F32)});
  ASSERT_EQ(program.functions.size(), 1u);
  const Function& k = program.kernel();
  EXPECT_TRUE(k.is_kernel);
  EXPECT_EQ(k.mangled_name, "jiasu_kernel_add");
  EXPECT_EQ(k.return_type.kind, TypeKind::Void);
  ASSERT_EQ(k.locals.size(), 1u);
  EXPECT_EQ(k.locals[0].name, "i");
  EXPECT_EQ(k.locals[0].type, S(I64));
  EXPECT_EQ(k.locals[0].first_assigned.line, 2);
  EXPECT_FALSE(k.params[0].written);
  EXPECT_FALSE(k.params[1].written);
  EXPECT_TRUE(k.params[2].written);
  const Expr& call = *k.body[0]->value;
  EXPECT_EQ(call.meaning, Meaning::Builtin);
  EXPECT_EQ(builtin(call.builtin).id, BuiltinId::Grid);
  EXPECT_EQ(call.args[0]->meaning, Meaning::Builtin);
  EXPECT_EQ(call.args[0]->args[0]->meaning, Meaning::Module);
  EXPECT_EQ(k.body[1]->test->type, S(B));
  EXPECT_EQ(program.sources.size(), 1u);
}

TEST(Check, VariablesKeepTheirFirstTypeAndLiteralsAdapt) {
  TestModule module;
  Program program = module.check(R"(def k(a, n):
    total = 0
    acc = 0.0
    for i in range(n):
        total = total + 1
        acc += a[i]
        if a[i] > 0:
            last = a[i]
            a[1] = last
    acc = 1
    a[0] = acc + total
)", {A(F32), S(I32)});
  const Function& k = program.kernel();
  EXPECT_EQ(find_local(k, "total")->type, S(I64));
  EXPECT_EQ(find_local(k, "acc")->type, S(F64));
  EXPECT_EQ(find_local(k, "i")->type, S(I32));  // range(n) over an int32 bound
  EXPECT_EQ(find_local(k, "last")->type, S(F32));
  EXPECT_EQ(find_local(k, "last")->first_assigned.line, 8);
  std::vector<std::string> order;
  for (const Local& l : k.locals) order.push_back(l.name);
  EXPECT_EQ(order, (std::vector<std::string>{"total", "acc", "i", "last"}));
}

TEST(Check, LoopVariableIsInt64UnlessEveryBoundSharesAType) {
  TestModule module;
  Program program = module.check(R"(def k(n, m):
    for a in range(10):
        pass
    for b in range(0, n):
        pass
    for c in range(n, m, n):
        pass
    for d in range(m):
        pass
)", {S(I32), S(I32)});
  const Function& k = program.kernel();
  EXPECT_EQ(find_local(k, "a")->type, S(I64));
  EXPECT_EQ(find_local(k, "b")->type, S(I64));
  EXPECT_EQ(find_local(k, "c")->type, S(I32));
  EXPECT_EQ(find_local(k, "d")->type, S(I32));
  EXPECT_EQ(k.body[0]->value->type.kind, TypeKind::Range);
}

TEST(Check, ALoopVariableReusedKeepsItsTypeWhenItHoldsTheBounds) {
  TestModule module;
  Program program = module.check(R"(def k(n, m):
    for i in range(n):
        pass
    for i in range(4, 10):
        pass
    for j in range(10):
        pass
    for j in range(n):
        pass
)", {S(I32), S(I64)});
  EXPECT_EQ(find_local(program.kernel(), "i")->type, S(I32));
  EXPECT_EQ(find_local(program.kernel(), "j")->type, S(I64));  // int64 holds every int32
  Failure f = failure(module, "def k(n, m):\n    for i in range(n):\n        pass\n    for i in range(m):\n        pass\n",
                      {S(I32), S(I64)});
  EXPECT_EQ(f.message, "variable 'i' was int32 (line 2) but is assigned int64 here");
  EXPECT_EQ(f.line, 4);
  EXPECT_EQ(f.column, 9);
}

// A Python number passed to a kernel arrives weak (the signature says so) and adapts like a literal.
TEST(Check, WeakScalarParametersAdapt) {
  TestModule module;
  Program program = module.check(R"(def k(a, s, big):
    a[0] = a[1] * s
    s = s + 1
    x = big & 18446744073709551615
    if s > 0:
        return None
    return
)", {A(F32), W(F64), S(U64)});
  const Function& k = program.kernel();
  EXPECT_EQ(k.body[0]->value->type, S(F32));
  EXPECT_EQ(k.params[1].type, W(F64));
  EXPECT_EQ(find_local(k, "x")->type, S(U64));
  EXPECT_EQ(k.body[3]->body[0]->value, nullptr);  // `return None` is a bare return
  EXPECT_EQ(failure(module, "def k(a):\n    a[0] = a[0] + 18446744073709551615\n", {A(I64)}).message,
            "Python integer 18446744073709551615 is out of bounds for int64");
}

TEST(Check, TupleUnpackingAndSwaps) {
  TestModule module;
  Program program = module.check(R"(def k(a):
    i, j = jiasu.grid(2)
    x, y = a[i, j], 1.0
    x, y = y, x
    s = a.shape
    a[i, j] = x + y + s[0]
)", {A(F64, 2)});
  const Function& k = program.kernel();
  EXPECT_EQ(find_local(k, "i")->type, S(I64));
  EXPECT_EQ(find_local(k, "j")->type, S(I64));
  EXPECT_EQ(find_local(k, "x")->type, S(F64));
  EXPECT_EQ(find_local(k, "y")->type, S(F64));
  EXPECT_EQ(find_local(k, "s")->type, T({S(I64), S(I64)}));
}

TEST(Check, WrittenMarksStoresAndAtomicsOnly) {
  TestModule module;
  Program program = module.check(R"(def k(src, dst, counts, table, n):
    i = jiasu.grid(1)
    dst[i] = src[i] + table[0]
    jiasu.atomic.add(counts, 0, 1)
    x = table[i]
    x += n
)", {A(F32), A(F32), A(I32), A(F32), S(I64)});
  const Function& k = program.kernel();
  EXPECT_FALSE(k.params[0].written);
  EXPECT_TRUE(k.params[1].written);
  EXPECT_TRUE(k.params[2].written);
  EXPECT_FALSE(k.params[3].written);
  EXPECT_FALSE(k.params[4].written);
}

TEST(Check, AugmentedAssignmentCastsWithinAKind) {
  TestModule module;
  Program program = module.check(R"(def k(a, counts, x):
    a[0] += x
    counts[0] += 1
    counts[1] <<= 2
    v = a[0]
    v *= 2.0
    a[1] = counts[0]
)", {A(F32), A(U8), S(F64)});
  EXPECT_TRUE(program.kernel().params[0].written);
  EXPECT_TRUE(program.kernel().params[1].written);
  EXPECT_EQ(find_local(program.kernel(), "v")->type, S(F32));
}

TEST(Check, SharedAndLocalArrays) {
  TestModule module;
  Program program = module.check(R"(def k(a):
    s = jiasu.shared.array(128, np.float32)
    t = jiasu.local.array(dtype=np.int32, shape=(4, 2))
    s[0] = a[0]
    t[1, 1] = len(s) + t.shape[0] + s.size
    a[0] = s.shape[0]
)", {A(F32)});
  const Function& k = program.kernel();
  EXPECT_EQ(find_local(k, "s")->type, Type::array(F32, 1, true, MemorySpace::Shared));
  EXPECT_EQ(find_local(k, "t")->type, Type::array(I32, 2, true, MemorySpace::Local));
  EXPECT_FALSE(k.uses_dynamic_shared);
  const Expr& new_local = *k.body[1]->value;  // keywords moved into (shape, dtype) order
  EXPECT_TRUE(new_local.keywords.empty());
  ASSERT_EQ(new_local.args.size(), 3u);
  EXPECT_EQ(new_local.args[1]->kind, ExprKind::Tuple);
  EXPECT_EQ(new_local.args[2]->meaning, Meaning::DTypeValue);
  // len(s) + t.shape[0] + s.size: every term folded to a constant
  const Expr& sum = *k.body[3]->value;
  const Expr& left = *sum.args[0];
  EXPECT_EQ(left.args[0]->meaning, Meaning::Constant);
  EXPECT_EQ(left.args[0]->int_value, 128);
  EXPECT_EQ(left.args[1]->meaning, Meaning::Constant);
  EXPECT_EQ(left.args[1]->int_value, 4);
  EXPECT_EQ(sum.args[1]->int_value, 128);
  EXPECT_EQ(k.body[4]->value->int_value, 128);
  EXPECT_EQ(k.body[4]->value->type, S(I64));
}

TEST(Check, DynamicSharedMemory) {
  TestModule module;
  Program program = module.check(R"(def k(a):
    s = jiasu.shared.array(0, dtype=np.float64)
    s[jiasu.threadIdx.x] = a[0]
)", {A(F64)});
  EXPECT_TRUE(program.kernel().uses_dynamic_shared);
  EXPECT_EQ(find_local(program.kernel(), "s")->type, Type::array(F64, 1, true, MemorySpace::Shared));
}

TEST(Check, GlobalsAreConstantsModulesAndDTypes) {
  TestModule module;
  module.set("N", int_global(4));
  module.set("SCALE", float_global(0.5));
  module.set("SIZES", tuple_global({int_global(2), float_global(1.5), tuple_global({int_global(7)})}));
  module.set("numpy", module_global("numpy"));
  module.set("real", dtype_global(F16));
  module.set("ON", [] {
    GlobalValue g = global(GlobalValue::Bool);
    g.int_value = 1;
    return g;
  }());
  Program program = module.check(R"(def k(a):
    a[0] = N * a[1]
    a[1] = SCALE * a[2]
    a[2] = SIZES[1] + SIZES[-1][0] + len(SIZES)
    a[3] = real(numpy.float64(N)) if ON else a[3]
    s = jiasu.shared.array(SIZES[0] * N, real)
)", {A(F32)});
  const Function& k = program.kernel();
  const Expr& n_times = *k.body[0]->value;
  EXPECT_EQ(n_times.type, S(F32));  // a Python int global is weak
  EXPECT_EQ(n_times.args[0]->meaning, Meaning::Constant);
  EXPECT_EQ(n_times.args[0]->int_value, 4);
  EXPECT_EQ(k.body[1]->value->args[0]->float_value, 0.5);
  const Expr& sum = *k.body[2]->value;
  const Expr& item = *sum.args[0]->args[0];  // SIZES[1] folded to its value
  EXPECT_EQ(item.meaning, Meaning::Constant);
  EXPECT_EQ(item.kind, ExprKind::Float);
  EXPECT_EQ(item.float_value, 1.5);
  EXPECT_EQ(sum.args[0]->args[1]->int_value, 7);
  EXPECT_EQ(sum.args[1]->int_value, 3);
  const Expr& cast = *k.body[3]->value->args[1];
  EXPECT_EQ(cast.type, S(F16));
  EXPECT_EQ(cast.meaning, Meaning::DTypeValue);
  EXPECT_EQ(cast.args[1]->args[0]->args[0]->type.name, "numpy");  // the module under another name
  EXPECT_EQ(find_local(k, "s")->type, Type::array(F16, 1, true, MemorySpace::Shared));
}

TEST(Check, UserGlobalsShadowPythonBuiltins) {
  TestModule module;
  module.set("min", int_global(3));
  Program program = module.check("def k(a):\n    a[0] = min + max(a[1], 2)\n", {A(I64)});
  const Expr& sum = *program.kernel().body[0]->value;
  EXPECT_EQ(sum.args[0]->meaning, Meaning::Constant);
  EXPECT_EQ(sum.args[1]->meaning, Meaning::Builtin);
}

// ---------------------------------------------------------------------------------------------------
// Device functions

TEST(CheckDevice, SpecialisedOncePerArgumentTypes) {
  TestModule module;
  module.func("scale", "def scale(x, f):\n    return x * f\n");
  Program program = module.check(R"(def k(a, b, n):
    a[0] = scale(a[1], 2.0)
    a[1] = scale(a[2], 3.0)
    b[0] = scale(b[1], n)
    b[1] = scale(f=n, x=b[2])
)", {A(F32), A(F64), S(I32)});
  ASSERT_EQ(program.functions.size(), 3u);
  const Function& first = *program.functions[0];
  const Function& second = *program.functions[1];
  EXPECT_FALSE(first.is_kernel);
  EXPECT_EQ(first.mangled_name, "jiasu_fn_scale_0");
  EXPECT_EQ(second.mangled_name, "jiasu_fn_scale_1");
  EXPECT_EQ(first.params[0].type, S(F32));
  EXPECT_EQ(first.params[1].type, S(F64));  // a literal argument commits, like an assignment
  EXPECT_EQ(first.return_type, S(F64));
  EXPECT_EQ(second.params[1].type, S(I32));
  EXPECT_EQ(second.return_type, S(F64));
  const Function& k = program.kernel();
  EXPECT_EQ(k.body[0]->value->callee, &first);
  EXPECT_EQ(k.body[1]->value->callee, &first);
  EXPECT_EQ(k.body[2]->value->callee, &second);
  EXPECT_EQ(k.body[3]->value->callee, &second);
  EXPECT_EQ(k.body[0]->value->meaning, Meaning::DeviceFunction);
  EXPECT_EQ(k.body[3]->value->args[1]->args[0]->name, "b");  // keywords moved into parameter order
  EXPECT_TRUE(k.body[3]->value->keywords.empty());
  EXPECT_EQ(program.sources[0]->identity, "scale");
  EXPECT_EQ(program.sources[2]->identity, "kernel");
}

TEST(CheckDevice, CalleesComeBeforeCallersAndPassOnWrites) {
  TestModule module;
  module.func("store", "def store(arr, i, v):\n    arr[i] = v\n");
  module.func("fill", "def fill(arr, v):\n    for i in range(len(arr)):\n        store(arr, i, v)\n");
  module.func("peek", "def peek(arr):\n    return arr[0]\n");
  Program program = module.check(R"(def k(a, b):
    fill(a, 1.5)
    b[0] = peek(a) + peek(b)
)", {A(F32), A(F32, 1, false)});
  ASSERT_EQ(program.functions.size(), 5u);
  EXPECT_EQ(program.functions[0]->name, "store");
  EXPECT_EQ(program.functions[1]->name, "fill");
  EXPECT_EQ(program.functions[2]->name, "peek");
  EXPECT_EQ(program.functions[3]->name, "peek");  // a non-contiguous array is another specialisation
  EXPECT_EQ(program.functions[0]->return_type.kind, TypeKind::Void);
  EXPECT_TRUE(program.functions[0]->params[0].written);
  EXPECT_TRUE(program.functions[1]->params[0].written);
  EXPECT_FALSE(program.functions[2]->params[0].written);
  EXPECT_TRUE(program.kernel().params[0].written);
  EXPECT_TRUE(program.kernel().params[1].written);
  EXPECT_EQ(program.functions[2]->return_type, S(F32));
}

TEST(CheckDevice, ReturnsPromoteTogether) {
  TestModule module;
  module.func("clamp", R"(def clamp(x, hi):
    if x > hi:
        return hi
    elif x < 0:
        return 0
    return x
)");
  module.func("sign", R"(def sign(x):
    while True:
        if x > 0:
            return 1
        return -1.5
)");
  Program program = module.check("def k(a, n):\n    a[0] = clamp(a[1], n) + sign(n)\n", {A(F32), S(I64)});
  EXPECT_EQ(program.functions[0]->return_type, S(F64));  // float32 with int64
  EXPECT_EQ(program.functions[1]->return_type, S(F64));  // two literals commit
}

TEST(CheckDevice, DynamicSharedMemoryReachesTheKernel) {
  TestModule module;
  module.func("scratch", "def scratch(i):\n    s = jiasu.shared.array(0, np.int32)\n    s[i] = 1\n");
  Program program = module.check("def k(a):\n    scratch(0)\n", {A(F32)});
  EXPECT_TRUE(program.functions[0]->uses_dynamic_shared);
  EXPECT_TRUE(program.kernel().uses_dynamic_shared);
}

// ---------------------------------------------------------------------------------------------------
// Errors: message and location

struct ErrorCase {
  const char* name;
  const char* source;
  std::vector<Type> signature;
  const char* message;
  int line;
  int column;
};
std::ostream& operator<<(std::ostream& out, const ErrorCase& c) { return out << c.name; }

class CheckError : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(CheckError, NamesTheProblemWhereItIs) {
  const ErrorCase& c = GetParam();
  TestModule module;
  module.set("os", [] {
    GlobalValue g = global(GlobalValue::Unsupported);
    g.name = "module";
    return g;
  }());
  module.set("lookup", [] {
    GlobalValue g = global(GlobalValue::Unsupported);
    g.name = "dict";
    return g;
  }());
  module.func("twice", "def twice(x):\n    return 2 * x\n");
  module.func("loop", "def loop(x):\n    return loop(x - 1)\n");
  module.func("maybe", "def maybe(x):\n    if x > 0:\n        return x\n");
  module.func("mixed", "def mixed(x):\n    if x > 0:\n        return\n    return x\n");
  Failure f = failure(module, c.source, c.signature);
  EXPECT_EQ(f.message, c.message);
  EXPECT_EQ(f.line, c.line) << f.message;
  EXPECT_EQ(f.column, c.column) << f.message;
}

const std::vector<Type> kF32Array = {A(F32)};
const std::vector<Type> kArrayAndInt = {A(F32), S(I64)};

INSTANTIATE_TEST_SUITE_P(Names, CheckError, ::testing::Values(
    ErrorCase{"Undefined", "def k(a):\n    a[0] = foo\n", kF32Array, "name 'foo' is not defined", 2, 12},
    ErrorCase{"UnsupportedGlobal", "def k(a):\n    a[0] = lookup[1]\n", kF32Array,
              "global 'lookup' is a dict; kernels can use numbers, tuples of numbers, NumPy arrays (as constants), "
              "dtypes, the modules math, cmath, numpy and jiasu, the operator module's functions and @jiasu.func "
              "functions", 2, 12},
    ErrorCase{"UsedBeforeAssigned", "def k(a):\n    a[0] = x\n    x = 1\n", kF32Array,
              "local variable 'x' is used before it is assigned", 2, 12},
    ErrorCase{"NumpyAttribute", "def k(a):\n    a[0] = np.linalg\n", kF32Array, "'numpy.linalg' is not supported in kernels", 2, 15},
    ErrorCase{"JiasuAttribute", "def k(a):\n    jiasu.atomic.mul(a, 0, 1)\n", kF32Array,
              "'jiasu.atomic.mul' is not supported in kernels", 2, 18},
    ErrorCase{"ScalarAttribute", "def k(a, n):\n    a[0] = n.angle\n", kArrayAndInt,
              "'angle' is not an attribute of int64 values in kernels", 2, 14},
    ErrorCase{"ArrayAttribute", "def k(a):\n    a[0] = a.T[0]\n", kF32Array,
              "array attribute 'T' is not supported in kernels (shape, size, ndim, real and imag are)", 2, 14},
    ErrorCase{"NotCallable", "def k(a, n):\n    a[0] = n(1)\n", kArrayAndInt, "'n' is not callable: it is int64", 2, 12},
    ErrorCase{"ValueBuiltinCalled", "def k(a):\n    a[0] = jiasu.threadIdx.x()\n", kF32Array,
              "'jiasu.threadIdx.x' is not callable: it is int64", 2, 12}));

INSTANTIATE_TEST_SUITE_P(Variables, CheckError, ::testing::Values(
    ErrorCase{"TypeConflict", "def k(a):\n    x = 0\n    if a[0] > 0:\n        x = a[0]\n", kF32Array,
              "variable 'x' was int64 (line 2) but is assigned float32 here", 4, 9},
    ErrorCase{"FloatLiteralIntoInt", "def k(a):\n    x = 0\n    x = 0.5\n", kF32Array,
              "variable 'x' was int64 (line 2) but is assigned float64 here", 3, 5},
    ErrorCase{"ParameterConflict", "def k(a, n):\n    n = a[0]\n", kArrayAndInt,
              "parameter 'n' is int64 but is assigned float32 here", 2, 5},
    ErrorCase{"ArrayAlias", "def k(a):\n    b = a\n", kF32Array,
              "cannot assign array(float32, 1d, C) to 'b': arrays cannot be copied or aliased; only "
              "jiasu.shared.array(...) and jiasu.local.array(...) can be assigned to a variable", 2, 5},
    ErrorCase{"ArrayParameterAssigned", "def k(a):\n    a = 1\n", kF32Array, "cannot assign to array parameter 'a'", 2, 5},
    ErrorCase{"AssignVoid", "def k(a):\n    x = jiasu.syncthreads()\n", kF32Array,
              "cannot assign a call that returns nothing to 'x': variables hold numbers, tuples of numbers, "
              "shared/local arrays and grid groups", 2, 5},
    ErrorCase{"UnpackCount", "def k(a):\n    i, j = jiasu.grid(3)\n", kF32Array,
              "cannot unpack a tuple of 3 values into 2 targets", 2, 5},
    ErrorCase{"UnpackScalar", "def k(a):\n    i, j = a[0]\n", kF32Array, "cannot unpack float32 into 2 targets", 2, 5},
    ErrorCase{"TupleImmutable", "def k(a):\n    t = (1, 2)\n    t[0] = 3\n", kF32Array,
              "tuples are immutable: cannot assign to an item of 't'", 3, 5},
    ErrorCase{"AugAssignNarrowsKind", "def k(a, n):\n    n += a[0]\n", kArrayAndInt,
              "'n += ...' gives float64, which cannot be stored back into int64", 2, 5},
    ErrorCase{"FloatIntoIntArray", "def k(a, out):\n    out[0] = a[0]\n", {A(F32), A(I32)},
              "cannot store float32 into an element of array(int32, 1d, C) 'out' (convert explicitly, e.g. with "
              "jiasu.int32(...))", 2, 5},
    ErrorCase{"LiteralOutOfBounds", "def k(a):\n    a[0] = a[1] + 300\n", {A(U8)},
              "Python integer 300 is out of bounds for uint8", 2, 19}));

INSTANTIATE_TEST_SUITE_P(Operators, CheckError, ::testing::Values(
    ErrorCase{"Is", "def k(a, n):\n    if n is 0:\n        pass\n", kArrayAndInt,
              "'is' is not supported in kernels between int64 and int64; compare numbers with == or !=", 2, 10},
    ErrorCase{"In", "def k(a, n):\n    if n in (1, 2):\n        pass\n", kArrayAndInt,
              "'in' is not supported in kernels", 2, 10},
    ErrorCase{"MatMul", "def k(a, n):\n    a[0] = n @ n\n", kArrayAndInt, "the @ operator is not supported in kernels", 2, 14},
    ErrorCase{"BitwiseFloat", "def k(a, n):\n    a[0] = a[1] & n\n", kArrayAndInt,
              "unsupported operand types for &: float32 and int64", 2, 17},
    ErrorCase{"ShiftSignedUnsigned", "def k(a, n):\n    x = a[0] << n\n", {A(U64), S(I64)},
              "unsupported operand types for <<: uint64 and int64", 2, 14},
    ErrorCase{"WholeArrayArithmetic", "def k(a, n):\n    x = a + n\n", kArrayAndInt,
              "unsupported operand types for +: array(float32, 1d, C) and int64", 2, 11},
    ErrorCase{"ArrayCondition", "def k(a):\n    if a:\n        pass\n", kF32Array,
              "an array has no truth value; compare its elements instead", 2, 8},
    ErrorCase{"NoneValue", "def k(a):\n    x = None\n", kF32Array,
              "None is not supported here: kernel values are numbers, tuples and arrays", 2, 9},
    ErrorCase{"StoreIntoView", "def k(a, i):\n    a[i] = 1.0\n", {A(F32, 2), S(I64)},
              "cannot assign to a view of array(float32, 2d, C) 'a' (a slice, or fewer indices than axes): assign to "
              "its elements one at a time", 2, 5},
    ErrorCase{"TooManyIndices", "def k(a, i):\n    a[i, i] = 1.0\n", {A(F32, 1), S(I64)},
              "too many indices for array(float32, 1d, C) 'a': it has 1 axis, but 2 were indexed", 2, 6},
    ErrorCase{"SliceStepZero", "def k(a, i):\n    b = a[::0]\n", {A(F32, 1), S(I64)}, "slice step cannot be zero", 2, 13},
    ErrorCase{"SliceOfFloats", "def k(a, i):\n    b = a[1.5:]\n", {A(F32, 1), S(I64)},
              "slice indices must be integers, not float64", 2, 11},
    ErrorCase{"FloatIndex", "def k(a):\n    a[0] = a[1.5]\n", kF32Array, "array indices must be integers, not float64", 2, 14},
    ErrorCase{"TupleIndexNotConstant", "def k(a, i):\n    t = (1, 2.5)\n    a[0] = t[i]\n", kArrayAndInt,
              "a tuple index must be a constant integer unless the tuple's items are numbers of one type, and t is a "
              "tuple(int64, float64)", 3, 14},
    ErrorCase{"TupleIndexFloat", "def k(a, i):\n    a[0] = a.shape[1.5]\n", kArrayAndInt,
              "tuple indices must be integers, not float64", 2, 20},
    ErrorCase{"TupleIndexRange", "def k(a):\n    a[0] = a.shape[1]\n", kF32Array,
              "tuple index 1 is out of range for tuple(int64)", 2, 20}));

INSTANTIATE_TEST_SUITE_P(Statements, CheckError, ::testing::Values(
    ErrorCase{"KernelReturnsValue", "def k(a):\n    return 1\n", kF32Array, "kernels cannot return a value", 2, 5},
    ErrorCase{"ForElse", "def k(a):\n    for i in range(3):\n        pass\n    else:\n        pass\n", kF32Array,
              "for/else is not supported", 2, 5},
    ErrorCase{"WhileElse", "def k(a):\n    while a[0] > 0:\n        a[0] -= 1\n    else:\n        pass\n", kF32Array,
              "while/else is not supported", 2, 5},
    ErrorCase{"IterateNumber", "def k(a):\n    for x in abs(a[0]):\n        pass\n", kF32Array,
              "for loops iterate over range(...), 1-D arrays, or enumerate() and zip() of them, not float32", 2, 14},
    ErrorCase{"RangeOutsideFor", "def k(a):\n    r = range(3)\n", kF32Array,
              "range() can only be the iterable of a for loop", 2, 9},
    ErrorCase{"RangeOfFloat", "def k(a):\n    for i in range(a[0]):\n        pass\n", kF32Array,
              "range() needs an integer, not float32", 2, 20},
    ErrorCase{"RangeZeroStep", "def k(a):\n    for i in range(0, 8, 0):\n        pass\n", kF32Array,
              "range() step must not be zero", 2, 26}));

INSTANTIATE_TEST_SUITE_P(Builtins, CheckError, ::testing::Values(
    ErrorCase{"GridNotConstant", "def k(a, n):\n    i = jiasu.grid(n)\n", kArrayAndInt,
              "jiasu.grid() needs a constant 1, 2 or 3", 2, 20},
    ErrorCase{"Arity", "def k(a):\n    a[0] = math.atan2(a[1])\n", kF32Array,
              "math.atan2() takes 2 arguments (1 given)", 2, 12},
    ErrorCase{"Keywords", "def k(a):\n    a[0] = math.sqrt(x=a[1])\n", kF32Array,
              "math.sqrt() takes no keyword arguments", 2, 24},
    ErrorCase{"LenOfScalar", "def k(a, n):\n    a[0] = len(n)\n", kArrayAndInt,
              "len() needs an array or a tuple, not int64", 2, 16},
    ErrorCase{"SharedShapeNotConstant", "def k(a, n):\n    s = jiasu.shared.array(n, np.float32)\n", kArrayAndInt,
              "jiasu.shared.array() needs a shape known at compile time: an integer, a tuple of integers, or a "
              "variable assigned once to one", 2, 28},
    ErrorCase{"SharedShapeReassigned", "def k(a):\n    n = 4\n    n = 8\n    s = jiasu.shared.array(n, np.float32)\n",
              kF32Array, "jiasu.shared.array() needs a shape known at compile time: an integer, a tuple of integers, "
              "or a variable assigned once to one", 4, 28},
    ErrorCase{"SharedNotAssigned", "def k(a):\n    a[0] = jiasu.shared.array(4, np.float32)[0]\n", kF32Array,
              "jiasu.shared.array() must be assigned directly to a variable of its own", 2, 12},
    ErrorCase{"LocalDynamic", "def k(a):\n    s = jiasu.local.array(0, np.float32)\n", kF32Array,
              "jiasu.local.array() needs positive dimensions, not 0", 2, 27},
    ErrorCase{"SharedBadDType", "def k(a):\n    s = jiasu.shared.array(4, a)\n", kF32Array,
              "jiasu.shared.array() needs a dtype such as jiasu.float32, not array(float32, 1d, C)", 2, 31},
    ErrorCase{"AtomicDType", "def k(a):\n    jiasu.atomic.sub(a, 0, 1)\n", {A(F16)},
              "jiasu.atomic.sub() does not support float16 arrays (it supports int32, uint32, int64, uint64, "
              "float32, float64)", 2, 22},
    ErrorCase{"AtomicIndexCount", "def k(a):\n    jiasu.atomic.add(a, (0, 1, 2), 1)\n", {A(F32, 2)},
              "jiasu.atomic.add(): array(float32, 2d, C) 'a' needs 2 indices, got 3", 2, 25},
    ErrorCase{"AtomicFloatIntoInt", "def k(a, c):\n    jiasu.atomic.max(c, 0, a[0])\n", {A(F32), A(I32)},
              "jiasu.atomic.max() cannot apply float32 to array(int32, 1d, C) 'c'", 2, 28},
    ErrorCase{"AtomicIncSigned", "def k(a, c):\n    jiasu.atomic.inc(c, 0, 1)\n", {A(F32), A(I32)},
              "jiasu.atomic.inc() does not support int32 arrays (it supports uint32, uint64)", 2, 22},
    ErrorCase{"ShuffleInt8", "def k(a):\n    x = jiasu.shfl_sync(0xffffffff, a[0], 0)\n", {A(I8)},
              "jiasu.shfl_sync() shuffles int32, uint32, int64, uint64, float32, float64 values, not int8", 2, 37},
    ErrorCase{"PopcFloat", "def k(a):\n    x = jiasu.popc(a[0])\n", kF32Array, "jiasu.popc() needs an integer, not float32", 2, 20},
    ErrorCase{"CastArray", "def k(a):\n    x = np.float32(a)\n", kF32Array, "np.float32() needs a number, not array(float32, 1d, C)", 2, 20}));

// Constant shapes fold as int64 wraps on the device (C++'s INT64_MIN / -1 would trap), and an array's
// size is bounded so that nothing computed from it overflows.
INSTANTIATE_TEST_SUITE_P(ArraySizes, CheckError, ::testing::Values(
    ErrorCase{"FloorDivWraps", "def k(a):\n    s = jiasu.local.array((-9223372036854775807 - 1) // -1, np.float32)\n",
              kF32Array, "jiasu.local.array() needs positive dimensions, not -9223372036854775808", 2, 28},
    ErrorCase{"ModByMinusOne", "def k(a):\n    s = jiasu.local.array((-9223372036854775807 - 1) % -1, np.float32)\n",
              kF32Array, "jiasu.local.array() needs positive dimensions, not 0", 2, 28},
    ErrorCase{"NegationWraps", "def k(a):\n    s = jiasu.local.array(-(-9223372036854775807 - 1), np.float32)\n",
              kF32Array, "jiasu.local.array() needs positive dimensions, not -9223372036854775808", 2, 27},
    ErrorCase{"TooLarge", "def k(a):\n    s = jiasu.local.array(9223372036854775807 * 3, np.float32)\n", kF32Array,
              "jiasu.local.array() of float32 is too large (2 GiB or more)", 2, 27},
    ErrorCase{"ProductOverflows", "def k(a):\n    s = jiasu.shared.array((1099511627776, 1099511627776), np.float32)\n", kF32Array,
              "jiasu.shared.array() of float32 is too large (2 GiB or more)", 2, 28},
    ErrorCase{"TwoGibibytes", "def k(a):\n    s = jiasu.shared.array((268435456, 2), np.float32)\n", kF32Array,
              "jiasu.shared.array() of float32 is too large (2 GiB or more)", 2, 28}));

// A constant shape expression is folded to the literal the emitters write; at the GPU's limit (48 KiB of static
// shared memory) the array is taken, one element more is refused.
TEST(Check, ArraysAtTheSharedLimitAreTakenWithTheirShapeFolded) {
  TestModule module;
  Program program = module.check("def k(a):\n    s = jiasu.shared.array(12288 - 0, np.float32)\n", {A(F32)});
  const Expr& shape = *program.kernel().body[0]->value->args[1];
  EXPECT_EQ(shape.kind, ExprKind::Int);
  EXPECT_EQ(shape.int_value, 12288);
  EXPECT_THROW(module.check("def k(a):\n    s = jiasu.shared.array(12288 + 1, np.float32)\n", {A(F32)}),
               CompileError);
}

INSTANTIATE_TEST_SUITE_P(DeviceFunctions, CheckError, ::testing::Values(
    ErrorCase{"RecursionWithAConstant", "def k(a):\n    a[0] = loop(3)\n", kF32Array,
              "recursive call to 'loop' with other argument types or constants: a recursive function calls itself "
              "with the types it was called with (a constant argument, such as a literal, is bound at compile time: "
              "pass a variable)", 2, 12},
    ErrorCase{"RecursionBeforeAReturn", "def k(a, n):\n    a[0] = loop(n)\n", kArrayAndInt,
              "recursive call to 'loop' before any return: its type is inferred from the returns before the first "
              "recursive call (return the base case first)", 2, 12},
    ErrorCase{"MissingReturnPath", "def k(a):\n    a[0] = maybe(a[1])\n", kF32Array,
              "function 'maybe' returns float32 at line 3 but can reach its end without returning a value", 1, 1},
    ErrorCase{"BareAndValuedReturns", "def k(a):\n    a[0] = mixed(a[1])\n", kF32Array,
              "function 'mixed' returns float32 at line 4 but returns nothing here", 3, 9},
    ErrorCase{"ArgumentCount", "def k(a):\n    a[0] = twice(1, 2)\n", kF32Array, "twice() takes 1 argument (2 given)", 2, 12},
    ErrorCase{"UnknownKeyword", "def k(a):\n    a[0] = twice(y=1)\n", kF32Array,
              "twice() got an unexpected keyword argument 'y'", 2, 20},
    ErrorCase{"ModuleArgument", "def k(a):\n    a[0] = twice(math)\n", kF32Array,
              "cannot pass module(math) to device function 'twice': pass numbers, tuples of numbers, arrays, records, "
              "grid groups, dtypes or functions", 2, 18}));

TEST(CheckLocation, MessagesPointIntoTheUsersFile) {
  TestModule module;
  auto source = module.source("def k(a):\n    a[0] = b\n", "kernel");
  auto with_offset = std::make_shared<FunctionSource>(*source);
  with_offset->source = SourceText{"def k(a):\n    a[0] = b\n", "model.py", 40};
  try {
    check(with_offset, {A(F32)});
    ADD_FAILURE() << "no error";
  } catch (const CompileError& e) {
    EXPECT_EQ(e.line(), 41);
    EXPECT_EQ(e.file(), "model.py");
    EXPECT_EQ(std::string(e.what()).rfind("model.py:41:12: error: name 'b' is not defined\n", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace jiasu::fe
