"""internals.utils.data against torch.utils.data: same batches, in the same order, for the same seed."""
import pytest
import torch
import torch.utils.data as tud
from helpers import assert_same

import internals
from internals.utils.data import BatchSampler, DataLoader, RandomSampler, TensorDataset, default_collate


def datasets(n=23):
    x = torch.arange(n * 2, dtype=torch.float32).reshape(n, 2)
    y = torch.arange(n) % 3
    return TensorDataset(internals.from_torch(x), internals.from_torch(y)), tud.TensorDataset(x, y)


def batches(loader):
    return [tuple(b) if isinstance(b, (list, tuple)) else (b,) for b in loader]


@pytest.mark.parametrize("shuffle, drop_last, batch_size", [(False, False, 5), (True, False, 5), (True, True, 5),
                                                            (True, False, 1), (True, False, 23), (False, True, 4)])
@pytest.mark.parametrize("use_generator", [False, True])
def test_batch_order_matches_torch(shuffle, drop_last, batch_size, use_generator):
    ours_ds, theirs_ds = datasets()
    internals.manual_seed(8)
    torch.manual_seed(8)
    kw_i = {"generator": internals.Generator().manual_seed(2)} if use_generator else {}
    kw_t = {"generator": torch.Generator().manual_seed(2)} if use_generator else {}
    ours = DataLoader(ours_ds, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last, **kw_i)
    theirs = tud.DataLoader(theirs_ds, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last, **kw_t)
    assert len(ours) == len(theirs)
    for _ in range(2):       # two epochs: the second continues the streams
        got, want = batches(ours), batches(theirs)
        assert len(got) == len(want)
        for a, b in zip(got, want, strict=True):
            for u, v in zip(a, b, strict=True):
                assert_same(u, v)
    assert_same(internals.randn(4), torch.randn(4))     # and the default generators agree afterwards


def test_starting_an_epoch_draws_at_once():
    ours_ds, theirs_ds = datasets()
    internals.manual_seed(1)
    torch.manual_seed(1)
    it_i, it_t = iter(DataLoader(ours_ds, shuffle=True)), iter(tud.DataLoader(theirs_ds, shuffle=True))
    assert_same(internals.rand(2), torch.rand(2))
    assert_same(next(it_i)[1], next(it_t)[1])


def test_random_sampler_with_replacement():
    internals.manual_seed(4)
    torch.manual_seed(4)
    ours = list(RandomSampler(range(10), replacement=True, num_samples=70))
    assert ours == list(tud.RandomSampler(range(10), replacement=True, num_samples=70))


def test_collate_fn_and_default_collate():
    samples_i = [(internals.tensor([1.0, 2.0]), 3, 0.5, {"k": True}),
                 (internals.tensor([4.0, 5.0]), 6, 1.5, {"k": False})]
    samples_t = [(torch.tensor([1.0, 2.0]), 3, 0.5, {"k": True}), (torch.tensor([4.0, 5.0]), 6, 1.5, {"k": False})]
    ours, theirs = default_collate(samples_i), tud.default_collate(samples_t)
    for u, v in zip(ours[:3], theirs[:3], strict=True):
        assert_same(u, v)
    assert_same(ours[3]["k"], theirs[3]["k"])
    loader = DataLoader(list(range(7)), batch_size=3, collate_fn=lambda b: sum(b))
    assert list(loader) == list(tud.DataLoader(list(range(7)), batch_size=3, collate_fn=lambda b: sum(b)))
    assert list(DataLoader([1, 2], batch_size=None)) == [1, 2]


def test_errors():
    ds, _ = datasets()
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(ds, sampler=RandomSampler(ds), shuffle=True)
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        BatchSampler(RandomSampler(ds), 0, False)
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        default_collate([internals.zeros(2), internals.zeros(3)])
    with pytest.raises(AssertionError, match="Size mismatch"):
        TensorDataset(internals.zeros(2), internals.zeros(3))


def test_the_single_process_iterator_has_torchs_length_and_protocol():
    """``iter(loader)`` is an iterator object with a length (the number of batches of the pass),
    as torch's ``_SingleProcessDataLoaderIter``; it refuses pickling with torch's error class."""
    import pickle
    results = []
    for data in (internals.utils.data, tud):
        it = iter(data.DataLoader(list(range(5)), batch_size=2))
        first = next(it)
        results.append((type(it).__name__, len(it), iter(it) is it, first.tolist(), [b.tolist() for b in it]))
        with pytest.raises(NotImplementedError):
            pickle.dumps(iter(data.DataLoader(list(range(5)))))
    assert results[0] == results[1]


def test_an_iterable_dataset_longer_than_its_reported_length_warns_for_each_extra_batch():
    import warnings
    counts = []
    for data in (internals.utils.data, tud):
        class Five(data.IterableDataset):
            def __iter__(self):
                return iter(range(5))

            def __len__(self):
                return 3

        loader = data.DataLoader(Five(), batch_size=None)
        before = list(loader)               # len(loader) not asked yet: nothing to compare with
        assert len(loader) == 3
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert list(loader) == before == list(range(5))
        counts.append([str(w.message).split(" samples")[0].split("but ")[-1] for w in caught])
    assert counts[0] == counts[1] == ["4", "5"]
