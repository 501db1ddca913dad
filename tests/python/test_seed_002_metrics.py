"""Seed 002 (kitsune's profiler): the MetricsCollector, Reporter and compare_runs examples, on a
torch CPU training loop."""
import csv
import json
import time

import pytest
import torch
import torch.nn as nn

import nnprof


def make_training(width=128, batches=6, batch_size=32):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, width), nn.ReLU(), nn.Linear(width, 10))
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    train_loader = [(torch.randn(batch_size, 64), torch.randint(0, 10, (batch_size,))) for _ in range(batches)]
    return model, criterion, optimizer, train_loader


def comprehensive_metrics(num_epochs=2):
    """The seed's "Comprehensive Metrics" loop."""
    model, criterion, optimizer, train_loader = make_training()
    collector = nnprof.MetricsCollector()
    for epoch in range(num_epochs):
        for batch_idx, (data, target) in enumerate(train_loader):
            collector.record("batch_size", data.size(0))
            with collector.measure_time("iteration"):
                optimizer.zero_grad()
                output = model(data)
                loss = criterion(output, target)
                loss.backward()
                optimizer.step()
            collector.record("loss", loss.item())
    return collector


def test_comprehensive_metrics_report():
    collector = comprehensive_metrics()
    iteration = collector.get_summary("iteration")
    assert iteration["count"] == 12
    assert iteration["min"] > 0 and iteration["max"] >= iteration["mean"] >= iteration["min"]
    assert collector.get_summary("loss")["count"] == 12
    assert collector.get_summary("batch_size")["sum"] == 12 * 32
    report = collector.generate_report()
    print(report)
    assert isinstance(report, str)
    # nnprof's report: the timed scope and the recorded metrics by name, and the memory line.
    assert "iteration" in report and "loss" in report and "batch_size" in report
    assert "Memory: peak allocated" in report


def test_identifying_bottlenecks_names_the_heavy_phase():
    collector = nnprof.MetricsCollector()
    model = nn.Sequential(nn.Linear(512, 2048), nn.ReLU(), nn.Linear(2048, 512))
    dataloader = iter([torch.randn(256, 512) for _ in range(2)])
    with collector.measure_time("data_loading"):
        data = next(dataloader)
    with collector.measure_time("forward"):
        for _ in range(20):  # the heavy phase
            output = model(data)
    with collector.measure_time("backward"):
        output.sum().backward()
    analysis = collector.analyze_bottlenecks()
    print(f"Bottleneck: {analysis['bottleneck']}")
    assert analysis["bottleneck"] == "forward"
    assert analysis["slowest"] == "forward"
    assert analysis["findings"][0]["type"] == "slow_operation"
    assert "forward" in analysis["description"]
    assert set(analysis["phases"]) == {"data_loading", "forward", "backward"}
    assert analysis["phases"]["forward"]["self_share"] > 0.5


def test_custom_reporter_writes_json_html_csv(tmp_path, capsys):
    collector = comprehensive_metrics()
    reporter = nnprof.Reporter(collector)
    reporter.save_json(tmp_path / "metrics.json")
    reporter.save_html(str(tmp_path / "report.html"))
    reporter.save_csv(tmp_path / "metrics.csv")
    reporter.save_csv(tmp_path / "summary.csv", summary=True)
    reporter.print_summary()
    printed = capsys.readouterr().out
    assert "iteration: mean" in printed and "Throughput:" in printed

    html = (tmp_path / "report.html").read_text()
    assert html.lstrip().lower().startswith("<!doctype html")
    assert "iteration" in html and "</html>" in html

    with open(tmp_path / "metrics.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert {"metric", "kind", "unit", "time_ns", "value", "thread"} <= set(rows[0])
    losses = [r for r in rows if r["metric"] == "loss"]
    assert len(losses) == 12
    with open(tmp_path / "summary.csv", newline="") as f:
        summary = {r["metric"]: r for r in csv.DictReader(f)}
    assert int(summary["iteration"]["count"]) == 12


def test_json_report_has_the_seeds_shape(tmp_path):
    collector = nnprof.MetricsCollector()
    model, criterion, optimizer, train_loader = make_training()
    for data, target in train_loader:
        collector.record("batch_size", data.size(0))
        with collector.measure_time("iteration"):
            with collector.measure_time("forward_pass"):
                loss = criterion(model(data), target)
            with collector.measure_time("backward_pass"):
                loss.backward()
    nnprof.Reporter(collector).save_json(tmp_path / "profile.json")
    profile = json.loads((tmp_path / "profile.json").read_text())
    assert set(profile) >= {"timing", "memory", "throughput"}
    for phase in ("forward_pass", "backward_pass"):
        t = profile["timing"][phase]
        assert set(t) >= {"mean", "std", "min", "max"}
        assert 0 < t["min"] <= t["mean"] <= t["max"]
        assert t["max"] < 10_000  # milliseconds, not nanoseconds
    assert profile["memory"]["peak_allocated"] > 0
    assert profile["memory"]["peak_reserved"] >= profile["memory"]["peak_allocated"]
    throughput = profile["throughput"]
    iteration = profile["timing"]["iteration"]
    assert throughput["iterations_per_sec"] == pytest.approx(1000.0 / iteration["mean"], rel=1e-6)
    assert throughput["samples_per_sec"] == pytest.approx(32 * throughput["iterations_per_sec"], rel=1e-6)


def test_reporter_refuses_paths_of_another_format(tmp_path):
    reporter = nnprof.Reporter(nnprof.MetricsCollector(track_memory=False))
    with pytest.raises(ValueError, match=".html"):
        reporter.save_html(tmp_path / "report.json")
    with pytest.raises(ValueError, match=".csv"):
        reporter.save_csv(tmp_path / "metrics.json")
    assert reporter.to_dict()["memory"]["peak_allocated"] is None


def profile_training(width):
    """The seed's profile_training(config): ten training steps, timed."""
    model, criterion, optimizer, _ = make_training(width=width)
    data, target = torch.randn(256, 64), torch.randint(0, 10, (256,))
    collector = nnprof.MetricsCollector(track_memory=False)
    for _ in range(10):
        with collector.measure_time("train_step"):
            optimizer.zero_grad()
            criterion(model(data), target).backward()
            optimizer.step()
    return collector


def test_comparing_configurations_speedup():
    metrics1 = profile_training(width=2048)  # baseline
    metrics2 = profile_training(width=128)   # a sixteenth of the hidden width: much faster
    comparison = nnprof.compare_runs(metrics1, metrics2)
    print(f"Speedup: {comparison['speedup']:.2f}x")
    t1 = metrics1.get_summary("train_step")["sum"] / 1e9
    t2 = metrics2.get_summary("train_step")["sum"] / 1e9
    # The speedup is over the phases' scope time, which ends just after the duration is recorded.
    assert comparison["speedup"] == pytest.approx(t1 / t2, rel=1e-2)
    assert comparison["speedup"] > 2
    assert comparison["scopes"]["train_step"]["verdict"] == "improved"
    assert comparison["scopes"]["train_step"]["calls_a"] == 10


def test_compare_against_baseline_times():
    baseline, faster = {"time": 12.0}, {"time": 8.0}
    assert nnprof.compare_runs(baseline, faster)["speedup"] == pytest.approx(1.5)
    assert nnprof.compare_runs(3.0, 1.5)["speedup"] == pytest.approx(2.0)
    with pytest.raises(TypeError):
        nnprof.compare_runs("fast", "slow")
    # PerformanceProfiler runs: their regions' wall time.
    runs = []
    for seconds in (0.2, 0.02):
        profiler = nnprof.PerformanceProfiler(track_gpu=False)
        with profiler.profile("train"):
            time.sleep(seconds)
        runs.append(profiler)
    comparison = nnprof.compare_runs(*runs)
    assert comparison["speedup"] == pytest.approx(comparison["time_a_s"] / comparison["time_b_s"])
    assert comparison["time_a_s"] >= 0.2 and comparison["time_b_s"] >= 0.02
    assert comparison["speedup"] > 1.5  # 10 without load; a loaded machine wakes the sleepers late
    assert nnprof.compare_runs(runs[0].get_metrics(), runs[1].get_metrics())["speedup"] == comparison["speedup"]


def test_best_practice_end_to_end_phases_nest():
    # Measure end-to-end: phases timed inside the full iteration.
    collector = nnprof.MetricsCollector(track_memory=False)
    model, criterion, optimizer, train_loader = make_training()
    dataloader = iter(train_loader)
    with collector.measure_time("full_iteration"):
        with collector.measure_time("data_loading"):
            data, target = next(dataloader)
        with collector.measure_time("forward"):
            loss = criterion(model(data), target)
        with collector.measure_time("backward"):
            loss.backward()
        with collector.measure_time("optimizer"):
            optimizer.step()
    full = collector.get_summary("full_iteration")["sum"]
    parts = sum(collector.get_summary(p)["sum"] for p in ("data_loading", "forward", "backward", "optimizer"))
    assert parts <= full
    block = collector.measure_time("sleep")
    with block:
        time.sleep(0.02)
    assert block.elapsed_ms >= 19
