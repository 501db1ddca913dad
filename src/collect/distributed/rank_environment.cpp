// Which rank of a distributed job this process is, from the variables its launcher set, and
// the profile path pattern that gives each rank a file of its own.
#include <charconv>
#include <cstdint>
#include <cstdlib>

#include <fmt/format.h>

#include "nnprof/error.hpp"
#include "nnprof/rank_recording.hpp"

namespace nnprof {

namespace {

/// One launcher's variables. Precedence is the order of kLaunchers: the launcher that started
/// this process itself (mpirun's OMPI_*, a PMI launcher) before variables a wrapper may
/// inherit or set by hand (RANK), before slurm, whose task id under srun + torchrun or
/// srun + mpirun counts nodes, not ranks.
struct Launcher {
  const char* name;
  const char* rank;
  const char* size;
  const char* local_rank;
  bool per_node;           // true: its rank may differ from the others' without a conflict
};

constexpr Launcher kLaunchers[] = {
    {"mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", false},
    {"pmi", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", false},
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", false},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", true},
};

/// The value of `name` as a whole number from `min` to 2^31 - 1; nullopt when unset, and a
/// problem when set to anything else.
std::optional<std::int32_t> read_int(const std::function<std::optional<std::string>(std::string_view)>& lookup,
                                     const char* name, std::int32_t min, std::vector<std::string>& problems) {
  const std::optional<std::string> text = lookup(name);
  if (!text) return std::nullopt;
  std::int64_t value = 0;
  const char* begin = text->data();
  const char* end = begin + text->size();
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (text->empty() || ec != std::errc{} || ptr != end || value < min || value > INT32_MAX) {
    problems.push_back(fmt::format("{}='{}' is not a whole number from {} to {}: ignored", name, *text, min,
                                   INT32_MAX));
    return std::nullopt;
  }
  return static_cast<std::int32_t>(value);
}

}  // namespace

RankEnvironment read_rank_environment(const std::function<std::optional<std::string>(std::string_view)>& lookup) {
  RankEnvironment env;
  struct Claim {
    const Launcher* launcher;
    RankInfo info;
  };
  std::vector<Claim> claims;
  for (const Launcher& l : kLaunchers) {
    const auto rank = read_int(lookup, l.rank, 0, env.problems);
    const auto size = read_int(lookup, l.size, 1, env.problems);
    const std::int32_t local = read_int(lookup, l.local_rank, 0, env.problems).value_or(-1);
    if (!rank && !size) continue;
    if (!rank || !size) {
      // Half a launcher's description: torch.distributed needs both, so does a merge.
      env.problems.push_back(fmt::format("{} is set but {} is not: {}'s variables are ignored",
                                         rank ? l.rank : l.size, rank ? l.size : l.rank, l.name));
      continue;
    }
    if (*rank >= *size) {
      env.problems.push_back(fmt::format("{}={} is not below {}={}: {}'s variables are ignored", l.rank, *rank, l.size,
                                         *size, l.name));
      continue;
    }
    RankInfo info;
    info.rank = *rank;
    info.world_size = *size;
    info.local_rank = local < *size ? local : -1;
    if (local >= *size)
      env.problems.push_back(fmt::format("{}={} is not below {}={}: the local rank is not recorded", l.local_rank,
                                         local, l.size, *size));
    info.launcher = l.name;
    claims.push_back({&l, std::move(info)});
  }
  if (claims.empty()) return env;
  const Claim& chosen = claims.front();
  for (std::size_t i = 1; i < claims.size(); ++i) {
    const Claim& other = claims[i];
    if (other.launcher->per_node) continue;
    if (other.info.rank != chosen.info.rank || other.info.world_size != chosen.info.world_size)
      env.problems.push_back(fmt::format(
          "{}={} and {}={} disagree with {}={} and {}={}: recorded as rank {} of {} ({}'s variables take precedence)",
          other.launcher->rank, other.info.rank, other.launcher->size, other.info.world_size, chosen.launcher->rank,
          chosen.info.rank, chosen.launcher->size, chosen.info.world_size, chosen.info.rank, chosen.info.world_size,
          chosen.launcher->name));
  }
  env.rank = chosen.info;
  // torch.distributed's env:// variables without torchrun's own marker: set by hand or by
  // another launcher (mp.spawn wrappers, a job script).
  if (env.rank->launcher == "torchrun" && !lookup("TORCHELASTIC_RUN_ID") && !lookup("TORCHELASTIC_RESTART_COUNT"))
    env.rank->launcher = "env";
  return env;
}

RankEnvironment read_rank_environment() {
  return read_rank_environment([](std::string_view name) -> std::optional<std::string> {
    const char* v = std::getenv(std::string(name).c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  });
}

namespace {

/// Calls `field(name)` for each {name} of `pattern` and `text(part)` for the text between.
template <typename Field, typename Text>
void walk_pattern(std::string_view pattern, Field&& field, Text&& text) {
  for (std::size_t i = 0; i < pattern.size();) {
    const char c = pattern[i];
    if ((c == '{' || c == '}') && i + 1 < pattern.size() && pattern[i + 1] == c) {
      text(pattern.substr(i, 1));
      i += 2;
    } else if (c == '{') {
      const std::size_t close = pattern.find('}', i);
      if (close == std::string_view::npos)
        throw Error(fmt::format("the output pattern '{}' has a '{{' without its '}}' (write '{{{{' for a brace)",
                                pattern));
      field(pattern.substr(i + 1, close - i - 1));
      i = close + 1;
    } else if (c == '}') {
      throw Error(fmt::format("the output pattern '{}' has a '}}' without its '{{' (write '}}}}' for a brace)", pattern));
    } else {
      text(pattern.substr(i, 1));
      ++i;
    }
  }
}

void check_field(std::string_view pattern, std::string_view name) {
  if (name != "rank" && name != "world_size" && name != "local_rank")
    throw Error(fmt::format("the output pattern '{}' names {{{}}}, which is not a field: use {{rank}}, "
                            "{{world_size}} or {{local_rank}}",
                            pattern, name));
}

}  // namespace

std::string expand_rank_pattern(std::string_view pattern, const std::optional<RankInfo>& rank) {
  std::string out;
  walk_pattern(
      pattern,
      [&](std::string_view name) {
        check_field(pattern, name);
        if (!rank) {
          out += "none";
        } else if (name == "rank") {
          out += std::to_string(rank->rank);
        } else if (name == "world_size") {
          out += std::to_string(rank->world_size);
        } else {
          out += rank->local_rank >= 0 ? std::to_string(rank->local_rank) : std::string("none");
        }
      },
      [&](std::string_view text) { out += text; });
  return out;
}

bool is_rank_pattern(std::string_view pattern) {
  bool any = false;
  walk_pattern(
      pattern,
      [&](std::string_view name) {
        check_field(pattern, name);
        any = true;
      },
      [](std::string_view) {});
  return any;
}

}  // namespace nnprof
