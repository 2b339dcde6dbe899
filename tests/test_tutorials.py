"""The code of PyTorch's beginner tutorials, run once after ``import torch`` and once after
``import internals as torch`` (the same source text), on small generated data in place of the
downloads: Learn the Basics (a FashionMNIST-shaped MLP), "What is torch.nn really?" (MNIST
logistic regression written by hand, then refactored up to a CNN), the CIFAR-10 classifier, the
autograd tutorials, the text classifier (an ``EmbeddingBag`` over the batch's token ids cut by
offsets), the LSTM part-of-speech tagger, a name classifier reading padded batches through
``pack_padded_sequence`` into a GRU, and a small Transformer language model.

Each program seeds torch's generator and draws its own data, so both libraries see the same
numbers only if internals draws torch's random streams. What the programs print must agree: the
text exactly once numbers are masked, each number within a tolerance of float32 training (two
units in its last printed digit, or 1e-5 of its size), and the final parameters of the models
too.
"""
import contextlib
import io
import re
import warnings

import pytest
import torch
from helpers import ADDRESS, NUMBER, last_digit

import internals

HEADER = {torch: "import torch\n", internals: "import internals as torch\n"}


LEARN_THE_BASICS = '''
import io
nn = torch.nn
DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset

torch.manual_seed(0)
# FashionMNIST-shaped data: 1x28x28 images in [0, 1] (ToTensor's range), 10 classes
training_data = TensorDataset(torch.rand(64, 1, 28, 28), torch.randint(0, 10, (64,)))
test_data = TensorDataset(torch.rand(32, 1, 28, 28), torch.randint(0, 10, (32,)))
batch_size = 16
train_dataloader = DataLoader(training_data, batch_size=batch_size)
test_dataloader = DataLoader(test_data, batch_size=batch_size)
for X, y in test_dataloader:
    print(f"Shape of X [N, C, H, W]: {X.shape}")
    print(f"Shape of y: {y.shape} {y.dtype}")
    break
device = "cpu"


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28*28, 512),
            nn.ReLU(),
            nn.Linear(512, 512),
            nn.ReLU(),
            nn.Linear(512, 10)
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits


model = NeuralNetwork().to(device)
print(model)
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-1)


def train(dataloader, model, loss_fn, optimizer):
    size = len(dataloader.dataset)
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        X, y = X.to(device), y.to(device)
        pred = model(X)
        loss = loss_fn(pred, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if batch % 2 == 0:
            loss, current = loss.item(), (batch + 1) * len(X)
            print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")


def test(dataloader, model, loss_fn):
    size = len(dataloader.dataset)
    num_batches = len(dataloader)
    model.eval()
    test_loss, correct = 0, 0
    with torch.no_grad():
        for X, y in dataloader:
            X, y = X.to(device), y.to(device)
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()
    test_loss /= num_batches
    correct /= size
    print(f"Test Error: \\n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \\n")


epochs = 2
for t in range(epochs):
    print(f"Epoch {t+1}\\n-------------------------------")
    train(train_dataloader, model, loss_fn, optimizer)
    test(test_dataloader, model, loss_fn)
print("Done!")

checkpoint = io.BytesIO()
torch.save(model.state_dict(), checkpoint)
checkpoint.seek(0)
model = NeuralNetwork().to(device)
model.load_state_dict(torch.load(checkpoint, weights_only=True))
classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
           "Ankle boot"]
model.eval()
x, y = test_data[0][0], test_data[0][1]
with torch.no_grad():
    x = x.to(device)
    pred = model(x)
    predicted, actual = classes[pred[0].argmax(0)], classes[y]
    print(f'Predicted: "{predicted}", Actual: "{actual}"')
'''

NN_REALLY = '''
import math
import numpy as np
nn, F, optim = torch.nn, torch.nn.functional, torch.optim
TensorDataset, DataLoader = torch.utils.data.TensorDataset, torch.utils.data.DataLoader

torch.manual_seed(0)
# MNIST-shaped data: flattened 28x28 images in [0, 1), 10 classes
x_train, y_train = torch.rand(96, 784), torch.randint(0, 10, (96,))
x_valid, y_valid = torch.rand(32, 784), torch.randint(0, 10, (32,))
n, c = x_train.shape
print(x_train, y_train)
print(x_train.shape)
print(y_train.min(), y_train.max())

weights = torch.randn(784, 10) / math.sqrt(784)
weights.requires_grad_()
bias = torch.zeros(10, requires_grad=True)


def log_softmax(x):
    return x - x.exp().sum(-1).log().unsqueeze(-1)


def model(xb):
    return log_softmax(xb @ weights + bias)


bs = 64
xb = x_train[0:bs]
preds = model(xb)
print(preds[0], preds.shape)


def nll(input, target):
    return -input[range(target.shape[0]), target].mean()


loss_func = nll
yb = y_train[0:bs]
print(loss_func(preds, yb))


def accuracy(out, yb):
    preds = torch.argmax(out, dim=1)
    return (preds == yb).float().mean()


print(accuracy(preds, yb))
lr = 0.5
epochs = 2
for epoch in range(epochs):
    for i in range((n - 1) // bs + 1):
        start_i = i * bs
        end_i = start_i + bs
        xb = x_train[start_i:end_i]
        yb = y_train[start_i:end_i]
        pred = model(xb)
        loss = loss_func(pred, yb)
        loss.backward()
        with torch.no_grad():
            weights -= weights.grad * lr
            bias -= bias.grad * lr
            weights.grad.zero_()
            bias.grad.zero_()
print(loss_func(model(xb), yb), accuracy(model(xb), yb))

loss_func = F.cross_entropy


def model(xb):
    return xb @ weights + bias


print(loss_func(model(xb), yb), accuracy(model(xb), yb))


class Mnist_Logistic(nn.Module):
    def __init__(self):
        super().__init__()
        self.weights = nn.Parameter(torch.randn(784, 10) / math.sqrt(784))
        self.bias = nn.Parameter(torch.zeros(10))

    def forward(self, xb):
        return xb @ self.weights + self.bias


model = Mnist_Logistic()
print(loss_func(model(xb), yb))


def fit():
    for epoch in range(epochs):
        for i in range((n - 1) // bs + 1):
            start_i = i * bs
            end_i = start_i + bs
            xb = x_train[start_i:end_i]
            yb = y_train[start_i:end_i]
            pred = model(xb)
            loss = loss_func(pred, yb)
            loss.backward()
            with torch.no_grad():
                for p in model.parameters():
                    p -= p.grad * lr
                model.zero_grad()


fit()
print(loss_func(model(xb), yb))
parameter_model = model


class Mnist_Logistic(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(784, 10)

    def forward(self, xb):
        return self.lin(xb)


def get_model():
    model = Mnist_Logistic()
    return model, optim.SGD(model.parameters(), lr=lr)


train_ds = TensorDataset(x_train, y_train)
valid_ds = TensorDataset(x_valid, y_valid)


def get_data(train_ds, valid_ds, bs):
    return (
        DataLoader(train_ds, batch_size=bs, shuffle=True),
        DataLoader(valid_ds, batch_size=bs * 2),
    )


def loss_batch(model, loss_func, xb, yb, opt=None):
    loss = loss_func(model(xb), yb)
    if opt is not None:
        loss.backward()
        opt.step()
        opt.zero_grad()
    return loss.item(), len(xb)


def fit(epochs, model, loss_func, opt, train_dl, valid_dl):
    for epoch in range(epochs):
        model.train()
        for xb, yb in train_dl:
            loss_batch(model, loss_func, xb, yb, opt)
        model.eval()
        with torch.no_grad():
            losses, nums = zip(
                *[loss_batch(model, loss_func, xb, yb) for xb, yb in valid_dl]
            )
        val_loss = np.sum(np.multiply(losses, nums)) / np.sum(nums)
        print(epoch, val_loss)


train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
model, opt = get_model()
fit(epochs, model, loss_func, opt, train_dl, valid_dl)
linear_model = model


class Mnist_CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1)
        self.conv3 = nn.Conv2d(16, 10, kernel_size=3, stride=2, padding=1)

    def forward(self, xb):
        xb = xb.view(-1, 1, 28, 28)
        xb = F.relu(self.conv1(xb))
        xb = F.relu(self.conv2(xb))
        xb = F.relu(self.conv3(xb))
        xb = F.avg_pool2d(xb, 4)
        return xb.view(-1, xb.size(1))


lr = 0.1
model = Mnist_CNN()
opt = optim.SGD(model.parameters(), lr=lr, momentum=0.9)
fit(epochs, model, loss_func, opt, train_dl, valid_dl)
cnn_model = model


class Lambda(nn.Module):
    def __init__(self, func):
        super().__init__()
        self.func = func

    def forward(self, x):
        return self.func(x)


def preprocess(x, y):
    return x.view(-1, 1, 28, 28), y


class WrappedDataLoader:
    def __init__(self, dl, func):
        self.dl = dl
        self.func = func

    def __len__(self):
        return len(self.dl)

    def __iter__(self):
        for b in self.dl:
            yield (self.func(*b))


train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
train_dl = WrappedDataLoader(train_dl, preprocess)
valid_dl = WrappedDataLoader(valid_dl, preprocess)
model = nn.Sequential(
    nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1),
    nn.ReLU(),
    nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1),
    nn.ReLU(),
    nn.Conv2d(16, 10, kernel_size=3, stride=2, padding=1),
    nn.ReLU(),
    nn.AdaptiveAvgPool2d(1),
    Lambda(lambda x: x.view(x.size(0), -1)),
)
opt = optim.SGD(model.parameters(), lr=lr, momentum=0.9)
fit(epochs, model, loss_func, opt, train_dl, valid_dl)
'''

CIFAR10 = '''
import io
nn, F, optim = torch.nn, torch.nn.functional, torch.optim

torch.manual_seed(0)
# CIFAR-10-shaped data: 3x32x32 images normalized to [-1, 1], as Normalize((0.5,)*3, (0.5,)*3) leaves them
images, labels = torch.rand(32, 3, 32, 32) * 2 - 1, torch.randint(0, 10, (32,))
trainset = torch.utils.data.TensorDataset(images[:24], labels[:24])
testset = torch.utils.data.TensorDataset(images[24:], labels[24:])
batch_size = 4
trainloader = torch.utils.data.DataLoader(trainset, batch_size=batch_size, shuffle=True, num_workers=0)
testloader = torch.utils.data.DataLoader(testset, batch_size=batch_size, shuffle=False, num_workers=0)
classes = ('plane', 'car', 'bird', 'cat', 'deer', 'dog', 'frog', 'horse', 'ship', 'truck')

dataiter = iter(trainloader)
images, labels = next(dataiter)
print(' '.join(f'{classes[labels[j]]:5s}' for j in range(batch_size)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


net = Net()
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
for epoch in range(2):
    running_loss = 0.0
    for i, data in enumerate(trainloader, 0):
        inputs, labels = data
        optimizer.zero_grad()
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
        if i % 4 == 3:
            print(f'[{epoch + 1}, {i + 1:5d}] loss: {running_loss / 4:.3f}')
            running_loss = 0.0
print('Finished Training')

PATH = io.BytesIO()
torch.save(net.state_dict(), PATH)
dataiter = iter(testloader)
images, labels = next(dataiter)
print('GroundTruth: ', ' '.join(f'{classes[labels[j]]:5s}' for j in range(4)))
net = Net()
PATH.seek(0)
net.load_state_dict(torch.load(PATH, weights_only=True))
outputs = net(images)
_, predicted = torch.max(outputs, 1)
print('Predicted: ', ' '.join(f'{classes[predicted[j]]:5s}' for j in range(4)))

correct = 0
total = 0
with torch.no_grad():
    for data in testloader:
        images, labels = data
        outputs = net(images)
        _, predicted = torch.max(outputs.data, 1)
        total += labels.size(0)
        correct += (predicted == labels).sum().item()
print(f'Accuracy of the network on the {total} test images: {100 * correct // total} %')

correct_pred = {classname: 0 for classname in classes}
total_pred = {classname: 0 for classname in classes}
with torch.no_grad():
    for data in testloader:
        images, labels = data
        outputs = net(images)
        _, predictions = torch.max(outputs, 1)
        for label, prediction in zip(labels, predictions):
            if label == prediction:
                correct_pred[classes[label]] += 1
            total_pred[classes[label]] += 1
for classname, correct_count in correct_pred.items():
    if total_pred[classname]:
        accuracy = 100 * float(correct_count) / total_pred[classname]
        print(f'Accuracy for class: {classname:5s} is {accuracy:.1f} %')
'''

AUTOGRAD = '''
x = torch.ones(5)
y = torch.zeros(3)
torch.manual_seed(0)
w = torch.randn(5, 3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
z = torch.matmul(x, w)+b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
print(f"Gradient function for z = {z.grad_fn}")
print(f"Gradient function for loss = {loss.grad_fn}")
loss.backward()
print(w.grad)
print(b.grad)

z = torch.matmul(x, w)+b
print(z.requires_grad)
with torch.no_grad():
    z = torch.matmul(x, w)+b
print(z.requires_grad)
z = torch.matmul(x, w)+b
z_det = z.detach()
print(z_det.requires_grad)

inp = torch.eye(4, 5, requires_grad=True)
out = (inp+1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"First call\\n{inp.grad}")
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\\nSecond call\\n{inp.grad}")
inp.grad.zero_()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\\nCall after zeroing gradients\\n{inp.grad}")

# A Gentle Introduction to torch.autograd
a = torch.tensor([2., 3.], requires_grad=True)
b = torch.tensor([6., 4.], requires_grad=True)
Q = 3*a**3 - b**2
external_grad = torch.tensor([1., 1.])
Q.backward(gradient=external_grad)
print(9*a**2 == a.grad)
print(-2*b == b.grad)
x = torch.rand(5, 5)
y = torch.rand(5, 5)
z = torch.rand((5, 5), requires_grad=True)
a = x + y
print(f"Does `a` require gradients?: {a.requires_grad}")
b = x + z
print(f"Does `b` require gradients?: {b.requires_grad}")

model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
for param in model.parameters():
    param.requires_grad = False
model[2] = torch.nn.Linear(8, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
print([p.requires_grad for p in model.parameters()])
loss = model(torch.randn(2, 4)).sum()
loss.backward()
optimizer.step()
print(model[0].weight.grad, model[2].bias.grad)
'''

TEXT_CLASSIFIER = '''
nn = torch.nn
DataLoader = torch.utils.data.DataLoader

torch.manual_seed(0)
# AG_NEWS-shaped data: "sentences" of 6 to 12 token ids, 4 classes
vocab_size, num_class, emsize = 50, 4, 16
lengths = torch.randint(6, 13, (48,))
texts = [torch.randint(1, vocab_size, (int(n),)) for n in lengths]
labels = torch.randint(0, num_class, (48,))


def collate_batch(batch):
    label_list, text_list, offsets = [], [], [0]
    for _label, _text in batch:
        label_list.append(int(_label))
        processed_text = torch.tensor(_text.tolist(), dtype=torch.int64)
        text_list.append(processed_text)
        offsets.append(processed_text.size(0))
    label_list = torch.tensor(label_list, dtype=torch.int64)
    offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
    text_list = torch.cat(text_list)
    return label_list, text_list, offsets


class TextClassificationModel(nn.Module):
    def __init__(self, vocab_size, embed_dim, num_class):
        super().__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, sparse=False)
        self.fc = nn.Linear(embed_dim, num_class)
        self.init_weights()

    def init_weights(self):
        initrange = 0.5
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.fc.weight.data.uniform_(-initrange, initrange)
        self.fc.bias.data.zero_()

    def forward(self, text, offsets):
        embedded = self.embedding(text, offsets)
        return self.fc(embedded)


model = TextClassificationModel(vocab_size, emsize, num_class)
EPOCHS, LR, BATCH_SIZE = 4, 5, 8
criterion = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=LR)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.1)
dataset = list(zip(labels, texts))
train_dataset, valid_dataset = torch.utils.data.random_split(dataset, [40, 8])
train_dataloader = DataLoader(train_dataset, batch_size=BATCH_SIZE, shuffle=True, collate_fn=collate_batch)
valid_dataloader = DataLoader(valid_dataset, batch_size=BATCH_SIZE, shuffle=True, collate_fn=collate_batch)


def train(dataloader):
    model.train()
    total_acc, total_count = 0, 0
    for idx, (label, text, offsets) in enumerate(dataloader):
        optimizer.zero_grad()
        predicted_label = model(text, offsets)
        loss = criterion(predicted_label, label)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        optimizer.step()
        total_acc += (predicted_label.argmax(1) == label).sum().item()
        total_count += label.size(0)
    print(f"| epoch {epoch:3d} | accuracy {total_acc / total_count:8.3f} | loss {loss.item():8.5f}")


def evaluate(dataloader):
    model.eval()
    total_acc, total_count = 0, 0
    with torch.no_grad():
        for idx, (label, text, offsets) in enumerate(dataloader):
            predicted_label = model(text, offsets)
            loss = criterion(predicted_label, label)
            total_acc += (predicted_label.argmax(1) == label).sum().item()
            total_count += label.size(0)
    return total_acc / total_count


total_accu = None
for epoch in range(1, EPOCHS + 1):
    train(train_dataloader)
    accu_val = evaluate(valid_dataloader)
    if total_accu is not None and total_accu > accu_val:
        scheduler.step()
    else:
        total_accu = accu_val
    print("-" * 59)
    print(f"| end of epoch {epoch:3d} | valid accuracy {accu_val:8.3f} | lr {scheduler.get_last_lr()[0]:.4f}")
'''

LSTM_TAGGER = '''
nn, F, optim = torch.nn, torch.nn.functional, torch.optim

torch.manual_seed(1)
lstm = nn.LSTM(3, 3)
inputs = [torch.randn(1, 3) for _ in range(5)]
hidden = (torch.randn(1, 1, 3), torch.randn(1, 1, 3))
for i in inputs:
    out, hidden = lstm(i.view(1, 1, -1), hidden)
inputs = torch.cat(inputs).view(len(inputs), 1, -1)
hidden = (torch.randn(1, 1, 3), torch.randn(1, 1, 3))
out, hidden = lstm(inputs, hidden)
print(out)
print(hidden)


def prepare_sequence(seq, to_ix):
    idxs = [to_ix[w] for w in seq]
    return torch.tensor(idxs, dtype=torch.long)


training_data = [
    ("The dog ate the apple".split(), ["DET", "NN", "V", "DET", "NN"]),
    ("Everybody read that book".split(), ["NN", "V", "DET", "NN"])
]
word_to_ix = {}
for sent, tags in training_data:
    for word in sent:
        if word not in word_to_ix:
            word_to_ix[word] = len(word_to_ix)
print(word_to_ix)
tag_to_ix = {"DET": 0, "NN": 1, "V": 2}
EMBEDDING_DIM = 6
HIDDEN_DIM = 6


class LSTMTagger(nn.Module):
    def __init__(self, embedding_dim, hidden_dim, vocab_size, tagset_size):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.word_embeddings = nn.Embedding(vocab_size, embedding_dim)
        self.lstm = nn.LSTM(embedding_dim, hidden_dim)
        self.hidden2tag = nn.Linear(hidden_dim, tagset_size)

    def forward(self, sentence):
        embeds = self.word_embeddings(sentence)
        lstm_out, _ = self.lstm(embeds.view(len(sentence), 1, -1))
        tag_space = self.hidden2tag(lstm_out.view(len(sentence), -1))
        tag_scores = F.log_softmax(tag_space, dim=1)
        return tag_scores


model = LSTMTagger(EMBEDDING_DIM, HIDDEN_DIM, len(word_to_ix), len(tag_to_ix))
loss_function = nn.NLLLoss()
optimizer = optim.SGD(model.parameters(), lr=0.1)
with torch.no_grad():
    inputs = prepare_sequence(training_data[0][0], word_to_ix)
    tag_scores = model(inputs)
    print(tag_scores)
for epoch in range(30):
    for sentence, tags in training_data:
        model.zero_grad()
        sentence_in = prepare_sequence(sentence, word_to_ix)
        targets = prepare_sequence(tags, tag_to_ix)
        tag_scores = model(sentence_in)
        loss = loss_function(tag_scores, targets)
        loss.backward()
        optimizer.step()
    if epoch % 10 == 0:
        print(epoch, loss.item())
with torch.no_grad():
    inputs = prepare_sequence(training_data[0][0], word_to_ix)
    tag_scores = model(inputs)
    print(tag_scores)
'''

TRANSFORMER_LM = '''
import math
nn = torch.nn

torch.manual_seed(0)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=64):
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


class TransformerModel(nn.Module):
    def __init__(self, ntoken, d_model, nhead, d_hid, nlayers, dropout=0.5):
        super().__init__()
        self.model_type = 'Transformer'
        self.pos_encoder = PositionalEncoding(d_model, dropout)
        encoder_layers = nn.TransformerEncoderLayer(d_model, nhead, d_hid, dropout)
        self.transformer_encoder = nn.TransformerEncoder(encoder_layers, nlayers)
        self.embedding = nn.Embedding(ntoken, d_model)
        self.d_model = d_model
        self.linear = nn.Linear(d_model, ntoken)
        self.init_weights()

    def init_weights(self):
        initrange = 0.1
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.linear.bias.data.zero_()
        self.linear.weight.data.uniform_(-initrange, initrange)

    def forward(self, src, src_mask):
        src = self.embedding(src) * math.sqrt(self.d_model)
        src = self.pos_encoder(src)
        output = self.transformer_encoder(src, src_mask)
        output = self.linear(output)
        return output


def batchify(data, bsz):
    seq_len = data.size(0) // bsz
    data = data[:seq_len * bsz]
    data = data.view(bsz, seq_len).t().contiguous()
    return data


# WikiText-2-shaped data: a stream of token ids, each often followed by its successor
ntokens = 30
stream = torch.randint(0, ntokens, (240,))
stream[1::2] = (stream[0::2] + 1) % ntokens
train_data = batchify(stream[:200], 4)
val_data = batchify(stream[200:], 2)
bptt = 10


def get_batch(source, i):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i+seq_len]
    target = source[i+1:i+1+seq_len].reshape(-1)
    return data, target


model = TransformerModel(ntokens, 16, 2, 32, 2, 0.2)
criterion = nn.CrossEntropyLoss()
lr = 5.0
optimizer = torch.optim.SGD(model.parameters(), lr=lr)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.95)


def train(model):
    model.train()
    total_loss = 0.
    log_interval = 2
    src_mask = nn.Transformer.generate_square_subsequent_mask(bptt)
    num_batches = len(train_data) // bptt
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        data, targets = get_batch(train_data, i)
        seq_len = data.size(0)
        if seq_len != bptt:
            src_mask = src_mask[:seq_len, :seq_len]
        output = model(data, src_mask)
        loss = criterion(output.view(-1, ntokens), targets)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
        total_loss += loss.item()
        if batch % log_interval == 0 and batch > 0:
            lr = scheduler.get_last_lr()[0]
            cur_loss = total_loss / log_interval
            ppl = math.exp(cur_loss)
            print(f'| epoch {epoch:3d} | {batch:5d}/{num_batches:5d} batches | '
                  f'lr {lr:02.2f} | loss {cur_loss:5.2f} | ppl {ppl:8.2f}')
            total_loss = 0


def evaluate(model, eval_data):
    model.eval()
    total_loss = 0.
    src_mask = nn.Transformer.generate_square_subsequent_mask(bptt)
    with torch.no_grad():
        for i in range(0, eval_data.size(0) - 1, bptt):
            data, targets = get_batch(eval_data, i)
            seq_len = data.size(0)
            if seq_len != bptt:
                src_mask = src_mask[:seq_len, :seq_len]
            output = model(data, src_mask)
            output_flat = output.view(-1, ntokens)
            total_loss += seq_len * criterion(output_flat, targets).item()
    return total_loss / (len(eval_data) - 1)


for epoch in range(1, 3):
    train(model)
    val_loss = evaluate(model, val_data)
    val_ppl = math.exp(val_loss)
    print('-' * 89)
    print(f'| end of epoch {epoch:3d} | valid loss {val_loss:5.2f} | valid ppl {val_ppl:8.2f}')
    scheduler.step()
'''

PACKED_NAME_CLASSIFIER = '''
nn = torch.nn
pack_padded_sequence = torch.nn.utils.rnn.pack_padded_sequence
pad_packed_sequence = torch.nn.utils.rnn.pad_packed_sequence
pad_sequence = torch.nn.utils.rnn.pad_sequence

torch.manual_seed(0)
# "names" of 2 to 9 letters (ids 1..26, 0 pads), 5 languages, as in the char-RNN tutorials
names = [torch.randint(1, 27, (int(n),)) for n in torch.randint(2, 10, (60,))]
languages = torch.randint(0, 5, (60,))


class NameClassifier(nn.Module):
    def __init__(self, letters, hidden, classes):
        super().__init__()
        self.embed = nn.Embedding(letters, 8, padding_idx=0)
        self.rnn = nn.GRU(8, hidden, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, classes)

    def forward(self, padded, lengths):
        packed = pack_padded_sequence(self.embed(padded), lengths, batch_first=True, enforce_sorted=False)
        output, hidden = self.rnn(packed)
        unpacked, unpacked_lengths = pad_packed_sequence(output, batch_first=True)
        last = torch.cat([hidden[0], hidden[1]], dim=1)
        return self.out(last), unpacked, unpacked_lengths


model = NameClassifier(27, 12, 5)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
criterion = nn.CrossEntropyLoss()
for epoch in range(3):
    order = torch.randperm(60)
    total = 0.0
    for start in range(0, 60, 12):
        batch = order[start:start + 12]
        seqs = [names[int(i)] for i in batch]
        lengths = torch.tensor([len(s) for s in seqs])
        padded = pad_sequence(seqs, batch_first=True)
        logits, unpacked, unpacked_lengths = model(padded, lengths)
        loss = criterion(logits, languages[batch])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    print(f"epoch {epoch}: loss {total / 5:.5f}, padded {tuple(unpacked.shape)}, "
          f"lengths {unpacked_lengths.tolist()[:4]}")
with torch.no_grad():
    logits, _, _ = model(pad_sequence(names[:6], batch_first=True), torch.tensor([len(n) for n in names[:6]]))
print(logits.argmax(1))
'''

# name: (source, the variables that hold the trained models or tensors)
TUTORIALS = {
    "learn_the_basics": (LEARN_THE_BASICS, ["model"]),
    "what_is_torch_nn_really": (NN_REALLY, ["weights", "bias", "parameter_model", "linear_model", "cnn_model",
                                            "model"]),
    "cifar10_classifier": (CIFAR10, ["net"]),
    "autograd": (AUTOGRAD, ["w", "b", "model"]),
    "text_classifier": (TEXT_CLASSIFIER, ["model"]),
    "lstm_tagger": (LSTM_TAGGER, ["lstm", "model"]),
    "packed_name_classifier": (PACKED_NAME_CLASSIFIER, ["model"]),
    "transformer_language_model": (TRANSFORMER_LM, ["model"]),
}


@pytest.fixture(autouse=True)
def one_torch_thread():
    """torch on one thread: its default pool, sized to the cores, stalls whenever the machine is
    shared (each parallel region waits for a descheduled thread); one thread also fixes the
    order of its sums."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def run_tutorial(lib, source):
    """What the program prints under ``lib`` (addresses masked, the library's name as torch's),
    and its globals; the settings a program may change are put back."""
    buffer = io.StringIO()
    namespace = {"__name__": "__tutorial__"}
    try:
        with contextlib.redirect_stdout(buffer), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(HEADER[lib] + source, "<tutorial>", "exec"), namespace)
    finally:
        lib.set_grad_enabled(True)
    text = ADDRESS.sub("0xADDR", buffer.getvalue()).replace("internals", "torch")
    return text, namespace


def assert_prints_alike(ours, theirs):
    """The same text with numbers masked; each number within two units of its last printed
    digit or 1e-5 of its size (float32 training in another summation order)."""
    assert " ".join(NUMBER.sub("#", ours).split()) == " ".join(NUMBER.sub("#", theirs).split())
    for a, b in zip(NUMBER.findall(ours), NUMBER.findall(theirs)):
        tolerance = max(2 * last_digit(a), 2 * last_digit(b), 1e-5 * abs(float(b)))
        assert abs(float(a) - float(b)) <= tolerance, (a, b)


def run_both(source):
    """Run ``source`` under torch, then under internals, and check that both print alike; their
    globals (internals', torch's)."""
    theirs, their_globals = run_tutorial(torch, source)
    ours, our_globals = run_tutorial(internals, source)
    assert theirs.strip()
    assert_prints_alike(ours, theirs)
    return our_globals, their_globals


def state_of(value):
    """A model's state dict, or a tensor, as torch tensors by name."""
    if isinstance(value, (torch.Tensor, internals.Tensor)):
        value = {"": value}
    else:
        value = value.state_dict()
    return {k: v.to_torch() if isinstance(v, internals.Tensor) else v for k, v in value.items()}


def assert_trains_like_torch(source, variables, signal=lambda name, value: value):
    """Run ``source`` on both libraries (printing alike) and compare the named variables: each
    model's state dict or tensor, entry by entry. ``signal(name, value)`` returns the part of an
    entry to compare, or None to skip an entry whose value is rounding noise only (a parameter whose
    gradient is zero in exact arithmetic follows each library's summation order)."""
    our_globals, their_globals = run_both(source)
    for variable in variables:
        ours_state, theirs_state = state_of(our_globals[variable]), state_of(their_globals[variable])
        assert list(ours_state) == list(theirs_state), variable
        for key, value in theirs_state.items():
            name = f"{variable}.{key}"
            ours, theirs = signal(name, ours_state[key]), signal(name, value)
            if theirs is None:
                continue
            torch.testing.assert_close(ours.detach(), theirs.detach(), rtol=1e-4, atol=1e-5,
                                       msg=lambda m, name=name: f"{name}: {m}")


@pytest.mark.slow
@pytest.mark.parametrize("name", TUTORIALS)
def test_tutorial_runs_like_torch(name):
    assert_trains_like_torch(*TUTORIALS[name])


def test_number_comparison_catches_a_changed_loss():
    """The comparison this file relies on fails when a printed loss moves by more than rounding."""
    with pytest.raises(AssertionError):
        assert_prints_alike("loss: 2.301234  [   16/   96]", "loss: 2.301534  [   16/   96]")
    with pytest.raises(AssertionError):
        assert_prints_alike("Accuracy: 12.5%", "Accuracy: 15.6%")
    assert_prints_alike("loss: 2.301234", "loss: 2.301235")


def test_masked_text_must_match():
    with pytest.raises(AssertionError):
        assert_prints_alike("grad_fn=<AddBackward0>", "grad_fn=<SubBackward0>")
    assert re.sub(NUMBER, "#", "tensor([1.5, 2])") == "tensor([#, #])"
