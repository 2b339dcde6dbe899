"""Programs shaped like PyTorch's other beginner and intermediate tutorials, run once after
``import torch`` and once after ``import internals as torch`` (the same source text), as
``test_tutorials.py`` runs the Learn-the-Basics family: the 60-minute blitz (its LeNet, manual
SGD and the autograd part), a CIFAR-style network with batch norm, dropout, AdamW under OneCycleLR
and Nesterov SGD under cosine annealing, transfer learning (a new head, parameter groups with their
own learning rates, a frozen feature extractor, StepLR), saving and loading models (state dicts,
optimizer state, a resumable checkpoint, ``strict=False`` warm starts, ``half``/``type``),
``nn.init`` with gradient clipping and MultiStepLR/ReduceLROnPlateau, data loading
(``random_split``, ``WeightedRandomSampler`` for an imbalanced set, the other samplers, a custom
``collate_fn``), the seq2seq GRU translator with Bahdanau attention, the char-RNN name
classifier written by hand beside ``nn.RNN``, and DCGAN (``ConvTranspose2d`` generator, BCE
losses, Adam with the paper's betas), and the mixed-precision recipe (bfloat16 autocast, a
``GradScaler`` that skips an overflowed step).

Every program seeds torch's generator and draws its own data; what it prints must agree (text
exactly once numbers are masked, each number within two units of its last printed digit), and so
must the final parameters of its models. A checkpoint written by either library is read by the other.
"""
import io

import pytest
import torch
from test_tutorials import assert_trains_like_torch, one_torch_thread, run_tutorial  # noqa: F401 (an autouse fixture)

import internals

BLITZ = '''
nn = torch.nn
F = torch.nn.functional
optim = torch.optim

torch.manual_seed(0)


class Net(nn.Module):

    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, input):
        c1 = F.relu(self.conv1(input))
        s2 = F.max_pool2d(c1, (2, 2))
        c3 = F.relu(self.conv2(s2))
        s4 = F.max_pool2d(c3, 2)
        s4 = torch.flatten(s4, 1)
        f5 = F.relu(self.fc1(s4))
        f6 = F.relu(self.fc2(f5))
        output = self.fc3(f6)
        return output


net = Net()
print(net)
params = list(net.parameters())
print(len(params))
print(params[0].size())
input = torch.randn(1, 1, 32, 32)
out = net(input)
print(out)
net.zero_grad()
out.backward(torch.randn(1, 10))

output = net(input)
target = torch.randn(10)
target = target.view(1, -1)
criterion = nn.MSELoss()
loss = criterion(output, target)
print(loss)
print(loss.grad_fn)
print(loss.grad_fn.next_functions[0][0])
print(loss.grad_fn.next_functions[0][0].next_functions[0][0])

net.zero_grad()
print('conv1.bias.grad before backward')
print(net.conv1.bias.grad)
loss.backward()
print('conv1.bias.grad after backward')
print(net.conv1.bias.grad)

learning_rate = 0.01
for f in net.parameters():
    f.data.sub_(f.grad.data * learning_rate)

optimizer = optim.SGD(net.parameters(), lr=0.01)
for step in range(3):
    optimizer.zero_grad()
    output = net(input)
    loss = criterion(output, target)
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {loss.item():.6f}")

# (the blitz's autograd part is tests/test_tutorials.py's: only its fine-tuning step here)
for param in net.parameters():
    param.requires_grad = False
net.fc3 = nn.Linear(84, 10)
optimizer = optim.SGD(net.parameters(), lr=1e-2, momentum=0.9)
print(sum(p.numel() for p in net.parameters() if p.requires_grad))
'''

CIFAR_BATCHNORM = '''
nn = torch.nn
F = torch.nn.functional
DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset

torch.manual_seed(0)
# CIFAR-shaped data: 3x16x16 images normalised as transforms.Normalize((0.5,)*3, (0.5,)*3) would
mean = torch.tensor([0.5, 0.5, 0.5]).view(1, 3, 1, 1)
std = torch.tensor([0.5, 0.5, 0.5]).view(1, 3, 1, 1)
images = (torch.rand(96, 3, 16, 16) - mean) / std
labels = torch.randint(0, 10, (96,))
trainset = TensorDataset(images[:64], labels[:64])
testset = TensorDataset(images[64:], labels[64:])
trainloader = DataLoader(trainset, batch_size=16, shuffle=True)
testloader = DataLoader(testset, batch_size=16, shuffle=False)


def conv_bn(c_in, c_out):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, padding=1, bias=False),
                         nn.BatchNorm2d(c_out), nn.ReLU(inplace=True))


class Net(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(conv_bn(3, 8), nn.MaxPool2d(2), conv_bn(8, 16), nn.MaxPool2d(2),
                                      nn.Dropout2d(0.1))
        self.pool = nn.AdaptiveAvgPool2d((2, 2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.25), nn.Linear(16 * 2 * 2, 32, bias=False),
                                        nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, num_classes))

    def forward(self, x):
        return self.classifier(self.pool(self.features(x)))


net = Net()
print(net)
epochs = 3
criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
optimizer = torch.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=5e-4)
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.01, epochs=epochs,
                                                steps_per_epoch=len(trainloader))
for epoch in range(epochs):
    net.train()
    running_loss = 0.0
    for i, (inputs, targets) in enumerate(trainloader):
        optimizer.zero_grad()
        outputs = net(inputs)
        loss = criterion(outputs, targets)
        loss.backward()
        optimizer.step()
        scheduler.step()
        running_loss += loss.item()
    net.eval()
    correct, total = 0, 0
    with torch.no_grad():
        for inputs, targets in testloader:
            outputs = net(inputs)
            _, predicted = torch.max(outputs.data, 1)
            total += targets.size(0)
            correct += (predicted == targets).sum().item()
    print(f"[{epoch + 1}] loss: {running_loss / len(trainloader):.4f} "
          f"lr: {scheduler.get_last_lr()[0]:.6f} accuracy: {100 * correct // total} %")
bn = net.features[0][1]
print(bn.running_mean)
print(bn.running_var)
print(bn.num_batches_tracked)

# the same network again, cosine annealing with warm restarts on SGD with Nesterov momentum
torch.manual_seed(1)
net2 = Net()
optimizer = torch.optim.SGD(net2.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4)
cosine = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=4, eta_min=1e-4)
lrs = []
for epoch in range(4):
    net2.train()
    for inputs, targets in trainloader:
        optimizer.zero_grad()
        loss = F.cross_entropy(net2(inputs), targets)
        loss.backward()
        optimizer.step()
    cosine.step()
    lrs.append(round(optimizer.param_groups[0]["lr"], 8))
    print(f"epoch {epoch}: last loss {loss.item():.5f}")
print(lrs)
print(optimizer.state_dict()["param_groups"][0]["initial_lr"])
'''

TRANSFER_LEARNING = '''
import copy
nn = torch.nn
optim = torch.optim
lr_scheduler = torch.optim.lr_scheduler

torch.manual_seed(0)


class Backbone(nn.Module):
    """A stand-in for a pretrained ResNet: a feature extractor and an `fc` head."""
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        self.layer1 = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(8, 1000)

    def forward(self, x):
        x = self.layer1(self.relu(self.bn1(self.conv1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


pretrained = Backbone()
weights = copy.deepcopy(pretrained.state_dict())
inputs = torch.randn(40, 3, 12, 12)
labels = torch.randint(0, 2, (40,))
dataloaders = {"train": [(inputs[i:i + 8], labels[i:i + 8]) for i in range(0, 32, 8)],
               "val": [(inputs[32:], labels[32:])]}
dataset_sizes = {"train": 32, "val": 8}


def train_model(model, criterion, optimizer, scheduler, num_epochs=3):
    best_model_wts = copy.deepcopy(model.state_dict())
    best_acc = 0.0
    for epoch in range(num_epochs):
        print(f'Epoch {epoch}/{num_epochs - 1}')
        for phase in ['train', 'val']:
            if phase == 'train':
                model.train()
            else:
                model.eval()
            running_loss = 0.0
            running_corrects = 0
            for inputs, labels in dataloaders[phase]:
                optimizer.zero_grad()
                with torch.set_grad_enabled(phase == 'train'):
                    outputs = model(inputs)
                    _, preds = torch.max(outputs, 1)
                    loss = criterion(outputs, labels)
                    if phase == 'train':
                        loss.backward()
                        optimizer.step()
                running_loss += loss.item() * inputs.size(0)
                running_corrects += torch.sum(preds == labels.data)
            if phase == 'train':
                scheduler.step()
            epoch_loss = running_loss / dataset_sizes[phase]
            epoch_acc = running_corrects.double() / dataset_sizes[phase]
            print(f'{phase} Loss: {epoch_loss:.4f} Acc: {epoch_acc:.4f}')
            if phase == 'val' and epoch_acc > best_acc:
                best_acc = epoch_acc
                best_model_wts = copy.deepcopy(model.state_dict())
    print(f'Best val Acc: {best_acc:4f}')
    model.load_state_dict(best_model_wts)
    return model


# Finetuning the whole network: a new head, a smaller learning rate for the backbone
model_ft = Backbone()
model_ft.load_state_dict(weights)
num_ftrs = model_ft.fc.in_features
model_ft.fc = nn.Linear(num_ftrs, 2)
criterion = nn.CrossEntropyLoss()
head_params = list(model_ft.fc.parameters())
backbone_params = [p for n, p in model_ft.named_parameters() if not n.startswith("fc.")]
optimizer_ft = optim.SGD([{"params": backbone_params, "lr": 1e-3},
                          {"params": head_params}], lr=1e-2, momentum=0.9)
exp_lr_scheduler = lr_scheduler.StepLR(optimizer_ft, step_size=2, gamma=0.1)
model_ft = train_model(model_ft, criterion, optimizer_ft, exp_lr_scheduler, num_epochs=3)
print([group["lr"] for group in optimizer_ft.param_groups])

# ConvNet as fixed feature extractor: everything frozen but the new head
model_conv = Backbone()
model_conv.load_state_dict(weights)
for param in model_conv.parameters():
    param.requires_grad = False
model_conv.fc = nn.Linear(model_conv.fc.in_features, 2)
print([n for n, p in model_conv.named_parameters() if p.requires_grad])
optimizer_conv = optim.SGD(model_conv.fc.parameters(), lr=0.01, momentum=0.9)
exp_lr_scheduler = lr_scheduler.StepLR(optimizer_conv, step_size=1, gamma=0.5)
model_conv = train_model(model_conv, criterion, optimizer_conv, exp_lr_scheduler, num_epochs=2)
print(torch.equal(model_conv.conv1.weight, weights["conv1.weight"]))
print(model_conv.conv1.weight.grad, model_conv.fc.weight.grad is not None)
model_conv.layer1.requires_grad_(True)
print(sum(p.numel() for p in model_conv.parameters() if p.requires_grad))
print(torch.equal(model_conv.bn1.running_mean, weights["bn1.running_mean"]))
'''

SAVING_AND_LOADING = '''
import io
nn = torch.nn
F = torch.nn.functional
optim = torch.optim

torch.manual_seed(0)


class TheModelClass(nn.Module):
    def __init__(self):
        super(TheModelClass, self).__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.view(-1, 16 * 5 * 5)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


model = TheModelClass()
optimizer = optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
print("Model's state_dict:")
for param_tensor in model.state_dict():
    print(param_tensor, "\\t", model.state_dict()[param_tensor].size())
inputs, targets = torch.randn(8, 3, 32, 32), torch.randint(0, 10, (8,))


def train_steps(model, optimizer, steps):
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(inputs), targets)
        loss.backward()
        optimizer.step()
    return loss


loss = train_steps(model, optimizer, 2)
print("Optimizer's state_dict:")
for var_name in optimizer.state_dict():
    print(var_name, "\\t", list(optimizer.state_dict()[var_name]))
print(optimizer.state_dict()["param_groups"][0])
print(optimizer.state_dict()["state"][9]["momentum_buffer"][:4])

# Save/load state_dict for inference
PATH = io.BytesIO()
torch.save(model.state_dict(), PATH)
PATH.seek(0)
model2 = TheModelClass()
print(model2.load_state_dict(torch.load(PATH, weights_only=True)))
model2.eval()
print(torch.equal(model2(inputs), model(inputs)))

# A general checkpoint for resuming training
EPOCH = 5
checkpoint_file = io.BytesIO()
torch.save({
            'epoch': EPOCH,
            'model_state_dict': model.state_dict(),
            'optimizer_state_dict': optimizer.state_dict(),
            'loss': loss,
            }, checkpoint_file)
checkpoint_file.seek(0)
resumed = TheModelClass()
resumed_optimizer = optim.SGD(resumed.parameters(), lr=0.5)
checkpoint = torch.load(checkpoint_file, weights_only=True)
resumed.load_state_dict(checkpoint['model_state_dict'])
resumed_optimizer.load_state_dict(checkpoint['optimizer_state_dict'])
epoch = checkpoint['epoch']
loss = checkpoint['loss']
print(epoch, loss)
print(resumed_optimizer.param_groups[0]["lr"], len(resumed_optimizer.state))
resumed.train()
a = train_steps(resumed, resumed_optimizer, 2)
b = train_steps(model, optimizer, 2)
print(f"resumed {a.item():.6f} original {b.item():.6f} equal {torch.equal(a, b)}")

# Several models in one file; warmstarting a model from another one's parameters
class NetB(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.head = nn.Linear(6, 2)


both = io.BytesIO()
modelB = NetB()
torch.save({'modelA_state_dict': model.state_dict(), 'modelB_state_dict': modelB.state_dict(),
            'optimizerA_state_dict': optimizer.state_dict()}, both)
both.seek(0)
loaded = torch.load(both)
print(sorted(loaded))
result = modelB.load_state_dict(loaded['modelA_state_dict'], strict=False)
print(result.missing_keys, len(result.unexpected_keys))
print(torch.equal(modelB.conv1.weight, model.conv1.weight))
try:
    modelB.load_state_dict(loaded['modelA_state_dict'])
except RuntimeError as e:
    print(type(e).__name__, str(e).splitlines()[0])

# Save on one device, load on another: map_location
moved = io.BytesIO()
torch.save(model.state_dict(), moved)
moved.seek(0)
state = torch.load(moved, map_location=torch.device('cpu'), weights_only=True)
print(state['fc3.bias'].device, state['fc3.bias'].dtype)
model.half()
print(model.bn.num_batches_tracked.dtype if hasattr(model, "bn") else None)
print(model.fc3.weight.dtype)
model.float()
print(model.fc3.weight.dtype)
model.bfloat16()
print(model.fc3.bias.dtype, model(inputs.bfloat16()).dtype)
model.type(torch.float64)
print(model.fc3.bias.dtype)
'''

INIT_AND_CLIPPING = '''
nn = torch.nn
F = torch.nn.functional

torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 32), nn.LeakyReLU(0.1),
                                 nn.Linear(32, 1))
        self.emb = nn.Embedding(5, 10)
        self.norm = nn.LayerNorm(10)

    def forward(self, x, ids):
        return self.net(self.norm(x + self.emb(ids))).squeeze(1)


def init_weights(m):
    if isinstance(m, nn.Linear):
        if m.out_features == 1:
            nn.init.xavier_uniform_(m.weight, gain=nn.init.calculate_gain('tanh'))
        elif m.in_features == 10:
            nn.init.kaiming_normal_(m.weight, mode='fan_out', nonlinearity='relu')
        else:
            nn.init.orthogonal_(m.weight)
        nn.init.zeros_(m.bias)
    elif isinstance(m, nn.Embedding):
        nn.init.trunc_normal_(m.weight, std=0.02, a=-0.04, b=0.04)
    elif isinstance(m, nn.LayerNorm):
        nn.init.constant_(m.weight, 1.0)


model = MLP()
model.apply(init_weights)
print(nn.init.calculate_gain('leaky_relu', 0.1), nn.init.calculate_gain('selu'))
for name, p in model.named_parameters():
    print(f"{name:16s} mean {p.mean().item():+.5f} std {p.std().item() if p.numel() > 1 else 0:.5f}")
w = torch.empty(3, 5)
print(nn.init.uniform_(w, a=-0.1, b=0.1))
print(nn.init.normal_(w, mean=0.0, std=0.5))
print(nn.init.xavier_normal_(w))
print(nn.init.kaiming_uniform_(w, a=5 ** 0.5))
print(nn.init.eye_(torch.empty(3, 4)))
print(nn.init.dirac_(torch.empty(2, 2, 3)))
print(nn.init.sparse_(torch.empty(4, 3), sparsity=0.5).eq(0).sum(0))
print(nn.init.ones_(torch.empty(2)))

x = torch.randn(64, 10)
ids = torch.randint(0, 5, (64,))
y = x[:, :3].sum(1) + 0.1 * torch.randn(64)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9, nesterov=True)
scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[3, 6], gamma=0.3)
for epoch in range(8):
    for i in range(0, 64, 16):
        optimizer.zero_grad()
        loss = F.mse_loss(model(x[i:i + 16], ids[i:i + 16]), y[i:i + 16])
        loss.backward()
        if epoch % 2 == 0:
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        else:
            torch.nn.utils.clip_grad_value_(model.parameters(), clip_value=0.05)
            norm = torch.nn.utils.get_total_norm([p.grad for p in model.parameters()])
        optimizer.step()
    scheduler.step()
    print(f"epoch {epoch}: loss {loss.item():.5f} grad norm {norm.item():.5f} lr {scheduler.get_last_lr()[0]:.4f}")
print(max(p.grad.abs().max().item() for p in model.parameters()) <= 0.05)
inf_norm = nn.utils.clip_grad_norm_(model.parameters(), 0.01, norm_type='inf')
print(f"{inf_norm.item():.6f}")

# ReduceLROnPlateau on a validation loss that stops improving
plateau_opt = torch.optim.Adam(model.parameters(), lr=0.01)
plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(plateau_opt, mode='min', factor=0.5, patience=1)
for val_loss in [1.0, 0.9, 0.95, 0.93, 0.92, 0.91, 0.95, 0.99]:
    plateau.step(val_loss)
    print(plateau_opt.param_groups[0]['lr'], plateau.num_bad_epochs)
vec = nn.utils.parameters_to_vector(model.parameters())
print(vec.shape)
nn.utils.vector_to_parameters(vec * 0, model.parameters())
print(model.net[0].bias.abs().sum().item())
'''

DATA_LOADING = '''
nn = torch.nn
data = torch.utils.data
DataLoader, TensorDataset = data.DataLoader, data.TensorDataset

torch.manual_seed(0)
# an imbalanced two-class problem: 80 of class 0, 20 of class 1
features = torch.randn(100, 4)
targets = torch.cat([torch.zeros(80, dtype=torch.long), torch.ones(20, dtype=torch.long)])
features[targets == 1] += 1.5
dataset = TensorDataset(features, targets)
print(len(dataset), dataset[3][0].shape, dataset[3][1])

train_set, val_set = data.random_split(dataset, [0.8, 0.2], generator=torch.Generator().manual_seed(42))
print(len(train_set), len(val_set), train_set.indices[:8])
a, b, c = data.random_split(range(10), [5, 3, 2])
print(list(a), list(b), list(c))

train_targets = targets[train_set.indices]
class_count = torch.bincount(train_targets)
print(class_count)
class_weights = 1.0 / class_count.float()
sample_weights = class_weights[train_targets]
sampler = data.WeightedRandomSampler(sample_weights, num_samples=len(sample_weights), replacement=True)
train_loader = DataLoader(train_set, batch_size=16, sampler=sampler)
val_loader = DataLoader(val_set, batch_size=10)
seen = torch.cat([y for _, y in train_loader])
print("drawn per class:", torch.bincount(seen, minlength=2).tolist())
print(list(data.SubsetRandomSampler([10, 11, 12, 13, 14])))
print(list(data.BatchSampler(data.SequentialSampler(range(10)), batch_size=4, drop_last=False)))
print(list(data.BatchSampler(data.RandomSampler(range(10)), batch_size=3, drop_last=True)))
print(list(data.RandomSampler(range(6), replacement=True, num_samples=4)))
print(list(data.WeightedRandomSampler([0.1, 0.9, 0.4, 0.7, 3.0, 0.6], 5, replacement=False)))
shuffled = DataLoader(dataset, batch_size=32, shuffle=True, drop_last=True)
print(len(shuffled), [tuple(x.shape) for x, _ in shuffled])
concat = data.ConcatDataset([val_set, data.Subset(dataset, [0, 1, 2])])
print(len(concat), concat[20][1])

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
loss_fn = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0]))
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
for epoch in range(4):
    model.train()
    for xb, yb in train_loader:
        loss = loss_fn(model(xb), yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        correct = sum((model(xb).argmax(dim=1) == yb).sum().item() for xb, yb in val_loader)
        val_loss = sum(loss_fn(model(xb), yb) for xb, yb in val_loader) / len(val_loader)
    print(f"epoch {epoch}: train loss {loss.item():.5f} val loss {val_loss:.5f} "
          f"accuracy {correct / len(val_set):.3f}")


def collate(batch):
    xs, ys = zip(*batch)
    return torch.stack(xs).sum(1), torch.tensor(ys)


custom = DataLoader(val_set, batch_size=6, collate_fn=collate, shuffle=True,
                    generator=torch.Generator().manual_seed(3))
for xb, yb in custom:
    print(xb.shape, yb.tolist())
'''

SEQ2SEQ_ATTENTION = '''
import random
nn = torch.nn
F = torch.nn.functional
optim = torch.optim

random.seed(0)
torch.manual_seed(0)
SOS_token, EOS_token, MAX_LENGTH = 0, 1, 6
# "sentence pairs": the target is the source reversed, words 2..11
pairs = []
for _ in range(24):
    words = torch.randint(2, 12, (int(torch.randint(2, 5, (1,))),)).tolist()
    pairs.append((words, words[::-1]))


def tensor_from_words(words):
    return torch.tensor(words + [EOS_token] + [EOS_token] * (MAX_LENGTH - 1 - len(words)),
                        dtype=torch.long).view(1, -1)


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size, dropout_p=0.1):
        super(EncoderRNN, self).__init__()
        self.hidden_size = hidden_size
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, input):
        embedded = self.dropout(self.embedding(input))
        output, hidden = self.gru(embedded)
        return output, hidden


class BahdanauAttention(nn.Module):
    def __init__(self, hidden_size):
        super(BahdanauAttention, self).__init__()
        self.Wa = nn.Linear(hidden_size, hidden_size)
        self.Ua = nn.Linear(hidden_size, hidden_size)
        self.Va = nn.Linear(hidden_size, 1)

    def forward(self, query, keys):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
        scores = scores.squeeze(2).unsqueeze(1)
        weights = F.softmax(scores, dim=-1)
        context = torch.bmm(weights, keys)
        return context, weights


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size, dropout_p=0.1):
        super(AttnDecoderRNN, self).__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attention = BahdanauAttention(hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
        batch_size = encoder_outputs.size(0)
        decoder_input = torch.empty(batch_size, 1, dtype=torch.long).fill_(SOS_token)
        decoder_hidden = encoder_hidden
        decoder_outputs = []
        attentions = []
        for i in range(MAX_LENGTH):
            decoder_output, decoder_hidden, attn_weights = self.forward_step(
                decoder_input, decoder_hidden, encoder_outputs)
            decoder_outputs.append(decoder_output)
            attentions.append(attn_weights)
            if target_tensor is not None:
                decoder_input = target_tensor[:, i].unsqueeze(1)  # Teacher forcing
            else:
                _, topi = decoder_output.topk(1)
                decoder_input = topi.squeeze(-1).detach()
        decoder_outputs = torch.cat(decoder_outputs, dim=1)
        decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)
        attentions = torch.cat(attentions, dim=1)
        return decoder_outputs, decoder_hidden, attentions

    def forward_step(self, input, hidden, encoder_outputs):
        embedded = self.dropout(self.embedding(input))
        query = hidden.permute(1, 0, 2)
        context, attn_weights = self.attention(query, encoder_outputs)
        input_gru = torch.cat((embedded, context), dim=2)
        output, hidden = self.gru(input_gru, hidden)
        output = self.out(output)
        return output, hidden, attn_weights


input_tensor = torch.cat([tensor_from_words(src) for src, _ in pairs])
target_tensor = torch.cat([tensor_from_words(tgt) for _, tgt in pairs])
train_data = torch.utils.data.TensorDataset(input_tensor, target_tensor)
train_dataloader = torch.utils.data.DataLoader(train_data, sampler=torch.utils.data.RandomSampler(train_data),
                                               batch_size=8)
hidden_size = 16
encoder = EncoderRNN(12, hidden_size)
decoder = AttnDecoderRNN(hidden_size, 12)
encoder_optimizer = optim.Adam(encoder.parameters(), lr=0.01)
decoder_optimizer = optim.Adam(decoder.parameters(), lr=0.01)
criterion = nn.NLLLoss()
for epoch in range(1, 6):
    total_loss = 0
    for input_batch, target_batch in train_dataloader:
        encoder_optimizer.zero_grad()
        decoder_optimizer.zero_grad()
        encoder_outputs, encoder_hidden = encoder(input_batch)
        decoder_outputs, _, _ = decoder(encoder_outputs, encoder_hidden, target_batch)
        loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)), target_batch.view(-1))
        loss.backward()
        encoder_optimizer.step()
        decoder_optimizer.step()
        total_loss += loss.item()
    print(f"epoch {epoch}: loss {total_loss / len(train_dataloader):.5f}")

encoder.eval()
decoder.eval()
with torch.no_grad():
    encoder_outputs, encoder_hidden = encoder(input_tensor[:3])
    decoder_outputs, decoder_hidden, decoder_attn = decoder(encoder_outputs, encoder_hidden)
    _, topi = decoder_outputs.topk(1)
    decoded_ids = topi.squeeze()
print(decoded_ids)
print(decoder_attn.shape, decoder_attn[0, 0])
print(decoder_hidden.shape)
'''

CHAR_RNN = '''
import string
nn = torch.nn

torch.manual_seed(0)
all_letters = string.ascii_letters + " .,;'"
n_letters = len(all_letters)
all_categories = ["English", "French", "Greek", "Korean"]
n_categories = len(all_categories)


def letterToIndex(letter):
    return all_letters.find(letter)


def lineToTensor(line):
    tensor = torch.zeros(len(line), 1, n_letters)
    for li, letter in enumerate(line):
        tensor[li][0][letterToIndex(letter)] = 1
    return tensor


print(lineToTensor('Jones').size())
# made-up "names": 3 to 7 letters drawn from a letter range each language prefers
names = []
for i in range(40):
    category = i % n_categories
    letters = torch.randint(category * 6, category * 6 + 12, (int(torch.randint(3, 8, (1,))),))
    names.append(("".join(all_letters[int(j)] for j in letters).capitalize(), category))


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(RNN, self).__init__()
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(input_size, hidden_size)
        self.h2h = nn.Linear(hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, input, hidden):
        hidden = torch.tanh(self.i2h(input) + self.h2h(hidden))
        output = self.h2o(hidden)
        output = self.softmax(output)
        return output, hidden

    def initHidden(self):
        return torch.zeros(1, self.hidden_size)


n_hidden = 32
rnn = RNN(n_letters, n_hidden, n_categories)
input = lineToTensor('Albert')
hidden = torch.zeros(1, n_hidden)
output, next_hidden = rnn(input[0], hidden)
print(output)


def categoryFromOutput(output):
    top_n, top_i = output.topk(1)
    category_i = top_i[0].item()
    return all_categories[category_i], category_i


print(categoryFromOutput(output))
criterion = nn.NLLLoss()
learning_rate = 0.005


def train(category_tensor, line_tensor):
    hidden = rnn.initHidden()
    rnn.zero_grad()
    for i in range(line_tensor.size()[0]):
        output, hidden = rnn(line_tensor[i], hidden)
    loss = criterion(output, category_tensor)
    loss.backward()
    for p in rnn.parameters():
        p.data.add_(p.grad.data, alpha=-learning_rate)
    return output, loss.item()


current_loss = 0
for iter in range(1, 121):
    line, category = names[int(torch.randint(0, len(names), (1,)))]
    output, loss = train(torch.tensor([category], dtype=torch.long), lineToTensor(line))
    current_loss += loss
    if iter % 30 == 0:
        guess, guess_i = categoryFromOutput(output)
        correct = '✓' if guess_i == category else '✗ (%s)' % all_categories[category]
        print('%d %d%% %.4f %s / %s %s' % (iter, iter / 120 * 100, current_loss / 30, line, guess, correct))
        current_loss = 0

confusion = torch.zeros(n_categories, n_categories)


def evaluate(line_tensor):
    hidden = rnn.initHidden()
    for i in range(line_tensor.size()[0]):
        output, hidden = rnn(line_tensor[i], hidden)
    return output


for line, category in names:
    output = evaluate(lineToTensor(line))
    guess, guess_i = categoryFromOutput(output)
    confusion[category][guess_i] += 1
for i in range(n_categories):
    confusion[i] = confusion[i] / confusion[i].sum()
print(confusion)

# the same classifier with nn.RNN over a whole name at once, then sampling letters from it
with torch.no_grad():
    topv, topi = evaluate(lineToTensor('Dovesky')).topk(3, 1, True)
    print(topv, topi)
layer = nn.RNN(n_letters, n_hidden, num_layers=2, nonlinearity='relu', dropout=0.0)
print([tuple(w.shape) for w in layer.all_weights[1]])
out, h_n = layer(lineToTensor('Satoshi'))
print(out.shape, h_n.shape, out[-1, 0, :3])
probabilities = torch.softmax(h_n[-1, 0, :n_categories], 0)
print(torch.multinomial(probabilities, 6, replacement=True))
'''

DCGAN = '''
nn = torch.nn
optim = torch.optim
torch.manual_seed(999)
nz, ngf, ndf, nc = 8, 4, 4, 1


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find('Conv') != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find('BatchNorm') != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)


class Generator(nn.Module):
    def __init__(self):
        super(Generator, self).__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, nc, 4, 2, 1, bias=False), nn.Tanh())

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False), nn.Sigmoid())

    def forward(self, input):
        return self.main(input)


netG = Generator(); netG.apply(weights_init)
netD = Discriminator(); netD.apply(weights_init)
print(netG)
criterion = nn.BCELoss()
fixed_noise = torch.randn(4, nz, 1, 1)
real_label, fake_label = 1., 0.
optimizerD = optim.Adam(netD.parameters(), lr=0.0002, betas=(0.5, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))
data = torch.rand(16, 1, 16, 16) * 2 - 1
for i in range(4):
    netD.zero_grad()
    real_cpu = data[i * 4:(i + 1) * 4]
    b_size = real_cpu.size(0)
    label = torch.full((b_size,), real_label, dtype=torch.float)
    output = netD(real_cpu).view(-1)
    errD_real = criterion(output, label)
    errD_real.backward()
    D_x = output.mean().item()
    noise = torch.randn(b_size, nz, 1, 1)
    fake = netG(noise)
    label.fill_(fake_label)
    output = netD(fake.detach()).view(-1)
    errD_fake = criterion(output, label)
    errD_fake.backward()
    D_G_z1 = output.mean().item()
    errD = errD_real + errD_fake
    optimizerD.step()
    netG.zero_grad()
    label.fill_(real_label)
    output = netD(fake).view(-1)
    errG = criterion(output, label)
    errG.backward()
    D_G_z2 = output.mean().item()
    optimizerG.step()
    print('[%d]\\tLoss_D: %.4f\\tLoss_G: %.4f\\tD(x): %.4f\\tD(G(z)): %.4f / %.4f'
          % (i, errD.item(), errG.item(), D_x, D_G_z1, D_G_z2))
with torch.no_grad():
    fake = netG(fixed_noise).detach().cpu()
print(fake.shape, fake.min() >= -1)
'''

MIXED_PRECISION = '''
nn = torch.nn
F = torch.nn.functional
torch.manual_seed(0)
# the "Automatic Mixed Precision" recipe on the CPU: bfloat16 autocast, a gradient scaler
net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 4))
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 10, growth_interval=3)
data = [(torch.randn(8, 16), torch.randn(8, 4)) for _ in range(4)]
print(scaler.get_scale(), scaler.is_enabled())
for epoch in range(3):
    for i, (x, y) in enumerate(data):
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            output = net(x)
            assert output.dtype is torch.bfloat16
        loss = F.mse_loss(output.float(), y)
        opt.zero_grad()
        scaled = scaler.scale(loss)
        if epoch == 1 and i == 2:
            scaled = scaled * float("inf")      # an overflow: the step is skipped, the scale halved
        scaled.backward()
        scaler.unscale_(opt)
        norm = nn.utils.clip_grad_norm_(net.parameters(), 5.0)
        scaler.step(opt)
        scaler.update()
    print(f"epoch {epoch}: loss {loss.item():.4f} norm {norm.item():.4f} scale {scaler.get_scale()}")
print(scaler.state_dict())
resumed = torch.amp.GradScaler("cpu")
resumed.load_state_dict(scaler.state_dict())
print(resumed.get_scale(), resumed._get_growth_tracker())
try:
    scaler.update()
except AssertionError as e:
    print("AssertionError:", e)
'''

# name: (source, the variables that hold the trained models or tensors)
TUTORIALS = {
    "blitz_neural_networks": (BLITZ, ["net"]),
    "cifar_batchnorm_one_cycle": (CIFAR_BATCHNORM, ["net", "net2"]),
    "transfer_learning": (TRANSFER_LEARNING, ["model_ft", "model_conv"]),
    "saving_and_loading": (SAVING_AND_LOADING, ["model", "resumed", "modelB"]),
    "init_and_gradient_clipping": (INIT_AND_CLIPPING, ["model", "w"]),
    "data_loading_and_samplers": (DATA_LOADING, ["model", "seen"]),
    "seq2seq_attention": (SEQ2SEQ_ATTENTION, ["encoder", "decoder", "decoded_ids"]),
    "char_rnn_classifier": (CHAR_RNN, ["rnn", "layer", "confusion"]),
    "dcgan": (DCGAN, ["netG", "netD", "fake"]),
    "mixed_precision": (MIXED_PRECISION, ["net"]),
}
# Parameters whose gradient is zero in exact arithmetic: the attention's ``Va`` bias adds one
# number to every score, which the softmax cancels. What reaches it is rounding noise, and Adam
# scales noise up to full-size steps, so its value follows each library's summation order.
NOISE_ONLY = {"decoder.attention.Va.bias"}


@pytest.mark.slow
@pytest.mark.parametrize("name", TUTORIALS)
def test_tutorial_runs_like_torch(name):
    source, variables = TUTORIALS[name]
    assert_trains_like_torch(source, variables,
                             signal=lambda name, value: None if name in NOISE_ONLY else value)


def test_checkpoints_cross_between_the_libraries():
    """The saving tutorial's resumable checkpoint, written by each library, loads in the other one
    with the same epoch, loss, parameters and momentum buffers."""
    _, theirs = run_tutorial(torch, SAVING_AND_LOADING)
    _, ours = run_tutorial(internals, SAVING_AND_LOADING)
    for writer, reader, convert in ((ours, torch, lambda t: t), (theirs, internals, internals.Tensor.to_torch)):
        writer["checkpoint_file"].seek(0)
        loaded = reader.load(io.BytesIO(writer["checkpoint_file"].read()), weights_only=True)
        theirs["checkpoint_file"].seek(0)
        original = torch.load(theirs["checkpoint_file"], weights_only=True)
        assert loaded["epoch"] == original["epoch"] == 5
        torch.testing.assert_close(convert(loaded["loss"]), original["loss"], rtol=1e-5, atol=0)
        for key, value in original["model_state_dict"].items():
            torch.testing.assert_close(convert(loaded["model_state_dict"][key]), value, rtol=1e-4, atol=1e-6)
        buffers = loaded["optimizer_state_dict"]["state"]
        assert sorted(buffers) == sorted(original["optimizer_state_dict"]["state"])
        assert loaded["optimizer_state_dict"]["param_groups"] == original["optimizer_state_dict"]["param_groups"]
        for index, state in original["optimizer_state_dict"]["state"].items():
            torch.testing.assert_close(convert(buffers[index]["momentum_buffer"]), state["momentum_buffer"],
                                       rtol=1e-4, atol=1e-6)
