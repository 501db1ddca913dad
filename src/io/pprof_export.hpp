// pprof: Google's profile.proto (perftools.profiles, src/io/proto/profile.proto), gzipped,
// as read by `pprof` (go tool pprof), speedscope, Grafana Pyroscope and others.
//
// Two values per sample: samples/count and cpu/nanoseconds (wall/nanoseconds in wall mode).
// Each sample carries its thread ("thread" and "tid" labels) and the path of its innermost
// instrumented scope ("scope" label, "a > b > c"), so `pprof -tagfocus=scope=attention`
// keeps the samples of one scope.
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>

#include "io/exporter.hpp"
#include "nnprof/profile.hpp"

namespace perftools::profiles {
class Profile;
}

namespace nnprof::io {

/// The uncompressed perftools.profiles.Profile message for every CPU sample of `profile`.
/// Samples with the same stack, thread and scope are merged (their values added up). Throws
/// nnprof::Error when the profile has no CPU samples.
std::string pprof_message(const Profile& profile);

/// The uncompressed heap profile of `profile` in Go's convention (what net/http/pprof serves at
/// /debug/pprof/heap): sample types alloc_objects/count, alloc_space/bytes, inuse_objects/count,
/// inuse_space/bytes (the default), one sample per allocation site of the live blocks
/// (Profile::leaks) with its sampled stack, or its calling frame, and its scope as a label.
/// Throws nnprof::Error when the heap was not tracked.
std::string heap_pprof_message(const Profile& profile);

/// Writes pprof_message gzip-compressed, as pprof reads it. Throws nnprof::Error.
void write_pprof(const Profile& profile, std::ostream& out);

/// `data` gzip-compressed (RFC 1952). Throws nnprof::Error if zlib fails.
std::string gzip(std::string_view data);
/// `data` decompressed when it is gzip or zlib, or unchanged when it is neither. Throws
/// nnprof::Error on a damaged stream.
std::string gunzip(std::string_view data);

/// Reads a pprof file's bytes (gzipped or not) into `message`. For tests and tools. Throws
/// nnprof::Error when the bytes are not a profile.
void decode_pprof(std::string_view data, perftools::profiles::Profile& message);

/// The "pprof" format (".pb.gz"): write_pprof.
class PprofExporter final : public Exporter {
 public:
  PprofExporter() noexcept : Exporter(ReportFormat::Pprof) {}
 private:
  void do_write(const Profile& profile, std::ostream& out, const ReportOptions& options) const override;
};

}  // namespace nnprof::io
