"""Kafka: client settings and errors (``client``), topic names (``topics``) and the
admin calls that create and check them (``admin``)."""

from sandcrawler.core.moved import forward_attributes

# this package was the module now ``sandcrawler.kafka.client``: its names still resolve here
__getattr__ = forward_attributes("sandcrawler.kafka", "sandcrawler.kafka.client")
