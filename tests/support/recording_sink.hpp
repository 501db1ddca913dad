// A SampleSink that keeps what probes set and note, one tick at a time, for probe tests.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "collect/system/probe.hpp"

namespace nnprof::testing {

class RecordingSink final : public detail::system::SampleSink {
 public:
  void set(std::string_view track, std::string_view unit, double value) override {
    values[std::string(track)] = value;
    units[std::string(track)] = std::string(unit);
  }
  void note(std::string_view message) override { notes.emplace_back(message); }
  /// Forgets the values of the last tick (notes and units stay).
  void next_tick() { values.clear(); }

  std::map<std::string, double> values;  ///< this tick's
  std::map<std::string, std::string> units;
  std::vector<std::string> notes;        ///< every call, repeats included
};

}  // namespace nnprof::testing
