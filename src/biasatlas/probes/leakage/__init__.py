"""Cross-language stereotype leakage (Cao et al. 2024)."""
