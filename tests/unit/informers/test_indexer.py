"""The indexed store: index views, synchronous change listeners and the replace epoch."""

from typing import Any

from kubeloop.runtime.informers.store import Indexer

Obj = dict[str, Any]


def pod(name: str, node: str = "", rv: str = "1") -> Obj:
    return {"metadata": {"name": name, "namespace": "default", "resourceVersion": rv}, "spec": {"nodeName": node}}


def by_node(obj: Obj) -> list[str]:
    return [obj["spec"]["nodeName"]]


def test_index_key_view_follows_the_store_without_copying() -> None:
    indexer = Indexer({"node": by_node})
    assert set(indexer.index_key_view("node", "n1")) == set()
    indexer.upsert(pod("a", "n1"))
    view = indexer.index_key_view("node", "n1")
    assert set(view) == {"default/a"}
    indexer.upsert(pod("b", "n1"))
    assert set(view) == {"default/a", "default/b"}  # live: the same set the index keeps
    indexer.upsert(pod("a", "n2", rv="2"))
    assert set(indexer.index_key_view("node", "n1")) == {"default/b"}
    assert set(indexer.index_key_view("node", "n2")) == {"default/a"}


def test_change_listeners_see_each_change_as_it_is_stored() -> None:
    indexer = Indexer({"node": by_node})
    seen: list[tuple[str, str | None, str | None, set[str]]] = []

    def listener(key: str, old: Obj | None, new: Obj | None) -> None:
        # Called after the indices are updated: the index already reflects ``new``.
        node = (new or old or {}).get("spec", {}).get("nodeName", "")
        seen.append((key, None if old is None else old["metadata"]["resourceVersion"],
                     None if new is None else new["metadata"]["resourceVersion"],
                     set(indexer.index_key_view("node", node))))

    indexer.add_change_listener(listener)
    indexer.upsert(pod("a", "n1"))
    indexer.upsert(pod("a", "n1", rv="2"))
    indexer.delete("default/a")
    indexer.delete("default/missing")
    assert seen == [("default/a", None, "1", {"default/a"}), ("default/a", "1", "2", {"default/a"}),
                    ("default/a", "2", None, set())]


def test_replace_bumps_the_epoch_instead_of_calling_listeners() -> None:
    indexer = Indexer()
    calls: list[str] = []
    indexer.add_change_listener(lambda key, old, new: calls.append(key))
    before = indexer.epoch
    indexer.replace([pod("a"), pod("b")])
    assert indexer.epoch == before + 1
    assert calls == []
    assert sorted(indexer.keys()) == ["default/a", "default/b"]
