// Sentences that several reports print, as data: the analysis decides what to say and with
// which numbers, each exporter formats the numbers and marks names up in its own markup.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "nnprof/profile.hpp"

namespace nnprof::analysis {

/// One piece of a sentence: words, a name, or a number that states what it measures.
struct Part {
  enum class Kind : std::uint8_t {
    Words,     ///< `text` as it stands
    Code,      ///< `text` is an identifier or a call the user can type: NNPROF_SCOPE("name")
    Scope,     ///< the name of `scope`
    Name,      ///< `text` is a name given as text (a scope of a comparison, a model, a command line), shown like a scope
    Duration,  ///< `number` nanoseconds
    Share,     ///< `number` as a fraction, printed as a percentage; NaN when there was no whole
    Count,     ///< `number`, an integer count
    Bytes,     ///< `number` bytes
    Rate,      ///< `number` per second, in the unit `text` ("calls/s")
    ByteRate,  ///< `number` bytes per second ("1.50 MiB/s"), may be negative
    Si,        ///< `number` with a decimal prefix before the unit `text`: "12.3 GFLOP/s", "45.6 GB/s", "3.2 GFLOP"
    Ratio,     ///< `number`, a plain real with 3 significant digits, then `text`: "0.25 FLOP/byte", "3.1×"
  };
  Kind kind = Kind::Words;
  std::string text;
  StringId scope = kNone;
  std::variant<std::uint64_t, std::int64_t, double> number = std::uint64_t{0};
  bool key = false;  ///< the figure the sentence is about; a markup may emphasise it

  bool operator==(const Part&) const = default;
};

/// A sentence, built part by part: `Sentence().words("Peak ").bytes(n).words(".")`.
class Sentence {
 public:
  Sentence& words(std::string_view text);
  Sentence& code(std::string_view text);
  /// A demangled function name, as code, shortened for reading (readable_function).
  Sentence& function(std::string_view demangled);
  Sentence& scope(StringId name);
  /// A name that no profile's string table holds (a comparison's scope, a model): marked up
  /// like a scope. The caller caps it for display (report::capped_name).
  Sentence& name(std::string_view text);
  Sentence& duration(std::uint64_t ns);
  Sentence& duration(double ns);
  Sentence& share(double fraction);
  Sentence& count(std::uint64_t n);
  /// The count and its noun, singular for exactly one: "1 call", "3 calls".
  Sentence& count(std::uint64_t n, std::string_view one, std::string_view many);
  Sentence& bytes(std::uint64_t bytes);
  Sentence& bytes(std::int64_t bytes);
  Sentence& rate(double per_second, std::string_view unit);
  Sentence& byte_rate(double bytes_per_second);
  /// A quantity with a decimal prefix: si(1.2e10, "FLOP/s") reads "12 GFLOP/s".
  Sentence& si(double value, std::string_view unit);
  /// A real number with 3 significant digits and its unit: ratio(2.5, "×") reads "2.5×".
  Sentence& ratio(double value, std::string_view unit);
  /// Marks the part added last as the sentence's key figure.
  Sentence& key();
  /// Appends the parts of `other`.
  Sentence& append(const Sentence& other);
  /// This sentence with each scope part naming its scope by text (a Name part), so that it
  /// reads the same without `profile`: to show sentences of several profiles together.
  [[nodiscard]] Sentence with_names(const Profile& profile) const;

  [[nodiscard]] const std::vector<Part>& parts() const noexcept { return parts_; }
  [[nodiscard]] bool empty() const noexcept { return parts_.empty(); }

  bool operator==(const Sentence&) const = default;

 private:
  Sentence& add(Part part);
  std::vector<Part> parts_;
};

/// `part` as a fraction of `whole`, NaN when `whole` is 0 (a share of nothing is "n/a").
double share_of(std::uint64_t part, std::uint64_t whole);

}  // namespace nnprof::analysis
