// The spans on a time axis, one lane group per thread, and what the picture leaves out.
#include <string>

#include "io/format.hpp"
#include "report/charts/html_charts.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {
namespace {

namespace html = io::html;

// Why the picture does not show every span: lost to the buffer, merged, or nested too deep.
void say_notes(const Profile& profile, const html::TimelineLayout& layout, Section& section, Picture& picture) {
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
  if (layout.merged) {
    const double ns_per_px = static_cast<double>(layout.t1_ns - layout.t0_ns) / html::kTimelineWidthPx;
    picture.caption.words(" ").append(Sentence()
                    .count(layout.spans_drawn)
                    .words(" spans are drawn as ")
                    .count(layout.boxes.size())
                    .words(" boxes: per thread and depth, spans narrower than ")
                    .ratio(layout.merge_px, "px")
                    .words(" (")
                    .duration(layout.merge_px * ns_per_px)
                    .words(") at this scale are merged per column of that width into one box, coloured after the "
                           "name with the most time in it and paler where the spans leave gaps. Hover a box for "
                           "its span count and busy time."));
  }
  if (layout.spans_too_deep > 0) {
    section.say(Sentence()
                    .count(layout.spans_too_deep, "span", "spans")
                    .words(" nested deeper than ")
                    .count(html::kTimelineMaxDepth)
                    .words(" levels ")
                    .words(layout.spans_too_deep == 1 ? "is" : "are")
                    .words(" not drawn."));
  }
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
  const html::TimelineLayout layout = html::layout_timeline(profile);
  Picture picture{{}, html::kTimelineStyle, {}, {}};
  picture.caption.words(
      "Spans per thread, nested scopes stacked by depth, colour by name. Hover a box for its name, duration and "
      "start (times since the session start).");
  say_notes(profile, layout, section, picture);
  if (layout.boxes.empty()) {
    section.say(Sentence().words("No spans were recorded."));
    out.push_back(std::move(section));
    return;
  }
  picture.html = "<div class=\"scroll\">";
  html::write_timeline_svg(profile, layout, picture.html);
  picture.html += "</div>";
  section.add(std::move(picture));
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
