"""Training programs of the beginner tutorials' shapes, written apart from the tutorials' own code
(``test_tutorials.py`` and ``test_tutorials_beyond_basics.py`` run those): each is run once after
``import torch`` and once after ``import internals as torch`` (the same source text), from one
seed, on data it draws itself. A Fashion-MNIST-shaped MLP (``Flatten``, SiLU, LayerNorm, label
smoothing, Nesterov SGD with weight decay, ExponentialLR, ``inference_mode``); a small CNN with
BatchNorm, GroupNorm, grouped convolutions, Dropout2d and adaptive pooling under Adam with AMSGrad
and MultiStepLR; a character model, a two-layer LSTM under RMSprop and a bidirectional GRU under
Adagrad, sampled with ``multinomial``; a TransformerEncoder classifier (pre-norm, GELU, a padding
mask) with a LambdaLR warm-up; a causal TransformerEncoder fitted to running means under a
three-phase OneCycleLR; an EmbeddingBag classifier (per-sample weights, a max bag, a class
weighted loss, fractional ``random_split``); a regression with ReduceLROnPlateau and early
stopping; and a checkpoint saved halfway by one library and resumed by either.

What they print must agree (text exactly once numbers are masked, each number within two units
of its last printed digit or 1e-5 of its size: float32 training in other summation orders), and
so must the models' final parameters and buffers.

The programs reach ``DataLoader`` and the datasets as ``torch.utils.data.X``: a ``from
torch.utils.data import DataLoader`` line names the module ``torch`` in ``sys.modules``, which is
real torch even after ``import internals as torch``, so its loader would shuffle with torch's
generator rather than internals' one.
"""
import contextlib
import io
import warnings

import pytest
import torch
from test_tutorials import HEADER, assert_prints_alike, one_torch_thread, run_both, run_tutorial, state_of  # noqa: F401

import internals

FASHION_MLP = '''
nn = torch.nn
F = torch.nn.functional
DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset

torch.manual_seed(1)
# Fashion-MNIST-shaped images: 10 classes of 12x12 "pictures", each class its own mean picture
means = torch.rand(10, 1, 12, 12)
y_all = torch.randint(0, 10, (160,))
x_all = means[y_all] + 0.3 * torch.randn(160, 1, 12, 12)
train_ds = TensorDataset(x_all[:128], y_all[:128])
test_ds = TensorDataset(x_all[128:], y_all[128:])
train_dl = DataLoader(train_ds, batch_size=32, shuffle=True, drop_last=True)
test_dl = DataLoader(test_ds, batch_size=16)


class FashionNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.body = nn.Sequential(
            nn.Linear(144, 64), nn.SiLU(), nn.Dropout(0.2),
            nn.Linear(64, 32), nn.LeakyReLU(0.1), nn.LayerNorm(32),
            nn.Linear(32, 10))

    def forward(self, x):
        return self.body(self.flatten(x))


model = FashionNet()
print(model)
print(sum(p.numel() for p in model.parameters() if p.requires_grad))
loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4)
scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.9)
for epoch in range(3):
    model.train()
    for batch, (X, y) in enumerate(train_dl):
        loss = loss_fn(model(X), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if batch % 2 == 0:
            print(f"epoch {epoch} batch {batch} loss {loss.item():>7f}")
    scheduler.step()
    model.eval()
    correct, test_loss = 0, 0.0
    with torch.inference_mode():
        for X, y in test_dl:
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()
    print(f"Accuracy: {100 * correct / len(test_ds):>0.1f}%, Avg loss: {test_loss / len(test_dl):>8f}")
    print(f"lr {scheduler.get_last_lr()[0]:.6f}")
probs = F.softmax(model(x_all[:3]), dim=1)
print(probs.max(1))
'''

SMALL_CNN = '''
nn = torch.nn
F = torch.nn.functional

torch.manual_seed(2)
x_all = torch.randn(64, 3, 16, 16)
y_all = (x_all[:, 0].mean((1, 2)) > x_all[:, 1].mean((1, 2))).long() + 2 * (x_all[:, 2].mean((1, 2)) > 0).long()


class SmallCNN(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
            nn.Conv2d(8, 8, 3, padding=1, groups=2), nn.GroupNorm(2, 8), nn.GELU(),
            nn.MaxPool2d(2), nn.Dropout2d(0.1),
            nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False),
            nn.BatchNorm2d(16, momentum=0.2), nn.Hardswish(),
            nn.AdaptiveAvgPool2d((1, 1)))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.25), nn.Linear(16, 16, bias=False),
                                        nn.BatchNorm1d(16), nn.ELU(), nn.Linear(16, num_classes))

    def forward(self, x):
        return self.classifier(self.features(x))


net = SmallCNN()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(net.parameters(), lr=3e-3, amsgrad=True)
scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[4, 8], gamma=0.5)
for epoch in range(3):
    net.train()
    perm = torch.randperm(64)
    running = 0.0
    for i in range(0, 64, 16):
        idx = perm[i:i + 16]
        optimizer.zero_grad()
        loss = criterion(net(x_all[idx]), y_all[idx])
        loss.backward()
        optimizer.step()
        scheduler.step()
        running += loss.item()
    net.eval()
    with torch.no_grad():
        acc = (net(x_all).argmax(1) == y_all).float().mean().item()
    print(f"[{epoch + 1}] loss: {running / 4:.4f} acc {acc:.4f} lr {scheduler.get_last_lr()}")
print(net.features[1].running_mean)
print(net.features[1].num_batches_tracked)
print(net.classifier[3].running_var)
'''

CHAR_MODELS = '''
nn = torch.nn

torch.manual_seed(3)
text = "hello world, the quick brown fox jumps over the lazy dog. " * 3
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
seq_len, batch = 12, 4


class CharModel(nn.Module):
    def __init__(self, vocab, hidden, kind):
        super().__init__()
        self.embed = nn.Embedding(vocab, 10)
        if kind == "lstm":
            self.rnn = nn.LSTM(10, hidden, num_layers=2, dropout=0.1, batch_first=True)
        else:
            self.rnn = nn.GRU(10, hidden, num_layers=1, batch_first=True, bidirectional=True)
            hidden = 2 * hidden
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x, state=None):
        out, state = self.rnn(self.embed(x), state)
        return self.head(out), state


def batches():
    starts = torch.randint(0, len(data) - seq_len - 1, (batch,))
    x = torch.stack([data[s:s + seq_len] for s in starts])
    y = torch.stack([data[s + 1:s + seq_len + 1] for s in starts])
    return x, y


for kind, opt_cls in (("lstm", torch.optim.RMSprop), ("gru", torch.optim.Adagrad)):
    model = CharModel(len(chars), 16, kind)
    optimizer = opt_cls(model.parameters(), lr=0.01)
    criterion = nn.CrossEntropyLoss()
    for step in range(12):
        x, y = batches()
        logits, _ = model(x)
        loss = criterion(logits.reshape(-1, len(chars)), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step % 4 == 0:
            print(kind, step, f"{loss.item():.5f}", f"{norm.item():.4f}")
    with torch.no_grad():
        model.eval()
        idx = torch.tensor([[stoi["h"]]])
        state = None
        out = "h"
        for _ in range(15):
            logits, state = model(idx, state)
            probs = torch.softmax(logits[0, -1] / 0.8, dim=0)
            nxt = torch.multinomial(probs, 1)
            out += chars[int(nxt)]
            idx = nxt.view(1, 1)
        print(kind, repr(out))
    if kind == "lstm":
        lstm_model = model
    else:
        gru_model = model
print([k for k in lstm_model.state_dict()])
'''

TRANSFORMER_CLASSIFIER = '''
nn = torch.nn
F = torch.nn.functional
import math

torch.manual_seed(4)
vocab, d_model, n_cls, pad = 30, 16, 3, 0
lengths = torch.randint(3, 9, (40,))
seqs = torch.zeros(40, 8, dtype=torch.long)
for i, n in enumerate(lengths.tolist()):
    seqs[i, :n] = torch.randint(1, vocab, (n,))
labels = (seqs.sum(1) % n_cls)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=32):
        super().__init__()
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(1, max_len, d_model)
        pe[0, :, 0::2] = torch.sin(position * div_term)
        pe[0, :, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe)

    def forward(self, x):
        return x + self.pe[:, :x.size(1)]


class TransformerClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model, padding_idx=pad)
        self.pos = PositionalEncoding(d_model)
        layer = nn.TransformerEncoderLayer(d_model, nhead=4, dim_feedforward=32, dropout=0.1,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, n_cls)

    def forward(self, x):
        mask = x == pad
        h = self.encoder(self.pos(self.embed(x) * math.sqrt(d_model)), src_key_padding_mask=mask)
        keep = (~mask).unsqueeze(-1).float()
        return self.head((h * keep).sum(1) / keep.sum(1))


model = TransformerClassifier()
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.01)
warmup = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / 4))
for epoch in range(3):
    model.train()
    for i in range(0, 40, 10):
        logits = model(seqs[i:i + 10])
        loss = F.cross_entropy(logits, labels[i:i + 10])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        warmup.step()
    model.eval()
    with torch.no_grad():
        acc = (model(seqs).argmax(-1) == labels).float().mean()
    print(f"epoch {epoch} loss {loss.item():.5f} acc {acc.item():.3f} lr {warmup.get_last_lr()[0]:.5f}")
'''

BAG_CLASSIFIER = '''
nn = torch.nn
DataLoader, Dataset = torch.utils.data.DataLoader, torch.utils.data.Dataset

torch.manual_seed(5)


class Reviews(Dataset):
    def __init__(self, n):
        self.lengths = torch.randint(4, 10, (n,))
        self.texts = [torch.randint(0, 40, (int(k),)) for k in self.lengths]
        self.labels = torch.tensor([int(t.float().mean() > 19.5) for t in self.texts])

    def __len__(self):
        return len(self.texts)

    def __getitem__(self, i):
        return self.texts[i], self.labels[i]


def collate(batch):
    texts, labels = zip(*batch)
    offsets = torch.tensor([0] + [len(t) for t in texts[:-1]]).cumsum(0)
    weights = torch.cat([torch.linspace(1.0, 0.5, len(t)) for t in texts])
    return torch.cat(texts), offsets, weights, torch.stack(labels)


class BagModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(40, 12, mode="sum")
        self.bag_max = nn.EmbeddingBag(40, 4, mode="max")
        self.fc = nn.Linear(16, 2)

    def forward(self, text, offsets, weights):
        a = self.bag(text, offsets, per_sample_weights=weights)
        b = self.bag_max(text, offsets)
        return self.fc(torch.cat([a, b], dim=1))


ds = Reviews(60)
train_ds, val_ds = torch.utils.data.random_split(ds, [0.8, 0.2])
loader = DataLoader(train_ds, batch_size=12, shuffle=True, collate_fn=collate)
model = BagModel()
criterion = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0]))
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
for epoch in range(4):
    for text, offsets, weights, label in loader:
        optimizer.zero_grad()
        loss = criterion(model(text, offsets, weights), label)
        loss.backward()
        optimizer.step()
    scheduler.step()
    with torch.no_grad():
        text, offsets, weights, label = collate([val_ds[i] for i in range(len(val_ds))])
        acc = (model(text, offsets, weights).argmax(1) == label).float().mean()
    print(f"epoch {epoch} loss {loss.item():.5f} val acc {acc.item():.3f} lr {scheduler.get_last_lr()[0]}")
'''

PLATEAU_REGRESSION = '''
nn = torch.nn
import copy

torch.manual_seed(6)
X = torch.randn(96, 5)
true_w = torch.tensor([[1.5], [-2.0], [0.5], [0.0], [3.0]])
y = X @ true_w + 0.1 * torch.randn(96, 1)
X_train, y_train, X_val, y_val = X[:72], y[:72], X[72:], y[72:]
model = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5, patience=2,
                                                       threshold=1e-3)
criterion = nn.HuberLoss(delta=0.5)
best, best_state, bad_epochs, patience = float("inf"), None, 0, 6
for epoch in range(60):
    model.train()
    for i in range(0, 72, 24):
        optimizer.zero_grad()
        loss = criterion(model(X_train[i:i + 24]), y_train[i:i + 24])
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        val = nn.functional.mse_loss(model(X_val), y_val).item()
    scheduler.step(val)
    if val < best - 1e-4:
        best, best_state, bad_epochs = val, copy.deepcopy(model.state_dict()), 0
    else:
        bad_epochs += 1
    if epoch % 5 == 0:
        print(f"epoch {epoch:2d} val {val:.6f} lr {optimizer.param_groups[0]['lr']:.5f}")
    if bad_epochs >= patience:
        print(f"early stop at epoch {epoch}, best val {best:.6f}")
        break
model.load_state_dict(best_state)
print(scheduler.state_dict()["num_bad_epochs"], scheduler.state_dict()["best"] == best)
'''

# The model, data and loop both halves of the checkpoint programs share.
CHECKPOINT_SETUP = '''
nn = torch.nn
import io

torch.manual_seed(7)
X = torch.randn(48, 6)
y = (X[:, :3].sum(1) > 0).long()


def make():
    return nn.Sequential(nn.Linear(6, 12, bias=False), nn.BatchNorm1d(12), nn.ReLU(), nn.Linear(12, 2))


def train(model, optimizer, scheduler, epochs, start):
    for epoch in range(start, start + epochs):
        for i in range(0, 48, 16):
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(X[i:i + 16]), y[i:i + 16])
            loss.backward()
            optimizer.step()
        scheduler.step()
        print(f"epoch {epoch} loss {loss.item():.6f} lr {scheduler.get_last_lr()[0]:.6f}")
    return loss


'''

CHECKPOINT_HALFWAY = CHECKPOINT_SETUP + '''
model = make()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=6)
loss = train(model, optimizer, scheduler, 3, 0)
checkpoint = io.BytesIO()
torch.save({"epoch": 3, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(), "loss": loss.detach(), "rng": torch.get_rng_state()},
           checkpoint)
checkpoint.seek(0)
train(model, optimizer, scheduler, 3, 3)
'''

RESUME = CHECKPOINT_SETUP + '''
saved = torch.load(checkpoint, weights_only=True)
torch.set_rng_state(saved["rng"])
model = make()
model.load_state_dict(saved["model"])
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
optimizer.load_state_dict(saved["optimizer"])
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=6)
scheduler.load_state_dict(saved["scheduler"])
print("resumed at", saved["epoch"], f"{saved['loss'].item():.6f}")
train(model, optimizer, scheduler, 3, saved["epoch"])
'''

# A causal TransformerEncoder (GELU, batch-first, a sinusoidal positional buffer) fitted to running
# means under OneCycleLR's three linear phases, with a bool padding mask beside the float causal
# one (torch's "mismatched masks" warning: tests/nn/test_transformer.py checks where it points).
TRANSFORMER_RUNNING_MEAN = '''
import math
nn = torch.nn
F = torch.nn.functional

torch.manual_seed(0)
# sequences of 10 numbers; the target at each step is the running mean so far
x_all = torch.randn(64, 10, 1)
steps = torch.arange(1, 11, dtype=torch.float32).view(1, 10, 1)
y_all = x_all.cumsum(dim=1) / steps
pad = torch.zeros(64, 10, dtype=torch.bool)
pad[::4, 8:] = True      # every fourth sequence ends two steps early


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=32):
        super().__init__()
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(1, max_len, d_model)
        pe[0, :, 0::2] = torch.sin(position * div_term)
        pe[0, :, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe)

    def forward(self, x):
        return x + self.pe[:, :x.size(1)]


class SeqModel(nn.Module):
    def __init__(self, d_model=16):
        super().__init__()
        self.inp = nn.Linear(1, d_model)
        self.pos = PositionalEncoding(d_model)
        layer = nn.TransformerEncoderLayer(d_model, nhead=2, dim_feedforward=32, dropout=0.1,
                                           activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.out = nn.Linear(d_model, 1)

    def forward(self, x, mask, pad):
        h = self.encoder(self.pos(self.inp(x)), mask=mask, src_key_padding_mask=pad)
        return self.out(h)


model = SeqModel()
causal = nn.Transformer.generate_square_subsequent_mask(10)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
epochs, batches = 5, 4
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.01, epochs=epochs, steps_per_epoch=batches,
                                                anneal_strategy="linear", three_phase=True)
loss_fn = nn.SmoothL1Loss(reduction="none")
for epoch in range(epochs):
    model.train()
    for b in range(batches):
        sl = slice(16 * b, 16 * (b + 1))
        pred = model(x_all[sl], causal, pad[sl])
        keep = (~pad[sl]).unsqueeze(-1).float()
        loss = (loss_fn(pred, y_all[sl]) * keep).sum() / keep.sum()
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        scheduler.step()
    model.eval()
    with torch.no_grad():
        pred = model(x_all, causal, pad)
        mse = F.mse_loss(pred[~pad], y_all[~pad])
    print(f"epoch {epoch} train {loss.item():.5f} eval mse {mse.item():.5f} lr {scheduler.get_last_lr()[0]:.6f}")
'''


TUTORIALS = {
    "fashion_mlp": (FASHION_MLP, ["model"]),
    "small_cnn": (SMALL_CNN, ["net"]),
    "char_lstm_and_gru": (CHAR_MODELS, ["lstm_model", "gru_model"]),
    "transformer_classifier": (TRANSFORMER_CLASSIFIER, ["model"]),
    "bag_classifier": (BAG_CLASSIFIER, ["model"]),
    "plateau_regression": (PLATEAU_REGRESSION, ["model", "scheduler"]),
    "checkpoint_halfway": (CHECKPOINT_HALFWAY, ["model"]),
    "transformer_running_mean": (TRANSFORMER_RUNNING_MEAN, ["model"]),
}


# Parameters (or parts of one) whose gradient is zero in exact arithmetic, so what reaches them is
# rounding noise that Adam scales up to full-size steps, and their values follow each library's
# summation order: the key projection's bias in attention (it adds one number to each query's
# scores, which the softmax cancels; in_proj_bias holds the query, key and value biases in turn,
# 16 each here). (A layer a BatchNorm follows would have such a bias too, and a running mean that
# carries it: the programs build those layers with bias=False.)
NOISE_ONLY = {
    ("transformer_classifier", "model.encoder.layers.0.self_attn.in_proj_bias"): slice(16, 32),
    ("transformer_classifier", "model.encoder.layers.1.self_attn.in_proj_bias"): slice(16, 32),
    ("transformer_running_mean", "model.encoder.layers.0.self_attn.in_proj_bias"): slice(16, 32),
    ("transformer_running_mean", "model.encoder.layers.1.self_attn.in_proj_bias"): slice(16, 32),
}


def signal_only(name, key, value):
    """``value`` with its noise-only elements (see NOISE_ONLY) set to zero."""
    noise = NOISE_ONLY.get((name, key))
    if noise is None:
        return value
    value = value.detach().clone()
    value[noise] = 0
    return value


def assert_states_close(ours, theirs, variable, name):
    """The same keys in the same order, each value within float32 training's tolerance."""
    ours, theirs = state_of(ours), state_of(theirs)
    assert list(ours) == list(theirs), variable
    for key, value in theirs.items():
        if isinstance(value, torch.Tensor):
            full_key = f"{variable}.{key}"
            value, ours[key] = signal_only(name, full_key, value), signal_only(name, full_key, ours[key])
            torch.testing.assert_close(ours[key].detach(), value.detach(), rtol=1e-4, atol=1e-5,
                                       msg=lambda m, key=key: f"{variable}.{key}: {m}")
        elif isinstance(value, float) or (isinstance(value, list) and value and isinstance(value[0], float)):
            assert ours[key] == pytest.approx(value, rel=1e-5), (variable, key)
        else:
            assert ours[key] == value, (variable, key)


@pytest.mark.slow
@pytest.mark.parametrize("name", TUTORIALS)
def test_program_runs_like_torch(name):
    source, results = TUTORIALS[name]
    our_globals, their_globals = run_both(source)
    for variable in results:
        assert_states_close(our_globals[variable], their_globals[variable], variable, name)


def resume(reader, checkpoint_bytes):
    """What the resuming program prints under ``reader`` from a checkpoint's bytes."""
    buffer = io.StringIO()
    namespace = {"checkpoint": io.BytesIO(checkpoint_bytes)}
    with contextlib.redirect_stdout(buffer), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(HEADER[reader] + RESUME, "<resume>", "exec"), namespace)
    return buffer.getvalue().replace("internals", "torch")


@pytest.mark.parametrize("writer,reader", [(torch, internals), (internals, torch), (internals, internals)],
                         ids=["torch_to_internals", "internals_to_torch", "internals_to_internals"])
def test_checkpoint_resumes_in_either_library(writer, reader):
    """A checkpoint (model, Adam's moments, the cosine schedule, the loss, the generator's state)
    saved after three epochs by one library, loaded by the other, trains the last three epochs
    to the losses torch prints when it runs all six without stopping."""
    uninterrupted, _ = run_tutorial(torch, CHECKPOINT_HALFWAY)
    _, saved = run_tutorial(writer, CHECKPOINT_HALFWAY)
    resumed = resume(reader, saved["checkpoint"].getvalue()).splitlines()
    assert resumed[0].startswith("resumed at 3 ")
    assert_prints_alike("\n".join(resumed[1:]), "\n".join(uninterrupted.splitlines()[3:]))
