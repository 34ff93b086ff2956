// A guard for yaml-cpp 0.7's YAML::LoadAll, which never returns (it allocates a null
// document per turn until memory runs out) when a document starts with a token the parser
// cannot place, such as a line that starts with a stray `,` (jbeder/yaml-cpp#1040, fixed
// upstream in 0.8). ScanYamlDocuments walks the documents once with the event parser,
// building no nodes, and stops where a document makes no progress.
//
// Example:
//   YamlDocumentScan scan = ScanYamlDocuments(text);
//   if (scan.error) ...                 // syntax error: scan.error->mark, scan.error->message
//   else if (scan.stuck) ...            // LoadAll would hang: report scan.stuck_at
//   else documents = YAML::LoadAll(text);   // safe
#ifndef PODTOPO_UTIL_YAML_GUARD_H_
#define PODTOPO_UTIL_YAML_GUARD_H_

#include <cstddef>
#include <limits>
#include <optional>
#include <string>

#include "yaml-cpp/mark.h"

namespace podtopo {

struct YamlSyntaxError {
  YAML::Mark mark;      // where yaml-cpp stopped (may be a null mark)
  std::string message;  // yaml-cpp's text, e.g. "end of map not found"
};

struct YamlDocumentScan {
  // Documents seen before the end of the text, a stop (stuck, error) or max_documents.
  size_t documents = 0;
  // A document started where the previous one did: YAML::LoadAll would never return.
  bool stuck = false;
  // Where that document starts (a null mark unless stuck).
  YAML::Mark stuck_at = YAML::Mark::null_mark();
  // Where the second document starts (a null mark when there are fewer than two).
  YAML::Mark second_document = YAML::Mark::null_mark();
  // A syntax error yaml-cpp threw while scanning (the scan stops there).
  std::optional<YamlSyntaxError> error;
};

// Scans `text` document by document, at most `max_documents` of them. Never throws a
// yaml-cpp exception (other exceptions, e.g. std::bad_alloc, propagate).
YamlDocumentScan ScanYamlDocuments(const std::string& text,
                                   size_t max_documents = std::numeric_limits<size_t>::max());

}  // namespace podtopo

#endif  // PODTOPO_UTIL_YAML_GUARD_H_
