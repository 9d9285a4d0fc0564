"""``crib init / doctor / scrub``: set up, check, filter a stream (``crib mcp`` is :mod:`.serve`)."""

from __future__ import annotations

import codecs
import json
import sys

import click

from ...core.config import load_settings
from ...models.weights import ensure_minilm
from ...plugins.manager import get_plugin_manager
from ...plugins.session import ResponseStream
from ..bytecode import compile_package
from ..doctor import run_doctor
from ..progress import fetch_model
from .common import open_memory


@click.command()
@click.option("--no-model", is_flag=True, help="Do not fetch the offline model weights.")
def init(no_model: bool) -> None:
    """Create the database, fetch the offline model's weights and compile crib's bytecode now,
    rather than on the first prompt."""
    settings = load_settings()
    if not compile_package():  # the per-prompt commands start cold: no compiling on every prompt
        click.echo("crib: warning: could not write crib's bytecode; each prompt will compile it", err=True)
    with open_memory() as memory:
        version = memory.store.schema_version()
        name = memory.embedder_name()
        if not no_model and name == "minilm":
            fetch_model(memory)  # with a progress bar when it has to be downloaded
            path = ensure_minilm(retry=True)  # init retries a fetch that failed recently
            click.echo(f"offline model ready: {path}")
    click.echo(f"crib database ready: {settings.db} (schema {version}, embedder {name})")


@click.command()
@click.option("--models", "models", is_flag=True,
              help="Also ask the configured judge and reranker a short built-in check and say whether each is good enough (takes a minute or more on a CPU).")
def doctor(models: bool) -> None:
    """Check every prerequisite and print JSON; exit 1 when something required is missing."""
    report = run_doctor()
    if models:
        from ..model_check import check_models  # deferred: imports the ollama client (≈ 0.5 s), only for --models

        quality = check_models(load_settings())
        report["model_quality"] = {"checks": quality, "ok": all(c["ok"] for c in quality)}
        report["ok"] = bool(report.get("ok")) and report["model_quality"]["ok"]
    click.echo(json.dumps(report, indent=2, default=str))
    sys.exit(0 if report.get("ok") else 1)


@click.command()
def scrub() -> None:
    """Filter stdin to stdout, removing memory blocks, flushing as it goes."""
    hook = get_plugin_manager().hook.on_response  # crib's scrubber wraps every implementation
    stream = ResponseStream(id="crib-scrub")
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    source = getattr(sys.stdin, "buffer", None)
    if source is None:
        return
    read = getattr(source, "read1", source.read)  # read1: whatever has arrived, so output streams
    out = sys.stdout
    while True:
        data = read(65536)
        stream.final = not data
        text = hook(chunk=decoder.decode(data, final=not data), stream=stream)
        if text:
            out.write(text)
            out.flush()
        if not data:
            break
