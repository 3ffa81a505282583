"""Tiny-ImageNet (FedConcat Table 3) read from tiny files the test writes: the official archive's
layout (validation images labelled by val_annotations.txt) and an ImageFolder tree, resized to
32×32 as FedConcat's code, normalised per channel, cached; absent files say what was expected."""

from __future__ import annotations

import numpy as np
import pytest

from fedlib import data as D

WNIDS = [f"n{i:08d}" for i in range(200)]


def _colour(i: int) -> tuple[int, int, int]:
    return (i % 256, (3 * i) % 256, (7 * i + 11) % 256)


def _image(path, colour, size=64):
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.full((size, size, 3), colour, dtype=np.uint8)).save(path)


def _normalised(colour) -> np.ndarray:
    mean, std = (np.asarray(v) for v in D.TINYIMAGENET_NORM)
    return (np.asarray(colour) / 255.0 - mean) / std


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLIB_CACHE", str(tmp_path / "cache"))
    D._load_images.cache_clear()
    yield tmp_path / "cache"
    D._load_images.cache_clear()


def test_official_layout_is_resized_labelled_by_the_annotations_and_cached(tmp_path, cache):
    root = tmp_path / "data"
    tree = root / "tiny-imagenet-200"
    order = list(reversed(WNIDS))  # written in another order than the sorted class order
    for w in order:
        _image(tree / "train" / w / "images" / f"{w}_0.png", _colour(WNIDS.index(w)))
    val = [(f"val_{j}.png", WNIDS[k]) for j, k in enumerate((5, 199, 0, 5))]
    for name, w in val:
        _image(tree / "val" / "images" / name, _colour(WNIDS.index(w)))
    (tree / "val" / "val_annotations.txt").write_text("".join(f"{n}\t{w}\t0\t0\t63\t63\n" for n, w in val))
    (tree / "wnids.txt").write_text("\n".join(order))

    d = D.load_dataset("tinyimagenet", root)
    assert d.num_classes == 200 and d.train_x.shape == (200, 3, 32, 32) and d.test_x.shape == (4, 3, 32, 32)
    assert d.train_y.tolist() == list(range(200))  # sorted wnid order
    assert d.test_y.tolist() == [5, 199, 0, 5]
    for x, y in ((d.train_x, d.train_y), (d.test_x, d.test_y)):
        for img, label in zip(x, y):  # a constant image stays constant when resized, then is normalised
            expected = _normalised(_colour(int(label)))
            assert np.allclose(img.numpy(), expected[:, None, None], atol=1e-5)
    assert len(list(cache.glob("tinyimagenet-*.npz"))) == 2
    (tree / "val" / "images" / "val_0.png").write_bytes(b"")  # the cache must be read, not the image
    D._load_images.cache_clear()
    assert D.load_dataset("tinyimagenet", root).test_y.tolist() == [5, 199, 0, 5]


def test_image_folder_layout(tmp_path, cache):
    root = tmp_path / "data"
    for split in ("train", "val"):
        for i, w in enumerate(WNIDS):
            if split == "train" or i % 50 == 0:
                _image(root / "tinyimagenet" / split / w / "a.png", _colour(i), size=48)
    d = D.load_dataset("tinyimagenet", root)
    assert d.train_x.shape == (200, 3, 32, 32) and d.test_y.tolist() == [0, 50, 100, 150]
    assert np.allclose(d.test_x[1].numpy(), _normalised(_colour(50))[:, None, None], atol=1e-5)


def test_absent_or_wrong_files_say_what_was_expected(tmp_path, cache):
    with pytest.raises(D.DatasetNotFoundError) as err:
        D.load_dataset("tinyimagenet", tmp_path)
    assert "tiny-imagenet-200/" in err.value.reason and str(tmp_path) not in err.value.reason
    for w in WNIDS[:3]:
        _image(tmp_path / "tinyimagenet" / "train" / w / "a.png", (1, 2, 3))
        _image(tmp_path / "tinyimagenet" / "val" / w / "a.png", (1, 2, 3))
    with pytest.raises(D.DataError, match="3 class folders, expected 200"):
        D.load_dataset("tinyimagenet", tmp_path)
