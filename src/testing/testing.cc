#include "testing/testing.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace podtopo::testing {

std::string SharedDir() {
  if (const char* env = std::getenv("PODTOPO_SHARED_DIR"); env && *env) return env;
  return PODTOPO_SHARED_DIR;
}

std::string SourceDir() { return PODTOPO_SOURCE_DIR; }

std::string MakeTempDir(const std::string& prefix) {
  std::string templ = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  char* made = ::mkdtemp(templ.data());
  if (made == nullptr) {
    std::fprintf(stderr, "mkdtemp %s failed\n", templ.c_str());
    std::abort();
  }
  return made;
}

nlohmann::json LoadVectors(const std::string& name) {
  std::string path = SharedDir() + "/vectors/" + name;
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "cannot open vector file %s\n", path.c_str());
    std::abort();
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

std::string TestName(const std::string& name, size_t index) {
  std::string out;
  for (char c : name) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
      out.push_back(c);
    } else if (!out.empty() && out.back() != '_') {
      out.push_back('_');
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  if (out.size() > 120) out.resize(120);
  return out + "_" + std::to_string(index);
}

}  // namespace podtopo::testing
