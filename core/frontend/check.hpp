// Name resolution and type inference: a parsed function plus argument types becomes a typed program.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/ast.hpp"

namespace jiasu::fe {

// The rules by which check() types a builtin's uses (the `rule` column of builtins.def).
enum class BuiltinRule : uint8_t {
  Range, Len, MinMax, SameNumeric1, Round, CastInt64, CastFloat64, CastBool,
  FloatMath1, FloatMath2, FloatMath3, FloatToInt64, FloatPredicate, FloatCompare2, ConstPi, ConstE, ConstInf, ConstNan,
  GridN, IndexValue, Void0, SyncPredicateInt, SyncPredicateBool, SyncWarp, NewArray, ConstArrayLike, Slice,
  Atomic, AtomicInt, AtomicUnsigned, AtomicCas, Shuffle, VoteBallot, VoteBool, Mask0, BitCount, SameInteger1,
  ComplexMath1, ComplexToReal, ComplexPolar, ComplexRect, CastComplex, ComplexPart, Conjugate, Power2, Frexp, Ldexp,
  Float32Math1, Float32Math2, Float32Math3, Float64Math1, Float64Math2, Float64Math3, Print, ThisGrid, GridSync,
  Reshape, ArrayView,
};

enum class BuiltinId : uint16_t {
#define JIASU_BUILTIN(id, path, rule, cuda, host) id,
#include "frontend/builtins.def"
#undef JIASU_BUILTIN
};

struct Builtin {
  BuiltinId id;
  const char* path;  // "math.sqrt", "jiasu.threadIdx.x", "range"
  BuiltinRule rule;
  const char* cuda;  // CUDA spelling; "" where the emitter writes the code itself
  const char* host;  // host C++ spelling
};
const Builtin& builtin(int index);      // Expr::builtin indexes this table
int builtin_count();                    // rows in the table
int find_builtin(const std::string& path);  // -1 when there is none

struct FunctionSource;

// What a global name of the kernel's module is, as the Python layer reports it.
// A CUDA C++ file linked into a kernel (Numba's `link=`): its path and text. Both targets compile its text into
// the kernel's translation unit (the CPU backend with __device__ and __host__ defined away).
struct LinkedFile {
  std::string path, text;
};

// A device function defined in linked CUDA C++ (Numba's cuda.declare_device): its extern "C" name, parameter
// and result types, and the files that define it. Numba's ABI: `int name(Result* result, params...)`, which
// returns a status jiasu ignores, as Numba does; the C ABI: `Result name(params...)`.
struct ExternalFunction {
  std::string name;
  std::vector<DType> params;
  DType result = DType::Float64;
  bool c_abi = false;
  std::vector<LinkedFile> link;
};

struct GlobalValue {
  enum Kind : uint8_t { Missing, Int, Float, Bool, Tuple, Module, DTypeValue, Function, Builtin, ConstantArray,
                        String, ExceptionClass, External, Enum, EnumMember, Unsupported, Uncaptured } kind = Missing;
                                             // Uncaptured: an enclosing function's variable that a nested function
                                             // cannot read
  int64_t int_value = 0;                     // Int, Bool, EnumMember (its value in kernels); ExceptionClass: the
                                             // handle the launch raises it by
  double float_value = 0;
  std::vector<GlobalValue> items;            // Tuple
  std::string name;                          // Module: "math", "numpy", "jiasu"; Builtin: its path (a builtin passed
                                             // to a device function); String: its text (only an exception's
                                             // message); ExceptionClass: the class's name; Unsupported: its Python
                                             // type; Uncaptured: the message
  DType dtype = DType::Float64;              // DTypeValue; ConstantArray: its elements
  std::vector<int64_t> shape;                // ConstantArray
  std::string data;                          // ConstantArray: its bytes in C order
  std::shared_ptr<const FunctionSource> function;  // Function: a @jiasu.func or a nested def
  std::shared_ptr<const ExternalFunction> external;  // External
  std::shared_ptr<const EnumClass> enumeration;      // Enum, EnumMember: the class
};
using Resolver = std::function<GlobalValue(const std::string& name)>;

// A function's source and the resolver for its own module's globals.
struct FunctionSource {
  SourceText source;
  Resolver resolve;
  std::string identity;  // unique per Python function object (for memoising specialisations)
  SourceLoc nested_def;  // a def nested in the function of `source`: where it is (line 0: that function itself)
  std::vector<LinkedFile> link;  // a kernel's link= files
};

// The function a FunctionSource describes, parsed afresh (check() types each specialisation in its own tree).
std::unique_ptr<Function> parse_function(const FunctionSource& source);

// A kernel specialised for one signature, with every device function it calls.
struct Program {
  std::vector<std::unique_ptr<Function>> functions;  // callees before callers; the kernel is last
  std::vector<std::shared_ptr<const FunctionSource>> sources;  // parallel to functions
  std::vector<std::shared_ptr<const ExternalFunction>> externals;  // those called, once each
  std::vector<LinkedFile> linked;  // the kernel's link= files and the externals' files, once each
  Function& kernel() { return *functions.back(); }
  const Function& kernel() const { return *functions.back(); }
};

// Parses `kernel`, types it for arguments of types `signature` (arrays and scalars), and does the same
// for each device function it calls (one specialisation per distinct argument types). Rules:
// NumPy promotion with NEP 50 weak Python scalars; a variable has one type for its whole function (a
// second assignment of another type is an error showing both); integer indices and thread indices
// are int64. Throws CompileError at the offending expression, and BadArgument (the caller's error) for
// arguments the kernel cannot take: a wrong number of them.
Program check(std::shared_ptr<const FunctionSource> kernel, const std::vector<Type>& signature);

// A scalar function (what @jiasu.vectorize and @jiasu.reduce make elementwise operations of): parsed and typed
// for scalar arguments of types `signature`, with the device functions it calls. It is the Program's last
// function, a device function (not a kernel) whose return type is one number; a function that returns nothing,
// a tuple or an array is a CompileError at its definition, and so is an array or tuple argument.
Program check_scalar_function(std::shared_ptr<const FunctionSource> function, const std::vector<Type>& signature);

// Numba's vector types (cuda.float32x4, cuda.int2, ...; check_vector.cpp): a name's element type and count (1 to
// 4), and every name, as jiasu.NAME.
struct VectorTypeInfo {
  DType dtype;
  int count;
};
std::optional<VectorTypeInfo> vector_type_named(const std::string& name);
std::vector<std::string> vector_type_names();

// NumPy's promotion of two scalar types, honouring weak (literal) operands. Exposed for tests.
Type promote(const Type& a, const Type& b);
// The complex type a cmath function computes a number in: complex64 for float32 (and the half types) and itself,
// complex128 for the others (Python's complex).
Type complex_result(const Type& t);
// A complex type's parts (float32 for complex64); any other type is itself.
Type real_part(const Type& t);

}  // namespace jiasu::fe
