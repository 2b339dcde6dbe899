"""nn layers, losses, the Module API and gradients of gradients, given odd input: each program
runs with ``L`` torch and with ``L`` internals, and gives torch's values (exactly, or within the
ulps CONTRIBUTING.md allows a chain of library functions or a normalization), dtypes, shapes,
strides, ``grad_fn`` names, first and second gradients and warning classes, or raises torch's
exception class.

Inside a program: ``S(*shape, ...)`` is a float64 input drawn by torch (the same numbers in both
libraries, requiring grad), ``Y(*shape, classes=)`` integer labels, ``G(out, inputs)`` the output,
its gradients with a fixed cotangent and the gradients of their squares (``create_graph=True``),
``F`` is ``nn.functional``. The last statement's value is compared."""
import itertools
import warnings

import pytest
import torch
from test_hostile_training_stack import COMPOSITE_ULPS, NORM_ULPS, labels, sample, twin, with_grads

import internals

# Linear, convolutions (padding modes, 'same', groups, dilation), transposed ones, pools, padding
LAYERS = {
 'lin_1d': 'L.manual_seed(0); m = nn.Linear(4, 3).double(); x = S(4); G(m(x), [x] + list(m.parameters()))',
 'lin_0dim': 'L.manual_seed(0); m = nn.Linear(4, 3).double(); x = S(); m(x)',
 'lin_zero_in': 'L.manual_seed(0); m = nn.Linear(0, 3).double(); x = S(2, 0); G(m(x), [x] + list(m.parameters()))',
 'lin_zero_out': (
     'L.manual_seed(0); m = nn.Linear(3, 0).double(); x = S(2, 3); G(m(x), [x] + list(m.parameters()), False)'),
 'lin_bf16': "L.manual_seed(0); m = nn.Linear(4, 3).bfloat16(); x = S(2, 4, dtype='bfloat16'); m(x)",
 'lin_int_input': 'L.manual_seed(0); m = nn.Linear(4, 3); x = L.ones(2, 4, dtype=L.int64); m(x)',
 'lin_dtype_mix': 'L.manual_seed(0); m = nn.Linear(4, 3); x = S(2, 4); m(x)',
 'lin_wrong_features': 'L.manual_seed(0); m = nn.Linear(4, 3).double(); x = S(2, 5); m(x)',
 'lin_nobias_4d': (
     'L.manual_seed(0); m = nn.Linear(4, 3, bias=False).double(); x = S(2, 2, 3, 4); G(m(x), [x, m.weight])'),
 'lin_noncontig': 'L.manual_seed(0); m = nn.Linear(3, 2).double(); x = S(3, 5).t(); G(m(x), [x, m.weight, m.bias])',
 'lin_empty_batch': 'L.manual_seed(0); m = nn.Linear(3, 2).double(); x = S(0, 3); G(m(x), [x, m.weight, m.bias])',
 'lin_F_1d_weight': 'x = S(2, 3); w = S(3, seed=2); G(F.linear(x, w), [x, w])',
 'lin_F_bias_bcast': 'x = S(2, 3); w = S(4, 3, seed=2); b = S(1, seed=3); G(F.linear(x, w, b), [x, w, b])',
 'lin_F_bad_bias': 'x = S(2, 3); w = S(4, 3, seed=2); b = S(3, seed=3); F.linear(x, w, b)',
 'conv1d_same_dil': ("L.manual_seed(0); m = nn.Conv1d(2, 3, 4, padding='same', dilation=2).double(); x = S(2, 2, 7)"
     '; G(m(x), [x, m.weight, m.bias])'),
 'conv2d_same_even': ("L.manual_seed(0); m = nn.Conv2d(2, 3, (2, 4), padding='same').double(); x = S(1, 2, 5, 6)"
     '; G(m(x), [x, m.weight])'),
 'conv2d_same_stride': "L.manual_seed(0); m = nn.Conv2d(2, 3, 3, padding='same', stride=2)",
 'conv2d_bad_padding_str': "L.manual_seed(0); m = nn.Conv2d(2, 3, 3, padding='full')",
 'conv2d_valid': ("L.manual_seed(0); m = nn.Conv2d(2, 3, 3, padding='valid').double(); x = S(1, 2, 5, 6)"
     '; G(m(x), [x, m.weight])'),
 'conv1d_reflect': (
     "L.manual_seed(0); m = nn.Conv1d(2, 3, 3, padding=2, padding_mode='reflect').double(); x = S(2, 2, 5)"
     '; G(m(x), [x, m.weight])'),
 'conv2d_replicate': ("L.manual_seed(0); m = nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode='replicate').double()"
     '; x = S(1, 2, 4, 5); G(m(x), [x, m.weight])'),
 'conv2d_circular': ("L.manual_seed(0); m = nn.Conv2d(2, 2, 3, padding=1, padding_mode='circular', groups=2).double()"
     '; x = S(1, 2, 4, 5); G(m(x), [x, m.weight])'),
 'conv3d_circular': ("L.manual_seed(0); m = nn.Conv3d(1, 2, 2, padding=1, padding_mode='circular').double()"
     '; x = S(1, 1, 3, 3, 3); G(m(x), [x, m.weight])'),
 'conv3d_reflect_same': ("L.manual_seed(0); m = nn.Conv3d(1, 2, 3, padding='same', padding_mode='reflect').double()"
     '; x = S(1, 1, 3, 4, 3); G(m(x), [x, m.weight], False)'),
 'conv_bad_padding_mode': "L.manual_seed(0); nn.Conv2d(2, 3, 3, padding_mode='mirror')",
 'conv_groups_bad_in': 'L.manual_seed(0); nn.Conv2d(3, 4, 3, groups=2)',
 'conv_groups_bad_out': 'L.manual_seed(0); nn.Conv2d(4, 3, 3, groups=2)',
 'conv_groups_zero': 'L.manual_seed(0); nn.Conv2d(4, 4, 3, groups=0)',
 'conv2d_unbatched': (
     'L.manual_seed(0); m = nn.Conv2d(2, 3, 2).double(); x = S(2, 4, 4); G(m(x), [x, m.weight, m.bias])'),
 'conv1d_unbatched': (
     'L.manual_seed(0); m = nn.Conv1d(2, 3, 2, stride=2).double(); x = S(2, 5); G(m(x), [x, m.weight])'),
 'conv2d_5d_input': 'L.manual_seed(0); m = nn.Conv2d(2, 3, 2).double(); x = S(1, 1, 2, 4, 4); m(x)',
 'conv2d_2d_input': 'L.manual_seed(0); m = nn.Conv2d(2, 3, 2).double(); x = S(4, 4); m(x)',
 'conv2d_wrong_channels': 'L.manual_seed(0); m = nn.Conv2d(2, 3, 2).double(); x = S(1, 3, 4, 4); m(x)',
 'conv2d_kernel_too_big': 'L.manual_seed(0); m = nn.Conv2d(2, 3, 5).double(); x = S(1, 2, 4, 4); m(x)',
 'conv2d_dtype_mix': 'L.manual_seed(0); m = nn.Conv2d(2, 3, 2); x = S(1, 2, 4, 4); m(x)',
 'conv2d_int': 'L.manual_seed(0); m = nn.Conv2d(2, 3, 2); x = L.ones(1, 2, 4, 4, dtype=L.int64); m(x)',
 'conv2d_bf16': "L.manual_seed(0); m = nn.Conv2d(2, 3, 2).bfloat16(); x = S(1, 2, 4, 4, dtype='bfloat16'); m(x)",
 'conv2d_stride0': 'x = S(1, 2, 4, 4); w = S(3, 2, 2, 2, seed=3); F.conv2d(x, w, stride=0)',
 'conv2d_neg_pad': 'x = S(1, 2, 4, 4); w = S(3, 2, 2, 2, seed=3); F.conv2d(x, w, padding=-1)',
 'conv2d_dil0': 'x = S(1, 2, 4, 4); w = S(3, 2, 2, 2, seed=3); F.conv2d(x, w, dilation=0)',
 'conv2d_zero_channels_out': 'x = S(1, 2, 4, 4); w = S(0, 2, 2, 2, seed=3); G(F.conv2d(x, w), [x, w], False)',
 'conv2d_empty_spatial': 'x = S(1, 2, 0, 4); w = S(3, 2, 1, 1, seed=3); F.conv2d(x, w)',
 'conv2d_noncontig_weight': (
     'x = S(2, 2, 5, 5); w = S(2, 3, 3, 2, seed=3).transpose(0, 1); G(F.conv2d(x, w, padding=1), [x, w])'),
 'conv2d_channels_last_groups': ('x = S(2, 4, 5, 5).to(memory_format=L.channels_last); w = S(4, 2, 3, 3, seed=3)'
     '; G(F.conv2d(x, w, groups=2, dilation=2, padding=2), [x, w])'),
 'conv1d_groups_depthwise_mult': ('x = S(2, 3, 7); w = S(6, 1, 3, seed=3); b = S(6, seed=4)'
     '; G(F.conv1d(x, w, b, groups=3, stride=2, padding=1), [x, w, b])'),
 'conv3d_dilated': ('x = S(1, 2, 5, 4, 5); w = S(2, 2, 2, 2, 2, seed=3)'
     '; G(F.conv3d(x, w, dilation=(2, 1, 2), padding=(1, 0, 1), stride=(2, 1, 1)), [x, w])'),
 'convT1d_output_size': ('L.manual_seed(0); m = nn.ConvTranspose1d(2, 3, 3, stride=2).double(); x = S(1, 2, 4)'
     '; G(m(x, output_size=[10]), [x, m.weight])'),
 'convT2d_output_size_bad': ('L.manual_seed(0); m = nn.ConvTranspose2d(2, 3, 3, stride=2).double(); x = S(1, 2, 4, 4)'
     '; m(x, output_size=[20, 20])'),
 'convT2d_output_padding_bad': (
     'x = S(1, 2, 4, 4); w = S(2, 3, 3, 3, seed=3); F.conv_transpose2d(x, w, stride=2, output_padding=2)'),
 'convT2d_output_padding_dil': ('x = S(1, 2, 4, 4); w = S(2, 3, 3, 3, seed=3)'
     '; G(F.conv_transpose2d(x, w, stride=1, dilation=2, output_padding=1), [x, w])'),
 'convT3d_groups': ('L.manual_seed(0)'
     '; m = nn.ConvTranspose3d(2, 4, 2, stride=(1, 2, 1), groups=2, output_padding=(0, 1, 0)).double()'
     '; x = S(1, 2, 2, 3, 2); G(m(x), [x, m.weight, m.bias])'),
 'convT2d_same': "L.manual_seed(0); nn.ConvTranspose2d(2, 3, 3, padding='same')",
 'convT2d_reflect': "L.manual_seed(0); nn.ConvTranspose2d(2, 3, 3, padding_mode='reflect')",
 'convT1d_unbatched': (
     'L.manual_seed(0); m = nn.ConvTranspose1d(2, 3, 3, padding=1).double(); x = S(2, 4); G(m(x), [x, m.weight])'),
 'convT2d_channels_last_bias': (
     'x = S(2, 3, 4, 4).to(memory_format=L.channels_last); w = S(3, 2, 3, 3, seed=3); b = S(2, seed=4)'
     '; G(F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1), [x, w, b])'),
 'convT2d_wrong_channels': 'x = S(1, 3, 4, 4); w = S(2, 3, 3, 3, seed=3); F.conv_transpose2d(x, w)',
 'convT2d_empty_batch': 'x = S(0, 2, 4, 4); w = S(2, 3, 3, 3, seed=3); G(F.conv_transpose2d(x, w), [x, w])',
 'maxpool1d_dil_ceil': 'x = S(2, 3, 10); G(F.max_pool1d(x, 3, 2, 1, dilation=2, ceil_mode=True), [x])',
 'maxpool1d_indices': 'x = S(2, 3, 10); F.max_pool1d(x, 3, 2, return_indices=True)',
 'maxpool2d_pad_too_big': 'x = S(1, 1, 5, 5); F.max_pool2d(x, 2, padding=2)',
 'maxpool2d_dil': 'x = S(1, 2, 7, 7); G(F.max_pool2d(x, 3, 1, 1, dilation=(2, 1)), [x])',
 'maxpool2d_unbatched_idx': 'x = S(2, 5, 5); F.max_pool2d(x, 2, return_indices=True)',
 'maxpool2d_channels_last': 'x = S(2, 3, 6, 6).to(memory_format=L.channels_last); G(F.max_pool2d(x, 3, 2, 1), [x])',
 'maxpool2d_empty_out': 'x = S(1, 1, 1, 1); F.max_pool2d(x, 2)',
 'maxpool2d_stride0': 'x = S(1, 1, 4, 4); F.max_pool2d(x, 2, 0)',
 'maxpool3d_ceil': 'x = S(1, 2, 5, 5, 5); G(F.max_pool3d(x, 2, ceil_mode=True), [x])',
 'maxpool3d_indices': 'x = S(1, 2, 4, 4, 4); F.max_pool3d(x, 2, return_indices=True)',
 'maxpool_ties': 'x = L.ones(1, 1, 4, 4, dtype=L.float64, requires_grad=True); G(F.max_pool2d(x, 2, 1), [x])',
 'maxpool_nan': ("x = L.tensor([[[1., float('nan'), 3., 2.]]], dtype=L.float64, requires_grad=True)"
     '; G(F.max_pool1d(x, 2), [x])'),
 'maxpool_int': 'x = L.arange(16).reshape(1, 1, 4, 4); F.max_pool2d(x, 2)',
 'maxpool_bf16': "x = S(1, 1, 4, 4, dtype='bfloat16'); F.max_pool2d(x, 2)",
 'avgpool1d_ceil_pad': 'x = S(2, 3, 7); G(F.avg_pool1d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False), [x])',
 'avgpool1d_ceil_pad_incl': 'x = S(2, 3, 7); G(F.avg_pool1d(x, 3, 2, 1, ceil_mode=True), [x])',
 'avgpool2d_divisor': 'x = S(2, 3, 5, 5); G(F.avg_pool2d(x, 2, divisor_override=3, ceil_mode=True), [x])',
 'avgpool2d_divisor0': 'x = S(2, 3, 5, 5); F.avg_pool2d(x, 2, divisor_override=0)',
 'avgpool2d_int': 'x = L.arange(16).reshape(1, 1, 4, 4); F.avg_pool2d(x, 2)',
 'avgpool2d_channels_last': 'x = S(2, 3, 6, 6).to(memory_format=L.channels_last); G(F.avg_pool2d(x, 3, 2, 1), [x])',
 'avgpool3d_ceil': (
     'x = S(1, 2, 5, 5, 5); G(F.avg_pool3d(x, 2, ceil_mode=True, count_include_pad=False, padding=1), [x])'),
 'adaptiveavg1d_up': 'x = S(2, 3, 4); G(F.adaptive_avg_pool1d(x, 7), [x])',
 'adaptiveavg2d_none': 'x = S(2, 3, 5, 6); G(F.adaptive_avg_pool2d(x, (None, 2)), [x])',
 'adaptiveavg2d_zero': 'x = S(2, 3, 5, 6); F.adaptive_avg_pool2d(x, 0)',
 'adaptiveavg2d_empty_in': 'x = S(2, 3, 0, 6); F.adaptive_avg_pool2d(x, 2)',
 'adaptiveavg2d_channels_last': (
     'x = S(2, 3, 5, 7).to(memory_format=L.channels_last); G(F.adaptive_avg_pool2d(x, (3, 4)), [x])'),
 'adaptivemax2d_up': 'x = S(1, 2, 3, 3); F.adaptive_max_pool2d(x, 5, return_indices=True)',
 'adaptivemax3d': 'x = S(1, 2, 4, 5, 3); G(F.adaptive_max_pool3d(x, (2, 3, 2)), [x])',
 'adaptivemax1d_idx': 'x = S(2, 3, 7); F.adaptive_max_pool1d(x, 3, return_indices=True)',
 'adaptiveavg3d_unbatched': 'x = S(2, 4, 5, 3); G(F.adaptive_avg_pool3d(x, 2), [x])',
 'lppool2d': 'x = S(2, 3, 6, 6, low=0.1); G(F.lp_pool2d(x, 3., 2), [x])',
 'lppool2d_ceil': 'x = S(2, 3, 5, 5, low=0.1); G(F.lp_pool2d(x, 2, 2, ceil_mode=True), [x])',
 'lppool1d_inf': "x = S(2, 3, 6, low=0.1); F.lp_pool1d(x, float('inf'), 2)",
 'lppool_module': 'm = nn.LPPool2d(1, (2, 3), stride=(1, 2)); x = S(1, 2, 5, 6, low=0.1); G(m(x), [x])',
 'fracmax2d_samples': ('x = S(1, 2, 7, 7); s = L.tensor([[[0.3, 0.6], [0.9, 0.1]]], dtype=L.float64)'
     '; G(F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=s), [x])'),
 'fracmax2d_ratio': ('x = S(1, 2, 8, 8); s = L.tensor([[[0.3, 0.6], [0.9, 0.1]]], dtype=L.float64)'
     '; F.fractional_max_pool2d(x, 2, output_ratio=0.5, _random_samples=s, return_indices=True)'),
 'fracmax2d_both': 'x = S(1, 2, 8, 8); F.fractional_max_pool2d(x, 2)',
 'fracmax2d_ratio_bad': 'x = S(1, 2, 8, 8); F.fractional_max_pool2d(x, 2, output_ratio=1.5)',
 'fracmax3d_samples': ('x = S(1, 1, 5, 5, 5); s = L.tensor([[[0.3, 0.6, 0.2]]], dtype=L.float64)'
     '; G(F.fractional_max_pool3d(x, 2, output_size=3, _random_samples=s), [x])'),
 'fracmax2d_too_big': ('x = S(1, 2, 4, 4); s = L.tensor([[[0.3, 0.6], [0.9, 0.1]]], dtype=L.float64)'
     '; F.fractional_max_pool2d(x, 2, output_size=4, _random_samples=s)'),
 'maxunpool1d': 'x = S(1, 2, 8); y, i = F.max_pool1d(x, 2, return_indices=True); G(F.max_unpool1d(y, i, 2), [y])',
 'maxunpool2d_outsize': ('x = S(1, 1, 5, 5); y, i = F.max_pool2d(x, 2, return_indices=True)'
     '; F.max_unpool2d(y, i, 2, output_size=(5, 5))'),
 'maxunpool2d_bad_outsize': ('x = S(1, 1, 4, 4); y, i = F.max_pool2d(x, 2, return_indices=True)'
     '; F.max_unpool2d(y, i, 2, output_size=(9, 9))'),
 'pixel_unshuffle': 'x = S(1, 2, 4, 6); G(F.pixel_unshuffle(x, 2), [x])',
 'pixel_shuffle_bad': 'x = S(1, 3, 4, 4); F.pixel_shuffle(x, 2)',
 'channel_shuffle': 'x = S(1, 6, 2, 2); G(F.channel_shuffle(x, 3), [x])',
 'upsample_nearest_exact': "x = S(1, 2, 3, 5); G(F.interpolate(x, scale_factor=1.7, mode='nearest-exact'), [x])",
 'upsample_area': "x = S(1, 2, 6, 5); G(F.interpolate(x, size=(4, 3), mode='area'), [x])",
 'upsample_linear_ac': "x = S(1, 2, 5); G(F.interpolate(x, size=9, mode='linear', align_corners=True), [x])",
 'upsample_bad_mode': "x = S(1, 2, 5); F.interpolate(x, size=9, mode='bilinear')",
 'upsample_both': 'x = S(1, 2, 5); F.interpolate(x, size=9, scale_factor=2)',
 'upsample_recompute': ('x = S(1, 2, 5, 5)'
     "; G(F.interpolate(x, scale_factor=1.3, mode='bilinear', recompute_scale_factor=True), [x])"),
 'upsample_antialias': (
     "x = S(1, 2, 8, 8); G(F.interpolate(x, size=(3, 5), mode='bilinear', antialias=True), [x], False)"),
 'flatten_unflatten': 'x = S(2, 3, 4); m = nn.Sequential(nn.Flatten(0, 1), nn.Unflatten(0, (3, 2))); G(m(x), [x])',
 'unflatten_bad': 'x = S(2, 6); nn.Unflatten(1, (4, 2))(x)',
 'zeropad_neg': 'x = S(1, 2, 5, 5); G(nn.ZeroPad2d((-1, 2, 0, -2))(x), [x])',
 'constpad3d': 'x = S(1, 1, 2, 2, 2); G(nn.ConstantPad3d(1, 3.5)(x), [x])',
 'reflect_pad_too_big': 'x = S(1, 2, 3); nn.ReflectionPad1d(3)(x)',
 'circular_pad_too_big': "x = S(1, 2, 3); F.pad(x, (4, 0), mode='circular')",
 'replicate_pad3d': 'x = S(1, 1, 2, 3, 2); G(nn.ReplicationPad3d((1, 0, 2, 1, 0, 1))(x), [x])',
 'pad_bad_mode': "x = S(1, 2, 3); F.pad(x, (1, 1), mode='wrap')",
 'pad_odd_len': 'x = S(1, 2, 3); F.pad(x, (1, 1, 1))',
}


# batch, instance, group, layer and RMS norms in training and evaluation, and their state
NORMS = {
 'bn1d_2d_input': ('m = nn.BatchNorm1d(3).double(); x = S(4, 3); y = m(x)'
     '; [G(y, [x, m.weight, m.bias]), m.running_mean, m.running_var, m.num_batches_tracked]'),
 'bn1d_batch1_train': 'm = nn.BatchNorm1d(3).double(); x = S(1, 3); m(x)',
 'bn1d_batch1_3d': 'm = nn.BatchNorm1d(3).double(); x = S(1, 3, 2); y = m(x); [y, m.running_var]',
 'bn1d_batch1_eval': 'm = nn.BatchNorm1d(3).double().eval(); x = S(1, 3); G(m(x), [x, m.weight])',
 'bn_momentum_none': ('m = nn.BatchNorm1d(3, momentum=None).double(); [m(S(4, 3, seed=i)) for i in range(3)]'
     '; [m.running_mean, m.running_var, m.num_batches_tracked]'),
 'bn_no_track': ('m = nn.BatchNorm2d(3, track_running_stats=False).double().eval(); x = S(2, 3, 2, 2)'
     '; [G(m(x), [x, m.weight]), m.running_mean, list(m.state_dict())]'),
 'bn_no_affine': ('m = nn.BatchNorm2d(3, affine=False).double(); x = S(2, 3, 2, 2)'
     '; [G(m(x), [x]), m.weight, list(m.state_dict())]'),
 'bn3d_channels_last': (
     'm = nn.BatchNorm3d(2).double(); x = S(2, 2, 2, 3, 2).to(memory_format=L.channels_last_3d); y = m(x)'
     '; [G(y, [x, m.weight]), m.running_var]'),
 'bn2d_channels_last': ('m = nn.BatchNorm2d(3).double(); x = S(2, 3, 2, 4).to(memory_format=L.channels_last)'
     '; G(m(x), [x, m.weight, m.bias])'),
 'bn2d_wrong_dim': 'm = nn.BatchNorm2d(3).double(); m(S(2, 3, 4))',
 'bn1d_wrong_dim': 'm = nn.BatchNorm1d(3).double(); m(S(2, 3, 4, 4))',
 'bn_wrong_channels': 'm = nn.BatchNorm1d(3).double(); m(S(2, 4))',
 'bn_eval_stats': (
     'm = nn.BatchNorm1d(3).double(); m(S(5, 3)); m.eval(); x = S(4, 3, seed=5); G(m(x), [x, m.weight, m.bias])'),
 'bn_float32_params_f64_input': 'm = nn.BatchNorm1d(3); x = S(4, 3); m(x)',
 'bn_bf16': "m = nn.BatchNorm1d(3); x = S(4, 3, dtype='bfloat16'); [m(x), m.running_mean]",
 'bn_empty_batch': 'm = nn.BatchNorm1d(3).double(); x = S(0, 3); m(x)',
 'bn_F_no_running_eval': 'x = S(4, 3); F.batch_norm(x, None, None, training=False)',
 'bn_F_eps_momentum': ('x = S(4, 3, 2); rm = L.zeros(3, dtype=L.float64); rv = L.ones(3, dtype=L.float64)'
     '; y = F.batch_norm(x, rm, rv, training=True, momentum=0.5, eps=0.1); [G(y, [x]), rm, rv]'),
 'bn_F_int_running': ('x = S(4, 3); rm = L.zeros(3, dtype=L.int64); rv = L.ones(3, dtype=L.int64)'
     '; F.batch_norm(x, rm, rv, training=True)'),
 'bn_reset': ('m = nn.BatchNorm1d(3).double(); m(S(4, 3)); m.reset_running_stats()'
     '; [m.running_mean, m.running_var, m.num_batches_tracked]'),
 'in1d_unbatched': 'm = nn.InstanceNorm1d(3, affine=True).double(); x = S(3, 5); G(m(x), [x, m.weight])',
 'in2d_track': ('m = nn.InstanceNorm2d(3, track_running_stats=True).double(); x = S(2, 3, 3, 3); y = m(x)'
     '; [G(y, [x]), m.running_mean, m.running_var]'),
 'in2d_track_eval': ('m = nn.InstanceNorm2d(3, track_running_stats=True).double(); m(S(2, 3, 3, 3)); m.eval()'
     '; x = S(2, 3, 3, 3, seed=4); G(m(x), [x])'),
 'in1d_single_elem': 'm = nn.InstanceNorm1d(3).double(); m(S(2, 3, 1))',
 'in2d_wrong_channels_warn': 'm = nn.InstanceNorm2d(4, affine=False).double(); x = S(2, 3, 3, 3); m(x)',
 'in2d_wrong_channels_affine': 'm = nn.InstanceNorm2d(4, affine=True).double(); x = S(2, 3, 3, 3); m(x)',
 'in3d': 'm = nn.InstanceNorm3d(2).double(); x = S(1, 2, 2, 3, 2); G(m(x), [x])',
 'gn_bad_groups': 'nn.GroupNorm(4, 6)',
 'gn_bad_input': 'm = nn.GroupNorm(2, 4).double(); m(S(2, 6, 3))',
 'gn_1d_input': 'x = S(2, 4); F.group_norm(x, 2)',
 'gn_no_affine': 'm = nn.GroupNorm(3, 6, affine=False).double(); x = S(2, 6, 2); [G(m(x), [x]), list(m.state_dict())]',
 'gn_empty_batch': 'm = nn.GroupNorm(2, 4).double(); x = S(0, 4, 3); G(m(x), [x, m.weight])',
 'gn_bf16': "m = nn.GroupNorm(2, 4).bfloat16(); x = S(2, 4, 3, dtype='bfloat16'); m(x)",
 'gn_noncontig': 'm = nn.GroupNorm(2, 4).double(); x = S(3, 4, 2).transpose(0, 2); G(m(x), [x, m.weight])',
 'ln_no_affine': ('m = nn.LayerNorm(4, elementwise_affine=False).double(); x = S(2, 3, 4)'
     '; [G(m(x), [x]), list(m.state_dict())]'),
 'ln_no_bias': ('m = nn.LayerNorm(4, bias=False).double(); x = S(2, 3, 4)'
     '; [G(m(x), [x, m.weight]), m.bias, list(m.state_dict())]'),
 'ln_wrong_shape': 'm = nn.LayerNorm(5).double(); m(S(2, 3, 4))',
 'ln_wrong_shape_2': 'x = S(2, 3, 4); F.layer_norm(x, (2, 4))',
 'ln_weight_shape_bad': 'x = S(2, 3, 4); w = S(3, seed=2); F.layer_norm(x, (4,), w)',
 'ln_0dim_shape': 'x = S(2, 3); G(F.layer_norm(x, ()), [x])',
 'ln_bf16': "m = nn.LayerNorm(4).bfloat16(); x = S(2, 4, dtype='bfloat16'); m(x)",
 'ln_mixed_f32_weight_bf16_input': "m = nn.LayerNorm(4); x = S(2, 4, dtype='bfloat16'); m(x)",
 'ln_noncontig': 'm = nn.LayerNorm(3).double(); x = S(3, 4).t(); G(m(x), [x, m.weight, m.bias])',
 'rms_eps_none': 'm = nn.RMSNorm(4).double(); x = S(2, 4); G(m(x), [x, m.weight])',
 'rms_eps_f32': "m = nn.RMSNorm([3, 4], eps=None); x = S(2, 3, 4, dtype='float32'); G(m(x), [x, m.weight])",
 'rms_no_affine': (
     'm = nn.RMSNorm(4, elementwise_affine=False); x = S(2, 4); [G(m(x), [x]), m.weight, list(m.state_dict())]'),
 'rms_bad_shape': 'm = nn.RMSNorm(5).double(); m(S(2, 4))',
 'rms_bf16': "m = nn.RMSNorm(4).bfloat16(); x = S(2, 4, dtype='bfloat16'); m(x)",
 'rms_zero_input': 'x = L.zeros(2, 4, dtype=L.float64, requires_grad=True); G(F.rms_norm(x, (4,)), [x])',
 'lrn_big': 'x = S(2, 5, 3, 3); G(F.local_response_norm(x, 3, alpha=0.1, beta=0.5, k=2.), [x])',
 'lrn_2d': 'x = S(2, 5); F.local_response_norm(x, 3)',
 'lrn_empty': 'x = S(0, 5, 2); G(F.local_response_norm(x, 3), [x], False)',
 'bn_state_dict_roundtrip': (
     'm = nn.BatchNorm1d(3).double(); m(S(4, 3)); sd = m.state_dict(); m2 = nn.BatchNorm1d(3).double()'
     '; m2.load_state_dict(sd); [m2.running_mean, m2.num_batches_tracked, list(sd)]'),
 'bn_load_old_version': (
     "m = nn.BatchNorm1d(3); sd = m.state_dict(); del sd['num_batches_tracked']; r = m.load_state_dict(sd)"
     '; [m.num_batches_tracked, list(r.missing_keys)]'),
 'bn_num_batches_dtype': 'm = nn.BatchNorm1d(3); m.num_batches_tracked.dtype',
 'bn_double_backward_eval': ('m = nn.BatchNorm2d(2).double(); m(S(3, 2, 2, 2)); m.eval(); x = S(2, 2, 2, 2, seed=6)'
     '; G(m(x * x), [x, m.weight])'),
 'syncbn_cpu_forward': 'm = nn.SyncBatchNorm(3).double(); m(S(2, 3, 2))',
}


# embeddings and bags, recurrent layers and cells, packed sequences
SEQUENCES = {
 'emb_neg_padding': (
     'L.manual_seed(0); m = nn.Embedding(5, 3, padding_idx=-2).double(); i = L.tensor([[0, 3], [3, 4]])'
     '; [m.padding_idx, G(m(i), [m.weight])]'),
 'emb_padding_out_of_range': 'nn.Embedding(5, 3, padding_idx=5)',
 'emb_padding_neg_out_of_range': 'nn.Embedding(5, 3, padding_idx=-6)',
 'emb_max_norm_l1': (
     'L.manual_seed(0); m = nn.Embedding(5, 3, max_norm=0.5, norm_type=1.).double(); i = L.tensor([0, 0, 2])'
     '; y = m(i); [y, m.weight]'),
 'emb_max_norm_inplace_weight': (
     'L.manual_seed(0); m = nn.Embedding(5, 3, max_norm=1.).double(); i = L.tensor([1, 4]); m(i); m.weight'),
 'emb_scale_grad_freq': ('L.manual_seed(0); m = nn.Embedding(5, 3, scale_grad_by_freq=True).double()'
     '; i = L.tensor([[0, 0, 2], [0, 4, 4]]); y = m(i); G(y, [m.weight])'),
 'emb_scale_grad_padding': ('L.manual_seed(0); m = nn.Embedding(5, 3, scale_grad_by_freq=True, padding_idx=0).double()'
     '; i = L.tensor([0, 0, 2, 2]); G(m(i), [m.weight], False)'),
 'emb_index_oor': 'L.manual_seed(0); m = nn.Embedding(5, 3); m(L.tensor([5]))',
 'emb_index_neg': 'L.manual_seed(0); m = nn.Embedding(5, 3); m(L.tensor([-1]))',
 'emb_float_index': 'L.manual_seed(0); m = nn.Embedding(5, 3); m(L.tensor([1.]))',
 'emb_int32_index': (
     'L.manual_seed(0); m = nn.Embedding(5, 3).double(); G(m(L.tensor([1, 2], dtype=L.int32)), [m.weight])'),
 'emb_0dim_index': 'L.manual_seed(0); m = nn.Embedding(5, 3).double(); G(m(L.tensor(3)), [m.weight])',
 'emb_empty_index': 'L.manual_seed(0); m = nn.Embedding(5, 3).double(); G(m(L.zeros(0, 2, dtype=L.long)), [m.weight])',
 'emb_from_pretrained': ('w = S(4, 3); m = nn.Embedding.from_pretrained(w, padding_idx=1)'
     '; [m.weight.requires_grad, m(L.tensor([1, 2]))]'),
 'emb_from_pretrained_unfrozen': (
     'w = S(4, 3, grad=False); m = nn.Embedding.from_pretrained(w, freeze=False, max_norm=1.)'
     '; y = m(L.tensor([1, 2])); [y, G(y, [m.weight], False)]'),
 'emb_from_pretrained_1d': 'w = S(4, grad=False); nn.Embedding.from_pretrained(w)',
 'emb_sparse_grad': (
     'L.manual_seed(0); m = nn.Embedding(5, 3, sparse=True).double(); m(L.tensor([1, 1, 3])).sum().backward()'
     '; m.weight.grad.to_dense()'),
 'emb_F_weight_1d': 'w = S(5); F.embedding(L.tensor([1]), w)',
 'emb_noncontig_weight': 'w = S(3, 5).t(); i = L.tensor([[1, 4], [0, 0]]); G(F.embedding(i, w), [w])',
 'emb_bf16': "w = S(5, 3, dtype='bfloat16'); F.embedding(L.tensor([1, 4]), w)",
 'embbag_sum_psw': ("L.manual_seed(0); m = nn.EmbeddingBag(6, 3, mode='sum').double(); i = L.tensor([1, 2, 4, 5, 4])"
     '; o = L.tensor([0, 2]); w = S(5, seed=3); G(m(i, o, per_sample_weights=w), [m.weight, w])'),
 'embbag_max': ("L.manual_seed(0); m = nn.EmbeddingBag(6, 3, mode='max').double(); i = L.tensor([1, 2, 4, 5, 4])"
     '; o = L.tensor([0, 2]); G(m(i, o), [m.weight])'),
 'embbag_max_psw': (
     "L.manual_seed(0); m = nn.EmbeddingBag(6, 3, mode='max').double(); i = L.tensor([1, 2]); o = L.tensor([0])"
     '; m(i, o, per_sample_weights=S(2))'),
 'embbag_mean_psw': (
     "L.manual_seed(0); m = nn.EmbeddingBag(6, 3, mode='mean').double(); i = L.tensor([1, 2]); o = L.tensor([0])"
     '; m(i, o, per_sample_weights=S(2))'),
 'embbag_2d': ('L.manual_seed(0); m = nn.EmbeddingBag(6, 3).double(); i = L.tensor([[1, 2, 3], [4, 5, 0]])'
     '; G(m(i), [m.weight])'),
 'embbag_2d_with_offsets': (
     'L.manual_seed(0); m = nn.EmbeddingBag(6, 3).double(); i = L.tensor([[1, 2, 3], [4, 5, 0]])'
     '; m(i, L.tensor([0, 1]))'),
 'embbag_1d_no_offsets': 'L.manual_seed(0); m = nn.EmbeddingBag(6, 3).double(); m(L.tensor([1, 2]))',
 'embbag_empty_bags': ("L.manual_seed(0); m = nn.EmbeddingBag(6, 3, mode='max').double(); i = L.tensor([1, 2, 4])"
     '; o = L.tensor([0, 0, 3, 3]); G(m(i, o), [m.weight])'),
 'embbag_last_offset': ("L.manual_seed(0); m = nn.EmbeddingBag(6, 3, mode='mean', include_last_offset=True).double()"
     '; i = L.tensor([1, 2, 4, 5]); o = L.tensor([0, 1, 4]); G(m(i, o), [m.weight])'),
 'embbag_padding_mean': ("L.manual_seed(0); m = nn.EmbeddingBag(6, 3, mode='mean', padding_idx=2).double()"
     '; i = L.tensor([2, 2, 4, 2]); o = L.tensor([0, 2]); G(m(i, o), [m.weight])'),
 'embbag_padding_max': ("L.manual_seed(0); m = nn.EmbeddingBag(6, 3, mode='max', padding_idx=2).double()"
     '; i = L.tensor([2, 2, 4, 2]); o = L.tensor([0, 2]); G(m(i, o), [m.weight])'),
 'embbag_max_norm': ('L.manual_seed(0); m = nn.EmbeddingBag(6, 3, max_norm=0.3).double(); i = L.tensor([1, 2, 1])'
     '; o = L.tensor([0, 1]); y = m(i, o); [y, m.weight]'),
 'embbag_bad_offsets_first': (
     'L.manual_seed(0); m = nn.EmbeddingBag(6, 3).double(); m(L.tensor([1, 2]), L.tensor([1]))'),
 'embbag_bad_mode': "nn.EmbeddingBag(6, 3, mode='min')",
 'embbag_psw_shape': ('L.manual_seed(0); m = nn.EmbeddingBag(6, 3).double()'
     '; m(L.tensor([1, 2, 3]), L.tensor([0]), per_sample_weights=S(2))'),
 'rnn_relu_bf': ("L.manual_seed(0); m = nn.RNN(3, 4, nonlinearity='relu', batch_first=True).double(); x = S(2, 5, 3)"
     '; y, h = m(x); G(y, [x] + list(m.parameters()))'),
 'rnn_bad_nonlin': "nn.RNN(3, 4, nonlinearity='gelu')",
 'rnn_h0': ('L.manual_seed(0); m = nn.RNN(3, 4, num_layers=2, bidirectional=True).double(); x = S(5, 2, 3)'
     '; h = S(4, 2, 4, seed=2); y, hn = m(x, h); G(hn, [x, h])'),
 'rnn_h0_bad': (
     'L.manual_seed(0); m = nn.RNN(3, 4, num_layers=2).double(); x = S(5, 2, 3); h = S(1, 2, 4, seed=2); m(x, h)'),
 'rnn_unbatched': (
     'L.manual_seed(0); m = nn.RNN(3, 4).double(); x = S(5, 3); y, h = m(x); [y.shape, h.shape, G(y, [x])]'),
 'rnn_unbatched_h_batched': 'L.manual_seed(0); m = nn.RNN(3, 4).double(); x = S(5, 3); m(x, S(1, 2, 4))',
 'rnn_4d': 'L.manual_seed(0); m = nn.RNN(3, 4).double(); m(S(5, 2, 2, 3))',
 'rnn_wrong_feat': 'L.manual_seed(0); m = nn.RNN(3, 4).double(); m(S(5, 2, 4))',
 'rnn_dtype_mix': 'L.manual_seed(0); m = nn.RNN(3, 4); m(S(5, 2, 3))',
 'rnn_empty_seq': 'L.manual_seed(0); m = nn.RNN(3, 4).double(); m(S(0, 2, 3))',
 'rnn_no_bias': ('L.manual_seed(0); m = nn.RNN(3, 4, bias=False).double(); x = S(3, 2, 3)'
     '; [list(m.state_dict()), G(m(x)[0], [x])]'),
 'rnn_dropout_eval': ('L.manual_seed(0); m = nn.RNN(3, 4, num_layers=2, dropout=0.5).double().eval(); x = S(3, 2, 3)'
     '; G(m(x)[0], [x])'),
 'rnn_dropout_1layer_warn': 'L.manual_seed(0); nn.RNN(3, 4, dropout=0.5); 1',
 'rnn_dropout_bad': 'nn.RNN(3, 4, dropout=1.5)',
 'gru_bf_bidir': ('L.manual_seed(0); m = nn.GRU(3, 4, batch_first=True, bidirectional=True, num_layers=2).double()'
     '; x = S(2, 4, 3); y, h = m(x); G(y, [x] + list(m.parameters())[:4])'),
 'gru_h0_unbatched': ('L.manual_seed(0); m = nn.GRU(3, 4).double(); x = S(4, 3); h = S(1, 4, seed=3); y, hn = m(x, h)'
     '; G(hn, [x, h])'),
 'lstm_proj': (
     'L.manual_seed(0); m = nn.LSTM(3, 4, proj_size=2, num_layers=2).double(); x = S(4, 2, 3); y, (h, c) = m(x)'
     '; [y.shape, h.shape, c.shape, G(y, [x] + list(m.parameters()))]'),
 'lstm_proj_bad': 'nn.LSTM(3, 4, proj_size=4)',
 'lstm_proj_neg': 'nn.LSTM(3, 4, proj_size=-1)',
 'lstm_hc_bf': ('L.manual_seed(0); m = nn.LSTM(3, 4, batch_first=True, bidirectional=True).double(); x = S(2, 5, 3)'
     '; h = S(2, 2, 4, seed=2); c = S(2, 2, 4, seed=3); y, (hn, cn) = m(x, (h, c)); G(y, [x, h, c])'),
 'lstm_c_bad': 'L.manual_seed(0); m = nn.LSTM(3, 4).double(); x = S(5, 2, 3); m(x, (S(1, 2, 4), S(1, 2, 3)))',
 'lstm_h_tensor_not_tuple': 'L.manual_seed(0); m = nn.LSTM(3, 4).double(); x = S(5, 2, 3); m(x, S(1, 2, 4))',
 'lstm_noncontig': 'L.manual_seed(0); m = nn.LSTM(3, 4).double(); x = S(2, 5, 3).transpose(0, 1); G(m(x)[0], [x])',
 'lstm_empty_batch': 'L.manual_seed(0); m = nn.LSTM(3, 4).double(); x = S(5, 0, 3); y, (h, c) = m(x); [y, h, c]',
 'packed_unsorted': ('L.manual_seed(0); m = nn.LSTM(3, 4).double(); x = S(5, 3, 3)'
     '; p = nn.utils.rnn.pack_padded_sequence(x, L.tensor([2, 5, 3]), enforce_sorted=False); y, (h, c) = m(p)'
     '; o, ln = nn.utils.rnn.pad_packed_sequence(y, total_length=6); [o, ln, h, c, G(o, [x])]'),
 'packed_sorted_required': 'x = S(5, 3, 3); nn.utils.rnn.pack_padded_sequence(x, [2, 5, 3])',
 'packed_zero_len': 'x = S(5, 3, 3); nn.utils.rnn.pack_padded_sequence(x, [5, 3, 0])',
 'packed_too_long': 'x = S(5, 3, 3); nn.utils.rnn.pack_padded_sequence(x, [6, 3, 1])',
 'packed_bf_gru': ('L.manual_seed(0); m = nn.GRU(3, 4, batch_first=True, bidirectional=True).double(); x = S(3, 5, 3)'
     '; p = nn.utils.rnn.pack_padded_sequence(x, [5, 4, 2], batch_first=True); y, h = m(p)'
     '; o, ln = nn.utils.rnn.pad_packed_sequence(y, batch_first=True, padding_value=-1.); [o, h, G(h, [x])]'),
 'packed_total_length_short': ('x = S(5, 3, 3); p = nn.utils.rnn.pack_padded_sequence(x, [5, 3, 1])'
     '; nn.utils.rnn.pad_packed_sequence(p, total_length=4)'),
 'pack_sequence': ('a = S(3, 2); b = S(1, 2, seed=2); c = S(2, 2, seed=3)'
     '; p = nn.utils.rnn.pack_sequence([a, b, c], enforce_sorted=False)'
     '; [p.data, p.batch_sizes, p.sorted_indices, p.unsorted_indices]'),
 'pad_sequence_left': ('a = S(3, 2); b = S(1, 2, seed=2)'
     "; G(nn.utils.rnn.pad_sequence([a, b], batch_first=True, padding_value=2., padding_side='left'), [a, b])"),
 'unpad_sequence': ('a = S(3, 2); b = S(1, 2, seed=2); p = nn.utils.rnn.pad_sequence([a, b])'
     '; nn.utils.rnn.unpad_sequence(p, L.tensor([3, 1]))'),
 'rnn_cell_unbatched': (
     "L.manual_seed(0); c = nn.RNNCell(3, 2, nonlinearity='relu').double(); x = S(3); G(c(x), [x, c.weight_ih])"),
 'rnn_cell_bad_dim': 'L.manual_seed(0); c = nn.RNNCell(3, 2).double(); c(S(2, 2, 3))',
 'lstm_cell_hx': (
     'L.manual_seed(0); c = nn.LSTMCell(3, 2).double(); x = S(4, 3); h = S(4, 2, seed=2); cc = S(4, 2, seed=3)'
     '; h1, c1 = c(x, (h, cc)); G(L.cat([h1, c1], 1), [x, h, cc])'),
 'gru_cell_bad_h': 'L.manual_seed(0); c = nn.GRUCell(3, 2).double(); c(S(4, 3), S(3, 2))',
 'lstm_flatten_params': (
     'L.manual_seed(0); m = nn.LSTM(3, 4).double(); m.flatten_parameters(); [n for n, _ in m.named_parameters()]'),
 'lstm_all_weights': ('L.manual_seed(0); m = nn.LSTM(3, 4, num_layers=2, proj_size=2)'
     '; [[tuple(w.shape) for w in layer] for layer in m.all_weights]'),
 'rnn_repr': 'L.manual_seed(0); repr(nn.GRU(3, 4, num_layers=2, batch_first=True, dropout=0.1, bidirectional=True))',
}


# transformer layers, multi-head attention with masks, scaled dot-product attention
ATTENTION = {
 'tel_norm_first_gelu_bf': ('L.manual_seed(0)'
     "; m = nn.TransformerEncoderLayer(4, 2, 6, dropout=0., activation='gelu', norm_first=True,"
     ' batch_first=True).double()'
     '; x = S(2, 3, 4); G(m(x), [x] + list(m.parameters())[:2])'),
 'tel_key_padding': ('L.manual_seed(0); m = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.).double(); x = S(3, 2, 4)'
     '; kpm = L.tensor([[False, False, True], [False, False, False]]); G(m(x, src_key_padding_mask=kpm), [x])'),
 'tel_float_mask': ('L.manual_seed(0); m = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.).double(); x = S(3, 2, 4)'
     '; mask = nn.Transformer.generate_square_subsequent_mask(3, dtype=L.float64); G(m(x, src_mask=mask), [x])'),
 'tel_causal': ('L.manual_seed(0); m = nn.TransformerEncoderLayer(4, 2, 6, dropout=0., batch_first=True).double()'
     '; x = S(2, 3, 4); mask = nn.Transformer.generate_square_subsequent_mask(3, dtype=L.float64)'
     '; G(m(x, src_mask=mask, is_causal=True), [x])'),
 'tel_mask_dtype_mismatch': (
     'L.manual_seed(0); m = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.).double(); x = S(3, 2, 4)'
     '; mask = L.zeros(3, 3, dtype=L.bool); kpm = L.zeros(2, 3); m(x, src_mask=mask, src_key_padding_mask=kpm)'),
 'tel_callable_act': (
     'L.manual_seed(0); m = nn.TransformerEncoderLayer(4, 2, 6, dropout=0., activation=F.silu).double()'
     '; x = S(3, 2, 4); G(m(x), [x])'),
 'tel_bad_act': "nn.TransformerEncoderLayer(4, 2, 6, activation='tanh')",
 'te_two_layers_norm': ('L.manual_seed(0); l = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.)'
     '; m = nn.TransformerEncoder(l, 2, norm=nn.LayerNorm(4), enable_nested_tensor=False).double()'
     '; x = S(3, 2, 4); G(m(x), [x])'),
 'te_kpm': ('L.manual_seed(0); l = nn.TransformerEncoderLayer(4, 2, 6, dropout=0., batch_first=True)'
     '; m = nn.TransformerEncoder(l, 2, enable_nested_tensor=False).double().eval(); x = S(2, 3, 4)'
     '; kpm = L.tensor([[False, False, True], [False, False, False]]); G(m(x, src_key_padding_mask=kpm), [x])'),
 'tdl': ('L.manual_seed(0); m = nn.TransformerDecoderLayer(4, 2, 6, dropout=0.).double(); x = S(3, 2, 4)'
     '; mem = S(5, 2, 4, seed=2); G(m(x, mem, tgt_is_causal=False), [x, mem])'),
 'tdl_masks': ('L.manual_seed(0)'
     '; m = nn.TransformerDecoderLayer(4, 2, 6, dropout=0., norm_first=True, batch_first=True).double()'
     '; x = S(2, 3, 4); mem = S(2, 5, 4, seed=2)'
     '; tm = nn.Transformer.generate_square_subsequent_mask(3, dtype=L.float64)'
     '; mkpm = L.tensor([[False, True, False, False, True], [False] * 5])'
     '; G(m(x, mem, tgt_mask=tm, memory_key_padding_mask=mkpm), [x, mem])'),
 'transformer_full': ('L.manual_seed(0); m = nn.Transformer(4, 2, 1, 1, 6, dropout=0.).double(); s = S(3, 2, 4)'
     '; t = S(2, 2, 4, seed=2); G(m(s, t), [s, t])'),
 'transformer_batch_mismatch': (
     'L.manual_seed(0); m = nn.Transformer(4, 2, 1, 1, 6, dropout=0.).double(); m(S(3, 2, 4), S(2, 3, 4))'),
 'transformer_feat_mismatch': (
     'L.manual_seed(0); m = nn.Transformer(4, 2, 1, 1, 6, dropout=0.).double(); m(S(3, 2, 4), S(2, 2, 5))'),
 'square_mask': 'nn.Transformer.generate_square_subsequent_mask(4)',
 'mha_bool_kpm': ('L.manual_seed(0); m = nn.MultiheadAttention(4, 2).double(); x = S(3, 2, 4)'
     '; kpm = L.tensor([[False, True, False], [False, False, False]]); o, w = m(x, x, x, key_padding_mask=kpm)'
     '; G(o, [x]) + [w]'),
 'mha_float_kpm': ('L.manual_seed(0); m = nn.MultiheadAttention(4, 2).double(); x = S(3, 2, 4)'
     '; kpm = L.tensor([[0., -1., 0.], [0., 0., -2.]], dtype=L.float64); o, w = m(x, x, x, key_padding_mask=kpm)'
     '; [o, w]'),
 'mha_attn_mask_3d': ('L.manual_seed(0); m = nn.MultiheadAttention(4, 2, batch_first=True).double(); x = S(2, 3, 4)'
     '; am = S(4, 3, 3, seed=5, grad=False); o, w = m(x, x, x, attn_mask=am, average_attn_weights=False)'
     '; G(o, [x]) + [w]'),
 'mha_attn_mask_bad_shape': ('L.manual_seed(0); m = nn.MultiheadAttention(4, 2).double(); x = S(3, 2, 4)'
     '; m(x, x, x, attn_mask=L.zeros(2, 3, dtype=L.float64))'),
 'mha_attn_mask_3d_bad': ('L.manual_seed(0); m = nn.MultiheadAttention(4, 2).double(); x = S(3, 2, 4)'
     '; m(x, x, x, attn_mask=L.zeros(2, 3, 3, dtype=L.float64))'),
 'mha_all_masked': ('L.manual_seed(0); m = nn.MultiheadAttention(4, 2).double(); x = S(3, 2, 4)'
     '; kpm = L.ones(2, 3, dtype=L.bool); o, w = m(x, x, x, key_padding_mask=kpm); [o, w]'),
 'mha_kdim_vdim': ('L.manual_seed(0); m = nn.MultiheadAttention(4, 2, kdim=3, vdim=5).double(); q = S(2, 2, 4)'
     '; k = S(3, 2, 3, seed=2); v = S(3, 2, 5, seed=3); o, w = m(q, k, v)'
     '; [G(o, [q, k, v]), w, list(m.state_dict())]'),
 'mha_bias_kv_zero_attn': (
     'L.manual_seed(0); m = nn.MultiheadAttention(4, 2, add_bias_kv=True, add_zero_attn=True).double()'
     '; x = S(3, 2, 4); kpm = L.tensor([[False, True, False], [False, False, False]])'
     '; o, w = m(x, x, x, key_padding_mask=kpm); [G(o, [x]), w]'),
 'mha_unbatched': (
     'L.manual_seed(0); m = nn.MultiheadAttention(4, 2).double(); x = S(3, 4); o, w = m(x, x, x); [G(o, [x]), w]'),
 'mha_unbatched_mask': ('L.manual_seed(0); m = nn.MultiheadAttention(4, 2).double(); x = S(3, 4)'
     '; o, w = m(x, x, x, key_padding_mask=L.tensor([False, True, False]), attn_mask=L.tensor([[False, True,'
     ' True], [False, False, True], [False, False, False]]))'
     '; [o, w]'),
 'mha_no_weights': ('L.manual_seed(0); m = nn.MultiheadAttention(4, 2, batch_first=True).double(); x = S(2, 3, 4)'
     '; o, w = m(x, x, x, need_weights=False); [G(o, [x]), w]'),
 'mha_is_causal_no_mask': (
     'L.manual_seed(0); m = nn.MultiheadAttention(4, 2).double(); x = S(3, 2, 4); m(x, x, x, is_causal=True)'),
 'mha_is_causal': ('L.manual_seed(0); m = nn.MultiheadAttention(4, 2).double(); x = S(3, 2, 4)'
     '; am = nn.Transformer.generate_square_subsequent_mask(3, dtype=L.float64)'
     '; o, w = m(x, x, x, attn_mask=am, is_causal=True, need_weights=False); G(o, [x])'),
 'mha_bad_embed': 'nn.MultiheadAttention(5, 2)',
 'mha_wrong_dim_q': (
     'L.manual_seed(0); m = nn.MultiheadAttention(4, 2).double(); m(S(3, 2, 5), S(3, 2, 4), S(3, 2, 4))'),
 'mha_kv_len_mismatch': (
     'L.manual_seed(0); m = nn.MultiheadAttention(4, 2).double(); m(S(3, 2, 4), S(3, 2, 4), S(2, 2, 4))'),
 'mha_dropout_eval': ('L.manual_seed(0); m = nn.MultiheadAttention(4, 2, dropout=0.5).double().eval(); x = S(3, 2, 4)'
     '; o, w = m(x, x, x); [o, w]'),
 'mha_bool_and_float_masks': ('L.manual_seed(0); m = nn.MultiheadAttention(4, 2).double(); x = S(3, 2, 4)'
     '; kpm = L.tensor([[False, True, False], [False, False, False]]); am = L.zeros(3, 3, dtype=L.float64)'
     '; o, w = m(x, x, x, key_padding_mask=kpm, attn_mask=am); [o, w]'),
 'mha_byte_mask': ('L.manual_seed(0); m = nn.MultiheadAttention(4, 2).double(); x = S(3, 2, 4)'
     '; m(x, x, x, attn_mask=L.zeros(3, 3, dtype=L.uint8))'),
 'mha_no_bias': ('L.manual_seed(0); m = nn.MultiheadAttention(4, 2, bias=False).double(); x = S(3, 2, 4)'
     '; [list(m.state_dict()), G(m(x, x, x)[0], [x])]'),
 'mha_float32_input_double_module': (
     "L.manual_seed(0); m = nn.MultiheadAttention(4, 2).double(); x = S(3, 2, 4, dtype='float32'); m(x, x, x)"),
 'sdpa_bool_mask_all_false_row': (
     'q = S(1, 2, 3, 4); m = L.tensor([[True, True, True], [False, False, False], [True, False, True]])'
     '; G(F.scaled_dot_product_attention(q, q, q, attn_mask=m), [q])'),
 'sdpa_gqa': ('q = S(1, 4, 3, 2); k = S(1, 2, 3, 2, seed=2); v = S(1, 2, 3, 2, seed=3)'
     '; G(F.scaled_dot_product_attention(q, k, v, enable_gqa=True), [q, k, v])'),
 'sdpa_gqa_off': 'q = S(1, 4, 3, 2); k = S(1, 2, 3, 2, seed=2); F.scaled_dot_product_attention(q, k, k)',
 'sdpa_scale': ('q = S(2, 3, 4); k = S(2, 5, 4, seed=2); v = S(2, 5, 3, seed=3)'
     '; G(F.scaled_dot_product_attention(q, k, v, scale=0.3), [q, k, v])'),
 'sdpa_causal_rect': (
     'q = S(1, 2, 4); k = S(1, 3, 4, seed=2); G(F.scaled_dot_product_attention(q, k, k, is_causal=True), [q, k])'),
 'sdpa_causal_and_mask': ('q = S(1, 2, 4)'
     '; F.scaled_dot_product_attention(q, q, q, attn_mask=L.ones(2, 2, dtype=L.bool), is_causal=True)'),
 'sdpa_empty_seq': 'q = S(1, 0, 4); k = S(1, 3, 4, seed=2); G(F.scaled_dot_product_attention(q, k, k), [q, k])',
 'sdpa_empty_keys': 'q = S(1, 2, 4); k = S(1, 0, 4, seed=2); F.scaled_dot_product_attention(q, k, k)',
 'sdpa_dtype_mismatch': "q = S(1, 2, 4); k = S(1, 2, 4, dtype='float32'); F.scaled_dot_product_attention(q, k, k)",
 'sdpa_1d': 'q = S(4); F.scaled_dot_product_attention(q, q, q)',
 'sdpa_bf16': "q = S(1, 2, 3, 4, dtype='bfloat16'); F.scaled_dot_product_attention(q, q, q)",
 'sdpa_float_mask_bcast': ('q = S(2, 2, 3, 4); m = S(1, 1, 3, 3, seed=4, grad=False)'
     '; G(F.scaled_dot_product_attention(q, q, q, attn_mask=m), [q])'),
 'sdpa_mask_grad': ('q = S(2, 2, 3, 4); m = S(2, 1, 3, 3, seed=4)'
     '; G(F.scaled_dot_product_attention(q, q, q, attn_mask=m), [q, m])'),
}


# activations in place and not, on odd dtypes and shapes; dropout variants
ACTIVATIONS = {
 'ReLU_inplace_nonleaf': (
     'm = nn.ReLU(inplace=True).eval(); x = S(2, 3); y = x * 1.5; z = m(y); [z is y, y._version, G(z, [x])]'),
 'ReLU_inplace_leaf': 'm = nn.ReLU(inplace=True); x = S(2, 3); m(x)',
 'ReLU_inplace_noncontig': 'm = nn.ReLU(inplace=True).eval(); x = S(3, 4); y = (x * 1.).t(); G(m(y), [x])',
 'ReLU_inplace_view_of_leaf_nograd': 'm = nn.ReLU(inplace=True).eval(); x = S(3, 4, grad=False); v = x[1:]; m(v); x',
 'ReLU_int': 'm = nn.ReLU().eval(); m(L.arange(-3, 3))',
 'ReLU_bf16': "m = nn.ReLU().eval(); m(S(5, dtype='bfloat16'))",
 'ReLU_0dim': 'm = nn.ReLU().eval(); x = S(); G(m(x * 1.), [x])',
 'ReLU_empty': 'm = nn.ReLU().eval(); x = S(0, 3); G(m(x * 1.), [x])',
 'ReLU6_inplace_nonleaf': (
     'm = nn.ReLU6(inplace=True).eval(); x = S(2, 3); y = x * 1.5; z = m(y); [z is y, y._version, G(z, [x])]'),
 'ReLU6_inplace_leaf': 'm = nn.ReLU6(inplace=True); x = S(2, 3); m(x)',
 'ReLU6_inplace_noncontig': 'm = nn.ReLU6(inplace=True).eval(); x = S(3, 4); y = (x * 1.).t(); G(m(y), [x])',
 'ReLU6_inplace_view_of_leaf_nograd': 'm = nn.ReLU6(inplace=True).eval(); x = S(3, 4, grad=False); v = x[1:]; m(v); x',
 'ReLU6_int': 'm = nn.ReLU6().eval(); m(L.arange(-3, 3))',
 'ReLU6_bf16': "m = nn.ReLU6().eval(); m(S(5, dtype='bfloat16'))",
 'ReLU6_0dim': 'm = nn.ReLU6().eval(); x = S(); G(m(x * 1.), [x])',
 'ReLU6_empty': 'm = nn.ReLU6().eval(); x = S(0, 3); G(m(x * 1.), [x])',
 'ELU_inplace_nonleaf': (
     'm = nn.ELU(0.5, inplace=True).eval(); x = S(2, 3); y = x * 1.5; z = m(y); [z is y, y._version, G(z, [x])]'),
 'ELU_inplace_leaf': 'm = nn.ELU(0.5, inplace=True); x = S(2, 3); m(x)',
 'ELU_inplace_noncontig': 'm = nn.ELU(0.5, inplace=True).eval(); x = S(3, 4); y = (x * 1.).t(); G(m(y), [x])',
 'ELU_inplace_view_of_leaf_nograd': (
     'm = nn.ELU(0.5, inplace=True).eval(); x = S(3, 4, grad=False); v = x[1:]; m(v); x'),
 'ELU_int': 'm = nn.ELU(0.5).eval(); m(L.arange(-3, 3))',
 'ELU_bf16': "m = nn.ELU(0.5).eval(); m(S(5, dtype='bfloat16'))",
 'ELU_0dim': 'm = nn.ELU(0.5).eval(); x = S(); G(m(x * 1.), [x])',
 'ELU_empty': 'm = nn.ELU(0.5).eval(); x = S(0, 3); G(m(x * 1.), [x])',
 'CELU_inplace_nonleaf': (
     'm = nn.CELU(1.5, inplace=True).eval(); x = S(2, 3); y = x * 1.5; z = m(y); [z is y, y._version, G(z, [x])]'),
 'CELU_inplace_leaf': 'm = nn.CELU(1.5, inplace=True); x = S(2, 3); m(x)',
 'CELU_inplace_noncontig': 'm = nn.CELU(1.5, inplace=True).eval(); x = S(3, 4); y = (x * 1.).t(); G(m(y), [x])',
 'CELU_inplace_view_of_leaf_nograd': (
     'm = nn.CELU(1.5, inplace=True).eval(); x = S(3, 4, grad=False); v = x[1:]; m(v); x'),
 'CELU_int': 'm = nn.CELU(1.5).eval(); m(L.arange(-3, 3))',
 'CELU_bf16': "m = nn.CELU(1.5).eval(); m(S(5, dtype='bfloat16'))",
 'CELU_0dim': 'm = nn.CELU(1.5).eval(); x = S(); G(m(x * 1.), [x])',
 'CELU_empty': 'm = nn.CELU(1.5).eval(); x = S(0, 3); G(m(x * 1.), [x])',
 'SELU_inplace_nonleaf': (
     'm = nn.SELU(inplace=True).eval(); x = S(2, 3); y = x * 1.5; z = m(y); [z is y, y._version, G(z, [x])]'),
 'SELU_inplace_leaf': 'm = nn.SELU(inplace=True); x = S(2, 3); m(x)',
 'SELU_inplace_noncontig': 'm = nn.SELU(inplace=True).eval(); x = S(3, 4); y = (x * 1.).t(); G(m(y), [x])',
 'SELU_inplace_view_of_leaf_nograd': 'm = nn.SELU(inplace=True).eval(); x = S(3, 4, grad=False); v = x[1:]; m(v); x',
 'SELU_int': 'm = nn.SELU().eval(); m(L.arange(-3, 3))',
 'SELU_bf16': "m = nn.SELU().eval(); m(S(5, dtype='bfloat16'))",
 'SELU_0dim': 'm = nn.SELU().eval(); x = S(); G(m(x * 1.), [x])',
 'SELU_empty': 'm = nn.SELU().eval(); x = S(0, 3); G(m(x * 1.), [x])',
 'LeakyReLU_inplace_nonleaf': ('m = nn.LeakyReLU(0.1, inplace=True).eval(); x = S(2, 3); y = x * 1.5; z = m(y)'
     '; [z is y, y._version, G(z, [x])]'),
 'LeakyReLU_inplace_leaf': 'm = nn.LeakyReLU(0.1, inplace=True); x = S(2, 3); m(x)',
 'LeakyReLU_inplace_noncontig': (
     'm = nn.LeakyReLU(0.1, inplace=True).eval(); x = S(3, 4); y = (x * 1.).t(); G(m(y), [x])'),
 'LeakyReLU_inplace_view_of_leaf_nograd': (
     'm = nn.LeakyReLU(0.1, inplace=True).eval(); x = S(3, 4, grad=False); v = x[1:]; m(v); x'),
 'LeakyReLU_int': 'm = nn.LeakyReLU(0.1).eval(); m(L.arange(-3, 3))',
 'LeakyReLU_bf16': "m = nn.LeakyReLU(0.1).eval(); m(S(5, dtype='bfloat16'))",
 'LeakyReLU_0dim': 'm = nn.LeakyReLU(0.1).eval(); x = S(); G(m(x * 1.), [x])',
 'LeakyReLU_empty': 'm = nn.LeakyReLU(0.1).eval(); x = S(0, 3); G(m(x * 1.), [x])',
 'Hardtanh_inplace_nonleaf': ('m = nn.Hardtanh(-0.5, 1., inplace=True).eval(); x = S(2, 3); y = x * 1.5; z = m(y)'
     '; [z is y, y._version, G(z, [x])]'),
 'Hardtanh_inplace_leaf': 'm = nn.Hardtanh(-0.5, 1., inplace=True); x = S(2, 3); m(x)',
 'Hardtanh_inplace_noncontig': (
     'm = nn.Hardtanh(-0.5, 1., inplace=True).eval(); x = S(3, 4); y = (x * 1.).t(); G(m(y), [x])'),
 'Hardtanh_inplace_view_of_leaf_nograd': (
     'm = nn.Hardtanh(-0.5, 1., inplace=True).eval(); x = S(3, 4, grad=False); v = x[1:]; m(v); x'),
 'Hardtanh_int': 'm = nn.Hardtanh(-0.5, 1.).eval(); m(L.arange(-3, 3))',
 'Hardtanh_bf16': "m = nn.Hardtanh(-0.5, 1.).eval(); m(S(5, dtype='bfloat16'))",
 'Hardtanh_0dim': 'm = nn.Hardtanh(-0.5, 1.).eval(); x = S(); G(m(x * 1.), [x])',
 'Hardtanh_empty': 'm = nn.Hardtanh(-0.5, 1.).eval(); x = S(0, 3); G(m(x * 1.), [x])',
 'SiLU_inplace_nonleaf': (
     'm = nn.SiLU(inplace=True).eval(); x = S(2, 3); y = x * 1.5; z = m(y); [z is y, y._version, G(z, [x])]'),
 'SiLU_inplace_leaf': 'm = nn.SiLU(inplace=True); x = S(2, 3); m(x)',
 'SiLU_inplace_noncontig': 'm = nn.SiLU(inplace=True).eval(); x = S(3, 4); y = (x * 1.).t(); G(m(y), [x])',
 'SiLU_inplace_view_of_leaf_nograd': 'm = nn.SiLU(inplace=True).eval(); x = S(3, 4, grad=False); v = x[1:]; m(v); x',
 'SiLU_int': 'm = nn.SiLU().eval(); m(L.arange(-3, 3))',
 'SiLU_bf16': "m = nn.SiLU().eval(); m(S(5, dtype='bfloat16'))",
 'SiLU_0dim': 'm = nn.SiLU().eval(); x = S(); G(m(x * 1.), [x])',
 'SiLU_empty': 'm = nn.SiLU().eval(); x = S(0, 3); G(m(x * 1.), [x])',
 'Mish_inplace_nonleaf': (
     'm = nn.Mish(inplace=True).eval(); x = S(2, 3); y = x * 1.5; z = m(y); [z is y, y._version, G(z, [x])]'),
 'Mish_inplace_leaf': 'm = nn.Mish(inplace=True); x = S(2, 3); m(x)',
 'Mish_inplace_noncontig': 'm = nn.Mish(inplace=True).eval(); x = S(3, 4); y = (x * 1.).t(); G(m(y), [x])',
 'Mish_inplace_view_of_leaf_nograd': 'm = nn.Mish(inplace=True).eval(); x = S(3, 4, grad=False); v = x[1:]; m(v); x',
 'Mish_int': 'm = nn.Mish().eval(); m(L.arange(-3, 3))',
 'Mish_bf16': "m = nn.Mish().eval(); m(S(5, dtype='bfloat16'))",
 'Mish_0dim': 'm = nn.Mish().eval(); x = S(); G(m(x * 1.), [x])',
 'Mish_empty': 'm = nn.Mish().eval(); x = S(0, 3); G(m(x * 1.), [x])',
 'Hardswish_inplace_nonleaf': (
     'm = nn.Hardswish(inplace=True).eval(); x = S(2, 3); y = x * 1.5; z = m(y); [z is y, y._version, G(z, [x])]'),
 'Hardswish_inplace_leaf': 'm = nn.Hardswish(inplace=True); x = S(2, 3); m(x)',
 'Hardswish_inplace_noncontig': 'm = nn.Hardswish(inplace=True).eval(); x = S(3, 4); y = (x * 1.).t(); G(m(y), [x])',
 'Hardswish_inplace_view_of_leaf_nograd': (
     'm = nn.Hardswish(inplace=True).eval(); x = S(3, 4, grad=False); v = x[1:]; m(v); x'),
 'Hardswish_int': 'm = nn.Hardswish().eval(); m(L.arange(-3, 3))',
 'Hardswish_bf16': "m = nn.Hardswish().eval(); m(S(5, dtype='bfloat16'))",
 'Hardswish_0dim': 'm = nn.Hardswish().eval(); x = S(); G(m(x * 1.), [x])',
 'Hardswish_empty': 'm = nn.Hardswish().eval(); x = S(0, 3); G(m(x * 1.), [x])',
 'Hardsigmoid_inplace_nonleaf': ('m = nn.Hardsigmoid(inplace=True).eval(); x = S(2, 3); y = x * 1.5; z = m(y)'
     '; [z is y, y._version, G(z, [x])]'),
 'Hardsigmoid_inplace_leaf': 'm = nn.Hardsigmoid(inplace=True); x = S(2, 3); m(x)',
 'Hardsigmoid_inplace_noncontig': (
     'm = nn.Hardsigmoid(inplace=True).eval(); x = S(3, 4); y = (x * 1.).t(); G(m(y), [x])'),
 'Hardsigmoid_inplace_view_of_leaf_nograd': (
     'm = nn.Hardsigmoid(inplace=True).eval(); x = S(3, 4, grad=False); v = x[1:]; m(v); x'),
 'Hardsigmoid_int': 'm = nn.Hardsigmoid().eval(); m(L.arange(-3, 3))',
 'Hardsigmoid_bf16': "m = nn.Hardsigmoid().eval(); m(S(5, dtype='bfloat16'))",
 'Hardsigmoid_0dim': 'm = nn.Hardsigmoid().eval(); x = S(); G(m(x * 1.), [x])',
 'Hardsigmoid_empty': 'm = nn.Hardsigmoid().eval(); x = S(0, 3); G(m(x * 1.), [x])',
 'Threshold_inplace_nonleaf': ('m = nn.Threshold(0.1, -2., inplace=True).eval(); x = S(2, 3); y = x * 1.5; z = m(y)'
     '; [z is y, y._version, G(z, [x])]'),
 'Threshold_inplace_leaf': 'm = nn.Threshold(0.1, -2., inplace=True); x = S(2, 3); m(x)',
 'Threshold_inplace_noncontig': (
     'm = nn.Threshold(0.1, -2., inplace=True).eval(); x = S(3, 4); y = (x * 1.).t(); G(m(y), [x])'),
 'Threshold_inplace_view_of_leaf_nograd': (
     'm = nn.Threshold(0.1, -2., inplace=True).eval(); x = S(3, 4, grad=False); v = x[1:]; m(v); x'),
 'Threshold_int': 'm = nn.Threshold(0.1, -2.).eval(); m(L.arange(-3, 3))',
 'Threshold_bf16': "m = nn.Threshold(0.1, -2.).eval(); m(S(5, dtype='bfloat16'))",
 'Threshold_0dim': 'm = nn.Threshold(0.1, -2.).eval(); x = S(); G(m(x * 1.), [x])',
 'Threshold_empty': 'm = nn.Threshold(0.1, -2.).eval(); x = S(0, 3); G(m(x * 1.), [x])',
 'RReLU_inplace_nonleaf': (
     'm = nn.RReLU(inplace=True).eval(); x = S(2, 3); y = x * 1.5; z = m(y); [z is y, y._version, G(z, [x])]'),
 'RReLU_inplace_leaf': 'm = nn.RReLU(inplace=True); x = S(2, 3); m(x)',
 'RReLU_inplace_noncontig': 'm = nn.RReLU(inplace=True).eval(); x = S(3, 4); y = (x * 1.).t(); G(m(y), [x])',
 'RReLU_inplace_view_of_leaf_nograd': 'm = nn.RReLU(inplace=True).eval(); x = S(3, 4, grad=False); v = x[1:]; m(v); x',
 'RReLU_int': 'm = nn.RReLU().eval(); m(L.arange(-3, 3))',
 'RReLU_bf16': "m = nn.RReLU().eval(); m(S(5, dtype='bfloat16'))",
 'RReLU_0dim': 'm = nn.RReLU().eval(); x = S(); G(m(x * 1.), [x])',
 'RReLU_empty': 'm = nn.RReLU().eval(); x = S(0, 3); G(m(x * 1.), [x])',
 'rrelu_train_bounds': ('L.manual_seed(0); m = nn.RReLU(0.1, 0.3); y = m(S(100, grad=False))'
     '; bool(((y >= S(100, grad=False) * 0.3) | (S(100, grad=False) >= 0)).all())'),
 'rrelu_bad': 'F.rrelu(S(3), 0.5, 0.1, training=True)',
 'relu_inplace_twice_grad': 'x = S(3); y = x * 2; F.relu_(y); F.relu_(y); G(y, [x])',
 'relu_inplace_saved_tensor_err': 'x = S(3); y = x.sigmoid(); F.relu(y, inplace=True); y.sum().backward(); x.grad',
 'hardtanh_bad': 'nn.Hardtanh(1., -1.)',
 'hardtanh_equal': 'x = S(4); G(F.hardtanh(x, 0.5, 0.5), [x])',
 'softplus_thresh_big': 'x = S(4) * 30; G(F.softplus(x, beta=0.5, threshold=2.), [x])',
 'softmax_dtype': "x = S(2, 3, dtype='float32'); G(F.softmax(x, 1, dtype=L.float64), [x])",
 'softmax_no_dim_warn': 'x = S(2, 3); F.softmax(x)',
 'softmax_no_dim_3d': 'x = S(2, 3, 4); F.log_softmax(x)',
 'softmax_0dim': 'x = S(); G(F.softmax(x, 0), [x])',
 'softmax_dim_oob': 'x = S(2, 3); F.softmax(x, 2)',
 'softmax_int': 'F.softmax(L.arange(3), 0)',
 'softmax_inf_row': ("x = L.tensor([[float('-inf')] * 3, [0., 1., float('inf')]], dtype=L.float64, requires_grad=True)"
     '; G(F.softmax(x, 1), [x], False)'),
 'softmax2d_3d': 'm = nn.Softmax2d(); x = S(3, 2, 2); G(m(x), [x])',
 'softmax2d_2d': 'nn.Softmax2d()(S(3, 2))',
 'glu_odd': 'F.glu(S(3, 5), -1)',
 'glu_0dim': 'F.glu(S(), 0)',
 'prelu_0dim_weight_channels': 'm = nn.PReLU(3).double(); m(S(2, 4))',
 'prelu_1d_input': 'm = nn.PReLU().double(); x = S(5); G(m(x), [x, m.weight])',
 'prelu_channels_last': (
     'm = nn.PReLU(3).double(); x = S(2, 3, 2, 2).to(memory_format=L.channels_last); G(m(x), [x, m.weight])'),
 'prelu_0dim_input': 'm = nn.PReLU().double(); x = S(); G(m(x), [x, m.weight])',
 'gelu_bad': "F.gelu(S(3), approximate='fast')",
 'softshrink_neg': 'F.softshrink(S(3), -1.)',
 'hardshrink': 'x = S(5); G(F.hardshrink(x, 0.7), [x])',
 'tanhshrink_inplace_name': 'type(nn.Tanhshrink()(S(3) * 1.).grad_fn).__name__',
 'threshold_inplace_F': 'x = S(4); y = x + 0; F.threshold_(y, 0.5, 9.); G(y, [x])',
 'logsigmoid_big': 'x = L.tensor([-800., 800., 0.], dtype=L.float64, requires_grad=True); G(F.logsigmoid(x), [x])',
 'softsign_int': 'F.softsign(L.arange(3))',
 'silu_int': 'F.silu(L.arange(3))',
 'elu_inplace_neg_alpha': 'x = S(4); y = x * 1.; F.elu_(y, -1.); G(y, [x])',
 'elu_inplace_neg_alpha_backward': 'x = S(4); y = x * 1.; F.elu_(y, -1.); y.sum().backward(); x.grad',
 'celu_alpha0': 'F.celu(S(3), alpha=0.)',
 'multihead_softmin_dtype': "x = S(3, 2, dtype='float32'); F.softmin(x, 0, dtype=L.float64)",
 'dropout_p0': 'L.manual_seed(0); x = S(3, 4); G(F.dropout(x, 0.), [x])',
 'dropout_p1': 'L.manual_seed(0); x = S(3, 4); G(F.dropout(x, 1.), [x])',
 'dropout_p_neg': 'F.dropout(S(3), -0.1)',
 'dropout_p_big': 'nn.Dropout(1.1)',
 'dropout_inplace_train': 'L.manual_seed(0); x = S(3, 4); y = x * 1.; F.dropout(y, 0.5, inplace=True); [y, G(y, [x])]',
 'dropout_seeded': 'L.manual_seed(3); x = S(50); y = F.dropout(x, 0.3); G(y, [x])',
 'dropout_empty': 'L.manual_seed(0); x = S(0, 3); G(F.dropout(x, 0.3), [x])',
 'dropout_int': 'L.manual_seed(0); F.dropout(L.arange(4), 0.5)',
 'dropout1d_2d_input': 'L.manual_seed(0); x = S(3, 4); F.dropout1d(x, 0.5)',
 'dropout1d_4d': 'F.dropout1d(S(2, 3, 4, 5), 0.5)',
 'dropout2d_3d_warn': 'L.manual_seed(0); x = S(3, 4, 5); F.dropout2d(x, 0.5)',
 'dropout2d_5d_warn': 'L.manual_seed(0); x = S(2, 3, 4, 5, 2); F.dropout2d(x, 0.5).shape',
 'dropout2d_seed': 'L.manual_seed(0); x = S(2, 6, 3, 3); y = F.dropout2d(x, 0.5); G(y, [x])',
 'dropout3d_4d': 'L.manual_seed(0); x = S(2, 3, 2, 2); y = F.dropout3d(x, 0.5); y',
 'dropout3d_bad': 'F.dropout3d(S(2, 3), 0.5)',
 'alpha_dropout_eval': 'x = S(3, 4); G(nn.AlphaDropout(0.3).eval()(x), [x])',
 'alpha_dropout_train': 'L.manual_seed(0); x = S(40); G(F.alpha_dropout(x, 0.3, True), [x])',
 'feature_alpha_dropout_train': 'L.manual_seed(0); x = S(2, 6, 3); G(F.feature_alpha_dropout(x, 0.3, True), [x])',
 'alpha_dropout_p1': 'L.manual_seed(0); x = S(4); G(F.alpha_dropout(x, 1., True), [x])',
 'dropout_module_repr': '[repr(nn.Dropout(0.2, inplace=True)), repr(nn.AlphaDropout()), repr(nn.Dropout2d(0.3))]',
 'dropout_bf16': "L.manual_seed(0); F.dropout(S(8, dtype='bfloat16'), 0.5)",
 'prelu_kernel_backward_shapes': (
     'g, x, w = L.ones(2, 3, dtype=L.float64), -L.ones(2, 3, dtype=L.float64), L.full((1, 1), 0.25,'
     ' dtype=L.float64)'
     '; L.ops.aten._prelu_kernel_backward(g, x, w)'),
 'prelu_kernel_backward_0dim_weight': (
     'x = S(4); L.ops.aten._prelu_kernel_backward(x * 2, x, L.tensor(0.3, dtype=L.float64))'),
 'prelu_1d_weight_grad_node': (
     'x = S(5); a = S(1, seed=2); g = L.autograd.grad(F.prelu(x, a).sum(), [x, a], create_graph=True)'
     '; [g, [t.grad_fn.name() for t in g]]'),
}


# every reduction, weights, ignore_index, label smoothing, empty batches, odd targets
LOSSES = {
 'ce_empty_mean': "x = S(0, 4); t = L.zeros(0, dtype=L.long); G(F.cross_entropy(x, t, reduction='mean'), [x])",
 'ce_all_ignored_mean': "x = S(3, 4); t = L.full((3,), -100); G(F.cross_entropy(x, t, reduction='mean'), [x])",
 'ce_all_ignored_ls_mean': ('x = S(3, 4); t = L.full((3,), 2)'
     "; G(F.cross_entropy(x, t, reduction='mean', ignore_index=2, label_smoothing=0.2), [x])"),
 'ce_4d_weight_ls_mean': (
     'x = S(2, 3, 2, 2); t = Y(2, 2, 2, classes=3); w = S(3, seed=5, low=0.1, high=2., grad=False)'
     "; G(F.cross_entropy(x, t, weight=w, label_smoothing=0.15, ignore_index=1, reduction='mean'), [x])"),
 'ce_probs_weight_ls_mean': ('x = S(2, 3, 2); t = S(2, 3, 2, seed=4, low=0., high=1.).softmax(1)'
     '; w = S(3, seed=5, low=0.1, high=2., grad=False)'
     "; G(F.cross_entropy(x, t, weight=w, label_smoothing=0.2, reduction='mean'), [x, t])"),
 'ce_1d_mean': "x = S(4); t = L.tensor(2); G(F.cross_entropy(x, t, reduction='mean'), [x])",
 'nll_weight_ignore_mean': (
     'x = S(5, 3); t = L.tensor([0, 2, 1, 2, 0]); w = S(3, seed=5, low=0.1, high=2., grad=False)'
     "; G(F.nll_loss(x, t, weight=w, ignore_index=0, reduction='mean'), [x])"),
 'nll_5d_mean': "x = S(2, 3, 2, 1, 2); t = Y(2, 2, 1, 2, classes=3); G(F.nll_loss(x, t, reduction='mean'), [x])",
 'bce_weight_bcast_mean': ('x = S(3, 4, low=0.05, high=0.95); t = S(3, 4, seed=2, low=0., high=1., grad=False)'
     '; w = S(4, seed=3, low=0.5, high=1.5, grad=False)'
     "; G(F.binary_cross_entropy(x, t, weight=w, reduction='mean'), [x])"),
 'bcel_posw_weight_mean': (
     'x = S(3, 4); t = S(3, 4, seed=2, low=0., high=1.); pw = S(4, seed=3, low=0.5, high=2., grad=False)'
     '; w = S(3, 1, seed=4, low=0.5, high=2., grad=False)'
     "; G(F.binary_cross_entropy_with_logits(x, t, weight=w, pos_weight=pw, reduction='mean'), [x, t])"),
 'mse_empty_mean': "x = S(0, 2); t = S(0, 2, seed=2); G(F.mse_loss(x, t, reduction='mean'), [x, t])",
 'l1_bcast_warn_mean': "x = S(3, 1); t = S(3, seed=2); G(F.l1_loss(x, t, reduction='mean'), [x, t])",
 'huber_bcast_mean': "x = S(2, 3); t = S(3, seed=2); G(F.huber_loss(x, t, reduction='mean', delta=0.3), [x, t])",
 'smoothl1_beta0_mean': (
     "x = S(2, 3); t = S(2, 3, seed=2); G(F.smooth_l1_loss(x, t, reduction='mean', beta=0.), [x, t])"),
 'kl_mean': "x = S(2, 3); t = S(2, 3, seed=2, low=0., high=1.); G(F.kl_div(x, t, reduction='mean'), [x, t])",
 'poisson_eps_mean': ('x = S(2, 3, low=0., high=2.); t = S(2, 3, seed=2, low=0., high=3.)'
     "; G(F.poisson_nll_loss(x, t, log_input=False, full=True, eps=0.1, reduction='mean'), [x, t])"),
 'gauss_var_bcast_mean': ('x = S(4, 3); t = S(4, 3, seed=2); v = S(4, 1, seed=3, low=0.1, high=1.)'
     "; G(F.gaussian_nll_loss(x, t, v, reduction='mean'), [x, t, v])"),
 'gauss_var_1d_mean': ('x = S(4, 3); t = S(4, 3, seed=2); v = S(4, seed=3, low=0.1, high=1.)'
     "; G(F.gaussian_nll_loss(x, t, v, reduction='mean'), [x, v])"),
 'margin_rank_mean': ('a = S(4); b = S(4, seed=2); y = L.tensor([1., -1., 1., -1.], dtype=L.float64)'
     "; G(F.margin_ranking_loss(a, b, y, reduction='mean'), [a, b])"),
 'hinge_mean': ('x = S(2, 3); y = L.tensor([[1., -1., 1.], [-1., -1., 1.]], dtype=L.float64)'
     "; G(F.hinge_embedding_loss(x, y, reduction='mean'), [x])"),
 'cos_emb_mean': ('a = S(3, 4); b = S(3, 4, seed=2); y = L.tensor([1, -1, -1])'
     "; G(F.cosine_embedding_loss(a, b, y, margin=0.1, reduction='mean'), [a, b])"),
 'multi_margin_w_mean': ('x = S(3, 4); t = L.tensor([0, 3, 1]); w = S(4, seed=5, low=0.1, high=2., grad=False)'
     "; G(F.multi_margin_loss(x, t, weight=w, reduction='mean'), [x])"),
 'mlsm_w_mean': ('x = S(3, 4); t = L.tensor([[1, 0, 0, 1], [0, 0, 0, 0], [1, 1, 1, 0]])'
     '; w = S(4, seed=5, low=0.1, high=2., grad=False)'
     "; G(F.multilabel_soft_margin_loss(x, t, weight=w, reduction='mean'), [x])"),
 'triplet_dist_mean': ('a = S(3, 4); p = S(3, 4, seed=2); n = S(3, 4, seed=3)'
     '; G(F.triplet_margin_with_distance_loss(a, p, n, distance_function=lambda u, v: (u - v).abs().sum(1),'
     " margin=0.5, swap=True, reduction='mean'), [a, p, n])"),
 'ctc_zero_inf_mean': ('lp = S(3, 2, 4).log_softmax(2); t = L.tensor([[1, 1, 1, 1], [1, 2, 0, 0]])'
     "; G(F.ctc_loss(lp, t, [3, 3], [4, 2], reduction='mean', zero_infinity=True), [lp], False)"),
 'tripletmargin_empty_mean': "a = S(0, 4); G(F.triplet_margin_loss(a, a * 2, a * 3, reduction='mean'), [a])",
 'ce_empty_sum': "x = S(0, 4); t = L.zeros(0, dtype=L.long); G(F.cross_entropy(x, t, reduction='sum'), [x])",
 'ce_all_ignored_sum': "x = S(3, 4); t = L.full((3,), -100); G(F.cross_entropy(x, t, reduction='sum'), [x])",
 'ce_all_ignored_ls_sum': ('x = S(3, 4); t = L.full((3,), 2)'
     "; G(F.cross_entropy(x, t, reduction='sum', ignore_index=2, label_smoothing=0.2), [x])"),
 'ce_4d_weight_ls_sum': ('x = S(2, 3, 2, 2); t = Y(2, 2, 2, classes=3); w = S(3, seed=5, low=0.1, high=2., grad=False)'
     "; G(F.cross_entropy(x, t, weight=w, label_smoothing=0.15, ignore_index=1, reduction='sum'), [x])"),
 'ce_probs_weight_ls_sum': ('x = S(2, 3, 2); t = S(2, 3, 2, seed=4, low=0., high=1.).softmax(1)'
     '; w = S(3, seed=5, low=0.1, high=2., grad=False)'
     "; G(F.cross_entropy(x, t, weight=w, label_smoothing=0.2, reduction='sum'), [x, t])"),
 'ce_1d_sum': "x = S(4); t = L.tensor(2); G(F.cross_entropy(x, t, reduction='sum'), [x])",
 'nll_weight_ignore_sum': ('x = S(5, 3); t = L.tensor([0, 2, 1, 2, 0]); w = S(3, seed=5, low=0.1, high=2., grad=False)'
     "; G(F.nll_loss(x, t, weight=w, ignore_index=0, reduction='sum'), [x])"),
 'nll_5d_sum': "x = S(2, 3, 2, 1, 2); t = Y(2, 2, 1, 2, classes=3); G(F.nll_loss(x, t, reduction='sum'), [x])",
 'bce_weight_bcast_sum': ('x = S(3, 4, low=0.05, high=0.95); t = S(3, 4, seed=2, low=0., high=1., grad=False)'
     '; w = S(4, seed=3, low=0.5, high=1.5, grad=False)'
     "; G(F.binary_cross_entropy(x, t, weight=w, reduction='sum'), [x])"),
 'bcel_posw_weight_sum': (
     'x = S(3, 4); t = S(3, 4, seed=2, low=0., high=1.); pw = S(4, seed=3, low=0.5, high=2., grad=False)'
     '; w = S(3, 1, seed=4, low=0.5, high=2., grad=False)'
     "; G(F.binary_cross_entropy_with_logits(x, t, weight=w, pos_weight=pw, reduction='sum'), [x, t])"),
 'mse_empty_sum': "x = S(0, 2); t = S(0, 2, seed=2); G(F.mse_loss(x, t, reduction='sum'), [x, t])",
 'l1_bcast_warn_sum': "x = S(3, 1); t = S(3, seed=2); G(F.l1_loss(x, t, reduction='sum'), [x, t])",
 'huber_bcast_sum': "x = S(2, 3); t = S(3, seed=2); G(F.huber_loss(x, t, reduction='sum', delta=0.3), [x, t])",
 'smoothl1_beta0_sum': "x = S(2, 3); t = S(2, 3, seed=2); G(F.smooth_l1_loss(x, t, reduction='sum', beta=0.), [x, t])",
 'kl_sum': "x = S(2, 3); t = S(2, 3, seed=2, low=0., high=1.); G(F.kl_div(x, t, reduction='sum'), [x, t])",
 'poisson_eps_sum': ('x = S(2, 3, low=0., high=2.); t = S(2, 3, seed=2, low=0., high=3.)'
     "; G(F.poisson_nll_loss(x, t, log_input=False, full=True, eps=0.1, reduction='sum'), [x, t])"),
 'gauss_var_bcast_sum': ('x = S(4, 3); t = S(4, 3, seed=2); v = S(4, 1, seed=3, low=0.1, high=1.)'
     "; G(F.gaussian_nll_loss(x, t, v, reduction='sum'), [x, t, v])"),
 'gauss_var_1d_sum': ('x = S(4, 3); t = S(4, 3, seed=2); v = S(4, seed=3, low=0.1, high=1.)'
     "; G(F.gaussian_nll_loss(x, t, v, reduction='sum'), [x, v])"),
 'margin_rank_sum': ('a = S(4); b = S(4, seed=2); y = L.tensor([1., -1., 1., -1.], dtype=L.float64)'
     "; G(F.margin_ranking_loss(a, b, y, reduction='sum'), [a, b])"),
 'hinge_sum': ('x = S(2, 3); y = L.tensor([[1., -1., 1.], [-1., -1., 1.]], dtype=L.float64)'
     "; G(F.hinge_embedding_loss(x, y, reduction='sum'), [x])"),
 'cos_emb_sum': ('a = S(3, 4); b = S(3, 4, seed=2); y = L.tensor([1, -1, -1])'
     "; G(F.cosine_embedding_loss(a, b, y, margin=0.1, reduction='sum'), [a, b])"),
 'multi_margin_w_sum': ('x = S(3, 4); t = L.tensor([0, 3, 1]); w = S(4, seed=5, low=0.1, high=2., grad=False)'
     "; G(F.multi_margin_loss(x, t, weight=w, reduction='sum'), [x])"),
 'mlsm_w_sum': ('x = S(3, 4); t = L.tensor([[1, 0, 0, 1], [0, 0, 0, 0], [1, 1, 1, 0]])'
     '; w = S(4, seed=5, low=0.1, high=2., grad=False)'
     "; G(F.multilabel_soft_margin_loss(x, t, weight=w, reduction='sum'), [x])"),
 'triplet_dist_sum': ('a = S(3, 4); p = S(3, 4, seed=2); n = S(3, 4, seed=3)'
     '; G(F.triplet_margin_with_distance_loss(a, p, n, distance_function=lambda u, v: (u - v).abs().sum(1),'
     " margin=0.5, swap=True, reduction='sum'), [a, p, n])"),
 'ctc_zero_inf_sum': ('lp = S(3, 2, 4).log_softmax(2); t = L.tensor([[1, 1, 1, 1], [1, 2, 0, 0]])'
     "; G(F.ctc_loss(lp, t, [3, 3], [4, 2], reduction='sum', zero_infinity=True), [lp], False)"),
 'tripletmargin_empty_sum': "a = S(0, 4); G(F.triplet_margin_loss(a, a * 2, a * 3, reduction='sum'), [a])",
 'ce_empty_none': "x = S(0, 4); t = L.zeros(0, dtype=L.long); G(F.cross_entropy(x, t, reduction='none'), [x])",
 'ce_all_ignored_none': "x = S(3, 4); t = L.full((3,), -100); G(F.cross_entropy(x, t, reduction='none'), [x])",
 'ce_all_ignored_ls_none': ('x = S(3, 4); t = L.full((3,), 2)'
     "; G(F.cross_entropy(x, t, reduction='none', ignore_index=2, label_smoothing=0.2), [x])"),
 'ce_4d_weight_ls_none': (
     'x = S(2, 3, 2, 2); t = Y(2, 2, 2, classes=3); w = S(3, seed=5, low=0.1, high=2., grad=False)'
     "; G(F.cross_entropy(x, t, weight=w, label_smoothing=0.15, ignore_index=1, reduction='none'), [x])"),
 'ce_probs_weight_ls_none': ('x = S(2, 3, 2); t = S(2, 3, 2, seed=4, low=0., high=1.).softmax(1)'
     '; w = S(3, seed=5, low=0.1, high=2., grad=False)'
     "; G(F.cross_entropy(x, t, weight=w, label_smoothing=0.2, reduction='none'), [x, t])"),
 'ce_1d_none': "x = S(4); t = L.tensor(2); G(F.cross_entropy(x, t, reduction='none'), [x])",
 'nll_weight_ignore_none': (
     'x = S(5, 3); t = L.tensor([0, 2, 1, 2, 0]); w = S(3, seed=5, low=0.1, high=2., grad=False)'
     "; G(F.nll_loss(x, t, weight=w, ignore_index=0, reduction='none'), [x])"),
 'nll_5d_none': "x = S(2, 3, 2, 1, 2); t = Y(2, 2, 1, 2, classes=3); G(F.nll_loss(x, t, reduction='none'), [x])",
 'bce_weight_bcast_none': ('x = S(3, 4, low=0.05, high=0.95); t = S(3, 4, seed=2, low=0., high=1., grad=False)'
     '; w = S(4, seed=3, low=0.5, high=1.5, grad=False)'
     "; G(F.binary_cross_entropy(x, t, weight=w, reduction='none'), [x])"),
 'bcel_posw_weight_none': (
     'x = S(3, 4); t = S(3, 4, seed=2, low=0., high=1.); pw = S(4, seed=3, low=0.5, high=2., grad=False)'
     '; w = S(3, 1, seed=4, low=0.5, high=2., grad=False)'
     "; G(F.binary_cross_entropy_with_logits(x, t, weight=w, pos_weight=pw, reduction='none'), [x, t])"),
 'mse_empty_none': "x = S(0, 2); t = S(0, 2, seed=2); G(F.mse_loss(x, t, reduction='none'), [x, t])",
 'l1_bcast_warn_none': "x = S(3, 1); t = S(3, seed=2); G(F.l1_loss(x, t, reduction='none'), [x, t])",
 'huber_bcast_none': "x = S(2, 3); t = S(3, seed=2); G(F.huber_loss(x, t, reduction='none', delta=0.3), [x, t])",
 'smoothl1_beta0_none': (
     "x = S(2, 3); t = S(2, 3, seed=2); G(F.smooth_l1_loss(x, t, reduction='none', beta=0.), [x, t])"),
 'kl_none': "x = S(2, 3); t = S(2, 3, seed=2, low=0., high=1.); G(F.kl_div(x, t, reduction='none'), [x, t])",
 'poisson_eps_none': ('x = S(2, 3, low=0., high=2.); t = S(2, 3, seed=2, low=0., high=3.)'
     "; G(F.poisson_nll_loss(x, t, log_input=False, full=True, eps=0.1, reduction='none'), [x, t])"),
 'gauss_var_bcast_none': ('x = S(4, 3); t = S(4, 3, seed=2); v = S(4, 1, seed=3, low=0.1, high=1.)'
     "; G(F.gaussian_nll_loss(x, t, v, reduction='none'), [x, t, v])"),
 'gauss_var_1d_none': ('x = S(4, 3); t = S(4, 3, seed=2); v = S(4, seed=3, low=0.1, high=1.)'
     "; G(F.gaussian_nll_loss(x, t, v, reduction='none'), [x, v])"),
 'margin_rank_none': ('a = S(4); b = S(4, seed=2); y = L.tensor([1., -1., 1., -1.], dtype=L.float64)'
     "; G(F.margin_ranking_loss(a, b, y, reduction='none'), [a, b])"),
 'hinge_none': ('x = S(2, 3); y = L.tensor([[1., -1., 1.], [-1., -1., 1.]], dtype=L.float64)'
     "; G(F.hinge_embedding_loss(x, y, reduction='none'), [x])"),
 'cos_emb_none': ('a = S(3, 4); b = S(3, 4, seed=2); y = L.tensor([1, -1, -1])'
     "; G(F.cosine_embedding_loss(a, b, y, margin=0.1, reduction='none'), [a, b])"),
 'multi_margin_w_none': ('x = S(3, 4); t = L.tensor([0, 3, 1]); w = S(4, seed=5, low=0.1, high=2., grad=False)'
     "; G(F.multi_margin_loss(x, t, weight=w, reduction='none'), [x])"),
 'mlsm_w_none': ('x = S(3, 4); t = L.tensor([[1, 0, 0, 1], [0, 0, 0, 0], [1, 1, 1, 0]])'
     '; w = S(4, seed=5, low=0.1, high=2., grad=False)'
     "; G(F.multilabel_soft_margin_loss(x, t, weight=w, reduction='none'), [x])"),
 'triplet_dist_none': ('a = S(3, 4); p = S(3, 4, seed=2); n = S(3, 4, seed=3)'
     '; G(F.triplet_margin_with_distance_loss(a, p, n, distance_function=lambda u, v: (u - v).abs().sum(1),'
     " margin=0.5, swap=True, reduction='none'), [a, p, n])"),
 'ctc_zero_inf_none': ('lp = S(3, 2, 4).log_softmax(2); t = L.tensor([[1, 1, 1, 1], [1, 2, 0, 0]])'
     "; G(F.ctc_loss(lp, t, [3, 3], [4, 2], reduction='none', zero_infinity=True), [lp], False)"),
 'tripletmargin_empty_none': "a = S(0, 4); G(F.triplet_margin_loss(a, a * 2, a * 3, reduction='none'), [a])",
 'ce_bad_target_class': 'x = S(3, 4); F.cross_entropy(x, L.tensor([0, 4, 1]))',
 'ce_neg_target': 'x = S(3, 4); F.cross_entropy(x, L.tensor([0, -2, 1]))',
 'ce_float_target_wrong_shape': 'x = S(3, 4); F.cross_entropy(x, S(3, seed=2))',
 'ce_int32_target': 'x = S(3, 4); F.cross_entropy(x, L.tensor([0, 1, 2], dtype=L.int32))',
 'ce_uint8_target': 'x = S(3, 4); F.cross_entropy(x, L.tensor([0, 1, 2], dtype=L.uint8))',
 'ce_bool_target': 'x = S(3, 4); F.cross_entropy(x, L.tensor([True, False, True]))',
 'ce_int_input': 'F.cross_entropy(L.ones(3, 4, dtype=L.long), L.tensor([0, 1, 2]))',
 'ce_ls_bad': 'x = S(3, 4); F.cross_entropy(x, L.tensor([0, 1, 2]), label_smoothing=1.5)',
 'ce_weight_wrong_size': 'x = S(3, 4); F.cross_entropy(x, L.tensor([0, 1, 2]), weight=L.ones(3, dtype=L.float64))',
 'ce_batch_mismatch': 'x = S(3, 4); F.cross_entropy(x, L.tensor([0, 1]))',
 'ce_probs_int_error': 'x = S(3, 4); F.cross_entropy(x, L.ones(3, 4, dtype=L.long))',
 'ce_probs_ignore_index': (
     'x = S(3, 4); t = S(3, 4, seed=2, low=0., high=1.); G(F.cross_entropy(x, t, ignore_index=1), [x])'),
 'ce_module_weight_dtype': 'x = S(3, 4); m = nn.CrossEntropyLoss(weight=L.ones(4)); m(x, L.tensor([0, 1, 2]))',
 'ce_bad_reduction': "x = S(3, 4); F.cross_entropy(x, L.tensor([0, 1, 2]), reduction='avg')",
 'ce_legacy_size_average': 'x = S(3, 4); F.cross_entropy(x, L.tensor([0, 1, 2]), size_average=False)',
 'ce_bf16': "x = S(3, 4, dtype='bfloat16'); F.cross_entropy(x, L.tensor([0, 1, 2]))",
 'nll_1d_input': 'x = S(4); G(F.nll_loss(x, L.tensor(1)), [x])',
 'nll_1d_bad_target': 'x = S(4); F.nll_loss(x, L.tensor([1]))',
 'nll_2d_target_for_2d': 'x = S(3, 4); F.nll_loss(x, L.tensor([[0], [1], [2]]))',
 'nll_0dim': 'F.nll_loss(S(), L.tensor(0))',
 'nll_weight_zero_mean': ('x = S(3, 4)'
     '; G(F.nll_loss(x, L.tensor([0, 0, 1]), weight=L.tensor([0., 0., 1., 1.], dtype=L.float64)), [x])'),
 'bce_target_out_of_range': (
     'x = S(3, low=0.1, high=0.9); F.binary_cross_entropy(x, L.tensor([0., 1.5, 1.], dtype=L.float64))'),
 'bce_input_out_of_range': 'x = S(3); F.binary_cross_entropy(x, L.tensor([0., 0.5, 1.], dtype=L.float64))',
 'bce_size_mismatch': 'x = S(3, low=0.1, high=0.9); F.binary_cross_entropy(x, S(3, 1, low=0., high=1.))',
 'bce_edges': ('x = L.tensor([0., 1., 0., 1.], dtype=L.float64, requires_grad=True)'
     '; t = L.tensor([0., 1., 1., 0.], dtype=L.float64)'
     "; G(F.binary_cross_entropy(x, t, reduction='none'), [x], False)"),
 'bce_int_target': 'x = S(3, low=0.1, high=0.9); F.binary_cross_entropy(x, L.tensor([0, 1, 1]))',
 'bcel_size_mismatch': 'x = S(3); F.binary_cross_entropy_with_logits(x, S(3, 1, low=0., high=1.))',
 'bcel_int_target': 'x = S(3); F.binary_cross_entropy_with_logits(x, L.tensor([0, 1, 1]))',
 'bcel_extreme': ('x = L.tensor([-800., 800., 0.], dtype=L.float64, requires_grad=True)'
     '; t = L.tensor([1., 0., 1.], dtype=L.float64)'
     '; G(F.binary_cross_entropy_with_logits(x, t, pos_weight=L.tensor([3.], dtype=L.float64),'
     " reduction='none'), [x])"),
 'bcel_f32_target_f64_input': (
     "x = S(3); t = S(3, dtype='float32', low=0., high=1.); G(F.binary_cross_entropy_with_logits(x, t), [x, t])"),
 'mse_int': 'F.mse_loss(L.arange(3), L.arange(3))',
 'mse_int_target': 'x = S(3); G(F.mse_loss(x, L.arange(3)), [x])',
 'mse_bcast_error': 'F.mse_loss(S(3), S(4))',
 'mse_f32_f64': "x = S(3, dtype='float32'); t = S(3, seed=2); G(F.mse_loss(x, t), [x, t])",
 'mse_0dim': 'x = S(); t = S(seed=2); G(F.mse_loss(x, t), [x, t])',
 'l1_complex': 'x = L.tensor([1+1j, 2-1j]); t = L.tensor([0j, 1j]); F.l1_loss(x, t)',
 'huber_neg_delta': 'F.huber_loss(S(3), S(3, seed=2), delta=-1.)',
 'huber_zero_delta': 'F.huber_loss(S(3), S(3, seed=2), delta=0.)',
 'smoothl1_neg_beta': 'F.smooth_l1_loss(S(3), S(3, seed=2), beta=-1.)',
 'kl_mean_warn': 'x = S(2, 3); t = S(2, 3, seed=2, low=0., high=1.); F.kl_div(x, t)',
 'kl_batchmean_0dim': "x = S(); t = S(seed=2, low=0., high=1.); G(F.kl_div(x, t, reduction='batchmean'), [x, t])",
 'kl_target_zero': ('x = S(3); t = L.tensor([0., 1., 0.5], dtype=L.float64, requires_grad=True)'
     "; G(F.kl_div(x, t, reduction='sum'), [x, t])"),
 'gauss_neg_var': 'F.gaussian_nll_loss(S(3), S(3, seed=2), L.tensor([1., -1., 1.], dtype=L.float64))',
 'gauss_var_bad_shape': 'F.gaussian_nll_loss(S(4, 3), S(4, 3, seed=2), S(3, 1, low=0.1))',
 'gauss_eps_clamp': ('x = S(3); t = S(3, seed=2); v = L.tensor([0., 1e-9, 1.], dtype=L.float64, requires_grad=True)'
     '; G(F.gaussian_nll_loss(x, t, v, eps=1e-3), [x, v])'),
 'gauss_var_scalar_float': 'F.gaussian_nll_loss(S(3), S(3, seed=2), 0.5)',
 'poisson_log_zero_target': ('x = S(3); t = L.tensor([0., 1., 4.], dtype=L.float64)'
     "; G(F.poisson_nll_loss(x, t, full=True, reduction='none'), [x])"),
 'margin_rank_bad_dims': 'F.margin_ranking_loss(S(3), S(3, seed=2), L.ones(1, 3, dtype=L.float64))',
 'margin_rank_0dim': 'F.margin_ranking_loss(S(), S(seed=2), L.tensor(1., dtype=L.float64))',
 'cos_emb_bad_target_dim': 'F.cosine_embedding_loss(S(3, 4), S(3, 4, seed=2), L.ones(3, 1))',
 'cos_emb_1d': 'a = S(4); b = S(4, seed=2); G(F.cosine_embedding_loss(a, b, L.tensor(-1), margin=0.2), [a, b])',
 'cos_emb_zero_vec': ('a = L.zeros(2, 3, dtype=L.float64, requires_grad=True); b = S(2, 3, seed=2)'
     '; G(F.cosine_embedding_loss(a, b, L.tensor([1, -1])), [a, b], False)'),
 'multi_margin_p3': 'F.multi_margin_loss(S(3, 4), L.tensor([0, 1, 2]), p=3)',
 'multi_margin_bad_target': 'F.multi_margin_loss(S(3, 4), L.tensor([0, 4, 2]))',
 'multi_margin_1d': 'x = S(4); G(F.multi_margin_loss(x, L.tensor(2)), [x])',
 'multi_margin_empty': 'x = S(0, 4); G(F.multi_margin_loss(x, L.zeros(0, dtype=L.long)), [x])',
 'multilabel_margin_1d': 'x = S(4); G(F.multilabel_margin_loss(x, L.tensor([2, 0, -1, 1])), [x])',
 'multilabel_margin_bad': 'F.multilabel_margin_loss(S(2, 4), L.tensor([[4, -1, 0, 0], [0, -1, 0, 0]]))',
 'soft_margin_int_target': 'x = S(3); G(F.soft_margin_loss(x, L.tensor([1, -1, 1])), [x])',
 'triplet_bad_dims': 'F.triplet_margin_loss(S(3, 4), S(3, 4, seed=2), S(4, seed=3))',
 'triplet_1d': 'a = S(4); G(F.triplet_margin_loss(a, a * 2, a.flip(0), p=1.5, eps=0.), [a])',
 'triplet_p0': 'a = S(3, 4); F.triplet_margin_loss(a, a * 2, a.flip(0), p=0)',
 'triplet_margin_neg': 'a = S(3, 4); F.triplet_margin_loss(a, a * 2, a.flip(0), margin=-1.)',
 'triplet_dist_bad_margin': 'a = S(3, 4); F.triplet_margin_with_distance_loss(a, a, a, margin=-1.)',
 'ctc_int32_lengths': ('lp = S(4, 2, 3).log_softmax(2); t = L.tensor([[1, 2], [1, 1]], dtype=L.int32)'
     '; G(F.ctc_loss(lp, t, L.tensor([4, 4], dtype=L.int32), L.tensor([2, 2], dtype=L.int32)), [lp], False)'),
 'ctc_1d_targets': ('lp = S(4, 2, 3).log_softmax(2); t = L.tensor([1, 2, 1])'
     "; G(F.ctc_loss(lp, t, [4, 3], [2, 1], reduction='sum'), [lp], False)"),
 'ctc_blank_nonzero': ('lp = S(4, 2, 3).log_softmax(2); t = L.tensor([[0, 1], [1, 1]])'
     '; G(F.ctc_loss(lp, t, [4, 4], [2, 2], blank=2), [lp], False)'),
 'ctc_bad_blank': 'lp = S(4, 2, 3).log_softmax(2); F.ctc_loss(lp, L.tensor([[0, 1]] * 2), [4, 4], [2, 2], blank=3)',
 'ctc_input_len_too_long': 'lp = S(4, 2, 3).log_softmax(2); F.ctc_loss(lp, L.tensor([[1, 1]] * 2), [5, 4], [2, 2])',
 'ctc_unbatched': ('lp = S(4, 3).log_softmax(1); t = L.tensor([1, 2])'
     '; G(F.ctc_loss(lp, t, L.tensor(4), L.tensor(2)), [lp], False)'),
 'ctc_empty_target': ('lp = S(4, 2, 3).log_softmax(2); t = L.zeros(2, 0, dtype=L.long)'
     "; G(F.ctc_loss(lp, t, [4, 3], [0, 0], reduction='none'), [lp], False)"),
 'adaptive_logsoftmax': (
     'L.manual_seed(0); m = nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3, 6], div_value=2.).double(); x = S(5, 4)'
     '; t = L.tensor([0, 4, 9, 2, 7]); o = m(x, t); [o.output, o.loss, m.log_prob(x), m.predict(x)]'),
 'adaptive_logsoftmax_bad_target': (
     'L.manual_seed(0); m = nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3, 6]).double(); m(S(2, 4), L.tensor([0, 10]))'),
 'loss_module_repr': ('[repr(nn.CrossEntropyLoss(label_smoothing=0.1)), repr(nn.HuberLoss(delta=2.)),'
     ' repr(nn.TripletMarginLoss())]'),
 'nll_module_ignore_default': 'm = nn.NLLLoss(); [m.ignore_index, m.reduction]',
 'loss_legacy_reduce_false': 'x = S(3); t = S(3, seed=2); F.mse_loss(x, t, reduce=False)',
 'bce_module_weight_buffer': (
     'm = nn.BCELoss(weight=L.ones(3, dtype=L.float64)); [list(m.state_dict()), list(m.named_buffers())[0][0]]'),
 'ce_weight_buffer_to': 'm = nn.CrossEntropyLoss(weight=L.ones(3)).double(); m.weight.dtype',
}


# the Module API: state dicts, hooks, traversal, conversion, lazy modules
MODULES = {
 'sd_keys': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     '; list(net.state_dict())'),
 'sd_keep_vars': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     '; [type(v).__name__ for v in net.state_dict(keep_vars=True).values()]'),
 'sd_prefix': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     "; list(net.state_dict(prefix='m.'))"),
 'sd_roundtrip': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     "; net(S(2, 2, 4, 4, dtype='float32')); sd = net.state_dict(); L.manual_seed(1)"
     '; net2 = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     '; r = net2.load_state_dict(sd); [r.missing_keys, r.unexpected_keys, net2.state_dict()]'),
 'sd_detached': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     '; sd = net.state_dict()'
     "; [sd['0.weight'].requires_grad, sd['0.weight'].grad_fn, sd['0.weight'].data_ptr() =="
     ' net[0].weight.data_ptr()]'),
 'sd_load_missing_strict': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     "; sd = net.state_dict(); del sd['4.bias']; net.load_state_dict(sd)"),
 'sd_load_unexpected_nonstrict': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     "; sd = net.state_dict(); sd['extra'] = L.ones(1); r = net.load_state_dict(sd, strict=False)"
     '; [r.missing_keys, r.unexpected_keys, str(r)]'),
 'sd_load_wrong_shape': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     "; sd = net.state_dict(); sd['4.bias'] = L.ones(3); net.load_state_dict(sd)"),
 'sd_load_wrong_shape_nonstrict': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     "; sd = net.state_dict(); sd['4.bias'] = L.ones(3); net.load_state_dict(sd, strict=False)"),
 'sd_load_dtype_cast': ('L.manual_seed(0); m = nn.Linear(2, 2)'
     "; m.load_state_dict({'weight': L.ones(2, 2, dtype=L.float64), 'bias': L.zeros(2, dtype=L.int64)})"
     '; [m.weight, m.bias]'),
 'sd_load_not_tensor': ('L.manual_seed(0); m = nn.Linear(2, 2)'
     "; m.load_state_dict({'weight': [[1., 2.], [3., 4.]], 'bias': L.zeros(2)})"),
 'sd_load_not_mapping': 'L.manual_seed(0); m = nn.Linear(2, 2); m.load_state_dict([1, 2])',
 'sd_load_assign': ('L.manual_seed(0); m = nn.Linear(2, 2); w = L.ones(2, 2, dtype=L.float64)'
     "; m.load_state_dict({'weight': w, 'bias': L.zeros(2)}, assign=True)"
     '; [m.weight.dtype, type(m.weight).__name__, m.weight.requires_grad]'),
 'sd_buffer_nonpersistent': (
     "m = nn.Module(); m.register_buffer('a', L.ones(2), persistent=False); m.register_buffer('b', L.zeros(1))"
     "; m.register_buffer('c', None); [list(m.state_dict()), [n for n, _ in m.named_buffers()]]"),
 'sd_load_into_nonpersistent': ("m = nn.Module(); m.register_buffer('a', L.ones(2), persistent=False)"
     "; r = m.load_state_dict({'a': L.zeros(2)}, strict=False); [r.unexpected_keys, m.a]"),
 'sd_shared_params': ('L.manual_seed(0); a = nn.Linear(2, 2); net = nn.Sequential(a, a)'
     '; [list(net.state_dict()), len(list(net.parameters())), [n for n, _ in'
     ' net.named_parameters(remove_duplicate=False)]]'),
 'sd_hook_pre': ('L.manual_seed(0); m = nn.Linear(2, 2)'
     "; m.register_load_state_dict_pre_hook(lambda mod, sd, prefix, *a: sd.__setitem__(prefix + 'bias',"
     ' L.full((2,), 7.)))'
     "; m.load_state_dict({'weight': L.ones(2, 2)}); m.bias"),
 'sd_post_hook': ('L.manual_seed(0); m = nn.Linear(2, 2)'
     "; m.register_state_dict_post_hook(lambda mod, sd, prefix, local: sd.pop(prefix + 'bias'))"
     '; list(m.state_dict())'),
 'register_buffer_dot': "m = nn.Module(); m.register_buffer('a.b', L.ones(1))",
 'register_buffer_empty': "m = nn.Module(); m.register_buffer('', L.ones(1))",
 'register_buffer_not_tensor': "m = nn.Module(); m.register_buffer('a', [1])",
 'register_buffer_existing_attr': "m = nn.Module(); m.a = 1; m.register_buffer('a', L.ones(1))",
 'register_param_not_param': "m = nn.Module(); m.register_parameter('a', L.ones(1))",
 'register_param_nonleaf': "m = nn.Module(); x = S(2); m.register_parameter('a', nn.Parameter(x * 2))",
 'assign_tensor_over_param': 'L.manual_seed(0); m = nn.Linear(2, 2); m.weight = L.ones(2, 2)',
 'assign_none_param': (
     'L.manual_seed(0); m = nn.Linear(2, 2); m.bias = None; [list(m.state_dict()), m(L.ones(1, 2)).shape]'),
 'add_module_bad': "m = nn.Module(); m.add_module('a.b', nn.ReLU())",
 'add_module_not_module': "m = nn.Module(); m.add_module('a', 3)",
 'get_submodule_missing': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     "; net.get_submodule('0.foo')"),
 'get_submodule_not_module': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     "; net.get_submodule('0.weight')"),
 'get_parameter': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     "; net.get_parameter('4.bias').shape"),
 'get_parameter_missing': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     "; net.get_parameter('4.foo')"),
 'get_buffer': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     "; net.get_buffer('1.running_mean').shape"),
 'named_modules_dup': ('r = nn.ReLU(); net = nn.Sequential(r, nn.Sequential(r, nn.Tanh()))'
     '; [[n for n, _ in net.named_modules()], [n for n, _ in net.named_modules(remove_duplicate=False)], [n'
     " for n, _ in net.named_modules(prefix='p')]]"),
 'named_children': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     '; [n for n, _ in net.named_children()]'),
 'named_params_recurse': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     '; [[n for n, _ in net.named_parameters(recurse=False)], [n for n, _ in'
     " net[1].named_parameters(prefix='bn')], [n for n, _ in net.named_buffers()]]"),
 'apply_order': ('seen = []; net = nn.Sequential(nn.ReLU(), nn.Sequential(nn.Tanh()))'
     '; net.apply(lambda m: seen.append(type(m).__name__)); seen'),
 'apply_init': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     '; net.apply(lambda m: nn.init.zeros_(m.weight) if isinstance(m, nn.Linear) else None); net[4].weight'),
 'to_dtype_int_buffers': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     '; net.to(L.float64); [net[0].weight.dtype, net[1].num_batches_tracked.dtype, net[1].running_mean.dtype]'),
 'to_int_dtype': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     '; net.to(L.int64)'),
 'to_kw': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     '; net.to(dtype=L.float16); net[4].bias.dtype'),
 'to_tensor': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     '; net.to(L.ones(1, dtype=L.float64)); net[0].bias.dtype'),
 'to_keeps_param_identity': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     '; p = net[0].weight; net.double(); [net[0].weight is p, p.dtype, p.requires_grad]'),
 'half_bfloat': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     '; net.half(); a = net[0].weight.dtype; net.bfloat16()'
     '; [a, net[0].weight.dtype, net[1].num_batches_tracked.dtype]'),
 'to_grad_converted': ('L.manual_seed(0); m = nn.Linear(2, 2); m(L.ones(1, 2)).sum().backward(); m.double()'
     '; [m.weight.grad.dtype, m.weight.grad]'),
 'type_method': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     '; net.type(L.float64); net[0].weight.dtype'),
 'requires_grad_false': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     '; net.requires_grad_(False); [p.requires_grad for p in net.parameters()]'),
 'requires_grad_buffers_untouched': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     '; net.requires_grad_(False).requires_grad_()'
     '; [net[1].running_mean.requires_grad, net[0].weight.requires_grad]'),
 'zero_grad_none': (
     'L.manual_seed(0); m = nn.Linear(2, 2); m(L.ones(1, 2)).sum().backward(); m.zero_grad(); m.weight.grad'),
 'zero_grad_keep': ('L.manual_seed(0); m = nn.Linear(2, 2); m(L.ones(1, 2)).sum().backward(); g = m.weight.grad'
     '; m.zero_grad(set_to_none=False); [m.weight.grad, m.weight.grad is g]'),
 'zero_grad_keep_with_graph': ("L.manual_seed(0); m = nn.Linear(2, 2); x = S(1, 2, dtype='float32')"
     '; L.autograd.backward(m(x).sum(), create_graph=True); m.zero_grad(set_to_none=False)'
     '; [m.weight.grad, m.weight.grad.grad_fn, m.weight.grad.requires_grad]'),
 'train_eval_flags': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     '; net.eval(); a = [m.training for m in net.modules()]; net.train()'
     '; b = [m.training for m in net.modules()]; [a, b]'),
 'train_bad_arg': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     "; net.train('yes')"),
 'hook_forward_pre_modify': ('L.manual_seed(0); m = nn.Linear(2, 2).double()'
     '; m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,)); x = S(1, 2); G(m(x), [x])'),
 'hook_forward_pre_single': (
     'L.manual_seed(0); m = nn.Linear(2, 2).double(); m.register_forward_pre_hook(lambda mod, args: args[0] * 2)'
     '; x = S(1, 2); m(x)'),
 'hook_forward_kwargs': ('L.manual_seed(0); m = nn.Linear(2, 2).double(); got = []'
     '; m.register_forward_hook(lambda mod, args, kwargs, out: got.append(sorted(kwargs)) or out + 1,'
     ' with_kwargs=True)'
     '; x = S(1, 2); y = m(input=x); [y, got]'),
 'hook_forward_always_call': ('L.manual_seed(0); m = nn.Linear(2, 2).double(); got = []'
     '; m.register_forward_hook(lambda *a: got.append(1), always_call=True)'
     '; m.register_forward_pre_hook(lambda *a: 1 / 0)'
     '; ok = False\ntry:\n    m(S(1, 2))\nexcept ZeroDivisionError:\n    ok = True\n; [ok, got]'),
 'hook_forward_prepend': ('m = nn.ReLU(); order = []; m.register_forward_hook(lambda *a: order.append(1))'
     '; m.register_forward_hook(lambda *a: order.append(2), prepend=True); m(S(2)); order'),
 'hook_remove': (
     'm = nn.ReLU(); order = []; h = m.register_forward_hook(lambda *a: order.append(1)); h.remove(); h.remove()'
     '; m(S(2)); order'),
 'hook_full_backward': ('L.manual_seed(0); m = nn.Linear(2, 3).double(); got = []'
     '; m.register_full_backward_hook(lambda mod, gi, go: got.append([gi, go])); x = S(4, 2)'
     '; m(x).sum().backward(); got'),
 'hook_full_backward_replace': ('L.manual_seed(0); m = nn.Linear(2, 3).double()'
     '; m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 10,)); x = S(4, 2); m(x).sum().backward()'
     '; x.grad'),
 'hook_full_backward_pre': ('L.manual_seed(0); m = nn.Linear(2, 3).double()'
     '; m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 0.5,)); x = S(4, 2); m(x).sum().backward()'
     '; [x.grad, m.weight.grad]'),
 'hook_backward_inplace_err': (
     'm = nn.ReLU(inplace=True); m.register_full_backward_hook(lambda *a: None); x = S(3); y = x * 1; m(y)'),
 'hook_full_backward_no_grad_input': ('L.manual_seed(0); m = nn.Linear(2, 3).double(); got = []'
     '; m.register_full_backward_hook(lambda mod, gi, go: got.append(gi)); x = S(4, 2, grad=False)'
     '; m(x).sum().backward(); got'),
 'hook_global_forward': (
     'got = []; h = nn.modules.module.register_module_forward_hook(lambda m, i, o: got.append(type(m).__name__))'
     '; nn.Sequential(nn.ReLU())(S(2)); h.remove(); got'),
 'hook_state_dict_pre': ('L.manual_seed(0); m = nn.Linear(2, 2); got = []'
     '; m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: got.append(prefix))'
     '; nn.Sequential(m).state_dict(); got'),
 'module_repr': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     '; repr(net)'),
 'module_extra_repr_conv': ('L.manual_seed(0)'
     "; [repr(nn.Conv2d(2, 4, 3, stride=2, padding='same', dilation=2, groups=2, bias=False,"
     " padding_mode='reflect')) if False else repr(nn.Conv2d(2, 4, 3, stride=1, padding='same', dilation=2,"
     " groups=2, bias=False, padding_mode='reflect')), repr(nn.ConvTranspose1d(2, 4, 3, output_padding=1,"
     ' stride=2)), repr(nn.MaxPool2d(2, ceil_mode=True)), repr(nn.LSTM(2, 3, proj_size=1)),'
     ' repr(nn.Embedding(4, 2, padding_idx=1, max_norm=1.)), repr(nn.LayerNorm(3, bias=False)),'
     ' repr(nn.RMSNorm(4)), repr(nn.GroupNorm(2, 4))]'),
 'module_dir_has_params': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     "; [n in dir(net[0]) for n in ('weight', 'bias', 'forward')]"),
 'module_getattr_missing': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     '; net[0].foo'),
 'module_delattr_param': 'L.manual_seed(0); m = nn.Linear(2, 2); del m.bias; list(m.state_dict())',
 'sequential_slice': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     '; s = net[1:3]; [type(s).__name__, [n for n, _ in s.named_children()]]'),
 'sequential_bad_index': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     '; net[7]'),
 'sequential_del_insert': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     '; del net[2]; net.insert(1, nn.Tanh()); net.append(nn.Sigmoid()); [n for n, _ in net.named_children()]'),
 'modulelist_extend': ('ml = nn.ModuleList([nn.ReLU()]); ml.extend([nn.Tanh()]); ml += [nn.Sigmoid()]'
     '; [len(ml), [n for n, _ in ml.named_children()]]'),
 'moduledict_order': ("md = nn.ModuleDict({'b': nn.ReLU(), 'a': nn.Tanh()}); md.update([('c', nn.Sigmoid())])"
     "; [list(md.keys()), 'a' in md]"),
 'parameterlist_sd': ('pl = nn.ParameterList([nn.Parameter(L.ones(2)), L.zeros(3)])'
     '; [list(pl.state_dict()), [type(p).__name__ for p in pl]]'),
 'parameterdict': ("pd = nn.ParameterDict({'w': nn.Parameter(L.ones(2))}); pd['b'] = L.zeros(1)"
     "; [list(pd.state_dict()), type(pd['b']).__name__, pd['b'].requires_grad]"),
 'param_repr': 'repr(nn.Parameter(L.tensor([1., 2.])))',
 'param_no_grad': 'p = nn.Parameter(L.ones(2), requires_grad=False); [p.requires_grad, p.is_leaf, type(p).__name__]',
 'param_int': 'nn.Parameter(L.ones(2, dtype=L.long))',
 'param_deepcopy': ('import copy; p = nn.Parameter(L.ones(2)); q = copy.deepcopy(p)'
     '; [type(q).__name__, q.requires_grad, q is p]'),
 'module_deepcopy': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     '; import copy; n2 = copy.deepcopy(net); [n2[0].weight is net[0].weight, n2.state_dict()]'),
 'buffers_double_leaves_int': "m = nn.Module(); m.register_buffer('i', L.arange(3)); m.double(); m.i.dtype",
 'module_call_no_forward': 'nn.Module()(S(2))',
 'module_parameters_generator': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     '; sum(p.numel() for p in net.parameters())'),
 'share_memory_noop': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     '; net.share_memory() is net'),
 'zero_grad_module_no_grads': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     '; net.zero_grad(); [p.grad for p in net.parameters()]'),
 'set_submodule': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     "; net.set_submodule('2', nn.Tanh()); type(net[2]).__name__"),
 'named_params_after_requires_grad': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     '; net[0].requires_grad_(False); [n for n, p in net.named_parameters() if p.requires_grad]'),
 'lazy_linear': ('L.manual_seed(0); m = nn.LazyLinear(3).double(); x = S(2, 4); y = m(x)'
     '; [type(m).__name__, m.weight.shape, G(y, [x])]'),
 'lazy_sd_before': 'm = nn.LazyLinear(3); list(m.state_dict())',
 'identity_args': "nn.Identity(54, unused='x')(L.ones(2))",
 'lazy_double_before_call': ('m = nn.LazyLinear(3); m.double(); a = [type(m.weight).__name__, m.weight.dtype]'
     '; y = m(L.ones(2, 4, dtype=L.float64))'
     '; [a, type(m).__name__, type(m.weight).__name__, m.weight.dtype, y.dtype, y.shape]'),
 'lazy_bn_half_then_float': ('m = nn.LazyBatchNorm1d(); m.half()'
     '; a = [m.running_mean.dtype, type(m.running_mean).__name__, type(m.weight).__name__]; m.float()'
     '; y = m(L.ones(2, 3)); [a, y.shape, m.running_mean.dtype, type(m.running_mean).__name__]'),
 'lazy_conv_to_dtype_kw': ('m = nn.LazyConv2d(2, 3); m.to(dtype=L.float64); y = m(L.ones(1, 2, 4, 4, dtype=L.float64))'
     '; [y.dtype, y.shape, m.weight.shape]'),
 'uninit_conversions': ('p = nn.UninitializedParameter(); b = nn.UninitializedBuffer()'
     '; [type(p.double()).__name__, p.double().dtype, type(b.half()).__name__, type(b.data).__name__,'
     ' type(p.data).__name__, type(p.to(L.float64)).__name__]'),
 'uninit_shape': 'nn.UninitializedParameter().double().shape',
 'uninit_other_op': 'nn.UninitializedParameter() + 1',
 'share_memory_module': ('L.manual_seed(0)'
     '; net = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))'
     '; w = net[0].weight'
     '; [net.share_memory() is net, net[0].weight is w, net[0].weight.is_shared(),'
     ' net[1].running_mean.is_shared(), net[1].num_batches_tracked.is_shared()]'),
 'share_memory_lazy': 'nn.LazyLinear(2).share_memory()',
}


# gradients of gradients through layers and losses
SECOND_ORDER = {
 'hg_conv1d_same_reflect': ('xs = [S(2, 2, 6), S(3, 2, 4, seed=2)]'
     "; out = (lambda x, w: F.conv1d(F.pad(x, (1, 2), mode='reflect'), w, dilation=1))(*xs); G(out, xs)"),
 'hg_conv2d_same': ('xs = [S(1, 2, 5, 5), S(2, 2, 2, 3, seed=2), S(2, seed=3)]'
     "; out = (lambda x, w, b: F.conv2d(x * x, w, b, padding='same', dilation=(1, 2)))(*xs); G(out, xs)"),
 'hg_conv3d_groups_stride': ('xs = [S(1, 4, 3, 4, 3), S(2, 2, 2, 2, 2, seed=2)]'
     '; out = (lambda x, w: F.conv3d(x * x, w, groups=2, stride=2, padding=1))(*xs); G(out, xs)'),
 'hg_convT1d_groups': ('xs = [S(2, 4, 3), S(4, 1, 2, seed=2), S(2, seed=3)]'
     '; out = (lambda x, w, b: F.conv_transpose1d(x * x, w, b, stride=3, groups=2, output_padding=2,'
     ' dilation=2))(*xs)'
     '; G(out, xs)'),
 'hg_convT3d': ('xs = [S(1, 2, 2, 3, 2), S(2, 1, 2, 2, 2, seed=2)]'
     '; out = (lambda x, w: F.conv_transpose3d(x * x, w, stride=(2, 1, 1), padding=(0, 1, 0)))(*xs); G(out, xs)'),
 'hg_maxpool1d_dil': (
     'xs = [S(2, 2, 9)]; out = (lambda x: F.max_pool1d(x * x, 3, 2, 1, dilation=2, ceil_mode=True))(*xs)'
     '; G(out, xs)'),
 'hg_maxpool3d': 'xs = [S(1, 1, 3, 3, 3)]; out = (lambda x: F.max_pool3d(x * x, 2, 1))(*xs); G(out, xs)',
 'hg_avgpool1d': ('xs = [S(2, 2, 8)]'
     '; out = (lambda x: F.avg_pool1d(x * x, 3, 2, 1, ceil_mode=True, count_include_pad=False))(*xs); G(out, xs)'),
 'hg_adaptive_max2d': 'xs = [S(1, 2, 5, 7)]; out = (lambda x: F.adaptive_max_pool2d(x * x, (2, 3)))(*xs); G(out, xs)',
 'hg_adaptive_avg1d': 'xs = [S(2, 2, 7)]; out = (lambda x: F.adaptive_avg_pool1d(x * x, 3))(*xs); G(out, xs)',
 'hg_lppool2d': 'xs = [S(1, 2, 4, 4)]; out = (lambda x: F.lp_pool2d(x * x + 0.1, 3., (2, 1)))(*xs); G(out, xs)',
 'hg_fracmax': ('s = L.tensor([[[0.3, 0.6], [0.9, 0.1]]], dtype=L.float64); xs = [S(1, 2, 6, 6)]'
     '; out = (lambda x: F.fractional_max_pool2d(x * x, 2, output_size=3, _random_samples=s))(*xs); G(out, xs)'),
 'hg_bn_eval_noaffine': ('rm = S(3, grad=False); rv = S(3, low=0.5, high=2., seed=4, grad=False); xs = [S(2, 3, 4)]'
     '; out = (lambda x: F.batch_norm(x * x, rm, rv, training=False, eps=0.01))(*xs); G(out, xs)'),
 'hg_bn_train_w_only': ('xs = [S(4, 3), S(3, seed=2)]'
     '; out = (lambda x, w: F.batch_norm(x * x, None, None, w, None, training=True))(*xs); G(out, xs)'),
 'hg_in_affine_track': ('m = nn.InstanceNorm1d(3, affine=True, track_running_stats=True).double(); xs = [S(2, 3, 5)]'
     '; out = (lambda x: m(x * x))(*xs); G(out, xs)'),
 'hg_gn_groups1': ('xs = [S(2, 4, 3), S(4, seed=2), S(4, seed=3)]'
     '; out = (lambda x, w, b: F.group_norm(x * x, 1, w, b, eps=1e-3))(*xs); G(out, xs)'),
 'hg_rms_2d': ('xs = [S(2, 2, 3), S(2, 3, seed=2)]; out = (lambda x, w: F.rms_norm(x * x, (2, 3), w, eps=1e-4))(*xs)'
     '; G(out, xs)'),
 'hg_rms_noweight': 'xs = [S(4, 3)]; out = (lambda x: F.rms_norm(x, (3,)))(*xs); G(out, xs)',
 'hg_embedding_bag_sum_psw': ('i = L.tensor([1, 0, 3, 3]); o = L.tensor([0, 2]); xs = [S(4, 3), S(4, seed=2)]'
     "; out = (lambda w, p: F.embedding_bag(i, w * w, o, mode='sum', per_sample_weights=p * p))(*xs); G(out, xs)"),
 'hg_embedding_bag_max': ('i = L.tensor([1, 0, 3, 2]); o = L.tensor([0, 2]); xs = [S(4, 3)]'
     "; out = (lambda w: F.embedding_bag(i, w * w, o, mode='max'))(*xs); G(out, xs)"),
 'hg_embedding_scale_freq': ('i = L.tensor([1, 1, 3]); xs = [S(4, 3)]'
     '; out = (lambda w: F.embedding(i, w * w, scale_grad_by_freq=True))(*xs); G(out, xs)'),
 'hg_lstm_bf_bidir': (
     'L.manual_seed(0); m = nn.LSTM(3, 2, batch_first=True, bidirectional=True).double(); xs = [S(2, 3, 3)]'
     '; out = (lambda x: m(x)[0])(*xs); G(out, xs)'),
 'hg_lstm_proj': ('L.manual_seed(0); m = nn.LSTM(3, 4, proj_size=2).double(); xs = [S(3, 2, 3)]'
     '; out = (lambda x: m(x)[1][0])(*xs); G(out, xs)'),
 'hg_gru_h0': ('L.manual_seed(0); m = nn.GRU(3, 2, num_layers=2).double(); xs = [S(3, 2, 3), S(2, 2, 2, seed=3)]'
     '; out = (lambda x, h: m(x, h)[0])(*xs); G(out, xs)'),
 'hg_rnn_relu_packed': ("L.manual_seed(0); m = nn.RNN(3, 2, nonlinearity='relu').double(); xs = [S(3, 2, 3)]"
     '; out = (lambda x: nn.utils.rnn.pad_packed_sequence(m(nn.utils.rnn.pack_padded_sequence(x, [3, 2],'
     ' enforce_sorted=True))[0])[0])(*xs)'
     '; G(out, xs)'),
 'hg_lstm_packed_unsorted': ('L.manual_seed(0); m = nn.LSTM(3, 2).double(); xs = [S(3, 2, 3)]'
     '; out = (lambda x: m(nn.utils.rnn.pack_padded_sequence(x, [2, 3], enforce_sorted=False))[1][1])(*xs)'
     '; G(out, xs)'),
 'hg_mha_masks': ('L.manual_seed(0); m = nn.MultiheadAttention(4, 2, batch_first=True).double()'
     '; kpm = L.tensor([[False, True, False], [False, False, False]]); xs = [S(2, 2, 4), S(2, 3, 4, seed=2)]'
     '; out = (lambda q, k: m(q, k, k, key_padding_mask=kpm)[0])(*xs); G(out, xs)'),
 'hg_mha_weights': ('L.manual_seed(0); m = nn.MultiheadAttention(4, 2).double(); am = S(2, 3, seed=5, grad=False)'
     '; xs = [S(2, 2, 4), S(3, 2, 4, seed=2)]; out = (lambda q, k: m(q, k, k, attn_mask=am)[1])(*xs); G(out, xs)'),
 'hg_mha_bias_kv': ('L.manual_seed(0)'
     '; m = nn.MultiheadAttention(4, 1, add_bias_kv=True, add_zero_attn=True, kdim=3, vdim=3).double()'
     '; xs = [S(2, 2, 4), S(3, 2, 3, seed=2)]; out = (lambda q, k: m(q, k, k)[0])(*xs); G(out, xs)'),
 'hg_tel_norm_first': ('L.manual_seed(0)'
     "; m = nn.TransformerEncoderLayer(4, 2, 6, dropout=0., norm_first=True, activation='gelu').double()"
     '; xs = [S(3, 2, 4)]; out = (lambda x: m(x))(*xs); G(out, xs)'),
 'hg_tdl': ('L.manual_seed(0); m = nn.TransformerDecoderLayer(4, 2, 6, dropout=0.).double()'
     '; xs = [S(2, 2, 4), S(3, 2, 4, seed=2)]; out = (lambda x, mem: m(x, mem))(*xs); G(out, xs)'),
 'hg_sdpa_mask_grad': ('xs = [S(1, 3, 4), S(3, 3, seed=4)]'
     '; out = (lambda q, m: F.scaled_dot_product_attention(q, q, q, attn_mask=m))(*xs); G(out, xs)'),
 'hg_sdpa_gqa': ('xs = [S(1, 4, 3, 2), S(1, 2, 3, 2, seed=2)]'
     '; out = (lambda q, k: F.scaled_dot_product_attention(q, k, k, enable_gqa=True, is_causal=True))(*xs)'
     '; G(out, xs)'),
 'hg_ce_probs_ls': ('xs = [S(3, 4), S(3, 4, seed=2, low=0., high=1.)]'
     '; out = (lambda x, t: F.cross_entropy(x, t, label_smoothing=0.3))(*xs); G(out, xs)'),
 'hg_ce_weight_ignore': ('t = L.tensor([0, 3, 1, 3]); w = S(4, seed=5, low=0.1, high=2., grad=False); xs = [S(4, 4)]'
     '; out = (lambda x: F.cross_entropy(x * x, t, weight=w, ignore_index=3, label_smoothing=0.1))(*xs)'
     '; G(out, xs)'),
 'hg_nll_2d': ('t = Y(2, 3, 3, classes=4); xs = [S(2, 4, 3, 3)]'
     "; out = (lambda x: F.nll_loss(F.log_softmax(x, 1), t, reduction='sum'))(*xs); G(out, xs)"),
 'hg_bce_weight': ('w = S(3, seed=5, low=0.1, high=2., grad=False)'
     '; xs = [S(2, 3, low=0.1, high=0.9), S(2, 3, seed=2, low=0., high=1.)]'
     "; out = (lambda x, t: F.binary_cross_entropy(x, t, weight=w, reduction='sum'))(*xs); G(out, xs)"),
 'hg_bcel_posw': ('xs = [S(2, 3), S(2, 3, seed=2, low=0., high=1.), S(3, seed=3, low=0.5, high=2.)]'
     '; out = (lambda x, t, p: F.binary_cross_entropy_with_logits(x, t, pos_weight=p))(*xs); G(out, xs)'),
 'hg_huber': ('xs = [S(2, 3), S(2, 3, seed=2)]'
     "; out = (lambda x, t: F.huber_loss(x * x, t, delta=0.7, reduction='sum'))(*xs); G(out, xs)"),
 'hg_smoothl1_beta0': (
     'xs = [S(2, 3), S(2, 3, seed=2)]; out = (lambda x, t: F.smooth_l1_loss(x * x, t, beta=0.))(*xs); G(out, xs)'),
 'hg_gauss': ('xs = [S(3, 2), S(3, 1, seed=2)]'
     '; out = (lambda x, v: F.gaussian_nll_loss(x, x.detach() * 0.5, v * v + 0.1, full=True))(*xs); G(out, xs)'),
 'hg_cos_emb': ('y = L.tensor([1, -1, 1]); xs = [S(3, 4), S(3, 4, seed=2)]'
     '; out = (lambda a, b: F.cosine_embedding_loss(a, b, y, margin=0.3))(*xs); G(out, xs)'),
 'hg_triplet_swap': ('xs = [S(3, 4), S(3, 4, seed=2), S(3, 4, seed=3)]'
     '; out = (lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=2., p=1.5, swap=True))(*xs); G(out, xs)'),
 'hg_multi_margin_w': ('t = L.tensor([0, 3, 1]); w = S(4, seed=5, low=0.1, high=2., grad=False); xs = [S(3, 4)]'
     '; out = (lambda x: F.multi_margin_loss(x * x, t, p=2, margin=1.5, weight=w))(*xs); G(out, xs)'),
 'hg_mlsm': ('t = L.tensor([[1, 0, 0, 1], [0, 1, 1, 0]]); xs = [S(2, 4)]'
     '; out = (lambda x: F.multilabel_soft_margin_loss(x * x, t))(*xs); G(out, xs)'),
 'hg_poisson': ('t = S(2, 3, seed=2, low=0., high=3., grad=False); xs = [S(2, 3)]'
     "; out = (lambda x: F.poisson_nll_loss(x, t, log_input=True, full=True, reduction='sum'))(*xs); G(out, xs)"),
 'hg_kl_log_target': ('xs = [S(2, 3), S(2, 3, seed=2)]'
     "; out = (lambda x, t: F.kl_div(x, t, reduction='batchmean', log_target=True))(*xs); G(out, xs)"),
 'hg_ctc_sum': ('t = L.tensor([[1, 2], [1, 1]]); xs = [S(4, 2, 3)]'
     "; out = (lambda lp: F.ctc_loss(lp.log_softmax(2), t, [4, 4], [2, 2], reduction='sum'))(*xs); G(out, xs)"),
 'hg_margin_rank': ('y = L.tensor([1., -1., 1.], dtype=L.float64); xs = [S(3), S(3, seed=2)]'
     '; out = (lambda a, b: F.margin_ranking_loss(a * a, b, y, margin=0.1))(*xs); G(out, xs)'),
 'hg_pdist_p1': 'xs = [S(4, 3)]; out = (lambda x: F.pdist(x * x, p=1.))(*xs); G(out, xs)',
 'hg_cdist_inf': (
     "xs = [S(3, 2), S(2, 2, seed=2)]; out = (lambda x, y: L.cdist(x, y, p=float('inf')))(*xs); G(out, xs)"),
 'hg_upsample_nearest_exact': (
     "xs = [S(1, 1, 3, 4)]; out = (lambda x: F.interpolate(x * x, scale_factor=1.5, mode='nearest-exact'))(*xs)"
     '; G(out, xs)'),
 'hg_upsample_area': (
     "xs = [S(1, 1, 5, 6)]; out = (lambda x: F.interpolate(x * x, size=(2, 3), mode='area'))(*xs); G(out, xs)"),
 'hg_upsample_linear': (
     "xs = [S(1, 2, 4)]; out = (lambda x: F.interpolate(x * x, scale_factor=2.5, mode='linear'))(*xs)"
     '; G(out, xs)'),
 'hg_grid_sample_border': ('xs = [S(1, 2, 3, 3), S(1, 2, 2, 2, seed=2, low=-1.2, high=1.2)]'
     "; out = (lambda x, g: F.grid_sample(x * x, g, padding_mode='border', align_corners=True))(*xs); G(out, xs)"),
 'hg_affine_grid': ('xs = [S(1, 2, 3)]; out = (lambda th: F.affine_grid(th, [1, 1, 3, 4], align_corners=False))(*xs)'
     '; G(out, xs)'),
 'hg_pixel_unshuffle': 'xs = [S(1, 1, 4, 4)]; out = (lambda x: F.pixel_unshuffle(x * x, 2))(*xs); G(out, xs)',
 'hg_softmax2d': 'xs = [S(1, 3, 2, 2)]; out = (lambda x: nn.Softmax2d()(x * x))(*xs); G(out, xs)',
 'hg_log_softmax_dtype': (
     "xs = [S(2, 3, dtype='float32')]; out = (lambda x: F.log_softmax(x * x, 1, dtype=L.float64))(*xs)"
     '; G(out, xs)'),
 'hg_rrelu_eval': 'xs = [S(5)]; out = (lambda x: F.rrelu(x * x - 1, 0.1, 0.3, training=False))(*xs); G(out, xs)',
 'hg_hardshrink': 'xs = [S(5)]; out = (lambda x: F.hardshrink(x * x, 0.5))(*xs); G(out, xs)',
 'hg_softshrink': 'xs = [S(5)]; out = (lambda x: F.softshrink(x * x - 1, 0.5))(*xs); G(out, xs)',
 'hg_threshold': 'xs = [S(5)]; out = (lambda x: F.threshold(x * x, 0.5, -1.))(*xs); G(out, xs)',
 'hg_relu6': 'xs = [S(5)]; out = (lambda x: F.relu6(x * 4))(*xs); G(out, xs)',
 'hg_elu_inplace': 'xs = [S(5)]; out = (lambda x: F.elu(x * x - 1, 0.7, inplace=True))(*xs); G(out, xs)',
 'hg_leaky_inplace': 'xs = [S(5)]; out = (lambda x: F.leaky_relu_(x * x - 1, 0.2))(*xs); G(out, xs)',
 'hg_hardtanh_inplace': 'xs = [S(5)]; out = (lambda x: F.hardtanh(x * 3, -1., 2., inplace=True))(*xs); G(out, xs)',
 'hg_silu_inplace': 'xs = [S(5)]; out = (lambda x: F.silu(x * x - 1, inplace=True))(*xs); G(out, xs)',
 'hg_mish_inplace': 'xs = [S(5)]; out = (lambda x: F.mish(x * x - 1, inplace=True))(*xs); G(out, xs)',
 'hg_hardswish_inplace': 'xs = [S(5)]; out = (lambda x: F.hardswish(x * 4, inplace=True))(*xs); G(out, xs)',
 'hg_hardsigmoid_inplace': 'xs = [S(5)]; out = (lambda x: F.hardsigmoid(x * 4, inplace=True))(*xs); G(out, xs)',
 'hg_selu_inplace': 'xs = [S(5)]; out = (lambda x: F.selu(x * x - 1, inplace=True))(*xs); G(out, xs)',
 'hg_celu_inplace': 'xs = [S(5)]; out = (lambda x: F.celu(x * x - 1, 2., inplace=True))(*xs); G(out, xs)',
 'hg_prelu_1d': 'xs = [S(5), S(1, seed=2)]; out = (lambda x, a: F.prelu(x * x - 1, a))(*xs); G(out, xs)',
 'hg_prelu_channels': 'xs = [S(2, 3, 2), S(3, seed=2)]; out = (lambda x, a: F.prelu(x * x - 1, a))(*xs); G(out, xs)',
 'hg_glu_dim0': 'xs = [S(4, 3)]; out = (lambda x: F.glu(x * x, 0))(*xs); G(out, xs)',
 'hg_softplus': 'xs = [S(5)]; out = (lambda x: F.softplus(x * x, beta=-1.5, threshold=1.))(*xs); G(out, xs)',
 'hg_linear_bf': ('L.manual_seed(0); m = nn.Linear(3, 2).double(); xs = [S(0, 3)]; out = (lambda x: m(x * x))(*xs)'
     '; G(out, xs)'),
 'hg_bilinear_module': ('L.manual_seed(0); m = nn.Bilinear(2, 3, 2).double(); xs = [S(2, 2), S(2, 3, seed=2)]'
     '; out = (lambda a, b: m(a * a, b))(*xs); G(out, xs)'),
 'hg_spectral_free': ('L.manual_seed(0); m = nn.Linear(3, 2).double(); xs = [S(4, 3)]'
     '; out = (lambda x: F.normalize(m(x), dim=0, p=1.))(*xs); G(out, xs)'),
 'hg_dropout_seeded': 'L.manual_seed(7); xs = [S(6)]; out = (lambda x: F.dropout(x * x, 0.4))(*xs); G(out, xs)',
 'hg_alpha_dropout': (
     'L.manual_seed(7); xs = [S(6)]; out = (lambda x: F.alpha_dropout(x * x, 0.4, True))(*xs); G(out, xs)'),
 'hg_dropout2d': 'L.manual_seed(7); xs = [S(2, 3, 2, 2)]; out = (lambda x: F.dropout2d(x * x, 0.4))(*xs); G(out, xs)',
 'hg_unfold_dil': (
     'xs = [S(1, 2, 4, 4)]; out = (lambda x: F.unfold(x * x, (2, 2), dilation=2, padding=1, stride=2))(*xs)'
     '; G(out, xs)'),
 'hg_fold_stride': 'xs = [S(1, 4, 4)]; out = (lambda x: F.fold(x * x, (4, 4), 2, stride=2))(*xs); G(out, xs)',
 'hg_local_response': 'xs = [S(1, 4, 3)]; out = (lambda x: F.local_response_norm(x * x, 3, k=2.))(*xs); G(out, xs)',
 'hg_channel_shuffle': 'xs = [S(1, 4, 2)]; out = (lambda x: F.channel_shuffle(x * x, 2))(*xs); G(out, xs)',
 'hg_create_graph_backward_params': (
     'L.manual_seed(0); m = nn.Linear(2, 2).double(); x = S(3, 2); l = m(x).pow(2).sum()'
     '; L.autograd.backward(l, create_graph=True); g = m.weight.grad'
     '; gg = L.autograd.grad(g.sum(), [m.weight, x]); [g, gg]'),
}


# torch gives these warnings once per process (TORCH_WARN_ONCE): whether torch's goes out in a
# case depends on the cases run before it, so their warnings are not compared here
_ONCE_PER_PROCESS = ("padding='same'", "create_graph=True); m.zero_grad")


def _program(code):
    """The program as a function of the library: its statements run, then the last one's value
    is returned with the classes of the warnings the program gave."""
    body, _, last = code.rpartition("; ")
    compare_warnings = not any(marker in code for marker in _ONCE_PER_PROCESS)

    def run(L):
        env = {"L": L, "F": L.nn.functional, "nn": L.nn,
               "S": lambda *shape, **kw: sample(L, *shape, **kw), "Y": lambda *shape, **kw: labels(L, *shape, **kw),
               "G": lambda out, inputs, second=True: with_grads(L, out, inputs, second)}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            exec(body, env)
            value = eval(last, env)
        return [value, sorted({w.category.__name__ for w in caught}) if compare_warnings else None]
    return run


GROUPS = {"layers": (LAYERS, 8 * COMPOSITE_ULPS), "norms": (NORMS, NORM_ULPS),
          "sequences": (SEQUENCES, 8 * COMPOSITE_ULPS), "attention": (ATTENTION, 8 * COMPOSITE_ULPS),
          "activations": (ACTIVATIONS, 8 * COMPOSITE_ULPS), "losses": (LOSSES, 8 * COMPOSITE_ULPS),
          "modules": (MODULES, 8 * COMPOSITE_ULPS), "second_order": (SECOND_ORDER, NORM_ULPS)}
CASES = [(group, name) for group, (cases, _) in GROUPS.items() for name in cases]


@pytest.mark.parametrize("group, name", CASES, ids=[f"{g}-{n}" for g, n in CASES])
def test_program_matches_torch(group, name):
    cases, ulps = GROUPS[group]
    twin(_program(cases[name]), ulps=ulps)


def test_backward_with_create_graph_warns_once_per_process():
    """torch's engine warns once per process that backward() with create_graph=True makes a
    parameter and its gradient a reference cycle; autograd.grad does not warn."""
    internals.c10.exception.reset_warn_once("backward(create_graph=True)")
    x = internals.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        internals.autograd.grad((x * x).sum(), x, create_graph=True)
        assert caught == []
        (x * x).sum().backward(create_graph=True)
        (x * x).sum().backward(create_graph=True)
        (x * x).sum().backward()
    assert [w.category for w in caught] == [UserWarning]
    assert str(caught[0].message).startswith("Using backward() with create_graph=True will create a reference cycle "
                                             "between the parameter and its gradient")
    assert x.grad.grad_fn is not None


def test_uneven_same_padding_warns_once_for_every_convolution():
    """An even kernel under padding='same' pads one side more, with a padded copy: torch says so
    once per process, whichever convolution asks first (conv1d here, then conv3d is quiet)."""
    internals.c10.exception.reset_warn_once("_warn_uneven_same_padding")
    F = internals.nn.functional
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        F.conv1d(internals.ones(1, 1, 5), internals.ones(1, 1, 2), padding="same")
        F.conv3d(internals.ones(1, 1, 3, 3, 3), internals.ones(1, 1, 2, 1, 1), padding="same")
    assert [w.category for w in caught] == [UserWarning]


def _laid_out(L, kind, seed=1):
    """A (2, 3, 4, 5) float64 tensor contiguous, channels_last, or with its first and last dims
    swapped in memory (no view of it is (M, N) over the last dim)."""
    t = torch.randn(2, 3, 4, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))
    if kind == "channels_last":
        t = t.to(memory_format=torch.channels_last)
    elif kind == "swapped":
        t = t.transpose(0, -1).contiguous().transpose(0, -1)
    return t if L is torch else internals.from_torch(t)


@pytest.mark.parametrize("norm", ["layer_norm", "batch_norm_train", "batch_norm_eval"])
def test_norm_double_backward_keeps_torchs_layouts_and_nodes(norm):
    """The gradients of a normalization's input gradient and weight gradient, for each layout of
    the input and of the cotangent, and each of the incoming gradients: torch's strides (layer
    norm works on the input seen as (M, N), copied where no view shows it; batch norm's input
    gradient keeps the input's layout once the input gradient's own gradient comes in), and
    layer norm's nodes."""
    kinds = ["contiguous", "channels_last", "swapped"]

    def run(L, x_kind, g_kind, which):
        F = L.nn.functional
        x = _laid_out(L, x_kind).requires_grad_()
        n = 5 if norm == "layer_norm" else 3
        w, b = (L.linspace(0.5, 1.5, n, dtype=L.float64).requires_grad_() for _ in range(2))
        if norm == "layer_norm":
            y = F.layer_norm(x, (5,), w, b)
        else:
            train = norm == "batch_norm_train"
            stats = (None, None) if train else (L.zeros(3, dtype=L.float64), L.ones(3, dtype=L.float64))
            y = F.batch_norm(x, *stats, w, b, training=train)
        g_out = (_laid_out(L, g_kind, seed=2) + 0.5).requires_grad_()
        gx, gw, _ = L.autograd.grad(y, [x, w, b], g_out, create_graph=True)
        total = (gx * _laid_out(L, "contiguous", seed=3)).sum() if "input" in which else 0
        total = total + (gw * gw).sum() if "weight" in which else total
        grads = L.autograd.grad(total, [x, g_out], create_graph=True, allow_unused=True)
        # batch norm's node names are compared elsewhere: with only the input gradient's gradient
        # coming in, torch's result ends with the weight's product (MulBackward0), the package's
        # with a sum (AddBackward0)
        node = (lambda t: type(t.grad_fn).__name__) if norm == "layer_norm" else (lambda t: None)
        return [None if t is None else (t.stride(), node(t)) for t in grads]

    for x_kind, g_kind, which in itertools.product(kinds, kinds, ["input", "weight", "input and weight"]):
        assert run(internals, x_kind, g_kind, which) == run(torch, x_kind, g_kind, which), (x_kind, g_kind, which)
