#include "util/dir_lock.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace podtopo {
namespace {

using ::testing::HasSubstr;

class DirLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "podtopo-lock-XXXXXX").string();
    dir_ = mkdtemp(tmpl.data());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

// Another process holds the lock: refused at once, naming it; free again once it is gone.
TEST_F(DirLockTest, AnotherProcessIsRefusedWithTheHoldersPid) {
  int to_parent[2], to_child[2];
  ASSERT_EQ(pipe(to_parent), 0);
  ASSERT_EQ(pipe(to_child), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto lock = DirLock::Acquire(dir_);
    char c = lock.ok() && *lock != nullptr ? 'y' : 'n';
    if (write(to_parent[1], &c, 1) != 1) _exit(2);
    if (read(to_child[0], &c, 1) != 1) _exit(3);  // hold until told
    _exit(0);
  }
  char c = 0;
  ASSERT_EQ(read(to_parent[0], &c, 1), 1);
  ASSERT_EQ(c, 'y');
  auto refused = DirLock::Acquire(dir_);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("state dir " + dir_ + " is in use by "));
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("(pid " + std::to_string(child) + ")"));
  ASSERT_EQ(write(to_child[1], "x", 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  auto free_again = DirLock::Acquire(dir_);
  ASSERT_TRUE(free_again.ok()) << free_again.status();
  EXPECT_NE(*free_again, nullptr);
  // Nothing is added to the directory (it may be the kubelet's).
  EXPECT_TRUE(std::filesystem::is_empty(dir_));
}

// Within one process, the daemon and the node it creates share one lock.
TEST_F(DirLockTest, SharedWithinTheProcess) {
  auto first = DirLock::Acquire(dir_);
  ASSERT_TRUE(first.ok());
  auto second = DirLock::Acquire(dir_ + "/.");
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(first->get(), second->get());
}

TEST_F(DirLockTest, NothingToLockInAMissingDirectory) {
  auto lock = DirLock::Acquire(dir_ + "/missing");
  ASSERT_TRUE(lock.ok());
  EXPECT_EQ(*lock, nullptr);
}

}  // namespace
}  // namespace podtopo
