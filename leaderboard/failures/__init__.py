"""Why runs fail: each failed run's signature (signatures.py), and the counts per signature that an
experiment page and a competition page show (breakdown.py)."""
