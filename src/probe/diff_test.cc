#include "probe/diff.h"

#include <gtest/gtest.h>

namespace podtopo::probe {
namespace {

nlohmann::json Report(double node0, double p50, double max, int switches) {
  return {{"cpus", "0-1"},
          {"mems", "0"},
          {"schedFifo", true},
          {"memoryLatencyNs", {{"0", node0}}},
          {"wakeup",
           {{"0", {{"samples", 1000}, {"p50Us", p50}, {"p99Us", 10}, {"p999Us", 20}, {"maxUs", max}}},
            {"1", {{"samples", 1000}, {"p50Us", 4}, {"p99Us", 10}, {"p999Us", 20}, {"maxUs", 30}}}}},
          {"involuntarySwitches", switches}};
}

TEST(DiffReports, SaysWhatMovedWithRatios) {
  nlohmann::json before = Report(90, 4, 40, 3);
  nlohmann::json after = Report(135, 4.2, 20, 50);
  after["wakeup"].erase("1");
  after["wakeup"]["2"] = before["wakeup"]["1"];
  nlohmann::json d = DiffReports(before, after);
  ASSERT_EQ(d["memoryLatencyNs"].size(), 1u);
  EXPECT_EQ(d["memoryLatencyNs"][0]["ratio"], 1.5);
  EXPECT_EQ(d["memoryLatencyNs"][0]["moved"], "worse");
  ASSERT_EQ(d["wakeup"].size(), 3u);
  EXPECT_EQ(d["wakeup"][0]["cpu"], "0");
  EXPECT_EQ(d["wakeup"][0]["p50Us"]["moved"], "");
  EXPECT_EQ(d["wakeup"][0]["p50Us"]["ratio"], 1.05);
  EXPECT_EQ(d["wakeup"][0]["maxUs"]["moved"], "better");
  EXPECT_EQ(d["wakeup"][1]["onlyIn"], "before");
  EXPECT_EQ(d["wakeup"][2]["onlyIn"], "after");
  EXPECT_EQ(d["involuntarySwitches"]["moved"], "worse");
  EXPECT_EQ(d["moved"], 3);
  std::string text = RenderDiff(d);
  EXPECT_NE(text.find("0           90.0     135.0   1.50x  worse"), std::string::npos) << text;
  EXPECT_NE(text.find("1    only in the before report"), std::string::npos) << text;
  EXPECT_NE(text.find("3 figures moved"), std::string::npos) << text;
}

TEST(DiffReports, SubMicrosecondAndSameFiguresDoNotMove) {
  nlohmann::json before = Report(90, 0.3, 40, 3);
  nlohmann::json after = Report(91, 0.9, 40, 8);
  nlohmann::json d = DiffReports(before, after);
  EXPECT_EQ(d["moved"], 0) << d.dump(1);
  EXPECT_NE(RenderDiff(d).find("0 figures moved"), std::string::npos);
}

TEST(CheckReport, NamesTheFileAndKey) {
  EXPECT_EQ(CheckReport("a.json", nlohmann::json::array()).message(), "a.json: not a JSON object");
  nlohmann::json r = Report(90, 4, 40, 3);
  r.erase("wakeup");
  EXPECT_EQ(CheckReport("a.json", r).message(),
            "a.json: \"wakeup\" missing or not an object: not a podtopo probe -o json report");
  r = Report(90, 4, 40, 3);
  r["memoryLatencyNs"]["0"] = "fast";
  EXPECT_EQ(CheckReport("a.json", r).message(), "a.json: memoryLatencyNs.0 is not a number");
  r = Report(90, 4, 40, 3);
  r["wakeup"]["1"]["maxUs"] = nullptr;
  EXPECT_EQ(CheckReport("a.json", r).message(), "a.json: wakeup.1.maxUs is not a number");
  EXPECT_TRUE(CheckReport("a.json", Report(90, 4, 40, 3)).ok());
  EXPECT_EQ(LoadReport("/nonexistent/before.json").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace podtopo::probe
