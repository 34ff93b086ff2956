// "Did you mean ...?": the known name closest to an unknown one, for the readers that warn
// about unknown fields (the kubelet configuration, pod manifests).
//
//   SuggestName("resource", {"name", "image", "resources"});          // "resources"
//   SuggestName("memoryManager", KnownKubeletConfigFields());         // "memoryManagerPolicy"
#ifndef PODTOPO_UTIL_SUGGEST_H_
#define PODTOPO_UTIL_SUGGEST_H_

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace podtopo {

// `s` in lower case without '-', '_' and '.': the form names are compared in.
std::string LowerNoDash(std::string_view s);

// The best "did you mean" candidate for an unknown name among `candidates`: a
// case/dash-insensitive match, else the closest by edit distance when close enough (at most
// max(2, length / 4) edits), else a known name that the unknown one begins (at least 4
// characters: "memoryManager" of memoryManagerPolicy).
std::optional<std::string> SuggestName(std::string_view name,
                                       std::span<const std::string_view> candidates);

}  // namespace podtopo

#endif  // PODTOPO_UTIL_SUGGEST_H_
