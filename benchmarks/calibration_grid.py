"""Noise calibration at high epsilon: what the PLD grid costs and changes (accounting.calibration_grid).

    OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/calibration_grid.py

For each setting (target epsilon, sampling probability, steps; delta 1e-5) the calibration runs on the
grid of 1e-3 and on the grid calibration_grid gives, alternated, and prints each one's CPU seconds, noise
multiplier and the epsilon that noise gets on the reporting grid (dp_accounting's default 1e-4), which
must stay at or under the target, with the CPU seconds of that report (a fresh accountant: what a run's
publication costs) and the epsilon the calibration grid itself would report. The last two settings are the
demo's epsilon-100 generators (1,716 records; expected batch 128 x 32 steps, and --quick's 32 x 4).
"""

from __future__ import annotations

import time

from continuousbench.dp import accounting

SETTINGS = [
    (100.0, 0.01, 50),
    (100.0, 0.05, 8),
    (300.0, 0.02, 100),
    (100.0, 0.2, 200),
    (10.0, 0.01, 50),
    (100.0, 128 / 1716, 32),
    (100.0, 32 / 1716, 4),
]
DELTA = 1e-5


def calibrated(target: float, q: float, steps: int, grid: float) -> tuple[float, float]:
    """(CPU seconds, noise multiplier) of one calibration on ``grid`` (accounting.calibrate's own path)."""
    start = time.process_time()
    sigma = accounting.calibrate(lambda s: accounting.dp_event(s, q, steps), target, DELTA, grid=grid)
    return time.process_time() - start, sigma


def main() -> None:
    print("target  q       steps  grid    CPU-s  sigma     epsilon reported (1e-4), its CPU-s; on the grid")
    for target, q, steps in SETTINGS:
        for grid in (1e-3, accounting.calibration_grid(target)):
            cpu, sigma = calibrated(target, q, steps, grid)
            event = accounting.dp_event(sigma, q, steps)
            start = time.process_time()
            reported = accounting._composed.__wrapped__(event, 1e-4).get_epsilon(DELTA)
            report_cpu = time.process_time() - start
            coarse = accounting.event_epsilon(event, DELTA, grid)
            assert reported <= target * 1.0001, (target, grid, reported)
            print(
                f"{target:<7g} {q:<7.4g} {steps:<6d} {grid:<7g} {cpu:6.2f}  {sigma:.6f}  "
                f"{reported:.5f}, {report_cpu:5.2f}; {coarse:.5f}"
            )


if __name__ == "__main__":
    main()
