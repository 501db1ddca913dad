#include "model/system_builder.hpp"

#include <vector>

#include "model/span_lookup.hpp"

namespace nnprof::model {

namespace {

// The thread whose scopes the samples carry: the one the user named, else the process's main
// thread (its tid is the pid), else the first thread that recorded.
std::uint32_t scope_thread(const Profile& p, const std::string& wanted) {
  if (!wanted.empty()) {
    for (const ThreadInfo& t : p.threads)
      if (t.name == wanted) return t.id;
    return kNone;
  }
  for (const ThreadInfo& t : p.threads)
    if (t.os_tid == p.meta.pid) return t.id;
  return p.threads.empty() ? kNone : p.threads.front().id;
}

struct SampleEnd {
  std::uint32_t thread = kNone;
  std::uint64_t time_ns = 0;
  std::uint32_t span = kNone;
};

}  // namespace

void build_system(Profile& profile, const detail::RawSystem& raw, std::uint64_t monotonic_origin_ns) {
  if (!raw.data.monitored) return;
  SystemProfile& s = profile.system;
  s = raw.data;
  for (std::uint64_t& t : s.sample_ns) t = t > monotonic_origin_ns ? t - monotonic_origin_ns : 0;

  s.scope_thread = scope_thread(profile, raw.scope_thread_name);
  if (s.scope_thread == kNone && !raw.scope_thread_name.empty())
    s.notes.push_back("no thread is named \"" + raw.scope_thread_name + "\": samples carry no scope");
  s.sample_scope.assign(s.sample_ns.size(), kNone);
  if (s.scope_thread == kNone || profile.spans.empty()) return;

  std::vector<SampleEnd> ends(s.sample_ns.size());
  std::vector<SampleEnd*> pointers;
  pointers.reserve(ends.size());
  for (std::size_t i = 0; i < ends.size(); ++i) {
    ends[i] = SampleEnd{s.scope_thread, s.sample_ns[i], kNone};
    pointers.push_back(&ends[i]);
  }
  assign_innermost_spans(profile.spans, std::move(pointers));
  for (std::size_t i = 0; i < ends.size(); ++i)
    if (ends[i].span != kNone) s.sample_scope[i] = profile.spans[ends[i].span].name;
}

}  // namespace nnprof::model
