"""nnprof.SystemMonitor, Profile.system and the carbon estimate from Python (nnprof/system.hpp)."""
import time

import pytest

import nnprof


def spin(seconds):
    end = time.perf_counter() + seconds
    x = 0
    while time.perf_counter() < end:
        x += 1
    return x


def integrated(times, values):
    return sum(values[i] * (times[i] - times[i - 1]) for i in range(1, len(times)) if values[i] is not None)


def test_a_standalone_monitor_sees_one_busy_core():
    monitor = nnprof.SystemMonitor(interval=0.05)
    spin(0.6)
    monitor.stop()
    result = monitor.result()
    assert result["monitored"] and len(result["sample_s"]) >= 3
    times = result["sample_s"]
    user = result["tracks"]["process.cpu.user"]["values"]
    system = result["tracks"]["process.cpu.system"]["values"]
    assert result["tracks"]["process.cpu.user"]["unit"] == "percent"
    busy = [u + s for u, s in zip(user, system) if u is not None and s is not None]
    mean = sum(busy) / len(busy)
    assert 60.0 <= mean <= 130.0  # one core's worth: 100 % of one core (a loaded CI machine steals some)
    cpu_seconds = integrated(times, [None if u is None else (u + s) / 100.0 for u, s in zip(user, system)])
    assert cpu_seconds == pytest.approx(times[-1] - times[0], rel=0.4)
    assert result["limits"]["logical_cpus"] >= 1
    # Energy: every domain says how it was obtained; a modelled one is never called measured.
    assert result["energy"], "no energy domain at all"
    for domain in result["energy"]:
        assert domain["method"] in ("rapl", "nvml_energy", "nvml_power", "modelled")
        assert domain["measured"] == (domain["method"] != "modelled")
        assert domain["joules"] >= 0.0


def test_a_monitor_attached_to_a_profiler_is_in_its_profile_and_its_file(tmp_path):
    profiler = nnprof.Profiler()
    monitor = nnprof.SystemMonitor(interval=0.05, profiler=profiler)
    with profiler.scope("step"):
        spin(0.3)
    monitor.stop()
    profile = profiler.snapshot()
    system = profile.system
    assert system["monitored"]
    assert "process.memory.rss" in system["tracks"]
    path = str(tmp_path / "run.nnprof")
    profile.save(path)
    loaded = nnprof.load(path).system
    assert loaded["sample_s"] == system["sample_s"]
    assert loaded["tracks"]["process.memory.rss"] == system["tracks"]["process.memory.rss"]
    carbon = nnprof.carbon_estimate(profile, region="DE", pue=1.2)
    germany = next(g for g in nnprof.grid_intensities() if g["region"] == "DE")
    joules = sum(d["joules"] for d in system["energy"] if d["kind"] != "psys")
    assert carbon["grams_co2"] == pytest.approx(joules / 3.6e6 * 1.2 * germany["grams_per_kwh"], rel=1e-9)
    assert carbon["grams_low"] <= carbon["grams_co2"] <= carbon["grams_high"]
    assert not carbon["defaulted_region"]


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="interval"):
        nnprof.SystemMonitor(interval=0.001)
    monitor = nnprof.SystemMonitor(interval=0.05)
    monitor.stop()
    with pytest.raises(nnprof.Error, match="region"):
        monitor.carbon(region="atlantis")
    with pytest.raises(nnprof.Error, match="PUE"):
        monitor.carbon(pue=0.9)
