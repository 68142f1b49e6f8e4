"""Arguments of the tiny train-generator runs the DP tests share (a module, not conftest: conftest
names clash across test folders)."""

# A DP run of seconds: 4 steps of expected batch 8 (Poisson: exact accounting in seconds), LoRA rank 4.
DP_ARGS = [
    "--lora_r", "4", "--steps", "4", "--max_length", "48", "--eval_steps", "2", "--save_steps", "2",
    "--learning_rate", "1e-3", "--seed", "0", "--epsilon", "10", "--sampling", "poisson",
    "--expected_batch_size", "8", "--micro_batch_size", "4", "--logging_steps", "1",
]  # fmt: skip
NONPRIVATE_ARGS = [
    "--lora_r", "4", "--steps", "4", "--max_length", "48", "--eval_steps", "2", "--save_steps", "2",
    "--learning_rate", "1e-3", "--seed", "0", "--per_device_train_batch_size", "4", "--samples_per_step", "4",
    "--disable_tqdm", "true",
]  # fmt: skip
