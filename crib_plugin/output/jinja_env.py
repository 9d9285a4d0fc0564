"""The Jinja environment that renders crib's blocks: the user's template directory first, then crib's own.

A module of its own because of Jinja: :mod:`.render` (its constants and views) is loaded by every
process that opens a ``Memory``, while only a process that renders a block needs Jinja, so
:func:`~crib_plugin.output.render.render_block` imports this module when it first renders. The search
path (``CRIB_TEMPLATES``, then crib's own ``output/templates/``) is :func:`crib_plugin.output.render.template_dirs`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from ..core.config import cache_dir
from ..core.timeutil import day

_envs: dict[tuple[str, ...], Any] = {}
OWN_TEMPLATES = Path(__file__).resolve().parent / "templates"


def environment(dirs: Sequence[Path]) -> Any:
    """The Jinja environment for a template search path (cached per path): sandboxed unless the
    path is crib's own templates alone."""
    key = tuple(str(d) for d in dirs)
    if key not in _envs:
        sandboxed = any(Path(d).resolve() != OWN_TEMPLATES for d in dirs)
        kind = ImmutableSandboxedEnvironment if sandboxed else jinja2.Environment
        env = kind(
            loader=jinja2.ChoiceLoader([jinja2.FileSystemLoader(str(d)) for d in dirs]),
            bytecode_cache=_bytecode_cache(sandboxed),
            autoescape=False,
            keep_trailing_newline=False,
            trim_blocks=True,
            lstrip_blocks=True,
            undefined=jinja2.StrictUndefined,
        )
        env.filters["day"] = day
        _envs[key] = env
    return _envs[key]


def _bytecode_cache(sandboxed: bool) -> Any:
    """Jinja's compiled templates, kept in ``<cache_dir>/templates`` so a cold process loads them
    instead of parsing and compiling every template (~10 ms). Jinja checks each entry against
    the template's source, so an edited template is recompiled. A cache that cannot be read or
    written is skipped silently: rendering never depends on it. A sandboxed environment's entries
    are named apart (the sandbox compiles some operations differently), so it never loads code an
    unsandboxed one compiled."""
    class QuietCache(jinja2.FileSystemBytecodeCache):
        def get_cache_key(self, name: str, filename: str | None = None) -> str:
            return super().get_cache_key(("sandboxed:" if sandboxed else "") + name, filename)

        def load_bytecode(self, bucket: Any) -> None:
            try:
                super().load_bytecode(bucket)
            except Exception:
                bucket.reset()

        def dump_bytecode(self, bucket: Any) -> None:
            try:
                os.makedirs(self.directory, exist_ok=True)
                super().dump_bytecode(bucket)
            except Exception:
                pass

    return QuietCache(str(cache_dir() / "templates"))


def load_template(template: str, dirs: Sequence[Path]) -> Any:
    """The compiled template found first along ``dirs`` (cached by Jinja)."""
    return environment(dirs).get_template(template)
