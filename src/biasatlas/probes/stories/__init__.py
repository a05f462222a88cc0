"""Open-ended story association mining (StereoTales)."""
