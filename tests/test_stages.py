"""Stage progress goes to stderr (docs/errors.md): `$(continuousbench build ...)` captures only the result."""

from continuousbench.stages import StageProgress


def test_progress_bars_are_written_to_stderr(capsys):
    timings: dict[str, float] = {}
    stages = StageProgress(True, timings)
    with stages.progress, stages.stage("render", total=3) as advance:
        advance(3)
    out, err = capsys.readouterr()
    assert out == "" and "render" in err and "3/3" in err
    assert set(timings) == {"render"}
