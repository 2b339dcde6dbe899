"""Datasets' combinations, random_split, the samplers and IterableDataset loading, against
torch.utils.data: the same indices and batches from the same seed (the random streams are the
same on every CPU, so the comparisons are exact)."""
import warnings

import pytest
import torch
import torch.utils.data as tud
from helpers import assert_same, assert_same_error

import internals
import internals.utils.data as iud

LIBS = ((internals, iud), (torch, tud))


def both(seed):
    internals.manual_seed(seed)
    torch.manual_seed(seed)


def pairs(n=11):
    """A TensorDataset of (x, y) in each library, with the same values."""
    x = torch.arange(n * 3, dtype=torch.float32).reshape(n, 3)
    y = torch.arange(n) % 4
    return iud.TensorDataset(internals.from_torch(x), internals.from_torch(y)), tud.TensorDataset(x, y)


def as_plain(batch):
    """Tensors as (shape, dtype name, values), so that both libraries' batches compare with ==.
    Lists and tuples both become lists: which of the two default_collate returns for a batch of
    tuples is default_collate's matter (tested with it), not the samplers'."""
    if isinstance(batch, (list, tuple)):
        return [as_plain(b) for b in batch]
    if isinstance(batch, dict):
        return {k: as_plain(v) for k, v in batch.items()}
    if hasattr(batch, "tolist"):
        return tuple(batch.shape), str(batch.dtype).split(".")[-1], batch.tolist()
    return batch


# ---------------------------------------------------------------------- random_split
@pytest.mark.parametrize("lengths", [[3, 8], [0.3, 0.7], [0.25, 0.25, 0.5], [11], [0.5, 0.5], [0.1, 0.1, 0.8]])
@pytest.mark.parametrize("use_generator", [False, True])
def test_random_split_equals_torch(lengths, use_generator):
    both(6)
    splits = []
    for lib, data in LIBS:
        kw = {"generator": lib.Generator().manual_seed(3)} if use_generator else {}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            subsets = data.random_split(range(100, 111), lengths, **kw)
        splits.append(([list(s) for s in subsets], [s.indices for s in subsets], [str(w.message) for w in caught]))
        assert all(isinstance(s, data.Subset) for s in subsets)
    assert splits[0] == splits[1]
    assert_same(internals.rand(3), torch.rand(3))      # the default generators agree afterwards


@pytest.mark.parametrize("lengths", [[3, 9], [0.5, 0.6], [-0.5, 1.5]], ids=["sum", "fractions", "negative"])
def test_random_split_errors_equal_torch(lengths):
    ours, theirs = assert_same_error(lambda: iud.random_split(range(11), lengths),
                                     lambda: tud.random_split(range(11), lengths))
    assert str(ours) == str(theirs)


# ---------------------------------------------------------------------- Subset, ConcatDataset, StackDataset
def test_subset_and_concat_index_as_torch():
    ours, theirs = pairs()
    results = []
    for lib_ds, data in ((ours, iud), (theirs, tud)):
        sub = data.Subset(lib_ds, [4, 0, 9, 9])
        cat = data.ConcatDataset([sub, lib_ds, data.Subset(lib_ds, [2])])
        plus = sub + lib_ds
        results.append([as_plain(sub[i]) for i in range(len(sub))] + [len(sub), len(cat), cat.cumulative_sizes]
                       + [as_plain(cat[i]) for i in (0, 3, 4, 14, 15, -1, -16)] + [len(plus), type(plus).__name__]
                       + [as_plain(sub.__getitems__([1, 3]))])
    assert results[0] == results[1]


def test_stack_dataset_as_torch():
    ours, theirs = pairs(5)
    got = [as_plain([data.StackDataset(ds, ds)[2], data.StackDataset(a=ds, b=range(5))[4]])
           for ds, data in ((ours, iud), (theirs, tud))]
    assert got[0] == got[1]


class _Batched:
    """A dataset that reads batches: its ``__getitems__`` answers differently from ``__getitem__``,
    so the result shows which one a StackDataset asked."""

    def __len__(self):
        return 5

    def __getitem__(self, i):
        return i

    def __getitems__(self, indices):
        return [100 + i for i in indices]


def test_stack_dataset_reads_batches_from_datasets_that_read_batches():
    """StackDataset's ``__getitems__`` (what the DataLoader's fetcher calls) asks a dataset with
    ``__getitems__`` for the whole batch and the others one index at a time."""
    got = []
    for data in (iud, tud):
        positional = data.StackDataset(_Batched(), range(5))
        named = data.StackDataset(a=_Batched(), b=range(10, 15))
        loader = data.DataLoader(positional, batch_size=2, collate_fn=lambda batch: batch)
        got.append([positional.__getitems__([3, 1]), named.__getitems__([0, 4]), list(loader)])
    assert got[0] == got[1]
    assert got[0][0] == [(103, 3), (101, 1)]


@pytest.mark.parametrize("call", [
    lambda data: data.ConcatDataset([]),
    lambda data: data.ConcatDataset([Stream(data, 3)]),
    lambda data: data.ConcatDataset([range(3)])[-4],
    lambda data: list(data.ChainDataset([range(3)])),
    lambda data: data.StackDataset(range(2), range(3)),
    lambda data: data.StackDataset(range(2), b=range(2)),
    lambda data: data.StackDataset(),
    lambda data: type("Sub", (data.Subset,), {"__getitem__": lambda self, i: i})(range(2), [0]),
    lambda data: data.StackDataset(type("Short", (_Batched,), {"__getitems__": lambda self, i: []})(),
                                   range(5)).__getitems__([1]),
], ids=["concat-empty", "concat-iterable", "concat-index", "chain-map-style", "stack-sizes", "stack-both",
        "stack-none", "subset-override", "stack-short-batch"])
def test_dataset_errors_equal_torch(call):
    ours, theirs = assert_same_error(lambda: call(iud), lambda: call(tud))
    assert str(ours) == str(theirs)


# ---------------------------------------------------------------------- samplers
SAMPLERS = {
    "SubsetRandomSampler": lambda data, g: data.SubsetRandomSampler([5, 7, 11, 13, 17, 19, 23], generator=g),
    "WeightedRandomSampler": lambda data, g: data.WeightedRandomSampler([0.1, 0.9, 0.4, 0.0, 2.0], 30, generator=g),
    "WeightedRandomSampler-no-replacement": lambda data, g: data.WeightedRandomSampler(
        [0.1, 0.9, 0.4, 0.3, 2.0, 1.0], 4, replacement=False, generator=g),
    "RandomSampler": lambda data, g: data.RandomSampler(range(9), generator=g),
    "RandomSampler-replacement": lambda data, g: data.RandomSampler(range(9), True, 40, generator=g),
    "SequentialSampler": lambda data, g: data.SequentialSampler(range(6)),
    "BatchSampler": lambda data, g: data.BatchSampler(data.SubsetRandomSampler(range(10), generator=g), 3, False),
    "BatchSampler-drop_last": lambda data, g: data.BatchSampler(data.RandomSampler(range(10), generator=g), 4,
                                                                True),
}


@pytest.mark.parametrize("name", SAMPLERS)
@pytest.mark.parametrize("use_generator", [False, True])
def test_sampler_indices_equal_torch(name, use_generator):
    both(12)
    got = []
    for lib, data in LIBS:
        sampler = SAMPLERS[name](data, lib.Generator().manual_seed(5) if use_generator else None)
        got.append([list(sampler), list(sampler), len(sampler)])      # two passes: the stream continues
    assert got[0] == got[1]
    assert_same(internals.rand(3), torch.rand(3))


@pytest.mark.parametrize("n, replicas, kw", [
    (10, 3, dict()), (10, 3, dict(drop_last=True)), (10, 3, dict(shuffle=False)),
    (10, 3, dict(shuffle=False, drop_last=True)), (2, 5, dict(seed=7)), (9, 3, dict(drop_last=True)),
    (1, 4, dict(shuffle=False)),
], ids=str)
def test_distributed_sampler_deals_torchs_shares(n, replicas, kw):
    """Each replica's indices over two epochs (``set_epoch`` reseeds the shuffle) and its length:
    a short list is padded with its own first indices, or cut with ``drop_last``."""
    got = []
    for data in (iud, tud):
        shares = []
        for rank in range(replicas):
            sampler = data.DistributedSampler(range(n), num_replicas=replicas, rank=rank, **kw)
            first = list(sampler)
            sampler.set_epoch(1)
            shares.append([first, list(sampler), len(sampler), sampler.total_size])
        got.append(shares)
    assert got[0] == got[1]


@pytest.mark.parametrize("call", [
    lambda data: data.DistributedSampler(range(4), num_replicas=2, rank=2),
    lambda data: data.DistributedSampler(range(4), num_replicas=2, rank=-1),
    lambda data: data.DistributedSampler(range(4), num_replicas=2),
], ids=["rank-too-large", "rank-negative", "no-process-group"])
def test_distributed_sampler_refuses_as_torch(call):
    ours, theirs = assert_same_error(lambda: call(iud), lambda: call(tud))
    assert str(ours) == str(theirs)


def test_weighted_sampler_drives_a_dataloader_as_torch():
    ours, theirs = pairs(6)
    both(2)
    got = [as_plain(list(data.DataLoader(ds, batch_size=4, sampler=data.WeightedRandomSampler([1, 2, 3, 1, 2, 3],
                                                                                              10))))
           for ds, data in ((ours, iud), (theirs, tud))]
    assert got[0] == got[1]


@pytest.mark.parametrize("call", [
    lambda data: data.WeightedRandomSampler([0.5, 0.5], 0),
    lambda data: data.WeightedRandomSampler([0.5, 0.5], True),
    lambda data: data.WeightedRandomSampler([0.5, 0.5], 2, replacement=1),
    lambda data: data.WeightedRandomSampler([[0.5, 0.5]], 2),
    lambda data: data.RandomSampler(range(3), replacement=1),
    lambda data: data.BatchSampler(range(7), 2, 1),
    lambda data: data.BatchSampler(range(7), 2, None),
], ids=["zero-samples", "bool-samples", "replacement-not-bool", "weights-2d", "random-replacement-not-bool",
        "batch-drop-last-int", "batch-drop-last-none"])
def test_sampler_errors_equal_torch(call):
    ours, theirs = assert_same_error(lambda: call(iud), lambda: call(tud))
    assert str(ours) == str(theirs)


# ---------------------------------------------------------------------- IterableDataset
class Stream:
    """An IterableDataset subclass for either library: ``n`` (x, i) samples, x drawn from the
    default generator while iterating (so the draws' order is compared too)."""

    def __new__(cls, data, n, with_len=True):
        lib = internals if data is iud else torch

        class _Stream(data.IterableDataset):
            def __iter__(self):
                for i in range(n):
                    yield lib.rand(2), i

        if with_len:
            _Stream.__len__ = lambda self: n
        return _Stream()


@pytest.mark.parametrize("batch_size, drop_last", [(4, False), (4, True), (5, False), (1, False), (None, False)])
def test_iterable_dataset_loads_as_torch(batch_size, drop_last):
    got = []
    for lib, data in LIBS:
        lib.manual_seed(7)
        loader = data.DataLoader(Stream(data, 10), batch_size=batch_size, drop_last=drop_last)
        got.append((len(loader), as_plain(list(loader)), as_plain(list(loader)), lib.rand(2).tolist()))
    assert got[0] == got[1]


def test_chain_dataset_and_sum_of_streams_as_torch():
    got = []
    for lib, data in LIBS:
        lib.manual_seed(1)
        chain = data.ChainDataset([Stream(data, 3), Stream(data, 2)])
        summed = Stream(data, 2) + Stream(data, 1)
        got.append((len(chain), type(summed).__name__, as_plain(list(chain)), as_plain(list(summed)),
                    as_plain(list(data.DataLoader(chain, batch_size=2)))))
    assert got[0] == got[1]


@pytest.mark.parametrize("kwargs", [dict(shuffle=True), dict(sampler=[0, 1]), dict(batch_sampler=[[0]])],
                         ids=["shuffle", "sampler", "batch_sampler"])
def test_iterable_dataset_refuses_ordering_options_as_torch(kwargs):
    ours, theirs = assert_same_error(lambda: iud.DataLoader(Stream(iud, 3), **kwargs),
                                     lambda: tud.DataLoader(Stream(tud, 3), **kwargs))
    assert str(ours) == str(theirs)


def test_iterable_dataset_without_len():
    for data in (iud, tud):
        loader = data.DataLoader(Stream(data, 3, with_len=False), batch_size=2)
        assert [len(b[1]) for b in loader] == [2, 1]
        with pytest.raises(TypeError):
            len(loader)


def test_names_equal_torch():
    for name in iud.__all__:
        assert hasattr(tud, name), name
    wanted = {"Subset", "ConcatDataset", "IterableDataset", "ChainDataset", "StackDataset", "random_split",
              "WeightedRandomSampler", "SubsetRandomSampler", "RandomSampler", "SequentialSampler", "BatchSampler"}
    assert wanted <= set(iud.__all__)


@pytest.mark.parametrize("attr", ["batch_size", "sampler", "drop_last", "dataset", "collate_fn"])
def test_loader_attributes_fixed_after_init_as_torch(attr):
    """torch refuses changing what a loader's iterators read once it is built (and allows the rest)."""
    def change(data):
        loader = data.DataLoader(range(4), batch_size=2)
        setattr(loader, attr, getattr(loader, attr))
        return "changed"
    try:
        theirs = change(tud)
    except ValueError as error:
        ours_error, theirs_error = assert_same_error(lambda: change(iud), lambda: change(tud))
        assert str(ours_error) == str(theirs_error) == str(error)
    else:
        assert change(iud) == theirs
