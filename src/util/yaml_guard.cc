#include "util/yaml_guard.h"

#include <sstream>

#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/exceptions.h"
#include "yaml-cpp/parser.h"

namespace podtopo {
namespace {

// Remembers where the latest document started; ignores everything else.
class DocumentStarts : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override { start_ = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
  const YAML::Mark& start() const { return start_; }

 private:
  YAML::Mark start_;
};

}  // namespace

YamlDocumentScan ScanYamlDocuments(const std::string& text, size_t max_documents) {
  YamlDocumentScan scan;
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentStarts handler;
    int previous_pos = -1;
    while (scan.documents < max_documents && parser.HandleNextDocument(handler)) {
      // Every document that makes progress starts further on, so there are at most
      // text.size() + 1 of them; more means the parser is going round in circles.
      if (handler.start().pos == previous_pos || scan.documents > text.size()) {
        scan.stuck = true;
        scan.stuck_at = handler.start();
        break;
      }
      previous_pos = handler.start().pos;
      ++scan.documents;
      if (scan.documents == 2) scan.second_document = handler.start();
    }
  } catch (const YAML::Exception& e) {
    scan.error = YamlSyntaxError{e.mark, e.msg};
  }
  return scan;
}

}  // namespace podtopo
