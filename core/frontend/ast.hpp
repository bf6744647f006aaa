// The kernel language's syntax tree and types: the data every front-end stage reads and writes.
//   parse()   fills the tree (kinds, names, literals, children, locations);
//   check()   resolves names and fills Expr::type / Expr::meaning and Function::locals;
//   emitters  read the typed tree and write target code.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "array/dtype.hpp"
#include "frontend/source.hpp"

namespace jiasu::fe {

// ---------------------------------------------------------------------------------------------------
// Limits on nesting (docs/kernel-language.md, "Limits"). The stages walk the tree by recursion, so parse()
// refuses deeper code with a CompileError; at these limits every stage fits in a 1 MiB stack
// (tests/cpp/test_limits.cpp). The tokenizer adds Python's own: 200 nested brackets, 100 indentation levels.

// Levels of one expression: brackets, calls, subscripts, attributes, unary operators, `**`, conditional
// expressions and the right operands of binary operators each add one. The left operand of a binary
// operator adds none, so that a chain `a + b - c ...` counts as the deepest of its operands.
constexpr int kMaxExpressionNesting = 200;
// Levels of one expression counting every operator: `a + b + c` is two levels of `+` above its operands.
constexpr int kMaxExpressionDepth = 1000;
// Levels of blocks, an elif (an If nested in the else of the one before) counting as one more level.
constexpr int kMaxBlockDepth = 1000;

// ---------------------------------------------------------------------------------------------------
// Types

enum class TypeKind : uint8_t {
  Unknown,   // not inferred (yet)
  Void,      // a call that returns nothing; a function without a return value
  Scalar,    // bool, ints, floats, complex (dtype)
  Array,     // a view of memory: dtype, ndim, contiguity, memory space
  Tuple,     // fixed-size tuple (grid(2), a.shape, tuples of constants)
  Module,    // math, numpy, jiasu and its namespaces (jiasu.threadIdx, jiasu.atomic, jiasu.shared, ...)
  Function,  // a builtin or a @jiasu.func device function, only ever called
  DType,     // a dtype used as a value (np.float32 as the dtype argument of shared.array, or a cast)
  Range,     // range(...) as the iterable of a for loop
  Record,    // one element of a structured (record) array, by reference: its fields are read and written in place
  GridGroup, // the launch's grid as cooperative groups name it (jiasu.cg.this_grid()): its one method is sync()
  EnumClass, // a Python enum class used by name, for its members: Color.red, Color["red"]
};

enum class MemorySpace : uint8_t { Global, Shared, Local, Constant };  // Constant: a global NumPy array, embedded

// A NumPy structured dtype: each field a number or a fixed-shape array of numbers at its byte offset. Every
// field is aligned for its type, in every element (check_record_layout).
struct RecordField {
  std::string name;
  DType dtype = DType::UInt8;
  int64_t offset = 0;
  std::vector<int64_t> shape;  // a subarray field's shape; empty for a number
};
struct RecordLayout {
  int64_t itemsize = 0;
  int64_t alignment = 1;  // the largest of the fields' alignments
  std::vector<RecordField> fields;
  bool operator==(const RecordLayout& other) const;
  const RecordField* field(const std::string& name) const;  // null when there is none of that name
};
// BadArgument (naming the field) for a field that some element would hold misaligned; fills `alignment`.
void check_record_layout(RecordLayout& layout);

// A Python enum class (enum.Enum, enum.IntEnum) that a kernel uses. In kernels a member is an int64: an IntEnum's
// (or IntFlag's) own value, another enum's position among its members in definition order. `identity` tells
// classes apart (two classes of one name are two enums).
struct EnumClass {
  std::string name;
  uint64_t identity = 0;
  bool int_valued = false;  // an IntEnum: its members are ints, and mix with numbers as ints do
  std::vector<std::pair<std::string, int64_t>> members;  // by name, aliases included; empty for the class of an
                                                          // argument (only its members' values are used)
};

struct Type {
  TypeKind kind = TypeKind::Unknown;
  DType dtype = DType::Int64;    // Scalar / DType: the type; Array: the element type
  bool weak = false;             // Scalar from a Python literal: adapts to the other operand (NEP 50)
  int ndim = 0;                  // Array
  bool contiguous = false;       // Array: C-contiguous, so indexing needs no strides
  MemorySpace space = MemorySpace::Global;  // Array
  std::vector<Type> items;       // Tuple
  std::vector<std::string> fields;  // Tuple: a namedtuple's field names, one per item (none for a plain tuple)
  std::string name;              // Module: "math", "numpy", "jiasu", "jiasu.threadIdx", ...; Function: its name
  std::shared_ptr<const RecordLayout> record;  // Record: its layout; Array: the elements' layout, for a record array
  std::shared_ptr<const EnumClass> enumeration;  // Scalar: a member of this enum (int64); EnumClass: the class

  static Type scalar(DType d, bool weak = false);
  static Type array(DType d, int ndim, bool contiguous, MemorySpace space = MemorySpace::Global);
  static Type tuple(std::vector<Type> items);
  static Type module(std::string name);
  static Type record_of(std::shared_ptr<const RecordLayout> layout);
  static Type enum_class(std::shared_ptr<const EnumClass> enumeration);
  static Type enum_member(std::shared_ptr<const EnumClass> enumeration);  // an IntEnum's is weak, as an int is
  bool operator==(const Type& other) const;
  bool operator!=(const Type& other) const { return !(*this == other); }
  bool is_scalar() const { return kind == TypeKind::Scalar; }
  bool is_integer() const;  // scalar int or uint (not bool)
  bool is_float() const;    // scalar float16/bfloat16/float32/float64
};

// "float32", "array(float32, 2d, C)", "tuple(int64, int64)", ...: for messages and signature keys.
std::string to_string(const Type& type);

// ---------------------------------------------------------------------------------------------------
// Expressions

enum class ExprKind : uint8_t {
  Int, Float, Bool, None, String,  // literals (String only as a docstring, an error or a value print() prints)
  Name,                            // name
  Attribute,                       // value.name        (value is args[0])
  Subscript,                       // value[args...]    (value is args[0], then one arg per index: a[i, j])
  Call,                            // callee(args..., keywords...)   (callee is args[0], then the positional args)
  Binary,                          // args[0] op args[1]
  Unary,                           // op args[0]       (-x, +x, ~x, not x)
  Compare,                         // args[0] ops[0] args[1] ops[1] args[2] ...  (a < b < c)
  BoolOp,                          // args[0] and/or args[1] ...  (op is And or Or)
  IfExp,                           // args[1] if args[0] else args[2]
  Tuple,                           // (args...)
};

enum class Op : uint8_t {
  None,
  Add, Sub, Mul, Div, FloorDiv, Mod, Pow, LShift, RShift, BitAnd, BitOr, BitXor, MatMul,  // binary
  UAdd, USub, Invert, Not,                                                                // unary
  Eq, NotEq, Lt, LtE, Gt, GtE, Is, IsNot, In, NotIn,                                      // compare
  And, Or,                                                                                // bool ops
};
const char* op_text(Op op);  // "+", "//", "not", "<=", ...

struct Function;
struct ExternalFunction;  // check.hpp

// What a name or attribute turned out to mean (filled by check()).
enum class Meaning : uint8_t {
  Unresolved,
  Local,      // a local variable or parameter (Expr::name)
  Constant,   // a compile-time constant from the kernel's globals (Expr::int_value / float_value / bool)
  Module,     // a module or namespace (type.name)
  Builtin,    // a builtin function, intrinsic or attribute (Expr::builtin indexes the builtin table)
  DeviceFunction,  // a @jiasu.func (Expr::callee)
  External,        // a function declared with cuda.declare_device (Expr::external)
  VectorType,      // a vector type, cuda.float32x4 (type.dtype: its elements; int_value: how many)
  DTypeValue,      // a dtype (type.dtype)
};

struct Expr {
  ExprKind kind;
  SourceLoc loc;            // the operator ('+', first comparison, 'and', 'if'), trailer ('[', '(', the
                            // attribute name) or, for the rest, the first character; see parse.cpp
  std::string name;         // Name: identifier; Attribute: attribute name; String: the value
  int64_t int_value = 0;    // Int (and Bool: 0/1); for Int literals above int64, parse() errors
  uint64_t uint_value = 0;  // Int literals in [2^63, 2^64) keep their value here (int_value unused)
  bool is_uint64 = false;
  double float_value = 0;   // Float
  bool imaginary = false;   // Float: an imaginary literal (2j), complex(0, float_value)
  Op op = Op::None;         // Binary, Unary, BoolOp
  std::vector<Op> ops;      // Compare: one per comparison
  bool numpy_order = false; // Compare: made from np.less & co., which order complex numbers (check_ufuncs.cpp)
  std::vector<std::unique_ptr<Expr>> args;  // operands / elements / call arguments / indices
  std::vector<std::pair<std::string, std::unique_ptr<Expr>>> keywords;  // Call keywords
  int depth = 1;            // parse(): levels of this subtree (1 for a leaf), at most kMaxExpressionDepth
  int nesting = 1;          // parse(): the same without binary operators' left operands (kMaxExpressionNesting)
  bool unpacked = false;    // a call argument written `*value`: check() puts the tuple's items in its place

  // Filled by check():
  Type type;
  Meaning meaning = Meaning::Unresolved;
  int builtin = -1;               // Meaning::Builtin: index into the builtin table
  Function* callee = nullptr;     // Meaning::DeviceFunction: the specialised function called
  const ExternalFunction* external = nullptr;  // Meaning::External (the Program holds it)

  Expr(ExprKind k, SourceLoc l) : kind(k), loc(l) {}
};
using ExprPtr = std::unique_ptr<Expr>;

// Where an expression's text begins (its leftmost operand), for messages about the whole expression.
SourceLoc start_of(const Expr& e);
// Whether an index is a slice: parse() makes a[start:stop:step]'s index the call slice(start, stop, step),
// with None for a part left out.
bool is_slice(const Expr& e);

// ---------------------------------------------------------------------------------------------------
// Statements

enum class StmtKind : uint8_t {
  Expr,       // value (a call)
  Assign,     // targets[0] = targets[1] = ... = value   (a target may be a Name, Subscript or Tuple)
  AugAssign,  // targets[0] op= value
  If,         // if test: body  else: orelse  (elif is an If alone in orelse)
  For,        // for targets[0] in value: body  else: orelse (orelse is rejected by check())
  While,      // while test: body
  Break,
  Continue,
  Return,     // return value (value may be null)
  Pass,
  Raise,      // raise value   (an exception class, or a call of one with its message)
  Def,        // def function.name(...): a nested function, emitted as a device function of its own
};

struct Stmt {
  StmtKind kind;
  SourceLoc loc;
  std::vector<ExprPtr> targets;
  ExprPtr value;
  ExprPtr test;
  Op op = Op::None;  // AugAssign
  std::vector<std::unique_ptr<Stmt>> body, orelse;
  // Raise, filled by check(): the exception class's name and the handle its resolver gave it, and the message.
  std::string exception, message;
  int64_t exception_handle = -1;
  std::unique_ptr<Function> function;  // Def
  Stmt(StmtKind k, SourceLoc l) : kind(k), loc(l) {}
};
using StmtPtr = std::unique_ptr<Stmt>;

// ---------------------------------------------------------------------------------------------------
// Functions

struct Param {
  std::string name;
  SourceLoc loc;
  Type type;              // from the call's signature
  bool written = false;   // check(): the function stores into it (an array it writes or atomically updates)
  bool read = false;      // check(): the function loads from it (an array element read, updated or viewed)
  // A dtype, function or constant integer (tuple) passed to a device function, as Numba allows: bound when the
  // call is compiled, so it is neither a parameter nor an argument of the emitted function.
  bool compile_time = false;
  bool variadic = false;  // *args, the last parameter: a call's extra positional arguments, as one tuple
};

struct Local {
  std::string name;
  Type type;
  SourceLoc first_assigned;
};

// A NumPy array global (or cuda.const.array_like of one): its C-order bytes, embedded in the generated code.
struct ConstantArray {
  std::string name;  // the global's name, for the emitted symbol and messages
  DType dtype = DType::Float64;
  std::vector<int64_t> shape;
  std::string data;
};

struct Function {
  std::string name;
  SourceLoc loc;
  std::vector<Param> params;
  std::vector<StmtPtr> body;
  std::vector<std::string> decorators;  // as written, e.g. "jiasu.kernel", "jiasu.kernel(debug=True)"

  // Filled by check():
  bool is_kernel = false;
  std::vector<Local> locals;    // every local variable other than the parameters, with its one type
  Type return_type;             // Void for kernels and functions that return nothing
  std::string mangled_name;     // unique C++ name of this specialisation
  bool uses_dynamic_shared = false;
  bool prints = false;  // calls print()
  // Calls jiasu.cg.this_grid(), itself or through a device function (as Numba marks such kernels): launched
  // cooperatively, every block resident at once, so that the grid can wait at grid.sync().
  bool cooperative = false;
  std::vector<ConstantArray> constants;  // the array globals it reads (an Expr of one has its index in int_value)
  // The bytes of its static shared arrays and of its local arrays, the device functions it calls included
  // (each callee once): check() keeps them within what a CUDA GPU gives a block and a thread.
  int64_t shared_array_bytes = 0, local_array_bytes = 0;
};

// parse(): the single `def` in `source` (decorators allowed, nothing else at top level), and the defs
// nested in it. Unsupported Python syntax (class, lambda, with, try, import, global, comprehension,
// keyword-only parameters, default values, strings as values, ...) is parsed far enough to fail with a CompileError
// that names the construct at its location.
std::unique_ptr<Function> parse(const SourceText& source);

}  // namespace jiasu::fe
