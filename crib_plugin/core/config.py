"""Every setting crib reads, declared once: name, type, default, documentation.

A setting is one line in :class:`Settings` (``field = setting("CRIB_NAME", parser, default, "doc")``).
Its value comes from, in order of precedence:

1. the environment variable (``CRIB_DB=...``; an empty value counts as unset, except where a
   setting says an empty value means something, as ``CRIB_LOAD_PLUGINS``);
2. the project file ``.crib.toml`` in the current directory (the folder the default database
   ``.state/crib/crib.db`` is relative to; the Claude Code hooks use the project directory) —
   without the keys a repository may not set unless the user trusted it (:mod:`.trust`);
3. the user file ``config.toml`` in ``platformdirs.user_config_dir("crib")``
   (``~/.config/crib/config.toml`` on Linux);
4. the default declared here.

In a TOML file a setting's key is its variable name in lower case without the ``crib_`` prefix
(``CRIB_BUDGET`` → ``budget``, ``OLLAMA_HOST`` → ``ollama_host``); a relative path there is relative
to the file's folder. Every value is checked by one parser per type: a malformed value raises
:class:`ConfigError` naming the variable (and the file it came from) and what it accepts.

Reading is cheap (a few dozen dictionary lookups and two ``stat`` calls); a file is parsed only
when it exists, once per modification time. :func:`get_settings` memoises on the environment, so the
per-prompt path parses nothing twice. Nothing here imports more than the standard library, except
``platformdirs`` (a small pure-Python module) to locate the user file.

The parsers and the :func:`setting` helper live in :mod:`crib_plugin.core.config_values`, the files and
their TOML reading in :mod:`crib_plugin.core.config_files`; every name stays importable from here.
"""

from __future__ import annotations

import dataclasses
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

from .config_files import (  # noqa: F401  (re-exported: crib_plugin.core.config is the public path)
    PROJECT_FILE,
    USER_FILE,
    project_config_file,
    read_toml,
    toml_raw,
    user_config_file,
)
from .config_values import (  # noqa: F401  (re-exported: crib_plugin.core.config is the public path)
    CHANNEL_ALIASES,
    DEFAULT_BUDGET,
    DEFAULT_DB,
    FALSE_WORDS,
    LOG_PROMPT_MODES,
    PARALLEL_MODES,
    TRUE_WORDS,
    WRITE_MODEL_MODES,
    WRITE_VECTOR_MODES,
    Invalid,
    Spec,
    boolean,
    choice,
    iso_moment,
    lower,
    names,
    number,
    parse_channels,
    path,
    setting,
    text,
)
from .errors import ConfigError
from .repo import repo_store
from .trust import TRUST_KEY, screen

# -- declarations -------------------------------------------------------------------------------


@dataclass
class Settings:
    """Runtime settings for one process: one field per variable, built by :func:`load_settings`.

    Adding a setting is one line here; the settings table of docs/configuration.md, ``crib config``
    and the TOML files follow from it (``tests/test_config.py`` checks the table agrees).
    """

    db: Path = setting("CRIB_DB", path, DEFAULT_DB, "the project store ([Scopes](scopes.md)); when set, used exactly as given", shown="`.state/crib/crib.db` at the git repository's root (outside git: under the current directory)")
    embedder: str | None = setting("CRIB_EMBEDDER", lower, None, "embedder for a new store (`minilm`, `ollama`, `e5` with the multilingual extra — see Embedders — or a plugin's); an existing store keeps its own until `crib reindex --embedder`", shown="`minilm`")
    embedding_model: str = setting("CRIB_EMBEDDING_MODEL", text, "nomic-embed-text", "Ollama embedding model")
    extractor: str = setting("CRIB_EXTRACTOR", lower, "auto", "`rules`, `ollama`, or `auto` (Ollama when it answers with the model, else rules), or a plugin's")
    extraction_model: str = setting("CRIB_EXTRACTION_MODEL", text, "gemma3:1b", "Ollama extraction model (JSON schema in `format`, temperature 0, fixed seed)")
    rerank: str = setting("CRIB_RERANK", lower, "auto", "reranking when over budget: `auto` (Ollama when `CRIB_RERANK_MODEL` is set and answers, else offline MMR), `ollama`, `mmr`, `off`, or a plugin's")
    rerank_model: str | None = setting("CRIB_RERANK_MODEL", text, None, "Ollama rerank model; setting it makes `auto` use Ollama", shown="— (`gemma3:1b` when `ollama`)")
    rerank_deadline: float = setting("CRIB_RERANK_DEADLINE", number(float, 0, strict=True), 3.0, "seconds a model reranker may take in all before the fused order is kept")
    cue_model: str | None = setting("CRIB_CUE_MODEL", text, None, "Ollama model that writes the [recall cue](retrieval.md#recall-cues) of a memory stored without one (off when unset)", shown="— (off)")
    judge: str = setting("CRIB_JUDGE", lower, "auto", "which judge picks the block from the best candidates ([judge](models.md#a-judge-model)): `auto` (the Ollama judge when `CRIB_JUDGE_MODEL` is set, else none), `off`, `ollama` or a plugin judge's name")
    judge_model: str | None = setting("CRIB_JUDGE_MODEL", text, None, "Ollama model of the `ollama` judge; setting it makes `auto` use it", shown="— (off)")
    judge_deadline: float = setting("CRIB_JUDGE_DEADLINE", number(float, 0, strict=True), 1.5, "seconds the judge model may take before the offline block is kept")
    deep_model: str | None = setting("CRIB_DEEP_MODEL", text, None, "Ollama model that runs [deep recall](deep-recall.md) (`crib recall --deep`): expands the question, reads the gated memories, synthesises a cited answer; unset: `CRIB_JUDGE_MODEL`, else no model (ranked evidence only)", shown="`CRIB_JUDGE_MODEL`")
    deep_calls: int = setting("CRIB_DEEP_CALLS", number(int, 1), 16, "model calls one deep recall may make in all (expansion, readers, syntheses)")
    deep_tokens: int = setting("CRIB_DEEP_TOKENS", number(int, 100), 24_000, "model tokens (prompt and reply) one deep recall may spend")
    deep_seconds: float = setting("CRIB_DEEP_SECONDS", number(float, 0, strict=True), 120.0, "seconds one deep recall may take before it stops and reports what it has")
    deep_wave: int = setting("CRIB_DEEP_WAVE", number(int, 1), 5, "gated memories read per wave of deep recall (the best first; another wave only while gaps remain)")
    deep_manifest: int = setting("CRIB_DEEP_MANIFEST", number(int, 512), 4096, "bytes of the deep-recall manifest (ids, dates, types, snippets) at most")
    ollama_host: str | None = setting("OLLAMA_HOST", text, None, "Ollama server", shown="`http://127.0.0.1:11434`")
    ollama_timeout: float | None = setting("CRIB_OLLAMA_TIMEOUT", number(float, 0, strict=True), None, "per-request Ollama timeout in seconds", shown="2 s embed/rerank, 30 s extract, `CRIB_JUDGE_DEADLINE` judge")
    ollama_keep_alive: str = setting("CRIB_OLLAMA_KEEP_ALIVE", text, "30m", "how long Ollama keeps a model loaded after crib's last request (sent with every request as `keep_alive`; Ollama's own default is 5 minutes, and a model unloaded between prompts costs its load time on the next one)")
    channels: list[str] | None = setting("CRIB_CHANNEL", parse_channels, None, "channels to run, a comma list: `triples`, `fts`, `vector` (or a plugin's)", shown="all")
    budget: int = setting("CRIB_BUDGET", number(int, 200), DEFAULT_BUDGET, "characters in the injected block")
    thread: str | None = setting("CRIB_THREAD", text, None, "thread for `crib write`")
    projects: str = setting("CRIB_PROJECTS", text, "all", "on a store several projects share (a team's server): `this` reads only memories written from the current repository, a name reads that project's, `all` every project's (retrieve, search, list, log; see docs/postgres.md)", shown="`all`")
    templates: Path | None = setting("CRIB_TEMPLATES", path, None, "directory whose templates override the packaged ones by file name")
    log_path: Path | None = setting("CRIB_LOG", path, None, "opt-in JSONL log of every retrieval; read it with `jq`")
    log_prompts: str = setting("CRIB_LOG_PROMPTS", choice(LOG_PROMPT_MODES), "full", "what the retrieval log keeps of a prompt: `full`, `hash` (SHA-256 only), `none`")
    error_log: Path | None = setting("CRIB_ERROR_LOG", path, None, "where fail-open failures of `retrieve` and the hooks are logged", shown="`crib.log` beside the database")
    model_dir: Path | None = setting("CRIB_MODEL_DIR", path, None, "where the offline model's weights are kept", shown="`~/.cache/crib/models`")
    cache_dir: Path | None = setting("CRIB_CACHE_DIR", path, None, "small derived files: the plugin entry-point list, compiled templates", shown="`~/.cache/crib`")
    plugin_cache: bool = setting("CRIB_PLUGIN_CACHE", boolean, True, "`0` scans installed plugins' entry points in every process instead of caching them", shown="`1`")
    trace_plugins: bool = setting("CRIB_TRACE_PLUGINS", boolean, False, "`1` prints every plugin hook call, the plugins it ran and every plugin error crib's fail-open paths swallow, to stderr", shown="`0`")
    load_plugins: list[str] | None = setting("CRIB_LOAD_PLUGINS", names, None, "comma list of plugins (entry-point or distribution names) to load; empty: none", shown="all installed", empty_means="")
    hook_timeout: float = setting("CRIB_HOOK_TIMEOUT", number(float, 0, strict=True), 2.0, "seconds a Claude Code hook may take before it gives up silently (at most 60)")
    session_ttl_days: float = setting("CRIB_SESSION_TTL_DAYS", number(float, 0), 7.0, "how long per-session \"already injected\" state is kept")
    vec_extension: str | None = setting("CRIB_VEC_EXTENSION", text, None, "path to another sqlite-vec build", shown="bundled")
    parallel: str = setting("CRIB_PARALLEL", choice(PARALLEL_MODES), "auto", "embed the prompt in a forked worker during a cold `crib retrieve` / prompt hook: `auto` (when `os.fork` exists and ≥ 2 CPUs are available), `1`, `0`")
    locomo: Path | None = setting("CRIB_LOCOMO", path, None, "`locomo10.json` for `crib eval` / `crib eval-noanswer`", shown="`../shared/eval/locomo/locomo10.json`")
    host: str = setting("CRIB_HOST", text, "", "the agent host whose hooks and MCP server run crib (`claude`, `codex`, `gemini`, `opencode`): `crib setup` sets it in each host's MCP entry, and every audit row records it; else the variables each host sets tell", shown="from the host's own variables")
    codex_bin: str = setting("CRIB_CODEX_BIN", text, "", "the `codex` command `crib setup codex` runs (else the one on PATH)", shown="`codex` on PATH")
    python: str | None = setting("CRIB_PYTHON", text, None, "interpreter the plugin's `bin/crib` launcher runs (`$CRIB_PYTHON -m crib_plugin`); read by the launcher only", shown="found by `bin/crib`")
    global_db: Path | None = setting("CRIB_GLOBAL_DB", path, None, "the global store, whose memories (preferences…) every project inherits; `crib write --global` writes there", shown="`crib.db` in `platformdirs.user_data_dir(\"crib\")`")
    progress: bool = setting("CRIB_PROGRESS", boolean, True, "`0` silences the progress bars/lines of import, reindex, calibrate and the model download", shown="`1`")
    busy_timeout: float = setting("CRIB_BUSY_TIMEOUT", number(float, 0, strict=True), 30.0, "seconds a write waits for another process's write lock (jittered backoff) before one clear error")
    embed_budget: float = setting("CRIB_EMBED_BUDGET", number(float, 0, strict=True), 10.0, "seconds a write waits for its embedding (per 32 texts) before keeping the entry and queueing the vector")
    write_vectors: str = setting("CRIB_WRITE_VECTORS", choice(WRITE_VECTOR_MODES), "auto", "`background`: a single write (`crib write`, the MCP tool) stores the entry, its full text and facts without waiting for the model, and a detached `crib` process embeds it a moment later; `inline`: the write embeds it; `auto`: background for a process that has not loaded the model (a cold `crib write`) on a store of at least 50,000 entries (where the side vector index starts), inline otherwise")
    extract_budget: float = setting("CRIB_EXTRACT_BUDGET", number(float, 0, strict=True), 5.0, "seconds a write waits for fact extraction before keeping the entry and queueing the extraction")
    write_models: str = setting("CRIB_WRITE_MODELS", choice(WRITE_MODEL_MODES), "background", "`background`: a single write that would ask a model (Ollama fact extraction, `CRIB_CUE_MODEL`) stores the entry at once and the background worker writes its facts and cue a moment later (`crib doctor` counts the queue); `inline`: the write asks the models within `CRIB_EXTRACT_BUDGET`")
    redact: bool = setting("CRIB_REDACT", boolean, True, "`0` stores and shows text verbatim: no secret redaction on write or at render (see Secrets)", shown="`1`")
    now: str | None = setting("CRIB_NOW", iso_moment, None, "ISO 8601 time taken as \"now\" for time expressions and default write times (`--now` on `retrieve`, `search`, `eval`): reproducible time-relative evaluations and tests", shown="the clock")
    sources: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def for_eval(cls, db: Path) -> "Settings":
        """Defaults for a measurement store at ``db``, keeping only which extractor to use from the
        environment (as before: the evaluation's figures must not move with ``CRIB_CHANNEL`` etc.),
        and the judge, which is what ``crib eval --judge-model`` measures."""
        current = get_settings()
        # CRIB_EMBEDDER too: the stores' cache paths are keyed by it (an e5 run built MiniLM stores)
        return cls(db=db, extractor=current.extractor, extraction_model=current.extraction_model, embedder=current.embedder,
                   judge=current.judge, judge_model=current.judge_model, judge_deadline=current.judge_deadline)

    def source(self, name: str) -> str:
        """Where the field ``name`` came from: ``env``, ``project file``, ``user file`` or ``default``."""
        return self.sources.get(name, "default")


def specs() -> Iterator[tuple[str, Spec]]:
    """(field name, spec) for every declared setting, in declaration order."""
    for f in dataclasses.fields(Settings):
        if "spec" in f.metadata:
            yield f.name, f.metadata["spec"]


# -- loading ------------------------------------------------------------------------------------


def _env_raw(spec: Spec, env: Mapping[str, str]) -> str | None:
    value = env.get(spec.var)
    if value is None:
        return None
    value = value.strip()
    if value:
        return value
    return spec.empty_means


def load_settings(environ: Mapping[str, str] | None = None, *, project_dir: Path | str | None = None) -> Settings:
    """Read every setting once (environment over project file over user file over default).

    Raises :class:`ConfigError` on a malformed value, naming the variable and what it accepts.
    """
    env = os.environ if environ is None else environ
    known = {spec.key for _, spec in specs()}
    project, user = project_config_file(project_dir), user_config_file()
    user_table = read_toml(user, known | {TRUST_KEY})
    project_table = read_toml(project, known)
    if project_table:  # a repository's file: what it may not set untrusted is dropped (core/trust.py)
        project_table = screen(project, project_table, user_table)
    tables = [("project file", project, project_table), ("user file", user, user_table)]
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for name, spec in specs():
        raw, where = _env_raw(spec, env), "env"
        if raw is None:
            for label, file, table in tables:
                if spec.key in table:
                    raw, where = toml_raw(table[spec.key], spec, file), f"{label} {file}"
                    break
        if raw is None:
            continue
        try:
            values[name] = spec.parse(raw)
        except Invalid as exc:
            origin = "" if where == "env" else f" (in {where.split(' ', 2)[-1]})"
            raise ConfigError(f"{spec.var}{origin} must be {exc}, got {raw!r}") from None
        sources[name] = where
    if "db" not in values:  # no CRIB_DB anywhere: the project store at the repository root
        values["db"] = repo_store()
    return Settings(**values, sources=sources)


_memo: tuple[tuple[Any, ...], Settings] | None = None
_watched: tuple[str, ...] = ()
"""The variables :func:`get_settings` compares (every setting's, then ``XDG_CONFIG_HOME``), listed once."""
_encoded: tuple[Any, ...] = ()
"""...as ``os.environ`` keys them in its dict."""


def _environment_key() -> tuple[Any, ...]:
    """The current values of the watched variables. An import asks for the settings ≈ 4 times per
    entry, and ``os.environ.get`` of 47 mostly unset variables (a ``KeyError`` caught for each)
    cost ≈ 150 µs a call, a fifth of the import's CPU (``bench/scale.py --import-entries``,
    profiled); CPython's ``os.environ`` keeps them in a dict (``_data``, the one ``os.environ.get``
    reads), looked up here directly (≈ 3 µs)."""
    global _watched, _encoded
    if not _watched:
        _watched = (*(spec.var for _, spec in specs()), "XDG_CONFIG_HOME")
    environ = os.environ
    data, encode = getattr(environ, "_data", None), getattr(environ, "encodekey", None)
    if isinstance(data, dict) and encode is not None:
        if not _encoded:
            _encoded = tuple(map(encode, _watched))
        return tuple(map(data.get, _encoded))
    return tuple(map(environ.get, _watched))  # another mapping in os.environ's place


def get_settings() -> Settings:
    """The process's settings, from ``os.environ``: parsed again only when a variable changed."""
    global _memo
    key = (os.getcwd(), *_environment_key())
    if _memo is None or _memo[0] != key:
        _memo = (key, load_settings())
    return _memo[1]


def setting_value(name: str, default: Any = None) -> Any:
    """One field of :func:`get_settings`, or ``default`` when the settings do not parse (fail-open paths)."""
    try:
        return getattr(get_settings(), name)
    except ConfigError:
        return default


def db_path(environ: Mapping[str, str] | None = None) -> Path:
    """The project database: ``CRIB_DB``, else ``.state/crib/crib.db`` at the repository root (or
    under the current directory outside git) — :func:`crib_plugin.scopes.project_db`."""
    return load_settings(environ).db


def _field(name: str, environ: Mapping[str, str] | None, default: Any) -> Any:
    """One setting from ``environ`` (parsed) or the process's settings; ``default`` when the
    settings do not parse (every caller is on a fail-open or already-validated path)."""
    if environ is None:
        return setting_value(name, default)
    try:
        return getattr(load_settings(environ), name)
    except ConfigError:
        return default


def global_db_override(environ: Mapping[str, str] | None = None) -> Path | None:
    """``CRIB_GLOBAL_DB``: the global store's file, when set (:func:`crib_plugin.scopes.global_db`)."""
    return _field("global_db", environ, None)


def progress_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """``CRIB_PROGRESS`` (default on)."""
    return bool(_field("progress", environ, True))


def busy_timeout(environ: Mapping[str, str] | None = None) -> float:
    """``CRIB_BUSY_TIMEOUT``: seconds a writer waits for another's write lock."""
    return float(_field("busy_timeout", environ, 30.0))


def extract_budget(environ: Mapping[str, str] | None = None) -> float:
    """``CRIB_EXTRACT_BUDGET``: seconds a write waits for fact extraction before queueing it."""
    return float(_field("extract_budget", environ, 5.0))


def embed_budget(environ: Mapping[str, str] | None = None) -> float:
    """``CRIB_EMBED_BUDGET``: seconds a write waits for its embedding before queueing it."""
    return float(_field("embed_budget", environ, 10.0))


def write_vectors_mode(environ: Mapping[str, str] | None = None) -> str:
    """``CRIB_WRITE_VECTORS``: ``auto`` (the default), ``inline`` (a write embeds its entry) or ``background``."""
    return str(_field("write_vectors", environ, "auto"))


def redact_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """``CRIB_REDACT``: secrets are redacted unless it is off (a malformed value keeps it on)."""
    return bool(_field("redact", environ, True))


def fixed_now(environ: Mapping[str, str] | None = None) -> str | None:
    """``CRIB_NOW``: an ISO 8601 moment that stands in for "now", or ``None``. Raises
    :class:`ConfigError` when it is not an ISO date (so ``--now`` typos are not silently ignored)."""
    if environ is None:
        return get_settings().now
    return load_settings(environ).now


def user_cache_root() -> Path:
    """``$XDG_CACHE_HOME/crib``, else ``~/.cache/crib``: where crib keeps what it can rebuild."""
    xdg = (os.environ.get("XDG_CACHE_HOME") or "").strip()
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "crib"


def cache_dir() -> Path:
    """Small derived files — the plugin entry-point list, compiled templates: ``$CRIB_CACHE_DIR``,
    else :func:`user_cache_root`. (The model weights have their own ``$CRIB_MODEL_DIR``.)"""
    return setting_value("cache_dir") or user_cache_root()


# -- showing ------------------------------------------------------------------------------------


def _shown(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    return value


def describe(settings: Settings) -> list[dict[str, Any]]:
    """One row per setting: variable, TOML key, effective value and its source (``crib config``)."""
    rows = []
    for name, spec in specs():
        source = settings.source(name)
        rows.append({
            "variable": spec.var,
            "key": spec.key,
            "value": _shown(getattr(settings, name)),
            "source": source.split(" ", 2)[0] + (" file" if source.startswith(("project", "user")) else ""),
            "file": source.split(" ", 2)[2] if source.startswith(("project", "user")) else None,
        })
    return rows


def readme_table() -> str:
    """The settings table of docs/configuration.md (its links relative to docs/), generated from the declarations above."""
    lines = ["| Variable | TOML key | Default | Meaning |", "|---|---|---|---|"]
    for _, spec in specs():
        lines.append(f"| `{spec.var}` | `{spec.key}` | {spec.shown_default} | {spec.doc} |")
    return "\n".join(lines)


@contextmanager
def overriding(var: str, value: str | None) -> Iterator[None]:
    """The environment variable ``var`` set to ``value`` for the duration, then restored (``None``:
    left as it is). For measurements that pin a setting, such as ``CRIB_NOW`` in an evaluation."""
    if value is None:
        yield
        return
    previous = os.environ.get(var)
    os.environ[var] = value
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(var, None)
        else:
            os.environ[var] = previous
