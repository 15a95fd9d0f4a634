"""HTML analysis: a landing page's links and walls (``landing``), its bibliographic
metadata (``biblio``, ``metadata``), publishers' link rules, and HTML work in a
child process with limits (``bounded``)."""

from sandcrawler.core.moved import forward_attributes

# this package was the module now ``sandcrawler.web.html.metadata``: its names still resolve here
__getattr__ = forward_attributes("sandcrawler.web.html", "sandcrawler.web.html.metadata")
