#include "util/yaml_guard.h"

#include <string>

#include "gtest/gtest.h"

namespace podtopo {
namespace {

TEST(ScanYamlDocumentsTest, CountsDocuments) {
  EXPECT_EQ(ScanYamlDocuments("").documents, 0u);
  YamlDocumentScan one = ScanYamlDocuments("a: 1\n");
  EXPECT_EQ(one.documents, 1u);
  EXPECT_FALSE(one.stuck);
  EXPECT_FALSE(one.error.has_value());
  EXPECT_TRUE(one.second_document.is_null());
  EXPECT_TRUE(one.stuck_at.is_null());

  YamlDocumentScan three = ScanYamlDocuments("a: 1\n---\nb: 2\n---\nc: 3\n");
  EXPECT_EQ(three.documents, 3u);
  EXPECT_FALSE(three.stuck);
  EXPECT_EQ(three.second_document.line, 1);  // the `---` line (0-based)
}

TEST(ScanYamlDocumentsTest, StopsAtMaxDocuments) {
  std::string text;
  for (int i = 0; i < 10; ++i) text += "---\na: 1\n";
  EXPECT_EQ(ScanYamlDocuments(text).documents, 10u);
  YamlDocumentScan capped = ScanYamlDocuments(text, 4);
  EXPECT_EQ(capped.documents, 4u);
  EXPECT_FALSE(capped.stuck);
}

TEST(ScanYamlDocumentsTest, StrayCommaIsStuckNotAHang) {
  // yaml-cpp 0.7's LoadAll never returns on these (jbeder/yaml-cpp#1040).
  for (const char* text : {",", ",\n", ", a", "{a: 1},\n"}) {
    YamlDocumentScan scan = ScanYamlDocuments(text);
    EXPECT_TRUE(scan.stuck) << text;
    EXPECT_FALSE(scan.error.has_value()) << text;
  }
  YamlDocumentScan later = ScanYamlDocuments("a: 1\n---\n,\n");
  ASSERT_TRUE(later.stuck);
  EXPECT_EQ(later.stuck_at.line, 2);
  EXPECT_EQ(later.stuck_at.column, 0);
  EXPECT_GE(later.documents, 1u);
}

TEST(ScanYamlDocumentsTest, SyntaxErrorIsReportedWithItsPosition) {
  YamlDocumentScan scan = ScanYamlDocuments("a: [1, 2\n");
  ASSERT_TRUE(scan.error.has_value());
  EXPECT_FALSE(scan.error->message.empty());
  EXPECT_FALSE(scan.error->mark.is_null());
  YamlDocumentScan tab = ScanYamlDocuments("a: b\n\tc: d\n");
  ASSERT_TRUE(tab.error.has_value());
  EXPECT_EQ(tab.error->mark.line, 1);
}

}  // namespace
}  // namespace podtopo
