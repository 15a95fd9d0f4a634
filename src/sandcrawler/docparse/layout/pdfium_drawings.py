"""A PDFium page's images and drawings, as pdfalto reports them: each image of
more than 8 pixels each way with its box (placed through the matrices of the
form XObjects that hold it), the paths counted and their boxes made one per
page (docs/extraction.md, "PDFium")."""

from __future__ import annotations

import ctypes
import math

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from sandcrawler.docparse.layout.elements import Graphic, Page
from sandcrawler.docparse.layout.pdfium_calls import (
    Frame,
    count_objects,
    form_count,
    form_object,
    get_object,
    image_pixels,
    object_bounds,
    object_matrix,
    object_type,
)

#: page objects visited per page (a map drawn with a million paths is counted
#: up to here: GROBID's features ask only whether there are drawings near a block)
MAX_PAGE_OBJECTS = 50_000
MAX_FORM_DEPTH = 8

_Matrix = tuple[float, float, float, float, float, float]


def read_drawings(page: pdfium.PdfPage, frame: Frame, out: Page) -> None:
    """The page's images (each with its box) and paths (counted, and their
    boxes as one, as pdfalto gives them), inside form XObjects too. As pdfalto
    does, an image of 8 pixels or fewer across or down (a rule drawn as a
    stretched pixel) is not one. Paths inside a form count with the form's box
    (a plot is thousands of paths: one box is all the union needs)."""
    drawings = _Drawings(frame, out)
    raw = ctypes.cast(page.raw, ctypes.c_void_p).value or 0
    drawings.visit(raw, count_objects(raw), None, None, 0)
    # one box for all the page's drawings (within the page), and a box of no
    # size at the page's corner when it has none: what pdfalto gives, which the
    # segmentation's features were learnt from (docparse/vectors.py)
    union = drawings.union
    x0 = y0 = x1 = y1 = 0.0
    if union[0] <= union[2]:
        width, height = frame.size
        x0, y0, x1, y1 = frame.box(*union)
        x0, y0, x1, y1 = max(0.0, x0), max(0.0, y0), min(width, x1), min(height, y1)
        if x0 > x1 or y0 > y1:
            x0 = y0 = x1 = y1 = 0.0
    out.graphic_boxes.append(Graphic(x0, y0, x1 - x0, y1 - y0, vector=True))


_Box = tuple[float, float, float, float]


class _Drawings:
    """One page's walk over its objects (``_drawings``)."""

    def __init__(self, frame: Frame, out: Page) -> None:
        self.frame = frame
        self.out = out
        #: the paths' union in user space: left, bottom, right, top
        self.union = [math.inf, math.inf, -math.inf, -math.inf]
        self.budget = MAX_PAGE_OBJECTS
        self.corners = [ctypes.c_float() for _ in range(4)]
        self.refs = [ctypes.byref(c) for c in self.corners]
        self.pixels = (ctypes.c_uint(), ctypes.c_uint())
        self.matrix = pdfium_c.FS_MATRIX()

    def bounds(self, obj: int) -> _Box | None:
        if not object_bounds(obj, *self.refs):
            return None
        left, bottom, right, top = (c.value for c in self.corners)
        return left, bottom, right, top

    def grow(self, box: _Box) -> None:
        u = self.union
        u[0], u[1], u[2], u[3] = min(u[0], box[0]), min(u[1], box[1]), max(u[2], box[2]), \
            max(u[3], box[3])

    def visit(self, handle: int, count: int, placing: _Matrix | None, outer: _Box | None,
              depth: int) -> None:
        """The objects of the page (``placing`` None) or of a form, whose space
        ``placing`` maps onto the page's, and ``outer`` the box on the page of
        the outermost form holding it."""
        count = min(max(0, count), self.budget)
        self.budget -= count
        get = get_object if placing is None else form_object
        objects = [get(handle, i) for i in range(count)]
        kinds = [object_type(obj) if obj else 0 for obj in objects]
        paths = kinds.count(pdfium_c.FPDF_PAGEOBJ_PATH)
        self.out.graphics += paths
        if paths and outer is not None:
            self.grow(outer)
        for obj, kind in zip(objects, kinds, strict=True):
            if kind == pdfium_c.FPDF_PAGEOBJ_PATH and outer is None:
                box = self.bounds(obj)
                if box is not None:
                    self.grow(box)
            elif kind == pdfium_c.FPDF_PAGEOBJ_IMAGE:
                self.image(obj, placing)
            elif kind == pdfium_c.FPDF_PAGEOBJ_FORM and depth < MAX_FORM_DEPTH \
                    and self.budget > 0 and object_matrix(obj, ctypes.byref(self.matrix)):
                m = self.matrix
                own = (m.a, m.b, m.c, m.d, m.e, m.f)
                self.visit(obj, form_count(obj), own if placing is None
                           else _multiply(own, placing), outer or self.bounds(obj), depth + 1)

    def image(self, obj: int, placing: _Matrix | None) -> None:
        width, height = self.pixels
        if not image_pixels(obj, ctypes.byref(width), ctypes.byref(height)) \
                or min(width.value, height.value) <= 8:
            return
        box = self.bounds(obj)
        if box is None:
            return
        if placing is not None:
            # an object in a form has its box in the form's space
            xs, ys = zip(*(_apply(placing, x, y) for x in (box[0], box[2])
                           for y in (box[1], box[3])), strict=True)
            box = (min(xs), min(ys), max(xs), max(ys))
        self.out.bitmaps += 1
        x0, y0, x1, y1 = self.frame.box(*box)
        self.out.graphic_boxes.append(Graphic(x0, y0, x1 - x0, y1 - y0, vector=False))


def _apply(m: _Matrix, x: float, y: float) -> tuple[float, float]:
    a, b, c, d, e, f = m
    return a * x + c * y + e, b * x + d * y + f


def _multiply(m: _Matrix, n: _Matrix) -> _Matrix:
    """``m`` then ``n`` (PDF's row-vector convention: a point times m times n)."""
    a, b, c, d, e, f = m
    a2, b2, c2, d2, e2, f2 = n
    return (a * a2 + b * c2, a * b2 + b * d2, c * a2 + d * c2, c * b2 + d * d2,
            e * a2 + f * c2 + e2, e * b2 + f * d2 + f2)
