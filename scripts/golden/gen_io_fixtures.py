#!/usr/bin/python3
"""Writes the interop fixtures of test/unit/frontend/io/ into its testdata/ folder: files
made by Python that kiln::io must read back (and, for .npy, write byte for byte).

    /usr/bin/python3 scripts/golden/gen_io_fixtures.py   # needs numpy and python3-torch

python.safetensors is written by hand from the format's description (an 8-byte
little-endian header length, a JSON header padded with spaces, then the tensors' bytes), as
the safetensors package is not installed here; torch supplies the bf16 bits. The header's
key order differs from the order of the data, and json.dumps puts spaces after ':' and ','.
torch_save.pt is torch.save's format (a zip archive), which io::load must reject: it is not
safetensors. The .npy files come from numpy.save / numpy.lib.format.write_array.
The values are repeated in SafetensorsTest.cpp and NpyTest.cpp.
"""

import json
import os
import struct

import numpy as np
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                   "test", "unit", "frontend", "io", "testdata")


def raw_bytes(t):
    """A torch tensor's bytes, C order, little-endian (bf16 through its int16 view)."""
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().astype("<i2").tobytes()
    return t.numpy().tobytes()


SAFETENSORS_DTYPES = {torch.float32: "F32", torch.float64: "F64", torch.float16: "F16",
                      torch.bfloat16: "BF16", torch.int32: "I32", torch.int64: "I64",
                      torch.bool: "BOOL"}


def write_safetensors(path):
    # Header order; all values are exact in their dtype.
    tensors = {
        "weight": torch.tensor([[1.5, -2.25, 3.0], [0.125, -0.0, 1024.0]], dtype=torch.float32),
        "bias": torch.tensor([1.0 / 3.0, -2.5, 1e10], dtype=torch.float64),
        "half": torch.tensor([[0.5, -1.0], [65504.0, 2.0 ** -24]], dtype=torch.float16),
        "brain": torch.tensor([1.5, -2.25, 2.0 ** 100, 2.0 ** -7], dtype=torch.bfloat16),
        "ids": torch.tensor([[1, -2], [2 ** 40, -(2 ** 62)]], dtype=torch.int64),
        "small_ids": torch.tensor([7, -8, 2 ** 31 - 1], dtype=torch.int32),
        "mask": torch.tensor([True, False, False, True]),
        "scalar": torch.tensor(42.0, dtype=torch.float32),
        "empty": torch.zeros((0, 3), dtype=torch.float32),
    }
    data_order = list(reversed(list(tensors)))  # the data lies in the opposite order
    header = {"__metadata__": {"format": "pt", "note": "written by gen_io_fixtures.py"}}
    offsets, data, offset = {}, b"", 0
    for name in data_order:
        b = raw_bytes(tensors[name])
        offsets[name] = [offset, offset + len(b)]
        data += b
        offset += len(b)
    for name, t in tensors.items():
        header[name] = {"dtype": SAFETENSORS_DTYPES[t.dtype], "shape": list(t.shape),
                        "data_offsets": offsets[name]}
    text = json.dumps(header).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def main():
    os.makedirs(OUT, exist_ok=True)
    write_safetensors(os.path.join(OUT, "python.safetensors"))
    torch.save({"w": torch.ones(2)}, os.path.join(OUT, "torch_save.pt"))

    arrays = {
        "f32_c.npy": np.arange(6, dtype="<f4").reshape(2, 3) * np.float32(0.5) - np.float32(1),
        "f64_fortran.npy": np.asfortranarray(np.arange(12, dtype="<f8").reshape(3, 4) / 4),
        "i64_scalar.npy": np.array(-(2 ** 40), dtype="<i8"),
        "bool.npy": np.array([True, False, True]),
        "f16.npy": np.array([0.5, -1.0, 65504.0, 2.0 ** -24], dtype="<f2"),
        "i32_big_endian.npy": np.array([[1, -2], [300000, -(2 ** 31)]], dtype=">i4"),
        "empty.npy": np.zeros((0, 3), dtype="<f4"),
    }
    for name, array in arrays.items():
        np.save(os.path.join(OUT, name), array)
    with open(os.path.join(OUT, "v2.npy"), "wb") as f:
        np.lib.format.write_array(f, np.array([[1.0, 2.0], [3.0, 4.0]], dtype="<f4"),
                                  version=(2, 0))
    print("wrote", os.path.normpath(OUT))


if __name__ == "__main__":
    main()
