// Exporters: every output format is one implementation of this interface ("record once,
// export many"). The CLI, the library and the tests reach every format through the registry.
#pragma once

#include <iosfwd>
#include <string_view>
#include <vector>

#include "nnprof/profile.hpp"

namespace nnprof::io {

/// Writes a profile in one format. Implementations are stateless and receive their output
/// stream, so the same code writes to a file, a string in a test or an HTTP response.
class Exporter {
 public:
  Exporter() = default;
  Exporter(const Exporter&) = delete;
  Exporter& operator=(const Exporter&) = delete;
  virtual ~Exporter() = default;

  /// The format's name as users type it, e.g. "text".
  [[nodiscard]] virtual std::string_view name() const = 0;
  /// The file extension that selects this format, with its dot, e.g. ".txt".
  [[nodiscard]] virtual std::string_view extension() const = 0;
  /// Writes `profile` to `out`. Throws nnprof::Error if the stream fails.
  virtual void write(const Profile& profile, std::ostream& out) const = 0;
};

/// The built-in exporter named `name` (ASCII case-insensitive), or nullptr.
[[nodiscard]] const Exporter* find_exporter(std::string_view name);

/// The exporter whose extension ends `path` (ASCII case-insensitive), or nullptr. The
/// longest matching extension wins, so ".trace.json" can be told apart from ".json".
[[nodiscard]] const Exporter* find_exporter_for_path(std::string_view path);

/// Every built-in exporter, in a fixed order.
[[nodiscard]] std::vector<const Exporter*> all_exporters();

}  // namespace nnprof::io
