"""Contact-hypothesis probing (Raj et al. 2024; Ikae et al. 2025 for German and Icelandic)."""
