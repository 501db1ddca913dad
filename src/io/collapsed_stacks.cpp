#include "io/collapsed_stacks.hpp"

#include <algorithm>
#include <charconv>
#include <istream>
#include <limits>
#include <optional>
#include <ostream>
#include <string_view>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "report/utf8.hpp"
#include "nnprof/error.hpp"

namespace nnprof::io {

using report::valid_utf8;
namespace {

constexpr std::string_view kInlinedSuffix = "_[i]";

// Names go into a format with no escaping: ';' separates frames, a newline ends the stack.
// Both would silently change the stack, so they are replaced by look-alikes.
std::string frame_text(std::string_view raw) {
  std::string text = valid_utf8(raw);
  for (char& c : text) {
    if (c == ';') {
      c = ':';
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
      c = ' ';
    }
  }
  return text;
}

std::string_view file_name(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string module_name(const Profile& profile, StringId module) {
  if (module == kNone || module >= profile.strings.size()) return {};
  return frame_text(file_name(profile.strings[module]));
}

FoldedFrame make_frame(const Profile& profile, const StackFrame& frame) {
  FoldedFrame folded;
  folded.module = module_name(profile, frame.module);
  if (frame.function != kNone && frame.function < profile.strings.size() &&
      !profile.strings[frame.function].empty()) {
    folded.name = frame_text(profile.strings[frame.function]);
    folded.kind = frame.inlined ? FoldedFrameKind::Inlined : FoldedFrameKind::Function;
  } else {
    // The offset is what addr2line takes; the run's address only when the offset is unknown.
    const std::uint64_t offset = frame.module_offset != 0 ? frame.module_offset : frame.address;
    folded.name = folded.module.empty() ? std::string("[unknown]") : fmt::format("{}+0x{:x}", folded.module, offset);
    folded.kind = FoldedFrameKind::Unsymbolized;
  }
  return folded;
}

FoldedFrame thread_frame(const Profile& profile, std::uint32_t thread) {
  FoldedFrame folded;
  folded.kind = FoldedFrameKind::Thread;
  if (thread >= profile.threads.size()) {
    folded.name = fmt::format("thread {}", thread);
    return folded;
  }
  const ThreadInfo& info = profile.threads[thread];
  const std::string name = frame_text(info.name);
  folded.name = fmt::format("{} (tid {})", name.empty() ? std::string("thread") : name, info.os_tid);
  return folded;
}

// in_scope[n]: node n is `scope` or lies below it.
std::vector<bool> scope_members(const Profile& profile, std::uint32_t scope) {
  std::vector<bool> in_scope(profile.call_tree.size(), false);
  for (std::size_t n = 0; n < profile.call_tree.size(); ++n) {
    std::uint32_t node = static_cast<std::uint32_t>(n);
    // Bounded walk: a damaged tree with a cycle must not hang the export.
    for (std::size_t steps = 0; steps <= profile.call_tree.size(); ++steps) {
      if (node == scope) {
        in_scope[n] = true;
        break;
      }
      if (node == 0 || node >= profile.call_tree.size()) break;
      node = profile.call_tree[node].parent;
    }
  }
  return in_scope;
}

void check_options(const Profile& profile, const CpuStackOptions& options) {
  if (options.thread != kNone && options.thread >= profile.threads.size())
    throw Error(fmt::format("there is no thread {} in this profile (it has {} threads)", options.thread,
                            profile.threads.size()));
  if (options.scope != 0 && options.scope >= profile.call_tree.size())
    throw Error(fmt::format("there is no scope (call-tree node) {} in this profile (it has {} nodes)",
                            options.scope, profile.call_tree.size()));
}

std::string describe_filter(const Profile& profile, const CpuStackOptions& options) {
  std::string what;
  if (options.thread != kNone) what += " on thread " + thread_frame(profile, options.thread).name;
  if (options.scope != 0) what += " in scope '" + profile.node_path(options.scope) + "'";
  return what;
}

std::string joined(const std::vector<FoldedFrame>& frames) {
  std::string line;
  for (const FoldedFrame& frame : frames) {
    if (!line.empty()) line += ';';
    line += collapsed_frame_text(frame);
  }
  return line;
}

}  // namespace

std::string collapsed_frame_text(const FoldedFrame& frame) {
  if (frame.kind == FoldedFrameKind::Inlined) return frame.name + std::string(kInlinedSuffix);
  return frame.name;
}

void require_cpu_samples(const Profile& profile) {
  if (profile.cpu_samples.empty())
    throw Error(
        "the profile has no CPU samples; record with --sample-hz (nnprof record --sample-hz 999 -- <program>) "
        "or start nnprof::CpuProfiler in the program");
}

std::vector<FoldedStack> fold_cpu_samples(const Profile& profile, const CpuStackOptions& options) {
  require_cpu_samples(profile);
  check_options(profile, options);
  const std::vector<bool> in_scope =
      options.scope == 0 ? std::vector<bool>{} : scope_members(profile, options.scope);

  // First by (thread root, stack index): few distinct keys, one hash lookup per sample.
  std::unordered_map<std::uint64_t, std::uint64_t> by_stack;
  for (const CpuSample& sample : profile.cpu_samples) {
    if (options.thread != kNone && sample.thread != options.thread) continue;
    if (options.scope != 0 && (sample.node >= in_scope.size() || !in_scope[sample.node])) continue;
    const std::uint64_t root = options.thread_roots ? sample.thread : 0;
    const std::uint32_t stack = sample.stack < profile.stacks.size() ? sample.stack : kNone;
    const std::uint64_t weight = options.weight == CpuWeight::Samples ? 1 : sample.weight_ns;
    by_stack[(root << 32) | stack] += weight;
  }
  if (by_stack.empty())
    throw Error(fmt::format("no CPU sample was taken{} ({} samples in the profile)",
                            describe_filter(profile, options), profile.cpu_samples.size()));

  // Then by text: different stacks can print alike (two addresses of one function).
  std::vector<std::optional<FoldedFrame>> frame_cache(profile.frames.size());
  std::map<std::string, FoldedStack> by_line;
  for (const auto& [key, value] : by_stack) {
    FoldedStack folded;
    if (options.thread_roots) folded.frames.push_back(thread_frame(profile, static_cast<std::uint32_t>(key >> 32)));
    const auto stack = static_cast<std::uint32_t>(key & 0xFFFFFFFFU);
    if (stack == kNone || profile.stacks[stack].frames.empty()) {
      folded.frames.push_back(FoldedFrame{"[no stack]", {}, FoldedFrameKind::NoStack});
    } else {
      const std::vector<std::uint32_t>& frames = profile.stacks[stack].frames;
      for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
        if (*it >= profile.frames.size()) {
          folded.frames.push_back(FoldedFrame{"[unknown]", {}, FoldedFrameKind::Unsymbolized});
          continue;
        }
        std::optional<FoldedFrame>& cached = frame_cache[*it];
        if (!cached) cached = make_frame(profile, profile.frames[*it]);
        folded.frames.push_back(*cached);
      }
    }
    std::string line = joined(folded.frames);
    auto [it, inserted] = by_line.try_emplace(std::move(line), std::move(folded));
    if (inserted) {
      it->second.value = value;
    } else {
      it->second.value += value;
    }
  }

  std::vector<FoldedStack> result;
  result.reserve(by_line.size());
  for (auto& [line, folded] : by_line) result.push_back(std::move(folded));
  return result;
}

void write_collapsed(const Profile& profile, std::ostream& out, const CpuStackOptions& options) {
  for (const FoldedStack& stack : fold_cpu_samples(profile, options))
    out << joined(stack.frames) << ' ' << stack.value << '\n';
}

std::map<std::vector<std::string>, std::uint64_t> parse_collapsed(std::istream& in) {
  std::map<std::vector<std::string>, std::uint64_t> stacks;
  std::string line;
  std::uint64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::string_view text = line;
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (text.find_first_not_of(" \t") == std::string_view::npos) continue;
    const auto fail = [&](std::string_view what) {
      throw Error(fmt::format("collapsed stacks, line {}: {} (expected 'frame;frame;... count')", number, what));
    };

    const std::size_t space = text.rfind(' ');
    if (space == std::string_view::npos) fail("no count after the stack");
    const std::string_view count_text = text.substr(space + 1);
    std::string_view stack_text = text.substr(0, space);
    if (count_text.empty()) fail("no count after the stack");
    std::uint64_t count = 0;
    const auto [end, ec] = std::from_chars(count_text.data(), count_text.data() + count_text.size(), count);
    if (ec == std::errc::result_out_of_range) fail(fmt::format("the count '{}' does not fit 64 bits", count_text));
    if (ec != std::errc() || end != count_text.data() + count_text.size())
      fail(fmt::format("the count '{}' is not a whole number", count_text));
    // A differential file ("stack before after", as flamegraph.pl reads it) has a second
    // count where the stack ends.
    const std::size_t previous = stack_text.rfind(' ');
    if (previous != std::string_view::npos && previous + 1 < stack_text.size() &&
        stack_text.find_first_not_of("0123456789", previous + 1) == std::string_view::npos)
      fail("two counts: differential stacks are not supported");
    if (stack_text.empty()) fail("the stack is empty");

    std::vector<std::string> frames;
    std::size_t start = 0;
    for (;;) {
      const std::size_t semicolon = stack_text.find(';', start);
      const std::string_view frame = stack_text.substr(start, semicolon - start);
      if (frame.empty()) fail(fmt::format("frame {} is empty", frames.size() + 1));
      frames.emplace_back(frame);
      if (semicolon == std::string_view::npos) break;
      start = semicolon + 1;
    }
    std::uint64_t& total = stacks[std::move(frames)];
    if (total > std::numeric_limits<std::uint64_t>::max() - count) fail("the total count overflows 64 bits");
    total += count;
  }
  if (in.bad()) throw Error("collapsed stacks: the input could not be read");
  return stacks;
}

void CollapsedExporter::do_write(const Profile& profile, std::ostream& out, const ReportOptions& /*options: names are data here*/) const {
  write_collapsed(profile, out);
  if (!out) throw Error("could not write the collapsed stacks: the output stream failed");
}

}  // namespace nnprof::io
