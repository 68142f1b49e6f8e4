"""--sweep: the grid's parsing, run names, and --epsilon as the budget of all runs composed."""

import pytest

from continuousbench.dp import sweep
from continuousbench.dp.plan import make_plan
from continuousbench.dp.train import make_parser
from continuousbench.errors import UserError

OPTIONS = {"learning_rate", "clip_norm", "max_steps", "seed"}


def test_a_key_starts_a_setting_and_the_values_after_it_are_its_choices():
    grid = sweep.parse("learning_rate=1e-4,2e-4,clip_norm=1e-3,1e-2", OPTIONS)
    assert grid == {"learning_rate": [1e-4, 2e-4], "clip_norm": [1e-3, 1e-2]}
    runs = sweep.runs(grid)
    assert len(runs) == 4 and runs[1] == {"learning_rate": 1e-4, "clip_norm": 1e-2}
    assert [sweep.run_name(r) for r in runs[:2]] == ["lr-0.0001_clip_norm-0.001", "lr-0.0001_clip_norm-0.01"]
    assert sweep.run_name({"learning_rate": 1e-3}) == "lr-0.001"  # --lr_sweep's folders: a resume finds them


@pytest.mark.parametrize(
    "text, message",
    [
        ("lr=1e-4", "key 'lr' is not an option"),
        ("max_steps=2,4", "cannot be swept (it changes the DP plan"),
        ("learning_rate=1e-4,learning_rate=2e-4", "names learning_rate twice"),
        ("1e-4,2e-4", "must start with a setting"),
        ("learning_rate=", "no values for learning_rate"),
        ("clip_norm=0", "must be a positive number"),
    ],
)
def test_bad_grids_get_one_line(text, message):
    with pytest.raises(UserError, match=message.replace("(", r"\(")) as err:
        sweep.parse(text, OPTIONS)
    assert "\n" not in str(err.value)


@pytest.mark.slow  # two PLD calibrations
def test_epsilon_is_the_budget_of_the_whole_sweep():
    """Two runs calibrated together meet --epsilon composed (as PE's --epsilon does); each run alone is
    below it, and one run calibrated alone gets less noise."""
    _, _, config = make_parser().parse(
        [
            "--output_dir",
            "/tmp/unused",
            "--epsilon",
            "2",
            "--sampling",
            "poisson",
            "--expected_batch_size",
            "8",
            "--steps",
            "4",
        ]
    )
    alone, sweep2 = make_plan(200, config), make_plan(200, config, runs=2)
    assert sweep2.runs == 2 and sweep2.steps == alone.steps == 4
    both = sweep2.account()
    assert both.epsilon <= 2 and both.epsilon == pytest.approx(2, rel=0.01) and both.steps == 8
    assert sweep2.account(runs=1).epsilon < both.epsilon
    assert sweep2.noise_multiplier > alone.noise_multiplier
    assert alone.account().epsilon == pytest.approx(2, rel=0.01)  # one run: the run is the whole job
