"""Retrieval evaluation: LoCoMo recall by channel and fused, and the no-answer set.

Used by ``crib eval`` and the scripts in ``bench/``; nothing here runs on the per-prompt path.
"""
