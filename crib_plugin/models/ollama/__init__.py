"""The Ollama-backed models: :mod:`.client` (defaults, ``_OllamaBase``: lazy client, error mapping),
:mod:`.embedder`, :mod:`.extractor`, :mod:`.reranker`.

Their public names are re-exported by :mod:`crib_plugin.models.ollama_models`, the backend's import
path; the host, timeout and probe (standard library only) stay in :mod:`..ollama_host` and
:mod:`..ollama_probe` so the prompt path can ask about Ollama without importing the client.
"""
