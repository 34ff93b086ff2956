#include "util/file.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "gtest/gtest.h"
#include "testing/testing.h"

namespace podtopo {
namespace {

TEST(FileTest, WriteAtomicallyReplacesContentAndLeavesNoTemp) {
  std::string dir = testing::MakeTempDir("podtopo-file");
  std::string path = dir + "/state";
  ASSERT_TRUE(WriteFileAtomically(path, "old").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "new contents").ok());
  auto read = ReadFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, "new contents");
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 1u);
  std::filesystem::remove_all(dir);
}

std::set<std::string> Names(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    out.insert(e.path().filename().string());
  }
  return out;
}

void Touch(const std::string& path) { std::ofstream(path) << "partial"; }

// A pid no process has: a child that has exited and been reaped.
pid_t DeadPid() {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  return pid;
}

// A writer SIGKILLed in the middle of WriteFileAtomically leaves its temporary file; the next
// write of the same file removes it, and the file holds either the old or the new contents.
TEST(FileTest, TempFileOfAWriterKilledMidWriteIsRemovedByTheNextWrite) {
  std::string dir = testing::MakeTempDir("podtopo-file");
  std::string path = dir + "/cpu_manager_state";
  ASSERT_TRUE(WriteFileAtomically(path, "old").ok());
  std::string temp;
  // The kill must land while the child writes; retried (with more to write) when it lands too
  // late.
  for (size_t mib = 64; mib <= 1024 && temp.empty(); mib *= 2) {
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      std::string big(mib << 20, 'x');
      (void)WriteFileAtomically(path, big);
      _exit(0);
    }
    const std::string want = path + ".tmp-" + std::to_string(child);
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!std::filesystem::exists(want) && std::chrono::steady_clock::now() < until) {
      int status = 0;
      if (waitpid(child, &status, WNOHANG) == child) break;  // finished before we saw it
    }
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    if (std::filesystem::exists(want)) temp = want;
    if (std::filesystem::exists(path) && *ReadFile(path) != "old") {
      ASSERT_TRUE(WriteFileAtomically(path, "old").ok());  // it finished: try again
      temp.clear();
      std::filesystem::remove(want);
    }
  }
  ASSERT_FALSE(temp.empty()) << "no write was ever caught in the middle";
  EXPECT_EQ(*ReadFile(path), "old");  // the old file is intact
  EXPECT_EQ(Names(dir).size(), 2u);   // and the killed writer's temp is there
  ASSERT_TRUE(WriteFileAtomically(path, "new").ok());
  EXPECT_EQ(*ReadFile(path), "new");
  EXPECT_EQ(Names(dir), std::set<std::string>{"cpu_manager_state"});
  std::filesystem::remove_all(dir);
}

TEST(FileTest, StaleTemporaryFilesOfDeadWritersOnlyAreRemoved) {
  std::string dir = testing::MakeTempDir("podtopo-file");
  const std::string dead = std::to_string(DeadPid());
  const std::string self = std::to_string(getpid());
  const std::string parent = std::to_string(getppid());  // alive while we run
  for (const std::string& n : std::vector<std::string>{"a.tmp-" + dead, "b.tmp-" + dead, "a.tmp-" + self, "a.tmp-" + parent, "a.tmp-x1",
        ".a.tmp-" + dead, "a.tmp-", "a.tmp-" + dead + "0000000000", "a"}) {
    Touch(dir + "/" + n);
  }
  // Only a's temporaries, then every name.
  EXPECT_EQ(RemoveStaleTemporaryFiles(dir, "a"), std::vector<std::string>{"a.tmp-" + dead});
  EXPECT_EQ(RemoveStaleTemporaryFiles(dir), std::vector<std::string>{"b.tmp-" + dead});
  EXPECT_EQ(Names(dir),
            (std::set<std::string>{"a.tmp-" + self, "a.tmp-" + parent, "a.tmp-x1",
                                   ".a.tmp-" + dead, "a.tmp-", "a.tmp-" + dead + "0000000000",
                                   "a"}));
  EXPECT_TRUE(RemoveStaleTemporaryFiles(dir + "/missing").empty());
  std::filesystem::remove_all(dir);
}

TEST(FileTest, MissingFileIsNotFoundAndNamesThePath) {
  auto read = ReadFile("/nonexistent/podtopo/file");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(read.status().message().find("/nonexistent/podtopo/file"), std::string::npos);
}

TEST(FileTest, WriteIntoMissingDirectoryFailsCleanly) {
  auto s = WriteFileAtomically("/nonexistent/podtopo/dir/state", "x");
  EXPECT_FALSE(s.ok());
}

TEST(FileTest, SmallFileLimitIsEnforced) {
  std::string dir = testing::MakeTempDir("podtopo-file");
  std::string path = dir + "/big";
  ASSERT_TRUE(WriteFileAtomically(path, std::string(100, 'x')).ok());
  auto read = ReadSmallFile(path, 10);
  EXPECT_FALSE(read.ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace podtopo
