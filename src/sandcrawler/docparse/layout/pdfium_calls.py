"""PDFium's C functions as the layout reader calls them, and the page's frame.

Each function is called through a ctypes prototype of our own rather than
pypdfium2's: plain integers for PDFium's handles (pypdfium2's typed pointers
cost a conversion on every call) and an integer back for an object, so that it
can be a dictionary key. The per-character calls are most of the reader's time
(docs/extraction.md, "PDFium").
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pypdfium2.raw as pdfium_c


def prototype(function: object, restype: object, *argtypes: object) -> Callable[..., Any]:
    """``function`` (one of pypdfium2.raw's) called through our own prototype."""
    address = ctypes.cast(function, ctypes.c_void_p).value  # type: ignore[arg-type]
    made: Any = ctypes.CFUNCTYPE(restype, *argtypes)  # type: ignore[arg-type]
    return made(address)  # type: ignore[no-any-return]


_V = ctypes.c_void_p
_I = ctypes.c_int
_F = ctypes.POINTER(ctypes.c_float)
_D = ctypes.POINTER(ctypes.c_double)
get_unicode = prototype(pdfium_c.FPDFText_GetUnicode, ctypes.c_uint, _V, _I)
get_text_object = prototype(pdfium_c.FPDFText_GetTextObject, _V, _V, _I)
get_loose_box = prototype(pdfium_c.FPDFText_GetLooseCharBox, _I, _V, _I, _V)
is_hyphen = prototype(pdfium_c.FPDFText_IsHyphen, _I, _V, _I)
is_generated = prototype(pdfium_c.FPDFText_IsGenerated, _I, _V, _I)
text_object_font = prototype(pdfium_c.FPDFTextObj_GetFont, _V, _V)
get_origin = prototype(pdfium_c.FPDFText_GetCharOrigin, _I, _V, _I, _D, _D)
get_font_size = prototype(pdfium_c.FPDFText_GetFontSize, ctypes.c_double, _V, _I)
get_font_info = prototype(pdfium_c.FPDFText_GetFontInfo, ctypes.c_ulong, _V, _I,
                            ctypes.c_char_p, ctypes.c_ulong, ctypes.POINTER(ctypes.c_int))
get_matrix = prototype(pdfium_c.FPDFText_GetMatrix, _I, _V, _I,
                         ctypes.POINTER(pdfium_c.FS_MATRIX))
get_text = prototype(pdfium_c.FPDFText_GetText, _I, _V, _I, _I, ctypes.c_char_p)
count_objects = prototype(pdfium_c.FPDFPage_CountObjects, _I, _V)
get_object = prototype(pdfium_c.FPDFPage_GetObject, _V, _V, _I)
form_count = prototype(pdfium_c.FPDFFormObj_CountObjects, _I, _V)
form_object = prototype(pdfium_c.FPDFFormObj_GetObject, _V, _V, ctypes.c_ulong)
object_type = prototype(pdfium_c.FPDFPageObj_GetType, _I, _V)
object_bounds = prototype(pdfium_c.FPDFPageObj_GetBounds, _I, _V, _F, _F, _F, _F)
object_matrix = prototype(pdfium_c.FPDFPageObj_GetMatrix, _I, _V,
                            ctypes.POINTER(pdfium_c.FS_MATRIX))
image_pixels = prototype(pdfium_c.FPDFImageObj_GetImagePixelSize, _I, _V,
                           ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_uint))


@dataclass(slots=True)
class Frame:
    """User space to the displayed page's top-left points: the crop box, and
    the page's /Rotate (clockwise)."""

    left: float
    bottom: float
    right: float
    top: float
    rotation: int

    @property
    def size(self) -> tuple[float, float]:
        w, h = self.right - self.left, self.top - self.bottom
        return (h, w) if self.rotation in (90, 270) else (w, h)

    def box(self, left: float, bottom: float, right: float, top: float
            ) -> tuple[float, float, float, float]:
        """(x0, y0, x1, y1) on the displayed page, y0 the top edge."""
        r = self.rotation
        if r == 0:
            return left - self.left, self.top - top, right - self.left, self.top - bottom
        if r == 90:
            return bottom - self.bottom, left - self.left, top - self.bottom, right - self.left
        if r == 180:
            return self.right - right, bottom - self.bottom, self.right - left, top - self.bottom
        return self.top - top, self.right - right, self.top - bottom, self.right - left

    def y(self, x: float, y: float) -> float:
        """A point's distance from the displayed page's top edge."""
        r = self.rotation
        if r == 0:
            return self.top - y
        if r == 90:
            return x - self.left
        if r == 180:
            return y - self.bottom
        return self.right - x
