"""Private Evolution (Aug-PE, Xie et al. 2024; paper App. D.3): DP synthetic text without training.

A population of synthetic texts starts from RANDOM_API samples. Each iteration:

1. every text of the population gets ``variations`` rewrites from VARIATION_API; the texts and their
   rewrites are the candidates (paper: 7 candidates per sample);
2. every private record votes once for its nearest candidate in embedding space (``faiss``, L2);
3. Gaussian noise of std ``sigma`` is added to the vote histogram (sensitivity 1: one record, one vote),
   the threshold is subtracted and the result clipped at 0;
4. the ``num_samples`` candidates with the highest noisy counts (rank selection) become the population.

Only step 3's noisy histogram touches private records, so ``iterations`` histograms are the whole
mechanism (composed Gaussian mechanisms, accounted in :mod:`continuousbench.dp.accounting`); the API sees
public prompts and synthetic text only. The noise comes from OS entropy (:func:`secret_rng`), never from
``seed``, which drives only public choices: styles, tones, API sampling seeds and tie-breaking.

Each finished iteration's population is one parquet file (texts, plus its public statistics in the
file's metadata), written atomically, so a killed run resumes at the next iteration.
"""

from __future__ import annotations

import json
import logging
import secrets
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from continuousbench.dp.pe_prompts import random_prompts, variation_prompts
from continuousbench.embeddings.encoders import Embedder
from continuousbench.embeddings.fid import frechet_distance
from continuousbench.errors import UserError
from continuousbench.llm import TextGenerator

logger = logging.getLogger(__name__)
ITERATION_FILE = "iteration-{:02d}.parquet"
STATS_KEY = b"continuousbench.pe"


def run_seed(seed: int, run: int) -> int:
    """The seed of run ``run`` of a job seeded ``seed`` (sweep runs and the final run differ)."""
    return int(np.random.SeedSequence([seed, run]).generate_state(1)[0])


def secret_rng() -> np.random.Generator:
    """A generator seeded from OS entropy: DP noise must not be reproducible from any published seed."""
    return np.random.default_rng(secrets.randbits(128))


@dataclass
class PEApi:
    """RANDOM_API and VARIATION_API over any :mod:`continuousbench.llm` text generator.

    A backend samples prompt ``i`` of a call with seed ``seed + i``, so repeated prompts still give
    different texts and every answer is reproducible (and cacheable) from the public seed.
    """

    generator: TextGenerator
    prompt_set: str = "geminon"
    temperature: float = 1.0
    max_new_tokens: int = 256

    def _generate(self, prompts: list[str], seed: int, what: str) -> list[str]:
        """Every prompt's text, asked in chunks with a progress line between them (a large
        ``--num_samples`` is otherwise silent for hours). Prompt ``i`` keeps seed ``seed + i`` and chunks
        hold whole batches of the backend, so the texts are those of one call."""
        from continuousbench.stages import ProgressLog

        batch = getattr(self.generator, "batch_size", None) or 1
        chunk = -(-CHUNK // batch) * batch
        progress = ProgressLog(f"pe: {what}", len(prompts), "texts")
        texts = []
        sampling = {"temperature": self.temperature, "max_new_tokens": self.max_new_tokens}
        for start in range(0, len(prompts), chunk):
            texts += self.generator.generate(prompts[start : start + chunk], seed=seed + start, **sampling)
            progress.advance(min(chunk, len(prompts) - start))
        if len(texts) != len(prompts):
            raise UserError(f"the API answered {len(texts)} of {len(prompts)} {what} prompts; check --api")
        texts = [(t or "").strip() for t in texts]
        if not any(texts):
            raise UserError(
                f"the API returned only empty texts for {len(prompts)} {what} prompts; check --api (a model "
                "that answers) and --max_new_tokens"
            )
        return texts

    def random(self, n: int, rng: np.random.Generator) -> list[str]:
        prompts = random_prompts(self.prompt_set, n, rng)
        return self._generate(prompts, int(rng.integers(2**31)), "RANDOM_API")

    def variations(self, texts: list[str], per_text: int, rng: np.random.Generator) -> list[str]:
        """``per_text`` rewrites of every text, flattened in order (empty strings kept, for counting)."""
        prompts = variation_prompts(texts, per_text, rng)
        return self._generate(prompts, int(rng.integers(2**31)), "VARIATION_API")


def vote_histogram(voters: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """How many ``voters`` rows have each ``candidates`` row as their nearest neighbour (exact L2)."""
    import faiss

    index = faiss.IndexFlatL2(candidates.shape[1])
    index.add(np.ascontiguousarray(candidates, dtype=np.float32))
    _, nearest = index.search(np.ascontiguousarray(voters, dtype=np.float32), 1)
    return np.bincount(nearest[:, 0], minlength=len(candidates))


def noisy_histogram(counts: np.ndarray, sigma: float) -> np.ndarray:
    """``counts`` plus N(0, sigma^2) per bin from :func:`secret_rng`; sigma 0 (epsilon = inf) adds none."""
    counts = counts.astype(np.float64)
    return counts + secret_rng().normal(0.0, sigma, size=counts.shape) if sigma > 0 else counts


def select(noisy: np.ndarray, k: int, threshold: float, rng: np.random.Generator) -> np.ndarray:
    """Indices (ascending) of the ``k`` highest ``max(noisy - threshold, 0)``; ties in seeded random order."""
    scores = np.clip(noisy - threshold, 0.0, None)
    order = np.lexsort((rng.permutation(len(scores)), -scores))
    return np.sort(order[:k])


def write_population(path: Path, texts: list[str], stats: dict) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from continuousbench.files import atomic_write

    table = pa.table({"text": pa.array(texts, pa.string())})
    table = table.replace_schema_metadata({STATS_KEY: json.dumps(stats, sort_keys=True).encode()})
    atomic_write(path, lambda tmp: pq.write_table(table, tmp))


def read_stats(path: Path) -> dict:
    import pyarrow.parquet as pq

    return json.loads(pq.read_schema(path).metadata[STATS_KEY])


def read_population(path: Path) -> list[str]:
    import pyarrow.parquet as pq

    return pq.read_table(path).column("text").to_pylist()


CHUNK = 512  # prompts per generation call of the PE API: a progress line after each


@dataclass
class Evolution:
    """One PE run's settings (everything but the data, the API and the noise scale)."""

    num_samples: int
    iterations: int
    variations: int = 6
    threshold: float = 0.0
    seed: int = 0

    def run(
        self,
        api: PEApi,
        embed: Embedder,
        voters: np.ndarray,
        reference: np.ndarray,
        sigma: float,
        folder: Path,
        label: str = "pe",
    ) -> tuple[list[str], list[dict]]:
        """Evolve in ``folder`` (resuming from its last iteration file); return (population, history).

        ``voters`` are the embeddings of the records that vote, ``reference`` those the FID after every
        iteration is measured against (the validation split: FID is published, so it must not be an
        un-noised statistic of the voters).
        """
        folder.mkdir(parents=True, exist_ok=True)
        done = [t for t in range(self.iterations + 1) if (folder / ITERATION_FILE.format(t)).is_file()]
        if done != list(range(len(done))):
            raise UserError(
                f"{folder} is missing iteration files before {done[-1]}; start again with --overwrite"
            )
        history = [read_stats(folder / ITERATION_FILE.format(t)) for t in done]
        population = read_population(folder / ITERATION_FILE.format(done[-1])) if done else []
        for t in range(len(done), self.iterations + 1):
            rng = np.random.default_rng([self.seed, t])  # public choices of iteration t only
            population, stats = (
                self._initial(api, embed, reference, rng)
                if t == 0
                else self._step(api, embed, voters, reference, population, sigma, rng)
            )
            stats["iteration"] = t
            write_population(folder / ITERATION_FILE.format(t), population, stats)
            history.append(stats)
            logger.info(
                "%s: iteration %d/%d, %d texts, FID %s",
                label,
                t,
                self.iterations,
                len(population),
                "n/a" if stats["fid"] is None else f"{stats['fid']:.4g}",
            )
        return population, history

    def _initial(self, api: PEApi, embed: Embedder, reference: np.ndarray, rng) -> tuple[list[str], dict]:
        texts = api.random(self.num_samples, rng)
        population = [t for t in texts if t]
        fid = frechet_distance(embed(population), reference) if len(population) > 1 else None
        stats = {"population": len(population), "dropped_empty": len(texts) - len(population), "fid": fid}
        return population, stats

    def _step(
        self, api: PEApi, embed: Embedder, voters, reference, population: list[str], sigma: float, rng
    ) -> tuple[list[str], dict]:
        rewrites = api.variations(population, self.variations, rng)
        candidates = population + [t for t in rewrites if t]
        features = embed(candidates)
        noisy = noisy_histogram(vote_histogram(voters, features), sigma)
        chosen = select(noisy, self.num_samples, self.threshold, rng)
        stats = {
            "candidates": len(candidates),
            "dropped_empty": len(rewrites) - (len(candidates) - len(population)),
            "population": len(chosen),
            "selected_rewrites": int((chosen >= len(population)).sum()),
            "fid": frechet_distance(features[chosen], reference) if len(chosen) > 1 else None,
        }
        return [candidates[i] for i in chosen], stats
