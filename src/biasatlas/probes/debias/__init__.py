"""Social Contact Debiasing (Raj et al. 2024): splits, training data, LoRA tuning, before/after evaluation."""
