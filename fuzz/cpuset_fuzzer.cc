// cpuset texts (the Linux list format, cpuset.Parse): parse -> String -> parse gives the same
// set and String is canonical; with two texts (separated by a newline), the set algebra
// agrees with itself.
#include <string>

#include "cpuset/cpuset.h"
#include "fmt/format.h"
#include "fuzz/fuzz_target.h"

namespace podtopo::fuzz {
namespace {

void CheckRoundTrip(std::string_view text, const CpuSet& s) {
  std::string printed = s.String();
  absl::StatusOr<CpuSet> again = CpuSet::Parse(printed);
  FUZZ_CHECK(again.ok(), fmt::format("String() {:?} of {:?} does not parse: {}", printed, text,
                                     again.status().ToString()));
  FUZZ_CHECK(*again == s, fmt::format("{:?} -> {:?} -> {:?}", text, printed, again->String()));
  FUZZ_CHECK(again->String() == printed, fmt::format("String() of {:?} is not canonical", printed));
  FUZZ_CHECK(CpuSet(s.List()) == s && static_cast<int>(s.List().size()) == s.Size(),
             fmt::format("List() of {:?} disagrees with the set", printed));
  FUZZ_CHECK(s.IsEmpty() == (s.Size() == 0), printed);
}

}  // namespace
}  // namespace podtopo::fuzz

PODTOPO_FUZZ_TARGET(cpuset) {
  std::string_view text = AsText(data, size);
  size_t nl = text.find('\n');
  std::string_view a_text = text.substr(0, nl);
  absl::StatusOr<CpuSet> a = CpuSet::Parse(a_text);
  if (a.ok()) CheckRoundTrip(a_text, *a);
  if (nl == std::string_view::npos) return 0;
  std::string_view b_text = text.substr(nl + 1);
  absl::StatusOr<CpuSet> b = CpuSet::Parse(b_text);
  if (!b.ok()) return 0;
  CheckRoundTrip(b_text, *b);
  if (!a.ok()) return 0;
  CpuSet u = a->Union(*b), i = a->Intersection(*b), d = a->Difference(*b);
  FUZZ_CHECK(u.Size() == a->Size() + b->Size() - i.Size(), "|a u b| != |a| + |b| - |a n b|");
  FUZZ_CHECK(i.Size() == a->IntersectionSize(*b), "IntersectionSize");
  FUZZ_CHECK(i.IsEmpty() != a->Intersects(*b), "Intersects");
  FUZZ_CHECK(d.Union(i) == *a && !d.Intersects(*b), "a - b");
  FUZZ_CHECK(a->IsSubsetOf(u) && i.IsSubsetOf(*b) && (a->IsSubsetOf(*b) == d.IsEmpty()), "subsets");
  return 0;
}
