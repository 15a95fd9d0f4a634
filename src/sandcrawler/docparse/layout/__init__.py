"""A PDF's layout: pages, blocks, lines and tokens (``elements``) read by pdfalto
(``alto``) or PDFium (``pdfium``, with ``geometry`` building lines and blocks from
its words), cut into GROBID's tokens (``tokens``) and joined back into text
(``text``)."""

from sandcrawler.core.moved import forward_attributes

# this package was a module: its names still resolve here, for one release
__getattr__ = forward_attributes("sandcrawler.docparse.layout")
