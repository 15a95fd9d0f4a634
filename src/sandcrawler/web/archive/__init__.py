"""Our web archive: WARC records written (``warc_writer``) and read (``warc``), CDX
and CDXJ lines, captures into the blob store (``captures``) and the CDX server."""

from sandcrawler.core.moved import forward_attributes

# this package was a module: its names still resolve here, for one release
__getattr__ = forward_attributes("sandcrawler.web.archive")
