"""Where DP-SGD's randomness comes from: a secret source for the noise and the batches, the seed for the rest.

The guarantee holds only if nobody can predict the Gaussian noise or the Poisson batches: anyone who
could would subtract the noise. So both are drawn from generators seeded with operating-system entropy
(:mod:`secrets`), never from ``--seed``, which is printed in the model card and governs only the
non-private randomness (the LoRA initialisation, and the data order of non-private runs).

The generators' state is saved in checkpoints inside the hidden work folder, so a resumed run continues
the very same streams (the steps redone after a kill are the steps that were lost, not new draws), and
the work folder, checkpoints included, is deleted when the generator is published.

``insecure_seed`` seeds both streams from a number instead: tests use it to compare runs; the privacy
statement of such a run says it has **no DP guarantee**.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

import numpy as np

NOISE_BITS = 64  # torch.Generator.manual_seed takes one 64-bit seed
BATCH_BITS = 128  # numpy's PCG64 takes a 128-bit seed


@dataclass
class SecretStreams:
    """The DP noise generator (torch) and the Poisson sampler's generator (numpy)."""

    noise: Any  # torch.Generator on the training device
    batches: np.random.Generator
    insecure_seed: int | None = None

    @classmethod
    def create(cls, *, insecure_seed: int | None = None, device: str = "cpu") -> SecretStreams:
        import torch

        if insecure_seed is None:
            noise_seed, batch_seed = secrets.randbits(NOISE_BITS), secrets.randbits(BATCH_BITS)
        else:  # two independent-looking streams from one public number (tests only)
            words = np.random.SeedSequence(insecure_seed).generate_state(3, dtype=np.uint64)
            noise_seed, batch_seed = int(words[0]), int(words[1]) << 64 | int(words[2])
        noise = torch.Generator(device=device)
        noise.manual_seed(noise_seed)
        return cls(noise, np.random.default_rng(batch_seed), insecure_seed)

    @property
    def secret(self) -> bool:
        return self.insecure_seed is None

    def state_dict(self) -> dict[str, Any]:
        return {"noise": self.noise.get_state(), "batches": self.batches.bit_generator.state}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.noise.set_state(state["noise"])
        self.batches.bit_generator.state = state["batches"]

    def describe(self, secure_noise: bool, work: str = ".train-generator-work/") -> str:
        """One paragraph for the privacy statement: where the noise and batches came from (``work``: the
        command's hidden work folder, where the streams' state lived)."""
        if not self.secret:
            return (
                f"**Not secret.** The noise and the batches were drawn from generators seeded with the "
                f"public number {self.insecure_seed} (`--insecure_noise_seed`, a test option): anyone who "
                "knows it can remove the noise, so this run has **no DP guarantee**."
            )
        noise = (
            "Opacus's floating-point-safe sampler (secure mode: each noise value is a sum of four "
            "Gaussian draws, Holohan and Braghin 2021)"
            if secure_noise
            else "one Gaussian draw per value"
        )
        return (
            f"The Gaussian noise comes from a torch generator seeded with {NOISE_BITS} bits, and the "
            f"Poisson batches from a numpy PCG64 generator seeded with {BATCH_BITS} bits, both read from "
            f"the operating system's entropy (`secrets`); noise sampling: {noise}. Neither depends on "
            f"`--seed`. Their state was kept only in the checkpoints inside the hidden work folder "
            f"`{work}` beside these files, which was deleted when the run was "
            "published. These generators are statistically strong but not cryptographic "
            "(torchcsprng, which Opacus needs for that, does not exist for current torch)."
        )
