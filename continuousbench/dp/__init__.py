"""DP generators: privacy accounting, DP-SGD training (Opacus), synthetic sampling, privacy statement."""
