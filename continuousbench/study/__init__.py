"""``continuousbench study``: a study file expanded into a graph of our commands, run on local
processes, Slurm (submitit) or Ray, resumable, with a manifest and a GPU-hour plan (docs/study.md)."""
