#include "program/signature.hpp"

namespace jiasu {

std::vector<fe::Type> signature_types(const std::string& key) {
  std::vector<fe::Type> types;
  for (size_t i = 0; i < key.size();) {
    auto dtype = static_cast<DType>(key[i + 1]);
    if (key[i] == 'A') {
      types.push_back(fe::Type::array(dtype, key[i + 2], key[i + 3] != 0));
      i += 4;
    } else {
      types.push_back(fe::Type::scalar(dtype, key[i + 2] != 0));
      i += 3;
    }
  }
  return types;
}

std::string describe_signature(const std::string& key) {
  std::string out = "(";
  auto types = signature_types(key);
  for (size_t i = 0; i < types.size(); ++i) {
    const fe::Type& t = types[i];
    // A weak scalar came from a Python int or float: name it so, apart from a NumPy int64 or float64.
    std::string name = t.weak ? (t.is_float() ? "float" : "int") : fe::to_string(t);
    out += (i ? ", " : "") + name;
  }
  return out + ")";
}

}  // namespace jiasu
