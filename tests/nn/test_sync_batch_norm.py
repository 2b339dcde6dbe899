"""``nn.SyncBatchNorm``: construction, ``convert_sync_batchnorm`` and its CPU forward, against torch."""
import pytest
import torch
import torch.distributed as torch_dist

import internals
from tests.helpers import PRODUCT_ULPS, assert_same, assert_within_ulps_of_largest


def small_net(lib):
    net = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 1), lib.nn.BatchNorm2d(4),
                            lib.nn.Sequential(lib.nn.BatchNorm1d(2, affine=False), lib.nn.ReLU()),
                            lib.nn.InstanceNorm2d(4))
    net[1].qconfig = "kept"
    return net.eval()


def test_construction_matches_torch():
    for kwargs in ({}, {"bias": False}, {"affine": False, "track_running_stats": False, "momentum": None}):
        ours, theirs = internals.nn.SyncBatchNorm(5, **kwargs), torch.nn.SyncBatchNorm(5, **kwargs)
        assert repr(ours) == repr(theirs)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        for t_o, t_t in zip(ours.state_dict().values(), theirs.state_dict().values()):
            assert_same(t_o, t_t)
    assert internals.nn.SyncBatchNorm(3, process_group="g").process_group == "g"


def test_convert_carries_the_same_parameters_and_buffers_over():
    converted = []
    for lib in (internals, torch):
        net = small_net(lib)
        old = net[1]
        new = lib.nn.SyncBatchNorm.convert_sync_batchnorm(net, process_group="pg")
        assert new is net and new[1].weight is old.weight and new[1].running_var is old.running_var
        assert new[1].process_group == "pg" and not new[1].training and new[1].qconfig == "kept"
        converted.append(new)
    ours, theirs = converted
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    lone = internals.nn.SyncBatchNorm.convert_sync_batchnorm(internals.nn.BatchNorm1d(3, bias=False))
    assert type(lone) is internals.nn.SyncBatchNorm and lone.bias is None


def test_forward_outside_a_process_group_is_batch_norm():
    outs = []
    for lib in (internals, torch):
        lib.manual_seed(0)
        m = lib.nn.SyncBatchNorm(3, momentum=None)
        x = lib.arange(30, dtype=lib.float32).reshape(2, 3, 5).sin()
        outs.append((m(x), m(x * 2), m.running_mean, m.running_var))
        outs.append(m.num_batches_tracked)
    for ours, theirs in zip(outs[0], outs[2]):
        assert_within_ulps_of_largest(ours, theirs, PRODUCT_ULPS)
    assert_same(outs[1], outs[3])


@pytest.mark.parametrize("shape", [(4,), (2, 0, 3)])
def test_bad_input_raises_like_torch(shape):
    with pytest.raises(ValueError) as theirs:
        torch.nn.SyncBatchNorm(4)(torch.ones(shape))
    with pytest.raises(ValueError) as ours:
        internals.nn.SyncBatchNorm(4)(internals.ones(shape))
    assert str(ours.value) == str(theirs.value)


def test_training_forward_in_a_process_group_refuses_cpu_tensors():
    """Inside an initialised group torch syncs only accelerator tensors: a CPU one raises ValueError
    in training mode; in eval mode it is a plain batch norm with the running statistics."""
    torch_dist.init_process_group("gloo", store=torch_dist.HashStore(), world_size=1, rank=0)
    try:
        for lib in (internals, torch):
            m = lib.nn.SyncBatchNorm(4)
            with pytest.raises(ValueError, match="expected input tensor to be on GPU or XPU or privateuseone"):
                m(lib.ones(2, 4, 3))
            assert m.eval()(lib.ones(2, 4, 3)).shape == (2, 4, 3)
    finally:
        torch_dist.destroy_process_group()
