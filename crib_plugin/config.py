"""Every setting crib reads, declared once: name, type, default, documentation.

A setting is one line in :class:`Settings` (``field = setting("CRIB_NAME", parser, default, "doc")``).
Its value comes from, in order of precedence:

1. the environment variable (``CRIB_DB=...``; an empty value counts as unset, except where a
   setting says an empty value means something, as ``CRIB_LOAD_PLUGINS``);
2. the project file ``.crib.toml`` in the current directory (the folder the default database
   ``.state/crib/crib.db`` is relative to; the Claude Code hooks use the project directory);
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
"""

from __future__ import annotations

import dataclasses
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from .errors import ConfigError

DEFAULT_DB = Path(".state") / "crib" / "crib.db"
DEFAULT_BUDGET = 8000
PROJECT_FILE = ".crib.toml"
USER_FILE = "config.toml"

# Accepted spellings for CRIB_CHANNEL, mapped to the channel names crib registers.
CHANNEL_ALIASES = {
    "triples": "facts",
    "triple": "facts",
    "facts": "facts",
    "fact": "facts",
    "fts": "fts",
    "fulltext": "fts",
    "text": "fts",
    "vector": "vector",
    "vectors": "vector",
    "vec": "vector",
}

#: The one spelling of true and false every boolean setting accepts.
TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")

# Accepted spellings for CRIB_PARALLEL.
PARALLEL_MODES = {"auto": "auto", **{w: "on" for w in TRUE_WORDS}, **{w: "off" for w in FALSE_WORDS}}
LOG_PROMPT_MODES = {"full": "full", "hash": "hash", "sha256": "hash", "hashed": "hash",
                    "none": "none", "off": "none", "no": "none"}


# -- parsers: str -> value, ValueError(accepted values) when malformed ----------------------------


class Invalid(ValueError):
    """A malformed value; the message says what is accepted."""


def text(raw: str) -> str:
    return raw


def lower(raw: str) -> str:
    return raw.lower()


def path(raw: str) -> Path:
    return Path(raw).expanduser()


def boolean(raw: str) -> bool:
    """The one boolean parser: 1/true/yes/on and 0/false/no/off, any case."""
    word = raw.lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise Invalid(f"one of {', '.join(TRUE_WORDS + FALSE_WORDS)}")


def choice(mapping: Mapping[str, str]) -> Callable[[str], str]:
    """A parser accepting the keys of ``mapping`` (any case) and returning their values."""

    def parse(raw: str) -> str:
        try:
            return mapping[raw.lower()]
        except KeyError:
            raise Invalid(f"one of {', '.join(mapping)}") from None

    return parse


def number(kind: type, minimum: float | None = None, *, strict: bool = False) -> Callable[[str], Any]:
    """A parser for ``int``/``float`` values at least ``minimum`` (greater than it when ``strict``)."""
    what = "an integer" if kind is int else "a number"
    bound = "" if minimum is None else f" {'>' if strict else '>='} {minimum:g}"

    def parse(raw: str) -> Any:
        try:
            value = kind(raw)
        except ValueError:
            raise Invalid(f"{what}{bound}") from None
        if value != value or value in (float("inf"), float("-inf")):
            raise Invalid(f"a finite {what[2:]}{bound}")
        if minimum is not None and (value < minimum or (strict and value == minimum)):
            raise Invalid(f"{what}{bound}")
        return value

    return parse


def parse_channels(value: str | None) -> list[str] | None:
    """Turn ``CRIB_CHANNEL`` into channel names; ``None`` means "every registered channel"."""
    if not value:
        return None
    names: list[str] = []
    for part in value.replace(" ", ",").split(","):
        part = part.strip().lower()
        if part:
            names.append(CHANNEL_ALIASES.get(part, part))
    return names or None


def iso_moment(raw: str) -> str:
    """An ISO 8601 date or time, kept as written (``CRIB_NOW``)."""
    from .errors import InputError
    from .timeutil import parse_iso

    try:
        parse_iso(raw)
    except InputError:
        raise Invalid("an ISO 8601 date or time") from None
    return raw


def names(raw: str) -> list[str]:
    """A comma list of names (empty: none)."""
    return [n.strip() for n in raw.split(",") if n.strip()]


# -- declarations -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Spec:
    """How one setting is read and documented."""

    var: str
    parse: Callable[[str], Any]
    doc: str
    shown_default: str  # the README's Default column
    empty_means: str | None = None  # raw value an empty variable stands for (None: empty = unset)

    @property
    def key(self) -> str:
        """The setting's key in a TOML file."""
        name = self.var.lower()
        return name[len("crib_"):] if name.startswith("crib_") else name


def setting(var: str, parse: Callable[[str], Any], default: Any, doc: str, *,
            shown: str | None = None, empty_means: str | None = None) -> Any:
    """Declare a :class:`Settings` field read from ``var`` (and the TOML key derived from it)."""
    if shown is None:
        shown = "—" if default is None else f"`{default}`"
    spec = Spec(var, parse, doc, shown, empty_means)
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata={"spec": spec})
    return field(default=default, metadata={"spec": spec})


@dataclass
class Settings:
    """Runtime settings for one process: one field per variable, built by :func:`load_settings`.

    Adding a setting is one line here; the README table, ``crib config`` and the TOML files
    follow from it (``tests/test_config.py`` checks the README agrees).
    """

    db: Path = setting("CRIB_DB", path, DEFAULT_DB, "the project store ([Scopes](#scopes)); when set, used exactly as given", shown="`.state/crib/crib.db` at the git repository's root (outside git: under the current directory)")
    embedder: str | None = setting("CRIB_EMBEDDER", lower, None, "embedder for a new store (`minilm`, `ollama`, `e5` with the multilingual extra — see Embedders — or a plugin's); an existing store keeps its own until `crib reindex --embedder`", shown="`minilm`")
    embedding_model: str = setting("CRIB_EMBEDDING_MODEL", text, "nomic-embed-text", "Ollama embedding model")
    extractor: str = setting("CRIB_EXTRACTOR", lower, "auto", "`rules`, `ollama`, or `auto` (Ollama when it answers with the model, else rules), or a plugin's")
    extraction_model: str = setting("CRIB_EXTRACTION_MODEL", text, "gemma3:1b", "Ollama extraction model (JSON schema in `format`, temperature 0, fixed seed)")
    rerank: str = setting("CRIB_RERANK", lower, "auto", "reranking when over budget: `auto` (Ollama when `CRIB_RERANK_MODEL` is set and answers, else offline MMR), `ollama`, `mmr`, `off`, or a plugin's")
    rerank_model: str | None = setting("CRIB_RERANK_MODEL", text, None, "Ollama rerank model; setting it makes `auto` use Ollama", shown="— (`gemma3:1b` when `ollama`)")
    rerank_deadline: float = setting("CRIB_RERANK_DEADLINE", number(float, 0, strict=True), 3.0, "seconds a model reranker may take in all before the fused order is kept")
    ollama_host: str | None = setting("OLLAMA_HOST", text, None, "Ollama server", shown="`http://127.0.0.1:11434`")
    ollama_timeout: float | None = setting("CRIB_OLLAMA_TIMEOUT", number(float, 0, strict=True), None, "per-request Ollama timeout in seconds", shown="2 s embed/rerank, 30 s extract")
    channels: list[str] | None = setting("CRIB_CHANNEL", parse_channels, None, "channels to run, a comma list: `triples`, `fts`, `vector` (or a plugin's)", shown="all")
    budget: int = setting("CRIB_BUDGET", number(int, 200), DEFAULT_BUDGET, "characters in the injected block")
    thread: str | None = setting("CRIB_THREAD", text, None, "thread for `crib write`")
    templates: Path | None = setting("CRIB_TEMPLATES", path, None, "directory whose templates override the packaged ones by file name")
    log_path: Path | None = setting("CRIB_LOG", path, None, "opt-in JSONL log of every retrieval; read it with `jq`")
    log_prompts: str = setting("CRIB_LOG_PROMPTS", choice(LOG_PROMPT_MODES), "full", "what the retrieval log keeps of a prompt: `full`, `hash` (SHA-256 only), `none`")
    error_log: Path | None = setting("CRIB_ERROR_LOG", path, None, "where fail-open failures of `retrieve` and the hooks are logged", shown="`crib.log` beside the database")
    model_dir: Path | None = setting("CRIB_MODEL_DIR", path, None, "where the offline model's weights are kept", shown="`~/.cache/crib/models`")
    cache_dir: Path | None = setting("CRIB_CACHE_DIR", path, None, "small derived files: the plugin entry-point list, compiled templates", shown="`~/.cache/crib`")
    plugin_cache: bool = setting("CRIB_PLUGIN_CACHE", boolean, True, "`0` scans installed plugins' entry points in every process instead of caching them", shown="`1`")
    load_plugins: list[str] | None = setting("CRIB_LOAD_PLUGINS", names, None, "comma list of plugins (entry-point or distribution names) to load; empty: none", shown="all installed", empty_means="")
    hook_timeout: float = setting("CRIB_HOOK_TIMEOUT", number(float, 0, strict=True), 2.0, "seconds a Claude Code hook may take before it gives up silently (at most 60)")
    session_ttl_days: float = setting("CRIB_SESSION_TTL_DAYS", number(float, 0), 7.0, "how long per-session \"already injected\" state is kept")
    vec_extension: str | None = setting("CRIB_VEC_EXTENSION", text, None, "path to another sqlite-vec build", shown="bundled")
    parallel: str = setting("CRIB_PARALLEL", choice(PARALLEL_MODES), "auto", "embed the prompt in a forked worker during a cold `crib retrieve` / prompt hook: `auto` (when `os.fork` exists and ≥ 2 CPUs are available), `1`, `0`")
    locomo: Path | None = setting("CRIB_LOCOMO", path, None, "`locomo10.json` for `crib eval` / `crib eval-noanswer`", shown="`../shared/eval/locomo/locomo10.json`")
    python: str | None = setting("CRIB_PYTHON", text, None, "interpreter the plugin's `bin/crib` launcher runs (`$CRIB_PYTHON -m crib_plugin`); read by the launcher only", shown="found by `bin/crib`")
    global_db: Path | None = setting("CRIB_GLOBAL_DB", path, None, "the global store, whose memories (preferences…) every project inherits; `crib write --global` writes there", shown="`crib.db` in `platformdirs.user_data_dir(\"crib\")`")
    progress: bool = setting("CRIB_PROGRESS", boolean, True, "`0` silences the progress bars/lines of import, reindex, calibrate and the model download", shown="`1`")
    busy_timeout: float = setting("CRIB_BUSY_TIMEOUT", number(float, 0, strict=True), 30.0, "seconds a write waits for another process's write lock (jittered backoff) before one clear error")
    embed_budget: float = setting("CRIB_EMBED_BUDGET", number(float, 0, strict=True), 10.0, "seconds a write waits for its embedding (per 32 texts) before keeping the entry and queueing the vector")
    extract_budget: float = setting("CRIB_EXTRACT_BUDGET", number(float, 0, strict=True), 5.0, "seconds a write waits for fact extraction before keeping the entry and queueing the extraction")
    redact: bool = setting("CRIB_REDACT", boolean, True, "`0` stores and shows text verbatim: no secret redaction on write or at render (see Secrets)", shown="`1`")
    now: str | None = setting("CRIB_NOW", iso_moment, None, "ISO 8601 time taken as \"now\" for time expressions and default write times (`--now` on `retrieve`, `search`, `eval`): reproducible time-relative evaluations and tests", shown="the clock")
    sources: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def for_eval(cls, db: Path) -> "Settings":
        """Defaults for a measurement store at ``db``, keeping only which extractor to use from the
        environment (as before: the evaluation's figures must not move with ``CRIB_CHANNEL`` etc.)."""
        current = get_settings()
        # CRIB_EMBEDDER too: the stores' cache paths are keyed by it (an e5 run built MiniLM stores)
        return cls(db=db, extractor=current.extractor, extraction_model=current.extraction_model, embedder=current.embedder)

    def source(self, name: str) -> str:
        """Where the field ``name`` came from: ``env``, ``project file``, ``user file`` or ``default``."""
        return self.sources.get(name, "default")


def specs() -> Iterator[tuple[str, Spec]]:
    """(field name, spec) for every declared setting, in declaration order."""
    for f in dataclasses.fields(Settings):
        if "spec" in f.metadata:
            yield f.name, f.metadata["spec"]


# -- files --------------------------------------------------------------------------------------


def user_config_file() -> Path:
    """``platformdirs.user_config_dir("crib")/config.toml`` (``~/.config/crib/config.toml`` on Linux).

    On Linux the XDG rule platformdirs applies is spelled out here, so the per-prompt path does not
    import it (~3 ms); ``tests/test_config.py`` checks the two agree.
    """
    import sys

    if sys.platform.startswith("linux"):
        xdg = (os.environ.get("XDG_CONFIG_HOME") or "").strip()
        return (Path(xdg).expanduser() if xdg else Path.home() / ".config") / "crib" / USER_FILE
    import platformdirs

    return Path(platformdirs.user_config_dir("crib")) / USER_FILE


def project_config_file(project_dir: Path | str | None = None) -> Path:
    """``.crib.toml`` in ``project_dir`` (default: the current directory)."""
    return Path(project_dir or ".") / PROJECT_FILE


_parsed: dict[str, tuple[int, dict[str, Any]]] = {}


def _read_toml(file: Path) -> dict[str, Any]:
    """The table in ``file`` ({} when it does not exist), parsed once per modification time."""
    try:
        mtime = file.stat().st_mtime_ns
    except OSError:
        return {}
    cached = _parsed.get(str(file))
    if cached is not None and cached[0] == mtime:
        return cached[1]
    try:
        import tomllib  # type: ignore[import-not-found,unused-ignore]
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[import-not-found,no-redef,unused-ignore]
    try:
        with file.open("rb") as fh:
            data = tomllib.load(fh)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{file}: not a valid TOML file: {exc}") from exc
    known = {spec.key for _, spec in specs()}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"{file}: unknown setting {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    _parsed[str(file)] = (mtime, data)
    return data


def _toml_raw(value: Any, spec: Spec, file: Path) -> str:
    """A TOML value as the string its environment variable would hold."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, float, str)):
        raw = str(value).strip()
        if spec.parse is path and raw and not Path(raw).expanduser().is_absolute():
            raw = str(file.parent.absolute() / raw)
        return raw
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ",".join(value)
    raise ConfigError(f"{file}: {spec.key} must be a string, number, boolean or list of strings")


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
    files = [("project file", project_config_file(project_dir)), ("user file", user_config_file())]
    tables = [(label, file, _read_toml(file)) for label, file in files]
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for name, spec in specs():
        raw, where = _env_raw(spec, env), "env"
        if raw is None:
            for label, file, table in tables:
                if spec.key in table:
                    raw, where = _toml_raw(table[spec.key], spec, file), f"{label} {file}"
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
        from .scopes import repo_store

        values["db"] = repo_store()
    return Settings(**values, sources=sources)


_memo: tuple[tuple[Any, ...], Settings] | None = None


def get_settings() -> Settings:
    """The process's settings, from ``os.environ``: parsed again only when a variable changed."""
    global _memo
    key = (os.getcwd(), *(os.environ.get(spec.var) for _, spec in specs()), os.environ.get("XDG_CONFIG_HOME"))
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
    """The README's Configuration table, generated from the declarations above."""
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
