"""Noise calibration at high epsilon: what the PLD grid costs and changes (accounting.calibration_grid).

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/calibration_grid.py

For each setting (target epsilon, sampling probability, steps, delta) the calibration runs on the
grid of 1e-3 and on the grid calibration_grid gives, alternated, and prints each one's CPU seconds, noise
multiplier and the epsilon that noise gets on the reporting grid (dp_accounting's default 1e-4), which
must stay at or under the target, with the CPU seconds of that report (a fresh accountant: what a run's
publication costs) and the epsilon the calibration grid itself would report. The last two settings are the
demo's epsilon-100 generators (1,716 records; expected batch 128 x 32 steps, and --quick's 32 x 4).
"""

from __future__ import annotations

import time

from continuousbench.dp import accounting

DELTA = 1e-5
DEMO_DELTA = 1716**-1.1  # the demo release's 1,716 records, the default delta 1/n^1.1
SETTINGS = [  # (target epsilon, sampling probability, steps, delta)
    (100.0, 0.01, 50, DELTA),
    (100.0, 0.05, 8, DELTA),
    (300.0, 0.02, 100, DELTA),
    (100.0, 0.2, 200, DELTA),
    (10.0, 0.01, 50, DELTA),
    (100.0, 128 / 1716, 32, DEMO_DELTA),
    (100.0, 32 / 1716, 4, DEMO_DELTA),
]


def calibrated(target: float, q: float, steps: int, delta: float, grid: float) -> tuple[float, float]:
    """(CPU seconds, noise multiplier) of one calibration on ``grid`` (accounting.calibrate's own path)."""
    start = time.process_time()
    sigma = accounting.calibrate(lambda s: accounting.dp_event(s, q, steps), target, delta, grid=grid)
    return time.process_time() - start, sigma


def main() -> None:
    print("target  q       steps  delta    grid    CPU-s  sigma     eps on 1e-4, its CPU-s; on the grid")
    for target, q, steps, delta in SETTINGS:
        for grid in (1e-3, accounting.calibration_grid(target)):
            cpu, sigma = calibrated(target, q, steps, delta, grid)
            event = accounting.dp_event(sigma, q, steps)
            start = time.process_time()
            reported = accounting._composed.__wrapped__(event, 1e-4).get_epsilon(delta)
            report_cpu = time.process_time() - start
            coarse = accounting.event_epsilon(event, delta, grid)
            assert reported <= target * 1.0001, (target, grid, reported)
            print(
                f"{target:<7g} {q:<7.4g} {steps:<6d} {delta:<8.2g} {grid:<7g} {cpu:6.2f}  {sigma:.6f}  "
                f"{reported:.5f}, {report_cpu:5.2f}; {coarse:.5f}"
            )


if __name__ == "__main__":
    main()
