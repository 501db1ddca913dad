// The CSV export: RFC 4180 records, read back field by field with a strict parser.
#include "io/csv_export.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cpu_profile_fixture.hpp"
#include "sample_profiles.hpp"
#include "io/exporter_registry.hpp"
#include "nnprof/nnprof.hpp"

namespace nnprof {
namespace {

using Record = std::vector<std::string>;

// A strict RFC 4180 reader: every record ends with CRLF; quotes may only enclose a whole
// field, and a quote inside it is doubled; a bare CR or LF is allowed only inside quotes.
std::vector<Record> parse_csv(std::string_view text) {
  std::vector<Record> records;
  Record record;
  std::string field;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '"') {
      ++i;
      for (;;) {
        if (i >= text.size()) throw std::runtime_error("unterminated quoted field");
        if (text[i] == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field += text[i++];
      }
    } else {
      while (i < text.size() && text[i] != ',' && text[i] != '\r' && text[i] != '\n') {
        if (text[i] == '"') throw std::runtime_error("quote inside an unquoted field");
        field += text[i++];
      }
    }
    if (i >= text.size()) throw std::runtime_error("last record does not end with CRLF");
    if (text[i] == ',') {
      record.push_back(std::move(field));
      field.clear();
      ++i;
    } else if (text.substr(i, 2) == "\r\n") {
      record.push_back(std::move(field));
      field.clear();
      records.push_back(std::move(record));
      record.clear();
      i += 2;
    } else {
      throw std::runtime_error("bare CR or LF outside quotes");
    }
  }
  return records;
}

std::string csv_of(const Profile& profile) {
  std::ostringstream out;
  io::write_csv(profile, out);
  return out.str();
}

const Record kHeader{"scope",     "calls",  "total_ns", "self_ns",          "mean_ns",
                     "std_ns",    "min_ns", "max_ns",   "p50_ns",           "p95_ns",
                     "p99_ns",    "threads", "items",   "items_per_second", "alloc_bytes",
                     "alloc_count", "free_bytes", "free_count"};

TEST(CsvParser, ReadsQuotedFieldsAndRejectsMalformedInput) {
  EXPECT_EQ(parse_csv("a,\"b,\"\"c\"\"\r\nd\",\r\n"), (std::vector<Record>{{"a", "b,\"c\"\r\nd", ""}}));
  EXPECT_THROW(parse_csv("a,b\n"), std::runtime_error);
  EXPECT_THROW(parse_csv("a,b"), std::runtime_error);
  EXPECT_THROW(parse_csv("a\"b\r\n"), std::runtime_error);
  EXPECT_THROW(parse_csv("\"ab\r\n"), std::runtime_error);
}

TEST(CsvField, QuotesOnlyWhenNeeded) {
  EXPECT_EQ(io::csv_field("matmul"), "matmul");
  EXPECT_EQ(io::csv_field(""), "");
  EXPECT_EQ(io::csv_field("a b|c;d'e"), "a b|c;d'e");
  EXPECT_EQ(io::csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(io::csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(io::csv_field("line\nbreak"), "\"line\nbreak\"");
  EXPECT_EQ(io::csv_field("carriage\rreturn"), "\"carriage\rreturn\"");
  EXPECT_EQ(io::csv_field("\""), "\"\"\"\"");
}

TEST(CsvExport, HeaderIsTheDocumentedColumnList) {
  const std::string text = csv_of(Profile{});
  EXPECT_EQ(text, std::string(io::kCsvHeader) + "\r\n");
  const auto records = parse_csv(text);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0], kHeader);
}

TEST(CsvExport, OneRecordPerScopeInProfileOrderFieldByField) {
  const auto records = parse_csv(csv_of(testing::export_profile()));
  ASSERT_EQ(records.size(), 6u);
  EXPECT_EQ(records[0], kHeader);
  for (const Record& r : records) EXPECT_EQ(r.size(), kHeader.size());
  EXPECT_EQ(records[1],
            (Record{"train_step", "10", "100000000", "5000000", "10000000", "1000000", "9000000",
                    "12000000", "10000000", "12000000", "12000000", "1", "320", "3200", "0", "0",
                    "0", "0"}));
  EXPECT_EQ(records[2],
            (Record{"forward", "10", "60000000", "20000000", "6000000", "500000", "5500000",
                    "7000000", "6000000", "6900000", "7000000", "1", "0", "0", "0", "0", "0",
                    "0"}));
  EXPECT_EQ(records[3],
            (Record{"matmul", "1000", "40000000", "40000000", "40000", "2500", "35000", "90000",
                    "39000", "52000", "80000", "2", "2000", "50000", "12582912", "300", "6291456",
                    "150"}));
  EXPECT_EQ(records[4],
            (Record{"backward", "10", "30000000", "30000000", "3000000", "250000", "2800000",
                    "3500000", "3000000", "3400000", "3500000", "1", "0", "0", "0", "0", "0",
                    "0"}));
  // The name with a comma, quotes, a pipe and a newline reads back unchanged; a fractional
  // standard deviation keeps its decimals.
  EXPECT_EQ(records[5],
            (Record{testing::kWeirdName, "10", "5000000", "5000000", "500000", "75500.25", "400000",
                    "700000", "480000", "650000", "700000", "1", "0", "0", "4194304", "100", "0",
                    "0"}));
}

TEST(CsvExport, HeapColumnsOnlyWithHeapTracking) {
  const auto records = parse_csv(csv_of(testing::heap_profile()));
  ASSERT_EQ(records.size(), 7u);
  Record header = kHeader;
  for (const char* column : {"heap_alloc_bytes", "heap_alloc_count", "heap_free_bytes", "heap_free_count",
                             "heap_retained_bytes", "heap_retained_blocks", "heap_peak_live_bytes"}) {
    header.push_back(column);
  }
  EXPECT_EQ(records[0], header);
  for (const Record& r : records) EXPECT_EQ(r.size(), header.size());
  // In the profile's order (by total time): load_batch is fifth.
  EXPECT_EQ(records[5], (Record{"load_batch", "10", "100000000", "100000000", "10000000", "0", "10000000",
                                "10000000", "10000000", "10000000", "10000000", "1", "0", "0", "0", "0", "0", "0",
                                "83889152", "13", "0", "0", "8391680", "4", "16780288"}));
  EXPECT_EQ(records[1].back(), "65536") << "train_step's peak live bytes";
  EXPECT_EQ(records[1][20], "76152832") << "train_step freed the batches";
  // The same profile without heap tracking: the version-1 columns only.
  Profile untracked = testing::heap_profile();
  untracked.heap.tracked = false;
  EXPECT_EQ(parse_csv(csv_of(untracked))[0], kHeader);
}

TEST(CsvExport, CpuColumnsOnlyWithCpuSampling) {
  const auto records = parse_csv(csv_of(testing::cpu_profile()));
  ASSERT_EQ(records.size(), 4u);
  Record header = kHeader;
  for (const char* column : {"cpu_samples", "cpu_sampled_ns", "cpu_self_samples", "cpu_self_sampled_ns"}) {
    header.push_back(column);
  }
  EXPECT_EQ(records[0], header);
  for (const Record& r : records) ASSERT_EQ(r.size(), header.size());
  auto cpu = [&](const Record& r) { return Record(r.end() - 4, r.end()); };
  EXPECT_EQ(records[1][0], "train_step");
  EXPECT_EQ(cpu(records[1]), (Record{"12", "14000000", "1", "1000000"}));  // with everything below it
  EXPECT_EQ(records[2][0], "forward");
  EXPECT_EQ(cpu(records[2]), (Record{"9", "11000000", "9", "11000000"}));
  EXPECT_EQ(records[3][0], "backward");
  EXPECT_EQ(cpu(records[3]), (Record{"2", "2000000", "2", "2000000"}));
  Profile unsampled = testing::cpu_profile();
  unsampled.cpu.sampled = false;
  EXPECT_EQ(parse_csv(csv_of(unsampled))[0], kHeader);
}

TEST(CsvExport, RawTextUsesCrlfAndDoublesQuotes) {
  const std::string text = csv_of(testing::export_profile());
  EXPECT_NE(text.find("\r\n\"load, \"\"batch\"\" | 1\nnext\",10,5000000,"), std::string::npos);
  // Every LF ends a record (CRLF) except the one inside the quoted name.
  std::size_t bare_lf = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' && (i == 0 || text[i - 1] != '\r')) ++bare_lf;
  }
  EXPECT_EQ(bare_lf, 1u);
  EXPECT_TRUE(text.ends_with("\r\n"));
}

TEST(CsvExport, FractionalValuesRoundTrip) {
  Profile p;
  p.strings = {"s"};
  ScopeStats s;
  s.name = 0;
  s.total_ns = 3;
  s.items = 1;
  s.time.count = 3;
  s.time.mean_ns = 1.0 / 3.0;
  s.time.stddev_ns = 1e21;
  p.scopes = {s};
  const auto records = parse_csv(csv_of(p));
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(std::stod(records[1][4]), 1.0 / 3.0);
  EXPECT_EQ(std::stod(records[1][5]), 1e21);
  EXPECT_EQ(std::stod(records[1][13]), 1e9 / 3.0);
}

TEST(CsvExport, RegisteredByNameAndExtension) {
  const io::Exporter* csv = io::find_exporter("csv");
  ASSERT_NE(csv, nullptr);
  EXPECT_EQ(csv->name(), "csv");
  EXPECT_EQ(csv->extension(), ".csv");
  EXPECT_EQ(io::find_exporter_for_path("out/RUN.CSV"), csv);
  std::ostringstream out;
  csv->write(testing::export_profile(), out);
  EXPECT_EQ(out.str(), csv_of(testing::export_profile()));
}

TEST(CsvExport, ReachableThroughReportFormat) {
  std::ostringstream out;
  Report(testing::export_profile()).write(out, ReportFormat::Csv);
  EXPECT_EQ(out.str(), csv_of(testing::export_profile()));
}

TEST(CsvExport, FailedStreamThrows) {
  std::ostringstream out;
  out.setstate(std::ios::badbit);
  EXPECT_THROW(io::find_exporter("csv")->write(testing::export_profile(), out), Error);
}

TEST(CsvExport, RecordedProfile) {
  using namespace std::chrono_literals;
  Profiler profiler;
  {
    NNPROF_SCOPE_IN(profiler, "epoch");
    for (int i = 0; i < 3; ++i) {
      NNPROF_SCOPE_IN(profiler, "batch, \"large\"");
      std::this_thread::sleep_for(1ms);
    }
    profiler.add_items("epoch", 96);
  }
  const Profile p = profiler.snapshot();
  std::ostringstream out;
  io::find_exporter("csv")->write(p, out);
  const auto records = parse_csv(out.str());
  ASSERT_EQ(records.size(), p.scopes.size() + 1);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0], kHeader);
  for (std::size_t i = 0; i < p.scopes.size(); ++i) {
    const ScopeStats& s = p.scopes[i];
    const Record& r = records[i + 1];
    ASSERT_EQ(r.size(), kHeader.size());
    EXPECT_EQ(r[0], p.str(s.name));
    EXPECT_EQ(r[1], std::to_string(s.time.count));
    EXPECT_EQ(r[2], std::to_string(s.total_ns));
    EXPECT_EQ(r[3], std::to_string(s.self_ns));
    EXPECT_EQ(r[12], std::to_string(s.items));
  }
  // Scopes are ordered by total time: the enclosing epoch first.
  EXPECT_EQ(records[1][0], "epoch");
  EXPECT_EQ(records[1][1], "1");
  EXPECT_EQ(records[1][12], "96");
  EXPECT_EQ(records[2][0], "batch, \"large\"");
  EXPECT_EQ(records[2][1], "3");
  EXPECT_GE(std::stoull(records[2][2]), 3'000'000u);  // three sleeps of at least 1 ms
}

}  // namespace
}  // namespace nnprof
