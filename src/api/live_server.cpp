// nnprof::LiveServer and InteractiveProfiler: thin over serve::Server.
#include "nnprof/live_server.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "api/continuous_attach.hpp"
#include "api/live_attach.hpp"
#include "collect/cpu/cpu_sampler.hpp"
#include "record/internal_allocations.hpp"
#include "serve/server.hpp"
#include "nnprof/cpu_profiler.hpp"
#include "nnprof/error.hpp"
#include "nnprof/scope.hpp"

namespace nnprof {

LiveServerOptions parse_serve_address(std::string_view spec, LiveServerOptions base) {
  std::string_view port_text = spec;
  if (const std::size_t colon = spec.rfind(':'); colon != std::string_view::npos) {
    std::string_view address = spec.substr(0, colon);
    port_text = spec.substr(colon + 1);
    const bool bracketed = address.size() >= 2 && address.front() == '[' && address.back() == ']';
    if (!bracketed && address.find(':') != std::string_view::npos)
      throw Error(fmt::format("'{}': write an IPv6 address in brackets, as [::1]:8080", spec));
    if (bracketed) address = address.substr(1, address.size() - 2);
    if (address.empty()) throw Error(fmt::format("'{}': the address before ':' is empty (expected [ADDR:]PORT)", spec));
    base.address = std::string(address);
  }
  unsigned long port = 0;
  bool digits = !port_text.empty() && port_text.size() <= 5;
  for (const char c : port_text) digits = digits && c >= '0' && c <= '9';
  if (digits) port = std::strtoul(std::string(port_text).c_str(), nullptr, 10);
  if (!digits || port > 65535)
    throw Error(fmt::format("'{}' is not [ADDR:]PORT: the port must be a number from 0 to 65535 (0: any free port)", spec));
  base.port = static_cast<std::uint16_t>(port);
  return base;
}

namespace {
bool sampler_running() { return detail::CpuSampler::instance().active(); }
}  // namespace

struct LiveServer::Impl {
  std::unique_ptr<serve::Server> server;
};

LiveServer::LiveServer(Profiler& profiler, LiveServerOptions options) : impl_(std::make_unique<Impl>()) {
  detail::InternalAllocations internal;
  serve::ServerSource source;
  source.profiler = &profiler;
  source.sampler_running = sampler_running;
  source.continuous = [p = &profiler] { return detail::running_continuous_profile(*p); };
  impl_->server = std::make_unique<serve::Server>(std::move(source), options);
}

LiveServer::LiveServer(Profile profile, LiveServerOptions options) : impl_(std::make_unique<Impl>()) {
  detail::InternalAllocations internal;
  serve::ServerSource source;
  source.fixed = std::make_shared<const Profile>(std::move(profile));
  impl_->server = std::make_unique<serve::Server>(std::move(source), options);
}

LiveServer::~LiveServer() {
  detail::InternalAllocations internal;
  impl_->server.reset();
}

std::uint16_t LiveServer::port() const noexcept { return impl_->server->port(); }
const std::string& LiveServer::address() const noexcept { return impl_->server->address(); }
const std::string& LiveServer::token() const noexcept { return impl_->server->token(); }
std::size_t LiveServer::live_clients() const noexcept { return impl_->server->live_clients(); }
void LiveServer::wait() { impl_->server->wait(); }
void LiveServer::stop() noexcept {
  detail::InternalAllocations internal;
  impl_->server->stop();
}

std::string LiveServer::url() const {
  const std::string& host = address();
  const bool v6 = host.find(':') != std::string::npos;
  std::string url = fmt::format("http://{}{}{}:{}/", v6 ? "[" : "", host, v6 ? "]" : "", port());
  if (!token().empty()) url += "?token=" + token();
  return url;
}

// ---- the server a Profiler starts itself ----------------------------------------------------

namespace detail {
namespace {
std::mutex g_attached_mu;
// Never destroyed: profilers (the global one) may outlive static destructors.
std::map<const Profiler*, LiveServer*>& attached() {
  static auto* servers = new std::map<const Profiler*, LiveServer*>();
  return *servers;
}

// At exit the servers stop before static destructors run under their threads' feet.
void stop_attached_servers() {
  InternalAllocations internal;
  std::lock_guard lock(g_attached_mu);
  for (const auto& [profiler, server] : attached()) server->stop();
}
}  // namespace

void attach_live_server(Profiler& profiler, std::string_view spec, std::string_view origin) {
  InternalAllocations internal;
  LiveServerOptions options;
  try {
    options = parse_serve_address(spec);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", origin, e.what()));
  }
  auto server = std::make_unique<LiveServer>(profiler, options);
  std::lock_guard lock(g_attached_mu);
  static const bool registered = [] { return std::atexit(stop_attached_servers) == 0; }();
  (void)registered;
  LiveServer*& slot = attached()[&profiler];
  delete slot;
  slot = server.release();
}

void detach_live_server(const Profiler& profiler) noexcept {
  InternalAllocations internal;
  LiveServer* server = nullptr;
  {
    std::lock_guard lock(g_attached_mu);
    const auto it = attached().find(&profiler);
    if (it == attached().end()) return;
    server = it->second;
    attached().erase(it);
  }
  delete server;
}
}  // namespace detail

// ---- InteractiveProfiler ------------------------------------------------------------------------

InteractiveProfilerBuilder& InteractiveProfilerBuilder::web_interface(std::uint16_t port) noexcept {
  server_.port = port;
  return *this;
}
InteractiveProfilerBuilder& InteractiveProfilerBuilder::address(std::string address) {
  server_.address = std::move(address);
  return *this;
}
InteractiveProfilerBuilder& InteractiveProfilerBuilder::token(std::string token) {
  server_.token = std::move(token);
  return *this;
}
InteractiveProfilerBuilder& InteractiveProfilerBuilder::real_time_updates(bool on) noexcept {
  server_.real_time_updates = on;
  return *this;
}
InteractiveProfilerBuilder& InteractiveProfilerBuilder::update_interval(std::chrono::milliseconds interval) noexcept {
  server_.update_interval = interval;
  return *this;
}
InteractiveProfilerBuilder& InteractiveProfilerBuilder::sample_rate(double hz) noexcept {
  sample_hz_ = hz;
  return *this;
}

InteractiveProfiler InteractiveProfilerBuilder::build() const {
  if (server_.update_interval < std::chrono::milliseconds(50) || server_.update_interval > std::chrono::milliseconds(1000))
    throw Error(fmt::format("update_interval must be 50 ms to 1 s, not {} ms", server_.update_interval.count()));
  if (sample_hz_ != 0.0 && !(sample_hz_ >= 1.0 && sample_hz_ <= 10000.0))
    throw Error(fmt::format("sample_rate must be 1 to 10000 Hz (or 0: no sampling), not {}", sample_hz_));
  return InteractiveProfiler(*this);
}

struct InteractiveProfiler::State {
  LiveServerOptions server_options;
  double sample_hz = 199.0;
  Profiler profiler;
  std::unique_ptr<LiveServer> server;
  std::unique_ptr<CpuProfiler> sampler;
  int depth = 0;
};

InteractiveProfiler::InteractiveProfiler(const InteractiveProfilerBuilder& settings) : state_(std::make_unique<State>()) {
  state_->server_options = settings.server_;
  state_->sample_hz = settings.sample_hz_;
}
InteractiveProfiler::~InteractiveProfiler() = default;
InteractiveProfiler::InteractiveProfiler(InteractiveProfiler&&) noexcept = default;
InteractiveProfiler& InteractiveProfiler::operator=(InteractiveProfiler&&) noexcept = default;

void InteractiveProfiler::serve() {
  if (state_->server) return;
  state_->server = std::make_unique<LiveServer>(state_->profiler, state_->server_options);
}

Profiler& InteractiveProfiler::profiler() noexcept { return state_->profiler; }
LiveServer* InteractiveProfiler::server() noexcept { return state_->server.get(); }
Profile InteractiveProfiler::snapshot() const { return state_->profiler.snapshot(); }

void InteractiveProfiler::begin_recording() {
  if (state_->depth++ == 0 && state_->sample_hz > 0.0 && !state_->sampler) {
    CpuProfilerOptions o;
    o.hz = state_->sample_hz;
    try {
      state_->sampler = std::make_unique<CpuProfiler>(state_->profiler, o);
    } catch (const Error& e) {
      std::cerr << "nnprof: CPU sampling is off for this recording: " << e.what() << '\n';
    }
  }
  state_->profiler.start("record");
}

void InteractiveProfiler::end_recording() noexcept {
  state_->profiler.stop("record");
  if (--state_->depth == 0) state_->sampler.reset();
}

}  // namespace nnprof
