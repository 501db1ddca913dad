// nnprof serve FILE: the live page, /metrics, pprof and JSON endpoints of a saved profile,
// until interrupted.
#include <signal.h>

#include <iostream>
#include <memory>
#include <string>

#include "commands.hpp"
#include "nnprof/error.hpp"
#include "nnprof/live_server.hpp"

namespace nnprof::cli {

namespace {

struct ServeOptions {
  std::string file;
  std::string listen = "127.0.0.1:8080";
  std::string token;
};

int run_serve(const ServeOptions& o) {
  LiveServerOptions options = parse_serve_address(o.listen);
  options.token = o.token;
  options.generate_token = true;  // a public address without NNPROF_TOKEN gets one, printed
  Profile profile = load_nonempty(o.file);
  // SIGINT and SIGTERM are taken by sigwait below, in this thread: the server's threads,
  // started after this, inherit the mask and never see them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  LiveServer server(std::move(profile), options);
  std::cerr << "nnprof: serving " << o.file << " until interrupted (Ctrl-C)\n";
  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  server.stop();
  return 0;
}

}  // namespace

Action add_serve_command(CLI::App& app) {
  auto o = std::make_shared<ServeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "Serve a saved profile over HTTP: the live page, Prometheus /metrics, /debug/pprof/profile and /heap, "
      "/api/v1 JSON (docs/LIVE.md); until interrupted");
  cmd->add_option("file", o->file, "The profile (.nnprof)")->required();
  cmd->add_option("-l,--listen", o->listen,
                  "[ADDR:]PORT to serve on; any address but loopback needs a token (--token, NNPROF_TOKEN, else "
                  "one is made and printed)")
      ->capture_default_str();
  cmd->add_option("--token", o->token, "Token every request must carry (16 or more of A-Z a-z 0-9 - . _ ~)");
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    return run_serve(*o);
  };
}

}  // namespace nnprof::cli
