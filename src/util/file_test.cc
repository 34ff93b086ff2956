#include "util/file.h"

#include <filesystem>

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
