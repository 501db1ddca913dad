#include "io/report_import.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/json_report.hpp"
#include "nnprof/error.hpp"

namespace nnprof {
namespace io {
namespace {

// Ordered, so that the scopes come back in the report's order (longest first), as in a Profile.
using Json = nlohmann::ordered_json;

// The members of the JSON report the embedded block keeps: what compare and model-compare read.
constexpr std::array<std::string_view, 9> kEmbeddedMembers = {
    "schema", "schema_version", "metadata", "annotations", "timing", "memory", "compute", "call_tree", "completeness"};
// The heap's totals; its timeline, leak sites and allocator ranking stay in the .nnprof file.
constexpr std::array<std::string_view, 4> kHeapDetails = {"leak_verdict", "top_allocators", "leaks", "timeline"};

// JSON with every "--" written "-\u002d", so that it cannot end the HTML comment it sits in.
// Outside strings JSON never has two '-' in a row, so only string contents change, and a JSON
// parser reads them back as they were.
std::string comment_safe(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (const char c : json) {
    if (c == '-' && !out.empty() && out.back() == '-') {
      out += "\\u002d";
    } else {
      out += c;
    }
  }
  return out;
}

template <typename T>
T get_or(const Json& object, std::string_view key, T fallback) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  return it->template get<T>();
}

// The strings of the profile being rebuilt, each once.
class Strings {
 public:
  explicit Strings(Profile& profile) : profile_(profile) {}
  StringId intern(const std::string& s) {
    const auto [it, added] = ids_.try_emplace(s, static_cast<StringId>(profile_.strings.size()));
    if (added) profile_.strings.push_back(s);
    return it->second;
  }

 private:
  Profile& profile_;
  std::unordered_map<std::string, StringId> ids_;
};

Metadata metadata_of(const Json& j) {
  Metadata m;
  m.nnprof_version = get_or<std::string>(j, "nnprof_version", "");
  m.hostname = get_or<std::string>(j, "hostname", "");
  m.os = get_or<std::string>(j, "os", "");
  m.cpu_model = get_or<std::string>(j, "cpu_model", "");
  m.logical_cpus = get_or<std::uint32_t>(j, "logical_cpus", 0);
  m.compiler = get_or<std::string>(j, "compiler", "");
  m.command_line = get_or<std::string>(j, "command_line", "");
  m.pid = get_or<std::int64_t>(j, "pid", 0);
  m.duration_ns = get_or<std::uint64_t>(j, "duration_ns", 0);
  if (const auto c = j.find("clock"); c != j.end() && c->is_object()) {
    m.clock.source = get_or<std::string>(*c, "source", m.clock.source);
    m.clock.ns_per_tick = get_or<double>(*c, "ns_per_tick", m.clock.ns_per_tick);
    m.clock.tick_origin = get_or<std::uint64_t>(*c, "tick_origin", 0);
    m.clock.monotonic_origin_ns = get_or<std::uint64_t>(*c, "monotonic_origin_ns", 0);
    m.clock.unix_origin_ns = get_or<std::int64_t>(*c, "unix_origin_ns", 0);
    m.clock.relative_error = get_or<double>(*c, "relative_error", 0.0);
  }
  return m;
}

MemoryAttribution memory_of(const Json& j) {
  MemoryAttribution m;
  if (!j.is_object()) return m;
  m.alloc_bytes = get_or<std::uint64_t>(j, "alloc_bytes", 0);
  m.alloc_count = get_or<std::uint64_t>(j, "alloc_count", 0);
  m.free_bytes = get_or<std::uint64_t>(j, "free_bytes", 0);
  m.free_count = get_or<std::uint64_t>(j, "free_count", 0);
  return m;
}

HeapAttribution heap_of(const Json& j) {
  HeapAttribution h;
  if (!j.is_object()) return h;
  h.alloc_bytes = get_or<std::uint64_t>(j, "alloc_bytes", 0);
  h.alloc_count = get_or<std::uint64_t>(j, "alloc_count", 0);
  h.free_bytes = get_or<std::uint64_t>(j, "free_bytes", 0);
  h.free_count = get_or<std::uint64_t>(j, "free_count", 0);
  h.retained_bytes = get_or<std::uint64_t>(j, "retained_bytes", 0);
  h.retained_blocks = get_or<std::uint64_t>(j, "retained_blocks", 0);
  h.peak_live_bytes = get_or<std::uint64_t>(j, "peak_live_bytes", 0);
  return h;
}

const Json& member_or_null(const Json& object, std::string_view key) {
  static const Json kNull;
  const auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

// The report gives the mean over `count` calls, not their sum: mean x count gives the sum back
// exactly while it is below 2^53 ns (104 days).
std::uint64_t sum_of(double mean_ns, std::uint64_t count) {
  return static_cast<std::uint64_t>(std::llround(mean_ns * static_cast<double>(count)));
}

void read_scopes(const Json& timing, const Json& compute, Profile& p, Strings& strings) {
  if (!timing.is_object()) throw Error("its \"timing\" member is not an object");
  std::unordered_map<std::string, std::pair<double, std::uint64_t>> work;  // name -> flops, bytes
  if (compute.is_object())
    for (const Json& c : member_or_null(compute, "scopes"))
      work[c.at("name").get<std::string>()] = {get_or<double>(c, "flops", 0.0), get_or<std::uint64_t>(c, "bytes", 0)};
  for (const auto& [name, t] : timing.items()) {
    ScopeStats s;
    s.name = strings.intern(name);
    s.total_ns = t.at("total_ns").get<std::uint64_t>();
    s.self_ns = t.at("self_ns").get<std::uint64_t>();
    s.time.count = t.at("count").get<std::uint64_t>();
    s.time.mean_ns = t.at("mean_ns").get<double>();
    s.time.stddev_ns = t.at("std_ns").get<double>();
    s.time.sum_ns = sum_of(s.time.mean_ns, s.time.count);
    s.time.min_ns = get_or<std::uint64_t>(t, "min_ns", 0);
    s.time.max_ns = get_or<std::uint64_t>(t, "max_ns", 0);
    s.time.p50_ns = get_or<std::uint64_t>(t, "p50_ns", 0);
    s.time.p95_ns = get_or<std::uint64_t>(t, "p95_ns", 0);
    s.time.p99_ns = get_or<std::uint64_t>(t, "p99_ns", 0);
    s.thread_count = get_or<std::uint32_t>(t, "threads", 0);
    s.items = get_or<std::uint64_t>(t, "items", 0);
    s.memory = memory_of(member_or_null(t, "memory"));
    s.heap = heap_of(member_or_null(t, "heap"));
    if (const auto w = work.find(name); w != work.end()) std::tie(s.flops, s.bytes) = w->second;
    p.scopes.push_back(s);
  }
}

// What the report's call tree lacked, for the notes.
struct TreeGaps {
  bool stddev = false;
  bool work = false;
};

// The nested "call_tree" as Profile::call_tree: node 0 the root, each node's id above its
// parent's (as model-compare's walks require), children in the report's order. Iterative, so
// a deep tree costs heap, not call stack.
TreeGaps read_call_tree(const Json& tree, Profile& p, Strings& strings) {
  TreeGaps gaps;
  if (!tree.is_array()) throw Error("its \"call_tree\" member is not an array");
  p.call_tree.push_back(CallTreeNode{});  // the root, as a recorded profile has it
  std::vector<std::pair<std::uint32_t, const Json*>> todo = {{0, &tree}};
  while (!todo.empty()) {
    const auto [parent, children] = todo.back();
    todo.pop_back();
    for (const Json& j : *children) {
      CallTreeNode n;
      n.id = static_cast<std::uint32_t>(p.call_tree.size());
      n.parent = parent;
      n.depth = p.call_tree[parent].depth + 1;
      n.name = strings.intern(j.at("name").get<std::string>());
      n.time.count = j.at("count").get<std::uint64_t>();
      n.time.sum_ns = j.at("total_ns").get<std::uint64_t>();
      n.time.mean_ns = get_or<double>(j, "mean_ns", 0.0);
      n.time.min_ns = get_or<std::uint64_t>(j, "min_ns", 0);
      n.time.max_ns = get_or<std::uint64_t>(j, "max_ns", 0);
      n.self_ns = j.at("self_ns").get<std::uint64_t>();
      n.thread_count = get_or<std::uint32_t>(j, "threads", 0);
      n.memory = memory_of(member_or_null(j, "memory"));
      n.heap = heap_of(member_or_null(j, "heap"));
      // Written by nnprof versions whose JSON call tree has them; older reports lack them.
      gaps.stddev |= !j.contains("std_ns") && n.time.count > 1;
      gaps.work |= !j.contains("flops");
      n.time.stddev_ns = get_or<double>(j, "std_ns", 0.0);
      n.flops = get_or<double>(j, "flops", 0.0);
      n.bytes = get_or<std::uint64_t>(j, "bytes", 0);
      p.call_tree[parent].children.push_back(n.id);
      p.call_tree.push_back(std::move(n));
      const Json& grandchildren = member_or_null(j, "children");
      if (grandchildren.is_array() && !grandchildren.empty()) todo.emplace_back(p.call_tree.back().id, &grandchildren);
    }
  }
  return gaps;
}

void read_memory(const Json& j, Profile& p, Strings& strings) {
  if (!j.is_object()) return;
  p.memory.current_bytes = get_or<std::int64_t>(j, "current_bytes", 0);
  p.memory.peak_bytes = get_or<std::uint64_t>(j, "peak_bytes", 0);
  p.memory.peak_time_ns = get_or<std::uint64_t>(j, "peak_time_ns", 0);
  const Json& counters = member_or_null(j, "counters");
  if (!counters.is_object()) return;
  for (const auto& [name, c] : counters.items()) {
    MemoryCounter m;
    m.name = strings.intern(name);
    m.current_bytes = get_or<std::int64_t>(c, "current_bytes", 0);
    m.peak_bytes = get_or<std::uint64_t>(c, "peak_bytes", 0);
    m.alloc_bytes = get_or<std::uint64_t>(c, "alloc_bytes", 0);
    m.freed_bytes = get_or<std::uint64_t>(c, "freed_bytes", 0);
    m.alloc_count = get_or<std::uint64_t>(c, "alloc_count", 0);
    m.free_count = get_or<std::uint64_t>(c, "free_count", 0);
    p.memory_counters.push_back(m);
  }
}

void read_heap(const Json& j, Profile& p) {
  if (!j.is_object()) return;  // absent: heap tracking did not run
  HeapSummary& h = p.heap;
  h.tracked = true;
  h.source = get_or<std::string>(j, "source", "");
  h.alloc_bytes = get_or<std::uint64_t>(j, "alloc_bytes", 0);
  h.alloc_count = get_or<std::uint64_t>(j, "alloc_count", 0);
  h.free_bytes = get_or<std::uint64_t>(j, "free_bytes", 0);
  h.free_count = get_or<std::uint64_t>(j, "free_count", 0);
  h.current_bytes = get_or<std::uint64_t>(j, "current_bytes", 0);
  h.current_blocks = get_or<std::uint64_t>(j, "current_blocks", 0);
  const Json& peak = member_or_null(j, "peak");
  if (peak.is_object()) {
    h.peak_bytes = get_or<std::uint64_t>(peak, "bytes", 0);
    h.peak_time_ns = get_or<std::uint64_t>(peak, "time_ns", 0);
    h.peak_resolution_bytes = get_or<std::uint64_t>(peak, "resolution_bytes", 0);
  }
  h.reachability_checked = get_or<bool>(j, "reachability_checked", false);
  h.leaked_bytes = get_or<std::uint64_t>(j, "leaked_bytes", 0);
  h.leaked_blocks = get_or<std::uint64_t>(j, "leaked_blocks", 0);
  h.reachable_bytes = get_or<std::uint64_t>(j, "reachable_bytes", 0);
  h.reachable_blocks = get_or<std::uint64_t>(j, "reachable_blocks", 0);
  h.untracked_frees = get_or<std::uint64_t>(j, "untracked_frees", 0);
  h.untracked_allocs = get_or<std::uint64_t>(j, "untracked_allocs", 0);
  h.stack_sample_bytes = get_or<std::uint64_t>(j, "stack_sample_bytes", 0);
  h.sample_interval_ns = get_or<std::uint64_t>(j, "sample_interval_ns", 0);
  const Json& rss = member_or_null(j, "rss");
  if (rss.is_object()) {
    h.rss_initial_bytes = get_or<std::uint64_t>(rss, "initial_bytes", 0);
    h.rss_peak_bytes = get_or<std::uint64_t>(rss, "peak_bytes", 0);
    h.rss_final_bytes = get_or<std::uint64_t>(rss, "final_bytes", 0);
  }
}

Completeness completeness_of(const Json& j) {
  Completeness c;
  if (!j.is_object()) return c;
  c.scopes_recorded = get_or<std::uint64_t>(j, "scopes_recorded", 0);
  c.spans_enabled = get_or<bool>(j, "spans_enabled", true);
  c.spans_kept = get_or<std::uint64_t>(j, "spans_kept", 0);
  c.spans_dropped = get_or<std::uint64_t>(j, "spans_dropped", 0);
  c.spans_overwritten = get_or<std::uint64_t>(j, "spans_overwritten", 0);
  c.events_dropped = get_or<std::uint64_t>(j, "events_dropped", 0);
  c.buffer_policy = get_or<std::string>(j, "buffer_policy", "");
  c.memory_cap_bytes = get_or<std::uint64_t>(j, "memory_cap_bytes", 0);
  c.hot_path_allocations = get_or<std::uint64_t>(j, "hot_path_allocations", 0);
  c.overhead_per_scope_ns = get_or<double>(j, "overhead_per_scope_ns", 0.0);
  c.overhead_total_ns = get_or<std::uint64_t>(j, "overhead_total_ns", 0);
  return c;
}

void read_threads(const Json& j, Profile& p) {
  if (!j.is_array()) return;
  for (const Json& t : j) {
    ThreadInfo info;
    info.id = get_or<std::uint32_t>(t, "id", static_cast<std::uint32_t>(p.threads.size()));
    info.os_tid = get_or<std::int64_t>(t, "os_tid", 0);
    info.name = get_or<std::string>(t, "name", "");
    info.exited = get_or<bool>(t, "exited", false);
    info.scopes_recorded = get_or<std::uint64_t>(t, "scopes_recorded", 0);
    info.top_level_ns = get_or<std::uint64_t>(t, "top_level_ns", 0);
    p.threads.push_back(std::move(info));
  }
}

LoadedRun from_report(const Json& j, const std::string& source) {
  if (!j.is_object() || get_or<std::string>(j, "schema", "") != kJsonSchemaName)
    throw Error(fmt::format("'{}' is JSON but not an nnprof report (its \"schema\" is not \"{}\"): compare needs a "
                            ".nnprof, a .json report or a .md report written by nnprof",
                            source, kJsonSchemaName));
  const int version = get_or<int>(j, "schema_version", 0);
  if (version > kJsonSchemaVersion)
    throw Error(fmt::format("'{}' is an nnprof report of schema version {}, newer than this nnprof reads ({}): "
                            "compare it with that nnprof, or with the .nnprof files",
                            source, version, kJsonSchemaVersion));
  LoadedRun run;
  run.from_report = true;
  Profile& p = run.profile;
  Strings strings(p);
  p.meta = metadata_of(member_or_null(j, "metadata"));
  if (const Json& a = member_or_null(j, "annotations"); a.is_object())
    for (const auto& [key, value] : a.items()) p.annotations[key] = value.get<std::string>();
  read_scopes(member_or_null(j, "timing"), member_or_null(j, "compute"), p, strings);
  const TreeGaps gaps = read_call_tree(member_or_null(j, "call_tree"), p, strings);
  read_memory(member_or_null(j, "memory"), p, strings);
  read_heap(member_or_null(j, "heap"), p);
  read_threads(member_or_null(j, "threads"), p);
  p.completeness = completeness_of(member_or_null(j, "completeness"));
  // The spans were not written to the report: say so, as a session that kept none would.
  p.completeness.spans_kept = 0;

  const bool models = p.annotations.lower_bound("model.") != p.annotations.end() &&
                      p.annotations.lower_bound("model.")->first.starts_with("model.");
  if (models && gaps.work)
    run.notes.push_back(fmt::format("The call tree of '{}' has no FLOPs or bytes per node: model figures that derive "
                                    "from declared FLOPs are unknown (model-compare the .nnprof file for them).",
                                    source));
  if (models && gaps.stddev)
    run.notes.push_back(fmt::format("The call tree of '{}' has no standard deviation per node: the spread of "
                                    "inference times is not known (model-compare the .nnprof file for it).",
                                    source));
  return run;
}

Json parse(std::string_view text, const std::string& source, std::string_view what) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {
    throw Error(fmt::format("'{}': {} is not valid JSON ({}): the file was cut short or edited; write it again "
                            "with nnprof report -o",
                            source, what, e.what()));
  }
}

LoadedRun import_document(const Json& j, const std::string& source, std::string_view what) {
  try {
    return from_report(j, source);
  } catch (const Json::exception& e) {
    throw Error(fmt::format("'{}': {} is not a complete nnprof report ({}): write it again with nnprof report -o",
                            source, what, e.what()));
  } catch (const Error& e) {
    const std::string message = e.what();
    if (message.starts_with("'")) throw;
    throw Error(fmt::format("'{}': {} is not a complete nnprof report: {}", source, what, message));
  }
}

bool is_sqlite(std::string_view head) { return head.starts_with(std::string_view("SQLite format 3\0", 16)); }

// Adds to each node of the report's call tree (`tree`, as json_report writes it from `p`) what
// model-compare reads and the JSON report leaves out: the standard deviation of its calls
// (pooled inference times) and its declared FLOPs and bytes. The JSON lists the children of
// each node in order, skipping the links json_report skips (out of range, seen before).
void add_node_details(const Profile& p, Json& tree) {
  const std::vector<CallTreeNode>& nodes = p.call_tree;
  if (nodes.empty() || !tree.is_array()) return;
  std::vector<bool> visited(nodes.size(), false);
  visited[0] = true;
  std::vector<std::pair<std::uint32_t, Json*>> todo = {{0, &tree}};
  while (!todo.empty()) {
    const auto [id, children] = todo.back();
    todo.pop_back();
    std::size_t next = 0;
    for (const std::uint32_t child : nodes[id].children) {
      if (child >= nodes.size() || visited[child]) continue;
      visited[child] = true;
      if (next >= children->size()) return;
      Json& j = (*children)[next++];
      if (j.value("name", std::string()) != p.str(nodes[child].name)) return;  // not the tree it was written from
      const CallTreeNode& n = nodes[child];
      j["std_ns"] = n.time.stddev_ns;
      j["flops"] = n.flops;
      j["bytes"] = n.bytes;
      if (const auto grandchildren = j.find("children"); grandchildren != j.end() && grandchildren->is_array())
        todo.emplace_back(child, &*grandchildren);
    }
  }
}

}  // namespace

void write_markdown_data_block(const Profile& profile, std::ostream& out) {
  std::ostringstream report;
  write_json_report(profile, report);
  Json whole = Json::parse(report.str());
  Json kept = Json::object();
  for (const std::string_view member : kEmbeddedMembers)
    if (const auto it = whole.find(member); it != whole.end()) kept[std::string(member)] = std::move(*it);
  if (const auto tree = kept.find("call_tree"); tree != kept.end()) add_node_details(profile, *tree);
  if (const auto heap = whole.find("heap"); heap != whole.end()) {
    for (const std::string_view detail : kHeapDetails) heap->erase(std::string(detail));
    kept["heap"] = std::move(*heap);
  }
  out << '\n'
      << kMarkdownDataOpening << ' ' << kMarkdownDataVersion << '\n'
      << comment_safe(kept.dump(-1, ' ', false, Json::error_handler_t::replace)) << "\n-->\n";
}

LoadedRun import_json_report(std::string_view text, const std::string& source) {
  return import_document(parse(text, source, "the JSON report"), source, "the JSON report");
}

LoadedRun import_markdown_report(std::string_view text, const std::string& source) {
  const std::size_t open = text.rfind(kMarkdownDataOpening);
  if (open == std::string_view::npos)
    throw Error(fmt::format("'{}' is a text report without embedded data: compare needs a .nnprof, a .json report "
                            "or a .md report written by nnprof {} or later",
                            source, NNPROF_VERSION_STRING));
  const std::size_t line_end = text.find('\n', open);
  const std::size_t close = line_end == std::string_view::npos ? line_end : text.find("-->", line_end);
  if (close == std::string_view::npos)
    throw Error(fmt::format("'{}': the nnprof data at its end is cut short (no closing '-->'): the file was "
                            "truncated; write the report again with nnprof report -o",
                            source));
  const std::string_view header = text.substr(open + kMarkdownDataOpening.size(), line_end - open -
                                                                                    kMarkdownDataOpening.size());
  int version = 0;
  if (std::sscanf(std::string(header).c_str(), " %d", &version) != 1 || version < 1)
    throw Error(fmt::format("'{}': the nnprof data block's first line '{}' has no version: the file was edited; "
                            "write the report again with nnprof report -o",
                            source, text.substr(open, line_end - open)));
  if (version > kMarkdownDataVersion)
    throw Error(fmt::format("'{}' embeds nnprof data of version {}, newer than this nnprof reads ({}): compare it "
                            "with that nnprof, or with the .nnprof files",
                            source, version, kMarkdownDataVersion));
  const std::string_view body = text.substr(line_end + 1, close - line_end - 1);
  return import_document(parse(body, source, "the nnprof data embedded at its end"), source,
                "the nnprof data embedded at its end");
}

}  // namespace io

LoadedRun load_run(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<char, 16> head{};
  if (in) in.read(head.data(), head.size());
  const std::string_view start(head.data(), static_cast<std::size_t>(in.gcount()));
  // A .nnprof file, one named so, or one that cannot be opened: Profile::load says best
  // what is wrong with it (no such file, no permission, not an nnprof profile).
  if (!in.is_open() || io::is_sqlite(start) || std::filesystem::path(path).extension() == ".nnprof") {
    LoadedRun run;
    run.profile = Profile::load(path);
    return run;
  }
  in.clear();
  in.seekg(0);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) throw Error(fmt::format("could not read '{}': {}", path, std::strerror(errno)));
  std::string_view body(text);
  if (body.starts_with("\xEF\xBB\xBF")) body.remove_prefix(3);  // a byte-order mark an editor added
  const std::size_t first = body.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && (body[first] == '{' || body[first] == '[')) return io::import_json_report(body, path);
  if (first == std::string_view::npos)
    throw Error(fmt::format("'{}' is empty: compare needs a .nnprof, a .json report or a .md report written by "
                            "nnprof",
                            path));
  if (body.substr(0, 4096).find('\0') != std::string_view::npos)
    throw Error(fmt::format("'{}' is neither a .nnprof file nor a report nnprof wrote: compare needs a .nnprof, a "
                            ".json report or a .md report written by nnprof",
                            path));
  return io::import_markdown_report(body, path);
}

std::string compare_report_note(const LoadedRun& run, const std::string& path) {
  if (!run.from_report) return "";
  return fmt::format(
      "'{}' is a report: it keeps each scope's count, mean and standard deviation but not the duration of each "
      "call, so its scopes are compared by Welch's test on the means, not by the rank test (compare the .nnprof "
      "files for that).",
      path);
}

}  // namespace nnprof
