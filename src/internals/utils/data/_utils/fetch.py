"""One batch from a dataset, given the sampler's indices (``torch/utils/data/_utils/fetch.py``).
The same fetchers serve the main process and each worker."""

__all__ = ["create_fetcher"]


class _MapDatasetFetcher:
    """A map-style dataset read at the given indices (``__getitems__`` when the dataset reads a
    batch at once), then collated."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn

    def fetch(self, possibly_batched_index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[possibly_batched_index])
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.collate_fn(self.dataset.__getitems__(possibly_batched_index))
        return self.collate_fn([self.dataset[i] for i in possibly_batched_index])


class _IterableDatasetFetcher:
    """An IterableDataset read in its own order, up to one batch's worth of places at a time; a
    short last batch is kept unless ``drop_last``. The dataset's iterator starts here."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index):
        """The next batch, or StopIteration when the dataset has no more."""
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in possibly_batched_index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(possibly_batched_index)):
            raise StopIteration
        return self.collate_fn(data)


def create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last):
    """``_DatasetKind.create_fetcher``: the fetcher for a map-style or an iterable dataset."""
    kind = _IterableDatasetFetcher if iterable else _MapDatasetFetcher
    return kind(dataset, auto_collation, collate_fn, drop_last)
