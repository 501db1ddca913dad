#include "analysis/torch_collectives.hpp"

#include <algorithm>
#include <map>

#include "nnprof/ids.hpp"

namespace nnprof::analysis {

std::string plain_operation(std::string_view name) {
  std::string out;
  for (const char c : name)
    if (c != '_') out += c;
  if (out.size() > 4 && out.ends_with("base")) out.resize(out.size() - 4);
  return out;
}

std::string c10d_operation(std::string_view span_name) {
  constexpr std::string_view kPrefix = "c10d::";
  if (!span_name.starts_with(kPrefix) || span_name.size() == kPrefix.size()) return {};
  return plain_operation(span_name.substr(kPrefix.size()));
}

std::string backend_work_operation(std::string_view span_name) {
  for (const std::string_view backend : {"gloo:", "nccl:"})
    if (span_name.starts_with(backend) && span_name.size() > backend.size())
      return plain_operation(span_name.substr(backend.size()));
  return {};
}

bool synchronises_every_member(std::string_view plain) {
  for (const std::string_view op : {"allreduce", "allreducecoalesced", "allgather", "allgathercoalesced", "alltoall",
                                    "reducescatter", "barrier"})
    if (plain == op) return true;
  return false;
}

std::vector<std::uint32_t> pair_backend_works(std::span<const TimedOperation> calls,
                                              std::span<const TimedOperation> works) {
  std::vector<std::uint32_t> pair(calls.size(), kNone);
  // Each side's indices by operation, in start order.
  const auto by_operation = [](std::span<const TimedOperation> list) {
    std::map<std::string_view, std::vector<std::uint32_t>> out;
    for (std::uint32_t i = 0; i < list.size(); ++i) out[list[i].operation].push_back(i);
    for (auto& [op, indices] : out)
      std::ranges::stable_sort(indices, {}, [&](std::uint32_t i) { return list[i].start_ns; });
    return out;
  };
  const auto work_lists = by_operation(works);
  for (const auto& [op, indices] : by_operation(calls)) {
    const auto found = work_lists.find(op);
    if (found == work_lists.end()) continue;
    const std::vector<std::uint32_t>& candidates = found->second;
    std::size_t next = 0;
    for (const std::uint32_t call : indices) {
      while (next < candidates.size() && works[candidates[next]].start_ns < calls[call].start_ns) ++next;
      if (next == candidates.size()) break;
      pair[call] = candidates[next++];
    }
  }
  return pair;
}

}  // namespace nnprof::analysis
