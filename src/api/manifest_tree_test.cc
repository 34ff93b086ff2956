#include "api/manifest_tree.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "rapidcheck.h"
#include "testing/property.h"

namespace podtopo {
namespace {

using ::testing::HasSubstr;

ManifestNode Root(const std::string& text, size_t document = 0) {
  absl::StatusOr<ManifestStream> s = ParseManifestText(text, "t.yaml");
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok() || s->documents.size() <= document) return {};
  return s->documents[document].root;
}

std::string ErrorOf(const std::string& text) {
  absl::StatusOr<ManifestStream> s = ParseManifestText(text, "t.yaml");
  return s.ok() ? "" : std::string(s.status().message());
}

const ManifestNode* Get(const ManifestNode& map, const std::string& key) {
  for (const auto& [k, v] : map.entries) {
    if (k == key) return &v;
  }
  return nullptr;
}

// Writes a tree back out in one canonical form (types included), to compare two trees.
std::string Dump(const ManifestNode& n) {
  switch (n.type) {
    case ManifestNode::Type::kNull:
      return "null";
    case ManifestNode::Type::kBool:
      return "b:" + n.text;
    case ManifestNode::Type::kNumber:
      return "n:" + n.text;
    case ManifestNode::Type::kString:
      return "s:" + n.text;
    case ManifestNode::Type::kList: {
      std::string out = "[";
      for (const auto& i : n.items) out += Dump(i) + ",";
      return out + "]";
    }
    case ManifestNode::Type::kMap: {
      std::string out = "{";
      for (const auto& [k, v] : n.entries) out += k + "=" + Dump(v) + ",";
      return out + "}";
    }
  }
  return "?";
}

TEST(ManifestTree, YamlScalarsAreTypedAsKubectlReadsThem) {
  ManifestNode r = Root(
      "a: 8080\nb: \"8080\"\nc: yes\nd: ~\ne:\nf: '1'\ng: !!str 5\nh: |\n  x\ni: 0x10\nj: web\n");
  EXPECT_EQ(Dump(r),
            "{a=n:8080,b=s:8080,c=b:yes,d=null,e=null,f=s:1,g=s:5,h=s:x\n,i=n:0x10,j=s:web,}");
  EXPECT_TRUE(Get(r, "a")->yaml_plain_number);
  EXPECT_FALSE(Get(r, "b")->yaml_plain_number);
}

TEST(ManifestTree, JsonAndYamlOfOneObjectGiveTheSameTree) {
  const std::string yaml =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: a, labels: {app: web}}\nspec:\n  containers:\n"
      "  - name: c\n    args: [\"1\", x]\n    resources: {limits: {cpu: \"2\"}}\n  "
      "nodeName: n1\n";
  const std::string json =
      R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "labels": {"app": "web"}},
          "spec": {"containers": [{"name": "c", "args": ["1", "x"],
                                   "resources": {"limits": {"cpu": "2"}}}],
                   "nodeName": "n1"}})";
  EXPECT_EQ(Dump(Root(yaml)), Dump(Root(json)));
}

TEST(ManifestTree, KeysWrittenTwiceAppearTwice) {
  ManifestNode r = Root("a: 1\na: 2\n");
  ASSERT_EQ(r.entries.size(), 2u);
  EXPECT_EQ(r.entries[1].second.text, "2");
}

TEST(ManifestTree, StatusAndManagedFieldsAreNotKept) {
  const std::string yaml =
      "apiVersion: v1\nkind: List\nitems:\n- kind: Pod\n  metadata:\n    name: a\n"
      "    managedFields: [{manager: kubectl}]\n  spec: {}\n  status: {phase: Running}\n"
      "status: {x: 1}\n";
  ManifestNode r = Root(yaml);
  EXPECT_EQ(Get(r, "status"), nullptr);
  const ManifestNode& item = Get(r, "items")->items.at(0);
  EXPECT_EQ(Get(item, "status"), nullptr);
  EXPECT_EQ(Get(*Get(item, "metadata"), "managedFields"), nullptr);
  EXPECT_NE(Get(item, "spec"), nullptr);
  // A status deeper down is a field like any other.
  ManifestNode deep = Root("spec: {status: 1}\n");
  EXPECT_NE(Get(*Get(deep, "spec"), "status"), nullptr);
  // Skipped values are still parsed: their syntax errors are reported.
  EXPECT_THAT(ErrorOf("kind: Pod\nstatus: {a: [1}\n"), HasSubstr("t.yaml: line 2"));
}

TEST(ManifestTree, AliasesCopyTheAnchoredNode) {
  ManifestNode r = Root("a: &x {cpu: \"1\"}\nb: *x\nc: &s text\nd: *s\n*s : key\n");
  EXPECT_EQ(Dump(*Get(r, "b")), "{cpu=s:1,}");
  EXPECT_EQ(Dump(*Get(r, "d")), "s:text");
  EXPECT_NE(Get(r, "text"), nullptr);  // an alias as a key
  // An anchor inside a status is kept for the aliases that use it.
  ManifestNode s = Root("kind: Pod\nstatus: &st {phase: Running}\nspec: {x: *st}\n");
  EXPECT_EQ(Dump(*Get(*Get(s, "spec"), "x")), "{phase=s:Running,}");
}

TEST(ManifestTree, AliasesCannotExplode) {
  // Ten levels of ten aliases each: 10^10 nodes if they were all copied.
  std::string laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'k'; ++c) {
    std::string prev(1, static_cast<char>(c - 1));
    laughs += std::string(1, c) + ": &" + std::string(1, c) + " [";
    for (int i = 0; i < 10; ++i) laughs += (i ? ", *" : "*") + prev;
    laughs += "]\n";
  }
  EXPECT_THAT(ErrorOf(laughs), HasSubstr("aliases expand to more than 1000000 nodes"));
  EXPECT_THAT(ErrorOf("a: *nothing\n"), HasSubstr("t.yaml: line 1, column 4: malformed YAML: the "
                                                  "alias *nothing names no anchor"));
}

TEST(ManifestTree, KeysMustBeStrings) {
  EXPECT_THAT(ErrorOf("? [a, b]\n: c\n"), HasSubstr("t.yaml: line 1, column 3: map keys must be "
                                                    "strings, got a list"));
  EXPECT_THAT(ErrorOf("? {a: b}\n: c\n"), HasSubstr("got a map"));
  EXPECT_THAT(ErrorOf("~: c\n"), HasSubstr("got null"));
}

TEST(ManifestTree, SyntaxErrorsNameTheLineAndWhatWasBeingRead) {
  EXPECT_EQ(ErrorOf("a: b\nc: [1, 2\n"),
            "t.yaml: line 3, column 1: malformed YAML: did not find expected ',' or ']' (while "
            "parsing a flow sequence that starts at line 2, column 4)");
  EXPECT_THAT(ErrorOf("a: b\n\tc: d\n"), HasSubstr("t.yaml: line 2, column "));
  EXPECT_THAT(ErrorOf("{\"a\": [1,}"), HasSubstr("t.yaml: line 1, column 10: malformed JSON"));
}

TEST(ManifestTree, DocumentsAndHelmSources) {
  const std::string text =
      "# Source: c/templates/a.yaml\nkind: A\n---\n# Source: c/templates/b.yaml\nkind: B\n"
      "---\n---\nkind: D\n";
  absl::StatusOr<ManifestStream> s = ParseManifestText(text, "t.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->documents.size(), 4u);
  EXPECT_EQ(s->documents[0].helm_source, "c/templates/a.yaml");
  EXPECT_EQ(s->documents[1].helm_source, "c/templates/b.yaml");
  EXPECT_TRUE(s->documents[2].root.IsNull());
  EXPECT_EQ(s->documents[3].helm_source, "");
  EXPECT_EQ(Get(s->documents[3].root, "kind")->text, "D");
  EXPECT_FALSE(s->json);
  // Anchors belong to their document.
  EXPECT_THAT(ErrorOf("a: &x 1\n---\nb: *x\n"), HasSubstr("line 3"));
  EXPECT_TRUE(ParseManifestText("", "t.yaml")->documents.empty());
}

constexpr ManifestParseOptions kOnePass{.parallel_json_bytes = SIZE_MAX};
constexpr ManifestParseOptions kParallel{.parallel_json_bytes = 0};

// How the trees of `text` read with `one` and with `many` differ, or their errors; empty
// when they do not (used by the tests and, as RC_ASSERT(... == ""), by the properties).
std::string TreeDifference(const std::string& text, const std::string& name,
                           const ManifestParseOptions& one_options,
                           const ManifestParseOptions& many_options) {
  absl::StatusOr<ManifestStream> one = ParseManifestText(text, name, one_options);
  absl::StatusOr<ManifestStream> many = ParseManifestText(text, name, many_options);
  auto outcome = [](const absl::StatusOr<ManifestStream>& s) {
    return s.ok() ? std::string("a tree") : s.status().ToString();
  };
  if (one.ok() != many.ok() || (!one.ok() && one.status() != many.status())) {
    return "one pass: " + outcome(one) + "; the other: " + outcome(many);
  }
  if (!one.ok()) return "";
  if (one->documents.size() != many->documents.size()) {
    return std::to_string(one->documents.size()) + " documents vs " +
           std::to_string(many->documents.size());
  }
  if (one->json != many->json) return "read as JSON by one only";
  for (size_t d = 0; d < one->documents.size(); ++d) {
    const std::string a = Dump(one->documents[d].root), b = Dump(many->documents[d].root);
    if (a != b) return "document " + std::to_string(d) + ": " + a + " vs " + b;
    if (one->documents[d].helm_source != many->documents[d].helm_source) {
      return "document " + std::to_string(d) + ": Helm sources differ";
    }
  }
  return "";
}

// `text` read with `one` and with `many` gives the same trees, or the same error.
void ExpectSameTree(const std::string& text, const std::string& name,
                    const ManifestParseOptions& one_options,
                    const ManifestParseOptions& many_options) {
  EXPECT_EQ(TreeDifference(text, name, one_options, many_options), "") << text;
}

// The parallel List path gives the tree of one pass, or fails where one pass fails.
void ExpectSameAsOnePass(const std::string& text) {
  ExpectSameTree(text, "l.json", kOnePass, kParallel);
}

TEST(ManifestTreeParallelJson, ListsGiveTheTreeOfOnePass) {
  ExpectSameAsOnePass(R"({"apiVersion": "v1", "kind": "List", "items": [
      {"kind": "Pod", "metadata": {"name": "a]},[\"x\\", "managedFields": [{"m": 1}]},
       "status": {"phase": "Running"}, "spec": {"status": [1, {"a": "}"}], "x": []}},
      7, "s,]", null, true, [], {}, [[1, 2], {"status": 3}],
      {"items": [{"status": 1}]}
    ], "metadata": {"resourceVersion": ""}, "status": "top"})");
  // Not Lists, or not valid: the same answer as one pass.
  for (const std::string& text : std::vector<std::string>{
           R"({"items": []})", R"({"items": [1]})", R"({"items": [1, 2, ]})",
           R"({"items": [, 1, 2]})", R"({"items": [1 2, 3]})", R"({"items": [1, 2}, "x": 1})",
           R"({"items": [1, 2], "items": [3, 4]})", R"({"a": {"items": [1, 2]}})",
           R"({"items": {"a": 1, "b": 2}})", R"({"items": [1, 2]} x)", R"({"items": [1, 2])",
           R"({"items": [{"a": [1}, 2]})", R"({"items": ["\u00e9", "\"]"]})",
           R"({"x": "items", "items": [1, 2]})", R"([{"items": [1, 2]}])", "{items: [1, 2]}"}) {
    ExpectSameAsOnePass(text);
  }
}

TEST(ManifestTreeParallelJson, DepthLimitIsTheSame) {
  auto nested = [](int depth) {
    return R"({"items": [1, )" + std::string(depth, '[') + std::string(depth, ']') + "]}";
  };
  for (int depth : {508, 509, 510, 511}) ExpectSameAsOnePass(nested(depth));
  EXPECT_FALSE(ParseManifestText(nested(600), "l.json", kParallel).ok());
}

// Random Lists: valid ones (every JSON value kind, strings full of JSON punctuation) and the
// same text with one byte changed.
PODTOPO_PROPERTY(ManifestTreeParallelJson, RandomListsGiveTheTreeOfOnePass, ()) {
  static const std::string kChars = "{}[],:\"\\ a1-.eE\n\t";
  auto gen_string = rc::gen::container<std::string>(rc::gen::elementOf(kChars));
  std::function<nlohmann::json(int)> value = [&](int depth) -> nlohmann::json {
    switch (*rc::gen::inRange(0, depth > 3 ? 4 : 6)) {
      case 0: return *gen_string;
      case 1: return *rc::gen::arbitrary<int>();
      case 2: return nullptr;
      case 3: return *rc::gen::arbitrary<bool>();
      case 4: {
        nlohmann::json a = nlohmann::json::array();
        for (int i = *rc::gen::inRange(0, 4); i > 0; --i) a.push_back(value(depth + 1));
        return a;
      }
      default: {
        nlohmann::json o = nlohmann::json::object();
        for (int i = *rc::gen::inRange(0, 4); i > 0; --i) {
          o[*rc::gen::element<std::string>("status", "metadata", "managedFields", "items", "x")] =
              value(depth + 1);
        }
        return o;
      }
    }
  };
  nlohmann::json list = {{"kind", "List"}, {"items", nlohmann::json::array()}};
  for (int i = *rc::gen::inRange(0, 8); i > 0; --i) list["items"].push_back(value(1));
  std::string text = list.dump(*rc::gen::inRange(-1, 3));
  if (*rc::gen::arbitrary<bool>() && !text.empty()) {
    text[*rc::gen::inRange<size_t>(0, text.size())] = *rc::gen::elementOf(kChars);
  }
  RC_ASSERT(TreeDifference(text, "l.json", kOnePass, kParallel) == "");
}

constexpr ManifestParseOptions kOnePassYaml{.parallel_yaml_bytes = SIZE_MAX};
constexpr ManifestParseOptions kParallelYaml{.parallel_yaml_bytes = 0};

// The parallel YAML List path gives the tree of one pass, or fails where one pass fails.
void ExpectYamlSameAsOnePass(const std::string& text) {
  ExpectSameTree(text, "l.yaml", kOnePassYaml, kParallelYaml);
}

TEST(ManifestTreeParallelYaml, KubectlListsGiveTheTreeOfOnePass) {
  ExpectYamlSameAsOnePass(R"(apiVersion: v1
items:
- apiVersion: v1
  kind: Pod
  metadata:
    managedFields:
    - manager: kubectl
    name: "a
      - b"
  spec:
    status: [1, {a: "}"}]
    containers:
    - name: x
      command:
      - "- not an item"
      - |
        - nor this
  status:
    phase: Running
# a comment at column 0

- 7
- "s,]"
-
- [1, 2]
- status: 3
  items:
  - status: 1
kind: List
metadata:
  resourceVersion: ""
status: top
)");
  // Not kubectl's layout, or not valid: the same answer as one pass.
  for (const std::string& text : std::vector<std::string>{
           "items:\n- 1\n- 2\n", "items:\n- 1\n- 2\nitems:\n- 3\n- 4\n",
           "items:\n- a: \"x\n- b\"\n- 2\n", "items:\n- a: 'x\n- b'\n- 2\n",
           "items:\n- [1,\n- 2]\n- 3\n", "items:\n- {a: 1,\n- b: 2}\n- 3\n",
           "items:\n- a\nb\n- c\n", "items:\n- a: &x 1\n- b: *x\n", "items:\n- a: *x\n- 2\n",
           "items:\n  - 1\n  - 2\n", "items:\n- 1\n- 2\n---\nitems:\n- 3\n- 4\n",
           "%YAML 1.1\n---\nitems:\n- 1\n- 2\n", "items:\n- 1\n- 2\nkind: List\n- 3\n",
           "items:\n- 1\n-\t2\n", "items:\n- 1\n- : 2\n- 3\n", "a:\n  items:\n  - 1\n  - 2\n",
           "items:\n- 1\n- 2\nx: [\n", "items:\n- 1\n- 2\r\nkind: List\r\n",
           "# Source: c/t.yaml\nitems:\n- 1\n- 2\n", "items:\n- 1\n- 2\n...\n"}) {
    ExpectYamlSameAsOnePass(text);
  }
}

TEST(ManifestTreeParallelYaml, DepthLimitIsTheSame) {
  auto nested = [](int depth) {
    return "items:\n- 1\n- " + std::string(depth, '[') + std::string(depth, ']') + "\n";
  };
  for (int depth : {508, 509, 510, 511}) ExpectYamlSameAsOnePass(nested(depth));
  EXPECT_FALSE(ParseManifestText(nested(600), "l.yaml", kParallelYaml).ok());
}

// Random kubectl-style YAML Lists (nested maps and lists, plain and quoted scalars full of
// YAML punctuation), and the same text with one byte changed or a line break put in.
PODTOPO_PROPERTY(ManifestTreeParallelYaml, RandomListsGiveTheTreeOfOnePass, ()) {
  static const std::string kChars = "-:#[]{},'\" a1\n&*|>";
  auto scalar = [&]() -> std::string {
    std::string s = *rc::gen::container<std::string>(rc::gen::elementOf(kChars));
    switch (*rc::gen::inRange(0, 3)) {
      case 0: return *rc::gen::element<std::string>("x", "1", "true", "~", "- y", "a b");
      case 1: {
        std::string q = "\"";
        for (char c : s) q += c == '"' ? std::string("\\\"") : c == '\\' ? "\\\\" : std::string(1, c);
        return q + "\"";
      }
      default: {
        std::string q = "'";
        for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
        return q + "'";
      }
    }
  };
  // A value at `indent`, written after "key:" or "- ".
  std::function<std::string(int, int)> value = [&](int indent, int depth) -> std::string {
    const std::string pad(indent, ' ');
    switch (*rc::gen::inRange(0, depth > 2 ? 1 : 3)) {
      case 0: return " " + scalar() + "\n";
      case 1: {
        std::string out = "\n";
        for (int i = *rc::gen::inRange(1, 4); i > 0; --i) {
          out += pad + *rc::gen::element<std::string>("status", "metadata", "managedFields",
                                                        "items", "x") +
                 ":" + value(indent + 2, depth + 1);
        }
        return out;
      }
      default: {
        std::string out = "\n";
        for (int i = *rc::gen::inRange(1, 4); i > 0; --i) {
          out += pad + "-" + value(indent + 2, depth + 1);
        }
        return out;
      }
    }
  };
  std::string text = "apiVersion: v1\nitems:\n";
  for (int i = *rc::gen::inRange(0, 6); i > 0; --i) text += "-" + value(2, 1);
  text += "kind: List\n";
  if (*rc::gen::arbitrary<bool>()) {
    const size_t at = *rc::gen::inRange<size_t>(0, text.size());
    if (*rc::gen::arbitrary<bool>()) {
      text[at] = *rc::gen::elementOf(kChars);
    } else {
      text.insert(at, *rc::gen::element<std::string>("\n- ", "\n", "\n-", "\nk: v\n- "));
    }
  }
  RC_ASSERT(TreeDifference(text, "l.yaml", kOnePassYaml, kParallelYaml) == "");
}

}  // namespace
}  // namespace podtopo
