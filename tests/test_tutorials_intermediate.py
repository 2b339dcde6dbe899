"""Programs of the shapes of PyTorch's intermediate tutorials that the other tutorial files do not
run, each once after ``import torch`` and once after ``import internals as torch`` (the same
source text), from one seed, on data it draws itself: the spatial transformer network
(``affine_grid`` and ``grid_sample`` behind a localisation net started at the identity), the
autograd tutorial's pieces (a custom ``autograd.Function`` fitted by hand under ``no_grad``,
tensor and module hooks, ``retain_grad``, ``detach``, gradients accumulated over micro-batches,
a second derivative), an ``nn.Transformer`` encoder-decoder trained on a copy task with causal
masks, tied input and output embeddings and gradient clipping, greedy decoding in eval mode, and
a deep residual MLP trained through ``torch.utils.checkpoint`` beside the same model without it.

What they print must agree (text exactly once numbers are masked, each number within two units
of its last printed digit or 1e-5 of its size: float32 training in other summation orders), and
so must the models' final parameters.
"""
import pytest
import torch
from test_tutorials import assert_trains_like_torch, one_torch_thread  # noqa: F401 (an autouse fixture)

SPATIAL_TRANSFORMER = '''
nn = torch.nn
F = torch.nn.functional
optim = torch.optim
DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset

torch.manual_seed(0)
# MNIST-shaped digits: 4 classes, each a bright bar at its own place, shifted and noised
y_all = torch.randint(0, 4, (80,))
x_all = 0.1 * torch.randn(80, 1, 16, 16)
for i in range(80):
    row = 3 + 3 * int(y_all[i]) + int(torch.randint(-1, 2, (1,)))
    x_all[i, 0, row:row + 2, 2:14] += 1.0
train_loader = DataLoader(TensorDataset(x_all[:64], y_all[:64]), batch_size=16, shuffle=True)
test_loader = DataLoader(TensorDataset(x_all[64:], y_all[64:]), batch_size=16)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 6, kernel_size=3)
        self.conv2 = nn.Conv2d(6, 8, kernel_size=3)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(8 * 2 * 2, 20)
        self.fc2 = nn.Linear(20, 4)
        # Spatial transformer localization-network
        self.localization = nn.Sequential(
            nn.Conv2d(1, 4, kernel_size=5),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True),
            nn.Conv2d(4, 6, kernel_size=3),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True)
        )
        # Regressor for the 3 * 2 affine matrix
        self.fc_loc = nn.Sequential(
            nn.Linear(6 * 2 * 2, 16),
            nn.ReLU(True),
            nn.Linear(16, 3 * 2)
        )
        # Initialize the weights/bias with identity transformation
        self.fc_loc[2].weight.data.zero_()
        self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))

    def stn(self, x):
        xs = self.localization(x)
        xs = xs.view(-1, 6 * 2 * 2)
        theta = self.fc_loc(xs)
        theta = theta.view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=False)
        x = F.grid_sample(x, grid, align_corners=False)
        return x

    def forward(self, x):
        x = self.stn(x)
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 8 * 2 * 2)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


model = Net()
optimizer = optim.SGD(model.parameters(), lr=0.05, momentum=0.5)


def train(epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % 2 == 0:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader), loss.item()))


def test():
    with torch.no_grad():
        model.eval()
        test_loss = 0
        correct = 0
        for data, target in test_loader:
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction='sum').item()
            pred = output.max(1, keepdim=True)[1]
            correct += pred.eq(target.view_as(pred)).sum().item()
        test_loss /= len(test_loader.dataset)
        print('Test set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)'
              .format(test_loss, correct, len(test_loader.dataset),
                      100. * correct / len(test_loader.dataset)))


for epoch in range(1, 3):
    train(epoch)
    test()

with torch.no_grad():
    data = next(iter(test_loader))[0]
    transformed = model.stn(data)
    print(transformed.shape, model.fc_loc[2].bias)
    # the grid itself, for a fixed rotation and zoom: a reader's sanity check of affine_grid
    theta = torch.tensor([[[0.8, -0.6, 0.1], [0.6, 0.8, -0.2]]])
    grid = F.affine_grid(theta, (1, 1, 3, 4), align_corners=True)
    print(grid.shape, grid[0, 0])
    for mode, padding in (("bilinear", "zeros"), ("nearest", "border"), ("bicubic", "reflection")):
        out = F.grid_sample(data[:2], F.affine_grid(theta.expand(2, 2, 3), (2, 1, 8, 8), align_corners=False),
                            mode=mode, padding_mode=padding, align_corners=False)
        print(mode, padding, out.shape, round(out.sum().item(), 3))
'''

AUTOGRAD_PIECES = '''
import math
nn = torch.nn


class LegendrePolynomial3(torch.autograd.Function):
    """The autograd tutorial's custom function: P3(x) = (5x^3 - 3x) / 2."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)


dtype = torch.float
torch.manual_seed(0)
x = torch.linspace(-math.pi, math.pi, 200, dtype=dtype)
y = torch.sin(x)
a = torch.full((), 0.0, dtype=dtype, requires_grad=True)
b = torch.full((), -1.0, dtype=dtype, requires_grad=True)
c = torch.full((), 0.0, dtype=dtype, requires_grad=True)
d = torch.full((), 0.3, dtype=dtype, requires_grad=True)
learning_rate = 5e-6
for t in range(300):
    P3 = LegendrePolynomial3.apply
    y_pred = a + b * P3(c + d * x)
    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, f"{loss.item():.4f}", y_pred.grad_fn.next_functions[1][0].next_functions[1][0].name())
    loss.backward()
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None
# a and c stay at rounding noise (their exact gradients vanish for an odd target): four places
print(f'Result: y = {a.item():.4f} + {b.item():.4f} * P3({c.item():.4f} + {d.item():.4f} x)')
print(torch.autograd.gradcheck(LegendrePolynomial3.apply, (torch.randn(4, dtype=torch.double, requires_grad=True),)))

# hooks on tensors, retain_grad on a non-leaf, detach
w = torch.randn(3, 3, requires_grad=True)
inp = torch.randn(2, 3)
hidden = inp @ w
hidden.retain_grad()
seen = []
handle = hidden.register_hook(lambda g: seen.append(g.clone()) or g * 2)
out = hidden.tanh().sum()
out.backward()
print(hidden.is_leaf, hidden.requires_grad, hidden.grad_fn.name(), hidden.grad.shape)
print(torch.equal(seen[0], hidden.grad), w.grad)
handle.remove()
frozen = hidden.detach()
print(frozen.requires_grad, frozen.grad_fn, frozen.data_ptr() == hidden.data_ptr())
with torch.no_grad():
    print((inp @ w).requires_grad)
print(torch.is_grad_enabled())

# module hooks: a forward hook keeps the activation, a backward hook scales the gradient
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
activations = {}


def keep(name):
    def hook(module, args, output):
        activations[name] = output.detach()
    return hook


model[1].register_forward_hook(keep("relu"))
model[0].register_forward_pre_hook(lambda module, args: (args[0] * 0.5,))
grads_out = []
model[2].register_full_backward_hook(lambda module, grad_input, grad_output: grads_out.append(grad_output[0].shape))
loss = model(torch.randn(5, 3)).pow(2).mean()
loss.backward()
print(activations["relu"].shape, (activations["relu"] >= 0).all().item(), grads_out, model[0].weight.grad)

# gradient accumulation: four micro-batches of 4 give the gradient of one batch of 16
torch.manual_seed(1)
net = nn.Linear(6, 1)
xs, ys = torch.randn(16, 6), torch.randn(16, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
opt.zero_grad()
for k in range(4):
    loss = nn.functional.mse_loss(net(xs[4 * k:4 * k + 4]), ys[4 * k:4 * k + 4]) / 4
    loss.backward()
accumulated = net.weight.grad.clone()
opt.zero_grad()
nn.functional.mse_loss(net(xs), ys).backward()
print((accumulated - net.weight.grad).abs().max() < 1e-6, accumulated)
opt.step()

# a second derivative, and torch.autograd.grad with create_graph
z = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
f = (z ** 3).sum()
g, = torch.autograd.grad(f, z, create_graph=True)
h, = torch.autograd.grad(g.sum(), z)
print(g, h, g.grad_fn.name())
'''

TRANSFORMER_COPY = '''
import math
nn = torch.nn

torch.manual_seed(0)
ntokens, d_model, BOS = 12, 16, 1


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=32):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, 1, d_model)
        pe[:, 0, 0::2] = torch.sin(position * div_term)
        pe[:, 0, 1::2] = torch.cos(position * div_term)
        self.register_buffer('pe', pe)

    def forward(self, x):
        x = x + self.pe[:x.size(0)]
        return self.dropout(x)


class Seq2SeqTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(ntokens, d_model)
        self.pos = PositionalEncoding(d_model)
        self.transformer = nn.Transformer(d_model=d_model, nhead=2, num_encoder_layers=2, num_decoder_layers=1,
                                          dim_feedforward=32, dropout=0.1)
        self.generator = nn.Linear(d_model, ntokens)
        self.generator.weight = self.embed.weight      # tied input and output embeddings

    def encode(self, src):
        return self.transformer.encoder(self.pos(self.embed(src) * math.sqrt(d_model)))

    def decode(self, tgt, memory):
        tgt_mask = nn.Transformer.generate_square_subsequent_mask(tgt.size(0))
        return self.transformer.decoder(self.pos(self.embed(tgt) * math.sqrt(d_model)), memory, tgt_mask=tgt_mask)

    def forward(self, src, tgt):
        return self.generator(self.decode(tgt, self.encode(src)))


model = Seq2SeqTransformer()
print(sum(p.numel() for p in model.parameters()), model.generator.weight is model.embed.weight)
print(nn.Transformer.generate_square_subsequent_mask(3))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01, betas=(0.9, 0.98), eps=1e-9)
criterion = nn.CrossEntropyLoss()
# the copy task: the target is the source; sequences (seq, batch) as the tutorial's
for step in range(12):
    src = torch.randint(2, ntokens, (6, 8))
    tgt_in = torch.cat([torch.full((1, 8), BOS), src[:-1]])
    model.train()
    logits = model(src, tgt_in)
    loss = criterion(logits.reshape(-1, ntokens), src.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    optimizer.step()
    if step % 3 == 2:
        ppl = math.exp(loss.item())
        print(f"step {step:2d} | loss {loss.item():5.3f} | grad norm {norm.item():6.3f} | ppl {ppl:7.2f}")

model.eval()
with torch.no_grad():
    src = torch.randint(2, ntokens, (6, 2))
    memory = model.encode(src)
    ys = torch.full((1, 2), BOS)
    for i in range(6):
        out = model.decode(ys, memory)
        prob = model.generator(out[-1])
        next_word = prob.argmax(dim=1)
        ys = torch.cat([ys, next_word.unsqueeze(0)], dim=0)
    print(ys.shape, memory.shape, out.shape)
'''

CHECKPOINTED_MLP = '''
nn = torch.nn
F = torch.nn.functional
checkpoint = torch.utils.checkpoint.checkpoint


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, 2 * width)
        self.drop = nn.Dropout(0.1)
        self.fc2 = nn.Linear(2 * width, width)

    def forward(self, x):
        return x + self.fc2(self.drop(F.gelu(self.fc1(self.norm(x)))))


class DeepMLP(nn.Module):
    def __init__(self, use_checkpoint):
        super().__init__()
        self.use_checkpoint = use_checkpoint
        self.inp = nn.Linear(8, 16)
        self.blocks = nn.ModuleList(Block(16) for _ in range(3))
        self.out = nn.Linear(16, 3)

    def forward(self, x):
        x = self.inp(x)
        for block in self.blocks:
            # the dropout mask drawn again in the recomputation must be the first pass's one
            x = checkpoint(block, x, use_reentrant=False) if self.use_checkpoint else block(x)
        return self.out(x)


torch.manual_seed(0)
x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))
models = []
for use_checkpoint in (False, True):
    torch.manual_seed(1)
    model = DeepMLP(use_checkpoint)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)
    for step in range(8):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0, norm_type=2.0)
        opt.step()
        sched.step()
        if step % 2 == 1:
            print(use_checkpoint, step, f"{loss.item():.5f}", f"{total.item():.5f}", sched.get_last_lr())
    models.append(model)
plain, checkpointed = models
print(all(torch.equal(p, q) for p, q in zip(plain.parameters(), checkpointed.parameters())))
checkpointed.eval()
with torch.no_grad():
    print((checkpointed(x).argmax(1) == y).float().mean().item())
'''

# name: (source, the variables that hold the trained models or tensors)
TUTORIALS = {
    "spatial_transformer": (SPATIAL_TRANSFORMER, ["model", "transformed"]),
    "autograd_pieces": (AUTOGRAD_PIECES, ["a", "b", "c", "d", "model", "net", "h"]),
    "transformer_copy_task": (TRANSFORMER_COPY, ["model", "ys"]),
    "checkpointed_mlp": (CHECKPOINTED_MLP, ["plain", "checkpointed"]),
}


def signal_only(name, value):
    """The parameter without its parts whose gradient is zero in exact arithmetic: an attention's
    key bias adds ``q·b`` to every score of a query, which the softmax cancels. What reaches it is
    rounding noise, and Adam scales noise up to full-size steps, so its value follows each
    library's summation order (the query and value biases are compared)."""
    if name.endswith("in_proj_bias"):
        third = value.shape[0] // 3
        return torch.cat([value[:third], value[2 * third:]])
    return value


@pytest.mark.slow
@pytest.mark.parametrize("name", TUTORIALS)
def test_tutorial_runs_like_torch(name):
    assert_trains_like_torch(*TUTORIALS[name], signal=signal_only)
