"""CJK retrieval: short terms through the gram index (never a LIKE scan), bigram paraphrases,
Japanese and Korean, mixed-script prompts, no false positives, and the index's life cycle."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

import apsw
import pytest
from conftest import assert_fts_ran, copy_store

from crib_plugin.read.query import cjk_grams, glued_words, gram_expression
from crib_plugin.store import cjk
from crib_plugin.store.schema import MIGRATIONS
from crib_plugin.store.sqlite import open_store

MEMORIES = {
    "sqlite": "我们决定使用SQLite作为数据库，因为它不需要服务器。",
    "cache": "缓存用的是Redis，过期时间设为十分钟。",
    "react": "前端框架选择了React和TypeScript。",
    "deploy": "每周五下午部署到生产环境。",
    "ja_db": "データベースはPostgreSQLを使っています。",
    "ja_cache": "キャッシュの有効期限は五分です。",
    "ja_review": "コードレビューは二人以上の承認が必要です。",
    "ja_cat": "うちのねこのなまえはたまです。",
    "ko_db": "데이터베이스는 SQLite를 사용합니다.",
    "ko_deploy": "배포는 매주 금요일에 합니다.",
    "en_db": "We chose PostgreSQL for the analytics warehouse.",
    "en_cache": "The cache layer uses Memcached with a five minute TTL.",
}


_BUILT: list[tuple[Path, dict[str, int]]] = []  # the store of MEMORIES as this process first wrote it, and its ids


@pytest.fixture
def mem(db: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, dict[str, int]]]:
    """A store holding MEMORIES, each written through ``Memory.write``: by this process's first test
    that asks, then copied (twelve embeddings and writes per test were most of this module's time)."""
    from crib_plugin import Memory

    if not _BUILT:
        with Memory(db) as memory:
            ids = {key: memory.write(text) for key, text in MEMORIES.items()}
        kept = tmp_path_factory.mktemp("cjk-store") / db.name
        copy_store(db, kept)
        _BUILT.append((kept, ids))
    else:
        copy_store(_BUILT[0][0], db)
    with Memory(db) as memory:
        yield memory, dict(_BUILT[0][1])


@pytest.fixture
def no_like(mem: tuple[Any, dict[str, int]], monkeypatch: pytest.MonkeyPatch) -> tuple[Any, dict[str, int]]:
    """Fail the test if anything falls back to the unindexed LIKE scan."""
    memory, ids = mem

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("like_search (a full-table LIKE scan) was used")

    monkeypatch.setattr(memory.store, "like_search", forbidden)
    return memory, ids


def fts(memory: Any, prompt: str) -> list[int]:
    return [h.entry.id for h in memory.search(prompt, channels=["fts"])]


# -- short terms: indexed -------------------------------------------------------------------------

def test_two_character_term_is_found_through_the_gram_index(no_like: tuple[Any, dict[str, int]]) -> None:
    memory, ids = no_like
    assert fts(memory, "缓存")[0] == ids["cache"]
    assert fts(memory, "部署")[0] == ids["deploy"]


def test_one_character_term_is_found(no_like: tuple[Any, dict[str, int]]) -> None:
    memory, ids = no_like
    assert fts(memory, "周")[0] == ids["deploy"]


def test_short_term_query_never_scans_the_entries_table(mem: tuple[Any, dict[str, int]]) -> None:
    """SQLite's own plans for every statement a short-term search runs: FTS5 index lookups (MATCH)
    and primary-key reads, never ``SCAN entries`` (what ``LIKE '%缓存%'`` compiles to)."""
    memory, ids = mem
    conn = memory.store.conn
    statements: list[tuple[str, Any]] = []

    def trace(cursor: Any, sql: str, bindings: Any) -> bool:
        statements.append((sql, bindings))
        return True

    conn.exec_trace = trace
    try:
        found = fts(memory, "缓存")
    finally:
        conn.exec_trace = None
    assert found[0] == ids["cache"]
    plans = []
    for sql, bindings in statements:
        if sql.lstrip().upper().startswith("SELECT"):
            plans.extend(str(row[-1]) for row in conn.execute("EXPLAIN QUERY PLAN " + sql, bindings or ()))
    assert any(p.startswith("SCAN entries_cjk VIRTUAL TABLE INDEX") and ":M" in p for p in plans), plans
    assert not [p for p in plans if re.fullmatch(r"SCAN entries( .*)?", p)], plans
    like_plan = [str(r[-1]) for r in conn.execute("EXPLAIN QUERY PLAN SELECT id FROM entries WHERE content LIKE '%缓存%'")]
    assert like_plan == ["SCAN entries"]  # what the old fallback did, for contrast


# -- bigram segmentation ------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("prompt", "key"),
    [
        ("我们选择了哪个数据库", "sqlite"),  # shares 数据/据库; 选择了 (React) must not win
        ("数据库用的是什么", "sqlite"),
        ("Redis的过期时间是多少", "cache"),
        ("什么时候部署", "deploy"),
        ("データベースは何を使っていますか", "ja_db"),
        ("キャッシュの期限", "ja_cache"),
        ("レビューの承認", "ja_review"),
        ("데이터베이스는 뭐예요", "ko_db"),
        ("데이터베이스를 무엇으로 정했나요", "ko_db"),  # another particle: bigrams still meet
        ("금요일 배포", "ko_deploy"),
    ],
)
def test_paraphrased_cjk_prompt_finds_its_memory_first(no_like: tuple[Any, dict[str, int]], prompt: str, key: str) -> None:
    memory, ids = no_like
    assert fts(memory, prompt)[0] == ids[key]


def test_long_run_is_split_into_content_bigrams() -> None:
    assert cjk_grams("我们选择了哪个数据库") == ["选择", "个数", "数据", "据库"]
    assert cjk_grams("データベースは何ですか") == ["デー", "ータ", "タベ", "ベー", "ース"]
    assert cjk_grams("缓存") == ["缓存"] and cjk_grams("猫") == ["猫"]
    assert cjk_grams("我们") == [] and cjk_grams("的了吗") == []  # function words only, like "we"
    assert cjk_grams("SQLite를") == []  # a lone particle beside a word is not a term


def test_hiragana_only_prompt_keeps_its_grams(no_like: tuple[Any, dict[str, int]]) -> None:
    memory, ids = no_like
    assert cjk_grams("たま") == ["たま"]
    assert fts(memory, "たま")[0] == ids["ja_cat"]
    assert fts(memory, "ねこのなまえ")[0] == ids["ja_cat"]


def test_half_width_katakana_is_normalised(no_like: tuple[Any, dict[str, int]]) -> None:
    memory, ids = no_like
    assert fts(memory, "ｷｬｯｼｭ")[0] == ids["ja_cache"]


# -- mixed scripts --------------------------------------------------------------------------------

def test_mixed_prompt_searches_words_and_cjk(memory: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """An English word and a CJK term in one prompt: both indexes are searched, and the entry that
    matches both parts outranks those matching one."""
    english = memory.write("Redis handles the session store.")
    chinese = memory.write("缓存用的是Memcached。")
    both = memory.write("线上 Redis 缓存 十分钟过期")
    memory.write("前端框架选择了React。")
    monkeypatch.setattr(memory.store, "like_search", None)
    found = fts(memory, "Redis 缓存")
    assert found[0] == both
    assert set(found) == {both, english, chinese}
    japanese = memory.write("Docker の設定ファイルは compose.yaml です")
    assert fts(memory, "Docker 設定")[0] == japanese


def test_latin_word_glued_to_cjk_is_found_by_an_english_prompt(no_like: tuple[Any, dict[str, int]]) -> None:
    memory, ids = no_like
    found = fts(memory, "SQLite")
    assert ids["sqlite"] in found[:2] and ids["ko_db"] in found[:2]
    assert glued_words("我们决定使用SQLite作为数据库") == ["sqlite"]
    assert glued_words("plain English words") == []


def test_english_prompt_still_ranks_by_the_word_index(no_like: tuple[Any, dict[str, int]]) -> None:
    memory, ids = no_like
    assert fts(memory, "which cache layer and TTL?")[0] == ids["en_cache"]


# -- no false positives ---------------------------------------------------------------------------

@pytest.mark.parametrize("prompt", ["今天天气怎么样", "お腹が空きました", "오늘 날씨 어때요", "我们的", "猫", "いぬ"])
def test_unrelated_cjk_prompt_finds_nothing(no_like: tuple[Any, dict[str, int]], prompt: str) -> None:
    memory, _ = no_like
    assert fts(memory, prompt) == []


def test_hostile_cjk_input_is_inert(mem: tuple[Any, dict[str, int]]) -> None:
    memory, _ = mem
    for prompt in HOSTILE_CJK:
        memory.search(prompt, channels=["fts"])  # must not raise
        assert_fts_ran(memory, prompt)  # and FTS5 must not have raised inside the channel either


HOSTILE_CJK = ['"缓存', '缓存" OR "*', "缓存 NEAR(数据 库)", '数据:库^', "(((缓存", '""缓存""']


def test_the_hostile_cjk_test_fails_when_fts5_errors(mem: tuple[Any, dict[str, int]], monkeypatch: pytest.MonkeyPatch) -> None:
    """Break the gram sanitiser on purpose (the raw prompt as the MATCH expression): the test
    above must then fail, because the channel reports that FTS5 raised."""
    from crib_plugin.read import query

    monkeypatch.setattr(query, "gram_expression", lambda grams, words: " ".join(grams) + ' "' if grams else "")
    with pytest.raises(AssertionError, match="the fts channel failed"):
        test_hostile_cjk_input_is_inert(mem)


# -- the index's life cycle -----------------------------------------------------------------------

def test_deleting_an_entry_removes_its_grams(mem: tuple[Any, dict[str, int]]) -> None:
    memory, ids = mem
    assert ids["cache"] in fts(memory, "缓存")
    assert memory.forget(ids["cache"])
    assert fts(memory, "缓存") == []
    assert memory.store.execute("SELECT count(*) FROM entries_cjk WHERE rowid = ?", (ids["cache"],))[0][0] == 0


def test_entries_without_cjk_get_no_gram_row(mem: tuple[Any, dict[str, int]]) -> None:
    memory, ids = mem
    rows = {r[0] for r in memory.store.execute("SELECT rowid FROM entries_cjk")}
    assert ids["en_db"] not in rows and ids["sqlite"] in rows and ids["ko_db"] in rows


def test_gram_row_is_written_in_the_entry_transaction(memory: Any) -> None:
    store = memory.store
    with pytest.raises(RuntimeError):
        with store.transaction():
            store.insert_entry("note", "回滚测试的内容", "2026-01-01T00:00:00Z", {})
            raise RuntimeError("abort")
    assert store.execute("SELECT count(*) FROM entries_cjk")[0][0] == 0
    assert store.cjk_search(gram_expression(cjk_grams("回滚")), 5) == []


def test_document_grams() -> None:
    assert cjk.document_grams("用缓存Redis") == "用 缓 存 用缓 缓存 redis"
    assert cjk.document_grams("no CJK at all") == ""


def test_migration_3_backfills_entries_written_before_it(tmp_path: Path) -> None:
    """A store created at schema 2 (no gram index) gains one, filled, when crib opens it."""
    path = tmp_path / "old.db"
    conn = apsw.Connection(str(path))
    for migration in MIGRATIONS:
        if migration.version <= 2:
            with conn:
                conn.execute(migration.sql)
                conn.execute(f"PRAGMA user_version = {migration.version}")
    with conn:
        for text in ("缓存用的是Redis", "no cjk here", "キャッシュの期限"):
            conn.execute(
                "INSERT INTO entries(type, content, created_at, content_hash) VALUES ('note', ?, '2026-01-01T00:00:00Z', '')",
                (text,),
            )
    conn.close()
    store = open_store(path)
    try:
        assert store.schema_version() >= 3
        assert sorted(r[0] for r in store.execute("SELECT rowid FROM entries_cjk")) == [1, 3]
        assert [i for i, _ in store.cjk_search(gram_expression(cjk_grams("缓存")), 5)] == [1]
        assert [i for i, _ in store.cjk_search(gram_expression(cjk_grams("キャッシュ")), 5)] == [3]
    finally:
        store.close()
