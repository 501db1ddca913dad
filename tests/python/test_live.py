"""Live and long-running profiling from Python: nnprof.ContinuousProfiler (windows aligned to
steps, written to a file as it goes, trends from the windows) and nnprof.LiveServer (the page,
/metrics and pprof over a running profiler and over a saved profile, the token rule)."""
import time
import urllib.error
import urllib.request

import pytest

import nnprof


# Straight to the server: a proxy from the environment (http_proxy) must not see these requests.
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def get(url, timeout=10):
    with DIRECT.open(url, timeout=timeout) as response:
        return response.status, response.headers.get("Content-Type", ""), response.read()


def run_steps(profiler, n, seconds):
    for _ in range(n):
        with profiler.scope("step"):
            end = time.perf_counter() + seconds
            while time.perf_counter() < end:
                pass
        profiler.add_items("step", 4)


def test_continuous_windows_close_at_step_ends_and_are_written_as_they_go(tmp_path):
    profiler = nnprof.Profiler()
    out = tmp_path / "run.nnprof"
    with pytest.raises(ValueError, match="interval"):
        nnprof.ContinuousProfiler(profiler, interval=0)
    with pytest.raises(ValueError, match="unknown continuous metric"):
        nnprof.ContinuousProfiler(profiler, metrics=["disk"])
    continuous = nnprof.ContinuousProfiler(profiler, interval=0.05, metrics=[], step_scope="step", output=str(out))
    continuous.start()
    run_steps(profiler, 40, 0.01)
    so_far = continuous.current()
    assert so_far["enabled"] and not so_far["finished"] and so_far["step_scope"] == "step"
    assert len(so_far["windows"]) >= 2
    assert nnprof.load(str(out)).continuous["windows"], "the file holds the windows closed so far"
    profile = continuous.stop()
    c = profile.continuous
    assert c["finished"] and c["interval_ns"] == 50_000_000
    windows = c["windows"]
    assert len(windows) >= 4
    assert sum(w["steps"] for w in windows) == 40
    assert sum(w["items"] for w in windows) == 160
    assert sum(w["step_aligned"] for w in windows) >= len(windows) - 2  # all but the last few close at a step end
    for a, b in zip(windows, windows[1:]):
        assert b["start_ns"] == a["end_ns"]
    assert windows[0]["scopes"][0]["name"] == "step"
    assert all(w["energy_joules"] is None for w in windows)  # not asked for: None, never 0
    assert nnprof.load(str(out)).continuous == c
    trends = nnprof.analyze_performance_trends(profile)
    step_time = [s for s in trends["series"] if s["metric"] == "step_time"]
    assert step_time and len(step_time[0]["values"]) == len(windows)
    assert all(v is None or 5e6 < v < 5e8 for v in step_time[0]["values"])  # ~10 ms a step


def test_continuous_as_a_context_manager():
    profiler = nnprof.Profiler()
    assert nnprof.ContinuousProfiler(profiler).profile is None
    with nnprof.ContinuousProfiler(profiler, interval=0.03, metrics=[], step_scope="step") as continuous:
        run_steps(profiler, 10, 0.005)
        assert continuous.state_bytes > 0
    c = continuous.profile.continuous
    assert c["finished"] and sum(w["steps"] for w in c["windows"]) == 10


def test_live_server_serves_a_running_profiler_and_a_saved_profile(tmp_path):
    profiler = nnprof.Profiler()
    run_steps(profiler, 3, 0.001)
    with nnprof.LiveServer(profiler, port=0, announce=False, update_interval=0.1) as live:
        assert live.port > 0 and live.url.startswith(f"http://127.0.0.1:{live.port}/") and live.token == ""
        status, kind, body = get(live.url + "metrics")
        assert status == 200 and kind.startswith("text/plain")
        assert b'nnprof_scope_calls_total{scope="step"} 3\n' in body
        run_steps(profiler, 2, 0.001)
        deadline = time.monotonic() + 10
        while b'nnprof_scope_calls_total{scope="step"} 5\n' not in body and time.monotonic() < deadline:
            time.sleep(0.05)
            body = get(live.url + "metrics")[2]
        assert b'nnprof_scope_calls_total{scope="step"} 5\n' in body, "the scrape follows the running profiler"
        status, kind, page = get(live.url)
        assert status == 200 and kind.startswith("text/html") and b"<html" in page
    with pytest.raises(urllib.error.URLError):
        get(live.url + "metrics", timeout=2)  # stopped when the block ended

    # A saved profile: the same endpoints, fixed data. Its heap was not tracked, so the pprof
    # heap endpoint says so with a 404 rather than serving an empty profile.
    saved = tmp_path / "saved.nnprof"
    profiler.snapshot().save(str(saved))
    with nnprof.LiveServer(nnprof.load(str(saved)), port=0, announce=False) as live:
        assert b'nnprof_scope_calls_total{scope="step"} 5\n' in get(live.url + "metrics")[2]
        with pytest.raises(urllib.error.HTTPError) as no_heap:
            get(live.url + "debug/pprof/heap")
        assert no_heap.value.code == 404
        status, kind, api = get(live.url + "api/v1/scopes")
        assert status == 200 and kind.startswith("application/json") and b"step" in api


def test_live_server_errors_say_what_to_do():
    with pytest.raises(nnprof.Error, match="token"):
        nnprof.LiveServer(address="0.0.0.0", port=0, announce=False)
    with nnprof.LiveServer(port=0, announce=False) as first:
        with pytest.raises(nnprof.Error, match="in use"):
            nnprof.LiveServer(port=first.port, announce=False)
    with pytest.raises(TypeError, match="serves an nnprof.Profiler"):
        nnprof.LiveServer("profile.nnprof", port=0, announce=False)
    token = "a" * 32
    with nnprof.LiveServer(address="0.0.0.0", port=0, token=token, announce=False) as public:
        assert public.token == token and public.url.endswith("?token=" + token)
        with pytest.raises(urllib.error.HTTPError) as refused:
            get(f"http://127.0.0.1:{public.port}/metrics")
        assert refused.value.code == 401
        assert get(f"http://127.0.0.1:{public.port}/metrics?token={token}")[0] == 200
