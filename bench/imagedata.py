"""Synthetic image dataset for the gpufix benchmark: CPU-costly per item, like JPEG decoding.

Imports only numpy and the standard library, so the data path can be timed and tested on a
machine without torch or a GPU; `train.py` wraps `ImageSource` in a torch Dataset.

Each item is built from its index alone (deterministic), so any worker can produce any item:
  1. "decode": a low-resolution block image (8x8 blocks, as JPEG stores them) is drawn from a
     seeded generator, upsampled, and given per-pixel noise;
  2. augment: box blur through cumulative sums (`decode_passes` one-axis passes,
     alternating rows and columns), random crop, random
     horizontal flip;
  3. normalize to float32 with per-channel mean and std, CHW layout.
`decode_passes` sets the CPU cost per item; `calibrate` picks it for a target cost on the machine
at hand (the benchmark targets about 2 ms per item).

`slow_read_ms` adds a sleep per item that SIMULATES a slow data disk: no real I/O happens, so
rules that read /proc/diskstats will not see it; only its effect on the GPU is real.
"""

from __future__ import annotations

import time

import numpy as np

MEAN = (np.array([0.485, 0.456, 0.406], dtype=np.float32) * 255.0).reshape(3, 1, 1)
STD = (np.array([0.229, 0.224, 0.225], dtype=np.float32) * 255.0).reshape(3, 1, 1)
BLUR_WIDTH = 5


class ImageSource:
    """Indexable, deterministic source of (image float32 [3, size, size], label int) pairs."""

    def __init__(
        self,
        length: int = 10_000_000,
        image_size: int = 224,
        decode_passes: int = 2,
        slow_read_ms: float = 0.0,
        num_classes: int = 1000,
        seed: int = 0,
    ) -> None:
        if image_size < 8 or image_size % 8:
            raise ValueError(f"image_size must be a positive multiple of 8, got {image_size}")
        if decode_passes < 0:
            raise ValueError(f"decode_passes must be >= 0, got {decode_passes}")
        if slow_read_ms < 0:
            raise ValueError(f"slow_read_ms must be >= 0, got {slow_read_ms}")
        if length < 1:
            raise ValueError(f"length must be >= 1, got {length}")
        self.length = int(length)
        self.image_size = int(image_size)
        # the stored picture is larger than the crop, as with ImageNet's resize-then-crop
        self.source_size = self.image_size + 32
        self.decode_passes = int(decode_passes)
        self.slow_read_ms = float(slow_read_ms)
        self.num_classes = int(num_classes)
        self.seed = int(seed)

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> tuple[np.ndarray, int]:
        if not 0 <= index < self.length:
            raise IndexError(f"index {index} out of range for length {self.length}")
        if self.slow_read_ms > 0:
            # SIMULATED slow disk: the read waits without using CPU, as a blocked read would.
            time.sleep(self.slow_read_ms / 1000.0)
        rng = np.random.default_rng([self.seed, index])
        s = self.source_size
        blocks = rng.integers(0, 224, size=(3, s // 8, s // 8), dtype=np.uint8)
        img = np.repeat(np.repeat(blocks, 8, axis=1), 8, axis=2)
        img += rng.integers(0, 32, size=img.shape, dtype=np.uint8)
        pic = img.astype(np.float32)
        for i in range(self.decode_passes):
            # alternate rows and columns: two passes make one 2-D box blur
            pic = box_blur(pic, BLUR_WIDTH, 1 + i % 2)
        c = self.image_size
        top = int(rng.integers(0, s - c + 1))
        left = int(rng.integers(0, s - c + 1))
        pic = pic[:, top : top + c, left : left + c]
        if rng.random() < 0.5:
            pic = pic[:, :, ::-1]
        pic = (pic - MEAN) / STD
        label = int(rng.integers(0, self.num_classes))
        return np.ascontiguousarray(pic, dtype=np.float32), label


def box_blur(img: np.ndarray, k: int, axis: int) -> np.ndarray:
    """Box blur of odd width k along `axis` (1: rows, 2: columns) through cumulative sums."""
    if k < 1 or k % 2 == 0:
        raise ValueError(f"blur width must be odd and positive, got {k}")
    if axis not in (1, 2):
        raise ValueError(f"axis must be 1 or 2, got {axis}")
    pad = k // 2
    widths = [(0, 0), (0, 0), (0, 0)]
    widths[axis] = (pad + 1, pad)
    csum = np.cumsum(np.pad(img, widths, mode="edge"), axis=axis, dtype=np.float32)
    n = img.shape[axis]
    if axis == 1:
        diff = csum[:, k : k + n, :] - csum[:, :n, :]
    else:
        diff = csum[:, :, k : k + n] - csum[:, :, :n]
    diff *= np.float32(1.0 / k)
    return diff


def cpu_ms_per_item(source: ImageSource, items: int = 50, start: int = 0) -> float:
    """Mean process CPU milliseconds per item over `items` items (after one warm-up item).

    CPU time, not wall time, so a busy machine inflates it less; a worker on an idle core costs
    about this much wall time per item.
    """
    source[start]
    t0 = time.process_time()
    for i in range(start + 1, start + 1 + items):
        source[i]
    return (time.process_time() - t0) * 1000.0 / items


def choose_passes(base_ms: float, per_pass_ms: float, target_ms: float, max_passes: int = 40) -> int:
    """Blur passes that bring the per-item cost closest to `target_ms` (0 when base exceeds it)."""
    if per_pass_ms <= 0:
        return 0
    passes = round((target_ms - base_ms) / per_pass_ms)
    return int(min(max(passes, 0), max_passes))


def calibrate(target_ms: float, image_size: int = 224, items: int = 60) -> dict:
    """Measure the base and per-pass cost here and choose `decode_passes` for `target_ms`."""
    base = cpu_ms_per_item(ImageSource(image_size=image_size, decode_passes=0), items)
    four = cpu_ms_per_item(ImageSource(image_size=image_size, decode_passes=4), items)
    per_pass = max(four - base, 1e-6) / 4
    passes = choose_passes(base, per_pass, target_ms)
    return {
        "target_ms": target_ms,
        "base_ms": round(base, 3),
        "per_pass_ms": round(per_pass, 3),
        "decode_passes": passes,
        "expected_ms": round(base + passes * per_pass, 3),
    }


def main(argv: list[str] | None = None) -> int:
    import argparse
    import json

    p = argparse.ArgumentParser(description="time or calibrate the synthetic decode (one process)")
    p.add_argument("--items", type=int, default=100)
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--decode-passes", type=int, default=2)
    p.add_argument("--slow-read-ms", type=float, default=0.0)
    p.add_argument(
        "--calibrate", type=float, metavar="TARGET_MS", help="choose decode_passes for this CPU cost per item"
    )
    a = p.parse_args(argv)
    if a.calibrate is not None:
        print(json.dumps(calibrate(a.calibrate, a.image_size, a.items)))
        return 0
    src = ImageSource(image_size=a.image_size, decode_passes=a.decode_passes, slow_read_ms=a.slow_read_ms)
    t0 = time.perf_counter()
    cpu = cpu_ms_per_item(src, a.items)
    wall = (time.perf_counter() - t0) * 1000.0 / (a.items + 1)
    print(json.dumps({"cpu_ms_per_item": round(cpu, 3), "wall_ms_per_item": round(wall, 3)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
