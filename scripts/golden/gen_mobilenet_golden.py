#!/usr/bin/python3
"""Writes the mobilenet_v2 golden of test/unit/frontend/nn/MobileNetGoldenTest.cpp into
test/unit/frontend/golden/: PyTorch 1.13's forward and backward of torchvision's
mobilenet_v2(num_classes=10, width_mult=0.1) on a 2x3x32x32 batch, in float64.

    /usr/bin/python3 scripts/golden/gen_mobilenet_golden.py   # needs python3-torch

torchvision is not installed here, so MobileNetV2 below is a transcription of
torchvision 0.14's models/mobilenetv2.py and ops/misc.py (Conv2dNormActivation) with the
same module tree, hence the same state_dict names. Width 0.1 keeps the files small (99k
parameters; at 0.25 the float64 golden alone would be 4.3 MB, as the 1280-channel head
does not shrink) and still has every layer kind, residual or not, stride 1 and 2: block
outputs 8 (stem, stages 1-4), 16 (stages 5-6: 96 x 0.1 = 9.6 rounds to 8, below 90%, so
16), 32, head 1280.

Weights: torch.manual_seed(0) and torchvision's initialization, then every BatchNorm gets
a random affine (weight U(0.5, 1.5), bias N(0, 0.2)) and running statistics measured on
four random batches (momentum None: their average; then momentum 0.1 again), so no
BatchNorm is the identity and eval mode normalizes activations of a realistic scale. The
state dict is stored in float32 (num_batches_tracked, 4, in int64), as a user's checkpoint
would be, in
mobilenet_v2_w010_state.safetensors.

The golden, mobilenet_v2_w010_golden.safetensors (float64): the model and the input are
converted to float64 after loading the float32 values, then
  input, gout                   the batch and the gradient fed to logits.backward(gout)
                                (the loss (logits * gout).sum(), weighting every logit)
  <mode>.logits                 mode is eval or train
  <mode>.grad.input             d loss / d input
  <mode>.grad.<parameter>       d loss / d parameter, for every named parameter
  train.<buffer>                every buffer after the training-mode forward: the
                                running statistics updated with the batch's (momentum
                                0.1, unbiased variance), num_batches_tracked 5
In train mode BatchNorm uses batch statistics and the Dropout before the classifier is
put in eval mode (the identity), so the result is deterministic. The safetensors files are
written by hand (the package is not installed), as gen_io_fixtures.py does.
"""

import json
import os
import struct
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_io_fixtures import SAFETENSORS_DTYPES, raw_bytes  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                   "test", "unit", "frontend", "golden")
STATE_FILE = "mobilenet_v2_w010_state.safetensors"
GOLDEN_FILE = "mobilenet_v2_w010_golden.safetensors"
NUM_CLASSES, WIDTH_MULT = 10, 0.1


# ---- torchvision 0.14's MobileNetV2, transcribed --------------------------------------

def _make_divisible(v, divisor, min_value=None):
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


class Conv2dNormActivation(nn.Sequential):
    # torchvision.ops.Conv2dNormActivation as MobileNetV2 uses it: BatchNorm2d, ReLU6.
    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, groups=1):
        padding = (kernel_size - 1) // 2
        super().__init__(
            nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding,
                      groups=groups, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU6(inplace=True))
        self.out_channels = out_channels


class InvertedResidual(nn.Module):
    def __init__(self, inp, oup, stride, expand_ratio):
        super().__init__()
        if stride not in [1, 2]:
            raise ValueError(f"stride should be 1 or 2 instead of {stride}")
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(Conv2dNormActivation(inp, hidden_dim, kernel_size=1))  # pw
        layers.extend([
            Conv2dNormActivation(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim),  # dw
            nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),  # pw-linear
            nn.BatchNorm2d(oup),
        ])
        self.conv = nn.Sequential(*layers)
        self.out_channels = oup

    def forward(self, x):
        if self.use_res_connect:
            return x + self.conv(x)
        return self.conv(x)


class MobileNetV2(nn.Module):
    def __init__(self, num_classes=1000, width_mult=1.0, round_nearest=8, dropout=0.2):
        super().__init__()
        input_channel = 32
        last_channel = 1280
        inverted_residual_setting = [
            # t, c, n, s
            [1, 16, 1, 1],
            [6, 24, 2, 2],
            [6, 32, 3, 2],
            [6, 64, 4, 2],
            [6, 96, 3, 1],
            [6, 160, 3, 2],
            [6, 320, 1, 1],
        ]
        input_channel = _make_divisible(input_channel * width_mult, round_nearest)
        self.last_channel = _make_divisible(last_channel * max(1.0, width_mult), round_nearest)
        features = [Conv2dNormActivation(3, input_channel, stride=2)]
        for t, c, n, s in inverted_residual_setting:
            output_channel = _make_divisible(c * width_mult, round_nearest)
            for i in range(n):
                stride = s if i == 0 else 1
                features.append(InvertedResidual(input_channel, output_channel, stride,
                                                 expand_ratio=t))
                input_channel = output_channel
        features.append(Conv2dNormActivation(input_channel, self.last_channel, kernel_size=1))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout),
            nn.Linear(self.last_channel, num_classes),
        )
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.features(x)
        x = nn.functional.adaptive_avg_pool2d(x, (1, 1))
        x = torch.flatten(x, 1)
        return self.classifier(x)


# ---- weights, inputs, goldens ----------------------------------------------------------

def write_safetensors(path, tensors):
    """tensors: name -> torch tensor, written in order."""
    header, data, offset = {}, b"", 0
    for name, t in tensors.items():
        b = raw_bytes(t.detach())
        header[name] = {"dtype": SAFETENSORS_DTYPES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(b)]}
        data += b
        offset += len(b)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def make_model():
    torch.manual_seed(0)
    model = MobileNetV2(NUM_CLASSES, WIDTH_MULT)
    norms = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    with torch.no_grad():
        for bn in norms:
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.normal_(0.0, 0.2)
            bn.momentum = None  # running statistics: the average over the batches below
        model.train()
        for _ in range(4):
            model(torch.randn(16, 3, 32, 32))
    for bn in norms:
        bn.momentum = 0.1
    return model


def run(model, x, gout, mode):
    """Forward and backward in `mode`; the golden tensors named <mode>.*."""
    model.zero_grad(set_to_none=True)
    model.train(mode == "train")
    model.classifier[0].eval()  # Dropout: the identity in both modes
    x = x.clone().requires_grad_(True)
    logits = model(x)
    logits.backward(gout)
    out = {f"{mode}.logits": logits, f"{mode}.grad.input": x.grad}
    for name, p in model.named_parameters():
        out[f"{mode}.grad.{name}"] = p.grad
    if mode == "train":
        for name, b in model.named_buffers():
            out[f"train.{name}"] = b.clone()
    return out


def main():
    model = make_model()
    state = {k: v.clone() for k, v in model.state_dict().items()}
    torch.manual_seed(1)
    x = torch.randn(2, 3, 32, 32)
    gout = torch.randn(2, NUM_CLASSES)

    model.double()
    golden = {"input": x.double(), "gout": gout.double()}
    for mode in ("eval", "train"):
        # Each mode starts from the stored state (the train run updates the buffers).
        model.load_state_dict(state)
        golden.update(run(model, golden["input"], golden["gout"], mode))

    os.makedirs(OUT, exist_ok=True)
    write_safetensors(os.path.join(OUT, STATE_FILE), state)
    write_safetensors(os.path.join(OUT, GOLDEN_FILE), golden)
    params = sum(p.numel() for p in model.parameters())
    print(f"{params} parameters; wrote {STATE_FILE}, {GOLDEN_FILE} to {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
