#include "testing/testing.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

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
  // Test parameter generators ask for the same file many times at each program start (every
  // ctest test is a program start): parse each file once.
  static std::mutex mu;
  static std::map<std::string, nlohmann::json>* parsed = new std::map<std::string, nlohmann::json>;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = parsed->find(name); it != parsed->end()) return it->second;
  std::string path = SharedDir() + "/vectors/" + name;
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "cannot open vector file %s\n", path.c_str());
    std::abort();
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return parsed->emplace(name, nlohmann::json::parse(ss.str())).first->second;
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

CommandResult RunCommand(const std::string& command, const std::string& stdin_text) {
  static const std::string dir = MakeTempDir("podtopo-command");
  const std::string in = dir + "/in", out = dir + "/out", err = dir + "/err";
  std::ofstream(in, std::ios::binary) << stdin_text;
  const std::string shell = command + " <" + in + " >" + out + " 2>" + err;
  const int status = std::system(shell.c_str());
  CommandResult r;
  r.exit_code = (status != -1 && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;
  r.out = ReadFileOrEmpty(out);
  r.err = ReadFileOrEmpty(err);
  return r;
}

std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool WithStdin(const std::string& stdin_text, const std::function<void()>& fn) {
  const std::string dir = MakeTempDir("podtopo-stdin");
  const std::string path = dir + "/stdin";
  {
    std::ofstream out(path, std::ios::binary);
    out << stdin_text;
  }
  const int saved = ::dup(0);
  const int fd = saved < 0 ? -1 : ::open(path.c_str(), O_RDONLY);
  const bool redirected = fd >= 0 && ::dup2(fd, 0) >= 0;
  if (fd >= 0) ::close(fd);
  if (redirected) fn();
  if (saved >= 0) {
    ::dup2(saved, 0);
    ::close(saved);
  }
  std::filesystem::remove_all(dir);
  return redirected;
}

}  // namespace podtopo::testing
