"""Training and cross-validating the cascade's models: the registry behind
``sandcrawler models`` (``registry``), GROBID's layout corpora read into labelled
rows (``grobid_corpus``) and the text models by name (``text_models``)."""

from sandcrawler.core.moved import forward_attributes

# this package was a module: its names still resolve here, for one release
__getattr__ = forward_attributes("sandcrawler.docparse.training")
