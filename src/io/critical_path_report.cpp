#include "io/critical_path_report.hpp"

#include <string>

#include "analysis/critical_path.hpp"
#include "render/sentence_markup.hpp"

namespace nnprof::io {

nlohmann::ordered_json critical_path_json(const Profile& profile, const CriticalPath& path) {
  using Json = nlohmann::ordered_json;
  Json j = Json::object();
  j["root"] = path.root == kNone ? Json(nullptr) : Json(profile.str(path.root));
  j["start_ns"] = path.start_ns;
  j["end_ns"] = path.end_ns;
  j["duration_ns"] = path.duration_ns();
  j["threads"] = path.threads;
  j["flows_followed"] = path.flows_followed;
  j["flows"] = profile.flows.size();
  Json scopes = Json::array();
  for (const CriticalPathScope& e : path.by_scope)
    scopes.push_back(Json{{"kind", to_string(e.kind)},
                          {"name", e.kind == CriticalStepKind::Scope ? Json(profile.str(e.name)) : Json(nullptr)},
                          {"duration_ns", e.duration_ns},
                          {"share", e.share},
                          {"steps", e.steps},
                          {"threads", e.threads}});
  j["by_scope"] = std::move(scopes);
  Json steps = Json::array();
  for (const CriticalPathStep& s : path.steps)
    steps.push_back(Json{{"kind", to_string(s.kind)},
                         {"name", s.kind == CriticalStepKind::Scope ? Json(profile.str(s.name)) : Json(nullptr)},
                         {"path", s.kind == CriticalStepKind::Scope ? Json(profile.node_path(s.node)) : Json(nullptr)},
                         {"thread", s.thread},
                         {"start_ns", s.start_ns},
                         {"duration_ns", s.duration_ns()},
                         {"share", s.share}});
  j["steps"] = std::move(steps);
  return j;
}

}  // namespace nnprof::io
