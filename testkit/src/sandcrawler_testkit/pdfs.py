"""PDFs written from scratch for tests and benchmarks: any number of pages, blank
pages, no pages, an encrypted document, a very deep page tree.

Written by hand from the PDF 1.4 specification (objects, a cross-reference table
with exact offsets, a trailer), so tests do not depend on a PDF-writing library
and every byte is known. Encryption is the standard security handler, revision
2 (40-bit RC4), whose key derivation the specification gives as algorithms 3.2
to 3.4.
"""

from __future__ import annotations

import hashlib
import zlib

_PAD = bytes.fromhex(
    "28bf4e5e4e758a4164004e56fffa01082e2e00b6d0683e802f0ca9fe6453697a"
)
FILE_ID = hashlib.md5(b"sandcrawler test pdf").digest()


def _rc4(key: bytes, data: bytes) -> bytes:
    s = list(range(256))
    j = 0
    for i in range(256):
        j = (j + s[i] + key[i % len(key)]) % 256
        s[i], s[j] = s[j], s[i]
    out = bytearray()
    i = j = 0
    for byte in data:
        i = (i + 1) % 256
        j = (j + s[i]) % 256
        s[i], s[j] = s[j], s[i]
        out.append(byte ^ s[(s[i] + s[j]) % 256])
    return bytes(out)


def _encrypt_dict(user_password: bytes, owner_password: bytes) -> bytes:
    permissions = -4  # all permissions
    owner_key = hashlib.md5((owner_password + _PAD)[:32]).digest()[:5]
    o_entry = _rc4(owner_key, (user_password + _PAD)[:32])
    key = hashlib.md5(
        (user_password + _PAD)[:32] + o_entry
        + permissions.to_bytes(4, "little", signed=True) + FILE_ID
    ).digest()[:5]
    u_entry = _rc4(key, _PAD)
    return (b"<< /Filter /Standard /V 1 /R 2 /O <" + o_entry.hex().encode() + b"> /U <"
            + u_entry.hex().encode() + b"> /P " + str(permissions).encode() + b" >>")


def _escape(text: str) -> bytes:
    return (text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            .encode("latin-1", "replace"))


def make_pdf(
    pages: list[str | None],
    *,
    title: str | None = None,
    user_password: str | None = None,
    tree_depth: int = 0,
    page0_image: tuple[int, int] | None = None,
    media_box: tuple[int, int] = (612, 792),
) -> bytes:
    """A PDF with one page per entry of ``pages``: its text, or None for a blank page.

    ``tree_depth`` nests the page tree that many /Pages levels deep (each level a
    node with one kid), to try readers on a deep object graph. ``page0_image``
    (width, height) draws a black grey-scale image of that many pixels over page
    0, Flate-compressed: 20000 x 20000 is 400 MB decoded from ~400 kB, a
    decompression bomb for memory limits. ``media_box`` is every page's size in
    points (width, height): (612, 2**31 - 1) is a page no renderer can draw whole."""
    objects: list[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")  # filled in below
    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    root_pages = len(objects) + 1
    add(b"")  # the root /Pages, filled in below
    page_ids = []
    image = None
    if page0_image is not None:
        width, height = page0_image
        packer = zlib.compressobj(9)
        row = bytes(width)
        pixels = b"".join(packer.compress(row) for _ in range(height)) + packer.flush()
        image = add(b"<< /Type /XObject /Subtype /Image /Width %d /Height %d "
                    b"/ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode "
                    b"/Length %d >>\nstream\n" % (width, height, len(pixels))
                    + pixels + b"\nendstream")
    for number, text in enumerate(pages):
        draw = b"q 612 0 0 792 0 0 cm /Im0 Do Q\n" if image and number == 0 else b""
        if text is None:
            content = draw
        else:
            lines = [draw + b"BT /F1 11 Tf 72 720 Td 14 TL"]
            for line in text.split("\n"):
                lines.append(b"(" + _escape(line) + b") Tj T*")
            lines.append(b"ET")
            content = b"\n".join(lines)
        stream = add(b"<< /Length " + str(len(content)).encode() + b" >>\nstream\n" + content
                     + b"\nendstream")
        page_ids.append(add(b""))
        objects[page_ids[-1] - 1] = (
            b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %d %d] /Contents %d 0 R "
            b"/Resources << /Font << /F1 %d 0 R >>%s >> >>"
            % (0, *media_box, stream, font, b" /XObject << /Im0 %d 0 R >>" % image
               if image and number == 0 else b"")
        )
    parent = root_pages
    chain = [root_pages]
    for _ in range(tree_depth):
        chain.append(add(b""))
    for level, node in enumerate(chain):
        kids = [chain[level + 1]] if level + 1 < len(chain) else page_ids
        up = b"" if level == 0 else b" /Parent %d 0 R" % chain[level - 1]
        objects[node - 1] = (b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % k for k in kids)
                             + b"] /Count %d" % len(page_ids) + up + b" >>")
    parent = chain[-1]
    for pid in page_ids:
        objects[pid - 1] = objects[pid - 1].replace(b"/Parent 0 0 R", b"/Parent %d 0 R" % parent)
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % root_pages
    info = add(b"<< /Title (" + _escape(title) + b") >>") if title else None
    encrypt = (add(_encrypt_dict(user_password.encode("latin-1"), b"owner"))
               if user_password is not None else None)

    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    trailer = b"<< /Size %d /Root %d 0 R /ID [<%s> <%s>]" % (
        len(objects) + 1, catalog, FILE_ID.hex().encode(), FILE_ID.hex().encode())
    if info:
        trailer += b" /Info %d 0 R" % info
    if encrypt:
        trailer += b" /Encrypt %d 0 R" % encrypt
    out += b"trailer\n" + trailer + b" >>\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)
