#include "cgroup/cgroup.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace podtopo::cgroup {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "podtopo-cgroup-test-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void Write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

TEST(PodCgroupParent, KubeletCgroupfsStyle) {
  EXPECT_EQ(PodCgroupParent("podtopo", "abc-1"), "/podtopo/podabc-1");
}

TEST(ValidateRootName, AcceptsAndRejects) {
  EXPECT_TRUE(ValidateRootName("podtopo").ok());
  EXPECT_TRUE(ValidateRootName("a/b-c_d.e").ok());
  for (const char* bad : {"", "/podtopo", "podtopo/", "a/../b", "a b", "a//b"}) {
    EXPECT_FALSE(ValidateRootName(bad).ok()) << bad;
  }
}

TEST(ReadContainerCpuset, ParsesTheCgroupFiles) {
  TempDir dir;
  Write(fs::path(dir.path()) / "cpuset/podtopo/pod1/cid/cpuset.cpus", "1,3-4\n");
  Write(fs::path(dir.path()) / "cpuset/podtopo/pod1/cid/cpuset.mems", "0\n");
  auto cpus = ReadContainerCpusetCpus(dir.path(), "/podtopo/pod1", "cid");
  ASSERT_TRUE(cpus.ok()) << cpus.status();
  EXPECT_EQ(cpus->String(), "1,3-4");
  auto mems = ReadContainerCpusetMems(dir.path(), "/podtopo/pod1", "cid");
  ASSERT_TRUE(mems.ok()) << mems.status();
  EXPECT_EQ(mems->String(), "0");
  auto missing = ReadContainerCpusetCpus(dir.path(), "/podtopo/pod1", "other");
  EXPECT_TRUE(absl::IsNotFound(missing.status())) << missing.status();
}

TEST(ReadContainerCpuset, GarbageNamesTheFile) {
  TempDir dir;
  Write(fs::path(dir.path()) / "cpuset/p/c/cpuset.cpus", "x-y\n");
  auto cpus = ReadContainerCpusetCpus(dir.path(), "/p", "c");
  ASSERT_FALSE(cpus.ok());
  EXPECT_NE(cpus.status().message().find("cpuset/p/c/cpuset.cpus"), absl::string_view::npos);
}

TEST(ReadCpusAllowedList, FromStatusFile) {
  TempDir dir;
  Write(fs::path(dir.path()) / "42/status", "Name:\tsleep\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\n");
  auto cpus = ReadCpusAllowedList(42, dir.path());
  ASSERT_TRUE(cpus.ok()) << cpus.status();
  EXPECT_EQ(cpus->String(), "0-1");
  Write(fs::path(dir.path()) / "43/status", "Name:\tsleep\n");
  EXPECT_FALSE(ReadCpusAllowedList(43, dir.path()).ok());
}

TEST(ReadCpusAllowedList, OwnProcessMatchesAffinity) {
  auto cpus = ReadCpusAllowedList(::getpid());
  ASSERT_TRUE(cpus.ok()) << cpus.status();
  EXPECT_GE(cpus->Size(), 1);
}

TEST(RemoveCgroupTree, RemovesEveryHierarchyDeepestFirst) {
  TempDir dir;
  fs::path root(dir.path());
  fs::create_directories(root / "cpuset/podtopo/pod1/c1");
  fs::create_directories(root / "cpuset/podtopo/pod1/c2");
  fs::create_directories(root / "pids/podtopo/pod1/c1");
  fs::create_directories(root / "memory/other");
  auto left = RemoveCgroupTree(dir.path(), "/podtopo/pod1");
  EXPECT_TRUE(left.empty());
  EXPECT_FALSE(fs::exists(root / "cpuset/podtopo/pod1"));
  EXPECT_FALSE(fs::exists(root / "pids/podtopo/pod1"));
  EXPECT_TRUE(fs::exists(root / "cpuset/podtopo"));
  EXPECT_TRUE(fs::exists(root / "memory/other"));
  // A non-empty directory (a file inside, like a cgroup with tasks) is reported, not deleted.
  Write(root / "cpuset/podtopo/pod2/c1/keep", "x");
  left = RemoveCgroupTree(dir.path(), "/podtopo/pod2");
  EXPECT_FALSE(left.empty());
  EXPECT_TRUE(RemoveCgroupTree(dir.path(), "/podtopo/absent").empty());
}

}  // namespace
}  // namespace podtopo::cgroup
