// Human formatting: units, rounding at unit boundaries, separators, table alignment.
#include "report/format.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

namespace nnprof::report {

namespace {

TEST(FormatDuration, PicksUnitWithThreeSignificantDigits) {
  EXPECT_EQ(format_duration(std::uint64_t{0}), "0 ns");
  EXPECT_EQ(format_duration(std::uint64_t{850}), "850 ns");
  EXPECT_EQ(format_duration(std::uint64_t{999}), "999 ns");
  EXPECT_EQ(format_duration(std::uint64_t{1'000}), "1.00 µs");
  EXPECT_EQ(format_duration(std::uint64_t{12'345}), "12.3 µs");
  EXPECT_EQ(format_duration(std::uint64_t{123'456}), "123 µs");
  EXPECT_EQ(format_duration(std::uint64_t{1'234'567}), "1.23 ms");
  EXPECT_EQ(format_duration(std::uint64_t{45'670'000}), "45.7 ms");
  EXPECT_EQ(format_duration(std::uint64_t{4'567'000'000}), "4.57 s");
  EXPECT_EQ(format_duration(std::uint64_t{45'670'000'000}), "45.7 s");
  EXPECT_EQ(format_duration(std::uint64_t{120'000'000'000}), "120 s");
}

TEST(FormatDuration, RoundingThatCarriesMovesToTheNextDigitOrUnit) {
  EXPECT_EQ(format_duration(std::uint64_t{9'996}), "10.0 µs");
  EXPECT_EQ(format_duration(std::uint64_t{99'960}), "100 µs");
  EXPECT_EQ(format_duration(std::uint64_t{999'600}), "1.00 ms");
  EXPECT_EQ(format_duration(std::uint64_t{999'600'000}), "1.00 s");
}

TEST(FormatDuration, MinutesAbove120SecondsAndHoursAbove120Minutes) {
  EXPECT_EQ(format_duration(std::uint64_t{123'400'000'000}), "2 min 3.4 s");
  // 179.96 s rounds to 180.0 s: the seconds must not read 60.0.
  EXPECT_EQ(format_duration(std::uint64_t{179'960'000'000}), "3 min 0.0 s");
  EXPECT_EQ(format_duration(std::uint64_t{7'199'000'000'000}), "119 min 59.0 s");
  EXPECT_EQ(format_duration(std::uint64_t{12'300'000'000'000}), "3 h 25 min");
}

TEST(FormatDuration, FractionalNegativeAndNonFinite) {
  EXPECT_EQ(format_duration(0.0), "0 ns");
  EXPECT_EQ(format_duration(12.34), "12.3 ns");
  EXPECT_EQ(format_duration(5.0), "5.00 ns");
  EXPECT_EQ(format_duration(100.0), "100 ns");
  EXPECT_EQ(format_duration(999.7), "1.00 µs");
  EXPECT_EQ(format_duration(40'000.0), "40.0 µs");
  EXPECT_EQ(format_duration(-1'234'567.0), "-1.23 ms");
  EXPECT_EQ(format_duration(std::nan("")), "n/a");
  EXPECT_EQ(format_duration(std::numeric_limits<double>::infinity()), "n/a");
}

TEST(FormatDuration, PlainIntegerLiteralsAreNotAmbiguous) {
  EXPECT_EQ(format_duration(850), "850 ns");
  EXPECT_EQ(format_duration(-850), "-850 ns");
  EXPECT_EQ(format_duration(1'500u), "1.50 µs");
}

TEST(FormatBytes, BinaryUnitsWithThreeSignificantDigits) {
  EXPECT_EQ(format_bytes(std::uint64_t{0}), "0 B");
  EXPECT_EQ(format_bytes(std::uint64_t{512}), "512 B");
  EXPECT_EQ(format_bytes(std::uint64_t{1023}), "1023 B");
  EXPECT_EQ(format_bytes(std::uint64_t{1024}), "1.00 KiB");
  EXPECT_EQ(format_bytes(std::uint64_t{1536}), "1.50 KiB");
  EXPECT_EQ(format_bytes(std::uint64_t{15 * 1024 + 512}), "15.5 KiB");
  EXPECT_EQ(format_bytes(std::uint64_t{512} << 10), "512 KiB");
  EXPECT_EQ(format_bytes(std::uint64_t{3} << 20), "3.00 MiB");
  EXPECT_EQ(format_bytes(std::uint64_t{1'288'490'189}), "1.20 GiB");
  EXPECT_EQ(format_bytes(std::uint64_t{5} << 40), "5.00 TiB");
}

TEST(FormatBytes, BoundaryBetweenUnits) {
  // 1000 KiB still reads in KiB; one byte short of 1 MiB rounds up into MiB.
  EXPECT_EQ(format_bytes(std::uint64_t{1'024'000}), "1000 KiB");
  EXPECT_EQ(format_bytes(std::uint64_t{1'048'575}), "1.00 MiB");
  EXPECT_EQ(format_bytes(std::numeric_limits<std::uint64_t>::max()), "16.0 EiB");
}

TEST(FormatBytes, SignedValues) {
  EXPECT_EQ(format_bytes(std::int64_t{-1536}), "-1.50 KiB");
  EXPECT_EQ(format_bytes(std::int64_t{-512}), "-512 B");
  EXPECT_EQ(format_bytes(std::int64_t{2048}), "2.00 KiB");
  EXPECT_EQ(format_bytes(std::numeric_limits<std::int64_t>::min()), "-8.00 EiB");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(-2048), "-2.00 KiB");
}

TEST(FormatCount, ThousandsSeparators) {
  EXPECT_EQ(format_count(0), "0");
  EXPECT_EQ(format_count(999), "999");
  EXPECT_EQ(format_count(1'000), "1,000");
  EXPECT_EQ(format_count(123'456), "123,456");
  EXPECT_EQ(format_count(1'234'567), "1,234,567");
  EXPECT_EQ(format_count(std::numeric_limits<std::uint64_t>::max()), "18,446,744,073,709,551,615");
}

TEST(FormatPercent, OneDecimalAndTinyShares) {
  EXPECT_EQ(format_percent(0.123), "12.3%");
  EXPECT_EQ(format_percent(0.0), "0.0%");
  EXPECT_EQ(format_percent(1.0), "100.0%");
  EXPECT_EQ(format_percent(0.001), "0.1%");
  EXPECT_EQ(format_percent(0.0004), "<0.1%");
  EXPECT_EQ(format_percent(1e-12), "<0.1%");
  EXPECT_EQ(format_percent(-0.25), "-25.0%");
  EXPECT_EQ(format_percent(std::nan("")), "n/a");
}

TEST(PercentOf, SharesOfOneWholeAndNoneOfNothing) {
  const PercentOf of_200(200);
  EXPECT_EQ(of_200(50), "25.0%");
  EXPECT_DOUBLE_EQ(of_200.fraction(50), 0.25);
  const PercentOf of_nothing(0);
  EXPECT_EQ(of_nothing(50), "n/a");
  EXPECT_DOUBLE_EQ(of_nothing.fraction(50), 0.0);
}

TEST(FormatCount, WithItsNounSingularForExactlyOne) {
  EXPECT_EQ(format_count(1, "call", "calls"), "1 call");
  EXPECT_EQ(format_count(0, "call", "calls"), "0 calls");
  EXPECT_EQ(format_count(1'000, "call", "calls"), "1,000 calls");
}

TEST(FormatRate, SeparatorsFromAThousandSignificantDigitsBelow) {
  EXPECT_EQ(format_rate(3'200.0, "items/s"), "3,200 items/s");
  EXPECT_EQ(format_rate(1'234'567.4, "items/s"), "1,234,567 items/s");
  EXPECT_EQ(format_rate(640.0, "items/s"), "640 items/s");
  EXPECT_EQ(format_rate(4.5, "calls/s"), "4.5 calls/s");
  EXPECT_EQ(format_rate(std::numeric_limits<double>::infinity(), "calls/s"), "n/a");
}

TEST(DisplayWidth, CountsCodePointsNotBytes) {
  EXPECT_EQ(display_width(""), 0u);
  EXPECT_EQ(display_width("abc"), 3u);
  EXPECT_EQ(display_width("µs"), 2u);           // 2-byte µ
  EXPECT_EQ(display_width("12.3 µs"), 7u);
  EXPECT_EQ(display_width("a→b"), 3u);          // 3-byte arrow
  EXPECT_EQ(display_width("\xF0\x9F\x94\xA5"), 1u);  // one 4-byte code point
}

TEST(TextTable, AlignsColumnsByDisplayWidth) {
  TextTable table({{"Name", Align::Left, ""}, {"Time", Align::Right, ""}});
  table.add_row({"a", "12.3 µs"});
  table.add_row({"long_name", "1.23 ms"});
  EXPECT_EQ(table.str(""),
            "Name          Time\n"
            "---------  -------\n"
            "a          12.3 µs\n"
            "long_name  1.23 ms\n");
}

TEST(TextTable, UnicodeCellsLineUpWithAsciiCells) {
  TextTable table({{"Unit", Align::Left, ""}, {"Value", Align::Right, ""}, {"Notes", Align::Left, ""}});
  table.add_row({"µs", "1", "micro"});
  table.add_row({"ms", "1000", "milli"});
  const std::string text = table.str();
  std::istringstream lines(text);
  std::string line;
  std::size_t expected_width = 0;
  while (std::getline(lines, line)) {
    if (expected_width == 0) expected_width = display_width(line);
    EXPECT_EQ(display_width(line), expected_width) << line;
  }
  EXPECT_EQ(text,
            "  Unit  Value  Notes\n"
            "  ----  -----  -----\n"
            "  µs        1  micro\n"
            "  ms     1000  milli\n");
}

TEST(TextTable, NoTrailingSpacesAndMissingCellsAreEmpty) {
  TextTable table({{"Value", Align::Right, ""}, {"Comment", Align::Left, ""}});
  table.add_row({"1", "x"});
  table.add_row({"22"});
  EXPECT_EQ(table.str(""),
            "Value  Comment\n"
            "-----  -------\n"
            "    1  x\n"
            "   22\n");
  ASSERT_EQ(table.rows().size(), 2u);
  EXPECT_EQ(table.rows()[1], (std::vector<std::string>{"22", ""}));
}

TEST(TextTable, KeepsCellDataForOtherRenderers) {
  TextTable table({{"Scope", Align::Left, ""}, {"Total", Align::Right, ""}});
  EXPECT_TRUE(table.empty());
  table.add_row({"forward", "1.00 s"});
  EXPECT_FALSE(table.empty());
  ASSERT_EQ(table.columns().size(), 2u);
  EXPECT_EQ(table.columns()[1].header, "Total");
  EXPECT_EQ(table.columns()[1].align, Align::Right);
  EXPECT_EQ(table.widths(), (std::vector<std::size_t>{7, 6}));
}

TEST(TextTable, TooManyCellsIsAnError) {
  TextTable table({{"Only", Align::Left, ""}});
  EXPECT_THROW(table.add_row({"a", "b"}), std::invalid_argument);
}

}  // namespace
}  // namespace nnprof::report
