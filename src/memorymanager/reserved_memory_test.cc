#include "memorymanager/reserved_memory.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "memorymanager/test_util.h"
#include "testing/testing.h"

namespace podtopo::memorymanager {
namespace {

using namespace testutil;  // NOLINT

SystemReservedMemory ExpectedReserved(const json& j) { return SystemReservedFromJson(j); }

// --- TestValidateReservedMemory --------------------------------------------------------------

class ValidateReservedMemoryVectors : public ::testing::TestWithParam<VectorCase> {};

TEST_P(ValidateReservedMemoryVectors, Matches) {
  const json& c = GetParam().data;
  absl::Status s = ValidateReservedMemory(c["machine_numa_nodes"].get<std::vector<int>>(),
                                          ResourcesFromJson(c["node_allocatable_reservation"]),
                                          ReservationsFromJson(c["reserved_memory"]));
  if (c["expected_error"].is_null()) {
    EXPECT_TRUE(s.ok()) << s;
  } else {
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.message(), c["expected_error"].get<std::string>());
  }
}

INSTANTIATE_TEST_SUITE_P(MemoryCases, ValidateReservedMemoryVectors,
                         ::testing::ValuesIn(CasesOf("validate_reserved_memory")), ParamName);

// --- TestConvertPreReserved ------------------------------------------------------------------

class ConvertReservedVectors : public ::testing::TestWithParam<VectorCase> {};

TEST_P(ConvertReservedVectors, Matches) {
  const json& c = GetParam().data;
  auto got = ConvertReserved(c["machine_numa_nodes"].get<std::vector<int>>(),
                             ReservationsFromJson(c["reserved_memory"]));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, ExpectedReserved(c["expected"]));
}

INSTANTIATE_TEST_SUITE_P(MemoryCases, ConvertReservedVectors,
                         ::testing::ValuesIn(CasesOf("convert_reserved")), ParamName);

// --- TestGetSystemReservedMemory -------------------------------------------------------------

class GetSystemReservedMemoryVectors : public ::testing::TestWithParam<VectorCase> {};

TEST_P(GetSystemReservedMemoryVectors, Matches) {
  const json& c = GetParam().data;
  auto got = GetSystemReservedMemory(c["machine_numa_nodes"].get<std::vector<int>>(),
                                     ResourcesFromJson(c["node_allocatable_reservation"]),
                                     ReservationsFromJson(c["reserved_memory"]));
  if (!c["expected_error"].is_null()) {
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().message(), c["expected_error"].get<std::string>());
    return;
  }
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, ExpectedReserved(c["expected"]));
}

INSTANTIATE_TEST_SUITE_P(MemoryCases, GetSystemReservedMemoryVectors,
                         ::testing::ValuesIn(CasesOf("get_system_reserved_memory")), ParamName);

// --- Config validation (validation_reserved_memory.go) ---------------------------------------

Quantity Q(const std::string& s) { return Quantity::Parse(s).value(); }

TEST(ValidateReservedMemoryConfiguration, ValidConfigHasNoErrors) {
  EXPECT_TRUE(ValidateReservedMemoryConfiguration({}).empty());
  EXPECT_TRUE(ValidateReservedMemoryConfiguration(
                  {{0, {{"memory", Q("1Gi")}, {"hugepages-2Mi", Q("4Mi")}}},
                   {1, {{"memory", Q("1Gi")}}}})
                  .empty());
}

TEST(ValidateReservedMemoryConfiguration, ReportsEveryProblemWithKubeletTexts) {
  std::vector<std::string> errors = ValidateReservedMemoryConfiguration(
      {{0, {{"cpu", Q("1")}, {"memory", Q("0")}}}, {0, {{"memory", Q("1Gi")}}}});
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0],
            "invalid configuration: the limit type \"cpu\" for NUMA node 0 is not supported, "
            "only [memory hugepages-<HugePageSize>] is accepted");
  EXPECT_EQ(errors[1],
            "invalid configuration: reserved memory may not be zero for NUMA node 0 and "
            "resource \"memory\"");
  EXPECT_EQ(errors[2],
            "invalid configuration: the reserved memory has a duplicate value for NUMA node 0 "
            "and resource \"memory\"");
}

TEST(ValidateReservedMemoryConfiguration, SameTypeOnDifferentNodesIsNoDuplicate) {
  EXPECT_TRUE(ValidateReservedMemoryConfiguration(
                  {{0, {{"memory", Q("1Gi")}}}, {1, {{"memory", Q("1Gi")}}}})
                  .empty());
}

// --- Totals and formats ----------------------------------------------------------------------

TEST(ValidateReservedMemory, TotalTakesFormatOfLatestEntryAsGoAdd) {
  // getTotalMemoryTypeReserved adds the running total into each new quantity: the sum takes
  // the last entry's format ("1536Mi" BinarySI here, not a decimal number).
  absl::Status s = ValidateReservedMemory(
      {0, 1}, {{"memory", Q("1")}},
      {{0, {{"memory", Q("1073741824")}}}, {1, {{"memory", Q("512Mi")}}}});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "the total amount \"1536Mi\" of type \"memory\" is not equal to the value \"1\" "
            "determined by Node Allocatable feature");
}

TEST(ValidateReservedMemory, NonMemoryAllocatableTypesAreIgnored) {
  EXPECT_TRUE(ValidateReservedMemory({0}, {{"cpu", Q("2")}, {"memory", Q("1Gi")}},
                                     {{0, {{"memory", Q("1Gi")}}}})
                  .ok());
}

TEST(ConvertReserved, RejectsFractionalQuantities) {
  auto got = ConvertReserved({0}, {{0, {{"memory", Q("0.5")}}}});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(), "could not covert a variable of type Quantity to int64");
}

TEST(GoQuantityAdd, SumsPrintCanonically) {
  EXPECT_EQ(GoQuantityAdd(Quantity(), Q("+1Gi")).String(), "1Gi");
  EXPECT_EQ(GoQuantityAdd(Quantity(), Q("1.441")).String(), "1441m");
}

TEST(QuantityAsInt64, WholeNumbersOnly) {
  EXPECT_EQ(QuantityAsInt64(Q("1Gi")), 1073741824);
  // Go holds "1000m" as int64Amount{1000, -3}; AsInt64 refuses any negative scale.
  EXPECT_EQ(QuantityAsInt64(Q("1000m")), std::nullopt);
  EXPECT_EQ(QuantityAsInt64(Q("1500m")), std::nullopt);
  EXPECT_EQ(QuantityAsInt64(Q("100E")), std::nullopt);  // 1e20 does not fit int64
}

TEST(NodeAllocatableReservation, SumsReservedAndHardEviction) {
  ResourceList capacity = {{"cpu", Q("8")}, {"memory", Q("16Gi")}, {"hugepages-2Mi", Q("0")}};
  ResourceList got = NodeAllocatableReservation(
      capacity, /*system_reserved=*/{{"memory", Q("1Gi")}, {"cpu", Q("500m")}},
      /*kube_reserved=*/{{"memory", Q("512Mi")}},
      {{"memory.available", Q("100Mi"), 0}, {"nodefs.available", std::nullopt, 0.1f}});
  ASSERT_EQ(got.count("memory"), 1u);
  EXPECT_EQ(got["memory"].String(), "1636Mi");
  EXPECT_EQ(got["cpu"].String(), "500m");
  EXPECT_EQ(got.count("hugepages-2Mi"), 0u);       // zero sums are left out
  EXPECT_EQ(got.count("ephemeral-storage"), 0u);   // not part of the capacity
}

TEST(NodeAllocatableReservation, PercentageOfCapacity) {
  ResourceList got = NodeAllocatableReservation({{"memory", Q("10Gi")}}, {}, {},
                                                {{"memory.available", std::nullopt, 0.5f}});
  EXPECT_EQ(got["memory"].Value(), 5368709120);
}

}  // namespace
}  // namespace podtopo::memorymanager
