"""Comparing runs: pairing cases, paired statistics per metric, run stores."""
