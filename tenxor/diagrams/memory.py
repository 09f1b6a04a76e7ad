"""The bytes diagram: the same values stored as different float dtypes, byte by byte.

Each dtype gets a row of bytes in storage order (little-endian, as on x86 and ARM), grouped
into elements, and below it the bits of one element split into sign, exponent and fraction.
The bytes come from NumPy (and ml_dtypes for bfloat16), not from the course's exercises.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from .layouts import palette
from .parts import CAPTION_SIZE, SMALL_SIZE, Block, block_of, caption, stack
from .render import Picture, render
from .shapes import FAINT, INK, Diagram, box, concat, label

FLOAT_BITS = {  # dtype: (exponent bits, fraction bits); one sign bit in front
    "float64": (11, 52),
    "float32": (8, 23),
    "bfloat16": (8, 7),
}
BIT_FILLS = {"sign": "#f4a6a6", "exponent": "#a6c8f4", "fraction": "#c8f0a6"}
BYTE = 1.0
BIT = 0.42
EXACT_DIGITS = 8  # a stored value is written exactly when it takes no more digits


def stored(values: Sequence[float], dtype: str) -> tuple[bytes, list[float]]:
    """The little-endian bytes of `values` stored as `dtype`, and the values it keeps."""
    import numpy as np

    if dtype == "bfloat16":
        from ml_dtypes import bfloat16

        # through float32 first, as tenxor's Storage rounds a bfloat16 (no double rounding)
        array = np.array(values, dtype=np.float32).astype(bfloat16)
        raw = array.view("<u2").tobytes()
    else:
        array = np.array(values, dtype=np.dtype(dtype).newbyteorder("<"))
        raw = array.tobytes()
    return raw, [float(v) for v in array.astype(np.float64)]


def stored_text(value: float, dtype: str) -> str:
    """The value an element's bytes hold, written for its label: exactly when that takes at
    most EXACT_DIGITS significant digits (bfloat16 keeps 3.140625 of 3.14159), else the
    shortest decimal that is stored as the same bytes (3.14159 for float32)."""
    exact = Decimal(value)
    if not exact.is_finite():
        return str(value)
    if len(exact.normalize().as_tuple().digits) <= EXACT_DIGITS:
        return format(exact.normalize(), "f")
    raw = stored([value], dtype)[0]
    for digits in range(1, 18):
        text = f"{value:.{digits}g}"
        if stored([float(text)], dtype)[0] == raw:
            return text
    return repr(value)


def bit_parts(dtype: str) -> list[str]:
    """What each bit of an element is, most significant first: sign, exponent or fraction."""
    exponent, fraction = FLOAT_BITS[dtype]
    return ["sign"] + ["exponent"] * exponent + ["fraction"] * fraction


def byte_row(dtype: str, raw: bytes, kept: Sequence[float], chosen: int) -> Block:
    """A dtype's storage as bytes: hex in each box, byte offsets above, elements below."""
    itemsize = len(raw) // len(kept)
    colours = palette(len(kept))
    parts: list[Diagram] = []
    centres = {}
    for offset, byte in enumerate(raw):
        element = offset // itemsize
        x = offset * (BYTE + 0.08) + element * 0.3
        centres[offset] = (x, 0.0)
        outline = box(BYTE, BYTE, colours[element], line=INK)
        words = label(f"{byte:02x}", 0.3) + label(str(offset), SMALL_SIZE, FAINT).translate(
            0, -0.75
        )
        parts.append((outline + words).named(f"byte/{dtype}/{offset}").translate(x, 0))
    for element, value in enumerate(kept):
        first, last = centres[element * itemsize][0], centres[(element + 1) * itemsize - 1][0]
        mark = "▲ " if element == chosen else ""
        words = f"{mark}[{element}] {stored_text(value, dtype)}"
        parts.append(label(words, CAPTION_SIZE, INK).translate((first + last) / 2, 0.85))
    return block_of(concat(parts), centres, extra=0.9)


def bit_strip(dtype: str, raw: bytes, itemsize: int, chosen: int) -> Block:
    """The bits of element `chosen`, most significant first, coloured by their part."""
    element = raw[chosen * itemsize : (chosen + 1) * itemsize]
    bits = format(int.from_bytes(element, "little"), f"0{8 * itemsize}b")
    parts, centres = [], {}
    for k, (bit, part) in enumerate(zip(bits, bit_parts(dtype))):
        x = k * BIT + (0.12 if part != "sign" else 0) + (0.12 if part == "fraction" else 0)
        centres[k] = (x, 0.0)
        cell = box(BIT, 0.6, BIT_FILLS[part], line=INK) + label(bit, 0.24)
        parts.append(cell.named(f"bit/{dtype}/{k}").translate(x, 0))
    block = block_of(concat(parts), centres, extra=-0.2)
    return Block(block.diagram, block.centres, block.left, block.top + 0.2, block.right,
                 block.bottom - 0.2)  # fmt: skip


def bytes_diagram(
    values: Sequence[float] = (1.0, 3.14159, -2.5),
    dtypes: Sequence[str] = ("float32", "bfloat16"),
    chosen: int = 1,
) -> Picture:
    """`values` stored as each of `dtypes`: bytes in storage, and element `chosen` bit by bit."""
    unknown = [dtype for dtype in dtypes if dtype not in FLOAT_BITS]
    if unknown:
        raise ValueError(f"bytes_diagram draws {sorted(FLOAT_BITS)}, not {unknown}")
    if not 0 <= chosen < len(values):
        raise ValueError(f"chosen element {chosen} is not among the {len(values)} values")
    blocks = []
    for dtype in dtypes:
        raw, kept = stored(values, dtype)
        itemsize = len(raw) // len(values)
        exponent, fraction = FLOAT_BITS[dtype]
        blocks += [
            caption(f"{dtype}: {itemsize} bytes per element, {len(raw)} bytes in storage"),
            byte_row(dtype, raw, kept, chosen),
            caption(f"element {chosen}, most significant bit first: "
                    f"sign, {exponent} exponent bits, {fraction} fraction bits", FAINT),
            bit_strip(dtype, raw, itemsize, chosen),
        ]  # fmt: skip
    gaps = [1.2 if k and k % 4 == 0 else 0.5 for k in range(1, len(blocks))]
    placed = stack(blocks, gaps)
    description = (
        f"{float(values[chosen])!r} stored as {' and as '.join(dtypes)}: "
        "bytes in storage and the bits of one element"
    )
    return render(concat([block.diagram for block in placed]), description)
