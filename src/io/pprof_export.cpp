#include "io/pprof_export.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "io/collapsed_stacks.hpp"
#include "io/proto/profile.pb.h"
#include "report/utf8.hpp"
#include "nnprof/error.hpp"

namespace nnprof::io {

using report::valid_utf8;
namespace {

namespace pb = perftools::profiles;

// profile.proto's string_table: index 0 is "", every string once. Proto3 strings must be
// valid UTF-8 (the C++ parser rejects anything else), and names need not be.
class StringTable {
 public:
  explicit StringTable(pb::Profile& message) : message_(message) { id(""); }

  std::int64_t id(std::string_view text) {
    std::string valid = valid_utf8(text);
    const auto [it, inserted] = ids_.try_emplace(valid, static_cast<std::int64_t>(ids_.size()));
    if (inserted) message_.add_string_table(std::move(valid));
    return it->second;
  }

 private:
  pb::Profile& message_;
  std::unordered_map<std::string, std::int64_t> ids_;
};

std::string_view file_name(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool has_string(const Profile& profile, StringId id) {
  return id != kNone && id < profile.strings.size() && !profile.strings[id].empty();
}

class PprofBuilder {
 public:
  explicit PprofBuilder(const Profile& profile) : profile_(profile), strings_(message_) {}

  pb::Profile build() {
    require_cpu_samples(profile_);
    const bool wall = profile_.cpu.mode == "wall";
    const std::string_view time_type = wall ? "wall" : "cpu";

    add_value_type(*message_.add_sample_type(), "samples", "count");
    add_value_type(*message_.add_sample_type(), time_type, "nanoseconds");
    add_value_type(*message_.mutable_period_type(), time_type, "nanoseconds");
    message_.set_period(static_cast<std::int64_t>(profile_.cpu.period_ns));
    message_.set_default_sample_type(strings_.id(time_type));
    message_.set_time_nanos(profile_.meta.clock.unix_origin_ns);
    message_.set_duration_nanos(static_cast<std::int64_t>(profile_.meta.duration_ns));
    add_comments();

    for (const CpuSample& sample : profile_.cpu_samples)
      if (sample.stack < profile_.stacks.size()) mapped_frames_.push_back(&profile_.stacks[sample.stack].frames);
    add_mappings();
    add_samples();
    return std::move(message_);
  }

  // Go's heap profile (runtime/pprof, as net/http/pprof serves /debug/pprof/heap): the sample
  // types alloc_objects, alloc_space, inuse_objects, inuse_space, one sample per allocation
  // site of the blocks live now. nnprof keeps allocation totals per scope, not per site, so
  // the alloc_* values of a site are 0 and a comment says so.
  pb::Profile build_heap() {
    if (!profile_.heap.tracked)
      throw Error("the profile has no heap data: heap tracking did not run (link nnprof::memory, use "
                  "nnprof::MemoryTracking, or record with `nnprof record`, which tracks the heap by default)");
    add_value_type(*message_.add_sample_type(), "alloc_objects", "count");
    add_value_type(*message_.add_sample_type(), "alloc_space", "bytes");
    add_value_type(*message_.add_sample_type(), "inuse_objects", "count");
    add_value_type(*message_.add_sample_type(), "inuse_space", "bytes");
    add_value_type(*message_.mutable_period_type(), "space", "bytes");
    message_.set_period(static_cast<std::int64_t>(profile_.heap.stack_sample_bytes));
    message_.set_default_sample_type(strings_.id("inuse_space"));
    message_.set_time_nanos(profile_.meta.clock.unix_origin_ns +
                            static_cast<std::int64_t>(profile_.meta.duration_ns));
    message_.add_comment(strings_.id(fmt::format("nnprof {}", profile_.meta.nnprof_version)));
    message_.add_comment(strings_.id(
        "live heap blocks by allocation site; alloc_objects and alloc_space are not recorded per site (0)"));
    if (!profile_.meta.command_line.empty()) message_.add_comment(strings_.id("command: " + profile_.meta.command_line));

    std::vector<std::vector<std::uint32_t>> caller_only;
    caller_only.reserve(profile_.leaks.size());
    for (const LeakSite& site : profile_.leaks) {
      if (site.stack < profile_.stacks.size()) {
        mapped_frames_.push_back(&profile_.stacks[site.stack].frames);
      } else if (site.caller < profile_.frames.size()) {
        caller_only.push_back({site.caller});
        mapped_frames_.push_back(&caller_only.back());
      }
    }
    add_mappings();
    for (const LeakSite& site : profile_.leaks) {
      pb::Sample& sample = *message_.add_sample();
      if (site.stack < profile_.stacks.size()) {
        for (const std::uint64_t id : stack_locations(site.stack)) sample.add_location_id(id);
      } else if (site.caller < profile_.frames.size()) {
        sample.add_location_id(location_id({site.caller}));
      } else {
        sample.add_location_id(pseudo_location("[unknown]"));
      }
      sample.add_value(0);
      sample.add_value(0);
      sample.add_value(static_cast<std::int64_t>(site.blocks));
      sample.add_value(static_cast<std::int64_t>(site.bytes));
      if (site.node != 0 && site.node < profile_.call_tree.size())
        add_label(sample, "scope", profile_.node_path(site.node));
      if (profile_.heap.reachability_checked) add_label(sample, "reachable", site.reachable ? "yes" : "no");
    }
    return std::move(message_);
  }

 private:
  static void set_value_type(pb::ValueType& type, std::int64_t name, std::int64_t unit) {
    type.set_type(name);
    type.set_unit(unit);
  }
  void add_value_type(pb::ValueType& type, std::string_view name, std::string_view unit) {
    set_value_type(type, strings_.id(name), strings_.id(unit));
  }

  void add_comments() {
    const Metadata& meta = profile_.meta;
    const CpuProfileSummary& cpu = profile_.cpu;
    const auto comment = [&](const std::string& text) { message_.add_comment(strings_.id(text)); };
    comment(fmt::format("nnprof {}", meta.nnprof_version));
    if (!meta.command_line.empty()) comment("command: " + meta.command_line);
    if (!meta.hostname.empty()) comment("host: " + meta.hostname);
    comment(fmt::format("sampling: {} mode, {} Hz requested, {}, stacks by {}", cpu.mode.empty() ? "cpu" : cpu.mode,
                        cpu.requested_hz, cpu.mechanism.empty() ? "unknown mechanism" : cpu.mechanism,
                        cpu.unwinder.empty() ? "unknown unwinder" : cpu.unwinder));
    if (cpu.samples_dropped != 0)
      comment(fmt::format("{} samples were dropped (the sample buffer was full)", cpu.samples_dropped));
    if (cpu.truncated_stacks != 0)
      comment(fmt::format("{} stacks were deeper than the depth limit and lost their outermost frames",
                          cpu.truncated_stacks));
  }

  // One Mapping per module, spanning the addresses sampled in it (the profile keeps no
  // module bounds), with file_offset set so that address - memory_start + file_offset is the
  // address in the module's ELF address space (exact where the segment's file offset equals
  // its virtual address, as linkers lay out text). The main executable comes first, when it
  // can be told, as pprof wants.
  void add_mappings() {
    struct Span {
      std::uint64_t start = UINT64_MAX;
      std::uint64_t limit = 0;
      std::uint64_t start_offset = 0;  // module_offset of the frame at `start`
      bool functions = true;
      bool files = true;
      bool lines = true;
      bool inlined = false;
    };
    std::map<StringId, Span> spans;
    for (const std::vector<std::uint32_t>* frames : mapped_frames_) {
      for (const std::uint32_t f : *frames) {
        if (f >= profile_.frames.size() || !has_string(profile_, profile_.frames[f].module)) continue;
        const StackFrame& frame = profile_.frames[f];
        Span& span = spans[frame.module];
        if (frame.address < span.start) {
          span.start = frame.address;
          span.start_offset = frame.module_offset;
        }
        span.limit = std::max(span.limit, frame.address + 1);
        span.functions = span.functions && has_string(profile_, frame.function);
        span.files = span.files && has_string(profile_, frame.file);
        span.lines = span.lines && frame.line != 0;
        span.inlined = span.inlined || frame.inlined;
      }
    }
    std::vector<StringId> order;
    for (const auto& [module, span] : spans) order.push_back(module);
    const std::string command = profile_.meta.command_line.substr(0, profile_.meta.command_line.find(' '));
    const std::string_view program = file_name(command);
    std::stable_partition(order.begin(), order.end(), [&](StringId module) {
      return !program.empty() && file_name(profile_.strings[module]) == program;
    });
    for (const StringId module : order) {
      const Span& span = spans[module];
      pb::Mapping& mapping = *message_.add_mapping();
      mapping.set_id(message_.mapping_size());
      mapping.set_memory_start(span.start);
      mapping.set_memory_limit(span.limit);
      mapping.set_file_offset(span.start_offset);
      mapping.set_filename(strings_.id(profile_.strings[module]));
      mapping.set_has_functions(span.functions);
      mapping.set_has_filenames(span.files);
      mapping.set_has_line_numbers(span.lines);
      // Symbolization with DWARF expands inline chains; without line tables it cannot.
      mapping.set_has_inline_frames(span.inlined || (span.functions && span.lines));
      mapping_ids_[module] = mapping.id();
    }
  }

  std::uint64_t function_id(const std::string& name, const std::string& file) {
    const auto [it, inserted] = functions_.try_emplace({name, file}, 0);
    if (inserted) {
      pb::Function& function = *message_.add_function();
      function.set_id(message_.function_size());
      function.set_name(strings_.id(name));
      function.set_system_name(function.name());  // demangled already; the mangled name is not kept
      function.set_filename(strings_.id(file));
      it->second = function.id();
    }
    return it->second;
  }

  // A location for a pseudo-frame ("[no stack]", "[unknown]"): a function name, no address.
  std::uint64_t pseudo_location(const std::string& name) {
    const auto [it, inserted] = pseudo_locations_.try_emplace(name, 0);
    if (inserted) {
      pb::Location& location = *message_.add_location();
      location.set_id(message_.location_size());
      location.add_line()->set_function_id(function_id(name, ""));
      it->second = location.id();
    }
    return it->second;
  }

  // One Location per address: the frames of its inline chain become its lines, innermost
  // first, the function they were inlined into last (profile.proto's order).
  std::uint64_t location_id(const std::vector<std::uint32_t>& chain) {
    const auto [it, inserted] = locations_.try_emplace(chain, 0);
    if (!inserted) return it->second;
    const StackFrame& outer = profile_.frames[chain.back()];
    pb::Location& location = *message_.add_location();
    location.set_id(message_.location_size());
    location.set_address(outer.address);
    if (const auto mapping = mapping_ids_.find(outer.module); mapping != mapping_ids_.end())
      location.set_mapping_id(mapping->second);
    for (const std::uint32_t f : chain) {
      const StackFrame& frame = profile_.frames[f];
      // Without a symbol there is no function: pprof shows the address (and can symbolize
      // it itself from the mapping's file).
      if (!has_string(profile_, frame.function)) continue;
      pb::Line& line = *location.add_line();
      line.set_function_id(function_id(profile_.strings[frame.function],
                                       has_string(profile_, frame.file) ? profile_.strings[frame.file] : ""));
      line.set_line(frame.line);
    }
    it->second = location.id();
    return it->second;
  }

  const std::vector<std::uint64_t>& stack_locations(std::uint32_t stack) {
    const auto [it, inserted] = stack_locations_.try_emplace(stack);
    if (!inserted) return it->second;
    std::vector<std::uint64_t>& ids = it->second;
    if (stack >= profile_.stacks.size() || profile_.stacks[stack].frames.empty()) {
      ids.push_back(pseudo_location("[no stack]"));
      return ids;
    }
    const std::vector<std::uint32_t>& frames = profile_.stacks[stack].frames;
    std::vector<std::uint32_t> chain;
    for (std::size_t i = 0; i < frames.size(); ++i) {
      if (frames[i] >= profile_.frames.size()) {
        ids.push_back(pseudo_location("[unknown]"));
        continue;
      }
      chain.push_back(frames[i]);
      const StackFrame& frame = profile_.frames[frames[i]];
      const bool continues = frame.inlined && i + 1 < frames.size() && frames[i + 1] < profile_.frames.size() &&
                             profile_.frames[frames[i + 1]].address == frame.address;
      if (continues) continue;
      ids.push_back(location_id(chain));
      chain.clear();
    }
    return ids;
  }

  void add_label(pb::Sample& sample, std::string_view key, std::string_view text) {
    pb::Label& label = *sample.add_label();
    label.set_key(strings_.id(key));
    label.set_str(strings_.id(text));
  }

  void add_samples() {
    // Samples that agree on stack, thread and scope become one, with their values added.
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, int> merged;
    for (const CpuSample& cpu_sample : profile_.cpu_samples) {
      const auto [it, inserted] =
          merged.try_emplace({cpu_sample.stack, cpu_sample.thread, cpu_sample.node}, message_.sample_size());
      if (!inserted) {
        pb::Sample& sample = *message_.mutable_sample(it->second);
        sample.set_value(0, sample.value(0) + 1);
        sample.set_value(1, sample.value(1) + static_cast<std::int64_t>(cpu_sample.weight_ns));
        continue;
      }
      pb::Sample& sample = *message_.add_sample();
      for (const std::uint64_t id : stack_locations(cpu_sample.stack)) sample.add_location_id(id);
      sample.add_value(1);
      sample.add_value(static_cast<std::int64_t>(cpu_sample.weight_ns));
      if (cpu_sample.thread < profile_.threads.size()) {
        const ThreadInfo& thread = profile_.threads[cpu_sample.thread];
        add_label(sample, "thread", thread.name.empty() ? fmt::format("thread {}", cpu_sample.thread) : thread.name);
        pb::Label& tid = *sample.add_label();
        tid.set_key(strings_.id("tid"));
        tid.set_num(thread.os_tid);
      }
      if (cpu_sample.node != 0 && cpu_sample.node < profile_.call_tree.size())
        add_label(sample, "scope", profile_.node_path(cpu_sample.node));
    }
  }

  const Profile& profile_;
  pb::Profile message_;
  StringTable strings_;
  std::map<StringId, std::uint64_t> mapping_ids_;
  std::map<std::pair<std::string, std::string>, std::uint64_t> functions_;
  std::map<std::vector<std::uint32_t>, std::uint64_t> locations_;
  std::map<std::string, std::uint64_t> pseudo_locations_;
  std::unordered_map<std::uint32_t, std::vector<std::uint64_t>> stack_locations_;
  std::vector<const std::vector<std::uint32_t>*> mapped_frames_;  // the frames the mappings must cover
};

// zlib counts in uInt: larger inputs go in pieces.
constexpr std::size_t kZlibPiece = std::size_t{1} << 30;

}  // namespace

std::string pprof_message(const Profile& profile) {
  const pb::Profile message = PprofBuilder(profile).build();
  std::string bytes;
  if (!message.SerializeToString(&bytes)) throw Error("could not encode the pprof profile");
  return bytes;
}

std::string heap_pprof_message(const Profile& profile) {
  const pb::Profile message = PprofBuilder(profile).build_heap();
  std::string bytes;
  if (!message.SerializeToString(&bytes)) throw Error("could not encode the heap pprof profile");
  return bytes;
}

void write_pprof(const Profile& profile, std::ostream& out) {
  const std::string compressed = gzip(pprof_message(profile));
  out.write(compressed.data(), static_cast<std::streamsize>(compressed.size()));
}

std::string gzip(std::string_view data) {
  z_stream stream{};
  // 15 + 16: the largest window, with a gzip header and trailer rather than zlib's.
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw Error("could not start gzip compression (zlib)");
  std::string out;
  std::array<unsigned char, 64 * 1024> buffer{};
  int status = Z_OK;
  do {
    if (stream.avail_in == 0 && !data.empty()) {
      const std::size_t piece = std::min(data.size(), kZlibPiece);
      stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
      stream.avail_in = static_cast<uInt>(piece);
      data.remove_prefix(piece);
    }
    stream.next_out = buffer.data();
    stream.avail_out = static_cast<uInt>(buffer.size());
    status = deflate(&stream, data.empty() ? Z_FINISH : Z_NO_FLUSH);
    out.append(reinterpret_cast<const char*>(buffer.data()), buffer.size() - stream.avail_out);
  } while (status == Z_OK || status == Z_BUF_ERROR);
  deflateEnd(&stream);
  if (status != Z_STREAM_END) throw Error(fmt::format("gzip compression failed (zlib status {})", status));
  return out;
}

std::string gunzip(std::string_view data) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(data[i]); };
  const bool is_gzip = data.size() >= 2 && byte(0) == 0x1F && byte(1) == 0x8B;
  const bool is_zlib = data.size() >= 2 && (byte(0) & 0x0F) == 8 && (byte(0) * 256 + byte(1)) % 31 == 0;
  if (!is_gzip && !is_zlib) return std::string(data);

  z_stream stream{};
  if (inflateInit2(&stream, 15 + 32) != Z_OK) throw Error("could not start gzip decompression (zlib)");
  std::string out;
  std::array<unsigned char, 64 * 1024> buffer{};
  int status = Z_OK;
  for (;;) {
    if (stream.avail_in == 0 && !data.empty()) {
      const std::size_t piece = std::min(data.size(), kZlibPiece);
      stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
      stream.avail_in = static_cast<uInt>(piece);
      data.remove_prefix(piece);
    }
    stream.next_out = buffer.data();
    stream.avail_out = static_cast<uInt>(buffer.size());
    status = inflate(&stream, Z_NO_FLUSH);
    out.append(reinterpret_cast<const char*>(buffer.data()), buffer.size() - stream.avail_out);
    if (status == Z_STREAM_END) break;
    const bool stalled = status == Z_BUF_ERROR && stream.avail_in == 0 && data.empty();
    if ((status != Z_OK && status != Z_BUF_ERROR) || stalled) break;
  }
  const std::string message = stream.msg != nullptr ? stream.msg : "the data ends early";
  inflateEnd(&stream);
  if (status != Z_STREAM_END)
    throw Error(fmt::format("the compressed data is damaged: {} (zlib status {})", message, status));
  return out;
}

void decode_pprof(std::string_view data, pb::Profile& message) {
  const std::string bytes = gunzip(data);
  if (!message.ParseFromString(bytes))
    throw Error("the data is not a pprof profile (perftools.profiles.Profile could not be parsed)");
}

void PprofExporter::do_write(const Profile& profile, std::ostream& out, const ReportOptions& /*options: names are data here*/) const {
  write_pprof(profile, out);
  if (!out) throw Error("could not write the pprof profile: the output stream failed");
}

}  // namespace nnprof::io
