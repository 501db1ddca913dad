// The live page: one self-contained HTML document (no CDN, no external file), its script and
// style inline under a per-response nonce, so that it runs under a strict Content Security
// Policy: nothing loads from anywhere, and the script talks only to this server.
#pragma once

#include <string>
#include <string_view>

namespace nnprof::serve {

/// The page. `nonce` marks its inline script and style (the policy allows nothing else);
/// `real_time` makes it follow /events, otherwise it reloads /api/v1/live on demand.
/// `initial_frame` (the JSON of a frame) is shown at once, before any request; empty: the page
/// loads /api/v1/live first.
[[nodiscard]] std::string live_page_html(std::string_view nonce, bool real_time, std::string_view initial_frame = {});

/// The Content-Security-Policy header for a page with `nonce`: default-src 'none', the nonce
/// for script and style, connect-src 'self', data: images (the favicon), no framing, no base,
/// no forms.
[[nodiscard]] std::string live_page_policy(std::string_view nonce);

}  // namespace nnprof::serve
