"""Models crib uses: embedders, fact extractors and rerankers, offline and through Ollama."""
