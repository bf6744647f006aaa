"""`python -m jiasu demo nn`: train a small CNN with jiasu.nn alone, forward and backward written out, on a
synthetic data set it generates; print the loss per epoch and images/s. Where PyTorch and a GPU are present,
train the same network in PyTorch from the same initial weights on the same batches and print both curves and
speeds. ``--plot FILE.png`` draws the curves (matplotlib).

The network: conv3x3(1 -> 8) - batch-norm - relu - max-pool 2, conv3x3(8 -> 16) - batch-norm - relu -
max-pool 2, linear(16 * 4 * 4 -> 4), cross-entropy, plain SGD.

Exit codes: 0 the loss fell below half its start (and matched PyTorch's where it ran); 1 otherwise.
"""
import sys
import time

import numpy as np

import jiasu
from jiasu import nn

CLASSES = 4
SIZE = 16
LEARNING_RATE = 0.05


def make_data(count, rng):
    """Noisy 16 x 16 images of four patterns: horizontal stripes, vertical stripes, a diagonal, a centred blob."""
    yy, xx = np.mgrid[0:SIZE, 0:SIZE]
    patterns = [np.sin(yy * 1.2), np.sin(xx * 1.2), np.cos((xx - yy) * 0.8),
                np.exp(-((xx - 7.5) ** 2 + (yy - 7.5) ** 2) / 18) * 2 - 0.5]
    labels = rng.integers(0, CLASSES, count)
    shifts = rng.integers(-2, 3, (count, 2))
    images = np.stack([np.roll(patterns[c], tuple(s), axis=(0, 1)) for c, s in zip(labels, shifts)])
    images = images + rng.normal(0, 1.5, images.shape)
    return images[:, None].astype(np.float32), labels.astype(np.int64)


def initial_weights(rng):
    def uniform(shape, fan_in):
        bound = 1 / np.sqrt(fan_in)
        return rng.uniform(-bound, bound, shape).astype(np.float32)
    return {"w1": uniform((8, 1, 3, 3), 9), "b1": uniform((8,), 9), "g1": np.ones(8, np.float32),
            "e1": np.zeros(8, np.float32), "w2": uniform((16, 8, 3, 3), 72), "b2": uniform((16,), 72),
            "g2": np.ones(16, np.float32), "e2": np.zeros(16, np.float32),
            "wl": uniform((CLASSES, 256), 256), "bl": uniform((CLASSES,), 256)}


class JiasuNet:
    def __init__(self, weights):
        self.p = {name: jiasu.asarray(value) for name, value in weights.items()}
        self.running = {k: jiasu.asarray(v) for k, v in (("m1", np.zeros(8, np.float32)), ("v1", np.ones(8, np.float32)),
                                                          ("m2", np.zeros(16, np.float32)), ("v2", np.ones(16, np.float32)))}

    def step(self, images, labels):
        """One SGD step on a batch; returns the batch's loss."""
        p, r = self.p, self.running
        x = jiasu.asarray(images)
        t = jiasu.asarray(labels)
        c1 = nn.conv2d(x, p["w1"], p["b1"], padding=1)
        y1, m1, s1 = nn.batch_norm_training(c1, p["g1"], p["e1"], r["m1"], r["v1"])
        a1 = nn.relu(y1)
        q1 = nn.max_pool2d(a1, 2)
        c2 = nn.conv2d(q1, p["w2"], p["b2"], padding=1)
        y2, m2, s2 = nn.batch_norm_training(c2, p["g2"], p["e2"], r["m2"], r["v2"])
        a2 = nn.relu(y2)
        q2 = nn.max_pool2d(a2, 2)
        flat = q2.reshape((q2.shape[0], -1))
        logits = nn.linear(flat, p["wl"], p["bl"])
        loss = float(nn.cross_entropy(logits, t).get())

        grads = {}
        d_flat, grads["wl"], grads["bl"] = nn.linear_backward(nn.cross_entropy_backward(logits, t), flat, p["wl"])
        d_y2 = nn.relu_backward(nn.max_pool2d_backward(d_flat.reshape(q2.shape), a2, 2), y2)
        d_c2, grads["g2"], grads["e2"] = nn.batch_norm_backward(d_y2, c2, p["g2"], m2, s2)
        d_q1, grads["w2"], grads["b2"] = nn.conv2d_backward(d_c2, q1, p["w2"], padding=1)
        d_y1 = nn.relu_backward(nn.max_pool2d_backward(d_q1, a1, 2), y1)
        d_c1, grads["g1"], grads["e1"] = nn.batch_norm_backward(d_y1, c1, p["g1"], m1, s1)
        _, grads["w1"], grads["b1"] = nn.conv2d_backward(d_c1, x, p["w1"], padding=1, needs=("weight", "bias"))
        for name, grad in grads.items():
            p[name] -= grad * LEARNING_RATE
        return loss


class TorchNet:
    def __init__(self, torch, weights):
        self.torch = torch
        self.p = {name: torch.tensor(value, device="cuda", requires_grad=True) for name, value in weights.items()}
        self.running = {"m1": torch.zeros(8, device="cuda"), "v1": torch.ones(8, device="cuda"),
                        "m2": torch.zeros(16, device="cuda"), "v2": torch.ones(16, device="cuda")}

    def step(self, images, labels):
        F, p, r = self.torch.nn.functional, self.p, self.running
        x = self.torch.from_numpy(images).cuda()
        t = self.torch.from_numpy(labels).cuda()
        h = F.conv2d(x, p["w1"], p["b1"], padding=1)
        h = F.max_pool2d(F.relu(F.batch_norm(h, r["m1"], r["v1"], p["g1"], p["e1"], training=True)), 2)
        h = F.conv2d(h, p["w2"], p["b2"], padding=1)
        h = F.max_pool2d(F.relu(F.batch_norm(h, r["m2"], r["v2"], p["g2"], p["e2"], training=True)), 2)
        loss = F.cross_entropy(F.linear(h.flatten(1), p["wl"], p["bl"]), t)
        for value in p.values():
            value.grad = None
        loss.backward()
        with self.torch.no_grad():
            for value in p.values():
                value -= value.grad * LEARNING_RATE
        return float(loss)


def train(net, images, labels, epochs, batch, synchronize):
    """Loss per epoch (the mean of its batches) and images per second (over the epochs after the first)."""
    losses, seconds = [], []
    for _ in range(epochs):
        t0 = time.perf_counter()
        batch_losses = [net.step(images[i:i + batch], labels[i:i + batch]) for i in range(0, len(images), batch)]
        synchronize()
        seconds.append(time.perf_counter() - t0)
        losses.append(float(np.mean(batch_losses)))
    timed = seconds[1:] or seconds
    return losses, len(images) * len(timed) / sum(timed)


def plot(path, curves, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("--plot needs matplotlib (pip install matplotlib)", file=out)
        return
    for name, losses in curves.items():
        plt.plot(range(1, len(losses) + 1), losses, marker="o", label=name)
    plt.xlabel("epoch")
    plt.ylabel("training loss")
    plt.legend()
    plt.savefig(path)
    print(f"plot: {path}", file=out)


def _torch_on_gpu():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def run(epochs=6, count=2048, batch=64, plot_path=None, out=None):
    out = out or sys.stdout
    rng = np.random.default_rng(0)
    images, labels = make_data(count, rng)
    weights = initial_weights(rng)
    device = jiasu.get_device()
    print(f"jiasu {jiasu.__version__} demo nn: a CNN on {count} synthetic {SIZE} x {SIZE} images of {CLASSES} "
          f"classes, batches of {batch}, {epochs} epochs, SGD lr {LEARNING_RATE}; on {device.name}", file=out)
    try:
        losses, speed = train(JiasuNet(weights), images, labels, epochs, batch, jiasu.synchronize)
    except jiasu.JiasuError as error:
        print(f"\nThe demo failed: {type(error).__name__}: {error}", file=out)
        return 1
    curves = {"jiasu": losses}
    torch = _torch_on_gpu() if jiasu.get_backend() != "cpu" else None
    if torch is not None:
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
        curves["torch"], torch_speed = train(TorchNet(torch, weights), images, labels, epochs, batch,
                                             torch.cuda.synchronize)
    print(f"{'epoch':>5}  " + "  ".join(f"{name:>8}" for name in curves), file=out)
    for e in range(epochs):
        print(f"{e + 1:>5}  " + "  ".join(f"{curve[e]:>8.4f}" for curve in curves.values()), file=out)
    print(f"images/s: jiasu {speed:,.0f}" + (f", torch {torch_speed:,.0f}" if torch is not None else ""), file=out)
    if plot_path:
        plot(plot_path, curves, out)
    ok = losses[-1] < 0.5 * losses[0]
    print(("OK" if ok else "FAILED") + f": the loss fell from {losses[0]:.4f} to {losses[-1]:.4f}", file=out)
    if torch is not None:
        same = np.allclose(losses, curves["torch"], rtol=2e-2, atol=1e-3)
        print(("OK" if same else "FAILED") + ": jiasu's loss curve " + ("matches" if same else "differs from") +
              " PyTorch's (within 2 %)", file=out)
        ok = ok and same
    return 0 if ok else 1


def main(plot_path=None, epochs=6):
    return run(epochs=epochs, plot_path=plot_path)
