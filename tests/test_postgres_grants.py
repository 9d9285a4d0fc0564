"""The roles and privileges docs/postgres.md gives a team, run verbatim on a real server: the
owner's ``crib init`` creates the store, a writer makes the first write to it (which creates the
embedder's vector table, a foreign key to ``entries``: the writer needs REFERENCES, which the
documented grants lacked), and a reader reads it and cannot write."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent


def documented_sql() -> list[str]:
    """The statements of the SQL block under "Roles and privileges" in docs/postgres.md."""
    text = (ROOT / "docs" / "postgres.md").read_text(encoding="utf-8")
    section = text.split("## Roles and privileges", 1)[1]
    block = re.search(r"```sql\n(.*?)```", section, re.S)
    assert block, "docs/postgres.md: no SQL block under Roles and privileges"
    lines = [line.split("--", 1)[0] for line in block.group(1).splitlines()]
    return [s.strip() for s in " ".join(lines).split(";") if s.strip()]


def as_role(url: str, role: str, database: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, f"{role}@{parts.netloc.rsplit('@', 1)[-1]}", f"/{database}", parts.query, ""))


def test_the_documented_roles_let_a_writer_make_the_first_write(pg_server: str, crib: Any, fake_embedder: type) -> None:
    import psycopg

    if "@" not in urlsplit(pg_server).netloc:
        pytest.skip("the server URL names no role to swap")
    statements = documented_sql()
    with psycopg.connect(pg_server, autocommit=True) as conn:
        for role in ("crib_reader", "crib_writer", "crib_owner"):  # a rerun in the same server
            conn.execute("DROP DATABASE IF EXISTS crib WITH (FORCE)")
            conn.execute(f"DROP ROLE IF EXISTS {role}")
        for statement in statements:
            if statement.startswith(("CREATE ROLE", "CREATE DATABASE")):
                conn.execute(statement.replace("'…'", "'crib-test'"))
    with psycopg.connect(as_role(pg_server, "postgres", "crib"), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        for statement in statements:
            if not statement.startswith(("CREATE ROLE", "CREATE DATABASE")):
                conn.execute(statement)
    owner, writer, reader = (as_role(pg_server, role, "crib") for role in ("crib_owner", "crib_writer", "crib_reader"))
    env = {"CRIB_EMBEDDER": "fake"}
    assert crib("init", "--no-model", env={**env, "CRIB_DB": owner}).returncode == 0
    first = crib("write", "type=decision Chose PostgreSQL for the team store.", env={**env, "CRIB_DB": writer})
    assert first.returncode == 0, first.stderr
    found = crib("search", "PostgreSQL team store", "--json", env={**env, "CRIB_DB": reader})
    assert found.returncode == 0 and "Chose PostgreSQL" in found.stdout, found.stdout + found.stderr
    refused = crib("write", "a reader's note", env={**env, "CRIB_DB": reader})
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS crib WITH (FORCE)")
