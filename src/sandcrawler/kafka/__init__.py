"""Kafka: client settings and errors (``client``), topic names (``topics``) and the
admin calls that create and check them (``admin``)."""

from sandcrawler.core.moved import forward_attributes

# this package was a module: its names still resolve here, for one release
__getattr__ = forward_attributes("sandcrawler.kafka")
