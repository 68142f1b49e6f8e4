"""ContinuousBench QA match: exact match and contains after the benchmark's answer normalisation."""

import math

import datasets
import evaluate

from continuousbench.scoring.match import DEFAULT_MATCHERS, THRESHOLDS, check_inputs, check_options, score

_DESCRIPTION = """
Short-answer QA accuracy as scored by ContinuousBench. Predictions and references are reduced to a
canonical form (cut at the first line break, sentence end, comma or unit after a number; casefolded;
punctuation at the ends and all whitespace removed; numbers compared by value), then compared with
`exact_match` (equal to a reference) and `contains` (a reference occurs in the prediction; a numeric
reference must equal one of the prediction's numbers, so "790" does not contain "79"). With support
counts, accuracy is also reported on the questions supported by at least k corpus documents.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `str`): model answers, one per question.
    references (`list` of `list` of `str`, or `list` of `str`): the answer and its accepted aliases.
    support_counts (`list` of `int`, optional): documents supporting each question; a compute
        argument, or an input of the `support_counts` configuration (for `add_batch`).
    matchers (`list` of `str`, default `["exact_match", "contains"]`): any of these two.
    thresholds (`list` of `int`, default `[0, 200, 400, 600, 800]`): support-count strata.
Returns:
    exact_match, contains (`float`): accuracy in [0, 1];
    "<matcher>@>=<k>" (`float`): accuracy on questions with support count >= k (NaN if none),
    only when support counts are given.
Examples:
    >>> qa_match = evaluate.load("metrics/qa_match")
    >>> results = qa_match.compute(predictions=["79 lbs", "Spore Geminon.", "790"],
    ...                            references=[["79"], ["Spore Geminon"], ["79"]])
    >>> print(round(results["exact_match"], 2), round(results["contains"], 2))
    0.67 0.67

    >>> results = qa_match.compute(predictions=["ghost and dark", "It is 14 m tall"],
    ...                            references=[["dark and ghost", "ghost and dark"], ["14"]],
    ...                            support_counts=[150, 420], thresholds=[0, 400])
    >>> print(results["exact_match"], results["contains@>=400"])
    0.5 1.0
"""

_CITATION = """
@article{continuousbench2026,
  title   = {ContinuousBench: Does Differentially Private Synthetic Text Carry a Private Corpus's Knowledge?},
  author  = {ContinuousBench authors},
  year    = {2026},
  note    = {Benchmark and evaluation harness for (DP) text synthesis}
}
"""


def _features(with_support: bool) -> list[datasets.Features]:
    """References may be alias lists or plain strings; evaluate picks the form that fits."""
    extra = {"support_counts": datasets.Value("int64")} if with_support else {}
    return [
        datasets.Features(
            {
                "predictions": datasets.Value("string"),
                "references": datasets.Sequence(datasets.Value("string")),
                **extra,
            }
        ),
        datasets.Features(
            {"predictions": datasets.Value("string"), "references": datasets.Value("string"), **extra}
        ),
    ]


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class QaMatch(evaluate.Metric):
    def __init__(self, matchers=DEFAULT_MATCHERS, thresholds=THRESHOLDS, **kwargs):
        # evaluate.load(..., matchers=..., thresholds=...) lands here; compute() may override both.
        check_options(matchers, thresholds)
        self.matchers, self.thresholds = tuple(matchers), tuple(thresholds)
        super().__init__(**kwargs)

    # The library checks the inputs before evaluate encodes them as Arrow, which would cast 1.7 or True
    # to an int64 support count and fail on an empty batch with an IndexError.
    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add a batch of predictions and references (checked by the library first)."""
        check_inputs(predictions, references, support_counts=kwargs.get("support_counts"))
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one prediction and its references (checked by the library first)."""
        support = kwargs.get("support_counts")
        check_inputs([prediction], [reference], support_counts=None if support is None else [support])
        return super().add(prediction=prediction, reference=reference, **kwargs)

    def _info(self):
        if self.config_name not in ("default", "support_counts"):
            raise ValueError(f"unknown configuration {self.config_name!r}: use 'default' or 'support_counts'")
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=_features(self.config_name == "support_counts"),
            reference_urls=["https://github.com/continuousbench/continuousbench"],
        )

    def _compute(self, predictions, references, support_counts=None, matchers=None, thresholds=None):
        matchers = self.matchers if matchers is None else matchers
        if not isinstance(matchers, str) and "llm_match" in matchers:
            raise ValueError(
                "llm_match needs a judge model: call continuousbench.scoring.score(judge=Judge(...))"
            )
        result = score(
            predictions,
            references,
            support_counts=support_counts,
            matchers=matchers,
            thresholds=self.thresholds if thresholds is None else thresholds,
        )
        strata = {"": result["metrics"], **{f"@{k}": v for k, v in result.get("by_support", {}).items()}}
        flat = {}
        for suffix, values in strata.items():
            for name in matchers:
                accuracy = values[name]["accuracy"]  # None for an empty stratum
                flat[name + suffix] = math.nan if accuracy is None else accuracy
        return flat
