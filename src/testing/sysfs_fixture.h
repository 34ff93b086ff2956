// A real machine's sysfs from hwloc's Linux test corpus (../shared/fixtures/hwloc-linux,
// NAME.tar.bz2), extracted into a temporary directory for the life of the object. Only what
// topology discovery reads is extracted (devices/system/cpu and devices/system/node); the
// files are never copied into the repository.
//
// Example:
//   testing::SysfsFixture fx(testing::HwlocFixtureDir() + "/64amd64-4s2n4ca2co.tar.bz2");
//   if (!fx.ok()) GTEST_SKIP() << ...;
//   LoadNode("sysfs:" + fx.sys());
#ifndef PODTOPO_TESTING_SYSFS_FIXTURE_H_
#define PODTOPO_TESTING_SYSFS_FIXTURE_H_

#include <filesystem>
#include <string>

namespace podtopo::testing {

// SharedDir() + "/fixtures/hwloc-linux".
std::string HwlocFixtureDir();

class SysfsFixture {
 public:
  // Extracts `tarball` (on /dev/shm when writable: the snapshots hold thousands of small files).
  explicit SysfsFixture(const std::string& tarball);
  ~SysfsFixture();
  SysfsFixture(const SysfsFixture&) = delete;
  SysfsFixture& operator=(const SysfsFixture&) = delete;

  // The extraction worked and holds a sys/devices/system/cpu folder.
  bool ok() const { return ok_ && !sys_.empty(); }
  // The snapshot's sys/ folder (what `--node sysfs:DIR` takes).
  std::string sys() const { return sys_.string(); }
  // It has node<N> directories.
  bool HasNodeDirs() const;
  // Old kernels (2.6.2x) only have node<N>/cpumap: no cpulist and no cpu<M> links. Writes the
  // cpulist newer kernels add, from the mask. Returns how many files were written.
  int AddCpulistFromCpumap() const;
  // cpu0 has an L3 cache id (cache/index3/id).
  bool HasCacheIds() const;

 private:
  std::string dir_;
  std::filesystem::path sys_;
  bool ok_ = false;
};

}  // namespace podtopo::testing

#endif  // PODTOPO_TESTING_SYSFS_FIXTURE_H_
