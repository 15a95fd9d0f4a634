"""CRFsuite's tagger driven through its C interface: packed attribute ids, not strings.

python-crfsuite's ``Tagger.tag`` turns every attribute string of every item into a
C++ string and looks it up in the model's hash table, on every call. A caller that
tags many sequences over a small vocabulary of attributes packs each one once (its
id and value, as CRFsuite's ``crfsuite_attribute_t``) and hands whole items over as
bytes; CRFsuite then only sums the weights and runs Viterbi. Same model bytes, same
sums in the same order, same Viterbi: the same labels. The extension module exports
CRFsuite's C API; where it does not (another build, another platform) ``open``
returns None and callers keep python-crfsuite (docs/citations.md, "Speed").
"""

from __future__ import annotations

import ctypes
import struct
import sys
import threading
import weakref
from array import array
from collections.abc import Iterable, Sequence
from itertools import accumulate
from typing import Any

#: one attribute as CRFsuite's ``crfsuite_attribute_t``: int id, double value
ATTRIBUTE = struct.Struct("@id")
#: one item as ``crfsuite_item_t``: number of attributes, capacity, pointer to them;
#: written as two 64-bit words (both counts in one, the pointer in the other)
_ITEM = struct.Struct("@iiP")
_BOTH_COUNTS = 0x100000001
#: packed attributes remembered, known or not, before the memo starts again
_PACKED_MAX = 1 << 20

_P = ctypes.c_void_p
_GET = ctypes.PYFUNCTYPE(ctypes.c_int, _P, ctypes.POINTER(_P))  # model.get_tagger, ...
_RELEASE = ctypes.PYFUNCTYPE(ctypes.c_int, _P)
_TO_ID = ctypes.PYFUNCTYPE(ctypes.c_int, _P, ctypes.c_char_p)
_TO_STRING = ctypes.PYFUNCTYPE(ctypes.c_int, _P, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p))
_NUM = ctypes.PYFUNCTYPE(ctypes.c_int, _P)
_SET = ctypes.PYFUNCTYPE(ctypes.c_int, _P, _P)
_VITERBI = ctypes.PYFUNCTYPE(ctypes.c_int, _P, _P, _P)


class _Interface(ctypes.Structure):
    """The head of CRFsuite's model, tagger and dictionary objects: internal data,
    a reference count, then function pointers (``crfsuite.h``)."""

    _fields_ = [("internal", _P), ("nref", ctypes.c_int), ("f0", _P), ("f1", _P), ("f2", _P),
                ("f3", _P), ("f4", _P), ("f5", _P), ("f6", _P)]


class _Instance(ctypes.Structure):
    """``crfsuite_instance_t``: the tagger reads ``num_items`` and ``items``."""

    _fields_ = [("num_items", ctypes.c_int), ("cap_items", ctypes.c_int), ("items", _P),
                ("labels", _P), ("weight", ctypes.c_double), ("group", ctypes.c_int)]


def _library() -> Any:
    """The extension module as a C library, or None when it exports no CRFsuite API."""
    try:
        from pycrfsuite import _pycrfsuite

        lib = ctypes.PyDLL(_pycrfsuite.__file__)  # holds the GIL in its calls
        create = lib.crfsuite_create_instance_from_memory
    except (ImportError, OSError, AttributeError):
        return None
    create.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(_P)]
    create.restype = ctypes.c_int
    return lib


def _interface(pointer: _P) -> _Interface:
    return ctypes.cast(pointer, ctypes.POINTER(_Interface)).contents


def _release(tagger: _P, release_tagger: Any, model: _P, release_model: Any) -> None:
    release_tagger(tagger)
    release_model(model)


class DirectTagger:
    """A CRFsuite model opened from ``crf_bytes`` (which it keeps alive) and tagged
    through its C interface. Items are bytes: packed attributes (:meth:`pack`)
    concatenated. Not for concurrent use from several threads at once (a lock
    keeps one sequence's set and Viterbi together, as python-crfsuite's own
    ``tag`` does)."""

    def __init__(self, lib: Any, crf_bytes: bytes) -> None:
        self.crf_bytes = crf_bytes
        model = _P()
        if lib.crfsuite_create_instance_from_memory(crf_bytes, len(crf_bytes),
                                                    ctypes.byref(model)) or not model:
            raise OSError("CRFsuite could not open the model")
        m = _interface(model)
        # model: addref, release, get_tagger, get_labels, get_attrs
        tagger, labels, attrs = _P(), _P(), _P()
        if _GET(m.f2)(model, ctypes.byref(tagger)) or not tagger:
            _RELEASE(m.f1)(model)
            raise OSError("CRFsuite could not make a tagger")
        _GET(m.f3)(model, ctypes.byref(labels))
        _GET(m.f4)(model, ctypes.byref(attrs))
        t, lab, att = _interface(tagger), _interface(labels), _interface(attrs)
        weakref.finalize(self, _release, tagger, _RELEASE(t.f1), model, _RELEASE(m.f1))
        # tagger: addref, release, set, length, viterbi
        self._tagger = tagger
        self._set = _SET(t.f2)
        self._viterbi = _VITERBI(t.f4)
        # dictionary: addref, release, get, to_id, to_string, num
        self._attrs = attrs
        self._to_id = _TO_ID(att.f3)
        to_string = _TO_STRING(lab.f4)
        names = []
        for i in range(_NUM(lab.f5)(labels)):
            name = ctypes.c_char_p()
            to_string(labels, i, ctypes.byref(name))
            names.append((name.value or b"").decode())
        self.labels: tuple[str, ...] = tuple(names)
        self._packed: dict[str, bytes] = {}
        self._lock = threading.Lock()
        # what each call fills in place, at addresses known beforehand: the
        # attributes, the items, the instance, the labels out and the score
        self._instance = _Instance()
        self._instance_ref = ctypes.byref(self._instance)
        self._score = ctypes.c_double()
        self._score_ref = ctypes.byref(self._score)
        self._grow(256, 1 << 16)

    @classmethod
    def open(cls, crf_bytes: bytes) -> DirectTagger | None:
        """The model as a direct tagger; None when this python-crfsuite does not
        export CRFsuite's C interface, or its structures are not the expected size."""
        if (ATTRIBUTE.size != 16 or _ITEM.size != 16 or sys.byteorder != "little"
                or ctypes.sizeof(_Instance) != 40 or ctypes.sizeof(_P) != 8
                or array("q").itemsize != 8):
            return None
        lib = _library()
        if lib is None:
            return None
        try:
            return cls(lib, crf_bytes)
        except OSError:
            return None

    def pack(self, attributes: Iterable[str]) -> bytes:
        """The attributes the model knows, packed in order (value 1.0); those it does
        not know are left out, as python-crfsuite leaves them out."""
        packed, one = self._packed, self.pack_one
        return b"".join([packed.get(attr) or one(attr) for attr in attributes])

    def pack_one(self, attr: str) -> bytes:
        """``pack([attr])``."""
        packed = self._packed
        found = packed.get(attr)
        if found is None:
            if len(packed) >= _PACKED_MAX:
                packed.clear()
            aid = self._to_id(self._attrs, attr.encode())
            found = packed[attr] = ATTRIBUTE.pack(aid, 1.0) if aid >= 0 else b""
        return found

    def _grow(self, items: int, size: int) -> None:
        """Room for ``items`` items of ``size`` bytes of attributes in all."""
        self._items_room, self._bytes_room = items, size
        self._attributes = bytearray(size)  # never resized: CRFsuite reads it in place
        self._attributes_view = memoryview(self._attributes)
        self._anchor = (ctypes.c_char * size).from_buffer(self._attributes)
        self._base = ctypes.addressof(self._anchor)
        self._table = array("q", bytes(_ITEM.size * items))  # the items, crfsuite_item_t
        self._instance.items = self._table.buffer_info()[0]
        self._out = array("i", bytes(4 * items))
        self._out_address = self._out.buffer_info()[0]

    def tag(self, items: Sequence[bytes]) -> list[str]:
        """One label per item; an item is packed attributes concatenated."""
        n = len(items)
        if not n:
            return []
        data = b"".join(items)
        sizes = list(map(len, items))
        with self._lock:
            if n > self._items_room or len(data) > self._bytes_room:
                self._grow(max(n, 2 * self._items_room), max(len(data), 2 * self._bytes_room))
            self._attributes_view[:len(data)] = data
            words: list[int] = [0] * (2 * n)
            words[0::2] = [(size >> 4) * _BOTH_COUNTS for size in sizes]
            words[1::2] = accumulate(sizes[:-1], initial=self._base)
            self._table[:2 * n] = array("q", words)
            self._instance.num_items = self._instance.cap_items = n
            self._set(self._tagger, self._instance_ref)
            self._viterbi(self._tagger, self._out_address, self._score_ref)
            ids = self._out[:n]
        labels = self.labels
        return [labels[k] for k in ids]
