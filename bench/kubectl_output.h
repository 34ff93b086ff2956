// What the whole-process benchmarks feed podtopo: pods as `kubectl get pods -A -o json|yaml`
// writes them, and the running of the podtopo binary.
//
//   nlohmann::json list = KubectlList(items);       // {"apiVersion": "v1", "kind": "List", ...}
//   std::string json = list.dump(4);                 // kubectl -o json indents by 4
//   std::string yaml = KubectlYaml(list);            // kubectl -o yaml: block style, plain
//                                                    // scalars where YAML allows them
//   ChildRun r = RunPodtopo({"admit", path, "-o", "json"}, out_path);
//   r.exit_code; r.cpu_seconds;                      // the child's user + system time
#ifndef PODTOPO_BENCH_KUBECTL_OUTPUT_H_
#define PODTOPO_BENCH_KUBECTL_OUTPUT_H_

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

extern char** environ;

namespace podtopo::bench {

inline nlohmann::json KubectlList(nlohmann::json items) {
  return {{"apiVersion", "v1"},
          {"items", std::move(items)},
          {"kind", "List"},
          {"metadata", {{"resourceVersion", ""}}}};
}

// A string kubectl (go-yaml) writes without quotes: one that reads back as the same string.
inline bool PlainSafe(const std::string& s) {
  if (s.empty()) return false;
  static const char* const kWords[] = {"true", "false", "yes", "no",  "on",   "off", "y",
                                       "n",    "null", "True", "False", "Null", "~"};
  for (const char* w : kWords) {
    if (s == w) return false;
  }
  if ((s[0] >= '0' && s[0] <= '9') || s[0] == '-' || s[0] == '.' || s[0] == '+') return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.' || c == '/';
    if (!ok) return false;
  }
  return true;
}

inline std::string YamlScalar(const nlohmann::json& v) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    return PlainSafe(s) ? s : v.dump();
  }
  return v.dump();
}

inline void AppendYaml(const nlohmann::json& j, int indent, std::string& out);

inline void AppendYamlValue(const nlohmann::json& v, int indent, std::string& out) {
  if ((v.is_object() || v.is_array()) && v.empty()) {
    out += v.is_object() ? " {}\n" : " []\n";
  } else if (v.is_object()) {
    out += "\n";
    AppendYaml(v, indent + 2, out);
  } else if (v.is_array()) {
    out += "\n";
    AppendYaml(v, indent, out);  // kubectl does not indent a list under its key
  } else {
    out += " " + YamlScalar(v) + "\n";
  }
}

inline void AppendYaml(const nlohmann::json& j, int indent, std::string& out) {
  const std::string pad(indent, ' ');
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      out += pad + (PlainSafe(k) ? k : nlohmann::json(k).dump()) + ":";
      AppendYamlValue(v, indent, out);
    }
    return;
  }
  for (const auto& v : j) {
    if (v.is_object() && !v.empty()) {
      std::string inner;
      AppendYaml(v, indent + 2, inner);
      inner.replace(indent, 2, "- ");
      out += inner;
    } else if (v.is_array() && !v.empty()) {
      out += pad + "-\n";
      AppendYaml(v, indent + 2, out);
    } else {
      out += pad + "-";
      AppendYamlValue(v, indent, out);
    }
  }
}

inline std::string KubectlYaml(const nlohmann::json& j) {
  std::string out;
  AppendYaml(j, 0, out);
  return out;
}

// The directories MakeTempDir made, removed with their contents when the program exits (the
// fleet inputs are about 440 MB).
struct TempDirs {
  std::vector<std::string> paths;
  ~TempDirs() {
    for (const std::string& p : paths) {
      std::error_code ignored;
      std::filesystem::remove_all(p, ignored);
    }
  }
};

// A new directory under $TMPDIR, removed at exit.
inline std::string MakeTempDir(const std::string& prefix) {
  static TempDirs made;
  std::string d = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (mkdtemp(d.data()) == nullptr) std::abort();
  made.paths.push_back(d);
  return d;
}

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct ChildRun {
  int exit_code = -1;
  double cpu_seconds = 0;  // user + system time of the child
};

// Runs the podtopo binary with `args`, stdout to `out_path`, stderr to `err_path`.
inline ChildRun RunPodtopo(const std::vector<std::string>& args, const std::string& out_path,
                           const std::string& err_path = "/dev/null") {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  std::string binary = PODTOPO_BINARY;
  std::vector<std::string> copy = args;
  std::vector<char*> argv{binary.data()};
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  ChildRun run;
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return run;
  int status = 0;
  struct rusage usage {};
  if (wait4(pid, &status, 0, &usage) != pid) return run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                    static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  return run;
}

}  // namespace podtopo::bench

#endif  // PODTOPO_BENCH_KUBECTL_OUTPUT_H_
