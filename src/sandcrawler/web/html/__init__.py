"""HTML analysis: a landing page's links and walls (``landing``), its bibliographic
metadata (``biblio``, ``metadata``), publishers' link rules, and HTML work in a
child process with limits (``bounded``)."""

from sandcrawler.core.moved import forward_attributes

# this package was a module: its names still resolve here, for one release
__getattr__ = forward_attributes("sandcrawler.web.html")
