"""A regeneration that writes into the repository's figures/ refuses uncommitted code under fedlib/ or
notebooks/ (fedlib.repro.artefacts.provenance.refuse_dirty), before it touches anything."""

import subprocess

import pytest

from fedlib.repro import regenerate as R
from fedlib.repro.artefacts.provenance import DirtyTree, refuse_dirty, uncommitted_sources


def _git(root, *args):
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin:/usr/local/bin"})


@pytest.fixture
def repo(tmp_path):
    for d in ("fedlib", "notebooks", "figures", "docs"):
        (tmp_path / d).mkdir()
    (tmp_path / "fedlib" / "a.py").write_text("x = 1\n")
    (tmp_path / "notebooks" / "n.ipynb").write_text("{}\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "init")
    return tmp_path


def test_a_clean_tree_and_changes_outside_the_sources_may_write_figures(repo):
    (repo / "docs" / "new.md").write_text("notes\n")
    (repo / "figures" / "x.png").write_bytes(b"png")
    assert uncommitted_sources(repo) == []
    refuse_dirty(repo / "figures", repo)


@pytest.mark.parametrize("change", ["modified", "untracked", "notebook"])
def test_uncommitted_code_may_not_write_into_figures(repo, change):
    target = {"modified": repo / "fedlib" / "a.py", "untracked": repo / "fedlib" / "b.py",
              "notebook": repo / "notebooks" / "n.ipynb"}[change]
    target.write_text("y = 2\n")
    with pytest.raises(DirtyTree, match=target.name):
        refuse_dirty(repo / "figures", repo)
    refuse_dirty(repo / "elsewhere", repo)  # another folder (--figures) is not committed


def test_regenerate_refuses_before_touching_anything(repo, monkeypatch):
    (repo / "fedlib" / "a.py").write_text("y = 2\n")
    monkeypatch.setattr(R, "_repo", lambda: repo)
    monkeypatch.setattr(R, "_plan", lambda *a, **k: pytest.fail("planned despite a dirty tree"))
    with pytest.raises(DirtyTree, match="a.py"):
        R.regenerate("quick", ["fedlc"], render="records", index=False)
    with pytest.raises(DirtyTree):
        R.regenerate("quick", ["fedlc"], index=False)
