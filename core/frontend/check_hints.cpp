// check(): code that error messages suggest, spelled with the names this function's module binds, so
// that the suggestion compiles when it is followed (`jiasu.int32(...)`, or `jk.int32(...)` after
// `import jiasu as jk`).
#include "frontend/checker.hpp"

namespace jiasu::fe::checking {

namespace {
const char* const kImportJiasu = " after `import jiasu`";
}  // namespace

// The first name bound to `module` ("jiasu", "numpy") among: the decorator's prefix (`@jk.kernel`), the
// module's own name, and "np". Empty when the module is not imported under any of them.
std::string Checker::module_alias(const std::string& module) {
  std::vector<std::string> candidates;
  for (const std::string& decorator : fn_.decorators)
    if (size_t dot = decorator.find('.'); dot != std::string::npos) candidates.push_back(decorator.substr(0, dot));
  candidates.push_back(module);
  if (module == "numpy") candidates.push_back("np");
  for (const std::string& name : candidates) {
    if (assigned_.count(name)) continue;  // a local variable hides the global
    const GlobalValue& g = global(name);
    if (g.kind == GlobalValue::Module && g.name == module) return name;
  }
  return "";
}

// A dtype as code followed by `suffix`: "jiasu.int32(...)", "np.float32(...)", or, where the module
// imports neither, "jiasu.int32(...) after `import jiasu`".
std::string Checker::dtype_code(DType dtype, const std::string& suffix) {
  std::string name = dtype == DType::Bool ? "bool_" : info(dtype).name;
  std::string jiasu = module_alias("jiasu");
  if (!jiasu.empty()) return jiasu + "." + name + suffix;
  std::string numpy = module_alias("numpy");
  if (!numpy.empty()) return numpy + "." + name + suffix;
  return "jiasu." + name + suffix + kImportJiasu;
}

// jiasu's function `path` ("shared.array(...)") as this module reaches it ("jiasu.shared.array(...)").
std::string Checker::jiasu_code(const std::string& path) {
  std::string jiasu = module_alias("jiasu");
  return (jiasu.empty() ? "jiasu" : jiasu) + "." + path;
}

// What a message naming jiasu_code() adds: nothing when the module imports jiasu.
std::string Checker::jiasu_import_note() { return module_alias("jiasu").empty() ? kImportJiasu : ""; }

}  // namespace jiasu::fe::checking
