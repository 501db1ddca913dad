// Turns the flow records of a snapshot (nnprof/flow.hpp) into the profile's flows: each end
// paired with its beginning by id, each end given the span it happened in.
#pragma once

#include <cstdint>
#include <vector>

#include "nnprof/detail/thread_state.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::model {

/// One flow record, converted to nanoseconds and merged call-tree nodes.
struct FlowEvent {
  std::uint32_t thread = 0;
  detail::RecordKind kind = detail::RecordKind::FlowBegin;
  std::uint64_t time_ns = 0;
  std::uint32_t node = 0;
  std::uint64_t id = 0;
};

/// Fills `profile.flows` from `events` (profile.spans must be final: sorted by thread, then
/// start). An end is paired with the latest unpaired beginning of its id before it; a
/// Completion flow gets the latest flow_wait_begin of its id on the waiting thread. Returns
/// the diagnostics to add: ends without a beginning, beginnings never ended, beginnings after
/// their end, and `lost` flow records (dropped at the memory cap or overwritten).
std::vector<Diagnostic> build_flows(Profile& profile, std::vector<FlowEvent> events, std::uint64_t lost);

}  // namespace nnprof::model
