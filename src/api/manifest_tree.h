// The one tree manifests are read from, whichever syntax they were written in.
//
// YAML (libyaml's event parser) and JSON (nlohmann-json's SAX parser) are both turned, in one
// pass and without an intermediate node graph, into ManifestNode documents; the pod and
// controller reading in api/pod_yaml.cc walks only this tree, so both syntaxes give the same
// pods, the same field paths and the same type errors. Anchors and aliases are expanded
// (an alias is a copy of its anchored node; at most 10^6 nodes in all). Fields podtopo never
// reads and that `kubectl get -o json|yaml` makes large (an object's `status`,
// `metadata.managedFields`) are parsed but not stored.
//
// Scalars keep their type as Kubernetes' decoder would see it: a JSON number, true/false or
// null has that type; a YAML scalar that is quoted is a string, and a plain (unquoted) one
// resolves as sigs.k8s.io/yaml (go-yaml v2, YAML 1.1) resolves it: `8080` is a number,
// `yes` / `on` a boolean, `~` null.
//
//   absl::StatusOr<ManifestStream> docs = ParseManifestText(text, "pods.json");
//   for (const ManifestDocument& d : docs->documents) ... d.root, d.helm_source
//
// Errors (kInvalidArgument) start with the source name and name the line and column:
//   `pods.yaml: line 3, column 5: malformed YAML: did not find expected key (while parsing a
//    block mapping that starts at line 1, column 1)`
//   `pods.json: line 7, column 12: malformed JSON: syntax error ...`
#ifndef PODTOPO_API_MANIFEST_TREE_H_
#define PODTOPO_API_MANIFEST_TREE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace podtopo {

struct ManifestNode {
  enum class Type : uint8_t { kNull, kBool, kNumber, kString, kMap, kList };
  Type type = Type::kNull;
  // An unquoted YAML number: quantities read it as kubectl sends it (`010` is 8).
  bool yaml_plain_number = false;
  std::string text;  // the scalar as written (kBool, kNumber, kString)
  // kMap: the keys in document order; a key written twice appears twice (readers report it).
  std::vector<std::pair<std::string, ManifestNode>> entries;
  std::vector<ManifestNode> items;  // kList

  bool IsNull() const { return type == Type::kNull; }
  bool IsMap() const { return type == Type::kMap; }
  bool IsList() const { return type == Type::kList; }
  bool IsScalar() const {
    return type == Type::kBool || type == Type::kNumber || type == Type::kString;
  }

  // Declared here, defaulted below: clang 14 with libstdc++ 12 cannot instantiate
  // std::pair<std::string, ManifestNode> while ManifestNode's implicit members are pending.
  ManifestNode();
  ManifestNode(const ManifestNode&);
  ManifestNode(ManifestNode&&) noexcept;
  ManifestNode& operator=(const ManifestNode&);
  ManifestNode& operator=(ManifestNode&&) noexcept;
  ~ManifestNode();
};
inline ManifestNode::ManifestNode() = default;
inline ManifestNode::ManifestNode(const ManifestNode&) = default;
inline ManifestNode::ManifestNode(ManifestNode&&) noexcept = default;
inline ManifestNode& ManifestNode::operator=(const ManifestNode&) = default;
inline ManifestNode& ManifestNode::operator=(ManifestNode&&) noexcept = default;
inline ManifestNode::~ManifestNode() = default;

struct ManifestDocument {
  ManifestNode root;  // kNull for an empty document
  // The `# Source: chart/templates/x.yaml` comment Helm writes above the document, if any.
  std::string helm_source;
};

struct ManifestStream {
  std::vector<ManifestDocument> documents;
  bool json = false;  // read as JSON
};

struct ManifestParseOptions {
  // A JSON object of at least this many bytes with a top-level `items` array (kubectl's List)
  // has its items parsed on several threads (std::thread::hardware_concurrency, at most 8);
  // the tree and the errors are those of one pass (any part that does not parse makes it
  // read again in one pass, for the error).
  size_t parallel_json_bytes = size_t{4} << 20;
  // The same for a YAML List as kubectl writes it (`items:` at column 0, its items at column
  // 0 below it), when nothing in the text can tie one item to another (no anchors, no
  // directives or document markers, no tabs, no Helm comments).
  size_t parallel_yaml_bytes = size_t{4} << 20;
};

// Text whose first non-blank character is `{` or `[` is read as JSON (one value); anything
// else, and JSON that does not parse but is valid YAML, as a YAML stream (`---` documents).
absl::StatusOr<ManifestStream> ParseManifestText(const std::string& text,
                                                 const std::string& source_name,
                                                 const ManifestParseOptions& options = {});

// Frees `stream`; the items of a List of thousands (`kubectl get pods -A`) are freed on
// several threads, as ParseManifestText built them (one thread walked the 100,000 pods of
// the fleet benchmark for about 0.2 s while the other core waited).
void FreeManifestStream(ManifestStream stream);

}  // namespace podtopo

#endif  // PODTOPO_API_MANIFEST_TREE_H_
