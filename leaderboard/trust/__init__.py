"""Why each number on the board can be trusted: rule checks over every run (`checks/`), code
similarity between runs (`similarity/`), experiments' disclosures and competitions' versions, and
reproductions of job experiments. What they find is kept as `Finding` rows (models.py)."""
