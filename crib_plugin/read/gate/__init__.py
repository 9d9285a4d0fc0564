"""The gate: which recalled memories are relevant enough to show (relevance, evidence,
specific terms, the judge, task-or-question)."""
