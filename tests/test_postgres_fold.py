"""The PostgreSQL word index folds the letters SQLite's FTS5 folds (no server needed).

``postgres_schema.latin_fold_table`` is what ``crib_fold`` translates; FTS5's ``unicode61
remove_diacritics 2`` tokenizer (through apsw) is the reference. The stores' own behaviour ("cafe"
finds "café" on both backends) is in the contract suite (``tests/store_contract.py``).
"""

from __future__ import annotations

import apsw

from crib_plugin.store.postgres_schema import MIGRATIONS, latin_fold_table


def fts5_fold(char: str) -> str:
    tokenize = apsw.Connection(":memory:").fts5_tokenizer("unicode61", ["remove_diacritics", "2"])
    tokens = tokenize(char.encode(), apsw.FTS5_TOKENIZE_DOCUMENT, None)
    return tokens[0][2] if tokens else ""


def test_fold_table_agrees_with_fts5() -> None:
    source, target = latin_fold_table()
    assert len(source) == len(target) > 400  # translate() maps one letter to one letter
    assert {"é": "e", "Ü": "U", "ç": "c", "ñ": "n", "ṣ": "s"}.items() <= dict(zip(source, target)).items()
    disagreeing = [a for a, b in zip(source, target) if fts5_fold(a) != b.lower()]
    assert disagreeing == [], disagreeing


def test_fold_migration_is_quoted_safely() -> None:
    """The table goes into the migration as dollar-quoted text: no letter may end the quote."""
    fold = next(m.sql for m in MIGRATIONS if "translate(" in m.sql)
    assert fold.count("$fold$") == 4 and "'" not in "".join(latin_fold_table())


def test_upgrade_folds_rows_stored_before(pg_server: str) -> None:  # noqa: F811
    """A store made before migration 3 holds unfolded rows: the upgrade rebuilds the word index.
    The template database is at the latest version: migrations 6 to 3 are taken back out."""
    from pg import drop_database, new_database

    from crib_plugin.store import postgres, postgres_schema
    from crib_plugin.store.postgres import open_postgres

    url = new_database(pg_server)
    try:
        with open_postgres(url) as store:  # the template is migrated: go back to version 2's index
            with store.transaction():
                entry = store.insert_entry("note", "Lunch at the café.", "2026-01-01T00:00:00Z", {})
            store.execute("DROP TABLE entry_count; DROP FUNCTION crib_count_entries() CASCADE")  # before migration 6
            store.execute("ALTER TABLE entries DROP COLUMN fts")
            store.execute("CREATE TEXT SEARCH DICTIONARY crib_stem (TEMPLATE = snowball, Language = english); "  # and 5
                          "ALTER TEXT SEARCH CONFIGURATION crib_english ALTER MAPPING FOR asciiword, asciihword, "
                          "hword_asciipart, word, hword, hword_part WITH crib_stem; DROP TEXT SEARCH DICTIONARY crib_porter")
            store.execute("CREATE OR REPLACE FUNCTION crib_fold(t text) RETURNS text LANGUAGE sql IMMUTABLE "
                          "RETURN regexp_replace(t, '[^[:alnum:][:space:]]+', ' ', 'g')")
            store.execute(f"ALTER TABLE entries ADD COLUMN {postgres_schema.FTS_COLUMN}")
            store.execute("ALTER TABLE entries DROP COLUMN project")  # and before migration 4
            store.execute("UPDATE crib_schema SET version = 2")
            assert store.fts_search("cafe", 10) == []
        with open_postgres(url) as store:
            assert store.schema_version() == postgres.latest_pg_version() >= 3
            assert [i for i, _ in store.fts_search("cafe", 10)] == [entry]
            assert store.term_document_frequency("lunch") == store.count_entries() == 1
    finally:
        drop_database(pg_server, url)
