// The spans on a time axis, one lane group per thread, and what the picture leaves out.
#include <algorithm>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "report/format.hpp"
#include "report/charts/html_charts.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {
namespace {

namespace html = report::html;

// Which spans are not in the timeline, lost to the buffer: facts of the recording, said in every
// format. What the picture itself leaves out is said with the picture (draw_timeline), so that
// formats without pictures never walk the spans.
void say_notes(const Profile& profile, Section& section) {
  const Completeness& c = profile.completeness;
  if (c.spans_dropped > 0) {
    Sentence note;
    note.count(c.spans_dropped, "span", "spans").words(c.spans_dropped == 1 ? " was" : " were");
    note.words(" dropped when the memory cap (");
    if (c.memory_cap_bytes == 0) {
      note.words("none");
    } else {
      note.bytes(c.memory_cap_bytes);
    }
    note.words(") was reached (policy ")
        .words(c.buffer_policy.empty() ? "unknown" : c.buffer_policy)
        .words("): the timeline shows the spans that were kept. Statistics and the call tree still count every "
               "scope.");
    section.say(std::move(note));
  }
  if (c.spans_overwritten > 0) {
    section.say(Sentence()
                    .count(c.spans_overwritten, "older span", "older spans")
                    .words(c.spans_overwritten == 1 ? " was" : " were")
                    .words(" overwritten by newer ones (flight recorder): the timeline shows the most recent spans "
                           "only."));
  }

}

// The picture: the spans laid out (merged when there are too many to draw one by one, which is
// said above the picture) and drawn.
void draw_timeline(const Profile& profile, std::string& out) {
  const html::TimelineLayout layout = html::layout_timeline(profile);
  if (layout.spans_too_deep > 0) {
    out += fmt::format("<p class=\"muted\">{} nested deeper than {} levels {} not drawn.</p>",
                       report::format_count(layout.spans_too_deep, "span", "spans"), html::kTimelineMaxDepth,
                       layout.spans_too_deep == 1 ? "is" : "are");
  }
  if (layout.merged) {
    const double ns_per_px = static_cast<double>(layout.t1_ns - layout.t0_ns) / html::kTimelineWidthPx;
    out += fmt::format(
                 "<p class=\"muted\">{} spans are drawn as {} boxes: per thread and depth, spans narrower than {} ({}) "
                 "at this scale are merged per column of that width into one box, coloured after the name with the "
                 "most time in it and paler where the spans leave gaps. Hover a box for its span count and busy "
                 "time.</p>",
                 report::format_count(layout.spans_drawn), report::format_count(layout.boxes.size()),
                 report::format_ratio(layout.merge_px, "px"), report::format_duration(layout.merge_px * ns_per_px));
  }
  out += "<div class=\"scroll\">";
  html::write_timeline_svg(profile, layout, out);
  out += "</div>";
}

}  // namespace

void timeline(const ReportData& data, std::vector<Section>& out) {
  const Profile& profile = *data.profile;
  Section section{"timeline", "Timeline", {}};
  if (!profile.completeness.spans_enabled && profile.spans.empty()) {
    section.say(Sentence().words(
        "This was a statistics-only session: no spans were recorded, so there is no timeline. The tables are "
        "complete."));
    out.push_back(std::move(section));
    return;
  }
  say_notes(profile, section);
  if (profile.spans.empty()) {
    section.say(Sentence().words("No spans were recorded."));
    out.push_back(std::move(section));
    return;
  }
  Picture picture;
  picture.style = html::kTimelineStyle;
  picture.caption.words(
      "Spans per thread, nested scopes stacked by depth, colour by name. Hover a box for its name, duration and "
      "start (times since the session start).");
  picture.draw = [&profile](std::string& html) { draw_timeline(profile, html); };
  section.add(std::move(picture));
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
